/*
 * store_conn.h -- one pipelined, non-blocking connection to one Redis node, owned by one event
 * loop: the store's own, under store_async.h (which routes every call to one of these).
 *
 * Everything store_async.h says of "the connection" is this: the dial on a helper thread, the
 * FIFO of groups and their deadlines, groups held while a dial runs, shared groups, NOSCRIPT
 * answered with EVAL, the back-off, the metrics, and --write-replicas' one WAIT per flush (its
 * *Replicas*: the waiting groups kept on their WAIT until it answers, at most one WAIT in
 * flight). A single Redis is one of these per
 * store_async; a cluster is one per node a store_async has sent to (store_async.c).
 *
 * What it keeps, and for how long: a group held for a dial (no connection, or only one left on
 * a primary that moved, with Sentinel) is a caller's, with its callback and its deadline; a
 * WAIT is never held: it is written with the groups it covers, on their connection, and is in
 * that connection's FIFO until its reply, or until the connection closes, which ends every group
 * of the FIFO (the WAIT's waiting groups completed as not confirmed). Every caller's group has
 * its deadline from the send on, held, unsent or written, so its callback runs by then.
 *
 * It does not plug into its loop by itself: its socket is a watch of the loop (added on the
 * loop's thread once dialled), but its per-iteration work is its owner's hook's
 * (store_conn_tick before the wait and after the events, store_conn_flush last), so a loop's
 * hooks (LOOP_HOOKS_MAX) do not grow with the nodes of a cluster.
 *
 * Calls, returns and errors are store_async.h's (store_async_send_shared, store_async_send,
 * store_async_script, store_async_flush, store_async_connected, store_async_stats), with
 * groups of up to STORE_CONN_MAX_CMDS commands. Not thread-safe: the loop's thread only, but
 * the dial's hand-over.
 */
#ifndef RANKD_STORE_CONN_H
#define RANKD_STORE_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "store_async.h"

/** Commands in one group: store_async's, each of them after an ASKING when a cluster says ASK. */
#define STORE_CONN_MAX_CMDS (2 * STORE_ASYNC_MAX_CMDS)

struct store_conn;
struct metrics_conn;

/** A connection of `loop` to `host`:`port` (copied; NULL: the store's own address, TCP or unix
 *  socket), with `st`'s credentials, timeouts and dial back-off (borrowed). Nothing is dialled
 *  until store_conn_start or the first send. NULL on ENOMEM. */
struct store_conn *store_conn_new(struct store *st, struct loop *loop, const char *host, int port);

/** The same for a replica that reads go to (--read-from-replicas): dialled with
 *  store_dial_replica (READONLY on a cluster, ROLE checked with Sentinel), every script sent as
 *  EVALSHA_RO (EVAL_RO of the body after a NOSCRIPT): only read-only scripts may be sent on it. */
struct store_conn *store_conn_new_replica(struct store *st, struct loop *loop, const char *host,
                                          int port);

/** As store_async_free. */
void store_conn_free(struct store_conn *sa);

/** As store_async_start. */
void store_conn_start(struct store_conn *sa);

/** As store_async_send_shared, store_async_send, store_async_script and store_async_flush. */
int store_conn_send_shared(struct store_conn *sa, int n, const int *argc,
                           const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                           void *arg);
int store_conn_send(struct store_conn *sa, int n, const int *argc, const char *const *const *argv,
                    const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn,
                    void *arg);
/** store_conn_send for writes a client is told of (store_async_send_replicated): with
 *  --write-replicas the group waits for its flush's WAIT, whose verdict is at replies[n]. */
int store_conn_send_replicated(struct store_conn *sa, int n, const int *argc,
                               const char *const *const *argv, const size_t *const *argvlen,
                               int64_t deadline_ms, store_async_fn fn, void *arg);
int store_conn_script(struct store_conn *sa, const struct store_script *script, int nkeys,
                      int nargs, const char *const *argv, const size_t *argvlen,
                      int64_t deadline_ms, store_async_fn fn, void *arg);
/** As store_async_script_shared: a script call joined by identical ones until the flush. */
int store_conn_script_shared(struct store_conn *sa, const struct store_script *script, int nkeys,
                             int nargs, const char *const *argv, int64_t deadline_ms,
                             store_async_fn fn, void *arg);
void store_conn_flush(struct store_conn *sa);

/** The loop's step 1 for this connection (adopt a finished dial, give up late groups, drop a
 *  connection silent for two timeouts): the milliseconds until it needs the loop again, or -1. */
int store_conn_tick(struct store_conn *sa);

/** The loop's step 3: as store_conn_tick, without the wait. */
void store_conn_check(struct store_conn *sa);

/** As store_async_connected and store_async_stats. */
int store_conn_connected(struct store_conn *sa);
void store_conn_stats(struct store_conn *sa, struct metrics_conn *out);

#endif
