// What the checks of a book's catalog cost as its schema grows (RELIABILITY.md, "A file
// cannot hold the service"): the own schema's tables (fixtures/schema.sql) with 10, 10,000
// and 100,000 more views in the catalog, written into sqlite_schema at once as an attacker
// would. Once the schema is loaded (the first statement of a connection, timed apart: it
// parses every CREATE of the catalog, which is why a file of more than 10,000 objects is
// searched in a guard process), each check the service makes of the file is timed
// in-process: the kind of the entries table (lib/schema.ts, catalogKind), everything the
// guard asks before a book is searched by the serving process (findUnboundedObject), the
// columns of the mapping's tables (findSchemaProblems), the schema cookie read at the start
// of every read transaction, and the count of the catalog's rows the guard compares with
// its limit. Medians of `--repeat` calls, in microseconds; the table ends with the ratio of
// 100,000 objects to 10. Prints markdown.
//
//   npm run bench:catalog -- [--repeat 200]     (about half a minute)

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { addViews } from '../fixtures/many-views.js';
import { catalogKind, findSchemaProblems, findUnboundedObject } from '../lib/schema.js';
import { median } from './shapes.js';

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '200' } } });
const repeat = Number(values.repeat);
const SIZES = [10, 10_000, 100_000];

const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** The own schema's book with `views` more views in its catalog. */
function book(views: number): string {
  const file = join(dir, `book-${views}.sqlite`);
  const db = new Database(file);
  db.exec(readFileSync('fixtures/schema.sql', 'utf8'));
  db.exec(readFileSync('fixtures/bookings.sql', 'utf8'));
  db.close();
  addViews(file, views);
  return file;
}

/** Median microseconds of `repeat` calls of `work`. */
function time(work: () => unknown): number {
  const samples: number[] = [];
  for (let i = 0; i < repeat; i += 1) {
    const started = process.hrtime.bigint();
    work();
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return median(samples);
}

const checks: Array<[string, (db: Database.Database) => () => unknown]> = [
  ["catalogKind: what 'entries' is", (db) => () => catalogKind(db, 'entries')],
  [
    'findUnboundedObject (the guard asks it before the serving process searches)',
    (db) => () => findUnboundedObject(db),
  ],
  ['findSchemaProblems (the columns of the three tables)', (db) => () => findSchemaProblems(db)],
  [
    'the schema cookie (every read transaction)',
    (db) => {
      const cookie = db.prepare('PRAGMA schema_version').pluck();
      return () => cookie.get();
    },
  ],
  [
    "count of the catalog's rows (the guard's limit)",
    (db) => () => db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get(),
  ],
];

const results = new Map<number, { load: number; checks: number[] }>();
for (const size of SIZES) {
  const file = book(size);
  const db = new Database(file, { readonly: true });
  const started = process.hrtime.bigint();
  db.prepare('SELECT 1 FROM entries LIMIT 0').get();
  const load = Number(process.hrtime.bigint() - started) / 1000;
  results.set(size, { load, checks: checks.map(([, make]) => time(make(db))) });
  db.close();
}

const format = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(1)} µs`);
const cell = (size: number, i: number): number => results.get(size)?.checks[i] ?? Number.NaN;
console.log(`| check | ${SIZES.map((size) => `${size.toLocaleString('en')} objects`).join(' | ')} | ÷ 10 |`);
console.log(`|---|${SIZES.map(() => '---:').join('|')}|---:|`);
checks.forEach(([name], i) => {
  const last = SIZES[SIZES.length - 1] as number;
  const first = SIZES[0] as number;
  console.log(
    `| ${name} | ${SIZES.map((size) => format(cell(size, i))).join(' | ')} | ${(cell(last, i) / cell(first, i)).toFixed(1)} |`,
  );
});
console.log(
  `| loading the schema (the connection's first statement, once) | ${SIZES.map((size) => format(results.get(size)?.load ?? Number.NaN)).join(' | ')} | – |`,
);
