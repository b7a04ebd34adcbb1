/* test_security.c -- least privilege on real servers: scoped tokens (a game server's token posts
 * scores on its boards and nothing else), token length, secrets kept out of sight, the admin
 * listener, the client address in the access log, --check-config and sd_notify. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"

#define ADMIN_TOKEN "admin-token-0123456789"
#define DAILY_TOKEN "daily-token-0123456789"
#define SCORES_TOKEN "scores-token-0123456789"

static char s_tokens[256]; /* the token file of the in-process rankd (use_token_file) */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

static void use_token_file(struct config *cfg)
{
    snprintf(cfg->write_token_file, sizeof(cfg->write_token_file), "%s", s_tokens);
    cfg->write_token[0] = '\0';
}

/* rankd in-process with a token file of an admin, a scores and a scores:daily* token. */
static int start_scoped(struct rankd **app)
{
    snprintf(s_tokens, sizeof(s_tokens), "%s/tokens-scoped-%d", g_redis.dir, (int)getpid());
    write_text(s_tokens, "# admin, then a game server's tokens\n" ADMIN_TOKEN "\n" SCORES_TOKEN
                         " scores\n" DAILY_TOKEN "\tscores:daily* scores:monthly\n");
    *app = rankd_test_start_with(g_redis.port, "", use_token_file, NULL);
    return rankd_port(*app);
}

struct reply {
    long status;
    char code[64];
    char body[1024];
};

static struct reply req(int port, const char *method, const char *path, const char *body,
                        const char *ctype, const char *token)
{
    struct http_result r;
    ck_assert_int_eq(http_req(port, method, path, body, body ? strlen(body) : 0, ctype, token, &r),
                     0);
    struct reply out = {.status = r.status};
    snprintf(out.code, sizeof(out.code), "%s", http_error_code(&r));
    snprintf(out.body, sizeof(out.body), "%s", r.body ? r.body : "");
    http_result_free(&r);
    return out;
}

/* Every key of the test database, sorted, joined (SCAN: the sets are small). */
static char *all_keys(void)
{
    redisReply *r = redis_admin_cmd(g_admin, "EVAL %s 0",
                                    "local ks = {} local c = '0' repeat local r = redis.call("
                                    "'SCAN', c, 'COUNT', 1000) c = r[1] for _, k in ipairs(r[2]) "
                                    "do ks[#ks + 1] = k end until c == '0' table.sort(ks) "
                                    "return table.concat(ks, ' ')");
    ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
    char *s = strdup(r->str);
    freeReplyObject(r);
    return s;
}

static void expect_scope(struct reply r, const char *scope, const char *what)
{
    ck_assert_msg(r.status == 403 && strcmp(r.code, "insufficient_scope") == 0, "%s: %ld %s", what,
                  r.status, r.body);
    char quoted[80];
    snprintf(quoted, sizeof(quoted), "'%s'", scope);
    ck_assert_msg(strstr(r.body, quoted), "%s: the message names %s: %s", what, quoted, r.body);
}

/* A scores:daily* token writes to daily-eu (and scores:monthly to monthly) and is refused,
 * 403 insufficient_scope naming the scope, everything else a token allows: another board, a
 * board's settings, its deletion, a member's deletion, reset, trim, /admin/redis, a record, and
 * POST /scores naming one board outside its scopes; nothing is written (every key and the
 * board's scores are the same after). A `scores` token writes any board and records, and no
 * more; the admin token (a line with the token alone) everything. */
START_TEST(scoped_tokens)
{
    struct rankd *app = NULL;
    int port = start_scoped(&app);
    const char *one = "{\"id\":\"p1\",\"score\":10}";
    ck_assert_int_eq(req(port, "POST", "/boards/daily-eu/scores", one, NULL, DAILY_TOKEN).status,
                     200);
    ck_assert_int_eq(req(port, "POST", "/boards/monthly/scores", one, NULL, DAILY_TOKEN).status,
                     200);
    ck_assert_int_eq(req(port, "POST", "/boards/daily-eu/scores",
                         "{\"entries\":[{\"id\":\"p2\",\"score\":7},{\"id\":\"p3\",\"score\":5}]}",
                         NULL, DAILY_TOKEN)
                         .status,
                     200);
    ck_assert_int_eq(req(port, "POST", "/boards/daily-eu/scores", "{\"id\":\"p4\",\"score\":4}\n",
                         "application/x-ndjson", DAILY_TOKEN)
                         .status,
                     200);
    ck_assert_int_eq(req(port, "POST", "/scores",
                         "{\"boards\":[\"daily-eu\",\"monthly\"],\"id\":\"p5\",\"score\":3}", NULL,
                         DAILY_TOKEN)
                         .status,
                     200);
    char *before = all_keys();

    expect_scope(req(port, "POST", "/boards/weekly/scores", one, NULL, DAILY_TOKEN),
                 "scores:weekly", "a write to weekly");
    expect_scope(req(port, "POST", "/boards/weekly/scores", "{\"id\":\"p1\",\"score\":1}\n",
                     "application/x-ndjson", DAILY_TOKEN),
                 "scores:weekly", "an NDJSON upload to weekly");
    expect_scope(req(port, "POST", "/scores",
                     "{\"boards\":[\"daily-eu\",\"weekly\"],\"id\":\"p1\",\"score\":99}", NULL,
                     DAILY_TOKEN),
                 "scores:weekly", "POST /scores to daily-eu and weekly");
    expect_scope(req(port, "PUT", "/boards/daily-eu", "{\"order\":\"asc\"}", NULL, DAILY_TOKEN),
                 "admin", "PUT /boards/daily-eu");
    expect_scope(req(port, "DELETE", "/boards/daily-eu", NULL, NULL, DAILY_TOKEN), "admin",
                 "DELETE /boards/daily-eu");
    expect_scope(req(port, "DELETE", "/boards/daily-eu/members/p1", NULL, NULL, DAILY_TOKEN),
                 "admin", "a member's deletion");
    expect_scope(req(port, "POST", "/boards/daily-eu/reset", NULL, NULL, DAILY_TOKEN), "admin",
                 "reset");
    expect_scope(
        req(port, "DELETE", "/boards/daily-eu/members?below_rank=1", NULL, NULL, DAILY_TOKEN),
        "admin", "trim");
    expect_scope(req(port, "GET", "/admin/redis", NULL, NULL, DAILY_TOKEN), "admin",
                 "/admin/redis");
    expect_scope(req(port, "PUT", "/items/p1", "{\"name\":\"x\"}", NULL, DAILY_TOKEN), "scores",
                 "PUT /items/p1");
    expect_scope(req(port, "DELETE", "/items/p1", NULL, NULL, DAILY_TOKEN), "scores",
                 "DELETE /items/p1");
    expect_scope(req(port, "DELETE", "/boards/weekly", NULL, NULL, SCORES_TOKEN), "admin",
                 "a scores token's DELETE /boards/weekly");
    expect_scope(req(port, "GET", "/admin/redis", NULL, NULL, SCORES_TOKEN), "admin",
                 "a scores token's /admin/redis");
    /* Two Authorization headers, in either order, one of them the admin token: 401 unauthorized
     * and nothing written (the first was used before: the admin token first wrote, the daily
     * token first was 403; a proxy in front may check the other one). */
    for (int order = 0; order < 2; order++) {
        const char *t1 =
            order ? "Authorization: Bearer " DAILY_TOKEN : "Authorization: Bearer " ADMIN_TOKEN;
        const char *t2 =
            order ? "Authorization: Bearer " ADMIN_TOKEN : "Authorization: Bearer " DAILY_TOKEN;
        const char *headers[] = {t1, t2, NULL};
        struct http_result r;
        ck_assert_int_eq(http_req_h(port, "PUT", "/boards/daily-eu", "{\"order\":\"asc\"}", 15,
                                    "application/json", NULL, headers, &r),
                         0);
        ck_assert_msg(r.status == 401 && strcmp(http_error_code(&r), "unauthorized") == 0 &&
                          r.body && strstr(r.body, "2 Authorization headers"),
                      "two Authorization headers (admin %s): %ld %s", order ? "second" : "first",
                      r.status, r.body ? r.body : "");
        http_result_free(&r);
    }
    /* nothing written: the same keys, daily-eu's member at its score */
    char *after = all_keys();
    ck_assert_str_eq(after, before);
    ck_assert_ptr_null(strstr(after, "weekly"));
    free(before);
    free(after);
    struct reply m = req(port, "GET", "/boards/daily-eu/members/p1", NULL, NULL, NULL);
    ck_assert_msg(m.status == 200 && strstr(m.body, "\"score\":10"), "%s", m.body);
    struct reply s = req(port, "GET", "/boards/daily-eu", NULL, NULL, NULL);
    ck_assert_msg(strstr(s.body, "\"desc\""), "the order is unchanged: %s", s.body);

    /* a scores token: any board, and the records */
    ck_assert_int_eq(req(port, "POST", "/boards/weekly/scores", one, NULL, SCORES_TOKEN).status,
                     200);
    ck_assert_int_eq(req(port, "PUT", "/items/p1", "{\"name\":\"x\"}", NULL, SCORES_TOKEN).status,
                     204);
    /* the admin token (no scope on its line): everything */
    ck_assert_int_eq(req(port, "GET", "/admin/redis", NULL, NULL, ADMIN_TOKEN).status, 200);
    ck_assert_int_eq(req(port, "DELETE", "/boards/weekly", NULL, NULL, ADMIN_TOKEN).status, 204);
    /* the fixed --write-token is a full token too: the suite's own rankd */
    ck_assert_int_eq(req(g_port, "GET", "/admin/redis", NULL, NULL, TEST_TOKEN).status, 200);
    rankd_stop(app);
    unlink(s_tokens);
}
END_TEST

/* The build's rankd run with args (a shell word list), stderr and stdout read: its exit code. */
static int run_rankd(const char *args, char *out, size_t cap)
{
    char exe[4096], cmd[8192];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    strcpy(strrchr(exe, '/') + 1, "rankd");
    snprintf(cmd, sizeof(cmd), "%s %s 2>&1", exe, args);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(out, 1, cap - 1, f);
    out[got] = '\0';
    int status = pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* 1 when text is one line (a single '\n', at its end). */
static int one_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return nl && nl[1] == '\0';
}

/* A token under 16 bytes is refused at start (exit 2, one line naming the rule, never the
 * token), from the flag and from the file; and on a reload, the tokens in force staying. */
START_TEST(short_tokens_refused)
{
    char out[2048], args[600], tokens[256];
    int rc = run_rankd("--write-token=abc", out, sizeof(out));
    ck_assert_msg(rc == 2 && one_line(out) && strstr(out, "--write-token") &&
                      strstr(out, "at least 16 bytes") && !strstr(out, "abc"),
                  "exit %d: %s", rc, out);
    snprintf(tokens, sizeof(tokens), "%s/tokens-short-%d", g_redis.dir, (int)getpid());
    write_text(tokens, ADMIN_TOKEN "\nshort-token scores\n");
    snprintf(args, sizeof(args), "--write-token-file=%s", tokens);
    rc = run_rankd(args, out, sizeof(out));
    ck_assert_msg(rc == 2 && one_line(out) && strstr(out, "line 2") &&
                      strstr(out, "at least 16 bytes") && !strstr(out, "short-token"),
                  "exit %d: %s", rc, out);
    write_text(tokens, ADMIN_TOKEN " scores:daily bogus\n");
    rc = run_rankd(args, out, sizeof(out));
    ck_assert_msg(rc == 2 && one_line(out) && strstr(out, "line 1") && strstr(out, "scope"),
                  "an unknown scope: exit %d: %s", rc, out);

    /* on a reload: refused, the tokens in force stay */
    snprintf(s_tokens, sizeof(s_tokens), "%s", tokens);
    write_text(tokens, ADMIN_TOKEN "\n");
    struct rankd *app = rankd_test_start_with(g_redis.port, "", use_token_file, NULL);
    int port = rankd_port(app);
    write_text(tokens, "short-token\n");
    rankd_reload(app);
    ck_assert_int_eq(req(port, "GET", "/admin/redis", NULL, NULL, ADMIN_TOKEN).status, 200);
    ck_assert_int_eq(req(port, "GET", "/admin/redis", NULL, NULL, "short-token").status, 403);
    rankd_stop(app);
    unlink(tokens);
}
END_TEST

/* 1 when any process's command line (what ps shows) holds s. */
static int in_any_cmdline(const char *s)
{
    DIR *d = opendir("/proc");
    ck_assert_ptr_nonnull(d);
    int found = 0, seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        size_t len = 0;
        char *text = read_file(path, &len);
        if (!text)
            continue; /* gone meanwhile */
        for (size_t k = 0; k < len; k++)
            if (text[k] == '\0')
                text[k] = ' ';
        found |= strstr(text, s) != NULL;
        seen++;
        free(text);
    }
    closedir(d);
    ck_assert_int_gt(seen, 1);
    return found;
}

static char *get_body(int port, const char *path, const char *token)
{
    struct http_result r;
    ck_assert_int_eq(http_req(port, "GET", path, NULL, 0, NULL, token, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s: %ld %s", path, r.status, r.body);
    char *b = strdup(r.body);
    http_result_free(&r);
    return b;
}

#define REDIS_PW "pw-Secret-7f3a9c21"

/* --redis-password-file against a Redis with requirepass: writes and reads work, and the
 * password is in no process's command line (ps), no log line, and no reply of /metrics,
 * /admin/redis, /readyz; a password inside --redis still works and is warned about, naming
 * the file option (and the warning does not quote it). */
START_TEST(redis_password_file)
{
    struct redis_proc rp;
    ck_assert_int_eq(redis_proc_start(&rp), 0);
    redisContext *adm = redis_admin(rp.port);
    freeReplyObject(redis_admin_cmd(adm, "CONFIG SET requirepass %s", REDIS_PW));
    char pwfile[300], flag[400], logp[300];
    snprintf(pwfile, sizeof(pwfile), "%s/redis-password", rp.dir);
    write_text(pwfile, REDIS_PW "\n"); /* the trailing newline is not part of it */
    snprintf(flag, sizeof(flag), "--redis-password-file=%s", pwfile);
    snprintf(logp, sizeof(logp), "%s/rankd-pw.log", rp.dir);
    const char *args[] = {flag, NULL};
    struct rankd_proc p;
    struct rankd_proc_opts o = {.args = args, .log_path = logp};
    ck_assert_int_eq(rankd_proc_start_opts(&p, rp.port, &o), 0);
    struct reply w =
        req(p.port, "POST", "/boards/pw/scores", "{\"id\":\"a\",\"score\":5}", NULL, TEST_TOKEN);
    ck_assert_msg(w.status == 200, "a write through AUTH: %ld %s", w.status, w.body);
    struct reply m = req(p.port, "GET", "/boards/pw/members/a", NULL, NULL, NULL);
    ck_assert_msg(m.status == 200 && strstr(m.body, "\"score\":5"), "%s", m.body);
    ck_assert_msg(!in_any_cmdline(REDIS_PW), "the password is on a command line");
    const char *paths[] = {"/metrics", "/admin/redis", "/readyz", "/healthz"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char *b = get_body(p.port, paths[i], TEST_TOKEN);
        ck_assert_msg(!strstr(b, REDIS_PW), "%s shows the password", paths[i]);
        free(b);
    }
    rankd_proc_stop(&p);
    char *log = read_file(logp, NULL);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "listening on") && !strstr(log, REDIS_PW), "%s", log);
    free(log);

    /* the password inside --redis: works, warned about without quoting it */
    char url[200];
    snprintf(url, sizeof(url), "--redis=redis://:%s@127.0.0.1:%d/0", REDIS_PW, rp.port);
    const char *args2[] = {url, NULL};
    o.args = args2;
    ck_assert_int_eq(rankd_proc_start_opts(&p, rp.port, &o), 0);
    ck_assert_int_eq(req(p.port, "GET", "/boards/pw/members/a", NULL, NULL, NULL).status, 200);
    ck_assert_msg(in_any_cmdline(REDIS_PW), "the check above can see a password in ps");
    rankd_proc_stop(&p);
    log = read_file(logp, NULL);
    ck_assert_msg(log && strstr(log, "warn: the Redis password is inside --redis") &&
                      strstr(log, "--redis-password-file") && !strstr(log, REDIS_PW),
                  "%s", log ? log : "");
    free(log);

    /* a password file that cannot be read: exit 2, one line, naming it */
    char out[2048], bad[400];
    snprintf(bad, sizeof(bad), "--redis-password-file=%s/none", rp.dir);
    int rc = run_rankd(bad, out, sizeof(out));
    ck_assert_msg(rc == 2 && one_line(out) && strstr(out, "--redis-password-file"), "%d %s", rc,
                  out);
    redisFree(adm);
    redis_proc_stop(&rp);
}
END_TEST

static void admin_listen(struct config *cfg)
{
    snprintf(cfg->admin_host, sizeof(cfg->admin_host), "127.0.0.1");
    cfg->admin_port = 0;
}

/* --admin-listen: /metrics and /admin/redis answer there only (404 not_found on the public
 * port, with or without a token), /healthz and /readyz on both, everything else on the public
 * port only; /metrics there tells of the public event threads. */
START_TEST(admin_listener)
{
    ck_assert_int_eq(rankd_admin_port(g_app), -1); /* the suite's rankd: none */
    ck_assert_int_eq(req(g_port, "GET", "/metrics", NULL, NULL, NULL).status, 200);
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, admin_listen, NULL);
    int pub = rankd_port(app), adm = rankd_admin_port(app);
    ck_assert_int_gt(adm, 0);
    ck_assert_int_ne(adm, pub);
    struct reply r = req(pub, "GET", "/metrics", NULL, NULL, NULL);
    ck_assert_msg(r.status == 404 && strcmp(r.code, "not_found") == 0, "%ld %s", r.status, r.body);
    r = req(pub, "GET", "/admin/redis", NULL, NULL, TEST_TOKEN);
    ck_assert_msg(r.status == 404 && strcmp(r.code, "not_found") == 0, "%ld %s", r.status, r.body);
    char *m = get_body(adm, "/metrics", NULL); /* 200, asserted */
    ck_assert_msg(strstr(m, "rankd_build_info"), "%.300s", m);
    free(m);
    ck_assert_int_eq(req(adm, "GET", "/admin/redis", NULL, NULL, TEST_TOKEN).status, 200);
    ck_assert_int_eq(req(adm, "GET", "/admin/redis", NULL, NULL, NULL).status, 401);
    const char *probes[] = {"/healthz", "/readyz"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(req(pub, "GET", probes[i], NULL, NULL, NULL).status, 200);
        ck_assert_int_eq(req(adm, "GET", probes[i], NULL, NULL, NULL).status, 200);
    }
    ck_assert_int_eq(
        req(pub, "POST", "/boards/al/scores", "{\"id\":\"a\",\"score\":1}", NULL, TEST_TOKEN)
            .status,
        200);
    ck_assert_int_eq(req(pub, "GET", "/boards/al/rank", NULL, NULL, NULL).status, 200);
    ck_assert_int_eq(req(adm, "GET", "/boards/al/rank", NULL, NULL, NULL).status, 404);
    ck_assert_int_eq(
        req(adm, "POST", "/boards/al/scores", "{\"id\":\"b\",\"score\":1}", NULL, TEST_TOKEN)
            .status,
        404);
    /* the public event threads' series, read on the admin port */
    m = get_body(adm, "/metrics", NULL);
    ck_assert_msg(strstr(m, "thread=\"0\""), "%.300s", m);
    free(m);
    rankd_stop(app);
}
END_TEST

/* The access line of request id `id` in the log at path (waited for, 3 s), as a new string. */
static char *access_line(const char *path, const char *id)
{
    char needle[80];
    snprintf(needle, sizeof(needle), "request_id=%s ", id);
    for (int waited = 0;; waited += 20) {
        char *text = read_file(path, NULL);
        const char *at = text ? strstr(text, needle) : NULL;
        if (at) {
            const char *start = at, *end = strchr(at, '\n');
            while (start > text && start[-1] != '\n')
                start--;
            char *line = strndup(start, end ? (size_t)(end - start) : strlen(start));
            free(text);
            return line;
        }
        free(text);
        ck_assert_msg(waited < 3000, "no access line for %s in %s", id, path);
        usleep(20000);
    }
}

/* A GET with X-Request-Id `id` and X-Forwarded-For `xff` (NULL: none). */
static void get_with2(int port, const char *id, const char *xff, const char *xff2)
{
    char h1[100], h2[2100], h3[200];
    snprintf(h1, sizeof(h1), "X-Request-Id: %s", id);
    snprintf(h2, sizeof(h2), "X-Forwarded-For: %s", xff ? xff : "");
    snprintf(h3, sizeof(h3), "X-Forwarded-For: %s", xff2 ? xff2 : "");
    const char *headers[] = {h1, xff ? h2 : NULL, xff2 ? h3 : NULL, NULL};
    struct http_result r;
    ck_assert_int_eq(http_req_h(port, "GET", "/healthz", NULL, 0, NULL, NULL, headers, &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
}

static void get_with(int port, const char *id, const char *xff)
{
    get_with2(port, id, xff, NULL);
}

/* A client's own X-Forwarded-For of about `len` bytes, ending in the address it claims. */
static void padded_xff(char *out, size_t len, const char *claimed)
{
    size_t n = 0, tail = strlen(claimed);
    while (n + 8 + 2 + tail < len)
        n += (size_t)sprintf(out + n, "1.2.3.4,");
    while (n + tail < len)
        out[n++] = ' ';
    memcpy(out + n, claimed, tail + 1);
}

/* rankd with --trusted-proxies=`trusted` ("" none) logging to path; its port. */
static struct rankd_proc start_logged(const char *trusted, const char *path)
{
    char flag[200];
    snprintf(flag, sizeof(flag), "--trusted-proxies=%s", trusted);
    const char *args[] = {flag, NULL};
    struct rankd_proc p;
    struct rankd_proc_opts o = {.args = args, .log_path = path};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    return p;
}

/* The access log names the client: the peer's address (the test connects from 127.0.0.1),
 * whatever X-Forwarded-For a client sends; behind a peer in --trusted-proxies, the right-most
 * address the header names that is not itself a trusted proxy; a peer outside the list is
 * never believed. */
START_TEST(access_log_client)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/rankd-client-%d.log", g_redis.dir, (int)getpid());
    struct rankd_proc p = start_logged("", path);
    get_with(p.port, "c-plain", NULL);
    get_with(p.port, "c-forged", "203.0.113.9");
    char *l = access_line(path, "c-plain");
    ck_assert_msg(strstr(l, " client=127.0.0.1"), "%s", l);
    free(l);
    l = access_line(path, "c-forged");
    ck_assert_msg(strstr(l, " client=127.0.0.1") && !strstr(l, "203.0.113.9"), "%s", l);
    free(l);
    rankd_proc_stop(&p);

    p = start_logged("10.0.0.0/8,127.0.0.0/8", path);
    get_with(p.port, "c-proxied", "198.51.100.1, 203.0.113.9");
    get_with(p.port, "c-two-proxies", "203.0.113.7, 10.0.0.2");
    get_with(p.port, "c-no-header", NULL);
    l = access_line(path, "c-proxied");
    ck_assert_msg(strstr(l, " client=203.0.113.9") && !strstr(l, "198.51.100.1"), "%s", l);
    free(l);
    l = access_line(path, "c-two-proxies");
    ck_assert_msg(strstr(l, " client=203.0.113.7"), "%s", l);
    free(l);
    l = access_line(path, "c-no-header");
    ck_assert_msg(strstr(l, " client=127.0.0.1"), "%s", l);
    free(l);
    /* A client's long X-Forwarded-For never hides the hop its proxy appends: the header (or the
     * joined headers) kept from the right, not cut after 1,023 bytes with the real hop lost
     * (then the client's claimed 198.51.100.66 was logged and counted as its address). */
    char pad[2048];
    for (size_t len = 1000; len <= 2000; len += 500) {
        padded_xff(pad, len, "198.51.100.66");
        char one[2100], id1[40], id2[40];
        snprintf(one, sizeof(one), "%s, 203.0.113.9", pad);
        snprintf(id1, sizeof(id1), "c-long-one-%zu", len);
        snprintf(id2, sizeof(id2), "c-long-two-%zu", len);
        get_with(p.port, id1, one);
        get_with2(p.port, id2, pad, "203.0.113.9"); /* a proxy adding its own line */
        l = access_line(path, id1);
        ck_assert_msg(strstr(l, " client=203.0.113.9"), "%zu bytes: %s", len, l);
        free(l);
        l = access_line(path, id2);
        ck_assert_msg(strstr(l, " client=203.0.113.9"), "%zu bytes: %s", len, l);
        free(l);
    }
    rankd_proc_stop(&p);

    p = start_logged("10.0.0.0/8", path); /* the peer is no trusted proxy */
    get_with(p.port, "c-untrusted", "203.0.113.9");
    l = access_line(path, "c-untrusted");
    ck_assert_msg(strstr(l, " client=127.0.0.1"), "%s", l);
    free(l);
    rankd_proc_stop(&p);
    char out[1024];
    int rc = run_rankd("--trusted-proxies=10.0.0.0/33", out, sizeof(out));
    ck_assert_msg(rc == 2 && one_line(out) && strstr(out, "--trusted-proxies"), "%d %s", rc, out);
    unlink(path);
}
END_TEST

/* --check-config: exit 0 with a valid configuration, else exit 2 with one line naming what is
 * wrong, for each kind of bad file and flag; Redis is never asked (its URL points nowhere). */
START_TEST(check_config)
{
    char dir[300], tokens[400], pw[400], args[2000], out[2048];
    snprintf(dir, sizeof(dir), "%s/check-%d", g_redis.dir, (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
    snprintf(pw, sizeof(pw), "%s/pw", dir);
    write_text(tokens, ADMIN_TOKEN "\n" DAILY_TOKEN " scores:daily*\n");
    write_text(pw, "s3cret-pw\n");
    snprintf(args, sizeof(args),
             "--check-config --redis=redis://127.0.0.1:1/0 --write-token-file=%s "
             "--redis-password-file=%s",
             tokens, pw);
    int rc = run_rankd(args, out, sizeof(out));
    ck_assert_msg(rc == 0 && one_line(out) && strstr(out, "valid"), "%d %s", rc, out);
    static const struct {
        const char *what, *tokens, *pw, *extra, *says;
    } bad[] = {
        {"a short token", "short-token\n", "pw\n", "", "at least 16 bytes"},
        {"an unknown scope", ADMIN_TOKEN " superuser\n", "pw\n", "", "scope"},
        {"a token with a control byte", "admin-token-\x01-0123456789\n", "pw\n", "", "visible"},
        {"an empty password file", ADMIN_TOKEN "\n", "", "", "--redis-password-file"},
        {"a password file of two lines", ADMIN_TOKEN "\n", "a\nb\n", "", "one line"},
        {"a missing token file", NULL, "pw\n", "", "No such file"},
        {"a missing password file", ADMIN_TOKEN "\n", NULL, "", "No such file"},
        {"a bad flag value", ADMIN_TOKEN "\n", "pw\n", " --max-connections=0", "--max-connections"},
        {"an unknown flag", ADMIN_TOKEN "\n", "pw\n", " --no-such-flag", "unknown option"},
        {"a bad proxy block", ADMIN_TOKEN "\n", "pw\n", " --trusted-proxies=1.2.3.4/40",
         "--trusted-proxies"},
        {"a bad admin address", ADMIN_TOKEN "\n", "pw\n", " --admin-listen=nowhere",
         "--admin-listen"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unlink(tokens);
        unlink(pw);
        if (bad[i].tokens)
            write_text(tokens, bad[i].tokens);
        if (bad[i].pw)
            write_text(pw, bad[i].pw);
        snprintf(args, sizeof(args),
                 "--check-config --redis=redis://127.0.0.1:1/0 --write-token-file=%s "
                 "--redis-password-file=%s%s",
                 tokens, pw, bad[i].extra);
        rc = run_rankd(args, out, sizeof(out));
        ck_assert_msg(rc == 2 && one_line(out) && strstr(out, bad[i].says), "%s: exit %d: %s",
                      bad[i].what, rc, out);
    }
    unlink(tokens);
    unlink(pw);
    rmdir(dir);
}
END_TEST

/* ---------------------------------------------------------------- frames */

static char s_web[64]; /* the web page directory of the framing tests */

static void web_embed_default(struct config *cfg)
{
    snprintf(cfg->static_dir, sizeof(cfg->static_dir), "%s", s_web);
    snprintf(cfg->cors_text, sizeof(cfg->cors_text), "https://app.example");
}

static void web_embed_listed(struct config *cfg)
{
    snprintf(cfg->static_dir, sizeof(cfg->static_dir), "%s", s_web);
    snprintf(cfg->embed_frame_ancestors, sizeof(cfg->embed_frame_ancestors),
             "https://game.example https://*.example.com 'self'");
}

/* The value of reply header `name` in r ("" when absent), in out. */
static const char *header_of(const struct http_result *r, const char *name, char *out, size_t n)
{
    char want[64];
    snprintf(want, sizeof(want), "\r\n%s: ", name);
    const char *h = r->headers ? strcasestr(r->headers, want) : NULL;
    snprintf(out, n, "%.*s", h ? (int)strcspn(h + strlen(want), "\r\n") : 0,
             h ? h + strlen(want) : "");
    return out;
}

/* GET path (with an Origin) on port: the reply's X-Frame-Options and Content-Security-Policy. */
static void frame_of(int port, const char *path, char xfo[64], char csp[600], int *cors)
{
    static const char *const origin[] = {"Origin: https://app.example", NULL};
    struct http_result r;
    ck_assert_int_eq(http_req_h(port, "GET", path, NULL, 0, NULL, NULL, origin, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s: %ld", path, r.status);
    header_of(&r, "X-Frame-Options", xfo, 64);
    header_of(&r, "Content-Security-Policy", csp, 600);
    char v[128];
    *cors = header_of(&r, "Access-Control-Allow-Origin", v, sizeof(v))[0] != '\0';
    /* framing never costs the file its caching headers */
    ck_assert_msg(header_of(&r, "ETag", v, sizeof(v))[0] == '"', "GET %s: no ETag", path);
    ck_assert_str_eq(header_of(&r, "X-Content-Type-Options", v, sizeof(v)), "nosniff");
    http_result_free(&r);
}

/* The embed page (?embed=1) may be framed by the sites --embed-frame-ancestors names (any by
 * default); every other page of the web frontend (the admin table) by its own origin only, so
 * that no site can frame it under a decoy (clickjacking). Before: no framing header at all. */
START_TEST(frame_ancestors)
{
    snprintf(s_web, sizeof(s_web), "/tmp/rankd-web-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s_web));
    char path[128];
    snprintf(path, sizeof(path), "%s/index.html", s_web);
    write_text(path, "<!doctype html><title>t</title>");
    snprintf(path, sizeof(path), "%s/app.js", s_web);
    write_text(path, "export {};");
    chmod(s_web, 0755);

    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, web_embed_default, NULL);
    int port = rankd_port(app);
    char xfo[64], csp[600];
    int cors = 0;
    /* the embed page's parameter is read as the page's script reads it (URLSearchParams: the
     * name's case counts) and as rankd reads its own (given once): ?EMBED=1 or embed given
     * twice is not the embed page, so it is not framed by other sites either */
    static const char *const admin[] = {
        "/",         "/index.html", "/?embed=0",         "/?embed=true",      "/?board=b&page=2",
        "/?EMBED=1", "/?Embed=1",   "/?embed=1&embed=1", "/?embed=1&embed=0", "/?embed=0&embed=1"};
    for (size_t i = 0; i < sizeof(admin) / sizeof(admin[0]); i++) {
        frame_of(port, admin[i], xfo, csp, &cors);
        ck_assert_msg(strcmp(xfo, "SAMEORIGIN") == 0, "%s: X-Frame-Options '%s'", admin[i], xfo);
        ck_assert_msg(strcmp(csp, "frame-ancestors 'self'") == 0, "%s: CSP '%s'", admin[i], csp);
        ck_assert_msg(cors, "%s: the CORS headers are kept beside the framing ones", admin[i]);
    }
    static const char *const embed[] = {"/?embed=1", "/index.html?embed=1",
                                        "/?board=b&embed=1&me=x"};
    for (size_t i = 0; i < sizeof(embed) / sizeof(embed[0]); i++) {
        frame_of(port, embed[i], xfo, csp, &cors);
        ck_assert_msg(xfo[0] == '\0', "%s: X-Frame-Options '%s'", embed[i], xfo);
        ck_assert_msg(strcmp(csp, "frame-ancestors *") == 0, "%s: CSP '%s'", embed[i], csp);
        ck_assert(cors);
    }
    frame_of(port, "/app.js?embed=1", xfo, csp, &cors); /* not a document: no framing headers */
    ck_assert_msg(xfo[0] == '\0' && csp[0] == '\0', "app.js: '%s' '%s'", xfo, csp);
    rankd_stop(app);

    app = rankd_test_start_with(g_redis.port, TEST_TOKEN, web_embed_listed, NULL);
    port = rankd_port(app);
    frame_of(port, "/?embed=1", xfo, csp, &cors);
    ck_assert_str_eq(csp, "frame-ancestors https://game.example https://*.example.com 'self'");
    frame_of(port, "/", xfo, csp, &cors);
    ck_assert_str_eq(xfo, "SAMEORIGIN");
    ck_assert_str_eq(csp, "frame-ancestors 'self'");
    rankd_stop(app);

    snprintf(path, sizeof(path), "%s/index.html", s_web);
    unlink(path);
    snprintf(path, sizeof(path), "%s/app.js", s_web);
    unlink(path);
    rmdir(s_web);
}
END_TEST

/* systemd's notify protocol: a unix datagram socket the test binds is rankd's NOTIFY_SOCKET;
 * READY=1 (with a STATUS) comes once rankd listens and Redis answered, STOPPING=1 on SIGTERM. */
START_TEST(sd_notify_ready)
{
    char path[108];
    snprintf(path, sizeof(path), "/tmp/rankd-notify-%d", (int)getpid());
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    unlink(path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setenv("NOTIFY_SOCKET", path, 1); /* inherited by the rankd process only (Check forks) */
    struct rankd_proc p;
    ck_assert_int_eq(rankd_proc_start(&p, g_redis.port, NULL), 0);
    unsetenv("NOTIFY_SOCKET");
    char msg[512], all[2048] = "";
    while (!strstr(all, "READY=1")) {
        ssize_t n = recv(fd, msg, sizeof(msg) - 1, 0);
        ck_assert_msg(n > 0, "no READY=1 within 10 s; got: %s", all);
        msg[n] = '\0';
        strncat(all, msg, sizeof(all) - strlen(all) - 2);
        strcat(all, "\n");
    }
    ck_assert_msg(strstr(all, "STATUS=serving on 127.0.0.1:"), "%s", all);
    kill(p.pid, SIGTERM);
    all[0] = '\0';
    while (!strstr(all, "STOPPING=1")) {
        ssize_t n = recv(fd, msg, sizeof(msg) - 1, 0);
        ck_assert_msg(n > 0, "no STOPPING=1 after SIGTERM; got: %s", all);
        msg[n] = '\0';
        strncat(all, msg, sizeof(all) - strlen(all) - 1);
    }
    rankd_proc_stop(&p);
    close(fd);
    unlink(path);
}
END_TEST

Suite *security_suite(void)
{
    const struct it_case cases[] = {
        {"scoped_tokens", scoped_tokens},
        {"short_tokens_refused", short_tokens_refused},
        {"redis_password_file", redis_password_file},
        {"admin_listener", admin_listener},
        {"access_log_client", access_log_client},
        {"check_config", check_config},
        {"sd_notify_ready", sd_notify_ready},
        {"frame_ancestors", frame_ancestors},
    };
    return it_suite("security", cases, sizeof(cases) / sizeof(cases[0]));
}
