/*
 * test_tzif.c -- service/lib/tzif.h against the system's zoneinfo files (Debian's tzdata), and
 * period.h's periods in IANA zones.
 *
 * Two independent references:
 *   - instants hard-coded below, computed with python3's zoneinfo when this test was written
 *     (the earliest instant whose local time is the day's 00:00:00, and offsets);
 *   - glibc's own TZif reader, asked through `TZ=<zone> date -f <file>` at run time: every
 *     half hour of 2026 and instants from 1900 to 2300 (past the files' tables: the footer's
 *     rule), offsets compared one by one; and for every local day of 2026 the instant before a
 *     computed day start must read as the day before, the start itself as that day or later.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "civil.h"
#include "period.h"
#include "suites.h"
#include "tzif.h"

static struct tzif_zone *load(const char *name)
{
    struct tzif_zone *z = NULL;
    int rc = tzif_load(NULL, name, &z);
    ck_assert_msg(rc == 0, "tzif_load(%s) = %d (is Debian's tzdata installed?)", name, rc);
    return z;
}

/* ---------------------------------------------------------------- names */

START_TEST(test_names)
{
    static const char *const good[] = {
        "Europe/Paris", "UTC",        "America/Argentina/Buenos_Aires",
        "Etc/GMT+5",    "Etc/GMT-14", "America/Port-au-Prince",
        "posixrules",   "EST5EDT"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(tzif_name_valid(good[i]), "%s refused", good[i]);
    static const char *const bad[] = {"",
                                      "/etc/passwd",
                                      "../etc/passwd",
                                      "Europe/../../etc/passwd",
                                      "Europe/..",
                                      "Europe/.hidden",
                                      "Europe//Paris",
                                      "Europe/Paris/",
                                      "./Europe/Paris",
                                      "-Europe",
                                      "Europe/-x",
                                      "1Europe",
                                      "Europe/Paris ",
                                      "Europe\\Paris",
                                      "Europe/Par%is",
                                      "zone.tab",
                                      "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!tzif_name_valid(bad[i]), "%s accepted", bad[i]);
    struct tzif_zone *z = NULL;
    ck_assert_int_eq(tzif_load(NULL, "../../etc/passwd", &z), -EINVAL);
    ck_assert_int_eq(tzif_load(NULL, "Europe", &z), -ENOENT); /* a directory */
    ck_assert_int_eq(tzif_load(NULL, "Mars/Olympus_Mons", &z), -ENOENT);
    if (access(TZIF_DIR_DEFAULT "/right/Europe/Paris", R_OK) == 0) /* leap seconds: refused */
        ck_assert_int_eq(tzif_load(NULL, "right/Europe/Paris", &z), -EBADMSG);
    ck_assert_ptr_null(z);
}
END_TEST

/* ---------------------------------------------------------------- known instants */

/* The start of the local day holding t, and of the next one (python3 zoneinfo values). */
static void expect_day(const struct tzif_zone *z, int64_t t, int64_t start, int64_t next)
{
    int64_t got = tzif_unit_start(z, TZIF_DAY, t, 0, NULL);
    int64_t got_next = tzif_unit_start(z, TZIF_DAY, t, 1, NULL);
    ck_assert_msg(got == start && got_next == next,
                  "%s: day of %" PRId64 " = [%" PRId64 ", %" PRId64 "); want [%" PRId64 ", %" PRId64
                  ")",
                  tzif_name(z), t, got, got_next, start, next);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_DAY, next, -1, NULL), start);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_DAY, next - 1, 0, NULL), start);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_DAY, start, 0, NULL), start);
    ck_assert_int_eq(
        tzif_wall_start(z, tzif_unit_start(z, TZIF_DAY, t, 0, NULL) + tzif_offset(z, start)),
        start);
}

START_TEST(test_paris_2026)
{
    struct tzif_zone *z = load("Europe/Paris");
    ck_assert_str_eq(tzif_name(z), "Europe/Paris");
    /* 2026-03-29T01:00:00Z: 02:00 CET -> 03:00 CEST */
    ck_assert_int_eq(tzif_offset(z, 1774746000 - 1), 3600);
    ck_assert_int_eq(tzif_offset(z, 1774746000), 7200);
    int64_t at;
    int32_t off;
    ck_assert_int_eq(tzif_next_change(z, 1774746000 - 1, &at, &off), 1);
    ck_assert_int_eq(at, 1774746000);
    ck_assert_int_eq(off, 7200);
    /* 2026-10-25T01:00:00Z: 03:00 CEST -> 02:00 CET */
    ck_assert_int_eq(tzif_offset(z, 1792890000 - 1), 7200);
    ck_assert_int_eq(tzif_offset(z, 1792890000), 3600);
    /* 2026-03-29: 2026-03-28T23:00Z .. 2026-03-29T22:00Z, 23 hours */
    expect_day(z, 1774746000, 1774738800, 1774821600);
    ck_assert_int_eq(1774821600 - 1774738800, 23 * 3600);
    /* 2026-03-28 (a whole CET day) */
    expect_day(z, 1774738800 - 1, 1774652400, 1774738800);
    /* 2026-10-25: 2026-10-24T22:00Z .. 2026-10-25T23:00Z, 25 hours */
    expect_day(z, 1792890000, 1792879200, 1792969200);
    ck_assert_int_eq(1792969200 - 1792879200, 25 * 3600);
    /* local 02:30 on 2026-03-29 never happens: the clock reaches it at 03:00 CEST (01:00Z) */
    int64_t wall_0230 = (civil_days(2026, 3, 29) * 86400) + 2 * 3600 + 1800;
    ck_assert_int_eq(tzif_wall_start(z, wall_0230), 1774746000);
    /* local 02:30 on 2026-10-25 happens twice: the first, 00:30Z */
    wall_0230 = (civil_days(2026, 10, 25) * 86400) + 2 * 3600 + 1800;
    ck_assert_int_eq(tzif_wall_start(z, wall_0230), 1792890000 - 1800);
    /* the week of Sunday 2026-03-29: Monday 2026-03-23 00:00 CET (2026-03-22T23:00Z) to Monday
     * 2026-03-30 00:00 CEST (2026-03-29T22:00Z); April 2026: 2026-03-31T22:00Z */
    int64_t wall;
    ck_assert_int_eq(tzif_unit_start(z, TZIF_WEEK, 1774746000, 0, &wall), 1774220400);
    ck_assert_int_eq(wall, civil_days(2026, 3, 23) * 86400);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_WEEK, 1774746000, 1, NULL), 1774821600);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_MONTH, 1774746000, 1, &wall), 1774994400);
    ck_assert_int_eq(wall, civil_days(2026, 4, 1) * 86400);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_MONTH, 1774746000, 0, NULL), 1772319600);
    /* hours: 01:00 CET (00:00Z) .. 03:00 CEST (01:00Z): the hour 02 is skipped, so the hour
     * before 03:00 CEST is 01:00 CET; on 2026-10-25 the hour 02 lasts two (00:00Z .. 02:00Z) */
    ck_assert_int_eq(tzif_unit_start(z, TZIF_HOUR, 1774746000, -1, &wall), 1774746000 - 3600);
    ck_assert_int_eq(wall, civil_days(2026, 3, 29) * 86400 + 3600);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_HOUR, 1792890000 + 1800, 0, &wall), 1792890000 - 3600);
    ck_assert_int_eq(wall, civil_days(2026, 10, 25) * 86400 + 2 * 3600);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_HOUR, 1792890000 + 1800, 1, NULL), 1792890000 + 3600);
    tzif_free(z);
}
END_TEST

START_TEST(test_other_zones)
{
    struct tzif_zone *z = load("America/New_York");
    /* 2026-03-08 is 23 hours (05:00Z .. 04:00Z), 2026-11-01 25 (04:00Z .. 05:00Z) */
    expect_day(z, 1772946000 + 10 * 3600, 1772946000, 1773028800);
    expect_day(z, 1793505600 + 10 * 3600, 1793505600, 1793595600);
    ck_assert_int_eq(tzif_offset(z, 1773028800), -4 * 3600);
    tzif_free(z);

    z = load("Australia/Lord_Howe"); /* +10:30, half an hour of DST (+11:00) */
    ck_assert_int_eq(tzif_offset(z, 1775314800 - 1), 39600); /* 2026-04-04T15:00Z */
    ck_assert_int_eq(tzif_offset(z, 1775314800), 37800);
    ck_assert_int_eq(tzif_offset(z, 1791041400 - 1), 37800); /* 2026-10-03T15:30Z */
    ck_assert_int_eq(tzif_offset(z, 1791041400), 39600);
    expect_day(z, 1775314800, 1775307600, 1775395800);            /* 24.5 hours */
    expect_day(z, 1791041400, 1791034200, 1791118800);            /* 23.5 hours */
    ck_assert_int_eq(tzif_offset(z, INT64_C(2524608000)), 39600); /* 2050-01-01, the rule */
    tzif_free(z);

    z = load("Asia/Kolkata");
    ck_assert_int_eq(tzif_offset(z, 1774746000), 19800);
    expect_day(z, 1774746000, 1774722600, 1774722600 + 86400);
    ck_assert_int_eq(tzif_next_change(z, 1774746000, &(int64_t){0}, &(int32_t){0}), 0);
    tzif_free(z);

    z = load("UTC");
    ck_assert_int_eq(tzif_offset(z, 1774746000), 0);
    expect_day(z, 1774746000, 1774742400, 1774742400 + 86400);
    tzif_free(z);

    /* Sao Paulo 2018-11-04: the clock went from 00:00 to 01:00, so the day began at 01:00 -02
     * (03:00Z) and lasted 23 hours */
    z = load("America/Sao_Paulo");
    expect_day(z, 1541300400 + 3600, 1541300400, 1541383200);
    tzif_free(z);

    /* Apia skipped 2011-12-30 whole: the day after the 29th is the 31st */
    z = load("Pacific/Apia");
    int64_t wall;
    ck_assert_int_eq(tzif_unit_start(z, TZIF_DAY, 1325152800 + 3600, 1, &wall), 1325239200);
    ck_assert_int_eq(wall, civil_days(2011, 12, 31) * 86400);
    ck_assert_int_eq(tzif_unit_start(z, TZIF_DAY, 1325239200, -1, &wall), 1325152800);
    ck_assert_int_eq(wall, civil_days(2011, 12, 29) * 86400);
    tzif_free(z);
}
END_TEST

START_TEST(test_past_the_table)
{
    /* 2100: past the table of any tzdata build; the footer "CET-1CEST,M3.5.0,M10.5.0/3" */
    struct tzif_zone *z = load("Europe/Paris");
    ck_assert_int_eq(tzif_offset(z, INT64_C(4109878800) - 1), 3600); /* 2100-03-28T01:00Z */
    ck_assert_int_eq(tzif_offset(z, INT64_C(4109878800)), 7200);
    ck_assert_int_eq(tzif_offset(z, INT64_C(4128627600) - 1), 7200); /* 2100-10-31T01:00Z */
    ck_assert_int_eq(tzif_offset(z, INT64_C(4128627600)), 3600);
    expect_day(z, INT64_C(4109878800), INT64_C(4109871600), INT64_C(4109954400));
    expect_day(z, INT64_C(4128627600), INT64_C(4128616800), INT64_C(4128706800));
    int64_t at;
    int32_t off;
    ck_assert_int_eq(tzif_next_change(z, INT64_C(4109878800) - 1, &at, &off), 1);
    ck_assert_int_eq(at, INT64_C(4109878800));
    ck_assert_int_eq(off, 7200);
    tzif_free(z);
}
END_TEST

/* ---------------------------------------------------------------- against glibc (date) */

/* The outputs of `TZ=zone date -f in +fmt` for the instants t[0..n) into out (lines). */
static char *date_lines(const char *zone, const int64_t *t, size_t n, const char *fmt)
{
    char in[] = "/tmp/rankd-tzif-XXXXXX";
    int fd = mkstemp(in);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "@%" PRId64 "\n", t[i]);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "TZ=%s date -f %s '+%s'", zone, in, fmt);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = n * 32 + 64, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - 1 - len, p)) > 0)
        len += got;
    buf[len] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    unlink(in);
    return buf;
}

/* "+0130" / "-0330" as seconds (date's %z drops seconds: LMT offsets are compared in minutes) */
static int32_t z_secs(const char *s)
{
    int v = atoi(s + 1);
    int32_t secs = (v / 100) * 3600 + (v % 100) * 60;
    return s[0] == '-' ? -secs : secs;
}

static void against_date(const char *zone)
{
    struct tzif_zone *z = load(zone);
    enum { HALF_HOURS = 365 * 48, SPREAD = 4000 };
    int64_t *t = malloc(sizeof(*t) * (HALF_HOURS + SPREAD));
    size_t n = 0;
    for (int i = 0; i < HALF_HOURS; i++)
        t[n++] = INT64_C(1767225600) + INT64_C(1800) * i; /* 2026 */
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < SPREAD; i++) { /* 1900 .. 2300 */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        t[n++] = INT64_C(-2208988800) + (int64_t)(x % UINT64_C(12622780800));
    }
    char *out = date_lines(zone, t, n, "%z");
    char *line = out, *next;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++, line = next) {
        next = strchr(line, '\n');
        ck_assert_ptr_nonnull(next);
        *next++ = '\0';
        int32_t want = z_secs(line), got = tzif_offset(z, t[i]);
        if (got / 60 != want / 60 && bad++ < 5)
            fprintf(stderr, "%s at %" PRId64 ": offset %d, date says %s\n", zone, t[i], got, line);
    }
    ck_assert_msg(bad == 0, "%s: %zu offsets differ from date's", zone, bad);
    free(out);

    /* every local day of 2026: the second before its computed start reads as an earlier date,
     * the start as its own date or later */
    int64_t *edges = malloc(sizeof(*edges) * 2 * 366);
    char want[366][16];
    n = 0;
    for (int d = 0; d < 365; d++) {
        int64_t y;
        int m, dd;
        civil_date(civil_days(2026, 1, 1) + d, &y, &m, &dd);
        snprintf(want[d], sizeof(want[d]), "%04d-%02d-%02d", (int)y, m, dd);
        int64_t start = tzif_wall_start(z, (civil_days(2026, 1, 1) + d) * 86400);
        edges[n++] = start - 1;
        edges[n++] = start;
    }
    out = date_lines(zone, edges, n, "%F");
    line = out;
    for (int d = 0; d < 365; d++) {
        char *a = line, *b = strchr(a, '\n') + 1;
        line = strchr(b, '\n') + 1;
        a[10] = b[10] = '\0';
        ck_assert_msg(strcmp(a, want[d]) < 0 && strcmp(b, want[d]) >= 0,
                      "%s: the day %s starts at %" PRId64 "; date reads %s then %s", zone, want[d],
                      edges[2 * d + 1], a, b);
    }
    free(out);
    free(edges);
    free(t);
    tzif_free(z);
}

START_TEST(test_against_date)
{
    static const char *const zones[] = {
        "Europe/Paris", "America/New_York",  "Australia/Lord_Howe", "Asia/Kolkata",
        "UTC",          "America/Sao_Paulo", "Pacific/Chatham",     "America/Santiago"};
    for (size_t i = 0; i < sizeof zones / sizeof zones[0]; i++)
        against_date(zones[i]);
}
END_TEST

/* ---------------------------------------------------------------- the file format */

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char *buf = malloc(TZIF_FILE_MAX);
    *len = fread(buf, 1, TZIF_FILE_MAX, f);
    fclose(f);
    return buf;
}

START_TEST(test_format)
{
    size_t len;
    unsigned char *buf = slurp(TZIF_DIR_DEFAULT "/Europe/Paris", &len);
    struct tzif_zone *z = NULL;
    /* every truncation is refused, none crashes */
    for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 97)
        ck_assert_int_eq(tzif_parse(buf, cut, "x", &z), -EBADMSG);
    /* the version 1 part alone (32-bit data, no footer), marked version 1: 2026 as before */
    buf[4] = 0;
    ck_assert_int_eq(tzif_parse(buf, len, "v1", &z), 0);
    ck_assert_int_eq(tzif_offset(z, 1774746000), 7200);
    expect_day(z, 1792890000, 1792879200, 1792969200);
    tzif_free(z);
    buf[4] = '2';
    /* a damaged magic */
    buf[0] = 'X';
    ck_assert_int_eq(tzif_parse(buf, len, "x", &z), -EBADMSG);
    free(buf);
}
END_TEST

START_TEST(test_cache)
{
    struct tzif_cache *c = tzif_cache_new(NULL);
    const struct tzif_zone *a = NULL, *b = NULL;
    ck_assert_int_eq(tzif_cache_get(c, "Europe/Paris", &a), 0);
    ck_assert_int_eq(tzif_cache_get(c, "Europe/Paris", &b), 0);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(tzif_cache_get(c, "Asia/Kolkata", &b), 0);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(tzif_cache_get(c, "Nowhere/Land", &b), -ENOENT);
    ck_assert_int_eq(tzif_cache_get(c, "../x", &b), -EINVAL);
    tzif_cache_free(c);
    ck_assert_int_eq(tzif_cache_get(NULL, "Europe/Paris", &b), -ENOENT);
}
END_TEST

/* ---------------------------------------------------------------- periods in a zone */

START_TEST(test_periods_in_zone)
{
    struct tzif_cache *c = tzif_cache_new(NULL);
    struct period_tz tz;
    ck_assert_int_eq(period_tz_parse("Europe/Paris", &tz), 0);
    ck_assert_int_eq(period_tz_bind(&tz, c), 0);
    char id[PERIOD_ID_MAX], text[PERIOD_TZ_TEXT_MAX];
    period_tz_text(&tz, text, sizeof(text));
    ck_assert_str_eq(text, "Europe/Paris");
    struct period_tz back;
    ck_assert_int_eq(period_tz_field(text, &back), 0);
    ck_assert(period_tz_same(&tz, &back));
    ck_assert_int_eq(period_tz_field("-330", &back), 0);
    ck_assert_int_eq(back.min, -330);
    ck_assert(!period_tz_same(&tz, &back));
    ck_assert_int_eq(period_tz_field("../x", &back), -EINVAL);
    ck_assert_int_eq(period_tz_field("9999", &back), -EINVAL);

    const int64_t ms = 1000;
    period_id(PERIOD_DAILY, &tz, 1774738800 * ms, id); /* 2026-03-28T23:00Z */
    ck_assert_str_eq(id, "2026-03-29");
    period_id(PERIOD_DAILY, &tz, 1774738800 * ms - 1, id);
    ck_assert_str_eq(id, "2026-03-28");
    ck_assert_int_eq(period_start(PERIOD_DAILY, &tz, 1774800000 * ms, 1), 1774821600 * ms);
    ck_assert_int_eq(period_start(PERIOD_DAILY, &tz, 1774800000 * ms, 0), 1774738800 * ms);
    int64_t start;
    ck_assert_int_eq(period_id_start(PERIOD_DAILY, &tz, "2026-10-25", &start), 0);
    ck_assert_int_eq(start, 1792879200 * ms);
    ck_assert_int_eq(period_start(PERIOD_DAILY, &tz, start, 1) - start, 25 * 3600 * ms);
    /* hourly: 02 never happens on 2026-03-29, happens for two hours on 2026-10-25 */
    ck_assert_int_eq(period_id_start(PERIOD_HOURLY, &tz, "2026-03-29T02", &start), -EINVAL);
    ck_assert_int_eq(period_id_start(PERIOD_HOURLY, &tz, "2026-03-29T03", &start), 0);
    ck_assert_int_eq(start, 1774746000 * ms);
    ck_assert_int_eq(period_id_start(PERIOD_HOURLY, &tz, "2026-10-25T02", &start), 0);
    ck_assert_int_eq(period_start(PERIOD_HOURLY, &tz, start, 1) - start, 2 * 3600 * ms);
    period_id(PERIOD_HOURLY, &tz, 1792890000 * ms + 1, id); /* the second 02:00 */
    ck_assert_str_eq(id, "2026-10-25T02");
    ck_assert_int_eq(period_id_start(PERIOD_WEEKLY, &tz, "2026-W14", &start), 0);
    ck_assert_int_eq(start, 1774821600 * ms); /* Monday 2026-03-30 00:00 CEST */
    ck_assert_int_eq(period_id_start(PERIOD_MONTHLY, &tz, "2026-04", &start), 0);
    ck_assert_int_eq(start, 1774994400 * ms);

    /* every start of 2026 names itself back, and periods tile the year without gaps */
    static const enum period_kind kinds[] = {PERIOD_HOURLY, PERIOD_DAILY, PERIOD_WEEKLY,
                                             PERIOD_MONTHLY};
    for (size_t k = 0; k < 4; k++) {
        int64_t s = period_start(kinds[k], &tz, 1767225600 * ms, 0);
        for (int i = 0; i < 400 && s < 1798761600 * ms; i++) {
            int64_t nx = period_start(kinds[k], &tz, s, 1);
            ck_assert_int_gt(nx, s);
            ck_assert_int_eq(period_start(kinds[k], &tz, nx - 1, 0), s);
            ck_assert_int_eq(period_start(kinds[k], &tz, nx, -1), s);
            period_id(kinds[k], &tz, s, id);
            ck_assert_int_eq(period_id_start(kinds[k], &tz, id, &start), 0);
            ck_assert_int_eq(start, s);
            s = nx;
        }
    }
    /* a name that is no zone does not bind */
    ck_assert_int_eq(period_tz_parse("Mars/Olympus_Mons", &tz), 0);
    ck_assert_int_eq(period_tz_bind(&tz, c), -ENOENT);
    ck_assert_ptr_null(tz.zone);
    tzif_cache_free(c);
}
END_TEST

Suite *tzif_suite(void)
{
    Suite *s = suite_create("tzif");
    TCase *tc = tcase_create("zones");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_paris_2026);
    tcase_add_test(tc, test_other_zones);
    tcase_add_test(tc, test_past_the_table);
    tcase_add_test(tc, test_against_date);
    tcase_add_test(tc, test_format);
    tcase_add_test(tc, test_cache);
    tcase_add_test(tc, test_periods_in_zone);
    suite_add_tcase(s, tc);
    return s;
}
