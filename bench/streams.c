/* streams.c -- many event-stream viewers of one rankd page, for bench/streams.sh.
 *
 *   streams PORT PATH N SECONDS
 *
 * Opens N connections to 127.0.0.1:PORT, each GET PATH with Accept: text/event-stream (at most
 * 256 connecting at once), waits until each has its first `page` event (at most 120 s), prints
 * "ready N MS", then reads every stream for SECONDS and prints one line per page version seen
 * ("version ID viewers FIRST_MS LAST_MS": how many streams got it and when, in ms from the
 * start of the window) and at the end "events E seconds S refused R closed C". Streams answered
 * with anything but 200 count as refused. One thread, epoll; bodies de-chunked per connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HEAD, SIZE, DATA, CRLF, DEAD };

struct conn {
    int fd;
    int state;
    long left;      /* DATA: bytes of the chunk left */
    char line[128]; /* the body's current line (longer ones are not looked at) */
    int llen, over;
    char head[8]; /* the last bytes of the headers, to find their end */
    char status[16]; /* the status line's start */
    int slen;
    char sz[24]; /* a chunk's size line */
    int szlen;
    int pages;
};

#define VERSIONS 256
static struct {
    char id[96];
    long viewers;
    long long first, last;
} versions[VERSIONS];
static int nversions;
static long long t0;
static int window; /* counting versions */
static long events;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void seen(const char *id)
{
    events++;
    if (!window)
        return;
    long long t = now_ms() - t0;
    for (int i = 0; i < nversions; i++)
        if (strcmp(versions[i].id, id) == 0) {
            versions[i].viewers++;
            versions[i].last = t;
            return;
        }
    if (nversions == VERSIONS)
        return;
    snprintf(versions[nversions].id, sizeof(versions[0].id), "%s", id);
    versions[nversions].viewers = 1;
    versions[nversions].first = versions[nversions].last = t;
    nversions++;
}

/* A line of a body: an event's id marks it (each page event has one). */
static void body_line(struct conn *c)
{
    if (c->over || c->llen < 4 || memcmp(c->line, "id: ", 4) != 0)
        return;
    c->line[c->llen] = '\0';
    c->pages++;
    seen(c->line + 4);
}

static void body_byte(struct conn *c, char b)
{
    if (b == '\n') {
        body_line(c);
        c->llen = 0;
        c->over = 0;
    } else if (c->llen < (int)sizeof(c->line) - 1) {
        c->line[c->llen++] = b;
    } else {
        c->over = 1;
    }
}

/* Feed received bytes through the HTTP framing. Returns -1 when the stream is refused. */
static int feed(struct conn *c, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char b = p[i];
        switch (c->state) {
        case HEAD:
            memmove(c->head, c->head + 1, sizeof(c->head) - 1);
            c->head[sizeof(c->head) - 1] = b;
            if (c->slen < (int)sizeof(c->status) - 1)
                c->status[c->slen++] = b;
            if (memcmp(c->head + 4, "\r\n\r\n", 4) == 0) {
                if (strncmp(c->status, "HTTP/1.1 200", 12) != 0)
                    return -1;
                c->state = SIZE;
                c->szlen = 0;
            }
            break;
        case SIZE:
            if (b == '\n') {
                c->sz[c->szlen] = '\0';
                c->left = strtol(c->sz, NULL, 16);
                c->szlen = 0;
                c->state = c->left ? DATA : DEAD;
            } else if (c->szlen < (int)sizeof(c->sz) - 1) {
                c->sz[c->szlen++] = b;
            }
            break;
        case DATA:
            body_byte(c, b);
            if (--c->left == 0)
                c->state = CRLF;
            break;
        case CRLF:
            if (b == '\n')
                c->state = SIZE;
            break;
        default:
            break;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: streams PORT PATH N SECONDS\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    int n = atoi(argv[3]);
    int secs = atoi(argv[4]);
    struct conn *cs = calloc((size_t)n, sizeof(*cs));
    int ep = epoll_create1(0);
    char req[1024];
    int rl = snprintf(req, sizeof(req),
                      "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
                      path);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long refused = 0, closed = 0, ready = 0;
    int opened = 0;
    long long start = now_ms();
    static char buf[65536];
    struct epoll_event evs[512];
    /* open them, at most 256 waiting for their first page at once */
    while ((ready + refused + closed < n) && now_ms() - start < 120000) {
        while (opened < n && opened - ready - refused - closed < 256) {
            struct conn *c = &cs[opened];
            c->fd = socket(AF_INET, SOCK_STREAM, 0);
            if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
                send(c->fd, req, (size_t)rl, MSG_NOSIGNAL) != rl) {
                fprintf(stderr, "streams: connection %d: %s\n", opened, strerror(errno));
                return 1;
            }
            struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
            epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
            opened++;
        }
        int k = epoll_wait(ep, evs, 512, 100);
        for (int i = 0; i < k; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t got = recv(c->fd, buf, sizeof(buf), 0);
            int had = c->pages;
            if (got <= 0) {
                closed++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                c->state = DEAD;
                continue;
            }
            if (feed(c, buf, (size_t)got) < 0) {
                refused++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                c->state = DEAD;
                continue;
            }
            if (!had && c->pages)
                ready++;
        }
    }
    printf("ready %ld %lld\n", ready, now_ms() - start);
    fflush(stdout);
    events = 0;
    window = 1;
    t0 = now_ms();
    while (now_ms() - t0 < (long long)secs * 1000) {
        int k = epoll_wait(ep, evs, 512, 100);
        for (int i = 0; i < k; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t got = recv(c->fd, buf, sizeof(buf), 0);
            if (got <= 0) {
                closed++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                continue;
            }
            feed(c, buf, (size_t)got);
        }
    }
    long long took = now_ms() - t0;
    for (int i = 0; i < nversions; i++)
        printf("version %s viewers %ld first %lld last %lld\n", versions[i].id, versions[i].viewers,
               versions[i].first, versions[i].last);
    printf("events %ld seconds %.3f refused %ld closed %ld\n", events, (double)took / 1000.0,
           refused, closed);
    return 0;
}
