/*
 * handlers_read_one.c -- reads of one board by one script (members, around, around a score,
 * many members, percentiles, top, walks): the read job on the event thread; see
 * handlers_read.h. handlers_read_int.h holds what the two files share.
 */
#include <inttypes.h>
#include <stdio.h>

#include "handlers_read_int.h"
#include "spare.h"
#include "worker.h"

/* ---------------------------------------------------------------- one board by one script */

/*
 * A read of one board on the event thread: one script call on its own read connection
 * (http_async_worker), the reply rendered on the same thread. A period this process cannot place
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
    READ_WITH,         /* GET .../rank?with= of a cached page: the members (lookup.lua) */
};

struct read_job {
    struct http_request *rq; /* NULL: a read for an event stream (walk_read_submit) */
    struct http_reply *rp;
    struct http_async *async;
    const struct api_ctx *ctx;
    const struct worker *wk; /* the event thread's: its read connection */
    int64_t deadline_ms;     /* every round trip ends by then */
    /* a read for an event stream: its end, and the page's JSON (else the error in rp) */
    void (*on_done)(void *arg, char *body, const char *etag);
    void *on_arg;
    char *body;
    char body_etag[48]; /* body's ETag, as GET gives it */
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
    cJSON *body_json;
    const char **ids;
    size_t *lens, nids;
    /* with: the page they join (owned), and the list of ids (owned: the rank_args' with) */
    struct page_reply page;
    struct request_list with;
};

static int read_send(struct read_job *j);
static void walk_reply(const struct http_request *rq, struct http_reply *rp, char *body);

static void read_end(struct read_job *j, int rc)
{
    struct http_async *async = j->async;
    void (*on_done)(void *arg, char *body, const char *etag) = j->on_done;
    void *on_arg = j->on_arg;
    char *body = rc ? NULL : j->body;
    char etag[sizeof(j->body_etag)];
    util_copy(etag, sizeof(etag), j->body_etag);
    if (rc) {
        handlers_reply_board_errno(j->rp, rc, j->board, j->id);
        free(j->body);
    }
    request_list_free(&j->list);
    request_list_free(&j->with);
    page_reply_free(&j->page);
    cJSON_Delete(j->body_json);
    free(j->ids);
    free(j->lens);
    spare_give(j, sizeof(*j));
    if (on_done)
        on_done(on_arg, body, body ? etag : NULL);
    else
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
        http_reply_error(j->rp, ERR_INVALID_PARAMETER, "min must not be above max.");
        return;
    }
    struct entry_error err = {0};
    validate_score_error(&j->judged, bad, rc, &err);
    http_reply_error(j->rp, err.id, "%s", err.msg);
}

/* The members l into j's page, answered: 0, or -ENOMEM. */
static int with_put(struct read_job *j, const struct board_lookup *l)
{
    int size = j->size ? (int)j->size : l->settings.page_size;
    char *body = render_page_with(j->page.body, j->page.len, l, size);
    if (!body)
        return -ENOMEM;
    free(j->page.body);
    j->page.body = body;
    j->page.cap = 0; /* not a spare block (pages.h) */
    j->page.len = strlen(body);
    page_etag(l->settings.gen, body, j->page.len, j->page.etag);
    if (j->on_done) { /* an event stream's read: the page is the caller's */
        j->body = j->page.body;
        j->page.body = NULL;
        util_copy(j->body_etag, sizeof(j->body_etag), j->page.etag);
        return 0;
    }
    with_reply(j->rq, j->rp, &j->page); /* takes the body */
    return 0;
}

/* Take the script's reply r (taken) and render j's reply: 0 answered, -EAGAIN to send again
 * (periods learnt, or a score to judge again), else the error. */
static int read_take(struct read_job *j, struct store_reply *r)
{
    struct board_model *m = j->ctx->model;
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
            http_reply_error(j->rp, err.id, "%s", err.msg);
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
    case READ_WITH: {
        struct board_lookup *l = NULL;
        if ((rc = board_lookup_take(m, j->board, r, &l)) == 0)
            rc = with_put(j, l);
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
            char *body =
                render_walk(j->board, j->walk.from == BOARD_WALK_PAGE ? j->walk.page : 0, p);
            if (j->on_done && body) /* an event stream's read: the page is the caller's */
                walk_etag(body, strlen(body), j->body_etag);
            if (j->on_done)
                rc = (j->body = body) ? 0 : -ENOMEM;
            else
                walk_reply(j->rq, j->rp, body);
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
    if (rc == 0 && j->min_version > 0 && !j->primary &&
        store_async_reads_replicas(worker_reads(j->wk))) {
        int64_t v = board_read_version(replies[0]);
        if (v >= 0 && v < j->min_version) { /* a replica behind the write asked for */
            j->primary = 1;
            store_note_replica_stale(j->ctx->model->store);
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
               util_now_ms() < j->deadline_ms) {
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
    struct store_async *conn = worker_reads(j->wk);
    if (!conn)
        return -ECONNREFUSED;
    int rc;
    if (j->what == READ_LOOKUP || j->what == READ_WITH) {
        struct board_lookup_call c;
        rc =
            board_lookup_prepare(j->ctx->model, j->board, w, j->rank, j->ids, j->lens, j->nids, &c);
        if (rc > 0)
            rc = -EIO; /* (board_lookup_prepare answers 0 or a negative errno) */
        if (rc == 0)
            rc = store_async_script_flags(conn, c.script,
                                          store_read_flags(j->min_version, j->primary), c.nkeys,
                                          c.nargs, c.argv, c.lens, j->deadline_ms, read_done, j);
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
            a.edge_tie = wk->cursor.tie;
            a.edge_sub = wk->cursor.sub;
            a.edge_sub_len = wk->cursor.sub_len;
        }
        util_copy(j->walk_period, sizeof(j->walk_period), w->period);
    }
    a.num = j->what == READ_PERCENTILE ? RANK_SHARE_DEN - j->share : j->share;
    a.den = RANK_SHARE_DEN;
    struct board_read rd;
    board_read_prepare(j->ctx->model, j->board, w, &a, &rd);
    rc = store_async_script_flags(conn, rd.script, store_read_flags(j->min_version, j->primary),
                                  rd.nkeys, rd.nargs, rd.argv, rd.lens, j->deadline_ms, read_done,
                                  j);
    return rc < 0 ? rc : 0;
}

static void read_settings_done(struct board_settings_job *sj, int rc)
{
    struct read_job *j = (struct read_job *)(void *)((char *)sj - offsetof(struct read_job, sj));
    struct board_where w;
    if (rc == 0)
        rc = board_where_settled(j->ctx->model, j->board, j->period, &sj->settings, sj->exists, &w);
    if (rc == 0)
        rc = read_send_at(j, &w);
    if (rc)
        read_end(j, rc);
}

/* 0 sent (the script, or the settings read first); else nothing was sent. */
static int read_send(struct read_job *j)
{
    struct board_where w;
    if (board_where_cached(j->ctx->model, j->board, j->period, &w) == 0)
        return read_send_at(j, &w);
    /* a period the hint cannot place: the settings decide */
    j->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = j->deadline_ms, .done = read_settings_done};
    return board_settings_submit(j->ctx->model, worker_reads(j->wk), &j->sj);
}

/* A new job for rq with the arguments every read of one board takes (the board, period and
 * rank); NULL when answered already (a 400, or out of memory). */
static struct read_job *read_job_new(struct http_request *rq, struct http_reply *rp,
                                     struct http_async *async, enum read_what what)
{
    struct read_job *j = spare_take(sizeof(*j)); /* 1.4 KiB: kept per thread (spare.h) */
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return NULL;
    }
    *j = (struct read_job){.rq = rq,
                           .rp = rp,
                           .async = async,
                           .ctx = api_ctx_of(rq),
                           .wk = http_async_worker(async),
                           .deadline_ms = rq->deadline_ms,
                           .what = what};
    if (handlers_board_param(rq, rp, &j->board) || handlers_period_arg(rq, rp, &j->period) ||
        handlers_rank_arg(rq, rp, &j->rank) ||
        handlers_count_arg(rq, rp, "min_version", REQUEST_VERSION_MAX, &j->min_version)) {
        spare_give(j, sizeof(*j));
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
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "score must be a number (a JSON number literal, e.g. 1500 or 12.5).");
        read_refused(j);
        return;
    }
    /* judged first under this process's view of the board (the defaults without one); the
     * script checks that layout and says when to judge again */
    int exists = 0;
    if (board_settings_cached(api_ctx_of(rq)->model, j->board, &j->judged, &exists))
        board_settings_default(&j->judged);
    read_start(j);
}

/* A new walk job for a (its board and period borrowed by the job), judged first under this
 * process's view of the layout (the script checks it); NULL on ENOMEM. */
static struct read_job *walk_job_new(const struct api_ctx *ctx, const struct worker *wk,
                                     int64_t deadline_ms, struct http_reply *rp,
                                     const struct rank_args *a)
{
    struct read_job *j = spare_take(sizeof(*j));
    if (!j)
        return NULL;
    *j = (struct read_job){
        .rp = rp, .ctx = ctx, .wk = wk, .deadline_ms = deadline_ms, .what = READ_WALK};
    j->walk = *a;
    j->board = a->board;
    j->size = a->size;
    j->rank = a->rank;
    j->min_version = a->min_version;
    /* the cursor's period (its copy here: a is the caller's), or the request's */
    j->period = a->period == a->cursor.period ? j->walk.cursor.period : a->period;
    j->walk.period = j->period;
    int exists = 0;
    if (board_settings_cached(ctx->model, j->board, &j->judged, &exists))
        board_settings_default(&j->judged);
    return j;
}

/* GET .../rank with min=/max= and/or after=/before= (rank_parse checked it all): walk.lua. */
void walk_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                const struct rank_args *a)
{
    struct read_job *j =
        walk_job_new(api_ctx_of(rq), http_async_worker(async), rq->deadline_ms, rp, a);
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    j->rq = rq;
    j->async = async;
    read_start(j);
}

int walk_read_submit(const struct api_ctx *ctx, const struct worker *wk, int64_t deadline_ms,
                     const struct rank_args *a, struct http_reply *rp,
                     void (*done)(void *arg, char *body, const char *etag), void *arg)
{
    struct read_job *j = walk_job_new(ctx, wk, deadline_ms, rp, a);
    if (!j)
        return -ENOMEM;
    j->on_done = done;
    j->on_arg = arg;
    int rc = read_send(j);
    if (rc)
        spare_give(j, sizeof(*j));
    return rc;
}

void walk_etag(const char *body, size_t len, char *out)
{
    snprintf(out, WALK_ETAG_MAX, "\"r%016" PRIx64 "-%zx\"", util_fnv1a(body, len), len);
}

/* The reply of a score range's page `body` (taken; NULL: ENOMEM) to GET rq: its ETag, and a
 * 304 when If-None-Match names it. */
static void walk_reply(const struct http_request *rq, struct http_reply *rp, char *body)
{
    if (!body) {
        http_reply_json(rp, 200, NULL); /* a 500 */
        return;
    }
    char tag[WALK_ETAG_MAX];
    walk_etag(body, strlen(body), tag);
    http_reply_header(rp, "ETag", tag);
    if (rq->if_none_match && pages_etag_matches(rq->if_none_match, tag)) {
        free(body);
        rp->status = 304;
        return;
    }
    http_reply_json(rp, 200, body);
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
        http_reply_error(rp, ERR_INVALID_PARAMETER,
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
            http_reply_error(rp, ERR_INVALID_IDS,
                             "ids takes at most %d ids; POST /boards/%s/lookup takes up to %d.",
                             LOOKUP_QUERY_MAX, j->board, BOARD_LOOKUP_MAX);
        else if (rc == -ENOMEM)
            http_reply_errno(rp, rc);
        else
            http_reply_error(rp, ERR_INVALID_ID,
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
    if (!(j->body_json = handlers_parse_body(rq, rp))) {
        read_refused(j);
        return;
    }
    if (validate_lookup(j->body_json, BOARD_LOOKUP_MAX, &j->ids, &j->lens, &j->nids, &err)) {
        http_reply_error(rp, err.id, "%s", err.msg);
        read_refused(j);
        return;
    }
    read_start(j);
}

void with_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                struct rank_args *a, struct page_reply *pr)
{
    struct read_job *j = spare_take(sizeof(*j));
    if (!j) {
        page_reply_free(pr);
        request_list_free(&a->with);
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    *j = (struct read_job){.rq = rq,
                           .rp = rp,
                           .async = async,
                           .ctx = api_ctx_of(rq),
                           .wk = http_async_worker(async),
                           .deadline_ms = rq->deadline_ms,
                           .what = READ_WITH,
                           .board = a->board,
                           .period = a->period,
                           .size = a->size,
                           .rank = a->rank,
                           .min_version = a->min_version,
                           .page = *pr,
                           .with = a->with};
    memset(pr, 0, sizeof(*pr));
    memset(&a->with, 0, sizeof(a->with));                        /* the job's now */
    j->ids = calloc(j->with.n ? j->with.n : 1, sizeof(*j->ids)); /* n >= 1: with_parse */
    j->lens = calloc(j->with.n ? j->with.n : 1, sizeof(*j->lens));
    if (!j->ids || !j->lens) {
        http_reply_errno(rp, -ENOMEM);
        read_refused(j);
        return;
    }
    for (size_t i = 0; i < j->with.n; i++) {
        j->ids[i] = j->with.items[i];
        j->lens[i] = j->with.lens[i];
    }
    j->nids = j->with.n;
    read_start(j);
}

int with_read_submit(const struct api_ctx *ctx, const struct worker *wk, int64_t deadline_ms,
                     const struct rank_args *a, const char *const *ids, const size_t *lens,
                     size_t n, struct page_reply *pr, struct http_reply *rp,
                     void (*done)(void *arg, char *body, const char *etag), void *arg)
{
    struct read_job *j = spare_take(sizeof(*j));
    if (j) {
        memset(j, 0, sizeof(*j));
        j->ids = calloc(n ? n : 1, sizeof(*j->ids));
        j->lens = calloc(n ? n : 1, sizeof(*j->lens));
    }
    if (!j || !j->ids || !j->lens) {
        if (j) {
            free(j->ids);
            free(j->lens);
        }
        spare_give(j, sizeof(*j));
        page_reply_free(pr);
        return -ENOMEM;
    }
    j->rp = rp;
    j->ctx = ctx;
    j->wk = wk;
    j->deadline_ms = deadline_ms;
    j->what = READ_WITH;
    j->board = a->board;
    j->period = a->period;
    j->size = a->size;
    j->rank = a->rank;
    j->min_version = a->min_version;
    j->page = *pr;
    memset(pr, 0, sizeof(*pr));
    for (size_t i = 0; i < n; i++) {
        j->ids[i] = ids[i];
        j->lens[i] = lens[i];
    }
    j->nids = n;
    j->on_done = done;
    j->on_arg = arg;
    int rc = read_send(j);
    if (rc) {
        page_reply_free(&j->page);
        free(j->ids);
        free(j->lens);
        spare_give(j, sizeof(*j));
    }
    return rc;
}
