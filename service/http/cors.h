/*
 * cors.h -- cross-origin reads (the Fetch standard's CORS protocol) for --cors-origin.
 *
 * rankd's reads are public; a web page on another origin may fetch pages, members and boards
 * when the operator lists its origin (or "*"). Writes are never offered cross-origin: they carry
 * the write token, which belongs on a server, not in a browser, so a preflight for any method
 * but GET/HEAD, or on a write route, gets no CORS headers and the browser refuses it.
 *
 * What a reply carries for an allowed origin (cors_allow):
 *   Access-Control-Allow-Origin: <the origin> (or "*" when configured "*")
 *   Access-Control-Expose-Headers: ETag, Age, X-Cache, X-Request-Id, Retry-After
 * and every reply, whatever its Origin (none, another), with a list of origins:
 *   Vary: Origin (so a shared cache never gives one origin's reply to another)
 * while with "*" every GET and HEAD reply carries Access-Control-Allow-Origin: * (an Origin
 * header or none): the reply is then the same for every request, and says no Vary: Origin.
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method GET or HEAD) is 204 with
 *   Access-Control-Allow-Methods: GET, HEAD
 *   Access-Control-Allow-Headers: If-None-Match, X-Request-Id, Last-Event-ID
 *   Access-Control-Max-Age: 600
 * No credentials (cookies) are ever allowed: rankd has none.
 */
#ifndef RANKD_CORS_H
#define RANKD_CORS_H

#include <stddef.h>

#define CORS_ORIGINS_MAX 16
#define CORS_ORIGIN_BYTES 256

#define CORS_EXPOSE_HEADERS "ETag, Age, X-Cache, X-Request-Id, Retry-After"
#define CORS_ALLOW_METHODS "GET, HEAD"
#define CORS_ALLOW_HEADERS "If-None-Match, X-Request-Id, Last-Event-ID"
#define CORS_MAX_AGE_S "600"

/** The allowed origins: none (off), any ("*"), or a list. */
struct cors {
    int any;                                           /**< "*": every origin */
    int norigins;                                      /**< 0 with any == 0: CORS off */
    char origins[CORS_ORIGINS_MAX][CORS_ORIGIN_BYTES]; /**< serialized origins, lower case */
};

/**
 * Parse --cors-origin: "" (off), "*", or a comma-separated list of up to CORS_ORIGINS_MAX
 * origins "scheme://host[:port]" (scheme http or https, no path, no trailing '/'), compared
 * case-insensitively. Returns 0, or -EINVAL with a reason in err[0..errlen).
 */
int cors_parse(const char *text, struct cors *out, char *err, size_t errlen);

/** 1 when CORS is on at all. */
int cors_enabled(const struct cors *c);

/**
 * The Access-Control-Allow-Origin value for a request's Origin header (NULL: none), or NULL when
 * that origin is not allowed. The result is "*" or `origin` itself (borrowed).
 */
const char *cors_allow_origin(const struct cors *c, const char *origin);

/** 1 when an Access-Control-Request-Method value asks for a method CORS offers (GET, HEAD). */
int cors_method_offered(const char *request_method);

#endif
