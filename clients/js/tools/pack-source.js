// pack-source.js in|out -- npm pack's prepack and postpack steps.
//
// In the repository, rankd.js is a one-line re-export of ../web/rankd.js (the one source, which
// rankd serves to browsers), and a package cannot ship a file outside its directory. So `npm pack`
// (and `npm publish`) first copies the source over rankd.js ("in") and puts the re-export back
// afterwards ("out"). The tarball's rankd.js is then the whole client, byte for byte the source
// after a one-line header. A test (test/package.test.js) packs and checks both states.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const REEXPORT = `// rankd.js -- the rankd client for Node and bundlers.
//
// The one source of the client is clients/web/rankd.js: rankd serves only clients/web (its static
// dir refuses symlinks that leave it), so the browser copy has to live there, and this module
// re-exports it rather than keeping a second copy that could drift. \`npm pack\` ships a copy of
// the source in its place (tools/pack-source.js). See README.md.
export { RankdClient, RankdError, RankdWriteClient, createClient, responseInfo } from '../web/rankd.js';
`;

export const HEADER = '// Packed from clients/web/rankd.js of the rankd repository (npm pack: tools/pack-source.js).\n';

const here = (p) => new URL(p, import.meta.url);
const target = here('../rankd.js');

function main(step) {
    if (step === 'in') {
        writeFileSync(target, HEADER + readFileSync(here('../../web/rankd.js'), 'utf8'));
    } else if (step === 'out') {
        writeFileSync(target, REEXPORT);
    } else {
        console.error('usage: node tools/pack-source.js in|out');
        process.exit(2);
    }
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url)
    main(process.argv[2]);
