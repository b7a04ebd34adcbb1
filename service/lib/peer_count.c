/* peer_count.c -- open connections per client address (peer_count.h): a hash of addresses under
 * one mutex; taken and given once per connection, so the lock is not on any request's path. */
#include "peer_count.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 256

struct entry {
    unsigned char addr[16];
    size_t len;
    int count;
    struct entry *next;
};

struct peer_count {
    int max;
    pthread_mutex_t lock;
    struct entry *buckets[BUCKETS];
};

/* The address bytes of an IPv4 or IPv6 peer; 0 for other families (not counted). */
static size_t addr_bytes(const struct sockaddr *sa, unsigned char out[16])
{
    if (sa && sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

/* djb2 over the address bytes. */
static size_t addr_hash(const unsigned char *a, size_t n)
{
    size_t h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + a[i];
    return h % BUCKETS;
}

/* The link that points at a's entry in its bucket (*link NULL when it has none); under lock. */
static struct entry **find(struct peer_count *t, const unsigned char *a, size_t n)
{
    struct entry **pp = &t->buckets[addr_hash(a, n)];
    while (*pp && !((*pp)->len == n && memcmp((*pp)->addr, a, n) == 0))
        pp = &(*pp)->next;
    return pp;
}

struct peer_count *peer_count_new(int max)
{
    struct peer_count *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->max = max;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

int peer_count_take(struct peer_count *t, const struct sockaddr *sa)
{
    unsigned char a[16];
    size_t n = addr_bytes(sa, a);
    if (!t->max || !n)
        return 0;
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    struct entry **pp = find(t, a, n);
    struct entry *e = *pp;
    if (!e && (e = calloc(1, sizeof(*e))) != NULL) {
        memcpy(e->addr, a, n);
        e->len = n;
        *pp = e;
    }
    if (!e || e->count >= t->max)
        rc = -1;
    else
        e->count++;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

void peer_count_give(struct peer_count *t, const struct sockaddr *sa)
{
    unsigned char a[16];
    size_t n = addr_bytes(sa, a);
    if (!t->max || !n)
        return;
    pthread_mutex_lock(&t->lock);
    struct entry **pp = find(t, a, n);
    struct entry *e = *pp;
    if (e && --e->count <= 0) {
        *pp = e->next;
        free(e);
    }
    pthread_mutex_unlock(&t->lock);
}

int peer_count_open(struct peer_count *t, const struct sockaddr *sa)
{
    unsigned char a[16];
    size_t n = addr_bytes(sa, a);
    if (!t->max || !n)
        return 0;
    pthread_mutex_lock(&t->lock);
    const struct entry *e = *find(t, a, n);
    int count = e ? e->count : 0;
    pthread_mutex_unlock(&t->lock);
    return count;
}

void peer_count_free(struct peer_count *t)
{
    if (!t)
        return;
    for (int b = 0; b < BUCKETS; b++)
        while (t->buckets[b]) {
            struct entry *e = t->buckets[b];
            t->buckets[b] = e->next;
            free(e);
        }
    pthread_mutex_destroy(&t->lock);
    free(t);
}
