/* test_peer_count.c -- open connections per client address (peer_count.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "peer_count.h"
#include "suites.h"

/* sa as a peer's address: an IPv4 or IPv6 literal. */
static const struct sockaddr *peer(struct sockaddr_storage *ss, const char *text)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *v4 = (struct sockaddr_in *)(void *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)(void *)ss;
    if (inet_pton(AF_INET, text, &v4->sin_addr) == 1)
        v4->sin_family = AF_INET;
    else {
        ck_assert_int_eq(inet_pton(AF_INET6, text, &v6->sin6_addr), 1);
        v6->sin6_family = AF_INET6;
    }
    return (const struct sockaddr *)ss;
}

START_TEST(test_peer_count_limit)
{
    struct sockaddr_storage a, b, c, m;
    struct peer_count *t = peer_count_new(2);
    ck_assert_ptr_nonnull(t);
    peer(&a, "192.0.2.7");
    peer(&b, "192.0.2.8");
    peer(&c, "2001:db8::7");
    peer(&m, "::ffff:192.0.2.7"); /* the IPv4 address in IPv6 form: counted apart */
    const struct sockaddr *sa = (const void *)&a, *sb = (const void *)&b, *sc = (const void *)&c,
                          *sm = (const void *)&m;
    ck_assert_int_eq(peer_count_take(t, sa), 0);
    ck_assert_int_eq(peer_count_take(t, sa), 0);
    ck_assert_int_eq(peer_count_take(t, sa), -1); /* the third from one address */
    ck_assert_int_eq(peer_count_open(t, sa), 2);  /* the refused one not counted */
    ck_assert_int_eq(peer_count_take(t, sb), 0);  /* another address has its own 2 */
    ck_assert_int_eq(peer_count_take(t, sc), 0);
    ck_assert_int_eq(peer_count_take(t, sc), 0);
    ck_assert_int_eq(peer_count_take(t, sc), -1);
    ck_assert_int_eq(peer_count_take(t, sm), 0);
    ck_assert_int_eq(peer_count_open(t, sm), 1);
    peer_count_give(t, sa);
    ck_assert_int_eq(peer_count_open(t, sa), 1);
    ck_assert_int_eq(peer_count_take(t, sa), 0); /* a closed one frees a place */
    peer_count_give(t, sa);
    peer_count_give(t, sa);
    ck_assert_int_eq(peer_count_open(t, sa), 0); /* its entry gone */
    peer_count_give(t, sa);                      /* a give with nothing open: no effect */
    ck_assert_int_eq(peer_count_open(t, sa), 0);
    ck_assert_int_eq(peer_count_take(t, sa), 0);
    ck_assert_int_eq(peer_count_open(t, sb), 1);
    peer_count_free(t); /* entries left open are freed (ASan checks) */
}
END_TEST

START_TEST(test_peer_count_unlimited)
{
    struct sockaddr_storage a;
    const struct sockaddr *sa = peer(&a, "192.0.2.7");
    struct peer_count *t = peer_count_new(0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(peer_count_take(t, sa), 0);
    ck_assert_int_eq(peer_count_open(t, sa), 0); /* nothing kept */
    peer_count_give(t, sa);
    struct sockaddr unix_peer = {.sa_family = AF_UNIX};
    peer_count_free(t);
    t = peer_count_new(1);
    ck_assert_int_eq(peer_count_take(t, &unix_peer), 0); /* other families: not counted */
    ck_assert_int_eq(peer_count_take(t, &unix_peer), 0);
    ck_assert_int_eq(peer_count_take(t, NULL), 0);
    peer_count_free(t);
    peer_count_free(NULL);
}
END_TEST

/* Many addresses share the 256 buckets: each keeps its own count, and giving one back unlinks
 * only its entry from a bucket's chain. */
START_TEST(test_peer_count_many)
{
    struct peer_count *t = peer_count_new(1);
    struct sockaddr_storage ss;
    char text[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(text, sizeof(text), "10.%d.%d.1", i / 256, i % 256);
        ck_assert_int_eq(peer_count_take(t, peer(&ss, text)), 0);
    }
    for (int i = 0; i < 2000; i += 2) {
        snprintf(text, sizeof(text), "10.%d.%d.1", i / 256, i % 256);
        peer_count_give(t, peer(&ss, text));
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(text, sizeof(text), "10.%d.%d.1", i / 256, i % 256);
        ck_assert_int_eq(peer_count_open(t, peer(&ss, text)), i % 2);
        ck_assert_int_eq(peer_count_take(t, peer(&ss, text)), i % 2 ? -1 : 0);
    }
    peer_count_free(t);
}
END_TEST

Suite *peer_count_suite(void)
{
    Suite *s = suite_create("peer_count");
    TCase *tc = tcase_create("peer_count");
    tcase_add_test(tc, test_peer_count_limit);
    tcase_add_test(tc, test_peer_count_unlimited);
    tcase_add_test(tc, test_peer_count_many);
    suite_add_tcase(s, tc);
    return s;
}
