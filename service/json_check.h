/*
 * json_check.h -- checks of client JSON that cJSON does not make: a field given twice, a number
 * judged by its literal, a score checked against a board by its digits. Pure: no I/O; unit
 * tests in test/unit/test_entry.c.
 */
#ifndef RANKD_JSON_CHECK_H
#define RANKD_JSON_CHECK_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "json_number.h"

/** The first field of object `obj` whose name an earlier field already had (borrowed from obj),
 *  or NULL. cJSON keeps both and lookups take the first: {"score":1,"score":2} would be read as
 *  1 without a word. Linear in the fields. */
const char *json_check_duplicate(const cJSON *obj);

/** The literal of a number node (json_number_annotate) in *out; a node without one (not from a
 *  client's text) is judged by the shortest text of its double. 0, or -EINVAL (not a finite
 *  number). */
int json_check_number(const cJSON *v, struct json_number *out);

/** board_check_score on the literal's own digits, never through a double: 0 and *key, -EDOM (too
 *  many fractional digits), -ERANGE (outside the board's range), -EINVAL. */
int json_check_score(const struct board_settings *s, const struct json_number *score, int64_t *key);

#endif
