/* main.c -- rankd's entry point: parse configuration, start, wait for SIGINT/SIGTERM, stop.
 * SIGHUP is ignored: rankd has no configuration to reload, and a closed terminal or a process
 * manager's reload signal must not stop it. A Redis user that may not run rankd's scripts stops
 * start-up with exit code 2, like bad configuration (preflight.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "preflight.h"
#include "server.h"

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
    log_set_level(cfg.log_level);
    /* a Redis user that may not run the scripts: one clear line and exit 2 (preflight.h) */
    char why[1024];
    if (preflight_scripts(&cfg.redis, "Redis", cfg.connect_timeout_ms, cfg.redis_timeout_ms, why,
                          sizeof(why)) ||
        (cfg.cache_url_text[0] &&
         preflight_scripts(&cfg.cache_redis, "the cache Redis", cfg.connect_timeout_ms,
                           cfg.redis_timeout_ms, why, sizeof(why)))) {
        fprintf(stderr, "rankd: %s\n", why);
        return 2;
    }
    /* Block the stop signals in every thread; the main thread takes them with sigwait. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* not a stop signal (see the top of this file) */
    struct rankd *app = rankd_start(&cfg, &rc);
    if (!app) {
        fprintf(stderr, "rankd: cannot listen on %s:%d: %s\n", cfg.listen_host, cfg.listen_port,
                rc == -EADDRINUSE ? "the address is in use or not available" : strerror(-rc));
        return 2;
    }
    log_info("listening on %s:%d, redis %s:%d db %d, key prefix '%s', writes %s", cfg.listen_host,
             rankd_port(app), cfg.redis.unix_path[0] ? cfg.redis.unix_path : cfg.redis.host,
             cfg.redis.unix_path[0] ? 0 : cfg.redis.port, cfg.redis.db, cfg.key_prefix,
             cfg.write_token[0] ? "enabled (token set)" : "disabled (no --write-token)");
    int sig = 0;
    sigwait(&stop, &sig);
    log_info("signal %d: stopping", sig);
    rankd_stop(app);
    return 0;
}
