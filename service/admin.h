/*
 * admin.h -- what an operator checks first on the Redis rankd uses (GET /admin/redis).
 *
 * One report from the server's own counters: the slow log (the ten newest entries), latency
 * events (LATENCY LATEST), the last fork's duration (latest_fork_usec: BGSAVE/AOF rewrites),
 * lazyfree_pending_objects (values the lazy-free thread has yet to free), memory and eviction
 * counters, and the keyspace size. Every command used is O(1) or O(entries shown).
 */
#ifndef RANKD_ADMIN_H
#define RANKD_ADMIN_H

#include "store.h"

/**
 * Build the report as a new JSON string in *json (free()). Returns 0, a store error, or
 * -ENOMEM.
 */
int admin_redis_report(struct store *st, char **json);

#endif
