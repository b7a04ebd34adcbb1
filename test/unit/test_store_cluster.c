/* test_store_cluster.c -- the slot map from CLUSTER SLOTS and the redirect errors, and Sentinel's
 * replies (store_cluster.h). Replies are RESP bytes as redis-server 7.0.15 sent them, parsed by
 * hiredis' own reader. */
#include <errno.h>
#include <string.h>

#include "store_cluster.h"
#include "store_internal.h"
#include "store_replicas.h"
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

/* The replicas of each range, for --read-from-replicas: one each in the fixture's map, kept
 * apart from the masters; a MOVED that gives a slot another master forgets that slot's replicas
 * (they were the old master's), a copy keeps them. */
START_TEST(test_map_replicas)
{
    struct store_reply *r = resp(k_slots);
    struct store_cluster_map *m = NULL;
    ck_assert_int_eq(store_cluster_map_parse(r, "127.0.0.1", &m), 0);
    ck_assert_uint_eq(m->nreplicas, 3);
    ck_assert_uint_eq(m->nsets, 3);
    const int slot[] = {0, 5460, 5461, 10922, 10923, 16383},
              want[] = {22651, 22651, 15983, 15983, 22453, 22453};
    for (size_t i = 0; i < sizeof(slot) / sizeof(slot[0]); i++) {
        const struct store_cluster_set *set = store_cluster_map_replicas(m, slot[i]);
        ck_assert_ptr_nonnull(set);
        ck_assert_int_eq(set->n, 1);
        ck_assert_int_eq(m->replicas[set->node[0]].port, want[i]);
        ck_assert_str_eq(m->replicas[set->node[0]].host, "127.0.0.1");
    }
    ck_assert_ptr_null(store_cluster_map_replicas(m, -1));
    ck_assert_ptr_null(store_cluster_map_replicas(m, CRC16_SLOTS));
    struct store_cluster_map *c = store_cluster_map_copy(m);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->replicas[store_cluster_map_replicas(c, 7000)->node[0]].port, 15983);
    /* the same master again: its replicas stay; another master: the slot has none known */
    ck_assert_int_eq(store_cluster_map_set(c, 7000, "127.0.0.1", 12461), 0);
    ck_assert_ptr_nonnull(store_cluster_map_replicas(c, 7000));
    ck_assert_int_eq(store_cluster_map_set(c, 7000, "127.0.0.1", 16398), 0);
    ck_assert_ptr_null(store_cluster_map_replicas(c, 7000));
    ck_assert_ptr_nonnull(store_cluster_map_replicas(c, 7001));
    ck_assert_ptr_nonnull(store_cluster_map_replicas(m, 7000)); /* the original is untouched */
    store_cluster_map_free(c);
    store_cluster_map_free(m);
    store_reply_free(r);

    /* a range without replicas (Redis 7.0 leaves out failed ones and ones that replicated
     * nothing yet), and one with more than STORE_CLUSTER_REPLICAS_MAX */
    r = resp("*2\r\n"
             "*3\r\n:0\r\n:9\r\n*2\r\n$1\r\na\r\n:1\r\n"
             "*8\r\n:10\r\n:19\r\n*2\r\n$1\r\nb\r\n:1\r\n*2\r\n$1\r\nr\r\n:1\r\n"
             "*2\r\n$1\r\nr\r\n:2\r\n*2\r\n$1\r\nr\r\n:3\r\n*2\r\n$1\r\nr\r\n:4\r\n"
             "*2\r\n$1\r\nr\r\n:5\r\n");
    ck_assert_int_eq(store_cluster_map_parse(r, "self", &m), 0);
    ck_assert_ptr_null(store_cluster_map_replicas(m, 5));
    const struct store_cluster_set *set = store_cluster_map_replicas(m, 15);
    ck_assert_ptr_nonnull(set);
    ck_assert_int_eq(set->n, STORE_CLUSTER_REPLICAS_MAX);
    ck_assert_int_eq(m->replicas[set->node[STORE_CLUSTER_REPLICAS_MAX - 1]].port,
                     STORE_CLUSTER_REPLICAS_MAX);
    store_cluster_map_free(m);
    store_reply_free(r);
    r = resp("*1\r\n*4\r\n:0\r\n:9\r\n*2\r\n$1\r\na\r\n:1\r\n*2\r\n$1\r\nb\r\n:0\r\n");
    ck_assert_int_eq(store_cluster_map_parse(r, "self", &m), -EPROTO); /* a replica's port 0 */
    store_reply_free(r);
    /* a replica of unknown endpoint ("" or "?") is not read from; the master's "" is the node
     * that answered */
    r = resp("*1\r\n*5\r\n:0\r\n:9\r\n*2\r\n$0\r\n\r\n:1\r\n*2\r\n$0\r\n\r\n:2\r\n"
             "*2\r\n$1\r\n?\r\n:3\r\n");
    ck_assert_int_eq(store_cluster_map_parse(r, "self", &m), 0);
    ck_assert_str_eq(m->nodes[m->owner[0]].host, "self");
    ck_assert_ptr_null(store_cluster_map_replicas(m, 0));
    ck_assert_uint_eq(m->nreplicas, 0);
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

/* SENTINEL REPLICAS as redis-server 7.0.15's sentinel sent it (one replica), and its healthy
 * replicas: flags without s_down, o_down, disconnected, promoted, and the link to the primary
 * ok. */
static const char k_replica_fmt[] =
    "*42\r\n$4\r\nname\r\n$15\r\n127.0.0.1:%5d\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$4\r\nport"
    "\r\n$5\r\n%5d\r\n$5\r\nrunid\r\n$40\r\ne0ecec32dd32cda261783ea8d341f5ebd3093d56\r\n$5\r\nflags"
    "\r\n$%zu\r\n%s\r\n$21\r\nlink-pending-commands\r\n$1\r\n0\r\n$13\r\nlink-refcount\r\n$1\r\n1\r"
    "\n$14\r\nlast-ping-sent\r\n$1\r\n0\r\n$18\r\nlast-ok-ping-reply\r\n$3\r\n432\r\n$15\r\nlast-"
    "ping-reply\r\n$3\r\n432\r\n$23\r\ndown-after-milliseconds\r\n$4\r\n1000\r\n$12\r\ninfo-refresh"
    "\r\n$3\r\n834\r\n$13\r\nrole-reported\r\n$5\r\nslave\r\n$18\r\nrole-reported-time\r\n$5\r\n410"
    "97\r\n$21\r\nmaster-link-down-time\r\n$1\r\n0\r\n$18\r\nmaster-link-status\r\n$%zu\r\n%s\r\n"
    "$11\r\nmaster-host\r\n$9\r\n127.0.0.1\r\n$11\r\nmaster-port\r\n$5\r\n34291\r\n$14\r\nslave-pr"
    "iority\r\n$3\r\n100\r\n$17\r\nslave-repl-offset\r\n$4\r\n9138\r\n$17\r\nreplica-announced\r\n$"
    "1\r\n1\r\n";

/* One replica's part of the reply, at `port` (5 digits) with these flags and link status. */
static void replica_part(char *out, size_t len, int port, const char *flags, const char *link)
{
    snprintf(out, len, k_replica_fmt, port, port, strlen(flags), flags, strlen(link), link);
}

START_TEST(test_sentinel_replicas)
{
    char one[1200], all[8000];
    struct store_cluster_node nodes[8];
    replica_part(one, sizeof(one), 30093, "slave", "ok");
    snprintf(all, sizeof(all), "*1\r\n%s", one);
    struct store_reply *r = resp(all);
    ck_assert_int_eq(store_replicas_parse(r, nodes, 8), 1);
    ck_assert_str_eq(nodes[0].host, "127.0.0.1");
    ck_assert_int_eq(nodes[0].port, 30093);
    store_reply_free(r);

    /* five replicas: two healthy, the others down, disconnected or with their link down */
    static const char *const flags[] = {"slave", "s_down,slave", "slave,disconnected", "slave",
                                        "promoted,slave"};
    static const char *const links[] = {"ok", "ok", "ok", "err", "ok"};
    size_t at = (size_t)snprintf(all, sizeof(all), "*6\r\n");
    for (int i = 0; i < 5; i++) {
        replica_part(one, sizeof(one), 30000 + i, flags[i], links[i]);
        at += (size_t)snprintf(all + at, sizeof(all) - at, "%s", one);
    }
    replica_part(one, sizeof(one), 30009, "slave", "ok");
    snprintf(all + at, sizeof(all) - at, "%s", one);
    r = resp(all);
    ck_assert_int_eq(store_replicas_parse(r, nodes, 8), 2);
    ck_assert_int_eq(nodes[0].port, 30000);
    ck_assert_int_eq(nodes[1].port, 30009);
    ck_assert_int_eq(store_replicas_parse(r, nodes, 1), 1); /* at most max */
    store_reply_free(r);

    r = resp("*0\r\n"); /* no replica */
    ck_assert_int_eq(store_replicas_parse(r, nodes, 8), 0);
    store_reply_free(r);
    static const char *const bad[] = {"-ERR No such master with that name\r\n", "*1\r\n:1\r\n",
                                      "*1\r\n*2\r\n$2\r\nip\r\n$1\r\na\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = resp(bad[i]);
        ck_assert_msg(store_replicas_parse(r, nodes, 8) == -EPROTO, "reply %zu accepted", i);
        store_reply_free(r);
    }
}
END_TEST

/* Only a script whose shebang says no-writes may be marked read-only (Redis then refuses any
 * write in it, and EVALSHA_RO runs it); the mark is the script's, seen through any handle. */
START_TEST(test_script_read_only)
{
    static const char ro[] = "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])";
    static const char rw[] = "#!lua\nreturn redis.call('SET', KEYS[1], 'x')";
    static const char legacy[] = "-- flags=no-writes\nreturn 1";
    static const char later[] = "#!lua\n-- no-writes\nreturn 1";
    const struct store_script *a = store_script_register(ro), *b = store_script_register(rw);
    ck_assert_int_eq(store_script_is_read_only(a), 0);
    ck_assert_int_eq(store_script_read_only(a), 0);
    ck_assert_int_eq(store_script_is_read_only(a), 1);
    ck_assert_int_eq(store_script_is_read_only(store_script_register(ro)), 1);
    ck_assert_int_eq(store_script_read_only(b), -EINVAL);
    ck_assert_int_eq(store_script_is_read_only(b), 0);
    ck_assert_int_eq(store_script_read_only(store_script_register(legacy)), -EINVAL);
    ck_assert_int_eq(store_script_read_only(store_script_register(later)), -EINVAL);
}
END_TEST

Suite *store_cluster_suite(void)
{
    Suite *s = suite_create("store_cluster");
    TCase *tc = tcase_create("slot_map");
    tcase_add_test(tc, test_map_from_cluster_slots);
    tcase_add_test(tc, test_map_ranges_and_holes);
    tcase_add_test(tc, test_map_bad_replies);
    tcase_add_test(tc, test_map_replicas);
    suite_add_tcase(s, tc);
    tc = tcase_create("redirects");
    tcase_add_test(tc, test_redirects);
    tcase_add_test(tc, test_redirects_malformed);
    suite_add_tcase(s, tc);
    tc = tcase_create("sentinel");
    tcase_add_test(tc, test_sentinel_addr);
    tcase_add_test(tc, test_sentinel_switch_message);
    tcase_add_test(tc, test_sentinel_replicas);
    tcase_add_test(tc, test_script_read_only);
    suite_add_tcase(s, tc);
    return s;
}
