/*
 * loop.h -- the event loops: one epoll set per thread, the listening socket, accept and balancing
 * of connections across the loops, the process-wide connection limits, timers, and a watch API
 * through which the HTTP daemons (httpd.h) and the Redis connections (store_async.h) plug in.
 *
 * Why rankd runs its own loops: libmicrohttpd 0.9.75's external-epoll mode gives one epoll fd per
 * daemon and leaves the waiting to the caller, so each event thread waits on one epoll set of its
 * own that holds its daemon's epoll fd, its Redis connections' sockets, a wake eventfd and the
 * shared listening socket; timers are the waits of that same call. An event thread multiplexes
 * many connections, so nothing registered with a loop may block (httpd.h says what runs where).
 *
 * Accept and balancing: every loop polls the listening socket (EPOLLEXCLUSIVE) and accepts, then
 * gives each connection to the loop with the fewest (loop_load): left to the kernel, one thread
 * of two held 53 of 64 benchmark connections while the other idled. A connection for another
 * loop is queued in its inbox and the loop woken. --max-connections and --max-connections-per-ip
 * hold for the whole process (libmicrohttpd counts per daemon): a slot is reserved at accept and
 * given back by loop_connection_closed. Out of descriptors (EMFILE...), accepting pauses for
 * LOOP_ACCEPT_PAUSE_MS at a time instead of spinning on the level-triggered socket.
 *
 * One iteration of a loop, in this order (hooks in the order they were added):
 *   1. each hook's `prepare`, then the due timers: the wait is the least of what they return
 *      (capped at 60 s), or 0 after a loop_wake on the loop's own thread or when a timer ran
 *      (what it queued, a Redis command, goes out at step 5 before the loop sleeps);
 *   2. epoll_wait; each ready watch's callback; the wake eventfd takes the inbox;
 *   3. each hook's `check`, then the due timers;
 *   4. each hook's `run` (libmicrohttpd: new requests, resumed replies, its timeouts);
 *   5. each hook's `flush` (the Redis connections send what the iteration queued: a pipeline).
 *
 * Threads: loop_group_* run on the thread that owns the group (main, or a test), except where
 * said. Watches, hooks and timers of a loop are used on that loop's thread once it runs (hooks
 * only before it starts); loop_wake and loop_load are safe from any thread.
 */
#ifndef RANKD_LOOP_H
#define RANKD_LOOP_H

#include <stdint.h>
#include <sys/socket.h>

#define LOOP_THREADS_MAX 64      /**< event threads at most */
#define LOOP_HOOKS_MAX 8         /**< hooks per loop */
#define LOOP_ACCEPT_PAUSE_MS 100 /**< accepting pauses this long when out of descriptors */

struct loop_group;
struct loop;

/** What loop_group_new needs from the configuration. */
struct loop_group_options {
    const char *host;    /**< listen address: an IPv4 or IPv6 literal, or "localhost" */
    int port;            /**< 0: any free port */
    int threads;         /**< event threads, 1..LOOP_THREADS_MAX; 0 = half the online cores, at
                          *   least 1, at most 8 (the other half is left to Redis and clients) */
    int max_connections; /**< open connections at once, for the whole process */
    int max_per_ip;      /**< open connections from one client address; 0: no limit */
};

/**
 * Listen, and set up the loops (not started). Returns NULL with *err set: -EINVAL (a bad
 * address), -EADDRINUSE or -EACCES (cannot bind), -EMFILE, -ENOMEM. Free with loop_group_free.
 */
struct loop_group *loop_group_new(const struct loop_group_options *o, int *err);

/** How many loops the group has (fixed at loop_group_new). */
int loop_group_size(const struct loop_group *g);

/** Loop i (0 <= i < loop_group_size). Borrowed, valid until loop_group_free. */
struct loop *loop_group_loop(struct loop_group *g, int i);

/** The bound port (useful with port 0). */
int loop_group_port(const struct loop_group *g);

/** Start one thread per loop. Returns 0 or a negative errno (the loops started so far run:
 *  stop them with loop_group_stop). */
int loop_group_start(struct loop_group *g);

/** Accept no more connections (those open stay). Any thread; idempotent. */
void loop_group_quiesce(struct loop_group *g);

/** Make the loops return and join their threads. Idempotent. */
void loop_group_stop(struct loop_group *g);

/**
 * Stop the loops (if running), close the connections still in an inbox, free. Whatever was
 * registered must be gone first: each watch removed (loop_watch_remove) and each connection given
 * to a loop closed (loop_connection_closed). Pending timers are dropped unrun. NULL: no-op.
 */
void loop_group_free(struct loop_group *g);

/**
 * Takes one connection given to a loop, on that loop's thread: returns 0 when it serves fd, and
 * then calls loop_connection_closed once when the connection closes; or -1 when it refused it
 * (after closing fd).
 */
typedef int (*loop_connection_fn)(void *arg, int fd, const struct sockaddr *addr, socklen_t len);

/** Who serves the connections l is given (before the group starts). Without one, connections
 *  are closed at once. */
void loop_on_connection(struct loop *l, loop_connection_fn fn, void *arg);

/** A connection l was given has closed: its slot, its address's count and l's load go back.
 *  Any thread. */
void loop_connection_closed(struct loop *l, const struct sockaddr *addr);

/** Connections given to l: open, or queued in its inbox. A racy snapshot, from any thread. */
int loop_load(const struct loop *l);

/** Called on the loop's thread with the epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP) that
 *  were ready on a watched fd. */
typedef void (*loop_watch_fn)(void *arg, uint32_t events);

struct loop_watch;

/**
 * Watch fd for `events` (epoll flags; level-triggered unless EPOLLET is among them) on loop l:
 * fn(arg, ready) runs in step 2 of an iteration. Returns the watch, or NULL with errno set
 * (ENOMEM, or epoll_ctl's). The caller keeps fd open until loop_watch_remove.
 */
struct loop_watch *loop_watch_add(struct loop *l, int fd, uint32_t events, loop_watch_fn fn,
                                  void *arg);

/** Watch for other events. Returns 0 or a negative errno (the old events stay). */
int loop_watch_set(struct loop_watch *w, uint32_t events);

/**
 * Stop watching and free w (call it before closing the fd: a reused fd number must not inherit
 * the registration). Its callback is not called again, even for events already taken in the
 * same iteration. On the loop's thread, or on any thread while the loop is not running. NULL:
 * no-op.
 */
void loop_watch_remove(struct loop_watch *w);

/** A per-iteration hook (see the top of this file); every member but arg may be NULL. */
struct loop_hooks {
    /** Step 1: the milliseconds until the hook needs the loop again, or -1 for no limit. It may
     *  do work (deadlines that fail requests). */
    int (*prepare)(void *arg);
    void (*check)(void *arg); /**< step 3 */
    void (*run)(void *arg);   /**< step 4 */
    void (*flush)(void *arg); /**< step 5 */
    void *arg;
};

/** Add a hook to l (copied), before the group starts. Returns 0 or -ENOSPC (LOOP_HOOKS_MAX). */
int loop_hooks_add(struct loop *l, const struct loop_hooks *h);

struct loop_timer;

/**
 * A one-shot timer on l, from l's own thread: fn(arg) runs on that thread once `ms` (>= 0) have
 * passed (steps 1 and 3), never from inside this call; timers due together run in the order they
 * were set. Returns NULL when out of memory or called from another thread (fn is then never
 * called). A timer cannot be cancelled: fn must check whether it still has work. Waits are
 * timers, never sleeps: a loop never waits but in epoll_wait.
 */
struct loop_timer *loop_timer_after(struct loop *l, int ms, void (*fn)(void *arg), void *arg);

/** The loop whose thread calls (NULL on any other thread). */
struct loop *loop_current(void);

/**
 * Make l run an iteration soon. From another thread it wakes l (its eventfd); on l's own thread
 * it makes l's next wait not block (no system call), so work that became ready during `run` (a
 * connection resumed) is done before the loop sleeps. Any thread.
 */
void loop_wake(struct loop *l);

#endif
