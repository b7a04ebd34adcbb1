/*
 * handlers_common.h -- what every group of handlers shares: the checks of path parameters and
 * query arguments (each a 400 in the reply when wrong), the JSON body, the errno -> reply map of
 * the board model's errors, and the one-operation control request (a board_ctl_job on the event
 * thread's own connections, its reply rendered when it ends).
 *
 * The checks return 0, or -1 after filling the reply with the 400 (then answer it:
 * handlers_answered). No Redis here.
 */
#ifndef RANKD_HANDLERS_COMMON_H
#define RANKD_HANDLERS_COMMON_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "http.h"
#include "json_number.h"

/** The board path parameter (params[0]) in *board (borrowed from rq); 0 or a 400 invalid_board. */
int handlers_board_param(struct http_request *rq, struct http_reply *rp, const char **board);

/** The id path parameter params[idx]; 0 or a 400 invalid_id. */
int handlers_id_param(struct http_request *rq, int idx, struct http_reply *rp);

/** An optional count argument in 1..max; *out keeps its value when absent. 0 or a 400
 *  invalid_parameter (given twice, junk, zero, too large). */
int handlers_count_arg(struct http_request *rq, struct http_reply *rp, const char *name,
                       int64_t max, int64_t *out);

/** The optional `period` argument in *period (NULL when absent; borrowed); 0 or a 400. */
int handlers_period_arg(struct http_request *rq, struct http_reply *rp, const char **period);

/** The optional `rank` argument (ordinal, competition or dense: rank.h) in *rank (ordinal when
 *  absent); 0 or a 400 invalid_parameter. */
int handlers_rank_arg(struct http_request *rq, struct http_reply *rp, enum rank_type *rank);

/** The argument `name` given once (a 400 invalid_parameter when absent or repeated): its value
 *  in *value (borrowed), and with raw its undecoded form in *raw. 0 or -1. */
int handlers_required_arg(struct http_request *rq, struct http_reply *rp, const char *name,
                          const char **value, const char **raw);

/** The reply for a negative errno of board.h, from http.h's errno table (scope board): 404
 *  board_not_found (-ENOENT), member_not_found (-ENODATA, naming id), period_not_found
 *  (-ESRCH); 400 invalid_period (-EINVAL), board_has_no_periods (-ENOTSUP); the Redis faults. */
void handlers_reply_board_errno(struct http_reply *rp, int rc, const char *board, const char *id);

/** The same for a write (scopes write and board): a write sent and not answered (-ETIME,
 *  -ECONNRESET) is 503 write_outcome_unknown, never "retry safely". */
void handlers_reply_write_errno(struct http_reply *rp, int rc, const char *board, const char *id);

/** The JSON body parsed, every number keeping its literal (json_number_annotate); NULL after a
 *  400 invalid_json (empty, a NUL, not JSON) or 500 in rp. Free with cJSON_Delete. */
cJSON *handlers_parse_body(struct http_request *rq, struct http_reply *rp);

/** Answer a request whose reply is filled (a 4xx decided before any Redis call): http_async_done.
 */
void handlers_answered(struct http_async *async);

/** A control request: one board_ctl_job (first: board.c hands it back), then `reply`. */
struct handlers_ctl {
    struct board_ctl_job job;
    struct board_settings_job sj; /**< a step of the caller's before the job (trim by score) */
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    void (*reply)(struct handlers_ctl *c, int rc); /**< fills rp from the job's outcome */
    struct board_settings_patch patch;             /**< PUT /boards: the job's patch */
    struct json_number below;                      /**< trim by score: the score asked */
    char *json;                                    /**< PUT /items: the record (owned) */
};

/** A new control request answered by `reply`; NULL after a 500 (answered already). */
struct handlers_ctl *handlers_ctl_new(struct http_request *rq, struct http_reply *rp,
                                      struct http_async *async,
                                      void (*reply)(struct handlers_ctl *c, int rc));

/** Start operation `op` of c (deadline: the request's; a trim's chunks: --request-timeout-ms
 *  each) on the event thread's connections; a failure to send is answered at once. */
void handlers_ctl_start(struct handlers_ctl *c, enum board_ctl op);

/** c's job ended with rc: c->reply (when not NULL) fills the reply, c is freed, the request is
 *  answered. board_ctl_job's done; also the way to end c before its job started. */
void handlers_ctl_done(struct board_ctl_job *job, int rc);

/** A reply of 204, or the write's error (handlers_reply_write_errno). */
void handlers_reply_204(struct handlers_ctl *c, int rc);

#endif
