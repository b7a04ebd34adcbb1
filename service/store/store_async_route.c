/*
 * store_async_route.c -- one caller's group on its way: sent to its slot's node, MOVED and ASK
 * followed, the answers of several attempts put together; reads sent to a replica and taken back
 * to the primary when it cannot answer. The contract is store_async.h; store_async_int.h holds
 * what the store_async*.c files share.
 */
#include "store_async_int.h"

/* ---------------------------------------------------------------- a call on a cluster */

static void route_free(struct route *r)
{
    for (int i = 0; i < r->n; i++)
        store_reply_free(r->kept[i]);
    free(r);
}

/* A route for n commands, copied (lens NULL: NUL-terminated); NULL on ENOMEM. */
struct route *route_new(struct store_async *sa, int kind, int n, const int *argc,
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
int route_start(struct store_async *sa, struct route *r, int slot)
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
