/* test_sentinel.c -- rankd on a primary found through Redis Sentinel (redis-sentinel://): a
 * primary, a replica and three sentinels of scripts/sentinel-fixture.sh, started per test. A
 * failover (SENTINEL FAILOVER, and the primary killed): rankd follows the new primary without a
 * restart, both its connections of every event thread, and nothing fails but 503s. With
 * --write-replicas 1 (WAIT, one per flush): every 200 is on the replica, a stopped replica makes
 * writes 503 write_not_replicated, many writes share one WAIT, and a forced failover loses no
 * acknowledged write. And what the sentinels' review found, on sentinels the test plays itself
 * (fake_resp.h): a sentinel naming a replica or a dead address is passed over in the same dial,
 * a stopped watched sentinel does not hide a failover, a dial that ended after the primary moved
 * is dialled again, the move is judged before the fail-fast of an unanswering connection, and a
 * READONLY in any reply of a group moves rankd. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_resp.h"
#include "load.h"
#include "suites.h"

#define SCRIPT "scripts/sentinel-fixture.sh"

/* The set-up of one test: ports and pids as the script wrote them. */
struct sentinels {
    char dir[128];
    int primary, replica, sentinel[3];
    pid_t primary_pid, replica_pid, sentinel_pid[3];
};

static char g_url[256];      /* the URL tweak() gives rankd */
static int g_write_replicas; /* and --write-replicas */
static int g_http_threads;   /* and --http-threads (0: the test default) */
static char g_dir[128];      /* the set-up to stop when the test's process ends, passed or not */

static int run_script(const char *verb, const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(SCRIPT, SCRIPT, verb, dir, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        ;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* atexit: a failed assertion ends the test's process before its own stop (Check's fork mode) */
static void stop_at_exit(void)
{
    if (g_dir[0])
        run_script("stop", g_dir);
}

static void sentinels_start(struct sentinels *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->dir, sizeof(s->dir), "/tmp/rankd-sentinel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    snprintf(g_dir, sizeof(g_dir), "%s", s->dir);
    atexit(stop_at_exit);
    ck_assert_msg(run_script("start", s->dir) == 0, "%s start %s failed", SCRIPT, s->dir);
    char path[200];
    snprintf(path, sizeof(path), "%s/ports", s->dir);
    FILE *f = fopen(path, "r");
    int pid = 0;
    ck_assert(f && fscanf(f, "%d %d %d %d %d", &s->primary, &s->replica, &s->sentinel[0],
                          &s->sentinel[1], &s->sentinel[2]) == 5);
    fclose(f);
    snprintf(path, sizeof(path), "%s/pids", s->dir);
    f = fopen(path, "r");
    int rp = 0, sp[3] = {0};
    ck_assert(f && fscanf(f, "%d %d %d %d %d", &pid, &rp, &sp[0], &sp[1], &sp[2]) == 5);
    fclose(f);
    s->primary_pid = pid;
    s->replica_pid = rp;
    for (int i = 0; i < 3; i++)
        s->sentinel_pid[i] = sp[i];
    snprintf(g_url, sizeof(g_url),
             "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/mymaster", s->sentinel[0],
             s->sentinel[1], s->sentinel[2]);
}

static void sentinels_stop(struct sentinels *s)
{
    run_script("stop", s->dir);
    g_dir[0] = '\0';
}

static void tweak(struct config *cfg)
{
    ck_assert_int_eq(config_parse_redis_url(g_url, &cfg->redis), 0);
    cfg->write_replicas = g_write_replicas;
    if (g_http_threads)
        cfg->http_threads = g_http_threads;
}

/* The primary's port as sentinel 0 says now. */
static int primary_now(const struct sentinels *s)
{
    redisContext *c = redis_admin(s->sentinel[0]);
    redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name mymaster");
    int port = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? atoi(r->element[1]->str) : 0;
    freeReplyObject(r);
    redisFree(c);
    return port;
}

/* Connections to `port` from rankd: normal clients but the sentinels' and this one. */
static int rankd_connections(int port)
{
    redisContext *c = redis_admin(port);
    redisReply *id = redisCommand(c, "CLIENT ID");
    redisReply *r = redisCommand(c, "CLIENT LIST TYPE normal");
    int n = 0;
    char self[32];
    snprintf(self, sizeof(self), "id=%lld ", id ? id->integer : -1);
    for (const char *line = r && r->type == REDIS_REPLY_STRING ? r->str : ""; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int mine = strncmp(line, self, strlen(self)) == 0;
        int sentinel = memmem(line, len, "name=sentinel-", 14) != NULL;
        n += !mine && !sentinel && len > 0;
        line += len + (end ? 1 : 0);
    }
    freeReplyObject(id);
    freeReplyObject(r);
    redisFree(c);
    return n;
}

/* rankd on the sentinels' primary, a board, a writer and a reader; then `move` (the failover),
 * and the checks: the sentinels name the replica, rankd writes to it and leaves the old primary,
 * its 503s end within 2 s of the switch, no write acknowledged outside the switch's window is
 * lost. With `write_replicas` (a forced failover only): no acknowledged write is lost at all,
 * and writes go on once the old primary is the new one's replica (the sentinels make it one in
 * about 11 s; 503 write_not_replicated meanwhile). */
static void follow(int kill_primary, int write_replicas)
{
    struct sentinels s;
    sentinels_start(&s);
    g_write_replicas = write_replicas;
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    load_board(port, "sen");
    ck_assert_int_gt(rankd_connections(s.primary), 0);
    static struct load l;
    memset(&l, 0, sizeof(l));
    l.port = port;
    l.board = "sen";
    l.retry_ms = 20000;
    pthread_t th[2];
    load_start(&l, th);
    usleep(300000);
    int64_t t0 = util_now_ms();
    if (kill_primary) {
        ck_assert_int_eq(kill(s.primary_pid, SIGKILL), 0);
    } else {
        redisContext *c = redis_admin(s.sentinel[0]);
        redisReply *r = redisCommand(c, "SENTINEL FAILOVER mymaster");
        ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "SENTINEL FAILOVER: %s",
                      r && r->str ? r->str : "-");
        freeReplyObject(r);
        redisFree(c);
    }
    int64_t switched = 0;
    while (!switched && util_now_ms() - t0 < 30000) {
        usleep(50000);
        if (primary_now(&s) == s.replica)
            switched = util_now_ms();
    }
    ck_assert_msg(switched, "the sentinels named no new primary in 30 s");
    int w = l.written;
    int64_t recovered = load_wait_writes(&l, 20, write_replicas ? 30000 : 10000);
    int left = kill_primary ? 0 : -1;
    for (int i = 0; !kill_primary && i < 40 && (left = rankd_connections(s.primary)) > 0; i++)
        usleep(50000);
    load_stop(&l, th);
    fprintf(stderr,
            "sentinel: %s: the replica named primary after %.1f s, 20 more writes by %.1f s; "
            "rankd's connections left on the old primary: %d\n",
            kill_primary ? "primary killed" : "SENTINEL FAILOVER", (double)(switched - t0) / 1000,
            (double)(recovered - t0) / 1000, left);
    ck_assert_msg(l.written >= w + 20, "rankd did not follow: %d writes after the switch",
                  l.written - w);
    ck_assert_msg(left <= 0, "rankd keeps %d connections to the old primary", left);
    redisContext *admin = redis_admin(s.replica);
    /* what the old primary acknowledged while the switch went on may be gone (asynchronous
     * replication; a forced failover does not stop writes first); with --write-replicas every
     * acknowledged write was on the replica that took over: none is */
    int lost =
        load_check(&l,
                   kill_primary     ? "sentinel, primary killed"
                   : write_replicas ? "sentinel failover, --write-replicas 1"
                                    : "sentinel failover",
                   admin, 0, write_replicas ? 0 : t0 - 1000, write_replicas ? 0 : switched + 2000);
    int64_t last_503 = atomic_load(&l.last_503_ms);
    fprintf(stderr, "sentinel: last 503 %.1f s after the start, %d write(s) lost\n",
            last_503 ? (double)(last_503 - t0) / 1000 : 0.0, lost);
    ck_assert_msg(write_replicas || !last_503 || last_503 <= switched + 2000,
                  "503s went on %.1f s after the switch", (double)(last_503 - switched) / 1000);
    redisFree(admin);
    rankd_stop(app);
    sentinels_stop(&s);
}

START_TEST(test_sentinel_failover)
{
    follow(0, 0);
}
END_TEST

START_TEST(test_sentinel_primary_killed)
{
    follow(1, 0);
}
END_TEST

START_TEST(test_sentinel_failover_write_replicas)
{
    follow(0, 1);
}
END_TEST

/* ---------------------------------------------------------------- --write-replicas */

/* 1 when `port` holds member `id` of board `board`. */
static int held(int port, const char *board, const char *id)
{
    redisContext *c = redis_admin(port);
    redisReply *r = redisCommand(c, "ZSCORE rankd:{%s}:z %s", board, id);
    int there = r && r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    redisFree(c);
    return there;
}

/* The calls of command `cmd` in INFO commandstats of `port`. */
static long long cmd_calls(int port, const char *cmd)
{
    redisContext *c = redis_admin(port);
    char field[64];
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", cmd);
    long long n = redis_info_field(c, "commandstats", field);
    redisFree(c);
    return n < 0 ? 0 : n;
}

static void post(int port, const char *body, const char *const *headers, struct http_result *r)
{
    ck_assert_int_eq(http_req_h(port, "POST", "/boards/w/scores", body, strlen(body), NULL,
                                TEST_TOKEN, headers, r),
                     0);
}

static void post_ok(int port, const char *body)
{
    struct http_result r;
    post(port, body, NULL, &r);
    ck_assert_msg(r.status == 200, "%s -> %ld %s", body, r.status, r.body);
    http_result_free(&r);
}

/* --write-replicas 1: a 200 means the replica holds the write; a replica that does not answer
 * makes a write 503 write_not_replicated (applied on the primary, never "retry"), in half the
 * command timeout; a script that wrote nothing keeps its own 4xx; a settings change or a delete
 * waits too; an idempotent write sent again with its key is a replay that waits for the
 * replica like the first (from another process, whose connection never wrote); back to 200s
 * once the replica answers. */
START_TEST(test_sentinel_write_replicas_wait)
{
    struct sentinels s;
    sentinels_start(&s);
    g_write_replicas = 1;
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    struct http_result r;
    ck_assert_int_eq(http_write(port, "PUT", "/boards/w", "{\"order\":\"desc\"}", &r), 0);
    ck_assert_int_eq(r.status / 100, 2);
    http_result_free(&r);
    for (int i = 0; i < 20; i++) { /* each 200 is on the replica already, read at once */
        char body[96], id[32];
        snprintf(id, sizeof(id), "r%d", i);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"set\"}", id, i);
        post_ok(port, body);
        ck_assert_msg(held(s.replica, "w", id), "%s acknowledged, not on the replica", id);
    }
    post_ok(port, "{\"id\":\"big\",\"score\":4294967000,\"op\":\"set\"}");
    ck_assert_int_eq(kill(s.replica_pid, SIGSTOP), 0); /* the replica stops acknowledging */
    /* a write the script refuses (its result would leave the range) wrote nothing: 422, not
     * "applied on the primary", whatever WAIT says */
    post(port, "{\"id\":\"big\",\"score\":4294967000,\"op\":\"incr\"}", NULL, &r);
    ck_assert_int_eq(r.status, 422);
    ck_assert_str_eq(http_error_code(&r), "score_out_of_range");
    http_result_free(&r);
    post(port, "{\"id\":\"lost\",\"score\":9,\"op\":\"set\"}", NULL, &r);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    ck_assert_double_lt(r.seconds, 1.0); /* WAIT gives up at half the 1 s command timeout */
    ck_assert_ptr_nonnull(strstr(r.headers, "Retry-After: 1"));
    ck_assert_ptr_nonnull(strstr(r.body, "applied on the primary"));
    ck_assert_ptr_null(strstr(r.body, "Idempotency-Key")); /* none was sent */
    http_result_free(&r);
    ck_assert(held(s.primary, "w", "lost")); /* applied on the primary all the same */
    /* the control writes wait too: a member's delete, a settings change */
    ck_assert_int_eq(http_write(port, "DELETE", "/boards/w/members/r0", NULL, &r), 0);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    http_result_free(&r);
    ck_assert(!held(s.primary, "w", "r0"));
    ck_assert_int_eq(http_write(port, "PUT", "/boards/w", "{\"page_size\":30}", &r), 0);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    http_result_free(&r);
    /* with a key: the message says to send it again with it; sent again from another process
     * (a connection that never wrote, where a WAIT alone would pass at once), the replay still
     * waits for the replica: write.lua's replay writes (the record's TTL) */
    static const char *const key[] = {"Idempotency-Key: wr-1", NULL};
    const char *incr = "{\"id\":\"k\",\"score\":5,\"op\":\"incr\"}";
    post(port, incr, key, &r);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    ck_assert_ptr_nonnull(strstr(r.body, "same key"));
    http_result_free(&r);
    struct rankd *other = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port2 = rankd_port(other);
    post(port2, incr, key, &r);
    ck_assert_msg(r.status == 503, "a replay with the replica stopped: %ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    http_result_free(&r);
    ck_assert_int_eq(kill(s.replica_pid, SIGCONT), 0);
    post(port2, incr, key, &r); /* the replica back: the replay, applied once */
    ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
    ck_assert_ptr_nonnull(strstr(r.headers, "Idempotent-Replayed: true"));
    http_result_free(&r);
    ck_assert_int_eq(http_get(port2, "/boards/w/members/k", &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "\"score\":5,"));
    http_result_free(&r);
    ck_assert(held(s.replica, "w", "k"));
    post_ok(port, "{\"id\":\"back\",\"score\":3,\"op\":\"set\"}");
    ck_assert(held(s.replica, "w", "back"));
    rankd_stop(other);
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* 64 writers on one event thread: their writes share WAITs (one per flush, at most one in flight
 * per connection), so Redis sees far fewer WAITs than writes, where one WAIT a write would be
 * exactly as many; every write acknowledged is on the replica. */
#define SHARE_WRITERS 64
#define SHARE_EACH 15

struct share_writer {
    pthread_t th;
    int port, i, failed;
    long last_status;
};

static void *share_run(void *arg)
{
    struct share_writer *w = arg;
    for (int k = 0; k < SHARE_EACH; k++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"id\":\"s%d-%d\",\"score\":%d,\"op\":\"set\"}", w->i, k, k);
        struct http_result r;
        if (http_req(w->port, "POST", "/boards/w/scores", body, strlen(body), NULL, TEST_TOKEN,
                     &r) != 0 ||
            r.status != 200) {
            w->failed++;
            w->last_status = r.status;
        }
        http_result_free(&r);
    }
    return NULL;
}

START_TEST(test_sentinel_writes_share_waits)
{
    struct sentinels s;
    sentinels_start(&s);
    g_write_replicas = 1;
    g_http_threads = 1;
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    post_ok(port, "{\"id\":\"first\",\"score\":1,\"op\":\"set\"}"); /* the board, its view */
    long long waits0 = cmd_calls(s.primary, "wait"), evals0 = cmd_calls(s.primary, "evalsha");
    static struct share_writer w[SHARE_WRITERS];
    for (int i = 0; i < SHARE_WRITERS; i++) {
        w[i] = (struct share_writer){.port = port, .i = i};
        ck_assert_int_eq(pthread_create(&w[i].th, NULL, share_run, &w[i]), 0);
    }
    int failed = 0;
    for (int i = 0; i < SHARE_WRITERS; i++) {
        pthread_join(w[i].th, NULL);
        failed += w[i].failed;
    }
    long long waits = cmd_calls(s.primary, "wait") - waits0;
    long long evals = cmd_calls(s.primary, "evalsha") - evals0;
    int writes = SHARE_WRITERS * SHARE_EACH;
    fprintf(stderr,
            "sentinel: %d concurrent writes on one event thread: %lld write.lua calls, "
            "%lld WAITs\n",
            writes, evals, waits);
    ck_assert_msg(failed == 0, "%d writes were not 200", failed);
    ck_assert_int_ge(evals, writes);
    ck_assert_msg(waits > 0 && waits * 2 <= writes, "%lld WAITs for %d writes", waits, writes);
    for (int i = 0; i < SHARE_WRITERS; i++) {
        char id[32];
        snprintf(id, sizeof(id), "s%d-%d", i, SHARE_EACH - 1);
        ck_assert_msg(held(s.replica, "w", id), "%s acknowledged, not on the replica", id);
    }
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* ---------------------------------------------------------- the review's, on fake sentinels */

/* A sentinel the test plays: it names `port` (host 127.0.0.1) for any master, after `delay_ms`;
 * SUBSCRIBE and PING are answered as a sentinel does. */
struct fake_sentinel {
    struct fake_resp f;
    atomic_int port, delay_ms, asked;
};

static void sentinel_answer(struct fake_resp *f, int conn, int argc, char **argv)
{
    struct fake_sentinel *fs = f->arg;
    if (strcasecmp(argv[0], "SENTINEL") == 0 && argc >= 3) {
        atomic_fetch_add(&fs->asked, 1);
        char p[16]; /* the primary as it is when asked, answered after the delay */
        snprintf(p, sizeof(p), "%d", atomic_load(&fs->port));
        int delay = atomic_load(&fs->delay_ms);
        if (delay > 0)
            usleep((useconds_t)delay * 1000);
        fake_resp_replyf(f, conn, "*2\r\n$9\r\n127.0.0.1\r\n$%zu\r\n%s\r\n", strlen(p), p);
    } else if (strcasecmp(argv[0], "SUBSCRIBE") == 0 && argc == 2) {
        fake_resp_subscribe(f, conn);
        fake_resp_replyf(f, conn, "*3\r\n$9\r\nsubscribe\r\n$%zu\r\n%s\r\n:1\r\n", strlen(argv[1]),
                         argv[1]);
    } else if (strcasecmp(argv[0], "PING") == 0) {
        fake_resp_replyf(f, conn,
                         f->subscribed[conn] ? "*2\r\n$4\r\npong\r\n$0\r\n\r\n" : "+PONG\r\n");
    } else {
        fake_resp_replyf(f, conn, "-ERR unknown command\r\n");
    }
}

static void fake_sentinel_start(struct fake_sentinel *fs, int names)
{
    atomic_init(&fs->port, names);
    atomic_init(&fs->delay_ms, 0);
    atomic_init(&fs->asked, 0);
    ck_assert_int_eq(fake_resp_start(&fs->f, sentinel_answer, fs), 0);
}

/* Publish +switch-master of mymaster from `from` to `to` (ports on 127.0.0.1), naming `to`
 * from now on. */
static void fake_switch(struct fake_sentinel *fs, int from, int to)
{
    atomic_store(&fs->port, to);
    char msg[128];
    snprintf(msg, sizeof(msg), "mymaster 127.0.0.1 %d 127.0.0.1 %d", from, to);
    fake_resp_publish(&fs->f, "+switch-master", msg);
}

/* A port nothing listens on (bound, then closed). */
static int dead_port(void)
{
    struct fake_resp f;
    ck_assert_int_eq(fake_resp_start(&f, sentinel_answer, NULL), 0);
    int port = f.port;
    fake_resp_stop(&f);
    return port;
}

/* The first sentinel of the list names the replica (then an address nothing listens on): a
 * dial passes it over for the next sentinel, in the same dial, and writes go to the primary
 * (before the fix the dial gave up on it, and asked it first again: rankd was pinned to it, all
 * 503s). */
static void passed_over(int names_replica)
{
    struct sentinels s;
    sentinels_start(&s);
    struct fake_sentinel fs;
    fake_sentinel_start(&fs, names_replica ? s.replica : dead_port());
    snprintf(g_url, sizeof(g_url),
             "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/mymaster", fs.f.port,
             s.sentinel[0], s.sentinel[1]);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    for (int i = 0; i < 10; i++) {
        char body[96], id[32];
        snprintf(id, sizeof(id), "p%d", i);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"set\"}", id, i);
        post_ok(port, body);
        ck_assert(held(s.primary, "w", id));
    }
    ck_assert_int_gt(atomic_load(&fs.asked), 0); /* it was asked, and its answer passed over */
    rankd_stop(app);
    fake_resp_stop(&fs.f);
    sentinels_stop(&s);
}

START_TEST(test_sentinel_names_replica)
{
    passed_over(1);
}
END_TEST

START_TEST(test_sentinel_names_dead_address)
{
    passed_over(0);
}
END_TEST

/* The sentinel rankd watches (the first of the list) stops (SIGSTOP: its socket stays open,
 * nothing answers) and the others fail the primary over: rankd's watch hears nothing there, so
 * it must notice the silence (it PINGs), watch the next sentinel and see that the primary moved.
 * Writes reach the new primary within 5 s of the switch, and every 200 after that is on it
 * (before the fix
 * rankd wrote to the old primary, which kept acknowledging, until the sentinels demoted it some
 * 11 s later: every such write lost). */
START_TEST(test_sentinel_watched_stopped)
{
    struct sentinels s;
    sentinels_start(&s);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    post_ok(port, "{\"id\":\"a\",\"score\":1,\"op\":\"set\"}");
    usleep(300000); /* the watch subscribed */
    ck_assert_int_eq(kill(s.sentinel_pid[0], SIGSTOP), 0);
    redisContext *c = redis_admin(s.sentinel[1]);
    redisReply *r = redisCommand(c, "SENTINEL FAILOVER mymaster");
    ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "SENTINEL FAILOVER: %s",
                  r && r->str ? r->str : "-");
    freeReplyObject(r);
    redisFree(c);
    int64_t t0 = util_now_ms(), switched = 0, reached = 0;
    while (!switched && util_now_ms() - t0 < 20000) { /* s1 names the replica: promoted */
        usleep(20000);
        redisContext *q = redis_admin(s.sentinel[1]);
        redisReply *a = redisCommand(q, "SENTINEL get-master-addr-by-name mymaster");
        if (a && a->type == REDIS_REPLY_ARRAY && a->elements == 2 &&
            atoi(a->element[1]->str) == s.replica)
            switched = util_now_ms();
        freeReplyObject(a);
        redisFree(q);
    }
    ck_assert_msg(switched, "the sentinels named no new primary in 20 s");
    t0 = switched; /* from here a write on the new primary was written there, not replicated */
    int i = 0;
    for (; !reached && util_now_ms() - t0 < 8000; i++) {
        char body[96], id[32];
        snprintf(id, sizeof(id), "f%d", i);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"set\"}", id, i);
        struct http_result h;
        post(port, body, NULL, &h);
        if (h.status == 200 && held(s.replica, "w", id))
            reached = util_now_ms();
        http_result_free(&h);
        usleep(20000);
    }
    kill(s.sentinel_pid[0], SIGCONT);
    fprintf(stderr,
            "sentinel: watched sentinel stopped: writes on the new primary %.1f s after the "
            "switch\n",
            reached ? (double)(reached - t0) / 1000 : -1.0);
    ck_assert_msg(reached && reached - t0 <= 5000,
                  "no write reached the new primary within 5 s of the switch");
    for (int k = 0; k < 20; k++) { /* from then on, every 200 is on the new primary */
        char body[96], id[32];
        snprintf(id, sizeof(id), "after%d", k);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"set\"}", id, k);
        struct http_result h;
        post(port, body, NULL, &h);
        ck_assert_msg(h.status != 200 || held(s.replica, "w", id),
                      "%s: a 200 the new primary lacks", id);
        http_result_free(&h);
    }
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* Two plain Redis servers as the old and the new primary, and a fake sentinel naming a. */
struct two {
    struct redis_proc a, b;
    struct fake_sentinel fs;
    struct rankd *app;
    int port;
};

static void two_start(struct two *t)
{
    memset(t, 0, sizeof(*t));
    ck_assert_int_eq(redis_proc_start(&t->a), 0);
    ck_assert_int_eq(redis_proc_start(&t->b), 0);
    fake_sentinel_start(&t->fs, t->a.port);
    snprintf(g_url, sizeof(g_url), "redis-sentinel://127.0.0.1:%d/mymaster", t->fs.f.port);
    g_http_threads = 1;
    t->app = rankd_test_start_with(t->a.port, TEST_TOKEN, tweak, NULL);
    t->port = rankd_port(t->app);
    post_ok(t->port, "{\"id\":\"a\",\"score\":1,\"op\":\"set\"}");
    ck_assert(held(t->a.port, "w", "a"));
    usleep(200000); /* the watch subscribed to the fake */
}

static void two_stop(struct two *t)
{
    rankd_stop(t->app);
    fake_resp_stop(&t->fs.f);
    redis_proc_stop(&t->a);
    redis_proc_stop(&t->b);
}

struct later_post {
    pthread_t th;
    int port;
    const char *body;
    struct http_result r;
};

static void *later_run(void *arg)
{
    struct later_post *p = arg;
    post(p->port, p->body, NULL, &p->r);
    return NULL;
}

/* A dial asks the sentinel, which answers the old primary late; the primary moves (a
 * +switch-master) while it waits. The dial that ends then must not be used: it is dialled
 * again, the write held meanwhile goes to the new primary (before the fix the connection to
 * the old one was adopted, the write acknowledged there: lost). */
START_TEST(test_sentinel_dial_after_switch)
{
    struct two t;
    two_start(&t);
    redisContext *c = redis_admin(t.a.port);
    freeReplyObject(redisCommand(c, "CLIENT KILL TYPE normal")); /* rankd's: the next send dials */
    redisFree(c);
    usleep(100000);
    atomic_store(&t.fs.delay_ms, 500);
    struct later_post p = {.port = t.port, .body = "{\"id\":\"x\",\"score\":2,\"op\":\"set\"}"};
    ck_assert_int_eq(pthread_create(&p.th, NULL, later_run, &p), 0);
    usleep(200000); /* the dial waits for the sentinel's answer: a */
    atomic_store(&t.fs.delay_ms, 0);
    fake_switch(&t.fs, t.a.port, t.b.port);
    pthread_join(p.th, NULL);
    ck_assert_msg(p.r.status == 200, "%ld %s", p.r.status, p.r.body);
    http_result_free(&p.r);
    ck_assert_msg(!held(t.a.port, "w", "x"), "a write acknowledged on the old primary");
    ck_assert(held(t.b.port, "w", "x"));
    two_stop(&t);
}
END_TEST

/* The primary stops answering (SIGSTOP): a write times out, and sends fail fast from then on;
 * then the primary moves. The move is judged first: the next write is held for a dial to the
 * new primary and answered 200 there, not failed fast against the old one (before the fix it
 * was 503 for the 100 ms a busy old connection is given). */
START_TEST(test_sentinel_moved_before_fail_fast)
{
    struct two t;
    two_start(&t);
    ck_assert_int_eq(kill(t.a.pid, SIGSTOP), 0);
    struct http_result r;
    post(t.port, "{\"id\":\"stuck\",\"score\":2,\"op\":\"set\"}", NULL, &r);
    ck_assert_int_eq(r.status, 503); /* sent, unanswered */
    http_result_free(&r);
    fake_switch(&t.fs, t.a.port, t.b.port);
    usleep(50000); /* the watch heard it */
    post(t.port, "{\"id\":\"y\",\"score\":3,\"op\":\"set\"}", NULL, &r);
    kill(t.a.pid, SIGCONT);
    ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert(held(t.b.port, "w", "y"));
    two_stop(&t);
}
END_TEST

/* A node that answers the first command of a group READONLY and the others as they ask (a
 * group of five: /admin/redis's report): that READONLY moves rankd to the primary the
 * sentinel names now, like one in a group's last reply (before the fix only the last reply was
 * looked at, and rankd stayed). */
static void node_answer(struct fake_resp *f, int conn, int argc, char **argv)
{
    if (strcasecmp(argv[0], "ROLE") == 0)
        fake_resp_replyf(f, conn, "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
    else if (strcasecmp(argv[0], "SCRIPT") == 0 && argc == 3 && strcasecmp(argv[1], "LOAD") == 0)
        fake_resp_replyf(f, conn, "$40\r\n%040d\r\n", atomic_load(&f->served));
    else if (strcasecmp(argv[0], "INFO") == 0)
        fake_resp_replyf(f, conn, "-READONLY You can't write against a read only replica.\r\n");
    else if (strcasecmp(argv[0], "DBSIZE") == 0)
        fake_resp_replyf(f, conn, ":0\r\n");
    else if (strcasecmp(argv[0], "SLOWLOG") == 0 && argc == 2)
        fake_resp_replyf(f, conn, ":0\r\n");
    else if (strcasecmp(argv[0], "PING") == 0)
        fake_resp_replyf(f, conn, "+PONG\r\n");
    else
        fake_resp_replyf(f, conn, "*0\r\n");
    (void)argc;
}

START_TEST(test_sentinel_readonly_in_any_reply)
{
    struct fake_resp node;
    ck_assert_int_eq(fake_resp_start(&node, node_answer, NULL), 0);
    struct fake_sentinel fs;
    fake_sentinel_start(&fs, node.port);
    snprintf(g_url, sizeof(g_url), "redis-sentinel://127.0.0.1:%d/mymaster", fs.f.port);
    g_http_threads = 1;
    struct rankd *app = rankd_test_start_with(node.port, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    struct http_result r;
    ck_assert_int_eq(http_req(port, "GET", "/admin/redis", NULL, 0, NULL, TEST_TOKEN, &r), 0);
    http_result_free(&r);
    usleep(100000);
    int asked = atomic_load(&fs.asked);
    ck_assert_int_eq(http_req(port, "GET", "/admin/redis", NULL, 0, NULL, TEST_TOKEN, &r), 0);
    http_result_free(&r);
    ck_assert_msg(atomic_load(&fs.asked) > asked,
                  "a READONLY in a group's first reply: rankd did not ask the sentinel again");
    rankd_stop(app);
    fake_resp_stop(&fs.f);
    fake_resp_stop(&node);
}
END_TEST

Suite *sentinel_suite(void)
{
    Suite *s = suite_create("sentinel");
    TCase *tc = tcase_create("failover");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sentinel_failover);
    suite_add_tcase(s, tc);
    tc = tcase_create("primary_killed");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sentinel_primary_killed);
    suite_add_tcase(s, tc);
    const struct {
        const char *name;
        const TTest *test;
        int timeout_s;
    } more[] = {
        {"failover_write_replicas", test_sentinel_failover_write_replicas, 90},
        {"write_replicas_wait", test_sentinel_write_replicas_wait, 60},
        {"writes_share_waits", test_sentinel_writes_share_waits, 60},
        {"names_replica", test_sentinel_names_replica, 60},
        {"names_dead_address", test_sentinel_names_dead_address, 60},
        {"watched_stopped", test_sentinel_watched_stopped, 60},
        {"dial_after_switch", test_sentinel_dial_after_switch, 30},
        {"moved_before_fail_fast", test_sentinel_moved_before_fail_fast, 30},
        {"readonly_in_any_reply", test_sentinel_readonly_in_any_reply, 30},
    };
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
        tc = tcase_create(more[i].name);
        tcase_set_timeout(tc, more[i].timeout_s);
        tcase_add_test(tc, more[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
