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

#include <stdint.h>

#include "store_async.h"

/** A report (admin_redis_submit) or a readiness probe (admin_ping_submit) on an event loop. The
 *  caller fills deadline_ms and done; done(job, rc) is called once, later, on the loop's thread:
 *  rc 0 (a report: job->json, a new string the caller frees; also when some commands were
 *  refused: they are named under "unavailable"), or a negative errno of
 *  store_async.h (a PING that Redis answered with an error: -EIO; LOADING, say). A probe cut by
 *  a lost connection is sent once more while the deadline allows. */
struct admin_job {
    int64_t deadline_ms; /**< monotonic (util_now_ms), 0: the store's timeout */
    void (*done)(struct admin_job *job, int rc);
    void *arg; /**< the caller's */
    char *json;
    /* private */
    struct store_async *conn;
    int kind, resent;
};

#define ADMIN_PROBE_TIMEOUT_MS 250 /**< admin_write_probe_submit's own deadline */

/** The report's five commands as one group on `conn`. 0 (done will be called) or a negative
 *  errno with nothing sent and done not called (store_async_send's). */
int admin_redis_submit(struct store_async *conn, struct admin_job *job);

/** PING on `conn` (GET /readyz). Returns as admin_redis_submit. */
int admin_ping_submit(struct store_async *conn, struct admin_job *job);

/**
 * Would Redis accept a write now (GET /readyz)? One call of lua/write_probe.lua on `conn` (the
 * loop's write connection), which writes nothing but is flagged as a writing script without
 * allow-oom, so Redis judges it exactly as it judges write.lua (after evicting what
 * maxmemory-policy allows): done gets 0 yes, -EDQUOT refused for memory (maxmemory), -EROFS
 * refused as a replica, or another error of store_async.h: -ETIMEDOUT after
 * ADMIN_PROBE_TIMEOUT_MS (or the job's deadline, if sooner): a write pause holds it, and
 * readiness is not held up by it. Noted as store_note_write does. Never sent again. Returns as
 * admin_redis_submit.
 */
int admin_write_probe_submit(struct store_async *conn, struct admin_job *job);

/** Register this module's script (lua/write_probe.lua) with the store (store_script_register),
 *  once per process; call before the stores dial (rankd_start), so that their first dial loads
 *  it. Thread-safe. */
void admin_scripts_register(void);

#endif
