// The application mappings against an oracle on many bookings: random transactions written
// into Money Manager Ex's own tables and through Actual's own package, random searches, and
// every answer (count, ids, dates, amounts, order) held to the rules applied to the data in
// JavaScript. Many bookings share a day, so the order by id within a day is tested too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { hexPrefixIdOf } from '../lib/apps/ids.js';
import { findApplication } from '../lib/apps/index.js';
import type { ApplicationMapping } from '../lib/mapping.js';
import type { SearchQuery } from '../lib/query.js';
import { createBookingSearch } from '../lib/search/index.js';
import { writeActualBudget } from './actual-budget.js';
import { random } from './support/cash-book.js';
import { fixtureSql, tempDir } from './support/helpers.js';

type Row = [id: number, date: string, cents: number];

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
  for (const q of queries(rows, 400, 5)) {
    const answer = search(q);
    const expected = oracle(rows, q);
    assert.deepEqual(
      { count: answer.count, rows: answer.rows.map(([id, date, cents]) => [id, date, cents]) },
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
             (3, 'Dollarkonto', 'Checking', 'Open', 'TRUE', 2);`);
  const insert =
    db.prepare(`INSERT INTO CHECKINGACCOUNT_V1 (TRANSID, ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT,
      STATUS, CATEGID, TRANSDATE, DELETEDTIME, TOTRANSAMOUNT) VALUES (?, ?, ?, -1, ?, ?, ?, -1, ?, ?, ?)`);
  const next = random(11);
  const expected: Row[] = [];
  db.transaction(() => {
    for (let id = 1; id <= 3000; id += 1) {
      const date = isoDate(Math.floor(next() * 365));
      // Whole cents written as MMEX writes them: a REAL number of euros (4.35, 0.1 + 0.2 …).
      const cents = 1 + Math.floor(next() ** 3 * 200_000);
      const euros = cents / 100;
      const roll = next();
      const code = roll < 0.7 ? 'Withdrawal' : roll < 0.85 ? 'Deposit' : 'Transfer';
      const account = next() < 0.85 ? 1 : next() < 0.5 ? 2 : 3;
      const to = code === 'Transfer' ? (account === 1 ? (next() < 0.7 ? 2 : 3) : 1) : -1;
      const toCents = to === 3 || account === 3 ? Math.round(cents * 1.08) : cents;
      const status = next() < 0.05 ? 'V' : next() < 0.3 ? 'R' : '';
      const deleted = next() < 0.05 ? '2026-01-01T10:00:00' : next() < 0.5 ? '' : null;
      const time = next() < 0.9 ? 'T00:00:00' : `T${String(Math.floor(next() * 24)).padStart(2, '0')}:30:00`;
      insert.run(id, account, to, code, euros, status, date + time, deleted, toCents / 100);
      if (status === 'V' || (deleted ?? '') !== '') continue;
      if (account !== 3) expected.push([id, date, code === 'Deposit' ? -cents : cents]);
      if (code === 'Transfer' && to !== 3) expected.push([-id, date, -toCents]);
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
    categories: ['Porto'],
    accounts: [
      { name: 'Barkasse', transactions },
      { name: 'Girokonto', transactions: [] },
    ],
  });
  const expected: Row[] = budget.transactions.map((tx) => [hexPrefixIdOf(tx.id), tx.date, -tx.amount]);
  assert.ok(expected.length > 1500, 'the transfers have a second side');
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assertSameAsOracle(db, findApplication('actual') as ApplicationMapping, expected);
});
