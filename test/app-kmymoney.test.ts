// KMyMoney, served with one option (`app: "kmymoney"`, --app kmymoney) from a file in
// KMyMoney's own SQLite layout (fixtures/kmymoney.sql, from its SQL storage plugin's table
// definitions), written the way the plugin writes: a split transaction, transfers between
// cash and bank, a deleted transaction, an uncategorised booking (a single split), a cash
// account in US dollars, 0.01 and 1,234,567.89; each answer checked against the answer
// computed from the ledger (fixtures/ledger-books.ts), not from SQL.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { answer, asQuery, CASES, kmmSplitNumber, ledger, queries, writeKMyMoney } from '../fixtures/ledger-books.js';
import { findApplication } from '../lib/apps/index.js';
import { KMYMONEY_DATE_INDEX, kmymoney } from '../lib/apps/kmymoney.js';
import { explainCount } from '../lib/search/index.js';
import {
  assertCliServesLedger,
  assertDateRefused,
  assertNotWholeCents,
  openLedgerBook,
  searchFor,
} from './support/app-serving.js';
import { run } from './support/cli-helpers.js';
import { tempDir } from './support/helpers.js';

const openBook = (t: TestContext, book = CASES, prepare?: (writer: Database.Database) => void) =>
  openLedgerBook(t, 'kasse.kmy.sqlite', writeKMyMoney, book, prepare);

test('a KMyMoney file answers exactly what its ledger says, with app "kmymoney"', async (t) => {
  const { expected, db } = openBook(t);
  // The file holds what the test means to serve, as KMyMoney writes it.
  const one = (sql: string): unknown => db.prepare(sql).pluck().get();
  assert.equal(
    one("SELECT shares FROM kmmSplits WHERE transactionId = 'T000000000000000001' AND splitId = 0"),
    '-25/2',
  );
  assert.equal(one("SELECT count(*) FROM kmmSplits WHERE shares = '123456789/100' AND accountId = 'A000001'"), 1);
  assert.equal(one("SELECT count(*) FROM kmmTransactions WHERE memo = 'Gelöscht'"), 0, 'deleted');

  const search = await searchFor(t, db, 'kmymoney');
  // Pinned by hand: what a KMyMoney user sees in the cash account's ledger.
  assert.deepEqual(await search('von=2026-03-15&bis=2026-03-15&betrag=-43.5'), {
    anzahl: 1,
    buchungen: [
      {
        id: kmmSplitNumber(2, 0),
        datum: '2026-03-15',
        betrag: -43.5,
        zweck: 'Kiosk am Markt: Einkauf Schreibwaren',
        konto: 'Barkasse',
      },
    ],
  });
  // A split transaction is one booking with its whole amount and no category; a transfer
  // is a booking in each account, its zweck naming the other account.
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=0&toleranz=500'), {
    anzahl: 4,
    buchungen: [
      {
        id: kmmSplitNumber(4, 1),
        datum: '2026-03-16',
        betrag: 200,
        zweck: 'Girokonto: Barabhebung',
        konto: 'Barkasse',
      },
      {
        id: kmmSplitNumber(4, 0),
        datum: '2026-03-16',
        betrag: -200,
        zweck: 'Barkasse: Barabhebung',
        konto: 'Girokonto',
      },
      {
        id: kmmSplitNumber(3, 1),
        datum: '2026-03-16',
        betrag: 500,
        zweck: 'Barkasse: Bareinzahlung auf Girokonto',
        konto: 'Girokonto',
      },
      {
        id: kmmSplitNumber(3, 0),
        datum: '2026-03-16',
        betrag: -500,
        zweck: 'Girokonto: Bareinzahlung auf Girokonto',
        konto: 'Barkasse',
      },
    ],
  });
  // KMyMoney has no void: what GnuCash would void stays a booking. Deleted and US-dollar
  // bookings are not served; a booking without a category has none.
  assert.equal(((await search('von=2026-03-17&bis=2026-03-17&betrag=-9.99')) as { anzahl: number }).anzahl, 1);
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=-7.77'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-20&bis=2026-03-20&betrag=-12.5'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-18&bis=2026-03-18&betrag=-0.01'), {
    anzahl: 1,
    buchungen: [
      {
        id: kmmSplitNumber(7, 0),
        datum: '2026-03-18',
        betrag: -0.01,
        zweck: 'Kiosk am Markt: Ohne Kategorie',
        konto: 'Barkasse',
      },
    ],
  });
  for (const q of queries(expected)) assert.deepEqual(await search(asQuery(q)), answer(expected, q), asQuery(q));
});

test('a KMyMoney file with 2,000 more bookings answers like the ledger, with and without the index an admin may add', async (t) => {
  const book = ledger(2_000);
  for (const index of [undefined, KMYMONEY_DATE_INDEX]) {
    const { expected, db } = openBook(t, book, index === undefined ? undefined : (writer) => writer.exec(index));
    const search = await searchFor(t, db, 'kmymoney');
    const some = expected.filter((_, i) => i % 97 === 0);
    const all = [
      ...queries(expected),
      ...some.map((b) => ({ von: b.datum, bis: b.datum, cents: b.cents })),
      ...some.map((b) => ({ von: `${b.datum.slice(0, 7)}-01`, bis: b.datum, cents: b.cents, toleranz: 500, limit: 5 })),
    ];
    for (const q of all)
      assert.deepEqual(await search(asQuery(q)), answer(expected, q), `${asQuery(q)} ${index ?? ''}`);
  }
});

test('a KMyMoney split without a memo is named by its payee; a date from an upgraded file keeps its day', async (t) => {
  const { db } = openBook(t, CASES, (writer) => {
    writer.exec("UPDATE kmmSplits SET memo = '' WHERE transactionId = 'T000000000000000001'");
    writer.exec("UPDATE kmmTransactions SET memo = '' WHERE id = 'T000000000000000001'");
    writer.exec("UPDATE kmmSplits SET postDate = '2026-03-15T00:00:00' WHERE transactionId = 'T000000000000000002'");
  });
  const search = await searchFor(t, db, 'kmymoney');
  const first = (await search('von=2026-03-14&bis=2026-03-14&betrag=-12.5')) as { buchungen: Array<{ zweck: string }> };
  assert.equal(first.buchungen[0]?.zweck, 'Kiosk am Markt');
  const split = (await search('von=2026-03-15&bis=2026-03-15&betrag=-43.5')) as { buchungen: Array<{ datum: string }> };
  assert.deepEqual(
    split.buchungen.map((b) => b.datum),
    ['2026-03-15'],
  );
});

test('a KMyMoney amount that is not whole cents is a 500 with the reason in the log, never a rounded amount; check, the handler and the command refuse the file alike', async (t) => {
  const { db, file } = openBook(t, CASES);
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'kmymoney',
    'von=2026-03-14&bis=2026-03-14&betrag=-12.33&toleranz=0.01',
    (writer) => writer.exec("UPDATE kmmSplits SET shares = '-37/3' WHERE shares = '-25/2'"),
    '-37/3',
  );
  // The fraction as KMyMoney holds it: -37/3 has no decimal, and its float is no amount.
  assert.match(
    stdout,
    /^ {2}- the booking of 2026-03-14 in 'Barkasse' \('[^']+', id 1000\) has the amount -37\/3, not whole cents: KMyMoney holds an amount the service cannot answer exactly .*; correct the booking in KMyMoney\.$/m,
  );
});

test("a KMyMoney amount that is no fraction of whole numbers ('LEAKVAL', 'x/1', '1.5/1') is never read as 0: written after the start a search is a 500; check, the handler and the command refuse the file", async (t) => {
  const { db, file } = openBook(t, CASES);
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'kmymoney',
    'von=2026-03-14&bis=2026-03-14&betrag=-12.5',
    (writer) => writer.exec("UPDATE kmmSplits SET shares = 'LEAKVAL' WHERE shares = '-25/2'"),
  );
  assert.match(stdout, /^ {2}- the booking .*id 1000\) has no amount the service can read: /m);
  // What the mapping reads from each form of `shares`: NULL for anything but whole numbers.
  const writer = new Database(file);
  t.after(() => writer.close());
  const amountOf = (shares: string): unknown => {
    writer
      .prepare('UPDATE kmmSplits SET shares = ? WHERE transactionId = ? AND splitId = 0')
      .run(shares, 'T000000000000000001');
    return writer.prepare(`SELECT amount_cents FROM (${kmymoney.allBookings}) WHERE id = 1000`).pluck().get();
  };
  const read = (['-25/2', '-1250/1', '-12', '-37/3', 'LEAKVAL', 'x/1', '1.5/1', '-25/0', '-25/-2', ''] as const).map(
    amountOf,
  );
  assert.deepEqual(read, [1250, 125000, 1200, 1233.3333333333333, null, null, null, null, null, null]);
});

test("a KMyMoney split whose postDate is no date ('LEAK-DATE') or no day of the calendar (2026-02-31) is refused by check, the handler and the command, never left out unsaid", async (t) => {
  const { db, file, expected } = openBook(t, CASES);
  const split = "transactionId = 'T000000000000000001'";
  const stdout = await assertDateRefused(
    db,
    file,
    'kmymoney',
    (writer) => writer.exec(`UPDATE kmmSplits SET postDate = 'LEAK-DATE' WHERE ${split}`),
    /^ {2}- the booking .*id 1000\) has the date 'LEAK-DATE', not a day of the calendar as YYYY-MM-DD: KMyMoney holds a date the service cannot answer/m,
  );
  // Counted too, as the own schema's bookings are: every one, also one no window admits.
  assert.match(stdout, new RegExp(`^Bookings: ${expected.length}, dated .* to LEAK-DATE\\.$`, 'm'));
  await assertDateRefused(
    db,
    file,
    'kmymoney',
    (writer) => writer.exec(`UPDATE kmmSplits SET postDate = '2026-02-31' WHERE ${split}`),
    /^ {2}- the booking .*id 1000\) has the date '2026-02-31', not a day of the calendar as YYYY-MM-DD: /m,
  );
});

test("a KMyMoney postDate that begins with a day and goes on ('2026-03-14x') is no day: written after the start, a search of its day is a 500 naming it, limit=0 too; check, the handler and the command refuse the file", async (t) => {
  const { db, file } = openBook(t, CASES);
  const stdout = await assertDateRefused(
    db,
    file,
    'kmymoney',
    (writer) =>
      writer.exec("UPDATE kmmSplits SET postDate = '2026-03-14x' WHERE transactionId = 'T000000000000000001'"),
    /^ {2}- the booking .*id 1000\) has the date '2026-03-14x', not a day of the calendar as YYYY-MM-DD: KMyMoney holds a date the service cannot answer/m,
    { t, query: 'von=2026-03-14&bis=2026-03-14&betrag=-12.5' },
  );
  assert.doesNotMatch(stdout, /Data: fits/);
});

test("a KMyMoney file is searched by KMyMoney's own account index, or by the date index an admin added; `check --app kmymoney` says it fits, the CLI serves it, nothing is written", async (t) => {
  const { file, expected, db } = openBook(t, ledger(200));
  assert.ok(
    explainCount(db, undefined, findApplication('kmymoney')).includes(
      'SEARCH s USING INDEX kmmSplits_kmmSplitsaccount_type_idx (accountId=? AND txType=?)',
    ),
  );
  db.close();
  const withIndex = new Database(join(tempDir(t), 'indexed.sqlite'));
  withIndex.exec(readFileSync(new URL('../fixtures/kmymoney.sql', import.meta.url), 'utf8'));
  withIndex.exec(KMYMONEY_DATE_INDEX);
  const plan = explainCount(withIndex, undefined, findApplication('kmymoney'));
  withIndex.close();
  assert.ok(
    plan.includes(
      'SEARCH s USING INDEX kmmSplits_account_date (accountId=? AND txType=? AND postDate>? AND postDate<?)',
    ),
    plan.join('; '),
  );

  const before = readFileSync(file);
  const check = await run(['check', '--db', file, '--app', 'kmymoney']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /^Mapping: KMyMoney \(--app kmymoney\)\.$/m);
  assert.match(check.stdout, /^Data: fits /m);
  // Without the index, check says what an admin may add; the file still fits.
  assert.ok(
    check.stdout.includes(
      `It will be slow on a large book. An admin may add an index that reads only the month (docs/applications.md says what it costs KMyMoney): ${KMYMONEY_DATE_INDEX}\n`,
    ),
    check.stdout,
  );

  await assertCliServesLedger(t, file, 'kmymoney', expected);
  assert.deepEqual(readFileSync(file), before);
});

test('check notes two KMyMoney accounts of one name: konto cannot tell them apart', async (t) => {
  const { file } = openBook(t, CASES, (writer) =>
    writer.exec("UPDATE kmmAccounts SET accountName = 'Barkasse' WHERE accountName = 'Girokonto'"),
  );
  const check = await run(['check', '--db', file, '--app', 'kmymoney']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(
    check.stdout,
    /^Note: 2 served accounts are named 'Barkasse': a booking's konto is its account's own name; rename one in KMyMoney so that clients and konten can tell them apart\.$/m,
  );
});
