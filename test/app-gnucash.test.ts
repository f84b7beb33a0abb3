// GnuCash, served with one option (`app: "gnucash"`, --app gnucash) from a book that GnuCash
// 4.13 itself wrote through its Python bindings: a split transaction, transfers between
// cash and bank, a void and a deleted transaction, an uncategorised booking (GnuCash's
// Imbalance-EUR), a cash account in US dollars, 0.01 and 1,234,567.89; each answer checked
// against the answer computed from the ledger (fixtures/ledger-books.ts), not from SQL.

import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  type AccountKey,
  answer,
  asQuery,
  CASES,
  commitWithGnuCash,
  type GnuCashSplitView,
  type LedgerTransaction,
  ledger,
  queries,
  readGnuCashView,
  type Side,
  servedFromGnuCash,
  writeGnuCash,
  writeGnuCashBook,
  writeGnuCashWithGnuCash,
} from '../fixtures/ledger-books.js';
import { findApplication } from '../lib/apps/index.js';
import { explainCount } from '../lib/search/index.js';
import {
  assertCliServesLedger,
  assertDateRefused,
  assertNotWholeCents,
  openLedgerBook,
  searchFor,
  writeBook,
} from './support/app-serving.js';
import { cleanEnv, run, start, USER, waitFor } from './support/cli-helpers.js';
import { AUTH, databaseDir, request, tempDir } from './support/helpers.js';

const openBook = (t: TestContext, book = CASES, prepare?: (writer: Database.Database) => void) =>
  openLedgerBook(t, 'kasse.gnucash', writeGnuCash, book, prepare);

test('a GnuCash book written by GnuCash itself answers exactly what its ledger says, with app "gnucash"', async (t) => {
  const file = join(tempDir(t), 'kasse.gnucash');
  const expected = writeGnuCashWithGnuCash(file, CASES);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  // The file holds what the test means to serve, as GnuCash wrote it.
  const one = (sql: string): unknown => db.prepare(sql).pluck().get();
  assert.equal(one("SELECT count(*) FROM splits WHERE reconcile_state = 'v' AND value_num = 0"), 2, 'a void');
  assert.equal(one("SELECT count(*) FROM accounts WHERE name = 'Imbalance-EUR' AND account_type = 'BANK'"), 1);
  assert.equal(one("SELECT count(*) FROM transactions WHERE post_date NOT LIKE '% 10:59:00'"), 0, 'neutral time');
  assert.equal(one("SELECT count(*) FROM transactions WHERE description = 'Gelöscht'"), 0, 'deleted');
  assert.equal(one("SELECT type FROM sqlite_master WHERE name = 'entries'"), 'table', "GnuCash's own entries");
  // fixtures/gnucash.sql, which the imitation below and the benchmarks use, is GnuCash's
  // own schema: each of its tables and indexes exactly as GnuCash created them here.
  const fixture = new Database(':memory:');
  fixture.exec(readFileSync(new URL('../fixtures/gnucash.sql', import.meta.url), 'utf8'));
  const schema = 'SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? ORDER BY type, name';
  const tables = fixture
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  for (const table of tables) {
    assert.deepEqual(db.prepare(schema).all(table), fixture.prepare(schema).all(table), table);
  }
  fixture.close();

  const search = await searchFor(t, db, 'gnucash');
  const id = (description: string, konto = 'Barkasse'): number | undefined =>
    expected.find((b) => (b.zweck === description || b.zweck.endsWith(`: ${description}`)) && b.konto === konto)?.id;
  // Pinned by hand: what a GnuCash user sees in the cash account's register.
  assert.deepEqual(await search('von=2026-03-15&bis=2026-03-15&betrag=-43.5'), {
    anzahl: 1,
    buchungen: [
      {
        id: id('Einkauf Schreibwaren'),
        datum: '2026-03-15',
        betrag: -43.5,
        zweck: 'Einkauf Schreibwaren',
        konto: 'Barkasse',
      },
    ],
  });
  // A split transaction is one booking with its whole amount and no category; a transfer
  // is a booking in each account, its zweck naming the other account.
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=-500'), {
    anzahl: 1,
    buchungen: [
      {
        id: id('Bareinzahlung auf Girokonto'),
        datum: '2026-03-16',
        betrag: -500,
        zweck: 'Girokonto: Bareinzahlung auf Girokonto',
        konto: 'Barkasse',
      },
    ],
  });
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=500'), {
    anzahl: 1,
    buchungen: [
      {
        id: id('Bareinzahlung auf Girokonto', 'Girokonto'),
        datum: '2026-03-16',
        betrag: 500,
        zweck: 'Barkasse: Bareinzahlung auf Girokonto',
        konto: 'Girokonto',
      },
    ],
  });
  // Void, deleted and US-dollar bookings are not served; GnuCash's Imbalance-EUR is the
  // category of an uncategorised booking, never an account of its own.
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=-9.99'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=0'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=-7.77'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-20&bis=2026-03-20&betrag=-12.5'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-18&bis=2026-03-18&betrag=0&toleranz=1'), {
    anzahl: 1,
    buchungen: [
      {
        id: id('Ohne Kategorie'),
        datum: '2026-03-18',
        betrag: -0.01,
        zweck: 'Ohne Kategorie',
        kategorie: 'Imbalance-EUR',
        konto: 'Barkasse',
      },
    ],
  });
  for (const q of queries(expected)) assert.deepEqual(await search(asQuery(q)), answer(expected, q), asQuery(q));
});

test('a GnuCash book from fixtures/gnucash.sql with 2,000 more bookings answers like the ledger', async (t) => {
  const { expected, db } = openBook(t, ledger(2_000));
  const search = await searchFor(t, db, 'gnucash');
  const some = expected.filter((_, i) => i % 97 === 0);
  const all = [
    ...queries(expected),
    ...some.map((b) => ({ von: b.datum, bis: b.datum, cents: b.cents })),
    ...some.map((b) => ({ von: `${b.datum.slice(0, 7)}-01`, bis: b.datum, cents: b.cents, toleranz: 500, limit: 5 })),
  ];
  for (const q of all) assert.deepEqual(await search(asQuery(q)), answer(expected, q), asQuery(q));
});

/** Sets the process's time zone (TZ) for the rest of the test, as an admin would for the service. */
function inTimeZone(t: TestContext, zone: string): void {
  const saved = process.env['TZ'];
  process.env['TZ'] = zone;
  t.after(() => {
    if (saved === undefined) delete process.env['TZ'];
    else process.env['TZ'] = saved;
  });
}

const side = (account: AccountKey, cents: number, amount?: number): Side =>
  amount === undefined ? { account, cents } : { account, cents, amount };
const tx = (date: string, description: string, sides: Side[], more: Partial<LedgerTransaction> = {}) =>
  ({ date, description, currency: 'EUR', sides, ...more }) as LedgerTransaction;

// A book kept since 2015: transactions GnuCash before 2.6.20 dated at local midnight (and
// stored as YYYYMMDDhhmmss, below), one it dated in neutral time in the old form, and
// transactions a script or an importer dated through GnuCash's API at other times of day.
const OLD_FORM = ['Altbuchung Mai', 'Silvester', 'Neujahr', 'Neutral im alten Format', 'Letzte alte Buchung'];
const KEPT_FOR_YEARS: LedgerTransaction[] = [
  ...CASES,
  tx('2015-05-14', 'Altbuchung Mai', [side('kasse', -1250), side('porto', 1250)], { time: '00:00:00' }),
  tx('2015-12-31', 'Silvester', [side('kasse', -1250), side('porto', 1250)], { time: '00:00:00' }),
  tx('2016-01-01', 'Neujahr', [side('kasse', -435), side('bewirtung', 435)], { time: '00:00:00' }),
  tx('2016-07-01', 'Neutral im alten Format', [side('kasse', -435), side('bewirtung', 435)]),
  tx('2026-03-16', 'Letzte alte Buchung', [side('kasse', -999), side('buero', 999)], { time: '00:00:00' }),
  tx('2026-03-14', 'Import spät abends', [side('kasse', -1250), side('porto', 1250)], { time: '23:30:00' }),
  tx('2026-03-15', 'Import kurz nach Mitternacht', [side('kasse', -1250), side('porto', 1250)], { time: '00:30:00' }),
  tx('2026-03-31', 'Skript mittags', [side('kasse', -435), side('bewirtung', 435)], { time: '12:00:00' }),
  tx('2026-01-01', 'Skript zum Jahreswechsel', [side('bank', -5000), side('kasse', 5000)], { time: '00:05:00' }),
];

/**
 * KEPT_FOR_YEARS written by GnuCash in `zone`, the transactions of OLD_FORM then stored as
 * GnuCash before 2.6.20 stored them (the same UTC time as YYYYMMDDhhmmss), and what
 * GnuCash 4.13 itself reads from the book in that zone.
 */
function keptForYears(t: TestContext, zone: string): { file: string; view: GnuCashSplitView[] } {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCashBook(file, KEPT_FOR_YEARS, { timeZone: zone });
  const writer = new Database(file);
  const changed = writer
    .prepare(
      `UPDATE transactions SET post_date = strftime('%Y%m%d%H%M%S', post_date)
       WHERE description IN (${OLD_FORM.map(() => '?').join(', ')})`,
    )
    .run(...OLD_FORM).changes;
  writer.close();
  assert.equal(changed, OLD_FORM.length);
  return { file, view: readGnuCashView(file, zone) };
}

// Zones east and west, the outermost ones GnuCash moves its neutral time in, a half hour.
const ZONES = ['Europe/Berlin', 'America/New_York', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kolkata'];

for (const zone of ZONES) {
  test(`a GnuCash book kept for years, in both of GnuCash's date forms and at any time of day, is served on the days GnuCash shows in ${zone}, the service's time zone`, async (t) => {
    const { file, view } = keptForYears(t, zone);
    const expected = servedFromGnuCash(view);
    const shown = (description: string): string | undefined =>
      view.find((s) => s.description === description && s.account === 'Barkasse')?.date;
    // What GnuCash shows: the day entered, however it was stored.
    assert.equal(shown('Altbuchung Mai'), '2015-05-14');
    assert.equal(shown('Silvester'), '2015-12-31');
    assert.equal(shown('Neutral im alten Format'), '2016-07-01');
    assert.equal(shown('Import spät abends'), '2026-03-14');
    assert.equal(shown('Import kurz nach Mitternacht'), '2026-03-15');
    const db = new Database(file, { readonly: true, fileMustExist: true });
    t.after(() => db.close());
    const stored = (description: string): unknown =>
      db.prepare('SELECT post_date FROM transactions WHERE description = ?').pluck().get(description);
    assert.match(String(stored('Silvester')), /^\d{14}$/, 'the old form');
    assert.match(String(stored('Import spät abends')), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'the new form');

    inTimeZone(t, zone);
    const search = await searchFor(t, db, 'gnucash');
    const years = [...new Set(expected.map((b) => b.datum.slice(0, 4)))];
    const all = [
      ...queries(expected),
      ...expected.map((b) => ({ von: b.datum, bis: b.datum, cents: b.cents })),
      // The searches that missed the old form (bis in its year) or answered 500 (a later year).
      ...years.map((year) => ({ von: `${year}-01-01`, bis: `${year}-12-31`, cents: 0, toleranz: 999_999_999 })),
      ...years.map((year) => ({
        von: `${year}-01-01`,
        bis: '2026-12-31',
        cents: 0,
        toleranz: 999_999_999,
        limit: 1000,
      })),
    ];
    for (const q of all) assert.deepEqual(await search(asQuery(q)), answer(expected, q), `${zone} ${asQuery(q)}`);
  });
}

test('check and the service agree on a book kept for years; check says which time zone the dates are read in, and how many depend on it', async (t) => {
  const { file, view } = keptForYears(t, 'Europe/Berlin');
  const expected = servedFromGnuCash(view);
  // Served in Berlin, as GnuCash ran: fits, and the days are GnuCash's.
  const berlin = cleanEnv({ ...USER, TZ: 'Europe/Berlin' });
  const check = await run(['check', '--db', file, '--app', 'gnucash'], berlin);
  assert.equal(check.code, 0, check.stdout);
  assert.match(check.stdout, /^Data: fits /m);
  assert.match(
    check.stdout,
    /^Note: 8 of the book's 24 transactions are dated at another time of day than GnuCash's 10:59 UTC \(by GnuCash before 2\.6\.20, which dated at local midnight, or by an importer or a script\): each is served on the day its time falls on in this service's time zone, UTC\+01:00 in January and UTC\+02:00 in July \(TZ, else the system's setting\), as GnuCash shows it in the time zone it runs in; 4 of them fall on midnight here\. If GnuCash runs in another time zone, run the service with TZ set to it \(TZ=Europe\/Berlin\)\.$/m,
  );
  const q = { von: '2015-01-01', bis: '2016-12-31', cents: 0, toleranz: 999_999 };
  const cli = await start(t, ['--db', file, '--app', 'gnucash'], berlin);
  const reply = await request(`${cli.api}buchungen?${asQuery(q)}`, { headers: { authorization: AUTH } });
  assert.deepEqual(JSON.parse(reply.body), answer(expected, q));
  await cli.stop();
  // Served in UTC: also fits (GnuCash run in UTC shows these days too), and check's note
  // gives away that the old dates are not at midnight there.
  const utc = await run(['check', '--db', file, '--app', 'gnucash'], cleanEnv({ ...USER, TZ: 'UTC' }));
  assert.equal(utc.code, 0, utc.stdout);
  assert.match(
    utc.stdout,
    /in this service's time zone, UTC\+00:00 in January and UTC\+00:00 in July .*; 0 of them fall on midnight here\./,
  );
});

test('a GnuCash book with trading accounts: a dollar bill paid from the euro bank names its category, a transfer between currencies names the other account, as GnuCash shows them', async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCashBook(
    file,
    [
      ...CASES,
      tx('2026-03-21', 'Hotel in Boston', [side('bank', -9250), side('hotel', 9250, 10000)]),
      tx('2026-03-22', 'Dollar für die Reise', [side('bank', -18500), side('dollar', 18500, 20000)]),
      tx('2026-03-23', 'Dollar zurück', [side('dollar', -4625, -5000), side('kasse', 4625)]),
    ],
    { trading: true },
  );
  const view = readGnuCashView(file);
  assert.ok(
    view.some((s) => s.type === 'TRADING'),
    'GnuCash wrote its trading splits',
  );
  const expected = servedFromGnuCash(view);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'gnucash');
  const one = (description: string, konto: string) =>
    expected.find((b) => b.zweck.endsWith(description) && b.konto === konto)?.id;
  assert.deepEqual(await search('von=2026-03-21&bis=2026-03-23&betrag=0&toleranz=1000'), {
    anzahl: 3,
    buchungen: [
      {
        id: one('Dollar zurück', 'Barkasse'),
        datum: '2026-03-23',
        betrag: 46.25,
        zweck: 'Dollarkasse: Dollar zurück',
        konto: 'Barkasse',
      },
      {
        id: one('Dollar für die Reise', 'Girokonto'),
        datum: '2026-03-22',
        betrag: -185,
        zweck: 'Dollarkasse: Dollar für die Reise',
        konto: 'Girokonto',
      },
      {
        id: one('Hotel in Boston', 'Girokonto'),
        datum: '2026-03-21',
        betrag: -92.5,
        zweck: 'Hotel in Boston',
        kategorie: 'Hotel USA',
        konto: 'Girokonto',
      },
    ],
  });
  for (const q of queries(expected)) assert.deepEqual(await search(asQuery(q)), answer(expected, q), asQuery(q));
});

test('a GnuCash transaction with two splits in one expense account is a split transaction, without a category, as GnuCash shows it', async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCashBook(file, [
    ...CASES,
    tx('2026-03-24', 'Porto für zwei Briefe', [side('kasse', -300), side('porto', 100), side('porto', 200)]),
  ]);
  const view = readGnuCashView(file);
  assert.equal(view.find((s) => s.description === 'Porto für zwei Briefe' && s.account === 'Barkasse')?.other, null);
  const expected = servedFromGnuCash(view);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'gnucash');
  assert.deepEqual(await search('von=2026-03-24&bis=2026-03-24&betrag=-3'), {
    anzahl: 1,
    buchungen: [
      {
        id: expected.find((b) => b.zweck === 'Porto für zwei Briefe')?.id,
        datum: '2026-03-24',
        betrag: -3,
        zweck: 'Porto für zwei Briefe',
        konto: 'Barkasse',
      },
    ],
  });
  for (const q of queries(expected)) assert.deepEqual(await search(asQuery(q)), answer(expected, q), asQuery(q));
});

// GnuCash's Notes never reached zweck, though every other mapping serves its notes there.
test("a GnuCash transaction's Notes follow its description (or the other account and description of a transfer) in zweck, joined by ': '; empty notes add nothing", async (t) => {
  const notes = (writer: Database.Database, description: string, text: string): void => {
    writer
      .prepare(
        "INSERT INTO slots (obj_guid, name, slot_type, string_val) SELECT guid, 'notes', 4, ? FROM transactions WHERE description = ?",
      )
      .run(text, description);
  };
  const { db } = openBook(t, CASES, (writer) => {
    notes(writer, 'Pfand zurück', 'Quittung 17');
    notes(writer, 'Bareinzahlung auf Girokonto', 'Tagesabschluss');
    notes(writer, 'Barabhebung', '');
  });
  const search = await searchFor(t, db, 'gnucash');
  const zweck = async (query: string): Promise<unknown[]> =>
    ((await search(query)) as { buchungen: Array<{ zweck: string }> }).buchungen.map((b) => b.zweck);
  assert.deepEqual(await zweck('von=2026-03-20&bis=2026-03-20&betrag=0.01'), ['Pfand zurück: Quittung 17']);
  assert.deepEqual(await zweck('von=2026-03-16&bis=2026-03-16&betrag=-500'), [
    'Girokonto: Bareinzahlung auf Girokonto: Tagesabschluss',
  ]);
  assert.deepEqual(await zweck('von=2026-03-16&bis=2026-03-16&betrag=200'), ['Girokonto: Barabhebung']);
});

test('a GnuCash amount that is not whole cents is a 500 with the reason in the log, never a rounded amount; check, the handler and the command refuse the file alike', async (t) => {
  const { file, db } = openBook(t, CASES);
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'gnucash',
    'von=2026-03-14&bis=2026-03-14&betrag=-12.35&toleranz=0.01',
    // 12.345 EUR: a commodity with three decimals, or a split written by another program.
    (writer) =>
      writer
        .prepare(
          'UPDATE splits SET quantity_num = -12345, quantity_denom = 1000 WHERE quantity_num = -1250 AND quantity_denom = 100',
        )
        .run(),
    '-12\\.345',
  );
  assert.match(
    stdout,
    /^ {2}- the booking of 2026-03-14 in 'Barkasse' \('[^']+', id \d+\) has the amount -12\.345, not whole cents: GnuCash holds an amount the service cannot answer exactly .*; correct the booking in GnuCash\.$/m,
  );
});

test('a GnuCash amount past 2^53 cents (whole, as GnuCash writes it) is refused as beyond what the service reads exactly, with its exact figure, never as a fraction', async (t) => {
  const { file, db } = openBook(t, CASES);
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'gnucash',
    // No search reaches it: `betrag` and `toleranz` have 12 digits of euros at most.
    undefined,
    (writer) =>
      writer
        .prepare(
          'UPDATE splits SET quantity_num = -9007199254740993 WHERE quantity_num = -1250 AND quantity_denom = 100',
        )
        .run(),
    '-90071992547409\\.93',
  );
  assert.match(
    stdout,
    /^ {2}- the booking of 2026-03-14 in 'Barkasse' \('[^']+', id \d+\) has the amount -90071992547409\.93, beyond ±90071992547409\.91, the most the service reads exactly: GnuCash holds an amount the service cannot answer exactly\. A search that finds it would answer 500; correct the booking in GnuCash\.$/m,
  );
});

test("a GnuCash amount that is no integer ('LEAK') is never read as 0: written after the start a search is a 500; check, the handler and the command refuse the file", async (t) => {
  const { file, db } = openBook(t, CASES);
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'gnucash',
    'von=2026-03-14&bis=2026-03-14&betrag=-12.5',
    (writer) =>
      writer.exec("UPDATE splits SET quantity_num = 'LEAK' WHERE quantity_num = -1250 AND quantity_denom = 100"),
  );
  assert.match(stdout, /^ {2}- the booking .*id \d+\) has no amount the service can read: /m);
});

test("a GnuCash post_date that is no time ('LEAK-DATE') or no day of the calendar (2026-02-30, which SQLite would read as March 2; month 13; hour 25) is refused by check, the handler and the command, never left out or moved, also when written while served", async (t) => {
  const { file, db } = openBook(t, CASES);
  const dated = (date: string) => (writer: Database.Database) =>
    writer
      .prepare(
        'UPDATE transactions SET post_date = ? WHERE guid = (SELECT tx_guid FROM splits WHERE quantity_num = -1250 ORDER BY guid LIMIT 1)',
      )
      .run(date);
  // Written while the book is served: a search whose window reads it is a 500, also a count.
  const served = { t, query: 'von=2026-01-01&bis=2026-12-31&betrag=-12.5' };
  for (const time of ['2026-02-30 10:59:00', '2026-13-05 10:59:00', '2026-10-05 25:59:00']) {
    await assertDateRefused(
      db,
      file,
      'gnucash',
      dated(time),
      /^ {2}- the booking .*id \d+\) has no date the service can/m,
      served,
    );
    writeBook(file, dated('2026-03-14 10:59:00'));
  }
  await assertDateRefused(
    db,
    file,
    'gnucash',
    dated('LEAK-DATE'),
    /^ {2}- the booking .*id \d+\) has no date the service can read: GnuCash holds a date the service cannot answer/m,
  );
});

test("a GnuCash book is searched by GnuCash's own date index, `check --app gnucash` says it fits, the CLI serves it, nothing is written", async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  const expected = writeGnuCash(file, ledger(200));
  const before = readFileSync(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const plan = explainCount(db, undefined, findApplication('gnucash'));
  db.close();
  assert.ok(plan.includes('SEARCH t USING INDEX tx_post_date_index (post_date>? AND post_date<?)'), plan.join('; '));
  assert.ok(plan.includes('SEARCH s USING INDEX splits_tx_guid_index (tx_guid=?)'), plan.join('; '));

  const check = await run(['check', '--db', file, '--app', 'gnucash']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /^Mapping: GnuCash \(--app gnucash\)\.$/m);
  assert.match(check.stdout, /^Data: fits /m);
  assert.match(
    check.stdout,
    /^The typical search \(one amount in a month\) reads only its month, by the index tx_post_date_index\.$/m,
  );
  assert.doesNotMatch(
    check.stdout,
    /^Note: accounts at the top level/m,
    'Imbalance-EUR is at the top level, and no note',
  );

  await assertCliServesLedger(t, file, 'gnucash', expected);
  assert.deepEqual(readFileSync(file), before);
});

// A USD cash account with bookings was left out without a word, while top-level accounts got a note.
test('check notes a GnuCash money account in another currency, which is not served', async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCash(file, CASES);
  const check = await run(['check', '--db', file, '--app', 'gnucash']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.deepEqual(
    check.stdout.split('\n').filter((line) => line.startsWith('Note: ')),
    ['Note: accounts in another currency are not served (the service serves euros only): Dollarkasse (USD).'],
  );
});

test('check notes two served GnuCash accounts of one name by their full names: konto, the own name, cannot tell them apart', async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCash(file, CASES);
  // The bank account becomes a second Barkasse, in a branch of its own, as GnuCash allows.
  writeBook(file, (writer) =>
    writer.exec(`
      INSERT INTO accounts SELECT 'f0' || substr(guid, 3), 'Filiale Nord', 'ASSET', commodity_guid, commodity_scu,
        non_std_scu, parent_guid, code, description, hidden, 1 FROM accounts WHERE name = 'Girokonto';
      UPDATE accounts SET name = 'Barkasse', parent_guid = (SELECT guid FROM accounts WHERE name = 'Filiale Nord')
        WHERE name = 'Girokonto';`),
  );
  const check = await run(['check', '--db', file, '--app', 'gnucash']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(
    check.stdout,
    /^Note: 2 served accounts are named 'Barkasse' \(Aktiva:Barkasse, Aktiva:Filiale Nord:Barkasse\): a booking's konto is its account's own name; rename one in GnuCash so that clients and konten can tell them apart\.$/m,
  );
});

test('check notes a GnuCash money account kept at the top level, which is not served, and the service says it as it opens the book', async (t) => {
  const file = join(databaseDir(t), 'kasse.gnucash');
  writeGnuCash(file, CASES);
  const writer = new Database(file);
  // Move the bank account to the top level, beside Imbalance-EUR.
  writer.exec(
    "UPDATE accounts SET parent_guid = (SELECT guid FROM accounts WHERE account_type = 'ROOT') WHERE name = 'Girokonto'",
  );
  writer.close();
  const check = await run(['check', '--db', file, '--app', 'gnucash']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(
    check.stdout,
    /^Note: accounts at the top level are not served \(GnuCash keeps its own Imbalance and Orphan accounts there\): Girokonto\. Move an account that holds money below another \(Assets or Liabilities; in German, Aktiva or Passiva\) to serve it\.$/m,
  );
  const server = await start(t, ['--db', file, '--app', 'gnucash']);
  assert.match(
    server.output().stderr,
    /Z database \S+: accounts at the top level are not served \(GnuCash keeps its own Imbalance and Orphan accounts there\): Girokonto\. Move an account that holds money below another \(Assets or Liabilities; in German, Aktiva or Passiva\) to serve it\.$/m,
  );
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'gnucash');
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=500'), { anzahl: 0, buchungen: [] });
});

// GnuCash's SQL backend gives up a save at once when a reader holds a rollback-journal file
// (no busy timeout): its session then fails every later save, a transaction left without
// its splits. Served live, a GnuCash book must be in WAL mode.
const ROLLBACK_WARNING =
  /^\S+ database (\S+): the book is in SQLite's rollback-journal mode: it is not searched while GnuCash has it open, for a GnuCash save that meets a search fails at once \("database is locked"\) and GnuCash's session then fails its later saves too: run check and the service with GnuCash closed, and switch the book to WAL once: sqlite3 (\S+) "PRAGMA journal_mode=WAL" \(docs\/applications\.md, GnuCash\)$/gm;

function switchToWal(file: string): void {
  const db = new Database(file);
  assert.equal(db.pragma('journal_mode = WAL', { simple: true }), 'wal');
  db.close();
}

test("the service warns once, as it opens a GnuCash book in rollback-journal mode, that GnuCash's saves fail while it searches; not for searches, not for a WAL file put in its place, again for a rollback-journal file put there (GnuCash's Save As)", async (t) => {
  const dir = databaseDir(t);
  const file = join(dir, 'kasse.gnucash');
  writeGnuCash(file, CASES);
  copyFileSync(file, join(dir, 'rollback.gnucash'));
  copyFileSync(file, join(dir, 'wal.gnucash'));
  switchToWal(join(dir, 'wal.gnucash'));
  const server = await start(t, ['--db', file, '--app', 'gnucash']);
  const stderr = (): string => server.output().stderr;
  await waitFor(stderr, ROLLBACK_WARNING);
  assert.deepEqual(
    [...stderr().matchAll(ROLLBACK_WARNING)].map((m) => [m[1], m[2]]),
    [[file, file]],
  );
  for (let i = 0; i < 3; i++) {
    const reply = await request(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=0&toleranz=999999`, {
      headers: { authorization: AUTH },
    });
    assert.equal(reply.status, 200, reply.body);
  }
  renameSync(join(dir, 'wal.gnucash'), file);
  await waitFor(stderr, /was replaced; serving the new file$/m);
  assert.equal([...stderr().matchAll(ROLLBACK_WARNING)].length, 1, stderr());
  renameSync(join(dir, 'rollback.gnucash'), file);
  await waitFor(stderr, /was replaced; serving the new file$/m, 2);
  await waitFor(stderr, ROLLBACK_WARNING, 2);
  assert.equal([...stderr().matchAll(ROLLBACK_WARNING)].length, 2, stderr());
});

test('a GnuCash book in rollback-journal mode is not searched while GnuCash has it open: its searches answer 500 and the log says why, GnuCash saves every one of 100 transactions, and once GnuCash closed it the book is served with them', async (t) => {
  const file = join(tempDir(t), 'kasse.gnucash');
  writeGnuCashBook(file, CASES);
  const server = await start(t, ['--db', file, '--app', 'gnucash']);
  const stderr = (): string => server.output().stderr;
  const search = () =>
    request(`${server.api}buchungen?von=2025-07-01&bis=2025-07-31&betrag=0&toleranz=999999&limit=1000`, {
      headers: { authorization: AUTH },
    });
  assert.equal((await search()).status, 200);
  // GnuCash opens the book, and its user enters the first transaction 2 s later.
  let done = false;
  const gnucash = commitWithGnuCash(file, 100, 0.02, 2).finally(() => (done = true));
  const refused =
    /GnuCash has the book open \(its lock: [^,]+, process \d+\) in SQLite's rollback-journal mode, .* it is not searched while GnuCash has it open\. Close GnuCash and switch the book to WAL once \(PRAGMA journal_mode=WAL in sqlite3; docs\/applications\.md, GnuCash\)\. A lock left by a GnuCash that did not close the book \(a crash\) goes once GnuCash opens it \("Open Anyway"\) and closes it\. Searches answer 500 until that no longer holds$/m;
  const statuses: number[] = [];
  // Bounded: one search at a time, 10 ms apart, at most 2,000.
  while (!done && statuses.length < 2_000) {
    statuses.push((await search()).status);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const { code, stderr: saved } = await gnucash;
  assert.equal(code, 0, saved);
  assert.doesNotMatch(saved, /database is locked/);
  assert.match(stderr(), refused);
  assert.ok(statuses.includes(500), `${statuses.length} searches while GnuCash had the book open`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const one = (sql: string): unknown => db.prepare(sql).pluck().get();
  assert.equal(one("SELECT count(*) FROM transactions WHERE description LIKE 'Live %'"), 100, 'every save');
  assert.equal(one('SELECT count(*) FROM gnclock'), 0, "GnuCash's session ended cleanly");
  await waitFor(stderr, /Z database \S+: what refused it no longer holds; serving it$/m);
  const last = await search();
  assert.equal(last.status, 200, last.body);
  assert.equal((JSON.parse(last.body) as { anzahl: number }).anzahl, 100, 'each served, in the cash account');
});

test('a GnuCash book in rollback-journal mode that GnuCash has open as the service starts: the start goes on, the book refused, and once GnuCash closed it served with every save', async (t) => {
  const file = join(tempDir(t), 'kasse.gnucash');
  writeGnuCashBook(file, CASES);
  let opened = (): void => undefined;
  const open = new Promise<void>((resolve) => (opened = resolve));
  // GnuCash opens the book; its user enters the first of ten transactions 3 s later.
  const gnucash = commitWithGnuCash(file, 10, 0.05, 3, opened);
  await open;
  const server = await start(t, ['--db', file, '--app', 'gnucash']);
  const stderr = (): string => server.output().stderr;
  await waitFor(stderr, /GnuCash has the book open \(its lock: .* Searches answer 500 until that no longer holds$/m);
  const search = () =>
    request(`${server.api}buchungen?von=2025-07-01&bis=2025-07-31&betrag=0&toleranz=999999&limit=0`, {
      headers: { authorization: AUTH },
    });
  assert.equal((await search()).status, 500);
  const { code, stderr: saved } = await gnucash;
  assert.equal(code, 0, saved);
  assert.doesNotMatch(saved, /database is locked/);
  await waitFor(stderr, /Z database \S+: what refused it no longer holds; serving it$/m);
  const last = await search();
  assert.equal(last.status, 200, last.body);
  assert.equal((JSON.parse(last.body) as { anzahl: number }).anzahl, 10, 'every save, in the cash account');
});

test('a GnuCash book in WAL mode, served live: GnuCash saves every one of 100 transactions committed 20 ms apart in one session while searches run, and every search answers 200', async (t) => {
  const file = join(tempDir(t), 'kasse.gnucash');
  writeGnuCashBook(file, CASES);
  switchToWal(file);
  const server = await start(t, ['--db', file, '--app', 'gnucash']);
  assert.doesNotMatch(server.output().stderr, /rollback-journal/);
  const search = () =>
    request(`${server.api}buchungen?von=2025-07-01&bis=2025-07-31&betrag=0&toleranz=999999&limit=1000`, {
      headers: { authorization: AUTH },
    });
  let done = false;
  const gnucash = commitWithGnuCash(file, 100, 0.02).finally(() => (done = true));
  const statuses: number[] = [];
  // Bounded: one search at a time, 10 ms apart, at most 2,000.
  while (!done && statuses.length < 2_000) {
    statuses.push((await search()).status);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const { code, stderr } = await gnucash;
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /database is locked/);
  t.diagnostic(`${statuses.length} searches while GnuCash saved`);
  assert.ok(statuses.length >= 20, `${statuses.length} searches while GnuCash saved`);
  assert.deepEqual(
    statuses.filter((status) => status !== 200),
    [],
    `${statuses.length} searches`,
  );
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const one = (sql: string): unknown => db.prepare(sql).pluck().get();
  assert.equal(one("SELECT count(*) FROM transactions WHERE description LIKE 'Live %'"), 100, 'every save');
  assert.equal(
    one("SELECT count(*) FROM splits WHERE tx_guid IN (SELECT guid FROM transactions WHERE description LIKE 'Live %')"),
    200,
    'each with its splits',
  );
  assert.equal(one('SELECT count(*) FROM gnclock'), 0, "GnuCash's session ended cleanly");
  const last = await search();
  assert.equal(last.status, 200);
  assert.equal((JSON.parse(last.body) as { anzahl: number }).anzahl, 100, 'each served, in the cash account');
});
