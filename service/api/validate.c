/* validate.c -- the pure validators of JSON request bodies; see validate.h. */
#include "validate.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "period.h"
#include "render.h"
#include "request.h"
#include "score_codec.h"

void entry_free(struct entry_in *e)
{
    free(e->id);
    free(e->record);
    e->id = e->record = NULL;
}

int entry_fail(struct entry_error *err, enum err_id id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->id = id;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* The literal of a number node (json_number_annotate); a node without one (not from a client's
 * text) is judged by the shortest text of its double. 0, or -EINVAL. */
int validate_number_literal(const cJSON *v, struct json_number *out)
{
    const char *lit = json_number_literal(v);
    if (lit)
        return json_number_parse(lit, strlen(lit), out);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -EINVAL;
    char text[40];
    render_number_text(v->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), out);
}

/* A whole-number JSON field in lo..hi, judged by its literal: any exact form of a whole number
 * (20, 20.0, 2e1, 200e-1) is that number; 20.00000000000000001 is not, although its double is.
 * 1 absent, 0 ok, -1 after a 400. */
static int int_field(const cJSON *obj, const char *name, int lo, int hi, int *out,
                     struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return 1;
    struct json_number n;
    int64_t w = 0;
    if (!cJSON_IsNumber(v) || validate_number_literal(v, &n) ||
        json_number_scale(&n, 0, INT_MAX, &w) || w < lo || w > hi) {
        entry_fail(err, ERR_INVALID_FIELD, "%s must be a whole number from %d to %d.", name, lo,
                   hi);
        return -1;
    }
    *out = (int)w;
    return 0;
}

/* A string field that must be one of `choices`; returns the index, -2 absent, -1 after a 400. */
static int enum_field(const cJSON *obj, const char *name, const char *const *choices, int n,
                      struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return -2;
    for (int i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, choices[i]) == 0)
            return i;
    entry_fail(err, ERR_INVALID_FIELD, "%s must be one of: %s%s%s%s%s.", name, choices[0],
               n > 1 ? ", " : "", n > 1 ? choices[1] : "", n > 2 ? ", " : "",
               n > 2 ? choices[2] : "");
    return -1;
}

/* enum_field for any number of choices; the message lists them all. */
static int enum_list_field(const cJSON *obj, const char *name, const char *const *choices, int n,
                           struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return -2;
    char list[200] = "";
    for (int i = 0; i < n; i++) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, choices[i]) == 0)
            return i;
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", choices[i]);
    }
    entry_fail(err, ERR_INVALID_FIELD, "%s must be one of: %s.", name, list);
    return -1;
}

#define DUP_SCAN_MAX 16 /* fields compared pairwise; more go through a hash table */

/* The first field of obj whose name an earlier field already had, or NULL. cJSON keeps both and
 * lookups take the first: {"score":1,"score":2} would be stored as 1 without a word. Linear in
 * the fields (an open-addressing table of their names, at most half full): comparing every pair
 * cost ~26 s of CPU for one 1 MB body of 100,000 distinct keys. */
const char *validate_duplicate_field(const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *f = obj->child; f; f = f->next)
        n++;
    size_t cap = (size_t)DUP_SCAN_MAX * 2;
    while (cap < 2 * n)
        cap *= 2;
    const char **slots = n > DUP_SCAN_MAX ? calloc(cap, sizeof(*slots)) : NULL;
    if (!slots) { /* a few fields (or out of memory): pairwise */
        for (const cJSON *f = obj->child; f; f = f->next)
            for (const cJSON *g = obj->child; g != f; g = g->next)
                if (strcmp(f->string, g->string) == 0)
                    return f->string;
        return NULL;
    }
    const char *dup = NULL;
    for (const cJSON *f = obj->child; f && !dup; f = f->next) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const unsigned char *p = (const unsigned char *)f->string; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
        size_t i = (size_t)h & (cap - 1);
        while (slots[i] && strcmp(slots[i], f->string) != 0)
            i = (i + 1) & (cap - 1);
        if (slots[i])
            dup = f->string;
        slots[i] = f->string;
    }
    free(slots);
    return dup;
}

/* Reject fields not in `known` (typos would otherwise be silently ignored) and repeated ones. */
static int only_fields(const cJSON *obj, const char *const *known, int n, struct entry_error *err,
                       const char *where)
{
    const char *dup = validate_duplicate_field(obj);
    if (dup) {
        entry_fail(err, ERR_DUPLICATE_FIELD, "%s has the field '%.100s' more than once.", where,
                   dup);
        return -1;
    }
    for (const cJSON *f = obj->child; f; f = f->next) {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(f->string, known[i]) == 0;
        if (!ok) {
            entry_fail(err, ERR_UNKNOWN_FIELD, "%s has an unknown field '%.100s'.", where,
                       f->string);
            return -1;
        }
    }
    return 0;
}

/* The settings' "subscores": an array of 0 to SCORE_SUB_MAX directions ("desc", "asc"); a
 * board with any is `wide` (an explicit "packed" with them is refused). 0, or -1 after a 400. */
static int subscores_field(const cJSON *doc, struct board_settings_patch *p,
                           struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "subscores");
    if (!v)
        return 0;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    int i = 0;
    for (const cJSON *d = n >= 0 && n <= SCORE_SUB_MAX ? v->child : NULL; d; d = d->next, i++) {
        if (!cJSON_IsString(d) ||
            (strcmp(d->valuestring, "desc") != 0 && strcmp(d->valuestring, "asc") != 0))
            break;
        p->value.layout.sub_asc[i] = strcmp(d->valuestring, "asc") == 0;
    }
    if (n < 0 || n > SCORE_SUB_MAX || i != n)
        return entry_fail(err, ERR_INVALID_FIELD,
                          "subscores must be an array of 0 to %d directions, each \"desc\" "
                          "(higher ranks first) or \"asc\" (lower ranks first).",
                          SCORE_SUB_MAX);
    if (n > 0 && p->has_score_layout && !p->value.layout.wide)
        return entry_fail(err, ERR_INVALID_FIELD,
                          "subscores need score_layout \"wide\" (a board with sub-scores is "
                          "wide); leave score_layout out or send \"wide\".");
    p->has_subscores = 1;
    p->value.layout.nsub = n;
    return 0;
}

int validate_settings(const cJSON *doc, const struct board_settings *defaults,
                      struct board_settings_patch *p, struct entry_error *err)
{
    static const char *const known[] = {
        "order",        "tiebreak",         "page_size", "page_ttl_ms", "score_decimals",
        "period",       "timezone",         "retain",    "max_members", "score_layout",
        "score_format", "track_updated_at", "subscores"};
    static const char *const widths[] = {"packed", "wide"};
    static const char *const periods[] = {"none", "hourly", "daily", "weekly", "monthly"};
    static const char *const orders[] = {"desc", "asc"};
    static const char *const ties[] = {"first", "last", "id"};
    if (!cJSON_IsObject(doc)) {
        entry_fail(err, ERR_INVALID_BODY, "The body must be a JSON object of settings.");
        return -1;
    }
    if (only_fields(doc, known, (int)(sizeof(known) / sizeof(known[0])), err,
                    "The settings object"))
        return -1;
    memset(p, 0, sizeof(*p));
    p->value = *defaults;
    int o = enum_field(doc, "order", orders, 2, err);
    int t = o == -1 ? -1 : enum_field(doc, "tiebreak", ties, 3, err);
    if (o == -1 || t == -1)
        return -1;
    p->has_order = o >= 0;
    p->value.layout.order = o >= 0 ? (enum score_order)o : SCORE_ORDER_DESC;
    p->has_tiebreak = t >= 0;
    p->value.layout.tiebreak = t >= 0 ? (enum score_tiebreak)t : SCORE_TIEBREAK_FIRST;
    int wl = enum_field(doc, "score_layout", widths, 2, err);
    if (wl == -1)
        return -1;
    p->has_score_layout = wl >= 0;
    p->value.layout.wide = wl == 1;
    if (subscores_field(doc, p, err))
        return -1;
    int r1 = int_field(doc, "page_size", 1, BOARD_PAGE_SIZE_MAX, &p->value.page_size, err);
    int r2 = r1 < 0 ? -1
                    : int_field(doc, "page_ttl_ms", 0, BOARD_PAGE_TTL_MS_MAX, &p->value.page_ttl_ms,
                                err);
    int r3 = r2 < 0 ? -1
                    : int_field(doc, "score_decimals", 0, SCORE_DECIMALS_MAX,
                                &p->value.layout.decimals, err);
    if (r1 < 0 || r2 < 0 || r3 < 0)
        return -1;
    p->has_page_size = r1 == 0;
    p->has_page_ttl = r2 == 0;
    p->has_decimals = r3 == 0;
    int pk = enum_list_field(doc, "period", periods, 5, err);
    if (pk == -1)
        return -1;
    p->has_period = pk >= 0;
    p->value.period = pk >= 0 ? (enum period_kind)pk : PERIOD_NONE;
    const cJSON *tz = cJSON_GetObjectItemCaseSensitive(doc, "timezone");
    if (tz && (!cJSON_IsString(tz) || period_tz_parse(tz->valuestring, &p->value.tz))) {
        entry_fail(err, ERR_INVALID_FIELD,
                   "timezone must be \"UTC\", an offset \"+HH:MM\" / \"-HH:MM\" within "
                   "14 hours, or an IANA time zone name such as \"Europe/Paris\".");
        return -1;
    }
    p->has_tz = tz != NULL;
    int r4 = int_field(doc, "retain", 0, PERIOD_RETAIN_MAX, &p->value.retain, err);
    if (r4 < 0)
        return -1;
    p->has_retain = r4 == 0;
    int maxm = 0;
    int r5 = int_field(doc, "max_members", 0, BOARD_MAX_MEMBERS_MAX, &maxm, err);
    if (r5 < 0)
        return -1;
    p->has_max_members = r5 == 0;
    p->value.max_members = maxm;
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(doc, "score_format");
    if (sf &&
        (!cJSON_IsString(sf) || score_format_parse(sf->valuestring, &p->value.score_format))) {
        entry_fail(err, ERR_INVALID_FIELD, "score_format must be one of: %s, %s, %s.",
                   score_format_name(SCORE_FORMAT_INTEGER), score_format_name(SCORE_FORMAT_DECIMAL),
                   score_format_name(SCORE_FORMAT_DURATION_MS));
        return -1;
    }
    p->has_score_format = sf != NULL;
    const cJSON *track = cJSON_GetObjectItemCaseSensitive(doc, "track_updated_at");
    if (track && !cJSON_IsBool(track)) {
        entry_fail(err, ERR_INVALID_FIELD, "track_updated_at must be true or false.");
        return -1;
    }
    p->has_track_updated_at = track != NULL;
    p->value.track_updated_at = cJSON_IsTrue(track);
    return 0;
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
    if (validate_number_literal(f, &lit) || !isfinite(f->valuedouble))
        return 0;
    char text[40];
    render_number_text(f->valuedouble, text, sizeof(text));
    return json_number_parse(text, strlen(text), &back) == 0 && json_number_equal(&lit, &back);
}

/* Validate a record (flat object of strings, numbers, booleans, nulls; valid UTF-8) and print it.
 * Returns the new JSON (free()) or NULL with *err filled. */
char *validate_record(const cJSON *rec, struct entry_error *err)
{
    if (!cJSON_IsObject(rec)) {
        entry_fail(err, ERR_INVALID_RECORD, "record must be a JSON object.");
        return NULL;
    }
    for (const cJSON *f = rec->child; f; f = f->next) {
        int flat = cJSON_IsString(f) || cJSON_IsNumber(f) || cJSON_IsBool(f) || cJSON_IsNull(f);
        int utf8 =
            request_utf8_valid(f->string, strlen(f->string)) &&
            (!cJSON_IsString(f) || request_utf8_valid(f->valuestring, strlen(f->valuestring)));
        int exact = !cJSON_IsNumber(f) || number_exact(f);
        if (!flat || !utf8 || !exact) {
            entry_fail(err, ERR_INVALID_RECORD,
                       "record field '%.100s' must be a string, a number a double holds exactly "
                       "(integers up to 2^53; send larger ones as strings), a boolean or null "
                       "(records are flat), in valid UTF-8.",
                       f->string);
            return NULL;
        }
    }
    const char *dup = validate_duplicate_field(rec);
    if (dup) {
        entry_fail(err, ERR_DUPLICATE_FIELD, "record has the field '%.100s' more than once.", dup);
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
        entry_fail(err, ERR_RECORD_TOO_LARGE, "record must be at most %d bytes of JSON.",
                   BOARD_RECORD_BYTES_MAX);
        return NULL;
    }
    if (!json)
        entry_fail(err, ERR_INTERNAL, "Out of memory.");
    return json;
}

/* An incr's bound: absent (0), a number with its literal in *out (1), or -1 after err. */
static int bound_field(const cJSON *e, const char *name, int incr, struct json_number *out,
                       struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, name);
    if (!v)
        return 0;
    if (!incr)
        return entry_fail(err, ERR_INVALID_FIELD,
                          "%s applies to op incr only (a set or best stores the score as sent).",
                          name);
    if (!cJSON_IsNumber(v) || validate_number_literal(v, out))
        return entry_fail(err, ERR_INVALID_SCORE, "%s must be a JSON number.", name);
    return 1;
}

int validate_lookup(const cJSON *doc, size_t max, const char ***ids, size_t **lens, size_t *n,
                    struct entry_error *err)
{
    static const char *const known[] = {"ids"};
    if (!cJSON_IsObject(doc))
        return entry_fail(err, ERR_INVALID_BODY, "The body must be a JSON object {\"ids\":[...]}.");
    if (only_fields(doc, known, 1, err, "the body"))
        return -1;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "ids");
    size_t count = cJSON_IsArray(list) ? (size_t)cJSON_GetArraySize(list) : 0;
    if (count == 0 || count > max)
        return entry_fail(err, ERR_INVALID_IDS, "ids must be an array of 1 to %zu ids.", max);
    const char **v = calloc(count, sizeof(*v));
    size_t *l = calloc(count, sizeof(*l));
    if (!v || !l) {
        free(v);
        free(l);
        return entry_fail(err, ERR_INTERNAL, "The server ran out of memory.");
    }
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e) || !request_id_valid(e->valuestring, strlen(e->valuestring))) {
            free(v);
            free(l);
            return entry_fail(err, ERR_INVALID_ID,
                              "ids[%zu] must be a string of 1 to %d bytes of valid UTF-8 without "
                              "control characters.",
                              i, BOARD_ID_LEN_MAX);
        }
        v[i] = e->valuestring;
        l[i] = strlen(e->valuestring);
    }
    *ids = v;
    *lens = l;
    *n = count;
    return 0;
}

/* An entry's "subscores": 1 to SCORE_SUB_MAX integers, each judged by its literal: plain digits
 * with an optional '-' (no fraction, no exponent: 1e3 and 3.0 are refused, as is 2^53), within
 * +-SCORE_SUB_ABS_MAX. 0 (absent: out->nsub 0), or -1 after err. */
static int entry_subscores(const cJSON *e, struct entry_in *out, struct entry_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "subscores");
    if (!v)
        return 0;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n < 1 || n > SCORE_SUB_MAX)
        return entry_fail(err, ERR_INVALID_FIELD,
                          "subscores must be an array of 1 to %d integers (one per sub-score of "
                          "the board).",
                          SCORE_SUB_MAX);
    int i = 0;
    for (const cJSON *d = v->child; d; d = d->next, i++) {
        struct json_number lit;
        int64_t w;
        const char *text = json_number_literal(d);
        if (!cJSON_IsNumber(d) || validate_number_literal(d, &lit) ||
            (text && strpbrk(text, ".eE")) || json_number_scale(&lit, 0, SCORE_SUB_ABS_MAX, &w))
            return entry_fail(
                err, ERR_INVALID_FIELD,
                "subscores[%d] must be an integer written in plain digits from "
                "-9007199254740991 to 9007199254740991 (no fraction or exponent)%s%s.",
                i, cJSON_IsNumber(d) ? "; got " : "", cJSON_IsNumber(d) ? lit.text : "");
        out->sub[i] = w;
    }
    out->nsub = n;
    return 0;
}

int validate_entry(const cJSON *e, struct entry_in *out, struct entry_error *err)
{
    static const char *const known[] = {"id",    "score",   "op",       "record",
                                        "floor", "ceiling", "subscores"};
    static const char *const ops[] = {"set", "best", "incr"};
    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(e))
        return entry_fail(err, ERR_INVALID_ENTRY, "an entry must be a JSON object.");
    const char *dup = validate_duplicate_field(e);
    if (dup)
        return entry_fail(err, ERR_DUPLICATE_FIELD, "the field '%.100s' is given more than once.",
                          dup);
    for (const cJSON *f = e->child; f; f = f->next) {
        int ok = 0;
        for (int i = 0; i < 7 && !ok; i++)
            ok = strcmp(f->string, known[i]) == 0;
        if (!ok)
            return entry_fail(err, ERR_UNKNOWN_FIELD,
                              "unknown field '%.100s'; an entry has id, score, op, record, floor, "
                              "ceiling and subscores.",
                              f->string);
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (!cJSON_IsString(id) || !request_id_valid(id->valuestring, strlen(id->valuestring)))
        return entry_fail(err, ERR_INVALID_ID,
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
            return entry_fail(err, ERR_INVALID_OP, "op must be one of: set, best, incr.");
    }
    int incr = opi == BOARD_OP_INCR;
    int f = bound_field(e, "floor", incr, &out->floor, err);
    int c = f < 0 ? -1 : bound_field(e, "ceiling", incr, &out->ceiling, err);
    if (f < 0 || c < 0)
        return -1;
    out->has_floor = f;
    out->has_ceiling = c;
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(e, "score");
    if (!cJSON_IsNumber(score) || validate_number_literal(score, &out->score))
        return entry_fail(err, ERR_INVALID_SCORE, "score must be a JSON number.");
    if (entry_subscores(e, out, err))
        return -1;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(e, "record");
    if (rec) {
        out->record = validate_record(rec, err);
        if (!out->record)
            return -1;
    }
    out->id = strdup(id->valuestring);
    if (!out->id) {
        entry_free(out);
        return entry_fail(err, ERR_INTERNAL, "Out of memory.");
    }
    out->op = (enum board_op)opi;
    return 0;
}

int validate_check_score(const struct board_settings *s, const struct json_number *score,
                         int64_t *key)
{
    int64_t scaled;
    int rc = json_number_score(&s->layout, score, &scaled);
    if (rc == 0)
        *key = score_codec_key(&s->layout, scaled);
    return rc;
}

/* The board's exact range as text. */
static void range_text(const struct board_settings *s, char lo[40], char hi[40])
{
    double min, max;
    score_codec_range(&s->layout, &min, &max);
    render_number_text(min, lo, 40);
    render_number_text(max, hi, 40);
}

int validate_value_error(const struct board_settings *s, const char *what,
                         const struct json_number *v, int rc, struct entry_error *err)
{
    char lo[40], hi[40], decimals[16], msg[VALIDATE_MSG_MAX];
    range_text(s, lo, hi);
    snprintf(decimals, sizeof(decimals), "%d", s->layout.decimals);
    struct http_errno_args a = {
        .field = what, .score = v->text, .min = lo, .max = hi, .decimals = decimals};
    const struct http_errno_row *e = http_errno_find(HTTP_ERRNO_SCORE, rc);
    http_errno_format(e, rc, &a, msg, sizeof(msg));
    return entry_fail(err, e->id, "%s", msg);
}

int validate_score_error(const struct board_settings *s, const struct json_number *score, int rc,
                         struct entry_error *err)
{
    return validate_value_error(s, "score", score, rc, err);
}

/* An incr's floor and ceiling under s as the entry's key bounds (a smaller key is a better
 * score: on a desc board the floor is the largest key). 0, or -1 with err. */
static int prepare_bounds(const struct board_settings *s, const struct entry_in *in,
                          struct board_entry *out, struct entry_error *err)
{
    int64_t fk = 0, ck = 0;
    int rc = in->has_floor ? validate_check_score(s, &in->floor, &fk) : 0;
    if (rc)
        return validate_value_error(s, "floor", &in->floor, rc, err);
    rc = in->has_ceiling ? validate_check_score(s, &in->ceiling, &ck) : 0;
    if (rc)
        return validate_value_error(s, "ceiling", &in->ceiling, rc, err);
    int desc = s->layout.order == SCORE_ORDER_DESC;
    if (in->has_floor && in->has_ceiling && (desc ? fk < ck : fk > ck))
        return entry_fail(err, ERR_INVALID_FIELD, "floor %s is above ceiling %s.", in->floor.text,
                          in->ceiling.text);
    if (in->has_floor) {
        *(desc ? &out->has_hi : &out->has_lo) = 1;
        *(desc ? &out->key_hi : &out->key_lo) = fk;
    }
    if (in->has_ceiling) {
        *(desc ? &out->has_lo : &out->has_hi) = 1;
        *(desc ? &out->key_lo : &out->key_hi) = ck;
    }
    return 0;
}

/* An entry whose sub-scores do not match the board's columns. -1 with err. */
static int subscores_count_error(const struct board_settings *s, const struct entry_in *in,
                                 struct entry_error *err)
{
    if (s->layout.nsub == 0)
        return entry_fail(err, ERR_INVALID_FIELD,
                          "this board has no sub-scores: leave subscores out (a board takes them "
                          "after PUT with \"subscores\": [\"desc\", ...]).");
    return entry_fail(err, ERR_INVALID_FIELD,
                      "this board ranks by %d sub-score%s after the score: subscores must be an "
                      "array of %d integers (got %d).",
                      s->layout.nsub, s->layout.nsub > 1 ? "s" : "", s->layout.nsub, in->nsub);
}

int validate_prepare(const struct board_settings *s, const struct entry_in *in, size_t n,
                     struct board_entry *out, size_t *bad, struct entry_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int64_t key;
        int rc = validate_check_score(s, &in[i].score, &key);
        if (rc) {
            *bad = i;
            return validate_score_error(s, &in[i].score, rc, err);
        }
        assert(in[i].id); /* validate_entry always sets it */
        if (in[i].nsub != s->layout.nsub) {
            *bad = i;
            return subscores_count_error(s, &in[i], err);
        }
        out[i] = (struct board_entry){.id = in[i].id,
                                      .id_len = strlen(in[i].id),
                                      .op = in[i].op,
                                      .key = key,
                                      .record = in[i].record,
                                      .record_len = in[i].record ? strlen(in[i].record) : 0,
                                      .nsub = in[i].nsub};
        memcpy(out[i].sub, in[i].sub, sizeof(out[i].sub));
        if (prepare_bounds(s, &in[i], &out[i], err)) {
            *bad = i;
            return -1;
        }
    }
    return 0;
}

void validate_range_error(const struct board_settings *s, struct entry_error *err)
{
    char lo[40], hi[40];
    range_text(s, lo, hi);
    if (s->layout.nsub > 0) {
        entry_fail(err, ERR_SCORE_OUT_OF_RANGE,
                   "the resulting score or subscores would be outside this board's exact range: "
                   "a score from %s to %s, each sub-score from -%" PRId64 " to %" PRId64
                   "; nothing was written.",
                   lo, hi, SCORE_SUB_ABS_MAX, SCORE_SUB_ABS_MAX);
        return;
    }
    entry_fail(err, ERR_SCORE_OUT_OF_RANGE,
               "the resulting score would be outside this board's exact range: from %s to %s; "
               "nothing was written.",
               lo, hi);
}

cJSON *validate_rejected(const char *key, long at, const struct entry_error *err)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, key, (double)at);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddStringToObject(e, "code", err_code(err->id));
    cJSON_AddStringToObject(e, "message", err->msg);
    return r;
}
