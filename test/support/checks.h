/*
 * checks.h -- integration-test support shared by the suites: requests that assert their status
 * (and error code), JSON fields that must be there, a response header's value, the top-level
 * Redis commands a request cost (MONITOR), a monotonic clock and a sleep, a seeded generator.
 * Every check fails the running test (Check's ck_assert) with what was sent and what came back.
 */
#ifndef RANKD_TEST_CHECKS_H
#define RANKD_TEST_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "fixture.h"

/** Monotonic seconds (CLOCK_MONOTONIC). */
double now_s(void);

/** Sleep `ms` milliseconds (resumed when a signal cuts it short). */
void sleep_ms(int ms);

/** The next value of a splitmix64 sequence whose state is *s: the same seed, the same values. */
uint64_t mix64(uint64_t *s);

/** A request to rankd on `port` with the write token (body may be NULL: none; else JSON):
 *  asserts an answer with status `want`; r is the caller's (http_result_free). */
void http_expect(int port, const char *method, const char *path, const char *body, long want,
                 struct http_result *r);

/** http_expect, the result freed. */
void http_expect_free(int port, const char *method, const char *path, const char *body, long want);

/** http_expect, and the reply's error code must be `code`; freed. */
void http_expect_error(int port, const char *method, const char *path, const char *body, long want,
                       const char *code);

/** http_expect; returns its parsed body (may be NULL when not JSON; cJSON_Delete it). */
cJSON *http_expect_json(int port, const char *method, const char *path, const char *body,
                        long want);

/** Field `name` of object o (case-sensitive), which must be a number: its value. */
double json_num(const cJSON *o, const char *name);

/** Field `name` of object o (case-sensitive), which must be a string: its value (o's). */
const char *json_str(const cJSON *o, const char *name);

/** Response header `name`'s value (any case) into out (cut to n - 1 bytes); "" when absent.
 *  Returns out. */
const char *http_header_value(const struct http_result *r, const char *name, char *out, size_t n);

/** The key of a board's set in Redis: "<prefix>:{<board>}:z", or with ":<period>" (period not
 *  NULL). */
void board_zkey(char *out, size_t len, const char *prefix, const char *board, const char *period);

/** The integer reply of `<cmd> <key>` on admin connection a (asserts an integer). */
long long redis_key_int(redisContext *a, const char *cmd, const char *key);

/** 1 when member `id` is in the set of `board`'s `period` (NULL: the board's own set). */
int board_zhas(redisContext *a, const char *prefix, const char *board, const char *period,
               const char *id);

/** The start (ms) the board's period index lists `period`'s set at, or -1 when not listed. */
long long board_period_start(redisContext *a, const char *prefix, const char *board,
                             const char *period);

/** The calls of command `cmd` (lower case) in INFO commandstats of the one server `c` is
 *  connected to (commands scripts ran counted too); 0 when it never ran. */
long long redis_cmd_calls(redisContext *c, const char *cmd);

/** A MONITOR connection to the Redis on `redis_port` (10 s per reply); aborts the test when
 *  Redis refuses it. */
redisContext *mon_start(int redis_port);

/** The top-level commands `mon` saw since mon_start, as "VERB VERB ..." into verbs (commands a
 *  script ran not counted): an ECHO sent on `admin` (a connection to the same Redis) marks the
 *  end. Frees mon; returns how many. */
int mon_top_level(redisContext *admin, redisContext *mon, char *verbs, size_t len);

/** The commands scripts ran that `mon` saw since mon_start, as " VERB KEY" each into verbs, and
 *  the EVALSHAs among the top-level ones: how many into *evalsha, the argument count of the first
 *  `max` (EVALSHA, sha and numkeys included) into argc (NULL with max 0). An ECHO sent on `admin`
 *  marks the end. Frees mon; returns how many commands the scripts ran. */
int mon_scripts(redisContext *admin, redisContext *mon, char *verbs, size_t len, int *argc, int max,
                int *evalsha);

#endif
