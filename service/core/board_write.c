/*
 * board_write.c -- writes: write.lua's arguments and reply, compaction of full tie groups, records
 * and the registry after the script (cluster), the settings read on an event loop. The contract is
 * in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- writes */

/* A stored value as Redis prints it: plain digits for the integers it holds (every stored value
 * is one, below 2^53), read without strtod's big-number path; anything else through strtod. */
double board_stored_value(const char *s)
{
    const char *p = s + (*s == '-');
    int64_t v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 16; p++, digits++)
        v = v * 10 + (*p - '0');
    if (*p || !digits)
        return strtod(s, NULL);
    return *s == '-' ? -(double)v : (double)v;
}

double board_decode_stored(const struct score_layout *l, const char *s)
{
    double score = 0;
    if (s && *s && score_codec_decode(l, board_stored_value(s), &score) < 0)
        score = 0;
    return score;
}

void board_write_args_free(struct write_args *w)
{
    free(w->argv);
    free(w->len);
    free(w->num);
    free(w->ops);
    free(w->t);
    free(w->sv);
}

void board_write_arg(struct write_args *w, size_t *at, const char *s, size_t len)
{
    w->argv[*at] = s;
    w->len[*at] = len;
    (*at)++;
}

static void args_str(struct write_args *w, size_t *at, const char *s)
{
    board_write_arg(w, at, s, strlen(s));
}

/* v in decimal into out[0..cap) (no snprintf: a dozen of these a write); returns out. */
static char *i64_text(char *out, size_t cap, int64_t v)
{
    struct strb b;
    strb_init(&b, out, cap);
    strb_i64(&b, v);
    return out;
}

/* An entry's op argument: the op, or with sub-scores "op:n1,n2" (prelude_subscores.lua). */
static const char *write_op_text(const struct board_entry *e, const char *op,
                                 char out[WRITE_OP_TEXT_MAX])
{
    if (e->nsub <= 0)
        return op;
    struct strb b;
    strb_init(&b, out, WRITE_OP_TEXT_MAX);
    strb_str(&b, op);
    for (int c = 0; c < e->nsub && c < SCORE_SUB_MAX; c++) {
        strb_str(&b, c ? "," : ":");
        strb_i64(&b, e->sub[c]);
    }
    return out;
}

/* The argv of write.lua for entries[at..at+n) of every target of j. */
int board_write_args_build(struct write_args *w, struct board_write_job *j, size_t at, size_t n)
{
    static const char *const ops[] = {"set", "best", "incr"};
    size_t nt = j->ntargets;
    int64_t cap = atomic_load(&board_tie_cap); /* the one the script is told */
    struct write_chunk *sp = board_write_chunk_plan(j, at, n, cap);
    size_t total = nt * (WRITE_TARGET_KEYS + WRITE_TARGET_HDR) + 2 + WRITE_GLOBAL_ARGS +
                   (sp ? board_write_chunk_count(sp, n) : n * (3 + nt));
    /* not zeroed: every slot is written below (argv and len: exactly `total`) */
    w->argv = malloc(total * sizeof(*w->argv));
    w->len = malloc(total * sizeof(*w->len));
    w->num = malloc((n * nt + 1) * sizeof(*w->num));
    w->t = malloc(nt * sizeof(*w->t));
    w->ops =
        malloc((n ? n : 1) * sizeof(*w->ops)); /* only the entries with sub-scores use theirs */
    if (!w->argv || !w->len || !w->num || !w->t || !w->ops) {
        free(sp);
        return -ENOMEM;
    }
    struct board_model *m = j->m;
    size_t k = 0;
    for (size_t b = 0; b < nt; b++) {
        const struct board_write_target *t = &j->targets[b];
        struct write_target_args *ta = &w->t[b];
        struct board_keys keys;
        board_make_keys(m, t->board, &keys);
        util_copy(ta->meta, sizeof(ta->meta), keys.meta);
        util_copy(ta->index, sizeof(ta->index), keys.index);
        struct strb sb;
        /* an upload's chunk names its sequence key there instead (never with a digest) */
        board_key_make(&sb, ta->idem, sizeof(ta->idem), m->prefix, t->board,
                       j->upload ? BOARD_KEY_UPLOAD : BOARD_KEY_IDEM);
        if (j->upload)
            strb_str(&sb, j->upload);
        size_t idem_len = strlen(ta->idem);
        if (j->idem_key && idem_len + j->idem_len < sizeof(ta->idem)) {
            memcpy(ta->idem + idem_len, j->idem_key, j->idem_len);
            idem_len += j->idem_len;
        }
        /* on a cluster a key that does not exist makes a migrating slot refuse the whole call
         * (ASK, then TRYAGAIN): the period index and the idempotency record are named only when
         * the call uses them, else the settings hash stands in (never touched then) */
        int cl = board_clustered(m);
        args_str(w, &k, t->where.z);
        args_str(w, &k, ta->meta);
        args_str(w, &k, cl && t->assumed.period == PERIOD_NONE ? ta->meta : ta->index);
        if (cl && !(j->digest && j->idem_key) && !j->upload)
            args_str(w, &k, ta->meta);
        else
            board_write_arg(w, &k, ta->idem, idem_len);
        /* the distinct scores: in the board's slot, and kept exactly when the set is */
        args_str(w, &k, t->where.dense);
        args_str(w, &k, t->where.ids); /* a `wide` set's ids hash: in the board's slot */
        args_str(w, &k, t->where.upd); /* its updated_at hash (never a cluster's) */
        if (b == 0) { /* a cluster: records and registry are the caller's (records.h) */
            util_copy(w->items, sizeof(w->items), keys.script_items);
            util_copy(w->registry, sizeof(w->registry), keys.script_registry);
        }
    }
    args_str(w, &k, w->items);
    args_str(w, &k, w->registry);
    w->nkeys = (int)k;
    i64_text(w->glob[0], 32, (int64_t)n);
    i64_text(w->glob[1], 32, (int64_t)nt);
    i64_text(w->glob[2], 32, j->upload ? BOARD_UPLOAD_SEQ_TTL_MS : BOARD_IDEM_TTL_MS);
    i64_text(w->glob[3], 32, cap);
    args_str(w, &k, w->glob[0]);
    args_str(w, &k, w->glob[1]);
    int digest = j->digest && j->idem_key;
    args_str(w, &k,
             (j->flags & BOARD_WRITE_RANKS)              ? "1"
             : (j->flags & BOARD_WRITE_BRIEF) && !digest ? "r"
                                                         : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_ATOMIC) ? "1" : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_CREATE) ? "1" : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_PREV) ? "1" : "0");
    args_str(w, &k, digest ? j->digest : "");
    args_str(w, &k, w->glob[2]);
    args_str(w, &k, w->glob[3]);
    if (j->upload)
        i64_text(w->glob[4], 32, j->upload_chunk);
    args_str(w, &k, j->upload ? w->glob[4] : "");
    args_str(w, &k, j->upload && j->upload_after ? "1" : "0");
    args_str(w, &k, sp ? "f" : "");
    for (size_t b = 0; b < nt; b++) {
        const struct board_write_target *t = &j->targets[b];
        const struct board_settings *s = &t->assumed;
        const struct score_layout *l = &s->layout;
        char(*h)[PERIOD_TZ_TEXT_MAX] = w->t[b].hdr;
        i64_text(h[0], 32, INT64_C(1) << score_codec_tie_bits(l));
        util_copy(h[1], 32, score_tiebreak_name(l->tiebreak));
        i64_text(h[2], 32, score_codec_scaled_max(l));
        util_copy(h[3], 32, score_order_name(l->order));
        i64_text(h[4], 32, l->decimals);
        i64_text(h[5], 32, s->page_size);
        i64_text(h[6], 32, s->page_ttl_ms);
        board_new_generation(h[8]);
        util_copy(h[9], 32, period_kind_name(s->period));
        period_tz_text(&t->where.tz, h[10], PERIOD_TZ_TEXT_MAX);
        util_copy(h[11], 32, s->period != PERIOD_NONE ? "1" : "");
        /* the current period's start: its score in the index */
        i64_text(h[12], 32,
                 s->period != PERIOD_NONE
                     ? period_start(s->period, &t->where.tz, board_now_ms(m), 0)
                     : 0);
        score_layout_text(l, h[13]);
        util_copy(h[14], 32, s->track_updated_at ? "1" : "0");
        snprintf(h[15], 32, "%" PRId64, board_now_ms(m)); /* updated_at of the entries it moves */
        for (int v = 0; v < WRITE_TARGET_HDR; v++) {
            if (v == 7)
                args_str(w, &k, t->board);
            else
                args_str(w, &k, h[v]);
        }
    }
    if (sp) {
        int rc = board_write_chunk_args(w, j, n, &k, sp);
        free(sp);
        if (rc)
            return rc;
        w->nargs = (int)k - w->nkeys;
        assert((size_t)k == total);
        return 0;
    }
    const struct board_entry *e0 = j->targets[0].entries + at;
    for (size_t i = 0; i < n; i++) {
        board_write_arg(w, &k, e0[i].id, e0[i].id_len);
        args_str(w, &k, write_op_text(&e0[i], ops[e0[i].op], w->ops[i]));
        board_write_arg(w, &k, e0[i].record ? e0[i].record : "",
                        e0[i].record ? e0[i].record_len : 0);
        for (size_t b = 0; b < nt; b++) {
            const struct board_entry *e = &j->targets[b].entries[at + i];
            /* one argument: the key (delta), and for an incr with a floor or ceiling " lo hi"
             * ('' for none): two arguments an entry fewer, each about 1,000 Redis instructions */
            struct strb sb;
            strb_init(&sb, w->num[i * nt + b], WRITE_KEY_TEXT_MAX);
            strb_i64(&sb, e->key);
            if (e->op == BOARD_OP_INCR && (e->has_lo || e->has_hi)) {
                strb_str(&sb, " ");
                if (e->has_lo)
                    strb_i64(&sb, e->key_lo);
                strb_str(&sb, " ");
                if (e->has_hi)
                    strb_i64(&sb, e->key_hi);
            }
            args_str(w, &k, w->num[i * nt + b]);
        }
    }
    w->nargs = (int)k - w->nkeys;
    assert((size_t)k == total);
    return 0;
}

/* The layout a section's scores were stored under: its 2^T (1: tiebreak id), order, decimals. */
static void section_layout(const struct store_reply *const *x, struct score_layout *l)
{
    l->tiebreak = x[2]->integer == 1 ? SCORE_TIEBREAK_ID : SCORE_TIEBREAK_FIRST;
    l->order = x[3]->str && strcmp(x[3]->str, "asc") == 0 ? SCORE_ORDER_ASC : SCORE_ORDER_DESC;
    l->decimals = (int)x[4]->integer;
}

#define WRITE_REPLY_HEAD 5    /* status, done, info, target, replayed */
#define WRITE_SECTION_HEAD 6  /* listed, version, 2^T, order, decimals, trimmed */
#define WRITE_RESULT_VALUES 6 /* code, stored, rank0, updated, previous stored, previous rank0 */

static int reply_int(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER;
}

/* A stored value of a section: an integer, a string (a record an older rankd wrote), or none
 * (nil, or ''); on a sub-score board {stored, column keys...}, the sub-scores into sub[] (as
 * the client sent them: a desc column's key is -v; `cols` the board's layout); 1 with its score
 * in *score, 0 none. */
static int section_stored(const struct score_layout *l, const struct score_layout *cols,
                          const struct store_reply *v, double *score, int64_t sub[SCORE_SUB_MAX])
{
    *score = 0;
    if (v->type == STORE_REPLY_ARRAY && v->elements >= 1) {
        for (size_t c = 0; c + 1 < v->elements && c < (size_t)cols->nsub && c < SCORE_SUB_MAX;
             c++) {
            const struct store_reply *k = v->element[c + 1];
            int64_t key = k->type == STORE_REPLY_INTEGER ? (int64_t)k->integer : 0;
            sub[c] = cols->sub_asc[c] ? key : -key;
        }
        v = v->element[0];
    }
    if (v->type == STORE_REPLY_INTEGER) {
        if (score_codec_decode(l, (double)v->integer, score) < 0)
            *score = 0;
        return 1;
    }
    if (v->type != STORE_REPLY_STRING || !v->str[0])
        return 0;
    *score = board_decode_stored(l, v->str);
    return 1;
}

/* A brief section (BOARD_WRITE_BRIEF): after its head, the indexes (0-based in the call, below
 * handled) of the entries refused alone; every other entry handled was applied. */
static int section_brief(const struct store_reply *const *h, size_t values,
                         struct board_write_target *t, size_t at, size_t handled)
{
    for (size_t i = 0; i < handled; i++)
        t->outcomes[at + i] = (struct board_outcome){.rc = 0};
    for (size_t i = 0; i < values; i++) {
        const struct store_reply *v = h[WRITE_SECTION_HEAD + i];
        if (!reply_int(v) || v->integer < 0 || v->integer >= (long long)handled)
            return -EIO;
        t->outcomes[at + (size_t)v->integer].rc = -ERANGE;
    }
    return 0;
}

/* One target's section of a write.lua reply into t (outcomes[0..handled)); -EIO when its shape
 * is not one. brief: the call asked for a brief section. */
static int section_take(const struct store_reply *x, struct board_write_target *t, size_t at,
                        size_t handled, int brief, int *listed)
{
    if (x->type != STORE_REPLY_ARRAY ||
        x->elements < WRITE_SECTION_HEAD + (brief ? 0 : WRITE_RESULT_VALUES * handled))
        return -EIO;
    const struct store_reply *const *h = (const struct store_reply *const *)x->element;
    for (int i = 0; i < WRITE_SECTION_HEAD; i++)
        if (i != 3 && !reply_int(h[i]))
            return -EIO;
    struct score_layout l = {0};
    section_layout(h, &l);
    if (h[0]->integer == 1)
        *listed = 1;
    t->version = h[1]->integer;
    t->trimmed = h[5]->integer;
    if (brief)
        return section_brief(h, x->elements - WRITE_SECTION_HEAD, t, at, handled);
    for (size_t i = 0; i < handled; i++) {
        const struct store_reply *const *v = h + WRITE_SECTION_HEAD + WRITE_RESULT_VALUES * i;
        if (!reply_int(v[0]) || !reply_int(v[2]) || !reply_int(v[3]) || !reply_int(v[5]))
            return -EIO;
        struct board_outcome *o = &t->outcomes[at + i];
        /* sub-scores only from {stored, column keys...}: a replayed record an older rankd
         * wrote holds the stored value alone, and its reply stays as it was */
        int subs = v[1]->type == STORE_REPLY_ARRAY;
        *o = (struct board_outcome){.rc = v[0]->integer == 0 ? 0 : -ERANGE,
                                    .nsub = subs ? t->assumed.layout.nsub : 0};
        section_stored(&l, &t->assumed.layout, v[1], &o->score, o->sub);
        o->rank = v[2]->integer >= 0 ? v[2]->integer + 1 : 0;
        o->updated = (int)v[3]->integer;
        o->has_prev = section_stored(&l, &t->assumed.layout, v[4], &o->prev_score, o->prev_sub);
        o->prev_rank = v[5]->integer >= 0 ? v[5]->integer + 1 : 0;
    }
    return 0;
}

/* Where a job's next call starts: with a digest always at the first entry (write.lua goes on
 * after what the Idempotency-Key's record holds), else after the entries handled. */
static size_t call_at(const struct board_write_job *j)
{
    return j->digest && j->idem_key ? 0 : j->at;
}

/* What one write.lua reply says for entries[at..at+n) (r is freed): *done entries handled. When
 * a call met a full tie group, *full is set and j->full_key and j->full_target name it.
 * j->listed[b] is set (never cleared) when the call listed a new period set in target b's index:
 * a period began, the sets of periods that stopped being readable may be swept. -ERANGE (all or
 * nothing): entry *done would leave the range and nothing was written; -EAGAIN: the settings
 * differ; -ENOENT: a target does not exist; -EKEYREJECTED: the idempotency record holds another
 * digest; -EALREADY: an upload's chunk whose predecessor was not applied in full (nothing
 * written); -ENOTSUP: write_one.lua's "not this script's board" (nothing written: send write.lua);
 * -EIO: an error reply or an unexpected shape. */
int board_write_reply_take(struct store_reply *r, struct board_write_job *j, size_t n, size_t *done,
                           int *full)
{
    int rc = -EIO;
    if (r->type != STORE_REPLY_ARRAY || r->elements < WRITE_REPLY_HEAD ||
        !reply_int(r->element[0]) || !reply_int(r->element[1]) || !reply_int(r->element[3]) ||
        !reply_int(r->element[4]))
        goto out;
    long long status = r->element[0]->integer;
    size_t handled = (size_t)r->element[1]->integer;
    size_t target = (size_t)r->element[3]->integer;
    if (handled > n || target >= j->ntargets)
        goto out;
    j->target = target;
    if (status == 1 || status == 4 || status == 5 || status == 6 || status == 7) {
        rc = status == 1   ? -EAGAIN
             : status == 4 ? -ENOENT
             : status == 5 ? -EKEYREJECTED
             : status == 6 ? -EALREADY
                           : -ENOTSUP;
        goto out;
    }
    if (status == 2) {
        *done = handled;
        rc = -ERANGE;
        goto out;
    }
    /* a chunk in the short layout handled in the general one: its assumptions were wrong */
    if (status == 0 && j->ties && r->element[2]->type == STORE_REPLY_STRING && r->element[2]->str &&
        strcmp(r->element[2]->str, "g") == 0)
        j->ties->off = 1;
    *full = status == 3;
    if (*full) {
        j->full_target = target;
        snprintf(j->full_key, sizeof(j->full_key), "%s",
                 r->element[2]->str ? r->element[2]->str : "0");
    }
    if (r->elements != WRITE_REPLY_HEAD + j->ntargets)
        goto out;
    /* a brief reply (board_write_args_build): never with ranks, nor with a digest (a replay's stored
     * sections are full ones) */
    int brief = (j->flags & BOARD_WRITE_BRIEF) && !(j->flags & BOARD_WRITE_RANKS) &&
                !(j->digest && j->idem_key);
    for (size_t b = 0; b < j->ntargets; b++)
        if (section_take(r->element[WRITE_REPLY_HEAD + b], &j->targets[b], call_at(j), handled,
                         brief, &j->listed[b]))
            goto out;
    j->replayed = r->element[4]->integer == 1;
    *done = handled;
    rc = 0;
out:
    store_reply_free(r);
    return rc;
}

/* ---------------------------------------------------------------- writes on an event loop */

/* A failed step of a write job: what the caller must be told. A command written and not
 * answered may have run; once entries were applied, nothing can be called "not written". */
static int write_job_errno(const struct board_write_job *j, int rc, int sent)
{
    if (sent && (rc == -ETIMEDOUT || rc == -ECONNRESET))
        rc = -ETIME;
    else if (rc == -ECANCELED)
        rc = -EIO;
    if (j->at > 0 && rc != -EAGAIN && rc != -ERANGE && rc != -ENOSPC && rc != -EREMOTEIO)
        rc = -ETIME;
    return rc;
}

static void write_job_finish(struct board_write_job *j, int rc)
{
    if (rc == 0 && j->unconfirmed)
        rc = -EREMOTEIO; /* applied, not confirmed on --write-replicas replicas: never a 2xx */
    free(j->recs);
    j->recs = NULL;
    for (size_t b = 0; b < j->ntargets; b++)
        if (j->listed[b]) /* a period began: sweep, behind this write's reply */
            board_sweep_submit(j->m, j->conn, j->targets[b].board, &j->targets[b].assumed);
    j->handled = j->at;
    j->done(j, rc); /* may free j */
}

static int write_job_send(struct board_write_job *j);
static int write_job_compact(struct board_write_job *j);

static void compact_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_write_job *j = arg;
    if (rc) {
        write_job_finish(j, write_job_errno(j, rc, 1));
        return;
    }
    const struct store_reply *r = replies[0];
    if (r->type == STORE_REPLY_ERROR) {
        store_note_fault(board_writes_of(j->m), "compact", r->str);
        write_job_finish(j, write_job_errno(j, -EIO, 1));
        return;
    }
    long long moved = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
    j->compacted += moved;
    if (moved >= COMPACT_CHUNK)
        rc = write_job_compact(j);
    else if (j->compacted >= atomic_load(&board_tie_cap))
        rc = -ENOSPC;
    else
        rc = write_job_send(j);
    if (rc < 0)
        write_job_finish(j, write_job_errno(j, rc, 0));
}

/* One chunk of compact.lua for the full group j->full_key of target j->full_target: renumbered
 * in chunks, so no single call grows with the group. */
static int write_job_compact(struct board_write_job *j)
{
    const struct board_write_target *t = &j->targets[j->full_target];
    const struct score_layout *l = &t->assumed.layout;
    int64_t key = strtoll(j->full_key, NULL, 10);
    char lo[32], caps[32], start[32], chunk[16];
    snprintf(lo, sizeof(lo), "%" PRId64, key * (INT64_C(1) << score_codec_tie_bits(l)));
    snprintf(caps, sizeof(caps), "%" PRId64, atomic_load(&board_tie_cap));
    snprintf(chunk, sizeof(chunk), "%d", COMPACT_CHUNK);
    snprintf(start, sizeof(start), "%" PRId64, j->compacted);
    struct board_keys k;
    board_make_keys(j->m, t->board, &k);
    const char *argv[] = {t->where.z, k.meta, lo, caps, score_tiebreak_name(l->tiebreak),
                          start,      chunk};
    int rc = store_async_script(j->conn, board_script(SCRIPT_COMPACT), 2, 5, argv, NULL,
                                j->deadline_ms, compact_reply, j);
    return rc < 0 ? rc : 0;
}

/* After a write.lua reply (rc, full as board_write_reply_take said; done entries handled): finish,
 * or compact a full tie group and resume. */
static void write_after(struct board_write_job *j, int rc, int full, size_t done)
{
    if (rc || !full) {
        write_job_finish(j, rc);
        return;
    }
    /* a full tie group: compact it in chunks, then resume; only rounds without progress count
     * towards giving up */
    j->stalls = done ? 0 : j->stalls + 1;
    j->compacted = 0;
    rc = j->stalls > WRITE_RETRIES ? -ENOSPC : write_job_compact(j);
    if (rc < 0)
        write_job_finish(j, write_job_errno(j, rc, 0));
}

static void write_records_done(void *arg, int rc)
{
    struct board_write_job *j = arg;
    free(j->recs);
    j->recs = NULL;
    if (rc == -EREMOTEIO) { /* written on their nodes, not confirmed there: the job goes on */
        j->unconfirmed = 1;
        rc = 0;
    }
    if (rc) /* the scores are in, the records perhaps not: the outcome is unknown */
        write_job_finish(j, write_job_errno(j, rc, 1));
    else
        write_after(j, j->then_rc, j->then_full, j->then_done);
}

/* A cluster (one target): the records of entries[from, from + count) that were applied, and
 * the registry when this call may have created the board (records.h). 0 (write_records_done
 * follows), 1 nothing to write, or a negative errno (nothing sent). */
static int write_records(struct board_write_job *j, size_t from, size_t count, int created)
{
    const struct board_write_target *t = &j->targets[0];
    struct board_keys k;
    board_make_keys(j->m, t->board, &k);
    j->recs = calloc(count ? count : 1, sizeof(*j->recs));
    if (!j->recs)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = from; i < from + count; i++) {
        const struct board_entry *e = &t->entries[i];
        if (t->outcomes[i].rc == 0 && e->record)
            j->recs[n++] = (struct records_entry){e->id, e->id_len, e->record, e->record_len};
    }
    if (created) {
        j->registered = 1;
        board_registered_memo(j->m, t->board, 1);
    }
    int rc =
        records_put(j->conn, board_writes_of(j->m), j->m->prefix, j->recs, n,
                    created ? k.registry : NULL, t->board, j->deadline_ms, write_records_done, j);
    if (rc) {
        free(j->recs);
        j->recs = NULL;
    }
    return rc;
}

static void write_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_write_job *j = arg;
    if (rc) {
        write_job_finish(j, write_job_errno(j, rc, 1));
        return;
    }
    int unreplicated = store_async_unreplicated(j->conn, replies, 1); /* --write-replicas */
    struct store_reply *r = replies[0];
    replies[0] = NULL; /* taken: board_write_reply_take frees it */
    int refused = 0;
    int midway = 0;
    if (r->type == STORE_REPLY_ERROR) {
        store_note_fault(board_writes_of(j->m), "write", r->str);
        refused = store_reply_errno(r); /* OOM, READONLY: refused, nothing written */
        midway = refused == -EIO && store_reply_script_failed(r);
    }
    store_note_write(refused);
    size_t done = 0;
    int full = 0;
    size_t at = call_at(j), before = j->at;
    rc = j->sent_short ? board_write_short_take(r, j, at, &done, &full)
                       : board_write_reply_take(r, j, j->n - at, &done, &full);
    if (rc == -ENOTSUP && !j->no_short) { /* write_one.lua wrote nothing: write.lua takes it */
        j->no_short = 1;
        if ((rc = write_job_send(j)) < 0)
            write_job_finish(j, write_job_errno(j, rc, 0));
        return;
    }
    /* -ERANGE (all or nothing): handled names the entry refused, none written by this call; but
     * refused after an earlier call applied a part (a writer in between), the outcome is mixed */
    if (rc == -ERANGE && before > 0)
        rc = -ETIME;
    else if (rc == 0 || rc == -ERANGE)
        j->at = at + done;
    done = j->at > before ? j->at - before : 0; /* progress made by this call */
    if (rc == -EIO && midway) /* the script failed after it began: what it wrote before stays */
        rc = -ETIME;
    else if (rc == -EIO) /* an error reply before the script ran: nothing written */
        rc = write_job_errno(j, refused ? refused : rc, 0);
    if (unreplicated && done > 0 && (rc == 0 || full))
        j->unconfirmed = 1; /* it wrote (a replay too: write.lua touches its record), unconfirmed */
    /* a cluster: the records of what this call applied (a replay's too: the first call's
     * records step may have failed), and the registry after a board's first write (version 1:
     * this call created it, or a PUT did, whose SADD came first: SADD again changes nothing) */
    size_t from = at, upto = rc == 0 ? j->at : at;
    int created = rc == 0 && !j->registered && j->targets[0].version == 1 && upto > from;
    if (board_clustered(j->m) && (upto > from || created)) {
        j->then_rc = rc;
        j->then_full = full;
        j->then_done = done;
        int wr = write_records(j, from, upto - from, created);
        if (wr == 0)
            return; /* write_records_done goes on */
        if (wr < 0) {
            write_job_finish(j, write_job_errno(j, wr, 0));
            return;
        }
    }
    write_after(j, rc, full, done);
}

/* Send write.lua, or write_one.lua where it fits (board_write_short_fits), for entries[at..n);
 * 0 or a negative errno (nothing sent). */
static int write_job_send(struct board_write_job *j)
{
    j->sent_short = board_write_short_fits(j, call_at(j));
    if (j->sent_short) {
        struct write_short_args s;
        int rc = board_write_short_args(&s, j, call_at(j));
        if (!rc)
            rc = store_async_script(j->conn, board_script(SCRIPT_WRITE_ONE), s.nkeys, s.nargs,
                                    s.argv, s.len, j->deadline_ms, write_reply, j);
        return rc < 0 ? rc : 0;
    }
    struct write_args w = {0};
    int rc = board_write_args_build(&w, j, call_at(j), j->n - call_at(j));
    if (!rc)
        rc = store_async_script(j->conn, board_script(SCRIPT_WRITE), w.nkeys, w.nargs, w.argv,
                                w.len, j->deadline_ms, write_reply, j);
    board_write_args_free(&w);
    return rc < 0 ? rc : 0;
}

/* The registry's SADD before the first write of a board this process believes new (a cluster):
 * answered, the write goes on. */
static void write_registered(void *arg, int rc, struct store_reply **replies)
{
    struct board_write_job *j = arg;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR) {
        store_note_fault(board_writes_of(j->m), "registry", replies[0]->str);
        rc = store_reply_errno(replies[0]);
    }
    if (!rc && store_async_unreplicated(j->conn, replies, 1))
        j->unconfirmed = 1; /* the registry's name, on its master only: no 2xx for the write */
    if (!rc) {
        board_registered_memo(j->m, j->targets[0].board, 1);
        rc = write_job_send(j);
    }
    if (rc) /* nothing of the entries was written */
        write_job_finish(j, rc == -ETIMEDOUT || rc == -ECONNRESET ? -EIO : rc);
}

/*
 * On a cluster the registry is in a slot of its own, so a board's creation is two calls: the
 * registry first, then the board (a failure between them leaves a name with no board, which GET
 * /boards leaves out and a DELETE of it removes), never a board the list does not show. A write
 * adds the board to the registry first when this process believes it does not exist (its view
 * of the board's settings: the caller just read them); a write.lua that created the board
 * anyway (deleted by another process within the view's second) is followed by the SADD.
 */
static int write_register_first(struct board_write_job *j)
{
    struct board_settings s;
    int exists = 0;
    const char *board = j->targets[0].board;
    if ((board_settings_cached(j->m, board, &s, &exists) == 0 && exists) ||
        board_registered_memo(j->m, board, -1))
        return 1;
    struct board_keys k;
    board_make_keys(j->m, board, &k);
    const char *argv[] = {"SADD", k.registry, board};
    const char *const *av[] = {argv};
    const int argc[] = {3};
    j->registered = 1;
    int rc = store_async_send_replicated(j->conn, 1, argc, av, NULL, j->deadline_ms,
                                         write_registered, j);
    return rc < 0 ? rc : 0;
}

int board_write_submit(struct board_model *m, struct store_async *conn, struct board_write_job *j)
{
    j->m = m;
    j->conn = conn;
    j->at = j->handled = j->target = 0;
    j->stalls = 0;
    j->replayed = 0;
    j->unconfirmed = 0;
    j->no_short = 0;
    j->full_target = 0;
    j->full_key[0] = '\0';
    memset(j->listed, 0, sizeof(j->listed));
    if (!conn)
        return -ECONNREFUSED;
    if (j->n == 0)
        return -EAGAIN;
    if (j->ntargets == 0 || j->ntargets > BOARD_WRITE_BOARDS_MAX)
        return -EINVAL;
    j->registered = 0;
    j->recs = NULL;
    for (size_t b = 0; b < j->ntargets; b++) {
        struct board_write_target *t = &j->targets[b];
        t->version = t->trimmed = 0;
        int rc = board_where_resolve(m, t->board, t->assumed.period, &t->assumed.tz,
                                     t->assumed.retain, NULL, &t->where);
        if (rc)
            return rc;
        /* a cluster runs a script on one slot, and each board is a slot of its own: a write
         * to several boards at once (one all-or-nothing call on one Redis) is refused there */
        if (board_clustered(m) && b > 0)
            return -EXDEV;
    }
    int rc;
    if (board_clustered(m) && j->ntargets == 1 && (rc = write_register_first(j)) <= 0)
        return rc;
    return write_job_send(j);
}

static int settings_send(struct board_settings_job *j);

static void settings_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_settings_job *j = arg;
    if ((rc == -ECONNRESET || rc == -EIO) && !j->resent &&
        (!j->deadline_ms || util_now_ms() < j->deadline_ms)) {
        j->resent = 1; /* a read: once more, on the connection dialled again */
        if ((rc = settings_send(j)) == 0)
            return;
    }
    if (rc == 0 && replies[0]->type != STORE_REPLY_ARRAY) {
        if (replies[0]->type == STORE_REPLY_ERROR)
            store_note_fault(j->m->store, "HGETALL", replies[0]->str);
        rc = -EIO;
    }
    if (rc == 0) {
        board_settings_from_reply(replies[0], &j->settings);
        j->exists = replies[0]->elements > 0;
        board_view_put(j->m, j->board, &j->settings, j->exists);
    }
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* a read: nothing to lose */
}

static int settings_send(struct board_settings_job *j)
{
    struct board_keys k;
    board_make_keys(j->m, j->board, &k);
    const char *argv[] = {"HGETALL", k.meta};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    int rc = store_async_send(j->conn, 1, argc, av, NULL, j->deadline_ms, settings_reply, j);
    return rc < 0 ? rc : 0;
}

int board_settings_submit(struct board_model *m, struct store_async *conn,
                          struct board_settings_job *j)
{
    if (!conn)
        return -ECONNREFUSED;
    j->m = m;
    j->conn = conn;
    j->resent = 0;
    return settings_send(j);
}
