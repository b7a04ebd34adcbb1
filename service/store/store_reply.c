/* store_reply.c -- rankd's reply objects, built by hiredis's reader; see store_reply.h. */
#include "store_reply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spare.h"
#include "store_internal.h"

_Static_assert(STORE_REPLY_STRING == REDIS_REPLY_STRING && STORE_REPLY_ARRAY == REDIS_REPLY_ARRAY &&
                   STORE_REPLY_INTEGER == REDIS_REPLY_INTEGER &&
                   STORE_REPLY_NIL == REDIS_REPLY_NIL && STORE_REPLY_STATUS == REDIS_REPLY_STATUS &&
                   STORE_REPLY_ERROR == REDIS_REPLY_ERROR,
               "a reader task's type is used as the reply's type as it is");

/*
 * Memory. A top-level scalar is one malloc: the struct, then the string's bytes. A top-level
 * array is a struct root, whose allocation (ROOT_BYTES, within glibc's per-thread cache) ends in
 * the first block of its arena; every nested element (struct and bytes together), element array
 * and nested array is cut from the arena, and further blocks (BLOCK_MIN, doubling to BLOCK_MAX;
 * under glibc's 128 KiB mmap threshold) are chained to the root. A string bigger than BLOCK_MAX
 * gets a block of its own and leaves the current block current. Free: the chain, then the root.
 * A first block (BLOCK_MIN: a cached page's value fits one) is kept per thread for reuse
 * (spare.h): glibc serves 4 KiB outside its per-thread cache, consolidating its fast bins first
 * (about 11,000 instructions a block under a cached page's load, callgrind).
 */
#define ROOT_BYTES ((size_t)1024)
#define BLOCK_MIN (SPARE_BODY_BYTES - sizeof(struct block)) /* a block with its header: 4 KiB */
#define BLOCK_MAX ((size_t)64 * 1024)
#define ALIGN _Alignof(struct store_reply)
#define SLOT sizeof(void *) /* an element array's entry: a pointer */

struct block {
    struct block *next;
    size_t cap; /* bytes after the struct */
};

/* Another top-level reply a root owns (store_reply_adopt): freed with it. */
struct kept {
    struct kept *next;
    struct store_reply *r;
};

struct root {
    struct store_reply r; /* first: a root array's struct store_reply * is its struct root * */
    char *at;             /* the next free byte of the current block */
    size_t left;          /* bytes free from `at` */
    size_t next_cap;      /* bytes of the next block */
    struct block *blocks; /* the blocks after the inline one, newest first */
    struct kept *kept;    /* replies adopted (cut from the arena), freed before the blocks */
};

_Static_assert(sizeof(struct root) % ALIGN == 0 && sizeof(struct block) % ALIGN == 0,
               "the arena's blocks start aligned");

static size_t aligned(size_t n)
{
    return (n + ALIGN - 1) & ~(ALIGN - 1);
}

/* n bytes (aligned) from root's arena; NULL on ENOMEM. */
static void *arena_alloc(struct root *root, size_t n)
{
    n = aligned(n);
    if (n <= root->left) {
        void *p = root->at;
        root->at += n;
        root->left -= n;
        return p;
    }
    size_t cap = n > root->next_cap ? n : root->next_cap;
    struct block *b = cap == BLOCK_MIN ? spare_take(SPARE_BODY_BYTES) : malloc(sizeof(*b) + cap);
    if (!b)
        return NULL;
    b->cap = cap;
    b->next = root->blocks;
    root->blocks = b;
    char *p = (char *)(b + 1);
    if (n > BLOCK_MAX) /* a big string alone: the current block stays current */
        return p;
    root->at = p + n;
    root->left = cap - n;
    root->next_cap = cap * 2 > BLOCK_MAX ? BLOCK_MAX : cap * 2;
    return p;
}

/* A new root (a top-level array's struct and arena), with nothing in it yet; NULL on ENOMEM. */
static struct root *root_new(void)
{
    struct root *root = malloc(ROOT_BYTES);
    if (!root)
        return NULL;
    root->at = (char *)(root + 1);
    root->left = ROOT_BYTES - sizeof(*root);
    root->next_cap = BLOCK_MIN;
    root->blocks = NULL;
    root->kept = NULL;
    root->r = (struct store_reply){.type = STORE_REPLY_ARRAY};
    return root;
}

static struct root *root_of(const redisReadTask *task)
{
    while (task->parent)
        task = task->parent;
    return task->obj;
}

/* A new object of `type` with `extra` bytes after it: on its own for a top-level scalar, from
 * the root's arena for an element (then also linked into its parent). */
static struct store_reply *object_new(const redisReadTask *task, int type, size_t extra)
{
    struct store_reply *r;
    if (!task->parent) {
        r = malloc(sizeof(*r) + extra);
    } else {
        r = arena_alloc(root_of(task), sizeof(*r) + extra);
        if (r)
            ((struct store_reply *)task->parent->obj)->element[task->idx] = r;
    }
    if (r)
        *r = (struct store_reply){.type = type};
    return r;
}

static void *create_string(const redisReadTask *task, char *str, size_t len)
{
    struct store_reply *r = object_new(task, task->type, len + 1);
    if (!r)
        return NULL;
    char *bytes = (char *)(r + 1);
    memcpy(bytes, str, len);
    bytes[len] = '\0';
    r->str = bytes;
    r->len = len;
    return r;
}

static void *create_array(const redisReadTask *task, int elements)
{
    size_t n = elements > 0 ? (size_t)elements : 0;
    struct store_reply *r;
    if (!task->parent) {
        struct root *root = root_new();
        if (!root)
            return NULL;
        r = &root->r;
        if (n && !(r->element = arena_alloc(root, n * SLOT))) {
            free(root);
            return NULL;
        }
    } else {
        /* the struct and its element array in one piece */
        if (!(r = object_new(task, STORE_REPLY_ARRAY, aligned(n * SLOT))))
            return NULL;
        if (n)
            r->element = (struct store_reply **)(void *)(r + 1);
    }
    r->elements = n;
    return r;
}

static void *create_integer(const redisReadTask *task, long long value)
{
    struct store_reply *r = object_new(task, STORE_REPLY_INTEGER, 0);
    if (r)
        r->integer = value;
    return r;
}

static void *create_nil(const redisReadTask *task)
{
    return object_new(task, STORE_REPLY_NIL, 0);
}

static void free_object(void *obj)
{
    store_reply_free(obj);
}

static redisReplyObjectFunctions functions = {
    .createString = create_string,
    .createArray = create_array,
    .createInteger = create_integer,
    .createNil = create_nil,
    .freeObject = free_object,
};

redisReplyObjectFunctions *store_reply_functions(void)
{
    return &functions;
}

void store_reply_free(struct store_reply *r)
{
    if (!r)
        return;
    if (r->type == STORE_REPLY_ARRAY) { /* a top-level array: a root and its arena */
        struct root *root = (struct root *)r;
        for (struct kept *k = root->kept; k; k = k->next)
            store_reply_free(k->r);
        while (root->blocks) {
            struct block *b = root->blocks;
            root->blocks = b->next;
            if (b->cap == BLOCK_MIN)
                spare_give(b, SPARE_BODY_BYTES);
            else
                free(b);
        }
    }
    free(r);
}

/* ---------------------------------------------------------------- building */

/* A copy of r, cut from root's arena (an element), or top-level when root is NULL. */
static struct store_reply *copy_into(struct root *root, const struct store_reply *r)
{
    size_t extra = r->str ? r->len + 1 : 0;
    size_t slots = r->type == STORE_REPLY_ARRAY ? aligned(r->elements * SLOT) : 0;
    struct store_reply *c;
    if (root) {
        c = arena_alloc(root, sizeof(*c) + (slots ? slots : extra));
    } else if (r->type == STORE_REPLY_ARRAY) {
        struct root *nr = root_new();
        if (!nr)
            return NULL;
        c = &nr->r;
        c->elements = r->elements;
        if (r->elements && !(c->element = arena_alloc(nr, slots))) {
            free(nr);
            return NULL;
        }
        for (size_t i = 0; i < r->elements; i++) {
            if (!(c->element[i] = copy_into(nr, r->element[i]))) {
                store_reply_free(c);
                return NULL;
            }
        }
        return c;
    } else {
        c = malloc(sizeof(*c) + extra);
    }
    if (!c)
        return NULL;
    *c = (struct store_reply){.type = r->type, .integer = r->integer};
    if (r->str) {
        char *bytes = (char *)(c + 1);
        memcpy(bytes, r->str, r->len);
        bytes[r->len] = '\0';
        c->str = bytes;
        c->len = r->len;
    }
    if (r->type == STORE_REPLY_ARRAY) { /* nested: its element array follows the struct */
        c->element = (struct store_reply **)(void *)(c + 1);
        c->elements = r->elements;
        for (size_t i = 0; i < r->elements; i++)
            if (!(c->element[i] = copy_into(root, r->element[i])))
                return NULL; /* the arena goes with its root */
    }
    return c;
}

struct store_reply *store_reply_copy(const struct store_reply *r)
{
    return r ? copy_into(NULL, r) : NULL;
}

struct store_reply *store_reply_array_new(size_t n)
{
    struct root *root = root_new();
    if (!root)
        return NULL;
    struct store_reply *r = &root->r, *nil = NULL;
    r->elements = n;
    if ((n && !(r->element = arena_alloc(root, n * SLOT))) ||
        !(nil = arena_alloc(root, sizeof(*nil)))) {
        store_reply_free(r);
        return NULL;
    }
    *nil = (struct store_reply){.type = STORE_REPLY_NIL};
    for (size_t i = 0; i < n; i++)
        r->element[i] = nil;
    return r;
}

struct store_reply *store_reply_array_in(struct store_reply *root, size_t n)
{
    struct root *rt = (struct root *)root;
    struct store_reply *a = arena_alloc(rt, sizeof(*a) + aligned(n * SLOT));
    struct store_reply *nil = arena_alloc(rt, sizeof(*nil));
    if (!a || !nil)
        return NULL;
    *nil = (struct store_reply){.type = STORE_REPLY_NIL};
    *a = (struct store_reply){.type = STORE_REPLY_ARRAY, .elements = n};
    a->element = (struct store_reply **)(void *)(a + 1);
    for (size_t i = 0; i < n; i++)
        a->element[i] = nil;
    return a;
}

int store_reply_adopt(struct store_reply *root, struct store_reply *other)
{
    if (!other)
        return 0;
    struct root *rt = (struct root *)root;
    struct kept *k = arena_alloc(rt, sizeof(*k));
    if (!k) {
        store_reply_free(other);
        return -ENOMEM;
    }
    k->r = other;
    k->next = rt->kept;
    rt->kept = k;
    return 0;
}

void store_reply_set(struct store_reply *array, size_t i, struct store_reply *elem)
{
    if (array->type == STORE_REPLY_ARRAY && i < array->elements && elem)
        array->element[i] = elem;
}

int store_reply_script_failed(const struct store_reply *r)
{
    /* Redis 7 ends a script's runtime error (a redis.call that failed, a Lua error) with
     * "script: <sha>, on @user_script:<line>."; refusals before it ran (NOSCRIPT, BUSY, LOADING,
     * a cluster redirection) do not. OOM and READONLY carry it too but come before a write. */
    return r && r->type == STORE_REPLY_ERROR && strstr(r->str, "@user_script:") != NULL;
}

int store_reply_errno(const struct store_reply *r)
{
    if (!r || r->type != STORE_REPLY_ERROR)
        return 0;
    if (strncmp(r->str, "OOM", 3) == 0)
        return -EDQUOT; /* maxmemory reached: writes refused until memory is freed */
    if (strncmp(r->str, "READONLY", 8) == 0)
        return -EROFS; /* a replica now: the primary changed (a failover) */
    return -EIO;
}
