/*
 * metrics.h -- process counters served as Prometheus text at GET /metrics.
 *
 * Counters are <stdatomic.h> integers: recording is lock-free and safe from any thread.
 * Requests are counted by route (a fixed label from the route table, never the raw path, so the
 * label set is bounded) and by status code; latency goes into a fixed-bucket histogram in seconds
 * (Prometheus convention), buckets from 0.5 ms to 10 s, so p99/p999/max can be read off it.
 */
#ifndef RANKD_METRICS_H
#define RANKD_METRICS_H

#include <stdint.h>

#include "util.h"

/** Most route labels a process has (the route table is smaller). */
#define METRICS_ROUTES_MAX 32

/** Register a route label; returns its index, or -1 when the table is full. Not thread-safe:
 *  call at start-up only. `name` is borrowed and must outlive the process. */
int metrics_route(const char *name);

/** Count one finished request: route index (or -1 for unmatched), status, latency in us. */
void metrics_request(int route, int status, int64_t latency_us);

/** Count one page computation (sorted-set read + render) that took `us` microseconds. */
void metrics_page_compute(int64_t us);

struct page_cache_stats;

/** Render every metric as Prometheus text into *out (appended). redis_errors comes from store.h,
 *  cache from page_cache.h. Returns 0 or -ENOMEM. */
int metrics_render(struct buf *out, unsigned long redis_errors,
                   const struct page_cache_stats *cache);

/** Render rankd_redis_writes_refused from store_write_refusal's answer (store.h: 0, -EDQUOT,
 *  -EROFS). Returns 0 or -ENOMEM. */
int metrics_render_writes(struct buf *out, int probe_rc);

/** Render the per-event-thread gauges (http.h: http_event_threads) into *out. Returns 0 or
 *  -ENOMEM. */
int metrics_render_event_threads(struct buf *out, const int *connections, const int *hit_connected,
                                 const int *write_connected, int n);

#endif
