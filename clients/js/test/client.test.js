// The JS read client against a real rankd: pages, members, around, periods, boards, errors, abort,
// ETag reuse. Writes: write.test.js; the npm package: package.test.js.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';

import * as viaJs from '../rankd.js';
import * as viaWeb from '../../web/rankd.js';
import { RankdClient, RankdError, RankdWriteClient, createClient, responseInfo } from '../rankd.js';
import { BASE, closedPort, recordingFetch, requireEnv, uniqueBoard, write } from './support.js';

const ODD = 'a/b c+é'; // an id that needs percent-encoding: '/', ' ', '+', UTF-8
const board = uniqueBoard('js');
const cached = uniqueBoard('jscache');
const weekly = uniqueBoard('jsweekly');

/** The 26 members of `board`, in rank order: p01 (1000) .. p25 (760), then ODD (5). */
const members = [];
for (let i = 1; i <= 25; i++) {
    const id = `p${String(i).padStart(2, '0')}`;
    members.push({ id, score: 1010 - 10 * i, record: { name: `Player ${i}`, team: i % 2 ? 'red' : 'blue' } });
}
members.push({ id: ODD, score: 5, record: { name: 'Odd One', team: 'none' } });

let client;

before(async () => {
    requireEnv();
    client = new RankdClient({ baseUrl: BASE });
    // page_ttl_ms 0: pages are computed on every read, so a write shows at once (ETag tests).
    await write('PUT', `/boards/${board}`, { page_size: 10, page_ttl_ms: 0 });
    const r = await write('POST', `/boards/${board}/scores`, { entries: members });
    assert.equal(r.applied, members.length);
    await write('PUT', `/boards/${cached}`, { page_size: 5 });
    await write('POST', `/boards/${cached}/scores`, { entries: members.slice(0, 12) });
    await write('PUT', `/boards/${weekly}`, { period: 'weekly', retain: 2, page_size: 3, page_ttl_ms: 0 });
    await write('POST', `/boards/${weekly}/scores`, { entries: members.slice(0, 5) });
});

after(async () => {
    if (!BASE) return;
    await fetch(`${BASE}/boards/${board}`, { method: 'DELETE', headers: { Authorization: `Bearer ${process.env.RANKD_WRITE_TOKEN}` } });
    await fetch(`${BASE}/boards/${cached}`, { method: 'DELETE', headers: { Authorization: `Bearer ${process.env.RANKD_WRITE_TOKEN}` } });
    await fetch(`${BASE}/boards/${weekly}`, { method: 'DELETE', headers: { Authorization: `Bearer ${process.env.RANKD_WRITE_TOKEN}` } });
});

function expectItems(items, fromRank, count) {
    assert.equal(items.length, count);
    items.forEach((it, k) => {
        const m = members[fromRank - 1 + k];
        assert.deepEqual(it, { rank: fromRank + k, id: m.id, score: m.score, record: m.record });
    });
}

describe('boards and settings', () => {
    it('boards() lists the seeded board with its total', async () => {
        const r = await client.boards();
        assert.ok(Array.isArray(r.boards));
        assert.deepEqual(r.boards.find((b) => b.board === board), { board, total: 26 });
        assert.equal(r.next_cursor, null);
    });

    it('boards({cursor, count}) pages the registry until next_cursor is null', async () => {
        const names = [];
        let cursor;
        for (let pages = 0; pages < 100; pages++) {
            const r = await client.boards({ cursor, count: 1 });
            names.push(...r.boards.map((b) => b.board));
            if (r.next_cursor === null)
                break;
            assert.equal(typeof r.next_cursor, 'string');
            cursor = r.next_cursor;
        }
        assert.ok(names.includes(board));
    });

    it('board(name) returns the settings', async () => {
        const s = await client.board(board);
        assert.equal(s.board, board);
        assert.equal(s.page_size, 10);
        assert.equal(s.page_ttl_ms, 0);
        assert.equal(s.order, 'desc');
        assert.equal(s.tiebreak, 'first');
        assert.equal(s.total, 26);
        assert.deepEqual(s.score_range, { min: -4294967295, max: 4294967295 });
    });
});

describe('pages', () => {
    it('page 1 at the board size', async () => {
        const p = await client.page(board, 1);
        assert.equal(p.board, board);
        assert.equal(p.page, 1);
        assert.equal(p.size, 10);
        assert.equal(p.total, 26);
        assert.equal(p.pages, 3);
        expectItems(p.items, 1, 10);
    });

    it('the last, partial page ends with the percent-encoded id', async () => {
        const p = await client.page(board, 3);
        expectItems(p.items, 21, 6);
        assert.equal(p.items.at(-1).id, ODD);
    });

    it('a page past the end is empty with the true total', async () => {
        const p = await client.page(board, 4);
        assert.deepEqual(p.items, []);
        assert.equal(p.total, 26);
        assert.equal(p.pages, 3);
    });

    it('size overrides the board page size', async () => {
        const p = await client.page(board, 2, { size: 5 });
        assert.equal(p.size, 5);
        assert.equal(p.pages, 6);
        expectItems(p.items, 6, 5);
    });

    it('n defaults to 1, and board null reads /rank (the default board)', async () => {
        expectItems((await client.page(board)).items, 1, 10);
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        await c.page(null, 2, { size: 3 }).catch((e) => assert.equal(e.code, 'board_not_found'));
        assert.equal(new URL(log[0].url).pathname + new URL(log[0].url).search, '/rank?page=2&size=3');
    });

    it('{rank} reads the page that holds a rank', async () => {
        const p = await client.page(board, 1, { rank: 13 }); // board page_size 10: page 2
        assert.equal(p.page, 2);
        expectItems(p.items, 11, 10);
        const q = await client.page(board, undefined, { rank: 13, size: 4 });
        assert.equal(q.page, 4);
        expectItems(q.items, 13, 4);
        await assert.rejects(client.page(board, 1, { rank: 0 }), TypeError);
        await assert.rejects(client.page(null, 1, { rank: 3 }), TypeError);
    });

    it('createClient() and a trailing slash in the base URL', async () => {
        const c = createClient(`${BASE}/`);
        assert.equal(c.baseUrl, BASE);
        assert.equal((await c.page(board, 1, { size: 1 })).items[0].id, 'p01');
    });
});

describe('members', () => {
    it('member() gives rank, score, page, percentile and record', async () => {
        const m = await client.member(board, 'p13');
        // percentile: 100 * (26 - 13) / 26
        assert.deepEqual(m, { id: 'p13', score: members[12].score, rank: 13, page: 2, percentile: 50, record: members[12].record });
    });

    it('member() with size computes the page at that size', async () => {
        assert.equal((await client.member(board, 'p13', { size: 5 })).page, 3);
        assert.equal((await client.member(board, 'p13', { size: 13 })).page, 1);
    });

    it('ids with / space + and UTF-8 are encoded once', async () => {
        const m = await client.member(board, ODD);
        assert.equal(m.id, ODD);
        assert.equal(m.rank, 26);
        assert.equal(m.page, 3);
        assert.deepEqual(await client.item(ODD), { name: 'Odd One', team: 'none' });
    });

    it("ids and board names '.' and '..' are refused in a path, never sent somewhere else", async () => {
        // a URL parser removes a path's '.' and '..' segments, %2E or not (/boards/b/members/.. is
        // /boards/b/, /boards/../rank is /rank: the default board): no request at all
        const dots = uniqueBoard('jsdots');
        await write('POST', `/boards/${dots}/scores`, { entries: [{ id: '..', score: 5 }, { id: '.', score: 3 }] });
        try {
            const log = [];
            const rec = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
            const w = new RankdWriteClient({ baseUrl: BASE, token: process.env.RANKD_WRITE_TOKEN, fetch: recordingFetch(log) });
            for (const call of [() => rec.member(dots, '..'), () => rec.member(dots, '.'), () => rec.around(dots, '..'),
                () => rec.page('..', 1), () => rec.page('.', 1), () => rec.item('..'), () => w.deleteMember(dots, '..')])
                await assert.rejects(async () => call(), TypeError);
            assert.deepEqual(log, []);
            const l = await rec.members(dots, ['..', '.']);
            assert.deepEqual(l.items.map((it) => `${it.id}:${it.rank}`), ['..:1', '.:2']);
            assert.equal((await rec.page(dots, 1)).total, 2);
        } finally {
            await fetch(`${BASE}/boards/${dots}`, { method: 'DELETE', headers: { Authorization: `Bearer ${process.env.RANKD_WRITE_TOKEN}` } });
        }
    });

    it('around(board, id, {size}) centres on the member', async () => {
        const p = await client.around(board, 'p13', { size: 5 });
        assert.equal(p.size, 5);
        assert.equal(p.total, 26);
        expectItems(p.items, 11, 5);
    });

    it('around() is clamped at both ends', async () => {
        expectItems((await client.around(board, 'p01', { size: 5 })).items, 1, 5);
        expectItems((await client.around(board, ODD, { size: 4 })).items, 23, 4);
    });

    it('around() without size (or with {}) uses the board page size', async () => {
        for (const p of [await client.around(board, 'p20'), await client.around(board, 'p20', {})]) {
            assert.equal(p.size, 10);
            assert.equal(p.items.length, 10);
            assert.ok(p.items.some((it) => it.id === 'p20'));
        }
    });

    it('the deprecated positional around(board, id, size, {signal}) still works', async () => {
        expectItems((await client.around(board, 'p13', 5)).items, 11, 5);
        const ctl = new AbortController();
        expectItems((await client.around(board, 'p13', 3, { signal: ctl.signal })).items, 12, 3);
        expectItems((await client.around(board, 'p13', undefined, {})).items, 8, 10);
        ctl.abort();
        const e = await client.around(board, 'p13', 3, { signal: ctl.signal }).catch((err) => err);
        assert.equal(e.name, 'AbortError');
        await assert.rejects(client.around(board, 'p13', 'five'), TypeError);
    });

    it('around({size, signal}) sends size and honours the signal', async () => {
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        await c.around(board, 'p13', { size: 7 });
        assert.equal(new URL(log[0].url).search, '?size=7');
        const ctl = new AbortController();
        ctl.abort();
        const e = await c.around(board, 'p13', { size: 7, signal: ctl.signal }).catch((err) => err);
        assert.equal(e.name, 'AbortError');
    });
});

describe('periods', () => {
    it('board() lists current_period and the readable periods, newest first', async () => {
        const s = await client.board(weekly);
        assert.equal(s.period, 'weekly');
        assert.match(s.current_period, /^\d{4}-W\d{2}$/);
        assert.equal(s.periods.length, 3); // the current one and retain 2
        assert.equal(s.periods[0], s.current_period);
        assert.deepEqual([...s.periods].sort().reverse(), s.periods);
        const plain = await client.board(board);
        assert.equal(plain.period, 'none');
        assert.equal(plain.current_period, undefined);
    });

    it('every read takes {period}: page, member, around', async () => {
        const s = await client.board(weekly);
        const [now, past] = s.periods;
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        const p = await c.page(weekly, 1, { period: now });
        assert.equal(p.total, 5);
        expectItems(p.items, 1, 3);
        assert.equal(new URL(log.at(-1).url).searchParams.get('period'), now);
        assert.deepEqual(await c.page(weekly, 1, { period: now }), p); // a 304 per period URL too
        assert.equal(c.stats.notModified, 1);

        const m = await c.member(weekly, 'p04', { period: now, size: 2 });
        assert.deepEqual([m.rank, m.page], [4, 2]);
        assert.equal(new URL(log.at(-1).url).searchParams.get('period'), now);
        const w = await c.around(weekly, 'p04', { period: now, size: 3 });
        expectItems(w.items, 3, 3);
        assert.equal(new URL(log.at(-1).url).searchParams.get('period'), now);

        // A past period is readable and empty (writes go to the current one).
        const old = await c.page(weekly, 1, { period: past });
        assert.deepEqual([old.total, old.pages, old.items], [0, 0, []]);
        assert.equal(new URL(log.at(-1).url).searchParams.get('period'), past);
        await assert.rejects(c.member(weekly, 'p04', { period: past }), (e) => e.code === 'member_not_found');
        await assert.rejects(c.around(weekly, 'p04', { period: past }), (e) => e.code === 'member_not_found');
    });

    it('no period (or an empty one) reads the current period', async () => {
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        assert.equal((await c.page(weekly, 1)).total, 5);
        assert.equal((await c.page(weekly, 1, { period: '' })).total, 5);
        assert.ok(log.every((r) => !new URL(r.url).searchParams.has('period')));
        await assert.rejects(c.page(weekly, 1, { period: 49 }), TypeError);
    });

    it('period errors: not readable 404, wrong kind 400, board without periods 400', async () => {
        const e1 = await client.page(weekly, 1, { period: '2001-W01' }).catch((e) => e);
        assert.deepEqual([e1.status, e1.code, e1.retryable], [404, 'period_not_found', false]);
        const e2 = await client.page(weekly, 1, { period: '2026-11-30' }).catch((e) => e);
        assert.deepEqual([e2.status, e2.code], [400, 'invalid_period']);
        const e3 = await client.member(board, 'p01', { period: '2026-W49' }).catch((e) => e);
        assert.deepEqual([e3.status, e3.code], [400, 'board_has_no_periods']);
    });
});

describe('errors', () => {
    async function rejectsWith(promise, status, code) {
        const e = await promise.then(() => assert.fail('expected a RankdError'), (err) => err);
        assert.ok(e instanceof RankdError, `got ${e}`);
        assert.ok(e instanceof Error);
        assert.equal(e.name, 'RankdError');
        assert.equal(e.status, status);
        assert.equal(e.code, code);
        if (status) {
            assert.equal(e.body.error.code, code);
            assert.equal(e.message, e.body.error.message);
        }
        return e;
    }

    it('an unknown board is 404 board_not_found', async () => {
        const e = await rejectsWith(client.page('no-such-board-xyz', 1), 404, 'board_not_found');
        assert.match(e.message, /no-such-board-xyz/);
        assert.equal(e.retryable, false, 'a 404 is not retryable');
        assert.equal(e.outcomeUnknown, false);
        await rejectsWith(client.board('no-such-board-xyz'), 404, 'board_not_found');
        await rejectsWith(client.member('no-such-board-xyz', 'p01'), 404, 'board_not_found');
    });

    it('an unknown member is 404 member_not_found', async () => {
        await rejectsWith(client.member(board, 'nobody'), 404, 'member_not_found');
        await rejectsWith(client.around(board, 'nobody', { size: 3 }), 404, 'member_not_found');
        await rejectsWith(client.item('nobody-at-all'), 404, 'item_not_found');
    });

    it('bad parameters are 400', async () => {
        await rejectsWith(client.page(board, 0), 400, 'invalid_parameter');
        await rejectsWith(client.page(board, 1, { size: 101 }), 400, 'invalid_parameter');
        await rejectsWith(client.member(board, 'p01', { size: -1 }), 400, 'invalid_parameter');
        await rejectsWith(client.board('bad name!'), 400, 'invalid_board');
    });

    it('an empty board name or id rejects with a TypeError before any request', async () => {
        await assert.rejects(client.member(board, ''), TypeError);
        await assert.rejects(client.board(''), TypeError);
    });

    it('no rankd at the address: status 0, network_error', async () => {
        const c = new RankdClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
        const e = await rejectsWith(c.boards(), 0, 'network_error');
        assert.ok(e.cause);
        assert.equal(e.body, null);
        assert.equal(e.retryable, true);
    });

    it('503 redis_unavailable carries Retry-After', async () => {
        const body = { error: { code: 'redis_unavailable', message: 'Redis is unavailable or too slow right now (Connection refused); retry shortly.' } };
        const fake = async () => new Response(JSON.stringify(body), {
            status: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' },
        });
        const c = new RankdClient({ baseUrl: 'http://rankd.invalid', fetch: fake });
        const e = await rejectsWith(c.page('x', 1), 503, 'redis_unavailable');
        assert.equal(e.retryAfter, 1);
        assert.equal(e.retryable, true);
        assert.equal(e.outcomeUnknown, false);
        assert.deepEqual(e.body, body);
    });

    it('a reply that is not rankd JSON: http_<status>', async () => {
        const fake = async () => new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'Content-Type': 'text/html' } });
        const c = new RankdClient({ baseUrl: 'http://rankd.invalid', fetch: fake });
        const e = await c.boards().catch((err) => err);
        assert.ok(e instanceof RankdError);
        assert.equal(e.status, 502);
        assert.equal(e.code, 'http_502');
        assert.equal(e.body, null);
    });
});

describe('abort', () => {
    it('an already aborted signal rejects with AbortError, not a RankdError', async () => {
        const ctl = new AbortController();
        ctl.abort();
        const e = await client.page(board, 1, { signal: ctl.signal }).catch((err) => err);
        assert.equal(e.name, 'AbortError');
        assert.ok(!(e instanceof RankdError));
    });

    it('aborting while the request is in flight rejects with AbortError', async () => {
        for (const call of [
            (signal) => client.page(board, 2, { signal }),
            (signal) => client.member(board, 'p02', { signal }),
            (signal) => client.around(board, 'p02', { size: 3, signal }),
            (signal) => client.boards({ signal }),
            (signal) => client.board(board, { signal }),
        ]) {
            const ctl = new AbortController();
            const p = call(ctl.signal);
            ctl.abort();
            const e = await p.catch((err) => err);
            assert.equal(e.name, 'AbortError');
        }
    });

    it('a signal that never fires changes nothing', async () => {
        const ctl = new AbortController();
        expectItems((await client.page(board, 1, { signal: ctl.signal })).items, 1, 10);
        ctl.abort(); // after the fact: harmless
    });

    it('AbortSignal.timeout works as a deadline', async () => {
        const p = await client.page(board, 1, { signal: AbortSignal.timeout(5000) });
        assert.equal(p.items.length, 10);
    });
});

describe('ETag reuse', () => {
    it('a repeated page sends If-None-Match and costs a 304 that returns the remembered body', async () => {
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        const a = await c.page(cached, 2);
        const ia = responseInfo(a);
        assert.equal(ia.status, 200);
        assert.equal(ia.notModified, false);
        assert.match(ia.etag, /^".+"$/);
        assert.ok(['hit', 'miss', 'stale'].includes(ia.cache));
        assert.equal(log[0].headers['If-None-Match'], undefined);

        const b = await c.page(cached, 2);
        const ib = responseInfo(b);
        assert.equal(log[1].headers['If-None-Match'], ia.etag);
        assert.equal(ib.status, 304);
        assert.equal(ib.notModified, true);
        assert.equal(ib.etag, ia.etag);
        assert.deepEqual(b, a);
        assert.notEqual(b, a, 'each call returns its own copy');
        a.items.length = 0; // the caller may change what it got; the remembered body stays
        assert.equal((await c.page(cached, 2)).items.length, 5);
        assert.deepEqual(c.stats, { requests: 3, notModified: 2 });
    });

    it('tags are per URL: another page or size is a full reply', async () => {
        const c = new RankdClient({ baseUrl: BASE });
        await c.page(cached, 1);
        assert.equal(responseInfo(await c.page(cached, 1)).notModified, true);
        assert.equal(responseInfo(await c.page(cached, 1, { size: 3 })).notModified, false);
        assert.equal(responseInfo(await c.page(cached, 2)).notModified, false);
    });

    it('a changed page is a 200 with the new body and a new tag', async () => {
        const c = new RankdClient({ baseUrl: BASE });
        const before1 = await c.page(board, 1);
        assert.equal(responseInfo(await c.page(board, 1)).notModified, true);
        await write('POST', `/boards/${board}/scores`, { id: 'p25', score: 1500 });
        try {
            const now = await c.page(board, 1); // page_ttl_ms 0: computed now
            const info = responseInfo(now);
            assert.equal(info.status, 200);
            assert.equal(info.notModified, false);
            assert.notEqual(info.etag, responseInfo(before1).etag);
            assert.equal(now.items[0].id, 'p25');
            assert.equal(responseInfo(await c.page(board, 1)).notModified, true);
        } finally {
            await write('POST', `/boards/${board}/scores`, { id: 'p25', score: members[24].score });
        }
    });

    it('member, around and boards are never conditional (always current)', async () => {
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
        for (let i = 0; i < 2; i++) {
            await c.member(board, 'p01');
            await c.around(board, 'p01', { size: 3 });
            await c.boards();
        }
        assert.ok(log.every((r) => r.headers['If-None-Match'] === undefined));
        assert.equal(c.stats.notModified, 0);
    });

    it('etagCacheSize 0 turns reuse off; clearCache() forgets', async () => {
        const log = [];
        const off = new RankdClient({ baseUrl: BASE, etagCacheSize: 0, fetch: recordingFetch(log) });
        await off.page(cached, 1);
        await off.page(cached, 1);
        assert.ok(log.every((r) => r.headers['If-None-Match'] === undefined));
        const c = new RankdClient({ baseUrl: BASE });
        await c.page(cached, 1);
        c.clearCache();
        assert.equal(responseInfo(await c.page(cached, 1)).notModified, false);
    });

    // rankd's 304 has no body and no Content-Length, and libmicrohttpd 0.9.75 closes the
    // connection after it: each revalidation in Node is a new connection, closed once answered,
    // so none is left open (and a script exits at once). When the 304 carried the 200 body's
    // Content-Length, undici left each such connection open until rankd's idle timeout (30 s).
    it('revalidations leave no connection open in Node', async () => {
        const open = async () => [...(await (await fetch(`${BASE}/metrics`)).text())
            .matchAll(/^rankd_http_connections\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
        const c = new RankdClient({ baseUrl: BASE });
        const first = await c.page(cached, 1);
        const r = await fetch(`${BASE}/boards/${cached}/rank?page=1`,
            { headers: { 'If-None-Match': responseInfo(first).etag } });
        assert.equal(r.status, 304);
        assert.equal(r.headers.get('content-length'), null);
        const before = await open();
        for (let i = 0; i < 10; i++) await c.page(cached, 1);
        assert.equal(c.stats.notModified, 10);
        assert.ok(await open() <= before + 2, `${before} connections before 10 revalidations, ${await open()} after`);
    });

    it('the remembered pages are bounded (least recently used goes first)', async () => {
        const log = [];
        const c = new RankdClient({ baseUrl: BASE, etagCacheSize: 2, fetch: recordingFetch(log) });
        await c.page(cached, 1);
        await c.page(cached, 2);
        await c.page(cached, 3); // page 1 is forgotten
        await c.page(cached, 1);
        assert.equal(log.at(-1).headers['If-None-Match'], undefined);
        await c.page(cached, 3);
        assert.ok(log.at(-1).headers['If-None-Match']);
    });
});

describe('packaging', () => {
    it('clients/js/rankd.js re-exports the one client in clients/web/rankd.js', () => {
        assert.deepEqual(Object.keys(viaJs).sort(), Object.keys(viaWeb).sort());
        for (const k of Object.keys(viaWeb))
            assert.equal(viaJs[k], viaWeb[k], k);
    });

    it('rankd.d.ts declares every export, and every method and property in its class', async () => {
        const dts = await readFile(new URL('../rankd.d.ts', import.meta.url), 'utf8');
        for (const k of Object.keys(viaWeb))
            assert.match(dts, new RegExp(`export (class|function) ${k}\\b`), k);
        const classBody = (name) => {
            const m = dts.match(new RegExp(`export class ${name}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`));
            assert.ok(m, `class ${name} in rankd.d.ts`);
            return m[1];
        };
        for (const cls of [RankdClient, RankdWriteClient, RankdError]) {
            const body = classBody(cls.name);
            const own = Object.getOwnPropertyNames(cls.prototype)
                .filter((m) => m !== 'constructor' && !m.startsWith('_'));
            assert.ok(own.length > 0 || cls === RankdError, cls.name);
            for (const m of own)
                assert.match(body, new RegExp(`\\n\\s+(readonly )?${m}[(:]`), `${cls.name}.${m}`);
        }
        // Instance fields too (not on the prototype).
        const e = new RankdError(404, 'x', 'y');
        for (const k of Object.keys(e).filter((k) => !k.startsWith('_')))
            assert.match(classBody('RankdError'), new RegExp(`\\n\\s+${k}\\??:`), `RankdError.${k}`);
        const c = new RankdClient({ baseUrl: BASE });
        for (const k of Object.keys(c).filter((k) => !k.startsWith('_')))
            assert.match(classBody('RankdClient'), new RegExp(`\\n\\s+(readonly )?${k}:`), `RankdClient.${k}`);
    });

    it('the client has no cursor API (rankd has none)', () => {
        assert.equal(RankdClient.prototype.after, undefined);
    });
});
