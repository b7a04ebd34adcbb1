/*
 * cursor.h -- page cursors: the opaque, URL-safe `next` and `prev` of a page reply.
 *
 * A cursor names the edge item of a page by its stored value and id (never by its position), so
 * `?after=<next>` continues with the first member ordered after that item and `?before=<prev>`
 * ends just before it, wherever the members around them moved meanwhile: a walk returns every
 * member that did not move exactly once, in order. It also carries the board's generation (a
 * reset, a layout change or a re-created board makes a new one: the cursor is then expired, 410
 * cursor_expired), a tag of the board's name (another board's cursor is not this board's expired
 * one, but one rankd did not make for it: 400 invalid_cursor), the period it was read in (""
 * without periods) and its kind (a `next` is for after=, a `prev` for before=).
 *
 * Text: base64url without padding of "2<kind><gen>:<tag>:<period>:<stored>:<id>" (version 2;
 * kind 'n' or 'p'; gen and stored in decimal; tag cursor_board_tag in 8 lower-case hex digits;
 * the id's raw bytes last, so it may hold ':'), at most CURSOR_TEXT_MAX bytes with the NUL.
 * Version 1, "1<kind><gen>:<period>:<stored>:<id>", made before cursors named their board, is
 * still read (tagged 0: its board is not known). Version 3, "3<kind><gen>:<tag>:<period>:<stored>:
 * <tie>:<id>", names the edge of a `wide` board, whose members of one stored value are ordered by
 * their tie position (score_codec.h) before their id. Version 4, "4<kind><gen>:<tag>:<period>:
 * <stored>:<tie>:<sub>:<id>" with <sub> the edge's sub-score bytes in lower-case hex, names the
 * edge of a board with sub-scores (its set members start with them). Opaque to clients: only
 * rankd reads it.
 *
 * Pure and thread-safe; unit-tested in test/unit/test_cursor.c.
 */
#ifndef RANKD_CURSOR_H
#define RANKD_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "period.h"

#define CURSOR_ID_MAX 128       /**< bytes of the edge item's id (BOARD_ID_LEN_MAX) */
#define CURSOR_TEXT_MAX 400     /**< bytes of a cursor's text, NUL included */
#define CURSOR_SUB_BYTES_MAX 32 /**< bytes of an edge's sub-scores (4 columns of 8) */

enum cursor_kind { CURSOR_NEXT = 'n', CURSOR_PREV = 'p' };

struct cursor {
    enum cursor_kind kind;
    int64_t gen;                /**< the board generation the page was read under */
    char period[PERIOD_ID_MAX]; /**< the period read, "" for a board without periods */
    int64_t stored;             /**< the edge item's stored value (score_codec.h), |v| <= 2^53 */
    char id[CURSOR_ID_MAX + 1]; /**< the edge item's id, id_len bytes (and a NUL) */
    size_t id_len;
    int tagged;         /**< 1: board_tag names the board (every cursor rankd makes now) */
    uint32_t board_tag; /**< cursor_board_tag of the board the page was of, when tagged */
    int has_tie;        /**< 1 (version 3): a `wide` board's edge, named by its tie position too */
    int64_t tie;        /**< that tie position, 0 .. 2^53 - 1 (0 when has_tie is 0) */
    /** version 4: a sub-score board's edge, named by its sub-score bytes too (the set member's
     *  bytes before the tie position, score_codec_sub_bytes), sub_len of them (0: none) */
    unsigned char sub[CURSOR_SUB_BYTES_MAX];
    size_t sub_len;
};

/** The tag of board name `board` a cursor carries: 32-bit FNV-1a of its bytes (two boards share
 *  one once in about 4 billion pairs: their cursors are then told apart by the generation). */
uint32_t cursor_board_tag(const char *board);

/** c's text into out[0..len): 0, or -E2BIG when it does not fit (CURSOR_TEXT_MAX always does). */
int cursor_encode(const struct cursor *c, char *out, size_t len);

/** Read a cursor's text (version 4, 3 or 2, or 1 with tagged 0): 0 and *out, or -EINVAL for anything
 *  rankd did not make (bad base64url, another version or kind, a tag not 8 lower-case hex digits, a
 * number out of range, a period id of 16 bytes or more, an id that is not 1..128 bytes of valid
 * UTF-8 without control characters). */
int cursor_decode(const char *text, struct cursor *out);

#endif
