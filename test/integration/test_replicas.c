/* test_replicas.c -- --read-from-replicas (issue 15) on real servers: on the cluster run's Redis
 * Cluster (suite "replicas": 3 masters with a replica each) and on a primary, a replica and
 * three sentinels of scripts/sentinel-fixture.sh (suite "sentinel_replicas", in the single run,
 * a set-up per test). Page (live), member and around reads are served by replicas (their
 * EVALSHA_RO calls in the replicas' commandstats, none on the masters), writes land on the
 * masters; a replica that lags (CLIENT PAUSE WRITE holds its replication stream, not its reads)
 * shows an older board to a plain read and the write to a read with ?min_version=; a replica
 * stopped (SIGSTOP) or killed costs no 503, and the reads go back to it once it is back. Each
 * case checks that a replica served reads, so none passes with the routing turned off. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crc16.h"
#include "suites.h"

/* ---------------------------------------------------------------- one node's numbers */

/* `cmd`'s calls in INFO commandstats of the node on `port` alone (0: none yet; -1: it does not
 * answer). */
static long long node_calls(int port, const char *cmd)
{
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, (struct timeval){1, 0});
    redisReply *r = c && !c->err ? redisCommand(c, "INFO commandstats") : NULL;
    long long n = r ? 0 : -1;
    char field[64];
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", cmd);
    const char *at = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, field) : NULL;
    if (at)
        n = atoll(at + strlen(field));
    freeReplyObject(r);
    redisFree(c);
    return n;
}

/* The same summed over ports[0..n). */
static long long nodes_calls(const int *ports, int n, const char *cmd)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        long long v = node_calls(ports[i], cmd);
        sum += v > 0 ? v : 0;
    }
    return sum;
}

/* One command to the node on `port` (a reply to free, or NULL). */
static redisReply *node_cmd(int port, const char *fmt, const char *arg)
{
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, (struct timeval){1, 0});
    redisReply *r = c && !c->err ? redisCommand(c, fmt, arg) : NULL;
    redisFree(c);
    return r;
}

/* CLIENT PAUSE <ms> WRITE on a replica: it goes on serving reads (EVALSHA_RO, HMGET) but applies
 * nothing of its replication stream meanwhile, so it lags its primary by every write made. */
static void replica_lag(int port, int ms)
{
    char t[16];
    snprintf(t, sizeof(t), "%d", ms);
    redisReply *r = node_cmd(port, "CLIENT PAUSE %s WRITE", t);
    ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "CLIENT PAUSE on %d failed", port);
    freeReplyObject(r);
}

static void replica_unlag(int port)
{
    freeReplyObject(node_cmd(port, "CLIENT UNPAUSE%s", ""));
}

/* ---------------------------------------------------------------- HTTP */

static void write_score(int port, const char *board, const char *id, int score, int n,
                        int64_t *version)
{
    char path[128], body[160];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%d,\"record\":{\"n\":%d}}", id, score,
             n);
    struct http_result r;
    ck_assert_int_eq(http_write(port, "POST", path, body, &r), 0);
    ck_assert_msg(r.status == 200, "POST %s %s -> %ld %s", path, body, r.status, r.body);
    if (version)
        *version = (int64_t)cJSON_GetObjectItem(r.json, "version")->valuedouble;
    http_result_free(&r);
}

/* A board that caches no pages (its pages are page.lua: a read a replica answers) with
 * members m0..m(n-1), score 100 + i, record {"n":i}. */
static void live_board(int port, const char *board, int n)
{
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s", board);
    struct http_result r;
    ck_assert_int_eq(http_write(port, "PUT", path, "{\"page_ttl_ms\":0}", &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "PUT %s -> %ld", path, r.status);
    http_result_free(&r);
    for (int i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof(id), "m%d", i);
        write_score(port, board, id, 100 + i, i, NULL);
    }
}

/* GET path: 200 and its body's member `id`'s score (the member itself, or in its items);
 * *record_n its record's "n" (-1 when none). */
static double read_score(int port, const char *path, const char *id, int *record_n)
{
    struct http_result r;
    ck_assert_int_eq(http_get(port, path, &r), 0);
    ck_assert_msg(r.status == 200, "GET %s -> %ld %s", path, r.status, r.body);
    const cJSON *items = cJSON_GetObjectItem(r.json, "items"), *hit = NULL;
    if (!items) {
        hit = r.json;
    } else {
        const cJSON *it;
        cJSON_ArrayForEach(it, items)
        {
            const cJSON *i = cJSON_GetObjectItem(it, "id");
            if (i && cJSON_IsString(i) && strcmp(i->valuestring, id) == 0)
                hit = it;
        }
    }
    ck_assert_msg(hit, "GET %s: no %s in %s", path, id, r.body);
    double score = cJSON_GetObjectItem(hit, "score")->valuedouble;
    const cJSON *rec = cJSON_GetObjectItem(hit, "record"), *nn = cJSON_GetObjectItem(rec, "n");
    if (record_n)
        *record_n = nn ? (int)nn->valuedouble : -1;
    http_result_free(&r);
    return score;
}

static long get_status(int port, const char *path)
{
    struct http_result r;
    ck_assert_int_eq(http_get(port, path, &r), 0);
    long s = r.status;
    http_result_free(&r);
    return s;
}

/* Reads of a member on `port` until `replica_port` has answered one of them as EVALSHA_RO (the
 * store learns the replicas from CLUSTER SLOTS, which lists a replica once it has replicated
 * something, and dials it first: reads go to the primary meanwhile); at most `ms`. */
static void wait_replica_reads(int port, const char *path, int replica_port, int ms)
{
    long long r0 = node_calls(replica_port, "evalsha_ro");
    int64_t until = util_now_ms() + ms;
    while (util_now_ms() < until) {
        ck_assert_int_eq(get_status(port, path), 200);
        if (node_calls(replica_port, "evalsha_ro") > r0)
            return;
        usleep(50000);
    }
    ck_abort_msg("no read reached the replica on %d in %d ms (%s)", replica_port, ms, path);
}

/* Reads of `page` until one sends no HMGET to any master (ports[0..n)): the records' buckets'
 * replicas are dialled too (the first reads of a bucket go to its master meanwhile). */
static void warm_records(int port, const char *page, const int *masters, int n)
{
    int64_t until = util_now_ms() + 10000;
    while (util_now_ms() < until) {
        long long before = nodes_calls(masters, n, "hmget");
        ck_assert_int_eq(get_status(port, page), 200);
        if (nodes_calls(masters, n, "hmget") == before)
            return;
        usleep(50000);
    }
    ck_abort_msg("the records of %s are still read from masters after 10 s", page);
}

/* A reader of one path while a replica is stopped or killed: every status, the slowest. */
struct reader {
    int port;
    char path[128];
    atomic_int stop;
    int reads, ok, r503, other;
    double slowest_s;
    int slow; /* over 300 ms */
};

static void *reader_main(void *arg)
{
    struct reader *rd = arg;
    while (!atomic_load(&rd->stop)) {
        struct http_result r;
        if (http_get(rd->port, rd->path, &r) == 0) {
            rd->reads++;
            rd->ok += r.status == 200;
            rd->r503 += r.status == 503;
            rd->other += r.status != 200 && r.status != 503;
            if (r.seconds > rd->slowest_s)
                rd->slowest_s = r.seconds;
            rd->slow += r.seconds > 0.3;
        }
        http_result_free(&r);
        usleep(5000);
    }
    return NULL;
}

/* Run a reader for `ms` while `during` (may be NULL) acts after 200 ms; asserts every read was a
 * 200 and none took longer than a replica's wait and the primary's answer allow. */
static void read_through(int port, const char *path, int ms, void (*during)(void *), void *arg,
                         const char *what)
{
    static struct reader rd;
    memset(&rd, 0, sizeof(rd));
    rd.port = port;
    snprintf(rd.path, sizeof(rd.path), "%s", path);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, reader_main, &rd), 0);
    usleep(200000);
    if (during)
        during(arg);
    usleep((useconds_t)(ms - 200) * 1000);
    atomic_store(&rd.stop, 1);
    pthread_join(th, NULL);
    fprintf(stderr,
            "replicas: %s: %d reads, %d 200, %d 503, %d other, slowest %.0f ms, %d over "
            "300 ms\n",
            what, rd.reads, rd.ok, rd.r503, rd.other, rd.slowest_s * 1000, rd.slow);
    ck_assert_int_gt(rd.reads, 20);
    ck_assert_msg(rd.ok == rd.reads, "%s: %d of %d reads failed (%d 503s)", what, rd.reads - rd.ok,
                  rd.reads, rd.r503);
    /* a read in flight on the replica waits 250 ms for it, then asks the primary */
    ck_assert_msg(rd.slowest_s < 0.9, "%s: a read took %.0f ms", what, rd.slowest_s * 1000);
    ck_assert_msg(rd.slow <= 4, "%s: %d reads over 300 ms", what, rd.slow);
}

static void sig_stop(void *arg)
{
    ck_assert_int_eq(kill(*(pid_t *)arg, SIGSTOP), 0);
}

static void sig_kill(void *arg)
{
    ck_assert_int_eq(kill(*(pid_t *)arg, SIGKILL), 0);
}

static void tweak_replicas(struct config *cfg)
{
    cfg->read_from_replicas = 1;
}

/* ================================================================ a Redis Cluster */

/* The master serving `slot` and its replicas (by ROLE, not CLUSTER SLOTS, which leaves out a
 * replica that has replicated nothing yet): ports of the nodes that run. */
static int slot_nodes(int slot, int *master, int *replicas, pid_t *replica_pids, int max)
{
    *master = 0;
    for (int k = 0; k < CLUSTER_PROC_NODES && !*master; k++) {
        if (kill(cluster_proc_pid(&g_cluster, k), 0) != 0)
            continue;
        redisContext *c = redis_admin(g_cluster.ports[k]);
        redisReply *r = redisCommand(c, "CLUSTER SLOTS");
        for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
            redisReply *e = r->element[i];
            if (slot >= e->element[0]->integer && slot <= e->element[1]->integer)
                *master = (int)e->element[2]->element[1]->integer;
        }
        freeReplyObject(r);
        redisFree(c);
    }
    ck_assert_int_gt(*master, 0);
    int n = 0;
    for (int k = 0; k < CLUSTER_PROC_NODES && n < max; k++) {
        if (kill(cluster_proc_pid(&g_cluster, k), 0) != 0)
            continue;
        redisReply *r = node_cmd(g_cluster.ports[k], "ROLE%s", "");
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
            strcmp(r->element[0]->str, "slave") == 0 && r->element[2]->integer == *master) {
            replica_pids[n] = cluster_proc_pid(&g_cluster, k);
            replicas[n++] = g_cluster.ports[k];
        }
        freeReplyObject(r);
    }
    return n;
}

/* Every replica of the cluster that runs (ports), and the masters. */
static void cluster_roles(int *masters, int *nm, int *replicas, int *nr)
{
    *nm = *nr = 0;
    for (int k = 0; k < CLUSTER_PROC_NODES; k++) {
        if (kill(cluster_proc_pid(&g_cluster, k), 0) != 0)
            continue;
        redisReply *r = node_cmd(g_cluster.ports[k], "ROLE%s", "");
        if (r && r->type == REDIS_REPLY_ARRAY && strcmp(r->element[0]->str, "slave") == 0)
            replicas[(*nr)++] = g_cluster.ports[k];
        else if (r && r->type == REDIS_REPLY_ARRAY)
            masters[(*nm)++] = g_cluster.ports[k];
        freeReplyObject(r);
    }
}

static void rr_setup(void)
{
    g_admin = redis_admin(g_redis.port);
    freeReplyObject(redis_admin_cmd(g_admin, "FLUSHALL"));
    g_app = rankd_test_start_with(g_redis.port, TEST_TOKEN, tweak_replicas, NULL);
    g_port = rankd_port(g_app);
}

/* Live pages, members and around on a board: served by its slot's replica (EVALSHA_RO there,
 * none on the master; the records' HMGETs on replicas, none on the masters); a write lands on
 * the master (its EVALSHA), never on a replica. */
START_TEST(test_reads_on_replicas)
{
    const char *board = "rr";
    live_board(g_port, board, 30);
    int master, replicas[4];
    pid_t pids[4];
    int nrep = slot_nodes(crc16_key_slot(board, strlen(board)), &master, replicas, pids, 4);
    ck_assert_int_ge(nrep, 1);
    wait_replica_reads(g_port, "/boards/rr/members/m3", replicas[0], 10000);
    int masters[CLUSTER_PROC_NODES], all_replicas[CLUSTER_PROC_NODES], nm, nr;
    cluster_roles(masters, &nm, all_replicas, &nr);
    warm_records(g_port, "/boards/rr/rank?page=1&size=30", masters, nm);
    long long m_ro = node_calls(master, "evalsha_ro"), m_sha = node_calls(master, "evalsha");
    long long r_ro = nodes_calls(replicas, nrep, "evalsha_ro");
    long long r_sha = nodes_calls(replicas, nrep, "evalsha");
    long long m_hmget = nodes_calls(masters, nm, "hmget");
    long long r_hmget = nodes_calls(all_replicas, nr, "hmget");
    double replica_sent = http_metric(g_port, "rankd_redis_replica_reads_total{to=\"replica\"}");
    const int n = 20;
    for (int i = 0; i < n; i++) {
        int rec = -1;
        ck_assert_double_eq(read_score(g_port, "/boards/rr/members/m7", "m7", &rec), 107);
        ck_assert_int_eq(rec, 7);
        ck_assert_double_eq(read_score(g_port, "/boards/rr/members/m7/around?size=5", "m7", &rec),
                            107);
        ck_assert_int_eq(rec, 7);
        ck_assert_double_eq(read_score(g_port, "/boards/rr/rank?page=1&size=30", "m29", &rec), 129);
        ck_assert_int_eq(rec, 29);
        /* the other reads of one board: many members, around a score, top percent, a score
         * range (walk.lua), a percentile */
        ck_assert_double_eq(read_score(g_port, "/boards/rr/members?ids=m7,m8", "m7", &rec), 107);
        ck_assert_int_eq(rec, 7);
        ck_assert_double_eq(read_score(g_port, "/boards/rr/around?score=107&size=5", "m7", &rec),
                            107);
        ck_assert_int_eq(rec, 7);
        ck_assert_double_eq(read_score(g_port, "/boards/rr/top?percent=10", "m29", &rec), 129);
        ck_assert_int_eq(rec, 29);
        ck_assert_double_eq(
            read_score(g_port, "/boards/rr/rank?min=100&max=200&size=30", "m29", &rec), 129);
        ck_assert_int_eq(rec, 29);
        ck_assert_int_eq(get_status(g_port, "/boards/rr/percentile?p=50"), 200);
    }
    long long dr_ro = nodes_calls(replicas, nrep, "evalsha_ro") - r_ro;
    long long dm_ro = node_calls(master, "evalsha_ro") - m_ro;
    long long dm_sha = node_calls(master, "evalsha") - m_sha;
    long long dr_hmget = nodes_calls(all_replicas, nr, "hmget") - r_hmget;
    long long dm_hmget = nodes_calls(masters, nm, "hmget") - m_hmget;
    fprintf(stderr,
            "replicas: %d reads of each kind: EVALSHA_RO %lld on the replica, %lld on the master "
            "(EVALSHA %lld); records' HMGET %lld on replicas, %lld on masters\n",
            n, dr_ro, dm_ro, dm_sha, dr_hmget, dm_hmget);
    ck_assert_int_eq(dr_ro, 8 * n);
    ck_assert_int_eq(dm_ro, 0);
    ck_assert_int_eq(dm_sha, 0);
    ck_assert_int_ge(dr_hmget, 3 * n); /* a page's records: a bucket at least */
    ck_assert_int_eq(dm_hmget, 0);
    ck_assert_double_ge(http_metric(g_port, "rankd_redis_replica_reads_total{to=\"replica\"}") -
                            replica_sent,
                        8 * n);
    /* a write: write.lua on the master, nothing on the replica */
    write_score(g_port, board, "m0", 1000, 0, NULL);
    ck_assert_int_eq(node_calls(master, "evalsha") - m_sha, 1);
    ck_assert_int_eq(nodes_calls(replicas, nrep, "evalsha") - r_sha, 0);
    redisReply *z = redis_admin_cmd(g_admin, "ZCARD rankd:{rr}:z");
    ck_assert_int_eq(z->integer, 30);
    freeReplyObject(z);
}
END_TEST

/* Every replica lags (CLIENT PAUSE WRITE): after a write, a plain member, around or live page
 * read shows the board as the replica has it (the old score and record: a replica answered),
 * and the same read with ?min_version=<the write's version> shows the write, score and record
 * (the replica's answer was older: asked of the master, and the records of the masters). */
START_TEST(test_min_version_on_lagging_replica)
{
    const char *board = "mv";
    live_board(g_port, board, 5);
    int master, replicas[4];
    pid_t pids[4];
    int nrep = slot_nodes(crc16_key_slot(board, strlen(board)), &master, replicas, pids, 4);
    ck_assert_int_ge(nrep, 1);
    wait_replica_reads(g_port, "/boards/mv/members/m2", replicas[0], 10000);
    int masters[CLUSTER_PROC_NODES], all[CLUSTER_PROC_NODES], nm, nr;
    cluster_roles(masters, &nm, all, &nr);
    warm_records(g_port, "/boards/mv/rank?page=1", masters, nm); /* m2's record among them */
    for (int i = 0; i < nr; i++)
        replica_lag(all[i], 5000);
    double stale0 = http_metric(g_port, "rankd_redis_replica_reads_total{to=\"stale\"}");
    int64_t v = 0;
    write_score(g_port, board, "m2", 500, 77, &v);
    char path[160];
    int rec = -1;
    /* plain reads: the replica's board (the write not there yet) */
    ck_assert_double_eq(read_score(g_port, "/boards/mv/members/m2", "m2", &rec), 102);
    ck_assert_int_eq(rec, 2);
    ck_assert_double_eq(read_score(g_port, "/boards/mv/rank?page=1", "m2", &rec), 102);
    /* with min_version: the write */
    snprintf(path, sizeof(path), "/boards/mv/members/m2?min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    snprintf(path, sizeof(path), "/boards/mv/members/m2/around?size=3&min_version=%lld",
             (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    snprintf(path, sizeof(path), "/boards/mv/rank?page=1&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    /* the other reads of one board: a plain one is the replica's, with min_version the write */
    ck_assert_double_eq(read_score(g_port, "/boards/mv/members?ids=m2", "m2", &rec), 102);
    snprintf(path, sizeof(path), "/boards/mv/members?ids=m2&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    snprintf(path, sizeof(path), "/boards/mv/top?percent=20&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    snprintf(path, sizeof(path), "/boards/mv/rank?min=400&max=600&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m2", &rec), 500);
    ck_assert_int_eq(rec, 77);
    ck_assert_double_ge(
        http_metric(g_port, "rankd_redis_replica_reads_total{to=\"stale\"}") - stale0, 6);
    for (int i = 0; i < nr; i++)
        replica_unlag(all[i]);
    /* caught up: a plain read shows it too */
    int64_t until = util_now_ms() + 5000;
    while (read_score(g_port, "/boards/mv/members/m2", "m2", NULL) != 500 && util_now_ms() < until)
        usleep(20000);
    ck_assert_double_eq(read_score(g_port, "/boards/mv/members/m2", "m2", &rec), 500);
}
END_TEST

static void tweak_cache_apart(struct config *cfg)
{
    cfg->read_from_replicas = 1;
    cluster_proc_url(&g_cluster, cfg->cache_url_text, sizeof(cfg->cache_url_text));
    ck_assert_int_eq(config_parse_redis_url(cfg->cache_url_text, &cfg->cache_redis), 0);
}

/* Pages cached in a Redis of their own (--cache-redis, here the same cluster): a miss is
 * computed with page.lua on the data store, by a replica; after a write, with every replica
 * lagging, a page read with ?min_version= is computed from the master (the replica's rows were
 * older: the fill's first request takes its own value, so the rows it is given must be new
 * enough), cached with its stamp and served with the write. */
START_TEST(test_min_version_cached_apart)
{
    rankd_stop(g_app);
    g_app = rankd_test_start_with(g_redis.port, TEST_TOKEN, tweak_cache_apart, NULL);
    g_port = rankd_port(g_app);
    const char *board = "ca";
    for (int i = 0; i < 5; i++) {
        char id[16];
        snprintf(id, sizeof(id), "m%d", i);
        write_score(g_port, board, id, 100 + i, i, NULL);
    }
    int master, replicas[4];
    pid_t pids[4];
    ck_assert_int_ge(slot_nodes(crc16_key_slot(board, strlen(board)), &master, replicas, pids, 4),
                     1);
    /* the page is computed (a miss, every second: its TTL) on the replica */
    wait_replica_reads(g_port, "/boards/ca/rank?page=1", replicas[0], 10000);
    int masters[CLUSTER_PROC_NODES], all[CLUSTER_PROC_NODES], nm, nr;
    cluster_roles(masters, &nm, all, &nr);
    for (int i = 0; i < nr; i++)
        replica_lag(all[i], 5000);
    int64_t v = 0;
    write_score(g_port, board, "m1", 700, 70, &v);
    char path[160];
    int rec = -1;
    snprintf(path, sizeof(path), "/boards/ca/rank?page=1&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "m1", &rec), 700);
    ck_assert_int_eq(rec, 70);
    ck_assert_double_ge(http_metric(g_port, "rankd_redis_replica_reads_total{to=\"stale\"}"), 1);
    /* and that page is the one cached now: a plain read within its TTL shows it too */
    ck_assert_double_eq(read_score(g_port, "/boards/ca/rank?page=1", "m1", NULL), 700);
    for (int i = 0; i < nr; i++)
        replica_unlag(all[i]);
}
END_TEST

/* The board's replica stopped (SIGSTOP) under a reader: every read a 200, none slower than the
 * replica's wait and the master's answer; the reads fall back (counted); once it runs again, the
 * reads go back to it. */
START_TEST(test_replica_stopped)
{
    const char *board = "st";
    live_board(g_port, board, 5);
    int master, replicas[4];
    pid_t pids[4];
    ck_assert_int_ge(slot_nodes(crc16_key_slot(board, strlen(board)), &master, replicas, pids, 4),
                     1);
    wait_replica_reads(g_port, "/boards/st/members/m1", replicas[0], 10000);
    double fb0 = http_metric(g_port, "rankd_redis_replica_reads_total{to=\"fallback\"}");
    read_through(g_port, "/boards/st/members/m1", 3000, sig_stop, &pids[0], "replica stopped");
    ck_assert_int_eq(kill(pids[0], SIGCONT), 0);
    ck_assert_double_gt(http_metric(g_port, "rankd_redis_replica_reads_total{to=\"fallback\"}"),
                        fb0);
    wait_replica_reads(g_port, "/boards/st/members/m1", replicas[0], 10000);
}
END_TEST

/* The board's replica killed (SIGKILL) under a reader: every read a 200, fast; started again, it
 * rejoins, resyncs, and the reads go back to it. */
START_TEST(test_replica_killed)
{
    const char *board = "kl";
    live_board(g_port, board, 5);
    int master, replicas[4];
    pid_t pids[4];
    ck_assert_int_ge(slot_nodes(crc16_key_slot(board, strlen(board)), &master, replicas, pids, 4),
                     1);
    wait_replica_reads(g_port, "/boards/kl/members/m1", replicas[0], 10000);
    read_through(g_port, "/boards/kl/members/m1", 2000, sig_kill, &pids[0], "replica killed");
    ck_assert_int_eq(cluster_proc_restart(&g_cluster, replicas[0]), 0);
    ck_assert_int_eq(cluster_proc_wait(&g_cluster, 30), 0);
    wait_replica_reads(g_port, "/boards/kl/members/m1", replicas[0], 15000);
}
END_TEST

Suite *replicas_suite(void)
{
    const struct it_timed_case cases[] = {
        {"reads_on_replicas", test_reads_on_replicas, 60},
        {"min_version_lagging", test_min_version_on_lagging_replica, 60},
        {"min_version_cached_apart", test_min_version_cached_apart, 60},
        {"replica_stopped", test_replica_stopped, 60},
        {"replica_killed", test_replica_killed, 90},
    };
    return it_suite_with("replicas", cases, sizeof(cases) / sizeof(cases[0]), rr_setup);
}

/* ================================================================ Redis Sentinel */

#define SENTINEL_SCRIPT "scripts/sentinel-fixture.sh"

struct sentinels {
    char dir[128];
    int primary, replica, sentinel[3];
    pid_t primary_pid, replica_pid;
};

static char g_url[256];
static char g_dir[128];

static int run_script(const char *verb, const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(SENTINEL_SCRIPT, SENTINEL_SCRIPT, verb, dir, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        ;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void stop_at_exit(void)
{
    if (g_dir[0])
        run_script("stop", g_dir);
}

static void sentinels_start(struct sentinels *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->dir, sizeof(s->dir), "/tmp/rankd-sentinel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    snprintf(g_dir, sizeof(g_dir), "%s", s->dir);
    atexit(stop_at_exit);
    ck_assert_msg(run_script("start", s->dir) == 0, "%s start %s failed", SENTINEL_SCRIPT, s->dir);
    char path[200];
    snprintf(path, sizeof(path), "%s/ports", s->dir);
    FILE *f = fopen(path, "r");
    ck_assert(f && fscanf(f, "%d %d %d %d %d", &s->primary, &s->replica, &s->sentinel[0],
                          &s->sentinel[1], &s->sentinel[2]) == 5);
    fclose(f);
    snprintf(path, sizeof(path), "%s/pids", s->dir);
    f = fopen(path, "r");
    int p0 = 0, p1 = 0;
    ck_assert(f && fscanf(f, "%d %d", &p0, &p1) == 2);
    fclose(f);
    s->primary_pid = p0;
    s->replica_pid = p1;
    snprintf(g_url, sizeof(g_url),
             "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/mymaster", s->sentinel[0],
             s->sentinel[1], s->sentinel[2]);
}

static void sentinels_stop(struct sentinels *s)
{
    run_script("stop", s->dir);
    g_dir[0] = '\0';
}

static void tweak_sentinel(struct config *cfg)
{
    ck_assert_int_eq(config_parse_redis_url(g_url, &cfg->redis), 0);
    cfg->read_from_replicas = 1;
}

/* The primary's port as sentinel 0 says now. */
static int primary_now(const struct sentinels *s)
{
    redisReply *r = node_cmd(s->sentinel[0], "SENTINEL get-master-addr-by-name %s", "mymaster");
    int port = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? atoi(r->element[1]->str) : 0;
    freeReplyObject(r);
    return port;
}

/* Reads on the replica the sentinels list (EVALSHA_RO there, none on the primary), writes on
 * the primary; the replica lagging: a plain read shows its older board, one with min_version
 * the write. */
START_TEST(test_sentinel_reads_and_min_version)
{
    struct sentinels s;
    sentinels_start(&s);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak_sentinel, NULL);
    int port = rankd_port(app);
    live_board(port, "sr", 10);
    wait_replica_reads(port, "/boards/sr/members/m1", s.replica, 10000);
    long long p_ro = node_calls(s.primary, "evalsha_ro"), p_sha = node_calls(s.primary, "evalsha");
    long long r_ro = node_calls(s.replica, "evalsha_ro");
    const int n = 20;
    for (int i = 0; i < n; i++) {
        int rec = -1;
        ck_assert_double_eq(read_score(port, "/boards/sr/members/m4", "m4", &rec), 104);
        ck_assert_int_eq(rec, 4);
        ck_assert_double_eq(read_score(port, "/boards/sr/members/m4/around?size=3", "m4", NULL),
                            104);
        ck_assert_double_eq(read_score(port, "/boards/sr/rank?page=1", "m9", NULL), 109);
    }
    ck_assert_int_eq(node_calls(s.replica, "evalsha_ro") - r_ro, 3 * n);
    ck_assert_int_eq(node_calls(s.primary, "evalsha_ro") - p_ro, 0);
    ck_assert_int_eq(node_calls(s.primary, "evalsha") - p_sha, 0);
    replica_lag(s.replica, 5000);
    int64_t v = 0;
    write_score(port, "sr", "m4", 900, 44, &v);
    ck_assert_int_eq(node_calls(s.primary, "evalsha") - p_sha, 1); /* the write: the primary's */
    ck_assert_double_eq(read_score(port, "/boards/sr/members/m4", "m4", NULL), 104);
    char path[160];
    int rec = -1;
    snprintf(path, sizeof(path), "/boards/sr/members/m4?min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(port, path, "m4", &rec), 900);
    ck_assert_int_eq(rec, 44);
    snprintf(path, sizeof(path), "/boards/sr/rank?page=1&min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(port, path, "m4", NULL), 900);
    ck_assert_double_ge(http_metric(port, "rankd_redis_replica_reads_total{to=\"stale\"}"), 2);
    replica_unlag(s.replica);
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* The replica stopped, then killed, under a reader: every read a 200, none slow beyond the
 * replica's wait; back (SIGCONT), the reads go to it again. */
START_TEST(test_sentinel_replica_down)
{
    struct sentinels s;
    sentinels_start(&s);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak_sentinel, NULL);
    int port = rankd_port(app);
    live_board(port, "sd", 5);
    wait_replica_reads(port, "/boards/sd/members/m1", s.replica, 10000);
    read_through(port, "/boards/sd/members/m1", 3000, sig_stop, &s.replica_pid,
                 "sentinel, "
                 "replica stopped");
    ck_assert_int_eq(kill(s.replica_pid, SIGCONT), 0);
    ck_assert_double_gt(http_metric(port, "rankd_redis_replica_reads_total{to=\"fallback\"}"), 0);
    wait_replica_reads(port, "/boards/sd/members/m1", s.replica, 10000);
    read_through(port, "/boards/sd/members/m1", 2000, sig_kill, &s.replica_pid,
                 "sentinel, replica killed");
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

/* SENTINEL FAILOVER: the replica becomes the primary and the old primary its replica; reads go
 * on (200) and go, once the sentinels list it, to the old primary, now a replica (the list read
 * again at the switch and every second). */
START_TEST(test_sentinel_replicas_after_failover)
{
    struct sentinels s;
    sentinels_start(&s);
    struct rankd *app = rankd_test_start_with(s.primary, TEST_TOKEN, tweak_sentinel, NULL);
    int port = rankd_port(app);
    live_board(port, "sf", 5);
    wait_replica_reads(port, "/boards/sf/members/m1", s.replica, 10000);
    redisReply *r = node_cmd(s.sentinel[0], "SENTINEL FAILOVER %s", "mymaster");
    ck_assert_msg(r && r->type == REDIS_REPLY_STATUS, "SENTINEL FAILOVER failed");
    freeReplyObject(r);
    int64_t t0 = util_now_ms();
    while (primary_now(&s) != s.replica && util_now_ms() - t0 < 30000)
        usleep(50000);
    ck_assert_int_eq(primary_now(&s), s.replica);
    /* the old primary: a replica of the new one, in sync; then the sentinels list it */
    int64_t until = util_now_ms() + 30000;
    long long ro0 = node_calls(s.primary, "evalsha_ro");
    int served = 0;
    while (!served && util_now_ms() < until) {
        long st = get_status(port, "/boards/sf/members/m1");
        ck_assert_msg(st == 200 || st == 503, "a read during the failover: %ld", st);
        served = node_calls(s.primary, "evalsha_ro") > ro0;
        usleep(50000);
    }
    fprintf(stderr,
            "replicas: sentinel failover: reads on the old primary (a replica now) %.1f s "
            "after the failover\n",
            (double)(util_now_ms() - t0) / 1000);
    ck_assert_msg(served, "no read reached the old primary, now a replica, in 30 s");
    write_score(port, "sf", "m1", 7, 7, NULL); /* and writes go to the new primary */
    rankd_stop(app);
    sentinels_stop(&s);
}
END_TEST

Suite *sentinel_replicas_suite(void)
{
    Suite *s = suite_create("sentinel_replicas");
    TCase *tc = tcase_create("reads_and_min_version");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sentinel_reads_and_min_version);
    suite_add_tcase(s, tc);
    tc = tcase_create("replica_down");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sentinel_replica_down);
    suite_add_tcase(s, tc);
    tc = tcase_create("failover");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_sentinel_replicas_after_failover);
    suite_add_tcase(s, tc);
    return s;
}

/* ================================================================ the parameter, one Redis */

/* ?min_version= on member and around reads: a write counter 1..2^53-1 as on pages (0, junk or
 * given twice: 400 invalid_parameter); on one Redis every read is the primary's, so a version
 * the board has reached or not, the answer is the board as it is. */
START_TEST(test_member_min_version_param)
{
    int64_t v = 0;
    write_score(g_port, "mp", "a", 5, 1, &v);
    static const char *const bad[] = {
        "/boards/mp/members/a?min_version=0",
        "/boards/mp/members/a?min_version=x",
        "/boards/mp/members/a?min_version=1&min_version=1",
        "/boards/mp/members/a/around?min_version=-1",
        "/boards/mp/members/a/around?min_version=9007199254740992",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct http_result r;
        ck_assert_int_eq(http_get(g_port, bad[i], &r), 0);
        ck_assert_msg(r.status == 400 && strcmp(http_error_code(&r), "invalid_parameter") == 0,
                      "GET %s -> %ld %s", bad[i], r.status, r.body);
        http_result_free(&r);
    }
    char path[128];
    snprintf(path, sizeof(path), "/boards/mp/members/a?min_version=%lld", (long long)v);
    ck_assert_double_eq(read_score(g_port, path, "a", NULL), 5);
    snprintf(path, sizeof(path), "/boards/mp/members/a/around?min_version=%lld", (long long)v + 9);
    ck_assert_double_eq(read_score(g_port, path, "a", NULL), 5);
}
END_TEST

Suite *replicas_api_suite(void)
{
    const struct it_case cases[] = {
        {"member_min_version_param", test_member_min_version_param},
    };
    return it_suite("replicas_api", cases, sizeof(cases) / sizeof(cases[0]));
}
