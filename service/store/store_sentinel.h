/*
 * store_sentinel.h -- Redis Sentinel for the store: where the primary is, and when it moves.
 *
 * Source: the Redis Sentinel documentation (redis.io/docs/management/sentinel, "Sentinel API"
 * and "Pub/Sub messages"; the client side: redis.io/docs/reference/sentinel-clients): a client
 * asks the sentinels in turn `SENTINEL get-master-addr-by-name <name>` ([ip, port], or nil for
 * a name they do not monitor), dials that address and checks with `ROLE` that it is a master
 * (a sentinel may answer before it saw a failover); it dials again through the sentinels when
 * its connection fails, when the node answers READONLY (a replica now), or when a sentinel
 * publishes `+switch-master <name> <old ip> <old port> <new ip> <new port>`.
 *
 * rankd: every dial of a sentinel store resolves the primary first (on the dial's helper thread:
 * these calls block, like the dial); a watcher thread per store keeps one sentinel connection
 * subscribed to +switch-master; a switch it hears, and a READONLY a connection reads, move the
 * process's primary epoch (store_sentinel_epoch), and every connection of a sentinel store
 * dialled under an older epoch is closed once it has no call in flight and dialled again (the
 * calls sent meanwhile wait for the dial, as at start-up). So both connections of every event
 * thread (reads and writes) follow the primary without a restart.
 *
 * Sentinels are asked without AUTH (a sentinel with requirepass is not supported).
 * Thread-safe.
 */
#ifndef RANKD_STORE_SENTINEL_H
#define RANKD_STORE_SENTINEL_H

#include <stddef.h>
#include <stdint.h>

#include "store_reply.h"

#define STORE_SENTINEL_HOST_MAX 256 /**< bytes of a primary's host, with the NUL */

/** Where the sentinels are and what they watch (strings borrowed for the calls). */
struct store_sentinel_cfg {
    int n;                   /**< sentinels */
    const char *const *host; /**< host[0..n) */
    const int *port;         /**< port[0..n) */
    const char *master;      /**< the monitored master's name */
    int connect_timeout_ms;  /**< per sentinel dial */
    int timeout_ms;          /**< per sentinel command */
};

/** A store_sentinel_cfg that owns its strings and ports (a watch thread's copy of its store's). */
struct store_sentinel_own {
    struct store_sentinel_cfg cfg; /**< pointing into the copies below */
    char **hosts;
    int *ports;
    char *master;
};

/** Copy cfg (n >= 1) into *o: 0, or -ENOMEM / -EINVAL with nothing left to free. */
int store_sentinel_own_copy(struct store_sentinel_own *o, const struct store_sentinel_cfg *cfg);

/** Free what store_sentinel_own_copy made (o itself is the caller's). */
void store_sentinel_own_free(struct store_sentinel_own *o);

/**
 * The primary as the sentinels say, asked in turn from sentinel `*next` (updated to the one that
 * answered, so the next call starts there): 0 with host[0..STORE_SENTINEL_HOST_MAX) and *port,
 * or -ECONNREFUSED (no sentinel answered, or none knows the name). Blocks: a helper thread's.
 */
int store_sentinel_resolve(const struct store_sentinel_cfg *cfg, int *next, char *host, int *port);

/** The reply of SENTINEL get-master-addr-by-name: 0 with host and port, -ENOENT (nil: an unknown
 *  name), -EPROTO (another shape). Pure. */
int store_sentinel_parse_addr(const struct store_reply *r, char *host, size_t cap, int *port);

/** A +switch-master message's text for `master`: 1 with the new host and port when it is that
 *  master's, 0 for another master's, -EPROTO for another shape. Pure. */
int store_sentinel_parse_switch(const char *msg, size_t len, const char *master, char *host,
                                size_t cap, int *port);

/** The process's primary epoch: moved by every switch heard and every READONLY read. */
uint64_t store_sentinel_epoch(void);

/** A connection read READONLY from what it took for the primary: move the epoch. */
void store_sentinel_moved(void);

struct store_sentinel_watch;

/** Start the watcher thread (cfg's strings are copied). NULL on ENOMEM or no thread. */
struct store_sentinel_watch *store_sentinel_watch_start(const struct store_sentinel_cfg *cfg);

/** Stop and free it (waits for the thread: at most about a second). NULL: no-op. */
void store_sentinel_watch_stop(struct store_sentinel_watch *w);

#endif
