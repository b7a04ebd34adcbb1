/*
 * http.h -- the HTTP layer: requests and replies as plain structs, and the daemon's lifecycle.
 *
 * Threading model (the reason for it): a few event threads (--http-threads; the default 0 = half
 * the cores, 1 to 8: the other half is left to Redis and the clients, since under load an event
 * thread keeps a core busy; on 2 cores a second one gave the hot page 1.19 x the throughput and
 * 1.58 x the p99: bench/results/compare-issue3.md, sections 3 and 4), each running a
 * libmicrohttpd daemon of its own in external-epoll mode (MHD_USE_EPOLL,
 * MHD_ALLOW_SUSPEND_RESUME) on a shared listening socket, with its own epoll set that also holds
 * the thread's two non-blocking Redis connections (store_async.h: one for reads, one for writes,
 * so a write held by Redis never holds up the reads behind it) and its timers
 * (http_timer_after). An event thread multiplexes many connections, so it must never wait: it
 * parses, checks, answers from memory and sends Redis commands without waiting for their
 * replies. A request goes through one or two steps (route.h), both on the event thread that read
 * it; no other thread and no wake-up is involved (on 2 cores a hand-off to another thread and
 * back was about a quarter of a hit's CPU: bench/results/compare-issue3.md):
 *   1. quick: 400s, /healthz, /metrics and in-process tier hits are answered at once;
 *   2. async, connection suspended: every other request appends its script calls, commands or
 *      lookups to the thread's connections; every command of one loop iteration leaves in one
 *      write per connection (a pipeline), and the replies, read by the same thread, start the
 *      request's next call or answer it and resume its connection; waits (a page lock held
 *      elsewhere) are timers. Control operations (settings, delete, reset, trim, the board list,
 *      records, /admin, /readyz) are chains of such calls (board_ctl_submit), and an NDJSON
 *      upload writes each full chunk of lines while its connection is suspended. One deadline
 *      per request (http_request.deadline_ms, --request-timeout-ms) bounds all of it. A request
 *      that arrives while its thread's connection is being dialled waits for that dial within
 *      its deadline (store_async.h).
 * rankd accepts connections itself and gives each to the event thread with the fewest (left to
 * the kernel, one thread of two held 53 of 64 connections), and enforces --max-connections and
 * --max-connections-per-ip for the whole process at accept: MHD counts per daemon. Shutdown
 * stops accepting, answers new work 503, gives requests in work up to 5 s to finish sending
 * (a stalled upload or a client that never reads must not hold the exit), always lets suspended
 * requests finish (MHD must not stop with suspended connections; they are bounded by their
 * deadlines), then stops the loops and the daemons. Idle keep-alive connections are
 * closed after 30 s; so is a connection whose client closed it in the middle of a request, which
 * libmicrohttpd 0.9.75's edge-triggered epoll can miss (its slot counts until then).
 *
 * Only http.c includes microhttpd.h. Handlers (handlers_*.c) see struct http_request and fill
 * struct http_reply; http.c sends it. Only http.c maps negative errno codes to statuses
 * (http_reply_errno): Redis faults -> 503, -ENOMEM and anything unexpected -> 500.
 */
#ifndef RANKD_HTTP_H
#define RANKD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define HTTP_PATH_PARAMS_MAX 4
#define HTTP_HEADERS_MAX 8
#define HTTP_HEADER_BYTES 1024        /**< all header values of one reply, with their NULs */
#define HTTP_BODY_MAX (1024L * 1024L) /**< JSON body bytes; larger is 413 */

struct rankd; /* server.h: the application (config, store, model) */

/** A decoded query argument. */
struct http_arg {
    char *name;  /**< percent-decoded, owned by the request */
    char *value; /**< percent-decoded, "" when the argument had no '=', owned */
};

struct http_server;

struct http_request {
    struct rankd *app;
    const struct http_server *server;       /**< the HTTP server serving it (for /metrics) */
    const char *method;                     /**< borrowed from MHD */
    char *params[HTTP_PATH_PARAMS_MAX];     /**< decoded {name} path segments, owned */
    size_t param_len[HTTP_PATH_PARAMS_MAX]; /**< their lengths (ids are binary-safe) */
    int nparams;
    struct http_arg *args; /**< decoded query arguments, in request order, owned */
    size_t nargs;
    const char *content_type;  /**< header or NULL, borrowed */
    const char *if_none_match; /**< header or NULL, borrowed */
    struct buf body;           /**< JSON body (non-streaming routes), owned */
    int streaming;             /**< body is fed to the route's stream function */
    int64_t deadline_ms;       /**< monotonic (util_now_ms): when the whole request is in, plus
                                *   --request-timeout-ms; every round trip of its async steps
                                *   ends by then */
    void *stream_state;        /**< the handler's, freed by its stream_free */
};

struct http_header {
    const char *name; /**< static string */
    char *value;      /**< in the reply's values[] (a reply is never copied) */
};

struct http_reply {
    int status;               /**< 0 until a handler decides */
    struct buf body;          /**< owned; handed to MHD */
    int fd;                   /**< > 0: send this file instead of body (owned, closed by MHD) */
    uint64_t fd_size;         /**< its size in bytes */
    const char *content_type; /**< static string */
    struct http_header headers[HTTP_HEADERS_MAX];
    int nheaders;
    char values[HTTP_HEADER_BYTES]; /**< where the header values are kept (no malloc per
                                     *   header on the hit path) */
    size_t values_used;
};

/**
 * The query argument `name`: returns how many times it was given (0, 1, or more: callers treat
 * more than one as 400) and sets *value to the first one.
 */
int http_arg(const struct http_request *rq, const char *name, const char **value);

/** A JSON reply; takes ownership of `json` (a malloc'd string, e.g. from cJSON_PrintUnformatted),
 *  even on failure. A NULL json becomes a 500. */
void http_reply_json(struct http_reply *rp, int status, char *json);

/** An error reply {"error":{"code","message"}}; message is printf-formatted. */
void http_reply_error(struct http_reply *rp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** An error reply for a negative errno from store/board: 503 for Redis faults, 500 otherwise. */
void http_reply_errno(struct http_reply *rp, int rc);

/** As http_reply_errno, but a timeout after the write was sent (-ETIME) is 503
 *  `write_outcome_unknown`: the client must read before retrying a non-idempotent incr. */
void http_reply_write_errno(struct http_reply *rp, int rc);

/** Add a response header (value copied into the reply). Silently ignored past HTTP_HEADERS_MAX
 *  headers or HTTP_HEADER_BYTES of values. */
void http_reply_header(struct http_reply *rp, const char *name, const char *value);

/** What http_start needs from the configuration. */
struct http_options {
    const char *host;           /**< listen address (IPv4/IPv6 literal or "localhost") */
    int port;                   /**< 0: any free port */
    int max_connections;        /**< open connections at once */
    int max_per_ip;             /**< 0: no per-address limit */
    int event_threads;          /**< event threads; 0 = half the online cores, at least 1, at most 8
                                 *   (the other half is left to Redis and the clients) */
    struct store *hits;         /**< where the event threads' read connections dial (borrowed) */
    struct store *writes;       /**< where their write connections dial (borrowed) */
    struct store *cache_hits;   /**< a cache Redis of its own (--cache-redis): where the event
                                 *   threads' read connections to it dial (borrowed; NULL: none) */
    struct store *cache_writes; /**< and their write connections to it (borrowed; NULL: none) */
    int request_timeout_ms;     /**< http_request.deadline_ms; 0 = 1000 */
};

/**
 * Start serving with the route table of route.h. Returns NULL with *err set (-EADDRINUSE,
 * -EINVAL, -ENOMEM...). Free with http_stop.
 */
struct http_server *http_start(struct rankd *app, const struct http_options *o, int *err);

/**
 * A request whose connection is suspended while a route's async step (route.h) runs. The step
 * calls http_async_done exactly once, on the event thread, when it has filled the reply. The
 * request and reply must not be touched after the call.
 */
struct http_async;

void http_async_done(struct http_async *a);

/** A streamed body's chunk work (route_stream_async_fn) is done: the connection reads on. Once,
 *  on the event thread; after an error in the reply the rest of the body is dropped and the
 *  error sent at its end. */
void http_stream_done(struct http_async *a);

struct store;
struct store_async;

/** The calling event thread's own Redis connection for page hits (store_async.h), to be used
 *  only from the async step of `a` on that thread; NULL when there is none. Not owned. */
struct store_async *http_async_store(struct http_async *a);

/**
 * A one-shot timer on the event thread of `a` (call it from that thread, in an async step or a
 * callback of one): fn(arg) runs on the same thread once `ms` (>= 0) have passed, never from
 * inside this call; timers due together run in the order they were set. Returns NULL when out
 * of memory or called from another thread (then fn is never called). A timer cannot be
 * cancelled: fn must check whether it still has work. Waits (a page lock held elsewhere, a
 * test stall) are timers, never sleeps: an event thread never waits. `a` NULL: a timer of the
 * calling event thread itself, for work no request waits for (a background page refresh); at
 * shutdown a timer not yet due is dropped without running.
 */
struct http_timer;
struct http_timer *http_timer_after(struct http_async *a, int ms, void (*fn)(void *arg), void *arg);

/** The calling event thread's own Redis connection for writes, as http_async_store. */
struct store_async *http_async_store_writes(struct http_async *a);

/** The calling event thread's connection to the cache Redis (http_options.cache_hits; writes:
 *  cache_writes), as http_async_store; NULL without one. */
struct store_async *http_async_store_cache(struct http_async *a, int writes);

#define HTTP_EVENT_THREADS_MAX 64

/**
 * Per event thread i < the return value (at most `max`): connections[i] = connections given to
 * it (open, or handed over and not yet added), hit_connected[i] = 1 while its Redis hit
 * read connection is up, write_connected[i] = 1 while its write connection is. Racy snapshots
 * for /metrics; the connection states are read without a lock.
 */
int http_event_threads(const struct http_server *srv, int *connections, int *hit_connected,
                       int *write_connected, int max);

/** The bound port (useful with port 0). */
int http_port(const struct http_server *srv);

/** Stop accepting, finish open connections, free. NULL is a no-op. */
void http_stop(struct http_server *srv);

#endif
