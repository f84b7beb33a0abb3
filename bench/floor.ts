// Where the microseconds of a typical search go, in-process: each step alone, the steps
// interleaved in every round, CPU time (user + system, so that other programs on a shared
// machine disturb it less than the wall clock), the median of the rounds. Prints markdown.
//
//   npm run bench:floor -- [--rounds 25] [--queries 1000]     (about 40 s; BENCH_QUICK=1: 10 s)

import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parseSearchQuery } from '../lib/query.js';
import { type BookingRow, type Bounds, createBookingSearch, PLAIN, SQL, toBounds } from '../lib/search/index.js';
import { formatSearchResult } from '../lib/search-endpoint.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const quick = process.env['BENCH_QUICK'] === '1';
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: quick ? '8' : '25' },
    queries: { type: 'string', default: quick ? '500' : '1000' },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values.queries);
const cpuMicros = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const FILES = {
  '20k': 'bench/data/bookings-20000.sqlite',
  '20k ANALYZEd': 'bench/data/bookings-20000-analyzed.sqlite',
  '1M ANALYZEd': 'bench/data/bookings-1000000-analyzed.sqlite',
} as const;

console.log(
  `In-process, the typical search (a month, exact amount), ${rounds} rounds × ${perRound} searches per step, steps interleaved, CPU µs per search (median of the rounds):\n`,
);
const table: Record<string, Record<string, number>> = {};
for (const [label, file] of Object.entries(FILES)) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const queries = queriesFor(db, 'month exact', perRound, 11);
  const bounds = queries.map(toBounds);
  const search = createBookingSearch(db);
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const exactCount = db.prepare<[Bounds], number>(SQL.count('exact')).pluck();
  const pageJoined = db.prepare<[Bounds & { limit: number }], BookingRow>(SQL.page('exact')).raw();
  // The statements as they were before: bare parameters, so that stat4 and LIMIT re-prepare them.
  const bare = (sql: string): string => sql.replaceAll('+:', ':');
  const exactCountBare = db.prepare<[Bounds], number>(bare(SQL.count('exact'))).pluck();
  const pageJoinedBare = db.prepare<[Bounds & { limit: number }], BookingRow>(bare(SQL.page('exact'))).raw();
  const plainCount = db.prepare<[Bounds], number>(PLAIN.count).pluck();
  const plainPage = db.prepare<[Bounds & { limit: number }], BookingRow>(PLAIN.page).raw();
  const results = queries.map((q) => search(q));
  const rawQueries = queries.map((q) => toQueryString(q));
  const inTransaction = (work: () => void) => () => {
    begin.run();
    work();
    commit.run();
  };

  const steps: Record<string, () => void> = {
    'read transaction alone: BEGIN, PRAGMA data_version, COMMIT (the lock cycle)': () => {
      for (let i = 0; i < perRound; i += 1) inTransaction(() => dataVersion.get())();
    },
    'the search, its own transaction (a search alone in its turn)': () => {
      for (const q of queries) search(q);
    },
    'the search, 16 in one transaction (a busy turn)': () => {
      for (let i = 0; i < perRound; i += 16) inTransaction(() => queries.slice(i, i + 16).forEach(search))();
    },
    '  count (exact), in a transaction': inTransaction(() => {
      for (const b of bounds) exactCount.get(b);
    }),
    '  page (names joined), in a transaction': inTransaction(() => {
      for (const b of bounds) pageJoined.all({ ...b, limit: 50 });
    }),
    '  count, bare parameters (re-prepared under stat4)': inTransaction(() => {
      for (const b of bounds) exactCountBare.get(b);
    }),
    '  page joined, bare parameters (re-prepared: LIMIT :limit, stat4)': inTransaction(() => {
      for (const b of bounds) pageJoinedBare.all({ ...b, limit: 50 });
    }),
    'the plain query (count + page), in a transaction': inTransaction(() => {
      for (const b of bounds) {
        plainCount.get(b);
        plainPage.all({ ...b, limit: 50 });
      }
    }),
    formatSearchResult: () => {
      for (const r of results) formatSearchResult(r);
    },
    parseSearchQuery: () => {
      for (const raw of rawQueries) parseSearchQuery(raw);
    },
  };
  const samples: Record<string, number[]> = {};
  for (let round = 0; round < rounds + 2; round += 1) {
    for (const [name, step] of Object.entries(steps)) {
      const started = cpuMicros();
      step();
      const spent = (cpuMicros() - started) / perRound;
      if (round >= 2) samples[name] = [...(samples[name] ?? []), spent]; // 2 rounds of warm-up
    }
  }
  table[label] = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, median(s)]));
  const rows = results.reduce((sum, r) => sum + r.rows.length, 0) / results.length;
  process.stderr.write(`${label}: ${rows.toFixed(1)} bookings per answer on average\n`);
  db.close();
}
const labels = Object.keys(FILES);
console.log(`| step | ${labels.join(' | ')} |`);
console.log(`|---|${labels.map(() => '---:').join('|')}|`);
for (const name of Object.keys(table[labels[0] as string] ?? {})) {
  console.log(`| ${name} | ${labels.map((l) => (table[l]?.[name] ?? 0).toFixed(1)).join(' | ')} |`);
}
