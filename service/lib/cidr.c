/* cidr.c -- address blocks and the client behind trusted proxies; see cidr.h. */
#include "cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cidr_addr_parse(const char *text, size_t len, uint8_t out[16])
{
    char buf[CIDR_ADDR_MAX];
    if (len == 0 || len >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, text, len);
    buf[len] = '\0';
    struct in_addr v4;
    if (inet_pton(AF_INET, buf, &v4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &v4, 4);
        return 0;
    }
    return inet_pton(AF_INET6, buf, out) == 1 ? 0 : -EINVAL;
}

/* 1 when a is an IPv4-mapped address (::ffff:0:0/96). */
static int mapped(const uint8_t a[16])
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a, prefix, 12) == 0;
}

static int parse_one(const char *s, size_t len, struct cidr *c)
{
    const char *slash = memchr(s, '/', len);
    size_t alen = slash ? (size_t)(slash - s) : len;
    if (cidr_addr_parse(s, alen, c->addr))
        return -EINVAL;
    int v4 = mapped(c->addr) && memchr(s, ':', alen) == NULL;
    int max = v4 ? 32 : 128, bits = max;
    if (slash) {
        size_t blen = len - alen - 1;
        if (blen == 0 || blen > 3)
            return -EINVAL;
        bits = 0;
        for (size_t i = 0; i < blen; i++) {
            char d = slash[1 + i];
            if (d < '0' || d > '9')
                return -EINVAL;
            bits = bits * 10 + (d - '0');
        }
        if (bits > max)
            return -EINVAL;
    }
    c->bits = v4 ? bits + 96 : bits;
    for (int b = c->bits; b < 128; b++) /* the host part is not part of the block */
        c->addr[b / 8] &= (uint8_t) ~(0x80U >> (b % 8));
    return 0;
}

int cidr_parse_list(const char *text, struct cidr_list *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    for (const char *p = text; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *b = p, *e = p + len;
        while (b < e && *b == ' ')
            b++;
        while (e > b && e[-1] == ' ')
            e--;
        if (out->n == CIDR_MAX) {
            snprintf(why, whylen, "at most %d address blocks", CIDR_MAX);
            return -EINVAL;
        }
        if (parse_one(b, (size_t)(e - b), &out->items[out->n])) {
            snprintf(why, whylen,
                     "'%.*s' is not an address block: ADDRESS[/BITS], e.g. 10.0.0.0/8, "
                     "127.0.0.1, ::1, fd00::/8",
                     (int)(e - b > 60 ? 60 : e - b), b);
            return -EINVAL;
        }
        out->n++;
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

int cidr_match(const struct cidr_list *l, const uint8_t a[16])
{
    for (int i = 0; l && i < l->n; i++) {
        const struct cidr *c = &l->items[i];
        int whole = c->bits / 8, rest = c->bits % 8;
        if (memcmp(a, c->addr, (size_t)whole) != 0)
            continue;
        if (rest && ((a[whole] ^ c->addr[whole]) & (uint8_t)(0xFF00U >> rest)))
            continue;
        return 1;
    }
    return 0;
}

/* a as canonical text (IPv4 for a mapped address) into out. */
static void addr_text(const uint8_t a[16], char out[CIDR_ADDR_MAX])
{
    if (!inet_ntop(mapped(a) ? AF_INET : AF_INET6, mapped(a) ? a + 12 : a, out, CIDR_ADDR_MAX))
        snprintf(out, CIDR_ADDR_MAX, "-");
}

void cidr_client(const char *peer, const char *xff, const struct cidr_list *trusted,
                 char out[CIDR_ADDR_MAX])
{
    uint8_t a[16];
    if (!peer || cidr_addr_parse(peer, strlen(peer), a)) {
        snprintf(out, CIDR_ADDR_MAX, "-");
        return;
    }
    if (xff && trusted && trusted->n && cidr_match(trusted, a)) {
        /* right to left: each hop a trusted proxy added; the first one not trusted is the
         * client (what lies left of it, the client wrote itself) */
        size_t end = strlen(xff);
        while (end > 0) {
            size_t start = end;
            while (start > 0 && xff[start - 1] != ',')
                start--;
            size_t b = start, e = end;
            while (b < e && (xff[b] == ' ' || xff[b] == '\t'))
                b++;
            while (e > b && (xff[e - 1] == ' ' || xff[e - 1] == '\t'))
                e--;
            uint8_t hop[16];
            if (cidr_addr_parse(xff + b, e - b, hop))
                break; /* not an address: stop at the last good one */
            memcpy(a, hop, sizeof(a));
            if (!cidr_match(trusted, hop))
                break;
            end = start ? start - 1 : 0;
        }
    }
    addr_text(a, out);
}
