/* http.c -- libmicrohttpd glue: request lifecycle, bodies, auth, replies; see http.h. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "log.h"
#include "metrics.h"
#include "request.h"
#include "route.h"
#include "server.h"
#include "static_files.h"
#include "workers.h"

#define CONNECTION_TIMEOUT_S 30
#define THREAD_STACK_BYTES (512 * 1024)
#define ARG_BYTES_MAX 1024
/* MHD zeroes a connection's whole memory pool after every request: keep it small. It holds one
 * request's line and headers, the reply headers and the read buffer (body chunks). */
#define CONNECTION_MEMORY_BYTES (16 * 1024)
#define STOP_WAIT_MS 30000 /* longest wait for suspended requests at shutdown */

struct http_server {
    struct MHD_Daemon *daemon;
    struct rankd *app;
    struct workers *workers;
    atomic_int suspended; /* requests handed off the event threads */
    atomic_int in_work;   /* requests handed off at least once and not completed yet */
    atomic_int open;      /* open connections, against max_connections (see http_start) */
    int max_connections;
    atomic_int stopping;
    int port;
};

/* Per-request state, created on the first callback and freed in on_completed. While the
 * connection is suspended only the thread doing its work touches it; that thread's last act is
 * to resume the connection (resume_exchange), after which only the event thread does. */
struct exchange {
    struct http_request rq;
    struct http_reply rp;
    const struct route *route;
    struct http_server *srv;
    struct MHD_Connection *conn;
    struct buf chunk; /* a streamed body chunk handed to a worker */
    int64_t start_us;
    int replied;    /* the handler ran off the event thread: send rp on the next callback */
    int handed_off; /* counted in srv->in_work */
    int away;       /* handed off and perhaps not resumed yet: event threads only */
    int queued;     /* a response was queued */
};

/* ---------------------------------------------------------------- replies */

void http_reply_header(struct http_reply *rp, const char *name, const char *value)
{
    if (rp->nheaders >= HTTP_HEADERS_MAX)
        return;
    char *v = strdup(value);
    if (!v)
        return;
    rp->headers[rp->nheaders].name = name;
    rp->headers[rp->nheaders++].value = v;
}

void http_reply_json(struct http_reply *rp, int status, char *json)
{
    buf_free(&rp->body);
    if (!json) {
        http_reply_error(rp, 500, "internal", "The server ran out of memory rendering the reply.");
        return;
    }
    rp->body.data = json;
    rp->body.len = strlen(json);
    rp->body.cap = rp->body.len + 1;
    rp->status = status;
    rp->content_type = "application/json; charset=utf-8";
}

void http_reply_error(struct http_reply *rp, int status, const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    request_utf8_sanitize(msg); /* echoed paths, ids and field names may be cut or invalid */
    cJSON *doc = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "code", code);
    cJSON_AddStringToObject(err, "message", msg);
    char *json = err ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    buf_free(&rp->body);
    rp->status = status;
    rp->content_type = "application/json; charset=utf-8";
    if (json) {
        rp->body.data = json;
        rp->body.len = strlen(json);
        rp->body.cap = rp->body.len + 1;
    }
}

void http_reply_errno(struct http_reply *rp, int rc)
{
    switch (rc) {
    case -ECONNREFUSED:
    case -ETIMEDOUT:
    case -ETIME:
    case -EIO:
    case -EAGAIN:
        http_reply_error(rp, 503, "redis_unavailable",
                         "Redis is unavailable or too slow right now (%s); retry shortly.",
                         strerror(-rc));
        http_reply_header(rp, "Retry-After", "1");
        break;
    case -ENOSPC:
        http_reply_error(rp, 422, "score_group_full",
                         "2097152 members already share this exact score on this board; no more "
                         "can be placed in that group (see schema/score-layout.md).");
        break;
    default:
        http_reply_error(rp, 500, "internal", "Internal error: %s.", strerror(rc < 0 ? -rc : rc));
    }
}

void http_reply_write_errno(struct http_reply *rp, int rc)
{
    if (rc != -ETIME) {
        http_reply_errno(rp, rc);
        return;
    }
    http_reply_error(rp, 503, "write_outcome_unknown",
                     "Redis did not answer in time after the write was sent: it may or may not "
                     "have been applied. Read the member before retrying an incr.");
    http_reply_header(rp, "Retry-After", "1");
}

int http_arg(const struct http_request *rq, const char *name, const char **value)
{
    int count = 0;
    for (size_t i = 0; i < rq->nargs; i++) {
        if (strcmp(rq->args[i].name, name) != 0)
            continue;
        if (count++ == 0)
            *value = rq->args[i].value;
    }
    return count;
}

/* ---------------------------------------------------------------- request set-up */

/* libmicrohttpd's own messages go through rankd's log, prefixed, rate-limited. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    log_warn("libmicrohttpd: %s", line);
}

/* Keep the raw path and query: rankd decodes each part itself, exactly once (see route.h). */
static size_t unescape_none(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

struct arg_walk {
    struct http_request *rq;
    int bad;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct arg_walk *w = cls;
    struct http_request *rq = w->rq;
    struct http_arg *grown = realloc(rq->args, (rq->nargs + 1) * sizeof(*grown));
    if (!grown) {
        w->bad = -ENOMEM;
        return MHD_NO;
    }
    rq->args = grown;
    char *name = malloc(ARG_BYTES_MAX + 1), *val = malloc(ARG_BYTES_MAX + 1);
    size_t n1 = 0, n2 = 0;
    int rc = (!name || !val) ? -ENOMEM : 0;
    if (!rc)
        rc = request_pct_decode(key, strlen(key), name, ARG_BYTES_MAX + 1, &n1);
    if (!rc)
        rc = request_pct_decode(value ? value : "", value ? strlen(value) : 0, val,
                                ARG_BYTES_MAX + 1, &n2);
    if (!rc && (strlen(name) != n1 || strlen(val) != n2))
        rc = -EINVAL; /* an escaped NUL */
    if (rc) {
        free(name);
        free(val);
        w->bad = rc == -ENOMEM ? rc : -EINVAL;
        return MHD_NO;
    }
    rq->args[rq->nargs].name = name;
    rq->args[rq->nargs++].value = val;
    return MHD_YES;
}

/* 1 when the media type of a Content-Type value (before any ';' parameters) is `type`. */
static int media_type_is(const char *value, const char *type)
{
    if (!value)
        return 0;
    size_t n = strcspn(value, ";");
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    return n == strlen(type) && strncasecmp(value, type, n) == 0;
}

static int starts_with_ci(const char *s, const char *prefix)
{
    return s && strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* 0 when the request may write; else the reply is filled (401/403). */
static int check_token(struct MHD_Connection *c, struct rankd *app, struct http_reply *rp)
{
    const char *token = rankd_write_token(app);
    if (!token[0]) {
        http_reply_error(rp, 403, "writes_disabled",
                         "Writes are disabled: start rankd with --write-token=TOKEN or set "
                         "RANKD_WRITE_TOKEN, then send 'Authorization: Bearer TOKEN'.");
        return -1;
    }
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || !starts_with_ci(auth, "Bearer ")) {
        http_reply_error(rp, 401, "unauthorized",
                         "Writes and /admin need the header 'Authorization: Bearer <token>'.");
        http_reply_header(rp, "WWW-Authenticate", "Bearer realm=\"rankd\"");
        return -1;
    }
    const char *given = auth + 7;
    if (!util_secure_equal(given, strlen(given), token, strlen(token))) {
        http_reply_error(rp, 403, "forbidden", "The bearer token is not valid.");
        return -1;
    }
    return 0;
}

/* Content-Type and Content-Length checks for routes with a body. */
static void check_body(struct MHD_Connection *c, struct exchange *x)
{
    struct http_request *rq = &x->rq;
    rq->content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    if ((x->route->flags & ROUTE_NDJSON) &&
        media_type_is(rq->content_type, "application/x-ndjson")) {
        rq->streaming = 1;
        return;
    }
    /* curl -d sends application/x-www-form-urlencoded unless told otherwise: read it as JSON. */
    if (rq->content_type && !media_type_is(rq->content_type, "application/json") &&
        !media_type_is(rq->content_type, "application/x-www-form-urlencoded")) {
        http_reply_error(&x->rp, 415, "unsupported_media_type",
                         "Content-Type must be application/json%s.",
                         (x->route->flags & ROUTE_NDJSON) ? " or application/x-ndjson" : "");
        return;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoll(cl, NULL, 10) > HTTP_BODY_MAX)
        http_reply_error(&x->rp, 413, "body_too_large", "JSON bodies are limited to %ld bytes.",
                         HTTP_BODY_MAX);
}

/* GET/HEAD of a file of the web frontend; 0 when the reply is decided, else -ENOENT. */
static int serve_static(struct rankd *app, const char *method, const char *url, struct exchange *x)
{
    const char *root = rankd_static_root(app);
    if (!root[0] || (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0))
        return -ENOENT;
    struct static_file f;
    int rc = static_files_open(root, url, &f);
    if (rc == -EINVAL) {
        http_reply_error(&x->rp, 400, "invalid_path", "The path has a malformed percent escape.");
        return 0;
    }
    if (rc)
        return -ENOENT; /* outside the directory looks exactly like absent */
    http_reply_header(&x->rp, "ETag", f.etag);
    http_reply_header(&x->rp, "Cache-Control", f.cache_control);
    http_reply_header(&x->rp, "X-Content-Type-Options", "nosniff");
    x->rp.content_type = f.content_type;
    if (x->rq.if_none_match && strcmp(x->rq.if_none_match, f.etag) == 0) {
        close(f.fd);
        x->rp.status = 304;
        return 0;
    }
    x->rp.status = 200;
    x->rp.fd = f.fd;
    x->rp.fd_size = f.size;
    return 0;
}

static void begin(struct http_server *srv, struct MHD_Connection *c, const char *url,
                  const char *method, struct exchange *x)
{
    x->rq.app = srv->app;
    x->rq.method = method;
    x->rq.if_none_match = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    char allow[64];
    int rc = route_match(method, url, &x->rq, &x->route, allow, sizeof(allow));
    if (rc == -ENOENT && serve_static(srv->app, method, url, x) == 0)
        return;
    if (rc == -ENOENT) {
        http_reply_error(&x->rp, 404, "not_found", "No route for %s %.200s.", method, url);
        return;
    }
    if (rc == -EPERM) {
        http_reply_error(&x->rp, 405, "method_not_allowed", "%s is not allowed here; use %s.",
                         method, allow);
        http_reply_header(&x->rp, "Allow", allow);
        return;
    }
    if (rc) {
        http_reply_error(&x->rp, 400, "invalid_path",
                         "The path has a malformed percent escape or an over-long segment.");
        return;
    }
    struct arg_walk w = {&x->rq, 0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &w);
    if (w.bad) {
        http_reply_error(&x->rp, 400, "invalid_query",
                         "The query string has a malformed percent escape or an over-long part.");
        return;
    }
    if ((x->route->flags & ROUTE_WRITE) && check_token(c, srv->app, &x->rp))
        return;
    if (x->route->flags & ROUTE_BODY) {
        check_body(c, x);
        return;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoll(cl, NULL, 10) > 0)
        http_reply_error(&x->rp, 400, "unexpected_body", "This request takes no body.");
}

/* One chunk of request body. */
static void consume(struct exchange *x, const char *data, size_t len)
{
    if (!(x->route->flags & ROUTE_BODY)) {
        http_reply_error(&x->rp, 400, "unexpected_body", "This request takes no body.");
        return;
    }
    if (x->rq.body.len + len > (size_t)HTTP_BODY_MAX) {
        http_reply_error(&x->rp, 413, "body_too_large", "JSON bodies are limited to %ld bytes.",
                         HTTP_BODY_MAX);
        buf_free(&x->rq.body);
        return;
    }
    if (buf_append(&x->rq.body, data, len))
        http_reply_errno(&x->rp, -ENOMEM);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct exchange *x)
{
    struct http_reply *rp = &x->rp;
    if (!rp->status)
        http_reply_error(rp, 500, "internal", "The handler produced no reply.");
    struct MHD_Response *resp;
    if (rp->fd > 0) {
        resp = MHD_create_response_from_fd64(rp->fd_size, rp->fd);
        if (resp)
            rp->fd = 0; /* MHD closes it */
    } else if (rp->body.data) {
        resp = MHD_create_response_from_buffer(rp->body.len, rp->body.data, MHD_RESPMEM_MUST_FREE);
        if (resp)
            rp->body.data = NULL, rp->body.len = rp->body.cap = 0;
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!resp)
        return MHD_NO;
    if (rp->content_type && rp->status != 204 && rp->status != 304)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rp->content_type);
    for (int i = 0; i < rp->nheaders; i++)
        MHD_add_response_header(resp, rp->headers[i].name, rp->headers[i].value);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)rp->status, resp);
    MHD_destroy_response(resp);
    x->queued = 1;
    return ok;
}

static int has_body(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    return (cl && strtoll(cl, NULL, 10) > 0) || te;
}

/* ---------------------------------------------------------------- off the event threads */

/* The event threads never block (see http.h): work that may wait on Redis runs on a worker
 * while the connection is suspended, and the worker's last act is to resume it. */

/* Suspend x for work elsewhere. Returns 0, or -1 when rankd is stopping (x is not suspended).
 * The counters go up before `stopping` is read, and http_stop sets `stopping` before it reads
 * them (both sequentially consistent): either this sees the stop, or the stop waits for x. */
static int suspend_exchange(struct exchange *x)
{
    struct http_server *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    if (atomic_load(&srv->stopping)) {
        atomic_fetch_sub(&srv->suspended, 1);
        return -1;
    }
    x->away = 1;
    MHD_suspend_connection(x->conn);
    return 0;
}

/* 1 while x's work may still be running: handed off and not resumed. MHD 0.9.75 goes on calling
 * the handler with the rest of a chunked body after the connection is suspended; such calls must
 * neither consume data nor start more work. Only the event threads resume connections, so "not
 * suspended" means the worker has finished. */
static int still_away(struct exchange *x)
{
    if (!x->away)
        return 0;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_SUSPENDED);
    if (ci && ci->suspended == MHD_YES)
        return 1;
    x->away = 0;
    return 0;
}

static void reply_stopping(struct http_reply *rp)
{
    http_reply_error(rp, 503, "shutting_down", "rankd is shutting down.");
    http_reply_header(rp, "Retry-After", "1");
}

/* Hand the connection back to the event threads; x may be freed as soon as this starts. */
static void resume_exchange(struct exchange *x)
{
    struct http_server *srv = x->srv;
    MHD_resume_connection(x->conn);
    atomic_fetch_sub(&srv->suspended, 1);
}

static void run_handler(void *arg)
{
    struct exchange *x = arg;
    x->route->handler(&x->rq, &x->rp);
    x->replied = 1;
    resume_exchange(x);
}

static void run_stream(void *arg)
{
    struct exchange *x = arg;
    x->route->stream(&x->rq, x->chunk.data, x->chunk.len, &x->rp);
    x->chunk.len = 0;
    resume_exchange(x);
}

static void reply_busy(struct http_reply *rp)
{
    http_reply_error(rp, 503, "overloaded", "rankd could not start a thread for this request.");
    http_reply_header(rp, "Retry-After", "1");
}

/* Run fn(x) on a worker; the connection is suspended. */
static void to_worker(struct exchange *x, workers_fn fn)
{
    if (workers_submit(x->srv->workers, fn, x) == 0)
        return;
    reply_busy(&x->rp);
    x->replied = 1;
    resume_exchange(x);
}

void http_async_done(struct http_async *a, int replied)
{
    struct exchange *x = (struct exchange *)a;
    if (!replied) {
        to_worker(x, run_handler);
        return;
    }
    x->replied = 1;
    resume_exchange(x);
}

/* A chunk of an NDJSON body: the stream function writes to Redis, so it runs on a worker. */
static enum MHD_Result stream_chunk(struct exchange *x, const char *data, size_t *len)
{
    if (buf_append(&x->chunk, data, *len))
        http_reply_errno(&x->rp, -ENOMEM);
    else if (suspend_exchange(x) == 0)
        to_worker(x, run_stream);
    else
        reply_stopping(&x->rp);
    *len = 0;
    return MHD_YES;
}

/* The whole request is in: answer from memory, or hand it to the route's async step or a worker. */
static enum MHD_Result dispatch(struct MHD_Connection *c, struct exchange *x)
{
    const struct route *r = x->route;
    if (r->quick && r->quick(&x->rq, &x->rp))
        return send_reply(c, x);
    if (suspend_exchange(x)) {
        reply_stopping(&x->rp);
        return send_reply(c, x);
    }
    if (!(r->async && r->async(&x->rq, &x->rp, (struct http_async *)x)))
        to_worker(x, run_handler);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **ctx)
{
    (void)version;
    struct exchange *x = *ctx;
    if (!x) {
        x = calloc(1, sizeof(*x));
        if (!x)
            return MHD_NO;
        x->start_us = util_now_us();
        x->srv = cls;
        x->conn = c;
        *ctx = x;
        begin(cls, c, url, method, x);
        /* Refused before a body arrives: answer now and MHD closes the connection rather than
         * read the body. Without a body, answer on the next call so the connection stays open. */
        return x->rp.status && has_body(c) ? send_reply(c, x) : MHD_YES;
    }
    if (still_away(x))
        return MHD_YES; /* leave the data: MHD offers it again after the resume */
    if (x->queued) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (x->replied)
        return send_reply(c, x);
    if (*upload_data_size) {
        /* MHD 0.9.75 refuses a reply queued mid-body: once an error is decided, the rest of the
         * body is read and dropped, and the error goes out after it. */
        if (!x->rp.status && x->rq.streaming)
            return stream_chunk(x, upload_data, upload_data_size);
        if (!x->rp.status)
            consume(x, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (x->rp.status)
        return send_reply(c, x);
    return dispatch(c, x);
}

static void exchange_free(struct exchange *x)
{
    for (int i = 0; i < x->rq.nparams; i++)
        free(x->rq.params[i]);
    for (size_t i = 0; i < x->rq.nargs; i++) {
        free(x->rq.args[i].name);
        free(x->rq.args[i].value);
    }
    free(x->rq.args);
    buf_free(&x->rq.body);
    buf_free(&x->chunk);
    if (x->rq.stream_state && x->route && x->route->stream_free)
        x->route->stream_free(x->rq.stream_state);
    buf_free(&x->rp.body);
    if (x->rp.fd > 0)
        close(x->rp.fd);
    for (int i = 0; i < x->rp.nheaders; i++)
        free(x->rp.headers[i].value);
    free(x);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct exchange *x = *ctx;
    if (!x)
        return;
    metrics_request(x->route ? x->route->metric : -1, x->rp.status, util_now_us() - x->start_us);
    if (x->handed_off)
        atomic_fetch_sub(&x->srv->in_work, 1);
    exchange_free(x);
    *ctx = NULL;
}

/* ---------------------------------------------------------------- connection limit */

/* MHD divides MHD_OPTION_CONNECTION_LIMIT between its event threads and does not spread
 * connections evenly, so a thread could refuse (or stall) connections well below the limit.
 * rankd gives MHD a limit per thread as large as the whole limit and enforces the whole limit
 * itself: counted on open and close, refused at accept. */
/* A slot this event thread reserved in accept_policy and its STARTED notification has not taken
 * yet. The policy and the notification of one connection run one after the other on the thread
 * that accepts it; a reservation still pending at the next accept was refused by MHD after the
 * policy (its per-IP limit, say) and is given back then. */
static __thread int slot_pending;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)c;
    (void)socket_ctx;
    struct http_server *srv = cls;
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_sub(&srv->open, 1);
    else if (slot_pending)
        slot_pending = 0; /* counted at accept */
    else
        atomic_fetch_add(&srv->open, 1);
}

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    struct http_server *srv = cls;
    if (atomic_load(&srv->stopping))
        return MHD_NO;
    if (slot_pending) { /* the last connection accepted here never started */
        atomic_fetch_sub(&srv->open, 1);
        slot_pending = 0;
    }
    int open = atomic_load(&srv->open);
    while (open < srv->max_connections)
        if (atomic_compare_exchange_weak(&srv->open, &open, open + 1)) {
            slot_pending = 1; /* reserved: several threads accept at once */
            return MHD_YES;
        }
    return MHD_NO;
}

/* ---------------------------------------------------------------- lifecycle */

static int make_addr(const char *host, int port, struct sockaddr_storage *ss, int *v6)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    const char *h = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, h, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = 0;
        return 0;
    }
    if (inet_pton(AF_INET6, h, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        return 0;
    }
    return -EINVAL;
}

struct http_server *http_start(struct rankd *app, const struct http_options *o, int *err)
{
    struct sockaddr_storage ss;
    int v6 = 0;
    if (make_addr(o->host, o->port, &ss, &v6)) {
        *err = -EINVAL;
        return NULL;
    }
    struct http_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        *err = -ENOMEM;
        return NULL;
    }
    srv->app = app;
    srv->max_connections = o->max_connections;
    int threads = o->event_threads > 1 ? o->event_threads : 1;
    /* a worker per open connection at most: a job never waits behind unrelated slow jobs */
    srv->workers = workers_new(o->max_connections, (size_t)THREAD_STACK_BYTES);
    if (!srv->workers) {
        free(srv);
        *err = -ENOMEM;
        return NULL;
    }
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO |
                     MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0);
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)o->port, accept_policy, srv, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(threads > 1 ? threads : 0), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(o->max_connections * threads), MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_per_ip,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_BYTES,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, srv, MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
    if (!srv->daemon) {
        workers_free(srv->workers);
        free(srv);
        *err = -EADDRINUSE;
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : o->port;
    return srv;
}

int http_port(const struct http_server *srv)
{
    return srv->port;
}

void http_stop(struct http_server *srv)
{
    if (!srv)
        return;
    /* MHD must not be stopped with suspended connections: refuse new work, let the requests in
     * work finish and their replies go out (bounded by Redis timeouts and page waits), then stop.
     * Past STOP_WAIT_MS only the suspended ones are waited for. */
    /* Not MHD_quiesce_daemon: in 0.9.75 it races an epoll thread removing the listen socket
     * from its epoll set and MHD aborts ("Failed to remove listen FD from epoll set"); the
     * accept policy refuses new connections once `stopping` is set instead. */
    atomic_store(&srv->stopping, 1);
    for (int waited = 0; atomic_load(&srv->in_work) > 0 && waited < STOP_WAIT_MS; waited++)
        util_sleep_ms(1);
    while (atomic_load(&srv->suspended) > 0)
        util_sleep_ms(1);
    MHD_stop_daemon(srv->daemon);
    workers_free(srv->workers);
    free(srv);
}
