/* filter_etag.c -- the ETags of a reply's identity and gzip forms; see filter_etag.h. */
#include "filter_etag.h"

#include <string.h>

void etag_filter_request(int gzip_ok, struct etag_seen *seen, struct http_request *rq)
{
    const char *inm = rq->if_none_match;
    size_t n = inm ? strlen(inm) : 0;
    if (!gzip_ok || n <= 5 || n >= sizeof(seen->inm) || memcmp(inm + n - 4, "-gz\"", 4) != 0)
        return;
    memcpy(seen->inm, inm, n - 4);
    memcpy(seen->inm + n - 4, "\"", 2);
    rq->if_none_match = seen->inm; /* the handlers know a page's ETag, not its gzip form's */
    seen->inm_gz = 1;
}

void etag_filter_reply(const struct etag_seen *seen, int gzipped, const char *etag,
                       const struct http_reply *rp, struct etag_swap *swap)
{
    swap->from = NULL;
    if (!etag || !(gzipped || (rp->status == 304 && seen->inm_gz)))
        return;
    size_t n = strlen(etag);
    if (n < 2 || n + 3 >= sizeof(swap->to) || etag[n - 1] != '"')
        return;
    memcpy(swap->to, etag, n - 1);
    memcpy(swap->to + n - 1, "-gz\"", 5);
    swap->from = etag;
}
