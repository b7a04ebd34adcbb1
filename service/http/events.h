/*
 * events.h -- server-sent event streams (text/event-stream, the WHATWG HTML "Server-sent
 * events" format) as reply bodies: the HTTP side only, knowing nothing of what the events say.
 *
 * A handler answers a request with http_reply_events: the reply becomes a 200 text/event-stream
 * whose body is sent, event by event, for as long as the client stays. The stream asks its
 * source for the next event whenever the client can take more; when the source has none, the
 * connection is suspended (libmicrohttpd's callback response whose reader suspends the
 * connection, as any streamed body: http.h, http_body_source) and costs no CPU until
 * http_events_wake, from any thread, says the source has something.
 *
 * Events are immutable byte strings in the event-stream format, made once (http_event_new) and
 * shared by reference between every stream that sends them: a page watched by a thousand
 * viewers is formatted once and held once, each stream keeping only its offset into it.
 *
 * What the module does on its own, per event thread:
 *  - a comment line (": keep-alive") on a stream that has sent nothing for --stream-heartbeat-ms
 *    (15 s), so that proxies and load balancers do not close it as idle;
 *  - caps: --max-streams streams open on the server at once, and --max-streams-per-ip from one
 *    client address (httpd_options) (the client behind a trusted proxy: httpd.h), besides the
 * connection limits they count against as any connection; past a cap http_reply_events refuses (503
 *    too_many_streams / too_many_streams_from_address, Retry-After);
 *  - shutdown: when rankd stops, each stream sends its source's last event and ends (the
 *    stop waits for suspended connections: a stream must never hold it);
 *  - counters for /metrics: streams open, events sent, streams refused.
 *
 * Threads: a stream and its source's calls live on the event thread of the request;
 * http_events_wake and the counters are safe from any thread.
 */
#ifndef RANKD_EVENTS_H
#define RANKD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

#define HTTP_EVENTS_HEARTBEAT_MS 15000 /**< the default --stream-heartbeat-ms */
#define HTTP_EVENTS_RETRY_MS                                                                       \
    1000 /**< the `retry:` a stream begins with: a client's wait                                   \
          *   before it reconnects */

/** One event: its bytes in the event-stream format. Refcounted, immutable; any thread. */
struct http_event;

/**
 * A new event `name` (the `event:` field; NULL: none, a "message") with `id` (the `id:` field;
 * NULL: none) and data[0..len) (each line of it a `data:` line; a CR, LF or CRLF ends a line).
 * name and id must hold no CR, LF or NUL. Returns it with one reference, or NULL on ENOMEM.
 */
struct http_event *http_event_new(const char *name, const char *id, const char *data, size_t len);

/** Another reference to e (returned); NULL is returned as is. */
struct http_event *http_event_ref(struct http_event *e);

/** Drop a reference (the last frees it). NULL: no-op. */
void http_event_unref(struct http_event *e);

/** A stream being sent (the reply's body). */
struct http_events;

/**
 * The source of a stream's events, called on the stream's event thread only.
 */
struct http_events_source {
    /**
     * The next event to send, or NULL when there is none now (the stream then waits for
     * http_events_wake). Returns a reference the stream takes. *end set to 1: the stream ends
     * after the event returned (or now, with NULL).
     */
    struct http_event *(*next)(void *arg, struct http_events *ev, int *end);
    /** rankd stops: the stream's last event (a reference the stream takes), or NULL. */
    struct http_event *(*last)(void *arg);
    /** The stream is done with (sent to its end, cut, the client gone, or never sent), once.
     *  No http_events_wake of it may follow the return (a source shared with other threads
     *  forgets the stream under its own lock here). */
    void (*free)(void *arg);
    void *arg;
};

/**
 * Answer the request of `a` (from its async step, before http_async_done) with an event stream
 * of `src`: rp becomes a 200 text/event-stream (Cache-Control: no-store; X-Accel-Buffering: no,
 * so that nginx in front does not hold the events back), counted against the stream caps.
 * Returns 0 (src is the stream's: src->free is called once the stream is done with, and *out,
 * may be NULL, names the stream until then), or with rp and src untouched: -EUSERS past
 * --max-streams, -EMLINK past --max-streams-per-ip (http_events_refuse answers either),
 * -ENOMEM.
 */
int http_reply_events(struct http_reply *rp, struct http_async *a,
                      const struct http_events_source *src, struct http_events **out);

/** The 503 of a refusal of http_reply_events (-EUSERS, -EMLINK; anything else: the errno's). */
void http_events_refuse(struct http_reply *rp, int rc);

/**
 * The stream's source has something for it (an event, or its end): the stream asks it again
 * soon, on its own thread. Any thread, any number of times (a wake that finds the stream busy
 * sending is merged); never after the source's free has returned.
 */
void http_events_wake(struct http_events *ev);

/** The Redis connections of the stream's event thread (as http_async_store and
 *  http_async_store_writes; `cache` as http_async_store_cache(a, writes)), from that thread
 *  only: the source's own reads and writes. NULL from another thread or when there is none. */
struct store_async *http_events_store(const struct http_events *ev, int writes, int cache);

/** A timer on the stream's event thread, from that thread (as http_timer_after(NULL, ...)):
 *  0, or -1 (fn never runs). It may outlive the stream: fn must check. */
int http_events_after(const struct http_events *ev, int ms, void (*fn)(void *arg), void *arg);

/** 1 when the caller runs on the stream's event thread. */
int http_events_own_thread(const struct http_events *ev);

/** Counters for /metrics. */
struct http_events_stats {
    long open;                 /**< streams open now */
    unsigned long opened;      /**< streams opened since start */
    unsigned long events_sent; /**< events sent, over all streams (heartbeats not counted) */
    unsigned long refused;     /**< streams refused by a cap */
};

struct httpd;

/** The streams of server srv (httpd.h; the caps are its httpd_options'): racy snapshots, any
 *  thread. */
void http_events_stats(const struct httpd *srv, struct http_events_stats *out);

#endif
