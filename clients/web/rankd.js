// rankd.js -- a small, dependency-free client for rankd's API (ES module).
//
// RankdClient reads (browsers and servers); RankdWriteClient adds the writes, which need the write
// token and so belong on servers, never in a browser page.
//
// Works in browsers and in Node 18+ (global fetch). This file is the one source of the client:
// rankd serves it to pages at /rankd.js (it lives in clients/web, the static dir), and
// clients/js/rankd.js re-exports it for Node and bundlers. Types: clients/js/rankd.d.ts.
//
// Pages are addressed by number, and a page costs O(log N + page) in Redis whatever its number,
// so page(board, n) is the way to walk a board; exportRows(board) reads a whole board as it was at
// one instant, however it changes meanwhile. Every read that returns ranks takes a `rankType`
// option: 'ordinal' (the default), 'competition' (1224) or 'dense' (1223), sent as `?rank=`.

/**
 * @typedef {Object<string, string|number|boolean|null>} RankdRecord  a member's flat record
 *
 * @typedef {Object} RankdItem
 * @property {number} rank    1-based position on the board
 * @property {string} id
 * @property {number} score
 * @property {number[]} [subscores]  on a board with sub-scores only, in column order
 * @property {RankdRecord|null} record
 *
 * @typedef {Object} RankdPage
 * @property {string} board
 * @property {number} page    1-based page number
 * @property {number} size    entries per page
 * @property {number} total   members on the board
 * @property {number} pages   number of pages at this size
 * @property {string|null} [next]  rank pages: the cursor for the page after it (pass it as
 *   `after`), null on the last
 * @property {string|null} [prev]  rank pages: the cursor for the page before it (`before`), null
 *   on the first
 * @property {RankdItem[]} items  empty past the last page
 * @property {RankdWithItem[]} [with]  with the `with` option: the members named that are on the
 *   board, in rank order (read live, also on a cached page)
 * @property {string[]} [missing]  with the `with` option: the ids named that are not on the board
 *
 * @typedef {Object} RankdWithItem
 * @property {number} rank    of the rank type asked (ordinal by default)
 * @property {string} id
 * @property {number} score
 * @property {number[]} [subscores]  on a board with sub-scores only
 * @property {number} page    the page that holds this member at the page's size
 * @property {RankdRecord|null} record
 *
 * @typedef {Object} RankdMember
 * @property {string} id
 * @property {number} score
 * @property {number[]} [subscores]  on a board with sub-scores only
 * @property {number} rank    of the rank type asked (ordinal by default)
 * @property {number} page    the page that holds this member's position at the size asked for
 * @property {number} percentile  100 * (total - position) / total, two decimals
 * @property {number|null} [updated_at]  a board with track_updated_at: when its score last
 *   changed (ms since the Unix epoch)
 * @property {RankdRecord|null} record
 *
 * @typedef {Object} RankdMembers
 * @property {string} board
 * @property {RankdItem[]} items  the members found, in rank order
 * @property {string[]} missing   the ids not on the board, in the order asked
 *
 * @typedef {Object} RankdPercentile
 * @property {number} p
 * @property {number|null} rank  the ordinal rank at that percentile; null on an empty board
 * @property {string|null} id
 * @property {number|null} score
 * @property {number[]} [subscores]  on a board with sub-scores only (and a member at that
 *   percentile)
 *
 * @typedef {RankdPage & {count: number}} RankdTopPage  `count`: the members the percent asks for
 *
 * @typedef {Object} RankdMemberOnBoard
 * @property {string} board
 * @property {number|null} rank  null where the board or the member is absent
 * @property {number|null} score
 * @property {number[]} [subscores]  on a board with sub-scores that holds the member only
 * @property {number|null} percentile
 *
 * @typedef {Object} RankdMemberBoards
 * @property {string} id
 * @property {RankdMemberOnBoard[]} boards  in the order asked, each board once
 *
 * @typedef {'ordinal'|'competition'|'dense'} RankdRankType
 *
 * @typedef {Object} RankdBoardSummary
 * @property {string} board
 * @property {number} total
 *
 * @typedef {Object} RankdBoards
 * @property {RankdBoardSummary[]} boards
 * @property {string|null} next_cursor  pass it as `cursor` for the next page; null on the last
 *
 * @typedef {Object} RankdBoardSettings
 * @property {string} board
 * @property {'desc'|'asc'} order
 * @property {'first'|'last'|'id'} tiebreak
 * @property {'packed'|'wide'} score_layout  'wide': a first|last board takes |score| up to
 *   2^53 - 1
 * @property {('desc'|'asc')[]} [subscores]  a board with sub-scores only: their directions
 * @property {number} page_size
 * @property {number} page_ttl_ms
 * @property {number} score_decimals
 * @property {'integer'|'decimal'|'duration_ms'} [score_format]  how pages show the scores
 * @property {number} total
 * @property {{min: number, max: number}} score_range
 * @property {'none'|'hourly'|'daily'|'weekly'|'monthly'} [period]
 * @property {string} [timezone]
 * @property {number} [retain]
 * @property {number|null} [max_members]  the board keeps its best this many (null: no limit)
 * @property {boolean} [track_updated_at]  each entry keeps when its score last changed
 * @property {number} [version]  the board's write counter (every score write adds one)
 * @property {string} [current_period]  periodic boards: the period written and read by default
 * @property {string[]} [periods]  periodic boards: the readable periods, newest first
 *
 * @typedef {Object} RankdResponseInfo
 * @property {string} url
 * @property {number} status        the HTTP status rankd sent (304 when the cached body was reused)
 * @property {boolean} notModified  true when rankd answered 304 and the remembered body was returned
 * @property {string|null} etag
 * @property {string|null} cache    the X-Cache header: 'hit', 'miss' or 'stale' (pages only)
 * @property {number|null} age      the Age header in seconds (pages only)
 * @property {boolean} [replayed]    score writes: rankd answered from the Idempotency-Key's record
 *   (Idempotent-Replayed: true): the write had been applied by an earlier request
 *
 * @typedef {Object} RankdClientOptions
 * @property {string|URL} [baseUrl]  rankd's address, e.g. 'http://127.0.0.1:8080'; in a browser it
 *   defaults to the page's own origin
 * @property {typeof fetch} [fetch]  a fetch implementation (default: globalThis.fetch)
 * @property {Record<string, string>} [headers]  extra request headers
 * @property {number} [etagCacheSize]  pages remembered for If-None-Match (default 200; 0 = off)
 *
 * @typedef {Object} RequestOptions
 * @property {AbortSignal} [signal]
 *
 * @typedef {Object} ReadOptions
 * @property {number} [size]  entries per page (1..100; default: the board's page_size)
 * @property {string} [period]  a periodic board's period id ('2026-W49', '2026-11-30', ...) to read
 *   instead of the current one; GET /boards/{board} lists the readable ones
 * @property {RankdRankType} [rankType]  the ranks' type (`?rank=`; default 'ordinal')
 * @property {number} [minVersion]  member, around and page: never an answer from before this write
 *   counter (a write's `version`; with --read-from-replicas a replica's older answer is asked of
 *   the primary instead): read your own writes
 * @property {AbortSignal} [signal]
 *
 * @typedef {ReadOptions} SizeOptions  (the older name of ReadOptions)
 *
 * @typedef {Object} WriteOptions  (score writes: writeScore, writeScores, writeScoreBoards)
 * @property {AbortSignal} [signal]
 * @property {string|boolean} [idempotencyKey]  sent as the Idempotency-Key header (true: a random
 *   UUID): rankd applies the write once however often it is sent with that key, and answers a
 *   repeat with the first reply (responseInfo(result).replayed); 1..128 visible ASCII
 *
 * @typedef {Object} RankdScoreEntry
 * @property {string} id
 * @property {number} score
 * @property {'set'|'best'|'incr'} [op]  default 'set'
 * @property {RankdRecord} [record]  stored at /items/{id}
 * @property {number|string} [floor]  incr only: the result never goes below it
 * @property {number|string} [ceiling]  incr only: the result never goes above it
 * @property {number[]} [subscores]  required on a board with sub-scores (refused elsewhere): one
 *   integer per column; set stores them, best keeps the better (score, sub-scores) tuple, incr
 *   adds them element-wise
 *
 * @typedef {Object} RankdWriteResult
 * @property {string} id
 * @property {number} score   the score stored after the write
 * @property {number[]} [subscores]  on a board with sub-scores only: those stored with `score`
 * @property {number|null} rank  null when the board keeps fewer members (max_members) and this
 *   one is not among them
 * @property {boolean} updated  whether the stored score changed
 * @property {number|null} prev_score  the score before the write (null: the member was new)
 * @property {number[]|null} [prev_subscores]  on a board with sub-scores only: those before the
 *   write (null: the member was new)
 * @property {number|null} prev_rank   the rank before the write (null: the member was new)
 * @property {number} version  the board's write counter after the write (page(..., {minVersion}))
 *
 * @typedef {Object} RankdEntryResult
 * @property {number} score  this entry's result
 * @property {number[]} [subscores]  on a board with sub-scores only: the sub-scores of this result
 * @property {number|null} rank  the member's rank after the whole batch
 * @property {boolean} updated
 *
 * @typedef {Object} RankdBoardWriteResult
 * @property {string} board
 * @property {number} score
 * @property {number[]} [subscores]  on a board with sub-scores only
 * @property {number|null} rank
 * @property {boolean} updated
 * @property {number|null} prev_score
 * @property {number[]|null} [prev_subscores]  on a board with sub-scores only
 * @property {number|null} prev_rank
 * @property {number} version
 *
 * @typedef {Object} RankdBoardsWriteResult
 * @property {string} id
 * @property {RankdBoardWriteResult[]} boards  in the order asked for
 *
 * @typedef {Object} RankdExportRow
 * @property {number} rank  1..N, each once
 * @property {string} id
 * @property {number} score
 * @property {number[]} [subscores]  on a board with sub-scores only
 * @property {RankdRecord|null} record
 *
 * @typedef {Object} ExportOptions
 * @property {string} [period]  a readable period of a periodic board
 * @property {AbortSignal} [signal]
 *
 * @typedef {Object} RankdRejection
 * @property {{code: string, message: string}} error
 * @property {number} [line]   1-based line of an NDJSON upload
 * @property {number} [index]  0-based index in a batch
 *
 * @typedef {Object} RankdBatchResult
 * @property {number} applied
 * @property {RankdRejection[]} rejected  always empty (a batch is all or nothing)
 * @property {RankdEntryResult[]} results  each entry's result, in entry order
 * @property {number} version  the board's write counter after the batch
 *
 * @typedef {Object} RankdStreamResult
 * @property {number} applied
 * @property {number} rejected_total  every rejected line
 * @property {RankdRejection[]} rejected  the first 1000 rejected lines
 * @property {number|null} version  the board's write counter after the last chunk written
 *
 * @typedef {Object} RankdBoardSettingsInput
 * @property {'desc'|'asc'} [order]
 * @property {'first'|'last'|'id'} [tiebreak]
 * @property {number} [page_size]
 * @property {number} [page_ttl_ms]
 * @property {number} [score_decimals]
 * @property {'integer'|'decimal'|'duration_ms'} [score_format]  how pages show the scores
 *   (display only)
 * @property {boolean} [track_updated_at]  keep each entry's updated_at; changes only while empty
 * @property {'none'|'hourly'|'daily'|'weekly'|'monthly'} [period]
 * @property {string} [timezone]
 * @property {number} [retain]
 * @property {number} [max_members]  keep the best this many; 0: no limit
 *
 * @typedef {string | Uint8Array | ReadableStream<Uint8Array> | Iterable<RankdScoreEntry|string|Uint8Array> | AsyncIterable<RankdScoreEntry|string|Uint8Array>} NdjsonSource
 *
 * @typedef {Object} WatchOptions
 * @property {number} [size]  entries per page (1..100; default: the board's page_size)
 * @property {string} [period]  a periodic board's period id to watch instead of the current one
 * @property {RankdRankType} [rankType]  the ranks' type (`?rank=`; default 'ordinal')
 * @property {number|string} [min]  watch page n of a score range: members scoring at least
 *   this (inclusive; a string keeps the exact literal)
 * @property {number|string} [max]  ... and at most this (inclusive)
 * @property {string[]} [with]  1 to 20 ids pushed with the page wherever they are (each once;
 *   a page by number only), read again with it each time
 * @property {string} [lastEventId]  the ETag of the page the caller already has (not yielded
 *   again while it is current)
 * @property {AbortSignal} [signal]  stops the watch
 *
 * @typedef {Object} PageOptions
 * @property {number} [size]  entries per page (1..100; default: the board's page_size)
 * @property {string} [period]  a periodic board's period id to read instead of the current one
 * @property {number} [rank]  read the page that holds this 1-based rank (n is then ignored)
 * @property {number} [minVersion]  never a page computed before this write counter (a write's
 *   `version`): read your own writes
 * @property {RankdRankType} [rankType]  the ranks' type (`?rank=`; default 'ordinal')
 * @property {string} [after]  a page's `next` cursor: the page after that page (n is ignored)
 * @property {string} [before]  a page's `prev` cursor: the page before that page (n is ignored)
 * @property {string[]} [with]  1 to 20 ids to read with the page wherever they are (top N plus
 *   me): the page gets `with` and `missing`; a page by number only (not with after, before,
 *   min or max)
 * @property {number|string} [min]  only members whose score is at least this (inclusive)
 * @property {number|string} [max]  only members whose score is at most this (inclusive);
 *   with min and/or max, `total` and `pages` count the members in the range
 * @property {AbortSignal} [signal]
 */

/** An error reply from rankd (`{"error":{"code","message"}}`), or a failure to reach it. */
export class RankdError extends Error {
    /**
     * @param {number} status  HTTP status; 0 when rankd could not be reached (code 'network_error')
     * @param {string} code    rankd's error code, e.g. 'board_not_found', 'redis_unavailable'
     * @param {string} message
     * @param {any} [body]     the parsed JSON error body, when there was one
     * @param {{cause?: unknown, retryAfter?: number|null, url?: string, outcomeUnknown?: boolean, idempotent?: boolean}} [extra]
     */
    constructor(status, code, message, body = null, extra = {}) {
        super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
        this.name = 'RankdError';
        /** @type {number} */
        this.status = status;
        /** @type {string} */
        this.code = code;
        /** @type {any} */
        this.body = body;
        /** @type {number|null} seconds from Retry-After (rankd sends 1 with 503) */
        this.retryAfter = extra.retryAfter ?? null;
        /** @type {string|undefined} */
        this.url = extra.url;
        /**
         * True when a write may or may not have been applied (code 'write_outcome_unknown', or the
         * connection failed after a write was sent), or when it was applied on the primary but not
         * confirmed on the replicas rankd's --write-replicas asks for (code
         * 'write_not_replicated': a failover may still lose it): not safe to retry blindly (read
         * first).
         * @type {boolean}
         */
        this.outcomeUnknown =
            extra.outcomeUnknown ?? (code === 'write_outcome_unknown' || code === 'write_not_replicated');
        /**
         * True when the request was a score write with an Idempotency-Key: rankd applies it at
         * most once, so sending it again with the same key and body is safe even when its outcome
         * is unknown.
         * @type {boolean}
         */
        this.idempotent = extra.idempotent ?? false;
    }

    /**
     * Whether repeating the same request may succeed: rankd unreachable, Redis unavailable (503),
     * 502/504 from a proxy, 429. False for 4xx answers (a 404 board stays missing) and for a write
     * whose outcome is unknown (see outcomeUnknown) unless it carried an Idempotency-Key (see
     * idempotent): then the same request with the same key is applied at most once.
     * @type {boolean}
     */
    get retryable() {
        if (this.outcomeUnknown && !this.idempotent)
            return false;
        return this.status === 0 || this.status === 429 || this.status === 502 || this.status === 503 ||
            this.status === 504;
    }
}

/** @type {WeakMap<object, RankdResponseInfo>} */
const infos = new WeakMap();

/**
 * How the reply that produced `result` arrived (status, 304 reuse, ETag, X-Cache, Age).
 * @param {object} result  a value returned by one of the client's methods
 * @returns {RankdResponseInfo|undefined}
 */
export function responseInfo(result) {
    return result && typeof result === 'object' ? infos.get(result) : undefined;
}

function defaultBase() {
    const loc = /** @type {any} */ (globalThis).location;
    return loc && loc.origin && loc.origin !== 'null' ? loc.origin : undefined;
}

/** A board name or id percent-encoded (a path segment, or an item of a query's list). */
function seg(s) {
    if (typeof s !== 'string' || s === '')
        throw new TypeError('board names and ids must be non-empty strings');
    return encodeURIComponent(s);
}

/**
 * A board name or id as a URL path segment. A URL parser (fetch's) removes the segments '.' and
 * '..', escaped as %2E or not (/boards/b/members/.. is /boards/b/, /boards/../rank is /rank, the
 * default board), so no URL path can name them: refused here rather than sent somewhere else.
 * Such ids are read through members() (the ids are in the query or the body there).
 */
function pathSeg(s) {
    if (s === '.' || s === '..')
        throw new TypeError(`'${s}' cannot be a URL path segment: read such an id with members()`);
    return seg(s);
}

/** A client for one rankd. */
export class RankdClient {
    /** @param {RankdClientOptions} [options] */
    constructor(options = {}) {
        const base = options.baseUrl ?? defaultBase();
        if (!base)
            throw new TypeError('RankdClient needs a baseUrl outside a browser page');
        /** @type {string} rankd's base URL, without a trailing slash */
        this.baseUrl = String(base).replace(/\/+$/, '');
        const f = options.fetch ?? globalThis.fetch;
        if (typeof f !== 'function')
            throw new TypeError('no fetch available: pass options.fetch');
        // Called as a plain function: a browser's fetch throws "Illegal invocation" when its
        // `this` is not the window.
        /** @type {typeof fetch} */
        this._fetch = (input, init) => f.call(globalThis, input, init);
        this._headers = { Accept: 'application/json', ...(options.headers || {}) };
        this._etagMax = options.etagCacheSize ?? 200;
        /** @type {Map<string, {etag: string, text: string}>} URL -> last ETag and body, LRU order */
        this._etags = new Map();
        /** Counters, for tests and dashboards. */
        this.stats = { requests: 0, notModified: 0 };
    }

    /**
     * One page of a board: ranks (n-1)*size+1 .. n*size. A page past the end has no items.
     * With `rank`, the page that holds that rank instead of n (at `size`, or the board's page_size,
     * which costs one GET /boards/{board} first).
     * Repeating a request sends If-None-Match; a 304 returns the remembered body.
     * @param {string|null} board  null: rankd's --default-board (GET /rank)
     * @param {number} [n]  1-based page number (default 1)
     * @param {PageOptions} [options]
     * @returns {Promise<RankdPage>}
     */
    async page(board, n = 1, options = {}) {
        let size = options.size;
        if (options.rank !== undefined) {
            const r = options.rank;
            if (!Number.isSafeInteger(r) || r < 1)
                throw new TypeError('rank must be a whole number from 1');
            if (size === undefined) {
                if (board == null)
                    throw new TypeError('page(null, n, {rank}) needs a size: the default board is not known here');
                size = (await this.board(board, { signal: options.signal })).page_size;
            }
            n = Math.floor((r - 1) / size) + 1;
        }
        const path = board == null ? '/rank' : `/boards/${pathSeg(board)}/rank`;
        const { after, before } = options;
        if (after !== undefined && before !== undefined)
            throw new TypeError('page(board, n, {after} or {before}): not both');
        const cursor = after ?? before;
        if (cursor !== undefined && (typeof cursor !== 'string' || cursor === ''))
            throw new TypeError('after and before take a page\'s next or prev cursor');
        const withIds = options.with;
        if (withIds !== undefined) {
            if (!Array.isArray(withIds) || withIds.length === 0 || withIds.length > 20 ||
                !withIds.every((id) => typeof id === 'string' && id !== ''))
                throw new TypeError('page(board, n, {with}): with must be an array of 1 to 20 ids');
            if (new Set(withIds).size !== withIds.length)
                throw new TypeError('page(board, n, {with}): each id once');
            for (const k of ['min', 'max', 'after', 'before'])
                if (options[k] !== undefined)
                    throw new TypeError(`page(board, n, {with}): not with ${k} (a page by number only)`);
        }
        return this._get(path, {
            page: cursor === undefined ? n : undefined, size, period: period(options),
            rank: rankType(options), after, before, min_version: minVersion(options),
            min: options.min === undefined ? undefined : literal(options.min, 'min'),
            max: options.max === undefined ? undefined : literal(options.max, 'max'),
        }, options.signal, true, withIds === undefined ? {} : { rawQuery: `with=${withIds.map(seg).join(',')}` });
    }

    /**
     * Watch a page: yields it now and again each time it changes, pushed by rankd as server-sent
     * events (GET .../rank with Accept: text/event-stream; rankd reads a watched page once per
     * page_ttl_ms for all its viewers). Reconnects by itself, with Last-Event-ID so that the page
     * it has is not sent again: after a network failure or a cut stream (waiting the stream's
     * `retry`, then longer up to 30 s while rankd stays unreachable), when rankd stops
     * (`shutting_down`) and after a retryable error (503). Ends with a RankdError when the board
     * or period is gone (404), or a refusal (400...); stops when the loop breaks or
     * `options.signal` aborts. A page by number, or page n of a score range (`min`, `max`); not a
     * cursor (`after`, `before`: it continues from an earlier page's edge, which moves as the
     * board changes).
     * `for await (const page of client.watch('cities', 1)) render(page);`
     * responseInfo(page).etag is the page's ETag.
     * @param {string|null} board  null: rankd's --default-board (GET /rank)
     * @param {number} [n]  1-based page number (default 1)
     * @param {WatchOptions} [options]
     * @returns {AsyncGenerator<RankdPage>}
     */
    async *watch(board, n = 1, options = {}) {
        for (const k of ['after', 'before', 'rank'])
            if (options[k] !== undefined)
                throw new TypeError(`watch(board, n): ${k} is not watched (a page by number, or of a score range)`);
        if (!Number.isSafeInteger(n) || n < 1)
            throw new TypeError('watch(board, n): n must be a whole number from 1');
        const path = board == null ? '/rank' : `/boards/${pathSeg(board)}/rank`;
        const params = new URLSearchParams();
        const query = {
            page: n, size: options.size, period: period(options), rank: rankType(options),
            min: options.min === undefined ? undefined : literal(options.min, 'min'),
            max: options.max === undefined ? undefined : literal(options.max, 'max'),
        };
        for (const [k, v] of Object.entries(query))
            if (v !== undefined && v !== null)
                params.set(k, String(v));
        const withIds = options.with;
        if (withIds !== undefined) {
            if (!Array.isArray(withIds) || withIds.length === 0 || withIds.length > 20 ||
                !withIds.every((id) => typeof id === 'string' && id !== ''))
                throw new TypeError('watch(board, n, {with}): with must be an array of 1 to 20 ids');
            if (new Set(withIds).size !== withIds.length)
                throw new TypeError('watch(board, n, {with}): each id once');
            for (const k of ['min', 'max'])
                if (options[k] !== undefined)
                    throw new TypeError(`watch(board, n, {with}): not with ${k} (a page by number only)`);
        }
        const url = `${this.baseUrl}${path}?${params}` +
            (withIds === undefined ? '' : `&with=${withIds.map(seg).join(',')}`);
        const signal = options.signal;
        let lastId = options.lastEventId ?? null;
        let retryMs = 1000;
        let failures = 0;
        for (;;) {
            /** @type {Record<string, string>} */
            const headers = { ...this._headers, Accept: 'text/event-stream' };
            if (lastId)
                headers['Last-Event-ID'] = lastId;
            this.stats.requests++;
            let res;
            try {
                res = await this._fetch(url, { method: 'GET', headers, signal });
            } catch (e) {
                if (signal?.aborted || (e && /** @type {any} */ (e).name === 'AbortError'))
                    throw e;
                await pause(Math.min(retryMs * 2 ** failures++, 30000), signal);
                continue;
            }
            if (!res.ok) {
                const err = errorFrom(res, await res.text(), url);
                if (!err.retryable)
                    throw err;
                await pause(Math.max((err.retryAfter ?? 0) * 1000, Math.min(retryMs * 2 ** failures++, 30000)), signal);
                continue;
            }
            const type = res.headers.get('content-type') || '';
            if (!type.startsWith('text/event-stream')) {
                await res.body?.cancel();
                throw new RankdError(res.status, 'invalid_response',
                    `rankd answered a watch with ${type || 'no type'}, not an event stream`, null, { url });
            }
            const reader = res.body.getReader();
            const decoder = new TextDecoder();
            let held = '';
            let ended = null; // the `end` event's error body
            try {
                for (;;) {
                    let chunk;
                    try {
                        chunk = await reader.read();
                    } catch (e) {
                        if (signal?.aborted)
                            throw e;
                        break; // cut: reconnect
                    }
                    if (chunk.done)
                        break;
                    held += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
                    let end;
                    while (ended === null && (end = held.indexOf('\n\n')) >= 0) {
                        const block = held.slice(0, end);
                        held = held.slice(end + 2);
                        const ev = { event: 'message', id: null, data: [], retry: null };
                        for (const line of block.split('\n')) {
                            if (line === '' || line.startsWith(':'))
                                continue;
                            const colon = line.indexOf(':');
                            const field = colon < 0 ? line : line.slice(0, colon);
                            let value = colon < 0 ? '' : line.slice(colon + 1);
                            if (value.startsWith(' '))
                                value = value.slice(1);
                            if (field === 'event')
                                ev.event = value;
                            else if (field === 'id')
                                ev.id = value;
                            else if (field === 'data')
                                ev.data.push(value);
                            else if (field === 'retry' && /^\d+$/.test(value))
                                retryMs = Number(value);
                        }
                        if (ev.event === 'page' && ev.data.length) {
                            const page = JSON.parse(ev.data.join('\n'));
                            lastId = ev.id ?? lastId;
                            failures = 0;
                            infos.set(page, {
                                url, status: 200, notModified: false, etag: ev.id, cache: null, age: null,
                            });
                            yield page;
                        } else if (ev.event === 'end') {
                            ended = JSON.parse(ev.data.join('\n') || 'null');
                        }
                    }
                    if (ended !== null)
                        break;
                }
            } finally {
                await reader.cancel().catch(() => {});
            }
            if (ended !== null && ended?.error?.code !== 'shutting_down') {
                // the board or period is gone: the error a GET answers now, with its status (a
                // board made again meanwhile is watched again)
                try {
                    await this._get(path, { ...query, page: n }, signal, false);
                } catch (e) {
                    if (e instanceof RankdError && !e.retryable)
                        throw e;
                }
            }
            await pause(retryMs, signal);
        }
    }

    /**
     * The whole board (or a readable period) as it was when the export started, however it
     * changes meanwhile: rows in rank order, ranks 1..N, each member once (GET
     * /boards/{board}/export, NDJSON, read as it arrives: memory stays bounded).
     * `for await (const row of client.exportRows('cities')) ...`
     * @param {string} board
     * @param {ExportOptions} [options]
     * @returns {AsyncGenerator<RankdExportRow>}
     */
    async *exportRows(board, options = {}) {
        const params = new URLSearchParams();
        if (options.period)
            params.set('period', options.period);
        const qs = params.toString();
        const url = `${this.baseUrl}/boards/${pathSeg(board)}/export${qs ? `?${qs}` : ''}`;
        this.stats.requests++;
        let res;
        try {
            res = await this._fetch(url, { method: 'GET', headers: { ...this._headers, Accept: 'application/x-ndjson' }, signal: options.signal });
        } catch (e) {
            if (options.signal?.aborted || (e && /** @type {any} */ (e).name === 'AbortError'))
                throw e;
            throw new RankdError(0, 'network_error', `Cannot reach rankd at ${this.baseUrl}: ${/** @type {any} */ (e)?.cause?.code || /** @type {any} */ (e)?.message || e}`,
                null, { cause: e, url });
        }
        if (!res.ok)
            throw errorFrom(res, await res.text(), url);
        const total = Number(res.headers.get('x-export-total'));
        const decoder = new TextDecoder();
        let held = '';
        let rows = 0;
        const reader = res.body.getReader();
        try {
            for (;;) {
                let chunk;
                try {
                    chunk = await reader.read();
                } catch (e) {
                    if (options.signal?.aborted)
                        throw e;
                    throw new RankdError(0, 'network_error', `The export from rankd at ${this.baseUrl} was cut off after ${rows} rows`,
                        null, { cause: e, url });
                }
                if (chunk.done)
                    break;
                held += decoder.decode(chunk.value, { stream: true });
                let nl;
                while ((nl = held.indexOf('\n')) >= 0) {
                    const line = held.slice(0, nl);
                    held = held.slice(nl + 1);
                    rows++;
                    yield JSON.parse(line);
                }
            }
        } finally {
            reader.releaseLock?.();
        }
        if (held !== '' || (Number.isFinite(total) && rows !== total))
            throw new RankdError(0, 'network_error',
                `The export from rankd at ${this.baseUrl} ended after ${rows} of ${total} rows`, null, { url });
    }

    /**
     * A member's rank, score, record and the page that holds it at `size` (in `period`).
     * @param {string} board
     * @param {string} id
     * @param {ReadOptions} [options]
     * @returns {Promise<RankdMember>}
     */
    async member(board, id, options = {}) {
        return this._get(`/boards/${pathSeg(board)}/members/${pathSeg(id)}`,
            { size: options.size, period: period(options), rank: rankType(options),
              min_version: minVersion(options) },
            options.signal, false);
    }

    /**
     * A page-shaped window of `size` entries centred on a member, clamped at both ends.
     * `around(board, id, {size, period, signal})`; the older `around(board, id, size, {signal})`
     * still works (deprecated).
     * @param {string} board
     * @param {string} id
     * @param {ReadOptions|number} [options]  a number: the deprecated positional size
     * @param {RequestOptions} [legacy]  the options of the deprecated positional form
     * @returns {Promise<RankdPage>}
     */
    async around(board, id, options = {}, legacy = undefined) {
        if (typeof options === 'number' || options === undefined || options === null)
            options = { ...(legacy || {}), size: options ?? undefined };
        else if (typeof options !== 'object')
            throw new TypeError('around(board, id, {size, period, signal}): options must be an object');
        return this._get(`/boards/${pathSeg(board)}/members/${pathSeg(id)}/around`,
            { size: options.size, period: period(options), rank: rankType(options),
              min_version: minVersion(options) },
            options.signal, false);
    }

    /**
     * Many members by id (a friends list), in rank order, with the ids not on the board in
     * `missing`. Up to 100 ids go as `GET .../members?ids=` (each percent-encoded, so an id may
     * hold ','), up to 1000 as `POST .../lookup` (a read: no token; not offered cross-origin).
     * @param {string} board
     * @param {string[]} ids
     * @param {ReadOptions} [options]  period, rankType, signal
     * @returns {Promise<RankdMembers>}
     */
    async members(board, ids, options = {}) {
        if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000)
            throw new TypeError('members(board, ids): ids must be an array of 1 to 1000 ids');
        const query = { period: period(options), rank: rankType(options) };
        if (ids.length > 100)
            return this._get(`/boards/${pathSeg(board)}/lookup`, query, options.signal, false,
                { body: JSON.stringify({ ids }) });
        return this._get(`/boards/${pathSeg(board)}/members`, query, options.signal, false,
            { rawQuery: `ids=${ids.map(seg).join(',')}` });
    }

    /**
     * A page-shaped window of `size` entries centred on the first member whose score is `score`
     * or worse, filled from both sides at the edges. Pass the score as a string to keep its exact
     * literal ('12.50'); a number is sent as JavaScript prints it.
     * @param {string} board
     * @param {number|string} score
     * @param {ReadOptions} [options]
     * @returns {Promise<RankdPage>}
     */
    async aroundScore(board, score, options = {}) {
        return this._get(`/boards/${pathSeg(board)}/around`,
            { score: literal(score, 'score'), size: options.size, period: period(options),
              rank: rankType(options) }, options.signal, false);
    }

    /**
     * The member at percentile `p` (0..100, at most 4 decimals): ordinal rank
     * max(1, ceil(total * (100 - p) / 100)); rank, id and score null on an empty board.
     * @param {string} board
     * @param {number|string} p
     * @param {ReadOptions} [options]  period, signal
     * @returns {Promise<RankdPercentile>}
     */
    async percentile(board, p, options = {}) {
        return this._get(`/boards/${pathSeg(board)}/percentile`,
            { p: literal(p, 'p'), period: period(options) }, options.signal, false);
    }

    /**
     * The first ceil(total * percent / 100) members (at most 100 items), page-shaped, with
     * `count` the uncapped number.
     * @param {string} board
     * @param {number|string} percent  0..100, at most 4 decimals
     * @param {ReadOptions} [options]  period, rankType, signal
     * @returns {Promise<RankdTopPage>}
     */
    async top(board, percent, options = {}) {
        return this._get(`/boards/${pathSeg(board)}/top`,
            { percent: literal(percent, 'percent'), period: period(options), rank: rankType(options) },
            options.signal, false);
    }

    /**
     * One member on up to 20 boards (each in its current period): rank, score and percentile
     * per board, null where the board or the member is absent.
     * @param {string} id
     * @param {string[]} boards
     * @param {{rankType?: RankdRankType, signal?: AbortSignal}} [options]
     * @returns {Promise<RankdMemberBoards>}
     */
    async memberBoards(id, boards, options = {}) {
        if (!Array.isArray(boards) || boards.length === 0 || boards.length > 20)
            throw new TypeError('memberBoards(id, boards): boards must be an array of 1 to 20 names');
        return this._get(`/members/${pathSeg(id)}`, { rank: rankType(options) }, options.signal, false,
            { rawQuery: `boards=${boards.map(seg).join(',')}` });
    }

    /**
     * A page of boards (up to 1000, all of them when there are fewer) and their totals.
     * @param {RequestOptions & {cursor?: string, count?: number}} [options]
     *   cursor: the next_cursor of the previous page; count: boards per page (1..1000)
     * @returns {Promise<RankdBoards>}
     */
    async boards(options = {}) {
        return this._get('/boards', { cursor: options.cursor, count: options.count },
            options.signal, false);
    }

    /**
     * A board's settings, total and exact score range.
     * @param {string} name
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdBoardSettings>}
     */
    async board(name, options = {}) {
        return this._get(`/boards/${pathSeg(name)}`, {}, options.signal, false);
    }

    /**
     * The record stored for an id.
     * @param {string} id
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdRecord>}
     */
    async item(id, options = {}) {
        return this._get(`/items/${pathSeg(id)}`, {}, options.signal, false);
    }

    /** Forget every remembered ETag and body. */
    clearCache() {
        this._etags.clear();
    }

    /**
     * A read: GET, or POST of a JSON body for the reads that take one (lookup; no token).
     * @param {string} path
     * @param {Record<string, number|string|undefined>} query
     * @param {AbortSignal|undefined} signal
     * @param {boolean} conditional  remember ETags and send If-None-Match
     * @param {{rawQuery?: string, body?: string}} [extra]  rawQuery: a query part already
     *   percent-encoded (a list split on raw ','); body: POST it as application/json
     */
    async _get(path, query, signal, conditional, extra = {}) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query))
            if (v !== undefined && v !== null)
                params.set(k, String(v));
        const qs = [params.toString(), extra.rawQuery].filter(Boolean).join('&');
        const url = this.baseUrl + path + (qs ? `?${qs}` : '');
        const useEtag = conditional && this._etagMax > 0;
        const cached = useEtag ? this._etags.get(url) : undefined;
        /** @type {Record<string, string>} */
        const headers = { ...this._headers };
        if (cached)
            headers['If-None-Match'] = cached.etag;
        /** @type {RequestInit} */
        const init = { method: 'GET', headers, signal };
        if (extra.body !== undefined) {
            init.method = 'POST';
            init.body = extra.body;
            headers['Content-Type'] = 'application/json';
        }
        this.stats.requests++;
        let res;
        try {
            res = await this._fetch(url, init);
        } catch (e) {
            if (signal?.aborted || (e && /** @type {any} */ (e).name === 'AbortError'))
                throw e;
            const cause = /** @type {any} */ (e)?.cause;
            const why = cause?.code || cause?.message || /** @type {any} */ (e)?.message || String(e);
            throw new RankdError(0, 'network_error', `Cannot reach rankd at ${this.baseUrl}: ${why}`,
                null, { cause: e, url });
        }
        let text;
        if (res.status === 304 && cached) {
            text = cached.text;
            this.stats.notModified++;
        } else {
            try {
                text = await res.text();
            } catch (e) {
                if (signal?.aborted) // the signal fired mid-body: the AbortError as it is
                    throw e;
                throw new RankdError(0, 'network_error',
                    `The reply from rankd at ${this.baseUrl} was cut off: ${/** @type {any} */ (e)?.message || e}`,
                    null, { cause: e, url });
            }
        }
        if (res.status !== 304 && !res.ok)
            throw errorFrom(res, text, url);
        if (res.status === 304 && !cached)
            throw new RankdError(304, 'unexpected_not_modified',
                'rankd answered 304 to a request without If-None-Match', null, { url });
        let body;
        try {
            body = JSON.parse(text);
        } catch (e) {
            throw new RankdError(res.status, 'invalid_response',
                `rankd sent a reply that is not JSON (${res.headers.get('content-type') || 'no type'})`,
                null, { cause: e, url });
        }
        const etag = res.headers.get('etag');
        if (useEtag) {
            this._etags.delete(url);
            if (etag) {
                this._etags.set(url, { etag, text });
                while (this._etags.size > this._etagMax)
                    this._etags.delete(this._etags.keys().next().value);
            }
        }
        const age = res.headers.get('age');
        infos.set(body, {
            url,
            status: res.status,
            notModified: res.status === 304,
            etag: etag ?? (res.status === 304 && cached ? cached.etag : null),
            cache: res.headers.get('x-cache'),
            age: age === null ? null : Number(age),
        });
        return body;
    }
}

/** Wait ms, or reject with the signal's reason when it aborts first. */
function pause(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted) {
            reject(signal.reason);
            return;
        }
        const t = setTimeout(() => {
            signal?.removeEventListener('abort', stop);
            resolve();
        }, ms);
        const stop = () => {
            clearTimeout(t);
            reject(signal.reason);
        };
        signal?.addEventListener('abort', stop, { once: true });
    });
}

/** Network failures that mean the request never reached rankd (so a write was not applied). */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
    'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']);

/**
 * The whole API, writes included, for servers (the write token does not belong in a browser).
 * Every write takes `{signal}`, score writes (writeScore, writeScores, writeScoreBoards) also
 * `idempotencyKey`; errors are RankdErrors whose `outcomeUnknown` is true when the write may or
 * may not have been applied (503 write_outcome_unknown, or the connection lost after the request
 * was sent) or was applied but not confirmed on the replicas (503 write_not_replicated, with
 * --write-replicas): read before retrying an `incr`, or send it with an idempotencyKey, which
 * makes such an error `retryable` (the same key and body are applied at most once).
 */
export class RankdWriteClient extends RankdClient {
    /** @param {RankdClientOptions & {token: string}} options */
    constructor(options) {
        super(options);
        if (typeof options?.token !== 'string' || options.token === '')
            throw new TypeError('RankdWriteClient needs options.token (rankd\'s --write-token)');
        /** @type {string} */
        this._token = options.token;
    }

    /**
     * Write one score: `{id, score, op?: 'set'|'best'|'incr', record?}`.
     * @param {string} board
     * @param {RankdScoreEntry} entry
     * @param {WriteOptions} [options]
     * @returns {Promise<RankdWriteResult>}
     */
    async writeScore(board, entry, options = {}) {
        if (!entry || typeof entry !== 'object' || Array.isArray(entry))
            throw new TypeError('writeScore(board, entry): entry must be an object {id, score, ...}');
        return this._send('POST', `/boards/${pathSeg(board)}/scores`, undefined, JSON.stringify(entry),
            'application/json', options, true);
    }

    /**
     * Write one entry to several boards at once (POST /scores): all of them or none (an unknown
     * board refuses the whole write with 404), each board's result in the order given.
     * @param {string[]} boards  1..20 board names, each once
     * @param {RankdScoreEntry} entry
     * @param {WriteOptions} [options]
     * @returns {Promise<RankdBoardsWriteResult>}
     */
    async writeScoreBoards(boards, entry, options = {}) {
        if (!Array.isArray(boards) || boards.length === 0 || boards.some((b) => typeof b !== 'string' || b === ''))
            throw new TypeError('writeScoreBoards(boards, entry): boards must be a non-empty array of board names');
        if (!entry || typeof entry !== 'object' || Array.isArray(entry))
            throw new TypeError('writeScoreBoards(boards, entry): entry must be an object {id, score, ...}');
        return this._send('POST', '/scores', undefined, JSON.stringify({ boards, ...entry }),
            'application/json', options, true);
    }

    /**
     * Write up to 1000 scores at once, in order, all or nothing (`{"entries": [...]}`).
     * @param {string} board
     * @param {RankdScoreEntry[]} entries
     * @param {WriteOptions} [options]
     * @returns {Promise<RankdBatchResult>}
     */
    async writeScores(board, entries, options = {}) {
        if (!Array.isArray(entries))
            throw new TypeError('writeScores(board, entries): entries must be an array');
        return this._send('POST', `/boards/${pathSeg(board)}/scores`, undefined,
            JSON.stringify({ entries }), 'application/json', options, true);
    }

    /**
     * Stream scores as NDJSON (any length; bad lines are rejected one by one, the others applied).
     * `source` is a Node Readable or any (async) iterable of entry objects (one line each), of
     * strings or of bytes (Buffer, Uint8Array: NDJSON text as it is), or one string or Uint8Array.
     * @param {string} board
     * @param {NdjsonSource} source
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdStreamResult>}
     */
    async uploadNdjson(board, source, options = {}) {
        if (hasKey(options))
            throw new TypeError('uploadNdjson: rankd refuses an Idempotency-Key on an upload (it is written in many calls and cannot be applied once as a whole); send writeScores batches with a key each');
        const failed = { error: undefined };
        const path = `/boards/${pathSeg(board)}/scores`;
        const body = ndjsonBody(source, failed);
        try {
            return await this._send('POST', path, undefined, body, 'application/x-ndjson', options);
        } catch (e) {
            // The source itself failed (lines sent before it may have been applied): its error.
            if (failed.error !== undefined && !(e instanceof RankdError && e.status !== 0))
                throw failed.error;
            if (!(e instanceof RankdError) || e.status !== 0 || !e.outcomeUnknown ||
                typeof body === 'string' || body instanceof Uint8Array)
                throw e;
            // rankd answers a stream it refuses before reading it (token, board name, type) at
            // once and closes the connection, and fetch then reports the broken upload instead of
            // the answer. The same request with an empty body (which writes nothing) gets that
            // answer; if it succeeds, the failure was the network's and the outcome is unknown.
            try {
                await this._send('POST', path, undefined, '', 'application/x-ndjson',
                    { signal: options.signal });
            } catch (pe) {
                if (pe instanceof RankdError && pe.status !== 0)
                    throw pe; // refused before any line was read: nothing was applied
            }
            throw e;
        }
    }

    /**
     * Create (201) or update (200) a board's settings; returns them.
     * @param {string} board
     * @param {RankdBoardSettingsInput} settings
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdBoardSettings>}
     */
    async putBoard(board, settings = {}, options = {}) {
        return this._send('PUT', `/boards/${pathSeg(board)}`, undefined, JSON.stringify(settings),
            'application/json', options);
    }

    /**
     * Delete a board (its settings and every readable period); records stay.
     * @param {string} board
     * @param {RequestOptions} [options]
     * @returns {Promise<void>}
     */
    async deleteBoard(board, options = {}) {
        await this._send('DELETE', `/boards/${pathSeg(board)}`, undefined, undefined, undefined, options);
    }

    /**
     * Empty the current period (or the board) at once; the settings stay.
     * @param {string} board
     * @param {RequestOptions} [options]
     * @returns {Promise<void>}
     */
    async resetBoard(board, options = {}) {
        await this._send('POST', `/boards/${pathSeg(board)}/reset`, undefined, undefined, undefined, options);
    }

    /**
     * Trim the current period (or the board): `{keep: N}` keeps the top N, `{below: SCORE}`
     * removes every member with a worse score.
     * @param {string} board
     * @param {{keep?: number, below?: number|string}} which
     * @param {RequestOptions} [options]
     * @returns {Promise<{removed: number}>}
     */
    async trim(board, which, options = {}) {
        const { keep, below } = which || {};
        if ((keep === undefined) === (below === undefined))
            throw new TypeError('trim(board, {keep} or {below}): exactly one of them');
        return this._send('DELETE', `/boards/${pathSeg(board)}/members`, { keep, below }, undefined,
            undefined, options);
    }

    /**
     * Remove one member from the current period (or the board).
     * @param {string} board
     * @param {string} id
     * @param {RequestOptions} [options]
     * @returns {Promise<void>}
     */
    async deleteMember(board, id, options = {}) {
        await this._send('DELETE', `/boards/${pathSeg(board)}/members/${pathSeg(id)}`, undefined, undefined,
            undefined, options);
    }

    /**
     * Store (create or replace) the record of an id.
     * @param {string} id
     * @param {RankdRecord} record
     * @param {RequestOptions} [options]
     * @returns {Promise<void>}
     */
    async putItem(id, record, options = {}) {
        await this._send('PUT', `/items/${pathSeg(id)}`, undefined, JSON.stringify(record),
            'application/json', options);
    }

    /**
     * Remove the record of an id.
     * @param {string} id
     * @param {RequestOptions} [options]
     * @returns {Promise<void>}
     */
    async deleteItem(id, options = {}) {
        await this._send('DELETE', `/items/${pathSeg(id)}`, undefined, undefined, undefined, options);
    }

    /**
     * @param {string} method
     * @param {string} path
     * @param {Record<string, number|string|undefined>|undefined} query
     * @param {string|ReadableStream|undefined} body
     * @param {string|undefined} type
     * @param {WriteOptions} options
     */
    async _send(method, path, query, body, type, options, scoreWrite = false) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query || {}))
            if (v !== undefined && v !== null)
                params.set(k, String(v));
        const qs = params.toString();
        const url = this.baseUrl + path + (qs ? `?${qs}` : '');
        /** @type {Record<string, string>} */
        const headers = { ...this._headers, Authorization: `Bearer ${this._token}` };
        if (type)
            headers['Content-Type'] = type;
        const key = options.idempotencyKey;
        if (hasKey(options)) {
            if (!scoreWrite)
                throw new TypeError('idempotencyKey applies to score writes (writeScore, writeScores, writeScoreBoards); this write is idempotent by itself');
            const k = key === true ? randomKey() : key;
            if (typeof k !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(k))
                throw new TypeError('idempotencyKey must be 1..128 visible ASCII characters (or true for a random one)');
            headers['Idempotency-Key'] = k;
        }
        const idempotent = headers['Idempotency-Key'] !== undefined;
        const signal = options.signal;
        /** @type {RequestInit & {duplex?: string}} */
        const init = { method, headers, signal };
        if (body !== undefined) {
            init.body = body;
            if (typeof body !== 'string' && !(body instanceof Uint8Array))
                init.duplex = 'half'; // a streamed request body (Node's fetch requires it)
        }
        this.stats.requests++;
        let res;
        let text;
        try {
            res = await this._fetch(url, init);
            text = await res.text();
        } catch (e) {
            if (signal?.aborted || (e && /** @type {any} */ (e).name === 'AbortError'))
                throw e;
            const cause = /** @type {any} */ (e)?.cause;
            const why = cause?.code || cause?.message || /** @type {any} */ (e)?.message || String(e);
            const notSent = !res && NOT_SENT.has(cause?.code);
            throw new RankdError(0, 'network_error',
                `${method} ${path} to rankd at ${this.baseUrl} failed: ${why}` +
                (notSent ? '' : idempotent ? ' (it carried an Idempotency-Key: send it again with the same key)'
                    : ' (the write may or may not have been applied)'),
                null, { cause: e, url, outcomeUnknown: !notSent, idempotent });
        }
        if (!res.ok) {
            const e = errorFrom(res, text, url);
            e.idempotent = idempotent;
            throw e;
        }
        if (!text)
            return undefined; // 204
        let result;
        try {
            result = JSON.parse(text);
        } catch (e) {
            throw new RankdError(res.status, 'invalid_response',
                `rankd sent a reply that is not JSON (${res.headers.get('content-type') || 'no type'})`,
                null, { cause: e, url });
        }
        if (result && typeof result === 'object')
            infos.set(result, {
                url, status: res.status, notModified: false, etag: null, cache: null, age: null,
                replayed: res.headers.get('idempotent-replayed') === 'true',
            });
        return result;
    }
}

/** Whether write options carry an idempotency key. */
function hasKey(options) {
    const key = options?.idempotencyKey;
    return key !== undefined && key !== null && key !== false;
}

function randomKey() {
    const c = /** @type {any} */ (globalThis).crypto;
    if (c && typeof c.randomUUID === 'function')
        return c.randomUUID();
    throw new TypeError('idempotencyKey: true needs crypto.randomUUID; pass a key');
}

const encoder = new TextEncoder();

/** One NDJSON line (bytes) for an item of an NDJSON source. */
function ndjsonChunk(v) {
    if (typeof v === 'string')
        return encoder.encode(v);
    if (v instanceof Uint8Array)
        return v;
    if (v instanceof ArrayBuffer)
        return new Uint8Array(v);
    if (v && typeof v === 'object')
        return encoder.encode(`${JSON.stringify(v)}\n`);
    throw new TypeError(`uploadNdjson: cannot send ${v === null ? 'null' : typeof v} (entries must be objects, strings or bytes)`);
}

/**
 * The request body of an NDJSON upload: a string or bytes as they are, or a ReadableStream
 * pulled from an (async) iterable (a Node Readable is one) as fetch sends it.
 * @param {NdjsonSource} source
 * @param {{error: unknown}} failed  receives an error the source threw
 */
function ndjsonBody(source, failed) {
    if (typeof source === 'string')
        return source;
    if (source instanceof Uint8Array)
        return source;
    if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream)
        return source;
    const it = source && (source[Symbol.asyncIterator]?.call(source) ?? source[Symbol.iterator]?.call(source));
    if (!it || typeof it.next !== 'function')
        throw new TypeError('uploadNdjson: source must be a Node stream, an (async) iterable, a ReadableStream, a string or bytes');
    return new ReadableStream({
        async pull(ctl) {
            try {
                const { value, done } = await it.next();
                if (done)
                    ctl.close();
                else
                    ctl.enqueue(ndjsonChunk(value));
            } catch (e) {
                failed.error = e;
                ctl.error(e);
            }
        },
        async cancel(reason) {
            await it.return?.(reason);
        },
    });
}

/** The period option: undefined (the current period) or a non-empty string. */
function period(options) {
    const p = options.period;
    if (p === undefined || p === null || p === '') // '' reads the current period, as absent does
        return undefined;
    if (typeof p !== 'string' || p === '')
        throw new TypeError('period must be a non-empty period id such as "2026-W49"');
    return p;
}

/** The rankType option: undefined (ordinal, rankd's default) or one of the three names. */
function rankType(options) {
    const t = options.rankType;
    if (t === undefined || t === null)
        return undefined;
    if (t !== 'ordinal' && t !== 'competition' && t !== 'dense')
        throw new TypeError("rankType must be 'ordinal', 'competition' or 'dense'");
    return t;
}

/** A number for the query: a finite number as JavaScript prints it, or a string as it is. */
function literal(v, name) {
    if (typeof v === 'number' && Number.isFinite(v))
        return String(v);
    if (typeof v === 'string' && v !== '')
        return v;
    throw new TypeError(`${name} must be a finite number or a non-empty numeric string`);
}

/** The minVersion option as the query's min_version: undefined for none (or 0), else a whole
 * number from 1 (a write's `version`). */
function minVersion(options) {
    const mv = options.minVersion;
    if (mv !== undefined && (!Number.isSafeInteger(mv) || mv < 0))
        throw new TypeError('minVersion must be a whole number from 0 (a write\'s version; 0: any)');
    return mv || undefined;
}

/** @param {Response} res @param {string} text @param {string} url */
function errorFrom(res, text, url) {
    let body = null;
    try {
        body = JSON.parse(text);
    } catch {
        /* not JSON: a proxy's page, say */
    }
    const ra = res.headers.get('retry-after');
    const extra = { retryAfter: ra !== null && /^\d+$/.test(ra) ? Number(ra) : null, url };
    const err = body && typeof body === 'object' ? body.error : null;
    if (err && typeof err.code === 'string')
        return new RankdError(res.status, err.code, String(err.message ?? err.code), body, extra);
    return new RankdError(res.status, `http_${res.status}`,
        `rankd answered ${res.status} ${res.statusText || ''}`.trim(), body, extra);
}

/**
 * A client for `baseUrl` (shorthand for `new RankdClient({baseUrl, ...options})`).
 * @param {string|URL} [baseUrl]
 * @param {Omit<RankdClientOptions, 'baseUrl'>} [options]
 * @returns {RankdClient}
 */
export function createClient(baseUrl, options = {}) {
    return new RankdClient({ ...options, baseUrl });
}
