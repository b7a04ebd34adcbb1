/* test_sentinel.c -- rankd on a primary found through Redis Sentinel (redis-sentinel://): a
 * primary, a replica and three sentinels of scripts/sentinel-fixture.sh, started per test. A
 * failover (SENTINEL FAILOVER, and the primary killed): rankd follows the new primary without a
 * restart, both its connections of every event thread, and nothing fails but 503s. With
 * --write-replicas 1 (WAIT, one per flush): every 200 is on the replica, a stopped replica makes
 * writes 503 write_not_replicated, many writes share one WAIT, and a forced failover loses no
 * acknowledged write. And what the sentinels' review found, on real servers as well (one more
 * sentinel of its own, scripts/sentinel-fixture.sh extra; plain redis-servers): a sentinel
 * naming a replica or a dead address is passed over in the same dial, a stopped watched
 * sentinel does not hide a failover, a dial that ended after the primary moved is dialled
 * again, the move is judged before the fail-fast of an unanswering connection, and a READONLY
 * in any reply of a group moves rankd. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "store_sentinel.h"
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
static int g_timeout_ms;     /* and --redis-timeout-ms, --request-timeout-ms (0: the defaults) */

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

/* The set-up in `dir` is stopped when the test's process ends, passed or not. An atexit
 * handler would not do: a failed assertion ends the process with _exit (Check's fork mode) and
 * a timeout with SIGKILL (of its process group). So a process of its own (its own session)
 * waits for the end of a pipe that only the test's process holds (close-on-exec: no server
 * inherits it), then runs `SCRIPT stop dir`; unless told first, by a byte, that the test
 * stopped it itself (guard_done). */
static int g_guard = -1;
static pid_t g_guard_pid;

static void guard_start(const char *dir)
{
    int p[2];
    ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setsid();
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[0])
                close(fd);
        char c;
        ssize_t n;
        while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
            ;
        if (n == 0)
            execl(SCRIPT, SCRIPT, "stop", dir, (char *)NULL);
        _exit(0);
    }
    close(p[0]);
    g_guard = p[1];
    g_guard_pid = pid;
}

/* The test stopped its set-up: the guard ends without stopping anything. */
static void guard_done(void)
{
    if (g_guard < 0)
        return;
    if (write(g_guard, "x", 1) != 1)
        perror("sentinel guard");
    close(g_guard);
    g_guard = -1;
    waitpid(g_guard_pid, NULL, 0);
}

static void sentinels_start(struct sentinels *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->dir, sizeof(s->dir), "/tmp/rankd-sentinel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    guard_start(s->dir);
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
    guard_done();
}

static void tweak(struct config *cfg)
{
    ck_assert_int_eq(config_parse_redis_url(g_url, &cfg->redis), 0);
    cfg->write_replicas = g_write_replicas;
    if (g_http_threads)
        cfg->http_threads = g_http_threads;
    if (g_timeout_ms)
        cfg->redis_timeout_ms = cfg->request_timeout_ms = g_timeout_ms;
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
    /* The contract here is that concurrent writes share their WAITs, not how fast a replica
     * acknowledges: a WAIT of half the default 1 s Redis timeout was missed by a replica on a
     * machine at load 20 (9 of 960 writes answered 503 write_not_replicated), so the replica gets
     * 5 s (WAIT timeout / 2) here. */
    g_timeout_ms = 10000;
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
    long last = 0;
    for (int i = 0; i < SHARE_WRITERS; i++)
        if (w[i].failed)
            last = w[i].last_status;
    ck_assert_msg(failed == 0, "%d writes were not 200 (one: %ld)", failed, last);
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

/* ------------------------------------------------- the review's, on more real servers */

/* One more server in the set-up's directory (scripts/sentinel-fixture.sh `verb` DIR NAME ARG:
 * "extra", a sentinel of its own that names 127.0.0.1:ARG as mymaster; "redis", a plain
 * redis-server, ARG its configuration file or NULL), stopped with the set-up: its port. */
static int more_server(const char *dir, const char *verb, const char *name, const char *arg)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(SCRIPT, SCRIPT, verb, dir, name, arg, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        ;
    ck_assert_msg(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s %s %s %s failed", SCRIPT,
                  verb, dir, name);
    char path[200];
    snprintf(path, sizeof(path), "%s/%s/port", dir, name);
    FILE *f = fopen(path, "r");
    int port = 0;
    ck_assert(f && fscanf(f, "%d", &port) == 1);
    fclose(f);
    return port;
}

/* A sentinel of its own naming 127.0.0.1:`names` for the whole test (scripts/sentinel-fixture.sh
 * extra: quorum 1, down-after-milliseconds 600000, so it never fails that address over). */
static int extra_sentinel(const char *dir, const char *name, int names)
{
    char port[16];
    snprintf(port, sizeof(port), "%d", names);
    return more_server(dir, "extra", name, port);
}

/* The primary's port as the sentinel on `port` names it now (0: none). */
static int names_now(int port)
{
    redisContext *c = redis_admin(port);
    redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name mymaster");
    int p = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? atoi(r->element[1]->str) : 0;
    freeReplyObject(r);
    redisFree(c);
    return p;
}

/* A loopback port nothing listens on for as long as *fd is open: bound, never listening (a
 * connection to it is refused), so no other process takes it meanwhile. */
static int closed_port(int *fd)
{
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(*fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

/* The first sentinel of the list, a real one of its own (scripts/sentinel-fixture.sh extra),
 * names the replica (ROLE: a replica), or an address nothing listens on; the fixture's real
 * sentinels follow it. A dial passes it over for the next sentinel, in the same dial, and
 * writes go to the primary (before the fix the dial gave up on it and asked it first again:
 * rankd was pinned to it, every write 503). */
static void passed_over(int names_replica)
{
    struct sentinels s;
    sentinels_start(&s);
    int hold = -1;
    int target = names_replica ? s.replica : closed_port(&hold);
    int x = extra_sentinel(s.dir, "x", target);
    ck_assert_int_eq(names_now(x), target);
    snprintf(g_url, sizeof(g_url),
             "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/mymaster", x, s.sentinel[0],
             s.sentinel[1]);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    for (int i = 0; i < 10; i++) {
        char body[96], id[32];
        snprintf(id, sizeof(id), "p%d", i);
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"op\":\"set\"}", id, i);
        post_ok(port, body);
        ck_assert(held(s.primary, "w", id));
    }
    /* the first sentinel named it all along: its answer was passed over, every time */
    ck_assert_int_eq(names_now(x), target);
    ck_assert_int_eq(primary_now(&s), s.primary);
    rankd_stop(app);
    if (hold >= 0)
        close(hold);
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

/* SENTINEL FAILOVER of mymaster on the sentinel on `port`. */
static void force_failover(int port)
{
    redisContext *c = redis_admin(port);
    redisReply *r = redisCommand(c, "SENTINEL FAILOVER mymaster");
    ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "SENTINEL FAILOVER: %s",
                  r && r->str ? r->str : "-");
    freeReplyObject(r);
    redisFree(c);
}

/* Until rankd's primary epoch moves from `from` (its watch heard +switch-master): 1, or 0
 * after `ms`. */
static int epoch_moved(uint64_t from, int ms)
{
    int64_t t0 = util_now_ms();
    while (store_sentinel_epoch() == from && util_now_ms() - t0 < ms)
        usleep(2000);
    return store_sentinel_epoch() != from;
}

static int g_redis_timeout_ms, g_request_timeout_ms; /* the tests' own, when set */

static void tweak_slow(struct config *cfg)
{
    tweak(cfg);
    if (g_redis_timeout_ms)
        cfg->redis_timeout_ms = g_redis_timeout_ms;
    if (g_request_timeout_ms)
        cfg->request_timeout_ms = g_request_timeout_ms;
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

/* A dial that began before the primary moved and ended after it: the sentinels named the old
 * primary (then still the primary), which answers the dial only once the sentinels promoted
 * the replica and rankd's watch heard +switch-master (the old primary SIGSTOPped meanwhile:
 * the dial's ROLE waits, under a 12 s command timeout; then SIGCONT, and it says master, as it
 * does for some 8 s before the sentinels demote it). That dial must not be used: it is dialled
 * again, and the write held meanwhile lands on the new primary (before the fix the connection
 * to the old one was adopted and the write acknowledged there: lost). */
START_TEST(test_sentinel_dial_after_switch)
{
    struct sentinels s;
    sentinels_start(&s);
    g_http_threads = 1;
    g_redis_timeout_ms = 12000;
    g_request_timeout_ms = 25000;
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak_slow, NULL);
    int port = rankd_port(app);
    post_ok(port, "{\"id\":\"a\",\"score\":1,\"op\":\"set\"}");
    ck_assert(held(s.primary, "w", "a"));
    usleep(300000); /* the watch subscribed */
    redisContext *c = redis_admin(s.primary);
    freeReplyObject(redisCommand(c, "CLIENT KILL TYPE normal")); /* rankd's: the next send dials */
    redisFree(c);
    usleep(200000);
    uint64_t e0 = store_sentinel_epoch();
    ck_assert_int_eq(kill(s.primary_pid, SIGSTOP), 0);
    struct later_post p = {.port = port, .body = "{\"id\":\"x\",\"score\":2,\"op\":\"set\"}"};
    ck_assert_int_eq(pthread_create(&p.th, NULL, later_run, &p), 0);
    usleep(300000); /* the dial asked sentinel 0 (the primary, then) and waits for its ROLE */
    int64_t t0 = util_now_ms();
    force_failover(s.sentinel[0]);
    int heard = epoch_moved(e0, 10000);
    int64_t took = util_now_ms() - t0;
    int named = names_now(s.sentinel[0]);
    usleep(100000);
    kill(s.primary_pid, SIGCONT); /* the old dial's ROLE answered: "master" */
    pthread_join(p.th, NULL);
    fprintf(stderr,
            "sentinel: dial across the switch: +switch-master heard %.1f s after FAILOVER\n",
            (double)took / 1000);
    ck_assert_msg(heard, "rankd heard no switch within 10 s (the dial's ROLE waits 12 s)");
    ck_assert_int_eq(named, s.replica);
    ck_assert_msg(p.r.status == 200, "%ld %s", p.r.status, p.r.body);
    http_result_free(&p.r);
    ck_assert_msg(!held(s.primary, "w", "x"), "a write acknowledged on the old primary");
    ck_assert(held(s.replica, "w", "x"));
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* The primary stops answering (SIGSTOP): a write times out, and sends fail fast from then on;
 * then the sentinels promote the replica (SENTINEL FAILOVER on the watched one). The move is
 * judged first: the write sent as soon as rankd heard it (its primary epoch moved) is held for
 * a dial to the new primary and answered 200 there, not failed fast against the old one
 * (before the fix it was 503 for the 100 ms a busy old connection is given). */
START_TEST(test_sentinel_moved_before_fail_fast)
{
    struct sentinels s;
    sentinels_start(&s);
    g_http_threads = 1;
    /* a write given up at its request's 1 s, a connection dropped for silence only after two
     * 10 s command timeouts: still there, stale, when the failover ends */
    g_redis_timeout_ms = 10000;
    g_request_timeout_ms = 1000;
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak_slow, NULL);
    int port = rankd_port(app);
    post_ok(port, "{\"id\":\"a\",\"score\":1,\"op\":\"set\"}");
    usleep(300000); /* the watch subscribed */
    uint64_t e0 = store_sentinel_epoch();
    ck_assert_int_eq(kill(s.primary_pid, SIGSTOP), 0);
    struct http_result r;
    post(port, "{\"id\":\"stuck\",\"score\":2,\"op\":\"set\"}", NULL, &r);
    ck_assert_msg(r.status == 503, "sent, unanswered: %ld %s", r.status, r.body);
    http_result_free(&r);
    force_failover(s.sentinel[0]);
    int heard = epoch_moved(e0, 20000);
    if (heard)
        post(port, "{\"id\":\"y\",\"score\":3,\"op\":\"set\"}", NULL, &r);
    kill(s.primary_pid, SIGCONT);
    ck_assert_msg(heard, "rankd heard no switch within 20 s");
    ck_assert_msg(r.status == 200, "the first write after the move: %ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert(held(s.replica, "w", "y"));
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* READONLY in the first reply of a group of five (/admin/redis's report: INFO, SLOWLOG GET,
 * SLOWLOG LEN, LATENCY LATEST, DBSIZE) moves rankd to the primary the sentinel names now, as
 * one in a group's last reply does (before the fix only the last reply was looked at, and
 * rankd stayed). No group rankd sends has a write before its last command, so the servers
 * here make the report's first command one: two real redis-servers whose INFO is LPUSH
 * (rename-command LPUSH INFO; INFO itself renamed away), which a real replica refuses with
 * READONLY while it answers the other four. The sentinel (a real one) names a; then, behind
 * rankd's back, it names b (SENTINEL REMOVE and MONITOR: no +switch-master) and a becomes b's
 * replica (REPLICAOF). The report read from a must move rankd: the next write is 200 on b. */
START_TEST(test_sentinel_readonly_in_any_reply)
{
    char dir[128], conf[200];
    snprintf(dir, sizeof(dir), "/tmp/rankd-sentinel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    guard_start(dir);
    snprintf(conf, sizeof(conf), "%s/renamed.conf", dir);
    FILE *f = fopen(conf, "w");
    ck_assert_ptr_nonnull(f);
    fputs("save \"\"\nappendonly no\nrename-command INFO INFO-RENAMED\n"
          "rename-command LPUSH INFO\n",
          f);
    fclose(f);
    int a = more_server(dir, "redis", "a", conf), b = more_server(dir, "redis", "b", conf);
    int x = extra_sentinel(dir, "x", a);
    snprintf(g_url, sizeof(g_url), "redis-sentinel://127.0.0.1:%d/mymaster", x);
    g_http_threads = 1;
    struct rankd *app = rankd_test_start_with(a, TEST_TOKEN, tweak, NULL);
    int port = rankd_port(app);
    post_ok(port, "{\"id\":\"a\",\"score\":1,\"op\":\"set\"}");
    ck_assert(held(a, "w", "a"));
    usleep(300000); /* the watch subscribed */
    redisContext *c = redis_admin(x);
    freeReplyObject(redisCommand(c, "SENTINEL REMOVE mymaster"));
    redisReply *r = redisCommand(c, "SENTINEL MONITOR mymaster 127.0.0.1 %d 1", b);
    ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "SENTINEL MONITOR: %s",
                  r && r->str ? r->str : "-");
    freeReplyObject(r);
    freeReplyObject(redisCommand(c, "SENTINEL SET mymaster down-after-milliseconds 600000"));
    redisFree(c);
    ck_assert_int_eq(names_now(x), b);
    c = redis_admin(a);
    r = redisCommand(c, "REPLICAOF 127.0.0.1 %d", b);
    ck_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = redisCommand(c, "INFO server clients"); /* LPUSH: as rankd's report will find it */
    ck_assert_msg(r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "READONLY", 8) == 0,
                  "the report's first command on the replica: %s", r && r->str ? r->str : "-");
    freeReplyObject(r);
    redisFree(c);
    uint64_t e0 = store_sentinel_epoch();
    struct http_result h;
    ck_assert_int_eq(http_req(port, "GET", "/admin/redis", NULL, 0, NULL, TEST_TOKEN, &h), 0);
    http_result_free(&h);
    ck_assert_msg(store_sentinel_epoch() != e0,
                  "a READONLY in a group's first reply: rankd did not ask the sentinel again");
    post_ok(port, "{\"id\":\"after\",\"score\":2,\"op\":\"set\"}");
    ck_assert_msg(held(b, "w", "after"), "the write after the READONLY is not on b");
    rankd_stop(app);
    run_script("stop", dir);
    guard_done();
}
END_TEST

/* ------------------------------------------------- failovers under writers */

#define CHURN_WRITERS 16
#define CHURN_ROUNDS 24 /* failovers, one after the other (RANKD_CHURN_ROUNDS: another count) */
#define CHURN_REQUEST_MS 1000 /* rankd's --request-timeout-ms: every request's own deadline */
#define CHURN_SLACK_MS                                                                             \
    1000 /* what a reply may take past its deadline: the loop's turn to notice it, the reply's     \
          * write, the client's connect, on a loaded machine (2 cores shared, ASan) */
#define CHURN_IDS (1 << 17) /* writes one writer records at most */
#define CHURN_DEMOTE_MS                                                                            \
    1000 /* from the switch to the old primary's demotion (the sentinels take some 8 s): writes    \
          * on it meanwhile are not acknowledged by any replica, its WAITs time out */

/* One of the writers: POSTs c<i>-<k> (score k) to board "churn", one after the other, and
 * records what came back. Its acknowledged ids are acked[0..nacked) (atomic: the rounds read
 * them while it writes). */
struct churn_writer {
    pthread_t th;
    int port, i;
    atomic_int *stop;
    int *acked; /* k of each 200, in order */
    atomic_int nacked;
    int sent, ok, unavailable, other, no_answer, late;
    double slowest;
    long last_other;
    char other_body[200];
};

static void *churn_run(void *arg)
{
    struct churn_writer *w = arg;
    for (int k = 0; !atomic_load(w->stop); k++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"id\":\"c%d-%d\",\"score\":%d,\"op\":\"set\"}", w->i, k, k);
        struct http_result r;
        memset(&r, 0, sizeof(r));
        int rc = http_req(w->port, "POST", "/boards/churn/scores", body, strlen(body), NULL,
                          TEST_TOKEN, &r);
        w->sent++;
        if (r.seconds > w->slowest)
            w->slowest = r.seconds;
        if (r.seconds * 1000 > CHURN_REQUEST_MS + CHURN_SLACK_MS)
            w->late++;
        if (rc != 0) {
            w->no_answer++;
            usleep(20000); /* rankd gone: the round's check says so */
        } else if (r.status == 200) {
            int n = atomic_load(&w->nacked);
            if (n < CHURN_IDS) {
                w->acked[n] = k;
                atomic_store(&w->nacked, n + 1);
            }
            w->ok++;
        } else if (r.status == 503) {
            w->unavailable++;
        } else {
            w->other++;
            w->last_other = r.status;
            snprintf(w->other_body, sizeof(w->other_body), "%s", r.body ? r.body : "");
        }
        if (rc == 0)
            http_result_free(&r);
    }
    return NULL;
}

/* The acknowledged writes of writers w[0..n) from from[i] on (NULL: all) that `port` lacks
 * (ZMSCORE, 500 members a call); the first one missing in *missing. */
static int churn_missing(int port, struct churn_writer *w, int n, const int *from, char *missing,
                         size_t cap)
{
    redisContext *c = redis_admin(port);
    int lacking = 0;
    for (int i = 0; i < n; i++) {
        int end = atomic_load(&w[i].nacked);
        for (int at = from ? from[i] : 0; at < end;) {
            int m = end - at < 500 ? end - at : 500;
            const char *argv[502];
            size_t lens[502];
            static char ids[500][32];
            argv[0] = "ZMSCORE";
            argv[1] = "rankd:{churn}:z";
            lens[0] = 7;
            lens[1] = strlen(argv[1]);
            for (int j = 0; j < m; j++) {
                snprintf(ids[j], sizeof(ids[j]), "c%d-%d", i, w[i].acked[at + j]);
                argv[2 + j] = ids[j];
                lens[2 + j] = strlen(ids[j]);
            }
            redisReply *r = redisCommandArgv(c, m + 2, argv, lens);
            ck_assert_msg(r && r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)m,
                          "ZMSCORE on %d: %s", port, r && r->str ? r->str : "-");
            for (int j = 0; j < m; j++)
                if (r->element[j]->type != REDIS_REPLY_STRING && lacking++ == 0)
                    snprintf(missing, cap, "%s", ids[j]);
            freeReplyObject(r);
            at += m;
        }
    }
    redisFree(c);
    return lacking;
}

/* The writers' 200s so far. */
static int churn_acked(struct churn_writer *w, int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += atomic_load(&w[i].nacked);
    return sum;
}

/* rankd (a process of its own) gone: fail with how it ended and the end of its log. */
static void churn_alive(pid_t pid, const char *log, int round)
{
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) != pid)
        return;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "tail -n 60 %s >&2", log);
    if (system(cmd) != 0)
        fprintf(stderr, "(no log)\n");
    ck_abort_msg("rankd died in failover round %d: %s %d", round,
                 WIFSIGNALED(st) ? "signal" : "exit status",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* The sentinel on `port` names `primary`: 1, or 0 after `ms`. */
static int names_within(int port, int primary, int ms)
{
    int64_t t0 = util_now_ms();
    while (names_now(port) != primary) {
        if (util_now_ms() - t0 > ms)
            return 0;
        usleep(20000);
    }
    return 1;
}

/* `port` is a replica whose link to its primary is up: 1, or 0 after `ms`. */
static int synced_within(int port, int ms)
{
    int64_t t0 = util_now_ms();
    for (;;) {
        redisContext *c = redis_admin(port);
        redisReply *r = redisCommand(c, "INFO replication");
        int up = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "master_link_status:up");
        freeReplyObject(r);
        redisFree(c);
        if (up)
            return 1;
        if (util_now_ms() - t0 > ms)
            return 0;
        usleep(20000);
    }
}

/*
 * A Sentinel failover under writers, many times over: rankd (its own process, --write-replicas
 * 1, 4 event threads) under 16 concurrent writers; each round SIGSTOPs the first sentinel of
 * rankd's list (the one it watches and asks first) and asks the second for SENTINEL FAILOVER;
 * a second after it names the replica, the old primary is made the new one's replica the way
 * the sentinels do it, only sooner (MULTI, REPLICAOF, CLIENT KILL TYPE normal, EXEC: they wait
 * some 8 s), the stopped sentinel is continued, and the round ends when writes are 200 again.
 * After every round: rankd is alive, and every write acknowledged in the round is on the new
 * primary; over the whole test every request was answered by its deadline (--request-timeout-ms)
 * and CHURN_SLACK_MS, with 200 or 503, and every 200 is on the last primary. (Before the fix
 * rankd died of SIGSEGV within 4 rounds, 12 runs of 12, release and ASan: a WAIT appended
 * while the connection was left on the old primary was held for the next dial, and given up
 * there through its NULL callback; with only that call guarded, 88 writes took over 2 s, up
 * to the client's 30 s: the WAIT, released onto the new connection as the one "in flight",
 * was never written, and the writes behind it had no deadline until the next failover.)
 */
START_TEST(test_sentinel_failover_under_writers)
{
    struct sentinels s;
    sentinels_start(&s);
    const char *env = getenv("RANKD_CHURN_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : CHURN_ROUNDS;
    char url[300], log[200], timeout[64];
    snprintf(url, sizeof(url), "--redis=%s", g_url);
    snprintf(log, sizeof(log), "%s/rankd.log", s.dir);
    snprintf(timeout, sizeof(timeout), "--request-timeout-ms=%d", CHURN_REQUEST_MS);
    const char *args[] = {
        url, "--write-replicas=1", "--http-threads=4", "--log-level=warn", timeout, NULL};
    struct rankd_proc_opts o = {.args = args, .log_path = log};
    struct rankd_proc app;
    ck_assert_int_eq(rankd_proc_start_opts(&app, s.primary, &o), 0);
    char pids[200];
    snprintf(pids, sizeof(pids), "%s/pids", s.dir);
    FILE *pf = fopen(pids, "a"); /* the guard stops rankd too, should the test end early */
    ck_assert_ptr_nonnull(pf);
    fseek(pf, 0, SEEK_END);
    long pids_len = ftell(pf);
    fprintf(pf, "%d\n", (int)app.pid);
    fclose(pf);
    post_ok(app.port, "{\"id\":\"first\",\"score\":1,\"op\":\"set\"}");
    static struct churn_writer w[CHURN_WRITERS];
    atomic_int stop = 0;
    for (int i = 0; i < CHURN_WRITERS; i++) {
        w[i] = (struct churn_writer){.port = app.port, .i = i, .stop = &stop};
        w[i].acked = malloc(CHURN_IDS * sizeof(int));
        ck_assert_ptr_nonnull(w[i].acked);
        ck_assert_int_eq(pthread_create(&w[i].th, NULL, churn_run, &w[i]), 0);
    }
    int cur = s.primary, other = s.replica, from[CHURN_WRITERS] = {0};
    int64_t t0 = util_now_ms();
    char missing[64] = "";
    for (int round = 0; round < rounds; round++) {
        ck_assert_msg(names_within(s.sentinel[1], cur, 10000), "round %d: sentinel 1 names %d",
                      round, names_now(s.sentinel[1]));
        ck_assert_int_eq(kill(s.sentinel_pid[0], SIGSTOP), 0);
        int asked = 0;
        for (int64_t ta = util_now_ms(); !asked && util_now_ms() - ta < 10000;) {
            redisContext *c = redis_admin(s.sentinel[1]);
            redisReply *r = redisCommand(c, "SENTINEL FAILOVER mymaster");
            asked = r && r->type == REDIS_REPLY_STATUS; /* else INPROG, NOGOODSLAVE: again */
            freeReplyObject(r);
            redisFree(c);
            if (!asked)
                usleep(50000);
        }
        ck_assert_msg(asked, "round %d: SENTINEL FAILOVER refused for 10 s", round);
        ck_assert_msg(names_within(s.sentinel[1], other, 20000),
                      "round %d: the sentinels named no new primary in 20 s", round);
        usleep(CHURN_DEMOTE_MS * 1000);
        redisContext *c = redis_admin(cur); /* demoted, as the sentinels would later */
        freeReplyObject(redisCommand(c, "MULTI"));
        freeReplyObject(redisCommand(c, "REPLICAOF 127.0.0.1 %d", other));
        freeReplyObject(redisCommand(c, "CLIENT KILL TYPE normal"));
        redisReply *x = redisCommand(c, "EXEC");
        ck_assert_msg(x && x->type == REDIS_REPLY_ARRAY, "round %d: demoting %d failed", round,
                      cur);
        freeReplyObject(x);
        redisFree(c);
        ck_assert_msg(synced_within(cur, 10000), "round %d: %d did not sync", round, cur);
        kill(s.sentinel_pid[0], SIGCONT);
        churn_alive(app.pid, log, round);
        int acked = churn_acked(w, CHURN_WRITERS);
        int64_t tw = util_now_ms();
        while (churn_acked(w, CHURN_WRITERS) < acked + CHURN_WRITERS && util_now_ms() - tw < 15000)
            usleep(10000);
        churn_alive(app.pid, log, round);
        ck_assert_msg(churn_acked(w, CHURN_WRITERS) >= acked + CHURN_WRITERS,
                      "round %d: writes not acknowledged again within 15 s of the failover", round);
        /* every write acknowledged in this round (on the old primary before the switch, on the
         * new one after it) is on the new primary */
        int lacking = churn_missing(other, w, CHURN_WRITERS, from, missing, sizeof(missing));
        ck_assert_msg(lacking == 0,
                      "round %d: %d acknowledged writes are not on the new primary "
                      "(%s)",
                      round, lacking, missing);
        for (int i = 0; i < CHURN_WRITERS; i++)
            from[i] = atomic_load(&w[i].nacked);
        int t = cur;
        cur = other;
        other = t;
    }
    int64_t took = util_now_ms() - t0;
    atomic_store(&stop, 1);
    int sent = 0, ok = 0, unavailable = 0, bad = 0, no_answer = 0, late = 0;
    double slowest = 0;
    struct churn_writer *odd = NULL;
    for (int i = 0; i < CHURN_WRITERS; i++) {
        pthread_join(w[i].th, NULL);
        sent += w[i].sent;
        ok += w[i].ok;
        unavailable += w[i].unavailable;
        bad += w[i].other;
        no_answer += w[i].no_answer;
        late += w[i].late;
        if (w[i].slowest > slowest)
            slowest = w[i].slowest;
        if (w[i].other && !odd)
            odd = &w[i];
    }
    churn_alive(app.pid, log, rounds);
    int lacking = churn_missing(cur, w, CHURN_WRITERS, NULL, missing, sizeof(missing));
    fprintf(stderr,
            "sentinel: %d failovers under %d writers in %.1f s: %d writes, %d 200, %d 503, "
            "%d other, %d unanswered; slowest %.3f s, %d over the deadline by more than %.1f s; %d "
            "acknowledged missing on the last primary\n",
            rounds, CHURN_WRITERS, (double)took / 1000, sent, ok, unavailable, bad, no_answer,
            slowest, late, (double)CHURN_SLACK_MS / 1000, lacking);
    ck_assert_msg(no_answer == 0, "%d requests got no answer", no_answer);
    ck_assert_msg(late == 0,
                  "%d requests took longer than their deadline (%d ms) and %d ms: the "
                  "slowest %.3f s",
                  late, CHURN_REQUEST_MS, CHURN_SLACK_MS, slowest);
    ck_assert_msg(!odd, "a write answered %ld: %s", odd ? odd->last_other : 0,
                  odd ? odd->other_body : "");
    ck_assert_msg(lacking == 0, "%d acknowledged writes are not on the last primary (%s)", lacking,
                  missing);
    for (int i = 0; i < CHURN_WRITERS; i++)
        free(w[i].acked);
    rankd_proc_stop(&app);
    ck_assert_int_eq(truncate(pids, pids_len), 0); /* stopped and reaped: not the guard's now */
    sentinels_stop(&s);
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
        {"failover_under_writers", test_sentinel_failover_under_writers, 240},
    };
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
        tc = tcase_create(more[i].name);
        tcase_set_timeout(tc, more[i].timeout_s);
        tcase_add_test(tc, more[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
