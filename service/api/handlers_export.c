/* handlers_export.c -- GET /boards/{board}/export; see handlers_export.h. */
#include "handlers_export.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "board.h"
#include "export.h"
#include "handlers_common.h"
#include "render.h"
#include "worker.h"

/* One export request: the snapshot, then the streamed body. Lives until the body is done with
 * (its free) and no read is in flight, whichever comes last. */
struct export_req {
    struct export_job job; /* first: export.c hands it back */
    struct board_settings_job sj;
    struct http_request *rq; /* until the reply is answered */
    struct http_reply *rp;
    struct http_async *async;
    const char *period;
    char board[BOARD_NAME_LEN_MAX + 1];
    /* the body */
    char *chunk; /* NDJSON of the rows read last, owned */
    size_t len, off;
    int64_t next;           /* the next rank to read, 0-based */
    struct http_body *body; /* waiting for a read, or NULL */
    int reading, finished, failed, detached, released;
    int head; /* HEAD: the GET's headers, X-Export-Total a count of the set, no snapshot */
};

static void req_release(struct export_req *e)
{
    if (!e->released)
        export_release(&e->job);
    e->released = 1;
}

static void req_free(struct export_req *e)
{
    req_release(e);
    free(e->chunk);
    free(e);
}

/* Rows read: the next lines, the end, or a failure; the connection goes on. */
static void rows_read(void *arg, int rc, const struct board_item *items, size_t n)
{
    struct export_req *e = arg;
    e->reading = 0;
    if (e->detached) { /* the reply is gone (the client left): nothing to send */
        req_free(e);
        return;
    }
    free(e->chunk);
    e->chunk = NULL;
    e->len = e->off = 0;
    /* n 0: rows the snapshot counted are gone (its TTL, an UNLINK): cut, as for a fault */
    if (rc || n == 0 ||
        !(e->chunk = render_export_rows(items, n, e->job.track_updated_at, &e->len)))
        e->failed = 1;
    else
        e->next += (int64_t)n;
    struct http_body *b = e->body;
    e->body = NULL;
    if (b)
        http_body_ready(b);
}

static long body_read(void *arg, struct http_body *body, char *buf, size_t max)
{
    struct export_req *e = arg;
    if (e->off < e->len) {
        size_t n = e->len - e->off < max ? e->len - e->off : max;
        memcpy(buf, e->chunk + e->off, n);
        e->off += n;
        return (long)n;
    }
    if (e->finished)
        return -1;
    if (e->failed)
        return -2;
    if (!e->reading) {
        if (e->next >= e->job.total) { /* every row sent: the snapshot can go */
            e->finished = 1;
            req_release(e);
            return -1;
        }
        int64_t left = e->job.total - e->next; /* past the total: members added since (+inf) */
        int count = left < EXPORT_READ_CHUNK ? (int)left : EXPORT_READ_CHUNK;
        if (export_read(&e->job, e->next, count, rows_read, e))
            return -2;
        e->reading = 1;
    }
    e->body = body;
    return 0;
}

static void body_free(void *arg)
{
    struct export_req *e = arg;
    if (e->reading) {
        e->detached = 1; /* freed when the read comes back */
        e->body = NULL;
        return;
    }
    req_free(e);
}

static void snapshot_done(struct export_job *j, int rc)
{
    struct export_req *e = (struct export_req *)j;
    struct http_async *async = e->async;
    if (rc) {
        struct http_errno_args a = {.board = e->board};
        http_reply_errno_in(e->rp, HTTP_ERRNO_BOARD, rc, &a);
        req_free(e);
        http_async_done(async);
        return;
    }
    char total[24];
    snprintf(total, sizeof(total), "%" PRId64, j->total);
    struct http_body_source src = {.read = body_read, .free = body_free, .arg = e};
    e->finished = e->head; /* HEAD: the GET's headers; httpd sends no body */
    http_reply_stream(e->rp, 200, "application/x-ndjson", &src);
    http_reply_header(e->rp, "X-Export-Total", total);
    http_reply_header(e->rp, "Cache-Control", "no-store");
    e->rq = NULL;
    e->rp = NULL;
    e->async = NULL;
    http_async_done(async);
}

/* The settings are known: which set, then the snapshot. */
static void export_begin(struct export_req *e, const struct board_settings *s, int exists)
{
    struct board_model *m = api_ctx_of(e->rq)->model;
    int rc = board_where_settled(m, e->board, e->period, s, exists, &e->job.where);
    if (rc == 0) {
        e->job.conn = worker_writes(http_async_worker(e->async));
        e->job.board = e->board;
        e->job.layout = s->layout;
        e->job.track_updated_at = s->track_updated_at;
        e->job.call_timeout_ms = api_ctx_of(e->rq)->request_timeout_ms;
        e->job.done = snapshot_done;
        rc = e->head ? export_count(m, &e->job) : export_snapshot(m, &e->job);
    }
    if (rc) {
        struct http_async *async = e->async;
        handlers_reply_board_errno(e->rp, rc, e->board, NULL);
        req_free(e);
        http_async_done(async);
    }
}

static void settings_read(struct board_settings_job *sj, int rc)
{
    struct export_req *e =
        (struct export_req *)(void *)((char *)sj - offsetof(struct export_req, sj));
    if (rc) {
        struct http_async *async = e->async;
        handlers_reply_board_errno(e->rp, rc, e->board, NULL);
        req_free(e);
        http_async_done(async);
        return;
    }
    export_begin(e, &sj->settings, sj->exists);
}

void handle_export_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board, *period;
    if (handlers_board_param(rq, rp, &board) || handlers_period_arg(rq, rp, &period)) {
        handlers_answered(async);
        return;
    }
    struct export_req *e = calloc(1, sizeof(*e));
    if (!e) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    e->rq = rq;
    e->rp = rp;
    e->async = async;
    e->period = period;
    e->head = strcmp(rq->method, "HEAD") == 0;
    util_copy(e->board, sizeof(e->board), board);
    struct board_settings s;
    int exists = 0;
    /* a view that says "no board" may predate the write that made it: read it then */
    if (board_settings_cached(api_ctx_of(rq)->model, board, &s, &exists) == 0 && exists) {
        export_begin(e, &s, exists);
        return;
    }
    e->sj = (struct board_settings_job){
        .board = e->board, .deadline_ms = rq->deadline_ms, .done = settings_read};
    int rc = board_settings_submit(api_ctx_of(rq)->model, worker_writes(http_async_worker(async)),
                                   &e->sj);
    if (rc) {
        handlers_reply_board_errno(rp, rc, board, NULL);
        req_free(e);
        handlers_answered(async);
    }
}
