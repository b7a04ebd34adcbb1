/* test_filters.c -- the exchange's filters (filter.h) on plain requests and replies: the chain's
 * headers in order, the gzip form and its ETag, a 304 about a gzip form, CORS preflights and
 * reads. No libmicrohttpd: headers come from a table. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <check.h>

#include "cors.h"
#include "filter.h"
#include "filter_gzip.h"
#include "route.h"
#include "suites.h"

struct hdrs {
    const char *name[4], *value[4];
};

static const char *lookup(void *conn, const char *name)
{
    const struct hdrs *h = conn;
    for (int i = 0; i < 4 && h->name[i]; i++)
        if (strcasecmp(h->name[i], name) == 0)
            return h->value[i];
    return NULL;
}

static int copies(void *conn, const char *name)
{
    return lookup(conn, name) ? 1 : 0;
}

static const char *added(const struct filter_headers *out, const char *name, int nth)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->h[i].name, name) == 0 && nth-- == 0)
            return out->h[i].value;
    return NULL;
}

static void page_reply(struct http_reply *rp, size_t len)
{
    memset(rp, 0, sizeof(*rp));
    char *json = malloc(len + 1);
    ck_assert_ptr_nonnull(json);
    memset(json, 'a', len);
    json[0] = '[';
    json[len - 1] = ']';
    json[len] = '\0';
    http_reply_json(rp, 200, json);
    http_reply_header(rp, "ETag", "\"v12\"");
}

START_TEST(gzip_page_and_its_etag)
{
    struct hdrs h = {{"Accept-Encoding"}, {"gzip"}};
    struct filter_request in = {.method = "GET", .header = lookup, .conn = &h};
    struct filters_seen seen = {.gzip_ok = 0};
    struct http_request rq = {.method = "GET"};
    filters_headers_in(&in, &seen, &rq);
    ck_assert_int_eq(seen.gzip_ok, 1);
    struct http_reply rp;
    page_reply(&rp, 4000);
    struct gzip_cache *gz = gzip_cache_new();
    struct filter_headers out = {0};
    ck_assert_int_eq(filters_reply(gz, &seen, "rid", &rp, &out), 1);
    ck_assert_uint_lt(rp.body.len, 4000);
    ck_assert_str_eq(filter_header_value(&out, rp.headers[0].value), "\"v12-gz\"");
    ck_assert_str_eq(out.h[0].name, "Content-Encoding");
    ck_assert_str_eq(out.h[1].name, "X-Request-Id");
    ck_assert_str_eq(out.h[2].name, "Vary"); /* one Vary header, last */
    ck_assert_str_eq(out.h[2].value, "Accept-Encoding");
    ck_assert_int_eq(out.n, 3); /* no CORS policy: no CORS headers */
    buf_free(&rp.body);
    gzip_cache_free(gz);
}
END_TEST

START_TEST(not_modified_names_the_form_asked)
{
    struct hdrs h = {{"Accept-Encoding"}, {"gzip, deflate"}};
    struct filter_request in = {.method = "GET", .header = lookup, .conn = &h};
    struct filters_seen seen = {.gzip_ok = 0};
    struct http_request rq = {.method = "GET", .if_none_match = "\"v12-gz\""};
    filters_headers_in(&in, &seen, &rq);
    ck_assert_str_eq(rq.if_none_match, "\"v12\""); /* what the handlers compare */
    struct http_reply rp = {.status = 304};
    http_reply_header(&rp, "ETag", "\"v12\"");
    struct filter_headers out = {0};
    ck_assert_int_eq(filters_reply(NULL, &seen, "rid", &rp, &out), 0);
    ck_assert_str_eq(filter_header_value(&out, rp.headers[0].value), "\"v12-gz\"");
    ck_assert_str_eq(added(&out, "Vary", 0), "Accept-Encoding");
    /* without gzip accepted, the "-gz" If-None-Match is passed as it is */
    struct hdrs none = {{NULL}, {NULL}};
    struct filters_seen seen2 = {.gzip_ok = 0};
    struct http_request rq2 = {.method = "GET", .if_none_match = "\"v12-gz\""};
    in.conn = &none;
    filters_headers_in(&in, &seen2, &rq2);
    ck_assert_str_eq(rq2.if_none_match, "\"v12-gz\"");
}
END_TEST

START_TEST(cors_preflight_and_read)
{
    struct cors policy;
    char err[200];
    ck_assert_int_eq(cors_parse("https://app.example", &policy, err, sizeof(err)), 0);
    struct filters_config cfg = {.cors = &policy};
    struct hdrs pre = {{"Origin", "Access-Control-Request-Method"}, {"https://app.example", "GET"}};
    struct filter_request in = {.method = "OPTIONS", .header = lookup, .conn = &pre};
    struct filters_seen seen = {.gzip_ok = 0};
    struct http_reply rp = {0};
    ck_assert_int_eq(filters_before_route(&cfg, &in, &seen, &rp), 1);
    ck_assert_int_eq(rp.status, 204);
    pre.value[1] = "POST";
    struct http_reply refused = {0};
    ck_assert_int_eq(filters_before_route(&cfg, &in, &seen, &refused), 1);
    ck_assert_int_eq(refused.status, 403);
    buf_free(&refused.body);
    /* a read from the origin: its headers after X-Request-Id, with Vary: Origin */
    struct hdrs get = {{"Origin"}, {"https://app.example"}};
    struct filter_request rd = {.method = "GET", .header = lookup, .conn = &get};
    struct filters_seen rs = {.gzip_ok = 0};
    struct http_reply ok = {0};
    ck_assert_int_eq(filters_before_route(&cfg, &rd, &rs, &ok), 0);
    ok.status = 204;
    struct filter_headers out = {0};
    filters_reply(NULL, &rs, "rid", &ok, &out);
    ck_assert_str_eq(out.h[0].name, "X-Request-Id");
    ck_assert_str_eq(added(&out, "Access-Control-Allow-Origin", 0), "https://app.example");
    ck_assert_str_eq(added(&out, "Vary", 0), "Origin");
}
END_TEST

/* A route that streams (ROUTE_EVENTS) varies on Accept: every reply of it (a gzipped page, a
 * 304, a stream) says Vary: Accept besides the gzip and CORS values, which stay; another route's
 * do not. All of them on one Vary header (before: one header per value, two or three). */
START_TEST(events_route_varies_on_accept)
{
    struct cors policy;
    char err[200];
    ck_assert_int_eq(cors_parse("https://app.example", &policy, err, sizeof(err)), 0);
    struct filters_config cfg = {.cors = &policy};
    struct hdrs h = {{"Accept-Encoding", "Origin"}, {"gzip", "https://app.example"}};
    struct filter_request in = {
        .method = "GET", .header = lookup, .conn = &h, .header_copies = copies};
    const struct route streams = {.method = "GET", .pattern = "/rank", .flags = ROUTE_EVENTS};
    const struct route plain = {.method = "GET", .pattern = "/boards/{board}"};
    struct gzip_cache *gz = gzip_cache_new();
    ck_assert_ptr_nonnull(gz);
    for (int status = 200; status <= 304; status += 104) {
        for (int r = 0; r < 2; r++) {
            struct filters_seen seen = {.gzip_ok = 0};
            struct http_request rq = {.method = "GET"};
            struct http_reply rp;
            filters_headers_in(&in, &seen, &rq);
            ck_assert_int_eq(filters_before_route(&cfg, &in, &seen, &rp), 0);
            ck_assert_int_eq(filters_route_found(&cfg, &in, r ? &plain : &streams, &seen, &rq, &rp),
                             0);
            page_reply(&rp, 4000);
            rp.status = status;
            struct filter_headers out = {0};
            filters_reply(gz, &seen, "rid", &rp, &out);
            ck_assert_str_eq(added(&out, "Vary", 0), r == 0 ? "Accept-Encoding, Accept, Origin"
                                                            : "Accept-Encoding, Origin");
            ck_assert_ptr_null(added(&out, "Vary", 1));
            ck_assert_str_eq(added(&out, "Access-Control-Allow-Origin", 0), "https://app.example");
            buf_free(&rp.body);
        }
    }
    gzip_cache_free(gz);
}
END_TEST

Suite *filters_suite(void)
{
    Suite *s = suite_create("filters");
    TCase *tc = tcase_create("chain");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, gzip_page_and_its_etag);
    tcase_add_test(tc, not_modified_names_the_form_asked);
    tcase_add_test(tc, cors_preflight_and_read);
    tcase_add_test(tc, events_route_varies_on_accept);
    suite_add_tcase(s, tc);
    return s;
}
