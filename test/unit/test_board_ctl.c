/* test_board_ctl.c -- the model's control calls without Redis (board_ctl.c, through board_int.h):
 * each call as its _prepare builds it (PUT's create_board.lua and put_board.lua, with the sets a
 * change of retention names; delete_board.lua, reset_board.lua, trim.lua by rank and by score,
 * delete_member.lua, the registry's SSCAN) and each reply as its _take reads it, over replies
 * built from RESP bytes with the store's reply functions, on a model with a fixed clock over a
 * store that never dials (one Redis and a cluster). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_int.h"
#include "model_fixture.h"
#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

#define NOW_MS FIXTURE_NOW_MS
static const struct period_tz utc = {0}; /* the fixed offset 0 the tests' boards use */

#define reply_of fixture_reply

/* The key of board b's set (dense: distinct scores) of the daily period d days before NOW_MS. */
/* dense 1: the set's distinct scores, 2: its ids hash (a wide board's) */
static void daily_key(int d, int dense, char out[KEY_MAX])
{
    char id[PERIOD_ID_MAX];
    period_id(PERIOD_DAILY, &utc, period_start(PERIOD_DAILY, &utc, NOW_MS, -d), id);
    snprintf(out, KEY_MAX, "P:{b}:%s:%s",
             dense == 3   ? "upd"
             : dense == 2 ? "ids"
             : dense      ? "dense"
                          : "z",
             id);
}

/* ---- PUT */

START_TEST(test_put_create_prepare)
{
    struct board_settings_patch p = {.has_page_size = 1, .has_order = 1};
    p.value.page_size = 50;
    p.value.layout.order = SCORE_ORDER_ASC;
    struct board_put_call c = {0};
    ck_assert_int_eq(board_put_create_prepare(&g_m, "b", &p, &c), 0);
    ck_assert_int_eq(c.create, 1);
    ck_assert_int_eq(c.nkeys, 3);
    ck_assert_int_eq(c.nargs, 29);
    ck_assert_str_eq(c.argv[0], "P:{b}:meta");
    ck_assert_str_eq(c.argv[1], "P:boards");
    ck_assert_str_eq(c.argv[2], "P:{b}:z");
    ck_assert_str_eq(c.argv[3], "b");
    ck_assert_str_eq(c.argv[4], "order");
    ck_assert_str_eq(c.argv[5], "asc");
    ck_assert_str_eq(c.argv[6], "tiebreak");
    ck_assert_str_eq(c.argv[7], score_tiebreak_name(SCORE_TIEBREAK_FIRST)); /* the default */
    ck_assert_str_eq(c.argv[14], "page_size");
    ck_assert_str_eq(c.argv[15], "50");
    ck_assert_str_eq(c.argv[17], "1000"); /* page_ttl_ms: the default */
    ck_assert_str_eq(c.argv[22], "score_layout");
    ck_assert_str_eq(c.argv[23], "packed"); /* the default */
    ck_assert_str_eq(c.argv[24], "score_format");
    ck_assert_str_eq(c.argv[25], "integer"); /* the default */
    ck_assert_str_eq(c.argv[26], "track_updated_at");
    ck_assert_str_eq(c.argv[27], "0"); /* the default */
    ck_assert_str_eq(c.argv[28], "gen");
    ck_assert_str_eq(c.argv[30], "life");
    ck_assert_str_eq(c.argv[29], c.argv[31]); /* the idempotency records live as this creation */
    board_put_call_free(&c);
    board_put_call_free(&c);

    /* a daily board: the new settings write to today's set */
    struct board_settings_patch d = {.has_period = 1};
    d.value.period = PERIOD_DAILY;
    d.value.retain = 1;
    ck_assert_int_eq(board_put_create_prepare(&g_m, "b", &d, &c), 0);
    char want[KEY_MAX];
    daily_key(0, 0, want);
    ck_assert_str_eq(c.argv[2], want);
    ck_assert_str_eq(c.argv[11], "daily");
    board_put_call_free(&c);
}
END_TEST

START_TEST(test_put_update_prepare)
{
    struct board_settings cur;
    board_settings_default(&cur);
    struct board_settings_patch p = {.has_page_ttl = 1};
    p.value.page_ttl_ms = 0;
    struct board_put_call c = {0};
    ck_assert_int_eq(board_put_update_prepare(&g_m, "b", &cur, &p, &c), 0);
    ck_assert_int_eq(c.create, 0);
    ck_assert_int_eq(c.nkeys, 3);
    ck_assert_str_eq(c.argv[0], "P:{b}:meta");
    ck_assert_str_eq(c.argv[1], "P:{b}:z");
    ck_assert_str_eq(c.argv[2], "P:{b}:periods");
    ck_assert_int_eq(c.nargs, 3 + 8 + 7);
    ck_assert_str_eq(c.argv[3], "none");
    ck_assert_str_eq(c.argv[4], "0");
    ck_assert_str_eq(c.argv[5], "1");
    for (int i = 0; i < 8; i++) /* only page_ttl_ms (the seventh) is set */
        ck_assert_str_eq(c.argv[6 + i], i == 6 ? "0" : "");
    ck_assert_str_eq(c.argv[15], "0"); /* keep no past period */
    ck_assert_str_eq(c.argv[16], "0");
    ck_assert_str_eq(c.argv[17], ""); /* max_members unchanged */
    ck_assert_str_eq(c.argv[18], ""); /* score_layout unchanged */
    ck_assert_str_eq(c.argv[19], ""); /* score_format unchanged */
    ck_assert_str_eq(c.argv[20], ""); /* track_updated_at unchanged */
    board_put_call_free(&c);

    /* a daily board kept 3 days, cut to 1: the current set, the 3 past ones, and the distinct
     * scores, ids and updated_at hashes of the 2 no longer readable */
    cur.period = PERIOD_DAILY;
    cur.retain = 3;
    struct board_settings_patch r = {.has_retain = 1, .has_max_members = 1, .has_score_format = 1};
    r.value.retain = 1;
    r.value.max_members = 10;
    r.value.score_format = SCORE_FORMAT_DURATION_MS;
    ck_assert_int_eq(board_put_update_prepare(&g_m, "b", &cur, &r, &c), 0);
    ck_assert_int_eq(c.nkeys, 3 + 3 + 6);
    char want[KEY_MAX];
    daily_key(0, 0, want);
    ck_assert_str_eq(c.argv[1], want);
    daily_key(1, 0, want);
    ck_assert_str_eq(c.argv[3], want);
    daily_key(3, 0, want);
    ck_assert_str_eq(c.argv[5], want);
    for (int d = 2; d <= 3; d++)
        for (int what = 1; what <= 3; what++) {
            daily_key(d, what, want);
            ck_assert_str_eq(c.argv[6 + 3 * (d - 2) + what - 1], want);
        }
    ck_assert_str_eq(c.argv[12], "daily");
    ck_assert_str_eq(c.argv[14], "3");
    ck_assert_str_eq(c.argv[22], "1"); /* the new retain */
    ck_assert_str_eq(c.argv[24], "1"); /* keep one past period readable */
    char cut[32];
    snprintf(cut, sizeof(cut), "%" PRId64, period_start(PERIOD_DAILY, &utc, NOW_MS, -1));
    ck_assert_str_eq(c.argv[25], cut);
    ck_assert_str_eq(c.argv[26], "10");
    ck_assert_str_eq(c.argv[27], ""); /* score_layout unchanged */
    ck_assert_str_eq(c.argv[28], "duration_ms");
    ck_assert_str_eq(c.argv[29], ""); /* track_updated_at unchanged */
    board_put_call_free(&c);
}
END_TEST

#define SETTINGS "*2\r\n$9\r\npage_size\r\n$2\r\n30\r\n"

START_TEST(test_put_take)
{
    struct board_info out;
    const char *field = NULL;
    struct store_reply *r = reply_of("*1\r\n:0\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 1, r, &field, &out), PUT_AGAIN);
    store_reply_free(r);
    r = reply_of("*3\r\n:1\r\n" SETTINGS ":5\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 1, r, &field, &out), 0);
    ck_assert_int_eq(out.settings.page_size, 30);
    ck_assert_int_eq(out.total, 5);
    ck_assert_str_eq(out.period, "");
    store_reply_free(r);
    r = reply_of("-OOM no\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 1, r, &field, &out), -EIO);
    ck_assert_int_eq(board_put_take(&g_m, "b", 0, r, &field, &out), -EIO);
    store_reply_free(r);

    r = reply_of("*1\r\n$6\r\nabsent\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 0, r, &field, &out), PUT_AGAIN);
    store_reply_free(r);
    r = reply_of("*2\r\n:-1\r\n$6\r\nperiod\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 0, r, &field, &out), -EEXIST);
    ck_assert_str_eq(field, "period");
    store_reply_free(r);
    r = reply_of("*2\r\n:-1\r\n$5\r\nother\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 0, r, &field, &out), -EEXIST);
    ck_assert_str_eq(field, "order");
    store_reply_free(r);
    r = reply_of("*3\r\n:1\r\n" SETTINGS ":8\r\n");
    ck_assert_int_eq(board_put_take(&g_m, "b", 0, r, &field, &out), 0);
    ck_assert_int_eq(out.total, 8);
    store_reply_free(r);
}
END_TEST

/* ---- delete, reset */

START_TEST(test_delete)
{
    struct board_settings set;
    board_settings_default(&set);
    struct board_delete_call c = {0};
    ck_assert_int_eq(board_delete_prepare(&g_m, "b", &set, &c), 0);
    ck_assert_str_eq(c.argv[0], "P:{b}:meta");
    ck_assert_str_eq(c.argv[1], "P:boards");
    ck_assert_str_eq(c.argv[2], "P:{b}:periods");
    ck_assert_str_eq(c.argv[c.nkeys], "b");
    int plain = c.nkeys;
    board_delete_call_free(&c);

    /* a daily board kept 2 days: every readable period's set and distinct scores as well */
    set.period = PERIOD_DAILY;
    set.retain = 2;
    ck_assert_int_eq(board_delete_prepare(&g_m, "b", &set, &c), 0);
    ck_assert_int_gt(c.nkeys, plain);
    char want[KEY_MAX];
    for (int d = 0; d < 2; d++)
        for (int dense = 0; dense < 3; dense++) {
            daily_key(d, dense, want);
            int seen = 0;
            for (int i = 0; i < c.nkeys; i++)
                seen |= strcmp(c.argv[i], want) == 0;
            ck_assert_msg(seen, "%s not deleted", want);
        }
    board_delete_call_free(&c);

    struct store_reply *r = reply_of(":1\r\n");
    ck_assert_int_eq(board_delete_take(&g_m, "b", r), 0);
    store_reply_free(r);
    r = reply_of(":0\r\n");
    ck_assert_int_eq(board_delete_take(&g_m, "b", r), -ENOENT);
    ck_assert_int_eq(board_one_or_enoent(r), -ENOENT);
    store_reply_free(r);
    r = reply_of("-ERR x\r\n");
    ck_assert_int_eq(board_delete_take(&g_m, "b", r), -EIO);
    ck_assert_int_eq(board_one_or_enoent(r), -EIO);
    store_reply_free(r);
}
END_TEST

START_TEST(test_reset_prepare)
{
    struct board_where w;
    ck_assert_int_eq(board_where_cached(&g_m, "b", NULL, &w), 0);
    struct board_reset_call c;
    board_reset_prepare(&g_m, "b", &w, &c);
    ck_assert_str_eq(c.argv[0], "P:{b}:meta");
    ck_assert_str_eq(c.argv[1], "P:{b}:z");
    ck_assert_str_eq(c.argv[2], "P:{b}:dense");
    ck_assert_str_eq(c.argv[3], "P:{b}:ids");
    ck_assert_int_gt(strlen(c.argv[4]), 0); /* a new generation */
    struct store_reply *r = reply_of(":1\r\n");
    ck_assert_int_eq(board_one_or_enoent(r), 0);
    store_reply_free(r);
}
END_TEST

/* ---- trim, member delete, records */

START_TEST(test_trim)
{
    struct board_settings set;
    board_settings_default(&set);
    struct board_where w;
    ck_assert_int_eq(board_where_cached(&g_m, "b", NULL, &w), 0);
    struct board_trim_call c;
    board_trim_prepare(&g_m, "b", &set, &w, 10, 0, &c);
    ck_assert_str_eq(c.argv[0], "P:{b}:z");
    ck_assert_str_eq(c.argv[1], "P:{b}:dense");
    ck_assert_str_eq(c.argv[2], "P:{b}:meta");
    ck_assert_str_eq(c.argv[3], "P:{b}:ids");
    ck_assert_str_eq(c.argv[4], "P:{b}:upd");
    ck_assert_str_eq(c.argv[5], "rank");
    ck_assert_str_eq(c.argv[6], "10");
    char chunk[16];
    snprintf(chunk, sizeof(chunk), "%d", TRIM_CHUNK);
    ck_assert_str_eq(c.argv[7], chunk);
    /* by score: the first stored value of a worse score, (key + 1) * 2^T */
    board_trim_prepare(&g_m, "b", &set, &w, -1, 5, &c);
    ck_assert_str_eq(c.argv[5], "score");
    char from[32];
    snprintf(from, sizeof(from), "%" PRId64,
             INT64_C(6) * (INT64_C(1) << score_codec_tie_bits(&set.layout)));
    ck_assert_str_eq(c.argv[6], from);

    struct store_reply *r = reply_of(":250\r\n");
    ck_assert_int_eq(board_trim_take(r), 250);
    store_reply_free(r);
    r = reply_of("$-1\r\n");
    ck_assert_int_eq(board_trim_take(r), 0);
    store_reply_free(r);
}
END_TEST

START_TEST(test_member_delete)
{
    struct board_where w;
    ck_assert_int_eq(board_where_cached(&g_m, "b", NULL, &w), 0);
    struct board_member_delete_call c;
    board_member_delete_prepare(&g_m, "b", &w, "x\0y", 3, &c);
    ck_assert_str_eq(c.argv[0], "P:{b}:meta");
    ck_assert_uint_eq(c.lens[0], strlen("P:{b}:meta"));
    ck_assert_uint_eq(c.lens[1], strlen("P:{b}:z"));
    ck_assert_uint_eq(c.lens[3], strlen("P:{b}:ids"));
    ck_assert_uint_eq(c.lens[4], strlen("P:{b}:upd"));
    ck_assert_uint_eq(c.lens[5], 3);
    static const struct {
        const char *resp;
        int rc;
    } t[] = {{":1\r\n", 0}, {":0\r\n", -ENODATA}, {":-1\r\n", -ENOENT}, {"-ERR x\r\n", -EIO}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct store_reply *r = reply_of(t[i].resp);
        ck_assert_int_eq(board_member_delete_take(r), t[i].rc);
        store_reply_free(r);
    }
}
END_TEST

START_TEST(test_record_take)
{
    char *json = NULL;
    struct store_reply *r = reply_of("$7\r\n{\"a\":1}\r\n");
    ck_assert_int_eq(board_record_take(r, &json), 0);
    ck_assert_str_eq(json, "{\"a\":1}");
    free(json);
    store_reply_free(r);
    r = reply_of("$-1\r\n");
    ck_assert_int_eq(board_record_take(r, &json), -ENODATA);
    store_reply_free(r);
}
END_TEST

START_TEST(test_info_take)
{
    struct board_where w = {.period = "2024-01-10"};
    struct board_info out;
    struct store_reply *r = reply_of(":42\r\n");
    board_info_take(r, &w, &out);
    ck_assert_int_eq(out.total, 42);
    ck_assert_str_eq(out.period, "2024-01-10");
    store_reply_free(r);
    r = reply_of("-ERR x\r\n");
    board_info_take(r, &w, &out);
    ck_assert_int_eq(out.total, 0);
    store_reply_free(r);
}
END_TEST

/* ---- the board list */

START_TEST(test_list)
{
    struct board_list *l = calloc(1, sizeof(*l));
    ck_assert_ptr_nonnull(l);
    size_t cap = 0;
    uint64_t cursor = 0;
    struct store_reply *r = reply_of("*2\r\n$2\r\n17\r\n*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nb\r\n");
    ck_assert_int_eq(board_list_take(l, &cap, r, &cursor), 0);
    store_reply_free(r);
    ck_assert_uint_eq(cursor, 17);
    ck_assert_uint_eq(l->n, 3);
    r = reply_of("*2\r\n$1\r\n0\r\n*1\r\n$1\r\nc\r\n");
    ck_assert_int_eq(board_list_take(l, &cap, r, &cursor), 0);
    store_reply_free(r);
    ck_assert_uint_eq(cursor, 0);
    board_list_sort_unique(l); /* SSCAN may return a name twice */
    ck_assert_uint_eq(l->n, 3);
    ck_assert_str_eq(l->names[0], "a");
    ck_assert_str_eq(l->names[1], "b");
    ck_assert_str_eq(l->names[2], "c");
    r = reply_of("*1\r\n$1\r\n0\r\n");
    ck_assert_int_eq(board_list_take(l, &cap, r, &cursor), -EIO);
    store_reply_free(r);
    board_list_free(l);
    board_list_free(NULL);

    struct board_list empty = {0};
    board_list_sort_unique(&empty);
    ck_assert_uint_eq(empty.n, 0);

    struct board_keys k;
    board_make_keys(&g_m, NULL, &k);
    char cur[24], cnt[16];
    const char *argv[5];
    board_list_sscan(&k, 17, 100, cur, cnt, argv);
    ck_assert_str_eq(argv[0], "SSCAN");
    ck_assert_str_eq(argv[1], "P:boards");
    ck_assert_str_eq(argv[2], "17");
    ck_assert_str_eq(argv[4], "100");

    /* the set a listed board's total is counted in, from its HMGET of period, timezone, retain */
    char z[KEY_MAX], want[KEY_MAX];
    r = reply_of("*3\r\n$5\r\ndaily\r\n$1\r\n0\r\n$1\r\n1\r\n");
    board_list_where(&g_m, "b", r, z);
    store_reply_free(r);
    daily_key(0, 0, want);
    ck_assert_str_eq(z, want);
    r = reply_of("*3\r\n$-1\r\n$-1\r\n$-1\r\n");
    board_list_where(&g_m, "b", r, z);
    store_reply_free(r);
    ck_assert_str_eq(z, "P:{b}:z");
}
END_TEST

/* On a cluster the registry is in another slot: the scripts are given the settings again. */
START_TEST(test_put_create_cluster)
{
    struct board_settings_patch p = {0};
    struct board_put_call c = {0};
    ck_assert_int_eq(board_put_create_prepare(&g_m, "b", &p, &c), 0);
    ck_assert_str_eq(c.argv[1], "P:{b}:meta");
    board_put_call_free(&c);
    struct board_settings set;
    board_settings_default(&set);
    struct board_delete_call d = {0};
    ck_assert_int_eq(board_delete_prepare(&g_m, "b", &set, &d), 0);
    ck_assert_str_eq(d.argv[1], "P:{b}:meta");
    board_delete_call_free(&d);
}
END_TEST

Suite *board_ctl_suite(void)
{
    Suite *s = suite_create("board_ctl");
    TCase *tc = tcase_create("single");
    tcase_add_checked_fixture(tc, fixture_setup_single_fixed, fixture_teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_put_create_prepare);
    tcase_add_test(tc, test_put_update_prepare);
    tcase_add_test(tc, test_put_take);
    tcase_add_test(tc, test_delete);
    tcase_add_test(tc, test_reset_prepare);
    tcase_add_test(tc, test_trim);
    tcase_add_test(tc, test_member_delete);
    tcase_add_test(tc, test_record_take);
    tcase_add_test(tc, test_info_take);
    tcase_add_test(tc, test_list);
    suite_add_tcase(s, tc);
    TCase *cl = tcase_create("cluster");
    tcase_add_checked_fixture(cl, fixture_setup_cluster_fixed, fixture_teardown);
    tcase_set_timeout(cl, 10);
    tcase_add_test(cl, test_put_create_cluster);
    suite_add_tcase(s, cl);
    return s;
}
