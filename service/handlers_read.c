/* handlers_read.c -- pages, members, around, records; see handlers_read.h. */
#include "handlers_read.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "board.h"
#include "handlers_common.h"
#include "pages.h"
#include "render.h"
#include "request.h"
#include "util.h"

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
};

/* 0, or -1 with rp filled (400): every argument is checked before any Redis call. */
static int rank_parse(struct http_request *rq, struct http_reply *rp, struct rank_args *a)
{
    a->page = 1;
    a->size = 0;
    a->min_version = 0;
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
    } else if (handlers_board_param(rq, rp, &a->board)) {
        return -1;
    }
    if (handlers_count_arg(rq, rp, "page", REQUEST_PAGE_MAX, &a->page) ||
        handlers_count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &a->size) ||
        handlers_count_arg(rq, rp, "min_version", REQUEST_VERSION_MAX, &a->min_version) ||
        handlers_period_arg(rq, rp, &a->period))
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
    if (pages_get_l1(rq->app->pages, a.board, a.period, a.page, (int)a.size, a.min_version,
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
    rj->job = (struct pages_job){.board = a.board,
                                 .period = a.period,
                                 .page = a.page,
                                 .size = (int)a.size,
                                 .min_version = a.min_version,
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

/* ---------------------------------------------------------------- members and around */

/* A member or around read on the event thread: one script call on its own read connection
 * (http_async_store), the reply rendered on the same thread. A period this process cannot place
 * from memory is placed from the settings, read first on the same connection. With
 * --read-from-replicas a replica may answer; ?min_version=V (a write reply's version) checks its
 * answer's write counter, and one below V is asked of the primary instead (read your writes). */
struct read_job {
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    enum board_read_kind kind;
    const char *board, *period; /* borrowed from the request */
    int64_t size;
    int64_t min_version; /* 0: any; else never from data before this write counter */
    int primary;         /* sent to the primary: a replica's answer was older than min_version */
    int attempts, resent;
    struct board_settings_job sj;
};

static int read_send(struct read_job *j);

static void read_end(struct read_job *j, int rc)
{
    struct http_async *async = j->async;
    if (rc)
        handlers_reply_board_errno(j->rp, rc, j->board, j->rq->params[1]);
    free(j);
    http_async_done(async);
}

static void read_done(void *arg, int rc, struct store_reply **replies)
{
    struct read_job *j = arg;
    struct rankd *app = j->rq->app;
    const char *id = j->rq->params[1];
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
    /* with min_version, a replica's answer is checked (read_done); once it was too old, the
     * primary's */
    unsigned flags = j->primary ? STORE_READ_PRIMARY : j->min_version ? STORE_READ_CHECKED : 0;
    int rc = store_async_script_flags(conn, rd.script, flags, rd.nkeys, rd.nargs, rd.argv, rd.lens,
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
        handlers_answered(async);
        return;
    }
    *j = (struct read_job){.rq = rq, .rp = rp, .async = async, .kind = kind};
    if (handlers_board_param(rq, rp, &j->board) || handlers_id_param(rq, 1, rp) ||
        handlers_count_arg(rq, rp, "size", BOARD_PAGE_SIZE_MAX, &j->size) ||
        handlers_count_arg(rq, rp, "min_version", REQUEST_VERSION_MAX, &j->min_version) ||
        handlers_period_arg(rq, rp, &j->period)) {
        free(j);
        handlers_answered(async); /* a 400 */
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
