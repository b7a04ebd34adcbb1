/* handlers_common.c -- checks and replies shared by the handlers; see handlers_common.h. */
#include "handlers_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "period.h"
#include "request.h"
#include "worker.h"

int handlers_board_param(struct http_request *rq, struct http_reply *rp, const char **board)
{
    if (!board_name_valid(rq->params[0], rq->param_len[0]) ||
        strlen(rq->params[0]) != rq->param_len[0]) {
        http_reply_error(rp, ERR_INVALID_BOARD,
                         "board must be 1 to %d characters from A-Z, a-z, 0-9, '.', '_' and '-'.",
                         BOARD_NAME_LEN_MAX);
        return -1;
    }
    *board = rq->params[0];
    return 0;
}

int handlers_id_param(struct http_request *rq, int idx, struct http_reply *rp)
{
    if (!request_id_valid(rq->params[idx], rq->param_len[idx])) {
        http_reply_error(rp, ERR_INVALID_ID,
                         "id must be 1 to %d bytes of valid UTF-8 without control characters.",
                         BOARD_ID_LEN_MAX);
        return -1;
    }
    return 0;
}

int handlers_count_arg(struct http_request *rq, struct http_reply *rp, const char *name,
                       int64_t max, int64_t *out)
{
    const char *v = NULL;
    int n = http_arg(rq, name, &v);
    if (n == 0)
        return 0;
    if (n > 1) {
        http_reply_error(rp, ERR_INVALID_PARAMETER, "%s was given %d times; give it once.", name,
                         n);
        return -1;
    }
    if (request_parse_count(v, max, out)) {
        http_reply_error(rp, ERR_INVALID_PARAMETER, "%s must be a whole number from 1 to %lld.",
                         name, (long long)max);
        return -1;
    }
    return 0;
}

/* The reply to a board call's errno (http.h's table: board, member, period, Redis faults). */
void handlers_reply_board_errno(struct http_reply *rp, int rc, const char *board, const char *id)
{
    struct http_errno_args a = {.board = board, .id = id};
    http_reply_errno_in(rp, HTTP_ERRNO_BOARD, rc, &a);
}

/* handlers_reply_board_errno for a write: a timeout after it was sent may have applied it. */
void handlers_reply_write_errno(struct http_reply *rp, int rc, const char *board, const char *id)
{
    struct http_errno_args a = {.board = board, .id = id};
    http_reply_errno_in(rp, HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD, rc, &a);
}

int handlers_period_arg(struct http_request *rq, struct http_reply *rp, const char **period)
{
    *period = NULL;
    int n = http_arg(rq, "period", period);
    if (n > 1) {
        http_reply_error(rp, ERR_INVALID_PARAMETER, "period was given %d times; give it once.", n);
        return -1;
    }
    if (n == 1 && strlen(*period) >= PERIOD_ID_MAX) {
        http_reply_error(rp, ERR_INVALID_PERIOD, "period is too long to be a period id.");
        return -1;
    }
    return 0;
}

int handlers_rank_arg(struct http_request *rq, struct http_reply *rp, enum rank_type *rank)
{
    const char *v = NULL;
    *rank = RANK_ORDINAL;
    int n = http_arg(rq, "rank", &v);
    if (n == 0)
        return 0;
    if (n > 1 || rank_type_parse(v, rank)) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "rank must be given once: ordinal (the default), competition or dense.");
        return -1;
    }
    return 0;
}

int handlers_required_arg(struct http_request *rq, struct http_reply *rp, const char *name,
                          const char **value, const char **raw)
{
    int n = http_arg(rq, name, value);
    if (raw && n)
        http_arg_raw(rq, name, raw);
    if (n != 1) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "%s must be given once (it was given %d times).", name, n);
        return -1;
    }
    return 0;
}

cJSON *handlers_parse_body(struct http_request *rq, struct http_reply *rp)
{
    if (rq->body.len == 0) {
        http_reply_error_default(rp, ERR_INVALID_JSON);
        return NULL;
    }
    if (request_json_has_nul(rq->body.data, rq->body.len)) {
        /* cJSON would end such a string early: the id written would not be the id sent */
        http_reply_error(rp, ERR_INVALID_JSON, "The body must not contain NUL (raw or \\u0000).");
        return NULL;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(rq->body.data, rq->body.len + 1, &end, 1);
    size_t at = end ? (size_t)(end - rq->body.data) : 0;
    /* every number keeps its literal: scores, settings and records are judged by its digits */
    int rc = doc ? json_number_annotate(doc, rq->body.data, rq->body.len, &at) : -EINVAL;
    if (rc == -ENOMEM)
        http_reply_errno(rp, rc);
    else if (rc)
        http_reply_error(rp, ERR_INVALID_JSON, "The body is not valid JSON (near byte %zu).", at);
    if (rc) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return doc;
}

void handlers_answered(struct http_async *async)
{
    http_async_done(async);
}

void handlers_ctl_done(struct board_ctl_job *job, int rc)
{
    struct handlers_ctl *c = (struct handlers_ctl *)job;
    struct http_async *async = c->async;
    if (c->reply) /* NULL: answered already */
        c->reply(c, rc);
    board_list_free(job->list);
    free(job->record);
    free(c->json);
    free(c);
    http_async_done(async);
}

struct handlers_ctl *handlers_ctl_new(struct http_request *rq, struct http_reply *rp,
                                      struct http_async *async,
                                      void (*reply)(struct handlers_ctl *c, int rc))
{
    struct handlers_ctl *c = calloc(1, sizeof(*c));
    if (!c) {
        http_reply_errno(rp, -ENOMEM);
        http_async_done(async);
        return NULL;
    }
    c->rq = rq;
    c->rp = rp;
    c->async = async;
    c->reply = reply;
    return c;
}

void handlers_ctl_start(struct handlers_ctl *c, enum board_ctl op)
{
    c->job.deadline_ms = c->rq->deadline_ms;
    c->job.chunk_timeout_ms = api_ctx_of(c->rq)->request_timeout_ms;
    c->job.done = handlers_ctl_done;
    int rc = board_ctl_submit(api_ctx_of(c->rq)->model, worker_reads(http_async_worker(c->async)),
                              worker_writes(http_async_worker(c->async)), op, &c->job);
    if (rc)
        handlers_ctl_done(&c->job, rc);
}

void handlers_reply_204(struct handlers_ctl *c, int rc)
{
    if (rc)
        handlers_reply_write_errno(c->rp, rc, c->job.board, c->job.id);
    else
        c->rp->status = 204;
}
