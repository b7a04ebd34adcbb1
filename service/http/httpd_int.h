/*
 * httpd_int.h -- the HTTP exchange's private parts, for service/http/httpd*.c only: the limits,
 * a connection's clock, an event thread's daemon, struct httpd, a request's struct exchange, a
 * streamed body, and the functions one file lends another. The contract is httpd.h.
 */
#ifndef RANKD_HTTPD_INT_H
#define RANKD_HTTPD_INT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <microhttpd.h>

#include "access.h"
#include "cidr.h"
#include "events.h"
#include "filter.h"
#include "filter_gzip.h"
#include "httpd.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "request.h"
#include "route.h"
#include "spare.h"
#include "static_files.h"

#define CONNECTION_TIMEOUT_S 30
/* MHD zeroes a connection's whole memory pool after every request: keep it small. It holds one
 * request's line and headers, the reply headers and the read buffer (body chunks). */
#define CONNECTION_MEMORY_BYTES (16 * 1024)
/* A query name or value, decoded: the request line cannot be longer anyway (a list of 100 ids
 * needs more than a few bytes). */
#define ARG_BYTES_MAX ((size_t)CONNECTION_MEMORY_BYTES)
/* Longest wait at shutdown for requests in work to finish sending (a client that stalls its
 * upload or never reads its reply must not hold the exit); suspended ones are always waited for
 * (bounded by their deadlines): MHD must not stop with them. */
#define STOP_WAIT_MS 5000
#define CUT_LINGER_MS 200 /* a connection cut for its headers closes this long after its 408 */
/* an upload answered in the middle of its body (answer_mid_body) closes this long after the
 * answer, or when its client closes: the time to read it while still sending */
#define UPLOAD_CUT_LINGER_MS 1000

/* Where a connection is in its requests, for the header deadline (httpd_options). */
enum conn_phase {
    PHASE_HEADERS, /* a request line and headers are arriving (the deadline runs) */
    PHASE_REQUEST, /* the headers are in: the request's own deadline governs */
    PHASE_IDLE,    /* between requests (keep-alive): MHD's idle timeout governs */
    PHASE_CUT,     /* answered 408: closed CUT_LINGER_MS after it */
};

struct exchange;

/* One open connection of a daemon (MHD's socket context), on the daemon's thread only. */
struct conn_clock {
    struct conn_clock *prev, *next;
    int64_t since_ms; /* when its phase began */
    int phase;        /* enum conn_phase */
    int linger_ms;    /* PHASE_CUT: closed this long after it began (0: CUT_LINGER_MS) */
    int fd;
    struct exchange *x;       /* its request from the first call to on_completed, or NULL */
    char peer[CIDR_ADDR_MAX]; /* who asked, as client_of found it, while no proxy is trusted
                               * (the same for every request of the connection); "" unknown */
};

/* The event streams of one event thread (httpd_events.c). */
struct events_thread {
    pthread_mutex_t lock;      /* guards woken */
    struct http_events *woken; /* streams woken from other threads, to wake on this one */
    struct http_events *all;   /* every stream of the thread (heartbeats, the stop) */
    int ticking;               /* the heartbeat timer is set */
};

/* One event thread's daemon: libmicrohttpd in external-epoll mode on the connections its loop is
 * given, and the loop's worker for the async steps. */
struct httpd_thread {
    struct httpd *srv;
    struct loop *loop;
    struct MHD_Daemon *daemon;
    struct loop_watch *watch; /* the daemon's epoll fd in the loop */
    struct worker *worker;    /* server.c's (worker.h), opaque here: http_async_worker */
    int index;                /* 0.., for /metrics and the debug log */
    struct conn_clock *conns; /* its open connections (the header deadline) */
    struct gzip_cache *gz;    /* the gzip filter's forms kept by ETag (filter_gzip.h), owned */
    int sweeping;             /* a sweep timer is set */
    struct events_thread ev;  /* its event streams */
    atomic_int active;        /* connections with a request in progress (for /metrics) */
    atomic_int waiting;       /* of those, suspended: for Redis or a timer */
};

struct httpd {
    struct httpd_options o;
    struct filters_config filters; /* from o (filter.h) */
    struct httpd_thread threads[HTTP_EVENT_THREADS_MAX];
    int nthreads;
    atomic_int suspended; /* requests suspended for their async step (Redis, timers) */
    atomic_int in_work;   /* requests suspended at least once and not completed yet */
    atomic_int stopping;
    struct events_caps *caps; /* the event streams' counts (httpd_events.c) */
};

/* Per-request state, created on the first callback and freed in on_completed; touched only by
 * the event thread that owns the connection. */
struct exchange {
    struct http_request rq;
    struct http_reply rp;
    const struct route *route;
    struct httpd *srv;
    struct httpd_thread *thread; /* the event thread that owns the connection */
    struct MHD_Connection *conn;
    int64_t start_us;
    int replied;     /* the async step is done: send rp on the next callback */
    int handed_off;  /* counted in srv->in_work */
    int away;        /* suspended and perhaps not resumed yet */
    int parked;      /* complete, its async step put off by one call (dispatch) */
    int busy;        /* a streamed body's work goes on while the body is read on (the stream
                      * function returned 2): counted in srv->suspended until http_stream_idle */
    int busy_parked; /* suspended by the stop until that work ends (stream_chunk) */
    int cut;         /* answered in the middle of its body (answer_mid_body) */
    int queued;      /* a response was queued */
    int no_drain;    /* refused for its framing: answered before its body, then closed */
    int is_static;   /* a file of the web page (served without a route) */
    uint64_t bytes;  /* body bytes of the queued reply */
    struct access_fault *fault;         /* a 5xx's code and cause (access.h), or NULL */
    char request_id[ACCESS_ID_MAX + 1]; /* X-Request-Id, given or made (access.h) */
    char client[CIDR_ADDR_MAX]; /* who asked: the peer, or behind a trusted proxy the client */
    struct filters_seen seen;   /* what the request filters left for the reply's (filter.h) */
    struct http_body *body;     /* the streamed body being sent (rp.stream), or NULL */
};

/* A streamed body (http_body_source) as libmicrohttpd sends it: a callback response whose reader
 * suspends the connection while the source has nothing ready. Freed with the response; the
 * exchange and the body forget each other when either goes first. */
struct http_body {
    struct exchange *x; /* NULL once the request completed */
    struct http_body_source src;
    int waiting; /* a read returned 0: the connection is suspended until http_body_ready */
};

/* ---------------------------------------------------------------- lent between the files */

/* httpd.c */
void arm_sweep(struct httpd_thread *t);
struct conn_clock *clock_of(struct MHD_Connection *c);

/* httpd_request.c */
__attribute__((format(printf, 2, 0))) void mhd_log(void *cls, const char *fmt, va_list ap);
size_t unescape_none(void *cls, struct MHD_Connection *c, char *s);
void begin(struct httpd *srv, struct MHD_Connection *c, const char *url, const char *method,
           const char *version, struct exchange *x);
void consume(struct exchange *x, const char *data, size_t len);

/* httpd_reply.c */
const char *reply_header(const struct http_reply *rp, const char *name);
enum MHD_Result send_reply(struct MHD_Connection *c, struct exchange *x);
int drainable(struct MHD_Connection *c);
int has_body(struct MHD_Connection *c);

/* httpd_events.c */
int events_init(struct httpd *srv);
void events_thread_init(struct httpd_thread *t);
void events_prepare(struct httpd_thread *t);
void events_free(struct httpd *srv);
int events_accepted(const char *accept);

/* httpd_async.c */
int still_away(struct exchange *x);
void resume_exchange(struct exchange *x);
void suspend_started(struct exchange *x);
/* The connection of x is gone: a busy stream's count is given back (before its stream_free). */
void busy_forgotten(struct exchange *x);
void stop_uploads(struct httpd_thread *t);
enum MHD_Result stream_chunk(struct exchange *x, const char *data, size_t *len);
enum MHD_Result dispatch(struct MHD_Connection *c, struct exchange *x);

#endif
