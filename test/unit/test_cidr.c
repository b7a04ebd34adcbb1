/* test_cidr.c -- address blocks and the client behind trusted proxies (cidr.h). */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "cidr.h"
#include "suites.h"

static int in(const struct cidr_list *l, const char *addr)
{
    uint8_t a[16];
    ck_assert_int_eq(cidr_addr_parse(addr, strlen(addr), a), 0);
    return cidr_match(l, a);
}

START_TEST(test_cidr_parse_and_match)
{
    struct cidr_list l;
    char why[200];
    ck_assert_int_eq(cidr_parse_list("", &l, why, sizeof(why)), 0);
    ck_assert_int_eq(l.n, 0);
    ck_assert(!in(&l, "127.0.0.1"));
    ck_assert_int_eq(
        cidr_parse_list("10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1,172.16.5.9/12", &l, why, sizeof(why)),
        0);
    ck_assert_int_eq(l.n, 5);
    ck_assert(in(&l, "10.255.1.2") && !in(&l, "11.0.0.1"));
    ck_assert(in(&l, "192.0.2.7") && !in(&l, "192.0.2.8"));
    ck_assert(in(&l, "fd12::5") && !in(&l, "fe80::1"));
    ck_assert(in(&l, "::1") && !in(&l, "::2"));
    ck_assert(in(&l, "172.31.0.1") && !in(&l, "172.32.0.1")); /* host bits of the block dropped */
    ck_assert(in(&l, "::ffff:10.1.2.3"));                     /* IPv4 on an IPv6 socket */
    const char *bad[] = {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x",
                         "example.com", "10.0.0", ",",         "1.2.3.4,,"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(cidr_parse_list(bad[i], &l, why, sizeof(why)) == -EINVAL, "%s", bad[i]);
        ck_assert_msg(strstr(why, "not an address block"), "%s: %s", bad[i], why);
    }
}
END_TEST

/* The client: the peer, unless the peer is a trusted proxy; then the right-most address of
 * X-Forwarded-For that is not itself trusted. */
START_TEST(test_cidr_client)
{
    struct cidr_list t;
    char why[200], out[CIDR_ADDR_MAX];
    ck_assert_int_eq(cidr_parse_list("127.0.0.0/8,10.0.0.0/8", &t, why, sizeof(why)), 0);
    cidr_client("192.0.2.1", "203.0.113.9", &t, out); /* not a proxy: its header is ignored */
    ck_assert_str_eq(out, "192.0.2.1");
    cidr_client("127.0.0.1", NULL, &t, out);
    ck_assert_str_eq(out, "127.0.0.1");
    cidr_client("127.0.0.1", "203.0.113.9", &t, out);
    ck_assert_str_eq(out, "203.0.113.9");
    cidr_client("127.0.0.1", "198.51.100.1, 203.0.113.9", &t, out); /* the left one is forged */
    ck_assert_str_eq(out, "203.0.113.9");
    cidr_client("::ffff:127.0.0.1", "203.0.113.9 , 10.1.1.1", &t, out); /* two proxies */
    ck_assert_str_eq(out, "203.0.113.9");
    cidr_client("127.0.0.1", "10.0.0.2,10.0.0.3", &t, out); /* all trusted: the left-most */
    ck_assert_str_eq(out, "10.0.0.2");
    cidr_client("127.0.0.1", "203.0.113.9, junk", &t, out); /* not an address: the proxy */
    ck_assert_str_eq(out, "127.0.0.1");
    cidr_client("127.0.0.1", "2001:db8::1", &t, out);
    ck_assert_str_eq(out, "2001:db8::1");
    cidr_client("::ffff:192.0.2.1", NULL, NULL, out);
    ck_assert_str_eq(out, "192.0.2.1");
    cidr_client(NULL, "203.0.113.9", &t, out);
    ck_assert_str_eq(out, "-");
}
END_TEST

Suite *cidr_suite(void)
{
    Suite *s = suite_create("cidr");
    TCase *tc = tcase_create("cidr");
    tcase_add_test(tc, test_cidr_parse_and_match);
    tcase_add_test(tc, test_cidr_client);
    suite_add_tcase(s, tc);
    return s;
}
