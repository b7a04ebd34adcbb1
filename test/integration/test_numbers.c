/* test_numbers.c -- numbers are exact or refused, judged by the literal the client sent (never by
 * the double a JSON parser rounds it to): scores in every write form, settings, records and the
 * `below` of a trim, each over real HTTP against a real Redis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* One request with the token; asserts the status and, when `want` is not NULL, the whole body. */
static void expect(const char *method, const char *path, const char *body, const char *ctype,
                   long status, const char *want)
{
    struct http_result r;
    ck_assert_int_eq(
        http_req(g_port, method, path, body, body ? strlen(body) : 0, ctype, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == status && (!want || strcmp(r.body, want) == 0),
                  "%s %s %.200s\n-> %ld %s\nwant %ld %s", method, path, body ? body : "", r.status,
                  r.body, status, want ? want : "");
    http_result_free(&r);
}

/* The error body rankd sends. */
static void error_body(char *out, size_t cap, const char *code, const char *message)
{
    snprintf(out, cap, "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}", code, message);
}

/* The boards of these tests: decimals 0/1/2/9 with tiebreak first, decimals 0/1 with id. */
static void make_boards(void)
{
    static const char *const boards[][2] = {
        {"f0", "{}"},
        {"f1", "{\"score_decimals\":1}"},
        {"f2", "{\"score_decimals\":2}"},
        {"f9", "{\"score_decimals\":9}"},
        {"i0", "{\"tiebreak\":\"id\"}"},
        {"i1", "{\"tiebreak\":\"id\",\"score_decimals\":1}"},
    };
    for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/boards/%s", boards[i][0]);
        ck_assert_int_eq(it_status("PUT", path, boards[i][1]), 201);
    }
}

/* Member `id` of `board` does not exist. */
static void expect_no_member(const char *board, const char *id)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    ck_assert_int_eq(it_status("GET", path, NULL), 404);
}

/* Member `id` of `board` reads back with exactly the score text `score`. */
static void expect_score(const char *board, const char *id, const char *score)
{
    char path[128], want[96];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    snprintf(want, sizeof(want), "\"score\":%s,", score);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, want), "GET %s -> %ld %s (want %s)", path,
                  r.status, r.body, want);
    http_result_free(&r);
}

/* Total members of a board. */
static void expect_total(const char *board, int total)
{
    char path[64], want[32];
    snprintf(path, sizeof(path), "/boards/%s", board);
    snprintf(want, sizeof(want), "\"total\":%d,", total);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, want), "%s", r.body);
    http_result_free(&r);
}

#define FRAC_MSG(lit, d)                                                                           \
    "score " lit " has more fractional digits than this board keeps (score_decimals=" #d ")."
#define RANGE_FIRST "from -4294967295 to 4294967295."
#define RANGE_ID "from -9007199254740991 to 9007199254740991."
#define RANGE_MSG(lit, range) "score " lit " is outside this board's exact range: " range

/* ---------------------------------------------------------------- scores */

/* Literals that round to an acceptable double are refused by their own digits, with the
 * literal quoted; nothing is written. They were accepted as the rounded double before. */
START_TEST(scores_judged_by_literal)
{
    make_boards();
    static const struct {
        const char *board, *lit, *code, *message;
    } refused[] = {
        {"f0", "1.000000000000000001", "invalid_score", FRAC_MSG("1.000000000000000001", 0)},
        {"f1", "0.10000000000000001", "invalid_score", FRAC_MSG("0.10000000000000001", 1)},
        {"f0", "1e-400", "invalid_score", FRAC_MSG("1e-400", 0)},
        {"f9", "1e-400", "invalid_score", FRAC_MSG("1e-400", 9)},
        {"f9", "0.0000000001", "invalid_score", FRAC_MSG("0.0000000001", 9)},
        {"f2", "0.155", "invalid_score", FRAC_MSG("0.155", 2)},
        {"f2", "1.0000000000000001", "invalid_score", FRAC_MSG("1.0000000000000001", 2)},
        {"i0", "9007199254740991.5", "invalid_score", FRAC_MSG("9007199254740991.5", 0)},
        {"i0", "9007199254740990.5", "invalid_score", FRAC_MSG("9007199254740990.5", 0)},
        {"i1", "99999999999999.91", "invalid_score", FRAC_MSG("99999999999999.91", 1)},
        {"i0", "12345678901234567890", "score_out_of_range",
         RANGE_MSG("12345678901234567890", RANGE_ID)},
        {"i0", "9007199254740993", "score_out_of_range", RANGE_MSG("9007199254740993", RANGE_ID)},
        {"f0", "1e400", "score_out_of_range", RANGE_MSG("1e400", RANGE_FIRST)},
        {"f0", "-1E999999999", "score_out_of_range", RANGE_MSG("-1E999999999", RANGE_FIRST)},
        {"f0", "4294967296", "score_out_of_range", RANGE_MSG("4294967296", RANGE_FIRST)},
        {"f0", "4.2949672960e9", "score_out_of_range", RANGE_MSG("4.2949672960e9", RANGE_FIRST)},
        {"f2", "42949672.96", "score_out_of_range",
         RANGE_MSG("42949672.96", "from -42949672.95 to 42949672.95.")},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char path[64], body[160], want[400];
        snprintf(path, sizeof(path), "/boards/%s/scores", refused[i].board);
        snprintf(body, sizeof(body), "{\"id\":\"m%zu\",\"score\":%s}", i, refused[i].lit);
        error_body(want, sizeof(want), refused[i].code, refused[i].message);
        expect("POST", path, body, NULL, 422, want);
        /* the same as an incr, and inside a batch after a valid entry: nothing written */
        snprintf(body, sizeof(body), "{\"id\":\"m%zu\",\"score\":%s,\"op\":\"incr\"}", i,
                 refused[i].lit);
        expect("POST", path, body, NULL, 422, want);
        snprintf(body, sizeof(body),
                 "{\"entries\":[{\"id\":\"ok%zu\",\"score\":1},{\"id\":\"m%zu\",\"score\":%s}]}", i,
                 i, refused[i].lit);
        char msg[300];
        snprintf(msg, sizeof(msg), "entries[1]: %s", refused[i].message);
        error_body(want, sizeof(want), refused[i].code, msg);
        expect("POST", path, body, NULL, 422, want);
        char id[16];
        snprintf(id, sizeof(id), "m%zu", i);
        expect_no_member(refused[i].board, id);
        snprintf(id, sizeof(id), "ok%zu", i);
        expect_no_member(refused[i].board, id);
    }
    static const char *const boards[] = {"f0", "f1", "f2", "f9", "i0", "i1"};
    for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
        expect_total(boards[i], 0);
}
END_TEST

/* Exact literals in any form are accepted and read back exactly. */
START_TEST(scores_exact_forms_accepted)
{
    make_boards();
    static const struct {
        const char *board, *lit, *back;
    } ok[] = {
        {"f0", "2.5e1", "25"},
        {"f0", "1E+2", "100"},
        {"f0", "250e-1", "25"},
        {"f0", "-0", "0"},
        {"f0", "0e0", "0"},
        {"f0", "1.000000000000000000", "1"},
        {"f0", "4.294967295e9", "4294967295"},
        {"f0", "-4294967295", "-4294967295"},
        {"f1", "1.0e-1", "0.1"},
        {"f1", "0.10000000000000000", "0.1"},
        {"f2", "0.10", "0.1"},
        {"f2", "-42949672.95", "-42949672.95"},
        {"f9", "0.000000001", "1e-09"},
        {"f9", "4.294967295", "4.294967295"},
        {"f9", "1e-9", "1e-09"},
        {"i0", "9007199254740991", "9007199254740991"},
        {"i0", "9.007199254740991e15", "9007199254740991"},
        {"i0", "-9007199254740990", "-9007199254740990"},
        {"i1", "99999999999999.9", "99999999999999.9"},
        {"i1", "0.5e1", "5"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char body[128], id[16];
        snprintf(id, sizeof(id), "m%zu", i);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%s}", id, ok[i].lit);
        it_post_score(ok[i].board, body);
        expect_score(ok[i].board, id, ok[i].back);
    }
}
END_TEST

/* NDJSON lines go through the same judge: each refused line alone, its literal quoted. */
START_TEST(scores_ndjson_by_literal)
{
    make_boards();
    const char *nd = "{\"id\":\"a\",\"score\":2.5e1}\n"
                     "{\"id\":\"b\",\"score\":1.000000000000000001}\n"
                     "{\"id\":\"c\",\"score\":1e-400}\n"
                     "{\"id\":\"d\",\"score\":01}\n"
                     "{\"id\":\"e\",\"score\":12345678901234567890}\n"
                     "{\"id\":\"f\",\"score\":-0.0e5}\n";
    static const char frac2[] = FRAC_MSG("1.000000000000000001", 0);
    static const char frac3[] = FRAC_MSG("1e-400", 0);
    static const char range5[] = RANGE_MSG("12345678901234567890", RANGE_FIRST);
    char want[1024];
    snprintf(want, sizeof(want),
             "{\"applied\":2,\"rejected_total\":4,\"rejected\":["
             "{\"line\":2,\"error\":{\"code\":\"invalid_score\",\"message\":\"%s\"}},"
             "{\"line\":3,\"error\":{\"code\":\"invalid_score\",\"message\":\"%s\"}},"
             "{\"line\":4,\"error\":{\"code\":\"invalid_json\","
             "\"message\":\"the line is not valid JSON (near byte 18).\"}},"
             "{\"line\":5,\"error\":{\"code\":\"score_out_of_range\",\"message\":\"%s\"}}],"
             "\"version\":1}",
             frac2, frac3, range5);
    expect("POST", "/boards/f0/scores", nd, "application/x-ndjson", 200, want);
    expect_score("f0", "a", "25");
    expect_score("f0", "f", "0");
    expect_no_member("f0", "b");
    expect_no_member("f0", "c");
    expect_no_member("f0", "d");
    expect_no_member("f0", "e");
}
END_TEST

/* What cJSON takes but JSON does not ("01", "1.", "-.5") is invalid JSON; a literal of hundreds
 * of digits is judged like any other, and quoted cut short. */
START_TEST(scores_malformed_and_long)
{
    make_boards();
    char want[400];
    static const struct {
        const char *body;
        int at;
    } bad[] = {
        {"{\"id\":\"a\",\"score\":01}", 18},
        {"{\"id\":\"a\",\"score\":1.}", 18},
        {"{\"id\":\"a\",\"score\":-.5}", 18},
        {"{\"entries\":[{\"id\":\"a\",\"score\":00}]}", 30},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char msg[64];
        snprintf(msg, sizeof(msg), "The body is not valid JSON (near byte %d).", bad[i].at);
        error_body(want, sizeof(want), "invalid_json", msg);
        expect("POST", "/boards/f0/scores", bad[i].body, NULL, 400, want);
    }
    char body[600];
    int n = snprintf(body, sizeof(body), "{\"id\":\"a\",\"score\":");
    memset(body + n, '7', 400);
    snprintf(body + n + 400, sizeof(body) - (size_t)n - 400, "}");
    char msg[300], cut[64];
    memset(cut, '7', 60);
    snprintf(cut + 60, 4, "...");
    snprintf(msg, sizeof(msg), "score %s is outside this board's exact range: " RANGE_FIRST, cut);
    error_body(want, sizeof(want), "score_out_of_range", msg);
    expect("POST", "/boards/f0/scores", body, NULL, 422, want);
    memcpy(body + n, "1.", 2);
    memset(body + n + 2, '0', 398);
    snprintf(body + n + 400, sizeof(body) - (size_t)n - 400, "1}");
    memcpy(cut, "1.", 2);
    memset(cut + 2, '0', 58);
    snprintf(msg, sizeof(msg), FRAC_MSG("%s", 9), cut);
    error_body(want, sizeof(want), "invalid_score", msg);
    expect("POST", "/boards/f9/scores", body, NULL, 422, want);
    body[n + 400] = '0'; /* 1.000...0000: exactly 1 */
    expect("POST", "/boards/f9/scores", body, NULL, 200,
           "{\"id\":\"a\",\"score\":1,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":1}");
    expect_total("f0", 0);
}
END_TEST

/* ---------------------------------------------------------------- settings */

/* Whole-number settings are judged by the literal: any exact form of a whole number is that
 * number (20.0, 2e1, 200e-1), a literal that only rounds to one is refused and writes nothing.
 * 20.00000000000000001 was accepted as 20 before. */
START_TEST(settings_judged_by_literal)
{
    static const struct {
        const char *field, *lit, *message;
    } refused[] = {
        {"page_size", "20.00000000000000001", "page_size must be a whole number from 1 to 100."},
        {"page_size", "20.0000000001", "page_size must be a whole number from 1 to 100."},
        {"page_size", "1e-400", "page_size must be a whole number from 1 to 100."},
        {"page_size", "1e400", "page_size must be a whole number from 1 to 100."},
        {"page_size", "1e3", "page_size must be a whole number from 1 to 100."},
        {"page_size", "0.9999999999999999999", "page_size must be a whole number from 1 to 100."},
        {"score_decimals", "2.0000000000000001",
         "score_decimals must be a whole number from 0 to 9."},
        {"score_decimals", "-0.00000000000000001",
         "score_decimals must be a whole number from 0 to 9."},
        {"page_ttl_ms", "1000.00000000000001",
         "page_ttl_ms must be a whole number from 0 to 3600000."},
        {"page_ttl_ms", "12345678901234567890",
         "page_ttl_ms must be a whole number from 0 to 3600000."},
        {"retain", "1.0000000000000000001", "retain must be a whole number from 0 to 400."},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char body[128], want[300];
        snprintf(body, sizeof(body), "{\"%s\":%s}", refused[i].field, refused[i].lit);
        error_body(want, sizeof(want), "invalid_field", refused[i].message);
        expect("PUT", "/boards/s", body, NULL, 400, want);
        expect("GET", "/boards/s", NULL, NULL, 404, NULL);
    }
    static const struct {
        const char *body, *shows;
    } ok[] = {
        {"{\"page_size\":20.0}", "\"page_size\":20,"},
        {"{\"page_size\":2e1}", "\"page_size\":20,"},
        {"{\"page_size\":1e1}", "\"page_size\":10,"},
        {"{\"page_size\":250E-1}", "\"page_size\":25,"},
        {"{\"page_size\":1.00000000000000000000e2}", "\"page_size\":100,"},
        {"{\"page_ttl_ms\":-0}", "\"page_ttl_ms\":0,"},
        {"{\"page_ttl_ms\":3.6e6}", "\"page_ttl_ms\":3600000,"},
        {"{\"score_decimals\":2.0}", "\"score_decimals\":2,"},
        {"{\"period\":\"daily\",\"retain\":3E0}", "\"retain\":3,"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char path[32];
        snprintf(path, sizeof(path), "/boards/ok%zu", i);
        struct http_result r;
        ck_assert_int_eq(
            http_req(g_port, "PUT", path, ok[i].body, strlen(ok[i].body), NULL, TEST_TOKEN, &r), 0);
        ck_assert_msg(r.status == 201 && strstr(r.body, ok[i].shows), "PUT %s %s -> %ld %s", path,
                      ok[i].body, r.status, r.body);
        http_result_free(&r);
    }
}
END_TEST

/* ---------------------------------------------------------------- records */

/* A record number must read back as the value sent, judged by its literal: one that only rounds
 * to a double (0.10000000000000001, 1e-400, 9007199254740990.5, all below 2^53) was stored as
 * that double before; now it is 400 invalid_record and nothing is written. */
START_TEST(records_judged_by_literal)
{
    static const char *const refused[] = {
        "0.10000000000000001",
        "1.000000000000000001",
        "1e-400",
        "-1e-400",
        "5e-324",
        "9007199254740990.5",
        "9007199254740991.5",
        "9007199254740993",
        "12345678901234567890",
        "1e400",
        "0.3000000000000000444",
        "123456789012345678e2",
    };
    char want[400];
    error_body(want, sizeof(want), "invalid_record",
               "record field 'x' must be a string, a number a double holds exactly (integers up "
               "to 2^53; send larger ones as strings), a boolean or null (records are flat), in "
               "valid UTF-8.");
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char body[160];
        snprintf(body, sizeof(body), "{\"a\":1,\"x\":%s}", refused[i]);
        expect("PUT", "/items/r", body, NULL, 400, want);
        expect("GET", "/items/r", NULL, NULL, 404, NULL);
        snprintf(body, sizeof(body), "{\"id\":\"r\",\"score\":1,\"record\":{\"x\":%s}}",
                 refused[i]);
        expect("POST", "/boards/rb/scores", body, NULL, 400, want);
        expect_no_member("rb", "r");
    }
    static const struct {
        const char *lit, *back;
    } ok[] = {
        {"0.1", "0.1"},
        {"1.50", "1.5"},
        {"2.5e1", "25"},
        {"-0", "0"},
        {"1e15", "1000000000000000"},
        {"1.5e300", "1.5e+300"},
        {"1e-300", "1e-300"},
        {"0.30000000000000004", "0.30000000000000004"},
        {"9007199254740991", "9007199254740991"},
        {"9007199254740992", "9007199254740992"},
        {"-9007199254740994", "-9007199254740994"},
        {"1.2345678901234567e19", "1.2345678901234567e+19"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char path[32], body[96], back[96];
        snprintf(path, sizeof(path), "/items/a%zu", i);
        snprintf(body, sizeof(body), "{\"x\":%s}", ok[i].lit);
        snprintf(back, sizeof(back), "{\"x\":%s}", ok[i].back);
        expect("PUT", path, body, NULL, 204, NULL);
        expect("GET", path, NULL, NULL, 200, back);
    }
}
END_TEST

/* ---------------------------------------------------------------- trims */

/* DELETE with the token; asserts the status and, for a 200, the whole body. */
static void expect_trim(const char *path, long status, const char *want)
{
    expect("DELETE", path, NULL, NULL, status, want);
}

/* `below` is judged by its digits like a score: 1.000000000000000001 is not the score 1 (it was
 * taken as 1 before and removed the members below 1). */
START_TEST(trim_below_by_literal)
{
    make_boards();
    for (int i = 0; i <= 3; i++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d}", i, i);
        it_post_score("f0", body);
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d.5}", i, i);
        it_post_score("f1", body);
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":900719925474098%d}", i, i);
        it_post_score("i0", body);
    }
    char want[300];
    static const struct {
        const char *board, *below;
    } refused[] = {
        {"f0", "1.000000000000000001"}, {"f0", "0.9999999999999999999"},
        {"f1", "0.10000000000000001"},  {"f0", "4294967296"},
        {"i0", "9007199254740990.5"},   {"i0", "9007199254740993"},
        {"i0", "12345678901234567890"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char path[128], msg[128];
        snprintf(path, sizeof(path), "/boards/%s/members?below=%s", refused[i].board,
                 refused[i].below);
        snprintf(msg, sizeof(msg),
                 "below must be a score this board can hold (see GET /boards/%s).",
                 refused[i].board);
        error_body(want, sizeof(want), "invalid_parameter", msg);
        expect_trim(path, 400, want);
    }
    expect_total("f0", 4);
    expect_total("f1", 4);
    expect_total("i0", 4);
    expect_trim("/boards/f0/members?below=1.000000000000000000", 200, "{\"removed\":1}");
    expect_trim("/boards/f1/members?below=1.50", 200, "{\"removed\":1}");
    expect_trim("/boards/i0/members?below=9007199254740982", 200, "{\"removed\":2}");
    expect_no_member("f0", "m0");
    expect_score("f0", "m1", "1");
    expect_no_member("f1", "m0");
    expect_score("f1", "m1", "1.5");
    expect_score("i0", "m2", "9007199254740982");
}
END_TEST

Suite *numbers_suite(void)
{
    static const char *const suite_name = "numbers";
    const struct it_case cases[] = {
        {"scores_literal", scores_judged_by_literal},
        {"scores_exact", scores_exact_forms_accepted},
        {"scores_ndjson", scores_ndjson_by_literal},
        {"scores_malformed", scores_malformed_and_long},
        {"settings_literal", settings_judged_by_literal},
        {"records_literal", records_judged_by_literal},
        {"trim_below", trim_below_by_literal},
    };
    return it_suite(suite_name, cases, sizeof(cases) / sizeof(cases[0]));
}
