/*
 * store_replicas.h -- the replicas that reads go to with --read-from-replicas on a primary found
 * through Redis Sentinel (on a Redis Cluster they come with the slot map: store_cluster.h).
 *
 * Source: the Redis Sentinel documentation (redis.io/docs/management/sentinel, "Sentinel API":
 * `SENTINEL REPLICAS <master name>`, one flat array of field/value pairs per replica: name, ip,
 * port, runid, flags, ..., master-link-status, master-host, master-port, ...).
 *
 * A replica is used only when the sentinel judges it healthy: its flags name no s_down, o_down,
 * disconnected nor promoted (a replica under promotion is about to be the primary), and its
 * master-link-status is "ok" (its link to the primary is up, so it is not serving data from
 * before a lost link). The store's connections to it check ROLE again at each dial
 * (store_dial_replica).
 *
 * A thread per store that reads from replicas (one per rankd process, the reads' store) asks
 * the sentinels in turn every STORE_REPLICAS_EVERY_MS, and at once when the primary epoch moves
 * (+switch-master heard, or READONLY read: store_sentinel.h), and installs the list in the
 * store (store_replica_list_install) when it changed; the event loops' connections take it from
 * there (store_async.c). A list no sentinel answers for stays as it was (the reads' fallback to
 * the primary covers a replica that went away meanwhile). Thread-safe.
 */
#ifndef RANKD_STORE_REPLICAS_H
#define RANKD_STORE_REPLICAS_H

#include "store_cluster.h"
#include "store_reply.h"
#include "store_sentinel.h"

#define STORE_REPLICAS_EVERY_MS 1000 /**< the sentinels are asked for the replicas this often */
#define STORE_REPLICAS_MAX 16        /**< replicas kept (the first listed) */

struct store;

/** The healthy replicas of a SENTINEL REPLICAS reply `r` into out[0..max): how many, or -EPROTO
 *  for a reply of another shape (an error: an unknown master name). Pure. */
int store_replicas_parse(const struct store_reply *r, struct store_cluster_node *out, int max);

struct store_replica_watch;

/** Start the thread for `st` (borrowed: it outlives the watch; cfg's strings are copied). NULL
 *  on ENOMEM or no thread. */
struct store_replica_watch *store_replica_watch_start(struct store *st,
                                                      const struct store_sentinel_cfg *cfg);

/** Stop and free it (waits for the thread: at most about a sentinel timeout). NULL: no-op. */
void store_replica_watch_stop(struct store_replica_watch *w);

#endif
