/*
 * watch.h -- pages pushed as server-sent events (GET .../rank?page=N, and a score range's
 * ?min=X&max=Y&page=N, with Accept: text/event-stream), and the per-process registry that makes
 * a thousand viewers of one page cost Redis what one costs.
 *
 * The registry holds one watch per canonical page request (board, period as asked or the
 * current one, page size as asked or the board's, page, rank type, a score range's bounds by
 * value (20 and 20.0 are one watch), and the `with` ids in their order): the page's last body as an
 * event (events.h: formatted once, shared by every stream), its ETag, and its viewers on any
 * event thread. One viewer owns the watch's refresh: a timer on the owner's event thread reads
 * the page through the rank flow (pages.h: the page cache, its single-flight and stampede locks)
 * once per page TTL (at least a second apart for a live page, page_ttl_ms 0), with the current
 * ETag as If-None-Match (an unchanged page comes back without its body), and a changed page is
 * fanned out to every viewer: no viewer sends a Redis command of its own. A score range's page is
 * never cached: the owner reads it (walk.lua, handlers_read_int.h: walk_read_submit) once per
 * the board's page TTL (at least a second apart), its ETag the hash of its JSON (walk_etag, as a
 * GET of it answers), and only a page whose ETag changed is fanned out. When the owner leaves,
 * another viewer takes the refresh over (on its own thread); the last viewer to leave ends the
 * watch.
 *
 * A stream (docs/api.md, "Event streams"): `retry: 1000`, then an event `page` (id: the page's
 * ETag, data: the page's JSON, as GET answers it) at once, unless Last-Event-ID is that ETag, and
 * again each time the page changes; a watch whose board is gone (or whose period can no longer
 * be read) ends each stream with an event `end` carrying the error GET answers then (404
 * board_not_found, or a score range's bound a changed layout refuses...); at shutdown each
 * stream ends with an `end` whose error is
 * shutting_down. Redis faults while watched are retried at the next refresh, the last page
 * standing. Errors before the stream starts are the usual JSON errors: the first page of a
 * page no one watches yet is read for the request (as GET reads it), a watched page's is the
 * watch's.
 *
 * Thread-safe: the registry is shared under one short lock; each stream lives on its own event
 * thread.
 */
#ifndef RANKD_WATCH_H
#define RANKD_WATCH_H

#include <stdint.h>

#include "http.h"
#include "rank.h"

struct pages;
struct rank_args;
struct watches;

/** The registry (empty) of pages read through `pages` (borrowed; it outlives the registry's
 *  reads), each read within timeout_ms (--request-timeout-ms). NULL on ENOMEM. */
struct watches *watches_new(struct pages *pages, int timeout_ms);

/** Free the registry and what is left of it, once the loops, the HTTP servers and the stores'
 *  connections are gone (after pages_free). NULL: no-op. */
void watches_free(struct watches *ws);

/** The page a stream watches (borrowed for the call). */
struct watch_page {
    const char *board;
    const char *period; /**< NULL: the current one */
    int64_t page;
    int size; /**< 0: the board's page size */
    enum rank_type rank;
    int64_t min_version; /**< for the first read of a page no one watches yet (pages_job) */
    /** a score range's page (handlers_read_int.h: from BOARD_WALK_PAGE, min and/or max; its
     *  board, period, page, size and rank those above), or NULL: a page by number */
    const struct rank_args *walk;
    /** with=: a page by number with these members wherever they are (1..BOARD_WITH_MAX ids,
     *  each once; borrowed for the call: watch_start copies them), read with the page each time
     *  (handlers_read_int.h: with_read_submit when the page came from the cache); nwith 0:
     *  none */
    const char *const *with;
    const size_t *with_lens;
    size_t nwith;
};

/**
 * Answer the async step of a page request that asked for an event stream (arguments checked):
 * join the page's watch, or read the page first (its errors are the JSON errors GET answers).
 * Calls http_async_done.
 */
void watch_start(struct watches *ws, struct http_request *rq, struct http_reply *rp,
                 struct http_async *async, const struct watch_page *p);

/** Counters for /metrics. */
struct watches_stats {
    long watched;          /**< pages watched now */
    unsigned long reads;   /**< refreshes sent (pages read for watches, all viewers together) */
    unsigned long changes; /**< new page versions fanned out */
};

void watches_stats(struct watches *ws, struct watches_stats *out);

#endif
