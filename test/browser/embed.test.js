// The embed page (clients/web ?embed=1: what a game shows its players) in Debian's chromium,
// driven by playwright-core, against the real rankd and redis-server that scripts/test-clients.sh
// starts. Env: RANKD_URL, RANKD_WRITE_TOKEN, RANKD_SCREENSHOT_DIR. Desktop (1280x800) and phone
// (390x844) widths, keyboard only, the accessibility tree, the viewer's row (me=), score_format,
// theming through --rankd-* and the framing headers.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';

import { contrasts, settled } from './helpers.js';

const BASE = process.env.RANKD_URL;
const TOKEN = process.env.RANKD_WRITE_TOKEN;
const SHOTS = process.env.RANKD_SCREENSHOT_DIR || new URL('../../build/screenshots', import.meta.url).pathname;
const LAPS = 'zz-embed-laps'; // lap times: asc, score_format duration_ms, 5 a page, 12 players
const CASH = 'zz-embed-cash'; // score_format decimal with 2 decimals, no name field
const RACE = 'zz-embed-race'; // sub-scores: stars (desc), then moves (asc); 3 a page, 5 racers
const TTL = 1000;
let GAME = ''; // a site that embeds the page: http://localhost:PORT, another origin than rankd's
let gameServer = null;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** Player i (1..12): lap time 60,000 + 1,234 i ms, so rank i on the asc board. */
const lapOf = (i) => 60000 + 1234 * i;
const pid = (i) => `p${String(i).padStart(2, '0')}`;

let context;
let profile;
const pageErrors = [];
const offsite = [];

async function writeApi(method, path, body) {
    const res = await fetch(BASE + path, {
        method, body, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    });
    const text = await res.text();
    if (!res.ok && !(method === 'DELETE' && res.status === 404))
        throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
}

async function newPage(viewport) {
    const p = await context.newPage();
    await p.setViewportSize(viewport);
    p.on('pageerror', (e) => pageErrors.push(String(e)));
    return p;
}

/** The table's rows: id, the cells' text, highlighted (is-me), aria-current; pinned too. */
function rowsOf(p, sel = '#rows tr') {
    return p.$$eval(sel, (trs) => trs.map((tr) => ({
        id: tr.dataset.id,
        cells: [...tr.cells].map((td) => td.textContent),
        me: tr.classList.contains('is-me'),
        current: tr.getAttribute('aria-current'),
    })));
}

before(async () => {
    assert.ok(BASE && TOKEN, 'run through scripts/test-clients.sh (RANKD_URL, RANKD_WRITE_TOKEN)');
    mkdirSync(SHOTS, { recursive: true });
    for (const b of [LAPS, CASH, RACE]) await writeApi('DELETE', `/boards/${b}`);
    await writeApi('PUT', `/boards/${LAPS}`, JSON.stringify({ order: 'asc', page_size: 5, page_ttl_ms: TTL, score_format: 'duration_ms' }));
    const entries = [];
    for (let i = 1; i <= 12; i++) entries.push({ id: pid(i), score: lapOf(i), record: { name: `Player ${i}`, team: i % 2 ? 'Red' : 'Blue' } });
    await writeApi('POST', `/boards/${LAPS}/scores`, JSON.stringify({ entries }));
    await writeApi('PUT', `/boards/${CASH}`, JSON.stringify({ score_decimals: 2, score_format: 'decimal', page_size: 5 }));
    // Records are shared by boards (by id): these ids have none.
    for (const id of ['zz-cash-ann', 'zz-cash-bo', 'zz-cash-cy']) await writeApi('DELETE', `/items/${id}`);
    await writeApi('POST', `/boards/${CASH}/scores`, JSON.stringify({ entries: [
        { id: 'zz-cash-ann', score: 1234.5 }, { id: 'zz-cash-bo', score: 99.25 }, { id: 'zz-cash-cy', score: 7 },
    ] }));
    await writeApi('PUT', `/boards/${RACE}`, JSON.stringify({ subscores: ['desc', 'asc'], page_size: 3 }));
    const racers = [];
    for (let i = 1; i <= 5; i++) racers.push({ id: `zz-race-${i}`, score: 10, subscores: [3, 10 * i], record: { name: `Racer ${i}` } });
    await writeApi('POST', `/boards/${RACE}/scores`, JSON.stringify({ entries: racers }));
    // A game's site on another origin (localhost, another port), framing both pages.
    gameServer = createServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><title>A game</title><h1>Lap times</h1>
            <iframe id="f" title="Leaderboard" style="width:600px;height:460px;border:0"
                src="${BASE}/?embed=1&amp;board=${LAPS}&amp;me=${pid(11)}"></iframe>
            <iframe id="admin" title="Admin" onload="window.adminLoaded = true" src="${BASE}/?board=${LAPS}"></iframe>`);
    });
    await new Promise((r) => gameServer.listen(0, '127.0.0.1', r));
    GAME = `http://localhost:${gameServer.address().port}`;
    profile = mkdtempSync(join(tmpdir(), 'rankd-chromium-embed-'));
    context = await chromium.launchPersistentContext(profile, {
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--no-first-run'],
        viewport: DESKTOP,
        timeout: 30000,
    });
    context.setDefaultTimeout(10000);
    context.on('request', (req) => {
        const u = req.url();
        if (!u.startsWith(`${BASE}/`) && !u.startsWith('data:') && !(GAME && u.startsWith(`${GAME}/`))) offsite.push(u);
    });
});

after(async () => {
    await context?.close();
    gameServer?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the embed page', () => {
    for (const [label, viewport, shot] of [['desktop (1280x800)', DESKTOP, 'embed-desktop.png'], ['phone (390x844)', PHONE, 'embed-phone.png']]) {
        it(`${label}: the table players see, the viewer pinned under the page, nothing sideways`, async () => {
            const p = await newPage(viewport);
            const reads = [];
            p.on('request', (req) => { if (req.url().includes(`/boards/${LAPS}/`)) reads.push(req.url()); });
            await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}`);
            assert.equal(await settled(p), 'ready');
            // The viewer comes with the page (top N plus me: with=ID), not from a read of its own.
            assert.ok(reads.some((u) => /\/rank\?.*with=p11/.test(u)), reads.join(' '));
            assert.ok(!reads.some((u) => u.includes('/members/')), reads.join(' '));
            // No board picker, no search, no header, no auto-refresh switch, no JSON link.
            for (const sel of ['#board', '#size', '#member', 'header.top', '#auto', '#api-link'])
                assert.equal(await p.isVisible(sel), false, `${sel} is not shown`);
            const head = await p.$$eval('#head th', (ths) => ths.map((t) => t.textContent));
            assert.deepEqual(head, ['Rank', 'Name', 'Team', 'Score'], 'no Id column');
            assert.equal(await p.$$eval('td.id', (tds) => tds.length), 0);
            // Lap times as m:ss.mmm (score_format duration_ms), in rank order.
            const rows = await rowsOf(p);
            assert.deepEqual(rows.map((r) => r.id), [1, 2, 3, 4, 5].map(pid));
            assert.equal(rows[0].cells.at(-1), '1:01.234');
            assert.equal(rows[4].cells.at(-1), '1:06.170');
            assert.ok(rows.every((r) => !r.me));
            // The viewer (rank 11, page 3): pinned under the page, highlighted, said in words.
            const pinned = await rowsOf(p, '#me-rows tr');
            assert.equal(pinned.length, 1);
            assert.equal(pinned[0].id, pid(11));
            assert.deepEqual(pinned[0].cells, ['11', 'Player 11 You', 'Red', '1:13.574']);
            assert.ok(pinned[0].me);
            assert.equal(pinned[0].current, 'true');
            assert.equal(await p.isVisible('#me-rows tr.is-me'), true);
            assert.match(await p.textContent('#status'), /You: rank 11, score 1:13\.574\./);
            // Nothing about rankd's insides on the page a player sees.
            const words = await p.evaluate(() => document.body.innerText);
            assert.doesNotMatch(words, /redis|rankd|json|\bid\b/i, words);
            // Readable highlight, and nothing scrolls sideways.
            const c = await contrasts(p, ['#me-rows td.primary', '#me-rows td.rank', '#me-rows td.score', '#rows tr:nth-child(4) td.primary']);
            for (const [k, v] of Object.entries(c)) assert.ok(v >= 4.5, `${k} contrast ${v}`);
            assert.ok(await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth),
                `no horizontal scroll at ${viewport.width} px`);
            const over = await p.$$eval('td', (tds) => tds.filter((td) => td.scrollWidth > td.clientWidth + 0.5).map((td) => td.textContent));
            assert.deepEqual(over, []);
            await p.screenshot({ path: join(SHOTS, shot), fullPage: true });
            await p.emulateMedia({ colorScheme: 'dark' });
            const cd = await contrasts(p, ['#me-rows td.primary', '#me-rows td.score', '#rows tr:nth-child(4) td.primary']);
            for (const [k, v] of Object.entries(cd)) assert.ok(v >= 4.5, `dark: ${k} contrast ${v}`);
            await p.screenshot({ path: join(SHOTS, shot.replace('.png', '-dark.png')), fullPage: true });
            await p.close();
        });
    }

    it('the viewer on the page is highlighted in place; not on the board, it says so', async () => {
        const p = await newPage(DESKTOP);
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(2)}`);
        assert.equal(await settled(p), 'ready');
        const rows = await rowsOf(p);
        assert.deepEqual(rows.map((r) => r.me), [false, true, false, false, false]);
        assert.equal(rows[1].current, 'true');
        assert.equal(await p.isHidden('#me-rows'), true, 'no pinned row');
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=ghost`);
        assert.equal(await settled(p), 'ready');
        assert.equal(await p.isHidden('#me-rows'), true);
        assert.match(await p.textContent('#status'), /You are not on this leaderboard yet\./);
        await p.close();
    });

    it('a board with sub-scores: a column each after the score, the pinned viewer\'s too', async () => {
        const p = await newPage(DESKTOP);
        await p.goto(`${BASE}/?embed=1&board=${RACE}&me=zz-race-5`);
        assert.equal(await settled(p), 'ready');
        const head = await p.$$eval('#head th', (ths) => ths.map((t) => t.textContent));
        assert.deepEqual(head, ['Rank', 'Name', 'Score', 'Sub-score 1', 'Sub-score 2']);
        const rows = await rowsOf(p);
        assert.deepEqual(rows.map((r) => r.cells.slice(1)), [
            ['Racer 1', '10', '3', '10'], ['Racer 2', '10', '3', '20'], ['Racer 3', '10', '3', '30']]);
        // The viewer (rank 5, page 2) comes with the page (with=): its sub-scores with it.
        const pinned = await rowsOf(p, '#me-rows tr');
        assert.deepEqual(pinned.map((r) => r.cells), [['5', 'Racer 5 You', '10', '3', '50']]);
        await p.close();
    });

    it('works with the keyboard alone, and the viewer pinned row moves into the table on its page', async () => {
        const p = await newPage(DESKTOP);
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}`);
        assert.equal(await settled(p), 'ready');
        const active = () => p.evaluate(() => {
            const a = document.activeElement;
            const cs = getComputedStyle(a);
            return { id: a.id || a.className, visible: a.getClientRects().length > 0,
                outline: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2 };
        });
        async function tabTo(id, key = 'Tab') {
            for (let i = 0; i < 30; i++) {
                await p.keyboard.press(key);
                const a = await active();
                assert.ok(a.visible, `focus on a hidden element (${a.id})`);
                assert.notEqual(a.id, 'board', 'the hidden board picker never takes focus');
                if (a.id === id) {
                    assert.ok(a.outline, `#${id} shows a focus outline`);
                    return;
                }
            }
            assert.fail(`#${id} is not reachable with ${key}`);
        }
        await p.keyboard.press('Tab');
        assert.equal((await active()).id, 'skip');
        await p.keyboard.press('Enter');
        assert.equal((await active()).id, 'results');
        await tabTo('next', 'Shift+Tab');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=2\b/);
        assert.equal(await settled(p), 'ready');
        assert.deepEqual((await rowsOf(p)).map((r) => r.id), [6, 7, 8, 9, 10].map(pid));
        assert.equal((await active()).id, 'next', 'focus stays on Next');
        const url = new URL(p.url());
        assert.equal(url.searchParams.get('embed'), '1', 'the view stays an embed');
        assert.equal(url.searchParams.get('me'), pid(11));
        await tabTo('page', 'Shift+Tab');
        await p.keyboard.press('Control+A');
        await p.keyboard.type('3');
        await p.keyboard.press('Enter');
        await p.waitForURL(/[?&]page=3\b/);
        assert.equal(await settled(p), 'ready');
        const rows = await rowsOf(p);
        assert.deepEqual(rows.map((r) => r.id), [11, 12].map(pid));
        assert.deepEqual(rows.map((r) => r.me), [true, false], 'on its page the viewer is highlighted in the table');
        assert.equal(await p.isHidden('#me-rows'), true);
        await p.close();
    });

    it('the screen-reader tree: the table, the viewer row announced as current and "You", no controls', async () => {
        const p = await newPage(PHONE);
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}`);
        assert.equal(await settled(p), 'ready');
        const tree = await p.locator('body').ariaSnapshot();
        assert.doesNotMatch(tree, /combobox "Board"|searchbox|checkbox "Auto-refresh"/, tree);
        assert.doesNotMatch(tree, /link "this page from the API"/, tree);
        const table = await p.locator('#results').ariaSnapshot();
        assert.match(table, /table "Board zz-embed-laps, page 1 of 3"/, table);
        assert.match(table, /row "1 \(first place\) Player 1 Red 1:01\.234"/, table);
        assert.match(table, /row "11 Player 11\s+You Red 1:13\.574"/, table);
        // The viewer's row is a row of the table in the browser's accessibility tree (the phone
        // layout's grid rows keep their roles), marked aria-current, its name saying "You".
        const cdp = await context.newCDPSession(p);
        const { root } = await cdp.send('DOM.getDocument');
        const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#me-rows tr' });
        const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: true });
        const meRow = nodes.find((n) => n.backendDOMNodeId && n.role?.value === 'row');
        assert.ok(meRow, JSON.stringify(nodes.map((n) => n.role?.value)));
        assert.ok(nodes.some((n) => n.role?.value === 'table'), 'inside the table');
        assert.equal(await p.getAttribute('#me-rows tr', 'aria-current'), 'true');
        assert.match(await p.locator('#me-rows').ariaSnapshot(), /row "11 Player 11\s+You Red 1:13\.574"/);
        // The status line is a polite live region that names the viewer.
        assert.equal(await p.getAttribute('#status', 'aria-live'), 'polite');
        assert.match(await p.textContent('#status'), /You: rank 11/);
        await p.close();
    });

    it('a write shows in the embed within TTL + 1 s, the viewer row follows, with no polling', async () => {
        const p = await newPage(DESKTOP);
        const seen = [];
        p.on('request', (req) => {
            if (new URL(req.url()).pathname.startsWith(`/boards/${LAPS}/`))
                seen.push({ path: new URL(req.url()).pathname, stream: /text\/event-stream/.test(req.headers().accept ?? '') });
        });
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}`);
        assert.equal(await settled(p), 'ready');
        await p.waitForFunction(() => /^Live/.test(document.querySelector('#auto-status').textContent), null, { timeout: 10000 });
        const n = seen.length;
        await new Promise((r) => setTimeout(r, 2500));
        assert.deepEqual(seen.slice(n), [], 'no request while the stream is up');
        await p.evaluate(() => {
            window.changedAt = null;
            new MutationObserver(() => {
                if (!window.changedAt && document.querySelector('#rows tr')?.dataset.id === 'p11') window.changedAt = Date.now();
            }).observe(document.querySelector('#rows'), { childList: true, subtree: true });
        });
        // The viewer sets the best lap: first place, in the table, pinned row gone.
        await writeApi('POST', `/boards/${LAPS}/scores`, JSON.stringify({ id: pid(11), score: 59000, op: 'best' }));
        const written = Date.now();
        await p.waitForFunction(() => window.changedAt !== null, null, { timeout: TTL + 10000 });
        const took = (await p.evaluate(() => window.changedAt)) - written;
        console.log(`embed: the table changed ${took} ms after the write (bound ${TTL + 1000} ms)`);
        assert.ok(took <= TTL + 1000, `changed ${took} ms after the write`);
        const rows = await rowsOf(p);
        assert.equal(rows[0].id, pid(11));
        assert.ok(rows[0].me);
        assert.equal(rows[0].cells.at(-1), '0:59.000');
        assert.equal(await p.isHidden('#me-rows'), true);
        await p.close();
        await writeApi('POST', `/boards/${LAPS}/scores`, JSON.stringify({ id: pid(11), score: lapOf(11) }));
    });

    it('polling (no EventSource): the pinned viewer follows a write that leaves the page as it is', async () => {
        const p = await newPage(DESKTOP);
        await p.addInitScript(() => { delete window.EventSource; });
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}&refresh=1`);
        assert.equal(await settled(p), 'ready');
        assert.equal(await p.textContent('#me-rows td.rank'), '11');
        // From rank 11 to rank 7: page 1 (ranks 1-5) does not change, the viewer's row does.
        await writeApi('POST', `/boards/${LAPS}/scores`, JSON.stringify({ id: pid(11), score: lapOf(6) + 1 }));
        await p.waitForFunction(() => document.querySelector('#me-rows td.rank')?.textContent === '7', null, { timeout: 10000 });
        assert.equal(await p.textContent('#me-rows td.score'), '1:07.405');
        assert.match(await p.textContent('#status'), /You: rank 7, score 1:07\.405\./);
        assert.deepEqual((await rowsOf(p)).map((r) => r.id), [1, 2, 3, 4, 5].map(pid));
        await p.close();
        await writeApi('POST', `/boards/${LAPS}/scores`, JSON.stringify({ id: pid(11), score: lapOf(11) }));
    });

    it('decimal scores; no record fields: the id is the Player column', async () => {
        const p = await newPage(PHONE);
        await p.goto(`${BASE}/?embed=1&board=${CASH}`);
        assert.equal(await settled(p), 'ready');
        assert.deepEqual(await p.$$eval('#head th', (ths) => ths.map((t) => t.textContent)), ['Rank', 'Player', 'Score']);
        const rows = await rowsOf(p);
        assert.deepEqual(rows.map((r) => r.cells.at(-1)), ['1,234.50', '99.25', '7.00']);
        await p.close();
    });

    it('errors are friendly: no Redis, no codes', async () => {
        const p = await newPage(PHONE);
        await p.goto(`${BASE}/?embed=1&board=zz-no-such-board`);
        assert.equal(await settled(p), 'error');
        assert.equal(await p.textContent('#error-title'), 'This leaderboard is not available');
        assert.equal(await p.isVisible('#error-detail'), false);
        assert.equal(await p.isVisible('#retry'), false, 'a missing board is not retried');
        // rankd's Redis "down": the page's reads answer 503 redis_unavailable.
        await p.route('**/boards/**', (route) => route.fulfill({
            status: 503, contentType: 'application/json', headers: { 'Retry-After': '1' },
            body: JSON.stringify({ error: { code: 'redis_unavailable', message: 'Redis is unavailable: connection refused' } }),
        }));
        await p.goto(`${BASE}/?embed=1&board=${LAPS}`);
        assert.equal(await settled(p), 'error');
        assert.equal(await p.textContent('#error-title'), 'The leaderboard cannot be shown right now');
        assert.equal(await p.isVisible('#retry'), true);
        const words = await p.evaluate(() => document.body.innerText);
        assert.doesNotMatch(words, /redis|rankd|503|unavailable/i, words);
        await p.screenshot({ path: join(SHOTS, 'embed-error-phone.png') });
        await p.close();
    });

    it('themed by --rankd-* properties in its URL (unsafe values ignored), kept across pages', async () => {
        const p = await newPage(DESKTOP);
        const theme = new URLSearchParams({ '--rankd-bg': '#101820', '--rankd-surface': '#18222e', '--rankd-fg': '#f2f5f8',
            '--rankd-accent': '#ff9e40', '--rankd-me-bg': '#4a3000', '--rankd-font': 'Georgia, serif',
            '--rankd-line': 'url(https://evil.example/x.png)' });
        await p.goto(`${BASE}/?embed=1&board=${LAPS}&me=${pid(11)}&${theme}`);
        assert.equal(await settled(p), 'ready');
        const got = await p.evaluate(() => {
            const cs = getComputedStyle(document.body);
            return { bg: cs.backgroundColor, fg: cs.color, font: cs.fontFamily,
                line: getComputedStyle(document.documentElement).getPropertyValue('--rankd-line'),
                me: getComputedStyle(document.querySelector('#me-rows tr')).backgroundColor };
        });
        assert.equal(got.bg, 'rgb(16, 24, 32)');
        assert.equal(got.fg, 'rgb(242, 245, 248)');
        assert.match(got.font, /Georgia/);
        assert.equal(got.me, 'rgb(74, 48, 0)');
        assert.equal(got.line, '', 'a url() is not applied');
        const c = await contrasts(p, ['#me-rows td.primary', '#rows tr:nth-child(4) td.primary']);
        for (const [k, v] of Object.entries(c)) assert.ok(v >= 4.5, `${k} contrast ${v}`);
        await p.screenshot({ path: join(SHOTS, 'embed-themed.png'), fullPage: true });
        await p.click('#next');
        await p.waitForURL(/[?&]page=2\b/);
        assert.equal(new URL(p.url()).searchParams.get('--rankd-bg'), '#101820', 'the theme stays in the URL');
        await p.close();
    });

    it('can be framed by another site; the admin page cannot', async () => {
        const embed = await fetch(`${BASE}/?embed=1&board=${LAPS}`);
        assert.equal(embed.headers.get('x-frame-options'), null);
        assert.equal(embed.headers.get('content-security-policy'), 'frame-ancestors *');
        const admin = await fetch(`${BASE}/?board=${LAPS}`);
        assert.equal(admin.headers.get('x-frame-options'), 'SAMEORIGIN');
        assert.equal(admin.headers.get('content-security-policy'), "frame-ancestors 'self'");
        // A game's page on another origin (served here by the browser itself) frames both.
        const p = await newPage(DESKTOP);
        await p.goto(`${GAME}/scores`);
        const frame = await (await p.waitForSelector('#f')).contentFrame();
        await frame.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 10000 })
            .catch(async (e) => {
                console.log('frame', frame.url(), await frame.evaluate(() => [document.body.dataset.state, document.body.innerText.slice(0, 300), location.href]).catch((x) => String(x)));
                throw e;
            });
        assert.equal(await frame.$$eval('#rows tr', (trs) => trs.length), 5);
        await p.waitForFunction(() => window.adminLoaded === true, null, { timeout: 10000 });
        const adminFrame = await (await p.$('#admin')).contentFrame();
        assert.ok(!adminFrame || !adminFrame.url().startsWith(BASE) ||
            (await adminFrame.evaluate(() => document.body?.dataset.state ?? null).catch(() => null)) === null,
        'the admin page is not shown in another site\'s frame');
        await p.screenshot({ path: join(SHOTS, 'embed-iframe.png') });
        await p.close();
    });
});

describe('embed hygiene', () => {
    it('made no request outside rankd and raised no script error', () => {
        assert.deepEqual(offsite, []);
        assert.deepEqual(pageErrors, []);
    });
});
