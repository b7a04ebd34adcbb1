/*
 * test_streams.c -- pages as server-sent events (GET .../rank?page=N, Accept: text/event-stream)
 * over real sockets against a real Redis: the first event is the page GET answers, with its ETag
 * as id; a write shows up as a new event within the page TTL plus a second; a reconnect with
 * Last-Event-ID of the current page gets no repeat; the usual JSON errors before a stream starts;
 * a board deleted while watched ends the stream with an `end` event saying so; rankd's stop ends
 * each stream with an `end` event; --max-streams and --max-streams-per-ip (503); the keep-alive
 * comment; score ranges streamed like pages, cursors refused; Vary: Accept; Redis stopped
 * (SIGSTOP) under streams: they stay open, and a write after it is back shows within the
 * refresh's bound plus a Redis timeout; a loop timer due at the top of an iteration (as a
 * refresh may be) has its Redis work sent in that iteration; and 1,000 viewers
 * of one page: each gets the page and its change, and the commands Redis runs (INFO
 * commandstats) per refresh of the page, one per TTL, are those of 10 viewers.
 */
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "suites.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- an event-stream client */

/* One stream: the response's headers, and its body de-chunked as it arrives. */
struct sse {
    int fd;
    long status;
    char head[4096];
    char *text; /* the body so far, NUL-terminated */
    size_t len, cap;
    char raw[16384]; /* bytes received, not yet de-chunked */
    size_t rlen;
    long chunk_left; /* -1: a size line comes next */
    int crlf;        /* the CRLF after a chunk's data comes next */
    int ended;       /* the last chunk came */
    int closed;      /* the server closed */
};

static void text_add(struct sse *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = realloc(s->text, s->cap);
        ck_assert_ptr_nonnull(s->text);
    }
    memcpy(s->text + s->len, p, n);
    s->len += n;
    s->text[s->len] = '\0';
}

/* De-chunk what raw holds. */
static void dechunk(struct sse *s)
{
    size_t at = 0;
    while (at < s->rlen && !s->ended) {
        if (s->crlf) {
            if (s->rlen - at < 2)
                break;
            at += 2;
            s->crlf = 0;
        } else if (s->chunk_left < 0) {
            char *nl = memchr(s->raw + at, '\n', s->rlen - at);
            if (!nl)
                break;
            s->chunk_left = strtol(s->raw + at, NULL, 16);
            at = (size_t)(nl - s->raw) + 1;
            if (s->chunk_left == 0)
                s->ended = 1;
        } else {
            size_t n = s->rlen - at < (size_t)s->chunk_left ? s->rlen - at : (size_t)s->chunk_left;
            text_add(s, s->raw + at, n);
            at += n;
            s->chunk_left -= (long)n;
            if (s->chunk_left == 0) {
                s->chunk_left = -1;
                s->crlf = 1;
            }
        }
    }
    memmove(s->raw, s->raw + at, s->rlen - at);
    s->rlen -= at;
}

/* Read what arrives within ms: 0 something came, -1 nothing, 1 the server closed. */
static int sse_pump(struct sse *s, int ms)
{
    if (s->closed)
        return 1;
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return -1;
    ssize_t n = recv(s->fd, s->raw + s->rlen, sizeof(s->raw) - s->rlen, 0);
    if (n <= 0) {
        s->closed = 1;
        return 1;
    }
    s->rlen += (size_t)n;
    dechunk(s);
    return 0;
}

/* Open a stream of `path` with extra header lines (each ending "\r\n", or ""): 0 once its
 * headers are in (s->status), else -1. */
static int sse_open_on(int port, struct sse *s, const char *path, const char *extra)
{
    memset(s, 0, sizeof(*s));
    s->chunk_left = -1;
    s->fd = connect_loopback(port);
    if (s->fd < 0)
        return -1;
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n%s\r\n",
                     path, extra);
    if (send(s->fd, req, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    size_t hl = 0;
    int64_t until = now_ms() + 5000;
    while (now_ms() < until) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t k = recv(s->fd, s->raw + s->rlen, sizeof(s->raw) - s->rlen, 0);
        if (k <= 0)
            return -1;
        s->rlen += (size_t)k;
        char *end = memmem(s->raw, s->rlen, "\r\n\r\n", 4);
        if (!end)
            continue;
        hl = (size_t)(end - s->raw) + 4;
        snprintf(s->head, sizeof(s->head), "%.*s", (int)hl, s->raw);
        s->status = strtol(s->head + 9, NULL, 10);
        memmove(s->raw, s->raw + hl, s->rlen - hl);
        s->rlen -= hl;
        dechunk(s);
        return 0;
    }
    return -1;
}

static int sse_open(struct sse *s, const char *path, const char *extra)
{
    return sse_open_on(g_port, s, path, extra);
}

static void sse_close(struct sse *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->text);
    s->text = NULL;
}

/* One event as parsed from the body. */
struct sse_event {
    char name[32];
    char id[96];
    char *data; /* owned */
};

/* The next whole event after *pos (comments and retry-only blocks skipped) within ms: 0 and *e
 * (free e->data), or -1. */
static int sse_next(struct sse *s, size_t *pos, struct sse_event *e, int ms)
{
    int64_t until = now_ms() + ms;
    for (;;) {
        while (s->text && *pos < s->len) {
            char *end = strstr(s->text + *pos, "\n\n");
            if (!end)
                break;
            memset(e, 0, sizeof(*e));
            for (char *line = s->text + *pos; line < end;) {
                char *nl = strchr(line, '\n');
                size_t n = (size_t)(nl - line);
                if (n > 7 && strncmp(line, "event: ", 7) == 0)
                    snprintf(e->name, sizeof(e->name), "%.*s", (int)(n - 7), line + 7);
                else if (n > 4 && strncmp(line, "id: ", 4) == 0)
                    snprintf(e->id, sizeof(e->id), "%.*s", (int)(n - 4), line + 4);
                else if (n >= 6 && strncmp(line, "data: ", 6) == 0 && !e->data)
                    e->data = strndup(line + 6, n - 6);
                line = nl + 1;
            }
            *pos = (size_t)(end - s->text) + 2;
            if (e->name[0] || e->data)
                return 0;
            free(e->data);
        }
        int64_t left = until - now_ms();
        if (left <= 0 || sse_pump(s, (int)left) == 1) {
            if (left > 0) /* closed: what is left may still hold an event */
                continue;
            return -1;
        }
    }
}

/* ---------------------------------------------------------------- helpers */

static void put_board(const char *board, const char *json)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "PUT", path, json, &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "PUT %s -> %ld %s", path, r.status, r.body);
    http_result_free(&r);
}

/* GET path: its body (malloc'd) and ETag. */
static char *get_page(const char *path, char *etag, size_t n)
{
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld", path, r.status);
    const char *p = strcasestr(r.headers, "\nETag:");
    ck_assert_ptr_nonnull(p);
    p += 6;
    while (*p == ' ')
        p++;
    snprintf(etag, n, "%.*s", (int)strcspn(p, "\r\n"), p);
    char *body = strdup(r.body);
    http_result_free(&r);
    return body;
}

/* Commands Redis ran since its start (INFO commandstats), INFO itself left out. */
static long long redis_calls(void)
{
    redisReply *r = redis_admin_cmd(g_admin, "INFO commandstats");
    long long sum = 0;
    for (char *p = r->str; (p = strstr(p, "cmdstat_")) != NULL; p++) {
        if (strncmp(p, "cmdstat_info:", 13) == 0)
            continue;
        char *c = strstr(p, "calls=");
        if (c)
            sum += strtoll(c + 6, NULL, 10);
    }
    freeReplyObject(r);
    return sum;
}

/* ---------------------------------------------------------------- the cases */

START_TEST(test_page_then_changes)
{
    put_board("live", "{\"page_ttl_ms\":1000}");
    it_post_score("live", "{\"id\":\"a\",\"score\":5}");
    char etag[96];
    char *body = get_page("/boards/live/rank?page=1", etag, sizeof(etag));
    struct sse s;
    ck_assert_int_eq(sse_open(&s, "/boards/live/rank?page=1", ""), 0);
    ck_assert_int_eq(s.status, 200);
    ck_assert_ptr_nonnull(strcasestr(s.head, "Content-Type: text/event-stream"));
    size_t pos = 0;
    struct sse_event e;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "page");
    ck_assert_str_eq(e.id, etag);
    ck_assert_str_eq(e.data, body); /* the same JSON GET answers */
    free(e.data);
    free(body);
    ck_assert_ptr_nonnull(strstr(s.text, "retry: 1000\n"));

    /* a write: a new event within the TTL plus a second (3 s allowed on a busy machine) */
    int64_t t0 = now_ms();
    it_post_score("live", "{\"id\":\"b\",\"score\":7}");
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    int64_t lag = now_ms() - t0;
    ck_assert_str_eq(e.name, "page");
    ck_assert_msg(strstr(e.data, "\"id\":\"b\"") != NULL, "the new page: %s", e.data);
    fprintf(stderr, "streams: a write showed up after %lld ms (TTL 1000)\n", (long long)lag);
    body = get_page("/boards/live/rank?page=1", etag, sizeof(etag));
    ck_assert_str_eq(e.id, etag);
    ck_assert_str_eq(e.data, body);
    free(body);
    free(e.data);

    /* no write: no event (the page read again, unchanged, sends nothing) */
    ck_assert_int_eq(sse_next(&s, &pos, &e, 2500), -1);
    sse_close(&s);
}
END_TEST

START_TEST(test_last_event_id_no_repeat)
{
    put_board("again", "{\"page_ttl_ms\":1000}");
    it_post_score("again", "{\"id\":\"a\",\"score\":5}");
    char etag[96], hdr[160];
    free(get_page("/boards/again/rank?page=1&rank=dense", etag, sizeof(etag)));
    snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s\r\n", etag);
    struct sse s;
    ck_assert_int_eq(sse_open(&s, "/boards/again/rank?page=1&rank=dense", hdr), 0);
    ck_assert_int_eq(s.status, 200);
    size_t pos = 0;
    struct sse_event e;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 1500), -1); /* it has that page: no repeat */
    it_post_score("again", "{\"id\":\"b\",\"score\":7}");
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "page");
    ck_assert_str_ne(e.id, etag);
    ck_assert_ptr_nonnull(strstr(e.data, "\"id\":\"b\""));
    free(e.data);
    sse_close(&s);

    /* a stale Last-Event-ID gets the page at once */
    ck_assert_int_eq(sse_open(&s, "/boards/again/rank?page=1&rank=dense", hdr), 0);
    pos = 0;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 2000), 0);
    ck_assert_str_ne(e.id, etag);
    free(e.data);
    sse_close(&s);
}
END_TEST

START_TEST(test_errors_before_stream)
{
    const char *accept[] = {"Accept: text/event-stream", NULL};
    struct {
        const char *path;
        long status;
        const char *code;
    } cases[] = {
        {"/boards/nope/rank?page=1", 404, "board_not_found"},
        {"/boards/nope/rank?page=0", 400, "invalid_parameter"},
        {"/boards/nope/rank?page=1&min=5", 404, "board_not_found"},
        {"/boards/nope/rank?min=x", 400, "invalid_parameter"},
        {"/boards/nope/rank?after=AAAA", 400, "invalid_cursor"},
        {"/boards/nope/rank?page=1&rank=odd", 400, "invalid_parameter"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_result r;
        ck_assert_int_eq(http_req_h(g_port, "GET", cases[i].path, NULL, 0, NULL, NULL, accept, &r),
                         0);
        ck_assert_msg(r.status == cases[i].status, "%s -> %ld %s", cases[i].path, r.status, r.body);
        ck_assert_ptr_nonnull(strcasestr(r.headers, "Content-Type: application/json"));
        ck_assert_str_eq(http_error_code(&r), cases[i].code);
        http_result_free(&r);
    }
    ck_assert_int_eq(http_metric(g_port, "rankd_streams_open"), 0);
}
END_TEST

START_TEST(test_board_deleted_ends_stream)
{
    put_board("gone", "{\"page_ttl_ms\":1000}");
    it_post_score("gone", "{\"id\":\"a\",\"score\":5}");
    struct sse s;
    ck_assert_int_eq(sse_open(&s, "/boards/gone/rank?page=1", ""), 0);
    size_t pos = 0;
    struct sse_event e;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "page");
    free(e.data);
    ck_assert_int_eq(it_status("DELETE", "/boards/gone", NULL), 204);
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "end");
    ck_assert_ptr_nonnull(strstr(e.data, "\"code\":\"board_not_found\""));
    free(e.data);
    for (int64_t until = now_ms() + 2000; !s.ended && !s.closed && now_ms() < until;)
        sse_pump(&s, 100);
    ck_assert_msg(s.ended || s.closed, "the stream did not end");
    sse_close(&s);
    ck_assert_int_eq(http_metric(g_port, "rankd_watched_pages"), 0);
}
END_TEST

START_TEST(test_shutdown_last_event)
{
    put_board("stop", "{}");
    struct sse s;
    ck_assert_int_eq(sse_open(&s, "/boards/stop/rank?page=1", ""), 0);
    size_t pos = 0;
    struct sse_event e;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    free(e.data);
    int64_t t0 = now_ms();
    rankd_stop(g_app); /* the stream is suspended: it must not hold the stop */
    g_app = NULL;
    ck_assert_msg(now_ms() - t0 < 3000, "the stop took %lld ms", (long long)(now_ms() - t0));
    ck_assert_int_eq(sse_next(&s, &pos, &e, 2000), 0);
    ck_assert_str_eq(e.name, "end");
    ck_assert_ptr_nonnull(strstr(e.data, "\"code\":\"shutting_down\""));
    free(e.data);
    for (int64_t until = now_ms() + 2000; !s.ended && !s.closed && now_ms() < until;)
        sse_pump(&s, 100);
    ck_assert(s.ended || s.closed);
    sse_close(&s);
}
END_TEST

static void two_streams(struct config *cfg)
{
    cfg->max_streams = 2;
}

static void one_stream_per_ip(struct config *cfg)
{
    cfg->max_streams_per_ip = 1;
}

/* A stream refused: 503 with `code`, Retry-After. */
static void refused(int port, const char *code)
{
    const char *accept[] = {"Accept: text/event-stream", NULL};
    struct http_result r;
    ck_assert_int_eq(
        http_req_h(port, "GET", "/boards/capped/rank?page=1", NULL, 0, NULL, NULL, accept, &r), 0);
    ck_assert_msg(r.status == 503, "-> %ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), code);
    ck_assert_ptr_nonnull(strcasestr(r.headers, "Retry-After:"));
    http_result_free(&r);
}

START_TEST(test_stream_caps)
{
    put_board("capped", "{}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, two_streams, NULL);
    int port = rankd_port(app);
    struct sse s[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(sse_open_on(port, &s[i], "/boards/capped/rank?page=1", ""), 0);
        ck_assert_int_eq(s[i].status, 200);
    }
    refused(port, "too_many_streams");
    ck_assert_int_eq(http_metric(port, "rankd_streams_open"), 2);
    ck_assert_int_eq(http_metric(port, "rankd_streams_refused_total"), 1);
    /* a page GET is no stream: still answered */
    struct http_result r;
    ck_assert_int_eq(http_get(port, "/boards/capped/rank?page=1", &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    sse_close(&s[0]); /* a slot back once rankd sees the close */
    int ok = 0;
    for (int64_t until = now_ms() + 3000; !ok && now_ms() < until; sleep_ms(50))
        ok = http_metric(port, "rankd_streams_open") == 1;
    ck_assert(ok);
    ck_assert_int_eq(sse_open_on(port, &s[0], "/boards/capped/rank?page=1", ""), 0);
    ck_assert_int_eq(s[0].status, 200);
    sse_close(&s[0]);
    sse_close(&s[1]);
    rankd_stop(app);

    app = rankd_test_start_with(g_redis.port, TEST_TOKEN, one_stream_per_ip, NULL);
    port = rankd_port(app);
    ck_assert_int_eq(sse_open_on(port, &s[0], "/boards/capped/rank?page=1", ""), 0);
    ck_assert_int_eq(s[0].status, 200);
    refused(port, "too_many_streams_from_address");
    sse_close(&s[0]);
    rankd_stop(app);
}
END_TEST

static void quick_heartbeat(struct config *cfg)
{
    cfg->stream_heartbeat_ms = 300;
}

START_TEST(test_heartbeat)
{
    put_board("quiet", "{}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, quick_heartbeat, NULL);
    struct sse s;
    ck_assert_int_eq(sse_open_on(rankd_port(app), &s, "/boards/quiet/rank?page=1", ""), 0);
    int beats = 0;
    for (int64_t until = now_ms() + 3000; now_ms() < until && beats < 2; sse_pump(&s, 100)) {
        beats = 0;
        for (const char *p = s.text; p && (p = strstr(p, "\n: keep-alive\n\n")); p++)
            beats++;
    }
    ck_assert_msg(beats >= 2, "keep-alive comments: %d in %s", beats, s.text ? s.text : "");
    sse_close(&s);
    rankd_stop(app);
}
END_TEST

static void two_threads(struct config *cfg)
{
    cfg->http_threads = 2;
}

/* Two event threads, viewers on both (the loops balance connections): the first viewer owns
 * the page's refresh; when it leaves, a viewer (on either thread) takes it over and every
 * viewer left still sees the page change. */
START_TEST(test_owner_leaves_other_thread_takes_over)
{
    put_board("relay", "{\"page_ttl_ms\":1000}");
    it_post_score("relay", "{\"id\":\"a\",\"score\":5}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, two_threads, NULL);
    int port = rankd_port(app);
    enum { N = 6 };
    struct sse s[N];
    size_t pos[N] = {0};
    struct sse_event e;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(sse_open_on(port, &s[i], "/boards/relay/rank?page=1", ""), 0);
        ck_assert_int_eq(sse_next(&s[i], &pos[i], &e, 3000), 0);
        free(e.data);
    }
    for (int round = 0; round < 2; round++) {
        sse_close(&s[round]); /* the owner (the first viewer), then its successor perhaps */
        sleep_ms(300);
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"r%d\",\"score\":%d}", round, 100 + round);
        it_post_score("relay", body);
        char want[16];
        snprintf(want, sizeof(want), "\"r%d\"", round);
        for (int i = round + 1; i < N; i++) {
            int got = 0;
            for (int64_t until = now_ms() + 4000; !got && now_ms() < until;) {
                if (sse_next(&s[i], &pos[i], &e, (int)(until - now_ms())) != 0)
                    break;
                got = strstr(e.data, want) != NULL;
                free(e.data);
            }
            ck_assert_msg(got, "viewer %d did not see %s after viewer %d left", i, want, round);
        }
    }
    ck_assert_int_eq(http_metric(port, "rankd_watched_pages"), 1);
    for (int i = 2; i < N; i++)
        sse_close(&s[i]);
    rankd_stop(app);
}
END_TEST

/* A score range's page streams like a page by number: the first event is what GET answers (its
 * ETag the id), a write inside the range is a new event (the same as GET's then), one outside
 * it none; Last-Event-ID of the current page gets no repeat; the same range spelt another way
 * (10 and 10.0) is the same watch; a board deleted ends it. Before: 400 invalid_parameter. */
START_TEST(test_score_range_stream)
{
    put_board("ranged", "{\"page_ttl_ms\":1000}");
    it_post_score("ranged", "{\"id\":\"a\",\"score\":5}");
    it_post_score("ranged", "{\"id\":\"b\",\"score\":15}");
    it_post_score("ranged", "{\"id\":\"c\",\"score\":25}");
    const char *path = "/boards/ranged/rank?min=10&max=30";
    char etag[96], inm[160];
    char *body = get_page(path, etag, sizeof(etag));
    ck_assert_ptr_null(strstr(body, "\"id\":\"a\""));
    struct sse s;
    ck_assert_int_eq(sse_open(&s, path, ""), 0);
    ck_assert_msg(s.status == 200, "%ld %s", s.status, s.text ? s.text : "");
    ck_assert_ptr_nonnull(strcasestr(s.head, "Content-Type: text/event-stream"));
    size_t pos = 0;
    struct sse_event e;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "page");
    ck_assert_str_eq(e.id, etag);
    ck_assert_str_eq(e.data, body);
    free(e.data);
    free(body);
    /* a GET naming that ETag is a 304 */
    snprintf(inm, sizeof(inm), "If-None-Match: %s", etag);
    const char *cond[] = {inm, NULL};
    struct http_result r;
    ck_assert_int_eq(http_req_h(g_port, "GET", path, NULL, 0, NULL, NULL, cond, &r), 0);
    ck_assert_int_eq(r.status, 304);
    http_result_free(&r);

    /* the same range spelt another way joins the same watch */
    struct sse twin;
    ck_assert_int_eq(sse_open(&twin, "/boards/ranged/rank?max=30.0&min=10.00", ""), 0);
    size_t tpos = 0;
    ck_assert_int_eq(sse_next(&twin, &tpos, &e, 3000), 0);
    ck_assert_str_eq(e.id, etag);
    free(e.data);
    ck_assert_int_eq(http_metric(g_port, "rankd_watched_pages"), 1);

    /* a write inside the range: a new event, what GET answers now */
    it_post_score("ranged", "{\"id\":\"d\",\"score\":20}");
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "page");
    ck_assert_msg(strstr(e.data, "\"id\":\"d\"") != NULL, "%s", e.data);
    body = get_page(path, etag, sizeof(etag));
    ck_assert_str_eq(e.id, etag);
    ck_assert_str_eq(e.data, body);
    free(body);
    free(e.data);
    ck_assert_int_eq(sse_next(&twin, &tpos, &e, 3000), 0);
    ck_assert_str_eq(e.id, etag);
    free(e.data);
    sse_close(&twin);

    /* a write below it changes nothing of the page (ranks are global: one above would): no
     * event */
    it_post_score("ranged", "{\"id\":\"e\",\"score\":1}");
    ck_assert_int_eq(sse_next(&s, &pos, &e, 2500), -1);
    sse_close(&s);

    /* Last-Event-ID of the current page: no repeat */
    char hdr[160];
    snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s\r\n", etag);
    ck_assert_int_eq(sse_open(&s, path, hdr), 0);
    pos = 0;
    ck_assert_int_eq(sse_next(&s, &pos, &e, 1500), -1);

    /* the board deleted: the stream ends with the error GET answers */
    ck_assert_int_eq(it_status("DELETE", "/boards/ranged", NULL), 204);
    ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
    ck_assert_str_eq(e.name, "end");
    ck_assert_ptr_nonnull(strstr(e.data, "\"code\":\"board_not_found\""));
    free(e.data);
    sse_close(&s);
}
END_TEST

/* A score range's refusals come before the stream, as GET's: a bound the board's layout cannot
 * hold is 422; and a cursor (after=, before=) cannot be watched: 400 naming why. */
START_TEST(test_score_range_stream_refusals)
{
    put_board("strict", "{\"score_decimals\":0}");
    it_post_score("strict", "{\"id\":\"a\",\"score\":5}");
    const char *accept[] = {"Accept: text/event-stream", NULL};
    struct http_result r;
    ck_assert_int_eq(
        http_req_h(g_port, "GET", "/boards/strict/rank?min=1.5", NULL, 0, NULL, NULL, accept, &r),
        0);
    ck_assert_msg(r.status == 422, "%ld %s", r.status, r.body);
    ck_assert_ptr_nonnull(strcasestr(r.headers, "Content-Type: application/json"));
    http_result_free(&r);
    it_post_score("strict", "{\"id\":\"b\",\"score\":3}");
    ck_assert_int_eq(http_get(g_port, "/boards/strict/rank?min=0&size=1", &r), 0);
    char path[512];
    snprintf(path, sizeof(path), "/boards/strict/rank?after=%s",
             cJSON_GetStringValue(cJSON_GetObjectItem(r.json, "next")));
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, path, &r), 0); /* a GET of it is a page */
    ck_assert_msg(r.status == 200, "%s: %ld %s", path, r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(http_req_h(g_port, "GET", path, NULL, 0, NULL, NULL, accept, &r), 0);
    ck_assert_msg(r.status == 400, "%ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "invalid_parameter");
    ck_assert_ptr_nonnull(strstr(r.body, "cursor"));
    http_result_free(&r);
    ck_assert_int_eq(http_metric(g_port, "rankd_streams_open"), 0);
}
END_TEST

/* A page with its `with` members streams: the first event is what GET answers (its ETag the id),
 * and a write that moves a member off the page is a new event with its new score, the same as
 * GET's then; on a board that caches pages (the members read beside the cached page) and on a
 * live one (one call reads both). The same ids in the same order are one watch. A `with` with
 * a score range is refused as GET refuses it. Before: 400 invalid_parameter ("with is read with
 * a page by number (page=N) and GET, not with ... an event stream"). */
START_TEST(test_with_stream)
{
    const char *boards[] = {"withcached", "withlive"};
    const char *settings[] = {"{\"page_ttl_ms\":1000,\"page_size\":2}",
                              "{\"page_ttl_ms\":0,\"page_size\":2}"};
    for (int b = 0; b < 2; b++) {
        put_board(boards[b], settings[b]);
        char entry[128], path[160], alias[160];
        const char *ids[] = {"a", "b", "c", "d"};
        for (int i = 0; i < 4; i++) {
            snprintf(entry, sizeof(entry), "{\"id\":\"%s\",\"score\":%d}", ids[i], 50 - 10 * i);
            it_post_score(boards[b], entry);
        }
        snprintf(path, sizeof(path), "/boards/%s/rank?page=1&with=d,nobody", boards[b]);
        snprintf(alias, sizeof(alias), "/boards/%s/rank?with=d,nobody&page=1", boards[b]);
        char etag[96];
        char *body = get_page(path, etag, sizeof(etag));
        struct sse s, twin;
        ck_assert_int_eq(sse_open(&s, path, ""), 0);
        ck_assert_msg(s.status == 200, "%s: %ld %s", path, s.status, s.text ? s.text : "");
        size_t pos = 0, tpos = 0;
        struct sse_event e;
        ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
        ck_assert_str_eq(e.name, "page");
        ck_assert_str_eq(e.id, etag);
        ck_assert_str_eq(e.data, body);
        ck_assert_ptr_nonnull(strstr(e.data, "\"with\":[{"));
        free(e.data);
        free(body);
        ck_assert_int_eq(sse_open(&twin, alias, ""), 0);
        ck_assert_int_eq(sse_next(&twin, &tpos, &e, 3000), 0);
        free(e.data);
        ck_assert_int_eq(http_metric(g_port, "rankd_watched_pages"), 1);

        /* d's score changes, off the page: a new event, what GET answers now */
        snprintf(entry, sizeof(entry), "{\"id\":\"d\",\"score\":25}");
        it_post_score(boards[b], entry);
        ck_assert_int_eq(sse_next(&s, &pos, &e, 3000), 0);
        ck_assert_str_eq(e.name, "page");
        ck_assert_msg(strstr(e.data, "\"id\":\"d\",\"score\":25") != NULL, "%s", e.data);
        body = get_page(path, etag, sizeof(etag));
        ck_assert_str_eq(e.id, etag);
        ck_assert_str_eq(e.data, body);
        free(body);
        free(e.data);
        ck_assert_int_eq(sse_next(&twin, &tpos, &e, 3000), 0);
        ck_assert_str_eq(e.id, etag);
        free(e.data);
        sse_close(&twin);
        sse_close(&s);
        for (int64_t until = now_ms() + 3000;
             http_metric(g_port, "rankd_watched_pages") != 0 && now_ms() < until;)
            sleep_ms(50);
    }
    const char *accept[] = {"Accept: text/event-stream", NULL};
    struct http_result r;
    ck_assert_int_eq(http_req_h(g_port, "GET", "/boards/withlive/rank?min=1&with=a", NULL, 0, NULL,
                                NULL, accept, &r),
                     0);
    ck_assert_msg(r.status == 400, "%ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "invalid_parameter");
    http_result_free(&r);
}
END_TEST

static void cors_origin(struct config *cfg)
{
    snprintf(cfg->cors_text, sizeof(cfg->cors_text), "https://app.example");
}

/* 1 when the raw header block varies on `what` (its one Vary line lists it: rankd sends every
 * value on one line, asserted here). */
static int varies(const char *head, const char *what)
{
    int lines = 0;
    int found = http_varies(head, what, &lines);
    ck_assert_msg(lines <= 1, "more than one Vary line: %s", head);
    return found;
}

/* Every reply of a rank read says Vary: Accept (a GET's JSON, its 304, a score range's page, an
 * error, the event stream itself), so that a shared cache never answers a GET with a stream or
 * an EventSource with JSON; the gzip and CORS filters' values stay beside it, on the same one
 * Vary line; a route that does not stream says no such thing. Before: no Vary: Accept on any of
 * them. */
START_TEST(test_vary_accept)
{
    put_board("varied", "{\"page_ttl_ms\":1000}");
    it_post_score("varied", "{\"id\":\"a\",\"score\":5}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, cors_origin, NULL);
    int port = rankd_port(app);
    char etag[96], inm[160];
    free(get_page("/boards/varied/rank?page=1", etag, sizeof(etag)));
    snprintf(inm, sizeof(inm), "If-None-Match: %s", etag);
    const char *plain[] = {"Origin: https://app.example", "Accept-Encoding: gzip", NULL};
    const char *cond[] = {"Origin: https://app.example", inm, NULL};
    struct {
        const char *path;
        const char *const *headers;
        long status;
        int accept; /* Vary: Accept expected */
    } cases[] = {
        {"/boards/varied/rank?page=1", plain, 200, 1},
        {"/rank?board=varied&page=1", plain, 200, 1},
        {"/boards/varied/rank?page=1", cond, 304, 1},
        {"/boards/varied/rank?min=1&max=9", plain, 200, 1},
        {"/boards/varied/rank?page=0", plain, 400, 1},
        {"/boards/varied", plain, 200, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_result r;
        ck_assert_int_eq(
            http_req_h(port, "GET", cases[i].path, NULL, 0, NULL, NULL, cases[i].headers, &r), 0);
        ck_assert_msg(r.status == cases[i].status, "%s -> %ld", cases[i].path, r.status);
        ck_assert_msg(varies(r.headers, "Accept") == cases[i].accept, "%s: %s", cases[i].path,
                      r.headers);
        ck_assert_msg(varies(r.headers, "Origin"), "%s: %s", cases[i].path, r.headers);
        if (r.status != 304)
            ck_assert_msg(varies(r.headers, "Accept-Encoding"), "%s: %s", cases[i].path, r.headers);
        if (i == 0) /* the list in the filters' order, on one line, beside the page's contract */
            ck_assert_msg(strcasestr(r.headers, "\r\nVary: Accept-Encoding, Accept, Origin\r\n") &&
                              strcasestr(r.headers, "\r\nCache-Control: public") &&
                              strcasestr(r.headers, "\r\nETag: \"") &&
                              strcasestr(r.headers, "\r\nContent-Encoding: gzip\r\n"),
                          "%s", r.headers);
        http_result_free(&r);
    }
    struct sse s;
    ck_assert_int_eq(sse_open_on(port, &s, "/boards/varied/rank?page=1",
                                 "Origin: https://app.example\r\nAccept-Encoding: gzip\r\n"),
                     0);
    ck_assert_int_eq(s.status, 200);
    ck_assert_msg(varies(s.head, "Accept") && varies(s.head, "Origin"), "%s", s.head);
    ck_assert_ptr_nonnull(strcasestr(s.head, "\r\nCache-Control: no-store\r\n"));
    sse_close(&s);
    rankd_stop(app);
}
END_TEST

static void many_streams(struct config *cfg)
{
    cfg->max_streams = 0;        /* no cap of their own: --max-connections only */
    cfg->max_connections = 2000; /* 1,000 streams, and the test's GETs beside them */
}

/* At least `need` descriptors for this process (the soft limit raised toward the hard one): 0,
 * or -1 when the hard limit is below it. */
static int fds_for(rlim_t need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return -1;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
            return -1;
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            return -1;
    }
    return 0;
}

/* Open streams s[from, to) and wait for each one's first page. */
static void open_viewers(int port, struct sse *s, size_t *pos, int from, int to)
{
    for (int i = from; i < to; i++) {
        ck_assert_msg(sse_open_on(port, &s[i], "/boards/crowd/rank?page=1", "") == 0,
                      "stream %d did not open", i);
        ck_assert_int_eq(s[i].status, 200);
    }
    for (int i = from; i < to; i++) {
        struct sse_event e;
        ck_assert_msg(sse_next(&s[i], &pos[i], &e, 10000) == 0, "stream %d: no first page", i);
        ck_assert_str_eq(e.name, "page");
        free(e.data);
    }
}

static double watch_reads(int port)
{
    return http_metric(port, "rankd_watch_page_reads_total");
}

/* A quiet point after the watch's read number `after`: the read counter past it, then 200 ms in
 * which no read started and Redis ran no command (the read's calls are over), so that a window
 * between two quiet points holds whole reads only. Returns the reads counted then, and *calls
 * Redis' command count. */
static double quiet_after(int port, double after, long long *calls)
{
    for (int64_t until = now_ms() + 30000; now_ms() < until;) {
        double r = watch_reads(port);
        if (r <= after) {
            sleep_ms(50);
            continue;
        }
        long long c = redis_calls();
        sleep_ms(200);
        if (redis_calls() == c && watch_reads(port) == r) {
            *calls = c;
            return r;
        }
    }
    ck_abort_msg("no quiet point after watch read %.0f within 30 s", after);
    return 0;
}

/* The Redis commands of one refresh of the watched page, over `n` whole refreshes (between two
 * quiet points); *per_s the commands per second over that window, for the log. Checks the
 * refreshes' bound: one per TTL interval whatever the viewers (timers may be late on a busy
 * machine, never early). */
static double commands_per_read(int port, int n, double *per_s)
{
    long long c0 = 0, c1 = 0;
    double r0 = quiet_after(port, watch_reads(port), &c0);
    int64_t t0 = now_ms();
    double r1 = quiet_after(port, r0 + n - 1, &c1);
    int64_t ms = now_ms() - t0;
    double reads = r1 - r0;
    ck_assert_msg(reads >= n && reads <= (double)ms / 1000.0 + 1,
                  "%.0f page reads in %lld ms (TTL 1000 ms: at most one a second)", reads,
                  (long long)ms);
    *per_s = (double)(c1 - c0) * 1000.0 / (double)ms;
    return (double)(c1 - c0) / reads;
}

/* 1,000 streams of one page on one process hold: each gets its first page and, after a write,
 * the changed page; and Redis runs the same commands for them as for 10 viewers: the commands
 * of one refresh of the page (counted over whole refreshes, one per TTL, between quiet points,
 * so that neither the machine's load nor a window cutting a refresh in two moves the count)
 * with 1,000 viewers are within 10% of those with 10, and refreshes stay one per TTL. */
START_TEST(test_redis_cost_flat_with_viewers)
{
    enum { FEW = 10, MANY = 1000, READS = 4 };
    ck_assert_msg(fds_for(2 * MANY + 512) == 0,
                  "this case needs %d file descriptors (ulimit -n): the streams' two ends live in "
                  "this process",
                  2 * MANY + 512);
    put_board("crowd", "{\"page_ttl_ms\":1000}");
    it_post_score("crowd", "{\"id\":\"a\",\"score\":5}");
    struct rankd *app = rankd_test_start_with(g_redis.port, TEST_TOKEN, many_streams, NULL);
    int port = rankd_port(app);
    struct sse *s = calloc(MANY, sizeof(*s));
    size_t *pos = calloc(MANY, sizeof(*pos));
    ck_assert(s && pos);
    open_viewers(port, s, pos, 0, FEW);
    double few_s = 0, many_s = 0;
    double few = commands_per_read(port, READS, &few_s);
    int64_t t0 = now_ms();
    open_viewers(port, s, pos, FEW, MANY);
    int64_t opened_ms = now_ms() - t0;
    ck_assert_int_eq(http_metric(port, "rankd_streams_open"), MANY);
    ck_assert_int_eq(http_metric(port, "rankd_watched_pages"), 1);
    double many = commands_per_read(port, READS, &many_s);
    fprintf(stderr,
            "streams: Redis commands per page refresh (one per TTL): %.2f with %d viewers, %.2f "
            "with %d (%.1f/s and %.1f/s); %d streams opened in %lld ms\n",
            few, FEW, many, MANY, few_s, many_s, MANY - FEW, (long long)opened_ms);
    ck_assert_msg(many <= few * 1.1 && many >= few * 0.9,
                  "Redis commands per refresh: %.2f with %d viewers, %.2f with %d", few, FEW, many,
                  MANY);

    /* a write: every viewer gets the changed page (10 s: a hang guard, not the contract) */
    t0 = now_ms();
    it_post_score("crowd", "{\"id\":\"b\",\"score\":7}");
    for (int i = 0; i < MANY; i++) {
        struct sse_event e;
        ck_assert_msg(sse_next(&s[i], &pos[i], &e, (int)(t0 + 10000 - now_ms())) == 0,
                      "viewer %d: no changed page", i);
        ck_assert_str_eq(e.name, "page");
        ck_assert_msg(strstr(e.data, "\"id\":\"b\"") != NULL, "viewer %d: %s", i, e.data);
        free(e.data);
    }
    fprintf(stderr, "streams: the write reached all %d viewers within %lld ms\n", MANY,
            (long long)(now_ms() - t0));
    for (int i = 0; i < MANY; i++)
        sse_close(&s[i]);
    free(pos);
    free(s);
    rankd_stop(app);
}
END_TEST

/* ---------------------------------------------------------------- Redis stopped under streams */

/* One watched page of the case below: its board, the board's settings, the stream's query, the
 * member a write moves to make the page change (a member off the page for a `with` page). */
struct watched {
    const char *board, *settings, *query, *member;
    int ttl_ms;
    struct sse s;
    size_t pos;
};

static void fault_streams(struct config *cfg)
{
    cfg->stream_heartbeat_ms = 1000; /* a stream silent for a second says so */
}

/* POST one score to rankd on `port` until it is answered 200 (a write just after Redis came back
 * may meet the connection's recovery: 503, retried) within 10 s; returns when it was. */
static int64_t post_until_ok(int port, const char *board, const char *json)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    long last = 0;
    for (int64_t until = now_ms() + 10000; now_ms() < until; sleep_ms(50)) {
        struct http_result r;
        ck_assert_int_eq(http_write(port, "POST", path, json, &r), 0);
        last = r.status;
        http_result_free(&r);
        if (last == 200)
            return now_ms();
    }
    ck_abort_msg("POST %s %s: still %ld 10 s after Redis came back", path, json, last);
    return 0;
}

/* Keep-alive comments in s's body from byte `from` on. */
static int beats_since(const struct sse *s, size_t from)
{
    int n = 0;
    for (const char *p = s->text && from <= s->len ? s->text + from : NULL;
         p && (p = strstr(p, ": keep-alive\n\n")); p++)
        n++;
    return n;
}

/* The case's own Redis, stopped at exit too: a failed check ends the test's process (exit). */
static struct redis_proc stopped_redis;

static void stopped_redis_end(void)
{
    redis_proc_stop(&stopped_redis);
}

/* Redis stopped (SIGSTOP) for 3 s under watched pages, at moments spread over the refresh
 * interval, on a live board and on one that caches pages, each with a plain page and a `with`
 * page: every stream stays open and keeps saying so (keep-alive comments: the event thread is
 * not held), and once Redis runs again a write shows on every stream within the refresh's
 * bound (docs/api.md: the page TTL plus a second) plus one Redis timeout (the read out when
 * Redis stopped) plus 2 s. This case runs its own Redis. */
START_TEST(test_redis_stopped_under_streams)
{
    enum { ROUNDS = 6, STOP_MS = 3000 };
    static const char LIVE[] = "{\"page_ttl_ms\":0,\"page_size\":2}";
    static const char CACHED[] = "{\"page_ttl_ms\":1000,\"page_size\":2}";
    struct redis_proc *red = &stopped_redis;
    ck_assert_int_eq(redis_proc_start(red), 0);
    atexit(stopped_redis_end);
    struct rankd *app = rankd_test_start_with(red->port, TEST_TOKEN, fault_streams, NULL);
    int port = rankd_port(app);
    int timeout_ms = app->cfg.redis_timeout_ms;
    struct watched ws[] = {
        {.board = "swlive", .settings = LIVE, .query = "page=1&with=d", .member = "d"},
        {.board = "splive", .settings = LIVE, .query = "page=1", .member = "a"},
        {.board = "swcached",
         .settings = CACHED,
         .query = "page=1&with=d",
         .member = "d",
         .ttl_ms = 1000},
        {.board = "spcached", .settings = CACHED, .query = "page=1", .member = "a", .ttl_ms = 1000},
    };
    enum { N = sizeof(ws) / sizeof(ws[0]) };
    char path[256], json[128];
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/boards/%s", ws[i].board);
        struct http_result r;
        ck_assert_int_eq(http_write(port, "PUT", path, ws[i].settings, &r), 0);
        ck_assert_msg(r.status == 200 || r.status == 201, "PUT %s -> %ld", path, r.status);
        http_result_free(&r);
        const char *ids[] = {"a", "b", "c", "d"};
        for (int k = 0; k < 4; k++) {
            snprintf(json, sizeof(json), "{\"id\":\"%s\",\"score\":%d}", ids[k], 50 - 10 * k);
            post_until_ok(port, ws[i].board, json);
        }
        snprintf(path, sizeof(path), "/boards/%s/rank?%s", ws[i].board, ws[i].query);
        ck_assert_int_eq(sse_open_on(port, &ws[i].s, path, ""), 0);
        ck_assert_int_eq(ws[i].s.status, 200);
        struct sse_event e;
        ck_assert_msg(sse_next(&ws[i].s, &ws[i].pos, &e, 5000) == 0, "%s: no first page", path);
        free(e.data);
    }
    int64_t worst[N] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        /* the stop lands at another moment of the refresh interval each round */
        sleep_ms(round * 1000 / ROUNDS);
        size_t mark[N];
        for (int i = 0; i < N; i++)
            mark[i] = ws[i].s.len;
        ck_assert_int_eq(kill(red->pid, SIGSTOP), 0);
        for (int64_t until = now_ms() + STOP_MS; now_ms() < until;)
            for (int i = 0; i < N; i++)
                sse_pump(&ws[i].s, 10);
        ck_assert_int_eq(kill(red->pid, SIGCONT), 0);
        int64_t resumed = now_ms();
        for (int i = 0; i < N; i++) {
            ck_assert_msg(!ws[i].s.closed && !ws[i].s.ended, "%s: the stream ended under the stop",
                          ws[i].board);
            ck_assert_msg(beats_since(&ws[i].s, mark[i]) >= 1,
                          "%s: no keep-alive in a %d ms stop of Redis (heartbeat 1000 ms)",
                          ws[i].board, STOP_MS);
        }
        int64_t acked[N];
        int score = 100 + round;
        for (int i = 0; i < N; i++) {
            snprintf(json, sizeof(json), "{\"id\":\"%s\",\"score\":%d}", ws[i].member, score);
            acked[i] = post_until_ok(port, ws[i].board, json);
        }
        char want[64];
        for (int i = 0; i < N; i++) {
            snprintf(want, sizeof(want), "\"id\":\"%s\",\"score\":%d", ws[i].member, score);
            /* the page TTL plus a second (and the interval's tenth), the read out when Redis
             * stopped, 2 s of margin */
            int64_t bound = ws[i].ttl_ms + 1000 + ws[i].ttl_ms / 10 + timeout_ms + 2000;
            int64_t lag = -1;
            while (lag < 0) {
                struct sse_event e;
                if (sse_next(&ws[i].s, &ws[i].pos, &e, (int)(acked[i] + 15000 - now_ms())))
                    break;
                if (strcmp(e.name, "page") == 0 && strstr(e.data, want))
                    lag = now_ms() - acked[i];
                ck_assert_msg(strcmp(e.name, "end") != 0, "%s: the stream ended: %s", ws[i].board,
                              e.data);
                free(e.data);
            }
            ck_assert_msg(lag >= 0, "%s round %d: no page with %s within 15 s of the write",
                          ws[i].board, round, want);
            fprintf(stderr,
                    "streams: %s round %d: the write, answered %lld ms after Redis came back, "
                    "showed in %lld ms\n",
                    ws[i].board, round, (long long)(acked[i] - resumed), (long long)lag);
            ck_assert_msg(lag <= bound,
                          "%s round %d: the write after Redis came back showed in %lld ms (bound "
                          "%lld ms)",
                          ws[i].board, round, (long long)lag, (long long)bound);
            if (lag > worst[i])
                worst[i] = lag;
        }
    }
    fprintf(stderr,
            "streams: Redis stopped %d x %d ms: the slowest write to show, per stream: %s %lld ms, "
            "%s %lld ms, %s %lld ms, %s %lld ms\n",
            ROUNDS, STOP_MS, ws[0].board, (long long)worst[0], ws[1].board, (long long)worst[1],
            ws[2].board, (long long)worst[2], ws[3].board, (long long)worst[3]);
    for (int i = 0; i < N; i++)
        sse_close(&ws[i].s);
    rankd_stop(app);
    redis_proc_stop(red);
}
END_TEST

/* ---------------------------------------------------------------- a refresh's timer */

/* What the case below sees of one event loop: its step-4 hook sets a 0 ms timer once, the timer
 * queues as a watch's refresh queues its read (a Redis command, sent at step 5), the step-5 hook
 * sends it. */
struct step_probe {
    struct loop *l;
    int armed, queued;              /* the loop's thread only */
    atomic_llong timer_ms, sent_ms; /* when the timer ran, when its work was sent */
};

static void probe_timer(void *arg)
{
    struct step_probe *p = arg;
    p->queued = 1;
    atomic_store(&p->timer_ms, (long long)now_ms());
}

static void probe_run(void *arg)
{
    struct step_probe *p = arg;
    if (!p->armed)
        p->armed = loop_timer_after(p->l, 0, probe_timer, p) != NULL;
}

static void probe_flush(void *arg)
{
    struct step_probe *p = arg;
    if (p->queued) {
        p->queued = 0;
        atomic_store(&p->sent_ms, (long long)now_ms());
    }
}

/* A loop timer that comes due at the top of an iteration (step 1 in loop.h: a watch's refresh
 * whose time came while the iteration before ran, or one set with no delay from a request's
 * step) queues its Redis command for the same iteration's step 5: the loop must not sleep in
 * between. Here nothing else would wake it for 60 s. Before: the timer's work waited for the
 * loop's next wake-up (this case: 'not sent 3000 ms after the timer ran'). */
START_TEST(test_timer_work_not_held)
{
    struct loop_group_options o = {
        .host = "127.0.0.1", .port = 0, .threads = 1, .max_connections = 4};
    int err = 0;
    struct loop_group *g = loop_group_new(&o, &err);
    ck_assert_msg(g != NULL, "loop_group_new: %d", err);
    static struct step_probe p;
    p.l = loop_group_loop(g, 0);
    struct loop_hooks h = {.run = probe_run, .flush = probe_flush, .arg = &p};
    ck_assert_int_eq(loop_hooks_add(p.l, &h), 0);
    ck_assert_int_eq(loop_group_start(g), 0);
    loop_wake(p.l); /* one iteration: its step 4 sets the timer */
    for (int64_t until = now_ms() + 3000; !atomic_load(&p.sent_ms) && now_ms() < until;)
        sleep_ms(10);
    long long ran = atomic_load(&p.timer_ms), sent = atomic_load(&p.sent_ms);
    loop_group_stop(g);
    loop_group_free(g);
    ck_assert_msg(ran > 0, "the timer did not run");
    ck_assert_msg(sent > 0, "not sent %lld ms after the timer ran", (long long)now_ms() - ran);
    ck_assert_msg(sent - ran < 1000, "sent %lld ms after the timer ran", sent - ran);
}
END_TEST

Suite *streams_suite(void)
{
    const struct it_case cases[] = {
        {"page_then_changes", test_page_then_changes},
        {"last_event_id_no_repeat", test_last_event_id_no_repeat},
        {"errors_before_stream", test_errors_before_stream},
        {"board_deleted_ends_stream", test_board_deleted_ends_stream},
        {"shutdown_last_event", test_shutdown_last_event},
        {"stream_caps", test_stream_caps},
        {"heartbeat", test_heartbeat},
        {"owner_leaves_other_thread_takes_over", test_owner_leaves_other_thread_takes_over},
        {"redis_cost_flat_with_viewers", test_redis_cost_flat_with_viewers},
        {"vary_accept", test_vary_accept},
        {"score_range_stream", test_score_range_stream},
        {"score_range_stream_refusals", test_score_range_stream_refusals},
        {"with_stream", test_with_stream},
        {"redis_stopped_under_streams", test_redis_stopped_under_streams},
        {"timer_work_not_held", test_timer_work_not_held},
    };
    return it_suite_timeout("streams", cases, sizeof(cases) / sizeof(cases[0]), 120);
}
