/* cluster.c -- a real Redis Cluster for the tests, and routed admin connections; see cluster.h. */
#include "cluster.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "crc16.h"
#include "fixture.h"

#define SCRIPT "scripts/cluster-fixture.sh"
#define REDIRECTS_MAX 8 /* MOVED/ASK followed per admin command */

static const struct cluster_proc *g_cluster;

/* Run the fixture script with `verb` on c's directory (and `arg`, or NULL); its exit status. */
static int run_script(const struct cluster_proc *c, const char *verb, const char *arg)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execl(SCRIPT, SCRIPT, verb, c->dir, arg, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int cluster_proc_start(struct cluster_proc *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "/tmp/rankd-cluster-XXXXXX");
    if (!mkdtemp(c->dir))
        return -1;
    if (access(SCRIPT, X_OK) != 0) {
        fprintf(stderr, "%s not found: run the tests from the source tree's root\n", SCRIPT);
        return -1;
    }
    if (run_script(c, "start", NULL) != 0) {
        fprintf(stderr, "could not start a Redis Cluster in %s\n", c->dir);
        run_script(c, "stop", NULL);
        return -1;
    }
    char path[200];
    snprintf(path, sizeof(path), "%s/ports", c->dir);
    FILE *fp = fopen(path, "r");
    snprintf(path, sizeof(path), "%s/pids", c->dir);
    FILE *fi = fopen(path, "r");
    int ok = fp && fi;
    for (int i = 0; ok && i < CLUSTER_PROC_NODES; i++) {
        int pid = 0;
        ok = fscanf(fp, "%d", &c->ports[i]) == 1 && fscanf(fi, "%d", &pid) == 1;
        c->pids[i] = pid;
    }
    if (fp)
        fclose(fp);
    if (fi)
        fclose(fi);
    if (!ok) {
        fprintf(stderr, "%s/ports or pids is not what %s writes\n", c->dir, SCRIPT);
        cluster_proc_stop(c);
        return -1;
    }
    return 0;
}

void cluster_proc_stop(struct cluster_proc *c)
{
    if (!c->dir[0])
        return;
    run_script(c, "stop", NULL);
    memset(c->pids, 0, sizeof(c->pids));
}

int cluster_proc_wait(const struct cluster_proc *c, int seconds)
{
    char s[16];
    snprintf(s, sizeof(s), "%d", seconds);
    return run_script(c, "wait", s) == 0 ? 0 : -1;
}

pid_t cluster_proc_pid(const struct cluster_proc *c, int i)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/%d/redis.pid", c->dir, c->ports[i]);
    FILE *f = fopen(path, "r");
    int pid = 0;
    int ok = f && fscanf(f, "%d", &pid) == 1 && pid > 0;
    if (f)
        fclose(f);
    return ok ? (pid_t)pid : c->pids[i];
}

int cluster_proc_restart(struct cluster_proc *c, int port)
{
    char p[16];
    snprintf(p, sizeof(p), "%d", port);
    if (run_script(c, "restart", p) != 0)
        return -1;
    char path[200];
    snprintf(path, sizeof(path), "%s/%d/redis.pid", c->dir, port);
    FILE *f = fopen(path, "r");
    int pid = 0;
    int ok = f && fscanf(f, "%d", &pid) == 1;
    if (f)
        fclose(f);
    for (int i = 0; ok && i < CLUSTER_PROC_NODES; i++)
        if (c->ports[i] == port)
            c->pids[i] = pid;
    return ok ? 0 : -1;
}

void cluster_proc_url(const struct cluster_proc *c, char *out, size_t len)
{
    snprintf(out, len, "redis-cluster://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", c->ports[0],
             c->ports[1], c->ports[2]);
}

void fixture_use_cluster(const struct cluster_proc *c)
{
    g_cluster = c;
}

const struct cluster_proc *fixture_cluster(void)
{
    return g_cluster;
}

/* ---------------------------------------------------------------- routed admin commands */

/* The test process's connections to the nodes, by port (a test process is one of Check's forks:
 * they go with it), and the slot map last read. */
static struct {
    int port;
    redisContext *c;
} g_nodes[32];
static int g_slot_port[CRC16_SLOTS];

static int in_cluster(int port)
{
    for (int i = 0; g_cluster && i < CLUSTER_PROC_NODES; i++)
        if (g_cluster->ports[i] == port)
            return 1;
    return 0;
}

static redisContext *node(int port)
{
    size_t i = 0;
    for (; i < sizeof(g_nodes) / sizeof(g_nodes[0]) && g_nodes[i].c; i++)
        if (g_nodes[i].port == port) {
            if (!g_nodes[i].c->err)
                return g_nodes[i].c;
            redisFree(g_nodes[i].c); /* a node restarted, or killed by the test */
            break;
        }
    ck_assert_msg(i < sizeof(g_nodes) / sizeof(g_nodes[0]), "too many cluster nodes");
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    ck_assert_msg(c && !c->err, "admin connection to cluster node %d failed", port);
    redis_admin_patient(c);
    g_nodes[i].port = port;
    g_nodes[i].c = c;
    return c;
}

/* Read the slot map with CLUSTER SLOTS from any node that answers. */
static void refresh_map(void)
{
    memset(g_slot_port, 0, sizeof(g_slot_port));
    for (int i = 0; i < CLUSTER_PROC_NODES; i++) {
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", g_cluster->ports[i], tv);
        redisReply *r = c && !c->err ? redisCommand(c, "CLUSTER SLOTS") : NULL;
        int ok = r && r->type == REDIS_REPLY_ARRAY;
        for (size_t k = 0; ok && k < r->elements; k++) {
            redisReply *e = r->element[k];
            if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
                continue;
            for (long long s = e->element[0]->integer; s <= e->element[1]->integer; s++)
                g_slot_port[s] = (int)e->element[2]->element[1]->integer;
        }
        freeReplyObject(r);
        redisFree(c);
        if (ok)
            return;
    }
    ck_abort_msg("no cluster node answers CLUSTER SLOTS");
}

/* The i-th argument of a formatted command (RESP "*N\r\n$L\r\n<bytes>\r\n..."): its bytes and
 * length, or NULL past the last. */
static const char *cmd_arg(const char *cmd, int i, size_t *len)
{
    const char *p = strchr(cmd, '\n');
    int n = atoi(cmd + 1);
    if (i >= n)
        return NULL;
    for (int k = 0;; k++) {
        size_t l = (size_t)atol(p + 2);
        p = strchr(p + 1, '\n') + 1;
        if (k == i) {
            *len = l;
            return p;
        }
        p += l + 1; /* the bytes and "\r", then "\n" of the next header */
    }
}

static int cmd_is(const char *cmd, const char *name)
{
    size_t len = 0;
    const char *a = cmd_arg(cmd, 0, &len);
    return a && len == strlen(name) && strncasecmp(a, name, len) == 0;
}

/* Send one formatted command on c and read its reply, or NULL when the connection failed. */
static redisReply *try_formatted(redisContext *c, const char *cmd, size_t len)
{
    void *r = NULL;
    if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK || redisGetReply(c, &r) != REDIS_OK)
        return NULL;
    return r;
}

/* The same, asserting a reply. */
static redisReply *send_formatted(redisContext *c, const char *cmd, size_t len)
{
    redisReply *r = try_formatted(c, cmd, len);
    ck_assert_msg(r != NULL, "admin command failed: %s", c->errstr);
    return r;
}

/* To every master (all 0) or every node (all 1): the last reply, or for DBSIZE the sum. */
static redisReply *broadcast(const char *cmd, size_t len, int all)
{
    refresh_map();
    int done[CLUSTER_PROC_NODES] = {0};
    redisReply *last = NULL;
    long long sum = 0;
    for (int s = 0; s < CRC16_SLOTS; s++)
        for (int i = 0; i < CLUSTER_PROC_NODES; i++)
            if (!done[i] && (all ? s == 0 : g_cluster->ports[i] == g_slot_port[s])) {
                done[i] = 1;
                if (all && kill(g_cluster->pids[i], 0) != 0)
                    continue; /* a node the test stopped */
                freeReplyObject(last);
                last = send_formatted(node(g_cluster->ports[i]), cmd, len);
                sum += last->type == REDIS_REPLY_INTEGER ? last->integer : 0;
            }
    if (last && last->type == REDIS_REPLY_INTEGER)
        last->integer = sum;
    return last;
}

static redisReply *routed(redisContext *c, const char *cmd, size_t len)
{
    static const char *const masters[] = {"FLUSHALL", "FLUSHDB", "SCRIPT", "DBSIZE"};
    static const char *const every[] = {"CONFIG", "ACL"};
    static const char *const keyless[] = {"INFO",    "PING",    "ECHO",    "CLIENT",  "MONITOR",
                                          "SLOWLOG", "LATENCY", "DEBUG",   "CLUSTER", "WAIT",
                                          "TIME",    "COMMAND", "FUNCTION"};
    for (size_t i = 0; i < sizeof(masters) / sizeof(masters[0]); i++)
        if (cmd_is(cmd, masters[i]))
            return broadcast(cmd, len, 0);
    for (size_t i = 0; i < sizeof(every) / sizeof(every[0]); i++)
        if (cmd_is(cmd, every[i]))
            return broadcast(cmd, len, 1);
    for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++)
        if (cmd_is(cmd, keyless[i]))
            return send_formatted(c, cmd, len);
    size_t klen = 0;
    int eval = cmd_is(cmd, "EVAL") || cmd_is(cmd, "EVALSHA");
    const char *key = cmd_arg(cmd, eval ? 3 : 1, &klen);
    if (cmd_is(cmd, "SCAN")) { /* SCAN c MATCH pattern: the node of the pattern's hash tag */
        const char *a = cmd_arg(cmd, 2, &klen);
        key = a && klen == 5 && strncasecmp(a, "MATCH", 5) == 0 ? cmd_arg(cmd, 3, &klen) : NULL;
        if (!key || !memchr(key, '{', klen))
            return send_formatted(c, cmd, len);
    }
    if (!key)
        return send_formatted(c, cmd, len);
    int slot = crc16_key_slot(key, klen);
    if (!g_slot_port[slot])
        refresh_map();
    int port = g_slot_port[slot], asking = 0;
    for (int hop = 0; hop < REDIRECTS_MAX; hop++) {
        redisContext *n = node(port);
        if (asking)
            freeReplyObject(send_formatted(n, "*1\r\n$6\r\nASKING\r\n", 16));
        redisReply *r = try_formatted(n, cmd, len);
        if (!r) { /* a node the test killed (a failover): its slots are someone else's now */
            refresh_map();
            port = g_slot_port[slot];
            asking = 0;
            usleep(100000);
            continue;
        }
        int moved = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "MOVED ", 6) == 0;
        asking = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ASK ", 4) == 0;
        if (!moved && !asking)
            return r;
        port = atoi(strrchr(r->str, ':') + 1);
        freeReplyObject(r);
        if (moved)
            refresh_map();
    }
    ck_abort_msg("admin command redirected %d times", REDIRECTS_MAX);
    return NULL;
}

redisReply *cluster_admin_vcmd(redisContext *c, const char *fmt, va_list ap)
{
    if (!g_cluster || c->connection_type != REDIS_CONN_TCP || !in_cluster(c->tcp.port))
        return NULL;
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap);
    ck_assert_msg(len > 0, "admin command: cannot format %s", fmt);
    redisReply *r = routed(c, cmd, (size_t)len);
    redisFreeCommand(cmd);
    return r;
}

long long redis_info_field(redisContext *c, const char *section, const char *field)
{
    int in = g_cluster && c->connection_type == REDIS_CONN_TCP && in_cluster(c->tcp.port);
    if (in)
        refresh_map();
    long long sum = -1;
    for (int i = 0; i < (in ? CLUSTER_PROC_NODES : 1); i++) {
        int master = 0;
        for (int s = 0; in && s < CRC16_SLOTS && !master; s++)
            master = g_slot_port[s] == g_cluster->ports[i];
        if (in && !master)
            continue;
        redisContext *n = in ? node(g_cluster->ports[i]) : c;
        redisReply *r = redisCommand(n, "INFO %s", section);
        ck_assert_msg(r && r->type == REDIS_REPLY_STRING, "INFO %s failed", section);
        char pat[96];
        snprintf(pat, sizeof(pat), "\n%s", field);
        const char *p = strstr(r->str, pat);
        if (p)
            sum = (sum < 0 ? 0 : sum) + strtoll(p + strlen(pat), NULL, 10);
        freeReplyObject(r);
    }
    return sum;
}

redisContext *redis_admin_for_key(redisContext *admin, const char *key)
{
    if (!g_cluster || !in_cluster(admin->tcp.port))
        return admin;
    int slot = crc16_key_slot(key, strlen(key));
    refresh_map();
    return node(g_slot_port[slot]);
}
