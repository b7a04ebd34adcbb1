/* board.c -- leaderboard model over Redis sorted sets; the contract is in board.h. */
#include "board.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crc16.h"
#include "records.h"
#include "store_async.h"
#include "util.h"

#define KEY_MAX BOARD_KEY_LEN /* prefix (64) + board (64) + punctuation and suffix */
#define COMPACT_CHUNK 1000
#define WRITE_RETRIES 8

/* ---------------------------------------------------------------- the model's scripts */

/* The bodies of service/lua/ (the Makefile makes each build/gen/lua/NAME.lua.h), registered with
 * the store once per process (board_scripts_register); the store knows them by handle only. */
enum {
    SCRIPT_WRITE = 0,     /* lua/write.lua: score writes */
    SCRIPT_COMPACT,       /* lua/compact.lua: renumber one tie group, one chunk */
    SCRIPT_PAGE,          /* lua/page.lua: settings + total + one page + records */
    SCRIPT_MEMBER,        /* lua/member.lua: settings + one member + its record */
    SCRIPT_AROUND,        /* lua/around.lua: a page centred on a member */
    SCRIPT_CREATE_BOARD,  /* lua/create_board.lua: a new board's settings */
    SCRIPT_PUT_BOARD,     /* lua/put_board.lua: change settings */
    SCRIPT_RESET_BOARD,   /* lua/reset_board.lua: empty the current period */
    SCRIPT_DELETE_BOARD,  /* lua/delete_board.lua: UNLINK a board's keys */
    SCRIPT_TRIM,          /* lua/trim.lua: remove one chunk of a board's tail */
    SCRIPT_SWEEP,         /* lua/sweep.lua: UNLINK one chunk of unreadable period sets */
    SCRIPT_DELETE_MEMBER, /* lua/delete_member.lua: remove one member */
    SCRIPT_AROUND_SCORE,  /* lua/around_score.lua: a page centred on a score */
    SCRIPT_LOOKUP,        /* lua/lookup.lua: many members of one board */
    SCRIPT_PERCENTILE,    /* lua/percentile.lua: the member at a percentile */
    SCRIPT_TOP,           /* lua/top.lua: the first members up to a percent */
    SCRIPT_MEMBER_BOARDS, /* lua/member_boards.lua: one member on several boards */
    SCRIPT_WALK,          /* lua/walk.lua: a page by score range and/or from a cursor */
    SCRIPT_COUNT
};

static const char *const script_body[SCRIPT_COUNT] = {
    [SCRIPT_WRITE] =
#include "lua/write.lua.h"
        ,
    [SCRIPT_COMPACT] =
#include "lua/compact.lua.h"
        ,
    [SCRIPT_PAGE] =
#include "lua/page.lua.h"
        ,
    [SCRIPT_MEMBER] =
#include "lua/member.lua.h"
        ,
    [SCRIPT_AROUND] =
#include "lua/around.lua.h"
        ,
    [SCRIPT_CREATE_BOARD] =
#include "lua/create_board.lua.h"
        ,
    [SCRIPT_PUT_BOARD] =
#include "lua/put_board.lua.h"
        ,
    [SCRIPT_RESET_BOARD] =
#include "lua/reset_board.lua.h"
        ,
    [SCRIPT_DELETE_BOARD] =
#include "lua/delete_board.lua.h"
        ,
    [SCRIPT_TRIM] =
#include "lua/trim.lua.h"
        ,
    [SCRIPT_SWEEP] =
#include "lua/sweep.lua.h"
        ,
    [SCRIPT_DELETE_MEMBER] =
#include "lua/delete_member.lua.h"
        ,
    [SCRIPT_AROUND_SCORE] =
#include "lua/around_score.lua.h"
        ,
    [SCRIPT_LOOKUP] =
#include "lua/lookup.lua.h"
        ,
    [SCRIPT_PERCENTILE] =
#include "lua/percentile.lua.h"
        ,
    [SCRIPT_TOP] =
#include "lua/top.lua.h"
        ,
    [SCRIPT_MEMBER_BOARDS] =
#include "lua/member_boards.lua.h"
        ,
    [SCRIPT_WALK] =
#include "lua/walk.lua.h"
        ,
};

static const struct store_script *script_handle[SCRIPT_COUNT];
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

/* The scripts whose writes a client is told of: with --write-replicas each call waits for the
 * replicas (store.h) before its 2xx. Not compact.lua (the write.lua call that follows it on the
 * same connection covers it: WAIT counts every write before it there) nor sweep.lua (behind a
 * reply, nobody waits for it; a sweep lost in a failover is done again by the next). */
static int script_waits(int i)
{
    return i == SCRIPT_WRITE || i == SCRIPT_CREATE_BOARD || i == SCRIPT_PUT_BOARD ||
           i == SCRIPT_RESET_BOARD || i == SCRIPT_DELETE_BOARD || i == SCRIPT_TRIM ||
           i == SCRIPT_DELETE_MEMBER;
}

static void scripts_init(void)
{
    for (int i = 0; i < SCRIPT_COUNT; i++)
        script_handle[i] = script_waits(i) ? store_script_register_write(script_body[i])
                                           : store_script_register(script_body[i]);
    /* the reads that write nothing (flags=no-writes: Redis refuses a write in them): a replica
     * may answer them with --read-from-replicas (store.h); every other script writes */
    static const int read_only[] = {SCRIPT_PAGE,         SCRIPT_MEMBER, SCRIPT_AROUND,
                                    SCRIPT_AROUND_SCORE, SCRIPT_LOOKUP, SCRIPT_PERCENTILE,
                                    SCRIPT_TOP,          SCRIPT_WALK};
    int ro = 0;
    for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++)
        ro |= store_script_read_only(script_handle[read_only[i]]);
    assert(ro == 0 && "the reads a replica may answer are flagged no-writes");
    (void)ro;
    /* member_boards.lua stays on the primary: its reply holds several boards' counters, which
     * board_read_version does not judge */
    /* on a cluster the records are in other slots: fetched after the read (records.h) */
    store_async_script_then(script_handle[SCRIPT_PAGE], records_then_page);
    store_async_script_then(script_handle[SCRIPT_AROUND], records_then_around);
    store_async_script_then(script_handle[SCRIPT_MEMBER], records_then_member);
    store_async_script_then(script_handle[SCRIPT_AROUND_SCORE], records_then_around);
    store_async_script_then(script_handle[SCRIPT_TOP], records_then_top);
    store_async_script_then(script_handle[SCRIPT_WALK], records_then_walk);
    store_async_script_then(script_handle[SCRIPT_LOOKUP], records_then_lookup);
    /* percentile.lua and member_boards.lua read no records */
}

void board_scripts_register(void)
{
    pthread_once(&scripts_once, scripts_init);
}

/* The handle of one of the model's scripts. */
static const struct store_script *script(int which)
{
    board_scripts_register();
    return script_handle[which];
}

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
    char dense[KEY_MAX]; /* the distinct scores of z */
    /* what the scripts are given for the records hash and the registry: those keys on one
     * Redis; on a cluster, where they are in other slots, the settings hash again (the scripts
     * then leave them to the caller: records.h, registry_step) */
    const char *script_items, *script_registry;
};

/* 1 when the model's store is a Redis Cluster: records and registry outside the board scripts. */
static int clustered(const struct board_model *m)
{
    return store_cluster_mode(m->store);
}

/* What a board owns (board.h): every kind of its keys, and what its delete does to each. The
 * delete names the BOARD_GONE_UNLINKED ones (board_owned_keys); schema/redis-keys.md lists the
 * same, in "What a board owns". */
const struct board_key_spec board_key_specs[BOARD_KEY_KINDS] = {
    [BOARD_KEY_META] = {":meta", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_INDEX] = {":periods", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_SET] = {":z", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_DENSE] = {":dense", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_SWEEP] = {":sweep", BOARD_GONE_TTL, 1},
    [BOARD_KEY_IDEM] = {":idem:", BOARD_GONE_LIFE, 1},
    [BOARD_KEY_EXPORT] = {":export:", BOARD_GONE_TOKEN, 1},
    [BOARD_KEY_PAGE] = {":page:", BOARD_GONE_GEN, 1},
};

void board_key_make(struct strb *b, char *out, size_t len, const char *prefix, const char *board,
                    enum board_key_kind kind)
{
    strb_init(b, out, len);
    strb_str(b, prefix);
    strb_str(b, ":{");
    strb_str(b, board ? board : "");
    strb_str(b, "}");
    strb_str(b, board_key_specs[kind].suffix);
}

int board_key_kind_of(const char *key, const char *prefix, const char *board)
{
    size_t pl = strlen(prefix), bl = strlen(board);
    if (strncmp(key, prefix, pl) != 0 || strncmp(key + pl, ":{", 2) != 0 ||
        strncmp(key + pl + 2, board, bl) != 0 || key[pl + 2 + bl] != '}')
        return -1;
    const char *rest = key + pl + 3 + bl;
    for (int k = 0; k < BOARD_KEY_KINDS; k++) {
        const char *sfx = board_key_specs[k].suffix;
        size_t sl = strlen(sfx);
        if (strncmp(rest, sfx, sl) != 0)
            continue;
        /* ":idem:" and the like go on with a name; ":z" and ":dense" end or go on with ":" */
        if (sfx[sl - 1] == ':' ? rest[sl] != '\0' : rest[sl] == '\0' || rest[sl] == ':')
            return k;
    }
    return -1;
}

int board_owned_keys(const char *prefix, const char *board, const char (*periods)[PERIOD_ID_MAX],
                     int np, char (*out)[BOARD_KEY_LEN], int max)
{
    int n = 0;
    struct strb b;
    for (int k = 0; k < BOARD_KEY_KINDS; k++) {
        if (board_key_specs[k].fate != BOARD_GONE_UNLINKED)
            continue;
        if (n >= max)
            return -ENOSPC;
        board_key_make(&b, out[n++], BOARD_KEY_LEN, prefix, board, (enum board_key_kind)k);
    }
    for (int i = 0; i < np; i++) {
        for (int k = BOARD_KEY_SET; k <= BOARD_KEY_DENSE; k++) {
            if (n >= max)
                return -ENOSPC;
            board_key_make(&b, out[n], BOARD_KEY_LEN, prefix, board, (enum board_key_kind)k);
            strb_str(&b, ":");
            strb_str(&b, periods[i]);
            n++;
        }
    }
    return n;
}

static void make_keys(const struct board_model *m, const char *board, struct board_keys *k)
{
    struct strb b;
    board_key_make(&b, k->z, KEY_MAX, m->prefix, board, BOARD_KEY_SET);
    board_key_make(&b, k->dense, KEY_MAX, m->prefix, board, BOARD_KEY_DENSE);
    board_key_make(&b, k->meta, KEY_MAX, m->prefix, board, BOARD_KEY_META);
    board_key_make(&b, k->index, KEY_MAX, m->prefix, board, BOARD_KEY_INDEX);
    records_key(m->prefix, 0, "", 0, k->items, KEY_MAX); /* strb: every read makes its keys */
    strb_init(&b, k->registry, KEY_MAX);
    strb_str(&b, m->prefix);
    strb_str(&b, ":boards");
    k->script_items = clustered(m) ? k->meta : k->items;
    k->script_registry = clustered(m) ? k->meta : k->registry;
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
    s->max_members = 0;
    s->version = 0;
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
static void settings_from_reply(const struct store_reply *r, struct board_settings *s)
{
    board_settings_default(s);
    for (size_t i = 0; r && r->type == STORE_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
        if (!f || !v)
            continue;
        /* strtol is 0 for text anyway; skipping it for the text fields halves this loop */
        int text = (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z');
        long n = text ? 0 : strtol(v, NULL, 10);
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
        else if (strcmp(f, "max_members") == 0 && n >= 0 && n <= BOARD_MAX_MEMBERS_MAX)
            s->max_members = n;
        else if (strcmp(f, "version") == 0)
            s->version = strtoll(v, NULL, 10);
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
    util_copy(hints[i].key, sizeof(hints[i].key), full);
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

/* A board's settings as a flat HGETALL reply (empty: no board): parsed into *out (the defaults
 * when r is not one) and remembered. */
static void view_note(const struct board_model *m, const char *board, const struct store_reply *r,
                      struct board_settings *out)
{
    settings_from_reply(r, out);
    if (r && r->type == STORE_REPLY_ARRAY)
        view_put(m, board, out, r->elements > 0);
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

/* <prefix>:{<board>}:<what>, or with a period <prefix>:{<board>}:<what>:<period>
 * (schema/redis-keys.md): what is BOARD_KEY_SET ("z") or BOARD_KEY_DENSE ("dense", its distinct
 * scores); on every page hit, hence no snprintf */
static void set_key(char *out, size_t len, const char *prefix, const char *board,
                    enum board_key_kind what, const char *period)
{
    struct strb b;
    board_key_make(&b, out, len, prefix, board, what);
    if (period) {
        strb_str(&b, ":");
        strb_str(&b, period);
    }
}

static void z_key(char *out, size_t len, const char *prefix, const char *board, const char *period)
{
    set_key(out, len, prefix, board, BOARD_KEY_SET, period);
}

static void dense_key(char *out, size_t len, const char *prefix, const char *board,
                      const char *period)
{
    set_key(out, len, prefix, board, BOARD_KEY_DENSE, period);
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
        dense_key(w->dense, sizeof(w->dense), m->prefix, board, NULL);
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
    dense_key(w->dense, sizeof(w->dense), m->prefix, board, w->period);
    return 0;
}

int board_where_settled(struct board_model *m, const char *board, const char *period,
                        const struct board_settings *s, int exists, struct board_where *out)
{
    if (!exists)
        return -ENOENT;
    return where_resolve(m, board, s->period, s->tz_min, s->retain, period, out);
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

/* The store writes' faults are counted on (board_model.writes). */
static struct store *writes_of(const struct board_model *m)
{
    return m->writes ? m->writes : m->store;
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
    board_key_make(&b, a->keys[2], KEY_MAX, m->prefix, board, BOARD_KEY_SWEEP);
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
static int sweep_more(const struct store_reply *r)
{
    return r && r->type == STORE_REPLY_ARRAY && r->elements == 2 &&
           r->element[1]->type == STORE_REPLY_INTEGER && r->element[1]->integer == 1;
}

/* The sweep on an event loop's write connection: its chunks go one after the other, behind
 * whatever the loop sends meanwhile; nothing waits for them. Best effort: a fault ends it. */
struct sweep_job {
    struct store_async *conn;
    int rounds;
    struct sweep_args a;
};

static int sweep_job_send(struct sweep_job *sj);

static void sweep_reply(void *arg, int rc, struct store_reply **replies)
{
    struct sweep_job *sj = arg;
    if (rc == 0 && sweep_more(replies[0]) && ++sj->rounds < SWEEP_ROUNDS_MAX &&
        sweep_job_send(sj) == 0)
        return;
    free(sj);
}

static int sweep_job_send(struct sweep_job *sj)
{
    int rc = store_async_script(sj->conn, script(SCRIPT_SWEEP), 3, 7, sj->a.argv, NULL, 0,
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

/* The argv of one write.lua call (its header says the layout): per target 5 keys (the set, its
 * settings, the period index, the idempotency record, the set's distinct scores) and 13 header
 * values, then the records hash and the registry; 9 values before the targets' headers; per
 * entry 3 values and 3 per target. */
#define WRITE_TARGET_KEYS 5
#define WRITE_TARGET_HDR 13
#define WRITE_GLOBAL_ARGS 9
#define IDEM_KEY_MAX (KEY_MAX + BOARD_IDEM_KEY_MAX + 8)

struct write_target_args {
    char meta[KEY_MAX], index[KEY_MAX], idem[IDEM_KEY_MAX];
    char hdr[WRITE_TARGET_HDR][32];
};

struct write_args {
    const char **argv;
    size_t *len;
    char (*num)[24]; /* per entry and target: key, lo, hi */
    struct write_target_args *t;
    char items[KEY_MAX], registry[KEY_MAX];
    char glob[WRITE_GLOBAL_ARGS][32];
    int nkeys, nargs;
};

static void write_args_free(struct write_args *w)
{
    free(w->argv);
    free(w->len);
    free(w->num);
    free(w->t);
}

static void args_put(struct write_args *w, size_t *at, const char *s, size_t len)
{
    w->argv[*at] = s;
    w->len[*at] = len;
    (*at)++;
}

static void args_str(struct write_args *w, size_t *at, const char *s)
{
    args_put(w, at, s, strlen(s));
}

/* The argv of write.lua for entries[at..at+n) of every target of j. */
static int write_args_build(struct write_args *w, const struct board_write_job *j, size_t at,
                            size_t n)
{
    static const char *const ops[] = {"set", "best", "incr"};
    size_t nt = j->ntargets;
    size_t total =
        nt * (WRITE_TARGET_KEYS + WRITE_TARGET_HDR) + 2 + WRITE_GLOBAL_ARGS + n * (3 + 3 * nt);
    w->argv = calloc(total, sizeof(*w->argv));
    w->len = calloc(total, sizeof(*w->len));
    w->num = calloc(n * nt * 3 + 1, sizeof(*w->num));
    w->t = calloc(nt, sizeof(*w->t));
    if (!w->argv || !w->len || !w->num || !w->t)
        return -ENOMEM;
    struct board_model *m = j->m;
    size_t k = 0;
    for (size_t b = 0; b < nt; b++) {
        const struct board_write_target *t = &j->targets[b];
        struct write_target_args *ta = &w->t[b];
        struct board_keys keys;
        make_keys(m, t->board, &keys);
        util_copy(ta->meta, sizeof(ta->meta), keys.meta);
        util_copy(ta->index, sizeof(ta->index), keys.index);
        struct strb sb;
        board_key_make(&sb, ta->idem, sizeof(ta->idem), m->prefix, t->board, BOARD_KEY_IDEM);
        size_t idem_len = strlen(ta->idem);
        if (j->idem_key && idem_len + j->idem_len < sizeof(ta->idem)) {
            memcpy(ta->idem + idem_len, j->idem_key, j->idem_len);
            idem_len += j->idem_len;
        }
        /* on a cluster a key that does not exist makes a migrating slot refuse the whole call
         * (ASK, then TRYAGAIN): the period index and the idempotency record are named only when
         * the call uses them, else the settings hash stands in (never touched then) */
        int cl = clustered(m);
        args_str(w, &k, t->where.z);
        args_str(w, &k, ta->meta);
        args_str(w, &k, cl && t->assumed.period == PERIOD_NONE ? ta->meta : ta->index);
        if (cl && !(j->digest && j->idem_key))
            args_str(w, &k, ta->meta);
        else
            args_put(w, &k, ta->idem, idem_len);
        /* the distinct scores: in the board's slot, and kept exactly when the set is */
        args_str(w, &k, t->where.dense);
        if (b == 0) { /* a cluster: records and registry are the caller's (records.h) */
            util_copy(w->items, sizeof(w->items), keys.script_items);
            util_copy(w->registry, sizeof(w->registry), keys.script_registry);
        }
    }
    args_str(w, &k, w->items);
    args_str(w, &k, w->registry);
    w->nkeys = (int)k;
    snprintf(w->glob[0], 32, "%zu", n);
    snprintf(w->glob[1], 32, "%zu", nt);
    snprintf(w->glob[2], 32, "%" PRId64, BOARD_IDEM_TTL_MS);
    snprintf(w->glob[3], 32, "%" PRId64, atomic_load(&tie_cap));
    args_str(w, &k, w->glob[0]);
    args_str(w, &k, w->glob[1]);
    args_str(w, &k, (j->flags & BOARD_WRITE_RANKS) ? "1" : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_ATOMIC) ? "1" : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_CREATE) ? "1" : "0");
    args_str(w, &k, (j->flags & BOARD_WRITE_PREV) ? "1" : "0");
    args_str(w, &k, j->digest && j->idem_key ? j->digest : "");
    args_str(w, &k, w->glob[2]);
    args_str(w, &k, w->glob[3]);
    for (size_t b = 0; b < nt; b++) {
        const struct board_write_target *t = &j->targets[b];
        const struct board_settings *s = &t->assumed;
        const struct score_layout *l = &s->layout;
        char(*h)[32] = w->t[b].hdr;
        snprintf(h[0], 32, "%" PRId64, INT64_C(1) << score_codec_tie_bits(l));
        util_copy(h[1], 32, score_tiebreak_name(l->tiebreak));
        snprintf(h[2], 32, "%" PRId64, score_codec_scaled_max(l));
        util_copy(h[3], 32, score_order_name(l->order));
        snprintf(h[4], 32, "%d", l->decimals);
        snprintf(h[5], 32, "%d", s->page_size);
        snprintf(h[6], 32, "%d", s->page_ttl_ms);
        new_generation(h[8]);
        util_copy(h[9], 32, period_kind_name(s->period));
        snprintf(h[10], 32, "%d", s->tz_min);
        util_copy(h[11], 32, s->period != PERIOD_NONE ? "1" : "");
        /* the current period's start: its score in the index */
        snprintf(h[12], 32, "%" PRId64,
                 s->period != PERIOD_NONE ? period_start(s->period, s->tz_min, now_ms(m), 0) : 0);
        for (int v = 0; v < WRITE_TARGET_HDR; v++) {
            if (v == 7)
                args_str(w, &k, t->board);
            else
                args_str(w, &k, h[v]);
        }
    }
    const struct board_entry *e0 = j->targets[0].entries + at;
    for (size_t i = 0; i < n; i++) {
        args_put(w, &k, e0[i].id, e0[i].id_len);
        args_str(w, &k, ops[e0[i].op]);
        args_put(w, &k, e0[i].record ? e0[i].record : "", e0[i].record ? e0[i].record_len : 0);
        for (size_t b = 0; b < nt; b++) {
            const struct board_entry *e = &j->targets[b].entries[at + i];
            char(*num)[24] = w->num + (i * nt + b) * 3;
            snprintf(num[0], 24, "%" PRId64, e->key);
            num[1][0] = num[2][0] = '\0';
            if (e->op == BOARD_OP_INCR && e->has_lo)
                snprintf(num[1], 24, "%" PRId64, e->key_lo);
            if (e->op == BOARD_OP_INCR && e->has_hi)
                snprintf(num[2], 24, "%" PRId64, e->key_hi);
            args_str(w, &k, num[0]);
            args_str(w, &k, num[1]);
            args_str(w, &k, num[2]);
        }
    }
    w->nargs = (int)k - w->nkeys;
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

/* One target's section of a write.lua reply into t (outcomes[0..handled)); -EIO when its shape
 * is not one. */
static int section_take(const struct store_reply *x, struct board_write_target *t, size_t at,
                        size_t handled, int *listed)
{
    if (x->type != STORE_REPLY_ARRAY ||
        x->elements < WRITE_SECTION_HEAD + WRITE_RESULT_VALUES * handled)
        return -EIO;
    const struct store_reply *const *h = (const struct store_reply *const *)x->element;
    for (int i = 0; i < WRITE_SECTION_HEAD; i++)
        if (i != 3 && !reply_int(h[i]))
            return -EIO;
    struct score_layout l;
    section_layout(h, &l);
    if (h[0]->integer == 1)
        *listed = 1;
    t->version = h[1]->integer;
    t->trimmed = h[5]->integer;
    for (size_t i = 0; i < handled; i++) {
        const struct store_reply *const *v = h + WRITE_SECTION_HEAD + WRITE_RESULT_VALUES * i;
        if (!reply_int(v[0]) || !reply_int(v[2]) || !reply_int(v[3]) || !reply_int(v[5]))
            return -EIO;
        struct board_outcome *o = &t->outcomes[at + i];
        o->rc = v[0]->integer == 0 ? 0 : -ERANGE;
        o->score = decode_stored(&l, v[1]->str);
        o->rank = v[2]->integer >= 0 ? v[2]->integer + 1 : 0;
        o->updated = (int)v[3]->integer;
        o->has_prev = v[4]->str && v[4]->str[0];
        o->prev_score = o->has_prev ? decode_stored(&l, v[4]->str) : 0;
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
 * digest; -EIO: an error reply or an unexpected shape. */
static int write_reply_take(struct store_reply *r, struct board_write_job *j, size_t n,
                            size_t *done, int *full)
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
    if (status == 1 || status == 4 || status == 5) {
        rc = status == 1 ? -EAGAIN : status == 4 ? -ENOENT : -EKEYREJECTED;
        goto out;
    }
    if (status == 2) {
        *done = handled;
        rc = -ERANGE;
        goto out;
    }
    *full = status == 3;
    if (*full) {
        j->full_target = target;
        snprintf(j->full_key, sizeof(j->full_key), "%s",
                 r->element[2]->str ? r->element[2]->str : "0");
    }
    if (r->elements != WRITE_REPLY_HEAD + j->ntargets)
        goto out;
    for (size_t b = 0; b < j->ntargets; b++)
        if (section_take(r->element[WRITE_REPLY_HEAD + b], &j->targets[b], call_at(j), handled,
                         &j->listed[b]))
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
            sweep_submit(j->m, j->conn, j->targets[b].board, &j->targets[b].assumed);
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
        store_note_fault(writes_of(j->m), "compact", r->str);
        write_job_finish(j, write_job_errno(j, -EIO, 1));
        return;
    }
    long long moved = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
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

/* One chunk of compact.lua for the full group j->full_key of target j->full_target: renumbered
 * in chunks, so no single call grows with the group. */
static int write_job_compact(struct board_write_job *j)
{
    const struct board_write_target *t = &j->targets[j->full_target];
    const struct score_layout *l = &t->assumed.layout;
    int64_t key = strtoll(j->full_key, NULL, 10);
    char lo[32], caps[32], start[32], chunk[16];
    snprintf(lo, sizeof(lo), "%" PRId64, key * (INT64_C(1) << score_codec_tie_bits(l)));
    snprintf(caps, sizeof(caps), "%" PRId64, atomic_load(&tie_cap));
    snprintf(chunk, sizeof(chunk), "%d", COMPACT_CHUNK);
    snprintf(start, sizeof(start), "%" PRId64, j->compacted);
    struct board_keys k;
    make_keys(j->m, t->board, &k);
    const char *argv[] = {t->where.z, k.meta, lo, caps, score_tiebreak_name(l->tiebreak),
                          start,      chunk};
    int rc = store_async_script(j->conn, script(SCRIPT_COMPACT), 2, 5, argv, NULL, j->deadline_ms,
                                compact_reply, j);
    return rc < 0 ? rc : 0;
}

static int registered_memo(const struct board_model *m, const char *board, int op);

/* After a write.lua reply (rc, full as write_reply_take said; done entries handled): finish,
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
    make_keys(j->m, t->board, &k);
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
        registered_memo(j->m, t->board, 1);
    }
    int rc =
        records_put(j->conn, writes_of(j->m), j->m->prefix, j->recs, n, created ? k.registry : NULL,
                    t->board, j->deadline_ms, write_records_done, j);
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
    replies[0] = NULL; /* taken: write_reply_take frees it */
    int refused = 0;
    if (r->type == STORE_REPLY_ERROR) {
        store_note_fault(writes_of(j->m), "write", r->str);
        refused = store_reply_errno(r); /* OOM, READONLY: refused, nothing written */
    }
    store_note_write(refused);
    size_t done = 0;
    int full = 0;
    size_t at = call_at(j), before = j->at;
    rc = write_reply_take(r, j, j->n - at, &done, &full);
    /* -ERANGE (all or nothing): handled names the entry refused, none written by this call; but
     * refused after an earlier call applied a part (a writer in between), the outcome is mixed */
    if (rc == -ERANGE && before > 0)
        rc = -ETIME;
    else if (rc == 0 || rc == -ERANGE)
        j->at = at + done;
    done = j->at > before ? j->at - before : 0; /* progress made by this call */
    if (rc == -EIO) /* an error reply: the script ran (and wrote nothing after the error) */
        rc = write_job_errno(j, refused ? refused : rc, 0);
    if (unreplicated && done > 0 && (rc == 0 || full))
        j->unconfirmed = 1; /* it wrote (a replay too: write.lua touches its record), unconfirmed */
    /* a cluster: the records of what this call applied (a replay's too: the first call's
     * records step may have failed), and the registry after a board's first write (version 1:
     * this call created it, or a PUT did, whose SADD came first: SADD again changes nothing) */
    size_t from = at, upto = rc == 0 ? j->at : at;
    int created = rc == 0 && !j->registered && j->targets[0].version == 1 && upto > from;
    if (clustered(j->m) && (upto > from || created)) {
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

/* Send write.lua for entries[at..n); 0 or a negative errno (nothing sent). */
static int write_job_send(struct board_write_job *j)
{
    struct write_args w = {0};
    int rc = write_args_build(&w, j, call_at(j), j->n - call_at(j));
    if (!rc)
        rc = store_async_script(j->conn, script(SCRIPT_WRITE), w.nkeys, w.nargs, w.argv, w.len,
                                j->deadline_ms, write_reply, j);
    write_args_free(&w);
    return rc < 0 ? rc : 0;
}

/* Boards this process added to the registry lately (a cluster), so that the writes following a
 * new board's first (an upload's chunks, within the view's second) do not each add it again: by
 * the hash of the board's key, the last REGISTERED_MS. Forgotten when the board is deleted. A
 * stale entry costs nothing: write.lua says when it created a board, and the registry gets it
 * then. */
#define REGISTERED_SLOTS 64
#define REGISTERED_MS 10000
static struct {
    char key[KEY_MAX];
    int64_t at_ms;
} registered[REGISTERED_SLOTS];
static pthread_mutex_t registered_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1: added `board` lately (check), or note it (note 1) / forget it (note 0). */
static int registered_memo(const struct board_model *m, const char *board, int op)
{
    struct board_keys k;
    make_keys(m, board, &k);
    size_t i = crc16(k.meta, strlen(k.meta)) % REGISTERED_SLOTS;
    int64_t now = util_now_ms();
    pthread_mutex_lock(&registered_lock);
    int known = strcmp(registered[i].key, k.meta) == 0 && now - registered[i].at_ms < REGISTERED_MS;
    if (op >= 0) {
        util_copy(registered[i].key, sizeof(registered[i].key), op ? k.meta : "");
        registered[i].at_ms = now;
    }
    pthread_mutex_unlock(&registered_lock);
    return known;
}

/* The registry's SADD before the first write of a board this process believes new (a cluster):
 * answered, the write goes on. */
static void write_registered(void *arg, int rc, struct store_reply **replies)
{
    struct board_write_job *j = arg;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR) {
        store_note_fault(writes_of(j->m), "registry", replies[0]->str);
        rc = store_reply_errno(replies[0]);
    }
    if (!rc && store_async_unreplicated(j->conn, replies, 1))
        j->unconfirmed = 1; /* the registry's name, on its master only: no 2xx for the write */
    if (!rc) {
        registered_memo(j->m, j->targets[0].board, 1);
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
        registered_memo(j->m, board, -1))
        return 1;
    struct board_keys k;
    make_keys(j->m, board, &k);
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
        int rc = where_resolve(m, t->board, t->assumed.period, t->assumed.tz_min, t->assumed.retain,
                               NULL, &t->where);
        if (rc)
            return rc;
        /* a cluster runs a script on one slot, and each board is a slot of its own: a write
         * to several boards at once (one all-or-nothing call on one Redis) is refused there */
        if (clustered(m) && b > 0)
            return -EXDEV;
    }
    int rc;
    if (clustered(m) && j->ntargets == 1 && (rc = write_register_first(j)) <= 0)
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
        settings_from_reply(replies[0], &j->settings);
        j->exists = replies[0]->elements > 0;
        view_put(j->m, j->board, &j->settings, j->exists);
    }
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* a read: nothing to lose */
}

static int settings_send(struct board_settings_job *j)
{
    struct board_keys k;
    make_keys(j->m, j->board, &k);
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

/* Fill items from a flat {member, stored, ...} range, a parallel records array and the ranks of
 * the type read (empty for ordinal: the position is the rank); the first entry is at 1-based
 * position `first`. */
static int fill_items(struct board_page *p, const struct store_reply *range,
                      const struct store_reply *records, const struct store_reply *ranks,
                      int64_t first)
{
    size_t n = range->type == STORE_REPLY_ARRAY ? range->elements / 2 : 0;
    p->items = calloc(n ? n : 1, sizeof(*p->items));
    if (!p->items)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct board_item *it = &p->items[i];
        const struct store_reply *id = range->element[2 * i];
        it->id = id->str;
        it->id_len = id->len;
        it->score = decode_stored(&p->settings.layout, range->element[2 * i + 1]->str);
        it->stored = (int64_t)stored_value(range->element[2 * i + 1]->str);
        it->ordinal = first + (int64_t)i;
        it->rank =
            reply_array(ranks, i + 1) ? reply_i64(ranks->element[i], it->ordinal) : it->ordinal;
        item_record(it, records, i);
    }
    p->n = n;
    return 0;
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
    view_note(m, board, r->element[0], &p->settings);
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
 * settings, set, records, distinct scores; period kind, offset, retain, rank type. Returns how
 * many argv slots it filled (8). */
static int read_head(struct board_model *m, const char *board, const struct board_where *w,
                     enum rank_type rank, struct board_read *out)
{
    struct board_keys k;
    make_keys(m, board, &k);
    util_copy(out->meta, sizeof(out->meta), k.meta);
    util_copy(out->items, sizeof(out->items), k.script_items);
    util_copy(out->z, sizeof(out->z), w->z);
    util_copy(out->dense, sizeof(out->dense), w->dense);
    i64_text(out->tz, sizeof(out->tz), w->tz_min); /* no snprintf: every read prepares one */
    i64_text(out->retain, sizeof(out->retain), w->retain);
    const char *head[] = {
        out->meta, out->z,      out->items,          out->dense, period_kind_name(w->kind),
        out->tz,   out->retain, rank_type_name(rank)};
    for (int i = 0; i < 8; i++) {
        out->argv[i] = head[i];
        out->lens[i] = strlen(head[i]);
    }
    out->nkeys = 4;
    return 8;
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
    out->script = script(scripts[a->kind]);
    char(*num)[32] = out->num;
    i64_text(num[0], 32, a->page);
    i64_text(num[1], 32, a->size);
    switch (a->kind) {
    case BOARD_READ_PAGE: /* page.lua: page, size */
        arg_put(out, &k, num[0], strlen(num[0]));
        arg_put(out, &k, num[1], strlen(num[1]));
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
        break;
    }
    out->nargs = k - out->nkeys;
}

int64_t board_read_version(const struct store_reply *r)
{
    if (r->type == STORE_REPLY_NIL)
        return 0; /* no such board (yet, where the read went) */
    if (r->type != STORE_REPLY_ARRAY || r->elements < 2 || r->element[0]->type != STORE_REPLY_ARRAY)
        return -1; /* a retry, a refusal ({'layout', settings}), an error */
    const struct store_reply *set = r->element[0];
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

int board_page_take(struct board_model *m, const char *board, struct store_reply *r, int64_t page,
                    struct board_page **out)
{
    int rc = read_reply_shape(m, board, r, 6);
    if (rc)
        return rc;
    int64_t used = reply_i64(r->element[2], 0);
    int64_t count = r->elements > 6 ? reply_i64(r->element[6], 0) : 0; /* top.lua's */
    rc = page_from_reply(m, board, r, (page - 1) * used + 1, 3, out);
    if (rc == 0)
        (*out)->count = count;
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
        view_note(m, board, r->element[0], &set);
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
        view_note(m, board, r->element[1], seen);
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
    else if (tag->type == STORE_REPLY_STRING && r->elements > 1 &&
             (strcmp(tag->str, "layout") == 0 || strcmp(tag->str, "refused") == 0))
        rc = -ESTALE;
    else if (r->elements < 9)
        rc = -EIO;
    if (rc == -ESTALE) {
        view_note(m, board, r->element[1], seen);
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
    view_note(m, board, r->element[0], &set);
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
    mb->score = decode_stored(&mb->settings.layout, r->element[2]->str);
    mb->ordinal = reply_i64(r->element[3], 0) + 1;
    mb->rank = reply_i64(r->element[5], mb->ordinal);
    if (r->element[4]->type == STORE_REPLY_STRING) {
        mb->record = r->element[4]->str;
        mb->record_len = r->element[4]->len;
    }
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
    view_note(m, board, r->element[0], &set);
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
        p->id = r->element[3]->str;
        p->id_len = r->element[3]->len;
        p->score = decode_stored(&p->settings.layout, r->element[4]->str);
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
    out->script = script(SCRIPT_LOOKUP);
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

int board_lookup_take(struct board_model *m, const char *board, struct store_reply *r,
                      struct board_lookup **out)
{
    int rc = read_reply_shape(m, board, r, 5);
    if (rc)
        return rc;
    const struct store_reply *found = r->element[2], *missing = r->element[3],
                             *records = r->element[4];
    if (found->type != STORE_REPLY_ARRAY || missing->type != STORE_REPLY_ARRAY) {
        store_reply_free(r);
        return -EIO;
    }
    struct board_settings set;
    view_note(m, board, r->element[0], &set);
    struct board_lookup *l = calloc(1, sizeof(*l));
    size_t n = found->elements / 4, nm = missing->elements;
    if (l) {
        l->reply = r;
        l->items = calloc(n ? n : 1, sizeof(*l->items));
        l->missing = calloc(nm ? nm : 1, sizeof(*l->missing));
        l->missing_len = calloc(nm ? nm : 1, sizeof(*l->missing_len));
    }
    if (!l || !l->items || !l->missing || !l->missing_len) {
        if (l)
            board_lookup_free(l);
        else
            store_reply_free(r);
        return -ENOMEM;
    }
    l->settings = set;
    l->total = reply_i64(r->element[1], 0);
    for (size_t i = 0; i < n; i++) {
        struct store_reply **x = found->element + 4 * i;
        struct board_item *it = &l->items[i];
        it->id = x[0]->str;
        it->id_len = x[0]->len;
        it->score = decode_stored(&l->settings.layout, x[1]->str);
        it->ordinal = reply_i64(x[2], 0) + 1;
        it->rank = reply_i64(x[3], it->ordinal);
        item_record(it, records, i);
    }
    qsort(l->items, n, sizeof(*l->items), cmp_item_ordinal);
    l->n = n;
    for (size_t i = 0; i < nm; i++) {
        l->missing[i] = missing->element[i]->str;
        l->missing_len[i] = missing->element[i]->len;
    }
    l->nmissing = nm;
    *out = l;
    return 0;
}

/* ---- one member on several boards */

size_t board_boards_calls(const struct board_model *m, size_t n)
{
    /* a cluster: a script holds one slot, and each board is a slot of its own */
    return clustered(m) ? n : (size_t)(n > 0);
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
        make_keys(m, boards[i], &k);
        board_where_cached(m, boards[i], NULL, &w); /* the current period: never a Redis call */
        util_copy(out->keys[nk++], KEY_MAX, k.meta);
        util_copy(out->keys[nk++], KEY_MAX, w.z);
        util_copy(out->keys[nk++], KEY_MAX, w.dense);
        snprintf(out->nums[2 * i], sizeof(out->nums[0]), "%d", w.tz_min);
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
    out->script = script(SCRIPT_MEMBER_BOARDS);
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
        view_note(m, boards[i], e->element[0], &out[i].settings);
        out[i].exists = 1;
        out[i].total = reply_i64(e->element[1], 0);
        if (e->element[2]->type != STORE_REPLY_STRING)
            continue;
        out[i].found = 1;
        out[i].score = decode_stored(&out[i].settings.layout, e->element[2]->str);
        out[i].ordinal = reply_i64(e->element[3], 0) + 1;
        out[i].rank = reply_i64(e->element[4], out[i].ordinal);
    }
    store_reply_free(r);
    return rc;
}

void board_page_free(struct board_page *p)
{
    if (!p)
        return;
    store_reply_free(p->reply);
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

/* ---------------------------------------------------------------- control operations: calls */

/*
 * Each control operation's commands and the reading of their replies, for the event loops'
 * chains (board_ctl_submit): a _prepare fills a call's keys and arguments, a _take reads its
 * reply (never freeing it).
 */

/* ZCARD's reply as board_info_get's total. */
static void info_take(const struct store_reply *r, const struct board_where *w,
                      struct board_info *out)
{
    out->total = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
    snprintf(out->period, sizeof(out->period), "%s", w->period);
}

/* Text of the nine settings put_board.lua takes, in its order (see the script). */
static void settings_text(const struct board_settings *v, char out[9][24])
{
    snprintf(out[8], 24, "%" PRId64, v->max_members);
    snprintf(out[0], 24, "%s", score_order_name(v->layout.order));
    snprintf(out[1], 24, "%s", score_tiebreak_name(v->layout.tiebreak));
    snprintf(out[2], 24, "%d", v->layout.decimals);
    snprintf(out[3], 24, "%s", period_kind_name(v->period));
    snprintf(out[4], 24, "%d", v->tz_min);
    snprintf(out[5], 24, "%d", v->page_size);
    snprintf(out[6], 24, "%d", v->page_ttl_ms);
    snprintf(out[7], 24, "%d", v->retain);
}

/* The key of the set (dense: of the distinct scores) of the period `d` periods before the one
 * holding `now` under the given period settings: <prefix>:{<board>}:z:<period id> */
static void period_set_key(const struct board_model *m, const char *board, enum period_kind kind,
                           int tz_min, int64_t now, int d, int dense, char out[KEY_MAX])
{
    char id[PERIOD_ID_MAX];
    period_id(kind, tz_min, period_start(kind, tz_min, now, -d), id);
    set_key(out, KEY_MAX, m->prefix, board, dense ? BOARD_KEY_DENSE : BOARD_KEY_SET, id);
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
    if (p->has_max_members)
        out->max_members = v->max_members;
}

/* What put_board.lua and create_board.lua answer on success: {code, settings, total}. */
static void put_reply_take(struct board_model *m, const char *board, const struct store_reply *r,
                           struct board_info *out)
{
    settings_from_reply(r->element[1], &out->settings);
    out->total = r->element[2]->type == STORE_REPLY_INTEGER ? r->element[2]->integer : 0;
    view_put(m, board, &out->settings, 1);
    struct board_where now_w;
    out->period[0] = '\0';
    if (where_resolve(m, board, out->settings.period, out->settings.tz_min, out->settings.retain,
                      NULL, &now_w) == 0)
        snprintf(out->period, sizeof(out->period), "%s", now_w.period);
}

#define PUT_AGAIN 1 /* the board appeared, went or changed under the call: read it again */

/*
 * A PUT's one script, prepared from the settings just read: create_board.lua for a new board
 * (refused at maxmemory: a new board grows memory), put_board.lua for a change of an existing
 * one (allowed at maxmemory). put_board.lua is sent the current set, the index and the past
 * periods' sets by name: first those both the current and the new retain keep readable (they
 * count for "non-empty"), then those only one of them does (emptied); it sweeps one chunk of the
 * index's unreadable sets itself. argv points into the struct and at `board`.
 */
struct put_call {
    struct board_keys k;
    struct board_where w; /* create: the set the new settings write to */
    char (*zs)[KEY_MAX];
    const char **argv;
    int create;
    int nkeys, nargs;
    char val[9][24], tz[16], retain[16], gen[32], nkeep[16], cut[32];
};

static void put_call_free(struct put_call *c)
{
    free(c->zs);
    free(c->argv);
    c->zs = NULL;
    c->argv = NULL;
}

/* create_board.lua's call for a new board: 0, a period error of where_resolve, or -ENOMEM. */
static int put_create_prepare(struct board_model *m, const char *board,
                              const struct board_settings_patch *patch, struct put_call *c)
{
    static const char *const names[] = {"order",       "tiebreak", "score_decimals",
                                        "period",      "timezone", "page_size",
                                        "page_ttl_ms", "retain",   "max_members"};
    make_keys(m, board, &c->k);
    struct board_settings d, v;
    board_settings_default(&d);
    patch_apply(&d, patch, &v);
    int rc = where_resolve(m, board, v.period, v.tz_min, v.retain, NULL, &c->w);
    if (rc)
        return rc;
    settings_text(&v, c->val);
    new_generation(c->gen);
    c->argv = calloc(4 + 18 + 4, sizeof(*c->argv));
    if (!c->argv)
        return -ENOMEM;
    c->argv[0] = c->k.meta;
    c->argv[1] = c->k.script_registry;
    c->argv[2] = c->w.z;
    c->argv[3] = board;
    for (int i = 0; i < 9; i++) {
        c->argv[4 + 2 * i] = names[i];
        c->argv[5 + 2 * i] = c->val[i];
    }
    c->argv[22] = "gen";
    c->argv[23] = c->gen;
    c->argv[24] = "life"; /* the idempotency records' life (write.lua): this creation's */
    c->argv[25] = c->gen;
    c->create = 1;
    c->nkeys = 3;
    c->nargs = 23;
    return 0;
}

/* put_board.lua's call for a change of an existing board read as `cur`: 0 or -ENOMEM. */
static int put_update_prepare(struct board_model *m, const char *board,
                              const struct board_settings *cur,
                              const struct board_settings_patch *patch, struct put_call *c)
{
    make_keys(m, board, &c->k);
    int periodic = cur->period != PERIOD_NONE;
    int next = patch->has_retain ? patch->value.retain : cur->retain;
    int lo = periodic ? (next < cur->retain ? next : cur->retain) : 0;
    int hi = periodic ? (next > cur->retain ? next : cur->retain) : 0;
    int64_t now = now_ms(m);
    /* the current set, the past ones, then the distinct scores of those emptied (d > lo) */
    c->zs = calloc(2 * (size_t)hi + 1, sizeof(*c->zs));
    c->argv = calloc(2 * (size_t)hi + 3 + 15, sizeof(*c->argv));
    if (!c->zs || !c->argv) {
        put_call_free(c);
        return -ENOMEM;
    }
    if (periodic)
        period_set_key(m, board, cur->period, cur->tz_min, now, 0, 0, c->zs[0]);
    else
        z_key(c->zs[0], KEY_MAX, m->prefix, board, NULL);
    for (int d = 1; d <= hi; d++)
        period_set_key(m, board, cur->period, cur->tz_min, now, d, 0, c->zs[d]);
    for (int d = lo + 1; d <= hi; d++)
        period_set_key(m, board, cur->period, cur->tz_min, now, d, 1, c->zs[hi + d - lo]);
    settings_text(&patch->value, c->val);
    const int has[8] = {patch->has_order,    patch->has_tiebreak, patch->has_decimals,
                        patch->has_period,   patch->has_tz,       patch->has_page_size,
                        patch->has_page_ttl, patch->has_retain};
    snprintf(c->tz, sizeof(c->tz), "%d", cur->tz_min);
    snprintf(c->retain, sizeof(c->retain), "%d", cur->retain);
    new_generation(c->gen);
    snprintf(c->nkeep, sizeof(c->nkeep), "%d", lo);
    snprintf(c->cut, sizeof(c->cut), "%" PRId64,
             periodic ? period_start(cur->period, cur->tz_min, now, -lo) : 0);
    int nk = 0;
    c->argv[nk++] = c->k.meta;
    c->argv[nk++] = c->zs[0];
    c->argv[nk++] = c->k.index;
    for (int d = 1; d <= hi + (hi - lo); d++)
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
    c->create = 0;
    c->nkeys = nk;
    c->nargs = na - nk;
    return 0;
}

/* The reply of the PUT's script: 0 with *out (remembered as the board's view), PUT_AGAIN (the
 * board appeared, went or changed since it was read), -EEXIST with *field, or -EIO. */
static int put_take(struct board_model *m, const char *board, int create,
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
        static const char *const names[] = {"order", "tiebreak", "score_decimals", "period",
                                            "timezone"};
        *field = names[0];
        for (size_t i = 0; i < 5; i++)
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

/* delete_board.lua's call: keys (settings, registry, the period index, the plain set, every
 * readable period's set), then the board's name. */
struct delete_call {
    struct board_keys k;
    char (*zs)[KEY_MAX];
    const char **argv;
    int nkeys;
};

static void delete_call_free(struct delete_call *c)
{
    free(c->zs);
    free(c->argv);
    c->zs = NULL;
    c->argv = NULL;
}

static int delete_prepare(struct board_model *m, const char *board,
                          const struct board_settings *set, struct delete_call *c)
{
    make_keys(m, board, &c->k);
    /* what the board owns (board_owned_keys): the settings, the period index (delete_board.lua
     * UNLINKs every set it lists), the plain set and its distinct scores, and every readable
     * period's set with its distinct scores (listed too; named here as well, so a set the index
     * does not list, written by an older rankd, goes with them); the registry entry after the
     * settings. The other kinds of key become unreachable (board.h: enum board_key_fate). */
    char ids[PERIOD_RETAIN_MAX + 1][PERIOD_ID_MAX];
    int np = board_periods(m, set, ids, PERIOD_RETAIN_MAX + 1);
    int max = BOARD_KEY_KINDS + 2 * np;
    c->zs = calloc((size_t)max, sizeof(*c->zs));
    int n = c->zs ? board_owned_keys(m->prefix, board, (const char(*)[PERIOD_ID_MAX])ids, np, c->zs,
                                     max)
                  : -ENOMEM;
    c->argv = n >= 2 ? calloc((size_t)n + 2, sizeof(*c->argv)) : NULL;
    if (!c->argv) {
        delete_call_free(c);
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
static int delete_take(struct board_model *m, const char *board, const struct store_reply *r)
{
    int rc = r->type == STORE_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
    if (rc == 0) {
        struct board_settings set;
        board_settings_default(&set);
        view_put(m, board, &set, 0);
    }
    return rc;
}

/* reset_board.lua's call: the settings, the current set and its distinct scores, a new
 * generation. */
struct reset_call {
    struct board_keys k;
    char gen[32];
    const char *argv[4];
};

static void reset_prepare(struct board_model *m, const char *board, const struct board_where *w,
                          struct reset_call *c)
{
    make_keys(m, board, &c->k);
    new_generation(c->gen);
    c->argv[0] = c->k.meta;
    c->argv[1] = w->z;
    c->argv[2] = w->dense;
    c->argv[3] = c->gen;
}

/* reset_board.lua's and delete_board.lua's 1/0 reply. */
static int one_or_enoent(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER ? (r->integer ? 0 : -ENOENT) : -EIO;
}

#define TRIM_CHUNK 250 /* measured: 1000 removals from a 3M set took 3-5 ms, over the 2 ms goal */

/* trim.lua's call, repeated until a chunk removes fewer than TRIM_CHUNK: the set, its distinct
 * scores, the settings; then the mode, where the tail starts, the chunk. */
struct trim_call {
    char from[32], chunk[16], meta[KEY_MAX];
    const char *argv[6];
};

static void trim_prepare(const struct board_model *m, const char *board,
                         const struct board_settings *set, const struct board_where *w,
                         int64_t keep, int64_t below_key, struct trim_call *c)
{
    struct board_keys k;
    make_keys(m, board, &k);
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
    c->argv[3] = keep >= 0 ? "rank" : "score";
    c->argv[4] = c->from;
    c->argv[5] = c->chunk;
}

/* The members one trim.lua call removed. */
static long long trim_take(const struct store_reply *r)
{
    return r->type == STORE_REPLY_INTEGER ? r->integer : 0;
}

/* delete_member.lua's call (allow-oom: it must work at maxmemory, where Redis refuses to queue
 * any command of a MULTI ... EXEC): the settings, the current set, its distinct scores, the
 * member. */
struct member_delete_call {
    struct board_keys k;
    const char *argv[4];
    size_t lens[4];
};

static void member_delete_prepare(struct board_model *m, const char *board,
                                  const struct board_where *w, const char *id, size_t id_len,
                                  struct member_delete_call *c)
{
    make_keys(m, board, &c->k);
    c->argv[0] = c->k.meta;
    c->argv[1] = w->z;
    c->argv[2] = w->dense;
    c->argv[3] = id;
    c->lens[0] = strlen(c->k.meta);
    c->lens[1] = strlen(w->z);
    c->lens[2] = strlen(w->dense);
    c->lens[3] = id_len;
}

/* delete_member.lua's reply: 0, -ENOENT no board, -ENODATA no such member, -EIO. */
static int member_delete_take(const struct store_reply *r)
{
    return r->type != STORE_REPLY_INTEGER ? -EIO
           : r->integer < 0               ? -ENOENT
           : r->integer == 0              ? -ENODATA
                                          : 0;
}

/* HGET of a record's reply: 0 and a new copy in *json, -ENODATA, -ENOMEM. */
static int record_take(const struct store_reply *r, char **json)
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
static void list_where(const struct board_model *m, const char *name, const struct store_reply *x,
                       char z[KEY_MAX])
{
    struct board_settings set;
    board_settings_default(&set);
    if (x->type == STORE_REPLY_ARRAY && x->elements >= 3) {
        if (x->element[0]->str)
            period_kind_parse(x->element[0]->str, &set.period);
        set.tz_min = x->element[1]->str ? text_int(x->element[1]->str) : 0;
        set.retain = x->element[2]->str ? text_int(x->element[2]->str) : 1;
    }
    struct board_where w;
    where_resolve(m, name, set.period, set.tz_min, set.retain, NULL, &w);
    snprintf(z, KEY_MAX, "%s", w.z);
}

/* Append the names of one SSCAN reply to l (grown as needed); *cursor = the next cursor. */
static int list_take(struct board_list *l, size_t *cap, const struct store_reply *r,
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

/* SSCAN of the registry from `cursor`, asking for what `count` still lacks. */
static void list_sscan(const struct board_keys *k, uint64_t cursor, int want, char cur[24],
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

/* ---------------------------------------------------------------- control operations on a loop */

/*
 * board_ctl_submit: each operation as a chain of steps, one short command or script each, sent
 * on the loop's connections without waiting; each step's reply starts the next. The calls are
 * the blocking functions' own (the _prepare and _take helpers above).
 */

/* The operation's prepared calls and buffers; freed when the job ends. */
struct ctl_state {
    union {
        struct put_call put;
        struct delete_call del;
        struct reset_call reset;
        struct trim_call trim;
        struct member_delete_call mdel;
    } u;
    char (*keys)[KEY_MAX];    /* list's sets */
    int n;                    /* how many of them */
    struct board_keys k;      /* list: the registry; records: the records hash */
    size_t cap;               /* list: names allocated */
    struct batch_item *items; /* a batch's sends: each reply knows its index (a cluster's nodes
                               * answer in no order among themselves) */
    char *ghost;              /* list on a cluster: 1 for a name with no board (see registry) */
    char rkey[KEY_MAX];       /* records: the hash of the id */
    int registered;           /* put: the registry has the board (a cluster) */
    int end_rc;               /* delete: the outcome, while the registry is updated after */
    void (*registry_next)(struct board_ctl_job *j, int rc);
};

/* One send of a batch: its job and its index. */
struct batch_item {
    struct board_ctl_job *j;
    int i;
};

static void ctl_end(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    if (s && j->op == BOARD_CTL_PUT)
        put_call_free(&s->u.put);
    if (s && j->op == BOARD_CTL_DELETE)
        delete_call_free(&s->u.del);
    if (s) {
        free(s->keys);
        free(s->items);
        free(s->ghost);
        free(s);
    }
    j->state = NULL;
    if (rc == 0 && j->unconfirmed)
        rc = -EREMOTEIO; /* written, not confirmed on --write-replicas replicas: never a 2xx */
    if (rc && j->list) {
        board_list_free(j->list);
        j->list = NULL;
    }
    j->done(j, rc == -ECANCELED ? -EIO : rc); /* may free j */
}

/* The start of every reply: 1 to go on with the replies; 0 when the job ended here (a fault, an
 * error reply) or a read cut by a lost connection was sent once more (j->again). A write step
 * written and not answered may have run: -ETIME. */
static int ctl_ok(struct board_ctl_job *j, int rc, struct store_reply **replies, int n, int write)
{
    if (rc == 0) {
        for (int i = 0; i < n; i++)
            if (replies[i]->type == STORE_REPLY_ERROR) {
                store_note_fault(write ? writes_of(j->m) : j->m->store, "control", replies[i]->str);
                ctl_end(j, store_reply_errno(replies[i])); /* the command did not run */
                return 0;
            }
        if (write && store_async_unreplicated(j->writes, replies, n))
            j->unconfirmed = 1; /* every write step waits (ctl_send_arg, ctl_script) */
        return 1;
    }
    if (!write && (rc == -ECONNRESET || rc == -EIO) && j->again && !j->resent &&
        (!j->deadline_ms || util_now_ms() < j->deadline_ms)) {
        j->resent = 1; /* a read: once more, on the connection dialled again */
        rc = j->again(j);
        if (rc == 0)
            return 0;
    } else if (write && (rc == -ETIMEDOUT || rc == -ECONNRESET)) {
        rc = -ETIME;
    } else if (!write && rc == -ECONNRESET) {
        rc = -EIO;
    }
    ctl_end(j, rc);
    return 0;
}

/* Send one group for a step, with `arg` for fn (NULL: the job); 0 or a negative errno (nothing
 * sent). */
static int ctl_send_arg(struct board_ctl_job *j, int write, int n, const int *argc,
                        const char *const *const *argv, const size_t *const *lens, int64_t deadline,
                        store_async_fn fn, void *arg)
{
    int64_t d = deadline ? deadline : j->deadline_ms;
    /* a write step a client is told of waits for --write-replicas (store_async.h) */
    int rc = write
                 ? store_async_send_replicated(j->writes, n, argc, argv, lens, d, fn, arg ? arg : j)
                 : store_async_send(j->reads, n, argc, argv, lens, d, fn, arg ? arg : j);
    return rc < 0 ? rc : 0;
}

static int ctl_send(struct board_ctl_job *j, int write, int n, const int *argc,
                    const char *const *const *argv, const size_t *const *lens, int64_t deadline,
                    store_async_fn fn)
{
    return ctl_send_arg(j, write, n, argc, argv, lens, deadline, fn, NULL);
}

/* A batch's items for n sends (replacing the last batch's); 0 or -ENOMEM. */
static int batch_items(struct board_ctl_job *j, int n)
{
    struct ctl_state *s = j->state;
    free(s->items);
    s->items = calloc(n > 0 ? (size_t)n : 1, sizeof(*s->items));
    if (!s->items)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        s->items[i] = (struct batch_item){.j = j, .i = i};
    return 0;
}

static int ctl_script(struct board_ctl_job *j, const struct store_script *sc, int nkeys, int nargs,
                      const char *const *argv, const size_t *lens, int64_t deadline,
                      store_async_fn fn)
{
    int rc = store_async_script(j->writes, sc, nkeys, nargs, argv, lens,
                                deadline ? deadline : j->deadline_ms, fn, j);
    return rc < 0 ? rc : 0;
}

/* A step's send failed: nothing was sent, so its code stands (-ECONNREFUSED, -ETIMEDOUT...). */
static void ctl_step(struct board_ctl_job *j, int rc)
{
    if (rc)
        ctl_end(j, rc);
}

/* ---- the registry on a cluster: its own slot, so its SADD and SREM are calls of their own,
 * around the board's script (before a creation, after a deletion: the registry is never short
 * of a board; a name with no board is what a failure between them leaves, and GET /boards leaves
 * it out) */

static void ctl_registry_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR) {
        store_note_fault(writes_of(j->m), "registry", replies[0]->str);
        rc = store_reply_errno(replies[0]);
    }
    if (!rc && store_async_unreplicated(j->writes, replies, 1))
        j->unconfirmed = 1;
    s->registry_next(j, rc);
}

/* `verb` (SADD, SREM) of the board in the registry, then next(j, rc). 0 or a negative errno
 * (nothing sent). */
static int ctl_registry(struct board_ctl_job *j, const char *verb,
                        void (*next)(struct board_ctl_job *j, int rc))
{
    struct ctl_state *s = j->state;
    struct board_keys k;
    make_keys(j->m, j->board, &k);
    s->registry_next = next;
    const char *argv[] = {verb, k.registry, j->board};
    const char *const *av[] = {argv};
    const int argc[] = {3};
    return ctl_send(j, 1, 1, argc, av, NULL, 0, ctl_registry_reply);
}

/* After the SREM of a deletion: the deletion's own outcome (a failed SREM leaves a name with no
 * board: counted, logged, left out of the list). */
static void delete_unregistered(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    if (rc && rc != -ECANCELED)
        store_note_fault(writes_of(j->m), "registry", "a deleted board's name stays listed");
    ctl_end(j, s->end_rc);
}

/* A deletion (or a DELETE of a name with no board) ends with rc: on a cluster after the SREM. */
static void delete_end(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    s->end_rc = rc;
    if (clustered(j->m))
        registered_memo(j->m, j->board, 0);
    if ((rc == 0 || rc == -ENOENT) && clustered(j->m) &&
        ctl_registry(j, "SREM", delete_unregistered) == 0)
        return;
    ctl_end(j, rc);
}

/* ---- the settings read most operations start with */

static void ctl_settings_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    if (replies[0]->type != STORE_REPLY_ARRAY) {
        ctl_end(j, -EIO);
        return;
    }
    settings_from_reply(replies[0], &j->cur);
    j->exists = replies[0]->elements > 0;
    view_put(j->m, j->board, &j->cur, j->exists);
    j->again = NULL;
    j->resent = 0;
    if (j->op != BOARD_CTL_PUT && !j->exists) {
        if (j->op == BOARD_CTL_DELETE)
            delete_end(j, -ENOENT); /* a cluster: a name the registry kept goes */
        else
            ctl_end(j, -ENOENT);
        return;
    }
    rc = where_resolve(j->m, j->board, j->cur.period, j->cur.tz_min, j->cur.retain, NULL, &j->w);
    if (rc)
        ctl_end(j, rc);
    else
        j->then(j);
}

static int ctl_settings_send(struct board_ctl_job *j)
{
    struct board_keys k;
    make_keys(j->m, j->board, &k);
    const char *argv[] = {"HGETALL", k.meta};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, ctl_settings_reply);
}

/* Read the settings (HGETALL, remembered as the board's view), then then(j) with j->cur,
 * j->exists and j->w (where the current members are); -ENOENT ends the job before then(j)
 * unless it is a PUT. */
static int ctl_with_settings(struct board_ctl_job *j, void (*then)(struct board_ctl_job *j))
{
    j->then = then;
    j->again = ctl_settings_send;
    return ctl_settings_send(j);
}

/* ---- GET /boards/{board}: settings, then ZCARD */

static void info_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    j->info.settings = j->cur;
    info_take(replies[0], &j->w, &j->info);
    ctl_end(j, 0);
}

static int info_send(struct board_ctl_job *j)
{
    const char *argv[] = {"ZCARD", j->w.z};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, info_reply);
}

static void info_then(struct board_ctl_job *j)
{
    j->again = info_send;
    ctl_step(j, info_send(j));
}

/* ---- a batch of one-key commands, pipelined (a PUT's follow-ups, the list's totals): each
 * reply is taken with its index (on a cluster they come from several nodes), then `after` runs
 * once every one is in */

static void batch_next(struct board_ctl_job *j);

static void batch_reply(void *arg, int rc, struct store_reply **replies)
{
    struct batch_item *it = arg;
    struct board_ctl_job *j = it->j;
    j->batch_at = it->i;
    if (!j->failed) {
        if (rc)
            j->failed = j->batch_write && (rc == -ETIMEDOUT || rc == -ECONNRESET) ? -ETIME
                        : rc == -ECONNRESET                                       ? -EIO
                                                                                  : rc;
        else if (replies[0]->type == STORE_REPLY_ERROR)
            j->failed = store_reply_errno(replies[0]);
        else if (j->batch_take)
            j->batch_take(j, j->batch_at, replies[0]);
    }
    if (--j->outstanding > 0)
        return;
    if (j->failed)
        ctl_end(j, j->failed);
    else
        batch_next(j);
}

/* Send verb keys[i] [args[i]] for i in 0..n, on the writes (write) or reads connection. Ends
 * the job on a failed send once the replies already due are in. */
static void batch_send(struct board_ctl_job *j, const char *verb, char (*keys)[KEY_MAX],
                       char (*args)[32], int n, int write,
                       void (*take)(struct board_ctl_job *j, int i, const struct store_reply *r),
                       void (*after)(struct board_ctl_job *j))
{
    j->batch_write = write;
    j->batch_take = take;
    j->batch_after = after;
    j->batch_at = 0;
    j->failed = batch_items(j, n);
    j->outstanding = 0;
    for (int i = 0; !j->failed && i < n; i++) {
        const char *argv[] = {verb, keys[i], args ? args[i] : NULL};
        const char *const *av[] = {argv};
        const int argc[] = {args ? 3 : 2};
        int rc = ctl_send_arg(j, write, 1, argc, av, NULL, 0, batch_reply,
                              &((struct ctl_state *)j->state)->items[i]);
        if (rc) {
            j->failed = rc;
            break;
        }
        j->outstanding++;
    }
    if (j->outstanding == 0) { /* nothing in flight: go on (or end) now */
        if (j->failed)
            ctl_end(j, j->failed);
        else
            batch_next(j);
    }
}

static void batch_next(struct board_ctl_job *j)
{
    void (*after)(struct board_ctl_job *) = j->batch_after;
    j->batch_after = NULL;
    after(j);
}

/* ---- PUT /boards/{board}: settings, then create_board.lua or put_board.lua (again, from the
 * settings, when the board changed under it) */

static void put_then(struct board_ctl_job *j);

static void put_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    int create = s->u.put.create;
    if (create && rc == 0) /* how Redis answered a write that grows memory (/readyz, /metrics) */
        store_note_write(store_reply_errno(replies[0]));
    if (!ctl_ok(j, rc, replies, 1, 1))
        return;
    put_call_free(&s->u.put);
    rc = put_take(j->m, j->board, create, replies[0], &j->field, &j->info);
    if (rc == PUT_AGAIN) {
        if (++j->attempts >= WRITE_RETRIES) {
            ctl_end(j, -EAGAIN); /* the board keeps changing under us */
            return;
        }
        j->resent = 0;
        ctl_step(j, ctl_with_settings(j, put_then));
        return;
    }
    if (rc == 0)
        j->created = create;
    ctl_end(j, rc);
}

static int put_send(struct board_ctl_job *j)
{
    struct put_call *c = &((struct ctl_state *)j->state)->u.put;
    return ctl_script(j, script(c->create ? SCRIPT_CREATE_BOARD : SCRIPT_PUT_BOARD), c->nkeys,
                      c->nargs, c->argv, NULL, 0, put_reply);
}

/* A cluster's creation, after the registry's SADD: the board itself. */
static void put_registered(struct board_ctl_job *j, int rc)
{
    if (rc) { /* nothing of the board was written */
        ctl_end(j, rc == -ETIMEDOUT || rc == -ECONNRESET ? -EIO : rc);
        return;
    }
    registered_memo(j->m, j->board, 1);
    ctl_step(j, put_send(j));
}

static void put_then(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    struct put_call *c = &s->u.put;
    put_call_free(c);
    memset(c, 0, sizeof(*c));
    int rc = j->exists ? put_update_prepare(j->m, j->board, &j->cur, j->patch, c)
                       : put_create_prepare(j->m, j->board, j->patch, c);
    if (!rc && c->create && clustered(j->m) && !s->registered) {
        s->registered = 1; /* the registry first (see the registry above) */
        rc = ctl_registry(j, "SADD", put_registered);
    } else if (!rc) {
        rc = put_send(j);
    }
    ctl_step(j, rc);
}

/* ---- DELETE /boards/{board}, POST reset: settings, then one script */

static void delete_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        delete_end(j, delete_take(j->m, j->board, replies[0]));
}

static void delete_then(struct board_ctl_job *j)
{
    struct delete_call *c = &((struct ctl_state *)j->state)->u.del;
    int rc = delete_prepare(j->m, j->board, &j->cur, c);
    if (!rc)
        rc =
            ctl_script(j, script(SCRIPT_DELETE_BOARD), c->nkeys, 1, c->argv, NULL, 0, delete_reply);
    ctl_step(j, rc);
}

static void reset_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        ctl_end(j, one_or_enoent(replies[0]));
}

static void reset_then(struct board_ctl_job *j)
{
    struct reset_call *c = &((struct ctl_state *)j->state)->u.reset;
    reset_prepare(j->m, j->board, &j->w, c);
    ctl_step(j, ctl_script(j, script(SCRIPT_RESET_BOARD), 3, 1, c->argv, NULL, 0, reset_reply));
}

/* ---- DELETE /boards/{board}/members?keep|below: settings, then trim.lua chunks */

static int trim_send(struct board_ctl_job *j);

static void trim_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 1))
        return;
    long long n = trim_take(replies[0]);
    j->removed += n;
    if (n < TRIM_CHUNK)
        ctl_end(j, 0);
    else
        ctl_step(j, trim_send(j)); /* the next chunk: other clients ran in between */
}

static int trim_send(struct board_ctl_job *j)
{
    struct trim_call *c = &((struct ctl_state *)j->state)->u.trim;
    /* each chunk has the request's time from its send: a trim's work grows with what it
     * removes, like an upload's (each chunk stays short in Redis) */
    int64_t deadline = j->chunk_timeout_ms ? util_now_ms() + j->chunk_timeout_ms : 0;
    return ctl_script(j, script(SCRIPT_TRIM), 3, 3, c->argv, NULL, deadline, trim_reply);
}

static void trim_then(struct board_ctl_job *j)
{
    trim_prepare(j->m, j->board, &j->cur, &j->w, j->keep, j->below_key,
                 &((struct ctl_state *)j->state)->u.trim);
    j->removed = 0;
    ctl_step(j, trim_send(j));
}

/* ---- DELETE /boards/{board}/members/{id}: settings, then delete_member.lua */

static void member_delete_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        ctl_end(j, member_delete_take(replies[0]));
}

static void member_delete_then(struct board_ctl_job *j)
{
    struct member_delete_call *c = &((struct ctl_state *)j->state)->u.mdel;
    member_delete_prepare(j->m, j->board, &j->w, j->id, j->id_len, c);
    ctl_step(j, ctl_script(j, script(SCRIPT_DELETE_MEMBER), 3, 1, c->argv, c->lens, 0,
                           member_delete_reply));
}

/* ---- GET /boards: SSCAN steps, then HMGET and ZCARD batches */

static int list_send(struct board_ctl_job *j);

static void list_count(struct board_ctl_job *j, int i, const struct store_reply *r)
{
    j->list->totals[i] = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
}

/* The list is complete; on a cluster, the names with no board are left out: what a failure
 * between the registry's SADD and the board's creation (or the board's deletion and the
 * registry's SREM) leaves, which a DELETE of the name removes. */
static void list_done(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    struct board_list *l = j->list;
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (s->ghost && s->ghost[i]) {
            free(l->names[i]);
            continue;
        }
        l->names[kept] = l->names[i];
        l->totals[kept++] = l->totals[i];
    }
    l->n = kept;
    ctl_end(j, 0);
}

static void list_placed(struct board_ctl_job *j, int i, const struct store_reply *r)
{
    struct ctl_state *s = j->state;
    list_where(j->m, j->list->names[i], r, s->keys[i]);
    if (s->ghost && r->type == STORE_REPLY_ARRAY && r->elements == 4 && !r->element[3]->str)
        s->ghost[i] = 1;
}

static void list_totals_async(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    batch_send(j, "ZCARD", s->keys, NULL, s->n, 0, list_count, list_done);
}

static void list_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    uint64_t cursor = 0;
    rc = list_take(j->list, &s->cap, replies[0], &cursor);
    j->cursor = cursor;
    j->resent = 0;
    if (!rc && cursor != 0 && j->list->n < (size_t)j->count) {
        ctl_step(j, list_send(j));
        return;
    }
    struct board_list *l = j->list;
    if (!rc) {
        list_sort_unique(l);
        l->next_cursor = cursor;
        l->totals = calloc(l->n ? l->n : 1, sizeof(*l->totals));
        s->keys = calloc(l->n ? l->n : 1, sizeof(*s->keys));
        rc = l->totals && s->keys ? 0 : -ENOMEM;
    }
    if (rc) {
        ctl_end(j, rc);
        return;
    }
    /* first each board's period settings, then the size of its current set */
    s->n = (int)l->n;
    for (int i = 0; i < s->n; i++) {
        struct board_keys k;
        make_keys(j->m, l->names[i], &k);
        util_copy(s->keys[i], KEY_MAX, k.meta);
    }
    j->again = NULL;
    /* HMGET meta period timezone retain, as one batch: the keys are the settings hashes */
    j->batch_write = 0;
    j->batch_take = list_placed;
    j->batch_after = list_totals_async;
    j->batch_at = 0;
    j->failed = batch_items(j, s->n);
    j->outstanding = 0;
    if (!j->failed && clustered(j->m) && !(s->ghost = calloc(l->n ? l->n : 1, 1)))
        j->failed = -ENOMEM;
    for (int i = 0; !j->failed && i < s->n; i++) {
        /* order: set on every board (no board: a name the registry kept, see registry) */
        const char *hm[] = {"HMGET", s->keys[i], "period", "timezone", "retain", "order"};
        const char *const *av[] = {hm};
        const int argc[] = {6};
        rc = ctl_send_arg(j, 0, 1, argc, av, NULL, 0, batch_reply, &s->items[i]);
        if (rc) {
            j->failed = rc;
            break;
        }
        j->outstanding++;
    }
    if (j->outstanding == 0) {
        if (j->failed)
            ctl_end(j, j->failed);
        else
            batch_next(j);
    }
}

static int list_send(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    char cur[24], cnt[16];
    const char *argv[5];
    list_sscan(&s->k, j->cursor, j->count - (int)j->list->n, cur, cnt, argv);
    const char *const *av[] = {argv};
    const int argc[] = {5};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, list_reply);
}

/* ---- records: one command */

static void record_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    int write = j->op != BOARD_CTL_RECORD_GET;
    if (!ctl_ok(j, rc, replies, 1, write))
        return;
    const struct store_reply *r = replies[0];
    if (j->op == BOARD_CTL_RECORD_GET)
        rc = record_take(r, &j->record);
    else if (j->op == BOARD_CTL_RECORD_DELETE)
        rc = r->type == STORE_REPLY_INTEGER && r->integer > 0 ? 0 : -ENODATA;
    ctl_end(j, rc);
}

static int record_send(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    static const char *const verbs[] = {[BOARD_CTL_RECORD_GET] = "HGET",
                                        [BOARD_CTL_RECORD_PUT] = "HSET",
                                        [BOARD_CTL_RECORD_DELETE] = "HDEL"};
    const char *argv[] = {verbs[j->op], s->rkey, j->id, j->json};
    const size_t len[] = {4, strlen(s->rkey), j->id_len, j->json_len};
    const char *const *av[] = {argv};
    const size_t *const lv[] = {len};
    const int argc[] = {j->op == BOARD_CTL_RECORD_PUT ? 4 : 3};
    return ctl_send(j, j->op != BOARD_CTL_RECORD_GET, 1, argc, av, lv, 0, record_reply);
}

int board_ctl_submit(struct board_model *m, struct store_async *reads, struct store_async *writes,
                     enum board_ctl op, struct board_ctl_job *j)
{
    if (!reads || !writes)
        return -ECONNREFUSED;
    struct ctl_state *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    j->m = m;
    j->reads = reads;
    j->writes = writes;
    j->op = op;
    j->state = s;
    j->resent = 0;
    j->again = NULL;
    j->list = NULL;
    j->record = NULL;
    j->removed = 0;
    j->created = 0;
    j->attempts = 0;
    j->unconfirmed = 0;
    j->field = NULL;
    int rc = 0;
    switch (op) {
    case BOARD_CTL_INFO:
        rc = ctl_with_settings(j, info_then);
        break;
    case BOARD_CTL_PUT:
        rc = ctl_with_settings(j, put_then);
        break;
    case BOARD_CTL_DELETE:
        rc = ctl_with_settings(j, delete_then);
        break;
    case BOARD_CTL_RESET:
        rc = ctl_with_settings(j, reset_then);
        break;
    case BOARD_CTL_TRIM:
        rc = ctl_with_settings(j, trim_then);
        break;
    case BOARD_CTL_MEMBER_DELETE:
        rc = ctl_with_settings(j, member_delete_then);
        break;
    case BOARD_CTL_LIST:
        make_keys(m, NULL, &s->k);
        j->list = calloc(1, sizeof(*j->list));
        j->again = list_send;
        rc = j->list ? list_send(j) : -ENOMEM;
        break;
    case BOARD_CTL_RECORD_GET:
    case BOARD_CTL_RECORD_PUT:
    case BOARD_CTL_RECORD_DELETE:
        records_key(m->prefix, clustered(m), j->id, j->id_len, s->rkey, sizeof(s->rkey));
        j->again = op == BOARD_CTL_RECORD_GET ? record_send : NULL;
        rc = record_send(j);
        break;
    }
    if (rc) { /* nothing sent: the job is the caller's again, done is not called */
        board_list_free(j->list);
        j->list = NULL;
        free(s);
        j->state = NULL;
    }
    return rc;
}
