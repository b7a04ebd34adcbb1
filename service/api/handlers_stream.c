/* handlers_stream.c -- NDJSON score uploads; see handlers_stream.h. */
#include "handlers_stream.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * An upload (rq->stream_state): its lines (upload.h) and the chunks in flight. A full chunk is
 * sent as one write.lua call, and the body is read on while it runs: up to UPLOAD_CHUNKS_MAX
 * chunks are in flight (one on a Redis Cluster), so Redis applies a chunk while the next one is
 * read and parsed. A chunk sent while the one before it is in flight carries the upload's
 * sequence (board_write.h): Redis applies it only if that one was applied whole, so the first
 * chunk that fails stops the next one inside Redis, and the reply says exactly which lines were
 * applied. Chunks are settled in the order they were sent; a chunk refused for its predecessor
 * is sent again once that one is settled (a full tie group or a settings change cut it), or
 * dropped, its lines to be sent again, when that one failed.
 */
struct stream_flush;

struct stream {
    struct upload *u;
    struct stream_flush *flight[UPLOAD_CHUNKS_MAX]; /* oldest first */
    size_t nflight, max_flight;
    /* the request's, fixed at its start: chunks in flight outlive a connection that closes */
    struct board_model *model;
    struct worker *worker;
    int timeout_ms;
    char board[BOARD_NAME_LEN_MAX + 1];
    char token[BOARD_UPLOAD_TOKEN_MAX]; /* the upload's sequence key's name */
    int64_t next_chunk;
    /* valid while !orphan */
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    int held;      /* the stream function returned 1: http_stream_done is owed */
    int busy;      /* it returned 2: http_stream_idle is owed */
    int final;     /* the body ended: the reply and http_async_done are owed */
    int in_call;   /* inside the stream function: it tells the connection itself */
    int advancing; /* in stream_advance: a chunk that ends meanwhile is settled by its loop */
    int orphan;    /* the connection closed with chunks in flight: freed after the last */
    int failed;    /* a chunk failed (fault): the upload stops, the reply says where */
    int fault;
    int unknown;                  /* that chunk's outcome is unknown: so is any after it written */
    struct board_write_ties ties; /* what the chunks in write.lua's short layout assumed */
};

/* The write of one chunk of an upload. */
struct stream_flush {
    struct board_write_job w; /* first: board.c hands it back */
    struct board_write_target t;
    struct board_settings_job sj;
    struct stream *st;
    struct upload_chunk b;
    struct board_settings used;
    int64_t chunk; /* its number in the upload */
    int after;     /* sent behind a chunk in flight: refused unless that one was applied */
    int attempts;
    int ended; /* the write ended with rc */
    int rc;
};

static void stream_free_now(struct stream *st)
{
    for (size_t i = 0; i < st->nflight; i++) {
        upload_chunk_free(&st->flight[i]->b);
        free(st->flight[i]);
    }
    upload_free(st->u);
    free(st);
}

/* A token no other upload has (the sequence key's name): the time, the process, a counter. */
static void stream_token(char out[BOARD_UPLOAD_TOKEN_MAX])
{
    static _Atomic uint64_t counter;
    uint64_t v[2] = {(uint64_t)util_now_us() ^ ((uint64_t)getpid() << 44),
                     atomic_fetch_add(&counter, 1)};
    static const char hex[] = "0123456789abcdef";
    int k = 0;
    for (int w = 0; w < 2; w++)
        for (int sh = 60; sh >= 0; sh -= 4)
            out[k++] = hex[(v[w] >> sh) & 15];
    out[k] = '\0';
}

/* The upload of a request, created on its first chunk; NULL after a 500 in rp. */
static struct stream *stream_of(struct http_request *rq, struct http_reply *rp,
                                struct http_async *async, const char *board)
{
    if (rq->stream_state)
        return rq->stream_state;
    struct stream *st = calloc(1, sizeof(*st));
    if (!st || !(st->u = upload_new())) {
        free(st);
        http_reply_errno(rp, -ENOMEM);
        return NULL;
    }
    const struct api_ctx *ctx = api_ctx_of(rq);
    st->model = ctx->model;
    st->worker = http_async_worker(async);
    st->timeout_ms = ctx->request_timeout_ms;
    util_copy(st->board, sizeof(st->board), board);
    stream_token(st->token);
    /* on a cluster the sequence key would be a key that does not exist in a migrating slot:
     * one chunk at a time there, as a call of its own */
    st->max_flight = board_clustered(st->model) ? 1 : UPLOAD_CHUNKS_MAX;
    st->rq = rq;
    st->rp = rp;
    st->async = async;
    rq->stream_state = st;
    return st;
}

void handle_scores_stream_free(void *state)
{
    struct stream *st = state;
    if (!st)
        return;
    if (st->nflight) { /* the connection closed: the chunks in flight end without it */
        st->orphan = 1;
        st->rq = NULL;
        st->rp = NULL;
        st->async = NULL;
        return;
    }
    stream_free_now(st);
}

void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp)
{
    struct stream *st = rq->stream_state;
    if (st) { /* never with chunks in flight: the stop waits for them (http_stream_idle) */
        stream_fault(rp, st->u, 0);
        return;
    }
    http_reply_error(rp, ERR_SHUTTING_DOWN,
                     "rankd is shutting down: no line of the upload was applied.");
    http_reply_header(rp, "Retry-After", "1");
}

static int outcome_unknown(int rc)
{
    return rc == -ETIME || rc == -ETIMEDOUT || rc == -ECONNRESET;
}

static void flush_send(struct stream_flush *f, const struct board_settings *set);
static void flush_read_settings(struct stream_flush *f);

/* The connection is told what it is owed: with nothing in flight the reply (at the end, or
 * after a fault) and the read on; with room for a chunk, the read on. */
static void stream_notify(struct stream *st)
{
    if (st->orphan) {
        if (!st->nflight)
            stream_free_now(st);
        return;
    }
    if (st->in_call)
        return; /* the stream function returns what to do */
    if (st->nflight) {
        if (st->held && !st->failed && !st->final && st->nflight < st->max_flight) {
            st->held = 0; /* read on: busy since the first chunk in flight (returned 2) */
            http_stream_done(st->async);
        }
        return;
    }
    struct http_async *async = st->async;
    if (st->failed)
        stream_fault(st->rp, st->u, st->fault);
    else if (st->final)
        stream_reply(st->rp, st->u);
    if (st->busy) {
        st->busy = 0;
        http_stream_idle(async);
    }
    if (st->final)
        http_async_done(async); /* st is freed with the request */
    else if (st->held) {
        st->held = 0;
        http_stream_done(async); /* after a fault: the rest is dropped, then the reply */
    }
}

/* Settle the chunks whose writes ended, oldest first, then tell the connection. */
static void stream_advance(struct stream *st)
{
    if (st->advancing)
        return;
    st->advancing = 1;
    while (st->nflight && st->flight[0]->ended) {
        struct stream_flush *f = st->flight[0];
        if (f->rc == -EALREADY && !st->failed && !st->orphan) {
            /* refused for the one before it, which was settled since, whole: again, as the
             * oldest (no check); settled by this loop if it ends at once */
            f->ended = 0;
            f->after = 0;
            f->attempts = 0;
            flush_read_settings(f);
            continue;
        }
        if (f->rc == -EALREADY) /* its predecessor failed: never written */
            upload_drop(st->u, &f->b);
        else if (st->failed && st->unknown && (f->rc == 0 || f->rc == -EREMOTEIO))
            upload_settle(st->u, -ETIME, &f->used, &f->b); /* written behind one in doubt */
        else
            upload_settle(st->u, f->rc, &f->used, &f->b);
        if (f->rc && f->rc != -EALREADY && !st->failed) {
            st->failed = 1;
            st->fault = f->rc;
            st->unknown = outcome_unknown(f->rc);
        } else if (st->failed && st->fault == -EREMOTEIO && outcome_unknown(f->rc)) {
            /* behind a chunk applied whole but unconfirmed (--write-replicas), this one may be
             * applied: the reply says its lines are in doubt (write_outcome_unknown) */
            st->fault = f->rc;
            st->unknown = 1;
        }
        st->nflight--;
        for (size_t i = 0; i < st->nflight; i++)
            st->flight[i] = st->flight[i + 1];
        st->flight[st->nflight] = NULL;
        free(f);
    }
    st->advancing = 0;
    stream_notify(st);
}

static void flush_end(struct stream_flush *f, int rc)
{
    f->ended = 1;
    f->rc = rc;
    stream_advance(f->st);
}

static void flush_written_async(struct board_write_job *w, int rc);

static void flush_send(struct stream_flush *f, const struct board_settings *set)
{
    struct stream *st = f->st;
    f->used = *set;
    size_t ok = upload_chunk_entries(set, &f->b);
    if (!ok) {
        flush_end(f, 0);
        return;
    }
    f->t = (struct board_write_target){
        .board = st->board, .assumed = *set, .entries = f->b.be, .outcomes = f->b.out};
    int seq = st->max_flight > 1;
    f->w = (struct board_write_job){.targets = &f->t,
                                    .ntargets = 1,
                                    .n = ok,
                                    .flags = BOARD_WRITE_CREATE | BOARD_WRITE_BRIEF,
                                    .deadline_ms = util_now_ms() + st->timeout_ms,
                                    .upload = seq ? st->token : NULL,
                                    .upload_chunk = f->chunk,
                                    .upload_after = seq && f->after,
                                    .ties = seq ? &st->ties : NULL,
                                    .done = flush_written_async};
    int rc = board_write_submit(st->model, worker_writes(st->worker), &f->w);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

static void flush_written_async(struct board_write_job *w, int rc)
{
    struct stream_flush *f = (struct stream_flush *)w;
    upload_chunk_written(&f->b, w->handled, rc);
    if (w->handled > 0)
        upload_note_version(f->st->u, f->t.version);
    if (rc == -EAGAIN && ++f->attempts < 3 && !f->st->orphan) {
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

/* The settings this process saw in the last second, else read. */
static void flush_read_settings(struct stream_flush *f)
{
    struct stream *st = f->st;
    struct board_settings set;
    int exists = 0;
    if (f->attempts == 0 && board_settings_cached(st->model, st->board, &set, &exists) == 0) {
        flush_send(f, &set);
        return;
    }
    f->sj = (struct board_settings_job){.board = st->board,
                                        .deadline_ms = util_now_ms() + st->timeout_ms,
                                        .done = flush_settings_read};
    int rc = board_settings_submit(st->model, worker_writes(st->worker), &f->sj);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

/* The pending lines become a chunk in flight, sent (it may end at once). -ENOMEM: nothing
 * taken. */
static int flush_start(struct stream *st)
{
    struct stream_flush *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    int rc = upload_chunk_take(st->u, &f->b);
    if (rc) {
        free(f);
        return rc;
    }
    f->st = st;
    f->chunk = st->next_chunk++;
    f->after = st->nflight > 0;
    st->flight[st->nflight++] = f;
    flush_read_settings(f);
    return 0;
}

/* What the stream function returns once its chunk is sent: -1 with the fault's reply in rp when
 * nothing is left in flight, 1 to wait (no room for another chunk, or a fault waits for the
 * chunks in flight), 2 to read on while they run, 0 with none. */
static int stream_after_send(struct stream *st)
{
    if (st->failed && !st->nflight) {
        stream_fault(st->rp, st->u, st->fault);
        return -1;
    }
    if (st->failed || st->nflight >= st->max_flight) {
        st->held = 1;
        return 1;
    }
    if (!st->nflight)
        return 0;
    st->busy = 1;
    return 2;
}

int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async)
{
    const char *board;
    *used = 0;
    if (handlers_board_param(rq, rp, &board) || no_idempotency_key(rq, rp))
        return -1;
    struct stream *st = stream_of(rq, rp, async, board);
    if (!st)
        return -1;
    if (st->failed || st->nflight >= st->max_flight) { /* wait for the chunks in flight */
        st->held = 1;
        return 1;
    }
    int rc = upload_take(st->u, data, len, used);
    if (rc == 1) {
        st->in_call = 1;
        rc = flush_start(st);
        st->in_call = 0;
    }
    if (rc < 0 && !st->nflight) {
        http_reply_errno(rp, rc);
        return -1;
    }
    if (rc < 0 && !st->failed) { /* out of memory: the upload stops after the chunks in flight */
        st->failed = 1;
        st->fault = rc;
    }
    return stream_after_send(st);
}

void handle_scores_stream_end(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async)
{
    const char *board;
    if (handlers_board_param(rq, rp, &board) || no_idempotency_key(rq, rp)) {
        http_async_done(async);
        return;
    }
    struct stream *st = stream_of(rq, rp, async, board);
    if (!st) { /* the 500 is in rp */
        http_async_done(async);
        return;
    }
    size_t at = 0;
    int rc = upload_take(st->u, NULL, 0, &at);
    if (rc >= 0 && upload_pending(st->u) && !st->failed) {
        st->in_call = 1;
        rc = flush_start(st); /* replies when written */
        st->in_call = 0;
    }
    if (rc < 0 && !st->failed && st->nflight) {
        st->failed = 1;
        st->fault = rc;
    } else if (rc < 0) {
        http_reply_errno(rp, rc);
        http_async_done(async);
        return;
    }
    st->final = 1;
    stream_notify(st); /* the reply now, or when the chunks in flight are settled */
}
