/*
 * app.h -- the running application: the configuration, the Redis stores, the board model, the
 * page cache and the rank flow, the loops and the HTTP servers.
 *
 * A plain struct with no functions of its own: server.c builds it (rankd_start, server.h),
 * frees it, and alone reads it. Handlers never see it: they get its narrow part, struct api_ctx
 * (api.h), through every request (http_request.ctx).
 */
#ifndef RANKD_APP_H
#define RANKD_APP_H

#include "api.h"
#include "board.h"
#include "config.h"
#include "page_cache.h"
#include "pages.h"
#include "store.h"

struct loop_group;
struct httpd;
struct store_async;
struct tokens;
struct watches;

/** One event thread's own Redis connections (store_async.h). */
struct rankd_conns {
    struct store_async *reads;        /**< owned: pages, members, around, control reads */
    struct store_async *writes;       /**< owned: writes, NDJSON chunks, page fills, control */
    struct store_async *cache_reads;  /**< owned, --cache-redis only (else NULL): page GETs */
    struct store_async *cache_writes; /**< owned, likewise: page stores, locks, releases */
};

struct rankd {
    struct config cfg;              /**< a copy, immutable after start */
    struct store *reads;            /**< owned: where the event threads' read connections dial
                                     *   (store.h: the dial and the scripts; no pool) */
    struct store *writes;           /**< owned: where their write connections dial */
    struct store *cache_reads;      /**< owned, --cache-redis only (else NULL): where their read
                                     *   connections to the cache Redis dial */
    struct store *cache_writes;     /**< owned, likewise for their write connections */
    struct board_model model;       /**< borrows the stores and cfg.key_prefix */
    struct page_cache *page_cache;  /**< owned: the pages' byte cache */
    struct pages *pages;            /**< owned: the rank flow (borrows page_cache) */
    struct watches *watches;        /**< owned: the pages watched as event streams (watch.h) */
    struct loop_group *loops;       /**< owned: the event threads (loop.h) */
    struct httpd *http;             /**< owned: libmicrohttpd on each of them (httpd.h) */
    struct rankd_conns *conns;      /**< owned: per event thread */
    int nconns;                     /**< entries of conns (one per event thread) */
    char static_root[4096];         /**< real path of the web frontend, "" = not served */
    struct tokens *tokens;          /**< owned: the write tokens (tokens.h) */
    struct loop_group *admin_loops; /**< owned, --admin-listen only (else NULL): its one loop */
    struct httpd *admin_http;       /**< owned, likewise: /metrics, /admin/..., the probes */
    struct rankd_conns admin_conns; /**< owned, likewise: its loop's Redis connections */
    struct api_ctx api;             /**< what handlers see (borrows model, pages, cfg) */
};

#endif
