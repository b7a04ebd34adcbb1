/*
 * board_view.c -- which set a request reads: this process's view of its boards (struct
 * board_view, owned by the model: period hints, settings, the registry memo), the period resolver.
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- periods: which set */

/*
 * What this process last saw of boards' period settings, so that a read goes to the right set in
 * one round trip. Only a hint: every read script checks it against the settings hash and answers
 * {'retry', ...} when it is stale. A fixed table; a collision just overwrites (costs a retry).
 */
#define HINT_SLOTS 1024
struct hint {
    char key[KEY_MAX]; /* prefix and board */
    enum period_kind kind;
    struct period_tz tz;
    int retain;
};

/*
 * What this process last read of each board's whole settings hash (from a settings read, a read
 * script's reply or a PUT), so that a write on an event thread can validate its scores and send
 * its script without reading the settings first. The write script checks the layout and periods
 * against the hash and refuses a stale view (-EAGAIN: read, validate again, resume); a view is
 * used for at most VIEW_MAX_AGE_MS, which bounds how long a setting the script does not check
 * (retain: the sweep after a new period's first write is computed from it, and sweep.lua checks
 * it, so a stale one only skips that sweep) can lag another process's change. A fixed table.
 */
#define VIEW_MAX_AGE_MS 1000
struct view {
    char key[KEY_MAX]; /* prefix and board */
    struct board_settings set;
    int exists;
    int64_t seen_ms; /* monotonic */
};

/* Boards this process added to the registry lately (a cluster), so that the writes following a
 * new board's first (an upload's chunks, within the view's second) do not each add it again: by
 * the hash of the board's key, the last REGISTERED_MS. Forgotten when the board is deleted. A
 * stale entry costs nothing: write.lua says when it created a board, and the registry gets it
 * then. */
#define REGISTERED_SLOTS 64
#define REGISTERED_MS 10000
struct registered {
    char key[KEY_MAX];
    int64_t at_ms;
};

/* Everything this process remembers of its boards, one per model (struct board_model.view). */
struct board_view {
    struct hint hints[HINT_SLOTS];
    pthread_mutex_t hint_lock;
    struct view views[HINT_SLOTS];
    pthread_mutex_t view_lock;
    struct registered registered[REGISTERED_SLOTS];
    pthread_mutex_t registered_lock;
};

int board_model_init(struct board_model *m)
{
    struct board_view *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    pthread_mutex_init(&v->hint_lock, NULL);
    pthread_mutex_init(&v->view_lock, NULL);
    pthread_mutex_init(&v->registered_lock, NULL);
    m->view = v;
    m->zones = tzif_cache_new(NULL);
    if (!m->zones) {
        board_model_free(m);
        return -ENOMEM;
    }
    return 0;
}

void board_model_free(struct board_model *m)
{
    tzif_cache_free(m->zones);
    m->zones = NULL;
    struct board_view *v = m->view;
    if (!v)
        return;
    pthread_mutex_destroy(&v->hint_lock);
    pthread_mutex_destroy(&v->view_lock);
    pthread_mutex_destroy(&v->registered_lock);
    free(v);
    m->view = NULL;
}

static size_t hint_slot(const char *key, char *full, size_t len, const struct board_model *m)
{
    struct strb b; /* no snprintf: every read and write looks its board up here */
    strb_init(&b, full, len);
    strb_str(&b, m->prefix);
    strb_str(&b, "\n");
    strb_str(&b, key);
    return (size_t)(util_fnv1a(full, b.len) % HINT_SLOTS);
}

static void hint_read(const struct board_model *m, const char *board, struct hint *out)
{
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    struct board_view *v = m->view;
    if (v)
        pthread_mutex_lock(&v->hint_lock);
    int hit = v && strcmp(v->hints[i].key, full) == 0;
    if (hit) {
        *out = v->hints[i];
    } else {
        memset(out, 0, sizeof(*out));
        out->kind = PERIOD_NONE;
        out->retain = 1;
    }
    if (v)
        pthread_mutex_unlock(&v->hint_lock);
}

/* The hint of slot i (hint_slot's, for the key `full`). */
static void hint_write_at(struct board_view *v, size_t i, const char *full, enum period_kind kind,
                          const struct period_tz *tz, int retain)
{
    pthread_mutex_lock(&v->hint_lock);
    util_copy(v->hints[i].key, sizeof(v->hints[i].key), full);
    v->hints[i].kind = kind;
    v->hints[i].tz = *tz;
    v->hints[i].retain = retain;
    pthread_mutex_unlock(&v->hint_lock);
}

static void hint_write(const struct board_model *m, const char *board, enum period_kind kind,
                       const struct period_tz *tz, int retain)
{
    struct board_view *v = m->view;
    if (!v)
        return;
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    hint_write_at(v, i, full, kind, tz, retain);
}

void board_view_put(const struct board_model *m, const char *board,
                    const struct board_settings *set, int exists)
{
    struct board_view *v = m->view;
    if (!v)
        return;
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&v->view_lock);
    util_copy(v->views[i].key, sizeof(v->views[i].key), full);
    v->views[i].set = *set;
    v->views[i].exists = exists;
    v->views[i].seen_ms = util_now_ms();
    pthread_mutex_unlock(&v->view_lock);
    hint_write_at(v, i, full, set->period, &set->tz, set->retain); /* the same slot: one hash */
}

/* A board's settings as a flat HGETALL reply (empty: no board): parsed into *out (the defaults
 * when r is not one) and remembered. */
void board_view_note(const struct board_model *m, const char *board, const struct store_reply *r,
                     struct board_settings *out)
{
    board_settings_from_reply(r, out);
    if (board_settings_reply(r)) /* an empty hash: no board */
        board_view_put(m, board, out, r->type == STORE_REPLY_ARRAY ? r->elements > 0 : r->len > 1);
}

int board_settings_cached(struct board_model *m, const char *board, struct board_settings *out,
                          int *exists)
{
    struct board_view *v = m->view;
    if (!v)
        return -EAGAIN;
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&v->view_lock);
    int hit =
        strcmp(v->views[i].key, full) == 0 && util_now_ms() - v->views[i].seen_ms < VIEW_MAX_AGE_MS;
    if (hit) {
        *out = v->views[i].set;
        *exists = v->views[i].exists;
    }
    pthread_mutex_unlock(&v->view_lock);
    return hit ? 0 : -EAGAIN;
}

int64_t board_now_ms(const struct board_model *m)
{
    if (m->clock_ms)
        return m->clock_ms();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* <prefix>:{<board>}:<what>, or with a period <prefix>:{<board>}:<what>:<period>
 * (schema/redis-keys.md): what is BOARD_KEY_SET ("z") or BOARD_KEY_DENSE ("dense", its distinct
 * scores); on every page hit, hence no snprintf */
void board_set_key(char *out, size_t len, const char *prefix, const char *board,
                   enum board_key_kind what, const char *period)
{
    struct strb b;
    board_key_make(&b, out, len, prefix, board, what);
    if (period) {
        strb_str(&b, ":");
        strb_str(&b, period);
    }
}

void board_z_key(char *out, size_t len, const char *prefix, const char *board, const char *period)
{
    board_set_key(out, len, prefix, board, BOARD_KEY_SET, period);
}

static void dense_key(char *out, size_t len, const char *prefix, const char *board,
                      const char *period)
{
    board_set_key(out, len, prefix, board, BOARD_KEY_DENSE, period);
}

/* w->ids: the set's ids hash (read by a `wide` board's scripts), and w->upd its updated_at
 * hash (a board that tracks them); on a cluster, where boards are
 * always packed (board.h: board_clustered), the set's own key, so that no script names a key
 * that does not exist beside its set (a slot being migrated refuses such a call: TRYAGAIN). */
static void where_ids(const struct board_model *m, const char *board, const char *period,
                      struct board_where *w)
{
    if (board_clustered(m)) {
        util_copy(w->ids, sizeof(w->ids), w->z);
        util_copy(w->upd, sizeof(w->upd), w->z); /* no board tracks updated_at there */
    } else {
        board_set_key(w->ids, sizeof(w->ids), m->prefix, board, BOARD_KEY_IDS, period);
        board_set_key(w->upd, sizeof(w->upd), m->prefix, board, BOARD_KEY_UPD, period);
    }
}

/* The set for `requested` (NULL/"": current) under the given period settings, without its keys
 * (z, dense, ids and upd ""). */
static int where_place(const struct board_model *m, enum period_kind kind,
                       const struct period_tz *tz, int retain, const char *requested,
                       struct board_where *w)
{
    memset(w, 0, sizeof(*w));
    w->kind = kind;
    w->tz = *tz;
    w->retain = retain;
    int asked = requested && requested[0];
    if (kind == PERIOD_NONE)
        return asked ? -ENOTSUP : 0;
    /* a zone this process cannot load (another one's tzdata named it): no set can be placed */
    if (period_tz_bind(&w->tz, m->zones))
        return -EBADMSG;
    int64_t now = board_now_ms(m);
    if (asked) {
        int64_t start = 0;
        if (period_id_start(kind, &w->tz, requested, &start))
            return -EINVAL;
        if (start > period_start(kind, &w->tz, now, 0) ||
            start < period_start(kind, &w->tz, now, -retain))
            return -ESRCH;
        util_copy(w->period, sizeof(w->period), requested);
    } else {
        period_id(kind, &w->tz, now, w->period);
    }
    return 0;
}

void board_where_keys(const struct board_model *m, const char *board, struct board_where *w)
{
    if (w->z[0])
        return;
    const char *period = w->kind == PERIOD_NONE ? NULL : w->period;
    board_z_key(w->z, sizeof(w->z), m->prefix, board, period);
    dense_key(w->dense, sizeof(w->dense), m->prefix, board, period);
    where_ids(m, board, period, w);
}

/* The set for `requested` (NULL/"": current) under the given period settings. */
int board_where_resolve(const struct board_model *m, const char *board, enum period_kind kind,
                        const struct period_tz *tz, int retain, const char *requested,
                        struct board_where *w)
{
    int rc = where_place(m, kind, tz, retain, requested, w);
    if (rc == 0)
        board_where_keys(m, board, w);
    return rc;
}

int board_where_settled(struct board_model *m, const char *board, const char *period,
                        const struct board_settings *s, int exists, struct board_where *out)
{
    if (!exists)
        return -ENOENT;
    return board_where_resolve(m, board, s->period, &s->tz, s->retain, period, out);
}

int board_where_cached(struct board_model *m, const char *board, const char *period,
                       struct board_where *out)
{
    int rc = board_where_cached_place(m, board, period, out);
    if (rc == 0)
        board_where_keys(m, board, out);
    return rc;
}

int board_where_cached_place(struct board_model *m, const char *board, const char *period,
                             struct board_where *out)
{
    struct hint h;
    hint_read(m, board, &h);
    int rc = where_place(m, h.kind, &h.tz, h.retain, period, out);
    return rc && period && period[0] ? -EAGAIN : rc;
}

void board_where_note(struct board_model *m, const char *board, const char *kind_s,
                      const char *tz_s, const char *retain_s)
{
    struct board_settings s;
    board_settings_default(&s);
    board_settings_field(&s, "period", kind_s);
    board_settings_field(&s, "timezone", tz_s);
    board_settings_field(&s, "retain", retain_s);
    hint_write(m, board, s.period, &s.tz, s.retain);
}

int board_where_learn(struct board_model *m, const char *board, const struct store_reply *r)
{
    if (!r || r->type != STORE_REPLY_ARRAY || r->elements < 4 ||
        r->element[0]->type != STORE_REPLY_STRING || strcmp(r->element[0]->str, "retry") != 0)
        return 0;
    board_where_note(m, board, r->element[1]->str, r->element[2]->str, r->element[3]->str);
    return 1;
}

int board_periods(const struct board_model *m, const struct board_settings *s,
                  char ids[][PERIOD_ID_MAX], int max)
{
    if (s->period == PERIOD_NONE)
        return 0;
    struct period_tz tz = s->tz;
    if (period_tz_bind(&tz, m->zones))
        return 0; /* a zone this process cannot load: no period it can name */
    int64_t now = board_now_ms(m);
    int n = 0;
    for (int d = 0; d <= s->retain && n < max; d++)
        period_id(s->period, &tz, period_start(s->period, &tz, now, -d), ids[n++]);
    return n;
}

/* The store writes' faults are counted on (board_model.writes). */
struct store *board_writes_of(const struct board_model *m)
{
    return m->writes ? m->writes : m->store;
}

/* 1: added `board` lately (check), or note it (note 1) / forget it (note 0). */
int board_registered_memo(const struct board_model *m, const char *board, int op)
{
    struct board_view *v = m->view;
    if (!v)
        return 0;
    struct board_keys k;
    board_make_keys(m, board, &k);
    size_t i = crc16(k.meta, strlen(k.meta)) % REGISTERED_SLOTS;
    int64_t now = util_now_ms();
    pthread_mutex_lock(&v->registered_lock);
    int known =
        strcmp(v->registered[i].key, k.meta) == 0 && now - v->registered[i].at_ms < REGISTERED_MS;
    if (op >= 0) {
        util_copy(v->registered[i].key, sizeof(v->registered[i].key), op ? k.meta : "");
        v->registered[i].at_ms = now;
    }
    pthread_mutex_unlock(&v->registered_lock);
    return known;
}
