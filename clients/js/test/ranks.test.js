// The read client's issue-14 reads against a real rankd: rank types on pages and members, many
// members by id (GET with ids that need escaping, POST past 100), around a score, percentiles,
// top percent, one member across boards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { RankdClient, RankdError } from '../rankd.js';
import { BASE, recordingFetch, requireEnv, uniqueBoard, write } from './support.js';

const board = uniqueBoard('jsranks');
const other = uniqueBoard('jsother');
const ODD = 'a,b c/é'; // a comma, a space, a slash, UTF-8

// The example, desc: 100, 50, 50, 30, 10, 8, 8, 8, 1.
const scores = [['a', 100], ['b', 50], [ODD, 50], ['d', 30], ['e', 10], ['f', 8], ['g', 8], ['h', 8], ['i', 1]];

let client;
let log;

before(async () => {
    requireEnv();
    log = [];
    client = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log) });
    await write('PUT', `/boards/${board}`, { page_size: 4, page_ttl_ms: 0 });
    await write('POST', `/boards/${board}/scores`, { entries: scores.map(([id, score]) => ({ id, score })) });
    await write('POST', `/boards/${other}/scores`, { id: 'g', score: 3 });
});

after(async () => {
    if (!BASE) return;
    for (const b of [board, other])
        await fetch(`${BASE}/boards/${b}`, { method: 'DELETE', headers: { Authorization: `Bearer ${process.env.RANKD_WRITE_TOKEN}` } });
});

const ranksOf = (items) => items.map((it) => `${it.id}:${it.rank}`).join(' ');

describe('rank types', () => {
    it('pages carry global ranks of the type asked, across page edges', async () => {
        const all = async (rankType) => {
            const parts = [];
            for (let n = 1; n <= 3; n++)
                parts.push(ranksOf((await client.page(board, n, { size: 3, rankType })).items));
            return parts.join(' ');
        };
        assert.equal(await all(undefined), `a:1 b:2 ${ODD}:3 d:4 e:5 f:6 g:7 h:8 i:9`);
        assert.equal(await all('competition'), `a:1 b:2 ${ODD}:2 d:4 e:5 f:6 g:6 h:6 i:9`);
        assert.equal(await all('dense'), `a:1 b:2 ${ODD}:2 d:3 e:4 f:5 g:5 h:5 i:6`);
        assert.match(log.at(-1).url, /[?&]rank=dense(&|$)/);
    });

    it('a member: rank of the type asked, page and percentile of its position', async () => {
        const m = await client.member(board, 'h', { rankType: 'competition' });
        assert.deepEqual(m, { id: 'h', score: 8, rank: 6, page: 2, percentile: 11.11, record: null });
        assert.equal((await client.member(board, ODD, { rankType: 'dense' })).rank, 2);
        const w = await client.around(board, 'g', { size: 3, rankType: 'dense' });
        assert.equal(ranksOf(w.items), 'f:5 g:5 h:5');
    });

    it('an unknown rank type is a TypeError before any request', async () => {
        const before = log.length;
        await assert.rejects(client.page(board, 1, { rankType: 'modified' }), TypeError);
        await assert.rejects(client.member(board, 'a', { rankType: 'Dense' }), TypeError);
        assert.equal(log.length, before);
    });
});

describe('many members', () => {
    it('GET members?ids= with ids that need escaping, in rank order, missing listed', async () => {
        const r = await client.members(board, ['h', ODD, 'nobody', 'a', 'gone,too'], { rankType: 'dense' });
        assert.equal(r.board, board);
        assert.equal(ranksOf(r.items), `a:1 ${ODD}:2 h:5`);
        assert.deepEqual(r.missing, ['nobody', 'gone,too']);
        assert.deepEqual(r.items[1], { rank: 2, id: ODD, score: 50, record: null });
        assert.match(log.at(-1).url, /members\?rank=dense&ids=h,a%2Cb%20c%2F%C3%A9,nobody,a,gone%2Ctoo$/);
    });

    it('more than 100 ids go as POST lookup, without a token', async () => {
        const ids = ['i', 'a'];
        for (let k = 0; k < 300; k++)
            ids.push(`x${k}`);
        const r = await client.members(board, ids);
        assert.equal(ranksOf(r.items), 'a:1 i:9');
        assert.equal(r.missing.length, 300);
        assert.match(log.at(-1).url, /\/lookup$/);
        assert.equal(log.at(-1).headers.Authorization, undefined);
        await assert.rejects(client.members(board, []), TypeError);
        await assert.rejects(client.members(board, new Array(1001).fill('x')), TypeError);
    });
});

describe('top N plus me', () => {
    it('page(board, n, {with}) adds the members named wherever they are, and the missing ones', async () => {
        const r = await client.page(board, 1, { with: ['i', ODD, 'nobody'], rankType: 'competition' });
        assert.equal(ranksOf(r.items), `a:1 b:2 ${ODD}:2 d:4`);
        assert.deepEqual(r.with, [
            { rank: 2, id: ODD, score: 50, page: 1, record: null },
            { rank: 9, id: 'i', score: 1, page: 3, record: null },
        ]);
        assert.deepEqual(r.missing, ['nobody']);
        assert.match(log.at(-1).url, /rank\?page=1&rank=competition&with=i,a%2Cb%20c%2F%C3%A9,nobody$/);
        const plain = await client.page(board, 1);
        assert.equal(plain.with, undefined);
        await assert.rejects(client.page(board, 1, { with: [] }), TypeError);
        await assert.rejects(client.page(board, 1, { with: ['a', 'a'] }), TypeError);
        await assert.rejects(client.page(board, 1, { with: new Array(21).fill(0).map((_, k) => `x${k}`) }), TypeError);
        await assert.rejects(client.page(board, 1, { with: ['a'], after: 'abc' }), TypeError);
    });
});

describe('around a score, percentiles, top', () => {
    it('aroundScore centres on the first member at the score or worse', async () => {
        assert.equal(ranksOf((await client.aroundScore(board, 9, { size: 3 })).items), 'e:5 f:6 g:7');
        assert.equal(ranksOf((await client.aroundScore(board, '30.000', { size: 1 })).items), 'd:4');
        assert.equal(ranksOf((await client.aroundScore(board, -5, { size: 2, rankType: 'dense' })).items), 'h:5 i:6');
        await assert.rejects(client.aroundScore(board, '2.5'),
            (e) => e instanceof RankdError && e.status === 422 && e.code === 'invalid_score');
        await assert.rejects(client.aroundScore(board, NaN), TypeError);
    });

    it('percentile and top are exact at the edges', async () => {
        assert.deepEqual(await client.percentile(board, 100), { p: 100, rank: 1, id: 'a', score: 100 });
        assert.deepEqual(await client.percentile(board, 0), { p: 0, rank: 9, id: 'i', score: 1 });
        assert.equal((await client.percentile(board, '50')).rank, 5); // ceil(9 * 50 / 100)
        const t = await client.top(board, 34, { rankType: 'competition' });
        assert.equal(t.count, 4); // ceil(9 * 0.34) = ceil(3.06)
        assert.equal(ranksOf(t.items), `a:1 b:2 ${ODD}:2 d:4`);
        await assert.rejects(client.percentile(board, 101),
            (e) => e instanceof RankdError && e.status === 400 && e.code === 'invalid_parameter');
    });
});

describe('one member across boards', () => {
    it('rank, score and percentile per board, null where absent', async () => {
        const r = await client.memberBoards('g', [board, 'no-such-board', other], { rankType: 'dense' });
        assert.deepEqual(r, {
            id: 'g',
            boards: [
                { board, rank: 5, score: 8, percentile: 22.22 },
                { board: 'no-such-board', rank: null, score: null, percentile: null },
                { board: other, rank: 1, score: 3, percentile: 0 },
            ],
        });
        const odd = await client.memberBoards(ODD, [board]);
        assert.equal(odd.id, ODD);
        assert.equal(odd.boards[0].rank, 3);
        await assert.rejects(client.memberBoards('g', []), TypeError);
    });
});

describe('score ranges and cursors', () => {
    it('min and max read a range with global ranks; total counts the range', async () => {
        const p = await client.page(board, 1, { min: 8, max: 50, size: 3 });
        assert.equal(p.total, 7);
        assert.equal(p.pages, 3);
        assert.equal(ranksOf(p.items), `b:2 ${ODD}:3 d:4`);
        assert.equal(p.prev, null);
        assert.equal(typeof p.next, 'string');
        const p2 = await client.page(board, 1, { min: '8', max: '50', size: 3, after: p.next, rankType: 'dense' });
        assert.equal(ranksOf(p2.items), 'e:4 f:5 g:5');
        assert.doesNotMatch(log.at(-1).url, /[?&]page=/);
        await assert.rejects(client.page(board, 1, { min: '2.5' }),
            (e) => e instanceof RankdError && e.status === 422 && e.code === 'invalid_score');
    });

    it('next and prev walk the board both ways, URL-safe and opaque', async () => {
        const seen = [];
        let p = await client.page(board, 1, { size: 4 });
        seen.push(...p.items.map((it) => it.id));
        while (p.next) {
            assert.match(p.next, /^[A-Za-z0-9_-]+$/);
            p = await client.page(board, 1, { size: 4, after: p.next });
            seen.push(...p.items.map((it) => it.id));
        }
        assert.deepEqual(seen, scores.map(([id]) => id));
        assert.equal(p.items.at(-1).rank, 9);
        const back = await client.page(board, 1, { size: 4, before: p.prev });
        assert.equal(ranksOf(back.items), 'e:5 f:6 g:7 h:8');
        await assert.rejects(client.page(board, 1, { after: 'x', before: 'y' }), TypeError);
        await assert.rejects(client.page(board, 1, { after: 'not-a-cursor' }),
            (e) => e instanceof RankdError && e.status === 400 && e.code === 'invalid_cursor');
    });
});
