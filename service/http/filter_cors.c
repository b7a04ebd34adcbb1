/* filter_cors.c -- CORS on a request and its reply; see filter_cors.h. */
#include "filter_cors.h"

#include <string.h>

#include "cors.h"
#include "filter.h"

int cors_filter_request(const struct cors *policy, const struct filter_request *in,
                        struct cors_seen *seen, struct http_reply *rp)
{
    if (!policy || !cors_enabled(policy))
        return 0;
    const char *origin = in->header(in->conn, "Origin");
    /* Every reply says how it depends on Origin, whether or not this request had an allowed one,
     * so a shared cache never gives one origin's reply to another: with a list, Vary: Origin;
     * with "*", reads are the same for everyone (the header even without Origin). */
    seen->vary = !policy->any;
    const char *method = in->method;
    int read = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (read && policy->any)
        seen->allow_origin = "*";
    if (!origin)
        return 0;
    if (read) {
        seen->allow_origin = cors_allow_origin(policy, origin);
        return 0;
    }
    const char *want = in->header(in->conn, "Access-Control-Request-Method");
    if (strcmp(method, "OPTIONS") != 0 || !want)
        return 0; /* a cross-origin write: no CORS headers, the browser keeps the reply from it */
    const char *allow = cors_allow_origin(policy, origin);
    if (!allow || !cors_method_offered(want)) {
        http_reply_error_default(rp, ERR_CORS_NOT_ALLOWED);
        return 1;
    }
    rp->status = 204;
    http_reply_header(rp, "Access-Control-Allow-Origin", allow);
    http_reply_header(rp, "Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
    http_reply_header(rp, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
    http_reply_header(rp, "Access-Control-Max-Age", CORS_MAX_AGE_S);
    return 1;
}

void cors_filter_reply(const struct cors_seen *seen, struct filter_headers *out)
{
    if (seen->allow_origin) {
        filter_header_add(out, "Access-Control-Allow-Origin", seen->allow_origin);
        filter_header_add(out, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    }
    if (seen->vary)
        filter_vary(out, FILTER_VARY_ORIGIN);
}
