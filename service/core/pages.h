/*
 * pages.h -- the rank flow: a board's page from the request to the reply. The board view (the
 * period placed from this process's hint, or from the settings) -> the page key -> the cache
 * (page_cache.h) -> the rows (page.lua, or page_fill.lua on a miss) -> the JSON body (rendered
 * by the caller's pages_config.render) -> a page_reply with its HTTP metadata (ETag, Age,
 * max-age, X-Cache, 304).
 *
 * Read your writes: a page value's stamp is the board's write counter (`version` of the settings
 * hash, which every write.lua call bumps) that its rows were read at, in the same script; a
 * request with min_version V takes no page of a smaller stamp (pages_job.min_version). The stamp
 * is the value's, whatever the page's rank type: each rank type's page is its own value.
 *
 * The page key, one per board, generation, period, size, page and rank type (rank.h):
 *   P:{board}:page:<gen>:<period|->:<size>:<page>[:<rank type>]  (schema/redis-keys.md; no rank
 * type for ordinal), made from the canonical request (resolved size, page, rank type), so
 * parameter order, leading zeros and unknown parameters never make a new key. The cached value is
 * the page cache's value of the exact JSON bytes of the `rank` reply, with the board generation as
 * its version and the page's strong ETag (the generation and a hash of the body) as its tag; a
 * current-period page is fresh no longer than its period. Delete and reset bump the generation: a
 * page computed before them is never served after them (the in-process tier excepted, for at most
 * l1_ttl_ms). With Redis healthy a page is never older than the board's page_ttl_ms plus one
 * computation (plus l1_ttl_ms with the in-process tier): the freshness contract (docs/api.md,
 * openapi.yaml), which the page cache keeps.
 *
 * Everything runs on the event thread that read the request (pages_submit), on its own
 * connections, and never waits:
 *  - a hit is one command, page_get.lua: HMGET of the settings the key needs and GET of the page
 *    key guessed from what this process last saw of the board (its generation, page size, TTL),
 *    pipelined with the loop's other lookups and shared by identical ones of the same loop
 *    iteration (store_async_script_shared); the
 *    settings decide (a wrong guess costs one more GET). A period this process cannot place from
 *    memory is placed from the settings (one HGETALL first); periods that moved under the lookup
 *    are learnt and the lookup made again; a read cut by a lost connection is sent once more;
 *  - a miss is a page cache fill whose lock call is page_fill.lua on the loop's write connection
 *    (the page stored meanwhile, or the lock and the rows in one call; registered here) and whose
 *    computation without the lock is page.lua on the read connection; the rows are rendered on
 *    the thread;
 *  - a live page (page_ttl_ms 0) is one page.lua call, never stored;
 *  - with the pages in a Redis of their own (--cache-redis) the settings and the rows come from
 *    the data Redis, the page GETs, the lock, the store and the release go to the loop's
 *    connections to the cache Redis (whose faults open the cache's breaker: the page is then
 *    computed uncached).
 *
 * Thread-safe. Errors: -ENOENT board absent; period errors of board_where_cached; -EAGAIN the
 * board's periods kept changing under the request (three lookups); store_async.h codes (503).
 */
#ifndef RANKD_PAGES_H
#define RANKD_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "page_cache.h"
#include "store.h"
#include "store_async.h"

/** Test hook: milliseconds to stall the computation of one page (NULL in production: rankd
 *  exposes no flag or variable for it; only in-process tests set it). A live page computed on
 *  an event thread calls it too, to be counted, but never stalls. */
typedef int (*pages_delay_fn)(const char *board, int64_t page, int size);

/** Renders a page's rows as the JSON body the cache stores and the client gets: a new
 *  NUL-terminated string that the flow frees with free(), or NULL on ENOMEM. The flow knows no
 *  JSON: the API's render_page (render.h) is handed in through pages_config.render. Called on
 *  the event thread that computed the rows, for a miss or a live page; `p` is borrowed. */
typedef char *(*pages_render_fn)(const char *board, int64_t page, const struct board_page *p);

struct pages_config {
    struct store *data;        /**< board data (borrowed: names the Redis, counts its faults) */
    struct page_cache *cache;  /**< the pages' cache (borrowed; outlives the flow's jobs) */
    int cache_apart;           /**< 1: the pages live in a Redis of their own, reached through
                                *   the jobs' cache_reads and cache_writes; 0: with the data */
    struct board_model *model; /**< borrowed */
    const char *prefix;        /**< key prefix (borrowed) */
    pages_render_fn render;    /**< the rows into a body (required) */
    pages_delay_fn delay;      /**< test hook, NULL */
};

/** One page ready to send. Free with page_reply_free. */
struct page_reply {
    char *body;              /**< JSON, owned (NULL when not_modified) */
    size_t len;              /**< its length (also when not_modified: the 304's Content-Length) */
    size_t cap;              /**< SPARE_BODY_BYTES when body is a spare block of that size
                              *   (spare.h), else 0 (len + 1 bytes or more); free() takes both.
                              *   Whoever puts another body here sets it (0) with it. */
    char etag[48];           /**< quoted strong ETag */
    enum page_source source; /**< X-Cache */
    int64_t age_s;           /**< Age: seconds since the page was computed */
    int64_t max_age_s;       /**< seconds of soft TTL left */
    int grace_s;             /**< stale-while-revalidate */
    int cached;              /**< the board caches pages (page_ttl_ms > 0) */
    int ttl_ms;              /**< the board's page_ttl_ms as the read found it (0: a live page;
                              *   also 0 from pages_get_l1, which does not know it) */
    int not_modified;        /**< If-None-Match matched the current ETag: send 304 */
    int with_done;           /**< the job's `with` members are in the body (a live page read
                              *   them in its one page.lua call); 0: the body is the page alone
                              *   (from the cache or a fill), the caller reads them */
};

void page_reply_free(struct page_reply *r);

/** A page's strong ETag: its generation and a hash of its bytes, quoted (out: 48 bytes). */
void page_etag(int64_t gen, const char *body, size_t len, char out[48]);

struct pages;

/** The flow (registers lua/page_fill.lua with the store: call before the stores dial). Returns
 *  NULL on ENOMEM. Free with pages_free. */
struct pages *pages_new(const struct pages_config *cfg);

/** Free the flow. NULL is a no-op. After page_cache_free of its cache (fills left on the timers
 *  of stopped loops hold contexts of the flow's). */
void pages_free(struct pages *pg);

/** 1 when the If-None-Match header value `if_none_match` names `etag` (a quoted ETag): a
 *  comma-separated list, W/ prefixes and * allowed; else 0. Pure. */
int pages_etag_matches(const char *if_none_match, const char *etag);

/**
 * The in-process tier only: no Redis call, no wait (safe on an event thread). Returns 0 and
 * fills *out on a tier hit; -EAGAIN when the tier is off or does not hold the page (then use
 * pages_submit); -ENOMEM.
 */
int pages_get_l1(struct pages *pg, const char *board, const char *period, int64_t page, int size,
                 enum rank_type rank, int64_t min_version, const char *if_none_match,
                 struct page_reply *out);

/**
 * A page read: `page` of `size` (0: the board's page_size) of a board's `period` (NULL: the
 * current one), from the cache or computed. The caller fills the request fields (borrowed until
 * `done`) and `done`; the flow fills `out` and calls done(job, rc) exactly once, on the thread
 * that runs the connection's loop: rc 0 = out holds the page (a hit, a stale hit or a miss
 * computed; the caller frees it with page_reply_free), -ENOENT no board, a period error of
 * board_where_cached, -EAGAIN the board's periods kept changing under the request (three
 * lookups), or a store_async.h code (-ETIMEDOUT: Redis did not answer in time; answer 503).
 * `done` may free the job.
 */
struct pages_job {
    /* board, period and if_none_match are borrowed from the request: they live until its
     * on_completed (httpd.c), which libmicrohttpd 0.9.75 never calls while the connection is
     * suspended, i.e. before done has run. A libmicrohttpd that times out or closes suspended
     * connections would need copies here. */
    const char *board, *period; /**< period NULL = the current one */
    int64_t page;
    int size;            /**< 0 = the board's page size */
    enum rank_type rank; /**< the items' ranks (rank.h): part of the page's key */
    int64_t min_version; /**< never a page computed before the board's write counter
                          *   reached this (a write's `version`; 0: any): an older cached
                          *   page is a miss, computed with the same stampede protection,
                          *   and a fill in flight that turns out older is looked up again */
    const char *if_none_match;
    /** `with` (GET .../rank?with=): 0..BOARD_WITH_MAX ids, each once (borrowed). A live page
     *  reads them in its page.lua call and renders them (page_reply.with_done); a cached page is
     *  served as it is, and the caller reads them (one more command). */
    const char *const *with;
    const size_t *with_lens;
    size_t nwith;
    int64_t deadline_ms;        /**< monotonic: the request's deadline (http_request.deadline_ms) */
    struct store_async *writes; /**< the loop's write connection (misses: lock, store) */
    struct store_async *cache_reads;  /**< with the pages in a Redis of their own
                                       *   (pages_config.cache_apart): the loop's read
                                       *   connection to it (page GETs); else unused */
    struct store_async *cache_writes; /**< and its write connection (page SETs, locks) */
    /** Run fn(arg) on the loop's thread after ms (http_timer_after); 0, or -1 when it cannot
     *  (then fn never runs). ctx is after_ctx, or NULL for a timer not tied to the request (a
     *  background refresh, which may outlive it). */
    int (*after)(void *ctx, int ms, void (*fn)(void *arg), void *arg);
    void *after_ctx;
    void (*done)(struct pages_job *job, int rc);
    void *arg; /**< the caller's */
    struct page_reply out;
};

/**
 * Start a job on `conn`, the calling event loop's own read connection (store_async.h): its
 * lookup (page_get.lua: HMGET of the settings and GET of the guessed page key; every lookup sent
 * in one loop iteration leaves in one pipeline, and identical lookups of one iteration, the same
 * page of the same board, are sent once and answered together), or the settings first for a
 * period this
 * process cannot place, or page.lua for a board known to cache no pages. Never waits. Returns 0
 * (done will be called), or a negative errno without calling done (nothing sent: -ECONNREFUSED,
 * -ETIMEDOUT Redis is not answering, -ENOMEM; answer 503 now).
 */
int pages_submit(struct pages *pg, struct store_async *conn, struct pages_job *job);

/** Counters for /metrics: the cache's, and the event threads' lookups (monotonic). */
struct pages_stats {
    struct page_cache_stats cache;
    unsigned long batched_hits;   /**< pages served from the lookups' replies, fresh or stale */
    unsigned long batches;        /**< pipelines those lookups began */
    unsigned long shared_lookups; /**< lookups that joined an identical one of the same loop
                                   *   iteration instead of sending their own */
};

void pages_stats(struct pages *pg, struct pages_stats *out);

#endif
