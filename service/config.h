/*
 * config.h -- rankd's configuration from command-line flags and RANKD_* environment variables.
 *
 * Precedence: flag, then environment variable, then default. Every option has both forms; the
 * table in config.c is the single source of names, defaults and help text (`rankd --help`).
 * Validation happens here, once, at start-up: a bad value is one clear line and exit code 2.
 */
#ifndef RANKD_CONFIG_H
#define RANKD_CONFIG_H

#include <stddef.h>

#define CONFIG_STR_MAX 512

/** A parsed redis:// or unix:// URL. */
struct redis_url {
    char host[256];      /**< TCP host ("" for unix) */
    int port;            /**< TCP port */
    char unix_path[256]; /**< unix socket path ("" for TCP) */
    char username[128];  /**< ACL user ("" when none) */
    char password[256];  /**< AUTH password ("" when none) */
    int db;              /**< database index */
};

struct config {
    char listen_host[128]; /**< address to bind, e.g. 127.0.0.1 or ::1 */
    int listen_port;       /**< TCP port, 0 = any free port */
    char redis_url_text[CONFIG_STR_MAX];
    struct redis_url redis;
    char write_token[CONFIG_STR_MAX]; /**< "" = writes refused */
    char key_prefix[65];
    char default_board[65];
    int threads;            /**< --threads: parsed and ignored (there is no blocking pool) */
    int max_connections;    /**< HTTP connections open at once */
    int http_threads;       /**< event threads of the HTTP layer; 0 = auto (http.h) */
    int max_per_ip;         /**< HTTP connections from one address, 0 = no limit */
    int redis_timeout_ms;   /**< per Redis command and per wait for a connection */
    int connect_timeout_ms; /**< per Redis dial */
    int request_timeout_ms; /**< one deadline across a request's round trips on the event
                             *   threads (http_request.deadline_ms) */
    int log_level;          /**< 0 debug .. 3 error */
    char cache_url_text[CONFIG_STR_MAX]; /**< "" = pages cached in the data Redis */
    struct redis_url cache_redis;
    int page_grace_ms;               /**< stale window after a page's soft TTL */
    int page_lock_ttl_ms;            /**< stampede lock TTL */
    int page_max_wait_ms;            /**< longest wait for another holder's page */
    double xfetch_beta;              /**< early-refresh eagerness, 0 = off */
    int l1_ttl_ms;                   /**< in-process page tier TTL, 0 = off, <= 500 */
    long l1_max_bytes;               /**< in-process page tier budget */
    char static_dir[CONFIG_STR_MAX]; /**< web frontend directory, "" = found next to the binary */
};

/** Fill *cfg with the defaults. */
void config_defaults(struct config *cfg);

/**
 * Parse argv and the environment over the defaults. Returns 0; 1 when --help or --version was
 * printed (exit 0); or -EINVAL after writing one line naming the option and what is allowed into
 * err[0..errlen).
 */
int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen);

/** Parse a redis URL: redis://[[user]:password@]host[:port][/db] or unix:///path[?db=N]. 0 or
 * -EINVAL. */
int config_parse_redis_url(const char *text, struct redis_url *out);

/** Parse "host:port", "[v6]:port" or ":port". 0 or -EINVAL. */
int config_parse_listen(const char *text, char *host, size_t hostlen, int *port);

/** Print the usage text to stdout. */
void config_usage(const char *argv0);

#endif
