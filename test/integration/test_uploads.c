/*
 * test_uploads.c -- NDJSON uploads with two chunks in flight, on a real Redis: the chunk sent
 * behind another is applied only when that one was applied whole (the upload's sequence key,
 * write.lua's status 6), so a chunk that fails stops the next one inside Redis and the reply says
 * exactly what was applied. CLIENT PAUSE WRITE holds the scripts while rankd reads on, so both
 * chunks are in flight when Redis runs them, whatever the machine's speed. One Redis only: a
 * cluster keeps one chunk in flight.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "upload.h"

#define PAUSE_MS 600 /* long enough for rankd to read and send the second chunk meanwhile */

/* Lines [from, to) of an upload: {"id":"m<i>","score":<i>} (with a record when `record`). */
static void lines(struct buf *b, int from, int to, int record)
{
    for (int i = from; i < to; i++) {
        char e[96];
        int n = snprintf(e, sizeof(e), "{\"id\":\"m%d\",\"score\":%d%s}\n", i, i + 1,
                         record ? ",\"record\":{\"n\":1}" : "");
        buf_append(b, e, (size_t)n);
    }
}

static double field(const struct http_result *r, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->json, name);
    ck_assert_msg(cJSON_IsNumber(v), "no number %s in %s", name, r->body);
    return v->valuedouble;
}

static void post_upload(const char *board, const struct buf *b, struct http_result *r)
{
    char path[96];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    ck_assert_int_eq(
        http_req(g_port, "POST", path, b->data, b->len, "application/x-ndjson", TEST_TOKEN, r), 0);
}

static void pause_writes(void)
{
    redisReply *r = redis_admin_cmd(g_admin, "CLIENT PAUSE %d WRITE", PAUSE_MS);
    ck_assert_msg(r->type == REDIS_REPLY_STATUS, "CLIENT PAUSE: %s", r->str);
    freeReplyObject(r);
}

/* Five chunks, the first two held in flight together by a pause: every line applied, and the
 * second chunk was checked against the first (the sequence key's GET in Redis). */
START_TEST(pipelined_chunks_all_applied)
{
    struct buf b = {0};
    int n = 5 * UPLOAD_CHUNK_LINES;
    lines(&b, 0, n, 0);
    long long gets = redis_cmd_calls(g_admin, "get");
    pause_writes();
    struct http_result r;
    post_upload("pipe", &b, &r);
    fprintf(stderr, "uploads: %d lines, two chunks held in flight: %ld %s\n", n, r.status, r.body);
    ck_assert_msg(r.status == 200 && field(&r, "applied") == n, "%ld %s", r.status, r.body);
    http_result_free(&r);
    buf_free(&b);
    ck_assert_int_eq(it_zcard("pipe", NULL), n);
    long long checked = redis_cmd_calls(g_admin, "get") - gets;
    ck_assert_msg(checked >= 1, "no chunk was sent behind another (%lld sequence reads)", checked);
}
END_TEST

/* The first chunk fails inside its script (its records' HSET meets a key of another type, after
 * its scores were added), while the second chunk, which has no records and would succeed alone,
 * is already in flight behind it: Redis refuses the second whole. The reply says no line is
 * applied or settled, and no member of the second chunk is on the board. */
START_TEST(failed_chunk_stops_the_next)
{
    freeReplyObject(redis_admin_cmd(g_admin, "SET rankd:items not-a-hash"));
    struct buf b = {0};
    lines(&b, 0, UPLOAD_CHUNK_LINES, 1);                      /* chunk 0: fails at its HSET */
    lines(&b, UPLOAD_CHUNK_LINES, 2 * UPLOAD_CHUNK_LINES, 0); /* chunk 1: would apply alone */
    long long gets = redis_cmd_calls(g_admin, "get");
    pause_writes();
    struct http_result r;
    post_upload("cut", &b, &r);
    long long members = it_zcard("cut", NULL);
    long long checked = redis_cmd_calls(g_admin, "get") - gets;
    fprintf(stderr,
            "uploads: a failed first chunk with the second in flight: %ld %s; %lld "
            "members on the board, %lld sequence reads\n",
            r.status, r.body, members, checked);
    ck_assert_msg(r.status >= 500, "%ld %s", r.status, r.body);
    ck_assert_msg(field(&r, "applied") == 0 && field(&r, "settled_through_line") == 0, "%s",
                  r.body);
    http_result_free(&r);
    buf_free(&b);
    ck_assert_msg(checked >= 1, "the second chunk was not sent behind the first");
    /* the first chunk's scores went in before its error (a script stops where it fails); the
     * second chunk's are not there */
    ck_assert_int_eq(members, UPLOAD_CHUNK_LINES);
    for (int i = UPLOAD_CHUNK_LINES; i < 2 * UPLOAD_CHUNK_LINES; i += 37) {
        redisReply *s = redis_admin_cmd(g_admin, "ZSCORE rankd:{cut}:z m%d", i);
        ck_assert_msg(s->type == REDIS_REPLY_NIL, "m%d of the second chunk was written", i);
        freeReplyObject(s);
    }
}
END_TEST

/* The same upload without the fault, after it: what the client resends is applied whole. */
START_TEST(upload_after_fault_resumes)
{
    freeReplyObject(redis_admin_cmd(g_admin, "SET rankd:items not-a-hash"));
    struct buf b = {0};
    lines(&b, 0, UPLOAD_CHUNK_LINES, 0);
    lines(&b, UPLOAD_CHUNK_LINES, 2 * UPLOAD_CHUNK_LINES, 1); /* chunk 1 fails */
    lines(&b, 2 * UPLOAD_CHUNK_LINES, 3 * UPLOAD_CHUNK_LINES, 0);
    pause_writes();
    struct http_result r;
    post_upload("again", &b, &r);
    fprintf(stderr, "uploads: the second of three chunks fails: %ld %s\n", r.status, r.body);
    ck_assert_msg(r.status >= 500 && field(&r, "applied") == UPLOAD_CHUNK_LINES &&
                      field(&r, "settled_through_line") == UPLOAD_CHUNK_LINES,
                  "%ld %s", r.status, r.body);
    http_result_free(&r);
    /* nothing of the third chunk */
    redisReply *s = redis_admin_cmd(g_admin, "ZSCORE rankd:{again}:z m%d", 2 * UPLOAD_CHUNK_LINES);
    ck_assert_int_eq(s->type, REDIS_REPLY_NIL);
    freeReplyObject(s);
    /* the fault gone, the lines after the settled one sent again: all applied */
    freeReplyObject(redis_admin_cmd(g_admin, "DEL rankd:items"));
    struct buf rest = {0};
    buf_append(&rest, b.data, b.len);
    size_t skip = 0;
    for (int k = 0; k < UPLOAD_CHUNK_LINES; k++)
        skip = (size_t)(strchr(rest.data + skip, '\n') - rest.data) + 1;
    struct buf tail = {0};
    buf_append(&tail, rest.data + skip, rest.len - skip);
    post_upload("again", &tail, &r);
    ck_assert_msg(r.status == 200 && field(&r, "applied") == 2 * UPLOAD_CHUNK_LINES, "%ld %s",
                  r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_zcard("again", NULL), 3 * UPLOAD_CHUNK_LINES);
    buf_free(&b);
    buf_free(&rest);
    buf_free(&tail);
}
END_TEST

/* Send an upload's head and `nlines` lines on a new connection (Content-Length of a longer body: the
 * rest never comes); returns the socket. */
static int upload_open(int port, const char *board, int nlines)
{
    int fd = connect_loopback(port);
    ck_assert(fd >= 0);
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "POST /boards/%s/scores HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/x-ndjson\r\nContent-Length: 10000000\r\n\r\n",
                     board, TEST_TOKEN);
    ck_assert(write(fd, head, (size_t)n) == n);
    struct buf b = {0};
    lines(&b, 0, nlines, 0);
    ck_assert(write(fd, b.data, b.len) == (ssize_t)b.len);
    buf_free(&b);
    return fd;
}

/* The client goes while two chunks are in flight (held by a pause): the chunks end without their
 * request (no reply to send, nothing of it touched: ASan run), both are applied, and rankd goes
 * on serving. */
START_TEST(client_gone_with_chunks_in_flight)
{
    pause_writes();
    int fd = upload_open(g_port, "gone", 2 * UPLOAD_CHUNK_LINES);
    usleep(300 * 1000); /* both chunks read and sent, held by the pause */
    close(fd);
    usleep((PAUSE_MS + 300) * 1000);
    ck_assert_int_eq(it_status("GET", "/healthz", NULL), 200);
    ck_assert_int_eq(it_zcard("gone", NULL), 2 * UPLOAD_CHUNK_LINES);
    it_post_score("gone", "{\"id\":\"after\",\"score\":1}");
}
END_TEST

/* rankd stops while a chunk is in flight (held by a pause) and the upload reads on (half a chunk
 * more is pending): the stop waits for the chunk, and the upload's answer counts it as applied and
 * settled (not a cut before it, with its lines applied after the answer). */
START_TEST(stop_with_a_chunk_in_flight)
{
    struct rankd *app = rankd_test_start(g_redis.port, TEST_TOKEN);
    pause_writes();
    int fd = upload_open(rankd_port(app), "stopped", UPLOAD_CHUNK_LINES + UPLOAD_CHUNK_LINES / 2);
    usleep(300 * 1000);
    rankd_stop(app);
    char reply[4096];
    size_t got = 0;
    for (ssize_t n;
         got < sizeof(reply) - 1 && (n = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0;)
        got += (size_t)n;
    reply[got] = '\0';
    close(fd);
    fprintf(stderr, "uploads: stopped with a chunk in flight: %.400s\n", reply);
    ck_assert_msg(strstr(reply, "\"applied\":300") &&
                      strstr(reply, "\"settled_through_line\":300") &&
                      strstr(reply, "\"unknown_through_line\":null"),
                  "%s", reply);
    ck_assert_int_eq(it_zcard("stopped", NULL), UPLOAD_CHUNK_LINES);
}
END_TEST

/* A write whose script fails after it wrote (its record's HSET meets a key of another type,
 * after its score went in: a script keeps what it wrote before the error) is never "not
 * written": 503 write_outcome_unknown, for a single write and for an upload's chunk. */
START_TEST(script_failed_midway_is_unknown)
{
    freeReplyObject(redis_admin_cmd(g_admin, "SET rankd:items not-a-hash"));
    struct http_result r;
    const char *one = "{\"id\":\"w1\",\"score\":5,\"op\":\"incr\",\"record\":{\"n\":1}}";
    ck_assert_int_eq(
        http_req(g_port, "POST", "/boards/midway/scores", one, strlen(one), NULL, TEST_TOKEN, &r),
        0);
    fprintf(stderr, "uploads: a single write failed midway: %ld %s; %lld members\n", r.status,
            r.body, it_zcard("midway", NULL));
    ck_assert_msg(r.status == 503 && strcmp(http_error_code(&r), "write_outcome_unknown") == 0,
                  "%ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_zcard("midway", NULL),
                     1); /* applied in part: why it is not "retry safely" */
    struct buf b = {0};
    lines(&b, 0, 10, 1);
    post_upload("midway-up", &b, &r);
    fprintf(stderr, "uploads: an upload's chunk failed midway: %ld %s\n", r.status, r.body);
    ck_assert_msg(r.status == 503 && strcmp(http_error_code(&r), "write_outcome_unknown") == 0 &&
                      field(&r, "applied") == 0 && field(&r, "settled_through_line") == 0,
                  "%ld %s", r.status, r.body);
    http_result_free(&r);
    buf_free(&b);
    ck_assert_int_eq(it_zcard("midway-up", NULL), 10);
}
END_TEST

/* Redis is killed while two chunks are outstanding (both sent, held by a pause, so neither ran):
 * the upload's answer comes at once and never says a line after the settled one is safe to send
 * as new: write_outcome_unknown, nothing applied or settled, and the lines in doubt run through
 * the second chunk's last line (not the first's: the second was sent too, and a Redis that ran
 * it before dying would have applied it). */
START_TEST(redis_killed_with_two_chunks_in_flight)
{
    signal(SIGPIPE, SIG_IGN);
    struct redis_proc rp = {0};
    ck_assert_msg(redis_proc_start(&rp) == 0, "could not start this test's redis-server");
    struct rankd *app = rankd_test_start(rp.port, TEST_TOKEN);
    redisContext *admin = redis_admin(rp.port);
    redisReply *pr = redisCommand(admin, "CLIENT PAUSE %d WRITE", 10 * PAUSE_MS);
    ck_assert(pr && pr->type == REDIS_REPLY_STATUS);
    freeReplyObject(pr);
    int n = 3 * UPLOAD_CHUNK_LINES;
    struct buf b = {0};
    lines(&b, 0, n, 0);
    int fd = connect_loopback(rankd_port(app));
    ck_assert(fd >= 0);
    char head[512];
    int hl = snprintf(head, sizeof(head),
                      "POST /boards/killed/scores HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "
                      "%s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %zu\r\n\r\n",
                      TEST_TOKEN, b.len);
    ck_assert(write(fd, head, (size_t)hl) == hl);
    ck_assert(write(fd, b.data, b.len) == (ssize_t)b.len);
    usleep(300 * 1000); /* two chunks read and sent, held by the pause; the third waits */
    double t0 = now_s();
    redis_proc_stop(&rp); /* SIGKILL */
    char reply[4096];
    size_t got = 0;
    for (ssize_t r;
         got < sizeof(reply) - 1 && (r = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0;) {
        got += (size_t)r;
        reply[got] = '\0';
        if (strstr(reply, "\r\n\r\n") && strchr(strstr(reply, "\r\n\r\n"), '}'))
            break; /* the whole JSON reply */
    }
    reply[got] = '\0';
    double took = now_s() - t0;
    close(fd);
    fprintf(stderr, "uploads: Redis killed with two chunks in flight: answered in %.2f s: %.600s\n",
            took, reply);
    char unknown[64], doubt[64];
    snprintf(unknown, sizeof(unknown), "\"unknown_through_line\":%d", 2 * UPLOAD_CHUNK_LINES);
    snprintf(doubt, sizeof(doubt), "lines 1 to %d may or may not be applied",
             2 * UPLOAD_CHUNK_LINES);
    ck_assert_msg(strstr(reply, " 503 ") && strstr(reply, "write_outcome_unknown") &&
                      strstr(reply, "\"applied\":0,") &&
                      strstr(reply, "\"settled_through_line\":0,") && strstr(reply, unknown) &&
                      strstr(reply, doubt),
                  "%s", reply);
    ck_assert_msg(took < 5.0, "the answer took %.2f s", took);
    buf_free(&b);
    redisFree(admin);
    rankd_stop(app);
    char file[200];
    snprintf(file, sizeof(file), "%s/redis.log", rp.dir);
    unlink(file);
    rmdir(rp.dir);
}
END_TEST

Suite *uploads_suite(void)
{
    const struct it_case cases[] = {
        {"pipelined_chunks_all_applied", pipelined_chunks_all_applied},
        {"failed_chunk_stops_the_next", failed_chunk_stops_the_next},
        {"upload_after_fault_resumes", upload_after_fault_resumes},
        {"client_gone_with_chunks_in_flight", client_gone_with_chunks_in_flight},
        {"stop_with_a_chunk_in_flight", stop_with_a_chunk_in_flight},
        {"script_failed_midway_is_unknown", script_failed_midway_is_unknown},
        {"redis_killed_with_two_chunks_in_flight", redis_killed_with_two_chunks_in_flight},
    };
    return it_suite("uploads", cases, sizeof(cases) / sizeof(cases[0]));
}
