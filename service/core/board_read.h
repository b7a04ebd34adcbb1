/*
 * board_read.h -- the model's reads (board.h's family): each read script's call prepared
 * (board_read_prepare, board_lookup_prepare, board_boards_prepare), sent by the caller on an
 * event loop's connection, and its reply taken (board_*_take). Include board.h.
 */
#ifndef RANKD_BOARD_READ_H
#define RANKD_BOARD_READ_H

#include "board.h"

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

#define BOARD_WITH_MAX 20 /**< ids of a page's `with` (GET .../rank?with=) */
/** 6 keys and at most 27 arguments (lua/prelude_read.lua's layout; page.lua: 6 and its `with`
 *  ids) */
#define BOARD_READ_ARGV 33

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
    /** page: the members to read with it (`with`, 0..BOARD_WITH_MAX ids, each once: the caller
     *  checks), borrowed; board_page_take then gives them as board_page.with */
    const char *const *with;
    const size_t *with_lens;
    size_t nwith;
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
    int64_t edge_tie; /**< walk: the edge's tie position on a `wide` board (cursor.h), else 0 */
    const unsigned char *edge_sub; /**< walk: the edge's sub-score bytes (cursor.h), edge_sub_len */
    size_t edge_sub_len;
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
    char meta[192], items[192], z[192], dense[192], ids[192], upd[192], tz[PERIOD_TZ_TEXT_MAX],
        retain[16], num[9][32];
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
 *  freshness"). */
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
 *  re-created board), -EBADR when a cursor of this generation names an edge of another shape
 *  than the board's set members (sub-score bytes of other columns: forged). */
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
    int64_t sub[SCORE_SUB_MAX]; /**< its sub-scores (settings.layout.nsub of them) */
    int64_t updated_at;         /**< settings.track_updated_at: its time (ms), -1 unknown */
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

/** lookup.lua's reply: 0 and *out, errors as board_page_take. A page read with `with` ids
 *  (board_read_args.with) gives its members as board_page.with, freed with the page. */
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
    const char *argv[2 + 8 * BOARD_MEMBER_BOARDS_MAX]; /* 5 keys and 3 arguments a board */
    size_t lens[2 + 8 * BOARD_MEMBER_BOARDS_MAX];
    char keys[5 * BOARD_MEMBER_BOARDS_MAX][192];
    char nums[2 * BOARD_MEMBER_BOARDS_MAX][PERIOD_TZ_TEXT_MAX];
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
    int found;  /**< the member is on it (then score, rank, ordinal, updated_at) */
    struct board_settings settings;
    int64_t total;
    double score;
    int64_t rank, ordinal;
    int64_t sub[SCORE_SUB_MAX]; /**< found: its sub-scores (settings.layout.nsub of them) */
    int64_t updated_at;         /**< settings.track_updated_at: its time (ms), -1 unknown */
};

/** member_boards.lua's reply (r is freed) for the n boards of its call: 0 and out[0..n), -EAGAIN
 *  (some boards' periods were learnt: prepare and send again), -ENOSYS (dense ranks unavailable
 *  on a board; *bad its index in boards), -EIO. */
int board_boards_take(struct board_model *m, const char *const *boards, size_t n,
                      struct store_reply *r, struct board_on_board *out, size_t *bad);

#endif
