/*
 * upload.h -- the state machine of an NDJSON score upload: bytes in, chunks of entries out,
 * outcomes in, counts and the rejected list kept in line order. Pure: no I/O (the caller writes
 * each chunk and reports how it went); unit tests in test/unit/test_upload.c.
 *
 * Lines are split by ndjson.h and parsed as entries (validate.h: validate_entry_fast reads the
 * common line from its text, validate_entry every other one). A line that is not an entry is
 * rejected when read; the others wait, pending, until they make a chunk: UPLOAD_CHUNK_LINES
 * lines or UPLOAD_CHUNK_BYTES of ids and records (one write.lua call, about 2 ms of Redis time),
 * or the end of the upload. The caller then takes the chunk and writes it:
 *
 *   upload_take -> 1 (a chunk is pending)
 *     upload_chunk_take (the pending lines become the chunk's), then per attempt (settings read,
 *       or read again after a change): upload_chunk_entries (the lines the settings can hold) ->
 *       write them -> upload_chunk_written (what the write did)
 *     upload_settle (the chunk's end: counted, listed, freed), or upload_drop (it was never
 *     written) ... upload_take again
 *   upload_take(NULL) at the end of the body, then a last chunk if any, then upload_reply.
 *
 * Up to UPLOAD_CHUNKS_MAX chunks may be taken and not settled yet (in flight), and lines read
 * meanwhile: chunks are settled or dropped in the order they were taken.
 *
 * A score the board cannot hold, or an incr whose result leaves the range, rejects its own line
 * only. `rejected` lists at most UPLOAD_SHOWN_MAX rejections, always in line order: a line
 * refused when read while earlier lines wait is listed once those are settled. Every line up to
 * `settled_line` is applied or rejected, so a client cut off (a Redis fault, rankd stopping)
 * resends from the line after it without applying one twice.
 */
#ifndef RANKD_UPLOAD_H
#define RANKD_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "errors.h"

#define UPLOAD_LINE_MAX (64L * 1024L) /**< bytes of one line ('\r' not counted); longer: 413 */
/* A chunk of lines is one write.lua call: bounded so it stays about 2 ms on Redis' main thread
 * (measured: 1000 lines with ~100-byte records took 5.9 ms, 5.9 us a line). */
#define UPLOAD_CHUNK_LINES 300             /**< lines of a chunk */
#define UPLOAD_CHUNK_BYTES (48UL * 1024UL) /**< bytes of ids and records of a chunk */
#define UPLOAD_SHOWN_MAX 1000              /**< rejections listed (all are counted) */
#define UPLOAD_CHUNKS_MAX 2                /**< chunks taken and not settled, at most */

struct upload;

/** A new upload. NULL on ENOMEM. Free with upload_free. */
struct upload *upload_new(void);

/** Free u and its pending lines. NULL is a no-op. */
void upload_free(struct upload *u);

/**
 * Read lines from data[*at..len) (data NULL: the end of the upload, its last line without a
 * '\n') into the pending lines, advancing *at, until the data is used up (0) or they make a full
 * chunk (1: write it and settle it, then call again with the rest). -ENOMEM: u cannot go on.
 */
int upload_take(struct upload *u, const char *data, size_t len, size_t *at);

/** Lines pending (read, parsed, not written yet). */
size_t upload_pending(const struct upload *u);

/** Chunks taken and not settled or dropped yet. */
int upload_chunks(const struct upload *u);

/** The buffers of one chunk's write. */
struct upload_chunk {
    struct entry_in *lines; /**< the chunk's lines, owned (freed when settled) */
    size_t nlines;
    struct board_entry *be;    /**< the lines to send, in order (strings borrowed from lines) */
    struct board_outcome *out; /**< their outcomes, filled by the write */
    int *bad;                  /**< per line: 0, or why it was refused */
    size_t *idx;               /**< be[k] is line idx[k] */
    size_t start;              /**< lines before it are written (a resumed chunk) */
};

/** The pending lines (at least one) become chunk c (u has none pending after it): 0; -ENOMEM
 *  (the lines stay pending, c is empty); -EBUSY when UPLOAD_CHUNKS_MAX are not settled yet. */
int upload_chunk_take(struct upload *u, struct upload_chunk *c);

/** Free c's buffers and the lines it still holds (c is empty after it). */
void upload_chunk_free(struct upload_chunk *c);

/** The lines of c from c->start that `used` (the board's settings) can hold, as c->be; the
 *  others are marked bad. Returns how many entries to write (0: nothing to write). */
size_t upload_chunk_entries(const struct board_settings *used, struct upload_chunk *c);

/** A write of c->be[0..handled) ended with rc (board_write_job's): the incr results that left
 *  the range become rejections, and after a settings change (-EAGAIN) a retry resumes after
 *  what was written. */
void upload_chunk_written(struct upload_chunk *c, size_t handled, int rc);

/** The oldest chunk in flight, c, ended with rc (0, or the fault that stopped the upload): its
 *  lines up to what was written are counted (applied or rejected, in line order) and the settled
 *  line moves; the others are the cut (in doubt when rc says so: upload_fault); c is freed. */
void upload_settle(struct upload *u, int rc, const struct board_settings *used,
                   struct upload_chunk *c);

/** The oldest chunk in flight, c, was never written (refused whole because the one before it
 *  failed): its lines are neither settled nor in doubt, to be sent again; c is freed. */
void upload_drop(struct upload *u, struct upload_chunk *c);

/** A chunk was written and left the board's write counter at `version`. */
void upload_note_version(struct upload *u, int64_t version);

/** The reply at the end: {"applied", "rejected_total", "rejected": [{"line", "error"}...],
 *  "version"} (the write counter after the last chunk written, null when none was), a new
 *  string (free()), or NULL on ENOMEM. The rejected list is handed over: call once. */
char *upload_reply(struct upload *u);

/** Where a cut upload stands: what a client resumes from (the fields of its error reply). */
struct upload_cut {
    long applied;      /**< lines applied, all at or before settled_line */
    long rejected;     /**< lines rejected at or before settled_line */
    long settled_line; /**< every line up to this one (1-based; 0: none) is applied or rejected;
                        *   the lines after it are to be sent again */
    long unknown_line; /**< 0, or the last line of a chunk sent to Redis whose outcome is unknown
                        *   (a timeout or a lost connection after the write was sent): the lines
                        *   after settled_line up to it may or may not be applied */
};

/** The error of an upload cut by a fault rc (the error id and opening clause from http.h's errno
 *  table, as a write: -ETIME and -ECONNRESET are write_outcome_unknown, -EDQUOT 507
 *  insufficient_storage, -EROFS primary_changed, a full tie group 422 score_group_full, -ENOMEM
 *  500, the faults redis_unavailable) or by rankd stopping (rc 0: 503 shutting_down): *id
 *  (errors.h), *retry_after_s (the Retry-After the reply carries, 0: none), msg[len] saying
 *  how many lines were applied and rejected up to the settled line and where to resume, and
 *  *cut, the same as numbers. Lines rejected when read after the settled line are not counted:
 *  the client sends them again. */
void upload_fault(const struct upload *u, int rc, enum err_id *id, int *retry_after_s, char *msg,
                  size_t len, struct upload_cut *cut);

#endif
