/* exporter.c -- the /metrics exposition, gathered from every module; see exporter.h. */
#include "exporter.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "pages.h"
#include "version.h"
#include "watch.h"

int exporter_parse_stat(const char *stat, long boot_s, long hz, long page_bytes,
                        struct metrics_process *out)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses: fields start after the
     * last ')'. Field 3 is state; utime, stime are 14 and 15, starttime 22, vsize 23, rss 24. */
    const char *p = strrchr(stat, ')');
    if (!p || hz <= 0)
        return -EINVAL;
    unsigned long long v[25] = {0};
    p++;
    for (int field = 3; field <= 24; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return -EINVAL;
        char *end = NULL;
        if (field == 3)
            end = (char *)p + 1; /* the state letter */
        else
            v[field] = strtoull(p, &end, 10);
        if (end == p || (*end != ' ' && *end != '\0' && *end != '\n'))
            return -EINVAL;
        p = end;
    }
    unsigned long long utime = v[14], stime = v[15], start = v[22], vsize = v[23];
    long long rss = (long long)v[24];
    out->cpu_seconds = (double)(utime + stime) / (double)hz;
    out->start_time_seconds = (double)boot_s + (double)start / (double)hz;
    out->virtual_bytes = (double)vsize;
    out->resident_bytes = (double)rss * (double)page_bytes;
    return 0;
}

static char *slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static long boot_time_s(void)
{
    static atomic_long boot = -1; /* fixed for the machine's uptime; racing first reads agree */
    if (atomic_load(&boot) >= 0)
        return atomic_load(&boot);
    char text[8192];
    const char *b = slurp("/proc/stat", text, sizeof(text));
    const char *at = b ? strstr(b, "\nbtime ") : NULL;
    long v = at ? strtol(at + 7, NULL, 10) : 0;
    atomic_store(&boot, v);
    return v;
}

static void process_stats(struct metrics_process *p)
{
    memset(p, 0, sizeof(*p));
    p->open_fds = p->max_fds = -1;
    char text[1024];
    if (!slurp("/proc/self/stat", text, sizeof(text)) ||
        exporter_parse_stat(text, boot_time_s(), sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), p)) {
        struct rusage ru; /* not Linux's /proc: CPU time at least */
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            p->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    }
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        long n = 0;
        for (const struct dirent *e; (e = readdir(d)) != NULL;)
            n += e->d_name[0] != '.';
        closedir(d);
        p->open_fds = n - 1; /* the directory's own descriptor */
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        p->max_fds = (long)rl.rlim_cur;
}

/* The page cache's counters and the lookups' (pages.h), after metrics_render's families. */
static int render_cache(struct buf *out, const struct pages_stats *p)
{
    const struct page_cache_stats *c = &p->cache;
    const struct metrics_counter rows[] = {
        {"hits", "pages served fresh from the cache (both tiers; stale ones count in stale)",
         c->hits},
        {"l1_hits", "pages served from the in-process tier", c->l1_hits},
        {"batched_hits",
         "pages served from Redis by an event thread on its own connection, fresh or stale",
         p->batched_hits},
        {"batches", "pipelines begun by that path", p->batches},
        {"shared_lookups",
         "hits of that path that joined an identical lookup of the same loop iteration (one "
         "HMGET + GET for all of them)",
         p->shared_lookups},
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
    int rc =
        metrics_render_counters(out, "rankd_page_cache_", rows, sizeof(rows) / sizeof(rows[0]));
    return rc ? rc
              : metrics_render_gauge(out, "rankd_page_cache_breaker_open",
                                     "1 while the cache is skipped.", c->breaker_open);
}

int exporter_render(const struct exporter_sources *src, const struct httpd *srv, struct buf *out)
{
    struct pages_stats cache;
    pages_stats(src->pages, &cache);
    struct exporter_stores st = {0};
    if (src->stores)
        src->stores(src->stores_arg, &st);
    const struct metrics_build build = {
        .version = RANKD_VERSION,
        .revision = RANKD_REVISION,
        .libmicrohttpd = http_library_version(),
        .hiredis = st.client_version ? st.client_version : "",
        .cjson = cJSON_Version(),
    };
    struct metrics_process proc;
    process_stats(&proc);
    struct metrics_thread *threads = calloc(HTTP_EVENT_THREADS_MAX, sizeof(*threads));
    if (!threads)
        return -ENOMEM;
    int n = http_event_threads(srv, threads, HTTP_EVENT_THREADS_MAX);
    int rc = metrics_render(out, &build, &proc, st.errors, log_dropped());
    rc = rc ? rc : render_cache(out, &cache);
    rc = rc ? rc : metrics_render_writes(out, st.write_refusal);
    rc = rc ? rc : metrics_render_event_threads(out, threads, n);
    if (!rc) {
        struct http_events_stats es;
        struct watches_stats ws = {0};
        http_events_stats(srv, &es);
        if (src->watches)
            watches_stats(src->watches, &ws);
        const struct metrics_streams ms = {.open = es.open,
                                           .opened = es.opened,
                                           .refused = es.refused,
                                           .events = es.events_sent,
                                           .watched = ws.watched,
                                           .page_reads = ws.reads,
                                           .changes = ws.changes};
        rc = metrics_render_streams(out, &ms);
    }
    if (!rc && st.cluster)
        rc = metrics_render_cluster(out, &st.cluster_counts);
    if (!rc && st.replicas)
        rc = metrics_render_replicas(out, &st.replica_counts);
    free(threads);
    return rc;
}
