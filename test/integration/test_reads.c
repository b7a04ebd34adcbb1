/*
 * test_reads.c -- issue 14's reads, over real HTTP against a real Redis, with exact values:
 *   1. rank types (ordinal, competition, dense) on pages, cached and live, with tie groups that
 *      span page edges; on members, around a member, around a score, top, the many-member reads
 *      and one member across boards;
 *   2. the distinct scores each set keeps (its side set, read directly from Redis) after
 *      increments, batches, removals, trims, resets, a period sweep and a lower retain: exactly
 *      the keys the set's members hold, never a stale one; a random walk of writes checked after
 *      every step against an independent reference;
 *   3. many members by id (percent-encoded ids, missing ones, duplicates, limits), around a score
 *      (judged exactly like write scores), percentiles and top percent at their edges, one member
 *      across boards (an absent board, an absent member, a periodic board).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board.h"
#include "cursor.h"
#include "score_codec.h"
#include "suites.h"

/* ---------------------------------------------------------------- helpers (the fake wall clock:
 * fixture.h) */

/* One refused request: method, path, body (may be NULL), status, code. */
struct refusal {
    const char *method, *path, *body;
    long status;
    const char *code;
};

static void expect_refusals(const struct refusal *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        it_expect_error(r[i].method, r[i].path, r[i].body, r[i].status, r[i].code);
}

/* prefix, then n items stem0,stem1,... (a list argument of n entries) into out. */
static void list_path(char *out, size_t len, const char *prefix, const char *stem, int n)
{
    snprintf(out, len, "%s", prefix);
    for (int i = 0; i < n; i++) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s%d", i ? "," : "", stem, i);
    }
}

static void write_json(const char *board, const char *json)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    cJSON_Delete(it_json("POST", path, json, 200));
}

static void put_board(const char *board, const char *json, long want)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s", board);
    cJSON_Delete(it_json("PUT", path, json, want));
}

static int is_null(const cJSON *o, const char *name)
{
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, name));
}

static const cJSON *items(const cJSON *doc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "items");
    ck_assert_msg(cJSON_IsArray(v), "no items");
    return v;
}

/* "id:rank id:rank ..." of a page-shaped body's items, into out. */
static void items_text(const cJSON *doc, char *out, size_t len)
{
    out[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach(it, items(doc))
    {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s:%d", at ? " " : "", json_str(it, "id"),
                 (int)json_num(it, "rank"));
    }
}

/* The items of GET path as "id:rank ...", compared with want. */
static void expect_items(const char *path, const char *want)
{
    cJSON *doc = it_get(path);
    char got[2048];
    items_text(doc, got, sizeof(got));
    ck_assert_msg(strcmp(got, want) == 0, "GET %s: %s; want %s", path, got, want);
    cJSON_Delete(doc);
}

/* ---------------------------------------------------------------- the side sets, directly */

static void zkey(char *out, size_t len, const char *what, const char *board, const char *period)
{
    snprintf(out, len, "%s:{%s}:%s%s%s", g_app->cfg.key_prefix, board, what, period ? ":" : "",
             period ? period : "");
}

static long long key_exists(const char *what, const char *board, const char *period)
{
    char k[256];
    zkey(k, sizeof(k), what, board, period);
    redisReply *r = redis_admin_cmd(g_admin, "EXISTS %s", k);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* The side set of board's set (period NULL: the board's) holds exactly the distinct keys of its
 * members (stored // 2^T, T = 21: these tests' boards break ties first or last), as text and
 * score, and nothing else; both keys absent when the set is empty. Returns how many keys. */
static long long dense_exact(const char *board, const char *period)
{
    char zk[256], dk[256];
    zkey(zk, sizeof(zk), "z", board, period);
    zkey(dk, sizeof(dk), "dense", board, period);
    redisReply *z = redis_admin_cmd(g_admin, "ZRANGE %s 0 -1 WITHSCORES", zk);
    redisReply *d = redis_admin_cmd(g_admin, "ZRANGE %s 0 -1 WITHSCORES", dk);
    long long want[4096];
    size_t nwant = 0;
    for (size_t i = 1; i < z->elements; i += 2) {
        long long stored = strtoll(z->element[i]->str, NULL, 10);
        long long key =
            stored >= 0 ? stored / SCORE_TIE_CAP : -((-stored + SCORE_TIE_CAP - 1) / SCORE_TIE_CAP);
        if (nwant == 0 || want[nwant - 1] != key) { /* ascending stored: keys ascend too */
            ck_assert(nwant < sizeof(want) / sizeof(want[0]));
            want[nwant++] = key;
        }
    }
    ck_assert_msg(d->elements == 2 * nwant, "%s holds %zu keys; %s has %zu distinct keys", dk,
                  d->elements / 2, zk, nwant);
    for (size_t i = 0; i < nwant; i++) {
        char text[32];
        snprintf(text, sizeof(text), "%lld", want[i]);
        ck_assert_msg(strcmp(d->element[2 * i]->str, text) == 0 &&
                          strtoll(d->element[2 * i + 1]->str, NULL, 10) == want[i],
                      "%s: key %zu is %s (score %s); want %s", dk, i, d->element[2 * i]->str,
                      d->element[2 * i + 1]->str, text);
    }
    freeReplyObject(z);
    freeReplyObject(d);
    ck_assert_int_eq(key_exists("dense", board, period), nwant > 0);
    return (long long)nwant;
}

/* ---------------------------------------------------------------- 1. rank types */

/* The example, desc: 100,50,50,30,10,8,8,8,1. */
static void write_example(const char *board)
{
    write_json(board, "{\"entries\":[{\"id\":\"a\",\"score\":100},{\"id\":\"b\",\"score\":50},"
                      "{\"id\":\"c\",\"score\":50},{\"id\":\"d\",\"score\":30},{\"id\":\"e\","
                      "\"score\":10},{\"id\":\"f\",\"score\":8},{\"id\":\"g\",\"score\":8},"
                      "{\"id\":\"h\",\"score\":8},{\"id\":\"i\",\"score\":1}]}");
}

/* Every page of `size` of board under rank type `rank`, joined: the ranks are global. */
static void expect_all_pages(const char *board, int size, const char *rank, const char *want)
{
    char all[2048] = "";
    for (int page = 1; page <= (9 + size - 1) / size; page++) {
        char path[200], got[512];
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%d&size=%d&rank=%s", board, page, size,
                 rank);
        cJSON *doc = it_get(path);
        items_text(doc, got, sizeof(got));
        cJSON_Delete(doc);
        size_t at = strlen(all);
        snprintf(all + at, sizeof(all) - at, "%s%s", at ? " " : "", got);
    }
    ck_assert_msg(strcmp(all, want) == 0, "%s, pages of %d, rank=%s: %s; want %s", board, size,
                  rank, all, want);
}

#define EX_ORDINAL "a:1 b:2 c:3 d:4 e:5 f:6 g:7 h:8 i:9"
#define EX_COMPETITION "a:1 b:2 c:2 d:4 e:5 f:6 g:6 h:6 i:9"
#define EX_DENSE "a:1 b:2 c:2 d:3 e:4 f:5 g:5 h:5 i:6"

START_TEST(test_rank_types_on_pages)
{
    /* a cached board and a live one (page_ttl_ms 0): both paths render the same ranks */
    put_board("ex", "{\"page_ttl_ms\":60000}", 201);
    put_board("live", "{\"page_ttl_ms\":0}", 201);
    write_example("ex");
    write_example("live");
    static const char *const boards[] = {"ex", "live"};
    for (int b = 0; b < 2; b++) {
        /* pages of 2: the 50,50 group spans pages 1-2, the 8,8,8 group pages 3-4; of 4 and 7:
         * other edges; of 100: one page */
        static const int sizes[] = {2, 4, 7, 100};
        for (int s = 0; s < 4; s++) {
            expect_all_pages(boards[b], sizes[s], "ordinal", EX_ORDINAL);
            expect_all_pages(boards[b], sizes[s], "competition", EX_COMPETITION);
            expect_all_pages(boards[b], sizes[s], "dense", EX_DENSE);
        }
    }
    /* the cached pages are kept apart by rank type: a hit of each, still its own ranks */
    for (int round = 0; round < 2; round++) {
        expect_items("/boards/ex/rank?page=2&size=4", "e:5 f:6 g:7 h:8");
        expect_items("/boards/ex/rank?page=2&size=4&rank=competition", "e:5 f:6 g:6 h:6");
        expect_items("/boards/ex/rank?page=2&size=4&rank=dense", "e:4 f:5 g:5 h:5");
        expect_items("/boards/ex/rank?page=2&size=4&rank=ordinal", "e:5 f:6 g:7 h:8");
    }
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/boards/ex/rank?page=2&size=4&rank=dense", &r), 0);
    ck_assert_msg(strstr(r.headers, "X-Cache: hit"), "the dense page was not cached: %s",
                  r.headers);
    http_result_free(&r);
    char key[256];
    redisReply *k = NULL;
    snprintf(key, sizeof(key), "%s:{ex}:page:*:4:2:dense", g_app->cfg.key_prefix);
    k = redis_admin_cmd(g_admin, "SCAN 0 MATCH %s COUNT 1000", key);
    ck_assert_msg(k->elements == 2 && k->element[1]->elements == 1,
                  "no cached page key with the rank type (%s)", key);
    freeReplyObject(k);
    /* GET /rank?board= takes the rank type too */
    expect_items("/rank?board=ex&size=3&page=3&rank=competition", "g:6 h:6 i:9");
    it_expect_error("GET", "/boards/ex/rank?rank=modified", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/ex/rank?rank=dense&rank=dense", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/ex/rank?rank=", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/nope/rank?rank=dense", NULL, 404, "board_not_found");
    ck_assert_int_eq(dense_exact("ex", NULL), 6);
}
END_TEST

START_TEST(test_rank_types_on_member_reads)
{
    put_board("ex", "{\"page_ttl_ms\":0}", 201);
    write_example("ex");
    /* a member: rank of the type asked; page and percentile from its position */
    cJSON *d = it_get("/boards/ex/members/h?rank=competition&size=4");
    ck_assert_int_eq((int)json_num(d, "rank"), 6);
    ck_assert_int_eq((int)json_num(d, "page"), 2);         /* position 8 */
    ck_assert_double_eq(json_num(d, "percentile"), 11.11); /* 100 * (9 - 8) / 9 */
    cJSON_Delete(d);
    d = it_get("/boards/ex/members/h?rank=dense");
    ck_assert_int_eq((int)json_num(d, "rank"), 5);
    cJSON_Delete(d);
    d = it_get("/boards/ex/members/h");
    ck_assert_int_eq((int)json_num(d, "rank"), 8);
    ck_assert_double_eq(json_num(d, "percentile"), 11.11);
    cJSON_Delete(d);
    d = it_get("/boards/ex/members/a");
    ck_assert_double_eq(json_num(d, "percentile"), 88.89); /* 800 / 9 = 88.888... */
    cJSON_Delete(d);
    d = it_get("/boards/ex/members/i");
    ck_assert_double_eq(json_num(d, "percentile"), 0);
    cJSON_Delete(d);
    /* around a member: global ranks in the window, the page of its first position */
    expect_items("/boards/ex/members/c/around?size=3&rank=competition", "b:2 c:2 d:4");
    expect_items("/boards/ex/members/g/around?size=4&rank=dense", "e:4 f:5 g:5 h:5");
    d = it_get("/boards/ex/members/g/around?size=4&rank=dense");
    ck_assert_int_eq((int)json_num(d, "page"), 2); /* first position 5 */
    cJSON_Delete(d);
    expect_items("/boards/ex/members/i/around?size=3&rank=dense", "g:5 h:5 i:6");
    /* around a score, top, many members, across boards */
    expect_items("/boards/ex/around?score=8&size=3&rank=competition", "e:5 f:6 g:6");
    expect_items("/boards/ex/top?percent=50&rank=dense", "a:1 b:2 c:2 d:3 e:4");
    expect_items("/boards/ex/members?ids=h,b,f,c&rank=competition", "b:2 c:2 f:6 h:6");
    expect_items("/boards/ex/members?ids=h,b,f,c&rank=dense", "b:2 c:2 f:5 h:5");
    expect_items("/boards/ex/members?ids=h,b,f,c", "b:2 c:3 f:6 h:8");
    d = it_get("/members/g?boards=ex&rank=dense");
    const cJSON *b0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "boards"), 0);
    ck_assert_int_eq((int)json_num(b0, "rank"), 5);
    ck_assert_double_eq(json_num(b0, "percentile"), 22.22); /* position 7: 200 / 9 */
    cJSON_Delete(d);
}
END_TEST

/* An asc board: lower is better; and a tie group of a whole page. */
START_TEST(test_rank_types_asc_and_ties)
{
    put_board("asc", "{\"order\":\"asc\",\"page_ttl_ms\":0,\"score_decimals\":1}", 201);
    write_json("asc", "{\"entries\":[{\"id\":\"p\",\"score\":1.5},{\"id\":\"q\",\"score\":2},"
                      "{\"id\":\"r\",\"score\":2.0},{\"id\":\"s\",\"score\":2},{\"id\":\"t\","
                      "\"score\":2},{\"id\":\"u\",\"score\":-3.5}]}");
    expect_items("/boards/asc/rank?size=3&page=1&rank=competition", "u:1 p:2 q:3");
    expect_items("/boards/asc/rank?size=3&page=2&rank=competition", "r:3 s:3 t:3");
    expect_items("/boards/asc/rank?size=3&page=2&rank=dense", "r:3 s:3 t:3");
    expect_items("/boards/asc/rank?size=2&page=3&rank=dense", "s:3 t:3");
    ck_assert_int_eq(dense_exact("asc", NULL), 3);
}
END_TEST

/* ---------------------------------------------------------------- 2. the side sets */

START_TEST(test_dense_after_changes)
{
    put_board("dz", "{\"page_ttl_ms\":0}", 201);
    write_example("dz");
    ck_assert_int_eq(dense_exact("dz", NULL), 6);
    /* d (30, alone) moves to 50: the key of 30 goes, 50 stays */
    write_json("dz", "{\"id\":\"d\",\"score\":20,\"op\":\"incr\"}");
    ck_assert_int_eq(dense_exact("dz", NULL), 5);
    expect_items("/boards/dz/rank?rank=dense", "a:1 b:2 c:2 d:2 e:3 f:4 g:4 h:4 i:5");
    /* a batch where one member passes through a score and leaves it (x: 7, then 9): 7 never
     * stays; e leaves 10 (alone) for 8 */
    write_json("dz", "{\"entries\":[{\"id\":\"x\",\"score\":7},{\"id\":\"e\",\"score\":8},"
                     "{\"id\":\"x\",\"score\":9},{\"id\":\"a\",\"score\":100}]}");
    ck_assert_int_eq(dense_exact("dz", NULL), 5); /* 100 50 9 8 1 */
    expect_items("/boards/dz/rank?rank=competition", "a:1 b:2 c:2 d:2 x:5 f:6 g:6 h:6 e:6 i:10");
    /* best that loses changes nothing; best that wins moves */
    write_json("dz", "{\"id\":\"i\",\"score\":0,\"op\":\"best\"}");
    ck_assert_int_eq(dense_exact("dz", NULL), 5);
    write_json("dz", "{\"id\":\"i\",\"score\":9,\"op\":\"best\"}");
    ck_assert_int_eq(dense_exact("dz", NULL), 4); /* 100 50 9 8 */
    expect_items("/boards/dz/rank?rank=dense", "a:1 b:2 c:2 d:2 x:3 i:3 f:4 g:4 h:4 e:4");
    /* member deletes: the last of a group takes its key along */
    cJSON_Delete(it_json("DELETE", "/boards/dz/members/a", NULL, 204));
    ck_assert_int_eq(dense_exact("dz", NULL), 3);
    cJSON_Delete(it_json("DELETE", "/boards/dz/members/b", NULL, 204));
    ck_assert_int_eq(dense_exact("dz", NULL), 3);
    expect_items("/boards/dz/members?ids=c,e&rank=dense", "c:1 e:3");
    /* trims: keep the top 3 (the 9 group is cut through), then below a score */
    cJSON *t = it_json("DELETE", "/boards/dz/members?keep=3", NULL, 200);
    ck_assert_int_eq((int)json_num(t, "removed"), 5);
    cJSON_Delete(t);
    ck_assert_int_eq(dense_exact("dz", NULL), 2); /* 50 (c, d) and 9 (x) */
    expect_items("/boards/dz/rank?rank=dense", "c:1 d:1 x:2");
    write_json("dz", "{\"entries\":[{\"id\":\"m1\",\"score\":5},{\"id\":\"m2\",\"score\":4},"
                     "{\"id\":\"m3\",\"score\":4},{\"id\":\"m4\",\"score\":3}]}");
    ck_assert_int_eq(dense_exact("dz", NULL), 5);
    t = it_json("DELETE", "/boards/dz/members?below=5", NULL, 200);
    ck_assert_int_eq((int)json_num(t, "removed"), 3);
    cJSON_Delete(t);
    ck_assert_int_eq(dense_exact("dz", NULL), 3);
    expect_items("/boards/dz/rank?rank=competition", "c:1 d:1 x:3 m1:4");
    /* reset: both go; the next write starts both again */
    cJSON_Delete(it_json("POST", "/boards/dz/reset", NULL, 204));
    ck_assert_int_eq(key_exists("z", "dz", NULL), 0);
    ck_assert_int_eq(key_exists("dense", "dz", NULL), 0);
    expect_items("/boards/dz/rank?rank=dense", "");
    write_json("dz", "{\"id\":\"n\",\"score\":1}");
    ck_assert_int_eq(dense_exact("dz", NULL), 1);
    expect_items("/boards/dz/rank?rank=dense", "n:1");
    /* the board's delete takes it along */
    cJSON_Delete(it_json("DELETE", "/boards/dz", NULL, 204));
    ck_assert_int_eq(key_exists("dense", "dz", NULL), 0);
}
END_TEST

/* A big trim (several chunks of 250) through heavy ties, and a full tie group compacted: the
 * side set stays exact. */
START_TEST(test_dense_big_trim_and_compact)
{
    put_board("bt", "{\"page_ttl_ms\":0}", 201);
    enum { N = 1200 };
    for (int at = 0; at < N; at += 300) {
        char *body = malloc(300 * 48 + 32);
        ck_assert_ptr_nonnull(body);
        size_t n = (size_t)sprintf(body, "{\"entries\":[");
        for (int i = at; i < at + 300; i++)
            n += (size_t)sprintf(body + n, "%s{\"id\":\"m%04d\",\"score\":%d}", i > at ? "," : "",
                                 i, i % 97);
        sprintf(body + n, "]}");
        write_json("bt", body);
        free(body);
    }
    ck_assert_int_eq(dense_exact("bt", NULL), 97);
    cJSON *t = it_json("DELETE", "/boards/bt/members?keep=333", NULL, 200);
    ck_assert_int_eq((int)json_num(t, "removed"), N - 333);
    cJSON_Delete(t);
    long long keys = dense_exact("bt", NULL);
    /* the top 333 of 1200 scores i % 97 (12 members each from 96 down to 36): 96 down to 70
     * whole (324) and 9 of the 12 at 69 */
    ck_assert_msg(keys == 28, "%lld distinct scores kept", keys);
    cJSON *d = it_get("/boards/bt/members?ids=m0096,m0094&rank=dense");
    char got[256];
    items_text(d, got, sizeof(got));
    ck_assert_str_eq(got, "m0096:1 m0094:3");
    cJSON_Delete(d);
    t = it_json("DELETE", "/boards/bt/members?below=90", NULL, 200);
    cJSON_Delete(t);
    ck_assert_int_eq(dense_exact("bt", NULL), 7); /* 96..90 */
    /* a tie group whose ties run out (the cap lowered to 4) is renumbered by compact.lua: every
     * member keeps its key, so the distinct scores stay as they are */
    board_set_tie_cap(4);
    write_json("bt", "{\"entries\":[{\"id\":\"t1\",\"score\":200},{\"id\":\"t2\",\"score\":200},"
                     "{\"id\":\"t3\",\"score\":200},{\"id\":\"t4\",\"score\":200}]}");
    cJSON_Delete(it_json("DELETE", "/boards/bt/members/t1", NULL, 204));
    cJSON_Delete(it_json("DELETE", "/boards/bt/members/t2", NULL, 204));
    write_json("bt", "{\"entries\":[{\"id\":\"t5\",\"score\":200},{\"id\":\"t6\",\"score\":50}]}");
    ck_assert_int_eq(dense_exact("bt", NULL), 9); /* 200, 96..90 and 50 */
    d = it_get("/boards/bt/members?ids=t5,t4,t6&rank=dense");
    items_text(d, got, sizeof(got));
    ck_assert_str_eq(got, "t4:1 t5:1 t6:9");
    cJSON_Delete(d);
    board_set_tie_cap(0);
}
END_TEST

/* A period's side set goes with its set: the sweep behind a new period's first write, and a
 * lower retain. */
START_TEST(test_dense_period_sweep_and_retain)
{
    fixture_set_clock("2036-11-28T12:00:00Z");
    put_board("pd", "{\"period\":\"daily\",\"retain\":2,\"page_ttl_ms\":0}", 201);
    write_json("pd", "{\"entries\":[{\"id\":\"a\",\"score\":3},{\"id\":\"b\",\"score\":3}]}");
    fixture_set_clock("2036-11-29T12:00:00Z");
    write_json("pd", "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"b\",\"score\":4}]}");
    fixture_set_clock("2036-11-30T12:00:00Z");
    write_json("pd", "{\"id\":\"c\",\"score\":1}");
    ck_assert_int_eq(dense_exact("pd", "2036-11-28"), 1);
    ck_assert_int_eq(dense_exact("pd", "2036-11-29"), 2);
    ck_assert_int_eq(dense_exact("pd", "2036-11-30"), 1);
    expect_items("/boards/pd/rank?period=2036-11-28&rank=competition", "a:1 b:1");
    expect_items("/boards/pd/rank?period=2036-11-29&rank=dense", "a:1 b:2");
    /* 2036-12-01: 11-28 is past retain 2; the sweep behind this write removes its set and its
     * distinct scores (both listed in the period index) */
    fixture_set_clock("2036-12-01T12:00:00Z");
    write_json("pd", "{\"id\":\"d\",\"score\":2}");
    int gone = 0;
    for (int waited = 0; waited < 2000 && !gone; waited += 20) {
        gone = !key_exists("z", "pd", "2036-11-28") && !key_exists("dense", "pd", "2036-11-28");
        if (!gone)
            sleep_ms(20);
    }
    ck_assert_msg(gone, "2036-11-28's set or distinct scores outlived the sweep");
    ck_assert_int_eq(dense_exact("pd", "2036-11-29"), 2);
    /* a lower retain drops the periods it no longer shows, distinct scores included */
    put_board("pd", "{\"retain\":0}", 200);
    ck_assert_int_eq(key_exists("dense", "pd", "2036-11-29"), 0);
    ck_assert_int_eq(key_exists("dense", "pd", "2036-11-30"), 0);
    ck_assert_int_eq(dense_exact("pd", "2036-12-01"), 1);
    /* the board's delete takes every side set along */
    cJSON_Delete(it_json("DELETE", "/boards/pd", NULL, 204));
    ck_assert_int_eq(key_exists("dense", "pd", "2036-12-01"), 0);
    ck_assert_int_eq(key_exists("periods", "pd", NULL), 0);
}
END_TEST

/* A set written before rankd kept distinct scores: dense ranks are refused (409), not guessed;
 * competition and ordinal work; once the set is reset, dense ranks start. */
START_TEST(test_dense_unavailable_for_old_sets)
{
    put_board("old", "{\"page_ttl_ms\":0}", 201);
    char zk[256];
    zkey(zk, sizeof(zk), "z", "old", NULL);
    /* as an older rankd stored 100 and 50, 50 on a desc/first board */
    freeReplyObject(redis_admin_cmd(g_admin, "ZADD %s -209715200 a -104857600 b -104857599 c", zk));
    it_expect_error("GET", "/boards/old/rank?rank=dense", NULL, 409, "dense_rank_unavailable");
    it_expect_error("GET", "/boards/old/members/b?rank=dense", NULL, 409, "dense_rank_unavailable");
    it_expect_error("GET", "/boards/old/members?ids=a&rank=dense", NULL, 409,
                    "dense_rank_unavailable");
    it_expect_error("GET", "/members/a?boards=old&rank=dense", NULL, 409, "dense_rank_unavailable");
    expect_items("/boards/old/rank?rank=competition", "a:1 b:2 c:2");
    /* writes do not start a partial side set on it */
    write_json("old", "{\"id\":\"d\",\"score\":7}");
    ck_assert_int_eq(key_exists("dense", "old", NULL), 0);
    expect_items("/boards/old/rank?rank=competition", "a:1 b:2 c:2 d:4");
    cJSON_Delete(it_json("POST", "/boards/old/reset", NULL, 204));
    write_json("old", "{\"entries\":[{\"id\":\"a\",\"score\":1},{\"id\":\"b\",\"score\":1}]}");
    expect_items("/boards/old/rank?rank=dense", "a:1 b:1");
    ck_assert_int_eq(dense_exact("old", NULL), 1);
}
END_TEST

/* A reference board in memory: ids and scores (no ties broken: only primary scores count). */
struct ref {
    int n;
    char ids[64][8];
    long long score[64];
};

static int ref_find(struct ref *f, const char *id)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->ids[i], id) == 0)
            return i;
    return -1;
}

/* Competition and dense rank of score s among the reference's members (desc). */
static void ref_ranks(const struct ref *f, long long s, int *competition, int *dense)
{
    long long seen[64];
    int better = 0, nseen = 0;
    for (int i = 0; i < f->n; i++) {
        if (f->score[i] <= s)
            continue;
        better++;
        int dup = 0;
        for (int k = 0; k < nseen && !dup; k++)
            dup = seen[k] == f->score[i];
        if (!dup)
            seen[nseen++] = f->score[i];
    }
    *competition = better + 1;
    *dense = nseen + 1;
}

/* Every member's competition and dense rank over HTTP (one page each) against the reference. */
static void ref_check(const struct ref *f, const char *board, int step)
{
    static const char *const types[] = {"competition", "dense"};
    for (int t = 0; t < 2; t++) {
        char path[160];
        snprintf(path, sizeof(path), "/boards/%s/rank?size=100&rank=%s", board, types[t]);
        cJSON *doc = it_get(path);
        ck_assert_msg((int)json_num(doc, "total") == f->n, "step %d: total %d, want %d", step,
                      (int)json_num(doc, "total"), f->n);
        const cJSON *it;
        cJSON_ArrayForEach(it, items(doc))
        {
            int i = ref_find((struct ref *)f, json_str(it, "id"));
            ck_assert_msg(i >= 0, "step %d: %s is not on the reference board", step,
                          json_str(it, "id"));
            int c, d;
            ref_ranks(f, f->score[i], &c, &d);
            ck_assert_msg((long long)json_num(it, "score") == f->score[i] &&
                              (int)json_num(it, "rank") == (t ? d : c),
                          "step %d: %s %s rank %d score %g; want %d score %lld", step,
                          json_str(it, "id"), types[t], (int)json_num(it, "rank"),
                          json_num(it, "score"), t ? d : c, f->score[i]);
        }
        cJSON_Delete(doc);
    }
}

/* A random walk of writes, increments, bests, batches, deletes, trims and resets on a board of
 * few distinct scores: after every step the side set is exactly the set's distinct keys, and
 * every member's competition and dense rank is the reference's. */
START_TEST(test_dense_random_walk)
{
    put_board("rw", "{\"page_ttl_ms\":0}", 201);
    struct ref f = {0};
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
#define RND(n) ((int)((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % (n))
    for (int step = 0; step < 260; step++) {
        int op = RND(100);
        char body[1024];
        char id[8];
        snprintf(id, sizeof(id), "k%02d", RND(40));
        int i = ref_find(&f, id);
        if (op < 35) { /* set */
            long long s = RND(12) - 3;
            snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%lld}", id, s);
            write_json("rw", body);
            if (i < 0) {
                i = f.n++;
                snprintf(f.ids[i], sizeof(f.ids[i]), "%s", id);
            }
            f.score[i] = s;
        } else if (op < 55) { /* incr (creates a missing member at the delta) */
            long long dlt = RND(7) - 3;
            snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%lld,\"op\":\"incr\"}", id, dlt);
            write_json("rw", body);
            if (i < 0) {
                i = f.n++;
                snprintf(f.ids[i], sizeof(f.ids[i]), "%s", id);
                f.score[i] = 0;
            }
            f.score[i] += dlt;
        } else if (op < 65) { /* best */
            long long s = RND(12) - 3;
            snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%lld,\"op\":\"best\"}", id, s);
            write_json("rw", body);
            if (i < 0) {
                i = f.n++;
                snprintf(f.ids[i], sizeof(f.ids[i]), "%s", id);
                f.score[i] = s;
            } else if (s > f.score[i]) {
                f.score[i] = s;
            }
        } else if (op < 78) { /* a batch of 6, members repeated, applied in order */
            size_t n = (size_t)snprintf(body, sizeof(body), "{\"entries\":[");
            for (int e = 0; e < 6; e++) {
                char bid[8];
                snprintf(bid, sizeof(bid), "k%02d", RND(12));
                long long s = RND(12) - 3;
                int incr = RND(3) == 0;
                n += (size_t)snprintf(body + n, sizeof(body) - n,
                                      "%s{\"id\":\"%s\",\"score\":%lld%s}", e ? "," : "", bid, s,
                                      incr ? ",\"op\":\"incr\"" : "");
                int k = ref_find(&f, bid);
                if (k < 0) { /* new: a set and an incr both start it at s */
                    k = f.n++;
                    snprintf(f.ids[k], sizeof(f.ids[k]), "%s", bid);
                    f.score[k] = s;
                } else {
                    f.score[k] = incr ? f.score[k] + s : s;
                }
            }
            snprintf(body + n, sizeof(body) - n, "]}");
            write_json("rw", body);
        } else if (op < 90) { /* a member's delete */
            if (i < 0)
                continue;
            char path[96];
            snprintf(path, sizeof(path), "/boards/rw/members/%s", id);
            cJSON_Delete(it_json("DELETE", path, NULL, 204));
            f.score[i] = f.score[f.n - 1];
            memcpy(f.ids[i], f.ids[f.n - 1], sizeof(f.ids[i]));
            f.n--;
        } else if (op < 96) { /* below a score: every member with a worse one goes */
            long long s = RND(10) - 3;
            char path[96];
            snprintf(path, sizeof(path), "/boards/rw/members?below=%lld", s);
            cJSON_Delete(it_json("DELETE", path, NULL, 200));
            for (int k = 0; k < f.n;)
                if (f.score[k] < s) {
                    f.score[k] = f.score[f.n - 1];
                    memcpy(f.ids[k], f.ids[f.n - 1], sizeof(f.ids[k]));
                    f.n--;
                } else {
                    k++;
                }
        } else { /* a reset, now and then */
            if (RND(3))
                continue;
            cJSON_Delete(it_json("POST", "/boards/rw/reset", NULL, 204));
            f.n = 0;
        }
        long long want = 0;
        for (int a = 0; a < f.n; a++) { /* distinct scores of the reference */
            int dup = 0;
            for (int b = 0; b < a && !dup; b++)
                dup = f.score[a] == f.score[b];
            want += !dup;
        }
        long long keys = dense_exact("rw", NULL);
        ck_assert_msg(keys == want, "step %d: %lld distinct scores kept, %lld on the board", step,
                      keys, want);
        ref_check(&f, "rw", step);
    }
#undef RND
}
END_TEST

/* ---------------------------------------------------------------- 3. many members */

START_TEST(test_many_members)
{
    put_board("mm", "{\"page_ttl_ms\":0}", 201);
    /* ids that need percent-encoding: a comma, a space, a slash, UTF-8 */
    write_json("mm", "{\"entries\":[{\"id\":\"a,b\",\"score\":10,\"record\":{\"n\":1}},"
                     "{\"id\":\"with space\",\"score\":20},{\"id\":\"x/y\",\"score\":5},"
                     "{\"id\":\"caf\xc3\xa9\",\"score\":20},{\"id\":\"\xe6\x97\xa5\xe6\x9c\xac\","
                     "\"score\":30},{\"id\":\"plain\",\"score\":1}]}");
    cJSON *d =
        it_get("/boards/mm/members?ids=a%2Cb,with%20space,nobody,caf%C3%A9,%E6%97%A5%E6%9C%AC,"
               "x%2Fy,a%2Cb,gone%2Ctoo");
    ck_assert_str_eq(json_str(d, "board"), "mm");
    char got[512];
    items_text(d, got, sizeof(got));
    ck_assert_str_eq(got, "\xe6\x97\xa5\xe6\x9c\xac:1 with space:2 caf\xc3\xa9:3 a,b:4 x/y:5");
    const cJSON *first = cJSON_GetArrayItem(items(d), 3);
    ck_assert_int_eq((int)json_num(cJSON_GetObjectItemCaseSensitive(first, "record"), "n"), 1);
    ck_assert_int_eq((int)json_num(first, "score"), 10);
    ck_assert(is_null(cJSON_GetArrayItem(items(d), 0), "record"));
    const cJSON *missing = cJSON_GetObjectItemCaseSensitive(d, "missing");
    ck_assert_int_eq(cJSON_GetArraySize(missing), 2); /* each once, in the order asked */
    ck_assert_str_eq(cJSON_GetArrayItem(missing, 0)->valuestring, "nobody");
    ck_assert_str_eq(cJSON_GetArrayItem(missing, 1)->valuestring, "gone,too");
    cJSON_Delete(d);
    expect_items("/boards/mm/members?ids=with%20space,caf%C3%A9&rank=competition",
                 "with space:2 caf\xc3\xa9:2");
    /* only missing ids */
    d = it_get("/boards/mm/members?ids=q");
    ck_assert_int_eq(cJSON_GetArraySize(items(d)), 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "missing")), 1);
    cJSON_Delete(d);
    /* the POST form: 1000 ids (most missing), items in rank order */
    size_t cap = 1000 * 12 + 32, n = 0;
    char *body = malloc(cap);
    ck_assert_ptr_nonnull(body);
    n += (size_t)snprintf(body + n, cap - n, "{\"ids\":[\"plain\",\"a,b\"");
    for (int i = 2; i < 1000; i++)
        n += (size_t)snprintf(body + n, cap - n, ",\"n%d\"", i);
    snprintf(body + n, cap - n, "]}");
    d = it_json("POST", "/boards/mm/lookup?rank=dense", body, 200);
    items_text(d, got, sizeof(got));
    ck_assert_str_eq(got, "a,b:3 plain:5");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "missing")), 998);
    cJSON_Delete(d);
    free(body);
    /* bad input: 400, nothing read */
    char many[2048];
    list_path(many, sizeof(many), "/boards/mm/members?ids=", "i", 101);
    const struct refusal bad[] = {
        {"GET", many, NULL, 400, "invalid_ids"}, /* 101 ids */
        {"GET", "/boards/mm/members", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/mm/members?ids=", NULL, 400, "invalid_id"},
        {"GET", "/boards/mm/members?ids=a,,b", NULL, 400, "invalid_id"},
        {"GET", "/boards/mm/members?ids=a,", NULL, 400, "invalid_id"},
        {"GET", "/boards/mm/members?ids=a%01b", NULL, 400, "invalid_id"},
        {"GET", "/boards/mm/members?ids=%FF", NULL, 400, "invalid_id"},
        {"GET", "/boards/mm/members?ids=a&ids=b", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/mm/members?ids=a%zz", NULL, 400, "invalid_query"},
        {"GET", "/boards/mm/members?ids=a&rank=x", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/nope/members?ids=a", NULL, 404, "board_not_found"},
        {"POST", "/boards/mm/lookup", "{\"ids\":[]}", 400, "invalid_ids"},
        {"POST", "/boards/mm/lookup", "{\"ids\":\"a\"}", 400, "invalid_ids"},
        {"POST", "/boards/mm/lookup", "{\"ids\":[1]}", 400, "invalid_id"},
        {"POST", "/boards/mm/lookup", "{\"ids\":[\"\"]}", 400, "invalid_id"},
        {"POST", "/boards/mm/lookup", "{\"ids\":[\"a\"],\"x\":1}", 400, "unknown_field"},
        {"POST", "/boards/mm/lookup", "[\"a\"]", 400, "invalid_body"},
        {"POST", "/boards/mm/lookup", "{", 400, "invalid_json"},
        {"POST", "/boards/nope/lookup", "{\"ids\":[\"a\"]}", 404, "board_not_found"},
    };
    expect_refusals(bad, sizeof(bad) / sizeof(bad[0]));
    body = malloc(1001 * 8 + 32);
    ck_assert_ptr_nonnull(body);
    n = (size_t)sprintf(body, "{\"ids\":[\"i0\"");
    for (int i = 1; i <= 1000; i++)
        n += (size_t)sprintf(body + n, ",\"i%d\"", i);
    sprintf(body + n, "]}");
    it_expect_error("POST", "/boards/mm/lookup", body, 400, "invalid_ids");
    free(body);
    /* no token needed: it is a read */
    struct http_result r;
    const char *one = "{\"ids\":[\"plain\"]}";
    ck_assert_int_eq(
        http_req(g_port, "POST", "/boards/mm/lookup", one, strlen(one), NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- around a score */

START_TEST(test_around_score)
{
    put_board("as", "{\"page_ttl_ms\":0}", 201);
    write_example("as");
    /* centred on the first member at the score or worse */
    expect_items("/boards/as/around?score=30&size=3", "c:3 d:4 e:5");
    expect_items("/boards/as/around?score=31&size=3", "c:3 d:4 e:5");
    expect_items("/boards/as/around?score=29&size=3", "d:4 e:5 f:6");
    expect_items("/boards/as/around?score=8&size=4", "d:4 e:5 f:6 g:7");
    /* at the edges the window fills from the other side */
    expect_items("/boards/as/around?score=1000&size=3", "a:1 b:2 c:3");
    expect_items("/boards/as/around?score=-5&size=3", "g:7 h:8 i:9");
    expect_items("/boards/as/around?score=1&size=4", "f:6 g:7 h:8 i:9");
    cJSON *d = it_get("/boards/as/around?score=9&size=2");
    ck_assert_int_eq((int)json_num(d, "page"), 3); /* first position 5 at size 2 */
    ck_assert_int_eq((int)json_num(d, "total"), 9);
    cJSON_Delete(d);
    /* exponent forms are plain values; the literal is judged exactly like a write's */
    expect_items("/boards/as/around?score=3e1&size=1", "d:4");
    expect_items("/boards/as/around?score=30.000&size=1", "d:4");
    const struct refusal bad[] = {
        {"GET", "/boards/as/around?score=2.5", NULL, 422, "invalid_score"},
        {"GET", "/boards/as/around?score=1.000000000000000001", NULL, 422, "invalid_score"},
        {"GET", "/boards/as/around?score=4294967296", NULL, 422, "score_out_of_range"},
        {"GET", "/boards/as/around?score=1e400", NULL, 422, "score_out_of_range"},
        {"GET", "/boards/as/around?score=abc", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/as/around?score=01", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/as/around", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/as/around?score=1&score=2", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/as/around?score=1&size=0", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/nope/around?score=1", NULL, 404, "board_not_found"},
    };
    expect_refusals(bad, sizeof(bad) / sizeof(bad[0]));
    /* an empty board: a page without items */
    put_board("empty", "{}", 201);
    d = it_get("/boards/empty/around?score=5");
    ck_assert_int_eq(cJSON_GetArraySize(items(d)), 0);
    ck_assert_int_eq((int)json_num(d, "total"), 0);
    cJSON_Delete(d);
    /* the layout this process saw moved under it (another process made the empty board keep 2
     * decimals and wrote 1.25 and 1.2): the score, refused under 0 decimals, is judged again
     * under the real layout, in the same request */
    put_board("dec", "{\"page_ttl_ms\":0}", 201);
    expect_items("/boards/dec/around?score=5", ""); /* seen with 0 decimals */
    char meta[200], zk[200], dk[200];
    snprintf(meta, sizeof(meta), "%s:{dec}:meta", g_app->cfg.key_prefix);
    zkey(zk, sizeof(zk), "z", "dec", NULL);
    zkey(dk, sizeof(dk), "dense", "dec", NULL);
    freeReplyObject(redis_admin_cmd(g_admin, "HSET %s score_decimals 2", meta));
    freeReplyObject(redis_admin_cmd(g_admin, "ZADD %s -262144000 p -251658240 q", zk));
    freeReplyObject(redis_admin_cmd(g_admin, "ZADD %s -125 -125 -120 -120", dk));
    expect_items("/boards/dec/around?score=1.21&size=1", "q:2");
    it_expect_error("GET", "/boards/dec/around?score=1.211", NULL, 422, "invalid_score");
}
END_TEST

/* ---------------------------------------------------------------- percentiles */

START_TEST(test_percentiles)
{
    put_board("pc", "{\"page_ttl_ms\":0}", 201);
    /* an empty board: no member at any percentile, top is empty */
    cJSON *d = it_get("/boards/pc/percentile?p=50");
    ck_assert_int_eq((int)json_num(d, "p"), 50);
    ck_assert(is_null(d, "rank") && is_null(d, "id") && is_null(d, "score"));
    cJSON_Delete(d);
    d = it_get("/boards/pc/top?percent=100");
    ck_assert_int_eq((int)json_num(d, "count"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(items(d)), 0);
    cJSON_Delete(d);
    /* one member: it is at every percentile */
    write_json("pc", "{\"id\":\"only\",\"score\":7}");
    static const char *const ps[] = {"0", "0.0001", "50", "99.9999", "100"};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        char path[96];
        snprintf(path, sizeof(path), "/boards/pc/percentile?p=%s", ps[i]);
        d = it_get(path);
        ck_assert_int_eq((int)json_num(d, "rank"), 1);
        ck_assert_str_eq(json_str(d, "id"), "only");
        ck_assert_int_eq((int)json_num(d, "score"), 7);
        cJSON_Delete(d);
    }
    d = it_get("/boards/pc/members/only");
    ck_assert_double_eq(json_num(d, "percentile"), 0);
    cJSON_Delete(d);
    d = it_get("/boards/pc/top?percent=0.0001");
    ck_assert_int_eq((int)json_num(d, "count"), 1); /* ceil(1 * 0.000001) */
    cJSON_Delete(d);
    d = it_get("/boards/pc/top?percent=0");
    ck_assert_int_eq((int)json_num(d, "count"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(items(d)), 0);
    cJSON_Delete(d);
    /* two members: P = 50 is the nearest rank ceil(2 * 0.5) = 1; above 50, rank 1 too; below,
     * rank 2 */
    write_json("pc", "{\"id\":\"second\",\"score\":3}");
    static const struct {
        const char *p;
        int rank;
    } two[] = {{"0", 2}, {"49.9999", 2}, {"50", 1}, {"50.0001", 1}, {"100", 1}};
    for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++) {
        char path[96];
        snprintf(path, sizeof(path), "/boards/pc/percentile?p=%s", two[i].p);
        d = it_get(path);
        ck_assert_msg((int)json_num(d, "rank") == two[i].rank, "p=%s: rank %d, want %d", two[i].p,
                      (int)json_num(d, "rank"), two[i].rank);
        cJSON_Delete(d);
    }
    d = it_get("/boards/pc/percentile?p=99.90");
    ck_assert_double_eq(json_num(d, "p"), 99.9);
    cJSON_Delete(d);
    d = it_get("/boards/pc/members/only");
    ck_assert_double_eq(json_num(d, "percentile"), 50);
    cJSON_Delete(d);
    static const struct {
        const char *percent;
        int count;
    } tops[] = {{"0", 0}, {"0.0001", 1}, {"50", 1}, {"50.0001", 2}, {"100", 2}};
    for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
        char path[96];
        snprintf(path, sizeof(path), "/boards/pc/top?percent=%s", tops[i].percent);
        d = it_get(path);
        ck_assert_msg((int)json_num(d, "count") == tops[i].count &&
                          cJSON_GetArraySize(items(d)) == tops[i].count,
                      "percent=%s: count %d", tops[i].percent, (int)json_num(d, "count"));
        cJSON_Delete(d);
    }
    /* 150 members: top caps at 100 items, count says 150; ceil is exact (33.3333% of 150 is
     * 49.99995 members: 50) */
    put_board("big", "{\"page_ttl_ms\":0}", 201);
    char *body = malloc(150 * 40 + 32);
    ck_assert_ptr_nonnull(body);
    size_t n = (size_t)sprintf(body, "{\"entries\":[");
    for (int i = 0; i < 150; i++)
        n += (size_t)sprintf(body + n, "%s{\"id\":\"b%03d\",\"score\":%d}", i ? "," : "", i, i);
    sprintf(body + n, "]}");
    write_json("big", body);
    free(body);
    d = it_get("/boards/big/top?percent=100");
    ck_assert_int_eq((int)json_num(d, "count"), 150);
    ck_assert_int_eq((int)json_num(d, "size"), 100);
    ck_assert_int_eq(cJSON_GetArraySize(items(d)), 100);
    ck_assert_str_eq(json_str(cJSON_GetArrayItem(items(d), 0), "id"), "b149");
    cJSON_Delete(d);
    d = it_get("/boards/big/top?percent=33.3333");
    ck_assert_int_eq((int)json_num(d, "count"), 50);
    cJSON_Delete(d);
    d = it_get("/boards/big/top?percent=10");
    ck_assert_int_eq((int)json_num(d, "count"), 15);
    cJSON_Delete(d);
    d = it_get("/boards/big/percentile?p=90"); /* rank ceil(150 * 10 / 100) = 15 */
    ck_assert_int_eq((int)json_num(d, "rank"), 15);
    ck_assert_str_eq(json_str(d, "id"), "b135");
    cJSON_Delete(d);
    d = it_get(
        "/boards/big/percentile?p=33.3333"); /* ceil(150 * 66.6667 / 100) = ceil(100.00005) */
    ck_assert_int_eq((int)json_num(d, "rank"), 101);
    cJSON_Delete(d);
    d = it_get("/boards/big/members/b000");
    ck_assert_double_eq(json_num(d, "percentile"), 0);
    cJSON_Delete(d);
    d = it_get("/boards/big/members/b100"); /* position 50 of 150: 100 * 100 / 150 = 66.67 */
    ck_assert_double_eq(json_num(d, "percentile"), 66.67);
    cJSON_Delete(d);
    static const char *const bad[] = {"p=-1",  "p=100.0001", "p=101", "p=0.00001",
                                      "p=abc", "p=1e2",      "p=",    "p=50&p=50"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[96];
        snprintf(path, sizeof(path), "/boards/big/percentile?%s", bad[i]);
        it_expect_error("GET", path, NULL, 400, "invalid_parameter");
        snprintf(path, sizeof(path), "/boards/big/top?%s", bad[i]);
        it_expect_error("GET", path, NULL, 400, "invalid_parameter"); /* percent missing */
    }
    it_expect_error("GET", "/boards/big/percentile", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/big/top?percent=101", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/nope/percentile?p=1", NULL, 404, "board_not_found");
    it_expect_error("GET", "/boards/nope/top?percent=1", NULL, 404, "board_not_found");
}
END_TEST

/* ---------------------------------------------------------------- one member, many boards */

START_TEST(test_member_across_boards)
{
    put_board("daily", "{\"period\":\"daily\",\"page_ttl_ms\":0}", 201);
    write_json("daily", "{\"entries\":[{\"id\":\"m\",\"score\":5},{\"id\":\"o\",\"score\":9}]}");
    write_json("alltime", "{\"entries\":[{\"id\":\"o\",\"score\":9},{\"id\":\"m\",\"score\":9},"
                          "{\"id\":\"p\",\"score\":1},{\"id\":\"q\",\"score\":0}]}");
    write_json("other", "{\"id\":\"o\",\"score\":1}");
    cJSON *d = it_get("/members/m?boards=daily,nope,alltime,other,daily");
    ck_assert_str_eq(json_str(d, "id"), "m");
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(d, "boards");
    ck_assert_int_eq(cJSON_GetArraySize(bs), 4); /* each board once, in the order named */
    const cJSON *b = cJSON_GetArrayItem(bs, 0);
    ck_assert_str_eq(json_str(b, "board"), "daily");
    ck_assert_int_eq((int)json_num(b, "rank"), 2);
    ck_assert_int_eq((int)json_num(b, "score"), 5);
    ck_assert_double_eq(json_num(b, "percentile"), 0);
    b = cJSON_GetArrayItem(bs, 1);
    ck_assert_str_eq(json_str(b, "board"), "nope");
    ck_assert(is_null(b, "rank") && is_null(b, "score") && is_null(b, "percentile"));
    b = cJSON_GetArrayItem(bs, 2);
    ck_assert_str_eq(json_str(b, "board"), "alltime");
    ck_assert_int_eq((int)json_num(b, "rank"), 2); /* o reached 9 first */
    ck_assert_double_eq(json_num(b, "percentile"), 50);
    b = cJSON_GetArrayItem(bs, 3);
    ck_assert_str_eq(json_str(b, "board"), "other");
    ck_assert(is_null(b, "rank") && is_null(b, "score") && is_null(b, "percentile"));
    cJSON_Delete(d);
    d = it_get("/members/m?boards=alltime&rank=competition");
    ck_assert_int_eq(
        (int)json_num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "boards"), 0), "rank"),
        1);
    cJSON_Delete(d);
    /* a member id that needs escaping */
    write_json("other", "{\"id\":\"a/b c\",\"score\":2}");
    d = it_get("/members/a%2Fb%20c?boards=other");
    ck_assert_str_eq(json_str(d, "id"), "a/b c");
    ck_assert_int_eq(
        (int)json_num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "boards"), 0), "rank"),
        1);
    cJSON_Delete(d);
    char many[512];
    list_path(many, sizeof(many), "/members/m?boards=", "b", 21);
    const struct refusal bad[] = {
        {"GET", many, NULL, 400, "invalid_parameter"}, /* 21 boards */
        {"GET", "/members/m", NULL, 400, "invalid_parameter"},
        {"GET", "/members/m?boards=", NULL, 400, "invalid_board"},
        {"GET", "/members/m?boards=a,,b", NULL, 400, "invalid_board"},
        {"GET", "/members/m?boards=a%3Ab", NULL, 400, "invalid_board"},
        {"GET", "/members/m?boards=alltime&rank=top", NULL, 400, "invalid_parameter"},
        {"GET", "/members/%01?boards=alltime", NULL, 400, "invalid_id"},
    };
    expect_refusals(bad, sizeof(bad) / sizeof(bad[0]));
}
END_TEST

/* ---------------------------------------------------------------- score ranges and cursors */

/* The cursor `name` (next or prev) of a page body, copied into out; 0 when it is null. */
static int cursor_of(const cJSON *doc, const char *name, char *out, size_t len)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, name);
    ck_assert_msg(cJSON_IsString(c) || cJSON_IsNull(c), "no %s in the page", name);
    if (!cJSON_IsString(c))
        return 0;
    snprintf(out, len, "%s", c->valuestring);
    return 1;
}

START_TEST(test_score_range)
{
    put_board("sr", "{\"page_ttl_ms\":0}", 201);
    write_example("sr");
    /* inclusive at both ends, global ranks, total the members in the range */
    cJSON *d = it_get("/boards/sr/rank?min=8&max=50&size=3");
    ck_assert_int_eq((int)json_num(d, "total"), 7);
    ck_assert_int_eq((int)json_num(d, "pages"), 3);
    ck_assert_int_eq((int)json_num(d, "page"), 1);
    char got[512], next[CURSOR_TEXT_MAX];
    items_text(d, got, sizeof(got));
    ck_assert_str_eq(got, "b:2 c:3 d:4");
    ck_assert(cursor_of(d, "next", next, sizeof(next)) && !cursor_of(d, "prev", got, sizeof(got)));
    cJSON_Delete(d);
    expect_items("/boards/sr/rank?min=8&max=50&size=3&page=2", "e:5 f:6 g:7");
    expect_items("/boards/sr/rank?min=8&max=50&size=3&page=3", "h:8");
    expect_items("/boards/sr/rank?min=8&max=50&size=3&page=4", "");
    d = it_get("/boards/sr/rank?min=8&max=50&size=3&page=3");
    ck_assert(!cursor_of(d, "next", got, sizeof(got))); /* the range's end, not the board's */
    cJSON_Delete(d);
    /* a cursor continues inside the range */
    char path[1024];
    snprintf(path, sizeof(path), "/boards/sr/rank?min=8&max=50&size=3&after=%s&rank=dense", next);
    expect_items(path, "e:4 f:5 g:5");
    /* one bound, the other open; the rank types; exact ends between scores */
    expect_items("/boards/sr/rank?min=30", "a:1 b:2 c:3 d:4");
    expect_items("/boards/sr/rank?max=9&rank=competition", "f:6 g:6 h:6 i:9");
    expect_items("/boards/sr/rank?min=9&max=49&rank=dense", "d:3 e:4");
    expect_items("/boards/sr/rank?min=50&max=50", "b:2 c:3");
    expect_items("/boards/sr/rank?min=60&max=90", "");
    d = it_get("/boards/sr/rank?min=60&max=90");
    ck_assert_int_eq((int)json_num(d, "total"), 0);
    ck_assert_int_eq((int)json_num(d, "pages"), 0);
    cJSON_Delete(d);
    expect_items("/rank?board=sr&min=1e2", "a:1");
    /* an asc board: lower is better, min and max still score bounds */
    put_board("sa", "{\"order\":\"asc\",\"page_ttl_ms\":0,\"score_decimals\":1}", 201);
    write_json("sa", "{\"entries\":[{\"id\":\"p\",\"score\":1.5},{\"id\":\"q\",\"score\":2},"
                     "{\"id\":\"r\",\"score\":-3.5},{\"id\":\"s\",\"score\":2.5}]}");
    expect_items("/boards/sa/rank?min=1.5&max=2.4", "p:2 q:3");
    expect_items("/boards/sa/rank?max=0", "r:1");
    const struct refusal bad[] = {
        {"GET", "/boards/sr/rank?min=50&max=8", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/sr/rank?min=abc", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/sr/rank?max=1&max=2", NULL, 400, "invalid_parameter"},
        {"GET", "/boards/sr/rank?min=2.5", NULL, 422, "invalid_score"},
        {"GET", "/boards/sr/rank?max=4294967296", NULL, 422, "score_out_of_range"},
        {"GET", "/boards/sa/rank?min=1.55", NULL, 422, "invalid_score"},
        {"GET", "/boards/nope/rank?min=1", NULL, 404, "board_not_found"},
    };
    expect_refusals(bad, sizeof(bad) / sizeof(bad[0]));
}
END_TEST

/* The ids of a page body's items, "id id ...", into out. */
static void ids_text(const cJSON *doc, char *out, size_t len)
{
    out[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach(it, items(doc))
    {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s", at ? " " : "", json_str(it, "id"));
    }
}

enum { WALK_MAX = 400 };

/* The page of `path`: its ids appended to seen[] (in walk order: reversed when walking
 * backwards), each item's rank checked against Redis right now (the writer waits between
 * pages); returns whether it has the cursor `name`, copied into cur. */
static int walk_page(const char *board, const char *path, const char *name, char *cur,
                     char (*seen)[16], int *n, int backwards)
{
    cJSON *d = it_get(path);
    char zk[256];
    zkey(zk, sizeof(zk), "z", board, NULL);
    const cJSON *its = items(d);
    int count = cJSON_GetArraySize(its);
    for (int k = 0; k < count; k++) {
        const cJSON *it = cJSON_GetArrayItem(its, backwards ? count - 1 - k : k);
        redisReply *r = redis_admin_cmd(g_admin, "ZRANK %s %s", zk, json_str(it, "id"));
        ck_assert_msg(r->type == REDIS_REPLY_INTEGER &&
                          r->integer + 1 == (long long)json_num(it, "rank"),
                      "%s: %s has rank %d, Redis says %lld", path, json_str(it, "id"),
                      (int)json_num(it, "rank"), r->integer + 1);
        freeReplyObject(r);
        ck_assert(*n < 4 * WALK_MAX);
        snprintf(seen[(*n)++], sizeof(seen[0]), "%s", json_str(it, "id"));
    }
    int more = cursor_of(d, name, cur, CURSOR_TEXT_MAX);
    cJSON_Delete(d);
    return more;
}

/* Walk board (members `prefix`000.. in the board's order before) with cursors, forwards or
 * backwards, while a writer moves three members between pages: every member that did not move
 * is seen exactly once, in order, and every rank is the global one. */
static void cursor_walk(const char *board, const char *prefix, int backwards)
{
    static char order[WALK_MAX][16], seen[4 * WALK_MAX][16];
    static char moved[WALK_MAX];
    char zk[256];
    zkey(zk, sizeof(zk), "z", board, NULL);
    redisReply *all = redis_admin_cmd(g_admin, "ZRANGE %s 0 -1", zk);
    int members = (int)all->elements;
    ck_assert(members <= WALK_MAX);
    for (int i = 0; i < members; i++)
        snprintf(order[i], sizeof(order[i]), "%s", all->element[i]->str);
    freeReplyObject(all);
    memset(moved, 0, sizeof(moved));
    int n = 0, pages = 0;
    uint64_t seed = 12345 + (uint64_t)backwards;
    char cur[CURSOR_TEXT_MAX], path[1024];
    if (backwards) /* from the last page by number, then prev cursors */
        snprintf(path, sizeof(path), "/boards/%s/rank?size=7&page=%d", board, (members + 6) / 7);
    else
        snprintf(path, sizeof(path), "/boards/%s/rank?size=7", board);
    const char *name = backwards ? "prev" : "next";
    int more = walk_page(board, path, name, cur, seen, &n, backwards);
    while (more) {
        for (int w = 0; w < 3; w++) { /* the writer */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            int i = (int)((seed >> 33) % (uint64_t)members);
            char id[16], body[96];
            snprintf(id, sizeof(id), "%s%03d", prefix, i);
            for (int k = 0; k < members; k++)
                moved[k] |= strcmp(order[k], id) == 0;
            snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"incr\"}", id,
                     (int)((seed >> 20) % 7) - 3);
            write_json(board, body);
        }
        snprintf(path, sizeof(path), "/boards/%s/rank?size=7&%s=%s", board,
                 backwards ? "before" : "after", cur);
        more = walk_page(board, path, name, cur, seen, &n, backwards);
        ck_assert_msg(++pages < 2 * members, "the walk does not end");
    }
    int at = 0, unmoved = 0;
    for (int k = 0; k < members; k++) {
        int idx = backwards ? members - 1 - k : k;
        if (moved[idx])
            continue;
        unmoved++;
        int found = 0;
        while (at < n && !found)
            found = strcmp(seen[at++], order[idx]) == 0;
        ck_assert_msg(found, "%s walk %s: %s (unmoved) missing or out of order", board,
                      backwards ? "backwards" : "forwards", order[idx]);
        for (int r = at; r < n; r++)
            ck_assert_msg(strcmp(seen[r], order[idx]) != 0, "%s walk: %s seen twice", board,
                          order[idx]);
    }
    fprintf(stderr, "reads: %s walked %s in %d pages: %d items seen, %d of %d members unmoved\n",
            board, backwards ? "backwards" : "forwards", pages + 1, n, unmoved, members);
}

/* entries "<prefix>000".."<prefix><n-1>" with scores i % groups, as one batch */
static void write_members(const char *board, const char *prefix, int n, int groups)
{
    char *body = malloc((size_t)n * 40 + 32);
    ck_assert_ptr_nonnull(body);
    size_t at = (size_t)sprintf(body, "{\"entries\":[");
    for (int i = 0; i < n; i++)
        at += (size_t)sprintf(body + at, "%s{\"id\":\"%s%03d\",\"score\":%d}", i ? "," : "", prefix,
                              i, i % groups);
    sprintf(body + at, "]}");
    write_json(board, body);
    free(body);
}

START_TEST(test_cursor_walks)
{
    /* tiebreak first, heavy ties: 300 members over 40 scores */
    put_board("cw", "{\"page_ttl_ms\":0}", 201);
    write_members("cw", "w", 300, 40);
    cursor_walk("cw", "w", 0);
    cursor_walk("cw", "w", 1);
    /* tiebreak id: the members of one score share a stored value (ordered by id bytes), so a
     * cursor's edge is found by a binary search in its group */
    put_board("cid", "{\"page_ttl_ms\":0,\"tiebreak\":\"id\"}", 201);
    write_members("cid", "v", 200, 3);
    cursor_walk("cid", "v", 0);
    cursor_walk("cid", "v", 1);
    /* the edge member itself gone: the next page starts where it was */
    cJSON *d = it_get("/boards/cid/rank?size=5");
    char next[CURSOR_TEXT_MAX], want[256], got[256], path[1024];
    ck_assert(cursor_of(d, "next", next, sizeof(next)));
    snprintf(path, sizeof(path), "/boards/cid/members/%s",
             json_str(cJSON_GetArrayItem(items(d), 4), "id"));
    cJSON_Delete(d);
    d = it_get("/boards/cid/rank?size=5&page=2");
    ids_text(d, want, sizeof(want));
    cJSON_Delete(d);
    cJSON_Delete(it_json("DELETE", path, NULL, 204));
    snprintf(path, sizeof(path), "/boards/cid/rank?size=5&after=%s", next);
    d = it_get(path);
    ids_text(d, got, sizeof(got));
    cJSON_Delete(d);
    ck_assert_str_eq(got, want);
}
END_TEST

/* Cursors expire with the board's generation (410); malformed ones are 400. */
START_TEST(test_cursor_expiry_and_errors)
{
    put_board("ce", "{\"page_ttl_ms\":0}", 201);
    write_example("ce");
    write_example("other");
    char next[CURSOR_TEXT_MAX], prev[CURSOR_TEXT_MAX], path[1024];
    cJSON *d = it_get("/boards/ce/rank?size=3&page=2");
    ck_assert(cursor_of(d, "next", next, sizeof(next)) && cursor_of(d, "prev", prev, sizeof(prev)));
    cJSON_Delete(d);
    snprintf(path, sizeof(path), "/boards/ce/rank?size=3&before=%s", prev);
    expect_items(path, "a:1 b:2 c:3");
    /* another board's cursor is not this one's, expired: one rankd did not make for it (before:
     * 410 cursor_expired, blaming a reset that never happened) */
    snprintf(path, sizeof(path), "/boards/other/rank?after=%s", next);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    snprintf(path, sizeof(path), "/boards/other/rank?before=%s", prev);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    snprintf(path, sizeof(path), "/rank?board=other&after=%s", next);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    snprintf(path, sizeof(path), "/rank?board=ce&size=3&before=%s", prev);
    expect_items(path, "a:1 b:2 c:3");
    /* the kinds are not interchangeable; a period on a board without periods is refused */
    snprintf(path, sizeof(path), "/boards/ce/rank?before=%s", next);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s&before=%s", next, prev);
    it_expect_error("GET", path, NULL, 400, "invalid_parameter");
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s&page=2", next);
    it_expect_error("GET", path, NULL, 400, "invalid_parameter");
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s&period=2026-W49", next);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    const struct refusal bad[] = {
        {"GET", "/boards/ce/rank?after=", NULL, 400, "invalid_cursor"},
        {"GET", "/boards/ce/rank?after=abc", NULL, 400, "invalid_cursor"},
        {"GET", "/boards/ce/rank?before=%2B%2B%2B", NULL, 400, "invalid_cursor"},
        {"GET", "/boards/ce/rank?after=MW4xOjotNTph%3D", NULL, 400, "invalid_cursor"},
    };
    expect_refusals(bad, sizeof(bad) / sizeof(bad[0]));
    /* a reset: 410 */
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s", next);
    cJSON_Delete(it_json("POST", "/boards/ce/reset", NULL, 204));
    it_expect_error("GET", path, NULL, 410, "cursor_expired");
    /* a layout change (of the emptied board): 410 */
    write_example("ce");
    d = it_get("/boards/ce/rank?size=3");
    ck_assert(cursor_of(d, "next", next, sizeof(next)));
    cJSON_Delete(d);
    cJSON_Delete(it_json("POST", "/boards/ce/reset", NULL, 204));
    put_board("ce", "{\"order\":\"asc\"}", 200);
    write_example("ce");
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s", next);
    it_expect_error("GET", path, NULL, 410, "cursor_expired");
    /* deleted: 404; re-created: 410 */
    d = it_get("/boards/ce/rank?size=3");
    ck_assert(cursor_of(d, "next", next, sizeof(next)));
    cJSON_Delete(d);
    cJSON_Delete(it_json("DELETE", "/boards/ce", NULL, 204));
    snprintf(path, sizeof(path), "/boards/ce/rank?after=%s", next);
    it_expect_error("GET", path, NULL, 404, "board_not_found");
    write_example("ce");
    it_expect_error("GET", path, NULL, 410, "cursor_expired");
}
END_TEST

/* A periodic board's cursor keeps its period: continued after the period turned, it still walks
 * the period it came from. */
START_TEST(test_cursor_keeps_period)
{
    fixture_set_clock("2036-11-30T12:00:00Z");
    put_board("cp", "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":0}", 201);
    write_example("cp");
    cJSON *d = it_get("/boards/cp/rank?size=4");
    char next[CURSOR_TEXT_MAX], path[1024];
    ck_assert(cursor_of(d, "next", next, sizeof(next)));
    cJSON_Delete(d);
    fixture_set_clock("2036-12-01T12:00:00Z");
    write_json("cp", "{\"id\":\"new\",\"score\":1000}");
    snprintf(path, sizeof(path), "/boards/cp/rank?size=4&after=%s", next);
    expect_items(path, "e:5 f:6 g:7 h:8");
    snprintf(path, sizeof(path), "/boards/cp/rank?size=4&after=%s&period=2036-11-30", next);
    expect_items(path, "e:5 f:6 g:7 h:8");
    snprintf(path, sizeof(path), "/boards/cp/rank?size=4&after=%s&period=2036-12-01", next);
    it_expect_error("GET", path, NULL, 400, "invalid_cursor");
    /* two periods on: not readable any more */
    fixture_set_clock("2036-12-02T12:00:00Z");
    snprintf(path, sizeof(path), "/boards/cp/rank?size=4&after=%s", next);
    it_expect_error("GET", path, NULL, 404, "period_not_found");
}
END_TEST

/* ---------------------------------------------------------------- 9. the side sets under the
 * write paths of issue 14's writes: max_members, several boards, idempotent replays */

/* A write with an Idempotency-Key; returns the body (free it). */
static char *write_keyed(const char *path, const char *json, const char *key_header)
{
    const char *const headers[] = {key_header, NULL};
    struct http_result r;
    ck_assert_int_eq(
        http_req_h(g_port, "POST", path, json, strlen(json), NULL, TEST_TOKEN, headers, &r), 0);
    ck_assert_msg(r.status == 200, "POST %s %s -> %ld %.300s", path, json, r.status, r.body);
    char *body = strdup(r.body);
    http_result_free(&r);
    return body;
}

/* write.lua's max_members trim (one bounded ZPOPMAX in the same call) cuts the popped members'
 * keys from the side set in that call: through a tie group, a whole key inside the popped run,
 * a write below the cut, a lowered limit caught up over two writes. */
START_TEST(test_dense_max_members_trim)
{
    put_board("mm", "{\"max_members\":5,\"page_ttl_ms\":0}", 201);
    /* 8 entries, N = 5: f (the last of the 8 group), g (7, alone) and h (6) are popped: the key
     * of 7 lies strictly inside the popped run, 6 is its edge, 8 is cut through and stays */
    write_json("mm", "{\"entries\":[{\"id\":\"a\",\"score\":10},{\"id\":\"b\",\"score\":10},"
                     "{\"id\":\"c\",\"score\":9},{\"id\":\"d\",\"score\":8},{\"id\":\"e\","
                     "\"score\":8},{\"id\":\"f\",\"score\":8},{\"id\":\"g\",\"score\":7},"
                     "{\"id\":\"h\",\"score\":6}]}");
    ck_assert_int_eq(dense_exact("mm", NULL), 3); /* 10 9 8 */
    expect_items("/boards/mm/rank?rank=dense", "a:1 b:1 c:2 d:3 e:3");
    expect_items("/boards/mm/rank?rank=competition", "a:1 b:1 c:3 d:4 e:4");
    /* a write below the cut: its key is added and taken again in the same call */
    write_json("mm", "{\"id\":\"x\",\"score\":1}");
    ck_assert_int_eq(dense_exact("mm", NULL), 3);
    /* e leaves 8 (d still holds it) for 20; then y (9) pushes out d, the last of 8 */
    write_json("mm", "{\"id\":\"e\",\"score\":12,\"op\":\"incr\"}");
    ck_assert_int_eq(dense_exact("mm", NULL), 4); /* 20 10 9 8 */
    write_json("mm", "{\"id\":\"y\",\"score\":9}");
    ck_assert_int_eq(dense_exact("mm", NULL), 3); /* 20 10 9 */
    expect_items("/boards/mm/rank?rank=dense", "e:1 a:2 b:2 c:3 y:3");
    /* a batch that moves members and trims in one call */
    write_json("mm", "{\"entries\":[{\"id\":\"c\",\"score\":30},{\"id\":\"z\",\"score\":10},"
                     "{\"id\":\"y\",\"score\":2}]}");
    ck_assert_int_eq(dense_exact("mm", NULL), 3); /* 30 20 10: y (2) popped */
    expect_items("/boards/mm/rank?rank=dense", "c:1 e:2 a:3 b:3 z:3");

    /* a lowered limit: 100 members over 13 keys, max_members 3, then each write removes at most
     * its own entries plus 64 (ZPOPMAX of 65, then of the rest) */
    put_board("ml", "{\"page_ttl_ms\":0}", 201);
    char batch[8000] = "{\"entries\":[";
    for (int i = 0; i < 100; i++) {
        size_t at = strlen(batch);
        snprintf(batch + at, sizeof(batch) - at, "%s{\"id\":\"b%d\",\"score\":%d}", i ? "," : "", i,
                 i % 13);
    }
    strcat(batch, "]}");
    write_json("ml", batch);
    ck_assert_int_eq(dense_exact("ml", NULL), 13);
    put_board("ml", "{\"max_members\":3}", 200);
    ck_assert_int_eq(dense_exact("ml", NULL), 13); /* no PUT trims */
    write_json("ml", "{\"id\":\"x\",\"score\":1000}");
    ck_assert_int_eq(dense_exact("ml", NULL), 6); /* 36 left: 1000 and 12..8 */
    write_json("ml", "{\"id\":\"y\",\"score\":1001}");
    ck_assert_int_eq(dense_exact("ml", NULL), 3); /* 1001 1000 12 */
    expect_items("/boards/ml/rank?rank=dense", "y:1 x:2 b12:3");
}
END_TEST

/* POST /scores: every board's set changes with its own side set in the one call; an
 * idempotent replay writes nothing, so no side set changes; a board that keeps its top N trims
 * in the same call. */
START_TEST(test_dense_multi_board_write)
{
    put_board("m1", "{\"page_ttl_ms\":0}", 201);
    put_board("m2", "{\"order\":\"asc\",\"page_ttl_ms\":0}", 201);
    put_board("m3", "{\"max_members\":2,\"page_ttl_ms\":0}", 201);
    write_json("m1", "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"b\",\"score\":3}]}");
    write_json("m2", "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"c\",\"score\":5}]}");
    write_json("m3", "{\"entries\":[{\"id\":\"b\",\"score\":9},{\"id\":\"c\",\"score\":4}]}");
    ck_assert_int_eq(dense_exact("m1", NULL), 2);
    ck_assert_int_eq(dense_exact("m2", NULL), 1);
    ck_assert_int_eq(dense_exact("m3", NULL), 2);
    /* a: 5 -> 7 on m1 (its key 5 goes: alone there), 5 -> 7 on m2 (5 stays: c), new on m3 at 7,
     * where c (4) is popped in the same call */
    cJSON_Delete(it_json("POST", "/scores",
                         "{\"boards\":[\"m1\",\"m2\",\"m3\"],\"id\":\"a\",\"score\":7}", 200));
    ck_assert_int_eq(dense_exact("m1", NULL), 2); /* 7 3 */
    ck_assert_int_eq(dense_exact("m2", NULL), 2); /* 5 7 */
    ck_assert_int_eq(dense_exact("m3", NULL), 2); /* 9 7 */
    expect_items("/boards/m1/rank?rank=dense", "a:1 b:2");
    expect_items("/boards/m2/rank?rank=dense", "c:1 a:2");
    expect_items("/boards/m3/rank?rank=dense", "b:1 a:2");
    /* a new member on every board, one board creating its set's first key */
    put_board("m4", "{\"page_ttl_ms\":0}", 201);
    cJSON_Delete(it_json("POST", "/scores",
                         "{\"boards\":[\"m4\",\"m1\",\"m2\"],\"id\":\"n\",\"score\":3}", 200));
    ck_assert_int_eq(dense_exact("m4", NULL), 1);
    ck_assert_int_eq(dense_exact("m1", NULL), 2); /* 7 3: n joins b's key */
    ck_assert_int_eq(dense_exact("m2", NULL), 3); /* 3 5 7 */
    expect_items("/boards/m1/rank?rank=competition", "a:1 b:2 n:2");
    /* idempotent: the first call writes (b leaves 3 on m1; n is still there), the replay
     * writes nothing and leaves every side set as it is, even after the board moved on */
    const char *body = "{\"boards\":[\"m1\",\"m3\"],\"id\":\"b\",\"score\":1,\"op\":\"incr\"}";
    char *r1 = write_keyed("/scores", body, "Idempotency-Key: dense-1");
    ck_assert_int_eq(dense_exact("m1", NULL), 3); /* 7 4 3 */
    ck_assert_int_eq(dense_exact("m3", NULL), 2); /* 10 7 */
    cJSON_Delete(it_json("DELETE", "/boards/m1/members/n", NULL, 204));
    ck_assert_int_eq(dense_exact("m1", NULL), 2); /* 7 4 */
    char *r2 = write_keyed("/scores", body, "Idempotency-Key: dense-1");
    ck_assert_str_eq(r1, r2);
    ck_assert_int_eq(dense_exact("m1", NULL), 2);
    ck_assert_int_eq(dense_exact("m3", NULL), 2);
    free(r1);
    free(r2);
    /* and on one board, a keyed batch replayed */
    const char *batch = "{\"entries\":[{\"id\":\"p\",\"score\":40},{\"id\":\"q\",\"score\":40}]}";
    r1 = write_keyed("/boards/m4/scores", batch, "Idempotency-Key: dense-2");
    ck_assert_int_eq(dense_exact("m4", NULL), 2);
    write_json("m4", "{\"id\":\"p\",\"score\":41}");
    ck_assert_int_eq(dense_exact("m4", NULL), 3);
    r2 = write_keyed("/boards/m4/scores", batch, "Idempotency-Key: dense-2");
    ck_assert_str_eq(r1, r2);
    ck_assert_int_eq(dense_exact("m4", NULL), 3); /* p stays at 41: nothing replayed wrote */
    free(r1);
    free(r2);
}
END_TEST

/* Rank types on pages under min_version: each rank type's cached page is stamped with the
 * write counter its rows were read at, so a request with a write's version never takes a
 * competition or dense page computed before that write. */
START_TEST(test_rank_types_min_version)
{
    put_board("rv", "{\"page_ttl_ms\":60000}", 201);
    write_example("rv");
    static const char *const types[] = {"ordinal", "competition", "dense"};
    static const char *const before[] = {EX_ORDINAL, EX_COMPETITION, EX_DENSE};
    for (int t = 0; t < 3; t++) {
        char path[200];
        snprintf(path, sizeof(path), "/boards/rv/rank?size=9&rank=%s", types[t]);
        expect_items(path, before[t]); /* computed and cached */
        expect_items(path, before[t]); /* a hit */
    }
    /* i (1) joins the 8 group: one distinct score fewer */
    cJSON *w = it_json("POST", "/boards/rv/scores", "{\"id\":\"i\",\"score\":8}", 200);
    long long version = (long long)json_num(w, "version");
    cJSON_Delete(w);
    ck_assert_int_eq(dense_exact("rv", NULL), 5);
    static const char *const after[] = {"a:1 b:2 c:3 d:4 e:5 f:6 g:7 h:8 i:9",
                                        "a:1 b:2 c:2 d:4 e:5 f:6 g:6 h:6 i:6",
                                        "a:1 b:2 c:2 d:3 e:4 f:5 g:5 h:5 i:5"};
    for (int t = 0; t < 3; t++) {
        char path[200];
        /* without min_version the page cached before the write may be served */
        snprintf(path, sizeof(path), "/boards/rv/rank?size=9&rank=%s", types[t]);
        expect_items(path, before[t]);
        snprintf(path, sizeof(path), "/boards/rv/rank?size=9&rank=%s&min_version=%lld", types[t],
                 version);
        expect_items(path, after[t]);
        /* the page computed for it is the cached one now, for everyone */
        snprintf(path, sizeof(path), "/boards/rv/rank?size=9&rank=%s", types[t]);
        expect_items(path, after[t]);
    }
    /* a score-range page (walk.lua, never cached) always holds the write */
    char path[200];
    snprintf(path, sizeof(path), "/boards/rv/rank?min=1&max=8&rank=dense&min_version=%lld",
             version);
    expect_items(path, "f:5 g:5 h:5 i:5");
}
END_TEST

/* ---------------------------------------------------------------- suite */

Suite *reads_suite(void)
{
    const struct it_timed_case cases[] = {
        {"rank_types_pages", test_rank_types_on_pages, 30},
        {"rank_types_members", test_rank_types_on_member_reads, 30},
        {"rank_types_asc", test_rank_types_asc_and_ties, 30},
        {"dense_after_changes", test_dense_after_changes, 30},
        {"dense_big_trim", test_dense_big_trim_and_compact, 30},
        {"dense_period_sweep", test_dense_period_sweep_and_retain, 30},
        {"dense_unavailable", test_dense_unavailable_for_old_sets, 30},
        {"dense_random_walk", test_dense_random_walk, 120},
        {"many_members", test_many_members, 30},
        {"around_score", test_around_score, 30},
        {"percentiles", test_percentiles, 30},
        {"member_across_boards", test_member_across_boards, 30},
        {"score_range", test_score_range, 30},
        {"cursor_walks", test_cursor_walks, 120},
        {"cursor_expiry", test_cursor_expiry_and_errors, 30},
        {"cursor_period", test_cursor_keeps_period, 30},
        {"dense_max_members", test_dense_max_members_trim, 30},
        {"dense_multi_board", test_dense_multi_board_write, 30},
        {"rank_types_min_version", test_rank_types_min_version, 30},
    };
    return it_suite_with("reads", cases, sizeof(cases) / sizeof(cases[0]), it_setup_clock);
}
