/*
 * handlers_read.h -- the read endpoints: pages (GET /rank, GET /boards/{board}/rank), a member,
 * the entries around one, a record (GET /items/{id}). Each validates every argument first (a 400
 * without any Redis call), then reads on the event thread's own read connection without waiting
 * (pages.h, board.h) and renders the reply there (render.h). A read cut by a lost
 * connection is sent once more; past the request's deadline it is 503 redis_unavailable.
 */
#ifndef RANKD_HANDLERS_READ_H
#define RANKD_HANDLERS_READ_H

#include "http.h"

/** A page from memory (route_quick_fn): 1 when rp is filled (a 400, or an in-process tier
 *  hit), 0 to go on with handle_rank_async, with the parsed arguments left in rq->parsed for
 *  it. The board is the path's, else the board= argument. */
int handle_rank_quick(struct http_request *rq, struct http_reply *rp);

/** The page through the rank flow (pages_submit): a hit in one round trip, else computed. Runs
 *  after handle_rank_quick returned 0, and takes the arguments it parsed (rq->parsed). */
void handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** GET .../members/{id} and .../members/{id}/around: one script call on the read connection (a
 *  period this process cannot place: the settings first). Every read of one board below is
 *  served so, takes `period` and (when it returns ranks) `rank` (ordinal, competition, dense). */
void handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** GET /boards/{board}/around?score=S&size=M: the literal judged exactly as write scores are
 *  (422 invalid_score / score_out_of_range), under this process's view of the board's layout,
 *  which the script checks (judged again when it moved). */
void handle_around_score_async(struct http_request *rq, struct http_reply *rp,
                               struct http_async *async);

/** GET /boards/{board}/percentile?p=P and /top?percent=P: P from 0 to 100, at most 4 decimals;
 *  the ranks and counts computed exactly in the script (rank.h). */
void handle_percentile_async(struct http_request *rq, struct http_reply *rp,
                             struct http_async *async);
void handle_top_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** GET /boards/{board}/members?ids=a,b,c (at most 100, split on ',' before percent-decoding) and
 *  POST /boards/{board}/lookup {"ids":[...]} (at most 1000): one lookup.lua call. */
void handle_members_get_async(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async);
void handle_lookup_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** GET /members/{id}?boards=a,b,c (at most 20): one member_boards.lua call over the boards'
 *  keys (one Redis; in Redis Cluster it would be one call per board's node). */
void handle_member_boards_async(struct http_request *rq, struct http_reply *rp,
                                struct http_async *async);

/** GET /items/{id}: one HGET. */
void handle_item_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
