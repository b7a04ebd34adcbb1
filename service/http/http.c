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

void http_reply_stream(struct http_reply *rp, int status, const char *content_type,
                       const struct http_body_source *src)
{
    buf_free(&rp->body);
    drop_stream(rp);
    rp->stream = *src;
    rp->status = status;
    rp->content_type = content_type;
}

void http_reply_json(struct http_reply *rp, int status, char *json)
{
    buf_free(&rp->body);
    drop_stream(rp);
    if (!json) {
        http_reply_error(rp, 500, "internal", "The server ran out of memory rendering the reply.");
        return;
    }
    rp->body.data = json;
    rp->body.len = strlen(json);
    rp->body.cap = rp->body.len + 1;
    rp->status = status;
    rp->content_type = "application/json; charset=utf-8";
}

void http_reply_error(struct http_reply *rp, int status, const char *code, const char *fmt, ...)
{
    char msg[MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    request_utf8_sanitize(msg); /* echoed paths, ids and field names may be cut or invalid */
    cJSON *doc = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "code", code);
    cJSON_AddStringToObject(err, "message", msg);
    char *json = err ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    buf_free(&rp->body);
    drop_stream(rp);
    rp->status = status;
    rp->content_type = "application/json; charset=utf-8";
    if (json) {
        rp->body.data = json;
        rp->body.len = strlen(json);
        rp->body.cap = rp->body.len + 1;
    }
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

#define ROW(e, s, st, c, m, sum, retry)                                                            \
    {                                                                                              \
        .err = (e), .scope = (s), .status = (st), .retry_after_s = (retry), .code = (c),           \
        .message = (m), .summary = (sum)                                                           \
    }
#define UNAVAILABLE(e)                                                                             \
    ROW((e), HTTP_ERRNO_FAULT, 503, "redis_unavailable",                                           \
        "Redis is unavailable or too slow right now ({reason}); retry shortly.",                   \
        "Redis is unavailable or too slow", 1)
#define OUTCOME_UNKNOWN(e)                                                                         \
    ROW((e), HTTP_ERRNO_WRITE, 503, "write_outcome_unknown",                                       \
        "Redis did not answer after the write was sent (a timeout or a lost connection): it may "  \
        "or may not have been applied. Read the member before retrying an incr.",                  \
        "Redis did not answer after a write was sent", 1)

/* The same for a write that carried an Idempotency-Key: its first reply is kept in the same
 * script as the write, so sending it again with the same key and body applies it at most once. */
#define OUTCOME_UNKNOWN_IDEMPOTENT(e)                                                              \
    ROW((e), HTTP_ERRNO_IDEMPOTENT, 503, "write_outcome_unknown",                                  \
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
    ROW(-EREMOTEIO, HTTP_ERRNO_IDEMPOTENT, 503, "write_not_replicated",
        "The write was applied on the primary, but not confirmed on the replicas --write-replicas "
        "asks for (too few acknowledged it in time): a failover now could lose it. It carried an "
        "Idempotency-Key: send it again with the same key and body; it is applied at most once "
        "(a replay says Idempotent-Replayed: true, and is answered 200 once the replicas hold "
        "it).",
        "A write was applied on the primary but not confirmed on --write-replicas replicas", 1),
    ROW(-EREMOTEIO, HTTP_ERRNO_WRITE, 503, "write_not_replicated",
        "The write was applied on the primary, but not confirmed on the replicas --write-replicas "
        "asks for (too few acknowledged it in time): a failover now could lose it. Read it back "
        "before sending it again, above all an incr (sent again, an incr is applied again).",
        "A write was applied on the primary but not confirmed on --write-replicas replicas", 1),
    ROW(-ENOENT, HTTP_ERRNO_BOARD, 404, "board_not_found", "Board '{board}' does not exist.", NULL,
        0),
    ROW(-ENODATA, HTTP_ERRNO_BOARD, 404, "member_not_found",
        "Board '{board}' has no member '{id}'.", NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_BOARD, 400, "invalid_period",
        "period must be an id of this board's kind: 2026-11-30T14 (hourly), 2026-11-30 (daily), "
        "2026-W49 (weekly) or 2026-11 (monthly).",
        NULL, 0),
    ROW(-ESRCH, HTTP_ERRNO_BOARD, 404, "period_not_found",
        "Board '{board}' has no readable period by that id: it is in the future or older than the "
        "board's retain setting (GET /boards/{board} lists them).",
        NULL, 0),
    ROW(-ESTALE, HTTP_ERRNO_BOARD, 409, "export_interrupted",
        "Board '{board}' was reset, deleted or given another layout, or the period's set was "
        "swept, while the export's snapshot was taken: nothing consistent can be exported. Ask "
        "again.",
        NULL, 0),
    ROW(-ENOTSUP, HTTP_ERRNO_BOARD, 400, "board_has_no_periods",
        "Board '{board}' has no periods (its period setting is none); leave out period.", NULL, 0),
    ROW(-EKEYEXPIRED, HTTP_ERRNO_BOARD, 410, "cursor_expired",
        "The cursor is from before board '{board}' was reset, re-created or given another layout; "
        "start again from a page without after or before.",
        NULL, 0),
    ROW(-ENOSYS, HTTP_ERRNO_BOARD, 409, "dense_rank_unavailable",
        "Dense ranks of board '{board}' cannot be read here: the set read was written before "
        "rankd kept its distinct scores. They start once the set is empty again (POST "
        "/boards/{board}/reset empties the current period); ordinal and competition ranks work "
        "as they are.",
        NULL, 0),
    ROW(-ENODATA, HTTP_ERRNO_ITEM, 404, "item_not_found", "No record is stored for id '{id}'.",
        NULL, 0),
    ROW(-EEXIST, HTTP_ERRNO_SETTINGS, 409, "board_not_empty",
        "{field} cannot change on board '{board}' while it has members in its current period "
        "(or, without periods, in the board) or in a past period it keeps readable. Empty those "
        "first: POST /boards/{board}/reset empties the current period, and \"retain\":0 in the "
        "same PUT lets the past periods go with the change; or delete the board, or use a new "
        "one.",
        NULL, 0),
    ROW(-EKEYREJECTED, HTTP_ERRNO_WRITE, 422, "idempotency_key_reused",
        "This Idempotency-Key was used for another request on board '{board}' in the last 24 "
        "hours (another body, board or shape); nothing was written. Use a new key for a new "
        "write.",
        "the Idempotency-Key was used for another request", 0),
    ROW(-EDOM, HTTP_ERRNO_SCORE, 422, "invalid_score",
        "{field} {score} has more fractional digits than this board keeps "
        "(score_decimals={decimals}).",
        NULL, 0),
    ROW(-ERANGE, HTTP_ERRNO_SCORE, 422, "score_out_of_range",
        "{field} {score} is outside this board's exact range: from {min} to {max}.", NULL, 0),
    ROW(0, HTTP_ERRNO_SCORE, 422, "invalid_score", "score must be a JSON number.", NULL, 0),
    ROW(-ENOENT, HTTP_ERRNO_ROUTE, 404, "not_found", "No route for {method} {path}.", NULL, 0),
    ROW(-EPERM, HTTP_ERRNO_ROUTE, 405, "method_not_allowed",
        "{method} is not allowed here; use {allow}.", NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_ROUTE, 400, "invalid_path", "The path has a malformed percent escape.",
        NULL, 0),
    ROW(-ENAMETOOLONG, HTTP_ERRNO_ROUTE, 414, "uri_too_long",
        "The path is over 2048 bytes (the query string not counted): no route or file of rankd's "
        "has one that long.",
        NULL, 0),
    ROW(-E2BIG, HTTP_ERRNO_ROUTE, 414, "uri_too_long",
        "A segment of the path is over 512 bytes once decoded: no board name (64 at most) or id "
        "(128) is that long.",
        NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_FILE, 400, "invalid_path", "The path has a malformed percent escape.",
        NULL, 0),
    ROW(-EINVAL, HTTP_ERRNO_QUERY, 400, "invalid_query",
        "The query string has a malformed percent escape or an over-long part.", NULL, 0),
    UNAVAILABLE(-ECONNREFUSED),
    UNAVAILABLE(-ETIMEDOUT),
    UNAVAILABLE(-ETIME),
    UNAVAILABLE(-ECONNRESET),
    UNAVAILABLE(-EIO),
    UNAVAILABLE(-EAGAIN),
    ROW(-EXDEV, HTTP_ERRNO_WRITE, 422, "several_boards_on_cluster",
        "On a Redis Cluster a write reaches one board (each board is in a slot of its own, and "
        "a write is one script on one slot): send one request per board. Nothing was written.",
        "a write to several boards on a Redis Cluster", 0),
    /* a Redis Cluster's refusals (store_async.h): nothing of the request ran there */
    ROW(-EBUSY, HTTP_ERRNO_FAULT, 503, "redis_unavailable",
        "The Redis Cluster is moving this board's slot to another node (TRYAGAIN); nothing was "
        "written. Retry shortly.",
        "Redis Cluster: TRYAGAIN (a slot migration)", 1),
    ROW(-ENETDOWN, HTTP_ERRNO_FAULT, 503, "redis_unavailable",
        "The Redis Cluster cannot serve this board now (CLUSTERDOWN: a failover under way, or a "
        "slot no node serves); nothing was written. Retry shortly.",
        "Redis Cluster: CLUSTERDOWN", 1),
    ROW(-ELOOP, HTTP_ERRNO_FAULT, 503, "redis_unavailable",
        "The Redis Cluster redirected this request again and again (its slots are moving); "
        "nothing was written. Retry shortly.",
        "Redis Cluster: too many redirects", 1),
    ROW(-EDQUOT, HTTP_ERRNO_FAULT, 507, "insufficient_storage",
        "Redis is out of memory (maxmemory) and refuses writes: nothing was written. Deleting "
        "members or boards frees memory; so does raising maxmemory.",
        "Redis is out of memory (maxmemory) and refuses writes", 0),
    ROW(-EROFS, HTTP_ERRNO_FAULT, 503, "primary_changed",
        "Redis answered READONLY: the instance rankd writes to is a replica now (a failover); "
        "nothing was written. Point rankd at the new primary.",
        "Redis answered READONLY (a replica now: a failover)", 1),
    ROW(-ENOSPC, HTTP_ERRNO_FAULT, 422, "score_group_full",
        "2097152 members already share this exact score on this board; no more can be placed in "
        "that group (see schema/score-layout.md).",
        "2097152 members already share one of these scores on this board", 0),
    ROW(0, ~0U, 500, "internal", "Internal error: {reason}.", "Internal error ({reason})", 0),
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
    return fill(e->message, err, a, out, cap);
}

size_t http_errno_summary(const struct http_errno_row *e, int err, char *out, size_t cap)
{
    return fill(e->summary ? e->summary : e->code, err, NULL, out, cap);
}

void http_reply_errno_in(struct http_reply *rp, unsigned scopes, int err,
                         const struct http_errno_args *a)
{
    const struct http_errno_row *e = http_errno_find(scopes, err);
    char msg[MESSAGE_MAX];
    http_errno_format(e, err, a, msg, sizeof(msg));
    http_reply_error(rp, e->status, e->code, "%s", msg);
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
