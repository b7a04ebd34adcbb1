/*
 * httpd_reply.c -- a reply on its way out: the filters' reply steps (filter.h: gzip, ETags,
 * request id, CORS), streamed bodies, the response queued, and whether a request's body can be
 * drained. The
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

/* libmicrohttpd's free of a body in a block of SPARE_BODY_BYTES (struct buf's cap is the bytes
 * allocated): back to the spare blocks of the thread that sent it. */
static void body_block_give(void *p)
{
    spare_give(p, SPARE_BODY_BYTES);
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
    struct filter_headers added; /* filter.h, steps 5-8: filters_reply sets what is read */
    int gzipped = filters_reply(x->thread->gz, &x->seen, x->request_id, rp, &added);
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
            rp->fd = 0;                                             /* MHD closes it */
    } else if (rp->body.data && rp->body.cap == SPARE_BODY_BYTES) { /* kept for reuse */
        resp = MHD_create_response_from_buffer_with_free_callback(rp->body.len, rp->body.data,
                                                                  body_block_give);
        if (resp)
            rp->body.data = NULL, rp->body.len = rp->body.cap = 0;
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
        MHD_add_response_header(resp, rp->headers[i].name,
                                filter_header_value(&added, rp->headers[i].value));
    for (int i = 0; i < added.n; i++)
        MHD_add_response_header(resp, added.h[i].name, added.h[i].value);
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
