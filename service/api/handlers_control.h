/*
 * handlers_control.h -- the service and control endpoints: /healthz and /metrics (from memory),
 * /readyz and /admin/redis (admin.h), the board list, a board's settings (GET, PUT), DELETE of a
 * board, its reset, its trim, DELETE of a member. Each validates every argument first (a 400
 * without any Redis call), then runs one control operation on the event thread's own connections
 * (board_ctl_submit: a short chain of calls, each reply starting the next) and renders the reply
 * when it ends. A write sent and not answered is 503 write_outcome_unknown; one never sent is 503
 * redis_unavailable.
 */
#ifndef RANKD_HANDLERS_CONTROL_H
#define RANKD_HANDLERS_CONTROL_H

#include "http.h"

/** GET /healthz and GET /metrics, from memory (route_quick_fn: always 1). */
int handle_healthz(struct http_request *rq, struct http_reply *rp);
int handle_metrics(struct http_request *rq, struct http_reply *rp);

/** GET /readyz: a PING on the read connection. GET /admin/redis: the report's five commands. */
void handle_readyz(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** GET /boards, GET/PUT/DELETE /boards/{board}, POST .../reset, DELETE .../members?keep|below
 *  (by score: the settings are read first to place the score), DELETE .../members/{id}. */
void handle_boards_list(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_board_reset(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_members_trim(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_member_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
