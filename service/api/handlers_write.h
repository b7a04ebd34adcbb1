/*
 * handlers_write.h -- the write endpoints with a JSON body: score writes (POST
 * /boards/{board}/scores with one entry or a batch; an NDJSON body goes to handlers_stream.h) and
 * records (PUT and DELETE /items/{id}); one entry written to several boards (POST /scores).
 * Every entry is validated first (validate.h: a 4xx and nothing written); the scores are checked
 * against the settings this process saw in the last second (else one HGETALL per board), then
 * written in one write.lua call on the event thread's own write connection
 * (board_write_submit), all or nothing. A write sent and not answered is 503
 * write_outcome_unknown; one never sent is 503 redis_unavailable.
 *
 * Replies: one entry {"id","score","rank","updated","prev_score","prev_rank","version"}, a batch
 * {"applied","rejected":[],"results":[{"score","rank","updated"}...],"version"}, several boards
 * {"id","boards":[{"board",... as one entry}]} (render.h). With an Idempotency-Key (idem.h,
 * 1..128 visible ASCII) the write is applied at most once: a retry with the same key and the same
 * request gets the first reply again, byte for byte, with `Idempotent-Replayed: true`; the same
 * key with another request is 422 idempotency_key_reused; and a lost reply's 503
 * write_outcome_unknown says it may be sent again.
 */
#ifndef RANKD_HANDLERS_WRITE_H
#define RANKD_HANDLERS_WRITE_H

#include "http.h"

/** POST /boards/{board}/scores: a JSON write (one entry or {"entries":[...]}), or the end of an
 *  NDJSON upload (handle_scores_stream_end). */
void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** POST /scores: one entry {"boards":[...],"id","score","op","record","floor","ceiling"} on
 *  every board named (1..BOARD_WRITE_BOARDS_MAX, each existing: an unknown one is 404 for the
 *  whole write), one write.lua call, all or nothing. */
void handle_scores_boards_async(struct http_request *rq, struct http_reply *rp,
                                struct http_async *async);

/** PUT /items/{id} (HSET of the validated record) and DELETE /items/{id} (HDEL). */
void handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
