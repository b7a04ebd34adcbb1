/* test_api.c -- every route and status of the HTTP API, over real HTTP against a real Redis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request.h"
#include "suites.h"

static cJSON *get_json(const char *path, long want_status)
{
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == want_status, "GET %s -> %ld %s", path, r.status, r.body);
    cJSON *doc = r.json;
    r.json = NULL;
    http_result_free(&r);
    return doc;
}

/* Assert a request's status and error code; returns nothing, frees everything. */
static void expect_error(const char *method, const char *path, const char *body, const char *token,
                         long status, const char *code)
{
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, method, path, body, body ? strlen(body) : 0, NULL, token, &r),
                     0);
    ck_assert_msg(r.status == status, "%s %s -> %ld %s (want %ld)", method, path, r.status, r.body,
                  status);
    ck_assert_msg(strcmp(http_error_code(&r), code) == 0, "%s %s: code %s, want %s (%s)", method,
                  path, http_error_code(&r), code, r.body);
    const cJSON *msg = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "error"), "message");
    ck_assert_msg(cJSON_IsString(msg) && strlen(msg->valuestring) > 10, "no message: %s", r.body);
    http_result_free(&r);
}

static double num(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);
    ck_assert_msg(cJSON_IsNumber(v), "field %s missing", name);
    return v->valuedouble;
}

static const char *str(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);
    ck_assert_msg(cJSON_IsString(v), "field %s missing", name);
    return v->valuestring;
}

static void seed(const char *board, int n)
{
    for (int i = 1; i <= n; i++) {
        char body[160];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d,\"record\":{\"n\":%d}}", i, i,
                 i);
        it_post_score(board, body);
    }
}

/* ---------------------------------------------------------------- operations */

START_TEST(health_ready_metrics)
{
    cJSON *d = get_json("/healthz", 200);
    ck_assert_str_eq(str(d, "status"), "ok");
    cJSON_Delete(d);
    d = get_json("/readyz", 200);
    cJSON_Delete(d);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/metrics", &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(
        strstr(r.body, "rankd_http_requests_total{route=\"healthz\",status=\"200\"} 1"));
    ck_assert_ptr_nonnull(strstr(r.body,
                                 "rankd_http_request_duration_seconds_bucket{route=\"healthz\","
                                 "status_class=\"2xx\",le=\"+Inf\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(r.body, "rankd_redis_errors_total"));
    ck_assert_ptr_nonnull(strstr(r.headers, "text/plain"));
    http_result_free(&r);
}
END_TEST

/* Error messages that echo client text stay valid UTF-8 (and so valid JSON). */
START_TEST(error_bodies_valid_utf8)
{
    struct http_result r;
    const char *body = "{\"k\xff\xfe\":1}"; /* a field name that is not UTF-8 is echoed */
    ck_assert_int_eq(http_req(g_port, "PUT", "/items/a", body, strlen(body), NULL, TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(request_utf8_valid(r.body, r.len), "not UTF-8: %s", r.body);
    ck_assert_ptr_nonnull(r.json);
    http_result_free(&r);
}
END_TEST

START_TEST(unknown_route_and_method)
{
    expect_error("GET", "/nope", NULL, NULL, 404, "not_found");
    expect_error("GET", "/boards/a/b/c/d/e", NULL, NULL, 404, "not_found");
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/x/rank", "{}", 2, NULL, TEST_TOKEN, &r), 0);
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(http_error_code(&r), "method_not_allowed");
    ck_assert_msg(strstr(r.headers, "Allow: GET, HEAD\r\n"), "%s", r.headers);
    http_result_free(&r);
    /* and HEAD is answered where GET is */
    ck_assert_int_eq(http_req(g_port, "HEAD", "/boards/x", NULL, 0, NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 404); /* no such board: the GET's status, without a body */
    http_result_free(&r);
    expect_error("PATCH", "/boards/x", "{}", TEST_TOKEN, 405, "method_not_allowed");
}
END_TEST

/* ---------------------------------------------------------------- auth */

START_TEST(writes_need_token)
{
    expect_error("PUT", "/boards/b", "{}", NULL, 401, "unauthorized");
    expect_error("PUT", "/boards/b", "{}", "wrong", 403, "forbidden");
    expect_error("PUT", "/boards/b", "{}", TEST_TOKEN "x", 403, "forbidden");
    expect_error("POST", "/boards/b/scores", "{\"id\":\"a\",\"score\":1}", NULL, 401,
                 "unauthorized");
    expect_error("DELETE", "/boards/b", NULL, NULL, 401, "unauthorized");
    expect_error("DELETE", "/items/a", NULL, "nope", 403, "forbidden");
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

START_TEST(writes_disabled_without_token)
{
    struct rankd *off = rankd_test_start(g_redis.port, "");
    struct http_result r;
    ck_assert_int_eq(http_req(rankd_port(off), "PUT", "/boards/b", "{}", 2, NULL, "x", &r), 0);
    ck_assert_int_eq(r.status, 403);
    ck_assert_str_eq(http_error_code(&r), "writes_disabled");
    ck_assert_ptr_nonnull(strstr(r.body, "RANKD_WRITE_TOKEN"));
    http_result_free(&r);
    rankd_stop(off);
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

/* ---------------------------------------------------------------- boards */

START_TEST(board_put_get_list_delete)
{
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "PUT", "/boards/b1",
                                "{\"order\":\"asc\",\"tiebreak\":\"id\",\"page_size\":5,"
                                "\"page_ttl_ms\":0,\"score_decimals\":2}",
                                &r),
                     0);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(str(r.json, "order"), "asc");
    ck_assert_str_eq(str(r.json, "tiebreak"), "id");
    ck_assert_int_eq((int)num(r.json, "page_size"), 5);
    http_result_free(&r);
    ck_assert_int_eq(http_write(g_port, "PUT", "/boards/b1", "{\"page_size\":7}", &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(str(r.json, "order"), "asc"); /* untouched fields stay */
    ck_assert_int_eq((int)num(r.json, "page_size"), 7);
    http_result_free(&r);

    cJSON *d = get_json("/boards/b1", 200);
    const cJSON *range = cJSON_GetObjectItem(d, "score_range");
    /* tiebreak id with decimals: 15 significant digits, so every accepted score is exact */
    ck_assert_double_eq(num(range, "max"), 9999999999999.99);
    ck_assert_double_eq(num(range, "min"), -9999999999999.99);
    ck_assert_int_eq((int)num(d, "score_decimals"), 2);
    ck_assert_int_eq((int)num(d, "total"), 0);
    cJSON_Delete(d);

    it_post_score("b2", "{\"id\":\"x\",\"score\":1}"); /* created with the defaults */
    d = get_json("/boards/b2", 200);
    ck_assert_str_eq(str(d, "order"), "desc");
    ck_assert_str_eq(str(d, "tiebreak"), "first");
    ck_assert_double_eq(num(cJSON_GetObjectItem(d, "score_range"), "max"), 4294967295.0);
    cJSON_Delete(d);

    d = get_json("/boards", 200);
    const cJSON *list = cJSON_GetObjectItem(d, "boards");
    ck_assert_int_eq(cJSON_GetArraySize(list), 2);
    ck_assert_str_eq(str(cJSON_GetArrayItem(list, 0), "board"), "b1");
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(list, 1), "total"), 1);
    cJSON_Delete(d);

    ck_assert_int_eq(it_status("DELETE", "/boards/b2", NULL), 204);
    expect_error("GET", "/boards/b2", NULL, NULL, 404, "board_not_found");
    expect_error("GET", "/boards/b2/rank", NULL, NULL, 404, "board_not_found");
    expect_error("DELETE", "/boards/b2", NULL, TEST_TOKEN, 404, "board_not_found");
    d = get_json("/boards", 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "boards")), 1);
    cJSON_Delete(d);
    /* the record of a deleted board's member stays: records are shared */
    ck_assert_int_eq(it_status("GET", "/items/x", NULL), 404);
}
END_TEST

START_TEST(board_put_validation)
{
    expect_error("PUT", "/boards/b", "{\"order\":\"up\"}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"tiebreak\":1}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"page_size\":0}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"page_size\":101}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"page_size\":2.5}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"score_decimals\":10}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"page_ttl_ms\":-1}", TEST_TOKEN, 400, "invalid_field");
    expect_error("PUT", "/boards/b", "{\"colour\":\"red\"}", TEST_TOKEN, 400, "unknown_field");
    expect_error("PUT", "/boards/b", "{\"page_size\":5,\"page_size\":50}", TEST_TOKEN, 400,
                 "duplicate_field");
    expect_error("PUT", "/boards/b", "[1]", TEST_TOKEN, 400, "invalid_body");
    expect_error("PUT", "/boards/b", "{", TEST_TOKEN, 400, "invalid_json");
    expect_error("PUT", "/boards/b", "", TEST_TOKEN, 400, "invalid_json");
    expect_error("PUT", "/boards/b%20c", "{}", TEST_TOKEN, 400, "invalid_board");
    expect_error("PUT", "/boards/a:b", "{}", TEST_TOKEN, 400, "invalid_board");
    char long_name[120] = "/boards/";
    memset(long_name + 8, 'x', 65);
    expect_error("PUT", long_name, "{}", TEST_TOKEN, 400, "invalid_board");
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

START_TEST(board_layout_change_conflicts)
{
    ck_assert_int_eq(it_status("PUT", "/boards/b", "{\"order\":\"desc\"}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/b", "{\"order\":\"asc\"}"), 200); /* empty: ok */
    it_post_score("b", "{\"id\":\"a\",\"score\":1}");
    expect_error("PUT", "/boards/b", "{\"order\":\"desc\"}", TEST_TOKEN, 409, "board_not_empty");
    expect_error("PUT", "/boards/b", "{\"tiebreak\":\"id\"}", TEST_TOKEN, 409, "board_not_empty");
    expect_error("PUT", "/boards/b", "{\"score_decimals\":1}", TEST_TOKEN, 409, "board_not_empty");
    ck_assert_int_eq(it_status("PUT", "/boards/b", "{\"order\":\"asc\",\"page_size\":3}"), 200);
    cJSON *d = get_json("/boards/b", 200);
    ck_assert_str_eq(str(d, "order"), "asc");
    ck_assert_int_eq((int)num(d, "page_size"), 3);
    cJSON_Delete(d);
}
END_TEST

/* score_format: how pages show scores; display only, so it changes on a board with members. */
START_TEST(board_score_format)
{
    it_post_score("sf", "{\"id\":\"a\",\"score\":61234}"); /* created with the defaults */
    cJSON *d = get_json("/boards/sf", 200);
    ck_assert_str_eq(str(d, "score_format"), BOARD_SCORE_FORMAT_DEFAULT);
    cJSON_Delete(d);
    ck_assert_int_eq(it_status("PUT", "/boards/sf", "{\"score_format\":\"duration_ms\"}"), 200);
    ck_assert_int_eq(it_status("PUT", "/boards/sf", "{\"page_size\":5}"), 200); /* it stays */
    d = get_json("/boards/sf", 200);
    ck_assert_str_eq(str(d, "score_format"), "duration_ms");
    ck_assert_int_eq((int)num(d, "total"), 1); /* no reset: the scores are as they were */
    cJSON_Delete(d);
    d = get_json("/boards/sf/rank?page=1", 200);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "items"), 0), "score"),
                     61234);
    cJSON_Delete(d);

    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "PUT", "/boards/sf2",
                                "{\"score_format\":\"decimal\",\"score_decimals\":3}", &r),
                     0);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(str(r.json, "score_format"), "decimal");
    http_result_free(&r);

    /* unknown values: 400 invalid_field, and nothing changes or is created */
    long long keys = it_dbsize();
    static const char *const bad[] = {"{\"score_format\":\"seconds\"}",
                                      "{\"score_format\":\"Integer\"}", "{\"score_format\":\"\"}",
                                      "{\"score_format\":1}", "{\"score_format\":null}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_error("PUT", "/boards/sf", bad[i], TEST_TOKEN, 400, "invalid_field");
        expect_error("PUT", "/boards/sf-new", bad[i], TEST_TOKEN, 400, "invalid_field");
    }
    ck_assert_int_eq(it_dbsize(), keys);
    d = get_json("/boards/sf", 200);
    ck_assert_str_eq(str(d, "score_format"), "duration_ms");
    cJSON_Delete(d);
}
END_TEST

/* GET /boards reads the registry and each board's total (pipelined in chunks of 256). */
START_TEST(many_boards_listed)
{
    redisReply *r;
    for (int i = 0; i < 600; i++) { /* set up directly: 600 boards through HTTP would be slow */
        r = redis_admin_cmd(g_admin,
                            "HSET rankd:{b%03d}:meta order desc tiebreak first "
                            "score_decimals 0 page_size 20 page_ttl_ms 1000",
                            i);
        freeReplyObject(r);
        freeReplyObject(redis_admin_cmd(g_admin, "SADD rankd:boards b%03d", i));
        for (int m = 0; m < i % 3; m++)
            freeReplyObject(redis_admin_cmd(g_admin, "ZADD rankd:{b%03d}:z %d m%d", i, m, m));
    }
    cJSON *d = get_json("/boards", 200);
    const cJSON *list = cJSON_GetObjectItem(d, "boards");
    ck_assert_int_eq(cJSON_GetArraySize(list), 600);
    for (int i = 0; i < 600; i++) {
        const cJSON *b = cJSON_GetArrayItem(list, i);
        char name[16];
        snprintf(name, sizeof(name), "b%03d", i);
        ck_assert_str_eq(str(b, "board"), name);
        ck_assert_int_eq((int)num(b, "total"), i % 3);
    }
    cJSON_Delete(d);
}
END_TEST

/* GET /boards pages a big registry with a cursor: every board once across the pages (SSCAN may
 * repeat one; none here, the set does not change), each page bounded, the last with a null
 * next_cursor; bad cursors and counts are 400 before any Redis call. */
START_TEST(boards_listed_by_cursor)
{
    enum { NB = 1500, COUNT = 100 };
    for (int i = 0; i < NB; i++) /* registry only: totals of absent sets are 0 */
        freeReplyObject(redis_admin_cmd(g_admin, "SADD rankd:boards c%04d", i));
    static char seen[NB];
    memset(seen, 0, sizeof(seen));
    char path[96] = "/boards?count=100";
    int pages = 0, total = 0, largest = 0;
    for (;;) {
        cJSON *d = get_json(path, 200);
        const cJSON *list = cJSON_GetObjectItem(d, "boards");
        int n = cJSON_GetArraySize(list);
        largest = n > largest ? n : largest;
        for (int i = 0; i < n; i++) {
            const char *name = str(cJSON_GetArrayItem(list, i), "board");
            int at = atoi(name + 1);
            ck_assert_msg(at >= 0 && at < NB && !seen[at], "board %s listed twice", name);
            seen[at] = 1;
            total++;
        }
        const cJSON *next = cJSON_GetObjectItem(d, "next_cursor");
        ck_assert_msg(next, "no next_cursor");
        pages++;
        if (cJSON_IsNull(next)) {
            cJSON_Delete(d);
            break;
        }
        ck_assert_msg(cJSON_IsString(next), "next_cursor is not a string");
        snprintf(path, sizeof(path), "/boards?count=%d&cursor=%s", COUNT, next->valuestring);
        cJSON_Delete(d);
        ck_assert_msg(pages < NB, "the cursor never ends");
    }
    fprintf(stderr, "api: boards by cursor: %d boards in %d pages of at most %d\n", total, pages,
            largest);
    ck_assert_int_eq(total, NB);
    ck_assert_msg(pages >= NB / (3 * COUNT), "%d pages of count %d for %d boards", pages, COUNT,
                  NB);
    ck_assert_msg(largest <= 3 * COUNT, "a page of %d boards for count %d", largest, COUNT);
    expect_error("GET", "/boards?cursor=-1", NULL, NULL, 400, "invalid_cursor");
    expect_error("GET", "/boards?cursor=abc", NULL, NULL, 400, "invalid_cursor");
    expect_error("GET", "/boards?cursor=99999999999999999999999", NULL, NULL, 400,
                 "invalid_cursor");
    expect_error("GET", "/boards?count=0", NULL, NULL, 400, "invalid_parameter");
    expect_error("GET", "/boards?count=1001", NULL, NULL, 400, "invalid_parameter");
}
END_TEST

/* ---------------------------------------------------------------- paging */

START_TEST(rank_pages)
{
    seed("p", 45);
    cJSON *d = get_json("/boards/p/rank", 200);
    ck_assert_int_eq((int)num(d, "page"), 1);
    ck_assert_int_eq((int)num(d, "size"), 20);
    ck_assert_int_eq((int)num(d, "total"), 45);
    ck_assert_int_eq((int)num(d, "pages"), 3);
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 20);
    const cJSON *first = cJSON_GetArrayItem(items, 0);
    ck_assert_int_eq((int)num(first, "rank"), 1);
    ck_assert_str_eq(str(first, "id"), "m45");
    ck_assert_int_eq((int)num(first, "score"), 45);
    ck_assert_int_eq((int)num(cJSON_GetObjectItem(first, "record"), "n"), 45);
    cJSON_Delete(d);

    d = get_json("/boards/p/rank?page=3", 200);
    items = cJSON_GetObjectItem(d, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 5);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(items, 0), "rank"), 41);
    ck_assert_str_eq(str(cJSON_GetArrayItem(items, 4), "id"), "m1");
    cJSON_Delete(d);

    /* past the end: empty, with the true total and pages */
    d = get_json("/boards/p/rank?page=4", 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 0);
    ck_assert_int_eq((int)num(d, "total"), 45);
    ck_assert_int_eq((int)num(d, "pages"), 3);
    cJSON_Delete(d);

    d = get_json("/boards/p/rank?page=2147483647&size=100", 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 0);
    ck_assert_double_eq(num(d, "page"), 2147483647.0);
    cJSON_Delete(d);

    /* leading zeros, explicit size, unknown parameters ignored */
    d = get_json("/boards/p/rank?page=02&size=010&utm=x&flag", 200);
    ck_assert_int_eq((int)num(d, "page"), 2);
    ck_assert_int_eq((int)num(d, "size"), 10);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "items"), 0), "rank"), 11);
    cJSON_Delete(d);

    /* the board's page_size is the default size */
    ck_assert_int_eq(it_status("PUT", "/boards/p", "{\"page_size\":7}"), 200);
    d = get_json("/boards/p/rank?page=7", 200);
    ck_assert_int_eq((int)num(d, "size"), 7);
    ck_assert_int_eq((int)num(d, "pages"), 7);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 3);
    cJSON_Delete(d);
}
END_TEST

START_TEST(rank_parameter_errors)
{
    seed("p", 3);
    static const char *const bad[] = {
        "page=0",
        "page=-1",
        "page=abc",
        "page=",
        "page=1.5",
        "page=2147483648",
        "page=99999999999999999999",
        "page=1&page=2",
        "size=0",
        "size=101",
        "size=1&size=2",
        "size=-5",
        "page=%zz",
        "page=+1",
        "page=1e3",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[200];
        snprintf(path, sizeof(path), "/boards/p/rank?%s", bad[i]);
        struct http_result r;
        ck_assert_int_eq(http_get(g_port, path, &r), 0);
        ck_assert_msg(r.status == 400, "%s -> %ld %s", path, r.status, r.body);
        http_result_free(&r);
    }
    expect_error("GET", "/boards/p/rank?page=0", NULL, NULL, 400, "invalid_parameter");
    expect_error("GET", "/boards/nope/rank", NULL, NULL, 404, "board_not_found");
    expect_error("GET", "/boards/no%2Fpe/rank", NULL, NULL, 400, "invalid_board");
}
END_TEST

START_TEST(rank_shorthand_and_empty_board)
{
    seed("default", 3);
    cJSON *d = get_json("/rank?page=1", 200);
    ck_assert_str_eq(str(d, "board"), "default");
    ck_assert_int_eq((int)num(d, "total"), 3);
    cJSON_Delete(d);
    ck_assert_int_eq(it_status("PUT", "/boards/empty", "{}"), 201);
    d = get_json("/rank?board=empty&size=5", 200);
    ck_assert_str_eq(str(d, "board"), "empty");
    ck_assert_int_eq((int)num(d, "pages"), 0);
    ck_assert_int_eq((int)num(d, "total"), 0);
    cJSON_Delete(d);
    expect_error("GET", "/rank?board=missing", NULL, NULL, 404, "board_not_found");
    expect_error("GET", "/rank?board=a&board=b", NULL, NULL, 400, "invalid_board");
    expect_error("GET", "/rank?board=a%3Ab", NULL, NULL, 400, "invalid_board");
}
END_TEST

/* ---------------------------------------------------------------- members */

START_TEST(member_lookup_and_around)
{
    seed("m", 45);
    cJSON *d = get_json("/boards/m/members/m30", 200);
    ck_assert_str_eq(str(d, "id"), "m30");
    ck_assert_int_eq((int)num(d, "rank"), 16);
    ck_assert_int_eq((int)num(d, "page"), 1);
    ck_assert_int_eq((int)num(d, "score"), 30);
    ck_assert_int_eq((int)num(cJSON_GetObjectItem(d, "record"), "n"), 30);
    cJSON_Delete(d);
    d = get_json("/boards/m/members/m30?size=5", 200);
    ck_assert_int_eq((int)num(d, "page"), 4);
    cJSON_Delete(d);
    expect_error("GET", "/boards/m/members/zzz", NULL, NULL, 404, "member_not_found");
    expect_error("GET", "/boards/nope/members/m1", NULL, NULL, 404, "board_not_found");
    expect_error("GET", "/boards/m/members/m1?size=0", NULL, NULL, 400, "invalid_parameter");

    /* around: centred, clamped at both ends */
    d = get_json("/boards/m/members/m30/around?size=5", 200);
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 5);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(items, 0), "rank"), 14);
    ck_assert_str_eq(str(cJSON_GetArrayItem(items, 2), "id"), "m30");
    cJSON_Delete(d);
    d = get_json("/boards/m/members/m45/around?size=5", 200);
    items = cJSON_GetObjectItem(d, "items");
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(items, 0), "rank"), 1);
    ck_assert_int_eq(cJSON_GetArraySize(items), 5);
    cJSON_Delete(d);
    d = get_json("/boards/m/members/m1/around?size=5", 200);
    items = cJSON_GetObjectItem(d, "items");
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(items, 0), "rank"), 41);
    ck_assert_str_eq(str(cJSON_GetArrayItem(items, 4), "id"), "m1");
    cJSON_Delete(d);
    d = get_json("/boards/m/members/m1/around?size=100", 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 45);
    cJSON_Delete(d);
    expect_error("GET", "/boards/m/members/nope/around", NULL, NULL, 404, "member_not_found");
}
END_TEST

START_TEST(member_delete)
{
    seed("d", 3);
    ck_assert_int_eq(it_status("DELETE", "/boards/d/members/m2", NULL), 204);
    expect_error("DELETE", "/boards/d/members/m2", NULL, TEST_TOKEN, 404, "member_not_found");
    expect_error("DELETE", "/boards/zz/members/m2", NULL, TEST_TOKEN, 404, "board_not_found");
    cJSON *d = get_json("/boards/d/members/m1", 200);
    ck_assert_int_eq((int)num(d, "rank"), 2);
    cJSON_Delete(d);
}
END_TEST

/* Ids are whole sorted-set members, never parts of keys: nothing collides. */
START_TEST(ids_never_collide)
{
    it_post_score("x", "{\"id\":\"a:b\",\"score\":1}");
    it_post_score("y", "{\"id\":\"b\",\"score\":2}");
    it_post_score("x", "{\"id\":\"{y}:z\",\"score\":3,\"record\":{\"k\":\"braces\"}}");
    it_post_score("x", "{\"id\":\"with space\",\"score\":4}");
    it_post_score("x", "{\"id\":\"a+b\",\"score\":5}");
    it_post_score("x", "{\"id\":\"a/b\",\"score\":6}");
    it_post_score("x", "{\"id\":\"Sant Julià de Lòria\",\"score\":7}");
    cJSON *d = get_json("/boards/x/rank", 200);
    ck_assert_int_eq((int)num(d, "total"), 6);
    cJSON_Delete(d);
    d = get_json("/boards/y/rank", 200);
    ck_assert_int_eq((int)num(d, "total"), 1);
    cJSON_Delete(d);
    d = get_json("/boards/x/members/a%3Ab", 200);
    ck_assert_str_eq(str(d, "id"), "a:b");
    cJSON_Delete(d);
    d = get_json("/boards/x/members/%7By%7D%3Az", 200);
    ck_assert_str_eq(str(cJSON_GetObjectItem(d, "record"), "k"), "braces");
    cJSON_Delete(d);
    d = get_json("/boards/x/members/with%20space", 200);
    ck_assert_int_eq((int)num(d, "score"), 4);
    cJSON_Delete(d);
    d = get_json("/boards/x/members/a%2Bb", 200); /* %2B is '+' */
    ck_assert_str_eq(str(d, "id"), "a+b");
    cJSON_Delete(d);
    d = get_json("/boards/x/members/a%2Fb", 200);
    ck_assert_int_eq((int)num(d, "score"), 6);
    cJSON_Delete(d);
    d = get_json("/boards/x/members/Sant%20Juli%C3%A0%20de%20L%C3%B2ria", 200);
    ck_assert_int_eq((int)num(d, "rank"), 1);
    cJSON_Delete(d);
    expect_error("GET", "/boards/x/members/b", NULL, NULL, 404, "member_not_found");
    expect_error("GET", "/boards/x/members/a%00b", NULL, NULL, 400, "invalid_id");
    expect_error("GET", "/boards/x/members/%C3", NULL, NULL, 400, "invalid_id");
    expect_error("GET", "/boards/x/members/a%zz", NULL, NULL, 400, "invalid_path");
}
END_TEST

/* The error of one request to rankd on `port`: its status, code and message (into msg). */
static long error_of(int port, const char *path, char *code, char *msg, size_t len)
{
    struct http_result r;
    ck_assert_int_eq(http_req(port, "GET", path, NULL, 0, NULL, NULL, &r), 0);
    long status = r.status;
    snprintf(code, 64, "%s", http_error_code(&r));
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "error"), "message");
    snprintf(msg, len, "%s", cJSON_IsString(m) ? m->valuestring : "");
    http_result_free(&r);
    return status;
}

/* A path over 2048 bytes is 414 uri_too_long, and so is a segment over 512 bytes, each saying
 * so; an unknown path within the limit is 404, however long; only a malformed escape is
 * "malformed" (before: a 6,000-byte path of letters was 400 invalid_path "The path has a
 * malformed percent escape.", a 600-byte id "a malformed percent escape or an over-long
 * segment"). */
static char web_dir[64];

static void with_web_dir(struct config *cfg)
{
    snprintf(cfg->static_dir, sizeof(cfg->static_dir), "%s", web_dir);
}

START_TEST(long_paths)
{
    /* with a web frontend directory, where an unknown path is looked up */
    snprintf(web_dir, sizeof(web_dir), "/tmp/rankd-web-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(web_dir));
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, with_web_dir, NULL);
    int port = rankd_port(app);
    char path[7000], code[64], msg[600];
    path[0] = '/';
    memset(path + 1, 'a', 6000);
    path[6001] = '\0';
    long s = error_of(port, path, code, msg, sizeof(msg));
    ck_assert_msg(s == 414 && strcmp(code, "uri_too_long") == 0 && strstr(msg, "2048 bytes") &&
                      !strstr(msg, "escape"),
                  "%ld %s %s", s, code, msg);
    fprintf(stderr, "api: a 6,001-byte path: %ld %s: %s\n", s, code, msg);
    snprintf(path, sizeof(path), "/boards/x/%06000d", 0);
    s = error_of(port, path, code, msg, sizeof(msg));
    ck_assert_msg(s == 414 && strcmp(code, "uri_too_long") == 0, "%ld %s %s", s, code, msg);
    memset(path + 1, 'a', 2047); /* 2048 bytes: not too long, just unknown */
    path[2048] = '\0';
    s = error_of(port, path, code, msg, sizeof(msg));
    ck_assert_msg(s == 404 && strcmp(code, "not_found") == 0, "%ld %s %s", s, code, msg);
    snprintf(path, sizeof(path), "/boards/x/members/%0600d", 0);
    s = error_of(port, path, code, msg, sizeof(msg));
    ck_assert_msg(s == 414 && strcmp(code, "uri_too_long") == 0 && strstr(msg, "512 bytes") &&
                      !strstr(msg, "escape"),
                  "%ld %s %s", s, code, msg);
    fprintf(stderr, "api: a 600-byte id: %ld %s: %s\n", s, code, msg);
    s = error_of(port, "/boards/x/members/a%zz", code, msg, sizeof(msg));
    ck_assert_msg(s == 400 && strcmp(code, "invalid_path") == 0 && strstr(msg, "escape") &&
                      !strstr(msg, "long"),
                  "%ld %s %s", s, code, msg);
    s = error_of(port, "/a%zz", code, msg, sizeof(msg)); /* a web frontend path */
    ck_assert_msg(s == 400 && strcmp(code, "invalid_path") == 0, "%ld %s %s", s, code, msg);
    rankd_stop(app);
    rmdir(web_dir);
}
END_TEST

/* ---------------------------------------------------------------- score writes */

START_TEST(score_write_replies)
{
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/s/scores",
                                "{\"id\":\"a\",\"score\":10,\"record\":{\"name\":\"A\"}}", &r),
                     0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(str(r.json, "id"), "a");
    ck_assert_int_eq((int)num(r.json, "score"), 10);
    ck_assert_int_eq((int)num(r.json, "rank"), 1);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.json, "updated")));
    http_result_free(&r);
    /* set to the same score: nothing changes */
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/s/scores", "{\"id\":\"a\",\"score\":10}", &r), 0);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.json, "updated")));
    http_result_free(&r);
    /* incr, negative allowed */
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/s/scores",
                                "{\"id\":\"a\",\"score\":-3,\"op\":\"incr\"}", &r),
                     0);
    ck_assert_int_eq((int)num(r.json, "score"), 7);
    http_result_free(&r);
    /* incr of an absent member starts at 0 */
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/s/scores",
                                "{\"id\":\"b\",\"score\":4,\"op\":\"incr\"}", &r),
                     0);
    ck_assert_int_eq((int)num(r.json, "score"), 4);
    ck_assert_int_eq((int)num(r.json, "rank"), 2);
    http_result_free(&r);
    /* best: better replaces, worse keeps */
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/s/scores",
                                "{\"id\":\"b\",\"score\":9,\"op\":\"best\"}", &r),
                     0);
    ck_assert_int_eq((int)num(r.json, "score"), 9);
    ck_assert_int_eq((int)num(r.json, "rank"), 1);
    http_result_free(&r);
    /* the record of an entry is stored at /items/{id} */
    cJSON *d = get_json("/items/a", 200);
    ck_assert_str_eq(str(d, "name"), "A");
    cJSON_Delete(d);
}
END_TEST

START_TEST(score_write_batch)
{
    struct http_result r;
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/bt/scores",
                   "{\"entries\":[{\"id\":\"a\",\"score\":1},{\"id\":\"b\",\"score\":2},"
                   "{\"id\":\"a\",\"score\":5,\"op\":\"incr\"}]}",
                   &r),
        0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq((int)num(r.json, "applied"), 3);
    http_result_free(&r);
    cJSON *d = get_json("/boards/bt/members/a", 200);
    ck_assert_int_eq((int)num(d, "score"), 6);
    cJSON_Delete(d);

    /* one bad entry rejects the whole batch; nothing is written */
    long long before = it_dbsize();
    expect_error("POST", "/boards/bt/scores",
                 "{\"entries\":[{\"id\":\"c\",\"score\":1},{\"id\":\"\",\"score\":2}]}", TEST_TOKEN,
                 400, "invalid_id");
    expect_error("POST", "/boards/bt/scores",
                 "{\"entries\":[{\"id\":\"c\",\"score\":1},{\"id\":\"d\",\"score\":0.5}]}",
                 TEST_TOKEN, 422, "invalid_score");
    ck_assert_int_eq(it_dbsize(), before);
    expect_error("GET", "/boards/bt/members/c", NULL, NULL, 404, "member_not_found");

    /* more than 1000 entries */
    struct buf big = {0};
    buf_append(&big, "{\"entries\":[", 12);
    for (int i = 0; i < 1001; i++) {
        char e[64];
        int n = snprintf(e, sizeof(e), "%s{\"id\":\"e%d\",\"score\":%d}", i ? "," : "", i, i);
        buf_append(&big, e, (size_t)n);
    }
    buf_append(&big, "]}", 2);
    expect_error("POST", "/boards/bt/scores", big.data, TEST_TOKEN, 413, "invalid_entries");
    buf_free(&big);
}
END_TEST

START_TEST(score_write_validation)
{
    static const struct {
        const char *body;
        long status;
        const char *code;
    } cases[] = {
        {"{\"score\":1}", 400, "invalid_id"},
        {"{\"id\":5,\"score\":1}", 400, "invalid_id"},
        {"{\"id\":\"\",\"score\":1}", 400, "invalid_id"},
        {"{\"id\":\"a\\u0001b\",\"score\":1}", 400, "invalid_id"},
        {"{\"id\":\"a\\u0000b\",\"score\":1}", 400, "invalid_json"},
        {"{\"id\":\"a\"}", 422, "invalid_score"},
        {"{\"id\":\"a\",\"score\":\"5\"}", 422, "invalid_score"},
        /* finite as a literal (JSON has no infinity), judged by its digits */
        {"{\"id\":\"a\",\"score\":1e400}", 422, "score_out_of_range"},
        {"{\"id\":\"a\",\"score\":1.5}", 422, "invalid_score"},
        {"{\"id\":\"a\",\"score\":4294967296}", 422, "score_out_of_range"},
        {"{\"id\":\"a\",\"score\":-4294967296}", 422, "score_out_of_range"},
        {"{\"id\":\"a\",\"score\":1,\"op\":\"max\"}", 400, "invalid_op"},
        {"{\"id\":\"a\",\"score\":1,\"extra\":1}", 400, "unknown_field"},
        {"{\"id\":\"a\",\"score\":1,\"score\":2}", 400, "duplicate_field"},
        {"{\"id\":\"a\",\"id\":\"b\",\"score\":1}", 400, "duplicate_field"},
        {"{\"id\":\"a\",\"score\":1,\"record\":[1]}", 400, "invalid_record"},
        {"{\"id\":\"a\",\"score\":1,\"record\":{\"n\":{\"deep\":1}}}", 400, "invalid_record"},
        {"{\"id\":\"a\",\"score\":1,\"record\":{\"n\":[1]}}", 400, "invalid_record"},
        {"[]", 400, "invalid_entry"},
        {"not json", 400, "invalid_json"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_error("POST", "/boards/v/scores", cases[i].body, TEST_TOKEN, cases[i].status,
                     cases[i].code);
    /* a record above 1 KiB */
    char body[2000];
    char pad[1100];
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    snprintf(body, sizeof(body), "{\"id\":\"a\",\"score\":1,\"record\":{\"p\":\"%s\"}}", pad);
    expect_error("POST", "/boards/v/scores", body, TEST_TOKEN, 413, "record_too_large");
    /* a 129-byte id */
    char id[130];
    memset(id, 'i', 129);
    id[129] = '\0';
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":1}", id);
    expect_error("POST", "/boards/v/scores", body, TEST_TOKEN, 400, "invalid_id");
    ck_assert_int_eq(it_dbsize(), 0);

    /* An escaped backslash before the text u0000 is no NUL: the id is the 7 bytes a\u0000. */
    struct http_result r;
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/v/scores", "{\"id\":\"a\\\\u0000\",\"score\":1}", &r),
        0);
    ck_assert_msg(r.status == 200, "-> %ld %s", r.status, r.body);
    http_result_free(&r);
    cJSON *m = get_json("/boards/v/members/a%5Cu0000", 200);
    ck_assert_str_eq(str(m, "id"), "a\\u0000");
    cJSON_Delete(m);
}
END_TEST

START_TEST(body_limits_and_types)
{
    size_t n = 1024 * 1024 + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "PUT", "/boards/b", big, n, NULL, TEST_TOKEN, &r), 0);
    ck_assert_int_eq(r.status, 413);
    ck_assert_str_eq(http_error_code(&r), "body_too_large");
    http_result_free(&r);
    free(big);
    ck_assert_int_eq(http_req(g_port, "PUT", "/boards/b", "{}", 2, "text/plain", TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq(r.status, 415);
    http_result_free(&r);
    ck_assert_int_eq(
        http_req(g_port, "PUT", "/boards/b", "{}", 2, "application/jsonx", TEST_TOKEN, &r), 0);
    ck_assert_int_eq(r.status, 415); /* a media type, not a prefix */
    http_result_free(&r);
    ck_assert_int_eq(http_req(g_port, "PUT", "/boards/b", "{}", 2,
                              "Application/JSON ; charset=utf-8", TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq(r.status, 201);
    http_result_free(&r);
    ck_assert_int_eq(it_status("DELETE", "/boards/b", NULL), 204);
    expect_error("DELETE", "/boards/b", "{}", TEST_TOKEN, 400, "unexpected_body");
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

/* POST an NDJSON body with Transfer-Encoding: chunked (libcurl would need a read callback; a
 * socket is simpler), in chunks of `chunk` bytes; returns the raw reply (malloc'd). */
static char *post_chunked(const char *path, const char *body, size_t len, size_t chunk)
{
    int fd = connect_loopback(g_port);
    ck_assert(fd >= 0);
    struct buf req = {0};
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "POST %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
                     "Connection: close\r\n\r\n",
                     path, TEST_TOKEN);
    buf_append(&req, head, (size_t)n);
    for (size_t at = 0; at < len; at += chunk) {
        size_t k = len - at < chunk ? len - at : chunk;
        n = snprintf(head, sizeof(head), "%zx\r\n", k);
        buf_append(&req, head, (size_t)n);
        buf_append(&req, body + at, k);
        buf_append(&req, "\r\n", 2);
    }
    buf_append(&req, "0\r\n\r\n", 5);
    /* all at once: MHD then finds many chunks in one read, the case that once ran two uploads
     * of one request at the same time */
    for (size_t sent = 0; sent < req.len;) {
        ssize_t w = write(fd, req.data + sent, req.len - sent);
        ck_assert(w > 0);
        sent += (size_t)w;
    }
    struct buf reply = {0};
    char in[4096];
    ssize_t r;
    while ((r = read(fd, in, sizeof(in))) > 0)
        buf_append(&reply, in, (size_t)r);
    close(fd);
    buf_free(&req);
    ck_assert_msg(reply.len > 0, "no reply to the chunked upload");
    return reply.data;
}

START_TEST(ndjson_chunked_upload)
{
    enum { LINES = 5000 };
    struct buf body = {0};
    for (int i = 0; i < LINES; i++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "{\"id\":\"c%05d\",\"score\":%d}\n", i, i);
        buf_append(&body, line, (size_t)n);
    }
    size_t sizes[] = {97, 4096, 65536};
    for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
        char path[64];
        snprintf(path, sizeof(path), "/boards/ch%zu/scores", t);
        char *reply = post_chunked(path, body.data, body.len, sizes[t]);
        ck_assert_msg(strncmp(reply, "HTTP/1.1 200", 12) == 0 &&
                          strstr(reply, "\"applied\":5000,\"rejected_total\":0"),
                      "chunks of %zu bytes: %.300s", sizes[t], reply);
        free(reply);
        snprintf(path, sizeof(path), "/boards/ch%zu", t);
        cJSON *d = get_json(path, 200);
        ck_assert_int_eq((int)num(d, "total"), LINES);
        cJSON_Delete(d);
    }
    buf_free(&body);
}
END_TEST

START_TEST(ndjson_stream)
{
    const char *body = "{\"id\":\"a\",\"score\":3,\"record\":{\"n\":\"A\"}}\n"
                       "\n"
                       "{\"id\":\"b\",\"score\":2}\r\n"
                       "not json\n"
                       "{\"id\":\"c\",\"score\":1.5}\n"
                       "{\"id\":\"d\",\"score\":4294967295}\n"
                       "{\"id\":\"d\",\"score\":1,\"op\":\"incr\"}\n"
                       "{\"id\":\"e\",\"score\":1}";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/nd/scores", body, strlen(body),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
    ck_assert_int_eq((int)num(r.json, "applied"), 4);
    ck_assert_int_eq((int)num(r.json, "rejected_total"), 3);
    const cJSON *rej = cJSON_GetObjectItem(r.json, "rejected");
    ck_assert_int_eq(cJSON_GetArraySize(rej), 3);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(rej, 0), "line"), 4);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(rej, 1), "line"), 5);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(rej, 2), "line"), 7);
    ck_assert_str_eq(str(cJSON_GetObjectItem(cJSON_GetArrayItem(rej, 2), "error"), "code"),
                     "score_out_of_range");
    http_result_free(&r);
    cJSON *d = get_json("/boards/nd/rank", 200);
    ck_assert_int_eq((int)num(d, "total"), 4);
    ck_assert_str_eq(str(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "items"), 0), "id"), "d");
    cJSON_Delete(d);
}
END_TEST

/* An incr overflow and a bad score in one NDJSON chunk each reject their own line only. */
START_TEST(ndjson_mixed_rejections)
{
    const char *body = "{\"id\":\"a\",\"score\":4294967295}\n"
                       "{\"id\":\"a\",\"score\":1,\"op\":\"incr\"}\n"
                       "{\"id\":\"b\",\"score\":0.5}\n"
                       "{\"id\":\"c\",\"score\":7}\n";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/mx/scores", body, strlen(body),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq((int)num(r.json, "applied"), 2);
    ck_assert_int_eq((int)num(r.json, "rejected_total"), 2);
    const cJSON *rej = cJSON_GetObjectItem(r.json, "rejected");
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(rej, 0), "line"), 2);
    ck_assert_int_eq((int)num(cJSON_GetArrayItem(rej, 1), "line"), 3);
    http_result_free(&r);
    cJSON *d = get_json("/boards/mx/rank", 200);
    ck_assert_int_eq((int)num(d, "total"), 2);
    cJSON_Delete(d);
}
END_TEST

/* Scores and record numbers print exactly: cJSON's own printer would round 2^53 - 1. */
START_TEST(numbers_read_back_exactly)
{
    ck_assert_int_eq(it_status("PUT", "/boards/ex", "{\"tiebreak\":\"id\"}"), 201);
    it_post_score("ex", "{\"id\":\"a\",\"score\":9007199254740991,"
                        "\"record\":{\"big\":9007199254740991,\"f\":0.1}}");
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/boards/ex/rank", &r), 0);
    ck_assert_ptr_nonnull(strstr(r.body, "\"score\":9007199254740991"));
    ck_assert_ptr_nonnull(strstr(r.body, "\"big\":9007199254740991"));
    ck_assert_ptr_nonnull(strstr(r.body, "\"f\":0.1"));
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, "/boards/ex", &r), 0);
    ck_assert_ptr_nonnull(strstr(r.body, "\"max\":9007199254740991"));
    http_result_free(&r);
}
END_TEST

/* A raw NUL would end cJSON's string early: the id written would not be the id sent. */
START_TEST(raw_nul_rejected)
{
    const char body[] = "{\"id\":\"ab\0cd\",\"score\":5}";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/nul/scores", body, sizeof(body) - 1, NULL,
                              TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(http_error_code(&r), "invalid_json");
    http_result_free(&r);
    const char line[] = "{\"id\":\"ab\0cd\",\"score\":5}\n{\"id\":\"ok\",\"score\":1}\n";
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/nul/scores", line, sizeof(line) - 1,
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_int_eq((int)num(r.json, "applied"), 1);
    ck_assert_int_eq((int)num(r.json, "rejected_total"), 1);
    http_result_free(&r);
    expect_error("GET", "/boards/nul/members/ab", NULL, NULL, 404, "member_not_found");
}
END_TEST

/* A blank line after an indented one is blank (the line buffer is not read past its end). */
START_TEST(ndjson_blank_after_indented)
{
    const char *body = "  {\"id\":\"s1\",\"score\":1}\n\n\t\n{\"id\":\"s2\",\"score\":2}\n";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/bl/scores", body, strlen(body),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_msg(r.status == 200 && num(r.json, "rejected_total") == 0, "%s", r.body);
    ck_assert_int_eq((int)num(r.json, "applied"), 2);
    http_result_free(&r);
}
END_TEST

/* A record number a double cannot hold would be stored rounded: it is refused. */
START_TEST(record_numbers_exact_or_refused)
{
    expect_error("PUT", "/items/n", "{\"big\":12345678901234567890}", TEST_TOKEN, 400,
                 "invalid_record");
    expect_error("PUT", "/items/n", "{\"big\":9007199254740993}", TEST_TOKEN, 400,
                 "invalid_record");
    /* 2^53 + 1 parses to the double of 2^53, but the literal tells them apart: 2^53 itself
     * comes back as sent (test_numbers records_literal) */
    ck_assert_int_eq(it_status("PUT", "/items/n", "{\"big\":9007199254740992}"), 204);
    ck_assert_int_eq(it_status("PUT", "/items/n", "{\"ok\":9007199254740991,\"f\":1.5e300}"), 204);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/items/n", &r), 0);
    ck_assert_ptr_nonnull(strstr(r.body, "9007199254740991"));
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- records */

START_TEST(items_crud)
{
    ck_assert_int_eq(
        it_status("PUT", "/items/it%2F1", "{\"name\":\"x\",\"v\":1.5,\"ok\":true,\"z\":null}"),
        204);
    cJSON *d = get_json("/items/it%2F1", 200);
    ck_assert_str_eq(str(d, "name"), "x");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(d, "z")));
    cJSON_Delete(d);
    expect_error("PUT", "/items/a", "{\"n\":{}}", TEST_TOKEN, 400, "invalid_record");
    expect_error("PUT", "/items/a", "\"str\"", TEST_TOKEN, 400, "invalid_record");
    ck_assert_int_eq(it_status("DELETE", "/items/it%2F1", NULL), 204);
    expect_error("GET", "/items/it%2F1", NULL, NULL, 404, "item_not_found");
    expect_error("DELETE", "/items/it%2F1", NULL, TEST_TOKEN, 404, "item_not_found");
    /* a member without a record renders record: null */
    it_post_score("r", "{\"id\":\"norec\",\"score\":1}");
    d = get_json("/boards/r/members/norec", 200);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(d, "record")));
    cJSON_Delete(d);
}
END_TEST

/* ---------------------------------------------------------------- static files */

static char static_dir[64];

static void use_static_dir(struct config *cfg)
{
    snprintf(cfg->static_dir, sizeof(cfg->static_dir), "%s", static_dir);
}

static long static_status(int port, const char *path, char *ctype, size_t ctype_len)
{
    struct http_result r;
    ck_assert_int_eq(http_req(port, "GET", path, NULL, 0, NULL, NULL, &r), 0);
    long s = r.status;
    if (ctype) {
        const char *ct = r.headers ? strstr(r.headers, "Content-Type: ") : NULL;
        snprintf(ctype, ctype_len, "%.*s", ct ? (int)strcspn(ct + 14, "\r\n") : 0,
                 ct ? ct + 14 : "");
    }
    http_result_free(&r);
    return s;
}

/* Nothing outside the static directory is reachable: not by .., not encoded, not by symlink. */
START_TEST(static_files_confined)
{
    snprintf(static_dir, sizeof(static_dir), "/tmp/rankd-static-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(static_dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/index.html", static_dir);
    FILE *f = fopen(path, "w");
    fputs("<!doctype html><title>t</title>", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/app.js", static_dir);
    f = fopen(path, "w");
    fputs("export {};", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/passwd", static_dir);
    ck_assert_int_eq(symlink("/etc/passwd", path), 0);
    snprintf(path, sizeof(path), "%s/sub", static_dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);

    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, use_static_dir, NULL);
    int port = rankd_port(app);
    char ct[80];
    ck_assert_int_eq(static_status(port, "/", ct, sizeof(ct)), 200);
    ck_assert_str_eq(ct, "text/html; charset=utf-8");
    ck_assert_int_eq(static_status(port, "/app.js", ct, sizeof(ct)), 200);
    ck_assert_str_eq(ct, "text/javascript; charset=utf-8");
    static const char *const outside[] = {
        "/../etc/passwd",
        "/%2e%2e/etc/passwd",
        "/%2E%2E%2Fetc%2Fpasswd",
        "/sub/../../etc/passwd",
        "/sub/%2e%2e/%2e%2e/etc/passwd",
        "/passwd",
        "/sub",
        "/./index.html",
        "/..%5cetc",
        "/index.html%00.js",
        "/nope.html",
    };
    for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
        long s = static_status(port, outside[i], NULL, 0);
        ck_assert_msg(s == 404 || s == 400, "%s -> %ld", outside[i], s);
    }
    /* the API keeps its routes */
    ck_assert_int_eq(static_status(port, "/healthz", NULL, 0), 200);
    rankd_stop(app);
}
END_TEST

Suite *api_suite(void)
{
    static const char *const suite_name = "api";
    const struct it_case cases[] = {
        {"operations", health_ready_metrics},
        {"routing", unknown_route_and_method},
        {"utf8_errors", error_bodies_valid_utf8},
        {"auth", writes_need_token},
        {"auth_off", writes_disabled_without_token},
        {"boards", board_put_get_list_delete},
        {"board_validation", board_put_validation},
        {"board_conflict", board_layout_change_conflicts},
        {"score_format", board_score_format},
        {"many_boards", many_boards_listed},
        {"boards_cursor", boards_listed_by_cursor},
        {"pages", rank_pages},
        {"page_errors", rank_parameter_errors},
        {"shorthand", rank_shorthand_and_empty_board},
        {"members", member_lookup_and_around},
        {"long_paths", long_paths},
        {"member_delete", member_delete},
        {"keys", ids_never_collide},
        {"writes", score_write_replies},
        {"batch", score_write_batch},
        {"write_validation", score_write_validation},
        {"bodies", body_limits_and_types},
        {"ndjson", ndjson_stream},
        {"ndjson_chunked", ndjson_chunked_upload},
        {"ndjson_mixed", ndjson_mixed_rejections},
        {"exact_numbers", numbers_read_back_exactly},
        {"items", items_crud},
        {"raw_nul", raw_nul_rejected},
        {"ndjson_blank", ndjson_blank_after_indented},
        {"record_numbers", record_numbers_exact_or_refused},
        {"static", static_files_confined},
    };
    return it_suite(suite_name, cases, sizeof(cases) / sizeof(cases[0]));
}
