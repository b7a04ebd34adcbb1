/*
 * filter.h -- the filters beside the HTTP exchange, and the fixed order they run in (nginx's
 * header and body filters: each concern its own module, the core only runs the phases).
 *
 * The exchange (httpd*.c) reads a request from libmicrohttpd and sends its reply; what a reply
 * means for a browser or a cache is the filters' business. Each is a small module with its own
 * contract; none sees libmicrohttpd (they read request headers through filter_request.header
 * and write reply headers into a filter_headers list) and none touches Redis. The chain:
 *
 *   request, its headers in (filters_headers_in), before any check:
 *     1. gzip (filter_gzip.h)   does the client accept gzip (Accept-Encoding)
 *     2. etag (filter_etag.h)   an If-None-Match naming a gzip form ("...-gz") is compared by the
 *                               handlers as the identity form's ETag (http_request.if_none_match)
 *   request, before its route is matched (filters_before_route), after framing and Host:
 *     3. cors (filter_cors.h)   a preflight is answered here; a read's Allow-Origin remembered
 *   request, its route and query known (filters_route_found), before its body:
 *     4. auth (auth.h)          the bearer token and scope of a ROUTE_WRITE route, or refused;
 *                               a ROUTE_EVENTS route's replies are remembered to vary on Accept
 *   reply, once decided (filters_reply), before libmicrohttpd sends it:
 *     5. gzip                   the body's gzip form (kept per event thread by ETag: the ETag
 *                               cache), Content-Encoding, varies on Accept-Encoding; then on
 *                               Accept on every reply of a ROUTE_EVENTS route (a stream or a
 *                               JSON reply by Accept: a shared cache must keep them apart)
 *     6. etag                   the ETag of a gzip form (or of a 304 about one) ends in "-gz"
 *     7. request id (access.h)  X-Request-Id, as given or made
 *     8. cors                   Access-Control-Allow-Origin, -Expose-Headers, varies on Origin
 *   then one Vary header with what the steps vary on, in that order ("Accept-Encoding, Accept,
 *   Origin": RFC 9110 5.3 makes it the same as a line per value, and each header line is an
 *   allocation and a copy more in libmicrohttpd)
 *
 * A request step that answers (a preflight, a refusal) fills the reply and ends the request
 * phases; the reply phase runs for every reply libmicrohttpd sends (an upload answered in the
 * middle of its body is written by the exchange itself, with X-Request-Id only). The state a
 * request step leaves for the reply step is in struct filters_seen, one per request. All of it
 * runs on the request's event thread.
 */
#ifndef RANKD_FILTER_H
#define RANKD_FILTER_H

#include "filter_cors.h"
#include "filter_etag.h"
#include "http.h"

struct cors;
struct gzip_cache;
struct route;
struct tokens;

/** A request as the filters read it. */
struct filter_request {
    const char *method; /**< borrowed from the exchange */
    /** The value of request header `name` (case-insensitive), or NULL when absent; borrowed for
     *  the request's life. */
    const char *(*header)(void *conn, const char *name);
    void *conn; /**< header's argument (the exchange's connection) */
    /** How many times request header `name` (case-insensitive) appears. */
    int (*header_copies)(void *conn, const char *name);
};

#define FILTER_HEADERS_MAX 8

/** What a reply varies on (filter_vary): the tokens of its one Vary header, in this order. */
enum filter_vary {
    FILTER_VARY_ACCEPT_ENCODING = 1, /**< gzip */
    FILTER_VARY_ACCEPT = 2,          /**< a ROUTE_EVENTS route */
    FILTER_VARY_ORIGIN = 4,          /**< cors */
};

/** What the reply filters make of a reply's headers: the headers to add, in order, after the
 *  reply's own (http_reply.headers), and a value to send instead of one of those
 *  (filter_header_value). Lives while the caller sends the headers; filters_reply sets what
 *  is read of it (no need to clear it first). */
struct filter_headers {
    int n;
    struct {
        const char *name;  /**< static */
        const char *value; /**< static, or borrowed from the policy or the request: valid until
                            *   the request completes */
    } h[FILTER_HEADERS_MAX];
    unsigned vary;         /**< enum filter_vary bits, sent as one Vary header at the end */
    struct etag_swap etag; /**< filter_etag.h */
};

/** The value to send for a header of the reply whose own value is `value` (that one, or the one
 *  the filters put in its place). */
static inline const char *filter_header_value(const struct filter_headers *out, const char *value)
{
    return value == out->etag.from ? out->etag.to : value;
}

/** Append a header to out (a filter bug past FILTER_HEADERS_MAX: asserted). */
void filter_header_add(struct filter_headers *out, const char *name, const char *value);

/** The reply varies on `what` (enum filter_vary): filters_reply sends one Vary header with
 *  every token so noted (not a header of its own per filter). */
static inline void filter_vary(struct filter_headers *out, enum filter_vary what)
{
    out->vary |= (unsigned)what;
}

/** What the request steps leave for the reply steps, per request (zeroed at its start). */
struct filters_seen {
    int gzip_ok;           /**< the client accepts gzip */
    struct etag_seen etag; /**< filter_etag.h */
    struct cors_seen cors; /**< filter_cors.h */
    int vary_accept;       /**< the route answers by Accept (ROUTE_EVENTS): Vary: Accept */
};

/** Server-wide settings of the filters (borrowed: they outlive the server). */
struct filters_config {
    const struct cors *cors; /**< cors.h; NULL or empty: no CORS */
    struct tokens *tokens;   /**< tokens.h; NULL: none in force (writes refused) */
};

/** Steps 1 and 2: may point rq->if_none_match at the identity form's ETag (in seen). */
void filters_headers_in(const struct filter_request *in, struct filters_seen *seen,
                        struct http_request *rq);

/** Step 3. Returns 1 when the request is answered (rp filled: a preflight), else 0. */
int filters_before_route(const struct filters_config *cfg, const struct filter_request *in,
                         struct filters_seen *seen, struct http_reply *rp);

/** Step 4, for route r (notes in seen whether its replies vary on Accept). Returns 1 when the
 *  request is refused (rp filled), else 0. */
int filters_route_found(const struct filters_config *cfg, const struct filter_request *in,
                        const struct route *r, struct filters_seen *seen, struct http_request *rq,
                        struct http_reply *rp);

/**
 * Steps 5 to 8 on reply rp (a 200's body may be replaced by its gzip form), into *out: the
 * headers to add after rp's own (the last of them one Vary header when the reply varies on
 * anything), and the "-gz" ETag to send in place of rp's
 * (filter_header_value; rp's own headers are left as they are). `gz`: the event thread's gzip
 * cache (filter_gzip.h); `request_id`: X-Request-Id's value (borrowed). Returns 1 when rp's
 * body is now gzip.
 */
int filters_reply(struct gzip_cache *gz, const struct filters_seen *seen, const char *request_id,
                  struct http_reply *rp, struct filter_headers *out);

#endif
