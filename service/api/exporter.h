/*
 * exporter.h -- GET /metrics: gathers every module's counters and gauges (metrics.h, the stores,
 * the page cache, the event threads, the process from /proc) and renders them as Prometheus
 * text, valid for `promtool check metrics` (an integration test runs it).
 *
 * It sends no Redis command and takes no lock (the counters are atomics read racily), so
 * /metrics answers at once while Redis is down or slow. It does not reach into the stores: their
 * owner (server.c) gives a callback that fills struct exporter_stores.
 */
#ifndef RANKD_EXPORTER_H
#define RANKD_EXPORTER_H

#include "metrics.h"
#include "util.h"

struct httpd;
struct pages;
struct watches;

/** What /metrics tells of the Redis stores, gathered by their owner. */
struct exporter_stores {
    const char *client_version; /**< the Redis client library's version (rankd_build_info),
                                 *   static */
    unsigned long errors;       /**< Redis errors, summed over every store */
    int write_refusal;          /**< the stores' write refusal: 0, -EDQUOT or -EROFS
                                 *   (metrics_render_writes) */
    int cluster;                /**< 1: a store is on a Redis Cluster; `cluster_counts` is the
                                 *   sum over the stores */
    struct metrics_cluster cluster_counts;
    int replicas; /**< 1: reads may go to replicas; `replica_counts` says where */
    struct metrics_replicas replica_counts;
};

/** Fill *out (zeroed by the caller) with a racy snapshot: any thread, no wait, no Redis call. */
typedef void (*exporter_stores_fn)(void *arg, struct exporter_stores *out);

/** Where /metrics reads from, besides metrics.h's counters and the event threads. */
struct exporter_sources {
    struct pages *pages;       /**< the rank flow (pages_stats), borrowed */
    struct watches *watches;   /**< the pages watched by event streams (watch.h); NULL: none */
    exporter_stores_fn stores; /**< the stores' figures; NULL: none */
    void *stores_arg;
};

/** Append the whole exposition to *out, from `src` and the event threads of `srv`. Returns 0 or
 *  -ENOMEM. Thread-safe. */
int exporter_render(const struct exporter_sources *src, const struct httpd *srv, struct buf *out);

/**
 * The process_* values of metrics.h from the text of /proc/self/stat (`stat`), the system boot
 * time in seconds since the epoch (`boot_s`, /proc/stat's btime) and the clock ticks a second
 * (`hz`): CPU seconds (utime + stime), the virtual and resident sizes (rss pages times
 * `page_bytes`) and the start time. Returns 0, or -EINVAL when the text does not parse. Pure.
 */
struct metrics_process;
int exporter_parse_stat(const char *stat, long boot_s, long hz, long page_bytes,
                        struct metrics_process *out);

#endif
