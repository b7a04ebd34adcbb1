/* test_cities.c -- the committed 2,000-line cities slice, imported through the NDJSON endpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

#define FIXTURE "test/fixtures/cities-2000.ndjson"

/* Import the slice into `board` (created with `settings`) and return the number of lines. */
static int import(const char *board, const char *settings)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s", board);
    ck_assert_int_eq(it_status("PUT", path, settings), 201);
    size_t len = 0;
    char *data = read_file(FIXTURE, &len);
    ck_assert_msg(data != NULL, "cannot read %s (run from the repository root)", FIXTURE);
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    struct http_result r;
    ck_assert_int_eq(
        http_req(g_port, "POST", path, data, len, "application/x-ndjson", TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += data[i] == '\n';
    ck_assert_int_eq((int)cJSON_GetObjectItem(r.json, "applied")->valuedouble, lines);
    ck_assert_int_eq((int)cJSON_GetObjectItem(r.json, "rejected_total")->valuedouble, 0);
    http_result_free(&r);
    free(data);
    return lines;
}

/* Ids of the population-0 rows, in file order. */
static int zero_ids(char ids[][16], int max)
{
    size_t len = 0;
    char *data = read_file(FIXTURE, &len);
    int n = 0;
    for (char *line = strtok(data, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        cJSON *e = cJSON_Parse(line);
        if (cJSON_GetObjectItem(e, "score")->valuedouble == 0)
            snprintf(ids[n++], 16, "%s", cJSON_GetObjectItem(e, "id")->valuestring);
        cJSON_Delete(e);
    }
    free(data);
    return n;
}

static cJSON *page(const char *board, int page_no, int size)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/rank?page=%d&size=%d", board, page_no, size);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_int_eq(r.status, 200);
    cJSON *d = r.json;
    r.json = NULL;
    http_result_free(&r);
    return d;
}

START_TEST(shanghai_first)
{
    int lines = import("cities", "{}");
    ck_assert_int_eq(lines, 2000);
    cJSON *d = page("cities", 1, 20);
    ck_assert_int_eq((int)cJSON_GetObjectItem(d, "total")->valuedouble, 2000);
    ck_assert_int_eq((int)cJSON_GetObjectItem(d, "pages")->valuedouble, 100);
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    const cJSON *top = cJSON_GetArrayItem(items, 0);
    ck_assert_str_eq(cJSON_GetObjectItem(top, "id")->valuestring, "1796236");
    ck_assert_double_eq(cJSON_GetObjectItem(top, "score")->valuedouble, 22315474.0);
    const cJSON *rec = cJSON_GetObjectItem(top, "record");
    ck_assert_str_eq(cJSON_GetObjectItem(rec, "name")->valuestring, "Shanghai");
    ck_assert_str_eq(cJSON_GetObjectItem(rec, "country")->valuestring, "CN");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 1), "id")->valuestring,
                     "745044"); /* Istanbul */
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "id")->valuestring,
                     "3435910"); /* Buenos Aires */
    cJSON_Delete(d);
    /* non-increasing populations across every page */
    double prev = 1e300;
    for (int p = 1; p <= 20; p++) {
        d = page("cities", p, 100);
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItem(d, "items"))
        {
            double s = cJSON_GetObjectItem(it, "score")->valuedouble;
            ck_assert(s <= prev);
            prev = s;
        }
        cJSON_Delete(d);
    }
}
END_TEST

/* The 500 population-0 rows tie: tiebreak first keeps import (file) order. */
START_TEST(ties_in_import_order)
{
    import("cities", "{}");
    static char ids[500][16];
    ck_assert_int_eq(zero_ids(ids, 500), 500);
    for (int p = 16; p <= 20; p++) { /* ranks 1501..2000 are the zeros */
        cJSON *d = page("cities", p, 100);
        const cJSON *items = cJSON_GetObjectItem(d, "items");
        for (int i = 0; i < 100; i++) {
            const cJSON *it = cJSON_GetArrayItem(items, i);
            ck_assert_double_eq(cJSON_GetObjectItem(it, "score")->valuedouble, 0.0);
            ck_assert_str_eq(cJSON_GetObjectItem(it, "id")->valuestring, ids[(p - 16) * 100 + i]);
        }
        cJSON_Delete(d);
    }
}
END_TEST

/* tiebreak id: ties in ascending byte order of id; UTF-8 names survive the round trip. */
START_TEST(ties_by_id_and_utf8)
{
    import("cid", "{\"tiebreak\":\"id\"}");
    cJSON *d = page("cid", 16, 100);
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    for (int i = 1; i < 100; i++) {
        const char *a = cJSON_GetObjectItem(cJSON_GetArrayItem(items, i - 1), "id")->valuestring;
        const char *b = cJSON_GetObjectItem(cJSON_GetArrayItem(items, i), "id")->valuestring;
        ck_assert_msg(strcmp(a, b) < 0, "%s before %s", a, b);
    }
    cJSON_Delete(d);
    /* every record reads back byte-exact from the file */
    size_t len = 0;
    char *data = read_file(FIXTURE, &len);
    char *line = strtok(data, "\n");
    for (int n = 0; line && n < 50; n++, line = strtok(NULL, "\n")) {
        cJSON *e = cJSON_Parse(line);
        char path[64];
        snprintf(path, sizeof(path), "/items/%s", cJSON_GetObjectItem(e, "id")->valuestring);
        struct http_result r;
        ck_assert_int_eq(http_get(g_port, path, &r), 0);
        char *want = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "record"));
        ck_assert_str_eq(r.body, want);
        free(want);
        http_result_free(&r);
        cJSON_Delete(e);
    }
    free(data);
}
END_TEST

Suite *cities_suite(void)
{
    Suite *s = suite_create("cities");
    TCase *tc = tcase_create("cities");
    tcase_add_checked_fixture(tc, it_setup, it_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shanghai_first);
    tcase_add_test(tc, ties_in_import_order);
    tcase_add_test(tc, ties_by_id_and_utf8);
    suite_add_tcase(s, tc);
    return s;
}
