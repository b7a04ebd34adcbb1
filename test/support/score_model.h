/*
 * score_model.h -- integration-test support: an independent model of a board's order, and the
 * checks that rankd's reads over HTTP equal it. The model knows nothing of the encoding: per
 * member an integer score, its sub-scores (0 to MODEL_COLS columns) and the sequence number of
 * the write that last changed them. Order: the score (desc: higher first; asc: lower first),
 * then each sub-score in column order by its own direction, then the board's tiebreak (first:
 * earlier sequence first; last: later first; id: id bytes), then the id. Equal (score,
 * sub-scores) tuples are ties for the competition and dense ranks. Every member is written with
 * the record {"of": <its id>}.
 */
#ifndef RANKD_TEST_SCORE_MODEL_H
#define RANKD_TEST_SCORE_MODEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "fixture.h"

#define MODEL_MAX INT64_C(9007199254740991) /* 2^53 - 1: a wide board's range */
#define MODEL_COLS 4                        /* sub-score columns at most (board.h) */

struct model_member {
    char id[16];
    int present;
    int64_t score;
    int64_t sub[MODEL_COLS];
    uint64_t seq;
};

struct model_board {
    char name[32];
    int nsub;            /**< sub-score columns (0: none) */
    int asc[MODEL_COLS]; /**< column c ascending */
    enum score_order order;
    enum score_tiebreak tiebreak;
    struct model_member *m; /**< members m000, m001, ... (model_init) */
    size_t n;
    uint64_t seq;
    pthread_mutex_t lock; /**< the sequence, for writers on several threads */
};

/** n members m000.. absent, sequence 0, the rest of *b as set by the caller (name, nsub, asc,
 *  order, tiebreak). */
void model_init(struct model_board *b, size_t n);

/** Free the members (*b may be model_init'ed again). */
void model_free(struct model_board *b);

/** <0: the tuple (s1, u1) ranks before (s2, u2); 0 equal; >0 after. */
int model_tuple_cmp(const struct model_board *b, int64_t s1, const int64_t *u1, int64_t s2,
                    const int64_t *u2);

/** The present members in rank order into v (b->n places); returns how many. */
size_t model_sorted(const struct model_board *b, const struct model_member **v);

/** Apply a write of score v and sub-scores u (b->nsub of them; NULL when none) to member m: 0
 *  when a result would leave [-MODEL_MAX, MODEL_MAX] (rankd refuses it; nothing changes). */
int model_apply(struct model_board *b, struct model_member *m, enum board_op op, int64_t v,
                const int64_t *u);

/** Competition and dense ranks of the sorted v[0..n). */
void model_ranks(const struct model_board *b, const struct model_member *const *v, size_t n,
                 int64_t *comp, int64_t *dense);

/** 1 when object o's "subscores" are e's, exactly. */
int model_subs_equal(const struct model_board *b, const cJSON *o, const struct model_member *e);

/** The items are v[from ..] (want of them) with ranks from+1 .. (or ranks[from ..]): each
 *  row's id, score, rank, record and (when b->nsub) sub-scores. */
void model_expect_items(const struct model_board *b, const char *what, const cJSON *items,
                        const struct model_member *const *v, size_t from, size_t want,
                        const int64_t *ranks);

/** GET path on rankd at port: 200, its JSON (r's; http_result_free). */
cJSON *model_get(int port, const char *path, struct http_result *r);

/** A cursor walk over the whole board on rankd at port: page 1 of `size`, then each next. */
void model_expect_cursor_walk(int port, const struct model_board *b,
                              const struct model_member *const *v, size_t n, int size);

/** The members whose score is in [lo, hi] on one page of 100 (rank?min=&max=). */
void model_expect_range(int port, const struct model_board *b, const struct model_member *const *v,
                        size_t n, int64_t lo, int64_t hi);

/** The export: NDJSON, one line per member in rank order, with its score (and sub-scores). */
void model_expect_export(int port, const struct model_board *b, const struct model_member *const *v,
                         size_t n);

/** The 5 members around v[i] (members/{id}/around?size=5). */
void model_expect_around(int port, const struct model_board *b, const struct model_member *const *v,
                         size_t n, size_t i);

#endif
