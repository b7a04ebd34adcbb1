/* main.c -- integration tests: one real redis-server for the process, rankd in-process per test;
 * with RANKD_TEST_CLUSTER=1, a real Redis Cluster instead (scripts/cluster-fixture.sh), the
 * suites whose code paths differ there and the cluster's own. Every suite of the run in this
 * process, or those of RANKD_TEST_SUITES=a,b (CK_RUN_SUITE=a: one): make test runs each suite
 * as a process of its own, several at once (scripts/test-run.sh, test/README.md); --list names
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "suite_list.h"
#include "suites.h"

struct redis_proc g_redis;
struct cluster_proc g_cluster;
int g_on_cluster;
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

void it_expect(const char *method, const char *path, const char *body, long want,
               struct http_result *r)
{
    http_expect(g_port, method, path, body, want, r);
}

void it_expect_free(const char *method, const char *path, const char *body, long want)
{
    http_expect_free(g_port, method, path, body, want);
}

void it_expect_error(const char *method, const char *path, const char *body, long want,
                     const char *code)
{
    http_expect_error(g_port, method, path, body, want, code);
}

cJSON *it_json(const char *method, const char *path, const char *body, long want)
{
    return http_expect_json(g_port, method, path, body, want);
}

cJSON *it_get(const char *path)
{
    return it_json("GET", path, NULL, 200);
}

void it_zkey(char *out, size_t len, const char *board, const char *period)
{
    board_zkey(out, len, g_app->cfg.key_prefix, board, period);
}

long long it_zcard(const char *board, const char *period)
{
    char k[256];
    it_zkey(k, sizeof(k), board, period);
    return redis_key_int(g_admin, "ZCARD", k);
}

int it_zhas(const char *board, const char *period, const char *id)
{
    return board_zhas(g_admin, g_app->cfg.key_prefix, board, period, id);
}

long long it_period_start(const char *board, const char *period)
{
    return board_period_start(g_admin, g_app->cfg.key_prefix, board, period);
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
        if (!it_skipped(name, cases[i].name))
            suite_add_tcase(s, it_tcase(cases[i].name, cases[i].test, timeout_s, it_setup));
    return s;
}

Suite *it_suite_with(const char *name, const struct it_timed_case *cases, size_t n,
                     void (*setup)(void))
{
    Suite *s = suite_create(name);
    for (size_t i = 0; i < n; i++)
        if (!it_skipped(name, cases[i].name))
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

/* Cases the cluster run leaves out, each for a reason of one Redis: "suite/case". */
static const char *const single_only[] = {
    /* registry entries with no board: a cluster's GET /boards leaves those out (what a failure
     * between the registry's call and the board's leaves behind) */
    "api/boards_cursor",
    /* a write to several boards at once: one script on one Redis; a cluster refuses it (422
     * several_boards_on_cluster: each board is in a slot of its own) */
    "writes/one_entry_many_boards",
    /* the same refusal: an idempotent write to several boards across a board's delete */
    "writes/idempotent_many_boards_after_delete",
    /* the same: a dense side set per board kept by one write.lua call over several boards (POST
     * /scores of several boards); refused on a cluster as above */
    "reads/dense_multi_board",
    /* MONITOR of one Redis counts what write.lua runs; on a cluster the records are written
     * after the script, by the caller, and each master has its own MONITOR */
    "writes/single_write_script_commands",
    /* the same, and write_one.lua's random walk reads both boards' keys on one Redis */
    "writes/short_write_commands",
    "writes/short_write_same_as_write_lua",
    "writes/import_chunk_script_commands",
    /* the same, and a cluster's uploads send one chunk at a time, in the general layout */
    "writes/import_short_layout",
    /* the same: MONITOR counts a page's commands on one Redis (on a cluster the records are
     * read after the script, by the caller) */
    "with/round_trips",
    NULL,
};

int it_skipped(const char *suite, const char *name)
{
    size_t sl = strlen(suite);
    for (size_t i = 0; g_on_cluster && single_only[i]; i++)
        if (strncmp(single_only[i], suite, sl) == 0 && single_only[i][sl] == '/' &&
            strcmp(single_only[i] + sl + 1, name) == 0)
            return 1;
    return 0;
}

/* The suites, in the order they run; `cluster`: also on the cluster run, with their set-up and
 * checks through the routed admin (cluster.h; the cases that need one Redis are in
 * single_only). The cluster run repeats only the suites whose code paths differ on a cluster
 * (test/README.md, "On a Redis Cluster"): the registry and board listing (api), records in
 * buckets read in a second round trip (reads, export, boarddata), writes with their records
 * after the scores and the several-boards refusal (writes), the page cache's fill and lock on
 * the board's master (page_cache), reads from replicas (replicas_api, replicas) and the cluster's own suite (slots
 * moved, a master killed: it runs last). The others (ordering, cities, numbers, hardening, clients,
 * lifecycle) run the same scripts in the board's slot as on one Redis, through the same routing the
 * suites above cover. One suite a line: past 21 entries clang-format would pack them in columns. */
/* clang-format off */
static const struct {
    const char *name; /* the Suite's name (CK_RUN_SUITE, RANKD_TEST_SUITES, --list) */
    Suite *(*suite)(void);
    int single, cluster;
} suites[] = {
    {"api", api_suite, 1, 1},
    {"ordering", ordering_suite, 1, 0},
    {"wide", wide_suite, 1, 0},
    {"subscores", subscores_suite, 1, 0},
    {"cities", cities_suite, 1, 0},
    {"faults", faults_suite, 1, 0},
    {"page_cache", page_cache_suite, 1, 1},
    {"lifecycle", lifecycle_suite, 1, 0},
    {"timezones", timezones_suite, 1, 0},
    {"request_path", path_suite, 1, 0},
    {"hardening", hardening_suite, 1, 0},
    {"numbers", numbers_suite, 1, 0},
    {"clients", clients_suite, 1, 0},
    {"boarddata", boarddata_suite, 1, 1},
    {"acl", acl_suite, 1, 0},
    {"ops", ops_suite, 1, 0},
    {"security", security_suite, 1, 0},
    {"writes", writes_suite, 1, 1},
    {"uploads", uploads_suite, 1, 0},
    {"export", export_suite, 1, 1},
    {"reads", reads_suite, 1, 1},
    {"with", with_suite, 1, 1},
    {"updated_at", updated_suite, 1, 0},
    {"streams", streams_suite, 1, 0},
    {"attack12", attack12_suite, 1, 0},
    {"sentinel", sentinel_suite, 1, 0},
    {"replicas_api", replicas_api_suite, 1, 1},
    {"sentinel_replicas", sentinel_replicas_suite, 1, 0},
    {"replicas", replicas_suite, 0, 1},
    {"cluster", cluster_suite, 0, 1},
};
/* clang-format on */

#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* The suites of this run (single or cluster), those of RANKD_TEST_SUITES when it is set. */
static SRunner *runner(const char *only)
{
    SRunner *sr = NULL;
    for (size_t i = 0; i < NSUITES; i++) {
        if (!(g_on_cluster ? suites[i].cluster : suites[i].single) ||
            !suite_listed(only, suites[i].name))
            continue;
        Suite *s = suites[i].suite();
        if (sr)
            srunner_add_suite(sr, s);
        else
            sr = srunner_create(s);
    }
    return sr;
}

/* --list: the names of this run's suites (with RANKD_TEST_CLUSTER=1: the cluster run's), one a
 * line, in the order they run (what scripts/test-run.sh starts as processes of their own). */
static int list_suites(void)
{
    for (size_t i = 0; i < NSUITES; i++)
        if (g_on_cluster ? suites[i].cluster : suites[i].single)
            printf("%s\n", suites[i].name);
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    int ci = getenv("CI") && strcmp(getenv("CI"), "true") == 0;
    g_on_cluster = getenv("RANKD_TEST_CLUSTER") && strcmp(getenv("RANKD_TEST_CLUSTER"), "1") == 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0)
        return list_suites();
    if (argc > 1) {
        fprintf(stderr,
                "usage: %s [--list] (environment: CK_RUN_SUITE, CK_RUN_CASE, "
                "RANKD_TEST_SUITES=a,b, RANKD_TEST_CLUSTER=1; test/README.md)\n",
                argv[0]);
        return EXIT_FAILURE;
    }
    const char *only = getenv("RANKD_TEST_SUITES");
    if (!only || !*only)
        only = getenv("CK_RUN_SUITE");
    SRunner *sr = runner(only);
    if (!sr) {
        fprintf(stderr, "no suite of this run is named '%s' (--list names them)\n", only);
        return EXIT_FAILURE;
    }
    if (system("command -v redis-server >/dev/null 2>&1") != 0) {
        fprintf(stderr, "redis-server is not installed (make deps installs it)\n");
        return ci ? EXIT_FAILURE : 77;
    }
    if (g_on_cluster) {
        if (cluster_proc_start(&g_cluster)) {
            fprintf(stderr, "could not start a Redis Cluster\n");
            return EXIT_FAILURE;
        }
        fixture_use_cluster(&g_cluster);
        g_redis.port = g_cluster.ports[0]; /* what the suites hand rankd_test_start: the cluster */
    } else if (redis_proc_start(&g_redis)) {
        fprintf(stderr, "could not start redis-server\n");
        return EXIT_FAILURE;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (g_on_cluster)
        cluster_proc_stop(&g_cluster);
    else
        redis_proc_stop(&g_redis);
    curl_global_cleanup();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
