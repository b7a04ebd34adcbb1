/* json_check.c -- checks of client JSON; see json_check.h. */
#include "json_check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "score_codec.h"

#define DUP_SCAN_MAX 16 /* fields compared pairwise; more go through a hash table */

/* An open-addressing table of the names, at most half full: comparing every pair cost ~26 s of
 * CPU for one 1 MB body of 100,000 distinct keys. */
const char *json_check_duplicate(const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *f = obj->child; f; f = f->next)
        n++;
    size_t cap = (size_t)DUP_SCAN_MAX * 2;
    while (cap < 2 * n)
        cap *= 2;
    const char **slots = n > DUP_SCAN_MAX ? calloc(cap, sizeof(*slots)) : NULL;
    if (!slots) { /* a few fields (or out of memory): pairwise */
        for (const cJSON *f = obj->child; f; f = f->next)
            for (const cJSON *g = obj->child; g != f; g = g->next)
                if (strcmp(f->string, g->string) == 0)
                    return f->string;
        return NULL;
    }
    const char *dup = NULL;
    for (const cJSON *f = obj->child; f && !dup; f = f->next) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const unsigned char *p = (const unsigned char *)f->string; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
        size_t i = (size_t)h & (cap - 1);
        while (slots[i] && strcmp(slots[i], f->string) != 0)
            i = (i + 1) & (cap - 1);
        if (slots[i])
            dup = f->string;
        slots[i] = f->string;
    }
    free(slots);
    return dup;
}

int json_check_number(const cJSON *v, struct json_number *out)
{
    const char *lit = json_number_literal(v);
    if (lit)
        return json_number_parse(lit, strlen(lit), out);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -EINVAL;
    char text[40];
    render_number_text(v->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), out);
}

int json_check_score(const struct board_settings *s, const struct json_number *score, int64_t *key)
{
    int64_t scaled;
    int rc = json_number_score(&s->layout, score, &scaled);
    if (rc == 0)
        *key = score_codec_key(&s->layout, scaled);
    return rc;
}
