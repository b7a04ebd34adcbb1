/* test_http.c -- the errno -> status table (http.h), row by row, and the replies made from it;
 * route matching (route.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "route.h"
#include "suites.h"

/* What every (scope, errno) the callers use must answer: the whole table, written out again. A
 * row added to the table without a line here fails every_row_is_expected. */
static const struct expect {
    unsigned scope;
    int err;
    int status;
    const char *code;
    int retry_after_s;
} expected[] = {
    {HTTP_ERRNO_IDEMPOTENT, -ETIME, 503, "write_outcome_unknown", 1},
    {HTTP_ERRNO_IDEMPOTENT, -ECONNRESET, 503, "write_outcome_unknown", 1},
    {HTTP_ERRNO_WRITE, -ETIME, 503, "write_outcome_unknown", 1},
    {HTTP_ERRNO_WRITE, -ECONNRESET, 503, "write_outcome_unknown", 1},
    {HTTP_ERRNO_IDEMPOTENT, -EREMOTEIO, 503, "write_not_replicated", 1}, /* --write-replicas */
    {HTTP_ERRNO_WRITE, -EREMOTEIO, 503, "write_not_replicated", 1},
    {HTTP_ERRNO_BOARD, -ENOENT, 404, "board_not_found", 0},
    {HTTP_ERRNO_BOARD, -ENODATA, 404, "member_not_found", 0},
    {HTTP_ERRNO_BOARD, -EINVAL, 400, "invalid_period", 0},
    {HTTP_ERRNO_BOARD, -ESRCH, 404, "period_not_found", 0},
    {HTTP_ERRNO_BOARD, -ESTALE, 409, "export_interrupted", 0},
    {HTTP_ERRNO_BOARD, -ENOTSUP, 400, "board_has_no_periods", 0},
    {HTTP_ERRNO_BOARD, -EKEYEXPIRED, 410, "cursor_expired", 0},
    {HTTP_ERRNO_BOARD, -EBADR, 400, "invalid_cursor", 0},
    {HTTP_ERRNO_BOARD, -ENOSYS, 409, "dense_rank_unavailable", 0},
    {HTTP_ERRNO_ITEM, -ENODATA, 404, "item_not_found", 0},
    {HTTP_ERRNO_SETTINGS, -EEXIST, 409, "board_not_empty", 0},
    {HTTP_ERRNO_WRITE, -EKEYREJECTED, 422, "idempotency_key_reused", 0},
    {HTTP_ERRNO_SCORE, -EDOM, 422, "invalid_score", 0},
    {HTTP_ERRNO_SCORE, -ERANGE, 422, "score_out_of_range", 0},
    {HTTP_ERRNO_SCORE, 0, 422, "invalid_score", 0},
    {HTTP_ERRNO_ROUTE, -ENOENT, 404, "not_found", 0},
    {HTTP_ERRNO_ROUTE, -EPERM, 405, "method_not_allowed", 0},
    {HTTP_ERRNO_ROUTE, -EINVAL, 400, "invalid_path", 0},
    {HTTP_ERRNO_ROUTE, -ENAMETOOLONG, 414, "uri_too_long", 0},
    {HTTP_ERRNO_ROUTE, -E2BIG, 414, "uri_too_long", 0},
    {HTTP_ERRNO_FILE, -EINVAL, 400, "invalid_path", 0},
    {HTTP_ERRNO_QUERY, -EINVAL, 400, "invalid_query", 0},
    {HTTP_ERRNO_FAULT, -ECONNREFUSED, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_FAULT, -ETIMEDOUT, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_FAULT, -ETIME, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_FAULT, -ECONNRESET, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_FAULT, -EIO, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_FAULT, -EAGAIN, 503, "redis_unavailable", 1},
    {HTTP_ERRNO_WRITE, -EXDEV, 422, "several_boards_on_cluster", 0},
    {HTTP_ERRNO_FAULT, -EBUSY, 503, "redis_unavailable", 1},    /* cluster: TRYAGAIN */
    {HTTP_ERRNO_FAULT, -ENETDOWN, 503, "redis_unavailable", 1}, /* cluster: CLUSTERDOWN */
    {HTTP_ERRNO_FAULT, -ELOOP, 503, "redis_unavailable", 1},    /* cluster: redirects */
    {HTTP_ERRNO_FAULT, -EDQUOT, 507, "insufficient_storage", 0},
    {HTTP_ERRNO_FAULT, -EROFS, 503, "primary_changed", 1},
    {HTTP_ERRNO_FAULT, -ENOSPC, 422, "score_group_full", 0},
    {~0U, 0, 500, "internal", 0},
};
#define NEXPECTED (sizeof(expected) / sizeof(expected[0]))

/* An errno no row names: what a catch-all row (err 0) answers. */
#define UNLISTED (-EXDEV)

static const struct http_errno_args all_args = {.board = "b",
                                                .id = "i",
                                                .method = "GET",
                                                .path = "/p",
                                                .allow = "PUT",
                                                .field = "f",
                                                .score = "1.5",
                                                .min = "-9",
                                                .max = "9",
                                                .decimals = "0"};

static int snake_case(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
            return 0;
    return 1;
}

static int one_bit(unsigned v)
{
    return v && !(v & (v - 1));
}

/* Each expected (scope, errno) is what its row says, and each row is reached by its own lookup. */
START_TEST(every_expected_pair_maps)
{
    const struct expect *x = &expected[_i];
    int err = x->err ? x->err : UNLISTED;
    unsigned scope = x->scope == ~0U ? 0 : x->scope;
    const struct http_errno_row *e = http_errno_find(scope, err);
    ck_assert_msg(err_status(e->id) == x->status && strcmp(err_code(e->id), x->code) == 0 &&
                      e->retry_after_s == x->retry_after_s,
                  "scope %#x errno %d: %d %s (retry %d); want %d %s (retry %d)", x->scope, x->err,
                  err_status(e->id), err_code(e->id), e->retry_after_s, x->status, x->code,
                  x->retry_after_s);
    ck_assert_int_eq(e->err, x->err);
}
END_TEST

/* The shape of every row: a status, a snake_case code, a message whose every {name} is known, a
 * summary where a write or a stream can meet it, Retry-After only on a 503. */
START_TEST(every_row_is_well_formed)
{
    const struct http_errno_row *e = &http_errno_rows[_i];
    int last = (size_t)_i == http_errno_nrows - 1;
    ck_assert_msg(err_status(e->id) >= 400 && err_status(e->id) <= 599, "row %d: status %d", _i,
                  err_status(e->id));
    ck_assert_msg(snake_case(err_code(e->id)), "row %d: code '%s'", _i,
                  err_code(e->id) ? err_code(e->id) : "(null)");
    ck_assert_msg(e->err <= 0, "row %d: errno %d is not negative", _i, e->err);
    ck_assert_msg(last ? (e->scope == ~0U && e->err == 0) : one_bit(e->scope),
                  "row %d: scope %#x (one scope a row; only the last row has them all)", _i,
                  e->scope);
    ck_assert_msg(e->retry_after_s == 0 || err_status(e->id) == 503, "row %d: Retry-After on a %d",
                  _i, err_status(e->id));
    const char *message = e->message ? e->message : err_message(e->id); /* NULL: the id's own */
    ck_assert_msg(message && message[0], "row %d: no message", _i);
    char out[600];
    size_t n = http_errno_format(e, e->err ? e->err : UNLISTED, &all_args, out, sizeof(out));
    ck_assert_uint_eq(n, strlen(out));
    ck_assert_msg(!strchr(out, '{') && !strchr(out, '}'), "row %d: unknown name in '%s'", _i,
                  message);
    if (last || (e->scope & (HTTP_ERRNO_FAULT | HTTP_ERRNO_WRITE))) {
        ck_assert_msg(e->summary && e->summary[0], "row %d (%s): no summary", _i, err_code(e->id));
        http_errno_summary(e, e->err ? e->err : UNLISTED, out, sizeof(out));
        ck_assert_msg(!strchr(out, '{'), "row %d: unknown name in summary '%s'", _i, e->summary);
    }
}
END_TEST

/* Every row is in the expected list, and no row is shadowed by an earlier one. */
START_TEST(every_row_is_expected)
{
    ck_assert_uint_eq(http_errno_nrows, NEXPECTED);
    for (size_t i = 0; i < http_errno_nrows; i++) {
        const struct http_errno_row *e = &http_errno_rows[i];
        ck_assert_msg(e->scope == expected[i].scope && e->err == expected[i].err,
                      "row %zu is scope %#x errno %d; the test expects %#x %d there", i, e->scope,
                      e->err, expected[i].scope, expected[i].err);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(!(http_errno_rows[j].scope == e->scope &&
                            (http_errno_rows[j].err == e->err || http_errno_rows[j].err == 0)),
                          "row %zu (%s) is shadowed by row %zu", i, err_code(e->id), j);
    }
}
END_TEST

/* Which row wins where a caller names several scopes, and what needs none. */
START_TEST(precedence)
{
    ck_assert_str_eq(err_code(http_errno_find(HTTP_ERRNO_WRITE, -ETIME)->id),
                     "write_outcome_unknown");
    ck_assert_str_eq(
        err_code(http_errno_find(HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD, -ECONNRESET)->id),
        "write_outcome_unknown");
    ck_assert_str_eq(err_code(http_errno_find(0, -ETIME)->id), "redis_unavailable");
    ck_assert_str_eq(err_code(http_errno_find(HTTP_ERRNO_BOARD, -ECONNRESET)->id),
                     "redis_unavailable");
    ck_assert_str_eq(err_code(http_errno_find(HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD, -ENOENT)->id),
                     "board_not_found");
    ck_assert_str_eq(err_code(http_errno_find(HTTP_ERRNO_ITEM | HTTP_ERRNO_WRITE, -ENODATA)->id),
                     "item_not_found");
    ck_assert_str_eq(err_code(http_errno_find(0, -ENOENT)->id),
                     "internal"); /* no scope claims it */
    ck_assert_str_eq(err_code(http_errno_find(0, -ENOMEM)->id), "internal");
    ck_assert_str_eq(err_code(http_errno_find(HTTP_ERRNO_SCORE, -EIO)->id), "invalid_score");
    ck_assert_ptr_eq(http_errno_find(0, ETIMEDOUT), http_errno_find(0, -ETIMEDOUT));
    /* --write-replicas: applied on the primary, unconfirmed; "again" only with a key, and never
     * "safe to retry" */
    const struct http_errno_row *nr =
        http_errno_find(HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD, -EREMOTEIO);
    const struct http_errno_row *nk =
        http_errno_find(HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD | HTTP_ERRNO_IDEMPOTENT, -EREMOTEIO);
    ck_assert_str_eq(err_code(nr->id), "write_not_replicated");
    ck_assert_str_eq(err_code(nk->id), "write_not_replicated");
    const char *nr_message = nr->message ? nr->message : err_message(nr->id);
    const char *nk_message = nk->message ? nk->message : err_message(nk->id);
    ck_assert_ptr_nonnull(strstr(nr_message, "applied on the primary"));
    ck_assert_ptr_null(strstr(nr_message, "Idempotency-Key"));
    ck_assert_ptr_nonnull(strstr(nk_message, "same key"));
    ck_assert_ptr_nonnull(strstr(nk_message, "at most once"));
    ck_assert_ptr_null(strcasestr(nr_message, "safe to retry"));
    ck_assert_ptr_null(strcasestr(nk_message, "safe to retry"));
    ck_assert_str_eq(err_code(http_errno_find(0, -EREMOTEIO)->id), "internal"); /* a write's only */
}
END_TEST

/* Templates: quoted values, their cuts, {reason}, missing values, a short buffer. */
START_TEST(format)
{
    char out[600], id[300];
    memset(id, 'x', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    struct http_errno_args a = {.board = "weekly", .id = id};
    const struct http_errno_row *e = http_errno_find(HTTP_ERRNO_BOARD, -ENODATA);
    http_errno_format(e, -ENODATA, &a, out, sizeof(out));
    ck_assert_uint_eq(strlen(out), strlen("Board 'weekly' has no member ''.") + 200);
    ck_assert_ptr_nonnull(strstr(out, "Board 'weekly' has no member 'xxx"));
    e = http_errno_find(HTTP_ERRNO_BOARD, -ESRCH);
    http_errno_format(e, -ESRCH, &a, out, sizeof(out));
    ck_assert_ptr_nonnull(strstr(out, "(GET /boards/weekly lists them)"));
    e = http_errno_find(0, -EIO);
    http_errno_format(e, -EIO, NULL, out, sizeof(out));
    ck_assert_ptr_nonnull(strstr(out, strerror(EIO)));
    e = http_errno_find(HTTP_ERRNO_ROUTE, -ENOENT);
    http_errno_format(e, -ENOENT, NULL, out, sizeof(out));
    ck_assert_str_eq(out, "No route for  .");
    ck_assert_uint_eq(http_errno_format(e, -ENOENT, NULL, out, 5), 4);
    ck_assert_str_eq(out, "No r");
    e = http_errno_find(0, -EXDEV);
    http_errno_summary(e, -EXDEV, out, sizeof(out));
    ck_assert_ptr_nonnull(strstr(out, strerror(EXDEV)));
}
END_TEST

/* The reply: status, the {"error":{code,message}} body, Retry-After as the row says. */
START_TEST(reply_from_the_table)
{
    struct http_reply rp;
    memset(&rp, 0, sizeof(rp));
    struct http_errno_args a = {.board = "b1"};
    http_reply_errno_in(&rp, HTTP_ERRNO_BOARD, -ENOENT, &a);
    ck_assert_int_eq(rp.status, 404);
    ck_assert_int_eq(rp.nheaders, 0);
    cJSON *doc = cJSON_Parse(rp.body.data);
    cJSON *err = cJSON_GetObjectItem(doc, "error");
    ck_assert_str_eq(cJSON_GetObjectItem(err, "code")->valuestring, "board_not_found");
    ck_assert_str_eq(cJSON_GetObjectItem(err, "message")->valuestring,
                     "Board 'b1' does not exist.");
    cJSON_Delete(doc);
    buf_free(&rp.body);
    http_reply_free_fault(&rp);

    memset(&rp, 0, sizeof(rp));
    http_reply_write_errno(&rp, -ETIME);
    ck_assert_int_eq(rp.status, 503);
    ck_assert_int_eq(rp.nheaders, 1);
    ck_assert_str_eq(rp.headers[0].name, "Retry-After");
    ck_assert_str_eq(rp.headers[0].value, "1");
    ck_assert_ptr_nonnull(strstr(rp.body.data, "write_outcome_unknown"));
    buf_free(&rp.body);
    http_reply_free_fault(&rp);

    memset(&rp, 0, sizeof(rp));
    http_reply_errno(&rp, -EDQUOT);
    ck_assert_int_eq(rp.status, 507);
    ck_assert_int_eq(rp.nheaders, 0);
    buf_free(&rp.body);
    http_reply_free_fault(&rp);
}
END_TEST

/* route_match_in on a small table: literal and parameter segments, the number of segments, an
 * empty parameter, the methods of a path's shape (405 and its Allow), and decoded parameters
 * with their bounds. */
static const struct route table[] = {
    {.method = "GET", .pattern = "/"},
    {.method = "GET", .pattern = "/healthz"},
    {.method = "GET", .pattern = "/boards"},
    {.method = "GET", .pattern = "/boards/{board}"},
    {.method = "PUT", .pattern = "/boards/{board}"},
    {.method = "GET", .pattern = "/boards/{board}/rank"},
    {.method = "GET", .pattern = "/boards/{board}/members/{id}"},
    {.method = "GET", .pattern = "/boards/{board}/members/{id}/around"},
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

/* route_match_in of method and path: its return, the index of the route matched (-1: none) and
 * its parameters joined by '|' in params. */
static int match(const char *method, const char *path, int *index, char *params, size_t len,
                 char *allow, size_t allow_len)
{
    struct http_request rq;
    memset(&rq, 0, sizeof(rq));
    const struct route *r = NULL;
    int rc = route_match_in(table, NTABLE, method, path, &rq, &r, allow, allow_len);
    *index = r ? (int)(r - table) : -1;
    params[0] = '\0';
    for (int i = 0; i < rq.nparams; i++) {
        size_t used = strlen(params);
        snprintf(params + used, len - used, "%s%s", i ? "|" : "", rq.params[i]);
        free(rq.params[i]);
    }
    return rc;
}

START_TEST(route_shapes)
{
    static const struct {
        const char *method, *path;
        int rc, index;
        const char *params, *allow;
    } cases[] = {
        {"GET", "/", 0, 0, "", ""},
        {"GET", "/healthz", 0, 1, "", ""},
        {"HEAD", "/healthz", 0, 1, "", ""},
        {"GET", "/healthzz", -ENOENT, -1, "", ""},
        {"GET", "/health", -ENOENT, -1, "", ""},
        {"GET", "/boards", 0, 2, "", ""},
        {"GET", "/boards/b1", 0, 3, "b1", ""},
        {"PUT", "/boards/b1", 0, 4, "b1", ""},
        {"DELETE", "/boards/b1", -EPERM, -1, "", "GET, HEAD, PUT"},
        {"POST", "/boards/b1/rank", -EPERM, -1, "", "GET, HEAD"},
        {"GET", "/boards/", -ENOENT, -1, "", ""},    /* an empty parameter */
        {"GET", "/boards/b1/", -ENOENT, -1, "", ""}, /* a third, empty segment */
        {"GET", "/boards/b1/rank", 0, 5, "b1", ""},
        {"GET", "/boards/b1/ranks", -ENOENT, -1, "", ""},
        {"GET", "/boards/b1/ran", -ENOENT, -1, "", ""},     /* a literal's prefix */
        {"GET", "/boards/b1/members", -ENOENT, -1, "", ""}, /* ends inside a pattern */
        {"GET", "/board", -ENOENT, -1, "", ""},
        {"GET", "/boardsx/b1", -ENOENT, -1, "", ""},
        {"GET", "/boards/b1/members/u%2F7", 0, 6, "b1|u/7", ""},
        {"GET", "/boards//members/u7", -ENOENT, -1, "", ""},
        {"GET", "/boards/b1/members/u7/around", 0, 7, "b1|u7", ""},
        {"GET", "/boards/b1/members/u7/around/x", -ENOENT, -1, "", ""},
        {"GET", "/x/b1/members/u7/around", -ENOENT, -1, "", ""},
        {"GET", "boards", -ENOENT, -1, "", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int index;
        char params[128], allow[128];
        int rc = match(cases[i].method, cases[i].path, &index, params, sizeof(params), allow,
                       sizeof(allow));
        ck_assert_msg(rc == cases[i].rc && index == cases[i].index &&
                          strcmp(params, cases[i].params) == 0 &&
                          (rc != -EPERM || strcmp(allow, cases[i].allow) == 0),
                      "%s %s: rc %d index %d params '%s' allow '%s'", cases[i].method,
                      cases[i].path, rc, index, params, allow);
    }
    /* a parameter's bounds: ROUTE_SEGMENT_BYTES_MAX once decoded (longer raw is fine when its
     * escapes make it short), and a malformed escape */
    char path[2048], params[1024], allow[128];
    int index;
    memset(params, 0, sizeof(params));
    snprintf(path, sizeof(path), "/boards/%0*d/members/%%zz", ROUTE_SEGMENT_BYTES_MAX, 7);
    ck_assert_int_eq(match("GET", path, &index, params, sizeof(params), allow, sizeof(allow)),
                     -EINVAL);
    snprintf(path, sizeof(path), "/boards/%0*d", ROUTE_SEGMENT_BYTES_MAX, 7);
    ck_assert_int_eq(match("GET", path, &index, params, sizeof(params), allow, sizeof(allow)), 0);
    ck_assert_uint_eq(strlen(params), ROUTE_SEGMENT_BYTES_MAX);
    snprintf(path, sizeof(path), "/boards/%0*d", ROUTE_SEGMENT_BYTES_MAX + 1, 7);
    ck_assert_int_eq(match("GET", path, &index, params, sizeof(params), allow, sizeof(allow)),
                     -E2BIG);
    strcpy(path, "/boards/b/members/");
    for (int i = 0; i < 200; i++)
        strcat(path, "%41"); /* 600 bytes sent, 200 decoded */
    ck_assert_int_eq(match("GET", path, &index, params, sizeof(params), allow, sizeof(allow)), 0);
    ck_assert_uint_eq(strlen(params), 2 + 200);
}
END_TEST

Suite *http_suite(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("errno_table");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, every_expected_pair_maps, 0, (int)NEXPECTED);
    tcase_add_loop_test(tc, every_row_is_well_formed, 0, (int)http_errno_nrows);
    tcase_add_test(tc, every_row_is_expected);
    tcase_add_test(tc, precedence);
    tcase_add_test(tc, format);
    tcase_add_test(tc, reply_from_the_table);
    suite_add_tcase(s, tc);
    TCase *routes = tcase_create("routes");
    tcase_add_test(routes, route_shapes);
    suite_add_tcase(s, routes);
    return s;
}
