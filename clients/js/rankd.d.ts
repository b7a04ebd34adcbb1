// Types of the rankd client (clients/web/rankd.js, re-exported by clients/js/rankd.js): the read
// client RankdClient and the write client RankdWriteClient (servers only: it holds the write token).

/** A member's flat record: strings, numbers, booleans and nulls. */
export type RankdRecord = Record<string, string | number | boolean | null>;

/**
 * How a read ranks members (`?rank=`): 'ordinal' (the default: the position, 1 2 3 4),
 * 'competition' (1 + members with a strictly better score: 1 2 2 4) or 'dense' (1 + distinct
 * better scores: 1 2 2 3). Ranks are global: a tie group across a page edge has one rank.
 */
export type RankdRankType = 'ordinal' | 'competition' | 'dense';

export interface RankdItem {
    /** 1-based and global: the position on the board, or the rank of the rank type asked */
    rank: number;
    id: string;
    score: number;
    /** on a board with sub-scores only: its sub-scores, in column order */
    subscores?: number[];
    /** on a board with track_updated_at only: when its score last changed, ms since the Unix
     * epoch (null: a time rankd does not have; a cached page's as of when it was computed) */
    updated_at?: number | null;
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
    /** rank pages: the cursor for the page after this one (pass it as `after`); null on the last */
    next?: string | null;
    /** rank pages: the cursor for the page before this one (pass it as `before`); null on the first */
    prev?: string | null;
    /** empty past the last page */
    items: RankdItem[];
    /** with the `with` option: the members named that are on the board, in rank order (read
     * live, also on a cached page) */
    with?: RankdWithItem[];
    /** with the `with` option: the ids named that are not on the board, in the order asked */
    missing?: string[];
}

/** A member read with a page (`with`): where it is, wherever that is. */
export interface RankdWithItem {
    /** of the rank type asked (ordinal by default) */
    rank: number;
    id: string;
    score: number;
    /** on a board with sub-scores only */
    subscores?: number[];
    /** on a board with track_updated_at only: when its score last changed, ms since the Unix
     * epoch (null: a time rankd does not have; a cached page's as of when it was computed) */
    updated_at?: number | null;
    /** the page that holds this member at the page's size */
    page: number;
    record: RankdRecord | null;
}

export interface RankdMember {
    id: string;
    score: number;
    /** on a board with sub-scores only */
    subscores?: number[];
    /** of the rank type asked (ordinal by default) */
    rank: number;
    /** the page that holds this member's position at the size asked for */
    page: number;
    /** 100 * (total - position) / total, rounded half up to two decimals (the last member: 0) */
    percentile: number;
    /** a board with track_updated_at: when its score last changed, ms since the Unix epoch */
    updated_at?: number | null;
    record: RankdRecord | null;
}

export interface RankdMembers {
    board: string;
    /** the members found, in rank order */
    items: RankdItem[];
    /** the ids asked that are not on the board (the period read), in the order asked */
    missing: string[];
}

export interface RankdPercentile {
    /** the percentile asked */
    p: number;
    /** the ordinal rank max(1, ceil(total * (100 - p) / 100)); null on an empty board */
    rank: number | null;
    id: string | null;
    score: number | null;
    /** on a board with sub-scores only (and a member at that percentile) */
    subscores?: number[];
    /** on a board with track_updated_at only (and a member at that percentile): when its score
     * last changed, ms since the Unix epoch */
    updated_at?: number | null;
}

export interface RankdTopPage extends RankdPage {
    /** ceil(total * percent / 100), exactly; `items` holds its first 100 at most */
    count: number;
}

export interface RankdMemberOnBoard {
    board: string;
    /** null where the board or the member is absent */
    rank: number | null;
    score: number | null;
    /** on a board with sub-scores that holds the member only */
    subscores?: number[];
    percentile: number | null;
    /** on a board with track_updated_at where the member is: when its score last changed, ms
     * since the Unix epoch */
    updated_at?: number | null;
}

export interface RankdMemberBoards {
    id: string;
    /** in the order asked, each board once */
    boards: RankdMemberOnBoard[];
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

/**
 * How pages show a board's scores (the board's `score_format`): 'integer' (the default) digits
 * grouped, 'decimal' with score_decimals fraction digits, 'duration_ms' milliseconds as m:ss.mmm
 * (h:mm:ss.mmm from an hour on).
 */
export type RankdScoreFormat = 'integer' | 'decimal' | 'duration_ms';

export interface RankdBoardSettings {
    board: string;
    order: 'desc' | 'asc';
    tiebreak: 'first' | 'last' | 'id';
    /** 'wide': a first|last board takes |score| up to 2^53 - 1 (about 80 bytes more per member) */
    score_layout: 'packed' | 'wide';
    /** a board with sub-scores only: their directions, in the order they break ties of the score */
    subscores?: RankdSubscoreDirection[];
    page_size: number;
    page_ttl_ms: number;
    score_decimals: number;
    /** how pages show the scores (display only): see RankdScoreFormat */
    score_format: RankdScoreFormat;
    /** each entry keeps when its score last changed (every entry a read returns carries
     * `updated_at`) */
    track_updated_at: boolean;
    total: number;
    score_range: { min: number; max: number };
    period: RankdPeriodKind;
    /** 'UTC', a fixed offset such as '+02:00', or an IANA time zone such as 'Europe/Paris' */
    timezone: string;
    /** past periods that stay readable */
    retain: number;
    /** the board keeps its best this many members (every write removes the worst past it); null: no limit */
    max_members: number | null;
    /** the board's write counter: every score write adds one (see PageOptions.minVersion) */
    version: number;
    /** periodic boards only: the period written to and read by default, e.g. '2026-W49' */
    current_period?: string;
    /** periodic boards only: every readable period id, newest first (the current one first) */
    periods?: string[];
}

/** A sub-score's direction: 'desc' (higher ranks first) or 'asc' (lower ranks first). */
export type RankdSubscoreDirection = 'desc' | 'asc';

export type RankdPeriodKind = 'none' | 'hourly' | 'daily' | 'weekly' | 'monthly';

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
    /** score writes: true when rankd answered from the Idempotency-Key's record
     * (`Idempotent-Replayed: true`): an earlier request had applied the write */
    replayed?: boolean;
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

export interface ReadOptions extends RequestOptions {
    /** entries per page, 1..100 (default: the board's page_size) */
    size?: number;
    /**
     * A periodic board's period to read instead of the current one: '2026-11-30T14' (hourly),
     * '2026-11-30' (daily), '2026-W49' (weekly), '2026-11' (monthly). GET /boards/{board}
     * (`board()`) lists the readable ones. Absent or '': the current period. On a board without
     * periods any other value is 400 board_has_no_periods; an unreadable one 404 period_not_found.
     */
    period?: string;
    /** The ranks' type (`?rank=`), on the reads that return ranks; default 'ordinal'. Dense
     * ranks of a set an older rankd wrote are 409 dense_rank_unavailable. */
    rankType?: RankdRankType;
    /** member(), around() and page(): never an answer from before this write counter: pass a
     * write's `version` to see that write (`?min_version=`; with --read-from-replicas, a
     * replica's older answer is asked of the primary instead) */
    minVersion?: number;
}

/** The older name of ReadOptions. */
export type SizeOptions = ReadOptions;

export interface PageOptions extends ReadOptions {
    /** read the page that holds this 1-based rank (n is then ignored); without size, the board's
     * page_size is read first (one more request) */
    rank?: number;
    /** never a page computed before this write counter: pass a write's `version` to see that
     * write on the page (`?min_version=`) */
    minVersion?: number;
    /** A page's `next` cursor: the page after it, by its last member, wherever members moved
     * (n is ignored). 410 cursor_expired after a reset, a layout change or a re-created board. */
    after?: string;
    /** A page's `prev` cursor: the page before it (n is ignored). */
    before?: string;
    /** 1 to 20 ids to read with the page wherever they are (top N plus me; each once): the page
     * then carries `with` and `missing`. A page by number only (not with after, before, min,
     * max). On a board that caches pages the page stays cached and the members are read live. */
    with?: string[];
    /** Only members whose score is at least `min` (inclusive; a string keeps the exact literal);
     * `total` and `pages` then count the members in the range. */
    min?: number | string;
    /** Only members whose score is at most `max` (inclusive). */
    max?: number | string;
}

export interface WatchOptions extends RequestOptions {
    /** entries per page, 1..100 (default: the board's page_size) */
    size?: number;
    /** a periodic board's period to watch instead of the current one (as ReadOptions.period) */
    period?: string;
    /** the ranks' type (`?rank=`; default 'ordinal') */
    rankType?: RankdRankType;
    /** watch page n of a score range: members scoring at least `min` (inclusive; a string keeps
     * the exact literal) */
    min?: number | string;
    /** ... and at most `max` (inclusive) */
    max?: number | string;
    /** 1 to 20 ids pushed with the page wherever they are (each once; a page by number only, not
     * with min or max), read again with it each time: the page carries `with` and `missing` */
    with?: string[];
    /** the ETag of the page the caller already has: not yielded again while it is current */
    lastEventId?: string;
}

export interface ExportOptions extends RequestOptions {
    /** a readable period of a periodic board (as ReadOptions.period) */
    period?: string;
}

export interface RankdExportRow {
    /** 1..N in order, each once */
    rank: number;
    id: string;
    score: number;
    /** on a board with sub-scores only */
    subscores?: number[];
    /** on a board with track_updated_at only: when its score last changed, ms since the Unix
     * epoch, read with the records when the rows are read */
    updated_at?: number | null;
    record: RankdRecord | null;
}

/** An error reply from rankd (`{"error":{"code","message"}}`), or a failure to reach it. */
export class RankdError extends Error {
    constructor(
        status: number,
        code: string,
        message: string,
        body?: unknown,
        extra?: { cause?: unknown; retryAfter?: number | null; url?: string; outcomeUnknown?: boolean; idempotent?: boolean },
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
    /**
     * True when a write may or may not have been applied: code 'write_outcome_unknown' (503), or
     * the connection failed after the write was sent (status 0, code 'network_error'), or it was
     * applied on the primary but fewer replicas than rankd's --write-replicas acknowledged it in
     * time (code 'write_not_replicated', 503: a failover could still lose it). Not safe to retry
     * blindly: read the member (or board) first, above all before retrying an `incr`.
     */
    outcomeUnknown: boolean;
    /** True when the request was a score write with an Idempotency-Key: rankd applies it at most
     * once, so sending it again with the same key and body is safe even when `outcomeUnknown`. */
    idempotent: boolean;
    /**
     * Whether sending the same request again may succeed: true for status 0 (rankd unreachable),
     * 429, 502, 503 and 504; false for other statuses (a 404 board stays missing, a 400 stays
     * invalid) and when `outcomeUnknown` is true, unless `idempotent` is.
     */
    readonly retryable: boolean;
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
    /** A member's rank, score, record and the page that holds it at `size` (in `period`). */
    member(board: string, id: string, options?: ReadOptions): Promise<RankdMember>;
    /** A page-shaped window of `size` entries centred on a member (in `period`), clamped at both ends. */
    around(board: string, id: string, options?: ReadOptions): Promise<RankdPage>;
    /** @deprecated the positional size: use `around(board, id, { size, signal })`. */
    around(board: string, id: string, size: number | undefined, options?: RequestOptions): Promise<RankdPage>;
    /** A page of boards (all of them when there are fewer than `count`) and their totals. */
    boards(options?: BoardsOptions): Promise<RankdBoards>;
    /** A board's settings, total and exact score range. */
    board(name: string, options?: RequestOptions): Promise<RankdBoardSettings>;
    /** The record stored for an id. */
    item(id: string, options?: RequestOptions): Promise<RankdRecord>;
    /**
     * GET /boards/{board}/export: the whole board (or a readable period) as it was when the
     * export started, however it changes meanwhile; rows in rank order, ranks 1..N, each member
     * once, read as they arrive. A cut reply rejects with a RankdError (network_error).
     */
    exportRows(board: string, options?: ExportOptions): AsyncGenerator<RankdExportRow>;
    /**
     * A page now and each time it changes, pushed by rankd as server-sent events (Accept:
     * text/event-stream; one read per page_ttl_ms for all viewers). Reconnects by itself with
     * Last-Event-ID (a cut connection, rankd restarting, a 503); rejects with a RankdError when
     * the board or period is gone (404) or the request is refused; stops when the loop breaks or
     * the signal aborts. responseInfo(page).etag is the page's ETag. A page by number, or page n
     * of a score range (options.min, options.max); a cursor is not watched (TypeError).
     */
    watch(board: string | null, n?: number, options?: WatchOptions): AsyncGenerator<RankdPage>;
    /**
     * Many members by id (1..1000), in rank order, with the ids not on the board in `missing`.
     * Up to 100 go as GET .../members?ids= (any id, ',' included), more as POST .../lookup (a
     * read: no token; not offered cross-origin).
     */
    members(board: string, ids: string[], options?: ReadOptions): Promise<RankdMembers>;
    /** `size` entries centred on the first member whose score is `score` or worse (a string keeps
     * the exact literal); 422 invalid_score / score_out_of_range as for writes. */
    aroundScore(board: string, score: number | string, options?: ReadOptions): Promise<RankdPage>;
    /** The member at percentile `p` (0..100, at most 4 decimals), by nearest rank. */
    percentile(board: string, p: number | string, options?: ReadOptions): Promise<RankdPercentile>;
    /** The first ceil(total * percent / 100) members, at most 100 of them, with `count`. */
    top(board: string, percent: number | string, options?: ReadOptions): Promise<RankdTopPage>;
    /** One member on 1..20 boards (each in its current period), null where absent. */
    memberBoards(id: string, boards: string[],
        options?: RequestOptions & { rankType?: RankdRankType }): Promise<RankdMemberBoards>;
    /** Forget every remembered ETag and body. */
    clearCache(): void;
}

export interface RankdWriteClientOptions extends RankdClientOptions {
    /** rankd's --write-token / RANKD_WRITE_TOKEN, sent as `Authorization: Bearer <token>` */
    token: string;
}

/** Options of the score writes (writeScore, writeScores, writeScoreBoards). */
export interface WriteOptions extends RequestOptions {
    /**
     * Sent as the `Idempotency-Key` header (true: a random UUID), 1..128 visible ASCII: rankd
     * applies the write at most once for that key (24 hours, per board) and answers a repeat with
     * the first reply (`responseInfo(result).replayed`); the same key with another body is 422
     * idempotency_key_reused. Reuse the same key when retrying the same write.
     */
    idempotencyKey?: string | boolean;
}

export interface RankdScoreEntry {
    id: string;
    score: number;
    /** 'set' (default): store it; 'best': keep the better of stored and new; 'incr': add it */
    op?: 'set' | 'best' | 'incr';
    /** stored at /items/{id}, replacing the previous record */
    record?: RankdRecord;
    /** incr only: the result never goes below it (judged exactly, like the score) */
    floor?: number;
    /** incr only: the result never goes above it */
    ceiling?: number;
    /**
     * Required on a board with sub-scores (refused elsewhere): one integer per column, |n| <=
     * 2^53 - 1, sent as plain digits (a JS integer number is). set stores them; best keeps the
     * better (score, sub-scores) tuple; incr adds them element-wise.
     */
    subscores?: number[];
}

export interface RankdWriteResult {
    id: string;
    /** the score stored after the write (for a `best` that lost, the old one) */
    score: number;
    /** on a board with sub-scores only: those stored with `score` (a `best` that lost: the old
     * ones; `incr`: the sums) */
    subscores?: number[];
    /** the member's rank after the write; null when max_members left it off the board */
    rank: number | null;
    /** whether the stored score changed */
    updated: boolean;
    /** the score before the write; null when the member was new */
    prev_score: number | null;
    /** on a board with sub-scores only: those stored before the write; null when the member was
     * new */
    prev_subscores?: number[] | null;
    /** the rank before the write; null when the member was new */
    prev_rank: number | null;
    /** the board's write counter after the write */
    version: number;
}

export interface RankdEntryResult {
    /** this entry's result */
    score: number;
    /** on a board with sub-scores only: the sub-scores of this entry's result */
    subscores?: number[];
    /** the member's rank after the whole batch (null: max_members left it off) */
    rank: number | null;
    updated: boolean;
}

export interface RankdBoardWriteResult extends Omit<RankdWriteResult, 'id'> {
    board: string;
}

export interface RankdBoardsWriteResult {
    id: string;
    /** each board's result, in the order given */
    boards: RankdBoardWriteResult[];
}

export interface RankdRejection {
    error: { code: string; message: string };
    /** 1-based line number in an NDJSON upload */
    line?: number;
    /** 0-based index in a batch (batches are all or nothing, so never present today) */
    index?: number;
}

export interface RankdBatchResult {
    applied: number;
    /** always empty: a batch is all or nothing */
    rejected: RankdRejection[];
    /** each entry's result, in entry order */
    results: RankdEntryResult[];
    /** the board's write counter after the batch */
    version: number;
}

export interface RankdStreamResult {
    /** lines applied */
    applied: number;
    /** lines rejected, all of them */
    rejected_total: number;
    /** the first 1000 rejected lines, in line order */
    rejected: RankdRejection[];
    /** the board's write counter after the last chunk written (null: nothing was written) */
    version: number | null;
}

/**
 * The body of the error an NDJSON upload cut part-way rejects with (`RankdError.body`: a Redis
 * fault, or rankd stopping): where it stands. Resend the lines after `settled_through_line`,
 * never one before it.
 */
export interface RankdUploadCut {
    error: { code: string; message: string };
    /** lines applied, all at or before settled_through_line */
    applied: number;
    /** lines rejected at or before settled_through_line */
    rejected_total: number;
    /** every line up to this one (1-based; 0: none) is applied or rejected */
    settled_through_line: number;
    /** null, or (write_outcome_unknown) the last line of a chunk that reached Redis unanswered:
     * the lines after settled_through_line up to it may or may not be applied */
    unknown_through_line: number | null;
}

export interface RankdBoardSettingsInput {
    order?: 'desc' | 'asc';
    tiebreak?: 'first' | 'last' | 'id';
    /** 'wide': a first|last board takes |score| up to 2^53 - 1; changes only while empty */
    score_layout?: 'packed' | 'wide';
    /**
     * Up to 4 sub-score directions ordering equal scores before the tiebreak (the board is then
     * wide); [] removes them; changes only while the board is empty. Not on Redis Cluster.
     */
    subscores?: RankdSubscoreDirection[];
    /** 1..100 */
    page_size?: number;
    page_ttl_ms?: number;
    /** 0..9 */
    score_decimals?: number;
    /** keep each entry's updated_at (when its score last changed); changes only while empty */
    track_updated_at?: boolean;
    /** how pages show the scores; display only, so it can change while the board has members */
    score_format?: RankdScoreFormat;
    period?: RankdPeriodKind;
    /**
     * 'UTC', a fixed offset such as '+02:00' (no daylight saving), or an IANA time zone such as
     * 'Europe/Paris' whose local midnight the periods follow through daylight-saving changes
     * (a daily period then lasts 23 or 25 hours); an unknown zone is 400 unknown_timezone
     */
    timezone?: string;
    /** past periods kept readable, 0..400 */
    retain?: number;
    /** keep the best this many members, 0..100,000,000 (0: no limit) */
    max_members?: number;
}

/**
 * What `uploadNdjson` sends: a Node Readable (byte chunks are sent as they are; an object-mode
 * stream of entries works too), any iterable or async iterable of entries (one JSON line each),
 * strings or bytes (NDJSON text as it is), a web ReadableStream of bytes, or one string or
 * Uint8Array of NDJSON.
 */
export type NdjsonSource =
    | string
    | Uint8Array
    | ReadableStream<Uint8Array>
    | Iterable<RankdScoreEntry | string | Uint8Array>
    | AsyncIterable<RankdScoreEntry | string | Uint8Array>;

/**
 * The read client plus every write, for servers (the token must not reach a browser). Errors are
 * RankdErrors; see `outcomeUnknown` before retrying a write.
 */
export class RankdWriteClient extends RankdClient {
    constructor(options: RankdWriteClientOptions);
    /** POST /boards/{board}/scores with one entry. */
    writeScore(board: string, entry: RankdScoreEntry, options?: WriteOptions): Promise<RankdWriteResult>;
    /** POST /boards/{board}/scores with `{"entries": [...]}`: up to 1000, in order, all or nothing. */
    writeScores(board: string, entries: RankdScoreEntry[], options?: WriteOptions): Promise<RankdBatchResult>;
    /** POST /scores: one entry on 1..20 boards, all or nothing (an unknown board: 404 for all). */
    writeScoreBoards(boards: string[], entry: RankdScoreEntry, options?: WriteOptions): Promise<RankdBoardsWriteResult>;
    /**
     * POST /boards/{board}/scores as `application/x-ndjson`, streamed: any length; bad lines are
     * rejected one by one and reported, the others applied. If the source throws, the upload
     * rejects with that error (lines sent before it may have been applied). Cut part-way by a
     * Redis fault or rankd stopping, it rejects with a RankdError whose `body` is a
     * RankdUploadCut (where to resume).
     */
    uploadNdjson(board: string, source: NdjsonSource, options?: RequestOptions): Promise<RankdStreamResult>;
    /** PUT /boards/{board}: create or update the settings; returns them. */
    putBoard(board: string, settings?: RankdBoardSettingsInput, options?: RequestOptions): Promise<RankdBoardSettings>;
    /** DELETE /boards/{board}. */
    deleteBoard(board: string, options?: RequestOptions): Promise<void>;
    /** POST /boards/{board}/reset: empty the current period (or the board). */
    resetBoard(board: string, options?: RequestOptions): Promise<void>;
    /** DELETE /boards/{board}/members?keep=N or ?below=SCORE (exactly one). */
    trim(board: string, which: { keep: number; below?: undefined } | { below: number | string; keep?: undefined },
        options?: RequestOptions): Promise<{ removed: number }>;
    /** DELETE /boards/{board}/members/{id} (from the current period). */
    deleteMember(board: string, id: string, options?: RequestOptions): Promise<void>;
    /** PUT /items/{id}: store (create or replace) a record. */
    putItem(id: string, record: RankdRecord, options?: RequestOptions): Promise<void>;
    /** DELETE /items/{id}. */
    deleteItem(id: string, options?: RequestOptions): Promise<void>;
}

/** Shorthand for `new RankdClient({ ...options, baseUrl })`. */
export function createClient(
    baseUrl?: string | URL,
    options?: Omit<RankdClientOptions, 'baseUrl'>,
): RankdClient;

/** How the reply that produced `result` arrived (status, 304 reuse, ETag, X-Cache, Age). */
export function responseInfo(result: object): RankdResponseInfo | undefined;
