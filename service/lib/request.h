/*
 * request.h -- pure parsing and validation of request parts: paths, query values, ids, numbers.
 *
 * No I/O, no allocation except where stated; unit-tested in test/unit/test_request.c.
 * Errors: -EINVAL malformed input, -ERANGE a number too large, -E2BIG output does not fit.
 */
#ifndef RANKD_REQUEST_H
#define RANKD_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/** Largest page number accepted (pages are 1-based). */
#define REQUEST_PAGE_MAX INT64_C(2147483647)
/** Largest min_version accepted: a write counter, 2^53 - 1. */
#define REQUEST_VERSION_MAX INT64_C(9007199254740991)

/**
 * Percent-decode in[0..inlen) once into out (capacity outcap, NUL-terminated, on failure too:
 * then it holds what was decoded before it). '+' stays '+'. Returns 0 and *outlen, -EINVAL for a
 * malformed escape (% not followed by two hex digits), -E2BIG when out is too small.
 */
int request_pct_decode(const char *in, size_t inlen, char *out, size_t outcap, size_t *outlen);

/**
 * One name or value of the query string (libmicrohttpd splits it on '&' and '=' and hands the
 * parts over raw): request_pct_decode, and -EINVAL for an escaped NUL ("%00"), which would cut
 * the C string every handler reads.
 */
int request_arg_decode(const char *in, size_t inlen, char *out, size_t outcap, size_t *outlen);

/** A list argument (ids=a,b,c) split and decoded (request_list_split). */
struct request_list {
    size_t n;
    char **items;  /**< n NUL-terminated, decoded parts, owned (request_list_free) */
    size_t *lens;  /**< their lengths */
    char *storage; /**< where they live */
};

/**
 * Split a raw (still percent-encoded) query value on ',' and percent-decode each part once, so
 * a part may hold ',' as "%2C" (and spaces as "%20", any UTF-8 as its escapes): "a%2Cb,c" is the
 * two parts "a,b" and "c". Returns 0 and *out (free with request_list_free), -EINVAL for an
 * empty value, an empty part ("a,,b", "a,"), a malformed escape or an escaped NUL, -E2BIG for
 * more than max parts, -ENOMEM.
 */
int request_list_split(const char *raw, size_t max, struct request_list *out);

void request_list_free(struct request_list *l);

/** 1 when id is 1..128 bytes of valid UTF-8 (no overlongs, no surrogates) without control
 *  characters (C0, DEL, C1), else 0. */
int request_id_valid(const char *id, size_t len);

/** 1 when s[0..len) is valid UTF-8 (control characters allowed), else 0. */
int request_utf8_valid(const char *s, size_t len);

/** Replace every byte of s that does not start a valid UTF-8 sequence with '?', in place
 *  (for echoing client text in error messages). */
void request_utf8_sanitize(char *s);

/**
 * 1 when JSON text s[0..len) holds a NUL: a raw zero byte or a \u0000 escape (an odd run of
 * backslashes before "u0000"; "\\u0000" is an escaped backslash and the text "u0000"). cJSON
 * would end such a string early, so an id or record written would not be the one sent.
 */
int request_json_has_nul(const char *s, size_t len);

/**
 * Parse a positive decimal count: digits only (leading zeros allowed), value 1..max.
 * Returns 0 and *out; -EINVAL for empty, junk, sign, zero; -ERANGE above max.
 */
int request_parse_count(const char *s, int64_t max, int64_t *out);

#endif
