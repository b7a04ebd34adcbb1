/* server.c -- wiring of config, store, model and HTTP; see server.h. */
#include "server.h"

#include <errno.h>
#include <stdlib.h>

#include "http.h"
#include "log.h"
#include "route.h"

struct rankd *rankd_start(const struct config *cfg, int *err)
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
    const struct redis_url *u = &app->cfg.redis;
    struct store_config sc = {
        .host = u->unix_path[0] ? NULL : u->host,
        .port = u->port,
        .unix_path = u->unix_path[0] ? u->unix_path : NULL,
        .username = u->username[0] ? u->username : NULL,
        .password = u->password[0] ? u->password : NULL,
        .db = u->db,
        .pool_size = app->cfg.threads,
        .timeout_ms = app->cfg.redis_timeout_ms,
        .connect_timeout_ms = app->cfg.connect_timeout_ms,
    };
    app->store = store_new(&sc);
    if (!app->store) {
        free(app);
        *err = -ENOMEM;
        return NULL;
    }
    app->model.store = app->store;
    app->model.prefix = app->cfg.key_prefix;
    app->http =
        http_start(app, app->cfg.listen_host, app->cfg.listen_port, app->cfg.max_connections, err);
    if (!app->http) {
        store_free(app->store);
        free(app);
        return NULL;
    }
    return app;
}

int rankd_port(const struct rankd *app)
{
    return http_port(app->http);
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
    store_free(app->store);
    free(app);
}
