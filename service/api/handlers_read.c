/* handlers_read.c -- pages, members, around, records; see handlers_read.h. */
#include "handlers_read.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "board.h"
#include "cursor.h"
#include "handlers_common.h"
#include "pages.h"
#include "rank.h"
#include "render.h"
#include "request.h"
#include "util.h"
#include "validate.h"

/* ---------------------------------------------------------------- pages */

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
    const char *period;  /* NULL: the current one */
    int64_t page, size;  /* size 0: the board's page size */
    int64_t min_version; /* 0: any page; else never one computed before this write counter */
    enum rank_type rank;
    /* a walk (walk.lua, never cached: always read after every write): a score range and/or a
     * cursor */
    int walk;
    enum board_walk from; /* page, after or before */
    struct cursor cursor; /* after, before */
    int has_min, has_max; /* the score range's bounds, as literals */
    struct json_number min, max;
};

/* The cursor argument `name` (after= or before=, of the kind it must be): 0 (a->cursor, and the
 * period the cursor was read in), or -1 with a 400 invalid_cursor in rp. */
static int cursor_arg(struct http_request *rq, struct http_reply *rp, const char *name,
                      enum cursor_kind kind, struct rank_args *a)
{
    const char *v = NULL;
    http_arg(rq, name, &v);
    if (cursor_decode(v, &a->cursor) || a->cursor.kind != kind ||
        (a->cursor.tagged && a->cursor.board_tag != cursor_board_tag(a->board)) ||
        (a->period && a->period[0] && strcmp(a->period, a->cursor.period) != 0)) {
        http_reply_error(rp, 400, "invalid_cursor",
                         "%s must be the %s cursor of a page of this board, as rankd sent it%s.",
                         name, kind == CURSOR_NEXT ? "next" : "prev",
                         a->period && a->period[0] ? " (and of the period asked)" : "");
        return -1;
    }
    a->period = a->cursor.period[0] ? a->cursor.period : NULL;
    return 0;
}

/* The score bound `name` (min= or max=), a number literal; 0 or -1 with a 400 in rp. */
static int bound_arg(struct http_request *rq, struct http_reply *rp, const char *name, int *has,
                     struct json_number *out)
{
    const char *v = NULL;
    int n = http_arg(rq, name, &v);
    *has = n == 1;
    if (n > 1 || (n == 1 && json_number_parse(v, strlen(v), out))) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "%s must be given once, a number (a JSON number literal, e.g. 1500).",
                         name);
        return -1;
    }
    return 0;
}

/* after=, before=, min=, max= (a walk), checked with the rest; 0 or -1 with a 400 in rp. */
static int walk_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    const char *v = NULL;
    int na = http_arg(rq, "after", &v), nb = http_arg(rq, "before", &v);
    int np = http_arg(rq, "page", &v);
    if (na > 1 || nb > 1 || (na && nb) || ((na || nb) && np)) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "give after or before once, and not with page (a cursor says where the "
                         "page is).");
        return -1;
    }
    a->from = na ? BOARD_WALK_AFTER : nb ? BOARD_WALK_BEFORE : BOARD_WALK_PAGE;
    if ((na && cursor_arg(rq, rp, "after", CURSOR_NEXT, a)) ||
        (nb && cursor_arg(rq, rp, "before", CURSOR_PREV, a)) ||
        bound_arg(rq, rp, "min", &a->has_min, &a->min) ||
        bound_arg(rq, rp, "max", &a->has_max, &a->max))
        return -1;
    a->walk = na || nb || a->has_min || a->has_max;
    return 0;
}

/* 0, or -1 with rp filled (400): every argument is checked before any Redis call. */
static int rank_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    /* every field set (no cursor, no bounds: a walk reads only what was given; a walk without
     * a cursor sends no edge, read_send_at) */
    *a = (struct rank_args){.page = 1};
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
    } else if (handlers_board_param(rq, rp, &a->board)) {
        return -1;
    }
    if (handlers_count_arg(rq, rp, "page", REQUEST_PAGE_MAX, &a->page) ||
        handlers_count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &a->size) ||
        handlers_count_arg(rq, rp, "min_version", REQUEST_VERSION_MAX, &a->min_version) ||
        handlers_period_arg(rq, rp, &a->period) || handlers_rank_arg(rq, rp, &a->rank) ||
        walk_parse(rq, rp, a))
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
    if (a.walk) /* a score range or a cursor: walk.lua, never cached */
        return 0;
    struct page_reply pr;
    if (pages_get_l1(rq->app->pages, a.board, a.period, a.page, (int)a.size, a.rank, a.min_version,
                     rq->if_none_match, &pr))
        return 0;
    reply_page(rp, &pr);
    return 1;
}

/* A page read on its way through the batched hit path (on the event thread's connection). */
struct rank_job {
    struct pages_job job; /* first: the flow hands it back */
    struct http_reply *rp;
    struct http_async *async;
};

static void rank_job_done(struct pages_job *job, int rc)
{
    struct rank_job *rj = (struct rank_job *)job;
    if (rc == 0)
        reply_page(rj->rp, &job->out);
    else
        handlers_reply_board_errno(rj->rp, rc, job->board, NULL);
    struct http_async *async = rj->async;
    free(rj);
    http_async_done(async);
}

/* pages_job.after: a timer on the request's event thread. */
static int rank_after(void *ctx, int ms, void (*fn)(void *arg), void *arg)
{
    return http_timer_after(ctx, ms, fn, arg) ? 0 : -1;
}

static void walk_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                       const struct rank_args *a);

void handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    struct rank_args a;
    struct rank_job *rj = calloc(1, sizeof(*rj));
    if (!rj || rank_parse(rq, rp, &a)) { /* parsing cannot fail: handle_rank_quick parsed it */
        free(rj);
        if (!rp->status)
            http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    if (a.walk) {
        free(rj);
        walk_start(rq, rp, async, &a);
        return;
    }
    rj->job = (struct pages_job){.board = a.board,
                                 .period = a.period,
                                 .page = a.page,
                                 .size = (int)a.size,
                                 .min_version = a.min_version,
                                 .rank = a.rank,
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
    int rc = pages_submit(rq->app->pages, http_async_store(async), &rj->job);
    if (rc) { /* Redis is not answering, or cannot be reached: 503 now */
        handlers_reply_board_errno(rp, rc, a.board, NULL);
        free(rj);
        handlers_answered(async);
        return;
    }
}

/* ---------------------------------------------------------------- one board by one script */

/*
 * A read of one board on the event thread: one script call on its own read connection
 * (http_async_store), the reply rendered on the same thread. A period this process cannot place
 * from memory is placed from the settings, read first on the same connection. With
 * --read-from-replicas a replica may answer the reads whose scripts write nothing
 * (store_script_read_only); ?min_version=V (a write reply's version) checks its answer's write
 * counter, and one below V is asked of the primary instead (read your writes).
 */
enum read_what {
    READ_MEMBER = 0,   /* GET .../members/{id} */
    READ_AROUND,       /* GET .../members/{id}/around */
    READ_AROUND_SCORE, /* GET .../around?score= */
    READ_PERCENTILE,   /* GET .../percentile?p= */
    READ_TOP,          /* GET .../top?percent= */
    READ_LOOKUP,       /* GET .../members?ids=, POST .../lookup */
    READ_WALK,         /* GET .../rank?min=&max=, ?after=, ?before= */
};

struct read_job {
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    enum read_what what;
    const char *board, *period; /* borrowed from the request */
    const char *id;             /* member, around: the path's id (id_len bytes) */
    size_t id_len;
    int64_t size;
    enum rank_type rank;
    int64_t min_version; /* 0: any; else never from data before this write counter */
    int primary;         /* sent to the primary: a replica's answer was older than min_version */
    int attempts, resent;
    struct board_settings_job sj;
    /* around a score: the literal, and the settings it is judged under (this process's view,
     * then what the script said) */
    struct json_number score;
    struct board_settings judged;
    /* percentile, top: the share asked (P * 10^4 of 10^6) and P's text */
    int64_t share;
    char share_text[32];
    /* walk: the request's range and cursor (judged under `judged`), and the period read */
    struct rank_args walk;
    char walk_period[PERIOD_ID_MAX];
    /* lookup: the ids (ids and lens owned), borrowed from the query's list or from the body */
    struct request_list list;
    cJSON *body;
    const char **ids;
    size_t *lens, nids;
};

static int read_send(struct read_job *j);

static void read_end(struct read_job *j, int rc)
{
    struct http_async *async = j->async;
    if (rc)
        handlers_reply_board_errno(j->rp, rc, j->board, j->id);
    request_list_free(&j->list);
    cJSON_Delete(j->body);
    free(j->ids);
    free(j->lens);
    free(j);
    http_async_done(async);
}

/* Around a score: its key under j->judged (*key), or the refusal (nonzero). */
static int around_score_judge(const struct read_job *j, int64_t *key)
{
    return validate_check_score(&j->judged, &j->score, key);
}

/* A walk's range as keys under j->judged (the better end lo) into a: 0, or the refusal of the
 * bound *bad (-EDOM, -ERANGE), or -EINVAL for min above max. */
static int walk_judge(const struct read_job *j, struct board_read_args *a,
                      const struct json_number **bad)
{
    const struct rank_args *w = &j->walk;
    int64_t kmin = 0, kmax = 0;
    int rc = 0;
    if (w->has_min && (rc = validate_check_score(&j->judged, &w->min, &kmin)) != 0)
        *bad = &w->min;
    else if (w->has_max && (rc = validate_check_score(&j->judged, &w->max, &kmax)) != 0)
        *bad = &w->max;
    if (rc)
        return rc;
    /* keys: a smaller key is a better score, so on a desc board max is the better end */
    int desc = j->judged.layout.order == SCORE_ORDER_DESC;
    a->has_lo = desc ? w->has_max : w->has_min;
    a->has_hi = desc ? w->has_min : w->has_max;
    a->lo = desc ? kmax : kmin;
    a->hi = desc ? kmin : kmax;
    return a->has_lo && a->has_hi && a->lo > a->hi ? -EINVAL : 0;
}

/* The refusal rc of bound `bad`, judged under settings that are the board's: 422, or 400 for
 * min above max. */
static void walk_refusal(struct read_job *j, int rc, const struct json_number *bad)
{
    if (rc == -EINVAL) {
        http_reply_error(j->rp, 400, "invalid_parameter", "min must not be above max.");
        return;
    }
    struct entry_error err = {0};
    validate_score_error(&j->judged, bad, rc, &err);
    http_reply_error(j->rp, err.status, err.code, "%s", err.msg);
}

/* Take the script's reply r (taken) and render j's reply: 0 answered, -EAGAIN to send again
 * (periods learnt, or a score to judge again), else the error. */
static int read_take(struct read_job *j, struct store_reply *r)
{
    struct board_model *m = &j->rq->app->model;
    struct board_page *p = NULL;
    int rc = 0;
    switch (j->what) {
    case READ_MEMBER: {
        struct board_member *mb = NULL;
        if ((rc = board_member_take(m, j->board, r, &mb)) == 0)
            http_reply_json(
                j->rp, 200,
                render_member(j->id, mb, j->size ? (int)j->size : mb->settings.page_size));
        board_member_free(mb);
        return rc;
    }
    case READ_AROUND:
        rc = board_around_take(m, j->board, r, &p);
        break;
    case READ_AROUND_SCORE: {
        struct board_settings seen;
        rc = board_around_score_take(m, j->board, r, &seen, &p);
        if (rc == -ESTALE) { /* the settings the literal must be judged under */
            int64_t key = 0;
            j->judged = seen;
            int refused = around_score_judge(j, &key);
            if (!refused)
                return -EAGAIN;
            struct entry_error err = {0};
            validate_score_error(&j->judged, &j->score, refused, &err);
            http_reply_error(j->rp, err.status, err.code, "%s", err.msg);
            return 0;
        }
        break;
    }
    case READ_PERCENTILE: {
        struct board_percentile *pc = NULL;
        if ((rc = board_percentile_take(m, j->board, r, &pc)) == 0)
            http_reply_json(j->rp, 200, render_percentile(j->share_text, pc));
        board_percentile_free(pc);
        return rc;
    }
    case READ_TOP:
        if ((rc = board_page_take(m, j->board, r, 1, &p)) == 0)
            http_reply_json(j->rp, 200, render_top(j->board, p));
        board_page_free(p);
        return rc;
    case READ_LOOKUP: {
        struct board_lookup *l = NULL;
        if ((rc = board_lookup_take(m, j->board, r, &l)) == 0)
            http_reply_json(j->rp, 200, render_lookup(j->board, l));
        board_lookup_free(l);
        return rc;
    }
    case READ_WALK: {
        struct board_settings seen;
        int ranged = j->walk.has_min || j->walk.has_max;
        rc = board_walk_take(m, j->board, r, ranged, &seen, &p);
        if (rc == -ESTALE) { /* the settings the bounds must be judged under */
            struct board_read_args a = {0};
            const struct json_number *bad = NULL;
            j->judged = seen;
            int refused = walk_judge(j, &a, &bad);
            if (!refused)
                return -EAGAIN;
            walk_refusal(j, refused, bad);
            return 0;
        }
        if (rc == 0) {
            util_copy(p->period, sizeof(p->period), j->walk_period);
            http_reply_json(
                j->rp, 200,
                render_walk(j->board, j->walk.from == BOARD_WALK_PAGE ? j->walk.page : 0, p));
        }
        board_page_free(p);
        return rc;
    }
    }
    if (rc == 0) /* around a member or a score */
        http_reply_json(j->rp, 200, render_around(j->board, p));
    board_page_free(p);
    return rc;
}

static void read_done(void *arg, int rc, struct store_reply **replies)
{
    struct read_job *j = arg;
    struct rankd *app = j->rq->app;
    if (rc == 0 && j->min_version > 0 && !j->primary &&
        store_async_reads_replicas(http_async_store(j->async))) {
        int64_t v = board_read_version(replies[0]);
        if (v >= 0 && v < j->min_version) { /* a replica behind the write asked for */
            j->primary = 1;
            store_note_replica_stale(app->reads);
            if ((rc = read_send(j)) == 0)
                return;
            read_end(j, rc);
            return;
        }
    }
    if (rc == 0) {
        struct store_reply *r = replies[0];
        replies[0] = NULL; /* taken */
        rc = read_take(j, r);
        /* the periods (or the layout of a score) were not what this process thought: learnt,
         * so once more */
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
    static const enum board_read_kind kinds[] = {[READ_MEMBER] = BOARD_READ_MEMBER,
                                                 [READ_AROUND] = BOARD_READ_AROUND,
                                                 [READ_AROUND_SCORE] = BOARD_READ_AROUND_SCORE,
                                                 [READ_PERCENTILE] = BOARD_READ_PERCENTILE,
                                                 [READ_TOP] = BOARD_READ_TOP,
                                                 [READ_WALK] = BOARD_READ_WALK};
    struct http_request *rq = j->rq;
    struct store_async *conn = http_async_store(j->async);
    if (!conn)
        return -ECONNREFUSED;
    int rc;
    if (j->what == READ_LOOKUP) {
        struct board_lookup_call c;
        rc = board_lookup_prepare(&rq->app->model, j->board, w, j->rank, j->ids, j->lens, j->nids,
                                  &c);
        if (rc == 0)
            rc = store_async_script_flags(conn, c.script,
                                          store_read_flags(j->min_version, j->primary), c.nkeys,
                                          c.nargs, c.argv, c.lens, rq->deadline_ms, read_done, j);
        board_lookup_call_free(&c);
        return rc < 0 ? rc : 0;
    }
    struct board_read_args a = {.kind = kinds[j->what],
                                .rank = j->rank,
                                .id = j->id,
                                .id_len = j->id_len,
                                .size = (int)j->size,
                                .layout = j->judged.layout};
    if (j->what == READ_AROUND_SCORE)
        a.refused = around_score_judge(j, &a.key) != 0;
    if (j->what == READ_WALK) {
        const struct rank_args *wk = &j->walk;
        const struct json_number *bad = NULL;
        a.page = wk->page;
        a.walk = walk_judge(j, &a, &bad) ? BOARD_WALK_CHECK : wk->from;
        if (wk->from != BOARD_WALK_PAGE) { /* the cursor's edge */
            a.edge_stored = wk->cursor.stored;
            a.edge_gen = wk->cursor.gen;
            a.edge_id = wk->cursor.id;
            a.edge_id_len = wk->cursor.id_len;
        }
        util_copy(j->walk_period, sizeof(j->walk_period), w->period);
    }
    a.num = j->what == READ_PERCENTILE ? RANK_SHARE_DEN - j->share : j->share;
    a.den = RANK_SHARE_DEN;
    struct board_read rd;
    board_read_prepare(&rq->app->model, j->board, w, &a, &rd);
    rc = store_async_script_flags(conn, rd.script, store_read_flags(j->min_version, j->primary),
                                  rd.nkeys, rd.nargs, rd.argv, rd.lens, rq->deadline_ms, read_done,
                                  j);
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

/* A new job for rq with the arguments every read of one board takes (the board, period and
 * rank); NULL when answered already (a 400, or out of memory). */
static struct read_job *read_job_new(struct http_request *rq, struct http_reply *rp,
                                     struct http_async *async, enum read_what what)
{
    struct read_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return NULL;
    }
    *j = (struct read_job){.rq = rq, .rp = rp, .async = async, .what = what};
    if (handlers_board_param(rq, rp, &j->board) || handlers_period_arg(rq, rp, &j->period) ||
        handlers_rank_arg(rq, rp, &j->rank) ||
        handlers_count_arg(rq, rp, "min_version", REQUEST_VERSION_MAX, &j->min_version)) {
        free(j);
        handlers_answered(async); /* a 400 */
        return NULL;
    }
    return j;
}

/* Send j (its arguments all checked); a failure to send is answered at once (503). */
static void read_start(struct read_job *j)
{
    int rc = read_send(j);
    if (rc) /* Redis is not answering, or cannot be reached: 503 now */
        read_end(j, rc);
}

/* A refusal found after the job was made (rp filled: a 400, or 500 out of memory): answered,
 * the job freed. */
static void read_refused(struct read_job *j)
{
    read_end(j, 0);
}

static void member_read(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                        enum read_what what)
{
    struct read_job *j = read_job_new(rq, rp, async, what);
    if (!j)
        return;
    j->id = rq->params[1];
    j->id_len = rq->param_len[1];
    if (handlers_id_param(rq, 1, rp) ||
        handlers_count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &j->size)) {
        read_refused(j);
        return;
    }
    read_start(j);
}

void handle_member_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    member_read(rq, rp, async, READ_MEMBER);
}

void handle_around_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    member_read(rq, rp, async, READ_AROUND);
}

void handle_around_score_async(struct http_request *rq, struct http_reply *rp,
                               struct http_async *async)
{
    struct read_job *j = read_job_new(rq, rp, async, READ_AROUND_SCORE);
    if (!j)
        return;
    const char *v = NULL;
    if (handlers_count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &j->size) ||
        handlers_required_arg(rq, rp, "score", &v, NULL)) {
        read_refused(j);
        return;
    }
    if (json_number_parse(v, strlen(v), &j->score)) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "score must be a number (a JSON number literal, e.g. 1500 or 12.5).");
        read_refused(j);
        return;
    }
    /* judged first under this process's view of the board (the defaults without one); the
     * script checks that layout and says when to judge again */
    int exists = 0;
    if (board_settings_cached(&rq->app->model, j->board, &j->judged, &exists))
        board_settings_default(&j->judged);
    read_start(j);
}

/* GET .../rank with min=/max= and/or after=/before= (rank_parse checked it all): walk.lua, the
 * bounds judged under this process's view of the layout (the script checks it). */
static void walk_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                       const struct rank_args *a)
{
    struct read_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    *j = (struct read_job){.rq = rq, .rp = rp, .async = async, .what = READ_WALK};
    j->walk = *a;
    j->board = a->board;
    j->size = a->size;
    j->rank = a->rank;
    j->min_version = a->min_version;
    /* the cursor's period (its copy here: a is the caller's), or the request's */
    j->period = a->period == a->cursor.period ? j->walk.cursor.period : a->period;
    j->walk.period = j->period;
    int exists = 0;
    if (board_settings_cached(&rq->app->model, j->board, &j->judged, &exists))
        board_settings_default(&j->judged);
    read_start(j);
}

/* percentile?p=P and top?percent=P: the share of the board asked, exactly. */
static void share_read(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                       enum read_what what, const char *name)
{
    struct read_job *j = read_job_new(rq, rp, async, what);
    if (!j)
        return;
    const char *v = NULL;
    if (handlers_required_arg(rq, rp, name, &v, NULL)) {
        read_refused(j);
        return;
    }
    if (rank_percent_parse(v, &j->share)) {
        http_reply_error(rp, 400, "invalid_parameter",
                         "%s must be a number from 0 to 100 with at most %d decimals (e.g. 99.5).",
                         name, RANK_PERCENT_DECIMALS);
        read_refused(j);
        return;
    }
    rank_decimal_text(j->share, RANK_PERCENT_DECIMALS, j->share_text, sizeof(j->share_text));
    read_start(j);
}

void handle_percentile_async(struct http_request *rq, struct http_reply *rp,
                             struct http_async *async)
{
    share_read(rq, rp, async, READ_PERCENTILE, "p");
}

void handle_top_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    share_read(rq, rp, async, READ_TOP, "percent");
}

#define LOOKUP_QUERY_MAX 100 /* ids of GET .../members?ids= (POST .../lookup: BOARD_LOOKUP_MAX) */

void handle_members_get_async(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async)
{
    struct read_job *j = read_job_new(rq, rp, async, READ_LOOKUP);
    if (!j)
        return;
    const char *v = NULL, *raw = NULL;
    if (handlers_required_arg(rq, rp, "ids", &v, &raw)) {
        read_refused(j);
        return;
    }
    int rc = request_list_split(raw, LOOKUP_QUERY_MAX, &j->list);
    for (size_t i = 0; rc == 0 && i < j->list.n; i++)
        if (!request_id_valid(j->list.items[i], j->list.lens[i]))
            rc = -EINVAL;
    if (rc) {
        if (rc == -E2BIG)
            http_reply_error(rp, 400, "invalid_ids",
                             "ids takes at most %d ids; POST /boards/%s/lookup takes up to %d.",
                             LOOKUP_QUERY_MAX, j->board, BOARD_LOOKUP_MAX);
        else if (rc == -ENOMEM)
            http_reply_errno(rp, rc);
        else
            http_reply_error(rp, 400, "invalid_id",
                             "ids must be ids separated by ',' (each 1 to %d bytes of valid UTF-8 "
                             "without control characters; a ',' inside an id is %%2C).",
                             BOARD_ID_LEN_MAX);
        read_refused(j);
        return;
    }
    j->ids = calloc(j->list.n ? j->list.n : 1, sizeof(*j->ids)); /* n >= 1: split says so */
    j->lens = calloc(j->list.n ? j->list.n : 1, sizeof(*j->lens));
    if (!j->ids || !j->lens) {
        http_reply_errno(rp, -ENOMEM);
        read_refused(j);
        return;
    }
    for (size_t i = 0; i < j->list.n; i++) {
        j->ids[i] = j->list.items[i];
        j->lens[i] = j->list.lens[i];
    }
    j->nids = j->list.n;
    read_start(j);
}

void handle_lookup_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    struct read_job *j = read_job_new(rq, rp, async, READ_LOOKUP);
    if (!j)
        return;
    struct entry_error err = {0};
    if (!(j->body = handlers_parse_body(rq, rp))) {
        read_refused(j);
        return;
    }
    if (validate_lookup(j->body, BOARD_LOOKUP_MAX, &j->ids, &j->lens, &j->nids, &err)) {
        http_reply_error(rp, err.status, err.code, "%s", err.msg);
        read_refused(j);
        return;
    }
    read_start(j);
}

/* ---------------------------------------------------------------- one member on many boards */

/* GET /members/{id}?boards=a,b,c: one member_boards.lua call over the boards' keys on one
 * Redis; on a Redis Cluster one call per board (a script holds one slot), all sent in one loop
 * iteration (one pipeline per node), their replies put together here. */
struct boards_job;

/* One member_boards.lua call of a job: its boards names[at, at + n). */
struct boards_part {
    struct boards_job *j;
    size_t at, n;
};

struct boards_job {
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    enum rank_type rank;
    struct request_list list; /* the names asked */
    const char *names[BOARD_MEMBER_BOARDS_MAX];
    size_t n;
    int attempts, resent;
    struct board_boards_call call; /* prepared for each part in turn (a send copies it) */
    struct boards_part parts[BOARD_MEMBER_BOARDS_MAX];
    size_t outstanding; /* parts sent and not answered */
    int rc, cut;        /* the parts' outcome so far; a part's connection failed */
    size_t bad;         /* -ENOSYS: the board */
    struct board_on_board on[BOARD_MEMBER_BOARDS_MAX];
};

static int boards_send(struct boards_job *j);

static void boards_end(struct boards_job *j, int rc, size_t bad)
{
    struct http_async *async = j->async;
    if (rc)
        handlers_reply_board_errno(j->rp, rc, rc == -ENOSYS ? j->names[bad] : NULL,
                                   j->rq->params[0]);
    request_list_free(&j->list);
    free(j);
    http_async_done(async);
}

/* How much a part's outcome weighs when the parts are put together: dense ranks unavailable on
 * a board (the first such board), then any other refusal, then periods learnt (send again). */
static int boards_weight(int rc)
{
    return rc == 0 ? 0 : rc == -EAGAIN ? 1 : rc == -ENOSYS ? 3 : 2;
}

static void boards_done(void *arg, int rc, struct store_reply **replies)
{
    struct boards_part *p = arg;
    struct boards_job *j = p->j;
    size_t bad = 0;
    if (rc == 0) {
        struct store_reply *r = replies[0];
        replies[0] = NULL; /* taken */
        rc = board_boards_take(&j->rq->app->model, j->names + p->at, p->n, r, j->on + p->at, &bad);
        bad += p->at;
    } else if (rc == -EIO || rc == -ECONNRESET) {
        j->cut = rc; /* a read cut by a lost connection: the job may be sent once more */
        rc = 0;
    }
    if (boards_weight(rc) > boards_weight(j->rc) ||
        (rc == -ENOSYS && j->rc == -ENOSYS && bad < j->bad)) {
        j->rc = rc;
        j->bad = bad;
    }
    if (--j->outstanding > 0)
        return;
    rc = j->rc;
    if (rc == 0 && j->cut) {
        rc = j->cut;
        if (!j->resent++ && util_now_ms() < j->rq->deadline_ms && (rc = boards_send(j)) == 0)
            return; /* once more */
    } else if (rc == 0) {
        http_reply_json(j->rp, 200, render_member_boards(j->rq->params[0], j->names, j->on, j->n));
    } else if (rc == -EAGAIN && ++j->attempts < 3 && (rc = boards_send(j)) == 0) {
        return; /* periods learnt: once more */
    }
    boards_end(j, rc == -ECONNRESET ? -EIO : rc, j->bad);
}

/* Send every part; 0 (boards_done ends the job), else nothing was sent. */
static int boards_send(struct boards_job *j)
{
    struct http_request *rq = j->rq;
    struct board_model *m = &rq->app->model;
    struct store_async *conn = http_async_store(j->async);
    if (!conn)
        return -ECONNREFUSED;
    size_t calls = board_boards_calls(m, j->n);
    size_t per = calls ? j->n / calls : 0;
    j->outstanding = 0;
    j->rc = j->cut = 0;
    j->bad = 0;
    int rc = 0;
    for (size_t c = 0; c < calls; c++) {
        struct boards_part *p = &j->parts[c];
        *p = (struct boards_part){.j = j, .at = c * per, .n = per};
        board_boards_prepare(m, j->names + p->at, p->n, rq->params[0], rq->param_len[0], j->rank,
                             &j->call);
        rc = store_async_script(conn, j->call.script, j->call.nkeys, j->call.nargs, j->call.argv,
                                j->call.lens, rq->deadline_ms, boards_done, p);
        if (rc < 0)
            break;
        j->outstanding++;
    }
    if (rc >= 0 || j->outstanding == 0)
        return rc < 0 ? rc : 0;
    /* some parts are out: they end the job, with this refusal */
    j->rc = rc;
    return 0;
}

/* The boards= list (raw: as sent) of j's request into j->names, each board once, in the order
 * first named: 0, or -1 with a 400 in j->rp. */
static int boards_parse(struct boards_job *j, const char *raw)
{
    int rc = request_list_split(raw, BOARD_MEMBER_BOARDS_MAX, &j->list);
    if (rc) {
        http_reply_error(j->rp, 400, rc == -E2BIG ? "invalid_parameter" : "invalid_board",
                         "boards must be 1 to %d board names separated by ','.",
                         BOARD_MEMBER_BOARDS_MAX);
        return -1;
    }
    for (size_t i = 0; i < j->list.n; i++) {
        const char *b = j->list.items[i];
        if (!board_name_valid(b, j->list.lens[i]) || strlen(b) != j->list.lens[i]) {
            http_reply_error(j->rp, 400, "invalid_board",
                             "boards[%zu] must be 1 to %d characters from A-Z, a-z, 0-9, '.', '_' "
                             "and '-'.",
                             i, BOARD_NAME_LEN_MAX);
            return -1;
        }
        size_t k = 0;
        while (k < j->n && strcmp(j->names[k], b) != 0)
            k++;
        if (k == j->n)
            j->names[j->n++] = b;
    }
    return 0;
}

void handle_member_boards_async(struct http_request *rq, struct http_reply *rp,
                                struct http_async *async)
{
    struct boards_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    j->rq = rq;
    j->rp = rp;
    j->async = async;
    const char *v = NULL, *raw = NULL;
    if (handlers_id_param(rq, 0, rp) || handlers_rank_arg(rq, rp, &j->rank) ||
        handlers_required_arg(rq, rp, "boards", &v, &raw) || boards_parse(j, raw)) {
        request_list_free(&j->list);
        free(j);
        handlers_answered(async); /* a 400 */
        return;
    }
    int rc = boards_send(j);
    if (rc) /* Redis is not answering, or cannot be reached: 503 now */
        boards_end(j, rc, 0);
}

/* ---------------------------------------------------------------- records */

static void item_get_reply(struct handlers_ctl *c, int rc)
{
    struct http_errno_args a = {.id = c->job.id};
    if (rc)
        http_reply_errno_in(c->rp, HTTP_ERRNO_ITEM, rc, &a);
    else
        http_reply_json(c->rp, 200, c->job.record); /* takes it */
    if (rc == 0)
        c->job.record = NULL;
}

void handle_item_get(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (handlers_id_param(rq, 0, rp)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, item_get_reply);
    if (!c)
        return;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    handlers_ctl_start(c, BOARD_CTL_RECORD_GET);
}
