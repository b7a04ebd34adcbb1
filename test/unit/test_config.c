/* test_config.c -- service/config.h: redis URLs, listen addresses, flags over RANKD_* variables.
 *
 * Check forks every test, so setenv/unsetenv and getopt's globals stay inside one test. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "suites.h"

/* ---- config_parse_redis_url ---------------------------------------------------------------- */

static struct redis_url url_ok(const char *text)
{
    struct redis_url u;
    int rc = config_parse_redis_url(text, &u);
    ck_assert_msg(rc == 0, "config_parse_redis_url(\"%s\") = %d", text, rc);
    return u;
}

START_TEST(test_redis_url_tcp)
{
    struct redis_url u = url_ok("redis://127.0.0.1:6379/0");
    ck_assert_str_eq(u.host, "127.0.0.1");
    ck_assert_int_eq(u.port, 6379);
    ck_assert_int_eq(u.db, 0);
    ck_assert_str_eq(u.unix_path, "");
    ck_assert_str_eq(u.username, "");
    ck_assert_str_eq(u.password, "");

    u = url_ok("redis://localhost");
    ck_assert_str_eq(u.host, "localhost");
    ck_assert_int_eq(u.port, 6379);
    ck_assert_int_eq(u.db, 0);

    u = url_ok("redis://h:1/");
    ck_assert_str_eq(u.host, "h");
    ck_assert_int_eq(u.port, 1);
    ck_assert_int_eq(u.db, 0);

    u = url_ok("redis://h:65535/15");
    ck_assert_int_eq(u.port, 65535);
    ck_assert_int_eq(u.db, 15);
}
END_TEST

START_TEST(test_redis_url_auth)
{
    struct redis_url u = url_ok("redis://:pw@host:1234/3");
    ck_assert_str_eq(u.host, "host");
    ck_assert_int_eq(u.port, 1234);
    ck_assert_int_eq(u.db, 3);
    ck_assert_str_eq(u.username, "");
    ck_assert_str_eq(u.password, "pw");

    u = url_ok("redis://user:p%40ss@h");
    ck_assert_str_eq(u.username, "user");
    ck_assert_str_eq(u.password, "p@ss");
    ck_assert_str_eq(u.host, "h");
    ck_assert_int_eq(u.port, 6379);
    ck_assert_int_eq(u.db, 0);

    /* a password alone (no colon) */
    u = url_ok("redis://secret@h:7000");
    ck_assert_str_eq(u.username, "");
    ck_assert_str_eq(u.password, "secret");
    ck_assert_int_eq(u.port, 7000);

    /* reserved characters escaped inside the password */
    u = url_ok("redis://u:a%2Fb%3Ac%25@h/2");
    ck_assert_str_eq(u.password, "a/b:c%");
    ck_assert_int_eq(u.db, 2);
}
END_TEST

START_TEST(test_redis_url_ipv6)
{
    struct redis_url u = url_ok("redis://[::1]:6380/1");
    ck_assert_str_eq(u.host, "::1");
    ck_assert_int_eq(u.port, 6380);
    ck_assert_int_eq(u.db, 1);

    u = url_ok("redis://[fe80::1]");
    ck_assert_str_eq(u.host, "fe80::1");
    ck_assert_int_eq(u.port, 6379);
}
END_TEST

START_TEST(test_redis_url_unix)
{
    struct redis_url u = url_ok("unix:///tmp/r.sock?db=2");
    ck_assert_str_eq(u.unix_path, "/tmp/r.sock");
    ck_assert_str_eq(u.host, "");
    ck_assert_int_eq(u.db, 2);

    u = url_ok("unix:///var/run/redis.sock");
    ck_assert_str_eq(u.unix_path, "/var/run/redis.sock");
    ck_assert_int_eq(u.db, 0);
}
END_TEST

START_TEST(test_redis_url_bad)
{
    static const char *const bad[] = {
        "http://x",        "redis://",        "redis://h:99999", "redis://h:0",
        "redis://h/abc",   "redis://h:",      "redis://h:-1",    "redis://h:80x",
        "redis://h/-1",    "redis://[::1",    "redis://[::1]x",  "unix://",
        "unix://rel.sock", "unix:///s?db=x",  "unix:///s?x=1",   "",
        "REDIS",           "redis://u:%zz@h", "redis://u:%4@h",  "redis://u:%@h",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct redis_url u;
        ck_assert_msg(config_parse_redis_url(bad[i], &u) == -EINVAL, "\"%s\" accepted", bad[i]);
    }
}
END_TEST

START_TEST(test_redis_url_cluster)
{
    struct redis_url u = url_ok("redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
    ck_assert_int_eq(u.mode, REDIS_URL_CLUSTER);
    ck_assert_int_eq(u.nseeds, 2);
    ck_assert_str_eq(u.seeds[0].host, "127.0.0.1");
    ck_assert_int_eq(u.seeds[0].port, 7000);
    ck_assert_str_eq(u.seeds[1].host, "127.0.0.1");
    ck_assert_int_eq(u.seeds[1].port, 7001);
    ck_assert_str_eq(u.host, "127.0.0.1"); /* the first seed, for what dials one node */
    ck_assert_int_eq(u.port, 7000);
    ck_assert_int_eq(u.db, 0);

    u = url_ok("redis-cluster://user:p%40ss@a,[::1]:7002,b:7003/0");
    ck_assert_int_eq(u.nseeds, 3);
    ck_assert_str_eq(u.username, "user");
    ck_assert_str_eq(u.password, "p@ss");
    ck_assert_str_eq(u.seeds[0].host, "a");
    ck_assert_int_eq(u.seeds[0].port, 6379);
    ck_assert_str_eq(u.seeds[1].host, "::1");
    ck_assert_int_eq(u.seeds[1].port, 7002);
    ck_assert_str_eq(u.seeds[2].host, "b");
    ck_assert_int_eq(u.seeds[2].port, 7003);

    u = url_ok("redis-cluster://h/");
    ck_assert_int_eq(u.nseeds, 1);
    ck_assert_int_eq(u.seeds[0].port, 6379);

    /* the single-Redis forms say so and name their one node as a seed */
    u = url_ok("redis://h:7/1");
    ck_assert_int_eq(u.mode, REDIS_URL_SINGLE);
    ck_assert_int_eq(u.nseeds, 1);
    ck_assert_str_eq(u.seeds[0].host, "h");
    ck_assert_int_eq(u.seeds[0].port, 7);
    u = url_ok("unix:///tmp/r.sock");
    ck_assert_int_eq(u.mode, REDIS_URL_SINGLE);
    ck_assert_int_eq(u.nseeds, 0);
}
END_TEST

START_TEST(test_redis_url_sentinel)
{
    struct redis_url u = url_ok("redis-sentinel://127.0.0.1:26380,s2/mymaster");
    ck_assert_int_eq(u.mode, REDIS_URL_SENTINEL);
    ck_assert_int_eq(u.nseeds, 2);
    ck_assert_int_eq(u.seeds[0].port, 26380);
    ck_assert_str_eq(u.seeds[1].host, "s2");
    ck_assert_int_eq(u.seeds[1].port, 26379); /* the sentinels' default */
    ck_assert_str_eq(u.master, "mymaster");
    ck_assert_int_eq(u.db, 0);
    u = url_ok("redis-sentinel://:pw@[::1]/app.main-1/3");
    ck_assert_str_eq(u.password, "pw");
    ck_assert_str_eq(u.seeds[0].host, "::1");
    ck_assert_str_eq(u.master, "app.main-1");
    ck_assert_int_eq(u.db, 3);
    static const char *const bad[] = {
        "redis-sentinel://h",       "redis-sentinel://h/",     "redis-sentinel://h/a b",
        "redis-sentinel://h/m/x",   "redis-sentinel:///m",     "redis-sentinel://h:0/m",
        "redis-sentinel://h,,h2/m", "redis-sentinel://h/m{x}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct redis_url b;
        ck_assert_msg(config_parse_redis_url(bad[i], &b) == -EINVAL, "\"%s\" accepted", bad[i]);
    }
}
END_TEST

START_TEST(test_redis_url_cluster_bad)
{
    static const char *const bad[] = {
        "redis-cluster://",
        "redis-cluster://a,",
        "redis-cluster://,a",
        "redis-cluster://a,,b",
        "redis-cluster://a:0",
        "redis-cluster://a:x,b",
        "redis-cluster://a/1",
        "redis-cluster://a/x",
        "redis-cluster://[::1,b",
        "redis-cluster://u:%zz@a,b",
        "redis-cluster://a:70000",
        "redis-cluster://a:1,b:",
        "redis-cluster:/a",
        "redis-cluster://h,h,h,h,h,h,h,h,h,h,h,h,h,h,h,h,h", /* 17 seeds */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct redis_url u;
        ck_assert_msg(config_parse_redis_url(bad[i], &u) == -EINVAL, "\"%s\" accepted", bad[i]);
    }
}
END_TEST

/* RFC 3986: pct-encoded = "%" HEXDIG HEXDIG; a sign or a blank is not a hex digit. */
START_TEST(test_redis_url_bad_escape_strict)
{
    static const char *const bad[] = {"redis://u:%+1@h", "redis://u:%-1@h", "redis://u:% f@h"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct redis_url u;
        int rc = config_parse_redis_url(bad[i], &u);
        ck_assert_msg(rc == -EINVAL, "\"%s\" accepted (rc %d), password decoded to \\x%02x", bad[i],
                      rc, rc == 0 ? (unsigned char)u.password[0] : 0);
    }
}
END_TEST

/* ---- config_parse_listen ------------------------------------------------------------------- */

START_TEST(test_listen)
{
    char host[128];
    int port = -1;
    ck_assert_int_eq(config_parse_listen("127.0.0.1:8080", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 8080);

    ck_assert_int_eq(config_parse_listen("[::1]:0", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 0);

    ck_assert_int_eq(config_parse_listen(":9000", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "0.0.0.0");
    ck_assert_int_eq(port, 9000);

    ck_assert_int_eq(config_parse_listen("localhost:65535", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "localhost");
    ck_assert_int_eq(port, 65535);
}
END_TEST

START_TEST(test_listen_bad)
{
    static const char *const bad[] = {"::1:80", "host", "h:70000", "h:",      "h:-1",
                                      "h:80x",  "",     "[::1]",   "[::1:80", "h:65536"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char host[128];
        int port = -1;
        ck_assert_msg(config_parse_listen(bad[i], host, sizeof(host), &port) == -EINVAL,
                      "\"%s\" accepted", bad[i]);
    }
    /* the host does not fit the buffer */
    char small[4];
    int port;
    ck_assert_int_eq(config_parse_listen("abcd:80", small, sizeof(small), &port), -EINVAL);
    ck_assert_int_eq(config_parse_listen("abc:80", small, sizeof(small), &port), 0);
    ck_assert_str_eq(small, "abc");
}
END_TEST

/* ---- config_parse -------------------------------------------------------------------------- */

static const char *const k_env[] = {
    "RANKD_LISTEN",
    "RANKD_REDIS_URL",
    "RANKD_WRITE_TOKEN",
    "RANKD_KEY_PREFIX",
    "RANKD_THREADS",
    "RANKD_DEFAULT_BOARD",
    "RANKD_MAX_CONNECTIONS",
    "RANKD_REDIS_TIMEOUT_MS",
    "RANKD_REDIS_CONNECT_TIMEOUT_MS",
    "RANKD_LOG_LEVEL",
    "RANKD_LOG_FORMAT",
    "RANKD_ACCESS_LOG",
    "RANKD_WRITE_TOKEN_FILE",
    "RANKD_READ_FROM_REPLICAS",
    "RANKD_WRITE_REPLICAS",
    "RANKD_REDIS_PASSWORD_FILE",
    "RANKD_CACHE_REDIS_URL",
};

/* Checked fixture (runs in the test's own process): no RANKD_* variable from the caller. */
static void clear_env(void)
{
    for (size_t i = 0; i < sizeof(k_env) / sizeof(k_env[0]); i++)
        unsetenv(k_env[i]);
}

#define MAX_ARGS 8

/* Writable copies of the arguments, since getopt_long may permute argv. */
struct args {
    char text[MAX_ARGS][CONFIG_STR_MAX];
    char *argv[MAX_ARGS + 1];
    int argc;
};

static char g_err[512];

/* config_parse over {"rankd", args..., NULL}; the error line lands in g_err. */
static int parse(struct config *cfg, const char *const *args)
{
    static struct args a;
    memset(&a, 0, sizeof(a));
    a.argc = 0;
    strcpy(a.text[a.argc], "rankd");
    a.argv[a.argc] = a.text[a.argc];
    a.argc++;
    for (; args && *args; args++) {
        ck_assert_int_lt(a.argc, MAX_ARGS);
        ck_assert_uint_lt(strlen(*args), CONFIG_STR_MAX);
        strcpy(a.text[a.argc], *args);
        a.argv[a.argc] = a.text[a.argc];
        a.argc++;
    }
    a.argv[a.argc] = NULL;
    memset(g_err, 0, sizeof(g_err));
    memset(cfg, 0, sizeof(*cfg));
    return config_parse(cfg, a.argc, a.argv, g_err, sizeof(g_err));
}

static void assert_err_mentions(const char *what)
{
    ck_assert_msg(strstr(g_err, what) != NULL, "error \"%s\" does not mention \"%s\"", g_err, what);
}

static void assert_defaults(const struct config *c)
{
    ck_assert_str_eq(c->listen_host, "127.0.0.1");
    ck_assert_int_eq(c->listen_port, 8080);
    ck_assert_str_eq(c->redis_url_text, "redis://127.0.0.1:6379/0");
    ck_assert_str_eq(c->redis.host, "127.0.0.1");
    ck_assert_int_eq(c->redis.port, 6379);
    ck_assert_int_eq(c->redis.db, 0);
    ck_assert_str_eq(c->redis.unix_path, "");
    ck_assert_str_eq(c->redis.password, "");
    ck_assert_str_eq(c->key_prefix, "rankd");
    ck_assert_str_eq(c->default_board, "default");
    ck_assert_str_eq(c->write_token, "");
    ck_assert_int_eq(c->threads, 8);
    ck_assert_int_eq(c->max_connections, 512);
    ck_assert_int_eq(c->redis_timeout_ms, 1000);
    ck_assert_int_eq(c->connect_timeout_ms, 200);
    ck_assert_int_eq(c->log_level, 1);
}

START_TEST(test_parse_defaults)
{
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    assert_defaults(&c);

    struct config d;
    config_defaults(&d);
    assert_defaults(&d);
}
END_TEST

START_TEST(test_parse_flags)
{
    const char *const args[] = {"--listen=[::1]:0",
                                "--redis=unix:///tmp/r.sock?db=2",
                                "--write-token=t0k-0123456789abcdef",
                                "--key-prefix=app:lb-1",
                                "--threads",
                                "16",
                                "--log-level=error",
                                NULL};
    struct config c;
    ck_assert_int_eq(parse(&c, args), 0);
    ck_assert_str_eq(c.listen_host, "::1");
    ck_assert_int_eq(c.listen_port, 0);
    ck_assert_str_eq(c.redis.unix_path, "/tmp/r.sock");
    ck_assert_int_eq(c.redis.db, 2);
    ck_assert_str_eq(c.redis_url_text, "unix:///tmp/r.sock?db=2");
    ck_assert_str_eq(c.write_token, "t0k-0123456789abcdef");
    ck_assert_str_eq(c.key_prefix, "app:lb-1");
    ck_assert_int_eq(c.threads, 16);
    ck_assert_int_eq(c.log_level, 3);
    ck_assert_str_eq(c.default_board, "default"); /* untouched options keep their defaults */
}
END_TEST

START_TEST(test_parse_env)
{
    setenv("RANKD_THREADS", "4", 1);
    setenv("RANKD_LISTEN", ":9000", 1);
    setenv("RANKD_REDIS_URL", "redis://:pw@host:1234/3", 1);
    setenv("RANKD_WRITE_TOKEN", "s3cret-0123456789abc", 1);
    setenv("RANKD_DEFAULT_BOARD", "weekly.2024-01", 1);
    setenv("RANKD_LOG_LEVEL", "debug", 1);
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.threads, 4);
    ck_assert_str_eq(c.listen_host, "0.0.0.0");
    ck_assert_int_eq(c.listen_port, 9000);
    ck_assert_str_eq(c.redis.host, "host");
    ck_assert_int_eq(c.redis.port, 1234);
    ck_assert_int_eq(c.redis.db, 3);
    ck_assert_str_eq(c.redis.password, "pw");
    ck_assert_str_eq(c.write_token, "s3cret-0123456789abc");
    ck_assert_str_eq(c.default_board, "weekly.2024-01");
    ck_assert_int_eq(c.log_level, 0);
}
END_TEST

START_TEST(test_parse_flag_wins)
{
    setenv("RANKD_THREADS", "4", 1);
    setenv("RANKD_KEY_PREFIX", "fromenv", 1);
    const char *const args[] = {"--threads=16", "--key-prefix=fromflag", NULL};
    struct config c;
    ck_assert_int_eq(parse(&c, args), 0);
    ck_assert_int_eq(c.threads, 16);
    ck_assert_str_eq(c.key_prefix, "fromflag");

    /* a flag wins even over an invalid variable: the variable is never looked at */
    setenv("RANKD_THREADS", "abc", 1);
    const char *const args2[] = {"--threads=2", NULL};
    ck_assert_int_eq(parse(&c, args2), 0);
    ck_assert_int_eq(c.threads, 2);
}
END_TEST

START_TEST(test_parse_bad_threads_flag)
{
    const char *const args[] = {"--threads=0", NULL};
    struct config c;
    ck_assert_int_eq(parse(&c, args), -EINVAL);
    assert_err_mentions("--threads");
    assert_err_mentions("'0'");

    const char *const args2[] = {"--threads=257", NULL};
    ck_assert_int_eq(parse(&c, args2), -EINVAL);
    assert_err_mentions("--threads");
}
END_TEST

/* A rejected URL or token is never echoed: it may carry a password. */
START_TEST(test_parse_error_hides_secrets)
{
    const char *const args[] = {"--redis=redis://:s3cret@h:99999/0", NULL};
    struct config c;
    ck_assert_int_eq(parse(&c, args), -EINVAL);
    assert_err_mentions("--redis");
    ck_assert_ptr_null(strstr(g_err, "s3cret"));
    setenv("RANKD_CACHE_REDIS_URL", "redis://:s3cret@h:0", 1);
    const char *const none[] = {NULL};
    ck_assert_int_eq(parse(&c, none), -EINVAL);
    assert_err_mentions("RANKD_CACHE_REDIS_URL");
    ck_assert_ptr_null(strstr(g_err, "s3cret"));
}
END_TEST

START_TEST(test_parse_bad_threads_env)
{
    setenv("RANKD_THREADS", "abc", 1);
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), -EINVAL);
    assert_err_mentions("RANKD_THREADS");
    assert_err_mentions("abc");
}
END_TEST

START_TEST(test_parse_bad_names)
{
    struct config c;
    const char *const a1[] = {"--key-prefix=a b", NULL};
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    assert_err_mentions("--key-prefix");

    const char *const a2[] = {"--default-board=a/b", NULL};
    ck_assert_int_eq(parse(&c, a2), -EINVAL);
    assert_err_mentions("--default-board");

    const char *const a3[] = {"--key-prefix=", NULL};
    ck_assert_int_eq(parse(&c, a3), -EINVAL);

    const char *const a4[] = {
        "--key-prefix=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        NULL}; /* 65 bytes */
    ck_assert_int_eq(parse(&c, a4), -EINVAL);

    const char *const a5[] = {"--default-board=has:colon", NULL};
    ck_assert_int_eq(parse(&c, a5), -EINVAL);

    const char *const a6[] = {"--log-level=verbose", NULL};
    ck_assert_int_eq(parse(&c, a6), -EINVAL);
    assert_err_mentions("--log-level");

    const char *const a7[] = {"--redis=http://x", NULL};
    ck_assert_int_eq(parse(&c, a7), -EINVAL);
    assert_err_mentions("--redis");

    const char *const a8[] = {"--listen=host", NULL};
    ck_assert_int_eq(parse(&c, a8), -EINVAL);
    assert_err_mentions("--listen");
}
END_TEST

START_TEST(test_parse_unknown)
{
    struct config c;
    const char *const a1[] = {"--nope=1", NULL};
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    assert_err_mentions("--nope");

    const char *const a2[] = {"stray", NULL};
    ck_assert_int_eq(parse(&c, a2), -EINVAL);
    assert_err_mentions("stray");

    const char *const a3[] = {"--threads", NULL}; /* missing value */
    ck_assert_int_eq(parse(&c, a3), -EINVAL);
    assert_err_mentions("--threads");

    const char *const a4[] = {"-x", NULL};
    ck_assert_int_eq(parse(&c, a4), -EINVAL);
}
END_TEST

START_TEST(test_parse_help_version)
{
    /* the usage text goes to stdout; keep the test log readable */
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
    struct config c;
    const char *const a1[] = {"--version", NULL};
    ck_assert_int_eq(parse(&c, a1), 1);
    const char *const a2[] = {"--help", NULL};
    ck_assert_int_eq(parse(&c, a2), 1);
}
END_TEST

/* config_parse resets getopt (optind = 1): several calls in one process each start afresh. */
START_TEST(test_parse_repeated)
{
    struct config c;
    config_defaults(&c);
    const char *const a1[] = {"--threads=3", "--nope", NULL};
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    const char *const a2[] = {"--threads=5", NULL};
    ck_assert_int_eq(parse(&c, a2), 0);
    ck_assert_int_eq(c.threads, 5);
    ck_assert_int_eq(parse(&c, NULL), 0);
    assert_defaults(&c);
}
END_TEST

/* An unknown short option inside a cluster: the error must name it, not argv[0]. */
START_TEST(test_parse_unknown_short_in_cluster)
{
    struct config c;
    const char *const a1[] = {"-xh", NULL};
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    assert_err_mentions("-x");
}
END_TEST

/* getopt stopped in the middle of "-xh"; the next config_parse must not resume at the stale 'h'
 * (glibc keeps its scan position across calls unless optind is reset to 0). */
START_TEST(test_parse_fresh_after_cluster_error)
{
    struct config c;
    const char *const a1[] = {"-xh", NULL};
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    const char *const a2[] = {"--threads=3", NULL};
    int rc = parse(&c, a2);
    ck_assert_msg(rc == 0, "second config_parse(--threads=3) = %d, err \"%s\"", rc, g_err);
    ck_assert_int_eq(c.threads, 3);
}
END_TEST

/* rediss:// is refused with the supported way (a local TLS tunnel), and the URL, which may carry
 * a password, is not echoed. */
START_TEST(test_parse_tls_refused)
{
    struct config c;
    const char *a[] = {"--redis", "rediss://:secret@redis.example:6380/0", NULL};
    ck_assert_int_eq(parse(&c, a), -EINVAL);
    assert_err_mentions("--redis");
    assert_err_mentions("stunnel4");
    assert_err_mentions("schema/stunnel-redis.conf");
    ck_assert_ptr_null(strstr(g_err, "secret"));
    const char *b[] = {"--cache-redis", "rediss://cache.example:6380", NULL};
    ck_assert_int_eq(parse(&c, b), -EINVAL);
    assert_err_mentions("--cache-redis");
    assert_err_mentions("TLS");
}
END_TEST

/* redis-cluster:// through the flag and RANKD_REDIS_URL; a bad one is named without echoing it
 * (it may carry a password). */
START_TEST(test_parse_cluster_url)
{
    struct config c;
    const char *a[] = {"--redis", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001", NULL};
    ck_assert_int_eq(parse(&c, a), 0);
    ck_assert_int_eq(c.redis.mode, REDIS_URL_CLUSTER);
    ck_assert_int_eq(c.redis.nseeds, 2);
    ck_assert_int_eq(c.redis.seeds[1].port, 7001);
    setenv("RANKD_REDIS_URL", "redis-cluster://:pw@n1:7000,n2", 1);
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.redis.mode, REDIS_URL_CLUSTER);
    ck_assert_str_eq(c.redis.seeds[1].host, "n2");
    ck_assert_str_eq(c.redis.password, "pw");
    setenv("RANKD_REDIS_URL", "redis-cluster://:s3cret@n1/2", 1);
    ck_assert_int_eq(parse(&c, NULL), -EINVAL);
    assert_err_mentions("RANKD_REDIS_URL");
    ck_assert_ptr_null(strstr(g_err, "s3cret"));
}
END_TEST

/* --read-from-replicas: off by default; the flag alone, =on, =off or the variable (on|off); a
 * redis:// or unix:// URL (one Redis, no replica rankd would know) is refused with the URLs that
 * have replicas named, a cluster or Sentinel one is taken. */
START_TEST(test_parse_read_from_replicas)
{
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.read_from_replicas, 0);
    const char *const cl = "--redis=redis-cluster://127.0.0.1:7000";
    const char *const a1[] = {cl, "--read-from-replicas", NULL};
    ck_assert_int_eq(parse(&c, a1), 0);
    ck_assert_int_eq(c.read_from_replicas, 1);
    const char *const a2[] = {"--read-from-replicas=off", NULL};
    ck_assert_int_eq(parse(&c, a2), 0);
    ck_assert_int_eq(c.read_from_replicas, 0);
    const char *const a3[] = {"--read-from-replicas=on", "--redis=redis-sentinel://s1/mymaster",
                              NULL};
    ck_assert_int_eq(parse(&c, a3), 0);
    ck_assert_int_eq(c.read_from_replicas, 1);
    const char *const a4[] = {"--read-from-replicas=yes", cl, NULL};
    ck_assert_int_eq(parse(&c, a4), -EINVAL);
    assert_err_mentions("--read-from-replicas");

    const char *const a5[] = {"--read-from-replicas", NULL}; /* the default redis:// */
    ck_assert_int_eq(parse(&c, a5), -EINVAL);
    assert_err_mentions("--read-from-replicas");
    assert_err_mentions("redis-cluster://");
    assert_err_mentions("redis-sentinel://");
    const char *const a6[] = {"--read-from-replicas", "--redis=unix:///tmp/r.sock", NULL};
    ck_assert_int_eq(parse(&c, a6), -EINVAL);

    setenv("RANKD_READ_FROM_REPLICAS", "on", 1);
    ck_assert_int_eq(parse(&c, NULL), -EINVAL); /* the variable, with the default URL */
    assert_err_mentions("RANKD_READ_FROM_REPLICAS");
    const char *const a7[] = {cl, NULL};
    ck_assert_int_eq(parse(&c, a7), 0);
    ck_assert_int_eq(c.read_from_replicas, 1);
    const char *const a8[] = {"--read-from-replicas=off", NULL}; /* the flag wins */
    ck_assert_int_eq(parse(&c, a8), 0);
    ck_assert_int_eq(c.read_from_replicas, 0);
}
END_TEST

/* --log-format, --access-log and --write-token-file: values, defaults, and a token file that
 * cannot be read is a bad configuration (named, exit 2), not a rankd without writes. */
START_TEST(test_parse_ops_options)
{
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.log_format, 0);
    ck_assert_int_eq(c.access_log, 1);
    ck_assert_str_eq(c.write_token_file, "");
    const char *const a1[] = {"--log-format=json", "--access-log=off", NULL};
    ck_assert_int_eq(parse(&c, a1), 0);
    ck_assert_int_eq(c.log_format, 1);
    ck_assert_int_eq(c.access_log, 0);
    const char *const a2[] = {"--log-format=xml", NULL};
    ck_assert_int_eq(parse(&c, a2), -EINVAL);
    assert_err_mentions("--log-format");
    const char *const a3[] = {"--access-log=yes", NULL};
    ck_assert_int_eq(parse(&c, a3), -EINVAL);
    const char *const a4[] = {"--write-token-file=/nonexistent/tokens", NULL};
    ck_assert_int_eq(parse(&c, a4), -EINVAL);
    assert_err_mentions("/nonexistent/tokens");
    assert_err_mentions("No such file");
    char path[] = "/tmp/rankd-cfg-XXXXXX";
    int fd = mkstemp(path);
    const char *two = "token-one-0123456789\ntoken-two-0123456789 scores\n";
    ck_assert_int_eq(write(fd, two, strlen(two)), (ssize_t)strlen(two));
    close(fd);
    char flag[64];
    snprintf(flag, sizeof(flag), "--write-token-file=%s", path);
    const char *const a5[] = {flag, NULL};
    ck_assert_int_eq(parse(&c, a5), 0);
    ck_assert_str_eq(c.write_token_file, path);
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_eq(write(fd, "token-one-0123456789 b\n", 22), 22); /* not a scope: refused */
    close(fd);
    ck_assert_int_eq(parse(&c, a5), -EINVAL);
    assert_err_mentions("line 1");
    const char *const a6[] = {"--write-token=abc", NULL}; /* under 16 bytes */
    ck_assert_int_eq(parse(&c, a6), -EINVAL);
    assert_err_mentions("at least 16 bytes");
    ck_assert_ptr_null(strstr(g_err, "abc"));
    unlink(path);
}
END_TEST

/* --embed-frame-ancestors: a CSP source list, * by default; nothing that could end the directive
 * or add one to the header (; , quotes other than 'self' and 'none'), 'none' alone. */
START_TEST(test_parse_embed_frame_ancestors)
{
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_str_eq(c.embed_frame_ancestors, "*");
    static const char *const good[] = {"https://game.example",
                                       "https://game.example  https://*.example.com:8443 'self'",
                                       "'none'",
                                       "'self'",
                                       "game.example http://[::1]:8080",
                                       "*"};
    char flag[CONFIG_STR_MAX];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        snprintf(flag, sizeof(flag), "--embed-frame-ancestors=%s", good[i]);
        const char *const a[] = {flag, NULL};
        ck_assert_msg(parse(&c, a) == 0, "%s: %s", good[i], g_err);
        ck_assert_str_eq(c.embed_frame_ancestors, good[i]);
    }
    static const char *const bad[] = {"",
                                      "   ",
                                      "https://a.example; script-src *",
                                      "https://a.example, https://b.example",
                                      "'none' https://a.example",
                                      "'unsafe-inline'",
                                      "\"https://a.example\"",
                                      "https://a.example\r\nX-Evil: 1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(flag, sizeof(flag), "--embed-frame-ancestors=%s", bad[i]);
        const char *const a[] = {flag, NULL};
        ck_assert_msg(parse(&c, a) == -EINVAL, "'%s' was taken", bad[i]);
        assert_err_mentions("--embed-frame-ancestors");
    }
    char longest[420];
    memset(longest, 'a', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    snprintf(flag, sizeof(flag), "--embed-frame-ancestors=%s", longest);
    const char *const a[] = {flag, NULL};
    ck_assert_int_eq(parse(&c, a), -EINVAL);
}
END_TEST

/* --redis-password-file: the file's line (a trailing newline dropped) is the password of the data
 * and the cache Redis, unless a URL gives its own (which is noted, for main.c's warning); a
 * missing, empty or many-line file is a bad configuration that never quotes the password. */
START_TEST(test_parse_redis_password_file)
{
    char path[] = "/tmp/rankd-pw-XXXXXX", flag[64];
    int fd = mkstemp(path);
    ck_assert_int_eq(write(fd, "pa ss:w@rd\r\n", 12), 12);
    close(fd);
    snprintf(flag, sizeof(flag), "--redis-password-file=%s", path);
    struct config c;
    const char *const a1[] = {flag, "--cache-redis=redis://127.0.0.1:6380/0", NULL};
    ck_assert_int_eq(parse(&c, a1), 0);
    ck_assert_str_eq(c.redis.password, "pa ss:w@rd");
    ck_assert_str_eq(c.cache_redis.password, "pa ss:w@rd");
    ck_assert_int_eq(c.password_in_url, 0);
    const char *const a2[] = {flag, "--redis=redis://:own@127.0.0.1:6379/0", NULL};
    ck_assert_int_eq(parse(&c, a2), 0);
    ck_assert_str_eq(c.redis.password, "own");
    ck_assert_int_eq(c.password_in_url, 1);
    setenv("RANKD_REDIS_PASSWORD_FILE", path, 1);
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_str_eq(c.redis.password, "pa ss:w@rd");
    unsetenv("RANKD_REDIS_PASSWORD_FILE");
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_eq(write(fd, "one\ntwo\n", 8), 8);
    close(fd);
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    assert_err_mentions("one line");
    ck_assert_ptr_null(strstr(g_err, "one\n"));
    ck_assert_ptr_null(strstr(g_err, "two"));
    unlink(path);
    ck_assert_int_eq(parse(&c, a1), -EINVAL);
    assert_err_mentions("--redis-password-file");
    assert_err_mentions("No such file");
}
END_TEST

/* --write-replicas: 0 (asynchronous replication) by default, 0..16, flag or variable. */
START_TEST(test_parse_write_replicas)
{
    struct config c;
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.write_replicas, 0);
    const char *const a1[] = {"--write-replicas=2", NULL};
    ck_assert_int_eq(parse(&c, a1), 0);
    ck_assert_int_eq(c.write_replicas, 2);
    setenv("RANKD_WRITE_REPLICAS", "16", 1);
    ck_assert_int_eq(parse(&c, NULL), 0);
    ck_assert_int_eq(c.write_replicas, 16);
    ck_assert_int_eq(parse(&c, a1), 0); /* the flag wins */
    ck_assert_int_eq(c.write_replicas, 2);
    setenv("RANKD_WRITE_REPLICAS", "17", 1);
    ck_assert_int_eq(parse(&c, NULL), -EINVAL);
    assert_err_mentions("RANKD_WRITE_REPLICAS");
    unsetenv("RANKD_WRITE_REPLICAS");
    const char *const bad[][2] = {{"--write-replicas=-1", NULL}, {"--write-replicas=x", NULL}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(parse(&c, bad[i]), -EINVAL);
        assert_err_mentions("--write-replicas");
    }
}
END_TEST

/* ---- config_help: the option table printed for --help, the man page and the docs ---------- */

/* config_help(format) into a new string (free()). */
static char *help_text(int format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(config_help(f, format, "rankd"), 0);
    fclose(f);
    return buf;
}

/* s with each '-' as troff's "\-", as the man page prints flags. */
static void man_dashes(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 3 < cap; s++) {
        if (*s == '-')
            out[n++] = '\\';
        out[n++] = *s;
    }
    out[n] = '\0';
}

/* Every row of the table is in every format, once, with its flag, variable and default; the
 * Markdown table has exactly one line per row (so make docs' table and the man page cannot leave
 * an option out), and every variable the table names is a RANKD_* one. */
START_TEST(test_help_lists_every_option)
{
    char *text = help_text(CONFIG_HELP_TEXT);
    char *man = help_text(CONFIG_HELP_MAN);
    char *md = help_text(CONFIG_HELP_MARKDOWN);
    int n = config_option_count();
    ck_assert_int_ge(n, 28);
    ck_assert_ptr_null(config_option_at(n));
    ck_assert_ptr_null(config_option_at(-1));
    for (int i = 0; i < n; i++) {
        const struct config_option *o = config_option_at(i);
        char want[256], esc[128];
        ck_assert_msg(strncmp(o->env, "RANKD_", 6) == 0, "%s", o->env);
        ck_assert_msg(o->help && o->help[0] && o->deflt, "--%s", o->flag);

        snprintf(want, sizeof(want), "  --%s%s%s", o->flag, o->flags & CONFIG_SWITCH ? "[=" : "=",
                 o->value);
        ck_assert_msg(strstr(text, want), "--help lacks %s", want);
        snprintf(want, sizeof(want), "env %s, default \"%s\"", o->env, o->deflt);
        ck_assert_msg(strstr(text, want), "--help lacks %s", want);

        man_dashes(o->flag, esc, sizeof(esc));
        snprintf(want, sizeof(want), ".TP\n.B%s \\-\\-%s%s", o->flags & CONFIG_SWITCH ? "R" : "I",
                 esc, o->flags & CONFIG_SWITCH ? " [ =" : "= ");
        ck_assert_msg(strstr(man, want), "--help=man lacks %s", want);
        snprintf(want, sizeof(want), ".BR %s \"; default\"", o->env);
        ck_assert_msg(strstr(man, want), "--help=man lacks %s", want);

        snprintf(want, sizeof(want), "\n| `--%s` | `%s` | ", o->flag, o->env);
        const char *at = strstr(md, want);
        ck_assert_msg(at, "--help=markdown lacks %s", want);
        ck_assert_ptr_null(strstr(at + 1, want)); /* once */
    }
    int lines = 0;
    for (const char *p = md; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, n + 2); /* the header, its rule, one line a row */
    free(text);
    free(man);
    free(md);
}
END_TEST

/* --help=man and --help=markdown print (1, like --help); another format is a bad option. */
START_TEST(test_help_formats)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
    struct config c;
    const char *const a1[] = {"--help=man", NULL};
    ck_assert_int_eq(parse(&c, a1), 1);
    const char *const a2[] = {"--help=markdown", NULL};
    ck_assert_int_eq(parse(&c, a2), 1);
    const char *const a3[] = {"--help=text", NULL};
    ck_assert_int_eq(parse(&c, a3), 1);
    const char *const a4[] = {"--help=html", NULL};
    ck_assert_int_eq(parse(&c, a4), -EINVAL);
    assert_err_mentions("--help");
    assert_err_mentions("'html'");
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");

    TCase *tc = tcase_create("redis_url");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_redis_url_tcp);
    tcase_add_test(tc, test_redis_url_auth);
    tcase_add_test(tc, test_redis_url_ipv6);
    tcase_add_test(tc, test_redis_url_unix);
    tcase_add_test(tc, test_redis_url_bad);
    tcase_add_test(tc, test_redis_url_bad_escape_strict);
    tcase_add_test(tc, test_redis_url_cluster);
    tcase_add_test(tc, test_redis_url_cluster_bad);
    tcase_add_test(tc, test_redis_url_sentinel);
    suite_add_tcase(s, tc);

    tc = tcase_create("listen");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_listen);
    tcase_add_test(tc, test_listen_bad);
    suite_add_tcase(s, tc);

    tc = tcase_create("parse");
    tcase_set_timeout(tc, 5);
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_test(tc, test_parse_defaults);
    tcase_add_test(tc, test_parse_flags);
    tcase_add_test(tc, test_parse_env);
    tcase_add_test(tc, test_parse_flag_wins);
    tcase_add_test(tc, test_parse_bad_threads_flag);
    tcase_add_test(tc, test_parse_bad_threads_env);
    tcase_add_test(tc, test_parse_error_hides_secrets);
    tcase_add_test(tc, test_parse_bad_names);
    tcase_add_test(tc, test_parse_unknown);
    tcase_add_test(tc, test_parse_help_version);
    tcase_add_test(tc, test_parse_repeated);
    tcase_add_test(tc, test_parse_unknown_short_in_cluster);
    tcase_add_test(tc, test_parse_fresh_after_cluster_error);
    tcase_add_test(tc, test_parse_tls_refused);
    tcase_add_test(tc, test_parse_cluster_url);
    tcase_add_test(tc, test_parse_ops_options);
    tcase_add_test(tc, test_parse_read_from_replicas);
    tcase_add_test(tc, test_parse_write_replicas);
    tcase_add_test(tc, test_parse_redis_password_file);
    tcase_add_test(tc, test_parse_embed_frame_ancestors);
    suite_add_tcase(s, tc);

    tc = tcase_create("help");
    tcase_set_timeout(tc, 5);
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_test(tc, test_help_lists_every_option);
    tcase_add_test(tc, test_help_formats);
    suite_add_tcase(s, tc);

    return s;
}
