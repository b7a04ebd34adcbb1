/* fixture.c -- real redis-server, in-process rankd, libcurl client; see fixture.h. */
#include "fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>

#include "score_codec.h"

/* 1 when nothing listens on or holds 127.0.0.1:port now (a bind to it succeeds). */
static int port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* A free loopback port for a server the test starts, from 20000 up to the kernel's ephemeral
 * range (ip_local_port_range), as scripts/redis-fixture.sh picks: a port from that range (a
 * bind to port 0) can be taken meanwhile as an outgoing connection's local port by any client on
 * the machine (a suite's thousand streams, a parallel job), and then the server cannot bind it,
 * or one restarted on it finds it gone: "Connection refused" in a later step. Never 6379. */
static int free_port(void)
{
    static unsigned seed;
    if (!seed)
        seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    int lo = 0, span = 10000;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d", &lo) != 1)
            lo = 0;
        fclose(f);
    }
    if (lo > 21000)
        span = lo - 20000;
    for (int tries = 0; tries < 1000; tries++) {
        int port = 20000 + (int)(rand_r(&seed) % (unsigned)span);
        if (port != 6379 && port_free(port))
            return port;
    }
    return -1;
}

int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int wait_ping(int port, int ms)
{
    for (int waited = 0; waited < ms; waited += 20) {
        struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            freeReplyObject(r);
            redisFree(c);
            if (ok)
                return 0;
        } else {
            redisFree(c);
        }
        usleep(20000);
    }
    return -1;
}

static int spawn(struct redis_proc *r)
{
    char port[16];
    snprintf(port, sizeof(port), "%d", r->port);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char log[200];
        snprintf(log, sizeof(log), "%s/redis.log", r->dir);
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", r->dir, "--logfile", log, (char *)NULL);
        _exit(127);
    }
    r->pid = pid;
    if (wait_ping(r->port, 5000)) {
        fprintf(stderr, "redis-server did not answer on port %d (see %s/redis.log)\n", r->port,
                r->dir);
        redis_proc_stop(r);
        return -1;
    }
    return 0;
}

int redis_proc_start(struct redis_proc *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->dir, sizeof(r->dir), "/tmp/rankd-test-XXXXXX");
    if (!mkdtemp(r->dir))
        return -1;
    r->port = free_port();
    return spawn(r);
}

void redis_proc_stop(struct redis_proc *r)
{
    if (r->pid <= 0)
        return;
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

int redis_proc_restart(struct redis_proc *r)
{
    redis_proc_stop(r);
    return spawn(r);
}

void fixture_redis_url(int redis_port, char *out, size_t len)
{
    const struct cluster_proc *c = fixture_cluster();
    for (int i = 0; c && i < CLUSTER_PROC_NODES; i++)
        if (c->ports[i] == redis_port) {
            cluster_proc_url(c, out, len);
            return;
        }
    snprintf(out, len, "redis://127.0.0.1:%d/0", redis_port);
}

int rankd_proc_start(struct rankd_proc *p, int redis_port, const char *const *args)
{
    struct rankd_proc_opts o = {.args = args};
    return rankd_proc_start_opts(p, redis_port, &o);
}

int rankd_proc_start_opts(struct rankd_proc *p, int redis_port, const struct rankd_proc_opts *o)
{
    char exe[PATH_MAX], listen[64], redis[220], url[200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    if (!slash)
        return -1;
    strcpy(slash + 1, "rankd");
    memset(p, 0, sizeof(*p));
    p->port = free_port();
    snprintf(listen, sizeof(listen), "--listen=127.0.0.1:%d", p->port);
    fixture_redis_url(redis_port, url, sizeof(url));
    snprintf(redis, sizeof(redis), "--redis=%s", url);
    const char *argv[32] = {exe, listen, redis};
    int k = 3;
    if (!o->no_token)
        argv[k++] = "--write-token=" TEST_TOKEN;
    if (!o->log_path)
        argv[k++] = "--log-level=warn";
    for (int i = 0; o->args && o->args[i] && k < 31; i++)
        argv[k++] = o->args[i];
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (o->log_path) {
            FILE *f = freopen(o->log_path, "w", stderr);
            if (!f)
                _exit(126);
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    p->pid = pid;
    for (int waited = 0; waited < 5000; waited += 20) {
        struct http_result r;
        memset(&r, 0, sizeof(r));
        int ok = http_get(p->port, "/healthz", &r) == 0 && r.status == 200;
        http_result_free(&r);
        if (ok)
            return 0;
        usleep(20000);
    }
    fprintf(stderr, "%s did not answer on port %d\n", exe, p->port);
    rankd_proc_stop(p);
    return -1;
}

double rankd_proc_stop(struct rankd_proc *p)
{
    if (p->pid <= 0)
        return 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kill(p->pid, SIGCONT); /* a stopped process cannot take the TERM */
    kill(p->pid, SIGTERM);
    int waited = 0;
    while (waitpid(p->pid, NULL, WNOHANG) == 0) {
        if (++waited == 6000)
            kill(p->pid, SIGKILL);
        usleep(10000);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    p->pid = 0;
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

void redis_admin_patient(redisContext *c)
{
    struct timeval tv = {ADMIN_COMMAND_TIMEOUT_S, 0};
    redisSetTimeout(c, tv);
}

redisContext *redis_admin(int port)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    ck_assert_msg(c && !c->err, "admin connection to redis on port %d failed", port);
    redis_admin_patient(c);
    return c;
}

redisReply *redis_admin_cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = cluster_admin_vcmd(c, fmt, ap); /* NULL: c is no cluster node */
    va_end(ap);
    if (r)
        return r;
    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    ck_assert_msg(r != NULL, "admin command failed: %s", c->errstr);
    return r;
}

struct rankd *rankd_test_start_with(int redis_port, const char *token,
                                    void (*tweak)(struct config *cfg),
                                    const struct rankd_hooks *hooks)
{
    struct config cfg;
    config_defaults(&cfg);
    snprintf(cfg.listen_host, sizeof(cfg.listen_host), "127.0.0.1");
    cfg.listen_port = 0;
    cfg.max_per_ip = 0; /* every test client is 127.0.0.1; the tests of the limit set their own */
    cfg.max_streams_per_ip = 0; /* the same for event streams */
    char url[200];
    fixture_redis_url(redis_port, url, sizeof(url));
    ck_assert_int_eq(config_parse_redis_url(url, &cfg.redis), 0);
    snprintf(cfg.write_token, sizeof(cfg.write_token), "%s", token);
    snprintf(cfg.default_board, sizeof(cfg.default_board), "default");
    cfg.threads = 4;
    cfg.log_level = LOG_LEVEL_NONE; /* 5xx lines would flood the fault tests' output */
    if (tweak)
        tweak(&cfg);
    log_set_level(cfg.log_level);
    int err = 0;
    struct rankd *app = rankd_start_hooked(&cfg, hooks, &err);
    ck_assert_msg(app != NULL, "rankd_start failed: %d", err);
    return app;
}

struct rankd *rankd_test_start(int redis_port, const char *token)
{
    return rankd_test_start_with(redis_port, token, NULL, NULL);
}

#define ZADD_CHUNK 1000 /* members per pipelined ZADD */

static _Atomic int64_t fake_now_ms; /* 0: the real clock */

static int64_t fixture_clock(void)
{
    int64_t v = atomic_load(&fake_now_ms);
    if (v)
        return v;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

const struct rankd_hooks fixture_clock_hooks = {.page_delay = NULL, .clock_ms = fixture_clock};

int64_t fixture_ts(const char *iso)
{
    int y, mo, d, h, mi, s, ms = 0;
    char z = 0;
    int n = sscanf(iso, "%d-%d-%dT%d:%d:%d.%dZ", &y, &mo, &d, &h, &mi, &s, &ms);
    if (n == 6)
        n = sscanf(iso, "%d-%d-%dT%d:%d:%d%c", &y, &mo, &d, &h, &mi, &s, &z) == 7 && z == 'Z' ? 7
                                                                                              : 0;
    ck_assert_msg(n == 7, "bad test timestamp %s", iso);
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

void fixture_set_clock(const char *iso)
{
    atomic_store(&fake_now_ms, iso ? fixture_ts(iso) : 0);
}

void fixture_load_board(redisContext *admin, const char *prefix, const char *board, int n,
                        const char *settings)
{
    char z[200], dense[200];
    snprintf(z, sizeof(z), "%s:{%s}:z", prefix, board);
    snprintf(dense, sizeof(dense), "%s:{%s}:dense", prefix, board); /* its distinct scores */
    redisContext *registry = admin;
    admin =
        redis_admin_for_key(admin, z); /* a cluster: the board's node (one slot, its dense too) */
    const struct score_layout layout = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
    const int argc_max = 2 + 2 * ZADD_CHUNK;
    const char **argv = calloc((size_t)argc_max, sizeof(*argv));
    size_t *argvlen = calloc((size_t)argc_max, sizeof(*argvlen));
    char(*text)[32] = calloc((size_t)argc_max, sizeof(*text));
    ck_assert(argv && argvlen && text);
    int commands = 0;
    for (int at = 0; at < n; at += ZADD_CHUNK) {
        for (int set = 0; set < 2; set++) { /* the members, then their keys (all distinct) */
            int argc = 2;
            argv[0] = "ZADD";
            argv[1] = set ? dense : z;
            for (int i = at; i < n && i < at + ZADD_CHUNK; i++) {
                int64_t key = score_codec_key(&layout, n - i);
                double stored;
                ck_assert_int_eq(score_codec_pack(&layout, key, 0, &stored), 0);
                snprintf(text[argc], sizeof(text[argc]), "%.17g", set ? (double)key : stored);
                if (set)
                    snprintf(text[argc + 1], sizeof(text[argc + 1]), "%lld", (long long)key);
                else
                    snprintf(text[argc + 1], sizeof(text[argc + 1]), "m%06d", i);
                argv[argc] = text[argc];
                argv[argc + 1] = text[argc + 1];
                argc += 2;
            }
            for (int i = 0; i < argc; i++)
                argvlen[i] = strlen(argv[i]);
            ck_assert_int_eq(redisAppendCommandArgv(admin, argc, argv, argvlen), REDIS_OK);
            commands++;
        }
    }
    char hset[512];
    snprintf(hset, sizeof(hset), "HSET %s:{%s}:meta %s", prefix, board, settings);
    ck_assert_int_eq(redisAppendCommand(admin, hset), REDIS_OK);
    long long added = 0;
    for (int i = 0; i < commands + 1; i++) {
        void *v = NULL;
        ck_assert_msg(redisGetReply(admin, &v) == REDIS_OK && v, "load: %s", admin->errstr);
        redisReply *r = v;
        ck_assert_msg(r->type == REDIS_REPLY_INTEGER, "load: reply %d: %s", i,
                      r->type == REDIS_REPLY_ERROR ? r->str : "not an integer");
        if (i < commands)
            added += r->integer;
        freeReplyObject(r);
    }
    ck_assert_int_eq(added, 2 * (long long)n);
    redisReply *r = redis_admin_cmd(registry, "SADD %s:boards %s", prefix, board);
    ck_assert_int_eq(r->type, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    free(argv);
    free(argvlen);
    free(text);
}

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
    struct buf *b = userdata;
    return buf_append(b, p, size * n) == 0 ? size * n : 0;
}

int http_req(int port, const char *method, const char *path, const char *body, size_t body_len,
             const char *ctype, const char *token, struct http_result *out)
{
    return http_req_h(port, method, path, body, body_len, ctype, token, NULL, out);
}

int http_varies(const char *head, const char *token, int *lines)
{
    size_t tn = strlen(token);
    int found = 0, n = 0;
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p, "\r\n")) {
        p += 2;
        if (strncasecmp(p, "Vary:", 5) != 0)
            continue;
        n++;
        const char *end = strstr(p, "\r\n");
        const char *v = p + 5;
        if (!end)
            end = v + strlen(v);
        while (v < end) { /* each element of the list, blanks around it dropped */
            while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
                v++;
            const char *e = v;
            while (e < end && *e != ',')
                e++;
            size_t len = (size_t)(e - v);
            while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
                len--;
            if (len == tn && strncasecmp(v, token, tn) == 0)
                found = 1;
            v = e;
        }
    }
    if (lines)
        *lines = n;
    return found;
}

int http_req_h(int port, const char *method, const char *path, const char *body, size_t body_len,
               const char *ctype, const char *token, const char *const *headers,
               struct http_result *out)
{
    memset(out, 0, sizeof(*out));
    CURL *curl = curl_easy_init();
    if (!curl)
        return -1;
    char url[16384], auth[600], ct[200]; /* paths of up to 16 KB: the long-path tests */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    struct curl_slist *hdrs = NULL;
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hdrs = curl_slist_append(hdrs, auth);
    }
    if (body) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
        hdrs = curl_slist_append(hdrs, ct);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    for (size_t i = 0; headers && headers[i]; i++)
        hdrs = curl_slist_append(hdrs, headers[i]);
    struct buf b = {0}, h = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &h);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &out->seconds);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) {
        buf_free(&b);
        buf_free(&h);
        return -1;
    }
    if (!b.data)
        buf_append(&b, "", 0);
    out->body = b.data;
    out->len = b.len;
    out->headers = h.data;
    out->json = cJSON_Parse(out->body);
    return 0;
}

int http_get(int port, const char *path, struct http_result *out)
{
    return http_req(port, "GET", path, NULL, 0, NULL, NULL, out);
}

int http_write(int port, const char *method, const char *path, const char *json,
               struct http_result *out)
{
    return http_req(port, method, path, json, json ? strlen(json) : 0, NULL, TEST_TOKEN, out);
}

double http_metric(int port, const char *name)
{
    struct http_result r;
    memset(&r, 0, sizeof(r));
    if (http_get(port, "/metrics", &r) || r.status != 200 || !r.body) {
        http_result_free(&r);
        return -1;
    }
    char pat[160];
    snprintf(pat, sizeof(pat), "\n%s ", name);
    const char *p = strstr(r.body, pat);
    double v = p ? strtod(p + strlen(pat), NULL) : -1;
    http_result_free(&r);
    return v;
}

void http_result_free(struct http_result *r)
{
    free(r->body);
    free(r->headers);
    cJSON_Delete(r->json);
    memset(r, 0, sizeof(*r));
}

const char *http_error_code(const struct http_result *r)
{
    const cJSON *e = cJSON_GetObjectItem(r->json, "error");
    const cJSON *c = cJSON_GetObjectItem(e, "code");
    return cJSON_IsString(c) ? c->valuestring : "";
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_append(&b, chunk, n);
    fclose(f);
    if (len)
        *len = b.len;
    return b.data;
}

/* ---------------------------------------------------------------- MONITOR lines */

int mon_parse(const char *line, struct mon_cmd *c)
{
    memset(c, 0, sizeof(*c));
    const char *open = strchr(line, '[');
    const char *close = open ? strstr(open, "] ") : NULL;
    if (!close)
        return -1;
    c->lua = close - open >= 4 && strncmp(close - 3, "lua", 3) == 0;
    const char *p = close + 2;
    while (*p == '"') {
        char *out = c->argc < MON_TOKENS ? c->argv[c->argc] : NULL;
        size_t n = 0;
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++; /* \" \\ \n ...: keep the escaped character */
            if (out && n + 1 < MON_TOKEN_LEN)
                out[n++] = *p;
        }
        if (*p != '"')
            return -1;
        if (out)
            out[n] = '\0';
        c->argc++;
        p++;
        if (*p == ' ')
            p++;
    }
    return c->argc > 0 ? 0 : -1;
}

int mon_is(const struct mon_cmd *c, const char *name)
{
    return strcasecmp(c->argv[0], name) == 0;
}
