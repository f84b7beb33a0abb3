// The planner on files the bench's books are not: ids that are receipt numbers, amounts
// without an index, a view. A band search never takes a way whose every step reads the
// whole book, and its estimate of the window counts bookings, not ids.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type Database from 'better-sqlite3';
import { DEFAULT_TABLE_NAMES } from '../../lib/mapping.js';
import type { SearchQuery } from '../../lib/query.js';
import {
  chooseCount,
  choosePage,
  createBookingSearch,
  createRowEstimate,
  estimateSource,
  planFor,
  type Stats,
  seeksAmounts,
  toBounds,
} from '../../lib/search/index.js';
import { assertSameAsOracle, cashBook } from '../support/cash-book.js';

const RECEIPTS = 2_025_000_000;
const JUNE = { von: '2025-06-01', bis: '2025-06-30', betragCents: -1250, waehrung: 'EUR', limit: 50 };

test('without an index on the amounts a band is walked along the window, never skip-scanned', () => {
  // 20,000 bookings over 540 days, their ids receipt numbers.
  const stats: Stats = ['2025-01-01', '2026-06-24', RECEIPTS + 1, RECEIPTS + 20_000, -50_000, 50_000];
  for (const toleranzCents of [10, 100, 700]) {
    const plan = planFor(toBounds({ ...JUNE, toleranzCents }), { stats, rows: 20_000, seeksAmounts: false });
    assert.equal(plan.kind, 'band');
    if (plan.kind !== 'band') return;
    assert.equal(chooseCount(plan), 'dateWalk', `count, toleranz ${toleranzCents}`);
    assert.equal(choosePage(plan, 200, 50), 'dateWalk', `page, toleranz ${toleranzCents}`);
  }
  // With the index, a narrow band is still skip-scanned.
  const seeking = planFor(toBounds({ ...JUNE, toleranzCents: 10 }), { stats, rows: 20_000, seeksAmounts: true });
  assert.equal(seeking.kind === 'band' && chooseCount(seeking), 'skipScan');
});

/** A cash book whose ids are receipt numbers from 2,025,000,001 on. */
function receiptBook(rows: number, indexes: boolean): Database.Database {
  const db = cashBook(rows, indexes);
  db.prepare('UPDATE entries SET id = id + ?').run(RECEIPTS);
  return db;
}

test('the estimate counts the bookings, whatever their ids: a wide band in a month is walked along it', () => {
  const db = receiptBook(3000, true);
  const estimate = estimateSource(db).get();
  assert.equal(estimate?.rows, 3000);
  assert.equal(estimate?.seeksAmounts, true);
  const plan = planFor(toBounds({ ...JUNE, von: '2024-06-01', bis: '2024-06-30', toleranzCents: 700 }), estimate);
  assert.equal(plan.kind === 'band' && chooseCount(plan), 'dateWalk');
});

test('whether amounts are sought is asked of SQLite: a table, a view over a table, with and without an index', () => {
  const db = cashBook(10, false);
  assert.equal(seeksAmounts(db, DEFAULT_TABLE_NAMES), false);
  db.exec(`ALTER TABLE entries RENAME TO raw;
    CREATE VIEW entries AS SELECT 1700000000000 + id AS id, date, amount_cents, subject, category_id, payment_method_id FROM raw;`);
  assert.equal(seeksAmounts(db, DEFAULT_TABLE_NAMES), false);
  // An index that holds the amounts but does not begin with them is stepped through whole
  // (SQLite says SEARCH … USING COVERING INDEX, with no constraint): no seek. So is one
  // that is partial or on an expression of the amount.
  db.exec(`CREATE INDEX raw_date ON raw (date, id, amount_cents);
    CREATE INDEX raw_positive ON raw (amount_cents, date) WHERE amount_cents > 0;
    CREATE INDEX raw_shifted ON raw (amount_cents + 0);`);
  assert.equal(seeksAmounts(db, DEFAULT_TABLE_NAMES), false);
  db.exec('CREATE INDEX raw_amount ON raw (amount_cents)');
  assert.equal(seeksAmounts(db, DEFAULT_TABLE_NAMES), true);
  assert.equal(seeksAmounts(cashBook(10, true), DEFAULT_TABLE_NAMES), true);
});

test('the estimate asks again once the schema changed: an index added, or dropped', () => {
  const db = cashBook(10, false);
  const source = estimateSource(db);
  assert.equal(source.get()?.seeksAmounts, false);
  db.exec('CREATE INDEX amounts ON entries (amount_cents)');
  assert.equal(source.get()?.seeksAmounts, true);
  db.exec('DROP INDEX amounts');
  assert.equal(source.get()?.seeksAmounts, false);
});

/** The SQL each search prepares on `db` from now on. */
function preparedOn(db: Database.Database): string[] {
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  Object.assign(db, {
    prepare: (sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    },
  });
  return prepared;
}

test('a band search on receipt numbers without the indexes reads the window once: no skip-scan, the plain answer', async () => {
  const db = receiptBook(3000, false);
  const prepared = preparedOn(db);
  const search = createBookingSearch(db);
  const queries: SearchQuery[] = [1, 10, 100, 700].map((toleranzCents) => ({
    ...JUNE,
    von: '2024-06-01',
    bis: '2024-06-30',
    toleranzCents,
  }));
  for (const query of queries) search(query);
  assert.ok(prepared.length > 0);
  assert.deepEqual(
    prepared.filter((sql) => sql.includes('RECURSIVE band')),
    [],
  );
  await assertSameAsOracle(db, queries);

  // The control: with the indexes, a narrow band is skip-scanned, and the spy sees it.
  const indexed = cashBook(3000, true);
  const seen = preparedOn(indexed);
  createBookingSearch(indexed)({ ...JUNE, von: '2024-06-01', bis: '2024-06-30', toleranzCents: 1 });
  assert.ok(seen.some((sql) => sql.includes('RECURSIVE band')));
});

test('the row estimate counts once, scales with the span of the ids, and counts again when the span doubles or is none', () => {
  let counts = 0;
  let rows = 1000;
  const estimate = createRowEstimate(() => {
    counts += 1;
    return rows;
  });
  const stats = (firstId: unknown, lastId: unknown): Stats =>
    ['2025-01-01', '2025-12-31', firstId, lastId, 0, 1] as Stats;
  assert.equal(estimate(stats(1, 2000)), 1000);
  assert.equal(estimate(stats(1, 2200)), 1100, 'scaled: one booking per two ids');
  assert.equal(counts, 1);
  rows = 1500;
  assert.equal(estimate(stats(1, 2_000_000)), 1500, 'the ids of a new year');
  assert.equal(counts, 2);
  assert.equal(estimate(stats('a', 'b')), 1500);
  assert.equal(estimate(stats('a', 'b')), 1500);
  assert.equal(counts, 4, 'no span of numbers: counted each time');
});
