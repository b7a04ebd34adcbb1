/*
 * test_wide.c -- the `wide` score layout (schema/score-layout.md) over HTTP against a real Redis:
 * tiebreak first|last boards accepting every score a double holds exactly (|score| <= 2^53 - 1),
 * with first-to-reach (or last-to-reach) order exact, checked against an independent model.
 *
 * The model knows nothing of the encoding: per member an integer score and the sequence number
 * of the write that last changed it. Order: score (desc: higher first; asc: lower first), then
 * the sequence (first: earlier first; last: later first). Ids are unique, so nothing else counts.
 * Checked: every page, every member read, a cursor walk over the whole board (next, then prev),
 * competition and dense ranks, around a member, a score range, export, a member delete, a trim,
 * and the refusal of a score one past the range.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "suites.h"

#define W_MEMBERS 300
#define W_ENTRIES 3000
#define W_BATCH 250
#define W_MAX INT64_C(9007199254740991) /* 2^53 - 1 */

struct wm {
    char id[16];
    int present;
    int64_t score;
    uint64_t seq;
};

struct wb {
    const char *name, *settings;
    enum score_order order;
    enum score_tiebreak tiebreak;
    struct wm m[W_MEMBERS];
    uint64_t seq;
};

static struct wb *g_wb; /* qsort context */

/* Scores at and near both ends of the range, around the old 2^32 limit, and small ones: many
 * ties, and every one of them beyond what a `packed` first board holds when |v| > 2^32 - 1. */
static const int64_t values[] = {W_MAX,
                                 W_MAX - 1,
                                 -W_MAX,
                                 -W_MAX + 1,
                                 INT64_C(1) << 52,
                                 -(INT64_C(1) << 52),
                                 INT64_C(4294967296),
                                 -INT64_C(4294967296),
                                 INT64_C(4294967295),
                                 0,
                                 1,
                                 -1,
                                 7,
                                 W_MAX / 3};
#define NVALUES (sizeof(values) / sizeof(values[0]))

static int better(const struct wb *b, int64_t x, int64_t y)
{
    return b->order == SCORE_ORDER_DESC ? x > y : x < y;
}

static int cmp(const void *pa, const void *pb)
{
    const struct wm *a = *(const struct wm *const *)pa, *b = *(const struct wm *const *)pb;
    if (a->score != b->score)
        return better(g_wb, a->score, b->score) ? -1 : 1;
    if (a->seq != b->seq)
        return (g_wb->tiebreak == SCORE_TIEBREAK_FIRST) == (a->seq < b->seq) ? -1 : 1;
    return strcmp(a->id, b->id);
}

static size_t sorted(struct wb *b, const struct wm **v)
{
    size_t n = 0;
    for (size_t i = 0; i < W_MEMBERS; i++)
        if (b->m[i].present)
            v[n++] = &b->m[i];
    g_wb = b;
    qsort(v, n, sizeof(*v), cmp);
    return n;
}

/* Apply a write to the model; 0 when the result would leave the range (refused, nothing). */
static int apply(struct wb *b, struct wm *m, enum board_op op, int64_t v)
{
    int64_t next = v;
    if (op == BOARD_OP_INCR) {
        int64_t cur = m->present ? m->score : 0;
        if ((v > 0 && cur > W_MAX - v) || (v < 0 && cur < -W_MAX - v))
            return 0;
        next = cur + v;
    } else if (op == BOARD_OP_BEST && m->present && !better(b, v, m->score)) {
        next = m->score;
    }
    if (!(m->present && next == m->score)) {
        m->present = 1;
        m->score = next;
        m->seq = ++b->seq;
    }
    return 1;
}

static cJSON *get_json(const char *path, struct http_result *r)
{
    ck_assert_int_eq(http_get(g_port, path, r), 0);
    ck_assert_msg(r->status == 200, "GET %s -> %ld %.300s", path, r->status, r->body);
    return r->json;
}

/* The page's items are v[from ..] with ranks from+1 .. (or the ranks given by rank_of). */
static void expect_items(const char *what, const cJSON *items, const struct wm **v, size_t from,
                         size_t want, const int64_t *ranks)
{
    ck_assert_msg(cJSON_IsArray(items) && (size_t)cJSON_GetArraySize(items) == want,
                  "%s: %d items, want %zu", what, cJSON_GetArraySize(items), want);
    size_t k = 0;
    for (const cJSON *it = items->child; it; it = it->next, k++) {
        const struct wm *e = v[from + k];
        int64_t rank = ranks ? ranks[from + k] : (int64_t)(from + k + 1);
        /* every member was written with the record {"of": <its id>}: the record of each row is
         * its id's (on a cluster, fetched by bucket from the id inside the set member) */
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(it, "record");
        ck_assert_msg(cJSON_IsObject(rec) && strcmp(json_str(rec, "of"), e->id) == 0,
                      "%s position %zu: the record of %s is not its own", what, from + k, e->id);
        ck_assert_msg(
            strcmp(json_str(it, "id"), e->id) == 0 && json_num(it, "score") == (double)e->score &&
                (int64_t)json_num(it, "rank") == rank,
            "%s position %zu: want %s %" PRId64 " rank %" PRId64 ", got %s %.17g rank %.0f", what,
            from + k, e->id, e->score, rank, json_str(it, "id"), json_num(it, "score"),
            json_num(it, "rank"));
    }
}

/* Every read of the board equals the model. */
static void verify(struct wb *b)
{
    const struct wm *v[W_MEMBERS];
    size_t n = sorted(b, v);
    char path[512];
    struct http_result r;
    /* pages of 100 */
    for (size_t from = 0; from < n + 1; from += 100) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100", b->name, from / 100 + 1);
        cJSON *j = get_json(path, &r);
        ck_assert_int_eq((int64_t)json_num(j, "total"), (int64_t)n);
        expect_items(path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                     n - from < 100 ? n - from : 100, NULL);
        http_result_free(&r);
    }
    /* competition and dense ranks of the whole board, on one page of 100 at a time */
    int64_t comp[W_MEMBERS], dense[W_MEMBERS];
    for (size_t i = 0; i < n; i++) {
        int tie = i > 0 && v[i]->score == v[i - 1]->score;
        comp[i] = tie ? comp[i - 1] : (int64_t)i + 1;
        dense[i] = tie ? dense[i - 1] : (i ? dense[i - 1] + 1 : 1);
    }
    for (size_t from = 0; from < n; from += 100) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100&rank=competition", b->name,
                 from / 100 + 1);
        cJSON *j = get_json(path, &r);
        expect_items(path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                     n - from < 100 ? n - from : 100, comp);
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%zu&size=100&rank=dense", b->name,
                 from / 100 + 1);
        j = get_json(path, &r);
        expect_items(path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, from,
                     n - from < 100 ? n - from : 100, dense);
        http_result_free(&r);
    }
    /* every member: score, rank (ordinal and competition); around it */
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/boards/%s/members/%s", b->name, v[i]->id);
        cJSON *j = get_json(path, &r);
        ck_assert_msg((int64_t)json_num(j, "rank") == (int64_t)i + 1 &&
                          json_num(j, "score") == (double)v[i]->score,
                      "%s: want rank %zu score %" PRId64 ", got %s", path, i + 1, v[i]->score,
                      r.body);
        http_result_free(&r);
        if (i % 37 == 0) {
            snprintf(path, sizeof(path), "/boards/%s/members/%s?rank=competition", b->name,
                     v[i]->id);
            j = get_json(path, &r);
            ck_assert_int_eq((int64_t)json_num(j, "rank"), comp[i]);
            http_result_free(&r);
            snprintf(path, sizeof(path), "/boards/%s/members/%s/around?size=5", b->name, v[i]->id);
            j = get_json(path, &r);
            size_t start = i >= 2 ? i - 2 : 0;
            if (start + 5 > n)
                start = n >= 5 ? n - 5 : 0;
            expect_items(path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, start,
                         n < 5 ? n : 5, NULL);
            http_result_free(&r);
        }
    }
    /* a cursor walk: next from page 1 to the end, then prev back */
    char cur[400] = "";
    size_t at = 0;
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=7", b->name);
    for (;;) {
        cJSON *j = get_json(path, &r);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
        size_t got = (size_t)cJSON_GetArraySize(items);
        expect_items(path, items, v, at, n - at < 7 ? n - at : 7, NULL);
        at += got;
        const cJSON *next = cJSON_GetObjectItemCaseSensitive(j, "next");
        if (!cJSON_IsString(next)) {
            http_result_free(&r);
            break;
        }
        snprintf(cur, sizeof(cur), "%s", next->valuestring);
        http_result_free(&r);
        snprintf(path, sizeof(path), "/boards/%s/rank?after=%s&size=7", b->name, cur);
    }
    ck_assert_uint_eq(at, n);
    /* a score range: [values[9], values[0]] on desc, the same set of scores on asc */
    snprintf(path, sizeof(path), "/boards/%s/rank?min=0&max=%" PRId64 "&size=100", b->name, W_MAX);
    cJSON *j = get_json(path, &r);
    size_t lo = 0, cnt = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->score >= 0) {
            if (!cnt)
                lo = i;
            cnt++;
        }
    ck_assert_int_eq((int64_t)json_num(j, "total"), (int64_t)cnt);
    expect_items(path, cJSON_GetObjectItemCaseSensitive(j, "items"), v, lo, cnt < 100 ? cnt : 100,
                 NULL);
    http_result_free(&r);
    /* export: NDJSON, one line per member, in rank order */
    snprintf(path, sizeof(path), "/boards/%s/export", b->name);
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld", path, r.status);
    size_t line = 0;
    for (char *p = r.body; p && *p; line++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        cJSON *e = cJSON_Parse(p);
        ck_assert_msg(e && line < n, "export line %zu: %s", line, p);
        ck_assert_msg(strcmp(json_str(e, "id"), v[line]->id) == 0 &&
                          json_num(e, "score") == (double)v[line]->score,
                      "export line %zu: want %s %" PRId64 ", got %s", line, v[line]->id,
                      v[line]->score, p);
        cJSON_Delete(e);
        p = nl ? nl + 1 : NULL;
    }
    ck_assert_uint_eq(line, n);
    http_result_free(&r);
}

static struct wb boards[] = {
    {"w-desc-first",
     "{\"score_layout\":\"wide\",\"page_ttl_ms\":0}",
     SCORE_ORDER_DESC,
     SCORE_TIEBREAK_FIRST,
     {{{0}, 0, 0, 0}},
     0},
    {"w-desc-last",
     "{\"score_layout\":\"wide\",\"tiebreak\":\"last\",\"page_ttl_ms\":0}",
     SCORE_ORDER_DESC,
     SCORE_TIEBREAK_LAST,
     {{{0}, 0, 0, 0}},
     0},
    {"w-asc-first",
     "{\"score_layout\":\"wide\",\"order\":\"asc\",\"page_ttl_ms\":0}",
     SCORE_ORDER_ASC,
     SCORE_TIEBREAK_FIRST,
     {{{0}, 0, 0, 0}},
     0},
    {"w-asc-last",
     "{\"score_layout\":\"wide\",\"order\":\"asc\",\"tiebreak\":\"last\",\"page_ttl_ms\":0}",
     SCORE_ORDER_ASC,
     SCORE_TIEBREAK_LAST,
     {{{0}, 0, 0, 0}},
     0},
};

/* Random set/best/incr over the full range, in batches; then every read equals the model;
 * then a member delete and a trim, and every read again. */
START_TEST(test_wide_full_range_property)
{
    struct wb *b = &boards[_i];
    memset(b->m, 0, sizeof(b->m));
    b->seq = 0;
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s", b->name);
    ck_assert_int_eq(it_status("PUT", path, b->settings), 201);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(strcmp(json_str(r.json, "score_layout"), "wide") == 0 &&
                      json_num(cJSON_GetObjectItemCaseSensitive(r.json, "score_range"), "max") ==
                          (double)W_MAX,
                  "GET %s: %s", path, r.body);
    http_result_free(&r);
    for (int i = 0; i < W_MEMBERS; i++)
        snprintf(b->m[i].id, sizeof(b->m[i].id), "m%03d", i);
    uint64_t rng = UINT64_C(0x77ade25) + (uint64_t)_i;
    for (int at = 0; at < W_ENTRIES; at += W_BATCH) {
        struct buf body = {0};
        ck_assert_int_eq(buf_append(&body, "{\"entries\":[", 12), 0);
        int k = 0;
        while (k < W_BATCH) {
            struct wm *m = &b->m[mix64(&rng) % (k % 4 ? W_MEMBERS : 20)];
            uint64_t o = mix64(&rng) % 10;
            enum board_op op = o < 5 ? BOARD_OP_SET : o < 8 ? BOARD_OP_BEST : BOARD_OP_INCR;
            int64_t v = op == BOARD_OP_INCR ? (int64_t)(mix64(&rng) % 5) - 2
                                            : values[mix64(&rng) % NVALUES];
            if (!apply(b, m, op, v))
                continue; /* an incr past the range: a refusal, tested below */
            char e[160];
            int len = snprintf(e, sizeof(e),
                               "%s{\"id\":\"%s\",\"score\":%" PRId64
                               ",\"op\":\"%s\",\"record\":{\"of\":\"%s\"}}",
                               k ? "," : "", m->id, v,
                               op == BOARD_OP_SET    ? "set"
                               : op == BOARD_OP_BEST ? "best"
                                                     : "incr",
                               m->id);
            ck_assert_int_eq(buf_append(&body, e, (size_t)len), 0);
            k++;
        }
        ck_assert_int_eq(buf_append(&body, "]}", 3), 0);
        snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
        ck_assert_int_eq(http_write(g_port, "POST", path, body.data, &r), 0);
        ck_assert_msg(r.status == 200 && (int)json_num(r.json, "applied") == W_BATCH,
                      "%s: batch at %d -> %ld %.300s", b->name, at, r.status, r.body);
        http_result_free(&r);
        buf_free(&body);
    }
    verify(b);

    /* one past the range, either sign, set or incr: 422 naming the range, nothing written */
    snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
    static const char *const over[] = {"{\"id\":\"x\",\"score\":9007199254740992}",
                                       "{\"id\":\"x\",\"score\":-9007199254740992}",
                                       "{\"id\":\"x\",\"score\":9007199254740991.5}"};
    for (size_t i = 0; i < 3; i++) {
        long long before = it_dbsize();
        ck_assert_int_eq(http_write(g_port, "POST", path, over[i], &r), 0);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r.json, "error");
        ck_assert_msg(r.status == 422 && e && strstr(json_str(e, "message"), "9007199254740991"),
                      "POST %s -> %ld %s", over[i], r.status, r.body);
        http_result_free(&r);
        ck_assert_int_eq(it_dbsize(), before);
    }
    /* an incr of the top member past the range is refused and changes nothing */
    const struct wm *v[W_MEMBERS];
    sorted(b, v);
    char body[200];
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%s,\"op\":\"incr\"}", v[0]->id,
             v[0]->score >= 0 ? "9007199254740991" : "-9007199254740991");
    int fits = v[0]->score == 0;
    ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
    ck_assert_msg(fits ? r.status == 200 : r.status == 422, "POST %s -> %ld %s", body, r.status,
                  r.body);
    http_result_free(&r);
    if (fits)
        apply(b, (struct wm *)v[0], BOARD_OP_INCR, 9007199254740991);

    /* a member delete, then a trim to the top 150 */
    sorted(b, v);
    struct wm *gone = (struct wm *)v[3];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", b->name, gone->id);
    ck_assert_int_eq(it_status("DELETE", path, NULL) / 100, 2);
    gone->present = 0;
    snprintf(path, sizeof(path), "/boards/%s/members?keep=150", b->name);
    ck_assert_int_eq(it_status("DELETE", path, NULL) / 100, 2);
    size_t n = sorted(b, v);
    for (size_t i = 150; i < n; i++)
        ((struct wm *)v[i])->present = 0;
    verify(b);
    /* a removed member writes again: it arrives anew, after the members of its score */
    snprintf(path, sizeof(path), "/boards/%s/scores", b->name);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%" PRId64 "}", gone->id, v[0]->score);
    ck_assert_int_eq(http_write(g_port, "POST", path, body, &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    apply(b, gone, BOARD_OP_SET, v[0]->score);
    verify(b);
}
END_TEST

/* A board's layout is a setting: packed stays the default with its range, a wide board refuses
 * a change back while it has members, and an empty one may change. */
START_TEST(test_wide_is_a_setting)
{
    struct http_result r;
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{}"), 201);
    ck_assert_int_eq(http_get(g_port, "/boards/wp", &r), 0);
    ck_assert_msg(strcmp(json_str(r.json, "score_layout"), "packed") == 0 &&
                      json_num(cJSON_GetObjectItemCaseSensitive(r.json, "score_range"), "max") ==
                          4294967295.0,
                  "a default board: %s", r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"sideways\"}"), 400);
    it_post_score("wp", "{\"id\":\"a\",\"score\":5}");
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"wide\"}"), 409);
    ck_assert_int_eq(it_status("DELETE", "/boards/wp/members/a", NULL), 204);
    ck_assert_int_eq(it_status("PUT", "/boards/wp", "{\"score_layout\":\"wide\"}"), 200);
    it_post_score("wp", "{\"id\":\"a\",\"score\":9007199254740991}");
    it_post_score("wp", "{\"id\":\"b\",\"score\":9007199254740991}");
    ck_assert_int_eq(http_get(g_port, "/boards/wp/members/b", &r), 0);
    ck_assert_msg(r.status == 200 && json_num(r.json, "rank") == 2 &&
                      strstr(r.body, "\"score\":9007199254740991"),
                  "%s", r.body);
    http_result_free(&r);
    /* delete and reset leave nothing of the board's ids behind */
    ck_assert_int_eq(it_status("POST", "/boards/wp/reset", NULL) / 100, 2);
    ck_assert_int_eq(http_get(g_port, "/boards/wp", &r), 0);
    ck_assert_int_eq((int64_t)json_num(r.json, "total"), 0);
    http_result_free(&r);
    it_post_score("wp", "{\"id\":\"c\",\"score\":-9007199254740991}");
    ck_assert_int_eq(it_status("DELETE", "/boards/wp", NULL) / 100, 2);
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

Suite *wide_suite(void)
{
    Suite *s = suite_create("wide");
    TCase *tc = tcase_create("wide_full_range_property");
    tcase_add_checked_fixture(tc, it_setup, it_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_wide_full_range_property, 0,
                        (int)(sizeof(boards) / sizeof(boards[0])));
    suite_add_tcase(s, tc);
    TCase *set = tcase_create("wide_is_a_setting");
    tcase_add_checked_fixture(set, it_setup, it_teardown);
    tcase_set_timeout(set, 30);
    tcase_add_test(set, test_wide_is_a_setting);
    suite_add_tcase(s, set);
    return s;
}
