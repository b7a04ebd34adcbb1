/*
 * tokens.h -- the bearer tokens that allow writes, each with the scopes it grants: several at
 * once, so a token can be rotated without a moment when clients holding the old or the new one
 * are refused, and a game server's token can post scores without being able to delete a board.
 *
 * Tokens come from a file (--write-token-file, re-read on SIGHUP: rankd_reload) and from
 * --write-token / RANKD_WRITE_TOKEN (fixed for the process; it grants `admin`). A line of the
 * file is `TOKEN [SCOPE ...]`, separated by spaces or tabs; the CR of CRLF is dropped; empty
 * lines and lines starting with '#' are ignored. A token is TOKENS_LEN_MIN..TOKENS_LEN_MAX bytes
 * of visible ASCII, at most TOKENS_MAX of them. Scopes (at most TOKENS_SCOPES_MAX a line):
 *   admin           everything (a line with the token alone means this: files written before
 *                   scopes existed keep working);
 *   scores          score writes on every board (POST /boards/{board}/scores in each form,
 *                   POST /scores, a board created by its first write) and the records
 *                   (PUT/DELETE /items/{id}: records are shared by every board);
 *   scores:NAME     score writes on board NAME only;
 *   scores:PREFIX*  score writes on the boards whose names start with PREFIX.
 * A file that breaks these rules is refused whole (at start-up: exit 2; on a reload: the tokens
 * in force stay, and the reason is logged). A file with no token at all is valid: writes are
 * then refused (403), as with no token configured.
 *
 * Rotation: add the new token as a second line, SIGHUP, move the clients, remove the old line,
 * SIGHUP. Tokens are never logged.
 *
 * Thread-safety: tokens_check and tokens_count may run on any thread while tokens_reload swaps
 * the set (a read-write lock; a check holds it for a few comparisons). A check copies the
 * matching token's grant out, so a reload never frees what a request holds.
 */
#ifndef RANKD_TOKENS_H
#define RANKD_TOKENS_H

#include <stddef.h>

#define TOKENS_MAX 64         /**< tokens in a file */
#define TOKENS_LEN_MIN 16     /**< bytes of one token at least (a guessable token is refused) */
#define TOKENS_LEN_MAX 512    /**< bytes of one token */
#define TOKENS_FILE_MAX 65536 /**< bytes of a token file */
#define TOKENS_SCOPES_MAX 16  /**< scopes of one token */
#define TOKENS_BOARD_MAX 64   /**< bytes of a scope's board name or prefix (BOARD_NAME_LEN_MAX) */

/** What one token allows. */
struct tokens_grant {
    int admin;   /**< everything */
    int scores;  /**< score writes on every board, and the records */
    int nboards; /**< 0..TOKENS_SCOPES_MAX: the scores:NAME and scores:PREFIX* scopes */
    /** each a board name, or a prefix ending in '*' */
    char boards[TOKENS_SCOPES_MAX][TOKENS_BOARD_MAX + 2];
};

/** The scope a request needs. */
enum tokens_need {
    TOKENS_NEED_ADMIN = 0,   /**< `admin` */
    TOKENS_NEED_RECORDS = 1, /**< `scores` (every board: records are shared by all) */
    TOKENS_NEED_BOARD = 2,   /**< `scores`, or a scores:NAME / scores:PREFIX* matching the board */
};

struct tokens;

/**
 * Parse the text of a token file: *n tokens (0..TOKENS_MAX) copied into list (an array of
 * TOKENS_MAX pointers; free each with free()) and their grants into grants (TOKENS_MAX of them).
 * Returns 0, or -EINVAL with the reason (line number and rule, never the token) in
 * err[0..errlen), or -ENOMEM; on failure nothing is left allocated. Pure.
 */
int tokens_parse(const char *text, size_t len, char **list, struct tokens_grant *grants, int *n,
                 char *err, size_t errlen);

/** Parse one scope word w[0..len) into g. 0, or -EINVAL (not a scope this file knows). Pure. */
int tokens_scope_parse(const char *w, size_t len, struct tokens_grant *g);

/**
 * The token set of `fixed` ("" or NULL: none; it must be TOKENS_LEN_MIN..TOKENS_LEN_MAX bytes of
 * visible ASCII) and the file `path` ("" or NULL: none), read now. Returns NULL with the reason
 * in err (the fixed token or the file unreadable or invalid, or out of memory). Sets
 * *world_readable when other users may read the file. Free with tokens_free.
 */
struct tokens *tokens_new(const char *fixed, const char *path, int *world_readable, char *err,
                          size_t errlen);

/** The fixed token's own check (length, characters): 0, or -EINVAL with the rule in err. */
int tokens_fixed_valid(const char *fixed, char *err, size_t errlen);

/**
 * Read the file again and swap its tokens in. Returns the number of tokens now in force (fixed
 * one included), 0 or more; or a negative errno with the reason in err, the tokens in force
 * unchanged (-ENOENT when there is no file to read). Sets *world_readable when other users may
 * read the file.
 */
int tokens_reload(struct tokens *t, int *world_readable, char *err, size_t errlen);

/** Tokens in force now. */
int tokens_count(struct tokens *t);

/** 1 when given[0..len) is one of the tokens in force, its grant then copied into *grant (may be
 *  NULL); each comparison takes time that depends only on the lengths, and every token is
 *  compared. */
int tokens_check(struct tokens *t, const char *given, size_t len, struct tokens_grant *grant);

/**
 * 1 when grant g allows what `need` asks, on `board` for TOKENS_NEED_BOARD (a valid board name,
 * NUL-terminated). Else 0 with the scope that would allow it in scope[0..cap) ("admin",
 * "scores", "scores:<board>"). Pure.
 */
int tokens_allows(const struct tokens_grant *g, enum tokens_need need, const char *board,
                  char *scope, size_t cap);

/** The file's path ("" when none). Borrowed, valid until tokens_free. */
const char *tokens_path(const struct tokens *t);

/** NULL is a no-op. */
void tokens_free(struct tokens *t);

#endif
