/*
 * cluster.h -- integration-test support for Redis Cluster: a real cluster of
 * scripts/cluster-fixture.sh (3 masters, a replica each, on free loopback ports), and admin
 * connections that route commands to the node of their slot, so a test's set-up and checks read
 * the same in both modes.
 */
#ifndef RANKD_TEST_CLUSTER_H
#define RANKD_TEST_CLUSTER_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#define CLUSTER_PROC_NODES 6 /**< scripts/cluster-fixture.sh: 3 masters, a replica each */

/** A Redis Cluster started by scripts/cluster-fixture.sh (run from the source tree's root). */
struct cluster_proc {
    char dir[128];                  /**< mkdtemp directory: the nodes' files, ports, pids */
    int ports[CLUSTER_PROC_NODES];  /**< as created: [0..3) the masters, [3..6) replicas */
    pid_t pids[CLUSTER_PROC_NODES]; /**< the nodes' processes, in the order of ports */
};

/** Start it (a few seconds: the nodes, CLUSTER create, cluster_state:ok, replicas synced).
 *  0, or -1 after printing why. */
int cluster_proc_start(struct cluster_proc *c);

/** Stop every node and remove nothing (the directory holds their logs). Safe twice. */
void cluster_proc_stop(struct cluster_proc *c);

/** Wait until every node still running says cluster_state:ok (a failover's end). 0 or -1. */
int cluster_proc_wait(const struct cluster_proc *c, int seconds);

/** The process of node i (c->ports[i]) now: its pid file's (a node a test restarted has a new
 *  one, and Check runs each test in a child of its own, so c->pids may be stale), else c->pids[i].
 */
pid_t cluster_proc_pid(const struct cluster_proc *c, int i);

/** Start node `port` again after a test killed it (it rejoins with its nodes.conf); c->pids and
 *  the directory's pids file follow. 0 or -1. */
int cluster_proc_restart(struct cluster_proc *c, int port);

/** "redis-cluster://127.0.0.1:<master>,..." naming the three first masters. */
void cluster_proc_url(const struct cluster_proc *c, char *out, size_t len);

/**
 * Point the fixture at cluster c (NULL: back to single Redis): rankd_test_start* and
 * rankd_proc_start* given one of its ports start rankd with cluster_proc_url, and an admin
 * connection to one of its nodes (redis_admin) routes each redis_admin_cmd as a cluster client
 * would: a command with a key to the master of its slot (following MOVED and ASK), FLUSHALL,
 * FLUSHDB and SCRIPT to every master, CONFIG and ACL to every node, DBSIZE summed over the
 * masters, SCAN with a MATCH pattern that has a hash tag to that tag's master, other commands
 * without a key to the node connected. c is borrowed until reset.
 */
void fixture_use_cluster(const struct cluster_proc *c);

/** The cluster fixture_use_cluster set, or NULL. */
const struct cluster_proc *fixture_cluster(void);

/** For pipelines of one slot's keys: an admin connection to the master serving `key` now (kept
 *  by the fixture for the test's process: do not free it); `admin` itself outside a cluster. */
redisContext *redis_admin_for_key(redisContext *admin, const char *key);

/** A number of `INFO section`, the line "\n<field><number>" (field ends with ':' or '='): that
 *  server's, or on a cluster (c a node of it) the sum over its masters; -1 when absent. */
long long redis_info_field(redisContext *c, const char *section, const char *field);

/** redis_admin_cmd's routed form for an admin connection to a node of the cluster in use:
 *  NULL when `c` is not one (the caller sends it as it is). The reply must be freed. */
redisReply *cluster_admin_vcmd(redisContext *c, const char *fmt, va_list ap);

#endif
