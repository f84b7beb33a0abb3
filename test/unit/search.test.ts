// The tuned search returns exactly what the one plain query returns: on the fixture, on a
// generated cash book with random queries, ANALYZEd or not, without indexes and through
// views.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { isCalendarDate, type SearchQuery } from '../../lib/query.js';
import { positional } from '../../lib/search/booking-search.js';
import {
  type Bounds,
  type CountKind,
  chooseCount,
  choosePage,
  createBookingSearch,
  estimateSource,
  FILTERS,
  isTable,
  type PageFilter,
  planFor,
  type SearchOutcome,
  SQL,
  toBounds,
} from '../../lib/search/index.js';
import { unreadable } from '../../lib/search/sql.js';
import { assertSameAsOracle, cashBook, randomQueries, WIDEST } from '../support/cash-book.js';
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
  const stats = estimateSource(db).get();
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
    // chooseCount(plan, false) is the choice over a view, where `everything` is not taken.
    const counts = new Set([
      chooseCount(plan),
      chooseCount(plan, false),
      ...(plan.kind === 'band' ? (['dateWalk', 'skipScan'] as const) : []),
    ]);
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
  assert.deepEqual(Object.keys(FILTERS).sort(), ['band', 'dateWalk', 'exact', 'skipScan', 'window', 'windowFrom']);
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

test("amounts and dates that are no number or date (NULL, text, numbers, as a view may give) never match, in every plan; one that sorts as a date is the search's failure", async () => {
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
        ['2026-01-01', '2026-12-30'],
        ['2026-03-02', '2026-03-04'],
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
    bis: '2026-12-30',
    betragCents: 0,
    toleranzCents: 99_999_999_999_999,
    waehrung: 'EUR',
    limit: 50,
  };
  assert.equal(createBookingSearch(db)(everything).count, 3, 'only the three numbers with dates in 2026');
  // The number 20260306, stored as text, sorts after every day of 2026 and before 2027's:
  // each search whose window (into 2027 or later) and band count it fails (a page that
  // shows it fails as it is written); any other is the plain query's answer.
  for (const query of queries) {
    const widest = { ...query, von: '0000-01-01', bis: '9999-12-31' };
    const plain = oracle(db)(widest);
    if (plain.rows.some(([id]) => id === 7)) {
      for (const limit of [0, 1]) {
        assert.throws(
          () => createBookingSearch(db)({ ...widest, limit }),
          /^RangeError: the booking with id 7 has a date that is not a day of the calendar as YYYY-MM-DD$/,
        );
      }
    } else await assertSameAsOracle(db, [widest]);
  }
});

test("SQLite's date() gives back exactly the days of the calendar that isCalendarDate takes, in the search's SQL", () => {
  const db = new Database(':memory:');
  const sql = db
    .prepare<[unknown], number>(`SELECT NOT (${unreadable('e')}) FROM (SELECT 0 AS amount_cents, ? AS date) AS e`)
    .pluck();
  const texts: string[] = [];
  for (const year of ['0000', '0004', '0100', '1900', '2000', '2024', '2026', '9999', '20x6'])
    for (let month = 0; month <= 13; month += 1)
      for (let day = 0; day <= 32; day += 1) {
        const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
        texts.push(
          text,
          `${text}x`,
          ` ${text}`,
          `${text} `,
          `${text}T00:00`,
          text.slice(0, 9),
          text.replaceAll('-', '/'),
        );
      }
  texts.push('2026-3-01', '+026-03-01', '2026-03-1 ', '', 'now');
  for (const text of texts) assert.equal(sql.get(text) === 1, isCalendarDate(text), JSON.stringify(text));
  for (const value of [null, 20260306, 2461101.5, Buffer.from('2026-03-06')])
    assert.equal(sql.get(value), 0, String(value));
});

/** The count the search runs for `query` on `db`, and whether SQLite counts it as a whole b-tree (opcode Count). */
function countOf(db: Database.Database, query: SearchQuery): { kind: CountKind; wholeBtree: boolean } {
  const plan = planFor(toBounds(query), estimateSource(db).get());
  assert.notEqual(plan.kind, 'empty');
  const kind = chooseCount(plan as Exclude<typeof plan, { kind: 'empty' }>, isTable(db, 'entries'));
  const opcodes = db
    .prepare<[Bounds], { opcode: string }>(`EXPLAIN ${SQL.count(kind)}`)
    .all(toBounds(query))
    .map(({ opcode }) => opcode);
  return { kind, wholeBtree: opcodes.includes('Count') };
}

test('a search over every date and every amount counts the whole b-tree of a table, its bookings unread, a window through the last date is open at the top, a view is counted as before', () => {
  const db = cashBook(2000);
  assert.deepEqual(countOf(db, WIDEST), { kind: 'everything', wholeBtree: true });
  // Unread, a booking no search can answer is counted there: the one count that does.
  db.exec(`INSERT INTO entries (date, amount_cents, subject) VALUES ('2025-02-30', 100, 'x')`);
  const everything = createBookingSearch(db)({ ...WIDEST, limit: 0 }).count;
  assert.equal(everything, db.prepare('SELECT count(*) FROM entries').pluck().get() as number);
  assert.throws(
    () => createBookingSearch(db)({ ...WIDEST, von: '2025-01-01', limit: 0 }),
    /not a day of the calendar as YYYY-MM-DD/,
  );
  db.exec(`DELETE FROM entries WHERE date = '2025-02-30'`);
  // From a day inside the book to past its last date: one bound, no comparison per entry.
  const from = { ...WIDEST, von: '2024-06-01' };
  assert.equal(countOf(db, from).kind, 'windowFrom');
  assert.match(
    db
      .prepare<[Bounds], { detail: string }>(`EXPLAIN QUERY PLAN ${SQL.count('windowFrom')}`)
      .all(toBounds(from))
      .map(({ detail }) => detail)
      .join(),
    /\(date>\?\)/,
  );
  // A window that ends inside the book keeps both bounds.
  assert.equal(countOf(db, { ...from, bis: '2024-12-31' }).kind, 'window');
  // A view has no b-tree of its own: counting it whole, and its NULLs, would be extra passes.
  db.exec('ALTER TABLE entries RENAME TO kasse; CREATE VIEW entries AS SELECT * FROM kasse');
  assert.equal(isTable(db, 'entries'), false);
  assert.equal(isTable(db, 'kasse'), true);
  assert.deepEqual(countOf(db, WIDEST), { kind: 'windowFrom', wholeBtree: false });
});

test('counted open at the top or within both bounds, NULL dates and amounts still never match, with indexes, without and through a view', async () => {
  for (const setup of ['indexes', 'no indexes', 'view']) {
    const db = new Database(':memory:');
    db.exec(`
      CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT);
      CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT);
      CREATE TABLE kasse (id INTEGER PRIMARY KEY, date TEXT, amount_cents INTEGER, subject TEXT, category_id INTEGER, payment_method_id INTEGER);
      INSERT INTO kasse (date, amount_cents, subject) VALUES
        ('2026-03-01', 1250, 'a'), ('2026-03-02', NULL, 'b'), (NULL, 1250, 'c'), (NULL, NULL, 'd'),
        ('2026-03-04', -500, 'e'), ('2026-03-05', 435, 'f'), ('2026-03-05', 0, 'g');`);
    if (setup === 'indexes') {
      db.exec(`CREATE INDEX kasse_amount_date ON kasse (amount_cents, date);
        CREATE INDEX kasse_date_id_amount ON kasse (date, id, amount_cents);`);
    }
    db.exec(setup === 'view' ? 'CREATE VIEW entries AS SELECT * FROM kasse' : 'ALTER TABLE kasse RENAME TO entries');
    const queries = [
      WIDEST,
      { ...WIDEST, von: '2026-03-02' },
      { ...WIDEST, von: '2026-03-05', bis: '2026-03-05' },
      { ...WIDEST, bis: '2026-03-04' },
      { ...WIDEST, limit: 0 },
    ];
    await assertSameAsOracle(db, queries);
    assert.equal(createBookingSearch(db)(WIDEST).count, 4, setup);
  }
});

test('amounts that JavaScript would read as numbers but SQLite sorts above every number (text, blobs) never match the widest search', async () => {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE entries (id INTEGER PRIMARY KEY, date TEXT, amount_cents, subject TEXT, category_id INTEGER, payment_method_id INTEGER);
    INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-01', 1250, 'a'), ('2026-03-02', '5', 'b'), ('2026-03-03', x'35', 'c');`);
  const search = createBookingSearch(db);
  assert.equal(search(WIDEST).count, 1);
  await assertSameAsOracle(db, [WIDEST, { ...WIDEST, von: '2026-03-02' }]);
});

test('a category that a view gives twice does not make a skip-scan page longer than limit: the page equals the plain query', async () => {
  const db = cashBook(5000);
  // Category 1 twice: the join gives each of its bookings twice, and the plain query counts
  // both rows toward `limit`.
  db.exec(`ALTER TABLE categories RENAME TO category_table;
    CREATE VIEW categories AS SELECT id, name FROM category_table UNION ALL SELECT 1, 'Porto doppelt';`);
  const stats = estimateSource(db).get();
  const plain = oracle(db);
  const page = db.prepare<[Bounds & { limit: number }], unknown[]>(SQL.page('skipScan')).raw();
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  // Searches with a tolerance whose page the search reads by skip-scan, and that have more
  // matches than `limit`.
  const skipScans = randomQueries(2000, 6, amounts)
    .map((query) => ({ ...query, limit: Math.max(1, query.limit) }))
    .filter((query) => {
      const bounds = toBounds(query);
      const plan = planFor(bounds, stats);
      if (plan.kind !== 'band') return false;
      const total = plain(query).count;
      return total > query.limit && choosePage(plan, total, query.limit) === 'skipScan';
    });
  assert.ok(skipScans.length >= 5, `${skipScans.length} skip-scan searches`);
  for (const query of skipScans) {
    const rows = page.all({ ...toBounds(query), limit: query.limit });
    assert.ok(rows.length <= query.limit, `${rows.length} rows for limit ${query.limit}: ${JSON.stringify(query)}`);
    assert.deepEqual(rows, plain(query).rows, JSON.stringify(query));
  }
  await assertSameAsOracle(db, skipScans);
});

test('several searches asked as one are read in one read transaction, their rows one after the other', async () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  db.exec(fixtureSql('bookings.sql'));
  let snapshots = 0;
  const search = createBookingSearch(db, undefined, undefined, () => {
    snapshots += 1;
  });
  const march = { von: '2026-03-01', bis: '2026-03-31', toleranzCents: 0, waehrung: 'EUR', limit: 50 };
  const queries: SearchQuery[] = [
    { ...march, betragCents: -1250 },
    { ...march, betragCents: -435 },
  ];
  let outcome: SearchOutcome | undefined;
  search.answer(queries, (answered) => {
    outcome = answered;
  });
  const alone = queries.map((query) => search(query));
  assert.equal(snapshots, 1 + queries.length, 'one transaction for the two, then one for each alone');
  const snapshot = outcome?.ok === true ? outcome.result.snapshot : undefined;
  assert.deepEqual(outcome, {
    ok: true,
    result: {
      count: (alone[0]?.count ?? 0) + (alone[1]?.count ?? 0),
      rows: [...(alone[0]?.rows ?? []), ...(alone[1]?.rows ?? [])],
      snapshot,
    },
  });
  // The snapshot names the file's version: the same until a change is committed (here by
  // this connection itself), and never that of another search's connection.
  const snapshotOf = (over: typeof search): Promise<string | undefined> =>
    new Promise((resolve) => over.queue(queries, (read) => resolve(read.ok ? read.result.snapshot : undefined)));
  assert.equal(typeof snapshot, 'string');
  assert.equal(await snapshotOf(search), snapshot);
  db.exec("INSERT INTO entries (id, date, amount_cents, subject) VALUES (999, '2026-03-02', 1250, 'neu')");
  const changed = await snapshotOf(search);
  assert.notEqual(changed, snapshot);
  assert.notEqual(await snapshotOf(createBookingSearch(db)), changed);
});

test('the statements are bound by position: each name where it stands, twice where used twice, quoted text left alone', () => {
  assert.deepEqual(positional(SQL.page('skipScan')).names, ['low', 'high', 'high', 'von', 'after', 'limit', 'limit']);
  assert.deepEqual(positional(SQL.count('exact')), {
    text: SQL.count('exact').replaceAll(/:[a-z]+/g, '?'),
    names: ['low', 'von', 'after'],
  });
  assert.deepEqual(positional(`SELECT "a:b", ':c''s' FROM "x"":y" WHERE v = +:low`), {
    text: `SELECT "a:b", ':c''s' FROM "x"":y" WHERE v = +?`,
    names: ['low'],
  });
});

test("the typical search's count reads only the index of amount and date: no filter term that a search does not give", () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  const plan = db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${positional(SQL.count('exact')).text}`)
    .all(0, 0, 0)
    .map((row) => row.detail);
  assert.equal(plan.length, 1, plan.join('\n'));
  assert.match(plan[0] ?? '', /^SEARCH entries USING COVERING INDEX entries_amount_date /);
});
