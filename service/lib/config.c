/* config.c -- flags and RANKD_* variables; see config.h. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "request.h"
#include "tokens.h"
#include "version.h"

enum opt_kind { OPT_STR, OPT_INT };

struct option_def {
    const char *flag;  /**< long flag without dashes */
    const char *env;   /**< environment variable */
    const char *deflt; /**< default as text */
    const char *help;
};

enum {
    O_LISTEN,
    O_REDIS,
    O_TOKEN,
    O_PREFIX,
    O_THREADS,
    O_DEFAULT_BOARD,
    O_MAX_CONN,
    O_REDIS_TIMEOUT,
    O_CONNECT_TIMEOUT,
    O_WRITE_REPLICAS,
    O_LOG_LEVEL,
    O_CACHE_REDIS,
    O_GRACE,
    O_LOCK_TTL,
    O_MAX_WAIT,
    O_BETA,
    O_L1_TTL,
    O_L1_BYTES,
    O_STATIC_DIR,
    O_PER_IP,
    O_HTTP_THREADS,
    O_REQUEST_TIMEOUT,
    O_TOKEN_FILE,
    O_LOG_FORMAT,
    O_ACCESS_LOG,
    O_HEADER_TIMEOUT,
    O_CORS,
    O_READ_REPLICAS,
    O_ADMIN_LISTEN,
    O_TRUSTED_PROXIES,
    O_REDIS_PASSWORD_FILE, /* after O_REDIS and O_CACHE_REDIS: it fills their passwords */
    O_COUNT
};

static const struct option_def defs[O_COUNT] = {
    [O_TRUSTED_PROXIES] = {"trusted-proxies", "RANKD_TRUSTED_PROXIES", "",
                           "address blocks of the proxies in front of rankd, CIDR[,CIDR...] "
                           "(10.0.0.0/8,::1): from them only, the access log's client is the "
                           "one X-Forwarded-For names; empty = the peer's address always"},
    [O_ADMIN_LISTEN] = {"admin-listen", "RANKD_ADMIN_LISTEN", "",
                        "a second HTTP address, host:port, for operators: /metrics and /admin/* "
                        "are answered there only (404 on --listen), /healthz and /readyz on "
                        "both; empty = everything on --listen"},
    [O_REDIS_PASSWORD_FILE] = {"redis-password-file", "RANKD_REDIS_PASSWORD_FILE", "",
                               "file holding the Redis password (AUTH) for the data Redis and the "
                               "cache Redis, a trailing newline ignored (systemd: LoadCredential= "
                               "and %d/NAME); keeps it out of ps and the environment, unlike a "
                               "password inside --redis"},
    [O_LISTEN] = {"listen", "RANKD_LISTEN", "127.0.0.1:8080",
                  "HTTP address, host:port ([::1]:port for IPv6; port 0 = any)"},
    [O_REDIS] = {"redis", "RANKD_REDIS_URL", "redis://127.0.0.1:6379/0",
                 "Redis URL: redis://[[user]:password@]host[:port][/db], unix:///path[?db=N], or "
                 "redis-cluster://[[user]:password@]host[:port][,host[:port]...] (a Redis Cluster: "
                 "any of its nodes, the rest are found), or "
                 "redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/<master>[/db] "
                 "(the primary that these Redis Sentinels name, followed when it changes)"},
    [O_TOKEN] = {"write-token", "RANKD_WRITE_TOKEN", "",
                 "a bearer token for writes, scope admin, at least 16 bytes (visible in ps as a "
                 "flag: prefer --write-token-file); no token at all = every write is refused "
                 "(403)"},
    [O_TOKEN_FILE] = {"write-token-file", "RANKD_WRITE_TOKEN_FILE", "",
                      "file of bearer tokens for writes, one a line: TOKEN [SCOPE...], a scope "
                      "admin (the default), scores, scores:NAME or scores:PREFIX*; '#' comments; "
                      "all valid at once (rotation); read again on SIGHUP"},
    [O_LOG_FORMAT] = {"log-format", "RANKD_LOG_FORMAT", "text",
                      "text or json (one JSON object a line)"},
    [O_ACCESS_LOG] = {"access-log", "RANKD_ACCESS_LOG", "on",
                      "on or off: one info line per request (5xx are logged as errors either "
                      "way)"},
    [O_PREFIX] = {"key-prefix", "RANKD_KEY_PREFIX", "rankd",
                  "prefix of every Redis key, [A-Za-z0-9._:-]{1,64}"},
    [O_THREADS] = {"threads", "RANKD_THREADS", "8",
                   "ignored, kept so that existing command lines start: rankd has no blocking "
                   "Redis pool (1..256)"},
    [O_DEFAULT_BOARD] = {"default-board", "RANKD_DEFAULT_BOARD", "default",
                         "board read by GET /rank without board="},
    [O_MAX_CONN] = {"max-connections", "RANKD_MAX_CONNECTIONS", "512",
                    "HTTP connections open at once (1..10000)"},
    [O_REDIS_TIMEOUT] = {"redis-timeout-ms", "RANKD_REDIS_TIMEOUT_MS", "1000",
                         "Redis command timeout (each dial's set-up too), ms (10..60000)"},
    [O_CONNECT_TIMEOUT] = {"redis-connect-timeout-ms", "RANKD_REDIS_CONNECT_TIMEOUT_MS", "200",
                           "Redis dial timeout, ms (10..60000)"},
    [O_WRITE_REPLICAS] = {"write-replicas", "RANKD_WRITE_REPLICAS", "0",
                          "writes wait until this many replicas hold them (WAIT in the same "
                          "pipeline, at most half the Redis timeout) before their 2xx; fewer in "
                          "time is 503 write_not_replicated (0..16; 0 = no wait: asynchronous "
                          "replication, a failover may lose the last writes)"},
    [O_LOG_LEVEL] = {"log-level", "RANKD_LOG_LEVEL", "info", "debug, info, warn or error"},
    [O_CACHE_REDIS] = {"cache-redis", "RANKD_CACHE_REDIS_URL", "",
                       "Redis URL for page caches and locks; empty = the data Redis"},
    [O_GRACE] = {"page-grace-ms", "RANKD_PAGE_GRACE_MS", "10000",
                 "how long past its TTL a page may be served while it refreshes, ms (0..600000)"},
    [O_LOCK_TTL] = {"page-lock-ttl-ms", "RANKD_PAGE_LOCK_TTL_MS", "2000",
                    "stampede lock TTL, longer than a page computation, ms (10..60000)"},
    [O_MAX_WAIT] =
        {"page-max-wait-ms", "RANKD_PAGE_MAX_WAIT_MS", "250",
         "longest wait for another request's computation of the same page, ms (0..10000)"},
    [O_HTTP_THREADS] = {"http-threads", "RANKD_HTTP_THREADS", "0",
                        "event threads that read requests, send replies and never block "
                        "(1..64; 0 = half the cores, at least 1, at most 8)"},
    [O_BETA] = {"xfetch-beta", "RANKD_XFETCH_BETA", "1",
                "XFetch early-refresh eagerness, 0 = off (0..10)"},
    [O_L1_TTL] = {"l1-ttl-ms", "RANKD_L1_TTL_MS", "0",
                  "in-process page tier TTL, 0 = off, ms (0..500)"},
    [O_L1_BYTES] = {"l1-max-bytes", "RANKD_L1_MAX_BYTES", "16777216",
                    "in-process page tier budget, bytes (4096..1073741824)"},
    [O_STATIC_DIR] =
        {"static-dir", "RANKD_STATIC_DIR", "",
         "directory served at / (the web frontend); empty = clients/web of this build"},
    [O_REQUEST_TIMEOUT] = {"request-timeout-ms", "RANKD_REQUEST_TIMEOUT_MS", "1000",
                           "one deadline for a whole request on the event threads: every Redis "
                           "round trip and wait of it, ms (10..60000)"},
    [O_PER_IP] = {"max-connections-per-ip", "RANKD_MAX_CONNECTIONS_PER_IP", "256",
                  "HTTP connections from one client address, 0 = no limit (0..10000); behind a "
                  "proxy every client has the proxy's address: set it above the proxy's "
                  "connections to rankd, or 0"},
    [O_CORS] = {"cors-origin", "RANKD_CORS_ORIGIN", "",
                "web origins that may read rankd from a browser: a comma-separated list of "
                "scheme://host[:port], or * for any; empty = none (writes are never offered "
                "cross-origin)"},
    [O_READ_REPLICAS] = {"read-from-replicas", "RANKD_READ_FROM_REPLICAS", "off",
                         "on or off (the flag alone: on): page, member and around reads (their "
                         "scripts and records) go to replicas, writes and the page cache to the "
                         "primary; needs redis-cluster:// or redis-sentinel://. A replica lags: "
                         "send ?min_version= to see a write of your own"},
    [O_HEADER_TIMEOUT] = {"header-timeout-ms", "RANKD_HEADER_TIMEOUT_MS", "10000",
                          "a request's line and headers must arrive within this, ms, however "
                          "slowly they trickle (else 408 and closed; 100..600000)"},
};

void config_defaults(struct config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    char err[256];
    char name[] = "rankd";
    char *argv[] = {name, NULL};
    /* Defaults go through the same parser as user input, so they are validated the same way. */
    config_parse(cfg, 1, argv, err, sizeof(err));
}

void config_usage(const char *argv0)
{
    printf(
        "usage: %s [options]\n\nrankd -- leaderboards and paged ranks over Redis sorted sets.\n\n"
        "Each option can also be set by its environment variable; a flag wins.\n\n",
        argv0);
    for (int i = 0; i < O_COUNT; i++)
        printf("  --%s%s\n      %s\n      env %s, default \"%s\"\n", defs[i].flag,
               i == O_READ_REPLICAS ? "[=on|off]" : "=VALUE", defs[i].help, defs[i].env,
               defs[i].deflt);
    printf("  --help      this text\n  --version   print the version\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi))
        return -EINVAL;
    *out = v;
    return 0;
}

static int copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        return -EINVAL;
    memcpy(dst, src, n + 1);
    return 0;
}

int config_parse_listen(const char *text, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(text, ':');
    if (!colon)
        return -EINVAL;
    size_t hl = (size_t)(colon - text);
    const char *h = text;
    if (hl >= 2 && text[0] == '[' && text[hl - 1] == ']') {
        h = text + 1;
        hl -= 2;
    } else if (memchr(text, ':', hl)) {
        return -EINVAL; /* an IPv6 address needs brackets */
    }
    if (hl >= hostlen)
        return -EINVAL;
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (hl == 0)
        copy_str(host, hostlen, "0.0.0.0");
    return parse_int(colon + 1, 0, 65535, port);
}

/* Percent-decode userinfo in place (passwords may hold reserved characters). */
static int url_unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r != '%') {
            *w++ = *r;
            continue;
        }
        char out[2];
        size_t n = 0;
        if (!r[1] || !r[2] || request_pct_decode(r, 3, out, sizeof(out), &n) || out[0] == '\0')
            return -EINVAL;
        *w++ = out[0];
        r += 2;
    }
    *w = '\0';
    return 0;
}

static int parse_unix_url(const char *rest, struct redis_url *out)
{
    const char *q = strchr(rest, '?');
    size_t plen = q ? (size_t)(q - rest) : strlen(rest);
    if (plen == 0 || plen >= sizeof(out->unix_path) || rest[0] != '/')
        return -EINVAL;
    memcpy(out->unix_path, rest, plen);
    out->unix_path[plen] = '\0';
    if (q) {
        if (strncmp(q, "?db=", 4) != 0)
            return -EINVAL;
        return parse_int(q + 4, 0, 1000000, &out->db);
    }
    return 0;
}

/* "host[:port]" or "[v6]:port" in place (text is changed) into host[0..cap) and *port (left as
 * it is when the text names none). 0 or -EINVAL. */
static int parse_hostport(char *text, char *host, size_t cap, int *port)
{
    char *colon = strrchr(text, ':');
    if (text[0] == '[') {
        char *close = strchr(text, ']');
        if (!close)
            return -EINVAL;
        *close = '\0';
        colon = close[1] == ':' ? close + 1 : NULL;
        if (!colon && close[1])
            return -EINVAL;
        text++;
    } else if (colon) {
        *colon = '\0';
    }
    if (colon && parse_int(colon + 1, 1, 65535, port))
        return -EINVAL;
    if (!text[0] || copy_str(host, cap, text))
        return -EINVAL;
    return 0;
}

/* "[[user]:password@]" before the host part of buf: cut off and decoded into out. Returns the
 * host part, or NULL when it is malformed. */
static char *parse_userinfo(char *buf, struct redis_url *out)
{
    char *at = strrchr(buf, '@');
    if (!at)
        return buf;
    *at = '\0';
    char *colon = strchr(buf, ':');
    const char *user = buf, *pass = colon ? colon + 1 : buf;
    if (colon)
        *colon = '\0';
    else
        user = "";
    if (copy_str(out->username, sizeof(out->username), user) ||
        copy_str(out->password, sizeof(out->password), pass) || url_unescape(out->username) ||
        url_unescape(out->password))
        return NULL;
    return at + 1;
}

/* What follows "scheme://" into buf[0..CONFIG_STR_MAX), split: the userinfo decoded into out,
 * *path what follows the first '/' ("" for none). Returns the host part, or NULL when it is
 * malformed. */
static char *split_url(const char *rest, char *buf, struct redis_url *out, const char **path)
{
    if (copy_str(buf, CONFIG_STR_MAX, rest))
        return NULL;
    char *hosts = parse_userinfo(buf, out);
    char *slash = hosts ? strchr(hosts, '/') : NULL;
    *path = "";
    if (slash) {
        *slash = '\0';
        *path = slash + 1;
    }
    return hosts;
}

/* "host[:port],host[:port]..." (each `port` when not given) into out's seeds, the first also as
 * host and port. 0 or -EINVAL. */
static int parse_seeds(char *hosts, int port, struct redis_url *out)
{
    for (char *next = hosts; next;) {
        char *one = next;
        next = strchr(one, ',');
        if (next)
            *next++ = '\0';
        if (out->nseeds == REDIS_URL_SEEDS_MAX)
            return -EINVAL;
        struct redis_seed *sd = &out->seeds[out->nseeds++];
        sd->port = port;
        if (parse_hostport(one, sd->host, sizeof(sd->host), &sd->port))
            return -EINVAL;
    }
    memcpy(out->host, out->seeds[0].host, sizeof(out->host));
    out->port = out->seeds[0].port;
    return 0;
}

/* redis-cluster://[[user]:password@]host[:port][,host[:port]...][/0]: the seeds, each 6379 by
 * default; a cluster has only database 0. */
static int parse_cluster_url(const char *rest, struct redis_url *out)
{
    char buf[CONFIG_STR_MAX];
    const char *db = NULL;
    char *hosts = split_url(rest, buf, out, &db);
    if (!hosts || (db[0] && strcmp(db, "0") != 0))
        return -EINVAL; /* Redis Cluster has database 0 only (SELECT is refused) */
    out->mode = REDIS_URL_CLUSTER;
    return parse_seeds(hosts, 6379, out);
}

/* redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/<master>[/db]: the sentinels
 * (26379 by default), the name they monitor the primary by, its database. */
static int parse_sentinel_url(const char *rest, struct redis_url *out)
{
    char buf[CONFIG_STR_MAX];
    const char *path = NULL;
    char *hosts = split_url(rest, buf, out, &path);
    const char *slash = path ? strchr(path, '/') : NULL;
    size_t nlen = slash ? (size_t)(slash - path) : (path ? strlen(path) : 0);
    if (!hosts || nlen == 0 || nlen >= sizeof(out->master))
        return -EINVAL;
    for (size_t i = 0; i < nlen; i++) {
        char c = path[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return -EINVAL;
    }
    memcpy(out->master, path, nlen);
    out->master[nlen] = '\0';
    if (slash && slash[1] && parse_int(slash + 1, 0, 1000000, &out->db))
        return -EINVAL;
    out->mode = REDIS_URL_SENTINEL;
    return parse_seeds(hosts, 26379, out);
}

int config_parse_redis_url(const char *text, struct redis_url *out)
{
    memset(out, 0, sizeof(*out));
    out->port = 6379;
    if (strncmp(text, "unix://", 7) == 0)
        return parse_unix_url(text + 7, out);
    if (strncmp(text, "redis-cluster://", 16) == 0)
        return parse_cluster_url(text + 16, out);
    if (strncmp(text, "redis-sentinel://", 17) == 0)
        return parse_sentinel_url(text + 17, out);
    if (strncmp(text, "redis://", 8) != 0)
        return -EINVAL;
    char buf[CONFIG_STR_MAX];
    const char *db = NULL;
    char *hostpart = split_url(text + 8, buf, out, &db);
    if (!hostpart || (db[0] && parse_int(db, 0, 1000000, &out->db)))
        return -EINVAL;
    if (parse_hostport(hostpart, out->host, sizeof(out->host), &out->port))
        return -EINVAL;
    out->nseeds = 1;
    out->seeds[0].port = out->port;
    memcpy(out->seeds[0].host, out->host, sizeof(out->host));
    return 0;
}

static int prefix_valid(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == ':'))
            return 0;
    }
    return 1;
}

static int parse_level(const char *s, int *out)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -EINVAL;
}

/* hiredis 0.14 has no TLS: rediss:// is refused with the supported way instead. */
#define TLS_REFUSED                                                                                \
    "rediss:// (TLS) is not built in: hiredis 0.14 has no TLS. Run a local TLS tunnel (Debian's "  \
    "stunnel4, sample: schema/stunnel-redis.conf) and give --redis redis://127.0.0.1:<its port>"
/* 0 for `zero`, 1 for `one`, else -EINVAL. */
static int parse_choice(const char *s, const char *zero, const char *one, int *out)
{
    if (strcmp(s, zero) == 0 || strcmp(s, one) == 0) {
        *out = strcmp(s, one) == 0;
        return 0;
    }
    return -EINVAL;
}

/* The password file at path into out[0..cap): its bytes, one trailing "\n" or "\r\n" dropped.
 * 0, or -EINVAL with the reason (never the password) in why. */
static int read_password_file(const char *path, char *out, size_t cap, char *why, size_t whylen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
        return -EINVAL;
    }
    size_t n = fread(out, 1, cap, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n == cap) {
        explicit_bzero(out, cap);
        snprintf(why, whylen, "%s: %s", path,
                 bad ? "read error" : "a password is at most 255 bytes");
        return -EINVAL;
    }
    out[n] = '\0';
    if (n && out[n - 1] == '\n')
        out[--n] = '\0';
    if (n && out[n - 1] == '\r')
        out[--n] = '\0';
    if (!n || memchr(out, '\0', n) || memchr(out, '\n', n)) {
        explicit_bzero(out, cap);
        snprintf(why, whylen, "%s: one line, the password (not empty, no NUL)", path);
        return -EINVAL;
    }
    return 0;
}

/* Apply one option's text to cfg. Returns 0 or -EINVAL with the allowed values in *allowed. */
static int apply(struct config *cfg, int opt, const char *v, const char **allowed)
{
    *allowed = defs[opt].help;
    switch (opt) {
    case O_LISTEN:
        return config_parse_listen(v, cfg->listen_host, sizeof(cfg->listen_host),
                                   &cfg->listen_port);
    case O_REDIS:
        if (strncmp(v, "rediss://", 9) == 0) {
            *allowed = TLS_REFUSED;
            return -EINVAL;
        }
        if (copy_str(cfg->redis_url_text, sizeof(cfg->redis_url_text), v))
            return -EINVAL;
        return config_parse_redis_url(v, &cfg->redis);
    case O_TOKEN: {
        static __thread char why[200];
        if (tokens_fixed_valid(v, why, sizeof(why))) {
            *allowed = why;
            return -EINVAL;
        }
        return copy_str(cfg->write_token, sizeof(cfg->write_token), v);
    }
    case O_TOKEN_FILE: {
        if (copy_str(cfg->write_token_file, sizeof(cfg->write_token_file), v))
            return -EINVAL;
        if (!v[0])
            return 0;
        /* read once here, so a missing or malformed file is a bad configuration (exit 2) */
        static __thread char why[CONFIG_STR_MAX + 160];
        int world = 0;
        struct tokens *t = tokens_new(NULL, v, &world, why, sizeof(why));
        tokens_free(t);
        *allowed = why;
        return t ? 0 : -EINVAL;
    }
    case O_LOG_FORMAT:
        return parse_choice(v, "text", "json", &cfg->log_format);
    case O_ACCESS_LOG:
        return parse_choice(v, "off", "on", &cfg->access_log);
    case O_PREFIX:
        return prefix_valid(v) ? copy_str(cfg->key_prefix, sizeof(cfg->key_prefix), v) : -EINVAL;
    case O_THREADS:
        return parse_int(v, 1, 256, &cfg->threads);
    case O_DEFAULT_BOARD:
        return board_name_valid(v, strlen(v))
                   ? copy_str(cfg->default_board, sizeof(cfg->default_board), v)
                   : -EINVAL;
    case O_MAX_CONN:
        return parse_int(v, 1, 10000, &cfg->max_connections);
    case O_REDIS_TIMEOUT:
        return parse_int(v, 10, 60000, &cfg->redis_timeout_ms);
    case O_REQUEST_TIMEOUT:
        return parse_int(v, 10, 60000, &cfg->request_timeout_ms);
    case O_CONNECT_TIMEOUT:
        return parse_int(v, 10, 60000, &cfg->connect_timeout_ms);
    case O_WRITE_REPLICAS:
        return parse_int(v, 0, 16, &cfg->write_replicas);
    case O_LOG_LEVEL:
        return parse_level(v, &cfg->log_level);
    case O_CACHE_REDIS:
        if (strncmp(v, "rediss://", 9) == 0) {
            *allowed = TLS_REFUSED;
            return -EINVAL;
        }
        if (copy_str(cfg->cache_url_text, sizeof(cfg->cache_url_text), v))
            return -EINVAL;
        return v[0] ? config_parse_redis_url(v, &cfg->cache_redis) : 0;
    case O_GRACE:
        return parse_int(v, 0, 600000, &cfg->page_grace_ms);
    case O_LOCK_TTL:
        return parse_int(v, 10, 60000, &cfg->page_lock_ttl_ms);
    case O_MAX_WAIT:
        return parse_int(v, 0, 10000, &cfg->page_max_wait_ms);
    case O_BETA:
        return parse_double(v, 0, 10, &cfg->xfetch_beta);
    case O_L1_TTL:
        return parse_int(v, 0, 500, &cfg->l1_ttl_ms);
    case O_PER_IP:
        return parse_int(v, 0, 10000, &cfg->max_per_ip);
    case O_CORS: {
        static __thread char why[200];
        if (cors_parse(v, &cfg->cors, why, sizeof(why))) {
            *allowed = why;
            return -EINVAL;
        }
        return copy_str(cfg->cors_text, sizeof(cfg->cors_text), v);
    }
    case O_HEADER_TIMEOUT:
        return parse_int(v, 100, 600000, &cfg->header_timeout_ms);
    case O_READ_REPLICAS:
        return parse_choice(v, "off", "on", &cfg->read_from_replicas);
    case O_TRUSTED_PROXIES: {
        static __thread char why[200];
        *allowed = why;
        return cidr_parse_list(v, &cfg->trusted_proxies, why, sizeof(why));
    }
    case O_ADMIN_LISTEN:
        cfg->admin_port = -1;
        cfg->admin_host[0] = '\0';
        return v[0] ? config_parse_listen(v, cfg->admin_host, sizeof(cfg->admin_host),
                                          &cfg->admin_port)
                    : 0;
    case O_REDIS_PASSWORD_FILE: {
        /* a password in a URL is kept there (and warned about: config.h password_in_url) */
        cfg->password_in_url = (cfg->redis.password[0] ? 1 : 0) |
                               (cfg->cache_url_text[0] && cfg->cache_redis.password[0] ? 2 : 0);
        if (copy_str(cfg->redis_password_file, sizeof(cfg->redis_password_file), v))
            return -EINVAL;
        if (!v[0])
            return 0;
        static __thread char why[CONFIG_STR_MAX + 80];
        char pw[sizeof(cfg->redis.password)];
        *allowed = why;
        if (read_password_file(v, pw, sizeof(pw), why, sizeof(why)))
            return -EINVAL;
        if (!cfg->redis.password[0])
            memcpy(cfg->redis.password, pw, sizeof(pw));
        if (cfg->cache_url_text[0] && !cfg->cache_redis.password[0])
            memcpy(cfg->cache_redis.password, pw, sizeof(pw));
        explicit_bzero(pw, sizeof(pw));
        return 0;
    }
    case O_HTTP_THREADS:
        return parse_int(v, 0, 64, &cfg->http_threads);
    case O_STATIC_DIR:
        return copy_str(cfg->static_dir, sizeof(cfg->static_dir), v);
    case O_L1_BYTES: {
        int n = 0;
        int rc = parse_int(v, 4096, 1073741824, &n);
        cfg->l1_max_bytes = n;
        return rc;
    }
    default:
        return -EINVAL;
    }
}

int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    const char *value[O_COUNT] = {0};
    int from_flag[O_COUNT] = {0};
    struct option longopts[O_COUNT + 3];
    for (int i = 0; i < O_COUNT; i++) /* a switch: its value may be left out ("on") */
        longopts[i] = (struct option){
            defs[i].flag, i == O_READ_REPLICAS ? optional_argument : required_argument, NULL, i};
    longopts[O_COUNT] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[O_COUNT + 1] = (struct option){"version", no_argument, NULL, 'V'};
    longopts[O_COUNT + 2] = (struct option){NULL, 0, NULL, 0};
    optind = 0; /* 0, not 1: glibc then also forgets a half-scanned "-xy" group */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            config_usage(argv[0]);
            return 1;
        }
        if (c == 'V') {
            printf("rankd %s (%s)\n", RANKD_VERSION, RANKD_REVISION);
            return 1;
        }
        if (c < 0 || c >= O_COUNT) {
            if (optopt > 0 && optopt < O_COUNT)
                snprintf(err, errlen, "option '--%s' needs a value (see --help)",
                         defs[optopt].flag);
            else if (optopt > 0)
                snprintf(err, errlen, "unknown option '-%c' (see --help)", optopt);
            else
                snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
            return -EINVAL;
        }
        value[c] = optarg ? optarg : "on"; /* only a switch goes without */
        from_flag[c] = 1;
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
        return -EINVAL;
    }
    for (int i = 0; i < O_COUNT; i++) {
        const char *v = value[i] ? value[i] : getenv(defs[i].env);
        if (!v)
            v = defs[i].deflt;
        const char *allowed = NULL;
        if (apply(cfg, i, v, &allowed)) {
            /* never echo a token or a URL that may carry a password */
            int secret = i == O_TOKEN || i == O_REDIS || i == O_CACHE_REDIS;
            snprintf(err, errlen, "invalid %s%s%s%s%s: %s", from_flag[i] ? "--" : "",
                     from_flag[i] ? defs[i].flag : defs[i].env, secret ? "" : " '", secret ? "" : v,
                     secret ? "" : "'", allowed);
            return -EINVAL;
        }
    }
    if (cfg->read_from_replicas && cfg->redis.mode == REDIS_URL_SINGLE) {
        snprintf(err, errlen,
                 "%s needs --redis redis-cluster://... (each slot's replicas, from CLUSTER SLOTS) "
                 "or redis-sentinel://... (the replicas the sentinels list): a redis:// or "
                 "unix:// URL names one Redis, and rankd does not look for its replicas",
                 from_flag[O_READ_REPLICAS] ? "--read-from-replicas" : "RANKD_READ_FROM_REPLICAS");
        return -EINVAL;
    }
    return 0;
}
