/*
 * handlers.h -- one function per endpoint of the HTTP API (schema/openapi.yaml).
 *
 * Each handler validates ALL of its input first (path params, query, body) and replies 4xx
 * without any Redis call when something is wrong; then it calls board.h; then it renders JSON
 * (render.h). No Redis and no MHD here. Handlers run on worker threads and may block, except the
 * _quick and _async variants, which run on the HTTP event threads and never wait. Replies go into
 * struct http_reply; errors use http_reply_error / http_reply_errno.
 */
#ifndef RANKD_HANDLERS_H
#define RANKD_HANDLERS_H

#include "http.h"

/** GET /healthz and GET /metrics, from memory (route_quick_fn: always 1). */
int handle_healthz(struct http_request *rq, struct http_reply *rp);
int handle_metrics(struct http_request *rq, struct http_reply *rp);
/** GET /readyz: a PING on the event thread's read connection (route_async_fn: always 1). */
int handle_readyz(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** GET /rank and GET /boards/{board}/rank (the board is the path's, else the board= argument). */
void handle_rank(struct http_request *rq, struct http_reply *rp);
/** The same from memory on an event thread: 1 when rp is filled (a 400, or an in-process tier
 *  hit), 0 to go on with handle_rank_async. */
int handle_rank_quick(struct http_request *rq, struct http_reply *rp);
/** Queue the page on the cache's batched hit path (route.h, route_async_fn). */
int handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** The control routes, each a board_ctl_job on the event thread's own connections
 *  (route_async_fn: always 1, the reply is made when the job ends). */
int handle_boards_list(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_board_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_board_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_scores_post(struct http_request *rq, struct http_reply *rp);
/** A JSON score write (one entry or a batch) on the event thread's own write connection; 0
 *  (NDJSON streams, no connection) when the worker must run handle_scores_post. */
int handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_scores_stream(struct http_request *rq, const char *data, size_t len,
                         struct http_reply *rp);
void handle_scores_stream_free(void *state);
/** The same on the event thread (route.h, route_stream_async_fn): a full chunk of lines is written
 *  on the thread's own write connection while the connection is suspended. */
/** rankd stops in the middle of a stream: a 503 shutting_down with the lines applied so far and
 *  the line up to which everything is settled. */
void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp);
int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async);
void handle_member_get(struct http_request *rq, struct http_reply *rp);
/** GET .../members/{id} and .../around as one script call on the event thread's own Redis
 *  connection (route.h, route_async_fn); 0 when the worker must run the blocking handler. */
int handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_member_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_around_get(struct http_request *rq, struct http_reply *rp);
int handle_board_reset(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_members_trim(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_item_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
int handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
