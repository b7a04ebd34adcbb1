/* test_validate.c -- service/validate.h: the JSON body validators on parsed trees (entries,
 * records, settings), their refusals as status, code and message; scores judged by their
 * literals against a board, records printed exactly, fields given twice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_number.h"
#include "suites.h"
#include "validate.h"

/* A tree as parse_body makes it: parsed, numbers annotated with their literals. */
static cJSON *doc_of(const char *text)
{
    cJSON *doc = cJSON_Parse(text);
    ck_assert_ptr_nonnull(doc);
    size_t at = 0;
    ck_assert_int_eq(json_number_annotate(doc, text, strlen(text), &at), 0);
    return doc;
}

static void defaults(struct board_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->layout.order = SCORE_ORDER_DESC;
    s->layout.tiebreak = SCORE_TIEBREAK_FIRST;
    s->retain = 1;
    s->page_size = BOARD_PAGE_SIZE_DEFAULT;
    s->page_ttl_ms = BOARD_PAGE_TTL_MS_DEFAULT;
}

static void settings_refused(const char *body, const char *code, const char *msg)
{
    struct board_settings def;
    defaults(&def);
    struct board_settings_patch p;
    struct entry_error err = {0};
    cJSON *doc = doc_of(body);
    ck_assert_int_eq(validate_settings(doc, &def, &p, &err), -1);
    cJSON_Delete(doc);
    ck_assert_int_eq(err_status(err.id), 400);
    ck_assert_str_eq(err_code(err.id), code);
    ck_assert_str_eq(err.msg, msg);
}

START_TEST(test_settings_fields)
{
    struct board_settings def;
    defaults(&def);
    struct board_settings_patch p;
    struct entry_error err = {0};
    cJSON *doc = doc_of("{\"order\":\"asc\",\"page_size\":2e1,\"period\":\"weekly\","
                        "\"timezone\":\"+02:00\",\"retain\":4}");
    ck_assert_int_eq(validate_settings(doc, &def, &p, &err), 0);
    cJSON_Delete(doc);
    ck_assert(p.has_order && p.has_page_size && p.has_period && p.has_tz && p.has_retain);
    ck_assert(!p.has_tiebreak && !p.has_decimals && !p.has_page_ttl);
    ck_assert_int_eq(p.value.layout.order, SCORE_ORDER_ASC);
    ck_assert_int_eq(p.value.page_size, 20);
    ck_assert_int_eq(p.value.period, PERIOD_WEEKLY);
    ck_assert_int_eq(p.value.tz.min, 120);
    ck_assert_str_eq(p.value.tz.name, "");
    ck_assert_int_eq(p.value.retain, 4);
    ck_assert_int_eq(p.value.page_ttl_ms, BOARD_PAGE_TTL_MS_DEFAULT); /* the default kept */
}
END_TEST

/* The messages the handlers send as they were before the validators moved (settings, PUT). */
START_TEST(test_settings_refusals)
{
    settings_refused("[1]", "invalid_body", "The body must be a JSON object of settings.");
    settings_refused("{\"colour\":1}", "unknown_field",
                     "The settings object has an unknown field 'colour'.");
    settings_refused("{\"order\":\"asc\",\"order\":\"desc\"}", "duplicate_field",
                     "The settings object has the field 'order' more than once.");
    settings_refused("{\"order\":\"up\"}", "invalid_field", "order must be one of: desc, asc.");
    settings_refused("{\"tiebreak\":1}", "invalid_field",
                     "tiebreak must be one of: first, last, id.");
    settings_refused("{\"page_size\":20.00000000000000001}", "invalid_field",
                     "page_size must be a whole number from 1 to 100.");
    settings_refused("{\"period\":\"yearly\"}", "invalid_field",
                     "period must be one of: none, hourly, daily, weekly, monthly.");
    settings_refused("{\"timezone\":\"+14:01\"}", "invalid_field",
                     "timezone must be \"UTC\", an offset \"+HH:MM\" / \"-HH:MM\" within 14 "
                     "hours, or an IANA time zone name such as \"Europe/Paris\".");
    settings_refused("{\"retain\":401}", "invalid_field",
                     "retain must be a whole number from 0 to 400.");
}
END_TEST

START_TEST(test_entry)
{
    struct entry_in e;
    struct entry_error err = {0};
    cJSON *doc = doc_of("{\"id\":\"u1\",\"score\":2.50,\"op\":\"incr\",\"record\":{\"n\":1.0}}");
    ck_assert_int_eq(validate_entry(doc, &e, &err), 0);
    cJSON_Delete(doc);
    ck_assert_str_eq(e.id, "u1");
    ck_assert_int_eq(e.op, BOARD_OP_INCR);
    ck_assert_str_eq(e.score.text, "2.50"); /* the literal as sent */
    ck_assert_str_eq(e.record, "{\"n\":1}");
    entry_free(&e);
    entry_free(&e); /* safe twice */
    doc = doc_of("{\"id\":\"u1\",\"score\":1,\"op\":\"max\"}");
    ck_assert_int_eq(validate_entry(doc, &e, &err), -1);
    cJSON_Delete(doc);
    ck_assert_int_eq(err_status(err.id), 400);
    ck_assert_str_eq(err_code(err.id), "invalid_op");
    doc = doc_of("{\"id\":\"u1\",\"score\":\"1\"}");
    ck_assert_int_eq(validate_entry(doc, &e, &err), -1);
    cJSON_Delete(doc);
    ck_assert_int_eq(err_status(err.id), 422);
    ck_assert_str_eq(err_code(err.id), "invalid_score");
}
END_TEST

START_TEST(test_record)
{
    struct entry_error rerr;
    cJSON *doc = doc_of("{\"a\":\"x\",\"b\":9007199254740992,\"c\":true,\"d\":null}");
    char *json = validate_record(doc, &rerr);
    cJSON_Delete(doc);
    ck_assert_str_eq(json, "{\"a\":\"x\",\"b\":9007199254740992,\"c\":true,\"d\":null}");
    free(json);
    doc = doc_of("{\"a\":{\"b\":1}}");
    ck_assert_ptr_null(validate_record(doc, &rerr));
    cJSON_Delete(doc);
    ck_assert_int_eq(err_status(rerr.id), 400);
    ck_assert_str_eq(err_code(rerr.id), "invalid_record");
    doc = doc_of("{\"n\":9007199254740993}");
    ck_assert_ptr_null(validate_record(doc, &rerr));
    cJSON_Delete(doc);
    ck_assert_str_eq(err_code(rerr.id), "invalid_record");
}
END_TEST

static const struct {
    const char *json;
    int status; /* 0: accepted */
    const char *code;
} entries[] = {
    {"{\"id\":\"a\",\"score\":1}", 0, NULL},
    {"{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"record\":{\"n\":\"A\"}}", 0, NULL},
    {"[1]", 400, "invalid_entry"},
    {"{\"id\":\"a\",\"score\":1,\"score\":2}", 400, "duplicate_field"},
    {"{\"id\":\"a\",\"score\":1,\"rank\":2}", 400, "unknown_field"},
    {"{\"id\":\"\",\"score\":1}", 400, "invalid_id"},
    {"{\"id\":7,\"score\":1}", 400, "invalid_id"},
    {"{\"id\":\"a\",\"score\":1,\"op\":\"add\"}", 400, "invalid_op"},
    {"{\"id\":\"a\",\"score\":\"1\"}", 422, "invalid_score"},
    {"{\"id\":\"a\"}", 422, "invalid_score"},
    {"{\"id\":\"a\",\"score\":1,\"record\":[1]}", 400, "invalid_record"},
    {"{\"id\":\"a\",\"score\":1,\"record\":{\"x\":{\"y\":1}}}", 400, "invalid_record"},
    {"{\"id\":\"a\",\"score\":1,\"record\":{\"x\":0.10000000000000001}}", 400, "invalid_record"},
    {"{\"id\":\"a\",\"score\":1,\"record\":{\"x\":1,\"x\":2}}", 400, "duplicate_field"},
};

START_TEST(test_entry_refusals)
{
    cJSON *doc = doc_of(entries[_i].json);
    struct entry_in e;
    struct entry_error err = {0};
    int rc = validate_entry(doc, &e, &err);
    if (!entries[_i].status) {
        ck_assert_msg(rc == 0, "%s: %d %s %s", entries[_i].json, err_status(err.id),
                      err_code(err.id), err.msg);
        ck_assert_str_eq(e.id, "a");
        entry_free(&e);
    } else {
        ck_assert_msg(rc == -1 && err_status(err.id) == entries[_i].status &&
                          strcmp(err_code(err.id), entries[_i].code) == 0,
                      "%s: %d %s, want %d %s", entries[_i].json, err_status(err.id),
                      rc ? err_code(err.id) : "accepted", entries[_i].status, entries[_i].code);
        ck_assert_msg(err.msg[0], "no message");
    }
    cJSON_Delete(doc);
}
END_TEST

/* Scores are judged by their digits against the board, and the 422 quotes them as sent. */
START_TEST(test_prepare)
{
    struct board_settings s;
    board_settings_default(&s); /* 0 decimals */
    const char *body[] = {"{\"id\":\"a\",\"score\":2.5e1}", "{\"id\":\"b\",\"score\":4294967295}",
                          "{\"id\":\"c\",\"score\":1.000000000000000001}"};
    struct entry_in in[3];
    for (int i = 0; i < 3; i++) {
        cJSON *doc = doc_of(body[i]);
        struct entry_error err = {0};
        ck_assert_int_eq(validate_entry(doc, &in[i], &err), 0);
        cJSON_Delete(doc);
    }
    struct board_entry be[3];
    size_t bad = 99;
    struct entry_error err = {0};
    ck_assert_int_eq(validate_prepare(&s, in, 2, be, &bad, &err), 0);
    ck_assert_str_eq(be[0].id, "a");
    ck_assert_int_eq(validate_prepare(&s, in, 3, be, &bad, &err), -1);
    ck_assert_uint_eq(bad, 2);
    ck_assert_int_eq(err_status(err.id), 422);
    ck_assert_str_eq(err_code(err.id), "invalid_score");
    ck_assert_msg(strstr(err.msg, "1.000000000000000001"), "%s", err.msg);
    struct json_number big;
    ck_assert_int_eq(json_number_parse("4294967296", 10, &big), 0);
    int64_t key = 0;
    int rc = validate_check_score(&s, &big, &key);
    ck_assert_int_eq(rc, -ERANGE);
    validate_score_error(&s, &big, rc, &err);
    ck_assert_str_eq(err_code(err.id), "score_out_of_range");
    ck_assert_msg(strstr(err.msg, "4294967296") && strstr(err.msg, "-4294967295"), "%s", err.msg);
    for (int i = 0; i < 3; i++)
        entry_free(&in[i]);
}
END_TEST

/* An incr's floor and ceiling become key bounds in key order: on a desc board the floor is the
 * largest key, on an asc board the smallest; a floor above the ceiling is 400. */
START_TEST(test_prepare_bounds)
{
    struct board_settings s;
    board_settings_default(&s);
    s.layout.decimals = 1;
    struct entry_in in;
    struct entry_error err = {0};
    cJSON *doc =
        doc_of("{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"floor\":-2.5,\"ceiling\":30e-1}");
    ck_assert_int_eq(validate_entry(doc, &in, &err), 0);
    cJSON_Delete(doc);
    struct board_entry be;
    size_t bad = 9;
    ck_assert_int_eq(validate_prepare(&s, &in, 1, &be, &bad, &err), 0);
    ck_assert(be.has_lo && be.has_hi);
    ck_assert_int_eq(be.key_lo, -30); /* desc: key = -scaled; the ceiling 3.0 is the best key */
    ck_assert_int_eq(be.key_hi, 25);
    s.layout.order = SCORE_ORDER_ASC;
    ck_assert_int_eq(validate_prepare(&s, &in, 1, &be, &bad, &err), 0);
    ck_assert_int_eq(be.key_lo, -25);
    ck_assert_int_eq(be.key_hi, 30);
    entry_free(&in);
    doc = doc_of("{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"floor\":3,\"ceiling\":2.9}");
    ck_assert_int_eq(validate_entry(doc, &in, &err), 0);
    cJSON_Delete(doc);
    ck_assert_int_eq(validate_prepare(&s, &in, 1, &be, &bad, &err), -1);
    ck_assert_int_eq(err_status(err.id), 400);
    ck_assert_str_eq(err_code(err.id), "invalid_field");
    ck_assert_str_eq(err.msg, "floor 3 is above ceiling 2.9.");
    entry_free(&in);
    doc = doc_of("{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"ceiling\":0.25}");
    ck_assert_int_eq(validate_entry(doc, &in, &err), 0);
    cJSON_Delete(doc);
    ck_assert_int_eq(validate_prepare(&s, &in, 1, &be, &bad, &err), -1);
    ck_assert_int_eq(err_status(err.id), 422);
    ck_assert_str_eq(err.msg, "ceiling 0.25 has more fractional digits than this board keeps "
                              "(score_decimals=1).");
    entry_free(&in);
    doc = doc_of("{\"id\":\"a\",\"score\":1,\"op\":\"set\",\"floor\":0}");
    ck_assert_int_eq(validate_entry(doc, &in, &err), -1);
    cJSON_Delete(doc);
    ck_assert_int_eq(err_status(err.id), 400);
    ck_assert_str_eq(err_code(err.id), "invalid_field");
}
END_TEST

/* A record prints its numbers exactly, and is at most BOARD_RECORD_BYTES_MAX bytes. */
START_TEST(test_record_exact_and_capped)
{
    cJSON *doc = doc_of("{\"n\":\"x\",\"v\":0.30000000000000004,\"b\":true,\"z\":null}");
    struct entry_error rerr;
    char *json = validate_record(doc, &rerr);
    ck_assert_ptr_nonnull(json);
    ck_assert_str_eq(json, "{\"n\":\"x\",\"v\":0.30000000000000004,\"b\":true,\"z\":null}");
    free(json);
    cJSON_Delete(doc);
    char big[BOARD_RECORD_BYTES_MAX + 64];
    snprintf(big, sizeof(big), "{\"t\":\"%0*d\"}", BOARD_RECORD_BYTES_MAX, 0);
    doc = doc_of(big);
    ck_assert_ptr_null(validate_record(doc, &rerr));
    ck_assert_int_eq(err_status(rerr.id), 413);
    ck_assert_str_eq(err_code(rerr.id), "record_too_large");
    cJSON_Delete(doc);
}
END_TEST

/* A field given twice is found among a few fields and among many (the hash table's path). */
START_TEST(test_duplicate_fields)
{
    cJSON *few = doc_of("{\"a\":1,\"b\":2,\"a\":3}");
    ck_assert_str_eq(validate_duplicate_field(few), "a");
    cJSON_Delete(few);
    char text[4096] = "{";
    for (int i = 0; i < 200; i++) {
        size_t at = strlen(text);
        snprintf(text + at, sizeof(text) - at, "\"f%d\":%d,", i, i);
    }
    strcat(text, "\"f150\":0}");
    cJSON *many = doc_of(text);
    ck_assert_str_eq(validate_duplicate_field(many), "f150");
    cJSON_Delete(many);
    text[strlen(text) - strlen("\"f150\":0}")] = '\0';
    strcat(text, "\"g\":0}");
    many = doc_of(text);
    ck_assert_ptr_null(validate_duplicate_field(many));
    cJSON_Delete(many);
}
END_TEST

/* A number node keeps its literal; a node made by rankd (no literal) is judged by its double. */
START_TEST(test_number_literal)
{
    cJSON *doc = doc_of("{\"x\":1.50}");
    struct json_number n;
    ck_assert_int_eq(validate_number_literal(cJSON_GetObjectItem(doc, "x"), &n), 0);
    ck_assert_str_eq(n.text, "1.50");
    cJSON_Delete(doc);
    cJSON *made = cJSON_CreateNumber(0.25);
    ck_assert_int_eq(validate_number_literal(made, &n), 0);
    ck_assert_str_eq(n.text, "0.25");
    cJSON_Delete(made);
    cJSON *str = cJSON_CreateString("1");
    ck_assert_int_eq(validate_number_literal(str, &n), -EINVAL);
    cJSON_Delete(str);
}
END_TEST

/* What the tree path (handlers_parse_body's parse and annotate, then validate_entry) makes of a
 * body: 0 with *e, or -1 (refused). */
static int entry_by_tree(const char *body, size_t len, struct entry_in *e)
{
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(body, len + 1, &end, 1);
    size_t at = 0;
    struct entry_error err = {0};
    int rc = -1;
    if (doc && json_number_annotate(doc, body, len, &at) == 0 &&
        !cJSON_GetObjectItemCaseSensitive(doc, "entries"))
        rc = validate_entry(doc, e, &err);
    cJSON_Delete(doc);
    return rc;
}

static const char *pick(const char *const *list, size_t n, unsigned long long *r)
{
    *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
    return list[(*r >> 33) % n];
}

#define PICK(list, r) pick(list, sizeof(list) / sizeof(list[0]), r)

/* A one-entry body the fast scan takes gives the entry the tree path gives, field by field; the
 * scan takes only bodies the tree path accepts. Random bodies from fragments: the fields in any
 * order, some twice or unknown, JSON and other whitespace, ids, scores, ops and records valid
 * and not (escapes, nesting, inexact and long numbers, a record past its byte limit, trailing
 * text, NUL). Most valid common bodies must be taken (else the scan does nothing). */
START_TEST(test_fast_same_as_tree)
{
    static const char *const sp[] = {"", "", "", "", "", " ", "\t", "\n ", "\r", "\x01", "  ", ""};
    static const char *const ids[] = {
        "\"a\"",
        "\"m12345\"",
        "\"\xc3\xa9t\xc3\xa9\"",
        "\"a\\\"b\"",
        "\"\"",
        "\"a\\u0041\"",
        "\"\xff\"",
        "\"a\x7f\"",
        "5",
        "null",
        "\"tab\tin\"",
        "\"a\\\\\"",
        ("\"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234"
         "5678901234567890123456789012345678901234567890123456\"")};
    static const char *const scores[] = {"1",
                                         "-0",
                                         "1.5",
                                         "1e3",
                                         "2.5E-1",
                                         "01",
                                         "1.",
                                         "-",
                                         "\"5\"",
                                         "null",
                                         "true",
                                         "-12",
                                         "4294967296",
                                         "12345678901234567890",
                                         "1.0000000000000000001",
                                         "1e400",
                                         "0.001",
                                         "9007199254740993",
                                         "-1.25e+2",
                                         "1.5x"};
    static const char *const ops[] = {"\"set\"",       "\"best\"", "\"incr\"", "\"SET\"",
                                      "\"se\\u0074\"", "null",     "1",        "\"\""};
    static const char *const recs[] = {
        "{}",
        "{\"w\":1}",
        "{ \"a\" : \"x\" , \"b\":true,\"c\":null,\"d\":1.5,\"e\":false}",
        "{\"a\":1,\"a\":2}",
        "{\"a\":{\"b\":1}}",
        "{\"a\":[1]}",
        "{\"a\":9007199254740993}",
        "{\"a\":0.1}",
        "{\"a\":1e400}",
        "{\"a\":\"\\n\"}",
        "{\"a\":1.50}",
        "{\"a\":2E2}",
        "{\"a\":tru}",
        "{\"a\":\"\xc3\xa9\"}",
        "{\"\xc3\":1}",
        "[]",
        "\"r\"",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\":-0}",
        "{\"a\":123456789012345678}",
        "{\"a\":1e-7}"};
    static const char *const keys[] = {"id",    "score",   "op", "record",
                                       "floor", "entries", "Id", "i\\u0064"};
    char big[1400];
    snprintf(big, sizeof(big), "{\"k\":\"%01100d\"}", 0);
    unsigned long long r = 29;
    int taken = 0, common = 0, common_taken = 0;
    for (int i = 0; i < 40000; i++) {
        char body[8192];
        size_t n = 0;
        int nf = 2 + (int)(r >> 40) % 3;
        int plain = 1; /* only the four fields, each once, valid values: the scan must take most */
        const char *used[6];
        n += (size_t)snprintf(body + n, sizeof(body) - n, "%s{", PICK(sp, &r));
        for (int f = 0; f < nf; f++) {
            const char *k = f == 0 ? "id" : f == 1 ? "score" : PICK(keys, &r);
            if (f >= 2 && (r >> 20) % 3)
                k = f == 2 ? "op" : "record";
            for (int u = 0; u < f; u++)
                if (strcmp(used[u], k) == 0)
                    plain = 0;
            used[f] = k;
            const char *v = strcmp(k, "id") == 0       ? PICK(ids, &r)
                            : strcmp(k, "op") == 0     ? PICK(ops, &r)
                            : strcmp(k, "record") == 0 ? ((r >> 30) % 13 ? PICK(recs, &r) : big)
                                                       : PICK(scores, &r);
            if (strcmp(k, "id") && strcmp(k, "score") && strcmp(k, "op") && strcmp(k, "record"))
                plain = 0;
            n += (size_t)snprintf(body + n, sizeof(body) - n, "%s%s\"%s\"%s:%s%s%s%s", f ? "," : "",
                                  PICK(sp, &r), k, PICK(sp, &r), PICK(sp, &r), v, PICK(sp, &r), "");
        }
        n += (size_t)snprintf(body + n, sizeof(body) - n, "}%s%s", PICK(sp, &r),
                              (r >> 50) % 17 == 0 ? "x" : "");
        ck_assert_uint_lt(n, sizeof(body));
        if ((r >> 45) % 23 == 0 && n > 4)
            body[n / 2] = '\0'; /* a NUL inside */
        struct entry_in fast, tree;
        int f = validate_entry_fast(body, n, &fast);
        int t = entry_by_tree(body, n, &tree);
        if (f) {
            taken++;
            ck_assert_msg(t == 0, "taken by the scan, refused by the tree: %.*s", (int)n, body);
            ck_assert_str_eq(fast.id, tree.id);
            ck_assert_int_eq(fast.op, tree.op);
            ck_assert_msg(
                fast.score.digits == tree.score.digits && fast.score.exp == tree.score.exp &&
                    fast.score.neg == tree.score.neg && fast.score.wide == tree.score.wide &&
                    strcmp(fast.score.text, tree.score.text) == 0,
                "score of %.*s", (int)n, body);
            ck_assert_int_eq(fast.has_floor + fast.has_ceiling + fast.nsub, 0);
            ck_assert_int_eq(tree.has_floor + tree.has_ceiling + tree.nsub, 0);
            ck_assert_msg((!fast.record && !tree.record) ||
                              (fast.record && tree.record && strcmp(fast.record, tree.record) == 0),
                          "record of %.*s: %s vs %s", (int)n, body, fast.record ? fast.record : "-",
                          tree.record ? tree.record : "-");
            entry_free(&fast);
        } else {
            ck_assert_ptr_null(fast.id);
            ck_assert_ptr_null(fast.record);
        }
        if (t == 0)
            entry_free(&tree);
        /* a valid body of only the four fields, JSON whitespace, no escapes, no NUL */
        if (t == 0 && plain && !memchr(body, '\\', n) && !memchr(body, '\x01', n) &&
            strlen(body) == n && !strstr(body, "\"a\\") && n < 1000) {
            common++;
            common_taken += f;
        }
    }
    fprintf(stderr, "validate: fast scan took %d of 40000 random bodies, %d of %d common ones\n",
            taken, common_taken, common);
    ck_assert_int_gt(common, 400);
    ck_assert_int_ge(common_taken * 10, common * 9);
    /* and these, as the write bench sends them */
    static const char *const mine[] = {
        "{\"id\":\"i42\",\"score\":1234567,\"op\":\"set\",\"record\":{\"w\":1}}",
        "{\"id\":\"u7\",\"score\":-3}", "{ \"score\": 1.5, \"id\": \"p\" }\n"};
    for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
        struct entry_in e;
        ck_assert_int_eq(validate_entry_fast(mine[i], strlen(mine[i]), &e), 1);
        entry_free(&e);
    }
}
END_TEST

Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("validate");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_settings_fields);
    tcase_add_test(tc, test_settings_refusals);
    tcase_add_test(tc, test_entry);
    tcase_add_test(tc, test_record);
    suite_add_tcase(s, tc);
    tc = tcase_create("entries");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, test_entry_refusals, 0, (int)(sizeof(entries) / sizeof(entries[0])));
    tcase_add_test(tc, test_prepare);
    tcase_add_test(tc, test_prepare_bounds);
    tcase_add_test(tc, test_record_exact_and_capped);
    suite_add_tcase(s, tc);
    tc = tcase_create("json_checks");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_duplicate_fields);
    tcase_add_test(tc, test_number_literal);
    tcase_add_test(tc, test_fast_same_as_tree);
    suite_add_tcase(s, tc);
    return s;
}
