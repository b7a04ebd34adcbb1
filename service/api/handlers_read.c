/*
 * handlers_read.c -- pages, one member on many boards, records (the reads of one board by one
 * script are handlers_read_one.c's); see handlers_read.h. handlers_read_int.h holds what the
 * two files share.
 */
#include "handlers_read_int.h"
#include "spare.h"
#include "worker.h"

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
        http_reply_error(rp, ERR_INVALID_CURSOR,
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
        http_reply_error(rp, ERR_INVALID_PARAMETER,
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
        http_reply_error(rp, ERR_INVALID_PARAMETER,
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

/* with=ID[,ID...]: 1 to BOARD_WITH_MAX ids, each once, into a->with; 0 or -1 with a 400 in rp
 * (a->with freed). */
static int with_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    const char *v = NULL, *raw = NULL;
    int n = http_arg(rq, "with", &v);
    if (n == 0)
        return 0;
    if (n > 1 || a->walk) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         n > 1 ? "with must be given once (a list: with=a,b,c)."
                               : "with is read with a page by number (page=N), not with a cursor "
                                 "or a score range.");
        return -1;
    }
    http_arg_raw(rq, "with", &raw);
    int rc = request_list_split(raw, BOARD_WITH_MAX, &a->with);
    for (size_t i = 0; rc == 0 && i < a->with.n; i++) {
        if (!request_id_valid(a->with.items[i], a->with.lens[i])) {
            rc = -EINVAL;
            break;
        }
        for (size_t k = 0; k < i; k++)
            if (a->with.lens[k] == a->with.lens[i] &&
                memcmp(a->with.items[k], a->with.items[i], a->with.lens[i]) == 0) {
                http_reply_error(rp, ERR_INVALID_IDS,
                                 "with names '%s' twice (at %zu and %zu): give each id once.",
                                 a->with.items[i], k, i);
                request_list_free(&a->with);
                return -1;
            }
    }
    if (rc == -ENOMEM)
        http_reply_errno(rp, rc);
    else if (rc == -E2BIG)
        http_reply_error(rp, ERR_INVALID_IDS, "with takes 1 to %d ids separated by ','.",
                         BOARD_WITH_MAX);
    else if (rc)
        http_reply_error(rp, ERR_INVALID_ID,
                         "with must be 1 to %d ids separated by ',' (each 1 to %d bytes of valid "
                         "UTF-8 without control characters; a ',' inside an id is %%2C).",
                         BOARD_WITH_MAX, BOARD_ID_LEN_MAX);
    if (rc)
        request_list_free(&a->with);
    return rc ? -1 : 0;
}

/* 0, or -1 with rp filled (400): every argument is checked before any Redis call. a->with is
 * the caller's to free after a 0. */
static int rank_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    /* every field set (no cursor, no bounds: a walk reads only what was given; a walk without
     * a cursor sends no edge, read_send_at) */
    *a = (struct rank_args){.page = 1};
    if (rq->nparams == 0) { /* GET /rank: the board is an argument */
        a->board = api_ctx_of(rq)->default_board;
        int n = http_arg(rq, "board", &a->board);
        if (n > 1 || !board_name_valid(a->board, strlen(a->board))) {
            http_reply_error(rp, ERR_INVALID_BOARD,
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
        walk_parse(rq, rp, a) || with_parse(rq, rp, a))
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
        http_reply_json_len(rp, 200, pr->body, pr->len);
        if (pr->body && pr->cap)
            rp->body.cap = pr->cap; /* a spare block: given back once sent (spare.h) */
        pr->body = NULL;            /* the reply owns it now */
    }
    page_reply_free(pr);
}

/* A page read on its way through the batched hit path (on the event thread's connection). */
struct rank_job {
    struct pages_job job; /* first: the flow hands it back */
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    struct rank_args a; /* the arguments (a.with: the ids the job borrows) */
};

/* A rank_job that never ran (http_request.parsed_free): its arguments' ids and the block. */
static void rank_job_discard(void *p)
{
    struct rank_job *rj = p;
    request_list_free(&rj->a.with);
    spare_give(rj, sizeof(*rj));
}

int handle_rank_quick(struct http_request *rq, struct http_reply *rp)
{
    /* parsed once, in the block the async step runs in (kept per thread, spare.h: glibc 2.36's
     * calloc never takes from its per-thread cache); in place, since a cursor's period points
     * into the arguments themselves */
    struct rank_job *rj = spare_take(sizeof(*rj));
    if (!rj) {
        http_reply_errno(rp, -ENOMEM);
        return 1;
    }
    struct rank_args *a = &rj->a;
    if (rank_parse(rq, rp, a)) {
        spare_give(rj, sizeof(*rj));
        return 1;
    }
    if (rq->event_stream && a->walk && a->from != BOARD_WALK_PAGE) {
        http_reply_error(rp, ERR_INVALID_PARAMETER,
                         "an event stream cannot follow a cursor (after or before): a cursor "
                         "continues from where an earlier page ended, which moves as the board "
                         "changes. Watch the page by number (page=N) or the score range (min, "
                         "max, page=N); read cursor pages with GET.");
        rank_job_discard(rj);
        return 1;
    }
    struct page_reply pr;
    /* a walk: walk.lua, never cached; a stream: watch.h; with: the members are live */
    if (a->walk || rq->event_stream || a->with.n ||
        pages_get_l1(api_ctx_of(rq)->pages, a->board, a->period, a->page, (int)a->size, a->rank,
                     a->min_version, rq->if_none_match, &pr)) {
        rq->parsed = rj; /* handle_rank_async's */
        rq->parsed_free = rank_job_discard;
        return 0;
    }
    rank_job_discard(rj);
    reply_page(rp, &pr);
    return 1;
}

void with_reply(struct http_request *rq, struct http_reply *rp, struct page_reply *pr)
{
    pr->cached = 0; /* "no-cache": the members are read live */
    pr->not_modified = rq->if_none_match && pages_etag_matches(rq->if_none_match, pr->etag);
    reply_page(rp, pr);
}

static void rank_job_done(struct pages_job *job, int rc)
{
    struct rank_job *rj = (struct rank_job *)job;
    struct http_async *async = rj->async;
    if (rc == 0 && job->nwith && !job->out.with_done) { /* a cached page: the members now */
        with_start(rj->rq, rj->rp, async, &rj->a, &job->out);
        spare_give(rj, sizeof(*rj));
        return;
    }
    if (rc == 0 && job->nwith)
        with_reply(rj->rq, rj->rp, &job->out);
    else if (rc == 0)
        reply_page(rj->rp, &job->out);
    else
        handlers_reply_board_errno(rj->rp, rc, job->board, NULL);
    request_list_free(&rj->a.with);
    spare_give(rj, sizeof(*rj));
    http_async_done(async);
}

/* pages_job.after: a timer on the request's event thread. */
static int rank_after(void *ctx, int ms, void (*fn)(void *arg), void *arg)
{
    return http_timer_after(ctx, ms, fn, arg) ? 0 : -1;
}

void handle_rank_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    struct rank_job *rj = rq->parsed; /* handle_rank_quick's: the arguments, parsed */
    rq->parsed = NULL;
    rq->parsed_free = NULL;
    if (!rj) { /* a route table bug: the quick step runs first */
        http_reply_error(rp, ERR_INTERNAL, "The page's arguments were not parsed.");
        handlers_answered(async);
        return;
    }
    /* read in place: a cursor's period points into the arguments themselves */
    const struct rank_args *a = &rj->a;
    if (rq->event_stream) { /* a page by number, or a score range's (never a cursor) */
        struct watch_page wp = {.board = a->board,
                                .period = a->period,
                                .page = a->page,
                                .size = (int)a->size,
                                .rank = a->rank,
                                .min_version = a->min_version,
                                .walk = a->walk ? a : NULL,
                                .with = (const char *const *)a->with.items,
                                .with_lens = a->with.lens,
                                .nwith = a->with.n};
        watch_start(api_ctx_of(rq)->watches, rq, rp, async, &wp); /* copies the ids */
        rank_job_discard(rj);
        return;
    }
    if (a->walk) {
        walk_start(rq, rp, async, a);
        rank_job_discard(rj);
        return;
    }
    const struct worker *w = http_async_worker(async);
    rj->job = (struct pages_job){.board = a->board,
                                 .period = a->period,
                                 .page = a->page,
                                 .size = (int)a->size,
                                 .min_version = a->min_version,
                                 .rank = a->rank,
                                 /* with ids the ETag is the whole body's:
                                  * judged here (with_reply) */
                                 .if_none_match = a->with.n ? NULL : rq->if_none_match,
                                 .with = (const char *const *)a->with.items,
                                 .with_lens = a->with.lens,
                                 .nwith = a->with.n,
                                 .deadline_ms = rq->deadline_ms,
                                 .writes = worker_writes(w),
                                 .cache_reads = worker_cache(w, 0),
                                 .cache_writes = worker_cache(w, 1),
                                 .after = rank_after,
                                 .after_ctx = async,
                                 .done = rank_job_done};
    rj->rq = rq;
    rj->rp = rp;
    rj->async = async;
    int rc = pages_submit(api_ctx_of(rq)->pages, worker_reads(w), &rj->job);
    if (rc) { /* Redis is not answering, or cannot be reached: 503 now */
        handlers_reply_board_errno(rp, rc, rj->a.board, NULL);
        rank_job_discard(rj);
        handlers_answered(async);
        return;
    }
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
        rc = board_boards_take(api_ctx_of(j->rq)->model, j->names + p->at, p->n, r, j->on + p->at,
                               &bad);
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
    struct board_model *m = api_ctx_of(rq)->model;
    struct store_async *conn = worker_reads(http_async_worker(j->async));
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
        http_reply_error(j->rp, rc == -E2BIG ? ERR_INVALID_PARAMETER : ERR_INVALID_BOARD,
                         "boards must be 1 to %d board names separated by ','.",
                         BOARD_MEMBER_BOARDS_MAX);
        return -1;
    }
    for (size_t i = 0; i < j->list.n; i++) {
        const char *b = j->list.items[i];
        if (!board_name_valid(b, j->list.lens[i]) || strlen(b) != j->list.lens[i]) {
            http_reply_error(j->rp, ERR_INVALID_BOARD,
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
