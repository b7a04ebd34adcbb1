/*
 * httpd.c -- the HTTP exchange over libmicrohttpd: the header deadline, MHD's request and
 * connection callbacks, and the daemons in the event loops with their life cycle (a request's
 * set-up is httpd_request.c's, its reply httpd_reply.c's, its async steps httpd_async.c's). The
 * contract is httpd.h; httpd_int.h holds what the httpd*.c files share.
 */
#include "httpd_int.h"

/* The request callback. libmicrohttpd 0.9.75 answers some malformed requests itself, before
 * this is ever called and with compiled-in HTML bodies it has no hook to replace (400 request or
 * header line, Content-Length value or chunk syntax; 413 Content-Length past 2^64 or chunk size;
 * 414/431 past CONNECTION_MEMORY_BYTES; 505): docs/api.md, "HTTP framing". */
/* ---------------------------------------------------------------- the header deadline */

static void sweep_headers(void *arg);

/* A sweep soon, unless one is set: it runs while any connection is in PHASE_HEADERS or CUT. */
void arm_sweep(struct httpd_thread *t)
{
    if (t->sweeping)
        return;
    int every = t->srv->o.header_timeout_ms / 4;
    if (every > 250)
        every = 250;
    t->sweeping = loop_timer_after(t->loop, every, sweep_headers, t) != NULL;
}

struct conn_clock *clock_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Answer 408 on a connection whose request line and headers are late, before libmicrohttpd has
 * written anything on it (it writes nothing until the headers are in), and stop sending; it
 * closes CUT_LINGER_MS later, once the client has had the time to read the 408. */
static void cut_late(struct httpd_thread *t, struct conn_clock *k, int64_t now)
{
    char why[128], json[256], msg[512];
    snprintf(why, sizeof(why),
             "The request line and headers did not arrive within %d ms (--header-timeout-ms).",
             t->srv->o.header_timeout_ms);
    int jn = err_json(ERR_HEADER_TIMEOUT, why, json, sizeof(json));
    int n = snprintf(msg, sizeof(msg),
                     "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
                     "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                     jn, json);
    ssize_t sent = send(k->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)sent; /* best effort: the close says the rest */
    shutdown(k->fd, SHUT_WR);
    k->phase = PHASE_CUT;
    k->since_ms = now;
}

static void sweep_headers(void *arg)
{
    struct httpd_thread *t = arg;
    t->sweeping = 0;
    int64_t now = util_now_ms();
    int pending = 0;
    for (struct conn_clock *k = t->conns; k; k = k->next) {
        if (k->phase == PHASE_HEADERS && now - k->since_ms >= t->srv->o.header_timeout_ms)
            cut_late(t, k, now);
        else if (k->phase == PHASE_CUT &&
                 now - k->since_ms >= (k->linger_ms ? k->linger_ms : CUT_LINGER_MS))
            shutdown(k->fd, SHUT_RDWR); /* MHD reads the end, closes, and says so */
        pending |= k->phase == PHASE_HEADERS || k->phase == PHASE_CUT;
    }
    if (pending)
        arm_sweep(t);
}

/* The request line is in (MHD_OPTION_URI_LOG_CALLBACK): on a keep-alive connection, the next
 * request's deadline starts now (a first request's started at the accept). */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)uri;
    struct httpd_thread *t = cls;
    struct conn_clock *k = clock_of(c);
    if (k && k->phase == PHASE_IDLE) {
        k->phase = PHASE_HEADERS;
        k->since_ms = util_now_ms();
        arm_sweep(t);
    }
    return NULL; /* the request's own context is made in on_request */
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **ctx)
{
    struct exchange *x = *ctx;
    if (!x) {
        struct conn_clock *k = clock_of(c);
        if (k && k->phase == PHASE_CUT)
            return MHD_NO; /* answered 408 already: headers that came after all are dropped */
        if (k)
            k->phase = PHASE_REQUEST;
        x = spare_take(sizeof(*x)); /* kept for the thread's next request (spare.h) */
        if (!x)
            return MHD_NO;
        memset(x, 0, sizeof(*x));
        if (k)
            k->x = x;
        x->start_us = util_now_us();
        struct httpd_thread *t = cls;
        x->srv = t->srv;
        x->thread = t;
        atomic_fetch_add_explicit(&t->active, 1, memory_order_relaxed);
        x->conn = c;
        *ctx = x;
        begin(t->srv, c, url, method, version, x);
        /* Refused before a body arrives. A body of a known length up to DRAIN_MAX is read and
         * dropped, and the error goes out after it: answered mid-upload, MHD closes a socket
         * with unread data, the kernel resets the connection, and the client may never see the
         * reply (seen as a failed upload instead of the 413). A larger or unknown-length body:
         * answer now and close. Without a body, answer on the next call (keep-alive). */
        if (x->rp.status && has_body(c) && (x->no_drain || !drainable(c)))
            return send_reply(c, x);
        return MHD_YES;
    }
    if (x->cut) { /* answered already (answer_mid_body): the rest is dropped, the end closes */
        if (!*upload_data_size)
            return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (still_away(x))
        return MHD_YES; /* leave the data: MHD offers it again after the resume */
    if (x->queued) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (x->replied)
        return send_reply(c, x);
    if (*upload_data_size) {
        /* MHD 0.9.75 refuses a reply queued mid-body: once an error is decided, the rest of the
         * body is read and dropped, and the error goes out after it. */
        if (!x->rp.status && x->rq.streaming)
            return stream_chunk(x, upload_data, upload_data_size);
        if (!x->rp.status)
            consume(x, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (x->rp.status)
        return send_reply(c, x);
    return dispatch(c, x);
}

static void exchange_free(struct exchange *x)
{
    for (int i = 0; i < x->rq.nparams; i++)
        free(x->rq.params[i]);
    for (size_t i = 0; i < x->rq.nargs; i++)
        free(x->rq.args[i].name); /* the block of its value and raw too (http.h) */
    free(x->rq.args);
    buf_free(&x->rq.body);
    free(x->rq.grant);
    if (x->rq.stream_state && x->route && x->route->stream_free)
        x->route->stream_free(x->rq.stream_state);
    if (x->rq.parsed && x->rq.parsed_free)
        x->rq.parsed_free(x->rq.parsed);
    buf_free(&x->rp.body);
    http_reply_free_fault(&x->rp);
    if (x->rp.fd > 0)
        close(x->rp.fd);
    if (x->rp.stream.free) /* a streamed body never sent */
        x->rp.stream.free(x->rp.stream.arg);
    if (x->body)
        x->body->x = NULL;
    free(x->fault);
    spare_give(x, sizeof(*x));
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    struct exchange *x = *ctx;
    if (!x)
        return;
    access_done(&(struct access_record){
        .method = x->rq.method,
        .route = x->route       ? x->route->name
                 : x->is_static ? "static"
                                : "unmatched",
        .route_metric = x->route       ? x->route->metric
                        : x->is_static ? route_static_metric()
                                       : -1,
        .status = x->queued ? x->rp.status : 0,
        .bytes = x->queued ? x->bytes : 0,
        .us = util_now_us() - x->start_us,
        .cache = reply_header(&x->rp, "X-Cache"),
        .request_id = x->request_id,
        .fault = x->fault,
        .aborted = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !x->cut,
        .client = x->client[0] ? x->client : NULL,
    });
    atomic_fetch_sub_explicit(&x->thread->active, 1, memory_order_relaxed);
    struct conn_clock *k = clock_of(c);
    if (k && k->x == x)
        k->x = NULL;
    if (k && k->phase == PHASE_REQUEST) {
        k->phase = PHASE_IDLE;
        k->since_ms = util_now_ms();
    }
    busy_forgotten(x);
    if (x->handed_off)
        atomic_fetch_sub(&x->srv->in_work, 1);
    exchange_free(x);
    *ctx = NULL;
}

/* ---------------------------------------------------------------- connections */

/* Set while MHD_add_connection runs on this thread: its STARTED notification clears it. */
static __thread int adding;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct httpd_thread *t = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        adding = 0; /* taken: its close gives the slot back */
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn_clock *k = fi ? calloc(1, sizeof(*k)) : NULL;
        if (k) { /* without it the connection has MHD's idle timeout only */
            k->fd = fi->connect_fd;
            k->since_ms = util_now_ms();
            k->phase = PHASE_HEADERS;
            k->next = t->conns;
            if (t->conns)
                t->conns->prev = k;
            t->conns = k;
            arm_sweep(t);
        }
        *socket_ctx = k;
        if (log_enabled(LOG_LEVEL_DEBUG))
            log_debug("http: connection opened on event thread %d (%d there)", t->index,
                      loop_load(t->loop));
        return;
    }
    struct conn_clock *k = *socket_ctx;
    if (k) {
        if (k->prev)
            k->prev->next = k->next;
        else
            t->conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        free(k);
        *socket_ctx = NULL;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    loop_connection_closed(t->loop, ci ? ci->client_addr : NULL);
    if (log_enabled(LOG_LEVEL_DEBUG))
        log_debug("http: connection closed on event thread %d (%d there)", t->index,
                  loop_load(t->loop));
}

/* The loop gives this thread's daemon a connection (loop_connection_fn). */
static int serve(void *arg, int fd, const struct sockaddr *addr, socklen_t len)
{
    struct httpd_thread *t = arg;
    adding = 1;
    MHD_add_connection(t->daemon, fd, addr, len);
    if (adding) { /* refused (out of memory); MHD closed the socket */
        adding = 0;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the daemons in the loops */

/* Step 1 of a loop iteration: how long the daemon may wait (its idle timeouts). */
static int daemon_prepare(void *arg)
{
    struct httpd_thread *t = arg;
    if (atomic_load(&t->srv->stopping))
        stop_uploads(t);
    events_prepare(t);
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout(t->daemon, &ms) != MHD_YES)
        return -1;
    return ms > 60000 ? 60000 : (int)ms;
}

/* Step 4: new requests, resumed replies, timeouts. */
static void daemon_run(void *arg)
{
    struct httpd_thread *t = arg;
    MHD_run(t->daemon);
}

/* The daemon's epoll fd is ready: daemon_run, which runs every iteration, takes it. */
static void daemon_ready(void *arg, uint32_t events)
{
    (void)arg;
    (void)events;
}

struct httpd *httpd_new(const struct httpd_options *o)
{
    struct httpd *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->o = *o;
    d->filters = (struct filters_config){.cors = o->cors, .tokens = o->tokens};
    if (d->o.request_timeout_ms <= 0)
        d->o.request_timeout_ms = 1000;
    if (d->o.header_timeout_ms <= 0)
        d->o.header_timeout_ms = 10000;
    if (d->o.stream_heartbeat_ms <= 0)
        d->o.stream_heartbeat_ms = HTTP_EVENTS_HEARTBEAT_MS;
    if (events_init(d)) {
        free(d);
        return NULL;
    }
    return d;
}

int httpd_attach(struct httpd *d, struct loop *l, struct worker *worker)
{
    if (d->nthreads == HTTP_EVENT_THREADS_MAX)
        return -ENOSPC;
    struct httpd_thread *t = &d->threads[d->nthreads];
    *t = (struct httpd_thread){.srv = d, .loop = l, .worker = worker, .index = d->nthreads};
    if (!(t->gz = gzip_cache_new()))
        return -ENOMEM;
    events_thread_init(t);
    /* the loops accept and enforce the connection limits; MHD's are per daemon */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_TURBO | MHD_USE_ERROR_LOG;
    t->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, t, MHD_OPTION_EXTERNAL_LOGGER,
                                 mhd_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)d->o.max_connections + 16, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, t, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 (size_t)CONNECTION_MEMORY_BYTES, MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
                                 on_completed, t, MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL,
                                 MHD_OPTION_URI_LOG_CALLBACK, on_request_line, t, MHD_OPTION_END);
    if (!t->daemon) {
        int err = errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
        gzip_cache_free(t->gz);
        pthread_mutex_destroy(&t->ev.lock);
        return err;
    }
    d->nthreads++; /* httpd_free stops it from here on */
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    struct loop_hooks h = {.prepare = daemon_prepare, .run = daemon_run, .arg = t};
    if (!info || !(t->watch = loop_watch_add(l, info->epoll_fd, EPOLLIN, daemon_ready, t)))
        return -EIO;
    if (loop_hooks_add(l, &h))
        return -ENOSPC;
    loop_on_connection(l, serve, t);
    return 0;
}

int http_event_threads(const struct httpd *srv, struct metrics_thread *out, int max)
{
    int n = srv->nthreads < max ? srv->nthreads : max;
    for (int i = 0; i < n; i++) {
        const struct httpd_thread *t = &srv->threads[i];
        memset(&out[i], 0, sizeof(out[i]));
        out[i].connections = loop_load(t->loop);
        out[i].busy = atomic_load_explicit(&t->active, memory_order_relaxed);
        out[i].waiting = atomic_load_explicit(&t->waiting, memory_order_relaxed);
        if (srv->o.worker_stats && t->worker)
            srv->o.worker_stats(t->worker, &out[i]);
    }
    return n;
}

const char *http_library_version(void)
{
    return MHD_get_version();
}

void httpd_quiesce(struct httpd *d)
{
    if (!d)
        return;
    /* MHD must not be stopped with suspended connections: refuse new work, let the requests in
     * work finish and their replies go out (bounded by Redis timeouts and page waits). Past
     * STOP_WAIT_MS only the suspended ones are waited for. The loops run meanwhile. The
     * counters go up before `stopping` is read (suspend_exchange), and this sets `stopping`
     * before it reads them (both sequentially consistent): either a request sees the stop, or
     * the stop waits for it. */
    atomic_store(&d->stopping, 1);
    for (int i = 0; i < d->nthreads; i++)
        loop_wake(d->threads[i].loop); /* its uploads waiting for their bodies are answered */
    for (int waited = 0; atomic_load(&d->in_work) > 0 && waited < STOP_WAIT_MS; waited++)
        util_sleep_ms(1);
    while (atomic_load(&d->suspended) > 0)
        util_sleep_ms(1);
}

void httpd_free(struct httpd *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nthreads; i++) {
        struct httpd_thread *t = &d->threads[i];
        loop_watch_remove(t->watch); /* before MHD closes its epoll fd */
        MHD_stop_daemon(t->daemon);  /* its connections close: on_connection gives them back */
        gzip_cache_free(t->gz);
        pthread_mutex_destroy(&t->ev.lock);
    }
    events_free(d);
    free(d);
}
