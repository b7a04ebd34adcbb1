/* render.c -- JSON bodies; see render.h. */
#include "render.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cursor.h"
#include "rank.h"

int64_t render_pages(int64_t total, int size)
{
    return size > 0 ? (total + size - 1) / size : 0;
}

/* v in decimal at p (at least 21 bytes) and a NUL; returns the length. Two digits a step. */
static size_t i64_text(int64_t v, char *p)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233"
        "34353637383940414243444546474849505152535455565758596061626364656667"
        "6869707172737475767778798081828384858687888990919293949596979899";
    char tmp[24];
    char *end = tmp + sizeof(tmp), *q = end;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        q -= 2;
        memcpy(q, pairs + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * u, 2);
    } else {
        *--q = (char)('0' + u);
    }
    size_t len = 0;
    if (v < 0)
        p[len++] = '-';
    memcpy(p + len, q, (size_t)(end - q));
    len += (size_t)(end - q);
    p[len] = '\0';
    return len;
}

void render_number_text(double d, char *out, size_t len)
{
    /* Integers a double holds exactly (|d| <= 2^53) are plain digits, never exponent form
     * (1e+15), and cost no printf. */
    if (len >= 24 && d == floor(d) && fabs(d) <= 9007199254740992.0) {
        i64_text((int64_t)d, out);
        return;
    }
    /* cJSON accepts 15 digits when they read back within DBL_EPSILON, which rounds values such
     * as 2^53 - 1; here only an exact read-back will do. */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, len, "%.*g", digits, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

cJSON *render_number(double d)
{
    if (!isfinite(d))
        return cJSON_CreateNull();
    char text[40];
    render_number_text(d, text, sizeof(text));
    return cJSON_CreateRaw(text);
}

/* ---- the hot bodies (pages, members, writes) written straight into one buffer: no tree, no
 * allocation per value, no printf for integers. The output is byte for byte what cJSON's
 * unformatted printer makes of the same document (tests compare both). */
struct out {
    char *p;
    size_t len, cap;
    int oom;
};

static void out_reserve(struct out *o, size_t n)
{
    if (o->oom || o->len + n + 1 <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 512;
    while (cap < o->len + n + 1)
        cap *= 2;
    char *p = realloc(o->p, cap);
    if (!p) {
        o->oom = 1;
        return;
    }
    o->p = p;
    o->cap = cap;
}

static void out_mem(struct out *o, const char *s, size_t n)
{
    out_reserve(o, n);
    if (o->oom)
        return;
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void out_str(struct out *o, const char *s)
{
    out_mem(o, s, strlen(s));
}

/* out_str of a string literal, its length known when compiled */
#define OUT_LIT(o, s) out_mem((o), "" s, sizeof(s) - 1)

/* ---- writing into room already reserved (out_reserve): the entries of a page, where a
 * reservation each would be most of the work */

/* the literal s at w; returns the byte after it */
#define PUT_LIT(w, s) ((char *)memcpy((w), "" s, sizeof(s) - 1) + sizeof(s) - 1)

/* A JSON string (out_json_string's bytes) at w, which has room for 6 * n + 2; returns the byte
 * after it. */
static char *put_json_string(char *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 32 && c != '"' && c != '\\') {
            *w++ = (char)c;
            continue;
        }
        *w++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *w++ = (char)c;
            break;
        case '\b':
            *w++ = 'b';
            break;
        case '\f':
            *w++ = 'f';
            break;
        case '\n':
            *w++ = 'n';
            break;
        case '\r':
            *w++ = 'r';
            break;
        case '\t':
            *w++ = 't';
            break;
        default:
            w = PUT_LIT(w, "u00");
            *w++ = hex[c >> 4];
            *w++ = hex[c & 15];
        }
    }
    *w++ = '"';
    return w;
}

/* A score as out_score writes it, at w (room for 40); returns the byte after it. */
static char *put_score(char *w, double d)
{
    if (!isfinite(d))
        return PUT_LIT(w, "null");
    if (fabs(d) <= 9007199254740992.0 && (double)(int64_t)d == d) /* render_number_text's */
        return w + i64_text((int64_t)d, w);
    render_number_text(d, w, 40);
    return w + strlen(w);
}

static void out_i64(struct out *o, int64_t v)
{
    out_reserve(o, 24);
    if (!o->oom)
        o->len += i64_text(v, o->p + o->len);
}

static void out_score(struct out *o, double d)
{
    out_reserve(o, 40);
    if (!o->oom)
        o->len = (size_t)(put_score(o->p + o->len, d) - o->p);
}

/* A JSON string as cJSON prints it: ", \ and the C0 controls escaped, the rest verbatim. */
static void out_json_string(struct out *o, const char *s, size_t n)
{
    out_reserve(o, 6 * n + 2);
    if (o->oom)
        return;
    o->len = (size_t)(put_json_string(o->p + o->len, s, n) - o->p);
}

static void out_record(struct out *o, const char *record, size_t len)
{
    if (record)
        out_mem(o, record, len);
    else
        OUT_LIT(o, "null");
}

static char *out_finish(struct out *o)
{
    out_reserve(o, 1);
    if (o->oom) {
        free(o->p);
        return NULL;
    }
    o->p[o->len] = '\0';
    return o->p;
}

/* <key>[n1,...] (key: ',"subscores":' or another member's name) of a sub-score board's entry
 * (nothing for nsub 0) */
static void out_subs_as(struct out *o, const char *key, int nsub, const int64_t *sub)
{
    for (int c = 0; c < nsub && c < SCORE_SUB_MAX; c++) {
        out_str(o, c ? "," : key);
        if (!c)
            out_mem(o, "[", 1);
        out_i64(o, sub[c]);
    }
    if (nsub > 0)
        out_mem(o, "]", 1);
}

/* ,"subscores":[n1,...] of a sub-score board's entry (nothing for nsub 0) */
static void out_subscores(struct out *o, int nsub, const int64_t *sub)
{
    out_subs_as(o, ",\"subscores\":", nsub, sub);
}

/* ,"updated_at":<ms> (null: -1) of an entry of a board with track_updated_at. */
static void out_updated_at(struct out *o, int64_t ms)
{
    OUT_LIT(o, ",\"updated_at\":");
    if (ms >= 0)
        out_i64(o, ms);
    else
        OUT_LIT(o, "null");
}

/* An entry's {"rank":..,"id":..,"score":.. (with a ',' before it unless first), one reservation
 * for it all. */
static void out_entry_head(struct out *o, int first, const struct board_item *it)
{
    out_reserve(o, 96 + 6 * it->id_len);
    if (o->oom)
        return;
    char *w = o->p + o->len;
    w = first ? PUT_LIT(w, "{\"rank\":") : PUT_LIT(w, ",{\"rank\":");
    w += i64_text(it->rank, w);
    w = PUT_LIT(w, ",\"id\":");
    w = put_json_string(w, it->id, it->id_len);
    w = PUT_LIT(w, ",\"score\":");
    w = put_score(w, it->score);
    o->len = (size_t)(w - o->p);
}

/* An entry's ,"record":<record>} */
static void out_entry_tail(struct out *o, const struct board_item *it)
{
    out_reserve(o, 16 + it->record_len);
    if (o->oom)
        return;
    char *w = PUT_LIT(o->p + o->len, ",\"record\":");
    if (it->record) {
        memcpy(w, it->record, it->record_len);
        w += it->record_len;
    } else {
        w = PUT_LIT(w, "null");
    }
    *w++ = '}';
    o->len = (size_t)(w - o->p);
}

static void out_items(struct out *o, const struct board_page *p)
{
    OUT_LIT(o, "\"items\":[");
    for (size_t i = 0; i < p->n; i++) {
        const struct board_item *it = &p->items[i];
        out_entry_head(o, i == 0, it);
        out_subscores(o, it->nsub, it->sub);
        if (p->settings.track_updated_at)
            out_updated_at(o, it->updated_at);
        out_entry_tail(o, it);
    }
    out_mem(o, "]", 1);
}

/* ,"with":[...],"missing":[...] of a page read with ids (render_page_with), pages at `size`. */
static void out_with(struct out *o, const struct board_lookup *l, int size)
{
    OUT_LIT(o, ",\"with\":[");
    for (size_t i = 0; i < l->n; i++) {
        const struct board_item *it = &l->items[i];
        out_entry_head(o, i == 0, it);
        out_subscores(o, it->nsub, it->sub);
        OUT_LIT(o, ",\"page\":");
        out_i64(o, size > 0 ? (it->ordinal - 1) / size + 1 : 1);
        if (l->settings.track_updated_at)
            out_updated_at(o, it->updated_at);
        out_entry_tail(o, it);
    }
    OUT_LIT(o, "],\"missing\":[");
    for (size_t i = 0; i < l->nmissing; i++) {
        if (i)
            out_mem(o, ",", 1);
        out_json_string(o, l->missing[i], l->missing_len[i]);
    }
    out_mem(o, "]", 1);
}

char *render_page_with(const char *page_body, size_t len, const struct board_lookup *l, int size)
{
    struct out o = {0};
    while (len > 0 && page_body[len - 1] != '}')
        len--;
    if (len == 0)
        return NULL; /* not a page's body */
    out_mem(&o, page_body, len - 1);
    out_with(&o, l, size);
    out_mem(&o, "}", 1);
    return out_finish(&o);
}

/* ,"<name>":"<cursor of item it>" (kind, the page's generation, board and period), or null. */
static void out_cursor(struct out *o, const char *name, const char *board,
                       const struct board_page *p, const struct board_item *it,
                       enum cursor_kind kind)
{
    out_str(o, name);
    struct cursor c = {.kind = kind,
                       .gen = p->settings.gen,
                       .stored = it ? it->stored : 0,
                       .has_tie = score_codec_member_prefix(&p->settings.layout) > 0,
                       .tie = it ? it->tie : 0,
                       .tagged = 1,
                       .board_tag = cursor_board_tag(board)};
    for (int k = 0; it && k < p->settings.layout.nsub && k < SCORE_SUB_MAX; k++) {
        score_codec_sub_bytes(p->settings.layout.sub_asc[k], it->sub[k],
                              c.sub + (size_t)k * SCORE_SUB_BYTES);
        c.sub_len += SCORE_SUB_BYTES;
    }
    char text[CURSOR_TEXT_MAX];
    if (it && it->id_len <= CURSOR_ID_MAX) {
        util_copy(c.period, sizeof(c.period), p->period);
        memcpy(c.id, it->id, it->id_len);
        c.id_len = it->id_len;
    }
    if (it && it->id_len <= CURSOR_ID_MAX && cursor_encode(&c, text, sizeof(text)) == 0) {
        out_mem(o, "\"", 1);
        out_str(o, text); /* base64url: nothing to escape */
        out_mem(o, "\"", 1);
    } else {
        OUT_LIT(o, "null");
    }
}

/* A page-shaped body; count >= 0 adds "count" after "pages" (top); cursors adds "next" and
 * "prev" (a rank page): the cursors of its last and first items, null at the ends of the board
 * (or of the score range read). A score range's "total" is the members in it. */
static char *page_body(const char *board, int64_t page, const struct board_page *p, int64_t count,
                       int cursors)
{
    struct out o = {0};
    size_t est = 128 + strlen(board);
    for (size_t i = 0; i < p->n; i++)
        est += 64 + p->items[i].id_len + p->items[i].record_len;
    out_reserve(&o, est);
    OUT_LIT(&o, "{\"board\":");
    out_json_string(&o, board, strlen(board));
    OUT_LIT(&o, ",\"page\":");
    out_i64(&o, page);
    OUT_LIT(&o, ",\"size\":");
    out_i64(&o, p->size);
    int64_t total = p->ranged ? p->end - p->first : p->total;
    OUT_LIT(&o, ",\"total\":");
    out_i64(&o, total);
    OUT_LIT(&o, ",\"pages\":");
    out_i64(&o, render_pages(total, p->size));
    if (count >= 0) {
        OUT_LIT(&o, ",\"count\":");
        out_i64(&o, count);
    }
    if (cursors) {
        const struct board_item *last = p->n ? &p->items[p->n - 1] : NULL;
        const struct board_item *first = p->n ? &p->items[0] : NULL;
        out_cursor(&o, ",\"next\":", board, p, last && last->ordinal < p->end ? last : NULL,
                   CURSOR_NEXT);
        out_cursor(&o, ",\"prev\":", board, p,
                   first && first->ordinal - 1 > p->first ? first : NULL, CURSOR_PREV);
    }
    out_mem(&o, ",", 1);
    out_items(&o, p);
    if (p->with)
        out_with(&o, p->with, p->size);
    out_mem(&o, "}", 1);
    return out_finish(&o);
}

static void add_number(cJSON *obj, const char *name, double d)
{
    cJSON_AddItemToObject(obj, name, render_number(d));
}

static char *finish(cJSON *doc)
{
    char *json = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    return json;
}

char *render_page(const char *board, int64_t page, const struct board_page *p)
{
    return page_body(board, page, p, -1, 1);
}

/* The page (at p->size) of the first item's place counted from `from` (a 0-based position). */
static int64_t page_of_first(const struct board_page *p, int64_t from)
{
    int64_t first = p->n ? p->items[0].ordinal - 1 - from : 0;
    return p->size > 0 && first > 0 ? first / p->size + 1 : 1;
}

char *render_walk(const char *board, int64_t page, const struct board_page *p)
{
    return page_body(board, page ? page : page_of_first(p, p->first), p, -1, 1);
}

char *render_around(const char *board, const struct board_page *p)
{
    return page_body(board, page_of_first(p, 0), p, -1, 0);
}

char *render_top(const char *board, const struct board_page *p)
{
    return page_body(board, 1, p, p->count, 0);
}

/* A percentile (hundredths) as a JSON number: 66.67, 50, 12.5. */
static void out_cents(struct out *o, int64_t cents)
{
    char text[32];
    rank_decimal_text(cents, 2, text, sizeof(text));
    out_str(o, text);
}

char *render_member(const char *id, const struct board_member *mb, int size)
{
    struct out o = {0};
    out_reserve(&o, 96 + strlen(id) + mb->record_len);
    OUT_LIT(&o, "{\"id\":");
    out_json_string(&o, id, strlen(id));
    OUT_LIT(&o, ",\"score\":");
    out_score(&o, mb->score);
    out_subscores(&o, mb->settings.layout.nsub, mb->sub);
    OUT_LIT(&o, ",\"rank\":");
    out_i64(&o, mb->rank);
    OUT_LIT(&o, ",\"page\":");
    out_i64(&o, (mb->ordinal - 1) / size + 1); /* integer division: the page holding it */
    OUT_LIT(&o, ",\"percentile\":");
    out_cents(&o, rank_percentile_cents(mb->total, mb->ordinal));
    if (mb->settings.track_updated_at)
        out_updated_at(&o, mb->updated_at);
    OUT_LIT(&o, ",\"record\":");
    out_record(&o, mb->record, mb->record_len);
    out_mem(&o, "}", 1);
    return out_finish(&o);
}

char *render_board(const char *board, const struct board_info *info,
                   const char (*periods)[PERIOD_ID_MAX], int nperiods)
{
    const struct board_settings *s = &info->settings;
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "board", board);
    cJSON_AddStringToObject(doc, "order", score_order_name(s->layout.order));
    cJSON_AddStringToObject(doc, "tiebreak", score_tiebreak_name(s->layout.tiebreak));
    cJSON_AddStringToObject(doc, "score_layout", score_layout_name(s->layout.wide));
    if (s->layout.nsub > 0) {
        cJSON *dirs = cJSON_AddArrayToObject(doc, "subscores");
        for (int c = 0; c < s->layout.nsub && dirs; c++)
            cJSON_AddItemToArray(dirs, cJSON_CreateString(s->layout.sub_asc[c] ? "asc" : "desc"));
    }
    cJSON_AddNumberToObject(doc, "page_size", s->page_size);
    cJSON_AddNumberToObject(doc, "page_ttl_ms", s->page_ttl_ms);
    cJSON_AddNumberToObject(doc, "score_decimals", s->layout.decimals);
    cJSON_AddStringToObject(doc, "score_format", score_format_name(s->score_format));
    cJSON_AddStringToObject(doc, "period", period_kind_name(s->period));
    char tz[PERIOD_TZ_TEXT_MAX];
    period_tz_format(&s->tz, tz, sizeof(tz));
    cJSON_AddStringToObject(doc, "timezone", tz);
    cJSON_AddNumberToObject(doc, "retain", s->retain);
    if (s->max_members > 0)
        cJSON_AddNumberToObject(doc, "max_members", (double)s->max_members);
    else
        cJSON_AddNullToObject(doc, "max_members");
    cJSON_AddNumberToObject(doc, "version", (double)s->version);
    cJSON_AddBoolToObject(doc, "track_updated_at", s->track_updated_at);
    cJSON_AddNumberToObject(doc, "total", (double)info->total);
    cJSON *range = cJSON_AddObjectToObject(doc, "score_range");
    add_number(range, "min", min);
    add_number(range, "max", max);
    if (s->period != PERIOD_NONE) {
        cJSON_AddStringToObject(doc, "current_period", info->period);
        cJSON *list = cJSON_AddArrayToObject(doc, "periods");
        for (int i = 0; list && i < nperiods; i++)
            cJSON_AddItemToArray(list, cJSON_CreateString(periods[i]));
    }
    return finish(doc);
}

char *render_board_list(const struct board_list *l)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(doc, "boards");
    for (size_t i = 0; arr && i < l->n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o))
            break;
        cJSON_AddStringToObject(o, "board", l->names[i]);
        cJSON_AddNumberToObject(o, "total", (double)l->totals[i]);
    }
    if (l->next_cursor) { /* a string: cursors are 64-bit, beyond a double's exact integers */
        char c[24];
        snprintf(c, sizeof(c), "%" PRIu64, l->next_cursor);
        cJSON_AddStringToObject(doc, "next_cursor", c);
    } else {
        cJSON_AddNullToObject(doc, "next_cursor");
    }
    return finish(doc);
}

/* "score"(,"subscores"),"rank","updated" of an outcome, then the previous score (and
 * sub-scores) and rank when asked; rank null when the member is not on the board after the write
 * (max_members removed it). */
static void out_outcome(struct out *b, const struct board_outcome *o, int prev)
{
    OUT_LIT(b, "\"score\":");
    out_score(b, o->score);
    out_subscores(b, o->nsub, o->sub);
    OUT_LIT(b, ",\"rank\":");
    if (o->rank > 0)
        out_i64(b, o->rank);
    else
        OUT_LIT(b, "null");
    out_str(b, o->updated ? ",\"updated\":true" : ",\"updated\":false");
    if (!prev)
        return;
    if (!o->has_prev) {
        OUT_LIT(b, ",\"prev_score\":null");
        out_str(b, o->nsub > 0 ? ",\"prev_subscores\":null,\"prev_rank\":null"
                               : ",\"prev_rank\":null");
        return;
    }
    OUT_LIT(b, ",\"prev_score\":");
    out_score(b, o->prev_score);
    out_subs_as(b, ",\"prev_subscores\":", o->nsub, o->prev_sub);
    OUT_LIT(b, ",\"prev_rank\":");
    out_i64(b, o->prev_rank);
}

char *render_write(const char *id, const struct board_outcome *o, int64_t version)
{
    struct out b = {0};
    OUT_LIT(&b, "{\"id\":");
    out_json_string(&b, id, strlen(id));
    OUT_LIT(&b, ",");
    out_outcome(&b, o, 1);
    OUT_LIT(&b, ",\"version\":");
    out_i64(&b, version);
    OUT_LIT(&b, "}");
    return out_finish(&b);
}

char *render_batch(const struct board_outcome *o, size_t n, int64_t version)
{
    struct out b = {0};
    OUT_LIT(&b, "{\"applied\":");
    out_i64(&b, (int64_t)n);
    OUT_LIT(&b, ",\"rejected\":[],\"results\":[");
    for (size_t i = 0; i < n; i++) {
        out_str(&b, i ? ",{" : "{");
        out_outcome(&b, &o[i], 0);
        OUT_LIT(&b, "}");
    }
    OUT_LIT(&b, "],\"version\":");
    out_i64(&b, version);
    OUT_LIT(&b, "}");
    return out_finish(&b);
}

char *render_boards_write(const char *id, const char *const *boards,
                          const struct board_outcome *const *o, const int64_t *versions, size_t n)
{
    struct out b = {0};
    OUT_LIT(&b, "{\"id\":");
    out_json_string(&b, id, strlen(id));
    OUT_LIT(&b, ",\"boards\":[");
    for (size_t i = 0; i < n; i++) {
        out_str(&b, i ? ",{\"board\":" : "{\"board\":");
        out_json_string(&b, boards[i], strlen(boards[i]));
        OUT_LIT(&b, ",");
        out_outcome(&b, o[i], 1);
        OUT_LIT(&b, ",\"version\":");
        out_i64(&b, versions[i]);
        OUT_LIT(&b, "}");
    }
    OUT_LIT(&b, "]}");
    return out_finish(&b);
}

char *render_export_rows(const struct board_item *items, size_t n, int updated_at, size_t *len)
{
    struct out o = {0};
    size_t est = 1;
    for (size_t i = 0; i < n; i++)
        est += 96 + items[i].id_len + items[i].record_len;
    out_reserve(&o, est);
    for (size_t i = 0; i < n; i++) {
        const struct board_item *it = &items[i];
        OUT_LIT(&o, "{\"rank\":");
        out_i64(&o, it->rank);
        OUT_LIT(&o, ",\"id\":");
        out_json_string(&o, it->id, it->id_len);
        OUT_LIT(&o, ",\"score\":");
        out_score(&o, it->score);
        out_subscores(&o, it->nsub, it->sub);
        if (updated_at)
            out_updated_at(&o, it->updated_at);
        OUT_LIT(&o, ",\"record\":");
        out_record(&o, it->record, it->record_len);
        out_mem(&o, "}\n", 2);
    }
    char *text = out_finish(&o);
    if (text)
        *len = o.len;
    return text;
}

char *render_lookup(const char *board, const struct board_lookup *l)
{
    struct out o = {0};
    OUT_LIT(&o, "{\"board\":");
    out_json_string(&o, board, strlen(board));
    out_mem(&o, ",", 1);
    struct board_page p = {.settings = l->settings, .n = l->n, .items = l->items};
    out_items(&o, &p);
    OUT_LIT(&o, ",\"missing\":[");
    for (size_t i = 0; i < l->nmissing; i++) {
        if (i)
            out_mem(&o, ",", 1);
        out_json_string(&o, l->missing[i], l->missing_len[i]);
    }
    OUT_LIT(&o, "]}");
    return out_finish(&o);
}

char *render_percentile(const char *p, const struct board_percentile *pc)
{
    struct out o = {0};
    OUT_LIT(&o, "{\"p\":");
    out_str(&o, p);
    if (pc->rank > 0) {
        OUT_LIT(&o, ",\"rank\":");
        out_i64(&o, pc->rank);
        OUT_LIT(&o, ",\"id\":");
        out_json_string(&o, pc->id, pc->id_len);
        OUT_LIT(&o, ",\"score\":");
        out_score(&o, pc->score);
        out_subscores(&o, pc->settings.layout.nsub, pc->sub);
        if (pc->settings.track_updated_at)
            out_updated_at(&o, pc->updated_at);
        out_mem(&o, "}", 1);
    } else {
        OUT_LIT(&o, ",\"rank\":null,\"id\":null,\"score\":null}");
    }
    return out_finish(&o);
}

char *render_member_boards(const char *id, const char *const *boards,
                           const struct board_on_board *on, size_t n)
{
    struct out o = {0};
    OUT_LIT(&o, "{\"id\":");
    out_json_string(&o, id, strlen(id));
    OUT_LIT(&o, ",\"boards\":[");
    for (size_t i = 0; i < n; i++) {
        out_str(&o, i ? ",{\"board\":" : "{\"board\":");
        out_json_string(&o, boards[i], strlen(boards[i]));
        if (on[i].found) {
            OUT_LIT(&o, ",\"rank\":");
            out_i64(&o, on[i].rank);
            OUT_LIT(&o, ",\"score\":");
            out_score(&o, on[i].score);
            out_subscores(&o, on[i].settings.layout.nsub, on[i].sub);
            OUT_LIT(&o, ",\"percentile\":");
            out_cents(&o, rank_percentile_cents(on[i].total, on[i].ordinal));
            if (on[i].settings.track_updated_at)
                out_updated_at(&o, on[i].updated_at);
            out_mem(&o, "}", 1);
        } else {
            OUT_LIT(&o, ",\"rank\":null,\"score\":null,\"percentile\":null}");
        }
    }
    OUT_LIT(&o, "]}");
    return out_finish(&o);
}
