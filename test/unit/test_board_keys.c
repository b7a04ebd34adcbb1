/* test_board_keys.c -- what a board owns (board.h: board_key_specs): every kind of a board's keys
 * is unlinked by DELETE /boards/{board} or unreachable after it (and expires), the delete names
 * one key of each unlinked kind, and no service source makes a board's key outside the list. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "suites.h"

/* Every kind: its suffix is its own, and a delete either unlinks it or makes it unreachable,
 * then it expires: nothing of a deleted board is kept for ever, nor found by a new one. */
START_TEST(test_every_kind_gone_after_delete)
{
    for (int k = 0; k < BOARD_KEY_KINDS; k++) {
        const struct board_key_spec *s = &board_key_specs[k];
        ck_assert_msg(s->suffix && s->suffix[0] == ':' && strlen(s->suffix) > 1, "kind %d", k);
        for (int j = 0; j < k; j++)
            ck_assert_msg(strcmp(s->suffix, board_key_specs[j].suffix) != 0, "%s twice", s->suffix);
        switch (s->fate) {
        case BOARD_GONE_UNLINKED:
            break;
        case BOARD_GONE_GEN:
        case BOARD_GONE_LIFE:
        case BOARD_GONE_TOKEN:
        case BOARD_GONE_TTL:
            ck_assert_msg(s->expires, "%s: left by a delete, so it must expire", s->suffix);
            break;
        default:
            ck_abort_msg("%s: no fate", s->suffix);
        }
    }
}
END_TEST

/* A key made of each kind is known as that kind, and only for its own board and prefix. */
START_TEST(test_kind_of)
{
    char key[BOARD_KEY_LEN];
    struct strb b;
    for (int k = 0; k < BOARD_KEY_KINDS; k++) {
        board_key_make(&b, key, sizeof(key), "rankd", "b1", (enum board_key_kind)k);
        const char *sfx = board_key_specs[k].suffix;
        if (sfx[strlen(sfx) - 1] == ':')
            strb_str(&b, "x:1");
        ck_assert_int_eq(board_key_kind_of(key, "rankd", "b1"), k);
        ck_assert_int_eq(board_key_kind_of(key, "rankd", "b"), -1);
        ck_assert_int_eq(board_key_kind_of(key, "rank", "b1"), -1);
        ck_assert_int_eq(board_key_kind_of(key, "other", "b1"), -1);
    }
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:z:2026-11-30", "rankd", "b1"), BOARD_KEY_SET);
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:dense:2026-W49", "rankd", "b1"),
                     BOARD_KEY_DENSE);
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:page:17:-:20:1:lock", "rankd", "b1"),
                     BOARD_KEY_PAGE);
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:zz", "rankd", "b1"), -1);
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:idem:", "rankd", "b1"), -1);
    ck_assert_int_eq(board_key_kind_of("rankd:{b1}:other", "rankd", "b1"), -1);
    ck_assert_int_eq(board_key_kind_of("rankd:boards", "rankd", "b1"), -1);
}
END_TEST

/* The delete's keys: one of every unlinked kind (the settings first, the index second, as
 * delete_board.lua takes them), each period's set and distinct scores, nothing of another kind
 * or board. */
START_TEST(test_owned_keys)
{
    const char periods[2][PERIOD_ID_MAX] = {"2026-11-30", "2026-11-29"};
    char out[20][BOARD_KEY_LEN];
    int n = board_owned_keys("rankd", "b1", periods, 2, out, 20);
    int unlinked = 0, seen[BOARD_KEY_KINDS] = {0};
    for (int k = 0; k < BOARD_KEY_KINDS; k++)
        unlinked += board_key_specs[k].fate == BOARD_GONE_UNLINKED;
    ck_assert_int_eq(n, unlinked + 8);
    ck_assert_str_eq(out[0], "rankd:{b1}:meta");
    ck_assert_str_eq(out[1], "rankd:{b1}:periods");
    for (int i = 0; i < n; i++) {
        int k = board_key_kind_of(out[i], "rankd", "b1");
        ck_assert_msg(k >= 0 && board_key_specs[k].fate == BOARD_GONE_UNLINKED, "%s", out[i]);
        seen[k]++;
    }
    for (int k = 0; k < BOARD_KEY_KINDS; k++)
        if (board_key_specs[k].fate == BOARD_GONE_UNLINKED)
            ck_assert_msg(seen[k] >= 1, "%s: not named by the delete", board_key_specs[k].suffix);
    ck_assert_str_eq(out[unlinked], "rankd:{b1}:z:2026-11-30");
    ck_assert_str_eq(out[unlinked + 1], "rankd:{b1}:dense:2026-11-30");
    ck_assert_str_eq(out[unlinked + 2], "rankd:{b1}:ids:2026-11-30");
    ck_assert_str_eq(out[unlinked + 3], "rankd:{b1}:upd:2026-11-30");
    ck_assert_str_eq(out[unlinked + 5], "rankd:{b1}:dense:2026-11-29");
    ck_assert_str_eq(out[unlinked + 6], "rankd:{b1}:ids:2026-11-29");
    ck_assert_str_eq(out[unlinked + 7], "rankd:{b1}:upd:2026-11-29");
    ck_assert_int_eq(board_owned_keys("rankd", "b1", periods, 2, out, unlinked + 7), -ENOSPC);
    ck_assert_int_eq(board_owned_keys("rankd", "b1", NULL, 0, out, unlinked), unlinked);
}
END_TEST

/* No service source names a board's key by hand: "<prefix>:{<board>}" is written only by
 * board_key_make (service/core/board_keys.c), so every kind of key a board has is in the list. The
 * shared records' buckets (records.c, P:{items:<b>}) are not a board's. */
static char found[4096];
static int scan_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t len = strlen(path);
    if (type != FTW_F || len < 2 || strcmp(path + len - 2, ".c") != 0)
        return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strcmp(base, "board_keys.c") == 0 || strcmp(base, "records.c") == 0)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    for (int no = 1; fgets(line, sizeof(line), f); no++) {
        /* the literal ":{" opening a string (not an escaped quote in JSON text) */
        for (char *p = strstr(line, "\":{"); p; p = strstr(p + 1, "\":{")) {
            if (p > line && p[-1] == '\\')
                continue;
            size_t at = strlen(found);
            if (at + 300 < sizeof(found))
                snprintf(found + at, 300, "%.120s:%d: %.160s", path, no, line);
        }
    }
    fclose(f);
    return 0;
}

START_TEST(test_no_key_outside_the_list)
{
    found[0] = '\0';
    /* run from the repository's root (make test-unit) */
    ck_assert_msg(nftw("service", scan_file, 16, FTW_PHYS) == 0, "service/: %s", strerror(errno));
    ck_assert_msg(found[0] == '\0', "a board's key made outside board_key_make:\n%s", found);
}
END_TEST

Suite *board_keys_suite(void)
{
    Suite *s = suite_create("board_keys");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_every_kind_gone_after_delete);
    tcase_add_test(tc, test_kind_of);
    tcase_add_test(tc, test_owned_keys);
    tcase_add_test(tc, test_no_key_outside_the_list);
    suite_add_tcase(s, tc);
    return s;
}
