/* metrics.c -- sharded atomic counters, latency histograms, Prometheus text; see metrics.h. */
#include "metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Status codes rankd sends, in one small table (index = position); others count as "other". */
static const int statuses[] = {200, 201, 204, 304, 400, 401, 403, 404, 405, 409,
                               411, 413, 415, 422, 431, 500, 501, 503, 507};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]))

/* Status classes: index status / 100 for 1xx..5xx, 0 for none (no reply sent) or odd codes. */
static const char *const classes[] = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};
#define NCLASS (sizeof(classes) / sizeof(classes[0]))

/* Upper bounds in microseconds; the last bucket is +Inf. */
static const int64_t bucket_us[] = {100,   250,    500,    1000,   2500,    5000,    10000,   25000,
                                    50000, 100000, 250000, 500000, 1000000, 2500000, 10000000};
#define NBUCKET (sizeof(bucket_us) / sizeof(bucket_us[0]))
#define NROUTE (METRICS_ROUTES_MAX + 1) /* + unmatched */

static const char *const op_names[METRICS_OPS] = {"set", "best", "incr", "unknown"};

static const char *route_names[NROUTE] = {[METRICS_ROUTES_MAX] = "unmatched"};
static int nroutes;

/* One thread group's counters; shards are cache-line aligned, so threads of different shards
 * never share a line. */
struct shard {
    _Alignas(64) atomic_ulong requests[NROUTE][NSTATUS + 1]; /* +1: other status */
    atomic_ulong latency[NROUTE][NCLASS][NBUCKET + 1];       /* +1: +Inf */
    atomic_ullong latency_sum_us[NROUTE][NCLASS];
    atomic_ulong writes[METRICS_OPS][2]; /* [op][applied] */
    atomic_ulong compute[NBUCKET + 1];
    atomic_ullong compute_sum_us;
};

static struct shard shards[METRICS_SHARDS];
static atomic_int next_shard;
static atomic_ullong latency_max_us;

static struct shard *my_shard(void)
{
    static __thread struct shard *mine;
    if (!mine)
        mine = &shards[(unsigned)atomic_fetch_add(&next_shard, 1) % METRICS_SHARDS];
    return mine;
}

#define ADD(counter, n) atomic_fetch_add_explicit(&(counter), (n), memory_order_relaxed)
#define LOAD(counter) atomic_load_explicit(&(counter), memory_order_relaxed)

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

static size_t bucket_of(int64_t us)
{
    size_t b = 0;
    while (b < NBUCKET && us > bucket_us[b])
        b++;
    return b;
}

void metrics_request(int route, int status, int64_t latency_us)
{
    struct shard *sh = my_shard();
    size_t r = route >= 0 && route < METRICS_ROUTES_MAX ? (size_t)route : METRICS_ROUTES_MAX;
    size_t s = NSTATUS;
    for (size_t i = 0; i < NSTATUS; i++)
        if (statuses[i] == status)
            s = i;
    size_t c = status >= 100 && status < 600 ? (size_t)(status / 100) : 0;
    unsigned long long us = latency_us > 0 ? (unsigned long long)latency_us : 0;
    ADD(sh->requests[r][s], 1);
    ADD(sh->latency[r][c][bucket_of(latency_us)], 1);
    ADD(sh->latency_sum_us[r][c], us);
    unsigned long long prev = LOAD(latency_max_us);
    while (us > prev && !atomic_compare_exchange_weak(&latency_max_us, &prev, us))
        ;
}

void metrics_page_compute(int64_t us)
{
    struct shard *sh = my_shard();
    ADD(sh->compute[bucket_of(us)], 1);
    ADD(sh->compute_sum_us, (unsigned long long)(us > 0 ? us : 0));
}

void metrics_write(int op, int applied)
{
    size_t o = op >= 0 && op < METRICS_OPS ? (size_t)op : METRICS_OP_UNKNOWN;
    ADD(my_shard()->writes[o][applied ? 1 : 0], 1);
}

/* ---------------------------------------------------------------- rendering */

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

/* "# HELP name help\n# TYPE name type\n" */
static int head(struct buf *out, const char *name, const char *type, const char *help)
{
    return put(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram series: buckets (cumulative), _sum and _count; `labels` is "" or `a="b",`. */
static int histogram_series(struct buf *out, const char *name, const char *labels,
                            const unsigned long *counts, unsigned long long sum_us)
{
    unsigned long cum = 0;
    int rc = 0;
    for (size_t b = 0; b <= NBUCKET && !rc; b++) {
        cum += counts[b];
        if (b < NBUCKET)
            rc = put(out, "%s_bucket{%sle=\"%g\"} %lu\n", name, labels, (double)bucket_us[b] / 1e6,
                     cum);
        else
            rc = put(out, "%s_bucket{%sle=\"+Inf\"} %lu\n", name, labels, cum);
    }
    size_t n = strlen(labels);
    char braces[160] = "";
    if (n) /* {a="b"} without the trailing comma */
        snprintf(braces, sizeof(braces), "{%.*s}", (int)(n - 1), labels);
    return rc ? rc
              : put(out, "%s_sum%s %.6f\n%s_count%s %lu\n", name, braces, (double)sum_us / 1e6,
                    name, braces, cum);
}

static int render_requests(struct buf *out)
{
    int rc =
        head(out, "rankd_http_requests_total", "counter", "HTTP requests by route and status.");
    for (size_t r = 0; r < NROUTE && !rc; r++) {
        if (!route_names[r])
            continue;
        for (size_t s = 0; s <= NSTATUS && !rc; s++) {
            unsigned long v = 0;
            for (int k = 0; k < METRICS_SHARDS; k++)
                v += LOAD(shards[k].requests[r][s]);
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
            : head(out, "rankd_http_request_duration_seconds", "histogram",
                   "Request latency, from the request's first byte to its reply sent, by route "
                   "and status class.");
    for (size_t r = 0; r < NROUTE && !rc; r++) {
        if (!route_names[r])
            continue;
        for (size_t c = 0; c < NCLASS && !rc; c++) {
            unsigned long counts[NBUCKET + 1] = {0}, total = 0;
            unsigned long long sum = 0;
            for (int k = 0; k < METRICS_SHARDS; k++) {
                for (size_t b = 0; b <= NBUCKET; b++)
                    counts[b] += LOAD(shards[k].latency[r][c][b]);
                sum += LOAD(shards[k].latency_sum_us[r][c]);
            }
            for (size_t b = 0; b <= NBUCKET; b++)
                total += counts[b];
            if (total == 0)
                continue;
            char labels[128];
            snprintf(labels, sizeof(labels), "route=\"%s\",status_class=\"%s\",", route_names[r],
                     classes[c]);
            rc = histogram_series(out, "rankd_http_request_duration_seconds", labels, counts, sum);
        }
    }
    return rc ? rc
              : put(out,
                    "# HELP rankd_http_request_duration_max_seconds Slowest request so far.\n"
                    "# TYPE rankd_http_request_duration_max_seconds gauge\n"
                    "rankd_http_request_duration_max_seconds %.6f\n",
                    (double)LOAD(latency_max_us) / 1e6);
}

static int render_writes(struct buf *out)
{
    int rc = head(out, "rankd_writes_total", "counter",
                  "Score entries (batch entries, NDJSON lines) applied, or rejected for what "
                  "they hold (a score the board cannot hold, a result out of range, an invalid "
                  "entry: op unknown), by op.");
    for (int o = 0; o < METRICS_OPS && !rc; o++)
        for (int a = 1; a >= 0 && !rc; a--) {
            unsigned long v = 0;
            for (int k = 0; k < METRICS_SHARDS; k++)
                v += LOAD(shards[k].writes[o][a]);
            rc = put(out, "rankd_writes_total{op=\"%s\",result=\"%s\"} %lu\n", op_names[o],
                     a ? "applied" : "rejected", v);
        }
    return rc;
}

static int render_compute(struct buf *out)
{
    unsigned long counts[NBUCKET + 1] = {0};
    unsigned long long sum = 0;
    for (int k = 0; k < METRICS_SHARDS; k++) {
        for (size_t b = 0; b <= NBUCKET; b++)
            counts[b] += LOAD(shards[k].compute[b]);
        sum += LOAD(shards[k].compute_sum_us);
    }
    int rc = head(out, "rankd_page_compute_seconds", "histogram",
                  "Page computations: sorted-set read and JSON rendering.");
    return rc ? rc : histogram_series(out, "rankd_page_compute_seconds", "", counts, sum);
}

int metrics_render_counters(struct buf *out, const char *prefix, const struct metrics_counter *c,
                            size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = put(out, "# HELP %s%s_total %s\n# TYPE %s%s_total counter\n%s%s_total %lu\n", prefix,
                 c[i].name, c[i].help, prefix, c[i].name, prefix, c[i].name, c[i].value);
    return rc;
}

int metrics_render_gauge(struct buf *out, const char *name, const char *help, long value)
{
    int rc = head(out, name, "gauge", help);
    return rc ? rc : put(out, "%s %ld\n", name, value);
}

static int render_process(struct buf *out, const struct metrics_process *p)
{
    int rc = put(out,
                 "# HELP process_cpu_seconds_total Total user and system CPU time spent in "
                 "seconds.\n# TYPE process_cpu_seconds_total counter\n"
                 "process_cpu_seconds_total %.6f\n"
                 "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                 "# TYPE process_resident_memory_bytes gauge\n"
                 "process_resident_memory_bytes %.0f\n"
                 "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
                 "# TYPE process_virtual_memory_bytes gauge\n"
                 "process_virtual_memory_bytes %.0f\n"
                 "# HELP process_start_time_seconds Start time of the process since unix epoch "
                 "in seconds.\n# TYPE process_start_time_seconds gauge\n"
                 "process_start_time_seconds %.2f\n",
                 p->cpu_seconds, p->resident_bytes, p->virtual_bytes, p->start_time_seconds);
    if (!rc && p->open_fds >= 0)
        rc = put(out,
                 "# HELP process_open_fds Number of open file descriptors.\n"
                 "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
                 p->open_fds);
    if (!rc && p->max_fds >= 0)
        rc = put(out,
                 "# HELP process_max_fds Maximum number of open file descriptors.\n"
                 "# TYPE process_max_fds gauge\nprocess_max_fds %ld\n",
                 p->max_fds);
    return rc;
}

int metrics_render(struct buf *out, const struct metrics_build *build,
                   const struct metrics_process *proc, unsigned long redis_errors,
                   unsigned long log_dropped)
{
    int rc = head(out, "rankd_build_info", "gauge",
                  "Always 1: the version and git revision of this rankd and the libraries it "
                  "runs with.");
    rc = rc ? rc
            : put(out,
                  "rankd_build_info{version=\"%s\",revision=\"%s\",libmicrohttpd=\"%s\","
                  "hiredis=\"%s\",cjson=\"%s\"} 1\n",
                  build->version, build->revision, build->libmicrohttpd, build->hiredis,
                  build->cjson);
    rc = rc ? rc : render_process(out, proc);
    rc = rc ? rc : render_requests(out);
    rc = rc ? rc : render_writes(out);
    rc = rc ? rc
            : put(out,
                  "# HELP rankd_redis_errors_total Redis faults: dial, I/O, timeouts, error "
                  "replies.\n"
                  "# TYPE rankd_redis_errors_total counter\nrankd_redis_errors_total %lu\n"
                  "# HELP rankd_log_lines_dropped_total Log lines dropped because the log's "
                  "output did not keep up (requests never wait for it).\n"
                  "# TYPE rankd_log_lines_dropped_total counter\n"
                  "rankd_log_lines_dropped_total %lu\n",
                  redis_errors, log_dropped);
    return rc ? rc : render_compute(out);
}

int metrics_render_cluster(struct buf *out, const struct metrics_cluster *c)
{
    return put(out,
               "# HELP rankd_redis_cluster_redirects_total Redis Cluster redirects rankd followed "
               "(moved: the slot has a new node, the slot map is corrected; ask: a key being "
               "migrated, asked of its new node once).\n"
               "# TYPE rankd_redis_cluster_redirects_total counter\n"
               "rankd_redis_cluster_redirects_total{kind=\"moved\"} %lu\n"
               "rankd_redis_cluster_redirects_total{kind=\"ask\"} %lu\n"
               "# HELP rankd_redis_cluster_refusals_total Calls a Redis Cluster refused, nothing "
               "of them run, each a 503: tryagain (keys of one call split by a slot migration), "
               "clusterdown (a failover under way, or a slot no node serves).\n"
               "# TYPE rankd_redis_cluster_refusals_total counter\n"
               "rankd_redis_cluster_refusals_total{reply=\"tryagain\"} %lu\n"
               "rankd_redis_cluster_refusals_total{reply=\"clusterdown\"} %lu\n"
               "# HELP rankd_redis_cluster_slot_map_reads_total Slot maps read (CLUSTER SLOTS): "
               "at start, after a MOVED, a failed node or a CLUSTERDOWN; at most every 100 ms "
               "per store.\n"
               "# TYPE rankd_redis_cluster_slot_map_reads_total counter\n"
               "rankd_redis_cluster_slot_map_reads_total %lu\n",
               c->moved, c->ask, c->tryagain, c->down, c->map_reads);
}

int metrics_render_replicas(struct buf *out, const struct metrics_replicas *r)
{
    return put(out,
               "# HELP rankd_redis_replica_reads_total Reads a replica may answer "
               "(--read-from-replicas: page, member and around scripts and their records), by "
               "where they went: replica (sent to one), fallback (a replica failed them: down, "
               "loading, no answer within 250 ms, MASTERDOWN; sent to the primary), no_replica "
               "(none usable: none known, being dialled, or skipped for a second after a "
               "failure; the primary), stale (a min_version read a replica answered older than "
               "asked: sent again to the primary).\n"
               "# TYPE rankd_redis_replica_reads_total counter\n"
               "rankd_redis_replica_reads_total{to=\"replica\"} %lu\n"
               "rankd_redis_replica_reads_total{to=\"fallback\"} %lu\n"
               "rankd_redis_replica_reads_total{to=\"no_replica\"} %lu\n"
               "rankd_redis_replica_reads_total{to=\"stale\"} %lu\n"
               "# HELP rankd_redis_replica_discoveries_total Replica lists read: CLUSTER SLOTS "
               "(every second while reading from replicas) or SENTINEL REPLICAS (every second "
               "and at a switch).\n"
               "# TYPE rankd_redis_replica_discoveries_total counter\n"
               "rankd_redis_replica_discoveries_total %lu\n",
               r->replica, r->fallback, r->no_replica, r->stale, r->discoveries);
}

int metrics_render_streams(struct buf *out, const struct metrics_streams *s)
{
    return put(out,
               "# HELP rankd_streams_open Event streams open (pages watched with Accept: "
               "text/event-stream).\n"
               "# TYPE rankd_streams_open gauge\n"
               "rankd_streams_open %ld\n"
               "# HELP rankd_streams_opened_total Event streams opened.\n"
               "# TYPE rankd_streams_opened_total counter\n"
               "rankd_streams_opened_total %lu\n"
               "# HELP rankd_streams_refused_total Event streams refused by --max-streams or "
               "--max-streams-per-ip.\n"
               "# TYPE rankd_streams_refused_total counter\n"
               "rankd_streams_refused_total %lu\n"
               "# HELP rankd_stream_events_total Events sent on event streams, over all streams "
               "(keep-alive comments not counted).\n"
               "# TYPE rankd_stream_events_total counter\n"
               "rankd_stream_events_total %lu\n"
               "# HELP rankd_watched_pages Pages watched by at least one event stream.\n"
               "# TYPE rankd_watched_pages gauge\n"
               "rankd_watched_pages %ld\n"
               "# HELP rankd_watch_page_reads_total Pages read for their event streams: one per "
               "watched page and page TTL, whatever the number of viewers.\n"
               "# TYPE rankd_watch_page_reads_total counter\n"
               "rankd_watch_page_reads_total %lu\n"
               "# HELP rankd_watch_page_changes_total New versions of watched pages sent to their "
               "viewers.\n"
               "# TYPE rankd_watch_page_changes_total counter\n"
               "rankd_watch_page_changes_total %lu\n",
               s->open, s->opened, s->refused, s->events, s->watched, s->page_reads, s->changes);
}

int metrics_render_writes(struct buf *out, int probe_rc)
{
    return put(out,
               "# HELP rankd_redis_writes_refused 1 while Redis refuses writes, by reason: oom "
               "(maxmemory reached and nothing left to evict: writes answer 507 "
               "insufficient_storage), readonly (a replica: 503 primary_changed); as Redis "
               "answered the latest score write, board creation or /readyz probe.\n"
               "# TYPE rankd_redis_writes_refused gauge\n"
               "rankd_redis_writes_refused{reason=\"oom\"} %d\n"
               "rankd_redis_writes_refused{reason=\"readonly\"} %d\n",
               probe_rc == -EDQUOT, probe_rc == -EROFS);
}

static const char *const conn_names[] = {"read", "write"};
static const char *const conn_states[] = {"down", "dialling", "up"};

int metrics_render_event_threads(struct buf *out, const struct metrics_thread *t, int n)
{
    int rc = head(out, "rankd_http_connections", "gauge", "Open connections per event thread.");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_http_connections{thread=\"%d\"} %d\n", i, t[i].connections);
    rc = rc ? rc
            : head(out, "rankd_http_connection_states", "gauge",
                   "Connections per event thread by state: idle (between requests), busy (a "
                   "request read or answered on the thread), waiting (suspended for Redis or a "
                   "timer).");
    for (int i = 0; i < n && !rc; i++) {
        int idle = t[i].connections - t[i].busy;
        int busy = t[i].busy - t[i].waiting;
        rc = put(out,
                 "rankd_http_connection_states{thread=\"%d\",state=\"idle\"} %d\n"
                 "rankd_http_connection_states{thread=\"%d\",state=\"busy\"} %d\n"
                 "rankd_http_connection_states{thread=\"%d\",state=\"waiting\"} %d\n",
                 i, idle > 0 ? idle : 0, i, busy > 0 ? busy : 0, i, t[i].waiting);
    }
    rc = rc ? rc
            : head(out, "rankd_hit_connection_up", "gauge",
                   "1 while the event thread's own Redis connection for reads (pages, members, "
                   "misses' lookups) is connected.");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_hit_connection_up{thread=\"%d\"} %d\n", i,
                 t[i].reads.state == METRICS_CONN_UP);
    rc = rc ? rc
            : head(out, "rankd_write_connection_up", "gauge",
                   "1 while the event thread's own Redis connection for writes (scores, NDJSON "
                   "chunks, page locks and stores) is connected.");
    for (int i = 0; i < n && !rc; i++)
        rc = put(out, "rankd_write_connection_up{thread=\"%d\"} %d\n", i,
                 t[i].writes.state == METRICS_CONN_UP);
    rc = rc ? rc
            : head(out, "rankd_redis_connection_state", "gauge",
                   "1 for the state each event thread's Redis connection (read, write) is in: "
                   "up, dialling or down.");
    for (int i = 0; i < n && !rc; i++)
        for (int c = 0; c < 2 && !rc; c++) {
            const struct metrics_conn *mc = c ? &t[i].writes : &t[i].reads;
            for (int s = 0; s < 3 && !rc; s++)
                rc = put(out,
                         "rankd_redis_connection_state{thread=\"%d\",conn=\"%s\",state=\"%s\"} "
                         "%d\n",
                         i, conn_names[c], conn_states[s], mc->state == s);
        }
    static const struct {
        const char *name, *type, *help;
    } fams[] = {
        {"rankd_redis_round_trips_total", "counter",
         "Pipelines an event thread wrote to Redis (one write, every command of the loop "
         "iteration, its replies awaited), by connection."},
        {"rankd_redis_commands_total", "counter",
         "Commands in those pipelines: commands / round trips is the pipelining."},
        {"rankd_redis_in_flight", "gauge",
         "Command groups sent or queued on the connection and not answered yet."},
    };
    for (int f = 0; f < 3 && !rc; f++) {
        rc = head(out, fams[f].name, fams[f].type, fams[f].help);
        for (int i = 0; i < n && !rc; i++)
            for (int c = 0; c < 2 && !rc; c++) {
                const struct metrics_conn *mc = c ? &t[i].writes : &t[i].reads;
                unsigned long long v = f == 0   ? mc->round_trips
                                       : f == 1 ? mc->commands
                                                : (unsigned long long)mc->in_flight;
                rc = put(out, "%s{thread=\"%d\",conn=\"%s\"} %llu\n", fams[f].name, i,
                         conn_names[c], v);
            }
    }
    return rc;
}
