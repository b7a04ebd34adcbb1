/*
 * store_async.h -- an event loop's pipelined, non-blocking connection to the store: to one Redis,
 * or routed over the nodes of a Redis Cluster.
 *
 * Why: every request on an HTTP event thread (httpd.h) is one or two Redis round trips (a cached
 * page, a script call for a member, a live page, a write, an NDJSON chunk, a miss's fill), and the
 * event threads must never wait. Each has two of these, one for reads and one for writes. Handing
 * each hit to another thread that waits for Redis (rankd 0.2's batcher) cost two thread hand-offs
 * per request, about a quarter of a hit's CPU on 2 cores (measured:
 * bench/results/compare-issue3.md). Instead each event
 * thread owns one of these: a hit's commands are appended to the connection's output buffer, the
 * buffer goes out once per loop iteration (every hit of that iteration in one write(2), a
 * pipeline), and the replies complete their requests later on the same thread. No lock, no
 * wake-up, no other thread.
 *
 * The connection: dialled on a short-lived helper thread (the store's own dial: connect, AUTH,
 * SELECT and the script loads block; the store's dial back-off applies), adopted by the loop and
 * made non-blocking. Replies are struct store_reply (store_reply.h), built by the parser as it
 * reads; the connection itself is opaque.
 * A group still unanswered at its own deadline (the earlier of its caller's deadline and its write
 * plus the store's command timeout; groups are judged each by its own, wherever they stand:
 * held for a dial, in the output buffer not written yet, written) is given up:
 * its callback gets -ETIMEDOUT and its replies, should they come, are read and dropped, so the
 * connection survives a Redis that was only slow, and every call ends by its caller's deadline.
 * While the oldest group written is given up (Redis is not answering), sends fail at once with
 * -ETIMEDOUT. Unanswered for two timeouts (a half-open
 * connection, a Redis that moved), or any I/O or protocol error, closes the connection and fails
 * the groups still in time: -ECONNRESET for those already written (they may have run), -EIO for
 * those not. The next send starts a new dial: one at a time; a connection that was answering (then
 * killed, reset) is dialled again at once, and after a failed dial no sooner than a back-off of 50
 * ms, then 100 ms (reset by the next answer), so a probe goes through at least every 100 ms.
 * Without a connection a send is held while a dial runs (the one it starts, or the one in progress:
 * a request arriving at start-up or after a CLIENT KILL waits for it, never fails just because the
 * dial has not ended) and written when the dial succeeds; the dial failing, or the group's own
 * deadline passing first, fails it with -ECONNREFUSED, and it is never written afterwards. Inside
 * the back-off window after a failed dial a send fails at once (-ECONNREFUSED): Redis is down, the
 * 503 is fast.
 *
 * Replies come back in order (RESP2, no pub/sub, no MONITOR on this connection), so the pending
 * commands are a FIFO of groups; a group is up to STORE_ASYNC_MAX_CMDS commands answered
 * together. Identical groups of one loop iteration share one send and one reply
 * (store_async_send_shared): 64 connections reading the same hot page in one iteration cost
 * Redis one lookup, not 64 (Varnish's request coalescing, for the hit path).
 *
 * It plugs into its loop (loop.h) by itself: its socket is a watch of the loop, and a hook of the
 * loop gives up late groups and adopts dials before each wait and after the events, and sends
 * what the iteration appended last (step 5 of an iteration: one write per connection).
 *
 * A Redis Cluster (store_cluster_mode): one such connection per node (store_conn.h), opened as
 * calls need them, behind one store_async; callers call it exactly as for one Redis. Routing
 * follows the Redis Cluster specification (store_cluster.h): a group goes to the master of its
 * slot, the slot of its first command's key (a script's KEYS[1]; commands without a key, such as
 * PING, INFO or a script without keys, go to one master); every key of a group must be in that
 * slot (rankd's keys of one board share a hash tag), else the send fails with -EXDEV. The slot
 * map is the store's, shared by every loop (store_internal.h), read with CLUSTER SLOTS from a
 * seed at start and again after a MOVED or a failed node (at most every 100 ms). Before it is
 * known, and for a slot it says nobody serves, a group goes to a node it knows and follows the
 * redirects. Replies that redirect are followed here, never seen by callers: MOVED (the map is
 * corrected at once, refreshed behind, and the commands go to the named node) and ASK (ASKING
 * and the commands, to the named node, for this once); each command of a group on its own, so
 * a group whose keys are split by a migration still gets one answer per command. At most
 * STORE_ASYNC_REDIRECTS redirects per call, then -ELOOP. Refusals of the cluster end the call
 * at once, nothing of it run: TRYAGAIN (keys of one call split by a migration, for a script or
 * multi-key command) is -EBUSY, CLUSTERDOWN (a failover under way, a slot not served) is
 * -ENETDOWN; both are 503s (http.c), with Retry-After. A node that fails is dialled again as
 * above, and the map refreshed, so after a failover calls go to the promoted replica without a
 * restart. A script whose reply needs keys of other slots has a continuation (its owner's,
 * store_async_script_then), run on the reply before the caller's callback.
 *
 * Reads from replicas (--read-from-replicas: store_read_replicas, on a cluster or a Sentinel
 * store). A read a replica may answer (a script its owner marked read-only,
 * store_script_read_only, unless the caller says STORE_READ_PRIMARY; plain commands sent with
 * STORE_READ_REPLICA, as the records' HMGETs after such a script) goes to one of its slot's
 * replicas (the slot map's, from CLUSTER SLOTS; with Sentinel the sentinels' list,
 * store_replicas.h), in turn, each over a connection of its own per event loop, dialled with
 * READONLY on a cluster (ROLE checked with Sentinel), its scripts sent as EVALSHA_RO / EVAL_RO;
 * every other call goes to the primary as above. A replica not connected yet is dialled
 * meanwhile: the read goes to the primary, never waits for it. A replica that fails a read (no
 * connection, no answer within REPLICA_WAIT_MS: 250 ms, at most a quarter of the command
 * timeout and half the time the caller has left; LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN,
 * BUSY, an unknown command) gets none for a second, and the read is sent to the primary at
 * once, as a call of its own: the caller sees the primary's answer, or its failure, never the
 * replica's. A MOVED from a replica is followed (and the map corrected) as from a master. The
 * map is read again every second while the store reads from replicas (replicas join, leave,
 * become masters). Counted in store_replica_counts.
 *
 * Replicas (--write-replicas N, store.h): a group that must reach N replicas before its caller
 * hears of it (store_async_send_replicated, or a script registered with
 * store_script_register_write) is followed on its connection by WAIT N <timeout / 2>: one WAIT
 * per flush of the connection's output buffer, appended after the flush's groups, whatever the
 * number of those that wait (WAIT counts the replicas that acknowledged every write sent before
 * it on that connection, so its one answer is every one's). The replies stay in order: a
 * waiting group whose replies are in is kept (not answered) until the WAIT's reply comes, then
 * answered with its replies and the verdict (store_async_unreplicated); the groups that do not
 * wait are answered as their replies come. At most one WAIT is in flight per connection: Redis
 * runs nothing of a connection while a WAIT blocks it, so the groups appended meanwhile wait in
 * the output buffer (each within its own deadline) and go out together, with the next WAIT,
 * once it is answered; a slow replica costs each batch one acknowledgement, never each write
 * one. A WAIT goes out in the same write as the groups it covers, on the same connection (one
 * left on a primary that moved too: its count is that primary's), is never held for a dial and
 * ends with that connection. A WAIT that does not answer within the command timeout, or a
 * group's own deadline passing while it waits, or the connection failing or closing after its
 * replies came, completes the group as not confirmed. On a cluster the WAIT goes to the node
 * that ran the group (after a redirect: the last one).
 *
 * Not thread-safe: everything runs on the owning loop's thread, except the helper's hand-over of
 * a dialled connection (an atomic pointer, then loop_wake).
 */
#ifndef RANKD_STORE_ASYNC_H
#define RANKD_STORE_ASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "store_reply.h"

struct loop;

#define STORE_ASYNC_MAX_CMDS 5  /**< commands in one group (/admin/redis sends five) */
#define STORE_ASYNC_REDIRECTS 5 /**< MOVED and ASK followed per call on a cluster */

/**
 * A group's completion, called once on the loop thread: rc 0 with replies[0..n-1] (freed after
 * the call; the callback of an unshared group may take reply i instead, setting replies[i] to
 * NULL, and free it later with store_reply_free; a shared group's replies are read-only for
 * every caller and freed after the last one's call; a Redis error reply is a STORE_REPLY_ERROR
 * object, store_reply_errno maps it), or a negative errno
 * with replies NULL: -ETIMEDOUT (unanswered by its own deadline, written or still in the output
 * buffer, behind a WAIT: it may have run, or run later),
 * -ECONNRESET (written, then the connection failed: it may have run), -EIO (not written: the
 * connection failed first, or out of memory), -ECONNREFUSED (not written: held while a dial ran,
 * and the dial failed or the group's deadline came first), -ECANCELED (store_async_free); on a
 * cluster also -EBUSY (TRYAGAIN), -ENETDOWN (CLUSTERDOWN) and -ELOOP (too many redirects):
 * refused, nothing of the group ran.
 */
typedef void (*store_async_fn)(void *arg, int rc, struct store_reply **replies);

struct store_async;

/**
 * A connection of `loop` (borrowed; call before its group starts: this adds a hook): its socket
 * is watched by the loop, and a dial that ends wakes it. `st` supplies the address, credentials,
 * timeout and dial back-off (borrowed). No connection is made until store_async_start or the
 * first send. Returns NULL on ENOMEM (or a loop with no hook left). Free with store_async_free.
 */
struct store_async *store_async_new(struct store *st, struct loop *loop);

/** Fail pending groups with -ECANCELED, wait for a dial in progress, close, free. NULL: no-op.
 *  Once the loop has stopped (its hook would run on), on any thread. */
void store_async_free(struct store_async *sa);

/** Start dialling now (before the loop starts, or on its thread), so the first requests need
 *  not wait for a dial. */
void store_async_start(struct store_async *sa);

/**
 * Append a group of n (1..STORE_ASYNC_MAX_CMDS) read-only commands, argv[i][0..argc[i]-1]
 * (NUL-terminated strings, copied), or join an identical one: when a group of exactly the same
 * commands (the same n, argc and argument bytes) was appended since the last flush and is still
 * unsent, this caller joins it instead of appending another; one reply then completes every
 * caller of the group (in the order they were added, the first caller first), each with the same
 * `replies`, which callbacks must only read (not change, not keep). A joined caller is failed,
 * timed out and cancelled with the group. Only an unsent group is joined: its commands reach
 * Redis after every joiner's request arrived, so the shared reply is never older than any of
 * them. fn(arg, ...) is called once, later, from the loop's watch or hook or store_async_free,
 * never from inside this call. Returns 2 when it joined a group, 1 when the new group starts a new
 * pipeline (the output buffer was empty), 0 when it joins one or is held for the dial in progress
 * (held groups are not shared); -ECONNREFUSED when there is no connection and none can be dialled
 * now (the back-off after a failed dial), -ETIMEDOUT when Redis is not answering (the oldest group
 * was given up), -EINVAL (bad n), -EIO or -ENOMEM (the connection is closed at the next flush or
 * tick); fn is not called on error.
 */
int store_async_send_shared(struct store_async *sa, int n, const int *argc,
                            const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                            void *arg);

/**
 * Append a group of n (1..STORE_ASYNC_MAX_CMDS) commands, argv[i][0..argc[i]-1] with lengths
 * argvlen[i] (NULL: NUL-terminated strings), copied; never shared with another caller (writes,
 * scripts). deadline_ms (monotonic, util_now_ms; 0 = none) caps the group's own timeout: it is
 * given up at the earlier of that and its write plus the store's command timeout. Returns as
 * store_async_send_shared (never 2).
 */
int store_async_send(struct store_async *sa, int n, const int *argc, const char *const *const *argv,
                     const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn,
                     void *arg);

/**
 * store_async_send for writes a client is told of, which must reach --write-replicas N replicas
 * before its 2xx (store.h: store_config.write_replicas). Without it, exactly store_async_send.
 * With it the group is answered only once the WAIT of its flush has answered (see *Replicas*
 * above), and replies[n] (one past its own) is the verdict: read it with
 * store_async_unreplicated, never take it.
 */
int store_async_send_replicated(struct store_async *sa, int n, const int *argc,
                                const char *const *const *argv, const size_t *const *argvlen,
                                int64_t deadline_ms, store_async_fn fn, void *arg);

/**
 * In the callback of a group that waited (store_async_send_replicated, or a script registered
 * with store_script_register_write) with rc 0 and its n replies: 1 when its writes are not
 * confirmed on --write-replicas replicas (WAIT counted fewer within its timeout, failed, or did
 * not answer within the group's deadline; the connection failed after the group's own
 * replies): they are applied on the primary (or the node that ran them), and a failover now
 * could lose them; the caller answers -EREMOTEIO when the group wrote anything. 0 when
 * confirmed, and always 0 on a store without --write-replicas.
 */
int store_async_unreplicated(const struct store_async *sa, struct store_reply *const *replies,
                             int n);

/**
 * Run a registered script (store_script_register): EVALSHA of the SHA the store loaded (EVAL
 * of the body before a dial of the store has loaded it), keys then args in argv[0..nkeys+nargs)
 * with lengths (argvlen NULL: NUL-terminated), copied. A NOSCRIPT reply (SCRIPT FLUSH, a
 * restarted Redis) is answered by sending EVAL of the body, once, behind the groups sent
 * meanwhile; fn sees only the final reply, as replies[0]. Deadline and returns as
 * store_async_send (-EINVAL: script NULL).
 */
int store_async_script(struct store_async *sa, const struct store_script *script, int nkeys,
                       int nargs, const char *const *argv, const size_t *argvlen,
                       int64_t deadline_ms, store_async_fn fn, void *arg);

/**
 * store_async_script for a read-only script (NUL-terminated keys and args) whose identical calls
 * of one loop iteration may share one send and one reply, as store_async_send_shared: the same
 * script with the same keys and args, appended since the last flush and unsent, is joined (the
 * replies read-only for every caller). Shared on one Redis once the store has loaded the script
 * (its SHA known) and the call has at most 12 keys and args; otherwise, and on a cluster or a
 * replica, exactly store_async_script. A NOSCRIPT reply is answered as there (EVAL of the body,
 * once), for every caller of the group. Returns as store_async_send_shared.
 */
int store_async_script_shared(struct store_async *sa, const struct store_script *script, int nkeys,
                              int nargs, const char *const *argv, int64_t deadline_ms,
                              store_async_fn fn, void *arg);

/** Where a read may go (store_async_send_flags, store_async_script_flags; 0: the default, a
 *  replica for a read-only script when the store reads from replicas, else the primary). */
#define STORE_READ_PRIMARY 1u /**< the primary, whatever the store and the script */
#define STORE_READ_REPLICA 2u /**< plain commands that only read: a replica may answer them */
#define STORE_READ_CHECKED                                                                         \
    4u /**< a read-only script whose answer the caller checks against a version it needs           \
        *   (?min_version=: the caller sends it again with STORE_READ_PRIMARY when a replica's     \
        *   answer is older); its continuation's reads of other slots (a cluster's records),       \
        *   which no version covers, go to primaries */

/** The flags of a read-only script for a request that needs the data at `min_version` (0: any)
 *  and, once a replica's answer was older (`primary`), the primary's. */
static inline unsigned store_read_flags(int64_t min_version, int primary)
{
    return primary ? STORE_READ_PRIMARY : min_version > 0 ? STORE_READ_CHECKED : 0;
}

/** Whether read-only calls of `sa` may be answered by replicas (its store reads from them). */
int store_async_reads_replicas(const struct store_async *sa);

/** store_async_send with STORE_READ_* flags (store_async_send: 0, the primary). */
int store_async_send_flags(struct store_async *sa, unsigned flags, int n, const int *argc,
                           const char *const *const *argv, const size_t *const *argvlen,
                           int64_t deadline_ms, store_async_fn fn, void *arg);

/** store_async_script with STORE_READ_* flags (store_async_script: 0). */
int store_async_script_flags(struct store_async *sa, const struct store_script *script,
                             unsigned flags, int nkeys, int nargs, const char *const *argv,
                             const size_t *argvlen, int64_t deadline_ms, store_async_fn fn,
                             void *arg);

/** A script call as it was sent: keys then arguments (borrowed for the continuation's call). */
struct store_call {
    int nkeys, nargs;
    const char *const *argv; /**< argv[0..nkeys+nargs) */
    const size_t *lens;      /**< their lengths */
    int64_t deadline_ms;     /**< the call's deadline (monotonic; 0: none) */
    unsigned flags;          /**< where the continuation's own reads go: STORE_READ_REPLICA (the
                              *   script was a read a replica may answer, unchecked) or
                              *   STORE_READ_PRIMARY */
};

/**
 * A script's continuation on a Redis Cluster: the script's reply (taken: the continuation frees
 * it, or passes it on), with the call, instead of the caller's fn. It may send more on `sa`
 * (other slots' keys: one pipeline per node, since one loop iteration's sends go out together)
 * and calls fn(arg, rc, replies) exactly once, from inside or later on the loop's thread, as a
 * group's completion (replies[0] the completed reply, freed after the call unless taken).
 */
typedef void (*store_async_then_fn)(struct store_async *sa, struct store_reply *reply,
                                    const struct store_call *call, store_async_fn fn, void *arg);

/** Give a registered script its continuation (its owner does, at registration; one per script,
 *  the last one set wins). Only a cluster store runs it: on one Redis a script reaches every key
 *  it needs. Thread-safe. */
void store_async_script_then(const struct store_script *script, store_async_then_fn then);

/** Write what the sends appended now, rather than at the end of the loop iteration (the loop's
 *  hook does it then). Errors fail the pending groups. */
void store_async_flush(struct store_async *sa);

/** 1 while connected (for /metrics; safe from any thread). */
int store_async_connected(struct store_async *sa);

struct metrics_conn; /* metrics.h */

/** Round trips (flushes that wrote new groups) and commands since start, groups in flight and
 *  the connection's state (up, dialling, down), for /metrics; safe from any thread (a racy
 *  snapshot). */
void store_async_stats(struct store_async *sa, struct metrics_conn *out);

#endif
