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
#include "cors.h"
#include "page_cache.h"
#include "pages.h"
#include "store.h"
#include "worker.h"

struct loop_group;
struct httpd;
struct tokens;
struct watches;

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
    struct worker *workers;         /**< owned: one per event thread (worker.h) */
    int nworkers;                   /**< entries of workers */
    char static_root[4096];         /**< real path of the web frontend, "" = not served */
    struct tokens *tokens;          /**< owned: the write tokens (tokens.h) */
    struct cors cors;               /**< cfg.cors_text parsed: the origins that may read
                                     *   cross-origin (cors.h) */
    struct loop_group *admin_loops; /**< owned, --admin-listen only (else NULL): its one loop */
    struct httpd *admin_http;       /**< owned, likewise: /metrics, /admin/..., the probes */
    struct worker admin_worker;     /**< owned, likewise: its loop's worker */
    struct api_ctx api;             /**< what handlers see (borrows model, pages, cfg) */
};

#endif
