/*
 * store_conn_send.c -- a connection's sending side: whether a send may go out, the commands in
 * RESP, shared groups, scripts (EVALSHA, EVAL after NOSCRIPT), --write-replicas' WAIT, and the
 * flush. The contract is store_conn.h; store_conn_int.h holds what the store_conn*.c files share.
 */
#include "store_conn_int.h"

/* ---------------------------------------------------------------- I/O */

/* Whether a send may go out now: 0, or the errno store_conn_send_shared returns. */
static int can_send(struct store_conn *sa, int n)
{
    if (n < 1 || n > STORE_CONN_MAX_CMDS)
        return -EINVAL;
    if (sa->broken)
        return -EIO;
    /* the primary first: a connection left on the old one (closed here when idle) holds the
     * call for the next dial, even while the old primary does not answer */
    retire_if_moved(sa, 0);
    if (sa->ctx && sa->stale_ms)
        return 0; /* held (append_resp) until it is closed and the new primary dialled */
    if (sa->head && sa->head->abandoned && sa->head->sent)
        return -ETIMEDOUT; /* Redis is not answering: fail fast */
    if (!sa->ctx) {
        start_dial(sa); /* held until it ends (hold_group); in the back-off window: fail fast */
        return sa->dialing ? 0 : -ECONNREFUSED;
    }
    return 0;
}

/* ---------------------------------------------------------------- RESP */

/*
 * Commands are formatted here, into the connection's own buffer, and join hiredis' output buffer
 * in one piece (redisAppendFormattedCommand): hiredis' formatter (sdscatfmt and a grown sds per
 * piece) was 7% of a member lookup's instructions (callgrind), the commands' argv copies for
 * scripts another 3%.
 */

/* "<type><n>\r\n" appended to b: 0 or -ENOMEM. */
static int resp_head(struct buf *b, char type, size_t n)
{
    char tmp[24], *end = tmp + sizeof(tmp), *at = end;
    *--at = '\n';
    *--at = '\r';
    do
        *--at = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    *--at = type;
    return buf_append(b, at, (size_t)(end - at));
}

/* One bulk string, "$<len>\r\n<bytes>\r\n", appended to b: 0 or -ENOMEM. */
static int resp_arg(struct buf *b, const char *s, size_t len)
{
    if (buf_reserve(b, len + 26)) /* "$" 20 digits "\r\n" ... "\r\n": one check, then in place */
        return -ENOMEM;
    char tmp[24], *end = tmp + sizeof(tmp), *at = end;
    size_t n = len;
    do
        *--at = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    char *out = b->data + b->len;
    *out++ = '$';
    memcpy(out, at, (size_t)(end - at));
    out += end - at;
    *out++ = '\r';
    *out++ = '\n';
    memcpy(out, s, len);
    out += len;
    *out++ = '\r';
    *out++ = '\n';
    *out = '\0';
    b->len = (size_t)(out - b->data);
    return 0;
}

/* One command, argv[0..argc) (argvlen NULL: NUL-terminated), appended to b: 0 or -ENOMEM. */
static int resp_command(struct buf *b, int argc, const char *const *argv, const size_t *argvlen)
{
    if (resp_head(b, '*', (size_t)argc))
        return -ENOMEM;
    for (int a = 0; a < argc; a++)
        if (resp_arg(b, argv[a], argvlen ? argvlen[a] : strlen(argv[a])))
            return -ENOMEM;
    return 0;
}

/* The connection's format buffer after a use: kept for the next group, unless a big one (a write
 * batch, a script's body) grew it past what the common ones need. */
static void fmt_done(struct store_conn *sa)
{
    if (sa->fmt.cap > FMT_KEEP)
        buf_free(&sa->fmt);
    sa->fmt.len = 0;
}

/* Queue p, whose commands are resp[0..len) in RESP, for its replies on the connection there is
 * (sa->ctx, whatever its epoch): into its output buffer and its FIFO. Returns 1 (a new
 * pipeline), 0, or -ENOMEM (p is not queued and stays the caller's; the connection is closed at
 * the next flush or tick). */
static int append_out(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
{
    int fresh = sdslen(sa->ctx->obuf) == 0;
    if (redisAppendFormattedCommand(sa->ctx, resp, len) != REDIS_OK) {
        /* out of memory: the context is unusable, so the connection must go; not from here (no
         * callback runs inside a send): at the next flush or tick */
        sa->broken = 1;
        return -ENOMEM;
    }
    queue_append(sa, p, fresh);
    return fresh;
}

/* Queue a caller's group p as append_out, or hold it (hold_group) while there is no connection,
 * or only one left on the old primary: it goes to the next. Returns as append_out. */
static int append_resp(struct store_conn *sa, struct pending *p, const char *resp, size_t len)
{
    if (!sa->ctx || sa->stale_ms)
        return hold_group(sa, p, resp, len);
    return append_out(sa, p, resp, len);
}

/* Append the group's commands and queue p for their replies; returns as append_resp. */
static int append_group(struct store_conn *sa, struct pending *p, const int *argc,
                        const char *const *const *argv, const size_t *const *argvlen)
{
    int rc = 0;
    for (int i = 0; i < p->n && !rc; i++)
        rc = resp_command(&sa->fmt, argc[i], argv[i], argvlen ? argvlen[i] : NULL);
    rc = rc ? -ENOMEM : append_resp(sa, p, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    return rc;
}

/* A new group of n commands for fn(arg), not queued yet; NULL on ENOMEM. */
static struct pending *pending_new(store_async_fn fn, void *arg, int n)
{
    struct pending *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->waiters_end = &p->waiters;
    return p;
}

/* A hash of the argument counts and every argument with its NUL; never 0 (0: not shared). */
static uint64_t group_hash(int n, const int *argc, const char *const *const *argv, size_t *len)
{
    /* eight bytes a step (a byte a step over a lookup's ~150 bytes was 1,700 instructions a
     * hit); each argument with its NUL, so "ab","c" and "a","bc" differ; a collision only costs
     * same_group's compare */
    const uint64_t k = UINT64_C(0x9E3779B97F4A7C15);
    uint64_t h = UINT64_C(14695981039346656037);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)argc[i]) * k;
        for (int a = 0; a < argc[i]; a++) {
            const char *s = argv[i][a];
            size_t l = strlen(s) + 1, at = 0;
            for (; at + 8 <= l; at += 8) {
                uint64_t w;
                memcpy(&w, s + at, 8);
                h = (h ^ w) * k;
                h ^= h >> 29;
            }
            uint64_t w = 0;
            memcpy(&w, s + at, l - at);
            h = (h ^ w ^ ((uint64_t)l << 56)) * k;
            h ^= h >> 29;
            total += l;
        }
    }
    *len = total;
    return h ? h : 1;
}

/* 1 when the unsent group p was appended with exactly these commands. */
static int same_group(const struct pending *p, int n, const int *argc,
                      const char *const *const *argv, uint64_t hash, size_t len)
{
    if (p->hash != hash || p->n != n || p->args_len != len)
        return 0;
    const char *at = p->args;
    for (int i = 0; i < n; i++) {
        if (p->argc[i] != argc[i])
            return 0;
        for (int a = 0; a < argc[i]; a++) {
            size_t l = strlen(argv[i][a]) + 1;
            if (memcmp(at, argv[i][a], l) != 0)
                return 0;
            at += l;
        }
    }
    return 1;
}

/* Keep the n commands of a shareable group, for same_group; 0 or -ENOMEM. */
static int keep_args(struct pending *p, int n, const int *argc, const char *const *const *argv,
                     uint64_t hash, size_t len)
{
    if (!(p->args = malloc(len + 1))) /* len >= 2: a command has a name */
        return -ENOMEM;
    char *at = p->args;
    for (int i = 0; i < n; i++) {
        p->argc[i] = argc[i];
        for (int a = 0; a < argc[i]; a++) {
            size_t l = strlen(argv[i][a]) + 1;
            memcpy(at, argv[i][a], l);
            at += l;
        }
    }
    p->hash = hash;
    p->args_len = len;
    return 0;
}

/* Join the unsent group of exactly these commands, if there is one: 2 joined, 0 none (*hash,
 * *len computed for a new one), -ENOMEM. */
static int join_shared(struct store_conn *sa, int n, const int *argc,
                       const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                       void *arg, uint64_t *hash, size_t *len)
{
    *hash = group_hash(n, argc, argv, len);
    for (struct pending *p = sa->share[*hash & (SHARE_SLOTS - 1)]; p; p = p->share_next)
        if (!p->abandoned && same_group(p, n, argc, argv, *hash, *len)) { /* answered: not joined */
            struct waiter *w = malloc(sizeof(*w));
            if (!w)
                return -ENOMEM;
            *w = (struct waiter){.fn = fn, .arg = arg};
            *p->waiters_end = w; /* first come, first answered */
            p->waiters_end = &w->next;
            if (deadline_ms && (!p->limit_ms || deadline_ms < p->limit_ms))
                p->limit_ms = deadline_ms; /* the group keeps its most pressed caller's time */
            if (p->limit_ms && p->limit_ms < p->deadline_ms)
                p->deadline_ms = p->limit_ms; /* unsent: its deadline is that */
            return 2;
        }
    return 0;
}

/* p (appended) is shareable until the flush: in its bucket. */
static void share_add(struct store_conn *sa, struct pending *p)
{
    struct pending **slot = &sa->share[p->hash & (SHARE_SLOTS - 1)];
    p->share_next = *slot;
    *slot = p;
}

int store_conn_send_shared(struct store_conn *sa, int n, const int *argc,
                           const char *const *const *argv, int64_t deadline_ms, store_async_fn fn,
                           void *arg)
{
    int rc = can_send(sa, n);
    if (rc)
        return rc;
    if (!sa->ctx || sa->stale_ms) /* held for a dial: not shared (the table is the buffer's) */
        return store_conn_send(sa, n, argc, argv, NULL, deadline_ms, fn, arg);
    size_t len = 0;
    uint64_t hash;
    if ((rc = join_shared(sa, n, argc, argv, deadline_ms, fn, arg, &hash, &len)) != 0)
        return rc;
    struct pending *p = pending_new(fn, arg, n);
    if (!p)
        return -ENOMEM;
    p->limit_ms = deadline_ms;
    if (keep_args(p, n, argc, argv, hash, len)) {
        free(p);
        return -ENOMEM;
    }
    rc = append_group(sa, p, argc, argv, NULL);
    if (rc >= 0)
        share_add(sa, p);
    else
        pending_free(p);
    return rc;
}

static int send_group(struct store_conn *sa, int n, const int *argc, const char *const *const *argv,
                      const size_t *const *argvlen, int64_t deadline_ms, int waits,
                      store_async_fn fn, void *arg)
{
    int rc = can_send(sa, n);
    if (rc)
        return rc;
    struct pending *p = pending_new(fn, arg, n);
    if (!p)
        return -ENOMEM;
    p->limit_ms = deadline_ms;
    p->waits = waits && store_write_replicas(sa->st) > 0;
    rc = append_group(sa, p, argc, argv, argvlen);
    if (rc < 0)
        pending_free(p);
    return rc;
}

int store_conn_send(struct store_conn *sa, int n, const int *argc, const char *const *const *argv,
                    const size_t *const *argvlen, int64_t deadline_ms, store_async_fn fn, void *arg)
{
    return send_group(sa, n, argc, argv, argvlen, deadline_ms, 0, fn, arg);
}

int store_conn_send_replicated(struct store_conn *sa, int n, const int *argc,
                               const char *const *const *argv, const size_t *const *argvlen,
                               int64_t deadline_ms, store_async_fn fn, void *arg)
{
    return send_group(sa, n, argc, argv, argvlen, deadline_ms, 1, fn, arg);
}

/* Append "EVALSHA <sha> nkeys ..." (or EVAL of the body when the SHA is not known yet, or `eval`
 * is set; on a replica EVALSHA_RO and EVAL_RO) for p's script, its keys and args from the RESP p
 * keeps; returns as append_resp. */
int append_script(struct store_conn *sa, struct pending *p, int eval)
{
    char sha[STORE_SHA_LEN + 1];
    int by_sha = !eval && store_script_sha(sa->st, p->script, sha) == 0;
    const char *head = by_sha ? sha : store_script_body(p->script);
    static const char *const names[2][2] = {{"EVAL", "EVALSHA"}, {"EVAL_RO", "EVALSHA_RO"}};
    const char *name = names[sa->replica][by_sha];
    p->n = 1; /* a script is one command */
    int rc = resp_head(&sa->fmt, '*', (size_t)p->script_argc + 3) ||
                     resp_arg(&sa->fmt, name, strlen(name)) ||
                     resp_arg(&sa->fmt, head, strlen(head)) ||
                     resp_arg(&sa->fmt, p->script_nkeys, strlen(p->script_nkeys)) ||
                     buf_append(&sa->fmt, p->script_tail.data ? p->script_tail.data : "",
                                p->script_tail.len)
                 ? -ENOMEM
                 : append_resp(sa, p, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    return rc;
}

/* A new script group for fn(arg): script, its keys and args kept in RESP (for EVALSHA, and
 * EVAL after a NOSCRIPT); not queued yet. NULL on ENOMEM. */
static struct pending *script_pending(const struct store_script *script, int nkeys, int nargs,
                                      const char *const *argv, const size_t *argvlen,
                                      int64_t deadline_ms, store_async_fn fn, void *arg)
{
    struct pending *p = pending_new(fn, arg, 1);
    if (!p)
        return NULL;
    int n = nkeys + nargs;
    size_t need = 1;
    for (int i = 0; i < n; i++) /* sized once: "$<len>\r\n<arg>\r\n" each */
        need += (argvlen ? argvlen[i] : strlen(argv[i])) + 16;
    if (buf_reserve(&p->script_tail, need)) {
        pending_free(p);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (resp_arg(&p->script_tail, argv[i], argvlen ? argvlen[i] : strlen(argv[i]))) {
            pending_free(p);
            return NULL;
        }
    p->script = script;
    p->script_argc = n;
    p->limit_ms = deadline_ms;
    struct strb nk; /* no snprintf: every script call */
    strb_init(&nk, p->script_nkeys, sizeof(p->script_nkeys));
    strb_i64(&nk, nkeys);
    return p;
}

int store_conn_script(struct store_conn *sa, const struct store_script *script, int nkeys,
                      int nargs, const char *const *argv, const size_t *argvlen,
                      int64_t deadline_ms, store_async_fn fn, void *arg)
{
    int rc = script ? can_send(sa, 1) : -EINVAL;
    if (rc)
        return rc;
    struct pending *p = script_pending(script, nkeys, nargs, argv, argvlen, deadline_ms, fn, arg);
    if (!p)
        return -ENOMEM;
    p->waits = store_script_waits(sa->st, script);
    rc = append_script(sa, p, 0);
    if (rc < 0)
        pending_free(p);
    return rc;
}

int store_conn_script_shared(struct store_conn *sa, const struct store_script *script, int nkeys,
                             int nargs, const char *const *argv, int64_t deadline_ms,
                             store_async_fn fn, void *arg)
{
    char sha[STORE_SHA_LEN + 1], nk[12];
    int n = nkeys + nargs;
    int rc = script && nkeys >= 0 && nargs >= 0 ? can_send(sa, 1) : -EINVAL;
    if (rc)
        return rc;
    /* held for a dial, a SHA not loaded yet, a write that waits or too many arguments: alone */
    if (!sa->ctx || sa->stale_ms || store_script_sha(sa->st, script, sha) ||
        store_script_waits(sa->st, script) || n > SCRIPT_SHARED_ARGS)
        return store_conn_script(sa, script, nkeys, nargs, argv, NULL, deadline_ms, fn, arg);
    /* shared by the command as sent: EVALSHA <sha> <nkeys> keys... args... */
    const char *cmd[SCRIPT_SHARED_ARGS + 3] = {"EVALSHA", sha, nk};
    struct strb b;
    strb_init(&b, nk, sizeof(nk));
    strb_i64(&b, nkeys);
    memcpy(cmd + 3, argv, (size_t)n * sizeof(*argv));
    const int argc[] = {n + 3};
    const char *const *av[] = {cmd};
    size_t len = 0;
    uint64_t hash;
    if ((rc = join_shared(sa, 1, argc, av, deadline_ms, fn, arg, &hash, &len)) != 0)
        return rc;
    struct pending *p = script_pending(script, nkeys, nargs, argv, NULL, deadline_ms, fn, arg);
    if (!p)
        return -ENOMEM;
    if (keep_args(p, 1, argc, av, hash, len)) {
        pending_free(p);
        return -ENOMEM;
    }
    rc = append_script(sa, p, 0);
    if (rc >= 0)
        share_add(sa, p);
    else
        pending_free(p);
    return rc;
}

/*
 * --write-replicas: the one WAIT of a flush whose groups include some that wait, appended after
 * them all to the same output buffer (WAIT counts the replicas that acknowledged every write
 * sent before it on this connection: each of them), so it goes out in the same write, on the
 * connection they went out on, even one left on an old primary (its count is that primary's).
 * Never held (append_out, not append_resp). Returns it, or NULL on ENOMEM (the connection is
 * broken then). sa->ctx is set.
 */
static struct pending *append_wait(struct store_conn *sa)
{
    struct pending *w = pending_new(NULL, NULL, 1);
    if (!w) {
        sa->broken = 1;
        return NULL;
    }
    w->is_wait = 1;
    w->parked_end = &w->parked;
    char nrep[24], ms[24];
    struct strb b;
    strb_init(&b, nrep, sizeof(nrep));
    strb_i64(&b, store_write_replicas(sa->st));
    strb_init(&b, ms, sizeof(ms));
    strb_i64(&b, store_timeout_ms(sa->st) / 2); /* its answer comes well within the timeout */
    const char *argv[] = {"WAIT", nrep, ms};
    int rc = resp_command(&sa->fmt, 3, argv, NULL);
    rc = rc ? rc : append_out(sa, w, sa->fmt.data, sa->fmt.len);
    fmt_done(sa);
    if (rc < 0) {
        sa->broken = 1;
        pending_free(w);
        return NULL;
    }
    return w;
}

void store_conn_flush(struct store_conn *sa)
{
    if (sa->broken) {
        fail_all(sa, -EIO, "out of memory");
        return;
    }
    if (!sa->ctx || sdslen(sa->ctx->obuf) == 0)
        return;
    struct pending *wait = NULL;
    if (sa->unsent_waits) {
        /* One WAIT in flight at a time: Redis runs nothing of this connection while a WAIT
         * blocks it, so what would queue behind it there waits here instead, and goes out
         * with the WAIT that follows once it is answered (the loop's next flush): a slow
         * replica costs a batch one acknowledgement, not every write one. Unless the buffer
         * still holds the end of an earlier flush (a partial write): that goes out now. */
        if (sa->wait_out && sa->unsent_fresh)
            return;
        if (!(wait = append_wait(sa))) {
            fail_all(sa, -EIO, "out of memory");
            return;
        }
        sa->unsent_waits = 0;
    }
    int done = 0;
    if (redisBufferWrite(sa->ctx, &done) == REDIS_ERR) {
        fail_all(sa, -EIO, "write");
        return;
    }
    if (sa->unsent) { /* their time starts once written, not when the request was parsed (nor
                       * before the write: a process stopped in between is not Redis's delay) */
        int64_t now = util_now_ms(), deadline = now + store_timeout_ms(sa->st);
        unsigned long long cmds = 0;
        for (struct pending *p = sa->unsent; p; p = p->next) {
            cmds += (unsigned long long)p->n;
            p->deadline_ms = p->limit_ms && p->limit_ms < deadline ? p->limit_ms : deadline;
            p->sent_ms = now;
            p->sent = 1;
            if (p->waits)
                p->wait = wait; /* answered with its verdict */
            free(p->args);      /* sent: nobody joins it any more */
            p->args = NULL;
        }
        if (wait)
            sa->wait_out = wait;
        atomic_fetch_add_explicit(&sa->round_trips, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sa->commands, cmds, memory_order_relaxed);
        share_reset(sa);
    }
    set_events(sa, done ? EPOLLIN : EPOLLIN | EPOLLOUT);
}
