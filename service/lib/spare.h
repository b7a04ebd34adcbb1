/*
 * spare.h -- blocks of a few fixed sizes kept for reuse by the thread that gave them back: the
 * per-request structs of the event threads (an exchange, a page lookup: 1-3 KiB each) are made
 * and freed tens of thousands of times a second, and glibc 2.36 serves a block over 1,032 bytes
 * outside its per-thread cache, consolidating its fast bins first: 1,000-2,000 instructions per
 * block, against a few dozen here. Each thread keeps at most SPARE_KEEP blocks of each of
 * SPARE_SIZES sizes (a few hundred KiB at most); they are freed when the thread ends.
 */
#ifndef RANKD_SPARE_H
#define RANKD_SPARE_H

#include <stddef.h>

#define SPARE_SIZES 6 /**< distinct block sizes a thread keeps */
#define SPARE_KEEP 32 /**< blocks of one size a thread keeps */
/** A reply body's block (a cached page's bytes fit one): a struct buf whose cap is this many
 *  bytes goes back to the spare blocks once sent (httpd_reply.c); store_reply.c's arena blocks
 *  are this size too. */
#define SPARE_BODY_BYTES ((size_t)4096)

/** A block of `size` bytes (not zeroed): one this thread gave back, else malloc's. NULL when out
 *  of memory. Free it with spare_give(p, size) (or free()). */
void *spare_take(size_t size);

/** Give back p (from spare_take(size) or malloc(size); NULL is ignored): kept for this thread's
 *  next spare_take(size), or freed when the thread keeps enough. Any thread may give any block. */
void spare_give(void *p, size_t size);

#endif
