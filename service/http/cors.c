/* cors.c -- see cors.h. */
#include "cors.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* 0 when s[0..n) is an origin "http(s)://host[:port]": a host of letters, digits, '-', '.', or
 * a bracketed IPv6 literal, and a port of 1 to 5 digits. */
static int origin_valid(const char *s, size_t n)
{
    size_t scheme = 0;
    if (n > 7 && strncasecmp(s, "http://", 7) == 0)
        scheme = 7;
    else if (n > 8 && strncasecmp(s, "https://", 8) == 0)
        scheme = 8;
    else
        return -EINVAL;
    size_t i = scheme;
    if (s[i] == '[') {
        while (i < n && s[i] != ']') {
            char ch = s[i];
            if (!(ch == '[' || ch == ':' || ch == '.' || (ch >= '0' && ch <= '9') ||
                  (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
                return -EINVAL;
            i++;
        }
        if (i == n)
            return -EINVAL;
        i++;
    } else {
        size_t host = i;
        while (i < n && (s[i] == '-' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
                         (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            i++;
        if (i == host)
            return -EINVAL;
    }
    if (i < n && s[i] == ':') {
        size_t port = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == port || i - port > 5)
            return -EINVAL;
    }
    return i == n ? 0 : -EINVAL;
}

int cors_parse(const char *text, struct cors *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *p = text ? text : "";
    while (*p == ' ')
        p++;
    if (!*p)
        return 0;
    if (strcmp(p, "*") == 0) {
        out->any = 1;
        return 0;
    }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *s = p;
        while (n && *s == ' ')
            s++, n--;
        while (n && s[n - 1] == ' ')
            n--;
        if (n == 1 && s[0] == '*') {
            snprintf(err, errlen, "\"*\" stands alone: it allows every origin");
            return -EINVAL;
        }
        if (origin_valid(s, n) || n >= CORS_ORIGIN_BYTES) {
            snprintf(err, errlen, "\"%.*s\" is not an origin (scheme://host[:port], no path)",
                     (int)(n > 80 ? 80 : n), s);
            return -EINVAL;
        }
        if (out->norigins == CORS_ORIGINS_MAX) {
            snprintf(err, errlen, "at most %d origins", CORS_ORIGINS_MAX);
            return -EINVAL;
        }
        char *o = out->origins[out->norigins++];
        for (size_t i = 0; i < n; i++)
            o[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
        o[n] = '\0';
        if (end && !end[1]) {
            snprintf(err, errlen, "an empty origin after the last ','");
            return -EINVAL;
        }
        p += end ? (size_t)(end - p) + 1 : strlen(p);
    }
    return 0;
}

int cors_enabled(const struct cors *c)
{
    return c->any || c->norigins > 0;
}

const char *cors_allow_origin(const struct cors *c, const char *origin)
{
    if (!origin || !*origin)
        return NULL;
    if (c->any)
        return "*";
    for (int i = 0; i < c->norigins; i++)
        if (strcasecmp(c->origins[i], origin) == 0)
            return origin;
    return NULL;
}

int cors_method_offered(const char *request_method)
{
    return request_method &&
           (strcmp(request_method, "GET") == 0 || strcmp(request_method, "HEAD") == 0);
}
