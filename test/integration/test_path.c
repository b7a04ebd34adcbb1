/*
 * test_path.c -- the request path on the event threads, against a real redis-server of each
 * test's own:
 *   1. round trips: every request kind sends the top-level commands it should and no more
 *      (MONITOR: commands not run by a script), once the board's settings are known;
 *   2. a write whose connection is lost after it was sent is write_outcome_unknown, never
 *      redis_unavailable (a retried incr must never count twice);
 *   3. one deadline per request (--request-timeout-ms) below the Redis command timeout;
 *   4. after Redis was down, the 503s stop within about 100 ms of Redis answering again (the
 *      control routes too);
 *   5. requests that arrive while the event thread's connection is being dialled wait for the
 *      dial and are served on the event thread.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"

static struct redis_proc p_redis;
static struct rankd *p_app;
static int p_port;
static redisContext *p_admin;

static void path_setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    ck_assert_msg(redis_proc_start(&p_redis) == 0, "could not start this test's redis-server");
    p_admin = redis_admin(p_redis.port);
}

static void path_teardown(void)
{
    rankd_stop(p_app);
    p_app = NULL;
    redisFree(p_admin);
    p_admin = NULL;
    redis_proc_stop(&p_redis);
    char file[200];
    snprintf(file, sizeof(file), "%s/redis.log", p_redis.dir);
    unlink(file);
    rmdir(p_redis.dir);
}

/* rankd with both of its event thread's Redis connections up (until then requests wait for the
 * dial, and the commands counted would include its SCRIPT LOADs). */
static void start_with(void (*tweak)(struct config *cfg))
{
    p_app = rankd_test_start_with(p_redis.port, TEST_TOKEN, tweak, NULL);
    ck_assert_ptr_nonnull(p_app);
    p_port = rankd_port(p_app);
    for (int i = 0; i < 500; i++) {
        if (http_metric(p_port, "rankd_hit_connection_up{thread=\"0\"}") == 1 &&
            http_metric(p_port, "rankd_write_connection_up{thread=\"0\"}") == 1)
            return;
        sleep_ms(10);
    }
    ck_abort_msg("the event thread's Redis connections did not come up in 5 s");
}

/* ---------------------------------------------------------------- 1. round trips */

/* One request, and the top-level commands it cost Redis. */
static int commands_of(const char *method, const char *path, const char *body, long status,
                       char *verbs, size_t len)
{
    redisContext *mon = mon_start(p_redis.port);
    http_expect_free(p_port, method, path, body, status);
    return mon_top_level(p_admin, mon, verbs, len);
}

static void expect_commands(const char *method, const char *path, const char *body, long status,
                            int want, const char *want_verbs)
{
    char verbs[400];
    int n = commands_of(method, path, body, status, verbs, sizeof(verbs));
    fprintf(stderr, "path: %s %s: %d top-level command(s): %s\n", method, path, n, verbs);
    ck_assert_msg(n == want && strcmp(verbs, want_verbs) == 0,
                  "%s %s cost %d top-level commands (%s); want %d (%s)", method, path, n, verbs,
                  want, want_verbs);
}

START_TEST(test_round_trips_per_request)
{
    start_with(NULL);
    http_expect_free(p_port, "PUT", "/boards/rt", "{\"page_ttl_ms\":0}", 201);
    http_expect_free(p_port, "PUT", "/boards/rc", "{\"page_ttl_ms\":60000}", 201);
    for (int i = 0; i < 30; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d}", i, 100 - i);
        http_expect_free(p_port, "POST", "/boards/rt/scores", body, 200);
        http_expect_free(p_port, "POST", "/boards/rc/scores", body, 200);
    }
    /* every connection dialled and every board seen once */
    http_expect_free(p_port, "GET", "/boards/rt/rank", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/rt/members/m3", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/rc/rank?page=2", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/rc/rank?page=2", NULL, 200);

    expect_commands("GET", "/boards/rt/rank?page=2", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/members/m7", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/members/nobody", NULL, 404, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/members/m7/around?size=5", NULL, 200, 1, "EVALSHA");
    expect_commands("POST", "/boards/rt/scores", "{\"id\":\"m1\",\"score\":5,\"op\":\"incr\"}", 200,
                    1, "EVALSHA");
    expect_commands("POST", "/boards/rt/scores",
                    "{\"entries\":[{\"id\":\"b1\",\"score\":1},{\"id\":\"b2\",\"score\":2}]}", 200,
                    1, "EVALSHA");
    /* issue 14's reads: one script call each, whatever the rank type */
    expect_commands("GET", "/boards/rt/rank?page=2&rank=dense", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/members/m7?rank=competition", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/members/m7/around?size=5&rank=dense", NULL, 200, 1,
                    "EVALSHA");
    expect_commands("GET", "/boards/rt/members?ids=m1,m%2C2,nobody&rank=dense", NULL, 200, 1,
                    "EVALSHA");
    expect_commands("POST", "/boards/rt/lookup", "{\"ids\":[\"m3\",\"m4\",\"x\"]}", 200, 1,
                    "EVALSHA");
    expect_commands("GET", "/boards/rt/around?score=80&size=5&rank=competition", NULL, 200, 1,
                    "EVALSHA");
    expect_commands("GET", "/boards/rt/percentile?p=90", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/boards/rt/top?percent=10&rank=dense", NULL, 200, 1, "EVALSHA");
    expect_commands("GET", "/members/m7?boards=rt,rc,nope&rank=dense", NULL, 200, 1, "EVALSHA");
    /* score ranges and cursors: walk.lua, one call (never cached) */
    expect_commands("GET", "/boards/rt/rank?min=75&max=90&rank=competition", NULL, 200, 1,
                    "EVALSHA");
    expect_commands("GET", "/boards/rc/rank?min=75&size=5", NULL, 200, 1, "EVALSHA");
    struct http_result pr;
    http_expect(p_port, "GET", "/boards/rt/rank?size=5", NULL, 200, &pr);
    const cJSON *next = cJSON_GetObjectItemCaseSensitive(pr.json, "next");
    ck_assert(cJSON_IsString(next));
    char after[512];
    snprintf(after, sizeof(after), "/boards/rt/rank?size=5&after=%s", next->valuestring);
    http_result_free(&pr);
    expect_commands("GET", after, NULL, 200, 1, "EVALSHA");
    /* a cached page: one command (page_get.lua: the settings and the guessed page key) */
    expect_commands("GET", "/boards/rc/rank?page=2", NULL, 200, 1, "EVALSHA");
    http_expect_free(p_port, "GET", "/boards/rc/rank?page=2&rank=dense", NULL, 200);
    expect_commands("GET", "/boards/rc/rank?page=2&rank=dense", NULL, 200, 1, "EVALSHA");
    /* a miss: the lookup, then page_fill.lua (lock and rows) answers the request; the page is
     * stored and the lock released after it in one command (lock_release.lua), without the
     * request waiting */
    double on_loop = http_metric(p_port, "rankd_page_cache_misses_on_loop_total");
    expect_commands("GET", "/boards/rc/rank?page=1", NULL, 200, 3, "EVALSHA EVALSHA EVALSHA");
    ck_assert_msg(http_metric(p_port, "rankd_page_cache_misses_on_loop_total") == on_loop + 1,
                  "the miss was not computed on the event thread");
    /* a write to a board this process has not seen in the last second reads its settings */
    sleep_ms(1100);
    expect_commands("POST", "/boards/rt/scores", "{\"id\":\"m2\",\"score\":9}", 200, 2,
                    "HGETALL EVALSHA");
}
END_TEST

/* ---------------------------------------------------------------- 2. lost after sent */

struct bg {
    pthread_t t;
    const char *path, *body;
    const char *method;         /* NULL: POST */
    const char *const *headers; /* more request headers, or NULL */
    struct http_result r;
    int rc;
};

static void *bg_main(void *arg)
{
    struct bg *b = arg;
    b->rc = http_req_h(p_port, b->method ? b->method : "POST", b->path, b->body,
                       b->body ? strlen(b->body) : 0, NULL, TEST_TOKEN, b->headers, &b->r);
    return NULL;
}

static void long_timeout(struct config *cfg)
{
    cfg->redis_timeout_ms = 5000;
    cfg->request_timeout_ms = 5000;
}

/* POST b's body to b's path while Redis holds writes (CLIENT PAUSE WRITE), and kill every
 * connection once it is in Redis: Redis may or may not run it; b.r is rankd's answer. */
static void write_lost_after_sent(struct bg *b)
{
    start_with(long_timeout);
    http_expect_free(p_port, "POST", "/boards/lost/scores", "{\"id\":\"a\",\"score\":1}", 200);
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 3000 WRITE"));
    ck_assert_int_eq(pthread_create(&b->t, NULL, bg_main, b), 0);
    sleep_ms(300); /* the write is in Redis now, held by the pause */
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT KILL TYPE normal SKIPME yes"));
    pthread_join(b->t, NULL);
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT UNPAUSE"));
    ck_assert_int_eq(b->rc, 0);
}

/* The write is sent and held (CLIENT PAUSE WRITE), then its connection is killed: Redis may or
 * may not have run it, so the reply must not say "retry safely". (Before: redis_unavailable.) */
START_TEST(test_write_lost_after_sent_is_unknown)
{
    struct bg b = {.path = "/boards/lost/scores",
                   .body = "{\"id\":\"a\",\"score\":1,\"op\":\"incr\"}"};
    write_lost_after_sent(&b);
    ck_assert_msg(b.r.status == 503 && strcmp(http_error_code(&b.r), "write_outcome_unknown") == 0,
                  "a write whose connection was killed after it was sent -> %ld %s; want 503 "
                  "write_outcome_unknown",
                  b.r.status, b.r.body);
    ck_assert_msg(b.r.seconds < 1.0, "the lost write took %.3f s to answer", b.r.seconds);
    http_result_free(&b.r);
    /* and the service goes on */
    http_expect_free(p_port, "POST", "/boards/lost/scores", "{\"id\":\"c\",\"score\":3}", 200);
}
END_TEST

/* The same with an Idempotency-Key: the 503 says the write may be sent again, and sending it
 * again (twice) applies the incr exactly once, whether or not the lost call ran. */
START_TEST(test_idempotent_write_lost_after_sent)
{
    static const char *const key[] = {"Idempotency-Key: lost-incr-1", NULL};
    const char *body = "{\"id\":\"a\",\"score\":1,\"op\":\"incr\"}";
    struct bg b = {.path = "/boards/lost/scores", .body = body, .headers = key};
    write_lost_after_sent(&b);
    ck_assert_msg(b.r.status == 503 &&
                      strcmp(http_error_code(&b.r), "write_outcome_unknown") == 0 &&
                      strstr(b.r.body, "It carried an Idempotency-Key: send it again"),
                  "%ld %s", b.r.status, b.r.body);
    http_result_free(&b.r);
    struct http_result r1, r2;
    for (int i = 0; i < 100; i++) { /* until the connection is dialled again */
        ck_assert_int_eq(http_req_h(p_port, "POST", "/boards/lost/scores", body, strlen(body), NULL,
                                    TEST_TOKEN, key, &r1),
                         0);
        if (r1.status == 200)
            break;
        http_result_free(&r1);
        sleep_ms(20);
    }
    ck_assert_msg(r1.status == 200 && strstr(r1.body, "\"score\":2,"), "%ld %s", r1.status,
                  r1.body);
    ck_assert_int_eq(http_req_h(p_port, "POST", "/boards/lost/scores", body, strlen(body), NULL,
                                TEST_TOKEN, key, &r2),
                     0);
    ck_assert_str_eq(r1.body, r2.body);
    ck_assert_ptr_nonnull(strstr(r2.headers, "Idempotent-Replayed: true\r\n"));
    http_result_free(&r1);
    http_result_free(&r2);
    for (int i = 0; i < 100; i++) { /* the read connection was killed too */
        ck_assert_int_eq(http_get(p_port, "/boards/lost/members/a", &r1), 0);
        if (r1.status == 200)
            break;
        http_result_free(&r1);
        sleep_ms(20);
    }
    ck_assert_msg(r1.status == 200 && strstr(r1.body, "\"score\":2,"), "%s", r1.body);
    http_result_free(&r1);
}
END_TEST

/* ---------------------------------------------------------------- 3. one deadline */

/* The request deadline (0.2 s) far below a Redis command's timeout (5 s) and the pauses (5 s):
 * the bounds tell the deadline kept (well under 2 s on a busy machine) from the other waits. */
static void short_request(struct config *cfg)
{
    cfg->redis_timeout_ms = 5000;
    cfg->request_timeout_ms = 200;
}

START_TEST(test_request_deadline_below_command_timeout)
{
    start_with(short_request);
    http_expect_free(p_port, "PUT", "/boards/dl", "{\"page_ttl_ms\":0}", 201);
    http_expect_free(p_port, "POST", "/boards/dl/scores", "{\"id\":\"a\",\"score\":1}", 200);
    http_expect_free(p_port, "GET", "/boards/dl/members/a", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/dl/rank", NULL, 200);
    static const char *const reads[] = {"/boards/dl/members/a", "/boards/dl/rank",
                                        "/boards/dl/members/a/around"};
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 5000 ALL"));
        struct http_result r;
        http_expect(p_port, "GET", reads[i], NULL, 503, &r);
        ck_assert_str_eq(http_error_code(&r), "redis_unavailable");
        fprintf(stderr, "path: GET %s under a pause: 503 after %.3f s\n", reads[i], r.seconds);
        ck_assert_msg(r.seconds >= 0.15 && r.seconds < 2.0,
                      "GET %s answered after %.3f s; the request deadline is 0.2 s, the pause and "
                      "a command's timeout 5 s",
                      reads[i], r.seconds);
        http_result_free(&r);
        freeReplyObject(redis_admin_cmd(p_admin, "CLIENT UNPAUSE"));
        sleep_ms(100); /* the late reply is read */
    }
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 5000 WRITE"));
    struct http_result r;
    http_expect(p_port, "POST", "/boards/dl/scores", "{\"id\":\"b\",\"score\":1}", 503, &r);
    ck_assert_str_eq(http_error_code(&r), "write_outcome_unknown");
    ck_assert_msg(r.seconds < 2.0, "the write answered after %.3f s (deadline 0.2 s)", r.seconds);
    http_result_free(&r);
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT UNPAUSE"));
}
END_TEST

/* ---------------------------------------------------------------- found by the attacker */

/* During a write pause (a failover), cold page misses are computed without the lock on the
 * read connection, not answered 503: reads work. (Before: the first miss waited for its lock
 * call, every later one got 503 at once while that call was stuck.) */
START_TEST(test_misses_during_write_pause)
{
    start_with(NULL);
    http_expect_free(p_port, "PUT", "/boards/wpm", "{\"page_size\":2}", 201);
    for (int i = 0; i < 40; i++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d}", i, i);
        http_expect_free(p_port, "POST", "/boards/wpm/scores", body, 200);
    }
    http_expect_free(p_port, "GET", "/boards/wpm/rank?page=1", NULL, 200);
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 8000 WRITE")); /* undone below */
    for (int page = 2; page <= 8; page++) {
        char path[64];
        snprintf(path, sizeof(path), "/boards/wpm/rank?page=%d", page);
        struct http_result r;
        http_expect(p_port, "GET", path, NULL, 200, &r);
        /* a miss that waited for its lock call would take the pause (8 s) or fail */
        ck_assert_msg(r.seconds < 2.0, "GET %s took %.3f s", path, r.seconds);
        http_result_free(&r);
    }
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT UNPAUSE"));
}
END_TEST

/* A request deadline (0.3 s) far below the other waits (a Redis command 5 s, a page lock 5 s):
 * a request that keeps its deadline answers in well under 2 s even on a busy machine, one that
 * waits for the others takes 5 s, so the bounds below judge which wait was kept, not how quiet
 * the machine is. */
static void short_request_long_wait(struct config *cfg)
{
    cfg->redis_timeout_ms = 5000;
    cfg->request_timeout_ms = 300;
    cfg->page_max_wait_ms = 5000;
}

struct bg_get {
    pthread_t t;
    const char *path;
    struct http_result r;
};

static void *bg_get_main(void *arg)
{
    struct bg_get *b = arg;
    http_get(p_port, b->path, &b->r);
    return NULL;
}

/* Cached-page lookups keep the request's deadline too, and a request is given up at its own
 * deadline even when older lookups with later deadlines are still pending (before: the cached
 * page and the live page and member behind it answered after the 2 s command timeout). */
START_TEST(test_cached_lookups_keep_the_deadline)
{
    start_with(short_request_long_wait);
    http_expect_free(p_port, "PUT", "/boards/cl", "{\"page_ttl_ms\":60000}", 201);
    http_expect_free(p_port, "PUT", "/boards/cl0", "{\"page_ttl_ms\":0}", 201);
    http_expect_free(p_port, "POST", "/boards/cl/scores", "{\"id\":\"a\",\"score\":1}", 200);
    http_expect_free(p_port, "POST", "/boards/cl0/scores", "{\"id\":\"a\",\"score\":1}", 200);
    http_expect_free(p_port, "GET", "/boards/cl/rank", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/cl/rank", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/cl0/rank", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/cl0/members/a", NULL, 200);
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 8000 ALL")); /* undone below */
    struct bg_get g[] = {{.path = "/boards/cl/rank"},
                         {.path = "/boards/cl0/rank"},
                         {.path = "/boards/cl0/members/a"}};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_create(&g[i].t, NULL, bg_get_main, &g[i]), 0);
        sleep_ms(20);
    }
    for (size_t i = 0; i < 3; i++) {
        pthread_join(g[i].t, NULL);
        fprintf(stderr, "path: GET %s under a pause: %ld after %.3f s\n", g[i].path, g[i].r.status,
                g[i].r.seconds);
        ck_assert_msg(g[i].r.status == 503 && g[i].r.seconds < 2.0,
                      "GET %s under a pause -> %ld after %.3f s; the request deadline is 0.3 s, "
                      "a Redis command's timeout 5 s",
                      g[i].path, g[i].r.status, g[i].r.seconds);
        http_result_free(&g[i].r);
    }
    freeReplyObject(redis_admin_cmd(p_admin, "CLIENT UNPAUSE"));
}
END_TEST

/* A page lock held elsewhere is waited for within the request's deadline, then the page is
 * computed: 200 in about the request timeout (0.3 s), not page_max_wait_ms (5 s here). */
START_TEST(test_lock_wait_keeps_the_deadline)
{
    start_with(short_request_long_wait);
    http_expect_free(p_port, "PUT", "/boards/lw", "{\"page_ttl_ms\":60000}", 201);
    http_expect_free(p_port, "POST", "/boards/lw/scores", "{\"id\":\"a\",\"score\":1}", 200);
    http_expect_free(p_port, "GET", "/boards/lw/rank?page=1", NULL, 200); /* the board is known */
    redisReply *g = redis_admin_cmd(p_admin, "HGET %s:{lw}:meta gen", p_app->cfg.key_prefix);
    ck_assert_int_eq(g->type, REDIS_REPLY_STRING);
    freeReplyObject(redis_admin_cmd(p_admin, "SET %s:{lw}:page:%s:-:20:3:lock x PX 20000",
                                    p_app->cfg.key_prefix, g->str));
    freeReplyObject(g);
    struct http_result r;
    http_expect(p_port, "GET", "/boards/lw/rank?page=3", NULL, 200, &r);
    fprintf(stderr, "path: a page locked elsewhere: 200 after %.3f s\n", r.seconds);
    ck_assert_msg(r.seconds < 2.0, "the locked page took %.3f s (deadline 0.3 s, lock wait 5 s)",
                  r.seconds);
    http_result_free(&r);
}
END_TEST

/* A read whose connection is killed while it waits in Redis is sent again on the connection
 * the event thread dials at once (a read is safe to repeat), not answered 503. */
START_TEST(test_read_cut_by_kill_is_retried)
{
    start_with(NULL);
    http_expect_free(p_port, "PUT", "/boards/rk", "{\"page_ttl_ms\":0}", 201);
    http_expect_free(p_port, "POST", "/boards/rk/scores", "{\"id\":\"a\",\"score\":1}", 200);
    http_expect_free(p_port, "GET", "/boards/rk/members/a", NULL, 200);
    http_expect_free(p_port, "GET", "/boards/rk/rank", NULL, 200);
    static const char *const paths[] = {"/boards/rk/members/a", "/boards/rk/rank"};
    for (size_t i = 0; i < 2; i++) {
        /* wait for the event thread's read connection after the previous kill */
        for (int k = 0;
             k < 300 && http_metric(p_port, "rankd_hit_connection_up{thread=\"0\"}") != 1; k++)
            sleep_ms(10);
        freeReplyObject(redis_admin_cmd(p_admin, "CLIENT PAUSE 400 ALL"));
        struct bg_get b = {.path = paths[i]};
        ck_assert_int_eq(pthread_create(&b.t, NULL, bg_get_main, &b), 0);
        sleep_ms(100); /* the read waits in Redis */
        freeReplyObject(redis_admin_cmd(p_admin, "CLIENT KILL TYPE normal SKIPME yes"));
        pthread_join(b.t, NULL);
        ck_assert_msg(b.r.status == 200, "GET %s cut by CLIENT KILL -> %ld %s", paths[i],
                      b.r.status, b.r.body);
        http_result_free(&b.r);
        sleep_ms(400);
    }
}
END_TEST

/* CLIENT KILL of every connection, over and over, under concurrent incr batches: a batch
 * answered 200 is applied, one answered redis_unavailable is absent (safe to retry), one
 * answered write_outcome_unknown is applied whole or not at all; so a client that retries
 * exactly the unavailable ones ends with the exact total. */
#define KB_THREADS 4
#define KB_BATCHES 60
#define KB_SIZE 10

struct kb_writer {
    pthread_t t;
    int id;
    long status[KB_BATCHES];
    char code[KB_BATCHES][32];
};

static void *kb_writer_main(void *arg)
{
    struct kb_writer *w = arg;
    for (int b = 0; b < KB_BATCHES; b++) {
        char body[1024] = "{\"entries\":[";
        for (int i = 0; i < KB_SIZE; i++) {
            size_t at = strlen(body);
            snprintf(body + at, sizeof(body) - at,
                     "%s{\"id\":\"w%d-b%d-%d\",\"score\":1,\"op\":\"incr\"}", i ? "," : "", w->id,
                     b, i);
        }
        strcat(body, "]}");
        struct http_result r;
        if (http_req(p_port, "POST", "/boards/kb/scores", body, strlen(body), NULL, TEST_TOKEN,
                     &r) == 0) {
            w->status[b] = r.status;
            snprintf(w->code[b], sizeof(w->code[b]), "%s", http_error_code(&r));
            http_result_free(&r);
        }
    }
    return NULL;
}

START_TEST(test_killed_connections_under_incr_batches)
{
    start_with(NULL);
    http_expect_free(p_port, "POST", "/boards/kb/scores", "{\"id\":\"seed\",\"score\":1}", 200);
    static struct kb_writer w[KB_THREADS];
    memset(w, 0, sizeof(w));
    for (int i = 0; i < KB_THREADS; i++) {
        w[i].id = i;
        ck_assert_int_eq(pthread_create(&w[i].t, NULL, kb_writer_main, &w[i]), 0);
    }
    int kills = 0;
    for (int k = 0; k < 40; k++, kills++) {
        sleep_ms(25);
        freeReplyObject(redis_admin_cmd(p_admin, "CLIENT KILL TYPE normal SKIPME yes"));
    }
    for (int i = 0; i < KB_THREADS; i++)
        pthread_join(w[i].t, NULL);
    int ok = 0, unavailable = 0, unknown = 0;
    for (int i = 0; i < KB_THREADS; i++)
        for (int b = 0; b < KB_BATCHES; b++) {
            int present = 0;
            for (int e = 0; e < KB_SIZE; e++) {
                redisReply *r = redis_admin_cmd(p_admin, "ZSCORE %s:{kb}:z w%d-b%d-%d",
                                                p_app->cfg.key_prefix, i, b, e);
                present += r->type == REDIS_REPLY_STRING;
                freeReplyObject(r);
            }
            const char *code = w[i].code[b];
            if (w[i].status[b] == 200) {
                ok++;
                ck_assert_msg(present == KB_SIZE, "batch w%d-b%d answered 200: %d of %d applied", i,
                              b, present, KB_SIZE);
            } else if (strcmp(code, "redis_unavailable") == 0) {
                unavailable++;
                ck_assert_msg(present == 0,
                              "batch w%d-b%d answered redis_unavailable (safe to retry) but %d of "
                              "%d are applied",
                              i, b, present, KB_SIZE);
            } else {
                ck_assert_msg(strcmp(code, "write_outcome_unknown") == 0, "batch w%d-b%d: %ld %s",
                              i, b, w[i].status[b], code);
                unknown++;
                ck_assert_msg(present == 0 || present == KB_SIZE,
                              "batch w%d-b%d half applied: %d of %d", i, b, present, KB_SIZE);
            }
        }
    fprintf(stderr,
            "path: %d CLIENT KILLs under %d incr batches: %d applied, %d unavailable (absent), "
            "%d outcome unknown\n",
            kills, KB_THREADS * KB_BATCHES, ok, unavailable, unknown);
    ck_assert_msg(ok > 0, "no batch got through");
}
END_TEST

/* rankd stopped (SIGTERM) in the middle of an NDJSON upload: the 503 says how many lines were
 * applied and up to which line, so the client resumes without applying an incr twice. (Before:
 * "rankd is shutting down." and nothing else, with thousands of lines applied; and until the
 * handlers split, two Retry-After headers.) */
START_TEST(test_upload_cut_by_shutdown_says_how_far)
{
    struct rankd_proc p = {0};
    ck_assert_int_eq(rankd_proc_start(&p, p_redis.port, NULL), 0);
    struct buf body = {0};
    size_t first = 0;
    for (int i = 0; i < 6000; i++) { /* twenty chunks: the first half, then the stop */
        char line[64];
        int n = snprintf(line, sizeof(line), "{\"id\":\"m%d\",\"score\":1,\"op\":\"incr\"}\n", i);
        buf_append(&body, line, (size_t)n);
        if (i == 2999)
            first = body.len;
    }
    char head[256];
    int hn =
        snprintf(head, sizeof(head),
                 "POST /boards/up/scores HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " TEST_TOKEN
                 "\r\nContent-Type: application/x-ndjson\r\nContent-Length: %zu\r\n\r\n",
                 body.len);
    int fd = connect_loopback(p.port);
    ck_assert(fd >= 0);
    ck_assert_int_eq(write(fd, head, (size_t)hn), hn);
    ck_assert_int_eq(write(fd, body.data, first), (ssize_t)first);
    sleep_ms(300); /* the first half is applied */
    kill(p.pid, SIGTERM);
    sleep_ms(50);
    for (size_t sent = first; sent < body.len;) {
        ssize_t w = write(fd, body.data + sent, body.len - sent);
        if (w <= 0)
            break;
        sent += (size_t)w;
    }
    buf_free(&body);
    struct timeval tv = {8, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char reply[2048] = "";
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(reply) - 1 && (r = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
        got += (size_t)r;
    reply[got] = '\0';
    close(fd);
    rankd_proc_stop(&p);
    redisReply *z = redis_admin_cmd(p_admin, "ZCARD rankd:{up}:z");
    long long applied = z->integer;
    freeReplyObject(z);
    fprintf(stderr, "path: upload cut by SIGTERM after %lld lines: %.200s\n", applied,
            strstr(reply, "{") ? strstr(reply, "{") : reply);
    ck_assert_msg(strstr(reply, "HTTP/1.1 503") && strstr(reply, "shutting_down"), "%s", reply);
    const char *ra = strstr(reply, "Retry-After");
    ck_assert_msg(ra && !strstr(ra + 1, "Retry-After"), "the 503 has %s Retry-After header: %s",
                  ra ? "more than one" : "no", reply);
    char want[64];
    snprintf(want, sizeof(want), "%lld lines were applied", applied);
    ck_assert_msg(applied > 0 && strstr(reply, want), "the reply does not say \"%s\": %s", want,
                  reply);
    int retry_after = 0; /* once (it was sent twice) */
    for (const char *h = reply; (h = strstr(h, "\r\nRetry-After: 1\r\n")) != NULL; h += 2)
        retry_after++;
    ck_assert_msg(retry_after == 1, "Retry-After %d times: %s", retry_after, reply);
}
END_TEST

/* An upload streamed without end, one incr of a member of its own a line ("m<line>"): the
 * writer's side of test_upload_answered_when_stopped. */
struct endless_upload {
    pthread_t t;
    int fd;
    long lines; /* lines sent (whole or in part) */
};

static void *endless_upload_main(void *arg)
{
    struct endless_upload *e = arg;
    char block[64 * 1024];
    for (;;) {
        size_t n = 0;
        while (n + 64 < sizeof(block)) {
            e->lines++;
            n += (size_t)snprintf(block + n, sizeof(block) - n,
                                  "{\"id\":\"m%ld\",\"score\":1,\"op\":\"incr\"}\n", e->lines);
        }
        for (size_t sent = 0; sent < n;) {
            ssize_t w = send(e->fd, block + sent, n - sent, MSG_NOSIGNAL);
            if (w <= 0)
                return NULL; /* rankd closed, or the test shut the socket */
            sent += (size_t)w;
        }
    }
}

/* A JSON number field of `doc`, or -1. */
static long long json_int(const cJSON *doc, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(doc, name);
    return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

/* SIGTERM while a client streams an upload that never ends: rankd answers it before it closes
 * the connection, and soon (not after the rest of the body, never sent: before, it went on for
 * 5 s and closed with no reply, thousands of lines applied), with where the upload stands as
 * numbers: the lines applied are exactly those Redis holds, all up to settled_through_line. */
START_TEST(test_upload_answered_when_stopped)
{
    struct rankd_proc p = {0};
    ck_assert_int_eq(rankd_proc_start(&p, p_redis.port, NULL), 0);
    char head[256];
    int hn =
        snprintf(head, sizeof(head),
                 "POST /boards/us/scores HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " TEST_TOKEN
                 "\r\nContent-Type: application/x-ndjson\r\nContent-Length: 999999999999\r\n\r\n");
    struct endless_upload e = {.fd = connect_loopback(p.port)};
    ck_assert(e.fd >= 0);
    ck_assert_int_eq(write(e.fd, head, (size_t)hn), hn);
    ck_assert_int_eq(pthread_create(&e.t, NULL, endless_upload_main, &e), 0);
    long long before = 0;
    for (int i = 0; i < 500 && before < 3000; i++) { /* ten chunks applied, then the stop */
        sleep_ms(10);
        redisReply *z = redis_admin_cmd(p_admin, "ZCARD rankd:{us}:z");
        before = z->integer;
        freeReplyObject(z);
    }
    ck_assert_msg(before >= 3000, "the upload did not get going: %lld lines applied", before);
    double t0 = now_s();
    kill(p.pid, SIGTERM);
    struct timeval tv = {10, 0};
    setsockopt(e.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char reply[4096] = "";
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(reply) - 1 && (r = read(e.fd, reply + got, sizeof(reply) - 1 - got)) > 0)
        got += (size_t)r;
    reply[got] = '\0';
    double answered_s = now_s() - t0;
    shutdown(e.fd, SHUT_RDWR); /* the writer stops */
    pthread_join(e.t, NULL);
    close(e.fd);
    double exit_s = rankd_proc_stop(&p);
    redisReply *z = redis_admin_cmd(p_admin, "ZCARD rankd:{us}:z");
    long long held = z->integer;
    freeReplyObject(z);
    const char *json = strstr(reply, "\r\n\r\n");
    cJSON *doc = json ? cJSON_Parse(json + 4) : NULL;
    long long applied = json_int(doc, "applied"), settled = json_int(doc, "settled_through_line");
    fprintf(stderr,
            "path: upload of %ld lines sent stopped by SIGTERM: answered after %.2f s, rankd "
            "exited after %.2f s, %lld lines in Redis: %.300s\n",
            e.lines, answered_s, exit_s, held, json ? json + 4 : reply);
    ck_assert_msg(strncmp(reply, "HTTP/1.1 503", 12) == 0 && strstr(reply, "shutting_down"),
                  "no 503 shutting_down before the close (%.2f s): [%s]", answered_s, reply);
    ck_assert_msg(strstr(reply, "\r\nConnection: close\r\n") &&
                      strstr(reply, "\r\nRetry-After: 1\r\n"),
                  "%s", reply);
    ck_assert_msg(doc, "the 503's body is not JSON: %s", reply);
    ck_assert_msg(applied == held && settled == held && json_int(doc, "rejected_total") == 0 &&
                      cJSON_IsNull(cJSON_GetObjectItem(doc, "unknown_through_line")),
                  "Redis holds %lld lines, the 503 says %s", held, json + 4);
    /* exactly lines 1..settled: the client resends from the line after it */
    char last[32], next[32];
    snprintf(last, sizeof(last), "m%lld", settled);
    snprintf(next, sizeof(next), "m%lld", settled + 1);
    z = redis_admin_cmd(p_admin, "ZSCORE rankd:{us}:z %s", last);
    ck_assert_msg(z->type == REDIS_REPLY_STRING, "line %lld is not applied", settled);
    freeReplyObject(z);
    z = redis_admin_cmd(p_admin, "ZSCORE rankd:{us}:z %s", next);
    ck_assert_msg(z->type == REDIS_REPLY_NIL, "line %lld is applied", settled + 1);
    freeReplyObject(z);
    cJSON_Delete(doc);
    /* within the 5 s a stop gives the requests in work (README), not at its end */
    ck_assert_msg(answered_s < 5.0, "answered %.2f s after SIGTERM", answered_s);
}
END_TEST

/* SIGTERM while an upload waits for more of its body (its client paused): answered at once
 * with how far it got (stop_uploads), not held for the 5 s a stop gives the requests in work. */
START_TEST(test_paused_upload_answered_when_stopped)
{
    struct rankd_proc p = {0};
    ck_assert_int_eq(rankd_proc_start(&p, p_redis.port, NULL), 0);
    struct buf body = {0};
    for (int i = 1; i <= 700; i++) { /* two chunks written, 100 lines pending */
        char line[64];
        int n = snprintf(line, sizeof(line), "{\"id\":\"m%d\",\"score\":1,\"op\":\"incr\"}\n", i);
        buf_append(&body, line, (size_t)n);
    }
    char head[256];
    int hn = snprintf(head, sizeof(head),
                      "POST /boards/pu/scores HTTP/1.1\r\nHost: t\r\nAuthorization: "
                      "Bearer " TEST_TOKEN "\r\nContent-Type: application/x-ndjson\r\n"
                      "Content-Length: 999999\r\n\r\n");
    int fd = connect_loopback(p.port);
    ck_assert(fd >= 0);
    ck_assert_int_eq(write(fd, head, (size_t)hn), hn);
    ck_assert_int_eq(write(fd, body.data, body.len), (ssize_t)body.len);
    buf_free(&body);
    long long held = 0;
    for (int i = 0; i < 500 && held < 600; i++) {
        sleep_ms(10);
        redisReply *z = redis_admin_cmd(p_admin, "ZCARD rankd:{pu}:z");
        held = z->integer;
        freeReplyObject(z);
    }
    ck_assert_int_eq(held, 600);
    sleep_ms(100); /* nothing more comes: the upload waits for its body */
    double t0 = now_s();
    kill(p.pid, SIGTERM);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char reply[4096] = "";
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(reply) - 1 && (r = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
        got += (size_t)r;
    reply[got] = '\0';
    double answered_s = now_s() - t0;
    close(fd);
    rankd_proc_stop(&p);
    const char *json = strstr(reply, "\r\n\r\n");
    cJSON *doc = json ? cJSON_Parse(json + 4) : NULL;
    fprintf(stderr, "path: a paused upload stopped by SIGTERM: answered after %.2f s: %.200s\n",
            answered_s, json ? json + 4 : reply);
    ck_assert_msg(strncmp(reply, "HTTP/1.1 503", 12) == 0 && doc, "[%s]", reply);
    ck_assert_msg(json_int(doc, "applied") == 600 && json_int(doc, "settled_through_line") == 600,
                  "%s", json + 4);
    cJSON_Delete(doc);
    /* the stop's 5 s for the requests in work are not waited out */
    ck_assert_msg(answered_s < 4.0, "answered %.2f s after SIGTERM", answered_s);
}
END_TEST

/* A Redis that became a replica (a failover) answers writes READONLY: 503 primary_changed,
 * not "retry shortly" (before: 503 redis_unavailable); reads go on. */
START_TEST(test_readonly_is_primary_changed)
{
    start_with(NULL);
    http_expect_free(p_port, "POST", "/boards/ro/scores", "{\"id\":\"a\",\"score\":1}", 200);
    freeReplyObject(redis_admin_cmd(p_admin, "REPLICAOF 127.0.0.1 1")); /* nobody there */
    struct http_result r;
    http_expect(p_port, "POST", "/boards/ro/scores", "{\"id\":\"b\",\"score\":2}", 503, &r);
    ck_assert_msg(strcmp(http_error_code(&r), "primary_changed") == 0, "%s", r.body);
    http_result_free(&r);
    http_expect_free(p_port, "GET", "/boards/ro/members/a", NULL, 200);
    freeReplyObject(redis_admin_cmd(p_admin, "REPLICAOF NO ONE"));
    http_expect_free(p_port, "POST", "/boards/ro/scores", "{\"id\":\"b\",\"score\":2}", 200);
}
END_TEST

/* ---------------------------------------------------------------- 4. recovery */

START_TEST(test_recovery_within_100ms_of_redis)
{
    start_with(NULL);
    http_expect_free(p_port, "PUT", "/boards/rv", "{\"page_ttl_ms\":0}", 201);
    http_expect_free(p_port, "POST", "/boards/rv/scores", "{\"id\":\"a\",\"score\":1}", 200);
    redis_proc_stop(&p_redis);
    /* long enough down for every back-off to reach its longest step */
    double until = now_s() + 2.0;
    while (now_s() < until) {
        struct http_result r;
        ck_assert_int_eq(http_get(p_port, "/boards/rv/members/a", &r), 0);
        ck_assert_int_eq(r.status, 503);
        http_result_free(&r);
        sleep_ms(20);
    }
    ck_assert_int_eq(redis_proc_restart(&p_redis), 0);
    redisFree(p_admin);
    p_admin = redis_admin(p_redis.port); /* Redis answers from here on */
    double up = now_s(), first_ok = 0;
    int reads = 0, writes = 0;
    while (!first_ok && now_s() < up + 3.0) {
        struct http_result r;
        const char *body = "{\"id\":\"b\",\"score\":2}";
        ck_assert_int_eq(
            http_req(p_port, "POST", "/boards/rv/scores", body, strlen(body), NULL, TEST_TOKEN, &r),
            0);
        writes += r.status == 200;
        http_result_free(&r);
        ck_assert_int_eq(http_get(p_port, "/boards/rv/members/b", &r), 0);
        reads += r.status == 200;
        if (reads && writes)
            first_ok = now_s();
        http_result_free(&r);
        sleep_ms(5);
    }
    fprintf(stderr, "path: Redis back: reads and writes served again after %.3f s\n",
            first_ok - up);
    ck_assert_msg(first_ok && first_ok - up < 0.35,
                  "reads and writes came back %.3f s after Redis answered (goal about 0.1 s)",
                  first_ok ? first_ok - up : -1.0);
}
END_TEST

/* ---------------------------------------------------------------- 5. while the connection dials */

static void one_thread_long_timeouts(struct config *cfg)
{
    cfg->http_threads = 1;
    cfg->redis_timeout_ms = 3000;
    cfg->request_timeout_ms = 3000;
}

/* Clients connected to this Redis, but for the test's own admin connection. */
static int redis_clients(void)
{
    redisReply *r = redis_admin_cmd(p_admin, "CLIENT LIST");
    int n = 0;
    for (const char *at = r->str; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
        n += *at != '\0';
    freeReplyObject(r);
    return n - 1;
}

/* Requests that arrive while the event thread's first dial is still under way (Redis stopped
 * between accepting the connection and answering the dial's SCRIPT LOAD) wait for that dial
 * within their deadline and are answered on the event thread: 200, never a 503 for "not
 * connected yet", and Redis sees only the event thread's two connections. (Before: each went
 * to a worker thread, which dialled a blocking pool connection of its own: 7 or 8 in all.) */
START_TEST(test_requests_wait_for_the_dial)
{
    fixture_load_board(
        p_admin, "rankd", "dd", 30,
        "order desc tiebreak first score_decimals 0 page_size 20 page_ttl_ms 0 gen 1");
    kill(p_redis.pid, SIGSTOP);
    p_app = rankd_test_start_with(p_redis.port, TEST_TOKEN, one_thread_long_timeouts, NULL);
    p_port = rankd_port(p_app);
    sleep_ms(150); /* the dial has connected and waits for SCRIPT LOAD */
    struct bg b[] = {
        {.method = "GET", .path = "/boards/dd/members/m000003"},
        {.method = "GET", .path = "/boards/dd/rank?page=2"},
        {.method = "GET", .path = "/boards/dd"},
        {.method = "GET", .path = "/boards"},
        {.method = "GET", .path = "/readyz"},
        {.path = "/boards/dd/scores", .body = "{\"id\":\"new\",\"score\":7}"},
        {.method = "PUT", .path = "/items/it", .body = "{\"name\":\"x\"}"},
    };
    enum { N = sizeof(b) / sizeof(b[0]) };
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(pthread_create(&b[i].t, NULL, bg_main, &b[i]), 0);
    sleep_ms(400);
    double cont = now_s();
    kill(p_redis.pid, SIGCONT);
    for (int i = 0; i < N; i++) {
        pthread_join(b[i].t, NULL);
        ck_assert_int_eq(b[i].rc, 0);
        fprintf(stderr, "path: %s during the dial: %ld after %.3f s\n", b[i].path, b[i].r.status,
                b[i].r.seconds);
        ck_assert_msg(b[i].r.status == 200 || b[i].r.status == 204,
                      "%s sent while the first dial ran -> %ld %s", b[i].path, b[i].r.status,
                      b[i].r.body);
        ck_assert_msg(b[i].r.seconds > 0.3, "%s answered after %.3f s, before Redis did", b[i].path,
                      b[i].r.seconds);
        http_result_free(&b[i].r);
    }
    ck_assert_msg(now_s() - cont < 1.0, "the requests came %.3f s after Redis answered",
                  now_s() - cont);
    int clients = redis_clients();
    fprintf(stderr, "path: Redis clients of rankd after the dial: %d\n", clients);
    ck_assert_msg(clients == 2, "rankd holds %d Redis connections; want the event thread's 2",
                  clients);
}
END_TEST

/* The control routes fail fast while Redis is down (503 redis_unavailable for a read and for a
 * write that was never sent) and come back within about 100 ms of Redis answering again. */
START_TEST(test_control_routes_down_and_back)
{
    start_with(NULL);
    http_expect_free(p_port, "PUT", "/boards/cr", "{\"page_size\":5}", 201);
    http_expect_free(p_port, "PUT", "/items/cr", "{\"name\":\"x\"}", 204);
    redis_proc_stop(&p_redis);
    static const char *const methods[] = {"GET", "PUT", "DELETE", "GET"};
    static const char *const paths[] = {"/boards/cr", "/items/cr", "/boards/cr/members/a",
                                        "/boards"};
    static const char *const bodies[] = {NULL, "{\"name\":\"y\"}", NULL, NULL};
    double until = now_s() + 1.5, worst = 0;
    while (now_s() < until) {
        for (int i = 0; i < 4; i++) {
            struct http_result r;
            http_expect(p_port, methods[i], paths[i], bodies[i], 503, &r);
            ck_assert_msg(strcmp(http_error_code(&r), "redis_unavailable") == 0, "%s %s: %s",
                          methods[i], paths[i], r.body);
            worst = r.seconds > worst ? r.seconds : worst;
            http_result_free(&r);
        }
        sleep_ms(20);
    }
    fprintf(stderr, "path: control routes with Redis down: 503 within %.4f s\n", worst);
    ck_assert_msg(worst < 0.25, "a control request took %.3f s to fail with Redis down", worst);
    ck_assert_int_eq(redis_proc_restart(&p_redis), 0);
    redisFree(p_admin);
    p_admin = redis_admin(p_redis.port); /* Redis answers from here on (empty: no persistence) */
    double up = now_s(), first_ok = 0;
    while (!first_ok && now_s() < up + 3.0) {
        struct http_result r, w;
        ck_assert_int_eq(http_get(p_port, "/boards", &r), 0);
        ck_assert_int_eq(
            http_req(p_port, "PUT", "/items/cr", "{\"name\":\"z\"}", 12, NULL, TEST_TOKEN, &w), 0);
        if (r.status == 200 && w.status == 204)
            first_ok = now_s();
        http_result_free(&r);
        http_result_free(&w);
        sleep_ms(5);
    }
    fprintf(stderr, "path: Redis back: control routes served again after %.3f s\n", first_ok - up);
    ck_assert_msg(first_ok && first_ok - up < 0.35,
                  "the control routes came back %.3f s after Redis answered (goal about 0.1 s)",
                  first_ok ? first_ok - up : -1.0);
}
END_TEST

Suite *path_suite(void)
{
    Suite *s = suite_create("request_path");
    TCase *tc = tcase_create("event_threads");
    tcase_add_checked_fixture(tc, path_setup, path_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_round_trips_per_request);
    tcase_add_test(tc, test_write_lost_after_sent_is_unknown);
    tcase_add_test(tc, test_idempotent_write_lost_after_sent);
    tcase_add_test(tc, test_request_deadline_below_command_timeout);
    tcase_add_test(tc, test_recovery_within_100ms_of_redis);
    tcase_add_test(tc, test_misses_during_write_pause);
    tcase_add_test(tc, test_cached_lookups_keep_the_deadline);
    tcase_add_test(tc, test_lock_wait_keeps_the_deadline);
    tcase_add_test(tc, test_read_cut_by_kill_is_retried);
    tcase_add_test(tc, test_killed_connections_under_incr_batches);
    tcase_add_test(tc, test_upload_cut_by_shutdown_says_how_far);
    tcase_add_test(tc, test_upload_answered_when_stopped);
    tcase_add_test(tc, test_paused_upload_answered_when_stopped);
    tcase_add_test(tc, test_readonly_is_primary_changed);
    tcase_add_test(tc, test_requests_wait_for_the_dial);
    tcase_add_test(tc, test_control_routes_down_and_back);
    suite_add_tcase(s, tc);
    return s;
}
