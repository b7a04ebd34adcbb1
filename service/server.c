/* server.c -- wiring of config, store, model and HTTP; see server.h. */
#include "server.h"

#include <errno.h>
#include <stdlib.h>

#include "http.h"
#include "log.h"
#include "route.h"
#include "static_files.h"

static struct store *store_for(const struct config *cfg, const struct redis_url *u, int pool)
{
    struct store_config sc = {
        .host = u->unix_path[0] ? NULL : u->host,
        .port = u->port,
        .unix_path = u->unix_path[0] ? u->unix_path : NULL,
        .username = u->username[0] ? u->username : NULL,
        .password = u->password[0] ? u->password : NULL,
        .db = u->db,
        .pool_size = pool,
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
    app->store = store_for(c, &c->redis, c->threads);
    app->write_store = store_for(c, &c->redis, c->threads);
    app->hit_store = store_for(c, &c->redis, 1);
    app->hit_write_store = store_for(c, &c->redis, 1);
    app->cache_store = c->cache_url_text[0] ? store_for(c, &c->cache_redis, c->threads) : NULL;
    app->cache_write_store =
        c->cache_url_text[0] ? store_for(c, &c->cache_redis, c->threads) : app->write_store;
    if (!app->cache_store)
        app->cache_store = app->store;
    if (c->cache_url_text[0]) {
        app->cache_hit_store = store_for(c, &c->cache_redis, 1);
        app->cache_hit_write_store = store_for(c, &c->cache_redis, 1);
    }
    app->model.store = app->store;
    app->model.writes = app->write_store;
    app->model.prefix = app->cfg.key_prefix;
    app->model.clock_ms = hooks ? hooks->clock_ms : NULL;
    struct page_cache_config pcc = {
        .data = app->store,
        .cache = app->cache_store,
        .cache_writes = app->cache_write_store,
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
    if (app->store && app->cache_store && app->write_store && app->hit_store &&
        app->hit_write_store && app->cache_write_store &&
        (!c->cache_url_text[0] || (app->cache_hit_store && app->cache_hit_write_store)))
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
        /* the data Redis; the page cache sends hits on it only when it holds the pages too */
        .hits = app->hit_store,
        .writes = app->hit_write_store,
        .cache_hits = app->cache_hit_store,
        .cache_writes = app->cache_hit_write_store,
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
    if (app->cache_store != app->store)
        store_free(app->cache_store);
    if (app->cache_write_store != app->write_store)
        store_free(app->cache_write_store);
    store_free(app->cache_hit_store);
    store_free(app->cache_hit_write_store);
    store_free(app->hit_store);
    store_free(app->hit_write_store);
    store_free(app->write_store);
    store_free(app->store);
    free(app);
}
