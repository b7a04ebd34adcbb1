/* test_hardening.c -- the hardening issue: signals, duplicate fields, trim arguments, NDJSON
 * lines, HTTP framing, special files and number rendering, each over real HTTP. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"

/* ---------------------------------------------------------------- signals */

/* A terminal hang-up (or a process manager's reload signal) must not stop rankd. */
START_TEST(sighup_ignored)
{
    /* the child inherits an ignored SIGHUP (nohup, some CI runners): test the default */
    signal(SIGHUP, SIG_DFL);
    struct rankd_proc p;
    ck_assert_int_eq(rankd_proc_start(&p, g_redis.port, NULL), 0);
    ck_assert_int_eq(kill(p.pid, SIGHUP), 0);
    usleep(300 * 1000);
    int status = 0;
    pid_t gone = waitpid(p.pid, &status, WNOHANG);
    if (gone == p.pid)
        p.pid = 0; /* nothing left to stop */
    ck_assert_msg(gone == 0, "rankd exited after SIGHUP (%s %d)",
                  WIFSIGNALED(status) ? "signal" : "status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    struct http_result r;
    ck_assert_int_eq(http_get(p.port, "/healthz", &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    rankd_proc_stop(&p);
}
END_TEST

/* ---------------------------------------------------------------- trims */

/* DELETE `path` with the token; asserts the status and, for a 200, the removed count (for a
 * 400, the code invalid_parameter). */
static void expect_trim(const char *path, long status, long long removed)
{
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "DELETE", path, NULL, 0, NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == status, "DELETE %s -> %ld %s (want %ld)", path, r.status, r.body,
                  status);
    if (status == 200) {
        const cJSON *n = cJSON_GetObjectItem(r.json, "removed");
        ck_assert_msg(cJSON_IsNumber(n) && (long long)n->valuedouble == removed,
                      "DELETE %s: %s (want removed %lld)", path, r.body, removed);
    } else {
        ck_assert_str_eq(http_error_code(&r), "invalid_parameter");
    }
    http_result_free(&r);
}

/* Five members with scores 1..5 on board `board` (desc). */
static void seed5(const char *board)
{
    for (int i = 1; i <= 5; i++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d}", i, i);
        it_post_score(board, body);
    }
}

/* keep=00 is keep=0, and leading zeros count as for any count. */
START_TEST(trim_keep_leading_zeros)
{
    seed5("tk");
    expect_trim("/boards/tk/members?keep=01000", 200, 0);
    expect_trim("/boards/tk/members?keep=0003", 200, 2);
    expect_trim("/boards/tk/members?keep=00", 200, 3);
    seed5("tk0");
    expect_trim("/boards/tk0/members?keep=0", 200, 5);
    expect_trim("/boards/tk0/members?keep=", 400, 0);
    expect_trim("/boards/tk0/members?keep=-0", 400, 0);
    expect_trim("/boards/tk0/members?keep=0x1", 400, 0);
    ck_assert_int_eq(it_dbsize() > 0, 1);
}
END_TEST

/* below takes a plain decimal number only: no hex, inf, nan, exponent, sign '+' or spaces. */
START_TEST(trim_below_plain_decimal)
{
    seed5("tb");
    static const char *const bad[] = {
        "0x3", "0X3", "inf", "-inf", "nan", "infinity", "3e0", "1E1",   "%203", "3%20",
        "+3",  "",    "-",   "3.",   ".5",  "1.5.2",    "--3", "0x1p1", "3,5",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[96];
        snprintf(path, sizeof(path), "/boards/tb/members?below=%s", bad[i]);
        expect_trim(path, 400, 0);
    }
    expect_trim("/boards/tb/members?below=-1", 200, 0);
    expect_trim("/boards/tb/members?below=2.0", 200, 1);  /* removes 1 */
    expect_trim("/boards/tb/members?below=2.5", 400, 0);  /* not a score of this board */
    expect_trim("/boards/tb/members?below=0004", 200, 2); /* removes 2 and 3 */
    expect_trim("/boards/tb/members?below=-0", 200, 0);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/boards/tb", &r), 0);
    ck_assert_msg(strstr(r.body, "\"total\":2"), "%s", r.body);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- numbers */

/* GET `path` and assert the exact body. */
static void expect_body(const char *path, const char *want)
{
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200 && strcmp(r.body, want) == 0, "GET %s -> %ld\n%s\nwant\n%s", path,
                  r.status, r.body, want);
    http_result_free(&r);
}

/* Exact integers print as plain digits, never 1e+15 or 9.00719925474099e+15. */
START_TEST(integers_plain_digits)
{
    ck_assert_int_eq(it_status("PUT", "/boards/nb", "{\"tiebreak\":\"id\"}"), 201);
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/nb/scores",
                                "{\"id\":\"a\",\"score\":1000000000000000,\"record\":{\"e\":1e15}}",
                                &r),
                     0);
    ck_assert_str_eq(r.body,
                     "{\"id\":\"a\",\"score\":1000000000000000,\"rank\":1,\"updated\":true}");
    http_result_free(&r);
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/nb/scores",
                   "{\"entries\":[{\"id\":\"b\",\"score\":9007199254740991},"
                   "{\"id\":\"d\",\"score\":9007199254740990},"
                   "{\"id\":\"c\",\"score\":-9007199254740991,\"record\":{\"n\":-2e15}}]}",
                   &r),
        0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    expect_body("/boards/nb/rank",
                "{\"board\":\"nb\",\"page\":1,\"size\":20,\"total\":4,\"pages\":1,\"items\":["
                "{\"rank\":1,\"id\":\"b\",\"score\":9007199254740991,\"record\":null},"
                "{\"rank\":2,\"id\":\"d\",\"score\":9007199254740990,\"record\":null},"
                "{\"rank\":3,\"id\":\"a\",\"score\":1000000000000000,"
                "\"record\":{\"e\":1000000000000000}},"
                "{\"rank\":4,\"id\":\"c\",\"score\":-9007199254740991,"
                "\"record\":{\"n\":-2000000000000000}}]}");
    expect_body("/boards/nb/members/a",
                "{\"id\":\"a\",\"score\":1000000000000000,\"rank\":3,\"page\":1,"
                "\"record\":{\"e\":1000000000000000}}");
    expect_body("/items/a", "{\"e\":1000000000000000}");
    ck_assert_int_eq(http_get(g_port, "/boards/nb", &r), 0);
    ck_assert_msg(strstr(r.body, "\"score_range\":{\"min\":-9007199254740991,"
                                 "\"max\":9007199254740991}"),
                  "%s", r.body);
    http_result_free(&r);
    /* a record put directly, and a score out of range named in plain digits */
    ck_assert_int_eq(it_status("PUT", "/items/z", "{\"e\":1e15,\"f\":0.5,\"g\":1.5e300}"), 204);
    expect_body("/items/z", "{\"e\":1000000000000000,\"f\":0.5,\"g\":1.5e+300}");
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/nb/scores",
                                "{\"id\":\"x\",\"score\":9007199254740992}", &r),
                     0);
    ck_assert_int_eq(r.status, 422);
    ck_assert_msg(strstr(r.body, "score 9007199254740992 is outside") &&
                      strstr(r.body, "from -9007199254740991 to 9007199254740991"),
                  "%s", r.body);
    http_result_free(&r);
}
END_TEST

Suite *hardening_suite(void)
{
    Suite *s = suite_create("hardening");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
        {"sighup", sighup_ignored},
        {"trim_keep", trim_keep_leading_zeros},
        {"trim_below", trim_below_plain_decimal},
        {"integers", integers_plain_digits},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, it_setup, it_teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
