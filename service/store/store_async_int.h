/*
 * store_async_int.h -- an event loop's store connection's private parts, for
 * service/store/store_async*.c only: the limits, struct node_conn, struct store_async, a cluster
 * call's struct route, and the functions one file lends another. The contract is store_async.h.
 */
#ifndef RANKD_STORE_ASYNC_INT_H
#define RANKD_STORE_ASYNC_INT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crc16.h"
#include "loop.h"
#include "metrics.h"
#include "store_async.h"
#include "store_cluster.h"
#include "store_conn.h"
#include "store_internal.h"
#include "util.h"

#define NONE ((size_t)-1)
#define REPLICA_WAIT_MS                                                                            \
    250                       /* a read waits this long at most for a replica (or a quarter of     \
                               * the command timeout, or half the time left), then goes to the     \
                               * primary: a stopped replica costs a read that much, not a 503 */
#define REPLICA_RETRY_MS 1000 /* a replica that failed a read gets none for this long */
#define REPLICA_MAP_MS 1000   /* a store reading from replicas reads the slot map this often */

/* A node this loop has a connection to. */
struct node_conn {
    char host[STORE_CLUSTER_HOST_MAX];
    int port;
    int replica;           /* a replica that reads go to (store_conn_new_replica) */
    int64_t skip_until_ms; /* a replica that failed a read: none before this (monotonic) */
    struct store_conn *conn;
};

struct store_async {
    struct store *st;
    struct loop *loop;
    struct store_conn *single; /* one Redis: the connection; NULL on a cluster */
    /* a cluster */
    struct node_conn *conns; /* every node sent to, in the order first used */
    size_t nconns, cap;
    struct store_map *map; /* this loop's reference to the store's map, or NULL */
    uint64_t version;      /* map's version (0: none) */
    size_t *by_node;       /* map node i -> its entry in conns + 1, 0 while it has none */
    int seed;              /* the seed a call goes to while there is no map */
    /* --read-from-replicas (store_read_replicas): the replicas' connections are in conns too
     * (replica 1); on one Redis (Sentinel) conns holds only those */
    int replicas_on;
    size_t *by_replica;               /* map replica (or list entry) i -> conns index + 1 */
    struct store_replica_list *rlist; /* Sentinel: this loop's reference to the list */
    uint64_t rversion;                /* its version (0: none) */
    unsigned rr;                      /* reads spread over a slot's replicas in turn */
};

enum route_kind { ROUTE_SEND = 0, ROUTE_SHARED, ROUTE_SCRIPT };

/* One caller's group on a cluster, kept until it is answered: its commands (copied, to send
 * again after a redirect), which of them are answered, the answers kept from earlier
 * attempts. */
struct route {
    struct store_async *sa;
    store_async_fn fn;
    void *arg;
    int kind;                          /* enum route_kind */
    int waits;                         /* ROUTE_SEND: sent with store_async_send_replicated */
    const struct store_script *script; /* ROUTE_SCRIPT */
    int nkeys;                         /* ROUTE_SCRIPT */
    int n;                             /* commands (a script: 1) */
    int argc[STORE_ASYNC_MAX_CMDS];    /* each command's arguments (a script: keys + args) */
    const char **argv;                 /* every argument, command after command, NUL-ended */
    size_t *lens;
    int64_t deadline_ms;
    unsigned flags;     /* the caller's STORE_READ_* */
    int eligible;       /* a read a replica may answer (store_async.h) */
    int on_replica;     /* the attempt in flight is on a replica (at: its connection) */
    int slot;           /* the group's slot (-1: none) */
    int64_t attempt_ms; /* the replica attempt's own deadline (REPLICA_WAIT_MS) */
    int hops;           /* redirects followed */
    size_t at;          /* the connection (conns index) of the attempt in flight */
    int asking;         /* that attempt sent each command after an ASKING */
    int nsent;          /* its commands, as indexes into the group, in order */
    int sent[STORE_ASYNC_MAX_CMDS];
    struct store_reply *kept[STORE_ASYNC_MAX_CMDS]; /* answers of earlier attempts (copies) */
    struct store_reply verdict; /* --write-replicas: the last attempt's (its node's WAIT) */
};

/* ---------------------------------------------------------------- lent between the files */

/* store_async_map.c */
size_t conn_at(struct store_async *sa, const char *host, int port);
size_t replica_for(struct store_async *sa, int slot);
size_t route_to(struct store_async *sa, int slot);
void refresh(struct store_async *sa, size_t prefer);
int group_slot(int n, const int *argc, const char *const *const *argv,
               const size_t *const *argvlen);

/* store_async_route.c */
struct route *route_new(struct store_async *sa, int kind, int n, const int *argc,
                        const char *const *const *argv, const size_t *const *argvlen,
                        int64_t deadline_ms, store_async_fn fn, void *arg);
int route_start(struct store_async *sa, struct route *r, int slot);

#endif
