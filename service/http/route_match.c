/* route_match.c -- matching a path against a route table (pure: no I/O); see route.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "route.h"

#define SEGS_MAX 8
#define SEG_BYTES_MAX ROUTE_SEGMENT_BYTES_MAX

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
            return rc == -E2BIG ? -E2BIG : -EINVAL;
    }
    return 0;
}

int route_match_in(const struct route *table, size_t n, const char *method, const char *path,
                   struct http_request *rq, const struct route **out, char *allow, size_t allow_len)
{
    struct segs s;
    if (strlen(path) > ROUTE_PATH_BYTES_MAX)
        return -ENAMETOOLONG; /* before the web frontend's lookup too: no file is named so */
    if (split(path, &s))
        return -ENOENT;
    int shape = 0;
    allow[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (!shape_matches(table[i].pattern, &s))
            continue;
        if (same_method(table[i].method, method)) {
            *out = &table[i];
            return decode_params(table[i].pattern, &s, rq);
        }
        size_t used = strlen(allow);
        /* every GET route answers HEAD too (same_method), so Allow names it (RFC 9110 10.2.1) */
        snprintf(allow + used, allow_len - used, "%s%s%s", used ? ", " : "", table[i].method,
                 strcmp(table[i].method, "GET") == 0 ? ", HEAD" : "");
        shape = 1;
    }
    return shape ? -EPERM : -ENOENT;
}
