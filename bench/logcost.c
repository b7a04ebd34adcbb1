/*
 * logcost.c -- the CPU an access line costs (access.h, log.h): N completed requests through
 * access_done with the access log on, into a file through the log's writer thread, as rankd
 * writes them. Prints nanoseconds per line, wall and CPU (the writer's included).
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -pthread -Iservice/lib -Iservice/http -Iservice/core \
 *      -Iservice/store -Ibuild/gen bench/logcost.c service/lib/log.c service/http/access.c \
 *      service/lib/metrics.c service/lib/util.c -lcjson -o build/bench/logcost
 *   build/bench/logcost [N] [FILE]        (default 200000 lines into /tmp/rankd-logcost.log)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "log.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    const char *path = argc > 2 ? argv[2] : "/tmp/rankd-logcost.log";
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || n <= 0 || log_start(fd))
        return 1;
    char id[ACCESS_ID_MAX + 1];
    for (int i = 0; i < n; i++) {
        access_request_id(NULL, id);
        struct access_record r = {.method = "GET",
                                  .route = "rank",
                                  .route_metric = 0,
                                  .status = 200,
                                  .bytes = 3259,
                                  .us = 812,
                                  .cache = "hit",
                                  .request_id = id};
        access_done(&r);
        if ((i & 1023) == 0) /* about 50k lines a second at most, as under load */
            usleep(20000);
    }
    log_stop();
    close(fd);
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    printf("%d lines: %.0f ns a line of CPU (writer included), %lu dropped\n", n,
           ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec) / n, log_dropped());
    return 0;
}
