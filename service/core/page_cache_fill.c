/*
 * page_cache_fill.c -- the page cache's fills: one per key per loop, its waiters, the stampede
 * lock, the value computed and stored (or polled for while another process computes it), the
 * lock released, background refreshes. The design is in page_cache.h; page_cache_int.h holds
 * what the page_cache*.c files share.
 */
#include "page_cache_int.h"

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

void fill_free(struct page_cache_fill *f)
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

/* Store the value and release the lock, on the page write connection, in one command when the
 * fill holds the lock (lock_release.lua stores it first); nobody waits for either. */
static void fill_store(struct page_cache_fill *f, const char *value, size_t len, int64_t soft_ms)
{
    struct page_cache *pc = f->pc;
    int64_t px = soft_ms - util_wall_ms() + pc->cfg.grace_ms;
    int store = f->store && value && px > 0;
    char pxs[24];
    snprintf(pxs, sizeof(pxs), "%" PRId64, px);
    if (f->locked) {
        char lock[KEY_MAX + 8];
        snprintf(lock, sizeof(lock), "%s:lock", f->key);
        const char *argv[] = {lock, f->key, f->token, value, pxs};
        const size_t lens[] = {strlen(lock), strlen(f->key), strlen(f->token), len, strlen(pxs)};
        const char *const *av = store ? argv : (const char *const[]){lock, f->token};
        const size_t *lv = store ? lens : (const size_t[]){lens[0], lens[2]};
        store_async_script(f->page_writes, pc->lock_release, store ? 2 : 1, store ? 3 : 1, av, lv,
                           0, ignore_reply, pc);
        f->locked = 0;
    } else if (store) {
        const char *set[] = {"SET", f->key, value, "PX", pxs};
        const size_t lens[] = {3, strlen(f->key), len, 2, strlen(pxs)};
        const char *const *av[] = {set};
        const size_t *const lv[] = {lens};
        const int argc[] = {5};
        store_async_send(f->page_writes, 1, argc, av, lv, 0, ignore_reply, pc);
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
