/*
 * filter_etag.h -- the conditional-GET filter of the HTTP exchange (steps 2 and 6 of filter.h's
 * chain): the ETags of a reply's two forms.
 *
 * A page's ETag names its version; its gzip form (filter_gzip.h) is another representation and
 * has its own strong ETag (RFC 9110 8.8.3): the page's with "-gz" added inside the quotes
 * ("v12" -> "v12-gz"). The handlers know only the identity form's ETag, so an If-None-Match that
 * names a gzip form, from a client that accepts gzip, reaches them without its "-gz"
 * (http_request.if_none_match), and the reply names the form it is about: a gzipped 200, or a
 * 304 to such a request, carries the "-gz" ETag. Other ETags and headers pass unchanged.
 */
#ifndef RANKD_FILTER_ETAG_H
#define RANKD_FILTER_ETAG_H

#include "http.h"

/** What step 2 leaves for step 6, per request. */
struct etag_seen {
    int inm_gz;   /**< its If-None-Match named a gzip form */
    char inm[72]; /**< that If-None-Match without "-gz": what the handlers compare */
};

/** Step 6's outcome: the value the reply's ETag header is sent with instead of its own. */
struct etag_swap {
    const char *from; /**< rp's ETag value (compared by address), or NULL: nothing swapped */
    char to[80];      /**< its "-gz" form */
};

/** Step 2: when gzip_ok and rq->if_none_match names a gzip form, point it at the identity form
 *  (kept in seen). */
void etag_filter_request(int gzip_ok, struct etag_seen *seen, struct http_request *rq);

/** Step 6: when rp's body is gzip (gzipped) or rp is a 304 to a request about a gzip form, the
 *  value of rp's ETag header `etag` (NULL: none) is sent as its "-gz" form: *swap says so (rp
 *  itself is left as it is). swap->from is NULL otherwise. */
void etag_filter_reply(const struct etag_seen *seen, int gzipped, const char *etag,
                       const struct http_reply *rp, struct etag_swap *swap);

#endif
