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

/* 1 when the raw segments fit the pattern's shape (literals equal, params non-empty). The pattern
 * is walked as it is compared (splitting it as well cost a match more than the rest together): a
 * path segment holds no '/' and no NUL, so a literal's comparison stops at the pattern's end or
 * its next '/' at the latest. */
static int shape_matches(const char *pattern, const struct segs *s)
{
    const char *p = pattern + 1; /* a pattern starts with '/' */
    if (*p == '\0')
        return s->n == 0;
    for (int i = 0; i < s->n; i++) {
        if (*p == '{') {
            if (s->len[i] == 0)
                return 0;
            while (*p && *p != '/')
                p++;
        } else {
            const char *q = s->p[i];
            size_t len = s->len[i];
            for (size_t k = 0; k < len; k++)
                if (p[k] != q[k])
                    return 0;
            p += len;
            if (*p != '/' && *p != '\0')
                return 0;
        }
        if (*p != '/')
            return i == s->n - 1; /* the pattern ends: so must the path */
        p++;
    }
    return 0; /* the path ends before the pattern (a path "/" against "/x" too) */
}

static int same_method(const char *route_method, const char *method)
{
    return strcmp(route_method, method) == 0 ||
           (strcmp(route_method, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

static int decode_params(const char *pattern, const struct segs *s, struct http_request *rq)
{
    rq->nparams = 0;
    const char *p = pattern;
    for (int i = 0; i < s->n && p; i++, p = strchr(p + 1, '/')) {
        if (p[1] != '{')
            continue;
        if (rq->nparams == HTTP_PATH_PARAMS_MAX)
            return -EINVAL;
        /* decoding never makes it longer: its raw length, up to the bound the decoder checks */
        size_t cap = (s->len[i] < SEG_BYTES_MAX ? s->len[i] : SEG_BYTES_MAX) + 1;
        char *out = malloc(cap);
        if (!out)
            return -ENOMEM;
        size_t n = 0;
        int rc = request_pct_decode(s->p[i], s->len[i], out, cap, &n);
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
