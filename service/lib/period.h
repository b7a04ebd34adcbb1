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

enum period_kind { PERIOD_NONE = 0, PERIOD_HOURLY, PERIOD_DAILY, PERIOD_WEEKLY, PERIOD_MONTHLY };

#define PERIOD_ID_MAX 16      /**< bytes of an id, with the NUL */
#define PERIOD_TZ_MIN_MAX 840 /**< |offset| in minutes (UTC-14:00 .. UTC+14:00) */
#define PERIOD_RETAIN_MAX 400 /**< past periods a board may keep readable */

/** The kind named `name` ("none", "hourly", ...): 0 and *out, or -EINVAL. */
int period_kind_parse(const char *name, enum period_kind *out);

/** The name of a kind ("none", "hourly", ...). */
const char *period_kind_name(enum period_kind k);

/** Parse "UTC", "Z", "+HH:MM" or "-HH:MM" into minutes east of UTC: 0 or -EINVAL. */
int period_tz_parse(const char *text, int *minutes);

/** Format minutes east of UTC as "+HH:MM" (or "UTC" for 0) into out (at least 8 bytes). */
void period_tz_format(int minutes, char *out, size_t len);

/**
 * Start (ms) of the period `delta` periods after the one holding t_ms (delta may be negative).
 * PERIOD_NONE returns INT64_MIN.
 */
int64_t period_start(enum period_kind k, int tz_min, int64_t t_ms, int delta);

/** The id of the period holding t_ms into out[PERIOD_ID_MAX]. PERIOD_NONE gives "". */
void period_id(enum period_kind k, int tz_min, int64_t t_ms, char out[PERIOD_ID_MAX]);

/**
 * Parse an id of kind k into the start (ms) of that period. Returns 0, or -EINVAL when the text
 * is not an id of that kind or names no real period (2026-02-30, 2026-W54).
 */
int period_id_start(enum period_kind k, int tz_min, const char *id, int64_t *start_ms);

#endif
