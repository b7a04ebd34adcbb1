// The npm package: package.json's fields, and `npm pack` producing a tarball that holds the whole
// client (a copy of clients/web/rankd.js, not the repository's one-line re-export) and installs.
// The pack runs on a copy of clients/js and clients/web, so the repository's files never change
// while the other test files import them; the tarball goes to build/npm/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as viaWeb from '../../web/rankd.js';
import { HEADER, REEXPORT } from '../tools/pack-source.js';

const JS = fileURLToPath(new URL('..', import.meta.url));
const WEB = fileURLToPath(new URL('../../web/', import.meta.url));
const OUT = fileURLToPath(new URL('../../../build/npm/', import.meta.url));
const pkg = JSON.parse(readFileSync(join(JS, 'package.json'), 'utf8'));
let stage;

before(() => {
    stage = mkdtempSync(join(tmpdir(), 'rankd-pack-'));
    mkdirSync(join(stage, 'clients'));
    cpSync(JS, join(stage, 'clients/js'), { recursive: true, filter: (p) => !p.includes('node_modules') });
    cpSync(WEB, join(stage, 'clients/web'), { recursive: true });
    mkdirSync(OUT, { recursive: true });
});

after(() => {
    if (stage) rmSync(stage, { recursive: true, force: true });
});

function npm(args, cwd) {
    return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--no-update-notifier'],
        { cwd, encoding: 'utf8', timeout: 60000, stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, npm_config_loglevel: 'error' } });
}

describe('package.json', () => {
    it('is publishable: name, version, license, exports, types, files; not private', () => {
        assert.equal(pkg.private, undefined);
        assert.match(pkg.name, /^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/);
        assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
        assert.equal(pkg.license, 'MIT');
        assert.equal(pkg.type, 'module');
        assert.equal(pkg.types, './rankd.d.ts');
        assert.deepEqual(pkg.exports['.'], { types: './rankd.d.ts', default: './rankd.js' });
        assert.deepEqual(pkg.files.sort(), ['README.md', 'rankd.d.ts', 'rankd.js']);
        assert.deepEqual(pkg.dependencies, undefined, 'no dependencies');
    });

    it('the repository keeps rankd.js as the re-export (a pack always puts it back)', () => {
        assert.equal(readFileSync(join(JS, 'rankd.js'), 'utf8'), REEXPORT);
    });
});

describe('npm pack', () => {
    let tarball;
    let files;

    it('packs exactly README.md, package.json, rankd.d.ts and rankd.js into build/npm/', () => {
        const out = npm(['pack', '--json', '--pack-destination', OUT], join(stage, 'clients/js'));
        const info = JSON.parse(out.slice(out.indexOf('[')))[0];
        assert.equal(info.name, pkg.name);
        assert.equal(info.version, pkg.version);
        files = info.files.map((f) => f.path).sort();
        assert.deepEqual(files, ['README.md', 'package.json', 'rankd.d.ts', 'rankd.js']);
        tarball = join(OUT, info.filename);
        assert.equal(info.filename, `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`);
        // postpack put the re-export back in the staged copy.
        assert.equal(readFileSync(join(stage, 'clients/js/rankd.js'), 'utf8'), REEXPORT);
    });

    it('the packed rankd.js is the whole client: clients/web/rankd.js after a header', () => {
        const x = join(stage, 'x');
        mkdirSync(x);
        execFileSync('tar', ['-xzf', tarball, '-C', x]);
        const packed = readFileSync(join(x, 'package/rankd.js'), 'utf8');
        assert.equal(packed, HEADER + readFileSync(join(WEB, 'rankd.js'), 'utf8'));
        assert.doesNotMatch(packed, /from '\.\.\//, 'no import from outside the package');
        assert.equal(readFileSync(join(x, 'package/rankd.d.ts'), 'utf8'), readFileSync(join(JS, 'rankd.d.ts'), 'utf8'));
    });

    it('installs from the tarball and imports by name with every export', async () => {
        const app = join(stage, 'app');
        mkdirSync(app);
        writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
        npm(['install', '--offline', '--no-package-lock', tarball], app);
        const mod = join(app, 'node_modules', pkg.name);
        const m = await import(pathToFileURL(join(mod, 'rankd.js')).href);
        assert.deepEqual(Object.keys(m).sort(), Object.keys(viaWeb).sort());
        // Resolution by package name through "exports", from inside the app.
        const script = `import('${pkg.name}').then((m) => console.log(Object.keys(m).sort().join(',')))`;
        const names = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' }).trim();
        assert.equal(names, Object.keys(viaWeb).sort().join(','));
        const resolvedPkg = execFileSync(process.execPath, ['--input-type=module', '-e',
            `import { createRequire } from 'node:module'; console.log(createRequire(process.cwd() + '/').resolve('${pkg.name}/package.json'))`],
        { cwd: app, encoding: 'utf8' }).trim();
        assert.equal(JSON.parse(readFileSync(resolvedPkg, 'utf8')).version, pkg.version);
    });
});
