/*
 * server.h -- the application: configuration, Redis stores, board model and HTTP server wired
 * together. main.c runs one; the integration tests run one in-process on port 0.
 */
#ifndef RANKD_SERVER_H
#define RANKD_SERVER_H

#include "board.h"
#include "config.h"
#include "page_cache.h"
#include "store.h"

struct rankd {
    struct config cfg;          /**< a copy, immutable after start */
    struct store *reads;        /**< owned: where the event threads' read connections dial
                                 *   (store.h: the dial and the scripts; no pool) */
    struct store *writes;       /**< owned: where their write connections dial */
    struct store *cache_reads;  /**< owned, --cache-redis only (else NULL): where their
                                 *   read connections to the cache Redis dial */
    struct store *cache_writes; /**< owned, likewise for their write connections */
    struct board_model model;   /**< borrows the stores and cfg.key_prefix */
    struct page_cache *pages;   /**< owned */
    struct http_server *http;   /**< owned */
    char static_root[4096];     /**< real path of the web frontend, "" = not served */
};

/** Test hooks; production passes NULL (rankd has no flag or variable for them). */
struct rankd_hooks {
    page_cache_delay_fn page_delay; /**< stall page computations */
    int64_t (*clock_ms)(void);      /**< the wall clock periods are computed from */
};

/**
 * Start rankd with `cfg` (copied). Redis need not be up: requests answer 503 until it is.
 * Returns NULL with *err set (-EADDRINUSE when the listen address is taken, -EINVAL, -ENOMEM).
 * Stop with rankd_stop.
 */
struct rankd *rankd_start(const struct config *cfg, int *err);

/** rankd_start with test hooks (may be NULL). */
struct rankd *rankd_start_hooked(const struct config *cfg, const struct rankd_hooks *hooks,
                                 int *err);

/** The HTTP port rankd listens on. */
int rankd_port(const struct rankd *app);

/** The real path of the directory served at `/` ("" when none). Borrowed. */
const char *rankd_static_root(const struct rankd *app);

/** The configured write token ("" when writes are disabled). Borrowed. */
const char *rankd_write_token(const struct rankd *app);

/** Stop serving and free everything. NULL is a no-op. */
void rankd_stop(struct rankd *app);

#endif
