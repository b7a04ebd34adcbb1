/* store.c -- Redis connection pool, scripts and fault mapping; the contract is in store.h. */
#include "store.h"

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
#include "metrics.h"
#include "util.h"

/* Script bodies: service/lua/NAME.lua, turned into C string literals by the Makefile. */
static const char *const script_body[STORE_SCRIPT_COUNT] = {
#include "lua/write.lua.h"
    ,
#include "lua/compact.lua.h"
    ,
#include "lua/page.lua.h"
    ,
#include "lua/member.lua.h"
    ,
#include "lua/around.lua.h"
    ,
#include "lua/put_board.lua.h"
    ,
#include "lua/lock_release.lua.h"
    ,
#include "lua/reset_board.lua.h"
    ,
#include "lua/delete_board.lua.h"
    ,
#include "lua/trim.lua.h"
    ,
#include "lua/page_fill.lua.h"
    ,
#include "lua/create_board.lua.h"
    ,
#include "lua/sweep.lua.h"
    ,
#include "lua/write_probe.lua.h"
    ,
#include "lua/delete_member.lua.h"
};

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 100 /* store.h: a probe at least this often after a fault */
#define SHA_LEN STORE_SHA_LEN

struct store_conn {
    struct store *st;  /**< the pool this connection belongs to */
    redisContext *ctx; /**< NULL until dialled; freed after any error */
    int busy;          /**< borrowed by a request */
    int failed;        /**< the negative errno it failed with: close on release */
};

struct store {
    char *host, *unix_path, *username, *password;
    int port, db, timeout_ms, connect_timeout_ms, pool_size;
    pthread_mutex_t lock;
    pthread_cond_t freed;     /**< signalled when a connection is released */
    struct store_conn *conns; /**< pool_size slots */
    int64_t down_until_ms;    /**< no dialling before this (monotonic ms); under lock */
    int backoff_ms;           /**< next back-off step; under lock */
    int64_t stalled_until_ms; /**< after a timeout: fail fast before this; under lock */
    int stall_backoff_ms;     /**< next stall window; under lock */
    char sha[STORE_SCRIPT_COUNT][SHA_LEN + 1]; /**< filled by the first successful load */
    atomic_int sha_loaded;
    atomic_ulong errors;
    atomic_ullong round_trips, commands; /**< of store_command/_pipeline/_script, for /metrics */
};

/* Count a round trip of n commands (relaxed: a counter for /metrics). */
static void count_trip(struct store *st, unsigned long long n)
{
    atomic_fetch_add_explicit(&st->round_trips, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->commands, n, memory_order_relaxed);
}

struct store *store_new(const struct store_config *cfg)
{
    struct store *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->conns = calloc((size_t)cfg->pool_size, sizeof(*st->conns));
    st->host = cfg->host ? strdup(cfg->host) : NULL;
    st->unix_path = cfg->unix_path ? strdup(cfg->unix_path) : NULL;
    st->username = cfg->username ? strdup(cfg->username) : NULL;
    st->password = cfg->password ? strdup(cfg->password) : NULL;
    if (!st->conns || (cfg->host && !st->host) || (cfg->unix_path && !st->unix_path) ||
        (cfg->username && !st->username) || (cfg->password && !st->password)) {
        store_free(st);
        return NULL;
    }
    st->port = cfg->port;
    st->db = cfg->db;
    st->pool_size = cfg->pool_size;
    st->timeout_ms = cfg->timeout_ms;
    st->connect_timeout_ms = cfg->connect_timeout_ms;
    st->backoff_ms = BACKOFF_MIN_MS;
    st->stall_backoff_ms = BACKOFF_MIN_MS;
    for (int i = 0; i < st->pool_size; i++)
        st->conns[i].st = st;
    pthread_mutex_init(&st->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* pool waits ignore wall-clock jumps */
    pthread_cond_init(&st->freed, &ca);
    pthread_condattr_destroy(&ca);
    return st;
}

void store_free(struct store *st)
{
    if (!st)
        return;
    if (st->conns) {
        for (int i = 0; i < st->pool_size; i++)
            if (st->conns[i].ctx)
                redisFree(st->conns[i].ctx);
        pthread_mutex_destroy(&st->lock);
        pthread_cond_destroy(&st->freed);
    }
    free(st->conns);
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
    redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
    if (!r) {
        int rc = ctx_errno(ctx); /* before logging, which may change errno */
        note_error(st, "set-up", ctx->errstr);
        return rc;
    }
    int rc = r->type == REDIS_REPLY_ERROR ? -EIO : 0;
    if (rc)
        note_error(st, argv[0], r->str);
    freeReplyObject(r);
    return rc;
}

static int load_scripts(struct store *st, redisContext *ctx)
{
    if (atomic_load(&st->sha_loaded))
        return 0;
    char sha[STORE_SCRIPT_COUNT][SHA_LEN + 1];
    for (int i = 0; i < STORE_SCRIPT_COUNT; i++) {
        const char *argv[] = {"SCRIPT", "LOAD", script_body[i]};
        redisReply *r = redisCommandArgv(ctx, 3, argv, NULL);
        if (!r || r->type != REDIS_REPLY_STRING || r->len != SHA_LEN) {
            note_error(st, "SCRIPT LOAD", r ? r->str : ctx->errstr);
            int rc = r ? -EIO : ctx_errno(ctx);
            freeReplyObject(r);
            return rc;
        }
        memcpy(sha[i], r->str, SHA_LEN + 1);
        freeReplyObject(r);
    }
    pthread_mutex_lock(&st->lock);
    memcpy(st->sha, sha, sizeof(sha));
    atomic_store(&st->sha_loaded, 1);
    pthread_mutex_unlock(&st->lock);
    return 0;
}

static int dial(struct store *st, redisContext **out)
{
    struct timeval ctv = ms_to_tv(st->connect_timeout_ms);
    redisContext *ctx = st->unix_path ? redisConnectUnixWithTimeout(st->unix_path, ctv)
                                      : redisConnectWithTimeout(st->host, st->port, ctv);
    if (!ctx || ctx->err) {
        note_error(st, "connect", ctx ? ctx->errstr : "out of memory");
        int rc = ctx ? -ECONNREFUSED : -ENOMEM;
        redisFree(ctx);
        return rc;
    }
    int rc = redisSetTimeout(ctx, ms_to_tv(st->timeout_ms)) == REDIS_OK ? 0 : -EIO;
    if (!rc && st->password) {
        const char *a2[] = {"AUTH", st->password};
        const char *a3[] = {"AUTH", st->username ? st->username : "", st->password};
        rc = st->username ? setup_command(st, ctx, 3, a3) : setup_command(st, ctx, 2, a2);
    }
    if (!rc && st->db != 0) {
        char db[16];
        snprintf(db, sizeof(db), "%d", st->db);
        const char *argv[] = {"SELECT", db};
        rc = setup_command(st, ctx, 2, argv);
    }
    if (!rc)
        rc = load_scripts(st, ctx);
    if (rc) {
        redisFree(ctx);
        return rc == -ETIMEDOUT ? rc : -ECONNREFUSED;
    }
    *out = ctx;
    return 0;
}

/* After a dial that returned rc: back off (no dial before the window ends), or end the back-off.
 * Under st->lock. */
static void dialled(struct store *st, int rc)
{
    if (rc) {
        st->down_until_ms = util_now_ms() + st->backoff_ms;
        st->backoff_ms = st->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : st->backoff_ms * 2;
    } else {
        st->backoff_ms = BACKOFF_MIN_MS;
        st->down_until_ms = 0;
    }
}

/* Find a free slot, waiting up to timeout_ms. Under st->lock. */
static struct store_conn *take_slot(struct store *st, int *err)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += st->timeout_ms / 1000;
    deadline.tv_nsec += (long)(st->timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    int timed_out = 0;
    for (;;) {
        struct store_conn *idle = NULL;
        for (int i = 0; i < st->pool_size; i++) {
            struct store_conn *c = &st->conns[i];
            if (c->busy)
                continue;
            if (c->ctx) /* prefer a connected slot */
                return c;
            if (!idle)
                idle = c;
        }
        if (idle)
            return idle;
        if (timed_out) {
            *err = -ETIMEDOUT;
            return NULL;
        }
        /* on a timeout, look once more: a wake-up that raced the timeout must not be lost */
        timed_out = pthread_cond_timedwait(&st->freed, &st->lock, &deadline) == ETIMEDOUT;
    }
}

/* 1 when the server has closed an idle connection (EOF or an error is pending on its socket). */
static int peer_closed(const redisContext *ctx)
{
    char byte;
    ssize_t n = recv(ctx->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return 1;
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK;
}

struct store_conn *store_acquire(struct store *st, int *err)
{
    pthread_mutex_lock(&st->lock);
    struct store_conn *c = take_slot(st, err);
    if (!c) {
        pthread_mutex_unlock(&st->lock);
        note_error(st, "pool", "no connection free within the timeout");
        return NULL;
    }
    int64_t now = util_now_ms();
    if ((!c->ctx && now < st->down_until_ms) || now < st->stalled_until_ms) {
        /* Redis refused a dial or just timed out: fail fast for a short, growing window
         * instead of making every request wait for its own timeout. */
        int stalled = now < st->stalled_until_ms;
        pthread_cond_signal(&st->freed); /* the slot stays free: pass the wake-up on */
        pthread_mutex_unlock(&st->lock);
        atomic_fetch_add(&st->errors, 1);
        *err = stalled ? -ETIMEDOUT : -ECONNREFUSED;
        return NULL;
    }
    c->busy = 1;
    c->failed = 0;
    pthread_mutex_unlock(&st->lock);
    if (c->ctx && peer_closed(c->ctx)) {
        /* Redis restarted, CLIENT KILL, a proxy's idle timeout: redial now rather than fail
         * this request with an error the next one would not see. */
        redisFree(c->ctx);
        c->ctx = NULL;
    }
    if (c->ctx)
        return c;

    redisContext *ctx = NULL;
    int rc = dial(st, &ctx);
    pthread_mutex_lock(&st->lock);
    dialled(st, rc);
    if (rc) {
        c->busy = 0;
        pthread_cond_signal(&st->freed); /* pass the wake-up on */
        pthread_mutex_unlock(&st->lock);
        *err = rc;
        return NULL;
    }
    c->ctx = ctx;
    pthread_mutex_unlock(&st->lock);
    return c;
}

void store_release(struct store *st, struct store_conn *c)
{
    if (!c)
        return;
    redisContext *dead = NULL;
    pthread_mutex_lock(&st->lock);
    if (c->failed) {
        dead = c->ctx;
        c->ctx = NULL;
    } else {
        st->stall_backoff_ms = BACKOFF_MIN_MS; /* Redis answered: it is not stalled */
    }
    if (c->failed == -ETIMEDOUT || c->failed == -ETIME) {
        st->stalled_until_ms = util_now_ms() + st->stall_backoff_ms;
        st->stall_backoff_ms =
            st->stall_backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : st->stall_backoff_ms * 2;
    }
    c->busy = 0;
    /* one slot freed: wake one waiter (a broadcast would wake every waiting request thread,
     * dozens under load, for one slot); a waiter that then fails fast passes the wake-up on */
    pthread_cond_signal(&st->freed);
    pthread_mutex_unlock(&st->lock);
    redisFree(dead);
}

static int fail(struct store_conn *c, const char *what)
{
    int rc = ctx_errno(c->ctx);
    /* A timeout, EOF or reset after the whole command left the output buffer: Redis may have
     * run it, or may still. */
    int sent = c->ctx && c->ctx->obuf && sdslen(c->ctx->obuf) == 0;
    if (rc == -ETIMEDOUT && sent)
        rc = -ETIME;
    else if (rc == -EIO && sent)
        rc = -ECONNRESET;
    c->failed = rc;
    note_error(c->st, what, c->ctx ? c->ctx->errstr : "out of memory");
    return rc;
}

int store_error_errno(const char *msg)
{
    if (msg && strncmp(msg, "OOM", 3) == 0)
        return -EDQUOT; /* maxmemory reached: writes refused until memory is freed */
    if (msg && strncmp(msg, "READONLY", 8) == 0)
        return -EROFS; /* a replica now: the primary changed (a failover) */
    return -EIO;
}

static int error_reply(struct store_conn *c, redisReply *r, const char *what)
{
    note_error(c->st, what, r->str);
    int rc = store_error_errno(r->str);
    freeReplyObject(r);
    return rc;
}

redisReply *store_command(struct store_conn *c, int argc, const char **argv, const size_t *argvlen,
                          int *err)
{
    redisReply *r = redisCommandArgv(c->ctx, argc, argv, argvlen);
    count_trip(c->st, 1);
    if (!r) {
        *err = fail(c, argv[0]);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        *err = error_reply(c, r, argv[0]);
        return NULL;
    }
    return r;
}

int store_pipeline(struct store_conn *c, int n, const int *argc, const char *const *const *argv,
                   const size_t *const *argvlen, redisReply **replies)
{
    count_trip(c->st, (unsigned long long)n);
    for (int i = 0; i < n; i++)
        if (redisAppendCommandArgv(c->ctx, argc[i], (const char **)argv[i], argvlen[i]) != REDIS_OK)
            return fail(c, "pipeline");
    for (int i = 0; i < n; i++) {
        void *r = NULL;
        if (redisGetReply(c->ctx, &r) != REDIS_OK || !r) {
            for (int j = 0; j < i; j++)
                freeReplyObject(replies[j]);
            return fail(c, "pipeline");
        }
        replies[i] = r;
    }
    return 0;
}

static int is_noscript(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0;
}

static void sha_of(struct store_conn *c, enum store_script s, char out[SHA_LEN + 1])
{
    struct store *st = c->st;
    pthread_mutex_lock(&st->lock);
    memcpy(out, st->sha[s], SHA_LEN + 1);
    pthread_mutex_unlock(&st->lock);
}

/* Build "EVALSHA|EVAL <sha|body> <nkeys> keys... args..." into a caller array of n + 3 slots. */
static void script_argv(const char *verb, const char *head, const char *nkeys_s, int n,
                        const char **argv, const size_t *argvlen, const char **out, size_t *outlen)
{
    out[0] = verb;
    outlen[0] = strlen(verb);
    out[1] = head;
    outlen[1] = strlen(head);
    out[2] = nkeys_s;
    outlen[2] = strlen(nkeys_s);
    for (int i = 0; i < n; i++) {
        out[3 + i] = argv[i];
        outlen[3 + i] = argvlen ? argvlen[i] : strlen(argv[i]);
    }
}

redisReply *store_script(struct store_conn *c, enum store_script script, int nkeys, int nargs,
                         const char **argv, const size_t *argvlen, int *err)
{
    int n = nkeys + nargs;
    const char **full = malloc(sizeof(*full) * (size_t)(n + 3));
    size_t *fulllen = malloc(sizeof(*fulllen) * (size_t)(n + 3));
    if (!full || !fulllen) {
        free(full);
        free(fulllen);
        *err = -ENOMEM;
        return NULL;
    }
    char sha[SHA_LEN + 1], nk[12];
    sha_of(c, script, sha);
    snprintf(nk, sizeof(nk), "%d", nkeys);
    script_argv("EVALSHA", sha, nk, n, argv, argvlen, full, fulllen);
    redisReply *r = redisCommandArgv(c->ctx, n + 3, full, fulllen);
    count_trip(c->st, 1);
    if (is_noscript(r)) {
        count_trip(c->st, 1);
        freeReplyObject(r);
        script_argv("EVAL", script_body[script], nk, n, argv, argvlen, full, fulllen);
        r = redisCommandArgv(c->ctx, n + 3, full, fulllen);
    }
    free(full);
    free(fulllen);
    if (!r) {
        *err = fail(c, "EVALSHA");
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        *err = error_reply(c, r, "EVALSHA");
        return NULL;
    }
    return r;
}

int store_script_sha(struct store *st, enum store_script s, char out[STORE_SHA_LEN + 1])
{
    if (!atomic_load(&st->sha_loaded))
        return -ENOENT;
    pthread_mutex_lock(&st->lock);
    memcpy(out, st->sha[s], SHA_LEN + 1);
    pthread_mutex_unlock(&st->lock);
    return 0;
}

const char *store_script_body(enum store_script s)
{
    return script_body[s];
}

redisContext *store_dial(struct store *st, int *err)
{
    pthread_mutex_lock(&st->lock);
    int down = util_now_ms() < st->down_until_ms;
    pthread_mutex_unlock(&st->lock);
    if (down) {
        atomic_fetch_add(&st->errors, 1);
        *err = -ECONNREFUSED;
        return NULL;
    }
    redisContext *ctx = NULL;
    int rc = dial(st, &ctx);
    pthread_mutex_lock(&st->lock);
    dialled(st, rc);
    pthread_mutex_unlock(&st->lock);
    *err = rc;
    return ctx;
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

/* The probe's own connection waits this long for Redis: a write pause (a failover) holds it,
 * and /readyz must answer within a load balancer's timeout (often 1 s) all the same. */
#define PROBE_TIMEOUT_MS 250

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

int store_write_probe(struct store *st)
{
    /* a connection of its own, dropped after: a pool connection would wait for a free slot,
     * and a timed-out probe would make the pool fail fast for the writes behind it */
    int rc = 0;
    redisContext *ctx = store_dial(st, &rc);
    if (!ctx)
        return rc;
    redisReply *r = NULL;
    char sha[SHA_LEN + 1];
    if (redisSetTimeout(ctx, ms_to_tv(PROBE_TIMEOUT_MS)) != REDIS_OK) {
        redisFree(ctx);
        return -EIO;
    }
    if (store_script_sha(st, STORE_SCRIPT_WRITE_PROBE, sha) == 0) {
        const char *argv[] = {"EVALSHA", sha, "0"};
        r = redisCommandArgv(ctx, 3, argv, NULL);
    }
    if (!r || is_noscript(r)) { /* not loaded yet, or flushed: EVAL of the body (tiny) */
        freeReplyObject(r);
        const char *argv[] = {"EVAL", script_body[STORE_SCRIPT_WRITE_PROBE], "0"};
        r = ctx->err ? NULL : redisCommandArgv(ctx, 3, argv, NULL);
    }
    rc = !r ? ctx_errno(ctx) : r->type == REDIS_REPLY_ERROR ? store_error_errno(r->str) : 0;
    freeReplyObject(r);
    redisFree(ctx);
    store_note_write(rc);
    return rc;
}

void store_pool_stats(struct store *st, struct metrics_pool *out)
{
    out->round_trips = atomic_load_explicit(&st->round_trips, memory_order_relaxed);
    out->commands = atomic_load_explicit(&st->commands, memory_order_relaxed);
    out->busy = out->idle = out->closed = 0;
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->pool_size; i++) {
        const struct store_conn *c = &st->conns[i];
        if (c->busy)
            out->busy++;
        else if (c->ctx)
            out->idle++;
        else
            out->closed++;
    }
    pthread_mutex_unlock(&st->lock);
}

int store_ping(struct store *st)
{
    int err = 0;
    struct store_conn *c = store_acquire(st, &err);
    if (!c)
        return err;
    const char *argv[] = {"PING"};
    redisReply *r = store_command(c, 1, argv, NULL, &err);
    freeReplyObject(r);
    store_release(st, c);
    return r ? 0 : err;
}
