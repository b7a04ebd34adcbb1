/*
 * test_page_cache.c -- the page cache (issue 3) against a real redis-server and an in-process
 * rankd. Computations are counted from outside (INFO commandstats: page.lua's ZRANGE is the only
 * ZRANGE a page read sends; the cache lookup sends none) and from inside (the test-only
 * page_delay hook, which also stalls chosen pages):
 *   1. stampede: 200 concurrent cold requests, a 500 ms computation: one computation, one body;
 *   2. isolation: page 1 of board A stalled 3 s; cold pages of A and B answer in normal time;
 *   3. bounded wait: a hung lock holder elsewhere; 20 waiters answer within max_wait + one
 *      computation, with one computation in this process; the foreign lock is left alone;
 *   4. locks: a dead holder's lock expires after lock_ttl; an overrunning holder does not delete
 *      the next holder's lock (and lock_release.lua itself); SCRIPT FLUSH and a Redis restart;
 *   5. stale serving around the soft expiry, in one process and in two: every request from
 *      cache, one refresh per expiry window;
 *   6. freshness: a write shows within page_ttl + one computation (+ l1_ttl with the l1 tier);
 *   7. canonical keys: 1000 requests with junk parameters leave one key; a page past the end is
 *      cached too; invalid parameters (page=0 ...) send nothing to Redis;
 *   8. maxmemory + volatile-lru: pages evicted or refused, writes succeed, pages still served;
 *   9. ETag / 304 (no ZRANGE), Cache-Control, X-Cache, Age; page_ttl_ms 0; soft TTL jitter;
 *  10. generation: an old page is never served after DELETE and re-creation (nor shared with a
 *      computation in flight across the delete), even after the data Redis lost its data while
 *      a separate cache Redis kept the pages;
 *  11. breaker: a separate cache Redis dies: pages 200 uncached, fast; breaker opens; recovery;
 *  12. XFetch: hot pages refresh before they expire (beta 10): no miss, no stale;
 *  13. batched hits: concurrent hits are one HMGET + GET each, pipelined; a
 *      rankd stopped while a page is in work sends that page first.
 *
 * Tests that need special Redis state (restart, maxmemory, a second Redis) start their own
 * redis_proc, stopped by the fixture. Timing bounds are generous for a loaded 2-core machine
 * under ASan, and each is far below what the broken behaviour would take (a 2 s stall, a 10 s
 * lock, a 10 s grace window, a 1 s Redis timeout, a second computation right after the first).
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "suites.h"

/* ---------------------------------------------------------------- fixture */

#define OWN_MAX 2

static struct rankd *p_app;
static int p_port;
static struct rankd *p_app2;             /* a second rankd process, simulated in-process */
static redisContext *p_admin;            /* to the Redis the test's data lives in */
static struct redis_proc p_own[OWN_MAX]; /* this test's own redis-servers (pid 0: unused) */

static void hook_reset(void);

static void pc_setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    hook_reset();
    memset(p_own, 0, sizeof(p_own));
    p_app = NULL;
    p_app2 = NULL;
    p_port = 0;
    p_admin = redis_admin(g_redis.port);
    freeReplyObject(redis_admin_cmd(p_admin, "FLUSHALL"));
}

static void pc_teardown(void)
{
    rankd_stop(p_app2);
    p_app2 = NULL;
    rankd_stop(p_app);
    p_app = NULL;
    redisFree(p_admin);
    p_admin = NULL;
    for (int i = 0; i < OWN_MAX; i++) {
        if (!p_own[i].dir[0])
            continue;
        redis_proc_stop(&p_own[i]);
        char file[200];
        snprintf(file, sizeof(file), "%s/redis.log", p_own[i].dir);
        unlink(file);
        rmdir(p_own[i].dir);
    }
}

/* ---------------------------------------------------------------- the computation hook */

#define HOOK_RULES_MAX 8
#define HOOK_CALLS_MAX 8192

struct hook_rule {
    char board[BOARD_NAME_LEN_MAX + 1];
    int64_t page; /* 0: every page */
    int ms;
    int times; /* stalls left, -1: always */
};

struct hook_call {
    char board[BOARD_NAME_LEN_MAX + 1];
    int64_t page;
    double at; /* monotonic seconds */
};

static pthread_mutex_t h_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hook_rule h_rules[HOOK_RULES_MAX];
static int h_nrules;
static struct hook_call h_calls[HOOK_CALLS_MAX];
static int h_ncalls;

/* Runs in rankd's threads at the start of every page computation. */
static int hook_delay(const char *board, int64_t page, int size)
{
    (void)size;
    int ms = 0;
    pthread_mutex_lock(&h_mu);
    if (h_ncalls < HOOK_CALLS_MAX) {
        struct hook_call *c = &h_calls[h_ncalls++];
        snprintf(c->board, sizeof(c->board), "%s", board);
        c->page = page;
        c->at = now_s();
    }
    for (int i = 0; i < h_nrules; i++) {
        struct hook_rule *r = &h_rules[i];
        if (r->times != 0 && strcmp(r->board, board) == 0 && (r->page == 0 || r->page == page)) {
            ms = r->ms;
            if (r->times > 0)
                r->times--;
            break;
        }
    }
    pthread_mutex_unlock(&h_mu);
    return ms;
}

/* The wall clock rankd computes periods from: real time unless a test sets h_clock_ms. */
static _Atomic int64_t h_clock_ms;

static int64_t hook_clock(void)
{
    int64_t t = atomic_load(&h_clock_ms);
    if (t)
        return t;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct rankd_hooks h_hooks = {.page_delay = hook_delay, .clock_ms = hook_clock};

static void hook_reset(void)
{
    pthread_mutex_lock(&h_mu);
    h_nrules = 0;
    h_ncalls = 0;
    pthread_mutex_unlock(&h_mu);
    atomic_store(&h_clock_ms, 0);
}

/* Stall computations of board/page (0: all pages) by ms, `times` times (-1: always). */
static void hook_stall(const char *board, int64_t page, int ms, int times)
{
    pthread_mutex_lock(&h_mu);
    ck_assert(h_nrules < HOOK_RULES_MAX);
    struct hook_rule *r = &h_rules[h_nrules++];
    snprintf(r->board, sizeof(r->board), "%s", board);
    r->page = page;
    r->ms = ms;
    r->times = times;
    pthread_mutex_unlock(&h_mu);
}

/* Computations of board/page (0: any page) so far; their start times into at[0..max). */
static int hook_calls(const char *board, int64_t page, double *at, int max)
{
    int n = 0;
    pthread_mutex_lock(&h_mu);
    for (int i = 0; i < h_ncalls; i++)
        if (strcmp(h_calls[i].board, board) == 0 && (page == 0 || h_calls[i].page == page)) {
            if (at && n < max)
                at[n] = h_calls[i].at;
            n++;
        }
    pthread_mutex_unlock(&h_mu);
    return n;
}

static int hook_count(const char *board, int64_t page)
{
    return hook_calls(board, page, NULL, 0);
}

/* Wait until board/page has been computed `n` times (or fail after limit_s). */
static void hook_wait(const char *board, int64_t page, int n, double limit_s)
{
    double end = now_s() + limit_s;
    while (hook_count(board, page) < n) {
        ck_assert_msg(now_s() < end, "no computation of %s page %lld started within %.1f s", board,
                      (long long)page, limit_s);
        sleep_ms(1);
    }
}

/* ---------------------------------------------------------------- rankd and Redis helpers */

static void app_start(int redis_port, void (*tweak)(struct config *cfg))
{
    p_app = rankd_test_start_with(redis_port, TEST_TOKEN, tweak, &h_hooks);
    p_port = rankd_port(p_app);
}

/* Start this test's own redis-server number i. */
static struct redis_proc *own_redis(int i)
{
    ck_assert(i >= 0 && i < OWN_MAX);
    ck_assert_msg(redis_proc_start(&p_own[i]) == 0, "could not start this test's redis-server");
    return &p_own[i];
}

/* A number of INFO (on a cluster, summed over its masters: a board's commands run on its own). */
static long long info_field(redisContext *c, const char *section, const char *field)
{
    return redis_info_field(c, section, field);
}

/* Calls of one command so far (commands run by scripts are counted too). */
static long long cmd_calls(redisContext *c, const char *cmd)
{
    char field[64];
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", cmd);
    long long v = info_field(c, "commandstats", field);
    return v < 0 ? 0 : v;
}

static long long zrange_calls(void)
{
    return cmd_calls(p_admin, "zrange");
}

/* Keys matching pattern (SCAN; fine in tests); the first one into first[0..n). */
static int scan_keys(redisContext *c, const char *pattern, char *first, size_t n)
{
    char cursor[32] = "0";
    int count = 0;
    do {
        redisReply *r = redis_admin_cmd(c, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        ck_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            const char *k = r->element[1]->element[i]->str;
            if (strlen(k) > 5 && strcmp(k + strlen(k) - 5, ":lock") == 0)
                continue; /* locks are counted on their own */
            if (count == 0 && first)
                snprintf(first, n, "%s", k);
            count++;
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return count;
}

/* Cache keys of a board's pages (locks excluded), and its lock keys. */
static int page_keys(redisContext *c, const char *board, char *first, size_t n)
{
    char pat[200];
    snprintf(pat, sizeof(pat), "%s:{%s}:page:*", p_app->cfg.key_prefix, board);
    return scan_keys(c, pat, first, n);
}

static int lock_keys(redisContext *c, const char *board)
{
    char pat[200];
    snprintf(pat, sizeof(pat), "%s:{%s}:page:*:lock", p_app->cfg.key_prefix, board);
    redisReply *r = NULL;
    int count = 0;
    char cursor[32] = "0";
    do {
        r = redis_admin_cmd(c, "SCAN %s MATCH %s COUNT 1000", cursor, pat);
        ck_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        count += (int)r->element[1]->elements;
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return count;
}

/* The cache key of a page (schema/redis-keys.md): P:{board}:page:<base>:<size>:<page>, where
 * base (the board generation and whatever else rankd puts before size and page) comes from
 * board_base. */
static void page_key(const char *board, const char *base, int size, long long page, char *out,
                     size_t n)
{
    snprintf(out, n, "%s:{%s}:page:%s:%d:%lld", p_app->cfg.key_prefix, board, base, size, page);
}

static int fetch(int port, const char *path, const char *inm, struct http_result *out);

#define PROBE_PAGE 2147483647LL /* REQUEST_PAGE_MAX: past the end of every test board */

/* The base of the board's current page keys (its generation, ...), read from the key of a probe
 * page (past the end, size 1, cached like any page), so that the test does not depend on how
 * the generation is made or stored. Adds that one key. */
static void board_base(const char *board, char *base, size_t n)
{
    char path[128], pat[200], key[256], head[160], tail[40];
    snprintf(path, sizeof(path), "/boards/%s/rank?page=%lld&size=1", board, PROBE_PAGE);
    struct http_result r;
    ck_assert_int_eq(fetch(p_port, path, NULL, &r), 0);
    ck_assert_msg(r.status == 200, "probe %s -> %ld %s", path, r.status, r.body);
    http_result_free(&r);
    snprintf(head, sizeof(head), "%s:{%s}:page:", p_app->cfg.key_prefix, board);
    snprintf(tail, sizeof(tail), ":1:%lld", PROBE_PAGE);
    snprintf(pat, sizeof(pat), "%s*%s", head, tail);
    ck_assert_int_eq(scan_keys(p_admin, pat, key, sizeof(key)), 1);
    size_t kl = strlen(key), hl = strlen(head), tl = strlen(tail);
    ck_assert_msg(kl > hl + tl, "probe key %s", key);
    snprintf(base, n, "%.*s", (int)(kl - hl - tl), key + hl);
}

static long long key_exists(redisContext *c, const char *key)
{
    redisReply *r = redis_admin_cmd(c, "EXISTS %s", key);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* ---------------------------------------------------------------- HTTP */

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
    return buf_append(userdata, p, size * n) == 0 ? size * n : 0;
}

/* GET with an optional If-None-Match on a curl handle (whose connection is reused: keep-alive);
 * thread-safe, never asserts. 0 or -1. */
static int fetch_on(CURL *curl, int port, const char *path, const char *inm,
                    struct http_result *out)
{
    memset(out, 0, sizeof(*out));
    curl_easy_reset(curl); /* options only: the live connection stays */
    char url[1200], h[200];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    struct curl_slist *hdrs = NULL;
    if (inm) {
        snprintf(h, sizeof(h), "If-None-Match: %s", inm);
        hdrs = curl_slist_append(hdrs, h);
    }
    struct buf b = {0}, hb = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &hb);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &out->seconds);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        buf_free(&b);
        buf_free(&hb);
        return -1;
    }
    if (!b.data)
        buf_append(&b, "", 0);
    if (!hb.data)
        buf_append(&hb, "", 0);
    out->body = b.data;
    out->len = b.len;
    out->headers = hb.data;
    return 0;
}

/* The same on a new connection. */
static int fetch(int port, const char *path, const char *inm, struct http_result *out)
{
    CURL *curl = curl_easy_init();
    if (!curl) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    int rc = fetch_on(curl, port, path, inm, out);
    curl_easy_cleanup(curl);
    return rc;
}

/* PUT path body again and again (50 ms apart) until it is 201: writes must work again within
 * 3 s of Redis restarted (rankd redials). */
static void put_after_restart(const char *path, const char *body)
{
    double t0 = now_s();
    for (;;) {
        struct http_result w;
        int rc = http_write(p_port, "PUT", path, body, &w);
        long st = rc == 0 ? w.status : 0;
        if (rc == 0)
            http_result_free(&w);
        if (st == 201)
            break;
        ck_assert_msg(now_s() - t0 < 3.0, "writes fail 3 s after the restart (%ld)", st);
        sleep_ms(50);
    }
}

static const char *xcache(const struct http_result *r)
{
    static __thread char v[32]; /* per thread: the concurrent tests call it from many at once */
    return http_header_value(r, "X-Cache", v, sizeof(v));
}

/* GET that must answer `want`; the caller frees *r. */
static void get_status(const char *path, const char *inm, long want, struct http_result *r)
{
    ck_assert_msg(fetch(p_port, path, inm, r) == 0, "GET %s: no answer", path);
    ck_assert_msg(r->status == want, "GET %s -> %ld %s; want %ld", path, r->status, r->body, want);
}

static void write_status(const char *method, const char *path, const char *json, long want)
{
    struct http_result r;
    ck_assert_int_eq(http_write(p_port, method, path, json, &r), 0);
    ck_assert_msg(r.status == want, "%s %s %s -> %ld %s; want %ld", method, path, json ? json : "",
                  r.status, r.body, want);
    http_result_free(&r);
}

/* PUT board settings (created or updated). */
static void put_board(const char *board, const char *json)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    ck_assert_int_eq(http_write(p_port, "PUT", path, json, &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "PUT %s %s -> %ld %s", path, json, r.status,
                  r.body);
    http_result_free(&r);
}

/* n members <prefix>00000.. with distinct scores n..1 (so <prefix>00000 ranks first), each with
 * a record of `pad` bytes when pad > 0; batches of BOARD_BATCH_MAX. */
static void load_board(const char *board, const char *prefix, int n, int pad)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    char *padding = calloc((size_t)pad + 1, 1);
    ck_assert_ptr_nonnull(padding);
    memset(padding, 'x', (size_t)pad);
    for (int at = 0; at < n; at += BOARD_BATCH_MAX) {
        struct buf b = {0};
        ck_assert_int_eq(buf_append(&b, "{\"entries\":[", 12), 0);
        int k = 0;
        for (int i = at; i < n && i < at + BOARD_BATCH_MAX; i++, k++) {
            char e[BOARD_RECORD_BYTES_MAX + 200];
            int len = pad > 0 ? snprintf(e, sizeof(e),
                                         "%s{\"id\":\"%s%05d\",\"score\":%d,\"record\":{\"pad\":"
                                         "\"%s\"}}",
                                         i > at ? "," : "", prefix, i, n - i, padding)
                              : snprintf(e, sizeof(e), "%s{\"id\":\"%s%05d\",\"score\":%d}",
                                         i > at ? "," : "", prefix, i, n - i);
            ck_assert(len > 0 && (size_t)len < sizeof(e));
            ck_assert_int_eq(buf_append(&b, e, (size_t)len), 0);
        }
        ck_assert_int_eq(buf_append(&b, "]}", 2), 0);
        struct http_result r;
        ck_assert_int_eq(http_req(p_port, "POST", path, b.data, b.len, NULL, TEST_TOKEN, &r), 0);
        char want[64];
        snprintf(want, sizeof(want), "\"applied\":%d", k);
        ck_assert_msg(r.status == 200 && strstr(r.body, want), "loading %s: %ld %.300s", board,
                      r.status, r.body);
        http_result_free(&r);
        buf_free(&b);
    }
    free(padding);
}

/* A counter or gauge from /metrics (-1 when absent). */
static double metric(const char *name)
{
    return http_metric(p_port, name);
}

/* ---------------------------------------------------------------- concurrent requests */

struct job {
    pthread_t th;
    char path[256];
    pthread_barrier_t *start; /* NULL: go at once */
    int rc;
    struct http_result res;
    double t0, t1;
};

static void *job_run(void *arg)
{
    struct job *j = arg;
    if (j->start)
        pthread_barrier_wait(j->start);
    j->t0 = now_s();
    j->rc = fetch(p_port, j->path, NULL, &j->res);
    j->t1 = now_s();
    return NULL;
}

static void job_start(struct job *j, const char *path, pthread_barrier_t *start)
{
    memset(j, 0, sizeof(*j));
    snprintf(j->path, sizeof(j->path), "%s", path);
    j->start = start;
    ck_assert_int_eq(pthread_create(&j->th, NULL, job_run, j), 0);
}

/* Join a job and assert a 200. */
static void job_join_ok(struct job *j)
{
    pthread_join(j->th, NULL);
    ck_assert_msg(j->rc == 0, "GET %s: no answer", j->path);
    ck_assert_msg(j->res.status == 200, "GET %s -> %ld %s", j->path, j->res.status, j->res.body);
}

/* Several threads GET one path in a loop until a deadline, classifying X-Cache. */
struct stream {
    pthread_t th;
    int port;
    const char *path;
    double until;
    int pause_ms; /* between requests; -1: a new connection per request, no pause */
    int n, hit, miss, stale, bad;
    double worst, first_miss_at;
    double miss_done[16]; /* when the first misses were answered (monotonic seconds) */
    char note[200];
};

static void *stream_run(void *arg)
{
    struct stream *s = arg;
    CURL *curl = curl_easy_init(); /* one keep-alive connection per client... */
    while (curl && now_s() < s->until) {
        struct http_result r;
        double at = now_s();
        int rc = s->pause_ms < 0 ? fetch(s->port, s->path, NULL, &r) /* ...or one per request */
                                 : fetch_on(curl, s->port, s->path, NULL, &r);
        if (rc != 0) {
            s->bad++;
            snprintf(s->note, sizeof(s->note), "no answer");
            continue;
        }
        s->n++;
        char xc[32];
        http_header_value(&r, "X-Cache", xc, sizeof(xc));
        if (r.status != 200) {
            s->bad++;
            snprintf(s->note, sizeof(s->note), "status %ld %.100s", r.status, r.body);
        } else if (strcmp(xc, "hit") == 0) {
            s->hit++;
        } else if (strcmp(xc, "stale") == 0) {
            s->stale++;
        } else if (strcmp(xc, "miss") == 0) {
            if (!s->miss)
                s->first_miss_at = at;
            if (s->miss < 16)
                s->miss_done[s->miss] = at + r.seconds;
            s->miss++;
        } else {
            s->bad++;
            snprintf(s->note, sizeof(s->note), "X-Cache '%s'", xc);
        }
        if (r.seconds > s->worst)
            s->worst = r.seconds;
        http_result_free(&r);
        if (s->pause_ms > 0)
            sleep_ms(s->pause_ms);
    }
    if (!curl)
        s->bad++;
    curl_easy_cleanup(curl);
    return NULL;
}

#define STREAMS 8

#define MISSES_MAX (STREAMS * 16)

struct stream_totals {
    int n, hit, miss, stale, bad;
    double worst;
    int nmiss_done;
    double miss_done[MISSES_MAX]; /* when misses were answered (the first 16 of each stream) */
};

/* STREAMS threads GET path from the rankd instances on ports[0..nports), round robin, each on
 * its own keep-alive connection pausing pause_ms between requests (0: back to back), or with
 * pause_ms -1 on a new connection for each request, back to back. */
static struct stream_totals stream_on(const int *ports, int nports, const char *path,
                                      double seconds, int pause_ms)
{
    struct stream s[STREAMS];
    double until = now_s() + seconds;
    for (int i = 0; i < STREAMS; i++) {
        memset(&s[i], 0, sizeof(s[i]));
        s[i].port = ports[i % nports];
        s[i].pause_ms = pause_ms;
        s[i].path = path;
        s[i].until = until;
        ck_assert_int_eq(pthread_create(&s[i].th, NULL, stream_run, &s[i]), 0);
    }
    struct stream_totals t = {0};
    const char *note = "";
    for (int i = 0; i < STREAMS; i++) {
        pthread_join(s[i].th, NULL);
        t.n += s[i].n;
        t.hit += s[i].hit;
        t.miss += s[i].miss;
        for (int k = 0; k < s[i].miss && k < 16; k++)
            t.miss_done[t.nmiss_done++] = s[i].miss_done[k];
        t.stale += s[i].stale;
        t.bad += s[i].bad;
        if (s[i].worst > t.worst)
            t.worst = s[i].worst;
        if (s[i].note[0])
            note = s[i].note;
    }
    ck_assert_msg(t.bad == 0, "GET %s: %d bad answers of %d (%s)", path, t.bad, t.n, note);
    return t;
}

static struct stream_totals stream_for(const char *path, double seconds, int pause_ms)
{
    return stream_on(&p_port, 1, path, seconds, pause_ms);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---------------------------------------------------------------- 1. stampede */

#define STAMPEDE_N 200
#define STAMPEDE_MS 500
#define STAMPEDE_REQUEST_MS 4000 /* the requests' time: a waiter waits up to half of it */
#define STAMPEDE_WAIT_MS 2000    /* page_max_wait_ms: a wait for a holder in another loop */

static void tweak_stampede(struct config *cfg)
{
    cfg->request_timeout_ms = STAMPEDE_REQUEST_MS;
    cfg->page_max_wait_ms = STAMPEDE_WAIT_MS;
}

/*
 * The contract (page_cache.h): a miss shares the computation in flight on its event loop, and
 * waits for one on another loop (or held under the lock) for at most STAMPEDE_WAIT_MS here
 * (within half its request's time); only a waiter whose wait ran out computes again. So: one
 * computation, unless the first one outlived the waits; then each further one must have started
 * after a wait ran out (the lock_wait_timeouts metric, and no earlier than STAMPEDE_WAIT_MS after
 * the requests were sent). On a quiet machine the computation takes STAMPEDE_MS, a quarter of
 * the wait: there is one. Broken single-flight computes at once, for many requests.
 */
START_TEST(test_stampede_one_computation)
{
    app_start(g_redis.port, tweak_stampede);
    /* a TTL no loaded machine outruns: a request sent late (200 threads to start) must find the
     * page fresh, not stale and refreshed in the background (a second computation by design) */
    put_board("st", "{\"page_ttl_ms\":600000}");
    load_board("st", "m", 100, 0);
    hook_stall("st", 1, STAMPEDE_MS, -1);
    long long z0 = zrange_calls();
    double timeouts0 = metric("rankd_page_cache_lock_wait_timeouts_total");

    struct job *jobs = calloc(STAMPEDE_N, sizeof(*jobs));
    ck_assert_ptr_nonnull(jobs);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, STAMPEDE_N);
    double sent = now_s();
    for (int i = 0; i < STAMPEDE_N; i++)
        job_start(&jobs[i], "/boards/st/rank", &bar);
    int shared = 0;
    double worst = 0;
    for (int i = 0; i < STAMPEDE_N; i++) {
        job_join_ok(&jobs[i]);
        ck_assert_msg(jobs[i].res.len == jobs[0].res.len &&
                          memcmp(jobs[i].res.body, jobs[0].res.body, jobs[0].res.len) == 0,
                      "request %d got a different body:\n%s\nvs\n%s", i, jobs[i].res.body,
                      jobs[0].res.body);
        shared += strcmp(xcache(&jobs[i].res), "miss") == 0;
        if (jobs[i].res.seconds > worst)
            worst = jobs[i].res.seconds;
    }
    pthread_barrier_destroy(&bar);
    long long z = zrange_calls() - z0;
    double at[16];
    int computed = hook_calls("st", 1, at, 16);
    double timeouts = metric("rankd_page_cache_lock_wait_timeouts_total") - timeouts0;
    fprintf(stderr,
            "page_cache: stampede: %d requests, %d waited for the computation (X-Cache miss), "
            "%d computation(s) (the second %.3f s after the requests), ZRANGE delta %lld, waits "
            "that ran out %.0f, slowest %.3f s; metrics: lock_waits %.0f, misses_on_loop %.0f, "
            "uncached %.0f, errors %.0f\n",
            STAMPEDE_N, shared, computed, computed > 1 ? at[1] - sent : 0.0, z, timeouts, worst,
            metric("rankd_page_cache_lock_waits_total"),
            metric("rankd_page_cache_misses_on_loop_total"),
            metric("rankd_page_cache_uncached_total"), metric("rankd_page_cache_errors_total"));
    ck_assert_msg(computed >= 1 && z == computed,
                  "ZRANGE ran %lld times (commandstats) for %d computations", z, computed);
    ck_assert_msg(computed - 1 <= timeouts,
                  "%d computations of one page for %d concurrent requests, %.0f waits ran out",
                  computed, STAMPEDE_N, timeouts);
    for (int i = 1; i < computed && i < 16; i++)
        ck_assert_msg(at[i] - sent >= STAMPEDE_WAIT_MS / 1000.0 - 0.01,
                      "computation %d started %.3f s after the requests, before any wait (%.1f s) "
                      "could run out",
                      i + 1, at[i] - sent, STAMPEDE_WAIT_MS / 1000.0);
    ck_assert_msg(strstr(jobs[0].res.body, "\"m00000\""), "unexpected body %s", jobs[0].res.body);
    /* The test must have been a stampede: many requests overlapped the 500 ms computation. */
    ck_assert_msg(shared >= 20, "only %d requests overlapped the computation", shared);
    for (int i = 0; i < STAMPEDE_N; i++)
        http_result_free(&jobs[i].res);
    free(jobs);
}
END_TEST

/* ---------------------------------------------------------------- 2. isolation */

#define ISO_STALL_MS 3000
#define ISO_STALLED 5 /* requests for the stalled page */
#define ISO_SEQ 30    /* sequential cold pages per board */
#define ISO_THREADS 4
#define ISO_PER_THREAD 15
#define ISO_SAMPLES (2 * ISO_SEQ + ISO_THREADS * ISO_PER_THREAD)
#define ISO_PAGES 90      /* pages (of size 2) one measurement uses per board, at most */
#define ISO_P99_S 0.050   /* the bound on a quiet machine... */
#define ISO_P99_RATIO 4   /* ...or 4 times the same requests' p99 without a stall, if higher */
#define ISO_P99_MAX_S 1.0 /* never near the stall */

struct iso_worker {
    pthread_t th;
    int first_a, first_b; /* pages */
    double seconds[ISO_PER_THREAD];
    int bad;
    char first_bad[200]; /* what the first bad answer was */
};

static void *iso_run(void *arg)
{
    struct iso_worker *w = arg;
    for (int i = 0; i < ISO_PER_THREAD; i++) {
        char path[128];
        if (i % 2 == 0)
            snprintf(path, sizeof(path), "/boards/isoa/rank?page=%d&size=2", w->first_a + i / 2);
        else
            snprintf(path, sizeof(path), "/boards/isob/rank?size=2&page=%d", w->first_b + i / 2);
        struct http_result r = {0};
        int rc = fetch(p_port, path, NULL, &r);
        if ((rc != 0 || r.status != 200 || strcmp(xcache(&r), "miss") != 0) && w->bad++ == 0)
            snprintf(w->first_bad, sizeof(w->first_bad), "%s: rc %d, %ld, X-Cache %s after %.3f s",
                     path, rc, rc ? 0L : r.status, rc ? "-" : xcache(&r), r.seconds);
        w->seconds[i] = r.seconds;
        http_result_free(&r);
    }
    return NULL;
}

/* Cold requests for ISO_SEQ pages of isoa and of isob in turn, then ISO_THREADS clients at once,
 * from pages first_a and first_b on: their p99 (and p50, max). */
static double iso_measure(int first_a, int first_b, double *p50, double *max)
{
    double s[ISO_SAMPLES];
    int n = 0;
    for (int i = 0; i < ISO_SEQ; i++) {
        char path[128];
        snprintf(path, sizeof(path), "/boards/isoa/rank?page=%d&size=2", first_a + i);
        struct http_result r;
        get_status(path, NULL, 200, &r);
        ck_assert_str_eq(xcache(&r), "miss");
        s[n++] = r.seconds;
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/isob/rank?page=%d&size=2", first_b + i);
        get_status(path, NULL, 200, &r);
        ck_assert_str_eq(xcache(&r), "miss");
        s[n++] = r.seconds;
        http_result_free(&r);
    }
    struct iso_worker w[ISO_THREADS];
    for (int i = 0; i < ISO_THREADS; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].first_a = first_a + ISO_SEQ + i * ISO_PER_THREAD;
        w[i].first_b = first_b + ISO_SEQ + i * ISO_PER_THREAD;
        ck_assert_int_eq(pthread_create(&w[i].th, NULL, iso_run, &w[i]), 0);
    }
    for (int i = 0; i < ISO_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        ck_assert_msg(w[i].bad == 0, "worker %d: %d failed or non-miss requests, first %s", i,
                      w[i].bad, w[i].first_bad);
        for (int k = 0; k < ISO_PER_THREAD; k++)
            s[n++] = w[i].seconds[k];
    }
    qsort(s, (size_t)n, sizeof(s[0]), cmp_double);
    *p50 = s[n / 2];
    *max = s[n - 1];
    return s[(int)ceil(0.99 * n) - 1];
}

START_TEST(test_isolation_from_stalled_page)
{
    app_start(g_redis.port, NULL);
    load_board("isoa", "a", 4 * ISO_PAGES, 0);
    load_board("isob", "b", 4 * ISO_PAGES, 0);
    /* The same requests without a stall: what "normal time" is on this machine right now. */
    double b50, bmax, base = iso_measure(2 + ISO_PAGES, 1 + ISO_PAGES, &b50, &bmax);

    hook_stall("isoa", 1, ISO_STALL_MS, 1);
    struct job stalled[ISO_STALLED];
    for (int i = 0; i < ISO_STALLED; i++)
        job_start(&stalled[i], "/boards/isoa/rank?size=2", NULL);
    hook_wait("isoa", 1, 1, 5);
    double stall_at;
    hook_calls("isoa", 1, &stall_at, 1);
    sleep_ms(20); /* the other requests for page 1 are waiting for it now */
    double p50, max, p99 = iso_measure(2, 1, &p50, &max);
    double measured = now_s() - stall_at;
    double limit = base * ISO_P99_RATIO > ISO_P99_S ? base * ISO_P99_RATIO : ISO_P99_S;
    limit = limit < ISO_P99_MAX_S ? limit : ISO_P99_MAX_S;
    fprintf(stderr,
            "page_cache: isolation: %d cold requests during a %d ms stall (measured within "
            "%.3f s of it): p50 %.4f s, p99 %.4f s, max %.4f s; without a stall p50 %.4f s, p99 "
            "%.4f s, max %.4f s (limit %.3f s)\n",
            ISO_SAMPLES, ISO_STALL_MS, measured, p50, p99, max, b50, base, bmax, limit);
    ck_assert_msg(measured < ISO_STALL_MS / 1000.0 - 0.1,
                  "the measurements took %.3f s: they did not all run during the stall", measured);
    ck_assert_msg(p99 < limit,
                  "p99 %.4f s (max %.4f s) while another page was stalled; want < %.3f s", p99, max,
                  limit);

    for (int i = 0; i < ISO_STALLED; i++) {
        job_join_ok(&stalled[i]);
        ck_assert_msg(stalled[i].t1 - stall_at > ISO_STALL_MS / 1000.0 - 0.1,
                      "a request for the stalled page answered after %.3f s",
                      stalled[i].t1 - stall_at);
        http_result_free(&stalled[i].res);
    }
    ck_assert_int_eq(hook_count("isoa", 1), 1);
}
END_TEST

/* ---------------------------------------------------------------- 3. bounded wait */

#define BW_WAITERS 20
#define BW_COMPUTE_MS 100

START_TEST(test_bounded_wait_hung_holder)
{
    app_start(g_redis.port, NULL);
    load_board("bw", "m", 50, 0);
    hook_stall("bw", 1, BW_COMPUTE_MS, -1);
    char base[64], key[256], lock[300];
    board_base("bw", base, sizeof(base));
    page_key("bw", base, BOARD_PAGE_SIZE_DEFAULT, 1, key, sizeof(key));
    snprintf(lock, sizeof(lock), "%s:lock", key);
    freeReplyObject(redis_admin_cmd(p_admin, "SET %s hung-holder PX 10000", lock));
    long long z0 = zrange_calls();
    double waits0 = metric("rankd_page_cache_lock_waits_total");
    double timeouts0 = metric("rankd_page_cache_lock_wait_timeouts_total");

    struct job jobs[BW_WAITERS];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, BW_WAITERS);
    for (int i = 0; i < BW_WAITERS; i++)
        job_start(&jobs[i], "/boards/bw/rank", &bar);
    double max_wait = p_app->cfg.page_max_wait_ms / 1000.0;
    double limit = max_wait + BW_COMPUTE_MS / 1000.0 + 0.4; /* 0.75 s by default */
    double worst = 0, best = 1e9;
    for (int i = 0; i < BW_WAITERS; i++) {
        job_join_ok(&jobs[i]);
        double t = jobs[i].res.seconds;
        worst = t > worst ? t : worst;
        best = t < best ? t : best;
        ck_assert_msg(strstr(jobs[i].res.body, "\"m00000\""), "body %s", jobs[i].res.body);
        http_result_free(&jobs[i].res);
    }
    pthread_barrier_destroy(&bar);
    long long z = zrange_calls() - z0;
    int computed = hook_count("bw", 1);
    fprintf(stderr,
            "page_cache: bounded wait: %d waiters on a hung lock answered in %.3f..%.3f s "
            "(max_wait %.3f s), %d computation(s), ZRANGE delta %lld\n",
            BW_WAITERS, best, worst, max_wait, computed, z);
    ck_assert_msg(worst < limit, "a waiter took %.3f s; want < %.3f s", worst, limit);
    ck_assert_msg(best >= max_wait - 0.02, "a waiter answered in %.3f s: the lock was ignored",
                  best);
    ck_assert_msg(computed == 1 && z == 1,
                  "%d computations (ZRANGE %lld) for one key in one process; want 1", computed, z);
    ck_assert_msg(metric("rankd_page_cache_lock_waits_total") - waits0 >= 1,
                  "no lock wait counted");
    ck_assert_msg(metric("rankd_page_cache_lock_wait_timeouts_total") - timeouts0 == 1,
                  "lock wait timeouts: want exactly 1 (single-flight)");

    /* The foreign lock is not ours: still there, untouched. The page was stored without it. */
    redisReply *r = redis_admin_cmd(p_admin, "GET %s", lock);
    ck_assert_msg(r->type == REDIS_REPLY_STRING && strcmp(r->str, "hung-holder") == 0,
                  "rankd touched another holder's lock");
    freeReplyObject(r);
    struct http_result h;
    get_status("/boards/bw/rank", NULL, 200, &h);
    ck_assert_str_eq(xcache(&h), "hit");
    ck_assert_msg(h.seconds < 0.2, "a hit took %.3f s", h.seconds);
    http_result_free(&h);
}
END_TEST

/* ---------------------------------------------------------------- 4. locks and scripts */

#define LOCK_TTL_MS 300

static void tweak_lock_ttl_long_wait(struct config *cfg)
{
    cfg->page_lock_ttl_ms = LOCK_TTL_MS;
    cfg->page_max_wait_ms = 1500; /* a request waiting on a live lock would take this long */
}

START_TEST(test_dead_holder_lock_expires)
{
    app_start(g_redis.port, tweak_lock_ttl_long_wait);
    load_board("lk", "m", 100, 0);

    /* rankd's own locks carry lock_ttl. */
    hook_stall("lk", 2, 500, 1);
    struct job j;
    job_start(&j, "/boards/lk/rank?page=2", NULL);
    hook_wait("lk", 2, 1, 5);
    char base[64], key[256], lock[300];
    board_base("lk", base, sizeof(base));
    page_key("lk", base, BOARD_PAGE_SIZE_DEFAULT, 2, key, sizeof(key));
    snprintf(lock, sizeof(lock), "%s:lock", key);
    redisReply *r = redis_admin_cmd(p_admin, "PTTL %s", lock);
    ck_assert_msg(r->integer > 0 && r->integer <= LOCK_TTL_MS,
                  "the computing holder's lock has PTTL %lld; want 1..%d", r->integer, LOCK_TTL_MS);
    freeReplyObject(r);
    job_join_ok(&j);
    http_result_free(&j.res);
    ck_assert_int_eq(key_exists(p_admin, lock), 0); /* released */

    /* A holder that died: its lock goes after lock_ttl, and the next request just computes. */
    page_key("lk", base, BOARD_PAGE_SIZE_DEFAULT, 1, key, sizeof(key));
    snprintf(lock, sizeof(lock), "%s:lock", key);
    freeReplyObject(redis_admin_cmd(p_admin, "SET %s dead-holder PX %d", lock, LOCK_TTL_MS));
    double set_at = now_s();
    while (key_exists(p_admin, lock)) {
        ck_assert_msg(now_s() - set_at < 2.0, "the dead holder's lock did not expire");
        sleep_ms(10);
    }
    double waits0 = metric("rankd_page_cache_lock_waits_total");
    struct http_result h;
    get_status("/boards/lk/rank", NULL, 200, &h);
    fprintf(stderr,
            "page_cache: dead holder: lock gone after %.3f s; the next request computed in "
            "%.3f s\n",
            now_s() - set_at, h.seconds);
    ck_assert_str_eq(xcache(&h), "miss");
    ck_assert_msg(h.seconds < 0.75, "the request after the lock expired took %.3f s", h.seconds);
    ck_assert_int_eq(hook_count("lk", 1), 1);
    ck_assert_msg(metric("rankd_page_cache_lock_waits_total") == waits0,
                  "the request waited for an expired lock");
    http_result_free(&h);
    ck_assert_int_eq(key_exists(p_admin, key), 1);
}
END_TEST

static void tweak_lock_ttl(struct config *cfg)
{
    cfg->page_lock_ttl_ms = LOCK_TTL_MS;
}

START_TEST(test_overrun_keeps_next_holders_lock)
{
    app_start(g_redis.port, tweak_lock_ttl);
    load_board("ov", "m", 50, 0);
    char base[64], key[256], lock[300];
    board_base("ov", base, sizeof(base));
    page_key("ov", base, BOARD_PAGE_SIZE_DEFAULT, 1, key, sizeof(key));
    snprintf(lock, sizeof(lock), "%s:lock", key);

    /* Our holder computes for longer than its lock lives; another process takes the lock. */
    hook_stall("ov", 1, 4 * LOCK_TTL_MS, 1);
    struct job j;
    job_start(&j, "/boards/ov/rank", NULL);
    hook_wait("ov", 1, 1, 5);
    ck_assert_int_eq(key_exists(p_admin, lock), 1);
    double t0 = now_s();
    while (key_exists(p_admin, lock)) {
        ck_assert_msg(now_s() - t0 < 2.0, "rankd's lock did not expire");
        sleep_ms(5);
    }
    redisReply *r = redis_admin_cmd(p_admin, "SET %s next-holder NX PX 10000", lock);
    ck_assert_int_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    int still_computing = hook_count("ov", 1) == 1 && now_s() - t0 < 3 * LOCK_TTL_MS / 1000.0;
    job_join_ok(&j);
    http_result_free(&j.res);
    ck_assert_msg(still_computing, "the takeover came after the overrunning holder finished");
    r = redis_admin_cmd(p_admin, "GET %s", lock);
    ck_assert_msg(r->type == REDIS_REPLY_STRING && strcmp(r->str, "next-holder") == 0,
                  "the overrunning holder deleted the next holder's lock");
    freeReplyObject(r);

    /* lock_release.lua itself: compare-and-delete. */
    size_t len = 0;
    char *body = read_file("service/lua/lock_release.lua", &len);
    ck_assert_msg(body != NULL, "cannot read service/lua/lock_release.lua (run from the repo)");
    r = redis_admin_cmd(p_admin, "EVAL %s 1 %s %s", body, lock, "someone-else");
    ck_assert_msg(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "release by a stranger");
    freeReplyObject(r);
    ck_assert_int_eq(key_exists(p_admin, lock), 1);
    r = redis_admin_cmd(p_admin, "EVAL %s 1 %s %s", body, lock, "next-holder");
    ck_assert_msg(r->type == REDIS_REPLY_INTEGER && r->integer == 1, "release by the holder");
    freeReplyObject(r);
    ck_assert_int_eq(key_exists(p_admin, lock), 0);
    r = redis_admin_cmd(p_admin, "EVAL %s 1 %s %s", body, lock, "next-holder");
    ck_assert_msg(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "release of nothing");
    freeReplyObject(r);
    free(body);
}
END_TEST

/* Requests succeed again after SCRIPT FLUSH and after a Redis restart (scripts reloaded). */
START_TEST(test_scripts_flush_and_restart)
{
    struct redis_proc *rp = own_redis(0);
    app_start(rp->port, NULL);
    redisContext *a = redis_admin(rp->port);
    load_board("sf", "m", 100, 0);
    struct http_result r;
    get_status("/boards/sf/rank", NULL, 200, &r);
    http_result_free(&r);
    get_status("/boards/sf/rank", NULL, 200, &r);
    ck_assert_str_eq(xcache(&r), "hit");
    http_result_free(&r);

    freeReplyObject(redis_admin_cmd(a, "SCRIPT FLUSH"));
    get_status("/boards/sf/rank", NULL, 200, &r); /* cache_get.lua */
    ck_assert_str_eq(xcache(&r), "hit");
    http_result_free(&r);
    freeReplyObject(redis_admin_cmd(a, "SCRIPT FLUSH"));
    get_status("/boards/sf/rank?page=2", NULL, 200, &r); /* + page.lua, lock_release.lua */
    ck_assert_str_eq(xcache(&r), "miss");
    ck_assert_msg(strstr(r.body, "\"m00020\""), "page 2: %s", r.body);
    http_result_free(&r);
    /* the lock was released (right after the reply: the release does not hold the reply up,
     * and after SCRIPT FLUSH it costs an EVAL of its own) */
    for (int i = 0; i < 50 && lock_keys(a, "sf") != 0; i++)
        sleep_ms(10);
    ck_assert_int_eq(lock_keys(a, "sf"), 0);

    ck_assert_int_eq(redis_proc_restart(rp), 0);
    redisFree(a);
    a = redis_admin(rp->port);
    double t0 = now_s();
    put_after_restart("/boards/sf", "{\"page_size\":10}");
    load_board("sf", "n", 30, 0);
    get_status("/boards/sf/rank", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"n00000\"") && !strstr(r.body, "\"m000"), "after restart: %s",
                  r.body);
    ck_assert_str_eq(xcache(&r), "miss");
    http_result_free(&r);
    get_status("/boards/sf/rank?page=3", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"n00020\""), "page 3 after restart: %s", r.body);
    http_result_free(&r);
    get_status("/boards/sf/rank", NULL, 200, &r);
    ck_assert_str_eq(xcache(&r), "hit");
    http_result_free(&r);
    ck_assert_int_eq(lock_keys(a, "sf"), 0);
    fprintf(stderr,
            "page_cache: scripts: pages served after SCRIPT FLUSH and %.3f s after a "
            "restart\n",
            now_s() - t0);
    redisFree(a);
}
END_TEST

/* ---------------------------------------------------------------- 5. stale serving */

#define STALE_TTL_MS 300
#define STALE_COMPUTE_MS 100
#define STALE_RUN_S 3.0

static void tweak_no_xfetch(struct config *cfg)
{
    cfg->xfetch_beta = 0; /* only soft expiry triggers refreshes here (XFetch: test 12) */
}

/*
 * A hot page (page_ttl_ms STALE_TTL_MS, computations of STALE_COMPUTE_MS) under a steady stream
 * of requests from STREAMS clients, each on a new connection per request, spread over the rankd
 * instances on ports[0..nports): every request is served from cache (hit or stale) and there is
 * one refresh per expiry window. A window is the soft TTL (80-90% of page_ttl_ms) plus one
 * computation, so consecutive refreshes start at least ~330 ms apart; a second refresh in the
 * same window (a request that read the stale page before the refresh stored the new one, and
 * refreshed again after it released the lock) follows the first by about one computation.
 */
static void stale_run(const char *board, const int *ports, int nports)
{
    char json[64], path[128];
    snprintf(json, sizeof(json), "{\"page_ttl_ms\":%d}", STALE_TTL_MS);
    put_board(board, json);
    load_board(board, "m", 50, 0);
    hook_stall(board, 1, STALE_COMPUTE_MS, -1);
    snprintf(path, sizeof(path), "/boards/%s/rank", board);
    struct http_result r;
    get_status(path, NULL, 200, &r);
    ck_assert_str_eq(xcache(&r), "miss");
    http_result_free(&r);
    double refreshes0 = metric("rankd_page_cache_refreshes_total");
    double started = now_s();
    struct stream_totals t = stream_on(ports, nports, path, STALE_RUN_S, -1);
    double ran = now_s() - started;
    sleep_ms(STALE_COMPUTE_MS + 100); /* let a refresh in flight finish */
    double at[256];
    int calls = hook_calls(board, 1, at, 256), n = calls - 1; /* refreshes: after the first */
    double min_gap = 1e9;
    for (int i = 2; i < calls && i < 256; i++)
        min_gap = at[i] - at[i - 1] < min_gap ? at[i] - at[i - 1] : min_gap;
    double refreshes = metric("rankd_page_cache_refreshes_total") - refreshes0;
    double window = (STALE_TTL_MS * 0.8 + STALE_COMPUTE_MS) / 1000.0;
    fprintf(stderr,
            "page_cache: stale serving (%d process%s): %d requests in %.2f s: %d hit, %d stale, "
            "%d miss; %d refreshes (this process's metric %.0f), closest two %.3f s apart "
            "(window %.2f s), slowest request %.4f s\n",
            nports, nports > 1 ? "es" : "", t.n, ran, t.hit, t.stale, t.miss, n, refreshes,
            n >= 2 ? min_gap : 0, window, t.worst);
    /* A miss is the contract's only when the copy was too old when rankd judged the request:
     * past page_ttl_ms plus its computation, with no refresh begun by then (a server starved
     * for that long by a busy machine). The copy computation k made is at least STALE_COMPUTE_MS
     * + STALE_TTL_MS + STALE_COMPUTE_MS old at that point, and the miss computes, so the next
     * computation (started by the answer's time) follows k by more than that. A miss between
     * computations closer together is one that stale serving should have answered.
     * Only with one process: across two, a process learns of the other's refresh only when a
     * refresh of its own finds the lock held, so one starved by a busy machine past a copy's
     * bound judges it too old (as page_cache.h allows) and waits on the other's computation; from
     * outside, the copy it judged cannot be told from the one it was answered with. The
     * two-process run judges what it is for: one refresh per window across processes (below). */
    double late = (2.0 * STALE_COMPUTE_MS + STALE_TTL_MS) / 1000.0;
    for (int m = 0; nports == 1 && m < t.nmiss_done; m++) {
        int k = -1; /* the last computation started by the miss's answer (its own, or joined) */
        for (int i = 0; i < calls && i < 256; i++)
            if (at[i] <= t.miss_done[m])
                k = i;
        ck_assert_msg(k >= 1 && at[k] - at[k - 1] > late,
                      "%d requests missed the cache around its soft expiry; one answered %.3f s "
                      "after a computation that followed the one before by %.3f s (a copy is too "
                      "old only past %.3f s)",
                      t.miss, k >= 0 ? t.miss_done[m] - at[k] : -1.0,
                      k >= 1 ? at[k] - at[k - 1] : -1.0, late);
    }
    ck_assert_msg(t.stale > 0, "no stale serve: the soft expiry was never crossed");
    ck_assert_msg(n >= 2, "%d refreshes in %.2f s; want one per expiry window", n, ran);
    ck_assert_msg(min_gap > STALE_COMPUTE_MS / 1000.0 + 0.15,
                  "two refreshes %.3f s apart (a computation takes %.3f s): a page refreshed "
                  "again right after a refresh stored it, more than one refresh per window",
                  min_gap, STALE_COMPUTE_MS / 1000.0);
    ck_assert_msg(n <= (int)(ran / window) + 1, "%d refreshes in %.2f s (windows of %.2f s)", n,
                  ran, window);
    if (nports == 1)
        ck_assert_msg(refreshes >= n - 1, "refresh metric %.0f for %d refreshes", refreshes, n);
}

START_TEST(test_stale_serving_one_refresh)
{
    app_start(g_redis.port, tweak_no_xfetch);
    stale_run("hot", &p_port, 1);
}
END_TEST

/* Two rankd processes (two instances here, each with its own single-flight table) serving one
 * hot page: the Redis lock must still make one refresh per expiry window. */
START_TEST(test_stale_one_refresh_across_processes)
{
    app_start(g_redis.port, tweak_no_xfetch);
    p_app2 = rankd_test_start_with(g_redis.port, TEST_TOKEN, tweak_no_xfetch, &h_hooks);
    int ports[2] = {p_port, rankd_port(p_app2)};
    stale_run("hot2", ports, 2);
}
END_TEST

/* ---------------------------------------------------------------- 6. freshness */

#define FRESH_TTL_MS 500
#define FRESH_COMPUTE_MS 100
#define FRESH_MARGIN_S 0.5
#define L1_TTL_MS 200

/* Write a new top member; poll page 1 until it shows; seconds after the write's reply. */
static double freshness_run(const char *board)
{
    char path[128], json[200];
    snprintf(json, sizeof(json), "{\"page_ttl_ms\":%d}", FRESH_TTL_MS);
    put_board(board, json);
    load_board(board, "m", 40, 0);
    hook_stall(board, 1, FRESH_COMPUTE_MS, -1);
    snprintf(path, sizeof(path), "/boards/%s/rank", board);
    struct http_result r;
    get_status(path, NULL, 200, &r);
    http_result_free(&r);
    for (int i = 0; i < 10; i++) { /* a hot page */
        get_status(path, NULL, 200, &r);
        http_result_free(&r);
    }
    char wpath[160];
    snprintf(wpath, sizeof(wpath), "/boards/%s/scores", board);
    write_status("POST", wpath, "{\"id\":\"newtop\",\"score\":1000000}", 200);
    double w = now_s();
    /* Member lookups are always current. */
    char mpath[200];
    snprintf(mpath, sizeof(mpath), "/boards/%s/members/newtop", board);
    get_status(mpath, NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"rank\":1"), "member lookup: %s", r.body);
    http_result_free(&r);
    int old = 0;
    for (;;) {
        get_status(path, NULL, 200, &r);
        int seen = strstr(r.body, "\"newtop\"") != NULL;
        http_result_free(&r);
        if (seen)
            break;
        old++;
        ck_assert_msg(now_s() - w < 15, "the write never showed on its page");
        sleep_ms(10);
    }
    double s = now_s() - w;
    fprintf(stderr,
            "page_cache: freshness (%s): write visible on its page after %.3f s (%d older "
            "answers)\n",
            board, s, old);
    return s;
}

START_TEST(test_freshness_bound)
{
    app_start(g_redis.port, NULL);
    double s = freshness_run("fr");
    double bound = (FRESH_TTL_MS + FRESH_COMPUTE_MS) / 1000.0 + FRESH_MARGIN_S;
    ck_assert_msg(s < bound, "a write took %.3f s to show; want < %.3f s (page_ttl + computation)",
                  s, bound);
}
END_TEST

static void tweak_l1(struct config *cfg)
{
    cfg->l1_ttl_ms = L1_TTL_MS;
}

START_TEST(test_freshness_bound_l1)
{
    app_start(g_redis.port, tweak_l1);
    double s = freshness_run("frl1");
    double bound = (FRESH_TTL_MS + FRESH_COMPUTE_MS + L1_TTL_MS) / 1000.0 + FRESH_MARGIN_S;
    ck_assert_msg(metric("rankd_page_cache_l1_hits_total") > 0, "the l1 tier served nothing");
    ck_assert_msg(s < bound, "a write took %.3f s to show with l1; want < %.3f s", s, bound);
}
END_TEST

/* ---------------------------------------------------------------- 7. canonical keys */

#define CANON_N 1000

static void rand_word(unsigned *seed, char *out, size_t n)
{
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    size_t len = 1 + (size_t)rand_r(seed) % 12;
    if (len >= n)
        len = n - 1;
    for (size_t i = 0; i < len; i++)
        out[i] = alnum[(size_t)rand_r(seed) % (sizeof(alnum) - 1)];
    out[len] = '\0';
}

START_TEST(test_canonical_key_and_no_redis_for_invalid)
{
    app_start(g_redis.port, NULL);
    load_board("ck", "m", 30, 0);
    unsigned seed = 12345;
    char *first = NULL;
    for (int i = 0; i < CANON_N; i++) {
        char k[16], v[16], path[200];
        rand_word(&seed, k, sizeof(k));
        rand_word(&seed, v, sizeof(v));
        if (strcmp(k, "page") == 0 || strcmp(k, "size") == 0)
            snprintf(k, sizeof(k), "x");
        switch (i % 7) {
        case 0:
            snprintf(path, sizeof(path), "/boards/ck/rank?page=01&size=20&x%s=%s", k, v);
            break;
        case 1:
            snprintf(path, sizeof(path), "/boards/ck/rank?size=20&page=1&%s=%s", k, v);
            break;
        case 2:
            snprintf(path, sizeof(path), "/boards/ck/rank?page=001&size=020");
            break;
        case 3:
            snprintf(path, sizeof(path), "/boards/ck/rank?%s=%s&page=1", k, v);
            break;
        case 4:
            snprintf(path, sizeof(path), "/boards/ck/rank");
            break;
        case 5:
            snprintf(path, sizeof(path), "/boards/ck/rank?%s&size=0020&utm=%s&page=1", k, v);
            break;
        default:
            snprintf(path, sizeof(path), "/rank?board=ck&%s=%s", k, v);
            break;
        }
        struct http_result r;
        get_status(path, NULL, 200, &r);
        if (!first)
            first = strdup(r.body);
        else
            ck_assert_msg(strcmp(first, r.body) == 0, "GET %s: a different page:\n%s", path,
                          r.body);
        http_result_free(&r);
    }
    free(first);
    char key[256], want[256], base[64];
    int n = page_keys(p_admin, "ck", key, sizeof(key));
    board_base("ck", base, sizeof(base)); /* (adds the probe's key) */
    page_key("ck", base, BOARD_PAGE_SIZE_DEFAULT, 1, want, sizeof(want));
    fprintf(stderr,
            "page_cache: canonical: %d requests left %d cache key(s) (%s), %d computation(s)\n",
            CANON_N, n, n ? key : "-", hook_count("ck", 0));
    ck_assert_msg(n == 1, "%d cache keys for one page", n);
    ck_assert_str_eq(key, want);
    ck_assert_int_eq(lock_keys(p_admin, "ck"), 0);

    /* A page past the end is cached like any other page. */
    struct http_result e;
    get_status("/boards/ck/rank?page=999", NULL, 200, &e);
    ck_assert_msg(strstr(e.body, "\"items\":[]"), "page 999: %s", e.body);
    ck_assert_str_eq(xcache(&e), "miss");
    http_result_free(&e);
    get_status("/boards/ck/rank?page=0999", NULL, 200, &e);
    ck_assert_str_eq(xcache(&e), "hit");
    http_result_free(&e);
    ck_assert_int_eq(page_keys(p_admin, "ck", NULL, 0), 3); /* page 1, the probe, page 999 */

    /* Invalid parameters are rejected before any Redis call. */
    static const char *const bad[] = {
        "page=0",  "page=00",  "page=-1",       "page=x",
        "size=0",  "size=101", "page=1&page=1", "page=99999999999999999999",
        "size=1.5"};
    /* what reading the counter costs by itself (1 on one Redis: the INFO; more on a cluster).
     * The counter is the server's: work rankd does behind earlier replies (a page stored, a lock
     * released) may land in the window, so a round with extra commands is tried again, up to
     * three times; a request that reached Redis would add to every round. */
    long long extra = 0;
    for (int round = 0; round < 3; round++) {
        long long self = info_field(p_admin, "stats", "total_commands_processed:");
        long long c0 = info_field(p_admin, "stats", "total_commands_processed:");
        self = c0 - self;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            char path[200];
            snprintf(path, sizeof(path), "/boards/ck/rank?%s", bad[i]);
            struct http_result r;
            get_status(path, NULL, 400, &r);
            http_result_free(&r);
        }
        long long c1 = info_field(p_admin, "stats", "total_commands_processed:");
        extra = c1 - c0 - self;
        if (extra == 0)
            break;
        usleep(100000);
    }
    ck_assert_msg(extra == 0, "invalid parameters sent %lld command(s) to Redis; want 0", extra);
}
END_TEST

/* ---------------------------------------------------------------- 8. maxmemory */

#define MEM_MEMBERS 3000
#define MEM_PAD 300
#define MEM_MARGIN 300000 /* bytes above the loaded data */
#define MEM_PAGES 30

START_TEST(test_maxmemory_volatile_pages_only)
{
    struct redis_proc *rp = own_redis(0);
    app_start(rp->port, NULL);
    redisContext *a = redis_admin(rp->port);
    put_board("mem", "{\"page_ttl_ms\":60000}");
    load_board("mem", "m", MEM_MEMBERS, MEM_PAD);
    long long used = info_field(a, "memory", "used_memory:");
    ck_assert(used > 0);
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET maxmemory-policy volatile-lru"));
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET maxmemory %lld", used + MEM_MARGIN));
    double errors0 = metric("rankd_page_cache_errors_total");

    int misses = 0;
    for (int round = 0; round < 2; round++)
        for (int p = 1; p <= MEM_PAGES; p++) {
            char path[128];
            snprintf(path, sizeof(path), "/boards/mem/rank?page=%d&size=100", p);
            struct http_result r;
            get_status(path, NULL, 200, &r);
            ck_assert_int_eq(r.len > 100 * MEM_PAD, 1);
            misses += strcmp(xcache(&r), "miss") == 0;
            http_result_free(&r);
        }
    for (int i = 0; i < 20; i++) {
        char json[100];
        snprintf(json, sizeof(json), "{\"id\":\"w%02d\",\"score\":%d}", i, 100000 + i);
        write_status("POST", "/boards/mem/scores", json, 200);
    }
    struct http_result r;
    get_status("/boards/mem/rank?page=1&size=100", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"w19\""), "page 1 after the writes: %.200s", r.body);
    http_result_free(&r);
    for (int p = 2; p <= MEM_PAGES; p += 7) {
        char path[128];
        snprintf(path, sizeof(path), "/boards/mem/rank?page=%d&size=100", p);
        get_status(path, NULL, 200, &r);
        http_result_free(&r);
    }
    long long evicted = info_field(a, "stats", "evicted_keys:");
    double refused = metric("rankd_page_cache_errors_total") - errors0;
    int cached = page_keys(a, "mem", NULL, 0);
    char z[200];
    snprintf(z, sizeof(z), "%s:{mem}:z", p_app->cfg.key_prefix);
    redisReply *c = redis_admin_cmd(a, "ZCARD %s", z);
    long long card = c->integer;
    freeReplyObject(c);
    fprintf(stderr,
            "page_cache: maxmemory %lld + %d: %d page requests (%d misses), %lld keys evicted, "
            "%.0f cache errors (refused), %d pages cached now, board intact: %lld members\n",
            used, MEM_MARGIN, 2 * MEM_PAGES, misses, evicted, refused, cached, card);
    ck_assert_msg(evicted > 0 || refused > 0, "pages were neither evicted nor refused");
    ck_assert_msg(cached < 2 * MEM_PAGES, "every page is cached: maxmemory had no effect");
    ck_assert_int_eq(card, MEM_MEMBERS + 20); /* board data is never evicted */
    redisFree(a);
}
END_TEST

/* ---------------------------------------------------------------- 9. HTTP caching headers */

/* max-age from Cache-Control, asserting its form; -1 for no-cache. */
static long cache_control_max_age(const struct http_result *r)
{
    char cc[128];
    http_header_value(r, "Cache-Control", cc, sizeof(cc));
    if (strcmp(cc, "no-cache") == 0)
        return -1;
    long max_age = -2;
    int swr = -1, used = 0;
    ck_assert_msg(sscanf(cc, "public, max-age=%ld, stale-while-revalidate=%d%n", &max_age, &swr,
                         &used) == 2 &&
                      (size_t)used == strlen(cc),
                  "Cache-Control '%s'", cc);
    ck_assert_msg(swr == 10, "stale-while-revalidate=%d; want the 10 s grace", swr);
    return max_age;
}

static long age_of(const struct http_result *r)
{
    char v[32];
    http_header_value(r, "Age", v, sizeof(v));
    ck_assert_msg(v[0], "no Age header");
    return strtol(v, NULL, 10);
}

START_TEST(test_etag_304_and_headers)
{
    app_start(g_redis.port, tweak_no_xfetch);
    put_board("et", "{\"page_ttl_ms\":5000}");
    load_board("et", "m", 30, 0);
    struct http_result r1, r2, r3;
    get_status("/boards/et/rank", NULL, 200, &r1);
    char etag[64], e2[64], e3[64];
    http_header_value(&r1, "ETag", etag, sizeof(etag));
    ck_assert_msg(strlen(etag) > 2 && etag[0] == '"' && etag[strlen(etag) - 1] == '"', "ETag '%s'",
                  etag);
    ck_assert_str_eq(xcache(&r1), "miss");
    long ma = cache_control_max_age(&r1);
    ck_assert_msg(ma >= 3 && ma <= 4, "max-age=%ld for a fresh 5 s page (soft TTL 4-4.5 s)", ma);
    ck_assert_int_eq(age_of(&r1), 0);

    get_status("/boards/et/rank", NULL, 200, &r2);
    ck_assert_str_eq(xcache(&r2), "hit");
    ck_assert_str_eq(http_header_value(&r2, "ETag", e2, sizeof(e2)), etag);
    ck_assert(r2.len == r1.len && memcmp(r1.body, r2.body, r1.len) == 0);
    http_result_free(&r2);

    /* If-None-Match: 304, no body, no sorted-set read. */
    long long z0 = zrange_calls();
    char list[200];
    snprintf(list, sizeof(list), "\"nope\", W/%s", etag);
    const char *inms[] = {etag, list, "*"};
    for (int i = 0; i < 3; i++) {
        get_status("/boards/et/rank", inms[i], 304, &r3);
        ck_assert_msg(r3.len == 0, "304 with a %zu-byte body", r3.len);
        ck_assert_str_eq(http_header_value(&r3, "ETag", e3, sizeof(e3)), etag);
        ck_assert_str_eq(xcache(&r3), "hit");
        cache_control_max_age(&r3);
        http_result_free(&r3);
    }
    ck_assert_msg(zrange_calls() == z0, "a 304 read the sorted set");
    get_status("/boards/et/rank", "\"g0-0000000000000000\"", 200, &r3);
    ck_assert(r3.len == r1.len);
    http_result_free(&r3);

    /* Age and max-age move with time. */
    sleep_ms(1100);
    get_status("/boards/et/rank", NULL, 200, &r3);
    ck_assert_str_eq(xcache(&r3), "hit");
    long age = age_of(&r3), ma2 = cache_control_max_age(&r3);
    ck_assert_msg(age >= 1 && age <= 2, "Age %ld after 1.1 s", age);
    ck_assert_msg(ma2 >= 2 && ma2 <= 4 && ma2 + age <= 5, "max-age=%ld with Age %ld", ma2, age);
    http_result_free(&r3);
    http_result_free(&r1);

    /* Stale: past the soft TTL, served at once while one refresh runs (XFetch is off here). */
    put_board("et2", "{\"page_ttl_ms\":500}");
    load_board("et2", "m", 30, 0);
    hook_stall("et2", 1, 300, -1);
    get_status("/boards/et2/rank", NULL, 200, &r1);
    ck_assert_str_eq(xcache(&r1), "miss");
    sleep_ms(600);
    get_status("/boards/et2/rank", NULL, 200, &r2);
    ck_assert_str_eq(xcache(&r2), "stale");
    ck_assert_msg(r2.seconds < 0.2, "a stale serve took %.3f s (it must not wait)", r2.seconds);
    ck_assert_int_eq(cache_control_max_age(&r2), 0);
    ck_assert_str_eq(http_header_value(&r2, "ETag", e2, sizeof(e2)),
                     http_header_value(&r1, "ETag", e3, sizeof(e3)));
    http_result_free(&r1);
    http_result_free(&r2);
    sleep_ms(500);
    get_status("/boards/et2/rank", NULL, 200, &r3);
    ck_assert_str_eq(xcache(&r3), "hit");
    ck_assert_int_eq(age_of(&r3), 0);
    http_result_free(&r3);
    ck_assert_int_eq(hook_count("et2", 1), 2);

    /* page_ttl_ms 0: no caching, still an ETag and 304. */
    put_board("et0", "{\"page_ttl_ms\":0}");
    load_board("et0", "m", 30, 0);
    get_status("/boards/et0/rank", NULL, 200, &r1);
    char cc[64];
    ck_assert_str_eq(http_header_value(&r1, "Cache-Control", cc, sizeof(cc)), "no-cache");
    ck_assert_str_eq(xcache(&r1), "miss");
    http_header_value(&r1, "ETag", etag, sizeof(etag));
    ck_assert_msg(strlen(etag) > 2, "no ETag with caching off");
    get_status("/boards/et0/rank", etag, 304, &r2);
    ck_assert_msg(r2.len == 0, "304 with a body");
    ck_assert_str_eq(http_header_value(&r2, "Cache-Control", cc, sizeof(cc)), "no-cache");
    http_result_free(&r1);
    http_result_free(&r2);
    ck_assert_int_eq(page_keys(p_admin, "et0", NULL, 0), 0);
    ck_assert_int_eq(hook_count("et0", 1), 2); /* computed each time */
}
END_TEST

/* Pages made together do not expire together: the soft TTL is jittered (80-90% of the TTL). */
START_TEST(test_soft_expiry_jitter)
{
    app_start(g_redis.port, NULL);
    put_board("jt", "{\"page_ttl_ms\":10000}");
    load_board("jt", "m", 200, 0);
    enum { PAGES = 20 };
    long long ttl[PAGES];
    int distinct = 0;
    char base[64];
    board_base("jt", base, sizeof(base));
    for (int p = 1; p <= PAGES; p++) {
        char path[128], key[256];
        snprintf(path, sizeof(path), "/boards/jt/rank?page=%d&size=10", p);
        struct http_result r;
        get_status(path, NULL, 200, &r);
        http_result_free(&r);
        page_key("jt", base, 10, p, key, sizeof(key));
        redisReply *v = redis_admin_cmd(p_admin, "GET %s", key);
        ck_assert_msg(v->type == REDIS_REPLY_STRING, "page %d is not cached", p);
        long long created, soft;
        ck_assert_msg(sscanf(v->str, "rankd3 %*s %*s %lld %lld", &created, &soft) == 2,
                      "value header: %.80s", v->str);
        freeReplyObject(v);
        ttl[p - 1] = soft - created;
        ck_assert_msg(ttl[p - 1] > 7999 && ttl[p - 1] <= 9000, "soft TTL %lld ms for 10000",
                      ttl[p - 1]);
        int seen = 0;
        for (int i = 0; i < p - 1; i++)
            seen |= ttl[i] == ttl[p - 1];
        distinct += !seen;
    }
    fprintf(stderr, "page_cache: jitter: %d distinct soft TTLs for %d pages\n", distinct, PAGES);
    ck_assert_msg(distinct >= PAGES / 2, "only %d distinct soft TTLs for %d pages", distinct,
                  PAGES);
}
END_TEST

/* ---------------------------------------------------------------- 10. generation */

static void expect_new_page(const char *path, const char *old_etag)
{
    struct http_result r;
    get_status(path, NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"new00000\"") && !strstr(r.body, "\"old"),
                  "GET %s after delete and re-create served: %.300s", path, r.body);
    char e[64];
    ck_assert_str_ne(http_header_value(&r, "ETag", e, sizeof(e)), old_etag);
    http_result_free(&r);
}

START_TEST(test_generation_retires_old_pages)
{
    app_start(g_redis.port, NULL);
    put_board("gn", "{\"page_ttl_ms\":60000}");
    load_board("gn", "old", 30, 0);
    struct http_result r;
    get_status("/boards/gn/rank", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"old00000\""), "%s", r.body);
    char old_etag[64], old_key[256];
    http_header_value(&r, "ETag", old_etag, sizeof(old_etag));
    http_result_free(&r);
    ck_assert_int_eq(page_keys(p_admin, "gn", old_key, sizeof(old_key)), 1);

    write_status("DELETE", "/boards/gn", NULL, 204);
    get_status("/boards/gn/rank", NULL, 404, &r);
    http_result_free(&r);
    put_board("gn", "{\"page_ttl_ms\":60000}");
    load_board("gn", "new", 30, 0);
    for (int i = 0; i < 10; i++) {
        expect_new_page("/boards/gn/rank", old_etag);
        expect_new_page("/boards/gn/rank?page=01&size=20", old_etag);
        expect_new_page("/rank?board=gn", old_etag);
    }
    ck_assert_msg(key_exists(p_admin, old_key) == 1, "the old page %s should live until its TTL",
                  old_key);

    /* A computation in flight across a delete is not shared with requests after it: they have
     * a new key (the generation is part of it) and do not wait for it. */
    hook_stall("gn", 2, 1500, 1);
    struct job j;
    job_start(&j, "/boards/gn/rank?page=2", NULL);
    hook_wait("gn", 2, 1, 5);
    double stalled_at = now_s();
    write_status("DELETE", "/boards/gn", NULL, 204);
    put_board("gn", "{\"page_ttl_ms\":60000}");
    load_board("gn", "newer", 50, 0);
    get_status("/boards/gn/rank?page=2", NULL, 200, &r);
    double after = now_s() - stalled_at;
    ck_assert_msg(strstr(r.body, "\"newer00020\""), "page 2 after the second delete: %.300s",
                  r.body);
    http_result_free(&r);
    ck_assert_msg(after < 1.0, "a request after the delete waited %.3f s for an older computation",
                  after);
    job_join_ok(&j);
    http_result_free(&j.res);
    for (int i = 0; i < 5; i++) {
        get_status("/boards/gn/rank?page=2", NULL, 200, &r);
        ck_assert_msg(strstr(r.body, "\"newer00020\""), "page 2: %.300s", r.body);
        http_result_free(&r);
    }
}
END_TEST

/* ---------------------------------------------------------------- 11. cache Redis failure */

static int s_cache_port;

static void tweak_cache_redis(struct config *cfg)
{
    snprintf(cfg->cache_url_text, sizeof(cfg->cache_url_text), "redis://127.0.0.1:%d/0",
             s_cache_port);
    ck_assert_int_eq(config_parse_redis_url(cfg->cache_url_text, &cfg->cache_redis), 0);
}

START_TEST(test_cache_redis_down_breaker)
{
    struct redis_proc *cache = own_redis(0);
    s_cache_port = cache->port;
    app_start(g_redis.port, tweak_cache_redis);
    redisContext *ca = redis_admin(cache->port);
    load_board("br", "m", 100, 0);
    struct http_result r;
    get_status("/boards/br/rank", NULL, 200, &r);
    ck_assert_str_eq(xcache(&r), "miss");
    http_result_free(&r);
    /* The miss's SET goes out before its reply, but on the cache's write connection: the next
     * read, on another, can reach the cache Redis first on a busy machine. A hit within 2 s. */
    int hit = 0;
    for (double t0 = now_s(); !hit && now_s() - t0 < 2.0; sleep_ms(hit ? 0 : 20)) {
        get_status("/boards/br/rank", NULL, 200, &r);
        hit = strcmp(xcache(&r), "hit") == 0;
        http_result_free(&r);
    }
    ck_assert_msg(hit, "the page missed for 2 s after its first miss");
    ck_assert_msg(page_keys(ca, "br", NULL, 0) == 1 && page_keys(p_admin, "br", NULL, 0) == 0,
                  "pages must live in the cache Redis only");
    redisFree(ca);

    redis_proc_stop(cache);
    double u0 = metric("rankd_page_cache_uncached_total");
    double worst = 0;
    for (int p = 1; p <= 3; p++) {
        char path[128];
        snprintf(path, sizeof(path), "/boards/br/rank?page=%d&size=5", p);
        get_status(path, NULL, 200, &r);
        ck_assert_str_eq(xcache(&r), "miss");
        worst = r.seconds > worst ? r.seconds : worst;
        http_result_free(&r);
    }
    double open = metric("rankd_page_cache_breaker_open");
    double errors = metric("rankd_page_cache_errors_total");
    for (int p = 4; p <= 12; p++) {
        char path[128];
        snprintf(path, sizeof(path), "/boards/br/rank?page=%d&size=5", p);
        get_status(path, NULL, 200, &r);
        ck_assert_msg(strstr(r.body, "\"rank\":"), "page %d: %s", p, r.body);
        worst = r.seconds > worst ? r.seconds : worst;
        http_result_free(&r);
    }
    double uncached = metric("rankd_page_cache_uncached_total") - u0;
    fprintf(stderr,
            "page_cache: cache Redis down: 12 pages served uncached (metric +%.0f), slowest "
            "%.4f s; breaker_open %.0f after %.0f errors\n",
            uncached, worst, open, errors);
    ck_assert_msg(worst < 0.3, "an uncached page took %.3f s", worst);
    ck_assert_msg(uncached >= 12, "uncached_total rose by %.0f for 12 uncached pages", uncached);
    ck_assert_msg(errors >= 5 && open == 1, "breaker_open %.0f after %.0f errors", open, errors);

    ck_assert_int_eq(redis_proc_restart(cache), 0);
    ca = redis_admin(cache->port);
    double t0 = now_s();
    hit = 0;
    while (!hit) {
        ck_assert_msg(now_s() - t0 < 6.0, "caching did not resume 6 s after the restart");
        sleep_ms(50);
        get_status("/boards/br/rank?page=1&size=5", NULL, 200, &r);
        hit = strcmp(xcache(&r), "hit") == 0;
        http_result_free(&r);
    }
    fprintf(stderr, "page_cache: cache Redis back: hits again after %.3f s\n", now_s() - t0);
    ck_assert_int_ge(page_keys(ca, "br", NULL, 0), 1);
    ck_assert_int_eq(page_keys(p_admin, "br", NULL, 0), 0);
    ck_assert_msg(metric("rankd_page_cache_breaker_open") == 0, "breaker still open");
    redisFree(ca);
}
END_TEST

/*
 * The generation must never go back to a used value while old pages can still be found. With
 * the cache in its own Redis, a data Redis that loses the generation key (a restart without
 * persistence here; a lost last second of AOF or a lagging replica promoted in production)
 * restarts the count, and the next DELETE reuses a generation whose pages the cache still holds.
 */
START_TEST(test_generation_after_data_redis_restart)
{
    struct redis_proc *data = own_redis(0), *cache = own_redis(1);
    s_cache_port = cache->port;
    app_start(data->port, tweak_cache_redis);
    put_board("gr", "{\"page_ttl_ms\":60000}");
    load_board("gr", "old", 10, 0);
    write_status("DELETE", "/boards/gr", NULL, 204); /* generation 1 */
    put_board("gr", "{\"page_ttl_ms\":60000}");
    load_board("gr", "first", 10, 0);
    struct http_result r;
    get_status("/boards/gr/rank", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"first00000\""), "%s", r.body);
    http_result_free(&r);

    ck_assert_int_eq(redis_proc_restart(data), 0); /* the data (and the generation) are gone */
    put_after_restart("/boards/gr", "{\"page_ttl_ms\":60000}");
    load_board("gr", "mid", 10, 0);
    get_status("/boards/gr/rank", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"mid00000\""), "after the restart: %s", r.body);
    http_result_free(&r);

    write_status("DELETE", "/boards/gr", NULL, 204);
    put_board("gr", "{\"page_ttl_ms\":60000}");
    load_board("gr", "new", 10, 0);
    get_status("/boards/gr/rank", NULL, 200, &r);
    ck_assert_msg(strstr(r.body, "\"new00000\""),
                  "after DELETE and re-creation the page computed before them (before the data "
                  "Redis restart) was served (X-Cache %s): %.200s",
                  xcache(&r), r.body);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- 12. XFetch */

#define XF_TTL_MS 1000
#define XF_COMPUTE_MS 100

static void tweak_xfetch(struct config *cfg)
{
    cfg->xfetch_beta = 10;
}

START_TEST(test_xfetch_early_refresh)
{
    app_start(g_redis.port, tweak_xfetch);
    put_board("xf", "{\"page_ttl_ms\":1000}");
    load_board("xf", "m", 50, 0);
    hook_stall("xf", 1, XF_COMPUTE_MS, -1);
    struct http_result r;
    get_status("/boards/xf/rank", NULL, 200, &r);
    ck_assert_str_eq(xcache(&r), "miss");
    http_result_free(&r);
    double early0 = metric("rankd_page_cache_early_refreshes_total");
    struct stream_totals t = stream_for("/boards/xf/rank", 2.0, 1);
    double early = metric("rankd_page_cache_early_refreshes_total") - early0;
    int computed = hook_count("xf", 1);
    fprintf(stderr,
            "page_cache: xfetch: %d requests: %d hit, %d stale, %d miss; %.0f early refreshes "
            "started, %d computations, %.0f refreshes, %.0f cache errors\n",
            t.n, t.hit, t.stale, t.miss, early, computed,
            metric("rankd_page_cache_refreshes_total"), metric("rankd_page_cache_errors_total"));
    ck_assert_msg(early > 0, "no early refresh with beta 10");
    ck_assert_msg(computed >= 2, "no refresh computed");
    ck_assert_msg(t.miss == 0 && t.stale == 0,
                  "with early refresh no request should miss or be stale (%d miss, %d stale)",
                  t.miss, t.stale);
}
END_TEST

/* ---------------------------------------------------------------- 13. batched hits, shutdown */

#define BATCH_N 64

/* 64 concurrent hits of a learned board go through the batched hit path: each lookup is one
 * command, page_get.lua (its HMGET and GET; commandstats counts the commands scripts run too), no
 * other script, no ZRANGE. */
START_TEST(test_batched_hits_one_round_trip)
{
    app_start(g_redis.port, NULL);
    /* a TTL no loaded machine outruns: every request of the batch finds the page fresh (a stale
     * one is served too, but asks for a refresh: a script and a ZRANGE this test counts) */
    put_board("bh", "{\"page_ttl_ms\":600000}");
    load_board("bh", "m", 100, 0);
    struct http_result r;
    get_status("/boards/bh/rank", NULL, 200, &r); /* computes; this process learns the board */
    http_result_free(&r);
    double served0 = metric("rankd_page_cache_batched_hits_total");
    double batches0 = metric("rankd_page_cache_batches_total");
    double shared0 = metric("rankd_page_cache_shared_lookups_total");
    long long hm0 = cmd_calls(p_admin, "hmget"), get0 = cmd_calls(p_admin, "get");
    long long ev0 = cmd_calls(p_admin, "evalsha"), z0 = zrange_calls();
    struct job jobs[BATCH_N];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, BATCH_N);
    for (int i = 0; i < BATCH_N; i++)
        job_start(&jobs[i], "/boards/bh/rank", &bar);
    for (int i = 0; i < BATCH_N; i++) {
        job_join_ok(&jobs[i]);
        ck_assert_str_eq(xcache(&jobs[i].res), "hit");
        ck_assert_msg(strstr(jobs[i].res.body, "\"m00000\""), "body %s", jobs[i].res.body);
        http_result_free(&jobs[i].res);
    }
    pthread_barrier_destroy(&bar);
    double served = metric("rankd_page_cache_batched_hits_total") - served0;
    double batches = metric("rankd_page_cache_batches_total") - batches0;
    double shared = metric("rankd_page_cache_shared_lookups_total") - shared0;
    long long hm = cmd_calls(p_admin, "hmget") - hm0, get = cmd_calls(p_admin, "get") - get0;
    long long ev = cmd_calls(p_admin, "evalsha") - ev0, z = zrange_calls() - z0;
    fprintf(stderr,
            "page_cache: batched hits: %d concurrent hits served by the batched path: %.0f, in "
            "%.0f pipeline(s), %.0f of them on another hit's lookup; Redis: %lld HMGET, %lld GET, "
            "%lld EVALSHA, %lld ZRANGE\n",
            BATCH_N, served, batches, shared, hm, get, ev, z);
    ck_assert_msg(served == BATCH_N, "%.0f of %d hits took the batched path", served, BATCH_N);
    ck_assert_msg(batches >= 1 && batches <= BATCH_N, "%.0f pipelines", batches);
    /* the metric reads add nothing here: /metrics sends no Redis command */
    /* one EVALSHA (an HMGET and a GET inside) per lookup; a hit that joined an identical lookup
     * of the same loop iteration sent none */
    ck_assert_msg(hm == ev && get == ev && ev + (long long)shared == BATCH_N,
                  "%lld EVALSHA, %lld HMGET and %lld GET for %d hits, %.0f of them shared", ev, hm,
                  get, BATCH_N, shared);
    ck_assert_msg(z == 0, "a hit ran %lld ZRANGE", z);
}
END_TEST

struct stopper {
    pthread_t th;
    int delay_ms;
    double stopped_at;
};

static void *stop_run(void *arg)
{
    struct stopper *st = arg;
    sleep_ms(st->delay_ms);
    rankd_stop(p_app);
    st->stopped_at = now_s();
    return NULL;
}

/* Stopping rankd while a page is being computed: the request in work gets its page, then rankd
 * stops (MHD must never be stopped with a suspended connection). */
START_TEST(test_stop_finishes_requests_in_work)
{
    app_start(g_redis.port, NULL);
    load_board("sf", "m", 50, 0);
    hook_stall("sf", 1, 800, 1);
    struct job j;
    job_start(&j, "/boards/sf/rank", NULL);
    hook_wait("sf", 1, 1, 5);
    struct stopper st = {.delay_ms = 100};
    double t0 = now_s();
    ck_assert_int_eq(pthread_create(&st.th, NULL, stop_run, &st), 0);
    job_join_ok(&j);
    pthread_join(st.th, NULL);
    p_app = NULL; /* stopped */
    fprintf(stderr,
            "page_cache: stop: the page in work answered after %.3f s, rankd stopped after "
            "%.3f s\n",
            j.t1 - t0, st.stopped_at - t0);
    ck_assert_msg(strstr(j.res.body, "\"m00000\""), "body %s", j.res.body);
    ck_assert_msg(st.stopped_at >= j.t1 - 0.05, "rankd stopped before the reply went out");
    ck_assert_msg(st.stopped_at - t0 < 5, "stopping took %.3f s", st.stopped_at - t0);
    http_result_free(&j.res);
}
END_TEST

/* ---------------------------------------------------------------- 14. period boundary */

/* A daily board that keeps no past period (retain 0): a request for the current page whose
 * computation runs across midnight answers 200, never 404 (it did: the page was computed for
 * the day it resolved, which had stopped being readable): with the new day's page, or with the
 * page of the day it read before midnight (the event thread's fill reads the rows first, and
 * the test's stall comes after). It used to see only the new day's page because Redis' real
 * clock had passed the TTL that rankd then gave the set of Nov 30 (Dec 1, 02:00 UTC): that set
 * was gone before it was read. Board data carries no TTL now. */
START_TEST(test_current_page_across_period_end)
{
    const int64_t midnight = INT64_C(1796083200000); /* 2026-12-01T00:00:00Z */
    atomic_store(&h_clock_ms, midnight - 100);
    app_start(g_redis.port, NULL);
    put_board("pb", "{\"period\":\"daily\",\"retain\":0}");
    write_status("POST", "/boards/pb/scores", "{\"id\":\"a\",\"score\":5}", 200);
    hook_stall("pb", 1, 300, 1);
    struct job j;
    job_start(&j, "/boards/pb/rank", NULL);
    hook_wait("pb", 1, 1, 5);
    atomic_store(&h_clock_ms, midnight + 100); /* midnight passes during the computation */
    pthread_join(j.th, NULL);
    ck_assert_msg(j.rc == 0, "no answer");
    fprintf(stderr, "page_cache: across midnight (retain 0): %ld %.200s\n", j.res.status,
            j.res.body);
    ck_assert_msg(j.res.status == 200, "-> %ld %s", j.res.status, j.res.body);
    ck_assert_msg(strstr(j.res.body, "\"total\":0") ||
                      strstr(j.res.body, "\"total\":1,\"pages\":1,\"next\":null,\"prev\":null,"
                                         "\"items\":[{\"rank\":1,\"id\":\"a\",\"score\":5,"),
                  "neither the new day's page nor the one read before midnight: %s", j.res.body);
    http_result_free(&j.res);
}
END_TEST

/* Background refreshes of a page read with ?period=: the refresh used the request's period
 * argument after the request had ended and freed it (a use-after-free that ASan aborts on: the
 * event thread's hit path starts the refresh, answers, and the connection's arguments go). */
START_TEST(test_refresh_of_asked_period_outlives_request)
{
    app_start(g_redis.port, NULL);
    put_board("rp", "{\"period\":\"daily\",\"page_ttl_ms\":50}");
    write_status("POST", "/boards/rp/scores", "{\"id\":\"a\",\"score\":5}", 200);
    char today[16], path[128];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(today, sizeof(today), "%Y-%m-%d", &tm);
    snprintf(path, sizeof(path), "/boards/rp/rank?period=%s", today);
    double refreshes0 = metric("rankd_page_cache_refreshes_total");
    int ok = 0;
    for (int i = 0; i < 120; i++) {
        struct http_result r;
        ck_assert_int_eq(fetch(p_port, path, NULL, &r), 0);
        ok += r.status == 200;
        http_result_free(&r);
        sleep_ms(10);
    }
    double refreshes = metric("rankd_page_cache_refreshes_total") - refreshes0;
    fprintf(stderr, "page_cache: %s read 120 times (TTL 50 ms): %d answered 200, %.0f refreshes\n",
            path, ok, refreshes);
    ck_assert_int_eq(ok, 120);
    ck_assert_msg(refreshes >= 3, "only %.0f background refreshes: the path was not exercised",
                  refreshes);
}
END_TEST

/* ---------------------------------------------------------------- 15. freshness after idle */

/* Read page 1 of `board` (asserting 200) and return its X-Cache and whether `id` is on it. */
static int page1_shows(const char *board, const char *id, char *xc, size_t xc_len)
{
    char path[128], quoted[64];
    snprintf(path, sizeof(path), "/boards/%s/rank", board);
    snprintf(quoted, sizeof(quoted), "\"%s\"", id);
    struct http_result r;
    get_status(path, NULL, 200, &r);
    snprintf(xc, xc_len, "%s", xcache(&r));
    int shows = strstr(r.body, quoted) != NULL;
    http_result_free(&r);
    return shows;
}

/* A board's page_ttl_ms lowered after its page was cached: the copy is held to the TTL in force
 * (turned off: never served; shortened: no older than the new TTL plus one computation). The
 * event threads' hit path served the old copy once in both cases, under the TTL it was made
 * with (X-Cache: hit). */
START_TEST(test_lowered_ttl_applies_to_cached_pages)
{
    app_start(g_redis.port, tweak_no_xfetch);
    const char *boards[] = {"lt0", "lt1"};
    for (int i = 0; i < 2; i++) {
        put_board(boards[i], "{\"page_ttl_ms\":60000}");
        load_board(boards[i], "m", 30, 0);
        char xc[16];
        page1_shows(boards[i], "top", xc, sizeof(xc)); /* computed and cached */
        page1_shows(boards[i], "top", xc, sizeof(xc));
        ck_assert_str_eq(xc, "hit"); /* the event thread's hit path knows the board */
        char path[128];
        snprintf(path, sizeof(path), "/boards/%s/scores", boards[i]);
        write_status("POST", path, "{\"id\":\"top\",\"score\":1000000}", 200);
    }
    put_board("lt0", "{\"page_ttl_ms\":0}");
    char xc[16];
    int shows = page1_shows("lt0", "top", xc, sizeof(xc));
    ck_assert_msg(shows, "caching turned off, yet the page cached before was served (%s)", xc);
    ck_assert_str_eq(xc, "miss");
    sleep_ms(1200);
    put_board("lt1", "{\"page_ttl_ms\":1000}");
    shows = page1_shows("lt1", "top", xc, sizeof(xc));
    ck_assert_msg(shows, "TTL lowered to 1 s, yet a 1.2 s old copy was served (%s)", xc);
}
END_TEST

/* A page nobody read for a while is past its TTL by more than one computation: the next request
 * computes it (X-Cache miss) instead of being served the old copy while a background refresh
 * runs. The grace window is only for while a refresh is in flight (the freshness contract). */
START_TEST(test_idle_page_is_refreshed_not_stale)
{
    app_start(g_redis.port, tweak_no_xfetch);
    put_board("fi", "{\"page_ttl_ms\":300}");
    load_board("fi", "m", 30, 0);
    struct http_result r;
    get_status("/boards/fi/rank", NULL, 200, &r);
    http_result_free(&r);
    write_status("POST", "/boards/fi/scores", "{\"id\":\"newtop\",\"score\":1000}", 200);
    sleep_ms(900); /* three TTLs: the copy is still in Redis (10 s grace), but far too old */
    get_status("/boards/fi/rank", NULL, 200, &r);
    fprintf(stderr, "page_cache: idle page read 0.9 s after a write (TTL 0.3 s): X-Cache %s\n",
            xcache(&r));
    ck_assert_msg(strstr(r.body, "\"newtop\""), "a page older than its TTL was served: %s", r.body);
    ck_assert_str_eq(xcache(&r), "miss");
    http_result_free(&r);

    /* Many at once for a page that old: they share one computation, and none of them is served
     * the old copy while it runs (it is older than the contract allows). */
    write_status("POST", "/boards/fi/scores", "{\"id\":\"newer\",\"score\":2000}", 200);
    sleep_ms(900);
    hook_stall("fi", 1, 200, 1);
    enum { N = 30 };
    struct job jobs[N];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, N);
    for (int i = 0; i < N; i++)
        job_start(&jobs[i], "/boards/fi/rank", &bar);
    int old = 0;
    for (int i = 0; i < N; i++) {
        job_join_ok(&jobs[i]);
        old += strstr(jobs[i].res.body, "\"newer\"") == NULL;
        http_result_free(&jobs[i].res);
    }
    pthread_barrier_destroy(&bar);
    fprintf(stderr, "page_cache: %d concurrent reads of a 0.9 s old page (TTL 0.3 s): %d old\n", N,
            old);
    ck_assert_msg(old == 0, "%d of %d concurrent requests got the old page", old, N);
    ck_assert_int_eq(hook_count("fi", 1), 3); /* the first miss, the idle read, one for all 30 */
}
END_TEST

/* ---------------------------------------------------------------- suite */

static void add(Suite *s, const char *name, const TTest *test, double timeout_s)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, pc_setup, pc_teardown);
    tcase_set_timeout(tc, timeout_s);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

Suite *page_cache_suite(void)
{
    Suite *s = suite_create("page_cache");
    add(s, "stampede", test_stampede_one_computation, 30);
    add(s, "isolation", test_isolation_from_stalled_page, 30);
    add(s, "bounded_wait", test_bounded_wait_hung_holder, 20);
    add(s, "lock_expiry", test_dead_holder_lock_expires, 20);
    add(s, "lock_overrun", test_overrun_keeps_next_holders_lock, 20);
    add(s, "scripts", test_scripts_flush_and_restart, 20);
    add(s, "stale", test_stale_serving_one_refresh, 20);
    add(s, "stale_two_processes", test_stale_one_refresh_across_processes, 20);
    add(s, "freshness", test_freshness_bound, 20);
    add(s, "freshness_l1", test_freshness_bound_l1, 20);
    add(s, "canonical_key", test_canonical_key_and_no_redis_for_invalid, 60);
    add(s, "maxmemory", test_maxmemory_volatile_pages_only, 30);
    add(s, "http_headers", test_etag_304_and_headers, 20);
    add(s, "jitter", test_soft_expiry_jitter, 20);
    add(s, "generation", test_generation_retires_old_pages, 20);
    add(s, "breaker", test_cache_redis_down_breaker, 30);
    add(s, "generation_restart", test_generation_after_data_redis_restart, 20);
    add(s, "xfetch", test_xfetch_early_refresh, 20);
    add(s, "batched_hits", test_batched_hits_one_round_trip, 20);
    add(s, "stop_in_work", test_stop_finishes_requests_in_work, 20);
    add(s, "period_end", test_current_page_across_period_end, 20);
    add(s, "idle_refresh", test_idle_page_is_refreshed_not_stale, 20);
    add(s, "lowered_ttl", test_lowered_ttl_applies_to_cached_pages, 20);
    add(s, "refresh_period", test_refresh_of_asked_period_outlives_request, 30);
    return s;
}
