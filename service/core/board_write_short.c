/*
 * board_write_short.c -- which script a write takes (the one place that decides), and the
 * arguments of write_one.lua, the short script of the common single write. The contract is in
 * board.h and board_write.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

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
    assert(*k < WRITE_SHORT_KEYS + 1 + WRITE_SHORT_ARGS_MAX);
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
    /* on a cluster the records hash is in another slot: the settings hash stands in, and the
     * caller writes the record (records.h) */
    if (board_clustered(m))
        util_copy(w->items, sizeof(w->items), w->meta);
    else
        records_key(m->prefix, 0, "", 0, w->items, sizeof(w->items));
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
    i64_text(w->flags, sizeof(w->flags),
             ((j->flags & BOARD_WRITE_RANKS) ? 1 : 0) | ((j->flags & BOARD_WRITE_PREV) ? 2 : 0) |
                 ((j->flags & BOARD_WRITE_ATOMIC) ? 4 : 0));
    i64_text(w->cap, sizeof(w->cap), atomic_load(&board_tie_cap));
    i64_text(w->base, sizeof(w->base), INT64_C(1) << score_codec_tie_bits(l));
    i64_text(w->kmax, sizeof(w->kmax), score_codec_scaled_max(l));
    /* the key, or an incr's "delta lo hi" ('' for the bound it lacks), as write.lua takes it */
    strb_init(&b, w->key, sizeof(w->key));
    strb_i64(&b, e->key);
    if (e->op == BOARD_OP_INCR && (e->has_lo || e->has_hi)) {
        strb_str(&b, " ");
        if (e->has_lo)
            strb_i64(&b, e->key_lo);
        strb_str(&b, " ");
        if (e->has_hi)
            strb_i64(&b, e->key_hi);
    }
    w->now[0] = '\0';
    if (s->track_updated_at) /* the member's updated_at when its score changes */
        i64_text(w->now, sizeof(w->now), board_now_ms(m));
    int periodic = s->period != PERIOD_NONE;
    if (periodic) { /* the period index, and the current period's start: its score there */
        board_key_make(&b, w->index, sizeof(w->index), m->prefix, t->board, BOARD_KEY_INDEX);
        i64_text(w->start, sizeof(w->start),
                 period_start(s->period, &t->where.tz, board_now_ms(m), 0));
    }
    size_t k = 0;
    const char *keys[] = {t->where.z, w->meta, t->where.dense, t->where.upd, w->items, w->index};
    for (size_t i = 0; i < WRITE_SHORT_KEYS + (size_t)periodic; i++)
        short_put(w, &k, keys[i], strlen(keys[i]));
    w->nkeys = (int)k;
    const char *args[] = {w->settings, w->flags, w->cap, w->base, w->kmax};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        short_put(w, &k, args[i], strlen(args[i]));
    short_put(w, &k, e->id, e->id_len);
    short_put(w, &k, ops[e->op], strlen(ops[e->op]));
    short_put(w, &k, e->record ? e->record : "", e->record ? e->record_len : 0);
    short_put(w, &k, w->key, strlen(w->key));
    if (s->track_updated_at || periodic)
        short_put(w, &k, w->now, strlen(w->now));
    if (periodic)
        short_put(w, &k, w->start, strlen(w->start));
    w->nargs = (int)k - w->nkeys;
    return 0;
}
