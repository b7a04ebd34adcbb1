/* test_gzip.c -- Accept-Encoding parsing and the gzip round trip (zlib inflates it back). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <check.h>

#include "gzip.h"
#include "suites.h"

START_TEST(accepts)
{
    ck_assert_int_eq(gzip_accepted(NULL), 0);
    ck_assert_int_eq(gzip_accepted(""), 0);
    ck_assert_int_eq(gzip_accepted("gzip"), 1);
    ck_assert_int_eq(gzip_accepted("GZip"), 1);
    ck_assert_int_eq(gzip_accepted("x-gzip"), 1);
    ck_assert_int_eq(gzip_accepted("gzip, deflate, br"), 1);
    ck_assert_int_eq(gzip_accepted("br, gzip;q=0.5"), 1);
    ck_assert_int_eq(gzip_accepted("deflate , gzip ; q=1.0 "), 1);
    ck_assert_int_eq(gzip_accepted("br;q=1, gzip;q=0.001"), 1);
    ck_assert_int_eq(gzip_accepted("*"), 1);
    ck_assert_int_eq(gzip_accepted("br, *;q=0.1"), 1);
    ck_assert_int_eq(gzip_accepted("identity"), 0);
    ck_assert_int_eq(gzip_accepted("deflate, br"), 0);
    ck_assert_int_eq(gzip_accepted("gzipx"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=0"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=0.000"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=0, *"), 0); /* listed and refused: * does not undo it */
    ck_assert_int_eq(gzip_accepted("*;q=0"), 0);
    ck_assert_int_eq(gzip_accepted("*, gzip;q=0"), 0);
}
END_TEST

START_TEST(malformed_weights_refuse)
{
    ck_assert_int_eq(gzip_accepted("gzip;q="), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=2"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=1.5"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=0.1234"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;q=-1"), 0);
    ck_assert_int_eq(gzip_accepted("gzip;level=1"), 0);
    ck_assert_int_eq(gzip_accepted(",,gzip,,"), 1); /* empty list elements are allowed */
}
END_TEST

static void inflate_back(const struct buf *z, const char *want, size_t want_len)
{
    char *out = malloc(want_len + 16);
    ck_assert_ptr_nonnull(out);
    z_stream s;
    memset(&s, 0, sizeof(s));
    ck_assert_int_eq(inflateInit2(&s, 15 + 16), Z_OK); /* gzip only */
    s.next_in = (Bytef *)z->data;
    s.avail_in = (uInt)z->len;
    s.next_out = (Bytef *)out;
    s.avail_out = (uInt)(want_len + 16);
    ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(s.total_out, want_len);
    ck_assert_int_eq(memcmp(out, want, want_len), 0);
    inflateEnd(&s);
    free(out);
}

START_TEST(round_trip)
{
    struct buf page = {0};
    ck_assert_int_eq(buf_append(&page, "{\"items\":[", 10), 0);
    for (int i = 0; i < 100; i++) {
        char row[96];
        int n = snprintf(row, sizeof(row), "%s{\"rank\":%d,\"id\":\"player-%d\",\"score\":%d}",
                         i ? "," : "", i + 1, i * 7919 % 1000, 100000 - i * 13);
        ck_assert_int_eq(buf_append(&page, row, (size_t)n), 0);
    }
    ck_assert_int_eq(buf_append(&page, "]}", 2), 0);
    struct buf z = {0};
    ck_assert_int_eq(buf_append(&z, "prefix", 6), 0); /* appends after what is there */
    ck_assert_int_eq(gzip_compress(page.data, page.len, &z), 0);
    ck_assert_uint_lt(z.len, page.len / 3);
    ck_assert_int_eq(memcmp(z.data, "prefix\x1f\x8b", 8), 0); /* the gzip magic */
    struct buf only = {.data = z.data + 6, .len = z.len - 6};
    inflate_back(&only, page.data, page.len);
    buf_free(&z);
    struct buf e = {0}; /* an empty body is a valid member too */
    ck_assert_int_eq(gzip_compress("", 0, &e), 0);
    inflate_back(&e, "", 0);
    buf_free(&e);
    /* a kept stream gives the same bytes body after body (deflateReset between them) */
    struct gzip_stream *gs = gzip_stream_new(GZIP_LEVEL_FAST);
    ck_assert_ptr_nonnull(gs);
    for (int round = 0; round < 3; round++) {
        struct buf f = {0};
        ck_assert_int_eq(gzip_stream_compress(gs, page.data, page.len, &f), 0);
        inflate_back(&f, page.data, page.len);
        buf_free(&f);
    }
    gzip_stream_free(gs);
    buf_free(&page);
}
END_TEST

Suite *gzip_suite(void)
{
    Suite *s = suite_create("gzip");
    TCase *tc = tcase_create("gzip");
    tcase_add_test(tc, accepts);
    tcase_add_test(tc, malformed_weights_refuse);
    tcase_add_test(tc, round_trip);
    suite_add_tcase(s, tc);
    return s;
}
