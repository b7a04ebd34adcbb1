/*
 * page_cache.h -- a keyed byte cache in Redis with a short TTL: values with a soft expiry and a
 * grace window, per-key single-flight and stampede locks, early and background refresh, a
 * circuit breaker and an optional in-process tier.
 *
 * It knows neither boards nor JSON (pages.h is the rank flow that uses it): keys are the
 * caller's strings (under PAGE_CACHE_KEY_MAX bytes), values the caller's bytes behind a one-line
 * header of the cache's own:
 *   "rankd3 <version> <stamp> <created_ms> <soft_expiry_ms> <compute_us> <tag>\n" then the bytes
 * (wall-clock ms; a "rankd2" header, without the stamp, is read with stamp 0). `version` is the
 * caller's (a value of another version is never served: a board generation); `stamp` the
 * caller's count of the changes its data had seen when the value was computed (a board's write
 * counter): a request may ask for a value of at least a stamp, and an older value is then a miss
 * for it, computed again with the same stampede protection as any miss; `tag` a short token it
 * keeps with the value (an ETag). The soft expiry is
 * 80-90% of the caller's TTL (jittered by 10% so that values made together expire apart, and a
 * tenth early so that a busy value's stale copy, served while one refresh runs, stays within the
 * freshness contract), never past the caller's not-after time; the Redis key lives for the soft
 * TTL plus grace_ms.
 *
 * Freshness (freshness.h decides; docs/api.md's contract, "Page cache and freshness"): a fresh
 * value is served (PAGE_HIT); past its soft expiry it is served stale (PAGE_STALE) only while one
 * refresh is in flight or failing, for at most the grace window: a copy still within the TTL plus
 * its own computation time is served and refreshed in the background; an older copy is recomputed
 * for the request that finds it (and served only if that computation fails with a Redis fault),
 * unless the refresh replacing it began in time. That refresh may be another process's: a
 * background refresh that finds the key's lock held remembers it, and until that lock's lease
 * (lock_ttl) ends the process serves the copy stale as it would during a refresh of its own.
 *
 * Stampede protection, always per exact key (never a pool of hashed slots):
 *  - in-process single-flight: concurrent misses for one key on one event thread share one
 *    computation (a fill), and a miss on another event thread waits for it (timers re-read the
 *    key within half the request's time);
 *  - across processes: the first miss takes the key's lock, `SET <key>:lock <token> NX PX
 *    lock_ttl` (by the caller's own script when it has one: page_cache_fill_ops.lock_call, so
 *    that a miss is one round trip; else the cache's SET NX PX and a re-read), computes, stores
 *    and releases in one command (lua/lock_release.lua, registered here: SET PX, then
 *    compare-and-delete); the
 *    others re-read every 5-10 ms for at most max_wait_ms, then compute without the lock;
 *  - XFetch (Vattani et al., PVLDB 8(8) 2015): a hit asks for an early background refresh when
 *    now - delta * beta * ln(rand()) >= soft_expiry, delta being the value's computation time;
 *  - a stale hit is served at once and refreshed in the background (at most refresh_max at once);
 *  - cache or lock Redis errors (timeouts, OOM, ...) fall back to computing uncached; after
 *    PAGE_CACHE_BREAKER_ERRORS in a row the cache is skipped for PAGE_CACHE_BREAKER_MS.
 * Everything runs on the event loop of the request, on the loop's own connections (the caller's:
 * to the data Redis, or to a cache Redis of its own), and never waits: lock waits are the loop's
 * timers, within each request's deadline. Computations are the caller's
 * (page_cache_fill_ops), non-blocking too; their results come back through
 * page_cache_fill_locked and page_cache_fill_value.
 *
 * Thread-safe (a fill and its waiters belong to one event loop; the tables are shared under short
 * locks). Errors: negative errno, the caller's computation's own or store_async.h's.
 */
#ifndef RANKD_PAGE_CACHE_H
#define RANKD_PAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "store_async.h"

#define PAGE_CACHE_BREAKER_ERRORS 5 /**< consecutive cache errors that open the breaker */
#define PAGE_CACHE_BREAKER_MS 1000  /**< how long an open breaker skips the cache */
#define PAGE_CACHE_L1_TTL_MS_MAX 500
#define PAGE_CACHE_KEY_MAX 256 /**< bytes of a key (Redis or tier), with its NUL */
#define PAGE_CACHE_TAG_MAX 48  /**< bytes of a value's tag, with its NUL */

struct page_cache_config {
    int own_redis;       /**< 1: the values live in a Redis of their own (--cache-redis): the
                          *   faults of the cache's reads there count towards the breaker (with
                          *   the data Redis they are the data's) */
    int grace_ms;        /**< stale window after the soft TTL; key TTL = soft + grace */
    int lock_ttl_ms;     /**< stampede lock TTL; must exceed a computation */
    int max_wait_ms;     /**< longest wait for another holder's result */
    double beta;         /**< XFetch beta; 0 turns early refresh off */
    int l1_ttl_ms;       /**< in-process tier TTL, 0 = off, <= PAGE_CACHE_L1_TTL_MS_MAX */
    size_t l1_max_bytes; /**< in-process tier budget */
    int refresh_max;     /**< background refreshes at once (<= 0: 8) */
};

/** Where a served value came from (X-Cache). */
enum page_source { PAGE_HIT = 0, PAGE_MISS, PAGE_STALE };

struct page_cache;

/** A new cache (registers lua/lock_release.lua with the store: call before the stores dial).
 *  Returns NULL on ENOMEM. Free with page_cache_free, once the event loops have stopped. */
struct page_cache *page_cache_new(const struct page_cache_config *cfg);

/** Free the cache, and the fills left on timers of loops that stopped (their contexts with
 *  page_cache_fill_ops.ctx_free). NULL is a no-op. */
void page_cache_free(struct page_cache *pc);

/* ---- values */

/** A parsed value: the cache's header, and the caller's bytes. */
struct page_cache_value {
    int64_t version;    /**< the caller's */
    int64_t stamp;      /**< the caller's count of changes the value had seen (0: none given) */
    int64_t created_ms; /**< wall clock, when it was computed */
    int64_t soft_ms;    /**< wall clock, its soft expiry (under the TTL it was made with) */
    int64_t delta_us;   /**< how long its computation took */
    char tag[PAGE_CACHE_TAG_MAX]; /**< the caller's token */
    const char *data;             /**< the caller's bytes, borrowed from the value (NUL after) */
    size_t len;
};

/** Parse a value: 0 and *out (pointing into v), or -EINVAL for anything the cache did not write
 *  (a miss). */
int page_cache_value_parse(const char *v, size_t len, struct page_cache_value *out);

/** A value's soft expiry (wall ms) under the TTL in force now (ttl_ms): a TTL lowered since it
 *  was made shortens it (freshness.h). */
int64_t page_cache_soft_expiry(const struct page_cache_value *v, int ttl_ms);

/** The configured grace window (ms). */
int page_cache_grace_ms(const struct page_cache *pc);

/* ---- the cache Redis */

/** 1 while the breaker is open (the cache is skipped), else 0. */
int page_cache_breaker_open(struct page_cache *pc);

/** Count the outcome of a call to the cache's Redis that the caller made itself (an error opens
 *  the breaker after PAGE_CACHE_BREAKER_ERRORS in a row; a success resets the count). */
void page_cache_breaker_result(struct page_cache *pc, int failed);

/* ---- serving a value the caller read */

enum page_cache_verdict {
    PAGE_CACHE_UNUSABLE = 0, /**< not `version`'s value, unreadable, or ttl_ms <= 0: compute */
    PAGE_CACHE_SERVE = 1,    /**< serve it: fresh, stale while a refresh runs, or early */
    PAGE_CACHE_TOO_OLD = 2,  /**< older than the TTL plus one computation: compute now (or share
                              *   the computation in flight); it is the fallback should that fail
                              *   (page_cache_waiter.old) */
};

/**
 * Judge value[0..len), read for `key` by a request that expects `version`, and a stamp of at
 * least min_stamp (0: any), under the TTL in force now (ttl_ms). On PAGE_CACHE_SERVE: *source is
 * PAGE_HIT or PAGE_STALE, the serve is counted, the value is put in the tier under l1key (NULL or
 * "": not), and *refresh is 1 when a background refresh should start now (stale, or XFetch's early
 * refresh: page_cache_refresh), else 0. *out (may be NULL) is the parsed value on SERVE and
 * TOO_OLD. `value` stays the caller's.
 */
enum page_cache_verdict page_cache_judge(struct page_cache *pc, const char *key, int64_t version,
                                         int64_t min_stamp, int ttl_ms, const char *value,
                                         size_t len, const char *l1key, enum page_source *source,
                                         int *refresh, struct page_cache_value *out);

/** Count a value served that the cache did not serve itself (a computation of the caller's
 *  that is never stored: a live page). */
void page_cache_count(struct page_cache *pc, enum page_source source);

/* ---- the in-process tier (keys are the caller's: no Redis call, no wait) */

/** 1 when the tier is on (l1_ttl_ms > 0). */
int page_cache_l1_on(const struct page_cache *pc);

/** 1 and *value (a malloc'd copy of a whole value; counted as a hit) when the tier holds l1key,
 *  else 0 (also when the tier is off, or on ENOMEM). *cap: SPARE_BODY_BYTES when the copy is in
 *  a spare block of that size (spare.h: a value that fits one), else 0; free() takes either. */
int page_cache_l1_get(struct page_cache *pc, const char *l1key, char **value, size_t *len,
                      size_t *cap);

/* ---- misses and refreshes on an event loop: fills */

struct page_cache_fill;

/** The lock a fill's first call takes (page_cache_fill_ops.lock_call); borrowed for the call. */
struct page_cache_lock {
    const char *key;       /**< the value's key */
    const char *lock;      /**< its lock's key: "<key>:lock" */
    const char *token;     /**< this fill's token (the lock's value; released by compare) */
    int ttl_ms;            /**< the lock's PX */
    int64_t version;       /**< the version the key was made for */
    int64_t older_than_ms; /**< a stored value counts only when made after this (0: any) */
    int64_t min_stamp;     /**< and only with a stamp of at least this (0: any) */
};

/**
 * The caller's side of a fill: its computation's context and calls. Every call runs on the
 * fill's loop; ctx is the fill's (made by ctx_new when the fill is made, freed by ctx_free when
 * it ends: a background refresh outlives the request it came from, so ctx holds copies).
 */
struct page_cache_fill_ops {
    /** A new context for a fill from the joining request's `arg` (page_cache_fill_spec.arg);
     *  NULL on ENOMEM (no fill then). */
    void *(*ctx_new)(void *arg);
    void (*ctx_free)(void *ctx);
    /**
     * NULL: the cache takes the lock itself (SET NX PX on the fill's page_writes, then a re-read
     * of the key on page_reads), then calls compute. Else: send one call (before deadline_ms)
     * that answers the value stored meanwhile, or takes lk (SET NX PX) and starts the
     * computation, or finds the lock held; its outcome goes to page_cache_fill_locked, and a
     * computation it started to page_cache_fill_value. Returns 0, or a negative errno with
     * nothing sent (the fill then computes without the lock, storing nothing).
     */
    int (*lock_call)(struct page_cache_fill *f, void *ctx, const struct page_cache_lock *lk,
                     int64_t deadline_ms);
    /** Compute the value (without the lock, or once the cache's own lock is held); the result
     *  goes to page_cache_fill_value. Returns 0, or a negative errno with nothing sent (the fill
     *  then ends with -ETIMEDOUT for -ETIMEDOUT, else -EIO). */
    int (*compute)(struct page_cache_fill *f, void *ctx);
};

/** A fill to join or start: the key and the loop's means (borrowed for the call). */
struct page_cache_fill_spec {
    const char *key;                 /**< the value's key */
    int64_t version;                 /**< the caller's version of a value made now */
    int ttl_ms;                      /**< its TTL (> 0) */
    int64_t not_after_ms;            /**< its soft expiry's cap (wall ms; 0: none) */
    int64_t older_than_ms;           /**< a stored value counts only when made after
                                      *   this (0: any) */
    int64_t min_stamp;               /**< and only with a stamp of at least this (0: any): the
                                      *   first joiner's; later ones check their own (waiter) */
    struct store_async *page_reads;  /**< the loop's connection for GETs of the key (it
                                      *   also names the loop: one fill per key and
                                      *   loop) */
    struct store_async *page_writes; /**< and for SETs, the lock and its release */
    int64_t deadline_ms;             /**< the request's (monotonic; 0: none) */
    /** Run fn(arg) on the loop's thread after ms; 0, or -1 when it cannot (then fn never runs).
     *  after_ctx is passed back: NULL for a timer not tied to a request. */
    int (*after)(void *after_ctx, int ms, void (*fn)(void *arg), void *arg);
    void *after_ctx;
    const struct page_cache_fill_ops *ops; /**< static */
    void *arg;                             /**< for ops->ctx_new */
};

/**
 * One request waiting on its loop for a key's value (page_cache_fill_join). The caller fills it
 * and keeps it alive until `served`; the cache owns `old` from the join on.
 */
struct page_cache_waiter {
    const char *l1key; /**< the tier's key for the value, or "" (borrowed until served) */
    char *old;         /**< a copy too old to serve (malloc'd), or NULL: the answer (PAGE_STALE)
                        *   when the fill fails with a Redis fault */
    size_t old_len;
    int64_t min_stamp; /**< the waiter takes no value of a smaller stamp (0: any): a fill's
                        *   value below it (a computation that began before the change the
                        *   waiter must see) is -EAGAIN for it (look again) */
    /**
     * Called once, on the loop: rc 0 with value (a whole cache value, a malloc'd copy the callee
     * owns) served as `source`; or a negative errno (value NULL): the computation's, a fault of
     * the cache's calls, or -EAGAIN when the caller's lock call or computation said so (look
     * again). May free the waiter.
     */
    void (*served)(struct page_cache_waiter *w, int rc, char *value, size_t len,
                   enum page_source source);
    struct page_cache_waiter *next_; /**< private */
};

/**
 * Wait on this loop for spec->key's value: join this loop's fill of the key, or wait for another
 * loop's (timers re-read the key, within half the request's time; counted as a lock wait), or
 * start a fill (the lock, then the computation; the breaker open: the computation alone, storing
 * nothing). Returns 1: w belongs to the fill and `served` will be called, possibly before this
 * returns (a computation that could not be sent); or a negative errno with nothing started
 * (-ENOMEM): w and w->old are the caller's again.
 */
int page_cache_fill_join(struct page_cache *pc, const struct page_cache_fill_spec *spec,
                         struct page_cache_waiter *w);

/** Refresh spec->key in the background (a fill without waiters: it takes the lock, gives up when
 *  another computation holds it, and stores what it computed), unless a computation of the key
 *  is in flight in this process or refresh_max run already. Nothing waits for it. */
void page_cache_refresh(struct page_cache *pc, const struct page_cache_fill_spec *spec);

/** What a fill's lock call found (page_cache_fill_locked). */
enum page_cache_lock_outcome {
    PAGE_CACHE_LOCK_FAILED = 0, /**< the call failed (a fault, an error reply): compute without
                                 *   the lock and store nothing (counts towards the breaker) */
    PAGE_CACHE_LOCK_CACHED,     /**< the value was stored meanwhile: served as a hit */
    PAGE_CACHE_LOCK_HELD,       /**< the lock is held elsewhere: wait for its value, bounded */
    PAGE_CACHE_LOCK_TAKEN,      /**< taken: the computation runs, then page_cache_fill_value */
    PAGE_CACHE_LOCK_ANSWERED,   /**< answered without a lock (the caller then ends the fill with
                                 *   page_cache_fill_value and its code) */
};

/** The lock call's outcome (value: the stored value, for PAGE_CACHE_LOCK_CACHED; borrowed). */
void page_cache_fill_locked(struct page_cache_fill *f, enum page_cache_lock_outcome outcome,
                            const char *value, size_t len);

/**
 * The fill's computation ended: rc 0 and data[0..len) (the caller's bytes, borrowed) with its
 * tag: the cache makes the value (version, TTL and cap of the spec; its computation time from
 * the fill's start, or from its computation's without a lock call), stores it when the fill
 * should (it holds the lock, or waited out another holder; SET PX behind the replies) and serves
 * it to every waiter as a miss. Or a negative errno for every waiter (a copy too old to serve
 * stands in for a Redis fault; -EAGAIN: look again). The lock, if held, is released; the fill and
 * its context are freed. rc -ECANCELED: the loop's connections are being freed (rankd stops):
 * nothing more is sent, the waiters get -EIO.
 */
void page_cache_fill_value(struct page_cache_fill *f, int rc, const char *data, size_t len,
                           const char *tag);

/** The stamp of the value the fill's computation is about to give (page_cache_fill_value);
 *  0 unless called. */
void page_cache_fill_stamp(struct page_cache_fill *f, int64_t stamp);

/** Run fn(arg) after ms on the fill's loop (its spec's `after`): 0, or -1 (then fn never runs). */
int page_cache_fill_after(struct page_cache_fill *f, int ms, void (*fn)(void *arg), void *arg);

/* ---- stats */

/** Counters for /metrics (monotonic since start; breaker_open is 0 or 1). */
struct page_cache_stats {
    unsigned long hits, misses, stale, l1_hits, lock_waits, lock_wait_timeouts, uncached,
        early_refreshes, refreshes, errors;
    unsigned long misses_on_loop; /**< fills started for a request (their lock call sent) */
    int breaker_open;
};

void page_cache_stats(struct page_cache *pc, struct page_cache_stats *out);

#endif
