// rankd.js -- the rankd client for Node and bundlers.
//
// The one source of the client is clients/web/rankd.js: rankd serves only clients/web (its static
// dir refuses symlinks that leave it), so the browser copy has to live there, and this module
// re-exports it rather than keeping a second copy that could drift. `npm pack` ships a copy of
// the source in its place (tools/pack-source.js). See README.md.
export { RankdClient, RankdError, RankdWriteClient, createClient, responseInfo } from '../web/rankd.js';
