// app.js -- rankd's web frontend: pick a board, page through it, find a member.
// Plain ES module, no build step. The view is a function of the URL query
// (?board=B&page=N&size=M&member=ID), so every view can be linked, and back/forward work
// (history.pushState + popstate).
import { RankdClient, RankdError } from './rankd.js';

const client = new RankdClient();
const SIZES = [10, 20, 50, 100];
const $ = (id) => /** @type {any} */ (document.getElementById(id));
const ui = {
    board: $('board'), size: $('size'), find: $('find'), member: $('member'),
    error: $('error'), errorTitle: $('error-title'), errorMessage: $('error-message'),
    errorDetail: $('error-detail'), retry: $('retry'),
    first: $('first'), prev: $('prev'), next: $('next'), last: $('last'),
    goto: $('goto'), page: $('page'), pages: $('pages'), status: $('status'),
    table: $('results'), caption: $('caption'), head: $('head'), rows: $('rows'), empty: $('empty'),
    credit: $('credit'), apiLink: $('api-link'),
};
const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 9 });
const fmt = (n) => (typeof n === 'number' ? numberFormat.format(n) : String(n ?? ''));

/** @type {{board: string, total: number}[] | null} */
let boards = null;
/** The view on screen: {board, page, size, member}; size null = the board's page_size. */
let view = null;
/** The last page shown (for pager arithmetic). */
let shown = null;
let inflight = null;

// ---------------------------------------------------------------- URL <-> view

function posInt(s) {
    return s && /^[1-9][0-9]{0,9}$/.test(s) ? Number(s) : null;
}

function readUrl() {
    const q = new URLSearchParams(location.search);
    return {
        board: q.get('board') || null,
        page: posInt(q.get('page')) || 1,
        size: posInt(q.get('size')),
        member: q.get('member') || null,
    };
}

function urlOf(v) {
    const q = new URLSearchParams();
    if (v.board) q.set('board', v.board);
    q.set('page', String(v.page));
    if (v.size) q.set('size', String(v.size));
    if (v.member) q.set('member', v.member);
    return `${location.pathname}?${q}`;
}

/** Show view v; push a history entry unless it is a back/forward or a retry. */
function go(v, { push = true, focusRow = false } = {}) {
    if (push && view && urlOf(v) !== urlOf(view))
        history.pushState(null, '', urlOf(v));
    else
        history.replaceState(null, '', urlOf(v));
    return load(v, { focusRow });
}

// ---------------------------------------------------------------- loading

function setState(state) {
    document.body.dataset.state = state;
    ui.table.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
}

function say(text) {
    if (ui.status.textContent !== text) ui.status.textContent = text;
}

async function load(v, { focusRow = false } = {}) {
    inflight?.abort();
    const ctl = new AbortController();
    inflight = ctl;
    const signal = ctl.signal;
    view = { ...v };
    if (!boards && view.board && !ui.board.options.length) {
        // Until the list arrives (or if it cannot), show the board from the URL.
        ui.board.replaceChildren(new Option(view.board, view.board));
    }
    if (view.size && SIZES.includes(view.size)) ui.size.value = String(view.size);
    setState('loading'); // the old rows dim; the status line speaks when the new ones are in
    let notice = '';
    try {
        if (!boards) {
            boards = (await client.boards({ signal })).boards;
            fillBoards();
        }
        if (!view.board) {
            if (!boards.length) {
                showEmptyService();
                return;
            }
            view.board = boards.some((b) => b.board === 'cities') ? 'cities' : boards[0].board;
            history.replaceState(null, '', urlOf(view));
        }
        ui.board.value = boards.some((b) => b.board === view.board) ? view.board : '';
        const size = view.size ?? undefined;
        let found = null;
        if (view.member) {
            try {
                found = await client.member(view.board, view.member, { size, signal });
                if (found.page !== view.page) {
                    view.page = found.page;
                    history.replaceState(null, '', urlOf(view));
                }
            } catch (e) {
                if (!(e instanceof RankdError) || e.code !== 'member_not_found') throw e;
                notice = `No member “${view.member}” on board ${view.board}.`;
                view.member = null;
                history.replaceState(null, '', urlOf(view));
            }
        }
        const page = await client.page(view.board, view.page, { size, signal });
        if (signal.aborted) return;
        render(page, found, notice, focusRow);
        setState('ready');
    } catch (e) {
        if (signal.aborted || e?.name === 'AbortError') return;
        showError(e);
    } finally {
        if (inflight === ctl) inflight = null;
    }
}

function fillBoards() {
    const opts = boards.map((b) => {
        const o = document.createElement('option');
        o.value = b.board;
        o.textContent = `${b.board} (${fmt(b.total)})`;
        return o;
    });
    ui.board.replaceChildren(...opts);
    ui.board.disabled = boards.length === 0;
}

function showEmptyService() {
    shown = null;
    ui.error.hidden = true;
    ui.head.replaceChildren();
    ui.rows.replaceChildren();
    ui.empty.hidden = false;
    ui.empty.textContent = 'rankd has no boards yet. Create one with PUT /boards/{name} and add scores with POST /boards/{name}/scores.';
    updatePager(null);
    say('No boards.');
    setState('ready');
}

// ---------------------------------------------------------------- rendering

/** The record fields shown as columns: name (or the first field) and one more. */
function recordColumns(items) {
    const keys = [];
    for (const it of items)
        for (const k of Object.keys(it.record || {}))
            if (!keys.includes(k)) keys.push(k);
    if (keys.includes('name'))
        return keys.includes('country') ? ['name', 'country'] : ['name', ...keys.filter((k) => k !== 'name').slice(0, 1)];
    return keys.slice(0, 2);
}

function cell(tag, cls, text) {
    const c = document.createElement(tag);
    if (cls) c.className = cls;
    c.textContent = text;
    return c;
}

function heading(text) {
    return text.charAt(0).toUpperCase() + text.slice(1).replace(/_/g, ' ');
}

function render(page, found, notice, focusRow) {
    shown = page;
    ui.error.hidden = true;
    const cols = recordColumns(page.items);
    const idIsPrimary = cols.length === 0;
    const th = (cls, text) => {
        const c = cell('th', cls, text);
        c.scope = 'col';
        return c;
    };
    ui.head.replaceChildren(
        th('rank', 'Rank'),
        ...cols.map((k, i) => th(i === 0 ? 'primary' : 'secondary', heading(k))),
        th(idIsPrimary ? 'primary id' : 'id', 'Id'),
        th('score', 'Score'),
    );
    let hl = null;
    const rows = page.items.map((it) => {
        const tr = document.createElement('tr');
        tr.dataset.id = it.id;
        tr.dataset.rank = String(it.rank);
        tr.append(cell('td', 'rank', String(it.rank)));
        cols.forEach((k, i) => {
            const v = it.record ? it.record[k] : null;
            tr.append(cell('td', i === 0 ? 'primary' : 'secondary', v === null || v === undefined ? '' : String(v)));
        });
        tr.append(cell('td', idIsPrimary ? 'primary id' : 'id', it.id));
        const sc = cell('td', 'score', fmt(it.score));
        sc.dataset.score = String(it.score);
        tr.append(sc);
        if (found && it.id === found.id) {
            tr.classList.add('is-member');
            tr.setAttribute('aria-current', 'true');
            tr.tabIndex = -1;
            hl = tr;
        }
        return tr;
    });
    ui.rows.replaceChildren(...rows);
    ui.caption.textContent = `Board ${page.board}, page ${fmt(page.page)} of ${fmt(page.pages)}`;
    ui.empty.hidden = page.items.length > 0;
    if (!page.items.length)
        ui.empty.textContent = page.total === 0
            ? `Board ${page.board} has no members yet.`
            : `Page ${fmt(page.page)} is past the end: the last page is ${fmt(page.pages)}.`;
    if (!SIZES.includes(page.size) && ![...ui.size.options].some((o) => Number(o.value) === page.size)) {
        const o = document.createElement('option');
        o.value = String(page.size);
        o.textContent = String(page.size);
        ui.size.append(o);
    }
    ui.size.value = String(page.size);
    updatePager(page);
    const first = page.items[0];
    const range = first ? `ranks ${fmt(first.rank)}–${fmt(page.items[page.items.length - 1].rank)} of ${fmt(page.total)}` : `${fmt(page.total)} members`;
    let text = `Page ${fmt(page.page)} of ${fmt(page.pages)} · ${range}`;
    if (found) {
        const name = found.record && found.record.name ? `${found.record.name} (${found.id})` : found.id;
        text = `${name}: rank ${fmt(found.rank)}, score ${fmt(found.score)}, on page ${fmt(page.page)}.`;
    }
    say(notice ? `${notice} ${text}` : text);
    ui.status.classList.toggle('notice', Boolean(notice));
    document.title = `${page.board} · page ${page.page} · rankd`;
    ui.credit.hidden = page.board !== 'cities';
    ui.apiLink.href = `/boards/${encodeURIComponent(page.board)}/rank?page=${page.page}&size=${page.size}`;
    if (hl) {
        hl.scrollIntoView({ block: 'center' });
        if (focusRow) hl.focus({ preventScroll: true });
    }
}

function updatePager(page) {
    const n = page ? page.page : 1;
    const last = page ? Math.max(page.pages, 1) : 1;
    const active = document.activeElement;
    ui.first.disabled = ui.prev.disabled = !page || n <= 1;
    ui.next.disabled = ui.last.disabled = !page || n >= last;
    ui.page.value = String(n);
    ui.page.max = String(last);
    ui.page.disabled = !page;
    ui.pages.textContent = `of ${fmt(last)}`;
    // A button that just got disabled drops keyboard focus: keep it in the pager.
    if (active && active.disabled) ui.page.focus();
}

function showError(e) {
    let title = 'Something went wrong';
    let msg = e instanceof Error ? e.message : String(e);
    let detail = '';
    if (e instanceof RankdError) {
        detail = e.status ? `rankd: ${e.status} ${e.code}. ${e.message}` : `${e.code}: ${e.message}`;
        if (e.code === 'redis_unavailable') {
            title = 'rankd cannot reach its database';
            msg = 'rankd is running, but its Redis is down or not answering, so no leaderboard can be read right now. Retry in a moment.';
        } else if (e.code === 'network_error') {
            title = 'Cannot reach rankd';
            msg = 'The rankd server does not answer: it may be stopped or restarting, or this device is offline. Retry in a moment.';
        } else if (e.code === 'board_not_found') {
            title = 'No such board';
            msg = `There is no board “${view?.board ?? ''}”. Pick another board above.`;
            boards = null; // the list may be stale: fetch it again on retry
        } else if (e.status === 400) {
            title = 'That request was not valid';
        } else {
            title = `rankd answered ${e.status}`;
        }
        if (msg === e.message) detail = `rankd: ${e.status} ${e.code}.`;
    }
    ui.errorTitle.textContent = title;
    ui.errorMessage.textContent = msg;
    ui.errorDetail.textContent = detail;
    ui.errorDetail.hidden = !detail;
    ui.error.hidden = false;
    const a = document.activeElement;
    setState('error');
    say(title);
    // The pager and table are hidden now: keyboard focus goes to Retry rather than the void.
    if (!a || a === document.body || a.closest('.pager, .table-wrap')) ui.retry.focus();
}

// ---------------------------------------------------------------- events

function current() {
    return view || readUrl();
}

ui.board.addEventListener('change', () => {
    const v = current();
    go({ board: ui.board.value, page: 1, size: v.size, member: null });
});

ui.size.addEventListener('change', () => {
    const v = current();
    const size = Number(ui.size.value);
    // Keep the first row on screen in view: the new page holds its rank.
    const firstRank = shown && shown.items.length ? shown.items[0].rank : 1;
    go({ board: v.board, page: Math.floor((firstRank - 1) / size) + 1, size, member: v.member });
});

for (const b of [ui.first, ui.prev, ui.next, ui.last]) {
    b.addEventListener('click', () => {
        if (!shown) return;
        const last = Math.max(shown.pages, 1);
        const to = { first: 1, prev: shown.page - 1, next: shown.page + 1, last }[b.dataset.go];
        const v = current();
        go({ board: v.board, page: Math.min(Math.max(to, 1), last), size: v.size, member: null });
    });
}

ui.goto.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const n = Math.trunc(Number(ui.page.value));
    if (!Number.isFinite(n) || n < 1) {
        say('Type a page number from 1 up.');
        ui.page.focus();
        return;
    }
    const last = shown ? Math.max(shown.pages, 1) : n;
    const v = current();
    go({ board: v.board, page: Math.min(n, last), size: v.size, member: null });
});

ui.find.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const id = ui.member.value.trim();
    if (!id) return;
    const v = current();
    go({ board: v.board, page: v.page, size: v.size, member: id }, { focusRow: false });
});

ui.retry.addEventListener('click', () => {
    load(current());
});

window.addEventListener('popstate', () => {
    const v = readUrl();
    ui.member.value = v.member || '';
    load(v);
});

// ---------------------------------------------------------------- start

{
    const v = readUrl();
    ui.member.value = v.member || '';
    go(v, { push: false });
}
