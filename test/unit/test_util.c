/* test_util.c -- the fixed-buffer string builder behind keys and header values (util.h), and the
 * blocks kept per thread for reuse (spare.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spare.h"
#include "suites.h"
#include "util.h"

START_TEST(test_strb_matches_snprintf)
{
    const int64_t values[] = {
        0, 1, -1, 9, 10, 99, 1000, -1000, 1796036795418479985, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char got[64], want[64];
        struct strb b;
        strb_init(&b, got, sizeof(got));
        strb_str(&b, "P:{b}:page:");
        strb_i64(&b, values[i]);
        strb_str(&b, ":-");
        snprintf(want, sizeof(want), "P:{b}:page:%" PRId64 ":-", values[i]);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(b.len, strlen(want));
        ck_assert_int_eq(b.over, 0);
    }
}
END_TEST

START_TEST(test_strb_cuts_like_snprintf)
{
    for (size_t cap = 1; cap <= 12; cap++) {
        char got[16], want[16];
        memset(got, 'x', sizeof(got));
        struct strb b;
        strb_init(&b, got, cap);
        strb_str(&b, "abc:");
        strb_i64(&b, -123456);
        snprintf(want, cap, "abc:%d", -123456);
        ck_assert_str_eq(got, want);
        ck_assert_int_eq(b.over, cap <= strlen("abc:-123456"));
        ck_assert_int_eq(got[cap], 'x'); /* nothing written past cap */
    }
    char small[4];
    ck_assert_uint_eq(util_copy(small, sizeof(small), "abcdef"), 3);
    ck_assert_str_eq(small, "abc");
    ck_assert_uint_eq(util_copy(small, sizeof(small), ""), 0);
    ck_assert_str_eq(small, "");
}
END_TEST

/* A block given back is the next one of its size taken on the same thread, never one of another
 * size; past SPARE_KEEP of a size the rest are freed (ASan's leak check would see a block lost);
 * another thread's blocks are its own, freed when it ends. */
START_TEST(test_spare_reuses_by_size)
{
    void *a = spare_take(1500), *b = spare_take(700);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    memset(a, 1, 1500);
    memset(b, 2, 700);
    spare_give(a, 1500);
    spare_give(b, 700);
    spare_give(NULL, 700); /* ignored */
    ck_assert_ptr_eq(spare_take(700), b);
    ck_assert_ptr_eq(spare_take(1500), a);
    void *c = spare_take(1500); /* none kept: a new one */
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_ne(c, a);
    void *many[SPARE_KEEP + 8];
    for (int i = 0; i < SPARE_KEEP + 8; i++)
        ck_assert_ptr_nonnull(many[i] = spare_take(900));
    for (int i = 0; i < SPARE_KEEP + 8; i++)
        spare_give(many[i], 900); /* the last 8 freed */
    for (int i = SPARE_KEEP - 1; i >= 0; i--)
        ck_assert_ptr_eq(spare_take(900), many[i]); /* last given, first taken */
    for (int i = 0; i < SPARE_KEEP; i++)
        free(many[i]); /* a taken block may go to free() as well */
    free(a);
    free(b);
    free(c);
}
END_TEST

static void *give_on_thread(void *arg)
{
    spare_give(arg, 1200);                       /* kept by this thread... */
    return spare_take(1200) == arg ? arg : NULL; /* ...and taken back here */
}

static void *keep_on_thread(void *arg)
{
    spare_give(arg, 1200); /* freed when the thread ends */
    return NULL;
}

START_TEST(test_spare_per_thread)
{
    pthread_t t;
    void *p = malloc(1200), *got = NULL;
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(pthread_create(&t, NULL, give_on_thread, p), 0);
    ck_assert_int_eq(pthread_join(t, &got), 0);
    ck_assert_ptr_eq(got, p);
    void *mine = spare_take(1200); /* this thread has none of that size kept */
    ck_assert_ptr_ne(mine, NULL);
    ck_assert_int_eq(pthread_create(&t, NULL, keep_on_thread, p), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    free(mine);
}
END_TEST

Suite *util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("strb");
    tcase_add_test(tc, test_strb_matches_snprintf);
    tcase_add_test(tc, test_strb_cuts_like_snprintf);
    tcase_add_test(tc, test_spare_reuses_by_size);
    tcase_add_test(tc, test_spare_per_thread);
    suite_add_tcase(s, tc);
    return s;
}
