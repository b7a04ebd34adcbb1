/* test_store_cluster.c -- the slot map from CLUSTER SLOTS and the redirect errors, and Sentinel's
 * replies (store_cluster.h). Replies are RESP bytes as redis-server 7.0.15 sent them, parsed by
 * hiredis' own reader. */
#include <errno.h>
#include <string.h>

#include "store_cluster.h"
#include "store_internal.h"
#include "store_sentinel.h"
#include "suites.h"

/* A reply from RESP bytes; the test fails when they are not one whole reply. */
static struct store_reply *resp(const char *bytes)
{
    redisReader *rd = redisReaderCreateWithFunctions(store_reply_functions());
    ck_assert_ptr_nonnull(rd);
    ck_assert_int_eq(redisReaderFeed(rd, bytes, strlen(bytes)), REDIS_OK);
    void *r = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &r), REDIS_OK);
    ck_assert_ptr_nonnull(r);
    redisReaderFree(rd);
    return r;
}

/* CLUSTER SLOTS of the 3-master, 3-replica cluster scripts/cluster-fixture.sh starts, as sent */
static const char k_slots[] =
    "*3\r\n"
    "*4\r\n:0\r\n:5460\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:11610\r\n$40\r\n54abfeb6e5b5a1f3ce95a7be6cd89ce05d8cdfe0\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:22651\r\n$40\r\nd5ae548566c35814a892eaef40778edfd319cb23\r\n*0\r\n"
    "*4\r\n:5461\r\n:10922\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:12461\r\n$40\r\nf30d8d3c7e493cb505c926821a8f2ae259187e72\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:15983\r\n$40\r\ncf3c4d64ca04d8639e2e32dd85148f15ab7db58f\r\n*0\r\n"
    "*4\r\n:10923\r\n:16383\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:16398\r\n$40\r\n914b8ce3bcaf7e7882b2eba8266c03e9d0bb76b6\r\n*0\r\n"
    "*4\r\n$9\r\n127.0.0.1\r\n:22453\r\n$40\r\nd70553d9878764f98e17a2cdd733e634d72cae2c\r\n*0\r\n";

START_TEST(test_map_from_cluster_slots)
{
    struct store_reply *r = resp(k_slots);
    struct store_cluster_map *m = NULL;
    ck_assert_int_eq(store_cluster_map_parse(r, "127.0.0.1", &m), 0);
    ck_assert_uint_eq(m->nnodes, 3); /* the masters only */
    ck_assert_uint_eq(m->covered, CRC16_SLOTS);
    ck_assert_int_eq(m->nodes[m->owner[0]].port, 11610);
    ck_assert_int_eq(m->nodes[m->owner[5460]].port, 11610);
    ck_assert_int_eq(m->nodes[m->owner[5461]].port, 12461);
    ck_assert_int_eq(m->nodes[m->owner[10922]].port, 12461);
    ck_assert_int_eq(m->nodes[m->owner[10923]].port, 16398);
    ck_assert_int_eq(m->nodes[m->owner[16383]].port, 16398);
    ck_assert_str_eq(m->nodes[m->owner[12182]].host, "127.0.0.1");
    ck_assert_int_eq(store_cluster_map_find(m, "127.0.0.1", 12461), (int)m->owner[6000]);
    ck_assert_int_eq(store_cluster_map_find(m, "127.0.0.1", 22651), -1); /* a replica */
    store_cluster_map_free(m);
    store_reply_free(r);
}
END_TEST

/* A master serving two ranges is one node; an empty host is the node that answered; a slot no
 * range covers has no owner. */
START_TEST(test_map_ranges_and_holes)
{
    struct store_reply *r = resp("*3\r\n"
                                 "*3\r\n:0\r\n:99\r\n*3\r\n$0\r\n\r\n:7000\r\n$2\r\nid\r\n"
                                 "*3\r\n:200\r\n:299\r\n*3\r\n$1\r\nb\r\n:7001\r\n$2\r\nix\r\n"
                                 "*3\r\n:300\r\n:300\r\n*3\r\n$0\r\n\r\n:7000\r\n$2\r\nid\r\n");
    struct store_cluster_map *m = NULL;
    ck_assert_int_eq(store_cluster_map_parse(r, "self", &m), 0);
    ck_assert_uint_eq(m->nnodes, 2);
    ck_assert_uint_eq(m->covered, 201);
    ck_assert_str_eq(m->nodes[m->owner[0]].host, "self");
    ck_assert_int_eq(m->owner[300], m->owner[0]);
    ck_assert_str_eq(m->nodes[m->owner[250]].host, "b");
    ck_assert_int_eq(m->owner[100], STORE_CLUSTER_NONE);
    ck_assert_int_eq(m->owner[16383], STORE_CLUSTER_NONE);
    store_cluster_map_free(m);
    store_reply_free(r);

    r = resp("*0\r\n"); /* a cluster with no slot assigned yet */
    ck_assert_int_eq(store_cluster_map_parse(r, "self", &m), 0);
    ck_assert_uint_eq(m->covered, 0);
    store_cluster_map_free(m);
    store_reply_free(r);
}
END_TEST

START_TEST(test_map_bad_replies)
{
    static const char *const bad[] = {
        "-ERR This instance has cluster support disabled\r\n",
        ":1\r\n",
        "*1\r\n:1\r\n",
        "*1\r\n*2\r\n:0\r\n:1\r\n",                                /* no master */
        "*1\r\n*3\r\n:5\r\n:4\r\n*2\r\n$1\r\na\r\n:1\r\n",         /* first > last */
        "*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\na\r\n:1\r\n",     /* past the last slot */
        "*1\r\n*3\r\n:-1\r\n:3\r\n*2\r\n$1\r\na\r\n:1\r\n",        /* negative */
        "*1\r\n*3\r\n:0\r\n:3\r\n*2\r\n$1\r\na\r\n:0\r\n",         /* port 0 */
        "*1\r\n*3\r\n:0\r\n:3\r\n*2\r\n$1\r\na\r\n:65536\r\n",     /* port too big */
        "*1\r\n*3\r\n:0\r\n:3\r\n*2\r\n$1\r\na\r\n$4\r\n7000\r\n", /* port as a string */
        "*1\r\n*3\r\n$1\r\n0\r\n:3\r\n*2\r\n$1\r\na\r\n:1\r\n",    /* slot as a string */
        "*1\r\n*3\r\n:0\r\n:3\r\n*1\r\n$1\r\na\r\n",               /* no port */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct store_reply *r = resp(bad[i]);
        struct store_cluster_map *m = NULL;
        ck_assert_msg(store_cluster_map_parse(r, "self", &m) == -EPROTO, "reply %zu accepted", i);
        ck_assert_ptr_null(m);
        store_reply_free(r);
    }
    struct store_cluster_map *m = NULL;
    ck_assert_int_eq(store_cluster_map_parse(NULL, "self", &m), -EPROTO);
}
END_TEST

static struct store_cluster_redirect redirect(const char *text, int kind)
{
    struct store_cluster_redirect rd;
    int got = store_cluster_redirect_parse(text, strlen(text), &rd);
    ck_assert_msg(got == kind && rd.kind == kind, "%s: kind %d, not %d", text, got, kind);
    return rd;
}

START_TEST(test_redirects)
{
    struct store_cluster_redirect rd = redirect("MOVED 3999 127.0.0.1:6381", STORE_CLUSTER_MOVED);
    ck_assert_int_eq(rd.slot, 3999);
    ck_assert_str_eq(rd.host, "127.0.0.1");
    ck_assert_int_eq(rd.port, 6381);

    rd = redirect("ASK 3999 127.0.0.1:6381", STORE_CLUSTER_ASK);
    ck_assert_int_eq(rd.slot, 3999);
    ck_assert_str_eq(rd.host, "127.0.0.1");
    ck_assert_int_eq(rd.port, 6381);

    rd = redirect("MOVED 16383 :7000", STORE_CLUSTER_MOVED); /* unknown endpoint: same host */
    ck_assert_int_eq(rd.slot, 16383);
    ck_assert_str_eq(rd.host, "");
    ck_assert_int_eq(rd.port, 7000);

    rd = redirect("MOVED 0 ::1:7000", STORE_CLUSTER_MOVED); /* IPv6: the port after the last ':' */
    ck_assert_int_eq(rd.slot, 0);
    ck_assert_str_eq(rd.host, "::1");

    rd = redirect("ASK 12 redis-2.example:6379", STORE_CLUSTER_ASK);
    ck_assert_str_eq(rd.host, "redis-2.example");

    rd =
        redirect("TRYAGAIN Multiple keys request during rehashing of slot", STORE_CLUSTER_TRYAGAIN);
    ck_assert_int_eq(rd.slot, -1);
    redirect("TRYAGAIN", STORE_CLUSTER_TRYAGAIN);
    redirect("CLUSTERDOWN The cluster is down", STORE_CLUSTER_DOWN);
    redirect("CLUSTERDOWN Hash slot not served", STORE_CLUSTER_DOWN);
    redirect("ERR unknown command", STORE_CLUSTER_OTHER);
    redirect("NOSCRIPT No matching script", STORE_CLUSTER_OTHER);
    redirect("READONLY You can't write against a read only replica.", STORE_CLUSTER_OTHER);
    redirect("MOVEDX 1 a:1", STORE_CLUSTER_OTHER);
    redirect("ASKING", STORE_CLUSTER_OTHER);
}
END_TEST

/* A malformed MOVED or ASK is an error for the caller, never a redirect to nowhere. */
START_TEST(test_redirects_malformed)
{
    static const char *const bad[] = {
        "MOVED",        "MOVED ",          "MOVED 1",          "MOVED 1 ",
        "MOVED x a:1",  "MOVED 16384 a:1", "MOVED 1 a",        "MOVED 1 a:",
        "MOVED 1 a:0",  "MOVED 1 a:65536", "MOVED 1 a:1x",     "MOVED 1 a:1 extra",
        "MOVED -1 a:1", "ASK 1",           "ASK 99999999 a:1", "MOVED 1 a:123456",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct store_cluster_redirect rd;
        ck_assert_msg(store_cluster_redirect_parse(bad[i], strlen(bad[i]), &rd) ==
                          STORE_CLUSTER_OTHER,
                      "\"%s\" taken as a redirect", bad[i]);
        ck_assert_int_eq(rd.kind, STORE_CLUSTER_OTHER);
        ck_assert_int_eq(rd.slot, -1);
        ck_assert_int_eq(rd.port, 0);
    }
    /* the length counts: a text cut before its port is no redirect */
    struct store_cluster_redirect rd;
    ck_assert_int_eq(store_cluster_redirect_parse("MOVED 1 a:1", 9, &rd), STORE_CLUSTER_OTHER);
}
END_TEST

/* ---------------------------------------------------------------- Sentinel */

START_TEST(test_sentinel_addr)
{
    char host[STORE_SENTINEL_HOST_MAX];
    int port = 0;
    struct store_reply *r = resp("*2\r\n$9\r\n127.0.0.1\r\n$5\r\n26380\r\n");
    ck_assert_int_eq(store_sentinel_parse_addr(r, host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 26380);
    store_reply_free(r);
    r = resp("*-1\r\n"); /* a name the sentinel does not monitor */
    ck_assert_int_eq(store_sentinel_parse_addr(r, host, sizeof(host), &port), -ENOENT);
    store_reply_free(r);
    static const char *const bad[] = {
        "-ERR unknown command\r\n",         "*1\r\n$1\r\na\r\n",
        "*2\r\n$1\r\na\r\n$1\r\nx\r\n",     "*2\r\n$1\r\na\r\n$1\r\n0\r\n",
        "*2\r\n$1\r\na\r\n$5\r\n65536\r\n", "*2\r\n$0\r\n\r\n$1\r\n1\r\n",
        "*2\r\n$1\r\na\r\n:1\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = resp(bad[i]);
        ck_assert_msg(store_sentinel_parse_addr(r, host, sizeof(host), &port) == -EPROTO,
                      "reply %zu accepted", i);
        store_reply_free(r);
    }
}
END_TEST

START_TEST(test_sentinel_switch_message)
{
    char host[STORE_SENTINEL_HOST_MAX];
    int port = 0;
    const char *m = "mymaster 127.0.0.1 6379 127.0.0.1 6380";
    ck_assert_int_eq(
        store_sentinel_parse_switch(m, strlen(m), "mymaster", host, sizeof(host), &port), 1);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 6380);
    ck_assert_int_eq(store_sentinel_parse_switch(m, strlen(m), "other", host, sizeof(host), &port),
                     0);
    static const char *const bad[] = {"mymaster 127.0.0.1 6379 127.0.0.1",
                                      "mymaster 127.0.0.1 6379 127.0.0.1 0",
                                      "mymaster 127.0.0.1 6379 127.0.0.1 6380 extra", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(store_sentinel_parse_switch(bad[i], strlen(bad[i]), "mymaster", host,
                                                  sizeof(host), &port) == -EPROTO,
                      "\"%s\" accepted", bad[i]);
}
END_TEST

Suite *store_cluster_suite(void)
{
    Suite *s = suite_create("store_cluster");
    TCase *tc = tcase_create("slot_map");
    tcase_add_test(tc, test_map_from_cluster_slots);
    tcase_add_test(tc, test_map_ranges_and_holes);
    tcase_add_test(tc, test_map_bad_replies);
    suite_add_tcase(s, tc);
    tc = tcase_create("redirects");
    tcase_add_test(tc, test_redirects);
    tcase_add_test(tc, test_redirects_malformed);
    suite_add_tcase(s, tc);
    tc = tcase_create("sentinel");
    tcase_add_test(tc, test_sentinel_addr);
    tcase_add_test(tc, test_sentinel_switch_message);
    suite_add_tcase(s, tc);
    return s;
}
