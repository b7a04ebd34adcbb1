/* model_fixture.c -- the model suites' shared set-up (model_fixture.h). */
#include "model_fixture.h"

#include <string.h>

#include <check.h>

#include "store_internal.h"

int64_t fixture_clock(void)
{
    return FIXTURE_NOW_MS;
}

struct store_reply *fixture_reply_n(const char *resp, size_t n)
{
    redisReader *rd = redisReaderCreateWithFunctions(store_reply_functions());
    ck_assert_ptr_nonnull(rd);
    ck_assert_int_eq(redisReaderFeed(rd, resp, n), REDIS_OK);
    void *out = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_OK);
    ck_assert_ptr_nonnull(out);
    redisReaderFree(rd);
    return out;
}

struct store_reply *fixture_reply(const char *resp)
{
    return fixture_reply_n(resp, strlen(resp));
}

void fixture_model_up(struct board_model *m, struct store **st, int cluster, int64_t (*clock)(void))
{
    struct store_config c = {.host = "127.0.0.1",
                             .port = 1,
                             .timeout_ms = 100,
                             .connect_timeout_ms = 100,
                             .cluster = cluster,
                             .nseeds = cluster,
                             .seed_host = {"127.0.0.1"},
                             .seed_port = {1}};
    *st = store_new(&c);
    ck_assert_ptr_nonnull(*st);
    memset(m, 0, sizeof(*m));
    m->prefix = "P";
    m->store = *st;
    m->clock_ms = clock;
    ck_assert_int_eq(board_model_init(m), 0);
}

void fixture_model_down(struct board_model *m, struct store **st)
{
    board_model_free(m);
    store_free(*st);
    *st = NULL;
}

struct board_model g_m;
struct store *g_store;

void fixture_setup_single_fixed(void)
{
    fixture_model_up(&g_m, &g_store, 0, fixture_clock);
}

void fixture_setup_cluster_fixed(void)
{
    fixture_model_up(&g_m, &g_store, 1, fixture_clock);
}

void fixture_setup_single_now(void)
{
    fixture_model_up(&g_m, &g_store, 0, NULL);
}

void fixture_setup_cluster_now(void)
{
    fixture_model_up(&g_m, &g_store, 1, NULL);
}

void fixture_teardown(void)
{
    fixture_model_down(&g_m, &g_store);
}
