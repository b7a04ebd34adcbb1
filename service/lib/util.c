/* util.c -- clocks, buffers, constant-time compare, a hash. */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t util_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t util_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t util_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t util_fnv1a(const char *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h;
}

int util_secure_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    /* Walk the longer input whole, so the time depends on lengths only, never on content. */
    size_t n = alen > blen ? alen : blen;
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < alen ? (unsigned char)a[i] : 0;
        unsigned char y = i < blen ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

int buf_reserve(struct buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return -ENOMEM;
        b->data = p;
        b->cap = cap;
    }
    return 0;
}

int buf_append(struct buf *b, const char *data, size_t n)
{
    if (buf_reserve(b, n))
        return -ENOMEM;
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void util_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

void strb_i64(struct strb *b, int64_t v)
{
    char d[24], *at = d + sizeof(d);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--at = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--at = '-';
    strb_mem(b, at, (size_t)(d + sizeof(d) - at));
}

size_t util_copy(char *dst, size_t cap, const char *src)
{
    struct strb b;
    strb_init(&b, dst, cap);
    strb_str(&b, src);
    return b.len;
}
