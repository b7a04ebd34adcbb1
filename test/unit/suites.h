/* suites.h -- the unit suites: pure functions only, no Redis and no network. */
#ifndef RANKD_TEST_UNIT_SUITES_H
#define RANKD_TEST_UNIT_SUITES_H

#include <check.h>

Suite *score_codec_suite(void);
Suite *request_suite(void);
Suite *config_suite(void);
Suite *period_suite(void);
Suite *tzif_suite(void);
Suite *util_suite(void);
Suite *render_suite(void);
Suite *ndjson_suite(void);
Suite *freshness_suite(void);
Suite *hardening_suite(void);
Suite *json_number_suite(void);
Suite *gzip_suite(void);
Suite *cors_suite(void);
Suite *filters_suite(void);
Suite *validate_suite(void);
Suite *log_suite(void);
Suite *cidr_suite(void);
Suite *peer_count_suite(void);
Suite *errors_suite(void);
Suite *http_suite(void);
Suite *upload_suite(void);
Suite *idem_suite(void);
Suite *rank_suite(void);
Suite *cursor_suite(void);
Suite *store_reply_suite(void);
Suite *page_values_suite(void);
Suite *crc16_suite(void);
Suite *store_cluster_suite(void);
Suite *board_keys_suite(void);
Suite *board_settings_suite(void);
Suite *board_read_suite(void);
Suite *board_ctl_suite(void);
Suite *board_scripts_suite(void);
Suite *board_write_suite(void);
Suite *page_settle_suite(void);

#endif
