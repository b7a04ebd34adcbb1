/*
 * ndjson.h -- the NDJSON splitter of score uploads: bytes in, lines out. Pure: no I/O, no JSON
 * parsing, unit-tested (test/unit/test_ndjson.c).
 *
 * A line ends at '\n'; a '\r' before it is dropped ("\r\n" endings). A line of only spaces, tabs
 * and '\r' is blank and skipped, however long (past `max` its bytes are not kept). A line longer
 * than `max` bytes is reported once (NDJSON_TOO_LONG) and the rest of it up to its '\n' is dropped
 * without being kept. Lines are numbered from 1, blank ones included, so a client can name the line
 * it must resume after. A chunk may end anywhere, even inside a line: the partial line is kept (at
 * most `max` bytes).
 */
#ifndef RANKD_NDJSON_H
#define RANKD_NDJSON_H

#include <stddef.h>

#include "util.h"

struct ndjson {
    struct buf line; /**< the current partial line (owned) */
    long line_no;    /**< 1-based number of the line being read */
    size_t max;      /**< longest line accepted, bytes */
    int skipping;    /**< the current line is past max: dropped up to its end */
    int blank_over;  /**< the current line is blank and past max so far: its bytes not kept */
};

enum ndjson_event {
    NDJSON_MORE = 0,  /**< the data given is used up (a partial line may be kept) */
    NDJSON_LINE,      /**< a complete, non-blank line: text[0..len), NUL-terminated */
    NDJSON_TOO_LONG,  /**< line *line_no is longer than max (reported once, then dropped) */
    NDJSON_NO_MEMORY, /**< out of memory: the splitter cannot go on */
};

/** A splitter for lines of at most `max` bytes. */
void ndjson_init(struct ndjson *nd, size_t max);

void ndjson_free(struct ndjson *nd);

/**
 * The next event from data[*at..len), advancing *at past what it used. data NULL is the end of
 * the stream: the last line if it had no '\n', then NDJSON_MORE. For NDJSON_LINE, *text points
 * into the splitter (valid until the next call) and *line_no is the line's number; for
 * NDJSON_TOO_LONG only *line_no is set.
 */
enum ndjson_event ndjson_next(struct ndjson *nd, const char *data, size_t len, size_t *at,
                              const char **text, size_t *text_len, long *line_no);

#endif
