/* store_sentinel.c -- the primary through Redis Sentinel; see store_sentinel.h. */
#include "store_sentinel.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "log.h"
#include "store_internal.h"
#include "util.h"

#define WATCH_POLL_MS 200  /* the watcher looks at its stop flag at least this often */
#define WATCH_RETRY_MS 100 /* after a sentinel failed: the next one after this */
#define WATCH_PING_MS                                                                              \
    1000 /* the watched sentinel is PINGed this often: silence moves the watch                     \
          */

static _Atomic uint64_t epoch;

uint64_t store_sentinel_epoch(void)
{
    return atomic_load(&epoch);
}

void store_sentinel_moved(void)
{
    atomic_fetch_add(&epoch, 1);
}

static struct timeval tv_of(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
}

int store_sentinel_parse_addr(const struct store_reply *r, char *host, size_t cap, int *port)
{
    if (r && r->type == STORE_REPLY_NIL)
        return -ENOENT;
    if (!r || r->type != STORE_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != STORE_REPLY_STRING || r->element[1]->type != STORE_REPLY_STRING ||
        r->element[0]->len == 0 || r->element[0]->len >= cap)
        return -EPROTO;
    char *end = NULL;
    long p = strtol(r->element[1]->str, &end, 10);
    if (*end || p < 1 || p > 65535)
        return -EPROTO;
    memcpy(host, r->element[0]->str, r->element[0]->len + 1);
    *port = (int)p;
    return 0;
}

/* The next space-separated word of s[*at..len): its start and length (0 at the end). */
static size_t word(const char *s, size_t len, size_t *at, const char **w)
{
    while (*at < len && s[*at] == ' ')
        (*at)++;
    *w = s + *at;
    size_t n = 0;
    while (*at < len && s[*at] != ' ') {
        (*at)++;
        n++;
    }
    return n;
}

int store_sentinel_parse_switch(const char *msg, size_t len, const char *master, char *host,
                                size_t cap, int *port)
{
    /* "<name> <old ip> <old port> <new ip> <new port>" */
    const char *w[6];
    size_t n[6], at = 0;
    for (int i = 0; i < 6; i++)
        n[i] = word(msg, len, &at, &w[i]);
    if (!n[0] || !n[1] || !n[2] || !n[3] || !n[4] || n[5] || n[3] >= cap || n[4] > 5)
        return -EPROTO;
    long p = 0;
    for (size_t i = 0; i < n[4]; i++) {
        if (w[4][i] < '0' || w[4][i] > '9')
            return -EPROTO;
        p = p * 10 + (w[4][i] - '0');
    }
    if (p < 1 || p > 65535)
        return -EPROTO;
    if (n[0] != strlen(master) || memcmp(w[0], master, n[0]) != 0)
        return 0;
    memcpy(host, w[3], n[3]);
    host[n[3]] = '\0';
    *port = (int)p;
    return 1;
}

/* A blocking connection to sentinel i, replies as store_reply; NULL when it does not answer. */
static redisContext *sentinel_dial(const struct store_sentinel_cfg *cfg, int i)
{
    redisContext *c =
        redisConnectWithTimeout(cfg->host[i], cfg->port[i], tv_of(cfg->connect_timeout_ms));
    if (!c || c->err || redisSetTimeout(c, tv_of(cfg->timeout_ms)) != REDIS_OK) {
        redisFree(c);
        return NULL;
    }
    c->reader->fn = store_reply_functions();
    return c;
}

int store_sentinel_resolve(const struct store_sentinel_cfg *cfg, int *next, char *host, int *port)
{
    for (int k = 0; k < cfg->n; k++) {
        int i = (*next + k) % cfg->n;
        redisContext *c = sentinel_dial(cfg, i);
        const char *argv[] = {"SENTINEL", "get-master-addr-by-name", cfg->master};
        struct store_reply *r = c ? redisCommandArgv(c, 3, argv, NULL) : NULL;
        int rc = store_sentinel_parse_addr(r, host, STORE_SENTINEL_HOST_MAX, port);
        store_reply_free(r);
        redisFree(c);
        if (rc == 0) {
            *next = i;
            return 0;
        }
    }
    return -ECONNREFUSED;
}

/* ---------------------------------------------------------------- the watcher */

struct store_sentinel_watch {
    struct store_sentinel_own own; /* its sentinels, names and ports copied */
    pthread_t thread;
    atomic_int stop;
    char seen[STORE_SENTINEL_HOST_MAX + 8]; /* "host:port": the primary last heard of (the
                                             * watcher thread's) */
};

/* Wait up to WATCH_POLL_MS for c to have something to read: 1, 0 (nothing), -1 (an error). */
static int readable(redisContext *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    int n = poll(&p, 1, WATCH_POLL_MS);
    return n < 0 ? (errno == EINTR ? 0 : -1) : n > 0;
}

/* One message of the subscription: a switch of our master moves the epoch. */
static void on_message(struct store_sentinel_watch *w, const struct store_reply *r)
{
    if (r->type != STORE_REPLY_ARRAY || r->elements != 3 ||
        r->element[2]->type != STORE_REPLY_STRING)
        return;
    char host[STORE_SENTINEL_HOST_MAX];
    int port = 0;
    if (store_sentinel_parse_switch(r->element[2]->str, r->element[2]->len, w->own.master, host,
                                    sizeof(host), &port) == 1) {
        log_warn("redis: sentinel: +switch-master %s: the primary is %s:%d now", w->own.master,
                 host, port);
        snprintf(w->seen, sizeof(w->seen), "%s:%d", host, port);
        store_sentinel_moved();
    }
}

/* Every complete reply the reader holds already (a read may bring several: a message and a
 * PING's answer), each handled, *heard_ms set at each. 0, or -1 when the reader failed. */
static int drain(struct store_sentinel_watch *w, redisContext *c, int64_t *heard_ms)
{
    void *m = NULL;
    while (redisGetReplyFromReader(c, &m) == REDIS_OK && m) {
        *heard_ms = util_now_ms();
        on_message(w, m);
        store_reply_free(m);
        m = NULL;
    }
    return c->err ? -1 : 0;
}

/* Whether the primary moved while no sentinel was watched (between two subscriptions): asked
 * of sentinel i on a second connection once the subscription is in place, so that no switch
 * falls between the answer and the watch. The first answer only sets what is known. */
static void check_moved(struct store_sentinel_watch *w, int i)
{
    char host[STORE_SENTINEL_HOST_MAX], now[sizeof(w->seen)];
    int port = 0, next = 0;
    struct store_sentinel_cfg one = w->own.cfg;
    one.n = 1; /* this sentinel only: it is the one watched */
    one.host = &w->own.cfg.host[i];
    one.port = &w->own.cfg.port[i];
    if (store_sentinel_resolve(&one, &next, host, &port) != 0)
        return;
    snprintf(now, sizeof(now), "%s:%d", host, port);
    if (w->seen[0] && strcmp(now, w->seen) != 0) {
        log_warn("redis: sentinel: the primary of %s moved to %s while no sentinel was watched",
                 w->own.master, now);
        store_sentinel_moved();
    }
    memcpy(w->seen, now, sizeof(now));
}

/* Watch sentinel i until it fails, goes silent (a PING every WATCH_PING_MS, an answer due
 * within its connect and command timeouts and a second more), or the watch stops. */
static void watch_one(struct store_sentinel_watch *w, int i)
{
    redisContext *c = sentinel_dial(&w->own.cfg, i);
    const char *argv[] = {"SUBSCRIBE", "+switch-master"};
    struct store_reply *r = c ? redisCommandArgv(c, 2, argv, NULL) : NULL;
    int ok = r && r->type == STORE_REPLY_ARRAY;
    store_reply_free(r);
    if (ok)
        check_moved(w, i);
    int64_t heard_ms = util_now_ms(), pinged_ms = heard_ms;
    const int64_t silence_ms =
        (int64_t)w->own.cfg.connect_timeout_ms + w->own.cfg.timeout_ms + 1000;
    while (ok && !atomic_load(&w->stop) && drain(w, c, &heard_ms) == 0) {
        int64_t now = util_now_ms();
        if (now - heard_ms > silence_ms) {
            log_warn("redis: sentinel %s:%d stopped answering: watching the next one",
                     w->own.cfg.host[i], w->own.cfg.port[i]);
            break;
        }
        if (now - pinged_ms >= WATCH_PING_MS) { /* allowed while subscribed; its answer counts */
            int done = 0;
            if (redisAppendCommand(c, "PING") != REDIS_OK || redisBufferWrite(c, &done) != REDIS_OK)
                break;
            pinged_ms = now;
        }
        int n = readable(c);
        if (n < 0 || (n > 0 && redisBufferRead(c) != REDIS_OK))
            break;
    }
    redisFree(c);
}

static void *watch_main(void *arg)
{
    struct store_sentinel_watch *w = arg;
    for (int i = 0; !atomic_load(&w->stop); i = (i + 1) % w->own.cfg.n) {
        watch_one(w, i);
        if (!atomic_load(&w->stop))
            util_sleep_ms(WATCH_RETRY_MS);
    }
    return NULL;
}

int store_sentinel_own_copy(struct store_sentinel_own *o, const struct store_sentinel_cfg *cfg)
{
    *o = (struct store_sentinel_own){.cfg = *cfg};
    if (cfg->n < 1)
        return -EINVAL;
    o->hosts = calloc((size_t)cfg->n, sizeof(*o->hosts));
    o->ports = calloc((size_t)cfg->n, sizeof(*o->ports));
    o->master = strdup(cfg->master);
    int ok = o->hosts && o->ports && o->master;
    for (int i = 0; ok && i < cfg->n; i++) {
        ok = (o->hosts[i] = strdup(cfg->host[i])) != NULL;
        o->ports[i] = cfg->port[i];
    }
    o->cfg.host = (const char *const *)o->hosts;
    o->cfg.port = o->ports;
    o->cfg.master = o->master;
    if (!ok) {
        store_sentinel_own_free(o);
        return -ENOMEM;
    }
    return 0;
}

void store_sentinel_own_free(struct store_sentinel_own *o)
{
    for (int i = 0; o->hosts && i < o->cfg.n; i++)
        free(o->hosts[i]);
    free(o->hosts);
    free(o->ports);
    free(o->master);
    *o = (struct store_sentinel_own){0};
}

static void watch_free(struct store_sentinel_watch *w)
{
    store_sentinel_own_free(&w->own);
    free(w);
}

struct store_sentinel_watch *store_sentinel_watch_start(const struct store_sentinel_cfg *cfg)
{
    struct store_sentinel_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    if (store_sentinel_own_copy(&w->own, cfg) != 0) {
        free(w);
        return NULL;
    }
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        watch_free(w);
        return NULL;
    }
    return w;
}

void store_sentinel_watch_stop(struct store_sentinel_watch *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    watch_free(w);
}
