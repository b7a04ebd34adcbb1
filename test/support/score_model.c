/* score_model.c -- see score_model.h. */
#include "score_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checks.h"

void model_init(struct model_board *b, size_t n)
{
    b->m = calloc(n, sizeof(*b->m));
    ck_assert_ptr_nonnull(b->m);
    b->n = n;
    b->seq = 0;
    pthread_mutex_init(&b->lock, NULL);
    for (size_t i = 0; i < n; i++)
        snprintf(b->m[i].id, sizeof(b->m[i].id), "m%03d", (int)i);
}

void model_free(struct model_board *b)
{
    free(b->m);
    b->m = NULL;
    b->n = 0;
    pthread_mutex_destroy(&b->lock);
}

int model_tuple_cmp(const struct model_board *b, int64_t s1, const int64_t *u1, int64_t s2,
                    const int64_t *u2)
{
    if (s1 != s2)
        return (b->order == SCORE_ORDER_DESC) == (s1 > s2) ? -1 : 1;
    for (int c = 0; c < b->nsub; c++)
        if (u1[c] != u2[c])
            return b->asc[c] == (u1[c] < u2[c]) ? -1 : 1;
    return 0;
}

static int member_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct model_board *mb = ctx;
    const struct model_member *a = *(const struct model_member *const *)pa;
    const struct model_member *b = *(const struct model_member *const *)pb;
    int t = model_tuple_cmp(mb, a->score, a->sub, b->score, b->sub);
    if (t)
        return t;
    if (mb->tiebreak != SCORE_TIEBREAK_ID && a->seq != b->seq)
        return (mb->tiebreak == SCORE_TIEBREAK_FIRST) == (a->seq < b->seq) ? -1 : 1;
    return strcmp(a->id, b->id);
}

size_t model_sorted(const struct model_board *b, const struct model_member **v)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->m[i].present)
            v[n++] = &b->m[i];
    qsort_r(v, n, sizeof(*v), member_cmp, (void *)b);
    return n;
}

int model_apply(struct model_board *b, struct model_member *m, enum board_op op, int64_t v,
                const int64_t *u)
{
    int64_t next = v, nu[MODEL_COLS] = {0};
    for (int c = 0; c < b->nsub; c++)
        nu[c] = u[c];
    if (op == BOARD_OP_INCR) {
        int64_t cur = m->present ? m->score : 0;
        if ((v > 0 && cur > MODEL_MAX - v) || (v < 0 && cur < -MODEL_MAX - v))
            return 0;
        next = cur + v;
        for (int c = 0; c < b->nsub; c++) {
            int64_t cu = m->present ? m->sub[c] : 0;
            if ((u[c] > 0 && cu > MODEL_MAX - u[c]) || (u[c] < 0 && cu < -MODEL_MAX - u[c]))
                return 0;
            nu[c] = cu + u[c];
        }
    } else if (op == BOARD_OP_BEST && m->present &&
               model_tuple_cmp(b, v, nu, m->score, m->sub) >= 0) {
        next = m->score;
        memcpy(nu, m->sub, sizeof(nu));
    }
    if (!(m->present && model_tuple_cmp(b, next, nu, m->score, m->sub) == 0)) {
        m->present = 1;
        m->score = next;
        memcpy(m->sub, nu, sizeof(nu));
        pthread_mutex_lock(&b->lock);
        m->seq = ++b->seq;
        pthread_mutex_unlock(&b->lock);
    }
    return 1;
}

void model_ranks(const struct model_board *b, const struct model_member *const *v, size_t n,
                 int64_t *comp, int64_t *dense)
{
    for (size_t i = 0; i < n; i++) {
        int tie = i > 0 &&
                  model_tuple_cmp(b, v[i]->score, v[i]->sub, v[i - 1]->score, v[i - 1]->sub) == 0;
        comp[i] = tie ? comp[i - 1] : (int64_t)i + 1;
        dense[i] = tie ? dense[i - 1] : (i ? dense[i - 1] + 1 : 1);
    }
}

/* Integers up to 2^53 - 1 are exact doubles, so cJSON's value is the literal's. */
int model_subs_equal(const struct model_board *b, const cJSON *o, const struct model_member *e)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "subscores");
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != b->nsub)
        return 0;
    int c = 0;
    for (const cJSON *x = a->child; x; x = x->next, c++)
        if (!cJSON_IsNumber(x) || x->valuedouble != (double)e->sub[c])
            return 0;
    return 1;
}

void model_expect_items(const struct model_board *b, const char *what, const cJSON *items,
                        const struct model_member *const *v, size_t from, size_t want,
                        const int64_t *ranks)
{
    ck_assert_msg(cJSON_IsArray(items) && (size_t)cJSON_GetArraySize(items) == want,
                  "%s: %d items, want %zu", what, cJSON_GetArraySize(items), want);
    size_t k = 0;
    for (const cJSON *it = items->child; it; it = it->next, k++) {
        const struct model_member *e = v[from + k];
        int64_t rank = ranks ? ranks[from + k] : (int64_t)(from + k + 1);
        /* the record of each row is its id's (on a cluster, fetched by bucket from the id inside
         * the set member) */
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(it, "record");
        ck_assert_msg(cJSON_IsObject(rec) && strcmp(json_str(rec, "of"), e->id) == 0,
                      "%s position %zu: the record of %s is not its own", what, from + k, e->id);
        char *got = cJSON_PrintUnformatted(it);
        ck_assert_msg(
            strcmp(json_str(it, "id"), e->id) == 0 && json_num(it, "score") == (double)e->score &&
                (int64_t)json_num(it, "rank") == rank && (!b->nsub || model_subs_equal(b, it, e)),
            "%s position %zu: want %s %" PRId64 " [%" PRId64 ",%" PRId64 ",%" PRId64
            "] rank %" PRId64 ", got %s",
            what, from + k, e->id, e->score, e->sub[0], e->sub[1], e->sub[2], rank, got);
        free(got);
    }
}

cJSON *model_get(int port, const char *path, struct http_result *r)
{
    ck_assert_int_eq(http_get(port, path, r), 0);
    ck_assert_msg(r->status == 200, "GET %s -> %ld %.300s", path, r->status, r->body);
    return r->json;
}

void model_expect_cursor_walk(int port, const struct model_board *b,
                              const struct model_member *const *v, size_t n, int size)
{
    char path[512];
    struct http_result r;
    size_t at = 0;
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=%d", b->name, size);
    for (;;) {
        cJSON *j = model_get(port, path, &r);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
        size_t got = (size_t)cJSON_GetArraySize(items);
        model_expect_items(b, path, items, v, at, n - at < (size_t)size ? n - at : (size_t)size,
                           NULL);
        at += got;
        const cJSON *next = cJSON_GetObjectItemCaseSensitive(j, "next");
        if (!cJSON_IsString(next)) {
            http_result_free(&r);
            break;
        }
        char cur[400];
        snprintf(cur, sizeof(cur), "%s", next->valuestring);
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/%s/rank?after=%s&size=%d", b->name, cur, size);
    }
    ck_assert_uint_eq(at, n);
}

void model_expect_range(int port, const struct model_board *b, const struct model_member *const *v,
                        size_t n, int64_t lo, int64_t hi)
{
    char path[512];
    struct http_result r;
    snprintf(path, sizeof(path), "/boards/%s/rank?min=%" PRId64 "&max=%" PRId64 "&size=100",
             b->name, lo, hi);
    cJSON *j = model_get(port, path, &r);
    size_t first = 0, cnt = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->score >= lo && v[i]->score <= hi) {
            if (!cnt)
                first = i;
            cnt++;
        }
    ck_assert_int_eq((int64_t)json_num(j, "total"), (int64_t)cnt);
    model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, first,
                       cnt < 100 ? cnt : 100, NULL);
    http_result_free(&r);
}

void model_expect_export(int port, const struct model_board *b, const struct model_member *const *v,
                         size_t n)
{
    char path[512];
    struct http_result r;
    snprintf(path, sizeof(path), "/boards/%s/export", b->name);
    ck_assert_int_eq(http_get(port, path, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld", path, r.status);
    size_t line = 0;
    for (char *p = r.body; p && *p; line++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        cJSON *e = cJSON_Parse(p);
        ck_assert_msg(e && line < n, "export line %zu: %s", line, p);
        ck_assert_msg(strcmp(json_str(e, "id"), v[line]->id) == 0 &&
                          json_num(e, "score") == (double)v[line]->score &&
                          (!b->nsub || model_subs_equal(b, e, v[line])),
                      "export line %zu: want %s %" PRId64 ", got %s", line, v[line]->id,
                      v[line]->score, p);
        cJSON_Delete(e);
        p = nl ? nl + 1 : NULL;
    }
    ck_assert_uint_eq(line, n);
    http_result_free(&r);
}

void model_expect_around(int port, const struct model_board *b, const struct model_member *const *v,
                         size_t n, size_t i)
{
    char path[512];
    struct http_result r;
    snprintf(path, sizeof(path), "/boards/%s/members/%s/around?size=5", b->name, v[i]->id);
    cJSON *j = model_get(port, path, &r);
    size_t start = i >= 2 ? i - 2 : 0;
    if (start + 5 > n)
        start = n >= 5 ? n - 5 : 0;
    model_expect_items(b, path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, start,
                       n < 5 ? n : 5, NULL);
    http_result_free(&r);
}
