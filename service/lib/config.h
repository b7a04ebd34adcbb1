/*
 * config.h -- rankd's configuration from command-line flags and RANKD_* environment variables.
 *
 * Precedence: flag, then environment variable, then default. Every option has both forms; the
 * table in config.c (struct config_option) is the single source of names, types, bounds, defaults
 * and help text: `rankd --help`, the man page's OPTIONS and docs/operating.md's table are printed
 * from it (`make docs` writes them, `make lint` fails when they differ).
 * Validation happens here, once, at start-up: a bad value is one clear line and exit code 2.
 */
#ifndef RANKD_CONFIG_H
#define RANKD_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "cidr.h"

#define CONFIG_STR_MAX 512

#define REDIS_URL_SEEDS_MAX 16 /**< nodes a redis-cluster:// URL may name */

/** What a URL points at. */
enum redis_url_mode {
    REDIS_URL_SINGLE = 0, /**< redis:// or unix://: one Redis (a primary) */
    REDIS_URL_CLUSTER,    /**< redis-cluster://: a Redis Cluster, found from its seeds */
    REDIS_URL_SENTINEL,   /**< redis-sentinel://: the primary Redis Sentinels (the seeds) name */
};

/** One node named by a URL. */
struct redis_seed {
    char host[256]; /**< TCP host */
    int port;       /**< TCP port */
};

/** A parsed redis://, unix:// or redis-cluster:// URL. */
struct redis_url {
    int mode;            /**< enum redis_url_mode */
    char host[256];      /**< TCP host ("" for unix); a cluster's first seed */
    int port;            /**< TCP port; a cluster's first seed's */
    char unix_path[256]; /**< unix socket path ("" for TCP) */
    char username[128];  /**< ACL user ("" when none) */
    char password[256];  /**< AUTH password ("" when none) */
    int db;              /**< database index (0 for a cluster: it has no other) */
    char master[128];    /**< redis-sentinel://: the monitored master's name; else "" */
    int nseeds;          /**< TCP nodes named: 1 for redis://, 0 for unix://, 1.. for a cluster */
    struct redis_seed seeds[REDIS_URL_SEEDS_MAX]; /**< seeds[0..nseeds); a cluster's slot map is
                                                   *   read from the first that answers */
};

struct config {
    char listen_host[128];            /**< address to bind, e.g. 127.0.0.1 or ::1 */
    int listen_port;                  /**< TCP port, 0 = any free port */
    char admin_host[128];             /**< --admin-listen's address ("" = none) */
    struct cidr_list trusted_proxies; /**< --trusted-proxies: X-Forwarded-For is taken from
                                       *   these peers only (cidr.h) */
    int admin_port; /**< its port (0 = any free port), -1 = no admin listener: /metrics
                     *   and /admin/... are on the listen address */
    char redis_url_text[CONFIG_STR_MAX];
    struct redis_url redis;
    char write_token[CONFIG_STR_MAX];      /**< a token from the flag or variable, "" = none */
    char write_token_file[CONFIG_STR_MAX]; /**< a file of tokens (tokens.h), "" = none */
    char key_prefix[65];
    char default_board[65];
    int threads;             /**< --threads: parsed and ignored (there is no blocking pool) */
    int max_connections;     /**< HTTP connections open at once */
    int http_threads;        /**< event threads of the HTTP layer; 0 = auto (loop.h) */
    int max_per_ip;          /**< HTTP connections from one address, 0 = no limit. The default,
                              *   256, is half of --max-connections' 512: no one address can take
                              *   the whole service, while a proxy's keep-alive pool and bursts,
                              *   a backend's connection pool or a benchmark's 64-200
                              *   connections fit */
    int header_timeout_ms;   /**< a request's line and headers arrive within this (408 else) */
    int max_streams;         /**< event streams open at once, 0 = no limit but the connections' */
    int max_streams_per_ip;  /**< event streams from one address, 0 = no limit */
    int stream_heartbeat_ms; /**< an idle event stream's comment line comes after this */
    char cors_text[CONFIG_STR_MAX]; /**< --cors-origin as given: the origins that may read
                                     *   cross-origin, parsed at start-up (cors.h: main.c checks
                                     *   it, server.c keeps the policy) */
    int redis_timeout_ms;           /**< per Redis command and per wait for a connection */
    int connect_timeout_ms;         /**< per Redis dial */
    int write_replicas;             /**< writes WAIT for this many replicas (store.h); the data
                                     *   Redis only */
    int request_timeout_ms;         /**< one deadline across a request's round trips on the event
                                     *   threads (http_request.deadline_ms) */
    int log_level;                  /**< enum log_level: 0 debug .. 3 error */
    int log_format;                 /**< enum log_format: 0 text, 1 json */
    int access_log;                 /**< 1: an access line per request (log.h) */
    char cache_url_text[CONFIG_STR_MAX]; /**< "" = pages cached in the data Redis */
    struct redis_url cache_redis;
    int page_grace_ms;               /**< stale window after a page's soft TTL */
    int page_lock_ttl_ms;            /**< stampede lock TTL */
    int page_max_wait_ms;            /**< longest wait for another holder's page */
    double xfetch_beta;              /**< early-refresh eagerness, 0 = off */
    int l1_ttl_ms;                   /**< in-process page tier TTL, 0 = off, <= 500 */
    long l1_max_bytes;               /**< in-process page tier budget */
    char static_dir[CONFIG_STR_MAX]; /**< web frontend directory, "" = found next to the binary */
    char embed_frame_ancestors[CONFIG_STR_MAX]; /**< --embed-frame-ancestors: the sites that may
                                                 *   frame the embed page (a CSP frame-ancestors
                                                 *   source list, checked: no ; , or quotes but
                                                 *   'self' and 'none'); never "" once parsed */
    char redis_password_file[CONFIG_STR_MAX];   /**< --redis-password-file, "" = none: its password
                                               *   is in redis.password and cache_redis.password
                                               *   (where the URL has none of its own) */
    int password_in_url; /**< a password was given inside a URL: 1 --redis, 2 --cache-redis (bits);
                          *   main.c warns about it (ps and the environment show URLs) */
    int read_from_replicas; /**< 1: page, member and around reads may go to replicas (a cluster
                             *   or Sentinel --redis only; store_config.read_replicas) */
};

/** How an option's text becomes a value (struct config_option.kind). */
enum config_kind {
    CONFIG_TEXT = 0, /**< parsed by the row's own `set` */
    CONFIG_INT,      /**< a decimal integer within lo..hi, stored as int at offset */
    CONFIG_NUMBER,   /**< a decimal number within lo..hi, stored as double at offset */
    CONFIG_CHOICE,   /**< one of `choices`, stored as its index (an int) at offset */
    CONFIG_LONG,     /**< a decimal integer within lo..hi, stored as long at offset */
};

/** never echoed in an error (a token, a URL that may hold a password) */
#define CONFIG_SECRET 1U
#define CONFIG_SWITCH 2U /**< the flag alone means "on" (--read-from-replicas) */
#define CONFIG_CHOICES_MAX 4

/**
 * One option: the single source of its flag, variable, type, bounds, default and help, from which
 * config_parse reads it and config_help prints `rankd --help` (text), the man page's OPTIONS
 * (man) and docs/operating.md's table (markdown). Rows are static and live for the process.
 */
struct config_option {
    const char *flag;  /**< long flag without the dashes, e.g. "redis-timeout-ms" */
    const char *env;   /**< its environment variable, e.g. "RANKD_REDIS_TIMEOUT_MS" */
    const char *value; /**< the value's name in the help: "MS", "URL", "on|off"... */
    double lo, hi;     /**< CONFIG_INT, CONFIG_NUMBER: the inclusive bounds */
    const char *choices[CONFIG_CHOICES_MAX]; /**< CONFIG_CHOICE: the words, NULL-ended */
    size_t offset;                           /**< where in struct config the value goes */
    int (*set)(struct config *cfg, const char *v, const char **why); /**< CONFIG_TEXT */
    const char *bounds; /**< CONFIG_TEXT: what is accepted, in words; else NULL (from the kind) */
    const char *deflt;  /**< the default as text (parsed like user input) */
    const char *help;   /**< one sentence or two; also the error message's explanation */
    int kind;           /**< enum config_kind */
    unsigned flags;     /**< CONFIG_SECRET, CONFIG_SWITCH */
};

/** The option table: config_option_at(0 .. config_option_count()-1); NULL out of range. */
int config_option_count(void);
const struct config_option *config_option_at(int i);

/** What config_help prints. */
enum config_help_format {
    CONFIG_HELP_TEXT = 0, /**< rankd --help */
    CONFIG_HELP_MAN,      /**< troff lines for the man page's OPTIONS section (rankd --help=man) */
    CONFIG_HELP_MARKDOWN, /**< a Markdown table of every option (rankd --help=markdown) */
};

/** Print every option of the table, and --help and --version, to out in `format`. 0, or -EIO
 *  when out failed. */
int config_help(FILE *out, int format, const char *argv0);

/** Fill *cfg with the defaults. */
void config_defaults(struct config *cfg);

/**
 * Parse argv and the environment over the defaults. Returns 0; 1 when --help[=text|man|markdown]
 * or --version was printed to stdout, or --check-config found everything valid and said so
 * (exit 0); or -EINVAL after writing one line naming the option and what is allowed into
 * err[0..errlen).
 */
int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen);

/** Parse a redis URL: redis://[[user]:password@]host[:port][/db], unix:///path[?db=N],
 *  redis-cluster://[[user]:password@]host[:port][,host[:port]...][/0] (each port 6379 when not
 *  given), or redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/<master>[/db]
 *  (the sentinels, each port 26379 when not given; the master's name [A-Za-z0-9._-]{1,127}; the
 *  user and password are the primary's). At most REDIS_URL_SEEDS_MAX hosts; IPv6 in brackets.
 *  0 or -EINVAL. */
int config_parse_redis_url(const char *text, struct redis_url *out);

/** Parse "host:port", "[v6]:port" or ":port". 0 or -EINVAL. */
int config_parse_listen(const char *text, char *host, size_t hostlen, int *port);

/** Print the usage text to stdout. */
void config_usage(const char *argv0);

#endif
