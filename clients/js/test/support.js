// support.js -- shared set-up of the client tests (not a test file: the runner is given *.test.js).
// rankd's address comes from RANKD_URL and the write token from RANKD_WRITE_TOKEN
// (scripts/test-clients.sh starts rankd and sets both).
import assert from 'node:assert/strict';
import net from 'node:net';

export const BASE = process.env.RANKD_URL;
const TOKEN = process.env.RANKD_WRITE_TOKEN;

export function requireEnv() {
    assert.ok(BASE, 'set RANKD_URL to a running rankd (scripts/test-clients.sh does)');
    assert.ok(TOKEN, 'set RANKD_WRITE_TOKEN to its write token');
}

/** A board name of its own for this run. */
export function uniqueBoard(prefix) {
    return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

/** A write through rankd's API with the token; returns the parsed reply. */
export async function write(method, path, body) {
    const res = await fetch(BASE + path, {
        method,
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
}

/** A loopback port that nothing listens on. */
export async function closedPort() {
    const srv = net.createServer();
    await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
    const { port } = srv.address();
    await new Promise((ok) => srv.close(ok));
    return port;
}

/** A fetch that records every request (URL and headers) and passes it on. */
export function recordingFetch(log, inner = globalThis.fetch) {
    return async (url, init = {}) => {
        log.push({ url: String(url), headers: { ...(init.headers || {}) } });
        return inner(url, init);
    };
}
