/* http.c -- reply helpers and the errno -> status table; see http.h. */
#include "http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "request.h"

#define MESSAGE_MAX 512 /* bytes of an error message, with its NUL */

void http_reply_header(struct http_reply *rp, const char *name, const char *value)
{
    size_t n = strlen(value) + 1;
    if (rp->nheaders >= HTTP_HEADERS_MAX || n > sizeof(rp->values) - rp->values_used)
        return;
    char *v = rp->values + rp->values_used;
    memcpy(v, value, n);
    rp->values_used += n;
    rp->headers[rp->nheaders].name = name;
    rp->headers[rp->nheaders++].value = v;
}

/* A streamed body the reply no longer sends: its source is freed. */
static void drop_stream(struct http_reply *rp)
{
    if (rp->stream.free)
        rp->stream.free(rp->stream.arg);
    memset(&rp->stream, 0, sizeof(rp->stream));
}

/* A reply that is no error (any more): what an earlier error reply recorded goes. */
static void drop_error(struct http_reply *rp)
{
    rp->error = ERR_NONE;
    if (rp->fault)
        http_reply_free_fault(rp);
}

void http_reply_stream(struct http_reply *rp, int status, const char *content_type,
                       const struct http_body_source *src)
{
    buf_free(&rp->body);
    drop_stream(rp);
    drop_error(rp);
    rp->stream = *src;
    rp->status = status;
    rp->content_type = content_type;
}

void http_reply_json(struct http_reply *rp, int status, char *json)
{
    http_reply_json_len(rp, status, json, json ? strlen(json) : 0);
}

void http_reply_json_len(struct http_reply *rp, int status, char *json, size_t len)
{
    buf_free(&rp->body);
    drop_stream(rp);
    drop_error(rp);
    if (!json) {
        http_reply_error(rp, ERR_INTERNAL, "The server ran out of memory rendering the reply.");
        return;
    }
    rp->body.data = json;
    rp->body.len = len;
    rp->body.cap = len + 1;
    rp->status = status;
    rp->content_type = "application/json; charset=utf-8";
}

void http_reply_mark_error(struct http_reply *rp, enum err_id id, const char *message)
{
    rp->error = id;
    http_reply_free_fault(rp);
    if (err_status(id) >= 500)
        rp->fault = strdup(message); /* NULL when out of memory: the log says less */
}

void http_reply_free_fault(struct http_reply *rp)
{
    free(rp->fault);
    rp->fault = NULL;
}

/* The error reply of id with message msg (already cut). */
static void reply_error(struct http_reply *rp, enum err_id id, char *msg)
{
    request_utf8_sanitize(msg); /* echoed paths, ids and field names may be cut or invalid */
    cJSON *doc = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "code", err_code(id));
    cJSON_AddStringToObject(err, "message", msg);
    char *json = err ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    buf_free(&rp->body);
    drop_stream(rp);
    rp->status = err_status(id);
    rp->content_type = "application/json; charset=utf-8";
    if (json) {
        rp->body.data = json;
        rp->body.len = strlen(json);
        rp->body.cap = rp->body.len + 1;
    }
    http_reply_mark_error(rp, id, msg);
}

void http_reply_error(struct http_reply *rp, enum err_id id, const char *fmt, ...)
{
    char msg[MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    reply_error(rp, id, msg);
}

/* How many times argument `name` was given, and the first one. */
static int arg_find(const struct http_request *rq, const char *name, const struct http_arg **first)
{
    int count = 0;
    for (size_t i = 0; i < rq->nargs; i++) {
        if (strcmp(rq->args[i].name, name) != 0)
            continue;
        if (count++ == 0)
            *first = &rq->args[i];
    }
    return count;
}

int http_arg(const struct http_request *rq, const char *name, const char **value)
{
    const struct http_arg *a = NULL;
    int n = arg_find(rq, name, &a);
    if (n)
        *value = a->value;
    return n;
}

int http_arg_raw(const struct http_request *rq, const char *name, const char **raw)
{
    const struct http_arg *a = NULL;
    int n = arg_find(rq, name, &a);
    if (n)
        *raw = a->raw;
    return n;
}

/* ---------------------------------------------------------------- the errno -> status table */

#define ROW(e, s, i, m, sum, retry)                                                                \
    {                                                                                              \
        .err = (e), .scope = (s), .id = (i), .retry_after_s = (retry), .message = (m),             \
        .summary = (sum)                                                                           \
    }
#define UNAVAILABLE(e)                                                                             \
    ROW((e), HTTP_ERRNO_FAULT, ERR_REDIS_UNAVAILABLE, NULL, "Redis is unavailable or too slow", 1)
#define OUTCOME_UNKNOWN(e)                                                                         \
    ROW((e), HTTP_ERRNO_WRITE, ERR_WRITE_OUTCOME_UNKNOWN, NULL,                                    \
        "Redis did not answer after a write was sent", 1)

/* The same for a write that carried an Idempotency-Key: its first reply is kept in the same
 * script as the write, so sending it again with the same key and body applies it at most once. */
#define OUTCOME_UNKNOWN_IDEMPOTENT(e)                                                              \
    ROW((e), HTTP_ERRNO_IDEMPOTENT, ERR_WRITE_OUTCOME_UNKNOWN,                                     \
        "Redis did not answer after the write was sent (a timeout or a lost connection): it may "  \
        "or may not have been applied. It carried an Idempotency-Key: send it again with the "     \
        "same key and body; it is applied at most once (a replay says Idempotent-Replayed: "       \
        "true).",                                                                                  \
        "Redis did not answer after a write was sent", 1)

/* In lookup order: the specific scopes first, then the Redis faults every lookup has, then the
 * default. Where two rows could answer one lookup (the same errno in two scopes a caller names
 * together), the earlier wins: a write's lost reply is write_outcome_unknown, not
 * redis_unavailable. */
const struct http_errno_row http_errno_rows[] = {
    OUTCOME_UNKNOWN_IDEMPOTENT(-ETIME),
    OUTCOME_UNKNOWN_IDEMPOTENT(-ECONNRESET),
    OUTCOME_UNKNOWN(-ETIME),
    OUTCOME_UNKNOWN(-ECONNRESET),
    /* --write-replicas N: the write ran on the primary, WAIT did not confirm it on N replicas */
    ROW(-EREMOTEIO, HTTP_ERRNO_IDEMPOTENT, ERR_WRITE_NOT_REPLICATED,
        "The write was applied on the primary, but not confirmed on the replicas --write-replicas "
        "asks for (too few acknowledged it in time): a failover now could lose it. It carried an "
        "Idempotency-Key: send it again with the same key and body; it is applied at most once "
        "(a replay says Idempotent-Replayed: true, and is answered 200 once the replicas hold "
        "it).",
        "A write was applied on the primary but not confirmed on --write-replicas replicas", 1),
    ROW(-EREMOTEIO, HTTP_ERRNO_WRITE, ERR_WRITE_NOT_REPLICATED, NULL,
        "A write was applied on the primary but not confirmed on --write-replicas replicas", 1),
    ROW(-ENOENT, HTTP_ERRNO_BOARD, ERR_BOARD_NOT_FOUND, NULL, NULL, 0),
    ROW(-ENODATA, HTTP_ERRNO_BOARD, ERR_MEMBER_NOT_FOUND, NULL, NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_BOARD, ERR_INVALID_PERIOD, NULL, NULL, 0),
    ROW(-ESRCH, HTTP_ERRNO_BOARD, ERR_PERIOD_NOT_FOUND, NULL, NULL, 0),
    ROW(-ESTALE, HTTP_ERRNO_BOARD, ERR_EXPORT_INTERRUPTED, NULL, NULL, 0),
    ROW(-ENOTSUP, HTTP_ERRNO_BOARD, ERR_BOARD_HAS_NO_PERIODS, NULL, NULL, 0),
    ROW(-EKEYEXPIRED, HTTP_ERRNO_BOARD, ERR_CURSOR_EXPIRED, NULL, NULL, 0),
    ROW(-EBADR, HTTP_ERRNO_BOARD, ERR_INVALID_CURSOR,
        "The cursor is not one rankd made for this board: its edge does not have the shape of "
        "the board's entries (their sub-scores). Start again from a page without after or "
        "before.",
        NULL, 0),
    ROW(-ENOSYS, HTTP_ERRNO_BOARD, ERR_DENSE_RANK_UNAVAILABLE, NULL, NULL, 0),
    ROW(-ENODATA, HTTP_ERRNO_ITEM, ERR_ITEM_NOT_FOUND, NULL, NULL, 0),
    ROW(-EEXIST, HTTP_ERRNO_SETTINGS, ERR_BOARD_NOT_EMPTY, NULL, NULL, 0),
    ROW(-EKEYREJECTED, HTTP_ERRNO_WRITE, ERR_IDEMPOTENCY_KEY_REUSED, NULL,
        "the Idempotency-Key was used for another request", 0),
    ROW(-EDOM, HTTP_ERRNO_SCORE, ERR_INVALID_SCORE,
        "{field} {score} has more fractional digits than this board keeps "
        "(score_decimals={decimals}).",
        NULL, 0),
    ROW(-ERANGE, HTTP_ERRNO_SCORE, ERR_SCORE_OUT_OF_RANGE, NULL, NULL, 0),
    ROW(0, HTTP_ERRNO_SCORE, ERR_INVALID_SCORE, NULL, NULL, 0),
    ROW(-ENOENT, HTTP_ERRNO_ROUTE, ERR_NOT_FOUND, NULL, NULL, 0),
    ROW(-EPERM, HTTP_ERRNO_ROUTE, ERR_METHOD_NOT_ALLOWED, NULL, NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_ROUTE, ERR_INVALID_PATH, NULL, NULL, 0),
    ROW(-ENAMETOOLONG, HTTP_ERRNO_ROUTE, ERR_URI_TOO_LONG, NULL, NULL, 0),
    ROW(-E2BIG, HTTP_ERRNO_ROUTE, ERR_URI_TOO_LONG,
        "A segment of the path is over 512 bytes once decoded: no board name (64 at most) or id "
        "(128) is that long.",
        NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_FILE, ERR_INVALID_PATH, NULL, NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_QUERY, ERR_INVALID_QUERY, NULL, NULL, 0),
    UNAVAILABLE(-ECONNREFUSED),
    UNAVAILABLE(-ETIMEDOUT),
    UNAVAILABLE(-ETIME),
    UNAVAILABLE(-ECONNRESET),
    UNAVAILABLE(-EIO),
    UNAVAILABLE(-EAGAIN),
    ROW(-EXDEV, HTTP_ERRNO_WRITE, ERR_SEVERAL_BOARDS_ON_CLUSTER, NULL,
        "a write to several boards on a Redis Cluster", 0),
    /* a Redis Cluster's refusals (store_async.h): nothing of the request ran there */
    ROW(-EBUSY, HTTP_ERRNO_FAULT, ERR_REDIS_UNAVAILABLE,
        "The Redis Cluster is moving this board's slot to another node (TRYAGAIN); nothing was "
        "written. Retry shortly.",
        "Redis Cluster: TRYAGAIN (a slot migration)", 1),
    ROW(-ENETDOWN, HTTP_ERRNO_FAULT, ERR_REDIS_UNAVAILABLE,
        "The Redis Cluster cannot serve this board now (CLUSTERDOWN: a failover under way, or a "
        "slot no node serves); nothing was written. Retry shortly.",
        "Redis Cluster: CLUSTERDOWN", 1),
    ROW(-ELOOP, HTTP_ERRNO_FAULT, ERR_REDIS_UNAVAILABLE,
        "The Redis Cluster redirected this request again and again (its slots are moving); "
        "nothing was written. Retry shortly.",
        "Redis Cluster: too many redirects", 1),
    ROW(-EDQUOT, HTTP_ERRNO_FAULT, ERR_INSUFFICIENT_STORAGE, NULL,
        "Redis is out of memory (maxmemory) and refuses writes", 0),
    ROW(-EROFS, HTTP_ERRNO_FAULT, ERR_PRIMARY_CHANGED, NULL,
        "Redis answered READONLY (a replica now: a failover)", 1),
    ROW(-ENOSPC, HTTP_ERRNO_FAULT, ERR_SCORE_GROUP_FULL, NULL,
        "2097152 members already share one of these scores on this board", 0),
    ROW(0, ~0U, ERR_INTERNAL, NULL, "Internal error ({reason})", 0),
};
const size_t http_errno_nrows = sizeof(http_errno_rows) / sizeof(http_errno_rows[0]);

const struct http_errno_row *http_errno_find(unsigned scopes, int err)
{
    if (err > 0)
        err = -err;
    scopes |= HTTP_ERRNO_FAULT;
    for (size_t i = 0; i + 1 < http_errno_nrows; i++) {
        const struct http_errno_row *e = &http_errno_rows[i];
        if ((e->scope & scopes) && (e->err == err || e->err == 0))
            return e;
    }
    return &http_errno_rows[http_errno_nrows - 1];
}

/* The value of placeholder name[0..len) and how many bytes of it are quoted at most; NULL for a
 * name the table must not use. */
static const char *placeholder(const char *name, size_t len, int err,
                               const struct http_errno_args *a, size_t *max)
{
    static const struct http_errno_args none;
    static const struct {
        const char *name;
        size_t max;
    } names[] = {{"board", SIZE_MAX},   {"id", 200},         {"method", SIZE_MAX},
                 {"path", 200},         {"allow", SIZE_MAX}, {"field", SIZE_MAX},
                 {"score", SIZE_MAX},   {"min", SIZE_MAX},   {"max", SIZE_MAX},
                 {"decimals", SIZE_MAX}};
    if (len == 6 && memcmp(name, "reason", 6) == 0) {
        *max = SIZE_MAX;
        return strerror(err < 0 ? -err : err);
    }
    if (!a)
        a = &none;
    const char *const values[] = {a->board, a->id,    a->method, a->path, a->allow,
                                  a->field, a->score, a->min,    a->max,  a->decimals};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) {
            *max = names[i].max;
            return values[i] ? values[i] : "";
        }
    return NULL;
}

/* Fill template t into out[0..cap) (see http_errno_format). */
static size_t fill(const char *t, int err, const struct http_errno_args *a, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = t; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        size_t max = 0;
        const char *v = close ? placeholder(p + 1, (size_t)(close - p - 1), err, a, &max) : NULL;
        if (v) {
            for (size_t i = 0; i < max && v[i] && n + 1 < cap; i++)
                out[n++] = v[i];
            p = close + 1;
            continue;
        }
        if (n + 1 < cap) /* a brace that names nothing stays as it is */
            out[n++] = *p;
        p++;
    }
    out[n] = '\0';
    return n;
}

size_t http_errno_format(const struct http_errno_row *e, int err, const struct http_errno_args *a,
                         char *out, size_t cap)
{
    return fill(e->message ? e->message : err_message(e->id), err, a, out, cap);
}

size_t http_errno_summary(const struct http_errno_row *e, int err, char *out, size_t cap)
{
    return fill(e->summary ? e->summary : err_code(e->id), err, NULL, out, cap);
}

void http_reply_error_default(struct http_reply *rp, enum err_id id)
{
    char msg[MESSAGE_MAX];
    fill(err_message(id), 0, NULL, msg, sizeof(msg));
    reply_error(rp, id, msg);
}

void http_reply_errno_in(struct http_reply *rp, unsigned scopes, int err,
                         const struct http_errno_args *a)
{
    const struct http_errno_row *e = http_errno_find(scopes, err);
    char msg[MESSAGE_MAX];
    http_errno_format(e, err, a, msg, sizeof(msg));
    reply_error(rp, e->id, msg);
    if (e->retry_after_s > 0) {
        char s[16];
        snprintf(s, sizeof(s), "%d", e->retry_after_s);
        http_reply_header(rp, "Retry-After", s);
    }
}

void http_reply_errno(struct http_reply *rp, int rc)
{
    http_reply_errno_in(rp, 0, rc, NULL);
}

void http_reply_write_errno(struct http_reply *rp, int rc)
{
    http_reply_errno_in(rp, HTTP_ERRNO_WRITE, rc, NULL);
}
