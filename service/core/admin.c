/* admin.c -- the Redis report of GET /admin/redis; see admin.h. */
#include "admin.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "request.h"
#include "util.h"

/* lua/write_probe.lua (the Makefile's build/gen/lua/write_probe.lua.h), registered once. */
static const char *const write_probe_body =
#include "lua/write_probe.lua.h"
    ;
static const struct store_script *write_probe;
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void scripts_init(void)
{
    write_probe = store_script_register(write_probe_body);
}

void admin_scripts_register(void)
{
    pthread_once(&scripts_once, scripts_init);
}

/* INFO fields reported, by section. */
static const char *const info_fields[] = {
    "redis_version",
    "uptime_in_seconds",
    "connected_clients",
    "used_memory",
    "used_memory_peak",
    "maxmemory",
    "maxmemory_policy",
    "mem_fragmentation_ratio",
    "lazyfree_pending_objects",
    "lazyfreed_objects",
    "evicted_keys",
    "expired_keys",
    "keyspace_hits",
    "keyspace_misses",
    "total_commands_processed",
    "instantaneous_ops_per_sec",
    "latest_fork_usec",
    "rdb_bgsave_in_progress",
    "aof_enabled",
    "aof_rewrite_in_progress",
    "aof_last_write_status",
};

/* Copy the value of "name:value\r\n" from an INFO text into cJSON (number when it is one). */
static void add_info(cJSON *obj, const char *info, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = info; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, name, n) != 0 || p[n] != ':')
            continue;
        const char *v = p + n + 1;
        size_t len = strcspn(v, "\r\n");
        char buf[128];
        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, v, len);
        buf[len] = '\0';
        char *end = NULL;
        double d = strtod(buf, &end);
        if (len && end && *end == '\0')
            cJSON_AddNumberToObject(obj, name, d);
        else
            cJSON_AddStringToObject(obj, name, buf);
        return;
    }
}

/* A Redis string as JSON text: the slow log cuts arguments at 128 bytes, which can split a UTF-8
 * character, and arguments may hold any bytes: NULs and invalid sequences become '?'. */
static cJSON *text_json(const char *s, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return NULL;
    for (size_t i = 0; i < len; i++)
        copy[i] = s[i] ? s[i] : '?';
    copy[len] = '\0';
    request_utf8_sanitize(copy);
    cJSON *j = cJSON_CreateString(copy);
    free(copy);
    return j;
}

/* A reply tree as JSON: arrays, integers, strings. */
static cJSON *reply_json(const struct store_reply *r)
{
    switch (r->type) {
    case STORE_REPLY_INTEGER:
        return cJSON_CreateNumber((double)r->integer);
    case STORE_REPLY_STRING:
    case STORE_REPLY_STATUS:
        return text_json(r->str, r->len);
    case STORE_REPLY_ARRAY: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; a && i < r->elements; i++)
            cJSON_AddItemToArray(a, reply_json(r->element[i]));
        return a;
    }
    default:
        return cJSON_CreateNull();
    }
}

/* What a reply says, or an entry in "unavailable" when Redis refused the command. */
static int usable(const struct store_reply *r, int type, cJSON *unavailable, const char *what)
{
    if (r->type == type)
        return 1;
    cJSON_AddStringToObject(unavailable, what,
                            r->type == STORE_REPLY_ERROR ? r->str : "unexpected reply type");
    return 0;
}

static void report(cJSON *doc, struct store_reply **r)
{
    cJSON *unavailable = cJSON_CreateObject();
    cJSON *server = cJSON_AddObjectToObject(doc, "server");
    if (usable(r[0], STORE_REPLY_STRING, unavailable, "info"))
        for (size_t i = 0; i < sizeof(info_fields) / sizeof(info_fields[0]); i++)
            add_info(server, r[0]->str, info_fields[i]);
    if (usable(r[4], STORE_REPLY_INTEGER, unavailable, "keys"))
        cJSON_AddNumberToObject(doc, "keys", (double)r[4]->integer);
    if (usable(r[2], STORE_REPLY_INTEGER, unavailable, "slowlog_length"))
        cJSON_AddNumberToObject(doc, "slowlog_length", (double)r[2]->integer);
    if (usable(r[1], STORE_REPLY_ARRAY, unavailable, "slowlog"))
        cJSON_AddItemToObject(doc, "slowlog", reply_json(r[1]));
    if (usable(r[3], STORE_REPLY_ARRAY, unavailable, "latency_latest"))
        cJSON_AddItemToObject(doc, "latency_latest", reply_json(r[3]));
    if (cJSON_GetArraySize(unavailable) > 0)
        cJSON_AddItemToObject(doc, "unavailable", unavailable);
    else
        cJSON_Delete(unavailable);
}

static const char *const info_cmd[] = {"INFO",   "server",      "clients",
                                       "memory", "persistence", "stats"};
static const char *const slow_cmd[] = {"SLOWLOG", "GET", "10"},
                         *const slen_cmd[] = {"SLOWLOG", "LEN"},
                         *const lat_cmd[] = {"LATENCY", "LATEST"}, *const size_cmd[] = {"DBSIZE"};
static const char *const *const report_argv[] = {info_cmd, slow_cmd, slen_cmd, lat_cmd, size_cmd};
static const int report_argc[] = {6, 3, 2, 2, 1};

/* The report from the five replies (not freed): a new string, or NULL (ENOMEM). */
static char *report_json(struct store_reply **r)
{
    cJSON *doc = cJSON_CreateObject();
    if (doc)
        report(doc, r);
    char *json = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    return json;
}

enum admin_kind { ADMIN_REPORT = 0, ADMIN_PING, ADMIN_PROBE };

static int admin_send(struct admin_job *j);

static void admin_reply(void *arg, int rc, struct store_reply **replies)
{
    struct admin_job *j = arg;
    if (j->kind != ADMIN_PROBE && (rc == -ECONNRESET || rc == -EIO) && !j->resent &&
        (!j->deadline_ms || util_now_ms() < j->deadline_ms)) {
        j->resent = 1; /* a read: once more, on the connection dialled again */
        if ((rc = admin_send(j)) == 0)
            return;
    }
    if (rc == 0 && j->kind == ADMIN_PING) {
        rc = replies[0]->type == STORE_REPLY_ERROR ? -EIO : 0; /* LOADING, say: not ready */
    } else if (rc == 0 && j->kind == ADMIN_PROBE) {
        /* refused before it ran (OOM at maxmemory, READONLY on a replica), or accepted */
        rc = store_reply_errno(replies[0]);
        store_note_write(rc);
    } else if (rc == 0 && !(j->json = report_json(replies))) {
        rc = -ENOMEM;
    }
    j->done(j, rc == -ECONNRESET || rc == -ECANCELED ? -EIO : rc); /* may free j */
}

static int admin_send(struct admin_job *j)
{
    static const char *const ping[] = {"PING"};
    static const char *const *const ping_argv[] = {ping};
    static const int ping_argc[] = {1};
    int rc;
    if (j->kind == ADMIN_PROBE) {
        /* its own short deadline: a write pause (a failover) holds it, and readiness must be
         * answered within a load balancer's timeout (often 1 s) all the same */
        int64_t deadline = util_now_ms() + ADMIN_PROBE_TIMEOUT_MS;
        if (j->deadline_ms && j->deadline_ms < deadline)
            deadline = j->deadline_ms;
        admin_scripts_register();
        rc = store_async_script(j->conn, write_probe, 0, 0, NULL, NULL, deadline, admin_reply, j);
    } else if (j->kind == ADMIN_PING) {
        rc = store_async_send(j->conn, 1, ping_argc, ping_argv, NULL, j->deadline_ms, admin_reply,
                              j);
    } else {
        rc = store_async_send(j->conn, 5, report_argc, report_argv, NULL, j->deadline_ms,
                              admin_reply, j);
    }
    return rc < 0 ? rc : 0;
}

static int admin_submit(struct store_async *conn, struct admin_job *job, int kind)
{
    job->conn = conn;
    job->kind = kind;
    job->resent = 0;
    job->json = NULL;
    return conn ? admin_send(job) : -ECONNREFUSED;
}

int admin_redis_submit(struct store_async *conn, struct admin_job *job)
{
    return admin_submit(conn, job, ADMIN_REPORT);
}

int admin_ping_submit(struct store_async *conn, struct admin_job *job)
{
    return admin_submit(conn, job, ADMIN_PING);
}

int admin_write_probe_submit(struct store_async *conn, struct admin_job *job)
{
    return admin_submit(conn, job, ADMIN_PROBE);
}
