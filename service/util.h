/* util.h -- small helpers shared by the modules: clocks, buffers, constant-time compare. */
#ifndef RANKD_UTIL_H
#define RANKD_UTIL_H

#include <stddef.h>
#include <stdint.h>

/** Monotonic clock in milliseconds (CLOCK_MONOTONIC). */
int64_t util_now_ms(void);

/** Monotonic clock in microseconds. */
int64_t util_now_us(void);

/** Sleep `ms` milliseconds (restarted after signals). */
void util_sleep_ms(int ms);

/** 1 when a[0..alen) equals b[0..blen), in time that depends only on alen and blen. */
int util_secure_equal(const char *a, size_t alen, const char *b, size_t blen);

/** A growable byte buffer. Zero-initialise; free with buf_free. */
struct buf {
    char *data; /**< NUL-terminated when len > 0 or after buf_append; owned */
    size_t len; /**< bytes used, excluding the terminator */
    size_t cap; /**< bytes allocated */
};

/** Append n bytes (and keep a NUL after them). Returns 0 or -ENOMEM (buffer unchanged). */
int buf_append(struct buf *b, const char *data, size_t n);

/** Release the buffer's memory and zero it. */
void buf_free(struct buf *b);

#endif
