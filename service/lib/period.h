/*
 * period.h -- calendar periods of periodic boards: hourly, daily, weekly (ISO 8601, Monday),
 * monthly, at a fixed UTC offset.
 *
 * Times are milliseconds since the Unix epoch (UTC). A board's offset (minutes east of UTC,
 * -840..840) shifts the boundaries: with +120 a daily period starts at 22:00 UTC. Period ids:
 *   hourly  2026-11-30T14      daily   2026-11-30
 *   weekly  2026-W49 (ISO week-numbering year and week)      monthly 2026-11
 * (2026-11-30 is the Monday of 2026-W49.) Ids before 1970 are not parsed back.
 * Pure functions, thread-safe. Dates use the proleptic Gregorian calendar (days_from_civil and
 * civil_from_days from H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
 */
#ifndef RANKD_PERIOD_H
#define RANKD_PERIOD_H

#include <stddef.h>
#include <stdint.h>

#include "tzif.h"

enum period_kind { PERIOD_NONE = 0, PERIOD_HOURLY, PERIOD_DAILY, PERIOD_WEEKLY, PERIOD_MONTHLY };

#define PERIOD_ID_MAX 16      /**< bytes of an id, with the NUL */
#define PERIOD_TZ_MIN_MAX 840 /**< |offset| in minutes (UTC-14:00 .. UTC+14:00) */
#define PERIOD_RETAIN_MAX 400 /**< past periods a board may keep readable */

/** The kind named `name` ("none", "hourly", ...): 0 and *out, or -EINVAL. */
int period_kind_parse(const char *name, enum period_kind *out);

/** The name of a kind ("none", "hourly", ...). */
const char *period_kind_name(enum period_kind k);

/** A board's time zone: a fixed offset, or an IANA zone by name. */
struct period_tz {
    int min;                      /**< the fixed offset, minutes east of UTC; 0 with a name */
    char name[TZIF_NAME_MAX];     /**< an IANA zone ("Europe/Paris"), "" for a fixed offset */
    const struct tzif_zone *zone; /**< the named zone once bound (period_tz_bind), else NULL;
                                   *   borrowed from the cache that loaded it */
};

#define PERIOD_TZ_TEXT_MAX TZIF_NAME_MAX /**< bytes of a time zone's text (either form) */

/**
 * Parse a time zone as clients write it: "UTC", "Z", "+HH:MM" or "-HH:MM" (a fixed offset), or a
 * name tzif_name_valid accepts (an IANA zone; whether it exists is period_tz_bind's question).
 * 0 and *out (unbound), or -EINVAL.
 */
int period_tz_parse(const char *text, struct period_tz *out);

/** A time zone as clients read it: the name, "UTC" or "+HH:MM" (len >= PERIOD_TZ_TEXT_MAX). */
void period_tz_format(const struct period_tz *tz, char *out, size_t len);

/** A time zone as the settings hash stores it (and the scripts compare it): the name, or the
 *  offset's minutes in decimal ("120", "0"); len >= PERIOD_TZ_TEXT_MAX. */
void period_tz_text(const struct period_tz *tz, char *out, size_t len);

/** Parse period_tz_text's form: 0 and *out (unbound), or -EINVAL. */
int period_tz_field(const char *text, struct period_tz *out);

/** 1 when a and b are the same setting (binding aside). */
int period_tz_same(const struct period_tz *a, const struct period_tz *b);

/**
 * Bind a named tz to its zone from `zones` (loaded on first use): 0, or tzif_cache_get's errors
 * (-EINVAL, -ENOENT no such zone, -EBADMSG, ...; tz->zone stays NULL). A fixed offset: 0.
 */
int period_tz_bind(struct period_tz *tz, struct tzif_cache *zones);

/*
 * The functions below take a fixed offset or a bound zone; a named tz not bound, and a NULL tz,
 * count as UTC (callers bind first: board_view.c's where_resolve).
 */

/**
 * Start (ms) of the period `delta` periods after the one holding t_ms (delta may be negative).
 * PERIOD_NONE returns INT64_MIN.
 */
int64_t period_start(enum period_kind k, const struct period_tz *tz, int64_t t_ms, int delta);

/** The id of the period holding t_ms into out[PERIOD_ID_MAX]. PERIOD_NONE gives "". */
void period_id(enum period_kind k, const struct period_tz *tz, int64_t t_ms,
               char out[PERIOD_ID_MAX]);

/**
 * Parse an id of kind k into the start (ms) of that period. Returns 0, or -EINVAL when the text
 * is not an id of that kind or names no real period (2026-02-30, 2026-W54, an hour the zone's
 * clock skips).
 */
int period_id_start(enum period_kind k, const struct period_tz *tz, const char *id,
                    int64_t *start_ms);

#endif
