/* handlers_stream.c -- NDJSON score uploads; see handlers_stream.h. */
#include "handlers_stream.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "board.h"
#include "handlers_common.h"
#include "request.h"
#include "upload.h"
#include "util.h"
#include "validate.h"
#include "worker.h"

/* An upload spans many write.lua calls, so it cannot be applied once as a whole: an
 * Idempotency-Key on it is refused (a client must not believe a retry is safe). 0, or -1 with
 * the 400 in rp. */
static int no_idempotency_key(const struct http_request *rq, struct http_reply *rp)
{
    if (!rq->idempotency_key)
        return 0;
    http_reply_error(rp, ERR_IDEMPOTENCY_NOT_SUPPORTED,
                     "An NDJSON upload cannot carry an Idempotency-Key: it is written in many "
                     "calls, so a retry cannot be applied once as a whole. Send batches of at "
                     "most %d entries as JSON ({\"entries\":[...]}), each with a key of its own.",
                     BOARD_BATCH_MAX);
    return -1;
}

/* The upload of a request, created on its first chunk; NULL after a 500 in rp. */
static struct upload *stream_of(struct http_request *rq, struct http_reply *rp)
{
    if (!rq->stream_state && !(rq->stream_state = upload_new()))
        http_reply_errno(rp, -ENOMEM);
    return rq->stream_state;
}

/* The reply of an upload cut by fault rc (upload_fault), or by rankd stopping (rc 0): the error,
 * and where the upload stands as numbers, for a client to resume from:
 * {"error": {"code", "message"},"applied","rejected_total","settled_through_line",
 *  "unknown_through_line"} (the last null when no chunk's outcome is in doubt). */
static void stream_fault(struct http_reply *rp, const struct upload *u, int rc)
{
    int retry_after_s = 0;
    enum err_id id = ERR_REDIS_UNAVAILABLE;
    char msg[VALIDATE_MSG_MAX];
    struct upload_cut cut;
    upload_fault(u, rc, &id, &retry_after_s, msg, sizeof(msg), &cut);
    request_utf8_sanitize(msg); /* a Redis error's text is quoted */
    int status = err_status(id);
    cJSON *doc = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "code", err_code(id));
    cJSON_AddStringToObject(err, "message", msg);
    cJSON_AddNumberToObject(doc, "applied", (double)cut.applied);
    cJSON_AddNumberToObject(doc, "rejected_total", (double)cut.rejected);
    cJSON_AddNumberToObject(doc, "settled_through_line", (double)cut.settled_line);
    if (cut.unknown_line)
        cJSON_AddNumberToObject(doc, "unknown_through_line", (double)cut.unknown_line);
    else
        cJSON_AddNullToObject(doc, "unknown_through_line");
    http_reply_json(rp, status, cJSON_PrintUnformatted(doc)); /* NULL (ENOMEM): a 500 */
    cJSON_Delete(doc);
    if (rp->status == status)
        http_reply_mark_error(rp, id, msg);
    if (retry_after_s > 0 && rp->status == status) {
        char v[16];
        snprintf(v, sizeof(v), "%d", retry_after_s);
        http_reply_header(rp, "Retry-After", v);
    }
}

/* The reply at the end of an upload. */
static void stream_reply(struct http_reply *rp, struct upload *u)
{
    http_reply_json(rp, 200, upload_reply(u));
}

void handle_scores_stream_free(void *state)
{
    upload_free(state);
}

void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp)
{
    struct upload *s = rq->stream_state;
    if (s) {
        stream_fault(rp, s, 0);
        return;
    }
    http_reply_error(rp, ERR_SHUTTING_DOWN,
                     "rankd is shutting down: no line of the upload was applied.");
    http_reply_header(rp, "Retry-After", "1");
}

/* The write of one chunk of an upload (handlers_stream.h). */
struct stream_flush {
    struct board_write_job w; /* first: board.c hands it back */
    struct board_write_target t;
    struct board_settings_job sj;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    struct upload *s;
    const char *board;
    struct upload_chunk b;
    struct board_settings used;
    int attempts;
    int final; /* the end of the stream: reply after it */
};

static void flush_end(struct stream_flush *f, int rc)
{
    struct upload *s = f->s;
    upload_settle(s, rc, &f->used, &f->b);
    upload_chunk_free(&f->b);
    struct http_async *async = f->async;
    int final = f->final;
    if (rc)
        stream_fault(f->rp, s, rc);
    else if (final)
        stream_reply(f->rp, s);
    free(f);
    if (final)
        http_async_done(async);
    else
        http_stream_done(async); /* read on (after an error: the rest is dropped, then rp) */
}

static void flush_written_async(struct board_write_job *w, int rc);
static void flush_read_settings(struct stream_flush *f);

static void flush_send(struct stream_flush *f, const struct board_settings *set)
{
    f->used = *set;
    size_t ok = upload_chunk_entries(f->s, set, &f->b);
    if (!ok) {
        flush_end(f, 0);
        return;
    }
    f->t = (struct board_write_target){
        .board = f->board, .assumed = *set, .entries = f->b.be, .outcomes = f->b.out};
    f->w = (struct board_write_job){.targets = &f->t,
                                    .ntargets = 1,
                                    .n = ok,
                                    .flags = BOARD_WRITE_CREATE | BOARD_WRITE_BRIEF,
                                    .deadline_ms =
                                        util_now_ms() + api_ctx_of(f->rq)->request_timeout_ms,
                                    .done = flush_written_async};
    int rc = board_write_submit(api_ctx_of(f->rq)->model,
                                worker_writes(http_async_worker(f->async)), &f->w);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

static void flush_written_async(struct board_write_job *w, int rc)
{
    struct stream_flush *f = (struct stream_flush *)w;
    upload_chunk_written(&f->b, w->handled, rc);
    if (w->handled > 0)
        upload_note_version(f->s, f->t.version);
    if (rc == -EAGAIN && ++f->attempts < 3) {
        flush_read_settings(f);
        return;
    }
    flush_end(f, rc);
}

static void flush_settings_read(struct board_settings_job *sj, int rc)
{
    struct stream_flush *f =
        (struct stream_flush *)(void *)((char *)sj - offsetof(struct stream_flush, sj));
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
    else
        flush_send(f, &sj->settings);
}

static void flush_read_settings(struct stream_flush *f)
{
    f->sj = (struct board_settings_job){.board = f->board,
                                        .deadline_ms =
                                            util_now_ms() + api_ctx_of(f->rq)->request_timeout_ms,
                                        .done = flush_settings_read};
    int rc = board_settings_submit(api_ctx_of(f->rq)->model,
                                   worker_writes(http_async_worker(f->async)), &f->sj);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

/* Start writing the pending lines; the flush ends the suspension (or the request, if final). */
static void flush_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                        struct upload *s, const char *board, int final)
{
    struct stream_flush *f = calloc(1, sizeof(*f));
    if (!f || upload_chunk_new(&f->b, upload_pending(s))) {
        if (f)
            upload_chunk_free(&f->b);
        free(f);
        http_reply_errno(rp, -ENOMEM);
        if (final)
            http_async_done(async);
        else
            http_stream_done(async);
        return;
    }
    *f = (struct stream_flush){
        .rq = rq, .rp = rp, .async = async, .s = s, .board = board, .b = f->b, .final = final};
    struct board_settings set;
    int exists = 0;
    if (board_settings_cached(api_ctx_of(rq)->model, board, &set, &exists) == 0)
        flush_send(f, &set);
    else
        flush_read_settings(f);
}

int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async)
{
    const char *board;
    *used = 0;
    if (handlers_board_param(rq, rp, &board) || no_idempotency_key(rq, rp))
        return -1;
    struct upload *s = stream_of(rq, rp);
    if (!s)
        return -1;
    int rc = upload_take(s, data, len, used);
    if (rc < 0) {
        http_reply_errno(rp, rc);
        return -1;
    }
    if (rc == 0)
        return 0; /* all of it read: more, please */
    flush_start(rq, rp, async, s, board, 0);
    return 1;
}

void handle_scores_stream_end(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async)
{
    const char *board;
    if (handlers_board_param(rq, rp, &board) || no_idempotency_key(rq, rp)) {
        http_async_done(async);
        return;
    }
    struct upload *s = stream_of(rq, rp);
    size_t at = 0;
    int rc = s ? upload_take(s, NULL, 0, &at) : -1;
    if (rc < 0) {
        if (s)
            http_reply_errno(rp, rc);
        http_async_done(async);
        return;
    }
    if (upload_pending(s)) {
        flush_start(rq, rp, async, s, board, 1); /* replies when written */
        return;
    }
    stream_reply(rp, s);
    http_async_done(async);
}
