/*
 * page_cache_int.h -- the page cache's private parts, for service/core/page_cache*.c only: the
 * limits, the in-process tier's entries, struct page_cache, a fill's struct page_cache_fill, and
 * the functions one file lends the other. The design is in page_cache.h.
 */
#ifndef RANKD_PAGE_CACHE_INT_H
#define RANKD_PAGE_CACHE_INT_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "freshness.h"
#include "log.h"
#include "metrics.h"
#include "page_cache.h"
#include "spare.h"
#include "util.h"

#define KEY_MAX PAGE_CACHE_KEY_MAX
#define VALUE_MAGIC "rankd3" /* rankd2 had no stamp, rankd1 held the computation time in ms */
#define VALUE_MAGIC_V2 "rankd2"
#define VALUE_HEAD_MAX 180 /* a value's header line (without its '\n') is shorter */
#define POLL_MIN_MS 5      /* waiters re-read the cache every 5..10 ms */
#define POLL_JITTER_MS 5
/* The soft TTL is 80-90% of the TTL: jittered by 10% so that values made together expire apart,
 * and ending at least a tenth early so that a busy value's stale copy, served while one refresh
 * runs, stays within the freshness contract (the TTL plus one computation) even when requests
 * arrive a little apart. */
#define SOFT_EARLY_PCT 10
#define SOFT_JITTER_PCT 10
#define L1_BUCKETS 1024
#define ELSEWHERE_MAX 32 /* refreshes held by other processes that this one remembers (a ring) */

/* ---------------------------------------------------------------- state */

/* One value in the in-process tier. */
struct l1_entry {
    char key[KEY_MAX];
    char *value; /* the whole cache value, owned */
    size_t len;
    int64_t expires_ms;     /* monotonic */
    struct l1_entry *next;  /* bucket chain */
    struct l1_entry *newer; /* insertion order, for eviction */
};

/* A refresh another process computes under the key's lock, as a refresh of this process found it
 * (the lock held): until that lock's lease ends, this process serves its stale copy as it would
 * while a refresh of its own runs (refresh_started), and starts no refresh of its own. */
struct elsewhere {
    char key[KEY_MAX];
    int64_t began_ms; /* wall clock: when this process's refresh found the lock held */
    int64_t until_ms; /* wall clock: began_ms + lock_ttl_ms, the holder's lease at most */
};

struct page_cache {
    struct page_cache_config cfg;
    const struct store_script *lock_release; /* lua/lock_release.lua */
    pthread_mutex_t lock;                    /* fills */
    pthread_mutex_t l1_lock;
    struct l1_entry *l1[L1_BUCKETS];
    struct l1_entry *l1_oldest, *l1_newest;
    size_t l1_bytes;
    atomic_int breaker_errors;
    _Atomic int64_t breaker_until_ms;
    struct page_cache_fill *fills;             /* being computed on event loops; under lock */
    int refresh_fills;                         /* background refreshes among them; under lock */
    struct elsewhere elsewhere[ELSEWHERE_MAX]; /* under lock */
    int elsewhere_next;                        /* the ring's next slot; under lock */
    atomic_ulong hits, misses, stale, l1_hits, lock_waits, lock_wait_timeouts, uncached,
        early_refreshes, refreshes, errors, misses_on_loop;
    _Atomic uint64_t seed;
};

/*
 * A fill: the computation of one key on one event loop, and the requests of that loop waiting
 * for it. It takes the key's lock (the caller's lock call, or SET NX PX here), or waits for
 * another holder with timers that re-read the key every 5-10 ms for at most max_wait_ms (then
 * computes without the lock), computes (the caller's), stores the value (SET PX) and releases the
 * lock on the page write connection without the requests waiting for either: a miss costs a
 * request two round trips after its lookup is known to miss. A fill whose lock call fails or
 * times out, or that finds the breaker open, computes without the lock and stores nothing (the
 * cache is the part that failed). A background refresh is a fill without waiters: it takes the
 * lock the same way, gives up when another computation holds it, and stores what it computed.
 * It keeps copies of what it needs (the spec's, the caller's context): it may outlive the
 * request it came from.
 */
struct page_cache_fill {
    struct page_cache *pc;
    char key[KEY_MAX];
    int64_t version;
    int ttl_ms;
    int64_t not_after_ms;
    int64_t older_than_ms;             /* a stored value made at or before this does not count */
    int64_t min_stamp;                 /* nor one of a smaller stamp */
    int64_t stamp;                     /* the stamp of the value computed (page_cache_fill_stamp) */
    struct store_async *page_reads;    /* GET of the key (and the loop's name) */
    struct store_async *page_writes;   /* SET of the value and the lock, the lock's release */
    struct page_cache_waiter *waiters; /* the first one started it; joined in order */
    struct page_cache_waiter **waiters_end;
    char token[40];
    int locked;            /* this fill holds the key's lock */
    int store;             /* store the computed value */
    int refresh;           /* a background refresh: no waiter, nothing waits */
    int64_t wait_until_ms; /* waiting for another holder until then (monotonic) */
    int64_t t0_us;         /* the computation's start */
    int64_t started_ms;    /* wall clock, for the freshness decision (refresh_started) */
    int64_t deadline_ms;
    int (*after)(void *ctx, int ms, void (*fn)(void *arg), void *arg);
    void *after_ctx;
    const struct page_cache_fill_ops *ops;
    void *ctx;                    /* the caller's, made by ops->ctx_new */
    struct page_cache_fill *next; /* in pc->fills */
};

/* ---------------------------------------------------------------- lent between the files */

/* page_cache.c */
uint64_t next_rand(struct page_cache *pc);
char *make_value(struct page_cache_fill *f, const char *data, size_t len, const char *tag,
                 size_t *out_len, int64_t *soft_ms);
void l1_put(struct page_cache *pc, const char *key, const char *value, size_t len, int64_t soft_ms);
int64_t fill_started(struct page_cache *pc, const char *key);
int64_t elsewhere_started(struct page_cache *pc, const char *key, int64_t now_ms);
void elsewhere_note(struct page_cache *pc, const struct page_cache_fill *f);
int is_fault(int rc);

/* page_cache_fill.c */
void fill_free(struct page_cache_fill *f);

#endif
