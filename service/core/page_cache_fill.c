/* page_cache.c -- a keyed byte cache with stampede protection; the design is in page_cache.h. */
#include "page_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "freshness.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

#define KEY_MAX PAGE_CACHE_KEY_MAX
#define VALUE_MAGIC "rankd3" /* rankd2 had no stamp, rankd1 held the computation time in ms */
#define VALUE_MAGIC_V2 "rankd2"
#define POLL_MIN_MS 5 /* waiters re-read the cache every 5..10 ms */
#define POLL_JITTER_MS 5
/* The soft TTL is 80-90% of the TTL: jittered by 10% so that values made together expire apart,
 * and ending at least a tenth early so that a busy value's stale copy, served while one refresh
 * runs, stays within the freshness contract (the TTL plus one computation) even when requests
 * arrive a little apart. */
#define SOFT_EARLY_PCT 10
#define SOFT_JITTER_PCT 10
#define L1_BUCKETS 1024
#define ELSEWHERE_MAX 32 /* refreshes held by other processes that this one remembers (a ring) */

/* lua/lock_release.lua (the Makefile's build/gen/lua/lock_release.lua.h), registered by
 * page_cache_new: the store knows it by handle only. */
static const char *const lock_release_body =
#include "lua/lock_release.lua.h"
    ;

/* ---------------------------------------------------------------- state */

/* One value in the in-process tier. */
struct l1_entry {
    char key[KEY_MAX];
    char *value; /* the whole cache value, owned */
    size_t len;
    int64_t expires_ms;     /* monotonic */
    struct l1_entry *next;  /* bucket chain */
    struct l1_entry *newer; /* insertion order, for eviction */
};

/* A refresh another process computes under the key's lock, as a refresh of this process found it
 * (the lock held): until that lock's lease ends, this process serves its stale copy as it would
 * while a refresh of its own runs (refresh_started), and starts no refresh of its own. */
struct elsewhere {
    char key[KEY_MAX];
    int64_t began_ms; /* wall clock: when this process's refresh found the lock held */
    int64_t until_ms; /* wall clock: began_ms + lock_ttl_ms, the holder's lease at most */
};

struct page_cache {
    struct page_cache_config cfg;
    const struct store_script *lock_release; /* lua/lock_release.lua */
    pthread_mutex_t lock;                    /* fills */
    pthread_mutex_t l1_lock;
    struct l1_entry *l1[L1_BUCKETS];
    struct l1_entry *l1_oldest, *l1_newest;
    size_t l1_bytes;
    atomic_int breaker_errors;
    _Atomic int64_t breaker_until_ms;
    struct page_cache_fill *fills;             /* being computed on event loops; under lock */
    int refresh_fills;                         /* background refreshes among them; under lock */
    struct elsewhere elsewhere[ELSEWHERE_MAX]; /* under lock */
    int elsewhere_next;                        /* the ring's next slot; under lock */
    atomic_ulong hits, misses, stale, l1_hits, lock_waits, lock_wait_timeouts, uncached,
        early_refreshes, refreshes, errors, misses_on_loop;
    _Atomic uint64_t seed;
};

/*
 * A fill: the computation of one key on one event loop, and the requests of that loop waiting
 * for it. It takes the key's lock (the caller's lock call, or SET NX PX here), or waits for
 * another holder with timers that re-read the key every 5-10 ms for at most max_wait_ms (then
 * computes without the lock), computes (the caller's), stores the value (SET PX) and releases the
 * lock on the page write connection without the requests waiting for either: a miss costs a
 * request two round trips after its lookup is known to miss. A fill whose lock call fails or
 * times out, or that finds the breaker open, computes without the lock and stores nothing (the
 * cache is the part that failed). A background refresh is a fill without waiters: it takes the
 * lock the same way, gives up when another computation holds it, and stores what it computed.
 * It keeps copies of what it needs (the spec's, the caller's context): it may outlive the
 * request it came from.
 */
struct page_cache_fill {
    struct page_cache *pc;
    char key[KEY_MAX];
    int64_t version;
    int ttl_ms;
    int64_t not_after_ms;
    int64_t older_than_ms;             /* a stored value made at or before this does not count */
    int64_t min_stamp;                 /* nor one of a smaller stamp */
    int64_t stamp;                     /* the stamp of the value computed (page_cache_fill_stamp) */
    struct store_async *page_reads;    /* GET of the key (and the loop's name) */
    struct store_async *page_writes;   /* SET of the value and the lock, the lock's release */
    struct page_cache_waiter *waiters; /* the first one started it; joined in order */
    struct page_cache_waiter **waiters_end;
    char token[40];
    int locked;            /* this fill holds the key's lock */
    int store;             /* store the computed value */
    int refresh;           /* a background refresh: no waiter, nothing waits */
    int64_t wait_until_ms; /* waiting for another holder until then (monotonic) */
    int64_t t0_us;         /* the computation's start */
    int64_t started_ms;    /* wall clock, for the freshness decision (refresh_started) */
    int64_t deadline_ms;
    int (*after)(void *ctx, int ms, void (*fn)(void *arg), void *arg);
    void *after_ctx;
    const struct page_cache_fill_ops *ops;
    void *ctx;                    /* the caller's, made by ops->ctx_new */
    struct page_cache_fill *next; /* in pc->fills */
};

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

static char *value_format(int64_t version, int64_t stamp, int64_t created, int64_t soft,
                          int64_t delta, const char *tag, const char *data, size_t len,
                          size_t *out_len)
{
    char head[180];
    int n =
        snprintf(head, sizeof(head),
                 VALUE_MAGIC " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %s\n",
                 version, stamp, created, soft, delta, tag);
    char *v = malloc((size_t)n + len + 1);
    if (!v)
        return NULL;
    memcpy(v, head, (size_t)n);
    memcpy(v + n, data, len);
    v[(size_t)n + len] = '\0';
    *out_len = (size_t)n + len;
    return v;
}

/* A decimal int64 at p, then a space: 0, *v and *end just past the space; -EINVAL for anything
 * else (the cache writes plain digits; strtoll's locale and whitespace handling was a tenth of a
 * cached hit's instructions, two values' headers of four numbers each). */
static int parse_i64(const char *p, int64_t *v, const char **end)
{
    int neg = *p == '-';
    const char *d = p + neg, *at = d;
    uint64_t u = 0;
    for (; *at >= '0' && *at <= '9'; at++) {
        unsigned digit = (unsigned)(*at - '0');
        if (u > (UINT64_MAX - digit) / 10)
            return -EINVAL;
        u = u * 10 + digit;
    }
    if (at == d || *at != ' ' || u > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -EINVAL;
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    *end = at + 1;
    return 0;
}

int page_cache_value_parse(const char *v, size_t len, struct page_cache_value *out)
{
    if (!v)
        return -EINVAL;
    const char *nl = memchr(v, '\n', len);
    int v2 = nl && strncmp(v, VALUE_MAGIC_V2 " ", sizeof(VALUE_MAGIC_V2)) == 0;
    if (!nl || (!v2 && strncmp(v, VALUE_MAGIC " ", sizeof(VALUE_MAGIC)) != 0))
        return -EINVAL;
    char head[180];
    size_t hl = (size_t)(nl - v);
    if (hl >= sizeof(head))
        return -EINVAL;
    memcpy(head, v, hl);
    head[hl] = '\0';
    /* after the magic: five integers (four in a rankd2 header, which has no stamp) and the tag */
    out->stamp = 0;
    int64_t *nums[] = {&out->version, &out->stamp, &out->created_ms, &out->soft_ms, &out->delta_us};
    const char *p = head + sizeof(VALUE_MAGIC);
    for (size_t i = 0; i < 5; i++)
        if (!(v2 && i == 1) && parse_i64(p, nums[i], &p))
            return -EINVAL;
    size_t el = strlen(p);
    if (el == 0 || el >= sizeof(out->tag) || strchr(p, ' '))
        return -EINVAL;
    memcpy(out->tag, p, el + 1);
    out->data = nl + 1;
    out->len = len - hl - 1;
    return 0;
}

int64_t page_cache_soft_expiry(const struct page_cache_value *v, int ttl_ms)
{
    struct fresh_copy c = {v->created_ms, v->soft_ms, v->delta_us};
    return fresh_soft_expiry(&c, ttl_ms);
}

int page_cache_grace_ms(const struct page_cache *pc)
{
    return pc->cfg.grace_ms;
}

/* The value of f's key computed now: soft expiry 80-90% of the TTL (jittered), never past the
 * spec's cap; *soft_ms its soft expiry. NULL on ENOMEM. */
static char *make_value(struct page_cache_fill *f, const char *data, size_t len, const char *tag,
                        size_t *out_len, int64_t *soft_ms)
{
    struct page_cache *pc = f->pc;
    int64_t delta_us = util_now_us() - f->t0_us;
    metrics_page_compute(delta_us);
    int64_t now = util_wall_ms(), ttl = f->ttl_ms;
    int64_t jitter = ttl * SOFT_JITTER_PCT / 100;
    int64_t soft = now + ttl - ttl * SOFT_EARLY_PCT / 100 -
                   (jitter ? (int64_t)(next_rand(pc) % (uint64_t)jitter) : 0);
    if (f->not_after_ms && soft > f->not_after_ms)
        soft = f->not_after_ms;
    *soft_ms = soft;
    return value_format(f->version, f->stamp, now, soft, delta_us, tag, data, len, out_len);
}

/* ---------------------------------------------------------------- breaker */

int page_cache_breaker_open(struct page_cache *pc)
{
    return util_now_ms() < atomic_load(&pc->breaker_until_ms);
}

void page_cache_breaker_result(struct page_cache *pc, int failed)
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

/* ---------------------------------------------------------------- in-process tier */

static size_t l1_bucket(const char *key)
{
    return (size_t)(util_fnv1a(key, strlen(key)) % L1_BUCKETS);
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
    if (!value || !key || !key[0])
        return;
    int64_t ttl = soft_ms - util_wall_ms();
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

int page_cache_l1_on(const struct page_cache *pc)
{
    return pc->cfg.l1_ttl_ms > 0;
}

void page_cache_count(struct page_cache *pc, enum page_source s)
{
    atomic_fetch_add(s == PAGE_HIT ? &pc->hits : s == PAGE_STALE ? &pc->stale : &pc->misses, 1);
}

int page_cache_l1_get(struct page_cache *pc, const char *l1key, char **value, size_t *len)
{
    if (pc->cfg.l1_ttl_ms <= 0 || !l1_get(pc, l1key, value, len))
        return 0;
    atomic_fetch_add(&pc->l1_hits, 1);
    page_cache_count(pc, PAGE_HIT);
    return 1;
}

/* ---------------------------------------------------------------- serving */

/* Under pc->lock: when a fill of key began (wall clock), or 0. */
static int64_t fill_started(struct page_cache *pc, const char *key)
{
    for (const struct page_cache_fill *f = pc->fills; f; f = f->next)
        if (strcmp(f->key, key) == 0)
            return f->started_ms;
    return 0;
}

/* Under pc->lock: when a refresh of key that another process holds the lock for was found
 * (wall clock), while that lock's lease may last, or 0. */
static int64_t elsewhere_started(struct page_cache *pc, const char *key, int64_t now_ms)
{
    for (int i = 0; i < ELSEWHERE_MAX; i++) {
        const struct elsewhere *e = &pc->elsewhere[i];
        if (e->until_ms > now_ms && strcmp(e->key, key) == 0)
            return e->began_ms;
    }
    return 0;
}

/* A refresh of f's key (begun at f->started_ms) found the lock held: another process refreshes
 * the key; remembered for the lock's lease unless already known. */
static void elsewhere_note(struct page_cache *pc, const struct page_cache_fill *f)
{
    int64_t now = util_wall_ms();
    pthread_mutex_lock(&pc->lock);
    if (!elsewhere_started(pc, f->key, now)) {
        struct elsewhere *e = &pc->elsewhere[pc->elsewhere_next];
        pc->elsewhere_next = (pc->elsewhere_next + 1) % ELSEWHERE_MAX;
        util_copy(e->key, sizeof(e->key), f->key);
        e->began_ms = f->started_ms;
        e->until_ms = now + pc->cfg.lock_ttl_ms;
    }
    pthread_mutex_unlock(&pc->lock);
}

/* When the refresh that replaces a copy of key made at created_ms began: a computation of this
 * process, or one another process holds the lock for (found after the copy was made), else 0.
 * So several processes serving one page keep the same freshness contract as one: the copy is
 * served stale while the one refresh runs wherever it runs, within that refresh's lease. */
static int64_t refresh_started(struct page_cache *pc, const char *key, int64_t created_ms)
{
    pthread_mutex_lock(&pc->lock);
    int64_t began = fill_started(pc, key);
    if (!began) {
        began = elsewhere_started(pc, key, util_wall_ms());
        if (began < created_ms)
            began = 0;
    }
    pthread_mutex_unlock(&pc->lock);
    return began;
}

/*
 * A value of the expected version, with caching on (ttl_ms > 0 now). Fresh: served (XFetch may
 * ask for an early refresh). Past its soft TTL (under the TTL in force now): served stale, with
 * one background refresh, only while that keeps the freshness contract: the value is at most
 * the TTL plus one computation (its own delta) old, or the refresh replacing it began before it
 * got older than that (a busy key whose refresh runs long). An older value (one nobody read for
 * a while) is TOO_OLD: the request joins or starts the computation (single-flight), and the copy
 * is only the fallback if that fails.
 */
enum page_cache_verdict page_cache_judge(struct page_cache *pc, const char *key, int64_t version,
                                         int64_t min_stamp, int ttl_ms, const char *value,
                                         size_t len, const char *l1key, enum page_source *source,
                                         int *refresh, struct page_cache_value *out)
{
    struct page_cache_value e;
    *refresh = 0;
    if (ttl_ms <= 0 || page_cache_value_parse(value, len, &e) || e.version != version ||
        e.stamp < min_stamp)
        return PAGE_CACHE_UNUSABLE; /* caching turned off since, not this version's value, or
                                     * older than the change the request must see */
    if (out)
        *out = e;
    enum page_source s = PAGE_HIT;
    struct fresh_copy copy = {e.created_ms, e.soft_ms, e.delta_us};
    int64_t now = util_wall_ms(), soft = fresh_soft_expiry(&copy, ttl_ms);
    switch (fresh_decide(&copy, ttl_ms, now, refresh_started(pc, key, e.created_ms), pc->cfg.beta,
                         pc->cfg.beta > 0 ? rand_unit(pc) : 0.5)) {
    case FRESH_TOO_OLD:
        return PAGE_CACHE_TOO_OLD; /* joins a computation in flight (single-flight) or starts one */
    case FRESH_STALE_REFRESH:
        s = PAGE_STALE;
        *refresh = 1;
        break;
    case FRESH_EARLY_REFRESH:
        atomic_fetch_add(&pc->early_refreshes, 1);
        *refresh = 1;
        break;
    case FRESH_SERVE:
        break;
    }
    if (pc->cfg.l1_ttl_ms > 0)
        l1_put(pc, l1key, value, len, soft);
    page_cache_count(pc, s);
    *source = s;
    return PAGE_CACHE_SERVE;
}

/* A Redis fault (as opposed to an answer such as "no such thing"): the grace copy may stand in. */
static int is_fault(int rc)
{
    return rc == -ETIMEDOUT || rc == -ETIME || rc == -ECONNRESET || rc == -ECONNREFUSED ||
           rc == -EIO || rc == -EAGAIN || rc == -EBUSY;
}

/* ---------------------------------------------------------------- fills */

static void fill_unlink(struct page_cache *pc, struct page_cache_fill *f)
{
    pthread_mutex_lock(&pc->lock);
    for (struct page_cache_fill **p = &pc->fills; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    if (f->refresh)
        pc->refresh_fills--;
    pthread_mutex_unlock(&pc->lock);
}

static void fill_link(struct page_cache *pc, struct page_cache_fill *f)
{
    pthread_mutex_lock(&pc->lock);
    f->next = pc->fills;
    pc->fills = f;
    pthread_mutex_unlock(&pc->lock);
}

static void fill_free(struct page_cache_fill *f)
{
    if (f->ctx)
        f->ops->ctx_free(f->ctx);
    free(f);
}

/* A new fill of spec's key, with the caller's context for it. NULL on ENOMEM. */
static struct page_cache_fill *fill_new(struct page_cache *pc,
                                        const struct page_cache_fill_spec *spec)
{
    struct page_cache_fill *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->pc = pc;
    util_copy(f->key, sizeof(f->key), spec->key);
    f->version = spec->version;
    f->ttl_ms = spec->ttl_ms;
    f->not_after_ms = spec->not_after_ms;
    f->older_than_ms = spec->older_than_ms;
    f->min_stamp = spec->min_stamp;
    f->page_reads = spec->page_reads;
    f->page_writes = spec->page_writes;
    f->waiters_end = &f->waiters;
    f->t0_us = util_now_us();
    f->started_ms = util_wall_ms();
    f->deadline_ms = spec->deadline_ms;
    f->after = spec->after;
    f->after_ctx = spec->after_ctx;
    f->ops = spec->ops;
    snprintf(f->token, sizeof(f->token), "%016" PRIx64 "%016" PRIx64, next_rand(pc), next_rand(pc));
    if (!(f->ctx = f->ops->ctx_new(spec->arg))) {
        free(f);
        return NULL;
    }
    return f;
}

/* Every waiter gets value (a copy each; may be NULL) as `served` (a miss: computed or waited for;
 * a hit: another computation had stored it when the fill looked), or rc; the fill is freed. A
 * waiter that holds a copy too old to serve gets it as a stale value when rc is a Redis fault
 * (the grace window); -EAGAIN goes to every waiter as it is (the caller looks again). */
static void fill_served(struct page_cache_fill *f, int rc, const char *value, size_t len,
                        enum page_source served)
{
    struct page_cache *pc = f->pc;
    fill_unlink(pc, f);
    struct page_cache_waiter *w = f->waiters;
    for (int nth = 0; w; nth++) {
        struct page_cache_waiter *next = w->next_;
        char *old = w->old, *copy = NULL;
        size_t n = len;
        int out = rc;
        enum page_source source = served;
        w->next_ = NULL;
        w->old = NULL;
        if (out == -EAGAIN) { /* the caller's: it looks again */
            free(old);
            w->served(w, out, NULL, 0, source); /* may free w */
            w = next;
            continue;
        }
        struct page_cache_value e;
        /* The fill's first waiter started its computation after its request came, so whatever
         * the stamp, nothing newer exists (a stored value counted only with its stamp: fill_fresh,
         * the lock call); a later one may have joined a computation that began before the change
         * it must see: it looks again, and starts (or joins) one that begins after it. */
        if (!out && nth > 0 && w->min_stamp > 0 && value &&
            (page_cache_value_parse(value, len, &e) || e.stamp < w->min_stamp)) {
            free(old); /* computed before the change this waiter must see: it looks again */
            w->served(w, -EAGAIN, NULL, 0, source); /* may free w */
            w = next;
            continue;
        }
        if (!out && value && (copy = malloc(len + 1))) {
            memcpy(copy, value, len);
            copy[len] = '\0';
        } else if (!out) {
            out = -ENOMEM;
        }
        if (out && old && is_fault(out)) { /* the grace copy, while the refresh fails */
            copy = old;
            n = w->old_len;
            old = NULL;
            source = PAGE_STALE;
            out = 0;
        }
        free(old);
        if (!out) {
            if (source != PAGE_STALE && pc->cfg.l1_ttl_ms > 0 &&
                page_cache_value_parse(copy, n, &e) == 0)
                l1_put(pc, w->l1key, copy, n, e.soft_ms);
            page_cache_count(pc, source);
        }
        w->served(w, out, out ? NULL : copy, out ? 0 : n, source); /* may free w */
        w = next;
    }
    fill_free(f);
}

static void fill_finish(struct page_cache_fill *f, int rc, const char *value, size_t len)
{
    fill_served(f, rc, value, len, PAGE_MISS);
}

static void ignore_reply(void *arg, int rc, struct store_reply **replies)
{
    struct page_cache *pc = arg;
    if (rc != -ECANCELED)
        page_cache_breaker_result(pc, rc != 0 || replies[0]->type == STORE_REPLY_ERROR);
}

/* Store the value and release the lock, on the page write connection; nobody waits for either. */
static void fill_store(struct page_cache_fill *f, const char *value, size_t len, int64_t soft_ms)
{
    struct page_cache *pc = f->pc;
    int64_t px = soft_ms - util_wall_ms() + pc->cfg.grace_ms;
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
        store_async_script(f->page_writes, pc->lock_release, 1, 1, argv, NULL, 0, ignore_reply, pc);
        f->locked = 0;
    }
    store_async_flush(f->page_writes); /* before the replies go out: a reader that sees the value
                                        * can find it stored and its lock gone */
}

void page_cache_fill_value(struct page_cache_fill *f, int rc, const char *data, size_t len,
                           const char *tag)
{
    if (rc == -ECANCELED) { /* the loop's connections are being freed: send nothing more */
        f->locked = 0;
        fill_finish(f, -EIO, NULL, 0);
        return;
    }
    if (rc) {
        fill_store(f, NULL, 0, 0); /* the lock, if held */
        fill_finish(f, rc, NULL, 0);
        return;
    }
    size_t vlen = 0;
    int64_t soft = 0;
    char *value = make_value(f, data, len, tag, &vlen, &soft);
    fill_store(f, value, vlen, soft); /* without a value: the lock, at least */
    if (f->refresh && value)
        atomic_fetch_add(&f->pc->refreshes, 1);
    fill_finish(f, value ? 0 : -ENOMEM, value, vlen);
    free(value);
}

void page_cache_fill_stamp(struct page_cache_fill *f, int64_t stamp)
{
    f->stamp = stamp;
}

int page_cache_fill_after(struct page_cache_fill *f, int ms, void (*fn)(void *arg), void *arg)
{
    return f->after(f->after_ctx, ms, fn, arg);
}

/* Compute with the caller's computation (store: keep the value afterwards, under the lock or
 * without one). A background refresh without the lock has nothing to do: it ends. */
static void fill_compute(struct page_cache_fill *f, int store)
{
    struct page_cache *pc = f->pc;
    if (f->refresh && !f->locked) {
        fill_finish(f, -EBUSY, NULL, 0);
        return;
    }
    f->store = store;
    f->t0_us = util_now_us();
    atomic_fetch_add(&pc->uncached, !store);
    int rc = f->ops->compute(f, f->ctx);
    if (rc < 0) {
        fill_store(f, NULL, 0, 0);
        fill_finish(f, rc == -ETIMEDOUT ? rc : -EIO, NULL, 0);
    }
}

static void fill_poll(void *arg);

/* How long a miss may wait for another computation: max_ms, but never so long that computing
 * it after the wait would not fit in the request's time (a third of what is left is kept). */
static int64_t wait_limit(const struct page_cache_fill *f, int64_t max_ms)
{
    int64_t now = util_now_ms(), until = now + max_ms;
    if (f->deadline_ms) {
        int64_t keep = (f->deadline_ms - now) / 3, latest = f->deadline_ms - keep;
        if (latest < until)
            until = latest;
    }
    return until;
}

/* Wait for another holder of the lock (a timer, then fill_poll); a refresh never waits: it
 * notes that the holder refreshes the key, and ends. */
static void fill_wait(struct page_cache_fill *f)
{
    struct page_cache *pc = f->pc;
    if (f->refresh)
        elsewhere_note(pc, f);
    if (f->refresh ||
        f->after(f->after_ctx, POLL_MIN_MS + (int)(next_rand(pc) % (POLL_JITTER_MS + 1)), fill_poll,
                 f) != 0)
        fill_compute(f, 1);
}

/* The cache held a copy for f: 1 when it is of f's version and new enough to take. */
static int fill_fresh(const struct page_cache_fill *f, const struct store_reply *r)
{
    struct page_cache_value e;
    return r && r->type == STORE_REPLY_STRING && page_cache_value_parse(r->str, r->len, &e) == 0 &&
           e.version == f->version && e.created_ms > f->older_than_ms && e.stamp >= f->min_stamp;
}

static void poll_reply(void *arg, int rc, struct store_reply **replies)
{
    struct page_cache_fill *f = arg;
    if (rc == -ECANCELED) {
        page_cache_fill_value(f, rc, NULL, 0, NULL);
        return;
    }
    const struct store_reply *r = rc ? NULL : replies[0];
    if (f->pc->cfg.own_redis) /* with the data Redis, a fault of its GET is the data's */
        page_cache_breaker_result(f->pc, rc != 0 || r->type == STORE_REPLY_ERROR);
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
    struct page_cache_fill *f = arg;
    const char *get[] = {"GET", f->key};
    const char *const *argv[] = {get};
    const int argc[] = {2};
    if (store_async_send_shared(f->page_reads, 1, argc, argv, f->deadline_ms, poll_reply, f) < 0)
        fill_compute(f, 1);
}

void page_cache_fill_locked(struct page_cache_fill *f, enum page_cache_lock_outcome outcome,
                            const char *value, size_t len)
{
    struct page_cache *pc = f->pc;
    page_cache_breaker_result(pc, outcome == PAGE_CACHE_LOCK_FAILED);
    switch (outcome) {
    case PAGE_CACHE_LOCK_FAILED: /* the lock call failed (OOM, a write pause) */
        fill_compute(f, 0);
        break;
    case PAGE_CACHE_LOCK_CACHED: /* stored by another computation since the lookup: a hit, as a
                                  * second lookup would have found it */
        fill_served(f, 0, value, len, PAGE_HIT);
        break;
    case PAGE_CACHE_LOCK_HELD:
        atomic_fetch_add(&pc->lock_waits, !f->refresh);
        f->wait_until_ms = wait_limit(f, pc->cfg.max_wait_ms);
        fill_wait(f);
        break;
    case PAGE_CACHE_LOCK_TAKEN:
        f->locked = 1;
        f->store = 1;
        break;
    case PAGE_CACHE_LOCK_ANSWERED:
        break;
    }
}

/* The values in a Redis of their own: the key read again once the lock is held. */
static void recheck_reply(void *arg, int rc, struct store_reply **replies)
{
    struct page_cache_fill *f = arg;
    if (rc == -ECANCELED) {
        page_cache_fill_value(f, rc, NULL, 0, NULL);
        return;
    }
    page_cache_breaker_result(f->pc, rc != 0 || replies[0]->type == STORE_REPLY_ERROR);
    if (!rc && fill_fresh(f, replies[0])) { /* a holder stored it just before the lock */
        fill_store(f, NULL, 0, 0);          /* releases the lock */
        fill_served(f, 0, replies[0]->str, replies[0]->len, PAGE_MISS);
        return;
    }
    fill_compute(f, 1);
}

/* The cache's own lock: SET key:lock token NX PX ttl on the page write connection. */
static void lock_reply(void *arg, int rc, struct store_reply **replies)
{
    struct page_cache_fill *f = arg;
    struct page_cache *pc = f->pc;
    if (rc == -ECANCELED) {
        page_cache_fill_value(f, rc, NULL, 0, NULL);
        return;
    }
    const struct store_reply *r = rc ? NULL : replies[0];
    page_cache_breaker_result(pc, !r || r->type == STORE_REPLY_ERROR);
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

/* Start computing f's value: take the lock (the caller's lock call, or SET NX PX here), or
 * compute without it when the breaker is open. f is linked in pc->fills. */
static void fill_start(struct page_cache_fill *f)
{
    struct page_cache *pc = f->pc;
    if (page_cache_breaker_open(pc)) {
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
    if (f->ops->lock_call) {
        const struct page_cache_lock lk = {.key = f->key,
                                           .lock = lock,
                                           .token = f->token,
                                           .ttl_ms = pc->cfg.lock_ttl_ms,
                                           .version = f->version,
                                           .older_than_ms = f->older_than_ms,
                                           .min_stamp = f->min_stamp};
        rc = f->ops->lock_call(f, f->ctx, &lk, deadline);
    } else {
        const char *set[] = {"SET", lock, f->token, "NX", "PX", ttl};
        const char *const *av[] = {set};
        const int argc[] = {6};
        rc = store_async_send(f->page_writes, 1, argc, av, NULL, deadline, lock_reply, f);
    }
    if (rc < 0) { /* the write connection is held (a write pause) or down: reads may not be */
        page_cache_breaker_result(pc, 1);
        fill_compute(f, 0);
    }
}

int page_cache_fill_join(struct page_cache *pc, const struct page_cache_fill_spec *spec,
                         struct page_cache_waiter *w)
{
    w->next_ = NULL;
    pthread_mutex_lock(&pc->lock);
    struct page_cache_fill *f = pc->fills, *elsewhere = NULL;
    for (;
         f && !(f->page_reads == spec->page_reads && !f->refresh && strcmp(f->key, spec->key) == 0);
         f = f->next)
        if (!elsewhere && strcmp(f->key, spec->key) == 0)
            elsewhere = f;
    if (f) { /* this loop computes the value already: join it */
        *f->waiters_end = w;
        f->waiters_end = &w->next_;
        pthread_mutex_unlock(&pc->lock);
        return 1;
    }
    pthread_mutex_unlock(&pc->lock);
    if (!(f = fill_new(pc, spec)))
        return -ENOMEM;
    f->waiters = w;
    f->waiters_end = &w->next_;
    if (elsewhere) {
        /* another event thread of this process computes it (or refreshes it): wait for its
         * copy (the process's single-flight across loops), longer than for a holder elsewhere,
         * within the request */
        int64_t left = spec->deadline_ms ? spec->deadline_ms - util_now_ms() : 1000;
        f->wait_until_ms = wait_limit(f, left > 100 ? left / 2 : 50);
        if (f->after(f->after_ctx, POLL_MIN_MS, fill_poll, f) != 0) {
            fill_free(f);
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

void page_cache_refresh(struct page_cache *pc, const struct page_cache_fill_spec *spec)
{
    pthread_mutex_lock(&pc->lock);
    int busy = fill_started(pc, spec->key) || elsewhere_started(pc, spec->key, util_wall_ms()) ||
               pc->refresh_fills >= pc->cfg.refresh_max;
    if (!busy)
        pc->refresh_fills++;
    pthread_mutex_unlock(&pc->lock);
    if (busy)
        return;
    struct page_cache_fill *f = fill_new(pc, spec);
    if (!f) {
        pthread_mutex_lock(&pc->lock);
        pc->refresh_fills--;
        pthread_mutex_unlock(&pc->lock);
        return;
    }
    f->refresh = 1;
    f->after_ctx = NULL; /* the request may end first: timers of the loop itself (a test stall) */
    fill_link(pc, f);
    fill_start(f);
}

/* ---------------------------------------------------------------- life cycle and stats */

struct page_cache *page_cache_new(const struct page_cache_config *cfg)
{
    struct page_cache *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return NULL;
    pc->cfg = *cfg;
    pc->lock_release = store_script_register(lock_release_body); /* the stores' dials load it */
    if (pc->cfg.refresh_max <= 0)
        pc->cfg.refresh_max = 8;
    pthread_mutex_init(&pc->lock, NULL);
    pthread_mutex_init(&pc->l1_lock, NULL);
    atomic_store(&pc->seed,
                 (uint64_t)util_wall_ms() * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)getpid());
    return pc;
}

void page_cache_free(struct page_cache *pc)
{
    if (!pc)
        return;
    while (pc->l1_oldest)
        l1_unlink(pc, pc->l1_oldest);
    while (pc->fills) { /* a refresh stalled on a timer of a loop that has stopped */
        struct page_cache_fill *f = pc->fills;
        pc->fills = f->next;
        fill_free(f);
    }
    pthread_mutex_destroy(&pc->lock);
    pthread_mutex_destroy(&pc->l1_lock);
    free(pc);
}

void page_cache_stats(struct page_cache *pc, struct page_cache_stats *out)
{
    out->hits = atomic_load(&pc->hits);
    out->misses = atomic_load(&pc->misses);
    out->stale = atomic_load(&pc->stale);
    out->l1_hits = atomic_load(&pc->l1_hits);
    out->misses_on_loop = atomic_load(&pc->misses_on_loop);
    out->lock_waits = atomic_load(&pc->lock_waits);
    out->lock_wait_timeouts = atomic_load(&pc->lock_wait_timeouts);
    out->uncached = atomic_load(&pc->uncached);
    out->early_refreshes = atomic_load(&pc->early_refreshes);
    out->refreshes = atomic_load(&pc->refreshes);
    out->errors = atomic_load(&pc->errors);
    out->breaker_open = page_cache_breaker_open(pc);
}
