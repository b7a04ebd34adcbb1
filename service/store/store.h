/*
 * store.h -- where Redis is and how to reach it: the dial, registered scripts by SHA, fault
 * mapping.
 *
 * With store_async.h and store_reply.h, all the rest of rankd knows of Redis: an opaque store and
 * connection, scripts by handle, replies as struct store_reply. Only the store modules include
 * hiredis (store_internal.h).
 *
 * The blocking half of the store, kept for the one thing that blocks: a dial (connect, AUTH,
 * SELECT and, on a store's first dial, SCRIPT LOAD of every script) runs on a short-lived helper
 * thread of the event loop that asked for it (store_async.h) and never on an event thread; the
 * connection is then handed to the loop, which makes it non-blocking. Requests never use a
 * blocking connection: there is no pool. Dialling backs off (50 ms, then 100 ms) store-wide after
 * a failure, so while Redis is down a dial fails in microseconds with -ECONNREFUSED instead of
 * each waiting for a connect timeout, and a probe goes through at least every 100 ms: the 503s
 * stop within about 100 ms of Redis answering again.
 *
 * Scripts: the store knows none by name, nor what they do. Each owner (board.c, page_cache.c,
 * admin.c) registers its bodies once at start-up (store_script_register) and runs them by the
 * handle it got back, on any store's connections (store_async_script). A store loads the
 * registered scripts with SCRIPT LOAD on its first dial; calls are EVALSHA, or EVAL of the body
 * while this store has no SHA for the script yet. A NOSCRIPT reply (SCRIPT FLUSH, a restarted or
 * failed-over Redis) is answered with EVAL of the full body, which also reloads the script for the
 * next call.
 *
 * Errors (negative errno), as the event loops' connections report them to their callers:
 *   -ECONNREFUSED  Redis unreachable now (dial failed, or inside the back-off window)
 *   -ETIMEDOUT     Redis did not answer in time
 *   -ETIME         a write was sent and not answered in time: it may have run
 *   -ECONNRESET    the connection failed (EOF, reset, killed) AFTER the command was sent: it may
 *                  have run (a write's outcome is unknown; never report it as safe to retry)
 *   -EDQUOT        Redis refused a write with OOM (maxmemory reached, noeviction)
 *   -EROFS         Redis answered READONLY: it is a replica now (the primary changed)
 *   -EIO           I/O or protocol error, or another Redis error reply (LOADING, BUSY...)
 *   -ENOMEM        out of memory
 *   -EREMOTEIO     --write-replicas N: a write ran on the primary, but fewer than N replicas
 *                  acknowledged it within the WAIT timeout (or WAIT failed): it is applied, yet
 *                  a failover now could lose it (never report it as safe to retry; the callers
 *                  judge it from the verdict store_async_unreplicated reads, store_async.h)
 * A Redis error reply reaches its caller as a STORE_REPLY_ERROR object; store_reply_errno
 * (store_reply.h) maps its text to -EDQUOT, -EROFS or -EIO: the one table of them.
 * http.c's errno table (http_errno_rows) gives each its status: 503 for the faults, 507 for
 * -EDQUOT, 500 for -ENOMEM.
 *
 * Thread-safe.
 */
#ifndef RANKD_STORE_H
#define RANKD_STORE_H

#include <stddef.h>

#define STORE_SEEDS_MAX 16 /**< nodes a cluster's configuration names */

/** Where Redis is and how to talk to it. Strings are borrowed for store_new only (copied). */
struct store_config {
    const char *host;       /**< TCP host, or NULL when unix_path is set */
    int port;               /**< TCP port */
    const char *unix_path;  /**< unix socket path, or NULL */
    const char *username;   /**< ACL user for AUTH, or NULL */
    const char *password;   /**< AUTH password, or NULL */
    int db;                 /**< SELECT index, 0..  */
    int timeout_ms;         /**< per command (and each set-up command of a dial), > 0 */
    int connect_timeout_ms; /**< per dial, > 0 */
    int cluster;            /**< 1: a Redis Cluster, found from seed_host/seed_port (host, port,
                             *   unix_path and db are not used; a cluster has database 0 only) */
    const char *sentinel_master;            /**< not NULL: the primary that Redis Sentinels at
                                             *   seed_host/seed_port watch under this name (host, port and
                                             *   unix_path are not used; store_sentinel.h) */
    int nseeds;                             /**< cluster, sentinels: 1..STORE_SEEDS_MAX */
    const char *seed_host[STORE_SEEDS_MAX]; /**< the seeds' (the sentinels') hosts */
    int seed_port[STORE_SEEDS_MAX];         /**< their ports */
    int read_replicas; /**< 1 (--read-from-replicas; a cluster or Sentinel store): the read-only
                        *   scripts (store_script_read_only) and the reads that say so go to a
                        *   replica (store_async.h) */
    /** --write-replicas: groups that must reach N replicas (scripts registered with
     *  store_script_register_write, store_async_send_replicated) are answered only with the
     *  verdict of a WAIT N <timeout_ms / 2> sent after them on their connection: one per flush
     *  of its output buffer, whatever the number of such groups in it (store_async.h). 0: no
     *  WAIT (asynchronous replication). The data Redis' stores only, never the cache Redis'. */
    int write_replicas;
};

struct store;
struct store_script; /**< a registered script (store_script_register); lives as long as the
                      *   process */

#define STORE_SHA_LEN 40     /**< hex digits of a script's SHA1 */
#define STORE_SCRIPTS_MAX 32 /**< scripts one process may register */

/**
 * Register a Lua script body (static: borrowed for the life of the process) and get its handle,
 * for store_async_script on any store. Registering the same text again returns the same handle,
 * so an owner started twice in one process (the tests) registers nothing new. Register before
 * the stores dial (rankd_start): a store's first dial loads what is registered then, and a
 * script registered later goes as EVAL until the store's next dial. Thread-safe. NULL only for a
 * NULL body or past STORE_SCRIPTS_MAX scripts (a bug: asserted).
 */
const struct store_script *store_script_register(const char *body);

/**
 * Mark a registered script as one that writes nothing (its owner does, at registration): such a
 * script may be answered by a replica, as EVALSHA_RO / EVAL_RO (Redis 7.0: a cluster replica in
 * READONLY mode serves only read-only commands), on a store that reads from replicas
 * (store_config.read_replicas). Its body must say `#!lua flags=no-writes`, so that Redis itself
 * refuses any write in it: -EINVAL (and nothing marked) otherwise. 0 once marked. Thread-safe.
 */
int store_script_read_only(const struct store_script *script);

/** 1 when the script is marked read-only. */
int store_script_is_read_only(const struct store_script *script);
/** The same for a script whose writes a client is told of (score writes, settings, deletes,
 *  resets, trims): on a store with write_replicas N > 0 each call is answered only after the
 *  WAIT that follows it in its flush, and its caller judges the verdict
 *  (store_async_unreplicated). A body registered both ways is a bug (asserted). */
const struct store_script *store_script_register_write(const char *body);

/** A new store (no connection is made yet). Returns NULL on ENOMEM. Free with store_free. */
struct store *store_new(const struct store_config *cfg);

/** Free the store. NULL is a no-op. No dial of it may be running. */
void store_free(struct store *st);

/** 1 when the store is a Redis Cluster (store_config.cluster): its callers keep no key of two
 *  slots in one call (schema/redis-keys.md says how the model's keys are laid out then). */
int store_cluster_mode(const struct store *st);

/** The per-command timeout in milliseconds (store_config.timeout_ms). */
int store_timeout_ms(const struct store *st);

/** Count and log a fault seen on a connection of this store (store_async.h's), or in a reply
 *  the caller judged (a script's error reply). */
void store_note_fault(struct store *st, const char *what, const char *detail);

/** What a cluster said since start (store_async.h), for /metrics; all 0 on one Redis. */
struct store_cluster_counts {
    unsigned long moved;     /**< MOVED followed */
    unsigned long ask;       /**< ASK followed */
    unsigned long tryagain;  /**< TRYAGAIN: calls refused (503) */
    unsigned long down;      /**< CLUSTERDOWN: calls refused (503) */
    unsigned long map_reads; /**< slot maps read (CLUSTER SLOTS answered with one) */
};

/** This store's counts (a racy snapshot; any thread). */
void store_cluster_counts(const struct store *st, struct store_cluster_counts *out);

/** 1 when the store sends reads to replicas (store_config.read_replicas). */
int store_read_replicas(const struct store *st);

/** Where the reads that may go to a replica went, since start (store_async.h), for /metrics. */
struct store_replica_counts {
    unsigned long replica;     /**< sent to a replica */
    unsigned long fallback;    /**< a replica did not answer them (down, loading, MASTERDOWN, a
                                *   timeout, CLUSTERDOWN): sent again to the primary */
    unsigned long no_replica;  /**< no replica usable (none known, or every one skipped after a
                                *   failure): sent to the primary */
    unsigned long stale;       /**< reads with min_version that a replica answered older than
                                *   asked: sent again to the primary (store_note_replica_stale) */
    unsigned long discoveries; /**< replica lists read (CLUSTER SLOTS with replicas, SENTINEL
                                *   replicas) */
};

/** This store's counts (a racy snapshot; any thread). */
void store_replica_counts(const struct store *st, struct store_replica_counts *out);

/** Count a read with min_version sent again to the primary: the replica's answer was older. */
void store_note_replica_stale(struct store *st);

/** Count of Redis faults (dial, I/O, timeouts, error replies) since start, for /metrics. */
unsigned long store_error_count(const struct store *st);

/**
 * Note how Redis answered a write that can grow memory (write.lua, create_board.lua, the write
 * probe of /readyz): rc 0 accepted, -EDQUOT refused for memory, -EROFS refused as a replica;
 * other codes (faults, timeouts: no answer) are ignored. Process-wide, lock-free, any thread.
 */
void store_note_write(int rc);

/** The latest noted answer: 0, -EDQUOT or -EROFS (0 before any), for /metrics: it costs no
 *  Redis call, so /metrics stays instant while Redis is slow. */
int store_write_refusal(void);

/** The version of the Redis client library rankd is built with ("0.14.1"), for /metrics'
 *  build information. Static. */
const char *store_client_version(void);

#endif
