/* main.c -- integration tests: one real redis-server for the run, rankd in-process per test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "suites.h"

struct redis_proc g_redis;
struct rankd *g_app;
int g_port;
redisContext *g_admin;

/* FLUSHALL, then rankd (with hooks, may be NULL) and an admin connection. */
static void setup_with(const struct rankd_hooks *hooks)
{
    g_admin = redis_admin(g_redis.port);
    freeReplyObject(redis_admin_cmd(g_admin, "FLUSHALL"));
    g_app = rankd_test_start_with(g_redis.port, TEST_TOKEN, NULL, hooks);
    g_port = rankd_port(g_app);
}

void it_setup(void)
{
    setup_with(NULL);
}

void it_setup_clock(void)
{
    fixture_set_clock(NULL);
    setup_with(&fixture_clock_hooks);
}

void it_teardown(void)
{
    rankd_stop(g_app);
    g_app = NULL;
    redisFree(g_admin);
    g_admin = NULL;
}

long it_status(const char *method, const char *path, const char *body)
{
    struct http_result r;
    ck_assert_int_eq(
        http_req(g_port, method, path, body, body ? strlen(body) : 0, NULL, TEST_TOKEN, &r), 0);
    long s = r.status;
    http_result_free(&r);
    return s;
}

void it_post_score(const char *board, const char *json)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "POST", path, json, &r), 0);
    ck_assert_msg(r.status == 200, "POST %s %s -> %ld %s", path, json, r.status, r.body);
    http_result_free(&r);
}

/* One TCase: the checked fixture setup/it_teardown, the timeout, the test. */
static TCase *it_tcase(const char *name, const TTest *test, double timeout_s, void (*setup)(void))
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, it_teardown);
    tcase_set_timeout(tc, timeout_s);
    tcase_add_test(tc, test);
    return tc;
}

Suite *it_suite(const char *name, const struct it_case *cases, size_t n)
{
    return it_suite_timeout(name, cases, n, 30);
}

Suite *it_suite_timeout(const char *name, const struct it_case *cases, size_t n, int timeout_s)
{
    Suite *s = suite_create(name);
    for (size_t i = 0; i < n; i++)
        suite_add_tcase(s, it_tcase(cases[i].name, cases[i].test, timeout_s, it_setup));
    return s;
}

Suite *it_suite_with(const char *name, const struct it_timed_case *cases, size_t n,
                     void (*setup)(void))
{
    Suite *s = suite_create(name);
    for (size_t i = 0; i < n; i++)
        suite_add_tcase(s, it_tcase(cases[i].name, cases[i].test, cases[i].timeout_s, setup));
    return s;
}

long long it_dbsize(void)
{
    redisReply *r = redis_admin_cmd(g_admin, "DBSIZE");
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

int main(void)
{
    int ci = getenv("CI") && strcmp(getenv("CI"), "true") == 0;
    if (system("command -v redis-server >/dev/null 2>&1") != 0) {
        fprintf(stderr, "redis-server is not installed (make deps installs it)\n");
        return ci ? EXIT_FAILURE : 77;
    }
    if (redis_proc_start(&g_redis)) {
        fprintf(stderr, "could not start redis-server\n");
        return EXIT_FAILURE;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    SRunner *sr = srunner_create(api_suite());
    srunner_add_suite(sr, ordering_suite());
    srunner_add_suite(sr, cities_suite());
    srunner_add_suite(sr, faults_suite());
    srunner_add_suite(sr, page_cache_suite());
    srunner_add_suite(sr, lifecycle_suite());
    srunner_add_suite(sr, path_suite());
    srunner_add_suite(sr, hardening_suite());
    srunner_add_suite(sr, numbers_suite());
    srunner_add_suite(sr, clients_suite());
    srunner_add_suite(sr, boarddata_suite());
    srunner_add_suite(sr, acl_suite());
    srunner_add_suite(sr, ops_suite());
    srunner_add_suite(sr, writes_suite());
    srunner_add_suite(sr, export_suite());
    srunner_add_suite(sr, reads_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    redis_proc_stop(&g_redis);
    curl_global_cleanup();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
