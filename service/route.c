/* route.c -- the route table (the matching itself: route_match.c); see route.h. */
#include "route.h"

#include "board.h"
#include "handlers.h"
#include "metrics.h"

/* R(method, pattern, handler, metric name, flags); rank routes add their non-blocking steps. */
#define R(m, p, h, n, f)                                                                           \
    {                                                                                              \
        .method = (m), .pattern = (p), .handler = (h), .name = (n), .flags = (f)                   \
    }
#define W ROUTE_WRITE
#define B ROUTE_BODY
static struct route routes[] = {
    R("GET", "/healthz", handle_healthz, "healthz", 0),
    R("GET", "/readyz", handle_readyz, "readyz", 0),
    R("GET", "/metrics", handle_metrics, "metrics", 0),
    {.method = "GET",
     .pattern = "/rank",
     .handler = handle_rank,
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async},
    R("GET", "/boards", handle_boards_list, "boards", 0),
    R("GET", "/boards/{board}", handle_board_get, "board", 0),
    R("PUT", "/boards/{board}", handle_board_put, "board_put", W | B),
    R("DELETE", "/boards/{board}", handle_board_delete, "board_delete", W),
    {.method = "GET",
     .pattern = "/boards/{board}/rank",
     .handler = handle_rank,
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async},
    {.method = "POST",
     .pattern = "/boards/{board}/scores",
     .handler = handle_scores_post,
     .name = "scores",
     .async = handle_scores_async,
     .stream = handle_scores_stream,
     .stream_async = handle_scores_stream_async,
     .stream_stopped = handle_scores_stream_stopped,
     .stream_free = handle_scores_stream_free,
     .flags = W | B | ROUTE_NDJSON},
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}",
     .handler = handle_member_get,
     .name = "member",
     .async = handle_member_async},
    R("DELETE", "/boards/{board}/members/{id}", handle_member_delete, "member_delete", W),
    R("POST", "/boards/{board}/reset", handle_board_reset, "board_reset", W),
    R("DELETE", "/boards/{board}/members", handle_members_trim, "members_trim", W),
    R("GET", "/admin/redis", handle_admin_redis, "admin_redis", W),
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}/around",
     .handler = handle_around_get,
     .name = "around",
     .async = handle_around_async},
    R("GET", "/items/{id}", handle_item_get, "item", 0),
    R("PUT", "/items/{id}", handle_item_put, "item_put", W | B),
    R("DELETE", "/items/{id}", handle_item_delete, "item_delete", W),
};
#undef R
#undef W
#undef B
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static int static_metric = -1;

void route_init(void)
{
    for (size_t i = 0; i < NROUTES; i++)
        routes[i].metric = metrics_route(routes[i].name);
    static_metric = metrics_route("static");
}

int route_static_metric(void)
{
    return static_metric;
}

int route_match(const char *method, const char *path, struct http_request *rq,
                const struct route **out, char *allow, size_t allow_len)
{
    return route_match_in(routes, NROUTES, method, path, rq, out, allow, allow_len);
}
