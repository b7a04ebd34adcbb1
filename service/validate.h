/*
 * validate.h -- the pure validators of JSON request bodies: score entries, records and board
 * settings, judged on a tree cJSON parsed and json_number_annotate gave its literals.
 *
 * No I/O and no Redis: handlers.c calls them and turns a refusal into the reply; the fuzz
 * targets (test/fuzz/) call them on arbitrary input. A refusal is a struct entry_error (status,
 * code, message) that the caller renders; nothing here writes a reply.
 */
#ifndef RANKD_VALIDATE_H
#define RANKD_VALIDATE_H

#include <cjson/cJSON.h>

#include "board.h"
#include "json_number.h"

/** Bytes of an error message, NUL included. */
#define VALIDATE_MSG_MAX 400

/** One entry as parsed from JSON, owning its strings. */
struct entry_in {
    char *id;
    enum board_op op;
    struct json_number score; /**< the literal, judged against the board by the caller */
    char *record;             /**< validated JSON or NULL */
    long line;                /**< batch index or NDJSON line number (the caller's) */
};

/** Free an entry's strings (safe twice). */
void entry_free(struct entry_in *e);

/** An error for one entry, before it is rendered into a reply or a rejected list. */
struct entry_error {
    int status;       /**< HTTP status */
    const char *code; /**< static snake_case code */
    char msg[VALIDATE_MSG_MAX];
};

/** Fill *err; returns -1. */
int entry_fail(struct entry_error *err, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/**
 * One score entry {"id","score","op","record"}: an object without duplicate or unknown fields,
 * a valid id, an op of set|best|incr, a JSON number score (its literal kept in out->score; the
 * board's range is not checked here) and a valid record. Returns 0 with *out (owned: entry_free),
 * or -1 with *err (out owns nothing then).
 */
int validate_entry(const cJSON *e, struct entry_in *out, struct entry_error *err);

/**
 * A record: a flat object of strings, numbers a double holds exactly, booleans and nulls, in
 * valid UTF-8, without duplicate fields, printed as at most BOARD_RECORD_BYTES_MAX bytes.
 * Returns the new JSON (free()), or NULL with *status (400, 413, 500), *code and msg
 * (VALIDATE_MSG_MAX bytes) filled.
 */
char *validate_record(const cJSON *rec, int *status, const char **code, char *msg);

/**
 * The settings object of PUT /boards/{board}: *p is reset to `defaults` with every has_ flag 0,
 * then each field given is checked and set. Returns 0, or -1 with *err (a 400).
 */
int validate_settings(const cJSON *doc, const struct board_settings *defaults,
                      struct board_settings_patch *p, struct entry_error *err);

#endif
