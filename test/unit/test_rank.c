/* test_rank.c -- rank types and the exact percentile arithmetic (rank.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rank.h"
#include "suites.h"

START_TEST(test_rank_type_names)
{
    enum rank_type t = RANK_DENSE;
    ck_assert_int_eq(rank_type_parse("ordinal", &t), 0);
    ck_assert_int_eq(t, RANK_ORDINAL);
    ck_assert_int_eq(rank_type_parse("competition", &t), 0);
    ck_assert_int_eq(t, RANK_COMPETITION);
    ck_assert_int_eq(rank_type_parse("dense", &t), 0);
    ck_assert_int_eq(t, RANK_DENSE);
    static const char *const bad[] = {"", "Dense", "dense ", "1224", "modified", "ordinal\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(rank_type_parse(bad[i], &t), -EINVAL);
    ck_assert_str_eq(rank_type_name(RANK_COMPETITION), "competition");
    ck_assert_str_eq(rank_type_name(RANK_DENSE), "dense");
    ck_assert_str_eq(rank_type_name(RANK_ORDINAL), "ordinal");
}
END_TEST

/* 100 * (total - rank) / total in hundredths, rounded half up, exact for huge totals. */
START_TEST(test_percentile_cents)
{
    static const struct {
        int64_t total, rank, cents;
    } cases[] = {
        {1, 1, 0},
        {2, 1, 5000},
        {2, 2, 0},
        {3, 1, 6667},
        {3, 2, 3333},
        {9, 3, 6667},
        {8, 1, 8750},
        {200000, 1, 10000},
        {200001, 1, 10000},
        {19999, 1, 9999},
        {40000, 39999, 0},
        {40000, 39998, 1},
        {7, 4, 4286},
        {INT64_C(9007199254740991), 1, 10000},
        {INT64_C(9007199254740991), INT64_C(4503599627370496), 5000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(rank_percentile_cents(cases[i].total, cases[i].rank) == cases[i].cents,
                      "total %lld rank %lld: %lld, want %lld", (long long)cases[i].total,
                      (long long)cases[i].rank,
                      (long long)rank_percentile_cents(cases[i].total, cases[i].rank),
                      (long long)cases[i].cents);
    /* out of range: 0 */
    ck_assert_int_eq(rank_percentile_cents(0, 1), 0);
    ck_assert_int_eq(rank_percentile_cents(3, 4), 0);
    ck_assert_int_eq(rank_percentile_cents(3, 0), 0);
}
END_TEST

START_TEST(test_percent_literals)
{
    static const struct {
        const char *text;
        int64_t share;
    } good[] = {{"0", 0},        {"100", 1000000}, {"50", 500000},        {"99.9999", 999999},
                {"0.0001", 1},   {"007", 70000},   {"100.0000", 1000000}, {"12.50", 125000},
                {"33.3", 333000}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t v = -1;
        ck_assert_msg(rank_percent_parse(good[i].text, &v) == 0 && v == good[i].share, "%s -> %lld",
                      good[i].text, (long long)v);
    }
    static const char *const bad[] = {
        "",   "-1", "-0",  "100.0001", "101", "0.00001", "1e2", "+5",
        ".5", "5.", "abc", "50%",      " 50", "1,5",     "NaN", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v = 7;
        ck_assert_msg(rank_percent_parse(bad[i], &v) == -EINVAL && v == 7, "%s accepted", bad[i]);
    }
}
END_TEST

START_TEST(test_decimal_text)
{
    static const struct {
        int64_t v;
        int decimals;
        const char *text;
    } cases[] = {{6667, 2, "66.67"}, {5000, 2, "50"},   {1250, 2, "12.5"},
                 {5, 2, "0.05"},     {0, 4, "0"},       {999000, 4, "99.9"},
                 {1, 4, "0.0001"},   {10000, 2, "100"}, {12345, 0, "12345"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char t[32];
        rank_decimal_text(cases[i].v, cases[i].decimals, t, sizeof(t));
        ck_assert_str_eq(t, cases[i].text);
    }
}
END_TEST

Suite *rank_suite(void)
{
    Suite *s = suite_create("rank");
    TCase *tc = tcase_create("arithmetic");
    tcase_add_test(tc, test_rank_type_names);
    tcase_add_test(tc, test_percentile_cents);
    tcase_add_test(tc, test_percent_literals);
    tcase_add_test(tc, test_decimal_text);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    return s;
}
