/*
 * handlers_stream.h -- NDJSON score uploads (POST /boards/{board}/scores with
 * Content-Type application/x-ndjson), any length. The bytes go through the upload's state
 * machine (upload.h: lines split and parsed as they arrive, counts, the rejected list); each full
 * chunk is written (write.lua on the event thread's write connection, board_write_submit) while
 * the connection is suspended, so a client sends no faster than Redis applies (back-pressure,
 * bounded memory), then the rest of the data is read. Settings changed under a chunk: read again,
 * validated again, resumed after what was written. Each chunk has --request-timeout-ms of its own:
 * an upload's work grows with its lines.
 */
#ifndef RANKD_HANDLERS_STREAM_H
#define RANKD_HANDLERS_STREAM_H

#include <stddef.h>

#include "http.h"

/** A chunk of the body (route_stream_async_fn): 0 all of it read, 1 a full chunk of lines is
 *  being written (http_stream_done follows), -1 after an error in rp (the rest is dropped). */
int handle_scores_stream_async(struct http_request *rq, const char *data, size_t len, size_t *used,
                               struct http_reply *rp, struct http_async *async);

/** The end of the body (from handle_scores_async): the last chunk, then the reply
 *  {"applied","rejected_total","rejected"}; answers the request. */
void handle_scores_stream_end(struct http_request *rq, struct http_reply *rp,
                              struct http_async *async);

/** The upload state of a request (http_request.stream_state). NULL is a no-op. */
void handle_scores_stream_free(void *state);

/** rankd stops in the middle of an upload: a 503 shutting_down with the lines applied so far and
 *  the line up to which everything is settled. */
void handle_scores_stream_stopped(struct http_request *rq, struct http_reply *rp);

#endif
