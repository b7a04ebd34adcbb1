/* test_board_scripts.c -- the table of the model's scripts generated from the "--@script" lines
 * of service/lua/ (build/gen/scripts.h): each script is there once with the flags it was
 * registered with when the table was kept by hand (which WAIT with --write-replicas, which a
 * replica may answer), and a read-only script's body is flagged no-writes. */
#include <string.h>

#define RANKD_SCRIPT_TABLE
#include "board_int.h"
#include "suites.h"

/* The hand-kept table these flags come from: script_waits() and the read_only[] list. */
static const struct {
    int which;
    const char *file;
    int flags;
} expected[] = {
    {SCRIPT_WRITE, "lua/write.lua", SCRIPT_WAITS},
    {SCRIPT_WRITE_ONE, "lua/write_one.lua", SCRIPT_WAITS}, /* write.lua's short path */
    {SCRIPT_COMPACT, "lua/compact.lua", 0},
    {SCRIPT_PAGE, "lua/page.lua", SCRIPT_READ_ONLY},
    {SCRIPT_MEMBER, "lua/member.lua", SCRIPT_READ_ONLY},
    {SCRIPT_AROUND, "lua/around.lua", SCRIPT_READ_ONLY},
    {SCRIPT_CREATE_BOARD, "lua/create_board.lua", SCRIPT_WAITS},
    {SCRIPT_PUT_BOARD, "lua/put_board.lua", SCRIPT_WAITS},
    {SCRIPT_RESET_BOARD, "lua/reset_board.lua", SCRIPT_WAITS},
    {SCRIPT_DELETE_BOARD, "lua/delete_board.lua", SCRIPT_WAITS},
    {SCRIPT_TRIM, "lua/trim.lua", SCRIPT_WAITS},
    {SCRIPT_SWEEP, "lua/sweep.lua", 0},
    {SCRIPT_DELETE_MEMBER, "lua/delete_member.lua", SCRIPT_WAITS},
    {SCRIPT_AROUND_SCORE, "lua/around_score.lua", SCRIPT_READ_ONLY},
    {SCRIPT_LOOKUP, "lua/lookup.lua", SCRIPT_READ_ONLY},
    {SCRIPT_PERCENTILE, "lua/percentile.lua", SCRIPT_READ_ONLY},
    {SCRIPT_TOP, "lua/top.lua", SCRIPT_READ_ONLY},
    {SCRIPT_MEMBER_BOARDS, "lua/member_boards.lua", 0}, /* no-writes, but stays on the primary */
    {SCRIPT_WALK, "lua/walk.lua", SCRIPT_READ_ONLY},
};
#define NEXPECTED (int)(sizeof(expected) / sizeof(expected[0]))

/* Every script of the table, with its file and flags; no other. */
START_TEST(test_flags_unchanged)
{
    ck_assert_int_eq(SCRIPT_COUNT, NEXPECTED);
    int seen[SCRIPT_COUNT] = {0};
    for (int k = 0; k < NEXPECTED; k++) {
        int i = expected[k].which;
        ck_assert_int_ge(i, 0);
        ck_assert_int_lt(i, SCRIPT_COUNT);
        ck_assert_msg(!seen[i]++, "%s twice", expected[k].file);
        ck_assert_str_eq(script_table[i].file, expected[k].file);
        ck_assert_msg(script_table[i].flags == expected[k].flags, "%s: flags %d, want %d",
                      expected[k].file, script_table[i].flags, expected[k].flags);
    }
}
END_TEST

/* A body is there; one a replica may answer is flagged no-writes (Redis refuses a write in it),
 * and one that waits is not read-only. */
START_TEST(test_bodies)
{
    for (int i = 0; i < SCRIPT_COUNT; i++) {
        const struct script_def *d = &script_table[i];
        ck_assert_msg(d->body && strlen(d->body) > 100, "%s: no body", d->file);
        ck_assert_msg(!strstr(d->body, "--@script"), "%s: header line in the body", d->file);
        if (d->flags & SCRIPT_READ_ONLY) {
            ck_assert_msg(!strncmp(d->body, "#!lua flags=no-writes\n", 22), "%s", d->file);
            ck_assert_msg(!(d->flags & SCRIPT_WAITS), "%s: read-only and waits", d->file);
        }
    }
}
END_TEST

Suite *board_scripts_suite(void)
{
    Suite *s = suite_create("board_scripts");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_flags_unchanged);
    tcase_add_test(tc, test_bodies);
    suite_add_tcase(s, tc);
    return s;
}
