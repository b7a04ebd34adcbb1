/*
 * pages_fill.c -- the rank flow's misses: page_fill.lua takes the stampede lock or returns the
 * page stored meanwhile; the rows rendered, stored and the lock released behind the reply. The
 * design is in pages.h; pages_int.h holds what the pages*.c files share.
 */
#include "pages_int.h"

/* ---------------------------------------------------------------- misses: the fills' side */

/*
 * A miss found by a lookup joins (or starts) a page cache fill of its key on the same loop. The
 * fill's lock call is one page_fill.lua call on the loop's write connection (it takes a lock, so
 * a write pause holds it and never the reads behind it): it answers the page another computation
 * stored meanwhile, or takes the page's stampede lock and returns its rows, or says the lock is
 * held elsewhere; its computation without the lock is page.lua on the read connection. The rows
 * are rendered here and the body goes back to the fill, which answers every waiter, stores the
 * page and releases the lock. With the pages in a Redis of their own there is no lock call: the
 * cache takes the lock there (SET NX PX) and the computation is page.lua on the data Redis.
 * A fill's context holds copies of the request: a background refresh outlives it.
 */
struct fill_ctx {
    struct pages *pg;
    struct page_cache_fill *f;
    struct store_async *reads;  /* the loop's data read connection: page.lua */
    struct store_async *writes; /* the loop's data write connection: page_fill.lua */
    int resent;                 /* a computation cut by a lost connection was sent once more */
    int64_t min_stamp;          /* the fill's first request's min_version (0: none) */
    int primary;                /* the computation to the primary: a replica's rows were older
                                 * than min_stamp */
    struct board_page *rows;    /* rows held while a test stall runs */
    char board[BOARD_NAME_LEN_MAX + 1], requested[PERIOD_ID_MAX];
    int64_t page;
    int64_t deadline_ms;
    struct page_req q;
    struct board_where w;
};

static void *fill_ctx_new(void *arg)
{
    const struct hit *h = arg;
    const struct pages_job *j = h->job;
    struct fill_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->pg = h->pg;
    c->reads = h->reads;
    c->writes = j->writes;
    util_copy(c->board, sizeof(c->board), j->board);
    util_copy(c->requested, sizeof(c->requested), j->period ? j->period : "");
    c->page = j->page;
    c->deadline_ms = j->deadline_ms;
    c->min_stamp = j->min_version;
    c->q = h->q;
    c->q.board = c->board;
    c->q.requested = c->requested[0] ? c->requested : NULL;
    c->w = h->w;
    return c;
}

static void fill_ctx_free(void *ctx)
{
    struct fill_ctx *c = ctx;
    board_page_free(c->rows);
    free(c);
}

/* The rows are in (c->rows): render, hand the body to the fill (which answers and stores). */
static void fill_render(void *arg)
{
    struct fill_ctx *c = arg;
    /* the board's write counter the rows were read at: the value's stamp (min_version) */
    page_cache_fill_stamp(c->f, c->rows->settings.version);
    util_copy(c->rows->period, sizeof(c->rows->period), c->q.period); /* for the cursors */
    char *body = c->pg->cfg.render(c->board, c->page, c->rows);
    board_page_free(c->rows);
    c->rows = NULL;
    char etag[48] = "";
    size_t len = body ? strlen(body) : 0;
    if (body)
        page_etag(c->q.gen, body, len, etag);
    page_cache_fill_value(c->f, body ? 0 : -ENOMEM, body, len, etag); /* c is gone from here on */
    free(body);
}

/* A page.lua (or page_fill.lua) reply with the rows: taken; the test stall, if any, then
 * fill_render. */
static void fill_rows(struct fill_ctx *c, struct store_reply *r)
{
    struct pages *pg = c->pg;
    int rc = board_page_take(pg->cfg.model, c->board, r, c->page, &c->rows);
    if (rc) {
        page_cache_fill_value(c->f, rc, NULL, 0, NULL);
        return;
    }
    int ms = pg->cfg.delay ? pg->cfg.delay(c->board, c->page, c->q.size) : 0;
    if (ms > 0 && page_cache_fill_after(c->f, ms, fill_render, c) == 0)
        return; /* stalled on a timer, never on the thread */
    fill_render(c);
}

static int fill_compute_send(struct fill_ctx *c);

/* 1 when a read-only script's reply (rc 0), sent `*primary` 0 on `conn`, may come from a replica
 * behind the write counter min_version asks for: then *primary is set and the caller sends it
 * again (STORE_READ_PRIMARY). */
int replica_behind(struct pages *pg, struct store_async *conn, int64_t min_version, int *primary,
                   const struct store_reply *r)
{
    if (min_version <= 0 || *primary || !store_async_reads_replicas(conn))
        return 0;
    int64_t v = board_read_version(r);
    if (v < 0 || v >= min_version)
        return 0;
    *primary = 1;
    store_note_replica_stale(pg->cfg.data);
    return 1;
}

static void compute_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill_ctx *c = arg;
    if (rc == -ECANCELED) {
        page_cache_fill_value(c->f, rc, NULL, 0, NULL);
        return;
    }
    /* rows from a replica behind the write the fill's first request must see: its page would
     * be its own (page_cache.h: a fill's first waiter takes its value), so the primary's */
    if (rc == 0 && replica_behind(c->pg, c->reads, c->min_stamp, &c->primary, replies[0])) {
        if ((rc = fill_compute_send(c)) == 0)
            return;
        page_cache_fill_value(c->f, rc == -ETIMEDOUT ? rc : -EIO, NULL, 0, NULL);
        return;
    }
    if (rc && may_resend(rc, &c->resent, c->deadline_ms) && fill_compute_send(c) == 0)
        return; /* a read cut by a lost connection: once more */
    if (rc) {   /* unanswered in time, or lost twice: 503 (the lock, if any, is released) */
        page_cache_fill_value(c->f, rc == -ETIMEDOUT ? rc : -EIO, NULL, 0, NULL);
        return;
    }
    struct store_reply *r = replies[0];
    replies[0] = NULL; /* taken */
    fill_rows(c, r);
}

static int fill_compute_send(struct fill_ctx *c)
{
    struct board_read rd;
    struct board_read_args ra = {
        .kind = BOARD_READ_PAGE, .rank = c->q.rank, .page = c->page, .size = c->q.size};
    board_read_prepare(c->pg->cfg.model, c->board, &c->w, &ra, &rd);
    int rc = store_async_script_flags(c->reads, rd.script,
                                      store_read_flags(c->min_stamp, c->primary), rd.nkeys,
                                      rd.nargs, rd.argv, rd.lens, c->deadline_ms, compute_reply, c);
    return rc < 0 ? rc : 0;
}

/* page_cache_fill_ops.compute: page.lua on the read connection. */
static int fill_compute(struct page_cache_fill *f, void *ctx)
{
    struct fill_ctx *c = ctx;
    c->f = f;
    return fill_compute_send(c);
}

static void fill_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill_ctx *c = arg;
    struct page_cache_fill *f = c->f;
    if (rc == -ECANCELED) {
        page_cache_fill_value(f, rc, NULL, 0, NULL);
        return;
    }
    struct store_reply *r = rc ? NULL : replies[0];
    if (!r || r->type == STORE_REPLY_ERROR) { /* the lock call failed (OOM, a write pause) */
        if (r)
            store_note_fault(c->pg->cfg.data, "page_fill", r->str);
        page_cache_fill_locked(f, PAGE_CACHE_LOCK_FAILED, NULL, 0);
        return;
    }
    if (r->type != STORE_REPLY_ARRAY) { /* nil: no such board */
        page_cache_fill_locked(f, PAGE_CACHE_LOCK_ANSWERED, NULL, 0);
        page_cache_fill_value(f, -ENOENT, NULL, 0, NULL);
        return;
    }
    const struct store_reply *tag = r->elements ? r->element[0] : NULL;
    if (tag && tag->type == STORE_REPLY_STRING && !board_settings_reply(tag)) { /* no page */
        if (strcmp(tag->str, "cached") == 0 && r->elements == 2) {
            page_cache_fill_locked(f, PAGE_CACHE_LOCK_CACHED, r->element[1]->str,
                                   r->element[1]->len);
        } else if (strcmp(tag->str, "locked") == 0) {
            page_cache_fill_locked(f, PAGE_CACHE_LOCK_HELD, NULL, 0);
        } else { /* 'retry' (learnt) or 'gen': the settings moved: the waiters look again */
            page_cache_fill_locked(f, PAGE_CACHE_LOCK_ANSWERED, NULL, 0);
            board_where_learn(c->pg->cfg.model, c->board, r);
            page_cache_fill_value(f, -EAGAIN, NULL, 0, NULL);
        }
        return;
    }
    page_cache_fill_locked(f, PAGE_CACHE_LOCK_TAKEN, NULL, 0);
    replies[0] = NULL; /* taken */
    fill_rows(c, r);
}

/* page_cache_fill_ops.lock_call: page_fill.lua on the write connection, with the page's keys,
 * the lock and the rows' arguments. */
static int fill_lock_call(struct page_cache_fill *f, void *ctx, const struct page_cache_lock *lk,
                          int64_t deadline_ms)
{
    struct fill_ctx *c = ctx;
    c->f = f;
    char page_s[24], size_s[16], tz[PERIOD_TZ_TEXT_MAX], gen[24], ttl[16], older[24], stamp[24];
    snprintf(page_s, sizeof(page_s), "%" PRId64, c->page);
    snprintf(size_s, sizeof(size_s), "%d", c->q.size);
    period_tz_text(&c->q.tz, tz, sizeof(tz));
    snprintf(gen, sizeof(gen), "%" PRId64, lk->version);
    snprintf(ttl, sizeof(ttl), "%d", lk->ttl_ms);
    snprintf(older, sizeof(older), "%" PRId64, lk->older_than_ms);
    snprintf(stamp, sizeof(stamp), "%" PRId64, lk->min_stamp);
    struct board_read rd; /* its keys: settings, set, records, distinct scores, ids and
                           * updated_at hashes */
    struct board_read_args ra = {
        .kind = BOARD_READ_PAGE, .rank = c->q.rank, .page = c->page, .size = c->q.size};
    board_read_prepare(c->pg->cfg.model, c->board, &c->w, &ra, &rd);
    /* lua/prelude_read.lua's layout (keys, the assumed period kind, offset, retain, the rank
     * type), then the fill's */
    const char *argv[] = {rd.meta,   rd.z,      rd.items,
                          rd.dense,  rd.ids,    rd.upd,
                          lk->key,   lk->lock,  period_kind_name(c->q.kind),
                          tz,        rd.retain, rank_type_name(c->q.rank),
                          page_s,    size_s,    gen,
                          lk->token, ttl,       older,
                          stamp};
    int rc = store_async_script(c->writes, c->pg->page_fill, 8, 11, argv, NULL, deadline_ms,
                                fill_reply, c);
    return rc < 0 ? rc : 0;
}

static const struct page_cache_fill_ops fill_ops = {.ctx_new = fill_ctx_new,
                                                    .ctx_free = fill_ctx_free,
                                                    .lock_call = fill_lock_call,
                                                    .compute = fill_compute};
static const struct page_cache_fill_ops fill_ops_apart = {
    .ctx_new = fill_ctx_new, .ctx_free = fill_ctx_free, .lock_call = NULL, .compute = fill_compute};

/* The fill spec of h's page (h->q is complete: key, generation, TTL > 0, period). */
static void fill_spec(struct hit *h, int64_t older_than_ms, struct page_cache_fill_spec *s)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    *s = (struct page_cache_fill_spec){
        .key = h->q.key,
        .version = h->q.gen,
        .ttl_ms = h->q.ttl_ms,
        .not_after_ms = page_not_after(&h->q),
        .older_than_ms = older_than_ms,
        .min_stamp = j->min_version,
        .page_reads = pg->cfg.cache_apart ? j->cache_reads : h->reads,
        .page_writes = pg->cfg.cache_apart ? j->cache_writes : j->writes,
        .deadline_ms = j->deadline_ms,
        .after = j->after,
        .after_ctx = j->after_ctx,
        .ops = pg->cfg.cache_apart ? &fill_ops_apart : &fill_ops,
        .arg = h,
    };
}

/* 1 when h's loop has what a fill needs: the write connection, timers, and with the pages apart
 * both connections to the cache Redis. */
static int can_fill(const struct hit *h)
{
    const struct pages_job *j = h->job;
    return j->writes && j->after &&
           (!h->pg->cfg.cache_apart || (j->cache_reads && j->cache_writes));
}

/* A fill's outcome for one waiter (page_cache_waiter.served): the reply, then the job's done;
 * -EAGAIN (the board's periods moved): the lookup again. */
static void hit_served(struct page_cache_waiter *wt, int rc, char *value, size_t len,
                       enum page_source source)
{
    struct hit *h = (struct hit *)wt;
    struct pages_job *j = h->job;
    if (rc == -EAGAIN && (rc = hit_retry(h)) == 1)
        return; /* looks again: not done yet */
    if (rc == 0)
        rc = reply_from_value(h->pg, &h->q, value, len, source, j->if_none_match, &j->out);
    hit_end(h, rc);
}

/*
 * Compute h's page on its loop (h->q is complete: key, generation, TTL > 0, period). Returns 1
 * when h belongs to a fill now (its job completes from there), or a negative errno (nothing
 * sent, h still the caller's). `old` (may be NULL) is a copy too old to serve, kept as the
 * fallback if the computation fails; it is owned by h from here on.
 */
int miss_begin(struct hit *h, int64_t older_than_ms, char *old, size_t old_len)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    free(h->wt.old);
    h->wt.old = old;
    h->wt.old_len = old_len;
    if (h->q.ttl_ms <= 0) { /* caching turned off: always current, never a cached copy */
        free(h->wt.old);
        h->wt.old = NULL;
        int rc = live_submit(h);
        return rc ? rc : 1;
    }
    if (!can_fill(h))
        return -ECONNREFUSED;
    h->l1key[0] = '\0';
    if (page_cache_l1_on(pg->cfg.cache))
        l1_key(j->board, h->q.period, j->page, j->size, j->rank, h->l1key, sizeof(h->l1key));
    h->wt.l1key = h->l1key;
    h->wt.served = hit_served;
    h->wt.min_stamp = j->min_version;
    struct page_cache_fill_spec spec;
    fill_spec(h, older_than_ms, &spec);
    return page_cache_fill_join(pg->cfg.cache, &spec, &h->wt);
}

/* A stale or early-refreshed page served from h's lookup: refresh it in the background, on h's
 * loop (the cache declines when a computation of it is in flight or enough refreshes run). */
void refresh_on_loop(struct hit *h, int64_t seen_created_ms)
{
    if (!can_fill(h))
        return;
    struct page_cache_fill_spec spec;
    /* a newer copy than the one served (another refresh finished meanwhile) makes it moot */
    fill_spec(h, seen_created_ms, &spec);
    page_cache_refresh(h->pg->cfg.cache, &spec);
}
