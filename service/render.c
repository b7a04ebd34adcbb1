/* render.c -- JSON bodies; see render.h. */
#include "render.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

int64_t render_pages(int64_t total, int size)
{
    return size > 0 ? (total + size - 1) / size : 0;
}

void render_number_text(double d, char *out, size_t len)
{
    /* %g switches to an exponent from 15 digits on (1e+15, 9.007199254740991e+15): an integer a
     * double holds exactly, as every one within 2^53 is, prints as its plain digits. */
    if (fabs(d) <= 9007199254740992.0 && floor(d) == d) {
        snprintf(out, len, "%.0f", d);
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

/* A record: the stored JSON verbatim (NUL-terminated by hiredis), or null. */
static cJSON *record_node(const char *record, size_t len)
{
    (void)len;
    return record ? cJSON_CreateRaw(record) : cJSON_CreateNull();
}

static cJSON *items_node(const struct board_page *p)
{
    cJSON *items = cJSON_CreateArray();
    for (size_t i = 0; items && i < p->n; i++) {
        const struct board_item *it = &p->items[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(items, o))
            break;
        cJSON_AddNumberToObject(o, "rank", (double)it->rank);
        cJSON_AddStringToObject(o, "id", it->id);
        add_number(o, "score", it->score);
        cJSON_AddItemToObject(o, "record", record_node(it->record, it->record_len));
    }
    return items;
}

static cJSON *page_doc(const char *board, int64_t page, const struct board_page *p)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "board", board);
    cJSON_AddNumberToObject(doc, "page", (double)page);
    cJSON_AddNumberToObject(doc, "size", p->size);
    cJSON_AddNumberToObject(doc, "total", (double)p->total);
    cJSON_AddNumberToObject(doc, "pages", (double)render_pages(p->total, p->size));
    cJSON_AddItemToObject(doc, "items", items_node(p));
    return doc;
}

char *render_page(const char *board, int64_t page, const struct board_page *p)
{
    return finish(page_doc(board, page, p));
}

char *render_around(const char *board, const struct board_page *p)
{
    int64_t first = p->n ? p->items[0].rank : 1;
    return finish(page_doc(board, (first - 1) / p->size + 1, p));
}

char *render_member(const char *id, const struct board_member *mb, int size)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "id", id);
    add_number(doc, "score", mb->score);
    cJSON_AddNumberToObject(doc, "rank", (double)mb->rank);
    int64_t page = (mb->rank - 1) / size + 1; /* integer division: the page holding rank */
    cJSON_AddNumberToObject(doc, "page", (double)page);
    cJSON_AddItemToObject(doc, "record", record_node(mb->record, mb->record_len));
    return finish(doc);
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
    cJSON_AddNumberToObject(doc, "page_size", s->page_size);
    cJSON_AddNumberToObject(doc, "page_ttl_ms", s->page_ttl_ms);
    cJSON_AddNumberToObject(doc, "score_decimals", s->layout.decimals);
    cJSON_AddStringToObject(doc, "period", period_kind_name(s->period));
    char tz[16];
    period_tz_format(s->tz_min, tz, sizeof(tz));
    cJSON_AddStringToObject(doc, "timezone", tz);
    cJSON_AddNumberToObject(doc, "retain", s->retain);
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

char *render_write(const char *id, const struct board_outcome *o)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "id", id);
    add_number(doc, "score", o->score);
    cJSON_AddNumberToObject(doc, "rank", (double)o->rank);
    cJSON_AddBoolToObject(doc, "updated", o->updated);
    return finish(doc);
}
