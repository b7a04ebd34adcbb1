/*
 * board.h -- the leaderboard model over Redis sorted sets: boards, members, scores, ranks, pages.
 *
 * No HTTP and no JSON parsing here: callers hand in validated names and ids; this module turns
 * them into Redis keys and the short scripts and commands of service/lua/, sends them on an event
 * loop's connections (store_async.h) without waiting, and hands back C values. Key schema
 * (schema/redis-keys.md), with P the key prefix: P:{board}:z     sorted set, member = id, score =
 * stored value (score_codec.h), ascending = rank P:{board}:z:<period>  the same for one period of a
 * periodic board (period.h), no TTL (board data is never evictable); listed in the period index by
 * the write that creates it P:{board}:periods  sorted set, member = a period set's key, score = its
 * period's start (ms): how the sweep (sweep.lua) finds the sets of periods no longer readable, and
 *                   how a delete or a layout change finds every set, without scanning
 *   P:{board}:dense[:<period>]  sorted set, the distinct keys of the set of the same name (member =
 *                   the key as text, score = the key): dense ranks in O(log N); changed in the same
 *                   script as every change of its set (lua/prelude_dense.lua), listed in the
 *                   period index with it
 *   P:{board}:meta  hash of the board's settings
 *   P:items         hash id -> record JSON (records are shared by boards)
 *   P:boards        set of board names (the registry; never a keyspace scan)
 * The board name sits in a hash tag so all of a board's keys share one cluster slot. Ids are
 * whole members (binary-safe, sent with lengths), never parts of a key, so no id can collide with
 * another id or another board.
 *
 * Ranks are 1-based in every struct below: ordinal positions, or of the rank type a read asked
 * for (rank.h; `ordinal` fields are always positions). Every Redis cost is O(log N + page);
 * board deletion uses UNLINK. Errors are negative errno: -ENOENT board absent, -ENODATA member or
 * record absent, -ENOSYS a dense rank of a set written before rankd kept its distinct scores
 * (it has none until it is reset or emptied), -EAGAIN the board's settings changed under a
 * write (resume), -ESRCH a period
 * that is not (or no longer) readable, -ENOTSUP a period asked of a board without periods,
 * -EINVAL a malformed period id, -EEXIST a layout
 * setting change on a non-empty board, -ERANGE/-EDOM/-EINVAL score validation, and the store.h
 * codes for Redis faults. Out-params are written only on success. Thread-safe.
 */
#ifndef RANKD_BOARD_H
#define RANKD_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "period.h"
#include "rank.h"
#include "records.h"
#include "score_codec.h"
#include "store.h"
#include "store_async.h"
#include "util.h"

#define BOARD_NAME_LEN_MAX 64      /**< bytes, [A-Za-z0-9._-] */
#define BOARD_ID_LEN_MAX 128       /**< bytes of UTF-8 */
#define BOARD_PAGE_SIZE_MAX 100    /**< entries per page */
#define BOARD_PAGE_SIZE_DEFAULT 20 /**< entries per page */
#define BOARD_PAGE_TTL_MS_DEFAULT 1000
#define BOARD_PAGE_TTL_MS_MAX 3600000   /**< one hour */
#define BOARD_RECORD_BYTES_MAX 1024     /**< serialized record JSON */
#define BOARD_BATCH_MAX 1000            /**< entries per write script call */
#define BOARD_MAX_MEMBERS_MAX 100000000 /**< the largest max_members setting */

/** Settings of one board (the meta hash). */
struct board_settings {
    struct score_layout layout; /**< order, tiebreak, decimals */
    enum period_kind period;    /**< none, hourly, daily, weekly, monthly */
    int tz_min;                 /**< UTC offset of the period boundaries, minutes east */
    int retain;                 /**< past periods that stay readable, 0..PERIOD_RETAIN_MAX */
    int page_size;              /**< default entries per page, 1..BOARD_PAGE_SIZE_MAX */
    int page_ttl_ms;            /**< page cache soft TTL, 0 = no caching */
    int64_t gen;                /**< generation (new at create, reset, re-create): part of
                                 *   every page key and ETag; 0 when read from no hash */
    int64_t max_members;        /**< keep the top this many: every write removes the worst
                                 *   members past it (bounded per call); 0 = no limit */
    int64_t version;            /**< the board's write counter (write.lua bumps it once per
                                 *   call); read-only, 0 before the first write */
};

/** Partial settings from a PUT: a field is applied only when its has_ flag is set. */
struct board_settings_patch {
    struct board_settings value;
    int has_order, has_tiebreak, has_decimals, has_page_size, has_page_ttl, has_period, has_tz,
        has_retain, has_max_members;
};

/** Shared state of the model: the store and the key prefix (borrowed; outlive the model). */
struct board_model {
    struct store *store;       /**< where reads' faults are counted (borrowed) */
    struct store *writes;      /**< where writes' faults are counted (borrowed); NULL = store */
    const char *prefix;        /**< key prefix, [A-Za-z0-9._:-]{1,64} */
    int64_t (*clock_ms)(void); /**< wall clock for periods, ms since the epoch; NULL = real */
};

/** Which sorted set a request reads: a board's only set, or one period's. */
struct board_where {
    char z[192];                /**< the sorted-set key */
    char dense[192];            /**< its distinct scores (P:{board}:dense[:<period>]) */
    char period[PERIOD_ID_MAX]; /**< the period id, "" for a board without periods */
    enum period_kind kind;      /**< the board's period settings used to choose it */
    int tz_min;
    int retain;
};

enum board_op { BOARD_OP_SET = 0, BOARD_OP_BEST, BOARD_OP_INCR };

/** One write, validated by board_check_score. Strings are borrowed for the call. */
struct board_entry {
    const char *id; /**< member id, id_len bytes */
    size_t id_len;
    enum board_op op;
    int64_t key;        /**< order key (or key delta for incr) from board_check_score */
    int has_lo, has_hi; /**< incr only: the result is kept within [key_lo, key_hi] */
    int64_t key_lo;     /**< the smallest key (the best score) the result may take */
    int64_t key_hi;     /**< the largest key (the worst score) the result may take */
    const char *record; /**< record JSON, or NULL */
    size_t record_len;
};

/** What happened to one entry. */
struct board_outcome {
    int rc;            /**< 0 applied (or unchanged), -ERANGE: the result left the board's range */
    double score;      /**< the stored score after the write, board units (0 when none) */
    int64_t rank;      /**< 1-based rank after the write, when ranks were asked for; 0 when the
                        *   member is not on the board after it (max_members removed it) */
    int updated;       /**< 1 when the stored score changed */
    int has_prev;      /**< BOARD_WRITE_PREV: 1 when the member was on the board before */
    double prev_score; /**< its score before the write, board units */
    int64_t prev_rank; /**< its 1-based rank before the write */
};

/** One ranked entry of a page; strings borrowed from the page. */
struct board_item {
    const char *id;
    size_t id_len;
    double score;       /**< board units */
    int64_t rank;       /**< 1-based, of the rank type read */
    int64_t ordinal;    /**< 1-based position */
    int64_t stored;     /**< the stored value (score_codec.h): what a cursor names it by */
    const char *record; /**< record JSON or NULL */
    size_t record_len;
};

/** A page, or the entries around a member. Free with board_page_free. */
struct board_page {
    struct board_settings settings;
    int64_t total;              /**< members on the board */
    int size;                   /**< page size used (top: the entries sent, 0..100) */
    size_t n;                   /**< entries in items */
    struct board_item *items;   /**< n entries, rank order */
    int64_t count;              /**< top: the members the percent asked for (uncapped); else 0 */
    int64_t first, end;         /**< the positions [first, end) on the board the page is taken
                                 *   from: [0, total), or a score range's (walk.lua) */
    int ranged;                 /**< a score range was asked: `total` of the reply is end - first */
    char period[PERIOD_ID_MAX]; /**< the period read ("" without periods), for the cursors: the
                                 *   caller's to set (board_page_take does not know it) */
    void *reply;                /**< private: the Redis reply the strings point into */
};

/** One member: score, rank, the page holding it at `size`, record. Free with board_member_free. */
struct board_member {
    struct board_settings settings;
    int64_t total;
    double score;
    int64_t rank;       /**< of the rank type read */
    int64_t ordinal;    /**< the position: the page and the percentile follow from it */
    const char *record; /**< record JSON or NULL, borrowed from reply */
    size_t record_len;
    void *reply;
};

/** A board's settings and member count. */
struct board_info {
    struct board_settings settings;
    int64_t total;              /**< members of the current period (or the board) */
    char period[PERIOD_ID_MAX]; /**< the current period, "" without periods */
};

/** A page of the board list, with totals. Free with board_list_free. */
struct board_list {
    size_t n;
    char **names;         /**< n NUL-terminated names, sorted, unique within the page */
    int64_t *totals;      /**< n member counts */
    uint64_t next_cursor; /**< registry SSCAN cursor of the next page; 0 = this was the last */
};

#define BOARD_LIST_COUNT_MAX 1000 /**< boards per page of GET /boards (and the default) */

/** Default settings of a new board: desc, first, 0 decimals, 20 per page, 1000 ms TTL. */
void board_settings_default(struct board_settings *s);

/** 1 when `name` is a valid board name ([A-Za-z0-9._-], 1..64 bytes), else 0. */
int board_name_valid(const char *name, size_t len);

/**
 * Validate a score for a board and turn it into the key the write script takes.
 * Returns 0, -EINVAL (not finite), -EDOM (too many decimals), -ERANGE (outside the range).
 */
int board_check_score(const struct board_settings *s, double score, int64_t *key);

/**
 * Which set a read of `period` (NULL or "": the current one) goes to, from what this process
 * last saw of the board's period settings (a hint the read scripts check; when it is stale they
 * answer with the real settings, which board_where_learn records, and the caller retries). Never
 * a Redis call. Returns 0, -EINVAL (not an id of the board's kind), -ESRCH (not readable now),
 * -ENOTSUP; -EAGAIN for an asked-for period the hint cannot place (read the settings,
 * board_settings_submit, then board_where_settled).
 */
int board_where_cached(struct board_model *m, const char *board, const char *period,
                       struct board_where *out);

/** board_where_cached under settings read from Redis (board_settings_submit's settings and
 *  exists): never a Redis call. Returns as board_where_cached (never -EAGAIN), or -ENOENT when
 *  the board does not exist. */
int board_where_settled(struct board_model *m, const char *board, const char *period,
                        const struct board_settings *s, int exists, struct board_where *out);

/** Record a board's period settings as read from its settings hash (NULL fields: defaults). */
void board_where_note(struct board_model *m, const char *board, const char *kind_s,
                      const char *tz_s, const char *retain_s);

/** Record a board's period settings from a script's {'retry', kind, offset, retain} reply.
 *  Returns 1 when the reply was such a reply, else 0. */
int board_where_learn(struct board_model *m, const char *board, const struct store_reply *r);

/**
 * This process's last view of a board's settings (from any read of its settings hash in the last
 * second, or its own PUT or DELETE), without a Redis call: 0 with *out and *exists (0: no such
 * board, *out the defaults), or -EAGAIN when there is none. Write scripts check the layout and
 * period settings against the hash, so a stale view costs a retry (-EAGAIN), never a wrong write.
 */
int board_settings_cached(struct board_model *m, const char *board, struct board_settings *out,
                          int *exists);

/* ---- the event loops' calls: prepared here, sent on the loop's connections (store_async.h),
 * their replies taken here. No call below waits. */

enum board_read_kind {
    BOARD_READ_PAGE = 0,     /**< lua/page.lua: page `page` of `size` */
    BOARD_READ_MEMBER,       /**< lua/member.lua: member `id` */
    BOARD_READ_AROUND,       /**< lua/around.lua: `size` entries centred on member `id` */
    BOARD_READ_AROUND_SCORE, /**< lua/around_score.lua: `size` entries centred on a score */
    BOARD_READ_PERCENTILE,   /**< lua/percentile.lua: the member at a percentile */
    BOARD_READ_TOP,          /**< lua/top.lua: the first members up to a percent */
    BOARD_READ_WALK,         /**< lua/walk.lua: by score range and/or from a cursor */
};

#define BOARD_READ_ARGV 20 /**< 4 keys and at most 16 arguments (lua/prelude_read.lua's layout) */

/** Where a walk (BOARD_READ_WALK) starts: page `page` of the range, or after / before an edge;
 *  CHECK: a bound was refused under `layout`, only that layout is checked (the reply is -ESTALE
 *  either way: judge again under the settings it gives). */
enum board_walk { BOARD_WALK_PAGE = 0, BOARD_WALK_AFTER, BOARD_WALK_BEFORE, BOARD_WALK_CHECK };

/** What a read of one board asks (board_read_prepare); strings are borrowed for the call. */
struct board_read_args {
    enum board_read_kind kind;
    enum rank_type rank; /**< the rank type of the ranks read (percentile: always ordinal) */
    const char *id;      /**< member, around: id_len bytes */
    size_t id_len;
    int64_t page; /**< page: 1-based */
    int size;     /**< page, around, around score: entries, 0 = the board's page_size */
    /** around score: the layout the score was judged under and its key (refused: the literal
     *  was refused under that layout; the script then confirms the layout, see
     *  board_around_score_take) */
    struct score_layout layout;
    int64_t key;
    int refused;
    /** percentile, top: the share of the board, num / den (0 <= num <= den <= RANK_SHARE_DEN):
     *  the rank max(1, ceil(total * num / den)), or the first ceil(total * num / den) members */
    int64_t num, den;
    /** walk: the score range as keys (inclusive; has_lo/has_hi 0: no bound), judged under
     *  `layout` (which the script checks when a bound is given); where it starts; the edge
     *  (stored value, id) of after/before and the generation the cursor was made under */
    int has_lo, has_hi;
    int64_t lo, hi;
    enum board_walk walk;
    int64_t edge_stored, edge_gen;
    const char *edge_id;
    size_t edge_id_len;
};

/** A read script call of one board: KEYS settings, set, records, distinct scores; ARGV as the
 *  script says. argv points into the struct itself and at the caller's id. */
struct board_read {
    const struct store_script *script; /**< the script to run (store_async_script) */
    int nkeys, nargs;
    const char *argv[BOARD_READ_ARGV];
    size_t lens[BOARD_READ_ARGV];
    char meta[192], items[192], z[192], dense[192], tz[16], retain[16], num[8][32];
};

/** Prepare the read `a` of the set `w` (board_where_cached or board_where_settled). */
void board_read_prepare(struct board_model *m, const char *board, const struct board_where *w,
                        const struct board_read_args *a, struct board_read *out);

/**
 * Take a read script's reply r (ownership passes, even on error; the settings in it are
 * remembered): 0 and *out (free with board_page_free / board_member_free), -EAGAIN when the
 * script found other period settings than the call assumed (learnt: prepare and send again),
 * -ENOENT no board, -ENODATA no such member, -ENOSYS dense ranks unavailable (board.h's top),
 * -EIO an error reply or an unexpected shape. board_page_take also takes top.lua's reply.
 */
int board_page_take(struct board_model *m, const char *board, struct store_reply *r, int64_t page,
                    struct board_page **out);

/** The board's write counter (`version` of its settings) in a read script's reply r (page.lua,
 *  member.lua, around.lua, around_score.lua, lookup.lua, percentile.lua, top.lua, walk.lua,
 *  page_fill.lua's rows: the settings first; borrowed, before board_*_take): 0 for a board
 *  with no write yet, or one the reply says does not exist (nil); -1 for a reply without
 *  settings (a retry, an error, another shape). A read with min_version V whose reply, from a
 *  replica, says less than V is sent again to the primary (docs/api.md, "Page cache and
 * freshness"). */
int64_t board_read_version(const struct store_reply *r);
int board_around_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_page **out);
int board_member_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_member **out);

/** around_score.lua's reply, as board_around_take; and -ESTALE with *seen (the board's settings,
 *  remembered) when the score must be judged again under them: the layout differed from the one
 *  it was judged under, or it was refused under the right one (judged again, it is refused
 *  again: answer that). An empty board is a page without items. */
/** walk.lua's reply, as board_page_take (p->first, end and ranged set, the items at their
 *  positions); -ESTALE with *seen when the range must be judged again under those settings,
 *  -EKEYEXPIRED when the cursor's generation is not the board's any more (reset, layout change,
 *  re-created board). */
int board_walk_take(struct board_model *m, const char *board, struct store_reply *r, int ranged,
                    struct board_settings *seen, struct board_page **out);

int board_around_score_take(struct board_model *m, const char *board, struct store_reply *r,
                            struct board_settings *seen, struct board_page **out);

/** The member at a percentile (percentile.lua). Free with board_percentile_free. */
struct board_percentile {
    struct board_settings settings;
    int64_t total;
    int64_t rank;   /**< 1-based ordinal; 0 on an empty board (then no id) */
    const char *id; /**< borrowed from reply, NULL on an empty board */
    size_t id_len;
    double score;
    void *reply;
};

/** percentile.lua's reply: 0 and *out (free with board_percentile_free), errors as
 *  board_page_take (never -ENODATA: an empty board has rank 0). */
int board_percentile_take(struct board_model *m, const char *board, struct store_reply *r,
                          struct board_percentile **out);

void board_percentile_free(struct board_percentile *p);

#define BOARD_LOOKUP_MAX 1000 /**< ids of one many-member read (POST lookup; GET: 100) */

/** A many-member read (lua/lookup.lua): the ids, each once, in the order first asked. argv and
 *  lens are allocated: free with board_lookup_call_free. */
struct board_lookup_call {
    struct board_read head; /**< keys and the prelude's arguments */
    const struct store_script *script;
    const char **argv;
    size_t *lens;
    int nkeys, nargs;
};

/** Prepare lookup.lua for ids[0..n) (lens: their byte lengths; 1 <= n <= BOARD_LOOKUP_MAX; an
 *  id given twice is sent once). 0, or -ENOMEM. */
int board_lookup_prepare(struct board_model *m, const char *board, const struct board_where *w,
                         enum rank_type rank, const char *const *ids, const size_t *lens, size_t n,
                         struct board_lookup_call *out);

void board_lookup_call_free(struct board_lookup_call *c);

/** The members found and the ids missing. Free with board_lookup_free. */
struct board_lookup {
    struct board_settings settings;
    int64_t total;
    size_t n;                 /**< members found */
    struct board_item *items; /**< n, in rank order (by ordinal position) */
    size_t nmissing;
    const char **missing; /**< nmissing ids (borrowed from reply), in the order asked */
    size_t *missing_len;
    void *reply;
};

/** lookup.lua's reply: 0 and *out, errors as board_page_take. */
int board_lookup_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_lookup **out);

void board_lookup_free(struct board_lookup *l);

#define BOARD_MEMBER_BOARDS_MAX 20 /**< boards of one GET /members/{id}?boards= */

/**
 * One member on several boards (lua/member_boards.lua). On one Redis one call over the keys of
 * every board (their current period's set). In Redis Cluster each board's keys hash to their own
 * slot ({board}) and a script holds one slot, so there it is one call per board
 * (board_boards_calls), all sent in the same loop iteration: one pipeline per node, answered in
 * one round trip. The period settings are this process's hints, checked by the script. argv
 * points into the struct and at the caller's names and id.
 */
struct board_boards_call {
    const struct store_script *script;
    int nkeys, nargs;
    const char *argv[2 + 6 * BOARD_MEMBER_BOARDS_MAX];
    size_t lens[2 + 6 * BOARD_MEMBER_BOARDS_MAX];
    char keys[3 * BOARD_MEMBER_BOARDS_MAX][192];
    char nums[2 * BOARD_MEMBER_BOARDS_MAX][16];
};

/** How many member_boards.lua calls a read of n boards takes, each of n / calls boards: 1 on one
 *  Redis, n on a Redis Cluster (one board a call). */
size_t board_boards_calls(const struct board_model *m, size_t n);

/** Prepare the call for member id (id_len bytes) on boards[0..n) (valid names, each once, n <=
 *  BOARD_MEMBER_BOARDS_MAX; on a cluster n = 1), ranks of type `rank`. */
void board_boards_prepare(struct board_model *m, const char *const *boards, size_t n,
                          const char *id, size_t id_len, enum rank_type rank,
                          struct board_boards_call *out);

/** What one board said of the member. */
struct board_on_board {
    int exists; /**< the board exists */
    int found;  /**< the member is on it (then score, rank, ordinal) */
    struct board_settings settings;
    int64_t total;
    double score;
    int64_t rank, ordinal;
};

/** member_boards.lua's reply (r is freed) for the n boards of its call: 0 and out[0..n), -EAGAIN
 *  (some boards' periods were learnt: prepare and send again), -ENOSYS (dense ranks unavailable
 *  on a board; *bad its index in boards), -EIO. */
int board_boards_take(struct board_model *m, const char *const *boards, size_t n,
                      struct store_reply *r, struct board_on_board *out, size_t *bad);

enum board_write_flags {
    BOARD_WRITE_RANKS = 1,  /**< fill outcomes[].rank */
    BOARD_WRITE_ATOMIC = 2, /**< all or nothing: an entry whose result would leave the range, or
                             *   a full tie group, refuses the whole call (a group is compacted
                             *   and the call sent again) */
    BOARD_WRITE_PREV = 4,   /**< fill outcomes[].has_prev, prev_score, prev_rank */
    BOARD_WRITE_CREATE = 8, /**< a board that does not exist is created with `assumed` (which
                             *   must be the defaults); without it a missing board is -ENOENT */
};

#define BOARD_WRITE_BOARDS_MAX 20 /**< boards of one write (POST /scores) */
#define BOARD_IDEM_KEY_MAX 128    /**< bytes of an Idempotency-Key */
#define BOARD_IDEM_TTL_MS                                                                          \
    INT64_C(86400000)       /**< how long a write's reply is kept for its replays                  \
                             */
#define BOARD_DIGEST_LEN 64 /**< hex characters of a request digest (SHA-256) */

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
 * ntargets (1..BOARD_WRITE_BOARDS_MAX) boards in one write.lua call, and compact.lua chunks for
 * a full tie group (then the write is sent again or resumes), as a chain of non-blocking script
 * calls on `conn`. The caller fills the first block (borrowed until done) and calls
 * board_write_submit; done(job, rc) is called once, later, on the loop's thread. job->handled is
 * always set: entries[0..handled) were applied (or, without BOARD_WRITE_ATOMIC, refused alone
 * for range) on every target and their outcomes are filled; nothing after them was written.
 * With BOARD_WRITE_ATOMIC, handled is 0 or n. rc 0 (then handled == n); -ERANGE with
 * BOARD_WRITE_ATOMIC: entry `handled` would leave the range of target `target`, nothing written;
 * -EAGAIN when target `target`'s settings no longer match `assumed` or it was deleted (re-read,
 * re-validate, resume at `handled`); -ENOENT without BOARD_WRITE_CREATE: target `target` does
 * not exist, nothing written; -EKEYREJECTED: with a digest, the Idempotency-Key's record holds
 * another request, nothing written; -ENOSPC when a group of equal scores is truly full; -ETIME
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
    const char *digest;  /**< BOARD_DIGEST_LEN hex characters with idem_key, else NULL */
    int64_t deadline_ms; /**< monotonic, for every call (0: the store's timeout) */
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

void board_page_free(struct board_page *p);

void board_member_free(struct board_member *mb);

/**
 * What a board owns in Redis: every kind of key "<prefix>:{<board>}<suffix>...", the one list
 * (schema/redis-keys.md, "What a board owns"). A board's key is made only by board_key_make,
 * which takes a kind, so a key outside this list cannot be made; DELETE /boards/{board} names
 * its keys from it (board_owned_keys), and the unit test board_keys checks that every kind is
 * either unlinked by the delete or unreachable after it, and expires.
 */
enum board_key_kind {
    BOARD_KEY_META = 0, /**< ":meta": the settings hash (gen, life, version, exports) */
    BOARD_KEY_INDEX,    /**< ":periods": the period index (lists every period set) */
    BOARD_KEY_SET,      /**< ":z", ":z:<period>": the sorted sets */
    BOARD_KEY_DENSE,    /**< ":dense", ":dense:<period>": their distinct scores */
    BOARD_KEY_SWEEP,    /**< ":sweep": the sweep's lock */
    BOARD_KEY_IDEM,     /**< ":idem:<Idempotency-Key>": an idempotent write's record */
    BOARD_KEY_EXPORT,   /**< ":export:<token>:rows|moves": an export's snapshot */
    BOARD_KEY_PAGE,     /**< ":page:<gen>:...[:lock]": a cached page and its fill lock */
    BOARD_KEY_KINDS
};

/** What a board's delete does to a kind of its keys. */
enum board_key_fate {
    BOARD_GONE_UNLINKED = 0, /**< delete_board.lua UNLINKs every key of it (named by
                              *   board_owned_keys, or listed in the period index) */
    BOARD_GONE_GEN,          /**< named by the board's generation: a board created again under the
                              *   name has another and never names it; expires */
    BOARD_GONE_LIFE,         /**< holds the board's life (the settings' `life`, which the delete
                              *   removes): never answered under another life (write.lua); expires */
    BOARD_GONE_TOKEN,        /**< named by a random token only the settings' `exports` lists (the
                              *   delete removes it): nothing finds it again; expires */
    BOARD_GONE_TTL,          /**< a short lock that guards no data: expires (at most 2 s) */
};

struct board_key_spec {
    const char *suffix;       /**< after "<prefix>:{<board>}", e.g. ":z" */
    enum board_key_fate fate; /**< what a delete does to it */
    int expires;              /**< 1: every key of it carries a TTL */
};

/** The list, indexed by enum board_key_kind. */
extern const struct board_key_spec board_key_specs[BOARD_KEY_KINDS];

/**
 * Start key `kind` of `board` in out[0..len): "<prefix>:{<board>}<suffix>" (the hash tag of the
 * key schema above); the caller appends the rest (":<period>", ":<gen>:...") to *b with strb_*.
 * Cut like snprintf when it does not fit (b->over). No allocation, no snprintf: it runs on every
 * page hit.
 */
void board_key_make(struct strb *b, char *out, size_t len, const char *prefix, const char *board,
                    enum board_key_kind kind);

/** The kind of `key` when it is one of `board`'s under `prefix` (board_key_specs), else -1. */
int board_key_kind_of(const char *key, const char *prefix, const char *board);

#define BOARD_KEY_LEN 192 /**< bytes of a board's key made here, with the NUL */

/**
 * The keys DELETE /boards/{board} names (delete_board.lua UNLINKs them, and every key the period
 * index lists): one of each kind whose fate is BOARD_GONE_UNLINKED, in the list's order (so
 * out[0] is the settings and out[1] the index), then the set and its distinct scores of each
 * period of periods[0..np) (the readable ones: a set an older rankd wrote and did not list goes
 * too) into out[0..max). Returns how many, or -ENOSPC when max is too small.
 */
int board_owned_keys(const char *prefix, const char *board, const char (*periods)[PERIOD_ID_MAX],
                     int np, char (*out)[BOARD_KEY_LEN], int max);

/** The ids of the readable periods, newest first (current, then up to `retain` past ones) into
 *  ids[0..max); returns how many. */
int board_periods(const struct board_model *m, const struct board_settings *s,
                  char ids[][PERIOD_ID_MAX], int max);

void board_list_free(struct board_list *l);

/** Register the model's scripts (service/lua/: write, compact, page, member, around, create,
 *  put, reset, delete, trim, sweep, member delete, around score, lookup, percentile, top,
 *  member boards) with the store (store_script_register), once
 *  per process; call before the stores dial (rankd_start), so that their first dial loads them.
 *  Thread-safe. */
void board_scripts_register(void);

/** Test hook: the tie capacity the write script uses (default SCORE_TIE_CAP; tests lower it). */
void board_set_tie_cap(int64_t cap);

#endif
