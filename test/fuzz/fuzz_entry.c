/*
 * fuzz_entry.c -- a score entry body (one JSON object; NDJSON lines and batch entries are the
 * same) through parse_body's steps and validate_entry, then the score checked against every
 * layout as validate_check_score does (json_number_score).
 *
 * Properties: a body validate_entry_fast takes is one the tree path accepts, as the same entry
 * (id, op, score literal, record text); an accepted entry has a valid id and an op; its record is a JSON object of at most
 * BOARD_RECORD_BYTES_MAX bytes that validates again to the same text (the printed form is a
 * fixed point); a refusal is a 4xx (or 500) with a code and a message; an accepted score is
 * inside the layout's range and the key decodes back to it (score_codec).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "fuzz.h"
#include "json_doc.h"
#include "score_codec.h"
#include "validate.h"

static void check_record(const char *json)
{
    size_t len = strlen(json);
    FUZZ_CHECK(len <= BOARD_RECORD_BYTES_MAX, "record of %zu bytes", len);
    cJSON *again = fuzz_json_doc((const uint8_t *)json, len);
    FUZZ_CHECK(cJSON_IsObject(again), "record does not parse back: %s", json);
    struct entry_error rerr;
    char *twice = validate_record(again, &rerr);
    FUZZ_CHECK(twice && strcmp(twice, json) == 0, "record not a fixed point: %s -> %s (%s)", json,
               twice ? twice : "refused", twice ? "" : rerr.msg);
    free(twice);
    cJSON_Delete(again);
}

static void check_score(const struct json_number *score)
{
    static const struct score_layout layouts[] = {
        {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}},
        {SCORE_ORDER_ASC, SCORE_TIEBREAK_LAST, 2, 0, 0, {0}},
        {SCORE_ORDER_DESC, SCORE_TIEBREAK_ID, 0, 0, 0, {0}},
        {SCORE_ORDER_ASC, SCORE_TIEBREAK_ID, 9, 0, 0, {0}},
        {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 9, 0, 0, {0}},
        {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 1, 0, {0}},
        {SCORE_ORDER_ASC, SCORE_TIEBREAK_LAST, 2, 1, 0, {0}},
    };
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        const struct score_layout *l = &layouts[i];
        int64_t scaled = 0;
        int rc = json_number_score(l, score, &scaled);
        FUZZ_CHECK(rc == 0 || rc == -EDOM || rc == -ERANGE, "score rc %d", rc);
        if (rc)
            continue;
        int64_t max = score_codec_scaled_max(l);
        FUZZ_CHECK(scaled >= -max && scaled <= max, "scaled %lld", (long long)scaled);
        int64_t key = score_codec_key(l, scaled);
        FUZZ_CHECK(score_codec_key_to_scaled(l, key) == scaled, "key round trip");
        double stored = 0;
        FUZZ_CHECK(score_codec_pack(l, key, 0, &stored) == 0, "pack");
        double back = 0;
        FUZZ_CHECK(score_codec_decode(l, stored, &back) == 0 &&
                       back == score_codec_unscale(l, scaled),
                   "decode");
    }
}

/* The fast scan's entry (taken) against the tree path's: rc and e are validate_entry's. */
static void check_fast(const struct entry_in *fast, const cJSON *doc, int rc,
                       const struct entry_in *e)
{
    FUZZ_CHECK(doc && rc == 0 && !cJSON_GetObjectItemCaseSensitive(doc, "entries"),
               "the fast scan took a body the tree path refuses");
    FUZZ_CHECK(strcmp(fast->id, e->id) == 0 && fast->op == e->op, "id or op");
    FUZZ_CHECK(fast->score.digits == e->score.digits && fast->score.exp == e->score.exp &&
                   fast->score.neg == e->score.neg && fast->score.wide == e->score.wide &&
                   strcmp(fast->score.text, e->score.text) == 0,
               "score");
    FUZZ_CHECK(!e->has_floor && !e->has_ceiling && !e->nsub, "bounds or sub-scores");
    FUZZ_CHECK((!fast->record && !e->record) ||
                   (fast->record && e->record && strcmp(fast->record, e->record) == 0),
               "record %s vs %s", fast->record ? fast->record : "-", e->record ? e->record : "-");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    struct entry_in fast;
    char *body = malloc(size + 1); /* as a request body: NUL after it */
    if (!body)
        return 0;
    memcpy(body, data, size);
    body[size] = '\0';
    int taken = validate_entry_fast(body, size, &fast);
    free(body);
    cJSON *doc = fuzz_json_doc(data, size);
    if (!doc) {
        FUZZ_CHECK(!taken, "the fast scan took a body the parse refuses");
        return 0;
    }
    struct entry_in e;
    struct entry_error err = {0};
    int rc = validate_entry(doc, &e, &err);
    if (taken) {
        check_fast(&fast, doc, rc, &e);
        entry_free(&fast);
    }
    if (rc == 0) {
        FUZZ_CHECK(e.id && request_id_valid(e.id, strlen(e.id)), "id");
        FUZZ_CHECK(e.op == BOARD_OP_SET || e.op == BOARD_OP_BEST || e.op == BOARD_OP_INCR, "op");
        if (e.record)
            check_record(e.record);
        check_score(&e.score);
        entry_free(&e);
    } else {
        FUZZ_CHECK(err_status(err.id) >= 400 && err_status(err.id) <= 500 && err_code(err.id) &&
                       err_code(err.id)[0] && err.msg[0],
                   "refusal %d", err_status(err.id));
    }
    /* the record validator alone, on any object */
    struct entry_error rerr;
    char *rec = validate_record(doc, &rerr);
    if (rec)
        check_record(rec);
    else
        FUZZ_CHECK(err_status(rerr.id) == 400 || err_status(rerr.id) == 413 ||
                       err_status(rerr.id) == 500,
                   "record status %d", err_status(rerr.id));
    free(rec);
    cJSON_Delete(doc);
    return 0;
}
