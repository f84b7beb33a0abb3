// Double-entry books for the gnucash and kmymoney mappings, written into each
// application's own schema (fixtures/gnucash.sql, fixtures/kmymoney.sql) the way the
// application writes them, and the answers the service must give, computed here from the
// ledger itself, never with the mapping's SQL.
//
// One ledger feeds both applications: a cash account ("Barkasse") and a bank account
// ("Girokonto"), a cash account in US dollars ("Dollarkasse"), expense and income
// categories as accounts, a split transaction with several expense splits, transfers
// between cash and bank, voided and deleted transactions, an uncategorised booking, 0.01
// and 1,234,567.89. `bookings` adds that many random cash bookings over ten years (for the
// benchmarks: 20,000). The same arguments always give the same file.
//
//   node --import tsx test/ledger-books.ts gnucash|kmymoney FILE [BOOKINGS]

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { mulberry32 } from '../bin/demo.js';
import { hexPrefixIdOf } from '../lib/apps/ids.js';

export type AccountKey =
  | 'kasse'
  | 'bank'
  | 'dollar'
  | 'porto'
  | 'buero'
  | 'bewirtung'
  | 'reise'
  | 'getraenke'
  | 'erloese'
  | 'zinsen'
  | 'hotel';

interface AccountDef {
  name: string;
  kind: 'cash' | 'bank' | 'expense' | 'income';
  currency: 'EUR' | 'USD';
}

export const ACCOUNTS: Record<AccountKey, AccountDef> = {
  kasse: { name: 'Barkasse', kind: 'cash', currency: 'EUR' },
  bank: { name: 'Girokonto', kind: 'bank', currency: 'EUR' },
  dollar: { name: 'Dollarkasse', kind: 'cash', currency: 'USD' },
  porto: { name: 'Porto', kind: 'expense', currency: 'EUR' },
  buero: { name: 'Bürobedarf', kind: 'expense', currency: 'EUR' },
  bewirtung: { name: 'Bewirtung', kind: 'expense', currency: 'EUR' },
  reise: { name: 'Reisekosten', kind: 'expense', currency: 'EUR' },
  getraenke: { name: 'Getränke', kind: 'expense', currency: 'EUR' },
  erloese: { name: 'Erlöse', kind: 'income', currency: 'EUR' },
  zinsen: { name: 'Zinserträge', kind: 'income', currency: 'EUR' },
  // An expense account in dollars: a bill abroad, paid from a euro account.
  hotel: { name: 'Hotel USA', kind: 'expense', currency: 'USD' },
};
const EXPENSES: AccountKey[] = ['porto', 'buero', 'bewirtung', 'reise', 'getraenke'];

/** One side of a transaction: cents from the account's view (money leaving an asset is negative). */
export interface Side {
  account: AccountKey;
  cents: number;
  /** GnuCash: the amount in the account's own currency where it differs from `cents` (the transaction's). */
  amount?: number;
  memo?: string;
}

/** A transaction; `sides` without a counter-side is an uncategorised booking. */
export interface LedgerTransaction {
  date: string;
  description: string;
  currency: 'EUR' | 'USD';
  sides: Side[];
  /** GnuCash: voided (values 0, reconcile_state 'v'). KMyMoney has no void; it keeps such a transaction as it was. */
  voided?: boolean;
  /**
   * GnuCash: the local time of day ('HH:MM:SS') a script or importer gave the date through
   * GnuCash's API, instead of GnuCash's neutral 10:59 UTC.
   */
  time?: string;
  /** Written, then deleted the way the application deletes it. */
  deleted?: boolean;
}

/** A booking as the service must answer it (amount in the client's convention, cents). */
export interface ExpectedBooking {
  id: number;
  datum: string;
  cents: number;
  zweck: string;
  kategorie?: string;
  konto: string;
}

/** The transactions every test book holds, all in March 2026 unless the case is a date edge. */
export const CASES: LedgerTransaction[] = [
  tx('2026-03-14', 'Briefmarken für Mahnungen', [side('kasse', -1250), side('porto', 1250)]),
  // A split transaction: one cash movement, two categories.
  tx('2026-03-15', 'Einkauf Schreibwaren', [
    side('kasse', -4350),
    side('porto', 350, 'Marken'),
    side('buero', 4000, 'Papier'),
  ]),
  // Transfers between cash and bank, both directions.
  tx('2026-03-16', 'Bareinzahlung auf Girokonto', [side('kasse', -50000), side('bank', 50000)]),
  tx('2026-03-16', 'Barabhebung', [side('bank', -20000), side('kasse', 20000)]),
  { ...tx('2026-03-17', 'Falsch erfasst', [side('kasse', -999), side('porto', 999)]), voided: true },
  { ...tx('2026-03-17', 'Gelöscht', [side('kasse', -777), side('porto', 777)]), deleted: true },
  // No counter-account: GnuCash books the other side to Imbalance-EUR, KMyMoney keeps one split.
  tx('2026-03-18', 'Ohne Kategorie', [side('kasse', -1)]),
  tx('2026-03-19', 'Großauftrag bar', [side('kasse', 123_456_789), side('erloese', -123_456_789)]),
  tx('2026-03-19', 'Größter Posten', [side('kasse', -123_456_789), side('reise', 123_456_789)]),
  tx('2026-03-20', 'Pfand zurück', [side('kasse', 1), side('getraenke', -1)]),
  // A second currency: a cash account in US dollars, never an EUR booking.
  tx('2026-03-20', 'Briefmarken USA', [side('dollar', -1250), side('porto', 1250)], 'USD'),
  // Date edges and two bookings with the same date and amount.
  tx('2026-02-28', 'Kaffee im Februar', [side('kasse', -435), side('bewirtung', 435)]),
  tx('2026-03-01', 'Kaffee am Ersten', [side('kasse', -435), side('bewirtung', 435)]),
  tx('2026-03-31', 'Kaffee am Letzten', [side('kasse', -435), side('bewirtung', 435)]),
  tx('2026-03-31', 'Noch ein Kaffee', [side('kasse', -435), side('bewirtung', 435)]),
  tx('2026-04-01', 'Kaffee im April', [side('kasse', -435), side('bewirtung', 435)]),
];

function tx(date: string, description: string, sides: Side[], currency: 'EUR' | 'USD' = 'EUR'): LedgerTransaction {
  return { date, description, currency, sides };
}
function side(account: AccountKey, cents: number, memo?: string): Side {
  return memo === undefined ? { account, cents } : { account, cents, memo };
}

/** The fixed cases, then `bookings` random cash bookings over the ten years before `end`. */
export function ledger(bookings = 0, end = '2026-10-31'): LedgerTransaction[] {
  const random = mulberry32(20_260_314);
  const endMs = Date.parse(`${end}T00:00:00Z`);
  const days = Math.round(10 * 365.25);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const PRICES = [435, 1250, 250, 1999, 500, 8990, 1];
  const out = [...CASES];
  for (let i = 0; i < bookings; i++) {
    const date = new Date(endMs - Math.floor(random() * days) * 86_400_000).toISOString().slice(0, 10);
    const r = random();
    const cents = r < 0.3 ? pick(PRICES) : Math.max(1, Math.round(Math.exp(random() * 11)));
    const kind = random();
    if (kind < 0.75) {
      out.push(tx(date, `Ausgabe ${i}`, [side('kasse', -cents), side(pick(EXPENSES), cents)]));
    } else if (kind < 0.85) {
      out.push(tx(date, `Einnahme ${i}`, [side('kasse', cents), side('erloese', -cents)]));
    } else if (kind < 0.9) {
      const part = Math.floor(cents / 3);
      out.push(
        tx(date, `Einkauf ${i}`, [
          side('kasse', -cents),
          side(pick(EXPENSES), part, 'Teil 1'),
          side(pick(EXPENSES), cents - part, 'Teil 2'),
        ]),
      );
    } else if (kind < 0.95) {
      out.push(tx(date, `Bank ${i}`, [side('kasse', -cents), side('bank', cents)]));
    } else {
      // Bank bookings without cash: never a cash booking, but rows the search steps over.
      out.push(tx(date, `Überweisung ${i}`, [side('bank', -cents), side(pick(EXPENSES), cents)]));
    }
  }
  return out;
}

/**
 * What the service answers for `book`, independent of any SQL (docs/applications.md): one
 * booking per side in a money account (cash or bank) in EUR. With exactly one other
 * account, a money account makes it a transfer (zweck 'Other: text', no kategorie) and
 * any other account is its kategorie; several other accounts (a split) or none give no
 * kategorie. zweck is otherwise 'Payee: text' (text: the description). With `bySplit`
 * (GnuCash), the other side is counted by splits: two splits in one account are a split
 * transaction, as GnuCash's register shows them.
 */
export function expectedBookings(
  book: LedgerTransaction[],
  idOf: (transactionIndex: number, sideIndex: number) => number,
  app: { voids: boolean; uncategorised?: string; payee?: string; bySplit?: boolean },
): ExpectedBooking[] {
  const joined = (a: string | undefined, b: string): string => [a ?? '', b].filter((part) => part !== '').join(': ');
  const isMoney = (key: AccountKey): boolean => ACCOUNTS[key].kind === 'cash' || ACCOUNTS[key].kind === 'bank';
  const out: ExpectedBooking[] = [];
  book.forEach((t, ti) => {
    if (t.deleted || (t.voided && app.voids)) return;
    t.sides.forEach((s, si) => {
      const account = ACCOUNTS[s.account];
      if (!isMoney(s.account) || account.currency !== 'EUR') return;
      const otherSides = t.sides.filter((_, i) => i !== si).map((o) => o.account);
      const others = app.bySplit === true ? otherSides : [...new Set(otherSides)];
      const booking: ExpectedBooking = {
        id: idOf(ti, si),
        datum: t.date,
        cents: s.amount ?? s.cents,
        zweck: joined(app.payee, t.description),
        konto: account.name,
      };
      const [other] = others;
      if (others.length === 1 && other !== undefined && isMoney(other)) {
        booking.zweck = joined(ACCOUNTS[other].name, t.description);
      } else if (others.length === 1 && other !== undefined) {
        booking.kategorie = ACCOUNTS[other].name;
      } else if (others.length === 0 && app.uncategorised !== undefined) {
        booking.kategorie = app.uncategorised;
      }
      out.push(booking);
    });
  });
  return out;
}

/** A search in cents: the period, the amount, the tolerance and the limit. */
export type LedgerQuery = { von: string; bis: string; cents: number; toleranz?: number; limit?: number };

/** The searches every book is held to: each amount exactly in March, bands, every date. */
export function queries(bookings: ExpectedBooking[]): LedgerQuery[] {
  const march = bookings.filter((b) => b.datum.startsWith('2026-03'));
  return [
    ...march.map((b) => ({ von: '2026-03-01', bis: '2026-03-31', cents: b.cents })),
    { von: '2026-03-01', bis: '2026-03-31', cents: -1250, toleranz: 500 },
    { von: '2026-03-01', bis: '2026-03-31', cents: 0, toleranz: 1 },
    { von: '2026-03-16', bis: '2026-03-16', cents: 0, toleranz: 100_000, limit: 10 },
    { von: '2026-03-01', bis: '2026-03-31', cents: -435, limit: 1 },
    { von: '2026-02-28', bis: '2026-04-01', cents: -435 },
    { von: '2000-01-01', bis: '2099-12-31', cents: 0, toleranz: 999_999_999, limit: 1000 },
  ];
}

/** A search as the query string the service reads. */
export const asQuery = (q: LedgerQuery): string =>
  `von=${q.von}&bis=${q.bis}&betrag=${q.cents / 100}&toleranz=${(q.toleranz ?? 0) / 100}&limit=${q.limit ?? 50}`;

/** docs/API.md's processing steps 4 to 6, on expected bookings. */
export function answer(
  bookings: ExpectedBooking[],
  query: LedgerQuery,
): { anzahl: number; buchungen: Array<Record<string, unknown>> } {
  const tolerance = query.toleranz ?? 0;
  const matches = bookings
    .filter((b) => b.datum >= query.von && b.datum <= query.bis && Math.abs(b.cents - query.cents) <= tolerance)
    .sort((a, b) => (a.datum === b.datum ? b.id - a.id : a.datum < b.datum ? 1 : -1));
  return {
    anzahl: matches.length,
    buchungen: matches.slice(0, query.limit ?? 50).map((b) => ({
      id: b.id,
      datum: b.datum,
      betrag: b.cents / 100,
      zweck: b.zweck,
      ...(b.kategorie === undefined ? {} : { kategorie: b.kategorie }),
      konto: b.konto,
    })),
  };
}

// ---------------------------------------------------------------------------------------
// GnuCash

/** The name GnuCash gives the account that takes the other side of an unbalanced transaction. */
export const GNUCASH_IMBALANCE = 'Imbalance-EUR';

/** Writes `book` into a new GnuCash book at `file`; returns the expected bookings. */
export function writeGnuCash(file: string, book: LedgerTransaction[]): ExpectedBooking[] {
  const db = new Database(file);
  db.exec(readFileSync(new URL('../fixtures/gnucash.sql', import.meta.url), 'utf8'));
  const random = mulberry32(4_013);
  const guid = (): string =>
    Array.from({ length: 4 }, () =>
      Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0'),
    ).join('');
  const commodity = (mnemonic: string, fullname: string): string => {
    const id = guid();
    db.prepare('INSERT INTO commodities VALUES (?, ?, ?, ?, ?, 100, 1, ?, NULL)').run(
      id,
      'CURRENCY',
      mnemonic,
      fullname,
      mnemonic === 'EUR' ? '978' : '840',
      'currency',
    );
    return id;
  };
  const currencies = { EUR: commodity('EUR', 'Euro'), USD: commodity('USD', 'US Dollar') };
  const insertAccount = db.prepare('INSERT INTO accounts VALUES (?, ?, ?, ?, 100, 0, ?, ?, ?, 0, 0)');
  const root = guid();
  insertAccount.run(root, 'Root Account', 'ROOT', null, null, '', '');
  db.prepare('UPDATE accounts SET commodity_scu = 0 WHERE guid = ?').run(root);
  db.prepare('INSERT INTO books VALUES (?, ?, ?)').run(guid(), root, guid());
  const parent = (name: string, type: string): string => {
    const id = guid();
    insertAccount.run(id, name, type, currencies.EUR, root, '', '');
    return id;
  };
  const parents = {
    cash: parent('Aktiva', 'ASSET'),
    expense: parent('Aufwand', 'EXPENSE'),
    income: parent('Erträge', 'INCOME'),
  };
  const TYPE = { cash: 'CASH', bank: 'BANK', expense: 'EXPENSE', income: 'INCOME' } as const;
  const accounts = {} as Record<AccountKey, string>;
  for (const [key, def] of Object.entries(ACCOUNTS) as [AccountKey, AccountDef][]) {
    const id = guid();
    const under = def.kind === 'bank' ? parents.cash : parents[def.kind];
    insertAccount.run(id, def.name, TYPE[def.kind], currencies[def.currency], under, '', '');
    accounts[key] = id;
  }
  // GnuCash creates it on the first unbalanced transaction: top level, type BANK.
  const imbalance = guid();
  insertAccount.run(imbalance, GNUCASH_IMBALANCE, 'BANK', currencies.EUR, root, '', '');

  const insertTx = db.prepare('INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?)');
  const insertSplit = db.prepare(
    "INSERT INTO splits VALUES (?, ?, ?, ?, '', ?, '1970-01-01 00:00:00', ?, 100, ?, 100, NULL)",
  );
  const insertSlot = db.prepare(
    "INSERT INTO slots (obj_guid, name, slot_type, string_val, timespec_val, gdate_val) VALUES (?, ?, ?, ?, '1970-01-01 00:00:00', ?)",
  );
  const ids = new Map<string, number>();
  db.transaction(() => {
    book.forEach((t, ti) => {
      const id = guid();
      insertTx.run(id, currencies[t.currency], '', `${t.date} 10:59:00`, '2026-11-24 08:23:22', t.description);
      insertSlot.run(id, 'date-posted', 10, null, t.date.replaceAll('-', ''));
      const sides = t.sides.length === 1 ? [...t.sides, null] : t.sides;
      sides.forEach((s, si) => {
        const splitGuid = guid();
        const cents = s === null ? -(t.sides[0] as Side).cents : s.cents;
        const account = s === null ? imbalance : accounts[s.account];
        const value = t.voided ? 0 : cents;
        insertSplit.run(splitGuid, id, account, s?.memo ?? '', t.voided ? 'v' : 'n', value, value);
        ids.set(`${ti}/${si}`, hexPrefixIdOf(splitGuid));
        if (t.voided) {
          for (const name of ['void-former-amount', 'void-former-value'])
            insertSlot.run(splitGuid, name, 3, null, null);
        }
      });
      if (t.voided) {
        insertSlot.run(id, 'notes', 4, 'Voided transaction', null);
        insertSlot.run(id, 'trans-read-only', 4, 'Transaction Voided', null);
        insertSlot.run(id, 'void-reason', 4, 'Falsch erfasst', null);
      }
      if (t.deleted) {
        // GnuCash deletes a transaction's splits, slots and row.
        db.prepare(
          'DELETE FROM slots WHERE obj_guid = ? OR obj_guid IN (SELECT guid FROM splits WHERE tx_guid = ?)',
        ).run(id, id);
        db.prepare('DELETE FROM splits WHERE tx_guid = ?').run(id);
        db.prepare('DELETE FROM transactions WHERE guid = ?').run(id);
      }
    });
  })();
  db.close();
  return expectedBookings(book, (ti, si) => ids.get(`${ti}/${si}`) as number, {
    voids: true,
    uncategorised: GNUCASH_IMBALANCE,
    bySplit: true,
  });
}

/** The Python that has Debian's python3-gnucash (test/system-tools.sh installs it). */
export const GNUCASH_PYTHON = '/usr/bin/python3';

/** test/gnucash-book.py run by GnuCash's Python in `timeZone` (default: the process's own). */
function gnucashPython(mode: 'write' | 'read', file: string, input: string, timeZone?: string): string {
  return execFileSync(GNUCASH_PYTHON, [new URL('gnucash-book.py', import.meta.url).pathname, mode, file], {
    input,
    encoding: 'utf8',
    // GnuCash logs its backend's chatter to stderr; only a failure matters.
    stdio: ['pipe', 'pipe', 'pipe'],
    // Without HOME GnuCash 4.13 looks for a home directory to write its settings to.
    env: {
      ...process.env,
      HOME: process.env.HOME ?? '/tmp',
      ...(timeZone === undefined ? {} : { TZ: timeZone }),
    },
  });
}

/**
 * Writes `book` with GnuCash's own Python bindings (test/gnucash-book.py), in `timeZone`, so
 * that the file is GnuCash's, not an imitation: its neutral time, its Imbalance-EUR, its
 * void, its trading splits (`trading`: the book option "Use Trading Accounts"). Returns the
 * guids of each transaction's splits, in the order of its sides.
 */
export function writeGnuCashBook(
  file: string,
  book: LedgerTransaction[],
  options: { trading?: boolean; timeZone?: string } = {},
): string[][] {
  const TYPE = { cash: 'CASH', bank: 'BANK', expense: 'EXPENSE', income: 'INCOME' } as const;
  const accounts = Object.fromEntries(
    Object.entries(ACCOUNTS).map(([key, def]) => [
      key,
      { name: def.name, type: TYPE[def.kind], currency: def.currency },
    ]),
  );
  const input = JSON.stringify({ accounts, transactions: book, trading: options.trading === true });
  return JSON.parse(gnucashPython('write', file, input, options.timeZone)) as string[][];
}

/**
 * `book` written by GnuCash itself (writeGnuCashBook); the bookings expected from the
 * ledger, where every transaction has at most one split per account.
 */
export function writeGnuCashWithGnuCash(file: string, book: LedgerTransaction[]): ExpectedBooking[] {
  const guids = writeGnuCashBook(file, book);
  return expectedBookings(book, (ti, si) => hexPrefixIdOf(guids[ti]?.[si] ?? ''), {
    voids: true,
    uncategorised: GNUCASH_IMBALANCE,
    bySplit: true,
  });
}

/** A split as GnuCash itself reads it from a book (test/gnucash-book.py read). */
export interface GnuCashSplitView {
  guid: string;
  account: string;
  type: string;
  commodity: string;
  topLevel: boolean;
  void: boolean;
  /** The day GnuCash shows, in the time zone it ran in. */
  date: string;
  amountNum: number;
  amountDenom: number;
  description: string;
  /** The account GnuCash's register names as the other side; null for a split transaction. */
  other: { account: string; type: string; topLevel: boolean } | null;
}

/** Every split of the book `file` as GnuCash 4.13 reads it, in `timeZone`. */
export function readGnuCashView(file: string, timeZone?: string): GnuCashSplitView[] {
  return JSON.parse(gnucashPython('read', file, '', timeZone)) as GnuCashSplitView[];
}

const GNUCASH_MONEY_TYPES = ['CASH', 'BANK', 'CREDIT', 'ASSET', 'LIABILITY'];

/**
 * What the service must answer for a book GnuCash read as `view` (docs/applications.md,
 * GnuCash, applied to GnuCash's own reading): one booking per split in a money account
 * below the top level in EUR that is not void, on the day GnuCash shows, its amount; the
 * other account GnuCash names is a transfer when it holds money (zweck 'Other:
 * description', no kategorie), else the kategorie; none for a split transaction.
 */
export function servedFromGnuCash(view: GnuCashSplitView[]): ExpectedBooking[] {
  const isMoney = (type: string, topLevel: boolean): boolean => GNUCASH_MONEY_TYPES.includes(type) && !topLevel;
  return view
    .filter((s) => isMoney(s.type, s.topLevel) && s.commodity === 'EUR' && !s.void)
    .map((s) => {
      const transfer = s.other !== null && isMoney(s.other.type, s.other.topLevel);
      const booking: ExpectedBooking = {
        id: hexPrefixIdOf(s.guid),
        datum: s.date,
        cents: (s.amountNum * 100) / s.amountDenom,
        zweck: transfer ? [s.other?.account, s.description].filter((part) => part !== '').join(': ') : s.description,
        konto: s.account,
      };
      if (s.other !== null && !transfer) booking.kategorie = s.other.account;
      return booking;
    });
}

// ---------------------------------------------------------------------------------------
// KMyMoney

/** AlkValue::toString: the reduced fraction, '/1' for a whole number. */
export function kmmFraction(cents: number): string {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(Math.abs(cents), 100) || 100;
  return `${cents / g}/${100 / g}`;
}

/** The payee of every KMyMoney transaction the generator writes. */
export const KMM_PAYEE = 'Kiosk am Markt';

/** The id the kmymoney mapping gives a split: transaction number × 1000 + splitId. */
export function kmmSplitNumber(transaction: number, split: number): number {
  return transaction * 1000 + split;
}

/** Writes `book` into a new KMyMoney database at `file`; returns the expected bookings. */
export function writeKMyMoney(file: string, book: LedgerTransaction[]): ExpectedBooking[] {
  const db = new Database(file);
  db.exec(readFileSync(new URL('../fixtures/kmymoney.sql', import.meta.url), 'utf8'));
  const insertAccount = db.prepare(
    'INSERT INTO kmmAccounts (id, parentId, accountType, accountTypeString, isStockAccount, accountName, currencyId, openingDate) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  // eMyMoney::Account::Type, which KMyMoney binds as an integer into a varchar column: '3'.
  const TYPE = { cash: 3, bank: 1, expense: 13, income: 12 } as const;
  for (const [id, type, name] of [
    ['AStd::Asset', 9, 'Asset'],
    ['AStd::Liability', 10, 'Liability'],
    ['AStd::Expense', 13, 'Expense'],
    ['AStd::Income', 12, 'Income'],
    ['AStd::Equity', 16, 'Equity'],
  ] as const) {
    insertAccount.run(id, null, String(type), name, 'N', name, null, null);
  }
  const accounts = {} as Record<AccountKey, string>;
  let n = 0;
  for (const [key, def] of Object.entries(ACCOUNTS) as [AccountKey, AccountDef][]) {
    const id = `A${String(++n).padStart(6, '0')}`;
    const parentId = def.kind === 'expense' ? 'AStd::Expense' : def.kind === 'income' ? 'AStd::Income' : 'AStd::Asset';
    insertAccount.run(id, parentId, String(TYPE[def.kind]), def.kind, 'N', def.name, def.currency, '2016-01-01');
    accounts[key] = id;
  }
  db.prepare("INSERT INTO kmmPayees (id, name) VALUES ('P000001', ?)").run(KMM_PAYEE);
  const insertTx = db.prepare("INSERT INTO kmmTransactions VALUES (?, 'N', ?, ?, '2026-11-24', ?, '')");
  const insertSplit = db.prepare(
    "INSERT INTO kmmSplits VALUES (?, 'N', ?, 'P000001', NULL, ?, '0', ?, ?, ?, ?, NULL, NULL, ?, ?, NULL, '', ?, '')",
  );
  db.transaction(() => {
    book.forEach((t, ti) => {
      const id = `T${String(ti + 1).padStart(18, '0')}`;
      insertTx.run(id, t.date, t.description, t.currency);
      t.sides.forEach((s, si) => {
        const fraction = kmmFraction(s.cents);
        const formatted = (s.cents / 100).toFixed(2);
        const action = ACCOUNTS[s.account].kind === 'cash' ? (s.cents < 0 ? 'Withdrawal' : 'Deposit') : '';
        // The first split's memo is the transaction's (KMyMoney's ledger shows it as the memo).
        const memo = si === 0 ? t.description : (s.memo ?? '');
        insertSplit.run(id, si, action, fraction, formatted, fraction, formatted, memo, accounts[s.account], t.date);
      });
      if (t.deleted) {
        db.prepare('DELETE FROM kmmSplits WHERE transactionId = ?').run(id);
        db.prepare('DELETE FROM kmmTransactions WHERE id = ?').run(id);
      }
    });
  })();
  db.close();
  return expectedBookings(book, (ti, si) => kmmSplitNumber(ti + 1, si), { voids: false, payee: KMM_PAYEE });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [app, file, count] = process.argv.slice(2);
  if ((app !== 'gnucash' && app !== 'kmymoney') || file === undefined) {
    throw new Error('usage: ledger-books.ts gnucash|kmymoney FILE [BOOKINGS]');
  }
  const book = ledger(Number(count ?? 0));
  const expected = (app === 'gnucash' ? writeGnuCash : writeKMyMoney)(file, book);
  console.log(`${file}: ${book.length} transactions, ${expected.length} bookings in EUR money accounts`);
}
