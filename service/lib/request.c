/* request.c -- pure request parsing; see request.h. */
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int request_pct_decode(const char *in, size_t inlen, char *out, size_t outcap, size_t *outlen)
{
    if (outcap == 0)
        return -E2BIG;
    size_t w = 0;
    int rc = 0;
    for (size_t r = 0; r < inlen && !rc; r++) {
        char c = in[r];
        if (c == '%') {
            int h = inlen - r < 3 ? -1 : hexval(in[r + 1]), l = h < 0 ? -1 : hexval(in[r + 2]);
            if (h < 0 || l < 0) {
                rc = -EINVAL;
                break;
            }
            c = (char)(h * 16 + l);
            r += 2;
        }
        if (w + 1 >= outcap)
            rc = -E2BIG;
        else
            out[w++] = c;
    }
    out[w] = '\0'; /* w < outcap: terminated on failure too (what was decoded before it) */
    if (!rc)
        *outlen = w;
    return rc;
}

int request_arg_decode(const char *in, size_t inlen, char *out, size_t outcap, size_t *outlen)
{
    int rc = request_pct_decode(in, inlen, out, outcap, outlen);
    if (rc == 0 && strlen(out) != *outlen)
        return -EINVAL; /* an escaped NUL */
    return rc;
}

void request_list_free(struct request_list *l)
{
    free(l->items);
    free(l->lens);
    free(l->storage);
    memset(l, 0, sizeof(*l));
}

int request_list_split(const char *raw, size_t max, struct request_list *out)
{
    memset(out, 0, sizeof(*out));
    size_t len = strlen(raw), parts = 1;
    if (len == 0)
        return -EINVAL;
    for (size_t i = 0; i < len; i++)
        parts += raw[i] == ',';
    if (parts > max)
        return -E2BIG;
    out->items = calloc(parts, sizeof(*out->items));
    out->lens = calloc(parts, sizeof(*out->lens));
    out->storage = malloc(len + parts); /* decoding never grows a part; a NUL each */
    if (!out->items || !out->lens || !out->storage) {
        request_list_free(out);
        return -ENOMEM;
    }
    char *at = out->storage;
    for (const char *p = raw;; p++) {
        size_t n = strcspn(p, ",");
        int rc = n ? request_arg_decode(p, n, at, n + 1, &out->lens[out->n]) : -EINVAL;
        if (rc) {
            request_list_free(out);
            return -EINVAL;
        }
        out->items[out->n++] = at;
        at += out->lens[out->n - 1] + 1;
        p += n;
        if (!*p)
            return 0;
    }
}

/* Length of the UTF-8 sequence at s (1..4), or 0 when it is invalid or truncated. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned min;
    unsigned cp;
    if ((c & 0xE0) == 0xC0) {
        n = 2, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void request_utf8_sanitize(char *s)
{
    size_t len = strlen(s);
    unsigned char *u = (unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(u + i, len - i);
        if (n == 0) {
            u[i] = '?';
            n = 1;
        }
        i += n;
    }
}

int request_utf8_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(u + i, len - i);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

int request_id_valid(const char *id, size_t len)
{
    if (len == 0 || len > BOARD_ID_LEN_MAX)
        return 0;
    const unsigned char *s = (const unsigned char *)id;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x20 || s[i] == 0x7F)
            return 0;
        size_t n = utf8_seq(s + i, len - i);
        if (n == 0)
            return 0;
        if (n == 2 && s[i] == 0xC2 && s[i + 1] <= 0x9F) /* C1 controls U+0080..U+009F */
            return 0;
        i += n;
    }
    return 1;
}

int request_parse_count(const char *s, int64_t max, int64_t *out)
{
    if (!s || !*s)
        return -EINVAL;
    int64_t v = 0;
    int big = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        int digit = *p - '0';
        if (!big && v > (max - digit) / 10)
            big = 1; /* v * 10 + digit > max; keep scanning: junk after it is still -EINVAL */
        if (!big)
            v = v * 10 + digit;
    }
    if (big)
        return -ERANGE;
    if (v == 0)
        return -EINVAL;
    *out = v;
    return 0;
}

int request_json_has_nul(const char *s, size_t len)
{
    if (memchr(s, '\0', len))
        return 1;
    const char *end = s + len;
    for (const char *p = s; (p = memmem(p, (size_t)(end - p), "u0000", 5)) != NULL; p += 5) {
        const char *b = p; /* the run of backslashes before "u0000" is [b, p) */
        while (b > s && b[-1] == '\\')
            b--;
        if ((p - b) % 2 == 1)
            return 1;
    }
    return 0;
}
