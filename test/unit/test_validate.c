/* test_validate.c -- service/validate.h: the JSON body validators on parsed trees (entries,
 * records, settings), their refusals as status, code and message. */
#include <errno.h>
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
    ck_assert_int_eq(err.status, 400);
    ck_assert_str_eq(err.code, code);
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
    ck_assert_int_eq(p.value.tz_min, 120);
    ck_assert_int_eq(p.value.retain, 4);
    ck_assert_int_eq(p.value.page_ttl_ms, BOARD_PAGE_TTL_MS_DEFAULT); /* the default kept */
}
END_TEST

/* The messages handlers.c sends as they were before the validators moved (settings, PUT). */
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
                     "timezone must be \"UTC\" or an offset \"+HH:MM\" / \"-HH:MM\" within 14 "
                     "hours.");
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
    ck_assert_int_eq(err.status, 400);
    ck_assert_str_eq(err.code, "invalid_op");
    doc = doc_of("{\"id\":\"u1\",\"score\":\"1\"}");
    ck_assert_int_eq(validate_entry(doc, &e, &err), -1);
    cJSON_Delete(doc);
    ck_assert_int_eq(err.status, 422);
    ck_assert_str_eq(err.code, "invalid_score");
}
END_TEST

START_TEST(test_record)
{
    int status = 0;
    const char *code = NULL;
    char msg[VALIDATE_MSG_MAX];
    cJSON *doc = doc_of("{\"a\":\"x\",\"b\":9007199254740992,\"c\":true,\"d\":null}");
    char *json = validate_record(doc, &status, &code, msg);
    cJSON_Delete(doc);
    ck_assert_str_eq(json, "{\"a\":\"x\",\"b\":9007199254740992,\"c\":true,\"d\":null}");
    free(json);
    doc = doc_of("{\"a\":{\"b\":1}}");
    ck_assert_ptr_null(validate_record(doc, &status, &code, msg));
    cJSON_Delete(doc);
    ck_assert_int_eq(status, 400);
    ck_assert_str_eq(code, "invalid_record");
    doc = doc_of("{\"n\":9007199254740993}");
    ck_assert_ptr_null(validate_record(doc, &status, &code, msg));
    cJSON_Delete(doc);
    ck_assert_str_eq(code, "invalid_record");
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
    return s;
}
