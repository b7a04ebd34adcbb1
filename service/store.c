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
#include "store_internal.h"
#include "util.h"

/* The registered scripts (store.h), process-wide: appended under registry.lock, never removed;
 * `count` is published once the entry is complete, so readers need no lock. A script's index
 * in it is its slot in every store's SHA table. */
struct store_script {
    const char *body;
    int index;
};

static struct {
    pthread_mutex_t lock;
    struct store_script s[STORE_SCRIPTS_MAX];
    atomic_int count;
} registry = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 100 /* store.h: a probe at least this often after a fault */
#define SHA_LEN STORE_SHA_LEN

struct store {
    char *host, *unix_path, *username, *password;
    int port, db, timeout_ms, connect_timeout_ms;
    pthread_mutex_t lock;
    int64_t down_until_ms; /**< no dialling before this (monotonic ms); under lock */
    int backoff_ms;        /**< next back-off step; under lock */
    char sha[STORE_SCRIPTS_MAX][SHA_LEN + 1]; /**< [0, loaded) set, then never written again */
    atomic_int loaded; /**< registered scripts [0, loaded) have their SHA in sha */
    atomic_ulong errors;
};

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
    st->timeout_ms = cfg->timeout_ms;
    st->connect_timeout_ms = cfg->connect_timeout_ms;
    st->backoff_ms = BACKOFF_MIN_MS;
    return st;
}

void store_free(struct store *st)
{
    if (!st)
        return;
    pthread_mutex_destroy(&st->lock);
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

const struct store_script *store_script_register(const char *body)
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
        registry.s[n] = (struct store_script){.body = body, .index = n};
        found = &registry.s[n];
        atomic_store(&registry.count, n + 1); /* published complete */
    }
    pthread_mutex_unlock(&registry.lock);
    assert(found && "STORE_SCRIPTS_MAX is too small");
    return found;
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

/* SCRIPT LOAD of every script registered since this store's last load. A dial racing this one
 * may load the same ones: only the entries past `loaded` are written, once each. */
static int load_scripts(struct store *st, redisContext *ctx)
{
    int from = atomic_load(&st->loaded), to = atomic_load(&registry.count);
    if (from >= to)
        return 0;
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
    if (at < to) {
        memcpy(st->sha[at], sha[at], (size_t)(to - at) * sizeof(sha[0]));
        atomic_store_explicit(&st->loaded, to, memory_order_release);
    }
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
    ctx->reader->fn = store_reply_functions(); /* replies are store_reply from the first one */
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
