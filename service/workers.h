/*
 * workers.h -- an elastic pool of threads for the blocking part of requests.
 *
 * The HTTP event threads (httpd.h) never block; whatever may wait on Redis (a page computation, a
 * stampede-lock wait, a write) runs here. The pool grows on demand up to `max` threads and an
 * idle thread exits after WORKERS_IDLE_MS, so a slow job holds only its own thread: with `max`
 * equal to the connection limit a job never waits for a thread behind unrelated slow jobs (the
 * failure of pools of shared slots). Jobs run in submission order.
 *
 * Thread-safe. A job is a function and its argument; the pool never frees the argument.
 */
#ifndef RANKD_WORKERS_H
#define RANKD_WORKERS_H

#include <stddef.h>

#define WORKERS_IDLE_MS 10000 /**< an idle thread exits after this long */

typedef void (*workers_fn)(void *arg);

struct workers;

/**
 * A pool of at most `max` threads (>= 1) with `stack_bytes` stacks (0: the system default).
 * No thread starts until the first job. Returns NULL on ENOMEM.
 */
struct workers *workers_new(int max, size_t stack_bytes);

/**
 * Run fn(arg) on a pool thread: an idle one, a new one while fewer than `max` run, else the
 * first to become free. Returns 0, or -ENOMEM / -EAGAIN (no thread could be started and none
 * runs; fn is not called: the caller answers the request itself).
 */
int workers_submit(struct workers *w, workers_fn fn, void *arg);

/** Jobs queued or running now. */
int workers_busy(struct workers *w);

/** Wait for queued and running jobs to finish, stop the threads, free. NULL is a no-op. */
void workers_free(struct workers *w);

#endif
