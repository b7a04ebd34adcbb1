/*
 * gzip.h -- gzip content coding for replies (RFC 9110 8.4.1.3, RFC 1952), with zlib.
 *
 * Who compresses what (filter_gzip.c, for clients that accept gzip): a reply with a strong ETag (a
 * page's version) is compressed once per event thread at GZIP_LEVEL and its gzip form kept by
 * that ETag in the thread's small cache, so repeated hits on a page do not compress again; other
 * JSON replies of at least GZIP_MIN_BYTES are compressed for that one reply at GZIP_LEVEL_FAST.
 * Smaller bodies
 * are sent as they are: a gzip header and trailer cost 18 bytes, and below about a kilobyte the
 * saving does not pay for the CPU.
 */
#ifndef RANKD_GZIP_H
#define RANKD_GZIP_H

#include <stddef.h>

#include "util.h"

#define GZIP_MIN_BYTES 1024 /**< bodies shorter than this are never compressed */
/** zlib's default level: for bodies compressed once and kept (a page's version). */
#define GZIP_LEVEL 6
/** zlib's fastest level: for bodies compressed for one reply. */
#define GZIP_LEVEL_FAST 1

/**
 * 1 when an Accept-Encoding field value (NULL: the header is absent) accepts gzip, else 0.
 * RFC 9110 12.5.3: a comma-separated list of codings with optional weights ("gzip;q=0.5");
 * "gzip" and "x-gzip" name it, case-insensitively; "*" stands for every coding not listed;
 * a weight of 0 (q=0, q=0.0, q=0.000) refuses. A malformed weight counts as 0 (refused),
 * so a garbled header never gets a coding the client may not decode.
 */
int gzip_accepted(const char *accept_encoding);

/**
 * Compress in[0..len) into *out (appended; out keeps its buffer on error) as one gzip member
 * at GZIP_LEVEL. Returns 0, -ENOMEM, or -EIO (zlib refused: never expected).
 */
int gzip_compress(const void *in, size_t len, struct buf *out);

/**
 * A deflate stream kept for many bodies (deflateReset between them): setting one up allocates
 * and clears about 256 KiB, several times the cost of compressing a 9 KB page. One per thread
 * and level; not thread-safe. NULL on ENOMEM.
 */
struct gzip_stream;
struct gzip_stream *gzip_stream_new(int level);
void gzip_stream_free(struct gzip_stream *gs);

/** As gzip_compress, with gs's level and its kept stream. */
int gzip_stream_compress(struct gzip_stream *gs, const void *in, size_t len, struct buf *out);

#endif
