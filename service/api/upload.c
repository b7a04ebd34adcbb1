/* upload.c -- the NDJSON upload's state machine; see upload.h. */
#include "upload.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "json_number.h"
#include "metrics.h"
#include "ndjson.h"
#include "request.h"
#include "validate.h"

struct upload {
    struct ndjson nd; /* the splitter (ndjson.h) */
    struct entry_in pending[BOARD_BATCH_MAX];
    size_t npending;
    size_t pending_bytes; /* ids and records of the pending lines */
    long applied, rejected_total;
    long settled_line; /* every line up to this one is applied or rejected */
    long cut_line;     /* the last line of a chunk a fault cut before it was settled, or 0 */
    cJSON *rejected;   /* at most UPLOAD_SHOWN_MAX items, in line order */
    int shown;         /* items in `rejected` */
    /* Lines refused when read while earlier lines wait for the flush (which may refuse them
     * too): listed when the flush has placed those, so `rejected` stays in line order. At most
     * UPLOAD_SHOWN_MAX - shown items (later ones could never be among the first shown). */
    cJSON *deferred;
    int ndeferred;
    int64_t version; /* the board's write counter after the last chunk written, 0: none */
    /* chunks taken and not settled yet (in flight), oldest first: their first lines */
    long chunk_first[UPLOAD_CHUNKS_MAX];
    int nchunks, chunk_head;
};

struct upload *upload_new(void)
{
    struct upload *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    ndjson_init(&u->nd, UPLOAD_LINE_MAX);
    if (!(u->rejected = cJSON_CreateArray())) {
        free(u);
        return NULL;
    }
    return u;
}

void upload_free(struct upload *u)
{
    if (!u)
        return;
    ndjson_free(&u->nd);
    for (size_t i = 0; i < u->npending; i++)
        entry_free(&u->pending[i]);
    cJSON_Delete(u->rejected);
    cJSON_Delete(u->deferred);
    free(u);
}

size_t upload_pending(const struct upload *u)
{
    return u->npending;
}

int upload_chunks(const struct upload *u)
{
    return u->nchunks;
}

/* Lines before the first one not settled yet (of the oldest chunk in flight, or pending) are
 * settled: the deferred rejections of those can be listed. */
static long first_unsettled(const struct upload *u)
{
    if (u->nchunks)
        return u->chunk_first[u->chunk_head];
    return u->npending ? u->pending[0].line : LONG_MAX;
}

/* List a rejected line (takes the item), or drop it past UPLOAD_SHOWN_MAX. */
static void show_rejected(struct upload *u, cJSON *item)
{
    if (item && u->shown < UPLOAD_SHOWN_MAX && cJSON_AddItemToArray(u->rejected, item))
        u->shown++;
    else
        cJSON_Delete(item);
}

/* List the deferred rejections of lines before `line`. */
static void show_deferred(struct upload *u, long line)
{
    while (u->ndeferred) {
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(u->deferred->child, "line");
        if (at->valuedouble >= (double)line)
            break;
        u->ndeferred--;
        show_rejected(u, cJSON_DetachItemFromArray(u->deferred, 0));
    }
}

/* A line refused when read: listed now, or after the pending lines before it are written. */
static void reject_line(struct upload *u, long line, const struct entry_error *err)
{
    metrics_write(METRICS_OP_UNKNOWN, 0);
    u->rejected_total++;
    int alone = !u->npending && !u->nchunks; /* no line before it waits for its write */
    if (alone)
        u->settled_line = line;
    if (u->shown + u->ndeferred >= UPLOAD_SHOWN_MAX)
        return;
    if (alone) {
        show_rejected(u, validate_rejected("line", line, err));
        return;
    }
    if (!u->deferred)
        u->deferred = cJSON_CreateArray();
    cJSON *item = validate_rejected("line", line, err);
    if (u->deferred && item && cJSON_AddItemToArray(u->deferred, item))
        u->ndeferred++;
    else
        cJSON_Delete(item);
}

/* A pending line refused when written: listed after the earlier lines refused when read. */
static void reject_pending(struct upload *u, long line, const struct entry_error *err)
{
    u->rejected_total++;
    show_deferred(u, line);
    if (u->shown < UPLOAD_SHOWN_MAX)
        show_rejected(u, validate_rejected("line", line, err));
}

int upload_chunk_take(struct upload *u, struct upload_chunk *c)
{
    size_t n = u->npending;
    memset(c, 0, sizeof(*c));
    if (u->nchunks == UPLOAD_CHUNKS_MAX)
        return -EBUSY;
    c->lines = malloc((n + 1) * sizeof(*c->lines));
    c->be = malloc((n + 1) * sizeof(*c->be));
    c->out = calloc(n + 1, sizeof(*c->out));
    c->bad = calloc(n + 1, sizeof(*c->bad));
    c->idx = malloc((n + 1) * sizeof(*c->idx));
    if (!c->lines || !c->be || !c->out || !c->bad || !c->idx) {
        upload_chunk_free(c);
        return -ENOMEM;
    }
    memcpy(c->lines, u->pending, n * sizeof(*c->lines)); /* the lines are the chunk's now */
    c->nlines = n;
    u->chunk_first[(u->chunk_head + u->nchunks++) % UPLOAD_CHUNKS_MAX] = n ? c->lines[0].line : 0;
    u->npending = 0;
    u->pending_bytes = 0;
    return 0;
}

void upload_chunk_free(struct upload_chunk *c)
{
    for (size_t i = 0; i < c->nlines; i++)
        entry_free(&c->lines[i]);
    free(c->lines);
    free(c->be);
    free(c->out);
    free(c->bad);
    free(c->idx);
    memset(c, 0, sizeof(*c));
}

/* The chunk's lines from c->start that `used` can hold, as board entries; returns how many. */
size_t upload_chunk_entries(const struct board_settings *used, struct upload_chunk *c)
{
    size_t ok = 0;
    for (size_t i = c->start; i < c->nlines; i++) {
        const struct entry_in *e = &c->lines[i];
        size_t bad = 0;
        struct entry_error err;
        c->bad[i] = validate_prepare(used, e, 1, &c->be[ok], &bad, &err) ? -EINVAL : 0;
        if (c->bad[i] == 0)
            c->idx[ok++] = i;
    }
    return ok;
}

/* After a write of c->be[0..handled): the incr results that left the range, and where a retry
 * after a settings change resumes. */
void upload_chunk_written(struct upload_chunk *c, size_t handled, int rc)
{
    for (size_t j = 0; j < handled; j++)
        if (c->out[j].rc)
            c->bad[c->idx[j]] = -EOVERFLOW; /* the incr result left the range */
    if (rc == -EAGAIN && handled)
        c->start = c->idx[handled - 1] + 1;
}

/* The oldest chunk in flight is settled (or dropped): the next one is the oldest. */
static void chunk_done(struct upload *u)
{
    assert(u->nchunks > 0);
    u->chunk_head = (u->chunk_head + 1) % UPLOAD_CHUNKS_MAX;
    u->nchunks--;
}

void upload_drop(struct upload *u, struct upload_chunk *c)
{
    chunk_done(u);
    upload_chunk_free(c);
}

/* The chunk ended with rc: count and list its lines, free them. */
void upload_settle(struct upload *u, int rc, const struct board_settings *used,
                   struct upload_chunk *c)
{
    chunk_done(u);
    /* after a fault, the lines before c->start were still written (a call that wrote part of
     * the chunk, then a settings change): they count, and the stream is settled up to them */
    /* -EREMOTEIO (--write-replicas): the chunk was applied whole, only not confirmed on the
     * replicas: its lines are settled, never to be sent again */
    int whole = rc == 0 || rc == -EREMOTEIO;
    size_t settled = whole ? c->nlines : c->start;
    for (size_t i = 0; i < c->nlines; i++) {
        struct entry_error err = {0};
        if (i < settled)
            metrics_write((int)c->lines[i].op, c->bad[i] == 0);
        if (i < settled && c->bad[i] == 0)
            u->applied++;
        else if (i < settled && c->bad[i] == -EOVERFLOW) {
            validate_range_error(used, &err);
            reject_pending(u, c->lines[i].line, &err);
        } else if (i < settled) {
            struct board_entry be;
            size_t bad = 0;
            validate_prepare(used, &c->lines[i], 1, &be, &bad, &err); /* the refusal again */
            reject_pending(u, c->lines[i].line, &err);
        }
        if (i < settled)
            u->settled_line = c->lines[i].line;
        else
            u->cut_line = c->lines[i].line;
        entry_free(&c->lines[i]);
    }
    c->nlines = 0; /* freed */
    upload_chunk_free(c);
    if (whole)
        show_deferred(u, first_unsettled(u)); /* every line before those is settled */
}

/* One line read: parsed into the pending lines, or rejected. */
static void stream_line(struct upload *u, char *text, size_t len, long line)
{
    struct entry_in *e = &u->pending[u->npending];
    if (validate_entry_fast(text, len, e)) { /* the common line, read without a tree */
        e->line = line;
        u->npending++;
        u->pending_bytes += strlen(e->id) + (e->record ? strlen(e->record) : 0);
        return;
    }
    struct entry_error err = {0};
    cJSON *doc = NULL;
    if (request_json_has_nul(text, len))
        entry_fail(&err, ERR_INVALID_JSON, "the line must not contain NUL (raw or \\u0000).");
    else if (!(doc = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1)))
        entry_fail(&err, ERR_INVALID_JSON, "the line is not valid JSON.");
    size_t at = 0;
    int lit = doc ? json_number_annotate(doc, text, len, &at) : 0; /* numbers keep their text */
    if (lit) {
        if (lit == -ENOMEM)
            entry_fail(&err, ERR_INTERNAL, "Out of memory.");
        else
            entry_fail(&err, ERR_INVALID_JSON, "the line is not valid JSON (near byte %zu).", at);
        cJSON_Delete(doc);
        doc = NULL;
    }
    if (doc && validate_entry(doc, e, &err) == 0) {
        e->line = line;
        u->npending++;
        assert(e->id); /* parse_entry sets it on success */
        u->pending_bytes += strlen(e->id) + (e->record ? strlen(e->record) : 0);
    } else {
        reject_line(u, line, &err);
    }
    cJSON_Delete(doc);
}

/*
 * Read lines from data[*at..len) (NULL: the end of the stream) into the pending lines until the
 * data is used up (0) or they make a full chunk (1: flush it, then call again with the rest); a
 * chunk is one script call, bounded in entries and in bytes, so it stays short in Redis.
 * -ENOMEM.
 */
int upload_take(struct upload *u, const char *data, size_t len, size_t *at)
{
    for (;;) {
        if (u->npending == UPLOAD_CHUNK_LINES || u->pending_bytes >= UPLOAD_CHUNK_BYTES)
            return 1;
        const char *text = NULL;
        size_t tl = 0;
        long line = 0;
        enum ndjson_event ev = ndjson_next(&u->nd, data, len, at, &text, &tl, &line);
        if (ev == NDJSON_MORE)
            return 0;
        if (ev == NDJSON_NO_MEMORY)
            return -ENOMEM;
        if (ev == NDJSON_TOO_LONG) {
            struct entry_error err = {0};
            entry_fail(&err, ERR_LINE_TOO_LARGE, "a line must be at most %ld bytes.",
                       UPLOAD_LINE_MAX);
            reject_line(u, line, &err);
            continue;
        }
        stream_line(u, (char *)text, tl, line);
    }
}

void upload_note_version(struct upload *u, int64_t version)
{
    if (version > u->version)
        u->version = version;
}

char *upload_reply(struct upload *u)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "applied", (double)u->applied);
    cJSON_AddNumberToObject(doc, "rejected_total", (double)u->rejected_total);
    cJSON_AddItemToObject(doc, "rejected", u->rejected);
    u->rejected = NULL;
    if (u->version > 0)
        cJSON_AddNumberToObject(doc, "version", (double)u->version);
    else
        cJSON_AddNullToObject(doc, "version");
    char *json = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return json;
}

void upload_fault(const struct upload *u, int rc, enum err_id *id, int *retry_after_s, char *msg,
                  size_t len, struct upload_cut *cut)
{
    /* the error and its opening clause from http.h's table (as a write: a chunk was sent) */
    const struct http_errno_row *e = rc ? http_errno_find(HTTP_ERRNO_WRITE, rc) : NULL;
    int unknown = e && e->scope == HTTP_ERRNO_WRITE && rc != -EREMOTEIO;
    int unconfirmed = rc == -EREMOTEIO; /* the last chunk applied, not confirmed */
    long rejected = u->rejected_total - u->ndeferred;
    char what[160] = "rankd is shutting down";
    if (e)
        http_errno_summary(e, rc, what, sizeof(what));
    *id = e ? e->id : ERR_SHUTTING_DOWN;
    *retry_after_s = e ? e->retry_after_s : 1;
    *cut = (struct upload_cut){.applied = u->applied,
                               .rejected = rejected,
                               .settled_line = u->settled_line,
                               .unknown_line =
                                   unknown && u->cut_line > u->settled_line ? u->cut_line : 0};
    /* the lines in doubt are named: with chunks in flight they may be more than one chunk's */
    char doubt[96] = "";
    if (cut->unknown_line)
        snprintf(doubt, sizeof(doubt), ", and lines %ld to %ld may or may not be applied",
                 u->settled_line + 1, cut->unknown_line);
    snprintf(msg, len,
             "%s: %ld lines were applied and %ld rejected, every line up to line %ld is settled%s; "
             "send the lines after line %ld again%s.",
             what, u->applied, rejected, u->settled_line,
             unconfirmed ? " (the last chunk's on the primary, not confirmed on the replicas: "
                           "do not send those again)"
                         : doubt,
             u->settled_line,
             cut->unknown_line ? " (read the members of those first if they have incr)" : "");
}
