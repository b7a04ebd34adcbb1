/*
 * store.h -- the Redis store: a small pool of hiredis connections, scripts by SHA, fault mapping.
 *
 * The only user of hiredis. A redisContext is not thread-safe and is unusable after any error
 * (hiredis README), so each connection is borrowed by one request at a time
 * (store_acquire/store_release) and a connection that saw an error is freed and re-dialled on its
 * next use. Dialling backs off (50 ms, then 100 ms) pool-wide after a failure, so while Redis is
 * down every request fails in microseconds with -ECONNREFUSED instead of each waiting for a
 * connect timeout, and a probe goes through at least every 100 ms: the 503s stop within about
 * 100 ms of Redis answering again. Every command has a timeout (socket SO_RCVTIMEO/SO_SNDTIMEO).
 *
 * Scripts are sent with EVALSHA; the SHAs come from SCRIPT LOAD on the first connection. A NOSCRIPT
 * reply (SCRIPT FLUSH, a restarted or failed-over Redis) is answered with EVAL of the full body,
 * which also reloads the script for the next call.
 *
 * Errors (negative errno, for every function below that returns int or takes `int *err`):
 *   -ECONNREFUSED  Redis unreachable now (dial failed, or inside the back-off window)
 *   -ETIMEDOUT     no pool connection free within the timeout, Redis did not answer in time
 *                  before the command was fully sent, or Redis timed out moments ago (after a
 *                  timeout the pool fails fast for a window of 50 ms, then 100 ms, reset by
 *                  the next answer)
 *   -ETIME         Redis did not answer in time AFTER the command was sent: it may have run
 *   -ECONNRESET    the connection failed (EOF, reset, killed) AFTER the command was sent: it may
 *                  have run (a write's outcome is unknown; never report it as safe to retry)
 *   -EDQUOT        Redis refused a write with OOM (maxmemory reached, noeviction)
 *   -EROFS         Redis answered READONLY: it is a replica now (the primary changed)
 *   -EIO           I/O or protocol error, or another Redis error reply (LOADING, BUSY...)
 *   -ENOMEM        out of memory
 * http.c's errno table (http_errno_rows) gives each its status: 503 for the faults, 507 for
 * -EDQUOT, 500 for -ENOMEM.
 *
 * Thread-safety: store_* functions are thread-safe; a struct store_conn is used by one thread
 * between acquire and release.
 */
#ifndef RANKD_STORE_H
#define RANKD_STORE_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/** Where Redis is and how to talk to it. Strings are borrowed for store_new only (copied). */
struct store_config {
    const char *host;       /**< TCP host, or NULL when unix_path is set */
    int port;               /**< TCP port */
    const char *unix_path;  /**< unix socket path, or NULL */
    const char *username;   /**< ACL user for AUTH, or NULL */
    const char *password;   /**< AUTH password, or NULL */
    int db;                 /**< SELECT index, 0..  */
    int pool_size;          /**< connections, >= 1 */
    int timeout_ms;         /**< per command and per pool wait, > 0 */
    int connect_timeout_ms; /**< per dial, > 0 */
};

/** Scripts the store knows (bodies in service/lua/, compiled in). */
enum store_script {
    STORE_SCRIPT_WRITE = 0,     /**< lua/write.lua: one score write */
    STORE_SCRIPT_COMPACT,       /**< lua/compact.lua: renumber one tie group, one chunk */
    STORE_SCRIPT_PAGE,          /**< lua/page.lua: settings + total + one page + records */
    STORE_SCRIPT_MEMBER,        /**< lua/member.lua: settings + one member + its record */
    STORE_SCRIPT_AROUND,        /**< lua/around.lua: a page centred on a member */
    STORE_SCRIPT_PUT_BOARD,     /**< lua/put_board.lua: create or update settings */
    STORE_SCRIPT_LOCK_RELEASE,  /**< lua/lock_release.lua: compare-and-delete of a lock */
    STORE_SCRIPT_RESET_BOARD,   /**< lua/reset_board.lua: empty the current period */
    STORE_SCRIPT_DELETE_BOARD,  /**< lua/delete_board.lua: UNLINK a board's keys */
    STORE_SCRIPT_TRIM,          /**< lua/trim.lua: remove one chunk of a board's tail */
    STORE_SCRIPT_PAGE_FILL,     /**< lua/page_fill.lua: a miss: cached page, or lock + rows */
    STORE_SCRIPT_CREATE_BOARD,  /**< lua/create_board.lua: a new board's settings */
    STORE_SCRIPT_SWEEP,         /**< lua/sweep.lua: UNLINK one chunk of unreadable period sets */
    STORE_SCRIPT_WRITE_PROBE,   /**< lua/write_probe.lua: would Redis accept a write now? */
    STORE_SCRIPT_DELETE_MEMBER, /**< lua/delete_member.lua: remove one member */
    STORE_SCRIPT_COUNT
};

struct store;
struct store_conn;

/** A new pool (no connection is made yet). Returns NULL on ENOMEM. Free with store_free. */
struct store *store_new(const struct store_config *cfg);

/** Close every connection and free the pool. NULL is a no-op. No connection may be borrowed. */
void store_free(struct store *st);

/**
 * Borrow a connected connection, dialling if needed. Returns NULL and sets *err on failure.
 * Give it back with store_release, exactly once.
 */
struct store_conn *store_acquire(struct store *st, int *err); /* may block: pool wait + a dial */

/** Return a connection; a connection that saw an error is closed here. NULL is a no-op. */
void store_release(struct store *st, struct store_conn *c);

/**
 * One command. Returns the reply (free with freeReplyObject) or NULL with *err set. A Redis error
 * reply is returned as NULL with -EIO (its text is logged), never as a reply object.
 */
redisReply *store_command(struct store_conn *c, int argc, const char **argv, const size_t *argvlen,
                          int *err);

/**
 * Pipeline: append `n` commands, then read `n` replies into replies[0..n-1]. Each command i is
 * argv[i][0..argc[i]-1]. Returns 0, or a negative errno after which replies[] holds nothing
 * (everything read so far was freed). Error replies are kept as REDIS_REPLY_ERROR objects here:
 * the caller decides per command. Free each reply with freeReplyObject.
 */
int store_pipeline(struct store_conn *c, int n, const int *argc, const char *const *const *argv,
                   const size_t *const *argvlen, redisReply **replies);

/**
 * Run a script: EVALSHA, falling back to EVAL on NOSCRIPT. argv holds keys then args
 * (nkeys + nargs entries). Returns the reply (free with freeReplyObject) or NULL with *err set;
 * a Redis error reply is -EIO.
 */
redisReply *store_script(struct store_conn *c, enum store_script script, int nkeys, int nargs,
                         const char **argv, const size_t *argvlen, int *err);

/**
 * A connection of the caller's own (the event loops' hit connections, store_async.h), dialled as
 * a pool connection is (connect timeout, AUTH, SELECT, command timeouts) and sharing the pool's
 * dial back-off: inside the back-off window it fails at once. May block up to the connect
 * timeout plus the set-up commands: never call it on an HTTP event thread. Returns the context
 * (the caller owns it and frees it with redisFree) or NULL with *err set.
 */
redisContext *store_dial(struct store *st, int *err);

#define STORE_SHA_LEN 40

/** The errno of a Redis error reply's text: -EDQUOT (OOM), -EROFS (READONLY), else -EIO. */
int store_error_errno(const char *msg);

/** The SHA1 of a script as SCRIPT LOAD returned it on this store's first connection: 0 and
 *  out (40 hex digits and a NUL), or -ENOENT before any connection loaded the scripts. */
int store_script_sha(struct store *st, enum store_script s, char out[STORE_SHA_LEN + 1]);

/** A script's body (for EVAL; compiled in, static). */
const char *store_script_body(enum store_script s);

/** The per-command timeout in milliseconds (store_config.timeout_ms). */
int store_timeout_ms(const struct store *st);

/** Count and log a fault seen on a connection the caller owns (store_dial). */
void store_note_fault(struct store *st, const char *what, const char *detail);

/** Count of Redis faults (dial, I/O, timeouts, error replies) since start, for /metrics. */
unsigned long store_error_count(const struct store *st);

struct metrics_pool; /* metrics.h */

/** The pool's round trips and commands since start and its slots now (busy, idle, closed), for
 *  /metrics; out->name is left as it is. Takes the pool's lock briefly. */
void store_pool_stats(struct store *st, struct metrics_pool *out);

/** 0 when a PING succeeds within the timeout, else a negative errno (for /readyz). */
int store_ping(struct store *st);

/**
 * Would Redis accept a write now? One call of lua/write_probe.lua, which writes nothing but is
 * flagged as a writing script without allow-oom, so Redis judges it exactly as it judges
 * write.lua (after evicting what maxmemory-policy allows): 0 yes, -EDQUOT refused for memory
 * (maxmemory), -EROFS refused as a replica, or another store error (-ETIMEDOUT after 250 ms:
 * a write pause holds it). On a connection of its own (store_dial), closed after. Blocks up to
 * the connect timeout plus 250 ms (for /readyz; never on an event thread). Noted as
 * store_note_write does.
 */
int store_write_probe(struct store *st);

/**
 * Note how Redis answered a write that can grow memory (write.lua, create_board.lua, the probe):
 * rc 0 accepted, -EDQUOT refused for memory, -EROFS refused as a replica; other codes (faults,
 * timeouts: no answer) are ignored. Process-wide, lock-free, any thread.
 */
void store_note_write(int rc);

/** The latest noted answer: 0, -EDQUOT or -EROFS (0 before any), for /metrics: it costs no
 *  Redis call, so /metrics stays instant while Redis is slow. */
int store_write_refusal(void);

#endif
