// The tuned search returns exactly what the one plain query returns: on the fixture, on a
// generated cash book with random queries, without indexes and through views.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../../lib/query.js';
import { type BookingRow, createBookingSearch, SQL } from '../../lib/search.js';
import { fixtureSql } from '../helpers.js';

// The oracle: docs/API.md's processing steps 4 to 6, written as plainly as SQL allows.
const PLAIN_COUNT = 'SELECT count(*) FROM entries WHERE date BETWEEN ? AND ? AND amount_cents BETWEEN ? AND ?';
const PLAIN_PAGE = `SELECT e.id, e.date, e.amount_cents, e.subject, c.name, p.name FROM entries e
  LEFT JOIN categories c ON c.id = e.category_id LEFT JOIN payment_methods p ON p.id = e.payment_method_id
  WHERE e.date BETWEEN ? AND ? AND e.amount_cents BETWEEN ? AND ? ORDER BY e.date DESC, e.id DESC LIMIT ?`;

function oracle(db: Database.Database) {
  const count = db.prepare<[string, string, number, number], number>(PLAIN_COUNT).pluck();
  const page = db.prepare<[string, string, number, number, number], BookingRow>(PLAIN_PAGE).raw();
  return (q: SearchQuery) => {
    const low = -q.betragCents - q.toleranzCents;
    const high = -q.betragCents + q.toleranzCents;
    return {
      count: count.get(q.von, q.bis, low, high) ?? 0,
      rows: q.limit === 0 ? [] : page.all(q.von, q.bis, low, high, q.limit),
    };
  };
}

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const START = Date.UTC(2023, 0, 1);

/** A cash book of `rows` bookings over three years, in random order, amounts skewed. */
function cashBook(rows: number, indexes = true): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = OFF'); // category 99 dangles, as in fixtures/bookings.sql
  const schema = fixtureSql('schema.sql');
  db.exec(indexes ? schema : schema.replace(/^CREATE INDEX.*$/gm, ''));
  db.exec(
    "INSERT INTO categories VALUES (1, 'Porto'), (2, 'Bürobedarf'); INSERT INTO payment_methods VALUES (1, 'Barkasse')",
  );
  const next = random(7);
  const insert = db.prepare(
    'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
  );
  const typical = [435, 1250, 95, 1999, -5000];
  db.transaction(() => {
    for (let i = 0; i < rows; i += 1) {
      const date = isoDate(START + Math.floor(next() * 1096) * 86_400_000);
      const roll = next();
      const cents =
        roll < 0.4
          ? (typical[Math.floor(next() * typical.length)] as number)
          : roll < 0.5
            ? -Math.floor(next() * 50_000)
            : Math.floor(Math.exp(next() * 11));
      const category = next() < 0.2 ? null : next() < 0.05 ? 99 : 1 + Math.floor(next() * 2);
      insert.run(date, cents, `Buchung ${i}`, category, next() < 0.1 ? null : 1);
    }
  })();
  return db;
}

function randomQueries(count: number, seed: number, amounts: number[]): SearchQuery[] {
  const next = random(seed);
  const queries: SearchQuery[] = [];
  const tolerances = [0, 0, 0, 1, 10, 100, 500, 5000, 100_000, 99_999_999_999_999];
  const lengths = [0, 1, 7, 31, 92, 365, 1096, 4000];
  for (let i = 0; i < count; i += 1) {
    const from = START - 200 * 86_400_000 + Math.floor(next() * 1400) * 86_400_000;
    const length = lengths[Math.floor(next() * lengths.length)] as number;
    const stored =
      next() < 0.8 ? (amounts[Math.floor(next() * amounts.length)] as number) : Math.floor(next() * 20_000) - 10_000;
    queries.push({
      von: isoDate(from),
      bis: isoDate(from + length * 86_400_000),
      betragCents: -stored,
      toleranzCents: tolerances[Math.floor(next() * tolerances.length)] as number,
      waehrung: 'EUR',
      limit: [0, 1, 3, 50, 1000][Math.floor(next() * 5)] as number,
    });
  }
  return queries;
}

function assertSameAsOracle(db: Database.Database, queries: SearchQuery[]): void {
  const search = createBookingSearch(db);
  const plain = oracle(db);
  for (const query of queries) assert.deepEqual(search(query), plain(query), JSON.stringify(query));
}

test('the search equals the plain query on the fixture', () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  db.exec(fixtureSql('bookings.sql'));
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  assertSameAsOracle(db, randomQueries(2000, 1, amounts));
});

test('the search equals the plain query on 3,000 random queries over a generated cash book', () => {
  const db = cashBook(20_000);
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  assertSameAsOracle(db, randomQueries(3000, 2, amounts));
});

test('every statement of every plan equals the plain query wherever it may be chosen', () => {
  const db = cashBook(5000);
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  const plain = oracle(db);
  const counts = ['dateCount', 'bandCount'] as const;
  const [firstDate, lastDate] = db
    .prepare<[], [string, string]>('SELECT min(date), max(date) FROM entries')
    .raw()
    .get() ?? ['', ''];
  const pages = ['datePage', 'bandPage'] as const;
  const [minAmount, maxAmount] = db
    .prepare<[], [number, number]>('SELECT min(amount_cents), max(amount_cents) FROM entries')
    .raw()
    .get() ?? [0, 0];
  for (const query of randomQueries(400, 3, amounts)) {
    const bounds = {
      von: query.von,
      bis: query.bis,
      low: -query.betragCents - query.toleranzCents,
      high: -query.betragCents + query.toleranzCents,
    };
    const limit = Math.max(1, query.limit);
    const expected = { count: plain(query).count, rows: plain({ ...query, limit }).rows };
    const statements = [...counts, ...(bounds.low === bounds.high ? (['exactCount'] as const) : [])];
    if (bounds.low <= minAmount && bounds.high >= maxAmount) statements.push('windowCount' as never);
    if (bounds.von <= firstDate && bounds.bis >= lastDate) statements.push('amountCount' as never);
    for (const name of statements) {
      assert.equal(db.prepare(SQL[name]).pluck().get(bounds), expected.count, `${name} ${JSON.stringify(bounds)}`);
    }
    for (const name of [...pages, ...(bounds.low === bounds.high ? (['exactPage'] as const) : [])]) {
      assert.deepEqual(
        db
          .prepare(SQL[name])
          .raw()
          .all({ ...bounds, limit }),
        expected.rows,
        `${name} ${JSON.stringify(bounds)}`,
      );
    }
  }
});

test('without any index the search is still exact', () => {
  const db = cashBook(3000, false);
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  assertSameAsOracle(db, randomQueries(300, 4, amounts));
});

test('an empty cash book finds nothing in every plan', () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  const search = createBookingSearch(db);
  for (const query of randomQueries(50, 5, [0, 1250])) assert.deepEqual(search(query), { count: 0, rows: [] });
});

test('amounts and dates that are no number or date (NULL, text, numbers, as a view may give) never match, in every plan', () => {
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
  assertSameAsOracle(db, queries);
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
