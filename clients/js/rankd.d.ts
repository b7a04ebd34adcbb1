// Types of the rankd read client (clients/web/rankd.js, re-exported by clients/js/rankd.js).

/** A member's flat record: strings, numbers, booleans and nulls. */
export type RankdRecord = Record<string, string | number | boolean | null>;

export interface RankdItem {
    /** 1-based position on the board */
    rank: number;
    id: string;
    score: number;
    record: RankdRecord | null;
}

export interface RankdPage {
    board: string;
    /** 1-based page number */
    page: number;
    /** entries per page */
    size: number;
    /** members on the board */
    total: number;
    /** number of pages at this size */
    pages: number;
    /** empty past the last page */
    items: RankdItem[];
}

export interface RankdMember {
    id: string;
    score: number;
    rank: number;
    /** the page that holds this member at the size asked for */
    page: number;
    record: RankdRecord | null;
}

export interface RankdBoardSummary {
    board: string;
    total: number;
}

export interface RankdBoards {
    boards: RankdBoardSummary[];
    /** Pass it as `cursor` for the next page; null on the last page. */
    next_cursor: string | null;
}

export interface BoardsOptions extends RequestOptions {
    /** The next_cursor of the previous page. */
    cursor?: string;
    /** Boards per page, 1..1000 (the default). */
    count?: number;
}

export interface RankdBoardSettings {
    board: string;
    order: 'desc' | 'asc';
    tiebreak: 'first' | 'last' | 'id';
    page_size: number;
    page_ttl_ms: number;
    score_decimals: number;
    total: number;
    score_range: { min: number; max: number };
}

export interface RankdResponseInfo {
    url: string;
    /** the HTTP status rankd sent (304 when the remembered body was reused) */
    status: number;
    /** true when rankd answered 304 and the remembered body was returned */
    notModified: boolean;
    etag: string | null;
    /** the X-Cache header: 'hit', 'miss' or 'stale' (pages only) */
    cache: string | null;
    /** the Age header in seconds (pages only) */
    age: number | null;
}

export interface RankdClientOptions {
    /** rankd's address, e.g. 'http://127.0.0.1:8080'; in a browser page it defaults to the page's origin */
    baseUrl?: string | URL;
    /** a fetch implementation (default: globalThis.fetch) */
    fetch?: typeof fetch;
    /** extra request headers */
    headers?: Record<string, string>;
    /** pages remembered for If-None-Match (default 200; 0 turns ETag reuse off) */
    etagCacheSize?: number;
}

export interface RequestOptions {
    signal?: AbortSignal;
}

export interface SizeOptions extends RequestOptions {
    /** entries per page, 1..100 (default: the board's page_size) */
    size?: number;
}

export interface PageOptions extends SizeOptions {
    /** read the page that holds this 1-based rank (n is then ignored); without size, the board's
     * page_size is read first (one more request) */
    rank?: number;
}

/** An error reply from rankd (`{"error":{"code","message"}}`), or a failure to reach it. */
export class RankdError extends Error {
    constructor(
        status: number,
        code: string,
        message: string,
        body?: unknown,
        extra?: { cause?: unknown; retryAfter?: number | null; url?: string },
    );
    name: 'RankdError';
    /** HTTP status; 0 when rankd could not be reached */
    status: number;
    /** rankd's error code ('board_not_found', 'member_not_found', 'invalid_parameter',
     * 'redis_unavailable', ...), 'network_error' when rankd could not be reached, or
     * 'http_<status>' for a reply without rankd's JSON error body */
    code: string;
    /** the parsed JSON error body, e.g. {error: {code, message}}; null when there was none */
    body: any;
    /** seconds from Retry-After (rankd sends 1 with 503 redis_unavailable) */
    retryAfter: number | null;
    url?: string;
}

/** A client for one rankd. Aborted requests reject with the signal's AbortError, not a RankdError. */
export class RankdClient {
    constructor(options?: RankdClientOptions);
    /** rankd's base URL, without a trailing slash */
    readonly baseUrl: string;
    /** request counters */
    readonly stats: { requests: number; notModified: number };
    /**
     * One page of a board (null: rankd's --default-board), or with `rank` the page that holds that
     * rank. A repeated page sends If-None-Match and a 304 returns the remembered body.
     */
    page(board: string | null, n?: number, options?: PageOptions): Promise<RankdPage>;
    /** A member's rank, score, record and the page that holds it at `size`. */
    member(board: string, id: string, options?: SizeOptions): Promise<RankdMember>;
    /** A page-shaped window of `size` entries centred on a member, clamped at both ends. */
    around(board: string, id: string, size?: number, options?: RequestOptions): Promise<RankdPage>;
    /** A page of boards (all of them when there are fewer than `count`) and their totals. */
    boards(options?: BoardsOptions): Promise<RankdBoards>;
    /** A board's settings, total and exact score range. */
    board(name: string, options?: RequestOptions): Promise<RankdBoardSettings>;
    /** The record stored for an id. */
    item(id: string, options?: RequestOptions): Promise<RankdRecord>;
    /** Forget every remembered ETag and body. */
    clearCache(): void;
}

/** Shorthand for `new RankdClient({ ...options, baseUrl })`. */
export function createClient(
    baseUrl?: string | URL,
    options?: Omit<RankdClientOptions, 'baseUrl'>,
): RankdClient;

/** How the reply that produced `result` arrived (status, 304 reuse, ETag, X-Cache, Age). */
export function responseInfo(result: object): RankdResponseInfo | undefined;
