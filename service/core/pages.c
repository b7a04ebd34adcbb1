/* pages.c -- the rank flow: view, key, cache, rows, render; the design is in pages.h. */
#include "pages.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "records.h"
#include "render.h"
#include "util.h"

#define KEY_MAX PAGE_CACHE_KEY_MAX
#define STATE_SLOTS 512

/* lua/page_fill.lua (the Makefile's build/gen/lua/page_fill.lua.h), registered by pages_new: the
 * store knows it by handle only. */
static const char *const page_fill_body =
#include "lua/page_fill.lua.h"
    ;

/* A guess at a board's page state (see lookup). */
struct board_state {
    char board[BOARD_NAME_LEN_MAX + 1];
    int page_size;
    int ttl_ms;
    int64_t gen;
};

struct pages {
    struct pages_config cfg;
    const struct store_script *page_fill; /* lua/page_fill.lua */
    pthread_mutex_t state_lock;
    struct board_state *states; /* STATE_SLOTS */
    atomic_ulong batched_hits, batches, shared_lookups;
};

/* What a request is about. */
struct page_req {
    const char *board;
    const char *requested;      /* the period asked for, NULL = current */
    char period[PERIOD_ID_MAX]; /* the period read, "" for a board without periods */
    enum period_kind kind;      /* the board's periods: a current page ends with its period */
    int tz_min;
    int64_t page;
    int size; /* resolved */
    enum rank_type rank;
    int ttl_ms;
    int64_t gen;
    char key[KEY_MAX];
};

/* ---------------------------------------------------------------- page values */

/* A 64-bit hash of a page's bytes for its ETag, eight bytes a step (FNV-1a's byte loop was a
 * tenth of a live page's CPU); collisions only need to be unlikely, not hard to make. */
static uint64_t body_hash(const char *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037) ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h ^ (h >> 32);
}

/* A page's strong ETag: its generation and a hash of its bytes, quoted. */
static void page_etag(int64_t gen, const char *body, size_t len, char out[48])
{
    snprintf(out, 48, "\"g%" PRId64 "-%016" PRIx64 "\"", gen, body_hash(body, len));
}

/* When a page computed now stops being fresh at the latest: the end of the current period for a
 * current-period page (wall ms), else 0 (no cap). */
static int64_t page_not_after(const struct page_req *q)
{
    if (q->kind == PERIOD_NONE || (q->requested && q->requested[0]))
        return 0;
    return period_start(q->kind, q->tz_min, util_wall_ms(), 1);
}

/* 1 when the If-None-Match header value matches etag (a list, W/ prefixes and * allowed). */
static int etag_matches(const char *if_none_match, const char *etag)
{
    size_t el = strlen(etag);
    for (const char *p = if_none_match; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return 1;
        if (strncmp(p, "W/", 2) == 0)
            p += 2;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == el && memcmp(p, etag, el) == 0)
            return 1;
        p += n;
    }
    return 0;
}

/* The reply for a cache value parsed as e (taken: freed, or its body kept in place as
 * out->body). */
static int reply_from_entry(struct pages *pg, const struct page_req *q, char *value,
                            const struct page_cache_value *ep, enum page_source source,
                            const char *inm, struct page_reply *out)
{
    const struct page_cache_value e = *ep; /* it points into value, which moves */
    int64_t now = util_wall_ms();
    memset(out, 0, sizeof(*out));
    util_copy(out->etag, sizeof(out->etag), e.tag);
    out->source = source;
    out->cached = q->ttl_ms > 0;
    out->age_s = now > e.created_ms ? (now - e.created_ms) / 1000 : 0;
    int64_t soft = page_cache_soft_expiry(&e, q->ttl_ms);
    out->max_age_s = soft > now ? (soft - now) / 1000 : 0;
    out->grace_s = page_cache_grace_ms(pg->cfg.cache) / 1000;
    out->not_modified = inm && etag_matches(inm, e.tag);
    out->len = e.len; /* a 304's Content-Length too */
    if (out->not_modified) {
        free(value);
        return 0;
    }
    memmove(value, e.data, e.len + 1); /* the body, in place: no copy of the page */
    out->body = value;
    out->len = e.len;
    return 0;
}

/* The same for a value not parsed yet; -EIO (value freed) when it is not the cache's. */
static int reply_from_value(struct pages *pg, const struct page_req *q, char *value, size_t len,
                            enum page_source source, const char *inm, struct page_reply *out)
{
    struct page_cache_value e;
    if (page_cache_value_parse(value, len, &e)) {
        free(value);
        return -EIO;
    }
    return reply_from_entry(pg, q, value, &e, source, inm, out);
}

void page_reply_free(struct page_reply *r)
{
    free(r->body);
    r->body = NULL;
}

/* ---------------------------------------------------------------- keys and the board's state */

/*
 * A board's page state as this process last saw it (default page size, TTL, generation), only
 * to guess the page key so that a hit is ONE round trip of plain commands: HMGET of the settings
 * and GET of the guessed key, pipelined. The settings reply always decides: a wrong guess just
 * costs a second GET. A fixed table; a collision overwrites.
 */
static size_t state_slot(const char *board)
{
    return (size_t)(util_fnv1a(board, strlen(board)) % STATE_SLOTS);
}

static int state_get(struct pages *pg, const char *board, struct board_state *out)
{
    size_t i = state_slot(board);
    pthread_mutex_lock(&pg->state_lock);
    int hit = strcmp(pg->states[i].board, board) == 0;
    if (hit)
        *out = pg->states[i];
    pthread_mutex_unlock(&pg->state_lock);
    return hit;
}

static void state_put(struct pages *pg, const struct board_state *st)
{
    size_t i = state_slot(st->board);
    pthread_mutex_lock(&pg->state_lock);
    pg->states[i] = *st;
    pthread_mutex_unlock(&pg->state_lock);
}

/* <prefix>:{<board>}:page:<gen>:<period or ->:<size>:<page>[:<rank type>] (schema/redis-keys.md;
 * the rank type only when it is not ordinal) */
static void page_key(char *out, size_t len, const char *prefix, const char *board, int64_t gen,
                     const char *period, int size, int64_t page, enum rank_type rank)
{
    struct strb b;
    board_key_make(&b, out, len, prefix, board, BOARD_KEY_PAGE);
    strb_i64(&b, gen);
    strb_str(&b, ":");
    strb_str(&b, period[0] ? period : "-");
    strb_str(&b, ":");
    strb_i64(&b, size);
    strb_str(&b, ":");
    strb_i64(&b, page);
    if (rank != RANK_ORDINAL) {
        strb_str(&b, ":");
        strb_str(&b, rank_type_name(rank));
    }
}

/* <prefix>:{<board>}:meta, the settings hash */
static void meta_key(char *out, size_t len, const char *prefix, const char *board)
{
    struct strb b;
    board_key_make(&b, out, len, prefix, board, BOARD_KEY_META);
}

/* The in-process tier's key: the board, the period itself (never "current"), page, size, rank
 * type. */
static void l1_key(const char *board, const char *resolved, int64_t page, int size,
                   enum rank_type rank, char *out, size_t len)
{
    struct strb b;
    strb_init(&b, out, len);
    strb_str(&b, board);
    strb_str(&b, "\n");
    strb_str(&b, resolved);
    strb_str(&b, "\n");
    strb_i64(&b, page);
    strb_str(&b, "\n");
    strb_i64(&b, size);
    strb_str(&b, "\n");
    strb_str(&b, rank_type_name(rank));
}

/* HMGET of the board settings a lookup needs, in the order settle() reads them. */
#define SETTINGS_ARGC 8
static void settings_argv(const char *argv[SETTINGS_ARGC], const char *meta)
{
    static const char *const fields[] = {"page_size", "page_ttl_ms", "gen",
                                         "period",    "timezone",    "retain"};
    argv[0] = "HMGET";
    argv[1] = meta;
    for (int i = 0; i < SETTINGS_ARGC - 2; i++)
        argv[2 + i] = fields[i];
}

static int reply_int(const struct store_reply *r, int deflt)
{
    if (!r || r->type != STORE_REPLY_STRING)
        return deflt;
    char *end = NULL;
    long v = strtol(r->str, &end, 10);
    return end != r->str && v >= INT32_MIN && v <= INT32_MAX ? (int)v : deflt;
}

/* What one lookup round trip said (settle): */
enum settled {
    SETTLED_FOUND = 1,     /* the guessed key held and the page is cached: *value */
    SETTLED_ABSENT = 0,    /* q is complete; the guess held and the page is not cached */
    SETTLED_UNGUESSED = 2, /* q is complete; the guess was wrong: the page key was not read */
    SETTLED_RETRY = 3,     /* the board's periods were not what this process thought */
};

/* Complete q from the settings reply `set` (and the guessed value `got`, may be NULL), learn the
 * board's state. Returns an enum settled, or -ENOENT (no board) / -EIO. Changes and frees
 * neither reply (the hit path's replies may be shared: store_async_send_shared): with
 * SETTLED_FOUND the cached value is got->str. */
static int settle(struct pages *pg, struct page_req *q, int requested_size,
                  const struct board_where *w, const char *guess, const struct store_reply *set,
                  const struct store_reply *got)
{
    int ok = set->type == STORE_REPLY_ARRAY && set->elements == SETTINGS_ARGC - 2;
    if (!ok || set->element[0]->type != STORE_REPLY_STRING) /* no settings: no board */
        return ok ? -ENOENT : -EIO;
    struct store_reply **f = set->element;
    const char *kind = f[3]->type == STORE_REPLY_STRING ? f[3]->str : "none";
    if (strcmp(kind, period_kind_name(w->kind)) != 0 || reply_int(f[4], 0) != w->tz_min ||
        reply_int(f[5], 1) != w->retain) {
        /* the board's periods (or which of them are readable) are not what this process
         * thought: learn, choose again */
        board_where_note(pg->cfg.model, q->board, kind, f[4]->str, f[5]->str);
        return SETTLED_RETRY;
    }
    struct board_state st;
    memset(&st, 0, sizeof(st));
    util_copy(st.board, sizeof(st.board), q->board);
    st.page_size = reply_int(f[0], BOARD_PAGE_SIZE_DEFAULT);
    if (st.page_size < 1 || st.page_size > BOARD_PAGE_SIZE_MAX)
        st.page_size = BOARD_PAGE_SIZE_DEFAULT;
    st.ttl_ms = reply_int(f[1], BOARD_PAGE_TTL_MS_DEFAULT);
    st.gen = f[2]->type == STORE_REPLY_STRING ? strtoll(f[2]->str, NULL, 10) : 0;
    state_put(pg, &st);
    q->size = requested_size ? requested_size : st.page_size;
    q->ttl_ms = st.ttl_ms;
    q->gen = st.gen;
    page_key(q->key, sizeof(q->key), pg->cfg.prefix, q->board, q->gen, q->period, q->size, q->page,
             q->rank);
    if (!got || strcmp(guess, q->key) != 0)
        return SETTLED_UNGUESSED;
    return got->type == STORE_REPLY_STRING ? SETTLED_FOUND : SETTLED_ABSENT;
}

/* q's period from w, and the guessed page key ("" when there is no guess: board unseen, caching
 * off, breaker open, or pages in another Redis). Never a Redis call. */
static void place(struct pages *pg, struct page_req *q, int requested_size,
                  const struct board_where *w, char *guess, size_t guess_len)
{
    util_copy(q->period, sizeof(q->period), w->period);
    q->kind = w->kind;
    q->tz_min = w->tz_min;
    guess[0] = '\0';
    struct board_state st;
    if (!pg->cfg.cache_apart && !page_cache_breaker_open(pg->cfg.cache) &&
        state_get(pg, q->board, &st) && st.ttl_ms > 0) {
        page_key(guess, guess_len, pg->cfg.prefix, q->board, st.gen, w->period,
                 requested_size ? requested_size : st.page_size, q->page, q->rank);
    }
}

/* Where a request reads (its period from this process's hint) and the guessed page key; -EAGAIN
 * when the hint cannot place an asked-for period (read the settings first), or a period error. */
static int locate(struct pages *pg, struct page_req *q, int requested_size, struct board_where *w,
                  char *guess, size_t guess_len)
{
    int rc = board_where_cached(pg->cfg.model, q->board, q->requested, w);
    if (rc)
        return rc;
    place(pg, q, requested_size, w, guess, guess_len);
    return 0;
}

int pages_get_l1(struct pages *pg, const char *board, const char *period, int64_t page, int size,
                 enum rank_type rank, int64_t min_version, const char *if_none_match,
                 struct page_reply *out)
{
    struct board_where w;
    if (!page_cache_l1_on(pg->cfg.cache) || board_where_cached(pg->cfg.model, board, period, &w))
        return -EAGAIN; /* no tier, or the period needs a Redis read to place: not here */
    char key[KEY_MAX], *value = NULL;
    size_t len = 0;
    l1_key(board, w.period, page, size, rank, key, sizeof(key));
    if (!page_cache_l1_get(pg->cfg.cache, key, &value, &len))
        return -EAGAIN;
    struct page_cache_value e;
    if (min_version > 0 && (page_cache_value_parse(value, len, &e) || e.stamp < min_version)) {
        free(value); /* computed before the write asked for: from Redis, or computed */
        return -EAGAIN;
    }
    struct page_req q = {.board = board, .ttl_ms = INT32_MAX}; /* the copy's own expiry stands */
    return reply_from_value(pg, &q, value, len, PAGE_HIT, if_none_match, out);
}

/* ---------------------------------------------------------------- lookups on an event loop */

/*
 * Every page read on an event thread, without another thread: pages_submit guesses the page key
 * from what this process knows of the board, and appends HMGET (settings) + GET (guessed key) to
 * that thread's own non-blocking connection (store_async.h). Every lookup of one loop iteration
 * leaves in one write; the replies settle each request on the same thread: a hit (or stale hit)
 * is answered, a wrong guess reads the right key, a miss joins a fill of the page cache (below),
 * a live board's page is one page.lua call, a period this process cannot place from memory is
 * placed from the settings (one HGETALL first), periods that moved under the request are learnt
 * and the lookup made again, and a read cut by a lost connection is sent once more. With the page
 * cache in a Redis of its own (--cache-redis) the settings come from the data Redis and the page
 * GET, SET and locks go to the loop's connections to the cache Redis.
 */
struct hit {
    struct page_cache_waiter wt; /* first: a waiter of a fill is its hit */
    struct pages *pg;
    struct pages_job *job;
    struct store_async *reads;    /* the loop's read connection */
    int64_t t0_us;                /* a live page: when it was sent */
    int attempts;                 /* lookups begun again: the periods moved under the request */
    int resent;                   /* a read cut by a lost connection was sent once more */
    int primary;                  /* a live page to the primary: a replica's was older than
                                   * min_version */
    struct board_settings_job sj; /* a period the hint cannot place: the settings first */
    struct page_req q;
    struct board_where w;
    char meta[KEY_MAX], guess[KEY_MAX], l1key[KEY_MAX];
};

/* Where h's page GETs go (the cache Redis' connection when the pages live there). */
static struct store_async *page_reads(const struct hit *h)
{
    return h->pg->cfg.cache_apart ? h->job->cache_reads : h->reads;
}

/* 1 when a read that failed with rc may be sent once more (a lost connection, in time). */
static int may_resend(int rc, int *resent, int64_t deadline_ms)
{
    if ((rc != -EIO && rc != -ECONNRESET) || *resent ||
        (deadline_ms && util_now_ms() >= deadline_ms))
        return 0;
    *resent = 1;
    return 1;
}

/* h is answered (rc 0: job->out holds the page) or failed: its job completes. */
static void hit_end(struct hit *h, int rc)
{
    struct pages_job *j = h->job;
    free(h->wt.old);
    free(h);
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* may free j */
}

/* The same for a page served from the lookup's replies (counted as a batched hit). */
static void hit_finish(struct hit *h, int rc)
{
    if (rc == 0)
        atomic_fetch_add(&h->pg->batched_hits, 1);
    hit_end(h, rc);
}

static int hit_begin(struct hit *h);
static int hit_send(struct hit *h);
static int live_submit(struct hit *h);

/* The periods moved under h (learnt): the lookup again, at most three times in all. 1 sent
 * (the job completes from there), else a negative errno. */
static int hit_retry(struct hit *h)
{
    if (++h->attempts >= 3)
        return -EAGAIN; /* the period settings keep changing under us */
    free(h->wt.old);
    h->wt.old = NULL;
    h->resent = 0;
    int rc = hit_begin(h);
    return rc ? rc : 1;
}

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
    char *body = render_page(c->board, c->page, c->rows);
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
static int replica_behind(struct pages *pg, struct store_async *conn, int64_t min_version,
                          int *primary, const struct store_reply *r)
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
    if (tag && tag->type == STORE_REPLY_STRING) {
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
    char page_s[24], size_s[16], tz[16], gen[24], ttl[16], older[24], stamp[24];
    snprintf(page_s, sizeof(page_s), "%" PRId64, c->page);
    snprintf(size_s, sizeof(size_s), "%d", c->q.size);
    snprintf(tz, sizeof(tz), "%d", c->q.tz_min);
    snprintf(gen, sizeof(gen), "%" PRId64, lk->version);
    snprintf(ttl, sizeof(ttl), "%d", lk->ttl_ms);
    snprintf(older, sizeof(older), "%" PRId64, lk->older_than_ms);
    snprintf(stamp, sizeof(stamp), "%" PRId64, lk->min_stamp);
    struct board_read rd; /* its keys: settings, set, records, distinct scores */
    struct board_read_args ra = {
        .kind = BOARD_READ_PAGE, .rank = c->q.rank, .page = c->page, .size = c->q.size};
    board_read_prepare(c->pg->cfg.model, c->board, &c->w, &ra, &rd);
    /* lua/prelude_read.lua's layout (keys, the assumed period kind, offset, retain, the rank
     * type), then the fill's */
    const char *argv[] = {rd.meta,
                          rd.z,
                          rd.items,
                          rd.dense,
                          lk->key,
                          lk->lock,
                          period_kind_name(c->q.kind),
                          tz,
                          rd.retain,
                          rank_type_name(c->q.rank),
                          page_s,
                          size_s,
                          gen,
                          lk->token,
                          ttl,
                          older,
                          stamp};
    int rc = store_async_script(c->writes, c->pg->page_fill, 6, 11, argv, NULL, deadline_ms,
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
static int miss_begin(struct hit *h, int64_t older_than_ms, char *old, size_t old_len)
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
static void refresh_on_loop(struct hit *h, int64_t seen_created_ms)
{
    if (!can_fill(h))
        return;
    struct page_cache_fill_spec spec;
    /* a newer copy than the one served (another refresh finished meanwhile) makes it moot */
    fill_spec(h, seen_created_ms, &spec);
    page_cache_refresh(h->pg->cfg.cache, &spec);
}

/* ---------------------------------------------------------------- hits */

/* A cached value for h (got: the GET's reply, read-only): serve it, or compute. Returns as
 * hit_settle. */
static int hit_serve(struct hit *h, const struct store_reply *got)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    if (got->type != STORE_REPLY_STRING)
        return miss_begin(h, 0, NULL, 0);
    char l1key[KEY_MAX] = "";
    size_t len = got->len;
    char *value = malloc(len + 1); /* a copy: other hits may share the reply */
    if (!value)
        return -ENOMEM;
    memcpy(value, got->str, len + 1);
    if (page_cache_l1_on(pg->cfg.cache)) /* the tier's key, only with a tier */
        l1_key(j->board, h->q.period, j->page, j->size, j->rank, l1key, sizeof(l1key));
    enum page_source source = PAGE_HIT;
    int refresh = 0;
    struct page_cache_value e;
    switch (page_cache_judge(pg->cfg.cache, h->q.key, h->q.gen, j->min_version, h->q.ttl_ms, value,
                             len, l1key, &source, &refresh, &e)) {
    case PAGE_CACHE_TOO_OLD: /* compute it now; the copy is the fallback should that fail */
        return miss_begin(h, e.created_ms, value, len);
    case PAGE_CACHE_UNUSABLE: /* another generation's page, caching turned off, or a page
                               * computed before the write counter asked for (min_version) */
        free(value);
        return miss_begin(h, 0, NULL, 0);
    case PAGE_CACHE_SERVE:
        break;
    }
    if (refresh)
        refresh_on_loop(h, e.created_ms);
    return reply_from_entry(pg, &h->q, value, &e, source, j->if_none_match, &j->out);
}

static void hit_done(void *arg, int rc, struct store_reply **replies);

/* The page key was not guessed (a board this process had not seen, or its state moved, or the
 * pages live in the cache Redis): its GET now. */
static void hit_got(void *arg, int rc, struct store_reply **replies)
{
    struct hit *h = arg;
    if (h->pg->cfg.cache_apart) { /* the cache Redis: its faults open the breaker, then compute */
        int failed = rc != 0 || replies[0]->type == STORE_REPLY_ERROR;
        page_cache_breaker_result(h->pg->cfg.cache, failed);
        rc = failed ? miss_begin(h, 0, NULL, 0) : hit_serve(h, replies[0]);
    } else if (rc && may_resend(rc, &h->resent, h->job->deadline_ms)) {
        rc = hit_send(h); /* a lookup cut by a lost connection: once more, from the start */
        rc = rc ? rc : 1;
    } else if (!rc) {
        rc = hit_serve(h, replies[0]);
    }
    if (rc != 1)
        hit_finish(h, rc);
}

/* Finish one job from its lookup's replies: 0 served from the cache, 1 a miss, a second read
 * or a live page now under way on the loop (it completes the job), else a negative errno. */
static int hit_settle(struct hit *h, struct store_reply *set, struct store_reply *got)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    int st = settle(pg, &h->q, j->size, &h->w, h->guess, set, got);
    if (st < 0)
        return st; /* no such board: 404 now; or an unexpected reply */
    if (st == SETTLED_RETRY)
        return hit_retry(h); /* the periods were not what this process thought: learnt */
    if (st == SETTLED_ABSENT)
        return miss_begin(h, 0, NULL, 0);
    if (st == SETTLED_FOUND)
        return hit_serve(h, got);
    /* SETTLED_UNGUESSED: the settings say where the page is */
    if (h->q.ttl_ms <= 0) { /* a board that caches no pages: a live page */
        int rc = live_submit(h);
        return rc ? rc : 1;
    }
    if (page_cache_breaker_open(pg->cfg.cache))
        return miss_begin(h, 0, NULL, 0); /* the cache is skipped for now */
    const char *get[] = {"GET", h->q.key};
    const char *const *argv[] = {get};
    const int argc[] = {2};
    struct store_async *conn = page_reads(h);
    int rc = conn ? store_async_send_shared(conn, 1, argc, argv, j->deadline_ms, hit_got, h)
                  : -ECONNREFUSED;
    if (rc >= 0)
        return 1;
    if (!pg->cfg.cache_apart)
        return rc;
    page_cache_breaker_result(pg->cfg.cache, 1); /* the cache Redis cannot be reached: compute */
    return miss_begin(h, 0, NULL, 0);
}

static void hit_done(void *arg, int rc, struct store_reply **replies)
{
    struct hit *h = arg;
    /* Redis too slow: answer 503 now. A lost connection: the lookup once more (a read). */
    if (rc && may_resend(rc, &h->resent, h->job->deadline_ms)) {
        rc = hit_send(h);
        rc = rc ? rc : 1;
    } else if (!rc) {
        rc = hit_settle(h, replies[0], h->guess[0] ? replies[1] : NULL);
    }
    if (rc != 1)
        hit_finish(h, rc);
}

/* ---------------------------------------------------------------- live pages */

static int live_send(struct hit *h);

/* A live page (the board caches no pages) on the event thread: page.lua on its connection, the
 * reply rendered here; a board that caches pages again, or whose periods moved, is looked up
 * again. */
static void live_done(void *arg, int rc, struct store_reply **replies)
{
    struct hit *h = arg;
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    struct board_page *p = NULL;
    if (rc && may_resend(rc, &h->resent, j->deadline_ms) && live_send(h) == 0)
        return; /* a read cut by a lost connection: once more */
    if (rc == 0 && replica_behind(pg, h->reads, j->min_version, &h->primary, replies[0])) {
        if ((rc = live_send(h)) == 0)
            return; /* a replica behind the write asked for: the primary's page */
        hit_end(h, rc);
        return;
    }
    if (rc == 0) {
        struct store_reply *r = replies[0];
        replies[0] = NULL; /* taken */
        rc = board_page_take(pg->cfg.model, j->board, r, j->page, &p);
    }
    if (rc == 0) {
        struct board_state st = {.page_size = p->settings.page_size,
                                 .ttl_ms = p->settings.page_ttl_ms,
                                 .gen = p->settings.gen};
        util_copy(st.board, sizeof(st.board), j->board);
        state_put(pg, &st);
        if (st.ttl_ms > 0)
            rc = -EAGAIN; /* caching was turned on: the cache path serves it */
    }
    if (rc == -EAGAIN) { /* periods learnt, or caching on: the lookup again */
        board_page_free(p);
        if ((rc = hit_retry(h)) != 1)
            hit_end(h, rc);
        return;
    }
    if (rc == 0 && pg->cfg.delay) /* counted as a computation; the event thread never stalls */
        pg->cfg.delay(j->board, j->page, j->size);
    if (rc == 0)
        util_copy(p->period, sizeof(p->period), h->q.period); /* for the cursors */
    char *body = rc == 0 ? render_page(j->board, j->page, p) : NULL;
    board_page_free(p);
    if (rc == 0 && !body)
        rc = -ENOMEM;
    if (rc == 0) { /* the reply as reply_from_value makes it for a live page, without a value */
        metrics_page_compute(util_now_us() - h->t0_us);
        page_cache_count(pg->cfg.cache, PAGE_MISS);
        struct page_reply *out = &j->out;
        memset(out, 0, sizeof(*out));
        out->len = strlen(body);
        page_etag(h->q.gen, body, out->len, out->etag);
        out->source = PAGE_MISS;
        out->grace_s = page_cache_grace_ms(pg->cfg.cache) / 1000;
        out->not_modified = j->if_none_match && etag_matches(j->if_none_match, out->etag);
        if (!out->not_modified) {
            out->body = body;
            body = NULL;
        }
    }
    free(body);
    hit_end(h, rc); /* a computation, not a hit */
}

static int live_send(struct hit *h)
{
    struct pages_job *j = h->job;
    struct board_read rd;
    struct board_read_args ra = {
        .kind = BOARD_READ_PAGE, .rank = j->rank, .page = j->page, .size = j->size};
    board_read_prepare(h->pg->cfg.model, j->board, &h->w, &ra, &rd);
    int rc = store_async_script_flags(h->reads, rd.script,
                                      store_read_flags(j->min_version, h->primary), rd.nkeys,
                                      rd.nargs, rd.argv, rd.lens, j->deadline_ms, live_done, h);
    return rc < 0 ? rc : 0;
}

/* page.lua for h (the board caches no pages; h->q.gen is its generation, for the ETag); 0 sent,
 * or a negative errno. */
static int live_submit(struct hit *h)
{
    h->t0_us = util_now_us();
    return live_send(h);
}

/* ---------------------------------------------------------------- a job's start */

/* The lookup for h (its period placed, the key guessed): page.lua for a board known to cache no
 * pages, else HMGET of the settings and GET of the guessed key, shared with identical lookups
 * of this loop iteration. 0 sent, or a negative errno (nothing sent). */
static int hit_send(struct hit *h)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    struct board_state st;
    if (!h->guess[0] && state_get(pg, j->board, &st) && st.ttl_ms == 0) {
        h->q.gen = st.gen;
        return live_submit(h);
    }
    /* a board this process has not seen (or one that caches no pages now, or pages in the
     * cache Redis): the settings alone, and the page key they give is read next */
    const char *hm[SETTINGS_ARGC], *get[] = {"GET", h->guess};
    settings_argv(hm, h->meta);
    const char *const *argv[] = {hm, get};
    const int argc[] = {SETTINGS_ARGC, 2};
    int rc = store_async_send_shared(h->reads, h->guess[0] ? 2 : 1, argc, argv, j->deadline_ms,
                                     hit_done, h);
    if (rc == 1)
        atomic_fetch_add(&pg->batches, 1); /* this lookup starts a new pipeline */
    else if (rc == 2)
        atomic_fetch_add(&pg->shared_lookups, 1); /* the same lookup is already on its way */
    return rc < 0 ? rc : 0;
}

/* A period the hint could not place, placed from the settings just read. */
static void hit_placed(struct board_settings_job *sj, int rc)
{
    struct hit *h = (struct hit *)(void *)((char *)sj - offsetof(struct hit, sj));
    if (rc == 0)
        rc = board_where_settled(h->pg->cfg.model, h->job->board, h->job->period, &sj->settings,
                                 sj->exists, &h->w);
    if (rc == 0) {
        place(h->pg, &h->q, h->job->size, &h->w, h->guess, sizeof(h->guess));
        rc = hit_send(h);
    }
    if (rc)
        hit_finish(h, rc);
}

/* Place h's period (from this process's hint, else from the settings, read first) and send its
 * lookup. 0 sent, or a negative errno (nothing sent). */
static int hit_begin(struct hit *h)
{
    struct pages_job *j = h->job;
    if (locate(h->pg, &h->q, j->size, &h->w, h->guess, sizeof(h->guess)) == 0)
        return hit_send(h);
    h->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = j->deadline_ms, .done = hit_placed};
    return board_settings_submit(h->pg->cfg.model, h->reads, &h->sj);
}

int pages_submit(struct pages *pg, struct store_async *conn, struct pages_job *job)
{
    if (!conn)
        return -ECONNREFUSED;
    struct hit *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->pg = pg;
    h->job = job;
    h->reads = conn;
    h->q.board = job->board;
    h->q.requested = job->period;
    h->q.page = job->page;
    h->q.rank = job->rank;
    memset(&job->out, 0, sizeof(job->out));
    meta_key(h->meta, sizeof(h->meta), pg->cfg.prefix, job->board);
    int rc = hit_begin(h);
    if (rc)
        free(h);
    return rc;
}

/* ---------------------------------------------------------------- life cycle and stats */

struct pages *pages_new(const struct pages_config *cfg)
{
    struct pages *pg = calloc(1, sizeof(*pg));
    if (!pg)
        return NULL;
    pg->cfg = *cfg;
    pg->page_fill = store_script_register(page_fill_body); /* the stores' dials load it */
    /* its rows are page.lua's: on a cluster their records are fetched after it (records.h) */
    store_async_script_then(pg->page_fill, records_then_page);
    pg->states = calloc(STATE_SLOTS, sizeof(*pg->states));
    if (!pg->states) {
        free(pg);
        return NULL;
    }
    pthread_mutex_init(&pg->state_lock, NULL);
    return pg;
}

void pages_free(struct pages *pg)
{
    if (!pg)
        return;
    pthread_mutex_destroy(&pg->state_lock);
    free(pg->states);
    free(pg);
}

void pages_stats(struct pages *pg, struct pages_stats *out)
{
    page_cache_stats(pg->cfg.cache, &out->cache);
    out->batched_hits = atomic_load(&pg->batched_hits);
    out->batches = atomic_load(&pg->batches);
    out->shared_lookups = atomic_load(&pg->shared_lookups);
}
