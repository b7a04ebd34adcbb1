/*
 * tzif.h -- IANA time zones read from the system's TZif files (RFC 8536, versions 1 to 3), for
 * periods that follow a zone's local midnight through its daylight-saving changes.
 *
 * A zone is loaded from <dir>/<name> (dir: TZIF_DIR_DEFAULT, Debian's tzdata). The 64-bit data
 * of a version 2+ file is used (the 32-bit data of a version 1 file), and past the last
 * transition the footer's POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3", with RFC 8536's
 * extensions: hours up to 167 and negative in rule times, DST all year), so instants after 2037
 * follow the zone's rule. Files with leap-second records ("right/" zones) are refused: their
 * transition times are not UTC seconds.
 *
 * Times are seconds since the Unix epoch (UTC); a "wall" time is the same count on the zone's
 * local clock (UTC seconds + the offset in effect). Offsets are seconds east of UTC, within
 * +-TZIF_OFFSET_MAX.
 *
 * A loaded zone is immutable: every function on it is pure and thread-safe. The cache
 * (struct tzif_cache, owned by its caller) loads each name once and keeps it until freed;
 * lookups take no lock once a zone is in it (a new load takes the cache's mutex).
 */
#ifndef RANKD_TZIF_H
#define RANKD_TZIF_H

#include <stddef.h>
#include <stdint.h>

#define TZIF_DIR_DEFAULT "/usr/share/zoneinfo"
#define TZIF_NAME_MAX 48      /**< bytes of a zone name, with the NUL */
#define TZIF_OFFSET_MAX 93599 /**< |offset| in seconds (RFC 8536: under 26 hours) */
#define TZIF_FILE_MAX 262144  /**< bytes of a TZif file read */
#define TZIF_CACHE_MAX 1024   /**< zones one cache holds (tzdata has about 600 names) */

struct tzif_zone;
struct tzif_cache;

/** The calendar units a zone's boundaries are counted in. */
enum tzif_unit { TZIF_HOUR = 0, TZIF_DAY, TZIF_WEEK, TZIF_MONTH };

/**
 * 1 when `name` may name a zone file: 1..TZIF_NAME_MAX-1 bytes of [A-Za-z0-9_+-] in components
 * split by single '/', none empty or starting with '.' or '-' (so no "..", no absolute path, no
 * option-like text), the first a letter. Says nothing of whether the file exists.
 */
int tzif_name_valid(const char *name);

/**
 * Parse TZif data buf[0..len) as the zone `name` (kept as the zone's name; not checked here).
 * 0 and *out (free with tzif_free), -EBADMSG (not TZif, inconsistent counts or indices,
 * transitions out of order, an offset past TZIF_OFFSET_MAX, leap-second records, a footer this
 * module cannot read), -ENOMEM.
 */
int tzif_parse(const void *buf, size_t len, const char *name, struct tzif_zone **out);

/**
 * Load the zone `name` from dir/name: 0 and *out (free with tzif_free); -EINVAL a name
 * tzif_name_valid refuses; -ENOENT no such regular file (a directory such as "Europe" is none);
 * -EFBIG a file over TZIF_FILE_MAX; -EIO a read error; tzif_parse's errors.
 */
int tzif_load(const char *dir, const char *name, struct tzif_zone **out);

void tzif_free(struct tzif_zone *z);

/** The name the zone was loaded as ("Europe/Paris"). */
const char *tzif_name(const struct tzif_zone *z);

/** The UTC offset (seconds east) in effect at instant t. */
int32_t tzif_offset(const struct tzif_zone *z, int64_t t);

/**
 * The first offset change after instant t: 1 with *at (UTC seconds, > t) and *offset (the offset
 * from then on), or 0 when the offset never changes again.
 */
int tzif_next_change(const struct tzif_zone *z, int64_t t, int64_t *at, int32_t *offset);

/**
 * The earliest instant whose wall time is `wall` or later: the instant a local clock reaches
 * `wall` (in a gap, such as 02:30 on a spring-forward night, the end of the gap; in an overlap,
 * the first of the two).
 */
int64_t tzif_wall_start(const struct tzif_zone *z, int64_t wall);

/**
 * Boundaries of local calendar units: the start (UTC seconds) of the unit `delta` units after the
 * one holding instant t (0: at or before t; 1: the next one, after t; negative: earlier ones).
 * A unit starts where the local clock reaches its first wall second (hour:00, midnight, Monday's
 * midnight, the 1st's midnight), so a local day lasts 23 or 25 hours on DST days. A unit the
 * clock skips entirely (a gap of its whole length) is no unit: the count steps over it. *wall
 * (may be NULL) gets the unit's first wall second, which names it.
 */
int64_t tzif_unit_start(const struct tzif_zone *z, enum tzif_unit u, int64_t t, int delta,
                        int64_t *wall);

/** A cache of zones read from `dir` (NULL: TZIF_DIR_DEFAULT): the cache or NULL (no memory). */
struct tzif_cache *tzif_cache_new(const char *dir);

/** Free the cache and every zone in it (no zone from it is used afterwards). */
void tzif_cache_free(struct tzif_cache *c);

/**
 * The zone `name`, loaded on its first use: 0 and *out (owned by the cache, valid until
 * tzif_cache_free), tzif_load's errors (a failed load is not remembered), -ENOSPC the cache holds
 * TZIF_CACHE_MAX zones already. A NULL cache gives -ENOENT.
 */
int tzif_cache_get(struct tzif_cache *c, const char *name, const struct tzif_zone **out);

#endif
