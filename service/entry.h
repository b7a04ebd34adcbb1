/*
 * entry.h -- one entry of a score write (a JSON object of a body, a batch or an NDJSON line), and
 * the records entries and PUT /items carry: parsed, validated, turned into board entries, and the
 * errors a client is told. Pure: no I/O; unit tests in test/unit/test_entry.c.
 *
 * An entry is {"id": string, "score": number, "op": "set"|"best"|"incr" (default set),
 * "record": flat object}; nothing else, no field twice. A score is judged by its literal
 * (json_check.h) against the board's settings, never through a double. A record is a flat object
 * of strings, numbers a double holds exactly, booleans and nulls, at most BOARD_RECORD_BYTES_MAX
 * bytes printed.
 */
#ifndef RANKD_ENTRY_H
#define RANKD_ENTRY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "json_number.h"

#define ENTRY_MSG_MAX 400 /**< bytes of an error message, with its NUL */

/** One entry as parsed from JSON, owning its strings. Free with entry_free. */
struct entry_in {
    char *id;                 /**< NUL-terminated, valid (request_id_valid) */
    enum board_op op;         /**< set, best or incr */
    struct json_number score; /**< the literal, judged against the board by json_check_score */
    char *record;             /**< validated record JSON, or NULL */
    long line;                /**< the batch index or NDJSON line number (the caller's) */
};

/** An error for one entry, before it goes into a reply or a rejected list. */
struct entry_error {
    int status;              /**< HTTP status: 400, 413, 422, or 500 */
    const char *code;        /**< error code (static) */
    char msg[ENTRY_MSG_MAX]; /**< the sentence a client is told */
};

/** Free e's strings (e itself is the caller's); safe twice. */
void entry_free(struct entry_in *e);

/** Fill err; returns -1. */
int entry_fail(struct entry_error *err, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** Parse and validate entry object `e` into *out (owned strings): 0, or -1 with err filled (400
 *  invalid_entry, duplicate_field, unknown_field, invalid_id, invalid_op, invalid_record,
 *  record_too_large 413, 422 invalid_score, 500 when out of memory); nothing to free then. */
int entry_parse(const cJSON *e, struct entry_in *out, struct entry_error *err);

/** The 422 of a score json_check_score refused with rc (-EDOM, -ERANGE, else invalid_score); the
 *  message quotes the literal as sent and the board's range. Returns -1. */
int entry_score_error(const struct board_settings *s, const struct json_number *score, int rc,
                      struct entry_error *err);

/** The 422 score_out_of_range of an incr whose result would leave the board's range. */
void entry_range_error(const struct board_settings *s, struct entry_error *err);

/** Turn in[0..n) into board entries out[0..n) under settings s (borrowing their strings): 0, or
 *  -1 with err and *bad, the first entry whose score the board cannot hold. */
int entry_prepare(const struct board_settings *s, const struct entry_in *in, size_t n,
                  struct board_entry *out, size_t *bad, struct entry_error *err);

/** {"<key>": at, "error": {"code", "message"}} for a rejected list: a new cJSON node (NULL on
 *  ENOMEM). */
cJSON *entry_rejected(const char *key, long at, const struct entry_error *err);

/** Validate a record and print it with exact numbers: a new string (free()), or NULL with
 *  *status, *code and msg[ENTRY_MSG_MAX] filled (400 invalid_record or duplicate_field, 413
 *  record_too_large, 500 when out of memory). */
char *entry_record_json(const cJSON *rec, int *status, const char **code, char *msg);

#endif
