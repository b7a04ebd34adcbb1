/* cursor.c -- page cursors; see cursor.h. */
#include "cursor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "request.h"
#include "util.h"

/* "3n" + gen (20) + ':' + tag (8) + ':' + period (15) + ':' + stored (17) + ':' + tie (16) + ':'
 * + id (128): 211 */
#define RAW_MAX 216
#define TAG_LEN 8
#define STORED_MAX INT64_C(9007199254740992) /* 2^53 */

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

uint32_t cursor_board_tag(const char *board)
{
    uint32_t h = 2166136261U;
    for (const unsigned char *p = (const unsigned char *)board; *p; p++)
        h = (h ^ *p) * 16777619U;
    return h;
}

/* v as 8 lowercase hex digits (printf's %08x), on a live page's every cursor: no printf */
static void strb_hex8(struct strb *b, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char d[TAG_LEN + 1];
    for (int i = TAG_LEN - 1; i >= 0; i--, v >>= 4)
        d[i] = hex[v & 15];
    d[TAG_LEN] = '\0';
    strb_str(b, d);
}

int cursor_encode(const struct cursor *c, char *out, size_t len)
{
    unsigned char raw[RAW_MAX + 8];
    /* "3<kind><gen>:<tag>:<period>:<stored>:<tie>:" or, without a tie, "2<kind>...<stored>:" */
    struct strb b;
    strb_init(&b, (char *)raw, sizeof(raw));
    const char head[] = {c->has_tie ? '3' : '2', (char)c->kind, '\0'};
    strb_str(&b, head);
    strb_i64(&b, c->gen);
    strb_str(&b, ":");
    strb_hex8(&b, c->board_tag);
    strb_str(&b, ":");
    strb_str(&b, c->period);
    strb_str(&b, ":");
    strb_i64(&b, c->stored);
    strb_str(&b, ":");
    if (c->has_tie) {
        strb_i64(&b, c->tie);
        strb_str(&b, ":");
    }
    size_t n = b.len;
    if (b.over || n + c->id_len > RAW_MAX)
        return -E2BIG;
    memcpy(raw + n, c->id, c->id_len);
    size_t rn = n + c->id_len, w = 0;
    if ((rn * 4 + 2) / 3 + 1 > len)
        return -E2BIG;
    for (size_t i = 0; i < rn; i += 3) {
        unsigned v = (unsigned)raw[i] << 16;
        if (i + 1 < rn)
            v |= (unsigned)raw[i + 1] << 8;
        if (i + 2 < rn)
            v |= raw[i + 2];
        out[w++] = alphabet[(v >> 18) & 63];
        out[w++] = alphabet[(v >> 12) & 63];
        if (i + 1 < rn)
            out[w++] = alphabet[(v >> 6) & 63];
        if (i + 2 < rn)
            out[w++] = alphabet[v & 63];
    }
    out[w] = '\0';
    return 0;
}

static int sextet(char ch)
{
    const char *p = ch ? strchr(alphabet, ch) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

/* The decimal at *p, ended by ':' before `end`, |v| <= max (a '-' first when neg_ok): 0 and *v
 * with *p past the ':', or -EINVAL. */
static int number(const char **p, const char *end, int neg_ok, int64_t max, int64_t *v)
{
    const char *s = *p;
    int neg = neg_ok && s < end && *s == '-';
    s += neg;
    int64_t x = 0;
    const char *digits = s;
    while (s < end && *s >= '0' && *s <= '9') {
        if (x > (max - (*s - '0')) / 10)
            return -EINVAL;
        x = x * 10 + (*s++ - '0');
    }
    if (s == digits || s >= end || *s != ':')
        return -EINVAL;
    *v = neg ? -x : x;
    *p = s + 1;
    return 0;
}

int cursor_decode(const char *text, struct cursor *out)
{
    unsigned char raw[RAW_MAX + 4];
    size_t tn = strlen(text), rn = 0;
    if (tn == 0 || tn >= CURSOR_TEXT_MAX || tn % 4 == 1)
        return -EINVAL;
    for (size_t i = 0; i < tn; i += 4) {
        unsigned v = 0;
        size_t k = 0;
        for (; k < 4 && i + k < tn; k++) {
            int s = sextet(text[i + k]);
            if (s < 0)
                return -EINVAL;
            v |= (unsigned)s << (18 - 6 * k);
        }
        for (size_t b = 0; b + 1 < k; b++) {
            if (rn >= RAW_MAX)
                return -EINVAL;
            raw[rn++] = (unsigned char)(v >> (16 - 8 * b));
        }
        /* the bits past the last whole byte are 0 when rankd encodes: 2 characters hold one
         * byte and 4 spare bits, 3 hold two bytes and 2 spare bits */
        if ((k == 2 && (v & 0xF000U)) || (k == 3 && (v & 0xC0U)))
            return -EINVAL;
    }
    struct cursor c;
    memset(&c, 0, sizeof(c));
    const char *p = (const char *)raw, *end = p + rn;
    if (rn < 2 || (p[0] != '1' && p[0] != '2' && p[0] != '3') ||
        (p[1] != CURSOR_NEXT && p[1] != CURSOR_PREV))
        return -EINVAL;
    c.kind = (enum cursor_kind)p[1];
    c.tagged = p[0] != '1';
    c.has_tie = p[0] == '3';
    p += 2;
    if (number(&p, end, 0, INT64_MAX, &c.gen))
        return -EINVAL;
    if (c.tagged) {
        if (end - p < TAG_LEN + 1 || p[TAG_LEN] != ':')
            return -EINVAL;
        for (int i = 0; i < TAG_LEN; i++, p++) {
            int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
            if (d < 0)
                return -EINVAL;
            c.board_tag = c.board_tag << 4 | (uint32_t)d;
        }
        p++;
    }
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon || colon - p >= PERIOD_ID_MAX)
        return -EINVAL;
    memcpy(c.period, p, (size_t)(colon - p));
    if (memchr(c.period, '\0', (size_t)(colon - p)))
        return -EINVAL;
    p = colon + 1;
    if (number(&p, end, 1, STORED_MAX, &c.stored))
        return -EINVAL;
    if (c.has_tie && number(&p, end, 0, STORED_MAX - 1, &c.tie))
        return -EINVAL;
    c.id_len = (size_t)(end - p);
    if (c.id_len > CURSOR_ID_MAX || !request_id_valid(p, c.id_len))
        return -EINVAL;
    memcpy(c.id, p, c.id_len);
    *out = c;
    return 0;
}
