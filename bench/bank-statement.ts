// A realistic reconciliation to test and measure POST /api/v1/abgleich with: a cash book of
// two years (about 3,000 bookings, most of them cash, some paid through the bank) and the
// bank's statement over the same years, made the way a bank makes it: lines on the
// booking's day, lines up to five business days later, lines a few cents off, one line
// for two or three receipts, twins, cash deposits and withdrawals (an expense or income of
// the cash box, seen from the bank with the other sign), and lines with no booking. The
// same seed gives the same book and statement. The benchmark builds its statement over
// another book with `statementOver`.

import type Database from 'better-sqlite3';
import { mulberry32 } from '../bin/books/demo.js';

/** One booking as stored (expenses positive). */
export interface BookEntry {
  id: number;
  date: string;
  amountCents: number;
  subject: string;
  paymentMethodId: number;
}

export interface BankLine {
  ref: string;
  datum: string;
  betrag: string;
  tage?: number;
  toleranz?: string;
  vorzeichen?: 'beide';
  teile?: number;
  konten?: string[];
}

export interface Reconciliation {
  paymentMethods: string[];
  entries: BookEntry[];
  body: { zeilen: BankLine[]; konten: string[] };
  /** The booking ids each line (by ref) stands for; none for a line with no booking. */
  expected: Map<string, number[]>;
}

const DAY_MS = 86_400_000;
const CASH = 1;
const BANK = 2;
const CARD = 3;
const PAYMENT_METHODS = ['Barkasse', 'Bank', 'EC-Karte'];
const BANK_METHODS = ['Bank', 'EC-Karte'];
// What a careful client asks for every line: a week either side, half a euro, three parts.
const CAREFUL = { tage: 7, toleranz: '0.50', teile: 3 } as const;

/** The client's text of stored cents: an expense (stored positive) is negative. */
function betragOf(storedCents: number): string {
  const cents = -storedCents;
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const isWeekend = (ms: number): boolean => [0, 6].includes(new Date(ms).getUTCDay());

/** `ms` moved on by `days` business days (Saturday and Sunday are none). */
function businessDaysLater(ms: number, days: number): number {
  let at = ms;
  for (let left = days; left > 0; ) {
    at += DAY_MS;
    if (!isWeekend(at)) left -= 1;
  }
  while (isWeekend(at)) at += DAY_MS;
  return at;
}

/** The book and its statement: `seed` decides everything. */
export function reconciliation(seed = 20_260_314, start = '2024-11-01', days = 730): Reconciliation {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const cents = (): number => Math.max(50, Math.round(Math.exp(Math.log(2500) + 1.2 * (random() + random() - 1))));
  const startMs = Date.parse(`${start}T00:00:00Z`);
  const entries: BookEntry[] = [];
  const zeilen: BankLine[] = [];
  const expected = new Map<string, number[]>();
  const book = (ms: number, amountCents: number, subject: string, paymentMethodId: number): number => {
    entries.push({ id: entries.length + 1, date: isoDate(ms), amountCents, subject, paymentMethodId });
    return entries.length;
  };
  const line = (ms: number, storedCents: number, ids: number[], extra: Partial<BankLine> = {}): void => {
    const ref = `${isoDate(ms)}/${zeilen.length + 1}`;
    zeilen.push({ ref, datum: isoDate(ms), betrag: betragOf(storedCents), ...CAREFUL, ...extra });
    expected.set(ref, ids);
  };

  for (let day = 0; day < days; day += 1) {
    const ms = startMs + day * DAY_MS;
    // The cash box: about four bookings a day, a tenth of them income.
    for (let n = Math.floor(random() * 8); n > 0; n -= 1) {
      book(ms, random() < 0.1 ? -cents() : cents(), 'Bar', CASH);
    }
    if (isWeekend(ms)) continue;
    // Through the bank: about three bookings every five business days, each a bank line.
    if (random() < 0.72) {
      const method = random() < 0.6 ? BANK : CARD;
      const amount = random() < 0.08 ? -cents() * 4 : cents();
      const roll = random();
      const id = book(ms, amount, 'Überweisung', method);
      if (roll < 0.6) line(ms, amount, [id]);
      else if (roll < 0.85) line(businessDaysLater(ms, 1 + Math.floor(random() * 5)), amount, [id]);
      else line(ms, amount + pick([-1, 1]) * (1 + Math.floor(random() * 49)), [id]);
    }
    const roll = random();
    if (roll < 0.03) {
      // One bank line for two or three receipts of one purchase.
      const parts = random() < 0.7 ? 2 : 3;
      const ids: number[] = [];
      let sum = 0;
      for (let k = 0; k < parts; k += 1) {
        const amount = cents();
        sum += amount;
        ids.push(book(ms, amount, 'Teilbeleg', BANK));
      }
      line(businessDaysLater(ms, Math.floor(random() * 3)), sum, ids);
    } else if (roll < 0.05) {
      // Twins: the same amount twice, a few days apart, both through the bank a day later.
      const amount = cents();
      const later = ms + (2 + Math.floor(random() * 3)) * DAY_MS;
      const first = book(ms, amount, 'Abo', BANK);
      const second = book(later, amount, 'Abo', BANK);
      line(businessDaysLater(ms, 1), amount, [first]);
      line(businessDaysLater(later, 1), amount, [second]);
    } else if (roll < 0.08) {
      // A cash deposit (an expense of the cash box, income of the bank), or a withdrawal.
      const amount = 10_000 * (1 + Math.floor(random() * 10));
      const deposit = random() < 0.6;
      const id = book(ms, deposit ? amount : -amount, deposit ? 'Einzahlung Bank' : 'Abhebung Bank', CASH);
      line(businessDaysLater(ms, Math.floor(random() * 2)), deposit ? -amount : amount, [id], {
        vorzeichen: 'beide',
        konten: ['Barkasse'],
      });
    } else if (roll < 0.1) {
      // A bank fee or interest: no booking in the cash book.
      line(ms, pick([490, 990, 1250, -37, 350]) + Math.floor(random() * 3), []);
    }
  }
  zeilen.sort((a, b) => (a.datum < b.datum ? -1 : a.datum > b.datum ? 1 : 0));
  return { paymentMethods: PAYMENT_METHODS, entries, body: { zeilen, konten: BANK_METHODS }, expected };
}

/**
 * A statement of `count` lines over bookings of another book (the benchmark's): each line
 * one of them, on its day, up to five business days later, or a few cents off.
 */
export function statementOver(
  bookings: ReadonlyArray<{ id: number; date: string; amountCents: number }>,
  count: number,
  seed = 7,
): { zeilen: BankLine[]; expected: Map<string, number[]> } {
  const random = mulberry32(seed);
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, bookings.length)) chosen.add(Math.floor(random() * bookings.length));
  const zeilen: BankLine[] = [];
  const expected = new Map<string, number[]>();
  for (const index of [...chosen].sort((a, b) => a - b)) {
    const booking = bookings[index] as (typeof bookings)[number];
    const ms = Date.parse(`${booking.date}T00:00:00Z`);
    const roll = random();
    const datum = isoDate(roll < 0.3 ? businessDaysLater(ms, 1 + Math.floor(random() * 5)) : ms);
    const amount = roll > 0.9 ? booking.amountCents + 1 + Math.floor(random() * 40) : booking.amountCents;
    const ref = `${zeilen.length + 1}`;
    zeilen.push({ ref, datum, betrag: betragOf(amount), ...CAREFUL });
    expected.set(ref, [booking.id]);
  }
  return { zeilen, expected };
}

/** Precision and recall of an answer: a line counts when it got exactly the bookings it stands for. */
export function score(
  expected: ReadonlyMap<string, number[]>,
  answered: ReadonlyArray<{ ref: string; buchungen: Array<{ id: number }> }>,
): { precision: number; recall: number; paired: number; right: number; wanted: number } {
  let paired = 0;
  let right = 0;
  for (const line of answered) {
    if (line.buchungen.length === 0) continue;
    paired += 1;
    const got = line.buchungen.map((booking) => booking.id).sort((a, b) => a - b);
    const want = [...(expected.get(line.ref) ?? [])].sort((a, b) => a - b);
    if (got.length === want.length && got.every((id, i) => id === want[i])) right += 1;
  }
  const wanted = [...expected.values()].filter((ids) => ids.length > 0).length;
  return {
    precision: paired === 0 ? 1 : right / paired,
    recall: wanted === 0 ? 1 : right / wanted,
    paired,
    right,
    wanted,
  };
}

/** Writes the book of `reconciliation` into `db`, which holds the own schema and no booking. */
export function fillBook(db: Database.Database, { paymentMethods, entries }: Reconciliation): void {
  db.transaction(() => {
    const method = db.prepare('INSERT INTO payment_methods (id, name) VALUES (?, ?)');
    for (const [i, name] of paymentMethods.entries()) method.run(i + 1, name);
    const entry = db.prepare(
      'INSERT INTO entries (id, date, amount_cents, subject, payment_method_id) VALUES (?, ?, ?, ?, ?)',
    );
    for (const e of entries) entry.run(e.id, e.date, e.amountCents, e.subject, e.paymentMethodId);
  })();
}
