/* freshness.c -- the freshness decision for a cached page; see freshness.h. */
#include "freshness.h"

#include <math.h>

int64_t fresh_soft_expiry(const struct fresh_copy *c, int ttl_ms)
{
    int64_t by_ttl = c->created_ms + ttl_ms;
    return by_ttl < c->soft_ms ? by_ttl : c->soft_ms;
}

enum fresh_verdict fresh_decide(const struct fresh_copy *c, int ttl_ms, int64_t now_ms,
                                int64_t refresh_began_ms, double beta, double rnd)
{
    int64_t soft = fresh_soft_expiry(c, ttl_ms);
    if (now_ms >= soft) {
        /* past the bound (page_ttl_ms plus its own computation), the copy is only served while
         * the refresh that replaces it runs, if that refresh began in time (the page then lags
         * by at most that one computation) */
        int64_t bound = ttl_ms + (c->delta_us + 999) / 1000;
        int began_in_time = refresh_began_ms > 0 && refresh_began_ms <= c->created_ms + bound;
        if (now_ms - c->created_ms > bound && !began_in_time)
            return FRESH_TOO_OLD;
        return FRESH_STALE_REFRESH;
    }
    if (beta > 0 && rnd > 0 &&
        (double)now_ms - (double)c->delta_us / 1000.0 * beta * log(rnd) >= (double)soft)
        return FRESH_EARLY_REFRESH;
    return FRESH_SERVE;
}
