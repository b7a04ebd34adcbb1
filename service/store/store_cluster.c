/* store_cluster.c -- the slot map and the redirects of Redis Cluster; see store_cluster.h. */
#include "store_cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void store_cluster_map_free(struct store_cluster_map *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->replicas);
    free(m->sets);
    free(m);
}

int store_cluster_map_find(const struct store_cluster_map *m, const char *host, int port)
{
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].port == port && strcmp(m->nodes[i].host, host) == 0)
            return (int)i;
    return -1;
}

/* Room for one more node in *nodes of *n (cap: what is allocated); 0 or -ENOMEM / -EPROTO. */
static int room_in(struct store_cluster_node **nodes, size_t n, size_t *cap)
{
    if (n == STORE_CLUSTER_NODES_MAX)
        return -EPROTO;
    if (n < *cap)
        return 0;
    size_t grown = *cap ? *cap * 2 : 8;
    struct store_cluster_node *more = realloc(*nodes, grown * sizeof(*more));
    if (!more)
        return -ENOMEM;
    *nodes = more;
    *cap = grown;
    return 0;
}

/* Room for one more master in m->nodes. */
static int node_room(struct store_cluster_map *m, size_t *cap)
{
    return room_in(&m->nodes, m->nnodes, cap);
}

const struct store_cluster_set *store_cluster_map_replicas(const struct store_cluster_map *m,
                                                           int slot)
{
    if (slot < 0 || slot >= CRC16_SLOTS || m->set_of[slot] == STORE_CLUSTER_NONE)
        return NULL;
    return &m->sets[m->set_of[slot]];
}

/* A copy of n nodes (NULL for none); 0 or -ENOMEM. */
static int nodes_copy(struct store_cluster_node **out, const struct store_cluster_node *in,
                      size_t n, size_t size)
{
    *out = NULL;
    if (!n)
        return 0;
    if (!(*out = malloc(n * size)))
        return -ENOMEM;
    memcpy(*out, in, n * size);
    return 0;
}

struct store_cluster_map *store_cluster_map_copy(const struct store_cluster_map *m)
{
    struct store_cluster_map *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (!m) {
        for (size_t s = 0; s < CRC16_SLOTS; s++)
            c->owner[s] = c->set_of[s] = STORE_CLUSTER_NONE;
        return c;
    }
    memcpy(c->owner, m->owner, sizeof(c->owner));
    memcpy(c->set_of, m->set_of, sizeof(c->set_of));
    c->covered = m->covered;
    if (nodes_copy(&c->nodes, m->nodes, m->nnodes, sizeof(*m->nodes)) ||
        nodes_copy(&c->replicas, m->replicas, m->nreplicas, sizeof(*m->replicas)) ||
        (m->nsets && !(c->sets = malloc(m->nsets * sizeof(*c->sets))))) {
        store_cluster_map_free(c);
        return NULL;
    }
    if (m->nsets)
        memcpy(c->sets, m->sets, m->nsets * sizeof(*c->sets));
    c->nnodes = m->nnodes;
    c->nreplicas = m->nreplicas;
    c->nsets = m->nsets;
    return c;
}

int store_cluster_map_set(struct store_cluster_map *m, int slot, const char *host, int port)
{
    if (slot < 0 || slot >= CRC16_SLOTS || strlen(host) >= STORE_CLUSTER_HOST_MAX)
        return -EPROTO;
    int at = store_cluster_map_find(m, host, port);
    if (at < 0) {
        size_t cap = m->nnodes; /* exactly what is allocated: copies and parses never keep more
                                 * than they report, or grow it here */
        int rc = node_room(m, &cap);
        if (rc)
            return rc;
        struct store_cluster_node *nd = &m->nodes[m->nnodes];
        memcpy(nd->host, host, strlen(host) + 1);
        nd->port = port;
        at = (int)m->nnodes++;
    }
    if (m->owner[slot] == STORE_CLUSTER_NONE)
        m->covered++;
    if (m->owner[slot] != (uint16_t)at)
        m->set_of[slot] = STORE_CLUSTER_NONE; /* its replicas were the old master's */
    m->owner[slot] = (uint16_t)at;
    return 0;
}

/* A node of one range, [host, port, id, ...]: its index in nodes[0..*count) (added when new), or
 * -EPROTO / -ENOMEM. */
static int range_node(struct store_cluster_node **nodes, size_t *count, const struct store_reply *n,
                      const char *self_host, size_t *cap)
{
    if (n->type != STORE_REPLY_ARRAY || n->elements < 2 ||
        (n->element[0]->type != STORE_REPLY_STRING && n->element[0]->type != STORE_REPLY_NIL) ||
        n->element[1]->type != STORE_REPLY_INTEGER || n->element[1]->integer < 1 ||
        n->element[1]->integer > 65535)
        return -EPROTO;
    const char *host = n->element[0]->type == STORE_REPLY_STRING && n->element[0]->len > 0 &&
                               strcmp(n->element[0]->str, "?") != 0
                           ? n->element[0]->str
                           : self_host;
    int port = (int)n->element[1]->integer;
    if (!host || strlen(host) >= STORE_CLUSTER_HOST_MAX)
        return -EPROTO;
    for (size_t i = 0; i < *count; i++)
        if ((*nodes)[i].port == port && strcmp((*nodes)[i].host, host) == 0)
            return (int)i;
    int rc = room_in(nodes, *count, cap);
    if (rc)
        return rc;
    struct store_cluster_node *nd = &(*nodes)[*count];
    memcpy(nd->host, host, strlen(host) + 1);
    nd->port = port;
    return (int)(*count)++;
}

/* The replicas of range e ([lo, hi, master, replica...]) as a new set of m, for slots lo..hi;
 * 0, or -EPROTO / -ENOMEM. */
static int range_replicas(struct store_cluster_map *m, const struct store_reply *e, long long lo,
                          long long hi, const char *self_host, size_t *rcap, size_t *scap)
{
    struct store_cluster_set set = {0};
    for (size_t j = 3; j < e->elements && set.n < STORE_CLUSTER_REPLICAS_MAX; j++) {
        const struct store_reply *n = e->element[j];
        /* a replica whose endpoint its master does not know ("" or "?"): not "the node that
         * answered" (that is the master's own case), so not read from */
        if (n->type == STORE_REPLY_ARRAY && n->elements >= 1 &&
            (n->element[0]->type == STORE_REPLY_NIL ||
             (n->element[0]->type == STORE_REPLY_STRING &&
              (n->element[0]->len == 0 || strcmp(n->element[0]->str, "?") == 0))))
            continue;
        int at = range_node(&m->replicas, &m->nreplicas, n, self_host, rcap);
        if (at < 0)
            return at;
        set.node[set.n++] = (uint16_t)at;
    }
    if (!set.n)
        return 0;
    if (m->nsets == *scap) {
        size_t grown = *scap ? *scap * 2 : 8;
        struct store_cluster_set *more = realloc(m->sets, grown * sizeof(*more));
        if (!more)
            return -ENOMEM;
        m->sets = more;
        *scap = grown;
    }
    m->sets[m->nsets] = set;
    for (long long s = lo; s <= hi; s++)
        m->set_of[s] = (uint16_t)m->nsets;
    m->nsets++;
    return 0;
}

int store_cluster_map_parse(const struct store_reply *r, const char *self_host,
                            struct store_cluster_map **out)
{
    if (!r || r->type != STORE_REPLY_ARRAY)
        return -EPROTO;
    struct store_cluster_map *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    for (size_t s = 0; s < CRC16_SLOTS; s++)
        m->owner[s] = m->set_of[s] = STORE_CLUSTER_NONE;
    size_t cap = 0, rcap = 0, scap = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const struct store_reply *e = r->element[i];
        if (e->type != STORE_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != STORE_REPLY_INTEGER ||
            e->element[1]->type != STORE_REPLY_INTEGER)
            goto bad;
        long long lo = e->element[0]->integer, hi = e->element[1]->integer;
        if (lo < 0 || hi < lo || hi >= CRC16_SLOTS)
            goto bad;
        int at = range_node(&m->nodes, &m->nnodes, e->element[2], self_host, &cap);
        int rc = at < 0 ? at : range_replicas(m, e, lo, hi, self_host, &rcap, &scap);
        if (rc == -ENOMEM) {
            store_cluster_map_free(m);
            return -ENOMEM;
        }
        if (rc < 0)
            goto bad;
        for (long long s = lo; s <= hi; s++) {
            if (m->owner[s] == STORE_CLUSTER_NONE)
                m->covered++;
            m->owner[s] = (uint16_t)at;
        }
    }
    *out = m;
    return 0;
bad:
    store_cluster_map_free(m);
    return -EPROTO;
}

/* 1 when s[0..len) starts with the word `w` followed by a space or the end. */
static int word_is(const char *s, size_t len, const char *w)
{
    size_t n = strlen(w);
    return len >= n && memcmp(s, w, n) == 0 && (len == n || s[n] == ' ');
}

/* "<slot> <host>:<port>" of a MOVED or ASK into out; 0 or -1. */
static int parse_target(const char *s, size_t len, struct store_cluster_redirect *out)
{
    size_t i = 0;
    long slot = 0;
    if (i == len || s[i] < '0' || s[i] > '9')
        return -1;
    while (i < len && s[i] >= '0' && s[i] <= '9' && slot < CRC16_SLOTS)
        slot = slot * 10 + (s[i++] - '0');
    if (slot >= CRC16_SLOTS || i == len || s[i] != ' ')
        return -1;
    const char *addr = s + i + 1;
    size_t alen = len - i - 1;
    const char *colon = NULL;
    for (size_t k = 0; k < alen; k++) {
        if (addr[k] == ' ')
            return -1;
        if (addr[k] == ':')
            colon = addr + k;
    }
    if (!colon)
        return -1;
    size_t hlen = (size_t)(colon - addr), plen = alen - hlen - 1;
    long port = 0;
    if (plen == 0 || plen > 5 || hlen >= STORE_CLUSTER_HOST_MAX)
        return -1;
    for (size_t k = 0; k < plen; k++) {
        if (colon[1 + k] < '0' || colon[1 + k] > '9')
            return -1;
        port = port * 10 + (colon[1 + k] - '0');
    }
    if (port < 1 || port > 65535)
        return -1;
    out->slot = (int)slot;
    memcpy(out->host, addr, hlen);
    out->host[hlen] = '\0';
    out->port = (int)port;
    return 0;
}

int store_cluster_redirect_parse(const char *err, size_t len, struct store_cluster_redirect *out)
{
    memset(out, 0, sizeof(*out));
    out->slot = -1;
    int kind = word_is(err, len, "MOVED")         ? STORE_CLUSTER_MOVED
               : word_is(err, len, "ASK")         ? STORE_CLUSTER_ASK
               : word_is(err, len, "TRYAGAIN")    ? STORE_CLUSTER_TRYAGAIN
               : word_is(err, len, "CLUSTERDOWN") ? STORE_CLUSTER_DOWN
                                                  : STORE_CLUSTER_OTHER;
    if (kind == STORE_CLUSTER_MOVED || kind == STORE_CLUSTER_ASK) {
        size_t skip = kind == STORE_CLUSTER_MOVED ? 6 : 4; /* the word and its space */
        if (len <= skip || parse_target(err + skip, len - skip, out)) {
            memset(out, 0, sizeof(*out));
            out->slot = -1;
            return STORE_CLUSTER_OTHER;
        }
    }
    out->kind = kind;
    return kind;
}
