/*
 * auth.h -- who may write: the bearer token of a request and the scope its route needs
 * (tokens.h). The auth filter: step 4 of filter.h's chain, once a request's route is known; also
 * used by the handlers of writes whose boards are named in the body (POST /scores) rather than
 * in the path.
 *
 * Routes (route.h flags): ROUTE_WRITE alone needs `admin`; with ROUTE_SCORES, a score write on
 * the board of the path (params[0]) needs `scores` or a scores:NAME / scores:PREFIX* scope
 * matching it (no board in the path: the handler checks each board, auth_board); with
 * ROUTE_RECORDS, `scores` (records are shared by every board). Refusals, each before anything is
 * read from or written to Redis:
 *   403 writes_disabled     no token in force at all;
 *   401 unauthorized        no 'Authorization: Bearer' header;
 *   403 forbidden           the token is none of those in force;
 *   403 insufficient_scope  the token lacks the scope, which the message names (and the
 *                           WWW-Authenticate header, as RFC 6750 3.1 says).
 */
#ifndef RANKD_AUTH_H
#define RANKD_AUTH_H

#include "http.h"

struct route;
struct tokens;

/** Which routes a listener serves (httpd_options.listener). */
enum auth_listener {
    AUTH_LISTENER_ALL = 0, /**< the only listener (no --admin-listen): every route */
    AUTH_LISTENER_PUBLIC,  /**< --listen beside an admin listener: all but ROUTE_ADMIN */
    AUTH_LISTENER_ADMIN,   /**< --admin-listen: ROUTE_ADMIN and ROUTE_PROBE routes only */
};

/** 1 when `listener` (enum auth_listener) serves route r; else the request is 404 not_found, as
 *  if the route did not exist there. */
int auth_listener_serves(int listener, const struct route *r);

/**
 * Check the request of route r against `tokens` (NULL: none in force) and its Authorization
 * header (NULL when absent; `copies` the number of Authorization headers it came with: more than
 * one is 401 unauthorized on a write route, whatever they hold, since a proxy in front may have
 * read another one than rankd would). Returns 0 when it may go on (for a ROUTE_WRITE route the token's
 * grant is then in rq->grant, owned by rq); else -1 with rp filled as above.
 */
int auth_request(struct tokens *tokens, const char *authorization, int copies,
                 const struct route *r, struct http_request *rq, struct http_reply *rp);

/** A score write on `board` (a valid board name) by the request's token: 0, or -1 with rp
 *  filled (403 insufficient_scope). Requests without a grant (no ROUTE_WRITE) are refused. */
int auth_board(const struct http_request *rq, const char *board, struct http_reply *rp);

#endif
