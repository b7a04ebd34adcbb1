/*
 * store_async.c -- an event loop's connection to the store: one Redis (its one store_conn, as it
 * is), or a Redis Cluster's nodes, routed by slot with the redirects followed. Here the loop's
 * hook, the life cycle and the calls; the nodes, the slot map and the keys' slots are
 * store_async_map.c's, a call's route (redirects, reads on replicas) store_async_route.c's. The
 * contract is store_async.h; store_async_int.h holds what the store_async*.c files share.
 */
#include "store_async_int.h"

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

int store_async_script_shared(struct store_async *sa, const struct store_script *script, int nkeys,
                              int nargs, const char *const *argv, int64_t deadline_ms,
                              store_async_fn fn, void *arg)
{
    if (sa->single && !(script && replica_ok(sa, ROUTE_SCRIPT, script, 0)))
        return store_conn_script_shared(sa->single, script, nkeys, nargs, argv, deadline_ms, fn,
                                        arg);
    return store_async_script(sa, script, nkeys, nargs, argv, NULL, deadline_ms, fn, arg);
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
