/*
 * test_ordering.c -- the ordering contract of issue 2 ("Ordering: compound scores, exact"), over
 * HTTP against a real Redis:
 *   - a property test: 20,000 random writes (set/best/incr, negative scores, heavy ties, ~10
 *     updates per member) on desc/asc x first/last/id boards, sent through the batch endpoint;
 *     every page and every member's rank must equal an independent reference sort;
 *   - small cases from real reports: tie order, best, paging past the end, negatives, decimals,
 *     tiebreak last, asc boards, range boundaries, incr overflow, tie-group compaction (with the
 *     board_set_tie_cap test hook) and the order of a full batch.
 *
 * The reference model knows nothing of the service's encoding: per member an integer score (in
 * board units * 10^decimals) and the global sequence number of the write that last CHANGED it.
 * Reference order: score (desc: higher first; asc: lower first), then tiebreak (first: earlier
 * sequence first; last: later first; id: ascending byte order), then id ascending.
 *
 * The property test prints its seed; RANKD_ORDERING_SEED=<n> replays another one.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board.h"
#include "suites.h"

#define PROP_SEED UINT64_C(0x5eed0f0d3a1e2024)
#define PROP_MEMBERS 2000
#define PROP_HOT 50 /* a fifth of the writes go to these members */
#define PROP_ENTRIES 20000
#define PROP_BATCH 500
#define PROP_VALUES 30 /* set/best scores: -12 .. 17 */
#define PROP_PAGE 100
#define REF_MAX 2048
#define ID_MAX 64

/* ---------------------------------------------------------------- small helpers */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t rnd_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(splitmix64(state) % n);
}

static void sb_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    ck_assert(n >= 0 && (size_t)n < sizeof(tmp));
    ck_assert_int_eq(buf_append(b, tmp, (size_t)n), 0);
}

/* Percent-encode every byte but [A-Za-z0-9_~-] (so '.', ':', '{', '}' and UTF-8 are escaped). */
static void pct_encode(const char *in, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '~';
        ck_assert(o + 4 < cap);
        if (plain) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

/* An exact decimal text of scaled / 10^decimals ("-0.3", "42949672.95", "17"). */
static void fmt_scaled(int64_t scaled, int decimals, char *out, size_t cap)
{
    uint64_t mag = scaled < 0 ? (uint64_t)0 - (uint64_t)scaled : (uint64_t)scaled;
    uint64_t p = 1;
    for (int i = 0; i < decimals; i++)
        p *= 10;
    if (decimals == 0)
        snprintf(out, cap, "%s%" PRIu64, scaled < 0 ? "-" : "", mag);
    else
        snprintf(out, cap, "%s%" PRIu64 ".%0*" PRIu64, scaled < 0 ? "-" : "", mag / p, decimals,
                 mag % p);
}

static double unscale(int64_t scaled, int decimals)
{
    double p = 1;
    for (int i = 0; i < decimals; i++)
        p *= 10;
    return (double)scaled / p;
}

static const char *op_name(enum board_op op)
{
    return op == BOARD_OP_BEST ? "best" : op == BOARD_OP_INCR ? "incr" : "set";
}

/* ---------------------------------------------------------------- HTTP helpers */

static long do_get(const char *path, struct http_result *r)
{
    ck_assert_msg(http_get(g_port, path, r) == 0, "GET %s: transport failure", path);
    return r->status;
}

static long post_scores(const char *board, const char *json, struct http_result *r)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    ck_assert_msg(http_write(g_port, "POST", path, json, r) == 0, "POST %s: transport failure",
                  path);
    return r->status;
}

static double jnum(const struct http_result *r, const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    ck_assert_msg(cJSON_IsNumber(v), "no number '%s' in %s", name, r->body);
    return v->valuedouble;
}

static const char *jstr(const struct http_result *r, const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    ck_assert_msg(cJSON_IsString(v), "no string '%s' in %s", name, r->body);
    return v->valuestring;
}

static int jbool(const struct http_result *r, const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    ck_assert_msg(cJSON_IsBool(v), "no boolean '%s' in %s", name, r->body);
    return cJSON_IsTrue(v);
}

/* Assert an error reply: status and code. */
static void expect_error(const struct http_result *r, long status, const char *code,
                         const char *what)
{
    ck_assert_msg(r->status == status && strcmp(http_error_code(r), code) == 0,
                  "%s: expected %ld %s, got %ld %s", what, status, code, r->status, r->body);
}

/* The member is not on the board (GET .../members/{id} is 404 member_not_found). */
static void expect_absent(const char *board, const char *id)
{
    char path[256];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 404 && strcmp(http_error_code(&r), "member_not_found") == 0,
                  "GET %s -> %ld %s; want 404 member_not_found", path, r.status, r.body);
    http_result_free(&r);
}

/* ---------------------------------------------------------------- reference model */

struct ref_member {
    char id[ID_MAX];
    size_t id_len;
    int present;
    int64_t score; /* board units * 10^decimals */
    uint64_t seq;  /* the write that last changed the score */
};

struct ref_board {
    char name[64];
    enum score_order order;
    enum score_tiebreak tiebreak;
    int decimals;
    size_t n; /* members known (present or not) */
    struct ref_member *m;
    uint64_t seq;
};

static const struct ref_board *g_sort_board; /* qsort context */

/*
 * Create (or, while empty, re-set) a board. Every board of this suite has page_ttl_ms 0: the
 * suite checks the order itself, so each page must be read from the sorted set, never from the
 * page cache (whose freshness bound is tested in test_page_cache.c).
 */
static void put_board(const char *board, const char *settings)
{
    char path[160];
    snprintf(path, sizeof(path), "/boards/%s", board);
    cJSON *doc = cJSON_Parse(settings);
    ck_assert_ptr_nonnull(doc);
    cJSON_AddNumberToObject(doc, "page_ttl_ms", 0);
    char *body = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    struct http_result r;
    ck_assert_int_eq(http_write(g_port, "PUT", path, body, &r), 0);
    ck_assert_msg(r.status == 201 || r.status == 200, "PUT %s %s -> %ld %s", path, body, r.status,
                  r.body);
    free(body);
    http_result_free(&r);
}

static void ref_init(struct ref_board *b, const char *name, enum score_order order,
                     enum score_tiebreak tiebreak, int decimals)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->name, sizeof(b->name), "%s", name);
    b->order = order;
    b->tiebreak = tiebreak;
    b->decimals = decimals;
    b->m = calloc(REF_MAX, sizeof(*b->m));
    ck_assert_ptr_nonnull(b->m);
    put_board(name, "{}");
}

static void ref_free(struct ref_board *b)
{
    free(b->m);
    b->m = NULL;
}

/* The index of member `id`, added (absent) when new. */
static size_t ref_member(struct ref_board *b, const char *id)
{
    size_t len = strlen(id);
    for (size_t i = 0; i < b->n; i++)
        if (b->m[i].id_len == len && memcmp(b->m[i].id, id, len) == 0)
            return i;
    ck_assert(b->n < REF_MAX && len < ID_MAX);
    memcpy(b->m[b->n].id, id, len + 1);
    b->m[b->n].id_len = len;
    return b->n++;
}

/* 1 when score x is strictly better than y on this board. */
static int ref_better(const struct ref_board *b, int64_t x, int64_t y)
{
    return b->order == SCORE_ORDER_DESC ? x > y : x < y;
}

/* Apply one write; returns 1 when the member's score changed (or it appeared). */
static int ref_apply(struct ref_board *b, size_t i, enum board_op op, int64_t v)
{
    struct ref_member *m = &b->m[i];
    int64_t next;
    if (op == BOARD_OP_INCR)
        next = (m->present ? m->score : 0) + v;
    else if (op == BOARD_OP_BEST && m->present && !ref_better(b, v, m->score))
        next = m->score;
    else
        next = v;
    if (m->present && next == m->score)
        return 0;
    m->present = 1;
    m->score = next;
    m->seq = ++b->seq;
    return 1;
}

static int id_cmp(const struct ref_member *a, const struct ref_member *b)
{
    size_t n = a->id_len < b->id_len ? a->id_len : b->id_len;
    int c = memcmp(a->id, b->id, n);
    if (c)
        return c;
    return (a->id_len > b->id_len) - (a->id_len < b->id_len);
}

static int ref_cmp(const void *pa, const void *pb)
{
    const struct ref_member *a = *(const struct ref_member *const *)pa;
    const struct ref_member *b = *(const struct ref_member *const *)pb;
    const struct ref_board *bd = g_sort_board;
    if (a->score != b->score)
        return ref_better(bd, a->score, b->score) ? -1 : 1;
    if (bd->tiebreak == SCORE_TIEBREAK_FIRST && a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (bd->tiebreak == SCORE_TIEBREAK_LAST && a->seq != b->seq)
        return a->seq > b->seq ? -1 : 1;
    return id_cmp(a, b);
}

/* The present members in reference order (free()); *n gets the count. */
static const struct ref_member **ref_sorted(const struct ref_board *b, size_t *n)
{
    const struct ref_member **v = calloc(b->n + 1, sizeof(*v));
    ck_assert_ptr_nonnull(v);
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->m[i].present)
            v[k++] = &b->m[i];
    g_sort_board = b;
    qsort(v, k, sizeof(*v), ref_cmp);
    *n = k;
    return v;
}

/* 1-based reference rank of member i (0 when absent). */
static int64_t ref_rank(const struct ref_board *b, size_t i)
{
    size_t n;
    const struct ref_member **v = ref_sorted(b, &n);
    int64_t rank = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k] == &b->m[i])
            rank = (int64_t)k + 1;
    free(v);
    return rank;
}

/* One member's entry as JSON, appended to out. */
static void entry_json(struct buf *out, const struct ref_board *b, size_t i, enum board_op op,
                       int64_t v)
{
    char num[48];
    fmt_scaled(v, b->decimals, num, sizeof(num));
    sb_printf(out, "{\"id\":\"%s\",\"score\":%s,\"op\":\"%s\"}", b->m[i].id, num, op_name(op));
}

/*
 * One write through the single-entry endpoint, applied to the model too; the reply must be 200
 * and carry the model's score, rank and `updated`.
 */
static void step(struct ref_board *b, const char *id, enum board_op op, int64_t v)
{
    size_t i = ref_member(b, id);
    struct buf body = {0};
    entry_json(&body, b, i, op, v);
    int changed = ref_apply(b, i, op, v);
    struct http_result r;
    post_scores(b->name, body.data, &r);
    ck_assert_msg(r.status == 200, "%s: POST %s -> %ld %s", b->name, body.data, r.status, r.body);
    int64_t rank = ref_rank(b, i);
    double score = unscale(b->m[i].score, b->decimals);
    ck_assert_msg(strcmp(jstr(&r, r.json, "id"), id) == 0 && jnum(&r, r.json, "score") == score &&
                      (int64_t)jnum(&r, r.json, "rank") == rank &&
                      jbool(&r, r.json, "updated") == changed,
                  "%s: POST %s -> %s; expected score %.17g rank %" PRId64 " updated %s", b->name,
                  body.data, r.body, score, rank, changed ? "true" : "false");
    http_result_free(&r);
    buf_free(&body);
}

/*
 * The board over HTTP equals the reference: every page at `size` (items, ranks, scores, total,
 * pages) including the empty page past the end, and with check_members every member's rank and
 * score through GET /boards/{b}/members/{id}.
 */
static void verify_board(const struct ref_board *b, int size, int check_members)
{
    size_t n;
    const struct ref_member **v = ref_sorted(b, &n);
    int64_t pages = ((int64_t)n + size - 1) / size;
    char path[400], enc[3 * ID_MAX + 1];
    for (int64_t p = 1; p <= pages + 1; p++) {
        snprintf(path, sizeof(path), "/boards/%s/rank?page=%" PRId64 "&size=%d", b->name, p, size);
        struct http_result r;
        ck_assert_msg(do_get(path, &r) == 200, "GET %s -> %ld %s", path, r.status, r.body);
        ck_assert_msg((int64_t)jnum(&r, r.json, "total") == (int64_t)n &&
                          (int64_t)jnum(&r, r.json, "pages") == pages,
                      "GET %s: total/pages want %zu/%" PRId64 ", got %s", path, n, pages, r.body);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
        ck_assert_msg(cJSON_IsArray(items), "GET %s: no items in %.300s", path, r.body);
        size_t from = (size_t)((p - 1) * size);
        size_t want = from >= n ? 0 : (n - from < (size_t)size ? n - from : (size_t)size);
        ck_assert_msg((size_t)cJSON_GetArraySize(items) == want,
                      "GET %s: %d items, expected %zu (total %zu)", path, cJSON_GetArraySize(items),
                      want, n);
        size_t k = 0;
        for (const cJSON *it = items->child; it; it = it->next, k++) {
            const struct ref_member *e = v[from + k];
            const char *id = jstr(&r, it, "id");
            int64_t rank = (int64_t)jnum(&r, it, "rank");
            double score = jnum(&r, it, "score");
            double want_score = unscale(e->score, b->decimals);
            if (strcmp(id, e->id) != 0 || rank != (int64_t)(from + k + 1) || score != want_score) {
                /* name the reference neighbourhood to make a mismatch readable */
                size_t j = 0;
                while (j < n && strcmp(v[j]->id, id) != 0)
                    j++;
                ck_abort_msg("board %s page %" PRId64 " position %zu (rank %zu): expected id '%s' "
                             "score %.17g seq %" PRIu64 ", got id '%s' score %.17g rank %" PRId64
                             " (its reference rank %zu, score %.17g, seq %" PRIu64 ")",
                             b->name, p, k, from + k + 1, e->id, want_score, e->seq, id, score,
                             rank, j + 1, j < n ? unscale(v[j]->score, b->decimals) : 0.0,
                             j < n ? v[j]->seq : 0);
            }
        }
        http_result_free(&r);
    }
    for (size_t k = 0; check_members && k < n; k++) {
        pct_encode(v[k]->id, v[k]->id_len, enc, sizeof(enc));
        snprintf(path, sizeof(path), "/boards/%s/members/%s", b->name, enc);
        struct http_result r;
        ck_assert_msg(do_get(path, &r) == 200, "GET %s -> %ld %s", path, r.status, r.body);
        double want_score = unscale(v[k]->score, b->decimals);
        ck_assert_msg((int64_t)jnum(&r, r.json, "rank") == (int64_t)k + 1 &&
                          jnum(&r, r.json, "score") == want_score &&
                          strcmp(jstr(&r, r.json, "id"), v[k]->id) == 0,
                      "board %s member '%s': expected rank %zu score %.17g, got %s", b->name,
                      v[k]->id, k + 1, want_score, r.body);
        http_result_free(&r);
    }
    free(v);
}

/* Page 1 (size 100) lists exactly `ids` in this order. */
static void expect_order(const char *board, const char *const *ids, size_t n)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=100", board);
    struct http_result r;
    ck_assert_msg(do_get(path, &r) == 200, "GET %s -> %ld %s", path, r.status, r.body);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
    ck_assert_msg(cJSON_IsArray(items) && (size_t)cJSON_GetArraySize(items) == n,
                  "GET %s: expected %zu items, got %s", path, n, r.body);
    size_t k = 0;
    for (const cJSON *it = items->child; it; it = it->next, k++)
        ck_assert_msg(strcmp(jstr(&r, it, "id"), ids[k]) == 0 &&
                          (int64_t)jnum(&r, it, "rank") == (int64_t)k + 1,
                      "board %s rank %zu: expected '%s', got %s", board, k + 1, ids[k], r.body);
    http_result_free(&r);
}

/* ---------------------------------------------------------------- property test */

struct prop_board {
    const char *name, *settings;
    enum score_order order;
    enum score_tiebreak tiebreak;
};

static const struct prop_board prop_boards[] = {
    {"p-desc-first", "{\"order\":\"desc\",\"tiebreak\":\"first\"}", SCORE_ORDER_DESC,
     SCORE_TIEBREAK_FIRST},
    {"p-desc-last", "{\"order\":\"desc\",\"tiebreak\":\"last\"}", SCORE_ORDER_DESC,
     SCORE_TIEBREAK_LAST},
    {"p-desc-id", "{\"order\":\"desc\",\"tiebreak\":\"id\"}", SCORE_ORDER_DESC, SCORE_TIEBREAK_ID},
    {"p-asc-first", "{\"order\":\"asc\",\"tiebreak\":\"first\"}", SCORE_ORDER_ASC,
     SCORE_TIEBREAK_FIRST},
    {"p-asc-last", "{\"order\":\"asc\",\"tiebreak\":\"last\"}", SCORE_ORDER_ASC,
     SCORE_TIEBREAK_LAST},
    {"p-asc-id", "{\"order\":\"asc\",\"tiebreak\":\"id\"}", SCORE_ORDER_ASC, SCORE_TIEBREAK_ID},
};
#define PROP_NBOARDS ((int)(sizeof(prop_boards) / sizeof(prop_boards[0])))

/* Id pieces: ASCII below and above the letters, key punctuation, and 2-byte UTF-8 (bytes >= 0x80
 * must sort after ASCII: memcmp is unsigned). Ids have 1..6 pieces, so many are prefixes of
 * others ("a" < "a0" < "b"). */
static const char *const id_pieces[] = {
    "0", "1", "9", "A", "Z", "a", "b",        "z",        "-",
    "_", ".", "~", ":", "{", "}", "\xc3\xa9", "\xc3\x9f",
};
#define ID_NPIECES (sizeof(id_pieces) / sizeof(id_pieces[0]))

static uint64_t prop_seed(void)
{
    const char *s = getenv("RANKD_ORDERING_SEED");
    return s && *s ? strtoull(s, NULL, 0) : PROP_SEED;
}

/* The member pool: PROP_MEMBERS distinct ids drawn from the seed. */
static void prop_members(struct ref_board *b, uint64_t *rng)
{
    char id[ID_MAX];
    while (b->n < PROP_MEMBERS) {
        size_t len = 0, pieces = 1 + rnd_below(rng, 6);
        for (size_t k = 0; k < pieces; k++) {
            const char *p = id_pieces[rnd_below(rng, ID_NPIECES)];
            memcpy(id + len, p, strlen(p));
            len += strlen(p);
        }
        id[len] = '\0';
        size_t before = b->n;
        size_t i = ref_member(b, id);
        if (i < before)
            continue; /* duplicate: draw again */
    }
}

START_TEST(test_property_random_writes)
{
    const struct prop_board *pb = &prop_boards[_i];
    uint64_t seed = prop_seed();
    uint64_t rng = seed;
    double t0 = now_s();
    struct ref_board b;
    ref_init(&b, pb->name, pb->order, pb->tiebreak, 0);
    prop_members(&b, &rng);
    put_board(pb->name, pb->settings);

    size_t counts[3] = {0, 0, 0}, changes = 0;
    for (int at = 0; at < PROP_ENTRIES; at += PROP_BATCH) {
        int n = PROP_ENTRIES - at < PROP_BATCH ? PROP_ENTRIES - at : PROP_BATCH;
        struct buf body = {0};
        sb_printf(&body, "{\"entries\":[");
        for (int k = 0; k < n; k++) {
            size_t i =
                rnd_below(&rng, 5) == 0 ? rnd_below(&rng, PROP_HOT) : rnd_below(&rng, PROP_MEMBERS);
            uint32_t o = rnd_below(&rng, 20);
            enum board_op op = o < 9 ? BOARD_OP_SET : o < 15 ? BOARD_OP_BEST : BOARD_OP_INCR;
            int64_t v = op == BOARD_OP_INCR ? (int64_t)rnd_below(&rng, 5) - 2
                                            : (int64_t)rnd_below(&rng, PROP_VALUES) - 12;
            if (k)
                sb_printf(&body, ",");
            entry_json(&body, &b, i, op, v);
            changes += (size_t)ref_apply(&b, i, op, v);
            counts[op]++;
        }
        sb_printf(&body, "]}");
        struct http_result r;
        post_scores(pb->name, body.data, &r);
        const cJSON *rej = cJSON_GetObjectItemCaseSensitive(r.json, "rejected");
        ck_assert_msg(r.status == 200 && (int)jnum(&r, r.json, "applied") == n &&
                          (!rej || cJSON_GetArraySize(rej) == 0),
                      "%s: batch at entry %d (seed %" PRIu64 ") -> %ld %.500s", pb->name, at, seed,
                      r.status, r.body);
        http_result_free(&r);
        buf_free(&body);
    }
    double t1 = now_s();
    verify_board(&b, PROP_PAGE, 1);
    double t2 = now_s();
    size_t present = 0;
    for (size_t i = 0; i < b.n; i++)
        present += (size_t)b.m[i].present;
    fprintf(stderr,
            "ordering property %s: seed %" PRIu64 " (0x%" PRIx64 "), %d entries (set %zu, best "
            "%zu, incr %zu, %zu changed a score), %zu members; writes %.2f s, verify %.2f s\n",
            pb->name, seed, seed, PROP_ENTRIES, counts[0], counts[1], counts[2], changes, present,
            t1 - t0, t2 - t1);
    ref_free(&b);
}
END_TEST

/* ---------------------------------------------------------------- small cases */

/* Equal scores keep submission order (first), never reversed id order; id boards: byte order. */
START_TEST(test_equal_scores_not_reversed)
{
    static const char *const ids[] = {"b", "a", "c"};
    put_board("eq", "{}");
    put_board("eq-batch", "{}");
    for (size_t i = 0; i < 3; i++) {
        char json[100];
        snprintf(json, sizeof(json), "{\"id\":\"%s\",\"score\":10}", ids[i]);
        it_post_score("eq", json); /* the defaults: desc, first */
    }
    expect_order("eq", ids, 3);

    it_post_score("eq-batch",
                  "{\"entries\":[{\"id\":\"b\",\"score\":10},{\"id\":\"a\",\"score\":10},"
                  "{\"id\":\"c\",\"score\":10}]}");
    expect_order("eq-batch", ids, 3);

    put_board("eq-id", "{\"tiebreak\":\"id\"}");
    static const char *const more[] = {"b", "a", "c", "B", "aa", "\xc3\xa9"};
    for (size_t i = 0; i < 6; i++) {
        char json[100];
        snprintf(json, sizeof(json), "{\"id\":\"%s\",\"score\":10}", more[i]);
        it_post_score("eq-id", json);
    }
    static const char *const by_id[] = {"B", "a", "aa", "b", "c", "\xc3\xa9"};
    expect_order("eq-id", by_id, 6);
}
END_TEST

/* best with a worse (or equal) score changes nothing and replies with the stored score. */
START_TEST(test_best_worse_changes_nothing)
{
    struct ref_board b;
    ref_init(&b, "best", SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0);
    step(&b, "x", BOARD_OP_SET, 100);
    step(&b, "y", BOARD_OP_SET, 100);
    step(&b, "z", BOARD_OP_BEST, 50); /* absent: best creates */

    struct http_result r;
    post_scores("best", "{\"id\":\"x\",\"score\":50,\"op\":\"best\"}", &r);
    ck_assert_msg(r.status == 200 && jnum(&r, r.json, "score") == 100 &&
                      !jbool(&r, r.json, "updated") && jnum(&r, r.json, "rank") == 1,
                  "best with a worse score: expected score 100 rank 1 updated false, got %ld %s",
                  r.status, r.body);
    http_result_free(&r);
    ref_apply(&b, ref_member(&b, "x"), BOARD_OP_BEST, 50);

    step(&b, "x", BOARD_OP_BEST, 100); /* equal: x keeps its place ahead of y */
    step(&b, "y", BOARD_OP_SET, 100);  /* set to the same score: nothing moves */
    step(&b, "z", BOARD_OP_BEST, -3);
    verify_board(&b, 100, 1);
    step(&b, "y", BOARD_OP_BEST, 150); /* better: applied */
    verify_board(&b, 100, 1);
    ref_free(&b);

    ref_init(&b, "best-asc", SCORE_ORDER_ASC, SCORE_TIEBREAK_FIRST, 0);
    put_board("best-asc", "{\"order\":\"asc\"}");
    step(&b, "p", BOARD_OP_SET, 10);
    step(&b, "q", BOARD_OP_SET, 10);
    step(&b, "p", BOARD_OP_BEST, 20); /* worse on asc */
    step(&b, "p", BOARD_OP_BEST, 10); /* equal */
    verify_board(&b, 100, 1);
    step(&b, "q", BOARD_OP_BEST, 5); /* better on asc */
    verify_board(&b, 100, 1);
    ref_free(&b);
}
END_TEST

/* A page past the end is empty with the true total, not the last page again. */
START_TEST(test_page_past_end_is_empty)
{
    struct ref_board b;
    ref_init(&b, "pages", SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0);
    static const char *const ids[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        step(&b, ids[i], BOARD_OP_SET, 10 - i);
    verify_board(&b, 2, 0); /* pages 1..3, and page 4 must be empty */
    verify_board(&b, 5, 0);
    verify_board(&b, 1, 0);
    static const char *const far[] = {"/boards/pages/rank?page=4&size=2",
                                      "/boards/pages/rank?page=2",
                                      "/boards/pages/rank?page=2147483647&size=100"};
    for (size_t i = 0; i < 3; i++) {
        struct http_result r;
        ck_assert_int_eq(do_get(far[i], &r), 200);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
        ck_assert_msg(cJSON_IsArray(items) && cJSON_GetArraySize(items) == 0 &&
                          jnum(&r, r.json, "total") == 5,
                      "GET %s: expected an empty page with total 5, got %s", far[i], r.body);
        http_result_free(&r);
    }
    ref_free(&b);
}
END_TEST

/* -5 ranks below 0 on a desc board (above on asc), and equal -5s keep submission order. */
START_TEST(test_negative_scores)
{
    struct ref_board b;
    ref_init(&b, "neg", SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0);
    step(&b, "zero", BOARD_OP_SET, 0);
    step(&b, "m5a", BOARD_OP_SET, -5);
    step(&b, "m5b", BOARD_OP_SET, -5);
    step(&b, "p5", BOARD_OP_SET, 5);
    step(&b, "m5c", BOARD_OP_SET, -5);
    step(&b, "m6", BOARD_OP_SET, -6);
    static const char *const want[] = {"p5", "zero", "m5a", "m5b", "m5c", "m6"};
    expect_order("neg", want, 6);
    verify_board(&b, 100, 1);
    ref_free(&b);

    ref_init(&b, "neg-asc", SCORE_ORDER_ASC, SCORE_TIEBREAK_FIRST, 0);
    put_board("neg-asc", "{\"order\":\"asc\"}");
    step(&b, "zero", BOARD_OP_SET, 0);
    step(&b, "m5a", BOARD_OP_SET, -5);
    step(&b, "m5b", BOARD_OP_SET, -5);
    step(&b, "m5c", BOARD_OP_INCR, -5);
    static const char *const want_asc[] = {"m5a", "m5b", "m5c", "zero"};
    expect_order("neg-asc", want_asc, 4);
    verify_board(&b, 100, 1);
    ref_free(&b);
}
END_TEST

/* 0.1 then 0.2 (incr) on a 1-decimal board ties exactly with 0.3 set earlier and ranks after it. */
START_TEST(test_decimals_exact_ties)
{
    put_board("dec", "{\"score_decimals\":1}");
    struct ref_board b;
    ref_init(&b, "dec", SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 1);
    step(&b, "B", BOARD_OP_SET, 3);
    step(&b, "A", BOARD_OP_INCR, 1);
    step(&b, "A", BOARD_OP_INCR, 2);
    static const char *const want[] = {"B", "A"};
    expect_order("dec", want, 2);
    verify_board(&b, 100, 1);
    static const char *const paths[] = {"/boards/dec/members/A", "/boards/dec/members/B",
                                        "/boards/dec/rank?page=1"};
    for (size_t i = 0; i < 3; i++) {
        struct http_result r;
        ck_assert_int_eq(do_get(paths[i], &r), 200);
        ck_assert_msg(strstr(r.body, "\"score\":0.3") && !strstr(r.body, "0.30000000000000004"),
                      "GET %s: the score must read back as 0.3, got %s", paths[i], r.body);
        http_result_free(&r);
    }
    ref_free(&b);
}
END_TEST

/* tiebreak last: the newest of equal scores ranks first (also after leaving and re-entering). */
START_TEST(test_tiebreak_last)
{
    put_board("last", "{\"tiebreak\":\"last\"}");
    struct ref_board b;
    ref_init(&b, "last", SCORE_ORDER_DESC, SCORE_TIEBREAK_LAST, 0);
    step(&b, "a", BOARD_OP_SET, 10);
    step(&b, "b", BOARD_OP_SET, 10);
    step(&b, "c", BOARD_OP_SET, 10);
    static const char *const want[] = {"c", "b", "a"};
    expect_order("last", want, 3);
    step(&b, "d", BOARD_OP_SET, 11);
    step(&b, "a", BOARD_OP_SET, 12);
    step(&b, "a", BOARD_OP_SET, 10);
    step(&b, "b", BOARD_OP_SET, 10); /* unchanged: keeps its place */
    static const char *const want2[] = {"d", "a", "c", "b"};
    expect_order("last", want2, 4);
    it_post_score("last",
                  "{\"entries\":[{\"id\":\"e\",\"score\":10},{\"id\":\"f\",\"score\":10}]}");
    ref_apply(&b, ref_member(&b, "e"), BOARD_OP_SET, 10);
    ref_apply(&b, ref_member(&b, "f"), BOARD_OP_SET, 10);
    static const char *const want3[] = {"d", "f", "e", "a", "c", "b"};
    expect_order("last", want3, 6);
    verify_board(&b, 100, 1);
    ref_free(&b);
}
END_TEST

/* asc boards: lower scores first; ties by the board's tiebreak. */
START_TEST(test_asc_boards)
{
    static const struct {
        const char *name, *settings;
        enum score_tiebreak tb;
        const char *want[6];
    } cases[] = {
        {"asc-first", "{\"order\":\"asc\"}", SCORE_TIEBREAK_FIRST, {"v", "y", "w", "z", "x", "u"}},
        {"asc-last",
         "{\"order\":\"asc\",\"tiebreak\":\"last\"}",
         SCORE_TIEBREAK_LAST,
         {"v", "y", "w", "x", "z", "u"}},
        {"asc-id",
         "{\"order\":\"asc\",\"tiebreak\":\"id\"}",
         SCORE_TIEBREAK_ID,
         {"v", "y", "w", "x", "z", "u"}},
    };
    for (size_t c = 0; c < 3; c++) {
        put_board(cases[c].name, cases[c].settings);
        struct ref_board b;
        ref_init(&b, cases[c].name, SCORE_ORDER_ASC, cases[c].tb, 0);
        step(&b, "z", BOARD_OP_SET, 5);
        step(&b, "y", BOARD_OP_SET, 1);
        step(&b, "x", BOARD_OP_SET, 5);
        step(&b, "w", BOARD_OP_SET, 3);
        step(&b, "v", BOARD_OP_SET, -2);
        step(&b, "u", BOARD_OP_SET, 7);
        step(&b, "x", BOARD_OP_SET, 4);
        step(&b, "x", BOARD_OP_INCR, 1); /* back to 5: now the newest 5 */
        expect_order(cases[c].name, cases[c].want, 6);
        verify_board(&b, 100, 1);
        ref_free(&b);
    }
}
END_TEST

/* POST one entry expecting 422 `code`, with nothing written (DBSIZE and the member unchanged). */
static void expect_rejected(const char *board, const char *json, const char *code,
                            const char *range_text)
{
    long long before = it_dbsize();
    struct http_result r;
    post_scores(board, json, &r);
    expect_error(&r, 422, code, json);
    if (range_text) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r.json, "error");
        const char *msg = jstr(&r, e, "message");
        ck_assert_msg(strstr(msg, range_text), "POST %s: the message must name the range (%s): %s",
                      json, range_text, msg);
    }
    http_result_free(&r);
    ck_assert_msg(it_dbsize() == before, "POST %s was refused but wrote keys", json);
}

/* GET member: 200 with exactly `score`, and the raw body carries `text`. */
static void expect_member_score(const char *board, const char *id, double score, const char *text)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    struct http_result r;
    ck_assert_msg(do_get(path, &r) == 200, "GET %s -> %ld %s", path, r.status, r.body);
    ck_assert_msg(jnum(&r, r.json, "score") == score && strstr(r.body, text),
                  "GET %s: expected score %s exactly, got %s", path, text, r.body);
    http_result_free(&r);
}

static void expect_member_absent(const char *board, const char *id)
{
    char path[200];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    ck_assert_int_eq(it_status("GET", path, NULL), 404);
}

/* first|last boards: +-4294967295 accepted and read back exactly; one past 422, nothing written. */
START_TEST(test_boundaries_tied)
{
    static const char *const tied[][2] = {{"bound-first", "{\"tiebreak\":\"first\"}"},
                                          {"bound-last", "{\"tiebreak\":\"last\"}"}};
    for (size_t i = 0; i < 2; i++) {
        const char *bd = tied[i][0];
        put_board(bd, tied[i][1]);
        it_post_score(bd, "{\"id\":\"max\",\"score\":4294967295}");
        it_post_score(bd, "{\"id\":\"min\",\"score\":-4294967295}");
        it_post_score(bd, "{\"id\":\"mid\",\"score\":0}");
        expect_member_score(bd, "max", 4294967295.0, "\"score\":4294967295");
        expect_member_score(bd, "min", -4294967295.0, "\"score\":-4294967295");
        static const char *const want[] = {"max", "mid", "min"};
        expect_order(bd, want, 3);
        expect_rejected(bd, "{\"id\":\"over\",\"score\":4294967296}", "score_out_of_range",
                        "4294967295");
        expect_rejected(bd, "{\"id\":\"over\",\"score\":-4294967296}", "score_out_of_range",
                        "4294967295");
        expect_rejected(bd, "{\"id\":\"over\",\"score\":4294967296,\"op\":\"best\"}",
                        "score_out_of_range", "4294967295");
        expect_rejected(bd,
                        "{\"entries\":[{\"id\":\"ok\",\"score\":1},"
                        "{\"id\":\"over\",\"score\":4294967296}]}",
                        "score_out_of_range", "4294967295");
        expect_member_absent(bd, "over");
        expect_member_absent(bd, "ok");
        expect_order(bd, want, 3);
    }
    struct http_result r;
    ck_assert_int_eq(do_get("/boards/bound-first", &r), 200);
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(r.json, "score_range");
    ck_assert_msg(jnum(&r, range, "min") == -4294967295.0 && jnum(&r, range, "max") == 4294967295.0,
                  "score_range of a first board: %s", r.body);
    http_result_free(&r);
}
END_TEST

/* tiebreak id boards: the whole exact range of a double, |score| <= 2^53 - 1. */
START_TEST(test_boundaries_id)
{
    put_board("bound-id", "{\"tiebreak\":\"id\"}");
    it_post_score("bound-id", "{\"id\":\"max\",\"score\":9007199254740991}");
    it_post_score("bound-id", "{\"id\":\"min\",\"score\":-9007199254740991}");
    it_post_score("bound-id", "{\"id\":\"big\",\"score\":4294967296}");
    expect_member_score("bound-id", "max", 9007199254740991.0, "\"score\":9007199254740991");
    expect_member_score("bound-id", "min", -9007199254740991.0, "\"score\":-9007199254740991");
    expect_member_score("bound-id", "big", 4294967296.0, "\"score\":4294967296");
    static const char *const want_id[] = {"max", "big", "min"};
    expect_order("bound-id", want_id, 3);
    expect_rejected("bound-id", "{\"id\":\"over\",\"score\":9007199254740992}",
                    "score_out_of_range", "9007199254740991");
    expect_rejected("bound-id", "{\"id\":\"over\",\"score\":-9007199254740992}",
                    "score_out_of_range", "9007199254740991");
    expect_member_absent("bound-id", "over");
    struct http_result r;
    ck_assert_int_eq(do_get("/boards/bound-id", &r), 200);
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(r.json, "score_range");
    ck_assert_msg(jnum(&r, range, "max") == 9007199254740991.0, "score_range of an id board: %s",
                  r.body);
    http_result_free(&r);
}
END_TEST

/* A 2-decimal board: more digits are invalid_score; 42949672.95 is the largest score. */
START_TEST(test_boundaries_decimals)
{
    put_board("bound-dec", "{\"score_decimals\":2}");
    expect_rejected("bound-dec", "{\"id\":\"frac\",\"score\":0.155}", "invalid_score", NULL);
    expect_member_absent("bound-dec", "frac");
    it_post_score("bound-dec", "{\"id\":\"max\",\"score\":42949672.95}");
    it_post_score("bound-dec", "{\"id\":\"min\",\"score\":-42949672.95}");
    it_post_score("bound-dec", "{\"id\":\"cent\",\"score\":0.15}");
    expect_member_score("bound-dec", "max", 42949672.95, "\"score\":42949672.95");
    expect_member_score("bound-dec", "min", -42949672.95, "\"score\":-42949672.95");
    expect_member_score("bound-dec", "cent", 0.15, "\"score\":0.15");
    expect_rejected("bound-dec", "{\"id\":\"over\",\"score\":42949672.96}", "score_out_of_range",
                    "42949672.95");
    static const char *const want_dec[] = {"max", "cent", "min"};
    expect_order("bound-dec", want_dec, 3);
}
END_TEST

/* incr past the range: 422 score_out_of_range, the stored score unchanged. */
START_TEST(test_incr_overflow)
{
    static const char *const boards[][2] = {{"ovf-desc", "{\"order\":\"desc\"}"},
                                            {"ovf-asc", "{\"order\":\"asc\"}"}};
    for (size_t i = 0; i < 2; i++) {
        const char *bd = boards[i][0];
        put_board(bd, boards[i][1]);
        it_post_score(bd, "{\"id\":\"top\",\"score\":4294967295}");
        it_post_score(bd, "{\"id\":\"bottom\",\"score\":-4294967295}");
        it_post_score(bd, "{\"id\":\"other\",\"score\":4294967295}");
        static const char *const want_desc[] = {"top", "other", "bottom"};
        static const char *const want_asc[] = {"bottom", "top", "other"};
        const char *const *want = i == 0 ? want_desc : want_asc;
        expect_order(bd, want, 3);

        struct http_result r;
        post_scores(bd, "{\"id\":\"top\",\"score\":1,\"op\":\"incr\"}", &r);
        expect_error(&r, 422, "score_out_of_range", "incr 1 on 4294967295");
        http_result_free(&r);
        post_scores(bd, "{\"id\":\"bottom\",\"score\":-1,\"op\":\"incr\"}", &r);
        expect_error(&r, 422, "score_out_of_range", "incr -1 on -4294967295");
        http_result_free(&r);
        post_scores(bd, "{\"id\":\"bottom\",\"score\":-4294967295,\"op\":\"incr\"}", &r);
        expect_error(&r, 422, "score_out_of_range", "incr -4294967295 on -4294967295");
        http_result_free(&r);
        expect_member_score(bd, "top", 4294967295.0, "\"score\":4294967295");
        expect_member_score(bd, "bottom", -4294967295.0, "\"score\":-4294967295");
        expect_order(bd, want, 3); /* top keeps its place ahead of other */

        /* in a batch: an overflowing entry refuses the whole batch, nothing is written (even
         * the entries before it, even when the overflow only comes from an earlier entry) */
        post_scores(bd,
                    "{\"entries\":[{\"id\":\"new\",\"score\":3},"
                    "{\"id\":\"top\",\"score\":1,\"op\":\"incr\"}]}",
                    &r);
        expect_error(&r, 422, "score_out_of_range", "batch with an overflowing incr");
        ck_assert_msg(strstr(r.body, "entries[1]") != NULL, "%s", r.body);
        http_result_free(&r);
        post_scores(bd,
                    "{\"entries\":[{\"id\":\"new2\",\"score\":4294967290},"
                    "{\"id\":\"new2\",\"score\":9,\"op\":\"incr\"}]}",
                    &r);
        expect_error(&r, 422, "score_out_of_range", "batch whose own set makes an incr overflow");
        http_result_free(&r);
        expect_member_score(bd, "top", 4294967295.0, "\"score\":4294967295");
        expect_absent(bd, "new");
        expect_absent(bd, "new2");
    }
}
END_TEST

/* The largest tie (stored - key * 2^21) on a first|last board, read straight from Redis; every tie
 * must be in 0 .. cap-1. */
static int64_t board_max_tie(const char *board, int64_t cap)
{
    redisReply *r = redis_admin_cmd(g_admin, "ZRANGE rankd:{%s}:z 0 -1 WITHSCORES", board);
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    int64_t max = -1, base = INT64_C(1) << SCORE_TIE_BITS;
    for (size_t i = 1; i < r->elements; i += 2) {
        int64_t stored = (int64_t)strtod(r->element[i]->str, NULL);
        int64_t key = stored / base - (stored % base < 0 ? 1 : 0);
        int64_t tie = stored - key * base;
        ck_assert_msg(tie >= 0 && tie < cap,
                      "board %s member '%s': stored %s has tie %" PRId64 ", outside 0..%" PRId64,
                      board, r->element[i - 1]->str, r->element[i]->str, tie, cap - 1);
        max = tie > max ? tie : max;
    }
    freeReplyObject(r);
    return max;
}

/* Member `id` leaves score 5 for 6 and comes back, with the op pair chosen by `round`. */
static void leave_and_return(struct ref_board *b, const char *id, int round)
{
    switch (round % 3) {
    case 0:
        step(b, id, BOARD_OP_SET, 6);
        step(b, id, BOARD_OP_SET, 5);
        break;
    case 1:
        step(b, id, BOARD_OP_INCR, 1);
        step(b, id, BOARD_OP_INCR, -1);
        break;
    default:
        step(b, id, BOARD_OP_BEST, 6); /* better on a desc board */
        step(b, id, BOARD_OP_SET, 5);
        break;
    }
}

/*
 * Tie-group compaction with a tie cap of 8 (board_set_tie_cap; rankd runs in this process).
 * Phase 1: three members keep score 5 while a fourth alternates between 5 and 6 forty times.
 * (It always re-enters at the slot it just left at the group's end, so this alone never fills
 * the group.) Phase 2: the four members of score 5 take turns leaving and re-entering, forty
 * times; every re-entry takes a new slot at the group's end, so the group (4 members, 8 slots)
 * must be compacted about every fourth write. Phase 3: the same churn inside single batches of
 * 8, 20 and 80 entries, so compaction happens mid-batch, several times per batch. After every
 * step the order is exactly the reference order, every tie stays below the cap, and no write
 * fails.
 */
START_TEST(test_tie_group_compaction)
{
    static const char *const names[] = {"cap-first", "cap-last"};
    static const char *const settings[] = {"{\"tiebreak\":\"first\"}", "{\"tiebreak\":\"last\"}"};
    static const char *const group[] = {"a", "b", "c", "d"};
    const int64_t cap = 8;
    enum score_tiebreak tb = _i == 0 ? SCORE_TIEBREAK_FIRST : SCORE_TIEBREAK_LAST;
    board_set_tie_cap(cap);
    put_board(names[_i], settings[_i]);
    struct ref_board b;
    ref_init(&b, names[_i], SCORE_ORDER_DESC, tb, 0);
    step(&b, "a", BOARD_OP_SET, 5);
    step(&b, "b", BOARD_OP_SET, 5);
    step(&b, "c", BOARD_OP_SET, 5);
    step(&b, "e", BOARD_OP_SET, 6);
    step(&b, "f", BOARD_OP_SET, 4);
    step(&b, "d", BOARD_OP_SET, 5);

    for (int i = 0; i < 40; i++) { /* phase 1 */
        leave_and_return(&b, "d", i);
        verify_board(&b, 100, 0);
        board_max_tie(b.name, cap);
    }
    for (int i = 0; i < 40; i++) { /* phase 2 */
        leave_and_return(&b, group[i % 4], i);
        verify_board(&b, 100, 0);
        board_max_tie(b.name, cap);
    }
    verify_board(&b, 100, 1);

    static const int pairs[] = {4, 10, 40}; /* phase 3 */
    int turn = 0;
    for (size_t k = 0; k < 3; k++) {
        struct buf body = {0};
        sb_printf(&body, "{\"entries\":[");
        for (int i = 0; i < pairs[k]; i++, turn++) {
            size_t m = ref_member(&b, group[turn % 4]);
            enum board_op op = turn % 2 ? BOARD_OP_INCR : BOARD_OP_SET;
            int64_t up = turn % 2 ? 1 : 6, down = turn % 2 ? -1 : 5;
            sb_printf(&body, "%s", i ? "," : "");
            entry_json(&body, &b, m, op, up);
            ref_apply(&b, m, op, up);
            sb_printf(&body, ",");
            entry_json(&body, &b, m, op, down);
            ref_apply(&b, m, op, down);
        }
        sb_printf(&body, "]}");
        struct http_result r;
        post_scores(b.name, body.data, &r);
        ck_assert_msg(r.status == 200 && (int)jnum(&r, r.json, "applied") == 2 * pairs[k],
                      "%s: batch of %d entries re-entering one tie group (tie cap 8) -> %ld %s",
                      b.name, 2 * pairs[k], r.status, r.body);
        http_result_free(&r);
        buf_free(&body);
        /* Scores first: a batch applied more than once (e.g. replayed after a partial write)
         * shows up here as an incr counted twice. */
        for (size_t i = 0; i < b.n; i++) {
            char path[200];
            snprintf(path, sizeof(path), "/boards/%s/members/%s", b.name, b.m[i].id);
            ck_assert_int_eq(do_get(path, &r), 200);
            ck_assert_msg(jnum(&r, r.json, "score") == (double)b.m[i].score,
                          "%s: after a batch of %d entries member '%s' has score %s, expected "
                          "%" PRId64 " (entries applied more than once?)",
                          b.name, 2 * pairs[k], b.m[i].id, r.body, b.m[i].score);
            http_result_free(&r);
        }
        verify_board(&b, 100, 1);
        board_max_tie(b.name, cap);
    }
    board_set_tie_cap(0);
    ref_free(&b);
}
END_TEST

/*
 * A tie group that is truly full (tie cap 4: four members share score 5) ends a write with 422
 * score_group_full, a JSON batch and an NDJSON stream alike, as openapi.yaml says. The stream
 * took its status from a map of its own and answered 503 redis_unavailable ("Redis failed"),
 * telling the client to retry what can never succeed.
 */
START_TEST(test_full_group_is_score_group_full)
{
    board_set_tie_cap(4);
    put_board("full", "{\"tiebreak\":\"first\"}");
    const char *fill = "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"b\",\"score\":5},"
                       "{\"id\":\"c\",\"score\":5},{\"id\":\"d\",\"score\":5}]}";
    struct http_result r;
    post_scores("full", fill, &r);
    ck_assert_msg(r.status == 200, "filling the group -> %ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/full/scores",
                                "{\"entries\":[{\"id\":\"e\",\"score\":5}]}", &r),
                     0);
    ck_assert_msg(r.status == 422 && strcmp(http_error_code(&r), "score_group_full") == 0,
                  "a batch into the full group -> %ld %s", r.status, r.body);
    http_result_free(&r);
    const char *lines = "{\"id\":\"f\",\"score\":5}\n{\"id\":\"g\",\"score\":5}\n";
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/full/scores", lines, strlen(lines),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_msg(r.status == 422 && strcmp(http_error_code(&r), "score_group_full") == 0 &&
                      strstr(r.body, "lines were applied"),
                  "a stream into the full group -> %ld %s", r.status, r.body);
    printf("ordering: a stream into a full tie group: %ld %s\n", r.status, r.body);
    http_result_free(&r);
    board_set_tie_cap(0);
}
END_TEST

/* Teardown of the compaction cases: the default tie cap again, even after a failed check. */
static void tie_cap_reset(void)
{
    board_set_tie_cap(0);
}

/* A full batch of 1000 equal scores keeps the batch order (first), reversed for last. */
START_TEST(test_full_batch_keeps_order)
{
    static const char *const names[] = {"batch-first", "batch-last", "batch-asc"};
    static const char *const settings[] = {"{\"tiebreak\":\"first\"}", "{\"tiebreak\":\"last\"}",
                                           "{\"order\":\"asc\"}"};
    for (int c = 0; c < 3; c++) {
        put_board(names[c], settings[c]);
        struct ref_board b;
        ref_init(&b, names[c], c == 2 ? SCORE_ORDER_ASC : SCORE_ORDER_DESC,
                 c == 1 ? SCORE_TIEBREAK_LAST : SCORE_TIEBREAK_FIRST, 0);
        struct buf body = {0};
        sb_printf(&body, "{\"entries\":[");
        for (int i = 0; i < BOARD_BATCH_MAX; i++) {
            char id[16];
            /* ids in a permuted order, so batch order is neither id order nor its reverse */
            snprintf(id, sizeof(id), "e%04d", (i * 7919) % BOARD_BATCH_MAX);
            size_t m = ref_member(&b, id);
            ref_apply(&b, m, BOARD_OP_SET, 42);
            sb_printf(&body, "%s{\"id\":\"%s\",\"score\":42}", i ? "," : "", id);
        }
        sb_printf(&body, "]}");
        struct http_result r;
        post_scores(names[c], body.data, &r);
        ck_assert_msg(r.status == 200 && (int)jnum(&r, r.json, "applied") == BOARD_BATCH_MAX,
                      "batch of %d -> %ld %.300s", BOARD_BATCH_MAX, r.status, r.body);
        http_result_free(&r);
        buf_free(&body);
        verify_board(&b, 100, c == 0);
        ref_free(&b);
    }
}
END_TEST

Suite *ordering_suite(void)
{
    Suite *s = suite_create("ordering");

    TCase *prop = tcase_create("property");
    tcase_add_checked_fixture(prop, it_setup, it_teardown);
    tcase_set_timeout(prop, 300);
    tcase_add_loop_test(prop, test_property_random_writes, 0, PROP_NBOARDS);
    suite_add_tcase(s, prop);

    TCase *cases = tcase_create("reports");
    tcase_add_checked_fixture(cases, it_setup, it_teardown);
    tcase_set_timeout(cases, 60);
    tcase_add_test(cases, test_equal_scores_not_reversed);
    tcase_add_test(cases, test_best_worse_changes_nothing);
    tcase_add_test(cases, test_page_past_end_is_empty);
    tcase_add_test(cases, test_negative_scores);
    tcase_add_test(cases, test_decimals_exact_ties);
    tcase_add_test(cases, test_tiebreak_last);
    tcase_add_test(cases, test_asc_boards);
    tcase_add_test(cases, test_boundaries_tied);
    tcase_add_test(cases, test_boundaries_id);
    tcase_add_test(cases, test_boundaries_decimals);
    tcase_add_test(cases, test_incr_overflow);
    tcase_add_test(cases, test_full_batch_keeps_order);
    suite_add_tcase(s, cases);

    TCase *compact = tcase_create("compaction");
    tcase_add_checked_fixture(compact, it_setup, it_teardown);
    tcase_add_checked_fixture(compact, NULL, tie_cap_reset);
    tcase_set_timeout(compact, 60);
    tcase_add_loop_test(compact, test_tie_group_compaction, 0, 2);
    tcase_add_test(compact, test_full_group_is_score_group_full);
    suite_add_tcase(s, compact);
    return s;
}
