/* handlers_control.c -- service and control endpoints; see handlers_control.h. */
#include "handlers_control.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admin.h"
#include "api.h"
#include "board.h"
#include "exporter.h"
#include "handlers_common.h"
#include "json_number.h"
#include "period.h"
#include "render.h"
#include "request.h"
#include "validate.h"
#include "worker.h"

/* ---------------------------------------------------------------- operations */

int handle_healthz(struct http_request *rq, struct http_reply *rp)
{
    (void)rq;
    http_reply_json(rp, 200, strdup("{\"status\":\"ok\"}"));
    return 1;
}

/* /readyz or /admin/redis on the event thread's own connections (admin.h), its reply rendered
 * there. */
struct admin_request {
    struct admin_job job; /* first: admin.c hands it back */
    struct http_reply *rp;
    struct http_async *async;
    int ready; /* /readyz: the PING, then the write probe */
};

static void admin_request_end(struct admin_request *a)
{
    struct http_async *async = a->async;
    free(a);
    http_async_done(async);
}

/* /readyz's write probe answered: 200 all the same (Redis answers, reads are served); `writes`
 * says whether Redis accepts writes now: "refused" with the code writes answer
 * (insufficient_storage at maxmemory, primary_changed on a replica), "unknown" when the probe
 * itself failed (a write pause holds it past its 250 ms, say). */
static void write_probe_done(struct admin_job *job, int w)
{
    struct admin_request *a = (struct admin_request *)job;
    const char *writes = w == 0 ? "ok" : w == -EDQUOT || w == -EROFS ? "refused" : "unknown";
    const char *why = w == -EDQUOT  ? ",\"writes_error\":\"insufficient_storage\""
                      : w == -EROFS ? ",\"writes_error\":\"primary_changed\""
                                    : "";
    char body[128];
    snprintf(body, sizeof(body), "{\"status\":\"ready\",\"writes\":\"%s\"%s}", writes, why);
    http_reply_json(a->rp, 200, strdup(body));
    admin_request_end(a);
}

static void admin_request_done(struct admin_job *job, int rc)
{
    struct admin_request *a = (struct admin_request *)job;
    if (rc) {
        http_reply_errno(a->rp, rc);
    } else if (a->ready) {
        /* Redis answers: does it accept writes? On the write connection, with a deadline of its
         * own (admin.h), so a write pause never holds readiness up */
        job->done = write_probe_done;
        int w = admin_write_probe_submit(worker_writes(http_async_worker(a->async)), job);
        if (w == 0)
            return;
        write_probe_done(job, w);
        return;
    } else {
        http_reply_json(a->rp, 200, job->json); /* takes it */
    }
    admin_request_end(a);
}

static void admin_request(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                          int ready)
{
    struct admin_request *a = calloc(1, sizeof(*a));
    if (!a) {
        http_reply_errno(rp, -ENOMEM);
        http_async_done(async);
        return;
    }
    a->rp = rp;
    a->async = async;
    a->ready = ready;
    a->job.deadline_ms = rq->deadline_ms;
    a->job.done = admin_request_done;
    int rc = ready ? admin_ping_submit(worker_reads(http_async_worker(async)), &a->job)
                   : admin_redis_submit(worker_reads(http_async_worker(async)), &a->job);
    if (rc) {
        http_reply_errno(rp, rc);
        admin_request_end(a);
    }
}

/* 200 while Redis answers (reads are served), with what the write probe says. */
void handle_readyz(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    admin_request(rq, rp, async, 1);
}

void handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    admin_request(rq, rp, async, 0);
}

int handle_metrics(struct http_request *rq, struct http_reply *rp)
{
    struct buf out = {0};
    if (exporter_render(&api_ctx_of(rq)->metrics, rq->server, &out)) {
        buf_free(&out);
        http_reply_errno(rp, -ENOMEM);
        return 1;
    }
    rp->status = 200;
    rp->body = out;
    rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    return 1;
}

/* ---------------------------------------------------------------- boards */

/* ?cursor=: the registry cursor a previous page returned (decimal, 0 = the start). */
static int cursor_arg(struct http_request *rq, struct http_reply *rp, uint64_t *cursor)
{
    const char *v = NULL;
    int n = http_arg(rq, "cursor", &v);
    *cursor = 0;
    if (n == 0)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long c = n == 1 && v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
    if (n > 1 || !end || *end || errno) {
        http_reply_error(rp, ERR_INVALID_CURSOR,
                         "cursor must be given once, as the next_cursor of a previous page.");
        return -1;
    }
    *cursor = c;
    return 0;
}

static void boards_list_reply(struct handlers_ctl *c, int rc)
{
    if (rc)
        http_reply_errno(c->rp, rc);
    else
        http_reply_json(c->rp, 200, render_board_list(c->job.list));
}

void handle_boards_list(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    uint64_t cursor = 0;
    int64_t count = BOARD_LIST_COUNT_MAX;
    if (cursor_arg(rq, rp, &cursor) ||
        handlers_count_arg(rq, rp, "count", BOARD_LIST_COUNT_MAX, &count)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, boards_list_reply);
    if (!c)
        return;
    c->job.cursor = cursor;
    c->job.count = (int)count;
    handlers_ctl_start(c, BOARD_CTL_LIST);
}

/* A board's settings with its readable periods. */
static void reply_board(struct http_request *rq, struct http_reply *rp, int status,
                        const char *board, const struct board_info *info)
{
    char ids[PERIOD_RETAIN_MAX + 1][PERIOD_ID_MAX];
    int n = board_periods(api_ctx_of(rq)->model, &info->settings, ids, PERIOD_RETAIN_MAX + 1);
    http_reply_json(rp, status, render_board(board, info, (const char(*)[PERIOD_ID_MAX])ids, n));
}

static void board_get_reply(struct handlers_ctl *c, int rc)
{
    if (rc)
        handlers_reply_board_errno(c->rp, rc, c->job.board, NULL);
    else
        reply_board(c->rq, c->rp, 200, c->job.board, &c->job.info);
}

/* A control operation on {board} alone, answered by `reply`. */
static void board_op(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                     enum board_ctl op, void (*reply)(struct handlers_ctl *c, int rc))
{
    const char *board;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, reply);
    if (!c)
        return;
    c->job.board = board;
    handlers_ctl_start(c, op);
}

void handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    board_op(rq, rp, async, BOARD_CTL_INFO, board_get_reply);
}

/* ---------------------------------------------------------------- settings */

/* The settings of a PUT body (validate_settings; a named time zone must be one this process
 * can load from the system's tzdata); 0, or -1 after a 400 in rp. */
static int parse_settings(const cJSON *doc, struct board_settings_patch *p, struct board_model *m,
                          struct http_reply *rp)
{
    struct board_settings defaults;
    struct entry_error err;
    board_settings_default(&defaults);
    if (validate_settings(doc, &defaults, p, &err) != 0) {
        http_reply_error(rp, err.id, "%s", err.msg);
        return -1;
    }
    if (p->has_score_layout && p->value.layout.wide && board_clustered(m)) {
        http_reply_error(rp, ERR_INVALID_FIELD,
                         "score_layout 'wide' is not available on Redis Cluster; use 'packed' "
                         "(or tiebreak 'id' for the full score range).");
        return -1;
    }
    if (p->has_subscores && p->value.layout.nsub > 0 && board_clustered(m)) {
        http_reply_error(rp, ERR_INVALID_FIELD,
                         "subscores are not available on Redis Cluster (a board with sub-scores "
                         "is wide, and boards there are packed).");
        return -1;
    }
    if (p->has_track_updated_at && p->value.track_updated_at && board_clustered(m)) {
        http_reply_error(rp, ERR_INVALID_FIELD,
                         "track_updated_at is not available on Redis Cluster yet.");
        return -1;
    }
    if (p->has_tz && period_tz_bind(&p->value.tz, m->zones) != 0) {
        http_reply_error(rp, ERR_UNKNOWN_TIMEZONE,
                         "timezone '%.64s' is no time zone of this server's tz database.",
                         p->value.tz.name);
        return -1;
    }
    return 0;
}

static void board_put_reply(struct handlers_ctl *c, int rc)
{
    const char *board = c->job.board;
    struct http_errno_args a = {.board = board, .field = c->job.field};
    if (rc)
        http_reply_errno_in(c->rp, HTTP_ERRNO_SETTINGS | HTTP_ERRNO_WRITE, rc, &a);
    else
        reply_board(c->rq, c->rp, c->job.created ? 201 : 200, board, &c->job.info);
}

void handle_board_put(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    cJSON *doc = handlers_parse_body(rq, rp);
    if (!doc) {
        handlers_answered(async);
        return;
    }
    struct board_settings_patch patch;
    int bad = parse_settings(doc, &patch, api_ctx_of(rq)->model, rp);
    cJSON_Delete(doc);
    if (bad) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, board_put_reply);
    if (!c)
        return;
    c->patch = patch;
    c->job.board = board;
    c->job.patch = &c->patch;
    handlers_ctl_start(c, BOARD_CTL_PUT);
}

/* ---------------------------------------------------------------- delete, reset, trim */

void handle_board_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    board_op(rq, rp, async, BOARD_CTL_DELETE, handlers_reply_204);
}

void handle_member_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (handlers_board_param(rq, rp, &board) || handlers_id_param(rq, 1, rp)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, handlers_reply_204);
    if (!c)
        return;
    c->job.board = board;
    c->job.id = rq->params[1];
    c->job.id_len = rq->param_len[1];
    handlers_ctl_start(c, BOARD_CTL_MEMBER_DELETE);
}

/* ---------------------------------------------------------------- lifecycle */

void handle_board_reset(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    board_op(rq, rp, async, BOARD_CTL_RESET, handlers_reply_204);
}

/* DELETE /boards/{board}/members?keep=N or ?below=SCORE: trim the tail in chunks. */
static void trim_reply(struct handlers_ctl *c, int rc)
{
    if (rc) {
        handlers_reply_write_errno(c->rp, rc, c->job.board, NULL);
        return;
    }
    char body[64];
    snprintf(body, sizeof(body), "{\"removed\":%lld}", (long long)c->job.removed);
    http_reply_json(c->rp, 200, strdup(body));
}

/* below=SCORE: the board's settings turn the score into an order key, then the trim. */
static void trim_settings_read(struct board_settings_job *sj, int rc)
{
    struct handlers_ctl *c =
        (struct handlers_ctl *)(void *)((char *)sj - offsetof(struct handlers_ctl, sj));
    if (rc == 0 && !sj->exists)
        rc = -ENOENT;
    if (rc == 0 && validate_check_score(&sj->settings, &c->below, &c->job.below_key)) {
        http_reply_error(c->rp, ERR_INVALID_PARAMETER,
                         "below must be a score this board can hold (see GET /boards/%s).",
                         c->job.board);
        c->reply = NULL; /* the reply is the 400 */
        handlers_ctl_done(&c->job, 0);
        return;
    }
    if (rc) {
        handlers_ctl_done(&c->job, rc);
        return;
    }
    handlers_ctl_start(c, BOARD_CTL_TRIM);
}

/* DELETE /boards/{board}/members?keep=N or ?below=SCORE: trim the tail in chunks. */
void handle_members_trim(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board, *below = NULL;
    int64_t keep = -1;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    int nb = http_arg(rq, "below", &below);
    const char *keep_s = NULL;
    int nk = http_arg(rq, "keep", &keep_s);
    if (nb + nk != 1) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "give exactly one of keep=N (keep the top N, remove the rest) or "
                         "below=SCORE (remove every member whose score is worse).");
        handlers_answered(async);
        return;
    }
    int zero = keep_s && keep_s[0] && keep_s[strspn(keep_s, "0")] == '\0'; /* "0", "00"... */
    if (nk && (zero ? (keep = 0, 0) : request_parse_count(keep_s, INT64_C(1) << 53, &keep))) {
        http_reply_error(rp, ERR_INVALID_PARAMETER, "keep must be a whole number from 0.");
        handlers_answered(async);
        return;
    }
    /* a plain decimal (no exponent, hex, inf or spaces, which strtod would take), judged by its
     * digits like a score: 1.000000000000000001 is not 1 */
    struct json_number score;
    if (nb && json_number_parse_plain(below, strlen(below), &score)) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "below must be a score this board can hold (see GET /boards/%s).", board);
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, trim_reply);
    if (!c)
        return;
    c->job.board = board;
    c->job.keep = keep;
    if (!nb) {
        handlers_ctl_start(c, BOARD_CTL_TRIM);
        return;
    }
    c->below = score;
    c->sj = (struct board_settings_job){
        .board = board, .deadline_ms = rq->deadline_ms, .done = trim_settings_read};
    int rc = board_settings_submit(api_ctx_of(rq)->model, worker_reads(http_async_worker(async)),
                                   &c->sj);
    if (rc)
        handlers_ctl_done(&c->job, rc);
}
