/* test_page_values.c -- the page cache's values (page_cache.h): the header it writes before the
 * caller's bytes is read back exactly, anything else is a miss, and a value's soft expiry follows
 * a lowered TTL. No Redis: the bytes are the test's. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "page_cache.h"
#include "pages.h"
#include "suites.h"

START_TEST(test_parse)
{
    static const char v[] = "rankd3 17 42 10000 10850 40000 \"g17-00ff\"\n{\"a\":1}";
    struct page_cache_value e;
    ck_assert_int_eq(page_cache_value_parse(v, sizeof(v) - 1, &e), 0);
    ck_assert_int_eq(e.version, 17);
    ck_assert_int_eq(e.stamp, 42);
    ck_assert_int_eq(e.created_ms, 10000);
    ck_assert_int_eq(e.soft_ms, 10850);
    ck_assert_int_eq(e.delta_us, 40000);
    ck_assert_str_eq(e.tag, "\"g17-00ff\"");
    ck_assert_uint_eq(e.len, 7);
    ck_assert_int_eq(memcmp(e.data, "{\"a\":1}", 7), 0);
    /* empty bytes are a value too */
    static const char empty[] = "rankd3 -3 0 1 2 0 t\n";
    ck_assert_int_eq(page_cache_value_parse(empty, sizeof(empty) - 1, &e), 0);
    ck_assert_int_eq(e.version, -3);
    ck_assert_uint_eq(e.len, 0);
    /* a value an older rankd wrote (no stamp) reads as stamp 0 */
    static const char v2[] = "rankd2 17 10000 10850 40000 t\nx";
    ck_assert_int_eq(page_cache_value_parse(v2, sizeof(v2) - 1, &e), 0);
    ck_assert_int_eq(e.version, 17);
    ck_assert_int_eq(e.stamp, 0);
    ck_assert_int_eq(e.created_ms, 10000);
    ck_assert_int_eq(e.delta_us, 40000);
    /* the int64 bounds, 19 digits */
    static const char big[] = "rankd3 9223372036854775807 -9223372036854775808 1 2 3 t\n";
    ck_assert_int_eq(page_cache_value_parse(big, sizeof(big) - 1, &e), 0);
    ck_assert_int_eq(e.version, INT64_MAX);
    ck_assert_int_eq(e.stamp, INT64_MIN);
}
END_TEST

START_TEST(test_junk_is_a_miss)
{
    static const char *const junk[] = {
        "",
        "{\"a\":1}",                              /* no header */
        "rankd1 17 10000 10850 40 t\nx",          /* another format */
        "rankd2 17 10000 10850 40000 t",          /* no end of header */
        "rankd2 17 10000 10850 t\nx",             /* a number missing */
        "rankd3 17 10000 10850 40000 t\nx",       /* a rankd3 header without its stamp */
        "rankd2 17 10000 x 40000 t\nx",           /* not a number */
        "rankd2 17 10000 10850 40000 \nx",        /* no tag */
        "rankd2 17 10000 10850 40000 a b\nx",     /* a tag with a space */
        "rankd2 99999999999999999999 1 2 3 t\nx", /* out of range */
        "rankd2 9223372036854775808 1 2 3 t\nx",  /* INT64_MAX + 1 */
        "rankd2 9999999999999999999 1 2 3 t\nx",  /* 19 digits past INT64_MAX */
        "rankd2 18446744073709551616 1 2 3 t\nx", /* 2^64: would wrap a uint64_t */
        "rankd2 1 2 3 4\nx",                      /* the line ends in a number: no tag */
    };
    struct page_cache_value e;
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
        ck_assert_msg(page_cache_value_parse(junk[i], strlen(junk[i]), &e) == -EINVAL, "%s",
                      junk[i]);
    ck_assert_int_eq(page_cache_value_parse(NULL, 0, &e), -EINVAL);
    char tag[PAGE_CACHE_TAG_MAX + 40] = "rankd2 1 2 3 4 ";
    memset(tag + strlen(tag), 't', PAGE_CACHE_TAG_MAX);
    strcat(tag, "\nx");
    ck_assert_int_eq(page_cache_value_parse(tag, strlen(tag), &e), -EINVAL); /* tag too long */
}
END_TEST

START_TEST(test_soft_expiry)
{
    static const char v[] = "rankd3 1 5 10000 10850 40000 t\nx";
    struct page_cache_value e;
    ck_assert_int_eq(page_cache_value_parse(v, sizeof(v) - 1, &e), 0);
    ck_assert_int_eq(page_cache_soft_expiry(&e, 1000), 10850);
    ck_assert_int_eq(page_cache_soft_expiry(&e, 300), 10300); /* the TTL lowered since */
}
END_TEST

/* The ETag's hash as it was first written (a word a step): a page's ETag stays what clients and
 * other processes have seen for the same bytes, however the loop is written. */
static uint64_t etag_hash_reference(const char *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037) ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h ^ (h >> 32);
}

START_TEST(test_etag_stable)
{
    char body[300];
    for (size_t i = 0; i < sizeof(body); i++)
        body[i] = (char)(i * 131 + 7);
    for (size_t n = 0; n <= sizeof(body); n++) {
        char got[48], want[48];
        page_etag(42, body, n, got);
        snprintf(want, sizeof(want), "\"g42-%016" PRIx64 "\"", etag_hash_reference(body, n));
        ck_assert_str_eq(got, want);
    }
}
END_TEST

Suite *page_values_suite(void)
{
    Suite *s = suite_create("page_values");
    TCase *tc = tcase_create("values");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_junk_is_a_miss);
    tcase_add_test(tc, test_soft_expiry);
    tcase_add_test(tc, test_etag_stable);
    suite_add_tcase(s, tc);
    return s;
}
