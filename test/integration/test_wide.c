/*
 * test_wide.c -- the `wide` score layout (schema/score-layout.md) over HTTP against a real Redis:
 * tiebreak first|last boards accepting every score a double holds exactly (|score| <= 2^53 - 1),
 * with first-to-reach (or last-to-reach) order exact, checked against an independent model.
 *
 * The model knows nothing of the encoding: per member an integer score and the sequence number
 * of the write that last changed it. Order: score (desc: higher first; asc: lower first), then
 * the sequence (first: earlier first; last: later first). Ids are unique, so nothing else counts.
 * Checked: every page, every member read, a cursor walk over the whole board (next, then prev),
 * competition and dense ranks, around a member, a score range, export, a member delete, a trim,
 * and the refusal of a score one past the range.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "score_model.h"
#include "suites.h"

#define W_MEMBERS 300
#define W_ENTRIES 3000
#define W_BATCH 250
#define W_MAX MODEL_MAX

/* Scores at and near both ends of the range, around the old 2^32 limit, and small ones: many
 * ties, and every one of them beyond what a `packed` first board holds when |v| > 2^32 - 1. */
static const int64_t values[] = {W_MAX,
                                 W_MAX - 1,
                                 -W_MAX,
                                 -W_MAX + 1,
                                 INT64_C(1) << 52,
                                 -(INT64_C(1) << 52),
                                 INT64_C(4294967296),
                                 -INT64_C(4294967296),
                                 INT64_C(4294967295),
                                 0,
                                 1,
                                 -1,
                                 7,
                                 W_MAX / 3};
#define NVALUES (sizeof(values) / sizeof(values[0]))

/* Every read of the board equals the model. */
static void verify(const struct model_board *b)
{
    const struct model_member *v[W_MEMBERS];
    size_t n = model_sorted(b, v);
    char path[512];
    struct http_result r;
    /* pages of 100 */
    for (size_t from = 0; from < n + 1; from += 100) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100", b->name, from / 100 + 1);
        cJSON *j = model_get(g_port, path, &r);
        ck_assert_int_eq((int64_t)json_num(j, "total"), (int64_t)n);
        model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                           n - from < 100 ? n - from : 100, NULL);
        http_result_free(&r);
    }
    /* competition and dense ranks of the whole board, on one page of 100 at a time */
    int64_t comp[W_MEMBERS], dense[W_MEMBERS];
    model_ranks(b, v, n, comp, dense);
    for (size_t from = 0; from < n; from += 100) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100&rank=competition", b->name,
                 from / 100 + 1);
        cJSON *j = model_get(g_port, path, &r);
        model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                           n - from < 100 ? n - from : 100, comp);
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100&rank=dense", b->name,
                 from / 100 + 1);
        j = model_get(g_port, path, &r);
        model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                           n - from < 100 ? n - from : 100, dense);
        http_result_free(&r);
    }
    /* every member: score, rank (ordinal and competition); around it */
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/boards/%s/members/%s", b->name, v[i]->id);
        cJSON *j = model_get(g_port, path, &r);
        ck_assert_msg((int64_t)json_num(j, "rank") == (int64_t)i + 1 &&
                          json_num(j, "score") == (double)v[i]->score,
                      "%s: want rank %zu score %" PRId64 ", got %s", path, i + 1, v[i]->score,
                      r.body);
        http_result_free(&r);
        if (i % 37 == 0) {
            snprintf(path, sizeof(path), "/boards/%s/members/%s?rank=competition", b->name,
                     v[i]->id);
            j = model_get(g_port, path, &r);
            ck_assert_int_eq((int64_t)json_num(j, "rank"), comp[i]);
            http_result_free(&r);
            model_expect_around(g_port, b, v, n, i);
        }
    }
    /* a cursor walk: next from page 1 to the end */
    model_expect_cursor_walk(g_port, b, v, n, 7);
    /* a score range: [values[9], values[0]] on desc, the same set of scores on asc */
    model_expect_range(g_port, b, v, n, 0, W_MAX);
    /* export: NDJSON, one line per member, in rank order */
    model_expect_export(g_port, b, v, n);
}

static const struct {
    const char *name, *settings;
    enum score_order order;
    enum score_tiebreak tiebreak;
} boards[] = {
    {"w-desc-first", "{\"score_layout\":\"wide\",\"page_ttl_ms\":0}", SCORE_ORDER_DESC,
     SCORE_TIEBREAK_FIRST},
    {"w-desc-last", "{\"score_layout\":\"wide\",\"tiebreak\":\"last\",\"page_ttl_ms\":0}",
     SCORE_ORDER_DESC, SCORE_TIEBREAK_LAST},
    {"w-asc-first", "{\"score_layout\":\"wide\",\"order\":\"asc\",\"page_ttl_ms\":0}",
     SCORE_ORDER_ASC, SCORE_TIEBREAK_FIRST},
    {"w-asc-last",
     "{\"score_layout\":\"wide\",\"order\":\"asc\",\"tiebreak\":\"last\",\"page_ttl_ms\":0}",
     SCORE_ORDER_ASC, SCORE_TIEBREAK_LAST},
};

/* Random set/best/incr over the full range, in batches; then every read equals the model;
 * then a member delete and a trim, and every read again. */
START_TEST(test_wide_full_range_property)
{
    struct model_board mb = {.order = boards[_i].order, .tiebreak = boards[_i].tiebreak};
    struct model_board *b = &mb;
    snprintf(b->name, sizeof(b->name), "%s", boards[_i].name);
    model_init(b, W_MEMBERS);
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s", b->name);
    ck_assert_int_eq(it_status("PUT", path, boards[_i].settings), 201);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(strcmp(json_str(r.json, "score_layout"), "wide") == 0 &&
                      json_num(cJSON_GetObjectItemCaseSensitive(r.json, "score_range"), "max") ==
                          (double)W_MAX,
                  "GET %s: %s", path, r.body);
    http_result_free(&r);
    uint64_t rng = UINT64_C(0x77ade25) + (uint64_t)_i;
    for (int at = 0; at < W_ENTRIES; at += W_BATCH) {
        struct buf body = {0};
        ck_assert_int_eq(buf_append(&body, "{\"entries\":[", 12), 0);
        int k = 0;
        while (k < W_BATCH) {
            struct model_member *m = &b->m[mix64(&rng) % (k % 4 ? W_MEMBERS : 20)];
            uint64_t o = mix64(&rng) % 10;
            enum board_op op = o < 5 ? BOARD_OP_SET : o < 8 ? BOARD_OP_BEST : BOARD_OP_INCR;
            int64_t v = op == BOARD_OP_INCR ? (int64_t)(mix64(&rng) % 5) - 2
                                            : values[mix64(&rng) % NVALUES];
            if (!model_apply(b, m, op, v, NULL))
                continue; /* an incr past the range: a refusal, tested below */
            char e[160];
            int len = snprintf(e, sizeof(e),
                               "%s{\"id\":\"%s\",\"score\":%" PRId64
                               ",\"op\":\"%s\",\"record\":{\"of\":\"%s\"}}",
                               k ? "," : "", m->id, v,
                               op == BOARD_OP_SET    ? "set"
                               : op == BOARD_OP_BEST ? "best"
                                                     : "incr",
                               m->id);
            ck_assert_int_eq(buf_append(&body, e, (size_t)len), 0);
            k++;
        }
        ck_assert_int_eq(buf_append(&body, "]}", 3), 0);
        snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
        ck_assert_int_eq(http_write(g_port, "POST", path, body.data, &r), 0);
        ck_assert_msg(r.status == 200 && (int)json_num(r.json, "applied") == W_BATCH,
                      "%s: batch at %d -> %ld %.300s", b->name, at, r.status, r.body);
        http_result_free(&r);
        buf_free(&body);
    }
    verify(b);

    /* one past the range, either sign, set or incr: 422 naming the range, nothing written */
    snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
    static const char *const over[] = {"{\"id\":\"x\",\"score\":9007199254740992}",
                                       "{\"id\":\"x\",\"score\":-9007199254740992}",
                                       "{\"id\":\"x\",\"score\":9007199254740991.5}"};
    for (size_t i = 0; i < 3; i++) {
        long long before = it_dbsize();
        ck_assert_int_eq(http_write(g_port, "POST", path, over[i], &r), 0);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r.json, "error");
        ck_assert_msg(r.status == 422 && e && strstr(json_str(e, "message"), "9007199254740991"),
                      "POST %s -> %ld %s", over[i], r.status, r.body);
        http_result_free(&r);
        ck_assert_int_eq(it_dbsize(), before);
    }
    /* an incr of the top member past the range is refused and changes nothing */
    const struct model_member *v[W_MEMBERS];
    model_sorted(b, v);
    char body[200];
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%s,\"op\":\"incr\"}", v[0]->id,
             v[0]->score >= 0 ? "9007199254740991" : "-9007199254740991");
    int fits = v[0]->score == 0;
    ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
    ck_assert_msg(fits ? r.status == 200 : r.status == 422, "POST %s -> %ld %s", body, r.status,
                  r.body);
    http_result_free(&r);
    if (fits)
        model_apply(b, (struct model_member *)v[0], BOARD_OP_INCR, 9007199254740991, NULL);

    /* a member delete, then a trim to the top 150 */
    model_sorted(b, v);
    struct model_member *gone = (struct model_member *)v[3];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", b->name, gone->id);
    ck_assert_int_eq(it_status("DELETE", path, NULL) / 100, 2);
    gone->present = 0;
    snprintf(path, sizeof(path), "/boards/%s/members?keep=150", b->name);
    ck_assert_int_eq(it_status("DELETE", path, NULL) / 100, 2);
    size_t n = model_sorted(b, v);
    for (size_t i = 150; i < n; i++)
        ((struct model_member *)v[i])->present = 0;
    verify(b);
    /* a removed member writes again: it arrives anew, after the members of its score */
    snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%" PRId64 "}", gone->id, v[0]->score);
    ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    model_apply(b, gone, BOARD_OP_SET, v[0]->score, NULL);
    verify(b);
    model_free(b);
}
END_TEST

/* A board's layout is a setting: packed stays the default with its range, a wide board refuses
 * a change back while it has members, and an empty one may change. */
START_TEST(test_wide_is_a_setting)
{
    struct http_result r;
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{}"), 201);
    ck_assert_int_eq(http_get(g_port, "/boards/wp", &r), 0);
    ck_assert_msg(strcmp(json_str(r.json, "score_layout"), "packed") == 0 &&
                      json_num(cJSON_GetObjectItemCaseSensitive(r.json, "score_range"), "max") ==
                          4294967295.0,
                  "a default board: %s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"sideways\"}"), 400);
    it_post_score("wp", "{\"id\":\"a\",\"score\":5}");
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"wide\"}"), 409);
    ck_assert_int_eq(it_status("DELETE", "/boards/wp/members/a", NULL), 204);
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"wide\"}"), 200);
    it_post_score("wp", "{\"id\":\"a\",\"score\":9007199254740991}");
    it_post_score("wp", "{\"id\":\"b\",\"score\":9007199254740991}");
    ck_assert_int_eq(http_get(g_port, "/boards/wp/members/b", &r), 0);
    ck_assert_msg(r.status == 200 && json_num(r.json, "rank") == 2 &&
                      strstr(r.body, "\"score\":9007199254740991"),
                  "%s", r.body);
    http_result_free(&r);
    /* delete and reset leave nothing of the board's ids behind */
    ck_assert_int_eq(it_status("POST", "/boards/wp/reset", NULL) / 100, 2);
    ck_assert_int_eq(http_get(g_port, "/boards/wp", &r), 0);
    ck_assert_int_eq((int64_t)json_num(r.json, "total"), 0);
    http_result_free(&r);
    it_post_score("wp", "{\"id\":\"c\",\"score\":-9007199254740991}");
    ck_assert_int_eq(it_status("DELETE", "/boards/wp", NULL) / 100, 2);
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

Suite *wide_suite(void)
{
    Suite *s = suite_create("wide");
    TCase *tc = tcase_create("wide_full_range_property");
    tcase_add_checked_fixture(tc, it_setup, it_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_wide_full_range_property, 0,
                        (int)(sizeof(boards) / sizeof(boards[0])));
    suite_add_tcase(s, tc);
    TCase *set = tcase_create("wide_is_a_setting");
    tcase_add_checked_fixture(set, it_setup, it_teardown);
    tcase_set_timeout(set, 30);
    tcase_add_test(set, test_wide_is_a_setting);
    suite_add_tcase(s, set);
    return s;
}
