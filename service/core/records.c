/* records.c -- where records live, and their reads and writes on a Redis Cluster; see records.h. */
#include "records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "crc16.h"
#include "score_codec.h"
#include "util.h"

#define KEY_MAX 192

void records_key(const char *prefix, int clustered, const char *id, size_t len, char *out,
                 size_t cap)
{
    struct strb b;
    strb_init(&b, out, cap);
    strb_str(&b, prefix);
    if (clustered) {
        strb_str(&b, ":{items:");
        strb_i64(&b, crc16(id, len) % RECORDS_BUCKETS);
        strb_str(&b, "}");
    } else {
        strb_str(&b, ":items");
    }
}

/* The key prefix of a board script's call, from its KEYS[1] "<prefix>:{board}:...", into
 * out[0..KEY_MAX); NULL when that is no board key. */
static const char *call_prefix(const struct store_call *call, char out[KEY_MAX])
{
    const char *key = call->nkeys > 0 ? call->argv[0] : "";
    size_t len = call->nkeys > 0 ? call->lens[0] : 0;
    const char *open = memchr(key, '{', len);
    if (!open || open == key || open[-1] != ':' || (size_t)(open - key) >= KEY_MAX)
        return NULL;
    snprintf(out, KEY_MAX, "%.*s", (int)(open - key) - 1, key);
    return out;
}

/* ---------------------------------------------------------------- reads */

/* A reply being completed: where its records go, and the HMGETs out for them. */
struct fetch {
    struct store_reply *reply; /* the script's reply: the root everything is put into */
    struct store_reply *dest;  /* the array the records go into (reply itself for a member) */
    int outstanding;
    int failed; /* the first error */
    store_async_fn fn;
    void *arg;
};

/* One HMGET of a bucket: where each of its answers goes in dest. */
struct part {
    struct fetch *f;
    size_t n;
    size_t pos[];
};

static void fetch_end(struct fetch *f)
{
    if (f->failed) {
        store_reply_free(f->reply);
        f->fn(f->arg, f->failed, NULL);
    } else {
        struct store_reply *out[1] = {f->reply};
        f->fn(f->arg, 0, out);
        store_reply_free(out[0]); /* unless the callback took it */
    }
    free(f);
}

static void part_reply(void *arg, int rc, struct store_reply **replies)
{
    struct part *p = arg;
    struct fetch *f = p->f;
    if (rc) {
        if (!f->failed)
            f->failed = rc == -ECANCELED ? -EIO : rc;
    } else if (!f->failed &&
               (replies[0]->type != STORE_REPLY_ARRAY || replies[0]->elements != p->n)) {
        f->failed = -EIO; /* an error reply (the caller counts its own faults) */
    } else if (!f->failed) {
        struct store_reply *r = replies[0];
        replies[0] = NULL; /* taken: the reply holds it from here */
        if (store_reply_adopt(f->reply, r))
            f->failed = -ENOMEM;
        for (size_t k = 0; !f->failed && k < p->n; k++)
            store_reply_set(f->dest, p->pos[k], r->element[k]);
    }
    free(p);
    if (--f->outstanding == 0)
        fetch_end(f);
}

/* Where fetch puts the records it reads. */
enum fetch_into {
    INTO_NEW = 0, /* a new array of n in the reply's arena, put at reply->element[at] (a page) */
    INTO_AT,      /* reply->element[at] itself (a member's record) */
    INTO_REPLY,   /* reply->element[i] for id i (records_get: the reply is the records) */
};

/*
 * Complete `reply` with the records of ids[0..n) (strings kept alive by the reply or the
 * caller until this returns: the HMGETs copy them) from the buckets under `prefix`, `into` it
 * as said above; then fn(arg, 0, {reply}), or fn(arg, rc, NULL) with the reply freed.
 */
static void fetch(struct store_async *sa, unsigned flags, struct store_reply *reply,
                  const char *prefix, const struct store_reply *const *ids, size_t n, size_t at,
                  int into, int64_t deadline_ms, store_async_fn fn, void *arg)
{
    struct fetch *f = calloc(1, sizeof(*f));
    unsigned *bucket = calloc(n ? n : 1, sizeof(*bucket));
    char *done = calloc(n ? n : 1, 1);
    const char **argv = calloc(n + 2, sizeof(*argv));
    size_t *lens = calloc(n + 2, sizeof(*lens));
    struct part *p = NULL;
    int rc = f && bucket && done && argv && lens ? 0 : -ENOMEM;
    if (f)
        *f = (struct fetch){.reply = reply, .fn = fn, .arg = arg, .outstanding = 1};
    if (!rc && !prefix)
        rc = -EIO; /* KEYS[1] is no board key: not a call of the board scripts */
    if (!rc) {
        if (into != INTO_NEW) {
            f->dest = reply;
        } else if ((f->dest = store_reply_array_in(reply, n))) {
            store_reply_set(reply, at, f->dest);
        } else {
            rc = -ENOMEM;
        }
    }
    for (size_t i = 0; !rc && i < n; i++)
        bucket[i] = crc16(ids[i]->str, ids[i]->len) % RECORDS_BUCKETS;
    char key[KEY_MAX];
    /* one HMGET per bucket, every one in this iteration: one pipeline per node */
    for (size_t i = 0; !rc && i < n; i++) {
        if (done[i])
            continue;
        size_t k = 0;
        for (size_t m = i; m < n; m++)
            k += bucket[m] == bucket[i] && !done[m];
        if (!(p = malloc(sizeof(*p) + k * sizeof(p->pos[0])))) {
            rc = -ENOMEM;
            break;
        }
        p->f = f;
        p->n = 0;
        records_key(prefix, 1, ids[i]->str, ids[i]->len, key, sizeof(key));
        argv[0] = "HMGET";
        lens[0] = 5;
        argv[1] = key;
        lens[1] = strlen(key);
        for (size_t m = i; m < n; m++)
            if (bucket[m] == bucket[i] && !done[m]) {
                done[m] = 1;
                argv[2 + p->n] = ids[m]->str;
                lens[2 + p->n] = ids[m]->len;
                p->pos[p->n++] = into == INTO_AT ? at : m;
            }
        const char *const *av[] = {argv};
        const size_t *const lv[] = {lens};
        const int argc[] = {(int)p->n + 2};
        if ((rc = store_async_send_flags(sa, flags, 1, argc, av, lv, deadline_ms, part_reply, p)) <
            0) {
            free(p);
            break;
        }
        rc = 0;
        f->outstanding++;
    }
    free(bucket);
    free(done);
    free(argv);
    free(lens);
    if (!f) {
        store_reply_free(reply);
        fn(arg, -ENOMEM, NULL);
        return;
    }
    if (rc && !f->failed)
        f->failed = rc;
    if (--f->outstanding == 0) /* the start's own count: every part answered, or none sent */
        fetch_end(f);
}

/* Pass a reply on as it is: the caller's callback, then free it unless taken. */
static void pass(struct store_reply *reply, store_async_fn fn, void *arg)
{
    struct store_reply *out[1] = {reply};
    fn(arg, 0, out);
    store_reply_free(out[0]);
}

/* The bytes a set member holds before its id under the settings of a read script's reply
 * (score_codec_member_prefix: a `wide` board's tie position). */
static size_t settings_member_prefix(const struct store_reply *settings)
{
    struct board_settings s;
    board_settings_from_reply(settings, &s);
    return score_codec_member_prefix(&s.layout);
}

/* A reply {settings (one string: board_settings_reply), ...} of `elements` whose element `list_at` is a flat list of
 * `stride` values per entry, the entry's id first ({member, stored, ...}: 2; lookup.lua's found
 * {id, stored, rank0, rank, ...}: 4), and whose element `records_at` is the records (empty from
 * the script: KEYS[3] == KEYS[1]): the ids' records fetched into a new array there. With
 * list2_at (nonzero) a second list of found ids of stride 4 (page.lua's `with`), whose records
 * follow the first list's. */
static void then_list2(struct store_async *sa, struct store_reply *reply,
                       const struct store_call *call, size_t elements, size_t list_at,
                       size_t stride, size_t records_at, size_t list2_at, store_async_fn fn,
                       void *arg)
{
    if (reply->type != STORE_REPLY_ARRAY || reply->elements != elements ||
        !board_settings_reply(reply->element[0]) ||
        reply->element[list_at]->type != STORE_REPLY_ARRAY ||
        reply->element[records_at]->type != STORE_REPLY_ARRAY ||
        (list2_at && reply->element[list2_at]->type != STORE_REPLY_ARRAY)) {
        pass(reply, fn, arg); /* no board, a retry, a cached page, a lock held: as it is */
        return;
    }
    const struct store_reply *list = reply->element[list_at];
    size_t n1 = list->elements / stride;
    size_t n2 = list2_at ? reply->element[list2_at]->elements / 4 : 0;
    size_t n = n1 + n2;
    const struct store_reply **ids = calloc(n ? n : 1, sizeof(const struct store_reply *));
    /* a range's members are set members: on a `wide` board the id follows the tie position
     * (lookup.lua's found list holds the ids asked) */
    size_t plen = stride == 2 ? settings_member_prefix(reply->element[0]) : 0;
    struct store_reply *bare = plen ? calloc(n ? n : 1, sizeof(*bare)) : NULL;
    if (!ids || (plen && !bare)) {
        free(bare);
        free(ids);
        store_reply_free(reply);
        fn(arg, -ENOMEM, NULL);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct store_reply *e =
            i < n1 ? list->element[stride * i] : reply->element[list2_at]->element[4 * (i - n1)];
        if (e->type != STORE_REPLY_STRING)
            continue;
        if (bare && i < n1 && e->len >= plen) {
            bare[k] =
                (struct store_reply){.type = e->type, .str = e->str + plen, .len = e->len - plen};
            e = &bare[k];
        }
        ids[k++] = e;
    }
    if (k != n) { /* an id that is no string: not a reply of the board scripts */
        free(bare);
        free(ids);
        store_reply_free(reply);
        fn(arg, -EIO, NULL);
        return;
    }
    char prefix[KEY_MAX];
    fetch(sa, call->flags, reply, call_prefix(call, prefix), ids, n, records_at, INTO_NEW,
          call->deadline_ms, fn, arg);
    free(bare);
    free(ids);
}

static void then_list(struct store_async *sa, struct store_reply *reply,
                      const struct store_call *call, size_t elements, size_t list_at, size_t stride,
                      size_t records_at, store_async_fn fn, void *arg)
{
    then_list2(sa, reply, call, elements, list_at, stride, records_at, 0, fn, arg);
}

void records_then_page(struct store_async *sa, struct store_reply *reply,
                       const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, size, range, records, ranks}; with ids (page.lua's `with`) also
     * {..., found, missing}, the found ids' records after the range's */
    if (reply->type == STORE_REPLY_ARRAY && reply->elements == 8)
        then_list2(sa, reply, call, 8, 3, 2, 4, 6, fn, arg);
    else
        then_list(sa, reply, call, 6, 3, 2, 4, fn, arg);
}

void records_then_around(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, size, start0, range, records, ranks} */
    then_list(sa, reply, call, 7, 4, 2, 5, fn, arg);
}

void records_then_top(struct store_async *sa, struct store_reply *reply,
                      const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, size, range, records, ranks, count} */
    then_list(sa, reply, call, 7, 3, 2, 4, fn, arg);
}

void records_then_walk(struct store_async *sa, struct store_reply *reply,
                       const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, size, start0, range, records, ranks, first0, end0} */
    then_list(sa, reply, call, 9, 4, 2, 5, fn, arg);
}

void records_then_lookup(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, {id, stored, rank0, rank, ...} found, {id, ...} missing, records} */
    then_list(sa, reply, call, 5, 2, 4, 4, fn, arg);
}

void records_then_member(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg)
{
    /* {settings, total, stored, rank0, record, rank, updated_at}: a member that is there
     * (stored) has its record fetched; ARGV[5] is its id (ARGV[1..4] the read prelude's) */
    if (reply->type != STORE_REPLY_ARRAY || reply->elements < 6 ||
        !board_settings_reply(reply->element[0]) || reply->element[2]->type != STORE_REPLY_STRING ||
        call->nargs < 5) {
        pass(reply, fn, arg);
        return;
    }
    struct store_reply id = {.type = STORE_REPLY_STRING,
                             .str = call->argv[call->nkeys + 4],
                             .len = call->lens[call->nkeys + 4]};
    const struct store_reply *ids[1] = {&id};
    char prefix[KEY_MAX];
    fetch(sa, call->flags, reply, call_prefix(call, prefix), ids, 1, 4, INTO_AT, call->deadline_ms,
          fn, arg);
}

int records_get(struct store_async *sa, const char *prefix, const struct store_reply *const *ids,
                size_t n, int64_t deadline_ms, store_async_fn fn, void *arg)
{
    struct store_reply *all = store_reply_array_new(n);
    if (!all)
        return -ENOMEM;
    fetch(sa, STORE_READ_PRIMARY, all, prefix, ids, n, 0, INTO_REPLY, deadline_ms, fn, arg);
    return 0;
}

/* ---------------------------------------------------------------- writes */

/* A records_put under way. */
struct put {
    struct store *st;
    int outstanding;
    int failed;
    int unconfirmed; /* --write-replicas: a node's WAIT did not confirm its part */
    void (*done)(void *arg, int rc);
    void *arg;
};

/* One command of it: an HSET of a bucket, or the registry's SADD. */
struct put_part {
    struct put *p;
    struct store_async *sa;
    int registry;
};

static void put_reply(void *arg, int rc, struct store_reply **replies)
{
    struct put_part *pp = arg;
    struct put *p = pp->p;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR) {
        store_note_fault(p->st, pp->registry ? "registry" : "records", replies[0]->str);
        rc = store_reply_errno(replies[0]);
    }
    if (!rc && store_async_unreplicated(pp->sa, replies, 1))
        p->unconfirmed = 1; /* on its master, not confirmed on that master's replicas */
    if (rc && pp->registry && rc != -ECANCELED)
        store_note_fault(p->st, "registry",
                         "a board created by a write is not in the registry (GET /boards) until "
                         "a PUT or DELETE of it");
    else if (rc && !p->failed)
        p->failed = rc == -ECANCELED ? -EIO : rc;
    free(pp);
    if (--p->outstanding == 0) {
        p->done(p->arg, p->failed ? p->failed : p->unconfirmed ? -EREMOTEIO : 0);
        free(p);
    }
}

int records_put(struct store_async *sa, struct store *st, const char *prefix,
                const struct records_entry *e, size_t n, const char *registry, const char *board,
                int64_t deadline_ms, void (*done)(void *arg, int rc), void *arg)
{
    if (n == 0 && !registry)
        return 1;
    struct put *p = calloc(1, sizeof(*p));
    unsigned *bucket = calloc(n ? n : 1, sizeof(*bucket));
    char *sent = calloc(n ? n : 1, 1);
    const char **argv = calloc(2 * n + 2, sizeof(*argv));
    size_t *lens = calloc(2 * n + 2, sizeof(*lens));
    int rc = p && bucket && sent && argv && lens ? 0 : -ENOMEM;
    char key[KEY_MAX];
    if (p)
        *p = (struct put){.st = st, .done = done, .arg = arg, .outstanding = 1};
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            bucket[i] = crc16(e[i].id, e[i].id_len) % RECORDS_BUCKETS;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (sent[i])
            continue;
        size_t k = 2;
        argv[0] = "HSET";
        lens[0] = 4;
        for (size_t m = i; m < n; m++)
            if (bucket[m] == bucket[i] && !sent[m]) {
                sent[m] = 1;
                argv[k] = e[m].id;
                lens[k++] = e[m].id_len;
                argv[k] = e[m].json;
                lens[k++] = e[m].json_len;
            }
        records_key(prefix, 1, e[i].id, e[i].id_len, key, sizeof(key));
        argv[1] = key;
        lens[1] = strlen(key);
        struct put_part *pp = malloc(sizeof(*pp));
        const char *const *av[] = {argv};
        const size_t *const lv[] = {lens};
        const int argc[] = {(int)k};
        if (!pp) {
            rc = -ENOMEM;
            break;
        }
        *pp = (struct put_part){.p = p, .sa = sa};
        /* each bucket's master confirms its own part (--write-replicas): a WAIT on every node
         * written, in the same flush as its HSETs */
        if ((rc = store_async_send_replicated(sa, 1, argc, av, lv, deadline_ms, put_reply, pp)) <
            0) {
            free(pp);
            break;
        }
        rc = 0;
        p->outstanding++;
    }
    if (!rc && registry) {
        const char *sadd[] = {"SADD", registry, board};
        const char *const *av[] = {sadd};
        const int argc[] = {3};
        struct put_part *pp = malloc(sizeof(*pp));
        if (pp) {
            *pp = (struct put_part){.p = p, .sa = sa, .registry = 1};
            if (store_async_send_replicated(sa, 1, argc, av, NULL, deadline_ms, put_reply, pp) <
                0) {
                free(pp);
                store_note_fault(st, "registry",
                                 "a board created by a write is not in the registry (GET "
                                 "/boards) until a PUT or DELETE of it");
            } else {
                p->outstanding++;
            }
        }
    }
    free(bucket);
    free(sent);
    free(argv);
    free(lens);
    if (!p)
        return -ENOMEM;
    if (p->outstanding == 1) { /* nothing in flight: nothing was sent */
        free(p);
        return rc < 0 ? rc : 1;
    }
    if (rc && !p->failed)
        p->failed = rc;
    if (--p->outstanding == 0) {
        done(arg, p->failed ? p->failed : p->unconfirmed ? -EREMOTEIO : 0);
        free(p);
    }
    return 0;
}
