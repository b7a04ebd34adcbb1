/* server.c -- wiring of config, store, model and HTTP; see server.h. */
#include "server.h"

#include <errno.h>
#include <stdlib.h>

#include "http.h"
#include "log.h"
#include "route.h"
#include "static_files.h"

static struct store *store_for(const struct config *cfg, const struct redis_url *u)
{
    struct store_config sc = {
        .host = u->unix_path[0] ? NULL : u->host,
        .port = u->port,
        .unix_path = u->unix_path[0] ? u->unix_path : NULL,
        .username = u->username[0] ? u->username : NULL,
        .password = u->password[0] ? u->password : NULL,
        .db = u->db,
        .timeout_ms = cfg->redis_timeout_ms,
        .connect_timeout_ms = cfg->connect_timeout_ms,
    };
    return store_new(&sc);
}

struct rankd *rankd_start_hooked(const struct config *cfg, const struct rankd_hooks *hooks,
                                 int *err)
{
    static int routes_ready;
    if (!routes_ready) {
        route_init();
        routes_ready = 1;
    }
    struct rankd *app = calloc(1, sizeof(*app));
    if (!app) {
        *err = -ENOMEM;
        return NULL;
    }
    app->cfg = *cfg;
    const struct config *c = &app->cfg;
    app->reads = store_for(c, &c->redis);
    app->writes = store_for(c, &c->redis);
    if (c->cache_url_text[0]) {
        app->cache_reads = store_for(c, &c->cache_redis);
        app->cache_writes = store_for(c, &c->cache_redis);
    }
    app->model.store = app->reads;
    app->model.writes = app->writes;
    app->model.prefix = app->cfg.key_prefix;
    app->model.clock_ms = hooks ? hooks->clock_ms : NULL;
    struct page_cache_config pcc = {
        .data = app->reads,
        .cache = app->cache_reads ? app->cache_reads : app->reads,
        .model = &app->model,
        .prefix = app->cfg.key_prefix,
        .grace_ms = app->cfg.page_grace_ms,
        .lock_ttl_ms = app->cfg.page_lock_ttl_ms,
        .max_wait_ms = app->cfg.page_max_wait_ms,
        .beta = app->cfg.xfetch_beta,
        .l1_ttl_ms = app->cfg.l1_ttl_ms,
        .l1_max_bytes = (size_t)app->cfg.l1_max_bytes,
        .refresh_max = 32,
        .delay = hooks ? hooks->page_delay : NULL,
    };
    if (app->reads && app->writes &&
        (!c->cache_url_text[0] || (app->cache_reads && app->cache_writes)))
        app->pages = page_cache_new(&pcc);
    if (!app->pages) {
        rankd_stop(app);
        *err = -ENOMEM;
        return NULL;
    }
    if (static_files_root(app->cfg.static_dir, app->static_root, sizeof(app->static_root)))
        app->static_root[0] = '\0';
    struct http_options ho = {
        .host = app->cfg.listen_host,
        .port = app->cfg.listen_port,
        .max_connections = app->cfg.max_connections,
        .max_per_ip = app->cfg.max_per_ip,
        .event_threads = app->cfg.http_threads,
        .hits = app->reads,
        .writes = app->writes,
        .cache_hits = app->cache_reads,
        .cache_writes = app->cache_writes,
        .request_timeout_ms = app->cfg.request_timeout_ms,
    };
    app->http = http_start(app, &ho, err);
    if (!app->http) {
        rankd_stop(app);
        return NULL;
    }
    return app;
}

struct rankd *rankd_start(const struct config *cfg, int *err)
{
    return rankd_start_hooked(cfg, NULL, err);
}

int rankd_port(const struct rankd *app)
{
    return http_port(app->http);
}

const char *rankd_static_root(const struct rankd *app)
{
    return app->static_root;
}

const char *rankd_write_token(const struct rankd *app)
{
    return app->cfg.write_token;
}

void rankd_stop(struct rankd *app)
{
    if (!app)
        return;
    http_stop(app->http);
    page_cache_free(app->pages);
    store_free(app->cache_reads);
    store_free(app->cache_writes);
    store_free(app->reads);
    store_free(app->writes);
    free(app);
}
