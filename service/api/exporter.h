/*
 * exporter.h -- GET /metrics: gathers every module's counters and gauges (metrics.h, the stores,
 * the page cache, the event threads, the process from /proc) and renders them as Prometheus
 * text, valid for `promtool check metrics` (an integration test runs it).
 *
 * It sends no Redis command and takes no lock (the counters are atomics read racily), so
 * /metrics answers at once while Redis is down or slow.
 */
#ifndef RANKD_EXPORTER_H
#define RANKD_EXPORTER_H

#include "util.h"

struct rankd;
struct httpd;

/** Append the whole exposition to *out. Returns 0 or -ENOMEM. Thread-safe. */
int exporter_render(const struct rankd *app, const struct httpd *srv, struct buf *out);

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
