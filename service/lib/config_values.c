/* config_values.c -- the parsers of the options' values that are not numbers or words: addresses,
 * Redis URLs, tokens, names, files; see config.h (config.c holds the table that names them). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "names.h"
#include "request.h"
#include "tokens.h"

int config_parse_int(const char *s, int lo, int hi, int *out)
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

int config_parse_double(const char *s, double lo, double hi, double *out)
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
    return config_parse_int(colon + 1, 0, 65535, port);
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
        return config_parse_int(q + 4, 0, 1000000, &out->db);
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
    if (colon && config_parse_int(colon + 1, 1, 65535, port))
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
    if (slash && slash[1] && config_parse_int(slash + 1, 0, 1000000, &out->db))
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
    if (!hostpart || (db[0] && config_parse_int(db, 0, 1000000, &out->db)))
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

/* hiredis 0.14 has no TLS: rediss:// is refused with the supported way instead. */
#define TLS_REFUSED                                                                                \
    "rediss:// (TLS) is not built in: hiredis 0.14 has no TLS. Run a local TLS tunnel (Debian's "  \
    "stunnel4, sample: schema/stunnel-redis.conf) and give --redis redis://127.0.0.1:<its port>"

int config_set_listen(struct config *cfg, const char *v, const char **why)
{
    (void)why;
    return config_parse_listen(v, cfg->listen_host, sizeof(cfg->listen_host), &cfg->listen_port);
}

int config_set_redis(struct config *cfg, const char *v, const char **why)
{
    if (strncmp(v, "rediss://", 9) == 0) {
        *why = TLS_REFUSED;
        return -EINVAL;
    }
    if (copy_str(cfg->redis_url_text, sizeof(cfg->redis_url_text), v))
        return -EINVAL;
    return config_parse_redis_url(v, &cfg->redis);
}

int config_set_cache_redis(struct config *cfg, const char *v, const char **why)
{
    if (strncmp(v, "rediss://", 9) == 0) {
        *why = TLS_REFUSED;
        return -EINVAL;
    }
    if (copy_str(cfg->cache_url_text, sizeof(cfg->cache_url_text), v))
        return -EINVAL;
    return v[0] ? config_parse_redis_url(v, &cfg->cache_redis) : 0;
}

int config_set_token(struct config *cfg, const char *v, const char **why)
{
    static __thread char text[200];
    if (tokens_fixed_valid(v, text, sizeof(text))) {
        *why = text;
        return -EINVAL;
    }
    return copy_str(cfg->write_token, sizeof(cfg->write_token), v);
}

int config_set_token_file(struct config *cfg, const char *v, const char **why)
{
    if (copy_str(cfg->write_token_file, sizeof(cfg->write_token_file), v))
        return -EINVAL;
    if (!v[0])
        return 0;
    /* read once here, so a missing or malformed file is a bad configuration (exit 2) */
    static __thread char text[CONFIG_STR_MAX + 160];
    int world = 0;
    struct tokens *t = tokens_new(NULL, v, &world, text, sizeof(text));
    tokens_free(t);
    *why = text;
    return t ? 0 : -EINVAL;
}

int config_set_prefix(struct config *cfg, const char *v, const char **why)
{
    (void)why;
    return prefix_valid(v) ? copy_str(cfg->key_prefix, sizeof(cfg->key_prefix), v) : -EINVAL;
}

int config_set_default_board(struct config *cfg, const char *v, const char **why)
{
    (void)why;
    return board_name_valid(v, strlen(v))
               ? copy_str(cfg->default_board, sizeof(cfg->default_board), v)
               : -EINVAL;
}

int config_set_cors(struct config *cfg, const char *v, const char **why)
{
    (void)why; /* parsed at start-up (cors.h is the HTTP layer's): main.c checks it first */
    return copy_str(cfg->cors_text, sizeof(cfg->cors_text), v);
}

int config_set_static_dir(struct config *cfg, const char *v, const char **why)
{
    (void)why;
    return copy_str(cfg->static_dir, sizeof(cfg->static_dir), v);
}

/* A CSP frame-ancestors source list: `*`, 'self', 'none' (alone), or sources such as
 * https://game.example or game.example, a host's first label may be a wildcard (*.example.com);
 * spaces between, 400 bytes at most (the reply's header values share HTTP_HEADER_BYTES). Nothing
 * that could end the header's directive or start another (; , quotes, controls). */
int config_set_embed_frame_ancestors(struct config *cfg, const char *v, const char **why)
{
    size_t n = 0, none = 0;
    for (const char *s = v; *s;) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        if (!len)
            break;
        n++;
        if (len == 6 && strncmp(s, "'none'", 6) == 0)
            none++;
        else if (!(len == 6 && strncmp(s, "'self'", 6) == 0))
            for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("*:/.-_[]", s[i])) {
                    *why = "space-separated sources: *, 'self', 'none' or "
                           "scheme://host[:port] (no ; , or other quotes)";
                    return -EINVAL;
                }
        s += len;
    }
    if (strlen(v) > 400) {
        *why = "400 bytes at most";
        return -EINVAL;
    }
    if (!n || (none && n > 1)) {
        *why = n ? "'none' stands alone" : "at least one source: * for any site, 'none' for none";
        return -EINVAL;
    }
    return copy_str(cfg->embed_frame_ancestors, sizeof(cfg->embed_frame_ancestors), v);
}

int config_set_admin_listen(struct config *cfg, const char *v, const char **why)
{
    (void)why;
    cfg->admin_port = -1;
    cfg->admin_host[0] = '\0';
    return v[0] ? config_parse_listen(v, cfg->admin_host, sizeof(cfg->admin_host), &cfg->admin_port)
                : 0;
}

int config_set_trusted_proxies(struct config *cfg, const char *v, const char **why)
{
    static __thread char text[200];
    *why = text;
    return cidr_parse_list(v, &cfg->trusted_proxies, text, sizeof(text));
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

int config_set_redis_password_file(struct config *cfg, const char *v, const char **why)
{
    /* a password in a URL is kept there (and warned about: config.h password_in_url) */
    cfg->password_in_url = (cfg->redis.password[0] ? 1 : 0) |
                           (cfg->cache_url_text[0] && cfg->cache_redis.password[0] ? 2 : 0);
    if (copy_str(cfg->redis_password_file, sizeof(cfg->redis_password_file), v))
        return -EINVAL;
    if (!v[0])
        return 0;
    static __thread char text[CONFIG_STR_MAX + 80];
    char pw[sizeof(cfg->redis.password)];
    *why = text;
    if (read_password_file(v, pw, sizeof(pw), text, sizeof(text)))
        return -EINVAL;
    if (!cfg->redis.password[0])
        memcpy(cfg->redis.password, pw, sizeof(pw));
    if (cfg->cache_url_text[0] && !cfg->cache_redis.password[0])
        memcpy(cfg->cache_redis.password, pw, sizeof(pw));
    explicit_bzero(pw, sizeof(pw));
    return 0;
}
