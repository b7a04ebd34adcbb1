// The web frontend (clients/web) in Debian's chromium, driven by playwright-core, against the real
// rankd and redis-server that scripts/test-clients.sh starts. Env: RANKD_URL, RANKD_WRITE_TOKEN,
// RANKD_TEST_REDIS_PORT and RANKD_TEST_REDIS_DIR (this Redis is stopped and restarted here),
// RANKD_FIXTURE (the cities NDJSON), RANKD_SCREENSHOT_DIR.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';

import { contrasts as contrastsOn, settled as settledOn } from './helpers.js';

const BASE = process.env.RANKD_URL;
const TOKEN = process.env.RANKD_WRITE_TOKEN;
const REDIS_PORT = process.env.RANKD_TEST_REDIS_PORT;
const REDIS_DIR = process.env.RANKD_TEST_REDIS_DIR;
const FIXTURE = process.env.RANKD_FIXTURE || new URL('../fixtures/cities-2000.ndjson', import.meta.url).pathname;
const SHOTS = process.env.RANKD_SCREENSHOT_DIR || new URL('../../build/screenshots', import.meta.url).pathname;
const SIZE = 20; // the cities board's page size here, as in `make run`
const TINY = 'zz-tiny'; // a second board: no name/country fields, for board switching
const WEEKLY = 'zz-weekly'; // a periodic board (weekly, retain 3)
const EMPTY = 'zz-empty'; // a board without members
const BIG = 'zz-big'; // 12,345 members: five-digit ranks
const BIG_N = 12345;
const LIVE = 'zz-live'; // page_ttl_ms 0, for auto-refresh
const PUSHED = 'zz-pushed'; // page_ttl_ms 1000, for auto-refresh through an event stream
const PUSHED_TTL = 1000;

const lines = readFileSync(FIXTURE, 'utf8').split('\n').filter(Boolean);
/** The fixture in board order: score descending, ties in write order (tiebreak "first"). */
const reference = lines.map((l, i) => ({ ...JSON.parse(l), line: i }))
    .sort((a, b) => b.score - a.score || a.line - b.line)
    .map((e, i) => ({ ...e, rank: i + 1 }));
/** A member whose rank is on page 40 at SIZE: rank 790. */
const PAGE40 = reference[789];

let context; // a persistent context on a fresh user-data-dir
let profile;
let page;
const offsite = []; // requests that left rankd (there must be none)
const pageErrors = [];

async function api(path, init = {}) {
    const res = await fetch(BASE + path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function writeApi(method, path, body, type = 'application/json') {
    const res = await fetch(BASE + path, {
        method, body, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': type },
    });
    const text = await res.text();
    if (!res.ok && !(method === 'DELETE' && res.status === 404))
        throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
}

function redisCli(...args) {
    return execFileSync('redis-cli', ['-p', REDIS_PORT, ...args],
        { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function redisUp() {
    try {
        return redisCli('ping') === 'PONG';
    } catch {
        return false;
    }
}

async function until(what, fn, ms = 10000) {
    const end = Date.now() + ms;
    for (;;) {
        if (await fn()) return;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
    }
}

function stopRedis() {
    redisCli('shutdown', 'save'); // the data is on disk for the restart
}

async function startRedis() {
    // As scripts/redis-fixture.sh starts it: same port, dir and files.
    execFileSync('redis-server', ['--port', REDIS_PORT, '--bind', '127.0.0.1', '--dir', REDIS_DIR,
        '--pidfile', join(REDIS_DIR, 'redis.pid'), '--logfile', join(REDIS_DIR, 'redis.log'),
        '--daemonize', 'yes'], { timeout: 5000 });
    await until('redis-server to answer', () => redisUp());
}

/** Wait until the page has finished loading a view (ready or error). */
const settled = (p = page) => settledOn(p);

/** The rows on screen: rank, id, name, country, raw score. */
function rows(p = page) {
    return p.$$eval('#rows tr', (trs) => trs.map((tr) => ({
        rank: Number(tr.dataset.rank),
        id: tr.querySelector('td.id').textContent,
        name: tr.querySelector('td.primary').textContent,
        country: tr.querySelector('td.secondary')?.textContent ?? null,
        score: Number(tr.querySelector('td.score').dataset.score),
        highlighted: tr.classList.contains('is-member'),
    })));
}

/** The rows must equal the API's page and the independent reference order. */
async function expectPage(n, size = SIZE, p = page) {
    const onScreen = await rows(p);
    const { status, body } = await api(`/boards/cities/rank?page=${n}&size=${size}`);
    assert.equal(status, 200);
    assert.deepEqual(onScreen.map(({ highlighted, ...r }) => r), body.items.map((it) => ({
        rank: it.rank, id: it.id, name: it.record.name, country: it.record.country, score: it.score,
    })));
    const ref = reference.slice((n - 1) * size, n * size);
    assert.deepEqual(onScreen.map((r) => [r.rank, r.id, r.score]), ref.map((e) => [e.rank, e.id, e.score]));
    const url = new URL(p.url());
    assert.equal(url.searchParams.get('board'), 'cities');
    assert.equal(url.searchParams.get('page'), String(n));
    assert.equal(await p.inputValue('#page'), String(n));
    return onScreen;
}

async function newPage(viewport = { width: 1280, height: 900 }) {
    const p = await context.newPage();
    await p.setViewportSize(viewport);
    p.on('pageerror', (e) => pageErrors.push(String(e)));
    return p;
}

before(async () => {
    assert.ok(BASE && TOKEN && REDIS_PORT && REDIS_DIR,
        'run through scripts/test-clients.sh (RANKD_URL, RANKD_WRITE_TOKEN, RANKD_TEST_REDIS_*)');
    mkdirSync(SHOTS, { recursive: true });
    // The cities board from the fixture, through the NDJSON endpoint, as `make run` loads it.
    // Never wipe someone's real demo board: only an absent one or this fixture is replaced.
    const existing = await api('/boards/cities');
    assert.ok(existing.status === 404 || existing.body.total === 2000,
        `rankd at ${BASE} already has a cities board of ${existing.body?.total} members: use a throwaway rankd`);
    await writeApi('DELETE', '/boards/cities');
    await writeApi('PUT', '/boards/cities', JSON.stringify({ order: 'desc', tiebreak: 'first', page_size: SIZE }));
    const r = await writeApi('POST', '/boards/cities/scores', readFileSync(FIXTURE), 'application/x-ndjson');
    assert.equal(r.applied, 2000);
    assert.equal(r.rejected_total, 0);
    await writeApi('DELETE', `/boards/${TINY}`);
    await writeApi('POST', `/boards/${TINY}/scores`, JSON.stringify({ entries: [
        { id: 'alice', score: 30, record: { team: 'red', level: 7 } },
        { id: 'bob', score: 20, record: { team: 'blue', level: 3 } },
        { id: 'carol', score: 10 },
    ] }));
    for (const b of [WEEKLY, EMPTY, BIG, LIVE, PUSHED]) await writeApi('DELETE', `/boards/${b}`);
    await writeApi('PUT', `/boards/${WEEKLY}`, JSON.stringify({ period: 'weekly', retain: 3, page_size: 10 }));
    await writeApi('POST', `/boards/${WEEKLY}/scores`, JSON.stringify({ entries: reference.slice(0, 14)
        .map((e) => ({ id: e.id, score: Math.round(e.score / 1000), record: { name: e.record.name, country: e.record.country } })) }));
    await writeApi('PUT', `/boards/${EMPTY}`, JSON.stringify({ page_size: 10 }));
    const big = [];
    for (let i = 1; i <= BIG_N; i++) big.push(JSON.stringify({ id: `m${i}`, score: i * 3, record: { name: `Member ${i}` } }));
    const rb = await writeApi('POST', `/boards/${BIG}/scores`, `${big.join('\n')}\n`, 'application/x-ndjson');
    assert.equal(rb.applied, BIG_N);
    await writeApi('PUT', `/boards/${LIVE}`, JSON.stringify({ page_size: 10, page_ttl_ms: 0 }));
    await writeApi('POST', `/boards/${LIVE}/scores`, JSON.stringify({ entries: [
        { id: 'ana', score: 50, record: { name: 'Ana' } }, { id: 'ben', score: 40, record: { name: 'Ben' } },
        { id: 'cas', score: 30, record: { name: 'Cas' } }, { id: 'dov', score: 20, record: { name: 'Dov' } },
    ] }));
    await writeApi('PUT', `/boards/${PUSHED}`, JSON.stringify({ page_size: 10, page_ttl_ms: PUSHED_TTL }));
    await writeApi('POST', `/boards/${PUSHED}/scores`, JSON.stringify({ entries: [
        { id: 'ana', score: 50, record: { name: 'Ana' } }, { id: 'ben', score: 40, record: { name: 'Ben' } },
    ] }));

    profile = mkdtempSync(join(tmpdir(), 'rankd-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--no-first-run'],
        viewport: { width: 1280, height: 900 },
        timeout: 30000,
    });
    context.setDefaultTimeout(10000);
    context.on('request', (req) => {
        const u = req.url();
        if (!u.startsWith(`${BASE}/`) && !u.startsWith('data:')) offsite.push(u);
    });
    page = await newPage();
});

after(async () => {
    if (REDIS_PORT && !redisUp()) await startRedis().catch(() => {});
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the cities board in chromium', () => {
    it('the reference order matches the fixture facts', () => {
        assert.deepEqual(reference.slice(0, 3).map((e) => e.record.name), ['Shanghai', 'Istanbul', 'Buenos Aires']);
        assert.equal(PAGE40.rank, 790);
        assert.equal(Math.ceil(PAGE40.rank / SIZE), 40);
    });

    it('opens on the cities board, page 1, rows as the API gives them', async () => {
        await page.goto(`${BASE}/`);
        assert.equal(await settled(), 'ready');
        const r = await expectPage(1);
        assert.equal(r.length, SIZE);
        assert.equal(r[0].name, 'Shanghai');
        assert.equal(r[0].country, 'CN');
        assert.equal(await page.$eval('#board', (s) => s.value), 'cities');
        assert.match(await page.textContent('#status'), /Page 1 of 100/);
        assert.equal(await page.isDisabled('#prev'), true);
        assert.equal(await page.isDisabled('#next'), false);
        assert.equal(await page.title(), 'cities · page 1 · rankd');
    });

    it('saves a screenshot of the cities board', async () => {
        await page.screenshot({ path: join(SHOTS, 'cities.png'), fullPage: true });
    });

    it('goes to page 2 and back with the browser back button (and a 304 on the way back)', async () => {
        const statuses = [];
        const onResponse = (res) => {
            if (res.url().includes('/boards/cities/rank')) statuses.push([new URL(res.url()).searchParams.get('page'), res.status()]);
        };
        page.on('response', onResponse);
        await page.click('#next');
        await page.waitForURL(/[?&]page=2\b/);
        await settled();
        const r2 = await expectPage(2);
        assert.equal(r2[0].rank, 21);

        await page.goBack();
        await page.waitForURL(/[?&]page=1\b/);
        await page.waitForFunction(() => document.querySelector('#rows tr')?.dataset.rank === '1');
        await settled();
        await expectPage(1);
        // The client sent If-None-Match for page 1 and reused its copy.
        assert.ok(statuses.some(([p, s]) => p === '1' && s === 304), JSON.stringify(statuses));

        await page.goForward();
        await page.waitForURL(/[?&]page=2\b/);
        await page.waitForFunction(() => document.querySelector('#rows tr')?.dataset.rank === '21');
        await expectPage(2);
        page.off('response', onResponse);
    });

    it('jumps to a member on page 40 and highlights them', async () => {
        await page.fill('#member', PAGE40.id);
        await page.press('#member', 'Enter');
        await page.waitForURL(/[?&]page=40\b/);
        await page.waitForSelector('tr.is-member');
        await settled();
        const r = await expectPage(40);
        const hl = r.filter((x) => x.highlighted);
        assert.deepEqual(hl.map((x) => [x.id, x.rank]), [[PAGE40.id, 790]]);
        assert.equal(await page.getAttribute('tr.is-member', 'aria-current'), 'true');
        assert.equal(new URL(page.url()).searchParams.get('member'), PAGE40.id);
        assert.match(await page.textContent('#status'), /rank 790/);
        assert.ok(await page.$eval('tr.is-member', (tr) => {
            const b = tr.getBoundingClientRect();
            return b.top >= 0 && b.bottom <= innerHeight;
        }), 'the highlighted row is scrolled into view');
        const bg = await page.$eval('tr.is-member', (tr) => getComputedStyle(tr).backgroundColor);
        const plain = await page.$eval('tr:not(.is-member)', (tr) => getComputedStyle(tr).backgroundColor);
        assert.notEqual(bg, plain);
        await page.screenshot({ path: join(SHOTS, 'cities-member.png') });
    });

    it('a link with only member= resolves to its page', async () => {
        const p = await newPage();
        await p.goto(`${BASE}/?board=cities&member=${encodeURIComponent(PAGE40.id)}&size=${SIZE}`);
        await p.waitForSelector('tr.is-member');
        assert.equal(new URL(p.url()).searchParams.get('page'), '40');
        await expectPage(40, SIZE, p);
        await p.close();
    });

    it('an unknown member is a notice, not an error', async () => {
        await page.fill('#member', 'no-such-city');
        await page.press('#member', 'Enter');
        await page.waitForFunction(() => /No member/.test(document.querySelector('#status').textContent));
        assert.equal(await settled(), 'ready');
        assert.equal(await page.isHidden('#error'), true);
        assert.equal(await page.$$eval('tr.is-member', (t) => t.length), 0);
        assert.equal(new URL(page.url()).searchParams.get('member'), null);
    });

    it('the page-number input, the last page and the page size', async () => {
        await page.fill('#page', '100');
        await page.press('#page', 'Enter');
        await page.waitForURL(/[?&]page=100\b/);
        await settled();
        const r = await expectPage(100);
        assert.equal(r.at(-1).rank, 2000);
        assert.equal(await page.isDisabled('#next'), true);
        assert.equal(await page.isDisabled('#last'), true);

        await page.click('#first');
        await page.waitForURL(/[?&]page=1\b/);
        await settled();
        await page.click('#last');
        await page.waitForURL(/[?&]page=100\b/);
        await settled();
        await page.click('#prev');
        await page.waitForURL(/[?&]page=99\b/);
        await settled();
        await expectPage(99);

        // Page size 50 keeps the first row (rank 1961) on screen: page 40 at 50.
        await page.selectOption('#size', '50');
        await page.waitForURL(/[?&]size=50\b/);
        await settled();
        const r50 = await expectPage(40, 50);
        assert.equal(r50.length, 50);
        assert.ok(r50.some((x) => x.rank === 1961));

        // A number past the end goes to the last page.
        await page.fill('#page', '999');
        await page.press('#page', 'Enter');
        await page.waitForURL(/[?&]page=40\b/); // clamped to the last page
        await settled();
    });

    it('switches boards; a board without name fields shows its own record fields', async () => {
        await page.selectOption('#board', TINY);
        await page.waitForURL(new RegExp(`board=${TINY}`));
        await settled();
        const heads = await page.$$eval('#head th', (ths) => ths.map((t) => t.textContent));
        assert.deepEqual(heads, ['Rank', 'Team', 'Level', 'Id', 'Score']);
        const ids = await page.$$eval('#rows td.id', (tds) => tds.map((t) => t.textContent));
        assert.deepEqual(ids, ['alice', 'bob', 'carol']);
        await page.goBack();
        await page.waitForURL(/board=cities/);
        await settled();
        assert.equal(await page.$eval('#board', (s) => s.value), 'cities');
    });

    it('is usable at phone width (360 px): nothing scrolls sideways', async () => {
        const p = await newPage({ width: 360, height: 740 });
        await p.goto(`${BASE}/?board=cities&page=1&size=${SIZE}&member=1850147`);
        await p.waitForSelector('tr.is-member');
        const m = await p.evaluate(() => ({
            scroll: document.documentElement.scrollWidth,
            inner: innerWidth,
            outside: [...document.querySelectorAll('select, input, button, td, th, h1, nav, form')]
                .filter((e) => e.getClientRects().length)
                .map((e) => [e.id || e.className || e.tagName, e.getBoundingClientRect()])
                .filter(([, b]) => b.left < -0.5 || b.right > innerWidth + 0.5)
                .map(([n]) => n),
        }));
        assert.equal(m.inner, 360);
        assert.ok(m.scroll <= 360, `document is ${m.scroll}px wide at 360`);
        assert.deepEqual(m.outside, []);
        // Buttons stay big enough to tap.
        const small = await p.$$eval('button', (bs) => bs
            .filter((b) => b.getClientRects().length && b.getBoundingClientRect().height < 32).map((b) => b.textContent));
        assert.deepEqual(small, []);
        await expectPage(1, SIZE, p);
        await p.screenshot({ path: join(SHOTS, 'cities-phone.png'), fullPage: true });
        await p.close();
    });

    it('works with the keyboard alone', async () => {
        const p = await newPage();
        await p.goto(`${BASE}/?board=cities&page=1&size=${SIZE}`);
        await settled(p);
        const active = () => p.evaluate(() => {
            const a = document.activeElement;
            const cs = getComputedStyle(a);
            return { id: a.id || a.className, outline: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2 };
        });
        async function tabTo(id, key = 'Tab') {
            for (let i = 0; i < 40; i++) {
                await p.keyboard.press(key);
                const a = await active();
                if (a.id === id) {
                    assert.ok(a.outline, `#${id} shows a focus outline`);
                    return;
                }
            }
            assert.fail(`#${id} is not reachable with ${key}`);
        }
        // The skip link comes first and moves focus to the table.
        await p.keyboard.press('Tab');
        assert.equal((await active()).id, 'skip');
        await p.keyboard.press('Enter');
        assert.equal((await active()).id, 'results');

        // After the table comes the bottom pager: its Next moves focus to the top of the new page.
        await tabTo('next-bottom');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=2\b/);
        await settled(p);
        await expectPage(2, SIZE, p);
        assert.equal((await active()).id, 'results', 'focus goes to the table of the new page');

        await tabTo('next', 'Shift+Tab');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=3\b/);
        await settled(p);
        await expectPage(3, SIZE, p);
        assert.equal((await active()).id, 'next', 'focus stays on Next');

        await tabTo('page', 'Shift+Tab');
        await p.keyboard.press('Control+A');
        await p.keyboard.type('40');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=40\b/);
        await settled(p);
        await expectPage(40, SIZE, p);

        await tabTo('member', 'Shift+Tab');
        await p.keyboard.type(reference[0].id);
        await p.keyboard.press('Enter');
        await p.waitForSelector('tr.is-member');
        await expectPage(1, SIZE, p);
        assert.equal(await p.$eval('tr.is-member', (tr) => tr.dataset.id), reference[0].id);

        await tabTo('last');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=100\b/);
        await settled(p);
        // Last is now disabled: focus must not be lost to the page body.
        assert.equal((await active()).id, 'page');

        await tabTo('board', 'Shift+Tab');
        const nextBoard = await p.$eval('#board', (s) => s.options[s.selectedIndex + 1]?.value);
        assert.ok(nextBoard, 'a second board to switch to');
        await p.keyboard.press('ArrowDown'); // the next board in the list
        await p.waitForURL(new RegExp(`board=${nextBoard}&`));
        await settled(p);
        const first = (await api(`/boards/${nextBoard}/rank?page=1`)).body.items.map((it) => it.id);
        assert.deepEqual(await p.$$eval('#rows td.id', (tds) => tds.map((t) => t.textContent)), first);
        await p.close();
    });

    it('shows a clear error with a retry when rankd is unreachable', async () => {
        const p = await newPage();
        await p.route('**/boards', (route) => route.abort('connectionrefused'));
        await p.goto(`${BASE}/?board=cities&page=3`);
        assert.equal(await settled(p), 'error');
        assert.equal(await p.isVisible('#error'), true);
        assert.equal(await p.textContent('#error-title'), 'Cannot reach rankd');
        assert.equal(await p.getAttribute('#error', 'role'), 'alert');
        await p.unroute('**/boards');
        await p.click('#retry');
        assert.equal(await settled(p), 'ready');
        assert.equal(await p.isHidden('#error'), true);
        await expectPage(3, SIZE, p);
        await p.close();
    });

    it('shows a clear error with a retry while Redis is stopped, and recovers', async () => {
        await page.goto(`${BASE}/?board=cities&page=2&size=${SIZE}`);
        assert.equal(await settled(), 'ready');
        stopRedis();
        await until('redis-server to stop', () => !redisUp());
        try {
            await page.reload();
            assert.equal(await settled(), 'error');
            assert.equal(await page.isVisible('#error'), true);
            assert.equal(await page.textContent('#error-title'), 'rankd cannot reach its database');
            assert.match(await page.textContent('#error-message'), /Redis is down/);
            assert.match(await page.textContent('#error-detail'), /503 redis_unavailable/);
            assert.equal(await page.isHidden('#results'), true, 'no stale rows under the error');
            assert.equal(await page.isVisible('#retry'), true);
            await page.screenshot({ path: join(SHOTS, 'redis-down.png') });
            // Retrying while Redis is still down keeps the message.
            await page.click('#retry');
            assert.equal(await settled(), 'error');
        } finally {
            await startRedis();
        }
        // rankd re-dials with back-off (at most 2 s): retry until the board is back.
        await until('the page to recover after Retry', async () => {
            await page.click('#retry');
            return (await settled()) === 'ready';
        }, 15000);
        assert.equal(await page.isHidden('#error'), true);
        await expectPage(2);
        assert.equal((await api('/boards/cities')).body.total, 2000, 'the data survived the restart');
    });

});

// ---------------------------------------------------------------- the "Frontend developers" items

/** Colour helpers (in the page): the contrast ratio of an element's text on its background, and
 * the page background's luminance (body). */
const contrasts = (p, selectors) => contrastsOn(p, selectors, { body: true });

const CONTRAST_SELECTORS = ['h1', '#view-board', '#rows tr:nth-child(5) td.primary', '#rows tr:nth-child(5) td.rank',
    '#rows tr:nth-child(5) td.secondary', '#rows tr:nth-child(1) .medal', '#rows tr:nth-child(2) .medal',
    '#rows tr:nth-child(3) .medal', '#rows tr:nth-child(1) td.primary', '#head th', '#status', '#next', '#first',
    '.field label', '#pages', '#where-bottom', 'footer p', 'footer a', '.period-label'];

/** Where the member bar is drawn (an inset box-shadow on the row or its first cell): its right edge. */
function barAndRank(p) {
    return p.$eval('tr.is-member', (tr) => {
        let barRight = null;
        for (const el of [tr, tr.firstElementChild]) {
            const sh = getComputedStyle(el).boxShadow; // e.g. "rgb(176, 125, 0) 5px 0px 0px 0px inset"
            if (sh && sh !== 'none' && /inset/.test(sh)) {
                const x = parseFloat(sh.replace(/rgba?\([^)]*\)/g, '').match(/-?[\d.]+px/)[0]);
                barRight = Math.max(barRight ?? -Infinity, el.getBoundingClientRect().left + x);
            }
        }
        const td = tr.querySelector('td.rank');
        const range = document.createRange();
        range.selectNodeContents(td.firstChild);
        const text = range.getBoundingClientRect();
        const next = tr.querySelector('td.primary').getBoundingClientRect();
        const cellBox = td.getBoundingClientRect();
        return { barRight, textLeft: text.left, textRight: text.right, cellLeft: cellBox.left,
            nextLeft: next.left, rankText: td.textContent, rowLeft: tr.getBoundingClientRect().left };
    });
}

describe('top 3, numbers, empty and unknown boards', () => {
    it('ranks 1, 2 and 3 are visibly distinct, and not by colour alone', async () => {
        await page.goto(`${BASE}/?board=cities&page=1&size=${SIZE}`);
        assert.equal(await settled(), 'ready');
        const r = await page.$$eval('#rows tr', (trs) => trs.slice(0, 5).map((tr) => {
            const td = tr.querySelector('td.rank');
            const medal = td.querySelector('.medal');
            const ms = medal && getComputedStyle(medal);
            return {
                cls: [...tr.classList].filter((c) => c.startsWith('podium')).sort().join(' '),
                text: td.textContent,
                title: td.title,
                medal: medal ? { radius: parseFloat(ms.borderTopLeftRadius), border: parseFloat(ms.borderTopWidth), bg: ms.backgroundColor } : null,
                weight: Number(getComputedStyle(tr.querySelector('td.primary')).fontWeight),
                bg: getComputedStyle(tr).backgroundColor,
            };
        }));
        assert.deepEqual(r.map((x) => x.cls), ['podium podium-1', 'podium podium-2', 'podium podium-3', '', '']);
        // Words for screen readers in the cell, a title for the mouse.
        assert.deepEqual(r.slice(0, 3).map((x) => x.text), ['1 (first place)', '2 (second place)', '3 (third place)']);
        assert.deepEqual(r.slice(0, 3).map((x) => x.title), ['first place', 'second place', 'third place']);
        assert.equal(r[3].text, '4');
        // A badge shape (round, bordered) and a bolder row: cues that are not colour.
        for (const x of r.slice(0, 3)) {
            assert.ok(x.medal && x.medal.radius >= 10 && x.medal.border >= 2, JSON.stringify(x));
            assert.ok(x.weight >= 700);
        }
        assert.equal(r[3].medal, null);
        assert.ok(r[3].weight < 700 && r[4].weight < 700);
        // And colour too: three different medals, three row tints unlike the plain rows.
        assert.equal(new Set(r.slice(0, 3).map((x) => x.medal.bg)).size, 3);
        assert.equal(new Set(r.slice(0, 4).map((x) => x.bg)).size, 4);
        // The accessible name of the rank cell says it.
        const snap = await page.locator('#rows tr').first().locator('td.rank').evaluate((td) => td.innerText);
        assert.match(snap, /^1/);
        await page.screenshot({ path: join(SHOTS, 'cities-top3.png') });
    });

    it('ranks, scores, totals and the status line use one number formatter', async () => {
        await page.goto(`${BASE}/?board=cities&page=100&size=${SIZE}`);
        assert.equal(await settled(), 'ready');
        const f = await page.evaluate(() => {
            const nf = new Intl.NumberFormat(undefined, { maximumFractionDigits: 9 });
            return { 1981: nf.format(1981), 2000: nf.format(2000), 100: nf.format(100) };
        });
        const r = await page.$$eval('#rows tr', (trs) => trs.map((tr) => ({
            rank: tr.querySelector('td.rank').textContent, score: tr.querySelector('td.score').textContent,
            raw: Number(tr.querySelector('td.score').dataset.score),
        })));
        assert.equal(r[0].rank, f[1981]);
        assert.equal(r.at(-1).rank, f[2000]);
        const status = await page.textContent('#status');
        assert.ok(status.includes(`ranks ${f[1981]}–${f[2000]} of ${f[2000]}`), status);
        assert.ok(status.includes(`of ${f[100]}`), status);
        assert.equal(await page.textContent('#pages'), `of ${f[100]}`);
        const nf = await page.evaluate((xs) => xs.map((x) => new Intl.NumberFormat(undefined, { maximumFractionDigits: 9 }).format(x)), r.map((x) => x.raw));
        assert.deepEqual(r.map((x) => x.score), nf);
        // The member line too.
        await page.goto(`${BASE}/?board=${BIG}&size=10&member=m1`);
        await page.waitForSelector('tr.is-member');
        const fb = await page.evaluate((n) => new Intl.NumberFormat().format(n), BIG_N);
        assert.equal(await page.$eval('tr.is-member td.rank', (td) => td.textContent), fb);
        assert.ok((await page.textContent('#status')).includes(`rank ${fb},`));
    });

    it('an empty board is page 1 of 1 everywhere (never "of 0")', async () => {
        await page.goto(`${BASE}/?board=${EMPTY}`);
        assert.equal(await settled(), 'ready');
        assert.match(await page.textContent('#status'), /^Page 1 of 1 · 0 members$/);
        assert.equal(await page.textContent('#pages'), 'of 1');
        assert.equal(await page.textContent('#where-bottom'), 'Page 1 of 1');
        assert.match(await page.textContent('#caption'), /page 1 of 1$/);
        assert.equal(await page.textContent('#empty'), `Board ${EMPTY} has no members yet.`);
        assert.doesNotMatch(await page.textContent('body'), /of 0\b/);
        for (const id of ['first', 'prev', 'next', 'last', 'first-bottom', 'prev-bottom', 'next-bottom', 'last-bottom'])
            assert.equal(await page.isDisabled(`#${id}`), true, id);
    });

    it('an unknown board says it does not exist, without a Retry (a 404 is not retryable)', async () => {
        await page.goto(`${BASE}/?board=no-such-board&page=1`);
        assert.equal(await settled(), 'error');
        assert.equal(await page.textContent('#error-title'), 'This board does not exist');
        assert.match(await page.textContent('#error-message'), /no board “no-such-board”/);
        assert.match(await page.textContent('#error-detail'), /404 board_not_found/);
        assert.equal(await page.isHidden('#retry'), true);
        assert.equal(await page.getAttribute('#error', 'data-retryable'), 'false');
        assert.equal(await page.isHidden('#results'), true);
        assert.equal(await page.$eval('#board', (s) => s.options[s.selectedIndex].textContent), 'no-such-board: no such board');
        // A board created after the list was read is found (the list is read again).
        await page.goto(`${BASE}/?board=cities`);
        assert.equal(await settled(), 'ready');
        await writeApi('POST', '/boards/zz-new/scores', JSON.stringify({ id: 'solo', score: 1 }));
        await page.evaluate(() => {
            history.pushState(null, '', '?board=zz-new&page=1');
            dispatchEvent(new PopStateEvent('popstate'));
        });
        await page.waitForFunction(() => document.querySelector('#rows tr')?.dataset.id === 'solo');
        assert.equal(await page.$eval('#board', (s) => s.value), 'zz-new');
        assert.equal(await page.$$eval('#board option[data-placeholder]', (o) => o.length), 0);
        await writeApi('DELETE', '/boards/zz-new');
        await page.goto(`${BASE}/?board=no-such-board&page=1`);
        assert.equal(await settled(), 'error');
        await page.selectOption('#board', 'cities');
        await page.waitForURL(/board=cities/);
        assert.equal(await settled(), 'ready');
        assert.equal(await page.isHidden('#error'), true);
        await expectPage(1);
    });
});

describe('the bottom pager', () => {
    it('mirrors the top pager and works the same; focus moves to the top of the new page', async () => {
        await page.setViewportSize({ width: 1280, height: 700 });
        await page.goto(`${BASE}/?board=cities&page=1&size=${SIZE}`);
        assert.equal(await settled(), 'ready');
        const box = async (sel) => page.$eval(sel, (e) => {
            const b = e.getBoundingClientRect();
            return { top: b.top + scrollY, bottom: b.bottom + scrollY };
        });
        assert.ok((await box('.pager-bottom')).top >= (await box('.table-wrap')).bottom, 'under the table');
        const state = () => page.$$eval('.pager button[data-go]', (bs) => Object.fromEntries(bs.map((b) => [b.id, b.disabled])));
        assert.deepEqual(await state(), { first: true, prev: true, next: false, last: false,
            'first-bottom': true, 'prev-bottom': true, 'next-bottom': false, 'last-bottom': false });
        assert.equal(await page.textContent('#where-bottom'), 'Page 1 of 100');

        await page.click('#next-bottom');
        await page.waitForURL(/[?&]page=2\b/);
        await settled();
        await expectPage(2);
        assert.equal(await page.evaluate(() => document.activeElement.id), 'results');
        assert.ok(await page.$eval('.pager-top', (e) => e.getBoundingClientRect().top >= -1 && e.getBoundingClientRect().top < innerHeight),
            'the top of the new page is in view');
        assert.equal(await page.textContent('#where-bottom'), 'Page 2 of 100');

        await page.click('#last-bottom');
        await page.waitForURL(/[?&]page=100\b/);
        await settled();
        await expectPage(100);
        assert.deepEqual(await state(), { first: false, prev: false, next: true, last: true,
            'first-bottom': false, 'prev-bottom': false, 'next-bottom': true, 'last-bottom': true });
        await page.click('#prev-bottom');
        await page.waitForURL(/[?&]page=99\b/);
        await settled();
        await page.click('#first-bottom');
        await page.waitForURL(/[?&]page=1\b/);
        await settled();
        await expectPage(1);
        await page.goBack();
        await page.waitForURL(/[?&]page=99\b/);
        await settled();
        await expectPage(99);
        await page.screenshot({ path: join(SHOTS, 'cities-bottom-pager.png'), fullPage: true });
        await page.setViewportSize({ width: 1280, height: 900 });
    });
});

describe('periodic boards', () => {
    let settings;

    before(async () => {
        settings = (await api(`/boards/${WEEKLY}`)).body;
        assert.equal(settings.periods.length, 4);
        // Last week gets members too: writes only reach the current period, so its set is made
        // in Redis from ranks 7-14 of this week's (the scores are already in the board's packing).
        const key = (period) => `rankd:{${WEEKLY}}:z:${period}`;
        assert.equal(redisCli('ZRANGESTORE', key(settings.periods[1]), key(settings.current_period), '6', '13'), '8');
    });

    it('a period picker lists the readable periods; the current one is shown on the page', async () => {
        const ranks = [];
        const onRequest = (req) => {
            if (req.url().includes(`/boards/${WEEKLY}/`)) ranks.push(new URL(req.url()));
        };
        page.on('request', onRequest);
        await page.goto(`${BASE}/?board=${WEEKLY}`);
        assert.equal(await settled(), 'ready');
        assert.equal(await page.isVisible('#period'), true);
        const opts = await page.$$eval('#period option', (os) => os.map((o) => [o.value, o.textContent]));
        assert.deepEqual(opts.map(([, t]) => t), settings.periods.map((id, i) => `Week ${id}${i === 0 ? ' (current)' : ''}`));
        assert.equal(opts[0][0], '', 'the current period follows the clock (no period= in the URL)');
        assert.equal(await page.$eval('#period', (s) => s.value), '');
        const cur = settings.current_period;
        assert.equal(await page.textContent('#period-label'), `Week ${cur} · current`);
        assert.equal(await page.textContent('#view-board'), WEEKLY);
        assert.match(await page.textContent('#status'), new RegExp(`^Week ${cur} \\(current\\) · Page 1 of 2 · ranks 1–10 of 14$`));
        assert.match(await page.textContent('#caption'), new RegExp(`Week ${cur} \\(current\\)`));
        const body = (await api(`/boards/${WEEKLY}/rank?page=1`)).body;
        assert.deepEqual((await rows()).map((x) => x.id), body.items.map((it) => it.id));
        assert.equal(new URL(page.url()).searchParams.get('period'), null);
        await page.screenshot({ path: join(SHOTS, 'periodic.png'), fullPage: true });

        // A past period: ?period= in the URL and in the reads, and that period's own ranking.
        const past = settings.periods[1];
        ranks.length = 0;
        await page.selectOption('#period', past);
        await page.waitForURL(new RegExp(`period=${past}`));
        assert.equal(await settled(), 'ready');
        assert.ok(ranks.some((u) => u.pathname.endsWith('/rank') && u.searchParams.get('period') === past), ranks.join(' '));
        assert.equal(await page.textContent('#period-label'), `Week ${past} · past`);
        const pastRows = await rows();
        assert.deepEqual(pastRows.map((x) => [x.rank, x.id]), reference.slice(6, 14).map((e, i) => [i + 1, e.id]));
        assert.deepEqual(pastRows.map((x) => x.id), (await api(`/boards/${WEEKLY}/rank?page=1&period=${past}`)).body.items.map((it) => it.id));
        assert.match(await page.textContent('#status'), new RegExp(`^Week ${past} · Page 1 of 1 · ranks 1–8 of 8$`));
        assert.match(await page.getAttribute('#api-link', 'href'), new RegExp(`period=${past}`));
        assert.match(await page.title(), new RegExp(`${WEEKLY} · ${past} · page 1`));
        await page.screenshot({ path: join(SHOTS, 'periodic-past.png'), fullPage: true });
        // Its member lookups are in that period: rank 1 there is rank 7 this week.
        await page.fill('#member', reference[6].id);
        await page.press('#member', 'Enter');
        await page.waitForSelector('tr.is-member');
        assert.match(await page.textContent('#status'), new RegExp(`^Week ${past} · .*: rank 1, `));
        await page.goBack();
        await settled();

        // An older period is empty (nothing was written then).
        const older = settings.periods[2];
        await page.selectOption('#period', older);
        await page.waitForURL(new RegExp(`period=${older}`));
        assert.equal(await settled(), 'ready');
        assert.equal(await page.textContent('#empty'), `Board ${WEEKLY} has no members in Week ${older}.`);
        assert.match(await page.textContent('#status'), new RegExp(`^Week ${older} · Page 1 of 1 · 0 members$`));

        // A member looked up in a period without them: a notice, as for any board.
        await page.fill('#member', reference[0].id);
        await page.press('#member', 'Enter');
        await page.waitForFunction(() => /No member/.test(document.querySelector('#status').textContent));
        assert.match(await page.textContent('#status'), new RegExp(`in Week ${older}\\.`));
        ranks.length = 0;
        await page.goBack(); // the older period, before the search
        await page.goBack(); // last week
        await page.goBack(); // the current period
        await page.waitForFunction(() => !/period=/.test(location.search));
        assert.equal(await settled(), 'ready');
        assert.equal(await page.$eval('#period', (s) => s.value), '');
        assert.equal(await page.textContent('#period-label'), `Week ${cur} · current`);
        assert.equal((await rows()).length, 10);

        // Naming the current period explicitly reads the same page.
        await page.goto(`${BASE}/?board=${WEEKLY}&period=${cur}&page=2`);
        assert.equal(await settled(), 'ready');
        assert.deepEqual((await rows()).map((x) => x.rank), [11, 12, 13, 14]);
        assert.equal(await page.$eval('#period', (s) => s.value), '');
        page.off('request', onRequest);
    });

    it('a period that is not readable is a clear error without Retry; the picker gets you out', async () => {
        await page.goto(`${BASE}/?board=${WEEKLY}&period=2001-W01`);
        assert.equal(await settled(), 'error');
        assert.equal(await page.textContent('#error-title'), 'This period cannot be read');
        assert.equal(await page.isHidden('#retry'), true);
        assert.equal(await page.isVisible('#period'), true);
        await page.selectOption('#period', '');
        assert.equal(await settled(), 'ready');
        assert.equal(new URL(page.url()).searchParams.get('period'), null);
        assert.equal((await rows()).length, 10);
    });

    it('boards without periods have no picker, and a stray ?period= is dropped with a notice', async () => {
        await page.goto(`${BASE}/?board=cities&period=2026-W01`);
        assert.equal(await settled(), 'ready');
        assert.equal(await page.isHidden('#period-field'), true);
        assert.equal(await page.isHidden('#period-label'), true);
        assert.match(await page.textContent('#status'), /has no periods/);
        assert.equal(new URL(page.url()).searchParams.get('period'), null);
        await expectPage(1);
    });

    it('switching boards leaves the period behind', async () => {
        await page.goto(`${BASE}/?board=${WEEKLY}&period=${settings.periods[2]}`);
        assert.equal(await settled(), 'ready');
        await page.selectOption('#board', 'cities');
        await page.waitForURL(/board=cities/);
        assert.equal(await settled(), 'ready');
        assert.equal(new URL(page.url()).searchParams.get('period'), null);
        assert.equal(await page.isHidden('#period-field'), true);
    });
});

/** A page without EventSource (an older browser): auto-refresh polls. */
async function newPollingPage() {
    const p = await newPage();
    await p.addInitScript(() => { delete window.EventSource; });
    return p;
}

/** Requests the page makes for a board's rank: {stream (Accept: text/event-stream), at}. */
function rankRequests(p, board) {
    const seen = [];
    p.on('request', (req) => {
        const u = new URL(req.url());
        if (u.pathname === `/boards/${board}/rank`)
            seen.push({ stream: /text\/event-stream/.test(req.headers().accept ?? ''), at: Date.now(), url: req.url() });
    });
    return seen;
}

describe('auto-refresh through an event stream', () => {
    it('a write shows within the page TTL + 1 s, with no polling while the stream is up', async () => {
        const p = await newPage({ width: 1280, height: 320 }); // short: the page scrolls
        const seen = rankRequests(p, PUSHED);
        await p.goto(`${BASE}/?board=${PUSHED}&refresh=1`);
        assert.equal(await settled(p), 'ready');
        await p.waitForFunction(() => /^Live/.test(document.querySelector('#auto-status').textContent), null, { timeout: 10000 });
        await p.evaluate(() => {
            document.querySelectorAll('#rows tr').forEach((tr) => { tr.dataset.mark = 'kept'; });
            window.changedAt = null;
            new MutationObserver(() => {
                if (!window.changedAt && document.querySelector('#rows tr')?.dataset.id === 'eve') window.changedAt = Date.now();
            }).observe(document.querySelector('#rows'), { childList: true, subtree: true });
        });
        await p.focus('#member');
        await p.evaluate(() => window.scrollTo(0, 40));
        const scrollY = await p.evaluate(() => window.scrollY);
        // refresh=1 would poll every second: three and a half seconds of a live stream, no GET.
        const before = seen.length;
        await new Promise((r) => setTimeout(r, 3500));
        assert.deepEqual(seen.slice(before), [], 'no request while the stream is up');
        assert.deepEqual(await p.$$eval('#rows tr', (trs) => trs.map((tr) => tr.dataset.mark)), ['kept', 'kept']);

        await writeApi('POST', `/boards/${PUSHED}/scores`, JSON.stringify({ id: 'eve', score: 99, record: { name: 'Eve' } }));
        const written = Date.now(); // the write is applied when its reply is in
        // (waiting longer than the bound, so that a late change is measured and reported, not a timeout)
        await p.waitForFunction(() => window.changedAt !== null, null, { timeout: PUSHED_TTL + 10000 });
        const took = (await p.evaluate(() => window.changedAt)) - written;
        console.log(`the table changed ${took} ms after the write (bound ${PUSHED_TTL + 1000} ms)`);
        assert.ok(took <= PUSHED_TTL + 1000, `the table changed ${took} ms after the write (bound: TTL ${PUSHED_TTL} + 1000 ms)`);
        assert.deepEqual((await rows(p)).map((x) => x.id), ['eve', 'ana', 'ben']);
        assert.equal(await p.evaluate(() => document.activeElement.id), 'member', 'focus stays');
        assert.equal(await p.evaluate(() => window.scrollY), scrollY, 'scroll position stays');
        assert.match(await p.textContent('#auto-status'), /^Live · updated at/);
        assert.equal(await p.evaluate(() => document.body.dataset.state), 'ready', 'no loading state');
        // One stream for the whole test, and the first GET of the page: nothing else was asked.
        assert.equal(seen.filter((x) => x.stream).length, 1, JSON.stringify(seen));
        assert.equal(seen.filter((x) => !x.stream).length, 1, JSON.stringify(seen));

        // Off: the stream closes (no event is drawn any more) and no request follows.
        await p.uncheck('#auto');
        await writeApi('POST', `/boards/${PUSHED}/scores`, JSON.stringify({ id: 'fay', score: 120, record: { name: 'Fay' } }));
        const n = seen.length;
        await new Promise((r) => setTimeout(r, PUSHED_TTL + 1500));
        assert.equal(seen.length, n);
        assert.equal((await rows(p))[0].id, 'eve', 'nothing is pushed into the table once auto-refresh is off');
        await p.close();
        await writeApi('DELETE', `/boards/${PUSHED}/members/fay`);
    });

    it('a refused stream falls back to polling with If-None-Match', async () => {
        const p = await newPage();
        const seen = rankRequests(p, PUSHED);
        // A proxy that refuses event streams (502) and passes the plain GETs.
        await p.route(`**/boards/${PUSHED}/rank*`, (route) =>
            /text\/event-stream/.test(route.request().headers().accept ?? '')
                ? route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad gateway</h1>' })
                : route.continue());
        await p.goto(`${BASE}/?board=${PUSHED}&refresh=1`);
        assert.equal(await settled(p), 'ready');
        await p.waitForFunction(() => /Live updates unavailable/.test(document.querySelector('#auto-status').textContent), null, { timeout: 10000 });
        await until('two polls after the stream failed', () => seen.filter((x) => !x.stream).length >= 3, 10000);
        await p.waitForFunction(() => /every 1 s · (unchanged|updated) at/.test(document.querySelector('#auto-status').textContent), null, { timeout: 10000 });
        assert.equal(seen.filter((x) => x.stream).length, 1, 'the stream is not retried at once');
        assert.equal(await p.evaluate(() => document.body.dataset.state), 'ready');
        await p.close();
    });
});

describe('auto-refresh by polling (no EventSource)', () => {
    it('revalidates with If-None-Match; a 304 keeps the table as it is; a change redraws it', async () => {
        const p = await newPollingPage();
        const seen = [];
        p.on('response', async (res) => {
            const u = new URL(res.url());
            if (u.pathname === `/boards/${LIVE}/rank`)
                seen.push({ status: res.status(), inm: (await res.request().allHeaders())['if-none-match'] ?? null, at: Date.now() });
        });
        await p.goto(`${BASE}/?board=${LIVE}&refresh=1`);
        assert.equal(await settled(p), 'ready');
        assert.equal(await p.isChecked('#auto'), true);
        // Mark the rows and the focus: a 304 must leave all of it alone.
        await p.evaluate(() => {
            document.querySelectorAll('#rows tr').forEach((tr) => { tr.dataset.mark = 'kept'; });
            window.states = [];
            new MutationObserver(() => window.states.push(document.body.dataset.state))
                .observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
        });
        await p.focus('#member');
        await until('three revalidations', () => seen.filter((x) => x.status === 304).length >= 3, 10000);
        assert.equal(seen[0].status, 200);
        assert.equal(seen[0].inm, null);
        // Every refresh is conditional. (Right after a board is re-created, rankd's tag may still
        // name the old generation for a moment: one 200 with the same rows, which changes nothing.)
        for (const x of seen.slice(1)) assert.match(x.inm, /^".+"$/);
        assert.ok(seen.slice(1).filter((x) => x.status !== 304).length <= 1, JSON.stringify(seen));
        assert.deepEqual(await p.$$eval('#rows tr', (trs) => trs.map((tr) => tr.dataset.mark)), ['kept', 'kept', 'kept', 'kept']);
        assert.equal(await p.evaluate(() => document.activeElement.id), 'member');
        assert.match(await p.textContent('#auto-status'), /unchanged at/);
        assert.deepEqual(await p.evaluate(() => window.states), [], 'no loading flicker');

        // A new leader: the next tick is a 200 and the table is redrawn in place.
        await writeApi('POST', `/boards/${LIVE}/scores`, JSON.stringify({ id: 'eve', score: 99, record: { name: 'Eve' } }));
        await p.waitForFunction(() => document.querySelector('#rows tr')?.dataset.id === 'eve', null, { timeout: 8000 });
        // (the response handler records a reply after an await of its headers: it may come in
        // just after the redraw)
        await until('a conditional request answered 200', () => seen.some((x) => x.status === 200 && x.inm), 5000);
        assert.deepEqual((await rows(p)).map((x) => x.id), ['eve', 'ana', 'ben', 'cas', 'dov']);
        assert.match(await p.textContent('#status'), /ranks 1–5 of 5/);
        assert.match(await p.textContent('#auto-status'), /updated at/);
        assert.equal(await p.evaluate(() => document.activeElement.id), 'member');

        // Off: no more requests, and refresh= leaves the URL.
        await p.uncheck('#auto');
        assert.equal(new URL(p.url()).searchParams.get('refresh'), null);
        const n = seen.length;
        await new Promise((r) => setTimeout(r, 2500));
        assert.equal(seen.length, n, 'no request after the toggle is off');
        // On again from the toggle: every 5 s by default.
        await p.check('#auto');
        assert.equal(new URL(p.url()).searchParams.get('refresh'), '5');
        assert.match(await p.textContent('#auto-status'), /every 5 s/);
        await p.close();
    });

    it('a failed refresh keeps the rows on screen and says so', async () => {
        const p = await newPollingPage();
        await p.goto(`${BASE}/?board=${LIVE}&refresh=1`);
        assert.equal(await settled(p), 'ready');
        await p.route(`**/boards/${LIVE}/rank*`, (route) => route.abort('connectionrefused'));
        await p.waitForFunction(() => /Auto-refresh failed/.test(document.querySelector('#auto-status').textContent), null, { timeout: 8000 });
        assert.equal(await p.evaluate(() => document.body.dataset.state), 'ready');
        assert.equal((await rows(p)).length, 5);
        await p.unroute(`**/boards/${LIVE}/rank*`);
        await p.waitForFunction(() => /unchanged at|updated at/.test(document.querySelector('#auto-status').textContent), null, { timeout: 8000 });
        await p.close();
    });
});

describe('dark theme and phone width', () => {
    it('follows prefers-color-scheme: dark, with readable contrast (and so does light)', async () => {
        for (const scheme of ['light', 'dark']) {
            const p = await newPage();
            await p.emulateMedia({ colorScheme: scheme });
            await p.goto(`${BASE}/?board=cities&page=1&size=${SIZE}&member=${encodeURIComponent(reference[5].id)}`);
            await p.waitForSelector('tr.is-member');
            const c = await contrasts(p, CONTRAST_SELECTORS);
            if (scheme === 'dark') assert.ok(c.body < 0.05, `dark background (luminance ${c.body})`);
            else assert.ok(c.body > 0.8, `light background (luminance ${c.body})`);
            for (const sel of CONTRAST_SELECTORS.filter((x) => x !== '.period-label'))
                assert.ok(c[sel] >= 4.5, `${scheme}: ${sel} contrast ${c[sel]}`);
            const hl = await contrasts(p, ['tr.is-member td.primary', 'tr.is-member td.rank']);
            assert.ok(hl['tr.is-member td.primary'] >= 4.5 && hl['tr.is-member td.rank'] >= 4.5, JSON.stringify(hl));
            await p.screenshot({ path: join(SHOTS, scheme === 'dark' ? 'cities-dark.png' : 'cities-light.png'), fullPage: true });
            // A periodic board, and an error, in this scheme.
            await p.goto(`${BASE}/?board=${WEEKLY}`);
            assert.equal(await settled(p), 'ready');
            const cp = await contrasts(p, ['.period-label', '#period', 'label[for=period]']);
            assert.ok(cp['.period-label'] >= 4.5 && cp['#period'] >= 4.5, JSON.stringify(cp));
            if (scheme === 'dark') await p.screenshot({ path: join(SHOTS, 'periodic-dark.png'), fullPage: true });
            await p.goto(`${BASE}/?board=no-such-board`);
            assert.equal(await settled(p), 'error');
            const ce = await contrasts(p, ['#error-title', '#error-message', '#error-detail']);
            for (const [k, v] of Object.entries(ce)) if (k !== 'body') assert.ok(v >= 4.5, `${scheme}: ${k} ${v}`);
            if (scheme === 'dark') await p.screenshot({ path: join(SHOTS, 'unknown-board-dark.png') });
            else await p.screenshot({ path: join(SHOTS, 'unknown-board.png') });
            await p.close();
        }
    });

    for (const [label, viewport] of [['phone width (360 px)', { width: 360, height: 740 }], ['desktop width', { width: 1280, height: 900 }]]) {
        it(`${label}: the member bar never covers a five-digit rank`, async () => {
            const p = await newPage(viewport);
            await p.goto(`${BASE}/?board=${BIG}&size=10&member=m1`); // rank 12,345
            await p.waitForSelector('tr.is-member');
            const m = await barAndRank(p);
            assert.equal(m.rankText, await p.evaluate((n) => new Intl.NumberFormat().format(n), BIG_N));
            assert.ok(m.barRight !== null, 'a bar is drawn');
            assert.ok(m.textLeft >= m.barRight + 1, `bar ends at ${m.barRight}, the rank starts at ${m.textLeft}`);
            assert.ok(m.textLeft >= m.cellLeft - 0.5, `the rank (${m.textLeft}) stays inside its cell (${m.cellLeft})`);
            assert.ok(m.textRight <= m.nextLeft, `the rank (${m.textRight}) does not run into the name (${m.nextLeft})`);
            // Every row's rank fits its cell, and nothing scrolls sideways.
            const over = await p.$$eval('#rows td.rank', (tds) => tds.filter((td) => td.scrollWidth > td.clientWidth + 0.5).map((td) => td.textContent));
            assert.deepEqual(over, []);
            assert.ok(await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
            if (viewport.width === 360) {
                await p.screenshot({ path: join(SHOTS, 'big-phone-member.png'), fullPage: true });
                await p.emulateMedia({ colorScheme: 'dark' });
                await p.goto(`${BASE}/?board=cities&page=1&size=${SIZE}&member=1850147`);
                await p.waitForSelector('tr.is-member');
                await p.screenshot({ path: join(SHOTS, 'cities-phone-dark.png'), fullPage: true });
                await p.goto(`${BASE}/?board=${WEEKLY}`);
                assert.equal(await settled(p), 'ready');
                await p.screenshot({ path: join(SHOTS, 'periodic-phone-dark.png'), fullPage: true });
            }
            await p.close();
        });
    }
});

describe('hygiene', () => {
    it('made no request outside rankd and raised no script error', () => {
        assert.deepEqual(offsite, []);
        assert.deepEqual(pageErrors, []);
    });
});
