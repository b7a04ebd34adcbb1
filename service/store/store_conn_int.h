/*
 * store_conn_int.h -- the connection's private parts, for service/store/store_conn*.c only: the
 * limits, struct pending (a group of commands, with its design comment), struct store_conn, and
 * the functions one file lends another. The contract is store_conn.h (and store_async.h, whose
 * contract it keeps).
 */
#ifndef RANKD_STORE_CONN_INT_H
#define RANKD_STORE_CONN_INT_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <hiredis/sds.h>

#include "loop.h"
#include "metrics.h"
#include "store_conn.h"
#include "store_internal.h"
#include "store_sentinel.h"
#include "util.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS                                                                             \
    100 /* a probe at least this often once Redis fails (the 503s stop                             \
         * within about this long of Redis answering again) */
#define READ_CHUNK ((size_t)64 * 1024)
#define ABANDON_TIMEOUTS 2             /* unanswered for this many timeouts: close and dial again */
#define READ_MAX ((size_t)1024 * 1024) /* bytes read per readiness event, for fairness */
/* bytes given to hiredis' reader at a time (read_replies) */
#define FEED_SLICE ((size_t)4 * 1024)
#define SHARE_SLOTS 128       /* buckets of the unsent shareable groups (a power of 2) */
#define SCRIPT_SHARED_ARGS 12 /* keys + args of a shareable script call, at most */
#define RETIRE_WAIT_MS                                                                             \
    100 /* Sentinel: a busy connection left on the old primary is cut after this */
#define FMT_KEEP ((size_t)64 * 1024) /* bytes of format buffer a connection keeps between uses */

/* A caller that joined a shared group: completed with the group's replies. */
struct waiter {
    store_async_fn fn;
    void *arg;
    struct waiter *next;
};

/*
 * A group of commands and its replies. Two kinds, and every path that ends one goes through
 * group_end or group_give_up, which know both:
 * - a caller's group: `fn` (never NULL) and `arg` its owner, `limit_ms` its deadline. It is
 *   held while there is no connection to write it to (sa->held, never in the output buffer),
 *   then in the FIFO: unsent (in the output buffer), then sent. Its deadline runs in every one
 *   of these places (deadline_ms): held or unsent, its caller's; once written, the earlier of
 *   that and the write plus the command timeout.
 * - a WAIT of --write-replicas (`is_wait`, no owner): made only by append_wait, straight into
 *   the output buffer of the connection whose groups it covers, in the FIFO from then until its
 *   reply or the connection's end (fail_all); never held, never shared. The waiting groups it
 *   covers (`wait` of each, set in the same flush) are parked on it once their replies are in.
 */
struct pending {
    store_async_fn fn;
    void *arg;
    int n, got;
    int64_t deadline_ms; /* monotonic: see above (INT64_MAX: none yet, a group with no limit of
                          * its own before its write) */
    int64_t limit_ms;    /* the caller's own deadline (monotonic), 0 = none */
    int64_t sent_ms;     /* when a flush first wrote it (monotonic) */
    int abandoned;       /* timed out: fn was called; its replies are read and dropped */
    int sent;            /* a flush wrote (some of) it: it may have reached Redis */
    /* a script (store_conn_script): what a NOSCRIPT reply needs to send it again as EVAL */
    const struct store_script *script; /* or NULL */
    int script_argc;                   /* keys + args */
    struct buf script_tail;            /* the keys and args in RESP, as they follow EVALSHA */
    char script_nkeys[12];
    struct buf held; /* while held: its commands in RESP, to go out once a connection is there */
    /* --write-replicas (store.h): a group that `waits` is answered only with the verdict of the
     * WAIT its flush appended after it (`wait`, set when flushed), at replies[n]; a WAIT
     * (`is_wait`, no caller) keeps the waiting groups answered before it, `parked` in order */
    int waits;
    int is_wait;
    struct pending *wait;
    struct pending *parked, **parked_end, *park_next;
    struct store_reply verdict; /* replies[n] of a waiting group: WAIT's count (-1: unknown) */
    struct store_reply *replies[STORE_CONN_MAX_CMDS + 1];
    struct pending *next;
    /* sharing (store_conn_send_shared), while unsent: the commands as appended */
    struct waiter *waiters;      /* callers that joined, completed after fn in join order */
    struct waiter **waiters_end; /* where the next joiner goes */
    uint64_t hash;               /* of argc[] and every argument, when shareable; else 0 */
    int argc[STORE_CONN_MAX_CMDS];
    char *args; /* every argument with its NUL, in order (args_len bytes) */
    size_t args_len;
    struct pending *share_next; /* the next unsent shareable group in the same bucket */
};

struct store_conn {
    struct store *st;
    struct loop *loop;
    char *host; /* the node dialled (a cluster's), or NULL: the store's own address */
    uint64_t epoch, dial_epoch; /* Sentinel: the primary epoch it was dialled under, and the
                                 * dial's in progress (store_sentinel.h) */
    int port;
    int replica;              /* a replica that reads go to (store_conn_new_replica): dialled with
                               * store_dial_replica, scripts sent as EVALSHA_RO / EVAL_RO */
    struct loop_watch *watch; /* ctx->fd in the loop, NULL while not registered */
    redisContext *ctx;        /* NULL while not connected */
    uint32_t events;          /* what `watch` waits for */
    struct pending *head, *tail;
    struct pending *unsent;           /* the first group appended since the last flush, or NULL */
    struct pending *held, *held_tail; /* sent while a dial runs: written once it succeeds */
    /* dialling: at most one helper thread; it hands its result over in `dialled` */
    pthread_t dialer;
    int dialing;
    _Atomic(redisContext *) dialled;
    atomic_int dial_done;
    int64_t retry_at_ms; /* no dial before this (monotonic), after a failure */
    int64_t stale_ms;    /* Sentinel: when this connection was found dialled before the primary
                          * moved (0: it was not) */
    atomic_int up;       /* ctx != NULL, for readers on other threads */
    /* for /metrics (store_conn_stats), written on the loop thread only */
    atomic_int dialing_now;              /* a dial is in progress */
    atomic_int in_flight;                /* groups in the FIFO (head..tail) */
    atomic_ullong round_trips, commands; /* flushes that wrote new groups; their commands */
    int answered;                        /* this connection has answered since it was adopted */
    int broken;     /* the output buffer is unusable: fail at the next flush or tick */
    char *chunk;    /* READ_CHUNK bytes: what recv reads, before hiredis parses it */
    struct buf fmt; /* a group's commands in RESP, before they join the output buffer */
    int backoff_ms;
    struct pending *share[SHARE_SLOTS]; /* unsent shareable groups by hash; empty after a flush */
    /* --write-replicas: the unsent groups include one that waits (the flush appends a WAIT), and
     * they started an empty output buffer; the WAIT written and not answered yet (at most one
     * in flight: the next flush with waiting groups goes out once it is answered) */
    int unsent_waits, unsent_fresh;
    struct pending *wait_out;
    uint64_t closes; /* connections closed so far: a loop over the FIFO that runs callbacks
                      * checks it after each (one may flush, and a failed write ends the FIFO) */
};

/* ---------------------------------------------------------------- lent between the files */

/* store_conn.c */
void set_events(struct store_conn *sa, uint32_t events);
void notify(struct pending *p, int rc, struct store_reply **replies);
void queue_append(struct store_conn *sa, struct pending *p, int fresh);
void pending_free(struct pending *p);
void share_reset(struct store_conn *sa);
void complete_waited(struct pending *p, long long acks);
void release_parked(struct pending *w, int rc, long long acks);
void park(struct pending *p);
void wait_answered(struct store_conn *sa, struct pending *w);
void fail_all(struct store_conn *sa, int rc, const char *what);
int hold_group(struct store_conn *sa, struct pending *p, const char *resp, size_t len);
int64_t give_up_held(struct store_conn *sa, int64_t now);
int retire_if_moved(struct store_conn *sa, int may_fail);
void start_dial(struct store_conn *sa);
void finish_dial(struct store_conn *sa);

/* store_conn_send.c */
int append_script(struct store_conn *sa, struct pending *p, int eval);

/* store_conn_recv.c */
void store_conn_ready(struct store_conn *sa, uint32_t events);

#endif
