/* test_freshness.c -- the freshness decision (freshness.h), with times given, never waited for:
 * fresh, early refresh (XFetch), stale while refreshing, too old, and a lowered TTL. */
#include "freshness.h"
#include "suites.h"

/* A copy made at t = 10,000 ms with a 1,000 ms TTL: soft expiry 10,850 (85%), computed in 40 ms.
 * Its bound is the TTL plus the computation: 11,040. */
static const struct fresh_copy copy = {.created_ms = 10000, .soft_ms = 10850, .delta_us = 40000};

START_TEST(test_fresh_and_stale)
{
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10000, 0, 0, 0.5), FRESH_SERVE);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10849, 0, 0, 0.5), FRESH_SERVE);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10850, 0, 0, 0.5), FRESH_STALE_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 11040, 0, 0, 0.5), FRESH_STALE_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 11041, 0, 0, 0.5), FRESH_TOO_OLD);
    /* past the bound, still served while a refresh that began in time runs */
    ck_assert_int_eq(fresh_decide(&copy, 1000, 11500, 11000, 0, 0.5), FRESH_STALE_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 11500, 11040, 0, 0.5), FRESH_STALE_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 11500, 11041, 0, 0.5), FRESH_TOO_OLD);
}
END_TEST

START_TEST(test_lowered_ttl)
{
    /* page_ttl_ms lowered to 300 since: soft expiry 10,300, bound 10,340 */
    ck_assert_int_eq(fresh_soft_expiry(&copy, 300), 10300);
    ck_assert_int_eq(fresh_soft_expiry(&copy, 5000), 10850);
    ck_assert_int_eq(fresh_decide(&copy, 300, 10299, 0, 0, 0.5), FRESH_SERVE);
    ck_assert_int_eq(fresh_decide(&copy, 300, 10300, 0, 0, 0.5), FRESH_STALE_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 300, 10341, 0, 0, 0.5), FRESH_TOO_OLD);
}
END_TEST

START_TEST(test_xfetch)
{
    /* now - delta * beta * ln(rnd) >= soft: with delta 40 ms and beta 1, rnd = e^-1 reaches 40 ms
     * ahead of the soft expiry */
    double r = 0.36787944117144233; /* e^-1 */
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10811, 0, 1.0, r), FRESH_EARLY_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10809, 0, 1.0, r), FRESH_SERVE);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10000, 0, 1.0, 1e-300), FRESH_EARLY_REFRESH);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10000, 0, 1.0, 0.999999), FRESH_SERVE);
    ck_assert_int_eq(fresh_decide(&copy, 1000, 10849, 0, 0.0, 1e-300), FRESH_SERVE); /* off */
}
END_TEST

Suite *freshness_suite(void)
{
    Suite *s = suite_create("freshness");
    TCase *tc = tcase_create("decide");
    tcase_add_test(tc, test_fresh_and_stale);
    tcase_add_test(tc, test_lowered_ttl);
    tcase_add_test(tc, test_xfetch);
    suite_add_tcase(s, tc);
    return s;
}
