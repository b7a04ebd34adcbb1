/*
 * freshness.h -- the freshness decision for a cached page: pure (no clock, no I/O, no random
 * source of its own: the caller passes now, the state of a refresh in flight and the random
 * draw), unit-tested without timing (test/unit/test_freshness.c). The contract it implements is
 * in page_cache.h and docs/api.md ("Page cache and freshness").
 *
 * Times are wall-clock milliseconds; a copy's computation time is in microseconds.
 */
#ifndef RANKD_FRESHNESS_H
#define RANKD_FRESHNESS_H

#include <stdint.h>

/** What a cached copy says of itself (its value header). */
struct fresh_copy {
    int64_t created_ms; /**< when it was computed */
    int64_t soft_ms;    /**< its soft expiry as computed (80-90% of the TTL then in force) */
    int64_t delta_us;   /**< how long its computation took */
};

enum fresh_verdict {
    FRESH_SERVE = 0,     /**< fresh: serve it */
    FRESH_EARLY_REFRESH, /**< fresh, and XFetch says refresh it now in the background */
    FRESH_STALE_REFRESH, /**< past its soft expiry but within the bound: serve it stale and
                          *   refresh it in the background */
    FRESH_TOO_OLD,       /**< older than page_ttl_ms plus one computation and no refresh began
                          *   in time: compute it for this request (the copy is only a fallback) */
};

/** The soft expiry under the TTL in force now: a TTL lowered since the copy was made shortens
 *  it (the contract holds for the TTL in force, not the one the copy was made under). */
int64_t fresh_soft_expiry(const struct fresh_copy *c, int ttl_ms);

/**
 * The verdict at now_ms for a copy of a board whose page_ttl_ms is ttl_ms (> 0). refresh_began_ms
 * is when a computation of the same key in flight in this process began (0: none). XFetch
 * (Vattani et al., PVLDB 8(8) 2015): with beta > 0 a fresh copy is refreshed early when
 * now - delta * beta * ln(rnd) >= soft expiry, rnd uniform in (0, 1).
 */
enum fresh_verdict fresh_decide(const struct fresh_copy *c, int ttl_ms, int64_t now_ms,
                                int64_t refresh_began_ms, double beta, double rnd);

#endif
