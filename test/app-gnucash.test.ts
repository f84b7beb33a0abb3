// GnuCash, served with one option (`app: "gnucash"`, --app gnucash) from a book that GnuCash
// 4.13 itself wrote through its Python bindings: a split transaction, transfers between
// cash and bank, a void and a deleted transaction, an uncategorised booking (GnuCash's
// Imbalance-EUR), a cash account in US dollars, 0.01 and 1,234,567.89; each answer checked
// against the answer computed from the ledger (test/ledger-books.ts), not from SQL.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { findApplication } from '../lib/apps/index.js';
import { explainCount } from '../lib/search/index.js';
import { answer, asQuery, CASES, ledger, queries, writeGnuCash, writeGnuCashWithGnuCash } from './ledger-books.js';
import { assertCliServesLedger, assertNotWholeCents, openLedgerBook, searchFor } from './support/app-serving.js';
import { run } from './support/cli-helpers.js';
import { databaseDir, tempDir } from './support/helpers.js';

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

test('a GnuCash date is the day GnuCash shows, also from books written before neutral time', async (t) => {
  const { db } = openBook(t, CASES, (writer) => {
    // GnuCash before neutral time stored the local midnight in UTC: Berlin's 14 March is the
    // 13th at 23:00, New York's the 14th at 05:00.
    writer
      .prepare(
        "UPDATE transactions SET post_date = '2026-03-13 23:00:00' WHERE description = 'Briefmarken für Mahnungen'",
      )
      .run();
    writer
      .prepare("UPDATE transactions SET post_date = '2026-03-15 05:00:00' WHERE description = 'Einkauf Schreibwaren'")
      .run();
    // Neutral time as GnuCash 4.13 writes it at UTC+14 and at UTC-11.
    writer
      .prepare("UPDATE transactions SET post_date = '2026-03-20 09:59:00' WHERE description = 'Pfand zurück'")
      .run();
    writer
      .prepare("UPDATE transactions SET post_date = '2026-03-01 11:59:00' WHERE description = 'Kaffee am Ersten'")
      .run();
  });
  const search = await searchFor(t, db, 'gnucash');
  const dates = async (query: string): Promise<string[]> =>
    ((await search(query)) as { buchungen: Array<{ datum: string }> }).buchungen.map((b) => b.datum);
  assert.deepEqual(await dates('von=2026-03-14&bis=2026-03-14&betrag=-12.5'), ['2026-03-14']);
  assert.deepEqual(await dates('von=2026-03-13&bis=2026-03-13&betrag=-12.5'), []);
  assert.deepEqual(await dates('von=2026-03-15&bis=2026-03-15&betrag=-43.5'), ['2026-03-15']);
  assert.deepEqual(await dates('von=2026-03-20&bis=2026-03-20&betrag=0.01'), ['2026-03-20']);
  assert.deepEqual(await dates('von=2026-03-01&bis=2026-03-01&betrag=-4.35'), ['2026-03-01']);
  assert.deepEqual(await dates('von=2026-03-02&bis=2026-03-02&betrag=-4.35'), []);
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
  );
  assert.match(
    stdout,
    /^ {2}- booking \d+ has the amount 1234\.5 \(in cents\), not whole cents: GnuCash holds an amount the service cannot answer exactly .*; correct the booking in GnuCash\.$/m,
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
    /^The typical search \(one amount in a month\) reads only its month, by the index tx_post_date_index: /m,
  );
  assert.doesNotMatch(check.stdout, /^Note: /m, 'Imbalance-EUR is at the top level, and no note');

  await assertCliServesLedger(t, file, 'gnucash', expected);
  assert.deepEqual(readFileSync(file), before);
});

test('check notes a GnuCash money account kept at the top level, which is not served', async (t) => {
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
    /^Note: accounts at the top level are not served \(GnuCash keeps its own Imbalance and Orphan accounts there\): Girokonto\. Move an account that holds money below "Assets" or "Liabilities" to serve it\.$/m,
  );
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'gnucash');
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=500'), { anzahl: 0, buchungen: [] });
});
