/*
 * records.h -- where the records live (the JSON per id that every board shares), and on a Redis
 * Cluster their reads and writes around the board scripts.
 *
 * One Redis: one hash, P:items (field = id), read and written by the board scripts themselves in
 * the same call as the scores (schema/redis-keys.md); nothing here runs then but records_key.
 *
 * A Redis Cluster: a script runs on one slot, and a board's keys are all in its board's slot
 * ("P:{board}:..."), while records are shared by every board, so they cannot be in any board's
 * slot, nor all in one (one node would hold and serve every record). They are spread over
 * RECORDS_BUCKETS hashes, P:{items:<b>} with b = CRC16(id) mod RECORDS_BUCKETS (crc16.h), each
 * in the slot of its own hash tag, so the buckets spread over the slots and the masters like any
 * keys, and move with resharding; ':' is in no board name, so no bucket shares a tag with a
 * board. The board scripts are then given the settings hash where the records hash would be (the
 * scripts' convention: KEYS[i] == KEYS[1] or KEYS[2], "elsewhere") and leave records out, and:
 *   - a read script's reply (a page, the entries around a member or a score, a walk's page, the
 *     top percent, many members, a member) is completed by its
 *     continuation (store_async_script_then): one HMGET per bucket that the reply's ids fall in,
 *     all sent in one loop iteration, so one pipeline per node, answered in one round trip; the
 *     records are put into the reply where the script would have, and the caller sees the shape
 *     it knows. A page costs two round trips (the script, then its records), never more. With
 *     --read-from-replicas the HMGETs go where the call says (store_call.flags): to replicas
 *     after a read a replica could answer, to the masters after one on a master or one whose
 *     caller checks a version (a bucket's replica may lag its master independently of the
 *     board's);
 *   - a write's records are written after write.lua applied its entries (records_put: one
 *     variadic HSET per bucket, again one pipeline per node), so an entry the script refused
 *     writes no record; when that step fails, the scores are written and the records perhaps
 *     not: the caller says "outcome unknown" (a retry writes them again: HSET is idempotent).
 *     With --write-replicas every HSET waits for the WAIT of its own node's flush: the write's
 *     2xx needs each node written to confirm its part (-EREMOTEIO when one does not).
 *
 * Thread-safe (no state of its own); the continuations and records_put run on the loop's thread
 * of the connection they are given.
 */
#ifndef RANKD_RECORDS_H
#define RANKD_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "store_async.h"

#define RECORDS_BUCKETS 1024 /**< records hashes on a cluster (fixed: the layout of the data) */

/** The records hash of id[0..len) into out[0..cap): "<prefix>:items" on one Redis,
 *  "<prefix>:{items:<b>}" on a cluster (`clustered`). Cut like snprintf when it does not fit. */
void records_key(const char *prefix, int clustered, const char *id, size_t len, char *out,
                 size_t cap);

/** Continuations (store_async.h) for read scripts on a cluster, by the shape of their reply
 *  (the read scripts' layout, lua/prelude_read.lua: KEYS[3] == KEYS[1] there, so the script's
 *  records are empty and these fill them): page.lua's and page_fill.lua's rows {settings, total,
 *  size, range, records, ranks}, around.lua's and around_score.lua's {settings, total, size,
 *  start, range, records, ranks}, top.lua's {settings, total, size, range, records, ranks,
 *  count}, walk.lua's {settings, total, size, start, range, records, ranks, first0, end0},
 *  lookup.lua's {settings, total, found {id, stored, rank0, rank, ...}, missing, records} and
 *  member.lua's {settings, total, stored, rank0, record, rank} (the id: the call's ARGV[5]); the
 *  key prefix is KEYS[1]'s, before its ":{". A reply of another shape (no board, a retry, a
 *  cached page, a lock held elsewhere, a layout to judge again, an expired cursor, an error) is
 *  passed on as it is. A failed records read fails the call with its code (a read: the caller
 *  may send it again). */
void records_then_page(struct store_async *sa, struct store_reply *reply,
                       const struct store_call *call, store_async_fn fn, void *arg);
void records_then_around(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg);
void records_then_top(struct store_async *sa, struct store_reply *reply,
                      const struct store_call *call, store_async_fn fn, void *arg);
void records_then_walk(struct store_async *sa, struct store_reply *reply,
                       const struct store_call *call, store_async_fn fn, void *arg);
void records_then_lookup(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg);
void records_then_member(struct store_async *sa, struct store_reply *reply,
                         const struct store_call *call, store_async_fn fn, void *arg);

/**
 * On a cluster: the records of ids[0..n) (strings; borrowed for the call), one HMGET per bucket,
 * all in this loop iteration; fn(arg, 0, replies) with replies[0] an array of n (a string or
 * nil each, in the ids' order: what HMGET of P:items answers on one Redis), or fn(arg, rc, NULL)
 * (a read's codes). Returns 0 (fn will be called, perhaps from inside this call) or -ENOMEM.
 */
int records_get(struct store_async *sa, const char *prefix, const struct store_reply *const *ids,
                size_t n, int64_t deadline_ms, store_async_fn fn, void *arg);

/** One record to write: id[0..id_len) -> json[0..json_len) (borrowed for the call). */
struct records_entry {
    const char *id;
    size_t id_len;
    const char *json;
    size_t json_len;
};

/**
 * Write records e[0..n) on a cluster, keys under `prefix`: one HSET per bucket (a later entry of
 * the same id wins, as in write.lua), and, when `registry` is not NULL, SADD of `board` to that
 * registry key in the same iteration (a board the write created). `st` counts the faults. done(arg,
 * rc) once, later, on the loop's thread: 0 when every HSET was answered OK (a failed SADD is
 * counted as a fault and logged, not returned: the scores and records stand, the board is missing
 * from GET /boards until a PUT or DELETE of it), else the first error (-ETIMEDOUT, -ECONNRESET,
 * -EIO, -EBUSY...: the records may or may not be written), or -EREMOTEIO with --write-replicas
 * when all were answered and a node's WAIT did not confirm its part (store_async.h: each
 * command waits on its own node). Returns 0 (done will be called), 1 when
 * there was nothing to send (n == 0, no registry: done is not called), or a negative errno with
 * nothing sent (done not called).
 */
int records_put(struct store_async *sa, struct store *st, const char *prefix,
                const struct records_entry *e, size_t n, const char *registry, const char *board,
                int64_t deadline_ms, void (*done)(void *arg, int rc), void *arg);

#endif
