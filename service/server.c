/* server.c -- wiring of config, stores, model, page cache, loops and HTTP; see server.h. */
#include "server.h"

#include <errno.h>
#include <stdlib.h>

#include "admin.h"
#include "auth.h"
#include "cors.h"
#include "export.h"
#include "httpd.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "render.h"
#include "route.h"
#include "static_files.h"
#include "store_async.h"
#include "tokens.h"
#include "watch.h"

static struct store *store_for(const struct config *cfg, const struct redis_url *u,
                               int read_replicas)
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
        .cluster = u->mode == REDIS_URL_CLUSTER,
        .sentinel_master = u->mode == REDIS_URL_SENTINEL ? u->master : NULL,
        .nseeds = u->nseeds,
        .read_replicas = read_replicas,
        /* the data Redis' writes wait for the replicas; the cache Redis holds nothing to lose */
        .write_replicas = u == &cfg->redis ? cfg->write_replicas : 0,
    };
    for (int i = 0; i < u->nseeds && i < STORE_SEEDS_MAX; i++) {
        sc.seed_host[i] = u->seeds[i].host;
        sc.seed_port[i] = u->seeds[i].port;
    }
    return store_new(&sc);
}

/* Fill an event thread's /metrics row with its worker's connection counters
 * (httpd_options.worker_stats). */
static void worker_stats(const struct worker *w, struct metrics_thread *out)
{
    if (w->reads)
        store_async_stats(w->reads, &out->reads);
    if (w->writes)
        store_async_stats(w->writes, &out->writes);
}

/* Free w's connections (after the loops stopped: none has a call in flight). */
static void worker_free_conns(struct worker *w)
{
    store_async_free(w->reads);
    store_async_free(w->writes);
    store_async_free(w->cache_reads);
    store_async_free(w->cache_writes);
}

/* Loop l's worker *t (its own Redis connections), and its HTTP daemon of server h, dialling now
 * (so the first requests need not wait for a dial). 0 or a negative errno (rankd_stop undoes
 * it). */
static int serve_loop(struct rankd *app, struct loop *l, struct httpd *h, struct worker *t)
{
    /* the data Redis, and the cache Redis when it is a separate one (page GETs, locks and
     * stores there; page.lua on the data Redis). Added before the daemon: each iteration's
     * commands go out after MHD has run. */
    t->reads = store_async_new(app->reads, l);
    t->writes = store_async_new(app->writes, l);
    if (!t->reads || !t->writes)
        return -ENOMEM;
    if (app->cache_reads) {
        t->cache_reads = store_async_new(app->cache_reads, l);
        t->cache_writes = store_async_new(app->cache_writes, l);
        if (!t->cache_reads || !t->cache_writes)
            return -ENOMEM;
    }
    int err = httpd_attach(h, l, t);
    if (err)
        return err;
    struct store_async *const all[] = {t->reads, t->writes, t->cache_reads, t->cache_writes};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
        if (all[k])
            store_async_start(all[k]);
    return 0;
}

/* --admin-listen: one more loop on its own address, whose daemon answers /metrics, /admin/...
 * and the probes only (the public one 404s the first two). 0 or a negative errno. */
static int serve_admin(struct rankd *app, const struct httpd_options *public)
{
    const struct config *c = &app->cfg;
    struct loop_group_options lo = {
        .host = c->admin_host,
        .port = c->admin_port,
        .threads = 1,
        .max_connections = 64, /* operators and a scraper, never the public */
        .max_per_ip = 0,
    };
    struct httpd_options ho = *public;
    ho.static_root = "";
    ho.cors = NULL;
    ho.max_connections = lo.max_connections;
    ho.listener = AUTH_LISTENER_ADMIN;
    ho.metrics_of = app->http; /* its /metrics tells of the public event threads */
    int err = 0;
    if (!(app->admin_loops = loop_group_new(&lo, &err)))
        return err;
    if (!(app->admin_http = httpd_new(&ho)))
        return -ENOMEM;
    if ((err = serve_loop(app, loop_group_loop(app->admin_loops, 0), app->admin_http,
                          &app->admin_worker)))
        return err;
    return loop_group_start(app->admin_loops);
}

/* The event loops, an HTTP daemon and two Redis connections (reads, writes) on each, two more
 * to the cache Redis with --cache-redis, started; and the admin listener's with --admin-listen.
 * Returns 0 or a negative errno (rankd_stop undoes what was done). */
static int serve(struct rankd *app)
{
    const struct config *c = &app->cfg;
    struct loop_group_options lo = {
        .host = c->listen_host,
        .port = c->listen_port,
        .threads = c->http_threads,
        .max_connections = c->max_connections,
        .max_per_ip = c->max_per_ip,
    };
    struct httpd_options ho = {
        .ctx = &app->api,
        .tokens = app->tokens,
        .static_root = app->static_root,
        .embed_frame_ancestors = c->embed_frame_ancestors,
        .max_connections = c->max_connections,
        .request_timeout_ms = c->request_timeout_ms,
        .header_timeout_ms = c->header_timeout_ms,
        .cors = &app->cors,
        .listener = c->admin_port >= 0 ? AUTH_LISTENER_PUBLIC : AUTH_LISTENER_ALL,
        .trusted_proxies = &c->trusted_proxies,
        .max_streams = c->max_streams,
        .max_streams_per_ip = c->max_streams_per_ip,
        .stream_heartbeat_ms = c->stream_heartbeat_ms,
        .worker_stats = worker_stats,
    };
    int err = 0;
    if (!(app->loops = loop_group_new(&lo, &err)))
        return err;
    int n = loop_group_size(app->loops);
    app->workers = calloc((size_t)n, sizeof(struct worker));
    app->http = httpd_new(&ho);
    if (!app->workers || !app->http)
        return -ENOMEM;
    app->nworkers = n;
    for (int i = 0; i < n; i++)
        if ((err = serve_loop(app, loop_group_loop(app->loops, i), app->http, &app->workers[i])))
            return err;
    if (c->admin_port >= 0 && (err = serve_admin(app, &ho)))
        return err;
    return loop_group_start(app->loops);
}

/* /metrics' figures of the stores (exporter_stores_fn): arg is the application. */
static void stores_stats(void *arg, struct exporter_stores *out)
{
    const struct rankd *app = arg;
    struct store *const all[] = {app->reads, app->writes, app->cache_reads, app->cache_writes};
    out->client_version = store_client_version();
    out->write_refusal = store_write_refusal();
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!all[i])
            continue;
        out->errors += store_error_count(all[i]);
        if (!store_cluster_mode(all[i]))
            continue;
        struct store_cluster_counts c;
        store_cluster_counts(all[i], &c);
        out->cluster = 1;
        out->cluster_counts.moved += c.moved;
        out->cluster_counts.ask += c.ask;
        out->cluster_counts.tryagain += c.tryagain;
        out->cluster_counts.down += c.down;
        out->cluster_counts.map_reads += c.map_reads;
    }
    if (store_read_replicas(app->reads)) {
        struct store_replica_counts c;
        store_replica_counts(app->reads, &c);
        out->replicas = 1;
        out->replica_counts = (struct metrics_replicas){.replica = c.replica,
                                                        .fallback = c.fallback,
                                                        .no_replica = c.no_replica,
                                                        .stale = c.stale,
                                                        .discoveries = c.discoveries};
    }
}

struct rankd *rankd_start_hooked(const struct config *cfg, const struct rankd_hooks *hooks,
                                 int *err)
{
    static int routes_ready;
    if (!routes_ready) {
        route_init();
        routes_ready = 1;
    }
    /* each owner's scripts, before any store dials: a store's first dial loads them (the page
     * cache and the rank flow register theirs in page_cache_new and pages_new, also before serve
     * dials) */
    board_scripts_register();
    export_scripts_register();
    admin_scripts_register();
    struct rankd *app = calloc(1, sizeof(*app));
    if (!app) {
        *err = -ENOMEM;
        return NULL;
    }
    app->cfg = *cfg;
    const struct config *c = &app->cfg;
    char why[CONFIG_STR_MAX + 160];
    int world = 0;
    app->tokens = tokens_new(c->write_token, c->write_token_file, &world, why, sizeof(why));
    if (!app->tokens) {
        log_error("write tokens: %s", why);
        rankd_stop(app);
        *err = -EINVAL;
        return NULL;
    }
    if (world)
        log_warn("write tokens: %s can be read by every user of this machine (chmod o-r it)",
                 c->write_token_file);
    if (cors_parse(c->cors_text, &app->cors, why, sizeof(why))) {
        log_error("--cors-origin: %s", why);
        rankd_stop(app);
        *err = -EINVAL;
        return NULL;
    }
    /* --read-from-replicas: only the reads' store (page, member and around scripts; its
     * connections' plain reads, the page cache's lookups and the settings, stay on the primary
     * unless they say otherwise); writes, page fills and the cache never */
    app->reads = store_for(c, &c->redis, c->read_from_replicas);
    app->writes = store_for(c, &c->redis, 0);
    if (c->cache_url_text[0]) {
        app->cache_reads = store_for(c, &c->cache_redis, 0);
        app->cache_writes = store_for(c, &c->cache_redis, 0);
    }
    app->model.store = app->reads;
    app->model.writes = app->writes;
    app->model.prefix = app->cfg.key_prefix;
    app->model.clock_ms = hooks ? hooks->clock_ms : NULL;
    if (board_model_init(&app->model) != 0) {
        rankd_stop(app);
        *err = -ENOMEM;
        return NULL;
    }
    struct page_cache_config pcc = {
        .own_redis = app->cache_reads != NULL,
        .grace_ms = app->cfg.page_grace_ms,
        .lock_ttl_ms = app->cfg.page_lock_ttl_ms,
        .max_wait_ms = app->cfg.page_max_wait_ms,
        .beta = app->cfg.xfetch_beta,
        .l1_ttl_ms = app->cfg.l1_ttl_ms,
        .l1_max_bytes = (size_t)app->cfg.l1_max_bytes,
        .refresh_max = 32,
    };
    if (app->reads && app->writes &&
        (!c->cache_url_text[0] || (app->cache_reads && app->cache_writes)))
        app->page_cache = page_cache_new(&pcc);
    struct pages_config pgc = {
        .data = app->reads,
        .cache = app->page_cache,
        .cache_apart = app->cache_reads != NULL,
        .model = &app->model,
        .prefix = app->cfg.key_prefix,
        .render = render_page,
        .delay = hooks ? hooks->page_delay : NULL,
    };
    if (app->page_cache)
        app->pages = pages_new(&pgc);
    if (app->pages)
        app->watches = watches_new(app->pages, app->cfg.request_timeout_ms);
    if (!app->watches) {
        rankd_stop(app);
        *err = -ENOMEM;
        return NULL;
    }
    app->api = (struct api_ctx){
        .model = &app->model,
        .pages = app->pages,
        .watches = app->watches,
        .default_board = app->cfg.default_board,
        .request_timeout_ms = app->cfg.request_timeout_ms,
        .metrics = {.pages = app->pages,
                    .watches = app->watches,
                    .stores = stores_stats,
                    .stores_arg = app},
    };
    if (static_files_root(app->cfg.static_dir, app->static_root, sizeof(app->static_root))) {
        app->static_root[0] = '\0';
        if (app->cfg.static_dir[0])
            log_warn("static files: --static-dir %s is not a directory: / and the web page "
                     "answer 404",
                     app->cfg.static_dir);
        else
            log_warn("static files: no web directory found (clients/web of the build, or "
                     "share/rankd/web of the install prefix): / and the web page answer 404; "
                     "set --static-dir");
    }
    if ((*err = serve(app)) != 0) {
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
    return loop_group_port(app->loops);
}

int rankd_admin_port(const struct rankd *app)
{
    return app->admin_loops ? loop_group_port(app->admin_loops) : -1;
}

const char *rankd_static_root(const struct rankd *app)
{
    return app->static_root;
}

struct tokens *rankd_tokens(const struct rankd *app)
{
    return app->tokens;
}

void rankd_reload(struct rankd *app)
{
    char why[CONFIG_STR_MAX + 160];
    int world = 0;
    if (!tokens_path(app->tokens)[0]) {
        log_info("reload: nothing to read again (no --write-token-file); %d write token%s in "
                 "force",
                 tokens_count(app->tokens), tokens_count(app->tokens) == 1 ? "" : "s");
        return;
    }
    int n = tokens_reload(app->tokens, &world, why, sizeof(why));
    if (n < 0) {
        log_error("reload: write tokens: %s; the %d token%s loaded before stay in force", why,
                  tokens_count(app->tokens), tokens_count(app->tokens) == 1 ? "" : "s");
        return;
    }
    log_info("reload: write tokens read again from %s: %d in force%s", tokens_path(app->tokens), n,
             n ? "" : " (writes are refused)");
    if (world)
        log_warn("write tokens: %s can be read by every user of this machine (chmod o-r it)",
                 tokens_path(app->tokens));
}

void rankd_stop(struct rankd *app)
{
    if (!app)
        return;
    /* No new connections, then no new work; the requests in work finish while the loops run
     * (MHD must not stop with suspended connections). Then the loops stop; the connections, the
     * daemons and the loops go in that order (each unregisters from its loop first). */
    if (app->loops)
        loop_group_quiesce(app->loops);
    if (app->admin_loops)
        loop_group_quiesce(app->admin_loops);
    httpd_quiesce(app->http);
    httpd_quiesce(app->admin_http);
    if (app->loops)
        loop_group_stop(app->loops);
    if (app->admin_loops)
        loop_group_stop(app->admin_loops);
    for (int i = 0; i < app->nworkers; i++) /* nothing is pending: no request is suspended */
        worker_free_conns(&app->workers[i]);
    free(app->workers);
    worker_free_conns(&app->admin_worker);
    httpd_free(app->admin_http); /* its metrics_of, app->http, is freed after it */
    loop_group_free(app->admin_loops);
    httpd_free(app->http);
    loop_group_free(app->loops);
    page_cache_free(app->page_cache); /* its fills left on stopped loops hold the flow's */
    pages_free(app->pages);
    watches_free(app->watches); /* after the stores' connections and the flow: no read is left */
    board_model_free(&app->model);
    store_free(app->cache_reads);
    store_free(app->cache_writes);
    store_free(app->reads);
    store_free(app->writes);
    tokens_free(app->tokens);
    free(app);
}
