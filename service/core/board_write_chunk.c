/*
 * board_write_chunk.c -- write.lua's short layout for an upload's chunk of `set` entries: the
 * stored values numbered here, key by key, as write.lua would number them if every member is new
 * to the board and each key's group is as the upload's last chunk left it (write.lua checks
 * both, and handles the chunk in the general layout when either is wrong). board_int.h has the
 * contract.
 */
#include "board_int.h"

/* v in decimal into out (24 bytes) */
static void i64_into(char out[24], int64_t v)
{
    struct strb b;
    strb_init(&b, out, 24);
    strb_i64(&b, v);
}

static void put_text(struct write_args *w, size_t *k, const char *s)
{
    board_write_arg(w, k, s, strlen(s));
}

#define SHORT_SLOTS 2048 /* open addressing for up to BOARD_BATCH_MAX keys or ids */
_Static_assert(SHORT_SLOTS >= 2 * BOARD_BATCH_MAX, "short layout tables");

static size_t slot_of_key(int64_t key)
{
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 53) & (SHORT_SLOTS - 1);
}

static size_t slot_of_id(const char *id, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)id[i]) * UINT64_C(1099511628211);
    return (size_t)(h >> 40) & (SHORT_SLOTS - 1);
}

/* A chunk's keys: gkey[0..g) in first-arrival order, gat[] the tie each key's first entry takes,
 * gcont[] 1 for a key the last chunk left (c of them: gat[] is what it left), gnext[] the tie
 * the key's next arrival takes after the chunk; per entry its tie in tie[]. */
struct write_chunk {
    size_t g, c;
    int64_t gkey[BOARD_BATCH_MAX], gat[BOARD_BATCH_MAX], gnext[BOARD_BATCH_MAX];
    int gcont[BOARD_BATCH_MAX];
    int64_t tie[BOARD_BATCH_MAX];
};

/* 1 when entries[at..at+n) may go in the short layout (board_int.h), numbered into p; else 0. */
static int plan_make(const struct board_write_job *j, size_t at, size_t n, int64_t cap,
                     struct write_chunk *p)
{
    const struct board_write_target *t = &j->targets[0];
    const struct score_layout *l = &t->assumed.layout;
    if (!j->ties || j->ties->off || !j->upload || j->ntargets != 1 || at != 0 || n == 0 ||
        n > BOARD_BATCH_MAX || (j->digest && j->idem_key) ||
        (j->flags & (BOARD_WRITE_RANKS | BOARD_WRITE_ATOMIC | BOARD_WRITE_PREV)) ||
        !(j->flags & BOARD_WRITE_BRIEF) || l->wide || l->nsub ||
        (l->tiebreak != SCORE_TIEBREAK_FIRST && l->tiebreak != SCORE_TIEBREAK_LAST))
        return 0;
    int64_t kmax = score_codec_scaled_max(l);
    int last = l->tiebreak == SCORE_TIEBREAK_LAST;
    int keys[SHORT_SLOTS] = {0}, ids[SHORT_SLOTS] = {0}, memo[SHORT_SLOTS] = {0};
    const struct board_write_ties *m = j->ties;
    for (size_t k = 0; k < m->n && k < BOARD_WRITE_TIES_MAX; k++) {
        size_t s = slot_of_key(m->key[k]);
        while (memo[s])
            s = (s + 1) & (SHORT_SLOTS - 1);
        memo[s] = (int)k + 1;
    }
    p->g = p->c = 0;
    for (size_t i = 0; i < n; i++) {
        const struct board_entry *e = &t->entries[at + i];
        if (e->op != BOARD_OP_SET || e->nsub || e->key > kmax || e->key < -kmax)
            return 0;
        size_t s = slot_of_id(e->id, e->id_len);
        for (; ids[s]; s = (s + 1) & (SHORT_SLOTS - 1)) {
            const struct board_entry *o = &t->entries[at + (size_t)ids[s] - 1];
            if (o->id_len == e->id_len && memcmp(o->id, e->id, e->id_len) == 0)
                return 0; /* an id named twice: its second entry reads its first */
        }
        ids[s] = (int)i + 1;
        for (s = slot_of_key(e->key); keys[s]; s = (s + 1) & (SHORT_SLOTS - 1))
            if (p->gkey[keys[s] - 1] == e->key)
                break;
        if (!keys[s]) { /* a key new to the chunk: empty, or as the last chunk left it */
            size_t g = p->g++;
            keys[s] = (int)g + 1;
            p->gkey[g] = e->key;
            p->gcont[g] = 0;
            p->gat[g] = last ? cap - 1 : 0;
            for (size_t q = slot_of_key(e->key); memo[q]; q = (q + 1) & (SHORT_SLOTS - 1))
                if (m->key[memo[q] - 1] == e->key) {
                    p->gat[g] = m->next[memo[q] - 1];
                    p->gcont[g] = 1;
                    p->c++;
                    break;
                }
            p->gnext[g] = p->gat[g];
        }
        size_t g = (size_t)keys[s] - 1;
        if (p->gnext[g] < 0 || p->gnext[g] >= cap)
            return 0; /* a full group: the general layout compacts it */
        p->tie[i] = p->gnext[g];
        p->gnext[g] += last ? -1 : 1;
    }
    return 1;
}

struct write_chunk *board_write_chunk_plan(const struct board_write_job *j, size_t at, size_t n,
                                           int64_t cap)
{
    if (!j->ties || j->ties->off)
        return NULL;
    struct write_chunk *p = malloc(sizeof(*p));
    if (p && !plan_make(j, at, n, cap, p)) {
        free(p);
        p = NULL;
    }
    return p;
}

size_t board_write_chunk_count(const struct write_chunk *p, size_t n)
{
    return 2 + 3 * n + p->g + 2 * p->c;
}

int board_write_chunk_args(struct write_args *w, struct board_write_job *j, size_t n, size_t *k,
                           const struct write_chunk *p)
{
    const struct board_write_target *t = &j->targets[0];
    int64_t base = INT64_C(1) << score_codec_tie_bits(&t->assumed.layout);
    w->sv = malloc((n + p->g + 2 * p->c + 2) * sizeof(*w->sv));
    if (!w->sv)
        return -ENOMEM;
    size_t v = 0;
    i64_into(w->sv[v], (int64_t)p->g);
    put_text(w, k, w->sv[v++]);
    i64_into(w->sv[v], (int64_t)p->c);
    put_text(w, k, w->sv[v++]);
    for (size_t i = 0; i < n; i++) {
        const struct board_entry *e = &t->entries[i];
        i64_into(w->sv[v], e->key * base + p->tie[i]);
        put_text(w, k, w->sv[v++]);
        board_write_arg(w, k, e->id, e->id_len);
    }
    for (size_t i = 0; i < n; i++) {
        const struct board_entry *e = &t->entries[i];
        board_write_arg(w, k, e->record ? e->record : "", e->record ? e->record_len : 0);
    }
    for (size_t g = 0; g < p->g; g++) {
        i64_into(w->sv[v], p->gkey[g]);
        put_text(w, k, w->sv[v++]);
    }
    for (size_t g = 0; g < p->g; g++) {
        if (!p->gcont[g])
            continue;
        i64_into(w->sv[v], (int64_t)g + 1);
        put_text(w, k, w->sv[v++]);
        i64_into(w->sv[v], p->gat[g]);
        put_text(w, k, w->sv[v++]);
    }
    /* what the next chunk may assume: these keys as this one leaves them, once applied */
    struct board_write_ties *m = j->ties;
    m->n = p->g;
    for (size_t g = 0; g < p->g; g++) {
        m->key[g] = p->gkey[g];
        m->next[g] = p->gnext[g];
    }
    return 0;
}
