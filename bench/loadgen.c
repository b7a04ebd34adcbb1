/*
 * loadgen.c -- HTTP/1.1 keep-alive load generator for the benchmark (bench/run.sh).
 *
 * One thread, epoll, N persistent connections to one loopback target. Every request's latency is
 * recorded (not bucketed), so p50/p99/p999/max are exact for the run. Two pacing modes:
 *   closed loop (default): each connection sends its next request when the previous reply is in;
 *   paced (--rate R): each connection has a schedule of R/N requests per second and a request's
 *     latency counts from its scheduled time, so a server stall also charges the requests that
 *     could not be sent while it lasted (no coordinated omission).
 *
 * Request mix (per reader request): --member-frac of member lookups (uniform over --members ids),
 * the rest pages: --hot-frac of them uniform over pages 1..--hot-pages, the others uniform over
 * 1..--pages. URLs come from templates: "{p}" is replaced by the page, "{m}" by the member number,
 * "{b}" by a board drawn for each request: uniform over --boards N's numbers 1..N (default 1), or
 * over the names of --boards NAME1,NAME2,... (up to 64).
 *
 * Targets: --port P, or --ports P1,P2,... (up to 16) to spread the reader connections round-robin
 * over several servers (connection i goes to the (i mod n)-th port), one report for all of them.
 *
 * Write load (--body TPL): every reader request is instead a POST to --url (with --token as a
 * bearer token, Content-Type application/json) whose body is TPL with "{m}" replaced by a member
 * number uniform over 1..--members and "{s}" by a score uniform over 1..1,000,000, e.g.
 * '{"id":"u{m}","score":{s},"op":"set"}'. These replies count as reads ("all") for the report.
 *
 * Writers (optional, --write-frac F > 0): extra connections to --write-port that POST score
 * increments ({"id":"<idpfx><m>","score":1..100,"op":"incr"}), gated so that writes are F of all
 * requests (they wait while writes > F/(1-F) x reads). A probe connection sets member --probe-id to
 * a top score that grows by one every --probe-ms; every served page 1 that shows an older probe
 * value than the last completed probe write was stale: its lag is now - (completion time of the
 * first probe write it misses), a lower bound on the page's age (resolution: one probe period).
 * With --check-port, a sample (--check-frac) of served pages is compared, right after it arrives,
 * with the true order in Redis (ZRANGE of the same positions): the share of pages with any id at
 * the wrong rank.
 *
 * Output: one JSON object on stdout. --timeline FILE writes "t_ms,latency_us,status" per reader
 * request (t from the start of the run, scheduled send time) for latency-over-time charts.
 * Bounded: sending stops after warmup + duration; replies still missing after --drain seconds
 * are counted as timeouts with their elapsed time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define REQ_MAX 2048
#define PROBE_MAX 999 /* probes per run: the default base moves by 1000 a second */

enum cls { C_PAGE, C_MEMBER, C_WRITE, C_PROBE, NCLS };
static const char *const cls_name[NCLS] = {"page", "member", "write", "probe"};
enum role { R_READ, R_WRITE, R_PROBE };
enum state { S_CONNECTING, S_IDLE, S_SENDING, S_RECEIVING, S_BACKOFF };

struct conn {
    int fd;
    enum role role;
    enum state st;
    int64_t next_ns;  /* paced: scheduled time of the next request; backoff: retry time */
    int64_t sched_ns; /* scheduled (or actual) send time of the request in flight */
    int64_t idle_ns;  /* when the connection last became free */
    enum cls cls;
    int64_t page;     /* page of the request in flight (0 for other classes) */
    int64_t probe_k;  /* probe value in flight */
    char req[REQ_MAX];
    size_t req_len, req_off;
    char *buf;        /* reply bytes */
    size_t len, cap;
    size_t hdr_len;   /* 0 until the header is complete */
    long clen;        /* Content-Length, -1 chunked */
    int status, close_after, xcache;
};

struct lat {
    uint32_t *v;
    size_t n, cap;
};

static struct opts {
    const char *host, *url, *member_url, *write_path, *token, *idpfx, *probe_id, *check_key,
        *timeline, *label, *body;
    int port, write_port, check_port, conns, write_conns, hot_pages, page_size;
    double duration, warmup, rate, hot_frac, member_frac, write_frac, check_frac, drain;
    int64_t pages, members, probe_base, boards;
    int probe_ms;
    int ports[16], nports;
    char *board_names[64];
    int nboard_names;
    uint64_t seed;
} o = {
    .host = "127.0.0.1",
    .url = "/rank?page={p}",
    .idpfx = "u",
    .probe_id = "zz-probe",
    .conns = 64,
    .hot_pages = 5,
    .page_size = 20,
    .duration = 5,
    .hot_frac = 0.8,
    .drain = 3,
    .pages = 1,
    .members = 1,
    .boards = 1,
    .seed = 42,
};

static struct conn conns[MAX_CONNS];
static int nconns, epfd;
static int64_t t0, t_measure, t_end;
static struct lat lats[NCLS], all_read;
static uint64_t errors, timeouts, non2xx[NCLS], non2xx_read, bytes_in, xcache_n[4], sent_writes, done_reads;
static uint64_t checked, wrong, total_done; /* total_done: every reply, warm-up included */
static int64_t probe_done_ns[PROBE_MAX + 1];
static int64_t probe_last_done = 0, probe_next_k = 1;
static struct lat probe_lag; /* ms, per checked page-1 reply */
static FILE *timeline;
static uint64_t rng;
static int check_fd = -1;
static volatile sig_atomic_t stop_flag;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double rnd01(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

static void die(const char *m)
{
    fprintf(stderr, "loadgen: %s: %s\n", m, strerror(errno));
    exit(1);
}

static void lat_add(struct lat *l, uint32_t us)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 65536;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        if (!l->v)
            die("realloc");
    }
    l->v[l->n++] = us;
}

/* ---------------------------------------------------------------- requests */

static size_t expand(char *out, size_t cap, const char *tpl, int64_t p, int64_t m)
{
    size_t n = 0;
    for (const char *s = tpl; *s && n + 24 < cap; s++) {
        if (s[0] == '{' && (s[1] == 'p' || s[1] == 'm' || s[1] == 's' || s[1] == 'b') &&
            s[2] == '}') {
            if (s[1] == 'b' && o.nboard_names) {
                const char *name = o.board_names[rnd() % (uint64_t)o.nboard_names];
                n += (size_t)snprintf(out + n, cap - n, "%.*s", (int)(cap - n - 24), name);
                s += 2;
                continue;
            }
            int64_t v = s[1] == 'p'   ? p
                        : s[1] == 'm' ? m
                        : s[1] == 'b' ? (int64_t)(rnd() % (uint64_t)o.boards) + 1
                                      : (int64_t)(rnd() % 1000000) + 1;
            n += (size_t)snprintf(out + n, cap - n, "%" PRId64, v);
            s += 2;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = 0;
    return n;
}

static void build_body_post(struct conn *c)
{
    char path[1024], body[1024];
    c->cls = C_WRITE;
    c->page = 0;
    expand(path, sizeof(path), o.url, 0, 0);
    size_t bl = expand(body, sizeof(body), o.body, 0, (int64_t)(rnd() % (uint64_t)o.members) + 1);
    c->req_len = (size_t)snprintf(c->req, REQ_MAX,
                                  "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
                                  "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                                  path, o.host, o.token ? o.token : "", bl, body);
}

static void build_get(struct conn *c)
{
    char path[1024];
    c->page = 0;
    if (o.body) {
        build_body_post(c);
        return;
    }
    if (o.member_url && rnd01() < o.member_frac) {
        c->cls = C_MEMBER;
        expand(path, sizeof(path), o.member_url, 0, (int64_t)(rnd() % (uint64_t)o.members) + 1);
    } else {
        c->cls = C_PAGE;
        int64_t hot = o.hot_pages < o.pages ? o.hot_pages : o.pages;
        c->page = rnd01() < o.hot_frac ? (int64_t)(rnd() % (uint64_t)hot) + 1
                                       : (int64_t)(rnd() % (uint64_t)o.pages) + 1;
        expand(path, sizeof(path), o.url, c->page, 0);
    }
    c->req_len = (size_t)snprintf(c->req, REQ_MAX, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path,
                                  o.host);
}

static void build_post(struct conn *c, const char *body)
{
    c->req_len = (size_t)snprintf(c->req, REQ_MAX,
                                  "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
                                  "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                                  o.write_path, o.host, o.token ? o.token : "", strlen(body), body);
}

static void build_write(struct conn *c)
{
    char body[256];
    c->cls = C_WRITE;
    c->page = 0;
    snprintf(body, sizeof(body), "{\"id\":\"%s%" PRIu64 "\",\"score\":%" PRIu64 ",\"op\":\"incr\"}",
             o.idpfx, rnd() % (uint64_t)o.members + 1, rnd() % 100 + 1);
    build_post(c, body);
}

static void build_probe(struct conn *c)
{
    char body[256];
    c->cls = C_PROBE;
    c->page = 0;
    c->probe_k = probe_next_k;
    snprintf(body, sizeof(body), "{\"id\":\"%s\",\"score\":%" PRId64 ",\"op\":\"set\"}", o.probe_id,
             o.probe_base + c->probe_k);
    build_post(c, body);
}

/* ---------------------------------------------------------------- connections */

static void set_events(struct conn *c, uint32_t ev)
{
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e) < 0)
        die("epoll_ctl mod");
}

static void conn_open(struct conn *c)
{
    int port = c->role != R_READ ? o.write_port
               : o.nports    ? o.ports[(c - conns) % o.nports]
                             : o.port;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, o.host, &a.sin_addr);
    c->st = S_CONNECTING;
    c->len = c->hdr_len = 0;
    if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS)
        die("connect");
    struct epoll_event e = {.events = EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e) < 0)
        die("epoll_ctl add");
}

static void conn_close(struct conn *c)
{
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

/* ---------------------------------------------------------------- Redis truth check */

static int redis_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.check_port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("connect redis");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* ZRANGE key start stop: the ids, newline-separated, into out. Returns the count or -1. */
static int redis_zrange(int64_t start, int64_t stop, char *out, size_t cap)
{
    char cmd[512], a[24], b[24];
    int la = snprintf(a, sizeof(a), "%" PRId64, start), lb = snprintf(b, sizeof(b), "%" PRId64, stop);
    int n = snprintf(cmd, sizeof(cmd), "*4\r\n$6\r\nZRANGE\r\n$%zu\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n",
                     strlen(o.check_key), o.check_key, la, a, lb, b);
    if (write(check_fd, cmd, (size_t)n) != n)
        return -1;
    static char rb[65536];
    size_t len = 0;
    for (;;) { /* read until the whole array is in: count the bulk strings */
        ssize_t r = read(check_fd, rb + len, sizeof(rb) - 1 - len);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        rb[len] = 0;
        if (rb[0] != '*')
            return -1;
        char *p = strstr(rb, "\r\n");
        if (!p)
            continue;
        long cnt = strtol(rb + 1, NULL, 10);
        p += 2;
        size_t olen = 0;
        long got = 0;
        while (got < cnt) {
            char *e = strstr(p, "\r\n");
            if (!e || *p != '$')
                break;
            long bl = strtol(p + 1, NULL, 10);
            if ((size_t)(e + 2 + bl + 2 - rb) > len)
                break;
            if (olen + (size_t)bl + 2 < cap) {
                memcpy(out + olen, e + 2, (size_t)bl);
                olen += (size_t)bl;
                out[olen++] = '\n';
            }
            p = e + 2 + bl + 2;
            got++;
        }
        if (got == cnt) {
            out[olen] = 0;
            return (int)cnt;
        }
        if (len >= sizeof(rb) - 1)
            return -1;
    }
}

/* Ids of a page body in order, newline-separated. Returns the count. */
static int body_ids(const char *body, size_t len, char *out, size_t cap)
{
    int n = 0;
    size_t olen = 0;
    const char *end = body + len, *p = body;
    while ((p = memmem(p, (size_t)(end - p), "\"id\":\"", 6))) {
        p += 6;
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q)
            break;
        if (olen + (size_t)(q - p) + 2 < cap) {
            memcpy(out + olen, p, (size_t)(q - p));
            olen += (size_t)(q - p);
            out[olen++] = '\n';
        }
        n++;
        p = q;
    }
    out[olen] = 0;
    return n;
}

static void check_page(const struct conn *c, const char *body, size_t blen, int64_t t)
{
    if (c->cls != C_PAGE || c->status != 200)
        return;
    if (o.write_frac > 0 && c->page == 1 && probe_last_done > 0) {
        /* the probe value this page shows, 0 if it shows none */
        int64_t seen = 0;
        char needle[160];
        int nl = snprintf(needle, sizeof(needle), "\"id\":\"%s\",\"score\":", o.probe_id);
        const char *p = memmem(body, blen, needle, (size_t)nl);
        if (p)
            seen = strtoll(p + nl, NULL, 10) - o.probe_base;
        if (seen < 0)
            seen = 0;
        int64_t lag_ms = 0;
        if (seen < probe_last_done && seen + 1 <= PROBE_MAX && probe_done_ns[seen + 1] > 0)
            lag_ms = (t - probe_done_ns[seen + 1]) / 1000000;
        if (t >= t_measure)
            lat_add(&probe_lag, (uint32_t)(lag_ms > 0 ? lag_ms : 0));
    }
    if (check_fd < 0 || t < t_measure || rnd01() >= o.check_frac)
        return;
    static char served[65536], truth[65536];
    int ns = body_ids(body, blen, served, sizeof(served));
    int64_t start = (c->page - 1) * o.page_size;
    int nt = redis_zrange(start, start + o.page_size - 1, truth, sizeof(truth));
    if (nt < 0) {
        fprintf(stderr, "loadgen: redis check failed\n");
        close(check_fd);
        check_fd = -1;
        return;
    }
    checked++;
    if (ns != nt || strcmp(served, truth) != 0)
        wrong++;
}

/* ---------------------------------------------------------------- reply parsing */

static long header_value_long(const char *h, size_t hl, const char *name, long dflt)
{
    size_t nl = strlen(name);
    for (const char *p = h; p && p < h + hl; p = memchr(p, '\n', (size_t)(h + hl - p))) {
        if (*p == '\n')
            p++;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':')
            return strtol(p + nl + 1, NULL, 10);
    }
    return dflt;
}

static const char *header_value(const char *h, size_t hl, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = h; p && p < h + hl; p = memchr(p, '\n', (size_t)(h + hl - p))) {
        if (*p == '\n')
            p++;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            p += nl + 1;
            while (*p == ' ')
                p++;
            return p;
        }
    }
    return NULL;
}

/* Chunked body: returns the decoded length once complete (decoding in place), or -1. */
static long chunked_done(char *b, size_t len)
{
    size_t r = 0, w = 0;
    for (;;) {
        char *e = memmem(b + r, len - r, "\r\n", 2);
        if (!e)
            return -1;
        long n = strtol(b + r, NULL, 16);
        size_t d = (size_t)(e - b) + 2;
        if (n == 0)
            return memmem(b + d, len - d, "\r\n", 2) || len - d >= 2 ? (long)w : -1;
        if (d + (size_t)n + 2 > len)
            return -1;
        r = d + (size_t)n + 2;
        w += (size_t)n;
    }
}

static void chunked_decode(char *b, size_t len)
{
    size_t r = 0, w = 0;
    for (;;) {
        char *e = memmem(b + r, len - r, "\r\n", 2);
        long n = strtol(b + r, NULL, 16);
        if (!e || n <= 0)
            return;
        size_t d = (size_t)(e - b) + 2;
        memmove(b + w, b + d, (size_t)n);
        w += (size_t)n;
        r = d + (size_t)n + 2;
    }
}

/* ---------------------------------------------------------------- the loop */

static int want_write(void)
{
    double ratio = o.write_frac / (1.0 - o.write_frac);
    return (double)sent_writes < ratio * (double)(done_reads + 1);
}

static void send_now(struct conn *c, int64_t sched)
{
    c->sched_ns = sched;
    c->req_off = 0;
    c->len = c->hdr_len = 0;
    c->st = S_SENDING;
    set_events(c, EPOLLOUT);
}


static int64_t read_interval_ns; /* paced: time between two requests of one reader connection */

/* Start the next request on an idle connection if its time has come. A paced reader whose
 * connection was still busy at its scheduled time charges the request from that time. */
static void maybe_start(struct conn *c, int64_t t)
{
    if (c->st != S_IDLE || t >= t_end || stop_flag)
        return;
    if (c->role == R_READ) {
        int64_t sched = t;
        if (o.rate > 0) {
            if (t < c->next_ns)
                return;
            /* free at its scheduled time: our own timer slop is not the server's latency */
            sched = c->idle_ns > c->next_ns ? c->next_ns : t;
            c->next_ns += read_interval_ns;
        }
        build_get(c);
        send_now(c, sched);
    } else if (c->role == R_WRITE) {
        if (!want_write())
            return;
        sent_writes++;
        build_write(c);
        send_now(c, t);
    } else {
        if (probe_next_k > PROBE_MAX)
            c->next_ns = INT64_MAX; /* probes used up: this connection rests */
        if (t < c->next_ns)
            return;
        c->next_ns = t + (int64_t)o.probe_ms * 1000000;
        build_probe(c);
        send_now(c, t);
    }
}

static void record(struct conn *c, int64_t t, int status)
{
    int64_t lat = (t - c->sched_ns) / 1000;
    uint32_t us = lat < 0 ? 0 : lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
    int rd = c->role == R_READ; /* pages, member lookups, and --body writes */
    if (rd) {
        done_reads++;
        if (timeline)
            fprintf(timeline, "%.3f,%u,%d\n", (double)(c->sched_ns - t0) / 1e6, us, status);
    }
    if (c->sched_ns < t_measure)
        return;
    lat_add(&lats[c->cls], us);
    if (rd)
        lat_add(&all_read, us);
    if (status < 200 || status > 299) {
        non2xx[c->cls]++;
        if (rd)
            non2xx_read++;
    }
    if (status == 0)
        errors++;
}

/* The connection broke: the request in flight (if any) failed; reconnect after 10 ms. */
static void conn_fail(struct conn *c, int64_t t)
{
    int busy = c->st == S_SENDING || c->st == S_RECEIVING;
    conn_close(c);
    if (busy)
        record(c, t, 0);
    c->st = S_BACKOFF;
    c->next_ns = t + 10000000;
}

static void on_reply(struct conn *c, int64_t t)
{
    char *body = c->buf + c->hdr_len;
    size_t blen = c->len - c->hdr_len;
    if (c->clen < 0) {
        chunked_decode(body, blen);
        blen = (size_t)chunked_done(body, blen); /* after decoding: the prefix is the body */
    } else {
        blen = (size_t)c->clen;
    }
    bytes_in += c->len;
    total_done++;
    record(c, t, c->status);
    if (c->cls == C_PROBE && c->status >= 200 && c->status < 300) {
        probe_done_ns[c->probe_k] = t;
        probe_last_done = c->probe_k;
        probe_next_k = c->probe_k + 1;
    }
    if (c->sched_ns >= t_measure && c->cls == C_PAGE)
        xcache_n[c->xcache]++;
    check_page(c, body, blen, t);
    if (c->close_after) {
        conn_close(c);
        conn_open(c);
        return;
    }
    c->st = S_IDLE;
    c->idle_ns = t;
    c->len = c->hdr_len = 0;
    set_events(c, EPOLLIN | EPOLLRDHUP);
    maybe_start(c, t);
}

/* Parse what has arrived; returns 1 when the reply is complete. */
static int parse(struct conn *c)
{
    if (!c->hdr_len) {
        char *e = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (!e)
            return 0;
        c->hdr_len = (size_t)(e - c->buf) + 4;
        c->status = (int)strtol(c->buf + 9, NULL, 10);
        c->clen = header_value_long(c->buf, c->hdr_len, "Content-Length", 0);
        const char *te = header_value(c->buf, c->hdr_len, "Transfer-Encoding");
        if (te && strncasecmp(te, "chunked", 7) == 0)
            c->clen = -1;
        const char *cn = header_value(c->buf, c->hdr_len, "Connection");
        c->close_after = cn && strncasecmp(cn, "close", 5) == 0;
        const char *xc = header_value(c->buf, c->hdr_len, "X-Cache");
        c->xcache = !xc ? 0 : strncasecmp(xc, "hit", 3) == 0 ? 1 : strncasecmp(xc, "miss", 4) == 0 ? 2 : 3;
    }
    if (c->clen >= 0)
        return c->len - c->hdr_len >= (size_t)c->clen;
    return chunked_done(c->buf + c->hdr_len, c->len - c->hdr_len) >= 0;
}

static void on_event(struct conn *c, uint32_t ev, int64_t t)
{
    if (c->st == S_CONNECTING) {
        int err = 0;
        socklen_t el = sizeof(err);
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err || (ev & (EPOLLERR | EPOLLHUP))) {
            errors++;
            conn_fail(c, t);
            return;
        }
        c->st = S_IDLE;
        c->idle_ns = t;
        set_events(c, EPOLLIN | EPOLLRDHUP);
        maybe_start(c, t);
        return;
    }
    if (c->st == S_IDLE) { /* the server closed an idle keep-alive connection */
        char tmp[256];
        if (read(c->fd, tmp, sizeof(tmp)) <= 0) {
            conn_close(c);
            conn_open(c);
        }
        return;
    }
    if (c->st == S_SENDING) {
        ssize_t w = write(c->fd, c->req + c->req_off, c->req_len - c->req_off);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (w <= 0) {
            conn_fail(c, t);
            return;
        }
        c->req_off += (size_t)w;
        if (c->req_off == c->req_len) {
            c->st = S_RECEIVING;
            set_events(c, EPOLLIN | EPOLLRDHUP);
        }
        return;
    }
    if (c->st == S_RECEIVING) {
        for (;;) {
            if (c->cap - c->len < 16384) {
                c->cap = c->cap ? c->cap * 2 : 65536;
                c->buf = realloc(c->buf, c->cap);
                if (!c->buf)
                    die("realloc");
            }
            ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                return;
            if (r <= 0) {
                conn_fail(c, t);
                return;
            }
            c->len += (size_t)r;
            if (parse(c)) {
                on_reply(c, t);
                return;
            }
        }
    }
}

/* ---------------------------------------------------------------- report */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(const struct lat *l, double q)
{
    if (!l->n)
        return 0;
    size_t i = (size_t)ceil(q * (double)l->n);
    if (i < 1)
        i = 1;
    return l->v[i - 1];
}

static void print_lat(const char *name, struct lat *l, double secs, uint64_t bad, int last)
{
    qsort(l->v, l->n, sizeof(*l->v), cmp_u32);
    double sum = 0;
    for (size_t i = 0; i < l->n; i++)
        sum += l->v[i];
    printf("\"%s\":{\"n\":%zu,\"rps\":%.1f,\"non2xx\":%" PRIu64 ",\"mean_ms\":%.3f,\"p50_ms\":%.3f,"
           "\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f}%s",
           name, l->n, (double)l->n / secs, bad, l->n ? sum / (double)l->n / 1000 : 0,
           pct(l, 0.5) / 1000, pct(l, 0.99) / 1000, pct(l, 0.999) / 1000,
           l->n ? l->v[l->n - 1] / 1000.0 : 0, last ? "" : ",");
}

static void usage(void)
{
    fprintf(stderr, "usage: loadgen --port P [options]; see the header of bench/loadgen.c\n");
    exit(2);
}

static void on_signal(int s)
{
    (void)s;
    stop_flag = 1;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"host", 1, 0, 'H'},        {"port", 1, 0, 'p'},        {"conns", 1, 0, 'c'},
        {"duration", 1, 0, 'd'},    {"warmup", 1, 0, 'w'},      {"rate", 1, 0, 'r'},
        {"url", 1, 0, 'u'},         {"pages", 1, 0, 'P'},       {"hot-pages", 1, 0, 'h'},
        {"hot-frac", 1, 0, 'f'},    {"member-url", 1, 0, 'm'},  {"members", 1, 0, 'M'},
        {"member-frac", 1, 0, 'F'}, {"write-port", 1, 0, 'W'},  {"write-path", 1, 0, 'x'},
        {"token", 1, 0, 't'},       {"write-frac", 1, 0, 'X'},  {"write-conns", 1, 0, 'C'},
        {"id-prefix", 1, 0, 'i'},   {"probe-ms", 1, 0, 'b'},    {"probe-id", 1, 0, 'B'},
        {"probe-base", 1, 0, 'j'},  {"check-port", 1, 0, 'k'},  {"check-key", 1, 0, 'K'},
        {"check-frac", 1, 0, 'q'},  {"page-size", 1, 0, 's'},   {"timeline", 1, 0, 'T'},
        {"label", 1, 0, 'l'},       {"seed", 1, 0, 'S'},        {"drain", 1, 0, 'D'},
        {"body", 1, 0, 'y'},        {"ports", 1, 0, 'o'},       {"boards", 1, 0, 'n'},
        {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'H': o.host = optarg; break;
        case 'p': o.port = atoi(optarg); break;
        case 'c': o.conns = atoi(optarg); break;
        case 'd': o.duration = atof(optarg); break;
        case 'w': o.warmup = atof(optarg); break;
        case 'r': o.rate = atof(optarg); break;
        case 'u': o.url = optarg; break;
        case 'P': o.pages = atoll(optarg); break;
        case 'h': o.hot_pages = atoi(optarg); break;
        case 'f': o.hot_frac = atof(optarg); break;
        case 'm': o.member_url = optarg; break;
        case 'M': o.members = atoll(optarg); break;
        case 'F': o.member_frac = atof(optarg); break;
        case 'W': o.write_port = atoi(optarg); break;
        case 'x': o.write_path = optarg; break;
        case 't': o.token = optarg; break;
        case 'X': o.write_frac = atof(optarg); break;
        case 'C': o.write_conns = atoi(optarg); break;
        case 'i': o.idpfx = optarg; break;
        case 'b': o.probe_ms = atoi(optarg); break;
        case 'B': o.probe_id = optarg; break;
        case 'j': o.probe_base = atoll(optarg); break;
        case 'k': o.check_port = atoi(optarg); break;
        case 'K': o.check_key = optarg; break;
        case 'q': o.check_frac = atof(optarg); break;
        case 's': o.page_size = atoi(optarg); break;
        case 'T': o.timeline = optarg; break;
        case 'l': o.label = optarg; break;
        case 'S': o.seed = strtoull(optarg, NULL, 10); break;
        case 'D': o.drain = atof(optarg); break;
        case 'y': o.body = optarg; break;
        case 'n':
            if (strspn(optarg, "0123456789") == strlen(optarg)) {
                o.boards = atoll(optarg);
                break;
            }
            for (char *t = strtok(optarg, ","); t && o.nboard_names < 64; t = strtok(NULL, ","))
                o.board_names[o.nboard_names++] = t;
            break;
        case 'o':
            for (char *t = strtok(optarg, ","); t && o.nports < 16; t = strtok(NULL, ","))
                o.ports[o.nports++] = atoi(t);
            o.port = o.nports ? o.ports[0] : 0;
            break;
        default: usage();
        }
    }
    int writers = o.write_frac > 0 ? (o.write_conns > 0 ? o.write_conns : 4) : 0;
    int probe = o.write_frac > 0 && o.probe_ms > 0;
    if (o.port <= 0 || o.conns < 1 || o.pages < 1 || o.members < 1 || o.boards < 1 ||
        o.duration <= 0 ||
        o.write_frac >= 1 || (writers && (!o.write_port || !o.write_path)) ||
        o.conns + writers + probe > MAX_CONNS || (o.check_port && !o.check_key))
        usage();
    rng = o.seed * 2654435761u + 88172645463325252ull;
    if (!o.probe_base) /* above every generated score, and above any earlier run's probes */
        o.probe_base = 3000000000LL + (int64_t)(time(NULL) % 1000000) * 1000;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (o.timeline && !(timeline = fopen(o.timeline, "w")))
        die("timeline");
    if (o.check_port)
        check_fd = redis_connect();
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");

    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    t0 = now_ns();
    int64_t wall0_ms = (int64_t)rt.tv_sec * 1000 + rt.tv_nsec / 1000000;
    t_measure = t0 + (int64_t)(o.warmup * 1e9);
    t_end = t_measure + (int64_t)(o.duration * 1e9);
    if (o.rate > 0)
        read_interval_ns = (int64_t)(1e9 * o.conns / o.rate);
    nconns = o.conns + writers + probe;
    for (int i = 0; i < nconns; i++) {
        struct conn *c = &conns[i];
        c->role = i < o.conns ? R_READ : i < o.conns + writers ? R_WRITE : R_PROBE;
        c->next_ns = t0 + (o.rate > 0 && c->role == R_READ ? read_interval_ns * i / o.conns : 0);
        conn_open(c);
    }

    struct epoll_event evs[256];
    for (;;) {
        int64_t t = now_ns();
        int inflight = 0, waiting = 0;
        int64_t due = t + 50000000; /* next paced send or reconnect */
        for (int i = 0; i < nconns; i++) {
            struct conn *c = &conns[i];
            if (c->st == S_BACKOFF && t >= c->next_ns && t < t_end)
                conn_open(c);
            else if (c->st == S_IDLE)
                maybe_start(c, t);
            if (c->st == S_SENDING || c->st == S_RECEIVING)
                inflight++;
            else if (c->st == S_BACKOFF || (c->st == S_IDLE && c->role == R_PROBE) ||
                     (c->st == S_IDLE && c->role == R_READ && o.rate > 0))
                due = c->next_ns < due ? c->next_ns : due;
            else if (c->st == S_IDLE)
                waiting++; /* a writer waiting for its share: re-check every 0.2 ms */
        }
        if (t >= t_end || stop_flag) {
            if (!inflight || t >= t_end + (int64_t)(o.drain * 1e9) || stop_flag > 1)
                break;
        }
        if (waiting && t < t_end && due > t + 200000)
            due = t + 200000;
        if (t >= t_end || due < t)
            due = t + (t >= t_end ? 50000000 : 0);
        struct timespec to = {(due - t) / 1000000000, (due - t) % 1000000000};
        int n = epoll_pwait2(epfd, evs, 256, &to, NULL);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        t = now_ns();
        for (int i = 0; i < n; i++)
            on_event(evs[i].data.ptr, evs[i].events, t);
        if (stop_flag == 1 && t < t_end)
            t_end = t; /* Ctrl-C: stop sending, drain briefly */
    }
    int64_t tfin = now_ns();
    for (int i = 0; i < nconns; i++) {
        struct conn *c = &conns[i];
        if ((c->st == S_SENDING || c->st == S_RECEIVING) && c->sched_ns >= t_measure) {
            timeouts++;
            record(c, tfin, 0);
        }
    }
    if (timeline)
        fclose(timeline);

    double secs = (double)(t_end - t_measure) / 1e9;
    if (secs <= 0)
        secs = 1e-9;
    printf("{\"label\":\"%s\",\"start_wall_ms\":%" PRId64 ",\"warmup_s\":%.3f,\"duration_s\":%.3f,"
           "\"conns\":%d,\"rate\":%.1f,\"errors\":%" PRIu64 ",\"timeouts\":%" PRIu64
           ",\"bytes_in\":%" PRIu64 ",\"total_requests\":%" PRIu64 ",\"wall_s\":%.3f,",
           o.label ? o.label : "", wall0_ms, o.warmup, secs, o.conns, o.rate, errors, timeouts,
           bytes_in, total_done, (double)(tfin - t0) / 1e9);
    printf("\"xcache\":{\"none\":%" PRIu64 ",\"hit\":%" PRIu64 ",\"miss\":%" PRIu64
           ",\"stale\":%" PRIu64 "},",
           xcache_n[0], xcache_n[1], xcache_n[2], xcache_n[3]);
    if (o.write_frac > 0) {
        qsort(probe_lag.v, probe_lag.n, sizeof(*probe_lag.v), cmp_u32);
        printf("\"staleness\":{\"checked\":%" PRIu64 ",\"wrong\":%" PRIu64
               ",\"wrong_share\":%.4f,\"page1_served\":%zu,\"page1_lag_p50_ms\":%.0f,"
               "\"page1_lag_p99_ms\":%.0f,\"page1_lag_max_ms\":%.0f,\"probes\":%" PRId64 "},",
               checked, wrong, checked ? (double)wrong / (double)checked : 0, probe_lag.n,
               pct(&probe_lag, 0.5), pct(&probe_lag, 0.99),
               probe_lag.n ? (double)probe_lag.v[probe_lag.n - 1] : 0, probe_last_done);
    }
    print_lat("all", &all_read, secs, non2xx_read, 0);
    printf("\"by_class\":{");
    int first = 1;
    for (int k = 0; k < NCLS; k++) {
        if (!lats[k].n)
            continue;
        if (!first)
            printf(",");
        first = 0;
        print_lat(cls_name[k], &lats[k], secs, non2xx[k], 1);
    }
    printf("}}\n");
    return 0;
}
