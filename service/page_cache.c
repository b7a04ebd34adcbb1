/* page_cache.c -- page cache with stampede protection; the design is in page_cache.h. */
#include "page_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "freshness.h"
#include "log.h"
#include "metrics.h"
#include "records.h"
#include "render.h"
#include "util.h"

#define KEY_MAX 256
#define VALUE_MAGIC "rankd2" /* rankd1 held the computation time in ms */
#define POLL_MIN_MS 5        /* waiters re-read the cache every 5..10 ms */
#define POLL_JITTER_MS 5
/* The soft TTL is 80-90% of page_ttl_ms: jittered by 10% so that pages made together expire
 * apart, and ending at least a tenth early so that a busy page's stale copy, served while one
 * refresh runs, stays within the freshness contract (page_ttl_ms plus one computation) even when
 * requests arrive a little apart. */
#define SOFT_EARLY_PCT 10
#define SOFT_JITTER_PCT 10
#define L1_BUCKETS 1024

/* The cache's scripts (the Makefile's build/gen/lua/NAME.lua.h), registered once per process by
 * page_cache_new: the store knows them by handle only. */
static const char *const lock_release_body =
#include "lua/lock_release.lua.h"
    ;
static const char *const page_fill_body =
#include "lua/page_fill.lua.h"
    ;
static const struct store_script *script_lock_release, *script_page_fill;
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void scripts_init(void)
{
    script_lock_release = store_script_register(lock_release_body);
    script_page_fill = store_script_register(page_fill_body);
    /* its rows are page.lua's: on a cluster their records are fetched after it (records.h) */
    store_async_script_then(script_page_fill, records_then_page);
}

/* ---------------------------------------------------------------- state */

struct fill;

/* One page body in the in-process tier. */
struct l1_entry {
    char key[KEY_MAX];
    char *value; /* formatted cache value, owned */
    size_t len;
    int64_t expires_ms;     /* monotonic */
    struct l1_entry *next;  /* bucket chain */
    struct l1_entry *newer; /* insertion order, for eviction */
};

/* A guess at a board's page state (see lookup). */
struct board_state {
    char board[BOARD_NAME_LEN_MAX + 1];
    int page_size;
    int ttl_ms;
    int64_t gen;
};

struct page_cache {
    struct page_cache_config cfg;
    pthread_mutex_t state_lock;
    struct board_state *states; /* STATE_SLOTS */
    int same_store;
    pthread_mutex_t lock; /* fills */
    pthread_mutex_t l1_lock;
    struct l1_entry *l1[L1_BUCKETS];
    struct l1_entry *l1_oldest, *l1_newest;
    size_t l1_bytes;
    atomic_int breaker_errors;
    _Atomic int64_t breaker_until_ms;
    struct fill *fills; /* misses being computed on event loops; under lock */
    int refresh_fills;  /* background refreshes among them; under lock */
    atomic_ulong hits, misses, stale, l1_hits, lock_waits, lock_wait_timeouts, uncached,
        early_refreshes, refreshes, errors, batched_hits, batches, shared_lookups, misses_on_loop;
    _Atomic uint64_t seed;
};

/* A parsed cache value. */
struct entry {
    int64_t gen, created_ms, soft_ms, delta_us;
    char etag[48];
    const char *body;
    size_t len;
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
    int ttl_ms;
    int64_t gen;
    int64_t older_than_ms; /* a cached page made at or before this is too old to take (0: any) */
    char key[KEY_MAX];
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* xorshift64*: jitter and tokens; never used for anything secret. */
static uint64_t next_rand(struct page_cache *pc)
{
    uint64_t x = atomic_load(&pc->seed), y;
    do {
        y = x ^ (x >> 12);
        y ^= y << 25;
        y ^= y >> 27;
    } while (!atomic_compare_exchange_weak(&pc->seed, &x, y));
    return y * UINT64_C(2685821657736338717);
}

static double rand_unit(struct page_cache *pc)
{
    return ((double)(next_rand(pc) >> 11) + 1.0) / 9007199254740993.0; /* (0, 1) */
}

/* ---------------------------------------------------------------- values */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h;
}

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

static char *value_format(int64_t gen, int64_t created, int64_t soft, int64_t delta,
                          const char *body, size_t len, size_t *out_len)
{
    char head[160], etag[48];
    page_etag(gen, body, len, etag);
    int n = snprintf(head, sizeof(head),
                     VALUE_MAGIC " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %s\n", gen,
                     created, soft, delta, etag);
    char *v = malloc((size_t)n + len + 1);
    if (!v)
        return NULL;
    memcpy(v, head, (size_t)n);
    memcpy(v + n, body, len);
    v[(size_t)n + len] = '\0';
    *out_len = (size_t)n + len;
    return v;
}

/* Parse a value; 0 or -EINVAL for anything rankd did not write (then it is a miss). */
static int value_parse(const char *v, size_t len, struct entry *e)
{
    if (!v)
        return -EINVAL;
    const char *nl = memchr(v, '\n', len);
    if (!nl || strncmp(v, VALUE_MAGIC " ", sizeof(VALUE_MAGIC)) != 0)
        return -EINVAL;
    char head[160];
    size_t hl = (size_t)(nl - v);
    if (hl >= sizeof(head))
        return -EINVAL;
    memcpy(head, v, hl);
    head[hl] = '\0';
    /* five fields after the magic: four integers and the ETag */
    int64_t *nums[] = {&e->gen, &e->created_ms, &e->soft_ms, &e->delta_us};
    char *p = head + sizeof(VALUE_MAGIC);
    for (size_t i = 0; i < 4; i++) {
        char *end = NULL;
        errno = 0;
        *nums[i] = strtoll(p, &end, 10);
        if (errno || end == p || *end != ' ')
            return -EINVAL;
        p = end + 1;
    }
    size_t el = strlen(p);
    if (el == 0 || el >= sizeof(e->etag) || strchr(p, ' '))
        return -EINVAL;
    memcpy(e->etag, p, el + 1);
    e->body = nl + 1;
    e->len = len - hl - 1;
    return 0;
}

/* ---------------------------------------------------------------- breaker */

static int breaker_open(struct page_cache *pc)
{
    return util_now_ms() < atomic_load(&pc->breaker_until_ms);
}

static void breaker_result(struct page_cache *pc, int failed)
{
    if (!failed) {
        atomic_store(&pc->breaker_errors, 0);
        return;
    }
    atomic_fetch_add(&pc->errors, 1);
    if (atomic_fetch_add(&pc->breaker_errors, 1) + 1 >= PAGE_CACHE_BREAKER_ERRORS) {
        atomic_store(&pc->breaker_until_ms, util_now_ms() + PAGE_CACHE_BREAKER_MS);
        atomic_store(&pc->breaker_errors, 0);
        log_warn("page cache: %d Redis errors in a row; skipping the cache for %d ms",
                 PAGE_CACHE_BREAKER_ERRORS, PAGE_CACHE_BREAKER_MS);
    }
}

/* ---------------------------------------------------------------- computing a page */

/* The cache value of a page computed now in delta_us: soft expiry 80-90% of the TTL (jittered),
 * never past the end of the current period for a current-period page. NULL on ENOMEM. */
static char *make_value(struct page_cache *pc, const struct page_req *q, const char *body,
                        int64_t delta_us, size_t *len)
{
    metrics_page_compute(delta_us);
    int64_t now = wall_ms();
    int64_t jitter = q->ttl_ms * SOFT_JITTER_PCT / 100;
    int64_t soft = now + q->ttl_ms - q->ttl_ms * SOFT_EARLY_PCT / 100 -
                   (jitter ? (int64_t)(next_rand(pc) % (uint64_t)jitter) : 0);
    if (q->kind != PERIOD_NONE && !(q->requested && q->requested[0])) {
        /* the current period's page is fresh no longer than the period itself */
        int64_t end = period_start(q->kind, q->tz_min, now, 1);
        if (soft > end)
            soft = end;
    }
    return value_format(q->gen, now, soft, delta_us, body, strlen(body), len);
}

/* ---------------------------------------------------------------- background refresh */

/* ---------------------------------------------------------------- in-process tier */

static size_t l1_bucket(const char *key)
{
    return (size_t)(fnv1a(key, strlen(key)) % L1_BUCKETS);
}

static void l1_unlink(struct page_cache *pc, struct l1_entry *e)
{
    struct l1_entry **p = &pc->l1[l1_bucket(e->key)];
    while (*p && *p != e)
        p = &(*p)->next;
    if (*p)
        *p = e->next;
    if (pc->l1_oldest == e)
        pc->l1_oldest = e->newer;
    else
        for (struct l1_entry *o = pc->l1_oldest; o; o = o->newer)
            if (o->newer == e) {
                o->newer = e->newer;
                if (pc->l1_newest == e)
                    pc->l1_newest = o;
                break;
            }
    if (pc->l1_newest == e)
        pc->l1_newest = NULL;
    pc->l1_bytes -= e->len;
    free(e->value);
    free(e);
}

static int l1_get(struct page_cache *pc, const char *key, char **value, size_t *len)
{
    int found = 0;
    pthread_mutex_lock(&pc->l1_lock);
    for (struct l1_entry *e = pc->l1[l1_bucket(key)]; e; e = e->next) {
        if (strcmp(e->key, key) != 0)
            continue;
        if (util_now_ms() >= e->expires_ms) {
            l1_unlink(pc, e);
            break;
        }
        *value = malloc(e->len + 1);
        if (*value) {
            memcpy(*value, e->value, e->len + 1);
            *len = e->len;
            found = 1;
        }
        break;
    }
    pthread_mutex_unlock(&pc->l1_lock);
    return found;
}

static void l1_put(struct page_cache *pc, const char *key, const char *value, size_t len,
                   int64_t soft_ms)
{
    if (!value)
        return;
    int64_t ttl = soft_ms - wall_ms();
    if (ttl > pc->cfg.l1_ttl_ms)
        ttl = pc->cfg.l1_ttl_ms;
    if (ttl <= 0 || len > pc->cfg.l1_max_bytes)
        return;
    struct l1_entry *e = calloc(1, sizeof(*e));
    char *copy = malloc(len + 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        return;
    }
    memcpy(copy, value, len + 1);
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->value = copy;
    e->len = len;
    e->expires_ms = util_now_ms() + ttl;
    pthread_mutex_lock(&pc->l1_lock);
    for (struct l1_entry *o = pc->l1[l1_bucket(key)]; o; o = o->next)
        if (strcmp(o->key, key) == 0) {
            l1_unlink(pc, o);
            break;
        }
    while (pc->l1_oldest && pc->l1_bytes + len > pc->cfg.l1_max_bytes)
        l1_unlink(pc, pc->l1_oldest);
    size_t b = l1_bucket(key);
    e->next = pc->l1[b];
    pc->l1[b] = e;
    if (pc->l1_newest)
        pc->l1_newest->newer = e;
    else
        pc->l1_oldest = e;
    pc->l1_newest = e;
    pc->l1_bytes += len;
    pthread_mutex_unlock(&pc->l1_lock);
}

/* ---------------------------------------------------------------- lookup */

/*
 * A board's page state as this process last saw it (default page size, TTL, generation), only
 * to guess the page key so that a hit is ONE round trip of plain commands: HMGET of the settings
 * and GET of the guessed key, pipelined. The settings reply always decides: a wrong guess just
 * costs a second GET. A fixed table; a collision overwrites.
 */
#define STATE_SLOTS 512

static size_t state_slot(const char *board)
{
    return (size_t)(fnv1a(board, strlen(board)) % STATE_SLOTS);
}

static int state_get(struct page_cache *pc, const char *board, struct board_state *out)
{
    size_t i = state_slot(board);
    pthread_mutex_lock(&pc->state_lock);
    int hit = strcmp(pc->states[i].board, board) == 0;
    if (hit)
        *out = pc->states[i];
    pthread_mutex_unlock(&pc->state_lock);
    return hit;
}

static void state_put(struct page_cache *pc, const struct board_state *st)
{
    size_t i = state_slot(st->board);
    pthread_mutex_lock(&pc->state_lock);
    pc->states[i] = *st;
    pthread_mutex_unlock(&pc->state_lock);
}

/* <prefix>:{<board>}:page:<gen>:<period or ->:<size>:<page> (schema/redis-keys.md) */
static void page_key(char *out, size_t len, const char *prefix, const char *board, int64_t gen,
                     const char *period, int size, int64_t page)
{
    struct strb b;
    board_key_start(&b, out, len, prefix, board);
    strb_str(&b, ":page:");
    strb_i64(&b, gen);
    strb_str(&b, ":");
    strb_str(&b, period[0] ? period : "-");
    strb_str(&b, ":");
    strb_i64(&b, size);
    strb_str(&b, ":");
    strb_i64(&b, page);
}

/* <prefix>:{<board>}:meta, the settings hash */
static void meta_key(char *out, size_t len, const char *prefix, const char *board)
{
    struct strb b;
    board_key_start(&b, out, len, prefix, board);
    strb_str(&b, ":meta");
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
static int settle(struct page_cache *pc, struct page_req *q, int requested_size,
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
        board_where_note(pc->cfg.model, q->board, kind, f[4]->str, f[5]->str);
        return SETTLED_RETRY;
    }
    struct board_state st;
    memset(&st, 0, sizeof(st));
    util_copy(st.board, sizeof(st.board), q->board);
    st.page_size = reply_int(f[0], 20);
    if (st.page_size < 1 || st.page_size > BOARD_PAGE_SIZE_MAX)
        st.page_size = 20;
    st.ttl_ms = reply_int(f[1], 1000);
    st.gen = f[2]->type == STORE_REPLY_STRING ? strtoll(f[2]->str, NULL, 10) : 0;
    state_put(pc, &st);
    q->size = requested_size ? requested_size : st.page_size;
    q->ttl_ms = st.ttl_ms;
    q->gen = st.gen;
    page_key(q->key, sizeof(q->key), pc->cfg.prefix, q->board, q->gen, q->period, q->size, q->page);
    if (!got || strcmp(guess, q->key) != 0)
        return SETTLED_UNGUESSED;
    return got->type == STORE_REPLY_STRING ? SETTLED_FOUND : SETTLED_ABSENT;
}

/* Where a request reads (period resolved from this process's hint; with may_wait, from the
 * settings when the hint cannot place an asked-for period) and the guessed page key ("" when
 * there is no guess: board unseen, caching off, or pages in another Redis). Without may_wait
 * it never calls Redis (-EAGAIN instead). */
static void place(struct page_cache *pc, struct page_req *q, int requested_size,
                  const struct board_where *w, char *guess, size_t guess_len);

static int locate(struct page_cache *pc, struct page_req *q, int requested_size,
                  struct board_where *w, char *guess, size_t guess_len)
{
    int rc = board_where_cached(pc->cfg.model, q->board, q->requested, w);
    if (rc)
        return rc;
    place(pc, q, requested_size, w, guess, guess_len);
    return 0;
}

/* q's period from w, and the guessed page key (locate). */
static void place(struct page_cache *pc, struct page_req *q, int requested_size,
                  const struct board_where *w, char *guess, size_t guess_len)
{
    util_copy(q->period, sizeof(q->period), w->period);
    q->kind = w->kind;
    q->tz_min = w->tz_min;
    guess[0] = '\0';
    struct board_state st;
    if (pc->same_store && !breaker_open(pc) && state_get(pc, q->board, &st) && st.ttl_ms > 0) {
        page_key(guess, guess_len, pc->cfg.prefix, q->board, st.gen, w->period,
                 requested_size ? requested_size : st.page_size, q->page);
    }
}

/* ---------------------------------------------------------------- the read path */

/* A copy's soft expiry under the board's current page_ttl_ms (freshness.h). */
static int64_t soft_expiry(const struct entry *e, int ttl_ms)
{
    struct fresh_copy c = {e->created_ms, e->soft_ms, e->delta_us};
    return fresh_soft_expiry(&c, ttl_ms);
}

static int reply_from_value(struct page_cache *pc, const struct page_req *q, char *value,
                            size_t len, enum page_source source, const char *inm,
                            struct page_reply *out)
{
    struct entry e;
    if (value_parse(value, len, &e)) {
        free(value);
        return -EIO;
    }
    int64_t now = wall_ms();
    memset(out, 0, sizeof(*out));
    util_copy(out->etag, sizeof(out->etag), e.etag);
    out->source = source;
    out->cached = q->ttl_ms > 0;
    out->age_s = now > e.created_ms ? (now - e.created_ms) / 1000 : 0;
    int64_t soft = soft_expiry(&e, q->ttl_ms);
    out->max_age_s = soft > now ? (soft - now) / 1000 : 0;
    out->grace_s = pc->cfg.grace_ms / 1000;
    out->not_modified = inm && page_cache_etag_matches(inm, e.etag);
    out->len = e.len; /* a 304's Content-Length too */
    if (out->not_modified) {
        free(value);
        return 0;
    }
    memmove(value, e.body, e.len + 1); /* the body, in place: no copy of the page */
    out->body = value;
    out->len = e.len;
    return 0;
}

static void count(struct page_cache *pc, enum page_source s)
{
    atomic_fetch_add(s == PAGE_HIT ? &pc->hits : s == PAGE_STALE ? &pc->stale : &pc->misses, 1);
}

/* The in-process tier's key: the board, the period itself (never "current"), page, size. */
static void l1_key(const char *board, const char *resolved, int64_t page, int size, char *out,
                   size_t len)
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
}

int page_cache_get_l1(struct page_cache *pc, const char *board, const char *period, int64_t page,
                      int size, const char *if_none_match, struct page_reply *out)
{
    struct board_where w;
    if (pc->cfg.l1_ttl_ms <= 0 || board_where_cached(pc->cfg.model, board, period, &w))
        return -EAGAIN; /* no tier, or the period needs a Redis read to place: not here */
    char key[KEY_MAX], *value = NULL;
    size_t len = 0;
    l1_key(board, w.period, page, size, key, sizeof(key));
    if (!l1_get(pc, key, &value, &len))
        return -EAGAIN;
    atomic_fetch_add(&pc->l1_hits, 1);
    count(pc, PAGE_HIT);
    struct page_req q = {.board = board, .ttl_ms = INT32_MAX}; /* the copy's own expiry stands */
    return reply_from_value(pc, &q, value, len, PAGE_HIT, if_none_match, out);
}

/* What serve_cached decided. */
enum served {
    SERVED =
        1, /* *out is the cached page (fresh, stale while a refresh runs, or early-refreshed) */
    UNUSABLE = 0, /* not this generation's page, or unreadable: value freed; compute */
    TOO_OLD = 2,  /* older than page_ttl_ms plus one computation: compute now (or share the
                   * computation in flight); value kept for the caller to serve if it fails */
};

/* When a computation of key in flight in this process began (wall clock), or 0. */
static int64_t fill_started(struct page_cache *pc, const char *key);

static int64_t refresh_started(struct page_cache *pc, const char *key)
{
    pthread_mutex_lock(&pc->lock);
    int64_t began = fill_started(pc, key);
    pthread_mutex_unlock(&pc->lock);
    return began;
}

/*
 * A cached value of the current generation, on a board that still caches pages (page_ttl_ms
 * > 0 now). Fresh: served (XFetch may start an early refresh). Past its soft TTL (soft_expiry:
 * under the TTL in force now): served stale, with one background refresh, only while that keeps the
 * freshness contract: the page is at most page_ttl_ms plus one computation (its own delta) old,
 * or the refresh replacing it began before it got older than that (a busy page whose refresh runs
 * long). An older page (one nobody read for a while) is TOO_OLD: the request joins or starts the
 * computation (single-flight), and the copy is only the fallback if that fails.
 */
struct hit;
static void refresh_on_loop(struct hit *h, int64_t seen_created_ms);

static enum served serve_cached(struct page_cache *pc, const struct page_req *q, char *value,
                                size_t len, const char *l1key, const char *inm,
                                struct page_reply *out, int *rc, struct hit *h)
{
    struct entry e;
    if (q->ttl_ms <= 0 || value_parse(value, len, &e) || e.gen != q->gen) {
        free(value); /* caching turned off since, or not this generation's page */
        return UNUSABLE;
    }
    enum page_source source = PAGE_HIT;
    struct fresh_copy copy = {e.created_ms, e.soft_ms, e.delta_us};
    int64_t now = wall_ms(), soft = fresh_soft_expiry(&copy, q->ttl_ms);
    switch (fresh_decide(&copy, q->ttl_ms, now, refresh_started(pc, q->key), pc->cfg.beta,
                         pc->cfg.beta > 0 ? rand_unit(pc) : 0.5)) {
    case FRESH_TOO_OLD:
        return TOO_OLD; /* joins a computation in flight (single-flight) or starts one */
    case FRESH_STALE_REFRESH:
        source = PAGE_STALE;
        refresh_on_loop(h, e.created_ms);
        break;
    case FRESH_EARLY_REFRESH:
        atomic_fetch_add(&pc->early_refreshes, 1);
        refresh_on_loop(h, e.created_ms);
        break;
    case FRESH_SERVE:
        break;
    }
    if (pc->cfg.l1_ttl_ms > 0)
        l1_put(pc, l1key, value, len, soft);
    count(pc, source);
    *rc = reply_from_value(pc, q, value, len, source, inm, out);
    return SERVED;
}

/* A Redis fault (as opposed to an answer such as "no board"): the grace copy may stand in. */
static int is_fault(int rc)
{
    return rc == -ETIMEDOUT || rc == -ETIME || rc == -ECONNRESET || rc == -ECONNREFUSED ||
           rc == -EIO || rc == -EAGAIN || rc == -EBUSY;
}

/* ---------------------------------------------------------------- batched hits */

/*
 * Every page read on an event thread, without another thread: page_cache_submit guesses the page
 * key from what this process knows of the board, and appends HMGET (settings) + GET (guessed
 * key) to that thread's own non-blocking connection (store_async.h). Every lookup of one loop
 * iteration leaves in one write; the replies settle each request on the same thread: a hit (or
 * stale hit) is answered, a wrong guess reads the right key, a miss is computed (below), a live
 * board's page is one page.lua call, a period this process cannot place from memory is placed
 * from the settings (one HGETALL first), periods that moved under the request are learnt and the
 * lookup made again, and a read cut by a lost connection is sent once more. With the page cache
 * in a Redis of its own (--cache-redis) the settings come from the data Redis and the page GET,
 * SET and locks go to the loop's connections to the cache Redis.
 */
struct hit {
    struct page_cache *pc;
    struct page_cache_job *job;
    struct store_async *reads; /* the loop's read connection */
    int64_t t0_us;             /* a live page: when it was sent */
    struct hit *next_waiter;   /* in a fill */
    char *old;                 /* a miss: the copy too old to serve, the fallback if it fails */
    size_t old_len;
    int attempts;                 /* lookups begun again: the periods moved under the request */
    int resent;                   /* a read cut by a lost connection was sent once more */
    struct board_settings_job sj; /* a period the hint cannot place: the settings first */
    struct page_req q;
    struct board_where w;
    char meta[KEY_MAX], guess[KEY_MAX];
};

/* Where h's page GETs go (the cache Redis' connection when the pages live there). */
static struct store_async *page_reads(const struct hit *h)
{
    return h->pc->same_store ? h->reads : h->job->cache_reads;
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
    struct page_cache_job *j = h->job;
    free(h->old);
    free(h);
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* may free j */
}

/* The same for a page served from the cache's hit path (counted as a batched hit). */
static void hit_finish(struct hit *h, int rc)
{
    if (rc == 0)
        atomic_fetch_add(&h->pc->batched_hits, 1);
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
    free(h->old);
    h->old = NULL;
    h->resent = 0;
    int rc = hit_begin(h);
    return rc ? rc : 1;
}

/* ---------------------------------------------------------------- misses on an event loop */

/*
 * A miss found by the hit path is computed on the same event thread: one
 * page_fill.lua call on the loop's write connection (it takes a lock, so a write pause holds it
 * and never the reads behind it) answers the page another computation stored meanwhile, or takes
 * the page's stampede lock and returns its rows, or says the lock is held elsewhere. The rows are
 * rendered here, the reply goes out, and the page is stored (SET PX) and the lock released on the
 * write connection without the request waiting for it: a miss costs the request two round trips
 * after its lookup is known to miss. Misses of the same key on the same loop share one fill (the
 * loop's single-flight; across loops and processes the Redis lock decides). A lock held
 * elsewhere is waited for with timers that re-read the page every 5-10 ms for at most
 * max_wait_ms, then the page is computed without the lock (page.lua) and stored. A fill whose lock
 * call fails or times out, or that finds the breaker open, computes without the lock and stores
 * nothing (the cache is the part that failed). With the pages in a Redis of their own the lock is
 * SET NX PX there, the page read again there once it is held, computed with page.lua on the data
 * Redis, and stored and released there.
 *
 * A background refresh (a stale page served, or XFetch's early refresh) is a fill without
 * waiters: it takes the lock the same way, gives up when another computation holds it, and
 * stores the page it computed; nothing waits for it. It keeps copies of the request it came
 * from, which may end first.
 */
struct fill {
    struct page_cache *pc;
    char key[KEY_MAX];
    struct store_async *reads;       /* the loop's data read connection: page.lua */
    struct store_async *writes;      /* the loop's data write connection: page_fill.lua */
    struct store_async *page_reads;  /* GET of pages: reads, or the cache Redis' */
    struct store_async *page_writes; /* SET of pages and locks, lock release: writes, or the
                                      * cache Redis' */
    struct hit *waiters;             /* the first one started it; joined in order */
    struct hit **waiters_end;
    char token[40];
    int locked;              /* this fill holds the page's lock */
    int store;               /* store the computed page */
    int refresh;             /* a background refresh: no waiter, nothing waits */
    int resent;              /* a computation cut by a lost connection was sent once more */
    int64_t wait_until_ms;   /* waiting for another holder until then (monotonic) */
    int64_t t0_us;           /* the computation's start */
    int64_t started_ms;      /* wall clock, for the freshness decision (refresh_started) */
    struct board_page *rows; /* rows held while a test stall runs */
    struct fill *next;       /* in pc->fills */
    /* the request computed, copied: a refresh outlives the request it came from */
    char board[BOARD_NAME_LEN_MAX + 1], requested[PERIOD_ID_MAX];
    int64_t page;
    struct page_req q;
    struct board_where w;
    int64_t deadline_ms;
    int (*after)(void *ctx, int ms, void (*fn)(void *arg), void *arg); /* NULL: no waits */
    void *after_ctx;
};

/* Under pc->lock: when a fill of key began (wall clock), or 0. */
static int64_t fill_started(struct page_cache *pc, const char *key)
{
    for (const struct fill *f = pc->fills; f; f = f->next)
        if (strcmp(f->key, key) == 0)
            return f->started_ms;
    return 0;
}

static void fill_unlink(struct page_cache *pc, struct fill *f)
{
    pthread_mutex_lock(&pc->lock);
    for (struct fill **p = &pc->fills; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    if (f->refresh)
        pc->refresh_fills--;
    pthread_mutex_unlock(&pc->lock);
}

static void fill_link(struct page_cache *pc, struct fill *f)
{
    pthread_mutex_lock(&pc->lock);
    f->next = pc->fills;
    pc->fills = f;
    pthread_mutex_unlock(&pc->lock);
}

/* A new fill of h's page (its key, request and connections copied from h). NULL on ENOMEM. */
static struct fill *fill_new(struct hit *h)
{
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    struct fill *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->pc = pc;
    util_copy(f->key, sizeof(f->key), h->q.key);
    f->reads = h->reads;
    f->writes = j->writes;
    f->page_reads = pc->same_store ? h->reads : j->cache_reads;
    f->page_writes = pc->same_store ? j->writes : j->cache_writes;
    f->waiters_end = &f->waiters;
    f->t0_us = util_now_us();
    f->started_ms = wall_ms();
    util_copy(f->board, sizeof(f->board), j->board);
    util_copy(f->requested, sizeof(f->requested), j->period ? j->period : "");
    f->page = j->page;
    f->q = h->q;
    f->q.board = f->board;
    f->q.requested = f->requested[0] ? f->requested : NULL;
    f->w = h->w;
    f->deadline_ms = j->deadline_ms;
    f->after = j->after;
    f->after_ctx = j->after_ctx;
    snprintf(f->token, sizeof(f->token), "%016" PRIx64 "%016" PRIx64, next_rand(pc), next_rand(pc));
    return f;
}

/* Every waiter gets value (a copy each; may be NULL) as `served` (a miss: computed or waited for;
 * a hit: another computation had stored it when the fill looked), or rc; the fill is freed. A
 * waiter that holds a copy too old to serve gets it as a stale page when rc is a Redis fault
 * (the grace window); one whose board's periods moved (-EAGAIN) looks again. */
static void fill_served(struct fill *f, int rc, const char *value, size_t len,
                        enum page_source served)
{
    struct page_cache *pc = f->pc;
    fill_unlink(pc, f);
    struct hit *h = f->waiters;
    while (h) {
        struct hit *next = h->next_waiter;
        struct page_cache_job *j = h->job;
        int out = rc;
        char *copy = NULL;
        size_t n = len;
        enum page_source source = served;
        h->next_waiter = NULL;
        if (out == -EAGAIN && (out = hit_retry(h)) == 1) { /* looks again: not done yet */
            h = next;
            continue;
        }
        if (!out && value && (copy = malloc(len + 1))) {
            memcpy(copy, value, len);
            copy[len] = '\0';
        } else if (!out) {
            out = -ENOMEM;
        }
        if (out && h->old && is_fault(out)) { /* the grace copy, while the refresh fails */
            copy = h->old;
            n = h->old_len;
            h->old = NULL;
            source = PAGE_STALE;
            out = 0;
        }
        if (!out) {
            struct entry e;
            if (source != PAGE_STALE && pc->cfg.l1_ttl_ms > 0 && value_parse(copy, n, &e) == 0) {
                char l1key[KEY_MAX];
                l1_key(j->board, h->q.period, j->page, j->size, l1key, sizeof(l1key));
                l1_put(pc, l1key, copy, n, e.soft_ms);
            }
            count(pc, source);
            out = reply_from_value(pc, &h->q, copy, n, source, j->if_none_match, &j->out);
        }
        free(h->old);
        free(h);
        j->done(j, out == -ECONNRESET || out == -ECANCELED ? -EIO : out); /* may free j */
        h = next;
    }
    board_page_free(f->rows);
    free(f);
}

static void fill_finish(struct fill *f, int rc, const char *value, size_t len)
{
    fill_served(f, rc, value, len, PAGE_MISS);
}

static void ignore_reply(void *arg, int rc, struct store_reply **replies)
{
    struct page_cache *pc = arg;
    if (rc != -ECANCELED)
        breaker_result(pc, rc != 0 || replies[0]->type == STORE_REPLY_ERROR);
}

/* Store the page and release the lock, on the page write connection; nobody waits for either. */
static void fill_store(struct fill *f, const char *value, size_t len, int64_t soft_ms)
{
    struct page_cache *pc = f->pc;
    int64_t px = soft_ms - wall_ms() + pc->cfg.grace_ms;
    if (f->store && value && px > 0) {
        char pxs[24];
        snprintf(pxs, sizeof(pxs), "%" PRId64, px);
        const char *set[] = {"SET", f->key, value, "PX", pxs};
        const size_t lens[] = {3, strlen(f->key), len, 2, strlen(pxs)};
        const char *const *av[] = {set};
        const size_t *const lv[] = {lens};
        const int argc[] = {5};
        store_async_send(f->page_writes, 1, argc, av, lv, 0, ignore_reply, pc);
    }
    if (f->locked) {
        char lock[KEY_MAX + 8];
        snprintf(lock, sizeof(lock), "%s:lock", f->key);
        const char *argv[] = {lock, f->token};
        store_async_script(f->page_writes, script_lock_release, 1, 1, argv, NULL, 0, ignore_reply,
                           pc);
        f->locked = 0;
    }
    store_async_flush(f->page_writes); /* before the replies go out: a reader that sees the page
                                        * can find it stored and its lock gone */
}

/* The loop's connections are being freed (rankd stops): end without sending anything more. */
static void fill_cancelled(struct fill *f)
{
    f->locked = 0;
    fill_finish(f, -EIO, NULL, 0);
}

/* The rows are in (f->rows): render, reply to every waiter, store. */
static void fill_render(void *arg)
{
    struct fill *f = arg;
    char *body = render_page(f->board, f->page, f->rows);
    board_page_free(f->rows);
    f->rows = NULL;
    size_t len = 0;
    char *value = body ? make_value(f->pc, &f->q, body, util_now_us() - f->t0_us, &len) : NULL;
    free(body);
    struct entry e;
    if (value && value_parse(value, len, &e) == 0)
        fill_store(f, value, len, e.soft_ms);
    else
        fill_store(f, NULL, 0, 0); /* the lock, at least */
    if (f->refresh && value)
        atomic_fetch_add(&f->pc->refreshes, 1);
    fill_finish(f, value ? 0 : -ENOMEM, value, len);
    free(value);
}

/* A page.lua (or page_fill.lua) reply with the rows: taken; the test stall, if any, then
 * fill_render. */
static void fill_rows(struct fill *f, struct store_reply *r)
{
    struct page_cache *pc = f->pc;
    int rc = board_page_take(pc->cfg.model, f->board, r, f->page, &f->rows);
    if (rc) {
        fill_store(f, NULL, 0, 0);
        fill_finish(f, rc, NULL, 0);
        return;
    }
    int ms = pc->cfg.delay ? pc->cfg.delay(f->board, f->page, f->q.size) : 0;
    if (ms > 0 && f->after(f->after_ctx, ms, fill_render, f) == 0)
        return; /* stalled on a timer, never on the thread */
    fill_render(f);
}

static int fill_compute_send(struct fill *f);

static void compute_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill *f = arg;
    if (rc == -ECANCELED) {
        fill_cancelled(f);
        return;
    }
    if (rc && may_resend(rc, &f->resent, f->deadline_ms) && fill_compute_send(f) == 0)
        return; /* a read cut by a lost connection: once more */
    if (rc) {   /* unanswered in time, or lost twice: 503 (the lock, if any, is released) */
        fill_store(f, NULL, 0, 0);
        fill_finish(f, rc == -ETIMEDOUT ? rc : -EIO, NULL, 0);
        return;
    }
    struct store_reply *r = replies[0];
    replies[0] = NULL; /* taken */
    fill_rows(f, r);
}

static int fill_compute_send(struct fill *f)
{
    struct board_read rd;
    board_read_prepare(f->pc->cfg.model, f->board, &f->w, BOARD_READ_PAGE, NULL, 0, f->page,
                       f->q.size, &rd);
    int rc = store_async_script(f->reads, rd.script, rd.nkeys, rd.nargs, rd.argv, rd.lens,
                                f->deadline_ms, compute_reply, f);
    return rc < 0 ? rc : 0;
}

/* Compute with page.lua on the read connection (store: keep the page afterwards, under the lock
 * or without one). A background refresh without the lock has nothing to do: it ends. */
static void fill_compute(struct fill *f, int store)
{
    struct page_cache *pc = f->pc;
    if (f->refresh && !f->locked) {
        fill_finish(f, -EBUSY, NULL, 0);
        return;
    }
    f->store = store;
    f->t0_us = util_now_us();
    atomic_fetch_add(&pc->uncached, !store);
    int rc = fill_compute_send(f);
    if (rc < 0) {
        fill_store(f, NULL, 0, 0);
        fill_finish(f, rc == -ETIMEDOUT ? rc : -EIO, NULL, 0);
    }
}

static void fill_poll(void *arg);

/* How long a miss may wait for another computation: max_ms, but never so long that computing
 * it after the wait would not fit in the request's time (a third of what is left is kept). */
static int64_t wait_limit(const struct fill *f, int64_t max_ms)
{
    int64_t now = util_now_ms(), until = now + max_ms;
    if (f->deadline_ms) {
        int64_t keep = (f->deadline_ms - now) / 3, latest = f->deadline_ms - keep;
        if (latest < until)
            until = latest;
    }
    return until;
}

/* Wait for another holder of the lock (a timer, then fill_poll); a refresh never waits. */
static void fill_wait(struct fill *f)
{
    struct page_cache *pc = f->pc;
    if (f->refresh ||
        f->after(f->after_ctx, POLL_MIN_MS + (int)(next_rand(pc) % (POLL_JITTER_MS + 1)), fill_poll,
                 f) != 0)
        fill_compute(f, 1);
}

/* The cache held a copy for f: 1 when it is this generation's and new enough to take. */
static int fill_fresh(const struct fill *f, const struct store_reply *r)
{
    struct entry e;
    return r && r->type == STORE_REPLY_STRING && value_parse(r->str, r->len, &e) == 0 &&
           e.gen == f->q.gen && e.created_ms > f->q.older_than_ms;
}

static void poll_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill *f = arg;
    if (rc == -ECANCELED) {
        fill_cancelled(f);
        return;
    }
    const struct store_reply *r = rc ? NULL : replies[0];
    if (!f->pc->same_store)
        breaker_result(f->pc, rc != 0 || r->type == STORE_REPLY_ERROR);
    if (fill_fresh(f, r)) {
        fill_finish(f, 0, r->str, r->len); /* the holder stored it */
        return;
    }
    if (!rc && util_now_ms() < f->wait_until_ms) {
        fill_wait(f);
        return;
    }
    if (!rc)
        atomic_fetch_add(&f->pc->lock_wait_timeouts, 1);
    fill_compute(f, 1); /* waited long enough (or the read failed): compute without the lock */
}

static void fill_poll(void *arg)
{
    struct fill *f = arg;
    const char *get[] = {"GET", f->key};
    const char *const *argv[] = {get};
    const int argc[] = {2};
    if (store_async_send_shared(f->page_reads, 1, argc, argv, f->deadline_ms, poll_reply, f) < 0)
        fill_compute(f, 1);
}

static void fill_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill *f = arg;
    struct page_cache *pc = f->pc;
    if (rc == -ECANCELED) {
        fill_cancelled(f);
        return;
    }
    struct store_reply *r = rc ? NULL : replies[0];
    if (!r || r->type == STORE_REPLY_ERROR) { /* the lock call failed (OOM, a write pause) */
        if (r)
            store_note_fault(pc->cfg.cache, "page_fill", r->str);
        breaker_result(pc, 1);
        fill_compute(f, 0);
        return;
    }
    breaker_result(pc, 0);
    if (r->type != STORE_REPLY_ARRAY) { /* nil: no such board */
        fill_finish(f, -ENOENT, NULL, 0);
        return;
    }
    const struct store_reply *tag = r->elements ? r->element[0] : NULL;
    if (tag && tag->type == STORE_REPLY_STRING) {
        if (strcmp(tag->str, "cached") == 0 && r->elements == 2) {
            /* stored by another computation since the lookup: a hit, as a second lookup
             * would have found it */
            fill_served(f, 0, r->element[1]->str, r->element[1]->len, PAGE_HIT);
        } else if (strcmp(tag->str, "locked") == 0) {
            atomic_fetch_add(&pc->lock_waits, !f->refresh);
            f->wait_until_ms = wait_limit(f, pc->cfg.max_wait_ms);
            fill_wait(f);
        } else { /* 'retry' (learnt) or 'gen': the settings moved: the waiters look again */
            board_where_learn(pc->cfg.model, f->board, r);
            fill_finish(f, -EAGAIN, NULL, 0);
        }
        return;
    }
    f->locked = 1;
    f->store = 1;
    replies[0] = NULL; /* taken */
    fill_rows(f, r);
}

/* The pages in a Redis of their own: the page read again once the lock is held. */
static void recheck_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill *f = arg;
    if (rc == -ECANCELED) {
        fill_cancelled(f);
        return;
    }
    breaker_result(f->pc, rc != 0 || replies[0]->type == STORE_REPLY_ERROR);
    if (!rc && fill_fresh(f, replies[0])) { /* a holder stored it just before the lock */
        fill_store(f, NULL, 0, 0);          /* releases the lock */
        fill_served(f, 0, replies[0]->str, replies[0]->len, PAGE_MISS);
        return;
    }
    fill_compute(f, 1);
}

/* The pages in a Redis of their own: SET key:lock token NX PX ttl there. */
static void lock_reply(void *arg, int rc, struct store_reply **replies)
{
    struct fill *f = arg;
    struct page_cache *pc = f->pc;
    if (rc == -ECANCELED) {
        fill_cancelled(f);
        return;
    }
    const struct store_reply *r = rc ? NULL : replies[0];
    breaker_result(pc, !r || r->type == STORE_REPLY_ERROR);
    if (!r || r->type == STORE_REPLY_ERROR) {
        fill_compute(f, 0); /* the cache failed: compute, store nothing */
        return;
    }
    if (r->type != STORE_REPLY_STATUS) { /* held by someone else */
        atomic_fetch_add(&pc->lock_waits, !f->refresh);
        f->wait_until_ms = wait_limit(f, pc->cfg.max_wait_ms);
        fill_wait(f);
        return;
    }
    f->locked = 1;
    const char *get[] = {"GET", f->key};
    const char *const *argv[] = {get};
    const int argc[] = {2};
    if (store_async_send(f->page_reads, 1, argc, argv, NULL, f->deadline_ms, recheck_reply, f) < 0)
        fill_compute(f, 1);
}

/* Start computing f's page: take the lock (page_fill.lua on the data Redis, or SET NX PX on the
 * cache Redis), or compute without it when the breaker is open. f is linked in pc->fills. */
static void fill_start(struct fill *f)
{
    struct page_cache *pc = f->pc;
    if (breaker_open(pc)) {
        fill_compute(f, 0);
        return;
    }
    int64_t now = util_now_ms(), left = f->deadline_ms ? f->deadline_ms - now : 1000;
    /* half the request's time at most: a write pause holding the lock call must leave time to
     * compute without it */
    int64_t deadline = now + (left > 100 ? left / 2 : 50);
    int rc;
    char lock[KEY_MAX + 8], ttl[16];
    snprintf(lock, sizeof(lock), "%s:lock", f->key);
    snprintf(ttl, sizeof(ttl), "%d", pc->cfg.lock_ttl_ms);
    if (pc->same_store) {
        char page_s[24], size_s[16], tz[16], gen[24], older[24];
        snprintf(page_s, sizeof(page_s), "%" PRId64, f->page);
        snprintf(size_s, sizeof(size_s), "%d", f->q.size);
        snprintf(tz, sizeof(tz), "%d", f->q.tz_min);
        snprintf(gen, sizeof(gen), "%" PRId64, f->q.gen);
        snprintf(older, sizeof(older), "%" PRId64, f->q.older_than_ms);
        struct board_read rd; /* its keys: settings, set, records */
        board_read_prepare(pc->cfg.model, f->board, &f->w, BOARD_READ_PAGE, NULL, 0, f->page,
                           f->q.size, &rd);
        /* lua/prelude_read.lua's layout (keys, the assumed period kind, offset, retain), then
         * the fill's */
        const char *argv[] = {
            rd.meta, rd.z,      rd.items, f->key, lock, period_kind_name(f->q.kind),
            tz,      rd.retain, page_s,   size_s, gen,  f->token,
            ttl,     older};
        rc = store_async_script(f->writes, script_page_fill, 5, 9, argv, NULL, deadline, fill_reply,
                                f);
    } else {
        const char *set[] = {"SET", lock, f->token, "NX", "PX", ttl};
        const char *const *av[] = {set};
        const int argc[] = {6};
        rc = store_async_send(f->page_writes, 1, argc, av, NULL, deadline, lock_reply, f);
    }
    if (rc < 0) { /* the write connection is held (a write pause) or down: reads may not be */
        breaker_result(pc, 1);
        fill_compute(f, 0);
    }
}

/*
 * Compute h's page on its loop (h->q is complete: key, generation, TTL > 0, period). Returns 1
 * when h belongs to a fill now (its job completes from there), or a negative errno (nothing
 * sent, h still the caller's). `old` (may be NULL) is a copy too old to serve, kept as the
 * fallback if the computation fails; it is owned by h from here on.
 */
static int miss_begin(struct hit *h, int64_t older_than_ms, char *old, size_t old_len)
{
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    h->q.older_than_ms = older_than_ms;
    free(h->old);
    h->old = old;
    h->old_len = old_len;
    if (h->q.ttl_ms <= 0) { /* caching turned off: always current, never a cached copy */
        free(h->old);
        h->old = NULL;
        int rc = live_submit(h);
        return rc ? rc : 1;
    }
    if (!j->writes || !j->after || (!pc->same_store && (!j->cache_reads || !j->cache_writes)))
        return -ECONNREFUSED;
    pthread_mutex_lock(&pc->lock);
    struct fill *f = pc->fills, *elsewhere = NULL;
    for (; f && !(f->reads == h->reads && !f->refresh && strcmp(f->key, h->q.key) == 0);
         f = f->next)
        if (!elsewhere && strcmp(f->key, h->q.key) == 0)
            elsewhere = f;
    if (f) { /* this loop computes the page already: join it */
        *f->waiters_end = h;
        f->waiters_end = &h->next_waiter;
        pthread_mutex_unlock(&pc->lock);
        return 1;
    }
    pthread_mutex_unlock(&pc->lock);
    if (!(f = fill_new(h)))
        return -ENOMEM;
    f->waiters = h;
    f->waiters_end = &h->next_waiter;
    if (elsewhere) {
        /* another event thread of this process computes it (or refreshes it): wait for its
         * copy (the process's single-flight across loops), longer than for a holder elsewhere,
         * within the request */
        int64_t left = j->deadline_ms ? j->deadline_ms - util_now_ms() : 1000;
        f->wait_until_ms = wait_limit(f, left > 100 ? left / 2 : 50);
        if (f->after(f->after_ctx, POLL_MIN_MS, fill_poll, f) != 0) {
            free(f);
            return -ENOMEM;
        }
        atomic_fetch_add(&pc->lock_waits, 1);
        fill_link(pc, f);
        return 1;
    }
    atomic_fetch_add(&pc->misses_on_loop, 1);
    fill_link(pc, f);
    fill_start(f);
    return 1;
}

/* A stale or early-refreshed page served from h's lookup: refresh it in the background, on h's
 * loop, unless a computation of it is in flight in this process or refresh_max run already. */
static void refresh_on_loop(struct hit *h, int64_t seen_created_ms)
{
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    if (!j->writes || !j->after || (!pc->same_store && (!j->cache_reads || !j->cache_writes)))
        return;
    pthread_mutex_lock(&pc->lock);
    int busy = fill_started(pc, h->q.key) || pc->refresh_fills >= pc->cfg.refresh_max;
    if (!busy)
        pc->refresh_fills++;
    pthread_mutex_unlock(&pc->lock);
    if (busy)
        return;
    struct fill *f = fill_new(h);
    if (!f) {
        pthread_mutex_lock(&pc->lock);
        pc->refresh_fills--;
        pthread_mutex_unlock(&pc->lock);
        return;
    }
    f->refresh = 1;
    f->after_ctx = NULL; /* the request may end first: timers of the loop itself (a test stall) */
    /* a newer copy than the one served (another refresh finished meanwhile) makes it moot */
    f->q.older_than_ms = seen_created_ms;
    fill_link(pc, f);
    fill_start(f);
}

/* A cached value for h (got: the GET's reply, read-only): serve it, or compute. Returns as
 * hit_settle. */
static int hit_serve(struct hit *h, const struct store_reply *got)
{
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    if (got->type != STORE_REPLY_STRING)
        return miss_begin(h, 0, NULL, 0);
    char l1key[KEY_MAX] = "";
    size_t len = got->len;
    char *value = malloc(len + 1); /* a copy: other hits may share the reply */
    if (!value)
        return -ENOMEM;
    memcpy(value, got->str, len + 1);
    if (pc->cfg.l1_ttl_ms > 0) /* the tier's key, only with a tier */
        l1_key(j->board, h->q.period, j->page, j->size, l1key, sizeof(l1key));
    int rc = 0;
    enum served sv = serve_cached(pc, &h->q, value, len, l1key, j->if_none_match, &j->out, &rc, h);
    if (sv == TOO_OLD) { /* compute it now; the copy is the fallback should that fail */
        struct entry e;
        if (value_parse(value, len, &e) == 0)
            return miss_begin(h, e.created_ms, value, len);
        free(value);
        return -EIO;
    }
    if (sv == UNUSABLE) /* another generation's page, or caching turned off */
        return miss_begin(h, 0, NULL, 0);
    return rc;
}

static void hit_done(void *arg, int rc, struct store_reply **replies);

/* The page key was not guessed (a board this process had not seen, or its state moved, or the
 * pages live in the cache Redis): its GET now. */
static void hit_got(void *arg, int rc, struct store_reply **replies)
{
    struct hit *h = arg;
    if (!h->pc->same_store) { /* the cache Redis: its faults open the breaker, then compute */
        breaker_result(h->pc, rc != 0 || replies[0]->type == STORE_REPLY_ERROR);
        rc = rc || replies[0]->type == STORE_REPLY_ERROR ? miss_begin(h, 0, NULL, 0)
                                                         : hit_serve(h, replies[0]);
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
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    int st = settle(pc, &h->q, j->size, &h->w, h->guess, set, got);
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
    if (breaker_open(pc))
        return miss_begin(h, 0, NULL, 0); /* the cache is skipped for now */
    const char *get[] = {"GET", h->q.key};
    const char *const *argv[] = {get};
    const int argc[] = {2};
    struct store_async *conn = page_reads(h);
    int rc = conn ? store_async_send_shared(conn, 1, argc, argv, j->deadline_ms, hit_got, h)
                  : -ECONNREFUSED;
    if (rc >= 0)
        return 1;
    if (pc->same_store)
        return rc;
    breaker_result(pc, 1); /* the cache Redis cannot be reached: compute */
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

static int live_send(struct hit *h);

/* A live page (the board caches no pages) on the event thread: page.lua on its connection, the
 * reply rendered here; a board that caches pages again, or whose periods moved, is looked up
 * again. */
static void live_done(void *arg, int rc, struct store_reply **replies)
{
    struct hit *h = arg;
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    struct board_page *p = NULL;
    if (rc && may_resend(rc, &h->resent, j->deadline_ms) && live_send(h) == 0)
        return; /* a read cut by a lost connection: once more */
    if (rc == 0) {
        struct store_reply *r = replies[0];
        replies[0] = NULL; /* taken */
        rc = board_page_take(pc->cfg.model, j->board, r, j->page, &p);
    }
    if (rc == 0) {
        struct board_state st = {.page_size = p->settings.page_size,
                                 .ttl_ms = p->settings.page_ttl_ms,
                                 .gen = p->settings.gen};
        util_copy(st.board, sizeof(st.board), j->board);
        state_put(pc, &st);
        if (st.ttl_ms > 0)
            rc = -EAGAIN; /* caching was turned on: the cache path serves it */
    }
    if (rc == -EAGAIN) { /* periods learnt, or caching on: the lookup again */
        board_page_free(p);
        if ((rc = hit_retry(h)) != 1)
            hit_end(h, rc);
        return;
    }
    if (rc == 0 && pc->cfg.delay) /* counted as a computation; the event thread never stalls */
        pc->cfg.delay(j->board, j->page, j->size);
    char *body = rc == 0 ? render_page(j->board, j->page, p) : NULL;
    board_page_free(p);
    if (rc == 0 && !body)
        rc = -ENOMEM;
    if (rc == 0) { /* the reply as reply_from_value makes it for a live page, without a value */
        metrics_page_compute(util_now_us() - h->t0_us);
        count(pc, PAGE_MISS);
        struct page_reply *out = &j->out;
        memset(out, 0, sizeof(*out));
        out->len = strlen(body);
        page_etag(h->q.gen, body, out->len, out->etag);
        out->source = PAGE_MISS;
        out->grace_s = pc->cfg.grace_ms / 1000;
        out->not_modified =
            j->if_none_match && page_cache_etag_matches(j->if_none_match, out->etag);
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
    struct page_cache_job *j = h->job;
    struct board_read rd;
    board_read_prepare(h->pc->cfg.model, j->board, &h->w, BOARD_READ_PAGE, NULL, 0, j->page,
                       j->size, &rd);
    int rc = store_async_script(h->reads, rd.script, rd.nkeys, rd.nargs, rd.argv, rd.lens,
                                j->deadline_ms, live_done, h);
    return rc < 0 ? rc : 0;
}

/* page.lua for h (the board caches no pages; h->q.gen is its generation, for the ETag); 0 sent,
 * or a negative errno. */
static int live_submit(struct hit *h)
{
    h->t0_us = util_now_us();
    return live_send(h);
}

/* The lookup for h (its period placed, the key guessed): page.lua for a board known to cache no
 * pages, else HMGET of the settings and GET of the guessed key, shared with identical lookups
 * of this loop iteration. 0 sent, or a negative errno (nothing sent). */
static int hit_send(struct hit *h)
{
    struct page_cache *pc = h->pc;
    struct page_cache_job *j = h->job;
    struct board_state st;
    if (!h->guess[0] && state_get(pc, j->board, &st) && st.ttl_ms == 0) {
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
        atomic_fetch_add(&pc->batches, 1); /* this lookup starts a new pipeline */
    else if (rc == 2)
        atomic_fetch_add(&pc->shared_lookups, 1); /* the same lookup is already on its way */
    return rc < 0 ? rc : 0;
}

/* A period the hint could not place, placed from the settings just read. */
static void hit_placed(struct board_settings_job *sj, int rc)
{
    struct hit *h = (struct hit *)(void *)((char *)sj - offsetof(struct hit, sj));
    if (rc == 0)
        rc = board_where_settled(h->pc->cfg.model, h->job->board, h->job->period, &sj->settings,
                                 sj->exists, &h->w);
    if (rc == 0) {
        place(h->pc, &h->q, h->job->size, &h->w, h->guess, sizeof(h->guess));
        rc = hit_send(h);
    }
    if (rc)
        hit_finish(h, rc);
}

/* Place h's period (from this process's hint, else from the settings, read first) and send its
 * lookup. 0 sent, or a negative errno (nothing sent). */
static int hit_begin(struct hit *h)
{
    struct page_cache_job *j = h->job;
    if (locate(h->pc, &h->q, j->size, &h->w, h->guess, sizeof(h->guess)) == 0)
        return hit_send(h);
    h->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = j->deadline_ms, .done = hit_placed};
    return board_settings_submit(h->pc->cfg.model, h->reads, &h->sj);
}

int page_cache_submit(struct page_cache *pc, struct store_async *conn, struct page_cache_job *job)
{
    if (!conn)
        return -ECONNREFUSED;
    struct hit *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->pc = pc;
    h->job = job;
    h->reads = conn;
    h->q.board = job->board;
    h->q.requested = job->period;
    h->q.page = job->page;
    memset(&job->out, 0, sizeof(job->out));
    meta_key(h->meta, sizeof(h->meta), pc->cfg.prefix, job->board);
    int rc = hit_begin(h);
    if (rc)
        free(h);
    return rc;
}

void page_reply_free(struct page_reply *r)
{
    free(r->body);
    r->body = NULL;
}

/* ---------------------------------------------------------------- life cycle and stats */

struct page_cache *page_cache_new(const struct page_cache_config *cfg)
{
    pthread_once(&scripts_once, scripts_init); /* before the stores dial: they load them */
    struct page_cache *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return NULL;
    pc->cfg = *cfg;
    pc->same_store = cfg->data == cfg->cache;
    if (pc->cfg.refresh_max <= 0)
        pc->cfg.refresh_max = 8;
    pc->states = calloc(STATE_SLOTS, sizeof(*pc->states));
    if (!pc->states) {
        free(pc);
        return NULL;
    }
    pthread_mutex_init(&pc->state_lock, NULL);
    pthread_mutex_init(&pc->lock, NULL);
    pthread_mutex_init(&pc->l1_lock, NULL);
    atomic_store(&pc->seed,
                 (uint64_t)wall_ms() * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)getpid());
    return pc;
}

void page_cache_free(struct page_cache *pc)
{
    if (!pc)
        return;
    while (pc->l1_oldest)
        l1_unlink(pc, pc->l1_oldest);
    while (pc->fills) { /* a refresh stalled on a timer of a loop that has stopped */
        struct fill *f = pc->fills;
        pc->fills = f->next;
        board_page_free(f->rows);
        free(f);
    }
    pthread_mutex_destroy(&pc->lock);
    pthread_mutex_destroy(&pc->l1_lock);
    pthread_mutex_destroy(&pc->state_lock);
    free(pc->states);
    free(pc);
}

void page_cache_stats(struct page_cache *pc, struct page_cache_stats *out)
{
    out->hits = atomic_load(&pc->hits);
    out->misses = atomic_load(&pc->misses);
    out->stale = atomic_load(&pc->stale);
    out->l1_hits = atomic_load(&pc->l1_hits);
    out->batched_hits = atomic_load(&pc->batched_hits);
    out->batches = atomic_load(&pc->batches);
    out->shared_lookups = atomic_load(&pc->shared_lookups);
    out->misses_on_loop = atomic_load(&pc->misses_on_loop);
    out->lock_waits = atomic_load(&pc->lock_waits);
    out->lock_wait_timeouts = atomic_load(&pc->lock_wait_timeouts);
    out->uncached = atomic_load(&pc->uncached);
    out->early_refreshes = atomic_load(&pc->early_refreshes);
    out->refreshes = atomic_load(&pc->refreshes);
    out->errors = atomic_load(&pc->errors);
    out->breaker_open = breaker_open(pc);
}

int page_cache_etag_matches(const char *if_none_match, const char *etag)
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
