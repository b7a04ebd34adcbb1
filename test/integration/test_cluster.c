/* test_cluster.c -- rankd on a real Redis Cluster (the cluster run: RANKD_TEST_CLUSTER=1): the
 * fixture's routing, where records and the registry live, a busy board's slot resharded under a
 * reader and a writer (MOVED), a slot migrated by hand (ASK, then MOVED), and a master killed
 * (its replica promoted). The suite runs last: it moves slots and kills a node (restarted). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc16.h"
#include "load.h"
#include "records.h"
#include "suites.h"

/* ---------------------------------------------------------------- the cluster's layout */

struct node_info {
    char id[41];
    int port;
    int master;
    int min_slot; /* the lowest slot it serves, -1 for none */
};

/* CLUSTER NODES, asked of a node that answers: n nodes into out. */
static int cluster_nodes(struct node_info *out, int max)
{
    for (int k = 0; k < CLUSTER_PROC_NODES; k++) {
        if (kill(cluster_proc_pid(&g_cluster, k), 0) != 0)
            continue;
        redisContext *c = redis_admin(g_cluster.ports[k]);
        redisReply *r = redisCommand(c, "CLUSTER NODES");
        int n = 0;
        for (const char *line = r && r->type == REDIS_REPLY_STRING ? r->str : NULL;
             line && *line && n < max;) {
            struct node_info *ni = &out[n];
            char addr[128], flags[128];
            int used = 0;
            memset(ni, 0, sizeof(*ni));
            ni->min_slot = -1;
            if (sscanf(line, "%40s %127s %127s %*s %*s %*s %*s %*s%n", ni->id, addr, flags, &used) <
                3)
                break;
            const char *colon = strrchr(addr, ':');
            ni->port = colon ? atoi(strchr(addr, ':') + 1) : 0;
            ni->master = strstr(flags, "master") != NULL && strstr(flags, "fail") == NULL;
            const char *end = strchr(line, '\n');
            for (const char *p = line + used; p < (end ? end : p + strlen(p));) {
                while (*p == ' ')
                    p++;
                if (*p >= '0' && *p <= '9') {
                    int lo = atoi(p);
                    if (ni->min_slot < 0 || lo < ni->min_slot)
                        ni->min_slot = lo;
                }
                while (*p && *p != ' ' && *p != '\n')
                    p++;
                if (*p == '\n' || !*p)
                    break;
            }
            n++;
            line = end ? end + 1 : NULL;
        }
        freeReplyObject(r);
        redisFree(c);
        if (n > 0)
            return n;
    }
    ck_abort_msg("no cluster node answers CLUSTER NODES");
    return 0;
}

/* The master serving `slot` now, as a node that answers says. */
static struct node_info master_of(int slot)
{
    int port = 0;
    for (int k = 0; k < CLUSTER_PROC_NODES && !port; k++) {
        if (kill(cluster_proc_pid(&g_cluster, k), 0) != 0)
            continue;
        redisContext *c = redis_admin(g_cluster.ports[k]);
        redisReply *r = redisCommand(c, "CLUSTER SLOTS");
        for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
            redisReply *e = r->element[i];
            if (slot >= e->element[0]->integer && slot <= e->element[1]->integer)
                port = (int)e->element[2]->element[1]->integer;
        }
        freeReplyObject(r);
        redisFree(c);
    }
    struct node_info nodes[16];
    int n = cluster_nodes(nodes, 16);
    for (int i = 0; i < n; i++)
        if (nodes[i].port == port)
            return nodes[i];
    ck_abort_msg("no master serves slot %d", slot);
    return nodes[0];
}

/* A board name whose keys (its hash tag) are in `slot`. */
static void board_on_slot(int slot, char *name, size_t len)
{
    for (long i = 0;; i++) {
        snprintf(name, len, "s%ld", i);
        if (crc16_key_slot(name, strlen(name)) == slot)
            return;
    }
}

static int slot_of_board(const char *board)
{
    return crc16_key_slot(board, strlen(board));
}

/* A master other than `not` (by port). */
static struct node_info other_master(int not )
{
    struct node_info nodes[16];
    int n = cluster_nodes(nodes, 16);
    for (int i = 0; i < n; i++)
        if (nodes[i].master && nodes[i].min_slot >= 0 && nodes[i].port != not )
            return nodes[i];
    ck_abort_msg("no second master");
    return nodes[0];
}

static void run(const char *what, const char *cmd)
{
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s failed (%d): %s", what, rc, cmd);
}

static double metric(const char *name)
{
    return http_metric(g_port, name);
}

/* ---------------------------------------------------------------- the fixture */

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
    int masters = 0;
    for (int k = 0; k < CLUSTER_PROC_NODES; k++)
        masters += seen[k];
    ck_assert_int_eq(masters, 3); /* 64 keys reach the three masters */
    ck_assert_int_eq(it_dbsize(), 64);
    freeReplyObject(redis_admin_cmd(g_admin, "FLUSHALL"));
    ck_assert_int_eq(it_dbsize(), 0);
}
END_TEST

/* ---------------------------------------------------------------- where the data lives */

/* Records are spread over hashes of their own slots, not one P:items; a page shows them (its
 * records fetched from several masters), and so do the member and around reads; the registry
 * is the one key it is on one Redis. */
START_TEST(test_records_spread_over_slots)
{
    struct http_result r;
    char body[8192] = "{\"entries\":[";
    for (int i = 0; i < 40; i++) {
        size_t l = strlen(body);
        snprintf(body + l, sizeof(body) - l,
                 "%s{\"id\":\"r%02d\",\"score\":%d,\"record\":{\"name\":\"n%02d\"}}", i ? "," : "",
                 i, 100 - i, i);
    }
    strcat(body, "]}");
    it_post_score("spread", body);
    ck_assert_int_eq(http_get(g_port, "/boards/spread/rank?page=1&size=40", &r), 0);
    ck_assert_msg(r.status == 200, "page: %ld %s", r.status, r.body);
    const cJSON *items = cJSON_GetObjectItem(r.json, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 40);
    for (int i = 0; i < 40; i++) {
        const cJSON *it = cJSON_GetArrayItem(items, i);
        const cJSON *rec = cJSON_GetObjectItem(it, "record");
        char want[16];
        snprintf(want, sizeof(want), "n%02d", i);
        ck_assert_msg(cJSON_IsObject(rec), "item %d has no record", i);
        ck_assert_str_eq(cJSON_GetObjectItem(rec, "name")->valuestring, want);
    }
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, "/boards/spread/members/r07", &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "record"), "name")->valuestring, "n07");
    http_result_free(&r);
    ck_assert_int_eq(http_get(g_port, "/boards/spread/members/r20/around?size=5", &r), 0);
    ck_assert_int_eq(r.status, 200);
    items = cJSON_GetObjectItem(r.json, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 5);
    ck_assert(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "record")));
    http_result_free(&r);

    /* where they are: no P:items; each in its bucket, the buckets on more than one master */
    redisReply *x = redis_admin_cmd(g_admin, "EXISTS rankd:items");
    ck_assert_int_eq(x->integer, 0);
    freeReplyObject(x);
    int ports[3] = {0}, nports = 0;
    for (int i = 0; i < 40; i++) {
        char id[16], key[64];
        snprintf(id, sizeof(id), "r%02d", i);
        records_key("rankd", 1, id, strlen(id), key, sizeof(key));
        x = redis_admin_cmd(g_admin, "HGET %s %s", key, id);
        ck_assert_msg(x->type == REDIS_REPLY_STRING, "%s is not in %s", id, key);
        freeReplyObject(x);
        int port = redis_admin_for_key(g_admin, key)->tcp.port, known = 0;
        for (int k = 0; k < nports; k++)
            known |= ports[k] == port;
        if (!known && nports < 3)
            ports[nports++] = port;
    }
    ck_assert_msg(nports >= 2, "40 records' buckets are all on one master");
    x = redis_admin_cmd(g_admin, "SISMEMBER rankd:boards spread");
    ck_assert_int_eq(x->integer, 1);
    freeReplyObject(x);

    /* a record of its own, and a board deleted: its name leaves the registry */
    ck_assert_int_eq(it_status("PUT", "/items/solo", "{\"k\":1}"), 204);
    ck_assert_int_eq(http_get(g_port, "/items/solo", &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    ck_assert_int_eq(it_status("DELETE", "/items/solo", NULL), 204);
    ck_assert_int_eq(it_status("DELETE", "/boards/spread", NULL), 204);
    x = redis_admin_cmd(g_admin, "SISMEMBER rankd:boards spread");
    ck_assert_int_eq(x->integer, 0);
    freeReplyObject(x);
}
END_TEST

/* The record of item i of a page-shaped body (or of the object itself for i < 0) is
 * {"name": want}. */
static void expect_record(const cJSON *doc, int i, const char *want)
{
    const cJSON *it = i < 0 ? doc : cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "items"), i);
    const cJSON *rec = cJSON_GetObjectItem(it, "record");
    ck_assert_msg(cJSON_IsObject(rec), "item %d has no record", i);
    ck_assert_str_eq(cJSON_GetObjectItem(rec, "name")->valuestring, want);
}

/* GET path, 200, its JSON kept in *r (free it). */
static const cJSON *get_ok(const char *path, struct http_result *r)
{
    ck_assert_int_eq(http_get(g_port, path, r), 0);
    ck_assert_msg(r->status == 200, "GET %s -> %ld %s", path, r->status, r->body);
    return r->json;
}

/* Issue 14's reads on a cluster: the ones that return records (many members, around a score,
 * top percent, a score range and its cursor, a member with a rank type) get them from the
 * buckets after the script, as a page does; a percentile needs none; one member across boards
 * on three masters is one call per board, put together in the order named, with dense ranks. */
START_TEST(test_reads_with_records)
{
    char body[8192] = "{\"entries\":[";
    for (int i = 0; i < 40; i++) {
        size_t l = strlen(body);
        snprintf(body + l, sizeof(body) - l,
                 "%s{\"id\":\"r%02d\",\"score\":%d,\"record\":{\"name\":\"n%02d\"}}", i ? "," : "",
                 i, 100 - i / 2, i); /* ties: r00 r01 at 100, r02 r03 at 99 ... */
    }
    strcat(body, "]}");
    it_post_score("nr", body);
    struct http_result r;
    const cJSON *d = get_ok("/boards/nr/members?ids=r10,zz,r03&rank=dense", &r);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 2);
    expect_record(d, 0, "n03"); /* rank order */
    expect_record(d, 1, "n10");
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "items"), 1), "rank")
            ->valueint,
        6); /* r10 holds 95: the sixth distinct score */
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "missing"), 0)->valuestring, "zz");
    http_result_free(&r);
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/nr/lookup", "{\"ids\":[\"r39\",\"r00\",\"nope\"]}", &r),
        0);
    ck_assert_msg(r.status == 200, "lookup: %ld %s", r.status, r.body);
    expect_record(r.json, 0, "n00");
    expect_record(r.json, 1, "n39");
    http_result_free(&r);
    d = get_ok("/boards/nr/around?score=90&size=5&rank=competition", &r);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 5);
    for (int i = 0; i < 5; i++) {
        char want[16];
        snprintf(want, sizeof(want), "n%02d", 18 + i); /* r20 (90) in the middle */
        expect_record(d, i, want);
    }
    http_result_free(&r);
    d = get_ok("/boards/nr/top?percent=10", &r);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 4);
    for (int i = 0; i < 4; i++) {
        char want[16];
        snprintf(want, sizeof(want), "n%02d", i);
        expect_record(d, i, want);
    }
    http_result_free(&r);
    d = get_ok("/boards/nr/rank?min=85&max=95&size=4", &r); /* r10..r31 */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "items")), 4);
    expect_record(d, 0, "n10");
    expect_record(d, 3, "n13");
    const cJSON *next = cJSON_GetObjectItem(d, "next");
    ck_assert(cJSON_IsString(next));
    char path[512];
    snprintf(path, sizeof(path), "/boards/nr/rank?min=85&max=95&size=4&after=%s",
             next->valuestring);
    http_result_free(&r);
    d = get_ok(path, &r);
    expect_record(d, 0, "n14");
    expect_record(d, 3, "n17");
    http_result_free(&r);
    d = get_ok("/boards/nr/members/r05?rank=dense", &r);
    expect_record(d, -1, "n05");
    ck_assert_int_eq(cJSON_GetObjectItem(d, "rank")->valueint, 3);
    http_result_free(&r);
    d = get_ok("/boards/nr/percentile?p=50", &r);
    ck_assert_str_eq(cJSON_GetObjectItem(d, "id")->valuestring, "r19");
    http_result_free(&r);

    /* three boards, one on each master */
    char names[3][16];
    int ports[3], n = 0;
    for (int i = 0; n < 3; i++) {
        char key[64];
        snprintf(names[n], sizeof(names[n]), "mb%d", i);
        snprintf(key, sizeof(key), "rankd:{%s}:meta", names[n]);
        int port = redis_admin_for_key(g_admin, key)->tcp.port, known = 0;
        for (int k = 0; k < n; k++)
            known |= ports[k] == port;
        if (!known)
            ports[n++] = port;
        ck_assert_msg(i < 1000, "no three boards on three masters");
    }
    it_post_score(names[0],
                  "{\"entries\":[{\"id\":\"m\",\"score\":5},{\"id\":\"o\",\"score\":9}]}");
    it_post_score(names[1], "{\"entries\":[{\"id\":\"o\",\"score\":9},{\"id\":\"p\",\"score\":9},"
                            "{\"id\":\"m\",\"score\":1}]}");
    it_post_score(names[2], "{\"id\":\"o\",\"score\":1}");
    snprintf(path, sizeof(path), "/members/m?boards=%s,nope,%s,%s&rank=dense", names[0], names[1],
             names[2]);
    d = get_ok(path, &r);
    const cJSON *bs = cJSON_GetObjectItem(d, "boards");
    ck_assert_int_eq(cJSON_GetArraySize(bs), 4);
    const char *want_board[] = {names[0], "nope", names[1], names[2]};
    const int want_rank[] = {2, 0, 2, 0}; /* dense: 9 then 5; 9 then 1; absent */
    for (int i = 0; i < 4; i++) {
        const cJSON *b = cJSON_GetArrayItem(bs, i);
        ck_assert_str_eq(cJSON_GetObjectItem(b, "board")->valuestring, want_board[i]);
        const cJSON *rank = cJSON_GetObjectItem(b, "rank");
        if (want_rank[i])
            ck_assert_int_eq(rank->valueint, want_rank[i]);
        else
            ck_assert(cJSON_IsNull(rank));
    }
    http_result_free(&r);
}
END_TEST

/* A name in the registry with no board (what a failure between the registry's SADD and the
 * board's creation leaves) is left out of GET /boards, and a DELETE of it removes it. */
START_TEST(test_registry_name_without_board)
{
    it_post_score("real", "{\"id\":\"a\",\"score\":1}");
    freeReplyObject(redis_admin_cmd(g_admin, "SADD rankd:boards ghost"));
    struct http_result r;
    ck_assert_int_eq(http_get(g_port, "/boards", &r), 0);
    ck_assert_int_eq(r.status, 200);
    const cJSON *list = cJSON_GetObjectItem(r.json, "boards");
    ck_assert_int_eq(cJSON_GetArraySize(list), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "board")->valuestring,
                     "real");
    http_result_free(&r);
    ck_assert_int_eq(it_status("DELETE", "/boards/ghost", NULL), 404);
    redisReply *x = redis_admin_cmd(g_admin, "SISMEMBER rankd:boards ghost");
    ck_assert_int_eq(x->integer, 0);
    freeReplyObject(x);
}
END_TEST

/* A write to several boards at once (POST /scores with "boards") is one script on one Redis;
 * on a cluster each board is in a slot of its own, so it is refused whole, nothing written. */
START_TEST(test_several_boards_refused)
{
    struct http_result r;
    const char *body = "{\"boards\":[\"one\",\"two\"],\"id\":\"a\",\"score\":1}";
    ck_assert_int_eq(http_write(g_port, "POST", "/scores", body, &r), 0);
    ck_assert_msg(r.status == 422, "POST /scores -> %ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "several_boards_on_cluster");
    http_result_free(&r);
    ck_assert_int_eq(it_status("GET", "/boards/one", NULL), 404);
    ck_assert_int_eq(it_status("GET", "/boards/two", NULL), 404);
    it_post_score("one", "{\"id\":\"a\",\"score\":1}"); /* one board: fine */
}
END_TEST

/* ---------------------------------------------------------------- --write-replicas */

/* The replica of master `port` (INFO replication's slave0), or 0. */
static int replica_of(int port)
{
    redisContext *c = redis_admin(port);
    redisReply *r = redisCommand(c, "INFO replication");
    const char *at = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "slave0:") : NULL;
    const char *p = at ? strstr(at, ",port=") : NULL;
    int replica = p ? atoi(p + 6) : 0;
    freeReplyObject(r);
    redisFree(c);
    return replica;
}

static pid_t pid_of(int port)
{
    for (int i = 0; i < CLUSTER_PROC_NODES; i++)
        if (g_cluster.ports[i] == port)
            return cluster_proc_pid(&g_cluster, i);
    ck_abort_msg("no node on port %d", port);
    return 0;
}

/* `cmd` with `key` and `field` (HGET) or `key` and `member` (ZSCORE), read on the replica on
 * `port` (READONLY first): 1 when it answers a value. */
static int replica_holds(int port, const char *cmd, const char *key, const char *arg)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    ck_assert(c && !c->err);
    freeReplyObject(redisCommand(c, "READONLY"));
    redisReply *r = redisCommand(c, "%s %s %s", cmd, key, arg);
    int there = r && r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    redisFree(c);
    return there;
}

static void tweak_wait1(struct config *cfg)
{
    cfg->write_replicas = 1;
}

/* --write-replicas 1 on a cluster: a write's WAIT goes to the board's master, and its records,
 * written afterwards to their buckets' masters, wait there too. A 200 is on both replicas; a
 * stopped replica of the board's master, or of the master of the record's bucket alone, makes
 * the write 503 write_not_replicated (applied on the masters all the same). */
START_TEST(test_write_replicas_on_cluster)
{
    rankd_stop(g_app);
    g_app = rankd_test_start_with(g_redis.port, TEST_TOKEN, tweak_wait1, NULL);
    g_port = rankd_port(g_app);
    const char *board = "wr";
    int bm = master_of(slot_of_board(board)).port, brep = replica_of(bm);
    ck_assert_msg(brep > 0, "master %d has no replica", bm);
    /* ids whose records' bucket is on another master than the board's */
    char ids[2][16], keys[2][64];
    int rm = 0, found = 0;
    for (int i = 0; found < 2 && i < 10000; i++) {
        char id[16], key[64];
        snprintf(id, sizeof(id), "i%d", i);
        records_key("rankd", 1, id, strlen(id), key, sizeof(key));
        const char *tag = strchr(key, '{') + 1;
        int m = master_of(crc16_key_slot(tag, strcspn(tag, "}"))).port;
        if (m == bm || (rm && m != rm))
            continue;
        rm = m;
        snprintf(ids[found], sizeof(ids[found]), "%s", id);
        snprintf(keys[found], sizeof(keys[found]), "%s", key);
        found++;
    }
    ck_assert_int_eq(found, 2);
    int rrep = replica_of(rm);
    ck_assert_msg(rrep > 0, "master %d has no replica", rm);
    char body[160], zkey[64];
    snprintf(zkey, sizeof(zkey), "rankd:{%s}:z", board);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":1,\"record\":{\"n\":1}}", ids[0]);
    it_post_score(board, body); /* 200: on both replicas when answered */
    ck_assert(replica_holds(brep, "ZSCORE", zkey, ids[0]));
    ck_assert(replica_holds(rrep, "HGET", keys[0], ids[0]));
    /* the records' master's replica stopped: the scores are confirmed, the record is not */
    ck_assert_int_eq(kill(pid_of(rrep), SIGSTOP), 0);
    struct http_result r;
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":2,\"record\":{\"n\":2}}", ids[1]);
    ck_assert_int_eq(http_write(g_port, "POST", "/boards/wr/scores", body, &r), 0);
    kill(pid_of(rrep), SIGCONT);
    ck_assert_msg(r.status == 503, "%ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    http_result_free(&r);
    redisReply *x = redis_admin_cmd(g_admin, "HGET %s %s", keys[1], ids[1]);
    ck_assert_int_eq(x->type, REDIS_REPLY_STRING); /* applied on the master all the same */
    freeReplyObject(x);
    /* the board's master's replica stopped: the write itself is not confirmed */
    ck_assert_int_eq(kill(pid_of(brep), SIGSTOP), 0);
    ck_assert_int_eq(
        http_write(g_port, "POST", "/boards/wr/scores", "{\"id\":\"plain\",\"score\":3}", &r), 0);
    kill(pid_of(brep), SIGCONT);
    ck_assert_msg(r.status == 503, "%ld %s", r.status, r.body);
    ck_assert_str_eq(http_error_code(&r), "write_not_replicated");
    http_result_free(&r);
    ck_assert_int_eq(cluster_proc_wait(&g_cluster, 30), 0);
    it_post_score(board, "{\"id\":\"back\",\"score\":4}"); /* the replicas back: 200 again */
    ck_assert(replica_holds(brep, "ZSCORE", zkey, "back"));
}
END_TEST

/* ---------------------------------------------------------------- a reader and a writer */

/* A board with members base0..base49, on `slot`: its name into board[0..len). */
static void busy_board(int slot, char *board, size_t len)
{
    board_on_slot(slot, board, len);
    load_board(g_port, board);
}

/* redis-cli --cluster reshard moves a busy board's slot to another master while a reader and a
 * writer run: the keys move (MIGRATE), the slot changes hands, rankd follows the MOVED without
 * a restart; no acknowledged write is lost, and nothing fails but 503s that a retry gets past. */
START_TEST(test_reshard_busy_board)
{
    struct node_info from = master_of(0), to;
    struct node_info nodes[16];
    int n = cluster_nodes(nodes, 16);
    for (int i = 0; i < n; i++) /* the master whose lowest slot is lowest: redis-cli moves it */
        if (nodes[i].master && nodes[i].min_slot >= 0 && nodes[i].min_slot < from.min_slot)
            from = nodes[i];
    to = other_master(from.port);
    char board[32];
    busy_board(from.min_slot, board, sizeof(board));
    double moved0 = metric("rankd_redis_cluster_redirects_total{kind=\"moved\"}");
    static struct load l; /* big (every write's time): not on the stack */
    memset(&l, 0, sizeof(l));
    l.port = g_port;
    l.board = board;
    pthread_t th[2];
    load_start(&l, th);
    usleep(300000);
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "redis-cli --cluster reshard 127.0.0.1:%d --cluster-from %s --cluster-to %s "
             "--cluster-slots 1 --cluster-yes >%s/reshard.log 2>&1",
             from.port, from.id, to.id, g_cluster.dir);
    run("redis-cli --cluster reshard", cmd);
    usleep(700000); /* the load goes on against the slot's new master */
    load_stop(&l, th);
    ck_assert_int_eq(master_of(slot_of_board(board)).port, to.port);
    load_check(&l, "reshard", g_admin, 1, 0, 0);
    double moved = metric("rankd_redis_cluster_redirects_total{kind=\"moved\"}") - moved0;
    fprintf(stderr, "cluster: reshard of slot %d (%s, board %s) %d -> %d: %.0f MOVED followed\n",
            slot_of_board(board), from.id, board, from.port, to.port, moved);
    ck_assert_msg(moved >= 1, "no MOVED followed");
    ck_assert_msg(l.max_tries <= 50, "a request needed %d attempts", l.max_tries);
}
END_TEST

/* A slot migrated by hand, the specification's steps: while the board's keys are on both sides
 * of IMPORTING/MIGRATING, rankd follows ASK (ASKING to the new master) for what has moved; once
 * the slot is handed over (SETSLOT NODE), MOVED. Reads, writes and records work throughout. */
START_TEST(test_ask_during_migration)
{
    const char *board = "askb";
    load_board(g_port, board);
    int slot = slot_of_board(board);
    struct node_info a = master_of(slot), b = other_master(a.port);
    it_post_score(board, "{\"id\":\"rec\",\"score\":5,\"record\":{\"k\":\"v\"}}");
    redisContext *ca = redis_admin(a.port), *cb = redis_admin(b.port);
    freeReplyObject(redisCommand(cb, "CLUSTER SETSLOT %d IMPORTING %s", slot, a.id));
    freeReplyObject(redisCommand(ca, "CLUSTER SETSLOT %d MIGRATING %s", slot, b.id));
    double ask0 = metric("rankd_redis_cluster_redirects_total{kind=\"ask\"}");
    long long asking0 = redis_info_field(cb, "commandstats", "cmdstat_asking:calls=");
    /* every key of the slot to b; the slot is still a's */
    redisReply *keys = redisCommand(ca, "CLUSTER GETKEYSINSLOT %d 1000", slot);
    ck_assert(keys && keys->type == REDIS_REPLY_ARRAY && keys->elements >= 2);
    for (size_t i = 0; i < keys->elements; i++) {
        redisReply *m =
            redisCommand(ca, "MIGRATE 127.0.0.1 %d %s 0 5000", b.port, keys->element[i]->str);
        ck_assert_msg(m && m->type == REDIS_REPLY_STATUS, "MIGRATE %s: %s", keys->element[i]->str,
                      m && m->str ? m->str : "-");
        freeReplyObject(m);
    }
    freeReplyObject(keys);
    /* a's side is empty: each call is ASKed of b, and b serves it */
    struct http_result r;
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/members/rec", board);
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200, "member during the migration: %ld %s", r.status, r.body);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "record"), "k")->valuestring,
                     "v");
    http_result_free(&r);
    it_post_score(board, "{\"id\":\"during\",\"score\":7}");
    snprintf(path, sizeof(path), "/boards/%s/rank?page=1&size=100", board);
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_msg(r.status == 200, "page during the migration: %ld %s", r.status, r.body);
    ck_assert_int_eq((int)cJSON_GetObjectItem(r.json, "total")->valuedouble, 52);
    http_result_free(&r);
    double asks = metric("rankd_redis_cluster_redirects_total{kind=\"ask\"}") - ask0;
    long long asking = redis_info_field(cb, "commandstats", "cmdstat_asking:calls=") - asking0;
    ck_assert_msg(asks >= 3 && asking >= 3, "ASK followed %.0f times, ASKING on b %lld", asks,
                  asking);
    /* the slot handed over: b first, then a and the others (the order redis-cli uses) */
    struct node_info nodes[16];
    int n = cluster_nodes(nodes, 16);
    freeReplyObject(redisCommand(cb, "CLUSTER SETSLOT %d NODE %s", slot, b.id));
    freeReplyObject(redisCommand(ca, "CLUSTER SETSLOT %d NODE %s", slot, b.id));
    for (int i = 0; i < n; i++)
        if (nodes[i].master && nodes[i].port != a.port && nodes[i].port != b.port) {
            redisContext *c = redis_admin(nodes[i].port);
            freeReplyObject(redisCommand(c, "CLUSTER SETSLOT %d NODE %s", slot, b.id));
            redisFree(c);
        }
    double moved0 = metric("rankd_redis_cluster_redirects_total{kind=\"moved\"}");
    it_post_score(board, "{\"id\":\"after\",\"score\":9}");
    ck_assert_int_eq(http_get(g_port, path, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq((int)cJSON_GetObjectItem(r.json, "total")->valuedouble, 53);
    http_result_free(&r);
    ck_assert_msg(metric("rankd_redis_cluster_redirects_total{kind=\"moved\"}") > moved0,
                  "no MOVED after the hand-over");
    fprintf(stderr, "cluster: slot %d migrated by hand %d -> %d: %.0f ASK, then MOVED\n", slot,
            a.port, b.port, asks);
    redisFree(ca);
    redisFree(cb);
    ck_assert_int_eq(cluster_proc_wait(&g_cluster, 10), 0);
}
END_TEST

/* Boards on a cluster are always packed: the ids hash of a `wide` set is not named by the
 * scripts there (a key missing beside existing ones makes a migrating slot answer TRYAGAIN:
 * ask_migration), so a PUT of the wide layout is refused, and nothing is created. */
START_TEST(test_wide_refused_on_cluster)
{
    struct http_result r;
    const char *wide = "{\"score_layout\":\"wide\"}";
    ck_assert_int_eq(
        http_req(g_port, "PUT", "/boards/cw", wide, strlen(wide), NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == 400 && strstr(r.body, "invalid_field") && strstr(r.body, "Cluster"),
                  "%ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_status("GET", "/boards/cw", NULL), 404);
    ck_assert_int_eq(it_status("PUT", "/boards/cw", "{\"score_layout\":\"packed\"}"), 201);
}
END_TEST

/* A board with sub-scores is wide (its set members start with them, and the ids hash maps id to
 * that prefix), so it is refused on a cluster as wide is, and nothing is created. */
START_TEST(test_subscores_refused_on_cluster)
{
    struct http_result r;
    const char *subs = "{\"subscores\":[\"desc\",\"asc\"]}";
    ck_assert_int_eq(
        http_req(g_port, "PUT", "/boards/cs", subs, strlen(subs), NULL, TEST_TOKEN, &r), 0);
    ck_assert_msg(r.status == 400 && strstr(r.body, "invalid_field") && strstr(r.body, "Cluster"),
                  "%ld %s", r.status, r.body);
    http_result_free(&r);
    ck_assert_int_eq(it_status("GET", "/boards/cs", NULL), 404);
    /* nor may a packed board take them later, nor an entry carry them */
    ck_assert_int_eq(it_status("PUT", "/boards/cs", "{}"), 201);
    ck_assert_int_eq(it_status("PUT", "/boards/cs", subs), 400);
    ck_assert_int_eq(
        it_status("POST", "/boards/cs/scores", "{\"id\":\"a\",\"score\":1,\"subscores\":[1,2]}"),
        400);
}
END_TEST

/* The master of a busy board is killed (SIGKILL): its replica is promoted (cluster-node-timeout
 * 3 s), rankd answers 503 for about the failover's time, then recovers without a restart; no
 * acknowledged write is lost. The node is started again afterwards (it rejoins as a replica). */
START_TEST(test_master_killed_replica_promoted)
{
    const char *board = "fo";
    load_board(g_port, board);
    struct node_info m = master_of(slot_of_board(board));
    pid_t pid = 0;
    for (int i = 0; i < CLUSTER_PROC_NODES; i++)
        if (g_cluster.ports[i] == m.port)
            pid = cluster_proc_pid(&g_cluster, i);
    ck_assert_int_gt(pid, 0);
    static struct load l; /* big (every write's time): not on the stack */
    memset(&l, 0, sizeof(l));
    l.port = g_port;
    l.board = board;
    l.retry_ms = 20000; /* through the failover */
    pthread_t th[2];
    load_start(&l, th);
    usleep(300000);
    int64_t t0 = util_now_ms();
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    /* until a write and a read went through after the promotion: the slot has a new master */
    int64_t promoted = 0;
    while (util_now_ms() - t0 < 30000) {
        usleep(50000);
        struct node_info now = master_of(slot_of_board(board));
        if (now.port != m.port) {
            promoted = util_now_ms();
            break;
        }
    }
    ck_assert_msg(promoted, "no replica took over in 30 s");
    int w = l.written;
    int64_t recovered = load_wait_writes(&l, 20, 10000);
    load_stop(&l, th);
    fprintf(stderr,
            "cluster: master %d killed: replica promoted after %.1f s, 20 more writes by %.1f "
            "s\n",
            m.port, (double)(promoted - t0) / 1000, (double)(recovered - t0) / 1000);
    ck_assert_msg(l.written >= w + 20, "rankd did not recover: %d writes after the promotion",
                  l.written - w);
    /* writes acknowledged in the last second before the kill may not have reached the replica */
    int lost = load_check(&l, "failover", g_admin, 1, t0 - 1000, t0 + 1);
    int64_t last_503 = atomic_load(&l.last_503_ms);
    fprintf(stderr, "cluster: failover: last 503 %.1f s after the kill, %d write(s) lost\n",
            (double)(last_503 - t0) / 1000, lost);
    ck_assert_msg(last_503 <= promoted + 2000,
                  "503s went on %.1f s after the promotion (rankd did not follow it)",
                  (double)(last_503 - promoted) / 1000);
    ck_assert_int_eq(cluster_proc_restart(&g_cluster, m.port), 0);
    ck_assert_int_eq(cluster_proc_wait(&g_cluster, 30), 0);
}
END_TEST

Suite *cluster_suite(void)
{
    const struct it_timed_case cases[] = {
        {"fixture_routes_admin", test_fixture_routes_admin, 30},
        {"records_spread", test_records_spread_over_slots, 30},
        {"reads_with_records", test_reads_with_records, 30},
        {"registry_ghost", test_registry_name_without_board, 30},
        {"several_boards", test_several_boards_refused, 30},
        {"write_replicas", test_write_replicas_on_cluster, 60},
        {"reshard_busy", test_reshard_busy_board, 60},
        {"ask_migration", test_ask_during_migration, 60},
        {"wide_refused", test_wide_refused_on_cluster, 30},
        {"subscores_refused", test_subscores_refused_on_cluster, 30},
        {"failover", test_master_killed_replica_promoted, 90},
    };
    return it_suite_with("cluster", cases, sizeof(cases) / sizeof(cases[0]), it_setup);
}
