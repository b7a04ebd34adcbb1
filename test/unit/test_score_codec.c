/* test_score_codec.c -- service/score_codec.h: exact round trips, monotonicity, the bit budget. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "score_codec.h"
#include "suites.h"

/* Every layout: order (desc, asc) x tiebreak (first, last, id) x decimals (0, 1, 2, 9). */
static const int k_decimals[] = {0, 1, 2, 9};
#define N_DECIMALS ((int)(sizeof(k_decimals) / sizeof(k_decimals[0])))
#define N_LAYOUTS (2 * 3 * N_DECIMALS)

static struct score_layout layout_at(int i)
{
    struct score_layout l;
    l.order = (i / (3 * N_DECIMALS)) == 0 ? SCORE_ORDER_DESC : SCORE_ORDER_ASC;
    l.tiebreak = (enum score_tiebreak)((i / N_DECIMALS) % 3);
    l.decimals = k_decimals[i % N_DECIMALS];
    return l;
}

static int64_t tie_limit(const struct score_layout *l)
{
    return INT64_C(1) << score_codec_tie_bits(l);
}

/* The edge vectors of the boundary round trip. */
enum vec {
    V_ZERO,          /* scaled 0 */
    V_ONE,           /* scaled 1 (the smallest step) */
    V_MINUS_ONE,     /* scaled -1 */
    V_MAX,           /* scaled +max */
    V_NEG_MAX,       /* scaled -max */
    V_MAX_MINUS_1,   /* scaled max-1, the neighbour below the top */
    V_NEG_MAX_PLUS,  /* scaled -(max-1) */
    V_MAX_PLUS_1,    /* scaled max+1: -ERANGE */
    V_NEG_MAX_MINUS, /* scaled -(max+1): -ERANGE */
    V_NEG_ZERO,      /* score -0.0 */
    V_UNIT,          /* score 1.0 in board units */
    V_NEG_UNIT,      /* score -1.0 in board units */
    N_VEC
};

/* Score and expected scaled value of vector v on layout l; returns 1 when it must be accepted. */
static int vector(const struct score_layout *l, int v, double *score, int64_t *scaled)
{
    int64_t max = score_codec_scaled_max(l);
    int64_t p = 1;
    for (int d = 0; d < l->decimals; d++)
        p *= 10;
    switch (v) {
    case V_ZERO:
        *scaled = 0;
        break;
    case V_ONE:
        *scaled = 1;
        break;
    case V_MINUS_ONE:
        *scaled = -1;
        break;
    case V_MAX:
        *scaled = max;
        break;
    case V_NEG_MAX:
        *scaled = -max;
        break;
    case V_MAX_MINUS_1:
        *scaled = max - 1;
        break;
    case V_NEG_MAX_PLUS:
        *scaled = -(max - 1);
        break;
    case V_MAX_PLUS_1:
        *scaled = max + 1;
        *score = score_codec_unscale(l, *scaled);
        return 0;
    case V_NEG_MAX_MINUS:
        *scaled = -(max + 1);
        *score = score_codec_unscale(l, *scaled);
        return 0;
    case V_NEG_ZERO:
        *scaled = 0;
        *score = -0.0;
        return 1;
    case V_UNIT:
        *scaled = p;
        *score = 1.0;
        return 1;
    case V_NEG_UNIT:
        *scaled = -p;
        *score = -1.0;
        return 1;
    default:
        ck_abort_msg("bad vector %d", v);
    }
    *score = score_codec_unscale(l, *scaled);
    return 1;
}

START_TEST(test_round_trip_boundaries)
{
    struct score_layout l = layout_at(_i / N_VEC);
    int v = _i % N_VEC;
    double score = 0;
    int64_t want = 0;
    int accepted = vector(&l, v, &score, &want);
    int64_t scaled = 12345;

    if (!accepted) {
        ck_assert_int_eq(score_codec_scale(&l, score, &scaled), -ERANGE);
        ck_assert_int_eq(scaled, 12345); /* untouched on error */
        double stored = 0.5;
        ck_assert_int_eq(score_codec_pack(&l, score_codec_key(&l, want), 0, &stored), -ERANGE);
        ck_assert_double_eq(stored, 0.5);
        return;
    }

    int rc = score_codec_scale(&l, score, &scaled);
    ck_assert_msg(rc == 0 && scaled == want,
                  "order %d tiebreak %d decimals %d: scale(unscale(%lld) = %.17g) = rc %d, "
                  "scaled %lld",
                  (int)l.order, (int)l.tiebreak, l.decimals, (long long)want, score, rc,
                  (long long)scaled);
    ck_assert_double_eq(score_codec_unscale(&l, scaled), score); /* -0.0 == 0.0 */

    int64_t key = score_codec_key(&l, scaled);
    ck_assert_int_eq(key, l.order == SCORE_ORDER_DESC ? -scaled : scaled);
    ck_assert_int_eq(score_codec_key_to_scaled(&l, key), scaled);

    const int64_t ties[] = {0, SCORE_TIE_CAP - 1};
    for (size_t t = 0; t < sizeof(ties) / sizeof(ties[0]); t++) {
        double stored = 0;
        int prc = score_codec_pack(&l, key, ties[t], &stored);
        if (ties[t] >= tie_limit(&l)) { /* tiebreak id has no tie bits */
            ck_assert_int_eq(prc, -ERANGE);
            continue;
        }
        ck_assert_int_eq(prc, 0);
        ck_assert_double_eq(stored, nearbyint(stored));
        ck_assert_double_le(fabs(stored), 0x1p53 - 1);

        int64_t k2 = -7, t2 = -7;
        ck_assert_int_eq(score_codec_unpack(&l, stored, &k2, &t2), 0);
        ck_assert_int_eq(k2, key);
        ck_assert_int_eq(t2, ties[t]);

        double decoded = 99;
        ck_assert_int_eq(score_codec_decode(&l, stored, &decoded), 0);
        ck_assert_double_eq(decoded, score); /* exact, no tolerance */
    }
}
END_TEST

/* Strictly increasing stored value in (key, tie), across the sign change and the extremes. */
START_TEST(test_pack_strictly_monotone)
{
    struct score_layout l = layout_at(_i);
    int64_t max = score_codec_scaled_max(&l);
    const int64_t keys[] = {-max, -max + 1, -2, -1, 0, 1, 2, max - 1, max};
    const int64_t ties_tied[] = {0, 1, SCORE_TIE_CAP - 2, SCORE_TIE_CAP - 1};
    const int64_t ties_id[] = {0};
    int tied = score_codec_tie_bits(&l) != 0;
    const int64_t *ties = tied ? ties_tied : ties_id;
    size_t nties = tied ? sizeof(ties_tied) / sizeof(ties_tied[0]) : 1;

    double prev = -INFINITY;
    int64_t pk = 0, pt = 0;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        for (size_t t = 0; t < nties; t++) {
            double stored = 0;
            ck_assert_int_eq(score_codec_pack(&l, keys[k], ties[t], &stored), 0);
            ck_assert_msg(stored > prev,
                          "tiebreak %d: pack(%lld,%lld)=%.17g not above pack(%lld,%lld)=%.17g",
                          (int)l.tiebreak, (long long)keys[k], (long long)ties[t], stored,
                          (long long)pk, (long long)pt, prev);
            prev = stored;
            pk = keys[k];
            pt = ties[t];
        }
    }
}
END_TEST

/* The sign change itself: (-1, cap-1) < (0, 0) and (0, cap-1) < (1, 0), with nothing between. */
START_TEST(test_pack_sign_change_neighbours)
{
    struct score_layout l = {SCORE_ORDER_DESC, (enum score_tiebreak)_i, 0, 0, 0, {0}};
    int64_t last = tie_limit(&l) - 1;
    double a, b, c, d;
    ck_assert_int_eq(score_codec_pack(&l, -1, last, &a), 0);
    ck_assert_int_eq(score_codec_pack(&l, 0, 0, &b), 0);
    ck_assert_int_eq(score_codec_pack(&l, 0, last, &c), 0);
    ck_assert_int_eq(score_codec_pack(&l, 1, 0, &d), 0);
    ck_assert_double_eq(b, 0.0);
    ck_assert_double_eq(a, -1.0); /* adjacent integers: no gap and no overlap */
    ck_assert_double_eq(c, (double)last);
    ck_assert_double_eq(d, (double)(last + 1));
    ck_assert_double_lt(a, b);
    ck_assert_double_le(b, c);
    ck_assert_double_lt(c, d);
}
END_TEST

/* desc: a higher score gets a smaller key (ranks first); asc: the opposite. Works on scaled
 * values (scale itself is covered by the round trip), plus scores 2 > 1 > 0 > -1 end to end. */
START_TEST(test_order_direction)
{
    struct score_layout l = layout_at(_i);
    int64_t max = score_codec_scaled_max(&l);
    int64_t p = (int64_t)score_codec_pow10(l.decimals);
    /* pairs (hi, lo) of scaled values with hi > lo */
    const int64_t pairs[][2] = {{1, 0},           {0, -1},     {2, 1},     {-1, -2}, {max, max - 1},
                                {-max + 1, -max}, {max, -max}, {2 * p, p}, {p, 0},   {0, -p}};
    int64_t last = tie_limit(&l) - 1;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        int64_t khi = score_codec_key(&l, pairs[i][0]), klo = score_codec_key(&l, pairs[i][1]);
        double shi, slo;
        if (l.order == SCORE_ORDER_DESC) {
            ck_assert_int_lt(khi, klo);
            /* the better score wins whatever the ties */
            ck_assert_int_eq(score_codec_pack(&l, khi, last, &shi), 0);
            ck_assert_int_eq(score_codec_pack(&l, klo, 0, &slo), 0);
            ck_assert_double_lt(shi, slo);
        } else {
            ck_assert_int_gt(khi, klo);
            ck_assert_int_eq(score_codec_pack(&l, khi, 0, &shi), 0);
            ck_assert_int_eq(score_codec_pack(&l, klo, last, &slo), 0);
            ck_assert_double_gt(shi, slo);
        }
    }

    const double scores[] = {2.0, 1.0, 0.0, -1.0}; /* descending */
    int64_t prev_key = 0;
    for (size_t i = 0; i < sizeof(scores) / sizeof(scores[0]); i++) {
        int64_t scaled;
        ck_assert_int_eq(score_codec_scale(&l, scores[i], &scaled), 0);
        int64_t key = score_codec_key(&l, scaled);
        if (i > 0 && l.order == SCORE_ORDER_DESC)
            ck_assert_int_gt(key, prev_key); /* lower score, larger key, later rank */
        if (i > 0 && l.order == SCORE_ORDER_ASC)
            ck_assert_int_lt(key, prev_key);
        prev_key = key;
    }
}
END_TEST

START_TEST(test_ties_order_within_key)
{
    struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 2, 0, 0, {0}};
    double s0, s1;
    ck_assert_int_eq(score_codec_pack(&l, 500, 0, &s0), 0);
    ck_assert_int_eq(score_codec_pack(&l, 500, 1, &s1), 0);
    ck_assert_double_eq(s1 - s0, 1.0);
    ck_assert_int_eq(score_codec_pack(&l, 500, -1, &s0), -ERANGE);
    ck_assert_int_eq(score_codec_pack(&l, 500, SCORE_TIE_CAP, &s0), -ERANGE);
    l.tiebreak = SCORE_TIEBREAK_ID;
    ck_assert_int_eq(score_codec_pack(&l, 500, 1, &s0), -ERANGE);
    ck_assert_int_eq(score_codec_pack(&l, 500, 0, &s0), 0);
    ck_assert_double_eq(s0, 500.0);
}
END_TEST

/*
 * Every scaled value the layout admits (|scaled| <= score_codec_scaled_max) must survive
 * unscale -> scale unchanged, or distinct scores collapse into one. Walk the top 1000 values of
 * the tiebreak-id range for every decimals setting and report what does not come back.
 */
START_TEST(test_id_layout_exact_near_max)
{
    char report[1024] = "";
    size_t used = 0;
    int failed = 0;
    for (int d = 0; d <= SCORE_DECIMALS_MAX; d++) {
        struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, d, 0, 0, {0}};
        int64_t max = score_codec_scaled_max(&l);
        int bad = 0;
        int64_t ex = 0, got = 0;
        int exrc = 0;
        for (int64_t s = max; s > max - 1000; s--) {
            int64_t back = 0;
            int rc = score_codec_scale(&l, score_codec_unscale(&l, s), &back);
            if (rc != 0 || back != s) {
                if (!bad) {
                    ex = s;
                    got = back;
                    exrc = rc;
                }
                bad++;
            }
        }
        if (bad && used < sizeof(report)) {
            failed = 1;
            int n = snprintf(report + used, sizeof(report) - used,
                             " [decimals %d: %d/1000 lost, e.g. %lld -> rc %d scaled %lld]", d, bad,
                             (long long)ex, exrc, (long long)got);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    ck_assert_msg(!failed, "tiebreak id, scaled max 2^53-1:%s", report);
}
END_TEST

/* A 2-decimal id board: 90071992547409.90 and .91 are the same double; scale must not claim the
 * double is exactly one of them (contract: exact, else -EDOM/-ERANGE, never rounded). */
START_TEST(test_id_layout_no_silent_rounding)
{
    struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 2, 0, 0, {0}};
    ck_assert_double_eq(90071992547409.90, 90071992547409.91); /* one double, two decimals */
    int64_t s = -1;
    int rc = score_codec_scale(&l, 90071992547409.90, &s);
    ck_assert_msg(rc != 0,
                  "90071992547409.90 accepted as scaled %lld: one of .90/.91 is stored "
                  "as the other",
                  (long long)s);
}
END_TEST

static int64_t scale_ok(int decimals, double score)
{
    struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, decimals, 0, 0, {0}};
    int64_t s = -12345;
    int rc = score_codec_scale(&l, score, &s);
    ck_assert_msg(rc == 0, "scale(%.17g, decimals %d) = %d", score, decimals, rc);
    return s;
}

static int scale_rc(enum score_tiebreak tb, int decimals, double score)
{
    struct score_layout l = {SCORE_ORDER_DESC, tb, decimals, 0, 0, {0}};
    int64_t s = -12345;
    int rc = score_codec_scale(&l, score, &s);
    if (rc != 0)
        ck_assert_int_eq(s, -12345); /* out-param untouched on error */
    return rc;
}

START_TEST(test_decimals)
{
    ck_assert_int_eq(scale_ok(1, 0.1), 1);
    ck_assert_int_eq(scale_ok(1, -0.1), -1);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 1, 0.15), -EDOM);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_ID, 1, 0.15), -EDOM);
    ck_assert_int_eq(scale_ok(1, 0.3), 3);
    ck_assert_int_eq(scale_ok(2, 0.3), 30);
    /* 0.1 + 0.2 is not the double nearest 0.3: not a 1-decimal number */
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 1, 0.1 + 0.2), -EDOM);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 0, 0.5), -EDOM);
    ck_assert_int_eq(scale_ok(0, 42.0), 42);
    ck_assert_int_eq(scale_ok(2, 42949672.95), INT64_C(4294967295));
    ck_assert_int_eq(scale_ok(2, -42949672.95), -INT64_C(4294967295));
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 2, 42949672.96), -ERANGE);
    ck_assert_int_eq(scale_ok(9, 4.294967295), INT64_C(4294967295));
    ck_assert_int_eq(scale_ok(9, 0.000000001), 1);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 9, 0.0000000005), -EDOM);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 0, 1e300), -ERANGE);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 2, 1e300), -ERANGE);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_ID, 0, -1e300), -ERANGE);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_ID, 0, 0x1p53), -ERANGE);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 0, 4294967296.0), -ERANGE);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 0, NAN), -EINVAL);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_FIRST, 2, INFINITY), -EINVAL);
    ck_assert_int_eq(scale_rc(SCORE_TIEBREAK_ID, 0, -INFINITY), -EINVAL);
}
END_TEST

START_TEST(test_pow10)
{
    double p = 1.0;
    for (int d = 0; d <= SCORE_DECIMALS_MAX; d++) {
        ck_assert_double_eq(score_codec_pow10(d), p);
        p *= 10.0;
    }
}
END_TEST

static void check_range(enum score_tiebreak tb, int decimals, double want)
{
    for (int o = 0; o < 2; o++) {
        struct score_layout l = {(enum score_order)o, tb, decimals, 0, 0, {0}};
        double lo = 1, hi = -1;
        score_codec_range(&l, &lo, &hi);
        ck_assert_double_eq(hi, want);
        ck_assert_double_eq(lo, -want);
    }
}

START_TEST(test_range)
{
    check_range(SCORE_TIEBREAK_FIRST, 0, 4294967295.0);
    check_range(SCORE_TIEBREAK_LAST, 0, 4294967295.0);
    check_range(SCORE_TIEBREAK_ID, 0, 9007199254740991.0);
    check_range(SCORE_TIEBREAK_FIRST, 2, 42949672.95);
    check_range(SCORE_TIEBREAK_LAST, 2, 42949672.95);
    check_range(SCORE_TIEBREAK_FIRST, 9, 4.294967295);

    struct score_layout tied = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
    struct score_layout id = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 0, 0, 0, {0}};
    ck_assert_int_eq(score_codec_scaled_max(&tied), INT64_C(4294967295));
    ck_assert_int_eq(score_codec_scaled_max(&id), INT64_C(9007199254740991));
    ck_assert_int_eq(score_codec_tie_bits(&tied), 21);
    ck_assert_int_eq(score_codec_tie_bits(&id), 0);
}
END_TEST

static void unpack_rejects(enum score_tiebreak tb, double stored)
{
    struct score_layout l = {SCORE_ORDER_DESC, tb, 0, 0, 0, {0}};
    int64_t k = 7, t = 7;
    double score = 7;
    ck_assert_msg(score_codec_unpack(&l, stored, &k, &t) == -ERANGE,
                  "tiebreak %d: unpack(%.17g) accepted", (int)tb, stored);
    ck_assert_int_eq(k, 7);
    ck_assert_int_eq(t, 7);
    ck_assert_int_eq(score_codec_decode(&l, stored, &score), -ERANGE);
    ck_assert_double_eq(score, 7);
}

START_TEST(test_unpack_rejects)
{
    for (int tb = 0; tb < 3; tb++) {
        unpack_rejects((enum score_tiebreak)tb, 0.5);
        unpack_rejects((enum score_tiebreak)tb, -0.5);
        unpack_rejects((enum score_tiebreak)tb, 1.25);
        unpack_rejects((enum score_tiebreak)tb, 0x1p53);
        unpack_rejects((enum score_tiebreak)tb, -0x1p53);
        unpack_rejects((enum score_tiebreak)tb, 0x1p53 + 2);
        unpack_rejects((enum score_tiebreak)tb, -(0x1p53 + 2));
        unpack_rejects((enum score_tiebreak)tb, 0x1p54);
        unpack_rejects((enum score_tiebreak)tb, 1e300);
        unpack_rejects((enum score_tiebreak)tb, NAN);
        unpack_rejects((enum score_tiebreak)tb, INFINITY);
        unpack_rejects((enum score_tiebreak)tb, -INFINITY);
    }
    /* first|last: below the smallest packable value -(2^32-1)*2^21 */
    unpack_rejects(SCORE_TIEBREAK_FIRST, -(0x1p53 - 0x1p21) - 1);
    unpack_rejects(SCORE_TIEBREAK_LAST, -(0x1p53 - 0x1p21) - 1);
}
END_TEST

START_TEST(test_unpack_negative_floor)
{
    /* negative stored values split with floor division: tie stays in 0..cap-1 */
    struct score_layout l = {SCORE_ORDER_ASC, SCORE_TIEBREAK_LAST, 0, 0, 0, {0}};
    int64_t k, t;
    ck_assert_int_eq(score_codec_unpack(&l, -1.0, &k, &t), 0);
    ck_assert_int_eq(k, -1);
    ck_assert_int_eq(t, SCORE_TIE_CAP - 1);
    ck_assert_int_eq(score_codec_unpack(&l, -(double)SCORE_TIE_CAP, &k, &t), 0);
    ck_assert_int_eq(k, -1);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(score_codec_unpack(&l, -0.0, &k, &t), 0);
    ck_assert_int_eq(k, 0);
    ck_assert_int_eq(t, 0);
}
END_TEST

START_TEST(test_bit_budget)
{
    /* (2^32-1)*2^21 + 2^21-1 == 2^53-1, the largest integer binary64 still counts exactly */
    ck_assert_int_eq(SCORE_TIED_SCALED_MAX * SCORE_TIE_CAP + (SCORE_TIE_CAP - 1),
                     SCORE_EXACT_SCALED_MAX);
    ck_assert_int_eq(SCORE_EXACT_SCALED_MAX, (INT64_C(1) << 53) - 1);

    struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
    double top, below, bottom;
    ck_assert_int_eq(score_codec_pack(&l, SCORE_TIED_SCALED_MAX, SCORE_TIE_CAP - 1, &top), 0);
    ck_assert_double_eq(top, 9007199254740991.0);
    ck_assert_double_eq(top, 0x1p53 - 1);
    ck_assert_int_eq(score_codec_pack(&l, SCORE_TIED_SCALED_MAX, SCORE_TIE_CAP - 2, &below), 0);
    ck_assert_double_eq(top - below, 1.0); /* still one apart: nothing rounded */
    ck_assert_int_eq(score_codec_pack(&l, -SCORE_TIED_SCALED_MAX, 0, &bottom), 0);
    ck_assert_double_eq(bottom, -(0x1p53 - 0x1p21));

    int64_t k, t;
    ck_assert_int_eq(score_codec_unpack(&l, top, &k, &t), 0);
    ck_assert_int_eq(k, SCORE_TIED_SCALED_MAX);
    ck_assert_int_eq(t, SCORE_TIE_CAP - 1);
    ck_assert_int_eq(score_codec_unpack(&l, bottom, &k, &t), 0);
    ck_assert_int_eq(k, -SCORE_TIED_SCALED_MAX);
    ck_assert_int_eq(t, 0);

    struct score_layout id = {SCORE_ORDER_ASC, SCORE_TIEBREAK_ID, 0, 0, 0, {0}};
    double s;
    ck_assert_int_eq(score_codec_pack(&id, SCORE_EXACT_SCALED_MAX, 0, &s), 0);
    ck_assert_double_eq(s, 0x1p53 - 1);
    ck_assert_int_eq(score_codec_pack(&id, -SCORE_EXACT_SCALED_MAX, 0, &s), 0);
    ck_assert_double_eq(s, -(0x1p53 - 1));
    ck_assert_int_eq(score_codec_pack(&id, SCORE_EXACT_SCALED_MAX + 1, 0, &s), -ERANGE);
}
END_TEST

/* Sub-score bytes: memcmp order of the bytes is rank order of the values in each direction
 * (asc: smaller first; desc: larger first), over the whole +-(2^53 - 1); the member split and
 * the layout's text round-trip. */
START_TEST(test_subscore_bytes_order)
{
    static const int64_t v[] = {-SCORE_SUB_ABS_MAX, -(INT64_C(1) << 40), -256, -1, 0, 1, 255, 256,
                                INT64_C(1) << 32,   SCORE_SUB_ABS_MAX};
    size_t n = sizeof(v) / sizeof(v[0]);
    for (int asc = 0; asc <= 1; asc++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                unsigned char a[SCORE_SUB_BYTES], b[SCORE_SUB_BYTES];
                score_codec_sub_bytes(asc, v[i], a);
                score_codec_sub_bytes(asc, v[j], b);
                int c = memcmp(a, b, SCORE_SUB_BYTES);
                int want = i == j ? 0 : (asc ? (i < j) : (i > j)) ? -1 : 1;
                ck_assert_msg((c > 0) - (c < 0) == want, "asc %d: %lld vs %lld", asc,
                              (long long)v[i], (long long)v[j]);
            }
    struct score_layout l = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
    score_layout_parse("wide:dad", &l);
    ck_assert(l.wide && l.nsub == 3 && !l.sub_asc[0] && l.sub_asc[1] && !l.sub_asc[2]);
    char text[SCORE_LAYOUT_TEXT_MAX];
    ck_assert_str_eq(score_layout_text(&l, text), "wide:dad");
    ck_assert_uint_eq(score_codec_member_prefix(&l), 3 * SCORE_SUB_BYTES + SCORE_WIDE_TIE_BYTES);
    char member[3 * SCORE_SUB_BYTES + SCORE_WIDE_TIE_BYTES + 2];
    score_codec_sub_bytes(0, -SCORE_SUB_ABS_MAX, (unsigned char *)member);
    score_codec_sub_bytes(1, 7, (unsigned char *)member + 8);
    score_codec_sub_bytes(0, SCORE_SUB_ABS_MAX, (unsigned char *)member + 16);
    memset(member + 24, 0, 7);
    member[31] = 42;
    memcpy(member + 32, "id", 2);
    int64_t sub[SCORE_SUB_MAX], tie;
    ck_assert_int_eq(score_codec_member_subscores(&l, member, sizeof(member), sub), 0);
    ck_assert(sub[0] == -SCORE_SUB_ABS_MAX && sub[1] == 7 && sub[2] == SCORE_SUB_ABS_MAX);
    ck_assert_uint_eq(score_codec_member_split(&l, member, sizeof(member), &tie), 32);
    ck_assert_int_eq(tie, 42);
    l.tiebreak = SCORE_TIEBREAK_ID; /* no tie position: the id follows the sub-scores */
    ck_assert_uint_eq(score_codec_member_prefix(&l), 3 * SCORE_SUB_BYTES);
    static const char *const bad[] = {"wide:", "wide:x", "wide:ddddd", "wide;d", "packed"};
    for (size_t i = 0; i < 5; i++) {
        score_layout_parse(bad[i], &l);
        ck_assert_msg(l.nsub == 0 && l.wide == 0, "%s", bad[i]);
    }
    score_layout_parse("wide", &l);
    ck_assert(l.wide && l.nsub == 0);
    ck_assert_str_eq(score_layout_text(&l, text), "wide");
}
END_TEST

Suite *score_codec_suite(void)
{
    Suite *s = suite_create("score_codec");

    TCase *tc = tcase_create("round_trip");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, test_round_trip_boundaries, 0, N_LAYOUTS * N_VEC);
    suite_add_tcase(s, tc);

    tc = tcase_create("order");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, test_pack_strictly_monotone, 0, N_LAYOUTS);
    tcase_add_loop_test(tc, test_pack_sign_change_neighbours, SCORE_TIEBREAK_FIRST,
                        SCORE_TIEBREAK_ID + 1);
    tcase_add_loop_test(tc, test_order_direction, 0, N_LAYOUTS);
    tcase_add_test(tc, test_ties_order_within_key);
    suite_add_tcase(s, tc);

    tc = tcase_create("scale");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_decimals);
    tcase_add_test(tc, test_pow10);
    tcase_add_test(tc, test_range);
    tcase_add_test(tc, test_id_layout_exact_near_max);
    tcase_add_test(tc, test_id_layout_no_silent_rounding);
    suite_add_tcase(s, tc);

    tc = tcase_create("unpack");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_unpack_rejects);
    tcase_add_test(tc, test_unpack_negative_floor);
    tcase_add_test(tc, test_bit_budget);
    tcase_add_test(tc, test_subscore_bytes_order);
    suite_add_tcase(s, tc);

    return s;
}
