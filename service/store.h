/*
 * store.h -- where Redis is and how to reach it: the dial, the scripts by SHA, fault mapping.
 *
 * The blocking half of the store, kept for the one thing that blocks: a dial (connect, AUTH,
 * SELECT and, on a store's first dial, SCRIPT LOAD of every script) runs on a short-lived helper
 * thread of the event loop that asked for it (store_async.h) and never on an event thread; the
 * connection is then handed to the loop, which makes it non-blocking. Requests never use a
 * blocking connection: there is no pool. Dialling backs off (50 ms, then 100 ms) store-wide after
 * a failure, so while Redis is down a dial fails in microseconds with -ECONNREFUSED instead of
 * each waiting for a connect timeout, and a probe goes through at least every 100 ms: the 503s
 * stop within about 100 ms of Redis answering again.
 *
 * Scripts are sent with EVALSHA (store_async.h); the SHAs come from SCRIPT LOAD on the store's
 * first dial. A NOSCRIPT reply (SCRIPT FLUSH, a restarted or failed-over Redis) is answered with
 * EVAL of the full body, which also reloads the script for the next call.
 *
 * Errors (negative errno), as the event loops' connections report them to their callers:
 *   -ECONNREFUSED  Redis unreachable now (dial failed, or inside the back-off window)
 *   -ETIMEDOUT     Redis did not answer in time
 *   -ETIME         a write was sent and not answered in time: it may have run
 *   -ECONNRESET    the connection failed (EOF, reset, killed) AFTER the command was sent: it may
 *                  have run (a write's outcome is unknown; never report it as safe to retry)
 *   -EDQUOT        Redis refused a write with OOM (maxmemory reached, noeviction)
 *   -EROFS         Redis answered READONLY: it is a replica now (the primary changed)
 *   -EIO           I/O or protocol error, or another Redis error reply (LOADING, BUSY...)
 *   -ENOMEM        out of memory
 * http.c's errno table (http_errno_rows) gives each its status: 503 for the faults, 507 for
 * -EDQUOT, 500 for -ENOMEM.
 *
 * Thread-safe.
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
    int timeout_ms;         /**< per command (and each set-up command of a dial), > 0 */
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
    STORE_SCRIPT_AROUND_SCORE,  /**< lua/around_score.lua: a page centred on a score */
    STORE_SCRIPT_LOOKUP,        /**< lua/lookup.lua: many members of one board */
    STORE_SCRIPT_PERCENTILE,    /**< lua/percentile.lua: the member at a percentile */
    STORE_SCRIPT_TOP,           /**< lua/top.lua: the first members up to a percent */
    STORE_SCRIPT_MEMBER_BOARDS, /**< lua/member_boards.lua: one member on several boards */
    STORE_SCRIPT_COUNT
};

struct store;

/** A new store (no connection is made yet). Returns NULL on ENOMEM. Free with store_free. */
struct store *store_new(const struct store_config *cfg);

/** Free the store. NULL is a no-op. No dial of it may be running. */
void store_free(struct store *st);

/**
 * A new connection (the event loops' connections, store_async.h): connect timeout, AUTH, SELECT,
 * command timeouts, and on the store's first successful dial SCRIPT LOAD of every script; the
 * store's dial back-off applies: inside the back-off window it fails at once. May block up to the
 * connect timeout plus the set-up commands: never call it on an HTTP event thread. Returns the
 * context (the caller owns it and frees it with redisFree) or NULL with *err set.
 */
redisContext *store_dial(struct store *st, int *err);

#define STORE_SHA_LEN 40

/** The errno of a Redis error reply's text: -EDQUOT (OOM), -EROFS (READONLY), else -EIO. */
int store_error_errno(const char *msg);

/** The SHA1 of a script as SCRIPT LOAD returned it on this store's first dial: 0 and out (40
 *  hex digits and a NUL), or -ENOENT before any dial loaded the scripts. */
int store_script_sha(struct store *st, enum store_script s, char out[STORE_SHA_LEN + 1]);

/** A script's body (for EVAL; compiled in, static). */
const char *store_script_body(enum store_script s);

/** The per-command timeout in milliseconds (store_config.timeout_ms). */
int store_timeout_ms(const struct store *st);

/** Count and log a fault seen on a connection of this store (store_dial's). */
void store_note_fault(struct store *st, const char *what, const char *detail);

/** Count of Redis faults (dial, I/O, timeouts, error replies) since start, for /metrics. */
unsigned long store_error_count(const struct store *st);

/**
 * Note how Redis answered a write that can grow memory (write.lua, create_board.lua, the write
 * probe of /readyz): rc 0 accepted, -EDQUOT refused for memory, -EROFS refused as a replica;
 * other codes (faults, timeouts: no answer) are ignored. Process-wide, lock-free, any thread.
 */
void store_note_write(int rc);

/** The latest noted answer: 0, -EDQUOT or -EROFS (0 before any), for /metrics: it costs no
 *  Redis call, so /metrics stays instant while Redis is slow. */
int store_write_refusal(void);

#endif
