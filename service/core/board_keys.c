/*
 * board_keys.c -- a board's keys (the key schema of board.h and schema/redis-keys.md), generations
 * (board names are judged in lib/names.c).
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- keys and settings */

/* A new board generation: wall-clock microseconds and a random 0..999, unique in practice
 * across processes and across a Redis that lost its data (unlike a counter restarting at 0). */
void board_new_generation(char out[32])
{
    static _Atomic uint64_t salt;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t us = (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
    uint64_t r = atomic_fetch_add(&salt, 1) * 7919U + (uint64_t)getpid();
    struct strb sb; /* no snprintf: every write makes one */
    strb_init(&sb, out, 32);
    strb_i64(&sb, (int64_t)(us * 1000U + r % 1000U));
}

/* 1 when the model's store is a Redis Cluster: records and registry outside the board scripts. */
int board_clustered(const struct board_model *m)
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
    [BOARD_KEY_IDS] = {":ids", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_UPD] = {":upd", BOARD_GONE_UNLINKED, 0},
    [BOARD_KEY_SWEEP] = {":sweep", BOARD_GONE_TTL, 1},
    [BOARD_KEY_IDEM] = {":idem:", BOARD_GONE_LIFE, 1},
    [BOARD_KEY_EXPORT] = {":export:", BOARD_GONE_TOKEN, 1},
    [BOARD_KEY_PAGE] = {":page:", BOARD_GONE_GEN, 1},
    [BOARD_KEY_UPLOAD] = {":upload:", BOARD_GONE_TOKEN, 1},
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
        /* ":idem:" and the like go on with a name; ":z", ":dense", ":ids" end or go on with ":" */
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
        for (int k = BOARD_KEY_SET; k <= BOARD_KEY_UPD; k++) {
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

void board_make_keys(const struct board_model *m, const char *board, struct board_keys *k)
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
    k->script_items = board_clustered(m) ? k->meta : k->items;
    k->script_registry = board_clustered(m) ? k->meta : k->registry;
}
