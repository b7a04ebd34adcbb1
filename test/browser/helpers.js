// helpers.js -- what the browser test files share (not a test file: node --test runs *.test.js).

/** Wait until page p has finished loading a view (ready or error); returns which. */
export async function settled(p) {
    await p.waitForFunction(() => document.body.dataset.state !== 'loading', null, { timeout: 10000 });
    return p.evaluate(() => document.body.dataset.state);
}

/**
 * The WCAG contrast ratio of each selector's text against its background on page p ({selector:
 * ratio}, null for an element absent or not shown); with { body: true } also `body`, the relative
 * luminance of the page's background.
 */
export function contrasts(p, selectors, { body = false } = {}) {
    return p.evaluate(([sels, withBody]) => {
        const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
        const lum = ([r, g, b]) => {
            const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
            return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        const bgOf = (el) => {
            for (let e = el; e; e = e.parentElement) {
                const c = rgb(getComputedStyle(e).backgroundColor);
                if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
            }
            return [255, 255, 255];
        };
        const out = {};
        for (const sel of sels) {
            const el = document.querySelector(sel);
            if (!el || !el.getClientRects().length) { out[sel] = null; continue; }
            const a = lum(rgb(getComputedStyle(el).color));
            const b = lum(bgOf(el));
            out[sel] = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
        }
        if (withBody) out.body = lum(bgOf(document.body));
        return out;
    }, [selectors, body]);
}
