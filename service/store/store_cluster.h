/*
 * store_cluster.h -- Redis Cluster for the store: the slot map and the redirects (pure: no
 * sockets, no threads; the connections that use them are store_async's).
 *
 * Source: the Redis Cluster specification (redis.io/docs/reference/cluster-spec), sections
 * "Keys distribution model" (16384 slots, crc16.h), "Redirection and resharding" (MOVED, ASK,
 * ASKING, TRYAGAIN) and "Client first connection and handling of redirections" (a client keeps
 * a map of slots to nodes, fills it with CLUSTER SLOTS at start and again on a MOVED; the map
 * may be stale, a MOVED corrects it).
 *
 * The slot map: every slot's master, from a CLUSTER SLOTS reply. A CLUSTER SLOTS reply is an
 * array of ranges, each [first slot, last slot, master, replica...], each node
 * [host, port, node id, ...] (Redis 7 adds a fourth element of metadata, ignored here). An empty
 * host means the node that answered (Redis 7 "unknown endpoint", cluster-preferred-endpoint-type):
 * the caller names that node's host. Slots no range covers have no master (STORE_CLUSTER_NONE):
 * a request for one is refused like CLUSTERDOWN (the cluster does not serve it either).
 *
 * The map also keeps each range's replicas (the reads of --read-from-replicas, store_async.h):
 * the first STORE_CLUSTER_REPLICAS_MAX a range lists. Redis 7.0 lists only the replicas it deems
 * available (cluster.c isReplicaAvailable: not failed, and a replication offset other than 0, so a
 * replica of a master that has received no write yet is not listed); a MOVED (a slot that
 * changed master) forgets the slot's replicas until the map is read again.
 *
 * Redirects (the specification's error replies):
 *   MOVED <slot> <host>:<port>   the slot is served by that node now, for good: refresh the map,
 *                                send the command there
 *   ASK <slot> <host>:<port>     this key is being migrated: send ASKING then the command to
 *                                that node, once; the map does not change
 *   TRYAGAIN ...                 a multi-key command during a migration, its keys split between
 *                                the two nodes: nothing ran
 *   CLUSTERDOWN ...              the cluster (or the slot) is not served now: nothing ran
 * The host may be empty ("MOVED 3999 :6381": the node that answered's host) or an IPv6 address
 * without brackets (the port follows the last ':').
 *
 * Ownership: a map is the caller's (store_cluster_map_free). Thread-safe (no shared state).
 */
#ifndef RANKD_STORE_CLUSTER_H
#define RANKD_STORE_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "crc16.h"
#include "store_reply.h"

#define STORE_CLUSTER_HOST_MAX 256   /**< bytes of a node's host, with the NUL */
#define STORE_CLUSTER_NODES_MAX 1024 /**< masters one map holds (the spec suggests <= 1000) */
#define STORE_CLUSTER_NONE 0xffff    /**< owner of a slot no master serves */
#define STORE_CLUSTER_REPLICAS_MAX 4 /**< replicas kept per slot range (the rest are not read) */

/** A master: where to dial it. */
struct store_cluster_node {
    char host[STORE_CLUSTER_HOST_MAX];
    int port; /**< 1..65535 */
};

/** The replicas of one slot range: indexes into store_cluster_map.replicas. */
struct store_cluster_set {
    int n;                                     /**< 1..STORE_CLUSTER_REPLICAS_MAX */
    uint16_t node[STORE_CLUSTER_REPLICAS_MAX]; /**< node[0..n) */
};

/** Every slot's master, and its replicas. */
struct store_cluster_map {
    size_t nnodes;                       /**< distinct masters, nodes[0..nnodes) */
    struct store_cluster_node *nodes;    /**< owned */
    uint16_t owner[CRC16_SLOTS];         /**< slot -> index into nodes, or STORE_CLUSTER_NONE */
    size_t covered;                      /**< slots with a master */
    size_t nreplicas;                    /**< distinct replicas, replicas[0..nreplicas) */
    struct store_cluster_node *replicas; /**< owned (NULL: none) */
    size_t nsets;                        /**< sets[0..nsets): one per range with replicas */
    struct store_cluster_set *sets;      /**< owned (NULL: none) */
    uint16_t set_of[CRC16_SLOTS]; /**< slot -> index into sets, or STORE_CLUSTER_NONE (none) */
};

/**
 * Build a map from a CLUSTER SLOTS reply `r` (borrowed); an empty host in it is `self_host`
 * (the host of the node that answered). 0 and *out (free with store_cluster_map_free), -EPROTO
 * for a reply of another shape (an error reply, a range out of 0..16383, a node without a valid
 * port, more than STORE_CLUSTER_NODES_MAX masters), -ENOMEM.
 */
int store_cluster_map_parse(const struct store_reply *r, const char *self_host,
                            struct store_cluster_map **out);

/** Free a map. NULL is a no-op. */
void store_cluster_map_free(struct store_cluster_map *m);

/** A copy of m (NULL: an empty map, no slot served). NULL on ENOMEM. */
struct store_cluster_map *store_cluster_map_copy(const struct store_cluster_map *m);

/** Slot `slot` is served by `host`:`port` now (a MOVED): added as a master when new; a slot
 *  whose master changes has no replicas known any more. 0, or -ENOMEM / -EPROTO (past
 *  STORE_CLUSTER_NODES_MAX, a host too long) with m unchanged. */
int store_cluster_map_set(struct store_cluster_map *m, int slot, const char *host, int port);

/** The index of `host`:`port` among m's masters, or -1. */
int store_cluster_map_find(const struct store_cluster_map *m, const char *host, int port);

/** The replicas of `slot` (0..16383) as m lists them: NULL for none. */
const struct store_cluster_set *store_cluster_map_replicas(const struct store_cluster_map *m,
                                                           int slot);

/** What an error reply asks of the client. */
enum store_cluster_redirect_kind {
    STORE_CLUSTER_OTHER = 0, /**< not a cluster error: the caller's own */
    STORE_CLUSTER_MOVED,
    STORE_CLUSTER_ASK,
    STORE_CLUSTER_TRYAGAIN,
    STORE_CLUSTER_DOWN, /**< CLUSTERDOWN */
};

/** A redirect: where to go for MOVED and ASK. */
struct store_cluster_redirect {
    int kind;                          /**< enum store_cluster_redirect_kind */
    int slot;                          /**< MOVED, ASK: 0..16383; else -1 */
    char host[STORE_CLUSTER_HOST_MAX]; /**< MOVED, ASK: "" when the reply named none (the node
                                        *   that answered); else "" */
    int port;                          /**< MOVED, ASK; else 0 */
};

/**
 * Read an error reply's text err[0..len) (without the '-'): *out, always filled. Returns
 * out->kind; a MOVED or ASK whose slot, host or port is malformed is STORE_CLUSTER_OTHER (an
 * error for the caller, never a redirect to nowhere).
 */
int store_cluster_redirect_parse(const char *err, size_t len, struct store_cluster_redirect *out);

#endif
