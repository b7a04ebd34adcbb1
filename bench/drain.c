/*
 * drain.c -- the big-delete prototypes of bench/delete-only.sh, straight against Redis (hiredis).
 *
 *   drain PORT KEY unlink                       UNLINK KEY (what rankd's delete script does)
 *   drain PORT KEY rename TRASH CHUNK PAUSE_US TAIL
 *        RENAME KEY TRASH (O(1)), then ZREMRANGEBYRANK TRASH 0 CHUNK-1 with PAUSE_US microseconds
 *        between calls until at most TAIL members are left, then UNLINK TRASH
 *
 * Prints one JSON line: the mode, the calls made, the wall time and the slowest call (us).
 * Exit 1 on any Redis error.
 */
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t slowest;

static redisReply *cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int64_t t0 = now_us();
    redisReply *r = redisvCommand(c, fmt, ap);
    int64_t dt = now_us() - t0;
    va_end(ap);
    if (dt > slowest)
        slowest = dt;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "drain: %s\n", r ? r->str : c->errstr);
        exit(1);
    }
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return fprintf(stderr, "usage: see bench/drain.c\n"), 2;
    redisContext *c = redisConnect("127.0.0.1", atoi(argv[1]));
    if (!c || c->err)
        return fprintf(stderr, "drain: connect\n"), 1;
    const char *key = argv[2], *mode = argv[3];
    int64_t t0 = now_us(), calls = 0, removed = 0;
    if (!strcmp(mode, "unlink")) {
        freeReplyObject(cmd(c, "UNLINK %s", key));
        calls = 1;
    } else if (!strcmp(mode, "rename") && argc == 8) {
        const char *trash = argv[4];
        long chunk = atol(argv[5]), pause_us = atol(argv[6]), tail = atol(argv[7]);
        freeReplyObject(cmd(c, "RENAME %s %s", key, trash));
        calls++;
        for (;;) {
            redisReply *r = cmd(c, "ZCARD %s", trash);
            long long n = r->integer;
            freeReplyObject(r);
            calls++;
            if (n <= tail)
                break;
            r = cmd(c, "ZREMRANGEBYRANK %s 0 %ld", trash, chunk - 1);
            removed += r->integer;
            freeReplyObject(r);
            calls++;
            if (pause_us > 0) {
                struct timespec ts = {pause_us / 1000000, (pause_us % 1000000) * 1000};
                nanosleep(&ts, NULL);
            }
        }
        freeReplyObject(cmd(c, "UNLINK %s", trash));
        calls++;
    } else {
        return fprintf(stderr, "usage: see bench/drain.c\n"), 2;
    }
    printf("{\"mode\":\"%s\",\"calls\":%" PRId64 ",\"removed\":%" PRId64 ",\"wall_ms\":%.1f,"
           "\"slowest_call_us\":%" PRId64 "}\n",
           mode, calls, removed, (double)(now_us() - t0) / 1000, slowest);
    redisFree(c);
    return 0;
}
