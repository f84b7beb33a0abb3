// What reading the file without a memory map costs (docs/design/README.md, "No memory map"): the
// widest search (every date and amount, a page of 1,000), the dearest (every amount but
// the lowest and highest, every day but the last) and the typical search (one amount in a
// month) on the 1M file, through a connection with SQLite's read-only map of up to 1 GiB
// beside one without (mmap_size 0, the command's since a file overwritten in place under
// a map ended it with SIGBUS) and one without but with a page cache of 64 MiB, each while
// nobody writes and with another connection's
// commit before every search (which empties SQLite's page cache). In-process, wall clock,
// the configurations in rotating order each round, medians of the rounds. Prints markdown.
//
//   npm run bench:memory-map -- [--rounds 7] [--searches 30]     (about 2 min)

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../lib/query.js';
import { createBookingSearch } from '../lib/search/index.js';
import { median, queriesFor } from './shapes.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    searches: { type: 'string', default: '30' },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values.searches);
const SOURCE = 'bench/data/bookings-1000000.sqlite';

// A copy the writer may write (bench/data is read-only), with a rollback journal as the file is.
const dir = mkdtempSync(join(tmpdir(), 'memory-map-'));
const file = join(dir, 'kasse.sqlite');
copyFileSync(SOURCE, file);
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const writer = new Database(file);
writer.pragma('busy_timeout = 5000');
const insert = writer.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-10-31', 1, 'bench')");
const remove = writer.prepare("DELETE FROM entries WHERE subject = 'bench'");

const [first, last] = writer.prepare<[], [string, string]>('SELECT min(date), max(date) FROM entries').raw().get() ?? [
  '',
  '',
];
const [low, high] = writer
  .prepare<[], [number, number]>('SELECT min(amount_cents), max(amount_cents) FROM entries')
  .raw()
  .get() ?? [0, 0];
const widest: SearchQuery = {
  von: '0000-01-01',
  bis: '9999-12-31',
  betragCents: 0,
  toleranzCents: 99_999_999_999_999,
  waehrung: 'EUR',
  limit: 1000,
};
// Every amount but the lowest and the highest stored, every day but the last: no index
// shortens it, each entry is compared with both ranges.
const dearest: SearchQuery = {
  von: first,
  bis: new Date(Date.parse(last) - 86_400_000).toISOString().slice(0, 10),
  betragCents: -Math.round((low + high) / 2),
  toleranzCents: Math.floor((high - low) / 2) - 1,
  waehrung: 'EUR',
  limit: 1000,
};

// The command's page cache is SQLite's default, 2,000 KiB (bin/files/database-file.ts).
const CONFIGURATIONS = [
  { label: 'map of 1 GiB', mmap: 1024 ** 3, cacheKiB: 2_000 },
  { label: 'no map (the command)', mmap: 0, cacheKiB: 2_000 },
  { label: 'no map, 64 MiB page cache', mmap: 0, cacheKiB: 65_536 },
];
const connections = CONFIGURATIONS.map(({ label, mmap, cacheKiB }) => {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma(`mmap_size = ${mmap}`);
  db.pragma(`cache_size = -${cacheKiB}`);
  return { label, db, search: createBookingSearch(db) };
});
const typical = queriesFor(connections[0]?.db as Database.Database, 'month exact', perRound, 11);

const shapes: Array<[string, (i: number) => SearchQuery, number]> = [
  ['widest', () => widest, 1],
  ['dearest', () => dearest, 1],
  ['typical', (i) => typical[i % typical.length] as SearchQuery, 20],
];
const writes = [false, true];
const results = new Map<string, number[]>();

for (let round = 0; round < rounds; round += 1) {
  const order = [...connections.slice(round % connections.length), ...connections.slice(0, round % connections.length)];
  for (const [shape, queryAt, repeat] of shapes) {
    for (const write of writes) {
      for (const { label, search } of order) {
        const times: number[] = [];
        for (let i = 0; i < perRound; i += 1) {
          if (write) insert.run();
          const started = performance.now();
          for (let r = 0; r < repeat; r += 1) search(queryAt(i * repeat + r));
          times.push((performance.now() - started) / repeat);
        }
        if (write) remove.run();
        const key = `${shape}|${write}|${label}`;
        results.set(key, [...(results.get(key) ?? []), median(times)]);
      }
    }
  }
  process.stderr.write(`round ${round + 1} of ${rounds}\n`);
}

console.log(
  `In-process on the 1M file, ${rounds} rounds × ${perRound} searches per cell, wall clock per search (median of the rounds' medians); "a commit before each": another connection commits a booking before every search, which empties SQLite's page cache:\n`,
);
const others = CONFIGURATIONS.slice(1).map(({ label }) => label);
console.log(`| search | writer | map of 1 GiB | ${others.map((label) => `${label} | ÷ map`).join(' | ')} |`);
console.log(`|---|---|---:|${others.map(() => '---:|---:').join('|')}|`);
const shown = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`);
for (const [shape] of shapes) {
  for (const write of writes) {
    const at = (label: string): number => median(results.get(`${shape}|${write}|${label}`) ?? []);
    const mapped = at('map of 1 GiB');
    const cells = others.map((label) => `${shown(at(label))} | ${(at(label) / mapped).toFixed(2)}`);
    console.log(`| ${shape} | ${write ? 'a commit before each' : 'none'} | ${shown(mapped)} | ${cells.join(' | ')} |`);
  }
}
