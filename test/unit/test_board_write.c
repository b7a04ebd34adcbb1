/* test_board_write.c -- the model's writes without Redis (board_write.c, through board_int.h):
 * write.lua's argv as board_write_args_build makes it (set, best, incr with a floor and a
 * ceiling; one board and several; with and without an Idempotency-Key's digest; ranks, previous
 * and brief asked) and its reply as board_write_reply_take reads it (every status, a replay, a
 * brief reply, sections' versions and trimmed members, and damaged replies refused with -EIO),
 * over replies built from RESP bytes with the store's reply functions, on a model with a fixed
 * clock over a store that never dials. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_int.h"
#include "model_fixture.h"
#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

#define NOW_MS FIXTURE_NOW_MS

#define reply_of fixture_reply

/* ---- a job of up to 3 entries on up to 3 boards */

#define NT 3
#define NE 3
struct fixture {
    struct board_write_job j;
    struct board_write_target t[NT];
    struct board_entry e[NE];
    struct board_outcome o[NT][NE];
};

static const char *const boards[NT] = {"b", "c", "d"};

/* alice set 100, bob best 200, carol incr 5 within [-10, 300] */
static void job_up(struct fixture *f, size_t nt, size_t n, int flags)
{
    memset(f, 0, sizeof(*f));
    f->e[0] = (struct board_entry){.id = "alice",
                                   .id_len = 5,
                                   .op = BOARD_OP_SET,
                                   .key = 100,
                                   .record = "{\"a\":1}",
                                   .record_len = 7};
    f->e[1] = (struct board_entry){.id = "bob", .id_len = 3, .op = BOARD_OP_BEST, .key = 200};
    f->e[2] = (struct board_entry){.id = "carol",
                                   .id_len = 5,
                                   .op = BOARD_OP_INCR,
                                   .key = 5,
                                   .has_lo = 1,
                                   .key_lo = -10,
                                   .has_hi = 1,
                                   .key_hi = 300};
    for (size_t b = 0; b < nt; b++) {
        struct board_write_target *t = &f->t[b];
        t->board = boards[b];
        board_settings_default(&t->assumed);
        t->entries = f->e;
        t->outcomes = f->o[b];
        ck_assert_int_eq(board_where_resolve(&g_m, t->board, t->assumed.period, &t->assumed.tz,
                                             t->assumed.retain, NULL, &t->where),
                         0);
    }
    f->j.targets = f->t;
    f->j.ntargets = nt;
    f->j.n = n;
    f->j.flags = flags;
    f->j.m = &g_m;
}

static const char digest[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void with_digest(struct fixture *f)
{
    f->j.idem_key = "k1";
    f->j.idem_len = 2;
    f->j.digest = digest;
}

/* argv[i] as a string of w->len[i] bytes */
static void arg_eq(const struct write_args *w, int i, const char *want)
{
    ck_assert_uint_eq(w->len[i], strlen(want));
    ck_assert_msg(memcmp(w->argv[i], want, w->len[i]) == 0, "argv[%d] is '%.*s', not '%s'", i,
                  (int)w->len[i], w->argv[i], want);
}

/* ---- arguments */

START_TEST(test_args_one_board)
{
    struct fixture f;
    job_up(&f, 1, 3, BOARD_WRITE_ATOMIC | BOARD_WRITE_CREATE);
    struct write_args w = {0};
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 3), 0);
    ck_assert_int_eq(w.nkeys, 9); /* 7 of the board, records, registry */
    ck_assert_int_eq(w.nargs, 12 + 16 + 3 * 4);
    arg_eq(&w, 0, "P:{b}:z");
    arg_eq(&w, 1, "P:{b}:meta");
    arg_eq(&w, 3, "P:{b}:idem:"); /* no Idempotency-Key: the record's bare prefix, unused */
    arg_eq(&w, 4, f.t[0].where.dense);
    arg_eq(&w, 5, f.t[0].where.ids);
    arg_eq(&w, 6, f.t[0].where.upd);
    arg_eq(&w, 8, "P:boards");
    const int g = w.nkeys; /* the 12 values before the boards' headers */
    arg_eq(&w, g + 0, "3");
    arg_eq(&w, g + 1, "1");
    arg_eq(&w, g + 2, "0"); /* no ranks */
    arg_eq(&w, g + 3, "1"); /* atomic */
    arg_eq(&w, g + 4, "1"); /* create */
    arg_eq(&w, g + 5, "0"); /* no previous */
    arg_eq(&w, g + 6, "");  /* no digest */
    char ttl[32];
    snprintf(ttl, sizeof(ttl), "%" PRId64, BOARD_IDEM_TTL_MS);
    arg_eq(&w, g + 7, ttl);
    arg_eq(&w, g + 9, ""); /* not a chunk of an upload */
    arg_eq(&w, g + 10, "0");
    const int h = g + 12; /* the board's 16 header values */
    arg_eq(&w, h + 1, score_tiebreak_name(f.t[0].assumed.layout.tiebreak));
    arg_eq(&w, h + 3, score_order_name(f.t[0].assumed.layout.order));
    arg_eq(&w, h + 7, "b");
    arg_eq(&w, h + 9, period_kind_name(PERIOD_NONE));
    arg_eq(&w, h + 11, "");
    arg_eq(&w, h + 12, "0");
    arg_eq(&w, h + 13, "packed");
    arg_eq(&w, h + 14, "0"); /* track_updated_at */
    const int e = h + 16;    /* per entry: id, op, record, then the key */
    arg_eq(&w, e + 0, "alice");
    arg_eq(&w, e + 1, "set");
    arg_eq(&w, e + 2, "{\"a\":1}");
    arg_eq(&w, e + 3, "100");
    arg_eq(&w, e + 4, "bob");
    arg_eq(&w, e + 5, "best");
    arg_eq(&w, e + 6, ""); /* no record */
    arg_eq(&w, e + 7, "200");
    arg_eq(&w, e + 8, "carol");
    arg_eq(&w, e + 9, "incr");
    arg_eq(&w, e + 11, "5 -10 300"); /* the delta, floor and ceiling: incr only */
    ck_assert_int_eq(w.nkeys + w.nargs, e + 12);
    board_write_args_free(&w);

    /* an incr with a ceiling only, and with neither */
    f.e[2].has_lo = 0;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 2, 1), 0);
    arg_eq(&w, w.nkeys + 12 + 16 + 3, "5  300");
    board_write_args_free(&w);
    f.e[2].has_hi = 0;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 2, 1), 0);
    arg_eq(&w, w.nkeys + 12 + 16 + 3, "5");
    board_write_args_free(&w);

    /* a floor or ceiling on a set is not sent; entries from `at` on */
    f.e[0].has_lo = 1;
    f.e[0].key_lo = 7;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 1, 2), 0);
    ck_assert_int_eq(w.nargs, 12 + 16 + 2 * 4);
    arg_eq(&w, w.nkeys, "2");
    arg_eq(&w, w.nkeys + 12 + 16, "bob");
    board_write_args_free(&w);
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 1), 0);
    arg_eq(&w, w.nkeys + 12 + 16 + 3, "100");
    board_write_args_free(&w);

    /* a chunk of an upload: its sequence key in the idempotency record's place, its TTL, the
     * chunk's number and whether the one before it must be applied */
    f.j.flags = BOARD_WRITE_CREATE | BOARD_WRITE_BRIEF;
    f.j.upload = "0123abcd";
    f.j.upload_chunk = 4;
    f.j.upload_after = 1;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 3), 0);
    ck_assert_int_eq(w.nargs, 12 + 16 + 3 * 4);
    arg_eq(&w, 3, "P:{b}:upload:0123abcd");
    snprintf(ttl, sizeof(ttl), "%" PRId64, BOARD_UPLOAD_SEQ_TTL_MS);
    arg_eq(&w, w.nkeys + 2, "r"); /* brief */
    arg_eq(&w, w.nkeys + 7, ttl);
    arg_eq(&w, w.nkeys + 9, "4");
    arg_eq(&w, w.nkeys + 10, "1");
    board_write_args_free(&w);
}
END_TEST

/* An upload's chunk of `set` entries in write.lua's short layout: the stored values numbered
 * here per key (tiebreak first: up from 0, or from the tie the last chunk left its key at), the
 * records, the keys, the keys continued; what the next chunk may assume; the general layout for
 * a chunk it cannot describe (an id twice, another op, a tiebreak id board, a lapsed upload). */
START_TEST(test_args_short_layout)
{
    struct fixture f;
    job_up(&f, 1, 3, BOARD_WRITE_CREATE | BOARD_WRITE_BRIEF);
    f.e[1] = (struct board_entry){.id = "bob", .id_len = 3, .op = BOARD_OP_SET, .key = 100};
    f.e[2] = (struct board_entry){
        .id = "carol", .id_len = 5, .op = BOARD_OP_SET, .key = 7, .record = "{}", .record_len = 2};
    struct board_write_ties ties = {.n = 1, .key = {7}, .next = {5}};
    f.j.upload = "0123abcd";
    f.j.ties = &ties;
    struct write_args w = {0};
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 3), 0);
    const int g = w.nkeys, e = g + 12 + 16;
    arg_eq(&w, g + 11, "f");
    ck_assert_int_eq(w.nargs, 12 + 16 + 2 + 3 * 3 + 2 + 2);
    int64_t base = INT64_C(1) << score_codec_tie_bits(&f.t[0].assumed.layout);
    char v[32];
    arg_eq(&w, e + 0, "2"); /* keys */
    arg_eq(&w, e + 1, "1"); /* keys continued */
    snprintf(v, sizeof(v), "%" PRId64, 100 * base);
    arg_eq(&w, e + 2, v);
    arg_eq(&w, e + 3, "alice");
    snprintf(v, sizeof(v), "%" PRId64, 100 * base + 1); /* bob after alice */
    arg_eq(&w, e + 4, v);
    arg_eq(&w, e + 5, "bob");
    snprintf(v, sizeof(v), "%" PRId64, 7 * base + 5); /* where the last chunk left key 7 */
    arg_eq(&w, e + 6, v);
    arg_eq(&w, e + 7, "carol");
    arg_eq(&w, e + 8, "{\"a\":1}");
    arg_eq(&w, e + 9, "");
    arg_eq(&w, e + 10, "{}");
    arg_eq(&w, e + 11, "100");
    arg_eq(&w, e + 12, "7");
    arg_eq(&w, e + 13, "2"); /* key 7 (the second) goes on at tie 5 */
    arg_eq(&w, e + 14, "5");
    board_write_args_free(&w);
    ck_assert_uint_eq(ties.n, 2);
    ck_assert(ties.key[0] == 100 && ties.next[0] == 2 && ties.key[1] == 7 && ties.next[1] == 6);

    /* tiebreak last: down from cap - 1 */
    f.t[0].assumed.layout.tiebreak = SCORE_TIEBREAK_LAST;
    ties.n = 0;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 2), 0);
    arg_eq(&w, g + 11, "f");
    snprintf(v, sizeof(v), "%" PRId64, 100 * base + atomic_load(&board_tie_cap) - 2);
    arg_eq(&w, e + 4, v);
    board_write_args_free(&w);

    /* what the short layout cannot say: the general layout */
    const char *why[] = {"id twice", "best", "tiebreak id", "lapsed", "resumed"};
    for (int c = 0; c < 5; c++) {
        f.t[0].assumed.layout.tiebreak = SCORE_TIEBREAK_FIRST;
        f.e[1] = (struct board_entry){.id = "bob", .id_len = 3, .op = BOARD_OP_SET, .key = 100};
        ties.off = 0;
        size_t at = 0;
        if (c == 0)
            f.e[1].id = "alice", f.e[1].id_len = 5;
        else if (c == 1)
            f.e[1].op = BOARD_OP_BEST;
        else if (c == 2)
            f.t[0].assumed.layout.tiebreak = SCORE_TIEBREAK_ID;
        else if (c == 3)
            ties.off = 1;
        else
            at = 1;
        memset(&w, 0, sizeof(w));
        ck_assert_int_eq(board_write_args_build(&w, &f.j, at, 3 - at), 0);
        ck_assert_msg(w.len[g + 11] == 0, "%s: the short layout", why[c]);
        ck_assert_int_eq(w.nargs, 12 + 16 + 4 * (3 - (int)at));
        board_write_args_free(&w);
    }
}
END_TEST

START_TEST(test_args_several_boards)
{
    struct fixture f;
    job_up(&f, 3, 2, BOARD_WRITE_RANKS | BOARD_WRITE_PREV);
    struct write_args w = {0};
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 2), 0);
    ck_assert_int_eq(w.nkeys, 3 * 7 + 2);
    ck_assert_int_eq(w.nargs, 12 + 3 * 16 + 2 * (3 + 3));
    arg_eq(&w, 0, "P:{b}:z");
    arg_eq(&w, 7, "P:{c}:z");
    arg_eq(&w, 8, "P:{c}:meta");
    arg_eq(&w, 14, "P:{d}:z");
    const int g = w.nkeys;
    arg_eq(&w, g + 0, "2");
    arg_eq(&w, g + 1, "3");
    arg_eq(&w, g + 2, "1"); /* ranks */
    arg_eq(&w, g + 3, "0");
    arg_eq(&w, g + 5, "1"); /* previous */
    arg_eq(&w, g + 12 + 7, "b");
    arg_eq(&w, g + 12 + 16 + 7, "c");
    arg_eq(&w, g + 12 + 32 + 7, "d");
    const int e = g + 12 + 3 * 16;
    arg_eq(&w, e + 0, "alice");
    arg_eq(&w, e + 3, "100"); /* board b */
    arg_eq(&w, e + 4, "100"); /* board c */
    arg_eq(&w, e + 5, "100"); /* board d */
    arg_eq(&w, e + 6, "bob");
    board_write_args_free(&w);
}
END_TEST

START_TEST(test_args_digest_and_brief)
{
    struct fixture f;
    job_up(&f, 1, 1, BOARD_WRITE_ATOMIC | BOARD_WRITE_BRIEF);
    struct write_args w = {0};
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 1), 0);
    arg_eq(&w, w.nkeys + 2, "r"); /* brief */
    arg_eq(&w, w.nkeys + 6, "");
    board_write_args_free(&w);

    /* a digest: the record's key names the Idempotency-Key, and a brief reply is not asked
     * (a replay's stored sections are full ones) */
    with_digest(&f);
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 1), 0);
    arg_eq(&w, 3, "P:{b}:idem:k1");
    arg_eq(&w, w.nkeys + 2, "0");
    arg_eq(&w, w.nkeys + 6, digest);
    board_write_args_free(&w);

    /* ranks win over brief */
    f.j.flags |= BOARD_WRITE_RANKS;
    f.j.digest = NULL;
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(board_write_args_build(&w, &f.j, 0, 1), 0);
    arg_eq(&w, w.nkeys + 2, "1");
    arg_eq(&w, w.nkeys + 6, ""); /* a key without a digest: none sent */
    board_write_args_free(&w);
}
END_TEST

/* ---- replies */

/* The stored value of `score` at tie position 0 under l. */
static long long stored_of(const struct score_layout *l, double score)
{
    int64_t scaled = 0;
    ck_assert_int_eq(score_codec_scale(l, score, &scaled), 0);
    double stored = 0;
    ck_assert_int_eq(score_codec_pack(l, score_codec_key(l, scaled), 0, &stored), 0);
    return (long long)stored;
}

/* A section's head: listed, version, 2^T (here 2: tiebreak first), order, decimals, trimmed */
#define HEAD(listed, version, trimmed)                                                             \
    ":" #listed "\r\n:" #version "\r\n:2\r\n$4\r\ndesc\r\n:0\r\n:" #trimmed "\r\n"

START_TEST(test_reply_applied)
{
    struct fixture f;
    job_up(&f, 1, 2, BOARD_WRITE_RANKS | BOARD_WRITE_PREV);
    const struct score_layout *l = &f.t[0].assumed.layout;
    char resp[512];
    /* alice: applied, 42, rank 1, updated, was 40 at rank 3; bob: refused alone (range),
     * stored as the string an older rankd wrote, not on the board, none before */
    snprintf(resp, sizeof(resp),
             "*6\r\n:0\r\n:2\r\n:0\r\n:0\r\n:0\r\n"
             "*18\r\n" HEAD(1, 7, 4) ":0\r\n:%lld\r\n:0\r\n:1\r\n:%lld\r\n:2\r\n"
                                     ":1\r\n$%d\r\n%lld\r\n:-1\r\n:0\r\n$-1\r\n:-1\r\n",
             stored_of(l, 42), stored_of(l, 40), snprintf(NULL, 0, "%lld", stored_of(l, 9)),
             stored_of(l, 9));
    size_t done = 99;
    int full = -1;
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 2, &done, &full), 0);
    ck_assert_uint_eq(done, 2);
    ck_assert_int_eq(full, 0);
    ck_assert_int_eq(f.j.replayed, 0);
    ck_assert_int_eq(f.j.listed[0], 1);
    ck_assert_int_eq(f.t[0].version, 7);
    ck_assert_int_eq(f.t[0].trimmed, 4);
    const struct board_outcome *a = &f.o[0][0], *b = &f.o[0][1];
    ck_assert_int_eq(a->rc, 0);
    ck_assert_double_eq(a->score, 42);
    ck_assert_int_eq(a->rank, 1);
    ck_assert_int_eq(a->updated, 1);
    ck_assert_int_eq(a->has_prev, 1);
    ck_assert_double_eq(a->prev_score, 40);
    ck_assert_int_eq(a->prev_rank, 3);
    ck_assert_int_eq(b->rc, -ERANGE);
    ck_assert_double_eq(b->score, 9);
    ck_assert_int_eq(b->rank, 0);
    ck_assert_int_eq(b->has_prev, 0);
    ck_assert_int_eq(b->prev_rank, 0);
}
END_TEST

/* A sub-score board (desc, asc columns): a stored value {stored, column keys...} gives the
 * sub-scores as sent (a desc column's key is -v), the previous one too; a stored value alone (a
 * record an older rankd wrote, replayed) gives none. */
START_TEST(test_reply_subscores)
{
    struct fixture f;
    job_up(&f, 1, 2, BOARD_WRITE_RANKS | BOARD_WRITE_PREV);
    struct score_layout *l = &f.t[0].assumed.layout;
    l->wide = 1;
    l->nsub = 2;
    l->sub_asc[0] = 0;
    l->sub_asc[1] = 1;
    /* 2^T 1 (wide): the stored value is the key, -score on a desc board */
    const char *resp = "*6\r\n:0\r\n:2\r\n:0\r\n:0\r\n:0\r\n"
                       "*18\r\n:0\r\n:3\r\n:1\r\n$4\r\ndesc\r\n:0\r\n:0\r\n"
                       ":0\r\n*3\r\n:-10\r\n:-3\r\n:-9007199254740991\r\n:0\r\n:1\r\n"
                       "*3\r\n:-9\r\n:4\r\n:6\r\n:1\r\n"
                       ":0\r\n:-7\r\n:1\r\n:0\r\n:-7\r\n:1\r\n";
    size_t done = 99;
    int full = -1;
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 2, &done, &full), 0);
    ck_assert_uint_eq(done, 2);
    const struct board_outcome *a = &f.o[0][0], *b = &f.o[0][1];
    ck_assert_double_eq(a->score, 10);
    ck_assert_int_eq(a->nsub, 2);
    ck_assert_int_eq(a->sub[0], 3);
    ck_assert_int_eq(a->sub[1], -9007199254740991);
    ck_assert_int_eq(a->has_prev, 1);
    ck_assert_double_eq(a->prev_score, 9);
    ck_assert_int_eq(a->prev_sub[0], -4);
    ck_assert_int_eq(a->prev_sub[1], 6);
    ck_assert_double_eq(b->score, 7);
    ck_assert_int_eq(b->nsub, 0);
    ck_assert_double_eq(b->prev_score, 7);
    ck_assert_int_eq(b->rank, 2);
}
END_TEST

START_TEST(test_reply_replayed_several)
{
    struct fixture f;
    job_up(&f, 2, 1, BOARD_WRITE_ATOMIC | BOARD_WRITE_BRIEF);
    with_digest(&f); /* a digest: full sections, brief or not */
    const char *resp =
        "*7\r\n:0\r\n:1\r\n:0\r\n:0\r\n:1\r\n"
        "*12\r\n" HEAD(0, 3, 0) ":0\r\n:5\r\n:-1\r\n:0\r\n$0\r\n\r\n:-1\r\n"
                                "*12\r\n" HEAD(0, 8,
                                               2) ":0\r\n:5\r\n:-1\r\n:0\r\n$0\r\n\r\n:-1\r\n";
    size_t done = 0;
    int full = 0;
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 1, &done, &full), 0);
    ck_assert_uint_eq(done, 1);
    ck_assert_int_eq(f.j.replayed, 1);
    ck_assert_int_eq(f.j.listed[0] + f.j.listed[1], 0);
    ck_assert_int_eq(f.t[0].version, 3);
    ck_assert_int_eq(f.t[1].version, 8);
    ck_assert_int_eq(f.t[1].trimmed, 2);
    ck_assert_int_eq(f.o[1][0].has_prev, 0); /* '' is no previous value */
}
END_TEST

START_TEST(test_reply_brief)
{
    struct fixture f;
    job_up(&f, 1, 3, BOARD_WRITE_BRIEF);
    f.o[0][0].rc = f.o[0][1].rc = f.o[0][2].rc = 12345;
    /* three handled, entry 1 refused alone */
    const char *resp = "*6\r\n:0\r\n:3\r\n:0\r\n:0\r\n:0\r\n*7\r\n" HEAD(0, 2, 0) ":1\r\n";
    size_t done = 0;
    int full = 0;
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 3, &done, &full), 0);
    ck_assert_uint_eq(done, 3);
    ck_assert_int_eq(f.o[0][0].rc, 0);
    ck_assert_int_eq(f.o[0][1].rc, -ERANGE);
    ck_assert_int_eq(f.o[0][2].rc, 0);
    /* an index outside the entries handled, or not an integer: damaged */
    resp = "*6\r\n:0\r\n:3\r\n:0\r\n:0\r\n:0\r\n*7\r\n" HEAD(0, 2, 0) ":3\r\n";
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 3, &done, &full), -EIO);
    resp = "*6\r\n:0\r\n:3\r\n:0\r\n:0\r\n:0\r\n*7\r\n" HEAD(0, 2, 0) "$1\r\n1\r\n";
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 3, &done, &full), -EIO);
    /* a chunk sent in the short layout and handled in the general one (info 'g'): the upload's
     * next chunks go in the general layout */
    struct board_write_ties ties = {0};
    f.j.ties = &ties;
    resp = "*6\r\n:0\r\n:3\r\n$0\r\n\r\n:0\r\n:0\r\n*6\r\n" HEAD(0, 2, 0);
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 3, &done, &full), 0);
    ck_assert_int_eq(ties.off, 0);
    resp = "*6\r\n:0\r\n:3\r\n$1\r\ng\r\n:0\r\n:0\r\n*6\r\n" HEAD(0, 2, 0);
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 3, &done, &full), 0);
    ck_assert_int_eq(ties.off, 1);
}
END_TEST

START_TEST(test_reply_statuses)
{
    struct fixture f;
    job_up(&f, 2, 2, BOARD_WRITE_ATOMIC);
    size_t done = 99;
    int full = 0;
    /* 1: target 1's settings differ; 4: no board; 5: another digest -- nothing taken */
    ck_assert_int_eq(board_write_reply_take(reply_of("*5\r\n:1\r\n:0\r\n:0\r\n:1\r\n:0\r\n"), &f.j,
                                            2, &done, &full),
                     -EAGAIN);
    ck_assert_uint_eq(f.j.target, 1);
    ck_assert_uint_eq(done, 99);
    ck_assert_int_eq(board_write_reply_take(reply_of("*5\r\n:4\r\n:0\r\n:0\r\n:0\r\n:0\r\n"), &f.j,
                                            2, &done, &full),
                     -ENOENT);
    ck_assert_uint_eq(f.j.target, 0);
    ck_assert_int_eq(board_write_reply_take(reply_of("*5\r\n:5\r\n:0\r\n:0\r\n:1\r\n:0\r\n"), &f.j,
                                            2, &done, &full),
                     -EKEYREJECTED);
    /* 6: an upload's chunk whose predecessor is not applied whole -- nothing taken */
    ck_assert_int_eq(board_write_reply_take(reply_of("*5\r\n:6\r\n:0\r\n:0\r\n:0\r\n:0\r\n"), &f.j,
                                            2, &done, &full),
                     -EALREADY);
    ck_assert_uint_eq(done, 99);
    /* 2: all or nothing, entry 1 of target 1 would leave the range */
    ck_assert_int_eq(board_write_reply_take(reply_of("*5\r\n:2\r\n:1\r\n:0\r\n:1\r\n:0\r\n"), &f.j,
                                            2, &done, &full),
                     -ERANGE);
    ck_assert_uint_eq(done, 1);
    ck_assert_uint_eq(f.j.target, 1);
}
END_TEST

START_TEST(test_reply_tie_group_full)
{
    struct fixture f;
    job_up(&f, 1, 2, 0);
    /* 3: entry 0 applied, then target 0's group of key 77 was full (partial) */
    const char *resp = "*6\r\n:3\r\n:1\r\n$2\r\n77\r\n:0\r\n:0\r\n"
                       "*12\r\n" HEAD(0, 4, 0) ":0\r\n:5\r\n:-1\r\n:1\r\n$-1\r\n:-1\r\n";
    size_t done = 0;
    int full = 0;
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 2, &done, &full), 0);
    ck_assert_int_eq(full, 1);
    ck_assert_uint_eq(done, 1);
    ck_assert_str_eq(f.j.full_key, "77");
    ck_assert_uint_eq(f.j.full_target, 0);
    ck_assert_int_eq(f.o[0][0].updated, 1);
    /* a key that is not a string reads as group 0 */
    resp = "*6\r\n:3\r\n:0\r\n:9\r\n:0\r\n:0\r\n*6\r\n" HEAD(0, 4, 0);
    ck_assert_int_eq(board_write_reply_take(reply_of(resp), &f.j, 2, &done, &full), 0);
    ck_assert_str_eq(f.j.full_key, "0");
    ck_assert_uint_eq(done, 0);
}
END_TEST

/* Damaged replies: -EIO, freed, nothing read out of bounds (ASan runs this suite too). */
#define RESULT1 ":0\r\n:5\r\n:-1\r\n:0\r\n$-1\r\n:-1\r\n"
#define SECTION1 "*6\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n*12\r\n" HEAD(0, 1, 0)
START_TEST(test_reply_damaged)
{
    static const char *const bad[] = {
        "-ERR something\r\n",                         /* an error reply */
        ":0\r\n",                                     /* not an array */
        "*4\r\n:0\r\n:1\r\n:0\r\n:0\r\n",             /* a short head */
        "*5\r\n$1\r\n0\r\n:1\r\n:0\r\n:0\r\n:0\r\n",  /* status not an integer */
        "*5\r\n:0\r\n$1\r\n1\r\n:0\r\n:0\r\n:0\r\n",  /* done not an integer */
        "*5\r\n:0\r\n:1\r\n:0\r\n$1\r\n0\r\n:0\r\n",  /* target not an integer */
        "*5\r\n:0\r\n:1\r\n:0\r\n:0\r\n$-1\r\n",      /* replayed not an integer */
        "*5\r\n:0\r\n:3\r\n:0\r\n:0\r\n:0\r\n",       /* more handled than sent */
        "*5\r\n:1\r\n:0\r\n:0\r\n:1\r\n:0\r\n",       /* a target that is none */
        "*5\r\n:0\r\n:-1\r\n:0\r\n:0\r\n:0\r\n",      /* a negative count */
        "*5\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n",       /* no section */
        "*6\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n:1\r\n", /* a section not an array */
        "*6\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n*5\r\n:0\r\n:1\r\n:2\r\n$4\r\ndesc\r\n:0\r\n",
        "*6\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n*6\r\n" HEAD(0, 1, 0), /* a result short */
        "*6\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n*12\r\n:0\r\n$1\r\n1\r\n:2\r\n$4\r\ndesc\r\n:0\r\n"
        ":0\r\n:0\r\n:5\r\n:-1\r\n:1\r\n$-1\r\n:-1\r\n", /* a version not an integer */
        /* one entry's result of a one-board section, damaged: */
        SECTION1 "$1\r\n0\r\n:5\r\n:-1\r\n:1\r\n$-1\r\n:-1\r\n", /* a code not an integer */
        SECTION1 ":0\r\n:5\r\n$-1\r\n:1\r\n$-1\r\n:-1\r\n",      /* a rank nil */
        SECTION1 ":0\r\n:5\r\n:-1\r\n*0\r\n$-1\r\n:-1\r\n",      /* updated an array */
        SECTION1 ":0\r\n:5\r\n:-1\r\n:0\r\n$-1\r\n+OK\r\n",      /* a previous rank a status */
        /* more sections than targets */
        "*7\r\n:0\r\n:1\r\n:0\r\n:0\r\n:0\r\n*12\r\n" HEAD(0, 1, 0) RESULT1 ":0\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct fixture f;
        job_up(&f, 1, 2, BOARD_WRITE_RANKS);
        size_t done = 99;
        int full = 0;
        ck_assert_msg(board_write_reply_take(reply_of(bad[i]), &f.j, 1, &done, &full) == -EIO,
                      "reply %zu was taken", i);
        ck_assert_msg(done == 99, "reply %zu: done %zu", i, done);
        ck_assert_int_eq(f.j.replayed, 0);
    }
}
END_TEST

Suite *board_write_suite(void)
{
    Suite *s = suite_create("board_write");
    TCase *tc = tcase_create("single");
    tcase_add_checked_fixture(tc, fixture_setup_single_fixed, fixture_teardown);
    tcase_add_test(tc, test_args_one_board);
    tcase_add_test(tc, test_args_short_layout);
    tcase_add_test(tc, test_args_several_boards);
    tcase_add_test(tc, test_args_digest_and_brief);
    tcase_add_test(tc, test_reply_applied);
    tcase_add_test(tc, test_reply_subscores);
    tcase_add_test(tc, test_reply_replayed_several);
    tcase_add_test(tc, test_reply_brief);
    tcase_add_test(tc, test_reply_statuses);
    tcase_add_test(tc, test_reply_tie_group_full);
    tcase_add_test(tc, test_reply_damaged);
    suite_add_tcase(s, tc);
    return s;
}
