/*
 * board.h -- the leaderboard model over Redis sorted sets: boards, members, scores, ranks, pages.
 *
 * No HTTP and no JSON parsing here: callers hand in validated names and ids; this module turns
 * them into Redis keys and the short scripts and commands of service/lua/, sends them on an event
 * loop's connections (store_async.h) without waiting, and hands back C values. Key schema
 * (schema/redis-keys.md), with P the key prefix:
 *   P:{board}:z     sorted set, member = id, score = stored value (score_codec.h), ascending = rank
 *   P:{board}:z:<period>  the same for one period of a periodic board (period.h), no TTL (board
 *                   data is never evictable); listed in the period index by the write that
 *                   creates it
 *   P:{board}:periods  sorted set, member = a period set's key, score = its period's start (ms):
 *                   how the sweep (sweep.lua) finds the sets of periods no longer readable, and
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

#include "names.h"
#include "period.h"
#include "rank.h"
#include "records.h"
#include "score_codec.h"
#include "store.h"
#include "store_async.h"
#include "util.h"

/* The settings' defaults and bounds are written here once: board_settings.c decodes with them,
 * and the Makefile turns every BOARD_*_DEFAULT and BOARD_*_MAX below into a local of the Lua
 * prelude the scripts include (--@prelude defaults; scripts/lua-defaults.awk). A text default is
 * the name the settings hash stores. */
#define BOARD_PAGE_SIZE_MAX 100    /**< entries per page */
#define BOARD_PAGE_SIZE_DEFAULT 20 /**< entries per page */
#define BOARD_PAGE_TTL_MS_DEFAULT 1000
#define BOARD_PAGE_TTL_MS_MAX 3600000        /**< one hour */
#define BOARD_ORDER_DEFAULT "desc"           /**< score_order: SCORE_ORDER_DESC */
#define BOARD_TIEBREAK_DEFAULT "first"       /**< score_tiebreak: SCORE_TIEBREAK_FIRST */
#define BOARD_SCORE_LAYOUT_DEFAULT "packed"  /**< score_layout.wide 0 (score_codec.h) */
#define BOARD_DECIMALS_DEFAULT 0             /**< score_decimals */
#define BOARD_PERIOD_DEFAULT "none"          /**< period: PERIOD_NONE */
#define BOARD_TIMEZONE_DEFAULT 0             /**< timezone: UTC (period_tz_text's form) */
#define BOARD_RETAIN_DEFAULT 1               /**< retain: past periods kept readable */
#define BOARD_SCORE_FORMAT_DEFAULT "integer" /**< score_format: SCORE_FORMAT_INTEGER */
#define BOARD_TRACK_UPDATED_AT_DEFAULT 0     /**< track_updated_at: 1 keeps each entry's time */
#define BOARD_RECORD_BYTES_MAX 1024          /**< serialized record JSON */
#define BOARD_BATCH_MAX 1000                 /**< entries per write script call */
#define BOARD_MAX_MEMBERS_MAX 100000000      /**< the largest max_members setting */
#define BOARD_TIE_CAP_MAX 2097152            /**< a tie group's entries: SCORE_TIE_CAP, 2^T */

/** Settings of one board (the meta hash). */
struct board_settings {
    struct score_layout layout;     /**< order, tiebreak, decimals, wide (the `score_layout`) */
    enum period_kind period;        /**< none, hourly, daily, weekly, monthly */
    struct period_tz tz;            /**< the period boundaries' time zone (a fixed offset or an
                                 *   IANA zone; bound when it went through board_where) */
    int retain;                     /**< past periods that stay readable, 0..PERIOD_RETAIN_MAX */
    int page_size;                  /**< default entries per page, 1..BOARD_PAGE_SIZE_MAX */
    int page_ttl_ms;                /**< page cache soft TTL, 0 = no caching */
    int64_t gen;                    /**< generation (new at create, reset, re-create): part of
                                 *   every page key and ETag; 0 when read from no hash */
    int64_t max_members;            /**< keep the top this many: every write removes the worst
                                 *   members past it (bounded per call); 0 = no limit */
    int64_t version;                /**< the board's write counter (write.lua bumps it once per
                                 *   call); read-only, 0 before the first write */
    enum score_format score_format; /**< how pages show the scores (display only) */
    int track_updated_at;           /**< 1: each entry's updated_at (ms since the epoch when its
                                     *   score last changed) is kept in the set's `upd` hash */
};

/** Partial settings from a PUT: a field is applied only when its has_ flag is set. */
struct board_settings_patch {
    struct board_settings value;
    int has_order, has_tiebreak, has_decimals, has_page_size, has_page_ttl, has_period, has_tz,
        has_retain, has_max_members, has_score_layout, has_score_format, has_track_updated_at;
    int has_subscores; /**< value.layout.nsub / sub_asc set (0 columns: none) */
};

/** Shared state of the model: the store and the key prefix (borrowed; outlive the model). */
struct board_model {
    struct store *store;       /**< where reads' faults are counted (borrowed) */
    struct store *writes;      /**< where writes' faults are counted (borrowed); NULL = store */
    const char *prefix;        /**< key prefix, [A-Za-z0-9._:-]{1,64} */
    int64_t (*clock_ms)(void); /**< wall clock for periods, ms since the epoch; NULL = real */
    /** This process's view of the boards (board_view.c: period hints, settings seen in the last
     *  second, boards lately added to the registry), made by board_model_init. NULL: none is
     *  kept, and every call asks Redis (correct, one round trip more). */
    struct board_view *view;
    /** The IANA zones of periodic boards, loaded once per process (tzif.h), made by
     *  board_model_init; NULL: a board in a named zone cannot be placed (its reads fail). */
    struct tzif_cache *zones;
};

/** Make m's view of its boards (m->view; about 0.5 MB) and its zone cache (m->zones, from
 *  TZIF_DIR_DEFAULT): 0, or -ENOMEM. Free with board_model_free. Call before m is shared between
 *  threads. */
int board_model_init(struct board_model *m);

/** Free m->view (NULL afterwards); nothing when there is none. */
void board_model_free(struct board_model *m);

/** Which sorted set a request reads: a board's only set, or one period's. */
struct board_where {
    char z[192];     /**< the sorted-set key */
    char dense[192]; /**< its distinct scores (P:{board}:dense[:<period>]) */
    char ids[192];   /**< a `wide` set's id -> tie prefix hash (P:{board}:ids[:<period>]) */
    char upd[192];   /**< the set's id -> updated_at (ms) hash of a board that tracks it
                      *   (P:{board}:upd[:<period>]); on a cluster the set's own key (unused) */
    char period[PERIOD_ID_MAX]; /**< the period id, "" for a board without periods */
    enum period_kind kind;      /**< the board's period settings used to choose it */
    struct period_tz tz;        /**< (bound to its zone) */
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
    int nsub;                   /**< sub-scores sent: the board's layout.nsub (0 on other boards) */
    int64_t sub[SCORE_SUB_MAX]; /**< as sent (incr: the deltas), |v| <= SCORE_SUB_ABS_MAX */
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
    int nsub;          /**< the board's sub-score columns (layout.nsub), 0 without (or when
                        *   the stored value came without them: an older idempotency record) */
    int64_t sub[SCORE_SUB_MAX];      /**< the sub-scores stored with `score` (nsub of them) */
    int64_t prev_sub[SCORE_SUB_MAX]; /**< with has_prev: those stored with prev_score */
};

/** One ranked entry of a page; strings borrowed from the page. */
struct board_item {
    const char *id;
    size_t id_len;
    double score;       /**< board units */
    int64_t rank;       /**< 1-based, of the rank type read */
    int64_t ordinal;    /**< 1-based position */
    int64_t updated_at; /**< a board with track_updated_at: ms since the epoch when its score
                         *   last changed; -1 unknown (or not tracked) */
    int64_t stored;     /**< the stored value (score_codec.h): what a cursor names it by */
    int64_t tie;        /**< a `wide` board's tie position (score_codec_member_split), else 0:
                         *   a cursor names it by this too */
    int nsub;           /**< the board's sub-score columns (layout.nsub), 0 without */
    int64_t sub[SCORE_SUB_MAX]; /**< its sub-scores (nsub of them) */
    const char *record;         /**< record JSON or NULL */
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
    struct board_lookup *with;  /**< page.lua read with `with` ids: those members (board_read.h;
                                 *   owned, freed by board_page_free), else NULL */
    void *reply;                /**< private: the Redis reply the strings point into */
};

/** One member: score, rank, the page holding it at `size`, record. Free with board_member_free. */
struct board_member {
    struct board_settings settings;
    int64_t total;
    double score;
    int64_t sub[SCORE_SUB_MAX]; /**< its sub-scores (settings.layout.nsub of them) */
    int64_t rank;               /**< of the rank type read */
    int64_t ordinal;            /**< the position: the page and the percentile follow from it */
    const char *record;         /**< record JSON or NULL, borrowed from reply */
    size_t record_len;
    int64_t updated_at; /**< ms since the epoch when its score last changed (a board that
                         *   tracks it: settings.track_updated_at); -1 unknown */
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

/** Default settings of a new board (the BOARD_*_DEFAULT values): desc, first, 0 decimals, no
 * periods, 20 per page, 1000 ms TTL, retain 1, scores shown as integers. */
void board_settings_default(struct board_settings *s);

/**
 * The one decoder of the settings hash: apply one field/value pair of it (an HGETALL's pair or
 * an HMGET's field and element) to s. A NULL value (a nil element), an unknown field, text where
 * a number belongs and a value outside the field's bounds leave s unchanged; an unknown period
 * or order text sets none / desc. Start from board_settings_default for the hash's meaning.
 */
void board_settings_field(struct board_settings *s, const char *field, const char *value);

/**
 * Settings from a reply that holds the settings hash: a flat HGETALL array, or the read
 * scripts' one string (lua/prelude_read.lua: a NUL byte, then each field and value followed by
 * a NUL, the last value by the string's end: one bulk string instead of two a field). Anything
 * else (NULL included) gives the defaults; unknown or damaged fields keep theirs.
 */
void board_settings_from_reply(const struct store_reply *r, struct board_settings *s);

/** 1 when r is a reply board_settings_from_reply reads as settings (an array, or a string that
 *  starts with a NUL byte: no tag of a script's reply does), else 0. */
int board_settings_reply(const struct store_reply *r);

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

/** board_where_cached without the keys: out->z, dense, ids and upd are "" (a page cache hit reads
 *  none of them); board_where_keys makes them for a read that needs them. */
int board_where_cached_place(struct board_model *m, const char *board, const char *period,
                             struct board_where *out);

/** The keys of w's set (z, dense, ids, upd) for its period and kind, unless they are made
 *  already (w->z not ""). */
void board_where_keys(const struct board_model *m, const char *board, struct board_where *w);

/** board_where_cached under settings read from Redis (board_settings_submit's settings and
 *  exists): never a Redis call. Returns as board_where_cached (never -EAGAIN), or -ENOENT when
 *  the board does not exist. */
int board_where_settled(struct board_model *m, const char *board, const char *period,
                        const struct board_settings *s, int exists, struct board_where *out);

/** Record a board's period settings as read from its settings hash (NULL fields: defaults). */
/* 1 when the model's data Redis is a Redis Cluster. On a cluster a board's sets are always
 * `packed` (a PUT of score_layout "wide" is refused there): the ids hash a wide set needs is not
 * named by the scripts, because a key that does not exist beside ones that do makes a slot being
 * migrated refuse the call (TRYAGAIN); the set's own key stands in its place (board_where.ids). */
int board_clustered(const struct board_model *m);

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
    BOARD_KEY_IDS,      /**< ":ids", ":ids:<period>": a `wide` set's id -> tie prefix hash */
    BOARD_KEY_UPD,      /**< ":upd", ":upd:<period>": the set's id -> updated_at (ms) hash */
    BOARD_KEY_SWEEP,    /**< ":sweep": the sweep's lock */
    BOARD_KEY_IDEM,     /**< ":idem:<Idempotency-Key>": an idempotent write's record */
    BOARD_KEY_EXPORT,   /**< ":export:<token>:rows|moves": an export's snapshot */
    BOARD_KEY_PAGE,     /**< ":page:<gen>:...[:lock]": a cached page and its fill lock */
    BOARD_KEY_UPLOAD,   /**< ":upload:<token>": an NDJSON upload's next chunk number */
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
    BOARD_GONE_TOKEN,        /**< named by a random token only its owner knows (an export's: the
                              *   settings' `exports` list it, the delete removes it; an upload's:
                              *   the upload's own): nothing finds it again; expires */
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

/** Test hook: 0 sends every score write through write.lua, 1 (the default) lets a single write
 *  of the common kind take write_one.lua (the same effects and replies, in less Redis work). */
void board_set_short_writes(int on);

/* The operation families, each in its own header (they need the types above). */
#include "board_ctl.h"
#include "board_read.h"
#include "board_write.h"

#endif
