/* test_json_number.c -- number literals: the grammar, exact values, the judge against layouts,
 * the scanner over raw JSON and the annotation of cJSON trees. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_number.h"
#include "score_codec.h"
#include "suites.h"

/* ---------------------------------------------------------------- grammar and value */

static const struct {
    const char *lit;
    int neg;
    uint64_t digits;
    int64_t exp;
    int wide;
} values[] = {
    {"0", 0, 0, 0, 0},
    {"-0", 1, 0, 0, 0},
    {"0e0", 0, 0, 0, 0},
    {"0.000", 0, 0, 0, 0},
    {"-0.0e-400", 1, 0, 0, 0},
    {"0e999999999999999999999", 0, 0, 0, 0},
    {"1", 0, 1, 0, 0},
    {"-1", 1, 1, 0, 0},
    {"10", 0, 1, 1, 0},
    {"100.00", 0, 1, 2, 0},
    {"1E+2", 0, 1, 2, 0},
    {"1e2", 0, 1, 2, 0},
    {"1.0e-1", 0, 1, -1, 0},
    {"0.1", 0, 1, -1, 0},
    {"0.10000000000000001", 0, 10000000000000001, -17, 0},
    {"1.000000000000000001", 0, 1000000000000000001, -18, 0},
    {"2.5e1", 0, 25, 0, 0},
    {"25e-1", 0, 25, -1, 0},
    {"1e-400", 0, 1, -400, 0},
    {"1e400", 0, 1, 400, 0},
    {"1E999999999", 0, 1, 999999999, 0},
    {"1e-999999999", 0, 1, -999999999, 0},
    {"9007199254740991.5", 0, 90071992547409915, -1, 0},
    {"12345678901234567890", 0, 1234567890123456789, 1, 0},
    {"9999999999999999999", 0, UINT64_C(9999999999999999999), 0, 0},
    {"99999999999999999999", 0, 0, 0, 1},
    {"-4294967295", 1, 4294967295, 0, 0},
    {"0.000000001", 0, 1, -9, 0},
    {"1.5e300", 0, 15, 299, 0},
};

START_TEST(parse_values)
{
    struct json_number n;
    const char *lit = values[_i].lit;
    ck_assert_int_eq(json_number_parse(lit, strlen(lit), &n), 0);
    ck_assert_int_eq(n.neg, values[_i].neg);
    ck_assert_int_eq(n.wide, values[_i].wide);
    if (!n.wide) {
        ck_assert_msg(n.digits == values[_i].digits, "%s: digits %llu", lit,
                      (unsigned long long)n.digits);
        ck_assert_msg(n.exp == values[_i].exp, "%s: exp %lld", lit, (long long)n.exp);
    }
    ck_assert_str_eq(n.text, lit);
}
END_TEST

static const char *const not_json[] = {
    "",   "-",     "+1",  "01",    "-01", "00",   "00.5",  "1.",       ".5",    "-.5", "1.e5",
    "1e", "1e+",   "1e-", "1E",    "1-2", "1+2",  "0x10",  "inf",      "nan",   "1 ",  " 1",
    "1,", "1.5.2", "--1", "1e5.5", "e5",  "1ee5", "1e+-5", "Infinity", "1_000",
};

START_TEST(parse_refuses)
{
    struct json_number n;
    const char *lit = not_json[_i];
    ck_assert_msg(json_number_parse(lit, strlen(lit), &n) == -EINVAL, "'%s' accepted", lit);
}
END_TEST

/* The plain form of query parameters: leading zeros, no exponent. */
START_TEST(parse_plain)
{
    struct json_number n;
    ck_assert_int_eq(json_number_parse_plain("007", 3, &n), 0);
    ck_assert_int_eq(n.digits, 7);
    ck_assert_int_eq(json_number_parse_plain("-0004.50", 8, &n), 0);
    ck_assert(n.neg && n.digits == 45 && n.exp == -1);
    ck_assert_int_eq(json_number_parse_plain("1.000000000000000001", 20, &n), 0);
    ck_assert(n.digits == 1000000000000000001 && n.exp == -18);
    static const char *const bad[] = {"", "-", "1e5", "1.", ".5", "+1", "0x1", "1 "};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(json_number_parse_plain(bad[i], strlen(bad[i]), &n) == -EINVAL, "'%s'",
                      bad[i]);
}
END_TEST

/* Hundreds of digits are read exactly, never through a double. */
START_TEST(parse_long_literals)
{
    char lit[520];
    struct json_number n;
    /* 1 followed by 399 zeros: one significant digit at 10^399 */
    lit[0] = '1';
    memset(lit + 1, '0', 399);
    ck_assert_int_eq(json_number_parse(lit, 400, &n), 0);
    ck_assert(!n.wide && n.digits == 1 && n.exp == 399);
    ck_assert_str_eq(n.text + JSON_NUMBER_TEXT_MAX - 4, "...");
    ck_assert_int_eq(strlen(n.text), JSON_NUMBER_TEXT_MAX - 1);
    /* 1. then 398 zeros then 1: 400 significant digits */
    memcpy(lit, "1.", 2);
    memset(lit + 2, '0', 398);
    lit[400] = '1';
    ck_assert_int_eq(json_number_parse(lit, 401, &n), 0);
    ck_assert(n.wide && n.exp == -399);
    /* 0.000...0001 with 400 zeros after the point, and "5" then 400 zeros then "e-400" */
    memcpy(lit, "0.", 2);
    memset(lit + 2, '0', 400);
    lit[402] = '1';
    ck_assert_int_eq(json_number_parse(lit, 403, &n), 0);
    ck_assert(!n.wide && n.digits == 1 && n.exp == -401);
    lit[0] = '5';
    memset(lit + 1, '0', 400);
    memcpy(lit + 401, "e-400", 5);
    ck_assert_int_eq(json_number_parse(lit, 406, &n), 0);
    ck_assert(!n.wide && n.digits == 5 && n.exp == 0);
    /* a leading zero stays invalid however long the rest */
    memset(lit, '0', 400);
    ck_assert_int_eq(json_number_parse(lit, 400, &n), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------- the judge */

static const struct score_layout first0 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
static const struct score_layout first1 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 1, 0, 0, {0}};
static const struct score_layout first2 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 2, 0, 0, {0}};
static const struct score_layout first9 = {SCORE_ORDER_ASC, SCORE_TIEBREAK_FIRST, 9, 0, 0, {0}};
static const struct score_layout id0 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 0, 0, 0, {0}};
static const struct score_layout id1 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 1, 0, 0, {0}};
static const struct score_layout id3 = {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 3, 0, 0, {0}};

static const struct {
    const struct score_layout *layout;
    const char *lit;
    int rc;
    int64_t scaled;
} judged[] = {
    /* the literals */
    {&first0, "1.000000000000000001", -EDOM, 0},
    {&first1, "0.10000000000000001", -EDOM, 0},
    {&first0, "1e-400", -EDOM, 0},
    {&first9, "1e-400", -EDOM, 0},
    {&id0, "9007199254740991.5", -EDOM, 0},
    {&id0, "9007199254740990.5", -EDOM, 0},
    {&id0, "12345678901234567890", -ERANGE, 0},
    {&id1, "99999999999999.91", -EDOM, 0},
    /* exact forms of allowed values */
    {&first0, "0", 0, 0},
    {&first0, "-0", 0, 0},
    {&first0, "0e0", 0, 0},
    {&first0, "-0.0e-400", 0, 0},
    {&first0, "1E+2", 0, 100},
    {&first0, "2.5e1", 0, 25},
    {&first0, "250e-1", 0, 25},
    {&first0, "1.000", 0, 1},
    {&first1, "1.0e-1", 0, 1},
    {&first1, "0.10", 0, 1},
    {&first2, "0.15", 0, 15},
    {&first2, "-42949672.95", 0, -4294967295},
    {&first2, "42949672.96", -ERANGE, 0},
    {&first2, "0.155", -EDOM, 0},
    {&first9, "0.000000001", 0, 1},
    {&first9, "0.0000000001", -EDOM, 0},
    {&first9, "4.294967295", 0, 4294967295},
    {&first9, "4.294967296", -ERANGE, 0},
    {&first9, "1e-9", 0, 1},
    /* the range edges */
    {&first0, "4294967295", 0, 4294967295},
    {&first0, "-4294967295", 0, -4294967295},
    {&first0, "4294967296", -ERANGE, 0},
    {&first0, "4.294967295e9", 0, 4294967295},
    {&first0, "4.2949672951e9", -EDOM, 0},
    {&id0, "9007199254740991", 0, INT64_C(9007199254740991)},
    {&id0, "-9007199254740991", 0, -INT64_C(9007199254740991)},
    {&id0, "9007199254740992", -ERANGE, 0},
    {&id0, "9007199254740993", -ERANGE, 0},
    {&id0, "9.007199254740991e15", 0, INT64_C(9007199254740991)},
    {&id3, "999999999999.999", 0, INT64_C(999999999999999)},
    {&id3, "1000000000000", -ERANGE, 0},
    {&id3, "999999999999.9991", -EDOM, 0},
    /* huge and tiny */
    {&first0, "1e400", -ERANGE, 0},
    {&first0, "-1e400", -ERANGE, 0},
    {&first0, "1e999999999", -ERANGE, 0},
    {&first0, "1e999999999999999999999", -ERANGE, 0},
    {&first0, "1e-999999999999999999999", -EDOM, 0},
    {&first0, "1e19", -ERANGE, 0},
    {&first0, "1e18", -ERANGE, 0},
    {&id0, "99999999999999999999", -ERANGE, 0},
    {&id0, "99999999999999999999.5", -EDOM, 0},
    {&first0, "12345678901234567890.5", -EDOM, 0},
};

START_TEST(judge_layouts)
{
    struct json_number n;
    const char *lit = judged[_i].lit;
    ck_assert_int_eq(json_number_parse(lit, strlen(lit), &n), 0);
    int64_t scaled = 12345;
    int rc = json_number_score(judged[_i].layout, &n, &scaled);
    ck_assert_msg(rc == judged[_i].rc, "%s (decimals %d): rc %d, want %d", lit,
                  judged[_i].layout->decimals, rc, judged[_i].rc);
    if (rc == 0)
        ck_assert_msg(scaled == judged[_i].scaled, "%s: %lld", lit, (long long)scaled);
    else
        ck_assert_int_eq(scaled, 12345); /* out-param untouched on failure */
}
END_TEST

/* Every exact decimal of up to 9 fractional digits within the range scales like the codec
 * scales its double: the two agree wherever the double is not the problem. */
START_TEST(judge_agrees_with_codec)
{
    static const struct score_layout *const layouts[] = {&first0, &first2, &first9, &id0, &id3};
    for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
        const struct score_layout *layout = layouts[l];
        int64_t max = score_codec_scaled_max(layout);
        int64_t probes[] = {0, 1, -1, 7, 99, 12345, max / 3, max - 1, max, -max};
        for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
            int64_t want = probes[k];
            char lit[64];
            int64_t p = 1;
            for (int d = 0; d < layout->decimals; d++)
                p *= 10;
            int64_t a = want < 0 ? -want : want;
            if (layout->decimals)
                snprintf(lit, sizeof(lit), "%s%lld.%0*lld", want < 0 ? "-" : "", (long long)(a / p),
                         layout->decimals, (long long)(a % p));
            else
                snprintf(lit, sizeof(lit), "%lld", (long long)want);
            struct json_number n;
            int64_t got = 0, codec = 0;
            ck_assert_int_eq(json_number_parse(lit, strlen(lit), &n), 0);
            ck_assert_int_eq(json_number_score(layout, &n, &got), 0);
            ck_assert_msg(got == want, "%s: %lld", lit, (long long)got);
            ck_assert_int_eq(score_codec_scale(layout, strtod(lit, NULL), &codec), 0);
            ck_assert_msg(codec == want, "%s: codec %lld", lit, (long long)codec);
        }
    }
}
END_TEST

START_TEST(judge_400_digits)
{
    char lit[520];
    struct json_number n;
    int64_t s;
    /* 1.000...0001 (400 digits): too many fractional digits on every board */
    memcpy(lit, "1.", 2);
    memset(lit + 2, '0', 398);
    lit[400] = '1';
    ck_assert_int_eq(json_number_parse(lit, 401, &n), 0);
    ck_assert_int_eq(json_number_score(&first9, &n, &s), -EDOM);
    /* 1.000...000 (400 digits, all zeros after the point): exactly 1 */
    lit[400] = '0';
    ck_assert_int_eq(json_number_parse(lit, 401, &n), 0);
    ck_assert_int_eq(json_number_score(&first0, &n, &s), 0);
    ck_assert_int_eq(s, 1);
    /* 400 nines: out of range */
    memset(lit, '9', 400);
    ck_assert_int_eq(json_number_parse(lit, 400, &n), 0);
    ck_assert_int_eq(json_number_score(&id0, &n, &s), -ERANGE);
}
END_TEST

START_TEST(equal_values)
{
    static const char *const same[][2] = {
        {"0", "-0"},     {"0e5", "0.0"},   {"25", "2.5e1"},        {"0.1", "1.0e-1"},
        {"1E+2", "100"}, {"-3", "-3.000"}, {"1.5e+300", "15e299"},
    };
    static const char *const differ[][2] = {
        {"1", "-1"},
        {"0.1", "0.10000000000000001"},
        {"1e-400", "0"},
        {"9007199254740993", "9007199254740992"},
    };
    struct json_number a, b;
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        ck_assert_int_eq(json_number_parse(same[i][0], strlen(same[i][0]), &a), 0);
        ck_assert_int_eq(json_number_parse(same[i][1], strlen(same[i][1]), &b), 0);
        ck_assert_msg(json_number_equal(&a, &b), "%s != %s", same[i][0], same[i][1]);
    }
    for (size_t i = 0; i < sizeof(differ) / sizeof(differ[0]); i++) {
        ck_assert_int_eq(json_number_parse(differ[i][0], strlen(differ[i][0]), &a), 0);
        ck_assert_int_eq(json_number_parse(differ[i][1], strlen(differ[i][1]), &b), 0);
        ck_assert_msg(!json_number_equal(&a, &b), "%s == %s", differ[i][0], differ[i][1]);
    }
}
END_TEST

/* ---------------------------------------------------------------- scanner */

/* The tokens of `text`, joined by '|'. */
static void tokens(const char *text, char *out, size_t cap)
{
    size_t pos = 0, start, n, used = 0;
    out[0] = '\0';
    while (json_number_next(text, strlen(text), &pos, &start, &n))
        used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? "|" : "", (int)n,
                                 text + start);
}

START_TEST(scanner_tokens)
{
    char got[256];
    tokens("{\"id\":\"a1\",\"score\":-1.5e+3,\"op\":\"set\",\"record\":{\"n2\":0,\"t\":true}}", got,
           sizeof(got));
    ck_assert_str_eq(got, "-1.5e+3|0");
    tokens("[1,2.0,-0,1E+2,[3,{\"4\":5}],null,false,\"6\"]", got, sizeof(got));
    ck_assert_str_eq(got, "1|2.0|-0|1E+2|3|5");
    /* escapes: a quote and a backslash inside strings hide the digits after them */
    tokens("{\"a\\\"1\":2,\"b\\\\\":3,\"c\":\"x\\\\\\\"9\"}", got, sizeof(got));
    ck_assert_str_eq(got, "2|3");
    tokens("{\"k\":\"\\u0031\",\"v\":\"-5\"}", got, sizeof(got));
    ck_assert_str_eq(got, "");
    tokens(" \t\r\n 42 \n", got, sizeof(got));
    ck_assert_str_eq(got, "42");
    tokens("\xEF\xBB\xBF[7]", got, sizeof(got)); /* a UTF-8 BOM */
    ck_assert_str_eq(got, "7");
    /* what cJSON takes and JSON does not is a token all the same (annotate refuses it) */
    tokens("[01,1.,-.5]", got, sizeof(got));
    ck_assert_str_eq(got, "01|1.|-.5");
    /* an unterminated string ends the text */
    tokens("[1,\"2", got, sizeof(got));
    ck_assert_str_eq(got, "1");
}
END_TEST

/* ---------------------------------------------------------------- annotation */

START_TEST(annotate_literals)
{
    const char *text = "{\"id\":\"x\",\"score\":1.000000000000000001,\"record\":{\"a\":2.5e1,"
                       "\"b\":[0.10000000000000001,1e-400,{\"c\":-0}],\"d\":\"9\"},\"z\":1E+2}";
    cJSON *doc = cJSON_Parse(text);
    ck_assert_ptr_nonnull(doc);
    size_t at = 0;
    ck_assert_int_eq(json_number_annotate(doc, text, strlen(text), &at), 0);
    ck_assert_str_eq(json_number_literal(cJSON_GetObjectItem(doc, "score")),
                     "1.000000000000000001");
    const cJSON *rec = cJSON_GetObjectItem(doc, "record");
    ck_assert_str_eq(json_number_literal(cJSON_GetObjectItem(rec, "a")), "2.5e1");
    const cJSON *b = cJSON_GetObjectItem(rec, "b");
    ck_assert_str_eq(json_number_literal(cJSON_GetArrayItem(b, 0)), "0.10000000000000001");
    ck_assert_str_eq(json_number_literal(cJSON_GetArrayItem(b, 1)), "1e-400");
    ck_assert_str_eq(json_number_literal(cJSON_GetObjectItem(cJSON_GetArrayItem(b, 2), "c")), "-0");
    ck_assert_ptr_null(json_number_literal(cJSON_GetObjectItem(rec, "d")));
    ck_assert_str_eq(json_number_literal(cJSON_GetObjectItem(doc, "z")), "1E+2");
    /* the double is untouched, the literal travels with duplicates */
    ck_assert(cJSON_GetObjectItem(doc, "score")->valuedouble == 1.0);
    cJSON *copy = cJSON_Duplicate(rec, 1);
    ck_assert_str_eq(json_number_literal(cJSON_GetObjectItem(copy, "a")), "2.5e1");
    cJSON_Delete(copy);
    cJSON_Delete(doc);
    /* a bare number document */
    doc = cJSON_Parse(" -12.50 ");
    ck_assert_int_eq(json_number_annotate(doc, " -12.50 ", 8, &at), 0);
    ck_assert_str_eq(json_number_literal(doc), "-12.50");
    cJSON_Delete(doc);
}
END_TEST

/* cJSON reads a number of any length (to a double, inf for 400 nines); the node gets all of
 * its literal, and the judge reads every digit. */
START_TEST(annotate_long_literal)
{
    char text[600];
    memcpy(text, "{\"score\":", 9);
    memset(text + 9, '9', 400);
    memcpy(text + 409, ",\"r\":1.", 7);
    memset(text + 416, '0', 100);
    memcpy(text + 516, "1}", 3);
    cJSON *doc = cJSON_Parse(text);
    ck_assert_ptr_nonnull(doc);
    size_t at = 0;
    ck_assert_int_eq(json_number_annotate(doc, text, strlen(text), &at), 0);
    const char *lit = json_number_literal(cJSON_GetObjectItem(doc, "score"));
    ck_assert_int_eq(strlen(lit), 400);
    struct json_number n;
    int64_t s;
    ck_assert_int_eq(json_number_parse(lit, strlen(lit), &n), 0);
    ck_assert_int_eq(json_number_score(&id0, &n, &s), -ERANGE);
    lit = json_number_literal(cJSON_GetObjectItem(doc, "r"));
    ck_assert_int_eq(strlen(lit), 103);
    ck_assert_int_eq(json_number_parse(lit, strlen(lit), &n), 0);
    ck_assert(n.wide && n.exp == -101); /* 102 significant digits */
    ck_assert_int_eq(json_number_score(&first9, &n, &s), -EDOM);
    ck_assert(cJSON_GetObjectItem(doc, "r")->valuedouble == 1.0); /* what the double said */
    cJSON_Delete(doc);
}
END_TEST

/* cJSON takes "01", "1." and "-.5" (strtod does); JSON does not, and annotate says where. */
START_TEST(annotate_refuses_non_json)
{
    static const struct {
        const char *text;
        size_t at;
    } cases[] = {
        {"{\"score\":01}", 9}, {"{\"a\":\"01\",\"score\":1.}", 18}, {"[1,-.5]", 3}, {"[0,00]", 3},
        {"{\"n\":1.e5}", 5},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *doc = cJSON_Parse(cases[i].text);
        ck_assert_msg(doc != NULL, "cJSON refused %s", cases[i].text);
        size_t at = 999;
        ck_assert_int_eq(json_number_annotate(doc, cases[i].text, strlen(cases[i].text), &at),
                         -EINVAL);
        ck_assert_msg(at == cases[i].at, "%s: at %zu", cases[i].text, at);
        cJSON_Delete(doc);
    }
}
END_TEST

/* Tokens and nodes that do not pair up are a bug, reported as such. */
START_TEST(annotate_mismatch)
{
    cJSON *doc = cJSON_Parse("[1,2]");
    size_t at = 0;
    ck_assert_int_eq(json_number_annotate(doc, "[1]", 3, &at), -EPROTO);
    cJSON_Delete(doc);
    doc = cJSON_Parse("[1]");
    ck_assert_int_eq(json_number_annotate(doc, "[1,2]", 5, &at), -EPROTO);
    cJSON_Delete(doc);
}
END_TEST

Suite *json_number_suite(void)
{
    Suite *s = suite_create("json_number");
    TCase *tc = tcase_create("grammar");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, parse_values, 0, (int)(sizeof(values) / sizeof(values[0])));
    tcase_add_loop_test(tc, parse_refuses, 0, (int)(sizeof(not_json) / sizeof(not_json[0])));
    tcase_add_test(tc, parse_plain);
    tcase_add_test(tc, parse_long_literals);
    tcase_add_test(tc, equal_values);
    suite_add_tcase(s, tc);
    tc = tcase_create("judge");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, judge_layouts, 0, (int)(sizeof(judged) / sizeof(judged[0])));
    tcase_add_test(tc, judge_agrees_with_codec);
    tcase_add_test(tc, judge_400_digits);
    suite_add_tcase(s, tc);
    tc = tcase_create("scanner");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, scanner_tokens);
    tcase_add_test(tc, annotate_literals);
    tcase_add_test(tc, annotate_long_literal);
    tcase_add_test(tc, annotate_refuses_non_json);
    tcase_add_test(tc, annotate_mismatch);
    suite_add_tcase(s, tc);
    return s;
}
