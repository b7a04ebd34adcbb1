/* store_replicas.c -- a Sentinel primary's replicas, for reads; see store_replicas.h. */
#include "store_replicas.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "log.h"
#include "store_internal.h"
#include "util.h"

#define POLL_MS 100 /* the thread looks at the epoch and its stop flag this often */

/* The value of `field` in one replica's flat [field, value, ...] array, or NULL. */
static const struct store_reply *field_of(const struct store_reply *e, const char *field)
{
    for (size_t i = 0; i + 1 < e->elements; i += 2)
        if (e->element[i]->type == STORE_REPLY_STRING && strcmp(e->element[i]->str, field) == 0)
            return e->element[i + 1]->type == STORE_REPLY_STRING ? e->element[i + 1] : NULL;
    return NULL;
}

/* 1 when a comma-separated flags list names `flag`. */
static int has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, flag, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int store_replicas_parse(const struct store_reply *r, struct store_cluster_node *out, int max)
{
    if (!r || r->type != STORE_REPLY_ARRAY)
        return -EPROTO;
    int n = 0;
    for (size_t i = 0; i < r->elements && n < max; i++) {
        const struct store_reply *e = r->element[i];
        if (e->type != STORE_REPLY_ARRAY)
            return -EPROTO;
        const struct store_reply *ip = field_of(e, "ip"), *port = field_of(e, "port"),
                                 *flags = field_of(e, "flags"),
                                 *link = field_of(e, "master-link-status");
        if (!ip || !port || !flags || !link)
            return -EPROTO;
        static const char *const bad[] = {"s_down", "o_down", "disconnected", "promoted"};
        int healthy = strcmp(link->str, "ok") == 0;
        for (size_t k = 0; healthy && k < sizeof(bad) / sizeof(bad[0]); k++)
            healthy = !has_flag(flags->str, bad[k]);
        char *end = NULL;
        long p = strtol(port->str, &end, 10);
        if (!healthy || *end || p < 1 || p > 65535 || ip->len == 0 ||
            ip->len >= STORE_CLUSTER_HOST_MAX)
            continue;
        memcpy(out[n].host, ip->str, ip->len + 1);
        out[n].port = (int)p;
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- the thread */

struct store_replica_watch {
    struct store *st;
    struct store_sentinel_own own; /* its sentinels, names and ports copied */
    int next;                      /* the sentinel asked first */
    pthread_t thread;
    atomic_int stop;
};

static struct timeval tv_of(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
}

/* Ask the sentinels in turn; install what the first that answers lists. */
static void discover(struct store_replica_watch *w)
{
    for (int k = 0; k < w->own.cfg.n; k++) {
        int i = (w->next + k) % w->own.cfg.n;
        redisContext *c = redisConnectWithTimeout(w->own.cfg.host[i], w->own.cfg.port[i],
                                                  tv_of(w->own.cfg.connect_timeout_ms));
        if (!c || c->err || redisSetTimeout(c, tv_of(w->own.cfg.timeout_ms)) != REDIS_OK) {
            redisFree(c);
            continue;
        }
        c->reader->fn = store_reply_functions();
        const char *argv[] = {"SENTINEL", "REPLICAS", w->own.cfg.master};
        struct store_reply *r = redisCommandArgv(c, 3, argv, NULL);
        struct store_cluster_node nodes[STORE_REPLICAS_MAX];
        int n = store_replicas_parse(r, nodes, STORE_REPLICAS_MAX);
        store_reply_free(r);
        redisFree(c);
        if (n < 0)
            continue;
        w->next = i;
        store_replica_note(w->st, STORE_REPLICA_FOUND);
        if (store_replica_list_install(w->st, nodes, n))
            log_warn("redis: sentinel: out of memory for the list of replicas");
        return;
    }
}

static void *watch_main(void *arg)
{
    struct store_replica_watch *w = arg;
    uint64_t seen = store_sentinel_epoch();
    int64_t due = 0;
    while (!atomic_load(&w->stop)) {
        uint64_t epoch = store_sentinel_epoch();
        int64_t now = util_now_ms();
        if (epoch != seen || now >= due) {
            seen = epoch;
            discover(w);
            due = util_now_ms() + STORE_REPLICAS_EVERY_MS;
        }
        util_sleep_ms(POLL_MS);
    }
    return NULL;
}

static void watch_free(struct store_replica_watch *w)
{
    store_sentinel_own_free(&w->own);
    free(w);
}

struct store_replica_watch *store_replica_watch_start(struct store *st,
                                                      const struct store_sentinel_cfg *cfg)
{
    struct store_replica_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->st = st;
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

void store_replica_watch_stop(struct store_replica_watch *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    watch_free(w);
}
