/* gzip.c -- see gzip.h. */
#include "gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* A weight "q=..." (RFC 9110 12.4.2: 0 to 1, at most three decimals) in s[0..n): 1 when it is
 * above 0; 0 when it is 0 or malformed. */
static int weight_positive(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n < 3 || (s[0] != 'q' && s[0] != 'Q') || s[1] != '=')
        return 0;
    s += 2, n -= 2;
    if (s[0] == '1') {
        if (n == 1)
            return 1;
        if (s[1] != '.' || n > 5)
            return 0;
        for (size_t i = 2; i < n; i++)
            if (s[i] != '0')
                return 0;
        return 1;
    }
    if (s[0] != '0')
        return 0;
    if (n == 1)
        return 0;
    if (s[1] != '.' || n > 5)
        return 0;
    int positive = 0;
    for (size_t i = 2; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        positive |= s[i] != '0';
    }
    return positive;
}

int gzip_accepted(const char *accept_encoding)
{
    if (!accept_encoding)
        return 0;
    int gzip = -1, star = -1; /* -1: not listed; 0 refused; 1 accepted */
    const char *p = accept_encoding;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *tok = p;
        size_t tn = n;
        while (tn && (*tok == ' ' || *tok == '\t'))
            tok++, tn--;
        const char *semi = memchr(tok, ';', tn);
        size_t name_n = semi ? (size_t)(semi - tok) : tn;
        while (name_n && (tok[name_n - 1] == ' ' || tok[name_n - 1] == '\t'))
            name_n--;
        int ok = semi ? weight_positive(semi + 1, tn - (size_t)(semi + 1 - tok)) : 1;
        if ((name_n == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
            (name_n == 6 && strncasecmp(tok, "x-gzip", 6) == 0))
            gzip = gzip == 1 ? 1 : ok; /* listed twice: accepted if either accepts */
        else if (name_n == 1 && tok[0] == '*')
            star = star == 1 ? 1 : ok;
        p += n;
        if (*p == ',')
            p++;
    }
    return gzip >= 0 ? gzip : star == 1;
}

struct gzip_stream {
    z_stream z;
};

struct gzip_stream *gzip_stream_new(int level)
{
    struct gzip_stream *gs = calloc(1, sizeof(*gs));
    /* windowBits 15 + 16: a gzip header and trailer instead of zlib's; memLevel 8 is zlib's
     * default */
    if (gs && deflateInit2(&gs->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(gs);
        return NULL;
    }
    return gs;
}

void gzip_stream_free(struct gzip_stream *gs)
{
    if (!gs)
        return;
    deflateEnd(&gs->z);
    free(gs);
}

int gzip_stream_compress(struct gzip_stream *gs, const void *in, size_t len, struct buf *out)
{
    if (len > (size_t)1 << 30) /* zlib counts in uInt; rankd's bodies are far smaller */
        return -EIO;
    z_stream *z = &gs->z;
    if (deflateReset(z) != Z_OK)
        return -EIO;
    uLong bound = deflateBound(z, (uLong)len);
    size_t need = out->len + (size_t)bound + 1;
    if (need > out->cap) {
        char *d = realloc(out->data, need);
        if (!d)
            return -ENOMEM;
        out->data = d;
        out->cap = need;
    }
    z->next_in = (Bytef *)in; /* zlib's next_in is not const; it only reads */
    z->avail_in = (uInt)len;
    z->next_out = (Bytef *)out->data + out->len;
    z->avail_out = (uInt)bound;
    int rc = deflate(z, Z_FINISH); /* one call: the output has deflateBound bytes */
    size_t produced = (size_t)bound - z->avail_out;
    if (rc != Z_STREAM_END)
        return -EIO;
    out->len += produced;
    out->data[out->len] = '\0';
    return 0;
}

int gzip_compress(const void *in, size_t len, struct buf *out)
{
    struct gzip_stream *gs = gzip_stream_new(GZIP_LEVEL);
    if (!gs)
        return -ENOMEM;
    int rc = gzip_stream_compress(gs, in, len, out);
    gzip_stream_free(gs);
    return rc;
}
