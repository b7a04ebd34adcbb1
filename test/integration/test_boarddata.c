/*
 * test_boarddata.c -- board data: gone means gone, kept means kept (issue 13), against a real
 * redis-server and rankd over HTTP:
 *   1. a deleted board's period sets never come back: not after re-creating it under its name,
 *      not after raising retain, not through ?period= (an unreadable set not yet swept included);
 *   2. a layout change (order) never reads old sets under the new layout, and a period that
 *      stopped being readable stays gone when retain is raised (a page cached while it was
 *      readable included);
 *   3. a reset plus "retain":0 in the same PUT unlocks a layout change on a periodic board, and
 *      the 409 says so;
 *   4. two rankd processes agree on which periods are readable: one lowers retain, the other,
 *      which learnt the old retain, answers 404 as well (live pages, cached pages, members);
 *   5. the sweep of unreadable periods holds its lock across processes and catches up later;
 *   6. at maxmemory (its own redis-server, volatile-ttl as shipped) only page caches are
 *      evicted: every acknowledged entry of the current period stays, writes past the limit are
 *      507 insufficient_storage, /readyz and /metrics say writes are refused, deleting a member
 *      and changing settings still work, creating a board does not.
 * The clock of the in-process rankd is injected (rankd_hooks.clock_ms) where periods must pass;
 * board data carries no TTL, so the fake dates need not be in Redis' future.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "period.h"
#include "score_codec.h"
#include "suites.h"

/* ---------------------------------------------------------------- HTTP helpers */

static void post_score(const char *board, const char *id, double score)
{
    char path[160], body[200];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%.10g}", id, score);
    it_expect_free("POST", path, body, 200);
}

/* GET /boards/{board}/rank[?period=] on `port`: 200, the total, and, when first_id is given,
 * the first item's id and score. */
static void expect_page_on(int port, const char *board, const char *period, long total,
                           const char *first_id, double first_score)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/rank%s%s", board, period ? "?period=" : "",
             period ? period : "");
    struct http_result r;
    http_expect(port, "GET", path, NULL, 200, &r);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r.json, "total");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
    ck_assert_msg(cJSON_IsNumber(t) && (long)t->valuedouble == total,
                  "GET %s -> %.400s; want total %ld", path, r.body, total);
    if (first_id) {
        const cJSON *it = cJSON_GetArrayItem(items, 0);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(it, "score");
        ck_assert_msg(cJSON_IsString(id) && strcmp(id->valuestring, first_id) == 0 &&
                          cJSON_IsNumber(sc) && sc->valuedouble == first_score,
                      "GET %s -> %.400s; want first %s with score %g", path, r.body, first_id,
                      first_score);
    } else {
        ck_assert_msg(cJSON_GetArraySize(items) == 0, "GET %s -> %.400s; want no items", path,
                      r.body);
    }
    http_result_free(&r);
}

static void expect_page(const char *board, const char *period, long total, const char *first_id,
                        double first_score)
{
    expect_page_on(g_port, board, period, total, first_id, first_score);
}

/* ---------------------------------------------------------------- Redis helpers */

/* Wait up to 2 s for a period's set and its distinct scores to be gone (a sweep runs behind the
 * write that starts it). */
static int set_gone(const char *board, const char *period)
{
    char k[256], d[256];
    it_zkey(k, sizeof(k), board, period);
    snprintf(d, sizeof(d), "%s:{%s}:dense%s%s", g_app->cfg.key_prefix, board, period ? ":" : "",
             period ? period : "");
    for (int waited = 0; waited < 2000; waited += 10) {
        if (redis_key_int(g_admin, "EXISTS", k) == 0 && redis_key_int(g_admin, "EXISTS", d) == 0)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

/* ---------------------------------------------------------------- 1. delete */

/* Single entries with records into board mem until one is refused 507 (at most 4,000): 1 then,
 * else 0. *acked counts those applied; *next numbers their ids. */
static int fill_to_refusal(int port, long long *acked, int *next)
{
    for (int k = 0; k < 4000; k++) {
        char body[320];
        int i = (*next)++;
        snprintf(body, sizeof(body),
                 "{\"id\":\"f%06d\",\"score\":%d,\"record\":{\"name\":\"filler %d, padded to take "
                 "some room: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}",
                 i, -i, i);
        struct http_result r;
        ck_assert_int_eq(
            http_req(port, "POST", "/boards/mem/scores", body, strlen(body), NULL, TEST_TOKEN, &r),
            0);
        long status = r.status;
        ck_assert_msg(status == 200 || status == 507, "a filler write -> %ld %.300s", status,
                      r.body);
        http_result_free(&r);
        if (status == 507)
            return 1;
        (*acked)++;
    }
    return 0;
}

/* At the limit again (fill_to_refusal), then method path body: its status (200/201 counted in
 * *acked when it adds a member). Redis accepts a write while its eviction of pages and locks
 * (lazyfree-lazy-eviction: in the background) frees room, so a refusal can be followed by room
 * for a few more entries: filling again first makes the request meet the limit itself. */
static long at_limit(int port, const char *method, const char *path, const char *body,
                     long long *acked, int *next, int adds)
{
    fill_to_refusal(port, acked, next);
    struct http_result r;
    ck_assert_int_eq(
        http_req(port, method, path, body, body ? strlen(body) : 0, NULL, TEST_TOKEN, &r), 0);
    long status = r.status;
    ck_assert_msg(status < 300 ||
                      (status == 507 && strcmp(http_error_code(&r), "insufficient_storage") == 0),
                  "%s %s at maxmemory -> %ld %.300s", method, path, status, r.body);
    http_result_free(&r);
    if (status < 300 && adds)
        (*acked)++;
    return status;
}

/*
 * DEFECT (main 0c56ac3): DELETE UNLINKed only the readable periods' sets; a set no longer
 * readable kept its TTL (the end of its readability plus a 2-hour margin), so a board re-created
 * under the same name showed it again once retain was raised: the deleted member was back.
 */
START_TEST(test_deleted_board_stays_gone)
{
    fixture_set_clock("2036-11-28T12:00:00Z");
    it_expect_free("PUT", "/boards/gone", "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":0}",
                   201);
    post_score("gone", "secret", 5);
    fixture_set_clock("2036-11-29T12:00:00Z");
    post_score("gone", "x", 1);
    /* Nov 30, no write yet: Nov 28 is no longer readable, and no write has swept it */
    fixture_set_clock("2036-11-30T12:00:00Z");
    it_expect_error("GET", "/boards/gone/rank?period=2036-11-28", NULL, 404, "period_not_found");
    it_expect_free("DELETE", "/boards/gone", NULL, 204);
    ck_assert_msg(it_zcard("gone", "2036-11-28") == 0,
                  "the deleted board's set of 2036-11-28 is still in Redis (%lld members)",
                  it_zcard("gone", "2036-11-28"));

    /* re-created under its name, then retain raised: every period it shows is empty */
    it_expect_free("PUT", "/boards/gone", "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":0}",
                   201);
    it_expect_free("PUT", "/boards/gone", "{\"retain\":5}", 200);
    expect_page("gone", "2036-11-28", 0, NULL, 0);
    expect_page("gone", "2036-11-29", 0, NULL, 0);
    it_expect_error("GET", "/boards/gone/members/secret?period=2036-11-28", NULL, 404,
                    "member_not_found");
    /* re-created with a larger retain at once: the same */
    it_expect_free("DELETE", "/boards/gone", NULL, 204);
    it_expect_free("PUT", "/boards/gone", "{\"period\":\"daily\",\"retain\":9,\"page_ttl_ms\":0}",
                   201);
    expect_page("gone", "2036-11-28", 0, NULL, 0);
    redisReply *r = redis_admin_cmd(g_admin, "EXISTS %s:{gone}:periods", g_app->cfg.key_prefix);
    ck_assert_int_eq(r->integer, 0); /* no index left behind either */
    freeReplyObject(r);
}
END_TEST

/* ---------------------------------------------------------------- 2. layout and retain */

/*
 * DEFECT (main 0c56ac3): a layout change was allowed once the readable periods were empty, but an
 * older set lived on (TTL with a margin); raising retain then read it under the new layout:
 * scores negated (order desc -> asc).
 */
START_TEST(test_layout_change_never_reads_old_sets)
{
    fixture_set_clock("2036-11-28T12:00:00Z");
    it_expect_free("PUT", "/boards/lay", "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":0}",
                   201);
    post_score("lay", "a", 5);
    expect_page("lay", NULL, 1, "a", 5);
    /* Nov 30: the current period and the one readable past one (Nov 29) are empty */
    fixture_set_clock("2036-11-30T12:00:00Z");
    it_expect_free("PUT", "/boards/lay", "{\"order\":\"asc\"}", 200);
    it_expect_free("PUT", "/boards/lay", "{\"retain\":5}", 200);
    expect_page("lay", "2036-11-28", 0, NULL, 0);
    /* what is written under the new layout reads back exactly */
    post_score("lay", "b", 7);
    post_score("lay", "c", -2);
    expect_page("lay", NULL, 2, "c", -2);

    /* score_decimals: the same, a stored value must never be read with other decimals */
    fixture_set_clock("2036-11-28T12:00:00Z");
    it_expect_free("PUT", "/boards/dec", "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":0}",
                   201);
    post_score("dec", "a", 123);
    fixture_set_clock("2036-11-30T12:00:00Z");
    it_expect_free("PUT", "/boards/dec", "{\"score_decimals\":3,\"retain\":4}", 200);
    expect_page("dec", "2036-11-28", 0, NULL, 0);
}
END_TEST

/*
 * DEFECT (main 0c56ac3): raising retain extended the TTLs of sets no longer readable, so a period
 * that had answered 404 came back with its old members. Gone means gone: once a period stops
 * being readable, raising retain shows it empty, even from a page cached while it was readable.
 */
START_TEST(test_unreadable_period_never_returns)
{
    fixture_set_clock("2036-11-28T12:00:00Z");
    it_expect_free("PUT", "/boards/back",
                   "{\"period\":\"daily\",\"retain\":1,\"page_ttl_ms\":60000}", 201);
    post_score("back", "a", 5);
    fixture_set_clock("2036-11-29T12:00:00Z");
    expect_page("back", "2036-11-28", 1, "a", 5); /* cached for 60 s */
    fixture_set_clock("2036-11-30T12:00:00Z");
    it_expect_error("GET", "/boards/back/rank?period=2036-11-28", NULL, 404, "period_not_found");
    it_expect_free("PUT", "/boards/back", "{\"retain\":5}", 200);
    expect_page("back", "2036-11-28", 0, NULL, 0);
    ck_assert_int_eq(it_zcard("back", "2036-11-28"), 0);
}
END_TEST

/* ---------------------------------------------------------------- 3. reset and layout */

/*
 * DEFECT (main 0c56ac3): on a periodic board whose past period had members, a reset could not
 * unlock a layout change (409 board_not_empty, whose message suggested that very reset), and
 * nothing else in the API could short of DELETE. Now the message says what helps, and
 * "retain":0 in the same PUT lets the past periods go with the change.
 */
START_TEST(test_reset_unlocks_layout_change)
{
    fixture_set_clock("2036-12-02T12:00:00Z"); /* 2036-W49 */
    it_expect_free("PUT", "/boards/wk", "{\"period\":\"weekly\",\"retain\":3,\"page_ttl_ms\":0}",
                   201);
    post_score("wk", "a", 5);
    fixture_set_clock("2036-12-09T12:00:00Z"); /* 2036-W50 */
    post_score("wk", "b", 6);
    it_expect_free("POST", "/boards/wk/reset", NULL, 204);
    struct http_result r;
    it_expect("PUT", "/boards/wk", "{\"order\":\"asc\"}", 409, &r);
    ck_assert_str_eq(http_error_code(&r), "board_not_empty");
    ck_assert_msg(strstr(r.body, "\\\"retain\\\":0") && strstr(r.body, "reset"),
                  "the 409 does not say what helps: %s", r.body);
    http_result_free(&r);
    expect_page("wk", "2036-W49", 1, "a", 5); /* refused: nothing changed */
    it_expect("PUT", "/boards/wk", "{\"order\":\"asc\",\"retain\":0}", 200, &r);
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(r.json, "order");
    ck_assert(cJSON_IsString(order) && strcmp(order->valuestring, "asc") == 0);
    http_result_free(&r);
    ck_assert_int_eq(it_zcard("wk", "2036-W49"), 0);
    it_expect_free("PUT", "/boards/wk", "{\"retain\":3}", 200);
    expect_page("wk", "2036-W49", 0, NULL, 0);
    post_score("wk", "c", 9);
    post_score("wk", "d", 1);
    expect_page("wk", NULL, 2, "d", 1);
}
END_TEST

/* ---------------------------------------------------------------- 4. two processes */

/*
 * DEFECT (main 0c56ac3): a second rankd process that had learnt a board's retain kept serving a
 * period the first one had made unreadable (retain lowered): 200 with an empty page (live), the
 * old page (cached), because the read scripts and the page cache's lookup compared only the
 * period kind and offset with what the process assumed. B here is build/rankd, a process of its
 * own (in-process instances share the period hints); both use the real clock and monthly
 * periods, two months back.
 */
START_TEST(test_processes_agree_on_retain)
{
    struct rankd_proc b;
    ck_assert_int_eq(rankd_proc_start(&b, g_redis.port, NULL), 0);
    int64_t now = fixture_clock_hooks.clock_ms();
    char old[PERIOD_ID_MAX];
    const struct period_tz utc = {0};
    int64_t old_start = period_start(PERIOD_MONTHLY, &utc, now, -2);
    period_id(PERIOD_MONTHLY, &utc, old_start, old);
    const struct score_layout layout = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}};
    double stored;
    ck_assert_int_eq(score_codec_pack(&layout, score_codec_key(&layout, 5), 0, &stored), 0);
    static const char *const boards[] = {"agree", "agreec"};
    static const char *const settings[] = {
        "{\"period\":\"monthly\",\"retain\":3,\"page_ttl_ms\":0}",
        "{\"period\":\"monthly\",\"retain\":3,\"page_ttl_ms\":60000}"};
    for (int i = 0; i < 2; i++) {
        char path[64], k[256];
        snprintf(path, sizeof(path), "/boards/%s", boards[i]);
        it_expect_free("PUT", path, settings[i], 201);
        /* two months back has a member: written then (writes reach only the current period) */
        it_zkey(k, sizeof(k), boards[i], old);
        freeReplyObject(redis_admin_cmd(g_admin, "ZADD %s %.17g a", k, stored));
        freeReplyObject(redis_admin_cmd(g_admin, "ZADD %s:{%s}:periods %lld %s",
                                        g_app->cfg.key_prefix, boards[i], (long long)old_start, k));
        expect_page_on(b.port, boards[i], old, 1, "a", 5); /* B learns retain 3 (and caches) */
    }
    char member[128];
    snprintf(member, sizeof(member), "/boards/agree/members/a?period=%s", old);
    struct http_result r;
    http_expect(b.port, "GET", member, NULL, 200, &r);
    http_result_free(&r);
    /* A lowers retain: two months back is no longer readable, for A and for B */
    for (int i = 0; i < 2; i++) {
        char path[64], rank[128];
        snprintf(path, sizeof(path), "/boards/%s", boards[i]);
        it_expect_free("PUT", path, "{\"retain\":1}", 200);
        snprintf(rank, sizeof(rank), "/boards/%s/rank?period=%s", boards[i], old);
        it_expect_error("GET", rank, NULL, 404, "period_not_found");
        http_expect_error(b.port, "GET", rank, NULL, 404, "period_not_found");
    }
    http_expect_error(b.port, "GET", member, NULL, 404, "period_not_found");
    rankd_proc_stop(&b);
}
END_TEST

/* ---------------------------------------------------------------- 5. the sweep */

/* The sweep of unreadable periods keeps to its lock across processes (a holder elsewhere: this
 * one leaves the sets to it), and a later sweep catches up with everything no longer readable. */
START_TEST(test_sweep_lock_and_catch_up)
{
    const char *prefix = g_app->cfg.key_prefix;
    fixture_set_clock("2036-11-30T12:00:00Z");
    it_expect_free("PUT", "/boards/sw", "{\"period\":\"daily\",\"retain\":0,\"page_ttl_ms\":0}",
                   201);
    post_score("sw", "a", 1);
    freeReplyObject(redis_admin_cmd(g_admin, "SET %s:{sw}:sweep elsewhere PX 5000", prefix));
    fixture_set_clock("2036-12-01T12:00:00Z");
    post_score("sw", "b", 2); /* a new period: its sweep finds the lock held */
    sleep_ms(200);
    ck_assert_int_eq(it_zcard("sw", "2036-11-30"), 1);
    it_expect_error("GET", "/boards/sw/rank?period=2036-11-30", NULL, 404, "period_not_found");
    freeReplyObject(redis_admin_cmd(g_admin, "UNLINK %s:{sw}:sweep", prefix));
    fixture_set_clock("2036-12-03T12:00:00Z");
    post_score("sw", "c", 3);
    ck_assert_msg(set_gone("sw", "2036-11-30") && set_gone("sw", "2036-12-01"),
                  "the sets of 2036-11-30 and 2036-12-01 are still there after the sweep");
    redisReply *r = redis_admin_cmd(g_admin, "ZCARD %s:{sw}:periods", prefix);
    ck_assert_int_eq(r->integer, 2); /* only 2036-12-03 is listed: its set, its distinct scores */
    freeReplyObject(r);
    r = redis_admin_cmd(g_admin, "EXISTS %s:{sw}:sweep", prefix);
    ck_assert_int_eq(r->integer, 0); /* released */
    freeReplyObject(r);
    expect_page("sw", NULL, 1, "c", 3);
}
END_TEST

/* ---------------------------------------------------------------- 6. maxmemory */

#define MEM_HEADROOM (3 * 1024 * 1024) /* bytes above the baseline for board data */
#define MEM_BATCH 400                  /* entries per write */
#define MEM_BATCHES_MAX 200            /* more than the headroom holds, several times */

static long long info_field(redisContext *a, const char *section, const char *field)
{
    redisReply *r = redis_admin_cmd(a, "INFO %s", section);
    const char *p = r->str ? strstr(r->str, field) : NULL;
    long long v = p ? strtoll(p + strlen(field), NULL, 10) : -1;
    freeReplyObject(r);
    return v;
}

/* A body of MEM_BATCH entries e<from>.. with ~150-byte records. */
static char *mem_batch(int from)
{
    size_t cap = (size_t)MEM_BATCH * 260 + 32;
    char *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    size_t n = (size_t)snprintf(b, cap, "{\"entries\":[");
    for (int i = 0; i < MEM_BATCH; i++)
        n += (size_t)snprintf(b + n, cap - n,
                              "%s{\"id\":\"e%06d\",\"score\":%d,\"record\":{\"name\":\"member %d "
                              "of the memory test, padded to take some room in Redis: "
                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}",
                              i ? "," : "", from + i, from + i, from + i);
    snprintf(b + n, cap - n, "]}");
    return b;
}

/* The body of GET path on port, or NULL (to be freed). */
static char *get_body(int port, const char *path, long *status)
{
    struct http_result r;
    ck_assert_int_eq(http_get(port, path, &r), 0);
    *status = r.status;
    char *body = r.body ? strdup(r.body) : NULL;
    http_result_free(&r);
    return body;
}

/*
 * DEFECT (main 0c56ac3): with the shipped maxmemory-policy volatile-ttl, a periodic board's
 * current set carried a TTL, so once the page caches were gone Redis evicted it whole: thousands
 * of acknowledged entries lost while writes kept answering 200, and no signal anywhere. Now board
 * data carries no TTL: only pages and locks go, then writes are 507 and /readyz and /metrics say
 * so; deleting a member and settings changes (they free or keep memory) still work.
 */
START_TEST(test_maxmemory_keeps_board_data)
{
    signal(SIGPIPE, SIG_IGN);
    struct redis_proc rp;
    ck_assert_int_eq(redis_proc_start(&rp), 0);
    struct rankd *app = rankd_test_start(rp.port, TEST_TOKEN);
    int port = rankd_port(app);
    redisContext *a = redis_admin(rp.port);
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET maxmemory-policy volatile-ttl"));
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET lazyfree-lazy-eviction yes"));
    struct http_result r;
    http_expect(port, "PUT", "/boards/mem", "{\"period\":\"daily\",\"page_ttl_ms\":60000}", 201,
                &r);
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(r.json, "current_period");
    ck_assert(cJSON_IsString(cur));
    char period[PERIOD_ID_MAX];
    snprintf(period, sizeof(period), "%s", cur->valuestring);
    http_result_free(&r);
    long long used = info_field(a, "memory", "used_memory:");
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET maxmemory %lld", used + MEM_HEADROOM));

    long long acked = 0;
    int refused = 0, pages = 0;
    for (int batch = 0; batch < MEM_BATCHES_MAX && !refused; batch++) {
        char *body = mem_batch(batch * MEM_BATCH);
        ck_assert_int_eq(
            http_req(port, "POST", "/boards/mem/scores", body, strlen(body), NULL, TEST_TOKEN, &r),
            0);
        free(body);
        if (r.status == 200) {
            const cJSON *applied = cJSON_GetObjectItemCaseSensitive(r.json, "applied");
            ck_assert(cJSON_IsNumber(applied));
            acked += (long long)applied->valuedouble;
        } else {
            ck_assert_msg(r.status == 507 &&
                              strcmp(http_error_code(&r), "insufficient_storage") == 0,
                          "a write at maxmemory -> %ld %.300s; want 507 insufficient_storage",
                          r.status, r.body);
            refused = 1;
        }
        http_result_free(&r);
        /* page caches (TTL: evictable) between the writes */
        for (int p = 1; p <= 3 && !refused; p++) {
            char path[96];
            long status = 0;
            snprintf(path, sizeof(path), "/boards/mem/rank?page=%d&size=100", batch * 3 + p);
            free(get_body(port, path, &status));
            ck_assert_int_eq(status, 200);
            pages++;
        }
    }
    /* Redis counts a client's query buffer as used memory: a batch's 100 KB of arguments can be
     * what tips it over the limit, and once refused, memory is under the limit again and a
     * small write would pass. Single entries fill that last gap, so the data itself is at the
     * limit (what /readyz must say) */
    int next = 0;
    if (refused == 1 && fill_to_refusal(port, &acked, &next))
        refused = 2;
    char z[256];
    snprintf(z, sizeof(z), "%s:{mem}:z:%s", app->cfg.key_prefix, period);
    long long card = redis_key_int(a, "ZCARD", z);
    long long ttl = redis_key_int(a, "PTTL", z);
    long long evicted = info_field(a, "stats", "evicted_keys:");
    fprintf(stderr,
            "boarddata: maxmemory %lld + %d: %lld entries acknowledged, %lld in the set, %d pages "
            "read, %lld keys evicted, a write refused: %d\n",
            used, MEM_HEADROOM, acked, card, pages, evicted, refused);
    ck_assert_msg(card == acked && ttl == -1,
                  "the current period's set holds %lld of %lld acknowledged entries (PTTL %lld): "
                  "board data was evicted",
                  card, acked, ttl);
    ck_assert_msg(refused, "no write was refused at maxmemory");
    ck_assert_msg(acked > 2000, "only %lld entries before the limit", acked);

    /* the signal: /readyz and /metrics (at the limit again first: see at_limit) */
    long status = 0;
    char *ready = NULL;
    for (int tries = 0;; tries++) {
        fill_to_refusal(port, &acked, &next);
        ready = get_body(port, "/readyz", &status);
        if (tries == 4 || (ready && strstr(ready, "\"writes\":\"refused\"")))
            break;
        free(ready);
    }
    ck_assert_msg(status == 200 && ready && strstr(ready, "\"writes\":\"refused\"") &&
                      strstr(ready, "insufficient_storage"),
                  "/readyz at maxmemory -> %ld %s", status, ready ? ready : "");
    free(ready);
    ck_assert_msg(http_metric(port, "rankd_redis_writes_refused{reason=\"oom\"}") == 1,
                  "/metrics does not say writes are refused");
    ck_assert_msg(http_metric(port, "rankd_http_requests_total{route=\"scores\",status=\"507\"}") >=
                      1,
                  "/metrics counts no 507");

    /* what frees or keeps memory works; what grows it is 507 */
    long late = 0, created = 0;
    for (int tries = 0; tries < 5 && late != 507; tries++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"id\":\"late%d\",\"score\":1}", tries);
        late = at_limit(port, "POST", "/boards/mem/scores", body, &acked, &next, 1);
    }
    ck_assert_msg(late == 507, "a write at maxmemory -> %ld; want 507", late);
    for (int tries = 0; tries < 5 && created != 507; tries++) {
        char path[64];
        snprintf(path, sizeof(path), "/boards/newboard%d", tries);
        created = at_limit(port, "PUT", path, "{}", &acked, &next, 0);
    }
    ck_assert_msg(created == 507, "a new board at maxmemory -> %ld; want 507", created);
    http_expect(port, "DELETE", "/boards/mem/members/e000007", NULL, 204, &r);
    http_result_free(&r);
    http_expect(port, "PUT", "/boards/mem", "{\"page_size\":50,\"retain\":0}", 200, &r);
    http_result_free(&r);
    ck_assert_int_eq(redis_key_int(a, "ZCARD", z), acked - 1);

    /* memory back: writes accepted, and said so */
    freeReplyObject(redis_admin_cmd(a, "CONFIG SET maxmemory 0"));
    ready = get_body(port, "/readyz", &status);
    ck_assert_msg(status == 200 && ready && strstr(ready, "\"writes\":\"ok\""), "/readyz -> %s",
                  ready ? ready : "");
    free(ready);
    ck_assert(http_metric(port, "rankd_redis_writes_refused{reason=\"oom\"}") == 0);
    http_expect(port, "POST", "/boards/mem/scores", "{\"id\":\"late\",\"score\":1}", 200, &r);
    http_result_free(&r);
    http_expect(port, "DELETE", "/boards/mem", NULL, 204, &r);
    http_result_free(&r);

    redisFree(a);
    rankd_stop(app);
    redis_proc_stop(&rp);
}
END_TEST

/* ---------------------------------------------------------------- suite */

Suite *boarddata_suite(void)
{
    const struct it_timed_case cases[] = {
        {"deleted_board_stays_gone", test_deleted_board_stays_gone, 20},
        {"layout_change_old_sets", test_layout_change_never_reads_old_sets, 20},
        {"unreadable_never_returns", test_unreadable_period_never_returns, 20},
        {"reset_unlocks_layout", test_reset_unlocks_layout_change, 20},
        {"processes_agree_retain", test_processes_agree_on_retain, 30},
        {"sweep_lock", test_sweep_lock_and_catch_up, 20},
        {"maxmemory_keeps_data", test_maxmemory_keeps_board_data, 60},
    };
    return it_suite_with("boarddata", cases, sizeof(cases) / sizeof(cases[0]), it_setup_clock);
}
