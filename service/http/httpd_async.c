/* httpd.c -- the HTTP exchange over libmicrohttpd: requests, bodies, suspend and resume,
 * replies; see httpd.h. */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <microhttpd.h>

#include "access.h"
#include "auth.h"
#include "cidr.h"
#include "cors.h"
#include "gzip.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "request.h"
#include "route.h"
#include "static_files.h"
#include "store_async.h"

#define CONNECTION_TIMEOUT_S 30
/* MHD zeroes a connection's whole memory pool after every request: keep it small. It holds one
 * request's line and headers, the reply headers and the read buffer (body chunks). */
#define CONNECTION_MEMORY_BYTES (16 * 1024)
/* A query name or value, decoded: the request line cannot be longer anyway (a list of 100 ids
 * needs more than a few bytes). */
#define ARG_BYTES_MAX ((size_t)CONNECTION_MEMORY_BYTES)
/* Longest wait at shutdown for requests in work to finish sending (a client that stalls its
 * upload or never reads its reply must not hold the exit); suspended ones are always waited for
 * (bounded by their deadlines): MHD must not stop with them. */
#define STOP_WAIT_MS 5000
#define CUT_LINGER_MS 200 /* a connection cut for its headers closes this long after its 408 */
/* an upload answered in the middle of its body (answer_mid_body) closes this long after the
 * answer, or when its client closes: the time to read it while still sending */
#define UPLOAD_CUT_LINGER_MS 1000

/* Where a connection is in its requests, for the header deadline (httpd_options). */
enum conn_phase {
    PHASE_HEADERS, /* a request line and headers are arriving (the deadline runs) */
    PHASE_REQUEST, /* the headers are in: the request's own deadline governs */
    PHASE_IDLE,    /* between requests (keep-alive): MHD's idle timeout governs */
    PHASE_CUT,     /* answered 408: closed CUT_LINGER_MS after it */
};

struct exchange;

/* One open connection of a daemon (MHD's socket context), on the daemon's thread only. */
struct conn_clock {
    struct conn_clock *prev, *next;
    int64_t since_ms; /* when its phase began */
    int phase;        /* enum conn_phase */
    int linger_ms;    /* PHASE_CUT: closed this long after it began (0: CUT_LINGER_MS) */
    int fd;
    struct exchange *x; /* its request from the first call to on_completed, or NULL */
};

#define GZ_CACHE_ENTRIES 64 /* gzip forms kept per event thread, by ETag */

/* The gzip form of a reply body with a strong ETag (a page's version): compressed once per event
 * thread, so hits of that version never compress again. */
struct gz_entry {
    char etag[64];
    size_t identity_len; /* the identity body's length (with the ETag, the key) */
    struct buf gz;
    uint64_t used; /* the thread's gz_clock when last used: the least recent goes first */
};

/* One event thread's daemon: libmicrohttpd in external-epoll mode on the connections its loop is
 * given, and the loop's Redis connections for the async steps. */
struct httpd_thread {
    struct httpd *srv;
    struct loop *loop;
    struct MHD_Daemon *daemon;
    struct loop_watch *watch;   /* the daemon's epoll fd in the loop */
    struct store_async *reads;  /* NULL without a read connection */
    struct store_async *writes; /* writes (a connection of their own: a write held by Redis, as
                                 * under CLIENT PAUSE WRITE, must not hold up the reads
                                 * pipelined behind it); NULL without one */
    struct store_async *cache_reads, *cache_writes; /* the same to a cache Redis of its own
                                                     * (--cache-redis), else NULL */
    int index;                                      /* 0.., for /metrics and the debug log */
    struct conn_clock *conns;                       /* its open connections (the header deadline) */
    struct gzip_stream *gz_keep, *gz_fast; /* deflate streams (GZIP_LEVEL, _FAST), made lazily */
    struct gz_entry gz[GZ_CACHE_ENTRIES];
    uint64_t gz_clock;
    int sweeping;       /* a sweep timer is set */
    atomic_int active;  /* connections with a request in progress (for /metrics) */
    atomic_int waiting; /* of those, suspended: for Redis or a timer */
};

struct httpd {
    struct httpd_options o;
    struct httpd_thread threads[HTTP_EVENT_THREADS_MAX];
    int nthreads;
    atomic_int suspended; /* requests suspended for their async step (Redis, timers) */
    atomic_int in_work;   /* requests suspended at least once and not completed yet */
    atomic_int stopping;
};

/* Per-request state, created on the first callback and freed in on_completed; touched only by
 * the event thread that owns the connection. */
struct exchange {
    struct http_request rq;
    struct http_reply rp;
    const struct route *route;
    struct httpd *srv;
    struct httpd_thread *thread; /* the event thread that owns the connection */
    struct MHD_Connection *conn;
    int64_t start_us;
    int replied;                /* the async step is done: send rp on the next callback */
    int handed_off;             /* counted in srv->in_work */
    int away;                   /* suspended and perhaps not resumed yet */
    int parked;                 /* complete, its async step put off by one call (dispatch) */
    int cut;                    /* answered in the middle of its body (answer_mid_body) */
    int queued;                 /* a response was queued */
    int no_drain;               /* refused for its framing: answered before its body, then closed */
    int is_static;              /* a file of the web page (served without a route) */
    uint64_t bytes;             /* body bytes of the queued reply */
    struct access_fault *fault; /* a 5xx's code and cause (access.h), or NULL */
    char request_id[ACCESS_ID_MAX + 1]; /* X-Request-Id, given or made (access.h) */
    char client[CIDR_ADDR_MAX]; /* who asked: the peer, or behind a trusted proxy the client */
    const char *cors_origin;    /* Access-Control-Allow-Origin of a cross-origin read, or NULL */
    int cors_vary;          /* 1: the reply depends on Origin (a list of origins): Vary: Origin */
    int gzip_ok;            /* the client accepts gzip (Accept-Encoding) */
    int inm_gz;             /* its If-None-Match named a gzip form ("...-gz") */
    char inm[72];           /* that If-None-Match without "-gz": what the handlers compare */
    struct http_body *body; /* the streamed body being sent (rp.stream), or NULL */
};

/* A streamed body (http_body_source) as libmicrohttpd sends it: a callback response whose reader
 * suspends the connection while the source has nothing ready. Freed with the response; the
 * exchange and the body forget each other when either goes first. */
struct http_body {
    struct exchange *x; /* NULL once the request completed */
    struct http_body_source src;
    int waiting; /* a read returned 0: the connection is suspended until http_body_ready */
};

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
    /* decoding never makes a part longer: each gets its own length (and a NUL) */
    size_t klen = strlen(key), vlen = value ? strlen(value) : 0;
    char *name = malloc(klen + 1), *val = malloc(vlen + 1), *raw = strdup(value ? value : "");
    size_t n1 = 0, n2 = 0;
    int rc = (!name || !val || !raw) ? -ENOMEM : 0;
    if (!rc && (klen > ARG_BYTES_MAX || vlen > ARG_BYTES_MAX))
        rc = -EINVAL;
    if (!rc)
        rc = request_arg_decode(key, klen, name, klen + 1, &n1);
    if (!rc)
        rc = request_arg_decode(value ? value : "", vlen, val, vlen + 1, &n2);
    if (rc) {
        free(name);
        free(val);
        free(raw);
        w->bad = rc == -ENOMEM ? rc : -EINVAL;
        return MHD_NO;
    }
    rq->args[rq->nargs].name = name;
    rq->args[rq->nargs].raw = raw;
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
static int serve_static(const struct httpd *srv, const char *method, const char *url,
                        struct exchange *x)
{
    const char *root = srv->o.static_root;
    if (!root[0] || (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0))
        return -ENOENT;
    struct static_file f;
    int rc = static_files_open(root, url, &f);
    if (rc == -EINVAL) {
        http_reply_errno_in(&x->rp, HTTP_ERRNO_FILE, rc, NULL);
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

/* 0 when the request's Host is as RFC 9112 3.2 wants it: one Host header (none in HTTP/1.0), its
 * value "" or uri-host[:port] (reg-name characters, or an IP literal in brackets); else the reply
 * is 400 invalid_host. */
static int check_host(struct MHD_Connection *c, const char *version, struct http_reply *rp)
{
    struct header_count host = {.name = "Host"};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &host);
    int v11 = strcmp(version, MHD_HTTP_VERSION_1_0) != 0;
    int ok = host.n == 1 || (host.n == 0 && !v11);
    for (const char *p = host.n == 1 ? host.first : ""; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             strchr("-._~%!$&'()*+,;=:[]", *p) != NULL;
    if (ok)
        return 0;
    http_reply_error(rp, 400, "invalid_host",
                     host.n == 0  ? "The request has no Host header (required since HTTP/1.1)."
                     : host.n > 1 ? "The request has more than one Host header."
                                  : "The Host header is not a host[:port].");
    return -1;
}

/* CORS (cors.h): a read from an allowed origin gets its headers when it is sent (send_reply); a
 * preflight is answered here: returns 1 when x is answered. */
static int cross_origin(struct httpd *srv, struct MHD_Connection *c, const char *method,
                        struct exchange *x)
{
    const struct cors *cors = srv->o.cors;
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!cors || !cors_enabled(cors))
        return 0;
    /* Every reply says how it depends on Origin, whether or not this request had an allowed one,
     * so a shared cache never gives one origin's reply to another: with a list, Vary: Origin;
     * with "*", reads are the same for everyone (the header even without Origin). */
    x->cors_vary = !cors->any;
    int read = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (read && cors->any)
        x->cors_origin = "*";
    if (!origin)
        return 0;
    if (read) {
        x->cors_origin = cors_allow_origin(cors, origin);
        return 0;
    }
    const char *want =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Method");
    if (strcmp(method, "OPTIONS") != 0 || !want)
        return 0; /* a cross-origin write: no CORS headers, the browser keeps the reply from it */
    const char *allow = cors_allow_origin(cors, origin);
    if (!allow || !cors_method_offered(want)) {
        http_reply_error(&x->rp, 403, "cors_not_allowed",
                         "Cross-origin requests may only read (GET, HEAD), from an origin in "
                         "rankd's --cors-origin.");
        return 1;
    }
    x->rp.status = 204;
    http_reply_header(&x->rp, "Access-Control-Allow-Origin", allow);
    http_reply_header(&x->rp, "Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
    http_reply_header(&x->rp, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
    http_reply_header(&x->rp, "Access-Control-Max-Age", CORS_MAX_AGE_S);
    return 1;
}

/* The X-Forwarded-For values of a request, joined with ',' (cut at the buffer's end). */
struct xff_join {
    char text[1024];
    size_t len;
    int n;
};

static enum MHD_Result join_xff(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    struct xff_join *j = cls;
    if (strcasecmp(key, "X-Forwarded-For") != 0 || !value)
        return MHD_YES;
    int k = snprintf(j->text + j->len, sizeof(j->text) - j->len, "%s%s", j->n++ ? "," : "", value);
    j->len =
        k < 0 || j->len + (size_t)k >= sizeof(j->text) ? sizeof(j->text) - 1 : j->len + (size_t)k;
    return MHD_YES;
}

/* Who asked, into out: the peer's address, or behind a trusted proxy the client its
 * X-Forwarded-For names (cidr_client). */
static void client_of(const struct httpd *srv, struct MHD_Connection *c, char out[CIDR_ADDR_MAX])
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    char peer[CIDR_ADDR_MAX] = "";
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, peer,
                  sizeof(peer));
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, peer,
                  sizeof(peer));
    struct xff_join j = {.len = 0};
    const struct cidr_list *t = srv->o.trusted_proxies;
    if (t && t->n)
        MHD_get_connection_values(c, MHD_HEADER_KIND, join_xff, &j);
    cidr_client(peer[0] ? peer : NULL, j.n ? j.text : NULL, t, out);
}

static void begin(struct httpd *srv, struct MHD_Connection *c, const char *url, const char *method,
                  const char *version, struct exchange *x)
{
    client_of(srv, c, x->client);
    x->rq.app = srv->o.app;
    x->rq.server = srv->o.metrics_of ? srv->o.metrics_of : srv;
    x->rq.method = method;
    x->rq.if_none_match = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    struct header_count idem = {.name = "Idempotency-Key"};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &idem);
    x->rq.idempotency_key = idem.n > 1 ? "" : idem.first; /* twice: refused where honoured */
    x->gzip_ok = gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"));
    size_t inm_n = x->rq.if_none_match ? strlen(x->rq.if_none_match) : 0;
    if (x->gzip_ok && inm_n > 5 && inm_n < sizeof(x->inm) &&
        memcmp(x->rq.if_none_match + inm_n - 4, "-gz\"", 4) == 0) {
        memcpy(x->inm, x->rq.if_none_match, inm_n - 4);
        memcpy(x->inm + inm_n - 4, "\"", 2);
        x->rq.if_none_match = x->inm; /* the handlers know a page's ETag, not its gzip form's */
        x->inm_gz = 1;
    }
    access_request_id(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id"),
                      x->request_id);
    if (check_framing(c, &x->rp)) {
        x->no_drain = 1; /* its body's length is in doubt: never read it */
        return;
    }
    if (check_host(c, version, &x->rp))
        return;
    if (cross_origin(srv, c, method, x))
        return;
    char allow[64];
    int rc = route_match(method, url, &x->rq, &x->route, allow, sizeof(allow));
    if (rc == 0 && !auth_listener_serves(srv->o.listener, x->route)) {
        x->route = NULL; /* not served on this listener: as if it did not exist */
        rc = -ENOENT;
    }
    if (rc == -ENOENT && serve_static(srv, method, url, x) == 0) {
        x->is_static = 1;
        return;
    }
    if (rc) {
        struct http_errno_args a = {.method = method, .path = url, .allow = allow};
        http_reply_errno_in(&x->rp, HTTP_ERRNO_ROUTE, rc, &a);
        if (rc == -EPERM)
            http_reply_header(&x->rp, "Allow", allow);
        return;
    }
    struct arg_walk w = {&x->rq, 0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &w);
    if (w.bad) {
        http_reply_errno_in(&x->rp, HTTP_ERRNO_QUERY, w.bad, NULL);
        return;
    }
    if (auth_request(srv->o.tokens,
                     MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), x->route,
                     &x->rq, &x->rp))
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

/* A header of the reply, or NULL. */
static const char *reply_header(const struct http_reply *rp, const char *name)
{
    for (int i = 0; i < rp->nheaders; i++)
        if (strcmp(rp->headers[i].name, name) == 0)
            return rp->headers[i].value;
    return NULL;
}

static int compressible(const char *type)
{
    return type && (strncmp(type, "application/json", 16) == 0 || strncmp(type, "text/", 5) == 0);
}

/* The gzip form of body[0..len) with strong ETag `etag` from t's cache, compressing and keeping
 * it on a miss; NULL on ENOMEM. */
static const struct buf *gz_kept(struct httpd_thread *t, const char *etag, const char *body,
                                 size_t len)
{
    size_t n = strlen(etag);
    struct gz_entry *victim = &t->gz[0];
    for (int i = 0; i < GZ_CACHE_ENTRIES; i++) {
        struct gz_entry *e = &t->gz[i];
        if (e->identity_len == len && n < sizeof(e->etag) && strcmp(e->etag, etag) == 0) {
            e->used = ++t->gz_clock;
            return &e->gz;
        }
        if (e->used < victim->used)
            victim = e;
    }
    if (n >= sizeof(victim->etag) || (!t->gz_keep && !(t->gz_keep = gzip_stream_new(GZIP_LEVEL))))
        return NULL;
    victim->gz.len = 0;
    if (gzip_stream_compress(t->gz_keep, body, len, &victim->gz)) {
        victim->identity_len = 0;
        victim->etag[0] = '\0';
        return NULL;
    }
    memcpy(victim->etag, etag, n + 1);
    victim->identity_len = len;
    victim->used = ++t->gz_clock;
    return &victim->gz;
}

/* A reply the client may take gzipped (x->gzip_ok), a JSON or text body: with a strong ETag
 * (pages) always, from the thread's kept forms; without one from GZIP_MIN_BYTES, compressed for
 * this reply at GZIP_LEVEL_FAST. Returns 1 when rp's body is now gzip. */
static int encode_reply(struct exchange *x, const char *etag)
{
    struct http_reply *rp = &x->rp;
    if (!x->gzip_ok || rp->status != 200 || rp->fd > 0 || !rp->body.data ||
        !compressible(rp->content_type) || (!etag && rp->body.len < GZIP_MIN_BYTES))
        return 0;
    struct httpd_thread *t = x->thread;
    struct buf gz = {0};
    if (etag && etag[0] == '"') {
        const struct buf *kept = gz_kept(t, etag, rp->body.data, rp->body.len);
        if (!kept || buf_append(&gz, kept->data, kept->len)) {
            buf_free(&gz);
            return 0;
        }
    } else if ((!t->gz_fast && !(t->gz_fast = gzip_stream_new(GZIP_LEVEL_FAST))) ||
               gzip_stream_compress(t->gz_fast, rp->body.data, rp->body.len, &gz)) {
        buf_free(&gz);
        return 0;
    }
    buf_free(&rp->body);
    rp->body = gz;
    return 1;
}

#define BODY_BLOCK_BYTES ((size_t)32 * 1024) /* a streamed body's reads at most */

static void suspend_started(struct exchange *x);
static void resume_exchange(struct exchange *x);
static void arm_sweep(struct httpd_thread *t);
static struct conn_clock *clock_of(struct MHD_Connection *c);

/* libmicrohttpd's content reader of a streamed body, on the event thread. */
/* NOLINTNEXTLINE(readability-non-const-parameter): the type MHD_ContentReaderCallback */
static ssize_t body_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct http_body *b = cls;
    long n = b->x ? b->src.read(b->src.arg, b, buf, max) : -2;
    if (n > 0) {
        b->x->bytes += (uint64_t)n;
        return (ssize_t)n;
    }
    if (n == -1)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < -1)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    b->waiting = 1; /* nothing ready: suspended (from the reader: libmicrohttpd allows it) */
    suspend_started(b->x);
    return 0;
}

void http_body_ready(struct http_body *b)
{
    if (!b->waiting)
        return;
    b->waiting = 0;
    if (b->x)
        resume_exchange(b->x);
}

static void body_free(void *cls)
{
    struct http_body *b = cls;
    if (b->x)
        b->x->body = NULL;
    if (b->src.free)
        b->src.free(b->src.arg);
    free(b);
}

/* The callback response of x's streamed body (rp.stream, handed over), or NULL on ENOMEM (the
 * source is freed then). */
static struct MHD_Response *stream_response(struct exchange *x)
{
    struct http_body *b = calloc(1, sizeof(*b));
    if (!b) {
        x->rp.stream.free(x->rp.stream.arg);
        memset(&x->rp.stream, 0, sizeof(x->rp.stream));
        return NULL;
    }
    b->x = x;
    b->src = x->rp.stream;
    memset(&x->rp.stream, 0, sizeof(x->rp.stream));
    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, BODY_BLOCK_BYTES, body_reader, b, body_free);
    if (!resp) {
        b->x = NULL;
        body_free(b);
        return NULL;
    }
    x->body = b;
    return resp;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct exchange *x)
{
    struct http_reply *rp = &x->rp;
    if (!rp->status)
        http_reply_error(rp, 500, "internal", "The handler produced no reply.");
    x->bytes = rp->status == 304 || strcmp(x->rq.method, "HEAD") == 0 ? 0
               : rp->fd > 0                                           ? rp->fd_size
                                                                      : rp->body.len;
    if (rp->status >= 500 && !x->fault)
        x->fault = access_fault_of(rp->status, rp->body.data, rp->body.len);
    const char *etag = reply_header(rp, "ETag");
    int vary = rp->fd <= 0 && compressible(rp->content_type) && rp->status != 304;
    int gzipped = encode_reply(x, etag);
    /* the gzip form has its own strong ETag (RFC 9110 8.8.3): the page's, "-gz" added; a 304
     * names the form the client asked about */
    int gz_etag = etag && (gzipped || (rp->status == 304 && x->inm_gz));
    if (gzipped && rp->status == 200 && strcmp(x->rq.method, "HEAD") != 0)
        x->bytes = rp->body.len;
    struct MHD_Response *resp;
    if (rp->stream.read && rp->status != 304 && strcmp(x->rq.method, "HEAD") != 0) {
        x->bytes = 0; /* counted as they are sent */
        resp = stream_response(x);
    } else if (rp->status == 304) {
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
    } else if (rp->stream.read) {
        /* HEAD of a streamed body (freed unread with the exchange): its length is unknown, so no
         * Content-Length (RFC 9110 8.6: only the GET's); chunked framing would make 0.9.75 send
         * a last chunk after the header block, so neither, as for a 304 above */
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
    for (int i = 0; i < rp->nheaders; i++) {
        if (gz_etag && rp->headers[i].value == etag) {
            char v[80];
            size_t n = strlen(etag);
            if (n >= 2 && n + 3 < sizeof(v) && etag[n - 1] == '"') {
                memcpy(v, etag, n - 1);
                memcpy(v + n - 1, "-gz\"", 5);
                MHD_add_response_header(resp, "ETag", v);
                continue;
            }
        }
        MHD_add_response_header(resp, rp->headers[i].name, rp->headers[i].value);
    }
    if (gzipped)
        MHD_add_response_header(resp, "Content-Encoding", "gzip");
    if (vary || (rp->status == 304 && etag))
        MHD_add_response_header(resp, "Vary", "Accept-Encoding");
    MHD_add_response_header(resp, "X-Request-Id", x->request_id);
    if (x->cors_origin) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", x->cors_origin);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    }
    if (x->cors_vary)
        MHD_add_response_header(resp, "Vary", "Origin");
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

/* The event threads never block (see httpd.h): a request that waits for Redis or a timer is
 * suspended while its async step runs on the same thread, and resumed when it is done. */

/* Suspend x for its async step. Returns 0, or -1 when rankd is stopping (x is not suspended).
 * The counters go up before `stopping` is read, and httpd_quiesce sets `stopping` before it reads
 * them (both sequentially consistent): either this sees the stop, or the stop waits for x. */
static int suspend_exchange(struct exchange *x)
{
    struct httpd *srv = x->srv;
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
    atomic_fetch_add_explicit(&x->thread->waiting, 1, memory_order_relaxed);
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

/* 1 when x's connection belongs to the calling event thread. */
static int on_own_thread(const struct exchange *x)
{
    return x->thread && x->thread->loop == loop_current();
}

/* Resume the connection; x may be freed as soon as this starts. Without an internal polling
 * thread MHD has no channel of its own to notice a resume, and applies resumes only when the
 * daemon runs next: loop_wake, on the loop's own thread, makes it run the daemon again before it
 * waits. */
static void resume_exchange(struct exchange *x)
{
    struct httpd *srv = x->srv;
    atomic_fetch_sub_explicit(&x->thread->waiting, 1, memory_order_relaxed);
    MHD_resume_connection(x->conn);
    loop_wake(x->thread->loop);
    atomic_fetch_sub(&srv->suspended, 1); /* last: httpd_quiesce returns once it is 0 */
}

struct store_async *http_async_store(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    return on_own_thread(x) ? x->thread->reads : NULL;
}

struct http_timer *http_timer_after(struct http_async *a, int ms, void (*fn)(void *arg), void *arg)
{
    struct exchange *x = (struct exchange *)a;
    struct loop *l = x ? (on_own_thread(x) ? x->thread->loop : NULL) : loop_current();
    if (!l)
        return NULL;
    /* the caller only tests the result: an http_timer is a loop timer under another name */
    return (struct http_timer *)(void *)loop_timer_after(l, ms, fn, arg);
}

struct store_async *http_async_store_writes(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    return on_own_thread(x) ? x->thread->writes : NULL;
}

struct store_async *http_async_store_cache(struct http_async *a, int writes)
{
    struct exchange *x = (struct exchange *)a;
    if (!on_own_thread(x))
        return NULL;
    return writes ? x->thread->cache_writes : x->thread->cache_reads;
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
    struct httpd *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    x->away = 1;
    atomic_fetch_add_explicit(&x->thread->waiting, 1, memory_order_relaxed);
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

/* Send x's reply now, in the middle of its request body, and close the connection after it.
 * libmicrohttpd 0.9.75 takes a reply only once the body is read (MHD_queue_response refuses one
 * before), and a stopping rankd cannot wait for the rest of an upload of any length: the reply is
 * written on the socket here (MHD writes nothing on a connection whose body it is reading), the
 * write side is shut after it, and the connection is cut as for a 408 (cut_late): the rest of
 * the body is read and dropped (answered with unread data, the kernel would reset the connection
 * and the client could lose the reply), and it closes when the client does, or
 * UPLOAD_CUT_LINGER_MS later. Without its socket context (out of memory at its accept), it is
 * answered when the body ends, as before. */
static void answer_mid_body(struct exchange *x)
{
    struct conn_clock *k = clock_of(x->conn);
    struct http_reply *rp = &x->rp;
    if (!k || !rp->status)
        return;
    struct buf out = {0};
    char line[HTTP_HEADER_BYTES + 64];
    int n = snprintf(line, sizeof(line),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: "
                     "close\r\nX-Request-Id: %s\r\n",
                     rp->status, MHD_get_reason_phrase_for((unsigned)rp->status),
                     rp->content_type ? rp->content_type : "application/json", rp->body.len,
                     x->request_id);
    int bad = n < 0 || (size_t)n >= sizeof(line) || buf_append(&out, line, (size_t)n);
    for (int i = 0; !bad && i < rp->nheaders; i++) {
        n = snprintf(line, sizeof(line), "%s: %s\r\n", rp->headers[i].name, rp->headers[i].value);
        bad = n < 0 || (size_t)n >= sizeof(line) || buf_append(&out, line, (size_t)n);
    }
    if (bad || buf_append(&out, "\r\n", 2) ||
        (rp->body.len && buf_append(&out, rp->body.data, rp->body.len))) {
        buf_free(&out);
        return; /* out of memory: answered when the body ends */
    }
    for (size_t sent = 0; sent < out.len;) { /* a few hundred bytes: the socket takes them */
        ssize_t w = send(k->fd, out.data + sent, out.len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0)
            break; /* best effort: the close says the rest */
        sent += (size_t)w;
    }
    buf_free(&out);
    shutdown(k->fd, SHUT_WR);
    x->cut = 1;
    x->queued = 1; /* for the access log */
    x->bytes = rp->body.len;
    if (rp->status >= 500 && !x->fault)
        x->fault = access_fault_of(rp->status, rp->body.data, rp->body.len);
    k->phase = PHASE_CUT;
    k->since_ms = util_now_ms();
    k->linger_ms = UPLOAD_CUT_LINGER_MS;
    arm_sweep(x->thread);
}

/* rankd is stopping: every upload of thread t that waits for more of its body (not suspended for
 * a chunk's write: that one is answered when it is resumed, by stream_chunk) is answered now, with
 * how far it got; an upload whose body is complete is answered as any request. */
static void stop_uploads(struct httpd_thread *t)
{
    for (struct conn_clock *k = t->conns; k; k = k->next) {
        struct exchange *x = k->x;
        if (!x || !x->rq.streaming || x->cut || x->queued || x->replied || x->parked ||
            still_away(x))
            continue;
        if (!x->rp.status)
            stream_stopped(x);
        answer_mid_body(x);
    }
}

/* A chunk of an NDJSON body, on the event thread: a full chunk of lines is written while the
 * connection is suspended. */
static enum MHD_Result stream_chunk(struct exchange *x, const char *data, size_t *len)
{
    if (atomic_load(&x->srv->stopping)) {
        stream_stopped(x);
        answer_mid_body(x);
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

/* The whole request is in: answer from memory, or run the route's async step.
 *
 * The async step starts on the call after the one that completed the request (x->parked).
 * libmicrohttpd 0.9.75 sets a connection's interest (read, write, or wait for the application)
 * after each call, and never while it is suspended: suspended in the call that completes the
 * request, it keeps the read interest it had while the request arrived, and on resuming it reads
 * before it calls back. A client that sent its whole request and shut down its write side
 * (shutdown(SHUT_WR): not an abort, RFC 9112 9.6) has left the end of its stream there: MHD reads
 * it and closes the connection unanswered, whatever was done. Returned to once without a reply,
 * MHD marks the connection as waiting for the application (no read), keeps it in its ready list
 * and calls again on its next run, at once (MHD_get_timeout is 0 meanwhile); suspended from that
 * call, the connection is resumed into a call, not a read. Nothing has started in between, so a
 * connection that closes meanwhile leaves nothing behind. */
static enum MHD_Result dispatch(struct MHD_Connection *c, struct exchange *x)
{
    const struct route *r = x->route;
    if (!x->parked) {
        x->rq.deadline_ms = util_now_ms() + x->srv->o.request_timeout_ms;
        if (r->quick && r->quick(&x->rq, &x->rp))
            return send_reply(c, x);
        if (!r->async) { /* a route table bug: every route has a step that answers */
            http_reply_error(&x->rp, 500, "internal", "The route has no step that answers.");
            return send_reply(c, x);
        }
        x->parked = 1;
        return MHD_YES;
    }
    if (suspend_exchange(x)) {
        if (x->rq.streaming)
            stream_stopped(x); /* how far the upload got */
        else
            reply_stopping(&x->rp);
        return send_reply(c, x);
    }
    r->async(&x->rq, &x->rp, (struct http_async *)x);
    return MHD_YES;
}

/* The request callback. libmicrohttpd 0.9.75 answers some malformed requests itself, before
 * this is ever called and with compiled-in HTML bodies it has no hook to replace (400 request or
 * header line, Content-Length value or chunk syntax; 413 Content-Length past 2^64 or chunk size;
 * 414/431 past CONNECTION_MEMORY_BYTES; 505): docs/api.md, "HTTP framing". */
/* ---------------------------------------------------------------- the header deadline */

static void sweep_headers(void *arg);

/* A sweep soon, unless one is set: it runs while any connection is in PHASE_HEADERS or CUT. */
static void arm_sweep(struct httpd_thread *t)
{
    if (t->sweeping)
        return;
    int every = t->srv->o.header_timeout_ms / 4;
    if (every > 250)
        every = 250;
    t->sweeping = loop_timer_after(t->loop, every, sweep_headers, t) != NULL;
}

static struct conn_clock *clock_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Answer 408 on a connection whose request line and headers are late, before libmicrohttpd has
 * written anything on it (it writes nothing until the headers are in), and stop sending; it
 * closes CUT_LINGER_MS later, once the client has had the time to read the 408. */
static void cut_late(struct httpd_thread *t, struct conn_clock *k, int64_t now)
{
    char json[256], msg[512];
    int jn = snprintf(json, sizeof(json),
                      "{\"error\":{\"code\":\"header_timeout\",\"message\":\"The request line "
                      "and headers did not arrive within %d ms (--header-timeout-ms).\"}}",
                      t->srv->o.header_timeout_ms);
    int n = snprintf(msg, sizeof(msg),
                     "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
                     "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                     jn, json);
    ssize_t sent = send(k->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)sent; /* best effort: the close says the rest */
    shutdown(k->fd, SHUT_WR);
    k->phase = PHASE_CUT;
    k->since_ms = now;
}

static void sweep_headers(void *arg)
{
    struct httpd_thread *t = arg;
    t->sweeping = 0;
    int64_t now = util_now_ms();
    int pending = 0;
    for (struct conn_clock *k = t->conns; k; k = k->next) {
        if (k->phase == PHASE_HEADERS && now - k->since_ms >= t->srv->o.header_timeout_ms)
            cut_late(t, k, now);
        else if (k->phase == PHASE_CUT &&
                 now - k->since_ms >= (k->linger_ms ? k->linger_ms : CUT_LINGER_MS))
            shutdown(k->fd, SHUT_RDWR); /* MHD reads the end, closes, and says so */
        pending |= k->phase == PHASE_HEADERS || k->phase == PHASE_CUT;
    }
    if (pending)
        arm_sweep(t);
}

/* The request line is in (MHD_OPTION_URI_LOG_CALLBACK): on a keep-alive connection, the next
 * request's deadline starts now (a first request's started at the accept). */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)uri;
    struct httpd_thread *t = cls;
    struct conn_clock *k = clock_of(c);
    if (k && k->phase == PHASE_IDLE) {
        k->phase = PHASE_HEADERS;
        k->since_ms = util_now_ms();
        arm_sweep(t);
    }
    return NULL; /* the request's own context is made in on_request */
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **ctx)
{
    struct exchange *x = *ctx;
    if (!x) {
        struct conn_clock *k = clock_of(c);
        if (k && k->phase == PHASE_CUT)
            return MHD_NO; /* answered 408 already: headers that came after all are dropped */
        if (k)
            k->phase = PHASE_REQUEST;
        x = calloc(1, sizeof(*x));
        if (!x)
            return MHD_NO;
        if (k)
            k->x = x;
        x->start_us = util_now_us();
        struct httpd_thread *t = cls;
        x->srv = t->srv;
        x->thread = t;
        atomic_fetch_add_explicit(&t->active, 1, memory_order_relaxed);
        x->conn = c;
        *ctx = x;
        begin(t->srv, c, url, method, version, x);
        /* Refused before a body arrives. A body of a known length up to DRAIN_MAX is read and
         * dropped, and the error goes out after it: answered mid-upload, MHD closes a socket
         * with unread data, the kernel resets the connection, and the client may never see the
         * reply (seen as a failed upload instead of the 413). A larger or unknown-length body:
         * answer now and close. Without a body, answer on the next call (keep-alive). */
        if (x->rp.status && has_body(c) && (x->no_drain || !drainable(c)))
            return send_reply(c, x);
        return MHD_YES;
    }
    if (x->cut) { /* answered already (answer_mid_body): the rest is dropped, the end closes */
        if (!*upload_data_size)
            return MHD_NO;
        *upload_data_size = 0;
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
        free(x->rq.args[i].raw);
    }
    free(x->rq.args);
    buf_free(&x->rq.body);
    free(x->rq.grant);
    if (x->rq.stream_state && x->route && x->route->stream_free)
        x->route->stream_free(x->rq.stream_state);
    buf_free(&x->rp.body);
    if (x->rp.fd > 0)
        close(x->rp.fd);
    if (x->rp.stream.free) /* a streamed body never sent */
        x->rp.stream.free(x->rp.stream.arg);
    if (x->body)
        x->body->x = NULL;
    free(x->fault);
    free(x);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    struct exchange *x = *ctx;
    if (!x)
        return;
    access_done(&(struct access_record){
        .method = x->rq.method,
        .route = x->route       ? x->route->name
                 : x->is_static ? "static"
                                : "unmatched",
        .route_metric = x->route       ? x->route->metric
                        : x->is_static ? route_static_metric()
                                       : -1,
        .status = x->queued ? x->rp.status : 0,
        .bytes = x->queued ? x->bytes : 0,
        .us = util_now_us() - x->start_us,
        .cache = reply_header(&x->rp, "X-Cache"),
        .request_id = x->request_id,
        .fault = x->fault,
        .aborted = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !x->cut,
        .client = x->client[0] ? x->client : NULL,
    });
    atomic_fetch_sub_explicit(&x->thread->active, 1, memory_order_relaxed);
    struct conn_clock *k = clock_of(c);
    if (k && k->x == x)
        k->x = NULL;
    if (k && k->phase == PHASE_REQUEST) {
        k->phase = PHASE_IDLE;
        k->since_ms = util_now_ms();
    }
    if (x->handed_off)
        atomic_fetch_sub(&x->srv->in_work, 1);
    exchange_free(x);
    *ctx = NULL;
}

/* ---------------------------------------------------------------- connections */

/* Set while MHD_add_connection runs on this thread: its STARTED notification clears it. */
static __thread int adding;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct httpd_thread *t = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        adding = 0; /* taken: its close gives the slot back */
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn_clock *k = fi ? calloc(1, sizeof(*k)) : NULL;
        if (k) { /* without it the connection has MHD's idle timeout only */
            k->fd = fi->connect_fd;
            k->since_ms = util_now_ms();
            k->phase = PHASE_HEADERS;
            k->next = t->conns;
            if (t->conns)
                t->conns->prev = k;
            t->conns = k;
            arm_sweep(t);
        }
        *socket_ctx = k;
        if (log_enabled(LOG_LEVEL_DEBUG))
            log_debug("http: connection opened on event thread %d (%d there)", t->index,
                      loop_load(t->loop));
        return;
    }
    struct conn_clock *k = *socket_ctx;
    if (k) {
        if (k->prev)
            k->prev->next = k->next;
        else
            t->conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        free(k);
        *socket_ctx = NULL;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    loop_connection_closed(t->loop, ci ? ci->client_addr : NULL);
    if (log_enabled(LOG_LEVEL_DEBUG))
        log_debug("http: connection closed on event thread %d (%d there)", t->index,
                  loop_load(t->loop));
}

/* The loop gives this thread's daemon a connection (loop_connection_fn). */
static int serve(void *arg, int fd, const struct sockaddr *addr, socklen_t len)
{
    struct httpd_thread *t = arg;
    adding = 1;
    MHD_add_connection(t->daemon, fd, addr, len);
    if (adding) { /* refused (out of memory); MHD closed the socket */
        adding = 0;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the daemons in the loops */

/* Step 1 of a loop iteration: how long the daemon may wait (its idle timeouts). */
static int daemon_prepare(void *arg)
{
    struct httpd_thread *t = arg;
    if (atomic_load(&t->srv->stopping))
        stop_uploads(t);
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout(t->daemon, &ms) != MHD_YES)
        return -1;
    return ms > 60000 ? 60000 : (int)ms;
}

/* Step 4: new requests, resumed replies, timeouts. */
static void daemon_run(void *arg)
{
    struct httpd_thread *t = arg;
    MHD_run(t->daemon);
}

/* The daemon's epoll fd is ready: daemon_run, which runs every iteration, takes it. */
static void daemon_ready(void *arg, uint32_t events)
{
    (void)arg;
    (void)events;
}

struct httpd *httpd_new(const struct httpd_options *o)
{
    struct httpd *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->o = *o;
    if (d->o.request_timeout_ms <= 0)
        d->o.request_timeout_ms = 1000;
    if (d->o.header_timeout_ms <= 0)
        d->o.header_timeout_ms = 10000;
    return d;
}

int httpd_attach(struct httpd *d, struct loop *l, const struct httpd_conns *c)
{
    if (d->nthreads == HTTP_EVENT_THREADS_MAX)
        return -ENOSPC;
    struct httpd_thread *t = &d->threads[d->nthreads];
    *t = (struct httpd_thread){.srv = d,
                               .loop = l,
                               .reads = c->reads,
                               .writes = c->writes,
                               .cache_reads = c->cache_reads,
                               .cache_writes = c->cache_writes,
                               .index = d->nthreads};
    /* the loops accept and enforce the connection limits; MHD's are per daemon */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_TURBO | MHD_USE_ERROR_LOG;
    t->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, t, MHD_OPTION_EXTERNAL_LOGGER,
                                 mhd_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)d->o.max_connections + 16, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, t, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 (size_t)CONNECTION_MEMORY_BYTES, MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
                                 on_completed, t, MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL,
                                 MHD_OPTION_URI_LOG_CALLBACK, on_request_line, t, MHD_OPTION_END);
    if (!t->daemon)
        return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
    d->nthreads++; /* httpd_free stops it from here on */
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    struct loop_hooks h = {.prepare = daemon_prepare, .run = daemon_run, .arg = t};
    if (!info || !(t->watch = loop_watch_add(l, info->epoll_fd, EPOLLIN, daemon_ready, t)))
        return -EIO;
    if (loop_hooks_add(l, &h))
        return -ENOSPC;
    loop_on_connection(l, serve, t);
    return 0;
}

int http_event_threads(const struct httpd *srv, struct metrics_thread *out, int max)
{
    int n = srv->nthreads < max ? srv->nthreads : max;
    for (int i = 0; i < n; i++) {
        const struct httpd_thread *t = &srv->threads[i];
        memset(&out[i], 0, sizeof(out[i]));
        out[i].connections = loop_load(t->loop);
        out[i].busy = atomic_load_explicit(&t->active, memory_order_relaxed);
        out[i].waiting = atomic_load_explicit(&t->waiting, memory_order_relaxed);
        if (t->reads)
            store_async_stats(t->reads, &out[i].reads);
        if (t->writes)
            store_async_stats(t->writes, &out[i].writes);
    }
    return n;
}

const char *http_library_version(void)
{
    return MHD_get_version();
}

void httpd_quiesce(struct httpd *d)
{
    if (!d)
        return;
    /* MHD must not be stopped with suspended connections: refuse new work, let the requests in
     * work finish and their replies go out (bounded by Redis timeouts and page waits). Past
     * STOP_WAIT_MS only the suspended ones are waited for. The loops run meanwhile. The
     * counters go up before `stopping` is read (suspend_exchange), and this sets `stopping`
     * before it reads them (both sequentially consistent): either a request sees the stop, or
     * the stop waits for it. */
    atomic_store(&d->stopping, 1);
    for (int i = 0; i < d->nthreads; i++)
        loop_wake(d->threads[i].loop); /* its uploads waiting for their bodies are answered */
    for (int waited = 0; atomic_load(&d->in_work) > 0 && waited < STOP_WAIT_MS; waited++)
        util_sleep_ms(1);
    while (atomic_load(&d->suspended) > 0)
        util_sleep_ms(1);
}

void httpd_free(struct httpd *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nthreads; i++) {
        struct httpd_thread *t = &d->threads[i];
        loop_watch_remove(t->watch); /* before MHD closes its epoll fd */
        MHD_stop_daemon(t->daemon);  /* its connections close: on_connection gives them back */
        gzip_stream_free(t->gz_keep);
        gzip_stream_free(t->gz_fast);
        for (int k = 0; k < GZ_CACHE_ENTRIES; k++)
            buf_free(&t->gz[k].gz);
    }
    free(d);
}
