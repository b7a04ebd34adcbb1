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
#include "app.h"
#include "board.h"
#include "exporter.h"
#include "json_number.h"
#include "metrics.h"
#include "ndjson.h"
#include "page_cache.h"
#include "period.h"
#include "render.h"
#include "request.h"
#include "util.h"
#include "validate.h"

#define MSG_MAX VALIDATE_MSG_MAX
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

/* The reply to a board call's errno (http.h's table: board, member, period, Redis faults). */
static void reply_board_errno(struct http_reply *rp, int rc, const char *board, const char *id)
{
    struct http_errno_args a = {.board = board, .id = id};
    http_reply_errno_in(rp, HTTP_ERRNO_BOARD, rc, &a);
}

/* reply_board_errno for a write: a timeout after it was sent may have applied it. */
static void reply_board_write_errno(struct http_reply *rp, int rc, const char *board,
                                    const char *id)
{
    struct http_errno_args a = {.board = board, .id = id};
    http_reply_errno_in(rp, HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD, rc, &a);
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

void handle_healthz(struct http_request *rq, struct http_reply *rp)
{
    (void)rq;
    http_reply_json(rp, 200, strdup("{\"status\":\"ok\"}"));
}

/* 200 while Redis answers (reads are served); `writes` says whether Redis accepts writes now
 * (store_write_probe): "refused" with the code writes answer (insufficient_storage at maxmemory,
 * primary_changed on a replica), "unknown" when the probe itself failed. */
void handle_readyz(struct http_request *rq, struct http_reply *rp)
{
    int rc = store_ping(rq->app->store);
    if (rc) {
        http_reply_errno(rp, rc);
        return;
    }
    int w = store_write_probe(rq->app->write_store);
    const char *writes = w == 0 ? "ok" : w == -EDQUOT || w == -EROFS ? "refused" : "unknown";
    const char *why = w == -EDQUOT  ? ",\"writes_error\":\"insufficient_storage\""
                      : w == -EROFS ? ",\"writes_error\":\"primary_changed\""
                                    : "";
    char body[128];
    snprintf(body, sizeof(body), "{\"status\":\"ready\",\"writes\":\"%s\"%s}", writes, why);
    http_reply_json(rp, 200, strdup(body));
}

void handle_metrics(struct http_request *rq, struct http_reply *rp)
{
    struct buf out = {0};
    if (exporter_render(rq->app, rq->server, &out)) {
        buf_free(&out);
        http_reply_errno(rp, -ENOMEM);
        return;
    }
    rp->status = 200;
    rp->body = out;
    rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
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

void handle_rank(struct http_request *rq, struct http_reply *rp)
{
    struct rank_args a;
    if (rank_parse(rq, rp, &a))
        return;
    struct page_reply pr;
    int rc = page_cache_get(rq->app->pages, a.board, a.period, a.page, (int)a.size,
                            rq->if_none_match, &pr);
    if (rc)
        reply_board_errno(rp, rc, a.board, NULL);
    else
        reply_page(rp, &pr);
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
    else if (rc != -EAGAIN) /* Redis failed the lookup: 503 at once */
        reply_board_errno(rj->rp, rc, job->board, NULL);
    struct http_async *async = rj->async;
    free(rj);
    http_async_done(async, rc != -EAGAIN);
}

/* page_cache_job.after: a timer on the request's event thread. */
static int rank_after(void *ctx, int ms, void (*fn)(void *arg), void *arg)
{
    return http_timer_after(ctx, ms, fn, arg) ? 0 : -1;
}

int handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    struct rank_args a;
    struct rank_job *rj = calloc(1, sizeof(*rj));
    if (!rj || rank_parse(rq, rp, &a)) { /* cannot fail: handle_rank_quick parsed it */
        free(rj);
        return 0;
    }
    rj->job = (struct page_cache_job){.board = a.board,
                                      .period = a.period,
                                      .page = a.page,
                                      .size = (int)a.size,
                                      .if_none_match = rq->if_none_match,
                                      .deadline_ms = rq->deadline_ms,
                                      .writes = http_async_store_writes(async),
                                      .after = rank_after,
                                      .after_ctx = async,
                                      .done = rank_job_done};
    rj->rp = rp;
    rj->async = async;
    int rc = page_cache_submit(rq->app->pages, http_async_store(async), &rj->job);
    if (rc == -ETIMEDOUT) { /* Redis is not answering: 503 now, as the pools fail fast */
        reply_board_errno(rp, rc, a.board, NULL);
        free(rj);
        http_async_done(async, 1);
        return 1;
    }
    if (rc == 0)
        return 1;
    free(rj);
    return 0;
}

void handle_member_get(struct http_request *rq, struct http_reply *rp)
{
    const char *board, *period = NULL;
    int64_t size = 0;
    if (board_param(rq, rp, &board) || id_param(rq, 1, rp) ||
        count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &size) || period_arg(rq, rp, &period))
        return;
    struct board_member *mb = NULL;
    int rc = board_member_get(&rq->app->model, board, period, rq->params[1], rq->param_len[1], &mb);
    if (rc) {
        reply_board_errno(rp, rc, board, rq->params[1]);
        return;
    }
    http_reply_json(rp, 200,
                    render_member(rq->params[1], mb, size ? (int)size : mb->settings.page_size));
    board_member_free(mb);
}

void handle_around_get(struct http_request *rq, struct http_reply *rp)
{
    const char *board, *period = NULL;
    int64_t size = 0;
    if (board_param(rq, rp, &board) || id_param(rq, 1, rp) ||
        count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &size) || period_arg(rq, rp, &period))
        return;
    struct board_page *p = NULL;
    int rc = board_around_get(&rq->app->model, board, period, rq->params[1], rq->param_len[1],
                              (int)size, &p);
    if (rc) {
        reply_board_errno(rp, rc, board, rq->params[1]);
        return;
    }
    http_reply_json(rp, 200, render_around(board, p));
    board_page_free(p);
}

/* A member or around read on the event thread: one script call on its own read connection
 * (http_async_store), the reply rendered on the same thread. */
struct read_job {
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    enum board_read_kind kind;
    const char *board, *period; /* borrowed from the request */
    int64_t size;
    int attempts;
};

static int read_send(struct read_job *j);

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
        if (rc == -EAGAIN && ++j->attempts < 3)
            rc = read_send(j);
        if (rc == 0 && j->rp->status == 0)
            return; /* sent again */
    } else if (rc == -EIO || rc == -ECONNRESET) {
        rc = -EAGAIN; /* the connection failed: a read, so the blocking path redials and reads */
    }
    struct http_async *async = j->async;
    int replied = rc != -EAGAIN; /* -EAGAIN: the blocking path decides */
    if (rc && replied)
        reply_board_errno(j->rp, rc, j->board, id);
    free(j);
    http_async_done(async, replied);
}

/* 0 sent; else nothing was sent (-EAGAIN: take the blocking path, -ETIMEDOUT: 503 now). */
static int read_send(struct read_job *j)
{
    struct http_request *rq = j->rq;
    struct board_where w;
    if (board_where_cached(&rq->app->model, j->board, j->period, &w))
        return -EAGAIN; /* a period the hint cannot place: read the settings first */
    struct board_read rd;
    board_read_prepare(&rq->app->model, j->board, &w, j->kind, rq->params[1], rq->param_len[1], 0,
                       (int)j->size, &rd);
    int rc = store_async_script(http_async_store(j->async), rd.script, rd.nkeys, rd.nargs, rd.argv,
                                rd.lens, rq->deadline_ms, read_done, j);
    return rc < 0 ? rc : 0;
}

static int read_async(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                      enum board_read_kind kind)
{
    struct read_job *j = calloc(1, sizeof(*j));
    if (!j || !http_async_store(async)) {
        free(j);
        return 0;
    }
    *j = (struct read_job){.rq = rq, .rp = rp, .async = async, .kind = kind};
    if (board_param(rq, rp, &j->board) || id_param(rq, 1, rp) ||
        count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &j->size) ||
        period_arg(rq, rp, &j->period)) {
        free(j);
        http_async_done(async, 1); /* a 400 */
        return 1;
    }
    int rc = read_send(j);
    if (rc == 0)
        return 1;
    free(j);
    if (rc != -ETIMEDOUT)
        return 0;
    reply_board_errno(rp, rc, rq->params[0], NULL); /* Redis is not answering: 503 now */
    http_async_done(async, 1);
    return 1;
}

int handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    return read_async(rq, rp, async, BOARD_READ_MEMBER);
}

int handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    return read_async(rq, rp, async, BOARD_READ_AROUND);
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

void handle_boards_list(struct http_request *rq, struct http_reply *rp)
{
    uint64_t cursor = 0;
    int64_t count = BOARD_LIST_COUNT_MAX;
    if (cursor_arg(rq, rp, &cursor) || count_arg(rq, rp, "count", BOARD_LIST_COUNT_MAX, &count))
        return;
    struct board_list *l = NULL;
    int rc = board_list_get(&rq->app->model, cursor, (int)count, &l);
    if (rc) {
        http_reply_errno(rp, rc);
        return;
    }
    http_reply_json(rp, 200, render_board_list(l));
    board_list_free(l);
}

/* A board's settings with its readable periods. */
static void reply_board(struct http_request *rq, struct http_reply *rp, int status,
                        const char *board, const struct board_info *info)
{
    char ids[PERIOD_RETAIN_MAX + 1][PERIOD_ID_MAX];
    int n = board_periods(&rq->app->model, &info->settings, ids, PERIOD_RETAIN_MAX + 1);
    http_reply_json(rp, status, render_board(board, info, (const char(*)[PERIOD_ID_MAX])ids, n));
}

void handle_board_get(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return;
    struct board_info info;
    int rc = board_info_get(&rq->app->model, board, &info);
    if (rc) {
        reply_board_errno(rp, rc, board, NULL);
        return;
    }
    reply_board(rq, rp, 200, board, &info);
}

void handle_item_get(struct http_request *rq, struct http_reply *rp)
{
    if (id_param(rq, 0, rp))
        return;
    char *json = NULL;
    int rc = board_record_get(&rq->app->model, rq->params[0], rq->param_len[0], &json);
    struct http_errno_args a = {.id = rq->params[0]};
    if (rc)
        http_reply_errno_in(rp, HTTP_ERRNO_ITEM, rc, &a);
    else
        http_reply_json(rp, 200, json);
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

/* The settings of a PUT body (validate_settings); 0, or -1 after a 400 in rp. */
static int parse_settings(const cJSON *doc, struct board_settings_patch *p, struct http_reply *rp)
{
    struct board_settings defaults;
    struct entry_error err;
    board_settings_default(&defaults);
    if (validate_settings(doc, &defaults, p, &err) == 0)
        return 0;
    http_reply_error(rp, err.status, err.code, "%s", err.msg);
    return -1;
}

void handle_board_put(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return;
    cJSON *doc = parse_body(rq, rp);
    if (!doc)
        return;
    struct board_settings_patch patch;
    int bad = parse_settings(doc, &patch, rp);
    cJSON_Delete(doc);
    if (bad)
        return;
    int created = 0;
    const char *field = NULL;
    struct board_info info;
    int rc = board_put(&rq->app->model, board, &patch, &created, &field, &info);
    struct http_errno_args a = {.board = board, .field = field};
    if (rc)
        http_reply_errno_in(rp, HTTP_ERRNO_SETTINGS | HTTP_ERRNO_WRITE, rc, &a);
    else
        reply_board(rq, rp, created ? 201 : 200, board, &info);
}

void handle_board_delete(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return;
    int rc = board_delete(&rq->app->model, board);
    if (rc)
        reply_board_write_errno(rp, rc, board, NULL);
    else
        rp->status = 204;
}

void handle_member_delete(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board) || id_param(rq, 1, rp))
        return;
    int rc = board_member_delete(&rq->app->model, board, rq->params[1], rq->param_len[1]);
    if (rc)
        reply_board_write_errno(rp, rc, board, rq->params[1]);
    else
        rp->status = 204;
}

/* ---------------------------------------------------------------- lifecycle */

void handle_board_reset(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return;
    int rc = board_reset(&rq->app->model, board);
    if (rc)
        reply_board_write_errno(rp, rc, board, NULL);
    else
        rp->status = 204;
}

/* DELETE /boards/{board}/members?keep=N or ?below=SCORE: trim the tail in chunks. */
void handle_members_trim(struct http_request *rq, struct http_reply *rp)
{
    const char *board, *below = NULL;
    int64_t keep = -1;
    if (board_param(rq, rp, &board))
        return;
    int nb = http_arg(rq, "below", &below);
    const char *keep_s = NULL;
    int nk = http_arg(rq, "keep", &keep_s);
    if (nb + nk != 1) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "give exactly one of keep=N (keep the top N, remove the rest) or "
                         "below=SCORE (remove every member whose score is worse).");
        return;
    }
    int zero = keep_s && keep_s[0] && keep_s[strspn(keep_s, "0")] == '\0'; /* "0", "00"... */
    if (nk && (zero ? (keep = 0, 0) : request_parse_count(keep_s, INT64_C(1) << 53, &keep))) {
        http_reply_error(rp, 400, "invalid_parameter", "keep must be a whole number from 0.");
        return;
    }
    int64_t key = 0;
    if (nb) {
        /* a plain decimal (no exponent, hex, inf or spaces, which strtod would take), judged by
         * its digits like a score: 1.000000000000000001 is not 1 */
        struct json_number score;
        struct board_settings set;
        int exists = 0;
        int rc = json_number_parse_plain(below, strlen(below), &score)
                     ? -EINVAL
                     : board_settings_get(&rq->app->model, board, &set, &exists);
        if (rc == 0 && !exists)
            rc = -ENOENT;
        if (rc == -EINVAL || (rc == 0 && check_score(&set, &score, &key))) {
            http_reply_error(rp, 400, "invalid_parameter",
                             "below must be a score this board can hold (see GET /boards/%s).",
                             board);
            return;
        }
        if (rc) {
            reply_board_write_errno(rp, rc, board, NULL);
            return;
        }
    }
    int64_t removed = 0;
    int rc = board_trim(&rq->app->model, board, keep, key, &removed);
    if (rc) {
        reply_board_write_errno(rp, rc, board, NULL);
        return;
    }
    char body[64];
    snprintf(body, sizeof(body), "{\"removed\":%lld}", (long long)removed);
    http_reply_json(rp, 200, strdup(body));
}

void handle_admin_redis(struct http_request *rq, struct http_reply *rp)
{
    char *json = NULL;
    int rc = admin_redis_report(rq->app->store, &json);
    if (rc)
        http_reply_errno(rp, rc);
    else
        http_reply_json(rp, 200, json);
}

/* ---------------------------------------------------------------- records */

void handle_item_put(struct http_request *rq, struct http_reply *rp)
{
    if (id_param(rq, 0, rp))
        return;
    cJSON *doc = parse_body(rq, rp);
    if (!doc)
        return;
    int status;
    const char *code;
    char msg[MSG_MAX];
    char *json = validate_record(doc, &status, &code, msg);
    cJSON_Delete(doc);
    if (!json) {
        http_reply_error(rp, status, code, "%s", msg);
        return;
    }
    int rc = board_record_put(&rq->app->model, rq->params[0], rq->param_len[0], json, strlen(json));
    free(json);
    if (rc)
        http_reply_write_errno(rp, rc);
    else
        rp->status = 204;
}

void handle_item_delete(struct http_request *rq, struct http_reply *rp)
{
    if (id_param(rq, 0, rp))
        return;
    int rc = board_record_delete(&rq->app->model, rq->params[0], rq->param_len[0]);
    struct http_errno_args a = {.id = rq->params[0]};
    if (rc)
        http_reply_errno_in(rp, HTTP_ERRNO_ITEM | HTTP_ERRNO_WRITE, rc, &a);
    else
        rp->status = 204;
}

/* ---------------------------------------------------------------- score writes */

/* The 422 of a score check_score refused; the message quotes the literal as sent. */
static int score_error(const struct board_settings *s, const struct json_number *score, int rc,
                       struct entry_error *err)
{
    char lo[40], hi[40], decimals[16], msg[MSG_MAX];
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, sizeof(lo));
    render_number_text(max, hi, sizeof(hi));
    snprintf(decimals, sizeof(decimals), "%d", s->layout.decimals);
    struct http_errno_args a = {.score = score->text, .min = lo, .max = hi, .decimals = decimals};
    const struct http_errno_row *e = http_errno_find(HTTP_ERRNO_SCORE, rc);
    http_errno_format(e, rc, &a, msg, sizeof(msg));
    return entry_fail(err, e->status, e->code, "%s", msg);
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
        assert(in[i].id); /* validate_entry always sets it */
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

/*
 * Read the settings, validate the scores, write the entries in order. Returns 0 with outcomes,
 * or -1 with err and *bad (a score the board cannot hold: nothing is written on the first
 * attempt; after a concurrent settings change, the entries before *bad may be), or a negative
 * errno (Redis; a prefix of the entries may be applied).
 */
static int apply_entries(struct rankd *app, const char *board, const struct entry_in *in, size_t n,
                         int want_rank, struct board_outcome *outcomes, struct board_settings *used,
                         size_t *bad, struct entry_error *err)
{
    struct board_entry *be = calloc(n ? n : 1, sizeof(*be));
    if (!be)
        return -ENOMEM;
    size_t from = 0;
    int rc = -EAGAIN;
    for (int attempt = 0; attempt < 3 && rc == -EAGAIN; attempt++) {
        int exists = 0;
        rc = board_settings_get(&app->model, board, used, &exists);
        if (rc)
            break;
        if (prepare(used, in + from, n - from, be, bad, err)) {
            *bad += from;
            rc = -1;
            break;
        }
        size_t handled = 0;
        int flags = BOARD_WRITE_ATOMIC | (want_rank ? BOARD_WRITE_RANKS : 0);
        rc = n > from ? board_write(&app->model, board, used, be, n - from, flags, outcomes + from,
                                    &handled)
                      : 0;
        from += handled;     /* settings changed mid-way: resume after what was written */
        if (rc == -ERANGE) { /* an incr would leave the range: nothing written */
            *bad = from;
            range_error(used, err);
            rc = -1;
        }
    }
    free(be);
    return rc;
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
        if (validate_entry(e, &si->in[i], &err)) {
            metrics_write(METRICS_OP_UNKNOWN, 0);
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

/* Count a JSON write's entries that ended (rc as scores_reply): applied, or rejected for what
 * they hold; a refused batch counts its refused entry; a fault counts nothing (unknown). */
static void count_writes(const struct scores_in *si, int rc, size_t bad)
{
    if (rc == -1 && bad < si->n)
        metrics_write((int)si->in[bad].op, 0);
    for (size_t k = 0; rc == 0 && k < si->n; k++)
        metrics_write((int)si->in[k].op, si->out[k].rc == 0);
}

/* The reply to a write that ended (rc as apply_entries: 0, -1 with err and bad, or an errno). */
static void scores_reply(struct http_reply *rp, const struct scores_in *si, int rc,
                         const struct board_settings *used, size_t bad, struct entry_error *err)
{
    count_writes(si, rc, bad);
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

void handle_scores_post(struct http_request *rq, struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return;
    if (rq->streaming) {
        handle_scores_stream(rq, NULL, 0, rp); /* end of the stream: flush and reply */
        return;
    }
    struct scores_in si;
    if (scores_parse(rq, rp, &si))
        return;
    struct board_settings used;
    struct entry_error err = {0};
    size_t bad = 0;
    int rc = apply_entries(rq->app, board, si.in, si.n, si.single, si.out, &used, &bad, &err);
    scores_reply(rp, &si, rc, &used, bad, &err);
    scores_in_free(&si);
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
    int wrote; /* a write script was sent: the blocking path may not start over */
};

static void scores_job_end(struct scores_job *j, int rc, size_t bad, struct entry_error *err)
{
    struct http_async *async = j->async;
    int fallback = rc == -EAGAIN && !j->wrote && j->attempts == 0;
    if (!fallback) {
        if (rc && j->from > 0)
            rc = -ETIME; /* part of it is applied (a 422 too): never "not written" */
        scores_reply(j->rp, &j->si, rc, &j->w.assumed, bad, err);
    }
    scores_in_free(&j->si);
    free(j->be);
    free(j);
    http_async_done(async, !fallback);
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
    if (rc == 0)
        j->wrote = 1;
    else
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

static int scores_stream_end(struct http_request *rq, struct http_reply *rp,
                             struct http_async *async);

int handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (!http_async_store_writes(async))
        return 0;
    if (rq->streaming) /* on this thread only while its write connection is up */
        return store_async_connected(http_async_store_writes(async))
                   ? scores_stream_end(rq, rp, async)
                   : 0;
    struct scores_job *j = calloc(1, sizeof(*j));
    if (!j)
        return 0;
    if (board_param(rq, rp, &board) || scores_parse(rq, rp, &j->si)) {
        free(j);
        http_async_done(async, 1); /* a 4xx */
        return 1;
    }
    j->rq = rq;
    j->rp = rp;
    j->async = async;
    j->board = board;
    if (!(j->be = calloc(j->si.n + 1, sizeof(*j->be)))) {
        scores_in_free(&j->si);
        free(j);
        return 0;
    }
    struct board_settings set;
    int exists = 0;
    if (board_settings_cached(&rq->app->model, board, &set, &exists) == 0)
        scores_send(j, &set);
    else
        scores_read_settings(j);
    return 1;
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
    metrics_write(METRICS_OP_UNKNOWN, 0);
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
        if (i < settled)
            metrics_write((int)s->pending[i].op, b->bad[i] == 0);
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

/*
 * Apply the pending lines in order (blocking). A score the board cannot hold, or an incr whose
 * result leaves the range, rejects its own line only; the others are applied.
 */
static int stream_flush(struct http_request *rq, const char *board, struct stream *s)
{
    struct flush_bufs b;
    struct board_settings used;
    int rc = flush_bufs_new(&b, s->npending) ? -ENOMEM : -EAGAIN;
    for (int attempt = 0; attempt < 3 && rc == -EAGAIN; attempt++) {
        int exists = 0;
        rc = board_settings_get(&rq->app->model, board, &used, &exists);
        size_t ok = rc == 0 ? flush_prepare(s, &used, &b) : 0;
        size_t handled = 0;
        if (rc == 0 && ok)
            rc = board_write(&rq->app->model, board, &used, b.be, ok, 0, b.out, &handled);
        flush_written(&b, handled, rc);
    }
    flush_settle(s, rc, &used, &b);
    flush_bufs_free(&b);
    return rc;
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
    if (doc && validate_entry(doc, e, &err) == 0) {
        e->line = line;
        s->npending++;
        assert(e->id); /* validate_entry sets it on success */
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
    /* status, code and opening clause from http.h's table (as a write: a chunk was sent) */
    const struct http_errno_row *e = rc ? http_errno_find(HTTP_ERRNO_WRITE, rc) : NULL;
    int unknown = e && e->scope == HTTP_ERRNO_WRITE;
    long rejected = s->rejected_total - s->ndeferred;
    char what[160] = "rankd is shutting down";
    if (e)
        http_errno_summary(e, rc, what, sizeof(what));
    http_reply_error(rp, e ? e->status : 503, e ? e->code : "shutting_down",
                     "%s: %ld lines were applied and %ld rejected, every line up to line %ld is "
                     "settled%s; send the lines after line %ld again%s.",
                     what, s->applied, rejected, s->settled_line,
                     unknown ? ", and the chunk after it may or may not be applied" : "",
                     s->settled_line,
                     unknown ? " (read the members of the chunk first if it has incr)" : "");
    if (e && e->retry_after_s > 0) /* a stop: handle_scores_stream_stopped adds it */
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

int handle_scores_stream(struct http_request *rq, const char *data, size_t len,
                         struct http_reply *rp)
{
    const char *board;
    if (board_param(rq, rp, &board))
        return -1;
    struct stream *s = stream_of(rq, rp);
    if (!s)
        return -1;
    size_t at = 0;
    int rc;
    while ((rc = stream_take(s, data, len, &at)) == 1)
        if ((rc = stream_flush(rq, board, s)) != 0)
            break;
    if (rc == 0 && !data && s->npending)
        rc = stream_flush(rq, board, s);
    if (rc) {
        stream_fault(rp, s, rc);
        return -1;
    }
    if (!data)
        stream_reply(rp, s);
    return 0;
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
        http_async_done(async, 1);
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
            http_async_done(async, 1);
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
static int scores_stream_end(struct http_request *rq, struct http_reply *rp,
                             struct http_async *async)
{
    const char *board;
    if (board_param(rq, rp, &board)) {
        http_async_done(async, 1);
        return 1;
    }
    struct stream *s = stream_of(rq, rp);
    size_t at = 0;
    int rc = s ? stream_take(s, NULL, 0, &at) : -1;
    if (rc < 0) {
        if (s)
            http_reply_errno(rp, rc);
        http_async_done(async, 1);
        return 1;
    }
    if (s->npending) {
        flush_start(rq, rp, async, s, board, 1); /* replies when written */
        return 1;
    }
    stream_reply(rp, s);
    http_async_done(async, 1);
    return 1;
}
