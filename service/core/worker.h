/*
 * worker.h -- one event thread's worker: the Redis connections (store_async.h) that the async
 * steps of the thread's requests use. The worker, not the HTTP exchange, owns them.
 *
 * Who does what: server.c builds one worker per event thread (and one for the admin listener's
 * loop), dials and starts its connections on that loop, and frees them once the loops have
 * stopped (no request is suspended then). The HTTP exchange carries the worker as an opaque
 * pointer (httpd_attach) and gives it back to a request's async step (http_async_worker); the
 * handlers take the connection they need with the calls below and hand it to the model. A
 * worker is used on its own event thread only (store_async.h: a connection is not thread-safe),
 * so it needs no lock; /metrics reads its connections' counters through server.c's stats
 * callback (httpd_options.worker_stats), which store_async_stats makes safe from any thread.
 */
#ifndef RANKD_WORKER_H
#define RANKD_WORKER_H

#include <stddef.h>

struct store_async;

struct worker {
    struct store_async *reads;        /**< owned: pages, members, around, control reads */
    struct store_async *writes;       /**< owned: writes, NDJSON chunks, page fills, control (a
                                       *   connection of its own: a write held by Redis, as under
                                       *   CLIENT PAUSE WRITE, must not hold up the reads
                                       *   pipelined behind it) */
    struct store_async *cache_reads;  /**< owned, --cache-redis only (else NULL): page GETs */
    struct store_async *cache_writes; /**< owned, likewise: page stores, locks, releases */
};

/** The read connection of w; NULL when w is NULL (http_async_worker off its thread). Borrowed. */
static inline struct store_async *worker_reads(const struct worker *w)
{
    return w ? w->reads : NULL;
}

/** The write connection of w, as worker_reads. */
static inline struct store_async *worker_writes(const struct worker *w)
{
    return w ? w->writes : NULL;
}

/** The connection of w to the cache Redis (writes: its write connection), as worker_reads;
 *  NULL without --cache-redis. */
static inline struct store_async *worker_cache(const struct worker *w, int writes)
{
    return !w ? NULL : writes ? w->cache_writes : w->cache_reads;
}

#endif
