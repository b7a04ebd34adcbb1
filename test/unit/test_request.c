/* test_request.c -- service/request.h: percent-decoding, ids, UTF-8, counts. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "request.h"
#include "suites.h"

/* Decode a C string into out[cap]; returns the rc and writes *len (untouched on error). */
static int pct(const char *in, char *out, size_t cap, size_t *len)
{
    return request_pct_decode(in, strlen(in), out, cap, len);
}

static void pct_ok(const char *in, const char *want)
{
    char out[64];
    size_t n = 999;
    int rc = pct(in, out, sizeof(out), &n);
    ck_assert_msg(rc == 0, "pct_decode(\"%s\") = %d", in, rc);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_str_eq(out, want);
}

START_TEST(test_pct_decode_basic)
{
    pct_ok("", "");
    pct_ok("abc", "abc");
    pct_ok("%2B", "+");
    pct_ok("a%2bb", "a+b"); /* lower-case hex */
    pct_ok("+", "+");       /* '+' is not a space in a path or query value here */
    pct_ok("a+b", "a+b");
    pct_ok("%2F", "/");
    pct_ok("%20", " ");
    pct_ok("%C3%A0", "\xc3\xa0");
    pct_ok("%25", "%");
}
END_TEST

START_TEST(test_pct_decode_once)
{
    pct_ok("%252B", "%2B"); /* exactly one pass */
    pct_ok("%2525", "%25");
}
END_TEST

START_TEST(test_pct_decode_malformed)
{
    static const char *const bad[] = {"%zz", "%",   "abc%", "%4",  "a%4",
                                      "%g0", "%0g", "%%41", "% 41"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char out[64];
        size_t n = 999;
        ck_assert_msg(pct(bad[i], out, sizeof(out), &n) == -EINVAL, "\"%s\" accepted", bad[i]);
        ck_assert_uint_eq(n, 999);
    }
}
END_TEST

START_TEST(test_pct_decode_embedded_nul)
{
    char out[8];
    size_t n = 0;
    ck_assert_int_eq(pct("a%00b", out, sizeof(out), &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out, "a\0b", 4), 0);
}
END_TEST

START_TEST(test_pct_decode_capacity)
{
    char out[8];
    size_t n = 999;
    /* "abc" needs 4 bytes with its NUL */
    ck_assert_int_eq(pct("abc", out, 4, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(out, "abc");
    n = 999;
    ck_assert_int_eq(pct("abc", out, 3, &n), -E2BIG);
    ck_assert_uint_eq(n, 999);
    ck_assert_int_eq(pct("%41%42%43", out, 4, &n), 0); /* capacity counts decoded bytes */
    ck_assert_str_eq(out, "ABC");
    ck_assert_int_eq(pct("%41%42%43", out, 3, &n), -E2BIG);
    ck_assert_int_eq(pct("", out, 1, &n), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(pct("", out, 0, &n), -E2BIG);
    ck_assert_int_eq(pct("a", out, 1, &n), -E2BIG);
    /* inlen is honoured: bytes past it are never read */
    ck_assert_int_eq(request_pct_decode("ab%zz", 2, out, sizeof(out), &n), 0);
    ck_assert_str_eq(out, "ab");
}
END_TEST

static int id_ok(const char *s)
{
    return request_id_valid(s, strlen(s));
}

START_TEST(test_id_lengths)
{
    char buf[200];
    memset(buf, 'a', sizeof(buf));
    ck_assert_int_eq(request_id_valid(buf, 1), 1);
    ck_assert_int_eq(request_id_valid(buf, 128), 1);
    ck_assert_int_eq(request_id_valid(buf, 129), 0);
    ck_assert_int_eq(request_id_valid(buf, 0), 0);
    ck_assert_int_eq(request_id_valid("", 0), 0);
    /* 64 two-byte characters = 128 bytes; one more ASCII byte is 129 */
    for (int i = 0; i < 64; i++)
        memcpy(buf + 2 * i, "\xc3\xa0", 2);
    ck_assert_int_eq(request_id_valid(buf, 128), 1);
    buf[128] = 'x';
    ck_assert_int_eq(request_id_valid(buf, 129), 0);
}
END_TEST

START_TEST(test_id_controls)
{
    ck_assert_int_eq(id_ok("a\x01"
                           "b"),
                     0);
    ck_assert_int_eq(id_ok("\x1f"), 0);
    ck_assert_int_eq(id_ok("a\tb"), 0);
    ck_assert_int_eq(id_ok("a\nb"), 0);
    ck_assert_int_eq(id_ok("a\x7f"), 0);
    ck_assert_int_eq(id_ok("a\xc2\x85"
                           "b"),
                     0);                    /* C1 NEL U+0085 */
    ck_assert_int_eq(id_ok("\xc2\x80"), 0); /* U+0080 */
    ck_assert_int_eq(id_ok("\xc2\x9f"), 0); /* U+009F */
    ck_assert_int_eq(id_ok("\xc2\xa0"), 1); /* U+00A0 NBSP is not a control */
    ck_assert_int_eq(request_id_valid("a\0b", 3), 0);
}
END_TEST

START_TEST(test_id_utf8)
{
    ck_assert_int_eq(id_ok("Sant Juli\xc3\xa0 de L\xc3\xb2ria"), 1);
    ck_assert_int_eq(id_ok("\xe2\x82\xac"), 1);     /* EUR sign */
    ck_assert_int_eq(id_ok("\xf0\x9f\x8f\x86"), 1); /* U+1F3C6 trophy */
    ck_assert_int_eq(id_ok("\xc0\xaf"), 0);         /* overlong '/' */
    ck_assert_int_eq(id_ok("\xe0\x80\xaf"), 0);     /* overlong '/', 3 bytes */
    ck_assert_int_eq(id_ok("\xed\xa0\x80"), 0);     /* surrogate U+D800 */
    ck_assert_int_eq(id_ok("\xed\xbf\xbf"), 0);     /* surrogate U+DFFF */
    ck_assert_int_eq(id_ok("\xe2\x82"), 0);         /* truncated */
    ck_assert_int_eq(id_ok("a\xe2\x82"), 0);        /* truncated at the end */
    ck_assert_int_eq(id_ok("\x80"), 0);             /* lone continuation */
    ck_assert_int_eq(id_ok("\xff"), 0);
    ck_assert_int_eq(id_ok("\xf4\x90\x80\x80"), 0); /* above U+10FFFF */
    ck_assert_int_eq(id_ok("\xf4\x8f\xbf\xbf"), 1); /* U+10FFFF */
}
END_TEST

START_TEST(test_id_punctuation)
{
    ck_assert_int_eq(id_ok("{board}"), 1);
    ck_assert_int_eq(id_ok("a:b"), 1);
    ck_assert_int_eq(id_ok("a b"), 1);
    ck_assert_int_eq(id_ok("}{:"), 1);
    ck_assert_int_eq(id_ok("/"), 1);
    ck_assert_int_eq(id_ok(" "), 1);
}
END_TEST

START_TEST(test_utf8_valid)
{
    ck_assert_int_eq(request_utf8_valid("", 0), 1);
    ck_assert_int_eq(request_utf8_valid("abc", 3), 1);
    ck_assert_int_eq(request_utf8_valid("\x01\x7f\xc2\x85", 4), 1); /* controls allowed */
    ck_assert_int_eq(request_utf8_valid("a\0b", 3), 1);
    ck_assert_int_eq(request_utf8_valid("Juli\xc3\xa0", 6), 1);
    ck_assert_int_eq(request_utf8_valid("\xc0\xaf", 2), 0);
    ck_assert_int_eq(request_utf8_valid("\xc1\xbf", 2), 0);
    ck_assert_int_eq(request_utf8_valid("\xf0\x80\x80\xaf", 4), 0);
    ck_assert_int_eq(request_utf8_valid("\xed\xa0\x80", 3), 0);
    ck_assert_int_eq(request_utf8_valid("\xe2\x82", 2), 0);
    ck_assert_int_eq(request_utf8_valid("\xe2\x82\xac", 2), 0); /* len cuts the sequence */
    ck_assert_int_eq(request_utf8_valid("\xe2\x28\xa1", 3), 0); /* bad continuation */
    ck_assert_int_eq(request_utf8_valid("\xf8\x88\x80\x80\x80", 5), 0);
    ck_assert_int_eq(request_utf8_valid("\xf4\x90\x80\x80", 4), 0);
}
END_TEST

static int count(const char *s, int64_t max, int64_t *out)
{
    return request_parse_count(s, max, out);
}

START_TEST(test_json_has_nul)
{
    static const struct {
        const char *text;
        int nul;
    } cases[] = {
        {"{\"id\":\"a\"}", 0},
        {"{\"id\":\"\\u0000\"}", 1},     /* the escape of NUL */
        {"{\"id\":\"\\\\u0000\"}", 0},   /* an escaped backslash, then the text u0000 */
        {"{\"id\":\"\\\\\\u0000\"}", 1}, /* an escaped backslash, then the escape */
        {"{\"id\":\"u0000\"}", 0},       /* no backslash */
        {"\\u0000", 1},                  /* at the very start */
        {"{\"id\":\"\\u00000\"}", 1},    /* NUL then '0' */
        {"{\"id\":\"\\u0001\"}", 0},     /* another control escape: cJSON keeps it */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(request_json_has_nul(cases[i].text, strlen(cases[i].text)) == cases[i].nul,
                      "%s: want %d", cases[i].text, cases[i].nul);
    const char raw[] = {'"', 'a', '\0', 'b', '"'};
    ck_assert_int_eq(request_json_has_nul(raw, sizeof(raw)), 1);
    ck_assert_int_eq(request_json_has_nul("\\u000", 5), 0); /* cut short */
}
END_TEST

START_TEST(test_parse_count)
{
    int64_t v = -5;
    ck_assert_int_eq(count("1", REQUEST_PAGE_MAX, &v), 0);
    ck_assert_int_eq(v, 1);
    v = -5;
    ck_assert_int_eq(count("01", REQUEST_PAGE_MAX, &v), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(count("000042", REQUEST_PAGE_MAX, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(count("2147483647", REQUEST_PAGE_MAX, &v), 0);
    ck_assert_int_eq(v, INT64_C(2147483647));
    ck_assert_int_eq(count("100", 100, &v), 0);
    ck_assert_int_eq(v, 100);

    static const char *const inval[] = {
        "0", "00", "-1", "+1", "1a", "", " 1", "1 ", "0x10", "1.0", "99999999999999999999x"};
    for (size_t i = 0; i < sizeof(inval) / sizeof(inval[0]); i++) {
        v = -5;
        ck_assert_msg(count(inval[i], REQUEST_PAGE_MAX, &v) == -EINVAL, "\"%s\" not -EINVAL",
                      inval[i]);
        ck_assert_int_eq(v, -5);
    }
    ck_assert_int_eq(count(NULL, REQUEST_PAGE_MAX, &v), -EINVAL);

    static const char *const range[] = {"2147483648", "4294967296",
                                        "1234567890123456789012345678901234567890"};
    for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
        v = -5;
        ck_assert_msg(count(range[i], REQUEST_PAGE_MAX, &v) == -ERANGE, "\"%s\" not -ERANGE",
                      range[i]);
        ck_assert_int_eq(v, -5);
    }
    ck_assert_int_eq(count("101", 100, &v), -ERANGE);
}
END_TEST

/* The contract takes any int64 max: the digit loop must not overflow near INT64_MAX. */
START_TEST(test_parse_count_int64_max)
{
    int64_t v = -5;
    ck_assert_int_eq(count("9223372036854775807", INT64_MAX, &v), 0);
    ck_assert_int_eq(v, INT64_MAX);
    v = -5;
    ck_assert_int_eq(count("9223372036854775808", INT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(v, -5);
    ck_assert_int_eq(count("99999999999999999999", INT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(v, -5);
}
END_TEST

/* One query name or value: decoded once; an escaped NUL is refused (it would cut the C string). */
START_TEST(test_arg_decode)
{
    char out[16];
    size_t n = 0;
    ck_assert_int_eq(request_arg_decode("a%2Bb", 5, out, sizeof(out), &n), 0);
    ck_assert_str_eq(out, "a+b");
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(request_arg_decode("", 0, out, sizeof(out), &n), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(request_arg_decode("a%00b", 5, out, sizeof(out), &n), -EINVAL);
    ck_assert_int_eq(request_arg_decode("%00", 3, out, sizeof(out), &n), -EINVAL);
    ck_assert_int_eq(request_arg_decode("%0", 2, out, sizeof(out), &n), -EINVAL);
    ck_assert_int_eq(request_arg_decode("0123456789abcdef", 16, out, sizeof(out), &n), -E2BIG);
}
END_TEST

/* ids=a,b,c: split on the raw ',' first, then each part decoded once ("%2C" stays in its id). */
START_TEST(test_list_split)
{
    struct request_list l;
    ck_assert_int_eq(request_list_split("a%2Cb,c%20d,caf%C3%A9,%2B+", 10, &l), 0);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_str_eq(l.items[0], "a,b");
    ck_assert_uint_eq(l.lens[0], 3);
    ck_assert_str_eq(l.items[1], "c d");
    ck_assert_str_eq(l.items[2], "caf\xc3\xa9");
    ck_assert_uint_eq(l.lens[2], 5);
    ck_assert_str_eq(l.items[3], "++");
    request_list_free(&l);
    ck_assert_int_eq(request_list_split("one", 1, &l), 0);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.items[0], "one");
    request_list_free(&l);
    ck_assert_int_eq(request_list_split("a,b,c", 2, &l), -E2BIG);
    static const char *const bad[] = {"", ",", "a,", ",a", "a,,b", "a%zz", "a%00b", "%2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(request_list_split(bad[i], 10, &l) == -EINVAL && l.n == 0 && !l.items,
                      "'%s' accepted", bad[i]);
    request_list_free(&l); /* safe on an emptied list */
}
END_TEST

Suite *request_suite(void)
{
    Suite *s = suite_create("request");

    TCase *tc = tcase_create("pct_decode");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_pct_decode_basic);
    tcase_add_test(tc, test_pct_decode_once);
    tcase_add_test(tc, test_pct_decode_malformed);
    tcase_add_test(tc, test_pct_decode_embedded_nul);
    tcase_add_test(tc, test_pct_decode_capacity);
    tcase_add_test(tc, test_arg_decode);
    tcase_add_test(tc, test_list_split);
    suite_add_tcase(s, tc);

    tc = tcase_create("id");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_id_lengths);
    tcase_add_test(tc, test_id_controls);
    tcase_add_test(tc, test_id_utf8);
    tcase_add_test(tc, test_id_punctuation);
    tcase_add_test(tc, test_utf8_valid);
    tcase_add_test(tc, test_json_has_nul);
    suite_add_tcase(s, tc);

    tc = tcase_create("count");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_parse_count);
    tcase_add_test(tc, test_parse_count_int64_max);
    suite_add_tcase(s, tc);

    return s;
}
