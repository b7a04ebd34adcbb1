/*
 * test_writes_short.c -- the `writes` suite's cases of write_one.lua, the short script of the
 * common single write: the commands and arguments it sends (MONITOR), its hand-over to write.lua
 * on a board it does not fit, and a random walk that sends each write to two boards of the same
 * settings, one through write_one.lua and one through write.lua (board_set_short_writes), and
 * compares the replies byte for byte and the boards' sets, distinct scores, versions and
 * updated_at after every write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board.h"
#include "suites.h"

/* What one request sent Redis (MONITOR): the EVALSHA calls and their argument counts (argc of
 * each, EVALSHA, sha and numkeys included), and the commands the scripts ran as " VERB KEY". */
struct sent {
    int evalsha, argc[4], n;
    char verbs[2048];
};

static void post_watched(const char *board, const char *body, long status, struct http_result *r,
                         struct sent *s)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    redisContext *mon = mon_start(g_redis.port);
    ck_assert_int_eq(
        http_req_h(g_port, "POST", path, body, strlen(body), NULL, TEST_TOKEN, NULL, r), 0);
    ck_assert_msg(r->status == status, "%s -> %ld %s", body, r->status, r->body);
    memset(s, 0, sizeof(*s));
    s->n = mon_scripts(g_admin, mon, s->verbs, sizeof(s->verbs), s->argc, 4, &s->evalsha);
}

/* A single write of the common kind is one EVALSHA of write_one.lua: only the keys and
 * arguments it uses (here the set, the settings, the distinct scores, the records hash; the
 * settings, member, op, key, flags and record: each costs Redis about 1,200 instructions;
 * write.lua's call has 9 keys and 32 arguments), and only the commands the write
 * needs: the settings, the member's score, the distinct scores asked at once whether they are
 * kept and whether the new score's group has members, the previous rank, the set and the
 * distinct scores written, the left group counted (empty: its key leaves the distinct scores),
 * the version, the new rank, the record. A board it does not fit goes to write.lua: a board with
 * max_members at once (the settings say so), a board an export is copying after write_one.lua
 * said so (nothing written by it). */
START_TEST(short_write_commands)
{
    it_expect_free("PUT", "/boards/sc", "{\"page_ttl_ms\":0}", 201);
    it_post_score("sc", "{\"id\":\"a\",\"score\":10}");
    it_post_score("sc", "{\"id\":\"b\",\"score\":20}");
    it_post_score("sc", "{\"id\":\"c\",\"score\":30,\"record\":{\"n\":1}}");
    struct http_result r;
    struct sent s;
    post_watched("sc", "{\"id\":\"c\",\"score\":40,\"record\":{\"n\":2}}", 200, &r, &s);
    fprintf(stderr, "writes: a single write: %d EVALSHA of %d arguments, %d commands:%s\n",
            s.evalsha, s.argc[0], s.n, s.verbs);
    ck_assert_str_eq(r.body, "{\"id\":\"c\",\"score\":40,\"rank\":1,\"updated\":true,"
                             "\"prev_score\":30,\"prev_rank\":1,\"version\":4}");
    http_result_free(&r);
    ck_assert_int_eq(s.evalsha, 1);
    ck_assert_int_eq(s.argc[0], 3 + 4 + 6);
    ck_assert_str_eq(s.verbs, " HMGET rankd:{sc}:meta ZSCORE rankd:{sc}:z"
                              " ZMSCORE rankd:{sc}:dense ZRANK rankd:{sc}:z ZADD rankd:{sc}:z"
                              " ZADD rankd:{sc}:dense ZCOUNT rankd:{sc}:z ZREM rankd:{sc}:dense"
                              " HINCRBY rankd:{sc}:meta ZRANK rankd:{sc}:z HSET rankd:items");
    /* a write that changes nothing: the settings, the score, the rank once, the version */
    post_watched("sc", "{\"id\":\"a\",\"score\":5,\"op\":\"best\"}", 200, &r, &s);
    ck_assert_str_eq(r.body, "{\"id\":\"a\",\"score\":10,\"rank\":3,\"updated\":false,"
                             "\"prev_score\":10,\"prev_rank\":3,\"version\":5}");
    http_result_free(&r);
    ck_assert_int_eq(s.evalsha, 1);
    ck_assert_str_eq(s.verbs, " HMGET rankd:{sc}:meta ZSCORE rankd:{sc}:z ZRANK rankd:{sc}:z"
                              " HINCRBY rankd:{sc}:meta");
    /* an export's lease in the settings (one that ended): write_one.lua hands the write over */
    freeReplyObject(
        redis_admin_cmd(g_admin, "HSET rankd:{sc}:meta exports 0123abcd|1|rankd:{sc}:z|"));
    post_watched("sc", "{\"id\":\"b\",\"score\":50}", 200, &r, &s);
    fprintf(stderr, "writes: handed to write.lua: %d EVALSHA of %d and %d arguments:%s\n",
            s.evalsha, s.argc[0], s.argc[1], s.verbs);
    ck_assert_str_eq(r.body, "{\"id\":\"b\",\"score\":50,\"rank\":1,\"updated\":true,"
                             "\"prev_score\":20,\"prev_rank\":2,\"version\":6}");
    http_result_free(&r);
    ck_assert_int_eq(s.evalsha, 2);
    ck_assert_int_eq(s.argc[0], 3 + 3 + 5); /* no record: no records hash */
    ck_assert_int_eq(s.argc[1], 3 + 9 + 32);
    ck_assert_msg(strncmp(s.verbs, " HMGET rankd:{sc}:meta HMGET rankd:{sc}:meta", 44) == 0,
                  "write_one.lua wrote before it handed over:%s", s.verbs);
    /* a daily board: the period index and the period's start too (4 keys, 6 arguments); the
     * set listed again with ZADD NX by every write that changes it */
    it_expect_free("PUT", "/boards/sd", "{\"page_ttl_ms\":0,\"period\":\"daily\"}", 201);
    it_post_score("sd", "{\"id\":\"a\",\"score\":10}");
    /* the board's sweep of old periods (a timer's own EVALSHA) may fall in the watched window:
     * then another write is watched */
    for (int k = 0;; k++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"a\",\"score\":%d}", 20 + 10 * k);
        post_watched("sd", body, 200, &r, &s);
        http_result_free(&r);
        if (!strstr(s.verbs, "rankd:{sd}:sweep") || k == 2)
            break;
    }
    fprintf(stderr, "writes: a daily board's write: %d EVALSHA of %d arguments:%s\n", s.evalsha,
            s.argc[0], s.verbs);
    ck_assert_int_eq(s.evalsha, 1);
    ck_assert_int_eq(s.argc[0], 3 + 4 + 6);
    ck_assert_msg(strstr(s.verbs, " ZADD rankd:{sd}:periods") && s.n == 11, "%d:%s", s.n, s.verbs);
    /* max_members: write.lua at once */
    it_expect_free("PUT", "/boards/sm", "{\"page_ttl_ms\":0,\"max_members\":2}", 201);
    it_post_score("sm", "{\"id\":\"a\",\"score\":10}");
    it_post_score("sm", "{\"id\":\"b\",\"score\":20}");
    post_watched("sm", "{\"id\":\"c\",\"score\":30}", 200, &r, &s);
    http_result_free(&r);
    ck_assert_int_eq(s.evalsha, 1);
    ck_assert_int_eq(s.argc[0], 3 + 9 + 32);
    ck_assert_int_eq(it_zcard("sm", NULL), 2);
}
END_TEST

/* A small deterministic generator (the walk replays from its seed). */
static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

/* A Redis reply as text, for comparing two keys' contents. */
static void reply_text(redisReply *x, char *out, size_t len)
{
    size_t at = strlen(out);
    if (x->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < x->elements; i++)
            reply_text(x->element[i], out, len);
    } else if (x->type == REDIS_REPLY_INTEGER) {
        snprintf(out + at, len - at, "%lld,", x->integer);
    } else if (x->str) {
        snprintf(out + at, len - at, "%s,", x->str);
    } else {
        snprintf(out + at, len - at, "nil,");
    }
}

static void key_text(const char *cmd, const char *board, const char *suffix, char *out, size_t len)
{
    char key[160];
    snprintf(key, sizeof(key), "rankd:{%s}:%s", board, suffix);
    redisReply *x = redis_admin_cmd(g_admin, cmd, key);
    out[0] = '\0';
    reply_text(x, out, len);
    freeReplyObject(x);
}

/* The period of the set board `a`'s index lists ("" none: a board without periods). */
static void listed_period(const char *a, char *out, size_t len)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "rankd:{%s}:z:", a);
    redisReply *x = redis_admin_cmd(g_admin, "ZRANGE rankd:{%s}:periods 0 -1", a);
    out[0] = '\0';
    for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements; i++)
        if (strncmp(x->element[i]->str, prefix, strlen(prefix)) == 0)
            snprintf(out, len, ":%s", x->element[i]->str + strlen(prefix));
    freeReplyObject(x);
}

/* The two boards hold the same: set, distinct scores, version, updated_at's members, and on a
 * periodic board the index (with a's name read as b's). */
static void same_boards(const char *a, const char *b, const char *what)
{
    static const struct {
        const char *cmd, *suffix;
        int period;
    } keys[] = {
        {"ZRANGE %s 0 -1 WITHSCORES", "z", 1},
        {"ZRANGE %s 0 -1 WITHSCORES", "dense", 1},
        {"HGET %s version", "meta", 0},
        {"HKEYS %s", "upd", 1},
        {"ZRANGE %s 0 -1 WITHSCORES", "periods", 0},
    };
    static char ta[16384], tb[16384];
    char period[64], suffix[96];
    listed_period(a, period, sizeof(period));
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        snprintf(suffix, sizeof(suffix), "%s%s", keys[k].suffix, keys[k].period ? period : "");
        key_text(keys[k].cmd, a, suffix, ta, sizeof(ta));
        key_text(keys[k].cmd, b, suffix, tb, sizeof(tb));
        for (char *q = tb; (q = strstr(q, "{wb}")) != NULL; q += 4)
            q[2] = 'a';
        ck_assert_msg(strcmp(ta, tb) == 0, "%s: %s %s differ:\n%s\n%s", what, keys[k].cmd, suffix,
                      ta, tb);
    }
}

/* What a write left for member `id` of board `board`: its record (the records hash, shared by
 * the boards: cleared first by the caller) and its updated_at ("" none), into rec and upd. */
static void member_left(const char *board, const char *id, char *rec, size_t rlen, char *upd,
                        size_t ulen)
{
    char period[64];
    listed_period(board, period, sizeof(period));
    redisReply *x = redis_admin_cmd(g_admin, "HGET rankd:items %s", id);
    snprintf(rec, rlen, "%s", x->type == REDIS_REPLY_STRING ? x->str : "");
    freeReplyObject(x);
    x = redis_admin_cmd(g_admin, "HGET rankd:{%s}:upd%s %s", board, period, id);
    snprintf(upd, ulen, "%s", x->type == REDIS_REPLY_STRING ? x->str : "");
    freeReplyObject(x);
}

/*
 * Random single writes (set, best, incr with and without floor and ceiling, records, scores
 * that collide, a tie cap of 3 so groups fill and are compacted (the cap it is sent; a quarter of
 * the boards keep the default cap, which write_one.lua is not sent), incr results past the range)
 * on boards of every tiebreak, both orders, 0 and 2 decimals, with and without updated_at, with
 * and without periods: each
 * write goes to board "wa" through write_one.lua and to "wb" through write.lua; their statuses
 * and bodies must be equal, and so must the boards after every write, the member's record and
 * its updated_at (within a minute: the two writes' clocks). RANKD_SHORT_SEED=<n> replays a walk.
 */
START_TEST(short_write_same_as_write_lua)
{
    const char *seed_env = getenv("RANKD_SHORT_SEED");
    unsigned long long seed =
        seed_env ? strtoull(seed_env, NULL, 10) : (unsigned long long)time(NULL);
    rng_state = seed;
    fprintf(stderr, "writes: short_write_same_as_write_lua: RANKD_SHORT_SEED=%llu\n", seed);
    static const char *const tiebreaks[] = {"first", "last", "id"};
    static const char *const orders[] = {"desc", "asc"};
    board_set_tie_cap(3);
    redisReply *x = redis_admin_cmd(g_admin, "CONFIG RESETSTAT");
    freeReplyObject(x);
    int writes = 0;
    for (int cfg = 0; cfg < 32; cfg++) {
        const char *tb = tiebreaks[cfg % 3], *order = orders[cfg / 3 % 2];
        int decimals = cfg / 6 % 2 ? 2 : 0, track = cfg / 12 % 2;
        /* the last 8: daily and weekly boards (the current period's set) */
        const char *period = cfg < 24 ? "none" : cfg % 2 ? "daily" : "weekly";
        char settings[256], what[160];
        snprintf(settings, sizeof(settings),
                 "{\"page_ttl_ms\":0,\"tiebreak\":\"%s\",\"order\":\"%s\","
                 "\"score_decimals\":%d,\"track_updated_at\":%s,\"period\":\"%s\"}",
                 tb, order, decimals, track ? "true" : "false", period);
        board_set_tie_cap(cfg % 4 == 1 ? 0 : 3);
        it_expect_free("PUT", "/boards/wa", settings, 201);
        it_expect_free("PUT", "/boards/wb", settings, 201);
        for (int i = 0; i < 40; i++) {
            char body[256], score[64], extra[96] = "";
            const char *op = rnd(2) ? "set" : rnd(2) ? "best" : "incr";
            unsigned pick = rnd(20);
            if (pick == 0) /* past the range of a packed key after two of them */
                snprintf(score, sizeof(score), "%s1500000000", rnd(2) ? "-" : "");
            else if (decimals)
                snprintf(score, sizeof(score), "%d.%02u", (int)rnd(7) - 3, rnd(3) * 25);
            else
                snprintf(score, sizeof(score), "%d", (int)rnd(9) - 4);
            if (strcmp(op, "incr") == 0 && rnd(3) == 0)
                snprintf(extra, sizeof(extra), ",\"floor\":%d,\"ceiling\":%d", -(int)rnd(4),
                         (int)rnd(4));
            if (rnd(3) == 0) {
                size_t at = strlen(extra);
                snprintf(extra + at, sizeof(extra) - at, ",\"record\":{\"w\":%d}", i);
            }
            char entry[200], ba[256], bb[256], pa[32], pb[32];
            snprintf(entry, sizeof(entry), "\"id\":\"m%u\",\"score\":%s,\"op\":\"%s\"%s", rnd(8),
                     score, op, extra);
            /* the shapes that send one entry to one board: a single entry (previous score and
             * rank asked), a batch of one, POST /scores naming one board */
            unsigned shape = rnd(4);
            for (int w = 0; w < 2; w++) {
                const char *board = w ? "wb" : "wa";
                char *b = w ? bb : ba, *p = w ? pb : pa;
                if (shape == 2) {
                    snprintf(b, 256, "{\"entries\":[{%s}]}", entry);
                } else if (shape == 3) {
                    snprintf(b, 256, "{\"boards\":[\"%s\"],%s}", board, entry);
                } else {
                    snprintf(b, 256, "{%s}", entry);
                }
                snprintf(p, 32, shape == 3 ? "/scores" : "/boards/%s/scores", board);
            }
            snprintf(body, sizeof(body), "%s", ba);
            struct http_result ra, rb;
            char id[16], reca[128], recb[128], upda[32], updb[32];
            snprintf(id, sizeof(id), "m%u", (unsigned)atoi(strstr(entry, "\"m") + 2));
            freeReplyObject(redis_admin_cmd(g_admin, "HDEL rankd:items %s", id));
            ck_assert_int_eq(
                http_req_h(g_port, "POST", pa, ba, strlen(ba), NULL, TEST_TOKEN, NULL, &ra), 0);
            member_left("wa", id, reca, sizeof(reca), upda, sizeof(upda));
            freeReplyObject(redis_admin_cmd(g_admin, "HDEL rankd:items %s", id));
            board_set_short_writes(0);
            ck_assert_int_eq(
                http_req_h(g_port, "POST", pb, bb, strlen(bb), NULL, TEST_TOKEN, NULL, &rb), 0);
            board_set_short_writes(1);
            member_left("wb", id, recb, sizeof(recb), updb, sizeof(updb));
            /* POST /scores and error messages name the board */
            for (char *q = rb.body; (q = strstr(q, "wb")) != NULL; q += 2)
                if (q > rb.body && (q[-1] == '"' || q[-1] == '\'') && (q[2] == '"' || q[2] == '\''))
                    q[1] = 'a';
            snprintf(what, sizeof(what),
                     "seed %llu, %s %s %d decimals, updated_at %d, period %s, write %d", seed, tb,
                     order, decimals, track, period, i);
            ck_assert_msg(ra.status == rb.status && strcmp(ra.body, rb.body) == 0,
                          "%s: %s\nwrite_one.lua: %ld %s\nwrite.lua:     %ld %s", what, body,
                          ra.status, ra.body, rb.status, rb.body);
            http_result_free(&ra);
            http_result_free(&rb);
            same_boards("wa", "wb", what);
            ck_assert_msg(strcmp(reca, recb) == 0, "%s: %s: records %s and %s", what, body, reca,
                          recb);
            ck_assert_msg(!upda[0] == !updb[0] && llabs(atoll(upda) - atoll(updb)) < 60000,
                          "%s: %s: updated_at %s and %s", what, body, upda, updb);
            writes++;
        }
        it_expect_free("DELETE", "/boards/wa", NULL, 204);
        it_expect_free("DELETE", "/boards/wb", NULL, 204);
    }
    board_set_tie_cap(0);
    /* write_one.lua ran (only it asks ZSCORE; write.lua asks ZMSCORE) */
    x = redis_admin_cmd(g_admin, "INFO commandstats");
    const char *z = strstr(x->str, "cmdstat_zscore:calls=");
    long calls = z ? atol(z + strlen("cmdstat_zscore:calls=")) : 0;
    freeReplyObject(x);
    fprintf(stderr, "writes: %d writes compared, write_one.lua ran %ld times\n", writes, calls);
    ck_assert_msg(calls > writes / 2, "write_one.lua ran %ld times for %d writes", calls, writes);
}
END_TEST

static void short_teardown(void)
{
    board_set_short_writes(1);
    board_set_tie_cap(0);
    it_teardown();
}

void writes_short_add(Suite *s)
{
    const struct it_case cases[] = {
        {"short_write_commands", short_write_commands},
        {"short_write_same_as_write_lua", short_write_same_as_write_lua},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (it_skipped("writes", cases[i].name))
            continue;
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, it_setup, short_teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
}
