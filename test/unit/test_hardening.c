/* test_hardening.c -- pure functions the hardening issue changed: number text (render.h). */
#include <string.h>

#include "render.h"
#include "suites.h"

static void number_is(double d, const char *want)
{
    char out[40];
    render_number_text(d, out, sizeof(out));
    ck_assert_msg(strcmp(out, want) == 0, "render_number_text(%.17g) = %s, want %s", d, out, want);
}

/* Exact integers are plain digits; everything else the shortest exact form. */
START_TEST(test_number_text_integers_plain)
{
    number_is(0, "0");
    number_is(1e15, "1000000000000000");
    number_is(-1e15, "-1000000000000000");
    number_is(9007199254740990.0, "9007199254740990");
    number_is(9007199254740991.0, "9007199254740991");
    number_is(9007199254740992.0, "9007199254740992");
    number_is(-9007199254740991.0, "-9007199254740991");
    number_is(123456789012345.0, "123456789012345");
    number_is(0.1, "0.1");
    number_is(-2.5, "-2.5");
    number_is(1e15 + 0.5, "1000000000000000.5");
    number_is(1.5e300, "1.5e+300");
    number_is(1e20, "1e+20"); /* beyond 2^53: the shortest form, as the value was written */
}
END_TEST

Suite *hardening_suite(void)
{
    Suite *s = suite_create("hardening");
    TCase *tc = tcase_create("number_text");
    tcase_add_test(tc, test_number_text_integers_plain);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    return s;
}
