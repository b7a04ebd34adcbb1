/*
 * tokens.h -- the bearer tokens that allow writes: several at once, so a token can be rotated
 * without a moment when clients holding the old or the new one are refused.
 *
 * Tokens come from a file (--write-token-file, re-read on SIGHUP: rankd_reload) and from
 * --write-token / RANKD_WRITE_TOKEN (fixed for the process). The file holds one token a line;
 * surrounding spaces, tabs and the CR of CRLF are dropped; empty lines and lines starting with
 * '#' are ignored. A token is 1..TOKENS_LEN_MAX bytes of visible ASCII (no spaces), at most
 * TOKENS_MAX of them; a file that breaks these rules is refused whole (at start-up: exit 2; on
 * a reload: the tokens in force stay, and the reason is logged). A file with no token at all is
 * valid: writes are then refused (403), as with no token configured.
 *
 * Rotation: add the new token as a second line, SIGHUP, move the clients, remove the old line,
 * SIGHUP. Tokens are never logged.
 *
 * Thread-safety: tokens_check and tokens_count may run on any thread while tokens_reload swaps
 * the set (a read-write lock; a check holds it for a few comparisons).
 */
#ifndef RANKD_TOKENS_H
#define RANKD_TOKENS_H

#include <stddef.h>

#define TOKENS_MAX 64         /**< tokens in a file */
#define TOKENS_LEN_MAX 512    /**< bytes of one token */
#define TOKENS_FILE_MAX 65536 /**< bytes of a token file */

struct tokens;

/**
 * Parse the text of a token file: *n tokens (0..TOKENS_MAX) copied into list (an array of
 * TOKENS_MAX pointers; free each with free()). Returns 0, or -EINVAL with the reason (line
 * number and rule, never the token) in err[0..errlen), or -ENOMEM; on failure nothing is left
 * allocated. Pure.
 */
int tokens_parse(const char *text, size_t len, char **list, int *n, char *err, size_t errlen);

/**
 * The token set of `fixed` ("" or NULL: none) and the file `path` ("" or NULL: none), read now.
 * Returns NULL with the reason in err (the file unreadable or invalid, or out of memory). Sets
 * *world_readable when other users may read the file. Free with tokens_free.
 */
struct tokens *tokens_new(const char *fixed, const char *path, int *world_readable, char *err,
                          size_t errlen);

/**
 * Read the file again and swap its tokens in. Returns the number of tokens now in force (fixed
 * one included), 0 or more; or a negative errno with the reason in err, the tokens in force
 * unchanged (-ENOENT when there is no file to read). Sets *world_readable when other users may
 * read the file.
 */
int tokens_reload(struct tokens *t, int *world_readable, char *err, size_t errlen);

/** Tokens in force now. */
int tokens_count(struct tokens *t);

/** 1 when given[0..len) is one of the tokens in force; each comparison takes time that depends
 *  only on the lengths, and every token is compared. */
int tokens_check(struct tokens *t, const char *given, size_t len);

/** The file's path ("" when none). Borrowed, valid until tokens_free. */
const char *tokens_path(const struct tokens *t);

/** NULL is a no-op. */
void tokens_free(struct tokens *t);

#endif
