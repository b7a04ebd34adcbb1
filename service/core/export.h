/*
 * export.h -- a board's whole set as a point-in-time snapshot, read back in rank chunks: the
 * model side of GET /boards/{board}/export (handlers_export.h streams it as NDJSON).
 *
 * The snapshot is taken without blocking Redis and while writes go on (lua/export.lua has the
 * proof): the set is copied in order, in chunks of EXPORT_COPY_CHUNK members, into a temporary set
 * P:{board}:export:<token>:rows, each chunk one short export.lua call, while every script that
 * changes a member of the set (write.lua, delete_member.lua, trim.lua, compact.lua, through
 * lua/prelude_export.lua) adds that member's value before its first change to the snapshot;
 * so the copy ends holding the set exactly as it was when the export started, however members
 * moved, arrived or left meanwhile. Then the rows are read in chunks of EXPORT_READ_CHUNK
 * (ZRANGE of the snapshot, which nothing changes any more, and HMGET of their records as they
 * are then: records are shared by boards, not part of one; on a board with track_updated_at an
 * HMGET of their updated_at times too, in the same round trip and as they are then, so a row
 * whose score changed after the export began carries the snapshot's score with the later
 * time), ranks 1..N, each row once. A reset, a
 * delete or a layout change of the board during the copy, or the sweep of the period's set,
 * interrupts it (-ESTALE): there is nothing consistent to export. The temporary keys carry
 * EXPORT_TTL_MS as a safety net (renewed by each call) and are unlinked at the end
 * (export_release).
 *
 * Costs, in Redis: a copy call is O(log N + EXPORT_COPY_CHUNK), a read O(log N +
 * EXPORT_READ_CHUNK) in two plain commands (measured on a 1M-member board:
 * bench/results/export-1m.md); the snapshot takes as much memory as the set while it lives.
 * In rankd: one chunk at a time.
 *
 * Everything runs on one event loop's connection (store_async.h), without waiting; callbacks are
 * called once, later, on that loop's thread. Errors are negative errno: -ENOENT (no such board),
 * -ESTALE (interrupted), the store_async.h codes, -EIO (an error reply), -ENOMEM.
 */
#ifndef RANKD_EXPORT_H
#define RANKD_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"

#define EXPORT_COPY_CHUNK 100 /**< ranks copied per export.lua call */
#define EXPORT_READ_CHUNK                                                                          \
    500 /**< rows read per ZRANGE (then one HMGET of their records, and of their times on a board
         *   with track_updated_at) */
#define EXPORT_LEASE_MS                                                                            \
    30000                          /**< an export's listing lapses this long after its last copy   \
                                    *   call (a process that died stops costing writers) */
#define EXPORT_TTL_MS (600 * 1000) /**< the temporary keys' TTL, renewed by every call */
#define EXPORT_KEY_MAX 256

/** One export: the caller fills the first block (borrowed until export_release). */
struct export_job {
    struct store_async *conn;   /**< the loop's write connection (borrowed) */
    const char *board;          /**< the board name */
    struct board_where where;   /**< the set (board_where_settled or board_where_cached) */
    struct score_layout layout; /**< the board's layout, to decode scores */
    int track_updated_at;       /**< 1: the rows carry their updated_at (settings) */
    int call_timeout_ms;        /**< each call's time from its send (0: the store's timeout) */
    void (*done)(struct export_job *j, int rc); /**< the snapshot is taken (rc 0) or failed */
    int64_t total;                              /**< out, with rc 0: rows in the snapshot */
    /* private */
    struct board_model *m;
    char token[24], gen[32], size0[24];
    char keys[6][EXPORT_KEY_MAX]; /* the set, settings, rows, moves, records, updated_at */
    char edge[40]; /* the stored value the copy has reached ("" before its first chunk) */
    int64_t off;   /* members of that value it has taken */
};

/** Register export.lua with the store (once per process, before the stores dial). */
void export_scripts_register(void);

/** Take the snapshot: export.lua's start, then its copy calls one after the other. Returns 0
 *  (done will be called) or a negative errno with nothing sent. */
int export_snapshot(struct board_model *m, struct export_job *j);

/** What a HEAD asks: the rows a snapshot taken now would hold, without taking it: one ZCARD of
 *  the set (j->where), then done(j, rc) with j->total. No key is made (export_release is a
 *  no-op after it). Returns 0 (done will be called) or a negative errno with nothing sent. */
int export_count(struct board_model *m, struct export_job *j);

/** Rows from..from+n of the snapshot, rank from+1 first: items[0..n) (strings borrowed for the
 *  call; n 0 past the end; updated_at -1 unless j->track_updated_at), or rc < 0. */
typedef void (*export_rows_fn)(void *arg, int rc, const struct board_item *items, size_t n);

/** Read up to `count` (<= EXPORT_READ_CHUNK) rows from rank `from` (0-based) of a snapshot
 *  export_snapshot took. Returns 0 (fn will be called) or a negative errno with nothing sent. */
int export_read(struct export_job *j, int64_t from, int count, export_rows_fn fn, void *arg);

/** Remove the snapshot's keys (one UNLINK behind whatever the connection sends; nothing waits
 *  for them). Once the job is no longer needed; safe after a failed snapshot. */
void export_release(struct export_job *j);

#endif
