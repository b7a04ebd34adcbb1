/*
 * board_rows.h -- the rows of a read script's reply (a page, the entries around a member or a
 * score, a walk's page, the top percent) as the scripts send them: one bulk string, built by
 * lua/prelude_read.lua's packed():
 *
 *     "<n>\n" then n entries, each "<stored> <m> <member>\0<r> <record>\0"
 *
 * <stored> the stored value as Redis writes a score (plain digits for every value rankd
 * writes), <m> the set member's bytes (decimal; the member may hold any byte: a `wide` board's
 * prefix), <r> the record's bytes, or '-' (no record: none stored) or '?' (not read by the
 * script: on a Redis Cluster the records are in other slots and the caller fetches them,
 * records.h), then that many bytes of the record. Each member and record is followed by a NUL
 * byte, so both can be read as C strings in place.
 *
 * Pure functions over a reply's bytes; the strings a row points at are the reply's.
 */
#ifndef RANKD_BOARD_ROWS_H
#define RANKD_BOARD_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "store_reply.h"

/** Rows being read: board_rows_open, then board_rows_next until it returns 0. */
struct board_rows {
    const char *at, *end;
    size_t n; /**< the entries the string announces */
};

/** One entry. */
struct board_row {
    const char *member; /**< member_len bytes and a NUL */
    size_t member_len;
    double stored;      /**< the stored value (plain digits read exactly, else as strtod) */
    int64_t stored_int; /**< the same as an integer */
    const char *record; /**< record_len bytes and a NUL; NULL for none ('-') or not read ('?') */
    size_t record_len;
    int unread; /**< 1: '?', the record was not read (the caller's to fetch) */
};

/** Start reading r, a reply's rows element: a string in the shape above (0, *it set), an empty
 *  array (no rows: what a script sends for a member that is absent; 0, n 0), else -EIO. */
int board_rows_open(const struct store_reply *r, struct board_rows *it);

/** The next entry into *row: 1, 0 after the n-th, -EIO when the bytes are not an entry (cut
 *  short, a length past the end, a missing separator, bytes after the n-th). */
int board_rows_next(struct board_rows *it, struct board_row *row);

#endif
