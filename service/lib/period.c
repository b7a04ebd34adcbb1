/* period.c -- calendar periods; see period.h. */
#include "period.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MS_HOUR INT64_C(3600000)
#define MS_DAY INT64_C(86400000)

static const char *const names[] = {"none", "hourly", "daily", "weekly", "monthly"};

int period_kind_parse(const char *name, enum period_kind *out)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (enum period_kind)i;
            return 0;
        }
    return -EINVAL;
}

const char *period_kind_name(enum period_kind k)
{
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "none";
}

int period_tz_parse(const char *text, int *minutes)
{
    if (strcmp(text, "UTC") == 0 || strcmp(text, "Z") == 0) {
        *minutes = 0;
        return 0;
    }
    /* exactly [+-]HH:MM, digits only (sscanf would also take blanks and signs) */
    if (strlen(text) != 6 || (text[0] != '+' && text[0] != '-') || text[3] != ':')
        return -EINVAL;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (text[i] < '0' || text[i] > '9'))
            return -EINVAL;
    int h = (text[1] - '0') * 10 + (text[2] - '0');
    int m = (text[4] - '0') * 10 + (text[5] - '0');
    char sign = text[0];
    if (h > 14 || m > 59)
        return -EINVAL;
    int v = h * 60 + m;
    if (v > PERIOD_TZ_MIN_MAX)
        return -EINVAL;
    *minutes = sign == '-' ? -v : v;
    return 0;
}

void period_tz_format(int minutes, char *out, size_t len)
{
    if (minutes == 0) {
        snprintf(out, len, "UTC");
        return;
    }
    int a = minutes < 0 ? -minutes : minutes;
    snprintf(out, len, "%c%02d:%02d", minutes < 0 ? '-' : '+', a / 60, a % 60);
}

/* Days since 1970-01-01 of y-m-d (Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* y-m-d of a day count (Hinnant's civil_from_days). */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Monday = 0 .. Sunday = 6; 1970-01-01 was a Thursday. */
static int weekday(int64_t days)
{
    return (int)(((days % 7) + 7 + 3) % 7);
}

int64_t period_start(enum period_kind k, int tz_min, int64_t t_ms, int delta)
{
    int64_t off = (int64_t)tz_min * 60000;
    int64_t local = t_ms + off;
    int64_t days = floor_div(local, MS_DAY);
    switch (k) {
    case PERIOD_HOURLY:
        return (floor_div(local, MS_HOUR) + delta) * MS_HOUR - off;
    case PERIOD_DAILY:
        return (days + delta) * MS_DAY - off;
    case PERIOD_WEEKLY:
        return (days - weekday(days) + 7 * (int64_t)delta) * MS_DAY - off;
    case PERIOD_MONTHLY: {
        int64_t y;
        int m, d;
        civil_from_days(days, &y, &m, &d);
        int64_t months = y * 12 + (m - 1) + delta;
        return days_from_civil(floor_div(months, 12),
                               (int)(months - floor_div(months, 12) * 12) + 1, 1) *
                   MS_DAY -
               off;
    }
    default:
        return INT64_MIN;
    }
}

void period_id(enum period_kind k, int tz_min, int64_t t_ms, char out[PERIOD_ID_MAX])
{
    int64_t local = t_ms + (int64_t)tz_min * 60000;
    int64_t days = floor_div(local, MS_DAY);
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    switch (k) {
    case PERIOD_HOURLY:
        snprintf(out, PERIOD_ID_MAX, "%04lld-%02d-%02dT%02d", (long long)y, m, d,
                 (int)(floor_div(local, MS_HOUR) - days * 24));
        break;
    case PERIOD_DAILY:
        snprintf(out, PERIOD_ID_MAX, "%04lld-%02d-%02d", (long long)y, m, d);
        break;
    case PERIOD_WEEKLY: {
        /* ISO 8601: the week belongs to the year of its Thursday; week 1 holds January 4th */
        int64_t thursday = days - weekday(days) + 3;
        int64_t ty;
        int tm, td;
        civil_from_days(thursday, &ty, &tm, &td);
        int64_t week = (thursday - days_from_civil(ty, 1, 1)) / 7 + 1;
        snprintf(out, PERIOD_ID_MAX, "%04lld-W%02d", (long long)ty, (int)week);
        break;
    }
    case PERIOD_MONTHLY:
        snprintf(out, PERIOD_ID_MAX, "%04lld-%02d", (long long)y, m);
        break;
    default:
        out[0] = '\0';
    }
}

/* The number in s[0..n) when all n are digits, else -1. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int period_id_start(enum period_kind k, int tz_min, const char *id, int64_t *start_ms)
{
    int y = 0, m = 1, d = 1, h = 0, w = 0;
    int64_t local_days;
    size_t len = strlen(id);
    /* fixed layouts, digits only: YYYY-MM-DDTHH, YYYY-MM-DD, YYYY-Www, YYYY-MM */
    switch (k) {
    case PERIOD_HOURLY:
        if (len != 13 || id[4] != '-' || id[7] != '-' || id[10] != 'T')
            return -EINVAL;
        h = digits(id + 11, 2);
        d = digits(id + 8, 2);
        m = digits(id + 5, 2);
        break;
    case PERIOD_DAILY:
        if (len != 10 || id[4] != '-' || id[7] != '-')
            return -EINVAL;
        d = digits(id + 8, 2);
        m = digits(id + 5, 2);
        break;
    case PERIOD_WEEKLY:
        if (len != 8 || id[4] != '-' || id[5] != 'W')
            return -EINVAL;
        w = digits(id + 6, 2);
        if (w < 1 || w > 53)
            return -EINVAL;
        break;
    case PERIOD_MONTHLY:
        if (len != 7 || id[4] != '-')
            return -EINVAL;
        m = digits(id + 5, 2);
        break;
    default:
        return -EINVAL;
    }
    y = digits(id, 4);
    if (m < 1 || m > 12 || d < 1 || d > 31 || h < 0 || h > 23 || y < 1970 || y > 9999)
        return -EINVAL;
    if (k == PERIOD_WEEKLY) {
        int64_t jan4 = days_from_civil(y, 1, 4);
        local_days = jan4 - weekday(jan4) + 7 * (int64_t)(w - 1);
    } else {
        local_days = days_from_civil(y, m, d);
    }
    int64_t start = local_days * MS_DAY + h * MS_HOUR - (int64_t)tz_min * 60000;
    /* the id must name itself back: rejects 2026-02-30, 2026-W53 in a 52-week year, ... */
    char back[PERIOD_ID_MAX];
    period_id(k, tz_min, start, back);
    if (strcmp(back, id) != 0)
        return -EINVAL;
    *start_ms = start;
    return 0;
}
