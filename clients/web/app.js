// app.js -- rankd's web frontend: pick a board (and a period), page through it, find a member.
// Plain ES module, no build step. The view is a function of the URL query
// (?board=B&period=P&page=N&size=M&member=ID&refresh=S), so every view can be linked, and
// back/forward work (history.pushState + popstate).
// ?embed=1 is the page players see (docs/embedding.md): the table, its pager and status only (no
// board picker, no Id column, no JSON link, no words about rankd's insides), live by default,
// themed by the --rankd-* properties of its URL; me=ID pins the viewer's row under the page.
import { applyTheme, scoreFormatter } from './format.js';
import { RankdClient, RankdError, responseInfo } from './rankd.js';

const client = new RankdClient();
const SIZES = [10, 20, 50, 100];
const REFRESH_DEFAULT = 5; // seconds between auto-refreshes when the toggle is switched on
const SETTINGS_MAX_AGE = 60000; // ms a board's settings (periods) are reused before being read again
const $ = (id) => /** @type {any} */ (document.getElementById(id));
const EMBED = new URLSearchParams(location.search).get('embed') === '1';
/** The embed page's theme, kept in its URL as it changes view. */
const THEME = EMBED ? applyTheme(new URLSearchParams(location.search), document.documentElement.style) : [];
if (EMBED) document.documentElement.classList.add('embed');
const ui = {
    board: $('board'), size: $('size'), find: $('find'), member: $('member'),
    period: $('period'), periodField: $('period-field'), auto: $('auto'), autoStatus: $('auto-status'),
    viewBoard: $('view-board'), periodLabel: $('period-label'),
    error: $('error'), errorTitle: $('error-title'), errorMessage: $('error-message'),
    errorDetail: $('error-detail'), retry: $('retry'),
    first: $('first'), prev: $('prev'), next: $('next'), last: $('last'),
    goto: $('goto'), page: $('page'), pages: $('pages'), status: $('status'),
    whereBottom: $('where-bottom'),
    table: $('results'), caption: $('caption'), head: $('head'), rows: $('rows'), empty: $('empty'),
    meRows: $('me-rows'),
    credit: $('credit'), apiLink: $('api-link'),
};
/** Every pager button, top and bottom (data-go = first|prev|next|last). */
const goButtons = [...document.querySelectorAll('.pager button[data-go]')];

// One formatter for every number on the page: ranks, scores, totals, page numbers.
const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 9 });
const fmt = (n) => (typeof n === 'number' ? numberFormat.format(n) : String(n ?? ''));
/** Scores as the board on screen says (its score_format); fmt until its settings are in. */
let fmtScore = fmt;
/** The last page number shown: an empty board has pages 0 but is shown as page 1 of 1. */
const lastPage = (page) => Math.max(page.pages, 1);

/** @type {{board: string, total: number}[] | null} */
let boards = null;
/** board -> {at, settings}: settings (with current_period and periods) read recently. */
const settingsCache = new Map();
/** The view on screen: {board, period, page, size, member, refresh}; size null = page_size. */
let view = null;
/** The last page shown (for pager arithmetic and refreshes), the member found and the settings. */
let shown = null;
let shownFound = null;
let shownSettings = null;
/** The viewer (embed, me=ID): {id, item} with item the member read (rank, score, record) or
 *  null when the viewer is not on the board. */
let shownMe = null;
let inflight = null;

// ---------------------------------------------------------------- URL <-> view

function posInt(s) {
    return s && /^[1-9][0-9]{0,9}$/.test(s) ? Number(s) : null;
}

function readUrl() {
    const q = new URLSearchParams(location.search);
    // The embed page is live unless refresh=0 says not.
    const refresh = posInt(q.get('refresh')) ?? (EMBED && q.get('refresh') !== '0' ? REFRESH_DEFAULT : null);
    return {
        board: q.get('board') || null,
        period: q.get('period') || null,
        page: posInt(q.get('page')) || 1,
        size: posInt(q.get('size')),
        member: q.get('member') || null,
        me: EMBED ? q.get('me') || null : null,
        refresh: refresh ? Math.min(refresh, 3600) : null,
    };
}

function urlOf(v) {
    const q = new URLSearchParams();
    if (EMBED) q.set('embed', '1');
    if (v.board) q.set('board', v.board);
    if (v.period) q.set('period', v.period);
    q.set('page', String(v.page));
    if (v.size) q.set('size', String(v.size));
    if (v.member) q.set('member', v.member);
    if (v.refresh) q.set('refresh', String(v.refresh));
    else if (EMBED) q.set('refresh', '0');
    if (v.me) q.set('me', v.me);
    for (const [name, value] of THEME) q.set(name, value);
    return `${location.pathname}?${q}`;
}

/** Show view v; push a history entry unless it is a back/forward or a retry. */
function go(v, { push = true, focusRow = false, focusTable = false } = {}) {
    v = { refresh: view ? view.refresh : null, me: view ? view.me : null, ...v };
    if (push && view && urlOf(v) !== urlOf(view))
        history.pushState(null, '', urlOf(v));
    else
        history.replaceState(null, '', urlOf(v));
    return load(v, { focusRow, focusTable });
}

// ---------------------------------------------------------------- loading

function setState(state) {
    document.body.dataset.state = state;
    ui.table.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
}

function say(text) {
    if (ui.status.textContent !== text) ui.status.textContent = text;
}

/** A board's settings, reused for a minute (a periodic board's current period can move on). */
async function settingsOf(board, signal, fresh = false) {
    const c = settingsCache.get(board);
    if (!fresh && c && Date.now() - c.at < SETTINGS_MAX_AGE) return c.settings;
    const settings = await client.board(board, { signal });
    settingsCache.set(board, { at: Date.now(), settings });
    return settings;
}

const isPeriodic = (s) => Boolean(s && s.period && s.period !== 'none' && Array.isArray(s.periods));

async function load(v, { focusRow = false, focusTable = false } = {}) {
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
    ui.auto.checked = Boolean(view.refresh);
    setState('loading'); // the old rows dim; the status line speaks when the new ones are in
    let notice = '';
    try {
        // A board missing from the list: the list may be older than the board, so read it again.
        if (boards && view.board && !boards.some((b) => b.board === view.board)) boards = null;
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
        selectBoard(view.board);
        const settings = await settingsOf(view.board, signal, shownSettings?.board !== view.board);
        if (signal.aborted) return;
        if (view.period && !isPeriodic(settings)) {
            notice = `Board ${view.board} has no periods: showing the whole board.`;
            view.period = null;
            history.replaceState(null, '', urlOf(view));
        }
        fillPeriods(settings, view.period);
        const size = view.size ?? undefined;
        const period = view.period ?? undefined;
        let found = null;
        if (view.member) {
            try {
                found = await client.member(view.board, view.member, { size, period, signal });
                if (found.page !== view.page) {
                    view.page = found.page;
                    history.replaceState(null, '', urlOf(view));
                }
            } catch (e) {
                if (!(e instanceof RankdError) || e.code !== 'member_not_found') throw e;
                notice = `No member “${view.member}” on board ${view.board}${period ? ` in ${periodName(settings, period)}` : ''}.`;
                view.member = null;
                history.replaceState(null, '', urlOf(view));
            }
        }
        const { page, me } = splitMe(view, await client.page(view.board, view.page, { size, period, signal, ...withMe(view) }));
        if (signal.aborted) return;
        shownSettings = settings;
        fmtScore = scoreFormatter(settings);
        shownMe = me;
        render(page, found, notice, { focusRow });
        setState('ready');
        if (focusTable) {
            // From the bottom pager: the new page starts at the top, and so does keyboard focus.
            document.querySelector('.pager-top').scrollIntoView({ block: 'start' });
            ui.table.focus({ preventScroll: true });
        }
    } catch (e) {
        if (signal.aborted || e?.name === 'AbortError') return;
        showError(e);
    } finally {
        if (inflight === ctl) inflight = null;
        scheduleRefresh();
    }
}

/** The page read's options for view v's viewer: `with` (top N plus me) names them. */
const withMe = (v) => (v.me ? { with: [v.me] } : {});

/**
 * A page read with withMe(v) split in two: the page as any page read answers it, and the viewer
 * {id, item}, item (rank, score, subscores on a board with them, record) null when they are not
 * on the board (or the period); me null without me=.
 */
function splitMe(v, read) {
    if (!v.me) return { page: read, me: null };
    const { with: found = [], missing, ...page } = read;
    const it = found.find((x) => x.id === v.me);
    const subs = it && it.subscores ? { subscores: it.subscores } : {};
    return { page, me: { id: v.me, item: it ? { id: it.id, rank: it.rank, score: it.score, ...subs, record: it.record } : null } };
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

/** Select board b in the picker; a board not in the list gets a placeholder saying so. */
function selectBoard(b) {
    ui.board.querySelector('option[data-placeholder]')?.remove();
    if (boards && !boards.some((x) => x.board === b)) {
        const o = new Option(`${b}: no such board`, '', true, true);
        o.dataset.placeholder = '';
        o.disabled = true;
        ui.board.prepend(o);
    }
    ui.board.value = boards && boards.some((x) => x.board === b) ? b : '';
}

// ---------------------------------------------------------------- periods

const KIND_WORD = { hourly: 'Hour', daily: 'Day', weekly: 'Week', monthly: 'Month' };

/** "Week 2026-W49", "Day 2026-11-30", "Month 2026-11", "Hour 2026-11-30 14:00". */
function periodName(settings, id) {
    const word = KIND_WORD[settings?.period] || 'Period';
    const text = settings?.period === 'hourly' ? id.replace('T', ' ') + ':00' : id;
    return `${word} ${text}`;
}

/** The period picker: shown for periodic boards only; '' is the current period. */
function fillPeriods(settings, selected) {
    if (!isPeriodic(settings)) {
        ui.periodField.hidden = true;
        ui.period.replaceChildren();
        return;
    }
    const opts = settings.periods.map((id) => {
        const current = id === settings.current_period;
        const o = new Option(current ? `${periodName(settings, id)} (current)` : periodName(settings, id),
            current ? '' : id);
        o.dataset.period = id;
        return o;
    });
    if (selected && !settings.periods.includes(selected)) {
        // A link to a period no longer readable: shown as such (the read answers 404).
        const o = new Option(`${periodName(settings, selected)} (not readable)`, selected);
        o.dataset.period = selected;
        opts.push(o);
    }
    ui.period.replaceChildren(...opts);
    ui.period.value = selected && selected !== settings.current_period ? selected : '';
    ui.periodField.hidden = false;
}

/** The period on screen: {id, current} or null for a board without periods. */
function shownPeriod() {
    if (!isPeriodic(shownSettings)) return null;
    const id = view.period || shownSettings.current_period;
    return { id, current: id === shownSettings.current_period };
}

function showEmptyService() {
    shown = null;
    ui.error.hidden = true;
    ui.head.replaceChildren();
    ui.rows.replaceChildren();
    ui.empty.hidden = false;
    ui.empty.textContent = EMBED ? 'There is no leaderboard here yet.'
        : 'rankd has no boards yet. Create one with PUT /boards/{name} and add scores with POST /boards/{name}/scores.';
    ui.viewBoard.textContent = '';
    ui.periodLabel.hidden = true;
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

const MEDALS = { 1: 'first place', 2: 'second place', 3: 'third place' };

/**
 * One row of the table: rank (a medal for 1-3), the record columns, the id (not on the embed page,
 * where it is the first column only when there is no record field to name the member), score.
 */
function rowOf(it, cols, idIsPrimary, subs = 0) {
    const tr = document.createElement('tr');
    tr.dataset.id = it.id;
    tr.dataset.rank = String(it.rank);
    const rankText = fmt(it.rank);
    let rank;
    if (MEDALS[it.rank]) {
        // Top 3: a medal badge and a bolder row, and words for screen readers (not colour alone).
        tr.classList.add('podium', `podium-${it.rank}`);
        rank = document.createElement('td');
        rank.className = 'rank';
        rank.title = MEDALS[it.rank];
        rank.append(cell('span', 'medal', rankText), cell('span', 'visually-hidden', ` (${MEDALS[it.rank]})`));
    } else {
        rank = cell('td', 'rank', rankText);
    }
    tr.append(rank);
    cols.forEach((k, i) => {
        const v = it.record ? it.record[k] : null;
        tr.append(cell('td', i === 0 ? 'primary' : 'secondary', v === null || v === undefined ? '' : String(v)));
    });
    if (!EMBED || idIsPrimary) tr.append(cell('td', idIsPrimary ? 'primary id' : 'id', it.id));
    const sc = cell('td', 'score', fmtScore(it.score));
    sc.dataset.score = String(it.score);
    tr.append(sc);
    // A board with sub-scores: one cell each after the score.
    for (let i = 0; i < subs; i++) {
        const v = it.subscores ? it.subscores[i] : undefined;
        tr.append(cell('td', 'score subscore', v === undefined ? '' : fmt(v)));
    }
    if (shownMe && it.id === shownMe.id) {
        // The viewer: highlighted, and said in words ("You") for everyone, screen readers too.
        tr.classList.add('is-me');
        tr.setAttribute('aria-current', 'true');
        tr.querySelector('td.primary')?.append(cell('span', 'you', ' You'));
    }
    return { tr, rankChars: rankText.length };
}

function render(page, found, notice, { focusRow = false, refresh = false } = {}) {
    shown = page;
    shownFound = found;
    ui.error.hidden = true;
    const meItem = shownMe?.item ?? null;
    const cols = recordColumns(meItem ? [...page.items, meItem] : page.items);
    const idIsPrimary = cols.length === 0;
    // A board with sub-scores: one column each after the score (the viewer's pinned row counts:
    // a page past the end has no items).
    const subs = (meItem ? [...page.items, meItem] : page.items)
        .reduce((n, it) => Math.max(n, it.subscores ? it.subscores.length : 0), 0);
    const th = (cls, text) => {
        const c = cell('th', cls, text);
        c.scope = 'col';
        return c;
    };
    ui.head.replaceChildren(
        th('rank', 'Rank'),
        ...cols.map((k, i) => th(i === 0 ? 'primary' : 'secondary', heading(k))),
        ...(!EMBED || idIsPrimary ? [th(idIsPrimary ? 'primary id' : 'id', EMBED ? 'Player' : 'Id')] : []),
        th('score', 'Score'),
        ...Array.from({ length: subs }, (_, i) => th('score subscore', subs > 1 ? `Sub-score ${i + 1}` : 'Sub-score')),
    );
    let hl = null;
    let rankChars = 1;
    const rows = page.items.map((it) => {
        const r = rowOf(it, cols, idIsPrimary, subs);
        rankChars = Math.max(rankChars, r.rankChars);
        if (found && it.id === found.id) {
            r.tr.classList.add('is-member');
            r.tr.setAttribute('aria-current', 'true');
            r.tr.tabIndex = -1;
            hl = r.tr;
        }
        return r.tr;
    });
    // The viewer's row, pinned under the page when it is not on it.
    const pinned = meItem && !page.items.some((it) => it.id === meItem.id) ? rowOf(meItem, cols, idIsPrimary, subs) : null;
    if (pinned) rankChars = Math.max(rankChars, pinned.rankChars);
    ui.meRows.replaceChildren(...(pinned ? [pinned.tr] : []));
    ui.meRows.hidden = !pinned;
    // The rank column fits the widest rank on the page (phone layout: see style.css).
    ui.table.style.setProperty('--rank-chars', String(rankChars));
    ui.rows.replaceChildren(...rows);
    const last = lastPage(page);
    const per = shownPeriod();
    const perText = per ? `${periodName(shownSettings, per.id)}${per.current ? ' (current)' : ''}` : '';
    ui.viewBoard.textContent = page.board;
    ui.periodLabel.hidden = !per;
    ui.periodLabel.textContent = per ? `${periodName(shownSettings, per.id)} · ${per.current ? 'current' : 'past'}` : '';
    ui.periodLabel.classList.toggle('past', Boolean(per && !per.current));
    ui.caption.textContent = `Board ${page.board}${per ? `, ${perText}` : ''}, page ${fmt(page.page)} of ${fmt(last)}`;
    ui.empty.hidden = page.items.length > 0;
    if (!page.items.length)
        ui.empty.textContent = page.total === 0
            ? (per ? `Board ${page.board} has no members in ${perText}.` : `Board ${page.board} has no members yet.`)
            : `Page ${fmt(page.page)} is past the end: the last page is ${fmt(last)}.`;
    if (!SIZES.includes(page.size) && ![...ui.size.options].some((o) => Number(o.value) === page.size)) {
        const o = document.createElement('option');
        o.value = String(page.size);
        o.textContent = String(page.size);
        ui.size.append(o);
    }
    ui.size.value = String(page.size);
    updatePager(page);
    const first = page.items[0];
    const range = first
        ? `ranks ${fmt(first.rank)}–${fmt(page.items[page.items.length - 1].rank)} of ${fmt(page.total)}`
        : page.total === 1 ? '1 member' : `${fmt(page.total)} members`;
    let text = `Page ${fmt(page.page)} of ${fmt(last)} · ${range}`;
    if (found) {
        const name = found.record && found.record.name ? `${found.record.name} (${found.id})` : found.id;
        text = `${name}: rank ${fmt(found.rank)}, score ${fmtScore(found.score)}, on page ${fmt(page.page)}.`;
    }
    if (shownMe)
        text += shownMe.item
            ? ` · You: rank ${fmt(shownMe.item.rank)}, score ${fmtScore(shownMe.item.score)}.`
            : ' · You are not on this leaderboard yet.';
    if (per) text = `${perText} · ${text}`;
    say(notice ? `${notice} ${text}` : text);
    ui.status.classList.toggle('notice', Boolean(notice));
    document.title = EMBED ? `${page.board}${per ? ` · ${per.id}` : ''} leaderboard`
        : `${page.board}${per ? ` · ${per.id}` : ''} · page ${page.page} · rankd`;
    ui.credit.hidden = page.board !== 'cities';
    const q = new URLSearchParams({ page: String(page.page), size: String(page.size) });
    if (view.period) q.set('period', view.period);
    ui.apiLink.href = `/boards/${encodeURIComponent(page.board)}/rank?${q}`;
    if (hl && !refresh) {
        hl.scrollIntoView({ block: 'center' });
        if (focusRow) hl.focus({ preventScroll: true });
    }
}

function updatePager(page) {
    const n = page ? page.page : 1;
    const last = page ? lastPage(page) : 1;
    const active = document.activeElement;
    for (const b of goButtons) {
        const back = b.dataset.go === 'first' || b.dataset.go === 'prev';
        b.disabled = !page || (back ? n <= 1 : n >= last);
    }
    ui.page.value = String(n);
    ui.page.max = String(last);
    ui.page.disabled = !page;
    ui.pages.textContent = `of ${fmt(last)}`;
    ui.whereBottom.textContent = `Page ${fmt(n)} of ${fmt(last)}`;
    // A button that just got disabled drops keyboard focus: keep it in its pager.
    if (active && active.disabled) {
        const nav = active.closest('.pager');
        const other = nav && [...nav.querySelectorAll('button[data-go]')].find((b) => !b.disabled);
        (nav && nav.classList.contains('pager-bottom') ? other || ui.table : ui.page).focus();
    }
}

/** The embed page's words for an error: for players, nothing about rankd's insides. */
function embedError(e) {
    const code = e instanceof RankdError ? e.code : '';
    if (code === 'board_not_found')
        return ['This leaderboard is not available', 'It may have been removed, or the link is not right.'];
    if (code === 'period_not_found')
        return ['These results are not available', 'They are older than the leaderboard keeps, or still to come.'];
    if (!(e instanceof RankdError) || e.retryable)
        return ['The leaderboard cannot be shown right now', 'Please try again in a moment.'];
    if (e.status === 400) return ['This leaderboard link is not right', 'Please check the link.'];
    return ['Something went wrong', 'Please try again later.'];
}

function showError(e) {
    let title = 'Something went wrong';
    let msg = e instanceof Error ? e.message : String(e);
    let detail = '';
    // A 404 or a 400 stays what it is: no Retry for those, only for rankd or Redis being away.
    const retryable = e instanceof RankdError ? e.retryable : true;
    if (e instanceof RankdError) {
        detail = e.status ? `rankd: ${e.status} ${e.code}. ${e.message}` : `${e.code}: ${e.message}`;
        if (e.code === 'redis_unavailable') {
            title = 'rankd cannot reach its database';
            msg = 'rankd is running, but its Redis is down or not answering, so no leaderboard can be read right now. Retry in a moment.';
        } else if (e.code === 'network_error') {
            title = 'Cannot reach rankd';
            msg = 'The rankd server does not answer: it may be stopped or restarting, or this device is offline. Retry in a moment.';
        } else if (e.code === 'board_not_found') {
            title = 'This board does not exist';
            const others = boards && boards.length ? ' Pick one of the boards above.' : '';
            msg = `There is no board “${view?.board ?? ''}” on this rankd: it may have been deleted, or the link is wrong.${others}`;
            boards = null; // the list may be stale: read it again on the next load
            settingsCache.delete(view?.board);
        } else if (e.code === 'period_not_found') {
            title = 'This period cannot be read';
            msg = `Board ${view?.board ?? ''} has no readable period “${view?.period ?? ''}”: it is older than the board keeps, or still to come. Pick a period above.`;
        } else if (e.status === 400) {
            title = 'That request was not valid';
        } else {
            title = `rankd answered ${e.status}`;
        }
        if (msg === e.message) detail = `rankd: ${e.status} ${e.code}.`;
    }
    if (EMBED) {
        [title, msg] = embedError(e);
        detail = '';
    }
    shown = null;
    ui.errorTitle.textContent = title;
    ui.errorMessage.textContent = msg;
    ui.errorDetail.textContent = detail;
    ui.errorDetail.hidden = !detail;
    ui.retry.hidden = !retryable;
    ui.error.dataset.retryable = String(retryable);
    ui.error.hidden = false;
    const a = document.activeElement;
    setState('error');
    say(title);
    // The pager and table are hidden now: keyboard focus goes to Retry (or, when there is
    // nothing to retry, to the board picker) rather than the void.
    if (!a || a === document.body || a.closest('.pager, .table-wrap'))
        (retryable ? ui.retry : ui.board).focus();
}

// ---------------------------------------------------------------- auto-refresh

// Auto-refresh is pushed: the page on screen is watched through an EventSource (GET .../rank with
// Accept: text/event-stream), and rankd sends it again each time it changes, at most once per
// page TTL, for the price of one read whatever the number of viewers. Where EventSource is
// missing, or the stream fails or never delivers (a proxy that holds it back), the page is
// polled instead every `refresh` seconds with If-None-Match (a 304 changes nothing), and a stream
// is tried again after STREAM_RETRY_MS.
const STREAM_FIRST_MS = 10000; // no first event by then: the stream is held back somewhere
const STREAM_RETRY_MS = 30000; // after a failed stream, poll this long before trying one again
let refreshTimer = null;
let refreshing = null;
/** The open stream: {es, url, timer (until its first event), got (events received)} */
let stream = null;
let streamRetryAt = 0;

function clock() {
    return new Date().toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

function autoSay(text) {
    ui.autoStatus.hidden = !text;
    if (ui.autoStatus.textContent !== text) ui.autoStatus.textContent = text;
}

/** The address a view's page is read and watched at. */
function pageUrlOf(v) {
    const q = new URLSearchParams({ page: String(v.page) });
    if (v.size) q.set('size', String(v.size));
    if (v.period) q.set('period', v.period);
    return `/boards/${encodeURIComponent(v.board)}/rank?${q}`;
}

function closeStream() {
    if (!stream) return;
    clearTimeout(stream.timer);
    stream.es.close();
    stream = null;
}

const canStream = () => typeof window.EventSource === 'function' && Date.now() >= streamRetryAt;

function scheduleRefresh() {
    clearTimeout(refreshTimer);
    refreshTimer = null;
    if (!view || !view.refresh) {
        closeStream();
        autoSay('');
        return;
    }
    const ready = shown && document.body.dataset.state === 'ready';
    if (ready && canStream()) {
        openStream();
        return;
    }
    closeStream(); // an error view has nothing to watch (the load that ends it opens one again)
    if (!ui.autoStatus.textContent) autoSay(`Auto-refresh every ${fmt(view.refresh)} s.`);
    refreshTimer = setTimeout(refreshNow, view.refresh * 1000);
}

/** Watch the view's page; the stream open for another page is closed first. */
function openStream() {
    const url = pageUrlOf(view);
    if (stream && stream.url === url) return;
    closeStream();
    const es = new EventSource(url);
    const s = { es, url, got: 0, timer: null };
    stream = s;
    s.timer = setTimeout(() => streamFailed(s, 'no update arrived'), STREAM_FIRST_MS);
    es.addEventListener('page', (ev) => {
        if (stream !== s) return;
        clearTimeout(s.timer);
        if (!s.got++) autoSay('Live: the table updates as the board changes.');
        let page;
        try {
            page = JSON.parse(ev.data);
        } catch {
            streamFailed(s, 'an unreadable update');
            return;
        }
        // A load running (a new view) draws its own page; an error view is not drawn over.
        if (inflight || !shown || document.body.dataset.state !== 'ready') return;
        showRefreshed(page, view, shownSettings, false, 'Live');
    });
    es.addEventListener('end', (ev) => {
        if (stream !== s) return;
        let code = '';
        try {
            code = JSON.parse(ev.data)?.error?.code ?? '';
        } catch { /* no body: as shutting_down */ }
        if (code === '' || code === 'shutting_down') return; // rankd stops: EventSource reconnects
        // The board or the period is gone: load the view again, which says so as a GET would.
        closeStream();
        load(current());
    });
    es.addEventListener('error', () => {
        if (stream !== s) return;
        // A refusal (CLOSED: a 4xx or 5xx, another type), or a cut stream: poll from here on.
        streamFailed(s, es.readyState === EventSource.CLOSED ? 'the stream was refused' : 'the stream was cut');
    });
}

function streamFailed(s, why) {
    if (stream !== s) return;
    closeStream();
    streamRetryAt = Date.now() + STREAM_RETRY_MS;
    if (!view?.refresh) return;
    autoSay(EMBED ? `Updated every ${fmt(view.refresh)} s.`
        : `Live updates unavailable (${why}): auto-refresh every ${fmt(view.refresh)} s.`);
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refreshNow, view.refresh * 1000);
}

/**
 * Show a page read again (a poll or a stream event) for view v: the same rows leave the table as
 * it is (same elements, focus and scroll); others redraw it in place.
 */
function showRefreshed(page, v, settings, notModified, how, me = undefined) {
    const periodMoved = settings !== shownSettings && settings?.current_period !== shownSettings?.current_period;
    shownSettings = settings;
    if (periodMoved) fillPeriods(settings, v.period);
    // A 304, or a 200 with the same rows (a new ETag for the same body, e.g. after a board
    // generation bump): the table stays as it is.
    const same = notModified || JSON.stringify(page) === JSON.stringify(shown);
    // A poll reads the viewer with the page (me); a pushed page does not (me undefined).
    const meMoved = me !== undefined && JSON.stringify(me) !== JSON.stringify(shownMe);
    if (me !== undefined) shownMe = me;
    if (same && !periodMoved && !meMoved) {
        if (how !== 'Live') autoSay(`${how} · unchanged at ${clock()}.`);
        return;
    }
    const it = shownFound && page.items.find((x) => x.id === shownFound.id);
    const found = it ? { ...shownFound, rank: it.rank, score: it.score, record: it.record, page: page.page } : null;
    const meOn = shownMe && page.items.find((x) => x.id === shownMe.id);
    if (meOn) shownMe = { id: shownMe.id, item: meOn };
    render(page, found, '', { refresh: true });
    autoSay(`${how} · updated at ${clock()}.`);
    if (shownMe && !meOn && me === undefined) refreshMe(v, page);
}

/** The viewer's pinned row read again (a pushed page changed, without them on it; an event
 *  stream carries no `with`): the page once more with them. */
async function refreshMe(v, page) {
    try {
        const { me } = splitMe(v, await client.page(v.board, v.page, { size: v.size ?? undefined, period: v.period ?? undefined, ...withMe(v) }));
        if (view !== v || shown !== page) return; // a newer page or view is on screen
        shownMe = me;
        render(page, shownFound, '', { refresh: true });
    } catch {
        /* the row stays as it was; the next change reads it again */
    }
}

/**
 * Revalidate the page on screen: the client sends If-None-Match, and a 304 leaves the table as
 * it is (same rows, same focus, same scroll); a 200 redraws it in place. A failure keeps the rows
 * and says so; the next tick tries again.
 */
async function refreshNow() {
    refreshTimer = null;
    if (!view || !view.refresh) return;
    if (document.hidden || inflight || refreshing || !shown || document.body.dataset.state !== 'ready') {
        scheduleRefresh(); // not now: a load is running, the view is an error, or the tab is hidden
        return;
    }
    const ctl = new AbortController();
    refreshing = ctl;
    const v = view;
    try {
        // A periodic board's current period moves on: its settings are read again once a minute.
        const settings = isPeriodic(shownSettings) ? await settingsOf(v.board, ctl.signal) : shownSettings;
        const read = await client.page(v.board, v.page, { size: v.size ?? undefined, period: v.period ?? undefined, signal: ctl.signal, ...withMe(v) });
        if (view !== v || ctl.signal.aborted) return;
        const { page, me } = splitMe(v, read);
        showRefreshed(page, v, settings, Boolean(responseInfo(read)?.notModified), `Auto-refresh every ${fmt(v.refresh)} s`, v.me ? me : undefined);
    } catch (e) {
        if (ctl.signal.aborted || e?.name === 'AbortError') return;
        const why = e instanceof RankdError ? (e.code === 'network_error' ? 'rankd does not answer' : `${e.status} ${e.code}`) : String(e);
        autoSay(EMBED ? `Updates paused at ${clock()}; trying again in ${fmt(v.refresh)} s.`
            : `Auto-refresh failed at ${clock()} (${why}); showing the page as it was. Trying again in ${fmt(v.refresh)} s.`);
    } finally {
        if (refreshing === ctl) refreshing = null;
        if (view === v) scheduleRefresh();
    }
}

function setAuto(on) {
    refreshing?.abort();
    closeStream();
    view = { ...(view || readUrl()), refresh: on ? (view?.refresh || REFRESH_DEFAULT) : null };
    history.replaceState(null, '', urlOf(view));
    autoSay('');
    scheduleRefresh();
}

// ---------------------------------------------------------------- events

function current() {
    return view || readUrl();
}

ui.board.addEventListener('change', () => {
    const v = current();
    go({ board: ui.board.value, period: null, page: 1, size: v.size, member: null });
});

ui.period.addEventListener('change', () => {
    const v = current();
    go({ board: v.board, period: ui.period.value || null, page: 1, size: v.size, member: v.member });
});

ui.size.addEventListener('change', () => {
    const v = current();
    const size = Number(ui.size.value);
    // Keep the first row on screen in view: the new page holds its rank.
    const firstRank = shown && shown.items.length ? shown.items[0].rank : 1;
    go({ board: v.board, period: v.period, page: Math.floor((firstRank - 1) / size) + 1, size, member: v.member });
});

for (const b of goButtons) {
    b.addEventListener('click', () => {
        if (!shown) return;
        const last = lastPage(shown);
        const to = { first: 1, prev: shown.page - 1, next: shown.page + 1, last }[b.dataset.go];
        const v = current();
        const bottom = Boolean(b.closest('.pager-bottom'));
        go({ board: v.board, period: v.period, page: Math.min(Math.max(to, 1), last), size: v.size, member: null },
            { focusTable: bottom });
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
    const last = shown ? lastPage(shown) : n;
    const v = current();
    go({ board: v.board, period: v.period, page: Math.min(n, last), size: v.size, member: null });
});

ui.find.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const id = ui.member.value.trim();
    if (!id) return;
    const v = current();
    go({ board: v.board, period: v.period, page: v.page, size: v.size, member: id }, { focusRow: false });
});

ui.auto.addEventListener('change', () => setAuto(ui.auto.checked));

ui.retry.addEventListener('click', () => {
    load(current());
});

document.addEventListener('visibilitychange', () => {
    if (!document.hidden && view?.refresh && !refreshTimer && !refreshing && !stream) refreshNow();
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
