/*
 * httpd_request.c -- a request's set-up: its query arguments, the checks of its body, framing,
 * Host, the web page's static files, the client behind a trusted proxy, the exchange begun (the
 * filters' request steps called at their points: filter.h), its body taken. The contract is
 * httpd.h; httpd_int.h holds what the httpd*.c files share.
 */
#include "auth.h"
#include "httpd_int.h"

/* ---------------------------------------------------------------- request set-up */

/* libmicrohttpd's own messages go through rankd's log, prefixed, rate-limited. */
__attribute__((format(printf, 2, 0))) void mhd_log(void *cls, const char *fmt, va_list ap)
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
size_t unescape_none(void *cls, struct MHD_Connection *c, char *s)
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
    /* decoding never makes a part longer: each gets its own length (and a NUL), the three in
     * one block that the name owns (http.h) */
    size_t klen = strlen(key), vlen = value ? strlen(value) : 0;
    if (klen > ARG_BYTES_MAX || vlen > ARG_BYTES_MAX) {
        w->bad = -EINVAL;
        return MHD_NO;
    }
    char *name = malloc(klen + 1 + 2 * (vlen + 1));
    if (!name) {
        w->bad = -ENOMEM;
        return MHD_NO;
    }
    char *val = name + klen + 1, *raw = val + vlen + 1;
    memcpy(raw, value ? value : "", vlen + 1);
    size_t n1 = 0, n2 = 0;
    int rc = request_arg_decode(key, klen, name, klen + 1, &n1);
    if (!rc)
        rc = request_arg_decode(raw, vlen, val, vlen + 1, &n2);
    if (rc) {
        free(name);
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

/* Sets *cls to the value of a Content-Encoding header that names a coding (anything but
 * "identity"), if one does. */
static enum MHD_Result find_coding(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    const char **coding = cls;
    if (!*coding && strcasecmp(key, "Content-Encoding") == 0 && value &&
        strcasecmp(value, "identity") != 0)
        *coding = value;
    return MHD_YES;
}

/* Content-Encoding, Content-Type and Content-Length checks for routes with a body. */
static void check_body(struct MHD_Connection *c, struct exchange *x)
{
    struct http_request *rq = &x->rq;
    /* rankd reads a body as sent: a compressed one would be taken as JSON (400 invalid_json) or
     * as NDJSON lines of garbage (200, each line rejected) */
    const char *coding = NULL;
    MHD_get_connection_values(c, MHD_HEADER_KIND, find_coding, &coding);
    if (coding) {
        http_reply_error(&x->rp, ERR_UNSUPPORTED_MEDIA_TYPE,
                         "rankd reads request bodies as sent and decodes no Content-Encoding "
                         "(gzip, br, ...): send the body uncompressed.");
        return;
    }
    rq->content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    if ((x->route->flags & ROUTE_NDJSON) &&
        media_type_is(rq->content_type, "application/x-ndjson")) {
        rq->streaming = 1;
        return;
    }
    /* curl -d sends application/x-www-form-urlencoded unless told otherwise: read it as JSON. */
    if (rq->content_type && !media_type_is(rq->content_type, "application/json") &&
        !media_type_is(rq->content_type, "application/x-www-form-urlencoded")) {
        http_reply_error(&x->rp, ERR_UNSUPPORTED_MEDIA_TYPE,
                         "Content-Type must be application/json%s.",
                         (x->route->flags & ROUTE_NDJSON) ? " or application/x-ndjson" : "");
        return;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoll(cl, NULL, 10) > HTTP_BODY_MAX)
        http_reply_error(&x->rp, ERR_BODY_TOO_LARGE, "JSON bodies are limited to %ld bytes.",
                         HTTP_BODY_MAX);
}

/* Who may show an HTML file of the web frontend in a frame: the embed page (?embed=1) the sites
 * --embed-frame-ancestors names; the rest (the admin page) this origin only, so that no other
 * site can dress it up and have its visitors click it (clickjacking). */
struct embed_arg {
    int n;  /* query arguments named exactly "embed" */
    int on; /* the first one is "1" */
};

static enum MHD_Result count_embed(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct embed_arg *e = cls;
    if (strcmp(key, "embed") == 0 && e->n++ == 0) /* MHD's own lookup ignores the name's case */
        e->on = value && strcmp(value, "1") == 0;
    return MHD_YES;
}

static void frame_headers(const struct httpd *srv, struct MHD_Connection *c, struct exchange *x)
{
    /* the embed page is embed=1 given once, the name as the page's script reads it (case
     * counts): ?EMBED=1 or a second embed= is the admin page, kept unframeable */
    struct embed_arg e = {0, 0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_embed, &e);
    if (e.n == 1 && e.on) {
        const char *anc = srv->o.embed_frame_ancestors;
        char csp[600];
        snprintf(csp, sizeof(csp), "frame-ancestors %s", anc && anc[0] ? anc : "*");
        http_reply_header(&x->rp, "Content-Security-Policy", csp);
        return;
    }
    http_reply_header(&x->rp, "X-Frame-Options", "SAMEORIGIN");
    http_reply_header(&x->rp, "Content-Security-Policy", "frame-ancestors 'self'");
}

/* GET/HEAD of a file of the web frontend; 0 when the reply is decided, else -ENOENT. */
static int serve_static(const struct httpd *srv, struct MHD_Connection *c, const char *method,
                        const char *url, struct exchange *x)
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
    if (strncmp(f.content_type, "text/html", 9) == 0)
        frame_headers(srv, c, x);
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

/* The request headers rankd reads, found in one walk over them (a lookup or a count of its own
 * per header walked the list a dozen times a request): for each, how often it was given, its
 * first value, and whether the values differ. */
enum seen_header {
    H_IF_NONE_MATCH,
    H_ACCEPT,
    H_LAST_EVENT_ID,
    H_IDEMPOTENCY_KEY,
    H_ACCEPT_ENCODING,
    H_X_REQUEST_ID,
    H_CONTENT_LENGTH,
    H_TRANSFER_ENCODING,
    H_HOST,
    H_AUTHORIZATION,
    H_ORIGIN,
    H_AC_REQUEST_METHOD,
    H_COUNT
};

static const struct {
    const char *name;
    size_t len;
} seen_names[H_COUNT] = {
#define SEEN(s)                                                                                    \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }
    SEEN("If-None-Match"),
    SEEN("Accept"),
    SEEN("Last-Event-ID"),
    SEEN("Idempotency-Key"),
    SEEN("Accept-Encoding"),
    SEEN("X-Request-Id"),
    SEEN("Content-Length"),
    SEEN("Transfer-Encoding"),
    SEEN("Host"),
    SEEN("Authorization"),
    SEEN("Origin"),
    SEEN("Access-Control-Request-Method"),
#undef SEEN
};

struct header_count {
    const char *first; /* the first value, NULL when not given */
    int n;
    int differ;
};

struct headers_seen {
    struct MHD_Connection *c; /* for a header outside the table (filter_request.header) */
    struct header_count h[H_COUNT];
};

static enum MHD_Result see_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    struct headers_seen *s = cls;
    size_t n = strlen(key);
    for (int i = 0; i < H_COUNT; i++) {
        if (seen_names[i].len != n || strcasecmp(key, seen_names[i].name) != 0)
            continue;
        struct header_count *h = &s->h[i];
        if (h->n++ == 0)
            h->first = value ? value : "";
        else if (strcmp(h->first, value ? value : "") != 0)
            h->differ = 1;
        break;
    }
    return MHD_YES;
}

/* 0 when the body is framed one way only; else the reply is filled. libmicrohttpd 0.9.75 frames
 * by the first Content-Length and reads any Transfer-Encoding but chunked as a body running to
 * the end of the connection; a proxy in front may take another header: a smuggled request. The
 * reply closes the connection, so nothing after it is read as a request. */
static int check_framing(const struct headers_seen *s, struct http_reply *rp)
{
    const struct header_count *cl = &s->h[H_CONTENT_LENGTH], *te = &s->h[H_TRANSFER_ENCODING];
    if (cl->differ)
        http_reply_error(rp, ERR_INVALID_CONTENT_LENGTH,
                         "The request has Content-Length headers with different values.");
    else if (cl->n && te->n) /* RFC 9112 6.3: a proxy may frame it by either: refuse, close */
        http_reply_error(rp, ERR_INVALID_CONTENT_LENGTH,
                         "The request has both Content-Length and Transfer-Encoding.");
    else if (te->n && (te->n > 1 || strcasecmp(te->first, "chunked") != 0))
        http_reply_error(rp, ERR_NOT_IMPLEMENTED,
                         "Transfer-Encoding '%.60s' is not supported: send the body with a "
                         "Content-Length or as Transfer-Encoding: chunked.",
                         te->n > 1 ? "given twice" : te->first);
    else
        return 0;
    http_reply_header(rp, "Connection", "close");
    return -1;
}

/* 0 when the request's Host is as RFC 9112 3.2 wants it: one Host header (none in HTTP/1.0), its
 * value "" or uri-host[:port] (reg-name characters, or an IP literal in brackets); else the reply
 * is 400 invalid_host. */
static int check_host(const struct headers_seen *s, const char *version, struct http_reply *rp)
{
    const struct header_count *host = &s->h[H_HOST];
    int v11 = strcmp(version, MHD_HTTP_VERSION_1_0) != 0;
    int ok = host->n == 1 || (host->n == 0 && !v11);
    for (const char *p = host->n == 1 ? host->first : ""; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             strchr("-._~%!$&'()*+,;=:[]", *p) != NULL;
    if (ok)
        return 0;
    http_reply_error(rp, ERR_INVALID_HOST,
                     host->n == 0  ? "The request has no Host header (required since HTTP/1.1)."
                     : host->n > 1 ? "The request has more than one Host header."
                                   : "The Host header is not a host[:port].");
    return -1;
}

/* The entry of the table for header `name`, or -1. */
static int seen_index(const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < H_COUNT; i++)
        if (seen_names[i].len == n && strcasecmp(name, seen_names[i].name) == 0)
            return i;
    return -1;
}

/* How often one header not in the table was given (MHD's own walk). */
struct header_tally {
    const char *name;
    int n;
};

static enum MHD_Result tally_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    struct header_tally *t = cls;
    t->n += strcasecmp(key, t->name) == 0;
    return MHD_YES;
}

/* How many times a request header appears, for the filters (filter_request.header_copies). */
static int header_copies_of(void *conn, const char *name)
{
    const struct headers_seen *s = conn;
    int i = seen_index(name);
    if (i >= 0)
        return s->h[i].n;
    struct header_tally t = {name, 0};
    MHD_get_connection_values(s->c, MHD_HEADER_KIND, tally_header, &t);
    return t.n;
}

/* A request header's value for the filters (filter_request.header): the first one given. */
static const char *header_of(void *conn, const char *name)
{
    const struct headers_seen *s = conn;
    int i = seen_index(name);
    return i >= 0 ? s->h[i].first : MHD_lookup_connection_value(s->c, MHD_HEADER_KIND, name);
}

/* The X-Forwarded-For values of a request, joined with ',' (cut at the buffer's end). */
/* The X-Forwarded-For values joined with commas, kept from the RIGHT: the hops a trusted proxy
 * appends are at the end, and a client controls everything before them, so a long header must
 * never push the appended hop out (it would let a client name its own address). `cut`: bytes
 * were dropped on the left; the first, partial entry is then skipped (xff_text). */
struct xff_join {
    char text[1024];
    size_t len;
    int n, cut;
};

static void xff_append(struct xff_join *j, const char *s, size_t n)
{
    const size_t cap = sizeof(j->text) - 1;
    if (n >= cap) {
        memcpy(j->text, s + (n - cap), cap);
        j->len = cap;
        j->cut = 1;
    } else {
        if (j->len + n > cap) {
            size_t drop = j->len + n - cap;
            memmove(j->text, j->text + drop, j->len - drop);
            j->len -= drop;
            j->cut = 1;
        }
        memcpy(j->text + j->len, s, n);
        j->len += n;
    }
    j->text[j->len] = '\0';
}

static enum MHD_Result join_xff(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    struct xff_join *j = cls;
    if (strcasecmp(key, "X-Forwarded-For") != 0 || !value)
        return MHD_YES;
    if (j->n++)
        xff_append(j, ",", 1);
    xff_append(j, value, strlen(value));
    return MHD_YES;
}

/* The joined hops for cidr_client: NULL without any; when cut, from after the first comma (the
 * entry the cut went through is not an address anyone sent), NULL when no whole entry is left. */
static const char *xff_text(const struct xff_join *j)
{
    if (!j->n)
        return NULL;
    if (!j->cut)
        return j->text;
    const char *comma = strchr(j->text, ',');
    return comma ? comma + 1 : NULL;
}

/* Who asked, into out: the peer's address, or behind a trusted proxy the client its
 * X-Forwarded-For names (cidr_client). Without trusted proxies it is the peer's for every request
 * of a connection: found once, kept with the connection (two inet_ntop and a parse were a tenth
 * of a cached page's instructions). */
static void client_of(const struct httpd *srv, struct MHD_Connection *c, char out[CIDR_ADDR_MAX])
{
    const struct cidr_list *t = srv->o.trusted_proxies;
    struct conn_clock *k = t && t->n ? NULL : clock_of(c);
    if (k && k->peer[0]) {
        memcpy(out, k->peer, CIDR_ADDR_MAX);
        return;
    }
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
    struct xff_join j = {.len = 0, .n = 0, .cut = 0};
    if (t && t->n)
        MHD_get_connection_values(c, MHD_HEADER_KIND, join_xff, &j);
    cidr_client(peer[0] ? peer : NULL, xff_text(&j), t, out);
    if (k)
        memcpy(k->peer, out, CIDR_ADDR_MAX);
}

void begin(struct httpd *srv, struct MHD_Connection *c, const char *url, const char *method,
           const char *version, struct exchange *x)
{
    client_of(srv, c, x->client);
    struct headers_seen hs;
    memset(&hs, 0, sizeof(hs));
    hs.c = c;
    MHD_get_connection_values(c, MHD_HEADER_KIND, see_header, &hs);
    x->rq.ctx = srv->o.ctx;
    x->rq.server = srv->o.metrics_of ? srv->o.metrics_of : srv;
    x->rq.method = method;
    x->rq.if_none_match = hs.h[H_IF_NONE_MATCH].first;
    x->rq.event_stream = events_accepted(hs.h[H_ACCEPT].first);
    x->rq.last_event_id = hs.h[H_LAST_EVENT_ID].first;
    const struct header_count *idem = &hs.h[H_IDEMPOTENCY_KEY];
    x->rq.idempotency_key = idem->n > 1 ? "" : idem->first; /* twice: refused where honoured */
    /* the filters' request steps run at fixed points below, in filter.h's order */
    const struct filter_request in = {
        .method = method, .header = header_of, .conn = &hs, .header_copies = header_copies_of};
    filters_headers_in(&in, &x->seen, &x->rq);
    access_request_id(hs.h[H_X_REQUEST_ID].first, x->request_id);
    if (check_framing(&hs, &x->rp)) {
        x->no_drain = 1; /* its body's length is in doubt: never read it */
        return;
    }
    if (check_host(&hs, version, &x->rp))
        return;
    if (filters_before_route(&srv->filters, &in, &x->seen, &x->rp))
        return;
    char allow[64];
    int rc = route_match(method, url, &x->rq, &x->route, allow, sizeof(allow));
    if (rc == 0 && !auth_listener_serves(srv->o.listener, x->route)) {
        x->route = NULL; /* not served on this listener: as if it did not exist */
        rc = -ENOENT;
    }
    if (rc == -ENOENT && serve_static(srv, c, method, url, x) == 0) {
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
    if (filters_route_found(&srv->filters, &in, x->route, &x->seen, &x->rq, &x->rp))
        return;
    if (x->route->flags & ROUTE_BODY) {
        check_body(c, x);
        return;
    }
    const char *cl = hs.h[H_CONTENT_LENGTH].first;
    if (cl && strtoll(cl, NULL, 10) > 0)
        http_reply_error_default(&x->rp, ERR_UNEXPECTED_BODY);
}

/* One chunk of request body. */
void consume(struct exchange *x, const char *data, size_t len)
{
    if (!(x->route->flags & ROUTE_BODY)) {
        http_reply_error_default(&x->rp, ERR_UNEXPECTED_BODY);
        return;
    }
    if (x->rq.body.len + len > (size_t)HTTP_BODY_MAX) {
        http_reply_error(&x->rp, ERR_BODY_TOO_LARGE, "JSON bodies are limited to %ld bytes.",
                         HTTP_BODY_MAX);
        buf_free(&x->rq.body);
        return;
    }
    if (buf_append(&x->rq.body, data, len))
        http_reply_errno(&x->rp, -ENOMEM);
}
