/* main.c -- unit tests: one SRunner over every suite (Check forks each test). */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
    SRunner *sr = srunner_create(score_codec_suite());
    srunner_add_suite(sr, request_suite());
    srunner_add_suite(sr, config_suite());
    srunner_add_suite(sr, period_suite());
    srunner_add_suite(sr, util_suite());
    srunner_add_suite(sr, render_suite());
    srunner_add_suite(sr, ndjson_suite());
    srunner_add_suite(sr, freshness_suite());
    srunner_add_suite(sr, hardening_suite());
    srunner_add_suite(sr, json_number_suite());
    srunner_add_suite(sr, gzip_suite());
    srunner_add_suite(sr, cors_suite());
    srunner_add_suite(sr, cidr_suite());
    srunner_add_suite(sr, validate_suite());
    srunner_add_suite(sr, log_suite());
    srunner_add_suite(sr, http_suite());
    srunner_add_suite(sr, upload_suite());
    srunner_add_suite(sr, idem_suite());
    srunner_add_suite(sr, rank_suite());
    srunner_add_suite(sr, cursor_suite());
    srunner_add_suite(sr, store_reply_suite());
    srunner_add_suite(sr, page_values_suite());
    srunner_add_suite(sr, crc16_suite());
    srunner_add_suite(sr, store_cluster_suite());
    srunner_add_suite(sr, board_keys_suite());
    srunner_add_suite(sr, board_settings_suite());
    srunner_add_suite(sr, board_scripts_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
