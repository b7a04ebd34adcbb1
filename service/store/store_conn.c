/*
 * store_conn.c -- one pipelined non-blocking connection to one Redis node, owned by an event
 * loop: its making, failure, --write-replicas' parked groups, the calls held while dialling, the
 * dial, and the life cycle (sending is store_conn_send.c's, the replies and deadlines
 * store_conn_recv.c's). The contract is store_conn.h (and store_async.h, whose contract it
 * keeps); store_conn_int.h holds what the store_conn*.c files share.
 */
#include "store_conn_int.h"

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

void set_events(struct store_conn *sa, uint32_t events)
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
void notify(struct pending *p, int rc, struct store_reply **replies)
{
    p->fn(p->arg, rc, replies);
    for (struct waiter *w = p->waiters; w; w = w->next)
        w->fn(w->arg, rc, replies);
}

/* Put p at the end of the FIFO of groups (sent, or to send at the next flush), counted in
 * flight. Until it is written its deadline is its caller's (none: INT64_MAX); the write adds the
 * command timeout (store_conn_flush). */
void queue_append(struct store_conn *sa, struct pending *p, int fresh)
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

void pending_free(struct pending *p)
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
void share_reset(struct store_conn *sa)
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
void complete_waited(struct pending *p, long long acks)
{
    p->verdict = (struct store_reply){.type = STORE_REPLY_INTEGER, .integer = acks};
    p->replies[p->n] = &p->verdict;
    notify(p, 0, p->replies);
    p->replies[p->n] = NULL;
    pending_free(p);
}

/* Complete every group parked on WAIT w: with the verdict `acks`, or (rc: the connection is
 * freed) rc without replies. The list is detached first: a callback may send. */
void release_parked(struct pending *w, int rc, long long acks)
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
void park(struct pending *p)
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
void wait_answered(struct store_conn *sa, struct pending *w)
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
void fail_all(struct store_conn *sa, int rc, const char *what)
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
int hold_group(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
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
int64_t give_up_held(struct store_conn *sa, int64_t now)
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

/* Sentinel: a connection dialled before the primary moved takes no new call (from the first
 * send or tick that sees the move, calls are held for the next dial, which asks the sentinels
 * again: never written to the old primary), and is closed once no call is in flight on it; one
 * that stays busy is cut after RETIRE_WAIT_MS when `may_fail` (the loop's tick: its calls fail
 * as for a lost connection, a read is sent again, a write's outcome is unknown), at once when
 * it does not answer (its oldest call given up), so a busy connection cannot stay on the old
 * primary. 1 when it was closed. Never runs a callback unless `may_fail`. */
int retire_if_moved(struct store_conn *sa, int may_fail)
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

void start_dial(struct store_conn *sa)
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

void finish_dial(struct store_conn *sa)
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
