/* test_acl.c -- a Redis user that may not run rankd's scripts (issue 13, "Redis that says no"):
 * build/rankd as a child process against the test's redis-server, with ACL users made for the
 * test, stops at start-up with one line naming the missing permission and what would work, and
 * exit code 2 (it used to start and answer 503 "Connection refused" on every route). */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"

struct run {
    int exited; /**< 1 when it exited within the wait */
    int status; /**< its exit code */
    char err[4096];
};

/* build/rankd with --redis=url (and --cache-redis=cache_url unless NULL) on a free port; waits
 * up to `wait_ms` for it to exit (collecting its stderr), else stops it with SIGTERM. */
static void run_rankd_cache(const char *url, const char *cache_url, int wait_ms, struct run *out)
{
    char exe[PATH_MAX], redis[256], cache[256] = "--log-level=error";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    ck_assert_ptr_nonnull(slash);
    strcpy(slash + 1, "rankd");
    snprintf(redis, sizeof(redis), "--redis=%s", url);
    if (cache_url)
        snprintf(cache, sizeof(cache), "--cache-redis=%s", cache_url);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execl(exe, exe, "--listen=127.0.0.1:0", redis, "--log-level=error", cache, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    memset(out, 0, sizeof(*out));
    int st = 0;
    for (int waited = 0; waited < wait_ms; waited += 10) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            out->exited = 1;
            break;
        }
        usleep(10000);
    }
    if (!out->exited) {
        kill(pid, SIGTERM);
        waitpid(pid, &st, 0);
    }
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    size_t got = 0;
    for (ssize_t r; got < sizeof(out->err) - 1 &&
                    (r = read(fds[0], out->err + got, sizeof(out->err) - 1 - got)) > 0;)
        got += (size_t)r;
    out->err[got] = '\0';
    close(fds[0]);
}

static void run_rankd(const char *url, int wait_ms, struct run *out)
{
    run_rankd_cache(url, NULL, wait_ms, out);
}

static long long cached_scripts(void)
{
    redisReply *r = redis_admin_cmd(g_admin, "INFO memory");
    const char *p = r->str ? strstr(r->str, "number_of_cached_scripts:") : NULL;
    long long n = p ? atoll(p + strlen("number_of_cached_scripts:")) : -1;
    freeReplyObject(r);
    return n;
}

/* The fixture's in-process rankd loads scripts of its own: stopped, so they can be counted. */
static void stop_fixture_app(void)
{
    rankd_stop(g_app);
    g_app = NULL;
}

static void refused(const char *user, const char *rule, const char *missing, const char *fix)
{
    stop_fixture_app();
    /* ACL SETUSER user on >pw ~* &* +@all, then each word of `rule` as its own argument */
    const char *argv[12] = {"ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all"};
    char words[128];
    snprintf(words, sizeof(words), "%s", rule);
    int argc = 8;
    for (char *save = NULL, *w = strtok_r(words, " ", &save); w && argc < 12;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    redisReply *set = redisCommandArgv(g_admin, argc, argv, NULL);
    ck_assert_msg(set && set->type == REDIS_REPLY_STATUS, "ACL SETUSER %s %s: %s", user, rule,
                  set && set->str ? set->str : g_admin->errstr);
    freeReplyObject(set);
    freeReplyObject(redis_admin_cmd(g_admin, "SCRIPT FLUSH"));
    char url[128];
    snprintf(url, sizeof(url), "redis://%s:pw@127.0.0.1:%d", user, g_redis.port);
    struct run r;
    run_rankd(url, 5000, &r);
    freeReplyObject(redis_admin_cmd(g_admin, "ACL DELUSER %s", user));
    ck_assert_msg(r.exited && r.status == 2, "%s (%s): exited %d, status %d: %s", user, rule,
                  r.exited, r.status, r.err);
    char want[160];
    snprintf(want, sizeof(want), "user '%s' may not run %s (NOPERM", user, missing);
    ck_assert_msg(strstr(r.err, want), "no '%s' in: %s", want, r.err);
    ck_assert_msg(strstr(r.err, "only /healthz and /metrics would work"), "%s", r.err);
    ck_assert_msg(strstr(r.err, "so rankd does not start"), "%s", r.err);
    snprintf(want, sizeof(want), "Fix: ACL SETUSER %s %s (or +@scripting).", user, fix);
    ck_assert_msg(strstr(r.err, want), "no '%s' in: %s", want, r.err);
    ck_assert_msg(!strstr(r.err, "Connection refused"), "%s", r.err);
    ck_assert_int_eq(cached_scripts(), 0); /* the probes load nothing */
    fprintf(stderr, "acl: %s (%s): exit 2: %.160s...\n", user, rule, r.err);
}

START_TEST(without_script_load)
{
    refused("acl_noscript", "-script", "script|load", "+script|load");
    refused("acl_noload", "-script|load", "script|load", "+script|load");
}
END_TEST

START_TEST(without_evalsha)
{
    refused("acl_noevalsha", "-evalsha", "evalsha", "+evalsha");
    refused("acl_noeval", "-evalsha -eval", "evalsha, eval", "+evalsha +eval");
    refused("acl_noscripting", "-@scripting", "script|load, evalsha, eval",
            "+script|load +evalsha +eval");
}
END_TEST

/* How many scripts rankd has: the files of service/lua/ but the preludes. */
static int own_scripts(void)
{
    glob_t g;
    int n = 0;
    if (glob("service/lua/*.lua", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            n += strstr(g.gl_pathv[i], "/prelude_") == NULL;
        globfree(&g);
    }
    ck_assert_int_gt(n, 0);
    return n;
}

/* A user with every permission starts (and keeps running), and the check loaded no script. */
START_TEST(allowed_user_starts)
{
    stop_fixture_app();
    freeReplyObject(redis_admin_cmd(g_admin, "ACL SETUSER acl_all on >pw ~* &* +@all"));
    freeReplyObject(redis_admin_cmd(g_admin, "SCRIPT FLUSH"));
    char url[128];
    snprintf(url, sizeof(url), "redis://acl_all:pw@127.0.0.1:%d", g_redis.port);
    struct run r;
    run_rankd(url, 1000, &r);
    freeReplyObject(redis_admin_cmd(g_admin, "ACL DELUSER acl_all"));
    ck_assert_msg(!r.exited, "exited %d: %s", r.status, r.err);
    /* its own, one each (service/lua/, the preludes are parts of them): the check added none */
    ck_assert_int_eq(cached_scripts(), own_scripts());
}
END_TEST

/* The cache Redis (--cache-redis) runs scripts too (the page locks): checked the same way. */
START_TEST(cache_redis_checked)
{
    stop_fixture_app();
    freeReplyObject(redis_admin_cmd(g_admin, "ACL SETUSER acl_cache on >pw ~* &* +@all -evalsha"));
    char url[128], cache[128];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", g_redis.port);
    snprintf(cache, sizeof(cache), "redis://acl_cache:pw@127.0.0.1:%d", g_redis.port);
    struct run r;
    run_rankd_cache(url, cache, 5000, &r);
    freeReplyObject(redis_admin_cmd(g_admin, "ACL DELUSER acl_cache"));
    ck_assert_msg(r.exited && r.status == 2, "exited %d, status %d: %s", r.exited, r.status, r.err);
    ck_assert_msg(strstr(r.err, "rankd: the cache Redis user 'acl_cache' may not run evalsha"),
                  "%s", r.err);
}
END_TEST

/* A Redis that refuses the URL's password (WRONGPASS), wants one the URL does not give (NOAUTH),
 * or has not the URL's database: bad configuration, one line and exit 2 (it used to start and
 * answer 503 "Connection refused" on every route). The right password still starts. A Redis of
 * the test's own, with requirepass, so the run's Redis keeps its open default user. */
START_TEST(auth_refused)
{
    struct redis_proc rp;
    ck_assert_int_eq(redis_proc_start(&rp), 0);
    redisContext *admin = redis_admin(rp.port);
    freeReplyObject(redis_admin_cmd(admin, "CONFIG SET requirepass s3cret"));
    redisFree(admin);
    static const struct {
        const char *userinfo, *db, *want;
    } cases[] = {
        {"", "", "rankd: Redis refused user 'default' without a password (NOAUTH"},
        {":wrong@", "", "rankd: Redis refused user 'default' with the URL's password (WRONGPASS"},
        {"nobody:s3cret@", "",
         "rankd: Redis refused user 'nobody' with the URL's password (WRONGPASS"},
        {":s3cret@", "/99", "rankd: Redis refused database 99 for user 'default' (ERR DB index"},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    struct run r[N + 1];
    char url[160];
    for (int i = 0; i < N; i++) {
        snprintf(url, sizeof(url), "redis://%s127.0.0.1:%d%s", cases[i].userinfo, rp.port,
                 cases[i].db);
        run_rankd(url, 5000, &r[i]);
    }
    snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d", rp.port);
    run_rankd(url, 1000, &r[N]);
    redis_proc_stop(&rp);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(r[i].exited && r[i].status == 2, "%s%s: exited %d, status %d: %s",
                      cases[i].userinfo, cases[i].db, r[i].exited, r[i].status, r[i].err);
        ck_assert_msg(strncmp(r[i].err, cases[i].want, strlen(cases[i].want)) == 0,
                      "no '%s' in: %s", cases[i].want, r[i].err);
        char *nl = strchr(r[i].err, '\n');
        ck_assert_msg(nl && nl[1] == '\0', "not one line: %s", r[i].err);
        ck_assert_msg(!strstr(r[i].err, "s3cret") && !strstr(r[i].err, "wrong"),
                      "a password in: %s", r[i].err);
        fprintf(stderr, "acl: %s%s: exit 2: %.140s...\n", cases[i].userinfo, cases[i].db, r[i].err);
    }
    ck_assert_msg(!r[N].exited, "the right password: exited %d: %s", r[N].status, r[N].err);
}
END_TEST

/* Redis down at start-up: rankd starts as before (it dials again and recovers). */
START_TEST(redis_down_still_starts)
{
    struct run r;
    run_rankd("redis://127.0.0.1:1", 1000, &r);
    ck_assert_msg(!r.exited, "exited %d: %s", r.status, r.err);
}
END_TEST

Suite *acl_suite(void)
{
    const struct it_case cases[] = {
        {"without_script_load", without_script_load},
        {"without_evalsha", without_evalsha},
        {"allowed_user_starts", allowed_user_starts},
        {"cache_redis_checked", cache_redis_checked},
        {"auth_refused", auth_refused},
        {"redis_down_still_starts", redis_down_still_starts},
    };
    return it_suite("acl", cases, sizeof(cases) / sizeof(cases[0]));
}
