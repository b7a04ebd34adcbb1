/*
 * handlers.h -- one function per endpoint of the HTTP API (schema/openapi.yaml).
 *
 * Each handler validates ALL of its input first (path params, query, body) and replies 4xx
 * without any Redis call when something is wrong; then it calls board.h, page_cache.h or
 * admin.h, whose calls go out on the event thread's own connections; then it renders JSON
 * (render.h). No MHD here. Every handler runs on the HTTP event thread that read the request and
 * never waits: the quick ones (route_quick_fn) answer from memory, the others (route_async_fn)
 * call http_async_done once, now (a 4xx) or when their last Redis reply has been taken. Replies
 * go into struct http_reply; errors use http_reply_error / http_reply_errno.
 */
#ifndef RANKD_HANDLERS_H
#define RANKD_HANDLERS_H

#include "http.h"

/** GET /healthz and GET /metrics, from memory (route_quick_fn: always 1). */
int handle_healthz(struct http_request *rq, struct http_reply *rp);
int handle_metrics(struct http_request *rq, struct http_reply *rp);
/** GET /readyz: a PING on the event thread's read connection. */
void handle_readyz(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** GET /rank and GET /boards/{board}/rank (the board is the path's, else the board= argument),
 *  from memory: 1 when rp is filled (a 400, or an in-process tier hit), 0 to go on with
 *  handle_rank_async. */
int handle_rank_quick(struct http_request *rq, struct http_reply *rp);
/** The page through the cache (page_cache_submit). */
void handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** GET .../members/{id} and .../around: one script call on the read connection. */
void handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** A JSON score write (one entry or a batch) on the write connection, or the end of an NDJSON
 *  upload (its last chunk, then the reply). */
void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);
/** An NDJSON upload's chunk (route_stream_async_fn): a full chunk of lines is written on the
 *  write connection while the connection is suspended. */
int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async);
void handle_scores_stream_free(void *state);
/** rankd stops in the middle of a stream: a 503 shutting_down with the lines applied so far and
 *  the line up to which everything is settled. */
void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp);
/** The control routes, each a board_ctl_job on the event thread's own connections (trim by
 *  score reads the settings first). */
void handle_boards_list(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_member_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_reset(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_members_trim(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_item_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
