/*
 * server.h -- the application's lifecycle: configuration, Redis stores, board model, page cache,
 * rank flow, event loops and HTTP server wired together (struct rankd, app.h). main.c runs one; the
 * integration tests run one in-process on port 0. The top of the dependency graph: main ->
 * server -> httpd -> route -> handlers -> pages -> board, page_cache -> store_async -> loop,
 * store.
 */
#ifndef RANKD_SERVER_H
#define RANKD_SERVER_H

#include "app.h"

/** Test hooks; production passes NULL (rankd has no flag or variable for them). */
struct rankd_hooks {
    pages_delay_fn page_delay; /**< stall page computations */
    int64_t (*clock_ms)(void); /**< the wall clock periods are computed from */
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

/** The port of the admin listener (--admin-listen), or -1 without one. */
int rankd_admin_port(const struct rankd *app);

/** The real path of the directory served at `/` ("" when none). Borrowed. */
const char *rankd_static_root(const struct rankd *app);

/** The write tokens (tokens.h); none in force = writes disabled. Borrowed. */
struct tokens *rankd_tokens(const struct rankd *app);

/** What SIGHUP does: read the --write-token-file again (tokens.h) and log the outcome (info:
 *  how many tokens are in force; error: why the file was refused, the old tokens staying). */
void rankd_reload(struct rankd *app);

/** Stop serving and free everything. NULL is a no-op. */
void rankd_stop(struct rankd *app);

#endif
