/*
 * test_with.c -- a page and chosen members in one read (GET /boards/{board}/rank?with=), over
 * real HTTP against a real Redis:
 *   1. what `with` refuses (400s from the error table) and a board that is not there (404);
 *   2. Redis commands per request (MONITOR): one EVALSHA for a live page with its members, two
 *      for a cached page (page_get.lua, then lookup.lua for the members);
 *   3. the page and the members against an independent model (random scores with ties, every
 *      rank type, several sizes and pages, ids on and off the page, missing ids), live and
 *      cached; a cached page that stays cached while its members are read live; a periodic
 *      board read by ?period=.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* ---------------------------------------------------------------- 1. refusals */

START_TEST(test_with_refusals)
{
    ck_assert_int_eq(it_status("PUT", "/boards/wr", "{}"), 201);
    it_post_score("wr", "{\"id\":\"a\",\"score\":1}");
    it_expect_error("GET", "/boards/wr/rank?with=", NULL, 400, "invalid_id");
    it_expect_error("GET", "/boards/wr/rank?with=a,,b", NULL, 400, "invalid_id");
    it_expect_error("GET", "/boards/wr/rank?with=a%01", NULL, 400, "invalid_id");
    it_expect_error("GET", "/boards/wr/rank?with=a,b,a", NULL, 400, "invalid_ids");
    it_expect_error("GET", "/boards/wr/rank?with=a&with=b", NULL, 400, "invalid_parameter");
    it_expect_error("GET", "/boards/wr/rank?with=a&min=0", NULL, 400, "invalid_parameter");
    char path[512] = "/boards/wr/rank?with=i0";
    for (int i = 1; i < 21; i++)
        snprintf(path + strlen(path), sizeof(path) - strlen(path), ",i%d", i);
    it_expect_error("GET", path, NULL, 400, "invalid_ids"); /* 21 ids */
    *strrchr(path, ',') = '\0';                             /* 20: fine */
    cJSON *d = it_get(path);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "missing")), 20);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "with")), 0);
    cJSON_Delete(d);
    it_expect_error("GET", "/boards/nope/rank?with=a", NULL, 404, "board_not_found");
    /* a ',' inside an id is %2C, as in members?ids= */
    it_post_score("wr", "{\"id\":\"x,y\",\"score\":5}");
    d = it_get("/boards/wr/rank?with=x%2Cy");
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "with"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(w, "id")->valuestring, "x,y");
    ck_assert_int_eq(cJSON_GetObjectItem(w, "rank")->valueint, 1);
    cJSON_Delete(d);
}
END_TEST

/* ---------------------------------------------------------------- 2. round trips */

/* GET path with MONITOR on: its top-level commands must be want_verbs; returns the body. */
static cJSON *get_counted(const char *path, const char *want_verbs)
{
    redisContext *mon = mon_start(g_redis.port);
    cJSON *d = it_get(path);
    char verbs[400];
    int n = mon_top_level(g_admin, mon, verbs, sizeof(verbs));
    fprintf(stderr, "with: GET %s: %d top-level command(s): %s\n", path, n, verbs);
    ck_assert_msg(strcmp(verbs, want_verbs) == 0, "GET %s cost %d top-level commands (%s); want %s",
                  path, n, verbs, want_verbs);
    return d;
}

START_TEST(test_with_round_trips)
{
    ck_assert_int_eq(it_status("PUT", "/boards/wl", "{\"page_ttl_ms\":0}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/wc", "{\"page_ttl_ms\":60000}"), 201);
    for (int i = 0; i < 30; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d}", i, 100 - i);
        it_post_score("wl", body);
        it_post_score("wc", body);
    }
    /* the connections dialled and each board's settings seen once */
    cJSON_Delete(it_get("/boards/wl/rank?with=m1"));
    cJSON_Delete(it_get("/boards/wc/rank?page=2&size=5"));
    cJSON_Delete(it_get("/boards/wc/rank?page=2&size=5"));

    /* a live page and its members: one EVALSHA (page.lua reads both) */
    cJSON *d = get_counted("/boards/wl/rank?page=2&size=5&with=m0,m7,m29,nobody", "EVALSHA");
    cJSON *w = cJSON_GetObjectItem(d, "with");
    ck_assert_int_eq(cJSON_GetArraySize(w), 3);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(w, 0), "id")->valuestring, "m0");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(w, 1), "page")->valueint, 2);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(w, 2), "rank")->valueint, 30);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "missing"), 0)->valuestring,
                     "nobody");
    cJSON_Delete(d);
    cJSON_Delete(get_counted("/boards/wl/rank?page=3&size=7&rank=dense&with=m3", "EVALSHA"));
    /* a cached page stays cached: page_get.lua, then lookup.lua for the members */
    d = get_counted("/boards/wc/rank?page=2&size=5&with=m0,m7,nobody", "EVALSHA EVALSHA");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "with")), 2);
    cJSON_Delete(d);
}
END_TEST

/* ---------------------------------------------------------------- 3. against a model */

#define NM 57

struct member {
    char id[16];
    long score;
    int order; /* write order: the tie-break of a `first` board */
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1; /* desc */
    return x->order - y->order;
}

/* The model's rank of sorted[i] by rank type. */
static long model_rank(const struct member *sorted, int n, int i, const char *type)
{
    (void)n;
    if (strcmp(type, "ordinal") == 0)
        return i + 1;
    long better = 0, distinct = 0;
    for (int k = 0; k < i; k++) {
        if (sorted[k].score == sorted[i].score)
            break;
        better++;
        if (k == 0 || sorted[k].score != sorted[k - 1].score)
            distinct++;
    }
    return strcmp(type, "competition") == 0 ? better + 1 : distinct + 1;
}

static int model_find(const struct member *sorted, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(sorted[i].id, id) == 0)
            return i;
    return -1;
}

/* The page read (its items) and its `with` and `missing` against the model. */
static void check_read(const cJSON *d, const struct member *sorted, int n, int page, int size,
                       const char *type, char ids[][16], int nids, const char *path)
{
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    int start = (page - 1) * size;
    int want_items = start >= n ? 0 : (n - start < size ? n - start : size);
    ck_assert_msg(cJSON_GetArraySize(items) == want_items, "%s: %d items, want %d", path,
                  cJSON_GetArraySize(items), want_items);
    for (int i = 0; i < want_items; i++) {
        const cJSON *it = cJSON_GetArrayItem(items, i);
        ck_assert_msg(strcmp(cJSON_GetObjectItem(it, "id")->valuestring, sorted[start + i].id) == 0,
                      "%s: item %d is %s, want %s", path, i,
                      cJSON_GetObjectItem(it, "id")->valuestring, sorted[start + i].id);
        ck_assert_int_eq(cJSON_GetObjectItem(it, "rank")->valueint,
                         model_rank(sorted, n, start + i, type));
    }
    const cJSON *with = cJSON_GetObjectItem(d, "with"),
                *missing = cJSON_GetObjectItem(d, "missing");
    ck_assert_msg(cJSON_IsArray(with) && cJSON_IsArray(missing), "%s: no with/missing", path);
    /* found: in rank order; missing: in the order asked */
    int found = 0, nmiss = 0, last_pos = -1;
    for (int k = 0; k < nids; k++) {
        int pos = model_find(sorted, n, ids[k]);
        if (pos < 0) {
            const cJSON *m = cJSON_GetArrayItem(missing, nmiss++);
            ck_assert_msg(m && strcmp(m->valuestring, ids[k]) == 0, "%s: missing[%d] is not %s",
                          path, nmiss - 1, ids[k]);
            continue;
        }
        found++;
    }
    ck_assert_int_eq(cJSON_GetArraySize(missing), nmiss);
    ck_assert_int_eq(cJSON_GetArraySize(with), found);
    for (int k = 0; k < found; k++) {
        const cJSON *w = cJSON_GetArrayItem(with, k);
        const char *id = cJSON_GetObjectItem(w, "id")->valuestring;
        int pos = model_find(sorted, n, id);
        ck_assert_msg(pos > last_pos, "%s: with is not in rank order at %s", path, id);
        last_pos = pos;
        ck_assert_msg(cJSON_GetObjectItem(w, "rank")->valueint == model_rank(sorted, n, pos, type),
                      "%s: %s rank %d, want %ld", path, id,
                      cJSON_GetObjectItem(w, "rank")->valueint, model_rank(sorted, n, pos, type));
        ck_assert_int_eq((long)cJSON_GetObjectItem(w, "score")->valuedouble, sorted[pos].score);
        ck_assert_int_eq(cJSON_GetObjectItem(w, "page")->valueint, pos / size + 1);
        const cJSON *rec = cJSON_GetObjectItem(w, "record");
        ck_assert_msg(cJSON_IsObject(rec) &&
                          strcmp(cJSON_GetObjectItem(rec, "n")->valuestring, id) == 0,
                      "%s: %s's record", path, id);
    }
}

/* Fill board `b` with NM members (scores 0..19: many ties), each with a record {"n": id}; the
 * model sorted. */
static void model_fill(const char *b, struct member *sorted, unsigned *seed)
{
    for (int i = 0; i < NM; i++) {
        struct member *m = &sorted[i];
        snprintf(m->id, sizeof(m->id), "p%d", i);
        m->score = rand_r(seed) % 20;
        m->order = i;
        char body[160];
        snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%ld,\"record\":{\"n\":\"%s\"}}",
                 m->id, m->score, m->id);
        it_post_score(b, body);
    }
    qsort(sorted, NM, sizeof(*sorted), cmp_member);
}

/* Random reads of board b (path prefix `base`, e.g. "/boards/b/rank?x=1") against the model. */
static void model_reads(const char *base, const struct member *sorted, unsigned *seed, int reads)
{
    static const char *const types[] = {"ordinal", "competition", "dense"};
    static const int sizes[] = {0, 1, 7, 20, 100};
    for (int r = 0; r < reads; r++) {
        const char *type = types[rand_r(seed) % 3];
        int si = rand_r(seed) % 5;
        int size = sizes[si] ? sizes[si] : 20; /* the board's page_size: the default, 20 */
        int pages = (NM + size - 1) / size;
        int page = 1 + rand_r(seed) % (pages + 1); /* one past the last too */
        char ids[6][16];
        int nids = 1 + rand_r(seed) % 6;
        char list[200] = "";
        for (int k = 0; k < nids; k++) {
            int again;
            do { /* each id once: on the board (p0..p56) or not (q..) */
                int v = rand_r(seed) % (NM + 10);
                if (v < NM)
                    snprintf(ids[k], sizeof(ids[k]), "p%d", v);
                else
                    snprintf(ids[k], sizeof(ids[k]), "q%d", v);
                again = 0;
                for (int x = 0; x < k; x++)
                    again |= strcmp(ids[x], ids[k]) == 0;
            } while (again);
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? "," : "",
                     ids[k]);
        }
        char path[512];
        snprintf(path, sizeof(path), "%s&page=%d&rank=%s&with=%s", base, page, type, list);
        if (sizes[si])
            snprintf(path + strlen(path), sizeof(path) - strlen(path), "&size=%d", size);
        cJSON *d = it_get(path);
        check_read(d, sorted, NM, page, size, type, ids, nids, path);
        cJSON_Delete(d);
    }
}

START_TEST(test_with_model)
{
    unsigned seed = 2512;
    struct member live[NM], cached[NM];
    ck_assert_int_eq(it_status("PUT", "/boards/ml", "{\"page_ttl_ms\":0}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/mc", "{\"page_ttl_ms\":60000}"), 201);
    model_fill("ml", live, &seed);
    model_fill("mc", cached, &seed);
    model_reads("/boards/ml/rank?x=1", live, &seed, 60);
    model_reads("/boards/mc/rank?x=1", cached, &seed, 60);
    /* the same reads again: the cached board's pages are hits now */
    seed = 7;
    model_reads("/boards/mc/rank?x=1", cached, &seed, 30);
}
END_TEST

/* A cached page stays the cached page; its members are read as they are now. */
START_TEST(test_with_cached_page_live_members)
{
    ck_assert_int_eq(it_status("PUT", "/boards/cl", "{\"page_ttl_ms\":60000}"), 201);
    for (int i = 0; i < 10; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"id\":\"c%d\",\"score\":%d}", i, 100 - i);
        it_post_score("cl", body);
    }
    struct http_result r1, r2, r3;
    it_expect("GET", "/boards/cl/rank?size=3&with=c9", NULL, 200, &r1);
    char e1[64], e2[64], xc[16], cc[64];
    http_header_value(&r1, "ETag", e1, sizeof(e1));
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(r1.json, "with"), 0);
    ck_assert_int_eq(cJSON_GetObjectItem(w, "rank")->valueint, 10);
    ck_assert_int_eq(cJSON_GetObjectItem(w, "page")->valueint, 4);
    /* c9 to the top: the cached page 1 still shows c0..c2, c9's entry is live */
    it_post_score("cl", "{\"id\":\"c9\",\"score\":1000}");
    it_expect("GET", "/boards/cl/rank?size=3&with=c9", NULL, 200, &r2);
    ck_assert_str_eq(http_header_value(&r2, "X-Cache", xc, sizeof(xc)), "hit");
    ck_assert_str_eq(http_header_value(&r2, "Cache-Control", cc, sizeof(cc)), "no-cache");
    const cJSON *items = cJSON_GetObjectItem(r2.json, "items");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "id")->valuestring, "c0");
    w = cJSON_GetArrayItem(cJSON_GetObjectItem(r2.json, "with"), 0);
    ck_assert_int_eq(cJSON_GetObjectItem(w, "rank")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(w, "page")->valueint, 1);
    ck_assert_int_eq((int)cJSON_GetObjectItem(w, "score")->valuedouble, 1000);
    http_header_value(&r2, "ETag", e2, sizeof(e2));
    ck_assert_msg(strcmp(e1, e2) != 0, "the ETag did not change with the members (%s)", e1);
    /* the same body again: 304 on its ETag */
    char inm[96];
    snprintf(inm, sizeof(inm), "If-None-Match: %s", e2);
    const char *hdrs[] = {inm, NULL};
    ck_assert_int_eq(http_req_h(g_port, "GET", "/boards/cl/rank?size=3&with=c9", NULL, 0, NULL,
                                TEST_TOKEN, hdrs, &r3),
                     0);
    ck_assert_int_eq(r3.status, 304);
    /* without with the page is the plain cached page */
    cJSON *d = it_get("/boards/cl/rank?size=3");
    ck_assert_ptr_null(cJSON_GetObjectItem(d, "with"));
    cJSON_Delete(d);
    http_result_free(&r1);
    http_result_free(&r2);
    http_result_free(&r3);
}
END_TEST

/* A daily board: with reads the period asked, as the page does. */
START_TEST(test_with_period)
{
    ck_assert_int_eq(it_status("PUT", "/boards/pd", "{\"period\":\"daily\",\"page_ttl_ms\":0}"),
                     201);
    it_post_score("pd", "{\"id\":\"a\",\"score\":3}");
    it_post_score("pd", "{\"id\":\"b\",\"score\":7}");
    cJSON *info = it_get("/boards/pd");
    char path[256];
    snprintf(path, sizeof(path), "/boards/pd/rank?period=%s&with=a,zz",
             cJSON_GetObjectItem(info, "current_period")->valuestring);
    cJSON_Delete(info);
    cJSON *d = it_get(path);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "with"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(w, "id")->valuestring, "a");
    ck_assert_int_eq(cJSON_GetObjectItem(w, "rank")->valueint, 2);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "missing"), 0)->valuestring, "zz");
    cJSON_Delete(d);
    it_expect_error("GET", "/boards/pd/rank?period=2001-01-01&with=a", NULL, 404,
                    "period_not_found");
}
END_TEST

Suite *with_suite(void)
{
    const struct it_case cases[] = {
        {"refusals", test_with_refusals},
        {"round_trips", test_with_round_trips},
        {"model", test_with_model},
        {"cached_page_live_members", test_with_cached_page_live_members},
        {"period", test_with_period},
    };
    return it_suite("with", cases, sizeof(cases) / sizeof(cases[0]));
}
