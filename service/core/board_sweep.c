/*
 * board_sweep.c -- period expiry: the sweep of the period sets no longer readable (sweep.lua),
 * behind the reply that noticed a new period. The contract is in board.h; board_int.h holds what
 * the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- period expiry: the sweep */

/*
 * Board data never carries a TTL (maxmemory-policy volatile-ttl could evict it): the sets of
 * periods that stopped being readable are removed by sweep.lua, in chunks of SWEEP_CHUNK
 * UNLINKs, found through the board's period index (write.lua lists each period set there, by
 * its period's start, in the call that creates it). A sweep runs when a write listed a new set
 * (a period began: the oldest readable one may have just stopped being readable), behind that
 * write's reply; put_board.lua sweeps a chunk too, and delete_board.lua removes every listed
 * set. The sweep checks the settings its cut was computed from, and holds a lock across its
 * chunks so that two processes do not sweep one board at once. A failed sweep is left for the
 * next trigger: the sets it would remove are unreadable already (the read scripts check retain).
 */
#define SWEEP_CHUNK 64         /* sets per sweep.lua call: 64 UNLINKs, well under 1 ms */
#define SWEEP_ROUNDS_MAX 32    /* calls per sweep; a longer backlog waits for the next trigger */
#define SWEEP_LOCK_TTL_MS 2000 /* a sweep lock outlives its holder by at most this */
#define SWEEP_ARGC (3 + 7)

struct sweep_args {
    char keys[3][KEY_MAX]; /* settings, period index, lock */
    char tz[PERIOD_TZ_TEXT_MAX], retain[16], cut[32], token[32], ttl[16], chunk[16];
    const char *argv[SWEEP_ARGC];
};

/* sweep.lua's arguments for `board` under settings s; -EINVAL for a board without periods. */
static int sweep_args_build(const struct board_model *m, const char *board,
                            const struct board_settings *s, struct sweep_args *a)
{
    struct period_tz tz = s->tz;
    if (s->period == PERIOD_NONE || period_tz_bind(&tz, m->zones))
        return -EINVAL;
    struct board_keys k;
    board_make_keys(m, board, &k);
    util_copy(a->keys[0], KEY_MAX, k.meta);
    util_copy(a->keys[1], KEY_MAX, k.index);
    struct strb b;
    board_key_make(&b, a->keys[2], KEY_MAX, m->prefix, board, BOARD_KEY_SWEEP);
    period_tz_text(&tz, a->tz, sizeof(a->tz));
    snprintf(a->retain, sizeof(a->retain), "%d", s->retain);
    /* the oldest readable period: the one `retain` periods before the current one */
    snprintf(a->cut, sizeof(a->cut), "%" PRId64,
             period_start(s->period, &tz, board_now_ms(m), -s->retain));
    board_new_generation(a->token);
    snprintf(a->ttl, sizeof(a->ttl), "%d", SWEEP_LOCK_TTL_MS);
    snprintf(a->chunk, sizeof(a->chunk), "%d", SWEEP_CHUNK);
    const char *argv[SWEEP_ARGC] = {a->keys[0], a->keys[1], a->keys[2], period_kind_name(s->period),
                                    a->tz,      a->retain,  a->cut,     a->token,
                                    a->ttl,     a->chunk};
    memcpy(a->argv, argv, sizeof(argv));
    return 0;
}

/* 1 when a sweep.lua reply says a full chunk went (call again). */
static int sweep_more(const struct store_reply *r)
{
    return r && r->type == STORE_REPLY_ARRAY && r->elements == 2 &&
           r->element[1]->type == STORE_REPLY_INTEGER && r->element[1]->integer == 1;
}

/* The sweep on an event loop's write connection: its chunks go one after the other, behind
 * whatever the loop sends meanwhile; nothing waits for them. Best effort: a fault ends it. */
struct sweep_job {
    struct store_async *conn;
    int rounds;
    struct sweep_args a;
};

static int sweep_job_send(struct sweep_job *sj);

static void sweep_reply(void *arg, int rc, struct store_reply **replies)
{
    struct sweep_job *sj = arg;
    if (rc == 0 && sweep_more(replies[0]) && ++sj->rounds < SWEEP_ROUNDS_MAX &&
        sweep_job_send(sj) == 0)
        return;
    free(sj);
}

static int sweep_job_send(struct sweep_job *sj)
{
    int rc = store_async_script(sj->conn, board_script(SCRIPT_SWEEP), 3, 7, sj->a.argv, NULL, 0,
                                sweep_reply, sj);
    return rc < 0 ? rc : 0;
}

void board_sweep_submit(struct board_model *m, struct store_async *conn, const char *board,
                        const struct board_settings *s)
{
    struct sweep_job *sj = calloc(1, sizeof(*sj));
    if (!sj)
        return;
    sj->conn = conn;
    if (sweep_args_build(m, board, s, &sj->a) || sweep_job_send(sj))
        free(sj);
}
