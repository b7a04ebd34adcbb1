/* test_crc16.c -- CRC16/XMODEM and key slots (crc16.h): the specification's vectors, and slots
 * checked against redis-server 7.0.15's own CLUSTER KEYSLOT. */
#include <string.h>

#include "crc16.h"
#include "suites.h"

START_TEST(test_crc16_check_value)
{
    /* the specification's "Output for 123456789: 31C3" (cluster-spec, Keys distribution model) */
    ck_assert_uint_eq(crc16("123456789", 9), 0x31C3);
    ck_assert_uint_eq(crc16("", 0), 0);
    ck_assert_uint_eq(crc16("\0", 1), 0); /* a zero byte into a zero register */
}
END_TEST

static int slot(const char *key)
{
    return crc16_key_slot(key, strlen(key));
}

START_TEST(test_crc16_hash_tags)
{
    /* the specification's examples (Hash tags) */
    ck_assert_int_eq(slot("{user1000}.following"), slot("{user1000}.followers"));
    ck_assert_int_eq(slot("{user1000}.following"), slot("user1000"));
    ck_assert_int_eq(slot("foo{}{bar}"), crc16("foo{}{bar}", 10) & 16383); /* the whole key */
    ck_assert_int_eq(slot("foo{{bar}}zap"), slot("{bar"));
    ck_assert_int_eq(slot("foo{bar}{zap}"), slot("bar"));
    /* no '}' after the '{', or a '}' only before it: the whole key */
    ck_assert_int_eq(slot("a{b"), crc16("a{b", 3) & 16383);
    ck_assert_int_eq(slot("a}b{c}"), slot("c"));
    /* binary keys: the length counts, not a NUL */
    ck_assert_int_eq(crc16_key_slot("{a\0b}x", 6), crc16("a\0b", 3) & 16383);
}
END_TEST

START_TEST(test_crc16_matches_redis)
{
    /* CLUSTER KEYSLOT of each, asked of redis-server 7.0.15 with --cluster-enabled yes */
    static const struct {
        const char *key;
        int slot;
    } v[] = {
        {"somekey", 11058},
        {"foo", 12182},
        {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443},
        {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015},
        {"foo{bar}{zap}", 5061},
        {"rankd:{cities}:z", 5901},
        {"rankd:{cities}:meta", 5901},
        {"rankd:boards", 10942},
        {"rankd:items", 3673},
        {"{", 4092},
        {"}", 12090},
        {"{}", 15257},
        {"a{b", 13340},
        {"a}b{c}", 7365},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        ck_assert_msg(slot(v[i].key) == v[i].slot, "%s: %d, Redis says %d", v[i].key,
                      slot(v[i].key), v[i].slot);
}
END_TEST

Suite *crc16_suite(void)
{
    Suite *s = suite_create("crc16");
    TCase *tc = tcase_create("slots");
    tcase_add_test(tc, test_crc16_check_value);
    tcase_add_test(tc, test_crc16_hash_tags);
    tcase_add_test(tc, test_crc16_matches_redis);
    suite_add_tcase(s, tc);
    return s;
}
