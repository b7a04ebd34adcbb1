/* model_fixture.h -- what the unit suites of the model (test_board_read.c, test_board_ctl.c,
 * test_board_write.c, test_page_settle.c) share: a reply built from RESP bytes, and a model over a
 * store that never dials (its prepare/take halves need no Redis). */
#ifndef RANKD_TEST_MODEL_FIXTURE_H
#define RANKD_TEST_MODEL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "store.h"
#include "store_reply.h"

#define FIXTURE_NOW_MS INT64_C(1704844800000) /**< 2024-01-10 00:00 UTC */

/** FIXTURE_NOW_MS, as a model's clock_ms. */
int64_t fixture_clock(void);

/** The one reply the n bytes at resp hold (a test failure otherwise); the caller frees it with
 *  store_reply_free. */
struct store_reply *fixture_reply_n(const char *resp, size_t n);

/** fixture_reply_n of a NUL-terminated text. */
struct store_reply *fixture_reply(const char *resp);

/** A store on 127.0.0.1:1 (one Redis, or a cluster of that one seed; never dialled) into *st, and
 *  model m over it with prefix "P" and clock_ms `clock` (NULL: the real clock). */
void fixture_model_up(struct board_model *m, struct store **st, int cluster,
                      int64_t (*clock)(void));

/** The model and its store freed; *st NULL. */
void fixture_model_down(struct board_model *m, struct store **st);

/** The model of the checked fixtures below, and its store. */
extern struct board_model g_m;
extern struct store *g_store;

/** Checked-fixture set-ups: g_m over g_store (fixture_model_up), one Redis or a cluster,
 *  on the clock FIXTURE_NOW_MS ..._fixed) or the real one (..._now). */
void fixture_setup_single_fixed(void);
void fixture_setup_cluster_fixed(void);
void fixture_setup_single_now(void);
void fixture_setup_cluster_now(void);

/** Their teardown: fixture_model_down of g_m. */
void fixture_teardown(void);

#endif
