/*
 * fake_resp.h -- integration-test support: a tiny RESP2 server on a free loopback port, for what
 * a real Redis or Sentinel cannot be made to do on cue (a sentinel that names a replica, answers
 * late, publishes a +switch-master the test chooses; a node whose reply to one command of a
 * group is READONLY). One thread serves every connection; each command (an array of bulk
 * strings) goes to the test's handler, which writes the reply with fake_resp_reply*.
 */
#ifndef RANKD_TEST_FAKE_RESP_H
#define RANKD_TEST_FAKE_RESP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#define FAKE_RESP_CONNS 32
#define FAKE_RESP_ARGS 16

struct fake_resp;

/** One command: argv[0..argc) (NUL-terminated copies), on connection `conn` (an index); the
 *  handler answers with fake_resp_reply (any number of times; nothing: no answer). It runs on
 *  the server's thread and may sleep (a late answer): the other connections wait meanwhile,
 *  but a fake_resp_publish from the test's thread goes out. */
typedef void (*fake_resp_handler)(struct fake_resp *f, int conn, int argc, char **argv);

struct fake_resp {
    int port;
    fake_resp_handler handler;
    void *arg;         /**< the test's */
    atomic_int served; /**< commands handled */
    /* private */
    int lfd, fds[FAKE_RESP_CONNS];
    char *in[FAKE_RESP_CONNS];
    size_t in_len[FAKE_RESP_CONNS];
    int subscribed[FAKE_RESP_CONNS];
    pthread_t th;
    atomic_int stop;
    pthread_mutex_t lock; /* around each reply's bytes (a publish comes from another thread) */
};

/** Start it (port in f->port). 0 or -1. */
int fake_resp_start(struct fake_resp *f, fake_resp_handler handler, void *arg);

/** Stop it and close every connection. */
void fake_resp_stop(struct fake_resp *f);

/** Write raw RESP to connection `conn` (inside the handler, or under fake_resp_publish). */
void fake_resp_reply(struct fake_resp *f, int conn, const char *resp, size_t len);

/** printf-style raw RESP. */
void fake_resp_replyf(struct fake_resp *f, int conn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Mark connection `conn` subscribed (fake_resp_publish writes to it). */
void fake_resp_subscribe(struct fake_resp *f, int conn);

/** Publish `msg` on `channel` to every subscribed connection (any thread). */
void fake_resp_publish(struct fake_resp *f, const char *channel, const char *msg);

#endif
