/*
 * idem.h -- idempotent writes: the Idempotency-Key header's syntax and the digest of a request.
 *
 * A JSON score write that carries `Idempotency-Key` is applied at most once: write.lua stores its
 * results under the key (P:{board}:idem:<key>, board.h) with the digest of the request, in the
 * same script as the write, and answers a later call with the same key and digest from that
 * record. The digest tells a retry (the same request) from a reuse of the key for another one:
 * it is the SHA-256 of the canonical request, the entries as validate.h parsed them (ids, ops,
 * the exact values of score, floor and ceiling, records as re-printed), the shape (one entry, a
 * batch, several boards) and the boards of a multi-board write; so the same request sent with
 * other whitespace, number spellings (2.50 and 25e-1) or key order of the entry is the same
 * request, while any other entry, value, record or board is another.
 *
 * Pure: no I/O, no allocation; thread-safe. Unit tests in test/unit/test_idem.c.
 */
#ifndef RANKD_IDEM_H
#define RANKD_IDEM_H

#include <stddef.h>
#include <stdint.h>

#include "validate.h"

#define IDEM_KEY_LEN_MAX 128 /**< bytes of an Idempotency-Key (board.h: BOARD_IDEM_KEY_MAX) */
#define IDEM_DIGEST_HEX 64   /**< hex characters of a digest, without the NUL */

/** 1 when `key` is 1..IDEM_KEY_LEN_MAX bytes of visible ASCII (0x21..0x7e), else 0. */
int idem_key_valid(const char *key, size_t len);

/** The shape of a write, part of its digest. */
enum idem_shape { IDEM_ENTRY = 0, IDEM_BATCH, IDEM_BOARDS };

/**
 * The digest of a write: `shape`, the boards of a multi-board write (boards[0..nboards), else
 * nboards 0) and entries e[0..n), as lower-case hex into out[IDEM_DIGEST_HEX + 1].
 */
void idem_digest(enum idem_shape shape, const char *const *boards, size_t nboards,
                 const struct entry_in *e, size_t n, char out[IDEM_DIGEST_HEX + 1]);

/** SHA-256 (FIPS 180-4), incrementally: init, update any number of times, final. */
struct idem_sha256 {
    uint32_t h[8];
    uint64_t bytes;      /**< message bytes so far */
    unsigned char b[64]; /**< the block being filled */
    size_t used;         /**< bytes of b in use */
};

void idem_sha256_init(struct idem_sha256 *s);
void idem_sha256_update(struct idem_sha256 *s, const void *data, size_t len);
/** The 32-byte digest into out; s must be initialised again before another use. */
void idem_sha256_final(struct idem_sha256 *s, unsigned char out[32]);

#endif
