/*
 * handlers_export.h -- GET /boards/{board}/export[?period=]: the whole board (or a readable
 * period) as NDJSON, one {"rank","id","score","record"} a line in rank order, from a
 * point-in-time snapshot taken while writes go on (export.h): every member present when the
 * export started exactly once, at its score then, ranks 1..N.
 *
 * The request is suspended while the snapshot is copied (each copy call with
 * --request-timeout-ms of its own: the work grows with the board, like a trim's); errors until
 * then are ordinary replies (404, 409 export_interrupted, 503). Then the reply is streamed
 * (http_body_source): one chunk of rows is read from Redis at a time, when the client has taken
 * the one before, so rankd holds at most one chunk per export however big the board. A fault in
 * the middle cuts the body (no final chunk): the client sees an incomplete reply and asks again.
 * The reply carries `X-Export-Total` (the snapshot's rows).
 */
#ifndef RANKD_HANDLERS_EXPORT_H
#define RANKD_HANDLERS_EXPORT_H

#include "http.h"

void handle_export_async(struct http_request *rq, struct http_reply *rp, struct http_async *async);

#endif
