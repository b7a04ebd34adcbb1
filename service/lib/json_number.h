/*
 * json_number.h -- JSON number literals judged by their own digits, never through a double.
 *
 * cJSON turns every number into a double (strtod) and keeps no text, so a literal that rounds to
 * an acceptable double would be accepted as that double: 1.000000000000000001 as 1,
 * 0.10000000000000001 as 0.1, 1e-400 as 0, 9007199254740990.5 as 9007199254740990. rankd refuses
 * what it cannot store exactly, so every decision about a client's number is made here, on the
 * literal:
 *
 *   1. json_number_annotate gives each number node of a parsed tree its literal: a small scanner
 *      lists the number tokens of the raw text in document order, which is the order of the
 *      number nodes in a pre-order walk (cJSON parses in document order and keeps members and
 *      elements in order). Each node keeps its literal in `valuestring` (see there).
 *   2. json_number_parse reads a literal (RFC 8259 grammar) into an exact decimal:
 *      value = (-1)^neg * digits * 10^exp, by integer arithmetic on the digit string.
 *   3. json_number_scale / json_number_score judge it: the exact scaled integer
 *      value * 10^decimals that score_codec uses, or -EDOM (more fractional digits than kept),
 *      -ERANGE (outside the range).
 *
 * Exponent forms are plain decimals written another way: 2.5e1 is 25, 1E+2 is 100, 1.0e-1 is
 * 0.1; trailing zeros after the point change nothing (20.0 is 20). Only the value counts.
 *
 * Pure and thread-safe; json_number_annotate allocates (one string per number node).
 * Unit-tested in test/unit/test_json_number.c.
 */
#ifndef RANKD_JSON_NUMBER_H
#define RANKD_JSON_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/** Bytes of json_number.text, NUL included: literals of up to 63 characters are kept whole. */
#define JSON_NUMBER_TEXT_MAX 64
/** Significant digits `digits` holds; more make the number `wide`. */
#define JSON_NUMBER_DIGITS_MAX 19
/** |exponent| as written is saturated here (1e999999999999999999 is still out of any range). */
#define JSON_NUMBER_EXP_MAX INT64_C(1000000000000000)

/** An exact decimal: value = (neg ? -1 : 1) * digits * 10^exp. */
struct json_number {
    uint64_t digits; /**< significant digits, leading and trailing zeros dropped; 0 for zero */
    int64_t exp;     /**< power of ten of the last significant digit (0 for zero) */
    int neg;         /**< a '-' was written (also "-0", which is zero all the same) */
    int wide; /**< more than JSON_NUMBER_DIGITS_MAX significant digits: `digits` is unset, the
                   last significant digit (never 0) is still at 10^exp */
    char text[JSON_NUMBER_TEXT_MAX]; /**< the literal as sent, for messages; a longer one is cut
                                          to its first 60 bytes and "..." */
};

/**
 * Read an RFC 8259 number: '-'? ('0' | [1-9][0-9]*) ('.' [0-9]+)? ([eE] [+-]? [0-9]+)?.
 * Returns 0 and writes *out, or -EINVAL (anything else: "01", "1.", ".5", "-", "+1", "1e",
 * "0x1", "inf", spaces). Never rounds; any length.
 */
int json_number_parse(const char *s, size_t len, struct json_number *out);

/**
 * Read a plain decimal as query parameters take it: '-'? [0-9]+ ('.' [0-9]+)?, leading zeros
 * allowed ("007" is 7), no exponent. Returns 0 and writes *out, or -EINVAL.
 */
int json_number_parse_plain(const char *s, size_t len, struct json_number *out);

/**
 * The exact integer n * 10^decimals when |it| <= max (decimals >= 0, 0 <= max < 2^63).
 * Returns 0 and writes *scaled, -EDOM when n has more fractional digits than `decimals` (checked
 * first: 1e-400 and 12345678901234567890.5 on a 0-decimal board are -EDOM), -ERANGE when the
 * scaled value is above max in magnitude (1e400, 1e999999999, 4294967296).
 */
int json_number_scale(const struct json_number *n, int decimals, int64_t max, int64_t *scaled);

struct score_layout;

/** json_number_scale for a board layout: its decimals and score_codec_scaled_max. */
int json_number_score(const struct score_layout *layout, const struct json_number *n,
                      int64_t *scaled);

/** 1 when a and b are the same value (zero equals minus zero), else 0. Two wide numbers are
 *  never equal (nothing needs to compare them). */
int json_number_equal(const struct json_number *a, const struct json_number *b);

/**
 * The scanner: the next number token of JSON text[0..len) at or after *pos, skipping strings
 * (keys and values, with their escapes). A token starts with '-' or a digit outside a string
 * and runs over [0-9+-.eE], the characters cJSON reads into a number; in a text cJSON parsed,
 * that is exactly the number it read. Returns 1 with *start, *toklen and *pos after the token,
 * or 0 when there is none.
 */
int json_number_next(const char *text, size_t len, size_t *pos, size_t *start, size_t *toklen);

/**
 * Give every number node of `doc` (parsed by cJSON from text[0..len)) its literal: a new
 * NUL-terminated copy in node->valuestring, which cJSON_Delete frees and cJSON_Duplicate copies.
 * The type stays cJSON_Number, so cJSON_IsNumber and valuedouble are unchanged.
 * Returns 0; -EINVAL when a number is not RFC 8259 JSON (cJSON also takes "01", "1.", "-.5"),
 * with *at its byte offset; -ENOMEM; -EPROTO when the tokens and the nodes do not pair up (a
 * bug). On failure some nodes may have their literal already; the tree is still freed whole.
 */
int json_number_annotate(cJSON *doc, const char *text, size_t len, size_t *at);

/** The literal json_number_annotate gave a number node, or NULL (not a number, not annotated). */
const char *json_number_literal(const cJSON *node);

#endif
