/* tzif.c -- IANA time zones from TZif files; see tzif.h. */
#include "tzif.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "civil.h"

#define DAY INT64_C(86400)

/* ---------------------------------------------------------------- the footer's rule */

/* One end of a POSIX TZ rule: Jn (1..365, February 29th never counted), n (0..365), or Mm.w.d
 * (month m, week w 1..5 where 5 is the last, weekday d with 0 = Sunday), at `secs` wall seconds
 * after that day's midnight (RFC 8536: -167..167 hours). */
struct rule_date {
    char kind; /* 'J', 'N', 'M' */
    int n, m, w, d;
    int32_t secs;
};

/* The footer: std offset, and when has_dst, the dst offset and the two rule dates (start in
 * standard wall time, end in daylight wall time). */
struct rule {
    int present, has_dst;
    int32_t std_off, dst_off;
    struct rule_date start, end;
};

struct tzif_zone {
    char name[TZIF_NAME_MAX];
    size_t n;     /* transitions */
    int64_t *at;  /* their instants, strictly ascending */
    int32_t *off; /* the offset from each on */
    int32_t off0; /* before the first (the file's type 0) */
    struct rule rule;
};

/* A number of at most `max_digits` digits at *p: its value, or -1. */
static long num(const char **p, int max_digits)
{
    long v = 0;
    int n = 0;
    while (**p >= '0' && **p <= '9' && n < max_digits) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n ? v : -1;
}

/* [+-]hh[:mm[:ss]] with hh <= max_h: 0 and *secs (signed as written), or -1. */
static int hms(const char **p, int max_h, int32_t *secs)
{
    int sign = 1;
    if (**p == '+' || **p == '-')
        sign = *(*p)++ == '-' ? -1 : 1;
    long h = num(p, 3), m = 0, s = 0;
    if (h < 0 || h > max_h)
        return -1;
    if (**p == ':') {
        (*p)++;
        if ((m = num(p, 2)) < 0 || m > 59)
            return -1;
        if (**p == ':') {
            (*p)++;
            if ((s = num(p, 2)) < 0 || s > 59)
                return -1;
        }
    }
    *secs = (int32_t)(sign * (h * 3600 + m * 60 + s));
    return 0;
}

/* A zone abbreviation: 3+ letters, or <[A-Za-z0-9+-]{3,}>. */
static int abbrev(const char **p)
{
    const char *s = *p;
    int n = 0;
    if (*s == '<') {
        for (s++; (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                  (*s >= '0' && *s <= '9') || *s == '+' || *s == '-';
             s++)
            n++;
        if (*s != '>' || n < 3)
            return -1;
        *p = s + 1;
        return 0;
    }
    for (; (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'); s++)
        n++;
    if (n < 3)
        return -1;
    *p = s;
    return 0;
}

static int rule_date_parse(const char **p, struct rule_date *r)
{
    const char *s = *p;
    long v;
    if (*s == 'J') {
        s++;
        r->kind = 'J';
        if ((v = num(&s, 3)) < 1 || v > 365)
            return -1;
        r->n = (int)v;
    } else if (*s == 'M') {
        s++;
        r->kind = 'M';
        if ((v = num(&s, 2)) < 1 || v > 12)
            return -1;
        r->m = (int)v;
        if (*s++ != '.' || (v = num(&s, 1)) < 1 || v > 5)
            return -1;
        r->w = (int)v;
        if (*s++ != '.' || (v = num(&s, 1)) < 0 || v > 6)
            return -1;
        r->d = (int)v;
    } else {
        r->kind = 'N';
        if ((v = num(&s, 3)) < 0 || v > 365)
            return -1;
        r->n = (int)v;
    }
    r->secs = 7200;
    if (*s == '/') {
        s++;
        if (hms(&s, 167, &r->secs))
            return -1;
    }
    *p = s;
    return 0;
}

/* A POSIX TZ string (the footer, without its newlines): 0, or -1. "" is no rule. */
static int rule_parse(const char *s, struct rule *r)
{
    memset(r, 0, sizeof(*r));
    if (!*s)
        return 0;
    int32_t off;
    if (abbrev(&s) || hms(&s, 24, &off))
        return -1;
    r->present = 1;
    r->std_off = -off; /* POSIX counts west */
    if (!*s)
        return 0;
    if (abbrev(&s))
        return -1;
    r->has_dst = 1;
    r->dst_off = r->std_off + 3600;
    if (*s != ',' && *s) {
        if (hms(&s, 24, &off))
            return -1;
        r->dst_off = -off;
    }
    /* a DST name needs its rule here (the POSIX default rule is not for a footer) */
    if (*s++ != ',' || rule_date_parse(&s, &r->start) || *s++ != ',' ||
        rule_date_parse(&s, &r->end) || *s)
        return -1;
    if (r->dst_off < -TZIF_OFFSET_MAX || r->dst_off > TZIF_OFFSET_MAX)
        return -1;
    return r->std_off < -TZIF_OFFSET_MAX || r->std_off > TZIF_OFFSET_MAX ? -1 : 0;
}

static int leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The wall second a rule date falls on in year y. */
static int64_t rule_wall(const struct rule_date *r, int64_t y)
{
    int64_t jan1 = civil_days(y, 1, 1), day;
    if (r->kind == 'J') {
        day = jan1 + r->n - 1 + (leap(y) && r->n >= 60);
    } else if (r->kind == 'N') {
        day = jan1 + r->n;
    } else {
        int64_t first = civil_days(y, r->m, 1);
        int wd = (civil_weekday(first) + 1) % 7; /* Sunday = 0 */
        day = first + (r->d - wd + 7) % 7 + 7 * (int64_t)(r->w - 1);
        int64_t next = r->m == 12 ? civil_days(y + 1, 1, 1) : civil_days(y, r->m + 1, 1);
        while (day >= next)
            day -= 7;
    }
    return day * DAY + r->secs;
}

struct event {
    int64_t at;
    int32_t off;
};

/* The rule's changes of the years y-1 .. y+2, in order (at equal instants the change to
 * daylight time last, so DST all year stays daylight): 8 events. */
static void rule_events(const struct rule *r, int64_t y, struct event ev[8])
{
    for (size_t i = 0; i < 4; i++) {
        ev[2 * i].at = rule_wall(&r->start, y - 1 + (int64_t)i) - r->std_off;
        ev[2 * i].off = r->dst_off;
        ev[2 * i + 1].at = rule_wall(&r->end, y - 1 + (int64_t)i) - r->dst_off;
        ev[2 * i + 1].off = r->std_off;
    }
    for (int i = 1; i < 8; i++) /* insertion sort: at most a few out of place */
        for (int j = i; j > 0; j--) {
            int before =
                ev[j].at < ev[j - 1].at || (ev[j].at == ev[j - 1].at &&
                                            ev[j - 1].off == r->dst_off && ev[j].off != r->dst_off);
            if (!before)
                break;
            struct event t = ev[j];
            ev[j] = ev[j - 1];
            ev[j - 1] = t;
        }
}

/* The civil year of instant t on the rule's standard clock. */
static int64_t rule_year(const struct rule *r, int64_t t)
{
    int64_t y;
    int m, d;
    civil_date(civil_floor_div(t + r->std_off, DAY), &y, &m, &d);
    return y;
}

static int32_t rule_offset(const struct rule *r, int64_t t)
{
    if (!r->has_dst)
        return r->std_off;
    struct event ev[8];
    rule_events(r, rule_year(r, t), ev);
    int32_t off = r->std_off;
    for (int i = 0; i < 8 && ev[i].at <= t; i++)
        off = ev[i].off;
    return off;
}

/* The rule's first change after t: 1 with *at and *off, or 0 (no DST: none ever). */
static int rule_next(const struct rule *r, int64_t t, int64_t *at, int32_t *off)
{
    if (!r->has_dst)
        return 0;
    int32_t cur = rule_offset(r, t);
    for (int64_t y = rule_year(r, t);; y += 2) { /* years y-1 .. y+2, then on */
        struct event ev[8];
        rule_events(r, y, ev);
        for (int i = 0; i < 8; i++) {
            if (ev[i].at > t && ev[i].off != cur) {
                *at = ev[i].at;
                *off = ev[i].off;
                return 1;
            }
            if (ev[i].at > t)
                cur = ev[i].off;
        }
        if (y > rule_year(r, t) + 4) /* both ends give the same offset: no change */
            return 0;
    }
}

/* ---------------------------------------------------------------- the file */

static int64_t be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    if (bytes == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

struct header {
    int version;
    uint32_t isut, isstd, leap, time, type, chars;
};

static int header_read(const unsigned char *p, size_t len, struct header *h)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return -1;
    h->version = p[4] == 0 ? 1 : p[4] - '0';
    if (h->version < 1 || h->version > 9) /* a later version keeps the layout (RFC 8536 3.1) */
        return -1;
    uint32_t *c[] = {&h->isut, &h->isstd, &h->leap, &h->time, &h->type, &h->chars};
    for (size_t i = 0; i < 6; i++) {
        int64_t v = be(p + 20 + 4 * i, 4);
        if (v < 0 || v > 1000000)
            return -1;
        *c[i] = (uint32_t)v;
    }
    if (h->type == 0 || h->type > 256 || h->chars == 0 || (h->isut && h->isut != h->type) ||
        (h->isstd && h->isstd != h->type))
        return -1;
    return 0;
}

/* Bytes of a data block of header h with `tb` bytes per time. */
static size_t block_len(const struct header *h, size_t tb)
{
    return (size_t)h->time * tb + h->time + (size_t)h->type * 6 + h->chars +
           (size_t)h->leap * (tb + 4) + h->isstd + h->isut;
}

int tzif_parse(const void *buf, size_t len, const char *name, struct tzif_zone **out)
{
    const unsigned char *p = buf;
    struct header h;
    if (header_read(p, len, &h))
        return -EBADMSG;
    size_t tb = 4, at = 44;
    const char *footer = "";
    char foot[128];
    if (h.version >= 2) {
        /* skip the 32-bit block: the second header and the 64-bit data follow it */
        at += block_len(&h, 4);
        if (at > len || header_read(p + at, len - at, &h) || h.version < 2)
            return -EBADMSG;
        at += 44;
        tb = 8;
        size_t f = at + block_len(&h, 8);
        if (f >= len || p[f] != '\n')
            return -EBADMSG;
        const unsigned char *nl = memchr(p + f + 1, '\n', len - f - 1);
        if (!nl || (size_t)(nl - (p + f + 1)) >= sizeof(foot))
            return -EBADMSG;
        memcpy(foot, p + f + 1, (size_t)(nl - (p + f + 1)));
        foot[nl - (p + f + 1)] = '\0';
        footer = foot;
    }
    if (at + block_len(&h, tb) > len)
        return -EBADMSG;
    if (h.leap) /* "right/" zones: their times count leap seconds */
        return -EBADMSG;
    const unsigned char *times = p + at, *idx = times + (size_t)h.time * tb, *types = idx + h.time;
    struct rule rule;
    if (rule_parse(footer, &rule))
        return -EBADMSG;
    int32_t offs[256] = {0};
    for (uint32_t i = 0; i < h.type; i++) {
        int64_t o = be(types + (size_t)6 * i, 4);
        if (o < -TZIF_OFFSET_MAX || o > TZIF_OFFSET_MAX || types[(size_t)6 * i + 4] > 1 ||
            types[(size_t)6 * i + 5] >= h.chars)
            return -EBADMSG;
        offs[i] = (int32_t)o;
    }
    struct tzif_zone *z = calloc(1, sizeof(*z) + (size_t)h.time * (sizeof(int64_t) + 4));
    if (!z)
        return -ENOMEM;
    z->at = (int64_t *)(z + 1);
    z->off = (int32_t *)(z->at + h.time);
    z->n = h.time;
    z->off0 = offs[0];
    z->rule = rule;
    snprintf(z->name, sizeof(z->name), "%s", name ? name : "");
    for (uint32_t i = 0; i < h.time; i++) {
        z->at[i] = be(times + tb * i, (int)tb);
        if (idx[i] >= h.type || (i > 0 && z->at[i] <= z->at[i - 1])) {
            free(z);
            return -EBADMSG;
        }
        z->off[i] = offs[idx[i]];
    }
    *out = z;
    return 0;
}

int tzif_name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= TZIF_NAME_MAX)
        return 0;
    if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int start = i == 0 || name[i - 1] == '/';
        if (c == '/') {
            if (start || i + 1 == len) /* "//" or a trailing '/' */
                return 0;
            continue;
        }
        if (start && (c == '.' || c == '-'))
            return 0;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '+' || c == '-'))
            return 0;
    }
    return 1;
}

int tzif_load(const char *dir, const char *name, struct tzif_zone **out)
{
    if (!tzif_name_valid(name))
        return -EINVAL;
    char path[512];
    if (snprintf(path, sizeof(path), "%s/%s", dir ? dir : TZIF_DIR_DEFAULT, name) >=
        (int)sizeof(path))
        return -EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EIO;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOENT;
    }
    if (st.st_size > TZIF_FILE_MAX) {
        close(fd);
        return -EFBIG;
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int rc = got == (size_t)st.st_size ? tzif_parse(buf, got, name, out) : -EIO;
    free(buf);
    return rc;
}

void tzif_free(struct tzif_zone *z)
{
    free(z);
}

const char *tzif_name(const struct tzif_zone *z)
{
    return z->name;
}

/* ---------------------------------------------------------------- offsets */

/* The index of the last transition at or before t, or -1 (before the first). */
static long last_at(const struct tzif_zone *z, int64_t t)
{
    long lo = 0, hi = (long)z->n; /* the first index past t is in [lo, hi] */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (z->at[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* Whether the footer's rule governs instant t: after the table's last transition (or with no
 * table at all). */
static int ruled(const struct tzif_zone *z, int64_t t)
{
    return z->rule.present && (z->n == 0 || t >= z->at[z->n - 1]);
}

int32_t tzif_offset(const struct tzif_zone *z, int64_t t)
{
    if (ruled(z, t))
        return rule_offset(&z->rule, t);
    long i = last_at(z, t);
    return i < 0 ? z->off0 : z->off[i];
}

int tzif_next_change(const struct tzif_zone *z, int64_t t, int64_t *at, int32_t *offset)
{
    if (ruled(z, t))
        return rule_next(&z->rule, t, at, offset);
    int32_t cur = tzif_offset(z, t);
    for (size_t i = (size_t)(last_at(z, t) + 1); i < z->n; i++)
        if (z->off[i] != cur) {
            *at = z->at[i];
            *offset = z->off[i];
            return 1;
        }
    /* the table ends with the current offset: the rule takes over from its last transition */
    if (!z->rule.present)
        return 0;
    int64_t from = z->at[z->n - 1];
    while (rule_next(&z->rule, from, at, offset)) {
        if (*offset != cur)
            return 1;
        from = *at;
    }
    return 0;
}

/* ---------------------------------------------------------------- boundaries */

int64_t tzif_wall_start(const struct tzif_zone *z, int64_t wall)
{
    /* any instant whose wall time reaches `wall` is after a: walk the stretches of one offset
     * from there; the first that reaches it holds the answer */
    int64_t a = wall - TZIF_OFFSET_MAX - 1;
    int32_t off = tzif_offset(z, a);
    for (int i = 0; i < 64; i++) {
        int64_t b;
        int32_t next;
        int more = tzif_next_change(z, a, &b, &next);
        int64_t u = wall - off > a ? wall - off : a;
        if (!more || u < b)
            return u;
        a = b;
        off = next;
    }
    return wall - off; /* not reached with real zones: 64 changes within 52 hours */
}

/* The first wall second of the unit holding wall time w. */
static int64_t unit_floor(enum tzif_unit u, int64_t w)
{
    int64_t days = civil_floor_div(w, DAY);
    switch (u) {
    case TZIF_HOUR:
        return civil_floor_div(w, 3600) * 3600;
    case TZIF_DAY:
        return days * DAY;
    case TZIF_WEEK:
        return (days - civil_weekday(days)) * DAY;
    default: {
        int64_t y;
        int m, d;
        civil_date(days, &y, &m, &d);
        return civil_days(y, m, 1) * DAY;
    }
    }
}

/* The first wall second of the unit n units after the one starting at wall second w. */
static int64_t unit_step(enum tzif_unit u, int64_t w, int n)
{
    switch (u) {
    case TZIF_HOUR:
        return w + 3600 * (int64_t)n;
    case TZIF_DAY:
        return w + DAY * (int64_t)n;
    case TZIF_WEEK:
        return w + 7 * DAY * (int64_t)n;
    default: {
        int64_t y;
        int m, d;
        civil_date(civil_floor_div(w, DAY), &y, &m, &d);
        int64_t months = y * 12 + (m - 1) + n;
        int64_t ny = civil_floor_div(months, 12);
        return civil_days(ny, (int)(months - ny * 12) + 1, 1) * DAY;
    }
    }
}

int64_t tzif_unit_start(const struct tzif_zone *z, enum tzif_unit u, int64_t t, int delta,
                        int64_t *wall)
{
    /* the unit holding t: the latest unit start at or before t (a clock set back across a
     * boundary can leave t's own wall time in the unit before) */
    int64_t w = unit_floor(u, t + tzif_offset(z, t));
    int64_t s = tzif_wall_start(z, w);
    for (int i = 0; i < 4; i++) {
        int64_t wn = unit_step(u, w, 1), sn = tzif_wall_start(z, wn);
        if (sn > t)
            break;
        w = wn;
        s = sn;
    }
    for (; delta > 0; delta--) {
        /* the next start; of units starting at the same instant (all but the last skipped
         * by the clock), the last names it */
        int64_t wn = unit_step(u, w, 1), sn = tzif_wall_start(z, wn);
        for (int i = 0; i < 64; i++) {
            int64_t w2 = unit_step(u, wn, 1);
            if (tzif_wall_start(z, w2) != sn)
                break;
            wn = w2;
        }
        w = wn;
        s = sn;
    }
    for (; delta < 0; delta++) {
        int64_t wp = unit_step(u, w, -1), sp = tzif_wall_start(z, wp);
        for (int i = 0; i < 64 && sp == s; i++) { /* skipped units start with this one */
            wp = unit_step(u, wp, -1);
            sp = tzif_wall_start(z, wp);
        }
        w = wp;
        s = sp;
    }
    if (wall)
        *wall = w;
    return s;
}

/* ---------------------------------------------------------------- the cache */

struct node {
    struct node *next;
    struct tzif_zone *zone;
};

struct tzif_cache {
    char dir[256];
    _Atomic(struct node *) head; /* published whole: readers walk it without the lock */
    pthread_mutex_t lock;        /* loads, one at a time */
    int count;
};

struct tzif_cache *tzif_cache_new(const char *dir)
{
    struct tzif_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    snprintf(c->dir, sizeof(c->dir), "%s", dir ? dir : TZIF_DIR_DEFAULT);
    atomic_init(&c->head, NULL);
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void tzif_cache_free(struct tzif_cache *c)
{
    if (!c)
        return;
    struct node *n = atomic_load(&c->head);
    while (n) {
        struct node *next = n->next;
        tzif_free(n->zone);
        free(n);
        n = next;
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const struct tzif_zone *find(struct node *n, const char *name)
{
    for (; n; n = n->next)
        if (strcmp(n->zone->name, name) == 0)
            return n->zone;
    return NULL;
}

int tzif_cache_get(struct tzif_cache *c, const char *name, const struct tzif_zone **out)
{
    if (!c)
        return -ENOENT;
    if ((*out = find(atomic_load_explicit(&c->head, memory_order_acquire), name)))
        return 0;
    pthread_mutex_lock(&c->lock);
    int rc = 0;
    struct node *head = atomic_load_explicit(&c->head, memory_order_relaxed);
    if ((*out = find(head, name)) == NULL) {
        struct tzif_zone *z = NULL;
        struct node *n = NULL;
        if (c->count >= TZIF_CACHE_MAX)
            rc = -ENOSPC;
        else if ((rc = tzif_load(c->dir, name, &z)) == 0 && !(n = malloc(sizeof(*n)))) {
            tzif_free(z);
            rc = -ENOMEM;
        }
        if (rc == 0) {
            n->zone = z;
            n->next = head;
            atomic_store_explicit(&c->head, n, memory_order_release);
            c->count++;
            *out = z;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}
