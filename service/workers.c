/* workers.c -- the elastic thread pool; see workers.h. */
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct job {
    workers_fn fn;
    void *arg;
    struct job *next;
};

struct workers {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was queued, or the pool is stopping */
    pthread_cond_t gone; /* a thread exited */
    struct job *head, *tail;
    int queued, running, threads, idle, max, stopping;
    pthread_attr_t attr;
};

static void deadline_after_ms(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* The next job, waiting up to WORKERS_IDLE_MS; NULL when the thread should exit. Locked. */
static struct job *next_job(struct workers *w)
{
    struct timespec until;
    deadline_after_ms(&until, WORKERS_IDLE_MS);
    while (!w->head && !w->stopping) {
        w->idle++;
        int rc = pthread_cond_timedwait(&w->work, &w->lock, &until);
        w->idle--;
        if (rc == ETIMEDOUT && !w->head)
            return NULL;
    }
    struct job *j = w->head;
    if (j) {
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
    }
    return j;
}

static void *worker_main(void *arg)
{
    struct workers *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        struct job *j = next_job(w);
        if (!j)
            break;
        w->running++;
        pthread_mutex_unlock(&w->lock);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&w->lock);
        w->running--;
    }
    w->threads--;
    pthread_cond_broadcast(&w->gone);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct workers *workers_new(int max, size_t stack_bytes)
{
    struct workers *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->max = max < 1 ? 1 : max;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->gone, NULL);
    pthread_attr_init(&w->attr);
    pthread_attr_setdetachstate(&w->attr, PTHREAD_CREATE_DETACHED);
    if (stack_bytes)
        pthread_attr_setstacksize(&w->attr, stack_bytes);
    return w;
}

/* Start a thread when no idle one will take one more job. Locked. Returns 0 or -EAGAIN (no
 * thread could start and none runs). */
static int grow(struct workers *w)
{
    if (w->idle > w->queued || w->threads >= w->max)
        return 0;
    pthread_t t;
    if (pthread_create(&t, &w->attr, worker_main, w) != 0)
        return w->threads > 0 ? 0 : -EAGAIN;
    w->threads++;
    return 0;
}

int workers_submit(struct workers *w, workers_fn fn, void *arg)
{
    struct job *j = malloc(sizeof(*j));
    if (!j)
        return -ENOMEM;
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    pthread_mutex_lock(&w->lock);
    int rc = grow(w);
    if (!rc) {
        if (w->tail)
            w->tail->next = j;
        else
            w->head = j;
        w->tail = j;
        w->queued++;
        pthread_cond_signal(&w->work);
    }
    pthread_mutex_unlock(&w->lock);
    if (rc)
        free(j);
    return rc;
}

int workers_busy(struct workers *w)
{
    pthread_mutex_lock(&w->lock);
    int n = w->queued + w->running;
    pthread_mutex_unlock(&w->lock);
    return n;
}

void workers_free(struct workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->work);
    while (w->threads > 0)
        pthread_cond_wait(&w->gone, &w->lock);
    pthread_mutex_unlock(&w->lock);
    pthread_attr_destroy(&w->attr);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->gone);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
