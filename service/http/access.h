/*
 * access.h -- what happens when a request completes: its metrics (metrics.h) and its access line
 * (log.h); and request ids.
 *
 * http.c makes one call per request, access_done, when libmicrohttpd reports it complete (the
 * reply sent, or the connection gone), with a small record of what the line and the metrics
 * need; nothing here allocates or locks on that path but the log's buffer append, and nothing at
 * all when the access log is off and the status is below 500.
 *
 * Request ids: a client's X-Request-Id is kept when it is 1..ACCESS_ID_MAX characters of
 * [A-Za-z0-9] and "-_.:/+=@" (safe in a header and a log line); otherwise rankd makes one: 16
 * hex digits, a random 64-bit start drawn at start-up plus a counter, so ids are unique within a
 * process and, with overwhelming probability, across processes. The id goes back in the
 * reply's X-Request-Id and into the access line.
 */
#ifndef RANKD_ACCESS_H
#define RANKD_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#define ACCESS_ID_MAX 128 /**< characters of a request id */

/** The request id for a request: `given` (the X-Request-Id header, or NULL) when valid, else a
 *  new one. Writes it NUL-terminated into out. Thread-safe. */
void access_request_id(const char *given, char out[ACCESS_ID_MAX + 1]);

/** A 5xx's error code and message (the cause the log states). */
struct access_fault {
    char code[64];
    char cause[448];
};

/**
 * For a reply with status >= 500: its error's code (the error id's, errors.h; "internal" for
 * ERR_NONE) and message (`message`, or a note when NULL), as a new struct (free()); NULL below
 * 500 or when out of memory. The reply says both (http_reply.error, .fault): no body is read.
 */
struct access_fault *access_fault_of(int status, enum err_id error, const char *message);

/** One completed request. Strings are borrowed for the call. */
struct access_record {
    const char *method;
    const char *route;                /**< the route's metrics label, "static" or "unmatched" */
    int route_metric;                 /**< metrics_route index, -1 for none (metrics.h) */
    int status;                       /**< 0 when no reply was queued */
    uint64_t bytes;                   /**< body bytes of the reply (0 for HEAD and 304) */
    int64_t us;                       /**< from the request's first callback to its completion */
    const char *cache;                /**< the X-Cache value (hit, miss, stale) or NULL */
    const char *request_id;           /**< as access_request_id gave it */
    const struct access_fault *fault; /**< for a 5xx, or NULL */
    int aborted;                      /**< the connection ended before the reply was sent in full */
    const char *client;               /**< the client's address (cidr_client), or NULL */
};

/** Count the request (metrics_request) and write its access line (log_request) when the access
 *  log is on or the status is 5xx. Thread-safe. */
void access_done(const struct access_record *r);

#endif
