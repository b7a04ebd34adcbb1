/* handlers.c -- the endpoints: validate everything, call board.h, render; see handlers.h. */
#include "handlers.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admin.h"
#include "board.h"
#include "json_number.h"
#include "metrics.h"
#include "ndjson.h"
#include "page_cache.h"
#include "period.h"
#include "render.h"
#include "request.h"
#include "server.h"
#include "util.h"

#define MSG_MAX 400
#define NDJSON_LINE_MAX (64L * 1024L)
/* A chunk of NDJSON lines is one write.lua call: bounded so it stays about 2 ms on Redis' main
 * thread (measured: 1000 lines with ~100-byte records took 5.9 ms, 5.9 us a line). */
#define NDJSON_CHUNK_LINES 300
#define NDJSON_CHUNK_BYTES (48UL * 1024UL)
#define REJECTED_SHOWN_MAX 1000

/* ---------------------------------------------------------------- shared validation */

/* The board path parameter (params[0]); 0 or a 400 in rp. */
static int board_param(struct http_request *rq, struct http_reply *rp, const char **board)
{
    if (!board_name_valid(rq->params[0], rq->param_len[0]) ||
        strlen(rq->params[0]) != rq->param_len[0]) {
        http_reply_error(rp, 400, "invalid_board",
                         "board must be 1 to %d characters from A-Z, a-z, 0-9, '.', '_' and '-'.",
                         BOARD_NAME_LEN_MAX);
        return -1;
    }
    *board = rq->params[0];
    return 0;
}

/* The id path parameter (params[idx]); 0 or a 400 in rp. */
static int id_param(struct http_request *rq, int idx, struct http_reply *rp)
{
    if (!request_id_valid(rq->params[idx], rq->param_len[idx])) {
        http_reply_error(rp, 400, "invalid_id",
                         "id must be 1 to %d bytes of valid UTF-8 without control characters.",
                         BOARD_ID_LEN_MAX);
        return -1;
    }
    return 0;
}

/* An optional count argument in 1..max; *out keeps its value when absent. 0 or a 400. */
static int count_arg(struct http_request *rq, struct http_reply *rp, const char *name, int64_t max,
                     int64_t *out)
{
    const char *v = NULL;
    int n = http_arg(rq, name, &v);
    if (n == 0)
        return 0;
    if (n > 1) {
        http_reply_error(rp, 400, "invalid_parameter", "%s was given %d times; give it once.", name,
                         n);
        return -1;
    }
    if (request_parse_count(v, max, out)) {
        http_reply_error(rp, 400, "invalid_parameter", "%s must be a whole number from 1 to %lld.",
                         name, (long long)max);
        return -1;
    }
    return 0;
}

static void reply_board_errno(struct http_reply *rp, int rc, const char *board, const char *id)
{
    if (rc == -ENOENT)
        http_reply_error(rp, 404, "board_not_found", "Board '%s' does not exist.", board);
    else if (rc == -ENODATA)
        http_reply_error(rp, 404, "member_not_found", "Board '%s' has no member '%.200s'.", board,
                         id ? id : "");
    else if (rc == -EINVAL)
        http_reply_error(rp, 400, "invalid_period",
                         "period must be an id of this board's kind: 2026-11-30T14 (hourly), "
                         "2026-11-30 (daily), 2026-W49 (weekly) or 2026-11 (monthly).");
    else if (rc == -ESRCH)
        http_reply_error(rp, 404, "period_not_found",
                         "Board '%s' has no readable period by that id: it is in the future or "
                         "older than the board's retain setting (GET /boards/%s lists them).",
                         board, board);
    else if (rc == -ENOTSUP)
        http_reply_error(rp, 400, "board_has_no_periods",
                         "Board '%s' has no periods (its period setting is none); leave out "
                         "period.",
                         board);
    else
        http_reply_errno(rp, rc);
}

/* reply_board_errno for a write: a timeout after it was sent may have applied it. */
static void reply_board_write_errno(struct http_reply *rp, int rc, const char *board,
                                    const char *id)
{
    if (rc == -ETIME || rc == -ECONNRESET)
        http_reply_write_errno(rp, rc);
    else
        reply_board_errno(rp, rc, board, id);
}

/* The optional `period` argument (NULL when absent); 0 or a 400 in rp. */
static int period_arg(struct http_request *rq, struct http_reply *rp, const char **period)
{
    *period = NULL;
    int n = http_arg(rq, "period", period);
    if (n > 1) {
        http_reply_error(rp, 400, "invalid_parameter", "period was given %d times; give it once.",
                         n);
        return -1;
    }
    if (n == 1 && strlen(*period) >= PERIOD_ID_MAX) {
        http_reply_error(rp, 400, "invalid_period", "period is too long to be a period id.");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- operations */

int handle_healthz(struct http_request *rq, struct http_reply *rp)
{
    (void)rq;
    http_reply_json(rp, 200, strdup("{\"status\":\"ok\"}"));
    return 1;
}

/* A probe on the event thread's own connection (admin.h), its reply rendered there. */
struct admin_request {
    struct admin_job job; /* first: admin.c hands it back */
    struct http_reply *rp;
    struct http_async *async;
};

static void admin_request_done(struct admin_job *job, int rc)
{
    struct admin_request *a = (struct admin_request *)job;
    struct http_async *async = a->async;
    if (rc)
        http_reply_errno(a->rp, rc);
    else if (job->ping)
        http_reply_json(a->rp, 200, strdup("{\"status\":\"ready\"}"));
    else
        http_reply_json(a->rp, 200, job->json); /* takes it */
    free(a);
    http_async_done(async);
}

static void admin_request(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                          int ping)
{
    struct admin_request *a = calloc(1, sizeof(*a));
    if (!a) {
        http_reply_errno(rp, -ENOMEM);
        http_async_done(async);
        return;
    }
    a->rp = rp;
    a->async = async;
    a->job.deadline_ms = rq->deadline_ms;
    a->job.done = admin_request_done;
    int rc = ping ? admin_ping_submit(http_async_store(async), &a->job)
                  : admin_redis_submit(http_async_store(async), &a->job);
    if (rc) {
        a->job.ping = ping;
        admin_request_done(&a->job, rc);
    }
}

void handle_readyz(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    admin_request(rq, rp, async, 1);
}

int handle_metrics(struct http_request *rq, struct http_reply *rp)
{
    struct buf out = {0};
    struct page_cache_stats cache;
    page_cache_stats(rq->app->pages, &cache);
    const struct rankd *app = rq->app;
    unsigned long errors = store_error_count(app->reads) + store_error_count(app->writes);
    if (app->cache_reads)
        errors += store_error_count(app->cache_reads) + store_error_count(app->cache_writes);
    int conns[HTTP_EVENT_THREADS_MAX], up[HTTP_EVENT_THREADS_MAX], wup[HTTP_EVENT_THREADS_MAX];
    int threads = http_event_threads(rq->server, conns, up, wup, HTTP_EVENT_THREADS_MAX);
    if (metrics_render(&out, errors, &cache) ||
        metrics_render_event_threads(&out, conns, up, wup, threads)) {
        buf_free(&out);
        http_reply_errno(rp, -ENOMEM);
        return 1;
    }
    rp->status = 200;
    rp->body = out;
    rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    return 1;
}

/* ---------------------------------------------------------------- control requests */

/* A control request on the event thread (board_ctl_submit on its own connections): validated
 * first, then one board_ctl_job, its reply rendered on the same thread when the job ends. */
struct ctl_request {
    struct board_ctl_job job;     /* first: board.c hands it back */
    struct board_settings_job sj; /* trim by score: the settings first */
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    void (*reply)(struct ctl_request *c, int rc);
    struct board_settings_patch patch;
    struct json_number below;
    char *json;
};

static void ctl_request_done(struct board_ctl_job *job, int rc)
{
    struct ctl_request *c = (struct ctl_request *)job;
    struct http_async *async = c->async;
    if (c->reply) /* NULL: answered already */
        c->reply(c, rc);
    board_list_free(job->list);
    free(job->record);
    free(c->json);
    free(c);
    http_async_done(async);
}

/* A new control request answered by `reply`; NULL after a 500 (answered). */
static struct ctl_request *ctl_request_new(struct http_request *rq, struct http_reply *rp,
                                           struct http_async *async,
                                           void (*reply)(struct ctl_request *c, int rc))
{
    struct ctl_request *c = calloc(1, sizeof(*c));
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

/* Start operation `op` of c; a failure to send is answered at once. Returns 1 (taken). */
static void ctl_request_start(struct ctl_request *c, enum board_ctl op)
{
    c->job.deadline_ms = c->rq->deadline_ms;
    c->job.chunk_timeout_ms = c->rq->app->cfg.request_timeout_ms;
    c->job.done = ctl_request_done;
    int rc = board_ctl_submit(&c->rq->app->model, http_async_store(c->async),
                              http_async_store_writes(c->async), op, &c->job);
    if (rc)
        ctl_request_done(&c->job, rc);
}

/* A 4xx decided before any Redis call: answered now. Returns 1 (taken). */
static void answered(struct http_async *async)
{
    http_async_done(async);
}

/* The reply of a write that either happened or not: 204, or its error. */
static void reply_204_or_write_errno(struct ctl_request *c, int rc)
{
    if (rc)
        reply_board_write_errno(c->rp, rc, c->job.board, c->job.id);
    else
        c->rp->status = 204;
}

/* ---------------------------------------------------------------- reads */

/* ETag, Cache-Control, X-Cache and Age of a page reply. */
static void page_headers(struct http_reply *rp, const struct page_reply *pr)
{
    static const char *const sources[] = {"hit", "miss", "stale"};
    char v[96];
    struct strb b;
    http_reply_header(rp, "ETag", pr->etag);
    strb_init(&b, v, sizeof(v));
    if (pr->cached) {
        strb_str(&b, "public, max-age=");
        strb_i64(&b, pr->max_age_s);
        strb_str(&b, ", stale-while-revalidate=");
        strb_i64(&b, pr->grace_s);
    } else {
        strb_str(&b, "no-cache");
    }
    http_reply_header(rp, "Cache-Control", v);
    http_reply_header(rp, "X-Cache", sources[pr->source]);
    strb_init(&b, v, sizeof(v));
    strb_i64(&b, pr->age_s);
    http_reply_header(rp, "Age", v);
}

/* The canonical page request of GET /rank and GET /boards/{board}/rank. */
struct rank_args {
    const char *board;
    const char *period; /* NULL: the current one */
    int64_t page, size; /* size 0: the board's page size */
};

/* 0, or -1 with rp filled (400): every argument is checked before any Redis call. */
static int rank_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    a->page = 1;
    a->size = 0;
    a->period = NULL;
    if (rq->nparams == 0) { /* GET /rank: the board is an argument */
        a->board = rq->app->cfg.default_board;
        int n = http_arg(rq, "board", &a->board);
        if (n > 1 || !board_name_valid(a->board, strlen(a->board))) {
            http_reply_error(rp, 400, "invalid_board",
                             "board must be given once, 1 to %d characters from A-Z, a-z, 0-9, "
                             "'.', '_' and '-'.",
                             BOARD_NAME_LEN_MAX);
            return -1;
        }
    } else if (board_param(rq, rp, &a->board)) {
        return -1;
    }
    if (count_arg(rq, rp, "page", REQUEST_PAGE_MAX, &a->page) ||
        count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &a->size) || period_arg(rq, rp, &a->period))
        return -1;
    return 0;
}

/* Headers and body of a page; takes the body. */
static void reply_page(struct http_reply *rp, struct page_reply *pr)
{
    page_headers(rp, pr);
    if (pr->not_modified) {
        rp->status = 304;
    } else {
        http_reply_json(rp, 200, pr->body);
        pr->body = NULL; /* the reply owns it now */
    }
    page_reply_free(pr);
}

int handle_rank_quick(struct http_request *rq, struct http_reply *rp)
{
    struct rank_args a;
    if (rank_parse(rq, rp, &a))
        return 1;
    struct page_reply pr;
    if (page_cache_get_l1(rq->app->pages, a.board, a.period, a.page, (int)a.size, rq->if_none_match,
                          &pr))
        return 0;
    reply_page(rp, &pr);
    return 1;
}

/* A page read on its way through the batched hit path (on the event thread's connection). */
struct rank_job {
    struct page_cache_job job; /* first: the cache hands it back */
    struct http_reply *rp;
    struct http_async *async;
};

static void rank_job_done(struct page_cache_job *job, int rc)
{
    struct rank_job *rj = (struct rank_job *)job;
    if (rc == 0)
        reply_page(rj->rp, &job->out);
    else
        reply_board_errno(rj->rp, rc, job->board, NULL);
    struct http_async *async = rj->async;
    free(rj);
    http_async_done(async);
}

/* page_cache_job.after: a timer on the request's event thread. */
static int rank_after(void *ctx, int ms, void (*fn)(void *arg), void *arg)
{
    return http_timer_after(ctx, ms, fn, arg) ? 0 : -1;
}

void handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    struct rank_args a;
    struct rank_job *rj = calloc(1, sizeof(*rj));
    if (!rj || rank_parse(rq, rp, &a)) { /* parsing cannot fail: handle_rank_quick parsed it */
        free(rj);
        if (!rp->status)
            http_reply_errno(rp, -ENOMEM);
        answered(async);
        return;
    }
    rj->job = (struct page_cache_job){.board = a.board,
                                      .period = a.period,
                                      .page = a.page,
                                      .size = (int)a.size,
                                      .if_none_match = rq->if_none_match,
                                      .deadline_ms = rq->deadline_ms,
                                      .writes = http_async_store_writes(async),
                                      .cache_reads = http_async_store_cache(async, 0),
                                      .cache_writes = http_async_store_cache(async, 1),
                                      .after = rank_after,
                                      .after_ctx = async,
                                      .done = rank_job_done};
    rj->rp = rp;
    rj->async = async;
    int rc = page_cache_submit(rq->app->pages, http_async_store(async), &rj->job);
    if (rc) { /* Redis is not answering, or cannot be reached: 503 now */
        reply_board_errno(rp, rc, a.board, NULL);
        free(rj);
        answered(async);
        return;
    }
}

/* A member or around read on the event thread: one script call on its own read connection
 * (http_async_store), the reply rendered on the same thread. A period this process cannot place
 * from memory is placed from the settings, read first on the same connection. */
struct read_job {
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    enum board_read_kind kind;
    const char *board, *period; /* borrowed from the request */
    int64_t size;
    int attempts, resent;
    struct board_settings_job sj;
};

static int read_send(struct read_job *j);

static void read_end(struct read_job *j, int rc)
{
    struct http_async *async = j->async;
    if (rc)
        reply_board_errno(j->rp, rc, j->board, j->rq->params[1]);
    free(j);
    http_async_done(async);
}

static void read_done(void *arg, int rc, redisReply **replies)
{
    struct read_job *j = arg;
    struct rankd *app = j->rq->app;
    const char *id = j->rq->params[1];
    if (rc == 0) {
        redisReply *r = replies[0];
        replies[0] = NULL; /* taken */
        if (j->kind == BOARD_READ_MEMBER) {
            struct board_member *mb = NULL;
            rc = board_member_take(&app->model, j->board, r, &mb);
            if (rc == 0)
                http_reply_json(
                    j->rp, 200,
                    render_member(id, mb, j->size ? (int)j->size : mb->settings.page_size));
            board_member_free(mb);
        } else {
            struct board_page *p = NULL;
            rc = board_around_take(&app->model, j->board, r, &p);
            if (rc == 0)
                http_reply_json(j->rp, 200, render_around(j->board, p));
            board_page_free(p);
        }
        /* the periods were not what this process thought: learnt, so once more */
        if (rc == -EAGAIN && ++j->attempts < 3 && (rc = read_send(j)) == 0)
            return;
    } else if ((rc == -EIO || rc == -ECONNRESET) && !j->resent++ &&
               util_now_ms() < j->rq->deadline_ms) {
        /* the connection failed: a read, so once more, on the connection dialled again */
        if ((rc = read_send(j)) == 0)
            return;
    }
    read_end(j, rc == -ECONNRESET ? -EIO : rc);
}

/* The script call for the set `w`; 0 sent, else nothing was sent. */
static int read_send_at(struct read_job *j, const struct board_where *w)
{
    struct http_request *rq = j->rq;
    struct store_async *conn = http_async_store(j->async);
    if (!conn)
        return -ECONNREFUSED;
    struct board_read rd;
    board_read_prepare(&rq->app->model, j->board, w, j->kind, rq->params[1], rq->param_len[1], 0,
                       (int)j->size, &rd);
    int rc = store_async_script(conn, rd.script, rd.nkeys, rd.nargs, rd.argv, rd.lens,
                                rq->deadline_ms, read_done, j);
    return rc < 0 ? rc : 0;
}

static void read_settings_done(struct board_settings_job *sj, int rc)
{
    struct read_job *j = (struct read_job *)(void *)((char *)sj - offsetof(struct read_job, sj));
    struct board_where w;
    if (rc == 0)
        rc = board_where_settled(&j->rq->app->model, j->board, j->period, &sj->settings, sj->exists,
                                 &w);
    if (rc == 0)
        rc = read_send_at(j, &w);
    if (rc)
        read_end(j, rc);
}

/* 0 sent (the script, or the settings read first); else nothing was sent. */
static int read_send(struct read_job *j)
{
    struct http_request *rq = j->rq;
    struct board_where w;
    if (board_where_cached(&rq->app->model, j->board, j->period, &w) == 0)
        return read_send_at(j, &w);
    /* a period the hint cannot place: the settings decide */
    j->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = rq->deadline_ms, .done = read_settings_done};
    return board_settings_submit(&rq->app->model, http_async_store(j->async), &j->sj);
}

static void read_async(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                       enum board_read_kind kind)
{
    struct read_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        answered(async);
        return;
    }
    *j = (struct read_job){.rq = rq, .rp = rp, .async = async, .kind = kind};
    if (board_param(rq, rp, &j->board) || id_param(rq, 1, rp) ||
        count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &j->size) ||
        period_arg(rq, rp, &j->period)) {
        free(j);
        answered(async); /* a 400 */
        return;
    }
    int rc = read_send(j);
    if (rc) /* Redis is not answering, or cannot be reached: 503 now */
        read_end(j, rc);
}

void handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    read_async(rq, rp, async, BOARD_READ_MEMBER);
}

void handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    read_async(rq, rp, async, BOARD_READ_AROUND);
}

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
        http_reply_error(rp, 400, "invalid_cursor",
                         "cursor must be given once, as the next_cursor of a previous page.");
        return -1;
    }
    *cursor = c;
    return 0;
}

static void boards_list_reply(struct ctl_request *c, int rc)
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
    if (cursor_arg(rq, rp, &cursor) || count_arg(rq, rp, "count", BOARD_LIST_COUNT_MAX, &count)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, boards_list_reply);
    if (!c)
        return;
    c->job.cursor = cursor;
    c->job.count = (int)count;
    ctl_request_start(c, BOARD_CTL_LIST);
}

/* A board's settings with its readable periods. */
static void reply_board(struct http_request *rq, struct http_reply *rp, int status,
                        const char *board, const struct board_info *info)
{
    char ids[PERIOD_RETAIN_MAX + 1][PERIOD_ID_MAX];
    int n = board_periods(&rq->app->model, &info->settings, ids, PERIOD_RETAIN_MAX + 1);
    http_reply_json(rp, status, render_board(board, info, (const char(*)[PERIOD_ID_MAX])ids, n));
}

static void board_get_reply(struct ctl_request *c, int rc)
{
    if (rc)
        reply_board_errno(c->rp, rc, c->job.board, NULL);
    else
        reply_board(c->rq, c->rp, 200, c->job.board, &c->job.info);
}

void handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, board_get_reply);
    if (!c)
        return;
    c->job.board = board;
    ctl_request_start(c, BOARD_CTL_INFO);
}

static void item_get_reply(struct ctl_request *c, int rc)
{
    if (rc == -ENODATA)
        http_reply_error(c->rp, 404, "item_not_found", "No record is stored for id '%.200s'.",
                         c->job.id);
    else if (rc)
        http_reply_errno(c->rp, rc);
    else
        http_reply_json(c->rp, 200, c->job.record); /* takes it */
    if (rc == 0)
        c->job.record = NULL;
}

void handle_item_get(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (id_param(rq, 0, rp)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, item_get_reply);
    if (!c)
        return;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    ctl_request_start(c, BOARD_CTL_RECORD_GET);
}

/* ---------------------------------------------------------------- JSON bodies */

/* Parse the JSON body; NULL after a 400 in rp. Free with cJSON_Delete. */
static cJSON *parse_body(struct http_request *rq, struct http_reply *rp)
{
    if (rq->body.len == 0) {
        http_reply_error(rp, 400, "invalid_json", "The request needs a JSON body.");
        return NULL;
    }
    if (request_json_has_nul(rq->body.data, rq->body.len)) {
        /* cJSON would end such a string early: the id written would not be the id sent */
        http_reply_error(rp, 400, "invalid_json",
                         "The body must not contain NUL (raw or \\u0000).");
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
        http_reply_error(rp, 400, "invalid_json", "The body is not valid JSON (near byte %zu).",
                         at);
    if (rc) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return doc;
}

/* The literal of a number node (json_number_annotate); a node without one (not from a client's
 * text) is judged by the shortest text of its double. 0, or -EINVAL. */
static int number_literal(const cJSON *v, struct json_number *out)
{
    const char *lit = json_number_literal(v);
    if (lit)
        return json_number_parse(lit, strlen(lit), out);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -EINVAL;
    char text[40];
    render_number_text(v->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), out);
}

/* board_check_score on the literal's own digits, never through a double: 0 and *key, -EDOM,
 * -ERANGE. */
static int check_score(const struct board_settings *s, const struct json_number *score,
                       int64_t *key)
{
    int64_t scaled;
    int rc = json_number_score(&s->layout, score, &scaled);
    if (rc == 0)
        *key = score_codec_key(&s->layout, scaled);
    return rc;
}

/* A whole-number JSON field in lo..hi, judged by its literal: any exact form of a whole number
 * (20, 20.0, 2e1, 200e-1) is that number; 20.00000000000000001 is not, although its double is.
 * 1 absent, 0 ok, -1 after a 400. */
static int int_field(const cJSON *obj, const char *name, int lo, int hi, int *out,
                     struct http_reply *rp)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return 1;
    struct json_number n;
    int64_t w = 0;
    if (!cJSON_IsNumber(v) || number_literal(v, &n) || json_number_scale(&n, 0, INT_MAX, &w) ||
        w < lo || w > hi) {
        http_reply_error(rp, 400, "invalid_field", "%s must be a whole number from %d to %d.", name,
                         lo, hi);
        return -1;
    }
    *out = (int)w;
    return 0;
}

/* A string field that must be one of `choices`; returns the index, -2 absent, -1 after a 400. */
static int enum_field(const cJSON *obj, const char *name, const char *const *choices, int n,
                      struct http_reply *rp)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return -2;
    for (int i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, choices[i]) == 0)
            return i;
    http_reply_error(rp, 400, "invalid_field", "%s must be one of: %s%s%s%s%s.", name, choices[0],
                     n > 1 ? ", " : "", n > 1 ? choices[1] : "", n > 2 ? ", " : "",
                     n > 2 ? choices[2] : "");
    return -1;
}

/* enum_field for any number of choices; the message lists them all. */
static int enum_list_field(const cJSON *obj, const char *name, const char *const *choices, int n,
                           struct http_reply *rp)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return -2;
    char list[200] = "";
    for (int i = 0; i < n; i++) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, choices[i]) == 0)
            return i;
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", choices[i]);
    }
    http_reply_error(rp, 400, "invalid_field", "%s must be one of: %s.", name, list);
    return -1;
}

#define DUP_SCAN_MAX 16 /* fields compared pairwise; more go through a hash table */

/* The first field of obj whose name an earlier field already had, or NULL. cJSON keeps both and
 * lookups take the first: {"score":1,"score":2} would be stored as 1 without a word. Linear in
 * the fields (an open-addressing table of their names, at most half full): comparing every pair
 * cost ~26 s of CPU for one 1 MB body of 100,000 distinct keys. */
static const char *duplicate_field(const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *f = obj->child; f; f = f->next)
        n++;
    size_t cap = (size_t)DUP_SCAN_MAX * 2;
    while (cap < 2 * n)
        cap *= 2;
    const char **slots = n > DUP_SCAN_MAX ? calloc(cap, sizeof(*slots)) : NULL;
    if (!slots) { /* a few fields (or out of memory): pairwise */
        for (const cJSON *f = obj->child; f; f = f->next)
            for (const cJSON *g = obj->child; g != f; g = g->next)
                if (strcmp(f->string, g->string) == 0)
                    return f->string;
        return NULL;
    }
    const char *dup = NULL;
    for (const cJSON *f = obj->child; f && !dup; f = f->next) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const unsigned char *p = (const unsigned char *)f->string; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
        size_t i = (size_t)h & (cap - 1);
        while (slots[i] && strcmp(slots[i], f->string) != 0)
            i = (i + 1) & (cap - 1);
        if (slots[i])
            dup = f->string;
        slots[i] = f->string;
    }
    free(slots);
    return dup;
}

/* Reject fields not in `known` (typos would otherwise be silently ignored) and repeated ones. */
static int only_fields(const cJSON *obj, const char *const *known, int n, struct http_reply *rp,
                       const char *where)
{
    const char *dup = duplicate_field(obj);
    if (dup) {
        http_reply_error(rp, 400, "duplicate_field", "%s has the field '%.100s' more than once.",
                         where, dup);
        return -1;
    }
    for (const cJSON *f = obj->child; f; f = f->next) {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(f->string, known[i]) == 0;
        if (!ok) {
            http_reply_error(rp, 400, "unknown_field", "%s has an unknown field '%.100s'.", where,
                             f->string);
            return -1;
        }
    }
    return 0;
}

static int parse_settings(const cJSON *doc, struct board_settings_patch *p, struct http_reply *rp)
{
    static const char *const known[] = {"order",          "tiebreak", "page_size", "page_ttl_ms",
                                        "score_decimals", "period",   "timezone",  "retain"};
    static const char *const periods[] = {"none", "hourly", "daily", "weekly", "monthly"};
    static const char *const orders[] = {"desc", "asc"};
    static const char *const ties[] = {"first", "last", "id"};
    if (!cJSON_IsObject(doc)) {
        http_reply_error(rp, 400, "invalid_body", "The body must be a JSON object of settings.");
        return -1;
    }
    if (only_fields(doc, known, 8, rp, "The settings object"))
        return -1;
    memset(p, 0, sizeof(*p));
    board_settings_default(&p->value);
    int o = enum_field(doc, "order", orders, 2, rp);
    int t = o == -1 ? -1 : enum_field(doc, "tiebreak", ties, 3, rp);
    if (o == -1 || t == -1)
        return -1;
    p->has_order = o >= 0;
    p->value.layout.order = o >= 0 ? (enum score_order)o : SCORE_ORDER_DESC;
    p->has_tiebreak = t >= 0;
    p->value.layout.tiebreak = t >= 0 ? (enum score_tiebreak)t : SCORE_TIEBREAK_FIRST;
    int r1 = int_field(doc, "page_size", 1, BOARD_PAGE_SIZE_MAX, &p->value.page_size, rp);
    int r2 =
        r1 < 0 ? -1
               : int_field(doc, "page_ttl_ms", 0, BOARD_PAGE_TTL_MS_MAX, &p->value.page_ttl_ms, rp);
    int r3 = r2 < 0 ? -1
                    : int_field(doc, "score_decimals", 0, SCORE_DECIMALS_MAX,
                                &p->value.layout.decimals, rp);
    if (r1 < 0 || r2 < 0 || r3 < 0)
        return -1;
    p->has_page_size = r1 == 0;
    p->has_page_ttl = r2 == 0;
    p->has_decimals = r3 == 0;
    int pk = enum_list_field(doc, "period", periods, 5, rp);
    if (pk == -1)
        return -1;
    p->has_period = pk >= 0;
    p->value.period = pk >= 0 ? (enum period_kind)pk : PERIOD_NONE;
    const cJSON *tz = cJSON_GetObjectItemCaseSensitive(doc, "timezone");
    if (tz && (!cJSON_IsString(tz) || period_tz_parse(tz->valuestring, &p->value.tz_min))) {
        http_reply_error(rp, 400, "invalid_field",
                         "timezone must be \"UTC\" or an offset \"+HH:MM\" / \"-HH:MM\" within "
                         "14 hours.");
        return -1;
    }
    p->has_tz = tz != NULL;
    int r4 = int_field(doc, "retain", 0, PERIOD_RETAIN_MAX, &p->value.retain, rp);
    if (r4 < 0)
        return -1;
    p->has_retain = r4 == 0;
    return 0;
}

static void board_put_reply(struct ctl_request *c, int rc)
{
    const char *board = c->job.board;
    if (rc == -EEXIST)
        http_reply_error(c->rp, 409, "board_not_empty",
                         "%s cannot change on board '%s' while it has members; empty it first "
                         "(POST /boards/%s/reset empties the current period), delete it, or use "
                         "a new board.",
                         c->job.field, board, board);
    else if (rc)
        http_reply_write_errno(c->rp, rc);
    else
        reply_board(c->rq, c->rp, c->job.created ? 201 : 200, board, &c->job.info);
}

void handle_board_put(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        answered(async);
        return;
    }
    cJSON *doc = parse_body(rq, rp);
    if (!doc) {
        answered(async);
        return;
    }
    struct board_settings_patch patch;
    int bad = parse_settings(doc, &patch, rp);
    cJSON_Delete(doc);
    if (bad) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, board_put_reply);
    if (!c)
        return;
    c->patch = patch;
    c->job.board = board;
    c->job.patch = &c->patch;
    ctl_request_start(c, BOARD_CTL_PUT);
}

void handle_board_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, reply_204_or_write_errno);
    if (!c)
        return;
    c->job.board = board;
    ctl_request_start(c, BOARD_CTL_DELETE);
}

void handle_member_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board) || id_param(rq, 1, rp)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, reply_204_or_write_errno);
    if (!c)
        return;
    c->job.board = board;
    c->job.id = rq->params[1];
    c->job.id_len = rq->param_len[1];
    ctl_request_start(c, BOARD_CTL_MEMBER_DELETE);
}

/* ---------------------------------------------------------------- lifecycle */

void handle_board_reset(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, reply_204_or_write_errno);
    if (!c)
        return;
    c->job.board = board;
    ctl_request_start(c, BOARD_CTL_RESET);
}

/* DELETE /boards/{board}/members?keep=N or ?below=SCORE: trim the tail in chunks. */
static void trim_reply(struct ctl_request *c, int rc)
{
    if (rc) {
        reply_board_write_errno(c->rp, rc, c->job.board, NULL);
        return;
    }
    char body[64];
    snprintf(body, sizeof(body), "{\"removed\":%lld}", (long long)c->job.removed);
    http_reply_json(c->rp, 200, strdup(body));
}

/* below=SCORE: the board's settings turn the score into an order key, then the trim. */
static void trim_settings_read(struct board_settings_job *sj, int rc)
{
    struct ctl_request *c =
        (struct ctl_request *)(void *)((char *)sj - offsetof(struct ctl_request, sj));
    if (rc == 0 && !sj->exists)
        rc = -ENOENT;
    if (rc == 0 && check_score(&sj->settings, &c->below, &c->job.below_key)) {
        http_reply_error(c->rp, 400, "invalid_parameter",
                         "below must be a score this board can hold (see GET /boards/%s).",
                         c->job.board);
        c->reply = NULL; /* the reply is the 400 */
        ctl_request_done(&c->job, 0);
        return;
    }
    if (rc) {
        ctl_request_done(&c->job, rc);
        return;
    }
    ctl_request_start(c, BOARD_CTL_TRIM);
}

/* DELETE /boards/{board}/members?keep=N or ?below=SCORE: trim the tail in chunks. */
void handle_members_trim(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board, *below = NULL;
    int64_t keep = -1;
    if (board_param(rq, rp, &board)) {
        answered(async);
        return;
    }
    int nb = http_arg(rq, "below", &below);
    const char *keep_s = NULL;
    int nk = http_arg(rq, "keep", &keep_s);
    if (nb + nk != 1) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "give exactly one of keep=N (keep the top N, remove the rest) or "
                         "below=SCORE (remove every member whose score is worse).");
        answered(async);
        return;
    }
    int zero = keep_s && keep_s[0] && keep_s[strspn(keep_s, "0")] == '\0'; /* "0", "00"... */
    if (nk && (zero ? (keep = 0, 0) : request_parse_count(keep_s, INT64_C(1) << 53, &keep))) {
        http_reply_error(rp, 400, "invalid_parameter", "keep must be a whole number from 0.");
        answered(async);
        return;
    }
    /* a plain decimal (no exponent, hex, inf or spaces, which strtod would take), judged by its
     * digits like a score: 1.000000000000000001 is not 1 */
    struct json_number score;
    if (nb && json_number_parse_plain(below, strlen(below), &score)) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "below must be a score this board can hold (see GET /boards/%s).", board);
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, trim_reply);
    if (!c)
        return;
    c->job.board = board;
    c->job.keep = keep;
    if (!nb) {
        ctl_request_start(c, BOARD_CTL_TRIM);
        return;
    }
    c->below = score;
    c->sj = (struct board_settings_job){
        .board = board, .deadline_ms = rq->deadline_ms, .done = trim_settings_read};
    int rc = board_settings_submit(&rq->app->model, http_async_store(async), &c->sj);
    if (rc)
        ctl_request_done(&c->job, rc);
}

void handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    admin_request(rq, rp, async, 0);
}

/* ---------------------------------------------------------------- records */

/*
 * 1 when a record number reads back as the value the client wrote. A record keeps the double
 * and prints it with render_number_text, so the literal's exact decimal value (not its double)
 * must equal the value of that text: 0.1, 1.50, 2.5e1, 1.5e300, 0.30000000000000004 and
 * 9007199254740992 do; 0.10000000000000001, 1e-400 (0), 5e-324, 9007199254740990.5 and
 * 9007199254740993 (neighbouring integers collapse from 2^53 on) do not.
 */
static int number_exact(const cJSON *f)
{
    struct json_number lit, back;
    if (number_literal(f, &lit) || !isfinite(f->valuedouble))
        return 0;
    char text[40];
    render_number_text(f->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), &back) == 0 && json_number_equal(&lit, &back);
}

/* Validate a record (flat object of strings, numbers, booleans, nulls; valid UTF-8) and print it.
 * Returns the new JSON (free()) or NULL with status/code/message filled. */
static char *record_json(const cJSON *rec, int *status, const char **code, char *msg)
{
    *status = 400;
    *code = "invalid_record";
    if (!cJSON_IsObject(rec)) {
        snprintf(msg, MSG_MAX, "record must be a JSON object.");
        return NULL;
    }
    for (const cJSON *f = rec->child; f; f = f->next) {
        int flat = cJSON_IsString(f) || cJSON_IsNumber(f) || cJSON_IsBool(f) || cJSON_IsNull(f);
        int utf8 =
            request_utf8_valid(f->string, strlen(f->string)) &&
            (!cJSON_IsString(f) || request_utf8_valid(f->valuestring, strlen(f->valuestring)));
        int exact = !cJSON_IsNumber(f) || number_exact(f);
        if (!flat || !utf8 || !exact) {
            snprintf(msg, MSG_MAX,
                     "record field '%.100s' must be a string, a number a double holds exactly "
                     "(integers up to 2^53; send larger ones as strings), a boolean or null "
                     "(records are flat), in valid UTF-8.",
                     f->string);
            return NULL;
        }
    }
    const char *dup = duplicate_field(rec);
    if (dup) {
        *code = "duplicate_field";
        snprintf(msg, MSG_MAX, "record has the field '%.100s' more than once.", dup);
        return NULL;
    }
    /* Print numbers exactly (cJSON alone may round a 16-17 digit value). */
    cJSON *copy = cJSON_Duplicate(rec, 1);
    for (cJSON *f = copy ? copy->child : NULL; f; f = f->next)
        if (cJSON_IsNumber(f)) {
            char text[40];
            render_number_text(f->valuedouble, text, sizeof(text));
            char *raw = strdup(text);
            if (raw) {
                free(f->valuestring); /* the literal json_number_annotate gave it */
                f->type = cJSON_Raw;
                f->valuestring = raw;
            }
        }
    char *json = copy ? cJSON_PrintUnformatted(copy) : NULL;
    cJSON_Delete(copy);
    if (json && strlen(json) > BOARD_RECORD_BYTES_MAX) {
        free(json);
        *status = 413;
        *code = "record_too_large";
        snprintf(msg, MSG_MAX, "record must be at most %d bytes of JSON.", BOARD_RECORD_BYTES_MAX);
        return NULL;
    }
    if (!json) {
        *status = 500;
        *code = "internal";
        snprintf(msg, MSG_MAX, "Out of memory.");
    }
    return json;
}

static void item_put_reply(struct ctl_request *c, int rc)
{
    if (rc)
        http_reply_write_errno(c->rp, rc);
    else
        c->rp->status = 204;
}

void handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (id_param(rq, 0, rp)) {
        answered(async);
        return;
    }
    cJSON *doc = parse_body(rq, rp);
    if (!doc) {
        answered(async);
        return;
    }
    int status;
    const char *code;
    char msg[MSG_MAX];
    char *json = record_json(doc, &status, &code, msg);
    cJSON_Delete(doc);
    if (!json) {
        http_reply_error(rp, status, code, "%s", msg);
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, item_put_reply);
    if (!c) {
        free(json);
        return;
    }
    c->json = json;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    c->job.json = json;
    c->job.json_len = strlen(json);
    ctl_request_start(c, BOARD_CTL_RECORD_PUT);
}

static void item_delete_reply(struct ctl_request *c, int rc)
{
    if (rc == -ENODATA)
        http_reply_error(c->rp, 404, "item_not_found", "No record is stored for id '%.200s'.",
                         c->job.id);
    else if (rc)
        http_reply_write_errno(c->rp, rc);
    else
        c->rp->status = 204;
}

void handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (id_param(rq, 0, rp)) {
        answered(async);
        return;
    }
    struct ctl_request *c = ctl_request_new(rq, rp, async, item_delete_reply);
    if (!c)
        return;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    ctl_request_start(c, BOARD_CTL_RECORD_DELETE);
}

/* ---------------------------------------------------------------- score writes */

/* One entry as parsed from JSON, owning its strings. */
struct entry_in {
    char *id;
    enum board_op op;
    struct json_number score; /* the literal, judged against the board by check_score */
    char *record;             /* validated JSON or NULL */
    long line;                /* batch index or NDJSON line number */
};

static void entry_free(struct entry_in *e)
{
    free(e->id);
    free(e->record);
    e->id = e->record = NULL;
}

/* An error for one entry, before it is rendered into a reply or a rejected list. */
struct entry_error {
    int status;
    const char *code;
    char msg[MSG_MAX];
};

static int entry_fail(struct entry_error *err, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int entry_fail(struct entry_error *err, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->status = status;
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_entry(const cJSON *e, struct entry_in *out, struct entry_error *err)
{
    static const char *const known[] = {"id", "score", "op", "record"};
    static const char *const ops[] = {"set", "best", "incr"};
    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(e))
        return entry_fail(err, 400, "invalid_entry", "an entry must be a JSON object.");
    const char *dup = duplicate_field(e);
    if (dup)
        return entry_fail(err, 400, "duplicate_field",
                          "the field '%.100s' is given more than once.", dup);
    for (const cJSON *f = e->child; f; f = f->next) {
        int ok = 0;
        for (int i = 0; i < 4 && !ok; i++)
            ok = strcmp(f->string, known[i]) == 0;
        if (!ok)
            return entry_fail(err, 400, "unknown_field",
                              "unknown field '%.100s'; an entry has id, score, op and record.",
                              f->string);
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (!cJSON_IsString(id) || !request_id_valid(id->valuestring, strlen(id->valuestring)))
        return entry_fail(err, 400, "invalid_id",
                          "id must be a string of 1 to %d bytes of valid UTF-8 without control "
                          "characters.",
                          BOARD_ID_LEN_MAX);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "op");
    int opi = 0;
    if (op) {
        opi = -1;
        for (int i = 0; cJSON_IsString(op) && i < 3; i++)
            if (strcmp(op->valuestring, ops[i]) == 0)
                opi = i;
        if (opi < 0)
            return entry_fail(err, 400, "invalid_op", "op must be one of: set, best, incr.");
    }
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(e, "score");
    if (!cJSON_IsNumber(score) || number_literal(score, &out->score))
        return entry_fail(err, 422, "invalid_score", "score must be a JSON number.");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(e, "record");
    if (rec) {
        out->record = record_json(rec, &err->status, &err->code, err->msg);
        if (!out->record)
            return -1;
    }
    out->id = strdup(id->valuestring);
    if (!out->id) {
        entry_free(out);
        return entry_fail(err, 500, "internal", "Out of memory.");
    }
    out->op = (enum board_op)opi;
    return 0;
}

/* The 422 of a score check_score refused; the message quotes the literal as sent. */
static int score_error(const struct board_settings *s, const struct json_number *score, int rc,
                       struct entry_error *err)
{
    char lo[40], hi[40];
    const char *v = score->text;
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, sizeof(lo));
    render_number_text(max, hi, sizeof(hi));
    if (rc == -EDOM)
        return entry_fail(err, 422, "invalid_score",
                          "score %s has more fractional digits than this board keeps "
                          "(score_decimals=%d).",
                          v, s->layout.decimals);
    if (rc == -ERANGE)
        return entry_fail(err, 422, "score_out_of_range",
                          "score %s is outside this board's exact range: from %s to %s.", v, lo,
                          hi);
    return entry_fail(err, 422, "invalid_score", "score must be a JSON number.");
}

/* Turn entries into board entries under settings s; -1 with err and *bad on the first failure. */
static int prepare(const struct board_settings *s, const struct entry_in *in, size_t n,
                   struct board_entry *out, size_t *bad, struct entry_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int64_t key;
        int rc = check_score(s, &in[i].score, &key);
        if (rc) {
            *bad = i;
            return score_error(s, &in[i].score, rc, err);
        }
        assert(in[i].id); /* parse_entry always sets it */
        out[i] = (struct board_entry){in[i].id,     strlen(in[i].id),
                                      in[i].op,     key,
                                      in[i].record, in[i].record ? strlen(in[i].record) : 0};
    }
    return 0;
}

static void range_error(const struct board_settings *s, struct entry_error *err)
{
    char lo[40], hi[40];
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, sizeof(lo));
    render_number_text(max, hi, sizeof(hi));
    entry_fail(err, 422, "score_out_of_range",
               "the resulting score would be outside this board's exact range: from %s to %s; "
               "nothing was written.",
               lo, hi);
}

static void reply_entry_error(struct http_reply *rp, const struct entry_error *err,
                              const char *where)
{
    http_reply_error(rp, err->status, err->code, "%s%s", where, err->msg);
}

static cJSON *rejected_item(const char *key, long at, const struct entry_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, key, (double)at);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddStringToObject(e, "code", err->code);
    cJSON_AddStringToObject(e, "message", err->msg);
    return r;
}

/* The entries of a score write: one entry, or a batch {"entries":[...]}. */
struct scores_in {
    struct entry_in *in; /* n entries, owned */
    struct board_outcome *out;
    size_t n;
    int single;
};

static void scores_in_free(struct scores_in *si)
{
    for (size_t k = 0; si->in && k < si->n; k++)
        entry_free(&si->in[k]);
    free(si->in);
    free(si->out);
    si->in = NULL;
    si->out = NULL;
}

/* Parse and validate a JSON score body (no Redis): 0, or -1 with rp filled (4xx/500). */
static int scores_parse(struct http_request *rq, struct http_reply *rp, struct scores_in *si)
{
    memset(si, 0, sizeof(*si));
    cJSON *doc = parse_body(rq, rp);
    if (!doc)
        return -1;
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(doc, "entries");
    si->single = !(cJSON_IsObject(doc) && entries && cJSON_GetArraySize(doc) == 1);
    int n = si->single ? 1 : cJSON_GetArraySize(entries);
    if (!si->single && (!cJSON_IsArray(entries) || n > BOARD_BATCH_MAX)) {
        http_reply_error(rp, cJSON_IsArray(entries) ? 413 : 400, "invalid_entries",
                         "entries must be an array of at most %d entries.", BOARD_BATCH_MAX);
        cJSON_Delete(doc);
        return -1;
    }
    si->in = calloc((size_t)n + 1, sizeof(*si->in));
    si->out = calloc((size_t)n + 1, sizeof(*si->out));
    int rc = (!si->in || !si->out) ? -1 : 0;
    if (rc)
        http_reply_errno(rp, -ENOMEM);
    struct entry_error err = {0};
    const cJSON *e = si->single ? doc : entries->child;
    for (int i = 0; e && !rc && i < n; e = e->next, i++) {
        if (parse_entry(e, &si->in[i], &err)) {
            char where[48] = "";
            if (!si->single)
                snprintf(where, sizeof(where), "entries[%d]: ", i);
            reply_entry_error(rp, &err, where);
            rc = -1;
        } else {
            si->n = (size_t)i + 1;
        }
    }
    cJSON_Delete(doc);
    if (rc)
        scores_in_free(si);
    return rc;
}

/* The reply to a write that ended (rc as apply_entries: 0, -1 with err and bad, or an errno). */
static void scores_reply(struct http_reply *rp, const struct scores_in *si, int rc,
                         const struct board_settings *used, size_t bad, struct entry_error *err)
{
    if (rc == -1) {
        char where[48] = "";
        if (!si->single)
            snprintf(where, sizeof(where), "entries[%zu]: ", bad);
        reply_entry_error(rp, err, where);
    } else if (rc) {
        http_reply_write_errno(rp, rc);
    } else if (si->single && si->out[0].rc) {
        range_error(used, err);
        reply_entry_error(rp, err, "");
    } else if (si->single) {
        http_reply_json(rp, 200, render_write(si->in[0].id, &si->out[0]));
    } else {
        cJSON *doc = cJSON_CreateObject(), *rej = cJSON_CreateArray();
        int applied = 0;
        for (size_t k = 0; k < si->n; k++) {
            if (si->out[k].rc == 0) {
                applied++;
                continue;
            }
            range_error(used, err);
            cJSON_AddItemToArray(rej, rejected_item("index", (long)k, err));
        }
        cJSON_AddNumberToObject(doc, "applied", applied);
        cJSON_AddItemToObject(doc, "rejected", rej);
        http_reply_json(rp, 200, cJSON_PrintUnformatted(doc));
        cJSON_Delete(doc);
    }
}

/*
 * The same on the event thread, on its own write connection (http_async_store_writes): the
 * settings this process last saw (else one HGETALL), the scores validated against them, then
 * write.lua (and compact.lua for a full tie group: board_write_submit). Settings changed under
 * the write (the script refuses it): read them again, validate, resume after what was written,
 * as apply_entries does. Nothing sent yet and no connection: the blocking handler takes over.
 */
struct scores_job {
    struct board_write_job w; /* first: board.c hands it back */
    struct board_settings_job sj;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    const char *board;
    struct scores_in si;
    struct board_entry *be;
    size_t from; /* entries before it are settled */
    int attempts;
};

static void scores_job_end(struct scores_job *j, int rc, size_t bad, struct entry_error *err)
{
    struct http_async *async = j->async;
    if (rc && j->from > 0)
        rc = -ETIME; /* part of it is applied (a 422 too): never "not written" */
    scores_reply(j->rp, &j->si, rc, &j->w.assumed, bad, err);
    scores_in_free(&j->si);
    free(j->be);
    free(j);
    http_async_done(async);
}

static void scores_written(struct board_write_job *w, int rc);

/* Validate entries[from..n) under `set` and send them; ends the job on failure. */
static void scores_send(struct scores_job *j, const struct board_settings *set)
{
    struct entry_error err = {0};
    size_t bad = 0;
    j->w.assumed = *set;
    if (prepare(set, j->si.in + j->from, j->si.n - j->from, j->be, &bad, &err)) {
        scores_job_end(j, -1, bad + j->from, &err);
        return;
    }
    if (j->from == j->si.n) { /* nothing (left) to write: an empty batch */
        scores_job_end(j, 0, 0, &err);
        return;
    }
    j->w = (struct board_write_job){.board = j->board,
                                    .assumed = *set,
                                    .entries = j->be,
                                    .n = j->si.n - j->from,
                                    .flags =
                                        BOARD_WRITE_ATOMIC | (j->si.single ? BOARD_WRITE_RANKS : 0),
                                    .outcomes = j->si.out + j->from,
                                    .deadline_ms = j->rq->deadline_ms,
                                    .done = scores_written};
    int rc = board_write_submit(&j->rq->app->model, http_async_store_writes(j->async), &j->w);
    if (rc)
        scores_job_end(j, rc, 0, &err);
}

static void scores_settings_read(struct board_settings_job *sj, int rc)
{
    struct scores_job *j =
        (struct scores_job *)(void *)((char *)sj - offsetof(struct scores_job, sj));
    if (rc) {
        struct entry_error err = {0};
        scores_job_end(j, rc, 0, &err);
        return;
    }
    scores_send(j, &sj->settings);
}

/* Read the settings (HGETALL), then scores_send; ends the job when nothing could be sent. */
static void scores_read_settings(struct scores_job *j)
{
    j->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = j->rq->deadline_ms, .done = scores_settings_read};
    int rc = board_settings_submit(&j->rq->app->model, http_async_store_writes(j->async), &j->sj);
    if (rc) {
        struct entry_error err = {0};
        scores_job_end(j, rc, 0, &err);
    }
}

static void scores_written(struct board_write_job *w, int rc)
{
    struct scores_job *j = (struct scores_job *)w;
    struct entry_error err = {0};
    if (rc == -ERANGE) { /* entry from + handled would leave the range: that call wrote nothing */
        range_error(&w->assumed, &err);
        scores_job_end(j, -1, j->from + w->handled, &err);
        return;
    }
    j->from += w->handled;
    if (rc == -EAGAIN && ++j->attempts < 3) { /* the settings changed: again, from `from` */
        scores_read_settings(j);
        return;
    }
    scores_job_end(j, rc, 0, &err);
}

static void scores_stream_end(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async);

void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (rq->streaming) {
        scores_stream_end(rq, rp, async);
        return;
    }
    struct scores_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        answered(async);
        return;
    }
    if (board_param(rq, rp, &board) || scores_parse(rq, rp, &j->si)) {
        free(j);
        answered(async); /* a 4xx */
        return;
    }
    j->rq = rq;
    j->rp = rp;
    j->async = async;
    j->board = board;
    if (!(j->be = calloc(j->si.n + 1, sizeof(*j->be)))) {
        scores_in_free(&j->si);
        free(j);
        http_reply_errno(rp, -ENOMEM);
        answered(async);
        return;
    }
    struct board_settings set;
    int exists = 0;
    if (board_settings_cached(&rq->app->model, board, &set, &exists) == 0)
        scores_send(j, &set);
    else
        scores_read_settings(j);
}

/* ---------------------------------------------------------------- NDJSON stream */

struct stream_flush;

struct stream {
    struct ndjson nd; /* the splitter (ndjson.h) */
    struct entry_in pending[BOARD_BATCH_MAX];
    size_t npending;
    size_t pending_bytes; /* ids and records of the pending lines */
    long applied, rejected_total;
    long settled_line; /* every line up to this one is applied or rejected */
    cJSON *rejected;   /* at most REJECTED_SHOWN_MAX items, in line order */
    int shown;         /* items in `rejected` */
    /* Lines refused when read while earlier lines wait for the flush (which may refuse them
     * too): listed when the flush has placed those, so `rejected` stays in line order. At most
     * REJECTED_SHOWN_MAX - shown items (later ones could never be among the first shown). */
    cJSON *deferred;
    int ndeferred;
};

void handle_scores_stream_free(void *state)
{
    struct stream *s = state;
    if (!s)
        return;
    ndjson_free(&s->nd);
    for (size_t i = 0; i < s->npending; i++)
        entry_free(&s->pending[i]);
    cJSON_Delete(s->rejected);
    cJSON_Delete(s->deferred);
    free(s);
}

/* List a rejected line (takes the item), or drop it past REJECTED_SHOWN_MAX. */
static void show_rejected(struct stream *s, cJSON *item)
{
    if (item && s->shown < REJECTED_SHOWN_MAX && cJSON_AddItemToArray(s->rejected, item))
        s->shown++;
    else
        cJSON_Delete(item);
}

/* List the deferred rejections of lines before `line`. */
static void show_deferred(struct stream *s, long line)
{
    while (s->ndeferred) {
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(s->deferred->child, "line");
        if (at->valuedouble >= (double)line)
            break;
        s->ndeferred--;
        show_rejected(s, cJSON_DetachItemFromArray(s->deferred, 0));
    }
}

/* A line refused when read: listed now, or after the pending lines before it are written. */
static void reject_line(struct stream *s, long line, const struct entry_error *err)
{
    s->rejected_total++;
    if (!s->npending)
        s->settled_line = line;
    if (s->shown + s->ndeferred >= REJECTED_SHOWN_MAX)
        return;
    if (!s->npending) {
        show_rejected(s, rejected_item("line", line, err));
        return;
    }
    if (!s->deferred)
        s->deferred = cJSON_CreateArray();
    cJSON *item = rejected_item("line", line, err);
    if (s->deferred && item && cJSON_AddItemToArray(s->deferred, item))
        s->ndeferred++;
    else
        cJSON_Delete(item);
}

/* A pending line refused when written: listed after the earlier lines refused when read. */
static void reject_pending(struct stream *s, long line, const struct entry_error *err)
{
    s->rejected_total++;
    show_deferred(s, line);
    if (s->shown < REJECTED_SHOWN_MAX)
        show_rejected(s, rejected_item("line", line, err));
}

/* The buffers of one flush of the pending lines. */
struct flush_bufs {
    struct board_entry *be; /* the lines sent, in order */
    struct board_outcome *out;
    int *bad;     /* per pending line: 0, or why it was refused */
    size_t *idx;  /* be[k] is pending[idx[k]] */
    size_t start; /* lines before it are settled */
};

static int flush_bufs_new(struct flush_bufs *b, size_t n)
{
    memset(b, 0, sizeof(*b));
    b->be = calloc(n + 1, sizeof(*b->be));
    b->out = calloc(n + 1, sizeof(*b->out));
    b->bad = calloc(n + 1, sizeof(*b->bad));
    b->idx = calloc(n + 1, sizeof(*b->idx));
    return b->be && b->out && b->bad && b->idx ? 0 : -ENOMEM;
}

static void flush_bufs_free(struct flush_bufs *b)
{
    free(b->be);
    free(b->out);
    free(b->bad);
    free(b->idx);
}

/* The pending lines from b->start that `used` can hold, as board entries; returns how many. */
static size_t flush_prepare(struct stream *s, const struct board_settings *used,
                            struct flush_bufs *b)
{
    size_t ok = 0;
    for (size_t i = b->start; i < s->npending; i++) {
        const struct entry_in *e = &s->pending[i];
        int64_t key = 0;
        b->bad[i] = check_score(used, &e->score, &key);
        if (b->bad[i] == 0) {
            b->be[ok] = (struct board_entry){
                e->id, strlen(e->id), e->op, key, e->record, e->record ? strlen(e->record) : 0};
            b->idx[ok++] = i;
        }
    }
    return ok;
}

/* After a write of b->be[0..handled): the incr results that left the range, and where a retry
 * after a settings change resumes. */
static void flush_written(struct flush_bufs *b, size_t handled, int rc)
{
    for (size_t j = 0; j < handled; j++)
        if (b->out[j].rc)
            b->bad[b->idx[j]] = -EOVERFLOW; /* the incr result left the range */
    if (rc == -EAGAIN && handled)
        b->start = b->idx[handled - 1] + 1;
}

/* The flush ended with rc: count and list the pending lines, empty them. */
static void flush_settle(struct stream *s, int rc, const struct board_settings *used,
                         const struct flush_bufs *b)
{
    /* after a fault, the lines before b->start were still written (a call that wrote part of
     * the chunk, then a settings change): they count, and the stream is settled up to them */
    size_t settled = rc == 0 ? s->npending : b->start;
    for (size_t i = 0; i < s->npending; i++) {
        struct entry_error err = {0};
        if (i < settled && b->bad[i] == 0)
            s->applied++;
        else if (i < settled && b->bad[i] == -EOVERFLOW) {
            range_error(used, &err);
            reject_pending(s, s->pending[i].line, &err);
        } else if (i < settled) {
            score_error(used, &s->pending[i].score, b->bad[i], &err);
            reject_pending(s, s->pending[i].line, &err);
        }
        if (i < settled)
            s->settled_line = s->pending[i].line;
        entry_free(&s->pending[i]);
    }
    if (rc == 0)
        show_deferred(s, LONG_MAX); /* every line before the next one read is settled */
    s->npending = 0;
    s->pending_bytes = 0;
}

/* One line read: parsed into the pending lines, or rejected. */
static void stream_line(struct stream *s, char *text, size_t len, long line)
{
    struct entry_error err = {0};
    cJSON *doc = NULL;
    if (request_json_has_nul(text, len))
        entry_fail(&err, 400, "invalid_json", "the line must not contain NUL (raw or \\u0000).");
    else if (!(doc = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1)))
        entry_fail(&err, 400, "invalid_json", "the line is not valid JSON.");
    size_t at = 0;
    int lit = doc ? json_number_annotate(doc, text, len, &at) : 0; /* numbers keep their text */
    if (lit) {
        if (lit == -ENOMEM)
            entry_fail(&err, 500, "internal", "Out of memory.");
        else
            entry_fail(&err, 400, "invalid_json", "the line is not valid JSON (near byte %zu).",
                       at);
        cJSON_Delete(doc);
        doc = NULL;
    }
    struct entry_in *e = &s->pending[s->npending];
    if (doc && parse_entry(doc, e, &err) == 0) {
        e->line = line;
        s->npending++;
        assert(e->id); /* parse_entry sets it on success */
        s->pending_bytes += strlen(e->id) + (e->record ? strlen(e->record) : 0);
    } else {
        reject_line(s, line, &err);
    }
    cJSON_Delete(doc);
}

/*
 * Read lines from data[*at..len) (NULL: the end of the stream) into the pending lines until the
 * data is used up (0) or they make a full chunk (1: flush it, then call again with the rest); a
 * chunk is one script call, bounded in entries and in bytes, so it stays short in Redis.
 * -ENOMEM.
 */
static int stream_take(struct stream *s, const char *data, size_t len, size_t *at)
{
    for (;;) {
        if (s->npending == NDJSON_CHUNK_LINES || s->pending_bytes >= NDJSON_CHUNK_BYTES)
            return 1;
        const char *text = NULL;
        size_t tl = 0;
        long line = 0;
        enum ndjson_event ev = ndjson_next(&s->nd, data, len, at, &text, &tl, &line);
        if (ev == NDJSON_MORE)
            return 0;
        if (ev == NDJSON_NO_MEMORY)
            return -ENOMEM;
        if (ev == NDJSON_TOO_LONG) {
            struct entry_error err = {0};
            entry_fail(&err, 413, "line_too_large", "a line must be at most %ld bytes.",
                       NDJSON_LINE_MAX);
            reject_line(s, line, &err);
            continue;
        }
        stream_line(s, (char *)text, tl, line);
    }
}

/* The stream of a request, created on its first chunk; NULL after a 500 in rp. */
static struct stream *stream_of(struct http_request *rq, struct http_reply *rp)
{
    struct stream *s = rq->stream_state;
    if (!s) {
        s = rq->stream_state = calloc(1, sizeof(*s));
        if (s) {
            ndjson_init(&s->nd, NDJSON_LINE_MAX);
            s->rejected = cJSON_CreateArray();
        }
        if (!s || !s->rejected) {
            http_reply_errno(rp, -ENOMEM);
            return NULL;
        }
    }
    return s;
}

/* The reply to a stream cut by a Redis fault (rc) or by rankd stopping (rc 0): what was
 * applied and rejected up to the settled line, and where to resume. Lines rejected when read
 * after it are not counted: the client sends them again. */
static void stream_fault(struct http_reply *rp, const struct stream *s, int rc)
{
    int unknown = rc == -ETIME || rc == -ECONNRESET;
    long rejected = s->rejected_total - s->ndeferred;
    const char *code = !rc             ? "shutting_down"
                       : unknown       ? "write_outcome_unknown"
                       : rc == -EDQUOT ? "insufficient_storage"
                       : rc == -EROFS  ? "primary_changed"
                                       : "redis_unavailable";
    const char *what = !rc             ? "rankd is shutting down"
                       : unknown       ? "Redis did not answer after a chunk was sent"
                       : rc == -EDQUOT ? "Redis is out of memory (maxmemory) and refuses writes"
                       : rc == -EROFS  ? "Redis answered READONLY (a replica now: a failover)"
                                       : "Redis failed";
    http_reply_error(rp, rc == -EDQUOT ? 507 : 503, code,
                     "%s: %ld lines were applied and %ld rejected, every line up to line %ld is "
                     "settled%s; send the lines after line %ld again%s.",
                     what, s->applied, rejected, s->settled_line,
                     unknown ? ", and the chunk after it may or may not be applied" : "",
                     s->settled_line,
                     unknown ? " (read the members of the chunk first if it has incr)" : "");
    http_reply_header(rp, "Retry-After", "1");
}

void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp)
{
    struct stream *s = rq->stream_state;
    if (s)
        stream_fault(rp, s, 0);
    else
        http_reply_error(rp, 503, "shutting_down",
                         "rankd is shutting down: no line of the upload was applied.");
    http_reply_header(rp, "Retry-After", "1");
}

/* The reply at the end of a stream. */
static void stream_reply(struct http_reply *rp, struct stream *s)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "applied", (double)s->applied);
    cJSON_AddNumberToObject(doc, "rejected_total", (double)s->rejected_total);
    cJSON_AddItemToObject(doc, "rejected", s->rejected);
    s->rejected = NULL;
    http_reply_json(rp, 200, cJSON_PrintUnformatted(doc));
    cJSON_Delete(doc);
}

/*
 * The same on the event thread: lines are split and parsed as they arrive; a full chunk is
 * written (write.lua on the loop's write connection, board_write_submit) while the connection is
 * suspended, so a client sends no faster than Redis applies (back-pressure, bounded memory),
 * then the rest of the data is read. Settings changed under a chunk: read them again, validate,
 * resume after what was written.
 */
struct stream_flush {
    struct board_write_job w; /* first: board.c hands it back */
    struct board_settings_job sj;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    struct stream *s;
    const char *board;
    struct flush_bufs b;
    struct board_settings used;
    int attempts;
    int final; /* the end of the stream: reply after it */
};

static void flush_end(struct stream_flush *f, int rc)
{
    struct stream *s = f->s;
    flush_settle(s, rc, &f->used, &f->b);
    flush_bufs_free(&f->b);
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
    size_t ok = flush_prepare(f->s, set, &f->b);
    if (!ok) {
        flush_end(f, 0);
        return;
    }
    f->w =
        (struct board_write_job){.board = f->board,
                                 .assumed = *set,
                                 .entries = f->b.be,
                                 .n = ok,
                                 .flags = 0,
                                 .outcomes = f->b.out,
                                 .deadline_ms = util_now_ms() + f->rq->app->cfg.request_timeout_ms,
                                 .done = flush_written_async};
    int rc = board_write_submit(&f->rq->app->model, http_async_store_writes(f->async), &f->w);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

static void flush_written_async(struct board_write_job *w, int rc)
{
    struct stream_flush *f = (struct stream_flush *)w;
    flush_written(&f->b, w->handled, rc);
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
                                            util_now_ms() + f->rq->app->cfg.request_timeout_ms,
                                        .done = flush_settings_read};
    int rc = board_settings_submit(&f->rq->app->model, http_async_store_writes(f->async), &f->sj);
    if (rc)
        flush_end(f, rc == -EAGAIN ? -EIO : rc);
}

/* Start writing the pending lines; the flush ends the suspension (or the request, if final). */
static void flush_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                        struct stream *s, const char *board, int final)
{
    struct stream_flush *f = calloc(1, sizeof(*f));
    if (!f || flush_bufs_new(&f->b, s->npending)) {
        if (f)
            flush_bufs_free(&f->b);
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
    if (board_settings_cached(&rq->app->model, board, &set, &exists) == 0)
        flush_send(f, &set);
    else
        flush_read_settings(f);
}

int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async)
{
    const char *board;
    *used = 0;
    if (board_param(rq, rp, &board))
        return -1;
    struct stream *s = stream_of(rq, rp);
    if (!s)
        return -1;
    int rc = stream_take(s, data, len, used);
    if (rc < 0) {
        http_reply_errno(rp, rc);
        return -1;
    }
    if (rc == 0)
        return 0; /* all of it read: more, please */
    flush_start(rq, rp, async, s, board, 0);
    return 1;
}

/* The end of a stream on the event thread (from handle_scores_async). */
static void scores_stream_end(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        http_async_done(async);
        return;
    }
    struct stream *s = stream_of(rq, rp);
    size_t at = 0;
    int rc = s ? stream_take(s, NULL, 0, &at) : -1;
    if (rc < 0) {
        if (s)
            http_reply_errno(rp, rc);
        http_async_done(async);
        return;
    }
    if (s->npending) {
        flush_start(rq, rp, async, s, board, 1); /* replies when written */
        return;
    }
    stream_reply(rp, s);
    http_async_done(async);
}
