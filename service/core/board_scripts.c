/*
 * board_scripts.c -- the model's scripts: their registration with the store, from the table
 * generated from their --@script lines (build/gen/scripts.h), and the tie-cap test hook.
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#define RANKD_SCRIPT_TABLE /* script_table: the bodies and flags (build/gen/scripts.h) */
#include "board_int.h"

static const struct store_script *script_handle[SCRIPT_COUNT];
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void scripts_init(void)
{
    /* waits: the writes a client is told of: with --write-replicas each call waits for the
     * replicas (store.h) before its 2xx. Not compact.lua (the write.lua call that follows it on
     * the same connection covers it: WAIT counts every write before it there) nor sweep.lua
     * (behind a reply, nobody waits for it; a sweep lost in a failover is done again by the next).
     * read-only: the reads that write nothing (flags=no-writes: Redis refuses a write in them):
     * a replica may answer them with --read-from-replicas (store.h); every other script writes. */
    int ro = 0;
    for (int i = 0; i < SCRIPT_COUNT; i++) {
        const struct script_def *d = &script_table[i];
        script_handle[i] = d->flags & SCRIPT_WAITS ? store_script_register_write(d->body)
                                                   : store_script_register(d->body);
        if (d->flags & SCRIPT_READ_ONLY)
            ro |= store_script_read_only(script_handle[i]);
    }
    assert(ro == 0 && "the reads a replica may answer are flagged no-writes");
    (void)ro;
    /* member_boards.lua stays on the primary: its reply holds several boards' counters, which
     * board_read_version does not judge */
    /* on a cluster the records are in other slots: fetched after the read (records.h) */
    store_async_script_then(script_handle[SCRIPT_PAGE], records_then_page);
    store_async_script_then(script_handle[SCRIPT_AROUND], records_then_around);
    store_async_script_then(script_handle[SCRIPT_MEMBER], records_then_member);
    store_async_script_then(script_handle[SCRIPT_AROUND_SCORE], records_then_around);
    store_async_script_then(script_handle[SCRIPT_TOP], records_then_top);
    store_async_script_then(script_handle[SCRIPT_WALK], records_then_walk);
    store_async_script_then(script_handle[SCRIPT_LOOKUP], records_then_lookup);
    /* percentile.lua and member_boards.lua read no records */
}

void board_scripts_register(void)
{
    pthread_once(&scripts_once, scripts_init);
}

/* The handle of one of the model's scripts. */
const struct store_script *board_script(int which)
{
    board_scripts_register();
    return script_handle[which];
}

_Atomic int64_t board_tie_cap = SCORE_TIE_CAP;

void board_set_tie_cap(int64_t cap)
{
    atomic_store(&board_tie_cap, cap > 1 && cap <= SCORE_TIE_CAP ? cap : SCORE_TIE_CAP);
}
