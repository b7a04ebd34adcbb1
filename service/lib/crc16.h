/*
 * crc16.h -- the CRC16 of Redis Cluster and the hash slot of a key (pure; no Redis, no state).
 *
 * Source: the Redis Cluster specification (redis.io/docs/reference/cluster-spec), section "Keys
 * distribution model": HASH_SLOT = CRC16(key) mod 16384, where CRC16 is the XMODEM variant
 * (width 16, polynomial 0x1021, initial value 0, input and output not reflected, no final XOR;
 * "123456789" gives 0x31C3), and section "Hash tags": when the key holds a '{' and, after it, a
 * '}' with at least one byte between them, only the bytes between the first '{' and the first
 * '}' after it are hashed; otherwise (no '{', no '}' after it, or "{}") the whole key is.
 * So "{user1000}.following" and "{user1000}.followers" share a slot, "foo{}{bar}" hashes the
 * whole key and "foo{{bar}}zap" hashes "{bar".
 *
 * rankd names every key of a board with the board in a hash tag ("P:{board}:z", schema/
 * redis-keys.md), so all of a board's keys are in one slot and its scripts can run in a cluster.
 *
 * Thread-safe (a constant table).
 */
#ifndef RANKD_CRC16_H
#define RANKD_CRC16_H

#include <stddef.h>
#include <stdint.h>

#define CRC16_SLOTS 16384 /**< hash slots of a Redis Cluster (the specification's constant) */

/** CRC16/XMODEM of buf[0..len). */
uint16_t crc16(const char *buf, size_t len);

/** The hash slot of key[0..len) (0..CRC16_SLOTS-1), hash tags applied as above. */
int crc16_key_slot(const char *key, size_t len);

#endif
