/* route.c -- the route table (the matching itself: route_match.c); see route.h. */
#include "route.h"

#include "board.h"
#include "handlers_control.h"
#include "handlers_export.h"
#include "handlers_read.h"
#include "handlers_stream.h"
#include "handlers_write.h"
#include "metrics.h"

/* A(method, pattern, async step, metric name, flags): a route served by one async step on the
 * event thread; Q: answered from memory (a quick step). */
#define A(m, p, a, n, f)                                                                           \
    {                                                                                              \
        .method = (m), .pattern = (p), .async = (a), .name = (n), .flags = (f)                     \
    }
#define Q(m, p, q, n, f)                                                                           \
    {                                                                                              \
        .method = (m), .pattern = (p), .quick = (q), .name = (n), .flags = (f)                     \
    }
#define W ROUTE_WRITE
#define B ROUTE_BODY
#define S ROUTE_SCORES
static struct route routes[] = {
    Q("GET", "/healthz", handle_healthz, "healthz", ROUTE_PROBE),
    A("GET", "/readyz", handle_readyz, "readyz", ROUTE_PROBE),
    Q("GET", "/metrics", handle_metrics, "metrics", ROUTE_ADMIN),
    {.method = "GET",
     .pattern = "/rank",
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async,
     .flags = ROUTE_EVENTS},
    A("GET", "/boards", handle_boards_list, "boards", 0),
    A("GET", "/boards/{board}", handle_board_get, "board", 0),
    A("PUT", "/boards/{board}", handle_board_put, "board_put", W | B),
    A("DELETE", "/boards/{board}", handle_board_delete, "board_delete", W),
    {.method = "GET",
     .pattern = "/boards/{board}/rank",
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async,
     .flags = ROUTE_EVENTS},
    {.method = "POST",
     .pattern = "/boards/{board}/scores",
     .name = "scores",
     .async = handle_scores_async,
     .stream_async = handle_scores_stream_async,
     .stream_stopped = handle_scores_stream_stopped,
     .stream_free = handle_scores_stream_free,
     .flags = W | B | S | ROUTE_NDJSON},
    A("POST", "/scores", handle_scores_boards_async, "scores_boards", W | B | S),
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}",
     .name = "member",
     .async = handle_member_async},
    A("DELETE", "/boards/{board}/members/{id}", handle_member_delete, "member_delete", W),
    A("POST", "/boards/{board}/reset", handle_board_reset, "board_reset", W),
    A("DELETE", "/boards/{board}/members", handle_members_trim, "members_trim", W),
    A("GET", "/admin/redis", handle_admin_redis, "admin_redis", W | ROUTE_ADMIN),
    A("GET", "/boards/{board}/export", handle_export_async, "export", 0),
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}/around",
     .name = "around",
     .async = handle_around_async},
    A("GET", "/boards/{board}/around", handle_around_score_async, "around_score", 0),
    A("GET", "/boards/{board}/percentile", handle_percentile_async, "percentile", 0),
    A("GET", "/boards/{board}/top", handle_top_async, "top", 0),
    A("GET", "/boards/{board}/members", handle_members_get_async, "members", 0),
    A("POST", "/boards/{board}/lookup", handle_lookup_async, "lookup", B),
    A("GET", "/members/{id}", handle_member_boards_async, "member_boards", 0),
    A("GET", "/items/{id}", handle_item_get, "item", 0),
    A("PUT", "/items/{id}", handle_item_put, "item_put", W | B | ROUTE_RECORDS),
    A("DELETE", "/items/{id}", handle_item_delete, "item_delete", W | ROUTE_RECORDS),
};
#undef A
#undef Q
#undef W
#undef B
#undef S
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
