/* util.h -- small helpers shared by the modules: clocks, buffers, constant-time compare, a hash. */
#ifndef RANKD_UTIL_H
#define RANKD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Monotonic clock in milliseconds (CLOCK_MONOTONIC). */
int64_t util_now_ms(void);

/** Monotonic clock in microseconds. */
int64_t util_now_us(void);

/** Wall clock in milliseconds since the epoch (CLOCK_REALTIME): times stored in Redis. */
int64_t util_wall_ms(void);

/** FNV-1a of p[0..n): table slots (not for anything an attacker must not choose). */
uint64_t util_fnv1a(const char *p, size_t n);

/** Sleep `ms` milliseconds (restarted after signals). */
void util_sleep_ms(int ms);

/** 1 when a[0..alen) equals b[0..blen), in time that depends only on alen and blen. */
int util_secure_equal(const char *a, size_t alen, const char *b, size_t blen);

/**
 * A string built in the caller's fixed buffer, for keys and header values on the hit path
 * (snprintf's format parsing was ~8% of a cached hit's CPU). Like snprintf: what does not fit is
 * cut off, the result is always NUL-terminated (cap >= 1), and `over` tells it was cut.
 */
struct strb {
    char *p;
    size_t cap, len;
    int over;
};

/* Inline (with the append of known length under them): keys and header values are built of
 * short literal pieces, whose lengths the compiler then knows, and 30-40 appends a cached hit
 * made a call, a strlen and a memcpy call each. */

/** Start an empty string in p[0..cap). */
static inline void strb_init(struct strb *b, char *p, size_t cap)
{
    b->p = p;
    b->cap = cap;
    b->len = 0;
    b->over = 0;
    p[0] = '\0';
}

/** Append s[0..n). */
static inline void strb_mem(struct strb *b, const char *s, size_t n)
{
    size_t room = b->cap - 1 - b->len;
    if (n > room) {
        n = room;
        b->over = 1;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/** Append s (NUL-terminated). */
static inline void strb_str(struct strb *b, const char *s)
{
    strb_mem(b, s, strlen(s));
}

/** Append v in decimal. */
void strb_i64(struct strb *b, int64_t v);

/** Copy src into dst[0..cap) (cut, always terminated); returns the length copied. */
size_t util_copy(char *dst, size_t cap, const char *src);

/** A growable byte buffer. Zero-initialise; free with buf_free. */
struct buf {
    char *data; /**< NUL-terminated when len > 0 or after buf_append; owned */
    size_t len; /**< bytes used, excluding the terminator */
    size_t cap; /**< bytes allocated */
};

/** Append n bytes (and keep a NUL after them). Returns 0 or -ENOMEM (buffer unchanged). */
int buf_append(struct buf *b, const char *data, size_t n);

/** Make room for n more bytes (and the NUL) at once, so appends of them never reallocate.
 *  Returns 0 or -ENOMEM (buffer unchanged). */
int buf_reserve(struct buf *b, size_t n);

/** Release the buffer's memory and zero it. */
void buf_free(struct buf *b);

#endif
