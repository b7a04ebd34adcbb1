/*
 * test_subscores_replies.c -- the replies of the `subscores` suite beyond its model (test_subscores.c
 * reads pages, members, around, lookup, with, percentile, top, cursors, score ranges and export
 * against the model): what a write answers, a member across boards, a page the Redis cache
 * serves (with `with`), a window around a score and a page pushed as an event stream all carry
 * each entry's sub-scores, byte for byte.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "suites.h"

/* method path body [headers] -> status and the exact body (want NULL: any body, r kept) */
static void exchange(const char *method, const char *path, const char *body,
                     const char *const *headers, long status, const char *want,
                     struct http_result *r)
{
    ck_assert_int_eq(http_req_h(g_port, method, path, body, body ? strlen(body) : 0, NULL,
                                TEST_TOKEN, headers, r),
                     0);
    ck_assert_msg(r->status == status, "%s %s %s -> %ld %s", method, path, body ? body : "",
                  r->status, r->body);
    if (want)
        ck_assert_msg(strcmp(r->body, want) == 0, "%s %s %s\n got %s\nwant %s", method, path,
                      body ? body : "", r->body, want);
}

static void expect_body(const char *method, const char *path, const char *body, const char *want)
{
    struct http_result r;
    exchange(method, path, body, NULL, 200, want, &r);
    http_result_free(&r);
}

/* A write answers the tuple it stored: set as sent, a best that kept the old (score,
 * sub-scores) the kept ones, incr the sums; the previous tuple beside prev_score; a batch per
 * entry (a member given twice sees its own earlier entry); a write to several boards per board;
 * an Idempotency-Key's replay the same bytes. */
START_TEST(subscores_write_replies)
{
    ck_assert_int_eq(it_status("PUT", "/boards/wr", "{\"subscores\":[\"desc\",\"asc\"]}"), 201);
    expect_body("POST", "/boards/wr/scores", "{\"id\":\"a\",\"score\":10,\"subscores\":[3,5]}",
                "{\"id\":\"a\",\"score\":10,\"subscores\":[3,5],\"rank\":1,\"updated\":true,"
                "\"prev_score\":null,\"prev_subscores\":null,\"prev_rank\":null,\"version\":1}");
    /* best, not better (a smaller first column on a desc one): the kept tuple */
    expect_body("POST", "/boards/wr/scores",
                "{\"id\":\"a\",\"score\":10,\"subscores\":[2,1],\"op\":\"best\"}",
                "{\"id\":\"a\",\"score\":10,\"subscores\":[3,5],\"rank\":1,\"updated\":false,"
                "\"prev_score\":10,\"prev_subscores\":[3,5],\"prev_rank\":1,\"version\":2}");
    /* best, better on the second (asc) column only */
    expect_body("POST", "/boards/wr/scores",
                "{\"id\":\"a\",\"score\":10,\"subscores\":[3,4],\"op\":\"best\"}",
                "{\"id\":\"a\",\"score\":10,\"subscores\":[3,4],\"rank\":1,\"updated\":true,"
                "\"prev_score\":10,\"prev_subscores\":[3,5],\"prev_rank\":1,\"version\":3}");
    /* incr: element-wise, the extremes exact */
    expect_body("POST", "/boards/wr/scores",
                "{\"id\":\"a\",\"score\":1,\"subscores\":[0,-9007199254740990],"
                "\"op\":\"incr\"}",
                NULL);
    expect_body("POST", "/boards/wr/scores",
                "{\"id\":\"a\",\"score\":1,\"subscores\":[1,-5],\"op\":\"incr\"}",
                "{\"id\":\"a\",\"score\":12,\"subscores\":[4,-9007199254740991],\"rank\":1,"
                "\"updated\":true,\"prev_score\":11,\"prev_subscores\":[3,-9007199254740986],"
                "\"prev_rank\":1,"
                "\"version\":5}");
    /* a batch: each entry's result, a repeated member after its own earlier entry */
    expect_body("POST", "/boards/wr/scores",
                "{\"entries\":[{\"id\":\"b\",\"score\":12,\"subscores\":[4,-9007199254740990]},"
                "{\"id\":\"b\",\"score\":0,\"subscores\":[9,9],\"op\":\"best\"},"
                "{\"id\":\"c\",\"score\":-5,\"subscores\":[0,0],\"op\":\"incr\"},"
                "{\"id\":\"c\",\"score\":1,\"subscores\":[-2,7],\"op\":\"incr\"}]}",
                "{\"applied\":4,\"rejected\":[],\"results\":["
                "{\"score\":12,\"subscores\":[4,-9007199254740990],\"rank\":2,\"updated\":true},"
                "{\"score\":12,\"subscores\":[4,-9007199254740990],\"rank\":2,\"updated\":false},"
                "{\"score\":-5,\"subscores\":[0,0],\"rank\":3,\"updated\":true},"
                "{\"score\":-4,\"subscores\":[-2,7],\"rank\":3,\"updated\":true}],\"version\":6}");
    /* several boards at once: each board's own tuple; a board without sub-scores none */
    ck_assert_int_eq(it_status("PUT", "/boards/wr2", "{\"subscores\":[\"asc\",\"desc\"]}"), 201);
    expect_body("POST", "/boards/wr2/scores", "{\"id\":\"a\",\"score\":12,\"subscores\":[1,1]}",
                NULL);
    expect_body("POST", "/scores",
                "{\"boards\":[\"wr\",\"wr2\"],\"id\":\"a\",\"score\":12,\"subscores\":[0,0],"
                "\"op\":\"best\"}",
                "{\"id\":\"a\",\"boards\":["
                "{\"board\":\"wr\",\"score\":12,\"subscores\":[4,-9007199254740991],\"rank\":1,"
                "\"updated\":false,\"prev_score\":12,\"prev_subscores\":[4,-9007199254740991],"
                "\"prev_rank\":1,\"version\":7},"
                "{\"board\":\"wr2\",\"score\":12,\"subscores\":[0,0],\"rank\":1,\"updated\":true,"
                "\"prev_score\":12,\"prev_subscores\":[1,1],\"prev_rank\":1,\"version\":2}]}");
    /* an Idempotency-Key's replay: the first reply, byte for byte, applied once */
    static const char *const key[] = {"Idempotency-Key: sub-1", NULL};
    const char *body = "{\"entries\":[{\"id\":\"d\",\"score\":7,\"subscores\":[1,2],\"op\":"
                       "\"incr\"},{\"id\":\"d\",\"score\":7,\"subscores\":[5,5],\"op\":\"best\"}]}";
    const char *want = "{\"applied\":2,\"rejected\":[],\"results\":["
                       "{\"score\":7,\"subscores\":[1,2],\"rank\":3,\"updated\":true},"
                       "{\"score\":7,\"subscores\":[5,5],\"rank\":3,\"updated\":true}],"
                       "\"version\":8}";
    struct http_result r;
    exchange("POST", "/boards/wr/scores", body, key, 200, want, &r);
    http_result_free(&r);
    exchange("POST", "/boards/wr/scores", body, key, 200, want, &r);
    ck_assert_msg(strstr(r.headers, "Idempotent-Replayed: true"), "%s", r.headers);
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, "/boards/wr/members/d", &r), 0);
    ck_assert_msg(strstr(r.body, "\"score\":7,\"subscores\":[5,5]"), "%s", r.body);
    http_result_free(&r);
}
END_TEST

/* A member across boards (GET /members/{id}): each board with sub-scores gives the member's
 * own, of that board's directions; a board without them, or without the member, none. */
START_TEST(subscores_member_boards)
{
    ck_assert_int_eq(it_status("PUT", "/boards/mb1", "{\"subscores\":[\"desc\"]}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/mb2",
                               "{\"subscores\":[\"asc\",\"desc\",\"asc\"],\"tiebreak\":\"last\"}"),
                     201);
    ck_assert_int_eq(it_status("PUT", "/boards/mb3", "{}"), 201);
    it_post_score("mb1", "{\"id\":\"a\",\"score\":5,\"subscores\":[-9007199254740991]}");
    it_post_score("mb1", "{\"id\":\"b\",\"score\":5,\"subscores\":[0]}");
    it_post_score("mb2", "{\"id\":\"a\",\"score\":-3,\"subscores\":[7,-8,9007199254740991]}");
    it_post_score("mb2", "{\"id\":\"c\",\"score\":-3,\"subscores\":[7,-8,9007199254740991]}");
    it_post_score("mb3", "{\"id\":\"a\",\"score\":1}");
    it_post_score("mb3", "{\"id\":\"c\",\"score\":1}");
    expect_body("GET", "/members/a?boards=mb1,mb2,mb3,none", NULL,
                "{\"id\":\"a\",\"boards\":["
                "{\"board\":\"mb1\",\"rank\":2,\"score\":5,\"subscores\":[-9007199254740991],"
                "\"percentile\":0},"
                "{\"board\":\"mb2\",\"rank\":2,\"score\":-3,"
                "\"subscores\":[7,-8,9007199254740991],\"percentile\":0},"
                "{\"board\":\"mb3\",\"rank\":1,\"score\":1,\"percentile\":50},"
                "{\"board\":\"none\",\"rank\":null,\"score\":null,\"percentile\":null}]}");
    /* competition ranks tie the equal tuples of mb2; the member absent from mb1 has none */
    expect_body("GET", "/members/c?boards=mb2,mb1&rank=competition", NULL,
                "{\"id\":\"c\",\"boards\":["
                "{\"board\":\"mb2\",\"rank\":1,\"score\":-3,"
                "\"subscores\":[7,-8,9007199254740991],\"percentile\":50},"
                "{\"board\":\"mb1\",\"rank\":null,\"score\":null,\"percentile\":null}]}");
}
END_TEST

/* GET path on port: 200, the body holds `want` (a substring); X-Cache is `xcache` (NULL: any). */
static void expect_has(int port, const char *path, const char *xcache, const char *want)
{
    struct http_result r;
    ck_assert_int_eq(http_req(port, "GET", path, NULL, 0, NULL, NULL, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, want), "GET %s -> %ld %s\nwant %s", path,
                  r.status, r.body, want);
    if (xcache) {
        char h[64];
        snprintf(h, sizeof(h), "X-Cache: %s\r", xcache);
        ck_assert_msg(strstr(r.headers, h), "GET %s: not X-Cache %s: %s", path, xcache, r.headers);
    }
    http_result_free(&r);
}

/* The first event of GET path as an event stream (Accept: text/event-stream) holds `want`. */
static void expect_event_has(const char *path, const char *want)
{
    int fd = connect_loopback(g_port);
    ck_assert_int_ge(fd, 0);
    char req[512], buf[16384];
    int len =
        snprintf(req, sizeof(req),
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", path);
    ck_assert_int_eq(send(fd, req, (size_t)len, MSG_NOSIGNAL), len);
    size_t got = 0;
    buf[0] = '\0';
    /* until the page's event is in, or 10 s */
    for (int i = 0; i < 100 && !strstr(buf, "event: page") && got < sizeof(buf) - 1; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
    }
    /* the rest of the event (one write of the server's, maybe two reads here) */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (!strstr(buf, want) && got < sizeof(buf) - 1 && poll(&p, 1, 500) > 0) {
        ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
    }
    close(fd);
    ck_assert_msg(strstr(buf, "event: page") && strstr(buf, want), "%s as a stream: %s\nwant %s",
                  path, buf, want);
}

/* A board whose pages are cached: a page as the Redis cache serves it to another rankd process
 * (nothing in its own memory), with `with` read live beside it, a window around a score, the
 * top percent and a page pushed as an event stream. */
START_TEST(subscores_cached_pages)
{
    ck_assert_int_eq(it_status("PUT", "/boards/cp",
                               "{\"subscores\":[\"asc\",\"desc\"],\"page_ttl_ms\":60000,"
                               "\"page_size\":3}"),
                     201);
    it_post_score("cp", "{\"entries\":[{\"id\":\"a\",\"score\":5,\"subscores\":[1,2]},"
                        "{\"id\":\"b\",\"score\":5,\"subscores\":[1,3]},"
                        "{\"id\":\"c\",\"score\":5,\"subscores\":[0,0]},"
                        "{\"id\":\"d\",\"score\":7,\"subscores\":[9,9]},"
                        "{\"id\":\"e\",\"score\":1,\"subscores\":[-1,-9007199254740991]}]}");
    /* d 7; then 5 by the first column (asc: c), then the second (desc: b before a); e 1 */
    const char *page1 = "\"items\":[{\"rank\":1,\"id\":\"d\",\"score\":7,\"subscores\":[9,9],"
                        "\"record\":null},{\"rank\":2,\"id\":\"c\",\"score\":5,\"subscores\":[0,0],"
                        "\"record\":null},{\"rank\":3,\"id\":\"b\",\"score\":5,\"subscores\":[1,3],"
                        "\"record\":null}]";
    expect_has(g_port, "/boards/cp/rank?page=1", "miss", page1);
    expect_has(g_port, "/boards/cp/rank?page=2&size=3", "miss",
               "\"items\":[{\"rank\":4,\"id\":\"a\",\"score\":5,\"subscores\":[1,2],"
               "\"record\":null},{\"rank\":5,\"id\":\"e\",\"score\":1,"
               "\"subscores\":[-1,-9007199254740991],\"record\":null}]");
    /* another process: the pages from Redis, the `with` part live */
    struct rankd *other = rankd_test_start(g_redis.port, TEST_TOKEN);
    int port = rankd_port(other);
    expect_has(port, "/boards/cp/rank?page=1", "hit", page1);
    expect_has(port, "/boards/cp/rank?page=2", "hit",
               "\"score\":1,\"subscores\":[-1,-9007199254740991]");
    expect_has(port, "/boards/cp/rank?page=1&with=e,a,zz", "hit",
               "\"with\":[{\"rank\":4,\"id\":\"a\",\"score\":5,\"subscores\":[1,2],\"page\":2,"
               "\"record\":null},{\"rank\":5,\"id\":\"e\",\"score\":1,"
               "\"subscores\":[-1,-9007199254740991],\"page\":2,\"record\":null}],"
               "\"missing\":[\"zz\"]");
    expect_has(port, "/boards/cp/rank?page=1&with=b", "hit", page1);
    rankd_stop(other);
    /* a window around a score, and the top 40 percent */
    expect_has(g_port, "/boards/cp/around?score=5&size=1", NULL,
               "\"items\":[{\"rank\":2,\"id\":\"c\",\"score\":5,\"subscores\":[0,0],"
               "\"record\":null}]");
    expect_has(g_port, "/boards/cp/around?score=4&size=1", NULL,
               "\"items\":[{\"rank\":5,\"id\":\"e\",\"score\":1,"
               "\"subscores\":[-1,-9007199254740991],\"record\":null}]");
    expect_has(g_port, "/boards/cp/top?percent=40", NULL,
               "\"items\":[{\"rank\":1,\"id\":\"d\",\"score\":7,\"subscores\":[9,9],"
               "\"record\":null},{\"rank\":2,\"id\":\"c\",\"score\":5,\"subscores\":[0,0],"
               "\"record\":null}]");
    /* pushed as an event stream: the same page */
    expect_event_has("/boards/cp/rank?page=1", page1);
}
END_TEST

/* Four columns (the most a board takes), every direction alternating: each column decides in
 * turn, equal 4-tuples tie (competition ranks) and keep first-to-reach order, a best that wins
 * on the last column alone moves the member. */
START_TEST(subscores_four_columns)
{
    ck_assert_int_eq(it_status("PUT", "/boards/f4",
                               "{\"subscores\":[\"desc\",\"asc\",\"desc\",\"asc\"],"
                               "\"page_ttl_ms\":0}"),
                     201);
    it_post_score("f4", "{\"entries\":[{\"id\":\"a\",\"score\":1,\"subscores\":[5,5,5,5]},"
                        "{\"id\":\"b\",\"score\":1,\"subscores\":[5,5,5,4]},"
                        "{\"id\":\"c\",\"score\":1,\"subscores\":[5,5,6,9]},"
                        "{\"id\":\"d\",\"score\":1,\"subscores\":[5,4,0,0]},"
                        "{\"id\":\"e\",\"score\":1,\"subscores\":[6,9,0,9]},"
                        "{\"id\":\"f\",\"score\":1,\"subscores\":[5,5,5,5]},"
                        "{\"id\":\"g\",\"score\":2,\"subscores\":[-9007199254740991,"
                        "9007199254740991,-9007199254740991,9007199254740991]}]}");
    expect_has(g_port, "/boards/f4/rank?rank=competition", NULL,
               "\"items\":[{\"rank\":1,\"id\":\"g\",\"score\":2,\"subscores\":["
               "-9007199254740991,9007199254740991,-9007199254740991,9007199254740991],"
               "\"record\":null},"
               "{\"rank\":2,\"id\":\"e\",\"score\":1,\"subscores\":[6,9,0,9],\"record\":null},"
               "{\"rank\":3,\"id\":\"d\",\"score\":1,\"subscores\":[5,4,0,0],\"record\":null},"
               "{\"rank\":4,\"id\":\"c\",\"score\":1,\"subscores\":[5,5,6,9],\"record\":null},"
               "{\"rank\":5,\"id\":\"b\",\"score\":1,\"subscores\":[5,5,5,4],\"record\":null},"
               "{\"rank\":6,\"id\":\"a\",\"score\":1,\"subscores\":[5,5,5,5],\"record\":null},"
               "{\"rank\":6,\"id\":\"f\",\"score\":1,\"subscores\":[5,5,5,5],\"record\":null}]");
    expect_body("POST", "/boards/f4/scores",
                "{\"id\":\"f\",\"score\":1,\"subscores\":[5,5,5,4],\"op\":\"best\"}",
                "{\"id\":\"f\",\"score\":1,\"subscores\":[5,5,5,4],\"rank\":6,\"updated\":true,"
                "\"prev_score\":1,\"prev_subscores\":[5,5,5,5],\"prev_rank\":7,\"version\":2}");
    expect_has(g_port, "/boards/f4/rank?rank=dense&page=1&size=3&with=f,a", NULL,
               "\"with\":[{\"rank\":5,\"id\":\"f\",\"score\":1,\"subscores\":[5,5,5,4],"
               "\"page\":2,\"record\":null},{\"rank\":6,\"id\":\"a\",\"score\":1,"
               "\"subscores\":[5,5,5,5],\"page\":3,\"record\":null}]");
}
END_TEST

void subscores_replies_add(Suite *s)
{
    const struct {
        const char *name;
        const TTest *test;
    } cases[] = {
        {"subscores_write_replies", subscores_write_replies},
        {"subscores_member_boards", subscores_member_boards},
        {"subscores_cached_pages", subscores_cached_pages},
        {"subscores_four_columns", subscores_four_columns},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, it_setup, it_teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
}
