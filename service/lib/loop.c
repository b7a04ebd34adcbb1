/* loop.c -- event loops, accept and balancing, connection limits, timers, fd watches; see loop.h.
 */
#include "loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "peer_count.h"
#include "util.h"

#define LOOP_EVENTS 64      /* epoll events taken per wait */
#define ACCEPTS_PER_WAKE 16 /* accepts per readiness of the listening socket, for fairness */
#define WAIT_MAX_MS 60000
#define REFUSALS_MAX 64        /* refused connections lingering per loop; beyond, closed at once */
#define REFUSAL_LINGER_MS 1000 /* how long a refused connection waits for its client to close */

/* A watched fd; epoll_event.data.ptr points here. fn NULL: removed during the current dispatch
 * (freed after it). */
struct loop_watch {
    struct loop *loop;
    int fd;
    uint32_t events;
    loop_watch_fn fn;
    void *arg;
    struct loop_watch *next_dead;
};

/* A one-shot timer. */
struct loop_timer {
    int64_t at_ms; /* monotonic */
    void (*fn)(void *arg);
    void *arg;
    struct loop_timer *next;
};

/* An accepted socket on its way to the loop that will serve it. */
struct handoff {
    int fd;
    struct sockaddr_storage addr;
    socklen_t len;
    struct handoff *next;
};

struct loop {
    struct loop_group *group;
    int epfd, wakefd;
    pthread_t thread;
    int running;
    struct loop_watch listen_w, wake_w; /* the listening socket and the eventfd */
    atomic_int load;                    /* connections given to this loop: open, or in its inbox */
    pthread_mutex_t inbox_lock;         /* accepted sockets another loop handed over */
    struct handoff *inbox;              /* under inbox_lock */
    int64_t listen_paused_until;        /* out of descriptors: accept again after this (ms) */
    int soon;                           /* loop_wake on this thread: the next wait is 0 */
    int dispatching;                    /* in step 2: removed watches are freed after it */
    struct loop_watch *dead;            /* removed during the dispatch */
    struct loop_timer *timers;          /* pending, soonest first; this thread only */
    struct loop_hooks hooks[LOOP_HOOKS_MAX];
    int nhooks;
    loop_connection_fn serve;
    void *serve_arg;
    struct refusal *refusals; /* refused connections waiting for their client's close */
    int nrefusals;
};

/* A connection refused at accept (a limit, or stopping): its 503 is written at once, then it
 * lingers, reading and dropping what the client sends, until the client closes or
 * REFUSAL_LINGER_MS pass. Closed with the request unread, the kernel would reset the connection
 * and the client could lose the 503 (it would see a reset, as for a silent close). */
struct refusal {
    struct refusal *next;
    struct loop *loop;
    struct loop_watch *w;
    int fd; /* -1 once closed */
};

struct loop_group {
    struct loop *loops;
    int nloops;
    int listen_fd;
    int port;
    atomic_int quit;     /* the loops return */
    atomic_int stopping; /* loop_group_quiesce: accept no more */
    atomic_int open;     /* open connections, against max_connections */
    int max_connections;
    int max_per_ip;
    struct peer_count *peers; /* open connections per client address (max_per_ip) */
};

/* The loop whose thread runs now (NULL elsewhere). */
static __thread struct loop *this_loop;

struct loop *loop_current(void)
{
    return this_loop;
}

void loop_wake(struct loop *l)
{
    if (l == this_loop) {
        l->soon = 1;
        return;
    }
    uint64_t one = 1;
    ssize_t w = write(l->wakefd, &one, sizeof(one));
    (void)w;
}

int loop_load(const struct loop *l)
{
    return atomic_load(&l->load);
}

/* ---------------------------------------------------------------- watches, hooks, timers */

struct loop_watch *loop_watch_add(struct loop *l, int fd, uint32_t events, loop_watch_fn fn,
                                  void *arg)
{
    struct loop_watch *w = calloc(1, sizeof(*w));
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    *w = (struct loop_watch){.loop = l, .fd = fd, .events = events, .fn = fn, .arg = arg};
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        int e = errno;
        free(w);
        errno = e;
        return NULL;
    }
    return w;
}

int loop_watch_set(struct loop_watch *w, uint32_t events)
{
    if (events == w->events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(w->loop->epfd, EPOLL_CTL_MOD, w->fd, &ev))
        return -errno;
    w->events = events;
    return 0;
}

void loop_watch_remove(struct loop_watch *w)
{
    if (!w)
        return;
    struct loop *l = w->loop;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    if (l->dispatching && l == this_loop) { /* its event may be later in this batch */
        w->fn = NULL;
        w->next_dead = l->dead;
        l->dead = w;
        return;
    }
    free(w);
}

int loop_hooks_add(struct loop *l, const struct loop_hooks *h)
{
    if (l->nhooks == LOOP_HOOKS_MAX)
        return -ENOSPC;
    l->hooks[l->nhooks++] = *h;
    return 0;
}

struct loop_timer *loop_timer_after(struct loop *l, int ms, void (*fn)(void *arg), void *arg)
{
    struct loop_timer *t = l && l == this_loop ? calloc(1, sizeof(*t)) : NULL;
    if (!t)
        return NULL;
    t->at_ms = util_now_ms() + (ms > 0 ? ms : 0);
    t->fn = fn;
    t->arg = arg;
    struct loop_timer **pp = &l->timers;
    while (*pp && (*pp)->at_ms <= t->at_ms) /* after the ones due as soon: first set, first run */
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t;
}

/* Run the timers that are due; the milliseconds until the next one, or -1; 0 when one ran (what
 * it queued, a Redis command, goes out at step 5: the loop must not wait for it). */
static int run_timers(struct loop *l)
{
    int64_t now = util_now_ms();
    int ran = 0;
    while (l->timers && l->timers->at_ms <= now) {
        struct loop_timer *t = l->timers;
        l->timers = t->next;
        void (*fn)(void *) = t->fn;
        void *arg = t->arg;
        free(t);
        fn(arg); /* may add timers */
        ran = 1;
    }
    if (ran)
        return 0;
    if (!l->timers)
        return -1;
    int64_t wait = l->timers->at_ms - now;
    return wait > WAIT_MAX_MS ? WAIT_MAX_MS : (int)wait;
}

/* ---------------------------------------------------------------- admission */

static void give_back(struct loop_group *g, const struct sockaddr *sa)
{
    peer_count_give(g->peers, sa);
    atomic_fetch_sub(&g->open, 1);
}

enum refused { REFUSED_STOPPING = 1, REFUSED_LIMIT, REFUSED_PER_ADDRESS };

/* Reserve a connection slot for a peer: 0, or why not (enum refused). */
static int admit(struct loop_group *g, const struct sockaddr *sa)
{
    if (atomic_load(&g->stopping))
        return REFUSED_STOPPING;
    int open = atomic_load(&g->open);
    for (;;) {
        if (open >= g->max_connections)
            return REFUSED_LIMIT;
        if (atomic_compare_exchange_weak(&g->open, &open, open + 1))
            break;
    }
    if (peer_count_take(g->peers, sa)) {
        atomic_fetch_sub(&g->open, 1);
        return REFUSED_PER_ADDRESS;
    }
    return 0;
}

/* Read and drop what the client sent: 1 when it has closed (or the socket failed), else 0. */
static int drain_peer(int fd)
{
    char buf[4096];
    for (int i = 0; i < 16; i++) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return 1;
        if (n < 0)
            return 0;
    }
    return 0;
}

static void refusal_close(struct refusal *r)
{
    if (r->fd < 0)
        return;
    loop_watch_remove(r->w);
    r->w = NULL;
    close(r->fd);
    r->fd = -1;
}

static void refusal_ready(void *arg, uint32_t events)
{
    struct refusal *r = arg;
    if (drain_peer(r->fd) || (events & (EPOLLERR | EPOLLHUP)))
        refusal_close(r);
}

/* Its linger is over: close it if the client has not, and forget it. */
static void refusal_expire(void *arg)
{
    struct refusal *r = arg;
    struct loop *l = r->loop;
    refusal_close(r);
    for (struct refusal **pp = &l->refusals; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    l->nrefusals--;
    free(r);
}

/* Answer a connection admit refused with a 503 that says why (rankd's JSON error shape,
 * Retry-After: 1, Connection: close), then let it linger (struct refusal). */
static void refuse(struct loop *l, int fd, int why)
{
    const struct loop_group *g = l->group;
    char body[320], msg[640];
    enum err_id id = why == REFUSED_STOPPING ? ERR_SHUTTING_DOWN
                     : why == REFUSED_LIMIT  ? ERR_TOO_MANY_CONNECTIONS
                                             : ERR_TOO_MANY_CONNECTIONS_FROM_ADDRESS;
    if (why == REFUSED_STOPPING)
        snprintf(body, sizeof(body), "rankd is shutting down.");
    else if (why == REFUSED_LIMIT)
        snprintf(body, sizeof(body),
                 "rankd has as many connections open as it takes (--max-connections %d); retry "
                 "shortly.",
                 g->max_connections);
    else
        snprintf(body, sizeof(body),
                 "This client address has as many connections open to rankd as one address may "
                 "(--max-connections-per-ip %d); reuse them (keep-alive) or retry shortly.",
                 g->max_per_ip);
    char json[480];
    int jn = err_json(id, body, json, sizeof(json));
    int n = snprintf(msg, sizeof(msg),
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
                     jn, json);
    ssize_t sent = send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)sent; /* a fresh socket's buffer takes it; if not, the client sees the close */
    shutdown(fd, SHUT_WR);
    struct refusal *r = NULL;
    if (drain_peer(fd) || l->nrefusals >= REFUSALS_MAX || !(r = calloc(1, sizeof(*r)))) {
        close(fd);
        return;
    }
    *r = (struct refusal){.loop = l, .fd = fd};
    r->w = loop_watch_add(l, fd, EPOLLIN | EPOLLRDHUP, refusal_ready, r);
    if (!r->w || !loop_timer_after(l, REFUSAL_LINGER_MS, refusal_expire, r)) {
        loop_watch_remove(r->w);
        close(fd);
        free(r);
        return;
    }
    r->next = l->refusals;
    l->refusals = r;
    l->nrefusals++;
}

void loop_connection_closed(struct loop *l, const struct sockaddr *addr)
{
    give_back(l->group, addr);
    atomic_fetch_sub(&l->load, 1);
}

void loop_on_connection(struct loop *l, loop_connection_fn fn, void *arg)
{
    l->serve = fn;
    l->serve_arg = arg;
}

/* ---------------------------------------------------------------- accepting */

/* Serve an admitted socket on this thread's loop l. */
static void add_connection(struct loop *l, struct handoff *h)
{
    const struct sockaddr *sa = (const struct sockaddr *)&h->addr;
    if (l->serve && l->serve(l->serve_arg, h->fd, sa, h->len) == 0)
        return;
    if (!l->serve)
        close(h->fd);
    give_back(l->group, sa);
    atomic_fetch_sub(&l->load, 1);
}

static struct loop *least_loaded(struct loop_group *g, struct loop *self)
{
    struct loop *best = self;
    int least = atomic_load(&self->load);
    for (int i = 0; i < g->nloops; i++) {
        int n = atomic_load(&g->loops[i].load);
        if (n < least) {
            least = n;
            best = &g->loops[i];
        }
    }
    return best;
}

static void hand_over(struct loop *to, struct handoff *h)
{
    struct handoff *copy = malloc(sizeof(*copy));
    if (!copy) {
        close(h->fd);
        give_back(to->group, (const struct sockaddr *)&h->addr);
        atomic_fetch_sub(&to->load, 1);
        return;
    }
    *copy = *h;
    pthread_mutex_lock(&to->inbox_lock);
    copy->next = to->inbox;
    to->inbox = copy;
    pthread_mutex_unlock(&to->inbox_lock);
    loop_wake(to);
}

/* The wake eventfd is readable: sockets other loops handed to l. */
static void wake_ready(void *arg, uint32_t events)
{
    (void)events;
    struct loop *l = arg;
    uint64_t v;
    ssize_t r = read(l->wakefd, &v, sizeof(v));
    (void)r;
    pthread_mutex_lock(&l->inbox_lock);
    struct handoff *h = l->inbox;
    l->inbox = NULL;
    pthread_mutex_unlock(&l->inbox_lock);
    while (h) {
        struct handoff *next = h->next;
        add_connection(l, h);
        free(h);
        h = next;
    }
}

static void pause_listen(struct loop *l, int pause)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &l->listen_w};
    if (pause) {
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->group->listen_fd, NULL);
        l->listen_paused_until = util_now_ms() + LOOP_ACCEPT_PAUSE_MS;
    } else if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->group->listen_fd, &ev) == 0) {
        l->listen_paused_until = 0;
    }
}

/* The listening socket is readable: accept, admit, and place each connection. */
static void accept_ready(void *arg, uint32_t events)
{
    (void)events;
    struct loop *l = arg;
    struct loop_group *g = l->group;
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        struct handoff h = {.len = sizeof(h.addr)};
        h.fd =
            accept4(g->listen_fd, (struct sockaddr *)&h.addr, &h.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (h.fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                static _Atomic int64_t logged_ms;
                int64_t now = util_now_ms(), last = atomic_load(&logged_ms);
                if (now - last >= 10000 && atomic_compare_exchange_strong(&logged_ms, &last, now))
                    log_warn("accept: %s; pausing accepts %d ms at a time (logged every 10 s)",
                             strerror(errno), LOOP_ACCEPT_PAUSE_MS);
                pause_listen(l, 1); /* level-triggered: it would spin otherwise */
            }
            return;
        }
        int why = admit(g, (const struct sockaddr *)&h.addr);
        if (why) {
            refuse(l, h.fd, why);
            continue;
        }
        struct loop *to = least_loaded(g, l);
        atomic_fetch_add(&to->load, 1);
        if (to == l)
            add_connection(l, &h);
        else
            hand_over(to, &h);
    }
}

/* ---------------------------------------------------------------- the loop */

static int least_ms(int a, int b)
{
    return b >= 0 && (a < 0 || b < a) ? b : a;
}

static void *loop_main(void *arg)
{
    struct loop *l = arg;
    this_loop = l;
    struct epoll_event ev[LOOP_EVENTS];
    while (!atomic_load(&l->group->quit)) {
        int wait_ms = -1;
        for (int i = 0; i < l->nhooks; i++) /* may fail requests and resume connections */
            if (l->hooks[i].prepare)
                wait_ms = least_ms(wait_ms, l->hooks[i].prepare(l->hooks[i].arg));
        wait_ms = least_ms(wait_ms, run_timers(l));
        if (wait_ms < 0 || wait_ms > WAIT_MAX_MS)
            wait_ms = WAIT_MAX_MS;
        if (l->listen_paused_until && wait_ms > LOOP_ACCEPT_PAUSE_MS)
            wait_ms = LOOP_ACCEPT_PAUSE_MS;
        if (l->soon) /* woken on this thread since the hooks last ran */
            wait_ms = 0;
        int n = epoll_wait(l->epfd, ev, LOOP_EVENTS, wait_ms);
        l->dispatching = 1;
        for (int i = 0; i < n; i++) {
            struct loop_watch *w = ev[i].data.ptr;
            if (w->fn)
                w->fn(w->arg, ev[i].events);
        }
        l->dispatching = 0;
        while (l->dead) {
            struct loop_watch *w = l->dead;
            l->dead = w->next_dead;
            free(w);
        }
        if (l->listen_paused_until && util_now_ms() >= l->listen_paused_until)
            pause_listen(l, 0);
        for (int i = 0; i < l->nhooks; i++)
            if (l->hooks[i].check)
                l->hooks[i].check(l->hooks[i].arg);
        run_timers(l);
        l->soon = 0;
        for (int i = 0; i < l->nhooks; i++)
            if (l->hooks[i].run)
                l->hooks[i].run(l->hooks[i].arg);
        for (int i = 0; i < l->nhooks; i++)
            if (l->hooks[i].flush)
                l->hooks[i].flush(l->hooks[i].arg);
    }
    return NULL;
}

/* ---------------------------------------------------------------- lifecycle */

static int make_addr(const char *host, int port, struct sockaddr_storage *ss, int *v6)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    const char *h = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, h, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = 0;
        return 0;
    }
    if (inet_pton(AF_INET6, h, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        return 0;
    }
    return -EINVAL;
}

/* The listening socket: every loop polls it (EPOLLEXCLUSIVE) and accepts (accept_ready). */
static int listen_on(const struct sockaddr_storage *ss, int v6, int *err)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
        bind(fd, (const struct sockaddr *)ss, len) || listen(fd, SOMAXCONN)) {
        *err = errno == EADDRINUSE || errno == EACCES ? -errno : -EADDRINUSE;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len))
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* Set up loop l (not started). Returns 0 or a negative errno; loop_close undoes a partial set-up.
 */
static int loop_open(struct loop_group *g, struct loop *l)
{
    l->group = g;
    l->epfd = l->wakefd = -1;
    pthread_mutex_init(&l->inbox_lock, NULL);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->epfd < 0 || l->wakefd < 0)
        return -errno;
    l->wake_w = (struct loop_watch){
        .loop = l, .fd = l->wakefd, .events = EPOLLIN, .fn = wake_ready, .arg = l};
    l->listen_w = (struct loop_watch){.loop = l,
                                      .fd = g->listen_fd,
                                      .events = EPOLLIN | EPOLLEXCLUSIVE,
                                      .fn = accept_ready,
                                      .arg = l};
    struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &l->wake_w};
    struct epoll_event lev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &l->listen_w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &wev) ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, g->listen_fd, &lev))
        return -EIO;
    return 0;
}

/* After the loop's thread has returned (or never started). */
static void loop_close(struct loop *l)
{
    if (!l->group)
        return;         /* never opened */
    while (l->timers) { /* their requests have completed: nothing is waiting for them */
        struct loop_timer *t = l->timers;
        l->timers = t->next;
        free(t);
    }
    while (l->refusals) { /* their timers are gone with the others */
        struct refusal *r = l->refusals;
        l->refusals = r->next;
        refusal_close(r);
        free(r);
    }
    for (struct handoff *h = l->inbox, *next; h; h = next) { /* handed over, never added */
        next = h->next;
        close(h->fd);
        give_back(l->group, (const struct sockaddr *)&h->addr);
        free(h);
    }
    l->inbox = NULL;
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->wakefd >= 0)
        close(l->wakefd);
    pthread_mutex_destroy(&l->inbox_lock);
}

struct loop_group *loop_group_new(const struct loop_group_options *o, int *err)
{
    struct sockaddr_storage ss;
    int v6 = 0;
    if (make_addr(o->host, o->port, &ss, &v6)) {
        *err = -EINVAL;
        return NULL;
    }
    struct loop_group *g = calloc(1, sizeof(*g));
    if (!g) {
        *err = -ENOMEM;
        return NULL;
    }
    g->max_connections = o->max_connections;
    g->max_per_ip = o->max_per_ip;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = o->threads > 0 ? o->threads : (int)(cores >= 16 ? 8 : cores >= 2 ? cores / 2 : 1);
    if (n > LOOP_THREADS_MAX)
        n = LOOP_THREADS_MAX;
    g->loops = calloc((size_t)n, sizeof(*g->loops));
    g->peers = peer_count_new(g->max_per_ip);
    g->listen_fd = -1;
    *err = g->loops && g->peers ? 0 : -ENOMEM;
    if (!*err && (g->listen_fd = listen_on(&ss, v6, err)) >= 0)
        for (; g->nloops < n && !*err; g->nloops++)
            *err = loop_open(g, &g->loops[g->nloops]);
    if (*err) {
        loop_group_free(g);
        return NULL;
    }
    g->port = bound_port(g->listen_fd);
    return g;
}

int loop_group_size(const struct loop_group *g)
{
    return g->nloops;
}

struct loop *loop_group_loop(struct loop_group *g, int i)
{
    return &g->loops[i];
}

int loop_group_port(const struct loop_group *g)
{
    return g->port;
}

int loop_group_start(struct loop_group *g)
{
    for (int i = 0; i < g->nloops; i++) {
        struct loop *l = &g->loops[i];
        int rc = -pthread_create(&l->thread, NULL, loop_main, l);
        if (rc)
            return rc;
        l->running = 1;
    }
    return 0;
}

void loop_group_quiesce(struct loop_group *g)
{
    atomic_store(&g->stopping, 1);
}

void loop_group_stop(struct loop_group *g)
{
    atomic_store(&g->quit, 1);
    for (int i = 0; i < g->nloops; i++)
        if (g->loops[i].running) {
            loop_wake(&g->loops[i]);
            pthread_join(g->loops[i].thread, NULL);
            g->loops[i].running = 0;
        }
}

void loop_group_free(struct loop_group *g)
{
    if (!g)
        return;
    if (g->loops) {
        loop_group_stop(g);
        for (int i = 0; i < g->nloops; i++)
            loop_close(&g->loops[i]);
        free(g->loops);
    }
    if (g->listen_fd >= 0)
        close(g->listen_fd);
    peer_count_free(g->peers);
    free(g);
}
