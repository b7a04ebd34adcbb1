// The JS client's watch() against a real rankd: pages pushed as server-sent events as they change,
// a reconnect after a cut stream with Last-Event-ID (the page it has is not yielded again), and
// the end of a watch when its board is deleted.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { RankdClient, RankdError, responseInfo } from '../rankd.js';
import { BASE, recordingFetch, requireEnv, uniqueBoard, write } from './support.js';

const board = uniqueBoard('jswatch');

before(async () => {
    requireEnv();
    await write('PUT', `/boards/${board}`, { page_size: 5, page_ttl_ms: 1000 });
    await write('POST', `/boards/${board}/scores`, { id: 'a', score: 5 });
});

/** The next value of an async iterator within ms (rejects past it). */
async function within(it, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    });
    try {
        return await Promise.race([it.next(), timeout]);
    } finally {
        clearTimeout(timer);
    }
}

/** A fetch whose event-stream replies are cut after their first chunk that holds an event, once
 * (what a dropped connection does). */
function cuttingFetch(state, inner = globalThis.fetch) {
    return async (url, init = {}) => {
        const res = await inner(url, init);
        if (state.cut || !(res.headers.get('content-type') || '').startsWith('text/event-stream'))
            return res;
        state.cut = true;
        const reader = res.body.getReader();
        let seen = '';
        const body = new ReadableStream({
            async pull(ctl) {
                const { value, done } = await reader.read();
                if (done) {
                    ctl.close();
                    return;
                }
                ctl.enqueue(value);
                seen += new TextDecoder().decode(value);
                if (seen.includes('event: page')) {
                    await reader.cancel();
                    ctl.error(new TypeError('terminated')); // as undici reports a lost connection
                }
            },
        });
        return new Response(body, { status: res.status, headers: res.headers });
    };
}

describe('watch', () => {
    it('yields the page now and each time it changes', async () => {
        const client = new RankdClient({ baseUrl: BASE });
        const now = await client.page(board, 1);
        const it = client.watch(board, 1);
        const first = await within(it, 5000, 'first page');
        assert.deepEqual(first.value, now);
        // the same version (a GET that took gzip names its form: the ETag and "-gz")
        assert.equal(responseInfo(first.value).etag, responseInfo(now).etag.replace(/-gz"$/, '"'));
        await write('POST', `/boards/${board}/scores`, { id: 'b', score: 7 });
        const t0 = Date.now();
        const next = await within(it, 4000, 'changed page');
        assert.deepEqual(next.value.items.map((x) => x.id), ['b', 'a']);
        assert.ok(Date.now() - t0 < 4000);
        await it.return(); // closes the stream
    });

    it('reconnects with Last-Event-ID and does not repeat the page it has', async () => {
        const log = [];
        const state = { cut: false };
        const client = new RankdClient({ baseUrl: BASE, fetch: recordingFetch(log, cuttingFetch(state)) });
        const it = client.watch(board, 1, { size: 2 });
        const first = await within(it, 5000, 'first page');
        const etag = responseInfo(first.value).etag;
        // the stream is cut after this page: waiting for the next one, the watch reconnects
        // (after rankd's retry: 1 s)
        const pending = within(it, 8000, 'changed page');
        for (let i = 0; i < 50 && log.length < 2; i++)
            await new Promise((ok) => setTimeout(ok, 100));
        assert.equal(log.length, 2, 'one reconnect');
        assert.equal(log[1].headers['Last-Event-ID'], etag);
        await new Promise((ok) => setTimeout(ok, 500));
        await write('POST', `/boards/${board}/scores`, { id: 'c', score: 9 });
        const next = await pending;
        assert.notEqual(responseInfo(next.value).etag, etag, 'the page it had is not yielded again');
        assert.equal(next.value.items[0].id, 'c');
        await it.return();
    });

    it('ends with the 404 when the board is deleted', async () => {
        const gone = uniqueBoard('jswatchgone');
        await write('PUT', `/boards/${gone}`, { page_ttl_ms: 1000 });
        const client = new RankdClient({ baseUrl: BASE });
        const it = client.watch(gone, 1);
        await within(it, 5000, 'first page');
        await write('DELETE', `/boards/${gone}`);
        await assert.rejects(within(it, 5000, 'the end'), (e) => {
            assert.ok(e instanceof RankdError, String(e));
            assert.equal(e.status, 404);
            assert.equal(e.code, 'board_not_found');
            return true;
        });
    });

    it('watches a score range: its page now and when it changes', async () => {
        const ranged = uniqueBoard('jswatchrange');
        await write('PUT', `/boards/${ranged}`, { page_ttl_ms: 1000 });
        await write('POST', `/boards/${ranged}/scores`, { id: 'low', score: 1 });
        await write('POST', `/boards/${ranged}/scores`, { id: 'in', score: 15 });
        const client = new RankdClient({ baseUrl: BASE });
        const now = await client.page(ranged, 1, { min: 10, max: '20' });
        const it = client.watch(ranged, 1, { min: 10, max: '20' });
        const first = await within(it, 5000, 'first page');
        assert.deepEqual(first.value, now);
        assert.deepEqual(first.value.items.map((x) => x.id), ['in']);
        await write('POST', `/boards/${ranged}/scores`, { id: 'also', score: 12 });
        const next = await within(it, 4000, 'changed page');
        assert.deepEqual(next.value.items.map((x) => x.id), ['in', 'also']);
        assert.equal(next.value.total, 2);
        await it.return();
    });

    it('watches a page with members off it', async () => {
        const withBoard = uniqueBoard('jswatchwith');
        await write('PUT', `/boards/${withBoard}`, { page_ttl_ms: 1000, page_size: 1 });
        await write('POST', `/boards/${withBoard}/scores`, { id: 'top', score: 9 });
        await write('POST', `/boards/${withBoard}/scores`, { id: 'me', score: 1 });
        const client = new RankdClient({ baseUrl: BASE });
        const now = await client.page(withBoard, 1, { with: ['me'] });
        const it = client.watch(withBoard, 1, { with: ['me'] });
        const first = await within(it, 5000, 'first page');
        assert.deepEqual(first.value, now);
        assert.deepEqual(first.value.with.map((x) => [x.id, x.score]), [['me', 1]]);
        await write('POST', `/boards/${withBoard}/scores`, { id: 'me', score: 5 });
        const next = await within(it, 4000, 'changed page');
        assert.deepEqual(next.value.with.map((x) => [x.id, x.score]), [['me', 5]]);
        await it.return();
    });

    it('refuses what it cannot watch', async () => {
        const client = new RankdClient({ baseUrl: BASE });
        await assert.rejects(client.watch(board, 1, { after: 'x' }).next(), TypeError);
        await assert.rejects(client.watch(board, 0).next(), TypeError);
    });
});
