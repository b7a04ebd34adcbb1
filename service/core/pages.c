/*
 * pages.c -- the rank flow: view, key, cache, rows, render; hits, lookups, live pages, a job's
 * start, the life cycle (the misses are pages_fill.c's). The design is in pages.h; pages_int.h
 * holds what the pages*.c files share.
 */
#include "pages_int.h"

/* lua/page_fill.lua (the Makefile's build/gen/lua/page_fill.lua.h), registered by pages_new: the
 * store knows it by handle only. */
static const char *const page_fill_body =
#include "lua/page_fill.lua.h"
    ;

/* lua/page_get.lua, likewise: a lookup with a guessed key in one command. */
static const char *const page_get_body =
#include "lua/page_get.lua.h"
    ;

/* ---------------------------------------------------------------- page values */

/* A 64-bit hash of a page's bytes for its ETag, eight bytes a step (FNV-1a's byte loop was a
 * tenth of a live page's CPU); collisions only need to be unlikely, not hard to make. */
static uint64_t body_hash(const char *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037) ^ n;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) { /* the same steps, four a loop: a live page's body is ~4 KiB */
        uint64_t a, b, c, d;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        memcpy(&c, p + i + 16, 8);
        memcpy(&d, p + i + 24, 8);
        h = (h ^ a) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
        h = (h ^ b) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
        h = (h ^ c) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
        h = (h ^ d) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
    }
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

void page_etag(int64_t gen, const char *body, size_t len, char out[48])
{
    static const char hex[] = "0123456789abcdef";
    char h[19]; /* "-" and 16 lowercase hex digits (printf's %016x): no printf on a live page */
    uint64_t v = body_hash(body, len);
    h[0] = '-';
    for (int i = 16; i >= 1; i--, v >>= 4)
        h[i] = hex[v & 15];
    h[17] = '"';
    h[18] = '\0';
    struct strb b;
    strb_init(&b, out, 48);
    strb_str(&b, "\"g");
    strb_i64(&b, gen);
    strb_str(&b, h);
}

/* When a page computed now stops being fresh at the latest: the end of the current period for a
 * current-period page (wall ms), else 0 (no cap). */
int64_t page_not_after(const struct page_req *q)
{
    if (q->kind == PERIOD_NONE || (q->requested && q->requested[0]))
        return 0;
    return period_start(q->kind, &q->tz, util_wall_ms(), 1);
}

int pages_etag_matches(const char *if_none_match, const char *etag)
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
 * out->body, moved to the front of value unless e->data is value itself). */
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
    out->ttl_ms = q->ttl_ms < INT32_MAX ? q->ttl_ms : 0;
    out->age_s = now > e.created_ms ? (now - e.created_ms) / 1000 : 0;
    int64_t soft = page_cache_soft_expiry(&e, q->ttl_ms);
    out->max_age_s = soft > now ? (soft - now) / 1000 : 0;
    out->grace_s = page_cache_grace_ms(pg->cfg.cache) / 1000;
    out->not_modified = inm && pages_etag_matches(inm, e.tag);
    out->len = e.len; /* a 304's Content-Length too */
    if (out->not_modified) {
        free(value);
        return 0;
    }
    if (e.data != value)
        memmove(value, e.data, e.len + 1); /* the body, in place: no copy of the page */
    out->body = value;
    out->len = e.len;
    return 0;
}

/* The same for a value not parsed yet; -EIO (value freed) when it is not the cache's. */
int reply_from_value(struct pages *pg, const struct page_req *q, char *value, size_t len,
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
void l1_key(const char *board, const char *resolved, int64_t page, int size, enum rank_type rank,
            char *out, size_t len)
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

/* HMGET of the board settings a lookup needs, in the order page_settle() reads them; it decodes
 * the reply with board_settings_field, the decoder of the HGETALL paths too. */
#define SETTINGS_ARGC 8
static const char *const settings_fields[SETTINGS_ARGC - 2] = {
    "page_size", "page_ttl_ms", "gen", "period", "timezone", "retain"};
static void settings_argv(const char *argv[SETTINGS_ARGC], const char *meta)
{
    argv[0] = "HMGET";
    argv[1] = meta;
    for (int i = 0; i < SETTINGS_ARGC - 2; i++)
        argv[2 + i] = settings_fields[i];
}

/* Complete q from the settings reply `set` (and the guessed value `got`, may be NULL), learn the
 * board's state. Returns an enum settled, or -ENOENT (no board) / -EIO. Changes and frees
 * neither reply (the hit path's replies may be shared: store_async_send_shared): with
 * SETTLED_FOUND the cached value is got->str. */
int page_settle(struct pages *pg, struct page_req *q, int requested_size,
                const struct board_where *w, const char *guess, const struct store_reply *set,
                const struct store_reply *got)
{
    int ok = set->type == STORE_REPLY_ARRAY && set->elements == SETTINGS_ARGC - 2;
    if (!ok || set->element[0]->type != STORE_REPLY_STRING) /* no settings: no board */
        return ok ? -ENOENT : -EIO;
    struct store_reply **f = set->element;
    struct board_settings s;
    board_settings_default(&s);
    for (int i = 0; i < SETTINGS_ARGC - 2; i++)
        board_settings_field(&s, settings_fields[i],
                             f[i]->type == STORE_REPLY_STRING ? f[i]->str : NULL);
    if (s.period != w->kind || !period_tz_same(&s.tz, &w->tz) || s.retain != w->retain) {
        /* the board's periods (or which of them are readable) are not what this process
         * thought: learn, choose again */
        board_where_note(pg->cfg.model, q->board, f[3]->str, f[4]->str, f[5]->str);
        return SETTLED_RETRY;
    }
    struct board_state st;
    memset(&st, 0, sizeof(st));
    util_copy(st.board, sizeof(st.board), q->board);
    st.page_size = s.page_size;
    st.ttl_ms = s.page_ttl_ms;
    st.gen = s.gen;
    state_put(pg, &st);
    q->size = requested_size ? requested_size : st.page_size;
    q->ttl_ms = st.ttl_ms;
    q->gen = st.gen;
    /* the guess held when it was made of this generation and size (the period and the rest of
     * the key are the request's): the key is the guess, not made again */
    int held = guess[0] && q->guess_gen == q->gen && q->guess_size == q->size;
    if (held)
        memcpy(q->key, guess, strlen(guess) + 1);
    else
        page_key(q->key, sizeof(q->key), pg->cfg.prefix, q->board, q->gen, q->period, q->size,
                 q->page, q->rank);
    if (!got || !held)
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
    q->tz = w->tz;
    guess[0] = '\0';
    struct board_state st;
    if (!pg->cfg.cache_apart && !page_cache_breaker_open(pg->cfg.cache) &&
        state_get(pg, q->board, &st) && st.ttl_ms > 0) {
        q->guess_gen = st.gen;
        q->guess_size = requested_size ? requested_size : st.page_size;
        page_key(guess, guess_len, pg->cfg.prefix, q->board, st.gen, w->period, q->guess_size,
                 q->page, q->rank);
    }
}

/* Where a request reads (its period from this process's hint) and the guessed page key; -EAGAIN
 * when the hint cannot place an asked-for period (read the settings first), or a period error. */
static int locate(struct pages *pg, struct page_req *q, int requested_size, struct board_where *w,
                  char *guess, size_t guess_len)
{
    /* its keys only for a live read or a fill (board_where_keys): a hit needs none */
    int rc = board_where_cached_place(pg->cfg.model, q->board, q->requested, w);
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
    if (!page_cache_l1_on(pg->cfg.cache) ||
        board_where_cached_place(pg->cfg.model, board, period, &w))
        return -EAGAIN; /* no tier, or the period needs a Redis read to place: not here */
    char key[KEY_MAX], *value = NULL;
    size_t len = 0, cap = 0;
    l1_key(board, w.period, page, size, rank, key, sizeof(key));
    if (!page_cache_l1_get(pg->cfg.cache, key, &value, &len, &cap))
        return -EAGAIN;
    struct page_cache_value e;
    if (min_version > 0 && (page_cache_value_parse(value, len, &e) || e.stamp < min_version)) {
        free(value); /* computed before the write asked for: from Redis, or computed */
        return -EAGAIN;
    }
    struct page_req q = {.board = board, .ttl_ms = INT32_MAX}; /* the copy's own expiry stands */
    int rc = reply_from_value(pg, &q, value, len, PAGE_HIT, if_none_match, out);
    if (rc == 0 && out->body)
        out->cap = cap; /* the body moved to the front of the same block */
    return rc;
}

/* ---------------------------------------------------------------- lookups on an event loop */

/* (struct hit, a lookup's state, and what it does: pages_int.h) */

/* Where h's page GETs go (the cache Redis' connection when the pages live there). */
struct store_async *page_reads(const struct hit *h)
{
    return h->pg->cfg.cache_apart ? h->job->cache_reads : h->reads;
}

/* 1 when a read that failed with rc may be sent once more (a lost connection, in time). */
int may_resend(int rc, int *resent, int64_t deadline_ms)
{
    if ((rc != -EIO && rc != -ECONNRESET) || *resent ||
        (deadline_ms && util_now_ms() >= deadline_ms))
        return 0;
    *resent = 1;
    return 1;
}

/* h is answered (rc 0: job->out holds the page) or failed: its job completes. */
void hit_end(struct hit *h, int rc)
{
    struct pages_job *j = h->job;
    free(h->wt.old);
    spare_give(h, sizeof(*h));
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

/* The periods moved under h (learnt): the lookup again, at most three times in all. 1 sent
 * (the job completes from there), else a negative errno. */
int hit_retry(struct hit *h)
{
    if (++h->attempts >= 3)
        return -EAGAIN; /* the period settings keep changing under us */
    free(h->wt.old);
    h->wt.old = NULL;
    h->resent = 0;
    int rc = hit_begin(h);
    return rc ? rc : 1;
}

/* ---------------------------------------------------------------- hits */

/* A cached value for h (got: the GET's reply, read-only): serve it, or compute. Returns as
 * hit_settle. */
static int hit_serve(struct hit *h, const struct store_reply *got)
{
    struct pages *pg = h->pg;
    struct pages_job *j = h->job;
    if (!got || got->type != STORE_REPLY_STRING)
        return miss_begin(h, 0, NULL, 0);
    char l1key[KEY_MAX];
    l1key[0] = '\0';
    size_t len = got->len;
    if (page_cache_l1_on(pg->cfg.cache)) /* the tier's key, only with a tier */
        l1_key(j->board, h->q.period, j->page, j->size, j->rank, l1key, sizeof(l1key));
    enum page_source source = PAGE_HIT;
    int refresh = 0;
    struct page_cache_value e;
    /* judged where it is (other hits may share the reply: read only), then copied: the whole
     * value as a fallback, or the body alone to serve */
    char *value;
    switch (page_cache_judge(pg->cfg.cache, h->q.key, h->q.gen, j->min_version, h->q.ttl_ms,
                             got->str, len, l1key, &source, &refresh, &e)) {
    case PAGE_CACHE_TOO_OLD: /* compute it now; the copy is the fallback should that fail */
        if (!(value = malloc(len + 1)))
            return -ENOMEM;
        memcpy(value, got->str, len + 1);
        return miss_begin(h, e.created_ms, value, len);
    case PAGE_CACHE_UNUSABLE: /* another generation's page, caching turned off, or a page
                               * computed before the write counter asked for (min_version) */
        return miss_begin(h, 0, NULL, 0);
    case PAGE_CACHE_SERVE:
        break;
    }
    /* a page that fits one goes out in a block kept per thread (spare.h): glibc serves 4 KiB
     * outside its per-thread cache */
    size_t cap = e.len + 1 <= SPARE_BODY_BYTES ? SPARE_BODY_BYTES : 0;
    if (!(value = cap ? spare_take(cap) : malloc(e.len + 1)))
        return -ENOMEM;
    memcpy(value, e.data, e.len + 1);
    e.data = value; /* the body alone: reply_from_entry leaves it where it is */
    if (refresh)
        refresh_on_loop(h, e.created_ms);
    int rc = reply_from_entry(pg, &h->q, value, &e, source, j->if_none_match, &j->out);
    if (j->out.body)
        j->out.cap = cap;
    return rc;
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
    int st = page_settle(pg, &h->q, j->size, &h->w, h->guess, set, got);
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
    } else if (!rc && h->guess[0]) { /* page_get.lua: {settings, the guessed key's value} */
        const struct store_reply *r = replies[0];
        rc = r->type == STORE_REPLY_ARRAY && r->elements == 2
                 ? hit_settle(h, r->element[0], r->element[1])
             : r->type == STORE_REPLY_ERROR ? store_reply_errno(r)
                                            : -EIO;
    } else if (!rc) {
        rc = hit_settle(h, replies[0], NULL);
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
    char *body = rc == 0 ? pg->cfg.render(j->board, j->page, p) : NULL;
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
        out->with_done = j->nwith > 0;
        out->not_modified = j->if_none_match && pages_etag_matches(j->if_none_match, out->etag);
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
    struct board_read_args ra = {.kind = BOARD_READ_PAGE,
                                 .rank = j->rank,
                                 .page = j->page,
                                 .size = j->size,
                                 .with = j->with,
                                 .with_lens = j->with_lens,
                                 .nwith = j->nwith};
    board_where_keys(h->pg->cfg.model, j->board, &h->w); /* placed without them (locate) */
    board_read_prepare(h->pg->cfg.model, j->board, &h->w, &ra, &rd);
    int rc = store_async_script_flags(h->reads, rd.script,
                                      store_read_flags(j->min_version, h->primary), rd.nkeys,
                                      rd.nargs, rd.argv, rd.lens, j->deadline_ms, live_done, h);
    return rc < 0 ? rc : 0;
}

/* page.lua for h (the board caches no pages; h->q.gen is its generation, for the ETag); 0 sent,
 * or a negative errno. */
int live_submit(struct hit *h)
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
    int rc;
    if (h->guess[0]) { /* page_get.lua: HMGET and GET in one command */
        const char *argv[SETTINGS_ARGC] = {h->meta, h->guess};
        memcpy(argv + 2, settings_fields, sizeof(settings_fields));
        rc = store_async_script_shared(h->reads, pg->page_get, 2, SETTINGS_ARGC - 2, argv,
                                       j->deadline_ms, hit_done, h);
    } else {
        const char *hm[SETTINGS_ARGC];
        settings_argv(hm, h->meta);
        const char *const *argv[] = {hm};
        const int argc[] = {SETTINGS_ARGC};
        rc = store_async_send_shared(h->reads, 1, argc, argv, j->deadline_ms, hit_done, h);
    }
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
    /* zeroed up to its three key buffers (3 x KEY_MAX), which only need to start empty; kept
     * for the next lookup of this event thread when done (spare.h: 2 KiB is past glibc's
     * per-thread cache) */
    struct hit *h = spare_take(sizeof(*h));
    if (!h)
        return -ENOMEM;
    memset(h, 0, offsetof(struct hit, meta));
    h->meta[0] = h->guess[0] = h->l1key[0] = '\0';
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
        spare_give(h, sizeof(*h));
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
    pg->page_get = store_script_register(page_get_body);
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
