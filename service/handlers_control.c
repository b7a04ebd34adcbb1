/* handlers_control.c -- service and control endpoints; see handlers_control.h. */
#include "handlers_control.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admin.h"
#include "board.h"
#include "handlers_common.h"
#include "json_check.h"
#include "json_number.h"
#include "metrics.h"
#include "page_cache.h"
#include "period.h"
#include "render.h"
#include "request.h"
#include "server.h"

/* ---------------------------------------------------------------- service */

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

void handle_admin_redis(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    admin_request(rq, rp, async, 0);
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
        http_reply_error(rp, 400, "invalid_cursor",
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
    int n = board_periods(&rq->app->model, &info->settings, ids, PERIOD_RETAIN_MAX + 1);
    http_reply_json(rp, status, render_board(board, info, (const char(*)[PERIOD_ID_MAX])ids, n));
}

static void board_get_reply(struct handlers_ctl *c, int rc)
{
    if (rc)
        handlers_reply_board_errno(c->rp, rc, c->job.board, NULL);
    else
        reply_board(c->rq, c->rp, 200, c->job.board, &c->job.info);
}

void handle_board_get(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, board_get_reply);
    if (!c)
        return;
    c->job.board = board;
    handlers_ctl_start(c, BOARD_CTL_INFO);
}

/* ---------------------------------------------------------------- settings */

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
    if (!cJSON_IsNumber(v) || json_check_number(v, &n) || json_number_scale(&n, 0, INT_MAX, &w) ||
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

/* Reject fields not in `known` (typos would otherwise be silently ignored) and repeated ones. */
static int only_fields(const cJSON *obj, const char *const *known, int n, struct http_reply *rp,
                       const char *where)
{
    const char *dup = json_check_duplicate(obj);
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

static void board_put_reply(struct handlers_ctl *c, int rc)
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
    int bad = parse_settings(doc, &patch, rp);
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
    const char *board;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, handlers_reply_204);
    if (!c)
        return;
    c->job.board = board;
    handlers_ctl_start(c, BOARD_CTL_DELETE);
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
    const char *board;
    if (handlers_board_param(rq, rp, &board)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, handlers_reply_204);
    if (!c)
        return;
    c->job.board = board;
    handlers_ctl_start(c, BOARD_CTL_RESET);
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
    if (rc == 0 && json_check_score(&sj->settings, &c->below, &c->job.below_key)) {
        http_reply_error(c->rp, 400, "invalid_parameter",
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
        http_reply_error(rp, 400, "invalid_parameter",
                         "give exactly one of keep=N (keep the top N, remove the rest) or "
                         "below=SCORE (remove every member whose score is worse).");
        handlers_answered(async);
        return;
    }
    int zero = keep_s && keep_s[0] && keep_s[strspn(keep_s, "0")] == '\0'; /* "0", "00"... */
    if (nk && (zero ? (keep = 0, 0) : request_parse_count(keep_s, INT64_C(1) << 53, &keep))) {
        http_reply_error(rp, 400, "invalid_parameter", "keep must be a whole number from 0.");
        handlers_answered(async);
        return;
    }
    /* a plain decimal (no exponent, hex, inf or spaces, which strtod would take), judged by its
     * digits like a score: 1.000000000000000001 is not 1 */
    struct json_number score;
    if (nb && json_number_parse_plain(below, strlen(below), &score)) {
        http_reply_error(rp, 400, "invalid_parameter",
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
    int rc = board_settings_submit(&rq->app->model, http_async_store(async), &c->sj);
    if (rc)
        handlers_ctl_done(&c->job, rc);
}
