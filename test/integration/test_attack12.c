/*
 * test_attack12.c -- requests an attacker forges against the newest surfaces (sub-scores and
 * their cursors), over real HTTP against a real Redis; each case failed before its fix:
 *   1. forged_cursor_shape: a cursor whose edge has another shape than the board's set members
 *      (no sub-score bytes on a board with sub-scores, a column too many, sub-score bytes on a
 *      board without them) is not one rankd made for this board: 400 invalid_cursor, never a
 *      page read from a made-up place. The cursors rankd made still walk.
 *   2. content_encoding_refused: a body with a Content-Encoding (gzip) is 415
 *      unsupported_media_type, nothing written: rankd reads bodies as sent, and took the gzip
 *      bytes as JSON (400 invalid_json) or as NDJSON lines (200, every line rejected).
 *      `identity` is no coding and is taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "suites.h"

/* A request (with the write token); asserts the status; returns the body's JSON (free it). */
static cJSON *req(const char *method, const char *path, const char *body, long want)
{
    struct http_result r;
    ck_assert_int_eq(
        http_req(g_port, method, path, body, body ? strlen(body) : 0, NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == want, "%s %s %.200s -> %ld %.500s; want %ld", method, path,
                  body ? body : "", r.status, r.body, want);
    cJSON *doc = r.json;
    r.json = NULL;
    http_result_free(&r);
    return doc;
}

static void expect_error(const char *path, long status, const char *code)
{
    struct http_result r;
    ck_assert_int_eq(http_req(g_port, "GET", path, NULL, 0, NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == status && strcmp(http_error_code(&r), code) == 0,
                  "GET %s -> %ld %.400s; want %ld %s", path, r.status, r.body, status, code);
    http_result_free(&r);
}

/* The `next` cursor of page 1 (size 1) of board, decoded into c. */
static void next_of_first(const char *board, struct cursor *c)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/rank?size=1", board);
    cJSON *d = req("GET", path, NULL, 200);
    const cJSON *n = cJSON_GetObjectItem(d, "next");
    ck_assert_msg(cJSON_IsString(n), "page 1 of %s has no next cursor", board);
    ck_assert_int_eq(cursor_decode(n->valuestring, c), 0);
    cJSON_Delete(d);
}

/* GET board's page after cursor c (re-encoded as it is). */
static void after_path(const char *board, const struct cursor *c, char *path, size_t len)
{
    char text[CURSOR_TEXT_MAX];
    ck_assert_int_eq(cursor_encode(c, text, sizeof(text)), 0);
    snprintf(path, len, "/boards/%s/rank?size=1&after=%s", board, text);
}

/* The id of the only item of the page at path. */
static void expect_first_id(const char *path, const char *id)
{
    cJSON *d = req("GET", path, NULL, 200);
    const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "items"), 0);
    ck_assert_msg(it && strcmp(cJSON_GetObjectItem(it, "id")->valuestring, id) == 0,
                  "GET %s: want %s first", path, id);
    cJSON_Delete(d);
}

START_TEST(test_forged_cursor_shape)
{
    cJSON_Delete(req("PUT", "/boards/fc", "{\"subscores\":[\"asc\"],\"page_ttl_ms\":0}", 201));
    cJSON_Delete(req("POST", "/boards/fc/scores",
                     "{\"entries\":[{\"id\":\"a\",\"score\":5,\"subscores\":[1]},"
                     "{\"id\":\"b\",\"score\":5,\"subscores\":[2]},"
                     "{\"id\":\"c\",\"score\":4,\"subscores\":[0]}]}",
                     200));
    cJSON_Delete(req("PUT", "/boards/fw", "{\"score_layout\":\"wide\",\"page_ttl_ms\":0}", 201));
    cJSON_Delete(req("POST", "/boards/fw/scores",
                     "{\"entries\":[{\"id\":\"a\",\"score\":5},{\"id\":\"b\",\"score\":4}]}", 200));
    struct cursor c, f;
    char path[1024];
    next_of_first("fc", &c);
    ck_assert_int_eq((int)c.sub_len, 8);
    after_path("fc", &c, path, sizeof(path));
    expect_first_id(path, "b"); /* the cursor rankd made */
    f = c;                      /* no sub-score bytes (a version 3 cursor) */
    f.sub_len = 0;
    after_path("fc", &f, path, sizeof(path));
    expect_error(path, 400, "invalid_cursor");
    f = c; /* a column the board does not have */
    memcpy(f.sub + 8, c.sub, 8);
    f.sub_len = 16;
    after_path("fc", &f, path, sizeof(path));
    expect_error(path, 400, "invalid_cursor");
    f = c; /* half a column */
    f.sub_len = 4;
    after_path("fc", &f, path, sizeof(path));
    expect_error(path, 400, "invalid_cursor");
    /* a wide board without sub-scores: its own cursor walks, one with sub-score bytes is forged */
    next_of_first("fw", &c);
    ck_assert_int_eq((int)c.sub_len, 0);
    after_path("fw", &c, path, sizeof(path));
    expect_first_id(path, "b");
    f = c;
    memset(f.sub, 0x80, 8);
    f.sub_len = 8;
    after_path("fw", &f, path, sizeof(path));
    expect_error(path, 400, "invalid_cursor");
    /* before= is judged the same way */
    cJSON *d = req("GET", "/boards/fc/rank?size=1&page=2", NULL, 200);
    ck_assert_int_eq(cursor_decode(cJSON_GetObjectItem(d, "prev")->valuestring, &c), 0);
    cJSON_Delete(d);
    c.sub_len = 0;
    char text[CURSOR_TEXT_MAX];
    ck_assert_int_eq(cursor_encode(&c, text, sizeof(text)), 0);
    snprintf(path, sizeof(path), "/boards/fc/rank?size=1&before=%s", text);
    expect_error(path, 400, "invalid_cursor");
}
END_TEST

/* A write of body (content type ctype) with extra headers; asserts the status and error code
 * ("" for a 200). */
static void write_h(const char *path, const char *body, size_t len, const char *ctype,
                    const char *const *headers, long want, const char *code)
{
    struct http_result r;
    ck_assert_int_eq(http_req_h(g_port, "POST", path, body, len, ctype, TEST_TOKEN, headers, &r),
                     0);
    ck_assert_msg(r.status == want && (want == 200 || strcmp(http_error_code(&r), code) == 0),
                  "POST %s -> %ld %.300s; want %ld %s", path, r.status, r.body, want, code);
    http_result_free(&r);
}

START_TEST(test_content_encoding_refused)
{
    cJSON_Delete(req("PUT", "/boards/ce", "{}", 201));
    /* '{"id":"g","score":1}\n', gzip -n: what a client that compresses its upload sends */
    static const unsigned char gz[] = {
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xab, 0x56, 0xca, 0x4c,
        0x51, 0xb2, 0x52, 0x4a, 0x57, 0xd2, 0x51, 0x2a, 0x4e, 0xce, 0x2f, 0x4a, 0x55, 0xb2,
        0x32, 0xac, 0xe5, 0x02, 0x00, 0x8b, 0xc8, 0xda, 0xb1, 0x15, 0x00, 0x00, 0x00};
    const char *gzip[] = {"Content-Encoding: gzip", NULL};
    const char *br[] = {"Content-Encoding: br", NULL};
    const char *identity[] = {"Content-Encoding: identity", NULL};
    write_h("/boards/ce/scores", (const char *)gz, sizeof(gz), "application/x-ndjson", gzip, 415,
            "unsupported_media_type");
    write_h("/boards/ce/scores", (const char *)gz, sizeof(gz), "application/json", gzip, 415,
            "unsupported_media_type");
    const char *plain = "{\"id\":\"g\",\"score\":1}\n";
    write_h("/boards/ce/scores", plain, strlen(plain), "application/x-ndjson", br, 415,
            "unsupported_media_type");
    cJSON *d = req("GET", "/boards/ce", NULL, 200);
    ck_assert_int_eq(cJSON_GetObjectItem(d, "total")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(d, "version")->valueint, 0);
    cJSON_Delete(d);
    write_h("/boards/ce/scores", plain, strlen(plain), "application/x-ndjson", identity, 200, "");
    write_h("/boards/ce/scores", plain, strlen(plain) - 1, "application/json", identity, 200, "");
    d = req("GET", "/boards/ce", NULL, 200);
    ck_assert_int_eq(cJSON_GetObjectItem(d, "total")->valueint, 1);
    cJSON_Delete(d);
}
END_TEST

Suite *attack12_suite(void)
{
    const struct it_case cases[] = {
        {"forged_cursor_shape", test_forged_cursor_shape},
        {"content_encoding_refused", test_content_encoding_refused},
    };
    return it_suite("attack12", cases, sizeof(cases) / sizeof(cases[0]));
}
