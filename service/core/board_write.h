/*
 * board_write.h -- the model's writes (board.h's family): write.lua's jobs on an event loop
 * (board_write_submit) and the settings read before them (board_settings_submit). Include
 * board.h.
 */
#ifndef RANKD_BOARD_WRITE_H
#define RANKD_BOARD_WRITE_H

#include "board.h"

enum board_write_flags {
    BOARD_WRITE_RANKS = 1,  /**< fill outcomes[].rank */
    BOARD_WRITE_ATOMIC = 2, /**< all or nothing: an entry whose result would leave the range, or
                             *   a full tie group, refuses the whole call (a group is compacted
                             *   and the call sent again) */
    BOARD_WRITE_PREV = 4,   /**< fill outcomes[].has_prev, prev_score, prev_rank */
    BOARD_WRITE_CREATE = 8, /**< a board that does not exist is created with `assumed` (which
                             *   must be the defaults); without it a missing board is -ENOENT */
    BOARD_WRITE_BRIEF = 16, /**< fill outcomes[].rc only (score, rank, updated, prev left 0):
                             *   Redis returns only the entries refused alone. Ignored with
                             *   BOARD_WRITE_RANKS or a digest (an upload's chunks use it) */
};

#define BOARD_WRITE_BOARDS_MAX 20 /**< boards of one write (POST /scores) */
#define BOARD_IDEM_KEY_MAX 128    /**< bytes of an Idempotency-Key */
#define BOARD_IDEM_TTL_MS                                                                          \
    INT64_C(86400000)       /**< how long a write's reply is kept for its replays                  \
                             */
#define BOARD_DIGEST_LEN 64 /**< hex characters of a request digest (SHA-256) */
#define BOARD_UPLOAD_SEQ_TTL_MS                                                                    \
    INT64_C(600000) /**< how long an upload's sequence key outlives its last chunk written */
#define BOARD_UPLOAD_TOKEN_MAX 33 /**< bytes of an upload's token (32 hex digits), with the NUL */

/**
 * What an upload's chunks sent in write.lua's short layout assumed of the board's tie groups:
 * the keys the last such chunk wrote, each with the tie its key's next arrival takes once that
 * chunk is applied whole. Only a guess: write.lua checks every assumption, and a wrong one costs
 * that chunk the general layout's work (then `off` is set, and the upload's later chunks go in
 * the general layout). Zero it before the upload's first chunk.
 */
#define BOARD_WRITE_TIES_MAX BOARD_BATCH_MAX
struct board_write_ties {
    int off;  /**< a chunk's short layout lapsed: send the next ones in the general layout */
    size_t n; /**< keys below */
    int64_t key[BOARD_WRITE_TIES_MAX];
    int64_t next[BOARD_WRITE_TIES_MAX];
};

/** One board of a write: the same entries (ids, ops, records) with this board's keys. */
struct board_write_target {
    const char *board;                 /**< borrowed until done */
    struct board_settings assumed;     /**< what the keys were made with */
    const struct board_entry *entries; /**< n: the job's entries under this board's layout; ids,
                                        *   ops and records are those of targets[0] */
    struct board_outcome *outcomes;    /**< n, filled for entries[0..handled) */
    int64_t version;                   /**< out: the board's write counter after the write */
    int64_t trimmed;                   /**< out: members max_members removed */
    /* private */
    struct board_where where;
};

/**
 * A score write on an event loop: n (<= BOARD_BATCH_MAX) entries applied in order to each of
 * ntargets (1..BOARD_WRITE_BOARDS_MAX) boards in one write.lua call (one entry to one board of
 * the common kind: write_one.lua, the same effects and outcome: board_write_short.c), and
 * compact.lua chunks for a full tie group (then the write is sent again or resumes), as a chain
 * of non-blocking script calls on `conn`. The caller fills the first block (borrowed until done) and calls
 * board_write_submit; done(job, rc) is called once, later, on the loop's thread. job->handled is
 * always set: entries[0..handled) were applied (or, without BOARD_WRITE_ATOMIC, refused alone
 * for range) on every target and their outcomes are filled; nothing after them was written.
 * With BOARD_WRITE_ATOMIC, handled is 0 or n. rc 0 (then handled == n); -ERANGE with
 * BOARD_WRITE_ATOMIC: entry `handled` would leave the range of target `target`, nothing written;
 * -EAGAIN when target `target`'s settings no longer match `assumed` or it was deleted (re-read,
 * re-validate, resume at `handled`); -ENOENT without BOARD_WRITE_CREATE: target `target` does
 * not exist, nothing written; -EKEYREJECTED: with a digest, the Idempotency-Key's record holds
 * another request, nothing written; -EALREADY: a chunk of an upload sent with upload_after whose
 * predecessor is not applied in full (yet, or ever), nothing written; -ENOSPC when a group of equal scores is truly full; -ETIME
 * when a step was written to Redis and not answered (-ETIMEDOUT, -ECONNRESET), or any fault
 * after entries were applied: the outcome is unknown, never "not written"; -EREMOTEIO with
 * --write-replicas (store.h) when every entry was handled (handled == n) and a call that wrote
 * them, or a record or registry write after it on a cluster, is not confirmed on the replicas:
 * applied on the primary, a failover could lose it (a call that wrote nothing keeps its own
 * code: a 422 stays a 422); else the store_async.h code of a step never written.
 *
 * Idempotency (digest set, with BOARD_WRITE_ATOMIC): the call that applies the write stores its
 * results in each target's record P:{board}:idem:<idem_key> with the digest, for
 * BOARD_IDEM_TTL_MS, in the same script; a later call with the same key and digest writes
 * nothing and gets those results back (replayed 1, outcomes and versions as the first time).
 * A record belongs to its board's life (the settings' `life`: set at creation and by a layout
 * change, not by a reset): after a delete or a layout change the key is a new request on that
 * board; each target is judged alone (replayed is 1 only when every target replays).
 *
 * An NDJSON upload's chunks (upload set, one target, no digest; not on a Redis Cluster) carry the
 * upload's sequence: chunk upload_chunk (0, 1, ...) of the upload `upload` (a token unique to
 * it). The call that handles all of a chunk's entries sets the board's sequence key
 * P:{board}:upload:<token> (BOARD_UPLOAD_SEQ_TTL_MS) to upload_chunk + 1 as its last command;
 * with upload_after, a call whose key does not hold upload_chunk writes nothing (-EALREADY), so a
 * chunk sent while the one before it is still in flight is applied only if that one was applied
 * whole: a failed chunk stops the next one inside Redis.
 *
 * A write that began a period (write.lua listed its set in the period index) is followed by the
 * sweep of the periods no longer readable: sweep.lua chunks on `conn`, behind the reply, which
 * nothing waits for (board.c).
 */
struct board_write_job {
    struct board_write_target *targets; /**< ntargets, borrowed until done */
    size_t ntargets;
    size_t n;
    int flags;            /**< enum board_write_flags */
    const char *idem_key; /**< the Idempotency-Key (idem_len bytes), or NULL */
    size_t idem_len;
    const char *digest;   /**< BOARD_DIGEST_LEN hex characters with idem_key, else NULL */
    int64_t deadline_ms;  /**< monotonic, for every call (0: the store's timeout) */
    const char *upload;   /**< an upload's token ([0-9a-f], < BOARD_UPLOAD_TOKEN_MAX), or NULL */
    int64_t upload_chunk; /**< with upload: this chunk's number in the upload, from 0 */
    int upload_after;     /**< with upload: refused unless chunk upload_chunk - 1 is applied */
    /** with upload (or NULL): a chunk of `set` entries, each id once, every key in range, on a
     *  board without sub-scores or the wide layout (tiebreak first or last), goes in write.lua's
     *  short layout: its stored values numbered here (fewer arguments, no Lua work per entry) */
    struct board_write_ties *ties;
    void (*done)(struct board_write_job *job, int rc);
    size_t handled;
    size_t target; /**< out: the target an -ERANGE, -EAGAIN or -ENOENT is about */
    int replayed;  /**< out: 1 when the results are a stored first write's */
    /* private */
    struct board_model *m;
    struct store_async *conn;
    size_t at;
    int stalls;
    int listed[BOARD_WRITE_BOARDS_MAX]; /* a call listed a new period set: sweep when done */
    int64_t compacted;
    size_t full_target;
    char full_key[32];
    /* a cluster: the registry has the board (this job added it), and what a write.lua reply
     * said while its records are written (records.h) */
    int registered;
    int then_rc, then_full;
    size_t then_done;
    struct records_entry *recs;
    int unconfirmed; /* --write-replicas: a step that wrote is not confirmed on the replicas */
    int no_short;    /* write_one.lua answered "not this script's board": write.lua from now */
    int sent_short;  /* the call in flight is write_one.lua's (board_write_short_take reads it) */
};

/** Returns 0 (done will be called), or a negative errno with nothing sent and done not called:
 *  -ECONNREFUSED no connection can be had now, -ETIMEDOUT Redis is not answering (503), -EAGAIN
 *  no entries, -EINVAL no target or too many, -EXDEV more than one target on a Redis Cluster
 *  (its scripts run on one slot; each board is in a slot of its own), -ENOMEM. On a cluster the
 *  records are written after write.lua, and a board the process believes new is added to the
 *  registry first (records.h, schema/redis-keys.md). */
int board_write_submit(struct board_model *m, struct store_async *conn,
                       struct board_write_job *job);

/** A read of a board's settings hash on an event loop (HGETALL; remembered as the view). done
 *  gets rc 0 with settings and exists, or a negative errno (a read: never -ETIME; one cut by a
 *  lost connection is sent once more while the deadline allows). */
struct board_settings_job {
    const char *board;   /**< borrowed until done */
    int64_t deadline_ms; /**< monotonic, 0: the store's timeout */
    void (*done)(struct board_settings_job *job, int rc);
    struct board_settings settings;
    int exists;
    struct board_model *m;
    struct store_async *conn;
    int resent;
};

/** Returns 0 (done will be called) or a negative errno as board_write_submit. */
int board_settings_submit(struct board_model *m, struct store_async *conn,
                          struct board_settings_job *job);

#endif
