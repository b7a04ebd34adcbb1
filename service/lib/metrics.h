/*
 * metrics.h -- process counters served as Prometheus text at GET /metrics (exporter.h gathers
 * the gauges of the other modules and calls the render functions below).
 *
 * Counters are <stdatomic.h> integers: recording is lock-free and safe from any thread. Each
 * recording thread adds to one of METRICS_SHARDS shards (threads take them in turn), so the event
 * threads never write the same cache line: the per-request counters cost a few uncontended
 * atomic adds. Rendering sums the shards.
 *
 * Requests are counted by route (a fixed label from the route table, never the raw path, so the
 * label set is bounded) and by status code; their latency goes into a histogram per route and
 * status class (2xx, 4xx...), in seconds (Prometheus convention), buckets from 0.1 ms to 10 s.
 * Writes are counted per entry (a batch's entries, an NDJSON upload's lines) by op and outcome.
 */
#ifndef RANKD_METRICS_H
#define RANKD_METRICS_H

#include <stdint.h>

#include "util.h"

/** Most route labels a process has (the route table is smaller). */
#define METRICS_ROUTES_MAX 32
/** Shards of the counters (see above). */
#define METRICS_SHARDS 8

/** Register a route label; returns its index, or -1 when the table is full. Not thread-safe:
 *  call at start-up only. `name` is borrowed and must outlive the process. */
int metrics_route(const char *name);

/** Count one finished request: route index (or -1 for unmatched), status (0: none sent),
 *  latency in us. */
void metrics_request(int route, int status, int64_t latency_us);

/** Count one page computation (sorted-set read + render) that took `us` microseconds. */
void metrics_page_compute(int64_t us);

/** Write ops, as board.h's enum board_op (set 0, best 1, incr 2), and entries whose op could not
 *  be read (an invalid JSON line or entry). */
enum metrics_write_op {
    METRICS_OP_SET = 0,
    METRICS_OP_BEST,
    METRICS_OP_INCR,
    METRICS_OP_UNKNOWN,
    METRICS_OPS
};

/** Count one written entry (`applied` 1) or one refused for what it holds (`applied` 0: a score
 *  the board cannot hold, a result out of range, an invalid entry or line). `op` is an enum
 *  metrics_write_op (anything else counts as unknown). */
void metrics_write(int op, int applied);

/** The version, revision and libraries this binary was built with (rankd_build_info). */
struct metrics_build {
    const char *version, *revision, *libmicrohttpd, *hiredis, *cjson;
};

/** Render rankd_redis_writes_refused from store_write_refusal's answer (store.h: 0, -EDQUOT,
 *  -EROFS). Returns 0 or -ENOMEM. */
int metrics_render_writes(struct buf *out, int probe_rc);

/** A Redis Cluster's answers, summed over rankd's stores (store.h's store_cluster_counts). */
struct metrics_cluster {
    unsigned long moved, ask, tryagain, down, map_reads;
};

/** Render the cluster families (only for a cluster: rankd_redis_cluster_*). 0 or -ENOMEM. */
int metrics_render_cluster(struct buf *out, const struct metrics_cluster *c);

/** Where the reads that may go to a replica went (--read-from-replicas: store.h's
 *  store_replica_counts of the reads' store). */
struct metrics_replicas {
    unsigned long replica, fallback, no_replica, stale, discoveries;
};

/** Render rankd_redis_replica_reads_total{to} and rankd_redis_replica_discoveries_total (only
 *  with --read-from-replicas). 0 or -ENOMEM. */
int metrics_render_replicas(struct buf *out, const struct metrics_replicas *r);

/** Event streams (events.h) and the pages they watch (watch.h). */
struct metrics_streams {
    long open;                /**< streams open now */
    unsigned long opened;     /**< since start */
    unsigned long refused;    /**< refused by --max-streams or --max-streams-per-ip */
    unsigned long events;     /**< events sent (heartbeats not counted) */
    long watched;             /**< pages watched now */
    unsigned long page_reads; /**< pages read for their viewers (one per page and TTL) */
    unsigned long changes;    /**< new page versions fanned out */
};

/** Render the rankd_streams* and rankd_watch* families. 0 or -ENOMEM. */
int metrics_render_streams(struct buf *out, const struct metrics_streams *s);

/** The process_* family: what a Prometheus client library exports for its process. */
struct metrics_process {
    double cpu_seconds;        /**< user + system */
    double resident_bytes;     /**< RSS */
    double virtual_bytes;      /**< address space */
    double start_time_seconds; /**< since the Unix epoch */
    long open_fds;             /**< -1: unknown */
    long max_fds;              /**< the soft limit; -1: unknown */
};

/** Render the counters as Prometheus text into *out (appended): requests, latency histograms,
 *  writes, page computations, build info, process_*, `redis_errors` (store.h), `log_dropped`
 *  (log.h). The families of modules above lib/ (the page cache's) are rendered by whoever
 *  gathers them, with metrics_render_counters and metrics_render_gauge. Returns 0 or -ENOMEM. */
int metrics_render(struct buf *out, const struct metrics_build *build,
                   const struct metrics_process *proc, unsigned long redis_errors,
                   unsigned long log_dropped);

/** One counter of a family another module keeps (the page cache's: api/exporter.c). */
struct metrics_counter {
    const char *name;    /**< the family's name between the prefix and "_total" */
    const char *help;    /**< its HELP text */
    unsigned long value; /**< the count */
};

/** Render c[0..n) as counter families "<prefix><name>_total", each with its HELP and TYPE
 *  lines, into *out (appended). Returns 0 or -ENOMEM. */
int metrics_render_counters(struct buf *out, const char *prefix, const struct metrics_counter *c,
                            size_t n);

/** Render one gauge family `name` with its HELP and TYPE lines and `value`. 0 or -ENOMEM. */
int metrics_render_gauge(struct buf *out, const char *name, const char *help, long value);

/** States of a Redis connection of an event thread. */
enum metrics_conn_state { METRICS_CONN_DOWN = 0, METRICS_CONN_DIALLING, METRICS_CONN_UP };

/** One Redis connection of an event thread (store_async.h fills it). */
struct metrics_conn {
    unsigned long long round_trips; /**< pipelines written (one write, its replies awaited) */
    unsigned long long commands;    /**< commands in them */
    int in_flight;                  /**< groups written or queued, not answered yet */
    int state;                      /**< enum metrics_conn_state */
};

/** One event thread (http.h fills it). */
struct metrics_thread {
    int connections; /**< HTTP connections given to it */
    int busy;        /**< of those, with a request in progress on the thread */
    int waiting;     /**< of those, suspended: for Redis or a timer */
    struct metrics_conn reads, writes;
};

/** Render the per-event-thread families (HTTP connection states, Redis connection states, round
 *  trips, commands, groups in flight) for threads[0..n). Returns 0 or -ENOMEM. */
int metrics_render_event_threads(struct buf *out, const struct metrics_thread *threads, int n);

#endif
