/*
 * filter_gzip.h -- the gzip filter of the HTTP exchange (steps 1 and 5 of filter.h's chain):
 * which replies go out gzipped (gzip.h does the compressing), and the ETag cache.
 *
 * A 200 with a JSON or text body, to a client that accepts gzip (Accept-Encoding), is sent
 * gzipped: with a strong ETag (a page's version) always, its gzip form compressed once at
 * GZIP_LEVEL and kept in the event thread's cache by that ETag (and the identity body's length),
 * so hits of that version never compress again; without one from GZIP_MIN_BYTES, compressed for
 * that reply at GZIP_LEVEL_FAST. Files, streamed bodies and other statuses go as they are.
 * Every reply whose body could be either form says so (Vary: Accept-Encoding), as does a 304
 * with an ETag (the validator names one form).
 */
#ifndef RANKD_FILTER_GZIP_H
#define RANKD_FILTER_GZIP_H

#include "http.h"

struct filter_headers;

#define GZ_CACHE_ENTRIES 64 /**< gzip forms kept per event thread, by ETag */

/** One event thread's gzip forms and deflate streams. Not thread-safe: one per event thread. */
struct gzip_cache;

/** An empty cache (its streams are made when first needed); NULL on ENOMEM. */
struct gzip_cache *gzip_cache_new(void);

/** Free it and its forms; NULL is a no-op. */
void gzip_cache_free(struct gzip_cache *gz);

/** Step 1: 1 when the request's Accept-Encoding (NULL: absent) accepts gzip (gzip_accepted). */
int gzip_filter_request(const char *accept_encoding);

/**
 * Step 5 on rp, whose strong ETag is `etag` (NULL: none), for a client that accepts gzip when
 * gzip_ok: the body replaced by its gzip form when it qualifies (above; out of memory: sent as
 * it is), with Content-Encoding: gzip; Vary: Accept-Encoding when the body could have been
 * either. Returns 1 when rp's body is now gzip.
 */
int gzip_filter_reply(struct gzip_cache *gz, int gzip_ok, const char *etag, struct http_reply *rp,
                      struct filter_headers *out);

#endif
