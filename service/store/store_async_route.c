/* store_async.c -- an event loop's connection to the store: one Redis (its one store_conn, as it
 * is), or a Redis Cluster's nodes, routed by slot with the redirects followed; see
 * store_async.h. */
#include "store_async.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crc16.h"
#include "loop.h"
#include "metrics.h"
#include "store_cluster.h"
#include "store_conn.h"
#include "store_internal.h"
#include "util.h"

#define NONE ((size_t)-1)
#define REPLICA_WAIT_MS                                                                            \
    250                       /* a read waits this long at most for a replica (or a quarter of     \
                               * the command timeout, or half the time left), then goes to the     \
                               * primary: a stopped replica costs a read that much, not a 503 */
#define REPLICA_RETRY_MS 1000 /* a replica that failed a read gets none for this long */
#define REPLICA_MAP_MS 1000   /* a store reading from replicas reads the slot map this often */

/* A node this loop has a connection to. */
struct node_conn {
    char host[STORE_CLUSTER_HOST_MAX];
    int port;
    int replica;           /* a replica that reads go to (store_conn_new_replica) */
    int64_t skip_until_ms; /* a replica that failed a read: none before this (monotonic) */
    struct store_conn *conn;
};

struct store_async {
    struct store *st;
    struct loop *loop;
    struct store_conn *single; /* one Redis: the connection; NULL on a cluster */
    /* a cluster */
    struct node_conn *conns; /* every node sent to, in the order first used */
    size_t nconns, cap;
    struct store_map *map; /* this loop's reference to the store's map, or NULL */
    uint64_t version;      /* map's version (0: none) */
    size_t *by_node;       /* map node i -> its entry in conns + 1, 0 while it has none */
    int seed;              /* the seed a call goes to while there is no map */
    /* --read-from-replicas (store_read_replicas): the replicas' connections are in conns too
     * (replica 1); on one Redis (Sentinel) conns holds only those */
    int replicas_on;
    size_t *by_replica;               /* map replica (or list entry) i -> conns index + 1 */
    struct store_replica_list *rlist; /* Sentinel: this loop's reference to the list */
    uint64_t rversion;                /* its version (0: none) */
    unsigned rr;                      /* reads spread over a slot's replicas in turn */
};

/* ---------------------------------------------------------------- the loop's hook */

static int hook_prepare(void *arg)
{
    struct store_async *sa = arg;
    int wait = sa->single ? store_conn_tick(sa->single) : -1;
    for (size_t i = 0; i < sa->nconns; i++) {
        int w = store_conn_tick(sa->conns[i].conn);
        if (w >= 0 && (wait < 0 || w < wait))
            wait = w;
    }
    return wait;
}

static void hook_check(void *arg)
{
    struct store_async *sa = arg;
    if (sa->single)
        store_conn_check(sa->single);
    for (size_t i = 0; i < sa->nconns; i++)
        store_conn_check(sa->conns[i].conn);
}

static void hook_flush(void *arg)
{
    store_async_flush(arg);
}

struct store_async *store_async_new(struct store *st, struct loop *loop)
{
    struct store_async *sa = calloc(1, sizeof(*sa));
    if (!sa)
        return NULL;
    sa->st = st;
    sa->loop = loop;
    sa->replicas_on = store_read_replicas(st);
    if (!store_cluster_mode(st) && !(sa->single = store_conn_new(st, loop, NULL, 0))) {
        free(sa);
        return NULL;
    }
    /* deadlines and finished dials before the wait (its timeout) and after the events; the
     * iteration's commands go out last, after libmicrohttpd has run the requests */
    struct loop_hooks h = {
        .prepare = hook_prepare, .check = hook_check, .flush = hook_flush, .arg = sa};
    if (loop_hooks_add(loop, &h)) {
        store_conn_free(sa->single);
        free(sa);
        return NULL;
    }
    return sa;
}

void store_async_free(struct store_async *sa)
{
    if (!sa)
        return;
    store_conn_free(sa->single);
    for (size_t i = 0; i < sa->nconns; i++) /* its groups fail with -ECANCELED: routes go */
        store_conn_free(sa->conns[i].conn);
    store_map_put(sa->map);
    store_replica_list_put(sa->rlist);
    free(sa->conns);
    free(sa->by_node);
    free(sa->by_replica);
    free(sa);
}

void store_async_flush(struct store_async *sa)
{
    if (sa->single)
        store_conn_flush(sa->single);
    for (size_t i = 0; i < sa->nconns; i++)
        store_conn_flush(sa->conns[i].conn);
}

int store_async_connected(struct store_async *sa)
{
    if (sa->single)
        return store_conn_connected(sa->single);
    for (size_t i = 0; i < sa->nconns; i++)
        if (store_conn_connected(sa->conns[i].conn))
            return 1;
    return 0;
}

int store_async_reads_replicas(const struct store_async *sa)
{
    return sa->replicas_on;
}

void store_async_stats(struct store_async *sa, struct metrics_conn *out)
{
    if (sa->single) {
        store_conn_stats(sa->single, out);
        for (size_t i = 0; i < sa->nconns; i++) { /* a Sentinel's replicas: their counts */
            struct metrics_conn one;
            store_conn_stats(sa->conns[i].conn, &one);
            out->round_trips += one.round_trips;
            out->commands += one.commands;
            out->in_flight += one.in_flight;
        }
        return;
    }
    /* the sums over the nodes; the state is the worst of the map's masters' connections (a
     * node that is no master any more, say after a failover, does not count) */
    *out = (struct metrics_conn){.state = METRICS_CONN_DOWN};
    int seen = 0, worst = METRICS_CONN_UP;
    for (size_t i = 0; i < sa->nconns; i++) {
        struct metrics_conn one;
        store_conn_stats(sa->conns[i].conn, &one);
        out->round_trips += one.round_trips;
        out->commands += one.commands;
        out->in_flight += one.in_flight;
        int master = 0;
        for (size_t k = 0; sa->map && k < sa->map->map->nnodes; k++)
            master |= sa->by_node[k] == i + 1;
        if (master) {
            seen = 1;
            if (one.state == METRICS_CONN_DOWN ||
                (one.state == METRICS_CONN_DIALLING && worst == METRICS_CONN_UP))
                worst = one.state;
        }
    }
    if (seen)
        out->state = worst;
}

/* ---------------------------------------------------------------- nodes and the map */

/* This loop's connection to host:port as a master (`replica` 0) or as a replica that reads go
 * to (1: its own connection, READONLY, scripts as EVALSHA_RO), made when new; its index, or NONE
 * (ENOMEM). */
static size_t conn_role(struct store_async *sa, const char *host, int port, int replica)
{
    for (size_t i = 0; i < sa->nconns; i++)
        if (sa->conns[i].port == port && sa->conns[i].replica == replica &&
            strcmp(sa->conns[i].host, host) == 0)
            return i;
    if (sa->nconns == sa->cap) {
        size_t cap = sa->cap ? sa->cap * 2 : 8;
        struct node_conn *grown = realloc(sa->conns, cap * sizeof(*grown));
        if (!grown)
            return NONE;
        sa->conns = grown;
        sa->cap = cap;
    }
    struct node_conn *n = &sa->conns[sa->nconns];
    util_copy(n->host, sizeof(n->host), host);
    n->port = port;
    n->replica = replica;
    n->skip_until_ms = 0;
    if (!(n->conn = replica ? store_conn_new_replica(sa->st, sa->loop, host, port)
                            : store_conn_new(sa->st, sa->loop, host, port)))
        return NONE;
    store_conn_start(n->conn);
    return sa->nconns++;
}

/* The connection to a master (or a seed) at host:port. */
static size_t conn_at(struct store_async *sa, const char *host, int port)
{
    return conn_role(sa, host, port, 0);
}

/* For each of n nodes, its connection in conns + 1 when it has one in that role (0: none). */
static size_t *index_nodes(const struct store_async *sa, const struct store_cluster_node *nodes,
                           size_t n, int replica)
{
    size_t *by = calloc(n ? n : 1, sizeof(*by));
    for (size_t i = 0; by && i < n; i++)
        for (size_t k = 0; k < sa->nconns; k++)
            if (sa->conns[k].port == nodes[i].port && sa->conns[k].replica == replica &&
                strcmp(sa->conns[k].host, nodes[i].host) == 0)
                by[i] = k + 1;
    return by;
}

/* Take the store's map when it changed since this loop last looked (one atomic load when not). */
static void sync_map(struct store_async *sa)
{
    if (store_map_version(sa->st) == sa->version)
        return;
    struct store_map *m = store_map_get(sa->st);
    size_t *by = index_nodes(sa, m ? m->map->nodes : NULL, m ? m->map->nnodes : 0, 0);
    size_t *rby = index_nodes(sa, m ? m->map->replicas : NULL, m ? m->map->nreplicas : 0, 1);
    if (!by || !rby) {
        free(by);
        free(rby);
        store_map_put(m);
        return; /* the old map stays: it redirects */
    }
    store_map_put(sa->map);
    free(sa->by_node);
    free(sa->by_replica);
    sa->map = m;
    sa->by_node = by;
    sa->by_replica = rby;
    sa->version = m ? m->version : 0;
}

/* Sentinel: take the store's list of replicas when it changed since this loop last looked. */
static void sync_list(struct store_async *sa)
{
    if (store_replica_list_version(sa->st) == sa->rversion)
        return;
    struct store_replica_list *l = store_replica_list_get(sa->st);
    size_t *rby = index_nodes(sa, l ? l->nodes : NULL, l ? (size_t)l->n : 0, 1);
    if (!rby) {
        store_replica_list_put(l);
        return;
    }
    store_replica_list_put(sa->rlist);
    free(sa->by_replica);
    sa->rlist = l;
    sa->by_replica = rby;
    sa->rversion = l ? l->version : 0;
}

/* A replica for a read of `slot` (the slot map's replicas of it on a cluster, the sentinels' list
 * on one Redis): the next in turn that is connected and not skipped after a failure; one not
 * connected is dialled meanwhile (the read goes to the primary: it never waits for a replica's
 * dial). Its index in conns, or NONE. */
static size_t replica_for(struct store_async *sa, int slot)
{
    const struct store_cluster_node *nodes = NULL;
    const uint16_t *which = NULL;
    int n = 0;
    if (sa->single) {
        sync_list(sa);
        if (sa->rlist) {
            nodes = sa->rlist->nodes;
            n = sa->rlist->n;
        }
    } else {
        sync_map(sa);
        const struct store_cluster_set *set =
            sa->map && slot >= 0 ? store_cluster_map_replicas(sa->map->map, slot) : NULL;
        if (set) {
            nodes = sa->map->map->replicas;
            which = set->node;
            n = set->n;
        }
    }
    int64_t now = util_now_ms();
    unsigned first = sa->rr++;
    for (int k = 0; k < n; k++) {
        size_t i = which ? which[(first + (unsigned)k) % (unsigned)n]
                         : (first + (unsigned)k) % (unsigned)n;
        size_t at = sa->by_replica[i] ? sa->by_replica[i] - 1 : NONE;
        if (at == NONE) {
            at = conn_role(sa, nodes[i].host, nodes[i].port, 1);
            if (at != NONE)
                sa->by_replica[i] = at + 1;
            continue; /* being dialled (conn_role started it) */
        }
        if (now < sa->conns[at].skip_until_ms)
            continue;
        if (!store_conn_connected(sa->conns[at].conn)) {
            store_conn_start(sa->conns[at].conn); /* a dial, unless one runs or backs off */
            continue;
        }
        return at;
    }
    return NONE;
}

/* The connection a call for `slot` (-1: no key) goes to: the slot's master; the first master
 * for no key; a seed while there is no map or the map says nobody serves the slot (it
 * redirects). Its index in conns, or NONE (ENOMEM, no seed). */
static size_t route_to(struct store_async *sa, int slot)
{
    sync_map(sa);
    const struct store_cluster_map *m = sa->map ? sa->map->map : NULL;
    size_t node = NONE;
    if (m && slot >= 0 && m->owner[slot] != STORE_CLUSTER_NONE)
        node = m->owner[slot];
    else if (m && slot < 0 && m->nnodes > 0)
        node = 0;
    if (node != NONE) {
        if (sa->by_node[node])
            return sa->by_node[node] - 1;
        size_t at = conn_at(sa, m->nodes[node].host, m->nodes[node].port);
        if (at != NONE)
            sa->by_node[node] = at + 1;
        return at;
    }
    const char *host = NULL;
    int port = 0;
    if (store_seed(sa->st, sa->seed, &host, &port))
        return NONE;
    return conn_at(sa, host, port);
}

/* A CLUSTER SLOTS under way: where it was sent. */
struct refresh {
    struct store_async *sa;
    size_t at;
};

static void slots_reply(void *arg, int rc, struct store_reply **replies)
{
    struct refresh *f = arg;
    struct store_async *sa = f->sa;
    if (rc == 0) {
        struct store_cluster_map *m = NULL;
        int prc = store_cluster_map_parse(replies[0], sa->conns[f->at].host, &m);
        if (prc == 0 && m->covered > 0) {
            store_map_install(sa->st, m);
            store_cluster_note(sa->st, STORE_CLUSTER_OTHER);
            if (sa->replicas_on)
                store_replica_note(sa->st, STORE_REPLICA_FOUND);
        } else {
            store_cluster_map_free(m);
            store_note_fault(sa->st, "CLUSTER SLOTS",
                             replies[0]->type == STORE_REPLY_ERROR ? replies[0]->str
                                                                   : "no slot served");
        }
    } else if (rc != -ECANCELED) {
        sa->seed++; /* that node does not answer: the next refresh (or map-less call) asks the
                     * next seed, round the list */
        const char *h;
        int p;
        if (store_seed(sa->st, sa->seed, &h, &p))
            sa->seed = 0;
    }
    store_map_refresh_end(sa->st);
    free(f);
}

/* Read the map again (CLUSTER SLOTS), unless the store did in the last 100 ms or is doing it:
 * on `prefer` (an index in conns, or NONE) if it is connected, else on a connected node, else
 * on a seed. Behind the calls sent before it; nothing waits for it. */
static void refresh(struct store_async *sa, size_t prefer)
{
    if (!store_map_refresh_begin(sa->st))
        return;
    /* a master's connection (a replica's may be one that stopped answering reads) */
    size_t at =
        prefer != NONE && !sa->conns[prefer].replica && store_conn_connected(sa->conns[prefer].conn)
            ? prefer
            : NONE;
    for (size_t i = 0; at == NONE && i < sa->nconns; i++)
        if (!sa->conns[i].replica && store_conn_connected(sa->conns[i].conn))
            at = i;
    if (at == NONE) {
        const char *host = NULL;
        int port = 0;
        if (store_seed(sa->st, sa->seed, &host, &port) == 0)
            at = conn_at(sa, host, port);
    }
    struct refresh *f = at != NONE ? malloc(sizeof(*f)) : NULL;
    const char *argv[] = {"CLUSTER", "SLOTS"};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    if (f) {
        *f = (struct refresh){.sa = sa, .at = at};
        if (store_conn_send(sa->conns[at].conn, 1, argc, av, NULL, 0, slots_reply, f) >= 0)
            return;
    }
    free(f);
    store_map_refresh_end(sa->st);
}

void store_async_start(struct store_async *sa)
{
    if (sa->single) {
        store_conn_start(sa->single);
        return;
    }
    size_t at = route_to(sa, -1); /* a seed: the map is read from it */
    if (at != NONE)
        refresh(sa, at);
}

/* ---------------------------------------------------------------- keys and slots */

/* Commands whose first argument is no key (those rankd sends: /admin/redis, /readyz). */
static int keyless(const char *name)
{
    static const char *const names[] = {"PING",    "INFO",   "SLOWLOG", "LATENCY", "CONFIG",
                                        "CLUSTER", "ECHO",   "TIME",    "DBSIZE",  "CLIENT",
                                        "COMMAND", "SCRIPT", "MEMORY",  "WAIT",    "ASKING"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* The slot of one command's key, or -1 when it has none. */
static int command_slot(int argc, const char *const *argv, const size_t *lens)
{
    if (argc < 2 || keyless(argv[0]))
        return -1;
    if (strcasecmp(argv[0], "EVAL") == 0 || strcasecmp(argv[0], "EVALSHA") == 0)
        return argc > 3 && strtol(argv[2], NULL, 10) > 0
                   ? crc16_key_slot(argv[3], lens ? lens[3] : strlen(argv[3]))
                   : -1;
    return crc16_key_slot(argv[1], lens ? lens[1] : strlen(argv[1]));
}

/* The slot of a group (its first keyed command's), or -1; -EXDEV below -1 when two of its keys
 * are in different slots (a caller's bug: Redis would refuse it too). */
static int group_slot(int n, const int *argc, const char *const *const *argv,
                      const size_t *const *argvlen)
{
    int slot = -1;
    for (int i = 0; i < n; i++) {
        int s = command_slot(argc[i], argv[i], argvlen ? argvlen[i] : NULL);
        if (s >= 0 && slot >= 0 && s != slot)
            return -EXDEV - 1;
        if (s >= 0)
            slot = s;
    }
    return slot;
}

/* ---------------------------------------------------------------- a call on a cluster */

enum route_kind { ROUTE_SEND = 0, ROUTE_SHARED, ROUTE_SCRIPT };

/* One caller's group on a cluster, kept until it is answered: its commands (copied, to send
 * again after a redirect), which of them are answered, the answers kept from earlier
 * attempts. */
struct route {
    struct store_async *sa;
    store_async_fn fn;
    void *arg;
    int kind;                          /* enum route_kind */
    int waits;                         /* ROUTE_SEND: sent with store_async_send_replicated */
    const struct store_script *script; /* ROUTE_SCRIPT */
    int nkeys;                         /* ROUTE_SCRIPT */
    int n;                             /* commands (a script: 1) */
    int argc[STORE_ASYNC_MAX_CMDS];    /* each command's arguments (a script: keys + args) */
    const char **argv;                 /* every argument, command after command, NUL-ended */
    size_t *lens;
    int64_t deadline_ms;
    unsigned flags;     /* the caller's STORE_READ_* */
    int eligible;       /* a read a replica may answer (store_async.h) */
    int on_replica;     /* the attempt in flight is on a replica (at: its connection) */
    int slot;           /* the group's slot (-1: none) */
    int64_t attempt_ms; /* the replica attempt's own deadline (REPLICA_WAIT_MS) */
    int hops;           /* redirects followed */
    size_t at;          /* the connection (conns index) of the attempt in flight */
    int asking;         /* that attempt sent each command after an ASKING */
    int nsent;          /* its commands, as indexes into the group, in order */
    int sent[STORE_ASYNC_MAX_CMDS];
    struct store_reply *kept[STORE_ASYNC_MAX_CMDS]; /* answers of earlier attempts (copies) */
    struct store_reply verdict; /* --write-replicas: the last attempt's (its node's WAIT) */
};

static void route_free(struct route *r)
{
    for (int i = 0; i < r->n; i++)
        store_reply_free(r->kept[i]);
    free(r);
}

/* A route for n commands, copied (lens NULL: NUL-terminated); NULL on ENOMEM. */
static struct route *route_new(struct store_async *sa, int kind, int n, const int *argc,
                               const char *const *const *argv, const size_t *const *argvlen,
                               int64_t deadline_ms, store_async_fn fn, void *arg)
{
    size_t args = 0, bytes = 0;
    for (int i = 0; i < n; i++)
        for (int a = 0; a < argc[i]; a++) {
            args++;
            bytes += (argvlen ? argvlen[i][a] : strlen(argv[i][a])) + 1;
        }
    size_t head = (sizeof(struct route) + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
    size_t total = head + args * (sizeof(const char *) + sizeof(size_t)) + bytes;
    struct route *r = calloc(1, total);
    if (!r)
        return NULL;
    r->argv = (const char **)(void *)((char *)r + head);
    r->lens = (size_t *)(void *)(r->argv + args);
    char *at = (char *)(r->lens + args);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        r->argc[i] = argc[i];
        for (int a = 0; a < argc[i]; a++, k++) {
            size_t l = argvlen ? argvlen[i][a] : strlen(argv[i][a]);
            memcpy(at, argv[i][a], l);
            at[l] = '\0';
            r->argv[k] = at;
            r->lens[k] = l;
            at += l + 1;
        }
    }
    r->sa = sa;
    r->kind = kind;
    r->n = n;
    r->deadline_ms = deadline_ms;
    r->fn = fn;
    r->arg = arg;
    return r;
}

/* The arguments of command i of r. */
static const char *const *route_argv(const struct route *r, int i, const size_t **lens)
{
    size_t k = 0;
    for (int c = 0; c < i; c++)
        k += (size_t)r->argc[c];
    *lens = r->lens + k;
    return r->argv + k;
}

static void route_reply(void *arg, int rc, struct store_reply **replies);
static void replica_reply(void *arg, int rc, struct store_reply **replies);

/* Send the commands which[0..nwhich) of r to conns[at], each after an ASKING when `asking`; the
 * first attempt of a shared group as shared. Returns as store_conn_send. */
static int route_send(struct route *r, size_t at, const int *which, int nwhich, int asking,
                      int first)
{
    struct store_conn *c = r->sa->conns[at].conn;
    r->at = at;
    r->asking = asking;
    r->nsent = nwhich;
    memcpy(r->sent, which, (size_t)nwhich * sizeof(*which));
    store_async_fn cb = r->on_replica ? replica_reply : route_reply;
    int64_t deadline = r->on_replica ? r->attempt_ms : r->deadline_ms;
    if (r->kind == ROUTE_SCRIPT && !asking) /* a script's own flag says whether it waits */
        return store_conn_script(c, r->script, r->nkeys, r->argc[0] - r->nkeys, r->argv, r->lens,
                                 deadline, cb, r);
    int n = 0, argc[STORE_CONN_MAX_CMDS];
    const char *const *av[STORE_CONN_MAX_CMDS];
    const size_t *lv[STORE_CONN_MAX_CMDS];
    static const char *const asking_argv[] = {"ASKING"};
    static const size_t asking_len[] = {6};
    const char **eval = NULL; /* a script after ASKING: EVAL of its body (the target may not
                               * have its SHA; this is rare) */
    size_t *eval_lens = NULL;
    char nkeys[16];
    for (int k = 0; k < nwhich; k++) {
        if (asking) {
            argc[n] = 1;
            av[n] = asking_argv;
            lv[n++] = asking_len;
        }
        const size_t *lens;
        const char *const *a = route_argv(r, which[k], &lens);
        if (r->kind == ROUTE_SCRIPT) {
            int total = r->argc[0] + 3;
            eval = calloc((size_t)total, sizeof(*eval));
            eval_lens = calloc((size_t)total, sizeof(*eval_lens));
            if (!eval || !eval_lens) {
                free(eval);
                free(eval_lens);
                return -ENOMEM;
            }
            snprintf(nkeys, sizeof(nkeys), "%d", r->nkeys);
            eval[0] = "EVAL";
            eval[1] = store_script_body(r->script);
            eval[2] = nkeys;
            for (int i = 0; i < 3; i++)
                eval_lens[i] = strlen(eval[i]);
            for (int i = 0; i < r->argc[0]; i++) {
                eval[3 + i] = a[i];
                eval_lens[3 + i] = lens[i];
            }
            argc[n] = total;
            av[n] = eval;
            lv[n++] = eval_lens;
        } else {
            argc[n] = r->argc[which[k]];
            av[n] = a;
            lv[n++] = lens;
        }
    }
    /* a group that waits for --write-replicas waits on the node that runs it: a redirect's
     * attempt waits there, and its WAIT's verdict is the call's (nothing ran where MOVED or
     * ASK came from) */
    int waits = r->kind == ROUTE_SCRIPT ? store_script_waits(r->sa->st, r->script) : r->waits;
    int rc = first && r->kind == ROUTE_SHARED
                 ? store_conn_send_shared(c, n, argc, av, deadline, cb, r)
             : waits ? store_conn_send_replicated(c, n, argc, av, lv, deadline, cb, r)
                     : store_conn_send(c, n, argc, av, lv, deadline, cb, r);
    free(eval);
    free(eval_lens);
    return rc;
}

/* The answer is complete: out[0..n) (each freed after the call unless the callback takes it,
 * setting it to NULL; `own`: out is r's to free, else the connection's). A script with a
 * continuation gets it instead. r is freed. */
static void route_deliver(struct route *r, struct store_reply **out, int own)
{
    store_async_then_fn then = r->kind == ROUTE_SCRIPT ? store_script_then_of(r->script) : NULL;
    if (then) {
        struct store_reply *reply = out[0];
        out[0] = NULL; /* taken: the continuation's (a script's group is never shared) */
        /* its own reads (other slots' keys, which no version the caller checks covers) may go
         * to replicas when the script's could and the caller checks nothing */
        unsigned flags = r->eligible && !(r->flags & STORE_READ_CHECKED) ? STORE_READ_REPLICA
                                                                         : STORE_READ_PRIMARY;
        struct store_call call = {.nkeys = r->nkeys,
                                  .nargs = r->argc[0] - r->nkeys,
                                  .argv = r->argv,
                                  .lens = r->lens,
                                  .deadline_ms = r->deadline_ms,
                                  .flags = flags};
        then(r->sa, reply, &call, r->fn, r->arg);
    } else {
        r->fn(r->arg, 0, out);
    }
    if (own) /* what the callback did not take */
        for (int i = 0; i < r->n; i++)
            store_reply_free(out[i]);
    route_free(r);
}

static void route_fail(struct route *r, int rc)
{
    store_async_fn fn = r->fn;
    void *arg = r->arg;
    route_free(r);
    fn(arg, rc, NULL);
}

static void route_reply(void *arg, int rc, struct store_reply **replies)
{
    struct route *r = arg;
    struct store_async *sa = r->sa;
    if (rc) {
        if (rc != -ECANCELED) /* a node failed or went silent: the cluster may have changed */
            refresh(sa, NONE);
        route_fail(r, rc);
        return;
    }
    const int step = r->asking ? 2 : 1, base = r->asking ? 1 : 0;
    int pending[STORE_ASYNC_MAX_CMDS], npending = 0, refused = 0, kept = 0;
    struct store_cluster_redirect to = {0}, rd;
    for (int k = 0; k < r->nsent; k++) {
        const struct store_reply *x = replies[base + k * step];
        int kind = x->type == STORE_REPLY_ERROR ? store_cluster_redirect_parse(x->str, x->len, &rd)
                                                : STORE_CLUSTER_OTHER;
        if (kind == STORE_CLUSTER_MOVED || kind == STORE_CLUSTER_ASK) {
            if (npending == 0)
                to = rd;
            pending[npending++] = r->sent[k];
        } else if (kind == STORE_CLUSTER_TRYAGAIN) {
            refused = -EBUSY;
        } else if (kind == STORE_CLUSTER_DOWN) {
            refused = -ENETDOWN;
        }
    }
    for (int i = 0; i < r->n; i++)
        kept += r->kept[i] != NULL;
    if (refused) {
        store_note_fault(sa->st, "cluster", refused == -EBUSY ? "TRYAGAIN" : "CLUSTERDOWN");
        store_cluster_note(sa->st, refused == -EBUSY ? STORE_CLUSTER_TRYAGAIN : STORE_CLUSTER_DOWN);
        if (refused == -ENETDOWN)
            refresh(sa, NONE);
        route_fail(r, refused);
        return;
    }
    if (npending == 0 && kept == 0 && !r->asking) {
        route_deliver(r, replies, 0); /* the common case: the connection's replies as they are */
        return;
    }
    if (npending == 0) { /* the last commands answered: with the earlier answers, in order */
        struct store_reply *out[STORE_ASYNC_MAX_CMDS + 1] = {0};
        const struct store_reply *v = replies[(size_t)r->nsent * (size_t)step]; /* the verdict */
        if (v && v->type == STORE_REPLY_INTEGER) {
            r->verdict = *v;
            out[r->n] = &r->verdict;
        }
        for (int k = 0; k < r->nsent; k++) {
            out[r->sent[k]] = replies[base + k * step];
            replies[base + k * step] = NULL; /* taken: a resent group is never shared */
        }
        for (int i = 0; i < r->n; i++)
            if (!out[i]) {
                out[i] = r->kept[i];
                r->kept[i] = NULL;
            }
        route_deliver(r, out, 1);
        return;
    }
    /* keep what this attempt answered (copies: a shared group's replies are everyone's) */
    for (int k = 0; k < r->nsent; k++) {
        int c = r->sent[k], redirected = 0;
        for (int p = 0; p < npending; p++)
            redirected |= pending[p] == c;
        if (!redirected && !(r->kept[c] = store_reply_copy(replies[base + k * step]))) {
            route_fail(r, -ENOMEM);
            return;
        }
    }
    if (++r->hops > STORE_ASYNC_REDIRECTS) {
        store_note_fault(sa->st, "cluster", "too many redirects");
        route_fail(r, -ELOOP);
        return;
    }
    const char *host = to.host[0] ? to.host : sa->conns[r->at].host; /* "" : the same host */
    store_cluster_note(sa->st, to.kind);
    if (to.kind == STORE_CLUSTER_MOVED) {
        size_t from = r->at;
        store_map_moved(sa->st, to.slot, host, to.port);
        refresh(sa, from);
    }
    size_t at = conn_at(sa, host, to.port);
    rc = at == NONE ? -ENOMEM
                    : route_send(r, at, pending, npending, to.kind == STORE_CLUSTER_ASK, 0);
    if (rc < 0)
        route_fail(r, rc);
}

/* ---------------------------------------------------------------- reads on replicas */

/* 1 when a replica's answer says it cannot serve reads now (the primary can): loading its data,
 * its link to the primary down (replica-serve-stale-data no), the cluster down as it sees it, a
 * command it does not know (a Redis before 7.0: no EVALSHA_RO), busy. */
static int replica_refused(const struct store_reply *x)
{
    static const char *const words[] = {"LOADING", "MASTERDOWN", "CLUSTERDOWN",        "TRYAGAIN",
                                        "BUSY",    "NOPERM",     "ERR unknown command"};
    if (x->type != STORE_REPLY_ERROR)
        return 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strncmp(x->str, words[i], strlen(words[i])) == 0)
            return 1;
    return 0;
}

/* The replica at conns[at] failed a read: no reads for REPLICA_RETRY_MS. */
static void replica_skip(struct store_async *sa, size_t at, const char *why)
{
    sa->conns[at].skip_until_ms = util_now_ms() + REPLICA_RETRY_MS;
    char detail[STORE_CLUSTER_HOST_MAX + 96];
    snprintf(detail, sizeof(detail), "%s:%d: %s; reads go to the primary for a while",
             sa->conns[at].host, sa->conns[at].port, why);
    store_note_fault(sa->st, "replica", detail);
}

/* One Redis (Sentinel): r's commands to the primary, the caller's callback on the answer; r is
 * freed. Returns as store_conn_send. */
static int single_send(struct store_async *sa, struct route *r)
{
    int rc;
    if (r->kind == ROUTE_SCRIPT) {
        rc = store_conn_script(sa->single, r->script, r->nkeys, r->argc[0] - r->nkeys, r->argv,
                               r->lens, r->deadline_ms, r->fn, r->arg);
    } else {
        const char *const *av[STORE_ASYNC_MAX_CMDS];
        const size_t *lv[STORE_ASYNC_MAX_CMDS];
        for (int i = 0; i < r->n; i++)
            av[i] = route_argv(r, i, &lv[i]);
        rc = store_conn_send(sa->single, r->n, r->argc, av, lv, r->deadline_ms, r->fn, r->arg);
    }
    route_free(r);
    return rc;
}

/* r to its slot's master (one Redis: the primary), as a call of its own from here. Returns as
 * store_conn_send; r is freed on an error (the caller's callback not called). */
static int primary_send(struct store_async *sa, struct route *r)
{
    r->on_replica = 0;
    if (sa->single)
        return single_send(sa, r);
    size_t at = route_to(sa, r->slot);
    if (at == NONE) {
        route_free(r);
        return -ENOMEM;
    }
    int all[STORE_ASYNC_MAX_CMDS] = {0};
    for (int i = 0; i < r->n; i++)
        all[i] = i;
    int rc = route_send(r, at, all, r->n, 0, 1);
    if (rc < 0) {
        route_free(r);
        if (rc == -ECONNREFUSED || rc == -ETIMEDOUT)
            refresh(sa, NONE); /* that node is down or silent: has the cluster moved on? */
    }
    return rc;
}

/* r to the replica at conns[at], with a deadline of its own: REPLICA_WAIT_MS (at most a quarter
 * of the command timeout and half the time the caller has left), so a replica that stopped
 * answering leaves the time to ask the primary. Returns as store_conn_send (r stays the
 * caller's on an error). */
static int replica_send(struct store_async *sa, struct route *r, size_t at)
{
    int64_t now = util_now_ms(), wait = store_timeout_ms(sa->st) / 4;
    if (wait > REPLICA_WAIT_MS)
        wait = REPLICA_WAIT_MS;
    if (r->deadline_ms && (r->deadline_ms - now) / 2 < wait)
        wait = (r->deadline_ms - now) / 2;
    r->attempt_ms = now + (wait > 1 ? wait : 1);
    r->on_replica = 1;
    int all[STORE_ASYNC_MAX_CMDS] = {0};
    for (int i = 0; i < r->n; i++)
        all[i] = i;
    int rc = route_send(r, at, all, r->n, 0, 1);
    if (rc < 0)
        r->on_replica = 0;
    return rc;
}

/* A replica's answer: the caller's (through the cluster's redirects and the continuation), or,
 * when the replica failed it (an error, no answer in time, a refusal of a replica), the same
 * read sent to the primary now. */
static void replica_reply(void *arg, int rc, struct store_reply **replies)
{
    struct route *r = arg;
    struct store_async *sa = r->sa;
    const char *why = rc == -ETIMEDOUT ? "no answer in time" : "the connection failed";
    int failed = rc != 0 && rc != -ECANCELED;
    for (int k = 0; !rc && k < r->nsent && !failed; k++)
        if (replica_refused(replies[k])) {
            failed = 1;
            why = replies[k]->str;
        }
    if (failed) {
        replica_skip(sa, r->at, why);
        store_replica_note(sa->st, STORE_REPLICA_FALLBACK);
        store_async_fn fn = r->fn;
        void *fa = r->arg;
        int frc = primary_send(sa, r); /* r is the primary's attempt now, or freed */
        if (frc < 0)
            fn(fa, frc, NULL);
        return;
    }
    r->on_replica = 0;
    if (sa->single && rc == 0) { /* one Redis: no redirect, no continuation */
        r->fn(r->arg, 0, replies);
        route_free(r);
        return;
    }
    route_reply(arg, rc, replies); /* MOVED from a replica is followed as from a master */
}

/* Send a new route: a read a replica may answer to one (counted), else (none usable, or the
 * send failed at once) to its slot's master. */
static int route_start(struct store_async *sa, struct route *r, int slot)
{
    r->slot = slot;
    if (r->eligible) {
        if (!sa->single && store_map_older_than(sa->st, REPLICA_MAP_MS))
            refresh(sa, NONE); /* replicas that joined or left */
        size_t at = replica_for(sa, slot);
        int rc = at == NONE ? -ENOENT : replica_send(sa, r, at);
        if (rc >= 0) {
            store_replica_note(sa->st, STORE_REPLICA_SENT);
            return rc;
        }
        if (at != NONE)
            replica_skip(sa, at, "not answering");
        store_replica_note(sa->st, at == NONE ? STORE_REPLICA_NONE : STORE_REPLICA_FALLBACK);
    }
    return primary_send(sa, r);
}

/* ---------------------------------------------------------------- the calls */

/* 1 when a call of this kind may be answered by a replica (store_async.h's flags). */
static int replica_ok(const struct store_async *sa, int kind, const struct store_script *script,
                      unsigned flags)
{
    if (!sa->replicas_on || (flags & STORE_READ_PRIMARY))
        return 0;
    return kind == ROUTE_SCRIPT ? store_script_is_read_only(script)
                                : kind == ROUTE_SEND && (flags & STORE_READ_REPLICA);
}

static int cluster_send(struct store_async *sa, int kind, unsigned flags, int waits, int n,
                        const int *argc, const char *const *const *argv,
                        const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn,
                        void *arg)
{
    if (n < 1 || n > STORE_ASYNC_MAX_CMDS)
        return -EINVAL;
    int slot = sa->single ? -1 : group_slot(n, argc, argv, argvlen);
    if (slot < -1)
        return -EXDEV;
    struct route *r = route_new(sa, kind, n, argc, argv, argvlen, deadline_ms, fn, arg);
    if (!r)
        return -ENOMEM;
    r->flags = flags;
    r->waits = waits;
    r->eligible = replica_ok(sa, kind, NULL, flags);
    return route_start(sa, r, slot);
}

int store_async_send_shared(struct store_async *sa, int n, const int *argc,
                            const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                            void *arg)
{
    if (sa->single)
        return store_conn_send_shared(sa->single, n, argc, argv, deadline_ms, fn, arg);
    return cluster_send(sa, ROUTE_SHARED, 0, 0, n, argc, argv, NULL, deadline_ms, fn, arg);
}

int store_async_send(struct store_async *sa, int n, const int *argc, const char *const *const *argv,
                     const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn,
                     void *arg)
{
    return store_async_send_flags(sa, 0, n, argc, argv, argvlen, deadline_ms, fn, arg);
}

int store_async_send_flags(struct store_async *sa, unsigned flags, int n, const int *argc,
                           const char *const *const *argv, const size_t *const *argvlen,
                           int64_t deadline_ms, store_async_fn fn, void *arg)
{
    if (sa->single && !replica_ok(sa, ROUTE_SEND, NULL, flags))
        return store_conn_send(sa->single, n, argc, argv, argvlen, deadline_ms, fn, arg);
    return cluster_send(sa, ROUTE_SEND, flags, 0, n, argc, argv, argvlen, deadline_ms, fn, arg);
}

int store_async_send_replicated(struct store_async *sa, int n, const int *argc,
                                const char *const *const *argv, const size_t *const *argvlen,
                                int64_t deadline_ms, store_async_fn fn, void *arg)
{
    if (sa->single)
        return store_conn_send_replicated(sa->single, n, argc, argv, argvlen, deadline_ms, fn, arg);
    return cluster_send(sa, ROUTE_SEND, STORE_READ_PRIMARY, 1, n, argc, argv, argvlen, deadline_ms,
                        fn, arg);
}

int store_async_unreplicated(const struct store_async *sa, struct store_reply *const *replies,
                             int n)
{
    int want = store_write_replicas(sa->st);
    if (want <= 0)
        return 0;
    if (n < 0 || n > STORE_ASYNC_MAX_CMDS)
        return 1; /* no verdict where one is read: not confirmed */
    const struct store_reply *v = replies[n];
    return !v || v->type != STORE_REPLY_INTEGER || v->integer < want;
}

int store_async_script(struct store_async *sa, const struct store_script *script, int nkeys,
                       int nargs, const char *const *argv, const size_t *argvlen,
                       int64_t deadline_ms, store_async_fn fn, void *arg)
{
    return store_async_script_flags(sa, script, 0, nkeys, nargs, argv, argvlen, deadline_ms, fn,
                                    arg);
}

int store_async_script_flags(struct store_async *sa, const struct store_script *script,
                             unsigned flags, int nkeys, int nargs, const char *const *argv,
                             const size_t *argvlen, int64_t deadline_ms, store_async_fn fn,
                             void *arg)
{
    int replica = script && replica_ok(sa, ROUTE_SCRIPT, script, flags);
    if (sa->single && !replica)
        return store_conn_script(sa->single, script, nkeys, nargs, argv, argvlen, deadline_ms, fn,
                                 arg);
    if (!script || nkeys < 0 || nargs < 0)
        return -EINVAL;
    int slot = -1;
    for (int i = 0; !sa->single && i < nkeys; i++) {
        int s = crc16_key_slot(argv[i], argvlen ? argvlen[i] : strlen(argv[i]));
        if (slot >= 0 && s != slot)
            return -EXDEV;
        slot = s;
    }
    const int argc[] = {nkeys + nargs};
    const char *const *av[] = {argv};
    const size_t *const lv[] = {argvlen};
    struct route *r =
        route_new(sa, ROUTE_SCRIPT, 1, argc, av, argvlen ? lv : NULL, deadline_ms, fn, arg);
    if (!r)
        return -ENOMEM;
    r->script = script;
    r->nkeys = nkeys;
    r->flags = flags;
    r->eligible = replica;
    return route_start(sa, r, slot);
}
