/*
 * fuzz_score_codec.c -- the compound score codec (score_codec.c) on every layout.
 *
 * Input: a layout byte, then (key, tie) pairs and doubles as 8-byte words.
 * Properties (score_codec.h): pack accepts exactly |key| <= the layout's max and
 * 0 <= tie < 2^T, and unpack inverts it; the stored order is the (key, tie) order; whatever
 * unpack accepts packs back to the same double; unscale then scale is the identity on the
 * layout's range, and scale then unscale gives back the double it accepted. And the text every
 * score and record number is printed as (render_number_text): an RFC 8259 number that reads back
 * as exactly the double, plain digits for an integer within 2^53 (issue 13: never 1e+15).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "json_number.h"
#include "render.h"
#include "score_codec.h"

/* A value near the interesting edges: small, near the layout's max, or any 64-bit word. */
static int64_t pick(struct fuzz_in *in, int64_t max)
{
    uint64_t w = fuzz_u64(in);
    int64_t small = (int64_t)(w >> 3) % 4096 - 2048;
    switch (w & 7) {
    case 0:
        return small;
    case 1:
        return max + small % 4;
    case 2:
        return -max + small % 4;
    case 3:
        return (int64_t)(w >> 3) % (max + 3) - (int64_t)(w & 8 ? max + 1 : 0);
    default:
        return (int64_t)w;
    }
}

static void check_pack(const struct score_layout *l, int64_t key, int64_t tie, double *stored,
                       int *ok)
{
    int bits = score_codec_tie_bits(l);
    int64_t max = score_codec_scaled_max(l);
    int want = key >= -max && key <= max && tie >= 0 && tie < (INT64_C(1) << bits);
    *ok = score_codec_pack(l, key, tie, stored) == 0;
    FUZZ_CHECK(*ok == want, "pack(%lld, %lld) %d, want %d", (long long)key, (long long)tie, *ok,
               want);
    if (!*ok)
        return;
    int64_t k = 0, t = 0;
    FUZZ_CHECK(score_codec_unpack(l, *stored, &k, &t) == 0 && k == key && t == tie,
               "unpack(pack(%lld, %lld)) = (%lld, %lld)", (long long)key, (long long)tie,
               (long long)k, (long long)t);
}

static void check_text(double d)
{
    if (!isfinite(d))
        return;
    char text[40];
    render_number_text(d, text, sizeof(text));
    struct json_number n;
    FUZZ_CHECK(json_number_parse(text, strlen(text), &n) == 0, "%.17g printed as '%s'", d, text);
    FUZZ_CHECK(strtod(text, NULL) == d, "%.17g printed as '%s' reads %.17g", d, text,
               strtod(text, NULL));
    if (d == floor(d) && fabs(d) <= 0x1p53)
        FUZZ_CHECK(strspn(text, "-0123456789") == strlen(text), "integer %.17g printed as '%s'", d,
                   text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    unsigned b = fuzz_byte(&in);
    struct score_layout l = {
        .order = (b & 1) ? SCORE_ORDER_ASC : SCORE_ORDER_DESC,
        .tiebreak = (enum score_tiebreak)((b >> 1) % 3),
        .decimals = (int)((b >> 3) % (SCORE_DECIMALS_MAX + 1)),
    };
    int64_t max = score_codec_scaled_max(&l);
    int64_t tie_cap = INT64_C(1) << score_codec_tie_bits(&l);
    while (in.n) {
        int64_t k1 = pick(&in, max), k2 = pick(&in, max);
        int64_t t1 = pick(&in, tie_cap), t2 = pick(&in, tie_cap);
        double s1 = 0, s2 = 0;
        int ok1 = 0, ok2 = 0;
        check_pack(&l, k1, t1, &s1, &ok1);
        check_pack(&l, k2, t2, &s2, &ok2);
        if (ok1 && ok2) {
            int want = k1 < k2 || (k1 == k2 && t1 < t2) ? -1 : (k1 == k2 && t1 == t2 ? 0 : 1);
            int got = s1 < s2 ? -1 : s1 == s2 ? 0 : 1;
            FUZZ_CHECK(got == want, "order of (%lld,%lld) and (%lld,%lld)", (long long)k1,
                       (long long)t1, (long long)k2, (long long)t2);
        }
        /* any double: unpack accepts only what pack makes */
        uint64_t bits = fuzz_u64(&in);
        double d;
        memcpy(&d, &bits, sizeof(d));
        if (bits & 1)
            d = (double)(int64_t)(bits >> 10) * ((bits & 2) ? -1 : 1);
        check_text(d);
        int64_t k = 0, t = 0;
        if (score_codec_unpack(&l, d, &k, &t) == 0) {
            double again = 0;
            FUZZ_CHECK(score_codec_pack(&l, k, t, &again) == 0 && again == d,
                       "unpack(%.17g) does not pack back", d);
        }
        /* scaled values: unscale then scale is the identity on the range */
        int64_t scaled = pick(&in, max);
        if (scaled >= -max && scaled <= max) {
            double score = score_codec_unscale(&l, scaled);
            check_text(score);
            int64_t back = 0;
            int rc = score_codec_scale(&l, score, &back);
            FUZZ_CHECK(rc == 0 && back == scaled, "scale(unscale(%lld)) = %d, %lld",
                       (long long)scaled, rc, (long long)back);
            FUZZ_CHECK(score_codec_key_to_scaled(&l, score_codec_key(&l, scaled)) == scaled, "key");
        }
        /* any double as a score: what scale accepts unscales to itself */
        int64_t sc = 0;
        int rc = score_codec_scale(&l, d, &sc);
        FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EDOM || rc == -ERANGE, "rc %d", rc);
        FUZZ_CHECK(rc != -EINVAL || !isfinite(d), "-EINVAL for a finite %.17g", d);
        if (rc == 0)
            FUZZ_CHECK(sc >= -max && sc <= max && score_codec_unscale(&l, sc) == d,
                       "scale(%.17g) = %lld", d, (long long)sc);
    }
    return 0;
}
