/* test_cors.c -- --cors-origin parsing and origin matching. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "cors.h"
#include "suites.h"

START_TEST(parse)
{
    struct cors c;
    char err[160];
    ck_assert_int_eq(cors_parse("", &c, err, sizeof(err)), 0);
    ck_assert_int_eq(cors_enabled(&c), 0);
    ck_assert_ptr_null(cors_allow_origin(&c, "https://a.example"));
    ck_assert_int_eq(cors_parse("*", &c, err, sizeof(err)), 0);
    ck_assert_str_eq(cors_allow_origin(&c, "https://a.example"), "*");
    ck_assert_ptr_null(cors_allow_origin(&c, NULL)); /* not a cross-origin request */
    ck_assert_int_eq(cors_parse("https://A.example, http://localhost:5173,http://[::1]:8080", &c,
                                err, sizeof(err)),
                     0);
    ck_assert_int_eq(c.norigins, 3);
    ck_assert_str_eq(cors_allow_origin(&c, "https://a.example"), "https://a.example");
    ck_assert_str_eq(cors_allow_origin(&c, "http://localhost:5173"), "http://localhost:5173");
    ck_assert_str_eq(cors_allow_origin(&c, "http://[::1]:8080"), "http://[::1]:8080");
    ck_assert_ptr_null(cors_allow_origin(&c, "http://localhost:5174"));
    ck_assert_ptr_null(cors_allow_origin(&c, "https://a.example.evil"));
    ck_assert_ptr_null(cors_allow_origin(&c, "null"));
}
END_TEST

START_TEST(parse_refuses)
{
    struct cors c;
    char err[160];
    static const char *const bad[] = {
        "a.example",   "ftp://a.example", "https://a.example/", "https://a.example/x",
        "https://",    "https://a:",      "https://a:123456",   "https://a.example, *",
        "https://a b", "https://[::1",    "https://a.example,", "http://x_y",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_msg(cors_parse(bad[i], &c, err, sizeof(err)) == -EINVAL, "%s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no reason for %s", bad[i]);
    }
    char many[17 * 24 + 1] = "";
    for (int i = 0; i < 17; i++) {
        char one[24];
        snprintf(one, sizeof(one), "%shttp://h%d", i ? "," : "", i);
        strcat(many, one);
    }
    ck_assert_int_eq(cors_parse(many, &c, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(methods)
{
    ck_assert_int_eq(cors_method_offered("GET"), 1);
    ck_assert_int_eq(cors_method_offered("HEAD"), 1);
    ck_assert_int_eq(cors_method_offered("POST"), 0);
    ck_assert_int_eq(cors_method_offered("get"), 0); /* methods are case-sensitive */
    ck_assert_int_eq(cors_method_offered(NULL), 0);
}
END_TEST

Suite *cors_suite(void)
{
    Suite *s = suite_create("cors");
    TCase *tc = tcase_create("cors");
    tcase_add_test(tc, parse);
    tcase_add_test(tc, parse_refuses);
    tcase_add_test(tc, methods);
    suite_add_tcase(s, tc);
    return s;
}
