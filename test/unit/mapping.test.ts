// The mapping framework: table names of the own schema, the choice of an application, the
// guard on every answered row, and the planner's statistics read once per change of the file.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { fractionCents } from '../../lib/apps/fraction.js';
import { hexPrefixId, hexPrefixIdOf } from '../../lib/apps/ids.js';
import { createHandler } from '../../lib/index.js';
import { ownSchema } from '../../lib/mapping.js';
import { checkMeaning, judge } from '../../lib/meaning.js';
import { createVersionCache, type Stats } from '../../lib/search/index.js';
import {
  AUTH,
  assertReply,
  CREDENTIALS,
  EXISTING_APP_MARCH_COFFEE,
  fixtureSql,
  get,
  type Reply,
  request,
  serve,
  tempDir,
} from '../support/helpers.js';

test('the planner statistics are read once per data_version, again after another connection commits or this one writes', (t) => {
  const file = join(tempDir(t), 'stats.sqlite');
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec(fixtureSql('schema.sql'));
  const reader = new Database(file, { readonly: true });
  t.after(() => reader.close());
  let reads = 0;
  const source = {
    get: (): Stats => {
      reads += 1;
      return [null, null, null, null, null, null];
    },
  };
  const stats = createVersionCache(reader, source);
  for (let i = 0; i < 5; i += 1) stats();
  assert.equal(reads, 1, 'five searches, one read');
  writer.prepare("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-14', 1250)").run();
  stats();
  stats();
  assert.equal(reads, 2, "another connection's commit is seen");
  const own = createVersionCache(writer, source);
  own();
  own();
  assert.equal(reads, 3);
  writer.prepare("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-15', 1250)").run();
  own();
  assert.equal(reads, 4, "this connection's own write is seen (data_version alone would miss it)");
});

test('a band search on a book that was empty when first searched finds the booking written since', (t) => {
  const file = join(tempDir(t), 'empty-first.sqlite');
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec(fixtureSql('schema.sql'));
  const run = async (db: Database.Database) => {
    const origin = await serve(t, createHandler(db, CREDENTIALS));
    return () => get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12&toleranz=1`);
  };
  return (async () => {
    const reader = new Database(file, { readonly: true });
    t.after(() => reader.close());
    const search = await run(reader);
    assertReply(await search(), 200, { anzahl: 0, buchungen: [] });
    writer.prepare("INSERT INTO entries (id, date, amount_cents) VALUES (1, '2026-03-14', 1250)").run();
    assertReply(await search(), 200, {
      anzahl: 1,
      buchungen: [{ id: 1, datum: '2026-03-14', betrag: -12.5, zweck: '' }],
    });
  })();
});

test('the own schema under other names: a file whose entries table is taken by the application is served', async (t) => {
  const db = new Database(':memory:');
  t.after(() => db.close());
  db.exec(`
    CREATE TABLE entries (guid TEXT PRIMARY KEY, invoice TEXT);  -- GnuCash's business table of that name
    ${fixtureSql('schema.sql')
      .replace('CREATE TABLE entries', 'CREATE TABLE bss_entries')
      .replace('CREATE TABLE categories', 'CREATE TABLE bss_categories')
      .replace(/ON entries/g, 'ON bss_entries')
      .replace(/REFERENCES categories/g, 'REFERENCES bss_categories')
      .replace(/CREATE INDEX entries_/g, 'CREATE INDEX bss_entries_')}
    INSERT INTO bss_categories VALUES (1, 'Porto');
    INSERT INTO payment_methods VALUES (1, 'Barkasse');
    INSERT INTO bss_entries VALUES (7, '2026-03-14', 1250, 'Briefmarken', 1, 1);`);
  assert.throws(() => createHandler(db, CREDENTIALS), /'entries' is missing columns 'id', 'date'/);
  const origin = await serve(
    t,
    createHandler(db, CREDENTIALS, { tables: { entries: 'bss_entries', categories: 'bss_categories' } }),
  );
  assertReply(await get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5`), 200, {
    anzahl: 1,
    buchungen: [
      { id: 7, datum: '2026-03-14', betrag: -12.5, zweck: 'Briefmarken', kategorie: 'Porto', konto: 'Barkasse' },
    ],
  });
  assertReply(await get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-10&toleranz=5`), 200, {
    anzahl: 1,
    buchungen: [
      { id: 7, datum: '2026-03-14', betrag: -12.5, zweck: 'Briefmarken', kategorie: 'Porto', konto: 'Barkasse' },
    ],
  });
});

test('options.app and options.tables are checked when the handler is created, naming the option', () => {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  assert.throws(() => createHandler(db, CREDENTIALS, { app: 'quicken' }), {
    name: 'TypeError',
    message: /^options\.app must be one of "own", "actual", "mmex"/,
  });
  assert.throws(() => createHandler(db, CREDENTIALS, { tables: { entries: 'x; DROP TABLE y' } }), {
    name: 'TypeError',
    message: 'options.tables.entries must be an SQL name such as "kasse" or "temp.kasse"',
  });
  assert.throws(() => createHandler(db, CREDENTIALS, { tables: { bookings: 'x' } as never }), {
    name: 'TypeError',
    message: 'options.tables may name entries, categories and paymentMethods, not "bookings"',
  });
  assert.throws(() => createHandler(db, CREDENTIALS, { app: 'actual', tables: { entries: 'x' } }), {
    name: 'TypeError',
    message: 'options.tables is for app "own"; app "actual" reads its own tables',
  });
  assert.throws(
    () => createHandler(db, CREDENTIALS, { app: 'actual' }),
    /^Error: db does not fit the tables of Actual: /,
  );
});

/**
 * A book whose entries are a view over `raw (n, d, a)` holding `rows` (SQL values), served;
 * `causes` hears the handler's errors. A row written to `raw` later meets what the search
 * does with a row the start did not judge.
 */
async function servedRawView(
  t: TestContext,
  rows: string,
): Promise<{ db: Database.Database; origin: string; causes: unknown[] }> {
  const db = new Database(':memory:');
  t.after(() => db.close());
  db.exec(`CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE raw (n INTEGER PRIMARY KEY, d, a);
    INSERT INTO raw VALUES ${rows};
    CREATE VIEW entries AS SELECT n AS id, d AS date, a AS amount_cents, '' AS subject,
      NULL AS category_id, NULL AS payment_method_id FROM raw;`);
  const causes: unknown[] = [];
  const origin = await serve(t, createHandler(db, CREDENTIALS, { onError: (error) => causes.push(error) }));
  return { db, origin, causes };
}

for (const [what, date, amount, reason] of [
  ['a date-time', "'2026-03-14T00:00:00'", '1250', /^RangeError: the booking with id 1 has a date that is not a day/],
  ['a date that is not one', "'2026-13-14'", '1250', /^RangeError: the booking with id 1 has a date that is not a day/],
  [
    'a day the calendar lacks',
    "'2026-02-30'",
    '1250',
    /^RangeError: the booking with id 1 has a date that is not a day/,
  ],
  ['REAL euros', "'2026-03-14'", '12.5', /^RangeError: the booking with id 1 has an amount that is not whole cents$/],
] as const) {
  test(`a row with ${what} written after the start is answered 500 with the reason in the log, never 200`, async (t) => {
    const { db, origin, causes } = await servedRawView(t, "(2, '2026-05-01', 100), (3, '2026-05-02', 200)");
    // The file was judged at the start (createHandler refuses such a row then, as check
    // does); a row the application writes later meets the guard of every answered row.
    db.exec(`INSERT INTO raw VALUES (1, ${date}, ${amount})`);
    const reply = await request(
      `${origin}/api/v1/buchungen?von=2026-01-01&bis=2027-01-01&betrag=-12.5&toleranz=1000000`,
      { headers: { authorization: AUTH } },
    );
    assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
    assert.match(String(causes[0]), reason);
  });
}

test('a booking whose text is a blob in the file (bytes that need not be UTF-8) is answered 500 with the reason in the log, never as something else', async (t) => {
  const db = new Database(':memory:');
  t.after(() => db.close());
  db.exec(`CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE raw (n INTEGER PRIMARY KEY, s, k);
    INSERT INTO categories VALUES (1, 'Porto');
    INSERT INTO raw VALUES (2, 'Marken', 1), (3, 42, 1);
    CREATE VIEW entries AS SELECT n AS id, '2026-05-0' || n AS date, 1250 AS amount_cents, s AS subject,
      k AS category_id, NULL AS payment_method_id FROM raw;`);
  const causes: unknown[] = [];
  const origin = await serve(t, createHandler(db, CREDENTIALS, { onError: (error) => causes.push(error) }));
  const search = (day: string): Promise<Reply> =>
    request(`${origin}/api/v1/buchungen?von=2026-05-0${day}&bis=2026-05-0${day}&betrag=-12.5`, {
      headers: { authorization: AUTH },
    });
  // A number is written as its digits.
  assert.match((await search('3')).body, /"zweck":"42","kategorie":"Porto"/);
  db.exec(`INSERT INTO raw VALUES (4, X'FF00', 1)`);
  assertReply(await search('4'), 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
  assert.match(String(causes[0]), /booking 4: its zweck is a blob of 2 bytes, not text/);
  db.exec(`UPDATE categories SET name = X'FFFE' WHERE id = 1`);
  assertReply(await search('2'), 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
  assert.match(String(causes[1]), /booking 2: its kategorie is a blob of 2 bytes, not text/);
});

test("a file whose booking text is a blob among the judged bookings is refused as check refuses it, not served to answer 500: the zweck, a category's or an account's name", () => {
  for (const [spoil, field] of [
    [`UPDATE entries SET subject = CAST('Blobtext' AS BLOB) WHERE id = 3`, 'zweck'],
    [`UPDATE categories SET name = X'FFFE' WHERE id = 1`, 'kategorie'],
    [`UPDATE payment_methods SET name = CAST('Kasse' AS BLOB) WHERE id = 1`, 'konto'],
  ] as const) {
    const db = new Database(':memory:');
    db.exec(fixtureSql('schema.sql'));
    db.exec(fixtureSql('bookings.sql'));
    assert.deepEqual(checkMeaning(db, ownSchema()).problems, []);
    db.exec(spoil);
    const { problems, withoutValues } = checkMeaning(db, ownSchema());
    assert.match(problems.join('\n'), new RegExp(`^booking \\d+'s ${field} is a blob, not text: `, 'm'));
    assert.match(withoutValues.join('\n'), new RegExp(`^a booking's ${field} is a blob, not text: `, 'm'));
    assert.throws(() => createHandler(db, CREDENTIALS), new RegExp(`a booking's ${field} is a blob, not text`));
    db.close();
  }
});

test('a reconciliation answers the lines that do not find a booking it cannot answer; a line that finds it, as a candidate or a part, is the 500, as its search is', async (t) => {
  const { db, origin, causes } = await servedRawView(t, "(1, '2026-05-01', 900), (2, '2026-05-02', 1250)");
  const reconcile = (lines: object[]): Promise<Reply> =>
    request(`${origin}/api/v1/abgleich`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ zeilen: lines }),
    });
  // Written after the start: 12.5 cents, within the window of both lines.
  db.exec(`INSERT INTO raw VALUES (3, '2026-05-02', 12.5)`);
  const nine = { datum: '2026-05-02', betrag: '-9.00' };
  const reply = await reconcile([nine, { datum: '2026-05-02', betrag: '-12.50' }]);
  assert.equal(reply.status, 200, reply.body);
  assert.match(reply.body, /^\{"zeilen":\[\{"ref":"1","buchungen":\[\{"id":1,/);
  assert.match(reply.body, /\{"ref":"2","buchungen":\[\{"id":2,/);
  assertReply(await reconcile([nine, { datum: '2026-05-02', betrag: '-0.12', toleranz: '0.01' }]), 500, {
    fehler: 'Interner Fehler bei der Buchungssuche.',
    code: 'search_failed',
  });
  // Named as the search's count names it, by its id alone: one wording of the booking in the log, however found.
  assert.equal(String(causes[0]), 'RangeError: the booking with id 3 has an amount that is not whole cents');
  // A line that weighs it as a part is the 500 too: with 9.00 it makes 9.125, within 9.13 ± 0.01, and
  // "no parts" would be as wrong as parts without it.
  const parts = { datum: '2026-05-02', betrag: '-9.13', toleranz: '0.01', teile: 2 };
  assertReply(await reconcile([parts]), 500, {
    fehler: 'Interner Fehler bei der Buchungssuche.',
    code: 'search_failed',
  });
  assert.equal(causes.length, 2);
  // One that does not weigh parts is answered: its own booking found, or the booking of the other sign.
  const found = await reconcile([{ ...nine, teile: 2 }]);
  assert.equal(found.status, 200, found.body);
  assert.match(found.body, /^\{"zeilen":\[\{"ref":"1","buchungen":\[\{"id":1,/);
  const income = await reconcile([{ ...parts, betrag: '9.13' }]);
  assert.equal(income.status, 200, income.body);
  assert.match(income.body, /^\{"zeilen":\[\{"ref":"1","buchungen":\[\],/);
});

test("createHandler refuses a file check refuses, with check's sentence less its bookings' values: a mapping wrong for every row, and one odd row among good ones", () => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE raw (n INTEGER PRIMARY KEY, d, a);
    INSERT INTO raw VALUES (1, 20260314, 1250), (2, 20260315, 990), (3, 20260316, 435);
    CREATE VIEW entries AS SELECT n AS id, d AS date, a AS amount_cents, '' AS subject,
      NULL AS category_id, NULL AS payment_method_id FROM raw;`);
  assert.throws(() => createHandler(db, CREDENTIALS), {
    message:
      /^db cannot be served exactly: dates are numbers, not 'YYYY-MM-DD' text: .* printf\('%04d-%02d-%02d', d \/ 10000, d \/ 100 % 100, d % 100\)\. booking-search-server check names examples from the bookings\.$/,
  });
  db.exec("UPDATE raw SET d = '2026-03-' || (13 + n), a = a / 100.0");
  assert.throws(() => createHandler(db, CREDENTIALS), /some amounts are REAL numbers, not whole cents/);
  db.exec('UPDATE raw SET a = CAST(a * 100 AS INTEGER) WHERE n > 1');
  const { problems, withoutValues } = checkMeaning(db, ownSchema());
  assert.match(String(problems[0]), /^amounts are REAL numbers such as 12\.5, not whole cents/);
  assert.deepEqual(withoutValues, [
    String(problems[0]).replace(' such as 12.5', '').replace(/^/, 'some '),
    'booking-search-server check names examples from the bookings.',
  ]);
  assert.throws(() => createHandler(db, CREDENTIALS), {
    message: `db cannot be served exactly: ${withoutValues.join(' ')}`,
  });
  db.exec('UPDATE raw SET a = CAST(a * 100 AS INTEGER) WHERE n = 1');
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS));
  // A day the calendar lacks would be answered as it is, a `datum` that is no date.
  db.exec("UPDATE raw SET d = '2026-02-30' WHERE n = 2");
  assert.match(
    String(checkMeaning(db, ownSchema()).problems[0]),
    /^1 of 3 bookings has a date that is no day of the calendar \(the booking \(id 2\) has the date '2026-02-30', not a day of the calendar as YYYY-MM-DD\): /,
  );
  assert.throws(() => createHandler(db, CREDENTIALS), {
    message:
      'db cannot be served exactly: 1 of 3 bookings has a date that is no day of the calendar: a search would answer a day that does not exist. Correct those bookings. booking-search-server check names examples from the bookings.',
  });
});

test('judge: integer dates, date-times, REAL amounts, text ids and duplicates are each named with the fix', () => {
  const ok: Array<[unknown, unknown, unknown]> = [[1, '2026-03-14', 1250]];
  assert.deepEqual(judge(ok).problems, []);
  const problems = (rows: Array<[unknown, unknown, unknown]>) => judge(rows).problems.join('\n');
  assert.match(problems([[1, 20260314, 1250]]), /^dates are numbers such as 20260314, not 'YYYY-MM-DD' text/);
  assert.match(problems([[1, '2026-03-14 10:59:00', 1250]]), /^dates carry a time, such as '2026-03-14 10:59:00'/);
  assert.match(
    problems([[1, '2026-03-14', -434.99999999999994]]),
    /^amounts are REAL numbers such as -434\.99999999999994/,
  );
  assert.match(problems([[1, '2026-03-14', 1250.5]]), /not whole cents/);
  // An INTEGER beyond 2^53 − 1, as better-sqlite3 reads it: whole, but not exact any more.
  assert.match(
    problems([[1, '2026-03-14', 2 ** 53]]),
    /^amounts such as 9007199254740992 lie beyond ±9007199254740991 cents, where a number in the answer is no longer exact/,
  );
  assert.match(
    judge([[1, '2026-03-14', 2 ** 53]]).withoutValues.join(' '),
    /^some amounts lie beyond ±9007199254740991 cents, where a number in the answer is no longer exact: give/,
  );
  // An application's booking with a date and an amount that are wrong: each sentence its own fault.
  const both = judge([[1, '2024-02-30', 1.5, '-3/200']], 'GnuCash');
  assert.match(
    both.problems.join('\n'),
    /has the date '2024-02-30', not a day of the calendar .*: GnuCash holds a date/,
  );
  assert.match(both.problems.join('\n'), /has the amount -0\.015, not whole cents: GnuCash holds an amount/);
  assert.match(
    both.withoutValues.join('\n'),
    /a booking has an amount that is not whole cents: GnuCash holds an amount/,
  );
  assert.match(problems([['a1b2', '2026-03-14', 1250]]), /^ids such as 'a1b2' are not whole numbers/);
  // Whole, but beyond 2^53 − 1: no longer exact as a number of the answer.
  assert.match(
    problems([[2 ** 53, '2026-03-14', 1250]]),
    /^ids such as 9007199254740992 \(the figure shown is already rounded\) are not whole numbers within ±9007199254740991 \(2\^53 − 1\)/,
  );
  assert.match(
    problems([
      [1, '2026-03-14', 1250],
      [1, '2026-03-15', 1],
    ]),
    /^ids are not unique \(1 is given to two bookings\)/,
  );
  assert.match(problems([[1, null, 1250]]), /^1 booking has no date \(NULL\)/);
});

/** A day of the calendar as the plain rule says it: the pattern of a day, and a day JavaScript's calendar has. */
function realDay(text: string): boolean {
  const iso = /^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$/;
  return iso.test(text) && new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text;
}

test('judge takes as a date exactly the real calendar days: 2026-02-31, 2025-02-29 and 2100-02-29 are refused', () => {
  const chars = ['0', '1', '2', '3', '9', '-', '/', ' ', 'a', '\u0660', '\uff10', '\n', ':', '/'];
  let state = 7;
  const random = (): number => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
  const texts = ['2026-03-14', '2026-02-31', '2026-02-30', '2026-04-31', '2024-02-29', '2025-02-29', '2100-02-29'];
  texts.push('2000-02-29', '0000-01-01', '9999-12-31', '2026-03-1', '2026-03-144', '');
  for (let i = 0; i < 50_000; i += 1) {
    // Days with one to three characters changed, and random text of about a day's length.
    const day = [...'2026-03-14'];
    const changes = 1 + Math.floor(random() * 3);
    for (let c = 0; c < changes; c += 1)
      day[Math.floor(random() * 10)] = chars[Math.floor(random() * chars.length)] as string;
    texts.push(day.join(''));
    texts.push(Array.from({ length: 9 + Math.floor(random() * 3) }, () => chars[Math.floor(random() * 6)]).join(''));
  }
  let days = 0;
  for (const text of texts) {
    assert.equal(judge([[1, text, 1]]).problems.length === 0, realDay(text), JSON.stringify(text));
    if (realDay(text)) days += 1;
  }
  assert.deepEqual(['2026-02-31', '2025-02-29', '2100-02-29', '2024-02-29', '2000-02-29'].map(realDay), [
    false,
    false,
    false,
    true,
    true,
  ]);
  assert.ok(days > 1_000, `only ${days} days among the texts`);
});

/**
 * judge's rules read one at a time, as they are written in docs/API.md and check's sentences:
 * the plain oracle that the one-pass judge is held to.
 */
function plainJudge(rows: ReadonlyArray<[unknown, unknown, unknown]>) {
  const validDate = (date: unknown): date is string => typeof date === 'string' && realDay(date);
  const badDate = rows.findIndex(([, date]) => !validDate(date));
  const badAmount = rows.findIndex(([, , amount]) => !Number.isSafeInteger(amount));
  const badId = rows.findIndex(([id]) => !Number.isSafeInteger(id));
  const twice = badId !== -1 ? -1 : rows.findIndex(([id], i) => rows.findIndex(([other]) => other === id) < i);
  const amounts = rows.filter(([, , amount]) => typeof amount === 'number');
  const valid = rows.filter(([, date, amount]) => validDate(date) && Number.isSafeInteger(amount));
  const latest = valid.reduce<string | undefined>(
    (max, [, date]) => (max === undefined || (date as string) > max ? (date as string) : max),
    undefined,
  );
  const first = valid.find(([, date]) => date === latest);
  return {
    badDate,
    badDates: rows.filter(([, date]) => !validDate(date)),
    badAmount,
    badId,
    twice,
    nulls: rows.filter(([, date]) => date === null).length,
    negative: amounts.filter(([, , amount]) => (amount as number) < 0).length,
    amounts: amounts.length,
    newest: first === undefined ? undefined : { date: first[1], amountCents: first[2] },
  };
}

test('judge in one pass names the same rows as each rule read on its own (2,000 random samples)', () => {
  const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let state = 42;
  const random = (): number => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
  const ids = [1, 2, 3, 4, 5, 'a1', 2.5, null, 2 ** 60];
  const dates = [
    '2026-03-14',
    '2026-03-15',
    '2025-12-31',
    '2026-13-01',
    '2026-03-14 10:00',
    20260314,
    null,
    '2027-01-01',
    '2026-02-31',
    '2026-00-10',
    '2026-10-32',
    '2026-1-014',
    '2026-03-14\n',
  ];
  const amounts = [1250, -1250, 435, -1, 12.5, null, 'x', 2 ** 60, 0];
  for (let sample = 0; sample < 2_000; sample += 1) {
    // Every other sample's ids rise, as a table's rowids do, with now and then one out of order.
    let next = 0;
    const nextId = (): unknown => {
      if (random() < 0.05) return pick(random, ids);
      next += 1 + Math.floor(random() * 3);
      return next;
    };
    const id = sample % 2 === 0 ? () => pick(random, ids) : nextId;
    const rows = Array.from(
      { length: Math.floor(random() * 30) },
      () => [id(), pick(random, dates), pick(random, amounts)] as [unknown, unknown, unknown],
    );
    const plain = plainJudge(rows);
    const report = judge(rows);
    const expected: string[] = [];
    // Each problem is the one its first row gives, in the rules' order.
    if (plain.badDate !== -1)
      expected.push(judge([rows[plain.badDate] as [unknown, unknown, unknown]]).problems[0] as string);
    if (plain.badAmount !== -1)
      expected.push(judge([[1, '2026-01-01', (rows[plain.badAmount] as unknown[])[2]]]).problems[0] as string);
    if (plain.badId !== -1)
      expected.push(judge([[(rows[plain.badId] as unknown[])[0], '2026-01-01', 1]]).problems[0] as string);
    else if (plain.twice !== -1)
      expected.push(
        `ids are not unique (${String((rows[plain.twice] as unknown[])[0])} is given to two bookings): each booking needs an id of its own.`,
      );
    // The date's sentence counts the NULL dates of the whole sample.
    if (plain.badDate !== -1 && (rows[plain.badDate] as unknown[])[1] === null) {
      expected[0] = `${plain.nulls} booking${plain.nulls === 1 ? ' has' : 's have'} no date (NULL): no search can find ${plain.nulls === 1 ? 'it' : 'them'}; give every booking a 'YYYY-MM-DD' date, or leave such rows out of the mapping.`;
    }
    // A day the calendar lacks: the first three bookings whose date is no day named, and how many.
    const [firstBad] = plain.badDates;
    if (firstBad !== undefined && typeof firstBad[1] === 'string' && /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(firstBad[1])) {
      const count = plain.badDates.length;
      const them = plain.badDates.slice(0, 3).map(([id, date]) => {
        const booking = `the booking (id ${typeof id === 'string' ? `'${id}'` : String(id)})`;
        if (date === null) return `${booking} has no date the service can read`;
        return `${booking} has the date ${typeof date === 'string' ? `'${date}'` : String(date)}, not a day of the calendar as YYYY-MM-DD`;
      });
      const more = count > 3 ? `; and ${count - 3} more` : '';
      expected[0] = `${count} of ${rows.length} bookings ha${count === 1 ? 's' : 've'} a date that is no day of the calendar (${them.join('; ')}${more}): a search would answer a day that does not exist. Correct those bookings.`;
    }
    assert.deepEqual(report.problems, expected, JSON.stringify(rows));
    // Said for the service: the same problems, none of the sample's values.
    const withheld = report.problems.some((problem) => !report.withoutValues.includes(problem));
    assert.equal(report.withoutValues.length, report.problems.length + (withheld ? 1 : 0));
    for (const value of rows.flat().map(String)) {
      if (value.length >= 4) assert.ok(!report.withoutValues.join(' ').includes(value), value);
    }
    assert.deepEqual(report.newest, plain.newest, JSON.stringify(rows));
    assert.equal(report.notes.length, plain.amounts >= 20 && plain.negative > 0.8 * plain.amounts ? 1 : 0);
    assert.equal(report.sampled, rows.length);
  }
});

test("TEMP views on the embedder's own read-only connection serve another schema without touching the file", async (t) => {
  const file = join(tempDir(t), 'fremd.sqlite');
  const writer = new Database(file);
  writer.exec(fixtureSql('existing-app.sql'));
  writer.close();
  const before = readFileSync(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  db.exec(
    fixtureSql('existing-app-views.sql')
      .replace(/CREATE VIEW (\w+)/g, 'CREATE TEMP VIEW bss_$1')
      .replace(/CREATE INDEX[\s\S]*?\);/, ''),
  );
  const tables = { entries: 'bss_entries', categories: 'bss_categories', paymentMethods: 'bss_payment_methods' };
  const origin = await serve(t, createHandler(db, CREDENTIALS, { tables }));
  assertReply(
    await get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`),
    200,
    EXISTING_APP_MARCH_COFFEE,
  );
  assert.deepEqual(readFileSync(file), before);
});

test('hexPrefixId: the SQL gives the number of 13 hex digits (not the uuid version digit), as hexPrefixIdOf does; NULL for what is no hex id', () => {
  const db = new Database(':memory:');
  const select = db.prepare<[{ v: string }], number | null>(`SELECT ${hexPrefixId(':v')}`).pluck();
  const idOf = { get: (v: string) => select.get({ v }) };
  const uuids = [
    'be204d4d-2a98-43d9-885d-c8a4084ef980',
    '00719435-a56d-4c2e-b7b0-3737c64fe3e1',
    'ffffffff-ffff-4fff-bfff-ffffffffffff',
    '0123456789abcdef0123456789abcdef',
    'BE204D4D-2A98-43D9-885D-C8A4084EF980',
    ...Array.from({ length: 50 }, () => randomUUID()),
  ];
  for (const uuid of uuids) {
    const id = idOf.get(uuid);
    assert.equal(id, hexPrefixIdOf(uuid), uuid);
    assert.ok(Number.isSafeInteger(id) && (id as number) >= 0, uuid);
  }
  assert.equal(idOf.get('ffffffff-ffff-4fff-bfff-ffffffffffff'), 2 ** 52 - 1, 'the version digit 4 is not one of them');
  // Version-4 uuids differ in 52 bits: the version digit, the same in all, is left out.
  assert.equal(new Set(Array.from({ length: 2000 }, () => idOf.get(randomUUID()))).size, 2000);
  for (const notHex of ['starting-balance', 'be204d4d-2a98', 'xe204d4d-2a98-43d9-885d-c8a4084ef980', '']) {
    assert.equal(idOf.get(notHex), null, notHex);
  }
});

test('fractionCents: whole cents when exact, a REAL with the fraction of a cent otherwise, NULL for what is no fraction of integers', () => {
  const db = new Database(':memory:');
  const cents = db
    .prepare<[{ num: unknown; den: unknown }], unknown>(`SELECT ${fractionCents(':num', ':den')}`)
    .pluck();
  const read = (num: unknown, den: unknown): unknown => cents.get({ num, den });
  assert.deepEqual(
    [read(-1250n, 100n), read(-25n, 2n), read(-12345n, 1000n), read(7n, 1n), read(0n, 100n)],
    [-1250, -1250, -1234.5, 700, 0],
  );
  // Integers are bound as BigInt: better-sqlite3 binds a number as a REAL.
  // SQLite's arithmetic reads text as 0 and would divide by nothing; none of these is an amount.
  for (const [num, den] of [
    ['LEAK', 100],
    [-1250, 'x'],
    [12.5, 1],
    [-1250, 0],
    [-1250, -100],
    [null, 100],
    [2n ** 62n, 100],
  ]) {
    assert.equal(read(num, den), null, `${String(num)}/${String(den)}`);
  }
  db.close();
});
