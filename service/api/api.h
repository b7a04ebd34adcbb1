/*
 * api.h -- what a handler may reach of the running service: the narrow context server.c builds
 * once (struct api_ctx) and every request carries (http_request.ctx, opaque to the HTTP side).
 *
 * Handlers see the board model, the rank flow, the two configuration values they read and the
 * sources of /metrics; not the configuration, the stores, the loops nor the HTTP servers (those
 * are server.c's, in struct rankd). A request's Redis connections are its event thread's
 * (http_async_store and the like, http.h). Built before the first request and immutable while
 * requests run: read it from any event thread without a lock.
 */
#ifndef RANKD_API_H
#define RANKD_API_H

#include "exporter.h"
#include "http.h"

struct board_model;
struct pages;
struct watches;

struct api_ctx {
    struct board_model *model;       /**< the board model (board.h), borrowed */
    struct pages *pages;             /**< the rank flow (pages.h), borrowed */
    struct watches *watches;         /**< the pages watched by event streams (watch.h), borrowed */
    const char *default_board;       /**< --default-board: the board of GET /rank without
                                      *   board=, "" for none; borrowed */
    int request_timeout_ms;          /**< --request-timeout-ms: the deadline of a request's
                                      *   calls, and of each call of a chained operation */
    struct exporter_sources metrics; /**< what GET /metrics reads (exporter.h) */
};

/** The context of request rq (server.c gave it to the HTTP server). */
static inline const struct api_ctx *api_ctx_of(const struct http_request *rq)
{
    return rq->ctx;
}

#endif
