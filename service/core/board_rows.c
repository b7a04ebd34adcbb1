/* board_rows.c -- a read script's packed rows; see board_rows.h. */
#include "board_rows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A decimal size at *p up to the byte `stop` (no sign, 1..10 digits): the value, or -1; *p past
 * `stop`. A reply's string ends in a NUL past its length (store_reply.h), so the digits need no
 * bound of their own; the callers check each length against the end. */
static int64_t size_at(const char **p, char stop)
{
    const char *s = *p, *from = s;
    int64_t v = 0;
    while ((unsigned)(*s - '0') < 10)
        v = v * 10 + (*s++ - '0');
    if (s == from || s - from > 10 || *s != stop)
        return -1;
    *p = s + 1;
    return v;
}

int board_rows_open(const struct store_reply *r, struct board_rows *it)
{
    memset(it, 0, sizeof(*it));
    if (r && r->type == STORE_REPLY_ARRAY && r->elements == 0)
        return 0;
    if (!r || r->type != STORE_REPLY_STRING)
        return -EIO;
    const char *p = r->str, *end = r->str + r->len;
    int64_t n = size_at(&p, '\n');
    if (n < 0)
        return -EIO;
    it->at = p;
    it->end = end;
    it->n = (size_t)n;
    return 0;
}

/* The stored value at *p up to the next ' ': plain digits (an optional '-', 1..18 digits) read
 * exactly, else strtod's reading of the text; -EIO when there is no ' ' or no number. */
static int stored_at(const char **p, const char *end, struct board_row *row)
{
    const char *s = *p, *from = s + (*s == '-'), *d = from;
    int64_t v = 0;
    while ((unsigned)(*d - '0') < 10 && d - from < 18)
        v = v * 10 + (*d++ - '0');
    if (*d == ' ' && d > from) { /* exact in an int64_t, and in a double as Redis
                                             * printed it */
        row->stored_int = *s == '-' ? -v : v;
        row->stored = *s == '-' ? -(double)v : (double)v;
        *p = d + 1;
        return 0;
    }
    /* another number's text (Redis writes a score as %.17g): read as strtod does */
    const char *sp = memchr(s, ' ', (size_t)(end - s));
    char text[64];
    size_t len = sp ? (size_t)(sp - s) : 0;
    if (len == 0 || len >= sizeof(text))
        return -EIO;
    memcpy(text, s, len);
    text[len] = '\0';
    char *stop = NULL;
    row->stored = strtod(text, &stop);
    if (stop != text + len)
        return -EIO;
    row->stored_int = (int64_t)row->stored;
    *p = sp + 1;
    return 0;
}

int board_rows_next(struct board_rows *it, struct board_row *row)
{
    if (it->n == 0)
        return it->at == it->end ? 0 : -EIO; /* bytes after the last entry: not rows */
    const char *p = it->at, *end = it->end;
    memset(row, 0, sizeof(*row));
    if (p >= end || stored_at(&p, end, row) < 0)
        return -EIO;
    int64_t m = size_at(&p, ' ');
    if (m < 0 || (size_t)(end - p) < (size_t)m + 1 || p[m] != '\0')
        return -EIO;
    row->member = p;
    row->member_len = (size_t)m;
    p += m + 1;
    if (p + 2 <= end && (*p == '-' || *p == '?') && p[1] == ' ') {
        row->unread = *p == '?';
        p += 2;
    } else {
        int64_t r = size_at(&p, ' ');
        if (r < 0 || (size_t)(end - p) < (size_t)r + 1 || p[r] != '\0')
            return -EIO;
        row->record = p;
        row->record_len = (size_t)r;
        p += r;
    }
    if (p >= end || *p != '\0')
        return -EIO;
    it->at = p + 1;
    it->n--;
    return 1;
}
