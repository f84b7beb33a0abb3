// The application mappings against an oracle on many bookings: random transactions written
// into Money Manager Ex's own tables, through Actual's own package and through GnuCash's own
// Python bindings, random searches, and every answer (count, ids, dates, amounts, order, and
// for MMEX and GnuCash the category) held to the rules applied to the data in JavaScript, or
// to what GnuCash itself reads from its book. Many bookings share a day, so the order by id
// within a day is tested too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import {
  type AccountKey,
  type LedgerTransaction,
  readGnuCashView,
  type Side,
  servedFromGnuCash,
  writeGnuCashBook,
} from '../fixtures/ledger-books.js';
import { hexPrefixIdOf } from '../lib/apps/ids.js';
import { findApplication } from '../lib/apps/index.js';
import type { ApplicationMapping } from '../lib/mapping.js';
import type { SearchQuery } from '../lib/query.js';
import { createBookingSearch } from '../lib/search/index.js';
import { writeActualBudget } from './support/actual-budget.js';
import { random } from './support/cash-book.js';
import { fixtureSql, tempDir } from './support/helpers.js';
import { mmexShownCents } from './support/mmex-amounts.js';

/** A booking as [id, date, stored cents], and its category where the test holds it too. */
type Row = [id: number, date: string, cents: number, category?: string | null];

const DAY_MS = 86_400_000;
const START = Date.UTC(2025, 0, 1);
const isoDate = (day: number): string => new Date(START + day * DAY_MS).toISOString().slice(0, 10);

/** The answer the contract asks for, from the bookings as [id, date, stored cents]. */
function oracle(rows: readonly Row[], q: SearchQuery): { count: number; rows: Row[] } {
  const low = -q.betragCents - q.toleranzCents;
  const high = -q.betragCents + q.toleranzCents;
  const matches = rows
    .filter(([, date, cents]) => date >= q.von && date <= q.bis && cents >= low && cents <= high)
    .sort((a, b) => (a[1] === b[1] ? b[0] - a[0] : a[1] < b[1] ? 1 : -1));
  return { count: matches.length, rows: matches.slice(0, q.limit) };
}

function queries(rows: readonly Row[], count: number, seed: number): SearchQuery[] {
  const next = random(seed);
  const lengths = [0, 0, 3, 30, 90, 400, 1000];
  const tolerances = [0, 0, 0, 1, 100, 500, 10_000, 99_999_999_999];
  return Array.from({ length: count }, () => {
    const from = Math.floor(next() * 420) - 20;
    const stored =
      next() < 0.8 ? (rows[Math.floor(next() * rows.length)] as Row)[2] : Math.floor(next() * 20_000) - 5_000;
    return {
      von: isoDate(from),
      bis: isoDate(from + (lengths[Math.floor(next() * lengths.length)] as number)),
      betragCents: -stored,
      toleranzCents: tolerances[Math.floor(next() * tolerances.length)] as number,
      waehrung: 'EUR',
      limit: [0, 1, 5, 50, 1000][Math.floor(next() * 5)] as number,
    };
  });
}

function assertSameAsOracle(db: Database.Database, mapping: ApplicationMapping, rows: readonly Row[]): void {
  const search = createBookingSearch(db, mapping);
  const withCategory = rows.some((row) => row.length === 4);
  for (const q of queries(rows, 400, 5)) {
    const answer = search(q);
    const expected = oracle(rows, q);
    assert.deepEqual(
      {
        count: answer.count,
        rows: answer.rows.map(([id, date, cents, , category]) =>
          withCategory ? [id, date, cents, category] : [id, date, cents],
        ),
      },
      expected,
      JSON.stringify(q),
    );
  }
}

test("Money Manager Ex: 3,000 random transactions, 400 random searches, each answer the oracle's", (t) => {
  const file = `${tempDir(t)}/random.mmb`;
  const db = new Database(file);
  db.exec(fixtureSql('mmex-tables.sql'));
  db.exec(`INSERT INTO CURRENCYFORMATS_V1 (CURRENCYID, CURRENCYNAME, SCALE, BASECONVRATE, CURRENCY_SYMBOL, CURRENCY_TYPE)
      VALUES (1, 'Euro', 100, 1, 'EUR', 'Fiat'), (2, 'US dollar', 100, 0.92, 'USD', 'Fiat');
    INSERT INTO ACCOUNTLIST_V1 (ACCOUNTID, ACCOUNTNAME, ACCOUNTTYPE, STATUS, FAVORITEACCT, CURRENCYID)
      VALUES (1, 'Barkasse', 'Cash', 'Open', 'TRUE', 1), (2, 'Girokonto', 'Checking', 'Open', 'TRUE', 1),
             (3, 'Dollarkonto', 'Checking', 'Open', 'TRUE', 2), (4, 'Firmenwagen', 'Asset', 'Open', 'TRUE', 1);
    INSERT INTO CATEGORY_V1 (CATEGID, CATEGNAME, ACTIVE, PARENTID)
      VALUES (1, 'Auto', 1, -1), (2, 'Wartung', 1, 1), (3, 'Reifen', 1, 2), (4, 'Porto', 1, -1);`);
  // Each category as MMEX names it: its whole path.
  const CATEGORY_PATHS = new Map([
    [-1, null],
    [1, 'Auto'],
    [2, 'Auto:Wartung'],
    [3, 'Auto:Wartung:Reifen'],
    [4, 'Porto'],
  ]);
  const insert =
    db.prepare(`INSERT INTO CHECKINGACCOUNT_V1 (TRANSID, ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT,
      STATUS, CATEGID, TRANSDATE, DELETEDTIME, TOTRANSAMOUNT) VALUES (?, ?, ?, -1, ?, ?, ?, ?, ?, ?, ?)`);
  const next = random(11);
  const expected: Row[] = [];
  db.transaction(() => {
    for (let id = 1; id <= 3000; id += 1) {
      const date = isoDate(Math.floor(next() * 365));
      // Whole cents written as MMEX writes them, a REAL number of euros (4.35, 0.1 + 0.2 …);
      // one in ten with three to six decimals, as imports write them (1.005, 12.3456 …).
      const decimals = next() < 0.1 ? 3 + Math.floor(next() * 4) : 2;
      const euros = Math.round((0.01 + next() ** 3 * 2_000) * 10 ** decimals) / 10 ** decimals;
      const roll = next();
      const code = roll < 0.7 ? 'Withdrawal' : roll < 0.85 ? 'Deposit' : 'Transfer';
      const account = next() < 0.85 ? 1 : next() < 0.5 ? 2 : next() < 0.5 ? 3 : 4;
      // An asset revaluation: a transfer from the asset account to itself.
      const to = code === 'Transfer' ? (account === 4 ? 4 : account === 1 ? (next() < 0.7 ? 2 : 3) : 1) : -1;
      const toEuros = to === 3 || account === 3 ? Math.round(euros * 108) / 100 : euros;
      const status = next() < 0.05 ? 'V' : next() < 0.3 ? 'R' : '';
      const deleted = next() < 0.05 ? '2026-01-01T10:00:00' : next() < 0.5 ? '' : null;
      const time = next() < 0.9 ? 'T00:00:00' : `T${String(Math.floor(next() * 24)).padStart(2, '0')}:30:00`;
      const category = [-1, -1, 1, 2, 3, 4][Math.floor(next() * 6)] as number;
      insert.run(id, account, to, code, euros, status, category, date + time, deleted, toEuros);
      if (status === 'V' || (deleted ?? '') !== '' || (code === 'Transfer' && to === account)) continue;
      const cents = mmexShownCents(euros);
      const path = CATEGORY_PATHS.get(category) ?? null;
      if (account !== 3) expected.push([id, date, code === 'Deposit' ? -cents : cents, path]);
      if (code === 'Transfer' && to !== 3) expected.push([-id, date, -mmexShownCents(toEuros), path]);
    }
  })();
  db.close();
  const reader = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => reader.close());
  assertSameAsOracle(reader, findApplication('mmex') as ApplicationMapping, expected);
});

test("Actual: 1,500 random transactions written by Actual itself, 400 random searches, each answer the oracle's", async (t) => {
  const next = random(17);
  const transactions = Array.from({ length: 1500 }, () => {
    const amount = -(1 + Math.floor(next() ** 3 * 200_000)) * (next() < 0.15 ? -1 : 1);
    const roll = next();
    return {
      date: isoDate(Math.floor(next() * 365)),
      amount,
      payee: 'Laden',
      ...(roll < 0.05
        ? { parts: [{ amount: Math.trunc(amount / 3) }, { amount: amount - Math.trunc(amount / 3) }] }
        : {}),
      ...(roll >= 0.05 && roll < 0.1 ? { transferTo: 'Girokonto' } : {}),
    };
  });
  const budget = await writeActualBudget(tempDir(t), {
    preferences: { defaultCurrencyCode: 'EUR' },
    categories: ['Porto'],
    accounts: [
      { name: 'Barkasse', transactions },
      { name: 'Girokonto', transactions: [] },
    ],
  });
  assert.equal(budget.preferences['defaultCurrencyCode'], 'EUR', 'a budget kept in euros, as Actual reads it');
  const expected: Row[] = budget.transactions.map((tx) => [hexPrefixIdOf(tx.id), tx.date, -tx.amount]);
  assert.ok(expected.length > 1500, 'the transfers have a second side');
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assertSameAsOracle(db, findApplication('actual') as ApplicationMapping, expected);
});

test('GnuCash: 300 random transactions written by GnuCash itself in Berlin, in both date forms, at any time of day, with trading accounts, 400 random searches, each answer what GnuCash reads', (t) => {
  const next = random(23);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const EXPENSES: AccountKey[] = ['porto', 'buero', 'bewirtung', 'reise', 'getraenke'];
  const book: LedgerTransaction[] = Array.from({ length: 300 }, (_, i) => {
    const cents = 1 + Math.floor(next() ** 3 * 200_000);
    const roll = next();
    const sides: Side[] =
      roll < 0.55
        ? [
            { account: 'kasse', cents: -cents },
            { account: pick(EXPENSES), cents },
          ]
        : roll < 0.65
          ? // Two splits in one expense account: a split transaction in GnuCash.
            [
              { account: 'kasse', cents: -cents },
              { account: 'porto', cents: Math.floor(cents / 3) },
              { account: 'porto', cents: cents - Math.floor(cents / 3) },
            ]
          : roll < 0.75
            ? [
                { account: 'bank', cents: -cents },
                { account: 'kasse', cents },
              ]
            : roll < 0.85
              ? // A dollar bill paid from the euro bank: GnuCash adds its trading splits.
                [
                  { account: 'bank', cents: -cents },
                  { account: 'hotel', cents, amount: Math.round(cents * 1.08) },
                ]
              : roll < 0.9
                ? [
                    { account: 'bank', cents: -cents },
                    { account: 'dollar', cents, amount: Math.round(cents * 1.08) },
                  ]
                : [
                    { account: 'kasse', cents },
                    { account: 'erloese', cents: -cents },
                  ];
    const when = next();
    const time =
      when < 0.5
        ? undefined
        : when < 0.75
          ? '00:00:00'
          : `${String(Math.floor(next() * 24)).padStart(2, '0')}:${String(Math.floor(next() * 60)).padStart(2, '0')}:00`;
    return {
      date: isoDate(Math.floor(next() * 365)),
      description: `Buchung ${i}`,
      currency: 'EUR',
      sides,
      ...(time === undefined ? {} : { time }),
    };
  });
  const file = `${tempDir(t)}/random.gnucash`;
  writeGnuCashBook(file, book, { trading: true, timeZone: 'Europe/Berlin' });
  // One in three as GnuCash before 2.6.20 stored it: the same UTC time as YYYYMMDDhhmmss.
  const writer = new Database(file);
  writer.exec("UPDATE transactions SET post_date = strftime('%Y%m%d%H%M%S', post_date) WHERE rowid % 3 = 0");
  writer.close();
  const view = readGnuCashView(file, 'Europe/Berlin');
  const expected: Row[] = servedFromGnuCash(view).map((b) => [b.id, b.datum, -b.cents, b.kategorie ?? null]);
  assert.ok(expected.length > 300, 'transfers are a booking in each account');
  const saved = process.env['TZ'];
  process.env['TZ'] = 'Europe/Berlin';
  t.after(() => {
    if (saved === undefined) delete process.env['TZ'];
    else process.env['TZ'] = saved;
  });
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assertSameAsOracle(db, findApplication('gnucash') as ApplicationMapping, expected);
});
