/* json_number.c -- number literals judged by their digits; see json_number.h. */
#include "json_number.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "score_codec.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of the run of digits at s[i..len). */
static size_t digit_run(const char *s, size_t i, size_t len)
{
    size_t n = 0;
    while (i + n < len && is_digit(s[i + n]))
        n++;
    return n;
}

static void keep_text(const char *s, size_t len, struct json_number *out)
{
    if (len < JSON_NUMBER_TEXT_MAX) {
        memcpy(out->text, s, len);
        out->text[len] = '\0';
    } else {
        memcpy(out->text, s, JSON_NUMBER_TEXT_MAX - 4);
        memcpy(out->text + JSON_NUMBER_TEXT_MAX - 4, "...", 4);
    }
}

/* The grammar of json_number_parse (strict) or json_number_parse_plain. */
static int parse(const char *s, size_t len, int strict, struct json_number *out)
{
    /* Lengths stay far below the exponent's saturation, so exp arithmetic cannot overflow. */
    if (!s || len == 0 || len > (size_t)1 << 40)
        return -EINVAL;
    size_t i = 0;
    int neg = s[0] == '-';
    i += (size_t)neg;
    size_t int_at = i, int_len = digit_run(s, i, len);
    if (int_len == 0 || (strict && int_len > 1 && s[int_at] == '0'))
        return -EINVAL; /* no digits, or a leading zero ("01" is not JSON) */
    i += int_len;
    size_t frac_at = i, frac_len = 0;
    if (i < len && s[i] == '.') {
        frac_at = i + 1;
        frac_len = digit_run(s, frac_at, len);
        if (frac_len == 0)
            return -EINVAL; /* "1." */
        i = frac_at + frac_len;
    }
    int64_t e = 0;
    if (strict && i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        size_t elen = digit_run(s, i, len);
        if (elen == 0)
            return -EINVAL; /* "1e", "1e+" */
        for (size_t k = 0; k < elen; k++)
            if (e < JSON_NUMBER_EXP_MAX)
                e = e * 10 + (s[i + k] - '0');
        if (e > JSON_NUMBER_EXP_MAX)
            e = JSON_NUMBER_EXP_MAX;
        e = eneg ? -e : e;
        i += elen;
    }
    if (i != len)
        return -EINVAL;
    /* The digits are C = int part then fraction part (N of them); value = C * 10^(e - frac_len).
     * Drop the leading and trailing zeros: the rest are the significant digits. */
    size_t n = int_len + frac_len;
#define DIGIT(k) (s[(k) < int_len ? int_at + (k) : frac_at + ((k)-int_len)])
    size_t first = 0, last = n;
    while (first < n && DIGIT(first) == '0')
        first++;
    memset(out, 0, sizeof(*out));
    out->neg = neg;
    keep_text(s, len, out);
    if (first == n)
        return 0; /* zero, whatever the exponent: 0e999, -0.000 */
    while (DIGIT(last - 1) == '0')
        last--;
    size_t sig = last - first;
    out->exp = e - (int64_t)frac_len + (int64_t)(n - last);
    if (sig > JSON_NUMBER_DIGITS_MAX) {
        out->wide = 1;
        return 0;
    }
    uint64_t d = 0;
    for (size_t k = first; k < last; k++)
        d = d * 10 + (uint64_t)(DIGIT(k) - '0');
#undef DIGIT
    out->digits = d;
    return 0;
}

int json_number_parse(const char *s, size_t len, struct json_number *out)
{
    return parse(s, len, 1, out);
}

int json_number_parse_plain(const char *s, size_t len, struct json_number *out)
{
    return parse(s, len, 0, out);
}

int json_number_scale(const struct json_number *n, int decimals, int64_t max, int64_t *scaled)
{
    if (!n->wide && n->digits == 0) {
        *scaled = 0;
        return 0;
    }
    int64_t e = n->exp + decimals;
    if (e < 0)
        return -EDOM; /* the last significant digit is below 10^-decimals */
    if (n->wide || e > 18)
        return -ERANGE; /* at least 10^19 */
    uint64_t v = n->digits;
    for (int64_t k = 0; k < e; k++) {
        if (v > (uint64_t)max / 10)
            return -ERANGE;
        v *= 10;
    }
    if (v > (uint64_t)max)
        return -ERANGE;
    *scaled = n->neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

int json_number_score(const struct score_layout *layout, const struct json_number *n,
                      int64_t *scaled)
{
    return json_number_scale(n, layout->decimals, score_codec_scaled_max(layout), scaled);
}

int json_number_equal(const struct json_number *a, const struct json_number *b)
{
    int za = !a->wide && a->digits == 0, zb = !b->wide && b->digits == 0;
    if (za || zb)
        return za && zb;
    return !a->wide && !b->wide && a->neg == b->neg && a->digits == b->digits && a->exp == b->exp;
}

static int in_number(char c)
{
    return is_digit(c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

int json_number_next(const char *text, size_t len, size_t *pos, size_t *start, size_t *toklen)
{
    size_t i = *pos;
    while (i < len) {
        char c = text[i];
        if (c == '"') { /* a string: to the quote that is not escaped */
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
            i++;
        } else if (c == '-' || is_digit(c)) {
            size_t j = i;
            while (j < len && in_number(text[j]))
                j++;
            *start = i;
            *toklen = j - i;
            *pos = j;
            return 1;
        } else {
            i++;
        }
    }
    *pos = len;
    return 0;
}

struct walk {
    const char *text;
    size_t len, pos, at;
    int rc;
};

/* Pre-order over node and its siblings: the document order of their number tokens. */
static void annotate(cJSON *node, struct walk *w)
{
    for (; node && !w->rc; node = node->next) {
        if (cJSON_IsArray(node) || cJSON_IsObject(node)) {
            annotate(node->child, w);
            continue;
        }
        if (!cJSON_IsNumber(node))
            continue;
        size_t start, n;
        struct json_number probe;
        if (!json_number_next(w->text, w->len, &w->pos, &start, &n)) {
            w->rc = -EPROTO;
        } else if (json_number_parse(w->text + start, n, &probe)) {
            w->rc = -EINVAL;
            w->at = start;
        } else {
            char *lit = malloc(n + 1);
            if (!lit) {
                w->rc = -ENOMEM;
                return;
            }
            memcpy(lit, w->text + start, n);
            lit[n] = '\0';
            free(node->valuestring);
            node->valuestring = lit;
        }
    }
}

int json_number_annotate(cJSON *doc, const char *text, size_t len, size_t *at)
{
    struct walk w = {text, len, 0, 0, 0};
    annotate(doc, &w);
    size_t start, n;
    if (w.rc == 0 && json_number_next(text, len, &w.pos, &start, &n))
        w.rc = -EPROTO; /* a token no node took */
    if (w.rc == -EINVAL)
        *at = w.at;
    return w.rc;
}

const char *json_number_literal(const cJSON *node)
{
    return cJSON_IsNumber(node) ? node->valuestring : NULL;
}
