/* filter_gzip.c -- which replies go out gzipped, and the per-thread ETag cache; see
 * filter_gzip.h. */
#include "filter_gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "gzip.h"

/* The gzip form of a reply body with a strong ETag (a page's version): compressed once per event
 * thread, so hits of that version never compress again. */
struct gz_entry {
    char etag[64];
    size_t identity_len; /* the identity body's length (with the ETag, the key) */
    struct buf gz;
    uint64_t used; /* the cache's clock when last used: the least recent goes first */
};

struct gzip_cache {
    struct gzip_stream *keep, *fast; /* deflate streams (GZIP_LEVEL, _FAST), made lazily */
    struct gz_entry e[GZ_CACHE_ENTRIES];
    uint64_t clock;
};

struct gzip_cache *gzip_cache_new(void)
{
    return calloc(1, sizeof(struct gzip_cache));
}

void gzip_cache_free(struct gzip_cache *gz)
{
    if (!gz)
        return;
    gzip_stream_free(gz->keep);
    gzip_stream_free(gz->fast);
    for (int k = 0; k < GZ_CACHE_ENTRIES; k++)
        buf_free(&gz->e[k].gz);
    free(gz);
}

int gzip_filter_request(const char *accept_encoding)
{
    return gzip_accepted(accept_encoding);
}

static int compressible(const char *type)
{
    return type && (strncmp(type, "application/json", 16) == 0 || strncmp(type, "text/", 5) == 0);
}

/* The gzip form of body[0..len) with strong ETag `etag` from the cache, compressing and keeping
 * it on a miss; NULL on ENOMEM. */
static const struct buf *gz_kept(struct gzip_cache *t, const char *etag, const char *body,
                                 size_t len)
{
    size_t n = strlen(etag);
    struct gz_entry *victim = &t->e[0];
    for (int i = 0; i < GZ_CACHE_ENTRIES; i++) {
        struct gz_entry *e = &t->e[i];
        if (e->identity_len == len && n < sizeof(e->etag) && strcmp(e->etag, etag) == 0) {
            e->used = ++t->clock;
            return &e->gz;
        }
        if (e->used < victim->used)
            victim = e;
    }
    if (n >= sizeof(victim->etag) || (!t->keep && !(t->keep = gzip_stream_new(GZIP_LEVEL))))
        return NULL;
    victim->gz.len = 0;
    if (gzip_stream_compress(t->keep, body, len, &victim->gz)) {
        victim->identity_len = 0;
        victim->etag[0] = '\0';
        return NULL;
    }
    memcpy(victim->etag, etag, n + 1);
    victim->identity_len = len;
    victim->used = ++t->clock;
    return &victim->gz;
}

/* Replace rp's body by its gzip form when it qualifies (filter_gzip.h); 1 when it was. */
static int encode(struct gzip_cache *t, int gzip_ok, const char *etag, struct http_reply *rp)
{
    if (!gzip_ok || rp->status != 200 || rp->fd > 0 || !rp->body.data ||
        !compressible(rp->content_type) || (!etag && rp->body.len < GZIP_MIN_BYTES))
        return 0;
    struct buf gz = {0};
    if (etag && etag[0] == '"') {
        const struct buf *kept = gz_kept(t, etag, rp->body.data, rp->body.len);
        if (!kept || buf_append(&gz, kept->data, kept->len)) {
            buf_free(&gz);
            return 0;
        }
    } else if ((!t->fast && !(t->fast = gzip_stream_new(GZIP_LEVEL_FAST))) ||
               gzip_stream_compress(t->fast, rp->body.data, rp->body.len, &gz)) {
        buf_free(&gz);
        return 0;
    }
    buf_free(&rp->body);
    rp->body = gz;
    return 1;
}

int gzip_filter_reply(struct gzip_cache *gz, int gzip_ok, const char *etag, struct http_reply *rp,
                      struct filter_headers *out)
{
    int vary = rp->fd <= 0 && compressible(rp->content_type) && rp->status != 304;
    int gzipped = encode(gz, gzip_ok, etag, rp);
    if (gzipped)
        filter_header_add(out, "Content-Encoding", "gzip");
    if (vary || (rp->status == 304 && etag))
        filter_vary(out, FILTER_VARY_ACCEPT_ENCODING);
    return gzipped;
}
