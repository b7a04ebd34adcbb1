/* handlers_write.c -- score writes with a JSON body, records; see handlers_write.h. */
#include "handlers_write.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app.h"
#include "board.h"
#include "handlers_common.h"
#include "handlers_stream.h"
#include "metrics.h"
#include "render.h"
#include "validate.h"

/* ---------------------------------------------------------------- score writes */

static void reply_entry_error(struct http_reply *rp, const struct entry_error *err,
                              const char *where)
{
    http_reply_error(rp, err->status, err->code, "%s%s", where, err->msg);
}

/* The entries of a score write: one entry, or a batch {"entries":[...]}. */
struct scores_in {
    struct entry_in *in; /* n entries, owned */
    struct board_outcome *out;
    size_t n;
    int single;
};

static void scores_in_free(struct scores_in *si)
{
    for (size_t k = 0; si->in && k < si->n; k++)
        entry_free(&si->in[k]);
    free(si->in);
    free(si->out);
    si->in = NULL;
    si->out = NULL;
}

/* Parse and validate a JSON score body (no Redis): 0, or -1 with rp filled (4xx/500). */
static int scores_parse(struct http_request *rq, struct http_reply *rp, struct scores_in *si)
{
    memset(si, 0, sizeof(*si));
    cJSON *doc = handlers_parse_body(rq, rp);
    if (!doc)
        return -1;
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(doc, "entries");
    si->single = !(cJSON_IsObject(doc) && entries && cJSON_GetArraySize(doc) == 1);
    int n = si->single ? 1 : cJSON_GetArraySize(entries);
    if (!si->single && (!cJSON_IsArray(entries) || n > BOARD_BATCH_MAX)) {
        http_reply_error(rp, cJSON_IsArray(entries) ? 413 : 400, "invalid_entries",
                         "entries must be an array of at most %d entries.", BOARD_BATCH_MAX);
        cJSON_Delete(doc);
        return -1;
    }
    si->in = calloc((size_t)n + 1, sizeof(*si->in));
    si->out = calloc((size_t)n + 1, sizeof(*si->out));
    int rc = (!si->in || !si->out) ? -1 : 0;
    if (rc)
        http_reply_errno(rp, -ENOMEM);
    struct entry_error err = {0};
    const cJSON *e = si->single ? doc : entries->child;
    for (int i = 0; e && !rc && i < n; e = e->next, i++) {
        if (validate_entry(e, &si->in[i], &err)) {
            metrics_write(METRICS_OP_UNKNOWN, 0);
            char where[48] = "";
            if (!si->single)
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

/* Count a JSON write's entries that ended (rc as scores_reply): applied, or rejected for what
 * they hold; a refused batch counts its refused entry; a fault counts nothing (unknown). */
static void count_writes(const struct scores_in *si, int rc, size_t bad)
{
    if (rc == -1 && bad < si->n)
        metrics_write((int)si->in[bad].op, 0);
    for (size_t k = 0; rc == 0 && k < si->n; k++)
        metrics_write((int)si->in[k].op, si->out[k].rc == 0);
}

/* The reply to a write that ended: rc 0, -1 with err and bad (an entry the board cannot hold),
 * or an errno. */
static void scores_reply(struct http_reply *rp, const struct scores_in *si, int rc,
                         const struct board_settings *used, size_t bad, struct entry_error *err)
{
    count_writes(si, rc, bad);
    if (rc == -1) {
        char where[48] = "";
        if (!si->single)
            snprintf(where, sizeof(where), "entries[%zu]: ", bad);
        reply_entry_error(rp, err, where);
    } else if (rc) {
        http_reply_write_errno(rp, rc);
    } else if (si->single && si->out[0].rc) {
        validate_range_error(used, err);
        reply_entry_error(rp, err, "");
    } else if (si->single) {
        http_reply_json(rp, 200, render_write(si->in[0].id, &si->out[0]));
    } else {
        cJSON *doc = cJSON_CreateObject(), *rej = cJSON_CreateArray();
        int applied = 0;
        for (size_t k = 0; k < si->n; k++) {
            if (si->out[k].rc == 0) {
                applied++;
                continue;
            }
            validate_range_error(used, err);
            cJSON_AddItemToArray(rej, validate_rejected("index", (long)k, err));
        }
        cJSON_AddNumberToObject(doc, "applied", applied);
        cJSON_AddItemToObject(doc, "rejected", rej);
        http_reply_json(rp, 200, cJSON_PrintUnformatted(doc));
        cJSON_Delete(doc);
    }
}

/*
 * A score write on the event thread's own write connection (http_async_store_writes): the
 * settings this process last saw (else one HGETALL), the scores validated against them, then
 * write.lua (and compact.lua for a full tie group: board_write_submit). Settings changed under
 * the write (the script refuses it): read them again, validate, resume after what was written,
 * at most three times.
 */
struct scores_job {
    struct board_write_job w; /* first: board.c hands it back */
    struct board_settings_job sj;
    struct http_request *rq;
    struct http_reply *rp;
    struct http_async *async;
    const char *board;
    struct scores_in si;
    struct board_entry *be;
    size_t from; /* entries before it are settled */
    int attempts;
};

static void scores_job_end(struct scores_job *j, int rc, size_t bad, struct entry_error *err)
{
    struct http_async *async = j->async;
    if (rc && j->from > 0)
        rc = -ETIME; /* part of it is applied (a 422 too): never "not written" */
    scores_reply(j->rp, &j->si, rc, &j->w.assumed, bad, err);
    scores_in_free(&j->si);
    free(j->be);
    free(j);
    http_async_done(async);
}

static void scores_written(struct board_write_job *w, int rc);

/* Validate entries[from..n) under `set` and send them; ends the job on failure. */
static void scores_send(struct scores_job *j, const struct board_settings *set)
{
    struct entry_error err = {0};
    size_t bad = 0;
    j->w.assumed = *set;
    if (validate_prepare(set, j->si.in + j->from, j->si.n - j->from, j->be, &bad, &err)) {
        scores_job_end(j, -1, bad + j->from, &err);
        return;
    }
    if (j->from == j->si.n) { /* nothing (left) to write: an empty batch */
        scores_job_end(j, 0, 0, &err);
        return;
    }
    j->w = (struct board_write_job){.board = j->board,
                                    .assumed = *set,
                                    .entries = j->be,
                                    .n = j->si.n - j->from,
                                    .flags =
                                        BOARD_WRITE_ATOMIC | (j->si.single ? BOARD_WRITE_RANKS : 0),
                                    .outcomes = j->si.out + j->from,
                                    .deadline_ms = j->rq->deadline_ms,
                                    .done = scores_written};
    int rc = board_write_submit(&j->rq->app->model, http_async_store_writes(j->async), &j->w);
    if (rc)
        scores_job_end(j, rc, 0, &err);
}

static void scores_settings_read(struct board_settings_job *sj, int rc)
{
    struct scores_job *j =
        (struct scores_job *)(void *)((char *)sj - offsetof(struct scores_job, sj));
    if (rc) {
        struct entry_error err = {0};
        scores_job_end(j, rc, 0, &err);
        return;
    }
    scores_send(j, &sj->settings);
}

/* Read the settings (HGETALL), then scores_send; ends the job when nothing could be sent. */
static void scores_read_settings(struct scores_job *j)
{
    j->sj = (struct board_settings_job){
        .board = j->board, .deadline_ms = j->rq->deadline_ms, .done = scores_settings_read};
    int rc = board_settings_submit(&j->rq->app->model, http_async_store_writes(j->async), &j->sj);
    if (rc) {
        struct entry_error err = {0};
        scores_job_end(j, rc, 0, &err);
    }
}

static void scores_written(struct board_write_job *w, int rc)
{
    struct scores_job *j = (struct scores_job *)w;
    struct entry_error err = {0};
    if (rc == -ERANGE) { /* entry from + handled would leave the range: that call wrote nothing */
        validate_range_error(&w->assumed, &err);
        scores_job_end(j, -1, j->from + w->handled, &err);
        return;
    }
    j->from += w->handled;
    if (rc == -EAGAIN && ++j->attempts < 3) { /* the settings changed: again, from `from` */
        scores_read_settings(j);
        return;
    }
    scores_job_end(j, rc, 0, &err);
}

void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async)
{
    const char *board;
    if (rq->streaming) {
        handle_scores_stream_end(rq, rp, async);
        return;
    }
    struct scores_job *j = calloc(1, sizeof(*j));
    if (!j) {
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    if (handlers_board_param(rq, rp, &board) || scores_parse(rq, rp, &j->si)) {
        free(j);
        handlers_answered(async); /* a 4xx */
        return;
    }
    j->rq = rq;
    j->rp = rp;
    j->async = async;
    j->board = board;
    if (!(j->be = calloc(j->si.n + 1, sizeof(*j->be)))) {
        scores_in_free(&j->si);
        free(j);
        http_reply_errno(rp, -ENOMEM);
        handlers_answered(async);
        return;
    }
    struct board_settings set;
    int exists = 0;
    if (board_settings_cached(&rq->app->model, board, &set, &exists) == 0)
        scores_send(j, &set);
    else
        scores_read_settings(j);
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
    int status;
    const char *code;
    char msg[VALIDATE_MSG_MAX];
    char *json = validate_record(doc, &status, &code, msg);
    cJSON_Delete(doc);
    if (!json) {
        http_reply_error(rp, status, code, "%s", msg);
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
