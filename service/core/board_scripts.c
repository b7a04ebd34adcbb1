/*
 * board_scripts.c -- the model's scripts: the table of service/lua/ bodies, their registration
 * with the store, and the tie-cap test hook.
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

static const char *const script_body[SCRIPT_COUNT] = {
    [SCRIPT_WRITE] =
#include "lua/write.lua.h"
        ,
    [SCRIPT_COMPACT] =
#include "lua/compact.lua.h"
        ,
    [SCRIPT_PAGE] =
#include "lua/page.lua.h"
        ,
    [SCRIPT_MEMBER] =
#include "lua/member.lua.h"
        ,
    [SCRIPT_AROUND] =
#include "lua/around.lua.h"
        ,
    [SCRIPT_CREATE_BOARD] =
#include "lua/create_board.lua.h"
        ,
    [SCRIPT_PUT_BOARD] =
#include "lua/put_board.lua.h"
        ,
    [SCRIPT_RESET_BOARD] =
#include "lua/reset_board.lua.h"
        ,
    [SCRIPT_DELETE_BOARD] =
#include "lua/delete_board.lua.h"
        ,
    [SCRIPT_TRIM] =
#include "lua/trim.lua.h"
        ,
    [SCRIPT_SWEEP] =
#include "lua/sweep.lua.h"
        ,
    [SCRIPT_DELETE_MEMBER] =
#include "lua/delete_member.lua.h"
        ,
    [SCRIPT_AROUND_SCORE] =
#include "lua/around_score.lua.h"
        ,
    [SCRIPT_LOOKUP] =
#include "lua/lookup.lua.h"
        ,
    [SCRIPT_PERCENTILE] =
#include "lua/percentile.lua.h"
        ,
    [SCRIPT_TOP] =
#include "lua/top.lua.h"
        ,
    [SCRIPT_MEMBER_BOARDS] =
#include "lua/member_boards.lua.h"
        ,
    [SCRIPT_WALK] =
#include "lua/walk.lua.h"
        ,
};

static const struct store_script *script_handle[SCRIPT_COUNT];
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

/* The scripts whose writes a client is told of: with --write-replicas each call waits for the
 * replicas (store.h) before its 2xx. Not compact.lua (the write.lua call that follows it on the
 * same connection covers it: WAIT counts every write before it there) nor sweep.lua (behind a
 * reply, nobody waits for it; a sweep lost in a failover is done again by the next). */
static int script_waits(int i)
{
    return i == SCRIPT_WRITE || i == SCRIPT_CREATE_BOARD || i == SCRIPT_PUT_BOARD ||
           i == SCRIPT_RESET_BOARD || i == SCRIPT_DELETE_BOARD || i == SCRIPT_TRIM ||
           i == SCRIPT_DELETE_MEMBER;
}

static void scripts_init(void)
{
    for (int i = 0; i < SCRIPT_COUNT; i++)
        script_handle[i] = script_waits(i) ? store_script_register_write(script_body[i])
                                           : store_script_register(script_body[i]);
    /* the reads that write nothing (flags=no-writes: Redis refuses a write in them): a replica
     * may answer them with --read-from-replicas (store.h); every other script writes */
    static const int read_only[] = {SCRIPT_PAGE,         SCRIPT_MEMBER, SCRIPT_AROUND,
                                    SCRIPT_AROUND_SCORE, SCRIPT_LOOKUP, SCRIPT_PERCENTILE,
                                    SCRIPT_TOP,          SCRIPT_WALK};
    int ro = 0;
    for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++)
        ro |= store_script_read_only(script_handle[read_only[i]]);
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
const struct store_script *script(int which)
{
    board_scripts_register();
    return script_handle[which];
}

_Atomic int64_t tie_cap = SCORE_TIE_CAP;

void board_set_tie_cap(int64_t cap)
{
    atomic_store(&tie_cap, cap > 1 && cap <= SCORE_TIE_CAP ? cap : SCORE_TIE_CAP);
}
