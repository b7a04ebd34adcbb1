/*
 * test_timezones.c -- periodic boards in IANA time zones, against the shared redis-server and an
 * in-process rankd whose period clock is injected (rankd_hooks.clock_ms, fixture_set_clock):
 *   1. a Europe/Paris daily board across both 2026 DST days: 2026-03-29 (clocks 02:00 -> 03:00,
 *      a 23-hour day from 2026-03-28T23:00Z to 2026-03-29T22:00Z) and 2026-10-25 (03:00 -> 02:00,
 *      a 25-hour day from 2026-10-24T22:00Z to 2026-10-25T23:00Z): each write lands in the set of
 *      its local date one millisecond either side of every boundary, each set is listed in the
 *      period index at its period's start, and ?period= reads, current_period and periods agree;
 *   2. an America/New_York weekly board across its 2026 spring change (Monday midnight at -05:00
 *      before, -04:00 after);
 *   3. the zone in the settings hash is what the scripts check: a zone changed behind rankd's
 *      back (an empty board) is learnt from the scripts' retry answer and the next read and write
 *      go to the new zone's period;
 *   4. bad zones: unknown names, directories and path tricks are 400 and create nothing.
 * The expected instants are written out here (read with timegm, fixture_ts), computed with
 * python3's zoneinfo and `TZ=Europe/Paris date` when the test was written: independent of
 * rankd's tzif.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* Set the fake clock, then write one score. */
static void write_at(const char *iso, const char *board, const char *id, int score)
{
    fixture_set_clock(iso);
    char path[160], body[200];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d}", id, score);
    struct http_result r;
    it_expect("POST", path, body, 200, &r);
    http_result_free(&r);
}

/* The write of `id` at `iso` went to `period`'s set, listed at the period's start `start_iso`. */
static void expect_landed(const char *board, const char *iso, const char *id, const char *period,
                          const char *start_iso)
{
    write_at(iso, board, id, 1);
    ck_assert_msg(it_zhas(board, period, id), "%s's write of %s at %s is not in the set of %s",
                  board, id, iso, period);
    long long start = it_period_start(board, period);
    ck_assert_msg(start == (long long)fixture_ts(start_iso),
                  "%s's %s is listed at %lld; want its start %s (%lld)", board, period, start,
                  start_iso, (long long)fixture_ts(start_iso));
}

/* GET /boards/{board} at the clock's time: current_period and the readable periods. */
static void expect_periods(const char *board, const char *current, const char *past)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    it_expect("GET", path, NULL, 200, &r);
    ck_assert_msg(strcmp(json_str(r.json, "current_period"), current) == 0,
                  "GET %s: %.400s; want current_period %s", path, r.body, current);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r.json, "periods");
    ck_assert_msg(cJSON_GetArraySize(list) == 2 &&
                      strcmp(cJSON_GetArrayItem(list, 0)->valuestring, current) == 0 &&
                      strcmp(cJSON_GetArrayItem(list, 1)->valuestring, past) == 0,
                  "GET %s: %.400s; want periods [%s, %s]", path, r.body, current, past);
    http_result_free(&r);
}

/* GET /boards/{board}/rank?period=: the total. */
static void expect_total(const char *board, const char *period, int total)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/rank?period=%s", board, period);
    struct http_result r;
    it_expect("GET", path, NULL, 200, &r);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r.json, "total");
    ck_assert_msg(cJSON_IsNumber(t) && (int)t->valuedouble == total, "%s -> %.300s; want total %d",
                  path, r.body, total);
    http_result_free(&r);
}

START_TEST(test_paris_daily_dst_days)
{
    const char *b = "paris";
    fixture_set_clock("2026-03-28T12:00:00.000Z");
    struct http_result r;
    it_expect("PUT", "/boards/paris",
              "{\"period\":\"daily\",\"timezone\":\"Europe/Paris\",\"page_ttl_ms\":0}", 201, &r);
    ck_assert_str_eq(json_str(r.json, "timezone"), "Europe/Paris");
    ck_assert_str_eq(json_str(r.json, "current_period"), "2026-03-28");
    http_result_free(&r);

    /* spring: 2026-03-29 starts at 00:00 CET (23:00Z) and ends at 00:00 CEST (22:00Z) */
    expect_landed(b, "2026-03-28T22:59:59.999Z", "a1", "2026-03-28", "2026-03-27T23:00:00Z");
    expect_landed(b, "2026-03-28T23:00:00.000Z", "a2", "2026-03-29", "2026-03-28T23:00:00Z");
    expect_landed(b, "2026-03-29T00:59:59.999Z", "a3", "2026-03-29", "2026-03-28T23:00:00Z");
    expect_landed(b, "2026-03-29T01:00:00.000Z", "a4", "2026-03-29", "2026-03-28T23:00:00Z");
    expect_landed(b, "2026-03-29T21:59:59.999Z", "a5", "2026-03-29", "2026-03-28T23:00:00Z");
    expect_periods(b, "2026-03-29", "2026-03-28");
    expect_total(b, "2026-03-29", 4);
    expect_landed(b, "2026-03-29T22:00:00.000Z", "a6", "2026-03-30", "2026-03-29T22:00:00Z");
    expect_periods(b, "2026-03-30", "2026-03-29");
    expect_total(b, "2026-03-29", 4);
    expect_total(b, "2026-03-30", 1);
    it_expect_error("GET", "/boards/paris/rank?period=2026-03-28", NULL, 404, "period_not_found");

    /* autumn: 2026-10-25 starts at 00:00 CEST (22:00Z the day before), ends at 00:00 CET
     * (23:00Z): 25 hours, the hour 02:00-03:00 twice */
    expect_landed(b, "2026-10-24T21:59:59.999Z", "b1", "2026-10-24", "2026-10-23T22:00:00Z");
    expect_landed(b, "2026-10-24T22:00:00.000Z", "b2", "2026-10-25", "2026-10-24T22:00:00Z");
    expect_landed(b, "2026-10-25T00:30:00.000Z", "b3", "2026-10-25", "2026-10-24T22:00:00Z");
    expect_landed(b, "2026-10-25T01:30:00.000Z", "b4", "2026-10-25", "2026-10-24T22:00:00Z");
    expect_landed(b, "2026-10-25T22:59:59.999Z", "b5", "2026-10-25", "2026-10-24T22:00:00Z");
    expect_periods(b, "2026-10-25", "2026-10-24");
    expect_total(b, "2026-10-25", 4);
    expect_landed(b, "2026-10-25T23:00:00.000Z", "b6", "2026-10-26", "2026-10-25T23:00:00Z");
    expect_periods(b, "2026-10-26", "2026-10-25");
    expect_total(b, "2026-10-25", 4);
    expect_total(b, "2026-10-26", 1);
}
END_TEST

START_TEST(test_new_york_weekly_dst)
{
    /* 2026-03-08 02:00 EST -> 03:00 EDT: the week 2026-W10 starts Monday 2026-03-02 at 05:00Z,
     * 2026-W11 Monday 2026-03-09 at 04:00Z (a 167-hour week) */
    const char *b = "ny";
    fixture_set_clock("2026-03-02T12:00:00.000Z");
    struct http_result r;
    it_expect("PUT", "/boards/ny",
              "{\"period\":\"weekly\",\"timezone\":\"America/New_York\",\"page_ttl_ms\":0}", 201,
              &r);
    http_result_free(&r);
    expect_landed(b, "2026-03-02T04:59:59.999Z", "c1", "2026-W09", "2026-02-23T05:00:00Z");
    expect_landed(b, "2026-03-02T05:00:00.000Z", "c2", "2026-W10", "2026-03-02T05:00:00Z");
    expect_landed(b, "2026-03-09T03:59:59.999Z", "c3", "2026-W10", "2026-03-02T05:00:00Z");
    expect_landed(b, "2026-03-09T04:00:00.000Z", "c4", "2026-W11", "2026-03-09T04:00:00Z");
    expect_periods(b, "2026-W11", "2026-W10");
    expect_total(b, "2026-W10", 2);
}
END_TEST

START_TEST(test_zone_changed_behind_back)
{
    /* 2026-03-29T03:00Z is 05:00 on the 29th in Paris, 23:00 on the 28th in New York */
    const char *b = "moved";
    fixture_set_clock("2026-03-29T03:00:00.000Z");
    struct http_result r;
    it_expect("PUT", "/boards/moved",
              "{\"period\":\"daily\",\"timezone\":\"Europe/Paris\",\"page_ttl_ms\":0}", 201, &r);
    ck_assert_str_eq(json_str(r.json, "current_period"), "2026-03-29");
    http_result_free(&r);
    expect_total(b, "2026-03-29", 0); /* this process now holds the Paris placement */
    redisReply *x = redis_admin_cmd(g_admin, "HSET %s:{moved}:meta timezone America/New_York",
                                    g_app->cfg.key_prefix);
    freeReplyObject(x);
    /* the read of the current period is placed from the stale hint: the script answers retry
     * with the hash's zone, and the read goes to New York's 2026-03-28 */
    it_expect("GET", "/boards/moved/rank", NULL, 200, &r);
    http_result_free(&r);
    write_at("2026-03-29T03:00:00.000Z", b, "d1", 1);
    ck_assert_msg(it_zhas(b, "2026-03-28", "d1"), "the write did not follow the zone in the hash");
    ck_assert_int_eq(it_period_start(b, "2026-03-28"),
                     (long long)fixture_ts("2026-03-28T04:00:00Z"));
    it_expect("GET", "/boards/moved", NULL, 200, &r);
    ck_assert_str_eq(json_str(r.json, "timezone"), "America/New_York");
    ck_assert_str_eq(json_str(r.json, "current_period"), "2026-03-28");
    http_result_free(&r);
}
END_TEST

START_TEST(test_bad_zones)
{
    static const char *const unknown[] = {"Mars/Olympus_Mons", "Europe", "Europe/Pariss",
                                          "right/Europe/Paris", "zone1970"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char body[160];
        snprintf(body, sizeof(body), "{\"period\":\"daily\",\"timezone\":\"%s\"}", unknown[i]);
        it_expect_error("PUT", "/boards/bad", body, 400, "unknown_timezone");
    }
    static const char *const malformed[] = {"../../../etc/passwd",    "/etc/localtime",
                                            "Europe/../Europe/Paris", "Europe//Paris",
                                            "Europe/Paris/",          ".hidden",
                                            "Europe/Paris ",          "-x",
                                            "Europe/Par is",          ""};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        char body[160];
        snprintf(body, sizeof(body), "{\"period\":\"daily\",\"timezone\":\"%s\"}", malformed[i]);
        it_expect_error("PUT", "/boards/bad", body, 400, "invalid_field");
    }
    it_expect_error("GET", "/boards/bad", NULL, 404, "board_not_found");
    /* an existing board keeps its zone after a refused change */
    struct http_result r;
    it_expect("PUT", "/boards/kept", "{\"period\":\"daily\",\"timezone\":\"Asia/Kolkata\"}", 201,
              &r);
    http_result_free(&r);
    it_expect_error("PUT", "/boards/kept", "{\"timezone\":\"Asia/Kolkatta\"}", 400,
                    "unknown_timezone");
    it_expect("GET", "/boards/kept", NULL, 200, &r);
    ck_assert_str_eq(json_str(r.json, "timezone"), "Asia/Kolkata");
    http_result_free(&r);
}
END_TEST

Suite *timezones_suite(void)
{
    const struct it_timed_case cases[] = {
        {"paris_daily", test_paris_daily_dst_days, 20},
        {"new_york_weekly", test_new_york_weekly_dst, 20},
        {"zone_changed", test_zone_changed_behind_back, 20},
        {"bad_zones", test_bad_zones, 20},
    };
    return it_suite_with("timezones", cases, sizeof(cases) / sizeof(cases[0]), it_setup_clock);
}
