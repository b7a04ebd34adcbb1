/* test_render.c -- the hot bodies (render.h) are written without cJSON: byte for byte what
 * cJSON's unformatted printer makes of the same document, for awkward ids, records and numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render.h"
#include "suites.h"

/* The page document as render.c built it with cJSON before it wrote bodies directly. */
static char *page_by_cjson(const char *board, int64_t page, const struct board_page *p)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "board", board);
    cJSON_AddNumberToObject(doc, "page", (double)page);
    cJSON_AddNumberToObject(doc, "size", p->size);
    cJSON_AddNumberToObject(doc, "total", (double)p->total);
    cJSON_AddNumberToObject(doc, "pages", (double)render_pages(p->total, p->size));
    cJSON *items = cJSON_AddArrayToObject(doc, "items");
    for (size_t i = 0; i < p->n; i++) {
        const struct board_item *it = &p->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(items, o);
        cJSON_AddNumberToObject(o, "rank", (double)it->rank);
        cJSON_AddStringToObject(o, "id", it->id);
        cJSON_AddItemToObject(o, "score", render_number(it->score));
        cJSON_AddItemToObject(o, "record",
                              it->record ? cJSON_CreateRaw(it->record) : cJSON_CreateNull());
    }
    char *json = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return json;
}

START_TEST(test_page_body_matches_cjson)
{
    static const char *const ids[] = {
        "plain",        "quote\"d", "back\\slash", "tab\there",   "nl\nx",
        "\x01\x1f\x7f", "Lòria ✓",  "/a+b%2F",     "\b\f\r done", "x"};
    static const double scores[] = {0,    -1,   22315474, 9007199254740991.0, -9007199254740991.0,
                                    0.25, -2.5, 1e15,     123456.789,         4294967295.0};
    enum { N = sizeof(ids) / sizeof(ids[0]) };
    struct board_item items[N];
    for (size_t i = 0; i < N; i++) {
        items[i] =
            (struct board_item){.id = ids[i],
                                .id_len = strlen(ids[i]),
                                .score = scores[i],
                                .rank = 1000000 + (int64_t)i,
                                .record = i % 3 ? "{\"name\":\"n\\u00e9\",\"level\":3}" : NULL};
        items[i].record_len = items[i].record ? strlen(items[i].record) : 0;
    }
    struct board_page p = {.total = 2147483647, .size = 20, .n = N, .items = items};
    char *got = render_page("cities", 50001, &p), *want = page_by_cjson("cities", 50001, &p);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    p.n = 0; /* a page past the end */
    got = render_page("a.b-c_d", 7, &p);
    want = page_by_cjson("a.b-c_d", 7, &p);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
}
END_TEST

START_TEST(test_member_and_write_bodies)
{
    struct board_member mb = {.score = 1e15, .rank = 41, .record = "{\"a\":1}", .record_len = 7};
    char *got = render_member("m\"1", &mb, 20);
    ck_assert_str_eq(got, "{\"id\":\"m\\\"1\",\"score\":1000000000000000,\"rank\":41,\"page\":3,"
                          "\"record\":{\"a\":1}}");
    free(got);
    mb.record = NULL;
    mb.score = -0.5;
    got = render_member("x", &mb, 41);
    ck_assert_str_eq(got, "{\"id\":\"x\",\"score\":-0.5,\"rank\":41,\"page\":1,\"record\":null}");
    free(got);
    struct board_outcome o = {.score = 9007199254740991.0, .rank = 1, .updated = 1};
    got = render_write("w", &o, 7);
    ck_assert_str_eq(got, "{\"id\":\"w\",\"score\":9007199254740991,\"rank\":1,\"updated\":true,"
                          "\"prev_score\":null,\"prev_rank\":null,\"version\":7}");
    free(got);
    o = (struct board_outcome){
        .score = 2.5, .rank = 0, .has_prev = 1, .prev_score = -3, .prev_rank = 12};
    got = render_write("w", &o, 8);
    ck_assert_str_eq(got, "{\"id\":\"w\",\"score\":2.5,\"rank\":null,\"updated\":false,"
                          "\"prev_score\":-3,\"prev_rank\":12,\"version\":8}");
    free(got);
    struct board_outcome two[2] = {{.score = 1, .rank = 2, .updated = 1}, {.score = 5, .rank = 1}};
    got = render_batch(two, 2, 9);
    ck_assert_str_eq(got, "{\"applied\":2,\"rejected\":[],\"results\":[{\"score\":1,\"rank\":2,"
                          "\"updated\":true},{\"score\":5,\"rank\":1,\"updated\":false}],"
                          "\"version\":9}");
    free(got);
    const char *boards[] = {"a", "b"};
    const struct board_outcome *per[] = {&two[0], &two[1]};
    const int64_t versions[] = {3, 4};
    got = render_boards_write("w", boards, per, versions, 2);
    ck_assert_str_eq(got, "{\"id\":\"w\",\"boards\":[{\"board\":\"a\",\"score\":1,\"rank\":2,"
                          "\"updated\":true,\"prev_score\":null,\"prev_rank\":null,\"version\":3},"
                          "{\"board\":\"b\",\"score\":5,\"rank\":1,\"updated\":false,"
                          "\"prev_score\":null,\"prev_rank\":null,\"version\":4}]}");
    free(got);
}
END_TEST

/* Exact integers are plain digits, never exponent form; the rest reads back exactly. */
START_TEST(test_number_text_plain_integers)
{
    char t[40];
    render_number_text(1e15, t, sizeof(t));
    ck_assert_str_eq(t, "1000000000000000");
    render_number_text(9007199254740992.0, t, sizeof(t));
    ck_assert_str_eq(t, "9007199254740992");
    render_number_text(-9007199254740991.0, t, sizeof(t));
    ck_assert_str_eq(t, "-9007199254740991");
    render_number_text(-0.0, t, sizeof(t));
    ck_assert_str_eq(t, "0");
    render_number_text(0.1, t, sizeof(t));
    ck_assert_str_eq(t, "0.1");
    static const double others[] = {1.5e300, 0.30000000000000004, 123456.789, -2.5e-7};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        render_number_text(others[i], t, sizeof(t));
        ck_assert(strtod(t, NULL) == others[i]);
    }
}
END_TEST

Suite *render_suite(void)
{
    Suite *s = suite_create("render");
    TCase *tc = tcase_create("bodies");
    tcase_add_test(tc, test_page_body_matches_cjson);
    tcase_add_test(tc, test_member_and_write_bodies);
    tcase_add_test(tc, test_number_text_plain_integers);
    suite_add_tcase(s, tc);
    return s;
}
