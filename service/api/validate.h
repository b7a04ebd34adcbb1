/*
 * validate.h -- the pure validators of JSON request bodies: score entries, records and board
 * settings, judged on a tree cJSON parsed and json_number_annotate gave its literals.
 *
 * No I/O and no Redis: the handlers (handlers_*.c) and the upload (upload.c) call them and turn a
 * refusal into the reply; the fuzz targets (test/fuzz/) call them on arbitrary input. A refusal
 * is a struct entry_error (an error id of errors.h and a message) that the caller renders; no
 * validator chooses a status or writes a reply. A score is judged by its literal against the
 * board's settings, never through a double; a score's refusal takes its id and message from
 * http.h's errno table.
 */
#ifndef RANKD_VALIDATE_H
#define RANKD_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "errors.h"
#include "json_number.h"

/** Bytes of an error message, NUL included. */
#define VALIDATE_MSG_MAX 400

/** One entry as parsed from JSON, owning its strings. */
struct entry_in {
    char *id;
    enum board_op op;
    struct json_number score;          /**< the literal, judged against the board by the caller */
    struct json_number floor, ceiling; /**< incr only, when has_floor / has_ceiling: the result
                                        *   never goes below floor nor above ceiling (literals,
                                        *   judged like the score) */
    int has_floor, has_ceiling;
    char *record; /**< validated JSON or NULL */
    long line;    /**< batch index or NDJSON line number (the caller's) */
    int nsub;     /**< "subscores" given: how many (0 none); the board's count is checked by
                   *   validate_prepare */
    int64_t sub[SCORE_SUB_MAX]; /**< each a plain integer literal, |v| <= SCORE_SUB_ABS_MAX */
};

/** Free an entry's strings (safe twice). */
void entry_free(struct entry_in *e);

/** An error for one entry, before it is rendered into a reply or a rejected list. */
struct entry_error {
    enum err_id id; /**< what is wrong (errors.h: the reply's status and code) */
    char msg[VALIDATE_MSG_MAX];
};

/** Fill *err; returns -1. */
int entry_fail(struct entry_error *err, enum err_id id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * One score entry {"id","score","op","record","floor","ceiling"}: an object without duplicate
 * or unknown fields, a valid id, an op of set|best|incr, a JSON number score (its literal kept in
 * out->score; the board's range is not checked here), a valid record, and floor and ceiling (JSON
 * numbers, incr only: 400 invalid_field with another op). Returns 0 with *out (owned:
 * entry_free), or -1 with *err (out owns nothing then).
 */
int validate_entry(const cJSON *e, struct entry_in *out, struct entry_error *err);

/**
 * The common single-entry body (POST /boards/{board}/scores) read without a parse tree: an
 * object of "id", "score" and optionally "op" and "record" (each once, in any order, JSON
 * whitespace between tokens), strings without escapes or control characters, a record whose
 * keys and strings need no escapes. Returns 1 with *out exactly as cJSON,
 * json_number_annotate and validate_entry give it for body[0..len) (owned: entry_free), or 0 with
 * *out empty: anything else, valid or not (floor, ceiling, subscores, escapes, a batch, an
 * error), which that path decides and words. Test: validate_fast_same_as_tree (test-unit).
 */
int validate_entry_fast(const char *body, size_t len, struct entry_in *out);

/**
 * A record: a flat object of strings, numbers a double holds exactly, booleans and nulls, in
 * valid UTF-8, without duplicate fields, printed as at most BOARD_RECORD_BYTES_MAX bytes.
 * Returns the new JSON (free()), or NULL with *err (ERR_INVALID_RECORD, ERR_DUPLICATE_FIELD,
 * ERR_RECORD_TOO_LARGE, ERR_INTERNAL).
 */
char *validate_record(const cJSON *rec, struct entry_error *err);

/**
 * The settings object of PUT /boards/{board}: *p is reset to `defaults` with every has_ flag 0,
 * then each field given is checked and set. Returns 0, or -1 with *err (a 400).
 */
int validate_settings(const cJSON *doc, const struct board_settings *defaults,
                      struct board_settings_patch *p, struct entry_error *err);

/**
 * The body of POST /boards/{board}/lookup: {"ids":[...]} with no other field, 1 to max ids, each
 * a string that is a valid id (1..128 bytes of UTF-8, no control characters). Returns 0 with
 * *ids (borrowed from doc) and *lens (their byte lengths), both calloc'd arrays of *n (free()
 * them), or -1 with *err (a 400, or a 500 out of memory).
 */
int validate_lookup(const cJSON *doc, size_t max, const char ***ids, size_t **lens, size_t *n,
                    struct entry_error *err);

/** The first field of object `obj` whose name an earlier field already had (borrowed from obj),
 *  or NULL. cJSON keeps both and lookups take the first: {"score":1,"score":2} would be read as
 *  1 without a word. Linear in the fields. */
const char *validate_duplicate_field(const cJSON *obj);

/** The literal of a number node (json_number_annotate) in *out; a node without one (not from a
 *  client's text) is judged by the shortest text of its double. 0, or -EINVAL (not a finite
 *  number). */
int validate_number_literal(const cJSON *v, struct json_number *out);

/** board_check_score on the literal's own digits, never through a double: 0 and *key, -EDOM (too
 *  many fractional digits), -ERANGE (outside the board's range), -EINVAL. */
int validate_check_score(const struct board_settings *s, const struct json_number *score,
                         int64_t *key);

/** The 422 of a score validate_check_score refused with rc (http.h's table, scope score: -EDOM,
 *  -ERANGE, else invalid_score); the message quotes the literal as sent and the board's range.
 *  Returns -1. */
int validate_score_error(const struct board_settings *s, const struct json_number *score, int rc,
                         struct entry_error *err);

/** The same for another number judged like a score: `what` names it ("floor", "ceiling"). */
int validate_value_error(const struct board_settings *s, const char *what,
                         const struct json_number *v, int rc, struct entry_error *err);

/** Turn in[0..n) into board entries out[0..n) under settings s (borrowing their strings): 0, or
 *  -1 with err and *bad, the first entry the board cannot hold: a score, floor or ceiling the
 *  layout cannot store exactly (422), or a floor above the ceiling (400 invalid_field). An
 *  incr's floor and ceiling become the entry's key bounds (key order: on a desc board the floor
 *  is the largest key). */
int validate_prepare(const struct board_settings *s, const struct entry_in *in, size_t n,
                     struct board_entry *out, size_t *bad, struct entry_error *err);

/** The 422 score_out_of_range of an incr whose result would leave the board's range. */
void validate_range_error(const struct board_settings *s, struct entry_error *err);

/** {"<key>": at, "error": {"code", "message"}} for a rejected list: a new cJSON node (NULL on
 *  ENOMEM). */
cJSON *validate_rejected(const char *key, long at, const struct entry_error *err);

#endif
