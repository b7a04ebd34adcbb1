/* test_ops.c -- what an operator sees (issue 16): access and error logs, levels, formats, request
 * ids, the /metrics families (valid for promtool), token files re-read on SIGHUP, and the
 * warning when there is no web directory. Log tests run build/rankd as a process, its stderr in a
 * file; the rest use the in-process rankd of the checked fixture. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suites.h"

/* ---------------------------------------------------------------- helpers */

/* A raw HTTP/1.1 GET with one extra header line (or NULL); the whole response into out. */
static void raw_get(int port, const char *path, const char *header, char *out, size_t cap)
{
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    char req[512];
    int n =
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n%s%sConnection: close\r\n\r\n",
                 path, header ? header : "", header ? "\r\n" : "");
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    size_t got = 0;
    for (ssize_t k; got < cap - 1 && (k = read(fd, out + got, cap - 1 - got)) > 0;)
        got += (size_t)k;
    out[got] = '\0';
    close(fd);
}

/* The value of response header `name` (case as rankd sends it) into v, or "" */
static void header_value(const char *resp, const char *name, char *v, size_t cap)
{
    char key[64];
    snprintf(key, sizeof(key), "\r\n%s: ", name);
    const char *at = strstr(resp, key);
    v[0] = '\0';
    if (!at)
        return;
    at += strlen(key);
    size_t n = strcspn(at, "\r");
    snprintf(v, cap, "%.*s", (int)(n < cap ? n : cap - 1), at);
}

/* Wait (up to 3 s: the log's writer flushes every 50 ms) until the file holds `needle`; returns
 * the file's text (free()). Fails the test with the log when it never does. */
static char *wait_log(const char *path, const char *needle)
{
    for (int waited = 0;; waited += 20) {
        char *text = read_file(path, NULL);
        if (text && strstr(text, needle))
            return text;
        if (waited >= 3000)
            ck_abort_msg("the log never said \"%s\"; it holds:\n%s", needle, text ? text : "");
        free(text);
        usleep(20000);
    }
}

/* A private log file for a rankd process. */
static void log_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/rankd-%s-%d.log", g_redis.dir, name, (int)getpid());
}

static long write_status(int port, const char *token, const char *body)
{
    struct http_result r;
    ck_assert_int_eq(
        http_req(port, "POST", "/boards/rot/scores", body, strlen(body), NULL, token, &r), 0);
    long s = r.status;
    http_result_free(&r);
    return s;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

/* ---------------------------------------------------------------- metrics */

/* Every family is valid Prometheus text: `promtool check metrics` (Debian's prometheus package)
 * passes it after hits, misses, writes, an NDJSON upload, a 404 and a static file. */
START_TEST(metrics_pass_promtool)
{
    int ci = getenv("CI") && strcmp(getenv("CI"), "true") == 0;
    if (system("command -v promtool >/dev/null 2>&1") != 0) {
        ck_assert_msg(!ci, "promtool is missing (make deps-test installs the prometheus package)");
        return; /* locally without it: nothing to check against */
    }
    it_post_score("pm", "{\"entries\":[{\"id\":\"a\",\"score\":3},{\"id\":\"b\",\"score\":2}]}");
    ck_assert_int_eq(it_status("GET", "/boards/pm/rank", NULL), 200);
    ck_assert_int_eq(it_status("GET", "/boards/pm/rank", NULL), 200);
    ck_assert_int_eq(it_status("GET", "/boards/pm/members/a", NULL), 200);
    ck_assert_int_eq(it_status("GET", "/nope", NULL), 404);
    ck_assert_int_eq(it_status("GET", "/", NULL), 200);
    struct http_result r;
    const char *nd = "{\"id\":\"c\",\"score\":1}\nnot json\n";
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/pm/scores", nd, strlen(nd),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, "/metrics", &r), 0);
    ck_assert_int_eq(r.status, 200);
    char path[256];
    snprintf(path, sizeof(path), "%s/metrics-%d.txt", g_redis.dir, (int)getpid());
    write_text(path, r.body);
    http_result_free(&r);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > %s.out 2>&1", path, path);
    int rc = system(cmd);
    snprintf(cmd, sizeof(cmd), "%s.out", path);
    char *out = read_file(cmd, NULL);
    ck_assert_msg(rc == 0 && (!out || out[0] == 0), "promtool check metrics: %d\n%s", rc,
                  out ? out : "");
    free(out);
    unlink(path);
    unlink(cmd);
}
END_TEST

/* The families of issue 16 with values the requests above them explain. */
START_TEST(metrics_families)
{
    it_post_score("mf", "{\"id\":\"a\",\"score\":1,\"op\":\"incr\"}");
    it_post_score("mf", "{\"entries\":[{\"id\":\"b\",\"score\":5,\"op\":\"best\"},"
                        "{\"id\":\"c\",\"score\":2}]}");
    /* refused for its score (a 0-decimal board): rejected, nothing applied */
    ck_assert_int_eq(it_status("POST", "/boards/mf/scores", "{\"id\":\"d\",\"score\":1.5}"), 422);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(it_status("GET", "/boards/mf/rank", NULL), 200);
    ck_assert_int_eq(it_status("GET", "/boards/none/rank", NULL), 404);
    ck_assert_double_eq(http_metric(g_port, "rankd_writes_total{op=\"incr\",result=\"applied\"}"),
                        1);
    ck_assert_double_eq(http_metric(g_port, "rankd_writes_total{op=\"best\",result=\"applied\"}"),
                        1);
    ck_assert_double_eq(http_metric(g_port, "rankd_writes_total{op=\"set\",result=\"applied\"}"),
                        1);
    ck_assert_double_eq(http_metric(g_port, "rankd_writes_total{op=\"set\",result=\"rejected\"}"),
                        1);
    ck_assert_double_eq(
        http_metric(
            g_port,
            "rankd_http_request_duration_seconds_count{route=\"rank\",status_class=\"2xx\"}"),
        3);
    ck_assert_double_eq(
        http_metric(
            g_port,
            "rankd_http_request_duration_seconds_count{route=\"rank\",status_class=\"4xx\"}"),
        1);
    ck_assert_double_eq(http_metric(g_port,
                                    "rankd_http_request_duration_seconds_bucket{route=\"scores\","
                                    "status_class=\"4xx\",le=\"+Inf\"}"),
                        1);
    /* the event thread's connections went up, and carried the requests above */
    ck_assert_double_eq(http_metric(g_port,
                                    "rankd_redis_connection_state{thread=\"0\",conn=\"read\","
                                    "state=\"up\"}"),
                        1);
    ck_assert_double_eq(http_metric(g_port,
                                    "rankd_redis_connection_state{thread=\"0\",conn=\"read\","
                                    "state=\"down\"}"),
                        0);
    double trips = http_metric(g_port, "rankd_redis_round_trips_total{thread=\"0\",conn=\"read\"}");
    double cmds = http_metric(g_port, "rankd_redis_commands_total{thread=\"0\",conn=\"read\"}");
    ck_assert_msg(trips >= 3 && cmds >= trips, "read round trips %.0f, commands %.0f", trips, cmds);
    ck_assert_double_gt(
        http_metric(g_port, "rankd_redis_round_trips_total{thread=\"0\",conn=\"write\"}"), 0);
    ck_assert_double_eq(http_metric(g_port, "rankd_redis_in_flight{thread=\"0\",conn=\"read\"}"),
                        0);
    /* /metrics itself is the one request in progress: busy (answered from memory on the event
     * thread, never suspended) */
    ck_assert_double_eq(http_metric(g_port, "rankd_http_connection_states{thread=\"0\","
                                            "state=\"busy\"}"),
                        1);
    ck_assert_double_eq(http_metric(g_port, "rankd_http_connection_states{thread=\"0\","
                                            "state=\"waiting\"}"),
                        0);
    ck_assert_double_gt(http_metric(g_port, "process_open_fds"), 5);
    ck_assert_double_gt(http_metric(g_port, "process_resident_memory_bytes"), 1e6);
    ck_assert_double_gt(http_metric(g_port, "process_start_time_seconds"), 1.7e9);
    ck_assert_double_ge(http_metric(g_port, "process_cpu_seconds_total"), 0);
    ck_assert_double_eq(http_metric(g_port, "rankd_log_lines_dropped_total"), 0);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/metrics", &r), 0);
    ck_assert_msg(strstr(r.body, "rankd_build_info{version=\"") &&
                      strstr(r.body, "libmicrohttpd=\"0.9.") && strstr(r.body, "\"} 1\n"),
                  "%s", r.body);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- request ids */

/* A valid X-Request-Id comes back as sent; an invalid or missing one is replaced by a new id of
 * 16 hex digits, different for each request; every reply has one (errors and files too). */
START_TEST(request_ids_echoed)
{
    char resp[8192], id[200], id2[200];
    raw_get(g_port, "/healthz", "X-Request-Id: trace-42:abc", resp, sizeof(resp));
    header_value(resp, "X-Request-Id", id, sizeof(id));
    ck_assert_str_eq(id, "trace-42:abc");
    raw_get(g_port, "/healthz", "X-Request-Id: has space", resp, sizeof(resp));
    header_value(resp, "X-Request-Id", id, sizeof(id));
    ck_assert_uint_eq(strlen(id), 16);
    ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 16);
    raw_get(g_port, "/boards/nope/rank", NULL, resp, sizeof(resp));
    ck_assert_ptr_nonnull(strstr(resp, " 404 "));
    header_value(resp, "X-Request-Id", id2, sizeof(id2));
    ck_assert_uint_eq(strlen(id2), 16);
    ck_assert_str_ne(id, id2);
    raw_get(g_port, "/", NULL, resp, sizeof(resp));
    header_value(resp, "X-Request-Id", id, sizeof(id));
    ck_assert_uint_eq(strlen(id), 16);
}
END_TEST

/* ---------------------------------------------------------------- logs */

/* One access line per request with method, route, status, bytes, microseconds, cache state and
 * request id; the start-up line at info. */
START_TEST(access_log_lines)
{
    char path[256];
    log_path(path, sizeof(path), "access");
    struct rankd_proc p;
    struct rankd_proc_opts o = {.log_path = path};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    struct http_result r;
    ck_assert_int_eq(
        http_write(p.port, "POST", "/boards/al/scores", "{\"id\":\"a\",\"score\":1}", &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    char resp[8192];
    raw_get(p.port, "/boards/al/rank", "X-Request-Id: first-read", resp, sizeof(resp));
    raw_get(p.port, "/boards/al/rank", "X-Request-Id: second-read", resp, sizeof(resp));
    char *text = wait_log(path, "request_id=second-read");
    rankd_proc_stop(&p);
    ck_assert_msg(strstr(text, "rankd info: rankd ") && strstr(text, " listening on "), "%s", text);
    ck_assert_msg(strstr(text, "rankd info: access method=POST route=scores status=200 bytes="),
                  "%s", text);
    const char *miss = strstr(text, "access method=GET route=rank status=200 bytes=");
    ck_assert_msg(miss && strstr(miss, " cache=miss request_id=first-read client=127.0.0.1\n"),
                  "%s", text);
    ck_assert_msg(strstr(text, " cache=hit request_id=second-read client=127.0.0.1\n"), "%s", text);
    const char *us = strstr(miss, " us=");
    ck_assert_msg(us && atol(us + 4) > 0, "%s", text);
    ck_assert_ptr_null(strstr(text, TEST_TOKEN)); /* never a token */
    free(text);
    unlink(path);
}
END_TEST

/* --log-format json: one object a line; --access-log off drops the 2xx lines, but every 5xx is
 * still logged, as an error with its code and cause (here: no Redis at all). */
START_TEST(json_log_errors_with_cause)
{
    char path[256];
    log_path(path, sizeof(path), "json");
    struct rankd_proc p;
    const char *args[] = {"--log-format=json", "--access-log=off", NULL};
    struct rankd_proc_opts o = {.args = args, .log_path = path};
    ck_assert_int_eq(rankd_proc_start_opts(&p, 1, &o), 0); /* port 1: nothing listens */
    char resp[8192];
    raw_get(p.port, "/healthz", NULL, resp, sizeof(resp));
    raw_get(p.port, "/boards/x/members/y", "X-Request-Id: down-1", resp, sizeof(resp));
    ck_assert_ptr_nonnull(strstr(resp, " 503 "));
    char *text = wait_log(path, "\"request_id\":\"down-1\"");
    rankd_proc_stop(&p);
    int lines = 0, errors = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *doc = cJSON_Parse(line);
        ck_assert_msg(doc != NULL, "not JSON: %s", line);
        const cJSON *msg = cJSON_GetObjectItem(doc, "msg");
        const cJSON *level = cJSON_GetObjectItem(doc, "level");
        ck_assert(cJSON_IsString(msg) && cJSON_IsString(level) &&
                  cJSON_IsString(cJSON_GetObjectItem(doc, "time")));
        if (strcmp(msg->valuestring, "access") == 0) {
            ck_assert_str_eq(level->valuestring, "error");
            ck_assert_int_eq(cJSON_GetObjectItem(doc, "status")->valueint, 503);
            ck_assert_str_eq(cJSON_GetObjectItem(doc, "route")->valuestring, "member");
            ck_assert_str_eq(cJSON_GetObjectItem(doc, "error")->valuestring, "redis_unavailable");
            ck_assert_ptr_nonnull(
                strstr(cJSON_GetObjectItem(doc, "cause")->valuestring, "Connection refused"));
            errors++;
        }
        cJSON_Delete(doc);
        lines++;
    }
    ck_assert_int_eq(errors, 1); /* the 200 of /healthz: no line */
    ck_assert_int_gt(lines, 1);
    free(text);
    unlink(path);
}
END_TEST

/* --log-level debug adds the HTTP connections opened and closed per event thread; warn drops the
 * info lines (start-up, access) and keeps the warnings. */
START_TEST(log_levels)
{
    char path[256];
    log_path(path, sizeof(path), "debug");
    struct rankd_proc p;
    const char *dbg[] = {"--log-level=debug", NULL};
    struct rankd_proc_opts o = {.args = dbg, .log_path = path};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    char *text = wait_log(path, "rankd debug: http: connection closed on event thread 0");
    rankd_proc_stop(&p);
    ck_assert_ptr_nonnull(strstr(text, "rankd debug: http: connection opened on event thread 0"));
    free(text);
    const char *warn[] = {"--log-level=warn", "--static-dir=/nonexistent-web", NULL};
    o.args = warn;
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    char resp[4096];
    raw_get(p.port, "/healthz", "X-Request-Id: quiet", resp, sizeof(resp));
    text = wait_log(path, "rankd warn: static files");
    rankd_proc_stop(&p);
    free(text);
    text = read_file(path, NULL);
    ck_assert_msg(!strstr(text, " info: ") && !strstr(text, " debug: "), "%s", text);
    free(text);
    unlink(path);
}
END_TEST

/* The installed rankd answered 404 at / without a word when it found no web directory: now a
 * warning at start-up says so (and / is still a clean 404). */
START_TEST(missing_static_dir_warns)
{
    char path[256];
    log_path(path, sizeof(path), "static");
    struct rankd_proc p;
    const char *args[] = {"--static-dir=/nonexistent-web", NULL};
    struct rankd_proc_opts o = {.args = args, .log_path = path};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    char *text = wait_log(path, "rankd warn: static files: --static-dir /nonexistent-web is not a "
                                "directory: / and the web page answer 404");
    char resp[4096];
    raw_get(p.port, "/", NULL, resp, sizeof(resp));
    ck_assert_ptr_nonnull(strstr(resp, " 404 "));
    rankd_proc_stop(&p);
    free(text);
    unlink(path);
}
END_TEST

/* ---------------------------------------------------------------- tokens */

/* --write-token-file with several tokens, read again on SIGHUP (which used to be ignored):
 * rotation without a moment where either the old or the new token is refused; a broken file
 * keeps the tokens in force; SIGHUP never stops rankd. */
START_TEST(token_file_rotates_on_sighup)
{
    char tokens[256], path[256];
    snprintf(tokens, sizeof(tokens), "%s/tokens-%d", g_redis.dir, (int)getpid());
    log_path(path, sizeof(path), "tokens");
    write_text(tokens, "# rankd write tokens\nold-token-0123456789\n");
    char flag[300];
    snprintf(flag, sizeof(flag), "--write-token-file=%s", tokens);
    const char *args[] = {flag, NULL};
    struct rankd_proc p;
    struct rankd_proc_opts o = {.args = args, .log_path = path, .no_token = 1};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    const char *body = "{\"id\":\"a\",\"score\":1}";
    ck_assert_int_eq(write_status(p.port, "old-token-0123456789", body), 200);
    ck_assert_int_eq(write_status(p.port, "new-token-0123456789", body), 403);
    ck_assert_int_eq(write_status(p.port, TEST_TOKEN, body), 403);

    write_text(tokens, "old-token-0123456789\nnew-token-0123456789\n");
    kill(p.pid, SIGHUP);
    free(wait_log(path, "reload: write tokens read again from"));
    ck_assert_int_eq(write_status(p.port, "old-token-0123456789", body), 200);
    ck_assert_int_eq(write_status(p.port, "new-token-0123456789", body), 200);

    write_text(tokens, "new-token-0123456789\n");
    kill(p.pid, SIGHUP);
    free(wait_log(path, ": 1 in force"));
    ck_assert_int_eq(write_status(p.port, "old-token-0123456789", body), 403);
    ck_assert_int_eq(write_status(p.port, "new-token-0123456789", body), 200);

    write_text(tokens, "new-token-0123456789 scores:bad/name\n");
    kill(p.pid, SIGHUP);
    char *text = wait_log(path, "the 1 token loaded before stay in force");
    ck_assert_int_eq(write_status(p.port, "new-token-0123456789", body), 200);
    ck_assert_msg(strstr(text, "rankd error: reload: write tokens: ") && strstr(text, "line 1"),
                  "%s", text);
    ck_assert_ptr_null(strstr(text, "new-token-0123456789")); /* tokens are never logged */
    ck_assert_ptr_null(strstr(text, "old-token-0123456789"));
    free(text);
    ck_assert_int_eq(kill(p.pid, 0), 0); /* still running */
    rankd_proc_stop(&p);
    unlink(tokens);
    unlink(path);
}
END_TEST

/* The line that makes a token (scripts/run.sh writes .run/write-token with it, and
 * docs/operating.md's rotation recipe appends with it): od prints 16 bytes as one line, and only
 * the spaces are removed, so each token is a line of its own. */
#define TOKEN_LINE "od -An -tx1 -N16 /dev/urandom | tr -d ' '"

/* Each token of a file, in order, into toks[0..max); returns how many. */
static int read_tokens(const char *path, char toks[][64], int max)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    char line[128];
    while (n < max && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] && line[0] != '#')
            snprintf(toks[n++], 64, "%.63s", line);
    }
    fclose(f);
    return n;
}

/* The rotation recipe followed twice on a file made as make run makes it: after each SIGHUP every
 * token added so far is in force (one more each time) and each is a line of its own. Before, the
 * recipe and make run wrote a token without its newline (tr -d ' \n'), so the second token was
 * glued to the first on one line: rankd read one 64-character token, and the first got 403. The
 * docs and run.sh are read too, so neither can drift from the line tested here. */
START_TEST(token_recipe_twice_keeps_every_token)
{
    char *doc = read_file("docs/operating.md", NULL);
    char *run = read_file("scripts/run.sh", NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_ptr_nonnull(run);
    ck_assert_msg(strstr(doc, TOKEN_LINE " >> "), "docs/operating.md lacks: " TOKEN_LINE " >> ");
    ck_assert_msg(strstr(run, TOKEN_LINE " > "), "scripts/run.sh lacks: " TOKEN_LINE " > ");
    free(doc);
    free(run);

    char tokens[256], path[256], cmd[600];
    snprintf(tokens, sizeof(tokens), "%s/recipe-%d", g_redis.dir, (int)getpid());
    log_path(path, sizeof(path), "recipe");
    snprintf(cmd, sizeof(cmd), TOKEN_LINE " > %s", tokens);
    ck_assert_int_eq(system(cmd), 0);
    char flag[300];
    snprintf(flag, sizeof(flag), "--write-token-file=%s", tokens);
    const char *args[] = {flag, NULL};
    struct rankd_proc p;
    struct rankd_proc_opts o = {.args = args, .log_path = path, .no_token = 1};
    ck_assert_int_eq(rankd_proc_start_opts(&p, g_redis.port, &o), 0);
    const char *body = "{\"id\":\"a\",\"score\":1}";
    char toks[4][64];
    ck_assert_int_eq(read_tokens(tokens, toks, 4), 1);
    ck_assert_int_eq(write_status(p.port, toks[0], body), 200);

    for (int round = 1; round <= 2; round++) {
        snprintf(cmd, sizeof(cmd), TOKEN_LINE " >> %s", tokens);
        ck_assert_int_eq(system(cmd), 0);
        kill(p.pid, SIGHUP);
        char want[64];
        snprintf(want, sizeof(want), ": %d in force", round + 1);
        free(wait_log(path, want));
        ck_assert_int_eq(read_tokens(tokens, toks, 4), round + 1);
        for (int i = 0; i <= round; i++) {
            ck_assert_int_eq(strlen(toks[i]), 32);
            ck_assert_msg(write_status(p.port, toks[i], body) == 200, "token %d of %d refused",
                          i + 1, round + 1);
        }
    }
    rankd_proc_stop(&p);
    unlink(tokens);
    unlink(path);
}
END_TEST

/* A token file that cannot be read stops start-up with one line and exit code 2. */
START_TEST(token_file_missing_is_bad_configuration)
{
    char exe[4096], cmd[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    strcpy(strrchr(exe, '/') + 1, "rankd");
    snprintf(cmd, sizeof(cmd), "%s --write-token-file=/nonexistent/tokens 2>&1", exe);
    FILE *f = popen(cmd, "r");
    char line[512] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    int status = pclose(f);
    ck_assert_int_eq(WEXITSTATUS(status), 2);
    ck_assert_msg(strstr(line, "--write-token-file") && strstr(line, "/nonexistent/tokens") &&
                      strstr(line, "No such file"),
                  "%s", line);
}
END_TEST

Suite *ops_suite(void)
{
    const struct it_case cases[] = {
        {"metrics_promtool", metrics_pass_promtool},
        {"metrics_families", metrics_families},
        {"request_ids", request_ids_echoed},
        {"access_log", access_log_lines},
        {"json_errors", json_log_errors_with_cause},
        {"levels", log_levels},
        {"static_dir", missing_static_dir_warns},
        {"token_rotation", token_file_rotates_on_sighup},
        {"token_file_missing", token_file_missing_is_bad_configuration},
        {"token_recipe_twice", token_recipe_twice_keeps_every_token},
    };
    return it_suite("ops", cases, sizeof(cases) / sizeof(cases[0]));
}
