/* test_clients.c -- slow and greedy clients (the hardening issue): a request's headers arrive
 * within --header-timeout-ms however slowly they trickle, a client over a connection limit gets
 * a quick 503 with Retry-After (not a silent close), and the per-address limit is on by default. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"
#include "cors.h"
#include "suites.h"

/* Read what rankd sends on fd until it closes the connection or `ms` pass; returns the bytes
 * (malloc'd, NUL-terminated), *closed = 1 when it was closed, *took_ms the time until then. */
static char *read_until_closed(int fd, int ms, int *closed, int64_t *took_ms)
{
    size_t cap = 8192, len = 0;
    char *out = calloc(1, cap);
    int64_t t0 = util_now_ms();
    *closed = 0;
    while (util_now_ms() - t0 < ms && len + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = recv(fd, out + len, cap - len - 1, 0);
        if (n <= 0) {
            *closed = 1;
            break;
        }
        len += (size_t)n;
    }
    *took_ms = util_now_ms() - t0;
    out[len] = '\0';
    return out;
}

static int g_header_timeout_ms;
static void short_header_timeout(struct config *cfg)
{
    cfg->header_timeout_ms = g_header_timeout_ms;
}

/* Headers trickled one byte every 50 ms (each byte resets an idle timeout, never this one):
 * rankd answers 408 and closes once --header-timeout-ms has passed since the connection opened.
 * Before: the connection stayed open as long as the bytes kept coming. */
START_TEST(headers_trickled)
{
    signal(SIGPIPE, SIG_IGN);
    g_header_timeout_ms = 400;
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, short_header_timeout, NULL);
    int port = rankd_port(app);
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    const char *req =
        "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    int64_t t0 = util_now_ms();
    int cut = 0;
    for (size_t i = 0; req[i] && util_now_ms() - t0 < 3000; i++) {
        if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1) {
            cut = 1;
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0)
            break; /* rankd answered */
    }
    int closed = 0;
    int64_t took = 0;
    char *got = read_until_closed(fd, 3000, &closed, &took);
    int64_t total = util_now_ms() - t0;
    close(fd);
    /* a request that does arrive in time still works on a fresh connection */
    long health = 0;
    {
        struct http_result r;
        ck_assert_int_eq(http_get(port, "/healthz", &r), 0);
        health = r.status;
        http_result_free(&r);
    }
    rankd_stop(app);
    fprintf(stderr, "clients: trickled headers cut after %lld ms: %.40s\n", (long long)total, got);
    ck_assert_msg(closed || cut, "the connection stayed open for %lld ms", (long long)total);
    ck_assert_msg(total >= 350 && total < 1500, "cut after %lld ms, want about 400",
                  (long long)total);
    ck_assert_msg(strncmp(got, "HTTP/1.1 408", 12) == 0, "want a 408 before the close, got: %s",
                  got);
    ck_assert_msg(strstr(got, "\"code\":\"header_timeout\""), "%s", got);
    ck_assert_int_eq(health, 200);
    free(got);
}
END_TEST

/* A keep-alive connection idle between requests is not cut by the header deadline (the idle
 * timeout governs it), and its next request's headers get the whole deadline again. */
START_TEST(keep_alive_not_cut)
{
    g_header_timeout_ms = 300;
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, short_header_timeout, NULL);
    int port = rankd_port(app);
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
        char buf[2048];
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 2000), 1);
        ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
        ck_assert_int_gt(n, 0);
        buf[n] = '\0';
        ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "round %d: %s", round, buf);
        util_sleep_ms(500); /* idle longer than the header deadline */
    }
    close(fd);
    rankd_stop(app);
}
END_TEST

static int g_max_conn, g_max_per_ip;
static void small_limits(struct config *cfg)
{
    cfg->max_connections = g_max_conn;
    cfg->max_per_ip = g_max_per_ip;
}

/* Open connections until one more is over the limit; that one gets a 503 with Retry-After and
 * rankd's JSON error, at once (before: a silent close). */
static void expect_over_limit(int max_conn, int max_per_ip, int open_first, const char *code)
{
    signal(SIGPIPE, SIG_IGN);
    g_max_conn = max_conn;
    g_max_per_ip = max_per_ip;
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, small_limits, NULL);
    int port = rankd_port(app);
    int fds[16];
    ck_assert_int_le(open_first, 16);
    for (int i = 0; i < open_first; i++) {
        fds[i] = connect_loopback(port);
        ck_assert_int_ge(fds[i], 0);
        /* one request each, so rankd has surely taken the connection */
        const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
        ck_assert_int_eq(send(fds[i], req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
        char buf[1024];
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 2000), 1);
        ck_assert_int_gt(recv(fds[i], buf, sizeof(buf), 0), 0);
    }
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    send(fd, req, strlen(req), MSG_NOSIGNAL);
    int closed = 0;
    int64_t took = 0;
    char *got = read_until_closed(fd, 2000, &closed, &took);
    close(fd);
    for (int i = 0; i < open_first; i++)
        close(fds[i]);
    rankd_stop(app);
    fprintf(stderr, "clients: over the limit (%d, per address %d) after %lld ms: %.60s\n", max_conn,
            max_per_ip, (long long)took, got);
    ck_assert_msg(strncmp(got, "HTTP/1.1 503", 12) == 0, "want 503, got: %s", got);
    ck_assert_msg(strcasestr(got, "\r\nRetry-After: 1\r\n"), "no Retry-After: %s", got);
    char want[64];
    snprintf(want, sizeof(want), "\"code\":\"%s\"", code);
    ck_assert_msg(strstr(got, want), "want %s: %s", code, got);
    ck_assert_msg(closed && took < 500, "closed %d after %lld ms", closed, (long long)took);
    free(got);
}

START_TEST(over_max_connections)
{
    expect_over_limit(3, 0, 3, "too_many_connections");
}
END_TEST

START_TEST(over_per_address_limit)
{
    expect_over_limit(100, 2, 2, "too_many_connections_from_address");
}
END_TEST

/* The per-address limit is on by default (config.h says why the number). */
START_TEST(per_address_default_on)
{
    struct config c;
    config_defaults(&c);
    ck_assert_int_gt(c.max_per_ip, 0);
    ck_assert_int_lt(c.max_per_ip, c.max_connections);
    ck_assert_int_eq(c.header_timeout_ms, 10000);
}
END_TEST

/* --cors-origin as given (rankd parses it at start-up), checked here to be a valid one. */
static void cors_set(struct config *cfg, const char *origins)
{
    char err[160];
    struct cors parsed;
    ck_assert_int_eq(cors_parse(origins, &parsed, err, sizeof(err)), 0);
    ck_assert_uint_lt(strlen(origins), sizeof(cfg->cors_text));
    strcpy(cfg->cors_text, origins);
}

static void cors_two_origins(struct config *cfg)
{
    cors_set(cfg, "https://app.example, http://localhost:5173");
}

/* One raw request with Connection: close; the whole reply (malloc'd). */
static char *raw(int port, const char *req)
{
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    int closed = 0;
    int64_t took = 0;
    char *got = read_until_closed(fd, 3000, &closed, &took);
    close(fd);
    return got;
}

/* --cors-origin: an allowed origin's reads carry Access-Control-Allow-Origin (and Vary: Origin),
 * its GET preflight is 204 with the methods and headers; another origin, or a write, gets none
 * (before: no CORS headers at all, and OPTIONS was 405). */
START_TEST(cors_reads_only)
{
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, cors_two_origins, NULL);
    int port = rankd_port(app);
    char *a = raw(port, "GET /healthz HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n"
                        "Connection: close\r\n\r\n");
    char *b = raw(port, "GET /healthz HTTP/1.1\r\nHost: t\r\nOrigin: https://evil.example\r\n"
                        "Connection: close\r\n\r\n");
    char *pre =
        raw(port, "OPTIONS /boards/x/rank HTTP/1.1\r\nHost: t\r\n"
                  "Origin: http://localhost:5173\r\nAccess-Control-Request-Method: GET\r\n"
                  "Access-Control-Request-Headers: if-none-match\r\nConnection: close\r\n\r\n");
    char *prew =
        raw(port, "OPTIONS /boards/x/scores HTTP/1.1\r\nHost: t\r\n"
                  "Origin: http://localhost:5173\r\nAccess-Control-Request-Method: POST\r\n"
                  "Connection: close\r\n\r\n");
    char *w =
        raw(port, "POST /boards/x/scores HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n"
                  "Authorization: Bearer " TEST_TOKEN "\r\nContent-Type: application/json\r\n"
                  "Content-Length: 21\r\nConnection: close\r\n\r\n{\"id\":\"a\",\"score\":10}");
    rankd_stop(app);
    ck_assert_msg(strncmp(a, "HTTP/1.1 200", 12) == 0, "%s", a);
    ck_assert_msg(strcasestr(a, "\r\nAccess-Control-Allow-Origin: https://app.example\r\n"), "%s",
                  a);
    ck_assert_msg(http_varies(a, "Origin", NULL), "%s", a);
    ck_assert_msg(strcasestr(a, "\r\nAccess-Control-Expose-Headers: ETag"), "%s", a);
    ck_assert_msg(strncmp(b, "HTTP/1.1 200", 12) == 0 && !strcasestr(b, "Access-Control-"), "%s",
                  b);
    ck_assert_msg(strncmp(pre, "HTTP/1.1 204", 12) == 0, "%s", pre);
    ck_assert_msg(strcasestr(pre, "\r\nAccess-Control-Allow-Origin: http://localhost:5173\r\n"),
                  "%s", pre);
    ck_assert_msg(strcasestr(pre, "\r\nAccess-Control-Allow-Methods: GET, HEAD\r\n"), "%s", pre);
    ck_assert_msg(strcasestr(pre, "\r\nAccess-Control-Allow-Headers: If-None-Match"), "%s", pre);
    /* a fetch-based event-stream client resumes with Last-Event-ID, which is not safelisted */
    const char *ah = strcasestr(pre, "\r\nAccess-Control-Allow-Headers:");
    const char *ah_end = ah ? strstr(ah + 2, "\r\n") : NULL;
    const char *lei = ah ? strcasestr(ah, "Last-Event-ID") : NULL;
    ck_assert_msg(lei && lei < ah_end, "%s", pre);
    ck_assert_msg(strncmp(prew, "HTTP/1.1 403", 12) == 0 && strstr(prew, "cors_not_allowed") &&
                      !strcasestr(prew, "Access-Control-Allow-Origin"),
                  "%s", prew);
    ck_assert_msg(strncmp(w, "HTTP/1.1 200", 12) == 0 && !strcasestr(w, "Access-Control-"), "%s",
                  w);
    free(a);
    free(b);
    free(pre);
    free(prew);
    free(w);
}
END_TEST

static void cors_any(struct config *cfg)
{
    cors_set(cfg, "*");
}

/* A page says Cache-Control: public, so a shared cache may keep it: with a list of origins, the
 * reply to a request without Origin or from another origin says Vary: Origin too, else a cache
 * could give it (without Access-Control-Allow-Origin) to a listed origin, or the listed
 * origin's to anyone; with "*", a read without Origin carries Access-Control-Allow-Origin: * like
 * every other (before: no Vary: Origin on either, and no header for "*" without Origin). */
START_TEST(cors_vary_every_reply)
{
    it_post_score("cv", "{\"id\":\"a\",\"score\":10}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, cors_two_origins, NULL);
    int port = rankd_port(app);
    char *none = raw(port, "GET /boards/cv/rank HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    char *other = raw(port, "GET /boards/cv/rank HTTP/1.1\r\nHost: t\r\n"
                            "Origin: https://evil.example\r\nConnection: close\r\n\r\n");
    char *listed = raw(port, "GET /boards/cv/rank HTTP/1.1\r\nHost: t\r\n"
                             "Origin: https://app.example\r\nConnection: close\r\n\r\n");
    rankd_stop(app);
    app = rankd_test_start_with(g_redis.port, TEST_TOKEN, cors_any, NULL);
    port = rankd_port(app);
    char *any = raw(port, "GET /boards/cv/rank HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    char *any_o = raw(port, "GET /boards/cv/rank HTTP/1.1\r\nHost: t\r\n"
                            "Origin: https://evil.example\r\nConnection: close\r\n\r\n");
    rankd_stop(app);
    char *list[] = {none, other, listed};
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(strncmp(list[i], "HTTP/1.1 200", 12) == 0, "%s", list[i]);
        ck_assert_msg(strcasestr(list[i], "\r\nCache-Control: public"), "%s", list[i]);
        ck_assert_msg(http_varies(list[i], "Origin", NULL), "%s", list[i]);
        ck_assert_msg(!strcasestr(list[i], "Access-Control-Allow-Origin") == (i < 2), "%s",
                      list[i]);
    }
    char *star[] = {any, any_o};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(strncmp(star[i], "HTTP/1.1 200", 12) == 0, "%s", star[i]);
        ck_assert_msg(strcasestr(star[i], "\r\nAccess-Control-Allow-Origin: *\r\n"), "%s", star[i]);
        ck_assert_msg(!http_varies(star[i], "Origin", NULL), "%s", star[i]);
    }
    fprintf(stderr, "cors: no Origin and another origin: Vary: Origin; \"*\": the header "
                    "without Origin\n");
    free(none);
    free(other);
    free(listed);
    free(any);
    free(any_o);
}
END_TEST

/* Without --cors-origin nothing changes: no CORS headers, OPTIONS is 405. */
START_TEST(cors_off_by_default)
{
    char *a = raw(g_port, "GET /healthz HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n"
                          "Connection: close\r\n\r\n");
    char *pre =
        raw(g_port, "OPTIONS /boards/x/rank HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n"
                    "Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n");
    ck_assert_msg(!strcasestr(a, "Access-Control-"), "%s", a);
    ck_assert_msg(strncmp(pre, "HTTP/1.1 405", 12) == 0, "%s", pre);
    free(a);
    free(pre);
}
END_TEST

/* The body of a raw reply (after the blank line), its length in *n. */
static const char *raw_body(const char *reply, size_t total, size_t *n)
{
    const char *b = strstr(reply, "\r\n\r\n");
    ck_assert_ptr_nonnull(b);
    b += 4;
    *n = total - (size_t)(b - reply);
    return b;
}

/* A raw request's whole reply with its length (bodies may hold NUL bytes). */
static char *raw_n(int port, const char *req, size_t *len)
{
    int fd = connect_loopback(port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    size_t cap = 1 << 20, n = 0;
    char *out = calloc(1, cap);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 3000) <= 0)
            break;
        ssize_t r = recv(fd, out + n, cap - n - 1, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return out;
}

static char *header_value(const char *reply, const char *name)
{
    char want[64];
    snprintf(want, sizeof(want), "\r\n%s: ", name);
    const char *p = strcasestr(reply, want);
    if (!p)
        return NULL;
    p += strlen(want);
    const char *e = strstr(p, "\r\n");
    return strndup(p, (size_t)(e - p));
}

/* Pages go gzipped to clients that accept it, with an ETag of their own ("-gz") that revalidates
 * to 304; the gzip form inflates to exactly the identity page; clients without Accept-Encoding
 * and small replies are sent as they are. Before: never compressed. */
START_TEST(gzip_pages)
{
    char batch[8192];
    size_t n = (size_t)snprintf(batch, sizeof(batch), "{\"entries\":[");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(batch + n, sizeof(batch) - n,
                              "%s{\"id\":\"player-%d\",\"score\":%d,\"record\":{\"name\":"
                              "\"Player number %d\"}}",
                              i ? "," : "", i, i * 37 % 1000, i);
    snprintf(batch + n, sizeof(batch) - n, "]}");
    it_post_score("gz", batch);
    size_t plain_len = 0, gz_len = 0, small_len = 0;
    char *plain = raw_n(g_port,
                        "GET /boards/gz/rank?size=50 HTTP/1.1\r\nHost: t\r\n"
                        "Connection: close\r\n\r\n",
                        &plain_len);
    char *gz = raw_n(g_port,
                     "GET /boards/gz/rank?size=50 HTTP/1.1\r\nHost: t\r\n"
                     "Accept-Encoding: br, gzip;q=0.8\r\nConnection: close\r\n\r\n",
                     &gz_len);
    char *small = raw_n(g_port,
                        "GET /boards/gz/members/player-3 HTTP/1.1\r\nHost: t\r\n"
                        "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n",
                        &small_len);
    ck_assert_msg(strncmp(gz, "HTTP/1.1 200", 12) == 0, "%s", gz);
    ck_assert_msg(strcasestr(gz, "\r\nContent-Encoding: gzip\r\n"), "%.400s", gz);
    ck_assert_msg(http_varies(gz, "Accept-Encoding", NULL), "%.400s", gz);
    ck_assert_msg(!strcasestr(plain, "Content-Encoding"), "%.400s", plain);
    ck_assert_msg(!strcasestr(small, "Content-Encoding"), "%.400s", small);
    char *etag = header_value(plain, "ETag"), *gz_etag = header_value(gz, "ETag");
    ck_assert_ptr_nonnull(etag);
    ck_assert_ptr_nonnull(gz_etag);
    char want[96];
    snprintf(want, sizeof(want), "%.*s-gz\"", (int)strlen(etag) - 1, etag);
    ck_assert_str_eq(gz_etag, want);
    /* the gzip form inflates to the identity page, byte for byte */
    size_t pn = 0, zn = 0;
    const char *pb = raw_body(plain, plain_len, &pn), *zb = raw_body(gz, gz_len, &zn);
    ck_assert_uint_lt(zn, pn / 2);
    char *out = malloc(pn + 64);
    uLongf outn = (uLongf)pn + 64;
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)(uintptr_t)zb;
    z.avail_in = (uInt)zn;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)outn;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(z.total_out, pn);
    ck_assert_int_eq(memcmp(out, pb, pn), 0);
    inflateEnd(&z);
    /* each form revalidates with its own tag */
    char req[512];
    size_t rn = 0;
    snprintf(req, sizeof(req),
             "GET /boards/gz/rank?size=50 HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n"
             "If-None-Match: %s\r\nConnection: close\r\n\r\n",
             gz_etag);
    char *nm = raw_n(g_port, req, &rn);
    ck_assert_msg(strncmp(nm, "HTTP/1.1 304", 12) == 0, "%s", nm);
    char *nm_etag = header_value(nm, "ETag");
    ck_assert_str_eq(nm_etag, gz_etag);
    snprintf(req, sizeof(req),
             "GET /boards/gz/rank?size=50 HTTP/1.1\r\nHost: t\r\nIf-None-Match: %s\r\n"
             "Connection: close\r\n\r\n",
             etag);
    char *nm2 = raw_n(g_port, req, &rn);
    ck_assert_msg(strncmp(nm2, "HTTP/1.1 304", 12) == 0, "%s", nm2);
    free(out);
    free(etag);
    free(gz_etag);
    free(nm_etag);
    free(nm);
    free(nm2);
    free(plain);
    free(gz);
    free(small);
}
END_TEST

Suite *clients_suite(void)
{
    const struct it_case cases[] = {
        {"headers_trickled", headers_trickled},
        {"keep_alive_not_cut", keep_alive_not_cut},
        {"over_max_connections", over_max_connections},
        {"over_per_address_limit", over_per_address_limit},
        {"per_address_default_on", per_address_default_on},
        {"cors_reads_only", cors_reads_only},
        {"cors_off_by_default", cors_off_by_default},
        {"cors_vary_every_reply", cors_vary_every_reply},
        {"gzip_pages", gzip_pages},
    };
    return it_suite("clients", cases, sizeof(cases) / sizeof(cases[0]));
}
