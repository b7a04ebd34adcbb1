/*
 * fullpage.c -- the classic baseline of the benchmark: whole rendered responses cached in Redis.
 *
 * A small HTTP/1.1 keep-alive server (one thread per connection, as rankd 0.1 was) that answers
 *   GET /boards/{board}/rank?page=N      the same JSON body as rankd's page
 *   GET /boards/{board}/members/{id}     the same JSON body as rankd's member lookup
 *   GET /stats[?reset=1]                 {"hits","misses","source_queries"} (and reset them)
 * the way pages are commonly cached in front of a database: cache-aside, each response serialized
 * under one key (fp:{board}:page:N, fp:{board}:member:ID) with a long TTL (--ttl-ms, default 60 s),
 * records duplicated inside every cached page, and on a miss a rebuild from a slow source. The
 * source is rankd's own data in the same Redis (sorted set, settings hash, records hash) read after
 * sleeping --delay-ms (default 250 ms), standing for the database query. Every request that misses
 * rebuilds (no lock, no single-flight, no stale serving): that is the baseline being compared.
 * Writes are not handled here; they go to rankd (the source) and never invalidate these keys.
 *
 * Usage: fullpage --listen PORT --redis-port PORT [--prefix rankd] [--ttl-ms 60000]
 *                 [--delay-ms 250]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TIE_BITS 21
#define REQ_MAX 8192

static int listen_port, redis_port;
static const char *prefix = "rankd";
static long ttl_ms = 60000, delay_ms = 250;
static atomic_ulong hits, misses, source_queries;

struct buf {
    char *p;
    size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    put(b, tmp, (size_t)(n < (int)sizeof(tmp) ? n : (int)sizeof(tmp) - 1));
}

/* A JSON string (ids here are plain; quotes and backslashes escaped anyway). */
static void put_json_string(struct buf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            put(b, "\\", 1);
        put(b, s + i, 1);
    }
    put(b, "\"", 1);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Score in board units from a stored value (desc board, tiebreak first|last: 21 tie bits). */
static long long decode_score(const char *stored)
{
    double v = strtod(stored, NULL);
    long long s = (long long)v;
    long long key = s >= 0 ? s >> TIE_BITS : -((-s + (1LL << TIE_BITS) - 1) >> TIE_BITS);
    return -key;
}

/* ---------------------------------------------------------------- the slow source */

static void source_delay(void)
{
    atomic_fetch_add(&source_queries, 1);
    struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static int build_page(redisContext *rc, const char *board, long page, struct buf *out)
{
    source_delay();
    char z[256], meta[256], items[256];
    snprintf(z, sizeof(z), "%s:{%s}:z", prefix, board);
    snprintf(meta, sizeof(meta), "%s:{%s}:meta", prefix, board);
    snprintf(items, sizeof(items), "%s:items", prefix);
    redisReply *r = redisCommand(rc, "HGET %s page_size", meta);
    if (!r)
        return -1;
    long size = r->type == REDIS_REPLY_STRING ? atol(r->str) : 0;
    int exists = r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    if (!exists)
        return 404;
    if (size < 1 || size > 100)
        size = 20;
    r = redisCommand(rc, "ZCARD %s", z);
    if (!r)
        return -1;
    long long total = r->integer;
    freeReplyObject(r);
    long long start = (long long)(page - 1) * size;
    redisReply *range = redisCommand(rc, "ZRANGE %s %lld %lld WITHSCORES", z, start,
                                     start + size - 1);
    if (!range)
        return -1;
    size_t n = range->elements / 2;
    redisReply *recs = NULL;
    if (n) {
        const char **argv = calloc(n + 2, sizeof(*argv));
        size_t *lens = calloc(n + 2, sizeof(*lens));
        argv[0] = "HMGET";
        lens[0] = 5;
        argv[1] = items;
        lens[1] = strlen(items);
        for (size_t i = 0; i < n; i++) {
            argv[i + 2] = range->element[2 * i]->str;
            lens[i + 2] = range->element[2 * i]->len;
        }
        recs = redisCommandArgv(rc, (int)n + 2, argv, lens);
        free(argv);
        free(lens);
        if (!recs) {
            freeReplyObject(range);
            return -1;
        }
    }
    putf(out, "{\"board\":\"%s\",\"page\":%ld,\"size\":%ld,\"total\":%lld,\"pages\":%lld,\"items\":[",
         board, page, size, total, (total + size - 1) / size);
    for (size_t i = 0; i < n; i++) {
        redisReply *id = range->element[2 * i], *rec = recs->element[i];
        putf(out, "%s{\"rank\":%lld,\"id\":", i ? "," : "", start + (long long)i + 1);
        put_json_string(out, id->str, id->len);
        putf(out, ",\"score\":%lld,\"record\":", decode_score(range->element[2 * i + 1]->str));
        if (rec->type == REDIS_REPLY_STRING)
            put(out, rec->str, rec->len);
        else
            puts_(out, "null");
        puts_(out, "}");
    }
    puts_(out, "]}");
    freeReplyObject(range);
    if (recs)
        freeReplyObject(recs);
    return 200;
}

static int build_member(redisContext *rc, const char *board, const char *id, struct buf *out)
{
    source_delay();
    char z[256], meta[256], items[256];
    snprintf(z, sizeof(z), "%s:{%s}:z", prefix, board);
    snprintf(meta, sizeof(meta), "%s:{%s}:meta", prefix, board);
    snprintf(items, sizeof(items), "%s:items", prefix);
    redisReply *s = redisCommand(rc, "ZSCORE %s %s", z, id);
    if (!s)
        return -1;
    if (s->type != REDIS_REPLY_STRING) {
        freeReplyObject(s);
        return 404;
    }
    redisReply *rk = redisCommand(rc, "ZRANK %s %s", z, id);
    redisReply *rec = redisCommand(rc, "HGET %s %s", items, id);
    redisReply *ps = redisCommand(rc, "HGET %s page_size", meta);
    if (!rk || !rec || !ps) {
        freeReplyObject(s);
        return -1;
    }
    long size = ps->type == REDIS_REPLY_STRING ? atol(ps->str) : 20;
    if (size < 1 || size > 100)
        size = 20;
    long long rank = rk->integer + 1;
    puts_(out, "{\"id\":");
    put_json_string(out, id, strlen(id));
    putf(out, ",\"score\":%lld,\"rank\":%lld,\"page\":%lld,\"record\":", decode_score(s->str), rank,
         (rank - 1) / size + 1);
    if (rec->type == REDIS_REPLY_STRING)
        put(out, rec->str, rec->len);
    else
        puts_(out, "null");
    puts_(out, "}");
    freeReplyObject(s);
    freeReplyObject(rk);
    freeReplyObject(rec);
    freeReplyObject(ps);
    return 200;
}

/* ---------------------------------------------------------------- HTTP */

static int send_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

static int reply(int fd, int status, const char *xcache, long long age_s, const char *body,
                 size_t len)
{
    char h[256];
    const char *reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Error";
    int hl = snprintf(h, sizeof(h),
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nX-Cache: %s\r\nAge: %lld\r\n\r\n",
                      status, reason, len, xcache, age_s);
    struct iovec iov[2] = {{h, (size_t)hl}, {(void *)body, len}};
    return send_all(fd, iov, 2);
}

/* Serve one cached response: GET, or rebuild + SET PX on a miss. */
static int cached(int fd, redisContext *rc, const char *key, const char *board, long page,
                  const char *id)
{
    redisReply *r = redisCommand(rc, "GET %s", key);
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_STRING) {
        atomic_fetch_add(&hits, 1);
        char *nl = memchr(r->str, '\n', r->len);
        long long created = atoll(r->str);
        long long age = (wall_ms() - created) / 1000;
        int rc2 = nl ? reply(fd, 200, "hit", age < 0 ? 0 : age, nl + 1,
                             r->len - (size_t)(nl + 1 - r->str))
                     : -1;
        freeReplyObject(r);
        return rc2;
    }
    freeReplyObject(r);
    atomic_fetch_add(&misses, 1);
    struct buf v = {0};
    putf(&v, "%" PRId64 "\n", wall_ms());
    size_t hdr = v.len;
    int st = id ? build_member(rc, board, id, &v) : build_page(rc, board, page, &v);
    if (st < 0) {
        free(v.p);
        return -1;
    }
    if (st != 200) {
        free(v.p);
        const char *e = "{\"error\":{\"code\":\"not_found\",\"message\":\"not found\"}}";
        return reply(fd, st, "miss", 0, e, strlen(e));
    }
    redisReply *s = redisCommand(rc, "SET %s %b PX %ld", key, v.p, v.len, ttl_ms);
    if (s)
        freeReplyObject(s);
    int rc2 = reply(fd, 200, "miss", 0, v.p + hdr, v.len - hdr);
    free(v.p);
    return rc2;
}

static int handle(int fd, redisContext *rc, char *path)
{
    char key[512], board[128], id[256];
    if (strncmp(path, "/stats", 6) == 0) {
        char b[256];
        int n = snprintf(b, sizeof(b), "{\"hits\":%lu,\"misses\":%lu,\"source_queries\":%lu}",
                         atomic_load(&hits), atomic_load(&misses), atomic_load(&source_queries));
        if (strstr(path, "reset=1")) {
            atomic_store(&hits, 0);
            atomic_store(&misses, 0);
            atomic_store(&source_queries, 0);
        }
        return reply(fd, 200, "none", 0, b, (size_t)n);
    }
    long page = 0;
    const char *q;
    if (sscanf(path, "/boards/%127[A-Za-z0-9._-]/rank", board) == 1 && (q = strstr(path, "page="))) {
        page = atol(q + 5);
        if (page < 1)
            page = 1;
        snprintf(key, sizeof(key), "fp:{%s}:page:%ld", board, page);
        return cached(fd, rc, key, board, page, NULL);
    }
    if (sscanf(path, "/boards/%127[A-Za-z0-9._-]/members/%255[^/?]", board, id) == 2) {
        snprintf(key, sizeof(key), "fp:{%s}:member:%s", board, id);
        return cached(fd, rc, key, board, 0, id);
    }
    const char *e = "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\"}}";
    return reply(fd, 404, "none", 0, e, strlen(e));
}

static void *conn_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    struct timeval tv = {2, 0};
    redisContext *rc = redisConnectWithTimeout("127.0.0.1", redis_port, tv);
    if (!rc || rc->err) {
        fprintf(stderr, "fullpage: redis connect failed\n");
        if (rc)
            redisFree(rc);
        close(fd);
        return NULL;
    }
    char req[REQ_MAX];
    size_t len = 0;
    for (;;) {
        char *end = memmem(req, len, "\r\n\r\n", 4);
        if (!end) {
            if (len == sizeof(req))
                break;
            ssize_t r = read(fd, req + len, sizeof(req) - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            continue;
        }
        size_t used = (size_t)(end - req) + 4;
        *end = 0;
        long clen = 0;
        char *cl = strcasestr(req, "\r\nContent-Length:");
        if (cl)
            clen = atol(cl + 17);
        int close_after = strcasestr(req, "\r\nConnection: close") != NULL;
        char method[8], path[2048];
        int ok = sscanf(req, "%7s %2047s", method, path) == 2;
        if (!ok || handle(fd, rc, path) < 0 || close_after || clen)
            break; /* no request bodies here: a POST is a client error, close */
        memmove(req, req + used, len - used);
        len -= used;
    }
    redisFree(rc);
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"listen", 1, 0, 'l'},   {"redis-port", 1, 0, 'r'},
                                       {"prefix", 1, 0, 'p'},   {"ttl-ms", 1, 0, 't'},
                                       {"delay-ms", 1, 0, 'd'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'l': listen_port = atoi(optarg); break;
        case 'r': redis_port = atoi(optarg); break;
        case 'p': prefix = optarg; break;
        case 't': ttl_ms = atol(optarg); break;
        case 'd': delay_ms = atol(optarg); break;
        default: fprintf(stderr, "usage: see the header of bench/fullpage.c\n"); return 2;
        }
    }
    if (listen_port <= 0 || redis_port <= 0 || ttl_ms < 1 || delay_ms < 0) {
        fprintf(stderr, "usage: see the header of bench/fullpage.c\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)listen_port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 512) < 0) {
        perror("fullpage: listen");
        return 1;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (;;) {
        int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
                continue;
            perror("fullpage: accept");
            return 1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        pthread_t t;
        if (pthread_create(&t, &attr, conn_main, (void *)(intptr_t)fd) != 0)
            close(fd);
    }
}
