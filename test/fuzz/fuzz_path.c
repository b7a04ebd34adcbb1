/*
 * fuzz_path.c -- the request line's path and query as rankd decodes them: route_match_in over a
 * table of rankd's route shapes (segments split on '/', then each {param} percent-decoded once),
 * and each query name and value through request_arg_decode, split on '&' and '=' as
 * libmicrohttpd splits them. Also the id, UTF-8 and count checks a decoded part goes through.
 *
 * Input: one byte picks the method, the rest is "path?query" (cut at the first NUL).
 * Properties: a decode never grows its input, is the input itself without '%', and inverts
 * percent-encoding; a match yields one param per {param} segment of its pattern, each the
 * decoded raw segment; a valid id is valid UTF-8; sanitizing gives valid UTF-8;
 * request_parse_count agrees with a reference.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "http.h"
#include "request.h"
#include "route.h"

#define PART_MAX 1024 /* http.c's ARG_BYTES_MAX */

/* The shapes of service/route.c's table: literal segments, {params}, several methods per path
 * (405 and Allow), GET answering HEAD. The handlers are never called. */
static const struct route table[] = {
    {.method = "GET", .pattern = "/healthz"},
    {.method = "GET", .pattern = "/rank"},
    {.method = "GET", .pattern = "/boards"},
    {.method = "GET", .pattern = "/boards/{board}"},
    {.method = "PUT", .pattern = "/boards/{board}"},
    {.method = "DELETE", .pattern = "/boards/{board}"},
    {.method = "GET", .pattern = "/boards/{board}/rank"},
    {.method = "POST", .pattern = "/boards/{board}/scores"},
    {.method = "GET", .pattern = "/boards/{board}/members/{id}"},
    {.method = "DELETE", .pattern = "/boards/{board}/members/{id}"},
    {.method = "DELETE", .pattern = "/boards/{board}/members"},
    {.method = "GET", .pattern = "/boards/{board}/members/{id}/around"},
    {.method = "GET", .pattern = "/items/{id}"},
    {.method = "PUT", .pattern = "/items/{id}"},
};
static const char *const methods[] = {"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"};

static void check_decode(const char *in, size_t len)
{
    static char out[PART_MAX + 1], back[PART_MAX + 1], enc[3 * PART_MAX + 1];
    size_t n = 0;
    int rc = request_pct_decode(in, len, out, sizeof(out), &n);
    FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG, "rc %d", rc);
    int has_pct = memchr(in, '%', len) != NULL;
    if (!has_pct && len < sizeof(out))
        FUZZ_CHECK(rc == 0 && n == len && memcmp(out, in, len) == 0, "plain text changed");
    if (rc)
        return;
    FUZZ_CHECK(n <= len && out[n] == '\0', "decoded %zu of %zu bytes", n, len);
    /* percent-encode every byte of the result: decoding that gives the result back */
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        enc[3 * i] = '%';
        enc[3 * i + 1] = hex[(unsigned char)out[i] >> 4];
        enc[3 * i + 2] = hex[(unsigned char)out[i] & 15];
    }
    size_t m = 0;
    FUZZ_CHECK(request_pct_decode(enc, 3 * n, back, sizeof(back), &m) == 0 && m == n &&
                   memcmp(back, out, n) == 0,
               "encode/decode round trip");
    size_t a = 0;
    int arc = request_arg_decode(in, len, back, sizeof(back), &a);
    FUZZ_CHECK(arc == (memchr(out, '\0', n) ? -EINVAL : 0), "arg decode %d", arc);
    if (request_id_valid(out, n))
        FUZZ_CHECK(request_utf8_valid(out, n) && n >= 1 && n <= 128, "id not UTF-8");
    memcpy(back, out, n + 1);
    request_utf8_sanitize(back);
    size_t sl = strlen(back);
    FUZZ_CHECK(sl == strlen(out) && request_utf8_valid(back, sl), "sanitize");
    int64_t v = 0, ref = 0;
    int ok = sl > 0 && sl < 19 && strspn(back, "0123456789") == sl;
    if (ok)
        ref = strtoll(back, NULL, 10);
    int crc = request_parse_count(back, REQUEST_PAGE_MAX, &v);
    if (ok && ref >= 1 && ref <= REQUEST_PAGE_MAX)
        FUZZ_CHECK(crc == 0 && v == ref, "count '%s': %d", back, crc);
    else if (ok)
        FUZZ_CHECK(crc == (ref == 0 ? -EINVAL : -ERANGE), "count '%s': %d", back, crc);
    else if (sl < 19)
        FUZZ_CHECK(crc == -EINVAL, "count '%s' of junk: %d", back, crc);
}

static void check_route(const char *method, const char *path)
{
    struct http_request rq;
    memset(&rq, 0, sizeof(rq));
    const struct route *r = NULL;
    char allow[128];
    int rc = route_match_in(table, sizeof(table) / sizeof(table[0]), method, path, &rq, &r, allow,
                            sizeof(allow));
    FUZZ_CHECK(rc == 0 || rc == -ENOENT || rc == -EPERM || rc == -EINVAL || rc == -E2BIG ||
                   rc == -ENAMETOOLONG,
               "rc %d", rc);
    if (rc == 0) {
        int want = 0;
        for (const char *p = r->pattern; (p = strchr(p, '{')) != NULL; p++)
            want++;
        FUZZ_CHECK(rq.nparams == want, "%d params for %s", rq.nparams, r->pattern);
        for (int i = 0; i < rq.nparams; i++)
            FUZZ_CHECK(rq.params[i] && strlen(rq.params[i]) <= rq.param_len[i] &&
                           rq.param_len[i] <= 512,
                       "param %d", i);
    }
    if (rc == -EPERM)
        FUZZ_CHECK(allow[0] != '\0', "405 without Allow");
    for (int i = 0; i < rq.nparams; i++)
        free(rq.params[i]);
}

/* The query as libmicrohttpd hands it over: parts split on '&', each name[=value] at its first
 * '='. */
static void check_query(const char *q)
{
    while (*q) {
        size_t part = strcspn(q, "&");
        const char *eq = memchr(q, '=', part);
        size_t nlen = eq ? (size_t)(eq - q) : part;
        check_decode(q, nlen);
        if (eq)
            check_decode(eq + 1, part - nlen - 1);
        q += part;
        if (*q == '&')
            q++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 8192)
        return 0;
    const char *method = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
    char *line = malloc(size);
    if (!line)
        return 0;
    memcpy(line, data + 1, size - 1);
    line[size - 1] = '\0';
    char *qm = strchr(line, '?');
    if (qm)
        *qm = '\0';
    check_route(method, line);
    check_decode(line, strlen(line));
    if (qm)
        check_query(qm + 1);
    free(line);
    return 0;
}
