/*
 * handlers_read_int.h -- what the read handlers' two files share (service/api/handlers_read*.c,
 * and watch.c for the event streams of score ranges): the parsed rank arguments, the start of a
 * walk, and a walk's read without a request. The contract is handlers_read.h.
 */
#ifndef RANKD_HANDLERS_READ_INT_H
#define RANKD_HANDLERS_READ_INT_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "board.h"
#include "cursor.h"
#include "handlers_common.h"
#include "handlers_read.h"
#include "pages.h"
#include "rank.h"
#include "render.h"
#include "request.h"
#include "util.h"
#include "validate.h"
#include "watch.h"

/* The canonical page request of GET /rank and GET /boards/{board}/rank. */
struct rank_args {
    const char *board;
    const char *period;  /* NULL: the current one */
    int64_t page, size;  /* size 0: the board's page size */
    int64_t min_version; /* 0: any page; else never one computed before this write counter */
    enum rank_type rank;
    /* a walk (walk.lua, never cached: always read after every write): a score range and/or a
     * cursor */
    int walk;
    enum board_walk from; /* page, after or before */
    struct cursor cursor; /* after, before */
    int has_min, has_max; /* the score range's bounds, as literals */
    struct json_number min, max;
    /* with=: the members read with the page (0..BOARD_WITH_MAX ids, each once; owned:
     * request_list_free) */
    struct request_list with;
};

/* ---------------------------------------------------------------- lent between the files */

struct worker;

/* handlers_read_one.c */
void walk_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                const struct rank_args *a);

/* handlers_read_one.c: the `with` members of a page served from the cache (lookup.lua, one
 * more command), put in its body and answered; takes pr (its body) and the ids' list. */
void with_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                struct rank_args *a, struct page_reply *pr);

/* handlers_read.c: the reply of a page read with `with` (its body holds them): ETag of the
 * whole body, no-cache (the members are read live), 304 when If-None-Match matches; takes pr. */
void with_reply(struct http_request *rq, struct http_reply *rp, struct page_reply *pr);

/* A score range's page read with no request (an event stream's, watch.c): the walk `a` (a page
 * by number of a score range, no cursor; a's board and period borrowed until done) on worker
 * wk's read connection (the calling event thread's), each round trip by deadline_ms. done(arg,
 * body, etag) is called once, later, on this thread: body is the page's JSON exactly as GET
 * answers it (malloc'd, the callee's) and etag its ETag (walk_etag; borrowed for the call), or
 * body and etag NULL with the error GET would answer in rp (a 4xx refusal: the
 * board gone, a bound the board's layout refuses; a Redis fault's 503; a 500). Returns 0 (done
 * will be called), or an errno with nothing sent, rp untouched and done never called. */
int walk_read_submit(const struct api_ctx *ctx, const struct worker *wk, int64_t deadline_ms,
                     const struct rank_args *a, struct http_reply *rp,
                     void (*done)(void *arg, char *body, const char *etag), void *arg);

/* The `with` members of a page served from the cache, read with no request (an event stream's,
 * watch.c) as with_start reads them: ids[0..n) (1..BOARD_WITH_MAX, each once, borrowed until
 * done) of the page pr (taken, even on failure) of a's board, period, size and rank. done(arg,
 * body, etag) as walk_read_submit's: the page with its members as GET answers it, and its ETag
 * (GET's); or NULL with the error in rp. Returns 0, or an errno with nothing sent. */
int with_read_submit(const struct api_ctx *ctx, const struct worker *wk, int64_t deadline_ms,
                     const struct rank_args *a, const char *const *ids, const size_t *lens,
                     size_t n, struct page_reply *pr, struct http_reply *rp,
                     void (*done)(void *arg, char *body, const char *etag), void *arg);

#define WALK_ETAG_MAX 48 /* a score range page's ETag, quoted, with its NUL */

/* The strong ETag of a score range's page (FNV-1a of its JSON and its length: the same page,
 * the same tag; it names no version, the pages are never cached) into out[WALK_ETAG_MAX]. */
void walk_etag(const char *body, size_t len, char *out);

#endif
