/* route.c -- the route table and path matching; see route.h. */
#include "route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "handlers_control.h"
#include "handlers_read.h"
#include "handlers_stream.h"
#include "handlers_write.h"
#include "metrics.h"
#include "request.h"

#define SEGS_MAX 8
#define SEG_BYTES_MAX 512 /* decoded bytes per segment; ids are at most 128 */

/* A(method, pattern, async step, metric name, flags): a route served by one async step on the
 * event thread; Q: answered from memory (a quick step). */
#define A(m, p, a, n, f)                                                                           \
    {                                                                                              \
        .method = (m), .pattern = (p), .async = (a), .name = (n), .flags = (f)                     \
    }
#define Q(m, p, q, n)                                                                              \
    {                                                                                              \
        .method = (m), .pattern = (p), .quick = (q), .name = (n)                                   \
    }
#define W ROUTE_WRITE
#define B ROUTE_BODY
static struct route routes[] = {
    Q("GET", "/healthz", handle_healthz, "healthz"),
    A("GET", "/readyz", handle_readyz, "readyz", 0),
    Q("GET", "/metrics", handle_metrics, "metrics"),
    {.method = "GET",
     .pattern = "/rank",
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async},
    A("GET", "/boards", handle_boards_list, "boards", 0),
    A("GET", "/boards/{board}", handle_board_get, "board", 0),
    A("PUT", "/boards/{board}", handle_board_put, "board_put", W | B),
    A("DELETE", "/boards/{board}", handle_board_delete, "board_delete", W),
    {.method = "GET",
     .pattern = "/boards/{board}/rank",
     .name = "rank",
     .quick = handle_rank_quick,
     .async = handle_rank_async},
    {.method = "POST",
     .pattern = "/boards/{board}/scores",
     .name = "scores",
     .async = handle_scores_async,
     .stream_async = handle_scores_stream_async,
     .stream_stopped = handle_scores_stream_stopped,
     .stream_free = handle_scores_stream_free,
     .flags = W | B | ROUTE_NDJSON},
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}",
     .name = "member",
     .async = handle_member_async},
    A("DELETE", "/boards/{board}/members/{id}", handle_member_delete, "member_delete", W),
    A("POST", "/boards/{board}/reset", handle_board_reset, "board_reset", W),
    A("DELETE", "/boards/{board}/members", handle_members_trim, "members_trim", W),
    A("GET", "/admin/redis", handle_admin_redis, "admin_redis", W),
    {.method = "GET",
     .pattern = "/boards/{board}/members/{id}/around",
     .name = "around",
     .async = handle_around_async},
    A("GET", "/items/{id}", handle_item_get, "item", 0),
    A("PUT", "/items/{id}", handle_item_put, "item_put", W | B),
    A("DELETE", "/items/{id}", handle_item_delete, "item_delete", W),
};
#undef A
#undef Q
#undef W
#undef B
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

void route_init(void)
{
    for (size_t i = 0; i < NROUTES; i++)
        routes[i].metric = metrics_route(routes[i].name);
}

struct segs {
    const char *p[SEGS_MAX]; /* raw segment starts */
    size_t len[SEGS_MAX];
    int n;
};

/* Split "/a/b/c" into raw segments; a path must start with '/'. -ENOENT when it cannot match. */
static int split(const char *path, struct segs *s)
{
    s->n = 0;
    if (path[0] != '/')
        return -ENOENT;
    s->n = 0;
    const char *p = path + 1;
    if (*p == '\0')
        return 0;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (s->n == SEGS_MAX)
            return -ENOENT;
        s->p[s->n] = p;
        s->len[s->n++] = len;
        if (!slash)
            return 0;
        p = slash + 1;
    }
}

/* 1 when the raw segments fit the pattern's shape (literals equal, params non-empty). */
static int shape_matches(const char *pattern, const struct segs *s)
{
    struct segs ps;
    split(pattern, &ps);
    if (ps.n != s->n)
        return 0;
    for (int i = 0; i < s->n; i++) {
        if (ps.p[i][0] == '{') {
            if (s->len[i] == 0)
                return 0;
        } else if (ps.len[i] != s->len[i] || memcmp(ps.p[i], s->p[i], s->len[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static int same_method(const char *route_method, const char *method)
{
    return strcmp(route_method, method) == 0 ||
           (strcmp(route_method, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

static int decode_params(const char *pattern, const struct segs *s, struct http_request *rq)
{
    struct segs ps;
    split(pattern, &ps);
    rq->nparams = 0;
    for (int i = 0; i < s->n; i++) {
        if (ps.p[i][0] != '{')
            continue;
        if (rq->nparams == HTTP_PATH_PARAMS_MAX)
            return -EINVAL;
        char *out = malloc(SEG_BYTES_MAX + 1);
        if (!out)
            return -ENOMEM;
        size_t n = 0;
        int rc = request_pct_decode(s->p[i], s->len[i], out, SEG_BYTES_MAX + 1, &n);
        rq->params[rq->nparams] = out;
        rq->param_len[rq->nparams++] = n;
        if (rc)
            return -EINVAL;
    }
    return 0;
}

int route_match(const char *method, const char *path, struct http_request *rq,
                const struct route **out, char *allow, size_t allow_len)
{
    struct segs s;
    if (split(path, &s))
        return -ENOENT;
    int shape = 0;
    allow[0] = '\0';
    for (size_t i = 0; i < NROUTES; i++) {
        if (!shape_matches(routes[i].pattern, &s))
            continue;
        if (same_method(routes[i].method, method)) {
            *out = &routes[i];
            return decode_params(routes[i].pattern, &s, rq);
        }
        size_t used = strlen(allow);
        /* every GET route answers HEAD too (same_method), so Allow names it (RFC 9110 10.2.1) */
        snprintf(allow + used, allow_len - used, "%s%s%s", used ? ", " : "", routes[i].method,
                 strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
        shape = 1;
    }
    return shape ? -EPERM : -ENOENT;
}
