/* period.c -- calendar periods; see period.h. */
#include "period.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"
#include "tzif.h"

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

/* Parse "UTC", "Z", "+HH:MM" or "-HH:MM": 0 and *minutes, or -EINVAL. */
static int offset_parse(const char *text, int *minutes)
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

int period_tz_parse(const char *text, struct period_tz *out)
{
    struct period_tz tz = {0};
    if (offset_parse(text, &tz.min) != 0) {
        if (!tzif_name_valid(text))
            return -EINVAL;
        snprintf(tz.name, sizeof(tz.name), "%s", text);
    }
    *out = tz;
    return 0;
}

void period_tz_format(const struct period_tz *tz, char *out, size_t len)
{
    if (tz->name[0]) {
        snprintf(out, len, "%s", tz->name);
        return;
    }
    if (tz->min == 0) {
        snprintf(out, len, "UTC");
        return;
    }
    int a = tz->min < 0 ? -tz->min : tz->min;
    snprintf(out, len, "%c%02d:%02d", tz->min < 0 ? '-' : '+', a / 60, a % 60);
}

void period_tz_text(const struct period_tz *tz, char *out, size_t len)
{
    if (tz->name[0]) {
        snprintf(out, len, "%s", tz->name);
        return;
    }
    /* by hand: every read sends it (|min| <= 840: at most "-840") */
    char d[8];
    int n = 0, v = tz->min < 0 ? -tz->min : tz->min;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 7);
    size_t o = 0;
    if (tz->min < 0 && o + 1 < len)
        out[o++] = '-';
    while (n > 0 && o + 1 < len)
        out[o++] = d[--n];
    out[o] = '\0';
}

int period_tz_field(const char *text, struct period_tz *out)
{
    struct period_tz tz = {0};
    char *end = NULL;
    long n = (*text >= '0' && *text <= '9') || *text == '-' ? strtol(text, &end, 10) : 0;
    if (end && end != text && !*end) {
        if (n < -PERIOD_TZ_MIN_MAX || n > PERIOD_TZ_MIN_MAX)
            return -EINVAL;
        tz.min = (int)n;
    } else if (tzif_name_valid(text)) {
        snprintf(tz.name, sizeof(tz.name), "%s", text);
    } else {
        return -EINVAL;
    }
    *out = tz;
    return 0;
}

int period_tz_same(const struct period_tz *a, const struct period_tz *b)
{
    return a->min == b->min && strcmp(a->name, b->name) == 0;
}

int period_tz_bind(struct period_tz *tz, struct tzif_cache *zones)
{
    if (!tz->name[0]) {
        tz->zone = NULL;
        return 0;
    }
    if (tz->zone && strcmp(tzif_name(tz->zone), tz->name) == 0)
        return 0;
    tz->zone = NULL;
    return tzif_cache_get(zones, tz->name, &tz->zone);
}

/* The unit a zone counts a period kind in. */
static enum tzif_unit unit_of(enum period_kind k)
{
    return k == PERIOD_HOURLY   ? TZIF_HOUR
           : k == PERIOD_DAILY  ? TZIF_DAY
           : k == PERIOD_WEEKLY ? TZIF_WEEK
                                : TZIF_MONTH;
}

/* The fixed offset (ms) of tz: its minutes, 0 for a zone or a NULL tz (UTC). */
static int64_t fixed_ms(const struct period_tz *tz)
{
    return tz ? (int64_t)tz->min * 60000 : 0;
}

/* The zone of a bound named tz, else NULL (a fixed offset: fixed_ms). */
static const struct tzif_zone *zone_of(const struct period_tz *tz)
{
    if (!tz)
        return NULL;
    return tz->name[0] ? tz->zone : NULL;
}

int64_t period_start(enum period_kind k, const struct period_tz *tz, int64_t t_ms, int delta)
{
    const struct tzif_zone *z = zone_of(tz);
    if (z && k != PERIOD_NONE)
        return tzif_unit_start(z, unit_of(k), civil_floor_div(t_ms, 1000), delta, NULL) * 1000;
    int64_t off = fixed_ms(tz);
    int64_t local = t_ms + off;
    int64_t days = civil_floor_div(local, MS_DAY);
    switch (k) {
    case PERIOD_HOURLY:
        return (civil_floor_div(local, MS_HOUR) + delta) * MS_HOUR - off;
    case PERIOD_DAILY:
        return (days + delta) * MS_DAY - off;
    case PERIOD_WEEKLY:
        return (days - civil_weekday(days) + 7 * (int64_t)delta) * MS_DAY - off;
    case PERIOD_MONTHLY: {
        int64_t y;
        int m, d;
        civil_date(days, &y, &m, &d);
        int64_t months = y * 12 + (m - 1) + delta;
        return civil_days(civil_floor_div(months, 12),
                          (int)(months - civil_floor_div(months, 12) * 12) + 1, 1) *
                   MS_DAY -
               off;
    }
    default:
        return INT64_MIN;
    }
}

/* The id of the period of kind k whose local time (ms on its clock) is `local`. */
static void id_of_local(enum period_kind k, int64_t local, char out[PERIOD_ID_MAX])
{
    int64_t days = civil_floor_div(local, MS_DAY);
    int64_t y;
    int m, d;
    civil_date(days, &y, &m, &d);
    switch (k) {
    case PERIOD_HOURLY:
        snprintf(out, PERIOD_ID_MAX, "%04lld-%02d-%02dT%02d", (long long)y, m, d,
                 (int)(civil_floor_div(local, MS_HOUR) - days * 24));
        break;
    case PERIOD_DAILY:
        snprintf(out, PERIOD_ID_MAX, "%04lld-%02d-%02d", (long long)y, m, d);
        break;
    case PERIOD_WEEKLY: {
        /* ISO 8601: the week belongs to the year of its Thursday; week 1 holds January 4th */
        int64_t thursday = days - civil_weekday(days) + 3;
        int64_t ty;
        int tm, td;
        civil_date(thursday, &ty, &tm, &td);
        int64_t week = (thursday - civil_days(ty, 1, 1)) / 7 + 1;
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

void period_id(enum period_kind k, const struct period_tz *tz, int64_t t_ms,
               char out[PERIOD_ID_MAX])
{
    const struct tzif_zone *z = zone_of(tz);
    if (z && k != PERIOD_NONE) {
        int64_t wall = 0;
        tzif_unit_start(z, unit_of(k), civil_floor_div(t_ms, 1000), 0, &wall);
        id_of_local(k, wall * 1000, out);
        return;
    }
    id_of_local(k, t_ms + fixed_ms(tz), out);
}

int period_id_start(enum period_kind k, const struct period_tz *tz, const char *id,
                    int64_t *start_ms)
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
        int64_t jan4 = civil_days(y, 1, 4);
        local_days = jan4 - civil_weekday(jan4) + 7 * (int64_t)(w - 1);
    } else {
        local_days = civil_days(y, m, d);
    }
    int64_t local = local_days * MS_DAY + h * MS_HOUR;
    const struct tzif_zone *z = zone_of(tz);
    int64_t start = z ? tzif_wall_start(z, local / 1000) * 1000 : local - fixed_ms(tz);
    /* the id must name itself back: rejects 2026-02-30, 2026-W53 in a 52-week year, ... */
    char back[PERIOD_ID_MAX];
    period_id(k, tz, start, back);
    if (strcmp(back, id) != 0)
        return -EINVAL;
    *start_ms = start;
    return 0;
}
