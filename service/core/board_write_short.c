/*
 * board_write_short.c -- which script a write takes (the one place that decides), and the
 * arguments of write_one.lua, the short script of the common single write. The contract is in
 * board.h and board_write.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* write_one.lua takes 2^T of a packed board, and the tie cap it is not told, from the prelude */
_Static_assert(BOARD_TIE_CAP_MAX == SCORE_TIE_CAP, "BOARD_TIE_CAP_MAX is SCORE_TIE_CAP");

/* The test hook (board.h): 0 sends every write through write.lua. */
static _Atomic int short_writes = 1;

void board_set_short_writes(int on)
{
    atomic_store(&short_writes, on != 0);
}

int board_write_short_fits(const struct board_write_job *j, size_t at)
{
    if (!atomic_load(&short_writes) || j->no_short || j->ntargets != 1 || j->n - at != 1 ||
        (j->digest && j->idem_key) || j->upload)
        return 0;
    /* a brief reply is write.lua's own shape (ignored with ranks) */
    if ((j->flags & BOARD_WRITE_BRIEF) && !(j->flags & BOARD_WRITE_RANKS))
        return 0;
    const struct board_settings *s = &j->targets[0].assumed;
    const struct board_entry *e = &j->targets[0].entries[at];
    /* max_members and exports are judged by the script too (status 7: write.lua then) */
    return !s->layout.wide && s->layout.nsub == 0 && s->max_members == 0 && e->nsub <= 0;
}

static void short_put(struct write_short_args *w, size_t *k, const char *s, size_t len)
{
    assert(*k < WRITE_SHORT_KEYS_MAX + WRITE_SHORT_ARGS_MAX);
    w->argv[*k] = s;
    w->len[*k] = len;
    (*k)++;
}

/* v in decimal into out[0..cap); returns out. */
static char *i64_text(char *out, size_t cap, int64_t v)
{
    struct strb b;
    strb_init(&b, out, cap);
    strb_i64(&b, v);
    return out;
}

int board_write_short_args(struct write_short_args *w, const struct board_write_job *j, size_t at)
{
    static const char *const ops[] = {"set", "best", "incr"};
    struct board_model *m = j->m;
    const struct board_write_target *t = &j->targets[0];
    const struct board_settings *s = &t->assumed;
    const struct score_layout *l = &s->layout;
    const struct board_entry *e = &t->entries[at];
    struct strb b;
    board_key_make(&b, w->meta, sizeof(w->meta), m->prefix, t->board, BOARD_KEY_META);
    /* the settings as write.lua's header sends them, in one argument */
    char tz[PERIOD_TZ_TEXT_MAX], layout[SCORE_LAYOUT_TEXT_MAX];
    period_tz_text(&t->where.tz, tz, sizeof(tz));
    score_layout_text(l, layout);
    strb_init(&b, w->settings, sizeof(w->settings));
    strb_str(&b, score_order_name(l->order));
    strb_str(&b, "|");
    strb_str(&b, score_tiebreak_name(l->tiebreak));
    strb_str(&b, "|");
    strb_i64(&b, l->decimals);
    strb_str(&b, "|");
    strb_str(&b, period_kind_name(s->period));
    strb_str(&b, "|");
    strb_str(&b, tz);
    strb_str(&b, "|");
    strb_str(&b, layout);
    strb_str(&b, "|");
    strb_str(&b, s->track_updated_at ? "1" : "0");
    /* the key; best: "key kmax"; incr: "delta lo hi kmax" ('' for the bound it lacks) */
    strb_init(&b, w->key, sizeof(w->key));
    strb_i64(&b, e->key);
    if (e->op == BOARD_OP_INCR) {
        strb_str(&b, " ");
        if (e->has_lo)
            strb_i64(&b, e->key_lo);
        strb_str(&b, " ");
        if (e->has_hi)
            strb_i64(&b, e->key_hi);
    }
    if (e->op != BOARD_OP_SET) {
        strb_str(&b, " ");
        strb_i64(&b, score_codec_scaled_max(l));
    }
    w->flags[0] = (char)('0' + (((j->flags & BOARD_WRITE_RANKS) ? 1 : 0) |
                                ((j->flags & BOARD_WRITE_PREV) ? 2 : 0) |
                                ((j->flags & BOARD_WRITE_ATOMIC) ? 4 : 0)));
    w->flags[1] = '\0';
    int periodic = s->period != PERIOD_NONE;
    /* on a cluster the records hash is in another slot: the caller writes the record
     * (records.h) */
    int record = e->record && e->record_len > 0 && !board_clustered(m);
    size_t k = 0;
    short_put(w, &k, t->where.z, strlen(t->where.z));
    short_put(w, &k, w->meta, strlen(w->meta));
    short_put(w, &k, t->where.dense, strlen(t->where.dense));
    if (s->track_updated_at)
        short_put(w, &k, t->where.upd, strlen(t->where.upd));
    if (periodic) { /* the period index */
        board_key_make(&b, w->index, sizeof(w->index), m->prefix, t->board, BOARD_KEY_INDEX);
        short_put(w, &k, w->index, strlen(w->index));
    }
    if (record) {
        records_key(m->prefix, 0, "", 0, w->items, sizeof(w->items));
        short_put(w, &k, w->items, strlen(w->items));
    }
    w->nkeys = (int)k;
    short_put(w, &k, w->settings, strlen(w->settings));
    short_put(w, &k, e->id, e->id_len);
    short_put(w, &k, ops[e->op], strlen(ops[e->op]));
    short_put(w, &k, w->key, strlen(w->key));
    short_put(w, &k, w->flags, 1);
    if (record)
        short_put(w, &k, e->record, e->record_len);
    if (s->track_updated_at) /* the member's updated_at when its score changes */
        short_put(w, &k, w->now, strlen(i64_text(w->now, sizeof(w->now), board_now_ms(m))));
    if (periodic) /* the current period's start: the set's score in the index */
        short_put(w, &k, w->start,
                  strlen(i64_text(w->start, sizeof(w->start),
                                  period_start(s->period, &t->where.tz, board_now_ms(m), 0))));
    int64_t cap = atomic_load(&board_tie_cap);
    if (cap != BOARD_TIE_CAP_MAX) /* a test's */
        short_put(w, &k, w->cap, strlen(i64_text(w->cap, sizeof(w->cap), cap)));
    w->nargs = (int)k - w->nkeys;
    return 0;
}

/* A reply element that is an integer. */
static int short_int(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER;
}

int board_write_short_take(struct store_reply *r, struct board_write_job *j, size_t at,
                           size_t *done, int *full)
{
    int rc = -EIO;
    struct board_write_target *t = &j->targets[0];
    const struct store_reply *const *x = (const struct store_reply *const *)r->element;
    j->target = 0;
    if (r->type != STORE_REPLY_ARRAY || r->elements < 1 || !short_int(x[0]))
        goto out;
    switch (x[0]->integer) {
    case 0:
        break;
    case 1:
        rc = -EAGAIN;
        goto out;
    case 2: /* all or nothing: the entry would leave the range, nothing written */
        *done = 0;
        rc = -ERANGE;
        goto out;
    case 3: /* a full tie group: nothing written */
        if (r->elements != 3 || x[1]->type != STORE_REPLY_STRING || !short_int(x[2]))
            goto out;
        *full = 1;
        j->full_target = 0;
        snprintf(j->full_key, sizeof(j->full_key), "%s", x[1]->str ? x[1]->str : "0");
        t->version = x[2]->integer;
        t->trimmed = 0;
        j->replayed = 0;
        *done = 0;
        rc = 0;
        goto out;
    case 7:
        rc = -ENOTSUP;
        goto out;
    default:
        goto out;
    }
    if (r->elements != 7 || !short_int(x[1]) || !short_int(x[2]) || !short_int(x[4]) ||
        !short_int(x[6]) || (x[3]->type != STORE_REPLY_NIL && !short_int(x[3])) ||
        (x[5]->type != STORE_REPLY_NIL && !short_int(x[5])))
        goto out;
    const struct score_layout *l = &t->assumed.layout;
    long long bits = x[2]->integer;
    struct board_outcome *o = &t->outcomes[at];
    *o = (struct board_outcome){.rc = bits & 4 ? -ERANGE : 0, .updated = (int)(bits & 1)};
    if (short_int(x[3]) && score_codec_decode(l, (double)x[3]->integer, &o->score) < 0)
        o->score = 0;
    o->rank = x[4]->integer >= 0 ? x[4]->integer + 1 : 0;
    if (short_int(x[5])) {
        o->has_prev = 1;
        if (score_codec_decode(l, (double)x[5]->integer, &o->prev_score) < 0)
            o->prev_score = 0;
    }
    o->prev_rank = x[6]->integer >= 0 ? x[6]->integer + 1 : 0;
    if (bits & 2)
        j->listed[0] = 1;
    t->version = x[1]->integer;
    t->trimmed = 0;
    j->replayed = 0;
    *full = 0;
    *done = 1;
    rc = 0;
out:
    store_reply_free(r);
    return rc;
}
