/* watch_key.c -- the registry's key of a watched request, and the copy of its with ids; see
 * watch_int.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers_read_int.h"
#include "json_number.h"
#include "watch_int.h"

/* A score range's bound in a key: its value (20 and 20.0 are one), "-" when absent. */
static void bound_key(int has, const struct json_number *n, char *out, size_t cap)
{
    if (!has)
        snprintf(out, cap, "-");
    else if (n->wide) /* never a watch: no layout holds one (the read refuses it) */
        snprintf(out, cap, "w%s", n->text);
    else
        snprintf(out, cap, "%s%" PRIu64 "e%" PRId64, n->neg && n->digits ? "-" : "", n->digits,
                 n->exp);
}

int watch_key(const struct watch_page *p, char *out, size_t cap)
{
    char lo[JSON_NUMBER_TEXT_MAX + 48] = "", hi[JSON_NUMBER_TEXT_MAX + 48] = "";
    if (p->walk) {
        bound_key(p->walk->has_min, &p->walk->min, lo, sizeof(lo));
        bound_key(p->walk->has_max, &p->walk->max, hi, sizeof(hi));
    }
    int n = snprintf(out, cap, "%s\x1f%s\x1f%d\x1f%" PRId64 "\x1f%d%s%s%s%s", p->board,
                     p->period ? p->period : "\x1e", p->size, p->page, (int)p->rank,
                     p->walk ? "\x1fr" : "", lo, p->walk ? "\x1f" : "", hi);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    /* the ids, in their order (no id holds a control character such as \x1f or \x1e) */
    size_t at = (size_t)n;
    for (size_t i = 0; i < p->nwith; i++) {
        if (at + p->with_lens[i] + 3 > cap)
            return -1;
        out[at++] = i ? '\x1e' : '\x1f';
        if (!i)
            out[at++] = 'w';
        memcpy(out + at, p->with[i], p->with_lens[i]);
        at += p->with_lens[i];
    }
    out[at] = '\0';
    return 0;
}

int watch_ids_copy(struct watch_ids *d, const struct watch_page *p)
{
    memset(d, 0, sizeof(*d));
    if (p->nwith == 0 || p->nwith > BOARD_WITH_MAX)
        return p->nwith ? -EINVAL : 0;
    size_t total = 1;
    for (size_t i = 0; i < p->nwith; i++)
        total += p->with_lens[i] + 1;
    if (!(d->buf = malloc(total)))
        return -ENOMEM;
    char *at = d->buf;
    for (size_t i = 0; i < p->nwith; i++) {
        memcpy(at, p->with[i], p->with_lens[i]);
        at[p->with_lens[i]] = '\0';
        d->items[i] = at;
        d->lens[i] = p->with_lens[i];
        at += p->with_lens[i] + 1;
    }
    d->n = p->nwith;
    return 0;
}
