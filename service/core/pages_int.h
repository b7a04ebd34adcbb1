/*
 * pages_int.h -- the rank flow's private parts, for service/core/pages*.c only: struct pages,
 * a request's state, and the functions one file lends the other. The contract is pages.h.
 */
#ifndef RANKD_PAGES_INT_H
#define RANKD_PAGES_INT_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "pages.h"
#include "records.h"
#include "spare.h"
#include "util.h"

#define KEY_MAX PAGE_CACHE_KEY_MAX
#define STATE_SLOTS 512

/* A guess at a board's page state (see lookup). */
struct board_state {
    char board[BOARD_NAME_LEN_MAX + 1];
    int page_size;
    int ttl_ms;
    int64_t gen;
};

struct pages {
    struct pages_config cfg;
    const struct store_script *page_fill; /* lua/page_fill.lua */
    const struct store_script *page_get;  /* lua/page_get.lua */
    pthread_mutex_t state_lock;
    struct board_state *states; /* STATE_SLOTS */
    atomic_ulong batched_hits, batches, shared_lookups;
};

/* What a request is about. */
struct page_req {
    const char *board;
    const char *requested;      /* the period asked for, NULL = current */
    char period[PERIOD_ID_MAX]; /* the period read, "" for a board without periods */
    enum period_kind kind;      /* the board's periods: a current page ends with its period */
    struct period_tz tz;        /* bound (from the board_where) */
    int64_t page;
    int size; /* resolved */
    enum rank_type rank;
    int ttl_ms;
    int64_t gen;
    char key[KEY_MAX];
    int64_t guess_gen; /* the generation and size the guessed key was made of (place) */
    int guess_size;
};

/*
 * Every page read on an event thread, without another thread: pages_submit guesses the page key
 * from what this process knows of the board, and appends HMGET (settings) + GET (guessed key) to
 * that thread's own non-blocking connection (store_async.h). Every lookup of one loop iteration
 * leaves in one write; the replies settle each request on the same thread: a hit (or stale hit)
 * is answered, a wrong guess reads the right key, a miss joins a fill of the page cache (below),
 * a live board's page is one page.lua call, a period this process cannot place from memory is
 * placed from the settings (one HGETALL first), periods that moved under the request are learnt
 * and the lookup made again, and a read cut by a lost connection is sent once more. With the page
 * cache in a Redis of its own (--cache-redis) the settings come from the data Redis and the page
 * GET, SET and locks go to the loop's connections to the cache Redis.
 */
struct hit {
    struct page_cache_waiter wt; /* first: a waiter of a fill is its hit */
    struct pages *pg;
    struct pages_job *job;
    struct store_async *reads;    /* the loop's read connection */
    int64_t t0_us;                /* a live page: when it was sent */
    int attempts;                 /* lookups begun again: the periods moved under the request */
    int resent;                   /* a read cut by a lost connection was sent once more */
    int primary;                  /* a live page to the primary: a replica's was older than
                                   * min_version */
    struct board_settings_job sj; /* a period the hint cannot place: the settings first */
    struct page_req q;
    struct board_where w;
    /* last, and only started empty by pages_submit (it zeroes what comes before) */
    char meta[KEY_MAX], guess[KEY_MAX], l1key[KEY_MAX];
};

/* What one lookup round trip said (page_settle): */
enum settled {
    SETTLED_FOUND = 1,     /* the guessed key held and the page is cached: *value */
    SETTLED_ABSENT = 0,    /* q is complete; the guess held and the page is not cached */
    SETTLED_UNGUESSED = 2, /* q is complete; the guess was wrong: the page key was not read */
    SETTLED_RETRY = 3,     /* the board's periods were not what this process thought */
};

/* ---------------------------------------------------------------- lent between the files */

/* pages.c */
int64_t page_not_after(const struct page_req *q);
int reply_from_value(struct pages *pg, const struct page_req *q, char *value, size_t len,
                     enum page_source source, const char *inm, struct page_reply *out);
void l1_key(const char *board, const char *resolved, int64_t page, int size, enum rank_type rank,
            char *out, size_t len);
struct store_async *page_reads(const struct hit *h);
int may_resend(int rc, int *resent, int64_t deadline_ms);
void hit_end(struct hit *h, int rc);
int hit_retry(struct hit *h);
/* Complete q from an HMGET of the lookup's settings (page_size, page_ttl_ms, gen, period,
 * timezone, retain) and the guessed key's GET (got, may be NULL); an enum settled, -ENOENT or
 * -EIO (pages.c says more). */
int page_settle(struct pages *pg, struct page_req *q, int requested_size,
                const struct board_where *w, const char *guess, const struct store_reply *set,
                const struct store_reply *got);

/* pages_fill.c */
int replica_behind(struct pages *pg, struct store_async *conn, int64_t min_version, int *primary,
                   const struct store_reply *r);
int miss_begin(struct hit *h, int64_t older_than_ms, char *old, size_t old_len);
void refresh_on_loop(struct hit *h, int64_t seen_created_ms);

/* pages.c */
int live_submit(struct hit *h);

#endif
