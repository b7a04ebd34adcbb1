/* test_hardening.c -- the hardening issue: signals, duplicate fields, trim arguments, NDJSON
 * lines, HTTP framing, special files and number rendering, each over real HTTP. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"

/* ---------------------------------------------------------------- signals */

/* A terminal hang-up (or a process manager's reload signal) must not stop rankd. */
START_TEST(sighup_ignored)
{
    /* the child inherits an ignored SIGHUP (nohup, some CI runners): test the default */
    signal(SIGHUP, SIG_DFL);
    struct rankd_proc p;
    ck_assert_int_eq(rankd_proc_start(&p, g_redis.port, NULL), 0);
    ck_assert_int_eq(kill(p.pid, SIGHUP), 0);
    usleep(300 * 1000);
    int status = 0;
    pid_t gone = waitpid(p.pid, &status, WNOHANG);
    if (gone == p.pid)
        p.pid = 0; /* nothing left to stop */
    ck_assert_msg(gone == 0, "rankd exited after SIGHUP (%s %d)",
                  WIFSIGNALED(status) ? "signal" : "status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    struct http_result r;
    ck_assert_int_eq(http_get(p.port, "/healthz", &r), 0);
    ck_assert_int_eq(r.status, 200);
    http_result_free(&r);
    rankd_proc_stop(&p);
}
END_TEST

Suite *hardening_suite(void)
{
    Suite *s = suite_create("hardening");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
        {"sighup", sighup_ignored},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, it_setup, it_teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
