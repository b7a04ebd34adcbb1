/*
 * store_async_map.c -- a loop's connections to a cluster's nodes and replicas, kept in step with
 * the store's slot map (and Sentinel's replica list), the route of a slot, and the slot of a
 * command or group of commands. The contract is store_async.h; store_async_int.h holds what the
 * store_async*.c files share.
 */
#include "store_async_int.h"

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
size_t conn_at(struct store_async *sa, const char *host, int port)
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
size_t replica_for(struct store_async *sa, int slot)
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
size_t route_to(struct store_async *sa, int slot)
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
void refresh(struct store_async *sa, size_t prefer)
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
int group_slot(int n, const int *argc, const char *const *const *argv, const size_t *const *argvlen)
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
