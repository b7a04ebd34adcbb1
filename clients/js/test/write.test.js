// The write client (RankdWriteClient) against a real rankd: token, single and batch writes, NDJSON
// uploads from Node streams and (async) iterables, settings, deletes, Idempotency-Key, typed errors.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import { RankdClient, RankdError, RankdWriteClient, responseInfo } from '../rankd.js';
import { BASE, closedPort, recordingFetch, requireEnv, uniqueBoard } from './support.js';

const TOKEN = process.env.RANKD_WRITE_TOKEN;
const board = uniqueBoard('jsw');
const stream = uniqueBoard('jswnd');
const periodic = uniqueBoard('jswdaily');
const other = uniqueBoard('jswother');
let w;

before(() => {
    requireEnv();
    w = new RankdWriteClient({ baseUrl: BASE, token: TOKEN });
});

after(async () => {
    if (!BASE) return;
    const c = new RankdWriteClient({ baseUrl: BASE, token: TOKEN });
    for (const b of [board, stream, periodic, other])
        await c.deleteBoard(b).catch(() => {});
});

/** A fetch that records every request, headers and method included. */
function logged() {
    const log = [];
    return { log, client: new RankdWriteClient({ baseUrl: BASE, token: TOKEN, fetch: recordingFetch(log) }) };
}

async function rejection(promise) {
    return promise.then(() => assert.fail('expected a rejection'), (e) => e);
}

describe('construction', () => {
    it('needs a token; it is a RankdClient too (reads work)', async () => {
        assert.throws(() => new RankdWriteClient({ baseUrl: BASE }), TypeError);
        assert.throws(() => new RankdWriteClient({ baseUrl: BASE, token: '' }), TypeError);
        assert.ok(w instanceof RankdClient);
        assert.ok(Array.isArray((await w.boards()).boards));
    });
});

describe('scores', () => {
    it('putBoard creates a board and returns its settings', async () => {
        const s = await w.putBoard(board, { page_size: 5, page_ttl_ms: 0 });
        assert.equal(s.board, board);
        assert.equal(s.page_size, 5);
        assert.equal(s.total, 0);
    });

    it('writeScore: one entry, with the Authorization header; set, best and incr', async () => {
        const { log, client } = logged();
        const r = await client.writeScore(board, { id: 'ann', score: 10, record: { name: 'Ann' } });
        assert.deepEqual(r, { id: 'ann', score: 10, rank: 1, updated: true, prev_score: null, prev_rank: null, version: 1 });
        assert.equal(log[0].headers.Authorization, `Bearer ${TOKEN}`);
        assert.equal(log[0].headers['Content-Type'], 'application/json');
        assert.equal(log[0].headers['Idempotency-Key'], undefined);
        assert.deepEqual(await client.writeScore(board, { id: 'ann', score: 5, op: 'best' }),
            { id: 'ann', score: 10, rank: 1, updated: false, prev_score: 10, prev_rank: 1, version: 2 });
        assert.deepEqual(await client.writeScore(board, { id: 'ann', score: 3, op: 'incr' }),
            { id: 'ann', score: 13, rank: 1, updated: true, prev_score: 10, prev_rank: 1, version: 3 });
        // incr within a floor and a ceiling
        assert.equal((await client.writeScore(board, { id: 'ann', score: 100, op: 'incr', ceiling: 14 })).score, 14);
        assert.equal((await client.writeScore(board, { id: 'ann', score: -100, op: 'incr', floor: 13 })).score, 13);
        assert.deepEqual(await w.item('ann'), { name: 'Ann' });
    });

    it('writeScores: a batch in order, all or nothing', async () => {
        const r = await w.writeScores(board, [
            { id: 'bob', score: 20 }, { id: 'cy', score: 7 }, { id: 'dee', score: 7 },
        ]);
        assert.deepEqual(r, {
            applied: 3, rejected: [], version: 6, results: [
                { score: 20, rank: 1, updated: true }, { score: 7, rank: 3, updated: true },
                { score: 7, rank: 4, updated: true }],
        });
        const p = await w.page(board, 1);
        assert.deepEqual(p.items.map((it) => [it.rank, it.id, it.score]),
            [[1, 'bob', 20], [2, 'ann', 13], [3, 'cy', 7], [4, 'dee', 7]]);
        // One bad entry refuses the whole batch: nothing is written.
        const e = await rejection(w.writeScores(board, [{ id: 'eve', score: 1 }, { id: 'fay', score: 1.5 }]));
        assert.ok(e instanceof RankdError);
        assert.deepEqual([e.status, e.code, e.retryable, e.outcomeUnknown], [422, 'invalid_score', false, false]);
        assert.match(e.message, /^entries\[1\]: /);
        assert.equal((await rejection(w.member(board, 'eve'))).code, 'member_not_found');
        await assert.rejects(w.writeScores(board, { entries: [] }), TypeError);
        await assert.rejects(w.writeScore(board, [{ id: 'x', score: 1 }]), TypeError);
    });

    it('deleteMember, trim, putItem and deleteItem', async () => {
        await w.deleteMember(board, 'dee');
        assert.equal((await w.board(board)).total, 3);
        assert.deepEqual(await w.trim(board, { keep: 2 }), { removed: 1 });
        assert.deepEqual(await w.trim(board, { below: 15 }), { removed: 1 });
        assert.deepEqual((await w.page(board, 1)).items.map((it) => it.id), ['bob']);
        await assert.rejects(w.trim(board, {}), TypeError);
        await assert.rejects(w.trim(board, { keep: 1, below: 2 }), TypeError);
        await w.putItem('bob', { name: 'Bob', level: 3 });
        assert.deepEqual(await w.item('bob'), { name: 'Bob', level: 3 });
        await w.deleteItem('bob');
        assert.equal((await rejection(w.item('bob'))).code, 'item_not_found');
        await w.resetBoard(board);
        assert.equal((await w.board(board)).total, 0);
    });
});

describe('NDJSON uploads', () => {
    const entries = (n, from = 0) => Array.from({ length: n }, (_, i) => ({ id: `n${from + i}`, score: from + i }));

    it('from an async iterable of entries (several thousand lines, streamed)', async () => {
        const { log, client } = logged();
        async function* gen() {
            for (const e of entries(2500)) yield e;
        }
        const r = await client.uploadNdjson(stream, gen());
        assert.deepEqual(r, { applied: 2500, rejected_total: 0, rejected: [], version: 9 }); // 9 chunks of 300
        assert.equal(log[0].headers['Content-Type'], 'application/x-ndjson');
        assert.equal((await w.board(stream)).total, 2500);
        assert.equal((await w.member(stream, 'n2499')).rank, 1);
    });

    it('from a Node Readable of bytes; bad lines are rejected and counted, the others applied', async () => {
        const text = `${entries(3, 5000).map((e) => JSON.stringify(e)).join('\n')}\nnot json\n{"id":"half","score":1.5}\n`;
        // Chunks that split lines in the middle: the stream is sent as it is.
        const bytes = Buffer.from(text);
        const chunks = [bytes.subarray(0, 7), bytes.subarray(7, 40), bytes.subarray(40)];
        const r = await w.uploadNdjson(stream, Readable.from(chunks));
        assert.equal(r.applied, 3);
        assert.equal(r.rejected_total, 2);
        assert.deepEqual(r.rejected.map((x) => [x.line, x.error.code]), [[4, 'invalid_json'], [5, 'invalid_score']]);
        assert.equal((await w.member(stream, 'n5002')).score, 5002);
    });

    it('from an object-mode Readable, a plain array, a string and a Uint8Array', async () => {
        assert.equal((await w.uploadNdjson(stream, Readable.from(entries(4, 6000)))).applied, 4);
        assert.equal((await w.uploadNdjson(stream, entries(2, 6100))).applied, 2);
        assert.equal((await w.uploadNdjson(stream, '{"id":"s1","score":1}\n{"id":"s2","score":2}\n')).applied, 2);
        assert.equal((await w.uploadNdjson(stream, new TextEncoder().encode('{"id":"u1","score":1}\n'))).applied, 1);
        assert.equal((await w.board(stream)).total, 2500 + 3 + 4 + 2 + 2 + 1);
    });

    it('exportRows: the whole board in rank order, each member once', async () => {
        const total = (await w.board(stream)).total;
        let n = 0;
        let last = Infinity;
        const ids = new Set();
        for await (const row of w.exportRows(stream)) {
            n++;
            assert.equal(row.rank, n);
            assert.ok(row.score <= last);
            last = row.score;
            ids.add(row.id);
        }
        assert.deepEqual([n, ids.size], [total, total]);
        const e = await rejection((async () => {
            for await (const row of w.exportRows(uniqueBoard('jswnone'))) void row;
        })());
        assert.deepEqual([e.status, e.code], [404, 'board_not_found']);
    });

    it('a source that throws rejects with its own error', async () => {
        async function* broken() {
            yield { id: 'b1', score: 1 };
            throw new Error('the source broke');
        }
        const e = await rejection(w.uploadNdjson(stream, broken()));
        assert.equal(e.message, 'the source broke');
        await assert.rejects(w.uploadNdjson(stream, 42), TypeError);
        await assert.rejects(w.uploadNdjson(stream, [null]), TypeError);
    });

    it('a refused stream (wrong token, invalid board) is that answer, not a network error', async () => {
        const bad = new RankdWriteClient({ baseUrl: BASE, token: 'not-the-token' });
        async function* gen() {
            for (const e of entries(3000, 9000)) yield e;
        }
        const e = await rejection(bad.uploadNdjson(stream, gen()));
        assert.ok(e instanceof RankdError);
        assert.deepEqual([e.status, e.code, e.outcomeUnknown], [403, 'forbidden', false]);
        const e2 = await rejection(w.uploadNdjson('bad board!', gen()));
        assert.deepEqual([e2.status, e2.code], [400, 'invalid_board']);
        await assert.rejects(w.member(stream, 'n9000'), (x) => x.code === 'member_not_found');
    });
});

describe('periods', () => {
    it('writes go to the current period, which reads with and without {period}', async () => {
        const s = await w.putBoard(periodic, { period: 'daily', retain: 1 });
        assert.deepEqual([s.period, s.periods.length], ['daily', 2]);
        await w.writeScores(periodic, [{ id: 'a', score: 2 }, { id: 'b', score: 1 }]);
        const now = await w.page(periodic, 1, { period: s.current_period });
        assert.deepEqual(now.items.map((it) => it.id), ['a', 'b']);
        assert.equal((await w.page(periodic, 1, { period: s.periods[1] })).total, 0);
    });

    it('an IANA time zone: the current day is the local one; an unknown zone is refused', async () => {
        const paris = uniqueBoard('jswtz');
        const day = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
        const before = day();
        const s = await w.putBoard(paris, { period: 'daily', timezone: 'Europe/Paris' });
        assert.equal(s.timezone, 'Europe/Paris');
        assert.ok([before, day()].includes(s.current_period), `${s.current_period}, Paris says ${before}`);
        const e = await rejection(w.putBoard(uniqueBoard('jswtz'), { period: 'daily', timezone: 'Europe/Nowhere' }));
        assert.deepEqual([e.status, e.code], [400, 'unknown_timezone']);
        await w.deleteBoard(paris);
    });
});

describe('the full range', () => {
    it('a wide first-to-reach board takes +-(2^53 - 1) exactly, ties in arrival order', async () => {
        const wide = uniqueBoard('jswwide');
        const s = await w.putBoard(wide, { score_layout: 'wide', page_ttl_ms: 0 });
        assert.deepEqual([s.score_layout, s.score_range], ['wide', { min: -9007199254740991, max: 9007199254740991 }]);
        await w.writeScores(wide, [
            { id: 'lo', score: -9007199254740991 }, { id: 'b', score: 9007199254740991 },
            { id: 'a', score: 9007199254740991 },
        ]);
        const r = await w.writeScore(wide, { id: 'c', score: 9007199254740990, op: 'incr' });
        assert.equal(r.score, 9007199254740990);
        const items = (await w.page(wide, 1)).items.map((it) => [it.id, it.score]);
        assert.deepEqual(items, [['b', 9007199254740991], ['a', 9007199254740991], ['c', 9007199254740990], ['lo', -9007199254740991]]);
        const e = await rejection(w.writeScore(wide, { id: 'c', score: 2, op: 'incr' }));
        assert.deepEqual([e.status, e.code], [422, 'score_out_of_range']);
        await w.deleteBoard(wide);
    });
});

describe('Idempotency-Key', () => {
    it('is sent when given (a string, or true for a random UUID) and not otherwise', async () => {
        const { log, client } = logged();
        await client.writeScore(board, { id: 'k', score: 1 }, { idempotencyKey: 'order-42' });
        assert.equal(log.at(-1).headers['Idempotency-Key'], 'order-42');
        await client.writeScores(board, [{ id: 'k', score: 2 }], { idempotencyKey: true });
        assert.match(log.at(-1).headers['Idempotency-Key'], /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        await client.writeScore(board, { id: 'k', score: 4 });
        assert.equal(log.at(-1).headers['Idempotency-Key'], undefined);
        assert.equal((await w.member(board, 'k')).score, 4);
        await assert.rejects(client.writeScore(board, { id: 'k', score: 1 }, { idempotencyKey: 'has space' }), TypeError);
        await assert.rejects(client.writeScore(board, { id: 'k', score: 1 }, { idempotencyKey: '' }), TypeError);
        await assert.rejects(client.writeScore(board, { id: 'k', score: 1 }, { idempotencyKey: 'x'.repeat(129) }), TypeError);
        // only score writes take one: an upload is many calls, the others are idempotent anyway
        await assert.rejects(client.uploadNdjson(board, [{ id: 'k', score: 3 }], { idempotencyKey: 'batch-7' }), TypeError);
        await assert.rejects(client.putBoard(board, { page_size: 5 }, { idempotencyKey: 'settings-1' }), TypeError);
    });

    it('a repeat is applied once and answered with the first reply (responseInfo().replayed)', async () => {
        const key = `retry-${Date.now()}`;
        const first = await w.writeScore(board, { id: 'idem', score: 5, op: 'incr' }, { idempotencyKey: key });
        assert.equal(responseInfo(first).replayed, false);
        const again = await w.writeScore(board, { id: 'idem', score: 5, op: 'incr' }, { idempotencyKey: key });
        assert.deepEqual(again, first);
        assert.equal(responseInfo(again).replayed, true);
        assert.equal((await w.member(board, 'idem')).score, 5);
        const e = await rejection(w.writeScore(board, { id: 'idem', score: 6, op: 'incr' }, { idempotencyKey: key }));
        assert.deepEqual([e.status, e.code, e.idempotent, e.retryable], [422, 'idempotency_key_reused', true, false]);
    });
});

describe('one entry on several boards', () => {
    it('writeScoreBoards: every board or none', async () => {
        await w.putBoard(other, {});
        const r = await w.writeScoreBoards([board, other], { id: 'multi', score: 3, op: 'incr' });
        assert.equal(r.id, 'multi');
        assert.deepEqual(r.boards.map((b) => [b.board, b.score, b.prev_score]), [[board, 3, null], [other, 3, null]]);
        const e = await rejection(w.writeScoreBoards([board, uniqueBoard('jswmissing')], { id: 'multi', score: 1, op: 'incr' }));
        assert.deepEqual([e.status, e.code], [404, 'board_not_found']);
        assert.equal((await w.member(board, 'multi')).score, 3);
        await assert.rejects(w.writeScoreBoards([], { id: 'x', score: 1 }), TypeError);
    });
});

describe('sub-scores', () => {
    it('a board of laps (desc) then time (asc): set, best and incr; every read carries them', async () => {
        const race = uniqueBoard('jswsub');
        const s = await w.putBoard(race, { subscores: ['asc'], page_ttl_ms: 0 });
        assert.deepEqual([s.score_layout, s.subscores], ['wide', ['asc']]);
        const batch = await w.writeScores(race, [
            { id: 'ana', score: 12, subscores: [95310] },
            { id: 'bo', score: 12, subscores: [94870] },
            { id: 'cy', score: 11, subscores: [90000] },
        ]);
        assert.deepEqual(batch.results.map((r) => r.subscores), [[95310], [94870], [90000]]);
        const ids = async () => (await w.page(race, 1)).items.map((it) => [it.id, it.score, it.subscores]);
        assert.deepEqual(await ids(), [['bo', 12, [94870]], ['ana', 12, [95310]], ['cy', 11, [90000]]]);
        // best keeps the better tuple: a slower time on the same laps loses, a faster one wins
        // (a write answers the tuple it stored, and the one before it)
        const kept = await w.writeScore(race, { id: 'ana', score: 12, subscores: [96000], op: 'best' });
        assert.deepEqual([kept.updated, kept.score, kept.subscores, kept.prev_subscores], [false, 12, [95310], [95310]]);
        const won = await w.writeScore(race, { id: 'ana', score: 12, subscores: [94000], op: 'best' });
        assert.deepEqual([won.rank, won.subscores, won.prev_subscores], [1, [94000], [95310]]);
        // incr adds element-wise
        const inc = await w.writeScore(race, { id: 'cy', score: 1, subscores: [4000], op: 'incr' });
        assert.deepEqual([inc.score, inc.subscores, inc.prev_score, inc.prev_subscores], [12, [94000], 11, [90000]]);
        const m = await w.member(race, 'cy');
        assert.deepEqual([m.score, m.subscores, m.rank], [12, [94000], 2]); // ana reached it first
        assert.deepEqual((await w.member(race, 'cy', { rankType: 'competition' })).rank, 1);
        assert.deepEqual((await w.member(race, 'ana', { rankType: 'competition' })).rank, 1);
        assert.deepEqual((await w.member(race, 'bo', { rankType: 'dense' })).rank, 2);
        // a member across boards, and the export
        const on = await w.memberBoards('cy', [race]);
        assert.deepEqual(on.boards.map((b) => [b.board, b.score, b.subscores]), [[race, 12, [94000]]]);
        const rows = [];
        for await (const row of w.exportRows(race)) rows.push([row.id, row.subscores]);
        assert.deepEqual(rows, [['ana', [94000]], ['cy', [94000]], ['bo', [94870]]]);
        // a wrong count, a fraction and an exponent are refused, nothing written
        for (const bad of [[1, 2], [1.5], ['3']]) {
            const e = await rejection(w.writeScore(race, { id: 'dee', score: 1, subscores: bad }));
            assert.deepEqual([e.status, e.code], [400, 'invalid_field']);
        }
        const raw = await fetch(`${BASE}/boards/${race}/scores`, {
            method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
            body: '{"id":"dee","score":1,"subscores":[1e3]}',
        });
        assert.equal(raw.status, 400);
        assert.equal((await w.page(race, 1)).total, 3);
        await w.deleteBoard(race);
    });
});

describe('update times', () => {
    it('a board with track_updated_at: every entry a read returns carries its updated_at', async () => {
        const ub = uniqueBoard('jswupd');
        const s = await w.putBoard(ub, { track_updated_at: true, page_ttl_ms: 0 });
        assert.equal(s.track_updated_at, true);
        await w.writeScores(ub, [{ id: 'a', score: 3 }, { id: 'b', score: 2 }, { id: 'c', score: 1 }]);
        await w.writeScore(ub, { id: 'b', score: 1, op: 'best' }); // keeps 2: the time stays
        const times = {};
        for (const id of ['a', 'b', 'c']) times[id] = (await w.member(ub, id)).updated_at;
        assert.equal(typeof times.a, 'number');
        const check = (items) => {
            assert.ok(items.length > 0);
            for (const it of items) assert.equal(it.updated_at, times[it.id], it.id);
        };
        const p = await w.page(ub, 1, { with: ['c'] });
        check(p.items);
        check(p.with);
        check((await w.around(ub, 'b')).items);
        check((await w.members(ub, ['a', 'c'])).items);
        check((await w.top(ub, 100)).items);
        check([await w.percentile(ub, 50)]);
        const rows = [];
        for await (const row of w.exportRows(ub)) rows.push(row);
        check(rows);
        // a board without it: no updated_at anywhere
        const plain = uniqueBoard('jswupd0');
        await w.putBoard(plain, { page_ttl_ms: 0 });
        await w.writeScore(plain, { id: 'a', score: 1 });
        assert.equal('updated_at' in (await w.page(plain, 1)).items[0], false);
        assert.equal('updated_at' in (await w.member(plain, 'a')), false);
        await w.deleteBoard(ub);
        await w.deleteBoard(plain);
    });
});

describe('read your writes', () => {
    it('page(..., {minVersion}) is never a page cached before that write', async () => {
        const rw = uniqueBoard('jswrw');
        await w.putBoard(rw, { page_ttl_ms: 60000 });
        await w.writeScore(rw, { id: 'first', score: 1 });
        assert.deepEqual((await w.page(rw, 1)).items.map((it) => it.id), ['first']); // now cached
        const r = await w.writeScore(rw, { id: 'second', score: 2 });
        assert.deepEqual((await w.page(rw, 1)).items.map((it) => it.id), ['first']); // the cached page
        const p = await w.page(rw, 1, { minVersion: r.version });
        assert.deepEqual(p.items.map((it) => it.id), ['second', 'first']);
        await assert.rejects(w.page(rw, 1, { minVersion: -1 }), TypeError);
        await w.deleteBoard(rw);
    });

    it('member and around send minVersion as min_version', async () => {
        const rw = uniqueBoard('jswrwm');
        const { log, client } = logged();
        const r = await client.writeScore(rw, { id: 'm', score: 7 });
        assert.equal((await client.member(rw, 'm', { minVersion: r.version })).score, 7);
        assert.match(log.at(-1).url, new RegExp(`/members/m\\?min_version=${r.version}$`));
        assert.equal((await client.around(rw, 'm', { size: 3, minVersion: r.version })).items[0].id, 'm');
        assert.match(log.at(-1).url, new RegExp(`/around\\?size=3&min_version=${r.version}$`));
        await client.member(rw, 'm', { minVersion: 0 }); // 0: any, not sent
        assert.doesNotMatch(log.at(-1).url, /min_version/);
        await assert.rejects(client.member(rw, 'm', { minVersion: 1.5 }), TypeError);
        await assert.rejects(client.around(rw, 'm', { minVersion: -1 }), TypeError);
        await w.deleteBoard(rw);
    });
});

describe('errors', () => {
    it('no token is 401, a wrong token 403', async () => {
        const e = await rejection(new RankdWriteClient({ baseUrl: BASE, token: 'wrong' }).writeScore(board, { id: 'x', score: 1 }));
        assert.deepEqual([e.status, e.code, e.retryable], [403, 'forbidden', false]);
        const res = await fetch(`${BASE}/boards/${board}/scores`, { method: 'POST', body: '{}' });
        assert.equal(res.status, 401);
    });

    it('an outcome unknown with an Idempotency-Key: retryable', async () => {
        const body = { error: { code: 'write_outcome_unknown', message: 'It carried an Idempotency-Key: send it again.' } };
        const fake = async () => new Response(JSON.stringify(body), { status: 503, headers: { 'Retry-After': '1' } });
        const c = new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: fake });
        const e = await rejection(c.writeScore('b', { id: 'x', score: 1, op: 'incr' }, { idempotencyKey: 'k1' }));
        assert.deepEqual([e.status, e.outcomeUnknown, e.idempotent, e.retryable], [503, true, true, true]);
        const reset = async () => {
            throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
        };
        const e2 = await rejection(new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: reset })
            .writeScores('b', [{ id: 'x', score: 1 }], { idempotencyKey: 'k2' }));
        assert.deepEqual([e2.status, e2.outcomeUnknown, e2.idempotent, e2.retryable], [0, true, true, true]);
        assert.match(e2.message, /send it again with the same key/);
    });

    it('503 write_outcome_unknown: outcomeUnknown, not retryable', async () => {
        const body = { error: { code: 'write_outcome_unknown', message: 'The write was sent to Redis but its reply did not arrive in time; it may or may not have been applied.' } };
        const fake = async () => new Response(JSON.stringify(body), {
            status: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' },
        });
        const c = new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: fake });
        for (const call of [
            () => c.writeScore('b', { id: 'x', score: 1, op: 'incr' }),
            () => c.writeScores('b', [{ id: 'x', score: 1 }]),
            () => c.uploadNdjson('b', '{"id":"x","score":1}\n'),
        ]) {
            const e = await rejection(call());
            assert.ok(e instanceof RankdError);
            assert.deepEqual([e.status, e.code, e.outcomeUnknown, e.retryable, e.retryAfter],
                [503, 'write_outcome_unknown', true, false, 1]);
        }
    });

    it('503 write_not_replicated (--write-replicas): outcomeUnknown; retryable only with a key', async () => {
        const body = { error: { code: 'write_not_replicated', message: 'The write was applied on the primary, but not confirmed on the replicas.' } };
        const fake = async () => new Response(JSON.stringify(body), {
            status: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' },
        });
        const c = new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: fake });
        const e = await rejection(c.writeScore('b', { id: 'x', score: 1, op: 'incr' }));
        assert.ok(e instanceof RankdError);
        assert.deepEqual([e.status, e.code, e.outcomeUnknown, e.idempotent, e.retryable, e.retryAfter],
            [503, 'write_not_replicated', true, false, false, 1]);
        const k = await rejection(c.writeScore('b', { id: 'x', score: 1, op: 'incr' }, { idempotencyKey: 'k3' }));
        assert.deepEqual([k.outcomeUnknown, k.idempotent, k.retryable], [true, true, true]);
        const d = await rejection(c.deleteMember('b', 'x'));
        assert.deepEqual([d.code, d.outcomeUnknown, d.retryable], ['write_not_replicated', true, false]);
    });

    it('503 redis_unavailable on a write: retryable, outcome known', async () => {
        const fake = async () => new Response('{"error":{"code":"redis_unavailable","message":"down"}}', { status: 503, headers: { 'Retry-After': '1' } });
        const e = await rejection(new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: fake }).writeScore('b', { id: 'x', score: 1 }));
        assert.deepEqual([e.code, e.outcomeUnknown, e.retryable], ['redis_unavailable', false, true]);
    });

    it('connection refused: not sent (retryable); a connection lost after sending: outcome unknown', async () => {
        const c = new RankdWriteClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, token: 't' });
        const e = await rejection(c.writeScore('b', { id: 'x', score: 1 }));
        assert.deepEqual([e.status, e.code, e.outcomeUnknown, e.retryable], [0, 'network_error', false, true]);
        const reset = async () => {
            throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
        };
        const e2 = await rejection(new RankdWriteClient({ baseUrl: 'http://rankd.invalid', token: 't', fetch: reset }).writeScore('b', { id: 'x', score: 1 }));
        assert.deepEqual([e2.status, e2.code, e2.outcomeUnknown, e2.retryable], [0, 'network_error', true, false]);
        assert.match(e2.message, /may or may not have been applied/);
    });

    it('an aborted write rejects with AbortError', async () => {
        const ctl = new AbortController();
        ctl.abort();
        const e = await rejection(w.writeScore(board, { id: 'x', score: 1 }, { signal: ctl.signal }));
        assert.equal(e.name, 'AbortError');
    });
});
