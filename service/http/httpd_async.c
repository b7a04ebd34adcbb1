/*
 * httpd_async.c -- a request's async steps: suspended and resumed on its event thread, the
 * handlers' calls (http_async_done, http_async_worker, http_timer_after, http_stream_done), uploads
 * streamed and answered in the middle of their body, and the dispatch to the route's handler. The
 * contract is httpd.h; httpd_int.h holds what the httpd*.c files share.
 */
#include "httpd_int.h"

/* ---------------------------------------------------------------- async steps */

/* The event threads never block (see httpd.h): a request that waits for Redis or a timer is
 * suspended while its async step runs on the same thread, and resumed when it is done. */

/* Suspend x for its async step. Returns 0, or -1 when rankd is stopping (x is not suspended).
 * The counters go up before `stopping` is read, and httpd_quiesce sets `stopping` before it reads
 * them (both sequentially consistent): either this sees the stop, or the stop waits for x. */
static int suspend_exchange(struct exchange *x)
{
    struct httpd *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    if (atomic_load(&srv->stopping)) {
        atomic_fetch_sub(&srv->suspended, 1);
        return -1;
    }
    x->away = 1;
    atomic_fetch_add_explicit(&x->thread->waiting, 1, memory_order_relaxed);
    MHD_suspend_connection(x->conn);
    return 0;
}

/* 1 while x's async step may still be running: suspended and not resumed. MHD 0.9.75 goes on
 * calling the handler with the rest of a chunked body after the connection is suspended; such
 * calls must neither consume data nor start more work. */
int still_away(struct exchange *x)
{
    if (!x->away)
        return 0;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_SUSPENDED);
    if (ci && ci->suspended == MHD_YES)
        return 1;
    x->away = 0;
    return 0;
}

static void reply_stopping(struct http_reply *rp)
{
    http_reply_error_default(rp, ERR_SHUTTING_DOWN);
    http_reply_header(rp, "Retry-After", "1");
}

/* 1 when x's connection belongs to the calling event thread. */
static int on_own_thread(const struct exchange *x)
{
    return x->thread && x->thread->loop == loop_current();
}

/* Resume the connection; x may be freed as soon as this starts. Without an internal polling
 * thread MHD has no channel of its own to notice a resume, and applies resumes only when the
 * daemon runs next: loop_wake, on the loop's own thread, makes it run the daemon again before it
 * waits. */
void resume_exchange(struct exchange *x)
{
    struct httpd *srv = x->srv;
    atomic_fetch_sub_explicit(&x->thread->waiting, 1, memory_order_relaxed);
    MHD_resume_connection(x->conn);
    loop_wake(x->thread->loop);
    atomic_fetch_sub(&srv->suspended, 1); /* last: httpd_quiesce returns once it is 0 */
}

struct worker *http_async_worker(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    return on_own_thread(x) ? x->thread->worker : NULL;
}

struct http_timer *http_timer_after(struct http_async *a, int ms, void (*fn)(void *arg), void *arg)
{
    struct exchange *x = (struct exchange *)a;
    struct loop *l = x ? (on_own_thread(x) ? x->thread->loop : NULL) : loop_current();
    if (!l)
        return NULL;
    /* the caller only tests the result: an http_timer is a loop timer under another name */
    return (struct http_timer *)(void *)loop_timer_after(l, ms, fn, arg);
}

void http_async_done(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    x->replied = 1;
    resume_exchange(x);
}

void http_stream_done(struct http_async *a)
{
    resume_exchange((struct exchange *)a);
}

void http_stream_idle(struct http_async *a)
{
    struct exchange *x = (struct exchange *)a;
    if (!x->busy)
        return;
    struct httpd *srv = x->srv;
    int parked = x->busy_parked;
    x->busy = x->busy_parked = 0;
    atomic_fetch_sub(&srv->suspended, 1); /* the park's own count stays until its resume */
    if (parked)
        resume_exchange(x); /* the stop answers it now, with everything settled */
}

/* The stream function returned 2: its work goes on while the body is read on. The stop waits for
 * it as for a suspended request (the count), and no answer is made for the upload before it ends
 * (stop_uploads, stream_chunk, dispatch). */
static void busy_started(struct exchange *x)
{
    if (x->busy)
        return;
    struct httpd *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    x->busy = 1;
}

void busy_forgotten(struct exchange *x)
{
    if (x->busy) /* the connection is gone: the route's stream_free learns it, and ends its work */
        atomic_fetch_sub(&x->srv->suspended, 1);
    x->busy = 0;
}

/* Suspend x for work already started on this thread (it cannot be undone when rankd is
 * stopping: the stop waits for it, as for any suspended request). */
void suspend_started(struct exchange *x)
{
    struct httpd *srv = x->srv;
    if (!x->handed_off) {
        x->handed_off = 1;
        atomic_fetch_add(&srv->in_work, 1);
    }
    atomic_fetch_add(&srv->suspended, 1);
    x->away = 1;
    atomic_fetch_add_explicit(&x->thread->waiting, 1, memory_order_relaxed);
    MHD_suspend_connection(x->conn);
}

/* rankd stops in the middle of a streamed body: the route says how far it got (a client must
 * resume without applying a line twice), or a plain 503. */
static void stream_stopped(struct exchange *x)
{
    if (x->route->stream_stopped)
        x->route->stream_stopped(&x->rq, &x->rp);
    else
        reply_stopping(&x->rp);
}

/* Send x's reply now, in the middle of its request body, and close the connection after it.
 * libmicrohttpd 0.9.75 takes a reply only once the body is read (MHD_queue_response refuses one
 * before), and a stopping rankd cannot wait for the rest of an upload of any length: the reply is
 * written on the socket here (MHD writes nothing on a connection whose body it is reading), the
 * write side is shut after it, and the connection is cut as for a 408 (cut_late): the rest of
 * the body is read and dropped (answered with unread data, the kernel would reset the connection
 * and the client could lose the reply), and it closes when the client does, or
 * UPLOAD_CUT_LINGER_MS later. Without its socket context (out of memory at its accept), it is
 * answered when the body ends, as before. */
static void answer_mid_body(struct exchange *x)
{
    struct conn_clock *k = clock_of(x->conn);
    struct http_reply *rp = &x->rp;
    if (!k || !rp->status)
        return;
    struct buf out = {0};
    char line[HTTP_HEADER_BYTES + 64];
    int n = snprintf(line, sizeof(line),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: "
                     "close\r\nX-Request-Id: %s\r\n",
                     rp->status, MHD_get_reason_phrase_for((unsigned)rp->status),
                     rp->content_type ? rp->content_type : "application/json", rp->body.len,
                     x->request_id);
    int bad = n < 0 || (size_t)n >= sizeof(line) || buf_append(&out, line, (size_t)n);
    for (int i = 0; !bad && i < rp->nheaders; i++) {
        n = snprintf(line, sizeof(line), "%s: %s\r\n", rp->headers[i].name, rp->headers[i].value);
        bad = n < 0 || (size_t)n >= sizeof(line) || buf_append(&out, line, (size_t)n);
    }
    if (bad || buf_append(&out, "\r\n", 2) ||
        (rp->body.len && buf_append(&out, rp->body.data, rp->body.len))) {
        buf_free(&out);
        return; /* out of memory: answered when the body ends */
    }
    for (size_t sent = 0; sent < out.len;) { /* a few hundred bytes: the socket takes them */
        ssize_t w = send(k->fd, out.data + sent, out.len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0)
            break; /* best effort: the close says the rest */
        sent += (size_t)w;
    }
    buf_free(&out);
    shutdown(k->fd, SHUT_WR);
    x->cut = 1;
    x->queued = 1; /* for the access log */
    x->bytes = rp->body.len;
    if (rp->status >= 500 && !x->fault)
        x->fault = access_fault_of(rp->status, rp->error, rp->fault);
    k->phase = PHASE_CUT;
    k->since_ms = util_now_ms();
    k->linger_ms = UPLOAD_CUT_LINGER_MS;
    arm_sweep(x->thread);
}

/* rankd is stopping: every upload of thread t that waits for more of its body (not suspended for
 * a chunk's write: that one is answered when it is resumed, by stream_chunk) is answered now, with
 * how far it got; an upload whose body is complete is answered as any request. */
void stop_uploads(struct httpd_thread *t)
{
    for (struct conn_clock *k = t->conns; k; k = k->next) {
        struct exchange *x = k->x;
        if (!x || !x->rq.streaming || x->cut || x->queued || x->replied || x->parked || x->busy ||
            still_away(x))
            continue;
        if (!x->rp.status)
            stream_stopped(x);
        answer_mid_body(x);
    }
}

/* A chunk of an NDJSON body, on the event thread: a full chunk of lines is written while the
 * connection is suspended. */
enum MHD_Result stream_chunk(struct exchange *x, const char *data, size_t *len)
{
    if (atomic_load(&x->srv->stopping)) {
        if (x->busy) { /* answered with the work in flight settled: it resumes x (idle) */
            if (!x->busy_parked) {
                x->busy_parked = 1;
                suspend_started(x);
            }
            return MHD_YES; /* the data is offered again after the resume */
        }
        stream_stopped(x);
        answer_mid_body(x);
        *len = 0;
        return MHD_YES;
    }
    size_t used = 0;
    int rc = x->route->stream_async(&x->rq, data, *len, &used, &x->rp, (struct http_async *)x);
    *len = rc < 0 ? 0 : *len - used; /* an error: the rest is read and dropped */
    if (rc == 1)
        suspend_started(x);
    else if (rc == 2)
        busy_started(x);
    return MHD_YES;
}

/* The whole request is in: answer from memory, or run the route's async step.
 *
 * The async step starts on the call after the one that completed the request (x->parked).
 * libmicrohttpd 0.9.75 sets a connection's interest (read, write, or wait for the application)
 * after each call, and never while it is suspended: suspended in the call that completes the
 * request, it keeps the read interest it had while the request arrived, and on resuming it reads
 * before it calls back. A client that sent its whole request and shut down its write side
 * (shutdown(SHUT_WR): not an abort, RFC 9112 9.6) has left the end of its stream there: MHD reads
 * it and closes the connection unanswered, whatever was done. Returned to once without a reply,
 * MHD marks the connection as waiting for the application (no read), keeps it in its ready list
 * and calls again on its next run, at once (MHD_get_timeout is 0 meanwhile); suspended from that
 * call, the connection is resumed into a call, not a read. Nothing has started in between, so a
 * connection that closes meanwhile leaves nothing behind. */
enum MHD_Result dispatch(struct MHD_Connection *c, struct exchange *x)
{
    const struct route *r = x->route;
    if (!x->parked) {
        x->rq.deadline_ms = util_now_ms() + x->srv->o.request_timeout_ms;
        if (r->quick && r->quick(&x->rq, &x->rp))
            return send_reply(c, x);
        if (!r->async) { /* a route table bug: every route has a step that answers */
            http_reply_error(&x->rp, ERR_INTERNAL, "The route has no step that answers.");
            return send_reply(c, x);
        }
        x->parked = 1;
        return MHD_YES;
    }
    if (x->busy) /* an upload's work is in flight: its end cannot be refused, the stop waits */
        suspend_started(x);
    else if (suspend_exchange(x)) {
        if (x->rq.streaming)
            stream_stopped(x); /* how far the upload got */
        else
            reply_stopping(&x->rp);
        return send_reply(c, x);
    }
    r->async(&x->rq, &x->rp, (struct http_async *)x);
    return MHD_YES;
}
