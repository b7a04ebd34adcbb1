/* entry.c -- score entries and records of writes; see entry.h. */
#include "entry.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_check.h"
#include "render.h"
#include "request.h"
#include "score_codec.h"

void entry_free(struct entry_in *e)
{
    free(e->id);
    free(e->record);
    e->id = e->record = NULL;
}

int entry_fail(struct entry_error *err, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->status = status;
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/*
 * 1 when a record number reads back as the value the client wrote. A record keeps the double
 * and prints it with render_number_text, so the literal's exact decimal value (not its double)
 * must equal the value of that text: 0.1, 1.50, 2.5e1, 1.5e300, 0.30000000000000004 and
 * 9007199254740992 do; 0.10000000000000001, 1e-400 (0), 5e-324, 9007199254740990.5 and
 * 9007199254740993 (neighbouring integers collapse from 2^53 on) do not.
 */
static int number_exact(const cJSON *f)
{
    struct json_number lit, back;
    if (json_check_number(f, &lit) || !isfinite(f->valuedouble))
        return 0;
    char text[40];
    render_number_text(f->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), &back) == 0 && json_number_equal(&lit, &back);
}

/* Validate a record (flat object of strings, numbers, booleans, nulls; valid UTF-8) and print it.
 * Returns the new JSON (free()) or NULL with status/code/message filled. */
char *entry_record_json(const cJSON *rec, int *status, const char **code, char *msg)
{
    *status = 400;
    *code = "invalid_record";
    if (!cJSON_IsObject(rec)) {
        snprintf(msg, ENTRY_MSG_MAX, "record must be a JSON object.");
        return NULL;
    }
    for (const cJSON *f = rec->child; f; f = f->next) {
        int flat = cJSON_IsString(f) || cJSON_IsNumber(f) || cJSON_IsBool(f) || cJSON_IsNull(f);
        int utf8 =
            request_utf8_valid(f->string, strlen(f->string)) &&
            (!cJSON_IsString(f) || request_utf8_valid(f->valuestring, strlen(f->valuestring)));
        int exact = !cJSON_IsNumber(f) || number_exact(f);
        if (!flat || !utf8 || !exact) {
            snprintf(msg, ENTRY_MSG_MAX,
                     "record field '%.100s' must be a string, a number a double holds exactly "
                     "(integers up to 2^53; send larger ones as strings), a boolean or null "
                     "(records are flat), in valid UTF-8.",
                     f->string);
            return NULL;
        }
    }
    const char *dup = json_check_duplicate(rec);
    if (dup) {
        *code = "duplicate_field";
        snprintf(msg, ENTRY_MSG_MAX, "record has the field '%.100s' more than once.", dup);
        return NULL;
    }
    /* Print numbers exactly (cJSON alone may round a 16-17 digit value). */
    cJSON *copy = cJSON_Duplicate(rec, 1);
    for (cJSON *f = copy ? copy->child : NULL; f; f = f->next)
        if (cJSON_IsNumber(f)) {
            char text[40];
            render_number_text(f->valuedouble, text, sizeof(text));
            char *raw = strdup(text);
            if (raw) {
                free(f->valuestring); /* the literal json_number_annotate gave it */
                f->type = cJSON_Raw;
                f->valuestring = raw;
            }
        }
    char *json = copy ? cJSON_PrintUnformatted(copy) : NULL;
    cJSON_Delete(copy);
    if (json && strlen(json) > BOARD_RECORD_BYTES_MAX) {
        free(json);
        *status = 413;
        *code = "record_too_large";
        snprintf(msg, ENTRY_MSG_MAX, "record must be at most %d bytes of JSON.",
                 BOARD_RECORD_BYTES_MAX);
        return NULL;
    }
    if (!json) {
        *status = 500;
        *code = "internal";
        snprintf(msg, ENTRY_MSG_MAX, "Out of memory.");
    }
    return json;
}

int entry_parse(const cJSON *e, struct entry_in *out, struct entry_error *err)
{
    static const char *const known[] = {"id", "score", "op", "record"};
    static const char *const ops[] = {"set", "best", "incr"};
    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(e))
        return entry_fail(err, 400, "invalid_entry", "an entry must be a JSON object.");
    const char *dup = json_check_duplicate(e);
    if (dup)
        return entry_fail(err, 400, "duplicate_field",
                          "the field '%.100s' is given more than once.", dup);
    for (const cJSON *f = e->child; f; f = f->next) {
        int ok = 0;
        for (int i = 0; i < 4 && !ok; i++)
            ok = strcmp(f->string, known[i]) == 0;
        if (!ok)
            return entry_fail(err, 400, "unknown_field",
                              "unknown field '%.100s'; an entry has id, score, op and record.",
                              f->string);
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (!cJSON_IsString(id) || !request_id_valid(id->valuestring, strlen(id->valuestring)))
        return entry_fail(err, 400, "invalid_id",
                          "id must be a string of 1 to %d bytes of valid UTF-8 without control "
                          "characters.",
                          BOARD_ID_LEN_MAX);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "op");
    int opi = 0;
    if (op) {
        opi = -1;
        for (int i = 0; cJSON_IsString(op) && i < 3; i++)
            if (strcmp(op->valuestring, ops[i]) == 0)
                opi = i;
        if (opi < 0)
            return entry_fail(err, 400, "invalid_op", "op must be one of: set, best, incr.");
    }
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(e, "score");
    if (!cJSON_IsNumber(score) || json_check_number(score, &out->score))
        return entry_fail(err, 422, "invalid_score", "score must be a JSON number.");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(e, "record");
    if (rec) {
        out->record = entry_record_json(rec, &err->status, &err->code, err->msg);
        if (!out->record)
            return -1;
    }
    out->id = strdup(id->valuestring);
    if (!out->id) {
        entry_free(out);
        return entry_fail(err, 500, "internal", "Out of memory.");
    }
    out->op = (enum board_op)opi;
    return 0;
}

/* The 422 of a score check_score refused; the message quotes the literal as sent. */
int entry_score_error(const struct board_settings *s, const struct json_number *score, int rc,
                      struct entry_error *err)
{
    char lo[40], hi[40];
    const char *v = score->text;
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, sizeof(lo));
    render_number_text(max, hi, sizeof(hi));
    if (rc == -EDOM)
        return entry_fail(err, 422, "invalid_score",
                          "score %s has more fractional digits than this board keeps "
                          "(score_decimals=%d).",
                          v, s->layout.decimals);
    if (rc == -ERANGE)
        return entry_fail(err, 422, "score_out_of_range",
                          "score %s is outside this board's exact range: from %s to %s.", v, lo,
                          hi);
    return entry_fail(err, 422, "invalid_score", "score must be a JSON number.");
}

/* Turn entries into board entries under settings s; -1 with err and *bad on the first failure. */
int entry_prepare(const struct board_settings *s, const struct entry_in *in, size_t n,
                  struct board_entry *out, size_t *bad, struct entry_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int64_t key;
        int rc = json_check_score(s, &in[i].score, &key);
        if (rc) {
            *bad = i;
            return entry_score_error(s, &in[i].score, rc, err);
        }
        assert(in[i].id); /* parse_entry always sets it */
        out[i] = (struct board_entry){in[i].id,     strlen(in[i].id),
                                      in[i].op,     key,
                                      in[i].record, in[i].record ? strlen(in[i].record) : 0};
    }
    return 0;
}

void entry_range_error(const struct board_settings *s, struct entry_error *err)
{
    char lo[40], hi[40];
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, sizeof(lo));
    render_number_text(max, hi, sizeof(hi));
    entry_fail(err, 422, "score_out_of_range",
               "the resulting score would be outside this board's exact range: from %s to %s; "
               "nothing was written.",
               lo, hi);
}

cJSON *entry_rejected(const char *key, long at, const struct entry_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, key, (double)at);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddStringToObject(e, "code", err->code);
    cJSON_AddStringToObject(e, "message", err->msg);
    return r;
}
