/*
 * board_int.h -- the board family's private parts, for service/core/board_*.c only: the ids of
 * the model's scripts, key buffers, the control calls' shapes, and the functions one board_*.c
 * lends another (each defined in the file its banner names). The model's contract is board.h.
 */
#ifndef RANKD_BOARD_INT_H
#define RANKD_BOARD_INT_H

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "crc16.h"
#include "records.h"
#include "store_async.h"
#include "util.h"

#define KEY_MAX BOARD_KEY_LEN /* prefix (64) + board (64) + punctuation and suffix */
#define COMPACT_CHUNK 1000
#define WRITE_RETRIES 8

/* The model's scripts: SCRIPT_<NAME> for each service/lua/NAME.lua with a "--@script" line, and
 * their flags (SCRIPT_READ_ONLY, SCRIPT_WAITS), generated from those lines into build/gen/scripts.h
 * (scripts/lua-scripts.awk). Registered with the store once per process (board_scripts_register);
 * the store knows them by handle only (board_script). */
#include "scripts.h"

struct board_keys {
    char z[KEY_MAX], meta[KEY_MAX], items[KEY_MAX], registry[KEY_MAX];
    char index[KEY_MAX]; /* the period index: every period set of the board, by period start */
    char dense[KEY_MAX]; /* the distinct scores of z */
    /* what the scripts are given for the records hash and the registry: those keys on one
     * Redis; on a cluster, where they are in other slots, the settings hash again (the scripts
     * then leave them to the caller: records.h, registry_step) */
    const char *script_items, *script_registry;
};

#define PUT_AGAIN 1 /* the board appeared, went or changed under the call: read it again */

/*
 * A PUT's one script, prepared from the settings just read: create_board.lua for a new board
 * (refused at maxmemory: a new board grows memory), put_board.lua for a change of an existing
 * one (allowed at maxmemory). put_board.lua is sent the current set, the index and the past
 * periods' sets by name: first those both the current and the new retain keep readable (they
 * count for "non-empty"), then those only one of them does (emptied); it sweeps one chunk of the
 * index's unreadable sets itself. argv points into the struct and at `board`.
 */
struct board_put_call {
    struct board_keys k;
    struct board_where w; /* create: the set the new settings write to */
    char (*zs)[KEY_MAX];
    const char **argv;
    int create;
    int nkeys, nargs;
    char val[12][PERIOD_TZ_TEXT_MAX], tz[PERIOD_TZ_TEXT_MAX], retain[16], gen[32], nkeep[16],
        cut[32];
};

/* delete_board.lua's call: keys (settings, registry, the period index, the plain set, every
 * readable period's set), then the board's name. */
struct board_delete_call {
    struct board_keys k;
    char (*zs)[KEY_MAX];
    const char **argv;
    int nkeys;
};

/* reset_board.lua's call: the settings, the current set and its distinct scores, a new
 * generation. */
struct board_reset_call {
    struct board_keys k;
    char gen[32];
    const char *argv[6];
};

/* The argv of one write.lua call (its header says the layout): per target 7 keys (the set, its
 * settings, the period index, the idempotency record, the set's distinct scores, its ids hash,
 * its updated_at hash) and 16 header
 * values, then the records hash and the registry; 12 values before the targets' headers; per
 * entry 3 values and 1 per target (the short layout: write.lua). */
#define WRITE_TARGET_KEYS 7
#define WRITE_TARGET_HDR 16
#define WRITE_GLOBAL_ARGS 12
#define IDEM_KEY_MAX (KEY_MAX + BOARD_IDEM_KEY_MAX + 8)

struct write_target_args {
    char meta[KEY_MAX], index[KEY_MAX], idem[IDEM_KEY_MAX];
    char hdr[WRITE_TARGET_HDR][PERIOD_TZ_TEXT_MAX];
};

#define WRITE_OP_TEXT_MAX 96  /* "incr:" and SCORE_SUB_MAX sub-scores of 17 characters, commas */
#define WRITE_KEY_TEXT_MAX 72 /* an incr's "delta lo hi": three int64 texts, two spaces */
struct write_args {
    const char **argv;
    size_t *len;
    char (*num)[WRITE_KEY_TEXT_MAX]; /* per entry and target: key, or an incr's "delta lo hi" */
    char (*ops)
        [WRITE_OP_TEXT_MAX]; /* per entry with sub-scores: "op:n1,n2" (prelude_subscores.lua) */
    char (*sv)[24];          /* the short layout: the entries' stored values, the keys, the ties */
    struct write_target_args *t;
    char items[KEY_MAX], registry[KEY_MAX];
    char glob[WRITE_GLOBAL_ARGS][32];
    int nkeys, nargs;
};

/* write_one.lua's call (board_write_short.c): the set, the settings hash, the distinct scores,
 * then only those the write uses: the updated_at hash (a board that tracks it), the period index
 * (a periodic board), the records hash (a record, not on a cluster); then the settings as
 * assumed (one argument), the member, the op, the key (with an incr's bounds, and the largest
 * |key| but for a set), the flags (one digit), and only those that apply: the record, the time
 * (updated_at), the period's start, the tie cap (a test's). argv points into the struct and
 * into the job. */
#define WRITE_SHORT_KEYS_MAX 6
#define WRITE_SHORT_ARGS_MAX 9
struct write_short_args {
    char meta[KEY_MAX], items[KEY_MAX], index[KEY_MAX];
    char settings[160]; /* order|tiebreak|decimals|period|timezone|score_layout|track */
    char flags[2], cap[24], now[24], start[24];
    char key[WRITE_KEY_TEXT_MAX + 24];
    const char *argv[WRITE_SHORT_KEYS_MAX + WRITE_SHORT_ARGS_MAX];
    size_t len[WRITE_SHORT_KEYS_MAX + WRITE_SHORT_ARGS_MAX];
    int nkeys, nargs;
};

#define TRIM_CHUNK 250 /* measured: 1000 removals from a 3M set took 3-5 ms, over the 2 ms goal */

/* trim.lua's call, repeated until a chunk removes fewer than TRIM_CHUNK: the set, its distinct
 * scores, the settings; then the mode, where the tail starts, the chunk. */
struct board_trim_call {
    char from[32], chunk[16], meta[KEY_MAX];
    const char *argv[8];
};

/* delete_member.lua's call (allow-oom: it must work at maxmemory, where Redis refuses to queue
 * any command of a MULTI ... EXEC): the settings, the current set, its distinct scores, the
 * member. */
struct board_member_delete_call {
    struct board_keys k;
    const char *argv[6];
    size_t lens[6];
};

/* ---------------------------------------------------------------- lent between the files */

/* board_scripts.c */
const struct store_script *board_script(int which);
extern _Atomic int64_t board_tie_cap;

/* board_keys.c */
void board_new_generation(char out[32]);
void board_make_keys(const struct board_model *m, const char *board, struct board_keys *k);

/* board_settings.c: board_settings_from_reply and board_settings_reply are board.h's */

/* board_view.c */
void board_view_put(const struct board_model *m, const char *board,
                    const struct board_settings *set, int exists);
void board_view_note(const struct board_model *m, const char *board, const struct store_reply *r,
                     struct board_settings *out);
int64_t board_now_ms(const struct board_model *m);
void board_set_key(char *out, size_t len, const char *prefix, const char *board,
                   enum board_key_kind what, const char *period);
void board_z_key(char *out, size_t len, const char *prefix, const char *board, const char *period);
int board_where_resolve(const struct board_model *m, const char *board, enum period_kind kind,
                        const struct period_tz *tz, int retain, const char *requested,
                        struct board_where *w);
struct store *board_writes_of(const struct board_model *m);
int board_registered_memo(const struct board_model *m, const char *board, int op);

/* board_sweep.c */
void board_sweep_submit(struct board_model *m, struct store_async *conn, const char *board,
                        const struct board_settings *s);

/* board_write.c */
double board_stored_value(const char *s);
double board_decode_stored(const struct score_layout *l, const char *s);
int board_write_args_build(struct write_args *w, struct board_write_job *j, size_t at, size_t n);
/* argv[*at] = s (len bytes), then *at + 1 */
void board_write_arg(struct write_args *w, size_t *at, const char *s, size_t len);

/* write.lua's short layout (board_write_chunk.c): an upload's chunk entries[at..at+n) of job j
 * (j->ties set and not off, one target, BOARD_WRITE_BRIEF without ranks, previous values, all or
 * nothing or a digest; at 0; every entry a `set` without sub-scores, its key in range, each id
 * once; a board neither wide nor with sub-scores, tiebreak first or last; no key's tie past
 * cap) numbered key by key: a new plan (free()), or NULL for the general layout (ENOMEM too). */
struct write_chunk;
struct write_chunk *board_write_chunk_plan(const struct board_write_job *j, size_t at, size_t n,
                                           int64_t cap);
/* The arguments the plan's n entries take in the short layout. */
size_t board_write_chunk_count(const struct write_chunk *p, size_t n);
/* Those arguments into argv from *k on (w->sv holds their texts: board_write_args_free frees
 * it), and j->ties becomes what the next chunk may assume. 0 or -ENOMEM. */
int board_write_chunk_args(struct write_args *w, struct board_write_job *j, size_t n, size_t *k,
                           const struct write_chunk *p);
void board_write_args_free(struct write_args *w);
int board_write_reply_take(struct store_reply *r, struct board_write_job *j, size_t n, size_t *done,
                           int *full);

/* board_write_short.c: 1 when entries[at..n) of j go to write_one.lua rather than write.lua
 * (one entry, one board `packed` without sub-scores, no max_members, no
 * Idempotency-Key, not an upload's chunk, no brief reply; the one place that decides), and its
 * arguments (0, or a negative errno) */
int board_write_short_fits(const struct board_write_job *j, size_t at);
int board_write_short_args(struct write_short_args *w, const struct board_write_job *j, size_t at);
/* What write_one.lua's reply (r, freed) says for entries[at] of j, as board_write_reply_take
 * reads write.lua's for the same call: the same return values, *done and *full. */
int board_write_short_take(struct store_reply *r, struct board_write_job *j, size_t at,
                           size_t *done, int *full);

/* board_ctl.c */
void board_info_take(const struct store_reply *r, const struct board_where *w,
                     struct board_info *out);
void board_put_call_free(struct board_put_call *c);
int board_put_create_prepare(struct board_model *m, const char *board,
                             const struct board_settings_patch *patch, struct board_put_call *c);
int board_put_update_prepare(struct board_model *m, const char *board,
                             const struct board_settings *cur,
                             const struct board_settings_patch *patch, struct board_put_call *c);
int board_put_take(struct board_model *m, const char *board, int create,
                   const struct store_reply *r, const char **field, struct board_info *out);
void board_delete_call_free(struct board_delete_call *c);
int board_delete_prepare(struct board_model *m, const char *board, const struct board_settings *set,
                         struct board_delete_call *c);
int board_delete_take(struct board_model *m, const char *board, const struct store_reply *r);
void board_reset_prepare(struct board_model *m, const char *board, const struct board_where *w,
                         struct board_reset_call *c);
int board_one_or_enoent(const struct store_reply *r);
void board_trim_prepare(const struct board_model *m, const char *board,
                        const struct board_settings *set, const struct board_where *w, int64_t keep,
                        int64_t below_key, struct board_trim_call *c);
long long board_trim_take(const struct store_reply *r);
void board_member_delete_prepare(struct board_model *m, const char *board,
                                 const struct board_where *w, const char *id, size_t id_len,
                                 struct board_member_delete_call *c);
int board_member_delete_take(const struct store_reply *r);
int board_record_take(const struct store_reply *r, char **json);
void board_list_where(const struct board_model *m, const char *name, const struct store_reply *x,
                      char z[KEY_MAX]);
int board_list_take(struct board_list *l, size_t *cap, const struct store_reply *r,
                    uint64_t *cursor);
void board_list_sort_unique(struct board_list *l);
void board_list_sscan(const struct board_keys *k, uint64_t cursor, int want, char cur[24],
                      char cnt[16], const char *argv[5]);

#endif
