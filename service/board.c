/* board.c -- leaderboard model over Redis sorted sets; the contract is in board.h. */
#include "board.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store_async.h"
#include "util.h"

#define KEY_MAX 192 /* prefix (64) + board (64) + punctuation and suffix */
#define COMPACT_CHUNK 1000
#define WRITE_RETRIES 8

static _Atomic int64_t tie_cap = SCORE_TIE_CAP;

void board_set_tie_cap(int64_t cap)
{
    atomic_store(&tie_cap, cap > 1 && cap <= SCORE_TIE_CAP ? cap : SCORE_TIE_CAP);
}

/* ---------------------------------------------------------------- keys and settings */

/* A new board generation: wall-clock microseconds and a random 0..999, unique in practice
 * across processes and across a Redis that lost its data (unlike a counter restarting at 0). */
static void new_generation(char out[32])
{
    static _Atomic uint64_t salt;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t us = (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
    uint64_t r = atomic_fetch_add(&salt, 1) * 7919U + (uint64_t)getpid();
    snprintf(out, 32, "%" PRIu64, us * 1000U + r % 1000U);
}

struct board_keys {
    char z[KEY_MAX], meta[KEY_MAX], items[KEY_MAX], registry[KEY_MAX];
    char index[KEY_MAX]; /* the period index: every period set of the board, by period start */
};

void board_key_start(struct strb *b, char *out, size_t len, const char *prefix, const char *board)
{
    strb_init(b, out, len);
    strb_str(b, prefix);
    strb_str(b, ":{");
    strb_str(b, board);
    strb_str(b, "}");
}

static void make_keys(const struct board_model *m, const char *board, struct board_keys *k)
{
    struct strb b;
    board_key_start(&b, k->z, KEY_MAX, m->prefix, board ? board : "");
    strb_str(&b, ":z");
    board_key_start(&b, k->meta, KEY_MAX, m->prefix, board ? board : "");
    strb_str(&b, ":meta");
    board_key_start(&b, k->index, KEY_MAX, m->prefix, board ? board : "");
    strb_str(&b, ":periods");
    snprintf(k->items, KEY_MAX, "%s:items", m->prefix);
    snprintf(k->registry, KEY_MAX, "%s:boards", m->prefix);
}

void board_settings_default(struct board_settings *s)
{
    s->layout.order = SCORE_ORDER_DESC;
    s->layout.tiebreak = SCORE_TIEBREAK_FIRST;
    s->layout.decimals = 0;
    s->period = PERIOD_NONE;
    s->tz_min = 0;
    s->retain = 1;
    s->page_size = BOARD_PAGE_SIZE_DEFAULT;
    s->page_ttl_ms = BOARD_PAGE_TTL_MS_DEFAULT;
    s->gen = 0;
}

int board_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > BOARD_NAME_LEN_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            return 0;
    }
    return 1;
}

/* Settings from a flat HGETALL array; unknown or damaged fields keep their defaults. */
static void settings_from_reply(const redisReply *r, struct board_settings *s)
{
    board_settings_default(s);
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
        if (!f || !v)
            continue;
        long n = strtol(v, NULL, 10);
        if (strcmp(f, "order") == 0)
            s->layout.order = strcmp(v, "asc") == 0 ? SCORE_ORDER_ASC : SCORE_ORDER_DESC;
        else if (strcmp(f, "tiebreak") == 0)
            s->layout.tiebreak = strcmp(v, "last") == 0 ? SCORE_TIEBREAK_LAST
                                 : strcmp(v, "id") == 0 ? SCORE_TIEBREAK_ID
                                                        : SCORE_TIEBREAK_FIRST;
        else if (strcmp(f, "score_decimals") == 0 && n >= 0 && n <= SCORE_DECIMALS_MAX)
            s->layout.decimals = (int)n;
        else if (strcmp(f, "page_size") == 0 && n >= 1 && n <= BOARD_PAGE_SIZE_MAX)
            s->page_size = (int)n;
        else if (strcmp(f, "page_ttl_ms") == 0 && n >= 0 && n <= BOARD_PAGE_TTL_MS_MAX)
            s->page_ttl_ms = (int)n;
        else if (strcmp(f, "period") == 0)
            period_kind_parse(v, &s->period); /* unknown text keeps none */
        else if (strcmp(f, "timezone") == 0 && n >= -PERIOD_TZ_MIN_MAX && n <= PERIOD_TZ_MIN_MAX)
            s->tz_min = (int)n;
        else if (strcmp(f, "retain") == 0 && n >= 0 && n <= PERIOD_RETAIN_MAX)
            s->retain = (int)n;
        else if (strcmp(f, "gen") == 0)
            s->gen = strtoll(v, NULL, 10);
    }
}

/* ---------------------------------------------------------------- periods: which set */

/* A small integer from Redis text; 0 for anything else (settings are written by rankd). */
static int text_int(const char *s)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    return end != s && v >= INT32_MIN && v <= INT32_MAX ? (int)v : 0;
}

/*
 * What this process last saw of boards' period settings, so that a read goes to the right set in
 * one round trip. Only a hint: every read script checks it against the settings hash and answers
 * {'retry', ...} when it is stale. A fixed table; a collision just overwrites (costs a retry).
 */
#define HINT_SLOTS 1024
struct hint {
    char key[KEY_MAX]; /* prefix and board */
    enum period_kind kind;
    int tz_min, retain;
};
static struct hint hints[HINT_SLOTS];
static pthread_mutex_t hint_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t hint_slot(const char *key, char *full, size_t len, const struct board_model *m)
{
    snprintf(full, len, "%s\n%s", m->prefix, key);
    uint64_t h = UINT64_C(14695981039346656037);
    for (const char *p = full; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return (size_t)(h % HINT_SLOTS);
}

static void hint_read(const struct board_model *m, const char *board, struct hint *out)
{
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&hint_lock);
    int hit = strcmp(hints[i].key, full) == 0;
    if (hit) {
        *out = hints[i];
    } else {
        memset(out, 0, sizeof(*out));
        out->kind = PERIOD_NONE;
        out->retain = 1;
    }
    pthread_mutex_unlock(&hint_lock);
}

static void hint_write(const struct board_model *m, const char *board, enum period_kind kind,
                       int tz_min, int retain)
{
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&hint_lock);
    snprintf(hints[i].key, sizeof(hints[i].key), "%s", full);
    hints[i].kind = kind;
    hints[i].tz_min = tz_min;
    hints[i].retain = retain;
    pthread_mutex_unlock(&hint_lock);
}

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
static struct view views[HINT_SLOTS];
static pthread_mutex_t view_lock = PTHREAD_MUTEX_INITIALIZER;

static void view_put(const struct board_model *m, const char *board,
                     const struct board_settings *set, int exists)
{
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&view_lock);
    util_copy(views[i].key, sizeof(views[i].key), full);
    views[i].set = *set;
    views[i].exists = exists;
    views[i].seen_ms = util_now_ms();
    pthread_mutex_unlock(&view_lock);
    hint_write(m, board, set->period, set->tz_min, set->retain);
}

/* A board's settings as a flat HGETALL reply (empty: no board): remember them. */
static void view_note(const struct board_model *m, const char *board, const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return;
    struct board_settings set;
    settings_from_reply(r, &set);
    view_put(m, board, &set, r->elements > 0);
}

int board_settings_cached(struct board_model *m, const char *board, struct board_settings *out,
                          int *exists)
{
    char full[KEY_MAX];
    size_t i = hint_slot(board, full, sizeof(full), m);
    pthread_mutex_lock(&view_lock);
    int hit = strcmp(views[i].key, full) == 0 && util_now_ms() - views[i].seen_ms < VIEW_MAX_AGE_MS;
    if (hit) {
        *out = views[i].set;
        *exists = views[i].exists;
    }
    pthread_mutex_unlock(&view_lock);
    return hit ? 0 : -EAGAIN;
}

static int64_t now_ms(const struct board_model *m)
{
    if (m->clock_ms)
        return m->clock_ms();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* <prefix>:{<board>}:z, or with a period <prefix>:{<board>}:z:<period> (schema/redis-keys.md);
 * on every page hit, hence no snprintf */
static void z_key(char *out, size_t len, const char *prefix, const char *board, const char *period)
{
    struct strb b;
    board_key_start(&b, out, len, prefix, board);
    strb_str(&b, ":z");
    if (period) {
        strb_str(&b, ":");
        strb_str(&b, period);
    }
}

/* The set for `requested` (NULL/"": current) under the given period settings. */
static int where_resolve(const struct board_model *m, const char *board, enum period_kind kind,
                         int tz_min, int retain, const char *requested, struct board_where *w)
{
    memset(w, 0, sizeof(*w));
    w->kind = kind;
    w->tz_min = tz_min;
    w->retain = retain;
    int asked = requested && requested[0];
    if (kind == PERIOD_NONE) {
        if (asked)
            return -ENOTSUP;
        z_key(w->z, sizeof(w->z), m->prefix, board, NULL);
        return 0;
    }
    int64_t now = now_ms(m);
    if (asked) {
        int64_t start = 0;
        if (period_id_start(kind, tz_min, requested, &start))
            return -EINVAL;
        if (start > period_start(kind, tz_min, now, 0) ||
            start < period_start(kind, tz_min, now, -retain))
            return -ESRCH;
        util_copy(w->period, sizeof(w->period), requested);
    } else {
        period_id(kind, tz_min, now, w->period);
    }
    z_key(w->z, sizeof(w->z), m->prefix, board, w->period);
    return 0;
}

int board_where(struct board_model *m, const char *board, const char *period,
                struct board_where *out)
{
    struct hint h;
    hint_read(m, board, &h);
    int rc = where_resolve(m, board, h.kind, h.tz_min, h.retain, period, out);
    if (rc == 0 || !(period && period[0]))
        return rc;
    /* An asked-for period the hint cannot place: the hint may be stale (another process
     * changed the board, this one never saw it): decide on the settings themselves. */
    struct board_settings set;
    int exists = 0;
    int err = board_settings_get(m, board, &set, &exists);
    if (err)
        return err;
    if (!exists)
        return -ENOENT;
    return where_resolve(m, board, set.period, set.tz_min, set.retain, period, out);
}

int board_where_cached(struct board_model *m, const char *board, const char *period,
                       struct board_where *out)
{
    struct hint h;
    hint_read(m, board, &h);
    int rc = where_resolve(m, board, h.kind, h.tz_min, h.retain, period, out);
    return rc && period && period[0] ? -EAGAIN : rc;
}

void board_where_note(struct board_model *m, const char *board, const char *kind_s,
                      const char *tz_s, const char *retain_s)
{
    enum period_kind kind = PERIOD_NONE;
    if (kind_s)
        period_kind_parse(kind_s, &kind);
    hint_write(m, board, kind, tz_s ? text_int(tz_s) : 0, retain_s ? text_int(retain_s) : 1);
}

int board_where_learn(struct board_model *m, const char *board, const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 4 ||
        r->element[0]->type != REDIS_REPLY_STRING || strcmp(r->element[0]->str, "retry") != 0)
        return 0;
    board_where_note(m, board, r->element[1]->str, r->element[2]->str, r->element[3]->str);
    return 1;
}

int board_periods(const struct board_model *m, const struct board_settings *s,
                  char ids[][PERIOD_ID_MAX], int max)
{
    if (s->period == PERIOD_NONE)
        return 0;
    int64_t now = now_ms(m);
    int n = 0;
    for (int d = 0; d <= s->retain && n < max; d++)
        period_id(s->period, s->tz_min, period_start(s->period, s->tz_min, now, -d), ids[n++]);
    return n;
}

int board_check_score(const struct board_settings *s, double score, int64_t *key)
{
    int64_t scaled;
    int rc = score_codec_scale(&s->layout, score, &scaled);
    if (rc < 0)
        return rc;
    *key = score_codec_key(&s->layout, scaled);
    return 0;
}

/* Run one script on a borrowed connection. */
/* The pool writes go to (board_model.writes). */
static struct store *writes_of(const struct board_model *m)
{
    return m->writes ? m->writes : m->store;
}

static int script_writes(enum store_script script)
{
    return script != STORE_SCRIPT_PAGE && script != STORE_SCRIPT_MEMBER &&
           script != STORE_SCRIPT_AROUND && script != STORE_SCRIPT_LOCK_RELEASE;
}

static redisReply *run_script(struct board_model *m, enum store_script script, int nkeys, int nargs,
                              const char **argv, const size_t *argvlen, int *err)
{
    struct store *st = script_writes(script) ? writes_of(m) : m->store;
    struct store_conn *c = store_acquire(st, err);
    if (!c)
        return NULL;
    redisReply *r = store_script(c, script, nkeys, nargs, argv, argvlen, err);
    store_release(st, c);
    return r;
}

static redisReply *command_on(struct store *st, int argc, const char **argv, const size_t *argvlen,
                              int *err)
{
    struct store_conn *c = store_acquire(st, err);
    if (!c)
        return NULL;
    redisReply *r = store_command(c, argc, argv, argvlen, err);
    store_release(st, c);
    return r;
}

static redisReply *run_command(struct board_model *m, int argc, const char **argv,
                               const size_t *argvlen, int *err)
{
    return command_on(m->store, argc, argv, argvlen, err);
}

static redisReply *run_write_command(struct board_model *m, int argc, const char **argv,
                                     const size_t *argvlen, int *err)
{
    return command_on(writes_of(m), argc, argv, argvlen, err);
}

int board_settings_get(struct board_model *m, const char *board, struct board_settings *out,
                       int *exists)
{
    struct board_keys k;
    make_keys(m, board, &k);
    const char *argv[] = {"HGETALL", k.meta};
    int err = 0;
    redisReply *r = run_command(m, 2, argv, NULL, &err);
    if (!r)
        return err;
    settings_from_reply(r, out);
    *exists = r->type == REDIS_REPLY_ARRAY && r->elements > 0;
    freeReplyObject(r);
    view_put(m, board, out, *exists);
    return 0;
}

/* ---------------------------------------------------------------- period expiry: the sweep */

/*
 * Board data never carries a TTL (maxmemory-policy volatile-ttl could evict it): the sets of
 * periods that stopped being readable are removed by sweep.lua, in chunks of SWEEP_CHUNK
 * UNLINKs, found through the board's period index (write.lua lists each period set there, by
 * its period's start, in the call that creates it). A sweep runs when a write listed a new set
 * (a period began: the oldest readable one may have just stopped being readable), behind that
 * write's reply; put_board.lua sweeps a chunk too, and delete_board.lua removes every listed
 * set. The sweep checks the settings its cut was computed from, and holds a lock across its
 * chunks so that two processes do not sweep one board at once. A failed sweep is left for the
 * next trigger: the sets it would remove are unreadable already (the read scripts check retain).
 */
#define SWEEP_CHUNK 64         /* sets per sweep.lua call: 64 UNLINKs, well under 1 ms */
#define SWEEP_ROUNDS_MAX 32    /* calls per sweep; a longer backlog waits for the next trigger */
#define SWEEP_LOCK_TTL_MS 2000 /* a sweep lock outlives its holder by at most this */
#define SWEEP_ARGC (3 + 7)

struct sweep_args {
    char keys[3][KEY_MAX]; /* settings, period index, lock */
    char tz[16], retain[16], cut[32], token[32], ttl[16], chunk[16];
    const char *argv[SWEEP_ARGC];
};

/* sweep.lua's arguments for `board` under settings s; -EINVAL for a board without periods. */
static int sweep_args_build(const struct board_model *m, const char *board,
                            const struct board_settings *s, struct sweep_args *a)
{
    if (s->period == PERIOD_NONE)
        return -EINVAL;
    struct board_keys k;
    make_keys(m, board, &k);
    util_copy(a->keys[0], KEY_MAX, k.meta);
    util_copy(a->keys[1], KEY_MAX, k.index);
    struct strb b;
    board_key_start(&b, a->keys[2], KEY_MAX, m->prefix, board);
    strb_str(&b, ":sweep");
    snprintf(a->tz, sizeof(a->tz), "%d", s->tz_min);
    snprintf(a->retain, sizeof(a->retain), "%d", s->retain);
    /* the oldest readable period: the one `retain` periods before the current one */
    snprintf(a->cut, sizeof(a->cut), "%" PRId64,
             period_start(s->period, s->tz_min, now_ms(m), -s->retain));
    new_generation(a->token);
    snprintf(a->ttl, sizeof(a->ttl), "%d", SWEEP_LOCK_TTL_MS);
    snprintf(a->chunk, sizeof(a->chunk), "%d", SWEEP_CHUNK);
    const char *argv[SWEEP_ARGC] = {a->keys[0], a->keys[1], a->keys[2], period_kind_name(s->period),
                                    a->tz,      a->retain,  a->cut,     a->token,
                                    a->ttl,     a->chunk};
    memcpy(a->argv, argv, sizeof(argv));
    return 0;
}

/* 1 when a sweep.lua reply says a full chunk went (call again). */
static int sweep_more(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
           r->element[1]->type == REDIS_REPLY_INTEGER && r->element[1]->integer == 1;
}

/* The sweep on the blocking pool (worker threads). Best effort: a fault ends it. */
static void sweep_blocking(struct board_model *m, const char *board, const struct board_settings *s)
{
    struct sweep_args a = {0};
    if (sweep_args_build(m, board, s, &a))
        return;
    for (int round = 0; round < SWEEP_ROUNDS_MAX; round++) {
        int err = 0;
        redisReply *r = run_script(m, STORE_SCRIPT_SWEEP, 3, 7, a.argv, NULL, &err);
        int more = sweep_more(r);
        freeReplyObject(r);
        if (!more)
            return;
    }
}

/* The sweep on an event loop's connection: its chunks go one after the other, behind whatever
 * the loop sends meanwhile; nothing waits for them. */
struct sweep_job {
    struct store_async *conn;
    int rounds;
    struct sweep_args a;
};

static int sweep_job_send(struct sweep_job *sj);

static void sweep_reply(void *arg, int rc, redisReply **replies)
{
    struct sweep_job *sj = arg;
    if (rc == 0 && sweep_more(replies[0]) && ++sj->rounds < SWEEP_ROUNDS_MAX &&
        sweep_job_send(sj) == 0)
        return;
    free(sj);
}

static int sweep_job_send(struct sweep_job *sj)
{
    int rc = store_async_script(sj->conn, STORE_SCRIPT_SWEEP, 3, 7, sj->a.argv, NULL, 0,
                                sweep_reply, sj);
    return rc < 0 ? rc : 0;
}

static void sweep_submit(struct board_model *m, struct store_async *conn, const char *board,
                         const struct board_settings *s)
{
    struct sweep_job *sj = calloc(1, sizeof(*sj));
    if (!sj)
        return;
    sj->conn = conn;
    if (sweep_args_build(m, board, s, &sj->a) || sweep_job_send(sj))
        free(sj);
}

/* ---------------------------------------------------------------- writes */

/* A stored value as Redis prints it: plain digits for the integers it holds (every stored value
 * is one, below 2^53), read without strtod's big-number path; anything else through strtod. */
static double stored_value(const char *s)
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

static double decode_stored(const struct score_layout *l, const char *s)
{
    double score = 0;
    if (s && *s && score_codec_decode(l, stored_value(s), &score) < 0)
        score = 0;
    return score;
}

/* Renumber a full tie group in chunks (compact.lua), so no single call grows with the group. */
static int compact_group(struct board_model *m, const char *zkey, const struct score_layout *l,
                         const char *key_s)
{
    int64_t key = strtoll(key_s, NULL, 10);
    int64_t cap = atomic_load(&tie_cap);
    char lo[32], caps[32], start[32], chunk[16];
    snprintf(lo, sizeof(lo), "%" PRId64, key * (INT64_C(1) << score_codec_tie_bits(l)));
    snprintf(caps, sizeof(caps), "%" PRId64, cap);
    snprintf(chunk, sizeof(chunk), "%d", COMPACT_CHUNK);
    for (int64_t done = 0;;) {
        snprintf(start, sizeof(start), "%" PRId64, done);
        const char *argv[] = {zkey, lo, caps, score_tiebreak_name(l->tiebreak), start, chunk};
        int err = 0;
        redisReply *r = run_script(m, STORE_SCRIPT_COMPACT, 1, 5, argv, NULL, &err);
        if (!r)
            return err;
        long long moved = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
        freeReplyObject(r);
        done += moved;
        if (moved < COMPACT_CHUNK)
            return done >= cap ? -ENOSPC : 0;
    }
}

/* The argv of one write.lua call: 5 keys, 17 header values, 4 values per entry. */
struct write_args {
    const char **argv;
    size_t *len;
    char (*num)[32];  /* each entry's key, formatted */
    char hdr[10][32]; /* formatted header numbers */
    char prev[4];     /* "1" for a periodic board */
};

#define WRITE_KEYS 5
#define WRITE_FIXED 22

static int write_args_build(struct write_args *w, const struct board_keys *k,
                            const struct board_where *where, struct board_model *m,
                            const char *board, const struct board_settings *s,
                            const struct board_entry *e, size_t n, int flags)
{
    static const char *const ops[] = {"set", "best", "incr"};
    size_t total = WRITE_FIXED + 4 * n;
    w->argv = calloc(total, sizeof(*w->argv));
    w->len = calloc(total, sizeof(*w->len));
    w->num = calloc(n ? n : 1, sizeof(*w->num));
    if (!w->argv || !w->len || !w->num)
        return -ENOMEM;
    const struct score_layout *l = &s->layout;
    snprintf(w->hdr[0], 32, "%" PRId64, INT64_C(1) << score_codec_tie_bits(l));
    snprintf(w->hdr[1], 32, "%" PRId64, atomic_load(&tie_cap));
    snprintf(w->hdr[2], 32, "%" PRId64, score_codec_scaled_max(l));
    snprintf(w->hdr[3], 32, "%d", l->decimals);
    snprintf(w->hdr[4], 32, "%d", s->page_size);
    snprintf(w->hdr[5], 32, "%d", s->page_ttl_ms);
    snprintf(w->hdr[6], 32, "%zu", n);
    new_generation(w->hdr[7]);
    snprintf(w->hdr[8], 32, "%d", s->tz_min);
    w->prev[0] = s->period != PERIOD_NONE ? '1' : '\0';
    w->prev[1] = '\0';
    w->hdr[9][0] = '0';
    w->hdr[9][1] = '\0';
    if (s->period != PERIOD_NONE) /* the current period's start: its score in the index */
        snprintf(w->hdr[9], 32, "%" PRId64, period_start(s->period, s->tz_min, now_ms(m), 0));
    const char *fixed[WRITE_FIXED] = {where->z,
                                      k->meta,
                                      k->items,
                                      k->registry,
                                      k->index,
                                      w->hdr[0],
                                      score_tiebreak_name(l->tiebreak),
                                      w->hdr[1],
                                      w->hdr[2],
                                      score_order_name(l->order),
                                      w->hdr[3],
                                      w->hdr[4],
                                      w->hdr[5],
                                      board,
                                      (flags & BOARD_WRITE_RANKS) ? "1" : "0",
                                      w->hdr[6],
                                      (flags & BOARD_WRITE_ATOMIC) ? "1" : "0",
                                      w->hdr[7],
                                      period_kind_name(s->period),
                                      w->hdr[8],
                                      w->prev,
                                      w->hdr[9]};
    for (size_t i = 0; i < WRITE_FIXED; i++) {
        w->argv[i] = fixed[i];
        w->len[i] = strlen(fixed[i]);
    }
    for (size_t i = 0; i < n; i++) {
        size_t a = WRITE_FIXED + 4 * i;
        snprintf(w->num[i], 32, "%" PRId64, e[i].key);
        w->argv[a] = e[i].id;
        w->len[a] = e[i].id_len;
        w->argv[a + 1] = ops[e[i].op];
        w->len[a + 1] = strlen(ops[e[i].op]);
        w->argv[a + 2] = w->num[i];
        w->len[a + 2] = strlen(w->num[i]);
        w->argv[a + 3] = e[i].record ? e[i].record : "";
        w->len[a + 3] = e[i].record ? e[i].record_len : 0;
    }
    return 0;
}

static void write_args_free(struct write_args *w)
{
    free(w->argv);
    free(w->len);
    free(w->num);
}

/* What one write.lua reply says for e[0..n) (r is freed): *done entries handled. When entry
 * *done met a full tie group, *full is set and full_key holds the group's key. *listed is set
 * (never cleared) when the call listed a new period set in the index: a period began, the sets
 * of periods that stopped being readable may be swept. -ERANGE (all or nothing): entry *done
 * would leave the range and nothing was written; -EAGAIN: the settings differ; -EIO: an error
 * reply or an unexpected shape. */
#define WRITE_REPLY_HEAD 3 /* status, done, listed */
static int write_reply_take(redisReply *r, const struct board_settings *s, size_t n,
                            struct board_outcome *out, size_t *done, int *full, char *full_key,
                            size_t full_key_len, int *listed)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < WRITE_REPLY_HEAD ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_INTEGER ||
        r->element[2]->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        return -EIO;
    }
    long long status = r->element[0]->integer;
    size_t handled = (size_t)r->element[1]->integer;
    if (r->element[2]->integer == 1)
        *listed = 1;
    size_t need = WRITE_REPLY_HEAD + 4 * handled + (status == 3);
    if (status == 1 || handled > n || (status != 2 && r->elements < need)) {
        freeReplyObject(r);
        return status == 1 ? -EAGAIN : -EIO;
    }
    *done = handled;
    if (status == 2) {
        freeReplyObject(r);
        return -ERANGE;
    }
    for (size_t i = 0; i < handled; i++) {
        redisReply **x = r->element + WRITE_REPLY_HEAD + 4 * i;
        out[i].rc = x[0]->integer == 0 ? 0 : -ERANGE;
        out[i].score = decode_stored(&s->layout, x[1]->str);
        out[i].rank = x[2]->integer + 1;
        out[i].updated = (int)x[3]->integer;
    }
    *full = status == 3;
    if (*full)
        snprintf(full_key, full_key_len, "%s",
                 r->element[r->elements - 1]->str ? r->element[r->elements - 1]->str : "0");
    freeReplyObject(r);
    return 0;
}

/* One write.lua call for e[0..n); as write_reply_take. */
static int write_once(struct board_model *m, const struct board_keys *k,
                      const struct board_where *where, const char *board,
                      const struct board_settings *s, const struct board_entry *e, size_t n,
                      int flags, struct board_outcome *out, size_t *done, int *full, char *full_key,
                      size_t full_key_len, int *listed)
{
    struct write_args w = {0};
    int rc = write_args_build(&w, k, where, m, board, s, e, n, flags);
    if (rc) {
        write_args_free(&w);
        return rc;
    }
    redisReply *r = run_script(m, STORE_SCRIPT_WRITE, WRITE_KEYS,
                               (int)(WRITE_FIXED - WRITE_KEYS + 4 * n), w.argv, w.len, &rc);
    write_args_free(&w);
    store_note_write(r ? 0 : rc);
    if (!r)
        return rc;
    return write_reply_take(r, s, n, out, done, full, full_key, full_key_len, listed);
}

int board_write(struct board_model *m, const char *board, const struct board_settings *assumed,
                const struct board_entry *entries, size_t n, int flags,
                struct board_outcome *outcomes, size_t *handled)
{
    struct board_keys k;
    make_keys(m, board, &k);
    struct board_where where;
    int rc =
        where_resolve(m, board, assumed->period, assumed->tz_min, assumed->retain, NULL, &where);
    size_t at = 0;
    int stalls = 0, listed = 0;
    while (at < n && rc == 0) {
        size_t done = 0;
        int full = 0;
        char full_key[32];
        rc = write_once(m, &k, &where, board, assumed, entries + at, n - at, flags, outcomes + at,
                        &done, &full, full_key, sizeof(full_key), &listed);
        at += done;
        if (rc || !full)
            break;
        /* Compaction frees room unless the group is truly full; only rounds without progress
         * count towards giving up. */
        stalls = done ? 0 : stalls + 1;
        if (stalls > WRITE_RETRIES)
            rc = -ENOSPC;
        else
            rc = compact_group(m, where.z, &assumed->layout, full_key);
    }
    if (listed) /* a period began: sweep the sets of those no longer readable */
        sweep_blocking(m, board, assumed);
    *handled = at;
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
    if (j->at > 0 && rc != -EAGAIN && rc != -ERANGE && rc != -ENOSPC)
        rc = -ETIME;
    return rc;
}

static void write_job_finish(struct board_write_job *j, int rc)
{
    if (j->listed) /* a period began: sweep, behind this write's reply */
        sweep_submit(j->m, j->conn, j->board, &j->assumed);
    j->handled = j->at;
    j->done(j, rc); /* may free j */
}

static int write_job_send(struct board_write_job *j);
static int write_job_compact(struct board_write_job *j);

static void compact_reply(void *arg, int rc, redisReply **replies)
{
    struct board_write_job *j = arg;
    if (rc) {
        write_job_finish(j, write_job_errno(j, rc, 1));
        return;
    }
    const redisReply *r = replies[0];
    if (r->type == REDIS_REPLY_ERROR) {
        store_note_fault(writes_of(j->m), "compact", r->str);
        write_job_finish(j, write_job_errno(j, -EIO, 1));
        return;
    }
    long long moved = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    j->compacted += moved;
    if (moved >= COMPACT_CHUNK)
        rc = write_job_compact(j);
    else if (j->compacted >= atomic_load(&tie_cap))
        rc = -ENOSPC;
    else
        rc = write_job_send(j);
    if (rc < 0)
        write_job_finish(j, write_job_errno(j, rc, 0));
}

/* One chunk of compact.lua for the full group j->full_key (as compact_group). */
static int write_job_compact(struct board_write_job *j)
{
    const struct score_layout *l = &j->assumed.layout;
    int64_t key = strtoll(j->full_key, NULL, 10);
    char lo[32], caps[32], start[32], chunk[16];
    snprintf(lo, sizeof(lo), "%" PRId64, key * (INT64_C(1) << score_codec_tie_bits(l)));
    snprintf(caps, sizeof(caps), "%" PRId64, atomic_load(&tie_cap));
    snprintf(chunk, sizeof(chunk), "%d", COMPACT_CHUNK);
    snprintf(start, sizeof(start), "%" PRId64, j->compacted);
    const char *argv[] = {j->where.z, lo, caps, score_tiebreak_name(l->tiebreak), start, chunk};
    int rc = store_async_script(j->conn, STORE_SCRIPT_COMPACT, 1, 5, argv, NULL, j->deadline_ms,
                                compact_reply, j);
    return rc < 0 ? rc : 0;
}

static void write_reply(void *arg, int rc, redisReply **replies)
{
    struct board_write_job *j = arg;
    if (rc) {
        write_job_finish(j, write_job_errno(j, rc, 1));
        return;
    }
    redisReply *r = replies[0];
    replies[0] = NULL; /* taken: write_reply_take frees it */
    int refused = 0;
    if (r->type == REDIS_REPLY_ERROR) {
        store_note_fault(writes_of(j->m), "write", r->str);
        refused = store_error_errno(r->str); /* OOM, READONLY: refused, nothing written */
    }
    store_note_write(refused);
    size_t done = 0;
    int full = 0;
    rc = write_reply_take(r, &j->assumed, j->n - j->at, j->outcomes + j->at, &done, &full,
                          j->full_key, sizeof(j->full_key), &j->listed);
    j->at += done;
    if (rc == -EIO) /* an error reply: the script ran (and wrote nothing after the error) */
        rc = write_job_errno(j, refused ? refused : rc, 0);
    if (rc || !full) {
        write_job_finish(j, rc);
        return;
    }
    /* a full tie group: compact it in chunks, then resume (as board_write) */
    j->stalls = done ? 0 : j->stalls + 1;
    j->compacted = 0;
    rc = j->stalls > WRITE_RETRIES ? -ENOSPC : write_job_compact(j);
    if (rc < 0)
        write_job_finish(j, write_job_errno(j, rc, 0));
}

/* Send write.lua for entries[at..n); 0 or a negative errno (nothing sent). */
static int write_job_send(struct board_write_job *j)
{
    struct board_keys k;
    make_keys(j->m, j->board, &k);
    struct write_args w = {0};
    size_t n = j->n - j->at;
    int rc = write_args_build(&w, &k, &j->where, j->m, j->board, &j->assumed, j->entries + j->at, n,
                              j->flags);
    if (!rc)
        rc = store_async_script(j->conn, STORE_SCRIPT_WRITE, WRITE_KEYS,
                                (int)(WRITE_FIXED - WRITE_KEYS + 4 * n), w.argv, w.len,
                                j->deadline_ms, write_reply, j);
    write_args_free(&w);
    return rc < 0 ? rc : 0;
}

int board_write_submit(struct board_model *m, struct store_async *conn, struct board_write_job *j)
{
    j->m = m;
    j->conn = conn;
    j->at = j->handled = 0;
    j->stalls = 0;
    j->listed = 0;
    if (!conn || j->n == 0)
        return -EAGAIN;
    int rc = where_resolve(m, j->board, j->assumed.period, j->assumed.tz_min, j->assumed.retain,
                           NULL, &j->where);
    return rc ? rc : write_job_send(j);
}

static void settings_reply(void *arg, int rc, redisReply **replies)
{
    struct board_settings_job *j = arg;
    if (rc == 0 && replies[0]->type != REDIS_REPLY_ARRAY) {
        if (replies[0]->type == REDIS_REPLY_ERROR)
            store_note_fault(j->m->store, "HGETALL", replies[0]->str);
        rc = -EIO;
    }
    if (rc == 0) {
        settings_from_reply(replies[0], &j->settings);
        j->exists = replies[0]->elements > 0;
        view_put(j->m, j->board, &j->settings, j->exists);
    }
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* a read: nothing to lose */
}

int board_settings_submit(struct board_model *m, struct store_async *conn,
                          struct board_settings_job *j)
{
    if (!conn)
        return -EAGAIN;
    j->m = m;
    struct board_keys k;
    make_keys(m, j->board, &k);
    const char *argv[] = {"HGETALL", k.meta};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    int rc = store_async_send(conn, 1, argc, av, NULL, j->deadline_ms, settings_reply, j);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- reads */

/* Fill items from a flat {member, stored, ...} range and a parallel records array. */
static int fill_items(struct board_page *p, const redisReply *range, const redisReply *records,
                      int64_t first_rank)
{
    size_t n = range->type == REDIS_REPLY_ARRAY ? range->elements / 2 : 0;
    p->items = calloc(n ? n : 1, sizeof(*p->items));
    if (!p->items)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct board_item *it = &p->items[i];
        const redisReply *id = range->element[2 * i];
        it->id = id->str;
        it->id_len = id->len;
        it->score = decode_stored(&p->settings.layout, range->element[2 * i + 1]->str);
        it->rank = first_rank + (int64_t)i;
        if (records && records->type == REDIS_REPLY_ARRAY && i < records->elements &&
            records->element[i]->type == REDIS_REPLY_STRING) {
            it->record = records->element[i]->str;
            it->record_len = records->element[i]->len;
        }
    }
    p->n = n;
    return 0;
}

static int page_from_reply(struct board_model *m, const char *board, redisReply *r,
                           int64_t first_rank, int range_at, struct board_page **out)
{
    struct board_page *p = calloc(1, sizeof(*p));
    if (!p) {
        freeReplyObject(r);
        return -ENOMEM;
    }
    view_note(m, board, r->element[0]);
    settings_from_reply(r->element[0], &p->settings);
    p->total = r->element[1]->integer;
    p->size = (int)r->element[2]->integer;
    p->reply = r;
    int rc = fill_items(p, r->element[range_at], r->element[range_at + 1], first_rank);
    if (rc) {
        board_page_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void board_read_prepare(struct board_model *m, const char *board, const struct board_where *w,
                        enum board_read_kind kind, const char *id, size_t id_len, int64_t page,
                        int size, struct board_read *out)
{
    static const enum store_script scripts[] = {STORE_SCRIPT_PAGE, STORE_SCRIPT_MEMBER,
                                                STORE_SCRIPT_AROUND};
    struct board_keys k;
    make_keys(m, board, &k);
    util_copy(out->meta, sizeof(out->meta), k.meta);
    util_copy(out->items, sizeof(out->items), k.items);
    util_copy(out->z, sizeof(out->z), w->z);
    snprintf(out->tz, sizeof(out->tz), "%d", w->tz_min);
    snprintf(out->retain, sizeof(out->retain), "%d", w->retain);
    snprintf(out->num[0], sizeof(out->num[0]), "%" PRId64, page);
    snprintf(out->num[1], sizeof(out->num[1]), "%d", size);
    out->script = scripts[kind];
    out->nkeys = 3;
    int n = 0;
    const char *args[BOARD_READ_ARGV - 3];
    size_t lens[BOARD_READ_ARGV - 3];
    /* lua/prelude_read.lua's layout: the assumed period kind, offset and retain first */
    args[n] = period_kind_name(w->kind), lens[n] = strlen(args[n]), n++;
    args[n] = out->tz, lens[n] = strlen(out->tz), n++;
    args[n] = out->retain, lens[n] = strlen(out->retain), n++;
    if (kind == BOARD_READ_PAGE) { /* page.lua: page, size */
        args[n] = out->num[0], lens[n++] = strlen(out->num[0]);
        args[n] = out->num[1], lens[n++] = strlen(out->num[1]);
    } else { /* member.lua: id; around.lua: id, size */
        args[n] = id, lens[n++] = id_len;
        if (kind == BOARD_READ_AROUND)
            args[n] = out->num[1], lens[n++] = strlen(out->num[1]);
    }
    const char *fixed[] = {out->meta, out->z, out->items};
    for (int i = 0; i < 3; i++) {
        out->argv[i] = fixed[i];
        out->lens[i] = strlen(fixed[i]);
    }
    for (int i = 0; i < n; i++) {
        out->argv[3 + i] = args[i];
        out->lens[3 + i] = lens[i];
    }
    out->nargs = n;
}

/* A read script's reply before its shape is checked: 0, -EAGAIN for a {'retry', ...} answer
 * (learnt), -EIO for a Redis error reply. Frees r unless 0. */
static int read_reply_check(struct board_model *m, const char *board, redisReply *r)
{
    int rc = 0;
    if (r->type == REDIS_REPLY_ERROR)
        rc = -EIO;
    else if (board_where_learn(m, board, r))
        rc = -EAGAIN;
    if (rc)
        freeReplyObject(r);
    return rc;
}

int board_page_take(struct board_model *m, const char *board, redisReply *r, int64_t page,
                    struct board_page **out)
{
    int rc = read_reply_check(m, board, r);
    if (rc)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return -ENOENT;
    }
    if (r->elements < 5) {
        freeReplyObject(r);
        return -EIO;
    }
    int64_t used = r->element[2]->integer;
    return page_from_reply(m, board, r, (page - 1) * used + 1, 3, out);
}

int board_around_take(struct board_model *m, const char *board, redisReply *r,
                      struct board_page **out)
{
    int rc = read_reply_check(m, board, r);
    if (rc)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return -ENOENT;
    }
    if (r->elements < 6) {
        freeReplyObject(r);
        return -EIO;
    }
    int64_t start = r->element[3]->integer;
    if (start < 0) {
        view_note(m, board, r->element[0]);
        freeReplyObject(r);
        return -ENODATA;
    }
    return page_from_reply(m, board, r, start + 1, 4, out);
}

int board_member_take(struct board_model *m, const char *board, redisReply *r,
                      struct board_member **out)
{
    int rc = read_reply_check(m, board, r);
    if (rc)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY)
        rc = -ENOENT;
    else if (r->elements < 5)
        rc = -EIO;
    else if (r->element[2]->type != REDIS_REPLY_STRING)
        rc = -ENODATA;
    if (rc != -ENOENT && rc != -EIO)
        view_note(m, board, r->element[0]);
    struct board_member *mb = rc ? NULL : calloc(1, sizeof(*mb));
    if (!rc && !mb)
        rc = -ENOMEM;
    if (rc) {
        freeReplyObject(r);
        return rc;
    }
    settings_from_reply(r->element[0], &mb->settings);
    mb->total = r->element[1]->integer;
    mb->score = decode_stored(&mb->settings.layout, r->element[2]->str);
    mb->rank = r->element[3]->integer + 1;
    if (r->element[4]->type == REDIS_REPLY_STRING) {
        mb->record = r->element[4]->str;
        mb->record_len = r->element[4]->len;
    }
    mb->reply = r;
    *out = mb;
    return 0;
}

/*
 * Run a read script on the set of `period` (NULL: current) and take its reply with `take`. A
 * stale period hint is answered by the script with the real settings; they are learnt and the
 * call is made once more.
 */
static int read_blocking(struct board_model *m, const char *board, const char *period,
                         enum board_read_kind kind, const char *id, size_t id_len, int64_t page,
                         int size, void *out)
{
    int resent = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        struct board_where w;
        int rc = board_where(m, board, period, &w);
        if (rc)
            return rc;
        struct board_read rd;
        board_read_prepare(m, board, &w, kind, id, id_len, page, size, &rd);
        redisReply *r = run_script(m, rd.script, rd.nkeys, rd.nargs, rd.argv, rd.lens, &rc);
        if (!r && rc == -ECONNRESET && !resent++) { /* a read: once more, on a new connection */
            attempt--;
            continue;
        }
        if (!r)
            return rc;
        rc = kind == BOARD_READ_PAGE     ? board_page_take(m, board, r, page, out)
             : kind == BOARD_READ_MEMBER ? board_member_take(m, board, r, out)
                                         : board_around_take(m, board, r, out);
        if (rc != -EAGAIN)
            return rc;
    }
    return -EAGAIN; /* the period settings keep changing under us */
}

int board_page_get(struct board_model *m, const char *board, const char *period, int64_t page,
                   int size, struct board_page **out)
{
    return read_blocking(m, board, period, BOARD_READ_PAGE, NULL, 0, page, size, out);
}

int board_around_get(struct board_model *m, const char *board, const char *period, const char *id,
                     size_t id_len, int size, struct board_page **out)
{
    return read_blocking(m, board, period, BOARD_READ_AROUND, id, id_len, 0, size, out);
}

void board_page_free(struct board_page *p)
{
    if (!p)
        return;
    freeReplyObject(p->reply);
    free(p->items);
    free(p);
}

int board_member_get(struct board_model *m, const char *board, const char *period, const char *id,
                     size_t id_len, struct board_member **out)
{
    return read_blocking(m, board, period, BOARD_READ_MEMBER, id, id_len, 0, 0, out);
}

void board_member_free(struct board_member *mb)
{
    if (!mb)
        return;
    freeReplyObject(mb->reply);
    free(mb);
}

/* The board's settings and where its current members are; -ENOENT when it does not exist. */
static int current_where(struct board_model *m, const char *board, struct board_settings *set,
                         struct board_where *w)
{
    int exists = 0;
    int rc = board_settings_get(m, board, set, &exists);
    if (rc)
        return rc;
    if (!exists)
        return -ENOENT;
    return where_resolve(m, board, set->period, set->tz_min, set->retain, NULL, w);
}

int board_info_get(struct board_model *m, const char *board, struct board_info *out)
{
    struct board_where w;
    int rc = current_where(m, board, &out->settings, &w);
    if (rc)
        return rc;
    const char *argv[] = {"ZCARD", w.z};
    redisReply *r = run_command(m, 2, argv, NULL, &rc);
    if (!r)
        return rc;
    out->total = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    snprintf(out->period, sizeof(out->period), "%s", w.period);
    freeReplyObject(r);
    return 0;
}

/* Text of the eight settings put_board.lua takes, in its order (see the script). */
static void settings_text(const struct board_settings *v, char out[8][24])
{
    snprintf(out[0], 24, "%s", score_order_name(v->layout.order));
    snprintf(out[1], 24, "%s", score_tiebreak_name(v->layout.tiebreak));
    snprintf(out[2], 24, "%d", v->layout.decimals);
    snprintf(out[3], 24, "%s", period_kind_name(v->period));
    snprintf(out[4], 24, "%d", v->tz_min);
    snprintf(out[5], 24, "%d", v->page_size);
    snprintf(out[6], 24, "%d", v->page_ttl_ms);
    snprintf(out[7], 24, "%d", v->retain);
}

/* The key of the period `d` periods before the one holding `now` under the given period
 * settings: <prefix>:{<board>}:z:<period id> */
static void period_set_key(const struct board_model *m, const char *board, enum period_kind kind,
                           int tz_min, int64_t now, int d, char out[KEY_MAX])
{
    char id[PERIOD_ID_MAX];
    period_id(kind, tz_min, period_start(kind, tz_min, now, -d), id);
    z_key(out, KEY_MAX, m->prefix, board, id);
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
    if (p->has_period)
        out->period = v->period;
    if (p->has_tz)
        out->tz_min = v->tz_min;
    if (p->has_page_size)
        out->page_size = v->page_size;
    if (p->has_page_ttl)
        out->page_ttl_ms = v->page_ttl_ms;
    if (p->has_retain)
        out->retain = v->retain;
}

/* What put_board.lua and create_board.lua answer on success: {code, settings, total}. */
static void put_reply_take(struct board_model *m, const char *board, const redisReply *r,
                           struct board_info *out)
{
    settings_from_reply(r->element[1], &out->settings);
    out->total = r->element[2]->type == REDIS_REPLY_INTEGER ? r->element[2]->integer : 0;
    view_put(m, board, &out->settings, 1);
    struct board_where now_w;
    out->period[0] = '\0';
    if (where_resolve(m, board, out->settings.period, out->settings.tz_min, out->settings.retain,
                      NULL, &now_w) == 0)
        snprintf(out->period, sizeof(out->period), "%s", now_w.period);
}

#define PUT_AGAIN 1 /* the board appeared, went or changed under the call: read it again */

/* A new board (create_board.lua): 0, PUT_AGAIN when it exists after all, or an error. */
static int put_create(struct board_model *m, const char *board,
                      const struct board_settings_patch *patch, struct board_info *out)
{
    static const char *const names[] = {"order",    "tiebreak",  "score_decimals", "period",
                                        "timezone", "page_size", "page_ttl_ms",    "retain"};
    struct board_keys k;
    make_keys(m, board, &k);
    struct board_settings d, v;
    board_settings_default(&d);
    patch_apply(&d, patch, &v);
    struct board_where w;
    int rc = where_resolve(m, board, v.period, v.tz_min, v.retain, NULL, &w);
    if (rc)
        return rc;
    char val[8][24], gen[32];
    settings_text(&v, val);
    new_generation(gen);
    const char *argv[4 + 16 + 2] = {k.meta, k.registry, w.z, board};
    for (int i = 0; i < 8; i++) {
        argv[4 + 2 * i] = names[i];
        argv[5 + 2 * i] = val[i];
    }
    argv[20] = "gen";
    argv[21] = gen;
    redisReply *r = run_script(m, STORE_SCRIPT_CREATE_BOARD, 3, 19, argv, NULL, &rc);
    store_note_write(r ? 0 : rc);
    if (!r)
        return rc;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == 0)
        rc = PUT_AGAIN;
    else if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
             r->element[1]->type == REDIS_REPLY_ARRAY)
        put_reply_take(m, board, r, out);
    else
        rc = -EIO;
    freeReplyObject(r);
    return rc;
}

/*
 * A change of an existing board read as `cur` (put_board.lua): 0, PUT_AGAIN (gone, or changed
 * since it was read), -EEXIST with *field, or an error. The script is sent the current set, the
 * index and the past periods' sets by name: first those both the current and the new retain
 * keep readable (they count for "non-empty"), then those only one of them does (emptied).
 */
static int put_update(struct board_model *m, const char *board, const struct board_settings *cur,
                      const struct board_settings_patch *patch, const char **field,
                      struct board_info *out)
{
    struct board_keys k;
    make_keys(m, board, &k);
    int periodic = cur->period != PERIOD_NONE;
    int next = patch->has_retain ? patch->value.retain : cur->retain;
    int lo = periodic ? (next < cur->retain ? next : cur->retain) : 0;
    int hi = periodic ? (next > cur->retain ? next : cur->retain) : 0;
    int64_t now = now_ms(m);
    char(*zs)[KEY_MAX] = calloc((size_t)hi + 1, sizeof(*zs));
    const char **argv = calloc((size_t)hi + 3 + 14, sizeof(*argv));
    if (!zs || !argv) {
        free(zs);
        free(argv);
        return -ENOMEM;
    }
    if (periodic)
        period_set_key(m, board, cur->period, cur->tz_min, now, 0, zs[0]);
    else
        z_key(zs[0], KEY_MAX, m->prefix, board, NULL);
    for (int d = 1; d <= hi; d++)
        period_set_key(m, board, cur->period, cur->tz_min, now, d, zs[d]);
    char val[8][24], tz[16], retain[16], gen[32], nkeep[16], cut[32];
    settings_text(&patch->value, val);
    const int has[8] = {patch->has_order,    patch->has_tiebreak, patch->has_decimals,
                        patch->has_period,   patch->has_tz,       patch->has_page_size,
                        patch->has_page_ttl, patch->has_retain};
    snprintf(tz, sizeof(tz), "%d", cur->tz_min);
    snprintf(retain, sizeof(retain), "%d", cur->retain);
    new_generation(gen);
    snprintf(nkeep, sizeof(nkeep), "%d", lo);
    snprintf(cut, sizeof(cut), "%" PRId64,
             periodic ? period_start(cur->period, cur->tz_min, now, -lo) : 0);
    int nk = 0;
    argv[nk++] = k.meta;
    argv[nk++] = zs[0];
    argv[nk++] = k.index;
    for (int d = 1; d <= hi; d++)
        argv[nk++] = zs[d];
    int na = nk;
    argv[na++] = period_kind_name(cur->period);
    argv[na++] = tz;
    argv[na++] = retain;
    for (int i = 0; i < 8; i++)
        argv[na++] = has[i] ? val[i] : "";
    argv[na++] = gen;
    argv[na++] = nkeep;
    argv[na++] = cut;
    int rc = 0;
    redisReply *r = run_script(m, STORE_SCRIPT_PUT_BOARD, nk, na - nk, argv, NULL, &rc);
    free(zs);
    free(argv);
    if (!r)
        return rc;
    const redisReply *e0 = r->type == REDIS_REPLY_ARRAY && r->elements >= 1 ? r->element[0] : NULL;
    if (e0 && e0->type == REDIS_REPLY_STRING) { /* 'absent' or 'retry' */
        rc = PUT_AGAIN;
    } else if (e0 && e0->type == REDIS_REPLY_INTEGER && e0->integer < 0 && r->elements == 2) {
        static const char *const names[] = {"order", "tiebreak", "score_decimals", "period",
                                            "timezone"};
        *field = names[0];
        for (size_t i = 0; i < 5; i++)
            if (r->element[1]->str && strcmp(r->element[1]->str, names[i]) == 0)
                *field = names[i];
        rc = -EEXIST;
    } else if (e0 && e0->type == REDIS_REPLY_INTEGER && r->elements == 3 &&
               r->element[1]->type == REDIS_REPLY_ARRAY) {
        put_reply_take(m, board, r, out);
    } else {
        rc = -EIO;
    }
    freeReplyObject(r);
    return rc;
}

int board_put(struct board_model *m, const char *board, const struct board_settings_patch *patch,
              int *created, const char **field, struct board_info *out)
{
    for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
        struct board_settings cur;
        int exists = 0;
        int rc = board_settings_get(m, board, &cur, &exists);
        if (rc)
            return rc;
        rc = exists ? put_update(m, board, &cur, patch, field, out)
                    : put_create(m, board, patch, out);
        if (rc == PUT_AGAIN)
            continue;
        if (rc == 0)
            *created = !exists;
        return rc;
    }
    return -EAGAIN; /* the board keeps changing under us */
}

int board_delete(struct board_model *m, const char *board)
{
    struct board_keys k;
    make_keys(m, board, &k);
    struct board_settings set;
    int exists = 0;
    int rc = board_settings_get(m, board, &set, &exists);
    if (rc)
        return rc;
    if (!exists)
        return -ENOENT;
    /* the settings, the registry entry, the period index (delete_board.lua UNLINKs every set it
     * lists), the plain set and every readable period's set (listed too; named here as well, so
     * a set the index does not list, written by an older rankd, goes with them) */
    enum { MAX_KEYS = 4 + PERIOD_RETAIN_MAX + 2 };
    char(*zs)[192] = calloc(MAX_KEYS, sizeof(*zs));
    char(*ids)[PERIOD_ID_MAX] = calloc(MAX_KEYS, sizeof(*ids));
    const char **argv = calloc(MAX_KEYS + 2, sizeof(*argv));
    if (!zs || !ids || !argv) {
        free(zs);
        free(ids);
        free(argv);
        return -ENOMEM;
    }
    int nk = 0;
    argv[nk++] = k.meta;
    argv[nk++] = k.registry;
    argv[nk++] = k.index;
    argv[nk++] = k.z;
    int np = board_periods(m, &set, ids, MAX_KEYS - 4);
    for (int i = 0; i < np; i++) {
        snprintf(zs[i], sizeof(zs[i]), "%s:{%s}:z:%s", m->prefix, board, ids[i]);
        argv[nk++] = zs[i];
    }
    argv[nk] = board;
    redisReply *r = run_script(m, STORE_SCRIPT_DELETE_BOARD, nk, 1, argv, NULL, &rc);
    free(zs);
    free(ids);
    free(argv);
    if (!r)
        return rc;
    rc = r->type == REDIS_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
    freeReplyObject(r);
    if (rc == 0) {
        board_settings_default(&set);
        view_put(m, board, &set, 0);
    }
    return rc;
}

int board_reset(struct board_model *m, const char *board)
{
    struct board_keys k;
    make_keys(m, board, &k);
    struct board_settings set;
    struct board_where w;
    int rc = current_where(m, board, &set, &w);
    if (rc)
        return rc;
    char gen[32];
    new_generation(gen);
    const char *argv[] = {k.meta, w.z, gen};
    redisReply *r = run_script(m, STORE_SCRIPT_RESET_BOARD, 2, 1, argv, NULL, &rc);
    if (!r)
        return rc;
    rc = r->type == REDIS_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
    freeReplyObject(r);
    return rc;
}

#define TRIM_CHUNK 250 /* measured: 1000 removals from a 3M set took 3-5 ms, over the 2 ms goal */

int board_trim(struct board_model *m, const char *board, int64_t keep, int64_t below_key,
               int64_t *removed)
{
    struct board_settings set;
    struct board_where w;
    int rc = current_where(m, board, &set, &w);
    if (rc)
        return rc;
    char from[32], chunk[16];
    if (keep >= 0) {
        snprintf(from, sizeof(from), "%" PRId64, keep);
    } else {
        /* the first stored value of a worse score: (key + 1) * 2^T */
        int bits = score_codec_tie_bits(&set.layout);
        snprintf(from, sizeof(from), "%" PRId64, (below_key + 1) * (INT64_C(1) << bits));
    }
    snprintf(chunk, sizeof(chunk), "%d", TRIM_CHUNK);
    const char *argv[] = {w.z, keep >= 0 ? "rank" : "score", from, chunk};
    int64_t total = 0;
    for (;;) {
        redisReply *r = run_script(m, STORE_SCRIPT_TRIM, 1, 3, argv, NULL, &rc);
        if (!r)
            return rc;
        long long n = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
        freeReplyObject(r);
        total += n;
        if (n < TRIM_CHUNK)
            break;
    }
    *removed = total;
    return 0;
}

int board_member_delete(struct board_model *m, const char *board, const char *id, size_t id_len)
{
    struct board_keys k;
    make_keys(m, board, &k);
    struct board_settings set;
    struct board_where w;
    int rc = current_where(m, board, &set, &w);
    if (rc)
        return rc;
    const char *argv[] = {k.meta, w.z, id};
    const size_t lens[] = {strlen(k.meta), strlen(w.z), id_len};
    redisReply *r = run_script(m, STORE_SCRIPT_DELETE_MEMBER, 2, 1, argv, lens, &rc);
    if (!r)
        return rc;
    rc = r->type != REDIS_REPLY_INTEGER ? -EIO
         : r->integer < 0               ? -ENOENT
         : r->integer == 0              ? -ENODATA
                                        : 0;
    freeReplyObject(r);
    return rc;
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

/* ZCARD of every board's current set on one connection, pipelined in chunks of LIST_CHUNK. */
#define LIST_CHUNK 64 /* keys live on the stack: 64 boards, about 50 KB */
static int list_totals(struct board_model *m, struct board_list *l)
{
    int err = 0;
    struct store_conn *c = store_acquire(m->store, &err);
    if (!c)
        return err;
    static const size_t zl = 5;
    int rc = 0;
    for (size_t at = 0; at < l->n && rc == 0; at += LIST_CHUNK) {
        size_t n = l->n - at < LIST_CHUNK ? l->n - at : LIST_CHUNK;
        struct board_keys k[LIST_CHUNK];
        const char *args[LIST_CHUNK][2];
        const char *hm[LIST_CHUNK][5];
        size_t lens[LIST_CHUNK][2];
        const char *const *argv[LIST_CHUNK];
        const size_t *lv[LIST_CHUNK];
        int argc[LIST_CHUNK];
        redisReply *rs[LIST_CHUNK];
        /* first each board's period settings, then the size of its current set */
        for (size_t i = 0; i < n; i++) {
            make_keys(m, l->names[at + i], &k[i]);
            hm[i][0] = "HMGET";
            hm[i][1] = k[i].meta;
            hm[i][2] = "period";
            hm[i][3] = "timezone";
            hm[i][4] = "retain";
            argv[i] = hm[i];
            lv[i] = NULL;
            argc[i] = 5;
        }
        rc = store_pipeline(c, (int)n, argc, argv, lv, rs);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            struct board_settings set;
            board_settings_default(&set);
            const redisReply *x = rs[i];
            if (x->type == REDIS_REPLY_ARRAY && x->elements == 3) {
                if (x->element[0]->str)
                    period_kind_parse(x->element[0]->str, &set.period);
                set.tz_min = x->element[1]->str ? text_int(x->element[1]->str) : 0;
                set.retain = x->element[2]->str ? text_int(x->element[2]->str) : 1;
            }
            freeReplyObject(rs[i]);
            struct board_where w;
            where_resolve(m, l->names[at + i], set.period, set.tz_min, set.retain, NULL, &w);
            snprintf(k[i].z, sizeof(k[i].z), "%s", w.z);
        }
        if (rc)
            break;
        for (size_t i = 0; i < n; i++) {
            args[i][0] = "ZCARD";
            args[i][1] = k[i].z;
            lens[i][0] = zl;
            lens[i][1] = strlen(k[i].z);
            argv[i] = args[i];
            lv[i] = lens[i];
            argc[i] = 2;
        }
        rc = store_pipeline(c, (int)n, argc, argv, lv, rs);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            l->totals[at + i] = rs[i]->type == REDIS_REPLY_INTEGER ? rs[i]->integer : 0;
            freeReplyObject(rs[i]);
        }
    }
    store_release(m->store, c);
    return rc;
}

/* Append the names of one SSCAN reply to l (grown as needed); *cursor = the next cursor. */
static int list_take(struct board_list *l, size_t *cap, const redisReply *r, uint64_t *cursor)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0]->str ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
        return -EIO;
    *cursor = strtoull(r->element[0]->str, NULL, 10);
    const redisReply *names = r->element[1];
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
static void list_sort_unique(struct board_list *l)
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

int board_list_get(struct board_model *m, uint64_t cursor, int count, struct board_list **out)
{
    struct board_keys k;
    make_keys(m, NULL, &k);
    struct board_list *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    size_t cap = 0;
    int rc = 0;
    do { /* each SSCAN is O(COUNT); stop at `count` names or the end of the registry */
        char cur[24], cnt[16];
        snprintf(cur, sizeof(cur), "%" PRIu64, cursor);
        snprintf(cnt, sizeof(cnt), "%d", count - (int)l->n);
        const char *argv[] = {"SSCAN", k.registry, cur, "COUNT", cnt};
        redisReply *r = run_command(m, 5, argv, NULL, &rc);
        if (r)
            rc = list_take(l, &cap, r, &cursor);
        freeReplyObject(r);
    } while (rc == 0 && cursor != 0 && l->n < (size_t)count);
    if (rc == 0) {
        list_sort_unique(l);
        l->next_cursor = cursor;
        l->totals = calloc(l->n ? l->n : 1, sizeof(*l->totals));
        rc = l->totals ? list_totals(m, l) : -ENOMEM;
    }
    if (rc) {
        board_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* ---------------------------------------------------------------- records */

int board_record_get(struct board_model *m, const char *id, size_t id_len, char **json)
{
    struct board_keys k;
    make_keys(m, NULL, &k);
    const char *argv[] = {"HGET", k.items, id};
    size_t len[] = {4, strlen(k.items), id_len};
    int err = 0;
    redisReply *r = run_command(m, 3, argv, len, &err);
    if (!r)
        return err;
    int rc = r->type == REDIS_REPLY_STRING ? 0 : -ENODATA;
    if (rc == 0 && !(*json = strndup(r->str, r->len)))
        rc = -ENOMEM;
    freeReplyObject(r);
    return rc;
}

int board_record_put(struct board_model *m, const char *id, size_t id_len, const char *json,
                     size_t json_len)
{
    struct board_keys k;
    make_keys(m, NULL, &k);
    const char *argv[] = {"HSET", k.items, id, json};
    size_t len[] = {4, strlen(k.items), id_len, json_len};
    int err = 0;
    redisReply *r = run_write_command(m, 4, argv, len, &err);
    if (!r)
        return err;
    freeReplyObject(r);
    return 0;
}

int board_record_delete(struct board_model *m, const char *id, size_t id_len)
{
    struct board_keys k;
    make_keys(m, NULL, &k);
    const char *argv[] = {"HDEL", k.items, id};
    size_t len[] = {4, strlen(k.items), id_len};
    int err = 0;
    redisReply *r = run_write_command(m, 3, argv, len, &err);
    if (!r)
        return err;
    int rc = r->type == REDIS_REPLY_INTEGER && r->integer > 0 ? 0 : -ENODATA;
    freeReplyObject(r);
    return rc;
}
