/*
 * log.h -- rankd's log: one line per event on stderr, as text or as JSON, each with a level; and
 * the access line of a request (access.h decides when one is written).
 *
 * What the levels mean to an operator:
 *   error  a request failed (every 5xx, with its error code and cause), or something configured
 *          does not work (a token file that cannot be re-read on SIGHUP)
 *   warn   rankd serves, degraded or at risk: Redis faults (rate-limited, see below), the page
 *          cache skipped after errors, out of descriptors, no web directory to serve at `/`, a
 *          token file that other users can read
 *   info   lifecycle (start-up with the configuration, stop, reload) and one access line per
 *          request when the access log is on (--access-log, default on)
 *   debug  detail for diagnosis: HTTP connections opened and closed, with the event thread
 *          serving them and its count
 * Warnings are limited to LOG_WARN_BURST a second (a Redis outage must not flood the log; the
 * rest are counted and reported once); errors are not limited.
 *
 * Text lines: `2026-12-01T10:00:00.123Z rankd info: message`; an access line's message is
 * `access method=GET route=rank status=200 bytes=3259 us=812 cache=hit request_id=...` (logfmt:
 * values with spaces or quotes are quoted). JSON lines: one object a line, {"time","level","msg"}
 * and, for an access line, the same fields as members ("status", "bytes" and "us" numbers).
 *
 * The hot path: a line is formatted on the calling thread into a stack buffer, then appended to
 * an in-memory buffer (a mutex held for a memcpy); a writer thread (log_start) writes it out every
 * LOG_FLUSH_MS, at once for warnings and errors, or when half the buffer is used. No request ever
 * waits for the log's file: when the sink does not keep up (a pipe nobody reads), lines are
 * dropped and counted (log_dropped), never waited for. Before log_start and after log_stop lines
 * are written directly. Thread-safe.
 */
#ifndef RANKD_LOG_H
#define RANKD_LOG_H

#include <stddef.h>
#include <stdint.h>

/* LOG_LEVEL_NONE writes nothing at all (the in-process tests' rankd). */
enum log_level {
    LOG_LEVEL_DEBUG = 0,
    LOG_LEVEL_INFO,
    LOG_LEVEL_WARN,
    LOG_LEVEL_ERROR,
    LOG_LEVEL_NONE
};
enum log_format { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON };

#define LOG_WARN_BURST 20          /**< warnings a second, at most */
#define LOG_FLUSH_MS 50            /**< the writer's period for info and debug lines */
#define LOG_BUFFER_BYTES (1 << 20) /**< lines waiting for the writer; more are dropped */
#define LOG_LINE_MAX 2048          /**< bytes of one line; a longer message is cut */

/** Minimum level written (enum log_level). Default LOG_LEVEL_INFO. */
void log_set_level(int level);

/** 1 when lines of `level` are written. */
int log_enabled(int level);

/** enum log_format; default LOG_FORMAT_TEXT. */
void log_set_format(int format);

/** Access lines of requests below 500 on (1, the default) or off (0); 5xx lines are written
 *  whatever this says. */
void log_set_access(int on);

/** 1 when an access line of a request below 500 would be written (on, and info enabled). */
int log_access_enabled(void);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** What an access line says about one request. Strings are borrowed for the call; NULL ones are
 *  written as "-" (text) or null (JSON), and error/cause are left out when NULL. */
struct log_request {
    const char *method;
    const char *route;      /**< the route's metrics label, "static" or "unmatched" */
    int status;             /**< 0: the connection ended before a reply was queued */
    uint64_t bytes;         /**< body bytes of the reply */
    int64_t us;             /**< from the first byte of the request to the reply sent */
    const char *cache;      /**< hit, miss, stale (the X-Cache header), or NULL */
    const char *request_id; /**< X-Request-Id as given or generated */
    const char *error;      /**< a 5xx's error code, or NULL */
    const char *cause;      /**< a 5xx's message (what went wrong), or NULL */
    int aborted;            /**< 1: the connection closed before the reply was sent in full */
    const char *client;     /**< the client's address (cidr_client), or NULL: no field */
};

/** Write the access line of a request: level error for a 5xx, else info (when
 *  log_access_enabled). */
void log_request(const struct log_request *r);

/**
 * The text of one line, for tests and for log_request: `wall_us` (microseconds since the epoch)
 * and `level` as the line states them; a message (msg) or a request (r, when not NULL; msg is
 * then ignored). Writes at most cap - 1 bytes and a NUL into out (cap >= 2) and returns the
 * length, newline included. Pure.
 */
size_t log_format(char *out, size_t cap, int format, int64_t wall_us, int level, const char *msg,
                  const struct log_request *r);

/** Start the writer thread on fd (2: stderr): from now on lines are buffered. Returns 0 or a
 *  negative errno (lines are then still written directly). */
int log_start(int fd);

/** Write what is buffered and stop the writer; later lines are written directly. */
void log_stop(void);

/** Lines dropped because the writer did not keep up, since start. */
unsigned long log_dropped(void);

#endif
