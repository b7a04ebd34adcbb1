/* store_conn.c -- one pipelined non-blocking connection to one Redis node, owned by an event
 * loop; see store_conn.h (and store_async.h, whose contract it keeps). */
#include "store_conn.h"

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
#define FEED_SLICE                                                                                 \
    ((size_t)4 * 1024)  /* bytes given to hiredis' reader at a time (read_replies)                 \
                         */
#define SHARE_SLOTS 128 /* buckets of the unsent shareable groups (a power of 2) */
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

struct store_conn *store_conn_new(struct store *st, struct loop *loop, const char *host, int port)
{
    struct store_conn *sa = calloc(1, sizeof(*sa));
    if (sa && !(sa->chunk = malloc(READ_CHUNK))) {
        free(sa);
        sa = NULL;
    }
    if (sa && host && !(sa->host = strdup(host))) {
        free(sa->chunk);
        free(sa);
        sa = NULL;
    }
    if (!sa)
        return NULL;
    sa->st = st;
    sa->loop = loop;
    sa->port = port;
    sa->backoff_ms = BACKOFF_MIN_MS;
    return sa;
}

struct store_conn *store_conn_new_replica(struct store *st, struct loop *loop, const char *host,
                                          int port)
{
    struct store_conn *sa = store_conn_new(st, loop, host, port);
    if (sa)
        sa->replica = 1;
    return sa;
}

/* ---------------------------------------------------------------- failure */

static void ready(void *arg, uint32_t events);

static void set_events(struct store_conn *sa, uint32_t events)
{
    if (!sa->ctx || events == sa->events)
        return;
    if (!sa->watch)
        sa->watch = loop_watch_add(sa->loop, sa->ctx->fd, events, ready, sa);
    if (sa->watch && loop_watch_set(sa->watch, events) == 0)
        sa->events = events;
}

static void close_ctx(struct store_conn *sa)
{
    if (!sa->ctx)
        return;
    loop_watch_remove(sa->watch); /* before the close: a reused fd number must not inherit it */
    sa->watch = NULL;
    sa->events = 0;
    redisFree(sa->ctx);
    sa->ctx = NULL;
    sa->closes++;
    atomic_store(&sa->up, 0);
}

static void later(struct store_conn *sa)
{
    sa->retry_at_ms = util_now_ms() + sa->backoff_ms;
    sa->backoff_ms = sa->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : sa->backoff_ms * 2;
}

/* Complete a group: its own caller, then every caller that joined it, with the same replies. */
static void notify(struct pending *p, int rc, struct store_reply **replies)
{
    p->fn(p->arg, rc, replies);
    for (struct waiter *w = p->waiters; w; w = w->next)
        w->fn(w->arg, rc, replies);
}

/* Put p at the end of the FIFO of groups (sent, or to send at the next flush), counted in
 * flight. Until it is written its deadline is its caller's (none: INT64_MAX); the write adds the
 * command timeout (store_conn_flush). */
static void queue_append(struct store_conn *sa, struct pending *p, int fresh)
{
    p->deadline_ms = p->limit_ms ? p->limit_ms : INT64_MAX;
    p->wait = NULL;
    sa->unsent_waits |= p->waits;
    if (!sa->unsent) {
        sa->unsent = p;
        sa->unsent_fresh = fresh;
    }
    if (sa->tail)
        sa->tail->next = p;
    else
        sa->head = p;
    sa->tail = p;
    atomic_fetch_add_explicit(&sa->in_flight, 1, memory_order_relaxed);
}

static void pending_free(struct pending *p)
{
    for (int i = 0; i < p->got; i++)
        store_reply_free(p->replies[i]);
    buf_free(&p->script_tail);
    buf_free(&p->held);
    while (p->waiters) {
        struct waiter *w = p->waiters;
        p->waiters = w->next;
        free(w);
    }
    free(p->args);
    free(p);
}

/* The sends since the last flush are out (or failed): nothing unsent is left to join. */
static void share_reset(struct store_conn *sa)
{
    for (struct pending *p = sa->unsent; p; p = p->next)
        if (p->hash)
            sa->share[p->hash & (SHARE_SLOTS - 1)] = NULL;
    sa->unsent = NULL;
    sa->unsent_waits = 0;
}

/* ---------------------------------------------------------------- --write-replicas */

/* A waiting group's completion: its replies, and at replies[n] the verdict (`acks`: the count
 * WAIT answered, -1 when it is unknown: WAIT refused, not answered in time, the connection
 * lost after the group's own replies); then p is freed. */
static void complete_waited(struct pending *p, long long acks)
{
    p->verdict = (struct store_reply){.type = STORE_REPLY_INTEGER, .integer = acks};
    p->replies[p->n] = &p->verdict;
    notify(p, 0, p->replies);
    p->replies[p->n] = NULL;
    pending_free(p);
}

/* Complete every group parked on WAIT w: with the verdict `acks`, or (rc: the connection is
 * freed) rc without replies. The list is detached first: a callback may send. */
static void release_parked(struct pending *w, int rc, long long acks)
{
    struct pending *m = w->parked;
    w->parked = NULL;
    w->parked_end = &w->parked;
    while (m) {
        struct pending *next = m->park_next;
        if (rc) {
            notify(m, rc, NULL);
            pending_free(m);
        } else {
            complete_waited(m, acks);
        }
        m = next;
    }
}

/* A waiting group's replies are in: park it on its WAIT (answered later, with the verdict), or
 * complete it at once when that WAIT was given up already (not confirmed). */
static void park(struct pending *p)
{
    struct pending *w = p->wait;
    if (!w || w->abandoned) {
        complete_waited(p, -1);
        return;
    }
    p->park_next = NULL;
    *w->parked_end = p;
    w->parked_end = &p->park_next;
}

/* The reply of WAIT w: its count for the groups parked on it; an error reply (an ACL without
 * +wait, a replica) is logged with its text, a short count as such: not confirmed either way
 * (the writes themselves went through). */
static void wait_answered(struct store_conn *sa, struct pending *w)
{
    const struct store_reply *r = w->replies[0];
    long long acks = r->type == STORE_REPLY_INTEGER ? r->integer : -1;
    if (r->type == STORE_REPLY_ERROR)
        store_note_fault(sa->st, "WAIT", r->str);
    else if (acks < store_write_replicas(sa->st))
        store_note_fault(sa->st, "WAIT",
                         "fewer replicas than --write-replicas acknowledged the writes in time: "
                         "applied on the primary, answered 503 write_not_replicated");
    release_parked(w, 0, acks);
}

/* The end of group p, which is out of every list, with rc (a negative errno; no replies), and
 * p freed: a caller's group tells its callers (unless it was given up: told then), -EIO turned
 * into -ECONNRESET once written (it may have run); a WAIT completes the groups parked on it,
 * applied and not confirmed (with -ECANCELED: failed with it, store_conn_free). */
static void group_end(struct pending *p, int rc)
{
    if (p->is_wait)
        release_parked(p, rc == -ECANCELED ? rc : 0, -1);
    else if (!p->abandoned)
        notify(p, rc == -EIO && p->sent ? -ECONNRESET : rc, NULL);
    pending_free(p);
}

/* Close the connection and end every group of its FIFO with rc (group_end): what was on the
 * connection goes with it, the WAIT in flight and the groups parked on it included. `what`
 * (NULL: nothing) is noted as a fault, but for -ECANCELED. Callbacks run last: they may send,
 * which then finds no connection (held, or failed). */
static void fail_all(struct store_conn *sa, int rc, const char *what)
{
    if (rc != -ECANCELED && what)
        store_note_fault(sa->st, what, sa->ctx && sa->ctx->errstr[0] ? sa->ctx->errstr : "");
    close_ctx(sa);
    sa->broken = 0;
    if (rc != -ECANCELED && sa->answered)
        sa->retry_at_ms = 0; /* it worked until now (CLIENT KILL, a proxy's reset): dial at once,
                              * so the reads resent and the requests held meanwhile go out */
    else if (rc != -ECANCELED)
        later(sa);
    sa->answered = 0;
    share_reset(sa);
    sa->wait_out = NULL;
    struct pending *p = sa->head;
    sa->head = sa->tail = NULL;
    atomic_store_explicit(&sa->in_flight, 0, memory_order_relaxed);
    while (p) {
        struct pending *next = p->next;
        group_end(p, rc);
        p = next;
    }
}

/* ---------------------------------------------------------------- held while dialling */

/* Fail every held group with rc (none of them was written). Callbacks run after the list is
 * detached: a callback may send again, which then holds or fails as the connection stands. */
static void fail_held(struct store_conn *sa, int rc)
{
    struct pending *p = sa->held;
    sa->held = sa->held_tail = NULL;
    while (p) {
        struct pending *next = p->next;
        group_end(p, rc);
        p = next;
    }
}

/* Keep a caller's group sent while there is no connection to write it to: its commands
 * (resp[0..len), formatted), written once the dial in progress succeeds. Its clock runs from
 * now: it is given up (not written) at its own deadline, or the command timeout when it has
 * none. Only append_resp calls it: a caller's group, never a WAIT. 0, or -ENOMEM (p stays the
 * caller's). */
static int hold_group(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
{
    p->held.len = 0;
    if (buf_append(&p->held, resp, len))
        return -ENOMEM;
    p->deadline_ms = p->limit_ms ? p->limit_ms : util_now_ms() + store_timeout_ms(sa->st);
    p->wait = NULL; /* a WAIT of the flush that writes it, on the connection it is written to */
    p->next = NULL;
    if (sa->held_tail)
        sa->held_tail->next = p;
    else
        sa->held = p;
    sa->held_tail = p;
    return 0;
}

static int64_t give_up_held(struct store_conn *sa, int64_t now);

/* A dial succeeded: the held groups join the output buffer, in the order they were sent (the
 * loop's flush writes them), but those past their deadline, given up (never written). */
static void release_held(struct store_conn *sa)
{
    give_up_held(sa, util_now_ms());
    while (sa->ctx && sa->held) {
        struct pending *p = sa->held;
        sa->held = p->next;
        if (!sa->held)
            sa->held_tail = NULL;
        p->next = NULL;
        int fresh = sdslen(sa->ctx->obuf) == 0;
        if (redisAppendFormattedCommand(sa->ctx, p->held.data, p->held.len) != REDIS_OK) {
            sa->broken = 1; /* out of memory: part of it may be in the buffer (store_conn_flush) */
            group_end(p, -ECONNREFUSED);
            continue;
        }
        buf_free(&p->held);
        queue_append(sa, p, fresh);
    }
}

/* Give up the held groups past their deadline (never written: -ECONNREFUSED). Returns the
 * earliest deadline still ahead (monotonic ms), or 0. */
static int64_t give_up_held(struct store_conn *sa, int64_t now)
{
    struct pending *late = NULL, **late_end = &late, **pp = &sa->held;
    int64_t next = 0;
    sa->held_tail = NULL;
    while (*pp) {
        struct pending *p = *pp;
        if (now >= p->deadline_ms) {
            *pp = p->next;
            p->next = NULL;
            *late_end = p;
            late_end = &p->next;
            continue;
        }
        if (!next || p->deadline_ms < next)
            next = p->deadline_ms;
        sa->held_tail = p;
        pp = &p->next;
    }
    while (late) {
        struct pending *p = late;
        late = p->next;
        store_note_fault(sa->st, "connect", "no connection within the request's deadline");
        group_end(p, -ECONNREFUSED);
    }
    return next;
}

/* ---------------------------------------------------------------- dialling */

static void *dial_main(void *arg)
{
    struct store_conn *sa = arg;
    int err = 0;
    redisContext *c = sa->replica ? store_dial_replica(sa->st, sa->host, sa->port, &err)
                                  : store_dial_at(sa->st, sa->host, sa->port, &err);
    atomic_store(&sa->dialled, c);
    atomic_store(&sa->dial_done, 1);
    loop_wake(sa->loop); /* the loop adopts it in its next tick */
    return NULL;
}

static void start_dial(struct store_conn *sa);

/* Sentinel: a connection dialled before the primary moved takes no new call (from the first
 * send or tick that sees the move, calls are held for the next dial, which asks the sentinels
 * again: never written to the old primary), and is closed once no call is in flight on it; one
 * that stays busy is cut after RETIRE_WAIT_MS when `may_fail` (the loop's tick: its calls fail
 * as for a lost connection, a read is sent again, a write's outcome is unknown), at once when
 * it does not answer (its oldest call given up), so a busy connection cannot stay on the old
 * primary. 1 when it was closed. Never runs a callback unless `may_fail`. */
static int retire_if_moved(struct store_conn *sa, int may_fail)
{
    if (!sa->ctx || !store_sentinel_mode(sa->st) || sa->epoch == store_sentinel_epoch()) {
        sa->stale_ms = 0;
        return 0;
    }
    int64_t now = util_now_ms();
    if (!sa->stale_ms)
        sa->stale_ms = now;
    if (sa->head && (!may_fail || (now - sa->stale_ms < RETIRE_WAIT_MS && !sa->head->abandoned)))
        return 0;
    sa->answered = 1; /* dialled again at once, not after a back-off */
    fail_all(sa, -EIO, sa->head ? "the primary moved (Redis Sentinel): dialling it" : NULL);
    sa->retry_at_ms = 0; /* at once */
    sa->stale_ms = 0;
    if (sa->held)
        start_dial(sa); /* the calls held since the move: to the new primary */
    return 1;
}

static void start_dial(struct store_conn *sa)
{
    if (sa->ctx || sa->dialing || util_now_ms() < sa->retry_at_ms)
        return;
    atomic_store(&sa->dial_done, 0);
    sa->dial_epoch = store_sentinel_epoch(); /* before it asks the sentinels */
    if (pthread_create(&sa->dialer, NULL, dial_main, sa) == 0)
        sa->dialing = 1;
    else
        later(sa);
    atomic_store(&sa->dialing_now, sa->dialing);
}

/* Take over a connection the helper dialled: non-blocking from now on. */
static void adopt(struct store_conn *sa, redisContext *c)
{
    int fl = fcntl(c->fd, F_GETFL);
    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        store_note_fault(sa->st, "connect", "cannot make the socket non-blocking");
        redisFree(c);
        later(sa);
        return;
    }
    c->flags &= ~REDIS_BLOCK; /* hiredis then treats EAGAIN as "try again later" */
    sa->ctx = c;
    sa->epoch = sa->dial_epoch;
    sa->stale_ms = 0;
    sa->events = 0;
    atomic_store(&sa->up, 1);
    set_events(sa, EPOLLIN);
    if (!sa->events) {
        store_note_fault(sa->st, "connect", "the loop cannot watch the socket");
        close_ctx(sa);
        later(sa);
    }
}

static void finish_dial(struct store_conn *sa)
{
    if (!sa->dialing || !atomic_load(&sa->dial_done))
        return;
    pthread_join(sa->dialer, NULL);
    sa->dialing = 0;
    atomic_store(&sa->dialing_now, 0);
    redisContext *c = atomic_exchange(&sa->dialled, NULL);
    if (c && store_sentinel_mode(sa->st) && sa->dial_epoch != store_sentinel_epoch()) {
        /* the primary moved while it dialled: the address the sentinels gave may be the old
         * one. Dial again, the calls still held (none of them is written to it). */
        redisFree(c);
        sa->retry_at_ms = 0;
        start_dial(sa);
        if (sa->dialing)
            return;
        c = NULL;
    }
    if (c)
        adopt(sa, c);
    else
        later(sa); /* store_dial logged and counted it */
    if (sa->ctx)
        release_held(sa);
    else
        fail_held(sa, -ECONNREFUSED); /* the dial failed: Redis is unreachable now */
}

void store_conn_start(struct store_conn *sa)
{
    start_dial(sa);
}

/* ---------------------------------------------------------------- I/O */

/* Whether a send may go out now: 0, or the errno store_conn_send_shared returns. */
static int can_send(struct store_conn *sa, int n)
{
    if (n < 1 || n > STORE_CONN_MAX_CMDS)
        return -EINVAL;
    if (sa->broken)
        return -EIO;
    /* the primary first: a connection left on the old one (closed here when idle) holds the
     * call for the next dial, even while the old primary does not answer */
    retire_if_moved(sa, 0);
    if (sa->ctx && sa->stale_ms)
        return 0; /* held (append_resp) until it is closed and the new primary dialled */
    if (sa->head && sa->head->abandoned && sa->head->sent)
        return -ETIMEDOUT; /* Redis is not answering: fail fast */
    if (!sa->ctx) {
        start_dial(sa); /* held until it ends (hold_group); in the back-off window: fail fast */
        return sa->dialing ? 0 : -ECONNREFUSED;
    }
    return 0;
}

/* ---------------------------------------------------------------- RESP */

/*
 * Commands are formatted here, into the connection's own buffer, and join hiredis' output buffer
 * in one piece (redisAppendFormattedCommand): hiredis' formatter (sdscatfmt and a grown sds per
 * piece) was 7% of a member lookup's instructions (callgrind), the commands' argv copies for
 * scripts another 3%.
 */

/* "<type><n>\r\n" appended to b: 0 or -ENOMEM. */
static int resp_head(struct buf *b, char type, size_t n)
{
    char tmp[24], *end = tmp + sizeof(tmp), *at = end;
    *--at = '\n';
    *--at = '\r';
    do
        *--at = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    *--at = type;
    return buf_append(b, at, (size_t)(end - at));
}

/* One bulk string, "$<len>\r\n<bytes>\r\n", appended to b: 0 or -ENOMEM. */
static int resp_arg(struct buf *b, const char *s, size_t len)
{
    return resp_head(b, '$', len) || buf_append(b, s, len) || buf_append(b, "\r\n", 2) ? -ENOMEM
                                                                                       : 0;
}

/* One command, argv[0..argc) (argvlen NULL: NUL-terminated), appended to b: 0 or -ENOMEM. */
static int resp_command(struct buf *b, int argc, const char *const *argv, const size_t *argvlen)
{
    if (resp_head(b, '*', (size_t)argc))
        return -ENOMEM;
    for (int a = 0; a < argc; a++)
        if (resp_arg(b, argv[a], argvlen ? argvlen[a] : strlen(argv[a])))
            return -ENOMEM;
    return 0;
}

/* The connection's format buffer after a use: kept for the next group, unless a big one (a write
 * batch, a script's body) grew it past what the common ones need. */
static void fmt_done(struct store_conn *sa)
{
    if (sa->fmt.cap > FMT_KEEP)
        buf_free(&sa->fmt);
    sa->fmt.len = 0;
}

/* Queue p, whose commands are resp[0..len) in RESP, for its replies on the connection there is
 * (sa->ctx, whatever its epoch): into its output buffer and its FIFO. Returns 1 (a new
 * pipeline), 0, or -ENOMEM (p is not queued and stays the caller's; the connection is closed at
 * the next flush or tick). */
static int append_out(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
{
    int fresh = sdslen(sa->ctx->obuf) == 0;
    if (redisAppendFormattedCommand(sa->ctx, resp, len) != REDIS_OK) {
        /* out of memory: the context is unusable, so the connection must go; not from here (no
         * callback runs inside a send): at the next flush or tick */
        sa->broken = 1;
        return -ENOMEM;
    }
    queue_append(sa, p, fresh);
    return fresh;
}

/* Queue a caller's group p as append_out, or hold it (hold_group) while there is no connection,
 * or only one left on the old primary: it goes to the next. Returns as append_out. */
static int append_resp(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
{
    if (!sa->ctx || sa->stale_ms)
        return hold_group(sa, p, resp, len);
    return append_out(sa, p, resp, len);
}

/* Append the group's commands and queue p for their replies; returns as append_resp. */
static int append_group(struct store_conn *sa, struct pending *p, const int *argc,
                        const char *const *const *argv, const size_t *const *argvlen)
{
    int rc = 0;
    for (int i = 0; i < p->n && !rc; i++)
        rc = resp_command(&sa->fmt, argc[i], argv[i], argvlen ? argvlen[i] : NULL);
    rc = rc ? -ENOMEM : append_resp(sa, p, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    return rc;
}

/* A new group of n commands for fn(arg), not queued yet; NULL on ENOMEM. */
static struct pending *pending_new(store_async_fn fn, void *arg, int n)
{
    struct pending *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->waiters_end = &p->waiters;
    return p;
}

/* FNV-1a over the argument counts and every argument with its NUL; never 0 (0: not shared). */
static uint64_t group_hash(int n, const int *argc, const char *const *const *argv, size_t *len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)argc[i]) * UINT64_C(1099511628211);
        for (int a = 0; a < argc[i]; a++) {
            const char *s = argv[i][a];
            do
                h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
            while (*s++);
            total += (size_t)(s - argv[i][a]);
        }
    }
    *len = total;
    return h ? h : 1;
}

/* 1 when the unsent group p was appended with exactly these commands. */
static int same_group(const struct pending *p, int n, const int *argc,
                      const char *const *const *argv, uint64_t hash, size_t len)
{
    if (p->hash != hash || p->n != n || p->args_len != len)
        return 0;
    const char *at = p->args;
    for (int i = 0; i < n; i++) {
        if (p->argc[i] != argc[i])
            return 0;
        for (int a = 0; a < argc[i]; a++) {
            size_t l = strlen(argv[i][a]) + 1;
            if (memcmp(at, argv[i][a], l) != 0)
                return 0;
            at += l;
        }
    }
    return 1;
}

/* Keep the commands of a shareable group, for same_group; 0 or -ENOMEM. */
static int keep_args(struct pending *p, const int *argc, const char *const *const *argv,
                     uint64_t hash, size_t len)
{
    if (!(p->args = malloc(len + 1))) /* len >= 2: a command has a name */
        return -ENOMEM;
    char *at = p->args;
    for (int i = 0; i < p->n; i++) {
        p->argc[i] = argc[i];
        for (int a = 0; a < argc[i]; a++) {
            size_t l = strlen(argv[i][a]) + 1;
            memcpy(at, argv[i][a], l);
            at += l;
        }
    }
    p->hash = hash;
    p->args_len = len;
    return 0;
}

int store_conn_send_shared(struct store_conn *sa, int n, const int *argc,
                           const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                           void *arg)
{
    int rc = can_send(sa, n);
    if (rc)
        return rc;
    if (!sa->ctx || sa->stale_ms) /* held for a dial: not shared (the table is the buffer's) */
        return store_conn_send(sa, n, argc, argv, NULL, deadline_ms, fn, arg);
    size_t len = 0;
    uint64_t hash = group_hash(n, argc, argv, &len);
    struct pending **slot = &sa->share[hash & (SHARE_SLOTS - 1)];
    for (struct pending *p = *slot; p; p = p->share_next)
        if (!p->abandoned && same_group(p, n, argc, argv, hash, len)) { /* answered: not joined */
            struct waiter *w = malloc(sizeof(*w));
            if (!w)
                return -ENOMEM;
            *w = (struct waiter){.fn = fn, .arg = arg};
            *p->waiters_end = w; /* first come, first answered */
            p->waiters_end = &w->next;
            if (deadline_ms && (!p->limit_ms || deadline_ms < p->limit_ms))
                p->limit_ms = deadline_ms; /* the group keeps its most pressed caller's time */
            if (p->limit_ms && p->limit_ms < p->deadline_ms)
                p->deadline_ms = p->limit_ms; /* unsent: its deadline is that */
            return 2;
        }
    struct pending *p = pending_new(fn, arg, n);
    if (!p)
        return -ENOMEM;
    p->limit_ms = deadline_ms;
    if (keep_args(p, argc, argv, hash, len)) {
        free(p);
        return -ENOMEM;
    }
    rc = append_group(sa, p, argc, argv, NULL);
    if (rc >= 0) {
        p->share_next = *slot;
        *slot = p;
    } else {
        pending_free(p);
    }
    return rc;
}

static int send_group(struct store_conn *sa, int n, const int *argc, const char *const *const *argv,
                      const size_t *const *argvlen, int64_t deadline_ms, int waits,
                      store_async_fn fn, void *arg)
{
    int rc = can_send(sa, n);
    if (rc)
        return rc;
    struct pending *p = pending_new(fn, arg, n);
    if (!p)
        return -ENOMEM;
    p->limit_ms = deadline_ms;
    p->waits = waits && store_write_replicas(sa->st) > 0;
    rc = append_group(sa, p, argc, argv, argvlen);
    if (rc < 0)
        pending_free(p);
    return rc;
}

int store_conn_send(struct store_conn *sa, int n, const int *argc, const char *const *const *argv,
                    const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn, void *arg)
{
    return send_group(sa, n, argc, argv, argvlen, deadline_ms, 0, fn, arg);
}

int store_conn_send_replicated(struct store_conn *sa, int n, const int *argc,
                               const char *const *const *argv, const size_t *const *argvlen,
                               int64_t deadline_ms, store_async_fn fn, void *arg)
{
    return send_group(sa, n, argc, argv, argvlen, deadline_ms, 1, fn, arg);
}

/* Append "EVALSHA <sha> nkeys ..." (or EVAL of the body when the SHA is not known yet, or `eval`
 * is set; on a replica EVALSHA_RO and EVAL_RO) for p's script, its keys and args from the RESP p
 * keeps; returns as append_resp. */
static int append_script(struct store_conn *sa, struct pending *p, int eval)
{
    char sha[STORE_SHA_LEN + 1];
    int by_sha = !eval && store_script_sha(sa->st, p->script, sha) == 0;
    const char *head = by_sha ? sha : store_script_body(p->script);
    static const char *const names[2][2] = {{"EVAL", "EVALSHA"}, {"EVAL_RO", "EVALSHA_RO"}};
    const char *name = names[sa->replica][by_sha];
    p->n = 1; /* a script is one command */
    int rc = resp_head(&sa->fmt, '*', (size_t)p->script_argc + 3) ||
                     resp_arg(&sa->fmt, name, strlen(name)) ||
                     resp_arg(&sa->fmt, head, strlen(head)) ||
                     resp_arg(&sa->fmt, p->script_nkeys, strlen(p->script_nkeys)) ||
                     buf_append(&sa->fmt, p->script_tail.data ? p->script_tail.data : "",
                                p->script_tail.len)
                 ? -ENOMEM
                 : append_resp(sa, p, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    return rc;
}

int store_conn_script(struct store_conn *sa, const struct store_script *script, int nkeys,
                      int nargs, const char *const *argv, const size_t *argvlen,
                      int64_t deadline_ms, store_async_fn fn, void *arg)
{
    int rc = script ? can_send(sa, 1) : -EINVAL;
    if (rc)
        return rc;
    struct pending *p = pending_new(fn, arg, 1);
    if (!p)
        return -ENOMEM;
    int n = nkeys + nargs;
    for (int i = 0; i < n; i++)
        if (resp_arg(&p->script_tail, argv[i], argvlen ? argvlen[i] : strlen(argv[i]))) {
            pending_free(p);
            return -ENOMEM;
        }
    p->script = script;
    p->script_argc = n;
    p->limit_ms = deadline_ms;
    p->waits = store_script_waits(sa->st, script);
    struct strb nk; /* no snprintf: every script call */
    strb_init(&nk, p->script_nkeys, sizeof(p->script_nkeys));
    strb_i64(&nk, nkeys);
    rc = append_script(sa, p, 0);
    if (rc < 0)
        pending_free(p);
    return rc;
}

/*
 * --write-replicas: the one WAIT of a flush whose groups include some that wait, appended after
 * them all to the same output buffer (WAIT counts the replicas that acknowledged every write
 * sent before it on this connection: each of them), so it goes out in the same write, on the
 * connection they went out on, even one left on an old primary (its count is that primary's).
 * Never held (append_out, not append_resp). Returns it, or NULL on ENOMEM (the connection is
 * broken then). sa->ctx is set.
 */
static struct pending *append_wait(struct store_conn *sa)
{
    struct pending *w = pending_new(NULL, NULL, 1);
    if (!w) {
        sa->broken = 1;
        return NULL;
    }
    w->is_wait = 1;
    w->parked_end = &w->parked;
    char nrep[24], ms[24];
    struct strb b;
    strb_init(&b, nrep, sizeof(nrep));
    strb_i64(&b, store_write_replicas(sa->st));
    strb_init(&b, ms, sizeof(ms));
    strb_i64(&b, store_timeout_ms(sa->st) / 2); /* its answer comes well within the timeout */
    const char *argv[] = {"WAIT", nrep, ms};
    int rc = resp_command(&sa->fmt, 3, argv, NULL);
    rc = rc ? rc : append_out(sa, w, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    if (rc < 0) {
        sa->broken = 1;
        pending_free(w);
        return NULL;
    }
    return w;
}

void store_conn_flush(struct store_conn *sa)
{
    if (sa->broken) {
        fail_all(sa, -EIO, "out of memory");
        return;
    }
    if (!sa->ctx || sdslen(sa->ctx->obuf) == 0)
        return;
    struct pending *wait = NULL;
    if (sa->unsent_waits) {
        /* One WAIT in flight at a time: Redis runs nothing of this connection while a WAIT
         * blocks it, so what would queue behind it there waits here instead, and goes out
         * with the WAIT that follows once it is answered (the loop's next flush): a slow
         * replica costs a batch one acknowledgement, not every write one. Unless the buffer
         * still holds the end of an earlier flush (a partial write): that goes out now. */
        if (sa->wait_out && sa->unsent_fresh)
            return;
        if (!(wait = append_wait(sa))) {
            fail_all(sa, -EIO, "out of memory");
            return;
        }
        sa->unsent_waits = 0;
    }
    int done = 0;
    if (redisBufferWrite(sa->ctx, &done) == REDIS_ERR) {
        fail_all(sa, -EIO, "write");
        return;
    }
    if (sa->unsent) { /* their time starts once written, not when the request was parsed (nor
                       * before the write: a process stopped in between is not Redis's delay) */
        int64_t now = util_now_ms(), deadline = now + store_timeout_ms(sa->st);
        unsigned long long cmds = 0;
        for (struct pending *p = sa->unsent; p; p = p->next) {
            cmds += (unsigned long long)p->n;
            p->deadline_ms = p->limit_ms && p->limit_ms < deadline ? p->limit_ms : deadline;
            p->sent_ms = now;
            p->sent = 1;
            if (p->waits)
                p->wait = wait; /* answered with its verdict */
            free(p->args);      /* sent: nobody joins it any more */
            p->args = NULL;
        }
        if (wait)
            sa->wait_out = wait;
        atomic_fetch_add_explicit(&sa->round_trips, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sa->commands, cmds, memory_order_relaxed);
        share_reset(sa);
    }
    set_events(sa, done ? EPOLLIN : EPOLLIN | EPOLLOUT);
}

/* Complete the head group with one more reply; 0, or -1 after failing everything. */
static int take_reply(struct store_conn *sa, struct store_reply *r)
{
    struct pending *p = sa->head;
    if (!p) { /* a reply nobody asked for: the stream is out of step */
        store_reply_free(r);
        fail_all(sa, -EIO, "unexpected reply");
        return -1;
    }
    p->replies[p->got++] = r;
    if (p->got < p->n)
        return 0;
    sa->head = p->next;
    if (!sa->head)
        sa->tail = NULL;
    atomic_fetch_sub_explicit(&sa->in_flight, 1, memory_order_relaxed);
    if (sa->unsent == p) { /* cannot happen: a reply to an unsent command */
        share_reset(sa);
        sa->unsent = p->next;
    }
    sa->backoff_ms = BACKOFF_MIN_MS; /* Redis answers */
    sa->answered = 1;
    if (p->script && !p->is_wait && !p->abandoned && r->type == STORE_REPLY_ERROR &&
        strncmp(r->str, "NOSCRIPT", 8) == 0) {
        /* SCRIPT FLUSH, a restarted or failed-over Redis: the script did not run. Send its
         * body (EVAL also loads it for the next EVALSHA) as a new group in the same place of
         * the caller's sequence; the caller sees only the final reply. */
        store_reply_free(r);
        p->got = 0;
        p->next = NULL;
        p->sent = 0;
        p->deadline_ms = INT64_MAX;
        if (append_script(sa, p, 1) < 0) {
            notify(p, -EIO, NULL); /* it did not run: safe to report as unavailable */
            pending_free(p);
        }
        return 0;
    }
    for (int i = 0; i < p->got && store_sentinel_mode(sa->st); i++) /* any of a group's */
        if (p->replies[i]->type == STORE_REPLY_ERROR &&
            strncmp(p->replies[i]->str, "READONLY", 8) == 0) {
            store_sentinel_moved(); /* a replica now: every connection goes to the new primary */
            break;
        }
    if (p->is_wait) {
        if (sa->wait_out == p)
            sa->wait_out = NULL; /* the writes held behind it go out at the next flush */
        if (!p->abandoned)       /* given up: its groups were completed then */
            wait_answered(sa, p);
        pending_free(p);
    } else if (p->abandoned) {
        pending_free(p);
    } else if (p->waits) {
        park(p); /* answered with the verdict of the WAIT after it */
    } else {
        notify(p, 0, p->replies);
        pending_free(p);
    }
    return retire_if_moved(sa, 0) ? -1 : 0;
}

/* Take every complete reply the reader holds. Returns 0, or -1 when the connection failed or a
 * callback closed it (stop reading). */
static int drain_replies(struct store_conn *sa)
{
    while (sa->ctx) {
        void *r = NULL;
        if (redisGetReplyFromReader(sa->ctx, &r) == REDIS_ERR) {
            fail_all(sa, -EIO, "protocol");
            return -1;
        }
        if (!r)
            return 0;
        if (take_reply(sa, r))
            return -1;
    }
    return -1;
}

/* Everything the socket holds now, up to READ_MAX (a big page in one go rather than hiredis's
 * 16 KiB per readiness event, each costing a loop iteration). What was received is fed to
 * hiredis' reader FEED_SLICE bytes at a time, each slice drained of
 * its complete replies before the next: the reader moves its unread bytes to the front of its
 * buffer at every reply once it has consumed 1 KB (hiredis 0.14 read.c, sdsrange), so feeding
 * 64 KB of pipelined page replies at once moved about 9 times that (4% of a live page's CPU,
 * perf), while a slice moves at most itself and one partial reply. */
static void read_replies(struct store_conn *sa)
{
    for (size_t total = 0; total < READ_MAX;) {
        ssize_t n = recv(sa->ctx->fd, sa->chunk, READ_CHUNK, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            fail_all(sa, -EIO, n == 0 ? "server closed the connection" : strerror(errno));
            return;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (size_t off = 0; off < (size_t)n; off += FEED_SLICE) {
            size_t len = (size_t)n - off < FEED_SLICE ? (size_t)n - off : FEED_SLICE;
            if (redisReaderFeed(sa->ctx->reader, sa->chunk + off, len) != REDIS_OK) {
                fail_all(sa, -EIO, "protocol");
                return;
            }
            if (drain_replies(sa))
                return;
        }
        total += (size_t)n;
        if ((size_t)n < READ_CHUNK)
            break;
    }
}

/* The loop saw `events` on the connection's socket. */
static void store_conn_ready(struct store_conn *sa, uint32_t events)
{
    if (!sa->ctx)
        return;
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        read_replies(sa);
    if (sa->ctx && (events & EPOLLOUT))
        store_conn_flush(sa);
}

/* The groups parked on WAIT w past their own deadline (a request's, earlier than the WAIT's):
 * completed now, not confirmed. Returns the earliest deadline of those left, or `next` when
 * earlier (0: none). */
static int64_t parked_late(struct store_conn *sa, struct pending *w, int64_t now, int64_t next)
{
    struct pending **pp = &w->parked, *late = NULL, **late_end = &late;
    while (*pp) {
        struct pending *m = *pp;
        if (now >= m->deadline_ms) {
            *pp = m->park_next;
            m->park_next = NULL;
            *late_end = m;
            late_end = &m->park_next;
            continue;
        }
        if (!next || m->deadline_ms < next)
            next = m->deadline_ms;
        pp = &m->park_next;
    }
    w->parked_end = pp;
    if (late)
        store_note_fault(sa->st, "WAIT",
                         "the replicas' acknowledgement did not come within the request's "
                         "deadline: applied on the primary, answered 503 write_not_replicated");
    while (late) {
        struct pending *m = late;
        late = m->park_next;
        complete_waited(m, -1);
    }
    return next;
}

/* Give up group p of the FIFO, past its deadline: it stays in the FIFO (abandoned), to read and
 * drop its replies should Redis answer after all, or to be written still when it was not yet
 * (behind a WAIT in flight: written later, it may run). A caller's group gets -ETIMEDOUT; a
 * WAIT completes the groups parked on it, not confirmed, and lets the next flush go. */
static void group_give_up(struct store_conn *sa, struct pending *p)
{
    p->abandoned = 1;
    if (p->is_wait) {
        if (sa->wait_out == p)
            sa->wait_out = NULL;
        store_note_fault(sa->st, "WAIT",
                         "no answer within the command timeout: the writes before it are not "
                         "confirmed on the replicas");
        release_parked(p, 0, -1);
        return;
    }
    store_note_fault(sa->st, "timeout",
                     p->sent ? "Redis did not answer within the request's deadline or the command "
                               "timeout"
                             : "not written within the request's deadline (behind a WAIT)");
    notify(p, -ETIMEDOUT, NULL);
}

/* Give up every group past its deadline, wherever it stands in the FIFO (deadlines are the
 * requests' own: a later group may be due first), and the groups parked on a WAIT past theirs;
 * the connection stays. Groups a callback appends meanwhile are judged at the next tick. Returns
 * the earliest deadline still ahead (monotonic ms, perhaps past for those), or 0. */
static int64_t give_up_late(struct store_conn *sa, int64_t now)
{
    int64_t next = 0;
    uint64_t closes = sa->closes;
    struct pending *last = sa->tail;
    for (struct pending *p = sa->head; p; p = p->next) {
        int judged = last != NULL; /* up to and with `last` */
        if (p == last)
            last = NULL;
        if (judged && p->is_wait && !p->abandoned) {
            next = parked_late(sa, p, now, next);
            if (sa->closes != closes)
                return 0; /* a callback's flush failed: the FIFO is gone */
        }
        if (p->abandoned)
            continue;
        if (!judged || now < p->deadline_ms) {
            if (!next || p->deadline_ms < next)
                next = p->deadline_ms;
            continue;
        }
        group_give_up(sa, p); /* its callback may append groups, or flush */
        if (sa->closes != closes)
            return 0;
    }
    return next;
}

/* When the connection is dropped for silence: ABANDON_TIMEOUTS command timeouts after the oldest
 * group was written (only meaningful while that group is written and abandoned). */
static int64_t drop_at(const struct store_conn *sa)
{
    return sa->head->sent_ms + (int64_t)ABANDON_TIMEOUTS * store_timeout_ms(sa->st);
}

/* 1 when something is due: a group in time past its deadline, or the silence limit. */
static int due(const struct store_conn *sa, int64_t now)
{
    for (const struct pending *p = sa->head; p; p = p->next) {
        if (!p->abandoned && now >= p->deadline_ms)
            return 1;
        for (const struct pending *m = p->is_wait ? p->parked : NULL; m; m = m->park_next)
            if (now >= m->deadline_ms)
                return 1;
    }
    return sa->head->abandoned && sa->head->sent && now >= drop_at(sa);
}

/* Adopt a finished dial, give up groups past their deadline, drop a connection silent for two
 * timeouts. Returns the milliseconds until the next deadline, or -1 when nothing is pending. */
static int tick(struct store_conn *sa);

int store_conn_tick(struct store_conn *sa)
{
    retire_if_moved(sa, 1);
    int wait = tick(sa);
    if (sa->stale_ms) /* back to cut it if it stays busy */
        wait = wait < 0 || wait > RETIRE_WAIT_MS ? RETIRE_WAIT_MS : wait;
    return wait;
}

static int tick(struct store_conn *sa)
{
    if (sa->broken)
        fail_all(sa, -EIO, "out of memory");
    finish_dial(sa);
    if (!sa->head && !sa->held)
        return -1;
    int64_t now = util_now_ms();
    int64_t held = sa->held ? give_up_held(sa, now) : 0;
    int held_ms = held ? (int)(held - now > 60000 ? 60000 : held - now) : -1;
    if (!sa->head)
        return held_ms;
    if (sa->ctx && due(sa, now)) {
        /* Before judging anything late, take what the socket already holds: the loop itself may
         * have been held up (a VM pause, a stopped process) while Redis answered in time. */
        read_replies(sa);
        if (!sa->head)
            return held_ms;
    }
    /* 0: no group in time left; no head: a callback's flush failed, which closed it */
    int64_t next = give_up_late(sa, now);
    if (!sa->head)
        return held_ms;
    if (sa->head->abandoned && sa->head->sent) {
        /* Silent for ABANDON_TIMEOUTS timeouts (a half-open connection, a Redis that moved):
         * drop the connection; the groups still in time fail (-EIO; reads are sent again). */
        int64_t drop = drop_at(sa);
        if (now >= drop) {
            fail_all(sa, -EIO, "no answer: reconnecting");
            return held_ms;
        }
        if (!next || drop < next)
            next = drop;
    }
    if (held && (!next || held < next))
        next = held;
    if (!next || next == INT64_MAX) /* only unsent groups of no deadline: the flush starts it */
        return -1;
    int64_t wait = next - now;
    return wait > 60000 ? 60000 : wait < 0 ? 0 : (int)wait;
}

static void ready(void *arg, uint32_t events)
{
    store_conn_ready(arg, events);
}

void store_conn_check(struct store_conn *sa)
{
    store_conn_tick(sa);
}

int store_conn_connected(struct store_conn *sa)
{
    return atomic_load(&sa->up);
}

void store_conn_stats(struct store_conn *sa, struct metrics_conn *out)
{
    out->round_trips = atomic_load_explicit(&sa->round_trips, memory_order_relaxed);
    out->commands = atomic_load_explicit(&sa->commands, memory_order_relaxed);
    out->in_flight = atomic_load_explicit(&sa->in_flight, memory_order_relaxed);
    out->state = atomic_load(&sa->up)            ? METRICS_CONN_UP
                 : atomic_load(&sa->dialing_now) ? METRICS_CONN_DIALLING
                                                 : METRICS_CONN_DOWN;
}

void store_conn_free(struct store_conn *sa)
{
    if (!sa)
        return;
    if (sa->dialing) {
        pthread_join(sa->dialer, NULL);
        redisFree(atomic_exchange(&sa->dialled, NULL));
    }
    sa->retry_at_ms = INT64_MAX; /* no dial from here on, whatever a callback does */
    fail_held(sa, -ECANCELED);
    fail_all(sa, -ECANCELED, "free");
    buf_free(&sa->fmt);
    free(sa->chunk);
    free(sa->host);
    free(sa);
}
