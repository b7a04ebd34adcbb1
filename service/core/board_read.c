/*
 * board_read.c -- reads: each read script's call prepared (board_read_prepare,
 * board_lookup_prepare, board_boards_prepare) and its reply taken (board_*_take), without I/O. The
 * contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- reads */

/* An integer reply element (Lua numbers arrive as integers), else deflt. */
static int64_t reply_i64(const struct store_reply *r, int64_t deflt)
{
    return r && r->type == STORE_REPLY_INTEGER ? r->integer : deflt;
}

/* 1 when r is an array of at least n elements. */
static int reply_array(const struct store_reply *r, size_t n)
{
    return r && r->type == STORE_REPLY_ARRAY && r->elements >= n;
}

/* The record at records[i], when there is one. */
static void item_record(struct board_item *it, const struct store_reply *records, size_t i)
{
    if (reply_array(records, i + 1) && records->element[i]->type == STORE_REPLY_STRING) {
        it->record = records->element[i]->str;
        it->record_len = records->element[i]->len;
    }
}

/* Item i of p from its set member m (mlen bytes) and stored value text (NUL-terminated), at
 * 1-based position first + i, its rank from ranks (empty for ordinal: the position). */
static void item_fill(struct board_page *p, size_t i, const char *m, size_t mlen,
                      const char *stored, const struct store_reply *ranks, int64_t first)
{
    struct board_item *it = &p->items[i];
    size_t plen = score_codec_member_split(&p->settings.layout, m, mlen, &it->tie);
    score_codec_member_subscores(&p->settings.layout, m, mlen, it->sub);
    it->nsub = p->settings.layout.nsub;
    it->id = m + plen;
    it->id_len = mlen - plen;
    double v = board_stored_value(stored); /* read once: the score and the cursor's value */
    it->stored = (int64_t)v;
    if (!*stored || score_codec_decode(&p->settings.layout, v, &it->score) < 0)
        it->score = 0; /* board_decode_stored's reading */
    it->ordinal = first + (int64_t)i;
    it->rank = reply_array(ranks, i + 1) ? reply_i64(ranks->element[i], it->ordinal) : it->ordinal;
}

/* The next field of packed rows at *q: `skip` bytes (a `wide` member's prefix, which may hold
 * NULs), then bytes up to a NUL before end, which *q is moved past; NULL when there is none. */
static const char *rows_field(const char **q, const char *end, size_t skip, size_t *len)
{
    const char *f = *q;
    if ((size_t)(end - f) < skip)
        return NULL;
    const char *z = memchr(f + skip, 0, (size_t)(end - f) - skip);
    if (!z)
        return NULL;
    *len = (size_t)(z - f);
    *q = z + 1;
    return f;
}

/* Fill items from the range of a page's n entries packed in one string s of len bytes
 * (prelude_read.lua's packed()): each entry's set member and stored value, a NUL between two,
 * the last stored value running to the end; n is the records array's length (their records, as
 * Redis sends them). -EIO when s is not that shape: nothing is read past s + len. */
static int fill_packed(struct board_page *p, const char *s, size_t len,
                       const struct store_reply *records, const struct store_reply *ranks,
                       int64_t first)
{
    const char *q = s, *end = s + len;
    size_t plen = score_codec_member_prefix(&p->settings.layout);
    size_t n = records->type == STORE_REPLY_ARRAY ? records->elements : 0;
    if (n == 0)
        return -EIO;
    p->items = calloc(n, sizeof(*p->items));
    if (!p->items)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t mlen, slen;
        const char *m = rows_field(&q, end, plen, &mlen);
        if (!m)
            return -EIO;
        const char *stored = q; /* the last one ends at the reply's own NUL (store_reply.h) */
        if (i + 1 < n ? !rows_field(&q, end, 0, &slen)
                      : (slen = (size_t)(end - q), memchr(q, 0, slen) != NULL))
            return -EIO;
        if (slen == 0)
            return -EIO;
        item_fill(p, i, m, mlen, stored, ranks, first);
        item_record(&p->items[i], records, i);
    }
    p->n = n;
    return 0;
}

/* Fill items from a flat {member, stored, ...} range, a parallel records array and the ranks of
 * the type read (empty for ordinal: the position is the rank); the first entry is at 1-based
 * position `first`. A range that is one string holds the entries packed (fill_packed). */
static int fill_items(struct board_page *p, const struct store_reply *range,
                      const struct store_reply *records, const struct store_reply *ranks,
                      int64_t first)
{
    if (range->type == STORE_REPLY_STRING)
        return fill_packed(p, range->str, range->len, records, ranks, first);
    size_t n = range->type == STORE_REPLY_ARRAY ? range->elements / 2 : 0;
    p->items = calloc(n ? n : 1, sizeof(*p->items));
    if (!p->items)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct store_reply *id = range->element[2 * i];
        item_fill(p, i, id->str, id->len, range->element[2 * i + 1]->str, ranks, first);
        item_record(&p->items[i], records, i);
    }
    p->n = n;
    return 0;
}

/* The updated_at times of items[0..n) from the list t (a tracked board's reply's last element)
 * from t[at] on; -1 where there is none. */
static void fill_times(struct board_item *items, size_t n, const struct store_reply *t, size_t at)
{
    for (size_t i = 0; i < n; i++)
        items[i].updated_at = reply_array(t, at + i + 1) ? reply_i64(t->element[at + i], -1) : -1;
}

/* The times list of a tracked board's reply r (its last element), or NULL. */
static const struct store_reply *reply_times(const struct board_settings *s,
                                             const struct store_reply *r)
{
    return s->track_updated_at && r->elements > 0 ? r->element[r->elements - 1] : NULL;
}

/* A page-shaped reply {settings, total, size, ..., range, records, ranks} with the range at
 * range_at (r is taken). */
static int page_from_reply(struct board_model *m, const char *board, struct store_reply *r,
                           int64_t first_rank, size_t range_at, struct board_page **out)
{
    struct board_page *p = calloc(1, sizeof(*p));
    if (!p) {
        store_reply_free(r);
        return -ENOMEM;
    }
    board_view_note(m, board, r->element[0], &p->settings);
    p->total = reply_i64(r->element[1], 0);
    p->size = (int)reply_i64(r->element[2], 0);
    p->first = 0;
    p->end = p->total;
    p->reply = r;
    int rc = fill_items(p, r->element[range_at], r->element[range_at + 1],
                        r->elements > range_at + 2 ? r->element[range_at + 2] : NULL, first_rank);
    if (rc) {
        board_page_free(p);
        return rc;
    }
    fill_times(p->items, p->n, reply_times(&p->settings, r), 0);
    *out = p;
    return 0;
}

/* v in decimal into out[0..len). */
static void i64_text(char *out, size_t len, int64_t v)
{
    struct strb b;
    strb_init(&b, out, len);
    strb_i64(&b, v);
}

/* Keys and the prelude's arguments of a read of one board (lua/prelude_read.lua's layout):
 * settings, set, records, distinct scores, ids hash, updated_at hash; period kind, offset,
 * retain, rank type. Returns how many argv slots it filled (10). */
static int read_head(struct board_model *m, const char *board, const struct board_where *w,
                     enum rank_type rank, struct board_read *out)
{
    /* the two keys of the board's own it needs (board_make_keys makes six: every read) */
    struct strb b;
    board_key_make(&b, out->meta, sizeof(out->meta), m->prefix, board, BOARD_KEY_META);
    if (board_clustered(m)) /* the records are in other slots: the settings again */
        util_copy(out->items, sizeof(out->items), out->meta);
    else
        records_key(m->prefix, 0, "", 0, out->items, sizeof(out->items));
    util_copy(out->z, sizeof(out->z), w->z);
    util_copy(out->dense, sizeof(out->dense), w->dense);
    util_copy(out->ids, sizeof(out->ids), w->ids);
    util_copy(out->upd, sizeof(out->upd), w->upd);
    period_tz_text(&w->tz, out->tz, sizeof(out->tz)); /* no snprintf: every read prepares one */
    i64_text(out->retain, sizeof(out->retain), w->retain);
    const char *head[] = {out->meta,
                          out->z,
                          out->items,
                          out->dense,
                          out->ids,
                          out->upd,
                          period_kind_name(w->kind),
                          out->tz,
                          out->retain,
                          rank_type_name(rank)};
    for (int i = 0; i < 10; i++) {
        out->argv[i] = head[i];
        out->lens[i] = strlen(head[i]);
    }
    out->nkeys = 6;
    return 10;
}

/* Append the argument s (n bytes) at argv[*k] (read calls). */
static void arg_put(struct board_read *r, int *k, const char *s, size_t n)
{
    r->argv[*k] = s;
    r->lens[(*k)++] = n;
}

void board_read_prepare(struct board_model *m, const char *board, const struct board_where *w,
                        const struct board_read_args *a, struct board_read *out)
{
    static const int scripts[] = {SCRIPT_PAGE,         SCRIPT_MEMBER,     SCRIPT_AROUND,
                                  SCRIPT_AROUND_SCORE, SCRIPT_PERCENTILE, SCRIPT_TOP,
                                  SCRIPT_WALK};
    static const char *const walks[] = {"page", "after", "before", "check"};
    int k = read_head(m, board, w, a->kind == BOARD_READ_PERCENTILE ? RANK_ORDINAL : a->rank, out);
    out->script = board_script(scripts[a->kind]);
    char(*num)[32] = out->num;
    i64_text(num[0], 32, a->page);
    i64_text(num[1], 32, a->size);
    switch (a->kind) {
    case BOARD_READ_PAGE: /* page.lua: page, size, the ids of `with` */
        arg_put(out, &k, num[0], strlen(num[0]));
        arg_put(out, &k, num[1], strlen(num[1]));
        for (size_t i = 0; i < a->nwith && i < BOARD_WITH_MAX; i++)
            arg_put(out, &k, a->with[i], a->with_lens[i]);
        break;
    case BOARD_READ_MEMBER: /* member.lua: id; around.lua: id, size */
    case BOARD_READ_AROUND:
        arg_put(out, &k, a->id, a->id_len);
        if (a->kind == BOARD_READ_AROUND)
            arg_put(out, &k, num[1], strlen(num[1]));
        break;
    case BOARD_READ_AROUND_SCORE: /* the layout judged under, the key or '', size */
        i64_text(num[2], 32, a->layout.decimals);
        i64_text(num[3], 32, a->key);
        arg_put(out, &k, score_order_name(a->layout.order),
                strlen(score_order_name(a->layout.order)));
        arg_put(out, &k, score_tiebreak_name(a->layout.tiebreak),
                strlen(score_tiebreak_name(a->layout.tiebreak)));
        arg_put(out, &k, num[2], strlen(num[2]));
        arg_put(out, &k, num[3], a->refused ? 0 : strlen(num[3]));
        arg_put(out, &k, num[1], strlen(num[1]));
        score_layout_text(&a->layout, num[8]);
        arg_put(out, &k, num[8], strlen(num[8]));
        break;
    case BOARD_READ_PERCENTILE: /* percentile.lua, top.lua: num, den */
    case BOARD_READ_TOP:
        i64_text(num[3], 32, a->num);
        i64_text(num[4], 32, a->den);
        arg_put(out, &k, num[3], strlen(num[3]));
        arg_put(out, &k, num[4], strlen(num[4]));
        break;
    case BOARD_READ_WALK: /* the layout, lo, hi, mode, page, edge stored, id, gen, size */
        i64_text(num[2], 32, a->layout.decimals);
        i64_text(num[3], 32, a->lo);
        i64_text(num[4], 32, a->hi);
        i64_text(num[5], 32, a->edge_stored);
        i64_text(num[6], 32, a->edge_gen);
        arg_put(out, &k, score_order_name(a->layout.order),
                strlen(score_order_name(a->layout.order)));
        arg_put(out, &k, score_tiebreak_name(a->layout.tiebreak),
                strlen(score_tiebreak_name(a->layout.tiebreak)));
        arg_put(out, &k, num[2], strlen(num[2]));
        arg_put(out, &k, num[3], a->has_lo ? strlen(num[3]) : 0);
        arg_put(out, &k, num[4], a->has_hi ? strlen(num[4]) : 0);
        arg_put(out, &k, walks[a->walk], strlen(walks[a->walk]));
        arg_put(out, &k, num[0], strlen(num[0]));
        arg_put(out, &k, num[5], strlen(num[5]));
        arg_put(out, &k, a->edge_id ? a->edge_id : "", a->edge_id ? a->edge_id_len : 0);
        arg_put(out, &k, num[6], strlen(num[6]));
        arg_put(out, &k, num[1], strlen(num[1]));
        i64_text(num[7], 32, a->edge_tie);
        arg_put(out, &k, num[7], strlen(num[7]));
        score_layout_text(&a->layout, num[8]);
        arg_put(out, &k, num[8], strlen(num[8]));
        arg_put(out, &k, a->edge_sub ? (const char *)a->edge_sub : "", a->edge_sub_len);
        break;
    }
    out->nargs = k - out->nkeys;
}

int64_t board_read_version(const struct store_reply *r)
{
    if (r->type == STORE_REPLY_NIL)
        return 0; /* no such board (yet, where the read went) */
    if (r->type != STORE_REPLY_ARRAY || r->elements < 2 || !board_settings_reply(r->element[0]))
        return -1; /* a retry, a refusal ({'layout', settings}), an error */
    const struct store_reply *set = r->element[0];
    if (set->type == STORE_REPLY_STRING) { /* the read scripts' settings */
        struct board_settings s;
        board_settings_from_reply(set, &s);
        return s.version;
    }
    for (size_t i = 0; i + 1 < set->elements; i += 2)
        if (set->element[i]->type == STORE_REPLY_STRING &&
            set->element[i + 1]->type == STORE_REPLY_STRING &&
            strcmp(set->element[i]->str, "version") == 0)
            return strtoll(set->element[i + 1]->str, NULL, 10);
    return 0; /* no write yet */
}

/* A read script's reply before its shape is checked: 0, -EAGAIN for a {'retry', ...} answer
 * (learnt), -ENOSYS for {'dense_unavailable'}, -EIO for a Redis error reply. Frees r unless 0. */
static int read_reply_check(struct board_model *m, const char *board, struct store_reply *r)
{
    int rc = 0;
    if (r->type == STORE_REPLY_ERROR)
        rc = -EIO;
    else if (board_where_learn(m, board, r))
        rc = -EAGAIN;
    else if (reply_array(r, 1) && r->element[0]->type == STORE_REPLY_STRING &&
             strcmp(r->element[0]->str, "dense_unavailable") == 0)
        rc = -ENOSYS;
    if (rc)
        store_reply_free(r);
    return rc;
}

/* read_reply_check, then: nil (no board) -ENOENT, fewer than n elements -EIO; r freed unless 0. */
static int read_reply_shape(struct board_model *m, const char *board, struct store_reply *r,
                            size_t n)
{
    int rc = read_reply_check(m, board, r);
    if (rc)
        return rc;
    rc = r->type != STORE_REPLY_ARRAY ? -ENOENT : r->elements < n ? -EIO : 0;
    if (rc)
        store_reply_free(r);
    return rc;
}

static int page_with_take(struct board_page *p, const struct store_reply *r);

int board_page_take(struct board_model *m, const char *board, struct store_reply *r, int64_t page,
                    struct board_page **out)
{
    int rc = read_reply_shape(m, board, r, 6);
    if (rc)
        return rc;
    int64_t used = reply_i64(r->element[2], 0);
    int64_t count = r->elements > 6 ? reply_i64(r->element[6], 0) : 0; /* top.lua's */
    size_t elements = r->elements;
    rc = page_from_reply(m, board, r, (page - 1) * used + 1, 3, out);
    if (rc == 0)
        (*out)->count = count;
    /* page.lua with ids: {..., found, missing[, prefixes on a wide board]}, and a tracked
     * board's times after them (top.lua's reply is shorter: 7, its count last but the times) */
    int with = rc == 0 && elements - ((*out)->settings.track_updated_at ? 1 : 0) >= 8;
    if (with && (rc = page_with_take(*out, (*out)->reply)) != 0) {
        board_page_free(*out);
        *out = NULL;
    }
    return rc;
}

int board_around_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_page **out)
{
    int rc = read_reply_shape(m, board, r, 7);
    if (rc)
        return rc;
    int64_t start = reply_i64(r->element[3], -1);
    if (start < 0) {
        struct board_settings set;
        board_view_note(m, board, r->element[0], &set);
        store_reply_free(r);
        return -ENODATA;
    }
    return page_from_reply(m, board, r, start + 1, 4, out);
}

int board_around_score_take(struct board_model *m, const char *board, struct store_reply *r,
                            struct board_settings *seen, struct board_page **out)
{
    int rc = read_reply_shape(m, board, r, 2);
    if (rc)
        return rc;
    const struct store_reply *tag = r->element[0];
    if (tag->type == STORE_REPLY_STRING &&
        (strcmp(tag->str, "layout") == 0 || strcmp(tag->str, "refused") == 0)) {
        board_view_note(m, board, r->element[1], seen);
        store_reply_free(r);
        return -ESTALE;
    }
    return board_around_take(m, board, r, out);
}

int board_walk_take(struct board_model *m, const char *board, struct store_reply *r, int ranged,
                    struct board_settings *seen, struct board_page **out)
{
    int rc = read_reply_shape(m, board, r, 1);
    if (rc)
        return rc;
    const struct store_reply *tag = r->element[0];
    if (tag->type == STORE_REPLY_STRING && strcmp(tag->str, "expired") == 0)
        rc = -EKEYEXPIRED;
    else if (tag->type == STORE_REPLY_STRING && strcmp(tag->str, "invalid") == 0)
        rc = -EBADR;
    else if (tag->type == STORE_REPLY_STRING && r->elements > 1 &&
             (strcmp(tag->str, "layout") == 0 || strcmp(tag->str, "refused") == 0))
        rc = -ESTALE;
    else if (r->elements < 9)
        rc = -EIO;
    if (rc == -ESTALE) {
        board_view_note(m, board, r->element[1], seen);
    }
    if (rc) {
        store_reply_free(r);
        return rc;
    }
    int64_t first = reply_i64(r->element[7], 0), end = reply_i64(r->element[8], 0);
    rc = page_from_reply(m, board, r, reply_i64(r->element[3], 0) + 1, 4, out);
    if (rc == 0) {
        (*out)->first = first;
        (*out)->end = end;
        (*out)->ranged = ranged;
    }
    return rc;
}

int board_member_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_member **out)
{
    int rc = read_reply_shape(m, board, r, 6);
    if (rc)
        return rc;
    struct board_settings set;
    board_view_note(m, board, r->element[0], &set);
    struct board_member *mb = NULL;
    if (r->element[2]->type != STORE_REPLY_STRING)
        rc = -ENODATA;
    else if (!(mb = calloc(1, sizeof(*mb))))
        rc = -ENOMEM;
    if (rc) {
        store_reply_free(r);
        return rc;
    }
    mb->settings = set;
    mb->total = reply_i64(r->element[1], 0);
    mb->score = board_decode_stored(&mb->settings.layout, r->element[2]->str);
    mb->ordinal = reply_i64(r->element[3], 0) + 1;
    mb->rank = reply_i64(r->element[5], mb->ordinal);
    if (r->elements > 7 && r->element[7]->type == STORE_REPLY_STRING) /* the set member */
        score_codec_member_subscores(&set.layout, r->element[7]->str, r->element[7]->len, mb->sub);
    if (r->element[4]->type == STORE_REPLY_STRING) {
        mb->record = r->element[4]->str;
        mb->record_len = r->element[4]->len;
    }
    mb->updated_at = r->elements > 6 ? reply_i64(r->element[6], -1) : -1;
    mb->reply = r;
    *out = mb;
    return 0;
}

int board_percentile_take(struct board_model *m, const char *board, struct store_reply *r,
                          struct board_percentile **out)
{
    int rc = read_reply_shape(m, board, r, 3);
    if (rc)
        return rc;
    struct board_settings set;
    board_view_note(m, board, r->element[0], &set);
    struct board_percentile *p = calloc(1, sizeof(*p));
    if (!p) {
        store_reply_free(r);
        return -ENOMEM;
    }
    p->settings = set;
    p->total = reply_i64(r->element[1], 0);
    p->rank = reply_i64(r->element[2], 0);
    if (p->rank > 0 && r->elements >= 5 && r->element[3]->type == STORE_REPLY_STRING &&
        r->element[4]->type == STORE_REPLY_STRING) {
        int64_t tie;
        size_t plen = score_codec_member_split(&p->settings.layout, r->element[3]->str,
                                               r->element[3]->len, &tie);
        p->id = r->element[3]->str + plen;
        p->id_len = r->element[3]->len - plen;
        score_codec_member_subscores(&p->settings.layout, r->element[3]->str, r->element[3]->len,
                                     p->sub);
        p->score = board_decode_stored(&p->settings.layout, r->element[4]->str);
        const struct store_reply *t = r->elements > 5 ? reply_times(&p->settings, r) : NULL;
        p->updated_at = reply_array(t, 1) ? reply_i64(t->element[0], -1) : -1;
    } else {
        p->rank = 0;
    }
    p->reply = r;
    *out = p;
    return 0;
}

void board_percentile_free(struct board_percentile *p)
{
    if (!p)
        return;
    store_reply_free(p->reply);
    free(p);
}

/* ---- many members of one board */

/* An id and where it was asked, for finding the ids given twice. */
struct id_ref {
    const char *id;
    size_t len, at;
};

static int cmp_id_ref(const void *a, const void *b)
{
    const struct id_ref *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    int c = memcmp(x->id, y->id, x->len);
    if (c)
        return c;
    return x->at < y->at ? -1 : x->at > y->at;
}

void board_lookup_call_free(struct board_lookup_call *c)
{
    free(c->argv);
    free(c->lens);
    c->argv = NULL;
    c->lens = NULL;
}

int board_lookup_prepare(struct board_model *m, const char *board, const struct board_where *w,
                         enum rank_type rank, const char *const *ids, const size_t *lens, size_t n,
                         struct board_lookup_call *out)
{
    memset(out, 0, sizeof(*out));
    int head = read_head(m, board, w, rank, &out->head);
    struct id_ref *refs = calloc(n ? n : 1, sizeof(*refs));
    char *twice = calloc(n ? n : 1, 1);
    out->argv = calloc((size_t)head + n, sizeof(*out->argv));
    out->lens = calloc((size_t)head + n, sizeof(*out->lens));
    if (!refs || !twice || !out->argv || !out->lens) {
        free(refs);
        free(twice);
        board_lookup_call_free(out);
        return -ENOMEM;
    }
    /* each id once, where it was first asked: sorted by bytes, the later copies marked */
    for (size_t i = 0; i < n; i++)
        refs[i] = (struct id_ref){ids[i], lens[i], i};
    qsort(refs, n, sizeof(*refs), cmp_id_ref);
    for (size_t i = 1; i < n; i++)
        if (refs[i].len == refs[i - 1].len && memcmp(refs[i].id, refs[i - 1].id, refs[i].len) == 0)
            twice[refs[i].at] = 1;
    memcpy(out->argv, out->head.argv, (size_t)head * sizeof(*out->argv));
    memcpy(out->lens, out->head.lens, (size_t)head * sizeof(*out->lens));
    int k = head;
    for (size_t i = 0; i < n; i++)
        if (!twice[i]) {
            out->argv[k] = ids[i];
            out->lens[k++] = lens[i];
        }
    free(refs);
    free(twice);
    out->script = board_script(SCRIPT_LOOKUP);
    out->nkeys = out->head.nkeys;
    out->nargs = k - out->nkeys;
    return 0;
}

static int cmp_item_ordinal(const void *a, const void *b)
{
    const struct board_item *x = a, *y = b;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

void board_lookup_free(struct board_lookup *l)
{
    if (!l)
        return;
    store_reply_free(l->reply);
    free(l->items);
    free(l->missing);
    free(l->missing_len);
    free(l);
}

/* The sub-scores of found entry i from the set-member prefixes of the found (lookup_ids' on a
 * `wide` board; NULL elsewhere). */
static void lookup_subscores(const struct score_layout *l, const struct store_reply *pre, size_t i,
                             struct board_item *it)
{
    it->nsub = l->nsub;
    if (l->nsub > 0 && reply_array(pre, i + 1) && pre->element[i]->type == STORE_REPLY_STRING)
        score_codec_member_subscores(l, pre->element[i]->str, pre->element[i]->len, it->sub);
}

/* A lookup's members from a reply's found {id, stored, rank0, rank, ...} and missing {id, ...}
 * lists and the records of the found, from records[rec_at] on (the reply stays the caller's):
 * 0 or -EIO / -ENOMEM (l partly filled: board_lookup_free). */
static int lookup_fill(struct board_lookup *l, const struct store_reply *found,
                       const struct store_reply *missing, const struct store_reply *records,
                       size_t rec_at, const struct store_reply *prefixes,
                       const struct store_reply *times)
{
    if (found->type != STORE_REPLY_ARRAY || missing->type != STORE_REPLY_ARRAY)
        return -EIO;
    size_t n = found->elements / 4, nm = missing->elements;
    l->items = calloc(n ? n : 1, sizeof(*l->items));
    l->missing = calloc(nm ? nm : 1, sizeof(*l->missing));
    l->missing_len = calloc(nm ? nm : 1, sizeof(*l->missing_len));
    if (!l->items || !l->missing || !l->missing_len)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct store_reply **x = found->element + 4 * i;
        struct board_item *it = &l->items[i];
        if (x[0]->type != STORE_REPLY_STRING || x[1]->type != STORE_REPLY_STRING)
            return -EIO;
        it->id = x[0]->str;
        it->id_len = x[0]->len;
        it->score = board_decode_stored(&l->settings.layout, x[1]->str);
        it->stored = (int64_t)board_stored_value(x[1]->str);
        it->ordinal = reply_i64(x[2], 0) + 1;
        it->rank = reply_i64(x[3], it->ordinal);
        item_record(it, records, rec_at + i);
        lookup_subscores(&l->settings.layout, prefixes, i, it);
        fill_times(it, 1, times, rec_at + i);
    }
    qsort(l->items, n, sizeof(*l->items), cmp_item_ordinal);
    l->n = n;
    for (size_t i = 0; i < nm; i++) {
        if (missing->element[i]->type != STORE_REPLY_STRING)
            return -EIO;
        l->missing[i] = missing->element[i]->str;
        l->missing_len[i] = missing->element[i]->len;
    }
    l->nmissing = nm;
    return 0;
}

int board_lookup_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_lookup **out)
{
    int rc = read_reply_shape(m, board, r, 5);
    if (rc)
        return rc;
    struct board_settings set;
    board_view_note(m, board, r->element[0], &set);
    struct board_lookup *l = calloc(1, sizeof(*l));
    if (!l) {
        store_reply_free(r);
        return -ENOMEM;
    }
    l->reply = r;
    l->settings = set;
    l->total = reply_i64(r->element[1], 0);
    rc = lookup_fill(l, r->element[2], r->element[3], r->element[4], 0,
                     r->elements > 5 + (size_t)(l->settings.track_updated_at != 0) ? r->element[5]
                                                                                   : NULL,
                     reply_times(&l->settings, r));
    if (rc) {
        board_lookup_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* page.lua's `with` part of r (the page's reply, which p holds): p->with, its records after
 * the page's in the records list. */
static int page_with_take(struct board_page *p, const struct store_reply *r)
{
    struct board_lookup *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    p->with = l; /* freed with the page; its strings are in the page's reply */
    l->settings = p->settings;
    l->total = p->total;
    return lookup_fill(l, r->element[6], r->element[7], r->element[4], p->n,
                       r->elements > 8 + (size_t)(p->settings.track_updated_at != 0) ? r->element[8]
                                                                                     : NULL,
                       reply_times(&p->settings, r));
}

/* ---- one member on several boards */

size_t board_boards_calls(const struct board_model *m, size_t n)
{
    /* a cluster: a script holds one slot, and each board is a slot of its own */
    return board_clustered(m) ? n : (size_t)(n > 0);
}

void board_boards_prepare(struct board_model *m, const char *const *boards, size_t n,
                          const char *id, size_t id_len, enum rank_type rank,
                          struct board_boards_call *out)
{
    int nk = 0, na = 0;
    const char *args[2 + 3 * BOARD_MEMBER_BOARDS_MAX];
    size_t alens[2 + 3 * BOARD_MEMBER_BOARDS_MAX];
    args[na] = id, alens[na++] = id_len;
    args[na] = rank_type_name(rank), alens[na] = strlen(args[na]), na++;
    for (size_t i = 0; i < n && i < BOARD_MEMBER_BOARDS_MAX; i++) {
        struct board_keys k;
        struct board_where w;
        board_make_keys(m, boards[i], &k);
        board_where_cached(m, boards[i], NULL, &w); /* the current period: never a Redis call */
        util_copy(out->keys[nk++], KEY_MAX, k.meta);
        util_copy(out->keys[nk++], KEY_MAX, w.z);
        util_copy(out->keys[nk++], KEY_MAX, w.dense);
        util_copy(out->keys[nk++], KEY_MAX, w.ids);
        util_copy(out->keys[nk++], KEY_MAX, w.upd);
        period_tz_text(&w.tz, out->nums[2 * i], sizeof(out->nums[0]));
        snprintf(out->nums[2 * i + 1], sizeof(out->nums[0]), "%d", w.retain);
        args[na] = period_kind_name(w.kind), alens[na] = strlen(args[na]), na++;
        args[na] = out->nums[2 * i], alens[na] = strlen(args[na]), na++;
        args[na] = out->nums[2 * i + 1], alens[na] = strlen(args[na]), na++;
    }
    for (int i = 0; i < nk; i++) {
        out->argv[i] = out->keys[i];
        out->lens[i] = strlen(out->keys[i]);
    }
    for (int i = 0; i < na; i++) {
        out->argv[nk + i] = args[i];
        out->lens[nk + i] = alens[i];
    }
    out->script = board_script(SCRIPT_MEMBER_BOARDS);
    out->nkeys = nk;
    out->nargs = na;
}

int board_boards_take(struct board_model *m, const char *const *boards, size_t n,
                      struct store_reply *r, struct board_on_board *out, size_t *bad)
{
    /* an error reply, or not this script's shape: -EIO */
    int rc = r->type == STORE_REPLY_ARRAY && r->elements == n ? 0 : -EIO;
    const struct store_reply *tag = reply_array(r, 2) ? r->element[0] : NULL;
    if (tag && tag->type == STORE_REPLY_STRING && strcmp(tag->str, "retry") == 0) {
        const struct store_reply *x = r->element[1]; /* {i, period, offset, retain, ...} */
        for (size_t i = 0; reply_array(x, i + 4); i += 4) {
            int64_t b = reply_i64(x->element[i], -1);
            if (b >= 0 && (size_t)b < n)
                board_where_note(m, boards[b], x->element[i + 1]->str, x->element[i + 2]->str,
                                 x->element[i + 3]->str);
        }
        rc = -EAGAIN;
    } else if (tag && tag->type == STORE_REPLY_STRING &&
               strcmp(tag->str, "dense_unavailable") == 0) {
        int64_t b = reply_i64(r->element[1], -1);
        *bad = b >= 0 && (size_t)b < n ? (size_t)b : 0;
        rc = b >= 0 && (size_t)b < n ? -ENOSYS : -EIO;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct store_reply *e = r->element[i];
        memset(&out[i], 0, sizeof(out[i]));
        if (!reply_array(e, 5)) /* nil: no such board */
            continue;
        board_view_note(m, boards[i], e->element[0], &out[i].settings);
        out[i].exists = 1;
        out[i].total = reply_i64(e->element[1], 0);
        if (e->element[2]->type != STORE_REPLY_STRING)
            continue;
        out[i].found = 1;
        out[i].score = board_decode_stored(&out[i].settings.layout, e->element[2]->str);
        out[i].ordinal = reply_i64(e->element[3], 0) + 1;
        out[i].rank = reply_i64(e->element[4], out[i].ordinal);
        const struct store_reply *sm = e->elements > 5 ? e->element[5] : NULL;
        if (sm && sm->type == STORE_REPLY_STRING)
            score_codec_member_subscores(&out[i].settings.layout, sm->str, sm->len, out[i].sub);
        out[i].updated_at = e->elements > 6 ? reply_i64(e->element[6], -1) : -1;
    }
    store_reply_free(r);
    return rc;
}

void board_page_free(struct board_page *p)
{
    if (!p)
        return;
    store_reply_free(p->reply);
    board_lookup_free(p->with);
    free(p->items);
    free(p);
}

void board_member_free(struct board_member *mb)
{
    if (!mb)
        return;
    store_reply_free(mb->reply);
    free(mb);
}
