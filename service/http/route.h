/*
 * route.h -- the route table: {method, pattern, steps, flags}, path parameters, 404 vs 405.
 *
 * Patterns are literal segments and {param} segments ("/boards/{board}/members/{id}"). A path
 * is split on '/' before percent-decoding, so a decoded param may contain '/' ("%2F").
 */
#ifndef RANKD_ROUTE_H
#define RANKD_ROUTE_H

#include <stddef.h>

#include "http.h"

typedef void (*route_stream_free_fn)(void *state);
/** On an HTTP event thread, without any wait: feed data[0..len) of a streamed body, setting
 *  *used to the bytes taken. Returns 0 when it took all of it; 1 when it took *used bytes and
 *  started work the connection waits for (it calls http_stream_done once, later; the rest of the
 *  data is offered again after that); 2 when it took *used bytes and started work that goes on
 *  while the body is read on (the rest is offered again at once; it calls http_stream_idle once when that work has ended, or, when
 *  the connection goes first, learns it from stream_free; meanwhile it never fills rp, and
 *  returns 1 to wait); -1 after filling rp with an error. */
typedef int (*route_stream_async_fn)(struct http_request *rq, const char *data, size_t len,
                                     size_t *used, struct http_reply *rp, struct http_async *async);
/** Optional, on an HTTP event thread, without any wait: returns 1 when rp is filled. */
typedef int (*route_quick_fn)(struct http_request *rq, struct http_reply *rp);
/** On an HTTP event thread with the connection suspended, without any wait: the request's work
 *  (its Redis calls appended to the thread's own connections, their replies taken on the same
 *  thread); it calls http_async_done exactly once, now or later, when rp is filled. */
typedef void (*route_async_fn)(struct http_request *rq, struct http_reply *rp,
                               struct http_async *async);

enum route_flags {
    ROUTE_WRITE = 1,    /**< needs the bearer token */
    ROUTE_BODY = 2,     /**< takes a JSON body */
    ROUTE_NDJSON = 4,   /**< also takes application/x-ndjson, streamed to `stream_async` */
    ROUTE_SCORES = 8,   /**< with ROUTE_WRITE: a score write, scope `scores` or one naming its
                         *   board (auth.h); without it a ROUTE_WRITE route needs `admin` */
    ROUTE_RECORDS = 16, /**< with ROUTE_WRITE: a record write, scope `scores` (auth.h) */
    ROUTE_ADMIN = 32,   /**< an operator's route (/metrics, /admin/...): only on the admin
                         *   listener when there is one (auth.h) */
    ROUTE_PROBE = 64,   /**< a health check (/healthz, /readyz): on every listener */
    ROUTE_EVENTS = 128, /**< answers an event stream to Accept: text/event-stream (events.h) and
                         *   JSON otherwise: every reply says Vary: Accept (filter.h) */
};

/* A request runs quick (if any), then, when quick did not answer, async; both on the event
 * thread that read the request (httpd.h). Every route has one of them at least. */
struct route {
    const char *method;
    const char *pattern;
    route_quick_fn quick;
    route_async_fn async;
    const char *name;                   /**< metrics label */
    route_stream_async_fn stream_async; /**< NDJSON chunks, or NULL */
    route_stream_free_fn stream_free;
    /** rankd is stopping in the middle of the stream: fill rp with a 503 that says how far it
     *  got. NULL: a plain 503 shutting_down. */
    void (*stream_stopped)(struct http_request *rq, struct http_reply *rp);
    int flags;  /**< enum route_flags */
    int metric; /**< metrics index, set by route_init */
};

/** Register route names with metrics (and "static", the files of the web page). Call once at
 *  start-up. */
void route_init(void);

/** The metrics index of "static" (route_init). */
int route_static_metric(void);

#define ROUTE_PATH_BYTES_MAX 2048   /**< bytes of a raw path (no query): longer is 414 */
#define ROUTE_SEGMENT_BYTES_MAX 512 /**< decoded bytes of a path parameter: longer is 414 */

/**
 * Match a raw (still percent-encoded) path and method. On a match returns 0, *out, and the decoded
 * params in rq->params (owned by rq). Returns -ENAMETOOLONG (a path over ROUTE_PATH_BYTES_MAX,
 * before any matching: 414), -ENOENT (no pattern: 404), -EPERM (the path exists with other
 * methods: 405, *allow lists them, e.g. "GET, PUT"), -EINVAL (a malformed escape in a parameter:
 * 400), -E2BIG (a parameter over ROUTE_SEGMENT_BYTES_MAX once decoded: 414), -ENOMEM.
 */
int route_match(const char *method, const char *path, struct http_request *rq,
                const struct route **out, char *allow, size_t allow_len);

/** route_match against `table` (n routes), in service/route_match.c: pure, no I/O, for the
 *  fuzz target (test/fuzz/), which cannot link the handlers the real table points to. */
int route_match_in(const struct route *table, size_t n, const char *method, const char *path,
                   struct http_request *rq, const struct route **out, char *allow,
                   size_t allow_len);

#endif
