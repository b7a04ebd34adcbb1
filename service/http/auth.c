/* auth.c -- bearer tokens and scopes of requests; see auth.h. */
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "route.h"
#include "tokens.h"

static void insufficient(struct http_reply *rp, const char *scope)
{
    http_reply_error(rp, ERR_INSUFFICIENT_SCOPE,
                     "This token lacks the scope '%s' that this request needs (a line of the "
                     "token file is 'TOKEN SCOPE...': admin, scores, scores:NAME, "
                     "scores:PREFIX*).",
                     scope);
    char h[160];
    snprintf(h, sizeof(h), "Bearer realm=\"rankd\", error=\"insufficient_scope\", scope=\"%s\"",
             scope);
    http_reply_header(rp, "WWW-Authenticate", h);
}

/* 1 when s is a board name (board.h: [A-Za-z0-9._-], 1..64 bytes); else the handler answers 400
 * invalid_board. */
static int board_name(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= TOKENS_BOARD_MAX &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

int auth_request(struct tokens *tokens, const char *authorization, int copies,
                 const struct route *r, struct http_request *rq, struct http_reply *rp)
{
    if (!(r->flags & ROUTE_WRITE))
        return 0;
    if (!tokens || tokens_count(tokens) == 0) {
        http_reply_error_default(rp, ERR_WRITES_DISABLED);
        return -1;
    }
    if (copies > 1) {
        http_reply_error(rp, ERR_UNAUTHORIZED,
                         "The request has %d Authorization headers: send exactly one.", copies);
        http_reply_header(rp, "WWW-Authenticate",
                          "Bearer realm=\"rankd\", error=\"invalid_request\"");
        return -1;
    }
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0) {
        http_reply_error_default(rp, ERR_UNAUTHORIZED);
        http_reply_header(rp, "WWW-Authenticate", "Bearer realm=\"rankd\"");
        return -1;
    }
    const char *given = authorization + 7;
    struct tokens_grant *g = malloc(sizeof(*g));
    if (!g) {
        http_reply_errno(rp, -ENOMEM);
        return -1;
    }
    if (!tokens_check(tokens, given, strlen(given), g)) {
        free(g);
        http_reply_error_default(rp, ERR_FORBIDDEN);
        return -1;
    }
    rq->grant = g;
    char scope[TOKENS_BOARD_MAX + 16];
    enum tokens_need need = (r->flags & ROUTE_SCORES)    ? TOKENS_NEED_BOARD
                            : (r->flags & ROUTE_RECORDS) ? TOKENS_NEED_RECORDS
                                                         : TOKENS_NEED_ADMIN;
    /* a score write without a board in its path (POST /scores): the handler asks, per board */
    const char *board = need == TOKENS_NEED_BOARD && rq->nparams > 0 ? rq->params[0] : NULL;
    if (need == TOKENS_NEED_BOARD && (!board || !board_name(board)))
        return 0; /* no board in the path, or a 400 invalid_board from the handler */
    if (!tokens_allows(g, need, board, scope, sizeof(scope))) {
        insufficient(rp, scope);
        return -1;
    }
    return 0;
}

int auth_board(const struct http_request *rq, const char *board, struct http_reply *rp)
{
    char scope[TOKENS_BOARD_MAX + 16] = "scores";
    if (rq->grant && tokens_allows(rq->grant, TOKENS_NEED_BOARD, board, scope, sizeof(scope)))
        return 0;
    insufficient(rp, scope);
    return -1;
}

int auth_listener_serves(int listener, const struct route *r)
{
    if (listener == AUTH_LISTENER_PUBLIC)
        return !(r->flags & ROUTE_ADMIN);
    if (listener == AUTH_LISTENER_ADMIN)
        return (r->flags & (ROUTE_ADMIN | ROUTE_PROBE)) != 0;
    return 1;
}
