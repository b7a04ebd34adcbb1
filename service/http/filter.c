/* filter.c -- the filters' chain, in the order filter.h gives. */
#include "filter.h"

#include <assert.h>
#include <string.h>

#include "auth.h"
#include "filter_gzip.h"
#include "route.h"

void filter_header_add(struct filter_headers *out, const char *name, const char *value)
{
    assert(out->n < FILTER_HEADERS_MAX); /* the chain adds at most 5 */
    out->h[out->n].name = name;
    out->h[out->n++].value = value;
}

void filters_headers_in(const struct filter_request *in, struct filters_seen *seen,
                        struct http_request *rq)
{
    seen->gzip_ok = gzip_filter_request(in->header(in->conn, "Accept-Encoding"));
    etag_filter_request(seen->gzip_ok, &seen->etag, rq);
}

int filters_before_route(const struct filters_config *cfg, const struct filter_request *in,
                         struct filters_seen *seen, struct http_reply *rp)
{
    return cors_filter_request(cfg->cors, in, &seen->cors, rp);
}

int filters_route_found(const struct filters_config *cfg, const struct filter_request *in,
                        const struct route *r, struct filters_seen *seen, struct http_request *rq,
                        struct http_reply *rp)
{
    seen->vary_accept = (r->flags & ROUTE_EVENTS) != 0;
    return auth_request(cfg->tokens, in->header(in->conn, "Authorization"),
                        in->header_copies(in->conn, "Authorization"), r, rq, rp)
               ? 1
               : 0;
}

/* The reply's ETag header, or NULL. */
static const char *reply_etag(const struct http_reply *rp)
{
    for (int i = 0; i < rp->nheaders; i++)
        if (strcmp(rp->headers[i].name, "ETag") == 0)
            return rp->headers[i].value;
    return NULL;
}

/* The one Vary value of the enum filter_vary bits v (1-7), its tokens in the enum's order. */
static const char *vary_value(unsigned v)
{
    static const char *const values[8] = {
        NULL,     "Accept-Encoding",         "Accept",         "Accept-Encoding, Accept",
        "Origin", "Accept-Encoding, Origin", "Accept, Origin", "Accept-Encoding, Accept, Origin",
    };
    return values[v & 7];
}

int filters_reply(struct gzip_cache *gz, const struct filters_seen *seen, const char *request_id,
                  struct http_reply *rp, struct filter_headers *out)
{
    out->n = 0;
    out->vary = 0;
    const char *etag = reply_etag(rp);
    int gzipped = gzip_filter_reply(gz, seen->gzip_ok, etag, rp, out);
    if (seen->vary_accept)
        filter_vary(out, FILTER_VARY_ACCEPT);
    etag_filter_reply(&seen->etag, gzipped, etag, rp, &out->etag);
    filter_header_add(out, "X-Request-Id", request_id);
    cors_filter_reply(&seen->cors, out);
    if (out->vary)
        filter_header_add(out, "Vary", vary_value(out->vary));
    return gzipped;
}
