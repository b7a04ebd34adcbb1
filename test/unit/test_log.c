/* test_log.c -- log lines (log.h), request ids (access.h) and token files (tokens.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "access.h"
#include "exporter.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "suites.h"
#include "tokens.h"

/* 2026-12-01T10:00:00.123456Z */
#define T0 (1796119200LL * 1000000 + 123456)

START_TEST(test_text_line)
{
    char line[512];
    size_t n = log_format(line, sizeof(line), LOG_FORMAT_TEXT, T0, LOG_LEVEL_WARN,
                          "redis: connect: Connection refused", NULL);
    ck_assert_str_eq(line,
                     "2026-12-01T10:00:00.123Z rankd warn: redis: connect: Connection refused\n");
    ck_assert_uint_eq(n, strlen(line));
}
END_TEST

START_TEST(test_text_access_line)
{
    struct log_request r = {.method = "GET",
                            .route = "rank",
                            .status = 200,
                            .bytes = 3259,
                            .us = 812,
                            .cache = "hit",
                            .request_id = "abc-1"};
    char line[512];
    log_format(line, sizeof(line), LOG_FORMAT_TEXT, T0, LOG_LEVEL_INFO, NULL, &r);
    ck_assert_str_eq(line, "2026-12-01T10:00:00.123Z rankd info: access method=GET route=rank "
                           "status=200 bytes=3259 us=812 cache=hit request_id=abc-1\n");
    /* a 5xx: its code and cause, quoted (logfmt) since the cause has spaces and quotes */
    struct log_request e = {.method = "POST",
                            .route = "scores",
                            .status = 503,
                            .bytes = 10,
                            .us = 1000,
                            .request_id = "x",
                            .error = "redis_unavailable",
                            .cause = "Redis said \"no\"",
                            .aborted = 1};
    log_format(line, sizeof(line), LOG_FORMAT_TEXT, T0, LOG_LEVEL_ERROR, NULL, &e);
    ck_assert_str_eq(line, "2026-12-01T10:00:00.123Z rankd error: access method=POST "
                           "route=scores status=503 bytes=10 us=1000 cache=- request_id=x "
                           "error=redis_unavailable cause=\"Redis said \\\"no\\\"\" aborted=1\n");
}
END_TEST

/* The line parses as JSON and has field `key` equal to `want` (string) */
static cJSON *parse_line(const char *line)
{
    size_t n = strlen(line);
    ck_assert_msg(n > 0 && line[n - 1] == '\n', "no newline: %s", line);
    ck_assert_msg(strchr(line, '\n') == line + n - 1, "more than one line: %s", line);
    cJSON *doc = cJSON_Parse(line);
    ck_assert_msg(doc != NULL, "not JSON: %s", line);
    return doc;
}

START_TEST(test_json_access_line)
{
    struct log_request r = {.method = "GET",
                            .route = "member",
                            .status = 503,
                            .bytes = 130,
                            .us = 1587,
                            .request_id = "r1",
                            .error = "redis_unavailable",
                            .cause = "tab\there, \"quoted\", back\\slash, \x01 and caf\xc3\xa9"};
    char line[1024];
    log_format(line, sizeof(line), LOG_FORMAT_JSON, T0, LOG_LEVEL_ERROR, NULL, &r);
    cJSON *doc = parse_line(line);
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "time")->valuestring, "2026-12-01T10:00:00.123Z");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "level")->valuestring, "error");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "msg")->valuestring, "access");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "route")->valuestring, "member");
    ck_assert_int_eq(cJSON_GetObjectItem(doc, "status")->valueint, 503);
    ck_assert_int_eq(cJSON_GetObjectItem(doc, "bytes")->valueint, 130);
    ck_assert_int_eq(cJSON_GetObjectItem(doc, "us")->valueint, 1587);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(doc, "cache")));
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "cause")->valuestring,
                     "tab\there, \"quoted\", back\\slash, \x01 and caf\xc3\xa9");
    ck_assert_ptr_null(cJSON_GetObjectItem(doc, "aborted"));
    cJSON_Delete(doc);
}
END_TEST

/* Bytes that are not UTF-8 become U+FFFD: the line stays valid JSON. */
START_TEST(test_json_invalid_utf8)
{
    char line[256];
    log_format(line, sizeof(line), LOG_FORMAT_JSON, T0, LOG_LEVEL_INFO,
               "a\xff"
               "b\xc3"
               "c\xe2\x82",
               NULL);
    cJSON *doc = parse_line(line);
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "msg")->valuestring, "a\xef\xbf\xbd"
                                                                   "b\xef\xbf\xbd"
                                                                   "c\xef\xbf\xbd");
    cJSON_Delete(doc);
}
END_TEST

/* A line longer than its buffer is cut, and a cut JSON line is still one valid object. */
START_TEST(test_cut_lines_stay_valid)
{
    char msg[3000];
    for (size_t i = 0; i < sizeof(msg) - 1; i++)
        msg[i] = i % 7 == 0 ? '"' : 'x';
    msg[sizeof(msg) - 1] = '\0';
    struct log_request r = {.method = "GET", .route = "rank", .status = 500, .cause = msg};
    for (size_t cap = 64; cap <= 400; cap += 37) {
        char line[400];
        memset(line, '#', sizeof(line));
        size_t n = log_format(line, cap, LOG_FORMAT_JSON, T0, LOG_LEVEL_INFO, msg, NULL);
        ck_assert_uint_lt(n, cap);
        cJSON_Delete(parse_line(line));
        n = log_format(line, cap, LOG_FORMAT_JSON, T0, LOG_LEVEL_ERROR, NULL, &r);
        ck_assert_uint_lt(n, cap);
        cJSON_Delete(parse_line(line));
        n = log_format(line, cap, LOG_FORMAT_TEXT, T0, LOG_LEVEL_ERROR, NULL, &r);
        ck_assert_uint_lt(n, cap);
        ck_assert_int_eq(line[n - 1], '\n');
        ck_assert_int_eq(line[n], '\0');
    }
}
END_TEST

START_TEST(test_request_ids)
{
    char a[ACCESS_ID_MAX + 1], b[ACCESS_ID_MAX + 1];
    access_request_id("trace-1:abc/def+x=y@z_2.3", a);
    ck_assert_str_eq(a, "trace-1:abc/def+x=y@z_2.3");
    /* refused: empty, a space, a quote, a control byte, too long: a new id instead */
    char longest[ACCESS_ID_MAX + 2];
    memset(longest, 'a', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    const char *bad[] = {"", "a b", "a\"b", "a\nb", "caf\xc3\xa9", longest, NULL};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        access_request_id(bad[i], a);
        ck_assert_uint_eq(strlen(a), 16);
        ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 16);
    }
    longest[ACCESS_ID_MAX] = '\0'; /* exactly the maximum is kept */
    access_request_id(longest, a);
    ck_assert_str_eq(a, longest);
    access_request_id(NULL, a);
    access_request_id(NULL, b);
    ck_assert_str_ne(a, b);
}
END_TEST

/* The fault the access line states is the one the reply was made with (http_reply_error records
 * its id and, for a 5xx, its message): nothing is read back from the body. */
START_TEST(test_fault_of)
{
    struct http_reply rp = {0};
    http_reply_error(&rp, ERR_MEMBER_NOT_FOUND, "No such member.");
    ck_assert_ptr_null(rp.fault);
    ck_assert_ptr_null(access_fault_of(rp.status, rp.error, rp.fault));
    http_reply_error(&rp, ERR_REDIS_UNAVAILABLE, "Redis is down.");
    struct access_fault *f = access_fault_of(rp.status, rp.error, rp.fault);
    ck_assert_str_eq(f->code, "redis_unavailable");
    ck_assert_str_eq(f->cause, "Redis is down.");
    free(f);
    http_reply_json(&rp, 200, strdup("{}")); /* replaced: no error any more */
    ck_assert_int_eq(rp.error, ERR_NONE);
    ck_assert_ptr_null(rp.fault);
    buf_free(&rp.body);
    f = access_fault_of(500, ERR_NONE, NULL);
    ck_assert_str_eq(f->code, "internal");
    free(f);
}
END_TEST

static void free_tokens(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
}

#define OLD_T "old-token-0123456789"
#define NEW_T "new+token/=01234567"
#define A1 "a1-token-0123456789"
#define B2 "b2-token-0123456789"
#define FIXED "fixed-token-0123456789"

/* Lines: a token, its scopes; comments, blank lines, CRLF; the rules (length, characters,
 * count, scopes) each refused with the line and never the token. */
START_TEST(test_tokens_parse)
{
    char *list[TOKENS_MAX], err[256];
    static struct tokens_grant g[TOKENS_MAX];
    int n = -1;
    const char *text = "# rotation: old, then new\r\n  " OLD_T " \r\n\n\t" NEW_T
                       "  scores:daily*\tscores:weekly \n#x\n";
    ck_assert_int_eq(tokens_parse(text, strlen(text), list, g, &n, err, sizeof(err)), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(list[0], OLD_T);
    ck_assert(g[0].admin && !g[0].scores && g[0].nboards == 0); /* the token alone: admin */
    ck_assert_str_eq(list[1], NEW_T);
    ck_assert(!g[1].admin && !g[1].scores && g[1].nboards == 2);
    ck_assert_str_eq(g[1].boards[0], "daily*");
    ck_assert_str_eq(g[1].boards[1], "weekly");
    free_tokens(list, n);
    ck_assert_int_eq(tokens_parse("", 0, list, g, &n, err, sizeof(err)), 0); /* none: off */
    ck_assert_int_eq(n, 0);
    const char *bad[] = {
        OLD_T "\nshort-token\n",                      /* under 16 bytes */
        OLD_T "\n" NEW_T " score\n",                  /* not a scope */
        OLD_T "\n" NEW_T " scores:\n",                /* no name */
        OLD_T "\n" NEW_T " scores:a/b\n",             /* not a board name */
        OLD_T "\n" NEW_T " scores:*\n",               /* an empty prefix: write `scores` */
        OLD_T "\n" NEW_T " admin scores:b\xc3\xa9\n", /* not ASCII */
        OLD_T "\n" NEW_T "\x01 admin\n",              /* a control byte in the token */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(tokens_parse(bad[i], strlen(bad[i]), list, g, &n, err, sizeof(err)) ==
                          -EINVAL,
                      "accepted: %s", bad[i]);
        ck_assert_msg(strstr(err, "line 2") && !strstr(err, "token-0123") &&
                          !strstr(err, "short-token") && !strstr(err, "new+"),
                      "err: %s", err);
    }
    char scopes[400] = NEW_T;
    for (int i = 0; i <= TOKENS_SCOPES_MAX; i++)
        sprintf(scopes + strlen(scopes), " scores:b%d", i);
    ck_assert_int_eq(tokens_parse(scopes, strlen(scopes), list, g, &n, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "16 scopes"), "err: %s", err);
    char many[TOKENS_MAX * 24 + 8] = "";
    for (int i = 0; i <= TOKENS_MAX; i++)
        sprintf(many + strlen(many), "token-number-%04d\n", i);
    ck_assert_int_eq(tokens_parse(many, strlen(many), list, g, &n, err, sizeof(err)), -EINVAL);
    char big[TOKENS_LEN_MAX + 2];
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(tokens_parse(big, strlen(big), list, g, &n, err, sizeof(err)), -EINVAL);
    big[TOKENS_LEN_MAX] = '\0';
    ck_assert_int_eq(tokens_parse(big, strlen(big), list, g, &n, err, sizeof(err)), 0);
    free_tokens(list, n);
    big[TOKENS_LEN_MIN] = '\0'; /* 16 bytes: the least */
    ck_assert_int_eq(tokens_parse(big, strlen(big), list, g, &n, err, sizeof(err)), 0);
    free_tokens(list, n);
    ck_assert_int_eq(tokens_fixed_valid("abc", err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "at least 16"), "err: %s", err);
    ck_assert_int_eq(tokens_fixed_valid("", err, sizeof(err)), 0);
    ck_assert_int_eq(tokens_fixed_valid(FIXED, err, sizeof(err)), 0);
}
END_TEST

/* What a grant allows, and the scope named when it does not. */
START_TEST(test_tokens_allows)
{
    struct tokens_grant g = {0};
    char scope[96];
    const char *words[] = {"scores:daily*", "scores:weekly"};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(tokens_scope_parse(words[i], strlen(words[i]), &g), 0);
    ck_assert(tokens_allows(&g, TOKENS_NEED_BOARD, "daily-eu", scope, sizeof(scope)));
    ck_assert(tokens_allows(&g, TOKENS_NEED_BOARD, "daily", scope, sizeof(scope)));
    ck_assert(tokens_allows(&g, TOKENS_NEED_BOARD, "weekly", scope, sizeof(scope)));
    ck_assert(!tokens_allows(&g, TOKENS_NEED_BOARD, "weekly-eu", scope, sizeof(scope)));
    ck_assert_str_eq(scope, "scores:weekly-eu");
    ck_assert(!tokens_allows(&g, TOKENS_NEED_BOARD, "dail", scope, sizeof(scope)));
    ck_assert(!tokens_allows(&g, TOKENS_NEED_RECORDS, NULL, scope, sizeof(scope)));
    ck_assert_str_eq(scope, "scores");
    ck_assert(!tokens_allows(&g, TOKENS_NEED_ADMIN, NULL, scope, sizeof(scope)));
    ck_assert_str_eq(scope, "admin");
    ck_assert_int_eq(tokens_scope_parse("scores", 6, &g), 0);
    ck_assert(tokens_allows(&g, TOKENS_NEED_BOARD, "anything", scope, sizeof(scope)));
    ck_assert(tokens_allows(&g, TOKENS_NEED_RECORDS, NULL, scope, sizeof(scope)));
    ck_assert(!tokens_allows(&g, TOKENS_NEED_ADMIN, NULL, scope, sizeof(scope)));
    ck_assert_int_eq(tokens_scope_parse("admin", 5, &g), 0);
    ck_assert(tokens_allows(&g, TOKENS_NEED_ADMIN, NULL, scope, sizeof(scope)));
}
END_TEST

START_TEST(test_tokens_check_and_reload)
{
    char path[] = "/tmp/rankd-tokens-XXXXXX", err[300];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, A1 " scores:x\n", strlen(A1) + 10), (ssize_t)strlen(A1) + 10);
    close(fd);
    int world = -1;
    ck_assert_ptr_null(tokens_new("short", path, &world, err, sizeof(err)));
    ck_assert_msg(strstr(err, "--write-token") && strstr(err, "16"), "err: %s", err);
    struct tokens *t = tokens_new(FIXED, path, &world, err, sizeof(err));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(world, 0); /* mkstemp: 0600 */
    ck_assert_int_eq(tokens_count(t), 2);
    struct tokens_grant g;
    ck_assert(tokens_check(t, A1, strlen(A1), &g) && !g.admin && g.nboards == 1);
    ck_assert(tokens_check(t, FIXED, strlen(FIXED), &g) && g.admin);
    ck_assert(!tokens_check(t, "a", 1, NULL) && !tokens_check(t, A1 "2", strlen(A1) + 1, NULL) &&
              !tokens_check(t, "", 0, NULL));
    FILE *f = fopen(path, "w");
    fputs(A1 "\n" B2 " scores\n", f);
    fclose(f);
    ck_assert_int_eq(tokens_reload(t, &world, err, sizeof(err)), 3);
    ck_assert(tokens_check(t, B2, strlen(B2), &g) && g.scores && !g.admin);
    ck_assert(tokens_check(t, A1, strlen(A1), &g) && g.admin); /* its new line's grant */
    f = fopen(path, "w");
    fputs(B2 " and junk\n", f); /* refused whole: a1 and b2 stay */
    fclose(f);
    ck_assert_int_eq(tokens_reload(t, &world, err, sizeof(err)), -EINVAL);
    ck_assert(tokens_check(t, B2, strlen(B2), NULL) && tokens_check(t, A1, strlen(A1), NULL));
    f = fopen(path, "w");
    fputs("short\n", f); /* under 16 bytes: refused, the tokens in force stay */
    fclose(f);
    ck_assert_int_eq(tokens_reload(t, &world, err, sizeof(err)), -EINVAL);
    ck_assert(tokens_check(t, B2, strlen(B2), NULL) && !tokens_check(t, "short", 5, NULL));
    unlink(path);
    ck_assert_int_eq(tokens_reload(t, &world, err, sizeof(err)), -ENOENT);
    ck_assert_int_eq(tokens_count(t), 3);
    tokens_free(t);
    ck_assert_ptr_null(tokens_new(NULL, path, &world, err, sizeof(err)));
    ck_assert_msg(strstr(err, path) != NULL, "err: %s", err);
}
END_TEST

/* process_* from /proc/self/stat: a command name with spaces and parentheses does not shift the
 * fields; a cut line is refused. */
START_TEST(test_proc_stat)
{
    const char *stat = "4242 (rankd (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 9 "
                       "0 123400 249331712 1421 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17";
    struct metrics_process p;
    ck_assert_int_eq(exporter_parse_stat(stat, 1796000000, 100, 4096, &p), 0);
    ck_assert_double_eq_tol(p.cpu_seconds, 3.0, 1e-9);                 /* (250 + 50) / 100 */
    ck_assert_double_eq_tol(p.start_time_seconds, 1796001234.0, 1e-6); /* boot + 123400 / 100 */
    ck_assert_double_eq_tol(p.virtual_bytes, 249331712.0, 0.5);
    ck_assert_double_eq_tol(p.resident_bytes, 1421.0 * 4096, 0.5);
    ck_assert_int_eq(exporter_parse_stat("4242 (rankd) S 1 2 3", 0, 100, 4096, &p), -EINVAL);
    ck_assert_int_eq(exporter_parse_stat("no parenthesis", 0, 100, 4096, &p), -EINVAL);
}
END_TEST

Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("lines");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_text_line);
    tcase_add_test(tc, test_text_access_line);
    tcase_add_test(tc, test_json_access_line);
    tcase_add_test(tc, test_json_invalid_utf8);
    tcase_add_test(tc, test_cut_lines_stay_valid);
    suite_add_tcase(s, tc);
    tc = tcase_create("access");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_request_ids);
    tcase_add_test(tc, test_fault_of);
    tcase_add_test(tc, test_proc_stat);
    suite_add_tcase(s, tc);
    tc = tcase_create("tokens");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_tokens_parse);
    tcase_add_test(tc, test_tokens_allows);
    tcase_add_test(tc, test_tokens_check_and_reload);
    suite_add_tcase(s, tc);
    return s;
}
