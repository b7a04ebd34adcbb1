/* config.c -- flags and RANKD_* variables: the option table, its reader and --help; see
 * config.h. The values that are not numbers or words are parsed in config_values.c. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "version.h"

#define FIELD(f) offsetof(struct config, f)
#define OPT_INT(flag, env, value, lo, hi, field, deflt, help)                                      \
    {                                                                                              \
        flag, env, value, lo, hi, {NULL}, FIELD(field), NULL, NULL, deflt, help, CONFIG_INT, 0     \
    }
#define OPT_NUMBER(flag, env, value, lo, hi, field, deflt, help)                                   \
    {                                                                                              \
        flag, env, value, lo, hi, {NULL}, FIELD(field), NULL, NULL, deflt, help, CONFIG_NUMBER, 0  \
    }
#define OPT_LONG(flag, env, value, lo, hi, field, deflt, help)                                     \
    {                                                                                              \
        flag, env, value, lo, hi, {NULL}, FIELD(field), NULL, NULL, deflt, help, CONFIG_LONG, 0    \
    }
#define OPT_CHOICE(flag, env, value, field, deflt, flags, help, ...)                               \
    {                                                                                              \
        flag, env, value, 0, 0, {__VA_ARGS__}, FIELD(field), NULL, NULL, deflt, help,              \
            CONFIG_CHOICE, flags                                                                   \
    }
#define OPT_TEXT(flag, env, value, set, bounds, deflt, flags, help)                                \
    {                                                                                              \
        flag, env, value, 0, 0, {NULL}, 0, set, bounds, deflt, help, CONFIG_TEXT, flags            \
    }

/* The options, in the order --help, the man page and docs/operating.md list them (and in which
 * they are applied: the first bad one is the one reported). Rows with a `set` parse their own
 * text; the others are CONFIG_INT, CONFIG_NUMBER (within lo..hi) or CONFIG_CHOICE (the index of
 * the word in `choices`) stored at `offset`. */
static const struct config_option options[] = {
    /* HTTP */
    OPT_TEXT("listen", "RANKD_LISTEN", "HOST:PORT", config_set_listen,
             "host:port, [v6]:port or :port", "127.0.0.1:8080", 0,
             "the HTTP address; port 0 picks a free one"),
    OPT_TEXT("admin-listen", "RANKD_ADMIN_LISTEN", "HOST:PORT", config_set_admin_listen,
             "host:port, [v6]:port, or empty", "", 0,
             "a second HTTP address, for operators: /metrics and /admin/... are answered there "
             "only (404 on --listen), /healthz and /readyz on both, nothing else; empty = "
             "everything on --listen"),
    OPT_TEXT("trusted-proxies", "RANKD_TRUSTED_PROXIES", "CIDRS", config_set_trusted_proxies,
             "CIDR[,CIDR...], at most 32", "", 0,
             "address blocks of the proxies in front of rankd (10.0.0.0/8,::1): from them only, "
             "the access log's client is the one X-Forwarded-For names; empty = the peer's "
             "address always"),
    OPT_INT("http-threads", "RANKD_HTTP_THREADS", "N", 0, 64, http_threads, "0",
            "event threads that read requests, send replies and never block; 0 = half the cores, "
            "at least 1, at most 8"),
    OPT_INT("max-connections", "RANKD_MAX_CONNECTIONS", "N", 1, 100000, max_connections, "512",
            "HTTP connections open at once (event streams among them)"),
    OPT_INT("max-connections-per-ip", "RANKD_MAX_CONNECTIONS_PER_IP", "N", 0, 100000, max_per_ip,
            "256",
            "HTTP connections from one client address, 0 = no limit; behind a proxy every client "
            "has the proxy's address: set it above the proxy's connections to rankd, or 0"),
    OPT_INT("max-streams", "RANKD_MAX_STREAMS", "N", 0, 100000, max_streams, "256",
            "event streams (pages watched with Accept: text/event-stream) open at once, 0 = no "
            "limit but --max-connections; past it 503 too_many_streams"),
    OPT_INT("max-streams-per-ip", "RANKD_MAX_STREAMS_PER_IP", "N", 0, 100000, max_streams_per_ip,
            "32",
            "event streams from one client address, 0 = no limit (behind a proxy: as "
            "--max-connections-per-ip); past it 503 too_many_streams_from_address"),
    OPT_INT("stream-heartbeat-ms", "RANKD_STREAM_HEARTBEAT_MS", "MS", 100, 300000,
            stream_heartbeat_ms, "15000",
            "an event stream that has sent nothing for this long sends a comment line, so that "
            "proxies do not close it as idle"),
    OPT_INT("header-timeout-ms", "RANKD_HEADER_TIMEOUT_MS", "MS", 100, 600000, header_timeout_ms,
            "10000",
            "a request's line and headers must arrive within this, however slowly they trickle "
            "(else 408 header_timeout and the connection closed)"),
    OPT_INT(
        "request-timeout-ms", "RANKD_REQUEST_TIMEOUT_MS", "MS", 10, 60000, request_timeout_ms,
        "1000",
        "one deadline for a whole request on the event threads: every Redis round trip and wait of "
        "it (past it a read is 503 redis_unavailable, a sent write write_outcome_unknown)"),
    OPT_TEXT("cors-origin", "RANKD_CORS_ORIGIN", "ORIGINS", config_set_cors,
             "scheme://host[:port],... or *", "", 0,
             "web origins that may read rankd from a browser (a page served elsewhere, e.g. "
             "http://localhost:5173); empty = none. Writes are never offered cross-origin"),
    OPT_TEXT("static-dir", "RANKD_STATIC_DIR", "DIR", config_set_static_dir, "a directory", "", 0,
             "the directory served at / (the web page); empty = clients/web of this build, or "
             "../share/rankd/web next to an installed binary"),
    OPT_TEXT("embed-frame-ancestors", "RANKD_EMBED_FRAME_ANCESTORS", "SOURCES",
             config_set_embed_frame_ancestors, "CSP sources: *, 'self', 'none' or URLs", "*", 0,
             "the sites whose pages may show the embed page (/?embed=1) in a frame, a "
             "Content-Security-Policy frame-ancestors list (https://game.example "
             "https://*.example.com); * = any site, 'none' = none. The rest of the web page is "
             "never framed by another site (X-Frame-Options: SAMEORIGIN)"),
    /* Redis */
    OPT_TEXT("redis", "RANKD_REDIS_URL", "URL", config_set_redis,
             "redis://, unix://, redis-cluster://, redis-sentinel://", "redis://127.0.0.1:6379/0",
             CONFIG_SECRET,
             "Redis URL: redis://[[user]:password@]host[:port][/db], unix:///path[?db=N], or "
             "redis-cluster://[[user]:password@]host[:port][,host[:port]...] (a Redis Cluster: any "
             "of its nodes, the rest are found), or "
             "redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/<master>[/db] (the "
             "primary that these Redis Sentinels name, followed when it changes)"),
    OPT_TEXT("cache-redis", "RANKD_CACHE_REDIS_URL", "URL", config_set_cache_redis,
             "as --redis, or empty", "", CONFIG_SECRET,
             "Redis URL for page caches and locks; empty = the data Redis"),
    /* after --redis and --cache-redis: it fills their passwords */
    OPT_TEXT("redis-password-file", "RANKD_REDIS_PASSWORD_FILE", "FILE",
             config_set_redis_password_file, "a readable file of one line", "", 0,
             "the Redis password (AUTH) for the data Redis and the cache Redis, a trailing newline "
             "ignored (systemd: LoadCredential= and %d/NAME); unlike a password inside --redis it "
             "shows in no ps line or environment; a URL with a password of its own keeps it"),
    OPT_TEXT("key-prefix", "RANKD_KEY_PREFIX", "PREFIX", config_set_prefix, "[A-Za-z0-9._:-]{1,64}",
             "rankd", 0, "prefix of every Redis key"),
    OPT_INT("redis-timeout-ms", "RANKD_REDIS_TIMEOUT_MS", "MS", 10, 60000, redis_timeout_ms, "1000",
            "Redis command timeout (each dial's set-up too), within the request's deadline"),
    OPT_INT("redis-connect-timeout-ms", "RANKD_REDIS_CONNECT_TIMEOUT_MS", "MS", 10, 60000,
            connect_timeout_ms, "200", "Redis dial timeout"),
    OPT_CHOICE("read-from-replicas", "RANKD_READ_FROM_REPLICAS", "on|off", read_from_replicas,
               "off", CONFIG_SWITCH,
               "the flag alone: on. Page, member and around reads (their scripts and records) go "
               "to replicas, writes and the page cache to the primary; needs redis-cluster:// or "
               "redis-sentinel://. A replica lags: send ?min_version= to see a write of your own",
               "off", "on"),
    OPT_INT("write-replicas", "RANKD_WRITE_REPLICAS", "N", 0, 16, write_replicas, "0",
            "writes wait until this many replicas hold them (WAIT in the same pipeline, at most "
            "half the Redis timeout) before their 2xx; fewer in time is 503 write_not_replicated. "
            "0 = no wait: asynchronous replication, a failover may lose the last writes"),
    OPT_INT("threads", "RANKD_THREADS", "N", 1, 256, threads, "8",
            "ignored, kept so that existing command lines start: rankd has no blocking Redis pool"),
    /* writes */
    OPT_TEXT("write-token-file", "RANKD_WRITE_TOKEN_FILE", "FILE", config_set_token_file,
             "a readable file", "", 0,
             "file of bearer tokens for writes, one a line: TOKEN [SCOPE...], a scope admin (the "
             "default), scores, scores:NAME or scores:PREFIX*; '#' comments; all valid at once "
             "(rotation); read again on SIGHUP"),
    OPT_TEXT("write-token", "RANKD_WRITE_TOKEN", "TOKEN", config_set_token, "16 to 511 bytes", "",
             CONFIG_SECRET,
             "one more bearer token for writes, scope admin (visible in ps as a flag: prefer "
             "--write-token-file); no token at all = every write is refused (403)"),
    OPT_TEXT("default-board", "RANKD_DEFAULT_BOARD", "BOARD", config_set_default_board,
             "a board name", "default", 0, "board read by GET /rank without board="),
    /* page cache */
    OPT_INT("page-grace-ms", "RANKD_PAGE_GRACE_MS", "MS", 0, 600000, page_grace_ms, "10000",
            "how long past its TTL a page may be served while it refreshes"),
    OPT_INT("page-lock-ttl-ms", "RANKD_PAGE_LOCK_TTL_MS", "MS", 10, 60000, page_lock_ttl_ms, "2000",
            "stampede lock TTL, longer than a page computation"),
    OPT_INT("page-max-wait-ms", "RANKD_PAGE_MAX_WAIT_MS", "MS", 0, 10000, page_max_wait_ms, "250",
            "longest wait for another request's computation of the same page"),
    OPT_NUMBER("xfetch-beta", "RANKD_XFETCH_BETA", "X", 0, 10, xfetch_beta, "1",
               "XFetch early-refresh eagerness, 0 = off"),
    OPT_INT("l1-ttl-ms", "RANKD_L1_TTL_MS", "MS", 0, 500, l1_ttl_ms, "0",
            "in-process page tier TTL, 0 = off"),
    OPT_LONG("l1-max-bytes", "RANKD_L1_MAX_BYTES", "BYTES", 4096, 1073741824, l1_max_bytes,
             "16777216", "in-process page tier budget"),
    /* logs */
    OPT_CHOICE("log-level", "RANKD_LOG_LEVEL", "LEVEL", log_level, "info", 0,
               "the least severe level logged", "debug", "info", "warn", "error"),
    OPT_CHOICE("log-format", "RANKD_LOG_FORMAT", "FORMAT", log_format, "text", 0,
               "text lines, or one JSON object a line", "text", "json"),
    OPT_CHOICE("access-log", "RANKD_ACCESS_LOG", "on|off", access_log, "on", 0,
               "one info line per request (5xx are logged as errors either way)", "off", "on"),
};

#define OPTION_COUNT ((int)(sizeof(options) / sizeof(options[0])))

int config_option_count(void)
{
    return OPTION_COUNT;
}

const struct config_option *config_option_at(int i)
{
    return i >= 0 && i < OPTION_COUNT ? &options[i] : NULL;
}

/* Apply one option's text to cfg. Returns 0, or -EINVAL with *why pointed at the explanation of
 * what is allowed (the row's help, or the parser's own message). */
static int apply(struct config *cfg, const struct config_option *o, const char *v, const char **why)
{
    *why = o->help;
    char *field = (char *)cfg + o->offset;
    switch (o->kind) {
    case CONFIG_INT: {
        int n = 0;
        if (config_parse_int(v, (int)o->lo, (int)o->hi, &n))
            return -EINVAL;
        memcpy(field, &n, sizeof(n));
        return 0;
    }
    case CONFIG_LONG: {
        int n = 0;
        if (config_parse_int(v, (int)o->lo, (int)o->hi, &n))
            return -EINVAL;
        long l = n;
        memcpy(field, &l, sizeof(l));
        return 0;
    }
    case CONFIG_NUMBER: {
        double d = 0;
        if (config_parse_double(v, o->lo, o->hi, &d))
            return -EINVAL;
        memcpy(field, &d, sizeof(d));
        return 0;
    }
    case CONFIG_CHOICE:
        for (int i = 0; i < CONFIG_CHOICES_MAX && o->choices[i]; i++)
            if (strcmp(v, o->choices[i]) == 0) {
                memcpy(field, &i, sizeof(i));
                return 0;
            }
        return -EINVAL;
    default:
        return o->set(cfg, v, why);
    }
}

/* What a row accepts, in words, into buf: "10..60000", "debug, info, warn, error", or its own. */
static const char *bounds_text(const struct config_option *o, char *buf, size_t cap)
{
    if (o->kind == CONFIG_INT || o->kind == CONFIG_LONG)
        snprintf(buf, cap, "%.0f..%.0f", o->lo, o->hi);
    else if (o->kind == CONFIG_NUMBER)
        snprintf(buf, cap, "%g..%g", o->lo, o->hi);
    else if (o->kind == CONFIG_CHOICE) {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < CONFIG_CHOICES_MAX && o->choices[i]; i++)
            n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", i ? ", " : "",
                                  o->choices[i]);
    } else
        snprintf(buf, cap, "%s", o->bounds);
    return buf;
}

static const char *const type_names[] = {"text", "integer", "number", "one of", "integer"};

/* s for troff: '-' as "\-" and '\' as "\e"; a line starting with '.' or '\'' is escaped by the
 * caller's "\&". */
static void man_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '-')
            fputs("\\-", out);
        else if (*s == '\\')
            fputs("\\e", out);
        else
            fputc(*s, out);
    }
}

/* s for a Markdown table cell: '|' escaped. */
static void md_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else
            fputc(*s, out);
    }
}

/* text wrapped at 96 columns, each line indented by 6 spaces */
static void text_wrapped(FILE *out, const char *s)
{
    const int width = 96 - 6;
    while (*s) {
        int n = (int)strlen(s);
        if (n > width) {
            n = width;
            while (n > 0 && s[n] != ' ')
                n--;
            if (n == 0)
                n = width;
        }
        fprintf(out, "      %.*s\n", n, s);
        s += n;
        while (*s == ' ')
            s++;
    }
}

int config_help(FILE *out, int format, const char *argv0)
{
    char b[128];
    if (format == CONFIG_HELP_TEXT)
        fprintf(out,
                "usage: %s [options]\n\nrankd -- leaderboards and paged ranks over Redis sorted "
                "sets.\n\nEach option can also be set by its environment variable; a flag "
                "wins.\n\n",
                argv0);
    else if (format == CONFIG_HELP_MARKDOWN)
        fprintf(out, "| flag | variable | type | accepts | default | what |\n"
                     "| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < OPTION_COUNT; i++) {
        const struct config_option *o = &options[i];
        const char *eq = o->flags & CONFIG_SWITCH ? "[=" : "=";
        const char *close = o->flags & CONFIG_SWITCH ? "]" : "";
        bounds_text(o, b, sizeof(b));
        if (format == CONFIG_HELP_TEXT) {
            fprintf(out, "  --%s%s%s%s\n", o->flag, eq, o->value, close);
            text_wrapped(out, o->help);
            fprintf(out, "      accepts %s; env %s, default \"%s\"\n", b, o->env, o->deflt);
        } else if (format == CONFIG_HELP_MAN) {
            fputs(o->flags & CONFIG_SWITCH ? ".TP\n.BR \\-\\-" : ".TP\n.BI \\-\\-", out);
            man_escape(out, o->flag);
            fputs(o->flags & CONFIG_SWITCH ? " [ =" : "= ", out);
            man_escape(out, o->value);
            fprintf(out, "%s\n\\&%c", o->flags & CONFIG_SWITCH ? " ]" : "",
                    toupper((unsigned char)o->help[0]));
            man_escape(out, o->help + 1);
            fputs(".\n.br\nAccepts ", out);
            man_escape(out, b);
            fputs("; variable\n.BR ", out);
            man_escape(out, o->env);
            fputs(" \"; default\"\n.RI \"", out);
            man_escape(out, o->deflt[0] ? o->deflt : "empty");
            fputs("\" .\n", out);
        } else {
            fprintf(out, "| `--%s` | `%s` | %s | ", o->flag, o->env, type_names[o->kind]);
            md_escape(out, b);
            fputs(" | ", out);
            if (o->deflt[0]) {
                fputs("`", out);
                md_escape(out, o->deflt);
                fputs("`", out);
            } else
                fputs("empty", out);
            fputs(" | ", out);
            md_escape(out, o->help);
            fputs(" |\n", out);
        }
    }
    if (format == CONFIG_HELP_TEXT)
        fprintf(out, "  --check-config\n      check the flags, variables, token file and password "
                     "file: exit 0,\n      or 2 with the reason (Redis is not asked)\n"
                     "  --help[=text|man|markdown]\n      this text; man: the man page's "
                     "OPTIONS; markdown: a table\n  --version\n      print the version\n");
    else if (format == CONFIG_HELP_MAN)
        fprintf(out, ".TP\n.B \\-\\-check\\-config\nCheck the flags, variables, token file and "
                     "password file, then exit 0, or exit 2 with the reason (Redis is not "
                     "asked).\n.TP\n.BR \\-\\-help \"\" [=text|man|markdown]\n\\&All options, with "
                     "their variables and defaults (man, markdown: as here and in\n"
                     ".IR docs/operating.md ).\n.TP\n.B \\-\\-version\nThe version and the "
                     "git revision.\n");
    return fflush(out) || ferror(out) ? -EIO : 0;
}

void config_usage(const char *argv0)
{
    config_help(stdout, CONFIG_HELP_TEXT, argv0);
}

void config_defaults(struct config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    char err[256];
    char name[] = "rankd";
    char *argv[] = {name, NULL};
    /* Defaults go through the same parser as user input, so they are validated the same way. */
    config_parse(cfg, 1, argv, err, sizeof(err));
}

/* --help's value: text (none given), man or markdown; -1 for another. */
static int help_format(const char *v)
{
    static const char *const names[] = {"text", "man", "markdown"};
    for (int i = 0; i < 3; i++)
        if (!v || strcmp(v, names[i]) == 0)
            return v ? i : CONFIG_HELP_TEXT;
    return -1;
}

int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    const char *value[OPTION_COUNT] = {0};
    int from_flag[OPTION_COUNT] = {0};
    struct option longopts[OPTION_COUNT + 4];
    int check = 0;
    for (int i = 0; i < OPTION_COUNT; i++) /* a switch: its value may be left out ("on") */
        longopts[i] = (struct option){
            options[i].flag,
            options[i].flags & CONFIG_SWITCH ? optional_argument : required_argument, NULL, i};
    longopts[OPTION_COUNT] = (struct option){"help", optional_argument, NULL, 'h'};
    longopts[OPTION_COUNT + 1] = (struct option){"version", no_argument, NULL, 'V'};
    longopts[OPTION_COUNT + 2] = (struct option){"check-config", no_argument, NULL, 'C'};
    longopts[OPTION_COUNT + 3] = (struct option){NULL, 0, NULL, 0};
    optind = 0; /* 0, not 1: glibc then also forgets a half-scanned "-xy" group */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            int format = help_format(optarg);
            if (format < 0) {
                snprintf(err, errlen, "invalid --help '%s': text, man or markdown", optarg);
                return -EINVAL;
            }
            config_help(stdout, format, argv[0]);
            return 1;
        }
        if (c == 'C') {
            check = 1;
            continue;
        }
        if (c == 'V') {
            printf("rankd %s (%s)\n", RANKD_VERSION, RANKD_REVISION);
            return 1;
        }
        if (c < 0 || c >= OPTION_COUNT) {
            if (optopt > 0 && optopt < OPTION_COUNT)
                snprintf(err, errlen, "option '--%s' needs a value (see --help)",
                         options[optopt].flag);
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
    for (int i = 0; i < OPTION_COUNT; i++) {
        const struct config_option *o = &options[i];
        const char *v = value[i] ? value[i] : getenv(o->env);
        if (!v)
            v = o->deflt;
        const char *why = NULL;
        if (apply(cfg, o, v, &why)) {
            /* never echo a token or a URL that may carry a password */
            int secret = (o->flags & CONFIG_SECRET) != 0;
            char b[128];
            int own = why == o->help; /* the help, then what the option accepts */
            snprintf(err, errlen, "invalid %s%s%s%s%s: %s%s%s%s", from_flag[i] ? "--" : "",
                     from_flag[i] ? o->flag : o->env, secret ? "" : " '", secret ? "" : v,
                     secret ? "" : "'", why, own ? " (" : "",
                     own ? bounds_text(o, b, sizeof(b)) : "", own ? ")" : "");
            return -EINVAL;
        }
    }
    if (cfg->read_from_replicas && cfg->redis.mode == REDIS_URL_SINGLE) {
        int rr = 0;
        while (strcmp(options[rr].flag, "read-from-replicas") != 0)
            rr++;
        snprintf(err, errlen,
                 "%s needs --redis redis-cluster://... (each slot's replicas, from CLUSTER SLOTS) "
                 "or redis-sentinel://... (the replicas the sentinels list): a redis:// or "
                 "unix:// URL names one Redis, and rankd does not look for its replicas",
                 from_flag[rr] ? "--read-from-replicas" : "RANKD_READ_FROM_REPLICAS");
        return -EINVAL;
    }
    if (check) {
        printf("rankd: the configuration is valid (flags, variables, the token file and the "
               "password file)\n");
        return 1;
    }
    return 0;
}
