/* test_store_reply.c -- store_reply objects as hiredis 0.14's reader builds them with the store's
 * reply functions (store_internal.h), from RESP bytes fed here: every type, nesting, arrays
 * whose elements outgrow the root's first block, a string bigger than a block, replies fed a
 * byte at a time, a protocol error in the middle of an array (freed whole: ASan's leak check in
 * make sanitize), and the error table. No Redis: the bytes are the test's. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

static redisReader *reader(void)
{
    redisReader *r = redisReaderCreateWithFunctions(store_reply_functions());
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Feed `resp` whole and take one reply (which must be complete). */
static struct store_reply *parse(redisReader *rd, const char *resp, size_t len)
{
    ck_assert_int_eq(redisReaderFeed(rd, resp, len), REDIS_OK);
    void *out = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_OK);
    ck_assert_ptr_nonnull(out);
    return out;
}

static struct store_reply *parse_str(redisReader *rd, const char *resp)
{
    return parse(rd, resp, strlen(resp));
}

START_TEST(test_scalars)
{
    redisReader *rd = reader();
    struct store_reply *r = parse_str(rd, "+OK\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_STATUS);
    ck_assert_str_eq(r->str, "OK");
    ck_assert_uint_eq(r->len, 2);
    store_reply_free(r);

    r = parse_str(rd, "-OOM command not allowed\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_ERROR);
    ck_assert_str_eq(r->str, "OOM command not allowed");
    ck_assert_int_eq(store_reply_errno(r), -EDQUOT);
    store_reply_free(r);

    r = parse_str(rd, ":-42\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_INTEGER);
    ck_assert_int_eq(r->integer, -42);
    ck_assert_ptr_null(r->str);
    ck_assert_int_eq(store_reply_errno(r), 0);
    store_reply_free(r);

    r = parse(rd, "$5\r\na\0b\r\n\r\n", 11); /* binary-safe, NUL-terminated after len */
    ck_assert_int_eq(r->type, STORE_REPLY_STRING);
    ck_assert_uint_eq(r->len, 5);
    ck_assert_int_eq(memcmp(r->str, "a\0b\r\n", 6), 0);
    ck_assert_int_eq(r->integer, 0);
    store_reply_free(r);

    r = parse_str(rd, "$-1\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_NIL);
    ck_assert_ptr_null(r->str);
    ck_assert_uint_eq(r->len, 0);
    store_reply_free(r);

    r = parse_str(rd, "*-1\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_NIL);
    store_reply_free(r);

    r = parse_str(rd, "*0\r\n");
    ck_assert_int_eq(r->type, STORE_REPLY_ARRAY);
    ck_assert_uint_eq(r->elements, 0);
    store_reply_free(r);
    store_reply_free(NULL);
    redisReaderFree(rd);
}
END_TEST

START_TEST(test_nested)
{
    redisReader *rd = reader();
    /* page.lua's shape: settings, total, size, range (id, score pairs), records with a nil */
    const char *resp = "*5\r\n*4\r\n$5\r\norder\r\n$4\r\ndesc\r\n$3\r\ngen\r\n$2\r\n17\r\n"
                       ":3\r\n:20\r\n*4\r\n$1\r\na\r\n$2\r\n10\r\n$1\r\nb\r\n$1\r\n9\r\n"
                       "*2\r\n$7\r\n{\"x\":1}\r\n$-1\r\n";
    struct store_reply *r = parse_str(rd, resp);
    ck_assert_int_eq(r->type, STORE_REPLY_ARRAY);
    ck_assert_uint_eq(r->elements, 5);
    const struct store_reply *set = r->element[0];
    ck_assert_int_eq(set->type, STORE_REPLY_ARRAY);
    ck_assert_uint_eq(set->elements, 4);
    ck_assert_str_eq(set->element[1]->str, "desc");
    ck_assert_str_eq(set->element[3]->str, "17");
    ck_assert_int_eq(r->element[1]->type, STORE_REPLY_INTEGER);
    ck_assert_int_eq(r->element[1]->integer, 3);
    ck_assert_int_eq(r->element[2]->integer, 20);
    const struct store_reply *range = r->element[3];
    ck_assert_uint_eq(range->elements, 4);
    ck_assert_str_eq(range->element[2]->str, "b");
    const struct store_reply *recs = r->element[4];
    ck_assert_int_eq(recs->element[0]->type, STORE_REPLY_STRING);
    ck_assert_str_eq(recs->element[0]->str, "{\"x\":1}");
    ck_assert_int_eq(recs->element[1]->type, STORE_REPLY_NIL);
    ck_assert_uint_eq(set->element[0]->elements, 0); /* not an array */
    ck_assert_ptr_null(set->element[0]->element);
    store_reply_free(r);
    redisReaderFree(rd);
}
END_TEST

/* An array of n strings of `bytes` bytes each ("s<i>" padded with 'x'), as RESP. */
static char *big_array(int n, size_t bytes, size_t *len)
{
    size_t cap = (size_t)n * (bytes + 32) + 32, at = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    at += (size_t)snprintf(out, cap, "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        at += (size_t)snprintf(out + at, cap - at, "$%zu\r\n", bytes);
        int w = snprintf(out + at, cap - at, "s%d", i);
        memset(out + at + w, 'x', bytes - (size_t)w);
        at += bytes;
        memcpy(out + at, "\r\n", 2);
        at += 2;
    }
    *len = at;
    return out;
}

START_TEST(test_many_blocks)
{
    redisReader *rd = reader();
    size_t len = 0;
    /* 5000 strings of 100 bytes: ~750 KB of objects, far past the root's first block and the
     * 64 KiB block cap */
    char *resp = big_array(5000, 100, &len);
    struct store_reply *r = parse(rd, resp, len);
    ck_assert_uint_eq(r->elements, 5000);
    for (size_t i = 0; i < r->elements; i++) {
        char want[16];
        int w = snprintf(want, sizeof(want), "s%zu", i);
        ck_assert_uint_eq(r->element[i]->len, 100);
        ck_assert_int_eq(memcmp(r->element[i]->str, want, (size_t)w), 0);
        ck_assert_int_eq(r->element[i]->str[99], 'x');
        ck_assert_int_eq(r->element[i]->str[100], '\0');
        ck_assert_uint_eq((uintptr_t)r->element[i] % _Alignof(struct store_reply), 0);
    }
    store_reply_free(r);
    free(resp);
    redisReaderFree(rd);
}
END_TEST

START_TEST(test_big_element)
{
    redisReader *rd = reader();
    size_t len = 0;
    /* three strings of 200 KB: each bigger than a block, each in a block of its own */
    char *resp = big_array(3, 200 * 1000, &len);
    struct store_reply *r = parse(rd, resp, len);
    ck_assert_uint_eq(r->elements, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(r->element[i]->len, 200 * 1000);
        ck_assert_int_eq(r->element[i]->str[0], 's');
        ck_assert_int_eq(r->element[i]->str[200 * 1000 - 1], 'x');
    }
    store_reply_free(r);
    free(resp);
    /* and a top-level string of 1 MB */
    size_t n = 1000 * 1000;
    char *big = malloc(n + 32);
    ck_assert_ptr_nonnull(big);
    int h = snprintf(big, 32, "$%zu\r\n", n);
    memset(big + h, 'y', n);
    memcpy(big + h + n, "\r\n", 2);
    r = parse(rd, big, (size_t)h + n + 2);
    ck_assert_uint_eq(r->len, n);
    ck_assert_int_eq(r->str[n - 1], 'y');
    ck_assert_int_eq(r->str[n], '\0');
    store_reply_free(r);
    free(big);
    redisReaderFree(rd);
}
END_TEST

START_TEST(test_byte_at_a_time)
{
    redisReader *rd = reader();
    const char *resp = "*3\r\n*2\r\n:1\r\n$3\r\nabc\r\n$-1\r\n+QUEUED\r\n";
    void *out = NULL;
    size_t n = strlen(resp);
    for (size_t i = 0; i + 1 < n; i++) {
        ck_assert_int_eq(redisReaderFeed(rd, resp + i, 1), REDIS_OK);
        ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_OK);
        ck_assert_ptr_null(out); /* not complete yet */
    }
    struct store_reply *r = parse(rd, resp + n - 1, 1);
    ck_assert_uint_eq(r->elements, 3);
    ck_assert_int_eq(r->element[0]->element[0]->integer, 1);
    ck_assert_str_eq(r->element[0]->element[1]->str, "abc");
    ck_assert_int_eq(r->element[1]->type, STORE_REPLY_NIL);
    ck_assert_str_eq(r->element[2]->str, "QUEUED");
    store_reply_free(r);
    redisReaderFree(rd);
}
END_TEST

START_TEST(test_error_mid_array)
{
    redisReader *rd = reader();
    /* a partial array, then a byte no RESP type starts with: the reader frees what it built */
    const char *resp = "*3\r\n$3\r\nabc\r\n*2\r\n:1\r\n!bad\r\n";
    ck_assert_int_eq(redisReaderFeed(rd, resp, strlen(resp)), REDIS_OK);
    void *out = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_ERR);
    ck_assert_ptr_null(out);
    redisReaderFree(rd);
    /* a reader freed with a reply half read frees it too */
    rd = reader();
    const char *half = "*2\r\n$3\r\nabc\r\n*5\r\n:1\r\n";
    ck_assert_int_eq(redisReaderFeed(rd, half, strlen(half)), REDIS_OK);
    ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_OK);
    ck_assert_ptr_null(out);
    redisReaderFree(rd);
}
END_TEST

START_TEST(test_error_table)
{
    static const struct {
        const char *resp;
        int rc;
    } rows[] = {
        {"-OOM command not allowed when used memory > 'maxmemory'.\r\n", -EDQUOT},
        {"-READONLY You can't write against a read only replica.\r\n", -EROFS},
        {"-LOADING Redis is loading the dataset in memory\r\n", -EIO},
        {"-ERR user_script:1: Script attempted to access a non local key\r\n", -EIO},
        {"+OOM\r\n", 0}, /* a status, not an error */
        {"$3\r\nOOM\r\n", 0},
    };
    redisReader *rd = reader();
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct store_reply *r = parse_str(rd, rows[i].resp);
        ck_assert_int_eq(store_reply_errno(r), rows[i].rc);
        store_reply_free(r);
    }
    /* an error inside an array (a Lua script's {err=...} element): the element's own */
    struct store_reply *r = parse_str(rd, "*2\r\n:1\r\n-READONLY replica\r\n");
    ck_assert_int_eq(store_reply_errno(r), 0);
    ck_assert_int_eq(store_reply_errno(r->element[1]), -EROFS);
    store_reply_free(r);
    ck_assert_int_eq(store_reply_errno(NULL), 0);
    redisReaderFree(rd);
}
END_TEST

Suite *store_reply_suite(void)
{
    Suite *s = suite_create("store_reply");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_scalars);
    tcase_add_test(tc, test_nested);
    tcase_add_test(tc, test_many_blocks);
    tcase_add_test(tc, test_big_element);
    tcase_add_test(tc, test_byte_at_a_time);
    tcase_add_test(tc, test_error_mid_array);
    tcase_add_test(tc, test_error_table);
    suite_add_tcase(s, tc);
    return s;
}
