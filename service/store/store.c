/* store.c -- the dial, the script registry and SHAs, fault counting; the contract is in store.h. */
#include "store.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/sds.h>

#include "log.h"
#include "store_async.h"
#include "store_cluster.h"
#include "store_internal.h"
#include "store_replicas.h"
#include "store_sentinel.h"
#include "util.h"

/* The registered scripts (store.h), process-wide: appended under registry.lock, never removed;
 * `count` is published once the entry is complete, so readers need no lock. A script's index
 * in it is its slot in every store's SHA table. */
struct store_script {
    const char *body;
    int index;
    int waits; /* registered with store_script_register_write: it waits for --write-replicas */
    _Atomic(store_async_then_fn) then; /* its continuation on a cluster (store_async.h), or NULL */
    atomic_int read_only;              /* store_script_read_only: may go to a replica */
};

static struct {
    pthread_mutex_t lock;
    struct store_script s[STORE_SCRIPTS_MAX];
    atomic_int count;
} registry = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 100 /* store.h: a probe at least this often after a fault */
#define SHA_LEN STORE_SHA_LEN
#define NODES_MAX 64         /* cluster nodes whose dial back-off and scripts are tracked */
#define REFRESH_EVERY_MS 100 /* CLUSTER SLOTS at most this often per store */

/* A cluster node's dial state (a single Redis has its own in struct store). */
struct node_state {
    char host[STORE_CLUSTER_HOST_MAX];
    int port;
    int64_t down_until_ms; /**< no dialling before this (monotonic ms) */
    int backoff_ms;        /**< next back-off step */
    int loaded;            /**< registered scripts [0, loaded) SCRIPT LOADed on it */
};

struct store {
    char *host, *unix_path, *username, *password;
    int port, db, timeout_ms, connect_timeout_ms;
    int write_replicas; /**< store_config.write_replicas */
    pthread_mutex_t lock;
    int64_t down_until_ms; /**< no dialling before this (monotonic ms); under lock */
    int backoff_ms;        /**< next back-off step; under lock */
    /* a cluster: its seeds, its nodes' dial states and the slot map (store_internal.h) */
    int cluster, nseeds;
    char *seed_host[STORE_SEEDS_MAX];
    int seed_port[STORE_SEEDS_MAX];
    /* Sentinel: the master's name, the sentinel to ask first, the +switch-master watcher */
    char *sentinel_master;
    int sentinel_next; /**< under lock */
    struct store_sentinel_watch *watch;
    struct node_state nodes[NODES_MAX]; /**< under lock */
    int nnodes;                         /**< under lock */
    struct store_map *map;              /**< the current map (a reference), or NULL; under lock */
    _Atomic uint64_t map_version;       /**< map->version, read without the lock */
    int refreshing;                     /**< a CLUSTER SLOTS is under way; under lock */
    int64_t refresh_after_ms;           /**< no refresh before this (monotonic); under lock */
    char sha[STORE_SCRIPTS_MAX][SHA_LEN + 1]; /**< [0, loaded) set, then never written again */
    atomic_int loaded; /**< registered scripts [0, loaded) have their SHA in sha */
    atomic_ulong errors;
    atomic_ulong moved, ask, tryagain, down, map_reads; /* store_cluster_counts */
    /* --read-from-replicas (store_config.read_replicas) */
    int read_replicas;
    _Atomic int64_t map_installed_ms;                          /**< monotonic, 0: never */
    atomic_ulong r_sent, r_fallback, r_none, r_stale, r_found; /* store_replica_counts */
    struct store_replica_list *replicas; /**< Sentinel: the current list, or NULL; under lock */
    _Atomic uint64_t replicas_version;   /**< replicas->version, read without the lock */
    struct store_replica_watch *rwatch;  /**< Sentinel: the thread that lists them */
};

/* The sentinels and the master's name as store_sentinel.h takes them (borrowed from st). */
static void sentinel_cfg(const struct store *st, struct store_sentinel_cfg *out)
{
    *out = (struct store_sentinel_cfg){.n = st->nseeds,
                                       .host = (const char *const *)st->seed_host,
                                       .port = st->seed_port,
                                       .master = st->sentinel_master,
                                       .connect_timeout_ms = st->connect_timeout_ms,
                                       .timeout_ms = st->timeout_ms};
}

struct store *store_new(const struct store_config *cfg)
{
    struct store *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    pthread_mutex_init(&st->lock, NULL);
    st->host = cfg->host ? strdup(cfg->host) : NULL;
    st->unix_path = cfg->unix_path ? strdup(cfg->unix_path) : NULL;
    st->username = cfg->username ? strdup(cfg->username) : NULL;
    st->password = cfg->password ? strdup(cfg->password) : NULL;
    if ((cfg->host && !st->host) || (cfg->unix_path && !st->unix_path) ||
        (cfg->username && !st->username) || (cfg->password && !st->password)) {
        store_free(st);
        return NULL;
    }
    st->port = cfg->port;
    st->db = cfg->db;
    st->cluster = cfg->cluster;
    int seeded = cfg->cluster || cfg->sentinel_master;
    if (cfg->sentinel_master && !(st->sentinel_master = strdup(cfg->sentinel_master))) {
        store_free(st);
        return NULL;
    }
    for (int i = 0; seeded && i < cfg->nseeds && i < STORE_SEEDS_MAX; i++) {
        if (!(st->seed_host[i] = strdup(cfg->seed_host[i]))) {
            store_free(st);
            return NULL;
        }
        st->seed_port[i] = cfg->seed_port[i];
        st->nseeds = i + 1;
    }
    st->timeout_ms = cfg->timeout_ms;
    st->connect_timeout_ms = cfg->connect_timeout_ms;
    st->write_replicas = cfg->write_replicas > 0 ? cfg->write_replicas : 0;
    st->backoff_ms = BACKOFF_MIN_MS;
    st->read_replicas = cfg->read_replicas && seeded;
    if (st->sentinel_master) {
        struct store_sentinel_cfg sc;
        sentinel_cfg(st, &sc);
        if (!(st->watch = store_sentinel_watch_start(&sc)) ||
            (st->read_replicas && !(st->rwatch = store_replica_watch_start(st, &sc)))) {
            store_free(st);
            return NULL;
        }
    }
    return st;
}

void store_free(struct store *st)
{
    if (!st)
        return;
    store_replica_watch_stop(st->rwatch); /* before the list and the lock it installs under */
    store_sentinel_watch_stop(st->watch);
    store_replica_list_put(st->replicas);
    pthread_mutex_destroy(&st->lock);
    for (int i = 0; i < st->nseeds; i++)
        free(st->seed_host[i]);
    free(st->sentinel_master);
    store_map_put(st->map);
    free(st->host);
    free(st->unix_path);
    free(st->username);
    free(st->password);
    free(st);
}

static struct timeval ms_to_tv(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
}

/* Map a failed context to an errno; hiredis reports a socket timeout as an I/O error with EAGAIN.
 */
static int ctx_errno(const redisContext *ctx)
{
    if (!ctx)
        return -ENOMEM;
    if (ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT))
        return -ETIMEDOUT;
    if (ctx->err == REDIS_ERR_OOM)
        return -ENOMEM;
    return -EIO;
}

static void note_error(struct store *st, const char *what, const char *detail)
{
    atomic_fetch_add(&st->errors, 1);
    log_warn("redis: %s: %s", what, detail ? detail : "");
}

/* One command on a fresh context during set-up; 0 or -EIO. */
static int setup_command(struct store *st, redisContext *ctx, int argc, const char **argv)
{
    struct store_reply *r = redisCommandArgv(ctx, argc, argv, NULL);
    if (!r) {
        int rc = ctx_errno(ctx); /* before logging, which may change errno */
        note_error(st, "set-up", ctx->errstr);
        return rc;
    }
    int rc = r->type == STORE_REPLY_ERROR ? -EIO : 0;
    if (rc)
        note_error(st, argv[0], r->str);
    store_reply_free(r);
    return rc;
}

static const struct store_script *script_register(const char *body, int waits)
{
    if (!body)
        return NULL;
    const struct store_script *found = NULL;
    pthread_mutex_lock(&registry.lock);
    int n = atomic_load(&registry.count);
    for (int i = 0; i < n && !found; i++)
        if (registry.s[i].body == body || strcmp(registry.s[i].body, body) == 0)
            found = &registry.s[i];
    if (!found && n < STORE_SCRIPTS_MAX) {
        registry.s[n] = (struct store_script){.body = body, .index = n, .waits = waits};
        found = &registry.s[n];
        atomic_store(&registry.count, n + 1); /* published complete */
    }
    pthread_mutex_unlock(&registry.lock);
    assert(found && "STORE_SCRIPTS_MAX is too small");
    assert(found->waits == waits && "a script registered both with and without waiting");
    return found;
}

const struct store_script *store_script_register(const char *body)
{
    return script_register(body, 0);
}

const struct store_script *store_script_register_write(const char *body)
{
    return script_register(body, 1);
}

int store_script_waits(const struct store *st, const struct store_script *s)
{
    return s && s->waits && st->write_replicas > 0;
}

int store_write_replicas(const struct store *st)
{
    return st->write_replicas;
}

int store_script_sha(const struct store *st, const struct store_script *s,
                     char out[STORE_SHA_LEN + 1])
{
    if (s->index >= atomic_load_explicit(&st->loaded, memory_order_acquire))
        return -ENOENT;
    memcpy(out, st->sha[s->index], SHA_LEN + 1); /* never written again once loaded */
    return 0;
}

const char *store_script_body(const struct store_script *s)
{
    return s->body;
}

void store_async_script_then(const struct store_script *s, store_async_then_fn then)
{
    struct store_script *w = &registry.s[s->index]; /* the registry's own entry */
    atomic_store(&w->then, then);
}

store_async_then_fn store_script_then_of(const struct store_script *s)
{
    return atomic_load(&s->then);
}

int store_script_read_only(const struct store_script *s)
{
    /* the first line, the shebang: Redis refuses every write of a no-writes script, and only
     * such a script may run as EVALSHA_RO */
    const char *end = strchr(s->body, '\n');
    size_t n = end ? (size_t)(end - s->body) : strlen(s->body);
    if (n < 5 || strncmp(s->body, "#!lua", 5) != 0 || !memmem(s->body, n, "no-writes", 9))
        return -EINVAL;
    atomic_store(&registry.s[s->index].read_only, 1);
    return 0;
}

int store_script_is_read_only(const struct store_script *s)
{
    return atomic_load(&s->read_only);
}

/* SCRIPT LOAD on ctx of every script registered from `from` on (what this node has not loaded:
 * a single Redis, everything since the store's last load; a cluster node, since its own), and
 * their SHAs into the store's table where it has none yet. A dial racing this one may load the
 * same ones: only the entries past `loaded` are written, once each. Returns how many scripts the
 * node has now, or a negative errno. */
static int load_scripts(struct store *st, redisContext *ctx, int from)
{
    int to = atomic_load(&registry.count);
    if (from >= to)
        return to;
    char sha[STORE_SCRIPTS_MAX][SHA_LEN + 1];
    for (int i = from; i < to; i++) {
        const char *argv[] = {"SCRIPT", "LOAD", registry.s[i].body};
        struct store_reply *r = redisCommandArgv(ctx, 3, argv, NULL);
        if (!r || r->type != STORE_REPLY_STRING || r->len != SHA_LEN) {
            note_error(st, "SCRIPT LOAD", r ? r->str : ctx->errstr);
            int rc = r ? -EIO : ctx_errno(ctx);
            store_reply_free(r);
            return rc;
        }
        memcpy(sha[i], r->str, SHA_LEN + 1);
        store_reply_free(r);
    }
    pthread_mutex_lock(&st->lock);
    int at = atomic_load(&st->loaded);
    if (at < to && at >= from) {
        memcpy(st->sha[at], sha[at], (size_t)(to - at) * sizeof(sha[0]));
        atomic_store_explicit(&st->loaded, to, memory_order_release);
    }
    pthread_mutex_unlock(&st->lock);
    return to;
}

/* A cluster node's dial state, added when new (the table is full: the last entry is shared by
 * every node past it, a back-off too many rather than none). Under st->lock. */
static struct node_state *node_state(struct store *st, const char *host, int port)
{
    for (int i = 0; i < st->nnodes; i++)
        if (st->nodes[i].port == port && strcmp(st->nodes[i].host, host) == 0)
            return &st->nodes[i];
    if (st->nnodes == NODES_MAX)
        return &st->nodes[NODES_MAX - 1];
    struct node_state *n = &st->nodes[st->nnodes++];
    util_copy(n->host, sizeof(n->host), host);
    n->port = port;
    n->backoff_ms = BACKOFF_MIN_MS;
    return n;
}

/* A replica that reads go to, on a sentinel store: ROLE says a replica ("slave") whose link to
 * its primary is up ("connected"). 0, or -ECONNREFUSED (logged). */
static int replica_role(struct store *st, redisContext *ctx)
{
    const char *argv[] = {"ROLE"};
    struct store_reply *r = redisCommandArgv(ctx, 1, argv, NULL);
    int ok =
        r && r->type == STORE_REPLY_ARRAY && r->elements >= 4 &&
        r->element[0]->type == STORE_REPLY_STRING && strcmp(r->element[0]->str, "slave") == 0 &&
        r->element[3]->type == STORE_REPLY_STRING && strcmp(r->element[3]->str, "connected") == 0;
    store_reply_free(r);
    if (!ok)
        note_error(st, "replica", "the node is no replica in sync with its primary (ROLE)");
    return ok ? 0 : -ECONNREFUSED;
}

/* Connect to host:port (NULL: the store's address), AUTH, SELECT (a single Redis), and the
 * scripts this node lacks from `loaded` on (*loaded: how many it has after); `replica`: a
 * replica that reads go to (store_dial_replica). */
static int dial(struct store *st, const char *host, int port, int replica, int *loaded,
                redisContext **out)
{
    struct timeval ctv = ms_to_tv(st->connect_timeout_ms);
    redisContext *ctx =
        !host && st->unix_path
            ? redisConnectUnixWithTimeout(st->unix_path, ctv)
            : redisConnectWithTimeout(host ? host : st->host, host ? port : st->port, ctv);
    if (!ctx || ctx->err) {
        note_error(st, "connect", ctx ? ctx->errstr : "out of memory");
        int rc = ctx ? -ECONNREFUSED : -ENOMEM;
        redisFree(ctx);
        return rc;
    }
    ctx->reader->fn = store_reply_functions(); /* replies are store_reply from the first one */
    int rc = redisSetTimeout(ctx, ms_to_tv(st->timeout_ms)) == REDIS_OK ? 0 : -EIO;
    if (!rc && st->password) {
        const char *a2[] = {"AUTH", st->password};
        const char *a3[] = {"AUTH", st->username ? st->username : "", st->password};
        rc = st->username ? setup_command(st, ctx, 3, a3) : setup_command(st, ctx, 2, a2);
    }
    if (!rc && replica && st->cluster) { /* a replica serves its master's slots' reads then */
        const char *argv[] = {"READONLY"};
        rc = setup_command(st, ctx, 1, argv);
    } else if (!rc && replica && st->sentinel_master) {
        rc = replica_role(st, ctx);
    } else if (!rc && st->sentinel_master) { /* a sentinel may answer before it saw a failover */
        const char *argv[] = {"ROLE"};
        struct store_reply *r = redisCommandArgv(ctx, 1, argv, NULL);
        int master = r && r->type == STORE_REPLY_ARRAY && r->elements > 0 &&
                     r->element[0]->type == STORE_REPLY_STRING &&
                     strcmp(r->element[0]->str, "master") == 0;
        if (!master) {
            note_error(st, "sentinel", "the node the sentinels named is no master (yet)");
            rc = -ECONNREFUSED;
        }
        store_reply_free(r);
    }
    if (!rc && st->db != 0 && !st->cluster) {
        char db[16];
        snprintf(db, sizeof(db), "%d", st->db);
        const char *argv[] = {"SELECT", db};
        rc = setup_command(st, ctx, 2, argv);
    }
    if (!rc) {
        int n = load_scripts(st, ctx, *loaded);
        rc = n < 0 ? n : 0;
        if (n >= 0)
            *loaded = n;
    }
    if (rc) {
        redisFree(ctx);
        return rc == -ETIMEDOUT ? rc : -ECONNREFUSED;
    }
    *out = ctx;
    return 0;
}

/* After a dial that returned rc: back off (no dial before the window ends), or end the back-off.
 * Under st->lock. */
static void dialled(int64_t *down_until_ms, int *backoff_ms, int rc)
{
    if (rc) {
        *down_until_ms = util_now_ms() + *backoff_ms;
        *backoff_ms = *backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : *backoff_ms * 2;
    } else {
        *backoff_ms = BACKOFF_MIN_MS;
        *down_until_ms = 0;
    }
}

redisContext *store_dial(struct store *st, int *err)
{
    return store_dial_at(st, NULL, 0, err);
}

/* A dial of host:port (NULL: the store's own address) with its node's back-off; `replica`: a
 * replica's connection (READONLY on a cluster, ROLE checked with Sentinel). */
static redisContext *dial_node(struct store *st, const char *host, int port, int replica, int *err)
{
    pthread_mutex_lock(&st->lock);
    struct node_state *n = host ? node_state(st, host, port) : NULL;
    int down = util_now_ms() < (n ? n->down_until_ms : st->down_until_ms);
    int loaded = n ? n->loaded : atomic_load(&st->loaded);
    pthread_mutex_unlock(&st->lock);
    if (down) {
        atomic_fetch_add(&st->errors, 1);
        *err = -ECONNREFUSED;
        return NULL;
    }
    redisContext *ctx = NULL;
    int rc = dial(st, host, port, replica, &loaded, &ctx);
    pthread_mutex_lock(&st->lock);
    if (host) {
        n = node_state(st, host, port);
        dialled(&n->down_until_ms, &n->backoff_ms, rc);
        if (!rc && loaded > n->loaded)
            n->loaded = loaded;
    } else {
        dialled(&st->down_until_ms, &st->backoff_ms, rc);
    }
    pthread_mutex_unlock(&st->lock);
    *err = rc;
    return ctx;
}

/* Sentinel: the primary as the sentinels name it now, asked in turn from the one whose answer
 * led to a primary last. A sentinel whose answer leads nowhere (an address that does not
 * answer, or a node that is no primary by ROLE: a sentinel cut off from the others may name an
 * old primary for ever) is passed over for the next one, in the same dial. No lock is held
 * across the sentinels' I/O (st->lock only around sentinel_next). */
static redisContext *dial_primary(struct store *st, int *err)
{
    struct store_sentinel_cfg sc;
    sentinel_cfg(st, &sc);
    pthread_mutex_lock(&st->lock);
    int next = st->sentinel_next;
    pthread_mutex_unlock(&st->lock);
    redisContext *ctx = NULL;
    int rc = -ECONNREFUSED;
    for (int k = 0; k < st->nseeds && !ctx; k++) {
        char primary[STORE_SENTINEL_HOST_MAX];
        int port = 0;
        if (store_sentinel_resolve(&sc, &next, primary, &port) != 0) {
            note_error(st, "sentinel", "no sentinel names the primary");
            rc = -ECONNREFUSED;
            break;
        }
        ctx = dial_node(st, primary, port, 0, &rc);
        if (!ctx && rc == -ENOMEM)
            break;
        if (!ctx) {
            char why[STORE_SENTINEL_HOST_MAX + 160];
            snprintf(why, sizeof(why),
                     "sentinel %s:%d names %s:%d, which does not answer as the primary: asking "
                     "the next sentinel",
                     sc.host[next], sc.port[next], primary, port);
            note_error(st, "sentinel", why);
            next = (next + 1) % st->nseeds;
        }
    }
    pthread_mutex_lock(&st->lock);
    st->sentinel_next = next; /* the one that led to the primary (or the next to try) */
    pthread_mutex_unlock(&st->lock);
    *err = ctx ? 0 : rc == 0 ? -ECONNREFUSED : rc;
    return ctx;
}

redisContext *store_dial_at(struct store *st, const char *host, int port, int *err)
{
    if (!host && st->sentinel_master)
        return dial_primary(st, err);
    return dial_node(st, host, port, 0, err);
}

redisContext *store_dial_replica(struct store *st, const char *host, int port, int *err)
{
    return dial_node(st, host, port, 1, err);
}

void store_cluster_counts(const struct store *st, struct store_cluster_counts *out)
{
    out->moved = atomic_load(&st->moved);
    out->ask = atomic_load(&st->ask);
    out->tryagain = atomic_load(&st->tryagain);
    out->down = atomic_load(&st->down);
    out->map_reads = atomic_load(&st->map_reads);
}

void store_cluster_note(struct store *st, int kind)
{
    atomic_ulong *c = kind == STORE_CLUSTER_MOVED      ? &st->moved
                      : kind == STORE_CLUSTER_ASK      ? &st->ask
                      : kind == STORE_CLUSTER_TRYAGAIN ? &st->tryagain
                      : kind == STORE_CLUSTER_DOWN     ? &st->down
                                                       : &st->map_reads;
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

int store_cluster_mode(const struct store *st)
{
    return st->cluster;
}

int store_read_replicas(const struct store *st)
{
    return st->read_replicas;
}

void store_replica_note(struct store *st, enum store_replica_event e)
{
    atomic_ulong *c = e == STORE_REPLICA_SENT       ? &st->r_sent
                      : e == STORE_REPLICA_FALLBACK ? &st->r_fallback
                      : e == STORE_REPLICA_NONE     ? &st->r_none
                      : e == STORE_REPLICA_STALE    ? &st->r_stale
                                                    : &st->r_found;
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

void store_note_replica_stale(struct store *st)
{
    store_replica_note(st, STORE_REPLICA_STALE);
}

void store_replica_counts(const struct store *st, struct store_replica_counts *out)
{
    out->replica = atomic_load(&st->r_sent);
    out->fallback = atomic_load(&st->r_fallback);
    out->no_replica = atomic_load(&st->r_none);
    out->stale = atomic_load(&st->r_stale);
    out->discoveries = atomic_load(&st->r_found);
}

/* ---------------------------------------------------------------- Sentinel's replicas */

struct store_replica_list *store_replica_list_get(struct store *st)
{
    pthread_mutex_lock(&st->lock);
    struct store_replica_list *l = st->replicas;
    if (l)
        atomic_fetch_add(&l->refs, 1);
    pthread_mutex_unlock(&st->lock);
    return l;
}

void store_replica_list_put(struct store_replica_list *l)
{
    if (l && atomic_fetch_sub(&l->refs, 1) == 1) {
        free(l->nodes);
        free(l);
    }
}

uint64_t store_replica_list_version(const struct store *st)
{
    return atomic_load_explicit(&st->replicas_version, memory_order_acquire);
}

int store_replica_list_install(struct store *st, const struct store_cluster_node *nodes, int n)
{
    pthread_mutex_lock(&st->lock);
    const struct store_replica_list *cur = st->replicas;
    int same = cur && cur->n == n;
    for (int i = 0; same && i < n; i++)
        same =
            cur->nodes[i].port == nodes[i].port && strcmp(cur->nodes[i].host, nodes[i].host) == 0;
    pthread_mutex_unlock(&st->lock);
    if (same)
        return 0;
    struct store_replica_list *l = calloc(1, sizeof(*l));
    if (l && n > 0 && !(l->nodes = malloc((size_t)n * sizeof(*nodes)))) {
        free(l);
        l = NULL;
    }
    if (!l)
        return -ENOMEM;
    if (n > 0)
        memcpy(l->nodes, nodes, (size_t)n * sizeof(*nodes));
    l->n = n;
    atomic_init(&l->refs, 1); /* the store's */
    pthread_mutex_lock(&st->lock);
    struct store_replica_list *old = st->replicas;
    l->version = atomic_load(&st->replicas_version) + 1;
    st->replicas = l;
    atomic_store_explicit(&st->replicas_version, l->version, memory_order_release);
    pthread_mutex_unlock(&st->lock);
    store_replica_list_put(old);
    return 0;
}

int store_sentinel_mode(const struct store *st)
{
    return st->sentinel_master != NULL;
}

int store_seed(const struct store *st, int i, const char **host, int *port)
{
    if (i < 0 || i >= st->nseeds)
        return -ENOENT;
    *host = st->seed_host[i];
    *port = st->seed_port[i];
    return 0;
}

/* ---------------------------------------------------------------- the cluster's slot map */

struct store_map *store_map_get(struct store *st)
{
    pthread_mutex_lock(&st->lock);
    struct store_map *m = st->map;
    if (m)
        atomic_fetch_add(&m->refs, 1);
    pthread_mutex_unlock(&st->lock);
    return m;
}

void store_map_put(struct store_map *m)
{
    if (m && atomic_fetch_sub(&m->refs, 1) == 1) {
        store_cluster_map_free(m->map);
        free(m);
    }
}

uint64_t store_map_version(const struct store *st)
{
    return atomic_load_explicit(&st->map_version, memory_order_acquire);
}

/* Make `map` (taken) the store's current one. Under st->lock; 0 or -ENOMEM (map freed). */
static int map_install(struct store *st, struct store_cluster_map *map)
{
    struct store_map *m = calloc(1, sizeof(*m));
    if (!m) {
        store_cluster_map_free(map);
        return -ENOMEM;
    }
    atomic_init(&m->refs, 1); /* the store's */
    m->map = map;
    m->version = atomic_load(&st->map_version) + 1;
    struct store_map *old = st->map;
    st->map = m;
    atomic_store(&st->map_installed_ms, util_now_ms());
    atomic_store_explicit(&st->map_version, m->version, memory_order_release);
    store_map_put(old);
    return 0;
}

int store_map_install(struct store *st, struct store_cluster_map *map)
{
    pthread_mutex_lock(&st->lock);
    int rc = map_install(st, map);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int store_map_moved(struct store *st, int slot, const char *host, int port)
{
    pthread_mutex_lock(&st->lock);
    const struct store_cluster_map *cur = st->map ? st->map->map : NULL;
    int at = cur && slot >= 0 && slot < CRC16_SLOTS && cur->owner[slot] != STORE_CLUSTER_NONE
                 ? cur->owner[slot]
                 : -1;
    int rc = 0;
    if (at < 0 || cur->nodes[at].port != port || strcmp(cur->nodes[at].host, host) != 0) {
        struct store_cluster_map *next = store_cluster_map_copy(cur);
        rc = next ? store_cluster_map_set(next, slot, host, port) : -ENOMEM;
        if (rc)
            store_cluster_map_free(next);
        else
            rc = map_install(st, next);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int store_map_older_than(const struct store *st, int64_t ms)
{
    int64_t at = atomic_load(&st->map_installed_ms);
    return !at || util_now_ms() - at > ms;
}

int store_map_refresh_begin(struct store *st)
{
    int64_t now = util_now_ms();
    pthread_mutex_lock(&st->lock);
    int go = !st->refreshing && now >= st->refresh_after_ms;
    if (go) {
        st->refreshing = 1;
        st->refresh_after_ms = now + REFRESH_EVERY_MS;
    }
    pthread_mutex_unlock(&st->lock);
    return go;
}

void store_map_refresh_end(struct store *st)
{
    pthread_mutex_lock(&st->lock);
    st->refreshing = 0;
    pthread_mutex_unlock(&st->lock);
}

int store_timeout_ms(const struct store *st)
{
    return st->timeout_ms;
}

void store_note_fault(struct store *st, const char *what, const char *detail)
{
    note_error(st, what, detail);
}

unsigned long store_error_count(const struct store *st)
{
    return atomic_load(&st->errors);
}

static atomic_int write_refusal; /* store_note_write: 0, -EDQUOT or -EROFS */

void store_note_write(int rc)
{
    if (rc == 0 || rc == -EDQUOT || rc == -EROFS)
        atomic_store(&write_refusal, rc);
}

int store_write_refusal(void)
{
    return atomic_load(&write_refusal);
}

#define STR_(x) #x
#define STR(x) STR_(x)

const char *store_client_version(void)
{
    return STR(HIREDIS_MAJOR) "." STR(HIREDIS_MINOR) "." STR(HIREDIS_PATCH);
}
