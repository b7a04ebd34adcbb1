/*
 * httpd_events.c -- server-sent event streams as reply bodies: events shared by reference, a
 * stream's reader, wakes across event threads, heartbeats, the caps and the stop. The contract
 * is events.h; httpd_int.h holds what the httpd*.c files share.
 */
#include "httpd_int.h"

#define CAP_BUCKETS 256
#define EVENT_BLOCK_BYTES ((size_t)4096) /* a stream's reads at most (its reply's block) */

/* ---------------------------------------------------------------- events */

struct http_event {
    atomic_int refs;
    size_t len;
    char data[]; /* the event-stream bytes, len of them */
};

/* Append s[0..n) to b (b->len kept by the caller); 0 or -1 past cap. */
static int put(char *b, size_t *at, size_t cap, const char *s, size_t n)
{
    if (n > cap - *at)
        return -1;
    memcpy(b + *at, s, n);
    *at += n;
    return 0;
}

struct http_event *http_event_new(const char *name, const char *id, const char *data, size_t len)
{
    /* each line of data costs "data: " and its end; a field's line its name, value, end */
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += data[i] == '\n' || (data[i] == '\r' && (i + 1 == len || data[i + 1] != '\n'));
    size_t cap = len + lines * 7 + (name ? strlen(name) + 8 : 0) + (id ? strlen(id) + 5 : 0) + 1;
    struct http_event *e = malloc(sizeof(*e) + cap);
    if (!e)
        return NULL;
    atomic_init(&e->refs, 1);
    size_t at = 0;
    int bad = 0;
    if (name)
        bad |= put(e->data, &at, cap, "event: ", 7) | put(e->data, &at, cap, name, strlen(name)) |
               put(e->data, &at, cap, "\n", 1);
    if (id)
        bad |= put(e->data, &at, cap, "id: ", 4) | put(e->data, &at, cap, id, strlen(id)) |
               put(e->data, &at, cap, "\n", 1);
    size_t from = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && data[i] != '\n' && data[i] != '\r')
            continue;
        bad |= put(e->data, &at, cap, "data: ", 6) | put(e->data, &at, cap, data + from, i - from) |
               put(e->data, &at, cap, "\n", 1);
        if (i < len && data[i] == '\r' && i + 1 < len && data[i + 1] == '\n')
            i++;
        from = i + 1;
    }
    bad |= put(e->data, &at, cap, "\n", 1);
    if (bad) { /* cannot happen: cap counts every byte */
        free(e);
        return NULL;
    }
    e->len = at;
    return e;
}

struct http_event *http_event_ref(struct http_event *e)
{
    if (e)
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    return e;
}

void http_event_unref(struct http_event *e)
{
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
        free(e);
}

/* ---------------------------------------------------------------- the caps */

/* Streams open from one client address. */
struct cap_entry {
    struct cap_entry *next;
    int count;
    char addr[CIDR_ADDR_MAX];
};

struct events_caps {
    pthread_mutex_t lock; /* the buckets */
    struct cap_entry *buckets[CAP_BUCKETS];
    atomic_long open;
    atomic_ulong opened, sent, refused;
};

int events_init(struct httpd *srv)
{
    srv->caps = calloc(1, sizeof(*srv->caps));
    if (!srv->caps)
        return -ENOMEM;
    pthread_mutex_init(&srv->caps->lock, NULL);
    return 0;
}

void events_free(struct httpd *srv)
{
    struct events_caps *c = srv->caps;
    if (!c)
        return;
    for (int i = 0; i < CAP_BUCKETS; i++)
        for (struct cap_entry *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    pthread_mutex_destroy(&c->lock);
    free(c);
    srv->caps = NULL;
}

/* Take a slot for a stream from `addr`: 0, -EUSERS, -EMLINK or -ENOMEM. */
static int cap_take(struct httpd *srv, const char *addr)
{
    struct events_caps *c = srv->caps;
    long open = atomic_fetch_add(&c->open, 1);
    if (srv->o.max_streams > 0 && open >= srv->o.max_streams) {
        atomic_fetch_sub(&c->open, 1);
        return -EUSERS;
    }
    if (srv->o.max_streams_per_ip <= 0)
        return 0;
    size_t b = util_fnv1a(addr, strlen(addr)) % CAP_BUCKETS;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    struct cap_entry *e = c->buckets[b];
    while (e && strcmp(e->addr, addr) != 0)
        e = e->next;
    if (!e && (e = calloc(1, sizeof(*e)))) {
        util_copy(e->addr, sizeof(e->addr), addr);
        e->next = c->buckets[b];
        c->buckets[b] = e;
    }
    if (!e)
        rc = -ENOMEM;
    else if (e->count >= srv->o.max_streams_per_ip)
        rc = -EMLINK;
    else
        e->count++;
    pthread_mutex_unlock(&c->lock);
    if (rc)
        atomic_fetch_sub(&c->open, 1);
    return rc;
}

static void cap_give(struct httpd *srv, const char *addr)
{
    struct events_caps *c = srv->caps;
    atomic_fetch_sub(&c->open, 1);
    if (srv->o.max_streams_per_ip <= 0)
        return;
    size_t b = util_fnv1a(addr, strlen(addr)) % CAP_BUCKETS;
    pthread_mutex_lock(&c->lock);
    for (struct cap_entry **p = &c->buckets[b]; *p; p = &(*p)->next) {
        struct cap_entry *e = *p;
        if (strcmp(e->addr, addr) != 0)
            continue;
        if (--e->count <= 0) {
            *p = e->next;
            free(e);
        }
        break;
    }
    pthread_mutex_unlock(&c->lock);
}

void http_events_stats(const struct httpd *srv, struct http_events_stats *out)
{
    memset(out, 0, sizeof(*out));
    const struct events_caps *c = srv->caps;
    if (!c)
        return;
    out->open = atomic_load(&c->open);
    out->opened = atomic_load(&c->opened);
    out->events_sent = atomic_load(&c->sent);
    out->refused = atomic_load(&c->refused);
}

/* ---------------------------------------------------------------- streams */

static const char prologue_text[] = "retry: 1000\n\n"; /* HTTP_EVENTS_RETRY_MS */
static const char heartbeat_text[] = ": keep-alive\n\n";

struct http_events {
    struct httpd_thread *t;
    struct http_events_source src;
    struct http_body *body; /* from the first read on */
    /* the bytes being sent: an event held, or static text */
    struct http_event *hold;
    const char *p;
    size_t len, off;
    int64_t last_ms;         /* when bytes were last sent (monotonic) */
    int heartbeat;           /* a comment line is due */
    int stopping;            /* rankd stops: the last event, then the end */
    int ended;               /* nothing after the bytes being sent */
    int started;             /* the prologue went */
    int gone;                /* the client is gone (its connection reset): cut the stream */
    struct loop_watch *peer; /* the connection's socket, for the client's close (or NULL) */
    int woken;               /* in t->ev.woken; under its lock */
    struct http_events *woken_next;
    struct http_events *prev, *next; /* t->ev.all */
    char client[CIDR_ADDR_MAX];
};

static void send_event(struct http_events *ev, struct http_event *e)
{
    ev->hold = e;
    ev->p = e->data;
    ev->len = e->len;
    ev->off = 0;
    atomic_fetch_add_explicit(&ev->t->srv->caps->sent, 1, memory_order_relaxed);
}

static void send_text(struct http_events *ev, const char *s, size_t n)
{
    ev->hold = NULL;
    ev->p = s;
    ev->len = n;
    ev->off = 0;
}

/* http_body_source.read: the bytes in hand, else the next event, the last one, a heartbeat. */
static long ev_read(void *arg, struct http_body *body, char *buf, size_t max)
{
    struct http_events *ev = arg;
    ev->body = body;
    if (ev->gone)
        return -2;
    size_t n = 0;
    while (n < max) {
        if (ev->p) {
            size_t k = ev->len - ev->off < max - n ? ev->len - ev->off : max - n;
            memcpy(buf + n, ev->p + ev->off, k);
            n += k;
            ev->off += k;
            if (ev->off == ev->len) {
                http_event_unref(ev->hold);
                ev->hold = NULL;
                ev->p = NULL;
            }
            continue;
        }
        if (!ev->started) {
            ev->started = 1;
            send_text(ev, prologue_text, sizeof(prologue_text) - 1);
            continue;
        }
        if (ev->ended)
            break;
        if (ev->stopping) {
            ev->ended = 1;
            struct http_event *e = ev->src.last ? ev->src.last(ev->src.arg) : NULL;
            if (e)
                send_event(ev, e);
            continue;
        }
        int end = 0;
        struct http_event *e = ev->src.next(ev->src.arg, ev, &end);
        ev->ended = end;
        if (e) {
            send_event(ev, e);
            continue;
        }
        if (ev->heartbeat && !ev->ended && n == 0) {
            send_text(ev, heartbeat_text, sizeof(heartbeat_text) - 1);
            continue;
        }
        break;
    }
    ev->heartbeat = 0;
    if (n) {
        ev->last_ms = util_now_ms();
        return (long)n;
    }
    return ev->ended ? -1 : 0;
}

/* Wake ev on its own thread. */
static void wake_here(struct http_events *ev)
{
    if (ev->body)
        http_body_ready(ev->body); /* a no-op unless a read returned 0 */
}

static void ev_free(void *arg)
{
    struct http_events *ev = arg;
    struct httpd_thread *t = ev->t;
    ev->src.free(ev->src.arg); /* no wake after it */
    pthread_mutex_lock(&t->ev.lock);
    if (ev->woken)
        for (struct http_events **p = &t->ev.woken; *p; p = &(*p)->woken_next)
            if (*p == ev) {
                *p = ev->woken_next;
                break;
            }
    pthread_mutex_unlock(&t->ev.lock);
    if (ev->prev)
        ev->prev->next = ev->next;
    else
        t->ev.all = ev->next;
    if (ev->next)
        ev->next->prev = ev->prev;
    http_event_unref(ev->hold);
    loop_watch_remove(ev->peer); /* the response goes before libmicrohttpd closes the socket */
    cap_give(t->srv, ev->client);
    free(ev);
}

/*
 * The stream's socket, watched in the loop while libmicrohttpd leaves a suspended connection
 * alone: a client that closes would otherwise hold its stream (and its slot under the caps)
 * until the next heartbeat's write fails. The client's FIN (EPOLLRDHUP) may be a half-close of a
 * client that still reads (RFC 9112 9.6): a keep-alive comment is sent at once, which a closed
 * client's kernel answers with a reset (EPOLLHUP, EPOLLERR), and only that cuts the stream.
 */
static void on_peer(void *arg, uint32_t events)
{
    struct http_events *ev = arg;
    if (events & (EPOLLHUP | EPOLLERR)) {
        loop_watch_remove(ev->peer);
        ev->peer = NULL;
        ev->gone = 1;
    } else if (events & EPOLLRDHUP) {
        loop_watch_set(ev->peer, 0); /* EPOLLHUP and EPOLLERR are always reported */
        ev->heartbeat = 1;
    }
    wake_here(ev);
}

void http_events_wake(struct http_events *ev)
{
    struct httpd_thread *t = ev->t;
    if (t->loop == loop_current()) {
        wake_here(ev);
        return;
    }
    pthread_mutex_lock(&t->ev.lock);
    int first = !t->ev.woken;
    if (!ev->woken) {
        ev->woken = 1;
        ev->woken_next = t->ev.woken;
        t->ev.woken = ev;
    }
    pthread_mutex_unlock(&t->ev.lock);
    if (first)
        loop_wake(t->loop);
}

static void heartbeat_tick(void *arg);

static void arm_heartbeat(struct httpd_thread *t)
{
    if (t->ev.ticking || !t->ev.all)
        return;
    int every = t->srv->o.stream_heartbeat_ms / 4;
    t->ev.ticking =
        loop_timer_after(t->loop, every > 1000 ? 1000 : every, heartbeat_tick, t) != NULL;
}

/* Every stream of the thread that has sent nothing for the heartbeat's time gets a comment. */
static void heartbeat_tick(void *arg)
{
    struct httpd_thread *t = arg;
    t->ev.ticking = 0;
    int64_t now = util_now_ms();
    for (struct http_events *ev = t->ev.all; ev; ev = ev->next)
        if (!ev->heartbeat && now - ev->last_ms >= t->srv->o.stream_heartbeat_ms) {
            ev->heartbeat = 1;
            wake_here(ev);
        }
    arm_heartbeat(t);
}

void events_thread_init(struct httpd_thread *t)
{
    pthread_mutex_init(&t->ev.lock, NULL);
}

/* Step 1 of t's loop: the streams woken from other threads are woken here; when rankd stops,
 * every stream is told to send its last event. */
void events_prepare(struct httpd_thread *t)
{
    if (t->ev.woken) { /* racy peek: a wake after it wakes the loop again */
        pthread_mutex_lock(&t->ev.lock);
        struct http_events *list = t->ev.woken;
        t->ev.woken = NULL;
        for (struct http_events *ev = list; ev; ev = ev->woken_next)
            ev->woken = 0;
        pthread_mutex_unlock(&t->ev.lock);
        /* ev_free runs on this thread only, never in between: the list stays valid */
        for (struct http_events *ev = list, *next; ev; ev = next) {
            next = ev->woken_next;
            wake_here(ev);
        }
    }
    if (atomic_load(&t->srv->stopping))
        for (struct http_events *ev = t->ev.all; ev; ev = ev->next)
            if (!ev->stopping) {
                ev->stopping = 1;
                wake_here(ev);
            }
}

int http_reply_events(struct http_reply *rp, struct http_async *a,
                      const struct http_events_source *src, struct http_events **out)
{
    struct exchange *x = (struct exchange *)a;
    struct httpd_thread *t = x->thread;
    struct http_events *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return -ENOMEM;
    int rc = cap_take(t->srv, x->client);
    if (rc) {
        if (rc != -ENOMEM)
            atomic_fetch_add(&t->srv->caps->refused, 1);
        free(ev);
        return rc;
    }
    atomic_fetch_add(&t->srv->caps->opened, 1);
    ev->t = t;
    ev->src = *src;
    ev->last_ms = util_now_ms();
    util_copy(ev->client, sizeof(ev->client), x->client);
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (fi) /* without it, a closed client is found at the next heartbeat */
        ev->peer = loop_watch_add(t->loop, fi->connect_fd, EPOLLRDHUP, on_peer, ev);
    ev->next = t->ev.all;
    if (t->ev.all)
        t->ev.all->prev = ev;
    t->ev.all = ev;
    arm_heartbeat(t);
    struct http_body_source body = {
        .read = ev_read, .free = ev_free, .arg = ev, .block = EVENT_BLOCK_BYTES};
    http_reply_stream(rp, 200, "text/event-stream", &body);
    http_reply_header(rp, "Cache-Control", "no-store");
    http_reply_header(rp, "X-Accel-Buffering", "no");
    if (out)
        *out = ev;
    return 0;
}

void http_events_refuse(struct http_reply *rp, int rc)
{
    if (rc == -EUSERS)
        http_reply_error_default(rp, ERR_TOO_MANY_STREAMS);
    else if (rc == -EMLINK)
        http_reply_error_default(rp, ERR_TOO_MANY_STREAMS_FROM_ADDRESS);
    else {
        http_reply_errno(rp, rc);
        return;
    }
    http_reply_header(rp, "Retry-After", "5");
}

struct store_async *http_events_store(const struct http_events *ev, int writes, int cache)
{
    const struct httpd_thread *t = ev->t;
    if (t->loop != loop_current())
        return NULL;
    if (cache)
        return writes ? t->cache_writes : t->cache_reads;
    return writes ? t->writes : t->reads;
}

int http_events_after(const struct http_events *ev, int ms, void (*fn)(void *arg), void *arg)
{
    if (ev->t->loop != loop_current())
        return -1;
    return loop_timer_after(ev->t->loop, ms, fn, arg) ? 0 : -1;
}

int http_events_own_thread(const struct http_events *ev)
{
    return ev->t->loop == loop_current();
}

/* 1 when an Accept header names text/event-stream (with a q other than 0). */
int events_accepted(const char *accept)
{
    static const char type[] = "text/event-stream";
    for (const char *p = accept; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t k = strcspn(p, ";, \t");
        if (k == sizeof(type) - 1 && strncasecmp(p, type, k) == 0) {
            const char *q = strstr(p, "q=");
            if (!q || q >= p + n || strtod(q + 2, NULL) > 0)
                return 1;
        }
        p += n;
    }
    return 0;
}
