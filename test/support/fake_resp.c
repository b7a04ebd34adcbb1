/* fake_resp.c -- a tiny RESP2 server for the tests; see fake_resp.h. */
#include "fake_resp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void fake_resp_reply(struct fake_resp *f, int conn, const char *resp, size_t len)
{
    pthread_mutex_lock(&f->lock); /* a publish from the test's thread must not interleave */
    int fd = f->fds[conn];
    while (fd >= 0 && len > 0) {
        ssize_t n = send(fd, resp, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        resp += n;
        len -= (size_t)n;
    }
    pthread_mutex_unlock(&f->lock);
}

void fake_resp_replyf(struct fake_resp *f, int conn, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0)
        fake_resp_reply(f, conn, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void fake_resp_subscribe(struct fake_resp *f, int conn)
{
    f->subscribed[conn] = 1;
}

void fake_resp_publish(struct fake_resp *f, const char *channel, const char *msg)
{
    for (int i = 0; i < FAKE_RESP_CONNS; i++)
        if (f->fds[i] >= 0 && f->subscribed[i])
            fake_resp_replyf(f, i, "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
                             strlen(channel), channel, strlen(msg), msg);
}

static void drop(struct fake_resp *f, int i)
{
    pthread_mutex_lock(&f->lock);
    close(f->fds[i]);
    f->fds[i] = -1;
    pthread_mutex_unlock(&f->lock);
    free(f->in[i]);
    f->in[i] = NULL;
    f->in_len[i] = 0;
    f->subscribed[i] = 0;
}

/* One complete command at the start of connection i's input: its length, 0 when incomplete,
 * -1 when it is not an array of bulk strings. */
static long parse(const char *in, size_t len, int *argc, char **argv)
{
    const char *p = in, *end = in + len, *nl;
    if (len == 0)
        return 0;
    if (*p != '*')
        return -1;
    if (!(nl = memchr(p, '\n', (size_t)(end - p))))
        return 0;
    int n = atoi(p + 1);
    if (n < 1 || n > FAKE_RESP_ARGS)
        return -1;
    p = nl + 1;
    for (int a = 0; a < n; a++) {
        if (p >= end)
            return 0;
        if (*p != '$')
            return -1;
        if (!(nl = memchr(p, '\n', (size_t)(end - p))))
            return 0;
        long l = atol(p + 1);
        if (l < 0)
            return -1;
        p = nl + 1;
        if (end - p < l + 2)
            return 0;
        argv[a] = strndup(p, (size_t)l);
        p += l + 2;
    }
    *argc = n;
    return p - in;
}

static void serve(struct fake_resp *f, int i)
{
    char chunk[16384];
    ssize_t n = recv(f->fds[i], chunk, sizeof(chunk), 0);
    if (n <= 0) {
        drop(f, i);
        return;
    }
    char *grown = realloc(f->in[i], f->in_len[i] + (size_t)n);
    if (!grown) {
        drop(f, i);
        return;
    }
    f->in[i] = grown;
    memcpy(f->in[i] + f->in_len[i], chunk, (size_t)n);
    f->in_len[i] += (size_t)n;
    for (;;) {
        int argc = 0;
        char *argv[FAKE_RESP_ARGS] = {0};
        long used = parse(f->in[i], f->in_len[i], &argc, argv);
        if (used < 0) {
            drop(f, i);
            return;
        }
        if (used == 0) {
            for (int a = 0; a < FAKE_RESP_ARGS; a++)
                free(argv[a]);
            return;
        }
        f->handler(f, i, argc, argv); /* may sleep: a late answer */
        atomic_fetch_add(&f->served, 1);
        for (int a = 0; a < argc; a++)
            free(argv[a]);
        if (f->fds[i] < 0)
            return;
        memmove(f->in[i], f->in[i] + used, f->in_len[i] - (size_t)used);
        f->in_len[i] -= (size_t)used;
    }
}

static void *run(void *arg)
{
    struct fake_resp *f = arg;
    while (!atomic_load(&f->stop)) {
        struct pollfd p[FAKE_RESP_CONNS + 1];
        int at[FAKE_RESP_CONNS + 1], n = 0;
        p[n] = (struct pollfd){.fd = f->lfd, .events = POLLIN};
        at[n++] = -1;
        for (int i = 0; i < FAKE_RESP_CONNS; i++)
            if (f->fds[i] >= 0) {
                p[n] = (struct pollfd){.fd = f->fds[i], .events = POLLIN};
                at[n++] = i;
            }
        if (poll(p, (nfds_t)n, 50) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (at[k] >= 0) {
                serve(f, at[k]);
                continue;
            }
            int fd = accept(f->lfd, NULL, NULL);
            int slot = -1;
            for (int i = 0; fd >= 0 && i < FAKE_RESP_CONNS && slot < 0; i++)
                if (f->fds[i] < 0)
                    slot = i;
            if (slot < 0) {
                if (fd >= 0)
                    close(fd);
                continue;
            }
            f->fds[slot] = fd;
        }
    }
    return NULL;
}

int fake_resp_start(struct fake_resp *f, fake_resp_handler handler, void *arg)
{
    f->handler = handler;
    f->arg = arg;
    atomic_init(&f->served, 0);
    atomic_init(&f->stop, 0);
    pthread_mutex_init(&f->lock, NULL);
    for (int i = 0; i < FAKE_RESP_CONNS; i++) {
        f->fds[i] = -1;
        f->in[i] = NULL;
        f->in_len[i] = 0;
        f->subscribed[i] = 0;
    }
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int one = 1;
    if (f->lfd < 0 || setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(f->lfd, 64) != 0 ||
        getsockname(f->lfd, (struct sockaddr *)&a, &al) != 0) {
        if (f->lfd >= 0)
            close(f->lfd);
        return -1;
    }
    f->port = ntohs(a.sin_port);
    if (pthread_create(&f->th, NULL, run, f) != 0) {
        close(f->lfd);
        return -1;
    }
    return 0;
}

void fake_resp_stop(struct fake_resp *f)
{
    atomic_store(&f->stop, 1);
    pthread_join(f->th, NULL);
    for (int i = 0; i < FAKE_RESP_CONNS; i++)
        if (f->fds[i] >= 0)
            drop(f, i);
    close(f->lfd);
    pthread_mutex_destroy(&f->lock);
}
