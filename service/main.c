/* main.c -- rankd's entry point: parse configuration, start, serve until SIGINT/SIGTERM, stop.
 * SIGHUP reloads what can change without a restart (the write tokens of --write-token-file:
 * rankd_reload); it never stops rankd, so a closed terminal cannot either.
 * A Redis user that may not run rankd's scripts stops start-up with exit code 2, like bad
 * configuration (store_preflight.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "config.h"
#include "cors.h"
#include "log.h"
#include "server.h"
#include "store_preflight.h"
#include "tokens.h"
#include "version.h"

int main(int argc, char **argv)
{
    struct config cfg;
    char err[600];
    config_defaults(&cfg);
    int rc = config_parse(&cfg, argc, argv, err, sizeof(err));
    if (rc == 1)
        return 0;
    if (rc) {
        fprintf(stderr, "rankd: %s\n", err);
        return 2;
    }
    /* --cors-origin is parsed at start-up (cors.h belongs to the HTTP layer, above config):
     * checked here first, so that a bad one stops rankd like any bad option */
    struct cors cors;
    char bad[200];
    if (cors_parse(cfg.cors_text, &cors, bad, sizeof(bad))) {
        fprintf(stderr, "rankd: invalid --cors-origin (RANKD_CORS_ORIGIN) '%s': %s\n",
                cfg.cors_text, bad);
        return 2;
    }
    log_set_level(cfg.log_level);
    log_set_format(cfg.log_format);
    log_set_access(cfg.access_log);
    if (cfg.password_in_url)
        log_warn("the Redis password is inside %s, which ps or the environment show to other "
                 "users: give it in a file with --redis-password-file (RANKD_REDIS_PASSWORD_FILE) "
                 "and leave it out of the URL",
                 cfg.password_in_url == 3   ? "--redis and --cache-redis"
                 : cfg.password_in_url == 1 ? "--redis"
                                            : "--cache-redis");
    /* a Redis user that may not run the scripts: one clear line and exit 2 (store_preflight.h) */
    char why[1024];
    if (store_preflight_scripts(&cfg.redis, "Redis", cfg.read_from_replicas, cfg.connect_timeout_ms,
                                cfg.redis_timeout_ms, why, sizeof(why)) ||
        (cfg.cache_url_text[0] &&
         store_preflight_scripts(&cfg.cache_redis, "the cache Redis", 0, cfg.connect_timeout_ms,
                                 cfg.redis_timeout_ms, why, sizeof(why)))) {
        fprintf(stderr, "rankd: %s\n", why);
        return 2;
    }
    /* Block the signals in every thread; the main thread takes them with sigwait. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    log_start(2); /* lines are buffered from here on: requests never wait for stderr */
    struct rankd *app = rankd_start(&cfg, &rc);
    if (!app) {
        log_stop();
        fprintf(stderr, "rankd: cannot listen on %s:%d: %s\n", cfg.listen_host, cfg.listen_port,
                rc == -EADDRINUSE ? "the address is in use or not available" : strerror(-rc));
        return 2;
    }
    int ntokens = tokens_count(rankd_tokens(app));
    if (cfg.admin_port >= 0)
        log_info("admin listener on %s:%d: /metrics and /admin/* there only; /healthz and "
                 "/readyz on both",
                 cfg.admin_host, rankd_admin_port(app));
    log_info("rankd %s (%s) listening on %s:%d, redis %s%s:%d db %d%s, key prefix '%s', writes "
             "%s%s, log %s, access log %s",
             RANKD_VERSION, RANKD_REVISION, cfg.listen_host, rankd_port(app),
             cfg.redis.mode == REDIS_URL_CLUSTER    ? "cluster via "
             : cfg.redis.mode == REDIS_URL_SENTINEL ? "primary by sentinel "
                                                    : "",
             cfg.redis.unix_path[0] ? cfg.redis.unix_path : cfg.redis.host,
             cfg.redis.unix_path[0] ? 0 : cfg.redis.port, cfg.redis.db,
             cfg.read_from_replicas ? ", reads from replicas" : "", cfg.key_prefix,
             ntokens ? "enabled" : "disabled (no write token)",
             cfg.write_token_file[0] ? " (token file, SIGHUP reads it again)" : "",
             cfg.log_format ? "json" : "text", cfg.access_log ? "on" : "off");
    /* systemd (Type=notify): READY once listening and the data Redis answered; until then the
     * status says what rankd waits for, and Redis is asked again every second. Without
     * NOTIFY_SOCKET sd_notify does nothing. */
    int ready = 0;
    int sig = 0;
    for (;;) {
        if (!ready &&
            store_preflight_ping(&cfg.redis, cfg.connect_timeout_ms, cfg.redis_timeout_ms) == 0) {
            ready = 1;
            sd_notifyf(0, "READY=1\nSTATUS=serving on %s:%d, %d write token%s", cfg.listen_host,
                       rankd_port(app), ntokens, ntokens == 1 ? "" : "s");
        } else if (!ready) {
            sd_notifyf(0, "STATUS=listening on %s:%d, waiting for Redis to answer", cfg.listen_host,
                       rankd_port(app));
        }
        if (ready) {
            sigwait(&sigs, &sig);
        } else {
            struct timespec second = {1, 0};
            sig = sigtimedwait(&sigs, NULL, &second);
            if (sig < 0)
                continue; /* a second passed: ask Redis again */
        }
        if (sig != SIGHUP)
            break;
        rankd_reload(app);
        sd_notifyf(0, "STATUS=serving on %s:%d, %d write token%s (reloaded)", cfg.listen_host,
                   rankd_port(app), tokens_count(rankd_tokens(app)),
                   tokens_count(rankd_tokens(app)) == 1 ? "" : "s");
    }
    sd_notify(0, "STOPPING=1\nSTATUS=stopping: finishing the requests in work");
    log_info("signal %d: stopping", sig);
    rankd_stop(app);
    log_info("stopped");
    log_stop();
    return 0;
}
