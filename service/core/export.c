/* export.c -- point-in-time snapshots of a board's set; see export.h. */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "records.h"
#include "score_codec.h"
#include "store.h"
#include "store_async.h"
#include "store_reply.h"
#include "util.h"

/* lua/export.lua (the Makefile's build/gen/lua/export.lua.h), registered once. */
static const char *const export_body =
#include "lua/export.lua.h"
    ;
static const struct store_script *script_copy;
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void scripts_init(void)
{
    script_copy = store_script_register(export_body);
}

void export_scripts_register(void)
{
    pthread_once(&scripts_once, scripts_init);
}

enum { K_SET = 0, K_META, K_ROWS, K_MOVES, K_ITEMS, K_UPD };

/* A token no other export of any process uses at once: the clock, a counter and the pid, in hex
 * (export.lua lists it in a field of words). */
static void new_token(char out[24])
{
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = ((uint64_t)ts.tv_sec * 1000000000U + (uint64_t)ts.tv_nsec) ^
                 (atomic_fetch_add(&counter, 1) << 40) ^ ((uint64_t)getpid() << 20);
    snprintf(out, 24, "%016" PRIx64, v);
}

static int64_t deadline(const struct export_job *j)
{
    return j->call_timeout_ms > 0 ? util_now_ms() + j->call_timeout_ms : 0;
}

/* export.lua with step `step` from the edge (j->edge, j->off); fn gets the reply. */
static int copy_send(struct export_job *j, const char *step, store_async_fn fn)
{
    char off[24], chunk[16], lease[16], ttl[16];
    snprintf(off, sizeof(off), "%" PRId64, j->off);
    snprintf(chunk, sizeof(chunk), "%d", EXPORT_COPY_CHUNK);
    snprintf(lease, sizeof(lease), "%d", EXPORT_LEASE_MS);
    snprintf(ttl, sizeof(ttl), "%d", EXPORT_TTL_MS);
    const char *argv[] = {j->keys[K_SET],
                          j->keys[K_META],
                          j->keys[K_ROWS],
                          j->keys[K_MOVES],
                          step,
                          j->token,
                          j->gen,
                          j->edge,
                          off,
                          chunk,
                          lease,
                          ttl,
                          j->size0};
    int rc = store_async_script(j->conn, script_copy, 4, 9, argv, NULL, deadline(j), fn, j);
    return rc < 0 ? rc : 0;
}

/* A reply {word, ...}: its first word, or NULL (an error reply: *rc says which). */
static const char *reply_word(const struct store_reply *r, int *rc)
{
    if (r->type == STORE_REPLY_ERROR) {
        *rc = store_reply_errno(r) ? store_reply_errno(r) : -EIO;
        return NULL;
    }
    if (r->type != STORE_REPLY_ARRAY || r->elements < 1 || !r->element[0]->str) {
        *rc = -EIO;
        return NULL;
    }
    return r->element[0]->str;
}

static void copy_reply(void *arg, int rc, struct store_reply **replies)
{
    struct export_job *j = arg;
    const char *w = rc ? NULL : reply_word(replies[0], &rc);
    const struct store_reply *r = rc ? NULL : replies[0];
    if (w && strcmp(w, "more") == 0 && r->elements == 3 && r->element[1]->str &&
        r->element[1]->len < sizeof(j->edge) && r->element[2]->type == STORE_REPLY_INTEGER) {
        memcpy(j->edge, r->element[1]->str, r->element[1]->len + 1);
        j->off = r->element[2]->integer;
        rc = copy_send(j, "copy", copy_reply);
        if (rc == 0)
            return;
    } else if (w && strcmp(w, "done") == 0 && r->elements == 2) {
        j->total = r->element[1]->integer;
    } else if (w) {
        rc = strcmp(w, "interrupted") == 0 ? -ESTALE : -EIO;
    }
    j->done(j, rc);
}

static void start_reply(void *arg, int rc, struct store_reply **replies)
{
    struct export_job *j = arg;
    const char *w = rc ? NULL : reply_word(replies[0], &rc);
    const struct store_reply *r = rc ? NULL : replies[0];
    if (w && strcmp(w, "ok") == 0 && r->elements == 3 && r->element[1]->str &&
        r->element[2]->type == STORE_REPLY_INTEGER) {
        util_copy(j->gen, sizeof(j->gen), r->element[1]->str);
        snprintf(j->size0, sizeof(j->size0), "%lld", r->element[2]->integer);
        j->edge[0] = '\0';
        j->off = 0;
        rc = copy_send(j, "copy", copy_reply);
        if (rc == 0)
            return;
    } else if (w) {
        rc = strcmp(w, "gone") == 0 ? -ENOENT : -EIO;
    }
    j->done(j, rc);
}

/* "<prefix>:{<board>}:export:<token>:<what>" */
static void export_key(const struct export_job *j, const char *what, char *out)
{
    struct strb b;
    board_key_make(&b, out, EXPORT_KEY_MAX, j->m->prefix, j->board, BOARD_KEY_EXPORT);
    strb_str(&b, j->token);
    strb_str(&b, ":");
    strb_str(&b, what);
}

int export_snapshot(struct board_model *m, struct export_job *j)
{
    if (!j->conn)
        return -ECONNREFUSED;
    export_scripts_register();
    j->m = m;
    j->total = 0;
    new_token(j->token);
    struct strb b;
    util_copy(j->keys[K_SET], EXPORT_KEY_MAX, j->where.z);
    board_key_make(&b, j->keys[K_META], EXPORT_KEY_MAX, m->prefix, j->board, BOARD_KEY_META);
    export_key(j, "rows", j->keys[K_ROWS]);
    export_key(j, "moves", j->keys[K_MOVES]);
    snprintf(j->keys[K_ITEMS], EXPORT_KEY_MAX, "%s:items", m->prefix);
    util_copy(j->keys[K_UPD], EXPORT_KEY_MAX, j->where.upd);
    j->gen[0] = '\0';
    j->size0[0] = '\0';
    j->edge[0] = '\0';
    j->off = 0;
    return copy_send(j, "start", start_reply);
}

static void count_reply(void *arg, int rc, struct store_reply **replies)
{
    struct export_job *j = arg;
    if (!rc && replies[0]->type == STORE_REPLY_INTEGER)
        j->total = replies[0]->integer;
    else if (!rc)
        rc = replies[0]->type == STORE_REPLY_ERROR && store_reply_errno(replies[0])
                 ? store_reply_errno(replies[0])
                 : -EIO;
    j->done(j, rc);
}

int export_count(struct board_model *m, struct export_job *j)
{
    if (!j->conn)
        return -ECONNREFUSED;
    j->m = m;
    j->total = 0;
    j->token[0] = '\0'; /* no snapshot: export_release has nothing to remove */
    const char *argv[] = {"ZCARD", j->where.z};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    int rc = store_async_send(j->conn, 1, argc, av, NULL, deadline(j), count_reply, j);
    return rc < 0 ? rc : 0;
}

/* A read in flight: the caller's callback and the job; the rows' reply while their records are
 * read. */
struct read_call {
    struct export_job *j;
    int64_t from;
    export_rows_fn fn;
    void *arg;
    struct store_reply *rows; /* ZRANGE's reply, taken */
    int timed;                /* the records' HMGET has the times' after it */
};

/* A row's updated_at from the times HMGET's reply (NULL: not read), -1 where there is none. */
static int64_t row_time(const struct store_reply *times, size_t i)
{
    const struct store_reply *t = times ? times->element[i] : NULL;
    if (!t || t->type != STORE_REPLY_STRING)
        return -1;
    char *end;
    long long v = strtoll(t->str, &end, 10);
    return end != t->str && *end == '\0' && v >= 0 ? (int64_t)v : -1;
}

static void read_end(struct read_call *c, int rc, const struct store_reply *records,
                     const struct store_reply *times)
{
    const struct store_reply *r = c->rows;
    size_t n = !rc && r ? r->elements / 2 : 0;
    if (times && (times->type != STORE_REPLY_ARRAY || times->elements != n))
        times = NULL; /* not read: the rows go without their times rather than not at all */
    if (n && (!records || records->type != STORE_REPLY_ARRAY || records->elements != n)) {
        rc = -EIO;
        n = 0;
    }
    struct board_item *items = n ? calloc(n, sizeof(*items)) : NULL;
    if (n && !items) {
        rc = -ENOMEM;
        n = 0;
    }
    for (size_t i = 0; records && i < n; i++) {
        const struct store_reply *id = r->element[2 * i], *st = r->element[2 * i + 1];
        double score = 0;
        if (!id->str || !st->str ||
            score_codec_decode(&c->j->layout, strtod(st->str, NULL), &score) < 0) {
            rc = -EIO;
            break;
        }
        const struct store_reply *rec = records->element[i];
        int64_t tie;
        size_t plen = score_codec_member_split(&c->j->layout, id->str, id->len, &tie);
        items[i] = (struct board_item){.id = id->str + plen,
                                       .id_len = id->len - plen,
                                       .tie = tie,
                                       .score = score,
                                       .rank = c->from + (int64_t)i + 1,
                                       .record = rec->str,
                                       .record_len = rec->str ? rec->len : 0,
                                       .updated_at = row_time(times, i),
                                       .nsub = c->j->layout.nsub};
        score_codec_member_subscores(&c->j->layout, id->str, id->len, items[i].sub);
    }
    c->fn(c->arg, rc, rc ? NULL : items, rc ? 0 : n);
    free(items);
    store_reply_free(c->rows);
    free(c);
}

static void records_reply(void *arg, int rc, struct store_reply **replies)
{
    struct read_call *c = arg;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR)
        rc = -EIO;
    read_end(c, rc, rc ? NULL : replies[0], rc || !c->timed ? NULL : replies[1]);
}

/* The rows came: their records next (HMGET), or the end. */
static void rows_reply(void *arg, int rc, struct store_reply **replies)
{
    struct read_call *c = arg;
    const struct store_reply *r = rc ? NULL : replies[0];
    if (r && (r->type != STORE_REPLY_ARRAY || r->elements % 2 != 0))
        rc = -EIO;
    if (rc) {
        read_end(c, rc, NULL, NULL);
        return;
    }
    c->rows = replies[0];
    replies[0] = NULL; /* taken */
    size_t n = c->rows ? c->rows->elements / 2 : 0;
    if (n == 0) {
        read_end(c, 0, NULL, NULL);
        return;
    }
    /* the ids: a `wide` board's set members after their tie position (score_codec.h) */
    struct store_reply *bare = calloc(n, sizeof(*bare));
    if (!bare) {
        read_end(c, -ENOMEM, NULL, NULL);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct store_reply *e = c->rows->element[2 * i];
        int64_t tie;
        size_t plen = e->str ? score_codec_member_split(&c->j->layout, e->str, e->len, &tie) : 0;
        bare[i] = (struct store_reply){
            .type = e->type, .str = e->str ? e->str + plen : "", .len = e->str ? e->len - plen : 0};
    }
    if (store_cluster_mode(c->j->m->store)) { /* the records' buckets (records.h) */
        const struct store_reply **ids = calloc(n, sizeof(const struct store_reply *));
        for (size_t i = 0; ids && i < n; i++)
            ids[i] = &bare[i];
        rc =
            ids ? records_get(c->j->conn, c->j->m->prefix, ids, n, deadline(c->j), records_reply, c)
                : -ENOMEM;
        free(ids);
        free(bare);
        if (rc)
            read_end(c, rc, NULL, NULL);
        return;
    }
    /* HMGET of the records, and on a board that tracks them of the times: one round trip */
    const char **argv = calloc(2 * (n + 2), sizeof(*argv));
    size_t *lens = calloc(2 * (n + 2), sizeof(*lens));
    if (argv && lens) {
        c->timed = c->j->track_updated_at;
        for (int k = 0; k <= c->timed; k++) {
            const char **a = argv + (size_t)k * (n + 2);
            size_t *l = lens + (size_t)k * (n + 2);
            a[0] = "HMGET";
            l[0] = 5;
            a[1] = c->j->keys[k ? K_UPD : K_ITEMS];
            l[1] = strlen(a[1]);
            for (size_t i = 0; i < n; i++) {
                a[2 + i] = bare[i].str;
                l[2 + i] = bare[i].len;
            }
        }
        const char *const *av[] = {argv, argv + n + 2};
        const size_t *const lv[] = {lens, lens + n + 2};
        const int argc[] = {(int)n + 2, (int)n + 2};
        rc = store_async_send(c->j->conn, 1 + c->timed, argc, av, lv, deadline(c->j), records_reply,
                              c);
        rc = rc < 0 ? rc : 0;
    } else {
        rc = -ENOMEM;
    }
    free(argv);
    free(lens);
    free(bare);
    if (rc)
        read_end(c, rc, NULL, NULL);
}

int export_read(struct export_job *j, int64_t from, int count, export_rows_fn fn, void *arg)
{
    struct read_call *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    *c = (struct read_call){.j = j, .from = from, .fn = fn, .arg = arg};
    char f[24], to[24], ttl[16];
    snprintf(f, sizeof(f), "%" PRId64, from);
    snprintf(to, sizeof(to), "%" PRId64, from + count - 1);
    snprintf(ttl, sizeof(ttl), "%d", EXPORT_TTL_MS);
    /* plain commands, not a script: a script's ZRANGE WITHSCORES pays for every score's text in
     * Lua (1000 rows took over 2 ms on a busy machine, plain 0.6) */
    const char *zr[] = {"ZRANGE", j->keys[K_ROWS], f, to, "WITHSCORES"};
    const char *px[] = {"PEXPIRE", j->keys[K_ROWS], ttl};
    const char *const *av[] = {zr, px};
    const int argc[] = {5, 3};
    int rc = store_async_send(j->conn, 2, argc, av, NULL, deadline(j), rows_reply, c);
    if (rc < 0) {
        free(c);
        return rc;
    }
    return 0;
}

static void release_reply(void *arg, int rc, struct store_reply **replies)
{
    (void)arg;
    (void)rc;
    (void)replies; /* best effort: the keys' TTL is the safety net */
}

void export_release(struct export_job *j)
{
    if (!j->token[0] || !j->conn)
        return;
    const char *argv[] = {"UNLINK", j->keys[K_ROWS], j->keys[K_MOVES]};
    const char *const *av[] = {argv};
    const int argc[] = {3};
    store_async_send(j->conn, 1, argc, av, NULL, 0, release_reply, NULL);
}
