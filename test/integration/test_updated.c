/*
 * test_updated.c -- each entry's updated_at on a board with "track_updated_at": true, over real
 * HTTP against a real Redis, on a clock the test sets (fixture_set_clock):
 *   1. the setting: off by default (no updated_at, no hash), a bool, a shaping setting (refused
 *      while the board has members, like the layout);
 *   2. updated_at moves only when the score does, for each op: set (same score: no), best (a
 *      worse score: no), incr (0: no), batches, NDJSON imports, a member given twice in a batch;
 *   3. what removes members removes their times: member delete, trim, max_members, reset, board
 *      delete, a period swept (no key of the board is left);
 *   4. every read that returns an entry carries the member read's updated_at: pages (live, filled
 *      into the page cache, and from it), score ranges, cursors, around (a member, a score), top,
 *      `with`, many members, a percentile's member, one member on several boards, an event
 *      stream's page, export; on a `wide` board with sub-scores
 *      too; a `best` that keeps the old score leaves it as it was on pages;
 *   5. a board without the setting: no updated_at in any of those replies, and no read of a
 *      times hash (MONITOR).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"

/* The member's updated_at: its value (ms), -1 for null, -2 when the field is absent. */
static long long updated_of(const char *board, const char *id)
{
    char path[256];
    snprintf(path, sizeof(path), "/boards/%s/members/%s", board, id);
    cJSON *d = it_json("GET", path, NULL, 200);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(d, "updated_at");
    long long v = !u ? -2 : cJSON_IsNull(u) ? -1 : (long long)u->valuedouble;
    cJSON_Delete(d);
    return v;
}

/* Write `body` to board b at time `iso`. */
static void write_at(const char *iso, const char *b, const char *body)
{
    fixture_set_clock(iso);
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", b);
    cJSON_Delete(it_json("POST", path, body, 200));
}

/* The keys of board b in the test Redis (KEYS on a test database of a few keys). */
static long long keys_of(const char *b, const char *kind)
{
    redisReply *r = redis_admin_cmd(g_admin, "KEYS rankd:{%s}:%s*", b, kind);
    long long n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

START_TEST(test_updated_setting)
{
    cJSON *d = it_json("PUT", "/boards/u0", "{}", 201);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "track_updated_at")));
    cJSON_Delete(d);
    it_post_score("u0", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u0", "a"), -2); /* not tracked: no field */
    ck_assert_int_eq(keys_of("u0", "upd"), 0);
    ck_assert_int_eq(it_status("PUT", "/boards/u0", "{\"track_updated_at\":1}"), 400);
    /* shaping: refused while the board has members */
    ck_assert_int_eq(it_status("PUT", "/boards/u0", "{\"track_updated_at\":true}"), 409);
    ck_assert_int_eq(it_status("DELETE", "/boards/u0/members/a", NULL), 204);
    d = it_json("PUT", "/boards/u0", "{\"track_updated_at\":true}", 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "track_updated_at")));
    cJSON_Delete(d);
    write_at("2036-11-30T12:00:00Z", "u0", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u0", "a"), fixture_ts("2036-11-30T12:00:00Z"));
    ck_assert_int_eq(keys_of("u0", "upd"), 1);
    /* a setting a write's view of the board did not know: the write learns it */
    ck_assert_int_eq(it_status("PUT", "/boards/u1", "{\"track_updated_at\":true}"), 201);
    write_at("2036-11-30T12:00:01Z", "u1", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(updated_of("u1", "a"), fixture_ts("2036-11-30T12:00:01Z"));
    fixture_set_clock(NULL);
}
END_TEST

START_TEST(test_updated_moves_with_the_score)
{
    ck_assert_int_eq(it_status("PUT", "/boards/ut", "{\"track_updated_at\":true}"), 201);
    const char *t0 = "2036-11-30T12:00:00Z", *t1 = "2036-11-30T12:00:01.250Z",
               *t2 = "2036-11-30T12:00:02Z", *t3 = "2036-11-30T12:00:03Z";
    write_at(t0, "ut", "{\"id\":\"s\",\"score\":10}");
    write_at(t0, "ut", "{\"id\":\"b\",\"score\":10,\"op\":\"best\"}");
    write_at(t0, "ut", "{\"id\":\"i\",\"score\":10,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t0));
    ck_assert_int_eq(updated_of("ut", "b"), fixture_ts(t0));
    ck_assert_int_eq(updated_of("ut", "i"), fixture_ts(t0));
    /* no change of score: set to the same score, best with a worse one, incr by 0 */
    write_at(t1, "ut", "{\"id\":\"s\",\"score\":10}");
    write_at(t1, "ut", "{\"id\":\"b\",\"score\":3,\"op\":\"best\"}");
    write_at(t1, "ut", "{\"id\":\"i\",\"score\":0,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t0));
    ck_assert_int_eq(updated_of("ut", "b"), fixture_ts(t0));
    ck_assert_int_eq(updated_of("ut", "i"), fixture_ts(t0));
    /* a record alone changes no score either */
    write_at(t1, "ut", "{\"id\":\"s\",\"score\":10,\"record\":{\"x\":1}}");
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t0));
    /* a change: each op */
    write_at(t2, "ut", "{\"id\":\"s\",\"score\":11}");
    write_at(t2, "ut", "{\"id\":\"b\",\"score\":12,\"op\":\"best\"}");
    write_at(t2, "ut", "{\"id\":\"i\",\"score\":-1,\"op\":\"incr\"}");
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t2));
    ck_assert_int_eq(updated_of("ut", "b"), fixture_ts(t2));
    ck_assert_int_eq(updated_of("ut", "i"), fixture_ts(t2));
    /* a batch: only the entries that change; a member twice, back to where it was (it moved) */
    write_at(t3, "ut",
             "{\"entries\":[{\"id\":\"s\",\"score\":11},{\"id\":\"b\",\"score\":13,\"op\":"
             "\"best\"},{\"id\":\"i\",\"score\":1,\"op\":\"incr\"},{\"id\":\"i\",\"score\":-1,"
             "\"op\":\"incr\"},{\"id\":\"n\",\"score\":5}]}");
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t2));
    ck_assert_int_eq(updated_of("ut", "b"), fixture_ts(t3));
    ck_assert_int_eq(updated_of("ut", "i"), fixture_ts(t3));
    ck_assert_int_eq(updated_of("ut", "n"), fixture_ts(t3));
    /* an NDJSON import */
    fixture_set_clock("2036-11-30T12:00:04Z");
    const char *nd = "{\"id\":\"s\",\"score\":11}\n{\"id\":\"m\",\"score\":7}\n";
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "POST", "/boards/ut/scores", nd, strlen(nd),
                              "application/x-ndjson", TEST_TOKEN, &r),
                     0);
    ck_assert_msg(r.status == 200, "import: %ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(updated_of("ut", "s"), fixture_ts(t2));
    ck_assert_int_eq(updated_of("ut", "m"), fixture_ts("2036-11-30T12:00:04Z"));
    /* a `wide` board: the same (its set members hold a tie prefix before the id) */
    ck_assert_int_eq(
        it_status("PUT", "/boards/uw", "{\"track_updated_at\":true,\"score_layout\":\"wide\"}"),
        201);
    write_at(t0, "uw", "{\"id\":\"a\",\"score\":5}");
    write_at(t1, "uw", "{\"id\":\"a\",\"score\":4,\"op\":\"best\"}");
    ck_assert_int_eq(updated_of("uw", "a"), fixture_ts(t0));
    write_at(t2, "uw", "{\"id\":\"a\",\"score\":6,\"op\":\"best\"}");
    ck_assert_int_eq(updated_of("uw", "a"), fixture_ts(t2));
    redisReply *f = redis_admin_cmd(g_admin, "HKEYS rankd:{uw}:upd");
    ck_assert_int_eq(f->elements, 1);
    ck_assert_str_eq(f->element[0]->str, "a"); /* the id, not the set member */
    freeReplyObject(f);
    fixture_set_clock(NULL);
}
END_TEST

/* The fields of the board's updated_at hash (the current period's, or the board's). */
static long long hlen(const char *key)
{
    redisReply *r = redis_admin_cmd(g_admin, "HLEN %s", key);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

START_TEST(test_updated_removed_with_members)
{
    ck_assert_int_eq(
        it_status("PUT", "/boards/ur", "{\"track_updated_at\":true,\"max_members\":3}"), 201);
    write_at("2036-11-30T12:00:00Z", "ur",
             "{\"entries\":[{\"id\":\"a\",\"score\":1},{\"id\":\"b\",\"score\":2},{\"id\":\"c\","
             "\"score\":3}]}");
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 3);
    /* max_members: d pushes a (the worst) off the board, and out of the hash */
    write_at("2036-11-30T12:00:01Z", "ur", "{\"id\":\"d\",\"score\":4}");
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 3);
    ck_assert_int_eq(it_status("GET", "/boards/ur/members/a", NULL), 404);
    redisReply *x = redis_admin_cmd(g_admin, "HEXISTS rankd:{ur}:upd a");
    ck_assert_int_eq(x->integer, 0);
    freeReplyObject(x);
    /* member delete */
    ck_assert_int_eq(it_status("DELETE", "/boards/ur/members/b", NULL), 204);
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 2);
    /* trim to the top 1 */
    ck_assert_int_eq(it_status("DELETE", "/boards/ur/members?keep=1", NULL), 200);
    ck_assert_int_eq(hlen("rankd:{ur}:upd"), 1);
    /* reset */
    ck_assert_int_eq(it_status("POST", "/boards/ur/reset", NULL), 204);
    ck_assert_int_eq(keys_of("ur", "upd"), 0);
    /* board delete: no key of the board is left */
    write_at("2036-11-30T12:00:02Z", "ur", "{\"id\":\"e\",\"score\":1}");
    ck_assert_int_eq(keys_of("ur", "upd"), 1);
    ck_assert_int_eq(it_status("DELETE", "/boards/ur", NULL), 204);
    ck_assert_int_eq(keys_of("ur", ""), 0);
    /* a daily board: the period's hash is listed with its set, and swept with it */
    ck_assert_int_eq(it_status("PUT", "/boards/ud",
                               "{\"track_updated_at\":true,\"period\":\"daily\",\"retain\":0}"),
                     201);
    write_at("2036-11-30T12:00:00Z", "ud", "{\"id\":\"a\",\"score\":1}");
    ck_assert_int_eq(hlen("rankd:{ud}:upd:2036-11-30"), 1);
    redisReply *idx =
        redis_admin_cmd(g_admin, "ZSCORE rankd:{ud}:periods rankd:{ud}:upd:2036-11-30");
    ck_assert_int_eq(idx->type, REDIS_REPLY_STRING);
    freeReplyObject(idx);
    write_at("2036-12-01T00:00:01Z", "ud", "{\"id\":\"a\",\"score\":2}");
    ck_assert_int_eq(updated_of("ud", "a"), fixture_ts("2036-12-01T00:00:01Z"));
    for (int i = 0; i < 100 && keys_of("ud", "upd:2036-11-30") > 0; i++) {
        struct timespec t = {0, 20 * 1000000L};
        nanosleep(&t, NULL);
    }
    ck_assert_int_eq(keys_of("ud", "upd:2036-11-30"), 0); /* swept with its set */
    ck_assert_int_eq(it_status("DELETE", "/boards/ud", NULL), 204);
    ck_assert_int_eq(keys_of("ud", ""), 0);
    fixture_set_clock(NULL);
}
END_TEST

/* ---- every read that returns an entry */

/* GET path (200): the body as text (free it) and, when doc, as JSON. */
static char *get_text(const char *path, cJSON **doc)
{
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "GET", path, NULL, 0, NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld %.300s", path, r.status, r.body);
    char *text = strdup(r.body ? r.body : "");
    ck_assert_ptr_nonnull(text);
    if (doc) {
        *doc = r.json;
        r.json = NULL;
    }
    http_result_free(&r);
    return text;
}

/* The entry `it` carries the member read's updated_at (tracked), or no updated_at at all. */
static void check_entry(const char *board, const cJSON *it, int tracked, const char *what)
{
    const char *id = cJSON_GetObjectItemCaseSensitive(it, "id")->valuestring;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "updated_at");
    if (!tracked) {
        ck_assert_msg(!u, "%s: %s carries updated_at on a board without the setting", what, id);
        return;
    }
    ck_assert_msg(cJSON_IsNumber(u), "%s: %s has no updated_at", what, id);
    long long want = updated_of(board, id);
    ck_assert_msg((long long)u->valuedouble == want, "%s: %s updated_at %.0f, member %lld", what,
                  id, u->valuedouble, want);
}

/* Each entry of the array `name` of doc checked as check_entry does. Returns how many. */
static int check_entries(const char *board, const cJSON *doc, const char *name, int tracked,
                         const char *what)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, name);
    ck_assert_msg(cJSON_IsArray(items), "%s: no %s array", what, name);
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        check_entry(board, it, tracked, what);
        n++;
    }
    return n;
}

/* GET path; its `items` (and `with`) checked as check_entries does; returns the doc. */
static cJSON *read_checked(const char *board, const char *path, int tracked, int min_items)
{
    cJSON *d = NULL;
    free(get_text(path, &d));
    ck_assert_ptr_nonnull(d);
    int n = check_entries(board, d, "items", tracked, path);
    ck_assert_msg(n >= min_items, "GET %s: %d items, want at least %d", path, n, min_items);
    if (cJSON_GetObjectItemCaseSensitive(d, "with"))
        ck_assert_int_gt(check_entries(board, d, "with", tracked, path), 0);
    return d;
}

/* The first page an event stream of `path` sends (its data line as JSON). */
static cJSON *stream_first_page(const char *path)
{
    int fd = connect_loopback(g_port);
    ck_assert_int_ge(fd, 0);
    char req[512];
    int n =
        snprintf(req, sizeof(req),
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", path);
    ck_assert_int_eq(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    static char raw[65536];
    size_t len = 0;
    cJSON *doc = NULL;
    for (int waited = 0; !doc && waited < 10000 && len + 1 < sizeof(raw);) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) {
            waited += 100;
            continue;
        }
        ssize_t k = recv(fd, raw + len, sizeof(raw) - 1 - len, 0);
        ck_assert_msg(k > 0, "the stream of %s ended before its first page", path);
        len += (size_t)k;
        raw[len] = '\0';
        /* the data line, whole: a small page is one chunk of the chunked body */
        char *data = strstr(raw, "\ndata: ");
        char *end = data ? strstr(data + 7, "\n") : NULL;
        if (end) {
            *end = '\0';
            doc = cJSON_Parse(data + 7);
            ck_assert_msg(doc, "the stream's data line does not parse: %.300s", data + 7);
        }
    }
    close(fd);
    ck_assert_msg(doc, "no page from the stream of %s", path);
    return doc;
}

/* The export of board b: each NDJSON line's updated_at checked as check_entries does. */
static void check_export(const char *b, int tracked, int rows)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/export", b);
    char *text = get_text(path, NULL);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char wrapped[4096];
        snprintf(wrapped, sizeof(wrapped), "{\"items\":[%s]}", line);
        cJSON *d = cJSON_Parse(wrapped);
        ck_assert_msg(d, "export line: %.300s", line);
        n += check_entries(b, d, "items", tracked, "export");
        cJSON_Delete(d);
    }
    free(text);
    ck_assert_int_eq(n, rows);
}

/* A cursor of doc ("next" or "prev"), copied into out (URL-safe text). */
static void cursor_of(const cJSON *doc, const char *name, char *out, size_t len)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, name);
    ck_assert_msg(cJSON_IsString(c), "no %s cursor", name);
    snprintf(out, len, "%s", c->valuestring);
}

/* Every read form of board b (12 members m0..m11 written, scores 100 - i except a tie), each
 * entry checked against the member read. */
static void every_read(const char *b, int tracked)
{
    char path[1024], cur[256];
    /* the path before the board's name, and after it */
    static const struct {
        const char *pre, *post;
        int min;
    } plain[] = {
        {"/boards/", "/rank?page=1&size=5", 5},            /* live, or filled into the cache */
        {"/boards/", "/rank?page=1&size=5", 5},            /* the cached copy on a cached board */
        {"/boards/", "/rank?page=3&size=5", 2},            /* the last page */
        {"/boards/", "/rank?page=1&size=5&rank=dense", 5}, /* another rank type */
        {"/rank?board=", "&page=2&size=4", 4},
        {"/boards/", "/rank?page=2&size=3&with=m0,m11,nobody", 3}, /* the page plus members */
        {"/boards/", "/members/m5/around?size=4", 4},
        {"/boards/", "/around?score=94&size=3", 3},
        {"/boards/", "/top?percent=50", 6},
        {"/boards/", "/members?ids=m1,m7,nobody", 2},
    };
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        snprintf(path, sizeof(path), "%s%s%s", plain[i].pre, b, plain[i].post);
        cJSON_Delete(read_checked(b, path, tracked, plain[i].min));
    }
    /* the member at a percentile */
    snprintf(path, sizeof(path), "/boards/%s/percentile?p=50", b);
    cJSON *d = NULL;
    free(get_text(path, &d));
    check_entry(b, d, tracked, "percentile");
    cJSON_Delete(d);
    /* one member on several boards */
    snprintf(path, sizeof(path), "/members/m3?boards=%s,nosuchboard", b);
    free(get_text(path, &d));
    const cJSON *on = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "boards"), 0);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(on, "updated_at");
    if (tracked)
        ck_assert_msg(cJSON_IsNumber(u) && (long long)u->valuedouble == updated_of(b, "m3"),
                      "member boards: m3 on %s has updated_at %s", b, u ? "other" : "none");
    else
        ck_assert_msg(!u, "member boards: updated_at on %s, a board without the setting", b);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItem(d, "boards"), 1), "updated_at"));
    cJSON_Delete(d);
    /* POST /lookup */
    snprintf(path, sizeof(path), "/boards/%s/lookup", b);
    d = it_json("POST", path, "{\"ids\":[\"m2\",\"m10\",\"nobody\"]}", 200);
    ck_assert_int_eq(check_entries(b, d, "items", tracked, "lookup"), 2);
    cJSON_Delete(d);
    /* a score range, then its cursors */
    snprintf(path, sizeof(path), "/boards/%s/rank?min=91&max=98&size=3", b);
    d = read_checked(b, path, tracked, 3);
    cursor_of(d, "next", cur, sizeof(cur));
    cJSON_Delete(d);
    snprintf(path, sizeof(path), "/boards/%s/rank?min=91&max=98&size=3&after=%s", b, cur);
    d = read_checked(b, path, tracked, 3);
    cursor_of(d, "prev", cur, sizeof(cur));
    cJSON_Delete(d);
    snprintf(path, sizeof(path), "/boards/%s/rank?min=91&max=98&size=3&before=%s", b, cur);
    cJSON_Delete(read_checked(b, path, tracked, 3));
    /* a plain page's cursor */
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=4", b);
    d = read_checked(b, path, tracked, 4);
    cursor_of(d, "next", cur, sizeof(cur));
    cJSON_Delete(d);
    snprintf(path, sizeof(path), "/boards/%s/rank?size=4&after=%s", b, cur);
    cJSON_Delete(read_checked(b, path, tracked, 4));
    /* an event stream's first page, and a score range's */
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=6", b);
    d = stream_first_page(path);
    ck_assert_int_eq(check_entries(b, d, "items", tracked, "stream"), 6);
    cJSON_Delete(d);
    snprintf(path, sizeof(path), "/boards/%s/rank?min=0&max=95&size=3", b);
    d = stream_first_page(path);
    ck_assert_int_eq(check_entries(b, d, "items", tracked, "stream range"), 3);
    cJSON_Delete(d);
    /* export */
    check_export(b, tracked, 12);
}

/* m0..m11 on b, each written at its own time (m4 and m5 tie; m1 written twice, its score kept
 * by a worse `best`). */
static void fill_board(const char *b, int subscores)
{
    for (int i = 0; i < 12; i++) {
        char at[40], body[160];
        snprintf(at, sizeof(at), "2036-11-30T12:00:%02d.%03dZ", i, 7 * i);
        int n =
            snprintf(body, sizeof(body), "{\"id\":\"m%d\",\"score\":%d", i, i == 5 ? 96 : 100 - i);
        if (subscores)
            n += snprintf(body + n, sizeof(body) - (size_t)n, ",\"subscores\":[%d]", i % 3);
        snprintf(body + n, sizeof(body) - (size_t)n, "}");
        write_at(at, b, body);
    }
    write_at("2036-11-30T12:01:00Z", b,
             subscores ? "{\"id\":\"m1\",\"score\":1,\"subscores\":[0],\"op\":\"best\"}"
                       : "{\"id\":\"m1\",\"score\":1,\"op\":\"best\"}");
    fixture_set_clock(NULL);
}

START_TEST(test_updated_every_read)
{
    /* a live board, a cached one, and a `wide` one with sub-scores (ids after a prefix) */
    ck_assert_int_eq(
        it_status("PUT", "/boards/el", "{\"track_updated_at\":true,\"page_ttl_ms\":0}"), 201);
    ck_assert_int_eq(
        it_status("PUT", "/boards/ec", "{\"track_updated_at\":true,\"page_ttl_ms\":60000}"), 201);
    ck_assert_int_eq(
        it_status("PUT", "/boards/es",
                  "{\"track_updated_at\":true,\"page_ttl_ms\":0,\"subscores\":[\"asc\"]}"),
        201);
    fill_board("el", 0);
    fill_board("ec", 0);
    fill_board("es", 1);
    /* the worse best kept m1's score and its time */
    ck_assert_int_eq(updated_of("el", "m1"), fixture_ts("2036-11-30T12:00:01.007Z"));
    every_read("el", 1);
    every_read("ec", 1);
    every_read("es", 1);
}
END_TEST

/* A best that keeps the old score leaves updated_at as it was on pages too (live and cached:
 * the write changes no score, so the cached page stays right). */
START_TEST(test_updated_best_kept_on_pages)
{
    ck_assert_int_eq(
        it_status("PUT", "/boards/bk", "{\"track_updated_at\":true,\"page_ttl_ms\":0}"), 201);
    write_at("2036-11-30T12:00:00Z", "bk", "{\"id\":\"a\",\"score\":10,\"op\":\"best\"}");
    write_at("2036-11-30T12:00:01Z", "bk", "{\"id\":\"b\",\"score\":9,\"op\":\"best\"}");
    write_at("2036-11-30T12:00:05Z", "bk", "{\"id\":\"a\",\"score\":3,\"op\":\"best\"}");
    write_at("2036-11-30T12:00:06Z", "bk", "{\"id\":\"b\",\"score\":12,\"op\":\"best\"}");
    fixture_set_clock(NULL);
    cJSON *d = read_checked("bk", "/boards/bk/rank?page=1", 1, 2);
    const cJSON *items = cJSON_GetObjectItem(d, "items");
    const cJSON *first = cJSON_GetArrayItem(items, 0), *second = cJSON_GetArrayItem(items, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(first, "id")->valuestring, "b");
    ck_assert_int_eq((long long)cJSON_GetObjectItem(first, "updated_at")->valuedouble,
                     fixture_ts("2036-11-30T12:00:06Z"));
    ck_assert_str_eq(cJSON_GetObjectItem(second, "id")->valuestring, "a");
    ck_assert_int_eq((long long)cJSON_GetObjectItem(second, "updated_at")->valuedouble,
                     fixture_ts("2036-11-30T12:00:00Z")); /* the kept score's time */
    cJSON_Delete(d);
}
END_TEST

/* MONITOR on the test Redis: the commands that read a times hash (":upd"), a script's or not,
 * until the marker (a read script's EVALSHA names the key among its keys on every board: not a
 * read); frees mon. */
#define UPD_MARKER "rankd-updated-monitor-end"
static int upd_reads(redisContext *mon)
{
    freeReplyObject(redis_admin_cmd(g_admin, "ECHO %s", UPD_MARKER));
    int n = 0;
    for (;;) {
        void *v = NULL;
        ck_assert_msg(redisGetReply(mon, &v) == REDIS_OK && v, "MONITOR stream ended early");
        redisReply *r = v;
        int end = r->str && strstr(r->str, UPD_MARKER) != NULL;
        struct mon_cmd c;
        if (!end && r->str && mon_parse(r->str, &c) == 0 && !mon_is(&c, "EVALSHA") &&
            !mon_is(&c, "EVAL")) {
            for (int i = 1; i < c.argc && i < MON_TOKENS; i++)
                if (strstr(c.argv[i], ":upd")) {
                    fprintf(stderr, "updated_at: a script read %s %s\n", c.argv[0], c.argv[i]);
                    n++;
                    break;
                }
        }
        freeReplyObject(r);
        if (end)
            break;
    }
    redisFree(mon);
    return n;
}

START_TEST(test_updated_untracked_pays_nothing)
{
    ck_assert_int_eq(it_status("PUT", "/boards/nl", "{\"page_ttl_ms\":0}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/nc", "{\"page_ttl_ms\":60000}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/ns", "{\"page_ttl_ms\":0,\"subscores\":[\"asc\"]}"),
                     201);
    fill_board("nl", 0);
    fill_board("nc", 0);
    fill_board("ns", 1);
    redisContext *mon = mon_start(g_redis.port);
    every_read("nl", 0);
    every_read("nc", 0);
    every_read("ns", 0);
    ck_assert_int_eq(upd_reads(mon), 0);
    /* and a tracked board's reads are seen by the same count (it can see them) */
    ck_assert_int_eq(
        it_status("PUT", "/boards/nt", "{\"track_updated_at\":true,\"page_ttl_ms\":0}"), 201);
    it_post_score("nt", "{\"id\":\"a\",\"score\":1}");
    mon = mon_start(g_redis.port);
    cJSON_Delete(read_checked("nt", "/boards/nt/rank?page=1", 1, 1));
    ck_assert_int_ge(upd_reads(mon), 1);
}
END_TEST

Suite *updated_suite(void)
{
    const struct it_timed_case cases[] = {
        {"setting", test_updated_setting, 30},
        {"moves_with_the_score", test_updated_moves_with_the_score, 30},
        {"removed_with_members", test_updated_removed_with_members, 30},
        {"every_read", test_updated_every_read, 60},
        {"best_kept_on_pages", test_updated_best_kept_on_pages, 30},
        {"untracked_pays_nothing", test_updated_untracked_pays_nothing, 60},
    };
    return it_suite_with("updated_at", cases, sizeof(cases) / sizeof(cases[0]), it_setup_clock);
}
