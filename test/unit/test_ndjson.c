/* test_ndjson.c -- the NDJSON splitter (ndjson.h): lines across chunk boundaries, CRLF, blank
 * lines, over-long lines, the end of the stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndjson.h"
#include "suites.h"

/* Every event of `in` fed in chunks of `step` bytes, as "no:text|" for lines and "no:LONG|". */
static void split(const char *in, size_t step, size_t max, char *out, size_t cap)
{
    struct ndjson nd;
    ndjson_init(&nd, max);
    out[0] = '\0';
    size_t len = strlen(in);
    for (size_t off = 0;; off += step) {
        int end = off >= len;
        size_t n = end ? 0 : (len - off < step ? len - off : step);
        size_t at = 0;
        for (;;) {
            const char *text = NULL;
            size_t tl = 0;
            long no = 0;
            enum ndjson_event ev = ndjson_next(&nd, end ? NULL : in + off, n, &at, &text, &tl, &no);
            if (ev == NDJSON_MORE)
                break;
            ck_assert_int_ne(ev, NDJSON_NO_MEMORY);
            size_t used = strlen(out);
            if (ev == NDJSON_LINE) {
                ck_assert_uint_eq(strlen(text), tl);
                snprintf(out + used, cap - used, "%ld:%s|", no, text);
            } else {
                snprintf(out + used, cap - used, "%ld:LONG|", no);
            }
        }
        if (end)
            break;
        ck_assert_uint_eq(at, n); /* every chunk is used up */
    }
    ndjson_free(&nd);
}

START_TEST(test_lines_any_chunking)
{
    const char *in = "{\"a\":1}\n\r\n  \t\r\n{\"b\":2}\r\n\n\r\r\n{\"c\":3}";
    const char *want = "1:{\"a\":1}|4:{\"b\":2}|7:{\"c\":3}|";
    for (size_t step = 1; step <= strlen(in) + 1; step++) {
        char out[512];
        split(in, step, 100, out, sizeof(out));
        ck_assert_msg(strcmp(out, want) == 0, "step %zu: %s", step, out);
    }
}
END_TEST

START_TEST(test_too_long_lines)
{
    const char *in = "12345\n123456\n1234567890123\nok\n123456";
    const char *want = "1:12345|2:LONG|3:LONG|4:ok|5:LONG|";
    for (size_t step = 1; step <= strlen(in); step++) {
        char out[512];
        split(in, step, 5, out, sizeof(out));
        ck_assert_msg(strcmp(out, want) == 0, "step %zu: %s", step, out);
    }
}
END_TEST

/* the limit is the line's own bytes: a '\r' before its '\n' does not count */
START_TEST(test_limit_without_the_cr)
{
    for (size_t step = 1; step <= 8; step++) {
        char out[128];
        split("12345\r\n123456\r\n12345\n123456\n12345\r", step, 5, out, sizeof(out));
        ck_assert_msg(strcmp(out, "1:12345|2:LONG|3:12345|4:LONG|5:12345|") == 0, "step %zu: %s",
                      step, out);
    }
}
END_TEST

/* A line of only '\r', spaces and tabs is blank however long it is, in any chunking; a line
 * longer than max with a blank start and then something else is still too long (before: a
 * blank line over max was LONG). */
START_TEST(test_long_blank_lines)
{
    const char *in = "ok\n\r\r\r\r\r\r\r\r\n        \t\r\n\r\r\r\r\r\r\r\r\r\r\n"
                     "      x\nab\n\r\r\r\r\r\r\r\r";
    const char *want = "1:ok|5:LONG|6:ab|";
    for (size_t step = 1; step <= strlen(in) + 1; step++) {
        char out[256];
        split(in, step, 5, out, sizeof(out));
        ck_assert_msg(strcmp(out, want) == 0, "step %zu: %s", step, out);
    }
}
END_TEST

START_TEST(test_empty_and_last_line)
{
    char out[128];
    split("", 4, 10, out, sizeof(out));
    ck_assert_str_eq(out, "");
    split("\n\n\n", 1, 10, out, sizeof(out));
    ck_assert_str_eq(out, "");
    split("x", 1, 10, out, sizeof(out));
    ck_assert_str_eq(out, "1:x|");
    split("x\r", 1, 10, out, sizeof(out));
    ck_assert_str_eq(out, "1:x|");
    split("\r", 1, 10, out, sizeof(out));
    ck_assert_str_eq(out, "");
}
END_TEST

Suite *ndjson_suite(void)
{
    Suite *s = suite_create("ndjson");
    TCase *tc = tcase_create("splitter");
    tcase_add_test(tc, test_lines_any_chunking);
    tcase_add_test(tc, test_too_long_lines);
    tcase_add_test(tc, test_empty_and_last_line);
    tcase_add_test(tc, test_limit_without_the_cr);
    tcase_add_test(tc, test_long_blank_lines);
    suite_add_tcase(s, tc);
    return s;
}
