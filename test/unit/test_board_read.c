/* test_board_read.c -- the model's reads without Redis (board_read.h): each read script's call as
 * board_read_prepare, board_lookup_prepare and board_boards_prepare build it (keys, the prelude's
 * arguments, each script's own, on one Redis and on a cluster), and each reply as the board_*_take
 * functions take it, over replies built from RESP bytes with the store's reply functions (as
 * test_store_reply.c does): found, missing, no board, a retry (periods learnt), dense ranks
 * unavailable, a stale layout, an expired cursor, an error reply and a short reply. The model is
 * a real struct board_model over a store that never dials. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_int.h"
#include "board_read.h"
#include "model_fixture.h"
#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

/* ---- replies from RESP bytes */

struct resp {
    char b[8192];
    size_t n;
};

__attribute__((format(printf, 2, 3))) static void put(struct resp *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(r->b + r->n, sizeof(r->b) - r->n, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(k, 0);
    r->n += (size_t)k;
    ck_assert_uint_lt(r->n, sizeof(r->b));
}

static void bulk(struct resp *r, const char *s)
{
    put(r, "$%zu\r\n%s\r\n", strlen(s), s);
}

/* The settings hash as a read script opens its reply with: page_size 2, version 7. */
static void settings(struct resp *r)
{
    put(r, "*4\r\n");
    bulk(r, "page_size");
    bulk(r, "2");
    bulk(r, "version");
    bulk(r, "7");
}

/* The stored value (as text) of `score` with tie-break `tie` under the default layout (order desc:
 * the key packs the score negated, as test_board_settings' page does). */
static void stored(struct resp *r, int64_t score, int64_t tie)
{
    struct board_settings s;
    board_settings_default(&s);
    double v = 0;
    ck_assert_int_eq(score_codec_pack(&s.layout, -score, tie, &v), 0);
    char text[40];
    snprintf(text, sizeof(text), "%.17g", v);
    bulk(r, text);
}

static struct store_reply *reply_of(const struct resp *r)
{
    return fixture_reply_n(r->b, r->n);
}

static struct store_reply *reply_text(const char *resp)
{
    struct resp r = {.n = 0};
    put(&r, "%s", resp);
    return reply_of(&r);
}

#define RETRY "*4\r\n$5\r\nretry\r\n$5\r\ndaily\r\n$1\r\n0\r\n$1\r\n1\r\n"
#define DENSE "*1\r\n$17\r\ndense_unavailable\r\n"

/* ---- the model: g_m over a store that is never dialled (model_fixture.h) */

static void assert_arg(const char *const *argv, const size_t *lens, int i, const char *want)
{
    ck_assert_msg(lens[i] == strlen(want) && memcmp(argv[i], want, lens[i]) == 0,
                  "argv[%d] is '%.*s', not '%s'", i, (int)lens[i], argv[i], want);
}

static void where(struct board_where *w)
{
    ck_assert_int_eq(board_where_cached(&g_m, "b", NULL, w), 0);
}

/* ---- prepare */

START_TEST(test_prepare_page)
{
    struct board_where w;
    where(&w);
    struct board_read_args a = {.kind = BOARD_READ_PAGE, .rank = RANK_DENSE, .page = 3};
    struct board_read r;
    board_read_prepare(&g_m, "b", &w, &a, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_PAGE));
    ck_assert_int_eq(r.nkeys, 6);
    ck_assert_int_eq(r.nargs, 6);
    assert_arg(r.argv, r.lens, 0, "P:{b}:meta");
    assert_arg(r.argv, r.lens, 1, "P:{b}:z");
    assert_arg(r.argv, r.lens, 2, "P:items");
    assert_arg(r.argv, r.lens, 3, "P:{b}:dense");
    assert_arg(r.argv, r.lens, 4, "P:{b}:ids");
    assert_arg(r.argv, r.lens, 5, "P:{b}:upd");
    assert_arg(r.argv, r.lens, 6, period_kind_name(PERIOD_NONE));
    assert_arg(r.argv, r.lens, 7, "0");
    assert_arg(r.argv, r.lens, 8, "1");
    assert_arg(r.argv, r.lens, 9, rank_type_name(RANK_DENSE));
    assert_arg(r.argv, r.lens, 10, "3");
    assert_arg(r.argv, r.lens, 11, "0"); /* size 0: the board's page_size */
}
END_TEST

/* On a cluster the records hash is in another slot: the script is given the settings again. */
START_TEST(test_prepare_page_cluster)
{
    struct board_where w;
    where(&w);
    struct board_read_args a = {.kind = BOARD_READ_PAGE, .page = 1, .size = 10};
    struct board_read r;
    board_read_prepare(&g_m, "b", &w, &a, &r);
    assert_arg(r.argv, r.lens, 0, "P:{b}:meta");
    assert_arg(r.argv, r.lens, 2, "P:{b}:meta");
    assert_arg(r.argv, r.lens, 5,
               "P:{b}:z"); /* no board tracks updated_at there: a key in the slot */
    assert_arg(r.argv, r.lens, 11, "10");
}
END_TEST

START_TEST(test_prepare_each_kind)
{
    struct board_where w;
    where(&w);
    struct board_read r;
    struct board_read_args a = {.kind = BOARD_READ_MEMBER, .id = "alice\0x", .id_len = 7};
    board_read_prepare(&g_m, "b", &w, &a, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_MEMBER));
    ck_assert_int_eq(r.nargs, 5);
    ck_assert_uint_eq(r.lens[10], 7); /* binary-safe: sent with its length */

    a.kind = BOARD_READ_AROUND;
    a.size = 5;
    board_read_prepare(&g_m, "b", &w, &a, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_AROUND));
    ck_assert_int_eq(r.nargs, 6);
    assert_arg(r.argv, r.lens, 11, "5");

    struct board_read_args s = {.kind = BOARD_READ_AROUND_SCORE, .key = 42, .size = 4};
    s.layout.order = SCORE_ORDER_ASC;
    s.layout.tiebreak = SCORE_TIEBREAK_LAST;
    s.layout.decimals = 2;
    board_read_prepare(&g_m, "b", &w, &s, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_AROUND_SCORE));
    ck_assert_int_eq(r.nargs, 10);
    assert_arg(r.argv, r.lens, 10, score_order_name(SCORE_ORDER_ASC));
    assert_arg(r.argv, r.lens, 11, score_tiebreak_name(SCORE_TIEBREAK_LAST));
    assert_arg(r.argv, r.lens, 12, "2");
    assert_arg(r.argv, r.lens, 13, "42");
    assert_arg(r.argv, r.lens, 14, "4");
    assert_arg(r.argv, r.lens, 15, "packed"); /* the score_layout judged under */
    s.refused = 1; /* refused under that layout: no key, the script confirms the layout */
    board_read_prepare(&g_m, "b", &w, &s, &r);
    ck_assert_uint_eq(r.lens[13], 0);

    /* a percentile is read with ordinal ranks whatever was asked */
    struct board_read_args p = {
        .kind = BOARD_READ_PERCENTILE, .rank = RANK_DENSE, .num = 1, .den = 4};
    board_read_prepare(&g_m, "b", &w, &p, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_PERCENTILE));
    assert_arg(r.argv, r.lens, 9, rank_type_name(RANK_ORDINAL));
    assert_arg(r.argv, r.lens, 10, "1");
    assert_arg(r.argv, r.lens, 11, "4");
    p.kind = BOARD_READ_TOP;
    board_read_prepare(&g_m, "b", &w, &p, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_TOP));
    assert_arg(r.argv, r.lens, 9, rank_type_name(RANK_DENSE));
}
END_TEST

START_TEST(test_prepare_walk)
{
    struct board_where w;
    where(&w);
    struct board_read_args a = {.kind = BOARD_READ_WALK,
                                .has_lo = 1,
                                .lo = -5,
                                .hi = 99,
                                .walk = BOARD_WALK_AFTER,
                                .page = 2,
                                .edge_stored = 123,
                                .edge_id = "bob",
                                .edge_id_len = 3,
                                .edge_gen = 9,
                                .size = 20};
    struct board_read r;
    board_read_prepare(&g_m, "b", &w, &a, &r);
    ck_assert_ptr_eq(r.script, board_script(SCRIPT_WALK));
    ck_assert_int_eq(r.nargs, 18);
    ck_assert_uint_eq(r.lens[23], 0); /* no sub-score bytes: a board without sub-scores */
    assert_arg(r.argv, r.lens, 12, "0");
    assert_arg(r.argv, r.lens, 13, "-5");
    ck_assert_uint_eq(r.lens[14], 0); /* no upper bound */
    assert_arg(r.argv, r.lens, 15, "after");
    assert_arg(r.argv, r.lens, 16, "2");
    assert_arg(r.argv, r.lens, 17, "123");
    assert_arg(r.argv, r.lens, 18, "bob");
    assert_arg(r.argv, r.lens, 19, "9");
    assert_arg(r.argv, r.lens, 20, "20");
    assert_arg(r.argv, r.lens, 21, "0");      /* the edge's tie position (a wide board's) */
    assert_arg(r.argv, r.lens, 22, "packed"); /* the score_layout judged under */
    a.edge_id = NULL;
    a.walk = BOARD_WALK_CHECK;
    board_read_prepare(&g_m, "b", &w, &a, &r);
    ck_assert_uint_eq(r.lens[18], 0);
    assert_arg(r.argv, r.lens, 15, "check");
}
END_TEST

/* ---- take */

/* The answers every read take shares before its own shape: error, retry, dense, nil, short. */
START_TEST(test_take_common_answers)
{
    struct board_member *mb = NULL;
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_text("-ERR boom\r\n"), &mb), -EIO);
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_text(RETRY), &mb), -EAGAIN);
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_text(DENSE), &mb), -ENOSYS);
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_text("$-1\r\n"), &mb), -ENOENT);
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_text("*2\r\n*0\r\n:0\r\n"), &mb), -EIO);
    ck_assert_ptr_null(mb);
    /* the retry taught the view the board's periods: the next call is prepared for them */
    struct board_where w;
    where(&w);
    ck_assert_int_eq(w.kind, PERIOD_DAILY);
    ck_assert_ptr_nonnull(strstr(w.z, "P:{b}:z:"));
}
END_TEST

START_TEST(test_member_take)
{
    struct resp r = {.n = 0};
    put(&r, "*6\r\n");
    settings(&r);
    put(&r, ":10\r\n");
    stored(&r, 120, 0);
    put(&r, ":3\r\n");
    bulk(&r, "{\"x\":1}");
    put(&r, ":2\r\n");
    struct board_member *mb = NULL;
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_of(&r), &mb), 0);
    ck_assert_int_eq(mb->total, 10);
    ck_assert_double_eq(mb->score, 120);
    ck_assert_int_eq(mb->ordinal, 4);
    ck_assert_int_eq(mb->rank, 2);
    ck_assert_uint_eq(mb->record_len, 7);
    ck_assert_int_eq(mb->settings.page_size, 2);
    ck_assert_int_eq(mb->settings.version, 7);
    board_member_free(mb);

    /* no such member: the score is nil */
    struct resp n = {.n = 0};
    put(&n, "*6\r\n");
    settings(&n);
    put(&n, ":10\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n");
    mb = NULL;
    ck_assert_int_eq(board_member_take(&g_m, "b", reply_of(&n), &mb), -ENODATA);
    ck_assert_ptr_null(mb);
}
END_TEST

START_TEST(test_around_take)
{
    struct resp r = {.n = 0};
    put(&r, "*7\r\n");
    settings(&r);
    put(&r, ":9\r\n:2\r\n:4\r\n*4\r\n");
    bulk(&r, "c");
    stored(&r, 50, 0);
    bulk(&r, "d");
    stored(&r, 40, 1);
    put(&r, "*2\r\n$-1\r\n");
    bulk(&r, "{}");
    put(&r, "*2\r\n:3\r\n:4\r\n");
    struct board_page *p = NULL;
    ck_assert_int_eq(board_around_take(&g_m, "b", reply_of(&r), &p), 0);
    ck_assert_int_eq(p->total, 9);
    ck_assert_uint_eq(p->n, 2);
    ck_assert_str_eq(p->items[0].id, "c");
    ck_assert_int_eq(p->items[0].ordinal, 5);
    ck_assert_int_eq(p->items[0].rank, 3);
    ck_assert_ptr_null(p->items[0].record);
    ck_assert_double_eq(p->items[1].score, 40);
    ck_assert_int_eq(p->items[1].ordinal, 6);
    ck_assert_uint_eq(p->items[1].record_len, 2);
    ck_assert_int_eq(p->first, 0);
    ck_assert_int_eq(p->end, 9);
    board_page_free(p);

    /* the member is not on the board: start -1 */
    struct resp n = {.n = 0};
    put(&n, "*7\r\n");
    settings(&n);
    put(&n, ":9\r\n:2\r\n:-1\r\n*0\r\n*0\r\n*0\r\n");
    p = NULL;
    ck_assert_int_eq(board_around_take(&g_m, "b", reply_of(&n), &p), -ENODATA);
    ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_around_score_take)
{
    /* the score was judged under another layout: -ESTALE with the board's settings */
    struct resp r = {.n = 0};
    put(&r, "*2\r\n");
    bulk(&r, "layout");
    put(&r, "*4\r\n");
    bulk(&r, "order");
    bulk(&r, "asc");
    bulk(&r, "score_decimals");
    bulk(&r, "2");
    struct board_settings seen;
    struct board_page *p = NULL;
    ck_assert_int_eq(board_around_score_take(&g_m, "b", reply_of(&r), &seen, &p), -ESTALE);
    ck_assert_int_eq(seen.layout.order, SCORE_ORDER_ASC);
    ck_assert_int_eq(seen.layout.decimals, 2);
    ck_assert_ptr_null(p);

    /* an empty board: a page without items */
    struct resp e = {.n = 0};
    put(&e, "*7\r\n");
    settings(&e);
    put(&e, ":0\r\n:2\r\n:0\r\n*0\r\n*0\r\n*0\r\n");
    ck_assert_int_eq(board_around_score_take(&g_m, "b", reply_of(&e), &seen, &p), 0);
    ck_assert_uint_eq(p->n, 0);
    board_page_free(p);
}
END_TEST

START_TEST(test_walk_take)
{
    struct board_settings seen;
    struct board_page *p = NULL;
    ck_assert_int_eq(
        board_walk_take(&g_m, "b", reply_text("*1\r\n$7\r\nexpired\r\n"), 0, &seen, &p),
        -EKEYEXPIRED);
    ck_assert_int_eq(
        board_walk_take(&g_m, "b", reply_text("*2\r\n$7\r\nrefused\r\n*0\r\n"), 1, &seen, &p),
        -ESTALE);
    ck_assert_int_eq(seen.page_size, BOARD_PAGE_SIZE_DEFAULT);
    ck_assert_int_eq(board_walk_take(&g_m, "b", reply_text("*1\r\n*0\r\n"), 0, &seen, &p), -EIO);
    ck_assert_ptr_null(p);

    struct resp r = {.n = 0};
    put(&r, "*9\r\n");
    settings(&r);
    put(&r, ":100\r\n:2\r\n:10\r\n*2\r\n");
    bulk(&r, "k");
    stored(&r, 7, 0);
    put(&r, "*0\r\n*0\r\n:10\r\n:40\r\n");
    ck_assert_int_eq(board_walk_take(&g_m, "b", reply_of(&r), 1, &seen, &p), 0);
    ck_assert_uint_eq(p->n, 1);
    ck_assert_int_eq(p->items[0].ordinal, 11);
    ck_assert_int_eq(p->items[0].rank, 11); /* no ranks sent: ordinal */
    ck_assert_int_eq(p->first, 10);
    ck_assert_int_eq(p->end, 40);
    ck_assert_int_eq(p->ranged, 1);
    board_page_free(p);
}
END_TEST

START_TEST(test_page_take_top)
{
    /* top.lua's reply is a page's with the uncapped count after it */
    struct resp r = {.n = 0};
    put(&r, "*7\r\n");
    settings(&r);
    put(&r, ":50\r\n:2\r\n*2\r\n");
    bulk(&r, "a");
    stored(&r, 1, 0);
    put(&r, "*0\r\n*0\r\n:13\r\n");
    struct board_page *p = NULL;
    ck_assert_int_eq(board_page_take(&g_m, "b", reply_of(&r), 1, &p), 0);
    ck_assert_int_eq(p->count, 13);
    ck_assert_int_eq(p->items[0].ordinal, 1);
    board_page_free(p);
}
END_TEST

/* n raw bytes (NULs too) into r */
static void raw(struct resp *r, const void *b, size_t n)
{
    ck_assert_uint_lt(r->n + n, sizeof(r->b));
    memcpy(r->b + r->n, b, n);
    r->n += n;
}

/* A bulk string of n raw bytes */
static void bulk_n(struct resp *r, const void *b, size_t n)
{
    put(r, "$%zu\r\n", n);
    raw(r, b, n);
    put(r, "\r\n");
}

/* page.lua's reply without ids, its range packed (prelude_read.lua's packed()): settings `set`
 * (RESP of the flat settings), total 50, size 3, the `len` bytes of the range, then the records
 * (RESP of an array: as many as the entries) and no ranks */
static struct store_reply *packed_reply(const char *set, const void *range, size_t len,
                                        const char *records)
{
    struct resp r = {.n = 0};
    put(&r, "*6\r\n%s:50\r\n:3\r\n", set);
    bulk_n(&r, range, len);
    put(&r, "%s*0\r\n", records);
    return reply_of(&r);
}

#define SET_PACKED "*4\r\n$9\r\npage_size\r\n$1\r\n3\r\n$7\r\nversion\r\n$1\r\n7\r\n"
#define RECORDS3 "*3\r\n$7\r\n{\"a\":1}\r\n$-1\r\n$9\r\n{\"c\":\"x\"}\r\n"

/* The stored value text of `score` with tie 0 under the default layout into out */
static void stored_text(char *out, size_t len, int64_t score)
{
    struct board_settings s;
    board_settings_default(&s);
    double v = 0;
    ck_assert_int_eq(score_codec_pack(&s.layout, -score, 0, &v), 0);
    snprintf(out, len, "%.17g", v);
}

/* The same page as Redis' own arrays and with its range packed: each item the same */
START_TEST(test_page_take_packed)
{
    char s1[40], s2[40], s3[40];
    stored_text(s1, sizeof(s1), 30);
    stored_text(s2, sizeof(s2), 20);
    stored_text(s3, sizeof(s3), -5);
    struct resp a = {.n = 0};
    put(&a, "*6\r\n" SET_PACKED ":50\r\n:3\r\n*6\r\n");
    bulk(&a, "u1");
    bulk(&a, s1);
    bulk(&a, "u\xc3\xa9");
    bulk(&a, s2);
    bulk(&a, "u3");
    bulk(&a, s3);
    put(&a, RECORDS3 "*0\r\n");
    struct board_page *pa = NULL, *pp = NULL;
    ck_assert_int_eq(board_page_take(&g_m, "b", reply_of(&a), 2, &pa), 0);

    char range[256];
    int len =
        snprintf(range, sizeof(range), "u1%c%s%cu\xc3\xa9%c%s%cu3%c%s", 0, s1, 0, 0, s2, 0, 0, s3);
    ck_assert_int_gt(len, 0);
    ck_assert_int_eq(
        board_page_take(&g_m, "b", packed_reply(SET_PACKED, range, (size_t)len, RECORDS3), 2, &pp),
        0);
    ck_assert_uint_eq(pa->n, 3);
    ck_assert_uint_eq(pp->n, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct board_item *x = &pa->items[i], *y = &pp->items[i];
        ck_assert_uint_eq(x->id_len, y->id_len);
        ck_assert_mem_eq(x->id, y->id, x->id_len);
        ck_assert(x->score == y->score);
        ck_assert_int_eq(x->stored, y->stored);
        ck_assert_int_eq(x->ordinal, y->ordinal);
        ck_assert_int_eq(x->rank, y->rank);
        ck_assert_int_eq(x->tie, y->tie);
        ck_assert_uint_eq(x->record_len, y->record_len);
        ck_assert_int_eq(!x->record, !y->record);
        if (x->record)
            ck_assert_mem_eq(x->record, y->record, x->record_len);
    }
    ck_assert(pp->items[0].score == 30);
    ck_assert(pp->items[2].score == -5);
    ck_assert_uint_eq(pp->items[1].id_len, 3);
    ck_assert_int_eq(pp->items[0].ordinal, 4); /* page 2 of 3 */
    ck_assert_ptr_null(pp->items[1].record);
    ck_assert_uint_eq(pp->items[2].record_len, 9);
    board_page_free(pa);
    board_page_free(pp);
}
END_TEST

/* A `wide` board's set members start with their sub-score columns (8 bytes each) and tie
 * position (8 bytes): NUL bytes among them are the member's, skipped by the layout's length */
START_TEST(test_page_take_packed_wide)
{
    static const char set[] =
        "*6\r\n$9\r\npage_size\r\n$1\r\n3\r\n$8\r\ntiebreak\r\n$5\r\nfirst\r\n"
        "$12\r\nscore_layout\r\n$6\r\nwide:d\r\n";
    /* column key 0 (2^63 big-endian: 0x80 then seven NULs), tie 0 and tie 258, then the id */
    static const char m1[] = "\x80\0\0\0\0\0\0\0"
                             "\0\0\0\0\0\0\0\0"
                             "a";
    static const char m2[] = "\x80\0\0\0\0\0\0\0"
                             "\0\0\0\0\0\0\x01\x02"
                             "bb";
    char range[128];
    size_t n = 0;
    memcpy(range + n, m1, sizeof(m1)); /* the id's NUL is the separator */
    n += sizeof(m1);
    memcpy(range + n, "-7\0", 3);
    n += 3;
    memcpy(range + n, m2, sizeof(m2));
    n += sizeof(m2);
    memcpy(range + n, "-3", 2);
    n += 2;
    struct board_page *p = NULL;
    ck_assert_int_eq(
        board_page_take(&g_m, "b", packed_reply(set, range, n, "*2\r\n$7\r\n{\"r\":1}\r\n$-1\r\n"),
                        1, &p),
        0);
    ck_assert_uint_eq(p->n, 2);
    ck_assert_uint_eq(p->items[0].id_len, 1);
    ck_assert_mem_eq(p->items[0].id, "a", 1);
    ck_assert_int_eq(p->items[0].tie, 0);
    ck_assert_uint_eq(p->items[1].id_len, 2);
    ck_assert_mem_eq(p->items[1].id, "bb", 2);
    ck_assert_int_eq(p->items[1].tie, 258);
    ck_assert_int_eq(p->items[0].nsub, 1);
    ck_assert_int_eq(p->items[0].sub[0], 0);
    ck_assert_int_eq(p->items[0].stored, -7);
    ck_assert_int_eq(p->items[1].stored, -3);
    ck_assert_uint_eq(p->items[0].record_len, 7);
    ck_assert_ptr_null(p->items[1].record);
    board_page_free(p);
    p = NULL;

    /* a member shorter than its prefix: not the shape */
    ck_assert_int_eq(
        board_page_take(&g_m, "b", packed_reply(set, "\x80\0\0-7\0", 6, "*1\r\n$-1\r\n"), 1, &p),
        -EIO);
    ck_assert_ptr_null(p);
}
END_TEST

/* A packed range that is not the shape: -EIO (each field looked for within the string's length) */
START_TEST(test_page_take_packed_malformed)
{
    static const struct {
        const char *range;
        size_t len;
        const char *records;
    } bad[] = {
        {"u1", 2, "*1\r\n$-1\r\n"},                            /* no NUL after the member */
        {"u1\0", 3, "*1\r\n$-1\r\n"},                          /* no stored value */
        {"u1\0-5\0u2", 8, "*1\r\n$-1\r\n"},                    /* a field after the last one */
        {"u1\0-5\0", 6, "*1\r\n$-1\r\n"},                      /* a NUL after it */
        {"u1\0-5\0u2\0", 9, "*2\r\n$-1\r\n$-1\r\n"},           /* two entries, one stored value */
        {"u1\0-5\0u2\0-4", 11, "*3\r\n$-1\r\n$-1\r\n$-1\r\n"}, /* two for three records */
        {"u1\0\0u2\0-4", 9, "*2\r\n$-1\r\n$-1\r\n"},           /* an empty stored value */
        {"u1\0-5", 5, "*0\r\n"},                               /* no records: no count */
        {"u1\0-5", 5, ":1\r\n"},
        {"u1\0-5", 5, "$1\r\n1\r\n"},
        {"", 0, "*1\r\n$-1\r\n"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct board_page *p = NULL;
        int rc = board_page_take(
            &g_m, "b", packed_reply(SET_PACKED, bad[i].range, bad[i].len, bad[i].records), 1, &p);
        ck_assert_msg(rc == -EIO, "case %zu: %d", i, rc);
        ck_assert_ptr_null(p);
    }
    /* the same kind of range well formed: taken */
    struct board_page *p = NULL;
    ck_assert_int_eq(
        board_page_take(&g_m, "b",
                        packed_reply(SET_PACKED, "u1\0-5\0u2\0-4", 11, "*2\r\n$2\r\n{}\r\n$-1\r\n"),
                        1, &p),
        0);
    ck_assert_uint_eq(p->n, 2);
    ck_assert_uint_eq(p->items[0].record_len, 2);
    ck_assert_int_eq(p->items[1].stored, -4);
    board_page_free(p);
}
END_TEST

/* The settings of a board with track_updated_at: its read replies carry the times last. */
static void settings_tracked(struct resp *r)
{
    put(r, "*4\r\n");
    bulk(r, "page_size");
    bulk(r, "2");
    bulk(r, "track_updated_at");
    bulk(r, "1");
}

START_TEST(test_page_take_times)
{
    /* page.lua on a tracked board: the page's times after the ranks (false: none kept) */
    struct resp r = {.n = 0};
    put(&r, "*7\r\n");
    settings_tracked(&r);
    put(&r, ":50\r\n:2\r\n*4\r\n");
    bulk(&r, "a");
    stored(&r, 9, 0);
    bulk(&r, "b");
    stored(&r, 8, 0);
    put(&r, "*0\r\n*0\r\n*2\r\n:1700000000123\r\n$-1\r\n");
    struct board_page *p = NULL;
    ck_assert_int_eq(board_page_take(&g_m, "b", reply_of(&r), 1, &p), 0);
    ck_assert_int_eq(p->settings.track_updated_at, 1);
    ck_assert_uint_eq(p->n, 2);
    ck_assert_int_eq(p->items[0].updated_at, 1700000000123);
    ck_assert_int_eq(p->items[1].updated_at, -1);
    ck_assert_int_eq(p->count, 0); /* the times are not top.lua's count */
    ck_assert_ptr_null(p->with);
    board_page_free(p);

    /* top.lua: the count, then the times */
    struct resp t = {.n = 0};
    put(&t, "*8\r\n");
    settings_tracked(&t);
    put(&t, ":50\r\n:2\r\n*2\r\n");
    bulk(&t, "a");
    stored(&t, 9, 0);
    put(&t, "*0\r\n*0\r\n:13\r\n*1\r\n:5\r\n");
    ck_assert_int_eq(board_page_take(&g_m, "b", reply_of(&t), 1, &p), 0);
    ck_assert_int_eq(p->count, 13);
    ck_assert_ptr_null(p->with);
    ck_assert_int_eq(p->items[0].updated_at, 5);
    board_page_free(p);

    /* with ids: the page's times, then the found's */
    struct resp w = {.n = 0};
    put(&w, "*9\r\n");
    settings_tracked(&w);
    put(&w, ":50\r\n:2\r\n*2\r\n");
    bulk(&w, "a");
    stored(&w, 9, 0);
    put(&w, "*0\r\n*0\r\n*4\r\n");
    bulk(&w, "z");
    stored(&w, 1, 0);
    put(&w, ":40\r\n:41\r\n*1\r\n");
    bulk(&w, "gone");
    put(&w, "*2\r\n:7\r\n:8\r\n");
    ck_assert_int_eq(board_page_take(&g_m, "b", reply_of(&w), 1, &p), 0);
    ck_assert_int_eq(p->items[0].updated_at, 7);
    ck_assert_ptr_nonnull(p->with);
    ck_assert_uint_eq(p->with->n, 1);
    ck_assert_int_eq(p->with->items[0].ordinal, 41);
    ck_assert_int_eq(p->with->items[0].updated_at, 8);
    ck_assert_uint_eq(p->with->nmissing, 1);
    board_page_free(p);
}
END_TEST

START_TEST(test_percentile_take)
{
    struct resp r = {.n = 0};
    put(&r, "*5\r\n");
    settings(&r);
    put(&r, ":40\r\n:10\r\n");
    bulk(&r, "p90");
    stored(&r, 77, 0);
    struct board_percentile *p = NULL;
    ck_assert_int_eq(board_percentile_take(&g_m, "b", reply_of(&r), &p), 0);
    ck_assert_int_eq(p->total, 40);
    ck_assert_int_eq(p->rank, 10);
    ck_assert_uint_eq(p->id_len, 3);
    ck_assert_double_eq(p->score, 77);
    board_percentile_free(p);

    /* an empty board: rank 0, no id */
    struct resp e = {.n = 0};
    put(&e, "*3\r\n");
    settings(&e);
    put(&e, ":0\r\n:0\r\n");
    ck_assert_int_eq(board_percentile_take(&g_m, "b", reply_of(&e), &p), 0);
    ck_assert_int_eq(p->rank, 0);
    ck_assert_ptr_null(p->id);
    board_percentile_free(p);
    board_percentile_free(NULL);
}
END_TEST

START_TEST(test_lookup)
{
    struct board_where w;
    where(&w);
    const char *ids[] = {"a", "bb", "a", "c", "bb"};
    const size_t lens[] = {1, 2, 1, 1, 2};
    struct board_lookup_call c;
    ck_assert_int_eq(board_lookup_prepare(&g_m, "b", &w, RANK_ORDINAL, ids, lens, 5, &c), 0);
    ck_assert_ptr_eq(c.script, board_script(SCRIPT_LOOKUP));
    ck_assert_int_eq(c.nkeys, 6);
    ck_assert_int_eq(c.nargs, 4 + 3); /* each id once, in the order first asked */
    assert_arg(c.argv, c.lens, 4, "P:{b}:ids");
    assert_arg(c.argv, c.lens, 10, "a");
    assert_arg(c.argv, c.lens, 11, "bb");
    assert_arg(c.argv, c.lens, 12, "c");
    board_lookup_call_free(&c);
    board_lookup_call_free(&c); /* twice: a no-op */

    /* found in reply order, sorted by position; the missing ids in the order given */
    struct resp r = {.n = 0};
    put(&r, "*5\r\n");
    settings(&r);
    put(&r, ":30\r\n*8\r\n");
    bulk(&r, "c");
    stored(&r, 5, 0);
    put(&r, ":20\r\n:21\r\n");
    bulk(&r, "a");
    stored(&r, 90, 0);
    put(&r, ":0\r\n:1\r\n*1\r\n");
    bulk(&r, "bb");
    put(&r, "*2\r\n");
    bulk(&r, "{}");
    put(&r, "$-1\r\n");
    struct board_lookup *l = NULL;
    ck_assert_int_eq(board_lookup_take(&g_m, "b", reply_of(&r), &l), 0);
    ck_assert_int_eq(l->total, 30);
    ck_assert_uint_eq(l->n, 2);
    ck_assert_str_eq(l->items[0].id, "a");
    ck_assert_int_eq(l->items[0].ordinal, 1);
    ck_assert_str_eq(l->items[1].id, "c");
    ck_assert_int_eq(l->items[1].ordinal, 21);
    ck_assert_int_eq(l->items[1].rank, 21);
    ck_assert_uint_eq(l->items[1].record_len, 2); /* records follow the reply's order */
    ck_assert_uint_eq(l->nmissing, 1);
    ck_assert_uint_eq(l->missing_len[0], 2);
    board_lookup_free(l);
    board_lookup_free(NULL);

    /* found or missing not an array: -EIO */
    struct resp bad = {.n = 0};
    put(&bad, "*5\r\n");
    settings(&bad);
    put(&bad, ":1\r\n:0\r\n*0\r\n*0\r\n");
    l = NULL;
    ck_assert_int_eq(board_lookup_take(&g_m, "b", reply_of(&bad), &l), -EIO);
    ck_assert_ptr_null(l);
}
END_TEST

START_TEST(test_boards_single)
{
    ck_assert_uint_eq(board_boards_calls(&g_m, 0), 0);
    ck_assert_uint_eq(board_boards_calls(&g_m, 5), 1);
    const char *boards[] = {"x", "y"};
    struct board_boards_call c;
    board_boards_prepare(&g_m, boards, 2, "id1", 3, RANK_DENSE, &c);
    ck_assert_ptr_eq(c.script, board_script(SCRIPT_MEMBER_BOARDS));
    ck_assert_int_eq(c.nkeys, 10);
    ck_assert_int_eq(c.nargs, 2 + 6);
    assert_arg(c.argv, c.lens, 0, "P:{x}:meta");
    assert_arg(c.argv, c.lens, 1, "P:{x}:z");
    assert_arg(c.argv, c.lens, 3, "P:{x}:ids");
    assert_arg(c.argv, c.lens, 4, "P:{x}:upd");
    assert_arg(c.argv, c.lens, 7, "P:{y}:dense");
    assert_arg(c.argv, c.lens, 8, "P:{y}:ids");
    assert_arg(c.argv, c.lens, 9, "P:{y}:upd");
    assert_arg(c.argv, c.lens, 10, "id1");
    assert_arg(c.argv, c.lens, 11, rank_type_name(RANK_DENSE));
    assert_arg(c.argv, c.lens, 12, period_kind_name(PERIOD_NONE));

    /* x: found; y: no such board */
    struct resp r = {.n = 0};
    put(&r, "*2\r\n*5\r\n");
    settings(&r);
    put(&r, ":4\r\n");
    stored(&r, 12, 0);
    put(&r, ":1\r\n:1\r\n$-1\r\n");
    struct board_on_board out[2];
    size_t bad = 99;
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2, reply_of(&r), out, &bad), 0);
    ck_assert_int_eq(out[0].exists, 1);
    ck_assert_int_eq(out[0].found, 1);
    ck_assert_int_eq(out[0].ordinal, 2);
    ck_assert_int_eq(out[0].rank, 1);
    ck_assert_double_eq(out[0].score, 12);
    ck_assert_int_eq(out[1].exists, 0);

    /* on the board, not the member */
    struct resp m = {.n = 0};
    put(&m, "*1\r\n*5\r\n");
    settings(&m);
    put(&m, ":4\r\n$-1\r\n$-1\r\n$-1\r\n");
    ck_assert_int_eq(board_boards_take(&g_m, boards, 1, reply_of(&m), out, &bad), 0);
    ck_assert_int_eq(out[0].exists, 1);
    ck_assert_int_eq(out[0].found, 0);

    /* a retry teaches y's periods; dense ranks unavailable on y; a bad index; the wrong count */
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2,
                                       reply_text("*2\r\n$5\r\nretry\r\n*4\r\n:1\r\n$6\r\n"
                                                  "weekly\r\n$1\r\n0\r\n$1\r\n2\r\n"),
                                       out, &bad),
                     -EAGAIN);
    struct board_where w;
    ck_assert_int_eq(board_where_cached(&g_m, "y", NULL, &w), 0);
    ck_assert_int_eq(w.kind, PERIOD_WEEKLY);
    ck_assert_int_eq(w.retain, 2);
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2,
                                       reply_text("*2\r\n$17\r\ndense_unavailable\r\n:1\r\n"), out,
                                       &bad),
                     -ENOSYS);
    ck_assert_uint_eq(bad, 1);
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2,
                                       reply_text("*2\r\n$17\r\ndense_unavailable\r\n:7\r\n"), out,
                                       &bad),
                     -EIO);
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2, reply_text("*1\r\n$-1\r\n"), out, &bad),
                     -EIO);
    ck_assert_int_eq(board_boards_take(&g_m, boards, 2, reply_text("-ERR x\r\n"), out, &bad), -EIO);
}
END_TEST

START_TEST(test_boards_cluster)
{
    ck_assert_uint_eq(board_boards_calls(&g_m, 5), 5); /* a board a slot: a call each */
    const char *boards[] = {"x"};
    struct board_boards_call c;
    board_boards_prepare(&g_m, boards, 1, "id", 2, RANK_ORDINAL, &c);
    ck_assert_int_eq(c.nkeys, 5);
    assert_arg(c.argv, c.lens, 4, "P:{x}:z"); /* no board tracks updated_at there */
    ck_assert_int_eq(c.nargs, 5);
}
END_TEST

Suite *board_read_suite(void)
{
    Suite *s = suite_create("board_read");
    TCase *tc = tcase_create("single");
    tcase_add_checked_fixture(tc, fixture_setup_single_now, fixture_teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_prepare_page);
    tcase_add_test(tc, test_prepare_each_kind);
    tcase_add_test(tc, test_prepare_walk);
    tcase_add_test(tc, test_take_common_answers);
    tcase_add_test(tc, test_member_take);
    tcase_add_test(tc, test_around_take);
    tcase_add_test(tc, test_around_score_take);
    tcase_add_test(tc, test_walk_take);
    tcase_add_test(tc, test_page_take_top);
    tcase_add_test(tc, test_page_take_times);
    tcase_add_test(tc, test_page_take_packed);
    tcase_add_test(tc, test_page_take_packed_wide);
    tcase_add_test(tc, test_page_take_packed_malformed);
    tcase_add_test(tc, test_percentile_take);
    tcase_add_test(tc, test_lookup);
    tcase_add_test(tc, test_boards_single);
    suite_add_tcase(s, tc);
    TCase *cl = tcase_create("cluster");
    tcase_add_checked_fixture(cl, fixture_setup_cluster_now, fixture_teardown);
    tcase_set_timeout(cl, 10);
    tcase_add_test(cl, test_prepare_page_cluster);
    tcase_add_test(cl, test_boards_cluster);
    suite_add_tcase(s, cl);
    return s;
}
