/* test_errors.c -- the error table (errors.def, errors.h): its rows' shape and its lookups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "errors.h"
#include "http.h"
#include "suites.h"

static int snake_case(const char *s)
{
    if (!s || !*s || *s == '_')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
            return 0;
    return 1;
}

/* Every row: a name, a status 400..599, a snake_case code, a message whose placeholders are all
 * names the errno table fills. */
START_TEST(every_row_is_well_formed)
{
    enum err_id id = (enum err_id)_i;
    const struct err_info *e = err_info(id);
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(e->name && e->name[0], "id %d: no name", _i);
    ck_assert_msg(e->status >= 400 && e->status <= 599, "%s: status %d", e->name, e->status);
    ck_assert_msg(snake_case(e->code), "%s: code '%s'", e->name, e->code);
    ck_assert_msg(e->message && e->message[0], "%s: no message", e->name);
    ck_assert_int_eq(err_status(id), e->status);
    ck_assert_str_eq(err_code(id), e->code);
    ck_assert_str_eq(err_message(id), e->message);
    /* the default message fills, as a row of the errno table without its own message would */
    const struct http_errno_row row = {.err = -1, .scope = HTTP_ERRNO_FAULT, .id = id};
    const struct http_errno_args all = {"b", "i", "GET", "/p", "GET", "f", "1", "0", "9", "2"};
    char out[1024];
    http_errno_format(&row, -1, &all, out, sizeof(out));
    ck_assert_msg(!strchr(out, '{') && !strchr(out, '}'), "%s: unknown name in '%s'", e->name,
                  e->message);
}
END_TEST

/* Ids are unique by construction (an enum); their names, and each (code, status), once. A code
 * sent with two statuses has two ids. */
START_TEST(names_and_codes_are_unique)
{
    for (int i = ERR_NONE + 1; i < ERR_COUNT; i++)
        for (int j = i + 1; j < ERR_COUNT; j++) {
            const struct err_info *a = err_info((enum err_id)i), *b = err_info((enum err_id)j);
            ck_assert_msg(strcmp(a->name, b->name) != 0, "name %s twice", a->name);
            ck_assert_msg(strcmp(a->code, b->code) != 0 || a->status != b->status,
                          "%s and %s: both %d %s", a->name, b->name, a->status, a->code);
        }
    ck_assert_int_eq(err_find("board_not_found", 0), ERR_BOARD_NOT_FOUND);
    ck_assert_int_eq(err_find("invalid_entries", 400), ERR_INVALID_ENTRIES);
    ck_assert_int_eq(err_find("invalid_entries", 413), ERR_TOO_MANY_ENTRIES);
    ck_assert_int_eq(err_find("no_such_code", 0), ERR_NONE);
}
END_TEST

/* Outside the table: no row, and the safe answers (a 500 "internal"). */
START_TEST(outside_the_table)
{
    ck_assert_ptr_null(err_info(ERR_NONE));
    ck_assert_ptr_null(err_info(ERR_COUNT));
    ck_assert_ptr_null(err_info((enum err_id) - 1));
    ck_assert_int_eq(err_status(ERR_COUNT), 500);
    ck_assert_str_eq(err_code(ERR_NONE), "internal");
    ck_assert_str_eq(err_message(ERR_COUNT), "");
}
END_TEST

/* The bodies written without cJSON parse, and say the id's code. */
START_TEST(json_body)
{
    char out[256];
    int n = err_json(ERR_TOO_MANY_CONNECTIONS, "rankd is full.", out, sizeof(out));
    ck_assert_int_eq(n, (int)strlen(out));
    ck_assert_str_eq(out, "{\"error\":{\"code\":\"too_many_connections\",\"message\":\"rankd is "
                          "full.\"}}");
    cJSON *doc = cJSON_Parse(out);
    ck_assert_ptr_nonnull(doc);
    cJSON_Delete(doc);
}
END_TEST

/* A reply made from an id has its status and code, and records the id (the access log's). */
START_TEST(reply_from_an_id)
{
    struct http_reply rp = {0};
    http_reply_error_default(&rp, ERR_UNEXPECTED_BODY);
    ck_assert_int_eq(rp.status, 400);
    ck_assert_int_eq(rp.error, ERR_UNEXPECTED_BODY);
    ck_assert_str_eq(rp.body.data, "{\"error\":{\"code\":\"unexpected_body\",\"message\":\"This "
                                   "request takes no body.\"}}");
    ck_assert_ptr_null(rp.fault);
    http_reply_error(&rp, ERR_SHUTTING_DOWN, "Stopping (%d).", 1);
    ck_assert_int_eq(rp.status, 503);
    ck_assert_str_eq(rp.fault, "Stopping (1).");
    buf_free(&rp.body);
    http_reply_free_fault(&rp);
    ck_assert_ptr_null(rp.fault);
}
END_TEST

/* Run scripts/check-errors.sh on a copy of errors.def with `edit` (a sed script) applied; its
 * exit status, and its output into out[cap]. */
static int check_errors_with(const char *edit, char *out, size_t cap)
{
    char dir[] = "/tmp/rankd-check-errors-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "sed -e '%s' service/lib/errors.def > %s/errors.def && "
             "ERRORS_DEF=%s/errors.def scripts/check-errors.sh > %s/out 2>&1",
             edit, dir, dir, dir);
    int rc = system(cmd);
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    FILE *f = fopen(cmd, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* make lint's check fails on a code the table has and openapi lacks, and on a status the docs
 * do not give a code; it passes on the table as it is. */
START_TEST(check_errors_fails_on_drift)
{
    char out[4096];
    ck_assert_int_eq(check_errors_with("s/^ERR(NOT_FOUND, 404,/&/", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(
        check_errors_with("$a\\\nERR(MADE_UP, 400, \"made_up_code\", \"x\")", out, sizeof(out)), 1);
    ck_assert_msg(strstr(out, "missing from schema/openapi.yaml's ErrorCode: made_up_code"), "%s",
                  out);
    ck_assert_msg(strstr(out, "missing from the Errors table of docs/api.md: made_up_code"), "%s",
                  out);
    ck_assert_int_eq(
        check_errors_with("s/^ERR(NOT_FOUND, 404,/ERR(NOT_FOUND, 410,/", out, sizeof(out)), 1);
    ck_assert_msg(strstr(out, "not_found (410)"), "%s", out);
}
END_TEST

Suite *errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, every_row_is_well_formed, ERR_NONE + 1, ERR_COUNT);
    tcase_add_test(tc, names_and_codes_are_unique);
    tcase_add_test(tc, outside_the_table);
    tcase_add_test(tc, json_body);
    tcase_add_test(tc, reply_from_an_id);
    suite_add_tcase(s, tc);
    tc = tcase_create("lint");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, check_errors_fails_on_drift);
    suite_add_tcase(s, tc);
    return s;
}
