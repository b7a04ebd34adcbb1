/*
 * page_cache.h -- rendered pages cached in Redis with a short TTL, per-key stampede protection,
 * early refresh and an optional in-process tier.
 *
 * What is cached: the exact JSON bytes of a `rank` reply, under one key per board, generation,
 * period, size, page and rank type:  P:{board}:page:<gen>:<period|->:<size>:<page>[:<rank type>]
 * (schema/redis-keys.md; no rank type for ordinal).
 * The value is a one-line header ("rankd2 <gen> <created_ms> <soft_expiry_ms> <compute_us>
 * <etag>\n", wall-clock ms) followed by the body. The key only depends on the canonical request
 * (resolved size, page, rank type), so parameter order, leading zeros and unknown parameters never
 * make a new key.
 *
 * Freshness contract (README, openapi.yaml): with Redis healthy a page is never older than the
 * board's page_ttl_ms plus one computation (plus l1_ttl_ms with the in-process tier). Past its
 * soft expiry a page is served stale (X-Cache: stale) only while one refresh is in flight or
 * failing, for at most the grace window: a copy still within page_ttl_ms plus its own computation
 * time is served and refreshed in the background; an older copy is recomputed for the request
 * that finds it (and served only if that computation fails with a Redis fault). The soft TTL is
 * 80-90% of page_ttl_ms (jittered; the last tenth is the margin for the stale copy of a busy
 * page). Delete/reset bump
 * the board generation, which is part of the key: a page computed before them can never be served
 * after them (the in-process tier excepted, for at most l1_ttl_ms).
 *
 * Stampede protection, always per exact key (never a pool of hashed slots):
 *  - in-process single-flight: concurrent misses for one key on one event thread share one
 *    computation (a fill), and a miss on another event thread waits for it (timers re-read the
 *    page);
 *  - across processes: the first miss takes the page's lock (page_fill.lua: `SET <key>:lock
 *    <token> NX PX lock_ttl` after a re-read of the cache, in one call; with the pages in a Redis
 *    of their own, SET NX PX there, then a re-read), computes, stores, releases with
 *    compare-and-delete (lua/lock_release.lua); the others re-read every 5-10 ms for at most
 *    max_wait, then compute without the lock;
 *  - XFetch (Vattani et al., PVLDB 8(8) 2015): a hit triggers an early background refresh when
 *    now - delta * beta * ln(rand()) >= soft_expiry, delta being the page's computation time;
 *  - a stale hit is served at once and refreshes in the background (at most refresh_max at once);
 *  - cache or lock Redis errors (timeouts, OOM, ...) fall back to computing uncached; after
 *    PAGE_CACHE_BREAKER_ERRORS in a row the cache is skipped for PAGE_CACHE_BREAKER_MS.
 * Everything runs on the event thread that read the request (page_cache_submit), on its own
 * connections, and never waits: a miss is one page_fill.lua call on the thread's write
 * connection (the cached page, or the lock and the rows), lock waits are timers, all within the
 * request's deadline; a background refresh is a computation nobody waits for (see page_cache.c,
 * "misses on an event loop").
 *
 * Thread-safe. Errors: -ENOENT board absent; store.h codes when the board cannot be read.
 */
#ifndef RANKD_PAGE_CACHE_H
#define RANKD_PAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "store.h"
#include "store_async.h"

#define PAGE_CACHE_BREAKER_ERRORS 5 /**< consecutive cache errors that open the breaker */
#define PAGE_CACHE_BREAKER_MS 1000  /**< how long an open breaker skips the cache */
#define PAGE_CACHE_L1_TTL_MS_MAX 500

/** Test hook: milliseconds to stall the computation of one page (NULL in production: rankd
 *  exposes no flag or variable for it; only in-process tests set it). A live page computed on
 *  an event thread calls it too, to be counted, but never stalls. */
typedef int (*page_cache_delay_fn)(const char *board, int64_t page, int size);

struct page_cache_config {
    struct store *data;        /**< board data (borrowed: names the Redis, counts its faults) */
    struct store *cache;       /**< pages and locks (borrowed); == data: the pages live with
                                *   the data; else a Redis of their own, reached through the
                                *   jobs' cache_reads and cache_writes */
    struct board_model *model; /**< borrowed */
    const char *prefix;        /**< key prefix (borrowed) */
    int grace_ms;              /**< stale window after the soft TTL; key TTL = soft + grace */
    int lock_ttl_ms;           /**< stampede lock TTL; must exceed a computation */
    int max_wait_ms;           /**< longest wait for another holder's result */
    double beta;               /**< XFetch beta; 0 turns early refresh off */
    int l1_ttl_ms;             /**< in-process tier TTL, 0 = off, <= PAGE_CACHE_L1_TTL_MS_MAX */
    size_t l1_max_bytes;       /**< in-process tier budget */
    int refresh_max;           /**< background refreshes at once */
    page_cache_delay_fn delay; /**< test hook, NULL */
};

enum page_source { PAGE_HIT = 0, PAGE_MISS, PAGE_STALE };

/** One page ready to send. Free with page_reply_free. */
struct page_reply {
    char *body;              /**< JSON, owned (NULL when not_modified) */
    size_t len;              /**< its length (also when not_modified: the 304's Content-Length) */
    char etag[48];           /**< quoted strong ETag */
    enum page_source source; /**< X-Cache */
    int64_t age_s;           /**< Age: seconds since the page was computed */
    int64_t max_age_s;       /**< seconds of soft TTL left */
    int grace_s;             /**< stale-while-revalidate */
    int cached;              /**< the board caches pages (page_ttl_ms > 0) */
    int not_modified;        /**< If-None-Match matched the current ETag: send 304 */
};

struct page_cache;

/** A new cache. Returns NULL on ENOMEM. Free with page_cache_free, once the event loops have
 *  stopped. */
struct page_cache *page_cache_new(const struct page_cache_config *cfg);

void page_cache_free(struct page_cache *pc);

void page_reply_free(struct page_reply *r);

/**
 * The in-process tier only: no Redis call, no wait (safe on an event thread). Returns 0 and
 * fills *out on a tier hit; -EAGAIN when the tier is off or does not hold the page (then use
 * page_cache_submit); -ENOMEM.
 */
int page_cache_get_l1(struct page_cache *pc, const char *board, const char *period, int64_t page,
                      int size, enum rank_type rank, const char *if_none_match,
                      struct page_reply *out);

/**
 * A page read: `page` of `size` (0: the board's page_size) of a board's `period` (NULL: the
 * current one), from the cache or computed. The caller fills the request fields (borrowed until
 * `done`) and `done`; the cache fills `out` and calls done(job, rc) exactly once, on the thread
 * that runs the connection's loop: rc 0 = out holds the page (a hit, a stale hit or a miss
 * computed; the caller frees it with page_reply_free), -ENOENT no board, a period error of
 * board_where_cached, -EAGAIN the board's periods kept changing under the request (three
 * lookups), or a store_async.h code (-ETIMEDOUT: Redis did not answer in time; answer 503).
 * `done` may free the job.
 */
struct page_cache_job {
    /* board, period and if_none_match are borrowed from the request: they live until its
     * on_completed (httpd.c), which libmicrohttpd 0.9.75 never calls while the connection is
     * suspended, i.e. before done has run. A libmicrohttpd that times out or closes suspended
     * connections would need copies here. */
    const char *board, *period; /**< period NULL = the current one */
    int64_t page;
    int size;            /**< 0 = the board's page size */
    enum rank_type rank; /**< the items' ranks (rank.h): part of the page's key */
    const char *if_none_match;
    int64_t deadline_ms;        /**< monotonic: the request's deadline (http_request.deadline_ms) */
    struct store_async *writes; /**< the loop's write connection (misses: lock, store) */
    struct store_async *cache_reads;  /**< with the pages in a Redis of their own
                                       *   (page_cache_config.cache != data): the loop's read
                                       *   connection to it (page GETs); else unused */
    struct store_async *cache_writes; /**< and its write connection (page SETs, locks) */
    /** Run fn(arg) on the loop's thread after ms (http_timer_after); 0, or -1 when it cannot
     *  (then fn never runs). ctx is after_ctx, or NULL for a timer not tied to the request (a
     *  background refresh, which may outlive it). */
    int (*after)(void *ctx, int ms, void (*fn)(void *arg), void *arg);
    void *after_ctx;
    void (*done)(struct page_cache_job *job, int rc);
    void *arg; /**< the caller's */
    struct page_reply out;
};

/**
 * Start a job on `conn`, the calling event loop's own read connection (store_async.h): its
 * lookup (HMGET of the settings + GET of the guessed page key; every lookup sent in one loop
 * iteration leaves in one pipeline, and identical lookups of one iteration, the same page of the
 * same board, are sent once and answered together), or the settings first for a period this
 * process cannot place, or page.lua for a board known to cache no pages. Never waits. Returns 0
 * (done will be called), or a negative errno without calling done (nothing sent: -ECONNREFUSED,
 * -ETIMEDOUT Redis is not answering, -ENOMEM; answer 503 now).
 */
int page_cache_submit(struct page_cache *pc, struct store_async *conn, struct page_cache_job *job);

/** Counters for /metrics (monotonic since start; breaker_open is 0 or 1). */
struct page_cache_stats {
    unsigned long hits, misses, stale, l1_hits, lock_waits, lock_wait_timeouts, uncached,
        early_refreshes, refreshes, errors;
    unsigned long batched_hits, batches; /**< the batched hit path: pages served, pipelines
                                          *   begun */
    unsigned long shared_lookups;        /**< hits that joined an identical lookup of the same loop
                                          *   iteration instead of sending their own */
    unsigned long misses_on_loop;        /**< misses computed on an event loop (page_fill.lua) */
    int breaker_open;
};

void page_cache_stats(struct page_cache *pc, struct page_cache_stats *out);

/** 1 when the If-None-Match header value matches etag (a list, W/ prefixes and * allowed). */
int page_cache_etag_matches(const char *if_none_match, const char *etag);

#endif
