/*
 * store_conn_recv.c -- a connection's receiving side: the replies read and handed to their
 * groups, the loop's readiness events, the deadlines (parked, held and sent groups given up, a
 * silent connection dropped) and the tick. The contract is store_conn.h; store_conn_int.h holds
 * what the store_conn*.c files share.
 */
#include "store_conn_int.h"

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
void store_conn_ready(struct store_conn *sa, uint32_t events)
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
