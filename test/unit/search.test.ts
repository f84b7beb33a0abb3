// The tuned search returns exactly what the one plain query returns: on the fixture, on a
// generated cash book with random queries, ANALYZEd or not, without indexes and through
// views.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../../lib/query.js';
import {
  chooseCount,
  choosePage,
  createBookingSearch,
  FILTERS,
  type PageFilter,
  planFor,
  SQL,
  type Stats,
  toBounds,
} from '../../lib/search.js';
import { assertSameAsOracle, cashBook, randomQueries } from '../support/cash-book.js';
import { fixtureSql, tempDir } from '../support/helpers.js';
import { plainSearch as oracle } from '../support/plain-query.js';

test('the search equals the plain query on the fixture', async () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  db.exec(fixtureSql('bookings.sql'));
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  await assertSameAsOracle(db, randomQueries(2000, 1, amounts));
});

test('names on a read-only connection are the names the plain join gives: odd ids, a renamed name, duplicates in a view', async (t) => {
  // A read-only connection, as the CLI's; another connection writes.
  const file = join(tempDir(t), 'names.sqlite');
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec(`
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT);
    INSERT INTO categories VALUES (1, 'Porto'), (2, 'Bürobedarf'), (3, NULL), (4, 42);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT);
    INSERT INTO payment_methods VALUES (1, 'Barkasse'), (2, 'Portokasse');
    CREATE TABLE entries (id INTEGER PRIMARY KEY, date TEXT, amount_cents INTEGER, subject TEXT, category_id, payment_method_id);
    CREATE INDEX entries_amount_date ON entries (amount_cents, date);`);
  // 1250: integer ids, NULL and a dangling 99; 990: ids that SQLite compares by affinity.
  const plainIds = [1, 2, 3, 4, null, 99, 1.0];
  const oddIds = ['1', ' 2', '3.0', 4.5, 2];
  const blobIds = [Buffer.from('1'), 1];
  const insert = writer.prepare(
    'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
  );
  for (const [cents, ids] of [
    [1250, plainIds],
    [990, oddIds],
    [880, blobIds],
  ] as const) {
    for (const [i, category] of ids.entries()) {
      for (const [j, method] of ids.entries()) {
        insert.run(`2026-03-${String(1 + ((i + j) % 28)).padStart(2, '0')}`, cents, `${i}/${j}`, category, method);
      }
    }
  }
  const db = new Database(file, { readonly: true });
  t.after(() => db.close());
  const query = {
    von: '2026-03-01',
    bis: '2026-03-31',
    betragCents: -1250,
    toleranzCents: 0,
    waehrung: 'EUR',
    limit: 1000,
  };
  const queries = [
    query,
    { ...query, betragCents: -990 },
    { ...query, betragCents: -880 },
    { ...query, toleranzCents: 300 },
  ];
  await assertSameAsOracle(db, queries);
  const search = createBookingSearch(db);
  assert.ok(search(query).rows.some((row) => row[4] === 'Porto' && row[5] === 'Barkasse'));
  assert.ok(
    search(queries[1] as SearchQuery).rows.some((row) => row[4] === 'Porto'),
    "'1' finds category 1",
  );
  // A renamed payment method shows at once.
  writer.exec("UPDATE payment_methods SET name = 'Handkasse' WHERE id = 1");
  assert.ok(
    search(query).rows.some((row) => row[5] === 'Handkasse'),
    'the new name, not an earlier one',
  );
  await assertSameAsOracle(db, queries);
  // Duplicate ids behind a view: the join gives a booking twice, and so must the search.
  writer.exec(`ALTER TABLE categories RENAME TO category_table;
    CREATE VIEW categories AS SELECT id, name FROM category_table UNION ALL SELECT 1, 'Porto doppelt';`);
  assert.equal(db.prepare('SELECT count(*) FROM categories WHERE id = 1').pluck().get(), 2);
  await assertSameAsOracle(db, queries);
  assert.ok(search(query).rows.some((row) => row[4] === 'Porto doppelt'));
});

test('every statement of every plan equals the plain query wherever it may be chosen', () => {
  for (const analyzed of [false, true]) {
    const db = cashBook(5000);
    if (analyzed) db.exec('ANALYZE');
    assertEveryStatement(
      db,
      randomQueries(400, 3, db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all()),
    );
  }
});

/** Each statement the search may choose for a query, run alone, against the oracle. */
function assertEveryStatement(db: Database.Database, queries: SearchQuery[]): void {
  const plain = oracle(db);
  const stats = db.prepare<[], Stats>(SQL.stats).raw().get();
  for (const query of queries) {
    const bounds = toBounds(query);
    const limit = Math.max(1, query.limit);
    const expected = { count: plain(query).count, rows: plain({ ...query, limit }).rows };
    const plan = planFor(bounds, stats);
    if (plan.kind === 'empty') {
      assert.equal(expected.count, 0);
      continue;
    }
    // The band's two ways are both exact whatever the estimate says; the others only
    // where chooseCount may take them.
    const counts = new Set([chooseCount(plan), ...(plan.kind === 'band' ? (['dateWalk', 'skipScan'] as const) : [])]);
    for (const filter of counts) {
      assert.equal(
        db.prepare(SQL.count(filter)).pluck().get(bounds),
        expected.count,
        `${filter} ${JSON.stringify(bounds)}`,
      );
    }
    const pages: PageFilter[] = plan.kind === 'band' ? ['dateWalk', 'skipScan'] : [choosePage(plan, 1, limit)];
    for (const filter of pages) {
      assert.deepEqual(
        db
          .prepare(SQL.page(filter))
          .raw()
          .all({ ...bounds, limit }),
        expected.rows,
        `${filter} ${JSON.stringify(bounds)}`,
      );
    }
  }
  assert.deepEqual(Object.keys(FILTERS).sort(), ['band', 'dateWalk', 'exact', 'skipScan', 'window']);
}

test('without any index the search is still exact', async () => {
  const db = cashBook(3000, false);
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  await assertSameAsOracle(db, randomQueries(300, 4, amounts));
});

test('an empty cash book finds nothing in every plan', () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  const search = createBookingSearch(db);
  for (const query of randomQueries(50, 5, [0, 1250])) assert.deepEqual(search(query), { count: 0, rows: [] });
});

test('amounts and dates that are no number or date (NULL, text, numbers, as a view may give) never match, in every plan', async () => {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE entries (id INTEGER PRIMARY KEY, date TEXT, amount_cents, subject TEXT, category_id INTEGER, payment_method_id INTEGER);
    CREATE INDEX entries_amount_date ON entries (amount_cents, date);
    CREATE INDEX entries_date_id_amount ON entries (date, id, amount_cents);
    INSERT INTO entries (date, amount_cents, subject) VALUES
      ('2026-03-01', 1250, 'a'), ('2026-03-02', NULL, 'b'), ('2026-03-03', 'zwölf', 'c'), ('2026-03-04', -500, 'd'), ('2026-03-05', 435, 'e'),
      (NULL, 1250, 'f'), (20260306, 1250, 'g');`);
  const queries = [0, 1, 100, 2000, 99_999_999_999_999].flatMap((toleranzCents) =>
    [-1250, 500, 0].flatMap((betragCents) =>
      [
        ['2026-01-01', '2026-12-31'],
        ['2026-03-02', '2026-03-04'],
        ['0000-01-01', '9999-12-31'],
      ].map(([von, bis]) => ({
        von: von as string,
        bis: bis as string,
        betragCents,
        toleranzCents,
        waehrung: 'EUR',
        limit: 50,
      })),
    ),
  );
  await assertSameAsOracle(db, queries);
  const everything = {
    von: '2026-01-01',
    bis: '2026-12-31',
    betragCents: 0,
    toleranzCents: 99_999_999_999_999,
    waehrung: 'EUR',
    limit: 50,
  };
  assert.equal(createBookingSearch(db)(everything).count, 3, 'only the three numbers with dates in 2026');
});
