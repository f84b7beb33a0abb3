// Money Manager Ex, served with one option (`app: "mmex"`, --app mmex) from a file made of
// MMEX's own tables (fixtures/mmex-tables.sql, copied from its tables.sql) holding rows as
// MMEX writes them: REAL amounts always positive with a direction code, date-times, a
// split, transfers within EUR and from a dollar account, a transaction in the trash, a
// void one, an uncategorised one, 0.01 and 1,234,567.89. Each answer is checked against
// the rules applied to the data in JavaScript.

import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { findApplication } from '../lib/apps/index.js';
import { type Booking, createHandler } from '../lib/index.js';
import { createBookingSearch, explainCount } from '../lib/search/index.js';
import {
  assertAnswersEverySearch,
  assertDateRefused,
  assertNotWholeCents,
  assertRefusedAsCheckSays,
  searchFor,
  writeBook,
} from './support/app-serving.js';
import { run, start, TIME, until, waitFor } from './support/cli-helpers.js';
import {
  AUTH,
  assertReply,
  CREDENTIALS,
  databaseDir,
  fixtureSql,
  get,
  request,
  serve,
  tempDir,
} from './support/helpers.js';
import { mmexShownCents } from './support/mmex-amounts.js';

interface Tx {
  id: number;
  account: number;
  to?: number;
  payee?: number;
  code: 'Withdrawal' | 'Deposit' | 'Transfer';
  amount: number;
  toAmount?: number;
  status?: string;
  notes?: string;
  category?: number;
  date: string;
  deleted?: string;
}

const ACCOUNTS = new Map([
  [1, { name: 'Barkasse', currency: 1, type: 'Cash' }],
  [2, { name: 'Girokonto', currency: 1, type: 'Checking' }],
  [3, { name: 'Dollarkonto', currency: 2, type: 'Checking' }],
  // An asset account (MMEX 1.9.1+), bought from the bank and revalued.
  [4, { name: 'Firmenwagen', currency: 1, type: 'Asset' }],
]);
const CATEGORIES = new Map<number, [string, number]>([
  [1, ['Porto', -1]],
  [2, ['Bürobedarf', -1]],
  [3, ['Papier', 2]],
  // Three levels, as MMEX lets a user nest them.
  [4, ['Auto', -1]],
  [5, ['Wartung', 4]],
  [6, ['Reifen', 5]],
]);
const PAYEES = new Map([
  [1, 'Post'],
  [2, 'Laden'],
]);
const TRANSACTIONS: Tx[] = [
  {
    id: 1,
    account: 1,
    payee: 1,
    code: 'Withdrawal',
    amount: 12.5,
    category: 1,
    notes: 'Briefmarken',
    date: '2026-03-14T00:00:00',
  },
  { id: 2, account: 1, payee: 2, code: 'Withdrawal', amount: 4.35, category: 3, date: '2026-03-14T00:00:00' },
  {
    id: 3,
    account: 1,
    payee: 2,
    code: 'Withdrawal',
    amount: 30,
    category: -1,
    notes: 'Einkauf',
    date: '2026-03-15T00:00:00',
  },
  {
    id: 4,
    account: 1,
    to: 2,
    payee: -1,
    code: 'Transfer',
    amount: 50,
    toAmount: 50,
    notes: 'Einzahlung Bank',
    date: '2026-03-16T00:00:00',
  },
  {
    id: 5,
    account: 1,
    payee: 1,
    code: 'Withdrawal',
    amount: 7.77,
    date: '2026-03-17T00:00:00',
    deleted: '2026-03-18T10:00:00',
  },
  { id: 6, account: 1, payee: 1, code: 'Withdrawal', amount: 8.88, status: 'V', date: '2026-03-17T00:00:00' },
  {
    id: 7,
    account: 1,
    payee: -1,
    code: 'Withdrawal',
    amount: 19.99,
    notes: 'Druckerpatrone',
    date: '2026-03-18T00:00:00',
  },
  {
    id: 8,
    account: 1,
    payee: 1,
    code: 'Withdrawal',
    amount: 0.01,
    category: 1,
    date: '2026-03-20T00:00:00',
    status: 'R',
  },
  {
    id: 9,
    account: 2,
    payee: 2,
    code: 'Deposit',
    amount: 1234567.89,
    notes: 'Größter Posten',
    date: '2026-03-21T00:00:00',
  },
  { id: 10, account: 3, payee: 1, code: 'Withdrawal', amount: 12.5, category: 1, date: '2026-03-14T00:00:00' },
  { id: 11, account: 3, to: 1, payee: -1, code: 'Transfer', amount: 100, toAmount: 92.5, date: '2026-03-22T00:00:00' },
  { id: 12, account: 1, payee: 1, code: 'Withdrawal', amount: 12.5, category: 1, date: '2026-03-31T18:30:00' },
  { id: 13, account: 1, payee: 1, code: 'Withdrawal', amount: 12.5, category: 1, date: '2026-04-01T00:00:00' },
  { id: 14, account: 1, payee: 1, code: 'Withdrawal', amount: 12.5, category: 1, date: '2026-02-28T00:00:00' },
  // A date as MMEX wrote it before schema 20.
  { id: 15, account: 1, payee: 1, code: 'Withdrawal', amount: 5, category: 2, date: '2026-03-10', deleted: '' },
  // The asset bought from the bank, then revalued: a transfer from the asset account to itself.
  { id: 16, account: 2, to: 4, payee: -1, code: 'Transfer', amount: 25000, notes: 'Kauf', date: '2026-03-23T00:00:00' },
  {
    id: 17,
    account: 4,
    to: 4,
    payee: -1,
    code: 'Transfer',
    amount: 20000,
    notes: 'Neubewertung',
    date: '2026-03-24T00:00:00',
  },
  // Amounts with more than two decimals, as imports write them: MMEX shows 1.01, 2.68,
  // 1,234,567.12 (a binary tie, to even) and 0.13.
  { id: 18, account: 1, payee: 2, code: 'Withdrawal', amount: 1.005, category: 6, date: '2026-03-25T00:00:00' },
  { id: 19, account: 1, payee: 2, code: 'Withdrawal', amount: 2.675, category: 5, date: '2026-03-25T00:00:00' },
  { id: 20, account: 2, payee: 2, code: 'Deposit', amount: 1234567.125, date: '2026-03-26T00:00:00' },
  { id: 21, account: 1, payee: 1, code: 'Withdrawal', amount: 0.125, category: 1, date: '2026-03-26T00:00:00' },
];

/** Writes MMEX's tables and the rows above, as MMEX stores them, into a new file. */
function writeMmexFile(file: string): void {
  const db = new Database(file);
  db.exec(fixtureSql('mmex-tables.sql'));
  db.exec(`INSERT INTO CURRENCYFORMATS_V1 (CURRENCYID, CURRENCYNAME, PFX_SYMBOL, SFX_SYMBOL, DECIMAL_POINT, GROUP_SEPARATOR,
      UNIT_NAME, CENT_NAME, SCALE, BASECONVRATE, CURRENCY_SYMBOL, CURRENCY_TYPE)
    VALUES (1, 'Euro', '€', '', ',', '.', '', '', 100, 1, 'EUR', 'Fiat'),
           (2, 'US dollar', '$', '', '.', ',', '', '', 100, 0.92, 'USD', 'Fiat')`);
  const account = db.prepare(
    "INSERT INTO ACCOUNTLIST_V1 (ACCOUNTID, ACCOUNTNAME, ACCOUNTTYPE, STATUS, FAVORITEACCT, CURRENCYID) VALUES (?, ?, ?, 'Open', 'TRUE', ?)",
  );
  for (const [id, { name, currency, type }] of ACCOUNTS) account.run(id, name, type, currency);
  const category = db.prepare('INSERT INTO CATEGORY_V1 (CATEGID, CATEGNAME, ACTIVE, PARENTID) VALUES (?, ?, 1, ?)');
  for (const [id, [name, parent]] of CATEGORIES) category.run(id, name, parent);
  const payee = db.prepare('INSERT INTO PAYEE_V1 (PAYEEID, PAYEENAME, ACTIVE) VALUES (?, ?, 1)');
  for (const [id, name] of PAYEES) payee.run(id, name);
  const insert =
    db.prepare(`INSERT INTO CHECKINGACCOUNT_V1 (TRANSID, ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT,
      STATUS, NOTES, CATEGID, TRANSDATE, DELETEDTIME, TOTRANSAMOUNT) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const tx of TRANSACTIONS) {
    insert.run(
      tx.id,
      tx.account,
      tx.to ?? -1,
      tx.payee ?? -1,
      tx.code,
      tx.amount,
      tx.status ?? '',
      tx.notes ?? null,
      tx.category ?? -1,
      tx.date,
      tx.deleted ?? null,
      tx.toAmount ?? tx.amount,
    );
  }
  db.exec(
    `INSERT INTO SPLITTRANSACTIONS_V1 (TRANSID, CATEGID, SPLITTRANSAMOUNT, NOTES) VALUES (3, 1, 10, 'Marken'), (3, 2, 20, 'Papier')`,
  );
  db.close();
}

/**
 * docs/applications.md, Money Manager Ex, applied to the rows in JavaScript: categories by
 * their whole path joined by `delimiter`, amounts as MMEX shows them (mmexShownCents),
 * revaluations (a transfer to the same account) left out.
 */
function expectedBookings(delimiter = ':'): Booking[] {
  const joined = (counterpart: string | undefined, notes: string | undefined) =>
    [counterpart ?? '', notes ?? ''].filter((part) => part !== '').join(': ');
  const path = (id: number): string | undefined => {
    const [name, parent] = CATEGORIES.get(id) ?? [];
    if (name === undefined) return undefined;
    const above = path(parent ?? -1);
    return above === undefined ? name : `${above}${delimiter}${name}`;
  };
  const categoryName = (id: number | undefined) => {
    const name = path(id ?? -1);
    return name === undefined ? {} : { kategorie: name };
  };
  const isEuro = (account: number | undefined) => ACCOUNTS.get(account ?? -1)?.currency === 1;
  const bookings: Booking[] = [];
  for (const tx of TRANSACTIONS) {
    if ((tx.deleted ?? '') !== '' || tx.status === 'V') continue;
    if (tx.code === 'Transfer' && tx.to === tx.account) continue;
    const datum = tx.date.slice(0, 10);
    const shown = mmexShownCents(tx.amount) / 100;
    if (isEuro(tx.account)) {
      const counterpart = tx.code === 'Transfer' ? ACCOUNTS.get(tx.to ?? -1)?.name : PAYEES.get(tx.payee ?? -1);
      bookings.push({
        id: tx.id,
        datum,
        // The client's sign: what leaves the account is negative.
        betrag: tx.code === 'Deposit' ? shown : -shown,
        zweck: joined(counterpart, tx.notes),
        ...categoryName(tx.category),
        konto: ACCOUNTS.get(tx.account)?.name as string,
      });
    }
    if (tx.code === 'Transfer' && isEuro(tx.to)) {
      bookings.push({
        id: -tx.id,
        datum,
        betrag: mmexShownCents(tx.toAmount ?? tx.amount) / 100,
        zweck: joined(ACCOUNTS.get(tx.account)?.name, tx.notes),
        ...categoryName(tx.category),
        konto: ACCOUNTS.get(tx.to ?? -1)?.name as string,
      });
    }
  }
  return bookings;
}

test('a Money Manager Ex file answers by MMEX rules with app "mmex": signs, splits, transfers, trash, void, currency, asset revaluations, categories three deep, amounts with more decimals', async (t) => {
  const file = join(tempDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'mmex');

  // Pinned by hand.
  assert.deepEqual(await search('von=2026-03-14&bis=2026-03-14&betrag=-4.35'), {
    anzahl: 1,
    buchungen: [
      { id: 2, datum: '2026-03-14', betrag: -4.35, zweck: 'Laden', kategorie: 'Bürobedarf:Papier', konto: 'Barkasse' },
    ],
  });
  assert.deepEqual(await search('von=2026-03-15&bis=2026-03-15&betrag=-30'), {
    anzahl: 1,
    buchungen: [{ id: 3, datum: '2026-03-15', betrag: -30, zweck: 'Laden: Einkauf', konto: 'Barkasse' }],
  });
  assert.deepEqual(await search('von=2026-03-16&bis=2026-03-16&betrag=0&toleranz=50'), {
    anzahl: 2,
    buchungen: [
      { id: 4, datum: '2026-03-16', betrag: -50, zweck: 'Girokonto: Einzahlung Bank', konto: 'Barkasse' },
      { id: -4, datum: '2026-03-16', betrag: 50, zweck: 'Barkasse: Einzahlung Bank', konto: 'Girokonto' },
    ],
  });
  assert.deepEqual(await search('von=2026-03-22&bis=2026-03-22&betrag=92.5'), {
    anzahl: 1,
    buchungen: [{ id: -11, datum: '2026-03-22', betrag: 92.5, zweck: 'Dollarkonto', konto: 'Barkasse' }],
  });
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=0&toleranz=100'), { anzahl: 0, buchungen: [] });
  assert.deepEqual(await search('von=2026-03-31&bis=2026-03-31&betrag=-12.5'), {
    anzahl: 1,
    buchungen: [{ id: 12, datum: '2026-03-31', betrag: -12.5, zweck: 'Post', kategorie: 'Porto', konto: 'Barkasse' }],
  });

  // Pinned by hand: an asset revaluation moves no money; a category three levels deep by
  // its whole path; amounts with more decimals as MMEX shows them.
  assert.deepEqual(await search('von=2026-03-24&bis=2026-03-24&betrag=0&toleranz=100000'), {
    anzahl: 0,
    buchungen: [],
  });
  assert.deepEqual(await search('von=2026-03-25&bis=2026-03-25&betrag=-1.01'), {
    anzahl: 1,
    buchungen: [
      {
        id: 18,
        datum: '2026-03-25',
        betrag: -1.01,
        zweck: 'Laden',
        kategorie: 'Auto:Wartung:Reifen',
        konto: 'Barkasse',
      },
    ],
  });
  assert.deepEqual(await search('von=2026-03-25&bis=2026-03-25&betrag=-2.68'), {
    anzahl: 1,
    buchungen: [
      { id: 19, datum: '2026-03-25', betrag: -2.68, zweck: 'Laden', kategorie: 'Auto:Wartung', konto: 'Barkasse' },
    ],
  });
  assert.deepEqual(await search('von=2026-03-26&bis=2026-03-26&betrag=1234567.12'), {
    anzahl: 1,
    buchungen: [{ id: 20, datum: '2026-03-26', betrag: 1234567.12, zweck: 'Laden', konto: 'Girokonto' }],
  });

  const all = expectedBookings();
  assert.equal(
    all.length,
    19,
    'twenty-one rows, three transfers twice, one in the trash, one void, two of the dollar account, one revaluation',
  );
  await assertAnswersEverySearch(search, all, ['2026-03-10', '2026-03-10', -5, 0, 50]);
  const everything = (await search('von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=9999999&limit=1000')) as {
    buchungen: Booking[];
  };
  assert.ok(everything.buchungen.some((b) => b.betrag === -0.01 && b.id === 8));
  assert.ok(everything.buchungen.some((b) => b.betrag === 1234567.89 && b.zweck === 'Laden: Größter Posten'));
  assert.ok(everything.buchungen.some((b) => b.id === 7 && b.zweck === 'Druckerpatrone' && !('kategorie' in b)));
  assert.ok(!everything.buchungen.some((b) => b.id === 10 || b.id === 11), 'nothing of the dollar account');
});

test('check explains the count the search itself runs over a Money Manager Ex file, not a statement of its own', (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    prepared.push(source);
    return prepare(source);
  }) as typeof db.prepare;
  const mapping = findApplication('mmex');
  assert.ok(mapping !== undefined);
  createBookingSearch(db, mapping);
  const searched = [...prepared];
  explainCount(db, undefined, mapping);
  const explained = prepared.slice(searched.length).find((source) => source.startsWith('EXPLAIN QUERY PLAN '));
  assert.ok(explained !== undefined, prepared.join('\n'));
  assert.ok(searched.includes(explained.slice('EXPLAIN QUERY PLAN '.length)), explained);
});

test("a Money Manager Ex file is searched by MMEX's own TRANSDATE index; check recognises it and changes nothing", async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const before = readFileSync(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const plan = explainCount(db, undefined, findApplication('mmex'));
  db.close();
  assert.equal(
    plan.filter((line) => /USING INDEX IDX_CHECKINGACCOUNT_TRANSDATE \(TRANSDATE>\? AND TRANSDATE<\?\)/.test(line))
      .length,
    2,
    plan.join('; '),
  );
  assert.ok(!plan.some((line) => /^SCAN t\b/.test(line)), plan.join('; '));
  const result = await run(['check', '--db', file]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    /^Mapping: Money Manager Ex \(recognised from its tables, as the service recognises it; --app mmex names it\)\.$/m,
  );
  assert.match(result.stdout, /^Bookings: 19, dated 2026-02-28 to 2026-04-01\.$/m);
  assert.match(result.stdout, /^Data: fits \(19 bookings looked at: /m);
  assert.match(
    result.stdout,
    /^Note: 1 asset revaluation is not served \(a transfer from an account to itself\): MMEX counts it as 0, as moving no money\.$/m,
  );
  assert.match(
    result.stdout,
    /^Note: 4 amounts have more than two decimals \(written by an import or another program\), served as MMEX shows them: rounded to the cent, 1\.005 as 1\.01\.$/m,
  );
  assert.match(
    result.stdout,
    /^The typical search \(one amount in a month\) reads only its month, by the index IDX_CHECKINGACCOUNT_TRANSDATE\.$/m,
  );
  assert.match(result.stdout, /^A real search, \?von=2026-04-01&bis=2026-04-30&betrag=-12\.5&limit=3, answers:$/m);
  assert.deepEqual(readFileSync(file), before);
});

test('a Money Manager Ex file served without --app: recognised by its tables as check recognises it, served as with --app mmex, and the start line names it', async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const before = readFileSync(file);
  const server = await start(t, ['--db', file]);
  assert.match(
    server.output().stdout,
    new RegExp(
      `^${TIME} booking-search-server listening on http://127\\.0\\.0\\.1:\\d+/api/v1/ \\(${file}: recognised as Money Manager Ex's file by its tables, served as with --app mmex\\)$`,
      'm',
    ),
  );
  const reply = await get(`${server.api}buchungen?von=2026-03-31&bis=2026-03-31&betrag=-12.5`);
  assertReply(reply, 200, {
    anzahl: 1,
    buchungen: [{ id: 12, datum: '2026-03-31', betrag: -12.5, zweck: 'Post', kategorie: 'Porto', konto: 'Barkasse' }],
  });
  await server.stop();
  // --app still forces a mapping: the own schema is then missing, and the line names --app mmex.
  const forced = await run(['--db', file, '--port', '0', '--app', 'own']);
  assert.equal(forced.code, 1);
  assert.match(forced.stderr, /the file has the tables of Money Manager Ex: serve it with --app mmex/);
  assert.deepEqual(readFileSync(file), before);
});

test("Money Manager Ex's category delimiter (View options) joins the path as MMEX shows it", async (t) => {
  const file = join(tempDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const writer = new Database(file);
  writer.prepare("INSERT INTO INFOTABLE_V1 (INFONAME, INFOVALUE) VALUES ('CATEG_DELIMITER', ' / ')").run();
  writer.close();
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const search = await searchFor(t, db, 'mmex');
  assert.deepEqual(await search('von=2026-03-25&bis=2026-03-25&betrag=-1.01'), {
    anzahl: 1,
    buchungen: [
      {
        id: 18,
        datum: '2026-03-25',
        betrag: -1.01,
        zweck: 'Laden',
        kategorie: 'Auto / Wartung / Reifen',
        konto: 'Barkasse',
      },
    ],
  });
  await assertAnswersEverySearch(search, expectedBookings(' / '));
});

test('a Money Manager Ex file whose euro shows other than two decimals is refused by check, the handler and the command alike', async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const writer = new Database(file);
  writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = 1000 WHERE CURRENCY_SYMBOL = 'EUR'").run();
  writer.close();
  const check = await run(['check', '--db', file, '--app', 'mmex']);
  assert.equal(check.code, 1, check.stdout);
  assert.match(
    check.stdout,
    /^ {2}- the euro's SCALE in Money Manager Ex is 1000, so MMEX shows euro amounts with other than two decimals, and the service answers whole cents only: set the euro's scale back to 100 in MMEX's currency dialog to serve this file\.$/m,
  );
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  await assertRefusedAsCheckSays(db, file, 'mmex', check.stdout, undefined, t);
  // Changed while served: each search reads the scale the file holds now.
  const scale = (value: number) =>
    writeBook(file, (writer) => {
      writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = ? WHERE CURRENCY_SYMBOL = 'EUR'").run(value);
    });
  scale(100);
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app: 'mmex' }));
  const status = async () =>
    (await get(`${origin}/api/v1/buchungen?von=2026-03-14&bis=2026-03-14&betrag=-4.35`)).status;
  assert.equal(await status(), 200);
  scale(1000);
  assert.equal(await status(), 500);
  scale(100);
  assert.equal(await status(), 200);
});

test("a reload that points a served book at a file its application's setting refuses changes nothing: the running configuration kept, the book served from its file", async (t) => {
  const good = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(good);
  const scaled = join(databaseDir(t), 'skaliert.mmb');
  writeMmexFile(scaled);
  const writer = new Database(scaled);
  writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = 1000 WHERE CURRENCY_SYMBOL = 'EUR'").run();
  writer.close();
  const config = join(tempDir(t), 'books.conf');
  const book = (file: string): void =>
    writeFileSync(config, `[book kasse]\ndb = ${file}\napp = mmex\n`, { mode: 0o600 });
  book(good);
  const cli = await start(t, ['--config', config]);
  const status = async () =>
    (
      await request(`${cli.origin}/api/v1/buchungen?von=2026-03-14&bis=2026-03-14&betrag=-4.35`, {
        headers: { authorization: AUTH },
      })
    ).status;
  assert.equal(await status(), 200);
  book(scaled);
  cli.child.kill('SIGHUP');
  await waitFor(
    () => cli.output().stderr,
    /SIGHUP: keeping the running configuration: .*the euro's SCALE in Money Manager Ex is 1000/,
  );
  assert.equal(await status(), 200);
});

test("with --workers, a file its application's setting refuses starts the service as one process does: each worker says it, searches answer 500, and the file is served once the setting changes back", async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const scale = (value: number) =>
    writeBook(file, (writer) => {
      writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = ? WHERE CURRENCY_SYMBOL = 'EUR'").run(value);
    });
  scale(1000);
  const cli = await start(t, ['--db', file, '--app', 'mmex', '--workers', '2']);
  const status = async () =>
    (
      await request(`${cli.api}buchungen?von=2026-03-14&bis=2026-03-14&betrag=-4.35`, {
        headers: { authorization: AUTH },
      })
    ).status;
  await waitFor(() => cli.output().stderr, /Searches answer 500 until that no longer holds$/m);
  assert.equal(await status(), 500);
  scale(100);
  await waitFor(() => cli.output().stderr, /what refused it no longer holds; serving it$/m);
  await until(async () => (await status()) === 200, 'served again by every worker');
});

test('a Money Manager Ex file that MMEX keeps writing, its euro SCALE set to 1000: the command names the refusal within seconds (log, /ready), its searches are 500 database_unavailable with Retry-After, and it serves the file again once the scale is 100', async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const cli = await start(t, ['--db', file, '--app', 'mmex', '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1] as string;
  const search = () => get(`${cli.api}buchungen?von=2026-03-14&bis=2026-03-14&betrag=-4.35`);
  assert.equal((await search()).status, 200);
  // MMEX at work on a connection of its own: a row every 80 ms, each changing the file
  // while the command opens and checks it.
  const writer = new Database(file);
  const insert =
    writer.prepare(`INSERT INTO CHECKINGACCOUNT_V1 (ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT,
      STATUS, CATEGID, TRANSDATE, TOTRANSAMOUNT) VALUES (1, -1, 1, 'Withdrawal', 1, '', 1, '2026-04-02T00:00:00', 1)`);
  const writing = setInterval(() => insert.run(), 80);
  t.after(() => {
    clearInterval(writing);
    writer.close();
  });
  const scale = (value: number) =>
    writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = ? WHERE CURRENCY_SYMBOL = 'EUR'").run(value);
  scale(1000);
  const said = /the euro's SCALE in Money Manager Ex is 1000/;
  const deadline = Date.now() + 5_000;
  for (;;) {
    await search();
    const ready = await request(`${admin}/ready`);
    if (said.test(ready.body)) break;
    if (Date.now() > deadline) assert.fail(`/ready: ${ready.body}; ${JSON.stringify(cli.output())}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match(cli.output().stderr, said);
  const refused = await search();
  assert.equal(refused.status, 500, refused.body);
  // It passes once the application's setting is changed back: retried, as a lock is.
  assert.equal((JSON.parse(refused.body) as { code: string }).code, 'database_unavailable');
  assert.equal(refused.headers['retry-after'], '1');
  assert.match(cli.output().stderr, /to serve this file\. Searches answer 500 until that no longer holds$/m);
  // Changed back, then MMEX idle: a refused file is read again once it stood still for a look.
  scale(100);
  clearInterval(writing);
  await waitFor(() => cli.output().stderr, /serving it$/m);
  assert.match(cli.output().stderr, /Z database \S+: what refused it no longer holds; serving it$/m);
  assert.equal((await search()).status, 200);
  clearInterval(writing);
  assert.equal((await cli.stop()).code, 0);
});

test('a Money Manager Ex file in WAL mode refused by its SCALE is served again once the scale is 100, the change still in its -wal (the file itself unchanged until a checkpoint)', async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  t.after(() => writer.close());
  const cli = await start(t, ['--db', file, '--app', 'mmex']);
  const search = () => get(`${cli.api}buchungen?von=2026-03-14&bis=2026-03-14&betrag=-4.35`);
  assert.equal((await search()).status, 200);
  const scale = (value: number) =>
    writer.prepare("UPDATE CURRENCYFORMATS_V1 SET SCALE = ? WHERE CURRENCY_SYMBOL = 'EUR'").run(value);
  scale(1000);
  await waitFor(() => cli.output().stderr, /Searches answer 500 until that no longer holds$/m);
  assert.equal((await search()).status, 500);
  const file0 = statSync(file);
  scale(100);
  await waitFor(() => cli.output().stderr, /what refused it no longer holds; serving it$/m);
  assert.equal((await search()).status, 200);
  const file1 = statSync(file);
  assert.deepEqual([file1.size, file1.mtimeMs], [file0.size, file0.mtimeMs], 'the change is in the -wal alone');
  assert.equal((await cli.stop()).code, 0);
});

test("a Money Manager Ex amount that is no number ('LEAKAMT') is never read as 0: written after the start a search is a 500; check, the handler and the command refuse the file", async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const stdout = await assertNotWholeCents(
    t,
    db,
    file,
    'mmex',
    'von=2026-03-14&bis=2026-03-14&betrag=-4.35',
    (writer) => writer.exec("UPDATE CHECKINGACCOUNT_V1 SET TRANSAMOUNT = 'LEAKAMT' WHERE TRANSID = 2"),
  );
  assert.match(stdout, /^ {2}- the booking .*id 2\) has no amount the service can read: /m);
});

test("a Money Manager Ex TRANSDATE that is no date ('LEAK-DATE') or no day of the calendar (2026-02-31) is refused by check, the handler and the command, never left out unsaid", async (t) => {
  const file = join(databaseDir(t), 'kasse.mmb');
  writeMmexFile(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const dated = (date: string) => (writer: Database.Database) =>
    writer.prepare('UPDATE CHECKINGACCOUNT_V1 SET TRANSDATE = ? WHERE TRANSID = 2').run(date);
  await assertDateRefused(
    db,
    file,
    'mmex',
    dated('LEAK-DATE'),
    /^ {2}- the booking .*id 2\) has the date 'LEAK-DATE', not a day of the calendar as YYYY-MM-DD: Money Manager Ex holds a date the service cannot answer/m,
  );
  await assertDateRefused(
    db,
    file,
    'mmex',
    dated('2026-02-31T00:00:00'),
    /^ {2}- the booking .*id 2\) has the date '2026-02-31', not a day of the calendar as YYYY-MM-DD: /m,
  );
});

test("a Money Manager Ex TRANSDATE that begins with a day and goes on ('2026-03-14x', '2026-03-14T00:00:00 junk') is no day: written after the start, a search of its day is a 500 naming it, limit=0 too; check, the handler and the command refuse the file", async (t) => {
  for (const date of ['2026-03-14x', '2026-03-14T00:00:00 junk']) {
    const file = join(databaseDir(t), 'kasse.mmb');
    writeMmexFile(file);
    const db = new Database(file, { readonly: true, fileMustExist: true });
    t.after(() => db.close());
    await assertDateRefused(
      db,
      file,
      'mmex',
      (writer) => writer.prepare('UPDATE CHECKINGACCOUNT_V1 SET TRANSDATE = ? WHERE TRANSID = 2').run(date),
      new RegExp(
        `^ {2}- the booking .*id 2\\) has the date '${date}', not a day of the calendar as YYYY-MM-DD: Money Manager Ex holds a date`,
        'm',
      ),
      { t, query: 'von=2026-03-14&bis=2026-03-14&betrag=-4.35' },
    );
  }
});
