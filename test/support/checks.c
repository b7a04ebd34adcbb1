/* checks.c -- see checks.h. */
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <check.h>

#define MON_MARKER "rankd-test-monitor-end"

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void http_expect(int port, const char *method, const char *path, const char *body, long want,
                 struct http_result *r)
{
    int rc = http_req(port, method, path, body, body ? strlen(body) : 0, NULL, TEST_TOKEN, r);
    ck_assert_msg(rc == 0, "%s %s: no HTTP answer from rankd", method, path);
    ck_assert_msg(r->status == want, "%s %s %.300s -> %ld %.500s; want %ld", method, path,
                  body ? body : "", r->status, r->body, want);
}

void http_expect_free(int port, const char *method, const char *path, const char *body, long want)
{
    struct http_result r;
    http_expect(port, method, path, body, want, &r);
    http_result_free(&r);
}

void http_expect_error(int port, const char *method, const char *path, const char *body, long want,
                       const char *code)
{
    struct http_result r;
    http_expect(port, method, path, body, want, &r);
    ck_assert_msg(strcmp(http_error_code(&r), code) == 0,
                  "%s %s %.300s -> %ld %.400s; want code %s", method, path, body ? body : "",
                  r.status, r.body, code);
    http_result_free(&r);
}

cJSON *http_expect_json(int port, const char *method, const char *path, const char *body, long want)
{
    struct http_result r;
    http_expect(port, method, path, body, want, &r);
    cJSON *doc = r.json;
    r.json = NULL;
    http_result_free(&r);
    return doc;
}

double json_num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    ck_assert_msg(cJSON_IsNumber(v), "field %s is missing or not a number", name);
    return v->valuedouble;
}

const char *json_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    ck_assert_msg(cJSON_IsString(v), "field %s is missing or not a string", name);
    return v->valuestring;
}

const char *http_header_value(const struct http_result *r, const char *name, char *out, size_t n)
{
    out[0] = '\0';
    char pat[64];
    snprintf(pat, sizeof(pat), "\n%s:", name);
    const char *p = r->headers ? strcasestr(r->headers, pat) : NULL;
    if (!p)
        return out;
    p += strlen(pat);
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strcspn(p, "\r\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
    return out;
}

void board_zkey(char *out, size_t len, const char *prefix, const char *board, const char *period)
{
    snprintf(out, len, "%s:{%s}:z%s%s", prefix, board, period ? ":" : "", period ? period : "");
}

long long redis_key_int(redisContext *a, const char *cmd, const char *key)
{
    redisReply *r = redis_admin_cmd(a, "%s %s", cmd, key);
    ck_assert_msg(r->type == REDIS_REPLY_INTEGER, "%s %s: reply type %d %s", cmd, key, r->type,
                  r->type == REDIS_REPLY_ERROR ? r->str : "");
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

int board_zhas(redisContext *a, const char *prefix, const char *board, const char *period,
               const char *id)
{
    char k[256];
    board_zkey(k, sizeof(k), prefix, board, period);
    redisReply *r = redis_admin_cmd(a, "ZSCORE %s %s", k, id);
    int has = r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    return has;
}

long long board_period_start(redisContext *a, const char *prefix, const char *board,
                             const char *period)
{
    char k[256];
    board_zkey(k, sizeof(k), prefix, board, period);
    redisReply *r = redis_admin_cmd(a, "ZSCORE %s:{%s}:periods %s", prefix, board, k);
    long long v = r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : -1;
    freeReplyObject(r);
    return v;
}

long long redis_cmd_calls(redisContext *c, const char *cmd)
{
    redisReply *r = redis_admin_cmd(c, "INFO commandstats");
    ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
    char pat[64];
    snprintf(pat, sizeof(pat), "cmdstat_%s:calls=", cmd);
    long long n = 0;
    for (const char *p = r->str; (p = strstr(p, pat)) != NULL; p++) {
        if (p == r->str || p[-1] == '\n') {
            n = strtoll(p + strlen(pat), NULL, 10);
            break;
        }
    }
    freeReplyObject(r);
    return n;
}

redisContext *mon_start(int redis_port)
{
    redisContext *mon = redis_admin(redis_port);
    struct timeval tv = {10, 0};
    redisSetTimeout(mon, tv);
    redisReply *ok = redis_admin_cmd(mon, "MONITOR");
    ck_assert_msg(ok->type == REDIS_REPLY_STATUS, "MONITOR refused");
    freeReplyObject(ok);
    return mon;
}

/* Each command `mon` saw since mon_start to fn, until the ECHO sent on `admin` marks the end;
 * frees mon. */
static void mon_each(redisContext *admin, redisContext *mon,
                     void (*fn)(const struct mon_cmd *c, void *arg), void *arg)
{
    freeReplyObject(redis_admin_cmd(admin, "ECHO %s", MON_MARKER));
    for (;;) {
        void *v = NULL;
        ck_assert_msg(redisGetReply(mon, &v) == REDIS_OK && v, "MONITOR stream ended early: %s",
                      mon->errstr);
        redisReply *r = v;
        int end = r->str && strstr(r->str, MON_MARKER) != NULL;
        struct mon_cmd c;
        if (!end && r->str && mon_parse(r->str, &c) == 0)
            fn(&c, arg);
        freeReplyObject(r);
        if (end)
            break;
    }
    redisFree(mon);
}

struct mon_tally {
    char *verbs;
    size_t len;
    int n, *argc, max, *evalsha;
};

static void top_level_one(const struct mon_cmd *c, void *arg)
{
    struct mon_tally *t = arg;
    if (c->lua)
        return;
    t->n++;
    size_t at = strlen(t->verbs);
    snprintf(t->verbs + at, t->len - at, "%s%s", at ? " " : "", c->argv[0]);
}

int mon_top_level(redisContext *admin, redisContext *mon, char *verbs, size_t len)
{
    struct mon_tally t = {.verbs = verbs, .len = len};
    verbs[0] = '\0';
    mon_each(admin, mon, top_level_one, &t);
    return t.n;
}

static void scripts_one(const struct mon_cmd *c, void *arg)
{
    struct mon_tally *t = arg;
    if (c->lua) {
        t->n++;
        size_t at = strlen(t->verbs);
        snprintf(t->verbs + at, t->len - at, " %s %s", c->argv[0], c->argc > 1 ? c->argv[1] : "");
    } else if (mon_is(c, "evalsha")) {
        if (*t->evalsha < t->max)
            t->argc[*t->evalsha] = c->argc;
        (*t->evalsha)++;
    }
}

int mon_scripts(redisContext *admin, redisContext *mon, char *verbs, size_t len, int *argc, int max,
                int *evalsha)
{
    struct mon_tally t = {.verbs = verbs, .len = len, .argc = argc, .max = max, .evalsha = evalsha};
    verbs[0] = '\0';
    *evalsha = 0;
    mon_each(admin, mon, scripts_one, &t);
    return t.n;
}
