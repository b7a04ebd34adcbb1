/*
 * watch_int.h -- what watch.c takes from watch_key.c (service/api/watch*.c only): the registry's
 * key of a watched request, and the copy of its `with` ids a watch keeps. The contract of the
 * streams is watch.h.
 */
#ifndef RANKD_WATCH_INT_H
#define RANKD_WATCH_INT_H

#include <stddef.h>

#include "board.h"
#include "watch.h"

/** Bytes of a key, NUL included: the board, the period, the numbers, a score range's bounds and
 *  up to BOARD_WITH_MAX ids. */
#define WATCH_KEY_MAX (512 + BOARD_WITH_MAX * (BOARD_ID_LEN_MAX + 1))

/**
 * The registry's key of page request p into out[0..cap): the request as asked (a default size
 * or the current period stay so: the refresh resolves them each time), a score range's bounds
 * by value (20 and 20.0 are one key), the `with` ids in their order. 0, or -1 when it does not
 * fit. Pure.
 */
int watch_key(const struct watch_page *p, char *out, size_t cap);

/** The `with` ids of a watch or of a first read: copies in one block (buf, owned), items[i]
 *  NUL-terminated. */
struct watch_ids {
    char *buf;
    const char *items[BOARD_WITH_MAX];
    size_t lens[BOARD_WITH_MAX];
    size_t n;
};

/** Copy p's with ids into d (free d->buf): 0, -EINVAL past BOARD_WITH_MAX, -ENOMEM; d empty on
 *  failure and when p has none. */
int watch_ids_copy(struct watch_ids *d, const struct watch_page *p);

#endif
