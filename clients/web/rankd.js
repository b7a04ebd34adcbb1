// rankd.js -- a small, dependency-free client for rankd's read API (ES module).
//
// Works in browsers and in Node 18+ (global fetch). This file is the one source of the client:
// rankd serves it to pages at /rankd.js (it lives in clients/web, the static dir), and
// clients/js/rankd.js re-exports it for Node and bundlers. Types: clients/js/rankd.d.ts.
//
// rankd has no cursor API (no `after(cursor)`): pages are addressed by number, and a page costs
// O(log N + page) in Redis whatever its number, so page(board, n) is the way to walk a board.

/**
 * @typedef {Object<string, string|number|boolean|null>} RankdRecord  a member's flat record
 *
 * @typedef {Object} RankdItem
 * @property {number} rank    1-based position on the board
 * @property {string} id
 * @property {number} score
 * @property {RankdRecord|null} record
 *
 * @typedef {Object} RankdPage
 * @property {string} board
 * @property {number} page    1-based page number
 * @property {number} size    entries per page
 * @property {number} total   members on the board
 * @property {number} pages   number of pages at this size
 * @property {RankdItem[]} items  empty past the last page
 *
 * @typedef {Object} RankdMember
 * @property {string} id
 * @property {number} score
 * @property {number} rank
 * @property {number} page    the page that holds this member at the size asked for
 * @property {RankdRecord|null} record
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
 * @property {number} page_size
 * @property {number} page_ttl_ms
 * @property {number} score_decimals
 * @property {number} total
 * @property {{min: number, max: number}} score_range
 *
 * @typedef {Object} RankdResponseInfo
 * @property {string} url
 * @property {number} status        the HTTP status rankd sent (304 when the cached body was reused)
 * @property {boolean} notModified  true when rankd answered 304 and the remembered body was returned
 * @property {string|null} etag
 * @property {string|null} cache    the X-Cache header: 'hit', 'miss' or 'stale' (pages only)
 * @property {number|null} age      the Age header in seconds (pages only)
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
 * @typedef {Object} SizeOptions
 * @property {number} [size]  entries per page (1..100; default: the board's page_size)
 * @property {AbortSignal} [signal]
 *
 * @typedef {Object} PageOptions
 * @property {number} [size]  entries per page (1..100; default: the board's page_size)
 * @property {number} [rank]  read the page that holds this 1-based rank (n is then ignored)
 * @property {AbortSignal} [signal]
 */

/** An error reply from rankd (`{"error":{"code","message"}}`), or a failure to reach it. */
export class RankdError extends Error {
    /**
     * @param {number} status  HTTP status; 0 when rankd could not be reached (code 'network_error')
     * @param {string} code    rankd's error code, e.g. 'board_not_found', 'redis_unavailable'
     * @param {string} message
     * @param {any} [body]     the parsed JSON error body, when there was one
     * @param {{cause?: unknown, retryAfter?: number|null, url?: string}} [extra]
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

function seg(s) {
    if (typeof s !== 'string' || s === '')
        throw new TypeError('board names and ids must be non-empty strings');
    return encodeURIComponent(s);
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
        const path = board == null ? '/rank' : `/boards/${seg(board)}/rank`;
        return this._get(path, { page: n, size }, options.signal, true);
    }

    /**
     * A member's rank, score, record and the page that holds it at `size`.
     * @param {string} board
     * @param {string} id
     * @param {SizeOptions} [options]
     * @returns {Promise<RankdMember>}
     */
    async member(board, id, options = {}) {
        return this._get(`/boards/${seg(board)}/members/${seg(id)}`, { size: options.size },
            options.signal, false);
    }

    /**
     * A page-shaped window of `size` entries centred on a member, clamped at both ends.
     * @param {string} board
     * @param {string} id
     * @param {number} [size]  default: the board's page_size
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdPage>}
     */
    async around(board, id, size, options = {}) {
        return this._get(`/boards/${seg(board)}/members/${seg(id)}/around`, { size },
            options.signal, false);
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
        return this._get(`/boards/${seg(name)}`, {}, options.signal, false);
    }

    /**
     * The record stored for an id.
     * @param {string} id
     * @param {RequestOptions} [options]
     * @returns {Promise<RankdRecord>}
     */
    async item(id, options = {}) {
        return this._get(`/items/${seg(id)}`, {}, options.signal, false);
    }

    /** Forget every remembered ETag and body. */
    clearCache() {
        this._etags.clear();
    }

    /**
     * @param {string} path
     * @param {Record<string, number|undefined>} query
     * @param {AbortSignal|undefined} signal
     * @param {boolean} conditional  remember ETags and send If-None-Match
     */
    async _get(path, query, signal, conditional) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query))
            if (v !== undefined && v !== null)
                params.set(k, String(v));
        const qs = params.toString();
        const url = this.baseUrl + path + (qs ? `?${qs}` : '');
        const useEtag = conditional && this._etagMax > 0;
        const cached = useEtag ? this._etags.get(url) : undefined;
        /** @type {Record<string, string>} */
        const headers = { ...this._headers };
        if (cached)
            headers['If-None-Match'] = cached.etag;
        this.stats.requests++;
        let res;
        try {
            res = await this._fetch(url, { method: 'GET', headers, signal });
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
