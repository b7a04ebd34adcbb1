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

const BASE = process.env.RANKD_URL;
const TOKEN = process.env.RANKD_WRITE_TOKEN;
const REDIS_PORT = process.env.RANKD_TEST_REDIS_PORT;
const REDIS_DIR = process.env.RANKD_TEST_REDIS_DIR;
const FIXTURE = process.env.RANKD_FIXTURE || new URL('../fixtures/cities-2000.ndjson', import.meta.url).pathname;
const SHOTS = process.env.RANKD_SCREENSHOT_DIR || new URL('../../build/screenshots', import.meta.url).pathname;
const SIZE = 20; // the cities board's page size here, as in `make run`
const TINY = 'zz-tiny'; // a second board: no name/country fields, for board switching

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
async function settled(p = page) {
    await p.waitForFunction(() => document.body.dataset.state !== 'loading', null, { timeout: 10000 });
    return p.evaluate(() => document.body.dataset.state);
}

/** The rows on screen: rank, id, name, country, raw score. */
function rows(p = page) {
    return p.$$eval('#rows tr', (trs) => trs.map((tr) => ({
        rank: Number(tr.querySelector('td.rank').textContent),
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
        await page.waitForFunction(() => document.querySelector('#rows tr td.rank')?.textContent === '1');
        await settled();
        await expectPage(1);
        // The client sent If-None-Match for page 1 and reused its copy.
        assert.ok(statuses.some(([p, s]) => p === '1' && s === 304), JSON.stringify(statuses));

        await page.goForward();
        await page.waitForURL(/[?&]page=2\b/);
        await page.waitForFunction(() => document.querySelector('#rows tr td.rank')?.textContent === '21');
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

        await tabTo('next');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=2\b/);
        await settled(p);
        await expectPage(2, SIZE, p);
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

    it('made no request outside rankd and raised no script error', () => {
        assert.deepEqual(offsite, []);
        assert.deepEqual(pageErrors, []);
    });
});
