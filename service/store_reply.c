/* store_reply.c -- rankd's reply objects, built by hiredis's reader; see store_reply.h. */
#include "store_reply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
 */
#define ROOT_BYTES ((size_t)1024)
#define BLOCK_MIN ((size_t)4096)
#define BLOCK_MAX ((size_t)64 * 1024)
#define ALIGN _Alignof(struct store_reply)
#define SLOT sizeof(void *) /* an element array's entry: a pointer */

struct block {
    struct block *next;
};

struct root {
    struct store_reply r; /* first: a root array's struct store_reply * is its struct root * */
    char *at;             /* the next free byte of the current block */
    size_t left;          /* bytes free from `at` */
    size_t next_cap;      /* bytes of the next block */
    struct block *blocks; /* the blocks after the inline one, newest first */
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
    struct block *b = malloc(sizeof(*b) + cap);
    if (!b)
        return NULL;
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
        struct root *root = malloc(ROOT_BYTES);
        if (!root)
            return NULL;
        root->at = (char *)(root + 1);
        root->left = ROOT_BYTES - sizeof(*root);
        root->next_cap = BLOCK_MIN;
        root->blocks = NULL;
        r = &root->r;
        *r = (struct store_reply){.type = STORE_REPLY_ARRAY};
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
        while (root->blocks) {
            struct block *b = root->blocks;
            root->blocks = b->next;
            free(b);
        }
    }
    free(r);
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
