/*
 * http.h -- HTTP requests and replies as plain structs, what handlers and route.c use of them:
 * the reply helpers, the async-step API, and the one errno -> status table.
 *
 * Nothing here sees libmicrohttpd or the event loops: httpd.c fills struct http_request, runs a
 * route's steps (route.h) and sends struct http_reply; handlers (handlers_*.c) read the one and
 * fill the other. A request goes through one or two steps (httpd.h says why), both on the event
 * thread that read it: quick, answered from memory; async, with the connection suspended, its
 * Redis calls on the connections of the thread's worker (http_async_worker, worker.h) and its
 * waits on timers (http_timer_after), finished with http_async_done. No step runs on another
 * thread and none blocks.
 *
 * Every error reply names its error by id (errors.h); the status and the code come from the error
 * table. The errno table (http_errno_rows) is the only place where a negative errno becomes an
 * error id and a message. The same errno means different things depending on what failed
 * (-ENOENT: no route, no board), so each row belongs to a scope and a lookup names the scopes
 * that apply, the rows of every lookup ending with the Redis faults and the 500 for anything
 * else: Redis faults are 503 (Retry-After: 1), a full tie group 422, -ENOMEM and anything
 * unexpected 500.
 */
#ifndef RANKD_HTTP_H
#define RANKD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "util.h"

#define HTTP_PATH_PARAMS_MAX 4
#define HTTP_HEADERS_MAX                                                                           \
    12 /**< a web page file: ETag, caching, nosniff, framing (2) and CORS (4) */
#define HTTP_HEADER_BYTES 1024        /**< all header values of one reply, with their NULs */
#define HTTP_BODY_MAX (1024L * 1024L) /**< JSON body bytes; larger is 413 */
#define HTTP_EVENT_THREADS_MAX 64     /**< event threads at most (loop.h: LOOP_THREADS_MAX) */

struct httpd;        /* httpd.h: the HTTP server serving the request */
struct tokens_grant; /* tokens.h: the scopes of a request's token */

/** A decoded query argument. */
struct http_arg {
    char *name;  /**< percent-decoded, owned by the request: one allocation that holds value
                  *   and raw too (freeing name frees all three) */
    char *value; /**< percent-decoded, "" when the argument had no '=', in name's block */
    char *raw;   /**< the value as sent, still percent-encoded (lists split on a raw ',', so an
                  *   id may hold "%2C"), in name's block */
};

struct http_request {
    const void *ctx; /**< the handlers' context (api.h: struct api_ctx), passed through from
                      *   httpd_options.ctx; opaque here, borrowed */
    const struct httpd *server;             /**< the HTTP server serving it (for /metrics) */
    const char *method;                     /**< borrowed from libmicrohttpd */
    char *params[HTTP_PATH_PARAMS_MAX];     /**< decoded {name} path segments, owned */
    size_t param_len[HTTP_PATH_PARAMS_MAX]; /**< their lengths (ids are binary-safe) */
    int nparams;
    struct http_arg *args; /**< decoded query arguments, in request order, owned */
    size_t nargs;
    const char *content_type;    /**< header or NULL, borrowed */
    const char *if_none_match;   /**< header or NULL, borrowed */
    const char *idempotency_key; /**< the Idempotency-Key header or NULL, borrowed */
    int event_stream;            /**< Accept names text/event-stream (events.h) */
    const char *last_event_id;   /**< the Last-Event-ID header or NULL, borrowed */
    struct buf body;             /**< JSON body (non-streaming routes), owned */
    int streaming;               /**< body is fed to the route's stream function */
    int64_t deadline_ms;         /**< monotonic (util_now_ms): when the whole request is in, plus
                                  *   --request-timeout-ms; every round trip of its async steps
                                  *   ends by then */
    void *stream_state;          /**< the handler's, freed by its stream_free */
    struct tokens_grant *grant;  /**< what the request's token allows (ROUTE_WRITE routes:
                                  *   auth.h), owned; NULL otherwise */
    void *parsed;                /**< what the route's quick step left for its async step (its
                                  *   arguments, parsed once), or NULL; owned: the async step
                                  *   takes it (sets it NULL), else parsed_free frees it with the
                                  *   request (a connection gone before the async step ran) */
    void (*parsed_free)(void *parsed);
};

struct http_body; /* a streamed reply body being sent (httpd.c) */

/**
 * A reply body made while it is sent (an export's NDJSON), never held whole. read() is called
 * on the event thread whenever the connection can take more: it copies up to `max` bytes into
 * buf and returns how many (> 0); 0 when none are ready yet, which suspends the connection until
 * the source calls http_body_ready(body) once (on the same thread, never from inside read);
 * -1 at the end of the body; -2 on a failure, which cuts the body (the client sees a body
 * without its end: chunked encoding without the last chunk). free(arg) is called once when the
 * reply is done with: sent, cut, or never sent.
 */
struct http_body_source {
    long (*read)(void *arg, struct http_body *body, char *buf, size_t max);
    void (*free)(void *arg);
    void *arg;
    size_t block; /**< the most read() is asked for at once (libmicrohttpd's block, allocated
                   *   with the reply); 0: 32 KiB */
};

struct http_header {
    const char *name; /**< static string */
    char *value;      /**< in the reply's values[] (a reply is never copied) */
};

struct http_reply {
    int status;               /**< 0 until a handler decides */
    struct buf body;          /**< owned; handed to libmicrohttpd */
    int fd;                   /**< > 0: send this file instead of body (owned, closed when sent) */
    uint64_t fd_size;         /**< its size in bytes */
    const char *content_type; /**< static string */
    struct http_header headers[HTTP_HEADERS_MAX];
    int nheaders;
    char values[HTTP_HEADER_BYTES]; /**< where the header values are kept (no malloc per
                                     *   header on the hit path) */
    size_t values_used;
    struct http_body_source stream; /**< a streamed body (http_reply_stream) when stream.read */
    enum err_id error;              /**< an error reply's id (http_reply_error), else ERR_NONE */
    char *fault;                    /**< an error reply of status >= 500: its message for the
                                     *   access log (malloc'd, owned; http_reply_free) */
};

/**
 * The query argument `name`: returns how many times it was given (0, 1, or more: callers treat
 * more than one as 400) and sets *value to the first one.
 */
int http_arg(const struct http_request *rq, const char *name, const char **value);

/** http_arg, with *raw the first one as sent (http_arg.raw). */
int http_arg_raw(const struct http_request *rq, const char *name, const char **raw);

/** A JSON reply; takes ownership of `json` (a malloc'd string, e.g. from cJSON_PrintUnformatted),
 *  even on failure. A NULL json becomes a 500. */
void http_reply_json(struct http_reply *rp, int status, char *json);

/** The same for a body whose length is known (json[len] is its NUL): not measured again. */
void http_reply_json_len(struct http_reply *rp, int status, char *json, size_t len);

/** The error reply of `id` (errors.h: its status and code), {"error":{"code","message"}}; the
 *  message is printf-formatted, cut at 511 bytes and made valid UTF-8. */
void http_reply_error(struct http_reply *rp, enum err_id id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** http_reply_error with the id's default message (errors.def), its placeholders empty. */
void http_reply_error_default(struct http_reply *rp, enum err_id id);

/** Mark rp, already filled with a body of its own (an upload's cut), as the error `id` with
 *  `message`: what http_reply_error records for the access log, without touching the body. */
void http_reply_mark_error(struct http_reply *rp, enum err_id id, const char *message);

/** Free what a reply owns besides its body and stream (the fault message); the body stays. */
void http_reply_free_fault(struct http_reply *rp);

/** A reply whose body is streamed from src (http_body_source): `status`, `content_type`
 *  (static). Takes src: its free is called even when the reply is replaced or never sent. */
void http_reply_stream(struct http_reply *rp, int status, const char *content_type,
                       const struct http_body_source *src);

/** A streamed body's read that returned 0 has bytes (or its end) now: the connection goes on.
 *  Once per such read, on the event thread of the request. */
void http_body_ready(struct http_body *body);

/** Add a response header (value copied into the reply). Silently ignored past HTTP_HEADERS_MAX
 *  headers or HTTP_HEADER_BYTES of values. */
void http_reply_header(struct http_reply *rp, const char *name, const char *value);

/* ---------------------------------------------------------------- the errno -> status table */

/** What failed, for the errno table: a lookup names the scopes that apply to its caller. */
enum http_errno_scope {
    HTTP_ERRNO_FAULT = 1 << 0,      /**< any store call (every lookup has it): Redis faults, 500 */
    HTTP_ERRNO_WRITE = 1 << 1,      /**< a write that may have been sent: a lost reply leaves its
                                     *   outcome unknown, so it must not say "retry safely" */
    HTTP_ERRNO_BOARD = 1 << 2,      /**< a board's lookup: the board, member or period is missing */
    HTTP_ERRNO_ITEM = 1 << 3,       /**< a record's lookup */
    HTTP_ERRNO_SETTINGS = 1 << 4,   /**< a settings change the board's state refuses */
    HTTP_ERRNO_SCORE = 1 << 5,      /**< a score literal judged against a board's layout */
    HTTP_ERRNO_ROUTE = 1 << 6,      /**< route_match: no route, wrong method, bad path */
    HTTP_ERRNO_FILE = 1 << 7,       /**< a static file's path */
    HTTP_ERRNO_QUERY = 1 << 8,      /**< the query string */
    HTTP_ERRNO_IDEMPOTENT = 1 << 9, /**< a write with an Idempotency-Key: a lost reply may be
                                     *   retried with the same key and body */
};

/**
 * One row: in `scope`, errno `err` is the error `id` (errors.h: its status and code) with
 * `message`. Messages name what they quote in braces, filled by http_errno_format: {board}, {id}
 * (cut at 200 bytes), {method}, {path} (cut at 200 bytes), {allow}, {field}, {score}, {min},
 * {max}, {decimals} and {reason} (strerror of the errno).
 */
struct http_errno_row {
    int err;             /**< a negative errno; 0: every errno of the scope not matched above */
    unsigned scope;      /**< one enum http_errno_scope bit; the default row has them all */
    enum err_id id;      /**< the error (errors.def) */
    int retry_after_s;   /**< > 0: the reply has Retry-After with this many seconds */
    const char *message; /**< the whole message, a template as above; NULL: the id's own
                          *   (errors.def) */
    const char *summary; /**< for Redis faults and writes: a clause replies that say more of
                          *   their own begin with (a cut upload: how far it got); else NULL */
};

/** The table, in lookup order: the first row whose scope is asked for and whose err is the
 *  errno (or 0) answers; the last row (err 0, every scope) is the 500 for anything else. */
extern const struct http_errno_row http_errno_rows[];
extern const size_t http_errno_nrows;

/** What a message template quotes (NULL members are ""). */
struct http_errno_args {
    const char *board, *id, *method, *path, *allow, *field, *score, *min, *max, *decimals;
};

/** The row for errno `err` (negative; a positive one is read as its negative) in `scopes` (enum
 *  http_errno_scope bits; HTTP_ERRNO_FAULT is always added). Never NULL. */
const struct http_errno_row *http_errno_find(unsigned scopes, int err);

/** Fill row e's message for errno `err` into out[0..cap) (cut, always NUL-terminated; cap >= 1),
 *  quoting from `a` (may be NULL). Returns the length written. */
size_t http_errno_format(const struct http_errno_row *e, int err, const struct http_errno_args *a,
                         char *out, size_t cap);

/** Row e's summary clause for errno `err` (its code when it has none) into out[0..cap), as
 *  http_errno_format. Returns the length written. */
size_t http_errno_summary(const struct http_errno_row *e, int err, char *out, size_t cap);

/** The error reply of errno `err` in `scopes` (as http_errno_find), quoting from `a` (may be
 *  NULL), with Retry-After when the row has one. */
void http_reply_errno_in(struct http_reply *rp, unsigned scopes, int err,
                         const struct http_errno_args *a);

/** http_reply_errno_in for a store call: 503 for Redis faults, 500 otherwise. */
void http_reply_errno(struct http_reply *rp, int rc);

/** The same for a write: a timeout or a lost connection after the write was sent (-ETIME,
 *  -ECONNRESET) is 503 `write_outcome_unknown`: the client must read before retrying an incr. */
void http_reply_write_errno(struct http_reply *rp, int rc);

/* ---------------------------------------------------------------- async steps (httpd.c) */

/**
 * A request whose connection is suspended while a route's async step (route.h) runs on its event
 * thread. The step calls http_async_done exactly once, on that thread, when it has filled the
 * reply. The request and reply must not be touched after the call.
 */
struct http_async;

void http_async_done(struct http_async *a);

/** A streamed body's chunk work (route_stream_async_fn) is done: the connection reads on. Once,
 *  on the event thread; after an error in the reply the rest of the body is dropped and the
 *  error sent at its end. */
void http_stream_done(struct http_async *a);

/** The work a stream function started when it returned 2 (read on meanwhile) has ended: once, on
 *  the event thread, and only while the request exists (its stream_free was not called). Until
 *  then rankd's stop waits for the request, and answers its upload only after this call. */
void http_stream_idle(struct http_async *a);

struct worker; /* worker.h: an event thread's Redis connections; opaque to http/ */

/** The calling event thread's worker (httpd_attach's: its Redis connections, worker.h), to be
 *  used only from the async step of `a` on that thread; NULL when called from another thread.
 *  Not owned. */
struct worker *http_async_worker(struct http_async *a);

/**
 * A one-shot timer on the event thread of `a`, from that thread (an async step or a callback of
 * one): fn(arg) runs on the same thread once `ms` (>= 0) have passed, never from inside this
 * call; timers due together run in the order they were set. Returns NULL when out of memory or
 * called from another thread (then fn is never called); the result only says it was set: a
 * timer cannot be cancelled, so fn must check whether it still has work. Waits (a page lock held
 * elsewhere, a test stall) are timers, never sleeps: an event thread never waits. `a` NULL: a
 * timer of the calling event thread itself, for work no request waits for (a background page
 * refresh); at shutdown a timer not yet due is dropped without running.
 */
struct http_timer;
struct http_timer *http_timer_after(struct http_async *a, int ms, void (*fn)(void *arg), void *arg);

struct metrics_thread; /* metrics.h */

/**
 * Per event thread i < the return value (at most `max`): its connections (given to it: open, or
 * handed over and not yet added), how many have a request in progress and how many of those
 * wait (suspended), and the round trips, commands, groups in flight and state of its worker's two
 * Redis connections (httpd_options.worker_stats). Racy snapshots for /metrics, safe from any
 * thread.
 */
int http_event_threads(const struct httpd *srv, struct metrics_thread *out, int max);

/** libmicrohttpd's version ("0.9.75"), for rankd_build_info. */
const char *http_library_version(void);

#endif
