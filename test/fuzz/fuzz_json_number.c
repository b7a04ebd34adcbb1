/*
 * fuzz_json_number.c -- number literals judged by their digits (json_number.c), against an
 * independent reference written from RFC 8259 and json_number.h, and against strtod.
 *
 * Input: the literal itself (any bytes). Properties: json_number_parse accepts exactly the
 * RFC 8259 grammar and json_number_parse_plain exactly '-'? [0-9]+ ('.' [0-9]+)?, and both give
 * the same value when both accept; json_number_scale agrees with the reference (result and
 * -EDOM / -ERANGE) for every decimals 0..9 and each layout's max; an exact scaled value is what
 * strtod reads (so the layouts' "exact" is true); json_number_next finds the literal whole;
 * score_codec_scale of strtod's double agrees wherever the reference says the value is exact.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "json_number.h"
#include "score_codec.h"

/* ---- the reference: a decimal as its significant digits and a power of ten */

struct ref {
    int neg, zero;
    char sig[400]; /* significant digits, no leading or trailing zeros */
    size_t nsig;
    long long exp; /* value = sig * 10^exp; saturated at +-10^17 */
};

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 8259 (strict) or the plain form; 1 when s is one, with *r. */
static int ref_parse(const char *s, size_t n, int strict, struct ref *r)
{
    memset(r, 0, sizeof(*r));
    size_t i = 0;
    if (i < n && s[i] == '-')
        r->neg = 1, i++;
    size_t int_at = i;
    while (i < n && digit(s[i]))
        i++;
    size_t int_len = i - int_at;
    if (int_len == 0 || (strict && int_len > 1 && s[int_at] == '0'))
        return 0;
    size_t frac_at = i, frac_len = 0;
    if (i < n && s[i] == '.') {
        frac_at = ++i;
        while (i < n && digit(s[i]))
            i++;
        frac_len = i - frac_at;
        if (!frac_len)
            return 0;
    }
    long long e = 0;
    if (strict && i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        size_t e_at = i;
        while (i < n && digit(s[i])) {
            e = e * 10 + (s[i] - '0');
            if (e > 100000000000000000LL)
                e = 100000000000000000LL;
            i++;
        }
        if (i == e_at)
            return 0;
        e = eneg ? -e : e;
    }
    if (i != n)
        return 0;
    if (int_len + frac_len >= sizeof(r->sig))
        return -1; /* valid, but too long for the reference: not compared */
    char all[sizeof(r->sig)];
    memcpy(all, s + int_at, int_len);
    memcpy(all + int_len, s + frac_at, frac_len);
    size_t len = int_len + frac_len, a = 0, b = len;
    while (a < len && all[a] == '0')
        a++;
    if (a == len) {
        r->zero = 1;
        return 1;
    }
    while (all[b - 1] == '0')
        b--;
    r->nsig = b - a;
    memcpy(r->sig, all + a, r->nsig);
    r->exp = e - (long long)frac_len + (long long)(len - b);
    return 1;
}

/* value * 10^decimals as an integer of magnitude <= max: 0, -EDOM or -ERANGE. */
static int ref_scale(const struct ref *r, int decimals, int64_t max, int64_t *out)
{
    if (r->zero) {
        *out = 0;
        return 0;
    }
    long long e = r->exp + decimals;
    if (e < 0)
        return -EDOM;
    if ((long long)r->nsig + e > 19)
        return -ERANGE;
    uint64_t v = 0; /* at most 19 digits: below 10^19 < 2^64 */
    for (size_t i = 0; i < r->nsig; i++)
        v = v * 10 + (unsigned)(r->sig[i] - '0');
    for (long long i = 0; i < e; i++)
        v *= 10;
    if (v > (uint64_t)max)
        return -ERANGE;
    *out = r->neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 380)
        return 0;
    const char *s = (const char *)data;
    struct json_number n, p;
    struct ref r, rp;
    int strict = json_number_parse(s, size, &n) == 0;
    int plain = json_number_parse_plain(s, size, &p) == 0;
    int want_strict = ref_parse(s, size, 1, &r);
    int want_plain = ref_parse(s, size, 0, &rp);
    if (want_strict >= 0)
        FUZZ_CHECK(strict == want_strict, "parse '%.*s': %d, want %d", (int)size, s, strict,
                   want_strict);
    if (want_plain >= 0)
        FUZZ_CHECK(plain == want_plain, "plain '%.*s': %d, want %d", (int)size, s, plain,
                   want_plain);
    if (strict && plain && !n.wide && !p.wide)
        FUZZ_CHECK(json_number_equal(&n, &p), "strict and plain differ on '%.*s'", (int)size, s);
    static const int64_t maxes[] = {SCORE_TIED_SCALED_MAX, SCORE_EXACT_SCALED_MAX,
                                    SCORE_DECIMAL_SCALED_MAX, INT64_MAX};
    for (int which = 0; which < 2; which++) {
        const struct json_number *jn = which ? &p : &n;
        const struct ref *rr = which ? &rp : &r;
        if (!(which ? plain : strict) || (which ? want_plain : want_strict) != 1)
            continue;
        if (!jn->wide)
            FUZZ_CHECK(json_number_equal(jn, jn), "a number differs from itself");
        for (int d = 0; d <= SCORE_DECIMALS_MAX; d++)
            for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
                int64_t got = 0, want = 0;
                int rc = json_number_scale(jn, d, maxes[m], &got);
                int wrc = ref_scale(rr, d, maxes[m], &want);
                FUZZ_CHECK(rc == wrc && (rc || got == want),
                           "scale '%.*s' d=%d max=%lld: %d %lld, want %d %lld", (int)size, s, d,
                           (long long)maxes[m], rc, (long long)got, wrc, (long long)want);
            }
    }
    if (!strict || want_strict != 1)
        return 0;
    /* the scanner finds the literal whole */
    size_t pos = 0, start = 0, toklen = 0;
    FUZZ_CHECK(json_number_next(s, size, &pos, &start, &toklen) == 1 && start == 0 &&
                   toklen == size,
               "scanner on '%.*s'", (int)size, s);
    /* exact values are what a correctly rounding parser reads */
    char *z = malloc(size + 1);
    if (!z)
        return 0;
    memcpy(z, s, size);
    z[size] = '\0';
    double d = strtod(z, NULL);
    free(z);
    for (int dec = 0; dec <= SCORE_DECIMALS_MAX; dec++) {
        int64_t scaled = 0;
        if (json_number_scale(&n, dec, SCORE_EXACT_SCALED_MAX, &scaled))
            continue;
        FUZZ_CHECK(d == (double)scaled / score_codec_pow10(dec),
                   "'%.*s' reads %.17g, not %lld / 10^%d", (int)size, s, d, (long long)scaled, dec);
        struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, dec, 0, 0, {0}};
        int64_t via = 0, lit = 0;
        int lrc = json_number_score(&l, &n, &lit);
        if (lrc == 0)
            FUZZ_CHECK(score_codec_scale(&l, d, &via) == 0 && via == lit,
                       "score_codec disagrees on '%.*s' at %d decimals", (int)size, s, dec);
    }
    return 0;
}
