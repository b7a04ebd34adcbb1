/*
 * store_internal.h -- what the store modules (store.c, store_async.c, store_reply.c) share with
 * each other and with nobody else: the hiredis side of the store. With them (and
 * store_preflight.c, whose probe connection is its own), the only code of rankd that includes
 * hiredis; the rest of rankd sees store.h, store_async.h and store_reply.h (an opaque store and
 * connection, registered scripts, struct store_reply).
 */
#ifndef RANKD_STORE_INTERNAL_H
#define RANKD_STORE_INTERNAL_H

#include <hiredis/hiredis.h>

#include "store.h"
#include "store_reply.h"

/**
 * hiredis 0.14.1's reader builds struct store_reply objects directly with these
 * (ctx->reader->fn = store_reply_functions(), set by store_dial): every reply a context of the
 * store reads, and every reply object its reader frees (a partial reply on a protocol error,
 * redisFree), is a store_reply, freed with store_reply_free (never freeReplyObject). Static;
 * never NULL.
 */
redisReplyObjectFunctions *store_reply_functions(void);

/**
 * A new connection (the event loops' connections, store_async.h): connect timeout, AUTH, SELECT,
 * command timeouts, replies built as store_reply, and on the store's first successful dial
 * SCRIPT LOAD of every registered script (a script registered later: on the next dial); the
 * store's dial back-off applies: inside the back-off window it fails at once. May block up to the
 * connect timeout plus the set-up commands: never call it on an HTTP event thread. Returns the
 * context (the caller owns it and frees it with redisFree) or NULL with *err set (store.h's
 * codes).
 */
redisContext *store_dial(struct store *st, int *err);

/** The SHA1 of a registered script as this store's SCRIPT LOAD returned it: 0 and out (40 hex
 *  digits and a NUL), or -ENOENT before a dial of this store loaded it (send EVAL of the body).
 *  Lock-free; any thread. */
int store_script_sha(const struct store *st, const struct store_script *s,
                     char out[STORE_SHA_LEN + 1]);

/** A registered script's body (static, as registered). */
const char *store_script_body(const struct store_script *s);

#endif
