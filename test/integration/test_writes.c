/*
 * test_writes.c -- issue 14's writes over real HTTP against a real Redis, with exact bodies:
 * previous score and rank in single-entry replies, per-entry results of batches, the write
 * counter (`version`), incr's floor and ceiling, idempotent writes (replays byte for byte, a key
 * reused for another body, a retry after the connection was killed before the reply), and one
 * entry written to several boards (all or nothing, an unknown board refusing the whole write).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "suites.h"

/* One request with the token and extra headers (NULL-terminated, may be NULL); asserts the
 * status and, when `want` is not NULL, the whole body. The result is the caller's. */
static void req(const char *method, const char *path, const char *body, const char *ctype,
                const char *const *headers, long status, const char *want, struct http_result *r)
{
    ck_assert_int_eq(http_req_h(g_port, method, path, body, body ? strlen(body) : 0, ctype,
                                TEST_TOKEN, headers, r),
                     0);
    ck_assert_msg(r->status == status && (!want || strcmp(r->body, want) == 0),
                  "%s %s %.300s\n-> %ld %s\nwant %ld %s", method, path, body ? body : "", r->status,
                  r->body, status, want ? want : "(any body)");
}

static void expect(const char *method, const char *path, const char *body, long status,
                   const char *want)
{
    struct http_result r;
    req(method, path, body, NULL, NULL, status, want, &r);
    http_result_free(&r);
}

/* A request whose reply must be error `code` with `status`. */
static void expect_error(const char *method, const char *path, const char *body,
                         const char *const *headers, long status, const char *code)
{
    struct http_result r;
    req(method, path, body, NULL, headers, status, NULL, &r);
    ck_assert_msg(strcmp(http_error_code(&r), code) == 0, "%s %s: %s, want code %s", method, path,
                  r.body, code);
    http_result_free(&r);
}

/* The score of a member as GET /boards/{board}/members/{id} prints it, or "absent". */
static void member_score(const char *board, const char *id, char *out, size_t cap)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    const char *s = r.status == 200 ? strstr(r.body, "\"score\":") : NULL;
    if (r.status == 404)
        snprintf(out, cap, "absent");
    else if (s)
        snprintf(out, cap, "%.*s", (int)strcspn(s + 8, ",}"), s + 8);
    else
        snprintf(out, cap, "%ld %s", r.status, r.body);
    http_result_free(&r);
}

static void expect_score(const char *board, const char *id, const char *want)
{
    char got[64];
    member_score(board, id, got, sizeof(got));
    ck_assert_msg(strcmp(got, want) == 0, "%s/%s: score %s, want %s", board, id, got, want);
}

static const char *header_value(const struct http_result *r, const char *name, char *out,
                                size_t cap)
{
    out[0] = '\0';
    size_t n = strlen(name);
    for (const char *p = r->headers; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
        if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r\n");
            snprintf(out, cap, "%.*s", (int)len, v);
            return out;
        }
    }
    return NULL;
}

static long long cmdstat_calls(const char *cmd)
{
    char field[64];
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", cmd);
    long long n = redis_info_field(g_admin, "commandstats", field); /* a cluster: every master */
    return n < 0 ? 0 : n;
}

/* ---------------------------------------------------------------- results and versions */

START_TEST(prev_and_batch_results)
{
    expect("POST", "/boards/w/scores", "{\"id\":\"a\",\"score\":10}", 200,
           "{\"id\":\"a\",\"score\":10,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":1}");
    expect("POST", "/boards/w/scores", "{\"id\":\"b\",\"score\":20}", 200,
           "{\"id\":\"b\",\"score\":20,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":2}");
    expect("POST", "/boards/w/scores", "{\"id\":\"a\",\"score\":30}", 200,
           "{\"id\":\"a\",\"score\":30,\"rank\":1,\"updated\":true,\"prev_score\":10,"
           "\"prev_rank\":2,\"version\":3}");
    expect("POST", "/boards/w/scores", "{\"id\":\"a\",\"score\":5,\"op\":\"best\"}", 200,
           "{\"id\":\"a\",\"score\":30,\"rank\":1,\"updated\":false,\"prev_score\":30,"
           "\"prev_rank\":1,\"version\":4}");
    /* each entry's own score and updated; rank: the member's after the whole batch */
    expect("POST", "/boards/w/scores",
           "{\"entries\":[{\"id\":\"c\",\"score\":25},{\"id\":\"b\",\"score\":1,\"op\":\"incr\"},"
           "{\"id\":\"c\",\"score\":40},{\"id\":\"a\",\"score\":30}]}",
           200,
           "{\"applied\":4,\"rejected\":[],\"results\":[{\"score\":25,\"rank\":1,\"updated\":true},"
           "{\"score\":21,\"rank\":3,\"updated\":true},{\"score\":40,\"rank\":1,\"updated\":true},"
           "{\"score\":30,\"rank\":2,\"updated\":false}],\"version\":5}");
    /* a decimal board decodes previous scores exactly */
    expect("PUT", "/boards/d2", "{\"score_decimals\":2,\"order\":\"asc\"}", 201, NULL);
    expect("POST", "/boards/d2/scores", "{\"id\":\"x\",\"score\":0.1}", 200,
           "{\"id\":\"x\",\"score\":0.1,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":1}");
    expect("POST", "/boards/d2/scores", "{\"id\":\"y\",\"score\":0.05}", 200, NULL);
    expect("POST", "/boards/d2/scores", "{\"id\":\"x\",\"score\":0.2,\"op\":\"incr\"}", 200,
           "{\"id\":\"x\",\"score\":0.3,\"rank\":2,\"updated\":true,\"prev_score\":0.1,"
           "\"prev_rank\":2,\"version\":3}");
    /* an upload says the counter after its last chunk */
    struct http_result r;
    req("POST", "/boards/d2/scores", "{\"id\":\"z\",\"score\":1}\n", "application/x-ndjson", NULL,
        200, "{\"applied\":1,\"rejected_total\":0,\"rejected\":[],\"version\":4}", &r);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- floor and ceiling */

START_TEST(incr_floor_ceiling)
{
    /* desc board: the floor is the lowest score the result may take */
    expect("POST", "/boards/fc/scores", "{\"id\":\"a\",\"score\":-5,\"op\":\"incr\",\"floor\":0}",
           200,
           "{\"id\":\"a\",\"score\":0,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":1}");
    expect("POST", "/boards/fc/scores",
           "{\"id\":\"a\",\"score\":7,\"op\":\"incr\",\"floor\":0,\"ceiling\":5}", 200,
           "{\"id\":\"a\",\"score\":5,\"rank\":1,\"updated\":true,\"prev_score\":0,"
           "\"prev_rank\":1,\"version\":2}");
    expect("POST", "/boards/fc/scores", "{\"id\":\"a\",\"score\":3,\"op\":\"incr\",\"ceiling\":5}",
           200,
           "{\"id\":\"a\",\"score\":5,\"rank\":1,\"updated\":false,\"prev_score\":5,"
           "\"prev_rank\":1,\"version\":3}");
    /* floor == ceiling pins the result; a result already outside the bounds is brought in */
    expect("POST", "/boards/fc/scores",
           "{\"id\":\"a\",\"score\":-2,\"op\":\"incr\",\"floor\":4,\"ceiling\":4}", 200, NULL);
    expect_score("fc", "a", "4");
    expect("POST", "/boards/fc/scores", "{\"id\":\"a\",\"score\":0,\"op\":\"incr\",\"floor\":9}",
           200, NULL);
    expect_score("fc", "a", "9");
    /* exact literals: 5.0 and 50e-1 are 5 */
    expect("POST", "/boards/fc/scores",
           "{\"id\":\"a\",\"score\":100,\"op\":\"incr\",\"ceiling\":50e-1}", 200, NULL);
    expect_score("fc", "a", "5");
    expect_error("POST", "/boards/fc/scores",
                 "{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"floor\":5,\"ceiling\":4}", NULL, 400,
                 "invalid_field");
    expect_error("POST", "/boards/fc/scores", "{\"id\":\"a\",\"score\":1,\"floor\":0}", NULL, 400,
                 "invalid_field");
    expect_error("POST", "/boards/fc/scores",
                 "{\"id\":\"a\",\"score\":1,\"op\":\"best\",\"ceiling\":0}", NULL, 400,
                 "invalid_field");
    expect_error("POST", "/boards/fc/scores",
                 "{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"floor\":\"0\"}", NULL, 422,
                 "invalid_score");
    expect_error("POST", "/boards/fc/scores",
                 "{\"id\":\"a\",\"score\":1,\"op\":\"incr\",\"floor\":0.5}", NULL, 422,
                 "invalid_score");
    expect_score("fc", "a", "5"); /* refused: nothing written */

    /* asc board with one decimal: the floor is still the lowest score, in board units */
    expect("PUT", "/boards/fa", "{\"order\":\"asc\",\"score_decimals\":1}", 201, NULL);
    expect("POST", "/boards/fa/scores",
           "{\"id\":\"x\",\"score\":0.3,\"op\":\"incr\",\"ceiling\":0.2}", 200, NULL);
    expect_score("fa", "x", "0.2");
    expect("POST", "/boards/fa/scores",
           "{\"id\":\"x\",\"score\":-1,\"op\":\"incr\",\"floor\":-0.5}", 200, NULL);
    expect_score("fa", "x", "-0.5");
    expect("POST", "/boards/fa/scores", "{\"id\":\"x\",\"score\":1,\"op\":\"incr\",\"floor\":0.05}",
           422,
           "{\"error\":{\"code\":\"invalid_score\",\"message\":\"floor 0.05 has more fractional "
           "digits than this board keeps (score_decimals=1).\"}}");
    expect("POST", "/boards/fa/scores",
           "{\"id\":\"x\",\"score\":1,\"op\":\"incr\",\"ceiling\":1e12}", 422,
           "{\"error\":{\"code\":\"score_out_of_range\",\"message\":\"ceiling 1e12 is outside "
           "this board's exact range: from -429496729.5 to 429496729.5.\"}}");
    /* in a batch, per entry, and in an upload line */
    expect("POST", "/boards/fa/scores",
           "{\"entries\":[{\"id\":\"x\",\"score\":-10,\"op\":\"incr\",\"floor\":-1},"
           "{\"id\":\"y\",\"score\":3,\"op\":\"incr\",\"ceiling\":2.5}]}",
           200, NULL);
    expect_score("fa", "x", "-1");
    expect_score("fa", "y", "2.5");
    struct http_result r;
    req("POST", "/boards/fa/scores",
        "{\"id\":\"y\",\"score\":9,\"op\":\"incr\",\"ceiling\":3}\n"
        "{\"id\":\"y\",\"score\":1,\"op\":\"incr\",\"floor\":5,\"ceiling\":4}\n",
        "application/x-ndjson", NULL, 200, NULL, &r);
    ck_assert_msg(strstr(r.body, "\"applied\":1,\"rejected_total\":1") &&
                      strstr(r.body, "\"line\":2,\"error\":{\"code\":\"invalid_field\""),
                  "%s", r.body);
    http_result_free(&r);
    expect_score("fa", "y", "3");
}
END_TEST

/* ---------------------------------------------------------------- idempotency */

static const char *const key_k1[] = {"Idempotency-Key: k1", NULL};

START_TEST(idempotent_replay)
{
    const char *body = "{\"id\":\"a\",\"score\":5,\"op\":\"incr\"}";
    struct http_result r1, r2;
    char v[64];
    req("POST", "/boards/i1/scores", body, NULL, key_k1, 200,
        "{\"id\":\"a\",\"score\":5,\"rank\":1,\"updated\":true,\"prev_score\":null,"
        "\"prev_rank\":null,\"version\":1}",
        &r1);
    ck_assert_ptr_null(header_value(&r1, "Idempotent-Replayed", v, sizeof(v)));
    /* other writes in between: the replay is still the first reply, byte for byte */
    expect("POST", "/boards/i1/scores", "{\"id\":\"b\",\"score\":50}", 200, NULL);
    req("POST", "/boards/i1/scores", body, NULL, key_k1, 200, NULL, &r2);
    ck_assert_uint_eq(r1.len, r2.len);
    ck_assert_int_eq(memcmp(r1.body, r2.body, r1.len), 0);
    ck_assert_ptr_nonnull(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    ck_assert_str_eq(v, "true");
    http_result_free(&r1);
    http_result_free(&r2);
    expect_score("i1", "a", "5"); /* applied once */
    /* the same request written another way is the same request */
    req("POST", "/boards/i1/scores", "{ \"op\" : \"incr\", \"score\" : 5.0, \"id\" : \"a\" }", NULL,
        key_k1, 200, NULL, &r2);
    ck_assert_ptr_nonnull(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    http_result_free(&r2);
    expect_score("i1", "a", "5");
    /* the same key for another request: 422, nothing written */
    expect_error("POST", "/boards/i1/scores", "{\"id\":\"a\",\"score\":6,\"op\":\"incr\"}", key_k1,
                 422, "idempotency_key_reused");
    expect_error("POST", "/boards/i1/scores",
                 "{\"entries\":[{\"id\":\"a\",\"score\":5,\"op\":\"incr\"}]}", key_k1, 422,
                 "idempotency_key_reused");
    expect_score("i1", "a", "5");
    /* keys are per board */
    expect("POST", "/boards/i2/scores", body, 200, NULL);
    req("POST", "/boards/i2/scores", body, NULL, key_k1, 200, NULL, &r2);
    ck_assert_ptr_null(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    http_result_free(&r2);
    expect_score("i2", "a", "10");
    /* the record: 24 h, in the board's hash tag */
    redisReply *t = redis_admin_cmd(g_admin, "PTTL rankd:{i1}:idem:k1");
    ck_assert_msg(t->integer > 86000000 && t->integer <= 86400000, "PTTL %lld", t->integer);
    freeReplyObject(t);
    /* a batch replays whole, byte for byte */
    static const char *const kb[] = {"Idempotency-Key: batch-1", NULL};
    const char *batch = "{\"entries\":[{\"id\":\"a\",\"score\":1,\"op\":\"incr\"},"
                        "{\"id\":\"c\",\"score\":2,\"op\":\"incr\",\"record\":{\"n\":1}}]}";
    req("POST", "/boards/i1/scores", batch, NULL, kb, 200,
        "{\"applied\":2,\"rejected\":[],\"results\":[{\"score\":6,\"rank\":2,\"updated\":true},"
        "{\"score\":2,\"rank\":3,\"updated\":true}],\"version\":3}",
        &r1);
    req("POST", "/boards/i1/scores", batch, NULL, kb, 200, r1.body, &r2);
    ck_assert_ptr_nonnull(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    http_result_free(&r1);
    http_result_free(&r2);
    expect_score("i1", "a", "6");
    expect_score("i1", "c", "2");
}
END_TEST

/* An idempotent batch that fills a tie group part-way (tie cap 8, rankd in this process): the
 * entries before the full group are written, the group renumbered, the rest written after them
 * (write.lua goes on from the key's record); a replay is the whole first reply and applies
 * nothing again. */
START_TEST(idempotent_batch_across_compaction)
{
    board_set_tie_cap(8);
    expect("POST", "/boards/ic/scores",
           "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"b\",\"score\":5},"
           "{\"id\":\"c\",\"score\":5},{\"id\":\"d\",\"score\":5}]}",
           200, NULL);
    char batch[4096] = "{\"entries\":[{\"id\":\"y\",\"score\":2,\"op\":\"incr\"},";
    static const char *const ids[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 10; i++) { /* 10 arrivals back in the group of 5: past the cap of 8 */
        size_t at = strlen(batch);
        snprintf(batch + at, sizeof(batch) - at,
                 "{\"id\":\"%s\",\"score\":6},{\"id\":\"%s\",\"score\":5},", ids[i % 4],
                 ids[i % 4]);
    }
    strcat(batch, "{\"id\":\"z\",\"score\":3,\"op\":\"incr\"}]}");
    static const char *const key[] = {"Idempotency-Key: cmp-1", NULL};
    struct http_result r1, r2;
    char v[16];
    freeReplyObject(redis_admin_cmd(g_admin, "CONFIG RESETSTAT"));
    req("POST", "/boards/ic/scores", batch, NULL, key, 200, NULL, &r1);
    ck_assert_msg(strstr(r1.body, "\"applied\":22,"), "%s", r1.body);
    /* write.lua, compact.lua, write.lua at least: the batch was cut by the full group */
    ck_assert_int_ge(cmdstat_calls("evalsha"), 3);
    req("POST", "/boards/ic/scores", batch, NULL, key, 200, r1.body, &r2);
    ck_assert_ptr_nonnull(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    http_result_free(&r1);
    http_result_free(&r2);
    expect_score("ic", "y", "2"); /* before the cut: applied once, not again after it */
    expect_score("ic", "z", "3"); /* after it: once */
    expect_score("ic", "a", "5");
    /* the group's order: a..d left and came back in turn, the last arrivals ranking last */
    req("GET", "/boards/ic/rank?page=1", NULL, NULL, NULL, 200, NULL, &r1);
    ck_assert_msg(strstr(r1.body, "\"id\":\"z\"") != NULL, "%s", r1.body);
    http_result_free(&r1);
    board_set_tie_cap(0);
}
END_TEST

START_TEST(idempotency_key_checked)
{
    const char *body = "{\"id\":\"a\",\"score\":1}";
    char long_key[200];
    snprintf(long_key, sizeof(long_key), "Idempotency-Key: %0129d", 0);
    const char *const too_long[] = {long_key, NULL};
    expect_error("POST", "/boards/c/scores", body, too_long, 400, "invalid_idempotency_key");
    const char *const spaced[] = {"Idempotency-Key: a b", NULL};
    expect_error("POST", "/boards/c/scores", body, spaced, 400, "invalid_idempotency_key");
    const char *const twice[] = {"Idempotency-Key: a", "Idempotency-Key: b", NULL};
    expect_error("POST", "/boards/c/scores", body, twice, 400, "invalid_idempotency_key");
    snprintf(long_key, sizeof(long_key), "Idempotency-Key: %0128d", 0);
    expect_error("POST", "/boards/c/scores", "{\"id\":\"a\",\"score\":1.5}", too_long, 422,
                 "invalid_score");
    struct http_result r;
    req("POST", "/boards/c/scores", body, NULL, too_long, 200, NULL, &r); /* 128 bytes: fine */
    http_result_free(&r);
    /* an upload is many calls: a key on it is refused, nothing written */
    req("POST", "/boards/nd/scores", "{\"id\":\"a\",\"score\":1}\n", "application/x-ndjson", key_k1,
        400, NULL, &r);
    ck_assert_str_eq(http_error_code(&r), "idempotency_not_supported");
    http_result_free(&r);
    expect_score("nd", "a", "absent");
}
END_TEST

/* The reply is lost (the client closes its connection right after sending): the write still
 * happens once, and the retry with the same key replays it instead of applying it again. */
START_TEST(idempotent_retry_after_lost_reply)
{
    const char *body = "{\"id\":\"z\",\"score\":7,\"op\":\"incr\"}";
    char raw[1024];
    int n =
        snprintf(raw, sizeof(raw),
                 "POST /boards/lost/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TEST_TOKEN
                 "\r\nContent-Type: application/json\r\nIdempotency-Key: lost-1\r\n"
                 "Content-Length: %zu\r\n\r\n%s",
                 strlen(body), body);
    int fd = connect_loopback(g_port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(send(fd, raw, (size_t)n, MSG_NOSIGNAL), n);
    close(fd); /* before any reply */
    char got[64] = "absent";
    for (int i = 0; i < 200 && strcmp(got, "absent") == 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        member_score("lost", "z", got, sizeof(got));
    }
    ck_assert_str_eq(got, "7");
    const char *const key[] = {"Idempotency-Key: lost-1", NULL};
    struct http_result r, r2;
    char v[16];
    req("POST", "/boards/lost/scores", body, NULL, key, 200,
        "{\"id\":\"z\",\"score\":7,\"rank\":1,\"updated\":true,\"prev_score\":null,"
        "\"prev_rank\":null,\"version\":1}",
        &r);
    ck_assert_ptr_nonnull(header_value(&r, "Idempotent-Replayed", v, sizeof(v)));
    req("POST", "/boards/lost/scores", body, NULL, key, 200, r.body, &r2);
    http_result_free(&r);
    http_result_free(&r2);
    expect_score("lost", "z", "7"); /* once */
}
END_TEST

/* A write with `key` that must be applied now, not replayed: 200 without Idempotent-Replayed. */
static void expect_written(const char *path, const char *body, const char *const *key)
{
    struct http_result r;
    char v[16];
    req("POST", path, body, NULL, key, 200, NULL, &r);
    ck_assert_msg(!header_value(&r, "Idempotent-Replayed", v, sizeof(v)),
                  "POST %s %s: replayed (%s), want written", path, body, r.body);
    http_result_free(&r);
}

/* A write with `key` that must be replayed: 200 with Idempotent-Replayed: true. */
static void expect_replayed(const char *path, const char *body, const char *const *key)
{
    struct http_result r;
    char v[16];
    req("POST", path, body, NULL, key, 200, NULL, &r);
    ck_assert_msg(header_value(&r, "Idempotent-Replayed", v, sizeof(v)) && strcmp(v, "true") == 0,
                  "POST %s %s: written (%s), want replayed", path, body, r.body);
    http_result_free(&r);
}

/* An Idempotency-Key belongs to its board's life: after DELETE /boards/{board} the same write
 * with the same key is a new request, whether the write creates the board again (the board
 * not re-created before it) or the board was re-created with another layout. */
START_TEST(idempotent_key_after_delete)
{
    static const char *const key[] = {"Idempotency-Key: del-1", NULL};
    const char *body = "{\"id\":\"a\",\"score\":5,\"op\":\"incr\"}";
    expect_written("/boards/idel/scores", body, key);
    expect_replayed("/boards/idel/scores", body, key);
    expect_score("idel", "a", "5");
    expect("DELETE", "/boards/idel", NULL, 204, NULL);
    /* (a) not re-created: the write creates it again, and writes */
    expect_written("/boards/idel/scores", body, key);
    expect("GET", "/boards/idel", NULL, 200, NULL);
    expect_score("idel", "a", "5");
    expect_replayed("/boards/idel/scores", body, key); /* the new board's record */
    expect_score("idel", "a", "5");
    /* (b) re-created with another layout before the write */
    expect("DELETE", "/boards/idel", NULL, 204, NULL);
    expect("PUT", "/boards/idel", "{\"order\":\"asc\",\"score_decimals\":1}", 201, NULL);
    expect_written("/boards/idel/scores", body, key);
    expect_score("idel", "a", "5");
    expect_replayed("/boards/idel/scores", body, key);
    expect_score("idel", "a", "5");
    /* a batch too */
    static const char *const kb[] = {"Idempotency-Key: del-b", NULL};
    const char *batch = "{\"entries\":[{\"id\":\"b\",\"score\":1,\"op\":\"incr\"},"
                        "{\"id\":\"c\",\"score\":2,\"op\":\"incr\"}]}";
    expect_written("/boards/idel/scores", batch, kb);
    expect("DELETE", "/boards/idel", NULL, 204, NULL);
    expect_written("/boards/idel/scores", batch, kb);
    expect_score("idel", "b", "1");
    expect_score("idel", "c", "2");
}
END_TEST

/* A reset keeps the board's Idempotency-Keys (README: a retry of a write made before the reset
 * is answered from its record and writes nothing: the reset removed it, as every write before
 * it); a layout change (allowed once the board is empty) starts a new life: the key is a new
 * request. */
START_TEST(idempotent_key_after_reset_and_layout_change)
{
    static const char *const key[] = {"Idempotency-Key: rst-1", NULL};
    const char *body = "{\"id\":\"a\",\"score\":3,\"op\":\"incr\"}";
    expect_written("/boards/irst/scores", body, key);
    expect("POST", "/boards/irst/reset", NULL, 204, NULL);
    expect_replayed("/boards/irst/scores", body, key);
    expect_score("irst", "a", "absent"); /* the reset removed it; the retry did not write */
    expect("PUT", "/boards/irst", "{\"page_size\":10}", 200, NULL); /* not the layout */
    expect_replayed("/boards/irst/scores", body, key);
    expect("PUT", "/boards/irst", "{\"order\":\"asc\"}", 200, NULL); /* the layout */
    expect_written("/boards/irst/scores", body, key);
    expect_score("irst", "a", "3");
    expect_replayed("/boards/irst/scores", body, key);
    expect_score("irst", "a", "3");
}
END_TEST

/* The keys of board `board` in Redis (SCAN with its hash tag: one node on a cluster) into
 * keys[0..max); how many. */
static int board_keys_in_redis(const char *board, char (*keys)[BOARD_KEY_LEN], int max)
{
    int n = 0;
    char cursor[32] = "0";
    do {
        redisReply *r =
            redis_admin_cmd(g_admin, "SCAN %s MATCH rankd:{%s}:* COUNT 1000", cursor, board);
        ck_assert_msg(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "SCAN");
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements && n < max; i++)
            snprintf(keys[n++], BOARD_KEY_LEN, "%s", r->element[1]->element[i]->str);
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return n;
}

/* What a board owns (board.h: board_key_specs), on a real Redis: a periodic board written with
 * an Idempotency-Key and read has keys of every kind its writes make; after its DELETE every key
 * left under its name is of a kind the list says the delete makes unreachable (never one it
 * unlinks), and carries a TTL. */
START_TEST(delete_leaves_no_reachable_key)
{
    static const char *const key[] = {"Idempotency-Key: own-1", NULL};
    expect("PUT", "/boards/own", "{\"period\":\"daily\",\"retain\":1}", 201, NULL);
    expect_written("/boards/own/scores", "{\"id\":\"a\",\"score\":5}", key);
    expect("GET", "/boards/own/rank?page=1", NULL, 200, NULL);
    char keys[64][BOARD_KEY_LEN];
    int seen[BOARD_KEY_KINDS] = {0};
    int n = board_keys_in_redis("own", keys, 64);
    for (int i = 0; i < n; i++) {
        int k = board_key_kind_of(keys[i], "rankd", "own");
        ck_assert_msg(k >= 0, "%s: a key of the board outside board_key_specs", keys[i]);
        seen[k] = 1;
    }
    static const enum board_key_kind made[] = {BOARD_KEY_META, BOARD_KEY_INDEX, BOARD_KEY_SET,
                                               BOARD_KEY_DENSE, BOARD_KEY_IDEM};
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
        ck_assert_msg(seen[made[i]], "no %s key before the delete (%d keys)",
                      board_key_specs[made[i]].suffix, n);
    expect("DELETE", "/boards/own", NULL, 204, NULL);
    n = board_keys_in_redis("own", keys, 64);
    for (int i = 0; i < n; i++) {
        int k = board_key_kind_of(keys[i], "rankd", "own");
        ck_assert_msg(k >= 0 && board_key_specs[k].fate != BOARD_GONE_UNLINKED,
                      "%s left by the delete", keys[i]);
        redisReply *t = redis_admin_cmd(g_admin, "PTTL %s", keys[i]);
        ck_assert_msg(t->integer > 0, "%s left by the delete without a TTL (%lld)", keys[i],
                      t->integer);
        freeReplyObject(t);
    }
    /* and unreachable: the same write with the key is a new request on the board made again */
    expect_written("/boards/own/scores", "{\"id\":\"a\",\"score\":5}", key);
}
END_TEST

/* ---------------------------------------------------------------- several boards */

START_TEST(one_entry_many_boards)
{
    expect("PUT", "/boards/daily", "{}", 201, NULL);
    expect("PUT", "/boards/weekly", "{\"score_decimals\":1}", 201, NULL);
    expect("PUT", "/boards/alltime", "{\"order\":\"asc\"}", 201, NULL);
    expect("POST", "/boards/weekly/scores", "{\"id\":\"b\",\"score\":100}", 200, NULL);
    expect("POST", "/boards/alltime/scores", "{\"id\":\"a\",\"score\":3}", 200, NULL);
    expect("POST", "/scores",
           "{\"boards\":[\"daily\",\"weekly\",\"alltime\"],\"id\":\"a\",\"score\":7,"
           "\"op\":\"incr\",\"record\":{\"name\":\"Ann\"}}",
           200,
           "{\"id\":\"a\",\"boards\":["
           "{\"board\":\"daily\",\"score\":7,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":1},"
           "{\"board\":\"weekly\",\"score\":7,\"rank\":2,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":2},"
           "{\"board\":\"alltime\",\"score\":10,\"rank\":1,\"updated\":true,\"prev_score\":3,"
           "\"prev_rank\":1,\"version\":2}]}");
    expect("GET", "/items/a", NULL, 200, "{\"name\":\"Ann\"}");
    /* all or nothing: one unknown board refuses the whole write */
    expect("POST", "/scores",
           "{\"boards\":[\"daily\",\"nope\",\"weekly\"],\"id\":\"a\",\"score\":1,\"op\":\"incr\"}",
           404,
           "{\"error\":{\"code\":\"board_not_found\",\"message\":\"Board 'nope' does not "
           "exist.\"}}");
    expect_score("daily", "a", "7");
    expect_score("weekly", "a", "7");
    expect("GET", "/boards/nope", NULL, 404, NULL);
    /* a score one board's layout cannot hold refuses the write on every board */
    expect("POST", "/scores", "{\"boards\":[\"daily\",\"weekly\"],\"id\":\"a\",\"score\":0.5}", 422,
           "{\"error\":{\"code\":\"invalid_score\",\"message\":\"board 'daily': score 0.5 has more "
           "fractional digits than this board keeps (score_decimals=0).\"}}");
    /* an incr whose result leaves one board's range: nothing anywhere */
    expect("POST", "/scores",
           "{\"boards\":[\"daily\",\"alltime\"],\"id\":\"a\",\"score\":4294967290,\"op\":\"incr\"}",
           422, NULL);
    expect_score("daily", "a", "7");
    expect_score("alltime", "a", "10");
    expect_error("POST", "/scores", "{\"boards\":[],\"id\":\"a\",\"score\":1}", NULL, 400,
                 "invalid_boards");
    expect_error("POST", "/scores", "{\"boards\":[\"a\",\"a\"],\"id\":\"a\",\"score\":1}", NULL,
                 400, "invalid_boards");
    expect_error("POST", "/scores", "{\"boards\":[\"a b\"],\"id\":\"a\",\"score\":1}", NULL, 400,
                 "invalid_boards");
    expect_error("POST", "/scores", "{\"id\":\"a\",\"score\":1}", NULL, 400, "invalid_boards");
    /* idempotent across boards: replayed whole */
    static const char *const key[] = {"Idempotency-Key: mb-1", NULL};
    const char *body =
        "{\"boards\":[\"daily\",\"weekly\"],\"id\":\"q\",\"score\":2,\"op\":\"incr\"}";
    struct http_result r1, r2;
    char v[16];
    req("POST", "/scores", body, NULL, key, 200, NULL, &r1);
    req("POST", "/scores", body, NULL, key, 200, r1.body, &r2);
    ck_assert_ptr_nonnull(header_value(&r2, "Idempotent-Replayed", v, sizeof(v)));
    http_result_free(&r1);
    http_result_free(&r2);
    expect_score("daily", "q", "2");
    expect_score("weekly", "q", "2");
    /* the boards are part of the request */
    expect_error("POST", "/scores",
                 "{\"boards\":[\"weekly\",\"daily\"],\"id\":\"q\",\"score\":2,\"op\":\"incr\"}",
                 key, 422, "idempotency_key_reused");
}
END_TEST

/* POST /scores judges every board by its own life: after one of its boards was deleted the
 * same request with the same key is refused as a write to an unknown board (404, nothing
 * written), and once that board is re-created it is written there while the other board, whose
 * record is of its own life, is answered from it (not applied twice). */
START_TEST(idempotent_many_boards_after_delete)
{
    expect("PUT", "/boards/imb1", "{}", 201, NULL);
    expect("PUT", "/boards/imb2", "{}", 201, NULL);
    static const char *const key[] = {"Idempotency-Key: mbd-1", NULL};
    const char *body = "{\"boards\":[\"imb1\",\"imb2\"],\"id\":\"q\",\"score\":2,\"op\":\"incr\"}";
    expect_written("/scores", body, key);
    expect_replayed("/scores", body, key);
    expect("DELETE", "/boards/imb1", NULL, 204, NULL);
    expect_error("POST", "/scores", body, key, 404, "board_not_found");
    expect("GET", "/boards/imb1", NULL, 404, NULL);
    expect_score("imb2", "q", "2");
    expect("PUT", "/boards/imb1", "{\"score_decimals\":2}", 201, NULL);
    expect_written("/scores", body, key);
    expect_score("imb1", "q", "2");
    expect_score("imb2", "q", "2"); /* once on the board that kept its life */
    expect_replayed("/scores", body, key);
    expect_score("imb1", "q", "2");
    expect_score("imb2", "q", "2");
}
END_TEST

/* ---------------------------------------------------------------- keep the top N */

static long long board_total(const char *board)
{
    char path[100];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    const cJSON *t = cJSON_GetObjectItem(r.json, "total");
    ck_assert_msg(r.status == 200 && cJSON_IsNumber(t), "%s", r.body);
    long long n = (long long)t->valuedouble;
    http_result_free(&r);
    return n;
}

START_TEST(keep_top_n)
{
    struct http_result r;
    req("PUT", "/boards/top", "{\"max_members\":3}", NULL, NULL, 201, NULL, &r);
    ck_assert_msg(strstr(r.body, "\"max_members\":3,\"version\":0,"), "%s", r.body);
    http_result_free(&r);
    /* a batch bigger than N: the board keeps the best 3, the others' ranks are null */
    expect(
        "POST", "/boards/top/scores",
        "{\"entries\":[{\"id\":\"m1\",\"score\":1,\"record\":{\"n\":1}},{\"id\":\"m2\",\"score\":2}"
        ","
        "{\"id\":\"m3\",\"score\":3},{\"id\":\"m4\",\"score\":4},{\"id\":\"m5\",\"score\":5}]}",
        200,
        "{\"applied\":5,\"rejected\":[],\"results\":[{\"score\":1,\"rank\":null,\"updated\":true},"
        "{\"score\":2,\"rank\":null,\"updated\":true},{\"score\":3,\"rank\":3,\"updated\":true},"
        "{\"score\":4,\"rank\":2,\"updated\":true},{\"score\":5,\"rank\":1,\"updated\":true}],"
        "\"version\":1}");
    ck_assert_int_eq(board_total("top"), 3);
    expect("GET", "/items/m1", NULL, 200, "{\"n\":1}"); /* records stay: they are shared */
    expect_score("top", "m1", "absent");
    /* a write below the cut is applied and removed at once */
    expect("POST", "/boards/top/scores", "{\"id\":\"m6\",\"score\":0}", 200,
           "{\"id\":\"m6\",\"score\":0,\"rank\":null,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":2}");
    expect("POST", "/boards/top/scores", "{\"id\":\"m1\",\"score\":10}", 200,
           "{\"id\":\"m1\",\"score\":10,\"rank\":1,\"updated\":true,\"prev_score\":null,"
           "\"prev_rank\":null,\"version\":3}");
    ck_assert_int_eq(board_total("top"), 3);
    expect_score("top", "m3", "absent");
    expect_score("top", "m4", "4");
    /* an upload trims chunk by chunk */
    char nd[2000] = "";
    for (int i = 0; i < 20; i++) {
        size_t at = strlen(nd);
        snprintf(nd + at, sizeof(nd) - at, "{\"id\":\"u%d\",\"score\":%d}\n", i, 100 + i);
    }
    req("POST", "/boards/top/scores", nd, "application/x-ndjson", NULL, 200, NULL, &r);
    http_result_free(&r);
    ck_assert_int_eq(board_total("top"), 3);
    expect_score("top", "u19", "119");
    expect_score("top", "u17", "117");
    expect_score("top", "u16", "absent");

    /* a lowered max_members: no PUT trims, and each write removes at most its entries plus 64 */
    char batch[8000] = "{\"entries\":[";
    for (int i = 0; i < 100; i++) {
        size_t at = strlen(batch);
        snprintf(batch + at, sizeof(batch) - at, "%s{\"id\":\"b%d\",\"score\":%d}", i ? "," : "", i,
                 i);
    }
    strcat(batch, "]}");
    expect("POST", "/boards/lower/scores", batch, 200, NULL);
    expect("PUT", "/boards/lower", "{\"max_members\":3}", 200, NULL);
    ck_assert_int_eq(board_total("lower"), 100);
    expect("POST", "/boards/lower/scores", "{\"id\":\"x\",\"score\":1000}", 200, NULL);
    ck_assert_int_eq(board_total("lower"), 101 - 65);
    expect("POST", "/boards/lower/scores", "{\"id\":\"y\",\"score\":1001}", 200, NULL);
    ck_assert_int_eq(board_total("lower"), 3);
    expect_score("lower", "b99", "99");
    expect_score("lower", "b98", "absent");
    /* 0: no limit */
    req("PUT", "/boards/lower", "{\"max_members\":0}", NULL, NULL, 200, NULL, &r);
    ck_assert_msg(strstr(r.body, "\"max_members\":null"), "%s", r.body);
    http_result_free(&r);
    expect("POST", "/boards/lower/scores", "{\"id\":\"z\",\"score\":1}", 200, NULL);
    ck_assert_int_eq(board_total("lower"), 4);
    expect_error("PUT", "/boards/lower", "{\"max_members\":-1}", NULL, 400, "invalid_field");
    expect_error("PUT", "/boards/lower", "{\"max_members\":100000001}", NULL, 400, "invalid_field");
}
END_TEST

/* ---------------------------------------------------------------- read your writes */

/* The ids of a page's items, "a,b,c", and its X-Cache. */
static void page_ids(const char *path, char *ids, size_t cap, char *cache, size_t ccap)
{
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld %s", path, r.status, r.body);
    ids[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
    {
        size_t at = strlen(ids);
        snprintf(ids + at, cap - at, "%s%s", at ? "," : "",
                 cJSON_GetObjectItem(it, "id")->valuestring);
    }
    header_value(&r, "X-Cache", cache, ccap);
    http_result_free(&r);
}

struct get_thread {
    pthread_t t;
    const char *path;
    char ids[200], cache[16];
};

static void *get_main(void *arg)
{
    struct get_thread *g = arg;
    page_ids(g->path, g->ids, sizeof(g->ids), g->cache, sizeof(g->cache));
    return NULL;
}

/* A write, then its page with ?min_version=: never the page cached before the write. Without
 * min_version the same read is answered from the cache, without the write (which is what the
 * feature is for: this test fails there without it). */
START_TEST(min_version_after_write)
{
    expect("PUT", "/boards/mv", "{\"page_ttl_ms\":60000}", 201, NULL);
    expect("POST", "/boards/mv/scores",
           "{\"entries\":[{\"id\":\"a\",\"score\":10},{\"id\":\"b\",\"score\":5}]}", 200, NULL);
    char ids[200], cache[16];
    page_ids("/boards/mv/rank?page=1", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(ids, "a,b");
    page_ids("/boards/mv/rank?page=1", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(cache, "hit");
    struct http_result r;
    req("POST", "/boards/mv/scores", "{\"id\":\"c\",\"score\":20}", NULL, NULL, 200, NULL, &r);
    ck_assert_msg(strstr(r.body, "\"version\":2}"), "%s", r.body);
    http_result_free(&r);
    /* without min_version: the page cached before the write, as the freshness contract allows */
    page_ids("/boards/mv/rank?page=1", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(ids, "a,b");
    ck_assert_str_eq(cache, "hit");
    /* with it: computed (a miss), and the write is there; concurrent readers share one
     * computation (one ZRANGE in Redis for all of them) */
    freeReplyObject(redis_admin_cmd(g_admin, "CONFIG RESETSTAT"));
    struct get_thread g[8];
    for (int i = 0; i < 8; i++) {
        g[i].path = "/boards/mv/rank?page=1&min_version=2";
        ck_assert_int_eq(pthread_create(&g[i].t, NULL, get_main, &g[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(g[i].t, NULL);
        ck_assert_str_eq(g[i].ids, "c,a,b");
    }
    ck_assert_int_eq(cmdstat_calls("zrange"), 1);
    /* the page computed for them is the cached page now, for everyone */
    page_ids("/boards/mv/rank?page=1", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(ids, "c,a,b");
    ck_assert_str_eq(cache, "hit");
    page_ids("/boards/mv/rank?page=1&min_version=2", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(cache, "hit");
    page_ids("/boards/mv/rank?page=1&min_version=1", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(cache, "hit");
    /* the value says what it was computed at */
    redisReply *keys = redis_admin_cmd(g_admin, "KEYS rankd:{mv}:page:*");
    ck_assert_uint_eq(keys->elements, 1);
    redisReply *v = redis_admin_cmd(g_admin, "GET %s", keys->element[0]->str);
    long long gen = 0, stamp = 0;
    ck_assert_msg(sscanf(v->str, "rankd3 %lld %lld ", &gen, &stamp) == 2 && stamp == 2, "%.80s",
                  v->str);
    freeReplyObject(v);
    freeReplyObject(keys);
    /* a counter the board has not reached (a board made again): computed for the request */
    page_ids("/boards/mv/rank?page=1&min_version=99", ids, sizeof(ids), cache, sizeof(cache));
    ck_assert_str_eq(ids, "c,a,b");
    ck_assert_str_eq(cache, "miss");
    expect_error("GET", "/boards/mv/rank?min_version=0", NULL, NULL, 400, "invalid_parameter");
    expect_error("GET", "/boards/mv/rank?min_version=x", NULL, NULL, 400, "invalid_parameter");
    expect_error("GET", "/boards/mv/rank?min_version=1&min_version=2", NULL, NULL, 400,
                 "invalid_parameter");
    /* GET /boards/{board} says where the counter is */
    req("GET", "/boards/mv", NULL, NULL, NULL, 200, NULL, &r);
    ck_assert_msg(strstr(r.body, "\"version\":2,"), "%s", r.body);
    http_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- what a write costs Redis */

/* The commands scripts ran (MONITOR's `[0 lua]` lines) during one request: their number, their
 * verbs (" VERB KEY" each, into verbs) and the request's body (into r, the caller's). */
static int script_commands(const char *path, const char *body, const char *ctype, long status,
                           struct http_result *r, char *verbs, size_t len)
{
    redisContext *mon = mon_start(g_redis.port);
    req("POST", path, body, ctype, NULL, status, NULL, r);
    int calls;
    return mon_scripts(g_admin, mon, verbs, len, NULL, 0, &calls);
}

/* How many of the commands in `verbs` are " VERB KEY" (key NULL: any key). */
static int verb_count(const char *verbs, const char *verb, const char *key)
{
    char pat[160];
    snprintf(pat, sizeof(pat), " %s %s", verb, key ? key : "");
    int n = 0;
    for (const char *p = verbs; (p = strstr(p, pat)); p++)
        if (key || p[strlen(pat)] != ' ')
            n++;
    return n;
}

/* A single write runs only the commands its semantics need inside its script: a score moving
 * into a group that has members leaves the distinct scores' set alone (the key is in it), a
 * write that changes nothing reads the member's rank once, and a score moving into a group no
 * member holds reads no tie group. */
START_TEST(single_write_script_commands)
{
    expect("PUT", "/boards/sw", "{\"page_ttl_ms\":0}", 201, NULL);
    it_post_score("sw", "{\"id\":\"a\",\"score\":10}");
    it_post_score("sw", "{\"id\":\"b\",\"score\":20}");
    it_post_score("sw", "{\"id\":\"c\",\"score\":30,\"record\":{\"n\":1}}");
    char verbs[2048];
    struct http_result r;
    /* c: 30 -> 10, the group of a (tiebreak first: after a), its old group left empty */
    int n = script_commands("/boards/sw/scores", "{\"id\":\"c\",\"score\":10,\"record\":{\"n\":2}}",
                            NULL, 200, &r, verbs, sizeof(verbs));
    fprintf(stderr, "writes: a single write into a held score: %d commands:%s\n", n, verbs);
    ck_assert_str_eq(r.body, "{\"id\":\"c\",\"score\":10,\"rank\":3,\"updated\":true,"
                             "\"prev_score\":30,\"prev_rank\":1,\"version\":4}");
    http_result_free(&r);
    ck_assert_msg(verb_count(verbs, "ZADD", "rankd:{sw}:dense") == 0,
                  "the distinct scores were written for a key they hold:%s", verbs);
    ck_assert_msg(verb_count(verbs, "ZREM", "rankd:{sw}:dense") == 1, "%s", verbs);
    ck_assert_msg(n <= 11, "%d commands:%s", n, verbs);
    expect("GET", "/boards/sw/rank", NULL, 200, NULL);
    /* a best that does not beat a's 10: nothing written, the rank read once */
    n = script_commands("/boards/sw/scores", "{\"id\":\"a\",\"score\":5,\"op\":\"best\"}", NULL,
                        200, &r, verbs, sizeof(verbs));
    fprintf(stderr, "writes: a single write that changes nothing: %d commands:%s\n", n, verbs);
    ck_assert_str_eq(r.body, "{\"id\":\"a\",\"score\":10,\"rank\":2,\"updated\":false,"
                             "\"prev_score\":10,\"prev_rank\":2,\"version\":5}");
    http_result_free(&r);
    ck_assert_msg(verb_count(verbs, "ZRANK", NULL) == 1 && n <= 4, "%d commands:%s", n, verbs);
    struct http_result pg;
    req("GET", "/boards/sw/rank", NULL, NULL, NULL, 200, NULL, &pg);
    const char *ia = strstr(pg.body, "\"id\":\"a\""), *ic = strstr(pg.body, "\"id\":\"c\"");
    ck_assert_msg(ia && ic && ia < ic && strstr(pg.body, "\"id\":\"b\"") < ia, "%s", pg.body);
    http_result_free(&pg);
    redisReply *d = redis_admin_cmd(g_admin, "ZRANGE rankd:{sw}:dense 0 -1");
    ck_assert_msg(d->elements == 2 && strcmp(d->element[0]->str, "-20") == 0 &&
                      strcmp(d->element[1]->str, "-10") == 0,
                  "the distinct scores: %zu", d->elements);
    freeReplyObject(d);
    /* b: 20 -> 50, a score no member holds: the distinct scores say so and that they are kept
     * in one ZMSCORE (with b's old key), so no tie group is read and no EXISTS asked */
    n = script_commands("/boards/sw/scores", "{\"id\":\"b\",\"score\":50}", NULL, 200, &r, verbs,
                        sizeof(verbs));
    fprintf(stderr, "writes: a single write into a new score: %d commands:%s\n", n, verbs);
    ck_assert_str_eq(r.body, "{\"id\":\"b\",\"score\":50,\"rank\":1,\"updated\":true,"
                             "\"prev_score\":20,\"prev_rank\":1,\"version\":6}");
    http_result_free(&r);
    ck_assert_msg(verb_count(verbs, "ZRANGE", NULL) == 0 && verb_count(verbs, "EXISTS", NULL) == 0,
                  "a tie group read or the distinct scores' EXISTS:%s", verbs);
    ck_assert_msg(verb_count(verbs, "ZMSCORE", "rankd:{sw}:dense") == 1 && n <= 10,
                  "%d commands:%s", n, verbs);
    d = redis_admin_cmd(g_admin, "ZRANGE rankd:{sw}:dense 0 -1");
    ck_assert_msg(d->elements == 2 && strcmp(d->element[0]->str, "-50") == 0 &&
                      strcmp(d->element[1]->str, "-10") == 0,
                  "the distinct scores: %zu", d->elements);
    freeReplyObject(d);
}
END_TEST

/* An NDJSON chunk reads the tie groups its new scores enter at once (the distinct scores say
 * which have members, and whether they are kept), not one command per score: 9 commands for
 * 105 lines; an entry refused alone (an incr past the range) is still reported on its line, and
 * the others applied in order. */
START_TEST(import_chunk_script_commands)
{
    expect("PUT", "/boards/ic", "{\"page_ttl_ms\":0}", 201, NULL);
    it_post_score("ic", "{\"id\":\"old\",\"score\":2}");
    it_post_score("ic", "{\"id\":\"top\",\"score\":4294967290}");
    size_t cap = 64 * 200, at = 0;
    char *nd = malloc(cap);
    ck_assert_ptr_nonnull(nd);
    for (int i = 0; i < 100; i++) /* 100 new scores, then 3 in the group of `old` */
        at += (size_t)snprintf(nd + at, cap - at,
                               "{\"id\":\"n%d\",\"score\":%d,\"record\":{\"i\":%d}}\n", i, 1000 + i,
                               i);
    for (int i = 0; i < 3; i++)
        at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"t%d\",\"score\":2}\n", i);
    at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"top\",\"score\":100,\"op\":\"incr\"}\n");
    at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"last\",\"score\":7}\n");
    char verbs[8192];
    struct http_result r;
    int n = script_commands("/boards/ic/scores", nd, "application/x-ndjson", 200, &r, verbs,
                            sizeof(verbs));
    free(nd);
    fprintf(stderr, "writes: an import chunk of 105 lines: %d commands:%s\n", n, verbs);
    ck_assert_msg(
        strstr(r.body, "\"applied\":104,\"rejected_total\":1,\"rejected\":[{\"line\":104,"), "%s",
        r.body);
    http_result_free(&r);
    ck_assert_msg(verb_count(verbs, "ZRANGE", NULL) <= 1, "a tie group read per score:%s", verbs);
    /* `top` held a score before the chunk: the distinct scores' ZMSCORE asks for its key too,
     * and so says they are kept without an EXISTS */
    ck_assert_msg(verb_count(verbs, "EXISTS", NULL) == 0, "%s", verbs);
    ck_assert_msg(n <= 9, "%d commands:%s", n, verbs);
    /* in order: the group of 2 is old, t0, t1, t2 (tiebreak first), top kept its score */
    expect_score("ic", "top", "4294967290");
    expect_score("ic", "n99", "1099");
    struct http_result pg;
    req("GET", "/boards/ic/rank?page=6", NULL, NULL, NULL, 200, NULL, &pg);
    const char *o = strstr(pg.body, "\"id\":\"old\""), *t0 = strstr(pg.body, "\"id\":\"t0\""),
               *t2 = strstr(pg.body, "\"id\":\"t2\"");
    ck_assert_msg(o && t0 && t2 && o < t0 && t0 < t2, "%s", pg.body);
    http_result_free(&pg);
    redisReply *d = redis_admin_cmd(g_admin, "ZCARD rankd:{ic}:dense");
    ck_assert_int_eq(d->integer, 103); /* 100 new, 2, 7 and top's */
    freeReplyObject(d);
    redisReply *rec = redis_admin_cmd(g_admin, "HGET rankd:items n42");
    ck_assert_str_eq(rec->str, "{\"i\":42}");
    freeReplyObject(rec);
}
END_TEST

/* An upload's commands as MONITOR saw them: the script's own (their number, verbs into verbs)
 * and the argument count of each EVALSHA (into argc[0..*calls)), during one NDJSON request. */
static int upload_commands(const char *path, const char *body, struct http_result *r, char *verbs,
                           size_t len, int *argc, int *calls)
{
    redisContext *mon = mon_start(g_redis.port);
    req("POST", path, body, "application/x-ndjson", NULL, 200, NULL, r);
    return mon_scripts(g_admin, mon, verbs, len, argc, 8, calls);
}

/* ZMSCORE of ids on board b's set: the stored values as integers into v[]. */
static void stored_of(const char *b, const char *const *ids, int n, long long *v)
{
    for (int i = 0; i < n; i++) {
        redisReply *x = redis_admin_cmd(g_admin, "ZSCORE rankd:{%s}:z %s", b, ids[i]);
        ck_assert_msg(x->type == REDIS_REPLY_STRING, "%s has no score", ids[i]);
        v[i] = strtoll(x->str, NULL, 10);
        freeReplyObject(x);
    }
}

/* The EVALSHA of a chunk of n lines: 3 + 9 keys + 12 + 16 header values, then the general
 * layout's 4 per line, or the short one's 2 + 3 per line + 1 per distinct key + 2 per key that
 * continues from the chunk before. */
#define CHUNK_HEAD (3 + 9 + 12 + 16)

/* An upload of `set` lines goes in write.lua's short layout (stored values numbered by rankd per
 * key, checked in Redis) with exactly the general layout's results: a group of equal scores
 * that spans two chunks is continued in arrival order (one ZRANGE), and where rankd's guess is
 * wrong (a member already on the board, a group it believed empty) the chunk is handled as in
 * the general layout, and the upload's later chunks are sent in it. */
START_TEST(import_short_layout)
{
    expect("PUT", "/boards/sl", "{\"page_ttl_ms\":0}", 201, NULL);
    size_t cap = 64 * 800, at = 0;
    char *nd = malloc(cap);
    ck_assert_ptr_nonnull(nd);
    /* 400 lines, scores 1000 - (i + 1) / 3: 134 keys, key 100 (score 900) on lines 299-301 */
    for (int i = 0; i < 400; i++)
        at += (size_t)snprintf(nd + at, cap - at,
                               "{\"id\":\"s%d\",\"score\":%d,\"record\":{\"i\":%d}}\n", i,
                               1000 - (i + 1) / 3, i);
    char verbs[8192];
    int argc[8], calls = 0;
    struct http_result r;
    int n = upload_commands("/boards/sl/scores", nd, &r, verbs, sizeof(verbs), argc, &calls);
    fprintf(stderr, "writes: a sorted upload of 400 lines: %d commands:%s; EVALSHA %d, %d args\n",
            n, verbs, calls > 0 ? argc[0] : 0, calls > 1 ? argc[1] : 0);
    ck_assert_msg(strstr(r.body, "\"applied\":400,\"rejected_total\":0"), "%s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(calls, 2);
    ck_assert_int_eq(argc[0], CHUNK_HEAD + 2 + 3 * 300 + 101);
    ck_assert_int_eq(argc[1], CHUNK_HEAD + 2 + 3 * 100 + 34 + 2);
    ck_assert_msg(verb_count(verbs, "ZRANGE", NULL) == 1, "one group continued:%s", verbs);
    ck_assert_msg(n <= 22, "%d commands:%s", n, verbs);
    const char *g100[] = {"s299", "s300", "s301"};
    long long v[3];
    stored_of("sl", g100, 3, v);
    ck_assert_msg(v[1] == v[0] + 1 && v[2] == v[0] + 2, "%lld %lld %lld", v[0], v[1], v[2]);
    redisReply *d = redis_admin_cmd(g_admin, "ZCARD rankd:{sl}:dense");
    ck_assert_int_eq(d->integer, 134);
    freeReplyObject(d);
    d = redis_admin_cmd(g_admin, "HGET rankd:items s350");
    ck_assert_str_eq(d->str, "{\"i\":350}");
    freeReplyObject(d);
    expect_score("sl", "s399", "867");

    /* s5 is on the board: the first chunk (s5 and 299 lines into score 7) is handled as in the
     * general layout; the third goes in the general layout */
    at = 0;
    at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"s5\",\"score\":7}\n");
    for (int i = 1; i < 600; i++)
        at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"b%d\",\"score\":7}\n", i);
    for (int i = 0; i < 50; i++)
        at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"c%d\",\"score\":3}\n", i);
    n = upload_commands("/boards/sl/scores", nd, &r, verbs, sizeof(verbs), argc, &calls);
    fprintf(stderr,
            "writes: an upload whose first chunk lapses: %d commands:%s; EVALSHA %d, %d, %d args\n",
            n, verbs, argc[0], calls > 1 ? argc[1] : 0, calls > 2 ? argc[2] : 0);
    ck_assert_msg(strstr(r.body, "\"applied\":650,\"rejected_total\":0"), "%s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(calls, 3);
    ck_assert_int_eq(argc[0], CHUNK_HEAD + 2 + 3 * 300 + 1);
    /* the second: short when sent while the first ran, else general (the first's reply came) */
    ck_assert_msg(argc[1] == CHUNK_HEAD + 2 + 3 * 300 + 1 + 2 || argc[1] == CHUNK_HEAD + 4 * 300,
                  "%d", argc[1]);
    ck_assert_int_eq(argc[2], CHUNK_HEAD + 4 * 50);
    const char *g7[] = {"s5", "b1", "b299", "b300", "b599"};
    long long w[5];
    stored_of("sl", g7, 5, w);
    for (int i = 1; i < 5; i++)
        ck_assert_msg(w[i] == w[0] + (i == 1   ? 1
                                      : i == 2 ? 299
                                      : i == 3 ? 300
                                               : 599),
                      "key 7 out of arrival order: %s %lld after %lld", g7[i], w[i], w[0]);
    expect_score("sl", "s5", "7");
    expect_score("sl", "c49", "3");
    /* s6 and s7 still hold s5's old key (998); 7 and 3 are new */
    d = redis_admin_cmd(g_admin, "ZCARD rankd:{sl}:dense");
    ck_assert_int_eq(d->integer, 136);
    freeReplyObject(d);

    /* a key rankd believes empty has members (900: s299-s301): handled as in the general layout,
     * d0 after them */
    n = upload_commands("/boards/sl/scores", "{\"id\":\"d0\",\"score\":900}\n", &r, verbs,
                        sizeof(verbs), argc, &calls);
    ck_assert_msg(strstr(r.body, "\"applied\":1,\"rejected_total\":0"), "%s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(argc[0], CHUNK_HEAD + 2 + 3 + 1);
    const char *g900[] = {"s299", "d0"};
    stored_of("sl", g900, 2, v);
    ck_assert_int_eq(v[1], v[0] + 3);

    /* tiebreak last: each key numbered down from the top, a later arrival first; key 900 spans
     * the two chunks again */
    expect("PUT", "/boards/sll", "{\"page_ttl_ms\":0,\"tiebreak\":\"last\"}", 201, NULL);
    at = 0;
    for (int i = 0; i < 400; i++)
        at += (size_t)snprintf(nd + at, cap - at, "{\"id\":\"s%d\",\"score\":%d}\n", i,
                               1000 - (i + 1) / 3);
    n = upload_commands("/boards/sll/scores", nd, &r, verbs, sizeof(verbs), argc, &calls);
    ck_assert_msg(strstr(r.body, "\"applied\":400,\"rejected_total\":0"), "%s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(calls, 2);
    ck_assert_int_eq(argc[1], CHUNK_HEAD + 2 + 3 * 100 + 34 + 2);
    ck_assert_msg(verb_count(verbs, "ZRANGE", NULL) == 1, "one group continued:%s", verbs);
    stored_of("sll", g100, 3, v);
    ck_assert_msg(v[1] == v[0] - 1 && v[2] == v[0] - 2, "%lld %lld %lld", v[0], v[1], v[2]);
    redisReply *top = redis_admin_cmd(g_admin, "ZRANGE rankd:{sll}:z 0 0");
    ck_assert_str_eq(top->element[0]->str, "s1"); /* key 1000: s0 and s1, s1 the later */
    freeReplyObject(top);
    free(nd);
}
END_TEST

Suite *writes_suite(void)
{
    const struct it_case cases[] = {
        {"prev_and_batch_results", prev_and_batch_results},
        {"incr_floor_ceiling", incr_floor_ceiling},
        {"idempotent_replay", idempotent_replay},
        {"idempotency_key_checked", idempotency_key_checked},
        {"idempotent_batch_across_compaction", idempotent_batch_across_compaction},
        {"idempotent_retry_after_lost_reply", idempotent_retry_after_lost_reply},
        {"idempotent_key_after_delete", idempotent_key_after_delete},
        {"idempotent_key_after_reset_and_layout_change",
         idempotent_key_after_reset_and_layout_change},
        {"delete_leaves_no_reachable_key", delete_leaves_no_reachable_key},
        {"one_entry_many_boards", one_entry_many_boards},
        {"idempotent_many_boards_after_delete", idempotent_many_boards_after_delete},
        {"keep_top_n", keep_top_n},
        {"min_version_after_write", min_version_after_write},
        {"single_write_script_commands", single_write_script_commands},
        {"import_chunk_script_commands", import_chunk_script_commands},
        {"import_short_layout", import_short_layout},
    };
    Suite *s = it_suite("writes", cases, sizeof(cases) / sizeof(cases[0]));
    writes_short_add(s);
    return s;
}
