// format.js -- how the web page prints scores (a board's `score_format`) and the embed page's
// theme from its URL. Plain ES module, no build step.

/**
 * A function printing a score as the board's settings say: 'integer' (the default) with grouped
 * digits (a fraction the board keeps is shown too), 'decimal' with exactly score_decimals
 * fraction digits, 'duration_ms' a time in milliseconds as m:ss.mmm (h:mm:ss.mmm from an hour).
 * @param {{score_format?: string, score_decimals?: number} | null} settings
 * @returns {(score: number) => string}
 */
export function scoreFormatter(settings) {
    const decimals = Math.min(Math.max(Number(settings?.score_decimals) || 0, 0), 9);
    if (settings?.score_format === 'duration_ms') return duration;
    const nf = settings?.score_format === 'decimal'
        ? new Intl.NumberFormat(undefined, { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
        : new Intl.NumberFormat(undefined, { maximumFractionDigits: Math.max(decimals, 0) || 0 });
    return (n) => (typeof n === 'number' ? nf.format(n) : String(n ?? ''));
}

const pad = (n, w) => String(n).padStart(w, '0');

/** 61234 -> "1:01.234", 3723004 -> "1:02:03.004", -1500 -> "-0:01.500". */
export function duration(ms) {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) return String(ms ?? '');
    const sign = ms < 0 ? '-' : '';
    const t = Math.round(Math.abs(ms));
    const h = Math.floor(t / 3600000);
    const m = Math.floor(t / 60000) % 60;
    const s = Math.floor(t / 1000) % 60;
    const frac = `${pad(s, 2)}.${pad(t % 1000, 3)}`;
    return h ? `${sign}${h}:${pad(m, 2)}:${frac}` : `${sign}${Math.floor(t / 60000)}:${frac}`;
}

/** The custom properties an embedder may set (style.css, docs/embedding.md). */
export const THEME_PROPERTIES = ['--rankd-bg', '--rankd-surface', '--rankd-fg', '--rankd-muted',
    '--rankd-line', '--rankd-accent', '--rankd-accent-fg', '--rankd-me-bg', '--rankd-me-edge',
    '--rankd-focus', '--rankd-font', '--rankd-font-size', '--rankd-radius'];

// Colours, lengths and font names only: nothing that fetches (url(), image-set()) or escapes.
const SAFE_VALUE = /^[#\w\s,.%'"()+-]{1,120}$/;
const UNSAFE = /url\s*\(|image|expression|\\|@/i;

/**
 * Apply the theme properties a URL carries (`?--rankd-bg=%23101820&--rankd-accent=%23ff5a00`) to
 * the page; others and unsafe values are ignored. Returns the applied [name, value] pairs.
 * @param {URLSearchParams} q
 * @param {CSSStyleDeclaration} style  where they go (document.documentElement.style)
 */
export function applyTheme(q, style) {
    const applied = [];
    for (const name of THEME_PROPERTIES) {
        const v = q.get(name);
        if (v && SAFE_VALUE.test(v) && !UNSAFE.test(v)) {
            style.setProperty(name, v);
            applied.push([name, v]);
        }
    }
    return applied;
}
