/* log.c -- text or JSON lines, levels, rate-limited warnings, a buffered writer; see log.h. */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static atomic_int min_level = LOG_LEVEL_INFO;
static atomic_int line_format = LOG_FORMAT_TEXT;
static atomic_int access_on = 1;

static atomic_llong warn_window_s;
static atomic_int warn_count;
static atomic_int warn_suppressed;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(int level)
{
    atomic_store(&min_level, level);
}

int log_enabled(int level)
{
    return level >= atomic_load_explicit(&min_level, memory_order_relaxed);
}

void log_set_format(int format)
{
    atomic_store(&line_format, format);
}

void log_set_access(int on)
{
    atomic_store(&access_on, on);
}

int log_access_enabled(void)
{
    return atomic_load_explicit(&access_on, memory_order_relaxed) && log_enabled(LOG_LEVEL_INFO);
}

/* ---------------------------------------------------------------- formatting */

/* A line under construction in a fixed buffer; what does not fit is cut (the newline is kept). */
struct line {
    char *p;
    size_t cap, len; /* cap excludes the room kept for "\n" and the NUL */
};

static void put(struct line *l, const char *s, size_t n)
{
    if (n > l->cap - l->len)
        n = l->cap - l->len;
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

static void put_str(struct line *l, const char *s)
{
    put(l, s, strlen(s));
}

static void put_u64(struct line *l, uint64_t v)
{
    char d[24];
    size_t n = 0;
    do {
        d[sizeof(d) - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(l, d + sizeof(d) - n, n);
}

static void put_i64(struct line *l, int64_t v)
{
    if (v < 0) {
        put(l, "-", 1);
        put_u64(l, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(l, (uint64_t)v);
    }
}

/* "2026-12-01T10:00:00.123Z": the seconds part is formatted once a second per thread. */
static void put_time(struct line *l, int64_t wall_us)
{
    static __thread time_t cached_s = -1;
    static __thread char cached[24];
    time_t s = (time_t)(wall_us / 1000000);
    if (s != cached_s) {
        struct tm tm;
        gmtime_r(&s, &tm);
        strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &tm);
        cached_s = s;
    }
    put_str(l, cached);
    int ms = (int)(wall_us / 1000 % 1000);
    char frac[6] = {
        '.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10), 'Z', '\0'};
    put(l, frac, 5);
}

/* s as a JSON string body (no quotes), up to l->len == limit: quotes, backslashes and control
 * bytes escaped; bytes that are not UTF-8 become U+FFFD, so the line stays valid JSON whatever a
 * client sent. A cut never splits an escape or a character. */
static void put_json_escaped(struct line *l, const char *s, size_t limit)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        char e[6];
        const char *piece = e;
        size_t n = 1, used = 1;
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            n = 2;
        } else if (c < 0x20 || c == 0x7f) {
            e[0] = '\\';
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            n = 6;
        } else if (c < 0x80) {
            piece = (const char *)p;
        } else {
            size_t want = c >= 0xc2 && c <= 0xdf   ? 2
                          : c >= 0xe0 && c <= 0xef ? 3
                          : c >= 0xf0 && c <= 0xf4 ? 4
                                                   : 0;
            size_t k = 1;
            while (want && k < want && (p[k] & 0xc0) == 0x80)
                k++;
            if (want && k == want) {
                piece = (const char *)p;
                n = used = want;
            } else {
                piece = "\xef\xbf\xbd";
                n = 3;
                used = k;
            }
        }
        if (l->len + n > limit)
            return;
        put(l, piece, n);
        p += used;
    }
}

/* A logfmt value: bare when it has no space, quote, backslash, '=' or control byte, else quoted
 * with those escaped. */
static void put_logfmt_value(struct line *l, const char *s)
{
    int bare = s[0] != '\0';
    for (const unsigned char *p = (const unsigned char *)s; *p && bare; p++)
        bare = *p > 0x20 && *p != '"' && *p != '\\' && *p != '=' && *p != 0x7f;
    if (bare) {
        put_str(l, s);
        return;
    }
    put(l, "\"", 1);
    put_json_escaped(l, s, l->cap > 0 ? l->cap - 1 : 0);
    put(l, "\"", 1);
}

/* Room kept for what closes a JSON line ("}) and for a field's key and a number. */
#define JSON_FIELD_ROOM 48

/* One field of an access line: ` key=value` (text) or `,"key":"value"` (JSON; left out when the
 * line is too full for it, and its value cut so that the line stays valid). */
static void put_field(struct line *l, int json, const char *key, const char *value)
{
    if (json) {
        if (l->len + JSON_FIELD_ROOM > l->cap)
            return;
        put_str(l, ",\"");
        put_str(l, key);
        if (!value) {
            put_str(l, "\":null");
            return;
        }
        put_str(l, "\":\"");
        put_json_escaped(l, value, l->cap - 2);
        put(l, "\"", 1);
        return;
    }
    put(l, " ", 1);
    put_str(l, key);
    put(l, "=", 1);
    if (value)
        put_logfmt_value(l, value);
    else
        put(l, "-", 1);
}

static void put_number(struct line *l, int json, const char *key, int64_t v)
{
    if (json && l->len + JSON_FIELD_ROOM > l->cap)
        return;
    put_str(l, json ? ",\"" : " ");
    put_str(l, key);
    put_str(l, json ? "\":" : "=");
    put_i64(l, v);
}

static void put_request(struct line *l, int json, const struct log_request *r)
{
    put_field(l, json, "method", r->method);
    put_field(l, json, "route", r->route);
    put_number(l, json, "status", r->status);
    put_number(l, json, "bytes", (int64_t)r->bytes);
    put_number(l, json, "us", r->us);
    put_field(l, json, "cache", r->cache);
    put_field(l, json, "request_id", r->request_id);
    if (r->client)
        put_field(l, json, "client", r->client);
    if (r->error)
        put_field(l, json, "error", r->error);
    if (r->cause)
        put_field(l, json, "cause", r->cause);
    if (r->aborted && (!json || l->len + JSON_FIELD_ROOM <= l->cap))
        put_str(l, json ? ",\"aborted\":true" : " aborted=1");
}

size_t log_format(char *out, size_t cap, int format, int64_t wall_us, int level, const char *msg,
                  const struct log_request *r)
{
    const char *name = level >= 0 && level <= LOG_LEVEL_ERROR ? level_names[level] : "info";
    int json = format == LOG_FORMAT_JSON;
    /* text: room for "\n" and the NUL; JSON: also for "}" */
    struct line l = {out, cap - (json ? 3 : 2), 0};
    if (json) {
        put_str(&l, "{\"time\":\"");
        put_time(&l, wall_us);
        put_str(&l, "\",\"level\":\"");
        put_str(&l, name);
        put_str(&l, "\",\"msg\":\"");
        put_json_escaped(&l, r ? "access" : msg,
                         l.cap > JSON_FIELD_ROOM ? l.cap - JSON_FIELD_ROOM : 0);
        put(&l, "\"", 1);
        if (r)
            put_request(&l, 1, r);
        out[l.len++] = '}';
    } else {
        put_time(&l, wall_us);
        put_str(&l, " rankd ");
        put_str(&l, name);
        put_str(&l, ": ");
        if (r) {
            put_str(&l, "access");
            put_request(&l, 0, r);
        } else {
            put_str(&l, msg);
        }
    }
    out[l.len++] = '\n';
    out[l.len] = '\0';
    return l.len;
}

/* ---------------------------------------------------------------- the writer */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    char *cur;  /* lines waiting, len bytes (under lock) */
    char *next; /* the writer's other buffer */
    size_t len;
    int running; /* the writer thread runs: lines go to cur (under lock) */
    int stop;    /* the writer is asked to finish (under lock) */
    int kicked;  /* the writer was signalled and has not swapped since (under lock) */
    pthread_t thread;
} w = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};
static atomic_int out_fd = 2;
static atomic_ulong dropped;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* nowhere to log to: nothing else to do */
        p += k;
        n -= (size_t)k;
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&w.lock);
    for (;;) {
        if (!w.len && !w.stop) {
            struct timespec at;
            clock_gettime(CLOCK_REALTIME, &at);
            at.tv_nsec += LOG_FLUSH_MS * 1000000L;
            if (at.tv_nsec >= 1000000000L) {
                at.tv_sec++;
                at.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&w.wake, &w.lock, &at);
        }
        char *full = w.cur;
        size_t n = w.len;
        int stop = w.stop;
        w.cur = w.next;
        w.next = full;
        w.len = 0;
        w.kicked = 0;
        pthread_mutex_unlock(&w.lock);
        if (n)
            write_all(atomic_load(&out_fd), full, n);
        pthread_mutex_lock(&w.lock);
        if (stop && !w.len)
            break;
    }
    pthread_mutex_unlock(&w.lock);
    return NULL;
}

int log_start(int fd)
{
    char *a = malloc(LOG_BUFFER_BYTES), *b = malloc(LOG_BUFFER_BYTES);
    pthread_mutex_lock(&w.lock);
    int rc = w.running ? -EALREADY : (!a || !b) ? -ENOMEM : 0;
    if (!rc) {
        atomic_store(&out_fd, fd);
        w.cur = a;
        w.next = b;
        w.len = 0;
        w.stop = 0;
        rc = -pthread_create(&w.thread, NULL, writer_main, NULL);
        w.running = rc == 0;
    }
    pthread_mutex_unlock(&w.lock);
    if (!w.running || rc) {
        free(a);
        free(b);
    }
    return rc;
}

void log_stop(void)
{
    pthread_mutex_lock(&w.lock);
    if (!w.running) {
        pthread_mutex_unlock(&w.lock);
        return;
    }
    w.stop = 1;
    pthread_cond_signal(&w.wake);
    pthread_mutex_unlock(&w.lock);
    pthread_join(w.thread, NULL);
    pthread_mutex_lock(&w.lock);
    w.running = 0;
    free(w.cur);
    free(w.next);
    w.cur = w.next = NULL;
    pthread_mutex_unlock(&w.lock);
}

unsigned long log_dropped(void)
{
    return atomic_load(&dropped);
}

/* A formatted line: into the writer's buffer, or straight out when no writer runs. */
static void emit(const char *line, size_t n, int urgent)
{
    pthread_mutex_lock(&w.lock);
    if (!w.running) {
        pthread_mutex_unlock(&w.lock);
        write_all(atomic_load(&out_fd), line, n);
        return;
    }
    if (n > LOG_BUFFER_BYTES - w.len) {
        pthread_mutex_unlock(&w.lock);
        atomic_fetch_add(&dropped, 1);
        return;
    }
    memcpy(w.cur + w.len, line, n);
    w.len += n;
    int kick = !w.kicked && (urgent || w.len >= LOG_BUFFER_BYTES / 2);
    if (kick)
        w.kicked = 1;
    pthread_mutex_unlock(&w.lock);
    if (kick)
        pthread_cond_signal(&w.wake);
}

static int64_t wall_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* 1 when this warning may be written (at most LOG_WARN_BURST a second); the first one of a new
 * second reports how many the last window dropped. */
static int warn_allowed(int *suppressed)
{
    long long now_s = util_now_ms() / 1000;
    *suppressed = 0;
    if (atomic_exchange(&warn_window_s, now_s) != now_s) {
        atomic_store(&warn_count, 0);
        *suppressed = atomic_exchange(&warn_suppressed, 0);
    }
    if (atomic_fetch_add(&warn_count, 1) >= LOG_WARN_BURST) {
        atomic_fetch_add(&warn_suppressed, 1);
        return 0;
    }
    return 1;
}

__attribute__((format(printf, 2, 0))) static void vlog(int level, const char *fmt, va_list ap)
{
    if (!log_enabled(level))
        return;
    int suppressed = 0;
    if (level == LOG_LEVEL_WARN && !warn_allowed(&suppressed))
        return;
    char msg[LOG_LINE_MAX], line[LOG_LINE_MAX + 256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    int format = atomic_load(&line_format);
    int64_t now = wall_now_us();
    if (suppressed > 0) {
        char note[96];
        snprintf(note, sizeof(note), "%d warnings were not logged (at most %d a second)",
                 suppressed, LOG_WARN_BURST);
        size_t n = log_format(line, sizeof(line), format, now, LOG_LEVEL_WARN, note, NULL);
        emit(line, n, 1);
    }
    size_t n = log_format(line, sizeof(line), format, now, level, msg, NULL);
    emit(line, n, level >= LOG_LEVEL_WARN);
}

void log_request(const struct log_request *r)
{
    int level = r->status >= 500 ? LOG_LEVEL_ERROR : LOG_LEVEL_INFO;
    if (level == LOG_LEVEL_INFO ? !log_access_enabled() : !log_enabled(level))
        return;
    char line[LOG_LINE_MAX];
    size_t n =
        log_format(line, sizeof(line), atomic_load_explicit(&line_format, memory_order_relaxed),
                   wall_now_us(), level, NULL, r);
    emit(line, n, level >= LOG_LEVEL_WARN);
}

void log_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_LEVEL_DEBUG, fmt, ap);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_LEVEL_INFO, fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_LEVEL_WARN, fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_LEVEL_ERROR, fmt, ap);
    va_end(ap);
}
