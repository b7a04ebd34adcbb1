/*
 * test_updated.c -- each entry's updated_at on a board with "track_updated_at": true, over real
 * HTTP against a real Redis, on a clock the test sets (fixture_set_clock):
 *   1. the setting: off by default (no updated_at, no hash), a bool, a shaping setting (refused
 *      while the board has members, like the layout);
 *   2. updated_at moves only when the score does, for each op: set (same score: no), best (a
 *      worse score: no), incr (0: no), batches, NDJSON imports, a member given twice in a batch;
 *   3. what removes members removes their times: member delete, trim, max_members, reset, board
 *      delete, a period swept (no key of the board is left).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "suites.h"

static cJSON *req_json(const char *method, const char *path, const char *body, long want)
{
    struct http_result r;
    ck_assert_int_eq(
        http_req(g_port, method, path, body, body ? strlen(body) : 0, NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == want, "%s %s %.200s -> %ld %.500s; want %ld", method, path,
                  body ? body : "", r.status, r.body, want);
    cJSON *doc = r.json;
    r.json = NULL;
    http_result_free(&r);
    return doc;
}

/* The member's updated_at: its value (ms), -1 for null, -2 when the field is absent. */
static long long updated_of(const char *board, const char *id)
{
    char path[256];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    cJSON *d = req_json("GET", path, NULL, 200);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(d, "updated_at");
    long long v = !u ? -2 : cJSON_IsNull(u) ? -1 : (long long)u->valuedouble;
    cJSON_Delete(d);
    return v;
}

/* ms since the epoch of a "2036-11-30T12:00:00Z" time */
static long long ms_of(const char *iso)
{
    struct tm tm = {0};
    int ms = 0;
    ck_assert(sscanf(iso, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) >= 6);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (long long)timegm(&tm) * 1000 + ms;
}

/* Write `body` to board b at time `iso`. */
static void write_at(const char *iso, const char *b, const char *body)
{
    fixture_set_clock(iso);
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", b);
    cJSON_Delete(req_json("POST", path, body, 200));
}

/* The keys of board b in the test Redis (KEYS on a test database of a few keys). */
static long long keys_of(const char *b, const char *kind)
{
    redisReply *r = redis_admin_cmd(g_admin, "KEYS rankd:{%s}:%s*", b, kind);
    long long n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

START_TEST(test_updated_setting)
{
    cJSON *d = req_json("PUT", "/boards/u0", "{}", 201);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "track_updated_at")));
    cJSON_Delete(d);
    it_post_score("u0", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u0", "a"), -2); /* not tracked: no field */
    ck_assert_int_eq(keys_of("u0", "upd"), 0);
    ck_assert_int_eq(it_status("PUT", "/boards/u0", "{\"track_updated_at\":1}"), 400);
    /* shaping: refused while the board has members */
    ck_assert_int_eq(it_status("PUT", "/boards/u0", "{\"track_updated_at\":true}"), 409);
    ck_assert_int_eq(it_status("DELETE", "/boards/u0/members/a", NULL), 204);
    d = req_json("PUT", "/boards/u0", "{\"track_updated_at\":true}", 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "track_updated_at")));
    cJSON_Delete(d);
    write_at("2036-11-30T12:00:00Z", "u0", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u0", "a"), ms_of("2036-11-30T12:00:00Z"));
    ck_assert_int_eq(keys_of("u0", "upd"), 1);
    /* a setting a write's view of the board did not know: the write learns it */
    ck_assert_int_eq(it_status("PUT", "/boards/u1", "{\"track_updated_at\":true}"), 201);
    write_at("2036-11-30T12:00:01Z", "u1", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u1", "a"), ms_of("2036-11-30T12:00:01Z"));
    fixture_set_clock(NULL);
}
END_TEST

START_TEST(test_updated_moves_with_the_score)
{
    ck_assert_int_eq(it_status("PUT", "/boards/ut", "{\"track_updated_at\":true}"), 201);
    const char *t0 = "2036-11-30T12:00:00Z", *t1 = "2036-11-30T12:00:01.250Z",
               *t2 = "2036-11-30T12:00:02Z", *t3 = "2036-11-30T12:00:03Z";
    write_at(t0, "ut", "{\"id\":\"s\",\"score\":10}");
    write_at(t0, "ut", "{\"id\":\"b\",\"score\":10,\"op\":\"best\"}");
    write_at(t0, "ut", "{\"id\":\"i\",\"score\":10,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t0));
    ck_assert_int_eq(updated_of("ut", "b"), ms_of(t0));
    ck_assert_int_eq(updated_of("ut", "i"), ms_of(t0));
    /* no change of score: set to the same score, best with a worse one, incr by 0 */
    write_at(t1, "ut", "{\"id\":\"s\",\"score\":10}");
    write_at(t1, "ut", "{\"id\":\"b\",\"score\":3,\"op\":\"best\"}");
    write_at(t1, "ut", "{\"id\":\"i\",\"score\":0,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t0));
    ck_assert_int_eq(updated_of("ut", "b"), ms_of(t0));
    ck_assert_int_eq(updated_of("ut", "i"), ms_of(t0));
    /* a record alone changes no score either */
    write_at(t1, "ut", "{\"id\":\"s\",\"score\":10,\"record\":{\"x\":1}}");
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t0));
    /* a change: each op */
    write_at(t2, "ut", "{\"id\":\"s\",\"score\":11}");
    write_at(t2, "ut", "{\"id\":\"b\",\"score\":12,\"op\":\"best\"}");
    write_at(t2, "ut", "{\"id\":\"i\",\"score\":-1,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t2));
    ck_assert_int_eq(updated_of("ut", "b"), ms_of(t2));
    ck_assert_int_eq(updated_of("ut", "i"), ms_of(t2));
    /* a batch: only the entries that change; a member twice, back to where it was (it moved) */
    write_at(t3, "ut",
             "{\"entries\":[{\"id\":\"s\",\"score\":11},{\"id\":\"b\",\"score\":13,\"op\":"
             "\"best\"},{\"id\":\"i\",\"score\":1,\"op\":\"incr\"},{\"id\":\"i\",\"score\":-1,"
             "\"op\":\"incr\"},{\"id\":\"n\",\"score\":5}]}");
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t2));
    ck_assert_int_eq(updated_of("ut", "b"), ms_of(t3));
    ck_assert_int_eq(updated_of("ut", "i"), ms_of(t3));
    ck_assert_int_eq(updated_of("ut", "n"), ms_of(t3));
    /* an NDJSON import */
    fixture_set_clock("2036-11-30T12:00:04Z");
    const char *nd = "{\"id\":\"s\",\"score\":11}\n{\"id\":\"m\",\"score\":7}\n";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/ut/scores", nd, strlen(nd),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_msg(r.status == 200, "import: %ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(updated_of("ut", "s"), ms_of(t2));
    ck_assert_int_eq(updated_of("ut", "m"), ms_of("2036-11-30T12:00:04Z"));
    /* a `wide` board: the same (its set members hold a tie prefix before the id) */
    ck_assert_int_eq(
        it_status("PUT", "/boards/uw", "{\"track_updated_at\":true,\"score_layout\":\"wide\"}"),
        201);
    write_at(t0, "uw", "{\"id\":\"a\",\"score\":5}");
    write_at(t1, "uw", "{\"id\":\"a\",\"score\":4,\"op\":\"best\"}");
    ck_assert_int_eq(updated_of("uw", "a"), ms_of(t0));
    write_at(t2, "uw", "{\"id\":\"a\",\"score\":6,\"op\":\"best\"}");
    ck_assert_int_eq(updated_of("uw", "a"), ms_of(t2));
    redisReply *f = redis_admin_cmd(g_admin, "HKEYS rankd:{uw}:upd");
    ck_assert_int_eq(f->elements, 1);
    ck_assert_str_eq(f->element[0]->str, "a"); /* the id, not the set member */
    freeReplyObject(f);
    fixture_set_clock(NULL);
}
END_TEST

/* The fields of the board's updated_at hash (the current period's, or the board's). */
static long long hlen(const char *key)
{
    redisReply *r = redis_admin_cmd(g_admin, "HLEN %s", key);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

START_TEST(test_updated_removed_with_members)
{
    ck_assert_int_eq(
        it_status("PUT", "/boards/ur", "{\"track_updated_at\":true,\"max_members\":3}"), 201);
    write_at("2036-11-30T12:00:00Z", "ur",
             "{\"entries\":[{\"id\":\"a\",\"score\":1},{\"id\":\"b\",\"score\":2},{\"id\":\"c\","
             "\"score\":3}]}");
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 3);
    /* max_members: d pushes a (the worst) off the board, and out of the hash */
    write_at("2036-11-30T12:00:01Z", "ur", "{\"id\":\"d\",\"score\":4}");
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 3);
    ck_assert_int_eq(it_status("GET", "/boards/ur/members/a", NULL), 404);
    redisReply *x = redis_admin_cmd(g_admin, "HEXISTS rankd:{ur}:upd a");
    ck_assert_int_eq(x->integer, 0);
    freeReplyObject(x);
    /* member delete */
    ck_assert_int_eq(it_status("DELETE", "/boards/ur/members/b", NULL), 204);
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 2);
    /* trim to the top 1 */
    ck_assert_int_eq(it_status("DELETE", "/boards/ur/members?keep=1", NULL), 200);
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 1);
    /* reset */
    ck_assert_int_eq(it_status("POST", "/boards/ur/reset", NULL), 204);
    ck_assert_int_eq(keys_of("ur", "upd"), 0);
    /* board delete: no key of the board is left */
    write_at("2036-11-30T12:00:02Z", "ur", "{\"id\":\"e\",\"score\":1}");
    ck_assert_int_eq(keys_of("ur", "upd"), 1);
    ck_assert_int_eq(it_status("DELETE", "/boards/ur", NULL), 204);
    ck_assert_int_eq(keys_of("ur", ""), 0);
    /* a daily board: the period's hash is listed with its set, and swept with it */
    ck_assert_int_eq(it_status("PUT", "/boards/ud",
                               "{\"track_updated_at\":true,\"period\":\"daily\",\"retain\":0}"),
                     201);
    write_at("2036-11-30T12:00:00Z", "ud", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(hlen("rankd:{ud}:upd:2036-11-30"), 1);
    redisReply *idx =
        redis_admin_cmd(g_admin, "ZSCORE rankd:{ud}:periods rankd:{ud}:upd:2036-11-30");
    ck_assert_int_eq(idx->type, REDIS_REPLY_STRING);
    freeReplyObject(idx);
    write_at("2036-12-01T00:00:01Z", "ud", "{\"id\":\"a\",\"score\":2}");
    ck_assert_int_eq(updated_of("ud", "a"), ms_of("2036-12-01T00:00:01Z"));
    for (int i = 0; i < 100 && keys_of("ud", "upd:2036-11-30") > 0; i++) {
        struct timespec t = {0, 20 * 1000000L};
        nanosleep(&t, NULL);
    }
    ck_assert_int_eq(keys_of("ud", "upd:2036-11-30"), 0); /* swept with its set */
    ck_assert_int_eq(it_status("DELETE", "/boards/ud", NULL), 204);
    ck_assert_int_eq(keys_of("ud", ""), 0);
    fixture_set_clock(NULL);
}
END_TEST

Suite *updated_suite(void)
{
    const struct it_timed_case cases[] = {
        {"setting", test_updated_setting, 30},
        {"moves_with_the_score", test_updated_moves_with_the_score, 30},
        {"removed_with_members", test_updated_removed_with_members, 30},
    };
    return it_suite_with("updated_at", cases, sizeof(cases) / sizeof(cases[0]), it_setup_clock);
}
