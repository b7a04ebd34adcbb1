/*
 * board_ctl.c -- control operations, one call each: put, delete, reset, trim, member delete, list,
 * records; prepared here, their replies taken here.
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- control operations: calls */

/*
 * Each control operation's commands and the reading of their replies, for the event loops'
 * chains (board_ctl_submit): a _prepare fills a call's keys and arguments, a _take reads its
 * reply (never freeing it).
 */

/* ZCARD's reply as board_info_get's total. */
void board_info_take(const struct store_reply *r, const struct board_where *w,
                     struct board_info *out)
{
    out->total = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
    snprintf(out->period, sizeof(out->period), "%s", w->period);
}

/* Text of the eleven settings put_board.lua takes, in its order (see the script). */
static void settings_text(const struct board_settings *v, char out[12][PERIOD_TZ_TEXT_MAX])
{
    const size_t n = PERIOD_TZ_TEXT_MAX;
    char layout[SCORE_LAYOUT_TEXT_MAX];
    snprintf(out[11], n, "%d", v->track_updated_at ? 1 : 0);
    snprintf(out[10], n, "%s", score_format_name(v->score_format));
    snprintf(out[9], n, "%s", score_layout_text(&v->layout, layout));
    snprintf(out[8], n, "%" PRId64, v->max_members);
    snprintf(out[0], n, "%s", score_order_name(v->layout.order));
    snprintf(out[1], n, "%s", score_tiebreak_name(v->layout.tiebreak));
    snprintf(out[2], n, "%d", v->layout.decimals);
    snprintf(out[3], n, "%s", period_kind_name(v->period));
    period_tz_text(&v->tz, out[4], n);
    snprintf(out[5], n, "%d", v->page_size);
    snprintf(out[6], n, "%d", v->page_ttl_ms);
    snprintf(out[7], n, "%d", v->retain);
}

/* The key of the set (what 1: of its distinct scores, 2: of its ids, 3: of its updated_at
 * times) of the period `d` periods
 * before the one holding `now` under the given period settings: <prefix>:{<board>}:z:<period id> */
static void period_set_key(const struct board_model *m, const char *board, enum period_kind kind,
                           const struct period_tz *tz, int64_t now, int d, int what,
                           char out[KEY_MAX])
{
    char id[PERIOD_ID_MAX];
    period_id(kind, tz, period_start(kind, tz, now, -d), id);
    board_set_key(out, KEY_MAX, m->prefix, board,
                  what == 3   ? BOARD_KEY_UPD
                  : what == 2 ? BOARD_KEY_IDS
                  : what      ? BOARD_KEY_DENSE
                              : BOARD_KEY_SET,
                  id);
}

/* The sub-score columns of a patch over `out`: `packed` has none; a board with any is `wide`. */
static void subscores_apply(const struct board_settings_patch *p, struct board_settings *out)
{
    if (p->has_subscores) {
        out->layout.nsub = p->value.layout.nsub;
        memcpy(out->layout.sub_asc, p->value.layout.sub_asc, sizeof(out->layout.sub_asc));
    }
    if (p->has_score_layout && !p->value.layout.wide)
        out->layout.nsub = 0;
    if (out->layout.nsub > 0)
        out->layout.wide = 1;
}

/* `base` with the fields the patch sets. */
static void patch_apply(const struct board_settings *base, const struct board_settings_patch *p,
                        struct board_settings *out)
{
    *out = *base;
    const struct board_settings *v = &p->value;
    if (p->has_order)
        out->layout.order = v->layout.order;
    if (p->has_tiebreak)
        out->layout.tiebreak = v->layout.tiebreak;
    if (p->has_decimals)
        out->layout.decimals = v->layout.decimals;
    if (p->has_score_layout)
        out->layout.wide = v->layout.wide;
    subscores_apply(p, out);
    if (p->has_period)
        out->period = v->period;
    if (p->has_tz)
        out->tz = v->tz;
    if (p->has_page_size)
        out->page_size = v->page_size;
    if (p->has_page_ttl)
        out->page_ttl_ms = v->page_ttl_ms;
    if (p->has_retain)
        out->retain = v->retain;
    if (p->has_max_members)
        out->max_members = v->max_members;
    if (p->has_score_format)
        out->score_format = v->score_format;
    if (p->has_track_updated_at)
        out->track_updated_at = v->track_updated_at;
}

/* What put_board.lua and create_board.lua answer on success: {code, settings, total}. */
static void put_reply_take(struct board_model *m, const char *board, const struct store_reply *r,
                           struct board_info *out)
{
    board_settings_from_reply(r->element[1], &out->settings);
    out->total = r->element[2]->type == STORE_REPLY_INTEGER ? r->element[2]->integer : 0;
    board_view_put(m, board, &out->settings, 1);
    struct board_where now_w;
    out->period[0] = '\0';
    if (board_where_resolve(m, board, out->settings.period, &out->settings.tz, out->settings.retain,
                            NULL, &now_w) == 0)
        snprintf(out->period, sizeof(out->period), "%s", now_w.period);
}

void board_put_call_free(struct board_put_call *c)
{
    free(c->zs);
    free(c->argv);
    c->zs = NULL;
    c->argv = NULL;
}

/* create_board.lua's call for a new board: 0, a period error of board_where_resolve, or -ENOMEM. */
int board_put_create_prepare(struct board_model *m, const char *board,
                             const struct board_settings_patch *patch, struct board_put_call *c)
{
    static const char *const names[] = {"order",        "tiebreak",     "score_decimals",
                                        "period",       "timezone",     "page_size",
                                        "page_ttl_ms",  "retain",       "max_members",
                                        "score_layout", "score_format", "track_updated_at"};
    board_make_keys(m, board, &c->k);
    struct board_settings d, v;
    board_settings_default(&d);
    patch_apply(&d, patch, &v);
    int rc = board_where_resolve(m, board, v.period, &v.tz, v.retain, NULL, &c->w);
    if (rc)
        return rc;
    settings_text(&v, c->val);
    board_new_generation(c->gen);
    c->argv = calloc(4 + 24 + 4, sizeof(*c->argv));
    if (!c->argv)
        return -ENOMEM;
    c->argv[0] = c->k.meta;
    c->argv[1] = c->k.script_registry;
    c->argv[2] = c->w.z;
    c->argv[3] = board;
    for (int i = 0; i < 12; i++) {
        c->argv[4 + 2 * i] = names[i];
        c->argv[5 + 2 * i] = c->val[i];
    }
    c->argv[28] = "gen";
    c->argv[29] = c->gen;
    c->argv[30] = "life"; /* the idempotency records' life (write.lua): this creation's */
    c->argv[31] = c->gen;
    c->create = 1;
    c->nkeys = 3;
    c->nargs = 29;
    return 0;
}

/* put_board.lua's call for a change of an existing board read as `cur`: 0, -ENOMEM, or
 * -EBADMSG (the board's zone is not one this process can load). */
int board_put_update_prepare(struct board_model *m, const char *board,
                             const struct board_settings *cur,
                             const struct board_settings_patch *patch, struct board_put_call *c)
{
    board_make_keys(m, board, &c->k);
    int periodic = cur->period != PERIOD_NONE;
    int next = patch->has_retain ? patch->value.retain : cur->retain;
    int lo = periodic ? (next < cur->retain ? next : cur->retain) : 0;
    int hi = periodic ? (next > cur->retain ? next : cur->retain) : 0;
    int64_t now = board_now_ms(m);
    struct period_tz tz = cur->tz;
    if (period_tz_bind(&tz, m->zones))
        return -EBADMSG; /* the board's zone is not one this process can load */
    /* the current set, the past ones, then the distinct scores, ids and updated_at times of
     * those emptied (d > lo) */
    c->zs = calloc(4 * (size_t)hi + 1, sizeof(*c->zs));
    c->argv = calloc(4 * (size_t)hi + 3 + 18, sizeof(*c->argv));
    if (!c->zs || !c->argv) {
        board_put_call_free(c);
        return -ENOMEM;
    }
    if (periodic)
        period_set_key(m, board, cur->period, &tz, now, 0, 0, c->zs[0]);
    else
        board_z_key(c->zs[0], KEY_MAX, m->prefix, board, NULL);
    for (int d = 1; d <= hi; d++)
        period_set_key(m, board, cur->period, &tz, now, d, 0, c->zs[d]);
    for (int d = lo + 1; d <= hi; d++) {
        period_set_key(m, board, cur->period, &tz, now, d, 1, c->zs[hi + 3 * (d - lo) - 2]);
        period_set_key(m, board, cur->period, &tz, now, d, 2, c->zs[hi + 3 * (d - lo) - 1]);
        period_set_key(m, board, cur->period, &tz, now, d, 3, c->zs[hi + 3 * (d - lo)]);
    }
    settings_text(&patch->value, c->val);
    struct board_settings applied; /* score_layout's text names the columns the board keeps */
    patch_apply(cur, patch, &applied);
    char layout[SCORE_LAYOUT_TEXT_MAX];
    snprintf(c->val[9], PERIOD_TZ_TEXT_MAX, "%s", score_layout_text(&applied.layout, layout));
    const int has[8] = {patch->has_order,    patch->has_tiebreak, patch->has_decimals,
                        patch->has_period,   patch->has_tz,       patch->has_page_size,
                        patch->has_page_ttl, patch->has_retain};
    period_tz_text(&cur->tz, c->tz, sizeof(c->tz));
    snprintf(c->retain, sizeof(c->retain), "%d", cur->retain);
    board_new_generation(c->gen);
    snprintf(c->nkeep, sizeof(c->nkeep), "%d", lo);
    snprintf(c->cut, sizeof(c->cut), "%" PRId64,
             periodic ? period_start(cur->period, &tz, now, -lo) : 0);
    int nk = 0;
    c->argv[nk++] = c->k.meta;
    c->argv[nk++] = c->zs[0];
    c->argv[nk++] = c->k.index;
    for (int d = 1; d <= hi + 3 * (hi - lo); d++)
        c->argv[nk++] = c->zs[d];
    int na = nk;
    c->argv[na++] = period_kind_name(cur->period);
    c->argv[na++] = c->tz;
    c->argv[na++] = c->retain;
    for (int i = 0; i < 8; i++)
        c->argv[na++] = has[i] ? c->val[i] : "";
    c->argv[na++] = c->gen;
    c->argv[na++] = c->nkeep;
    c->argv[na++] = c->cut;
    c->argv[na++] = patch->has_max_members ? c->val[8] : "";
    c->argv[na++] = patch->has_score_layout || patch->has_subscores ? c->val[9] : "";
    c->argv[na++] = patch->has_score_format ? c->val[10] : "";
    c->argv[na++] = patch->has_track_updated_at ? c->val[11] : "";
    c->create = 0;
    c->nkeys = nk;
    c->nargs = na - nk;
    return 0;
}

/* The reply of the PUT's script: 0 with *out (remembered as the board's view), PUT_AGAIN (the
 * board appeared, went or changed since it was read), -EEXIST with *field, or -EIO. */
int board_put_take(struct board_model *m, const char *board, int create,
                   const struct store_reply *r, const char **field, struct board_info *out)
{
    if (create) {
        if (r->type == STORE_REPLY_ARRAY && r->elements == 1 &&
            r->element[0]->type == STORE_REPLY_INTEGER && r->element[0]->integer == 0)
            return PUT_AGAIN; /* it exists after all: update it instead */
        if (r->type == STORE_REPLY_ARRAY && r->elements == 3 &&
            r->element[1]->type == STORE_REPLY_ARRAY) {
            put_reply_take(m, board, r, out);
            return 0;
        }
        return -EIO;
    }
    const struct store_reply *e0 =
        r->type == STORE_REPLY_ARRAY && r->elements >= 1 ? r->element[0] : NULL;
    if (e0 && e0->type == STORE_REPLY_STRING) /* 'absent' or 'retry' */
        return PUT_AGAIN;
    if (e0 && e0->type == STORE_REPLY_INTEGER && e0->integer < 0 && r->elements == 2) {
        static const char *const names[] = {
            "order",    "tiebreak",     "score_decimals",   "period",
            "timezone", "score_layout", "track_updated_at", "subscores"};
        *field = names[0];
        for (size_t i = 0; i < 8; i++)
            if (r->element[1]->str && strcmp(r->element[1]->str, names[i]) == 0)
                *field = names[i];
        return -EEXIST;
    }
    if (e0 && e0->type == STORE_REPLY_INTEGER && r->elements == 3 &&
        r->element[1]->type == STORE_REPLY_ARRAY) {
        put_reply_take(m, board, r, out);
        return 0;
    }
    return -EIO;
}

void board_delete_call_free(struct board_delete_call *c)
{
    free(c->zs);
    free(c->argv);
    c->zs = NULL;
    c->argv = NULL;
}

int board_delete_prepare(struct board_model *m, const char *board, const struct board_settings *set,
                         struct board_delete_call *c)
{
    board_make_keys(m, board, &c->k);
    /* what the board owns (board_owned_keys): the settings, the period index (delete_board.lua
     * UNLINKs every set it lists), the plain set and its distinct scores, and every readable
     * period's set with its distinct scores (listed too; named here as well, so a set the index
     * does not list, written by an older rankd, goes with them); the registry entry after the
     * settings. The other kinds of key become unreachable (board.h: enum board_key_fate). */
    char ids[PERIOD_RETAIN_MAX + 1][PERIOD_ID_MAX];
    int np = board_periods(m, set, ids, PERIOD_RETAIN_MAX + 1);
    int max = BOARD_KEY_KINDS + 4 * np;
    c->zs = calloc((size_t)max, sizeof(*c->zs));
    int n = c->zs ? board_owned_keys(m->prefix, board, (const char(*)[PERIOD_ID_MAX])ids, np, c->zs,
                                     max)
                  : -ENOMEM;
    c->argv = n >= 2 ? calloc((size_t)n + 2, sizeof(*c->argv)) : NULL;
    if (!c->argv) {
        board_delete_call_free(c);
        return -ENOMEM;
    }
    int nk = 0;
    c->argv[nk++] = c->zs[0]; /* the settings (BOARD_KEY_META) */
    c->argv[nk++] = c->k.script_registry;
    for (int i = 1; i < n; i++) /* the index (BOARD_KEY_INDEX) first */
        c->argv[nk++] = c->zs[i];
    c->argv[nk] = board;
    c->nkeys = nk;
    return 0;
}

/* 0 deleted (the view remembers the board is gone), -ENOENT, -EIO. */
int board_delete_take(struct board_model *m, const char *board, const struct store_reply *r)
{
    int rc = r->type == STORE_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
    if (rc == 0) {
        struct board_settings set;
        board_settings_default(&set);
        board_view_put(m, board, &set, 0);
    }
    return rc;
}

void board_reset_prepare(struct board_model *m, const char *board, const struct board_where *w,
                         struct board_reset_call *c)
{
    board_make_keys(m, board, &c->k);
    board_new_generation(c->gen);
    c->argv[0] = c->k.meta;
    c->argv[1] = w->z;
    c->argv[2] = w->dense;
    c->argv[3] = w->ids;
    c->argv[4] = w->upd;
    c->argv[5] = c->gen;
}

/* reset_board.lua's and delete_board.lua's 1/0 reply. */
int board_one_or_enoent(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
}

void board_trim_prepare(const struct board_model *m, const char *board,
                        const struct board_settings *set, const struct board_where *w, int64_t keep,
                        int64_t below_key, struct board_trim_call *c)
{
    struct board_keys k;
    board_make_keys(m, board, &k);
    util_copy(c->meta, sizeof(c->meta), k.meta);
    if (keep >= 0) {
        snprintf(c->from, sizeof(c->from), "%" PRId64, keep);
    } else {
        /* the first stored value of a worse score: (key + 1) * 2^T */
        int bits = score_codec_tie_bits(&set->layout);
        snprintf(c->from, sizeof(c->from), "%" PRId64, (below_key + 1) * (INT64_C(1) << bits));
    }
    snprintf(c->chunk, sizeof(c->chunk), "%d", TRIM_CHUNK);
    c->argv[0] = w->z;
    c->argv[1] = w->dense;
    c->argv[2] = c->meta;
    c->argv[3] = w->ids;
    c->argv[4] = w->upd;
    c->argv[5] = keep >= 0 ? "rank" : "score";
    c->argv[6] = c->from;
    c->argv[7] = c->chunk;
}

/* The members one trim.lua call removed. */
long long board_trim_take(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER ? r->integer : 0;
}

void board_member_delete_prepare(struct board_model *m, const char *board,
                                 const struct board_where *w, const char *id, size_t id_len,
                                 struct board_member_delete_call *c)
{
    board_make_keys(m, board, &c->k);
    c->argv[0] = c->k.meta;
    c->argv[1] = w->z;
    c->argv[2] = w->dense;
    c->argv[3] = w->ids;
    c->argv[4] = w->upd;
    c->argv[5] = id;
    c->lens[0] = strlen(c->k.meta);
    c->lens[1] = strlen(w->z);
    c->lens[2] = strlen(w->dense);
    c->lens[3] = strlen(w->ids);
    c->lens[4] = strlen(w->upd);
    c->lens[5] = id_len;
}

/* delete_member.lua's reply: 0, -ENOENT no board, -ENODATA no such member, -EIO. */
int board_member_delete_take(const struct store_reply *r)
{
    return r->type != STORE_REPLY_INTEGER ? -EIO
           : r->integer < 0               ? -ENOENT
           : r->integer == 0              ? -ENODATA
                                          : 0;
}

/* HGET of a record's reply: 0 and a new copy in *json, -ENODATA, -ENOMEM. */
int board_record_take(const struct store_reply *r, char **json)
{
    if (r->type != STORE_REPLY_STRING)
        return -ENODATA;
    return (*json = strndup(r->str, r->len)) ? 0 : -ENOMEM;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void board_list_free(struct board_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->totals);
    free(l);
}

/* The set a board's total is counted in, from its HMGET reply x (not freed). */
void board_list_where(const struct board_model *m, const char *name, const struct store_reply *x,
                      char z[KEY_MAX])
{
    struct board_settings set;
    board_settings_default(&set);
    if (x->type == STORE_REPLY_ARRAY && x->elements >= 3) {
        board_settings_field(&set, "period", x->element[0]->str);
        board_settings_field(&set, "timezone", x->element[1]->str);
        board_settings_field(&set, "retain", x->element[2]->str);
    }
    struct board_where w;
    board_where_resolve(m, name, set.period, &set.tz, set.retain, NULL, &w);
    snprintf(z, KEY_MAX, "%s", w.z);
}

/* Append the names of one SSCAN reply to l (grown as needed); *cursor = the next cursor. */
int board_list_take(struct board_list *l, size_t *cap, const struct store_reply *r,
                    uint64_t *cursor)
{
    if (r->type != STORE_REPLY_ARRAY || r->elements != 2 || !r->element[0]->str ||
        r->element[1]->type != STORE_REPLY_ARRAY)
        return -EIO;
    *cursor = strtoull(r->element[0]->str, NULL, 10);
    const struct store_reply *names = r->element[1];
    for (size_t i = 0; i < names->elements; i++) {
        if (l->n == *cap) {
            size_t ncap = *cap ? 2 * *cap : 64;
            char **nn = realloc(l->names, ncap * sizeof(*nn));
            if (!nn)
                return -ENOMEM;
            l->names = nn;
            *cap = ncap;
        }
        if (!(l->names[l->n] = strdup(names->element[i]->str)))
            return -ENOMEM;
        l->n++;
    }
    return 0;
}

/* Sort and drop the duplicates SSCAN may return. */
void board_list_sort_unique(struct board_list *l)
{
    if (l->n == 0)
        return;
    qsort(l->names, l->n, sizeof(*l->names), cmp_names);
    size_t w = 1;
    for (size_t i = 1; i < l->n; i++) {
        if (strcmp(l->names[i], l->names[w - 1]) == 0)
            free(l->names[i]);
        else
            l->names[w++] = l->names[i];
    }
    l->n = w;
}

/* SSCAN of the registry from `cursor`, asking for what `count` still lacks. */
void board_list_sscan(const struct board_keys *k, uint64_t cursor, int want, char cur[24],
                      char cnt[16], const char *argv[5])
{
    snprintf(cur, 24, "%" PRIu64, cursor);
    snprintf(cnt, 16, "%d", want);
    argv[0] = "SSCAN";
    argv[1] = k->registry;
    argv[2] = cur;
    argv[3] = "COUNT";
    argv[4] = cnt;
}
