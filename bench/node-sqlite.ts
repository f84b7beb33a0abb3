// The search's own statements on better-sqlite3 and on Node's built-in node:sqlite, side by
// side in one run, on one cash book: what an embedder would gain or lose if createHandler
// took a `DatabaseSync`. Prints markdown.
//
//   npm run bench:node-sqlite -- [--rows 20000] [--rounds 7] [--searches 2000]

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { type Bounds, SQL, toBounds } from '../lib/search/index.js';
import { median } from './shapes.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '7' },
    searches: { type: 'string', default: '2000' },
  },
});
const rows = Number(values.rows);
const rounds = Number(values.rounds);
const searches = Number(values.searches);

const dir = mkdtempSync(join(tmpdir(), 'bench-node-sqlite-'));
const file = join(dir, 'book.sqlite');

// A cash book like the benchmark's: dates over three years, a few common amounts.
const writer = new Database(file);
writer.exec(readFileSync(new URL('../fixtures/schema.sql', import.meta.url), 'utf8'));
writer.exec("INSERT INTO categories VALUES (1, 'Porto'); INSERT INTO payment_methods VALUES (1, 'Barkasse')");
const insert = writer.prepare(
  'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, 1, 1)',
);
let seed = 7;
const next = (): number => {
  seed = (seed * 1_664_525 + 1_013_904_223) >>> 0;
  return seed / 4_294_967_296;
};
writer.transaction(() => {
  for (let i = 0; i < rows; i += 1) {
    const date = new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 1096) * 86_400_000).toISOString().slice(0, 10);
    const cents = next() < 0.3 ? [435, 1250, 95, 1999][Math.floor(next() * 4)] : Math.floor(next() * 20_000) - 5_000;
    insert.run(date, cents, `Buchung ${i}`);
  }
})();
writer.exec('ANALYZE');
writer.close();

/** One shape: the statements the search runs for it, and its bound values. */
const SHAPES = [
  {
    name: 'typical: one amount in a month',
    count: SQL.count('exact'),
    page: SQL.page('exact'),
    bounds: toBounds({
      von: '2025-03-01',
      bis: '2025-03-31',
      betragCents: -1250,
      toleranzCents: 0,
      waehrung: 'EUR',
      limit: 50,
    }),
  },
  {
    name: 'band: ±5 € in a month',
    count: SQL.count('dateWalk'),
    page: SQL.page('dateWalk'),
    bounds: toBounds({
      von: '2025-03-01',
      bis: '2025-03-31',
      betragCents: -1250,
      toleranzCents: 500,
      waehrung: 'EUR',
      limit: 50,
    }),
  },
];

type Run = (bounds: Bounds & { limit: number }) => number;

function betterSqlite3(count: string, page: string): Run {
  const db = new Database(file, { readonly: true });
  const c = db.prepare(count).pluck();
  const p = db.prepare(page).raw();
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  return (bounds) => {
    begin.run();
    const n = c.get(bounds) as number;
    const list = p.all(bounds);
    commit.run();
    return n + list.length;
  };
}

function nodeSqlite(count: string, page: string): Run {
  const db = new DatabaseSync(file, { readOnly: true });
  const c = db.prepare(count);
  const p = db.prepare(page);
  // better-sqlite3 ignores bound values a statement does not use; node:sqlite refuses them.
  c.setAllowUnknownNamedParameters(true);
  p.setAllowUnknownNamedParameters(true);
  p.setReturnArrays(true);
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  return (bounds) => {
    const values: Record<string, string | number> = { ...bounds };
    begin.run();
    const n = Object.values(c.get(values) ?? {})[0] as number;
    const list = p.all(values);
    commit.run();
    return n + list.length;
  };
}

process.stdout.write(
  `node ${process.version}, SQLite ${new Database(':memory:').prepare('SELECT sqlite_version()').pluck().get()} (better-sqlite3) / ${new DatabaseSync(':memory:').prepare('SELECT sqlite_version() AS v').get()?.['v']} (node:sqlite); ${rows} bookings, ${rounds} rounds × ${searches} searches each, alternating\n\n`,
);
process.stdout.write(
  '| shape | better-sqlite3 µs/search | node:sqlite µs/search | node:sqlite ÷ better-sqlite3 |\n|---|---:|---:|---:|\n',
);
try {
  for (const shape of SHAPES) {
    const parameters = { ...shape.bounds, limit: 50 };
    const engines = { better: betterSqlite3(shape.count, shape.page), node: nodeSqlite(shape.count, shape.page) };
    const results = engines.better(parameters) === engines.node(parameters);
    if (!results) throw new Error(`the two engines disagree on ${shape.name}`);
    const times: Record<keyof typeof engines, number[]> = { better: [], node: [] };
    for (let round = 0; round < rounds; round += 1) {
      for (const engine of ['better', 'node'] as const) {
        const run = engines[engine];
        const start = process.hrtime.bigint();
        for (let i = 0; i < searches; i += 1) run(parameters);
        times[engine].push(Number(process.hrtime.bigint() - start) / 1000 / searches);
      }
    }
    const better = median(times.better);
    const node = median(times.node);
    process.stdout.write(
      `| ${shape.name} | ${better.toFixed(1)} | ${node.toFixed(1)} | ${(node / better).toFixed(2)} |\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
