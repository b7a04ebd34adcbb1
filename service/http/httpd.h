/*
 * httpd.h -- the HTTP exchange over libmicrohttpd: one daemon per event loop (loop.h), the
 * request callback, suspend and resume, body uploads and streams, and sending replies. The only
 * user of microhttpd.h; handlers see only http.h.
 *
 * Threading model (the reason for it): a few event threads (--http-threads; the default 0 = half
 * the cores, 1 to 8: the other half is left to Redis and the clients, since under load an event
 * thread keeps a core busy; on 2 cores a second one gave the hot page 1.19 x the throughput and
 * 1.58 x the p99: bench/results/compare-issue3.md, sections 3 and 4), each with a daemon of its
 * own in external-epoll mode (MHD_USE_EPOLL, MHD_ALLOW_SUSPEND_RESUME) whose epoll fd is a watch
 * of the thread's loop, next to the thread's worker (its Redis connections: worker.h, built and
 * owned by server.c, carried here as an opaque pointer) and its timers.
 * An event thread multiplexes many connections, so it must never wait: it parses, checks, answers
 * from memory and sends Redis commands without waiting for their replies. A request goes through
 * one or two steps (route.h), both on the event thread that read it; no other thread and no
 * wake-up is involved (on 2 cores a hand-off to another thread and back was about a quarter of a
 * hit's CPU: bench/results/compare-issue3.md):
 *   1. quick: 400s, /healthz, /metrics and in-process tier hits are answered at once;
 *   2. async, connection suspended: every other request appends its script calls, commands or
 *      lookups to the connections of the thread's worker (http_async_worker); every command of one
 * loop iteration leaves in one write per connection (a pipeline), and the replies, read by the same
 * thread, start the request's next call or answer it and resume its connection; waits (a page lock
 * held elsewhere) are timers. Control operations (settings, delete, reset, trim, the board list,
 *      records, /admin, /readyz) are chains of such calls (board_ctl_submit), and an NDJSON
 *      upload writes each full chunk of lines while its connection is suspended. One deadline
 *      per request (http_request.deadline_ms, --request-timeout-ms) bounds all of it. A request
 *      that arrives while its thread's connection is being dialled waits for that dial within
 *      its deadline (store_async.h); the dial itself, which the store does only blockingly, runs
 *      on a short-lived helper thread.
 *
 * Connections come from the loops (loop_on_connection: the loop group accepts and balances them
 * and enforces the connection limits) and are handed to the thread's daemon
 * (MHD_add_connection); MHD's close notification gives them back (loop_connection_closed).
 * Shutdown (httpd_quiesce) answers new work 503, gives requests in work up to 5 s to finish
 * sending (a stalled upload or a client that never reads must not hold the exit), and always lets
 * suspended requests finish (MHD must not stop with suspended connections; they are bounded by
 * their deadlines). Idle keep-alive connections are closed after 30 s; so is a
 * connection whose client closed it in the middle of a request, which libmicrohttpd 0.9.75's
 * edge-triggered epoll can miss (its slot counts until then).
 */
#ifndef RANKD_HTTPD_H
#define RANKD_HTTPD_H

#include "http.h"

struct loop;
struct metrics_thread;
struct tokens;
struct worker;
struct cors;
struct cidr_list;

/** What httpd_new needs from the application. */
struct httpd_options {
    const void *ctx;         /**< given to every request (http_request.ctx): the handlers'
                              *   context, opaque here; borrowed, outlives the server */
    struct tokens *tokens;   /**< bearer tokens for ROUTE_WRITE routes (tokens.h); none in
                              *   force: writes refused (403); borrowed, outlives the server */
    const char *static_root; /**< real path of the directory served at `/`; "": none; borrowed */
    const char *embed_frame_ancestors; /**< the CSP frame-ancestors sources an HTML file asked
                                        *   with ?embed=1 is sent with (any other HTML file:
                                        *   'self' and X-Frame-Options SAMEORIGIN); NULL or
                                        *   "": '*'; borrowed */
    int max_connections;     /**< each daemon's own limit (the loops enforce the real one) */
    int request_timeout_ms;  /**< http_request.deadline_ms; 0 = 1000 */
    const struct cors *cors; /**< the origins that may read cross-origin (cors.h); NULL or
                              *   empty: no CORS headers; borrowed, outlives the server */
    const struct cidr_list *trusted_proxies; /**< peers whose X-Forwarded-For names the client
                                              *   (cidr.h); NULL or empty: none; borrowed */
    int listener;                   /**< which routes it serves: enum auth_listener (auth.h) */
    const struct httpd *metrics_of; /**< /metrics reports this server's event threads (the
                                     *   admin listener: the public one's); NULL: its own */
    int header_timeout_ms;   /**< a request's line and headers must arrive within this, however
                              *   slowly they trickle: the first request's from the accept, a
                              *   later one's from its request line (an idle keep-alive
                              *   connection is MHD's 30 s idle timeout's); past it, 408
                              *   header_timeout and the connection closed. 0 = 10000 */
    int max_streams;         /**< event streams open at once (events.h); 0: no cap but the
                              *   connection limits */
    int max_streams_per_ip;  /**< from one client address; 0: no cap */
    int stream_heartbeat_ms; /**< a stream idle this long sends a comment line; 0 = 15000 */
    /** Fill the Redis connections' part of an event thread's /metrics row (out->reads,
     *  out->writes) from its worker (httpd_attach's); from any thread (http_event_threads).
     *  NULL: left zero. */
    void (*worker_stats)(const struct worker *w, struct metrics_thread *out);
};

/** A server with no daemon yet (httpd_attach adds them). Returns NULL on ENOMEM. Free with
 *  httpd_free. */
struct httpd *httpd_new(const struct httpd_options *o);

/**
 * Serve the connections of loop `l` with a daemon of its own, before the loop's group starts:
 * the daemon's epoll fd becomes a watch of l, MHD runs in step 4 of each iteration, and l's
 * connections go to it. `worker` is the loop's worker (worker.h: its Redis connections), opaque
 * here and borrowed: it must outlive the daemon (httpd_free); the async steps of l's requests get
 * it back through http_async_worker. Returns 0, -ENOSPC (HTTP_EVENT_THREADS_MAX daemons
 * already), -EMFILE, -ENOMEM, -EIO.
 */
int httpd_attach(struct httpd *d, struct loop *l, struct worker *worker);

/**
 * Stop taking work: requests from now on are 503 shutting_down; wait up to 5 s for the requests
 * in work to finish sending, and for as long as it takes for the suspended ones (the loops must
 * run meanwhile). From a thread that is not an event thread.
 */
void httpd_quiesce(struct httpd *d);

/** After the loops have stopped (loop_group_stop): close the daemons and their connections
 *  (each given back to its loop), free. NULL: no-op. */
void httpd_free(struct httpd *d);

#endif
