/* test_idem.c -- service/idem.h: the Idempotency-Key syntax, SHA-256 against FIPS 180-4's test
 * vectors, and the request digest (the same request however it is written; any other one not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "idem.h"
#include "json_number.h"
#include "suites.h"

static void sha_hex(const char *msg, size_t len, size_t chunk, char out[65])
{
    struct idem_sha256 s;
    idem_sha256_init(&s);
    for (size_t at = 0; at < len; at += chunk)
        idem_sha256_update(&s, msg + at, len - at < chunk ? len - at : chunk);
    unsigned char d[32];
    idem_sha256_final(&s, d);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

START_TEST(test_sha256_vectors)
{
    char h[65];
    sha_hex("", 0, 1, h);
    ck_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_hex("abc", 3, 1, h);
    ck_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (size_t chunk = 1; chunk <= 64; chunk *= 4) { /* the block split never matters */
        sha_hex(two, strlen(two), chunk, h);
        ck_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    char *million = malloc(1000000);
    ck_assert_ptr_nonnull(million);
    memset(million, 'a', 1000000);
    sha_hex(million, 1000000, 4099, h);
    ck_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
    /* 55, 56 and 64 bytes: the padding's edges (sha256sum of that many "a") */
    static const char *const edges[] = {
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"};
    static const size_t lens[] = {55, 56, 64};
    char buf[64];
    memset(buf, 'a', sizeof(buf));
    for (int i = 0; i < 3; i++) {
        sha_hex(buf, lens[i], 64, h);
        ck_assert_str_eq(h, edges[i]);
    }
}
END_TEST

START_TEST(test_key_syntax)
{
    char k[200];
    memset(k, 'x', sizeof(k));
    ck_assert(idem_key_valid(k, 1));
    ck_assert(idem_key_valid(k, 128));
    ck_assert(!idem_key_valid(k, 129));
    ck_assert(!idem_key_valid(k, 0));
    ck_assert(idem_key_valid("order-42:alice/{x}~", 19));
    ck_assert(!idem_key_valid("a b", 3));
    ck_assert(!idem_key_valid("a\tb", 3));
    ck_assert(!idem_key_valid("caf\xc3\xa9", 5));
    ck_assert(!idem_key_valid(NULL, 3));
}
END_TEST

static void entry_of(const char *text, struct entry_in *e)
{
    cJSON *doc = cJSON_Parse(text);
    ck_assert_ptr_nonnull(doc);
    size_t at = 0;
    ck_assert_int_eq(json_number_annotate(doc, text, strlen(text), &at), 0);
    struct entry_error err;
    ck_assert_msg(validate_entry(doc, e, &err) == 0, "%s: %s", text, err.msg);
    cJSON_Delete(doc);
}

static void digest_of(enum idem_shape shape, const char *text, char out[65])
{
    struct entry_in e;
    entry_of(text, &e);
    idem_digest(shape, NULL, 0, &e, 1, out);
    entry_free(&e);
}

START_TEST(test_digest_same_and_other)
{
    char a[65], b[65];
    digest_of(IDEM_ENTRY, "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\"}", a);
    ck_assert_uint_eq(strlen(a), 64);
    digest_of(IDEM_ENTRY, "{ \"op\":\"incr\", \"score\":25e-1, \"id\":\"a\" }", b);
    ck_assert_str_eq(a, b); /* the same request */
    digest_of(IDEM_ENTRY, "{\"id\":\"a\",\"score\":2.50,\"op\":\"incr\"}", b);
    ck_assert_str_eq(a, b);
    static const char *const others[] = {
        "{\"id\":\"a\",\"score\":2.5}",
        "{\"id\":\"a\",\"score\":-2.5,\"op\":\"incr\"}",
        "{\"id\":\"b\",\"score\":2.5,\"op\":\"incr\"}",
        "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\",\"floor\":0}",
        "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\",\"ceiling\":0}",
        "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\",\"record\":{}}",
        "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\",\"subscores\":[0]}",
        "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\",\"subscores\":[1,2]}",
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        digest_of(IDEM_ENTRY, others[i], b);
        ck_assert_msg(strcmp(a, b) != 0, "%s has the digest of another request", others[i]);
    }
    /* sub-scores count in order: [1,2] is not [2,1] nor [12] */
    char c[65];
    digest_of(IDEM_ENTRY, "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2]}", b);
    digest_of(IDEM_ENTRY, "{\"id\":\"a\",\"score\":1,\"subscores\":[2,1]}", c);
    ck_assert_str_ne(b, c);
    digest_of(IDEM_ENTRY, "{\"id\":\"a\",\"score\":1,\"subscores\":[12]}", c);
    ck_assert_str_ne(b, c);
    digest_of(IDEM_BATCH, "{\"id\":\"a\",\"score\":2.5,\"op\":\"incr\"}", b);
    ck_assert_str_ne(a, b); /* a batch of that one entry is another request */
    struct entry_in e;
    entry_of("{\"id\":\"a\",\"score\":1}", &e);
    const char *ab[] = {"x", "y"}, *ba[] = {"y", "x"}, *joined[] = {"xy"};
    idem_digest(IDEM_BOARDS, ab, 2, &e, 1, a);
    idem_digest(IDEM_BOARDS, ba, 2, &e, 1, b);
    ck_assert_str_ne(a, b);
    idem_digest(IDEM_BOARDS, joined, 1, &e, 1, b);
    ck_assert_str_ne(a, b); /* fields are length-prefixed: "x","y" is not "xy" */
    entry_free(&e);
}
END_TEST

Suite *idem_suite(void)
{
    Suite *s = suite_create("idem");
    TCase *tc = tcase_create("idem");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_sha256_vectors);
    tcase_add_test(tc, test_key_syntax);
    tcase_add_test(tc, test_digest_same_and_other);
    suite_add_tcase(s, tc);
    return s;
}
