/*
 * board_ctl.h -- the model's control operations (board.h's family): put, delete, reset, trim,
 * member delete, list, records, each a chain of calls on an event loop (board_ctl_submit).
 * Include board.h.
 */
#ifndef RANKD_BOARD_CTL_H
#define RANKD_BOARD_CTL_H

#include "board.h"

/**
 * The control operations on an event loop, each a chain of short non-blocking calls, reads on the
 * loop's `reads` connection and writes on `writes`; each reply starts the next call, so nothing
 * waits. Every operation on a board starts with one HGETALL of its settings (remembered as the
 * board's view) and fails with -ENOENT when it does not exist (PUT creates it):
 *   BOARD_CTL_INFO           settings and total: ZCARD of the current set   out: info
 *   BOARD_CTL_PUT            create (create_board.lua: refused at maxmemory, -EDQUOT) or
 *                            update (put_board.lua: allowed at maxmemory); the settings are read
 *                            again and the script sent again when the board appeared, went or
 *                            changed under it (-EAGAIN after WRITE_RETRIES)   in: patch;
 *                            out: created (1: a new board), info; -EEXIST with field naming the
 *                            setting when order, tiebreak, score_decimals, period or timezone
 *                            would change while the current set or a past period's set that
 *                            stays readable (under the new retain) has members. A layout change
 *                            UNLINKs every set of the board; a retain change UNLINKs the sets of
 *                            the periods only one of the two retains shows (so a period that
 *                            stopped being readable never comes back); put_board.lua also sweeps
 *                            one chunk of the index's unreadable sets. schema/redis-keys.md
 *   BOARD_CTL_DELETE         UNLINK of its keys (board_owned_keys: the settings, the set, the
 *                            readable periods' sets, every set its period index lists, and the
 *                            index; the other kinds become unreachable: board_key_specs) and
 *                            removal from the registry, in one short script (delete_board.lua)
 *   BOARD_CTL_RESET          empty the current period (or the board) at once: UNLINK of its set
 *                            and a new generation (reset_board.lua), so no cached page of it is
 *                            served again
 *   BOARD_CTL_TRIM           remove the tail of the current period (or the board) in trim.lua
 *                            chunks of 250, one after the other (other clients run between
 *                            them): with keep >= 0 every member ranked below `keep`; else every
 *                            member whose score is worse than below_key (an order key from
 *                            board_check_score: a desc board removes scores below it, an asc
 *                            board scores above it)   in: keep, below_key; out: removed
 *   BOARD_CTL_MEMBER_DELETE  remove member `id` from the current period (or the board):
 *                            delete_member.lua, allowed at maxmemory; -ENODATA: no such member
 *   BOARD_CTL_LIST           about `count` boards (1..BOARD_LIST_COUNT_MAX) from registry cursor
 *                            `cursor` (0: the start), with totals: SSCAN calls of COUNT <= count
 *                            until `count` names or the end, then each board's period settings
 *                            (HMGET) and ZCARD, pipelined. Redis may return a board on two pages
 *                            (SSCAN's guarantee: every board present for the whole scan is
 *                            returned at least once)   out: list (the caller's after rc 0:
 *                            board_list_free)
 *   BOARD_CTL_RECORD_GET     HGET of record `id`   out: record (a new string, free()); -ENODATA
 *   BOARD_CTL_RECORD_PUT     HSET of record `id` (json: an object, already validated)
 *   BOARD_CTL_RECORD_DELETE  HDEL of record `id`; -ENODATA when there was none
 * The caller fills the inputs (borrowed until done), deadline_ms and done; done(job, rc) is
 * called once, later, on the loop's thread, with rc 0, an error above, a period error of
 * board_where_cached, or: -ETIME for a write written and not answered (-ETIMEDOUT, -ECONNRESET:
 * it may have run), the code of a call never written (-ECONNREFUSED, -ETIMEDOUT, -EIO: nothing
 * of it ran), and store_reply_errno's for a Redis error reply (-EDQUOT, -EROFS, -EIO). A read
 * cut by a lost connection is sent once more while the deadline allows. Every call has
 * deadline_ms, except trim's chunks: each has chunk_timeout_ms from its own send (0: the store's
 * command timeout), since a trim's work grows with what it removes, like an upload's.
 */
enum board_ctl {
    BOARD_CTL_INFO = 0,
    BOARD_CTL_PUT,
    BOARD_CTL_DELETE,
    BOARD_CTL_RESET,
    BOARD_CTL_TRIM,
    BOARD_CTL_MEMBER_DELETE,
    BOARD_CTL_LIST,
    BOARD_CTL_RECORD_GET,
    BOARD_CTL_RECORD_PUT,
    BOARD_CTL_RECORD_DELETE,
};

struct board_ctl_job {
    /* in */
    const char *board; /**< every board operation */
    const char *id;    /**< member delete and records: id_len bytes */
    size_t id_len;
    const struct board_settings_patch *patch; /**< put */
    int64_t keep, below_key;                  /**< trim, as board_trim */
    const char *json;                         /**< record put: json_len bytes */
    size_t json_len;
    uint64_t cursor;      /**< list: registry cursor (0: the start) */
    int count;            /**< list: boards wanted */
    int64_t deadline_ms;  /**< monotonic, for every call (0: the store's timeout) */
    int chunk_timeout_ms; /**< trim: each chunk's time from its send */
    void (*done)(struct board_ctl_job *job, int rc);
    void *arg; /**< the caller's */
    /* out */
    struct board_info info;
    int created;
    const char *field;
    int64_t removed;
    struct board_list *list;
    char *record;
    /* private */
    enum board_ctl op;
    struct board_model *m;
    struct store_async *reads, *writes;
    void *state;
    void (*then)(struct board_ctl_job *j);
    int (*again)(struct board_ctl_job *j);
    int resent, outstanding, failed, batch_write, batch_at;
    int attempts; /* put: scripts sent (again when the board changed under one) */
    void (*batch_take)(struct board_ctl_job *j, int i, const struct store_reply *r);
    void (*batch_after)(struct board_ctl_job *j);
    struct board_settings cur;
    int exists;
    struct board_where w;
    int unconfirmed; /* --write-replicas: a write step is not confirmed: no 2xx (-EREMOTEIO) */
};

/** Start operation `op`. Returns 0 (done will be called), or a negative errno with nothing sent
 *  and done not called: -ECONNREFUSED (no connection can be had now), -ETIMEDOUT (Redis is not
 *  answering), -ENOMEM. */
int board_ctl_submit(struct board_model *m, struct store_async *reads, struct store_async *writes,
                     enum board_ctl op, struct board_ctl_job *job);

#endif
