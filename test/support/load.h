/*
 * load.h -- integration-test support: a writer and a reader against rankd over HTTP while a test
 * moves Redis under them (a slot resharded, a master killed, a failover), each request retried on
 * 503 for a while, and afterwards the check that every acknowledged write is in Redis.
 */
#ifndef RANKD_TEST_LOAD_H
#define RANKD_TEST_LOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#define LOAD_RETRY_MS_DEFAULT                                                                      \
    2000                       /**< how long one request is retried (5 ms apart): far more than    \
                                *   a slot move takes */
#define LOAD_WRITES_MAX 100000 /**< writes one load makes at most */

/** The load's state: set port, board and retry_ms, zero the rest (it is big: every write's
 *  time; keep it static). The writer writes w0, w1, ... (score i, record {"n":i}) to `board`,
 *  one at a time; the reader reads page 1 and member base0 in turn. */
struct load {
    int port;
    const char *board;
    int retry_ms; /* how long one request is retried (0: LOAD_RETRY_MS_DEFAULT) */
    atomic_int stop;
    /* writer */
    int written; /* ids w0..w(written-1) acknowledged, score i, record {"n":i} */
    int64_t acked_ms[LOAD_WRITES_MAX]; /* when each was acknowledged (monotonic) */
    _Atomic int64_t last_503_ms;       /* the latest 503, of a read or a write */
    int write_503, write_other, write_gave_up;
    long last_other;
    char other_body[300];
    /* reader */
    int reads, read_503, read_other;
    long last_read_other;
    char read_other_body[300];
    int max_tries; /* the most attempts any one request took */
};

/** Start the writer and the reader (th: their threads). */
void load_start(struct load *l, pthread_t th[2]);

/** Stop both and wait for them. */
void load_stop(struct load *l, pthread_t th[2]);

/**
 * Check the load (asserts): nothing failed but 503s, no request gave up, and every acknowledged
 * write is in Redis (admin: a redis_admin connection) with its score and record (clustered: the
 * records' buckets, else P:items), but those acknowledged in [lossy_from, lossy_to) (monotonic
 * ms; 0, 0: none), which may be missing (a failover loses what the replica had not received:
 * asynchronous replication). Prints a summary line; returns how many were missing.
 */
int load_check(const struct load *l, const char *what, redisContext *admin, int clustered,
               int64_t lossy_from, int64_t lossy_to);

/** Wait (at most `ms`) until `more` writes were acknowledged after this call; returns when. */
int64_t load_wait_writes(const struct load *l, int more, int ms);

/** Board `board` with members base0..base49 (score 1000 + i), through rankd on `port`. */
void load_board(int port, const char *board);

#endif
