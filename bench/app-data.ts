// The 20,000-booking files of each application for bench/apps.ts, in each application's
// own schema: the own schema from fixtures/schema.sql, Actual through its own package
// (@actual-app/api, all its migrations and indexes), Money Manager Ex from its tables.sql
// (fixtures/mmex-tables.sql) with rows as MMEX writes them, GnuCash and KMyMoney from
// their own table definitions (fixtures/gnucash.sql, fixtures/kmymoney.sql). Ten years of a small business's
// cash, the same stream of bookings for each: typical prices, about 10% income, some splits
// and transfers. To add an application: one generator below, keyed by its --app name.

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { mulberry32 } from '../bin/books/demo.js';
import {
  type AccountKey,
  type LedgerTransaction,
  type Side,
  writeGnuCash,
  writeKMyMoney,
} from '../fixtures/ledger-books.js';

export interface BenchBooking {
  date: string;
  /** Expenses positive, as in the own schema. */
  cents: number;
  subject: string;
  category: number | undefined;
  /** 0 the cash box, 1 the bank account. */
  account: 0 | 1;
  split: boolean;
  transfer: boolean;
}

export const CATEGORIES = ['Porto', 'Bürobedarf', 'Bewirtung', 'Reisekosten', 'Reinigung', 'Sonstiges'];
export const ACCOUNTS = ['Barkasse', 'Girokonto'] as const;
const SUBJECTS = ['Post', 'Bäckerei', 'Tankstelle', 'Copyshop', 'Baumarkt', 'Kiosk', 'Taxi', 'Apotheke'];
const TYPICAL = [435, 1250, 95, 180, 250, 300, 500, 990, 1999, 2495, 4990, 85, 160, 370, 860, 120];
const DAY_MS = 86_400_000;
const END_MS = Date.parse('2026-10-31T00:00:00Z');
const DAYS = 3653;

/** The same `rows` bookings every time, in date order. */
export function bookingStream(rows: number): BenchBooking[] {
  const random = mulberry32(42);
  const gaussian = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const bookings: BenchBooking[] = [];
  for (let i = 0; i < rows; i += 1) {
    const date = new Date(END_MS - (DAYS - 1 - Math.floor((i * DAYS) / rows)) * DAY_MS).toISOString().slice(0, 10);
    const roll = random();
    const cents =
      roll < 0.1
        ? -1000 * (1 + Math.floor(random() * 50))
        : roll < 0.45
          ? (TYPICAL[Math.floor(random() ** 1.5 * TYPICAL.length)] as number)
          : Math.max(1, Math.min(99_999_999, Math.round(Math.exp(Math.log(1500) + 1.1 * gaussian()))));
    const kind = random();
    bookings.push({
      date,
      cents,
      subject: SUBJECTS[Math.floor(random() * SUBJECTS.length)] as string,
      category: random() < 0.15 ? undefined : Math.floor(random() * CATEGORIES.length),
      account: random() < 0.9 ? 0 : 1,
      split: kind < 0.02 && cents > 1,
      transfer: kind >= 0.02 && kind < 0.04,
    });
  }
  return bookings;
}

type Generator = (file: string, bookings: readonly BenchBooking[]) => Promise<void>;

export const GENERATORS: Record<string, Generator> = {
  async own(file, bookings) {
    const db = new Database(file);
    db.pragma('journal_mode = OFF');
    db.exec(readFileSync(new URL('../fixtures/schema.sql', import.meta.url), 'utf8'));
    const insert = db.prepare(
      'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (const [i, name] of CATEGORIES.entries()) db.prepare('INSERT INTO categories VALUES (?, ?)').run(i + 1, name);
      for (const [i, name] of ACCOUNTS.entries())
        db.prepare('INSERT INTO payment_methods VALUES (?, ?)').run(i + 1, name);
      for (const b of bookings) {
        insert.run(b.date, b.cents, b.subject, b.category === undefined ? null : b.category + 1, b.account + 1);
      }
    })();
    db.pragma('journal_mode = DELETE');
    db.close();
  },

  async actual(file, bookings) {
    const api = await import('@actual-app/api');
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-actual-'));
    const saved = { log: console.log, info: console.info, warn: console.warn, debug: console.debug };
    const nothing = (): void => {};
    Object.assign(console, { log: nothing, info: nothing, warn: nothing, debug: nothing });
    try {
      await api.init({ dataDir });
      await api.runImport('Bench', async () => {
        const group = await api.createCategoryGroup({ name: 'Ausgaben' });
        const categories: string[] = [];
        for (const name of CATEGORIES) categories.push(await api.createCategory({ name, group_id: group }));
        const accounts: string[] = [];
        for (const name of ACCOUNTS) accounts.push(await api.createAccount({ name, offbudget: false }, 0));
        const payees = await api.getPayees();
        const transferTo = (account: number) => payees.find((p) => p.transfer_acct === accounts[account])?.id;
        for (const account of [0, 1] as const) {
          const mine = bookings.filter((b) => b.account === account);
          for (let start = 0; start < mine.length; start += 2000) {
            const batch = mine.slice(start, start + 2000).map((b) => ({
              date: b.date,
              amount: -b.cents,
              ...(b.transfer ? { payee: transferTo(1 - account) } : { payee_name: b.subject }),
              ...(b.category === undefined || b.transfer || b.split ? {} : { category: categories[b.category] }),
              ...(b.split
                ? {
                    subtransactions: [
                      { amount: -Math.floor(b.cents / 2), category: categories[0] },
                      { amount: -(b.cents - Math.floor(b.cents / 2)), category: categories[1] },
                    ],
                  }
                : {}),
            }));
            await api.addTransactions(accounts[account] as string, batch as never, { runTransfers: true });
          }
        }
      });
      const [budget] = readdirSync(dataDir);
      await api.shutdown();
      copyFileSync(join(dataDir, budget as string, 'db.sqlite'), file);
    } finally {
      Object.assign(console, saved);
      rmSync(dataDir, { recursive: true, force: true });
    }
  },

  async mmex(file, bookings) {
    const db = new Database(file);
    db.pragma('journal_mode = OFF');
    db.exec(readFileSync(new URL('../fixtures/mmex-tables.sql', import.meta.url), 'utf8'));
    db.exec(`INSERT INTO CURRENCYFORMATS_V1 (CURRENCYID, CURRENCYNAME, SCALE, BASECONVRATE, CURRENCY_SYMBOL, CURRENCY_TYPE)
      VALUES (1, 'Euro', 100, 1, 'EUR', 'Fiat')`);
    const insert = db.prepare(`INSERT INTO CHECKINGACCOUNT_V1 (ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT,
        STATUS, NOTES, CATEGID, TRANSDATE, TOTRANSAMOUNT) VALUES (?, ?, ?, ?, ?, '', NULL, ?, ?, ?)`);
    const split = db.prepare('INSERT INTO SPLITTRANSACTIONS_V1 (TRANSID, CATEGID, SPLITTRANSAMOUNT) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (const [i, name] of ACCOUNTS.entries()) {
        db.prepare(`INSERT INTO ACCOUNTLIST_V1 (ACCOUNTID, ACCOUNTNAME, ACCOUNTTYPE, STATUS, FAVORITEACCT, CURRENCYID)
          VALUES (?, ?, 'Cash', 'Open', 'TRUE', 1)`).run(i + 1, name);
      }
      for (const [i, name] of CATEGORIES.entries()) {
        db.prepare('INSERT INTO CATEGORY_V1 (CATEGID, CATEGNAME, ACTIVE, PARENTID) VALUES (?, ?, 1, -1)').run(
          i + 1,
          name,
        );
      }
      for (const [i, name] of SUBJECTS.entries()) {
        db.prepare('INSERT INTO PAYEE_V1 (PAYEEID, PAYEENAME, ACTIVE) VALUES (?, ?, 1)').run(i + 1, name);
      }
      for (const b of bookings) {
        // REAL euros, always positive, the direction in TRANSCODE: as MMEX stores them.
        const euros = Math.abs(b.cents) / 100;
        const code = b.transfer ? 'Transfer' : b.cents < 0 ? 'Deposit' : 'Withdrawal';
        const { lastInsertRowid } = insert.run(
          b.account + 1,
          b.transfer ? 2 - b.account : -1,
          b.transfer ? -1 : 1 + SUBJECTS.indexOf(b.subject),
          code,
          euros,
          b.split ? -1 : b.category === undefined ? -1 : b.category + 1,
          `${b.date}T00:00:00`,
          euros,
        );
        if (b.split) {
          split.run(lastInsertRowid, 1, Math.floor(b.cents / 2) / 100);
          split.run(lastInsertRowid, 2, (b.cents - Math.floor(b.cents / 2)) / 100);
        }
      }
    })();
    db.pragma('journal_mode = DELETE');
    db.close();
  },
  // GnuCash's and KMyMoney's schemas, written by fixtures/ledger-books.ts (GnuCash's own DDL,
  // KMyMoney's SQL plugin's), from the same stream as a double-entry ledger.
  async gnucash(file, bookings) {
    writeGnuCash(file, toLedger(bookings));
  },
  async kmymoney(file, bookings) {
    writeKMyMoney(file, toLedger(bookings));
  },
};

/** The stream as double-entry transactions: the money account's side and its counterpart(s). */
function toLedger(bookings: readonly BenchBooking[]): LedgerTransaction[] {
  const EXPENSES: readonly AccountKey[] = ['porto', 'buero', 'bewirtung', 'reise', 'getraenke'];
  return bookings.map((b): LedgerTransaction => {
    const own: AccountKey = b.account === 0 ? 'kasse' : 'bank';
    const sides: Side[] = [{ account: own, cents: -b.cents }];
    if (b.transfer) sides.push({ account: own === 'kasse' ? 'bank' : 'kasse', cents: b.cents });
    else if (b.split) {
      const part = Math.floor(b.cents / 2);
      sides.push({ account: 'porto', cents: part }, { account: 'buero', cents: b.cents - part });
    } else if (b.category !== undefined) {
      sides.push({
        account: b.cents < 0 ? 'erloese' : (EXPENSES[b.category % EXPENSES.length] ?? 'porto'),
        cents: b.cents,
      });
    }
    return { date: b.date, description: b.subject, currency: 'EUR', sides };
  });
}
