/*
 * validate_fast.c -- the common single-entry body read without a parse tree; see validate.h
 * (validate_entry_fast). cJSON, json_number_annotate and validate_entry cost a one-entry write
 * about 15,000 instructions (callgrind, bench/results/write-cost.md); this scan does the same
 * body in a small part of that, and hands anything it does not take (escapes, other fields,
 * other whitespace, nested values, anything invalid) to that path, which decides and words the
 * error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "request.h"
#include "validate.h"

/* Longest number literal taken here (cJSON reads at most 63 characters of one). */
#define FAST_NUMBER_MAX 40
/* Record fields taken here (the duplicate check compares each pair). */
#define FAST_RECORD_FIELDS 32

struct scan {
    const char *s;
    size_t len, at;
};

static void ws(struct scan *c)
{
    while (c->at < c->len && (c->s[c->at] == ' ' || c->s[c->at] == '\t' || c->s[c->at] == '\n' ||
                              c->s[c->at] == '\r'))
        c->at++;
}

/* A string without escapes or control characters at c->at: its bytes (between the quotes) in
 * *p, *n; 0, or -1 (not such a string). */
static int str(struct scan *c, const char **p, size_t *n)
{
    if (c->at >= c->len || c->s[c->at] != '"')
        return -1;
    size_t from = ++c->at;
    while (c->at < c->len && c->s[c->at] != '"') {
        unsigned char ch = (unsigned char)c->s[c->at];
        if (ch < 0x20 || ch == '\\')
            return -1;
        c->at++;
    }
    if (c->at >= c->len)
        return -1;
    *p = c->s + from;
    *n = c->at - from;
    c->at++;
    return 0;
}

/* A number token at c->at (the characters cJSON reads into one), RFC 8259 and short: its text in
 * *p, *n; 0, or -1. */
static int num(struct scan *c, const char **p, size_t *n, struct json_number *out)
{
    size_t from = c->at;
    for (; c->at < c->len; c->at++) {
        char ch = c->s[c->at];
        if (!((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.' || ch == 'e' ||
              ch == 'E'))
            break;
    }
    *p = c->s + from;
    *n = c->at - from;
    if (*n == 0 || *n > FAST_NUMBER_MAX)
        return -1;
    return json_number_parse(*p, *n, out) == 0 ? 0 : -1;
}

static int word(struct scan *c, const char *w)
{
    size_t n = strlen(w);
    if (c->len - c->at < n || memcmp(c->s + c->at, w, n) != 0)
        return -1;
    c->at += n;
    return 0;
}

/* Append bytes to out (cap BOARD_RECORD_BYTES_MAX + 1, NUL kept room for); -1 past it. */
static int put(char *out, size_t *olen, const char *p, size_t n)
{
    if (*olen + n > BOARD_RECORD_BYTES_MAX)
        return -1;
    memcpy(out + *olen, p, n);
    *olen += n;
    return 0;
}

/* A record: a flat object whose keys and string values need no escapes, numbers a double holds
 * exactly, booleans and nulls, valid UTF-8, no duplicate field, printed as validate_record prints
 * it (numbers by render_number_text of their double) in at most BOARD_RECORD_BYTES_MAX bytes.
 * A new string in *json; 0, or -1 (not taken here: nothing allocated). */
static int record(struct scan *c, char **json)
{
    char out[BOARD_RECORD_BYTES_MAX + 1];
    size_t olen = 0, nkeys = 0;
    const char *keys[FAST_RECORD_FIELDS];
    size_t klen[FAST_RECORD_FIELDS];
    if (c->s[c->at] != '{')
        return -1;
    c->at++;
    put(out, &olen, "{", 1);
    ws(c);
    if (c->at < c->len && c->s[c->at] == '}') {
        c->at++;
    } else {
        for (;;) {
            const char *k, *v;
            size_t kn, vn;
            ws(c);
            if (nkeys == FAST_RECORD_FIELDS || str(c, &k, &kn) || !request_utf8_valid(k, kn))
                return -1;
            for (size_t i = 0; i < nkeys; i++)
                if (klen[i] == kn && memcmp(keys[i], k, kn) == 0)
                    return -1;
            keys[nkeys] = k;
            klen[nkeys++] = kn;
            ws(c);
            if (c->at >= c->len || c->s[c->at] != ':')
                return -1;
            c->at++;
            ws(c);
            if (c->at >= c->len)
                return -1;
            if ((nkeys > 1 && put(out, &olen, ",", 1)) || put(out, &olen, "\"", 1) ||
                put(out, &olen, k, kn) || put(out, &olen, "\":", 2))
                return -1;
            char ch = c->s[c->at];
            if (ch == '"') {
                if (str(c, &v, &vn) || !request_utf8_valid(v, vn) || put(out, &olen, "\"", 1) ||
                    put(out, &olen, v, vn) || put(out, &olen, "\"", 1))
                    return -1;
            } else if (ch == 't' || ch == 'f' || ch == 'n') {
                const char *w = ch == 't' ? "true" : ch == 'f' ? "false" : "null";
                if (word(c, w) || put(out, &olen, w, strlen(w)))
                    return -1;
            } else {
                /* exact: the double cJSON would read prints back to the same value */
                struct json_number lit, back;
                char text[FAST_NUMBER_MAX + 1], printed[40];
                if (num(c, &v, &vn, &lit))
                    return -1;
                memcpy(text, v, vn);
                text[vn] = '\0';
                double d = strtod(text, NULL);
                if (!isfinite(d))
                    return -1;
                render_number_text(d, printed, sizeof(printed));
                if (json_number_parse(printed, strlen(printed), &back) ||
                    !json_number_equal(&lit, &back) || put(out, &olen, printed, strlen(printed)))
                    return -1;
            }
            ws(c);
            if (c->at >= c->len)
                return -1;
            if (c->s[c->at] == '}') {
                c->at++;
                break;
            }
            if (c->s[c->at] != ',')
                return -1;
            c->at++;
        }
    }
    if (put(out, &olen, "}", 1))
        return -1;
    out[olen] = '\0';
    *json = strdup(out);
    return *json ? 0 : -1;
}

int validate_entry_fast(const char *body, size_t len, struct entry_in *out)
{
    static const char *const ops[] = {"set", "best", "incr"};
    struct scan c = {.s = body, .len = len};
    const char *id = NULL, *p;
    size_t idlen = 0, n;
    int seen_id = 0, seen_score = 0, seen_op = 0, seen_record = 0, opi = 0;
    memset(out, 0, sizeof(*out));
    ws(&c);
    if (c.at >= c.len || body[c.at] != '{')
        return 0;
    c.at++;
    for (;;) {
        ws(&c);
        if (str(&c, &p, &n))
            goto decline;
        ws(&c);
        if (c.at >= c.len || body[c.at] != ':')
            goto decline;
        c.at++;
        ws(&c);
        if (c.at >= c.len)
            goto decline;
        if (n == 2 && memcmp(p, "id", 2) == 0 && !seen_id++) {
            if (str(&c, &id, &idlen) || !request_id_valid(id, idlen))
                goto decline;
        } else if (n == 5 && memcmp(p, "score", 5) == 0 && !seen_score++) {
            const char *v;
            size_t vn;
            if (num(&c, &v, &vn, &out->score))
                goto decline;
        } else if (n == 2 && memcmp(p, "op", 2) == 0 && !seen_op++) {
            const char *v;
            size_t vn;
            if (str(&c, &v, &vn))
                goto decline;
            for (opi = 0; opi < 3; opi++)
                if (strlen(ops[opi]) == vn && memcmp(ops[opi], v, vn) == 0)
                    break;
            if (opi == 3)
                goto decline;
        } else if (n == 6 && memcmp(p, "record", 6) == 0 && !seen_record++) {
            if (record(&c, &out->record))
                goto decline;
        } else {
            goto decline; /* another field, or one given twice */
        }
        ws(&c);
        if (c.at >= c.len)
            goto decline;
        if (body[c.at] == '}')
            break;
        if (body[c.at] != ',')
            goto decline;
        c.at++;
    }
    c.at++;
    ws(&c);
    if (c.at != c.len || !seen_id || !seen_score || !(out->id = strndup(id, idlen)))
        goto decline;
    out->op = (enum board_op)opi;
    return 1;
decline:
    entry_free(out);
    memset(out, 0, sizeof(*out));
    return 0;
}
