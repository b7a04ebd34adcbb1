/* test_cluster.c -- rankd on a real Redis Cluster (the cluster run: RANKD_TEST_CLUSTER=1): the
 * test fixture's routing first, then rankd's own (store_cluster.h, store_async.h). */
#include <stdio.h>
#include <string.h>

#include "crc16.h"
#include "suites.h"

/* The fixture's admin connection reaches every slot's master: keys of all three masters written
 * and read back through one handle, DBSIZE summed, FLUSHALL on every master. */
START_TEST(test_fixture_routes_admin)
{
    int seen[CLUSTER_PROC_NODES] = {0};
    for (int i = 0; i < 64; i++) {
        char key[32];
        snprintf(key, sizeof(key), "k%d", i);
        freeReplyObject(redis_admin_cmd(g_admin, "SET %s v%d", key, i));
        redisReply *r = redis_admin_cmd(g_admin, "GET %s", key);
        ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
        char want[16];
        snprintf(want, sizeof(want), "v%d", i);
        ck_assert_str_eq(r->str, want);
        freeReplyObject(r);
        redisContext *n = redis_admin_for_key(g_admin, key);
        for (int k = 0; k < CLUSTER_PROC_NODES; k++)
            seen[k] |= g_cluster.ports[k] == n->tcp.port;
    }
    ck_assert_int_eq(seen[0] + seen[1] + seen[2], 3); /* 64 keys reach the three masters */
    ck_assert_int_eq(it_dbsize(), 64);
    freeReplyObject(redis_admin_cmd(g_admin, "FLUSHALL"));
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

Suite *cluster_suite(void)
{
    const struct it_case cases[] = {
        {"fixture_routes_admin", test_fixture_routes_admin},
    };
    return it_suite("cluster", cases, sizeof(cases) / sizeof(cases[0]));
}
