/* admin.c -- the Redis report of GET /admin/redis; see admin.h. */
#include "admin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* A reply tree as JSON: arrays, integers, strings. */
static cJSON *reply_json(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        return cJSON_CreateNumber((double)r->integer);
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
        return cJSON_CreateString(r->str);
    case REDIS_REPLY_ARRAY: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; a && i < r->elements; i++)
            cJSON_AddItemToArray(a, reply_json(r->element[i]));
        return a;
    }
    default:
        return cJSON_CreateNull();
    }
}

int admin_redis_report(struct store *st, char **json)
{
    int err = 0;
    struct store_conn *c = store_acquire(st, &err);
    if (!c)
        return err;
    const char *a_info[] = {"INFO", "everything"};
    const char *a_slow[] = {"SLOWLOG", "GET", "10"};
    const char *a_slen[] = {"SLOWLOG", "LEN"};
    const char *a_lat[] = {"LATENCY", "LATEST"};
    const char *a_size[] = {"DBSIZE"};
    redisReply *info = store_command(c, 2, a_info, NULL, &err);
    redisReply *slow = info ? store_command(c, 3, a_slow, NULL, &err) : NULL;
    redisReply *slen = slow ? store_command(c, 2, a_slen, NULL, &err) : NULL;
    redisReply *lat = slen ? store_command(c, 2, a_lat, NULL, &err) : NULL;
    redisReply *size = lat ? store_command(c, 1, a_size, NULL, &err) : NULL;
    store_release(st, c);
    int rc = size ? 0 : err;
    cJSON *doc = rc || !info || !slow || !slen || !lat ? NULL : cJSON_CreateObject();
    if (doc) {
        cJSON *server = cJSON_AddObjectToObject(doc, "server");
        for (size_t i = 0; i < sizeof(info_fields) / sizeof(info_fields[0]); i++)
            add_info(server, info->str, info_fields[i]);
        cJSON_AddNumberToObject(doc, "keys", (double)size->integer);
        cJSON_AddNumberToObject(doc, "slowlog_length", (double)slen->integer);
        cJSON_AddItemToObject(doc, "slowlog", reply_json(slow));
        cJSON_AddItemToObject(doc, "latency_latest", reply_json(lat));
        *json = cJSON_PrintUnformatted(doc);
        cJSON_Delete(doc);
        rc = *json ? 0 : -ENOMEM;
    } else if (!rc) {
        rc = -ENOMEM;
    }
    freeReplyObject(info);
    freeReplyObject(slow);
    freeReplyObject(slen);
    freeReplyObject(lat);
    freeReplyObject(size);
    return rc;
}
