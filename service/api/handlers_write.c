/* handlers_write.c -- score writes with a JSON body, records; see handlers_write.h. */
#include "handlers_write.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "auth.h"
#include "board.h"
#include "handlers_common.h"
#include "handlers_stream.h"
#include "idem.h"
#include "metrics.h"
#include "render.h"
#include "validate.h"
#include "worker.h"

/* ---------------------------------------------------------------- score writes */

static void reply_entry_error(struct http_reply *rp, const struct entry_error *err,
                              const char *where)
{
    http_reply_error(rp, err->id, "%s%s", where, err->msg);
}

/* The entries of a score write: one entry, a batch {"entries":[...]}, or one entry for several
 * boards (POST /scores: {"boards":[...], ...}). */
struct scores_in {
    struct entry_in *in; /* n entries, owned */
    size_t n;
    enum idem_shape shape;
    char *boards[BOARD_WRITE_BOARDS_MAX]; /* IDEM_BOARDS: nboards names, owned */
    size_t nboards;
};

static void scores_in_free(struct scores_in *si)
{
    for (size_t k = 0; si->in && k < si->n; k++)
        entry_free(&si->in[k]);
    free(si->in);
    si->in = NULL;
    for (size_t b = 0; b < si->nboards; b++)
        free(si->boards[b]);
    si->nboards = 0;
}

/* The "boards" array of POST /scores, detached from doc, into si->boards: 0, or -1 with rp
 * filled (a 400). */
static int boards_parse(cJSON *doc, struct scores_in *si, struct http_reply *rp)
{
    cJSON *list = cJSON_DetachItemFromObjectCaseSensitive(doc, "boards");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    int rc = n < 1 || n > BOARD_WRITE_BOARDS_MAX ? -1 : 0;
    for (const cJSON *b = rc ? NULL : list->child; b && !rc; b = b->next) {
        if (!cJSON_IsString(b) || !board_name_valid(b->valuestring, strlen(b->valuestring))) {
            rc = -1;
            break;
        }
        for (size_t k = 0; k < si->nboards && !rc; k++)
            if (strcmp(si->boards[k], b->valuestring) == 0) {
                http_reply_error(rp, ERR_INVALID_BOARDS, "boards names '%s' twice.",
                                 b->valuestring);
                rc = -2;
            }
        if (!rc && !(si->boards[si->nboards++] = strdup(b->valuestring)))
            rc = -3;
    }
    cJSON_Delete(list);
    if (rc == -1)
        http_reply_error(rp, ERR_INVALID_BOARDS,
                         "boards must be an array of 1 to %d board names ([A-Za-z0-9._-], 1 to "
                         "%d bytes each).",
                         BOARD_WRITE_BOARDS_MAX, BOARD_NAME_LEN_MAX);
    else if (rc == -3)
        http_reply_errno(rp, -ENOMEM);
    return rc ? -1 : 0;
}

/* Parse and validate a JSON score body (no Redis): 0, or -1 with rp filled (4xx/500). With
 * boards set (POST /scores) the body is one entry with "boards". */
static int scores_parse(struct http_request *rq, struct http_reply *rp, int boards,
                        struct scores_in *si)
{
    memset(si, 0, sizeof(*si));
    if (!boards && rq->body.len > 0) { /* the common single entry, without a parse tree */
        struct entry_in one;
        if (validate_entry_fast(rq->body.data, rq->body.len, &one)) {
            if (!(si->in = calloc(2, sizeof(*si->in)))) {
                entry_free(&one);
                http_reply_errno(rp, -ENOMEM);
                return -1;
            }
            si->in[0] = one;
            si->n = 1;
            si->shape = IDEM_ENTRY;
            return 0;
        }
    }
    cJSON *doc = handlers_parse_body(rq, rp);
    if (!doc)
        return -1;
    if (boards && (!cJSON_IsObject(doc) || boards_parse(doc, si, rp))) {
        if (!rp->status)
            http_reply_error(rp, ERR_INVALID_ENTRY, "The body must be a JSON object.");
        cJSON_Delete(doc);
        scores_in_free(si);
        return -1;
    }
    const cJSON *entries = boards ? NULL : cJSON_GetObjectItemCaseSensitive(doc, "entries");
    int single = !(cJSON_IsObject(doc) && entries && cJSON_GetArraySize(doc) == 1);
    si->shape = boards ? IDEM_BOARDS : single ? IDEM_ENTRY : IDEM_BATCH;
    int n = single ? 1 : cJSON_GetArraySize(entries);
    if (!single && (!cJSON_IsArray(entries) || n > BOARD_BATCH_MAX)) {
        http_reply_error(rp, cJSON_IsArray(entries) ? ERR_TOO_MANY_ENTRIES : ERR_INVALID_ENTRIES,
                         "entries must be an array of at most %d entries.", BOARD_BATCH_MAX);
        cJSON_Delete(doc);
        return -1;
    }
    si->in = calloc((size_t)n + 1, sizeof(*si->in));
    int rc = !si->in ? -1 : 0;
    if (rc)
        http_reply_errno(rp, -ENOMEM);
    struct entry_error err = {0};
    const cJSON *e = single ? doc : entries->child;
    for (int i = 0; e && !rc && i < n; e = e->next, i++) {
        if (validate_entry(e, &si->in[i], &err)) {
            metrics_write(METRICS_OP_UNKNOWN, 0);
            char where[48] = "";
            if (!single)
                snprintf(where, sizeof(where), "entries[%d]: ", i);
            reply_entry_error(rp, &err, where);
            rc = -1;
        } else {
            si->n = (size_t)i + 1;
        }
    }
    cJSON_Delete(doc);
    if (rc)
        scores_in_free(si);
    return rc;
}

/*
 * A score write on the event thread's own write connection (worker_writes): the
 * settings this process last saw of each board (else one HGETALL each, sent together), the
 * scores validated against them, then one write.lua call for every board (and compact.lua for a
 * full tie group: board_write_submit). Settings changed under the write (the script refuses it,
 * writing nothing): read them again, validate, send again, at most three times.
 */
struct scores_target {
    struct board_settings_job sj;
    struct board_entry *be;    /* the entries under this board's layout, owned */
    struct board_outcome *out; /* owned */
    struct scores_job *job;
};

struct scores_job {
    struct board_write_job w;           /* first: board.c hands it back */
    struct board_write_target *targets; /* nt, in the job's own allocation (scores_job_new) */
    struct scores_target *t;            /* nt, likewise */
    size_t nt;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    struct scores_in si;
    const char *idem_key; /* borrowed from the request, or NULL */
    char digest[IDEM_DIGEST_HEX + 1];
    int reading;  /* settings reads outstanding */
    int read_rc;  /* the first of them that failed */
    int attempts; /* sends after a settings change */
};

/* Count a write's entries that ended (rc as scores_reply): applied, or rejected for what they
 * hold; a refused write counts its refused entry; a fault or a replay counts nothing. */
static void count_writes(const struct scores_job *j, int rc, size_t bad)
{
    const struct scores_in *si = &j->si;
    if (rc == -1 && bad < si->n)
        metrics_write((int)si->in[bad].op, 0);
    int applied = rc == 0 || rc == -EREMOTEIO; /* applied, if unconfirmed on the replicas */
    for (size_t k = 0; applied && !j->w.replayed && k < si->n; k++)
        metrics_write((int)si->in[k].op, 1);
}

/* The body of a write that succeeded: one entry, a batch, or one entry on several boards. */
static char *scores_body(const struct scores_job *j)
{
    const struct scores_in *si = &j->si;
    if (si->shape == IDEM_ENTRY)
        return render_write(si->in[0].id, &j->t[0].out[0], j->targets[0].version);
    if (si->shape == IDEM_BATCH)
        return render_batch(j->t[0].out, si->n, j->targets[0].version);
    const struct board_outcome *o[BOARD_WRITE_BOARDS_MAX];
    int64_t versions[BOARD_WRITE_BOARDS_MAX];
    for (size_t b = 0; b < j->nt; b++) {
        o[b] = &j->t[b].out[0];
        versions[b] = j->targets[b].version;
    }
    return render_boards_write(si->in[0].id, (const char *const *)si->boards, o, versions, j->nt);
}

/* The reply to a write that ended: rc 0, -1 with err and bad (an entry a board cannot hold), or
 * an errno about target j->w.target. */
static void scores_reply(struct scores_job *j, int rc, size_t bad, struct entry_error *err)
{
    struct http_reply *rp = j->rp;
    count_writes(j, rc, bad);
    const char *board = j->targets[j->w.target < j->nt ? j->w.target : 0].board;
    if (rc == -1) {
        char where[160] = "";
        if (j->si.shape == IDEM_BATCH)
            snprintf(where, sizeof(where), "entries[%zu]: ", bad);
        else if (j->si.shape == IDEM_BOARDS)
            snprintf(where, sizeof(where), "board '%s': ", board);
        reply_entry_error(rp, err, where);
    } else if (rc) {
        struct http_errno_args a = {.board = board};
        unsigned scopes =
            HTTP_ERRNO_WRITE | HTTP_ERRNO_BOARD | (j->idem_key ? HTTP_ERRNO_IDEMPOTENT : 0);
        http_reply_errno_in(rp, scopes, rc, &a);
    } else {
        http_reply_json(rp, 200, scores_body(j));
        if (j->w.replayed)
            http_reply_header(rp, "Idempotent-Replayed", "true");
    }
}

static void scores_job_end(struct scores_job *j, int rc, size_t bad, struct entry_error *err)
{
    struct http_async *async = j->async;
    if (rc && rc != -1 && rc != -EREMOTEIO && j->w.handled > 0)
        rc = -ETIME; /* part of it is applied: never "not written" (-EREMOTEIO says so itself) */
    scores_reply(j, rc, bad, err);
    scores_in_free(&j->si);
    for (size_t b = 0; b < j->nt; b++) {
        free(j->t[b].be);
        free(j->t[b].out);
    }
    free(j);
    http_async_done(async);
}

/* A job for nt (1..BOARD_WRITE_BOARDS_MAX) boards: one allocation, sized for them (a single
 * board's job is about 1 KB; sized for the most boards it was 21.5 KB, zeroed per write). */
static struct scores_job *scores_job_new(size_t nt)
{
    struct scores_job *j = calloc(1, sizeof(*j) + nt * (sizeof(*j->targets) + sizeof(*j->t)));
    if (!j)
        return NULL;
    j->targets = (struct board_write_target *)(void *)(j + 1);
    j->t = (struct scores_target *)(void *)(j->targets + nt);
    return j;
}

static void scores_written(struct board_write_job *w, int rc);
static void scores_read_settings(struct scores_job *j);

/* Validate the entries under every target's settings (targets[b].assumed) and send them; ends
 * the job on failure. */
static void scores_send(struct scores_job *j)
{
    struct entry_error err = {0};
    for (size_t b = 0; b < j->nt; b++) {
        size_t bad = 0;
        if (validate_prepare(&j->targets[b].assumed, j->si.in, j->si.n, j->t[b].be, &bad, &err)) {
            j->w.target = b;
            scores_job_end(j, -1, bad, &err);
            return;
        }
        j->targets[b].entries = j->t[b].be;
        j->targets[b].outcomes = j->t[b].out;
    }
    if (j->si.n == 0) { /* nothing to write: an empty batch */
        scores_job_end(j, 0, 0, &err);
        return;
    }
    int single = j->si.shape != IDEM_BATCH;
    j->w = (struct board_write_job){.targets = j->targets,
                                    .ntargets = j->nt,
                                    .n = j->si.n,
                                    .flags = BOARD_WRITE_ATOMIC | BOARD_WRITE_RANKS |
                                             (single ? BOARD_WRITE_PREV : 0) |
                                             (j->si.shape == IDEM_BOARDS ? 0 : BOARD_WRITE_CREATE),
                                    .idem_key = j->idem_key,
                                    .idem_len = j->idem_key ? strlen(j->idem_key) : 0,
                                    .digest = j->idem_key ? j->digest : NULL,
                                    .deadline_ms = j->rq->deadline_ms,
                                    .done = scores_written};
    int rc = board_write_submit(api_ctx_of(j->rq)->model,
                                worker_writes(http_async_worker(j->async)), &j->w);
    if (rc)
        scores_job_end(j, rc, 0, &err);
}

/* A settings read of the job ended (or was never sent): once all have, send or end. */
static void reads_settled(struct scores_job *j)
{
    if (--j->reading > 0)
        return;
    if (j->read_rc) {
        struct entry_error err = {0};
        scores_job_end(j, j->read_rc, 0, &err);
        return;
    }
    scores_send(j);
}

static void scores_settings_read(struct board_settings_job *sj, int rc)
{
    struct scores_target *t =
        (struct scores_target *)(void *)((char *)sj - offsetof(struct scores_target, sj));
    struct scores_job *j = t->job;
    if (rc && !j->read_rc)
        j->read_rc = rc;
    if (rc == 0)
        j->targets[t - j->t].assumed = sj->settings;
    reads_settled(j);
}

/* Read the settings of every target (HGETALL each, sent together), then scores_send; ends the
 * job when nothing could be sent. */
static void scores_read_settings(struct scores_job *j)
{
    j->reading = (int)j->nt + 1; /* one more, settled below: no read ends the job early */
    j->read_rc = 0;
    for (size_t b = 0; b < j->nt; b++) {
        struct scores_target *t = &j->t[b];
        t->sj = (struct board_settings_job){.board = j->targets[b].board,
                                            .deadline_ms = j->rq->deadline_ms,
                                            .done = scores_settings_read};
        int rc = board_settings_submit(api_ctx_of(j->rq)->model,
                                       worker_writes(http_async_worker(j->async)), &t->sj);
        if (rc) {
            if (!j->read_rc)
                j->read_rc = rc;
            j->reading--;
        }
    }
    reads_settled(j);
}

static void scores_written(struct board_write_job *w, int rc)
{
    struct scores_job *j = (struct scores_job *)w;
    struct entry_error err = {0};
    if (rc == -ERANGE) { /* entry `handled` would leave the range: nothing written */
        validate_range_error(&w->targets[w->target].assumed, &err);
        scores_job_end(j, -1, w->handled, &err);
        return;
    }
    if (rc == -EAGAIN && w->handled == 0 && ++j->attempts < 3) { /* the settings changed */
        scores_read_settings(j);
        return;
    }
    scores_job_end(j, rc, 0, &err);
}

/* Start a parsed write: the Idempotency-Key checked and the digest made, the targets set up,
 * then the settings (seen in the last second, else read). Answers the request itself on error. */
static void scores_start(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                         struct scores_job *j, const char *const *boards, size_t nboards)
{
    j->rq = rq;
    j->rp = rp;
    j->async = async;
    j->nt = nboards;
    j->idem_key = rq->idempotency_key;
    if (j->idem_key && !idem_key_valid(j->idem_key, strlen(j->idem_key))) {
        http_reply_error(rp, ERR_INVALID_IDEMPOTENCY_KEY,
                         "Idempotency-Key must be given once, as 1 to %d visible ASCII characters.",
                         IDEM_KEY_LEN_MAX);
        scores_in_free(&j->si);
        free(j);
        handlers_answered(async);
        return;
    }
    if (j->idem_key)
        idem_digest(j->si.shape, j->si.shape == IDEM_BOARDS ? boards : NULL,
                    j->si.shape == IDEM_BOARDS ? nboards : 0, j->si.in, j->si.n, j->digest);
    int cached = 1;
    for (size_t b = 0; b < nboards; b++) {
        struct scores_target *t = &j->t[b];
        t->job = j;
        j->targets[b].board = boards[b];
        t->be = calloc(j->si.n + 1, sizeof(*t->be));
        t->out = calloc(j->si.n + 1, sizeof(*t->out));
        if (!t->be || !t->out) {
            struct entry_error err = {0};
            scores_job_end(j, -ENOMEM, 0, &err);
            return;
        }
        int exists = 0;
        if (board_settings_cached(api_ctx_of(rq)->model, boards[b], &j->targets[b].assumed,
                                  &exists))
            cached = 0;
    }
    if (cached)
        scores_send(j);
    else
        scores_read_settings(j);
}

/* A parsed write (si, taken over whatever happens) sent as a job: to the one board *board, or
 * with board NULL to si's boards (POST /scores). Out of memory: the -ENOMEM reply, nothing
 * written. */
static void scores_go(struct http_request *rq, struct http_reply *rp, struct http_async *async,
                      struct scores_in *si, const char *const *board)
{
    struct scores_job *j = scores_job_new(board ? 1 : si->nboards);
    if (!j) {
        scores_in_free(si);
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    j->si = *si;
    if (board)
        scores_start(rq, rp, async, j, board, 1);
    else
        scores_start(rq, rp, async, j, (const char *const *)j->si.boards, j->si.nboards);
}

void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (rq->streaming) {
        handle_scores_stream_end(rq, rp, async);
        return;
    }
    struct scores_in si;
    if (handlers_board_param(rq, rp, &board) || scores_parse(rq, rp, 0, &si)) {
        handlers_answered(async); /* a 4xx */
        return;
    }
    scores_go(rq, rp, async, &si, &board);
}

void handle_scores_boards_async(struct http_request *rq, struct http_reply *rp,
                                struct http_async *async)
{
    struct scores_in si;
    if (scores_parse(rq, rp, 1, &si)) {
        handlers_answered(async); /* a 4xx */
        return;
    }
    for (size_t b = 0; b < si.nboards; b++) /* the token's scope covers every board */
        if (auth_board(rq, si.boards[b], rp)) {
            scores_in_free(&si);
            handlers_answered(async); /* a 403, nothing written */
            return;
        }
    scores_go(rq, rp, async, &si, NULL);
}

/* ---------------------------------------------------------------- records */

static void item_put_reply(struct handlers_ctl *c, int rc)
{
    if (rc)
        http_reply_write_errno(c->rp, rc);
    else
        c->rp->status = 204;
}

void handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (handlers_id_param(rq, 0, rp)) {
        handlers_answered(async);
        return;
    }
    cJSON *doc = handlers_parse_body(rq, rp);
    if (!doc) {
        handlers_answered(async);
        return;
    }
    struct entry_error err;
    char *json = validate_record(doc, &err);
    cJSON_Delete(doc);
    if (!json) {
        http_reply_error(rp, err.id, "%s", err.msg);
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, item_put_reply);
    if (!c) {
        free(json);
        return;
    }
    c->json = json;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    c->job.json = json;
    c->job.json_len = strlen(json);
    handlers_ctl_start(c, BOARD_CTL_RECORD_PUT);
}

static void item_delete_reply(struct handlers_ctl *c, int rc)
{
    struct http_errno_args a = {.id = c->job.id};
    if (rc)
        http_reply_errno_in(c->rp, HTTP_ERRNO_ITEM | HTTP_ERRNO_WRITE, rc, &a);
    else
        c->rp->status = 204;
}

void handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    if (handlers_id_param(rq, 0, rp)) {
        handlers_answered(async);
        return;
    }
    struct handlers_ctl *c = handlers_ctl_new(rq, rp, async, item_delete_reply);
    if (!c)
        return;
    c->job.id = rq->params[0];
    c->job.id_len = rq->param_len[0];
    handlers_ctl_start(c, BOARD_CTL_RECORD_DELETE);
}
