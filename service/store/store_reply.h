/*
 * store_reply.h -- rankd's own Redis reply: what the store modules hand the rest of rankd.
 *
 * The replies are built by hiredis's reader itself, through its reply-object functions
 * (store_internal.h), so nothing is converted or copied after parsing. A top-level reply is one
 * allocation for a scalar (the struct and the string's bytes together) and a few for an array:
 * the root carries an arena from which every nested element, element array and string is cut
 * (hiredis's own objects cost two mallocs a string and one an array; a page script's reply
 * holds ~70 strings). So an element is never freed, taken or kept apart from its root: free the
 * root with store_reply_free, and nothing that points into it may outlive that.
 *
 * RESP2 only: the types below are all a RESP2 Redis sends. Strings are binary-safe: `len` bytes,
 * followed by a NUL that is not counted (so text replies can be used as C strings).
 *
 * Read-only for its users; the store and the continuation of a script (store_async.h) may build
 * into one (below).
 *
 * Ownership: a reply handed to a store_async callback is the connection's, freed after the call,
 * unless the callback takes it (store_async.h); a taken reply is freed once, from its root, with
 * store_reply_free. Replies are plain memory: read them on any thread, never change them (a
 * shared group's reply is read by every caller).
 */
#ifndef RANKD_STORE_REPLY_H
#define RANKD_STORE_REPLY_H

#include <stddef.h>

/** Reply types (the values are RESP2's own, as hiredis numbers them). */
enum store_reply_type {
    STORE_REPLY_STRING = 1,  /**< bulk string: str, len */
    STORE_REPLY_ARRAY = 2,   /**< multi-bulk: element[0..elements) */
    STORE_REPLY_INTEGER = 3, /**< integer */
    STORE_REPLY_NIL = 4,     /**< nil bulk string or nil array: no value */
    STORE_REPLY_STATUS = 5,  /**< "+OK" and the like: str, len */
    STORE_REPLY_ERROR = 6,   /**< "-ERR ...": str, len (the text after the '-') */
};

/** One reply or one element of an array reply. Read-only for its users: the store owns it. */
struct store_reply {
    int type;                     /**< enum store_reply_type */
    long long integer;            /**< STORE_REPLY_INTEGER; 0 otherwise */
    const char *str;              /**< STRING, STATUS, ERROR: len bytes and a NUL; else NULL */
    size_t len;                   /**< bytes of str, without the NUL */
    size_t elements;              /**< STORE_REPLY_ARRAY: entries of element; else 0 */
    struct store_reply **element; /**< STORE_REPLY_ARRAY: never NULL entries; else NULL */
};

/** Free a top-level reply and everything in it (never an element alone). NULL is a no-op. */
void store_reply_free(struct store_reply *r);

/*
 * Building a reply from others: what the store does on a Redis Cluster when one answer comes
 * from several nodes (a partial ASK, a page's records fetched from other slots: board.c), so its
 * callers still get one reply of the shape they know. `root` is always a top-level array (the
 * only reply with an arena); everything built into it is freed with it.
 */

/** A deep copy of r as a new top-level reply (free with store_reply_free), or NULL (ENOMEM, or
 *  r NULL). */
struct store_reply *store_reply_copy(const struct store_reply *r);

/** A new top-level array of n elements, each a nil reply (free with store_reply_free); NULL on
 *  ENOMEM. */
struct store_reply *store_reply_array_new(size_t n);

/** A new array of n elements, each a nil reply, cut from root's arena (freed with root; put it
 *  into root with store_reply_set); NULL on ENOMEM. */
struct store_reply *store_reply_array_in(struct store_reply *root, size_t n);

/** root owns `other` (a top-level reply, taken even on failure) from now on: freed with root,
 *  so root's elements may point into it. 0 or -ENOMEM (other freed). */
int store_reply_adopt(struct store_reply *root, struct store_reply *other);

/** array->element[i] = elem (an element of array's root or of a reply it adopted); nothing when
 *  i is out of range or elem is NULL. */
void store_reply_set(struct store_reply *array, size_t i, struct store_reply *elem);

/** 0 when r is not an error reply (NULL included), else the errno of its text: -EDQUOT (OOM:
 *  maxmemory reached), -EROFS (READONLY: a replica now, the primary changed), else -EIO
 *  (LOADING, BUSY, a script's error...). The one table from Redis error replies to rankd's
 *  errors (store.h lists them). */
int store_reply_errno(const struct store_reply *r);

/** 1 when r is the error of a script that failed while it ran (a redis.call that failed, a Lua
 *  error: Redis 7 ends the text with "script: <sha>, on @user_script:<line>."): a script stops
 *  where it fails and keeps what it wrote before, so a write that answered this may be applied
 *  in part (never "not written"). 0 for other errors (refused before it ran) and non-errors. */
int store_reply_script_failed(const struct store_reply *r);

#endif
