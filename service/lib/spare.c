/* spare.c -- blocks kept per thread for reuse; see spare.h. */
#include "spare.h"

#include <pthread.h>
#include <stdlib.h>

struct spare_stack {
    size_t size; /* 0: unused */
    int n;
    void *p[SPARE_KEEP];
};

struct spare_list {
    struct spare_stack s[SPARE_SIZES];
};

static __thread struct spare_list *mine; /* this thread's, once it gave a block back */
static pthread_key_t key;                /* frees a thread's list when the thread ends */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int key_made;

static void list_free(void *arg)
{
    struct spare_list *l = arg;
    for (int i = 0; i < SPARE_SIZES; i++)
        for (int k = 0; k < l->s[i].n; k++)
            free(l->s[i].p[k]);
    free(l);
}

static void make_key(void)
{
    key_made = pthread_key_create(&key, list_free) == 0;
}

/* This thread's list, made on first use; NULL when it cannot be (then blocks are plain malloc's
 * and free's). */
static struct spare_list *list_of_thread(void)
{
    if (mine)
        return mine;
    pthread_once(&once, make_key);
    struct spare_list *l = key_made ? calloc(1, sizeof(*l)) : NULL;
    if (l && pthread_setspecific(key, l) != 0) {
        free(l);
        l = NULL;
    }
    return mine = l;
}

void *spare_take(size_t size)
{
    struct spare_list *l = mine;
    for (int i = 0; l && i < SPARE_SIZES; i++)
        if (l->s[i].size == size && l->s[i].n > 0)
            return l->s[i].p[--l->s[i].n];
    return malloc(size);
}

void spare_give(void *p, size_t size)
{
    if (!p)
        return;
    struct spare_list *l = list_of_thread();
    struct spare_stack *s = NULL;
    for (int i = 0; l && i < SPARE_SIZES && !s; i++)
        if (l->s[i].size == size || l->s[i].size == 0)
            s = &l->s[i];
    if (!s || s->n == SPARE_KEEP) {
        free(p);
        return;
    }
    s->size = size;
    s->p[s->n++] = p;
}
