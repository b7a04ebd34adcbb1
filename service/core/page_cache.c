/*
 * page_cache.c -- a keyed byte cache with stampede protection: values, the breaker, the
 * in-process tier, serving (the verdict on a value found), the life cycle and stats (the fills
 * are page_cache_fill.c's). The design is in page_cache.h; page_cache_int.h holds what the
 * page_cache*.c files share.
 */
#include "page_cache_int.h"

/* lua/lock_release.lua (the Makefile's build/gen/lua/lock_release.lua.h), registered by
 * page_cache_new: the store knows it by handle only. */
static const char *const lock_release_body =
#include "lua/lock_release.lua.h"
    ;

/* xorshift64*: jitter and tokens; never used for anything secret. */
uint64_t next_rand(struct page_cache *pc)
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
    char head[VALUE_HEAD_MAX];
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
 * cached hit's instructions, two values' headers of four numbers each). Up to 19 digits are
 * read without a check each (they fit a uint64_t); a 20th is out of range (so is 0-padding the
 * cache never writes). */
static int parse_i64(const char *p, int64_t *v, const char **end)
{
    int neg = *p == '-';
    const char *d = p + neg, *at = d;
    uint64_t u = 0;
    for (; *at >= '0' && *at <= '9'; at++) {
        if (at - d == 19)
            return -EINVAL;
        u = u * 10 + (unsigned)(*at - '0');
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
    size_t hl = (size_t)(nl - v);
    if (hl >= VALUE_HEAD_MAX)
        return -EINVAL;
    /* after the magic: five integers (four in a rankd2 header, which has no stamp) and the tag,
     * read in place (each number stops at the line's '\n' at the latest) */
    out->stamp = 0;
    int64_t *nums[] = {&out->version, &out->stamp, &out->created_ms, &out->soft_ms, &out->delta_us};
    const char *p = v + sizeof(VALUE_MAGIC);
    for (size_t i = 0; i < 5; i++)
        if (!(v2 && i == 1) && parse_i64(p, nums[i], &p))
            return -EINVAL;
    size_t el = strnlen(p, (size_t)(nl - p)); /* the tag, up to a NUL as a C string would be */
    if (el == 0 || el >= sizeof(out->tag) || memchr(p, ' ', el))
        return -EINVAL;
    memcpy(out->tag, p, el);
    out->tag[el] = '\0';
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
char *make_value(struct page_cache_fill *f, const char *data, size_t len, const char *tag,
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

static int l1_get(struct page_cache *pc, const char *key, char **value, size_t *len, size_t *cap)
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
        /* glibc serves 4 KiB outside its per-thread cache: a spare block when it fits */
        *cap = e->len + 1 <= SPARE_BODY_BYTES ? SPARE_BODY_BYTES : 0;
        *value = *cap ? spare_take(*cap) : malloc(e->len + 1);
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

void l1_put(struct page_cache *pc, const char *key, const char *value, size_t len, int64_t soft_ms)
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

int page_cache_l1_get(struct page_cache *pc, const char *l1key, char **value, size_t *len,
                      size_t *cap)
{
    if (pc->cfg.l1_ttl_ms <= 0 || !l1_get(pc, l1key, value, len, cap))
        return 0;
    atomic_fetch_add(&pc->l1_hits, 1);
    page_cache_count(pc, PAGE_HIT);
    return 1;
}

/* ---------------------------------------------------------------- serving */

/* Under pc->lock: when a fill of key began (wall clock), or 0. */
int64_t fill_started(struct page_cache *pc, const char *key)
{
    for (const struct page_cache_fill *f = pc->fills; f; f = f->next)
        if (strcmp(f->key, key) == 0)
            return f->started_ms;
    return 0;
}

/* Under pc->lock: when a refresh of key that another process holds the lock for was found
 * (wall clock), while that lock's lease may last, or 0. */
int64_t elsewhere_started(struct page_cache *pc, const char *key, int64_t now_ms)
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
void elsewhere_note(struct page_cache *pc, const struct page_cache_fill *f)
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
int is_fault(int rc)
{
    return rc == -ETIMEDOUT || rc == -ETIME || rc == -ECONNRESET || rc == -ECONNREFUSED ||
           rc == -EIO || rc == -EAGAIN || rc == -EBUSY;
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
