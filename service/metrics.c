/* metrics.c -- atomic counters and a latency histogram; see metrics.h. */
#include "metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_cache.h"

/* Status codes rankd sends, in one small table (index = position). */
static const int statuses[] = {200, 201, 204, 304, 400, 401, 403, 404,
                               405, 409, 413, 415, 422, 500, 503};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]))

/* Upper bounds in microseconds; the last bucket is +Inf. */
static const int64_t bucket_us[] = {500,    1000,   2500,   5000,    10000,   25000,   50000,
                                    100000, 250000, 500000, 1000000, 2500000, 10000000};
#define NBUCKET (sizeof(bucket_us) / sizeof(bucket_us[0]))

static const char *route_names[METRICS_ROUTES_MAX + 1] = {[METRICS_ROUTES_MAX] = "unmatched"};
static int nroutes;
static atomic_ulong requests[METRICS_ROUTES_MAX + 1][NSTATUS + 1]; /* +1: other status */
static atomic_ulong buckets[NBUCKET + 1];
static atomic_ullong latency_sum_us;
static atomic_ullong latency_max_us;
static atomic_ulong compute_buckets[NBUCKET + 1];
static atomic_ullong compute_sum_us;

int metrics_route(const char *name)
{
    for (int i = 0; i < nroutes; i++)
        if (strcmp(route_names[i], name) == 0)
            return i;
    if (nroutes >= METRICS_ROUTES_MAX)
        return -1;
    route_names[nroutes] = name;
    return nroutes++;
}

void metrics_request(int route, int status, int64_t latency_us)
{
    size_t r = route >= 0 && route < METRICS_ROUTES_MAX ? (size_t)route : METRICS_ROUTES_MAX;
    size_t s = NSTATUS;
    for (size_t i = 0; i < NSTATUS; i++)
        if (statuses[i] == status)
            s = i;
    atomic_fetch_add(&requests[r][s], 1);
    size_t b = 0;
    while (b < NBUCKET && latency_us > bucket_us[b])
        b++;
    atomic_fetch_add(&buckets[b], 1);
    unsigned long long us = latency_us > 0 ? (unsigned long long)latency_us : 0;
    atomic_fetch_add(&latency_sum_us, us);
    unsigned long long prev = atomic_load(&latency_max_us);
    while (us > prev && !atomic_compare_exchange_weak(&latency_max_us, &prev, us))
        ;
}

void metrics_page_compute(int64_t us)
{
    size_t b = 0;
    while (b < NBUCKET && us > bucket_us[b])
        b++;
    atomic_fetch_add(&compute_buckets[b], 1);
    atomic_fetch_add(&compute_sum_us, (unsigned long long)(us > 0 ? us : 0));
}

__attribute__((format(printf, 2, 3))) static int put(struct buf *out, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n < sizeof(line))
        return buf_append(out, line, (size_t)n);
    /* a longer line (a long help text) is printed whole, never cut: a cut sample line made the
     * exposition invalid */
    char *big = malloc((size_t)n + 1);
    if (!big)
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = buf_append(out, big, (size_t)n);
    free(big);
    return rc;
}

static int render_histogram(struct buf *out, const char *name, const char *help,
                            atomic_ulong *counts, unsigned long long sum_us)
{
    int rc = put(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    unsigned long cum = 0;
    for (size_t b = 0; b <= NBUCKET && !rc; b++) {
        cum += atomic_load(&counts[b]);
        if (b < NBUCKET)
            rc = put(out, "%s_bucket{le=\"%g\"} %lu\n", name, (double)bucket_us[b] / 1e6, cum);
        else
            rc = put(out, "%s_bucket{le=\"+Inf\"} %lu\n", name, cum);
    }
    return rc ? rc : put(out, "%s_sum %.6f\n%s_count %lu\n", name, (double)sum_us / 1e6, name, cum);
}

static int render_cache(struct buf *out, const struct page_cache_stats *c)
{
    const struct {
        const char *name, *help;
        unsigned long v;
    } rows[] = {
        {"hits", "pages served fresh from the cache (both tiers; stale ones count in stale)",
         c->hits},
        {"l1_hits", "pages served from the in-process tier", c->l1_hits},
        {"batched_hits",
         "pages served from Redis by an event thread on its own connection, fresh or stale",
         c->batched_hits},
        {"batches", "pipelines begun by that path", c->batches},
        {"shared_lookups",
         "hits of that path that joined an identical lookup of the same loop iteration (one "
         "HMGET + GET for all of them)",
         c->shared_lookups},
        {"misses", "pages computed for a request", c->misses},
        {"misses_on_loop",
         "misses computed on an event thread (page_fill.lua: the cached page, or the lock and the "
         "rows)",
         c->misses_on_loop},
        {"stale", "pages served past their soft TTL while refreshing", c->stale},
        {"lock_waits", "misses that waited for another holder's computation", c->lock_waits},
        {"lock_wait_timeouts", "waits that gave up after max_wait and computed",
         c->lock_wait_timeouts},
        {"uncached", "computations served without the cache (cache Redis failing)", c->uncached},
        {"early_refreshes", "XFetch early refreshes started on a hit", c->early_refreshes},
        {"refreshes", "background refreshes completed", c->refreshes},
        {"errors", "cache or lock Redis errors", c->errors},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc; i++)
        rc = put(out,
                 "# HELP rankd_page_cache_%s_total %s\n# TYPE rankd_page_cache_%s_total counter\n"
                 "rankd_page_cache_%s_total %lu\n",
                 rows[i].name, rows[i].help, rows[i].name, rows[i].name, rows[i].v);
    return rc ? rc
              : put(out,
                    "# HELP rankd_page_cache_breaker_open 1 while the cache is skipped.\n"
                    "# TYPE rankd_page_cache_breaker_open gauge\n"
                    "rankd_page_cache_breaker_open %d\n",
                    c->breaker_open);
}

int metrics_render(struct buf *out, unsigned long redis_errors,
                   const struct page_cache_stats *cache)
{
    int rc = put(out, "# HELP rankd_http_requests_total HTTP requests by route and status.\n"
                      "# TYPE rankd_http_requests_total counter\n");
    for (size_t r = 0; r <= METRICS_ROUTES_MAX && !rc; r++) {
        if (!route_names[r])
            continue;
        for (size_t s = 0; s <= NSTATUS && !rc; s++) {
            unsigned long v = atomic_load(&requests[r][s]);
            if (v == 0)
                continue;
            if (s < NSTATUS)
                rc = put(out, "rankd_http_requests_total{route=\"%s\",status=\"%d\"} %lu\n",
                         route_names[r], statuses[s], v);
            else
                rc = put(out, "rankd_http_requests_total{route=\"%s\",status=\"other\"} %lu\n",
                         route_names[r], v);
        }
    }
    rc = rc ? rc
            : put(out, "# HELP rankd_http_request_duration_seconds Request latency.\n"
                       "# TYPE rankd_http_request_duration_seconds histogram\n");
    unsigned long cum = 0;
    for (size_t b = 0; b <= NBUCKET && !rc; b++) {
        cum += atomic_load(&buckets[b]);
        if (b < NBUCKET)
            rc = put(out, "rankd_http_request_duration_seconds_bucket{le=\"%g\"} %lu\n",
                     (double)bucket_us[b] / 1e6, cum);
        else
            rc = put(out, "rankd_http_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    }
    if (rc)
        return rc;
    rc = put(out,
             "rankd_http_request_duration_seconds_sum %.6f\n"
             "rankd_http_request_duration_seconds_count %lu\n",
             (double)atomic_load(&latency_sum_us) / 1e6, cum);
    rc = rc ? rc
            : put(out,
                  "# HELP rankd_http_request_duration_max_seconds Slowest request so far.\n"
                  "# TYPE rankd_http_request_duration_max_seconds gauge\n"
                  "rankd_http_request_duration_max_seconds %.6f\n",
                  (double)atomic_load(&latency_max_us) / 1e6);
    rc = rc ? rc
            : put(out,
                  "# HELP rankd_redis_errors_total Redis faults: dial, I/O, timeouts, error "
                  "replies.\n"
                  "# TYPE rankd_redis_errors_total counter\nrankd_redis_errors_total %lu\n",
                  redis_errors);
    rc = rc ? rc
            : render_histogram(out, "rankd_page_compute_seconds",
                               "Page computations: sorted-set read and JSON rendering.",
                               compute_buckets, atomic_load(&compute_sum_us));
    return rc || !cache ? rc : render_cache(out, cache);
}

int metrics_render_event_threads(struct buf *out, const int *connections, const int *hit_connected,
                                 const int *write_connected, int n)
{
    int rc = put(out, "# HELP rankd_http_connections Open connections per event thread.\n"
                      "# TYPE rankd_http_connections gauge\n");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_http_connections{thread=\"%d\"} %d\n", i, connections[i]);
    rc = rc ? rc
            : put(out, "# HELP rankd_hit_connection_up 1 while the event thread's own Redis "
                       "connection for reads (pages, members, misses' lookups) is connected.\n"
                       "# TYPE rankd_hit_connection_up gauge\n");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_hit_connection_up{thread=\"%d\"} %d\n", i, hit_connected[i]);
    rc = rc ? rc
            : put(out, "# HELP rankd_write_connection_up 1 while the event thread's own Redis "
                       "connection for writes (scores, NDJSON chunks, page locks and stores) is "
                       "connected.\n"
                       "# TYPE rankd_write_connection_up gauge\n");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_write_connection_up{thread=\"%d\"} %d\n", i, write_connected[i]);
    return rc;
}
