/*
 * filter_cors.h -- the CORS filter of the HTTP exchange (steps 3 and 8 of filter.h's chain):
 * cors.h's policy (--cors-origin) applied to one request and its reply.
 *
 * Step 3, before the route is matched: a preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) is answered, 204 with the Allow-* headers when its origin is
 * allowed and it asks for GET or HEAD, else 403 cors_not_allowed; a GET or HEAD from an allowed
 * origin (or any, with "*") is remembered. Step 8 adds to its reply Access-Control-Allow-Origin
 * and -Expose-Headers, and to every reply, with a list of origins, Vary: Origin (cors.h says
 * why). A cross-origin write gets no CORS headers: the browser keeps the reply from the page.
 */
#ifndef RANKD_FILTER_CORS_H
#define RANKD_FILTER_CORS_H

#include "http.h"

struct cors;
struct filter_headers;
struct filter_request;

/** What step 3 leaves for step 8, per request. */
struct cors_seen {
    const char *allow_origin; /**< Access-Control-Allow-Origin of a cross-origin read, or NULL
                               *   ("*", or the request's Origin: borrowed) */
    int vary;                 /**< 1: the reply depends on Origin: Vary: Origin */
};

/** Step 3 under `policy` (NULL or empty: CORS off, nothing done). Returns 1 when the request is
 *  answered (a preflight: rp filled), else 0. */
int cors_filter_request(const struct cors *policy, const struct filter_request *in,
                        struct cors_seen *seen, struct http_reply *rp);

/** Step 8: the headers of what step 3 saw, into out. */
void cors_filter_reply(const struct cors_seen *seen, struct filter_headers *out);

#endif
