/* suites.h -- the integration suites and their shared fixture (one Redis for the run). */
#ifndef RANKD_TEST_SUITES_H
#define RANKD_TEST_SUITES_H

#include <check.h>

#include "checks.h"
#include "fixture.h"

extern struct redis_proc g_redis;     /* started by main.c for the whole run; on the cluster run
                                       * only its port is set: a master of g_cluster */
extern struct cluster_proc g_cluster; /* RANKD_TEST_CLUSTER=1: the run's Redis Cluster */
extern int g_on_cluster;              /* 1 on the cluster run */
extern struct rankd *g_app;           /* per test (checked fixture), port in g_port */
extern int g_port;
extern redisContext *g_admin; /* per test */

/** Checked fixture: FLUSHALL, start rankd with TEST_TOKEN, open an admin connection. */
void it_setup(void);

/** it_setup with rankd on fixture_clock_hooks, the clock the real one until a test sets it. */
void it_setup_clock(void);
void it_teardown(void);

/** Status of one request (body may be NULL); the result is freed. */
long it_status(const char *method, const char *path, const char *body);

/** http_expect (checks.h) on rankd at g_port: the status must be `want`; r is the caller's. */
void it_expect(const char *method, const char *path, const char *body, long want,
               struct http_result *r);

/** it_expect, the result freed. */
void it_expect_free(const char *method, const char *path, const char *body, long want);

/** it_expect, and the error code must be `code`; freed. */
void it_expect_error(const char *method, const char *path, const char *body, long want,
                     const char *code);

/** it_expect; its parsed body (cJSON_Delete it). */
cJSON *it_json(const char *method, const char *path, const char *body, long want);

/** GET path (with the token): 200, and its parsed body (cJSON_Delete it). */
cJSON *it_get(const char *path);

/** POST a JSON body to /boards/{board}/scores and assert 200. */
void it_post_score(const char *board, const char *json);

/** board_zkey with the test rankd's key prefix. */
void it_zkey(char *out, size_t len, const char *board, const char *period);

/** ZCARD of the set of `board`'s `period` (NULL: the board's own set), on g_admin. */
long long it_zcard(const char *board, const char *period);

/** board_zhas on g_admin with the test rankd's key prefix. */
int it_zhas(const char *board, const char *period, const char *id);

/** board_period_start on g_admin with the test rankd's key prefix. */
long long it_period_start(const char *board, const char *period);

/** DBSIZE of the test database. */
long long it_dbsize(void);

/** One test case of a suite of it_suite. */
struct it_case {
    const char *name;
    const TTest *test;
};

/** 1 when case `name` of suite `suite` is not run on this run: on the cluster run, the cases
 *  that need one Redis (main.c lists them with their reasons). Suites that build their own
 *  TCases ask it too. */
int it_skipped(const char *suite, const char *name);

/** A suite of one TCase per case, each with the checked fixture above and a 30 s timeout. */
Suite *it_suite(const char *name, const struct it_case *cases, size_t n);

/** The same with another timeout (seconds) for each case. */
Suite *it_suite_timeout(const char *name, const struct it_case *cases, size_t n, int timeout_s);
/** One test case of it_suite_with: its own timeout. */
struct it_timed_case {
    const char *name;
    const TTest *test;
    double timeout_s;
};

/** A suite of one TCase per case with another checked set-up (it_setup_clock), it_teardown
 *  after each case. */
Suite *it_suite_with(const char *name, const struct it_timed_case *cases, size_t n,
                     void (*setup)(void));

Suite *api_suite(void);
Suite *ordering_suite(void);
Suite *wide_suite(void);
Suite *subscores_suite(void);
/** The `subscores` suite's cases of test_subscores_replies.c (added to s). */
void subscores_replies_add(Suite *s);
Suite *cities_suite(void);
Suite *faults_suite(void);
Suite *page_cache_suite(void);
Suite *lifecycle_suite(void);
Suite *timezones_suite(void);
Suite *path_suite(void);
Suite *hardening_suite(void);
Suite *numbers_suite(void);
Suite *clients_suite(void);
Suite *boarddata_suite(void);
Suite *acl_suite(void);
Suite *ops_suite(void);
Suite *security_suite(void);
Suite *writes_suite(void);
/** The `writes` suite's cases of test_writes_short.c (added to s). */
void writes_short_add(Suite *s);
Suite *uploads_suite(void);
Suite *export_suite(void);
Suite *reads_suite(void);
Suite *with_suite(void);
Suite *updated_suite(void);
Suite *cluster_suite(void);
Suite *sentinel_suite(void);
Suite *sentinel_replicas_suite(void);
Suite *replicas_suite(void);
Suite *replicas_api_suite(void);
Suite *streams_suite(void);
Suite *attack12_suite(void);

#endif
