/*
 * test_subscores.c -- sub-scores (a board's "subscores" setting) over HTTP against a real Redis,
 * checked against an independent model.
 *
 * The model knows nothing of the encoding: per member an integer score, its sub-scores and the
 * sequence number of the write that last changed them. Order: the score (desc: higher first;
 * asc: lower first), then each sub-score in column order by its own direction, then the board's
 * tiebreak (first: earlier sequence first; last: later first; id: id bytes). Equal (score,
 * sub-scores) tuples are ties for the competition and dense ranks. Every direction mix of 1 to 4
 * columns is written by set, best and incr: once on one connection (the sequence, hence
 * first/last order, known), and (every mix of 1 to 3 columns, two of 4) by several threads at a
 * time on a tiebreak id board (the order then follows from the values alone). Checked: pages, competition and dense pages, every member
 * read, around, lookup, the percentile and top reads, a cursor walk, a score range, export; the
 * literal refusals and a wrong count write nothing; the setting is a layout (409 while the board
 * has members).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "score_model.h"
#include "suites.h"

#define S_MEMBERS 80
#define S_ENTRIES 1200
#define S_BATCH 200
#define S_THREADS 4
#define S_THREAD_BATCHES 4
#define S_THREAD_BATCH 100
#define S_MAX MODEL_MAX

/* Scores and sub-scores: few distinct values (many ties), both ends of the range among them. */
static const int64_t values[] = {0, 1, 2, 3, -1, 5, S_MAX, -S_MAX, INT64_C(1) << 40};
#define NVALUES (sizeof(values) / sizeof(values[0]))
static const int64_t subvalues[] = {0, 1, 2, -1, -2, S_MAX, -S_MAX, 7};
#define NSUBVALUES (sizeof(subvalues) / sizeof(subvalues[0]))

/* Every read of the board equals the model. */
static void verify(const struct model_board *b)
{
    const struct model_member *v[S_MEMBERS];
    size_t n = model_sorted(b, v);
    char path[512];
    struct http_result r;
    int64_t comp[S_MEMBERS], dense[S_MEMBERS];
    model_ranks(b, v, n, comp, dense);
    static const char *const kinds[] = {"ordinal", "competition", "dense"};
    const int64_t *const want_ranks[] = {NULL, comp, dense};
    for (int t = 0; t < 3; t++)
        for (size_t from = 0; from < n + 1; from += 30) {
            snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=30&rank=%s", b->name,
                     from / 30 + 1, kinds[t]);
            cJSON *j = model_get(g_port, path, &r);
            ck_assert_int_eq((int64_t)json_num(j, "total"), (int64_t)n);
            model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                               n - from < 30 ? n - from : 30, want_ranks[t]);
            http_result_free(&r);
        }
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/boards/%s/members/%s?rank=%s", b->name, v[i]->id,
                 kinds[i % 3]);
        cJSON *j = model_get(g_port, path, &r);
        int64_t want = i % 3 == 0 ? (int64_t)i + 1 : i % 3 == 1 ? comp[i] : dense[i];
        ck_assert_msg((int64_t)json_num(j, "rank") == want &&
                          json_num(j, "score") == (double)v[i]->score &&
                          model_subs_equal(b, j, v[i]),
                      "%s: want rank %" PRId64 " score %" PRId64 " [%" PRId64 ",%" PRId64
                      ",%" PRId64 "], got %s",
                      path, want, v[i]->score, v[i]->sub[0], v[i]->sub[1], v[i]->sub[2], r.body);
        http_result_free(&r);
        if (i % 17 == 0)
            model_expect_around(g_port, b, v, n, i);
    }
    /* lookup of three members, in rank order */
    if (n >= 3) {
        char body[200];
        snprintf(body, sizeof(body), "{\"ids\":[\"%s\",\"%s\",\"%s\"]}", v[n - 1]->id, v[0]->id,
                 v[n / 2]->id);
        snprintf(path, sizeof(path), "/boards/%s/lookup", b->name);
        ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
        ck_assert_msg(r.status == 200, "lookup -> %ld %s", r.status, r.body);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
        const struct model_member *want[3] = {v[0], v[n / 2], v[n - 1]};
        int64_t ranks[3] = {1, (int64_t)n / 2 + 1, (int64_t)n};
        const struct model_member *wv[3] = {want[0], want[1], want[2]};
        for (int k = 0; k < 3; k++) {
            const cJSON *it = cJSON_GetArrayItem(items, k);
            ck_assert_msg(it && strcmp(json_str(it, "id"), wv[k]->id) == 0 &&
                              (int64_t)json_num(it, "rank") == ranks[k] &&
                              model_subs_equal(b, it, wv[k]),
                          "lookup item %d: %s", k, r.body);
        }
        http_result_free(&r);
    }
    /* a page with a member from further down (top N plus me) */
    if (n > 0) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=5&with=%s", b->name,
                 v[n - 1]->id);
        cJSON *j = model_get(g_port, path, &r);
        model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, 0,
                           n < 5 ? n : 5, NULL);
        const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "with"), 0);
        ck_assert_msg(w && strcmp(json_str(w, "id"), v[n - 1]->id) == 0 &&
                          (size_t)json_num(w, "rank") == n && model_subs_equal(b, w, v[n - 1]),
                      "%s: %s", path, r.body);
        http_result_free(&r);
    }
    /* the member at the 50th percentile, and the top 10 percent */
    if (n > 0) {
        snprintf(path, sizeof(path), "/boards/%s/percentile?p=50", b->name);
        cJSON *j = model_get(g_port, path, &r);
        size_t at50 = (n + 1) / 2; /* max(1, ceil(n * 50 / 100)) */
        ck_assert_msg((size_t)json_num(j, "rank") == at50 &&
                          strcmp(json_str(j, "id"), v[at50 - 1]->id) == 0 &&
                          model_subs_equal(b, j, v[at50 - 1]),
                      "%s: want %s at %zu, got %s", path, v[at50 - 1]->id, at50, r.body);
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/%s/top?percent=10", b->name);
        j = model_get(g_port, path, &r);
        size_t top = (n + 9) / 10;
        model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, 0, top, NULL);
        http_result_free(&r);
    }
    /* a cursor walk: next from page 1 to the end */
    model_expect_cursor_walk(g_port, b, v, n, 7);
    /* a score range on the primary score: [0, 3] */
    model_expect_range(g_port, b, v, n, 0, 3);
    /* export: NDJSON in rank order, with the sub-scores */
    model_expect_export(g_port, b, v, n);
}

static const char *op_name(enum board_op op)
{
    return op == BOARD_OP_SET ? "set" : op == BOARD_OP_BEST ? "best" : "incr";
}

/* One batch of `count` random entries on members[i] with i % stride == lane, applied to the
 * model as they are chosen; POSTed as one request (all of it applied). */
static void write_batch(struct model_board *b, uint64_t *rng, int count, int lane, int stride)
{
    struct buf body = {0};
    ck_assert_int_eq(buf_append(&body, "{\"entries\":[", 12), 0);
    int k = 0;
    while (k < count) {
        int pick = (int)(mix64(rng) % (k % 4 ? S_MEMBERS / stride : 6));
        struct model_member *m = &b->m[pick * stride + lane];
        uint64_t o = mix64(rng) % 10;
        enum board_op op = o < 4 ? BOARD_OP_SET : o < 7 ? BOARD_OP_BEST : BOARD_OP_INCR;
        int incr = op == BOARD_OP_INCR;
        int64_t v = incr ? (int64_t)(mix64(rng) % 3) - 1 : values[mix64(rng) % NVALUES];
        int64_t u[MODEL_COLS] = {0};
        char subs[200] = "";
        size_t sl = 0;
        for (int c = 0; c < b->nsub; c++) {
            u[c] = incr ? (int64_t)(mix64(rng) % 3) - 1 : subvalues[mix64(rng) % NSUBVALUES];
            sl += (size_t)snprintf(subs + sl, sizeof(subs) - sl, "%s%" PRId64, c ? "," : "", u[c]);
        }
        if (!model_apply(b, m, op, v, u))
            continue; /* past the range: refusals are tested on their own */
        char e[400];
        int len = snprintf(e, sizeof(e),
                           "%s{\"id\":\"%s\",\"score\":%" PRId64
                           ",\"subscores\":[%s],\"op\":\"%s\",\"record\":{\"of\":\"%s\"}}",
                           k ? "," : "", m->id, v, subs, op_name(op), m->id);
        ck_assert_int_eq(buf_append(&body, e, (size_t)len), 0);
        k++;
    }
    ck_assert_int_eq(buf_append(&body, "]}", 3), 0);
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "POST", path, body.data, &r), 0);
    ck_assert_msg(r.status == 200 && (int)json_num(r.json, "applied") == count, "%s: %ld %.300s",
                  b->name, r.status, r.body);
    http_result_free(&r);
    buf_free(&body);
}

/* A board of direction mix `mask` over `nsub` columns (bit c set: column c asc). */
static void board_make(struct model_board *b, const char *tag, int nsub, int mask,
                       enum score_order order, enum score_tiebreak tb)
{
    b->nsub = nsub;
    b->order = order;
    b->tiebreak = tb;
    snprintf(b->name, sizeof(b->name), "s%s%d-%d", tag, nsub, mask);
    char settings[300], dirs[100] = "";
    size_t dl = 0;
    for (int c = 0; c < nsub; c++) {
        b->asc[c] = (mask >> c) & 1;
        dl += (size_t)snprintf(dirs + dl, sizeof(dirs) - dl, "%s\"%s\"", c ? "," : "",
                               b->asc[c] ? "asc" : "desc");
    }
    snprintf(settings, sizeof(settings),
             "{\"subscores\":[%s],\"order\":\"%s\",\"tiebreak\":\"%s\",\"page_ttl_ms\":0}", dirs,
             score_order_name(order), score_tiebreak_name(tb));
    model_init(b, S_MEMBERS);
    char path[100];
    snprintf(path, sizeof(path), "/boards/%s", b->name);
    ck_assert_int_eq(it_status("PUT", path, settings), 201);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    const cJSON *got = cJSON_GetObjectItemCaseSensitive(r.json, "subscores");
    ck_assert_msg(cJSON_IsArray(got) && cJSON_GetArraySize(got) == nsub &&
                      strcmp(json_str(r.json, "score_layout"), "wide") == 0,
                  "GET %s: %s", path, r.body);
    http_result_free(&r);
}

/* The direction mixes: index -> (columns, mask): 1 column 2 mixes, 2: 4, 3: 8, 4: 16. The
 * concurrent writers take every mix of 1 to 3 columns and two of 4 (alternating directions). */
#define S_MIXES 30
#define S_MIXES_CONCURRENT 16
static void mix_of(int i, int *nsub, int *mask)
{
    *nsub = i < 2 ? 1 : i < 6 ? 2 : i < 14 ? 3 : 4;
    *mask = i < 2 ? i : i < 6 ? i - 2 : i < 14 ? i - 6 : i - 14;
}
static int mix_concurrent(int i)
{
    return i < 14 ? i : i == 14 ? 14 + 5 : 14 + 10;
}

static struct model_board g_boards[2];

/* One connection, batches of random set/best/incr: the model's sequence is the server's, so
 * first/last order is exact too. */
START_TEST(test_subscores_model)
{
    int nsub, mask;
    mix_of(_i, &nsub, &mask);
    static const enum score_tiebreak ties[] = {SCORE_TIEBREAK_FIRST, SCORE_TIEBREAK_LAST,
                                               SCORE_TIEBREAK_ID};
    struct model_board *b = &g_boards[0];
    board_make(b, "q", nsub, mask, _i % 2 ? SCORE_ORDER_ASC : SCORE_ORDER_DESC, ties[_i % 3]);
    uint64_t rng = UINT64_C(0x5ab5c0de) + (uint64_t)_i;
    for (int at = 0; at < S_ENTRIES; at += S_BATCH)
        write_batch(b, &rng, S_BATCH, 0, 1);
    verify(b);
    model_free(b);
}
END_TEST

struct writer {
    pthread_t t;
    struct model_board *b;
    int lane;
    uint64_t rng;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < S_THREAD_BATCHES; i++)
        write_batch(w->b, &w->rng, S_THREAD_BATCH, w->lane, S_THREADS);
    return NULL;
}

/* S_THREADS writers at once on their own connections, each on its own members, every op; the
 * board's tiebreak is id, so the order follows from the values the model holds. */
START_TEST(test_subscores_concurrent)
{
    int nsub, mask;
    mix_of(mix_concurrent(_i), &nsub, &mask);
    struct model_board *b = &g_boards[1];
    board_make(b, "c", nsub, mask, _i % 2 ? SCORE_ORDER_DESC : SCORE_ORDER_ASC, SCORE_TIEBREAK_ID);
    struct writer w[S_THREADS];
    for (int i = 0; i < S_THREADS; i++) {
        w[i] = (struct writer){
            .b = b, .lane = i, .rng = UINT64_C(0xc0c0) * (uint64_t)(i + 1) + (uint64_t)_i};
        ck_assert_int_eq(pthread_create(&w[i].t, NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < S_THREADS; i++)
        pthread_join(w[i].t, NULL);
    verify(b);
    model_free(b);
}
END_TEST

/* POST one body; its status, and nothing written when it is refused. */
static long post_nothing_written(const char *board, const char *body)
{
    char path[100];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    long long before = it_dbsize();
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
    long s = r.status;
    if (s != 200) {
        ck_assert_msg(strstr(r.body, "subscores"), "%s -> %ld %s: no word of subscores", body, s,
                      r.body);
        ck_assert_int_eq(it_dbsize(), before);
    }
    http_result_free(&r);
    return s;
}

/* The setting and the literals: what is refused writes nothing, and says why. */
START_TEST(test_subscores_refusals)
{
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[\"desc\",\"up\"]}"), 400);
    ck_assert_int_eq(it_status("PUT", "/boards/sr",
                               "{\"subscores\":[\"desc\",\"asc\",\"asc\",\"asc\",\"asc\"]}"),
                     400);
    ck_assert_int_eq(
        it_status("PUT", "/boards/sr", "{\"subscores\":[\"desc\"],\"score_layout\":\"packed\"}"),
        400);
    ck_assert_int_eq(it_dbsize(), 0);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[\"desc\",\"asc\"]}"), 201);
    /* a first write creates nothing else when refused: the board's settings are the only key */
    static const char *const bad[] = {
        "{\"id\":\"a\",\"score\":1}",                                     /* none */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1]}",                   /* too few */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2,3]}",               /* too many */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2.5]}",               /* a fraction */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2.0]}",               /* a fraction's form */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1e3,2]}",               /* an exponent */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1,9007199254740992]}",  /* past 2^53 - 1 */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[-9007199254740992,1]}", /* below */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[1,\"2\"]}",             /* a string */
        "{\"id\":\"a\",\"score\":1,\"subscores\":[]}",                    /* empty */
        "{\"id\":\"a\",\"score\":1,\"subscores\":{\"a\":1}}",             /* not an array */
        ("{\"entries\":[{\"id\":\"b\",\"score\":1,\"subscores\":[1,2]},"
         "{\"id\":\"a\",\"score\":1,\"subscores\":[1]}]}"), /* one of a batch */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(post_nothing_written("sr", bad[i]) == 400, "%s was not refused", bad[i]);
    /* the extremes are taken, exactly */
    ck_assert_int_eq(
        post_nothing_written(
            "sr", "{\"id\":\"a\",\"score\":1,\"subscores\":[9007199254740991,-9007199254740991]}"),
        200);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/boards/sr/members/a", &r), 0);
    ck_assert_msg(strstr(r.body, "\"subscores\":[9007199254740991,-9007199254740991]"), "%s",
                  r.body);
    http_result_free(&r);
    /* an incr past the range is refused whole: nothing of it is written */
    ck_assert_int_eq(post_nothing_written("sr", "{\"id\":\"a\",\"score\":1,\"op\":\"incr\","
                                                "\"subscores\":[1,0]}"),
                     422);
    ck_assert_int_eq(http_get(g_port, "/boards/sr/members/a", &r), 0);
    ck_assert_msg(strstr(r.body, "\"score\":1,\"subscores\":[9007199254740991,-9007199254740991]"),
                  "%s", r.body);
    http_result_free(&r);
    /* a board without sub-scores refuses them */
    ck_assert_int_eq(it_status("PUT", "/boards/plain", "{}"), 201);
    ck_assert_int_eq(
        post_nothing_written("plain", "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2]}"), 400);
    /* a layout setting: changed only while the board is empty */
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[\"asc\",\"asc\"]}"), 409);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"page_size\":10}"), 200);
    ck_assert_int_eq(http_get(g_port, "/boards/sr", &r), 0);
    ck_assert_msg(strstr(r.body, "\"subscores\":[\"desc\",\"asc\"]"), "%s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_status("DELETE", "/boards/sr/members/a", NULL), 204);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[\"asc\"]}"), 200);
    ck_assert_int_eq(post_nothing_written("sr", "{\"id\":\"a\",\"score\":1,\"subscores\":[4]}"),
                     200);
    ck_assert_int_eq(it_status("DELETE", "/boards/sr/members/a", NULL), 204);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[]}"), 200);
    ck_assert_int_eq(http_get(g_port, "/boards/sr", &r), 0);
    ck_assert_msg(!strstr(r.body, "subscores"), "%s", r.body);
    http_result_free(&r);
    /* on an empty board, `packed` alone removes them as [] does (docs/api.md); not while it has
     * members */
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"subscores\":[\"desc\"]}"), 200);
    ck_assert_int_eq(post_nothing_written("sr", "{\"id\":\"a\",\"score\":1,\"subscores\":[4]}"),
                     200);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"score_layout\":\"packed\"}"), 409);
    ck_assert_int_eq(it_status("DELETE", "/boards/sr/members/a", NULL), 204);
    ck_assert_int_eq(it_status("PUT", "/boards/sr", "{\"score_layout\":\"packed\"}"), 200);
    ck_assert_int_eq(http_get(g_port, "/boards/sr", &r), 0);
    ck_assert_msg(!strstr(r.body, "subscores") && strstr(r.body, "\"score_layout\":\"packed\""),
                  "%s", r.body);
    http_result_free(&r);
}
END_TEST

Suite *subscores_suite(void)
{
    Suite *s = suite_create("subscores");
    TCase *tc = tcase_create("subscores_model");
    tcase_add_checked_fixture(tc, it_setup, it_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_subscores_model, 0, S_MIXES);
    suite_add_tcase(s, tc);
    TCase *cc = tcase_create("subscores_concurrent");
    tcase_add_checked_fixture(cc, it_setup, it_teardown);
    tcase_set_timeout(cc, 120);
    tcase_add_loop_test(cc, test_subscores_concurrent, 0, S_MIXES_CONCURRENT);
    suite_add_tcase(s, cc);
    TCase *rf = tcase_create("subscores_refusals");
    tcase_add_checked_fixture(rf, it_setup, it_teardown);
    tcase_set_timeout(rf, 30);
    tcase_add_test(rf, test_subscores_refusals);
    suite_add_tcase(s, rf);
    subscores_replies_add(s);
    return s;
}
