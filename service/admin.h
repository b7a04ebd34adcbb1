/*
 * admin.h -- what an operator checks first on the Redis rankd uses (GET /admin/redis).
 *
 * One report from the server's own counters: the slow log (the ten newest entries), latency
 * events (LATENCY LATEST), the last fork's duration (latest_fork_usec: BGSAVE/AOF rewrites),
 * lazyfree_pending_objects (values the lazy-free thread has yet to free), memory and eviction
 * counters, and the keyspace size. Every command used is O(1) or O(entries shown), all sent in
 * one pipeline. A command the Redis user may not run (an ACL without SLOWLOG or LATENCY, say)
 * leaves its part out and names it, with Redis's error text, under "unavailable".
 */
#ifndef RANKD_ADMIN_H
#define RANKD_ADMIN_H

#include "store.h"

/**
 * Build the report as a new JSON string in *json (free()). Returns 0 (also when some commands
 * were refused), a store error when Redis cannot be reached or answer, or -ENOMEM.
 */
int admin_redis_report(struct store *st, char **json);

#endif
