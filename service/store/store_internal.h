/*
 * store_internal.h -- what the store modules (store.c, store_async.c, store_conn.c, store_reply.c,
 * store_cluster.c) share with
 * each other and with nobody else: the hiredis side of the store. With them (and
 * store_preflight.c, whose probe connection is its own), the only code of rankd that includes
 * hiredis; the rest of rankd sees store.h, store_async.h and store_reply.h (an opaque store and
 * connection, registered scripts, struct store_reply).
 */
#ifndef RANKD_STORE_INTERNAL_H
#define RANKD_STORE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "store.h"
#include "store_async.h"
#include "store_cluster.h"
#include "store_reply.h"

/**
 * hiredis 0.14.1's reader builds struct store_reply objects directly with these
 * (ctx->reader->fn = store_reply_functions(), set by store_dial): every reply a context of the
 * store reads, and every reply object its reader frees (a partial reply on a protocol error,
 * redisFree), is a store_reply, freed with store_reply_free (never freeReplyObject). Static;
 * never NULL.
 */
redisReplyObjectFunctions *store_reply_functions(void);

/**
 * A new connection (the event loops' connections, store_async.h): connect timeout, AUTH, SELECT,
 * command timeouts, replies built as store_reply, and on the store's first successful dial
 * SCRIPT LOAD of every registered script (a script registered later: on the next dial); the
 * store's dial back-off applies: inside the back-off window it fails at once. May block up to the
 * connect timeout plus the set-up commands: never call it on an HTTP event thread. Returns the
 * context (the caller owns it and frees it with redisFree) or NULL with *err set (store.h's
 * codes).
 */
redisContext *store_dial(struct store *st, int *err);

/** store_dial to a node of a cluster, `host`:`port` (NULL: the store's own address, as
 *  store_dial): no SELECT; the back-off is the node's own (a dead master holds up no dial to the
 *  others) and so are the scripts loaded (each node its SCRIPT LOADs, once). */
redisContext *store_dial_at(struct store *st, const char *host, int port, int *err);

/** store_dial_at for a replica that reads are sent to (store_config.read_replicas): on a
 *  cluster READONLY after AUTH (a replica serves reads of its master's slots only then); with
 *  Sentinel ROLE must say a replica whose link to its primary is up ("connected"), then SELECT.
 *  The node's own back-off and scripts, as store_dial_at. */
redisContext *store_dial_replica(struct store *st, const char *host, int port, int *err);

/** What a read that may go to a replica did, for store_replica_counts. */
enum store_replica_event {
    STORE_REPLICA_SENT = 0, /**< sent to a replica */
    STORE_REPLICA_FALLBACK, /**< the replica failed it: sent to the primary */
    STORE_REPLICA_NONE,     /**< no replica usable: sent to the primary */
    STORE_REPLICA_STALE,    /**< older than a min_version asked: sent again to the primary */
    STORE_REPLICA_FOUND,    /**< a replica list read */
};

/** Count one (lock-free). */
void store_replica_note(struct store *st, enum store_replica_event e);

/**
 * Sentinel (store_config.read_replicas): the replicas reads go to, as the sentinels listed them
 * last (store_replicas.h), shared by every event loop's connections like the slot map: immutable
 * once installed, by reference, with a version that changes at each install.
 */
struct store_replica_list {
    atomic_int refs;
    uint64_t version;
    int n;
    struct store_cluster_node *nodes; /**< nodes[0..n), owned */
};

/** The current list with a reference (store_replica_list_put), or NULL before any. */
struct store_replica_list *store_replica_list_get(struct store *st);
void store_replica_list_put(struct store_replica_list *l);

/** The current list's version, 0 before any. Lock-free. */
uint64_t store_replica_list_version(const struct store *st);

/** Make nodes[0..n) (copied) the current list, unless it is the current one already (the same
 *  nodes in the same order). 0 or -ENOMEM. */
int store_replica_list_install(struct store *st, const struct store_cluster_node *nodes, int n);

/** 1 when the slot map was installed more than `ms` ago (or never): a store that reads from
 *  replicas reads it again that often, to learn replicas that joined or left. */
int store_map_older_than(const struct store *st, int64_t ms);

/** Count one cluster answer for store_cluster_counts: a store_cluster_redirect_kind (MOVED, ASK,
 *  TRYAGAIN, DOWN), or STORE_CLUSTER_OTHER for a slot map read. Lock-free. */
void store_cluster_note(struct store *st, int kind);

/** 1 when the store finds its primary through Redis Sentinel (store_sentinel.h). */
int store_sentinel_mode(const struct store *st);

/** A cluster's seed i (0..): 0 with *host (the store's) and *port, or -ENOENT past the last. */
int store_seed(const struct store *st, int i, const char **host, int *port);

/**
 * A cluster's slot map as the store holds it: immutable once installed, shared by every
 * connection of the store (each event loop's) by reference. Installed by store_map_install (a
 * CLUSTER SLOTS reply) or store_map_moved (a MOVED: a copy with one slot changed); each gets a
 * new version, so a connection sees a change with one atomic load (store_map_version) and takes
 * the new map under the store's lock only then (store_map_get).
 */
struct store_map {
    atomic_int refs;               /**< the store's reference and each store_map_get */
    uint64_t version;              /**< 1, 2, ...: the order of installs */
    struct store_cluster_map *map; /**< owned */
};

/** The current map with a reference (give it back with store_map_put), or NULL before any. */
struct store_map *store_map_get(struct store *st);

/** Give a reference back (the last frees the map). NULL: no-op. Any thread. */
void store_map_put(struct store_map *m);

/** The current map's version, 0 before any. Lock-free. */
uint64_t store_map_version(const struct store *st);

/** Make `map` (taken, even on failure) the current one. 0 or -ENOMEM. */
int store_map_install(struct store *st, struct store_cluster_map *map);

/** A MOVED: slot `slot` is `host`:`port`'s now, in a new current map (nothing when it says so
 *  already). 0, -ENOMEM or -EPROTO (store_cluster_map_set). */
int store_map_moved(struct store *st, int slot, const char *host, int port);

/** 1 when the caller may refresh the map now (CLUSTER SLOTS): none under way, and none begun in
 *  the last REFRESH_EVERY_MS (100 ms) of this store; then store_map_refresh_end when it ends,
 *  whatever the outcome. */
int store_map_refresh_begin(struct store *st);
void store_map_refresh_end(struct store *st);

/** The SHA1 of a registered script as this store's SCRIPT LOAD returned it: 0 and out (40 hex
 *  digits and a NUL), or -ENOENT before a dial of this store loaded it (send EVAL of the body).
 *  Lock-free; any thread. */
int store_script_sha(const struct store *st, const struct store_script *s,
                     char out[STORE_SHA_LEN + 1]);

/** 1 when a call of s on st must reach the replicas of --write-replicas: s was registered with
 *  store_script_register_write and st has write_replicas > 0. Lock-free. */
int store_script_waits(const struct store *st, const struct store_script *s);

/** store_config.write_replicas (0: no WAIT). */
int store_write_replicas(const struct store *st);

/** A registered script's body (static, as registered). */
const char *store_script_body(const struct store_script *s);

/** A registered script's continuation on a cluster (store_async_script_then), or NULL. */
store_async_then_fn store_script_then_of(const struct store_script *s);

#endif
