/*
 * handlers_write.h -- the write endpoints with a JSON body: score writes (POST
 * /boards/{board}/scores with one entry or a batch; an NDJSON body goes to handlers_stream.h) and
 * records (PUT and DELETE /items/{id}). Every entry is validated first (validate.h: a 4xx and
 * nothing written); the scores are checked against the settings this process saw in the last
 * second (else one HGETALL), then written in one write.lua call on the event thread's own write
 * connection (board_write_submit). A write sent and not answered is 503 write_outcome_unknown;
 * one never sent is 503 redis_unavailable.
 */
#ifndef RANKD_HANDLERS_WRITE_H
#define RANKD_HANDLERS_WRITE_H

#include "http.h"

/** POST /boards/{board}/scores: a JSON write (one entry or {"entries":[...]}), or the end of an
 *  NDJSON upload (handle_scores_stream_end). */
void handle_scores_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

/** PUT /items/{id} (HSET of the validated record) and DELETE /items/{id} (HDEL). */
void handle_item_put(struct http_request *rq, struct http_reply *rp, struct http_async *async);
void handle_item_delete(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
