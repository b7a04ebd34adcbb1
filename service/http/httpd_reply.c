/*
 * httpd_reply.c -- a reply on its way out: headers, the gzip form (kept per event thread by
 * ETag), streamed bodies, the response queued, and whether a request's body can be drained. The
 * contract is httpd.h; httpd_int.h holds what the httpd*.c files share.
 */
#include "httpd_int.h"

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
const char *reply_header(const struct http_reply *rp, const char *name)
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
        MHD_SIZE_UNKNOWN, b->src.block ? b->src.block : BODY_BLOCK_BYTES, body_reader, b,
        body_free);
    if (!resp) {
        b->x = NULL;
        body_free(b);
        return NULL;
    }
    x->body = b;
    return resp;
}

enum MHD_Result send_reply(struct MHD_Connection *c, struct exchange *x)
{
    struct http_reply *rp = &x->rp;
    if (!rp->status)
        http_reply_error(rp, ERR_INTERNAL, "The handler produced no reply.");
    x->bytes = rp->status == 304 || strcmp(x->rq.method, "HEAD") == 0 ? 0
               : rp->fd > 0                                           ? rp->fd_size
                                                                      : rp->body.len;
    if (rp->status >= 500 && !x->fault)
        x->fault = access_fault_of(rp->status, rp->error, rp->fault);
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

int drainable(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    long long n = cl ? strtoll(cl, NULL, 10) : -1;
    return !te && n > 0 && n <= DRAIN_MAX;
}

int has_body(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    return (cl && strtoll(cl, NULL, 10) > 0) || te;
}
