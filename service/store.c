/* store.c -- the dial, script bodies and SHAs, fault mapping; the contract is in store.h. */
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
    ,
#include "lua/around_score.lua.h"
    ,
#include "lua/lookup.lua.h"
    ,
#include "lua/percentile.lua.h"
    ,
#include "lua/top.lua.h"
    ,
#include "lua/member_boards.lua.h"
};

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 100 /* store.h: a probe at least this often after a fault */
#define SHA_LEN STORE_SHA_LEN

struct store {
    char *host, *unix_path, *username, *password;
    int port, db, timeout_ms, connect_timeout_ms;
    pthread_mutex_t lock;
    int64_t down_until_ms; /**< no dialling before this (monotonic ms); under lock */
    int backoff_ms;        /**< next back-off step; under lock */
    char sha[STORE_SCRIPT_COUNT][SHA_LEN + 1]; /**< filled by the first successful load */
    atomic_int sha_loaded;
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

int store_error_errno(const char *msg)
{
    if (msg && strncmp(msg, "OOM", 3) == 0)
        return -EDQUOT; /* maxmemory reached: writes refused until memory is freed */
    if (msg && strncmp(msg, "READONLY", 8) == 0)
        return -EROFS; /* a replica now: the primary changed (a failover) */
    return -EIO;
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
