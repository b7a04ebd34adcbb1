/* watch.c -- pages pushed as server-sent events and their per-process registry; see watch.h. */
#include "watch.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "errors.h"
#include "events.h"
#include "handlers_common.h"
#include "handlers_read_int.h"
#include "pages.h"
#include "util.h"
#include "watch_int.h"
#include "worker.h"

#define WATCH_BUCKETS 256
#define LIVE_INTERVAL_MS 1000 /* a live page (page_ttl_ms 0) is read at most once a second */
#define BUSY_RETRY_MS 100     /* a refresh due while the last one is still out: look again */

struct watch;

/* One stream of a watch, on its event thread. */
struct viewer {
    struct watch *w;
    struct http_events *ev;
    struct viewer *prev, *next;
    uint64_t sent; /* the seq of the last event it took */
    int adopt;     /* it owns the refresh now and must start it on its own thread */
};

/* A timer of a watch's refresh (kept so that watches_free frees those a stopped loop dropped). */
struct tick {
    struct tick *prev, *next;
    struct watch *w;
    uint64_t chain; /* the refresh chain it belongs to (watch.chain when armed) */
};

/* A refresh in flight. */
struct fetch {
    struct pages_job job; /* first: the flow hands it back (a page by number) */
    struct watch *w;
    struct store_async *reads; /* the owner's thread's read connection */
    const struct worker *wk;   /* the owner's thread's worker */
    uint64_t chain;
    struct http_reply rp; /* a read with no request (a score range, with members): its error */
    int ttl_ms;           /* the page's, while its with members are read */
};

struct watch {
    struct watches *ws;
    struct watch *bucket_next;         /* ws->buckets, while listed */
    struct watch *all_prev, *all_next; /* ws->all, until freed */
    char key[WATCH_KEY_MAX];
    char board[BOARD_NAME_LEN_MAX + 1];
    char *period; /* NULL: the current one */
    int64_t page;
    int size;
    enum rank_type rank;
    const struct api_ctx *ctx; /* of the first viewer's request: the server's, immutable */
    int walk;                  /* a score range's page: args (board and period: w's) */
    struct rank_args args;
    struct watch_ids with; /* a page with these members */
    int refs;              /* listed, ticks, the fetch */
    int listed;            /* in the table: new viewers join it */
    struct viewer *viewers;
    struct viewer *owner; /* whose thread refreshes; NULL without viewers */
    uint64_t chain;       /* bumped when the owner changes: older ticks and fetches stop */
    struct tick *ticks;
    struct fetch *fetch;       /* in flight, or NULL */
    struct http_event *latest; /* the page, or NULL */
    char etag[48];
    struct http_event *end; /* the board is gone: every stream's last event */
    uint64_t seq;           /* bumped with latest and end */
    int interval_ms;
    int64_t next_ms; /* when the next refresh is due (monotonic) */
};

struct watches {
    struct pages *pages;
    int timeout_ms;
    pthread_mutex_t lock; /* everything below and every watch */
    struct watch *buckets[WATCH_BUCKETS];
    struct watch *all;
    long watched;
    atomic_ulong reads, changes;
};

struct watches *watches_new(struct pages *pages, int timeout_ms)
{
    struct watches *ws = calloc(1, sizeof(*ws));
    if (!ws)
        return NULL;
    ws->pages = pages;
    ws->timeout_ms = timeout_ms;
    pthread_mutex_init(&ws->lock, NULL);
    return ws;
}

static void watch_destroy(struct watch *w)
{
    struct watches *ws = w->ws;
    if (w->all_prev)
        w->all_prev->all_next = w->all_next;
    else
        ws->all = w->all_next;
    if (w->all_next)
        w->all_next->all_prev = w->all_prev;
    for (struct tick *t = w->ticks, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    http_event_unref(w->latest);
    http_event_unref(w->end);
    free(w->with.buf);
    free(w->period);
    free(w);
}

void watches_free(struct watches *ws)
{
    if (!ws)
        return;
    while (ws->all) {
        struct watch *w = ws->all;
        if (w->fetch) { /* its reply never came: the stores are gone */
            page_reply_free(&w->fetch->job.out);
            free(w->fetch);
        }
        watch_destroy(w);
    }
    pthread_mutex_destroy(&ws->lock);
    free(ws);
}

void watches_stats(struct watches *ws, struct watches_stats *out)
{
    pthread_mutex_lock(&ws->lock);
    out->watched = ws->watched;
    pthread_mutex_unlock(&ws->lock);
    out->reads = atomic_load(&ws->reads);
    out->changes = atomic_load(&ws->changes);
}

/* ---------------------------------------------------------------- the table (under ws->lock) */

static void unref(struct watch *w)
{
    if (--w->refs == 0)
        watch_destroy(w);
}

static size_t bucket_of(const char *key)
{
    return util_fnv1a(key, strlen(key)) % WATCH_BUCKETS;
}

static struct watch *find(struct watches *ws, const char *key)
{
    for (struct watch *w = ws->buckets[bucket_of(key)]; w; w = w->bucket_next)
        if (strcmp(w->key, key) == 0)
            return w;
    return NULL;
}

static void unlist(struct watch *w)
{
    if (!w->listed)
        return;
    struct watches *ws = w->ws;
    for (struct watch **p = &ws->buckets[bucket_of(w->key)]; *p; p = &(*p)->bucket_next)
        if (*p == w) {
            *p = w->bucket_next;
            break;
        }
    w->listed = 0;
    ws->watched--;
    unref(w);
}

static struct watch *create(struct watches *ws, const char *key, const struct watch_page *p,
                            const struct api_ctx *ctx)
{
    struct watch *w = calloc(1, sizeof(*w));
    if (!w || (p->period && !(w->period = strdup(p->period)))) {
        free(w);
        return NULL;
    }
    w->ws = ws;
    util_copy(w->key, sizeof(w->key), key);
    util_copy(w->board, sizeof(w->board), p->board);
    w->page = p->page;
    w->size = p->size;
    w->rank = p->rank;
    w->ctx = ctx;
    if (watch_ids_copy(&w->with, p)) {
        free(w->period);
        free(w);
        return NULL;
    }
    if (p->walk) {
        w->walk = 1;
        w->args = *p->walk;
        w->args.board = w->board;
        w->args.period = w->period;
        w->args.min_version = 0; /* the first read's only */
    }
    w->interval_ms = LIVE_INTERVAL_MS;
    w->refs = 1; /* listed */
    w->listed = 1;
    size_t b = bucket_of(key);
    w->bucket_next = ws->buckets[b];
    ws->buckets[b] = w;
    w->all_next = ws->all;
    if (ws->all)
        ws->all->all_prev = w;
    ws->all = w;
    ws->watched++;
    return w;
}

/* ---------------------------------------------------------------- the refresh */

static void tick_fire(void *arg);

/* pages_job.after: a timer of the calling event thread (no request: a refresh may outlive it). */
static int watch_after(void *ctx, int ms, void (*fn)(void *arg), void *arg)
{
    (void)ctx;
    return http_timer_after(NULL, ms, fn, arg) ? 0 : -1;
}

/* Arm the refresh of w's chain after ms on the calling thread (the owner's). Under the lock. */
static void arm(struct watch *w, int ms)
{
    struct tick *t = calloc(1, sizeof(*t));
    if (!t)
        return; /* out of memory: the page stands until a viewer comes or goes */
    t->w = w;
    t->chain = w->chain;
    if (http_events_after(w->owner->ev, ms < 0 ? 0 : ms, tick_fire, t)) {
        free(t);
        return;
    }
    t->next = w->ticks;
    if (w->ticks)
        w->ticks->prev = t;
    w->ticks = t;
    w->refs++;
}

/* The interval between refreshes of a page of TTL ttl_ms: a tenth more than the TTL (at least
 * 50 ms), so that each refresh finds the last one's copy past its TTL and computes the page
 * (pages.h: a copy within the TTL plus one computation is served stale while it is refreshed in
 * the background; read then, a write would show a refresh later); at least a second. */
static int interval_of(int ttl_ms)
{
    int more = ttl_ms / 10 > 50 ? ttl_ms / 10 : 50;
    return ttl_ms + more > LIVE_INTERVAL_MS ? ttl_ms + more : LIVE_INTERVAL_MS;
}

/* A new version of the page (ev), or the board gone (end): every viewer is woken. Under the
 * lock. */
static void publish(struct watch *w)
{
    w->seq++;
    atomic_fetch_add_explicit(&w->ws->changes, 1, memory_order_relaxed);
    for (struct viewer *v = w->viewers; v; v = v->next)
        http_events_wake(v->ev);
}

/* The `end` event of an error reply made by handlers_reply_board_errno. NULL on ENOMEM. */
static struct http_event *end_event(int rc, const char *board)
{
    struct http_reply rp;
    memset(&rp, 0, sizeof(rp));
    handlers_reply_board_errno(&rp, rc, board, NULL);
    struct http_event *e =
        rp.body.data ? http_event_new("end", NULL, rp.body.data, rp.body.len) : NULL;
    buf_free(&rp.body);
    http_reply_free_fault(&rp);
    return e;
}

/* The status GET would answer for errno rc (a board's read). */
static int status_of(int rc)
{
    return err_status(http_errno_find(HTTP_ERRNO_BOARD, rc)->id);
}

/* What a refresh read: a page (or the same one again), or the end of the watch. */
struct refreshed {
    int ok;           /* a page came: ttl_ms, and the page unless not_modified */
    int not_modified; /* the page is still the one of w->etag */
    const char *etag, *body;
    size_t len;
    int ttl_ms;
    struct http_event *end; /* the board is gone (or its period, or a bound): taken; or NULL */
};

/* A refresh f read o (on the owner's thread): a changed page is fanned out, the next refresh
 * armed. The caller frees f (o may point into it). */
static void refresh_done(struct fetch *f, const struct refreshed *o)
{
    struct watch *w = f->w;
    struct watches *ws = w->ws;
    struct http_event *end = o->end;
    pthread_mutex_lock(&ws->lock);
    w->fetch = NULL;
    if (o->ok) {
        w->interval_ms = interval_of(o->ttl_ms);
        if (!o->not_modified && o->body && strcmp(o->etag, w->etag) != 0) {
            struct http_event *e = http_event_new("page", o->etag, o->body, o->len);
            if (e) {
                http_event_unref(w->latest);
                w->latest = e;
                util_copy(w->etag, sizeof(w->etag), o->etag);
                publish(w);
            }
        }
    } else if (end && !w->end) { /* the board is gone (or its period): the streams end */
        w->end = end;
        end = NULL;
        unlist(w); /* new viewers read it again (and get the error) */
        publish(w);
    }
    w->next_ms = util_now_ms() + w->interval_ms;
    if (!w->end && w->owner && f->chain == w->chain && http_events_own_thread(w->owner->ev))
        arm(w, w->interval_ms);
    unref(w);
    pthread_mutex_unlock(&ws->lock);
    http_event_unref(end);
}

/* The page cache's answer to a refresh of a page by number. */
static void with_fetched(void *arg, char *body, const char *etag);

static void fetch_done(struct pages_job *job, int rc)
{
    struct fetch *f = (struct fetch *)job;
    struct page_reply *out = &job->out;
    struct watch *w = f->w;
    if (rc == 0 && job->nwith && !out->with_done) { /* a cached page: the members now */
        struct rank_args a = {
            .board = w->board, .period = w->period, .size = w->size, .rank = w->rank};
        f->ttl_ms = out->ttl_ms;
        rc =
            with_read_submit(w->ctx, f->wk, util_now_ms() + w->ws->timeout_ms, &a, w->with.items,
                             w->with.lens, w->with.n, out, &f->rp, with_fetched, f); /* takes out */
        if (rc == 0)
            return;
        rc = -EIO; /* tried again at the next refresh */
    }
    struct refreshed o = {.ok = rc == 0,
                          .not_modified = out->not_modified,
                          .etag = out->etag,
                          .body = out->body,
                          .len = out->len,
                          .ttl_ms = out->ttl_ms,
                          .end = rc && status_of(rc) < 500 ? end_event(rc, f->w->board) : NULL};
    refresh_done(f, &o);
    page_reply_free(out);
    free(f);
}

/* The page TTL of board `board` in this process's view (the defaults' without one). */
static int board_ttl_ms(const struct api_ctx *ctx, const char *board)
{
    struct board_settings set;
    int exists = 0;
    if (board_settings_cached(ctx->model, board, &set, &exists))
        board_settings_default(&set);
    return set.page_ttl_ms;
}

/* A refresh read with no request (a score range's page, or a cached page's `with` members):
 * the page and its ETag, or the error GET would answer in f->rp (a refusal ends the streams; a
 * Redis fault is tried again at the next refresh). */
static void read_fetched(struct fetch *f, char *body, const char *etag, int ttl_ms)
{
    struct refreshed o = {.ok = body != NULL, .body = body, .len = body ? strlen(body) : 0};
    if (body) {
        o.etag = etag;
        o.ttl_ms = ttl_ms;
    } else if (f->rp.status < 500 && f->rp.body.data) {
        o.end = http_event_new("end", NULL, f->rp.body.data, f->rp.body.len);
    }
    buf_free(&f->rp.body);
    http_reply_free_fault(&f->rp);
    refresh_done(f, &o);
    free(body);
    free(f);
}

static void walk_fetched(void *arg, char *body, const char *etag)
{
    struct fetch *f = arg;
    read_fetched(f, body, etag, body ? board_ttl_ms(f->w->ctx, f->w->board) : 0);
}

static void with_fetched(void *arg, char *body, const char *etag)
{
    struct fetch *f = arg;
    read_fetched(f, body, etag, f->ttl_ms);
}

/* A refresh of w's page for its viewers, on the owner's thread, made under the lock (w->fetch
 * set, the fetch's reference taken): NULL when it cannot (out of memory, no connection: the
 * next refresh is armed). */
static struct fetch *fetch_new(struct watch *w)
{
    struct http_events *ev = w->owner->ev;
    struct fetch *f = calloc(1, sizeof(*f));
    const struct worker *wk = http_events_worker(ev);
    struct store_async *reads = worker_reads(wk);
    if (!f || !reads) {
        free(f);
        w->next_ms = util_now_ms() + w->interval_ms;
        arm(w, w->interval_ms);
        return NULL;
    }
    f->w = w;
    f->chain = w->chain;
    f->reads = reads;
    f->wk = wk;
    if (!w->walk)
        f->job = (struct pages_job){.board = w->board,
                                    .period = w->period,
                                    .page = w->page,
                                    .size = w->size,
                                    .rank = w->rank,
                                    /* with members the ETag is the whole body's */
                                    .if_none_match = w->etag[0] && !w->with.n ? w->etag : NULL,
                                    .with = w->with.items,
                                    .with_lens = w->with.lens,
                                    .nwith = w->with.n,
                                    .deadline_ms = util_now_ms() + w->ws->timeout_ms,
                                    .writes = worker_writes(wk),
                                    .cache_reads = worker_cache(wk, 0),
                                    .cache_writes = worker_cache(wk, 1),
                                    .after = watch_after,
                                    .done = fetch_done};
    w->fetch = f;
    w->refs++;
    atomic_fetch_add_explicit(&w->ws->reads, 1, memory_order_relaxed);
    return f;
}

/* Send f, without the lock (the rank flow's calls are the event thread's own). */
static void fetch_send(struct fetch *f)
{
    struct watch *w = f->w;
    struct watches *ws = w->ws;
    int rc = w->walk ? walk_read_submit(w->ctx, f->wk, util_now_ms() + ws->timeout_ms, &w->args,
                                        &f->rp, walk_fetched, f)
                     : pages_submit(ws->pages, f->reads, &f->job);
    if (rc == 0)
        return;
    /* Redis is not answering: the next refresh tries again */
    pthread_mutex_lock(&ws->lock);
    w->fetch = NULL;
    w->next_ms = util_now_ms() + w->interval_ms;
    if (!w->end && w->owner && f->chain == w->chain)
        arm(w, w->interval_ms);
    unref(w);
    pthread_mutex_unlock(&ws->lock);
    free(f);
}

static void tick_fire(void *arg)
{
    struct tick *t = arg;
    struct watch *w = t->w;
    struct watches *ws = w->ws;
    struct fetch *f = NULL;
    pthread_mutex_lock(&ws->lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        w->ticks = t->next;
    if (t->next)
        t->next->prev = t->prev;
    int live = t->chain == w->chain && w->owner && !w->end;
    free(t);
    if (live) {
        int64_t wait = w->next_ms - util_now_ms();
        if (w->fetch)
            arm(w, BUSY_RETRY_MS); /* the last chain's read is still out */
        else if (wait > 0)
            arm(w, (int)wait);
        else
            f = fetch_new(w);
    }
    unref(w); /* the tick's (a fetch made holds its own) */
    pthread_mutex_unlock(&ws->lock);
    if (f)
        fetch_send(f);
}

/* v owns the refresh from now on: the chain restarts on its thread. Under the lock. */
static void adopt(struct watch *w, struct viewer *v)
{
    w->owner = v;
    w->chain++;
    if (http_events_own_thread(v->ev)) {
        v->adopt = 0;
        arm(w, (int)(w->next_ms - util_now_ms()));
    } else {
        v->adopt = 1;
        http_events_wake(v->ev);
    }
}

/* ---------------------------------------------------------------- a viewer's stream */

static struct http_event *viewer_next(void *arg, struct http_events *ev, int *end)
{
    (void)ev;
    struct viewer *v = arg;
    struct watch *w = v->w;
    struct http_event *e = NULL;
    pthread_mutex_lock(&w->ws->lock);
    if (v->adopt && w->owner == v) {
        v->adopt = 0;
        arm(w, (int)(w->next_ms - util_now_ms()));
    }
    if (w->end) {
        *end = 1;
        e = http_event_ref(w->end);
    } else if (v->sent != w->seq && w->latest) {
        e = http_event_ref(w->latest);
    }
    v->sent = w->seq;
    pthread_mutex_unlock(&w->ws->lock);
    return e;
}

static struct http_event *viewer_last(void *arg)
{
    (void)arg;
    char stop[128];
    int n = err_json(ERR_SHUTTING_DOWN, "rankd is shutting down; reconnect to go on.", stop,
                     sizeof(stop));
    return http_event_new("end", NULL, stop, (size_t)n);
}

static void viewer_free(void *arg)
{
    struct viewer *v = arg;
    struct watch *w = v->w;
    struct watches *ws = w->ws;
    pthread_mutex_lock(&ws->lock);
    if (v->prev)
        v->prev->next = v->next;
    else
        w->viewers = v->next;
    if (v->next)
        v->next->prev = v->prev;
    if (w->owner == v) {
        w->owner = NULL;
        w->chain++;
        if (w->viewers)
            adopt(w, w->viewers);
    }
    if (!w->viewers)
        unlist(w);
    unref(w); /* the viewer's */
    pthread_mutex_unlock(&ws->lock);
    free(v);
}

/* 1 when a Last-Event-ID names the page's version `etag`: the ETag itself, or its gzip form's
 * (the ETag with "-gz": a GET that took gzip named it so). */
static int same_version(const char *id, const char *etag)
{
    size_t n = strlen(etag);
    if (!id || n < 2)
        return 0;
    return strcmp(id, etag) == 0 || (strlen(id) == n + 3 && memcmp(id, etag, n - 1) == 0 &&
                                     strcmp(id + n - 1, "-gz\"") == 0);
}

/* Answer the request with a stream of w (under the lock): 0, or an error reply in rp. */
static void join(struct watch *w, struct http_request *rq, struct http_reply *rp,
                 struct http_async *async)
{
    struct viewer *v = calloc(1, sizeof(*v));
    if (!v) {
        http_reply_errno(rp, -ENOMEM);
        return;
    }
    v->w = w;
    struct http_events_source src = {
        .next = viewer_next, .last = viewer_last, .free = viewer_free, .arg = v};
    int rc = http_reply_events(rp, async, &src, &v->ev);
    if (rc) {
        free(v);
        http_events_refuse(rp, rc);
        return;
    }
    w->refs++;
    /* the page now, unless the client has it (Last-Event-ID) */
    v->sent = same_version(rq->last_event_id, w->etag) ? w->seq : w->seq - 1;
    v->next = w->viewers;
    if (w->viewers)
        w->viewers->prev = v;
    w->viewers = v;
    if (!w->owner)
        adopt(w, v);
}

/* ---------------------------------------------------------------- the request */

/* The first read of a page no one watched. */
struct first {
    struct pages_job job; /* first (a page by number) */
    struct watches *ws;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    struct watch_page p;
    struct rank_args walk; /* p.walk's copy (a score range) */
    struct watch_ids with; /* p.with's copy */
    int ttl_ms;            /* the page's, while its with members are read */
    char key[WATCH_KEY_MAX];
};

/* The first read of fr's page came (etag, body[0..len), read with a TTL of ttl_ms): the request
 * joins the page's watch, made if it is not there. */
static void first_join(struct first *fr, const char *etag, const char *body, size_t len, int ttl_ms)
{
    struct watches *ws = fr->ws;
    pthread_mutex_lock(&ws->lock);
    struct watch *w = find(ws, fr->key);
    if (!w && !(w = create(ws, fr->key, &fr->p, api_ctx_of(fr->rq)))) {
        http_reply_errno(fr->rp, -ENOMEM);
    } else {
        if (!w->latest) { /* else another viewer's read came first: as fresh */
            w->latest = http_event_new("page", etag, body, len);
            util_copy(w->etag, sizeof(w->etag), etag);
            w->interval_ms = interval_of(ttl_ms);
            w->next_ms = util_now_ms() + w->interval_ms;
            w->seq++;
        }
        if (w->latest)
            join(w, fr->rq, fr->rp, fr->async);
        else
            http_reply_errno(fr->rp, -ENOMEM);
        if (!w->viewers)
            unlist(w);
    }
    pthread_mutex_unlock(&ws->lock);
}

static void first_end(struct first *fr)
{
    struct http_async *async = fr->async;
    free(fr->with.buf);
    free(fr);
    http_async_done(async);
}

static void first_with_done(void *arg, char *body, const char *etag);

static void first_done(struct pages_job *job, int rc)
{
    struct first *fr = (struct first *)job;
    struct page_reply *out = &job->out;
    if (rc == 0 && job->nwith && !out->with_done) { /* a cached page: the members now */
        struct rank_args a = {.board = fr->p.board,
                              .period = fr->p.period,
                              .size = fr->p.size,
                              .rank = fr->p.rank,
                              .min_version = fr->p.min_version};
        fr->ttl_ms = out->ttl_ms;
        rc = with_read_submit(api_ctx_of(fr->rq), http_async_worker(fr->async), fr->rq->deadline_ms,
                              &a, fr->with.items, fr->with.lens, fr->with.n, out, fr->rp,
                              first_with_done, fr); /* takes out */
        if (rc == 0)
            return;
    }
    if (rc)
        handlers_reply_board_errno(fr->rp, rc, fr->p.board, NULL);
    else
        first_join(fr, out->etag, out->body, out->len, out->ttl_ms);
    page_reply_free(out);
    first_end(fr);
}

/* The first read of a score range's page: body, or the error already in the request's reply. */
static void first_walk_done(void *arg, char *body, const char *etag)
{
    struct first *fr = arg;
    if (body) {
        first_join(fr, etag, body, strlen(body), board_ttl_ms(api_ctx_of(fr->rq), fr->p.board));
        free(body);
    }
    first_end(fr);
}

/* The first read of a cached page's with members: the page with them, or the error already in
 * the request's reply. */
static void first_with_done(void *arg, char *body, const char *etag)
{
    struct first *fr = arg;
    if (body) {
        first_join(fr, etag, body, strlen(body), fr->ttl_ms);
        free(body);
    }
    first_end(fr);
}

void watch_start(struct watches *ws, struct http_request *rq, struct http_reply *rp,
                 struct http_async *async, const struct watch_page *p)
{
    char key[WATCH_KEY_MAX];
    if (!ws || watch_key(p, key, sizeof(key))) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    pthread_mutex_lock(&ws->lock);
    struct watch *w = find(ws, key);
    if (w && w->latest && !w->end) { /* watched: its page, no Redis */
        join(w, rq, rp, async);
        pthread_mutex_unlock(&ws->lock);
        http_async_done(async);
        return;
    }
    pthread_mutex_unlock(&ws->lock);
    struct first *fr = calloc(1, sizeof(*fr));
    if (!fr) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    fr->ws = ws;
    fr->rq = rq;
    fr->rp = rp;
    fr->async = async;
    fr->p = *p;
    memcpy(fr->key, key, sizeof(key));
    if (watch_ids_copy(&fr->with, p)) {
        free(fr);
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    fr->p.with = fr->with.items;
    fr->p.with_lens = fr->with.lens;
    const struct worker *wk = http_async_worker(async);
    if (p->walk) { /* a score range's page: walk.lua, its errors the request's */
        fr->walk = *p->walk;
        fr->p.walk = &fr->walk;
        int rc = walk_read_submit(api_ctx_of(rq), wk, rq->deadline_ms, &fr->walk, rp,
                                  first_walk_done, fr);
        if (rc) {
            handlers_reply_board_errno(rp, rc, p->board, NULL);
            free(fr);
            handlers_answered(async);
        }
        return;
    }
    fr->job = (struct pages_job){.board = p->board,
                                 .period = p->period,
                                 .page = p->page,
                                 .size = p->size,
                                 .min_version = p->min_version,
                                 .rank = p->rank,
                                 .with = fr->with.items,
                                 .with_lens = fr->with.lens,
                                 .nwith = fr->with.n,
                                 .deadline_ms = rq->deadline_ms,
                                 .writes = worker_writes(wk),
                                 .cache_reads = worker_cache(wk, 0),
                                 .cache_writes = worker_cache(wk, 1),
                                 .after = watch_after,
                                 .done = first_done};
    int rc = pages_submit(ws->pages, worker_reads(wk), &fr->job);
    if (rc) {
        handlers_reply_board_errno(rp, rc, p->board, NULL);
        free(fr->with.buf);
        free(fr);
        handlers_answered(async);
    }
}
