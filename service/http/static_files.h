/*
 * static_files.h -- the web frontend's files (clients/web), served by rankd at `/`.
 *
 * Only regular files inside the static directory are reachable: the path is percent-decoded
 * once, any "." or ".." segment, backslash or NUL is refused, and the resolved real path (after
 * symlinks) must still lie inside the directory's real path, so neither `/../`, `%2e%2e` nor a
 * symlink can reach outside. `/` serves index.html. Content types come from the extension; every
 * file is `no-cache` (file names do not change between versions, so a new index.html must never
 * run with an old app.js); revalidation by ETag is a cheap 304. A FIFO, device or socket in the
 * directory is absent (-ENOENT), and is never opened in a way that could block. Thread-safe.
 */
#ifndef RANKD_STATIC_FILES_H
#define RANKD_STATIC_FILES_H

#include <stddef.h>
#include <stdint.h>

/** A file ready to send. */
struct static_file {
    int fd;                    /**< open, read-only; the caller owns and closes it */
    uint64_t size;             /**< bytes */
    const char *content_type;  /**< static string */
    const char *cache_control; /**< static string */
    char etag[48];             /**< from size and mtime */
};

/**
 * Resolve a raw (still percent-encoded) request path under the real path `root`. Returns 0 and
 * *out, -ENOENT (no such file, or not a regular file), -EACCES (outside the root or a forbidden
 * segment), -EINVAL (a malformed escape).
 */
int static_files_open(const char *root, const char *raw_path, struct static_file *out);

/**
 * The directory to serve: `configured` when not empty, else clients/web next to the binary's
 * build directory, else share/rankd/web of its install prefix. Writes its real path into
 * out[0..len) and returns 0, or -ENOENT when there is none.
 */
int static_files_root(const char *configured, char *out, size_t len);

#endif
