/*
 * fixture.h -- integration-test support: a real redis-server process, rankd in-process on port 0,
 * and a libcurl HTTP client. No mocks: every test talks to Redis and rankd over real sockets.
 */
#ifndef RANKD_TEST_FIXTURE_H
#define RANKD_TEST_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "cluster.h"
#include "log.h"
#include "server.h"
#include "util.h"

/** A redis-server child process on a free loopback port (never 6379). */
struct redis_proc {
    pid_t pid;
    int port;
    char dir[128]; /**< mkdtemp working directory */
};

/** Start redis-server (no persistence). Returns 0, or -1 after printing why. */
int redis_proc_start(struct redis_proc *r);

/** Stop it (SIGTERM, wait). Safe to call twice. */
void redis_proc_stop(struct redis_proc *r);

/** Start again on the same port (after redis_proc_stop). 0 or -1. */
int redis_proc_restart(struct redis_proc *r);

/** build/rankd (the binary next to the test binary) as a child process, for what an in-process
 *  rankd cannot show: the process itself stopped (SIGSTOP) or signalled. */
struct rankd_proc {
    pid_t pid;
    int port;
};

/**
 * Start it on a free loopback port against Redis on `redis_port`, write token TEST_TOKEN, with
 * `args` (NULL-terminated, may be NULL) appended; waits until /healthz answers (5 s). Returns 0,
 * or -1 after printing why.
 */
int rankd_proc_start(struct rankd_proc *p, int redis_port, const char *const *args);

/** How rankd_proc_start_opts starts it. */
struct rankd_proc_opts {
    const char *const *args; /**< appended, NULL-terminated; may be NULL */
    const char *log_path;    /**< stderr goes to this file (no --log-level=warn then: rankd's
                              *   own default, info); NULL: inherited, at warn */
    int no_token;            /**< 1: no --write-token=TEST_TOKEN */
};

/** rankd_proc_start with options. */
int rankd_proc_start_opts(struct rankd_proc *p, int redis_port, const struct rankd_proc_opts *o);

/** SIGTERM and wait for it; returns the seconds the exit took (SIGKILL after 60 s). No-op when
 *  not running. */
double rankd_proc_stop(struct rankd_proc *p);

/** The URL rankd is given for Redis on `redis_port`: redis://127.0.0.1:<port>/0, or the
 *  cluster's (cluster_proc_url) when the port is a node of the cluster in use. */
void fixture_redis_url(int redis_port, char *out, size_t len);

/** Seconds an admin connection waits for a reply: set-up and assertions on a busy machine may be
 *  slow, never wrong (the connect itself still gives up after 2 s). */
#define ADMIN_COMMAND_TIMEOUT_S 30

/** Give admin connection c ADMIN_COMMAND_TIMEOUT_S for each reply. */
void redis_admin_patient(redisContext *c);

/** A direct hiredis connection for assertions and set-up; aborts the test when it fails. In
 *  cluster mode (fixture_use_cluster) redis_admin_cmd on it routes each command (cluster.h). */
redisContext *redis_admin(int port);

/** One command on an admin connection, printf-style as redisCommand; the reply must be freed. */
redisReply *redis_admin_cmd(redisContext *c, const char *fmt, ...);

/** A TCP connection to 127.0.0.1:port (for raw HTTP: half-sent or chunked requests), or -1. */
int connect_loopback(int port);

/** Start rankd on 127.0.0.1:0 against Redis on `redis_port`, with `token` ("" = writes off). */
struct rankd *rankd_test_start(int redis_port, const char *token);

/** The same with the configuration adjusted by `tweak` (may be NULL) after the test defaults,
 *  and test hooks (may be NULL). */
struct rankd *rankd_test_start_with(int redis_port, const char *token,
                                    void (*tweak)(struct config *cfg),
                                    const struct rankd_hooks *hooks);

/**
 * Load `n` members m000000.. straight into P:{board}:z (distinct scores n..1, stored as rankd
 * stores them on a desc/first/0-decimal board) and their keys into P:{board}:dense (its distinct
 * scores), the settings hash (`settings`: field value pairs separated by spaces) and the
 * registry, pipelined on `admin`. Much faster than HTTP for big
 * boards. Asserts on failure.
 */
void fixture_load_board(redisContext *admin, const char *prefix, const char *board, int n,
                        const char *settings);

/** The wall clock of test rankd instances started with fixture_clock_hooks (their periods'
 *  rankd_hooks.clock_ms): the time fixture_set_clock set, or the real clock (the default, and
 *  after fixture_set_clock(NULL)). */
extern const struct rankd_hooks fixture_clock_hooks;

/** Set that clock to "2036-11-30T12:00:00Z" or "2036-11-30T23:59:59.999Z" (UTC, read with
 *  timegm: independent of period.c); NULL: the real clock again. Asserts on a malformed time. */
void fixture_set_clock(const char *iso);

/** The milliseconds since the epoch of such a time. */
int64_t fixture_ts(const char *iso);

/** The token test rankd instances use. */
#define TEST_TOKEN "test-token-0123456789"

/** One HTTP exchange. */
struct http_result {
    long status;
    char *body; /**< NUL-terminated */
    size_t len;
    char *headers;  /**< raw response headers */
    cJSON *json;    /**< parsed body, or NULL */
    double seconds; /**< total time */
};

/**
 * Send a request to rankd on `port`. body may be NULL; ctype NULL means application/json when a
 * body is given; token NULL sends no Authorization header. Returns 0 or -1 (transport failure).
 */
int http_req(int port, const char *method, const char *path, const char *body, size_t body_len,
             const char *ctype, const char *token, struct http_result *out);

/** http_req with more request headers: headers[] ("Name: value" lines, NULL-terminated; the
 *  array may be NULL). */
int http_req_h(int port, const char *method, const char *path, const char *body, size_t body_len,
               const char *ctype, const char *token, const char *const *headers,
               struct http_result *out);

/** GET without a token. */
int http_get(int port, const char *path, struct http_result *out);

/** A write with the test token and a JSON body. */
int http_write(int port, const char *method, const char *path, const char *json,
               struct http_result *out);

void http_result_free(struct http_result *r);

/** A sample from GET /metrics: `name` is the whole series ("rankd_x_total" or
 *  "rankd_x{thread=\"0\"}"). Returns its value, or -1 when absent or /metrics failed. */
double http_metric(int port, const char *name);

/** How a raw header block (a status line, then "Name: value" lines with CRLF) varies on
 *  `token` (case-insensitive): 1 when one of its Vary lines lists it (RFC 9110 12.5.5: a
 *  comma-separated list; one line or several mean the same), else 0. *lines, when not NULL, is
 *  set to the number of Vary lines. */
int http_varies(const char *head, const char *token, int *lines);

/** The error code of an error body, or "" */
const char *http_error_code(const struct http_result *r);

/** Read a whole file into a new string (free()); NULL on failure. */
char *read_file(const char *path, size_t *len);

/* One MONITOR line: `1700000000.123456 [0 127.0.0.1:5555] "ZRANGE" "k" "0" "19"`, arguments
 * quoted as sdscatrepr does; `[0 lua]` marks commands a script ran. */
#define MON_TOKENS 12
#define MON_TOKEN_LEN 96

struct mon_cmd {
    int lua;                              /**< run by a script */
    int argc;                             /**< every argument, counted */
    char argv[MON_TOKENS][MON_TOKEN_LEN]; /**< the first MON_TOKENS, truncated */
};

/** Parse one MONITOR line. Returns 0, or -1 when the line is not a command (e.g. "OK"). */
int mon_parse(const char *line, struct mon_cmd *c);

/** 1 when the command is `name` (any case). */
int mon_is(const struct mon_cmd *c, const char *name);

#endif
