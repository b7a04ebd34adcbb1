/* http.c -- libmicrohttpd glue: request lifecycle, bodies, auth, replies; see http.h. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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
#include "store_async.h"

#define CONNECTION_TIMEOUT_S 30
#define ARG_BYTES_MAX 1024
/* MHD zeroes a connection's whole memory pool after every request: keep it small. It holds one
 * request's line and headers, the reply headers and the read buffer (body chunks). */
#define CONNECTION_MEMORY_BYTES (16 * 1024)
/* Longest wait at shutdown for requests in work to finish sending (a client that stalls its
 * upload or never reads its reply must not hold the exit); suspended ones are always waited for
 * (bounded by the Redis timeout and page waits): MHD must not stop with them. */
#define STOP_WAIT_MS 5000
#define IP_BUCKETS 256
#define LOOP_EVENTS 64
#define ACCEPTS_PER_WAKE 16
#define EMFILE_PAUSE_MS 100
enum loop_tag {
    TAG_MHD = 1,
    TAG_WAKE,
    TAG_REDIS,
    TAG_LISTEN,
    TAG_REDIS_W,
    TAG_CACHE,
    TAG_CACHE_W
}; /* epoll_event.data.u64 in a loop */

/* One event thread: a libmicrohttpd daemon in external-epoll mode sharing the listen socket, its
 * own non-blocking Redis connection for page hits, and an eventfd to wake it. */
struct loop {
    struct http_server *srv;
    struct MHD_Daemon *daemon;
    struct store_async *hits;   /* reads: NULL without a hit store */
    struct store_async *writes; /* writes (a connection of their own: a write held by Redis,
                                 * as under CLIENT PAUSE WRITE, must not hold up the reads
                                 * pipelined behind it); NULL without a write store */
    struct store_async *cache_hits, *cache_writes; /* the same to a cache Redis of its own
                                                    * (--cache-redis), else NULL */
    int epfd, wakefd;
    pthread_t thread;
    int running;
    atomic_int load;             /* connections given to this loop: open, or in its inbox */
    pthread_mutex_t inbox_lock;  /* accepted sockets another loop handed over */
    struct handoff *inbox;       /* under inbox_lock */
    int64_t listen_paused_until; /* out of descriptors: accept again after this (ms) */
    int resumed;                 /* a connection was resumed on this thread: run the daemon */
    struct http_timer *timers;   /* pending, soonest first; this thread only */
};

/* A one-shot timer of one loop (http_timer_after). */
struct http_timer {
    int64_t at_ms; /* monotonic */
    void (*fn)(void *arg);
    void *arg;
    struct http_timer *next;
};

/* An accepted socket on its way to the loop that will serve it. */
struct handoff {
    int fd;
    struct sockaddr_storage addr;
    socklen_t len;
    struct handoff *next;
};

/* Open connections from one client address (--max-connections-per-ip, for the whole process). */
struct ip_count {
    unsigned char addr[16];
    size_t len;
    int count;
    struct ip_count *next;
};

struct http_server {
    struct loop *loops;
    int nloops;
    int listen_fd;
    atomic_int quit; /* the loops return */
    struct rankd *app;
    atomic_int suspended; /* requests suspended for their async step (Redis, timers) */
    atomic_int in_work;   /* requests suspended at least once and not completed yet */
    atomic_int open;      /* open connections, against max_connections (see http_start) */
    int max_connections;
    int max_per_ip;
    int request_timeout_ms;
    pthread_mutex_t ip_lock;
    struct ip_count *ips[IP_BUCKETS];
    atomic_int stopping;
    int port;
};

/* Per-request state, created on the first callback and freed in on_completed; touched only by
 * the event thread that owns the connection. */
struct exchange {
    struct http_request rq;
    struct http_reply rp;
    const struct route *route;
    struct http_server *srv;
    struct loop *loop; /* the event thread that owns the connection */
    struct MHD_Connection *conn;
    int64_t start_us;
    int replied;    /* the async step is done: send rp on the next callback */
    int handed_off; /* counted in srv->in_work */
    int away;       /* suspended and perhaps not resumed yet */
    int queued;     /* a response was queued */
    int no_drain;   /* refused for its framing: answered before its body, then closed */
};

/* ---------------------------------------------------------------- replies */

void http_reply_header(struct http_reply *rp, const char *name, const char *value)
{
    size_t n = strlen(value) + 1;
    if (rp->nheaders >= HTTP_HEADERS_MAX || n > sizeof(rp->values) - rp->values_used)
        return;
    char *v = rp->values + rp->values_used;
    memcpy(v, value, n);
    rp->values_used += n;
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
    case -ECONNRESET:
    case -EIO:
    case -EAGAIN:
        http_reply_error(rp, 503, "redis_unavailable",
                         "Redis is unavailable or too slow right now (%s); retry shortly.",
                         strerror(-rc));
        http_reply_header(rp, "Retry-After", "1");
        break;
    case -EDQUOT:
        http_reply_error(rp, 507, "insufficient_storage",
                         "Redis is out of memory (maxmemory) and refuses writes: nothing was "
                         "written. Deleting members or boards frees memory; so does raising "
                         "maxmemory.");
        break;
    case -EROFS:
        http_reply_error(rp, 503, "primary_changed",
                         "Redis answered READONLY: the instance rankd writes to is a replica now "
                         "(a failover); nothing was written. Point rankd at the new primary.");
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
    if (rc != -ETIME && rc != -ECONNRESET) {
        http_reply_errno(rp, rc);
        return;
    }
    http_reply_error(rp, 503, "write_outcome_unknown",
                     "Redis did not answer after the write was sent (a timeout or a lost "
                     "connection): it may or may not have been applied. Read the member before "
                     "retrying an incr.");
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

/* How often one request header was given, and whether its values differ. */
struct header_count {
    const char *name;
    const char *first; /* the first value */
    int n;
    int differ;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    struct header_count *h = cls;
    if (strcasecmp(key, h->name) != 0)
        return MHD_YES;
    if (h->n++ == 0)
        h->first = value ? value : "";
    else if (strcmp(h->first, value ? value : "") != 0)
        h->differ = 1;
    return MHD_YES;
}

/* 0 when the body is framed one way only; else the reply is filled. libmicrohttpd 0.9.75 frames
 * by the first Content-Length and reads any Transfer-Encoding but chunked as a body running to
 * the end of the connection; a proxy in front may take another header: a smuggled request. The
 * reply closes the connection, so nothing after it is read as a request. */
static int check_framing(struct MHD_Connection *c, struct http_reply *rp)
{
    struct header_count cl = {.name = "Content-Length"}, te = {.name = "Transfer-Encoding"};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &cl);
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &te);
    if (cl.differ)
        http_reply_error(rp, 400, "invalid_content_length",
                         "The request has Content-Length headers with different values.");
    else if (cl.n && te.n) /* RFC 9112 6.3: a proxy may frame it by either: refuse, close */
        http_reply_error(rp, 400, "invalid_content_length",
                         "The request has both Content-Length and Transfer-Encoding.");
    else if (te.n && (te.n > 1 || strcasecmp(te.first, "chunked") != 0))
        http_reply_error(rp, 501, "not_implemented",
                         "Transfer-Encoding '%.60s' is not supported: send the body with a "
                         "Content-Length or as Transfer-Encoding: chunked.",
                         te.n > 1 ? "given twice" : te.first);
    else
        return 0;
    http_reply_header(rp, "Connection", "close");
    return -1;
}

static void begin(struct http_server *srv, struct MHD_Connection *c, const char *url,
                  const char *method, struct exchange *x)
{
    x->rq.app = srv->app;
    x->rq.server = srv;
    x->rq.method = method;
    x->rq.if_none_match = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    if (check_framing(c, &x->rp)) {
        x->no_drain = 1; /* its body's length is in doubt: never read it */
        return;
    }
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

/* Never called: libmicrohttpd sends no body with a 304; this only makes its size unknown. */
/* NOLINTNEXTLINE(readability-non-const-parameter): the type MHD_ContentReaderCallback */
static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls;
    (void)pos;
    (void)buf;
    (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct exchange *x)
{
    struct http_reply *rp = &x->rp;
    if (!rp->status)
        http_reply_error(rp, 500, "internal", "The handler produced no reply.");
    struct MHD_Response *resp;
    if (rp->status == 304) {
        /* libmicrohttpd 0.9.75 gives a 304 the Content-Length of its response, 0 from an empty
         * buffer (wrong: the page is not empty), or, for an unknown size, "Transfer-Encoding:
         * chunked" and a stray last chunk. The true length (RFC 9110 8.6 allows it) breaks
         * Node's fetch (undici drops the connection: no body of that length came). Only an
         * unknown size without chunking sends neither header, and that closes the connection
         * after the reply (MHD_RF_HEAD_ONLY_RESPONSE, which keeps it open, is 0.9.77+); behind a
         * proxy that is the proxy's upstream connection only. */
        if (rp->fd > 0)
            close(rp->fd);
        rp->fd = 0;
        buf_free(&rp->body);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64, no_body, NULL, NULL);
        if (resp)
            MHD_set_response_options(resp, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
    } else if (rp->fd > 0) {
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

/* A refused request's body that is read and dropped rather than cut off (see on_request). */
#define DRAIN_MAX (8L * 1024L * 1024L)

static int drainable(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    long long n = cl ? strtoll(cl, NULL, 10) : -1;
    return !te && n > 0 && n <= DRAIN_MAX;
}

static int has_body(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    return (cl && strtoll(cl, NULL, 10) > 0) || te;
}

/* ---------------------------------------------------------------- async steps */

/* The event threads never block (see http.h): a request that waits for Redis or a timer is
 * suspended while its async step runs on the same thread, and resumed when it is done. */

/* Suspend x for its async step. Returns 0, or -1 when rankd is stopping (x is not suspended).
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

/* 1 while x's async step may still be running: suspended and not resumed. MHD 0.9.75 goes on
 * calling the handler with the rest of a chunked body after the connection is suspended; such
 * calls must neither consume data nor start more work. */
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

static void loop_wake(struct loop *l);

/* The loop whose thread runs now (NULL elsewhere). */
static __thread struct loop *this_loop;

/* Resume the connection; x may be freed as soon as this starts. Without an internal polling
 * thread MHD has no channel of its own to notice a resume, and applies resumes only when the
 * daemon runs next: `resumed` makes the loop run the daemon again before it waits (another
 * thread, which never happens now, would have to wake the loop). */
static void resume_exchange(struct exchange *x)
{
    struct http_server *srv = x->srv;
    struct loop *l = x->loop;
    MHD_resume_connection(x->conn);
    if (l != this_loop)
        loop_wake(l);
    else
        l->resumed = 1;                   /* the loop runs the daemon again before it waits */
    atomic_fetch_sub(&srv->suspended, 1); /* last: http_stop frees the loops once it is 0 */
}

struct store_async *http_async_store(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    return x->loop && x->loop == this_loop ? x->loop->hits : NULL;
}

struct http_timer *http_timer_after(struct http_async *a, int ms, void (*fn)(void *arg), void *arg)
{
    struct exchange *x = (struct exchange *)a;
    struct loop *l = x ? x->loop : this_loop;
    struct http_timer *t = l && l == this_loop ? calloc(1, sizeof(*t)) : NULL;
    if (!t)
        return NULL;
    t->at_ms = util_now_ms() + (ms > 0 ? ms : 0);
    t->fn = fn;
    t->arg = arg;
    struct http_timer **pp = &l->timers;
    while (*pp && (*pp)->at_ms <= t->at_ms) /* after the ones due as soon: first set, first run */
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t;
}

/* Run the timers that are due; the milliseconds until the next one, or -1. */
static int run_timers(struct loop *l)
{
    int64_t now = util_now_ms();
    while (l->timers && l->timers->at_ms <= now) {
        struct http_timer *t = l->timers;
        l->timers = t->next;
        void (*fn)(void *) = t->fn;
        void *arg = t->arg;
        free(t);
        fn(arg); /* may add timers */
    }
    if (!l->timers)
        return -1;
    int64_t wait = l->timers->at_ms - now;
    return wait > 60000 ? 60000 : (int)wait;
}

struct store_async *http_async_store_writes(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    return x->loop && x->loop == this_loop ? x->loop->writes : NULL;
}

struct store_async *http_async_store_cache(struct http_async *a, int writes)
{
    struct exchange *x = (struct exchange *)a;
    if (!x->loop || x->loop != this_loop)
        return NULL;
    return writes ? x->loop->cache_writes : x->loop->cache_hits;
}

void http_async_done(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    x->replied = 1;
    resume_exchange(x);
}

void http_stream_done(struct http_async *a)
{
    resume_exchange((struct exchange *)a);
}

/* Suspend x for work already started on this thread (it cannot be undone when rankd is
 * stopping: the stop waits for it, as for any suspended request). */
static void suspend_started(struct exchange *x)
{
    struct http_server *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    x->away = 1;
    MHD_suspend_connection(x->conn);
}

/* rankd stops in the middle of a streamed body: the route says how far it got (a client must
 * resume without applying a line twice), or a plain 503. */
static void stream_stopped(struct exchange *x)
{
    if (x->route->stream_stopped)
        x->route->stream_stopped(&x->rq, &x->rp);
    else
        reply_stopping(&x->rp);
}

/* A chunk of an NDJSON body, on the event thread: a full chunk of lines is written while the
 * connection is suspended. */
static enum MHD_Result stream_chunk(struct exchange *x, const char *data, size_t *len)
{
    if (atomic_load(&x->srv->stopping)) {
        stream_stopped(x);
        *len = 0;
        return MHD_YES;
    }
    size_t used = 0;
    int rc = x->route->stream_async(&x->rq, data, *len, &used, &x->rp, (struct http_async *)x);
    *len = rc < 0 ? 0 : *len - used; /* an error: the rest is read and dropped */
    if (rc == 1)
        suspend_started(x);
    return MHD_YES;
}

/* The whole request is in: answer from memory, or run the route's async step. */
static enum MHD_Result dispatch(struct MHD_Connection *c, struct exchange *x)
{
    const struct route *r = x->route;
    x->rq.deadline_ms = util_now_ms() + x->srv->request_timeout_ms;
    if (r->quick && r->quick(&x->rq, &x->rp))
        return send_reply(c, x);
    if (!r->async) { /* a route table bug: every route has a step that answers */
        http_reply_error(&x->rp, 500, "internal", "The route has no step that answers.");
        return send_reply(c, x);
    }
    if (suspend_exchange(x)) {
        reply_stopping(&x->rp);
        return send_reply(c, x);
    }
    r->async(&x->rq, &x->rp, (struct http_async *)x);
    return MHD_YES;
}

/* The request callback. libmicrohttpd 0.9.75 answers some malformed requests itself, before
 * this is ever called and with compiled-in HTML bodies it has no hook to replace (400 request or
 * header line, Content-Length value or chunk syntax; 413 Content-Length past 2^64 or chunk size;
 * 414/431 past CONNECTION_MEMORY_BYTES; 505): README, "HTTP framing". */
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
        x->loop = this_loop;
        x->conn = c;
        *ctx = x;
        begin(cls, c, url, method, x);
        /* Refused before a body arrives. A body of a known length up to DRAIN_MAX is read and
         * dropped, and the error goes out after it: answered mid-upload, MHD closes a socket
         * with unread data, the kernel resets the connection, and the client may never see the
         * reply (seen as a failed upload instead of the 413). A larger or unknown-length body:
         * answer now and close. Without a body, answer on the next call (keep-alive). */
        if (x->rp.status && has_body(c) && (x->no_drain || !drainable(c)))
            return send_reply(c, x);
        return MHD_YES;
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
    if (x->rq.stream_state && x->route && x->route->stream_free)
        x->route->stream_free(x->rq.stream_state);
    buf_free(&x->rp.body);
    if (x->rp.fd > 0)
        close(x->rp.fd);
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

/* ---------------------------------------------------------------- accepting */

/*
 * rankd accepts connections itself and gives each to the event thread with the fewest
 * connections (MHD_add_connection on that thread), because the kernel wakes whichever thread it
 * likes: left to MHD, one thread of two was seen holding 53 of 64 benchmark connections, and
 * their requests queued behind each other while the other thread idled. Each event thread runs
 * a daemon of its own and MHD counts connections per daemon, so rankd also enforces
 * --max-connections and --max-connections-per-ip for the whole process: reserved at accept,
 * given back when MHD reports the connection closed (or when MHD_add_connection refused it).
 */

/* Set while MHD_add_connection runs on this thread: its STARTED notification is counted. */
static __thread int adding;

/* The address bytes of an IPv4 or IPv6 peer; 0 for other families (not limited). */
static size_t addr_bytes(const struct sockaddr *sa, unsigned char out[16])
{
    if (sa && sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

static size_t addr_hash(const unsigned char *a, size_t n)
{
    size_t h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + a[i];
    return h % IP_BUCKETS;
}

/* Count one more connection from sa's address: 0, or -1 at the per-address limit. */
static int ip_take(struct http_server *srv, const struct sockaddr *sa)
{
    unsigned char a[16];
    size_t n = addr_bytes(sa, a);
    if (!srv->max_per_ip || !n)
        return 0;
    size_t b = addr_hash(a, n);
    int rc = 0;
    pthread_mutex_lock(&srv->ip_lock);
    struct ip_count *e = srv->ips[b];
    while (e && !(e->len == n && memcmp(e->addr, a, n) == 0))
        e = e->next;
    if (!e && (e = calloc(1, sizeof(*e))) != NULL) {
        memcpy(e->addr, a, n);
        e->len = n;
        e->next = srv->ips[b];
        srv->ips[b] = e;
    }
    if (!e || e->count >= srv->max_per_ip)
        rc = -1;
    else
        e->count++;
    pthread_mutex_unlock(&srv->ip_lock);
    return rc;
}

static void ip_give(struct http_server *srv, const struct sockaddr *sa)
{
    unsigned char a[16];
    size_t n = addr_bytes(sa, a);
    if (!srv->max_per_ip || !n)
        return;
    size_t b = addr_hash(a, n);
    pthread_mutex_lock(&srv->ip_lock);
    for (struct ip_count **pp = &srv->ips[b]; *pp; pp = &(*pp)->next) {
        struct ip_count *e = *pp;
        if (e->len != n || memcmp(e->addr, a, n) != 0)
            continue;
        if (--e->count <= 0) {
            *pp = e->next;
            free(e);
        }
        break;
    }
    pthread_mutex_unlock(&srv->ip_lock);
}

static void give_back(struct http_server *srv, const struct sockaddr *sa)
{
    ip_give(srv, sa);
    atomic_fetch_sub(&srv->open, 1);
}

/* Reserve a connection slot for a peer: 0, or -1 (stopping, the limit, the per-address limit). */
static int admit(struct http_server *srv, const struct sockaddr *sa)
{
    if (atomic_load(&srv->stopping))
        return -1;
    int open = atomic_load(&srv->open);
    for (;;) {
        if (open >= srv->max_connections)
            return -1;
        if (atomic_compare_exchange_weak(&srv->open, &open, open + 1))
            break;
    }
    if (ip_take(srv, sa)) {
        atomic_fetch_sub(&srv->open, 1);
        return -1;
    }
    return 0;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_ctx = this_loop; /* the loop whose load it is */
        adding = 0;              /* reserved at accept */
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    give_back(srv, ci ? ci->client_addr : NULL);
    struct loop *l = *socket_ctx;
    if (l)
        atomic_fetch_sub(&l->load, 1);
}

/* Serve an admitted socket on this thread's loop l. */
static void add_connection(struct loop *l, struct handoff *h)
{
    adding = 1;
    MHD_add_connection(l->daemon, h->fd, (const struct sockaddr *)&h->addr, h->len);
    if (adding) { /* refused (out of memory); MHD closed the socket */
        adding = 0;
        give_back(l->srv, (const struct sockaddr *)&h->addr);
        atomic_fetch_sub(&l->load, 1);
    }
}

static struct loop *least_loaded(struct http_server *srv, struct loop *self)
{
    struct loop *best = self;
    int least = atomic_load(&self->load);
    for (int i = 0; i < srv->nloops; i++) {
        int n = atomic_load(&srv->loops[i].load);
        if (n < least) {
            least = n;
            best = &srv->loops[i];
        }
    }
    return best;
}

static void hand_over(struct loop *to, struct handoff *h)
{
    struct handoff *copy = malloc(sizeof(*copy));
    if (!copy) {
        close(h->fd);
        give_back(to->srv, (const struct sockaddr *)&h->addr);
        atomic_fetch_sub(&to->load, 1);
        return;
    }
    *copy = *h;
    pthread_mutex_lock(&to->inbox_lock);
    copy->next = to->inbox;
    to->inbox = copy;
    pthread_mutex_unlock(&to->inbox_lock);
    loop_wake(to);
}

/* Sockets other loops handed to l. */
static void take_inbox(struct loop *l)
{
    pthread_mutex_lock(&l->inbox_lock);
    struct handoff *h = l->inbox;
    l->inbox = NULL;
    pthread_mutex_unlock(&l->inbox_lock);
    while (h) {
        struct handoff *next = h->next;
        add_connection(l, h);
        free(h);
        h = next;
    }
}

static void pause_listen(struct loop *l, int pause)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = TAG_LISTEN};
    if (pause) {
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->srv->listen_fd, NULL);
        l->listen_paused_until = util_now_ms() + EMFILE_PAUSE_MS;
    } else if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->srv->listen_fd, &ev) == 0) {
        l->listen_paused_until = 0;
    }
}

/* The listening socket is readable: accept, admit, and place each connection. */
static void accept_new(struct loop *l)
{
    struct http_server *srv = l->srv;
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        struct handoff h = {.len = sizeof(h.addr)};
        h.fd = accept4(srv->listen_fd, (struct sockaddr *)&h.addr, &h.len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (h.fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                static _Atomic int64_t logged_ms;
                int64_t now = util_now_ms(), last = atomic_load(&logged_ms);
                if (now - last >= 10000 && atomic_compare_exchange_strong(&logged_ms, &last, now))
                    log_warn("accept: %s; pausing accepts %d ms at a time (logged every 10 s)",
                             strerror(errno), EMFILE_PAUSE_MS);
                pause_listen(l, 1); /* level-triggered: it would spin otherwise */
            }
            return;
        }
        if (admit(srv, (const struct sockaddr *)&h.addr)) {
            close(h.fd);
            continue;
        }
        struct loop *to = least_loaded(srv, l);
        atomic_fetch_add(&to->load, 1);
        if (to == l)
            add_connection(l, &h);
        else
            hand_over(to, &h);
    }
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

/* The listening socket: every loop polls it (EPOLLEXCLUSIVE) and accepts (accept_new). */
static int listen_on(const struct sockaddr_storage *ss, int v6, int *err)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
        bind(fd, (const struct sockaddr *)ss, len) || listen(fd, SOMAXCONN)) {
        *err = errno == EADDRINUSE || errno == EACCES ? -errno : -EADDRINUSE;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len))
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* One event thread: wait on the daemon's epoll set, the Redis connection and the wake eventfd;
 * then, in this order, take Redis replies (they resume their connections), run the daemon
 * (new requests, resumed replies, timeouts) and send the Redis commands the requests queued,
 * all of this iteration's in one write. */
static void *loop_main(void *arg)
{
    struct loop *l = arg;
    this_loop = l;
    if (l->hits)
        store_async_start(l->hits);
    if (l->writes)
        store_async_start(l->writes);
    struct store_async *const cache[] = {l->cache_hits, l->cache_writes};
    for (int i = 0; i < 2; i++)
        if (cache[i])
            store_async_start(cache[i]);
    struct epoll_event ev[LOOP_EVENTS];
    while (!atomic_load(&l->srv->quit)) {
        int redis_ms = l->hits ? store_async_tick(l->hits) : -1; /* may resume connections */
        int write_ms = l->writes ? store_async_tick(l->writes) : -1;
        if (write_ms >= 0 && (redis_ms < 0 || write_ms < redis_ms))
            redis_ms = write_ms;
        for (int i = 0; i < 2; i++) {
            int ms = cache[i] ? store_async_tick(cache[i]) : -1;
            if (ms >= 0 && (redis_ms < 0 || ms < redis_ms))
                redis_ms = ms;
        }
        int timer_ms = run_timers(l);
        if (timer_ms >= 0 && (redis_ms < 0 || timer_ms < redis_ms))
            redis_ms = timer_ms;
        MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
        int wait_ms = MHD_get_timeout(l->daemon, &mhd_ms) == MHD_YES
                          ? (mhd_ms > 60000 ? 60000 : (int)mhd_ms)
                          : 60000;
        if (redis_ms >= 0 && redis_ms < wait_ms)
            wait_ms = redis_ms;
        if (l->listen_paused_until && wait_ms > EMFILE_PAUSE_MS)
            wait_ms = EMFILE_PAUSE_MS;
        if (l->resumed) /* resumed on this thread since the daemon last ran */
            wait_ms = 0;
        int n = epoll_wait(l->epfd, ev, LOOP_EVENTS, wait_ms);
        for (int i = 0; i < n; i++) {
            if (ev[i].data.u64 == TAG_REDIS) {
                store_async_ready(l->hits, ev[i].events);
            } else if (ev[i].data.u64 == TAG_REDIS_W) {
                store_async_ready(l->writes, ev[i].events);
            } else if (ev[i].data.u64 == TAG_CACHE || ev[i].data.u64 == TAG_CACHE_W) {
                store_async_ready(cache[ev[i].data.u64 == TAG_CACHE_W], ev[i].events);
            } else if (ev[i].data.u64 == TAG_LISTEN) {
                accept_new(l);
            } else if (ev[i].data.u64 == TAG_WAKE) {
                uint64_t v;
                ssize_t r = read(l->wakefd, &v, sizeof(v));
                (void)r;
                take_inbox(l);
            }
        }
        if (l->listen_paused_until && util_now_ms() >= l->listen_paused_until)
            pause_listen(l, 0);
        if (l->hits)
            store_async_tick(l->hits);
        if (l->writes)
            store_async_tick(l->writes);
        for (int i = 0; i < 2; i++)
            if (cache[i])
                store_async_tick(cache[i]);
        run_timers(l);
        l->resumed = 0;
        MHD_run(l->daemon);
        if (l->hits)
            store_async_flush(l->hits);
        if (l->writes)
            store_async_flush(l->writes);
        for (int i = 0; i < 2; i++)
            if (cache[i])
                store_async_flush(cache[i]);
    }
    return NULL;
}

static void loop_wake(struct loop *l)
{
    uint64_t one = 1;
    ssize_t w = write(l->wakefd, &one, sizeof(one));
    (void)w;
}

static int epoll_add(int epfd, int fd, uint64_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Set up loop l (not started). Returns 0 or a negative errno; loop_close undoes a partial set-up.
 */
static int loop_open(struct http_server *srv, struct loop *l, const struct http_options *o)
{
    l->srv = srv;
    pthread_mutex_init(&l->inbox_lock, NULL);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->epfd < 0 || l->wakefd < 0)
        return -errno;
    /* rankd accepts (accept_new) and enforces the connection limits; MHD's are per daemon. */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_TURBO | MHD_USE_ERROR_LOG;
    l->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections + 16,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONNECTION_MEMORY_BYTES, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
    if (!l->daemon)
        return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    struct epoll_event lev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = TAG_LISTEN};
    if (!info || epoll_add(l->epfd, info->epoll_fd, TAG_MHD) ||
        epoll_add(l->epfd, l->wakefd, TAG_WAKE) ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, srv->listen_fd, &lev))
        return -EIO;
    if (o->hits && !(l->hits = store_async_new(o->hits, l->epfd, TAG_REDIS, l->wakefd)))
        return -ENOMEM;
    if (o->writes && !(l->writes = store_async_new(o->writes, l->epfd, TAG_REDIS_W, l->wakefd)))
        return -ENOMEM;
    if (o->cache_hits &&
        !(l->cache_hits = store_async_new(o->cache_hits, l->epfd, TAG_CACHE, l->wakefd)))
        return -ENOMEM;
    if (o->cache_writes &&
        !(l->cache_writes = store_async_new(o->cache_writes, l->epfd, TAG_CACHE_W, l->wakefd)))
        return -ENOMEM;
    return 0;
}

/* After the loop's thread has returned (or never started). */
static void loop_close(struct loop *l)
{
    while (l->timers) { /* their requests have completed: nothing is waiting for them */
        struct http_timer *t = l->timers;
        l->timers = t->next;
        free(t);
    }
    store_async_free(l->hits); /* nothing is pending: no connection is suspended */
    store_async_free(l->writes);
    store_async_free(l->cache_hits);
    store_async_free(l->cache_writes);
    for (struct handoff *h = l->inbox, *next; h; h = next) { /* handed over, never added */
        next = h->next;
        close(h->fd);
        give_back(l->srv, (const struct sockaddr *)&h->addr);
        free(h);
    }
    l->inbox = NULL;
    if (l->daemon)
        MHD_stop_daemon(l->daemon);
    if (l->epfd > 0)
        close(l->epfd);
    if (l->wakefd > 0)
        close(l->wakefd);
    if (l->srv)
        pthread_mutex_destroy(&l->inbox_lock);
}

static void server_free(struct http_server *srv)
{
    atomic_store(&srv->quit, 1);
    for (int i = 0; i < srv->nloops; i++)
        if (srv->loops[i].running) {
            loop_wake(&srv->loops[i]);
            pthread_join(srv->loops[i].thread, NULL);
        }
    for (int i = 0; i < srv->nloops; i++)
        loop_close(&srv->loops[i]);
    free(srv->loops);
    if (srv->listen_fd >= 0)
        close(srv->listen_fd);
    for (int b = 0; b < IP_BUCKETS; b++)
        while (srv->ips[b]) {
            struct ip_count *e = srv->ips[b];
            srv->ips[b] = e->next;
            free(e);
        }
    pthread_mutex_destroy(&srv->ip_lock);
    free(srv);
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
    pthread_mutex_init(&srv->ip_lock, NULL);
    srv->app = app;
    srv->max_connections = o->max_connections;
    srv->max_per_ip = o->max_per_ip;
    srv->request_timeout_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 1000;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    srv->nloops = o->event_threads > 0 ? o->event_threads
                                       : (int)(cores >= 16  ? 8
                                               : cores >= 2 ? cores / 2
                                                            : 1);
    srv->loops = calloc((size_t)srv->nloops, sizeof(*srv->loops));
    srv->listen_fd = -1;
    *err = !srv->loops ? -ENOMEM : 0;
    int nloops = srv->nloops;
    srv->nloops = 0;
    if (!*err && (srv->listen_fd = listen_on(&ss, v6, err)) >= 0)
        for (; srv->nloops < nloops && !*err; srv->nloops++)
            *err = loop_open(srv, &srv->loops[srv->nloops], o);
    for (int i = 0; !*err && i < srv->nloops; i++) {
        struct loop *l = &srv->loops[i];
        *err = -pthread_create(&l->thread, NULL, loop_main, l);
        l->running = !*err;
    }
    if (*err) {
        http_stop(srv); /* loops already running may hold suspended requests */
        return NULL;
    }
    srv->port = bound_port(srv->listen_fd);
    return srv;
}

int http_event_threads(const struct http_server *srv, int *connections, int *hit_connected,
                       int *write_connected, int max)
{
    int n = srv->nloops < max ? srv->nloops : max;
    for (int i = 0; i < n; i++) {
        connections[i] = atomic_load(&srv->loops[i].load);
        hit_connected[i] = srv->loops[i].hits && store_async_connected(srv->loops[i].hits);
        write_connected[i] = srv->loops[i].writes && store_async_connected(srv->loops[i].writes);
    }
    return n;
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
     * Past STOP_WAIT_MS only the suspended ones are waited for. The loops run meanwhile. */
    /* Not MHD_quiesce_daemon: accept_new refuses new connections once `stopping` is set
     * (in 0.9.75 quiesce raced the epoll threads over the listen socket and aborted). */
    atomic_store(&srv->stopping, 1);
    for (int waited = 0; atomic_load(&srv->in_work) > 0 && waited < STOP_WAIT_MS; waited++)
        util_sleep_ms(1);
    while (atomic_load(&srv->suspended) > 0)
        util_sleep_ms(1);
    server_free(srv);
}
