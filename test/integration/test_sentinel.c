/* test_sentinel.c -- rankd on a primary found through Redis Sentinel (redis-sentinel://): a
 * primary, a replica and three sentinels of scripts/sentinel-fixture.sh, started per test. A
 * failover (SENTINEL FAILOVER, and the primary killed): rankd follows the new primary without a
 * restart, both its connections of every event thread, and nothing fails but 503s. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "suites.h"

#define SCRIPT "scripts/sentinel-fixture.sh"

/* The set-up of one test: ports and pids as the script wrote them. */
struct sentinels {
    char dir[128];
    int primary, replica, sentinel[3];
    pid_t primary_pid;
};

static char g_url[256]; /* the URL tweak() gives rankd */
static char g_dir[128]; /* the set-up to stop when the test's process ends, passed or not */

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
    ck_assert(f && fscanf(f, "%d", &pid) == 1);
    fclose(f);
    s->primary_pid = pid;
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
 * lost. */
static void follow(int kill_primary)
{
    struct sentinels s;
    sentinels_start(&s);
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
    int64_t recovered = load_wait_writes(&l, 20, 10000);
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
     * replication; a forced failover does not stop writes first) */
    int lost = load_check(&l, kill_primary ? "sentinel, primary killed" : "sentinel failover",
                          admin, 0, t0 - 1000, switched + 2000);
    int64_t last_503 = atomic_load(&l.last_503_ms);
    fprintf(stderr, "sentinel: last 503 %.1f s after the start, %d write(s) lost\n",
            last_503 ? (double)(last_503 - t0) / 1000 : 0.0, lost);
    ck_assert_msg(!last_503 || last_503 <= switched + 2000, "503s went on %.1f s after the switch",
                  (double)(last_503 - switched) / 1000);
    redisFree(admin);
    rankd_stop(app);
    sentinels_stop(&s);
}

START_TEST(test_sentinel_failover)
{
    follow(0);
}
END_TEST

START_TEST(test_sentinel_primary_killed)
{
    follow(1);
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
    return s;
}
