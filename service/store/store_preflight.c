/* store_preflight.c -- may the Redis user run rankd's scripts? See store_preflight.h. */
#include "store_preflight.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store_sentinel.h"

/* The probes: each is refused with NOPERM when the user may not run it, and otherwise fails
 * harmlessly (a compile error, NOSCRIPT) without loading or running anything. */
static const struct probe {
    const char *name; /**< as an ACL rule names it */
    int argc;
    const char *argv[4];
} probes[] = {
    {"script|load", 3, {"SCRIPT", "LOAD", "!"}},
    {"evalsha", 3, {"EVALSHA", "0000000000000000000000000000000000000000", "0"}},
    {"eval", 3, {"EVAL", "!", "0"}},
    /* with --read-from-replicas: what a replica is sent (it loads the scripts too) */
    {"evalsha_ro", 3, {"EVALSHA_RO", "0000000000000000000000000000000000000000", "0"}},
    {"eval_ro", 3, {"EVAL_RO", "!", "0"}},
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))
#define NPROBES_RW 3 /* the probes every store needs; the rest, a store reading from replicas */

static struct timeval tv_of(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
}

/* An answer to AUTH or SELECT that no later dial can change: a refused name or password, a
 * password Redis asks for and the URL does not give, a database Redis does not have. A passing
 * state (LOADING, BUSY, MASTERDOWN...) is not one: rankd starts and dials again. */
static int refused(const redisReply *r)
{
    static const char *const codes[] = {"WRONGPASS", "NOAUTH", "NOPERM", "ERR"};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        size_t n = strlen(codes[i]);
        if (r->len >= n && strncmp(r->str, codes[i], n) == 0 && (r->len == n || r->str[n] == ' '))
            return 1;
    }
    return 0;
}

/* One set-up command (AUTH, SELECT), or the first probe of a Redis that wants a password: 0, or
 * -1 when it failed, with Redis's own words in why[0..len) when it refused for good (refused());
 * why stays "" when it may pass (rankd's own dials report it). */
static int setup(redisContext *c, int argc, const char **argv, char *why, size_t len)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (r && r->type == REDIS_REPLY_ERROR && refused(r))
        snprintf(why, len, "%.200s", r->str);
    freeReplyObject(r);
    return ok ? 0 : -1;
}

/* A connection to the Redis of u (a Sentinel URL: the primary its sentinels name now), with
 * timeouts; NULL when it cannot be reached now. */
static redisContext *dial(const struct redis_url *u, int connect_timeout_ms, int timeout_ms)
{
    const char *host = u->host;
    int port = u->port;
    char primary[STORE_SENTINEL_HOST_MAX];
    if (u->mode == REDIS_URL_SENTINEL) { /* the primary the sentinels name now */
        const char *hosts[REDIS_URL_SEEDS_MAX];
        int ports[REDIS_URL_SEEDS_MAX], next = 0;
        for (int i = 0; i < u->nseeds; i++) {
            hosts[i] = u->seeds[i].host;
            ports[i] = u->seeds[i].port;
        }
        struct store_sentinel_cfg sc = {.n = u->nseeds,
                                        .host = hosts,
                                        .port = ports,
                                        .master = u->master,
                                        .connect_timeout_ms = connect_timeout_ms,
                                        .timeout_ms = timeout_ms};
        if (store_sentinel_resolve(&sc, &next, primary, &port) != 0)
            return NULL;
        host = primary;
    }
    redisContext *c = u->unix_path[0]
                          ? redisConnectUnixWithTimeout(u->unix_path, tv_of(connect_timeout_ms))
                          : redisConnectWithTimeout(host, port, tv_of(connect_timeout_ms));
    if (!c || c->err || redisSetTimeout(c, tv_of(timeout_ms)) != REDIS_OK) {
        redisFree(c);
        return NULL;
    }
    return c;
}

int store_preflight_ping(const struct redis_url *u, int connect_timeout_ms, int timeout_ms)
{
    redisContext *c = dial(u, connect_timeout_ms, timeout_ms);
    if (!c)
        return -EAGAIN;
    const char *auth2[] = {"AUTH", u->password};
    const char *auth3[] = {"AUTH", u->username, u->password};
    const char *ping[] = {"PING"};
    char why[208] = "";
    int bad = u->password[0] &&
              setup(c, u->username[0] ? 3 : 2, u->username[0] ? auth3 : auth2, why, sizeof(why));
    if (!bad)
        bad = setup(c, 1, ping, why, sizeof(why));
    redisFree(c);
    return bad ? -EAGAIN : 0;
}

int store_preflight_scripts(const struct redis_url *u, const char *what, int read_replicas,
                            int connect_timeout_ms, int timeout_ms, char *msg, size_t len)
{
    redisContext *c = dial(u, connect_timeout_ms, timeout_ms);
    if (!c)
        return 0; /* not reachable now: rankd starts and keeps dialling */
    const char *user = u->username[0] ? u->username : "default";
    const char *auth2[] = {"AUTH", u->password};
    const char *auth3[] = {"AUTH", u->username, u->password};
    char db[16];
    snprintf(db, sizeof(db), "%d", u->db);
    const char *sel[] = {"SELECT", db};
    const char *ping[] = {"PING"};
    char why[208] = "";
    const char *step = u->password[0] ? "AUTH" : "PING";
    int bad = u->password[0] ? setup(c, u->username[0] ? 3 : 2, u->username[0] ? auth3 : auth2, why,
                                     sizeof(why))
                             : setup(c, 1, ping, why, sizeof(why));
    if (!u->password[0] && strncmp(why, "NOAUTH", 6) != 0)
        why[0] = '\0'; /* only "a password is needed" is the URL's fault here */
    if (!bad && u->db) {
        step = "SELECT";
        bad = setup(c, 2, sel, why, sizeof(why));
    }
    if (bad && why[0]) {
        redisFree(c);
        if (strcmp(step, "SELECT") == 0)
            snprintf(msg, len,
                     "%s refused database %d for user '%s' (%s): only /healthz and /metrics would "
                     "work, so rankd does not start. Fix: a database this Redis has (its "
                     "'databases' setting) in the URL.",
                     what, u->db, user, why);
        else
            snprintf(
                msg, len,
                "%s refused user '%s' %s (%s): only /healthz and /metrics would work, so rankd "
                "does not start. Fix: the user and password of the URL, "
                "[[user]:password@]host (or ACL SETUSER %s on >password).",
                what, user, u->password[0] ? "with the URL's password" : "without a password", why,
                user);
        return -EACCES;
    }
    if (bad) {
        redisFree(c);
        return 0;
    }
    char missing[128] = "", rules[128] = "", first[200] = "";
    for (size_t i = 0; i < (read_replicas ? NPROBES : NPROBES_RW); i++) {
        const char *argv[4];
        memcpy(argv, probes[i].argv, sizeof(argv));
        redisReply *r = redisCommandArgv(c, probes[i].argc, argv, NULL);
        if (!r) {
            redisFree(c);
            return 0; /* Redis went away: the dials report it */
        }
        if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOPERM", 6) == 0) {
            size_t m = strlen(missing), k = strlen(rules);
            snprintf(missing + m, sizeof(missing) - m, "%s%s", m ? ", " : "", probes[i].name);
            snprintf(rules + k, sizeof(rules) - k, " +%s", probes[i].name);
            if (!first[0])
                snprintf(first, sizeof(first), "%.190s", r->str);
        }
        freeReplyObject(r);
    }
    redisFree(c);
    if (!missing[0])
        return 0;
    int many = strchr(missing, ',') != NULL;
    snprintf(msg, len,
             "%s user '%s' may not run %s (%s). rankd runs every board read and write as a Lua "
             "script (SCRIPT LOAD once per connection, then EVALSHA; EVAL after a SCRIPT FLUSH; "
             "EVALSHA_RO and EVAL_RO on replicas with --read-from-replicas): "
             "without %s only /healthz and /metrics would work and every other route would "
             "fail, so rankd does not start. Fix: ACL SETUSER %s%s (or +@scripting).",
             what, user, missing, first, many ? "them" : "it", user, rules);
    return -EACCES;
}
