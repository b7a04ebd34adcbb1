/* log.c -- stderr logging; warnings are rate-limited so a Redis outage cannot flood the log. */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "util.h"

static atomic_int min_level = 1;

/* At most WARN_BURST warnings per second; the rest are counted and reported once. */
#define WARN_BURST 20
static atomic_llong warn_window_s;
static atomic_int warn_count;

void log_set_level(int level)
{
    atomic_store(&min_level, level);
}

__attribute__((format(printf, 3, 0))) static void vlog(int level, const char *tag, const char *fmt,
                                                       va_list ap)
{
    if (level < atomic_load(&min_level))
        return;
    if (level == 2) {
        long long now_s = util_now_ms() / 1000;
        if (atomic_exchange(&warn_window_s, now_s) != now_s)
            atomic_store(&warn_count, 0);
        if (atomic_fetch_add(&warn_count, 1) >= WARN_BURST)
            return;
    }
    char line[1024];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, "rankd %s: ", tag);
    if (n < sizeof(line))
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    fprintf(stderr, "%s\n", line);
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(1, "info", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(2, "warn", fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(3, "error", fmt, ap);
    va_end(ap);
}
