/* test_period.c -- service/period.h: kinds, offsets, ids, starts, ISO weeks, calendar edges. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "period.h"
#include "suites.h"

/* A fixed offset of m minutes, as the functions take it. */
#define FX(m) (&(struct period_tz){.min = (m)})

/*
 * Every expected instant below was computed outside this code (python3 datetime / date -u) and
 * is hard-coded: milliseconds since the epoch, UTC.
 */
#define T_2026_11_30_1405 INT64_C(1796047500000) /* 2026-11-30T14:05:00Z, a Monday */
#define T_2026_11_30_1400 INT64_C(1796047200000)
#define T_2026_11_30_1300 INT64_C(1796043600000)
#define T_2026_11_30_1500 INT64_C(1796050800000)
#define T_2026_11_30 INT64_C(1795996800000)
#define T_2026_11_29 INT64_C(1795910400000)
#define T_2026_12_01 INT64_C(1796083200000)
#define T_2026_11_01 INT64_C(1793491200000)
#define T_2026_10_01 INT64_C(1790812800000)
#define T_2027_11_01 INT64_C(1825027200000)
#define T_2027_01_01 INT64_C(1798761600000)
#define T_2026_11_23 INT64_C(1795392000000) /* Monday of 2026-W48 */
#define T_2026_12_07 INT64_C(1796601600000) /* Monday of 2026-W50 */
#define T_2026_12_28 INT64_C(1798416000000) /* Monday of 2026-W53 */
#define T_2027_01_04 INT64_C(1799020800000) /* Monday of 2027-W01 */
#define T_2025_12_29 INT64_C(1766966400000) /* Monday of 2026-W01 */
#define T_2024_12_30 INT64_C(1735516800000) /* Monday of 2025-W01 */
#define T_2026_01_01_12 INT64_C(1767268800000)
#define T_2021_01_03_12 INT64_C(1609675200000)
#define T_2027_01_01_12 INT64_C(1798804800000)
#define T_2024_02_29_12 INT64_C(1709208000000)
#define T_2024_03_01 INT64_C(1709251200000)
#define T_2100_02_28_12 INT64_C(4107499200000)
#define T_2100_03_01 INT64_C(4107542400000)
#define T_2026_11_30_2230 INT64_C(1796077800000)
#define T_2026_11_30_2200 INT64_C(1796076000000)
#define T_2026_12_01_0300 INT64_C(1796094000000)
#define T_2026_11_30_0500 INT64_C(1796014800000)
#define T_2024_01_01 INT64_C(1704067200000)
#define T_2029_01_01 INT64_C(1861920000000)

#define MS_H INT64_C(3600000)
#define MS_D INT64_C(86400000)

static void expect_id(enum period_kind k, int tz, int64_t t, const char *want)
{
    char got[PERIOD_ID_MAX];
    memset(got, 'x', sizeof got);
    period_id(k, FX(tz), t, got);
    ck_assert_msg(strcmp(got, want) == 0, "period_id(%s, FX(%d), %lld) = \"%s\", want \"%s\"",
                  period_kind_name(k), tz, (long long)t, got, want);
}

static void expect_start(enum period_kind k, int tz, int64_t t, int delta, int64_t want)
{
    int64_t got = period_start(k, FX(tz), t, delta);
    ck_assert_msg(got == want, "period_start(%s, FX(%d), %lld, %d) = %lld, want %lld",
                  period_kind_name(k), tz, (long long)t, delta, (long long)got, (long long)want);
}

static void expect_id_start(enum period_kind k, int tz, const char *id, int64_t want)
{
    int64_t got = 12345;
    int rc = period_id_start(k, FX(tz), id, &got);
    ck_assert_msg(rc == 0 && got == want,
                  "period_id_start(%s, FX(%d), \"%s\") = %d / %lld, want 0 / %lld",
                  period_kind_name(k), tz, id, rc, (long long)got, (long long)want);
}

static void expect_id_rejected(enum period_kind k, int tz, const char *id)
{
    int64_t got = 12345;
    int rc = period_id_start(k, FX(tz), id, &got);
    ck_assert_msg(rc == -EINVAL,
                  "period_id_start(%s, FX(%d), \"%s\") = %d (start %lld), want -EINVAL",
                  period_kind_name(k), tz, id, rc, (long long)got);
    ck_assert_int_eq(got, 12345); /* untouched on error */
}

/* ---- kinds ---------------------------------------------------------------------------------- */

START_TEST(test_kind_round_trip)
{
    static const char *const want[] = {"none", "hourly", "daily", "weekly", "monthly"};
    for (int i = PERIOD_NONE; i <= PERIOD_MONTHLY; i++) {
        ck_assert_str_eq(period_kind_name((enum period_kind)i), want[i]);
        enum period_kind k = (enum period_kind)99;
        ck_assert_int_eq(period_kind_parse(want[i], &k), 0);
        ck_assert_int_eq(k, i);
        ck_assert_int_eq(period_kind_parse(period_kind_name((enum period_kind)i), &k), 0);
        ck_assert_int_eq(k, i);
    }
}
END_TEST

START_TEST(test_kind_bad_names)
{
    static const char *const bad[] = {
        "",       "Hourly",  "DAILY",  "hour",    "day",   "week",     "month", "yearly", "daily ",
        " daily", "daily\n", "none\t", "weeklyx", "hourl", "monthlyy", "0",     "1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum period_kind k = (enum period_kind)99;
        ck_assert_msg(period_kind_parse(bad[i], &k) == -EINVAL,
                      "period_kind_parse(\"%s\") accepted", bad[i]);
        ck_assert_int_eq(k, 99); /* untouched on error */
    }
}
END_TEST

/* ---- offsets -------------------------------------------------------------------------------- */

START_TEST(test_tz_parse_good)
{
    static const struct {
        const char *text;
        int minutes;
    } good[] = {
        {"UTC", 0},       {"Z", 0},         {"+00:00", 0},    {"-00:00", 0},
        {"+02:00", 120},  {"-05:30", -330}, {"+05:30", 330},  {"+05:45", 345},
        {"-10:00", -600}, {"+14:00", 840},  {"-14:00", -840}, {"+13:59", 839},
        {"-00:01", -1},   {"+00:59", 59},   {"-09:30", -570}, {"+12:45", 765},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct period_tz m = {.min = 12345};
        ck_assert_msg(period_tz_parse(good[i].text, &m) == 0, "period_tz_parse(\"%s\") rejected",
                      good[i].text);
        ck_assert_msg(m.min == good[i].minutes && !m.name[0],
                      "period_tz_parse(\"%s\") = %d, want %d", good[i].text, m.min,
                      good[i].minutes);
    }
}
END_TEST

START_TEST(test_tz_parse_bad)
{
    static const char *const bad[] = {
        "",
        "+14:01",
        "-14:01",
        "+15:00",
        "-15:00",
        "+99:00",
        "02:00",
        "+2:00",
        "+02:60",
        "+02:99",
        "+02:00x",
        "+0200",
        "+02",
        "+02:0",
        "+020:00",
        " +02:00",
        "+02:00 ",
        "*02:00",
        "+02-00",
        "+02:0x",
        "+0x:00",
        "+02:00\n",
        "Z ",
        /* sscanf's %d takes a sign or leading blanks: each field must be exactly two digits */
        "+ 2:00",
        "++2:00",
        "+-2:00",
        "+02:+5",
        "+02: 5",
        "+02:-0",
        "+-0:30",
        "-+1:00",
    };
    char accepted[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct period_tz m = {.min = 12345};
        int rc = period_tz_parse(bad[i], &m);
        if (rc != -EINVAL && used < sizeof accepted)
            used += (size_t)snprintf(accepted + used, sizeof accepted - used, " \"%s\"=%d/%d",
                                     bad[i], rc, m.min);
        else
            ck_assert_int_eq(m.min, 12345); /* untouched on error */
    }
    ck_assert_msg(used == 0, "period_tz_parse accepted (rc/minutes):%s", accepted);
}
END_TEST

START_TEST(test_tz_format)
{
    char out[16];
    period_tz_format(FX(0), out, sizeof out);
    ck_assert_str_eq(out, "UTC");
    period_tz_format(FX(120), out, sizeof out);
    ck_assert_str_eq(out, "+02:00");
    period_tz_format(FX(-330), out, sizeof out);
    ck_assert_str_eq(out, "-05:30");
    period_tz_format(FX(840), out, sizeof out);
    ck_assert_str_eq(out, "+14:00");
    period_tz_format(FX(-840), out, sizeof out);
    ck_assert_str_eq(out, "-14:00");
    period_tz_format(FX(5), out, sizeof out);
    ck_assert_str_eq(out, "+00:05");
    period_tz_format(FX(-5), out, sizeof out);
    ck_assert_str_eq(out, "-00:05");
    period_tz_format(FX(345), out, sizeof out);
    ck_assert_str_eq(out, "+05:45");

    /* exactly 8 bytes is enough (the header's minimum) */
    char small[8];
    period_tz_format(FX(-840), small, sizeof small);
    ck_assert_str_eq(small, "-14:00");

    /* format then parse is the identity over the whole range */
    for (int m = -PERIOD_TZ_MIN_MAX; m <= PERIOD_TZ_MIN_MAX; m++) {
        struct period_tz back = {.min = 12345};
        period_tz_format(FX(m), out, sizeof out);
        if (period_tz_parse(out, &back) != 0 || back.min != m || back.name[0])
            ck_abort_msg("tz %d formats as \"%s\", parses back as %d", m, out, back.min);
    }
}
END_TEST

/* ---- ids of known instants ------------------------------------------------------------------ */

START_TEST(test_id_known_instant)
{
    int64_t t = T_2026_11_30_1405;
    expect_id(PERIOD_HOURLY, 0, t, "2026-11-30T14");
    expect_id(PERIOD_DAILY, 0, t, "2026-11-30");
    expect_id(PERIOD_WEEKLY, 0, t, "2026-W49"); /* 2026-11-30 is the Monday of W49 */
    expect_id(PERIOD_MONTHLY, 0, t, "2026-11");
    expect_id(PERIOD_NONE, 0, t, "");

    /* the Sunday before is still W48 */
    expect_id(PERIOD_WEEKLY, 0, T_2026_11_30 - 1, "2026-W48");
    expect_id(PERIOD_WEEKLY, 0, T_2026_11_29, "2026-W48");

    /* +05:30: 19:35 local */
    expect_id(PERIOD_HOURLY, 330, t, "2026-11-30T19");
    expect_start(PERIOD_HOURLY, 330, t, 0, T_2026_11_30_1400 - 30 * 60000);
}
END_TEST

START_TEST(test_id_iso_weeks)
{
    /* 2026-01-01 is a Thursday: week 1 of 2026 */
    expect_id(PERIOD_WEEKLY, 0, T_2026_01_01_12, "2026-W01");
    expect_start(PERIOD_WEEKLY, 0, T_2026_01_01_12, 0, T_2025_12_29);
    expect_id(PERIOD_WEEKLY, 0, T_2025_12_29, "2026-W01");
    expect_id(PERIOD_WEEKLY, 0, T_2025_12_29 - 1, "2025-W52");
    /* 2021-01-03 is a Sunday: the last day of 2020-W53 */
    expect_id(PERIOD_WEEKLY, 0, T_2021_01_03_12, "2020-W53");
    expect_id(PERIOD_DAILY, 0, T_2021_01_03_12, "2021-01-03");
    expect_id(PERIOD_MONTHLY, 0, T_2021_01_03_12, "2021-01");
    /* 2024-12-30 is a Monday: week 1 of 2025 */
    expect_id(PERIOD_WEEKLY, 0, T_2024_12_30, "2025-W01");
    expect_id(PERIOD_WEEKLY, 0, T_2024_12_30 - 1, "2024-W52");
    expect_id(PERIOD_MONTHLY, 0, T_2024_12_30, "2024-12");
    /* 2027-01-01 is a Friday: still 2026-W53 */
    expect_id(PERIOD_WEEKLY, 0, T_2027_01_01_12, "2026-W53");
    expect_id(PERIOD_WEEKLY, 0, T_2026_12_28, "2026-W53");
    expect_id(PERIOD_WEEKLY, 0, T_2027_01_04 - 1, "2026-W53");
    expect_id(PERIOD_WEEKLY, 0, T_2027_01_04, "2027-W01");
    expect_start(PERIOD_WEEKLY, 0, T_2027_01_01_12, 0, T_2026_12_28);

    /* before the epoch: 1969-12-31 is a Wednesday in 1970-W01 (floor division of negatives) */
    expect_id(PERIOD_WEEKLY, 0, -1, "1970-W01");
    expect_id(PERIOD_DAILY, 0, -1, "1969-12-31");
    expect_id(PERIOD_HOURLY, 0, -1, "1969-12-31T23");
    expect_id(PERIOD_MONTHLY, 0, -1, "1969-12");
    expect_start(PERIOD_DAILY, 0, -1, 0, -MS_D);
    expect_start(PERIOD_HOURLY, 0, -1, 0, -MS_H);
    expect_start(PERIOD_WEEKLY, 0, -1, 0, -3 * MS_D); /* Monday 1969-12-29 */
    expect_start(PERIOD_MONTHLY, 0, -1, 0, -31 * MS_D);
}
END_TEST

/* 23:59:59.999 and 00:00:00.000 on either side of a month (and a year) boundary */
START_TEST(test_id_month_boundaries)
{
    /* 2026-11-30 / 2026-12-01 */
    expect_id(PERIOD_HOURLY, 0, T_2026_12_01 - 1, "2026-11-30T23");
    expect_id(PERIOD_DAILY, 0, T_2026_12_01 - 1, "2026-11-30");
    expect_id(PERIOD_MONTHLY, 0, T_2026_12_01 - 1, "2026-11");
    expect_id(PERIOD_WEEKLY, 0, T_2026_12_01 - 1, "2026-W49");
    expect_id(PERIOD_HOURLY, 0, T_2026_12_01, "2026-12-01T00");
    expect_id(PERIOD_DAILY, 0, T_2026_12_01, "2026-12-01");
    expect_id(PERIOD_MONTHLY, 0, T_2026_12_01, "2026-12");
    expect_id(PERIOD_WEEKLY, 0, T_2026_12_01, "2026-W49");
    /* 2026-10-31 / 2026-11-01 */
    expect_id(PERIOD_DAILY, 0, T_2026_11_01 - 1, "2026-10-31");
    expect_id(PERIOD_MONTHLY, 0, T_2026_11_01 - 1, "2026-10");
    expect_id(PERIOD_DAILY, 0, T_2026_11_01, "2026-11-01");
    expect_id(PERIOD_MONTHLY, 0, T_2026_11_01, "2026-11");
    /* 2026-12-31 / 2027-01-01 */
    expect_id(PERIOD_HOURLY, 0, T_2027_01_01 - 1, "2026-12-31T23");
    expect_id(PERIOD_DAILY, 0, T_2027_01_01 - 1, "2026-12-31");
    expect_id(PERIOD_MONTHLY, 0, T_2027_01_01 - 1, "2026-12");
    expect_id(PERIOD_HOURLY, 0, T_2027_01_01, "2027-01-01T00");
    expect_id(PERIOD_DAILY, 0, T_2027_01_01, "2027-01-01");
    expect_id(PERIOD_MONTHLY, 0, T_2027_01_01, "2027-01");

    /* a leap day */
    expect_id(PERIOD_DAILY, 0, T_2024_02_29_12, "2024-02-29");
    expect_id(PERIOD_MONTHLY, 0, T_2024_02_29_12, "2024-02");
    expect_start(PERIOD_DAILY, 0, T_2024_02_29_12, 1, T_2024_03_01);
    expect_id(PERIOD_DAILY, 0, T_2024_03_01 - 1, "2024-02-29");
    expect_id(PERIOD_MONTHLY, 0, T_2024_03_01 - 1, "2024-02");
    expect_id(PERIOD_DAILY, 0, T_2024_03_01, "2024-03-01");
    expect_id(PERIOD_MONTHLY, 0, T_2024_03_01, "2024-03");
    expect_start(PERIOD_MONTHLY, 0, T_2024_02_29_12, 1, T_2024_03_01);
    expect_id_start(PERIOD_DAILY, 0, "2024-02-29", T_2024_02_29_12 - 12 * MS_H);

    /* 2100 is not a leap year (divisible by 100, not by 400) */
    expect_id(PERIOD_DAILY, 0, T_2100_02_28_12, "2100-02-28");
    expect_start(PERIOD_DAILY, 0, T_2100_02_28_12, 1, T_2100_03_01);
    expect_id(PERIOD_DAILY, 0, T_2100_03_01 - 1, "2100-02-28");
    expect_id(PERIOD_DAILY, 0, T_2100_03_01, "2100-03-01");
    expect_id(PERIOD_MONTHLY, 0, T_2100_03_01 - 1, "2100-02");
    expect_id(PERIOD_MONTHLY, 0, T_2100_03_01, "2100-03");
    expect_start(PERIOD_MONTHLY, 0, T_2100_02_28_12, 1, T_2100_03_01);
    expect_id_rejected(PERIOD_DAILY, 0, "2100-02-29");
    expect_id_rejected(PERIOD_DAILY, 0, "2023-02-29");
    int64_t s;
    ck_assert_int_eq(period_id_start(PERIOD_DAILY, FX(0), "2000-02-29", &s), 0); /* 2000 is */
}
END_TEST

START_TEST(test_id_offsets)
{
    /* +02:00: 2026-11-30T22:30Z is 00:30 on 2026-12-01 local */
    expect_id(PERIOD_DAILY, 120, T_2026_11_30_2230, "2026-12-01");
    expect_id(PERIOD_MONTHLY, 120, T_2026_11_30_2230, "2026-12");
    expect_id(PERIOD_HOURLY, 120, T_2026_11_30_2230, "2026-12-01T00");
    expect_id(PERIOD_WEEKLY, 120, T_2026_11_30_2230, "2026-W49");
    expect_start(PERIOD_DAILY, 120, T_2026_11_30_2230, 0, T_2026_11_30_2200);
    expect_start(PERIOD_MONTHLY, 120, T_2026_11_30_2230, 0, T_2026_11_30_2200);
    expect_id(PERIOD_DAILY, 120, T_2026_11_30_2200 - 1, "2026-11-30");
    expect_id(PERIOD_MONTHLY, 120, T_2026_11_30_2200 - 1, "2026-11");
    expect_id_start(PERIOD_DAILY, 120, "2026-12-01", T_2026_11_30_2200);
    expect_id_start(PERIOD_MONTHLY, 120, "2026-12", T_2026_11_30_2200);

    /* -05:00: 2026-12-01T03:00Z is 22:00 on 2026-11-30 local */
    expect_id(PERIOD_DAILY, -300, T_2026_12_01_0300, "2026-11-30");
    expect_id(PERIOD_MONTHLY, -300, T_2026_12_01_0300, "2026-11");
    expect_id(PERIOD_HOURLY, -300, T_2026_12_01_0300, "2026-11-30T22");
    expect_start(PERIOD_DAILY, -300, T_2026_12_01_0300, 0, T_2026_11_30_0500);
    expect_start(PERIOD_DAILY, -300, T_2026_12_01_0300, 1, T_2026_11_30_0500 + MS_D);
    expect_id_start(PERIOD_DAILY, -300, "2026-11-30", T_2026_11_30_0500);

    /* the extremes */
    expect_id(PERIOD_DAILY, 840, T_2026_11_30 - 14 * MS_H, "2026-11-30");
    expect_id(PERIOD_DAILY, 840, T_2026_11_30 - 14 * MS_H - 1, "2026-11-29");
    expect_id(PERIOD_DAILY, -840, T_2026_11_30 + 14 * MS_H, "2026-11-30");
    expect_id(PERIOD_DAILY, -840, T_2026_11_30 + 14 * MS_H - 1, "2026-11-29");
}
END_TEST

/* ---- starts --------------------------------------------------------------------------------- */

START_TEST(test_start_deltas)
{
    int64_t t = T_2026_11_30_1405;
    expect_start(PERIOD_HOURLY, 0, t, -1, T_2026_11_30_1300);
    expect_start(PERIOD_HOURLY, 0, t, 0, T_2026_11_30_1400);
    expect_start(PERIOD_HOURLY, 0, t, 1, T_2026_11_30_1500);
    expect_start(PERIOD_HOURLY, 0, t, 12, T_2026_11_30_1400 + 12 * MS_H);

    expect_start(PERIOD_DAILY, 0, t, -1, T_2026_11_29);
    expect_start(PERIOD_DAILY, 0, t, 0, T_2026_11_30);
    expect_start(PERIOD_DAILY, 0, t, 1, T_2026_12_01);
    expect_start(PERIOD_DAILY, 0, t, 12, T_2026_11_30 + 12 * MS_D);

    expect_start(PERIOD_WEEKLY, 0, t, -1, T_2026_11_23);
    expect_start(PERIOD_WEEKLY, 0, t, 0, T_2026_11_30);
    expect_start(PERIOD_WEEKLY, 0, t, 1, T_2026_12_07);
    expect_start(PERIOD_WEEKLY, 0, t, 12, T_2026_11_30 + 84 * MS_D);
    expect_id(PERIOD_WEEKLY, 0, period_start(PERIOD_WEEKLY, FX(0), t, 12), "2027-W08");
    /* across the ISO year: 2026-W53 -> 2027-W01, 2026-W01 -> 2025-W52 */
    expect_start(PERIOD_WEEKLY, 0, T_2027_01_01_12, 1, T_2027_01_04);
    expect_id(PERIOD_WEEKLY, 0, period_start(PERIOD_WEEKLY, FX(0), T_2027_01_01_12, 1), "2027-W01");
    expect_id(PERIOD_WEEKLY, 0, period_start(PERIOD_WEEKLY, FX(0), T_2026_01_01_12, -1),
              "2025-W52");
    expect_id(PERIOD_WEEKLY, 0, period_start(PERIOD_WEEKLY, FX(0), T_2024_12_30, -1), "2024-W52");

    expect_start(PERIOD_MONTHLY, 0, t, -1, T_2026_10_01);
    expect_start(PERIOD_MONTHLY, 0, t, 0, T_2026_11_01);
    expect_start(PERIOD_MONTHLY, 0, t, 1, T_2026_12_01);
    expect_start(PERIOD_MONTHLY, 0, t, 2, T_2027_01_01); /* across the year */
    expect_start(PERIOD_MONTHLY, 0, t, 12, T_2027_11_01);
    expect_start(PERIOD_MONTHLY, 0, T_2027_01_01, -1, T_2026_12_01);
    expect_id(PERIOD_MONTHLY, 0, period_start(PERIOD_MONTHLY, FX(0), T_2027_01_01, -13), "2025-12");
    expect_id(PERIOD_MONTHLY, 0, period_start(PERIOD_MONTHLY, FX(0), t, -23), "2024-12");
    expect_id(PERIOD_MONTHLY, 0, period_start(PERIOD_MONTHLY, FX(0), t, -PERIOD_RETAIN_MAX),
              "1993-07");

    expect_start(PERIOD_NONE, 0, t, 0, INT64_MIN);
    expect_start(PERIOD_NONE, 0, t, 1, INT64_MIN);

    /* start(+1) is the end of the current period: its last millisecond still has the same id */
    for (enum period_kind k = PERIOD_HOURLY; k <= PERIOD_MONTHLY; k++) {
        char cur[PERIOD_ID_MAX], last[PERIOD_ID_MAX], next[PERIOD_ID_MAX];
        int64_t end = period_start(k, FX(0), t, 1);
        period_id(k, FX(0), t, cur);
        period_id(k, FX(0), end - 1, last);
        period_id(k, FX(0), end, next);
        ck_assert_str_eq(cur, last);
        ck_assert_str_ne(cur, next);
        ck_assert_int_eq(period_start(k, FX(0), end - 1, 0), period_start(k, FX(0), t, 0));
        ck_assert_int_eq(period_start(k, FX(0), end, 0), end);
    }
}
END_TEST

/* ---- ids back to starts --------------------------------------------------------------------- */

START_TEST(test_id_start_round_trip)
{
    expect_id_start(PERIOD_HOURLY, 0, "2026-11-30T14", T_2026_11_30_1400);
    expect_id_start(PERIOD_DAILY, 0, "2026-11-30", T_2026_11_30);
    expect_id_start(PERIOD_WEEKLY, 0, "2026-W49", T_2026_11_30);
    expect_id_start(PERIOD_WEEKLY, 0, "2026-W48", T_2026_11_23);
    expect_id_start(PERIOD_WEEKLY, 0, "2026-W01", T_2025_12_29);
    expect_id_start(PERIOD_WEEKLY, 0, "2026-W53", T_2026_12_28); /* 2026 starts on a Thursday */
    expect_id_start(PERIOD_WEEKLY, 0, "2027-W01", T_2027_01_04);
    expect_id_start(PERIOD_WEEKLY, 0, "2025-W01", T_2024_12_30);
    expect_id_start(PERIOD_WEEKLY, 0, "2020-W53", T_2021_01_03_12 - 12 * MS_H - 6 * MS_D);
    expect_id_start(PERIOD_MONTHLY, 0, "2026-11", T_2026_11_01);
    expect_id_start(PERIOD_MONTHLY, 0, "2027-01", T_2027_01_01);
    expect_id_start(PERIOD_HOURLY, 330, "2026-11-30T19", T_2026_11_30_1400 - 30 * 60000);
    expect_id_start(PERIOD_HOURLY, -600, "2026-11-30T04", T_2026_11_30_1400);

    /* every kind, every offset: the start of t's period names t's id and parses back */
    static const int tzs[] = {0, 120, -300, 330, -600, 840, -840, 345};
    static const int64_t ts[] = {T_2026_11_30_1405, T_2027_01_01_12, T_2021_01_03_12,
                                 T_2024_02_29_12,   T_2100_02_28_12, T_2026_01_01_12};
    for (size_t i = 0; i < sizeof tzs / sizeof tzs[0]; i++)
        for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
            for (enum period_kind k = PERIOD_HOURLY; k <= PERIOD_MONTHLY; k++) {
                char id[PERIOD_ID_MAX];
                period_id(k, FX(tzs[i]), ts[j], id);
                expect_id_start(k, tzs[i], id, period_start(k, FX(tzs[i]), ts[j], 0));
            }
}
END_TEST

START_TEST(test_id_start_rejects)
{
    /* no such day / month / week / hour */
    expect_id_rejected(PERIOD_DAILY, 0, "2026-02-30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-02-29");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-04-31");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-00");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-32");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-00-10");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-13-01");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-13");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-00");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W54");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W00");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2025-W53"); /* 2025 has 52 ISO weeks */
    expect_id_rejected(PERIOD_WEEKLY, 0, "2027-W53");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W99");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T24");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-02-30T10");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T99");

    /* not exactly the canonical text */
    expect_id_rejected(PERIOD_DAILY, 0, "2026-1-01");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-1");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-1-1");
    expect_id_rejected(PERIOD_DAILY, 0, "26-11-30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026/11/30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-3 ");
    expect_id_rejected(PERIOD_DAILY, 0, " 2026-11-30");
    expect_id_rejected(PERIOD_DAILY, 0, "+026-11-30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-+1-30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-+3");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-1 -30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026- 1-30");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-30x");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-30 ");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-30\n");
    expect_id_rejected(PERIOD_DAILY, 0, "");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T1");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T14x");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30 14");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30t14");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T-1");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30T+1");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W4");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W049");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-w49");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026W49");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W49x");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W+9");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-W 9");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-1");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-011");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-11x");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-+1");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-11-");

    /* another kind's id */
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11-30");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-11");
    expect_id_rejected(PERIOD_HOURLY, 0, "2026-W49");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11-30T14");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-11");
    expect_id_rejected(PERIOD_DAILY, 0, "2026-W49");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-11-30");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-11");
    expect_id_rejected(PERIOD_WEEKLY, 0, "2026-11-30T14");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-11-30");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-W49");
    expect_id_rejected(PERIOD_MONTHLY, 0, "2026-11-30T14");
    expect_id_rejected(PERIOD_NONE, 0, "");
    expect_id_rejected(PERIOD_NONE, 0, "2026-11-30");
}
END_TEST

/* ---- the brute-force property --------------------------------------------------------------- */

static const int k_prop_tz[] = {0, 330, -600};
#define N_PROP_TZ ((int)(sizeof(k_prop_tz) / sizeof(k_prop_tz[0])))
#define N_PROP_KINDS (PERIOD_MONTHLY - PERIOD_HOURLY + 1)

/* An independent id from libc: gmtime_r of the local instant, strftime (%G-W%V for ISO weeks). */
static void libc_id(enum period_kind k, int tz, int64_t t, char *out, size_t len)
{
    int64_t local_ms = t + (int64_t)tz * 60000;
    time_t secs = (time_t)(local_ms >= 0 ? local_ms / 1000 : -((-local_ms + 999) / 1000));
    struct tm tm;
    gmtime_r(&secs, &tm);
    switch (k) {
    case PERIOD_HOURLY:
        strftime(out, len, "%Y-%m-%dT%H", &tm);
        break;
    case PERIOD_DAILY:
        strftime(out, len, "%Y-%m-%d", &tm);
        break;
    case PERIOD_WEEKLY:
        strftime(out, len, "%G-W%V", &tm);
        break;
    case PERIOD_MONTHLY:
        strftime(out, len, "%Y-%m", &tm);
        break;
    default:
        out[0] = '\0';
    }
}

/*
 * For every hour of 2024-01-01 .. 2028-12-31 (and the millisecond before it): start(t,0) <= t <
 * start(t,+1), id(start(t,0)) == id(t), id_start(id(t)) == start(t,0), id(start(t,+1)) != id(t),
 * and id(t) agrees with libc.
 */
START_TEST(test_property_every_hour)
{
    enum period_kind k = (enum period_kind)(PERIOD_HOURLY + _i % N_PROP_KINDS);
    int tz = k_prop_tz[_i / N_PROP_KINDS];
    long n = 0;
    for (int64_t h = T_2024_01_01; h < T_2029_01_01; h += MS_H) {
        for (int e = 0; e < 2; e++) {
            int64_t t = h - e; /* on the hour, and the millisecond before it */
            char id[PERIOD_ID_MAX], id_s[PERIOD_ID_MAX], id_n[PERIOD_ID_MAX], oracle[32];
            int64_t s = period_start(k, FX(tz), t, 0);
            int64_t nx = period_start(k, FX(tz), t, 1);
            int64_t pv = period_start(k, FX(tz), t, -1);
            if (!(pv < s && s <= t && t < nx))
                ck_abort_msg("%s tz %d t %lld: prev %lld start %lld next %lld", period_kind_name(k),
                             tz, (long long)t, (long long)pv, (long long)s, (long long)nx);
            period_id(k, FX(tz), t, id);
            period_id(k, FX(tz), s, id_s);
            period_id(k, FX(tz), nx, id_n);
            if (strcmp(id, id_s) != 0)
                ck_abort_msg("%s tz %d t %lld: id %s but start %lld has id %s", period_kind_name(k),
                             tz, (long long)t, id, (long long)s, id_s);
            if (strcmp(id, id_n) == 0)
                ck_abort_msg("%s tz %d t %lld: next start %lld has the same id %s",
                             period_kind_name(k), tz, (long long)t, (long long)nx, id);
            libc_id(k, tz, t, oracle, sizeof oracle);
            if (strcmp(id, oracle) != 0)
                ck_abort_msg("%s tz %d t %lld: id %s, libc says %s", period_kind_name(k), tz,
                             (long long)t, id, oracle);
            int64_t back = 12345;
            int rc = period_id_start(k, FX(tz), id, &back);
            if (rc != 0 || back != s)
                ck_abort_msg("%s tz %d id %s: id_start = %d / %lld, want start %lld",
                             period_kind_name(k), tz, id, rc, (long long)back, (long long)s);
            if (period_start(k, FX(tz), nx, 0) != nx || period_start(k, FX(tz), nx, -1) != s ||
                period_start(k, FX(tz), s, 0) != s)
                ck_abort_msg("%s tz %d t %lld: starts are not stable", period_kind_name(k), tz,
                             (long long)t);
            n++;
        }
    }
    ck_assert_int_eq(n, 2 * (T_2029_01_01 - T_2024_01_01) / MS_H); /* 43,848 hours */
}
END_TEST

Suite *period_suite(void)
{
    Suite *s = suite_create("period");

    TCase *tc = tcase_create("kind");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_kind_round_trip);
    tcase_add_test(tc, test_kind_bad_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("tz");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_tz_parse_good);
    tcase_add_test(tc, test_tz_parse_bad);
    tcase_add_test(tc, test_tz_format);
    suite_add_tcase(s, tc);

    tc = tcase_create("id");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_id_known_instant);
    tcase_add_test(tc, test_id_iso_weeks);
    tcase_add_test(tc, test_id_month_boundaries);
    tcase_add_test(tc, test_id_offsets);
    suite_add_tcase(s, tc);

    tc = tcase_create("start");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_start_deltas);
    tcase_add_test(tc, test_id_start_round_trip);
    tcase_add_test(tc, test_id_start_rejects);
    suite_add_tcase(s, tc);

    tc = tcase_create("property");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_property_every_hour, 0, N_PROP_TZ * N_PROP_KINDS);
    suite_add_tcase(s, tc);

    return s;
}
