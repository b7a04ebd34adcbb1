/*
 * test_faults.c -- rankd under Redis faults, against a real redis-server:
 *   - Redis down: every Redis-backed route answers 503 redis_unavailable + Retry-After, fast
 *     (the store's dial back-off), /healthz stays 200 and /readyz is 503;
 *   - Redis restarted: the same rankd serves reads and writes again within 3 s;
 *   - script cache lost (SCRIPT FLUSH, restart): the NOSCRIPT -> EVAL fallback keeps writes and
 *     reads working;
 *   - no blocking commands: every operation on a 300,000-member board sends only bounded
 *     commands (MONITOR), and deleting it sends UNLINK, never DEL / KEYS / FLUSH* (MONITOR and
 *     INFO commandstats);
 *   - a slow Redis (CLIENT PAUSE; a busy Lua script) or a failing one (maxmemory): requests fail
 *     with 503 within the command timeout and rankd serves normally afterwards;
 *   - isolation: requests stuck on a paused Redis do not delay /healthz on other connections;
 *     300 clients that send half a request hold no thread and delay no one;
 *   - a write pause (what FAILOVER does): ranked reads keep working, only writes fail.
 *
 * Every test stops, restarts, pauses or MONITORs Redis, so each runs its OWN redis-server and its
 * own rankd (never the shared g_redis): the checked fixture below starts both inside the forked
 * test process and stops both after it. (DEBUG SLEEP is not used: Redis 7 refuses DEBUG unless
 * enable-debug-command is set at start-up; CLIENT PAUSE and a busy script need no such option.)
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "request.h"
#include "score_codec.h"
#include "suites.h"

#define BIG "big"           /* the board deleted under MONITOR */
#define BIG_MEMBERS 300000  /* members of the board deleted under MONITOR */
#define POLL_MS 50          /* recovery polling interval */
#define RECOVERY_S 3.0      /* rankd must serve again within this after Redis is back */
#define DOWN_LIMIT_S 1.0    /* a 503 while Redis is down must come faster than this */
#define HEALTHZ_LIMIT_S 0.1 /* /healthz while other requests are stuck */
#define PAUSE_MS 2000       /* CLIENT PAUSE length */
#define MONITOR_MARKER "rankd-faults-monitor-end"

/* This test's own Redis, rankd and admin connection (per forked test: checked fixture). */
static struct redis_proc f_redis;
static struct rankd *f_app;
static int f_port;
static redisContext *f_admin;

static void faults_setup(void)
{
    /* As service/main.c does: a write on a connection Redis has reset must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    ck_assert_msg(redis_proc_start(&f_redis) == 0, "could not start this test's redis-server");
    f_app = rankd_test_start(f_redis.port, TEST_TOKEN);
    f_port = rankd_port(f_app);
    f_admin = redis_admin(f_redis.port);
}

static void faults_teardown(void)
{
    rankd_stop(f_app);
    f_app = NULL;
    redisFree(f_admin);
    f_admin = NULL;
    redis_proc_stop(&f_redis);
    /* Passed: drop the scratch directory (a failed test keeps it, log included). */
    char file[200];
    snprintf(file, sizeof(file), "%s/redis.log", f_redis.dir);
    unlink(file);
    rmdir(f_redis.dir);
}

/* ---------------------------------------------------------------- helpers */

/* rankd's Redis command timeout in seconds, and the bound a slow-Redis 503 must meet. */
static double command_timeout_s(void)
{
    return f_app->cfg.redis_timeout_ms / 1000.0;
}

static double slow_limit_s(void)
{
    return command_timeout_s() + 0.8; /* 1.8 s with the default 1000 ms */
}

/* One request with the write token; a transport failure (rankd gone or hung) fails the test. */
static void req(const char *method, const char *path, const char *body, const char *ctype,
                struct http_result *r)
{
    int rc = http_req(f_port, method, path, body, body ? strlen(body) : 0, ctype, TEST_TOKEN, r);
    ck_assert_msg(rc == 0, "%s %s: no HTTP answer from rankd", method, path);
}

/* 1 when the reply carries `Retry-After: N` with N >= 1 seconds. */
static int has_retry_after(const struct http_result *r)
{
    const char *h = r->headers ? strcasestr(r->headers, "\nRetry-After:") : NULL;
    return h && strtol(h + strlen("\nRetry-After:"), NULL, 10) >= 1;
}

/* redis_unavailable; a write that timed out after it was sent is write_outcome_unknown. */
static int fault_code_ok(const char *method, const char *code)
{
    return strcmp(code, "redis_unavailable") == 0 ||
           (strcmp(method, "GET") != 0 && strcmp(code, "write_outcome_unknown") == 0);
}

/* Assert the Redis-fault reply (503, redis_unavailable, Retry-After) within limit_s; its time. */
static double expect_unavailable(const char *method, const char *path, const char *body,
                                 const char *ctype, double limit_s)
{
    struct http_result r;
    req(method, path, body, ctype, &r);
    ck_assert_msg(r.status == 503 && fault_code_ok(method, http_error_code(&r)),
                  "%s %s -> %ld %s; want 503 redis_unavailable", method, path, r.status, r.body);
    ck_assert_msg(has_retry_after(&r), "%s %s: 503 without Retry-After; headers:\n%s", method, path,
                  r.headers ? r.headers : "");
    ck_assert_msg(r.seconds < limit_s, "%s %s took %.3f s; want < %.2f s", method, path, r.seconds,
                  limit_s);
    double s = r.seconds;
    http_result_free(&r);
    return s;
}

static void post_score(const char *board, const char *id, long score)
{
    char path[160], body[200];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%ld}", id, score);
    http_expect_free(f_port, "POST", path, body, 200);
}

/* GET /boards/{board}: its total (asserts 200). */
static long long board_total(const char *board)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    http_expect(f_port, "GET", path, NULL, 200, &r);
    long long n = (long long)json_num(r.json, "total");
    http_result_free(&r);
    return n;
}

/* GET /boards/{board}/members/{id}: assert 200 with this score and rank. */
static void expect_member(const char *board, const char *id, double score, long rank)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    struct http_result r;
    http_expect(f_port, "GET", path, NULL, 200, &r);
    ck_assert_msg(json_num(r.json, "score") == score && (long)json_num(r.json, "rank") == rank,
                  "%s -> %s; want score %g rank %ld", path, r.body, score, rank);
    http_result_free(&r);
}

/* Repeat a request every POLL_MS until it answers `want` or limit_s passes: seconds, or -1. */
static double poll_until(const char *method, const char *path, const char *body, long want,
                         double limit_s, int *tries)
{
    double t0 = now_s();
    for (*tries = 1;; ++*tries) {
        struct http_result r;
        req(method, path, body, NULL, &r);
        long status = r.status;
        http_result_free(&r);
        double took = now_s() - t0;
        if (status == want)
            return took;
        if (took > limit_s)
            return -1;
        sleep_ms(POLL_MS);
    }
}

/* The admin connection died with its Redis: dial the (restarted) one again. */
static void admin_reconnect(void)
{
    redisFree(f_admin);
    f_admin = redis_admin(f_redis.port);
}

/* A request on its own thread (assertions stay on the test's thread). */
struct job {
    pthread_t thread;
    const char *method, *path, *body;
    int rc;
    struct http_result res;
};

static void *job_run(void *arg)
{
    struct job *j = arg;
    j->rc = http_req(f_port, j->method, j->path, j->body, j->body ? strlen(j->body) : 0, NULL,
                     TEST_TOKEN, &j->res);
    return NULL;
}

static void job_start(struct job *j, const char *method, const char *path, const char *body)
{
    memset(j, 0, sizeof(*j));
    j->method = method;
    j->path = path;
    j->body = body;
    ck_assert_int_eq(pthread_create(&j->thread, NULL, job_run, j), 0);
}

/* Join and assert the Redis-fault reply within limit_s; the job's result is freed. */
static double job_expect_unavailable(struct job *j, double limit_s)
{
    pthread_join(j->thread, NULL);
    ck_assert_msg(j->rc == 0, "%s %s: no HTTP answer from rankd", j->method, j->path);
    struct http_result *r = &j->res;
    ck_assert_msg(r->status == 503 && fault_code_ok(j->method, http_error_code(r)),
                  "%s %s -> %ld %s; want 503 redis_unavailable", j->method, j->path, r->status,
                  r->body);
    ck_assert_msg(has_retry_after(r), "%s %s: 503 without Retry-After", j->method, j->path);
    ck_assert_msg(r->seconds < limit_s, "%s %s took %.3f s while Redis was paused; want < %.2f s",
                  j->method, j->path, r->seconds, limit_s);
    double s = r->seconds;
    http_result_free(r);
    return s;
}

/* CLIENT PAUSE for ms, mode ALL or WRITE; returns when the pause started (monotonic seconds). */
static double pause_redis(int ms, const char *mode)
{
    redisReply *r = redis_admin_cmd(f_admin, "CLIENT PAUSE %d %s", ms, mode);
    ck_assert_msg(r->type == REDIS_REPLY_STATUS, "CLIENT PAUSE failed: %s", r->str);
    freeReplyObject(r);
    return now_s();
}

static void wait_until(double t)
{
    while (now_s() < t)
        sleep_ms(10);
}

/* ---------------------------------------------------------------- 1. Redis down */

/* Every Redis-backed route, with a valid request (so only the Redis fault can answer). */
static const struct {
    const char *method, *path, *body, *ctype;
} redis_routes[] = {
    {"GET", "/boards/x/rank", NULL, NULL},
    {"GET", "/boards/x/members/a", NULL, NULL},
    {"POST", "/boards/x/scores", "{\"id\":\"a\",\"score\":7}", NULL},
    {"PUT", "/boards/x", "{\"page_size\":10}", NULL},
    {"GET", "/boards", NULL, NULL},
    {"GET", "/boards/x", NULL, NULL},
    {"GET", "/rank?board=x", NULL, NULL},
    {"GET", "/boards/x/members/a/around", NULL, NULL},
    {"POST", "/boards/x/scores", "{\"entries\":[{\"id\":\"a\",\"score\":7}]}", NULL},
    {"POST", "/boards/x/scores", "{\"id\":\"a\",\"score\":7}\n{\"id\":\"b\",\"score\":8}\n",
     "application/x-ndjson"},
    {"DELETE", "/boards/x/members/a", NULL, NULL},
    {"DELETE", "/boards/x", NULL, NULL},
    {"GET", "/items/a", NULL, NULL},
    {"PUT", "/items/a", "{\"name\":\"A\"}", NULL},
    {"DELETE", "/items/a", NULL, NULL},
};
#define N_REDIS_ROUTES (sizeof(redis_routes) / sizeof(redis_routes[0]))

START_TEST(test_redis_down)
{
    /* rankd has live pool connections when Redis dies (the harder case: they fail on use). */
    post_score("x", "a", 5);
    http_expect_free(f_port, "GET", "/readyz", NULL, 200);
    redis_proc_stop(&f_redis);

    for (size_t i = 0; i < N_REDIS_ROUTES; i++)
        expect_unavailable(redis_routes[i].method, redis_routes[i].path, redis_routes[i].body,
                           redis_routes[i].ctype, DOWN_LIMIT_S);

    struct http_result r;
    http_expect(f_port, "GET", "/healthz", NULL, 200, &r);
    ck_assert_msg(r.seconds < DOWN_LIMIT_S, "/healthz took %.3f s", r.seconds);
    http_result_free(&r);
    expect_unavailable("GET", "/readyz", NULL, NULL, DOWN_LIMIT_S);
    http_expect_free(f_port, "GET", "/metrics", NULL, 200);

    /* 50 in a row: the back-off keeps every one fast, none waits for a dial or a timeout. */
    double max = 0, total = 0;
    for (int i = 0; i < 50; i++) {
        size_t k = (size_t)i % 5; /* page, member, write, board settings, board list */
        double s = expect_unavailable(redis_routes[k].method, redis_routes[k].path,
                                      redis_routes[k].body, redis_routes[k].ctype, DOWN_LIMIT_S);
        total += s;
        if (s > max)
            max = s;
    }
    ck_assert_msg(max < DOWN_LIMIT_S, "slowest of 50 requests with Redis down: %.3f s", max);
    fprintf(stderr, "faults: Redis down: 50 requests, max %.4f s, mean %.4f s\n", max, total / 50);

    /* Still alive. */
    http_expect_free(f_port, "GET", "/healthz", NULL, 200);
}
END_TEST

/* ---------------------------------------------------------------- 2. recovery */

START_TEST(test_recovery_after_restart)
{
    post_score("r", "old", 5);
    redis_proc_stop(&f_redis);
    /* Keep failing for a while so the pool's back-off grows towards its 2 s ceiling. */
    double t0 = now_s();
    int down = 0;
    while (now_s() - t0 < 1.5) {
        expect_unavailable("GET", "/boards/r/rank", NULL, NULL, DOWN_LIMIT_S);
        down++;
        sleep_ms(20);
    }

    ck_assert_int_eq(redis_proc_restart(&f_redis), 0);
    admin_reconnect();
    double up = now_s();
    int tries = 0;
    double read_s = poll_until("GET", "/boards", NULL, 200, RECOVERY_S, &tries);
    ck_assert_msg(read_s >= 0, "reads still fail %.1f s after Redis came back (%d tries)",
                  RECOVERY_S, tries);
    int wtries = 0;
    double left = RECOVERY_S - (now_s() - up);
    double write_s = poll_until("POST", "/boards/r/scores", "{\"id\":\"new\",\"score\":42}", 200,
                                left > 0 ? left : 0, &wtries);
    ck_assert_msg(write_s >= 0, "writes still fail %.1f s after Redis came back (%d tries)",
                  RECOVERY_S, wtries);
    fprintf(stderr,
            "faults: recovery: %d requests while down; reads back after %.3f s (%d tries), "
            "writes %.3f s later (%d tries)\n",
            down, read_s, tries, write_s, wtries);

    /* Data written after the restart reads back (the old data died with the unsaved Redis). */
    expect_member("r", "new", 42, 1);
    struct http_result r;
    http_expect(f_port, "GET", "/boards/r/rank", NULL, 200, &r);
    ck_assert_msg(json_num(r.json, "total") == 1, "rank after restart: %s", r.body);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "items"), 0);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(first, "id")), "new");
    http_result_free(&r);
    http_expect_free(f_port, "GET", "/readyz", NULL, 200);
    redisReply *z = redis_admin_cmd(f_admin, "ZCARD %s:{r}:z", f_app->cfg.key_prefix);
    ck_assert_int_eq(z->integer, 1);
    freeReplyObject(z);
}
END_TEST

/* ---------------------------------------------------------------- 3. script cache lost */

/* A board whose pages are always read from the sorted set (page_ttl_ms 0). */
static void uncached_board(const char *board)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s", board);
    http_expect_free(f_port, "PUT", path, "{\"page_ttl_ms\":0}", 201);
}

START_TEST(test_scripts_reloaded)
{
    uncached_board("sc"); /* so that every page read runs page.lua */
    post_score("sc", "a", 10);
    http_expect_free(f_port, "GET", "/boards/sc/rank", NULL, 200);

    freeReplyObject(redis_admin_cmd(f_admin, "SCRIPT FLUSH"));
    long long eval0 = redis_cmd_calls(f_admin, "eval");
    post_score("sc", "b", 20); /* EVALSHA -> NOSCRIPT -> EVAL */
    long long eval1 = redis_cmd_calls(f_admin, "eval");
    ck_assert_msg(eval1 == eval0 + 1, "a write after SCRIPT FLUSH ran EVAL %lld times; want 1",
                  eval1 - eval0);
    post_score("sc", "c", 30); /* the EVAL cached the script again: EVALSHA works */
    ck_assert_msg(redis_cmd_calls(f_admin, "eval") == eval1,
                  "the write script was not re-cached by the EVAL fallback (EVAL ran again)");

    struct http_result r;
    http_expect(f_port, "GET", "/boards/sc/rank", NULL, 200, &r); /* page.lua: NOSCRIPT too */
    ck_assert_msg(json_num(r.json, "total") == 3, "rank after SCRIPT FLUSH: %s", r.body);
    const cJSON *items = cJSON_GetObjectItem(r.json, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 3);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "id")),
                     "c");
    http_result_free(&r);
    expect_member("sc", "a", 10, 3);
    http_expect_free(f_port, "GET", "/boards/sc/members/b/around", NULL, 200);
    http_expect_free(f_port, "PUT", "/boards/sc", "{\"page_size\":5}", 200);
    /* page, member, around and put_board each fell back to EVAL once (a page cache lookup is
     * plain commands) */
    ck_assert_int_eq(redis_cmd_calls(f_admin, "eval"), eval1 + 4);

    /* A restarted Redis: no data, no scripts; the same rankd must write and read again. */
    ck_assert_int_eq(redis_proc_restart(&f_redis), 0);
    admin_reconnect();
    int tries = 0;
    double s = poll_until("POST", "/boards/sc2/scores", "{\"id\":\"x\",\"score\":1}", 200,
                          RECOVERY_S, &tries);
    ck_assert_msg(s >= 0, "writes still fail %.1f s after the restart (%d tries)", RECOVERY_S,
                  tries);
    fprintf(stderr, "faults: scripts: writes back %.3f s after the restart (%d tries)\n", s, tries);
    post_score("sc2", "y", 2);
    expect_member("sc2", "y", 2, 1);
    expect_member("sc2", "x", 1, 2);
    ck_assert_int_eq(board_total("sc2"), 2);
    http_expect_free(f_port, "GET", "/boards/sc2/rank", NULL, 200);
    http_expect_free(f_port, "PUT", "/boards/sc3", "{\"page_size\":5}", 201);
    http_expect_free(f_port, "GET", "/boards/sc/rank", NULL, 404); /* gone with the old Redis */
}
END_TEST

/* ---------------------------------------------------------------- 4. no blocking commands */

/* The board's keys, loaded straight into Redis (test/support/fixture.h). */
static void load_board_direct(const char *board, int n)
{
    fixture_load_board(f_admin, f_app->cfg.key_prefix, board, n,
                       "order desc tiebreak first score_decimals 0 page_size 20 page_ttl_ms 1000");
}

/* Index of the first argument from `from` on equal to `word`, or -1. */
static int mon_word(const struct mon_cmd *c, const char *word, int from)
{
    for (int i = from; i < c->argc && i < MON_TOKENS; i++)
        if (strcasecmp(c->argv[i], word) == 0)
            return i;
    return -1;
}

#define RANGE_MAX 1000 /* the most items one command may touch (redis-discipline.md) */

/*
 * Why a command could block Redis or do work that grows with a board, or NULL when it is bounded:
 * DEL, KEYS, FLUSH* without ASYNC, SAVE, whole-set operations, rank ranges over RANGE_MAX items,
 * by-score ranges without LIMIT (or over RANGE_MAX), HGETALL of the shared records hash, and
 * script calls over BOARD_BATCH_MAX entries.
 */
static const char *mon_unbounded(const struct mon_cmd *c, const char *items_key)
{
    static const char *const never[] = {"DEL",
                                        "KEYS",
                                        "SAVE",
                                        "SORT",
                                        "SORT_RO",
                                        "ZUNIONSTORE",
                                        "ZINTERSTORE",
                                        "ZDIFFSTORE",
                                        "ZRANGESTORE",
                                        "ZUNION",
                                        "ZINTER",
                                        "ZDIFF",
                                        "ZREMRANGEBYRANK",
                                        "ZREMRANGEBYSCORE",
                                        "ZREMRANGEBYLEX",
                                        "HKEYS",
                                        "HVALS",
                                        "SCAN",
                                        "ZSCAN",
                                        "HSCAN",
                                        "SUNIONSTORE",
                                        "SMOVE",
                                        "DEBUG"};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        if (mon_is(c, never[i]))
            return "a command rankd must never send";
    if ((mon_is(c, "FLUSHALL") || mon_is(c, "FLUSHDB")) &&
        !(c->argc >= 2 && strcasecmp(c->argv[1], "ASYNC") == 0))
        return "FLUSHALL/FLUSHDB without ASYNC";
    if (mon_is(c, "HGETALL") && c->argc >= 2 && strcmp(c->argv[1], items_key) == 0)
        return "HGETALL of the records hash shared by all boards";
    int by_name = mon_is(c, "ZRANGEBYSCORE") || mon_is(c, "ZREVRANGEBYSCORE") ||
                  mon_is(c, "ZRANGEBYLEX") || mon_is(c, "ZREVRANGEBYLEX");
    if (by_name || mon_is(c, "ZRANGE") || mon_is(c, "ZREVRANGE")) {
        if (c->argc < 4)
            return "malformed range";
        if (by_name || mon_word(c, "BYSCORE", 4) > 0 || mon_word(c, "BYLEX", 4) > 0) {
            int limit = mon_word(c, "LIMIT", 4);
            if (limit < 0 || limit + 2 >= MON_TOKENS || limit + 2 >= c->argc)
                return "a by-score range without LIMIT";
            long count = strtol(c->argv[limit + 2], NULL, 10);
            if (count < 0 || count > RANGE_MAX)
                return "a by-score range with a LIMIT count over 1000 (or -1)";
            return NULL;
        }
        long start = strtol(c->argv[2], NULL, 10), stop = strtol(c->argv[3], NULL, 10);
        if ((start < 0) != (stop < 0) || labs(stop - start) >= RANGE_MAX)
            return "a rank range over 1000 items";
        return NULL;
    }
    if ((mon_is(c, "EVALSHA") || mon_is(c, "EVAL") || mon_is(c, "EVALSHA_RO") ||
         mon_is(c, "EVAL_RO")) &&
        c->argc > 3 + 9 + 11 + 16 + 6 * BOARD_BATCH_MAX) /* verb, sha, nkeys; write.lua's one
                                                         * board: 9 keys, 11 + 16 fixed values,
                                                         * 6 per entry */
        return "a script call carrying more than 1000 entries";
    return NULL;
}

/* The checker must catch what it is there for (or every MONITOR assertion would be vacuous). */
static void mon_self_test(const char *items_key)
{
    static const struct {
        const char *line;
        int bad;
    } cases[] = {
        {"1.5 [0 127.0.0.1:1] \"DEL\" \"k\"", 1},
        {"1.5 [0 lua] \"del\" \"k\"", 1},
        {"1.5 [0 127.0.0.1:1] \"KEYS\" \"*\"", 1},
        {"1.5 [0 127.0.0.1:1] \"FLUSHALL\"", 1},
        {"1.5 [0 127.0.0.1:1] \"FLUSHDB\" \"ASYNC\"", 0},
        {"1.5 [0 lua] \"ZRANGE\" \"k\" \"0\" \"-1\" \"WITHSCORES\"", 1},
        {"1.5 [0 lua] \"ZRANGE\" \"k\" \"100\" \"5000\"", 1},
        {"1.5 [0 lua] \"ZRANGE\" \"k\" \"149980\" \"149999\" \"WITHSCORES\"", 0},
        {"1.5 [0 lua] \"ZRANGE\" \"k\" \"9\" \"1\" \"BYSCORE\" \"REV\" \"LIMIT\" \"0\" \"1\"", 0},
        {"1.5 [0 lua] \"ZRANGE\" \"k\" \"1\" \"9\" \"BYSCORE\"", 1},
        {"1.5 [0 lua] \"ZRANGEBYSCORE\" \"k\" \"-inf\" \"+inf\" \"LIMIT\" \"0\" \"-1\"", 1},
        {"1.5 [0 lua] \"ZREMRANGEBYRANK\" \"k\" \"0\" \"0\"", 1},
        {"1.5 [0 lua] \"UNLINK\" \"a\\\"b\" \"k\"", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mon_cmd c;
        ck_assert_msg(mon_parse(cases[i].line, &c) == 0, "cannot parse %s", cases[i].line);
        ck_assert_msg((mon_unbounded(&c, items_key) != NULL) == cases[i].bad,
                      "checker misjudges %s", cases[i].line);
    }
    struct mon_cmd c;
    char line[300];
    snprintf(line, sizeof(line), "1.5 [0 lua] \"HGETALL\" \"%.200s\"", items_key);
    ck_assert(mon_parse(line, &c) == 0 && mon_unbounded(&c, items_key) != NULL);
    ck_assert(mon_parse("1.5 [0 lua] \"UNLINK\" \"a\\\"b\" \"k\"", &c) == 0 && c.lua &&
              c.argc == 3 && strcmp(c.argv[1], "a\"b") == 0);
}

struct monitor_scan {
    int lines, script_lines;
    int unlink_board; /* an UNLINK naming the board's sorted set */
    int unbounded;    /* commands mon_unbounded objects to */
    char first_bad[400];
    const char *first_reason;
    int write_calls_big; /* EVALSHA/EVAL lines of write.lua for the big board */
};

/* Read the MONITOR stream up to the marker's ECHO, classifying every command. */
static void scan_monitor(redisContext *mon, const char *zkey, const char *items_key,
                         struct monitor_scan *s)
{
    memset(s, 0, sizeof(*s));
    for (;;) {
        void *v = NULL;
        ck_assert_msg(redisGetReply(mon, &v) == REDIS_OK && v,
                      "MONITOR stream ended before the marker: %s", mon->errstr);
        redisReply *r = v;
        ck_assert_int_eq(r->type, REDIS_REPLY_STATUS);
        const char *line = r->str;
        if (strstr(line, MONITOR_MARKER)) {
            freeReplyObject(r);
            return;
        }
        struct mon_cmd c;
        ck_assert_msg(mon_parse(line, &c) == 0, "unreadable MONITOR line: %.300s", line);
        s->lines++;
        s->script_lines += c.lua;
        if (mon_is(&c, "UNLINK") && mon_word(&c, zkey, 1) > 0)
            s->unlink_board = 1;
        if ((mon_is(&c, "EVALSHA") || mon_is(&c, "EVAL")) && mon_word(&c, zkey, 3) == 3)
            s->write_calls_big++; /* write.lua and compact.lua take the set as KEYS[1] */
        const char *why = mon_unbounded(&c, items_key);
        if (why) {
            if (!s->unbounded) {
                snprintf(s->first_bad, sizeof(s->first_bad), "%.390s", line);
                s->first_reason = why;
            }
            s->unbounded++;
        }
        freeReplyObject(r);
    }
}

/* POST a body to /boards/{board}/scores and assert 200 with `applied` entries applied. */
static void post_applied(const char *board, const char *body, const char *ctype, long applied)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    struct http_result r;
    req("POST", path, body, ctype, &r);
    ck_assert_msg(r.status == 200 && json_num(r.json, "applied") == applied,
                  "POST %s (%s) -> %ld %.300s; want 200 with %ld applied", path,
                  ctype ? ctype : "json", r.status, r.body, applied);
    http_result_free(&r);
}

/* Every operation on a 300,000-member board, then its deletion, under MONITOR. */
static void big_board_operations(void)
{
    const char *path = "/boards/" BIG "/scores";
    struct http_result r;
    /* pages at the start, the middle and the end; the biggest page */
    http_expect(f_port, "GET", "/boards/" BIG "/rank?page=7500", NULL, 200, &r);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "items"), 0);
    ck_assert_int_eq((long)json_num(first, "rank"), 149981);
    http_result_free(&r);
    http_expect_free(f_port, "GET", "/boards/" BIG "/rank?page=3000&size=100", NULL, 200);
    http_expect_free(f_port, "GET", "/boards/" BIG "/rank?page=15000", NULL, 200);
    http_expect_free(f_port, "GET", "/rank?board=" BIG, NULL, 200);
    expect_member(BIG, "m150000", BIG_MEMBERS - 150000, 150001);
    http_expect_free(f_port, "GET", "/boards/" BIG "/members/m150000/around?size=100", NULL, 200);
    http_expect_free(f_port, "GET", "/boards/" BIG "/members/m299999/around", NULL, 200);
    http_expect_free(f_port, "GET", "/boards/" BIG, NULL, 200);
    http_expect_free(f_port, "GET", "/boards", NULL, 200);
    http_expect_free(f_port, "PUT", "/boards/" BIG, "{\"page_size\":50}", 200);

    /* writes: a tie with an existing score (tiebreak first: after it), incr, best, a batch */
    http_expect(f_port, "POST", path, "{\"id\":\"tie\",\"score\":150000}", 200, &r);
    ck_assert_msg(json_num(r.json, "rank") == 150002, "tie write: %s", r.body); /* m150000 +1 */
    http_result_free(&r);
    http_expect_free(f_port, "POST", path, "{\"id\":\"m000005\",\"score\":5,\"op\":\"incr\"}", 200);
    http_expect_free(f_port, "POST", path, "{\"id\":\"m000006\",\"score\":1,\"op\":\"best\"}", 200);
    struct buf batch = {0};
    buf_append(&batch, "{\"entries\":[", 12);
    for (int i = 0; i < BOARD_BATCH_MAX; i++) {
        char e[64];
        int n = snprintf(e, sizeof(e), "%s{\"id\":\"b%04d\",\"score\":%d}", i ? "," : "", i,
                         1000 + i % 7);
        buf_append(&batch, e, (size_t)n);
    }
    buf_append(&batch, "]}", 2);
    post_applied(BIG, batch.data, NULL, BOARD_BATCH_MAX);
    buf_free(&batch);
    /* an NDJSON import of 2.5 batches: one script call per 1000 lines */
    struct buf nd = {0};
    for (int i = 0; i < 2500; i++) {
        char e[64];
        int n = snprintf(e, sizeof(e), "{\"id\":\"n%04d\",\"score\":%d}\n", i, 77);
        buf_append(&nd, e, (size_t)n);
    }
    post_applied(BIG, nd.data, "application/x-ndjson", 2500);
    buf_free(&nd);

    http_expect_free(f_port, "DELETE", "/boards/" BIG "/members/m000001", NULL, 204);
    http_expect_free(f_port, "PUT", "/items/m000002", "{\"name\":\"two\"}", 204);
    http_expect_free(f_port, "GET", "/items/m000002", NULL, 200);
    http_expect_free(f_port, "DELETE", "/items/m000002", NULL, 204);
    ck_assert_int_eq(board_total(BIG), BIG_MEMBERS + 1 + BOARD_BATCH_MAX + 2500 - 1);
}

START_TEST(test_big_board_bounded_commands)
{
    const char *board = BIG, *prefix = f_app->cfg.key_prefix;
    char zkey[200], items_key[200];
    snprintf(zkey, sizeof(zkey), "%s:{%s}:z", prefix, board);
    snprintf(items_key, sizeof(items_key), "%s:items", prefix);
    mon_self_test(items_key);

    double t0 = now_s();
    load_board_direct(board, BIG_MEMBERS);
    double load_s = now_s() - t0;
    ck_assert_int_eq(board_total(board), BIG_MEMBERS);
    expect_member(board, "m000000", BIG_MEMBERS, 1); /* rankd reads what was loaded */

    static const char *const watched[] = {"del", "unlink", "keys", "flushall", "flushdb"};
    enum { N_WATCHED = sizeof(watched) / sizeof(watched[0]) };
    long long before[N_WATCHED], after[N_WATCHED];
    for (int i = 0; i < N_WATCHED; i++)
        before[i] = redis_cmd_calls(f_admin, watched[i]);

    redisContext *mon = redis_admin(f_redis.port);
    struct timeval tv = {10, 0};
    redisSetTimeout(mon, tv);
    redisReply *ok = redis_admin_cmd(mon, "MONITOR");
    ck_assert_msg(ok->type == REDIS_REPLY_STATUS, "MONITOR refused");
    freeReplyObject(ok);

    double t1 = now_s();
    big_board_operations();
    double ops_s = now_s() - t1;
    struct http_result r;
    http_expect(f_port, "DELETE", "/boards/" BIG, NULL, 204, &r);
    double delete_s = r.seconds;
    http_result_free(&r);
    freeReplyObject(redis_admin_cmd(f_admin, "ECHO %s", MONITOR_MARKER));

    struct monitor_scan scan;
    scan_monitor(mon, zkey, items_key, &scan);
    redisFree(mon);
    for (int i = 0; i < N_WATCHED; i++)
        after[i] = redis_cmd_calls(f_admin, watched[i]);
    fprintf(stderr,
            "faults: big board: %d members loaded in %.3f s; operations %.3f s; DELETE %.4f s; "
            "%d commands on MONITOR (%d from scripts, %d write/compact calls)\n",
            BIG_MEMBERS, load_s, ops_s, delete_s, scan.lines, scan.script_lines,
            scan.write_calls_big);

    ck_assert_msg(scan.unbounded == 0,
                  "%d unbounded or blocking command(s) on MONITOR; first (%s): %s", scan.unbounded,
                  scan.first_reason, scan.first_bad);
    ck_assert_msg(scan.unlink_board, "no UNLINK of %s on MONITOR during DELETE", zkey);
    /* write calls: tie, incr, best, the batch, and the NDJSON import in 3 chunks */
    ck_assert_msg(scan.write_calls_big >= 7, "only %d write script calls seen",
                  scan.write_calls_big);
    ck_assert_msg(after[0] == before[0], "cmdstat_del calls went from %lld to %lld", before[0],
                  after[0]);
    ck_assert_msg(after[1] > before[1], "cmdstat_unlink did not grow (%lld)", after[1]);
    for (int i = 2; i < N_WATCHED; i++)
        ck_assert_msg(after[i] == before[i], "cmdstat_%s calls went from %lld to %lld", watched[i],
                      before[i], after[i]);

    /* The board is gone, keys and registry entry included; a write starts a fresh one. */
    http_expect(f_port, "GET", "/boards/" BIG, NULL, 404, &r);
    ck_assert_str_eq(http_error_code(&r), "board_not_found");
    http_result_free(&r);
    redisReply *e = redis_admin_cmd(f_admin, "EXISTS %s %s:{%s}:meta", zkey, prefix, board);
    ck_assert_int_eq(e->integer, 0);
    freeReplyObject(e);
    e = redis_admin_cmd(f_admin, "SISMEMBER %s:boards %s", prefix, board);
    ck_assert_int_eq(e->integer, 0);
    freeReplyObject(e);
    post_score(board, "fresh", 3);
    ck_assert_int_eq(board_total(board), 1);
    expect_member(board, "fresh", 3, 1);
    http_expect(f_port, "GET", "/boards/" BIG, NULL, 200, &r);
    ck_assert_int_eq((long)json_num(r.json, "page_size"), 20); /* defaults, not the old 50 */
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- 5. slow Redis */

START_TEST(test_paused_redis_times_out)
{
    uncached_board("slow");
    post_score("slow", "a", 10);
    http_expect_free(f_port, "GET", "/boards/slow/rank", NULL, 200);

    double limit = slow_limit_s();
    double paused = pause_redis(PAUSE_MS, "ALL");
    /* A read and a write at once, each on its own HTTP connection and pool connection. */
    struct job rd, wr;
    job_start(&rd, "GET", "/boards/slow/rank", NULL);
    job_start(&wr, "POST", "/boards/slow-w/scores", "{\"id\":\"p\",\"score\":1}");
    double read_s = job_expect_unavailable(&rd, limit);
    double write_s = job_expect_unavailable(&wr, limit);
    fprintf(stderr, "faults: paused Redis: read 503 after %.3f s, write 503 after %.3f s\n", read_s,
            write_s);

    /* After the pause: normal service on the first try, each reply for its own request (a
     * connection that timed out must not be reused with its late reply still in flight). */
    wait_until(paused + PAUSE_MS / 1000.0 + 0.05);
    expect_member("slow", "a", 10, 1);
    post_score("slow", "b", 20);
    expect_member("slow", "b", 20, 1);
    expect_member("slow", "a", 10, 2);
    struct http_result r;
    http_expect(f_port, "GET", "/boards/slow/rank", NULL, 200, &r);
    ck_assert_msg(json_num(r.json, "total") == 2, "rank after the pause: %s", r.body);
    http_result_free(&r);
    http_expect_free(f_port, "GET", "/readyz", NULL, 200);
}
END_TEST

/* A Lua script that never ends, run from its own connection until SCRIPT KILL. */
static void *busy_script(void *arg)
{
    int port = *(const int *)arg;
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        freeReplyObject(redisCommand(c, "EVAL %s 0", "while true do end"));
    }
    redisFree(c);
    return NULL;
}

START_TEST(test_busy_redis_answers_503)
{
    post_score("busy", "a", 10);
    /* Past this, Redis answers other clients -BUSY while a script runs (busy-reply-threshold
     * in Redis 7; lua-time-limit is its name in Redis 6 and an alias since). */
    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET lua-time-limit 100"));
    pthread_t th;
    int port = f_redis.port;
    ck_assert_int_eq(pthread_create(&th, NULL, busy_script, &port), 0);
    int busy = 0;
    for (int i = 0; i < 100 && !busy; i++) {
        sleep_ms(20);
        redisReply *p = redis_admin_cmd(f_admin, "PING");
        busy = p->type == REDIS_REPLY_ERROR && strncmp(p->str, "BUSY", 4) == 0;
        freeReplyObject(p);
    }
    ck_assert_msg(busy, "Redis never became BUSY");

    double read_s = expect_unavailable("GET", "/boards/busy/rank", NULL, NULL, slow_limit_s());
    double write_s = expect_unavailable("POST", "/boards/busy/scores", "{\"id\":\"b\",\"score\":5}",
                                        NULL, slow_limit_s());
    expect_unavailable("GET", "/readyz", NULL, NULL, slow_limit_s());
    fprintf(stderr, "faults: busy Redis: read 503 after %.3f s, write 503 after %.3f s\n", read_s,
            write_s);

    freeReplyObject(redis_admin_cmd(f_admin, "SCRIPT KILL"));
    pthread_join(th, NULL);
    /* a connection a BUSY reply or a timeout closed is dialled again after its back-off (at most
     * BACKOFF_MAX_MS, 100 ms): the first request may still meet it (503 "Connection refused",
     * seen once in CI), so recovery is judged within a second */
    int tries = 0;
    double back_s = poll_until("GET", "/boards/busy/members/a", NULL, 200, 1.0, &tries);
    ck_assert_msg(back_s >= 0, "no 200 within 1 s of the script's end (%d tries)", tries);
    expect_member("busy", "a", 10, 1);
    post_score("busy", "c", 30);
    expect_member("busy", "c", 30, 1);
    ck_assert_int_eq(board_total("busy"), 2);
}
END_TEST

/* Redis failing writes (maxmemory reached, noeviction): writes 503 at once, reads still 200. */
START_TEST(test_redis_oom_writes_507)
{
    post_score("oom", "a", 10);
    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET maxmemory-policy noeviction"));
    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET maxmemory 1"));
    redisReply *probe = redis_admin_cmd(f_admin, "SET oom-probe 1");
    ck_assert_msg(probe->type == REDIS_REPLY_ERROR && strncmp(probe->str, "OOM", 3) == 0,
                  "Redis is not refusing writes");
    freeReplyObject(probe);

    /* not "retry shortly": 507 insufficient_storage, nothing written (before: 503
     * redis_unavailable, which tells a client to retry the same write at once) */
    static const struct {
        const char *method, *path, *body, *ctype;
    } refused[] = {
        {"POST", "/boards/oom/scores", "{\"id\":\"b\",\"score\":20}", NULL},
        {"POST", "/boards/oom2/scores", "{\"id\":\"b\",\"score\":20}", NULL},
        {"POST", "/boards/oom/scores", "{\"id\":\"c\",\"score\":1}\n", "application/x-ndjson"},
        {"PUT", "/boards/oom3", "{\"page_size\":5}", NULL},
        {"PUT", "/items/b", "{\"name\":\"B\"}", NULL},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        struct http_result r;
        req(refused[i].method, refused[i].path, refused[i].body, refused[i].ctype, &r);
        ck_assert_msg(r.status == 507 && strcmp(http_error_code(&r), "insufficient_storage") == 0,
                      "%s %s at maxmemory -> %ld %s; want 507 insufficient_storage",
                      refused[i].method, refused[i].path, r.status, r.body);
        ck_assert_msg(r.seconds < DOWN_LIMIT_S, "%s %s took %.3f s", refused[i].method,
                      refused[i].path, r.seconds);
        http_result_free(&r);
    }
    expect_member("oom", "a", 10, 1);
    http_expect_free(f_port, "GET", "/boards/oom/rank", NULL, 200);
    http_expect_free(f_port, "GET", "/boards/oom2", NULL, 404); /* the refused write left nothing */
    http_expect_free(f_port, "GET", "/readyz", NULL, 200);

    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET maxmemory 0"));
    post_score("oom", "b", 20);
    expect_member("oom", "b", 20, 1);
    ck_assert_int_eq(board_total("oom"), 2);
}
END_TEST

/* ---------------------------------------------------------------- 6. isolation */

START_TEST(test_stuck_requests_do_not_block_healthz)
{
    post_score("iso", "a", 1);
    http_expect_free(f_port, "GET", "/boards/iso/rank", NULL, 200);

    /* As many stuck requests as rankd has Redis connections: the whole pool is held. */
    enum { STUCK_MAX = 16 };
    int stuck = f_app->cfg.threads < STUCK_MAX ? f_app->cfg.threads : STUCK_MAX;
    struct job jobs[STUCK_MAX];
    double paused = pause_redis(PAUSE_MS, "ALL");
    for (int i = 0; i < stuck; i++)
        job_start(&jobs[i], "GET", "/boards/iso/rank", NULL);
    sleep_ms(200); /* they are all waiting on Redis now */

    double worst = 0;
    for (int i = 0; i < 5; i++) {
        struct http_result r;
        http_expect(f_port, "GET", "/healthz", NULL, 200, &r);
        ck_assert_msg(r.seconds < HEALTHZ_LIMIT_S,
                      "/healthz took %.3f s while %d requests were stuck on Redis", r.seconds,
                      stuck);
        if (r.seconds > worst)
            worst = r.seconds;
        http_result_free(&r);
        http_expect(f_port, "GET", "/metrics", NULL, 200, &r);
        ck_assert_msg(r.seconds < HEALTHZ_LIMIT_S, "/metrics took %.3f s", r.seconds);
        http_result_free(&r);
    }
    ck_assert_msg(now_s() - paused < command_timeout_s(),
                  "the probes ran after the stuck requests timed out: the test proved nothing");
    double slowest = 0;
    for (int i = 0; i < stuck; i++) {
        double s = job_expect_unavailable(&jobs[i], slow_limit_s());
        if (s > slowest)
            slowest = s;
    }
    fprintf(stderr,
            "faults: isolation: %d stuck requests (503 after at most %.3f s), /healthz at most "
            "%.4f s\n",
            stuck, slowest, worst);
    wait_until(paused + PAUSE_MS / 1000.0 + 0.05);
    http_expect_free(f_port, "GET", "/boards/iso/rank", NULL, 200);
}
END_TEST

/* ---------------------------------------------------------------- 6b. slow clients */

#define SLOW_CLIENTS 300

static int process_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = atoi(line + 8);
    if (f)
        fclose(f);
    return n;
}

/* Clients that send half a request and stall (slowloris) hold a connection each, but no thread,
 * and requests from others are served at once. */
START_TEST(test_slow_clients_hold_no_threads)
{
    post_score("sc", "a", 1);
    http_expect_free(f_port, "GET", "/boards/sc/rank", NULL, 200);
    int before = process_threads();
    int fds[SLOW_CLIENTS];
    for (int i = 0; i < SLOW_CLIENTS; i++) {
        fds[i] = connect_loopback(f_port);
        ck_assert_msg(fds[i] >= 0, "connection %d refused", i);
        const char *half = "GET /boards/sc/rank HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        ck_assert(write(fds[i], half, strlen(half)) == (ssize_t)strlen(half));
    }
    sleep_ms(300); /* rankd has accepted and read them all */
    int during = process_threads();
    struct http_result r;
    http_expect(f_port, "GET", "/boards/sc/rank", NULL, 200, &r);
    double page_s = r.seconds;
    http_result_free(&r);
    for (int i = 0; i < SLOW_CLIENTS; i++)
        close(fds[i]);
    fprintf(stderr,
            "faults: slow clients: %d half-sent requests; threads %d before, %d during; a page "
            "took %.4f s meanwhile\n",
            SLOW_CLIENTS, before, during, page_s);
    ck_assert_msg(during - before < 20, "%d half-sent requests started %d threads", SLOW_CLIENTS,
                  during - before);
    ck_assert_msg(page_s < slow_limit_s(), "a page took %.3f s beside slow clients", page_s);
}
END_TEST

/* ---------------------------------------------------------------- 6c. a restricted Redis user */

static void limited_user(struct config *cfg)
{
    snprintf(cfg->redis.username, sizeof(cfg->redis.username), "limited");
    snprintf(cfg->redis.password, sizeof(cfg->redis.password), "limited-pw");
}

/* GET /admin/redis with a Redis user that may not run SLOWLOG or LATENCY: the rest of the report,
 * and the refused parts named (it was a 503 for the whole report). */
START_TEST(test_admin_report_with_restricted_user)
{
    freeReplyObject(redis_admin_cmd(f_admin, "ACL SETUSER limited on >limited-pw ~* &* +@all "
                                             "-slowlog -latency"));
    struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, limited_user, NULL);
    struct http_result r;
    int rc = http_req(rankd_port(app), "GET", "/admin/redis", NULL, 0, NULL, TEST_TOKEN, &r);
    rankd_stop(app);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(r.status == 200, "GET /admin/redis -> %ld %s", r.status, r.body);
    cJSON *doc = cJSON_Parse(r.body);
    ck_assert_ptr_nonnull(doc);
    cJSON *server = cJSON_GetObjectItem(doc, "server");
    ck_assert_msg(cJSON_IsNumber(cJSON_GetObjectItem(server, "used_memory")), "%s", r.body);
    ck_assert_msg(cJSON_IsNumber(cJSON_GetObjectItem(doc, "keys")), "%s", r.body);
    ck_assert_msg(!cJSON_GetObjectItem(doc, "slowlog"), "%s", r.body);
    cJSON *un = cJSON_GetObjectItem(doc, "unavailable");
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(un, "slowlog"));
    ck_assert_msg(why && strstr(why, "NOPERM"), "%s", r.body);
    ck_assert_msg(cJSON_GetObjectItem(un, "latency_latest"), "%s", r.body);
    fprintf(stderr, "faults: admin report with a restricted user: %.200s\n", r.body);
    cJSON_Delete(doc);
    http_result_free(&r);
}
END_TEST

/* The slow log keeps 128 bytes of each argument: a record whose multi-byte characters straddle
 * that cut must still give a report in valid UTF-8. */
START_TEST(test_admin_report_is_valid_utf8)
{
    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET slowlog-log-slower-than 0"));
    char body[600] = "{\"id\":\"u1\",\"score\":5,\"record\":{\"n\":\"";
    size_t at = strlen(body);
    for (int i = 0; i < 113; i++)
        body[at++] = 'a';
    for (int i = 0; i < 40; i++) { /* é, two bytes each */
        body[at++] = (char)0xc3;
        body[at++] = (char)0xa9;
    }
    snprintf(body + at, sizeof(body) - at, "\"}}");
    http_expect_free(f_port, "POST", "/boards/u8/scores", body, 200);
    struct http_result r;
    req("GET", "/admin/redis", NULL, NULL, &r);
    freeReplyObject(redis_admin_cmd(f_admin, "CONFIG SET slowlog-log-slower-than 10000"));
    ck_assert_msg(r.status == 200, "-> %ld %s", r.status, r.body);
    ck_assert_msg(request_utf8_valid(r.body, r.len), "the report is not valid UTF-8");
    ck_assert_msg(strstr(r.body, "\"slowlog\":[["), "no slow log entries: %.300s", r.body);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- 6d. the connection limit */

#define LIMIT_CONNS 64
#define LIMIT_THREADS 4

static void four_event_threads(struct config *cfg)
{
    cfg->max_connections = LIMIT_CONNS;
    cfg->http_threads = LIMIT_THREADS;
}

/* Reads one reply per socket (replies are small: one read each) within limit_s; status[i] is its
 * HTTP status (1 for a reply that is not HTTP), 0 when socket i was closed without a reply, -1
 * when it gave none in time. Returns how many answered. */
static int read_statuses(const int *fds, int n, double limit_s, int *status)
{
    int done = 0, answered = 0;
    double until = now_s() + limit_s;
    for (int i = 0; i < n; i++)
        status[i] = -1;
    while (done < n && now_s() < until) {
        for (int i = 0; i < n; i++) {
            if (status[i] >= 0)
                continue;
            char buf[4096];
            ssize_t r = recv(fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
            if (r > 0) {
                buf[r] = '\0';
                status[i] = strncmp(buf, "HTTP/1.1 ", 9) == 0 ? atoi(buf + 9) : 1;
                answered++;
                done++;
            } else if (r == 0) {
                status[i] = 0;
                done++;
            }
        }
        sleep_ms(5);
    }
    return answered;
}

/* read_statuses: how many answered 200; closed[i] = 1 when socket i was refused: closed without
 * a reply, or answered 503 at accept (too_many_connections...: rankd refuses a connection over a
 * limit with a 503 that says why, then closes it). */
static int read_replies(const int *fds, int n, double limit_s, int *closed)
{
    int *status = calloc((size_t)n, sizeof(int)), ok = 0;
    ck_assert(status != NULL);
    read_statuses(fds, n, limit_s, status);
    for (int i = 0; i < n; i++) {
        ok += status[i] == 200;
        if (status[i] == 0 || status[i] == 503)
            closed[i] = 1;
    }
    free(status);
    return ok;
}

/* --max-connections is the whole process's limit, however many event threads: all of them are
 * served (MHD alone splits the limit per thread and stalled some connections far below it), and
 * connections past it are closed at once rather than left hanging. */
START_TEST(test_connection_limit_across_event_threads)
{
    post_score("cl", "a", 1);
    struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, four_event_threads, NULL);
    int port = rankd_port(app);
    int fds[LIMIT_CONNS + 8], closed[LIMIT_CONNS + 8] = {0};
    const char *get = "GET /boards/cl/rank HTTP/1.1\r\nHost: t\r\n\r\n";
    for (int i = 0; i < LIMIT_CONNS - 4; i++) {
        fds[i] = connect_loopback(port);
        ck_assert(fds[i] >= 0);
    }
    sleep_ms(100); /* all accepted */
    for (int i = 0; i < LIMIT_CONNS - 4; i++)
        ck_assert(write(fds[i], get, strlen(get)) == (ssize_t)strlen(get));
    int ok = read_replies(fds, LIMIT_CONNS - 4, 5.0, closed);
    /* past the limit: 12 more, of which at least 8 are over it */
    for (int i = LIMIT_CONNS - 4; i < LIMIT_CONNS + 8; i++) {
        fds[i] = connect_loopback(port);
        ck_assert(fds[i] >= 0);
        if (write(fds[i], get, strlen(get)) < 0)
            closed[i] = 1;
    }
    int extra_ok = read_replies(fds + LIMIT_CONNS - 4, 12, 3.0, closed + LIMIT_CONNS - 4);
    int refused = 0;
    for (int i = LIMIT_CONNS - 4; i < LIMIT_CONNS + 8; i++)
        refused += closed[i];
    for (int i = 0; i < LIMIT_CONNS + 8; i++)
        close(fds[i]);
    rankd_stop(app);
    fprintf(stderr,
            "faults: connection limit %d over %d event threads: %d of %d answered; past the "
            "limit %d answered, %d closed\n",
            LIMIT_CONNS, LIMIT_THREADS, ok, LIMIT_CONNS - 4, extra_ok, refused);
    ck_assert_msg(ok == LIMIT_CONNS - 4, "%d of %d connections under the limit answered", ok,
                  LIMIT_CONNS - 4);
    ck_assert_msg(extra_ok <= 4 && extra_ok + refused == 12,
                  "past the limit: %d answered, %d closed, %d hanging", extra_ok, refused,
                  12 - extra_ok - refused);
}
END_TEST

/* rankd places each new connection on the event thread with the fewest: left to the kernel
 * (every thread waiting on the listening socket), one thread of two held 53 of 64 benchmark
 * connections and their requests queued while the other idled. 40 connections over 2 threads:
 * 20 each, give or take the /metrics connections. */
static void two_event_threads(struct config *cfg)
{
    cfg->http_threads = 2;
}

/* Open n connections (gap_ms apart) and send a GET of `path` on each: fds[i] is the socket,
 * closed[i] = 1 when the send failed (rankd closed it at once). */
static void open_and_get(int port, const char *path, int n, int gap_ms, int *fds, int *closed)
{
    char get[256];
    snprintf(get, sizeof(get), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
    for (int i = 0; i < n; i++) {
        fds[i] = connect_loopback(port);
        ck_assert(fds[i] >= 0);
        if (gap_ms)
            sleep_ms(gap_ms);
        if (write(fds[i], get, strlen(get)) < 0)
            closed[i] = 1;
    }
}

START_TEST(test_connections_spread_over_event_threads)
{
    post_score("spread", "a", 1);
    struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, two_event_threads, NULL);
    int port = rankd_port(app);
    enum { N = 40 };
    int fds[N], closed[N] = {0};
    open_and_get(port, "/boards/spread/rank", N, 0, fds, closed);
    int ok = read_replies(fds, N, 5.0, closed);
    double t0 = http_metric(port, "rankd_http_connections{thread=\"0\"}");
    double t1 = http_metric(port, "rankd_http_connections{thread=\"1\"}");
    for (int i = 0; i < N; i++)
        close(fds[i]);
    rankd_stop(app);
    fprintf(stderr, "faults: %d connections over 2 event threads: %.0f and %.0f\n", N, t0, t1);
    ck_assert_int_eq(ok, N);
    ck_assert_msg(t0 >= N / 2 - 1 && t0 <= N / 2 + 2 && t1 >= N / 2 - 1 && t1 <= N / 2 + 2,
                  "%d connections spread %.0f / %.0f over the event threads", N, t0, t1);
}
END_TEST

/* --max-connections-per-ip holds for the whole process, whichever event thread a connection
 * lands on: each event thread runs a daemon of its own and MHD counts per daemon (without
 * rankd's own count, 2 event threads let all 6 in). */
static void per_ip_three(struct config *cfg)
{
    cfg->http_threads = 2;
    cfg->max_per_ip = 3;
}

START_TEST(test_per_ip_limit_across_event_threads)
{
    post_score("perip", "a", 1);
    struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, per_ip_three, NULL);
    int port = rankd_port(app);
    enum { N = 6 };
    int fds[N], closed[N] = {0};
    open_and_get(port, "/boards/perip/rank", N, 20, fds, closed); /* in order: the first 3 in */
    int ok = read_replies(fds, N, 3.0, closed);
    int refused = 0;
    for (int i = 0; i < N; i++)
        refused += closed[i];
    for (int i = 0; i < N; i++)
        close(fds[i]);
    /* the limit is given back on close: a new connection is served again */
    sleep_ms(100);
    struct http_result r;
    ck_assert_int_eq(http_get(port, "/boards/perip/rank", &r), 0);
    long after = r.status;
    http_result_free(&r);
    rankd_stop(app);
    fprintf(stderr, "faults: per-address limit 3 over 2 event threads: %d answered, %d closed\n",
            ok, refused);
    ck_assert_msg(ok == 3 && refused == N - 3, "limit 3: %d answered, %d closed of %d", ok, refused,
                  N);
    ck_assert_int_eq(after, 200);
}
END_TEST

/* The event thread's own Redis connection for page hits: a paused Redis answers the hit 503
 * within the command timeout while the same event thread goes on answering other requests; when
 * Redis is back, hits take the event-thread path again. */
static void one_event_thread(struct config *cfg)
{
    cfg->http_threads = 1;
}

static double batched_hits(void)
{
    return http_metric(f_port, "rankd_page_cache_batched_hits_total");
}

/* 100 ms after a request was sent to a paused Redis (it is waiting now): how long a 400 decided
 * from memory takes on another connection (seconds). */
static double probe_400_s(const char *board)
{
    sleep_ms(100);
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/rank?page=0", board);
    struct http_result r;
    http_expect(f_port, "GET", path, NULL, 400, &r);
    double s = r.seconds;
    http_result_free(&r);
    return s;
}

/* Restart rankd with one event thread; board gets a member and its page 1 is cached and read
 * once more (a hit: the board is known to the event thread's hit path). */
static void one_thread_warm_page(const char *board)
{
    rankd_stop(f_app);
    f_app = rankd_test_start_with(f_redis.port, TEST_TOKEN, one_event_thread, NULL);
    f_port = rankd_port(f_app);
    post_score(board, "a", 1);
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/rank", board);
    http_expect_free(f_port, "GET", path, NULL, 200); /* computed, cached */
    /* the event thread dials its Redis connection on a helper thread at start: wait for it, so
     * that the next read is a hit on an open connection (a timing flake in CI) */
    double up_by = now_s() + 2.0;
    while (http_metric(f_port, "rankd_hit_connection_up{thread=\"0\"}") != 1 && now_s() < up_by)
        sleep_ms(10);
    http_expect_free(f_port, "GET", path, NULL, 200); /* a hit */
}

START_TEST(test_hit_connection_times_out_and_redials)
{
    one_thread_warm_page("hc"); /* a fresh rankd: its one hit so far */
    double hits = batched_hits();
    ck_assert_msg(hits == 1, "the hit did not take the event thread's connection (%.0f hits)",
                  hits);
    ck_assert_double_eq(http_metric(f_port, "rankd_hit_connection_up{thread=\"0\"}"), 1);

    double paused = pause_redis(PAUSE_MS, "ALL");
    struct job j;
    job_start(&j, "GET", "/boards/hc/rank", NULL);
    double quick = probe_400_s("hc"); /* while the hit's lookup waits on Redis */
    double hit_s = job_expect_unavailable(&j, slow_limit_s());
    fprintf(stderr,
            "faults: hit connection: paused Redis, the hit answered 503 after %.3f s; a 400 on "
            "the same event thread meanwhile took %.4f s\n",
            hit_s, quick);
    ck_assert_msg(quick < HEALTHZ_LIMIT_S, "a 400 waited %.3f s behind a pending hit", quick);

    wait_until(paused + PAUSE_MS / 1000.0 + 0.05);
    double up_by = now_s() + RECOVERY_S, h1 = batched_hits();
    int ok = 0;
    while (!ok && now_s() < up_by) {
        http_expect_free(f_port, "GET", "/boards/hc/rank", NULL, 200);
        ok = batched_hits() > h1;
        sleep_ms(20);
    }
    ck_assert_msg(ok, "hits never took the event thread's connection again after the pause");
}
END_TEST

/* Hits on an event thread's connection while Redis is paused: each gets its own timeout (an
 * older hit's timeout neither fails a younger one nor closes the connection); while the oldest
 * is unanswered past its timeout, new hits fail fast (503 at once), as the pools do; and when
 * Redis answers again, the same connection serves hits (the late replies are dropped). */
START_TEST(test_hits_keep_their_own_timeout)
{
    one_thread_warm_page("hy");
    double paused = pause_redis(1300, "ALL"); /* the command timeout is 1 s */
    struct job older, younger;
    job_start(&older, "GET", "/boards/hy/rank", NULL);
    sleep_ms(500);
    job_start(&younger, "GET", "/boards/hy/rank", NULL);
    pthread_join(older.thread, NULL);
    sleep_ms(50);
    struct http_result probe;
    req("GET", "/boards/hy/rank", NULL, NULL, &probe); /* the older hit was given up */
    pthread_join(younger.thread, NULL);
    fprintf(stderr,
            "faults: hits on a paused Redis: the older answered %ld after %.3f s, a probe %ld "
            "after %.4f s, the younger %ld after %.3f s\n",
            older.res.status, older.res.seconds, probe.status, probe.seconds, younger.res.status,
            younger.res.seconds);
    long o = older.res.status, y = younger.res.status, p = probe.status;
    double probe_s = probe.seconds;
    http_result_free(&older.res);
    http_result_free(&younger.res);
    http_result_free(&probe);
    wait_until(paused + 1.35);
    ck_assert_int_eq(o, 503);
    ck_assert_msg(p == 503 && probe_s < HEALTHZ_LIMIT_S,
                  "a hit while Redis was unanswering: %ld after %.3f s (want a fast 503)", p,
                  probe_s);
    ck_assert_msg(y == 200, "the younger hit answered %ld with the older one's timeout", y);
    double h0 = batched_hits();
    http_expect_free(f_port, "GET", "/boards/hy/rank", NULL, 200);
    ck_assert_msg(batched_hits() == h0 + 1, "the connection did not survive the slow Redis");
}
END_TEST

/* Redis stopped (SIGSTOP) for longer than two timeouts while a page is hot: the first hit waits
 * out its timeout (503), later ones fail fast while Redis is silent, the event thread drops its
 * connection after two timeouts of silence and dials again, and hits take the event-thread path
 * again once Redis runs. */
START_TEST(test_hit_connection_dropped_after_silence)
{
    one_thread_warm_page("hs");
    ck_assert_int_eq(kill(f_redis.pid, SIGSTOP), 0);
    double stopped = now_s(), slowest_later = 0;
    int n = 0;
    while (now_s() - stopped < 3.0) {
        struct http_result r;
        req("GET", "/boards/hs/rank", NULL, NULL, &r);
        ck_assert_msg(r.status == 503, "a hit on a stopped Redis answered %ld", r.status);
        if (n++ > 0 && r.seconds > slowest_later)
            slowest_later = r.seconds;
        http_result_free(&r);
        sleep_ms(50);
    }
    ck_assert_int_eq(kill(f_redis.pid, SIGCONT), 0);
    double h0 = batched_hits(), back = now_s();
    int ok = 0;
    while (!ok && now_s() - back < RECOVERY_S) {
        struct http_result r;
        req("GET", "/boards/hs/rank", NULL, NULL, &r);
        ok = r.status == 200 && batched_hits() > h0;
        http_result_free(&r);
        sleep_ms(50);
    }
    fprintf(stderr,
            "faults: hits during a 3 s SIGSTOP of Redis: %d answered 503, the slowest after the "
            "first %.3f s; hits on the event thread's connection again %.2f s after SIGCONT\n",
            n, slowest_later, now_s() - back);
    /* the stall window of the pools is up to 2 s, so a later request may wait out one timeout */
    ck_assert_msg(slowest_later < slow_limit_s(), "a later hit took %.3f s", slowest_later);
    ck_assert_msg(ok, "hits never took the event thread's connection again after SIGCONT");
}
END_TEST

/* CLIENT KILL of every connection, the hit connections included: the next hit is served (from
 * the new connection the event thread dials at once), never a 503. */
START_TEST(test_hit_connection_killed)
{
    one_thread_warm_page("hk");
    for (int round = 0; round < 5; round++) {
        freeReplyObject(redis_admin_cmd(f_admin, "CLIENT KILL TYPE normal SKIPME yes"));
        for (int i = 0; i < 5; i++)
            http_expect_free(f_port, "GET", "/boards/hk/rank", NULL, 200);
    }
}
END_TEST

/* rankd's own process held up (SIGSTOP here; a VM pause or an overloaded host in life) while
 * page hits are in flight: Redis answered them in time, the replies wait in the socket, and they
 * must be read, not judged late (503) because the clock moved while rankd was not running. */
struct hammer {
    int port;
    atomic_int stop;
    atomic_int ok, unavailable, other;
};

static void *hammer_run(void *arg)
{
    struct hammer *h = arg;
    while (!atomic_load(&h->stop)) {
        struct http_result r;
        memset(&r, 0, sizeof(r));
        if (http_get(h->port, "/boards/ps/rank", &r) == 0)
            atomic_fetch_add(r.status == 200   ? &h->ok
                             : r.status == 503 ? &h->unavailable
                                               : &h->other,
                             1);
        http_result_free(&r);
    }
    return NULL;
}

START_TEST(test_process_pause_is_not_a_redis_timeout)
{
    const char *args[] = {"--http-threads=1", "--redis-timeout-ms=200", NULL};
    struct rankd_proc p;
    ck_assert_int_eq(rankd_proc_start(&p, f_redis.port, args), 0);
    struct http_result r;
    ck_assert_int_eq(
        http_write(p.port, "POST", "/boards/ps/scores", "{\"id\":\"a\",\"score\":1}", &r), 0);
    http_result_free(&r);
    for (int i = 0; i < 2; i++) { /* cached, then a hit */
        ck_assert_int_eq(http_get(p.port, "/boards/ps/rank", &r), 0);
        http_result_free(&r);
    }
    struct hammer h = {.port = p.port};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, hammer_run, &h), 0);
    sleep_ms(200);
    for (int round = 0; round < 10; round++) {
        kill(p.pid, SIGSTOP);
        sleep_ms(400); /* twice the Redis timeout */
        kill(p.pid, SIGCONT);
        sleep_ms(150);
    }
    atomic_store(&h.stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    double exit_s = rankd_proc_stop(&p);
    fprintf(stderr,
            "faults: rankd stopped 10 x 0.4 s under hits (Redis timeout 0.2 s): %d ok, %d 503, %d "
            "other; exit %.2f s\n",
            atomic_load(&h.ok), atomic_load(&h.unavailable), atomic_load(&h.other), exit_s);
    ck_assert_msg(atomic_load(&h.unavailable) == 0 && atomic_load(&h.other) == 0,
                  "%d hits answered 503 (and %d otherwise) though Redis answered them in time",
                  atomic_load(&h.unavailable), atomic_load(&h.other));
    ck_assert_int_gt(atomic_load(&h.ok), 100);
}
END_TEST

#define BURST_CONNS 16

/* A rankd child process (one event thread, `timeout_ms` for Redis) with board `board` whose page
 * 1 is cached for a minute, and BURST_CONNS keep-alive connections to it, each with one page
 * read behind it. */
static void burst_setup(struct rankd_proc *p, const char *board, const char *timeout_ms, int *fds)
{
    char tmo[64], path[128], body[64];
    snprintf(tmo, sizeof(tmo), "--redis-timeout-ms=%s", timeout_ms);
    const char *args[] = {"--http-threads=1", tmo, NULL};
    ck_assert_int_eq(rankd_proc_start(p, f_redis.port, args), 0);
    struct http_result r;
    snprintf(path, sizeof(path), "/boards/%s", board);
    ck_assert_int_eq(http_write(p->port, "PUT", path, "{\"page_ttl_ms\":60000}", &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "PUT %s -> %ld", path, r.status);
    http_result_free(&r);
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    snprintf(body, sizeof(body), "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(http_write(p->port, "POST", path, body, &r), 0);
    http_result_free(&r);
    snprintf(path, sizeof(path), "/boards/%s/rank", board);
    int closed[BURST_CONNS] = {0};
    open_and_get(p->port, path, BURST_CONNS, 0, fds, closed);
    ck_assert_int_eq(read_replies(fds, BURST_CONNS, 5.0, closed), BURST_CONNS);
}

/* 1 when /proc/<pid>/task/<tid>/stat says the thread is stopped ('T'). */
static int thread_stopped(pid_t pid, const char *tid)
{
    char path[384], stat[256];
    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
    if (f)
        fclose(f);
    stat[n] = '\0';
    const char *close_paren = strrchr(stat, ')'); /* "tid (comm) S ..." */
    return !f || (close_paren && close_paren[1] == ' ' && close_paren[2] == 'T');
}

/* SIGSTOP pid and wait until every thread of it is stopped: kill returns before the signal has
 * taken effect, and a thread running on another core may still read a request meanwhile. */
static void stop_process(pid_t pid)
{
    kill(pid, SIGSTOP);
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    for (int i = 0; i < 1000; i++) {
        DIR *d = opendir(dir);
        ck_assert_msg(d != NULL, "no %s", dir);
        int all = 1;
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (e->d_name[0] != '.' && !thread_stopped(pid, e->d_name))
                all = 0;
        closedir(d);
        if (all)
            return;
        sleep_ms(1);
    }
    ck_abort_msg("process %d did not stop", (int)pid);
}

/* One request for page 1 on every connection, all sent while rankd is stopped (SIGSTOP), so that
 * one iteration of its one event loop reads them all when it runs again. */
static void burst_send(struct rankd_proc *p, const char *board, const int *fds)
{
    char get[256];
    snprintf(get, sizeof(get), "GET /boards/%s/rank HTTP/1.1\r\nHost: t\r\n\r\n", board);
    stop_process(p->pid);
    for (int i = 0; i < BURST_CONNS; i++)
        ck_assert(write(fds[i], get, strlen(get)) == (ssize_t)strlen(get));
    sleep_ms(100);
    kill(p->pid, SIGCONT);
}

/* Hits for one page that one loop iteration reads send one lookup (HMGET + GET) on the event
 * thread's connection, and its reply answers them all: each sent its own (16 GETs for 16 hits),
 * so a hot page cost Redis as many lookups as requests (INFO commandstats counts them). */
START_TEST(test_identical_hits_share_one_lookup)
{
    struct rankd_proc p;
    int fds[BURST_CONNS], status[BURST_CONNS];
    burst_setup(&p, "sh", "1000", fds);
    long long gets = redis_cmd_calls(f_admin, "get"), hmgets = redis_cmd_calls(f_admin, "hmget");
    burst_send(&p, "sh", fds);
    int answered = read_statuses(fds, BURST_CONNS, 5.0, status);
    long long dg = redis_cmd_calls(f_admin, "get") - gets,
              dh = redis_cmd_calls(f_admin, "hmget") - hmgets;
    double shared = http_metric(p.port, "rankd_page_cache_shared_lookups_total");
    for (int i = 0; i < BURST_CONNS; i++)
        close(fds[i]);
    rankd_proc_stop(&p);
    int ok = 0;
    for (int i = 0; i < BURST_CONNS; i++)
        ok += status[i] == 200;
    fprintf(stderr,
            "faults: %d hits of one page in one loop iteration: %d answered 200, Redis ran %lld "
            "GET and %lld HMGET; rankd_page_cache_shared_lookups_total %.0f\n",
            BURST_CONNS, ok, dg, dh, shared);
    ck_assert_msg(answered == BURST_CONNS && ok == BURST_CONNS, "%d of %d hits answered 200", ok,
                  BURST_CONNS);
    /* one lookup, give or take a loop iteration that read only some of the requests (one per
     * hit before) */
    ck_assert_msg(dg <= 3 && dh <= 3, "%d hits of one page cost %lld GET and %lld HMGET",
                  BURST_CONNS, dg, dh);
    ck_assert_msg(shared >= BURST_CONNS - 3, "shared_lookups %.0f", shared);
}
END_TEST

/* A shared lookup that Redis does not answer in time fails every hit that joined it, fast (503
 * within about the timeout), none left waiting. */
START_TEST(test_shared_lookup_times_out_for_all)
{
    struct rankd_proc p;
    int fds[BURST_CONNS], status[BURST_CONNS];
    burst_setup(&p, "st", "300", fds);
    double paused = pause_redis(1500, "ALL");
    burst_send(&p, "st", fds);
    double t0 = now_s();
    int answered = read_statuses(fds, BURST_CONNS, 3.0, status);
    double took = now_s() - t0;
    for (int i = 0; i < BURST_CONNS; i++)
        close(fds[i]);
    wait_until(paused + 1.6);
    rankd_proc_stop(&p);
    int unavailable = 0;
    for (int i = 0; i < BURST_CONNS; i++)
        unavailable += status[i] == 503;
    fprintf(stderr,
            "faults: %d hits sharing a lookup on a paused Redis (timeout 0.3 s): %d answered "
            "503 within %.3f s\n",
            BURST_CONNS, unavailable, took);
    ck_assert_msg(answered == BURST_CONNS && unavailable == BURST_CONNS,
                  "%d of %d answered, %d with 503", answered, BURST_CONNS, unavailable);
    ck_assert_msg(took < 1.2, "the hits took %.3f s to fail; the timeout is 0.3 s", took);
}
END_TEST

/* Shutdown does not wait for a client that stalls its upload (or never reads its reply) longer
 * than the grace period: it waited up to 30 s. */
START_TEST(test_stop_does_not_wait_for_stalled_upload)
{
    struct rankd *app = rankd_test_start(f_redis.port, TEST_TOKEN);
    int fd = connect_loopback(rankd_port(app));
    ck_assert(fd >= 0);
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "POST /boards/stall/scores HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/x-ndjson\r\nContent-Length: 1000000\r\n\r\n",
                     TEST_TOKEN);
    ck_assert(write(fd, head, (size_t)n) == n);
    for (int i = 0; i < 100; i++) {
        char line[64];
        int m = snprintf(line, sizeof(line), "{\"id\":\"s%d\",\"score\":%d}\n", i, i);
        ck_assert(write(fd, line, (size_t)m) == m);
    }
    sleep_ms(300); /* the lines are in work; the rest of the body never comes */
    double t0 = now_s();
    rankd_stop(app);
    double took = now_s() - t0;
    close(fd);
    fprintf(stderr, "faults: stop with a stalled upload took %.2f s\n", took);
    ck_assert_msg(took < 7.0, "stopping took %.2f s behind one stalled upload", took);
}
END_TEST

/* ---------------------------------------------------------------- 6e. event threads never wait */

static void one_event_thread_l1(struct config *cfg)
{
    cfg->http_threads = 1;
    cfg->l1_ttl_ms = 200;
}

/* A page of an asked-for period this process cannot place from memory needs the board's
 * settings from Redis: that read is sent without waiting for it, so a 400 decided from memory on
 * another connection of the one event thread is not held up while Redis is paused. */
START_TEST(test_event_thread_never_waits_for_redis)
{
    rankd_stop(f_app);
    f_app = rankd_test_start_with(f_redis.port, TEST_TOKEN, one_event_thread_l1, NULL);
    f_port = rankd_port(f_app);
    post_score("ev", "a", 1);
    http_expect_free(f_port, "GET", "/boards/ev/rank", NULL, 200);
    double paused = pause_redis(PAUSE_MS, "ALL");
    struct job j;
    job_start(&j, "GET", "/boards/ev/rank?period=2020-01-01", NULL);
    double quick = probe_400_s("ev"); /* while that request waits on Redis */
    ck_assert_msg(now_s() - paused < command_timeout_s(), "the probe came too late to prove it");
    pthread_join(j.thread, NULL);
    fprintf(stderr,
            "faults: event thread: a 400 took %.4f s while a ?period= read waited on a paused "
            "Redis (it answered %ld after %.3f s)\n",
            quick, j.res.status, j.res.seconds);
    http_result_free(&j.res);
    ck_assert_msg(quick < HEALTHZ_LIMIT_S, "a 400 from memory took %.3f s", quick);
    wait_until(paused + PAUSE_MS / 1000.0 + 0.05);
}
END_TEST

/* ---------------------------------------------------------------- 6f. stopping, again and again */

static void four_threads(struct config *cfg)
{
    cfg->http_threads = 4;
}

/* Start and stop rankd many times, each after a request: stopping must never abort. (MHD 0.9.75's
 * MHD_quiesce_daemon races its own epoll threads over the listen socket and aborted a CI run
 * once; rankd no longer calls it. The race is rare: this loop is a smoke test of the stop path,
 * not a reproduction of it.) */
START_TEST(test_stop_start_many_times)
{
    for (int i = 0; i < 60; i++) {
        struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, four_threads, NULL);
        ck_assert_ptr_nonnull(app);
        struct http_result r;
        ck_assert_int_eq(http_get(rankd_port(app), "/healthz", &r), 0);
        ck_assert_int_eq(r.status, 200);
        http_result_free(&r);
        rankd_stop(app);
    }
}
END_TEST

/* ---------------------------------------------------------------- 7. write pause (failover) */

/*
 * CLIENT PAUSE WRITE is what FAILOVER (and CLUSTER FAILOVER) does to a primary while a replica
 * takes over: Redis keeps serving reads and holds only writes. Ranked reads must keep working
 * then; only writes may fail (503 within the timeout). Redis 7 holds every EVALSHA/EVAL of a
 * script not flagged `no-writes` during such a pause, read-only or not.
 */
START_TEST(test_reads_during_write_pause)
{
    post_score("wp", "a", 10);
    post_score("wp", "b", 20);
    http_expect_free(f_port, "GET", "/boards/wp/rank", NULL, 200);

    double paused = pause_redis(PAUSE_MS, "WRITE");
    /* Writers held by the pause, more than rankd has Redis connections: reads must not wait
     * behind them (nor fail fast after their timeouts). */
    enum { WRITERS = 24 };
    struct job writers[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        job_start(&writers[i], "POST", "/boards/wp/scores",
                  "{\"id\":\"w\",\"score\":1,\"op\":\"incr\"}");
    sleep_ms(200); /* all of them are waiting on Redis now */
    redisReply *z = redis_admin_cmd(f_admin, "ZCARD %s:{wp}:z", f_app->cfg.key_prefix);
    ck_assert_int_eq(z->integer, 2); /* Redis itself answers reads */
    freeReplyObject(z);
    http_expect_free(f_port, "GET", "/boards/wp", NULL, 200); /* plain commands */
    http_expect_free(f_port, "GET", "/readyz", NULL, 200);

    static const char *const reads[] = {"/boards/wp/rank", "/boards/wp/members/a",
                                        "/boards/wp/members/a/around", "/rank?board=wp"};
    enum { N_READS = sizeof(reads) / sizeof(reads[0]) };
    struct job jobs[N_READS];
    for (int i = 0; i < N_READS; i++)
        job_start(&jobs[i], "GET", reads[i], NULL);
    char report[600] = "";
    int ok = 1;
    for (int i = 0; i < N_READS; i++) {
        pthread_join(jobs[i].thread, NULL);
        struct http_result *r = &jobs[i].res;
        /* a read held behind the paused writes waits at least one command timeout (then 503,
         * or 200 from a retry): under it is not held, whatever the machine's load */
        int good = jobs[i].rc == 0 && r->status == 200 && r->seconds < command_timeout_s();
        ok &= good;
        size_t at = strlen(report);
        snprintf(report + at, sizeof(report) - at, "%sGET %s -> %ld %s after %.3f s", i ? "; " : "",
                 reads[i], r->status, jobs[i].rc == 0 ? http_error_code(r) : "no answer",
                 r->seconds);
        http_result_free(r);
    }
    fprintf(stderr, "faults: write pause: %s\n", report);
    ck_assert_msg(ok,
                  "reads during CLIENT PAUSE WRITE (Redis serves reads): %s; want 200 each, "
                  "within one command timeout (%.1f s)",
                  report, command_timeout_s());

    for (int i = 0; i < WRITERS; i++) {
        pthread_join(writers[i].thread, NULL);
        http_result_free(&writers[i].res);
    }
    expect_unavailable("POST", "/boards/wp-w/scores", "{\"id\":\"p\",\"score\":1}", NULL,
                       slow_limit_s());
    wait_until(paused + PAUSE_MS / 1000.0 + 0.05);
    /* after the pause rankd writes again by itself: a connection the pause timed out may answer
     * one fast 503 while it is redialled (at load 28 under ASan one did), never a wrong answer */
    struct http_result w;
    for (double t0 = now_s();;) {
        req("POST", "/boards/wp/scores", "{\"id\":\"c\",\"score\":30}", NULL, &w);
        if (w.status != 503 || now_s() - t0 > slow_limit_s())
            break;
        http_result_free(&w);
        sleep_ms(50);
    }
    ck_assert_msg(w.status == 200, "a write after the pause: %ld %s", w.status, w.body);
    http_result_free(&w);
    expect_member("wp", "c", 30, 1);
}
END_TEST

/* A connection Redis closed while idle (CLIENT KILL, a restart, a proxy timeout) is redialled
 * before use: the next request succeeds instead of paying for the dead connection with a 503. */
START_TEST(test_killed_connections_redialled)
{
    post_score("kc", "a", 5);
    expect_member("kc", "a", 5, 1);
    freeReplyObject(redis_admin_cmd(f_admin, "CLIENT KILL TYPE normal SKIPME yes"));
    sleep_ms(50);
    http_expect_free(f_port, "GET", "/boards/kc/rank", NULL, 200);
    post_score("kc", "b", 7);
    expect_member("kc", "b", 7, 1);
}
END_TEST

/* A stalled Redis (SIGSTOP): after the first timeout, requests fail fast instead of each
 * waiting for its own timeout; when Redis resumes, service comes back by itself. */
START_TEST(test_stalled_redis_fails_fast)
{
    uncached_board("st");
    post_score("st", "a", 1);
    ck_assert_int_eq(kill(f_redis.pid, SIGSTOP), 0);
    struct http_result r;
    double slowest_after_first = 0;
    for (int i = 0; i < 20; i++) {
        req("GET", "/boards/st/rank", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 503);
        if (i > 0 && r.seconds > slowest_after_first)
            slowest_after_first = r.seconds;
        http_result_free(&r);
    }
    ck_assert_int_eq(kill(f_redis.pid, SIGCONT), 0);
    fprintf(stderr, "faults: stalled Redis: slowest of requests 2..20: %.3f s\n",
            slowest_after_first);
    /* 19 requests at the full 1 s timeout would take 19 s; the stall window bounds most of them */
    ck_assert_msg(slowest_after_first < 1.5, "a request waited %.3f s", slowest_after_first);
    int tries = 0;
    ck_assert_msg(poll_until("GET", "/boards/st/rank", NULL, 200, RECOVERY_S, &tries) >= 0,
                  "no recovery after SIGCONT");
}
END_TEST

/* A write whose reply timed out after it was sent may have run: the client is told so. A write
 * pause (as during a failover) holds the write script after rankd sent it; reads still pass. */
static void short_timeout(struct config *cfg)
{
    cfg->redis_timeout_ms = 100;
}

START_TEST(test_write_outcome_unknown)
{
    struct rankd *app = rankd_test_start_with(f_redis.port, TEST_TOKEN, short_timeout, NULL);
    int port = rankd_port(app);
    freeReplyObject(redis_admin_cmd(f_admin, "CLIENT PAUSE 800 WRITE"));
    struct http_result r;
    const char *body = "{\"id\":\"late\",\"score\":5}";
    ck_assert_int_eq(
        http_req(port, "POST", "/boards/ou/scores", body, strlen(body), NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == 503 && strcmp(http_error_code(&r), "write_outcome_unknown") == 0,
                  "a write held by a write pause -> %ld %s; want 503 write_outcome_unknown",
                  r.status, r.body);
    http_result_free(&r);
    /* (whether Redis still runs it depends on whether it read the command before rankd gave up
     * the connection: exactly why the reply cannot say "not written") */
    rankd_stop(app);
}
END_TEST

/* ---------------------------------------------------------------- suite */

static TCase *faults_tcase(const char *name, double timeout_s)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, faults_setup, faults_teardown);
    tcase_set_timeout(tc, timeout_s);
    return tc;
}

Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *down = faults_tcase("redis_down", 20);
    tcase_add_test(down, test_redis_down);
    tcase_add_test(down, test_recovery_after_restart);
    suite_add_tcase(s, down);

    TCase *scripts = faults_tcase("scripts", 20);
    tcase_add_test(scripts, test_scripts_reloaded);
    tcase_add_test(scripts, test_killed_connections_redialled);
    suite_add_tcase(s, scripts);

    TCase *blocking = faults_tcase("no_blocking_commands", 40);
    tcase_add_test(blocking, test_big_board_bounded_commands);
    suite_add_tcase(s, blocking);

    TCase *slow = faults_tcase("slow_redis", 20);
    tcase_add_test(slow, test_paused_redis_times_out);
    tcase_add_test(slow, test_busy_redis_answers_503);
    tcase_add_test(slow, test_redis_oom_writes_507);
    tcase_add_test(slow, test_stuck_requests_do_not_block_healthz);
    tcase_add_test(slow, test_slow_clients_hold_no_threads);
    tcase_add_test(slow, test_admin_report_with_restricted_user);
    tcase_add_test(slow, test_admin_report_is_valid_utf8);
    tcase_add_test(slow, test_connection_limit_across_event_threads);
    tcase_add_test(slow, test_connections_spread_over_event_threads);
    tcase_add_test(slow, test_per_ip_limit_across_event_threads);
    tcase_add_test(slow, test_hit_connection_times_out_and_redials);
    tcase_add_test(slow, test_hit_connection_killed);
    tcase_add_test(slow, test_hits_keep_their_own_timeout);
    tcase_add_test(slow, test_event_thread_never_waits_for_redis);
    tcase_add_test(slow, test_stop_start_many_times);
    suite_add_tcase(s, slow);

    TCase *stall = faults_tcase("stall", 40);
    tcase_add_test(stall, test_stalled_redis_fails_fast);
    tcase_add_test(stall, test_write_outcome_unknown);
    tcase_add_test(stall, test_process_pause_is_not_a_redis_timeout);
    tcase_add_test(stall, test_identical_hits_share_one_lookup);
    tcase_add_test(stall, test_shared_lookup_times_out_for_all);
    tcase_add_test(stall, test_hit_connection_dropped_after_silence);
    tcase_add_test(stall, test_stop_does_not_wait_for_stalled_upload);
    suite_add_tcase(s, stall);

    TCase *failover = faults_tcase("write_pause", 20);
    tcase_add_test(failover, test_reads_during_write_pause);
    suite_add_tcase(s, failover);
    return s;
}
