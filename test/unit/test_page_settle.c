/* test_page_settle.c -- a page lookup's settling without Redis (pages.c's page_settle, through
 * pages_int.h): the HMGET of the board's settings and the GET of the guessed page key, as replies
 * built from RESP bytes with the store's reply functions, complete the request (a hit, a miss, a
 * wrong guess, periods that moved, no board, damaged replies); and a damaged cached value is
 * refused (reply_from_value). On a model with a fixed clock over a store that never dials. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "model_fixture.h"
#include "pages_int.h"
#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

#define reply_of fixture_reply

static char *render(const char *board, int64_t page, const struct board_page *p)
{
    (void)board;
    (void)page;
    (void)p;
    return NULL;
}

static struct pages *g_pg;
static struct board_where g_w;    /* board b, no periods, as this process knows it */
static struct page_req g_q;       /* page 2 of b, ordinal ranks, the board's page size */
static struct store_reply *g_set; /* b's settings: page_size 25, page_ttl_ms 1000, gen 17 */

#define SETTINGS_B "*6\r\n$2\r\n25\r\n$4\r\n1000\r\n$2\r\n17\r\n$-1\r\n$-1\r\n$-1\r\n"

static void setup(void)
{
    fixture_model_up(&g_m, &g_store, 0, fixture_clock);
    struct pages_config pc = {.data = g_store, .model = &g_m, .prefix = "P", .render = render};
    g_pg = pages_new(&pc);
    ck_assert_ptr_nonnull(g_pg);
    struct board_settings s;
    board_settings_default(&s);
    memset(&g_w, 0, sizeof(g_w)); /* where the lookup read: the default board's one set */
    g_w.kind = s.period;
    g_w.tz = s.tz;
    g_w.retain = s.retain;
    memset(&g_q, 0, sizeof(g_q));
    g_q.board = "b";
    g_q.page = 2;
    g_q.rank = RANK_ORDINAL;
    g_set = reply_of(SETTINGS_B);
}

static void teardown(void)
{
    store_reply_free(g_set);
    pages_free(g_pg);
    fixture_model_down(&g_m, &g_store);
}

/* No guess (the board unseen): the key is made from the settings read. */
START_TEST(test_settle_unguessed)
{
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "", g_set, NULL), SETTLED_UNGUESSED);
    ck_assert_int_eq(g_q.size, 25);
    ck_assert_int_eq(g_q.ttl_ms, 1000);
    ck_assert_int_eq(g_q.gen, 17);
    ck_assert_str_eq(g_q.key, "P:{b}:page:17:-:25:2");
    /* a size asked for wins over the board's */
    ck_assert_int_eq(page_settle(g_pg, &g_q, 10, &g_w, "", g_set, NULL), SETTLED_UNGUESSED);
    ck_assert_int_eq(g_q.size, 10);
    ck_assert_str_eq(g_q.key, "P:{b}:page:17:-:10:2");
    g_q.rank = RANK_DENSE;
    ck_assert_int_eq(page_settle(g_pg, &g_q, 10, &g_w, "", g_set, NULL), SETTLED_UNGUESSED);
    ck_assert_str_eq(g_q.key, "P:{b}:page:17:-:10:2:dense");
}
END_TEST

/* A guess of this generation and size held: a string is the cached page (a hit), nil a miss;
 * without the GET's reply the page key is still to be read. */
START_TEST(test_settle_guess_held)
{
    const char *guess = "P:{b}:page:17:-:25:2";
    g_q.guess_gen = 17;
    g_q.guess_size = 25;
    struct store_reply *hit = reply_of("$5\r\nvalue\r\n"), *miss = reply_of("$-1\r\n");
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, guess, g_set, hit), SETTLED_FOUND);
    ck_assert_str_eq(g_q.key, guess);
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, guess, g_set, miss), SETTLED_ABSENT);
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, guess, g_set, NULL), SETTLED_UNGUESSED);
    ck_assert_str_eq(g_q.key, guess);
    store_reply_free(hit);
    store_reply_free(miss);
}
END_TEST

/* A guess of another generation (a write or reset since) or size: whatever the GET found is
 * not this page; the key is made again. */
START_TEST(test_settle_guess_stale)
{
    struct store_reply *hit = reply_of("$5\r\nvalue\r\n");
    g_q.guess_gen = 16;
    g_q.guess_size = 25;
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "P:{b}:page:16:-:25:2", g_set, hit),
                     SETTLED_UNGUESSED);
    ck_assert_str_eq(g_q.key, "P:{b}:page:17:-:25:2");
    g_q.guess_gen = 17;
    g_q.guess_size = 50;
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "P:{b}:page:17:-:50:2", g_set, hit),
                     SETTLED_UNGUESSED);
    ck_assert_str_eq(g_q.key, "P:{b}:page:17:-:25:2");
    store_reply_free(hit);
}
END_TEST

/* The board's periods are not what this process thought: learn them, look up again. */
START_TEST(test_settle_periods_moved)
{
    struct store_reply *daily =
        reply_of("*6\r\n$2\r\n25\r\n$4\r\n1000\r\n$2\r\n17\r\n$5\r\ndaily\r\n$-1\r\n$-1\r\n");
    struct store_reply *hit = reply_of("$5\r\nvalue\r\n");
    g_q.guess_gen = 17;
    g_q.guess_size = 25;
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "P:{b}:page:17:-:25:2", daily, hit),
                     SETTLED_RETRY);
    ck_assert_int_eq(g_q.gen, 0); /* nothing of q completed */
    store_reply_free(daily);
    store_reply_free(hit);
}
END_TEST

/* No settings (nil page_size): no board. Damaged settings: -EIO, never a crash. */
START_TEST(test_settle_no_board_and_damaged)
{
    struct store_reply *none = reply_of("*6\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n");
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "", none, NULL), -ENOENT);
    store_reply_free(none);
    static const char *const bad[] = {
        "-ERR wrong\r\n",
        ":6\r\n",
        "*5\r\n$2\r\n25\r\n$4\r\n1000\r\n$2\r\n17\r\n$-1\r\n$-1\r\n",
        "*0\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct store_reply *r = reply_of(bad[i]);
        ck_assert_msg(page_settle(g_pg, &g_q, 0, &g_w, "", r, NULL) == -EIO, "reply %zu", i);
        store_reply_free(r);
    }
    /* fields of the wrong type read as absent (the defaults): the settle goes on */
    struct store_reply *odd = reply_of("*6\r\n$2\r\n25\r\n:1000\r\n*0\r\n$-1\r\n$-1\r\n$-1\r\n");
    ck_assert_int_eq(page_settle(g_pg, &g_q, 0, &g_w, "", odd, NULL), SETTLED_UNGUESSED);
    ck_assert_int_eq(g_q.size, 25);
    store_reply_free(odd);
}
END_TEST

/* A cached value that is not the cache's (damaged, or another program's key): -EIO, freed. */
START_TEST(test_cached_value_damaged)
{
    g_q.ttl_ms = 1000;
    struct page_reply out;
    memset(&out, 0, sizeof(out));
    char *v = strdup("not a page");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(reply_from_value(g_pg, &g_q, v, strlen(v), PAGE_HIT, NULL, &out), -EIO);
    ck_assert_ptr_null(out.body);
    v = strdup("");
    ck_assert_int_eq(reply_from_value(g_pg, &g_q, v, 0, PAGE_HIT, NULL, &out), -EIO);
}
END_TEST

Suite *page_settle_suite(void)
{
    Suite *s = suite_create("page_settle");
    TCase *tc = tcase_create("settle");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_settle_unguessed);
    tcase_add_test(tc, test_settle_guess_held);
    tcase_add_test(tc, test_settle_guess_stale);
    tcase_add_test(tc, test_settle_periods_moved);
    tcase_add_test(tc, test_settle_no_board_and_damaged);
    tcase_add_test(tc, test_cached_value_damaged);
    suite_add_tcase(s, tc);
    return s;
}
