/* test_util.c -- the fixed-buffer string builder behind keys and header values (util.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "suites.h"
#include "util.h"

START_TEST(test_strb_matches_snprintf)
{
    const int64_t values[] = {
        0, 1, -1, 9, 10, 99, 1000, -1000, 1796036795418479985, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char got[64], want[64];
        struct strb b;
        strb_init(&b, got, sizeof(got));
        strb_str(&b, "P:{b}:page:");
        strb_i64(&b, values[i]);
        strb_str(&b, ":-");
        snprintf(want, sizeof(want), "P:{b}:page:%" PRId64 ":-", values[i]);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(b.len, strlen(want));
        ck_assert_int_eq(b.over, 0);
    }
}
END_TEST

START_TEST(test_strb_cuts_like_snprintf)
{
    for (size_t cap = 1; cap <= 12; cap++) {
        char got[16], want[16];
        memset(got, 'x', sizeof(got));
        struct strb b;
        strb_init(&b, got, cap);
        strb_str(&b, "abc:");
        strb_i64(&b, -123456);
        snprintf(want, cap, "abc:%d", -123456);
        ck_assert_str_eq(got, want);
        ck_assert_int_eq(b.over, cap <= strlen("abc:-123456"));
        ck_assert_int_eq(got[cap], 'x'); /* nothing written past cap */
    }
    char small[4];
    ck_assert_uint_eq(util_copy(small, sizeof(small), "abcdef"), 3);
    ck_assert_str_eq(small, "abc");
    ck_assert_uint_eq(util_copy(small, sizeof(small), ""), 0);
    ck_assert_str_eq(small, "");
}
END_TEST

Suite *util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("strb");
    tcase_add_test(tc, test_strb_matches_snprintf);
    tcase_add_test(tc, test_strb_cuts_like_snprintf);
    suite_add_tcase(s, tc);
    return s;
}
