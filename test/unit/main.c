/* main.c -- unit tests. With no argument it runs every suite, or those named in
 * RANKD_TEST_SUITES=a,b or CK_RUN_SUITE (a name that is no suite is an error, not a run of
 * nothing); --list names them, one a line, so that scripts/test-all.sh can run them as several
 * processes at once.
 *
 * Forking: Check forks each test by default, which from an ASan process costs more than most
 * tests (a fork of the shadow memory's page tables, and LeakSanitizer's scan at each child's
 * exit). Only the suites marked `fork` below need it: they change the process (config: the
 * parser exits on a bad configuration, as rankd must, and tests set the environment and getopt's
 * globals; log: the log level, format and the metrics' counters). The others test functions of
 * their arguments only and run in this process (CK_NOFORK), their leaks found once at its exit;
 * Check's per-test timeouts need the fork, so an alarm bounds that runner instead (a hang guard,
 * not a contract). CK_FORK=yes (or no) in the environment decides for every suite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suite_list.h"
#include "suites.h"

/* clang-format off */
static const struct {
    const char *name; /* the Suite's name (CK_RUN_SUITE, RANKD_TEST_SUITES, --list) */
    Suite *(*suite)(void);
    int fork; /* 1: each test in a process of its own (it changes the process: see above) */
} suites[] = {
    {"score_codec", score_codec_suite, 0},
    {"request", request_suite, 0},
    {"config", config_suite, 1},
    {"period", period_suite, 0},
    {"tzif", tzif_suite, 0},
    {"util", util_suite, 0},
    {"render", render_suite, 0},
    {"ndjson", ndjson_suite, 0},
    {"freshness", freshness_suite, 0},
    {"hardening", hardening_suite, 0},
    {"json_number", json_number_suite, 0},
    {"gzip", gzip_suite, 0},
    {"cors", cors_suite, 0},
    {"filters", filters_suite, 0},
    {"cidr", cidr_suite, 0},
    {"peer_count", peer_count_suite, 0},
    {"validate", validate_suite, 0},
    {"log", log_suite, 1},
    {"errors", errors_suite, 0},
    {"http", http_suite, 0},
    {"upload", upload_suite, 0},
    {"idem", idem_suite, 0},
    {"rank", rank_suite, 0},
    {"cursor", cursor_suite, 0},
    {"store_reply", store_reply_suite, 0},
    {"page_values", page_values_suite, 0},
    {"crc16", crc16_suite, 0},
    {"store_cluster", store_cluster_suite, 0},
    {"board_keys", board_keys_suite, 0},
    {"board_settings", board_settings_suite, 0},
    {"board_read", board_read_suite, 0},
    {"board_ctl", board_ctl_suite, 0},
    {"board_scripts", board_scripts_suite, 0},
    {"board_write", board_write_suite, 0},
    {"page_settle", page_settle_suite, 0},
};
/* clang-format on */

#define NSUITES (sizeof(suites) / sizeof(suites[0]))

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < NSUITES; i++)
            printf("%s\n", suites[i].name);
        return EXIT_SUCCESS;
    }
    if (argc > 1) {
        fprintf(stderr,
                "usage: %s [--list] (environment: RANKD_TEST_SUITES=a,b, CK_RUN_SUITE, "
                "CK_RUN_CASE; test/README.md)\n",
                argv[0]);
        return EXIT_FAILURE;
    }
    const char *only = getenv("RANKD_TEST_SUITES");
    if (!only || !*only)
        only = getenv("CK_RUN_SUITE");
    /* runners[0]: the suites run in this process; runners[1]: those forked for each test */
    SRunner *runners[2] = {NULL, NULL};
    const char *ck_fork = getenv("CK_FORK");
    int fork_all = ck_fork && strcmp(ck_fork, "no") != 0;
    int fork_none = ck_fork && strcmp(ck_fork, "no") == 0;
    for (size_t i = 0; i < NSUITES; i++) {
        if (!suite_listed(only, suites[i].name))
            continue;
        Suite *s = suites[i].suite();
        SRunner **sr = &runners[fork_all || (!fork_none && suites[i].fork)];
        if (*sr)
            srunner_add_suite(*sr, s);
        else
            *sr = srunner_create(s);
    }
    if (!runners[0] && !runners[1]) {
        fprintf(stderr, "no unit suite is named '%s' (--list names them)\n", only);
        return EXIT_FAILURE;
    }
    unsetenv("CK_RUN_SUITE"); /* chosen above: Check's own filter would drop all but one suite */
    int failed = 0;
    if (runners[0]) {
        /* 300 s, times CK_TIMEOUT_MULTIPLIER: these suites take under 10 s under ASan on a
         * busy machine; a test that hangs ends the run (SIGALRM) instead of holding it */
        const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
        unsigned m = mult && atoi(mult) > 0 ? (unsigned)atoi(mult) : 1;
        srunner_set_fork_status(runners[0], CK_NOFORK);
        alarm(300 * m);
        srunner_run_all(runners[0], CK_NORMAL);
        alarm(0);
        failed += srunner_ntests_failed(runners[0]);
        srunner_free(runners[0]);
    }
    if (runners[1]) {
        srunner_run_all(runners[1], CK_NORMAL);
        failed += srunner_ntests_failed(runners[1]);
        srunner_free(runners[1]);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
