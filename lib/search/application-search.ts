// The search over a real application's tables (lib/apps/), as createBookingSearch runs it:
// the mapping's SELECT reads the window, the service filters and orders what it converted.

import type { Database } from 'better-sqlite3';
import { type ApplicationMapping, type Mapping, quoteName, useMapping } from '../mapping.js';
import { isCalendarDate, type SearchQuery } from '../query.js';
import { type BookingRow, countedAndRead, type SearchRows, toBounds, unreadable } from './sql.js';

/**
 * The search over a real application's tables (lib/apps/): the mapping's SELECT reads the
 * window by the application's own date index; the service filters the converted rows by
 * docs/API.md's rule and orders them. Every value is bound. An amount or a date the mapping
 * cannot read (NULL, or a day the calendar lacks) could be any: its booking is in every
 * band and every window the index reads it in, and the search answers 500 for it. */
export function createApplicationSearch(db: Database, mapping: ApplicationMapping): (query: SearchQuery) => SearchRows {
  useMapping(db, mapping);
  const sql = applicationSql(mapping);
  // Plain numbers, whatever the handle's default turns to later, as the own schema's statements.
  const count = db.prepare<[Record<string, unknown>], [all: number, read: number]>(sql.count).raw().safeIntegers(false);
  const page = db.prepare<[Record<string, unknown>], BookingRow>(sql.page).raw().safeIntegers(false);
  // Only when a search fails: which booking it is, for the log.
  const firstUnreadable = (parameters: Record<string, unknown>): unknown[] | undefined =>
    db.prepare<[Record<string, unknown>], unknown[]>(sql.firstUnreadable).raw().safeIntegers(false).get(parameters);
  return (query) => {
    const bounds = toBounds(query);
    const parameters = { ...bounds, ...mapping.window(bounds.von, bounds.bis), limit: query.limit };
    const [total, read] = count.get(parameters) ?? [0, 0];
    // Counted, a booking whose amount or date the mapping cannot read would make `anzahl`
    // wrong whether or not the page shows it: the search is the row guard's 500 either way.
    if (read !== total) throw unreadableBooking(firstUnreadable(parameters));
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    return { count: total, rows: page.all(parameters) };
  };
}

/**
 * The statements of the search over an application's tables, bound by name (`:von`, `:after`,
 * `:low`, `:high`, `:limit` and the mapping's window): what it counts (every booking and the
 * readable ones), the page, and the first booking it cannot read. `check` explains the count.
 */
export function applicationSql(mapping: ApplicationMapping): { count: string; page: string; firstUnreadable: string } {
  const source = `(${mapping.bookings}) AS booking`;
  const where = `coalesce(booking.amount_cents, +:low) BETWEEN +:low AND +:high${mapping.exactWindow === true ? '' : ' AND coalesce(booking.date, +:von) >= +:von AND coalesce(booking.date, +:von) < +:after'}`;
  return {
    // An amount that is no whole number of cents (a fraction a mapping divided out) is no
    // more answerable than none: counted, it would make `anzahl` count it unseen.
    count: `SELECT ${countedAndRead('booking')} FROM ${source} WHERE ${where}`,
    page: `SELECT booking.id, booking.date, booking.amount_cents, booking.subject, booking.category, booking.payment_method
       FROM ${source} WHERE ${where}
       ORDER BY booking.${mapping.orderDate === true ? 'order_date' : 'date'} DESC, booking.id DESC LIMIT +:limit`,
    firstUnreadable: `SELECT booking.id, booking.date, booking.amount_cents, booking.subject, booking.payment_method, booking.amount_held
         FROM ${source} WHERE (${where}) AND (${unreadable('booking')}) LIMIT 1`,
  };
}

/**
 * The search's failure for the booking `[id, date, amount, subject, account, held]` (undefined:
 * written away since the count): the booking named by its id alone and no value of it, for
 * its message goes to the log (docs/API.md: a 500 shows no booking); `check` names it in full.
 */
export function unreadableBooking(row: readonly unknown[] | undefined): RangeError {
  if (row === undefined) return new RangeError('a booking of the window changed while it was searched');
  return new RangeError(bookingFault(row, `the booking with id ${shownValue(row[0])}`, false));
}

/**
 * What is wrong with the booking `[id, date, amount, subject, account, held]` that no search
 * can answer, the booking as bookingNamed names it: the one wording of the search's 500 in
 * the log (`shown` false: without the booking's values), of a page row that breaks the
 * contract, and of `check`'s list of such bookings.
 */
export function bookingFault(
  [id, date, amount, subject, account, held]: readonly unknown[],
  booking = bookingNamed(id, date, subject, account),
  shown = true,
): string {
  if (typeof date !== 'string' && typeof date !== 'number') return `${booking} has no date the service can read`;
  if (typeof date === 'number' || !isCalendarDate(date)) {
    return `${booking} has ${shown ? `the date ${shownValue(date)},` : 'a date that is'} not a day of the calendar as YYYY-MM-DD`;
  }
  return amountSaid(booking, amount, held, shown);
}

/** What is wrong with the amount of `booking` (named), as bookingFault says it: `held`, the application's own figure. */
export function amountSaid(booking: string, amount: unknown, held: unknown, shown = true): string {
  if (amount === null) return `${booking} has no amount the service can read`;
  if (!shown && !Number.isSafeInteger(amount)) return `${booking} has an amount that is ${amountFault(amount)}`;
  if (typeof amount === 'number' && !Number.isSafeInteger(amount)) {
    const rounded =
      Number.isInteger(amount) && typeof held !== 'string' ? ' (the figure shown is already rounded)' : '';
    return `${booking} has the amount ${centsAsAmount(amount, held)}${rounded}, ${amountFault(amount)}`;
  }
  if (!Number.isSafeInteger(amount)) return `${booking} has the amount ${shownValue(amount)}, not whole cents`;
  return `${booking} is not one a search can answer`;
}

/**
 * What is wrong with an amount of cents that is no safe integer: a fraction, or a whole
 * number past 2^53 − 1, which SQLite's integer became only rounded (the figure shown is so).
 */
export function amountFault(amount: unknown): string {
  if (!Number.isInteger(amount)) return 'not whole cents';
  return `beyond ±${centsAsAmount(-Number.MAX_SAFE_INTEGER)}, the most the service reads exactly`;
}

/**
 * A booking as its owner finds it in the application: the date, account and subject it is
 * served with (cut short), then the service's id, which the application does not show. What
 * `check` says of a booking the service cannot answer (the log names it by its id alone).
 */
export function bookingNamed(id: unknown, date: unknown, subject: unknown, account: unknown): string {
  let named = 'the booking';
  if (typeof date === 'string' && isCalendarDate(date)) named += ` of ${date}`;
  if (typeof account === 'string' && account !== '') named += ` in ${shownValue(account)}`;
  const zweck = typeof subject === 'string' && subject !== '' ? `${shownValue(subject)}, ` : '';
  return `${named} (${zweck}id ${shownValue(id)})`;
}

/**
 * A value read from a book, as every message shows it: a text quoted and cut short (a text
 * id, date or amount can be of any length), a blob by its size (its bytes need not be
 * text), anything else as it is. Control characters stay: the command escapes what it
 * writes (bin/base/log.ts, logValue).
 */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (value instanceof Uint8Array) return `a blob of ${value.length} bytes`;
  return String(value);
}

/**
 * Stored cents that are no whole number (111.5) as the amount the application holds, exactly:
 * from `held`, the mapping's `amount_held`, where it is a fraction (-37/3 has no decimal, and
 * its cents as a number would show a rounded float); else the decimal a client would get
 * (-1.115), the digits of the number moved, no arithmetic on them.
 */
export function centsAsAmount(cents: number, held?: unknown): string {
  const exact = typeof held === 'string' ? fractionAsAmount(held) : undefined;
  if (exact !== undefined) return exact;
  const [, sign, whole, fraction = ''] = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(-cents)) ?? [];
  if (whole === undefined) return `${String(cents)} (in cents)`;
  const digits = whole.padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}${fraction}`;
}

/**
 * An amount the application holds as the fraction `held` ('-37/3', '-1115/1000'; '-25' is
 * -25/1) as a message shows it, exactly and in the application's sign: its decimal where it
 * has a finite one (-1.115), else the fraction as held (-37/3), never a rounded float;
 * `undefined` for text that is no such fraction.
 */
export function fractionAsAmount(held: string): string | undefined {
  const parts = /^(-?)([0-9]{1,40})(?:\/([0-9]{1,40}))?$/.exec(held);
  if (parts === null) return undefined;
  const [, sign, num = '', den = '1'] = parts;
  const denominator = BigInt(den);
  if (denominator === 0n) return undefined;
  // A finite decimal: the denominator has no prime factor but 2 and 5, and as many places
  // as the larger count of the two.
  let rest = denominator;
  let twos = 0;
  let fives = 0;
  for (; rest % 2n === 0n; twos += 1) rest /= 2n;
  for (; rest % 5n === 0n; fives += 1) rest /= 5n;
  if (rest !== 1n) return held;
  const places = Math.max(twos, fives, 2);
  const digits = ((BigInt(num) * 10n ** BigInt(places)) / denominator).toString().padStart(places + 1, '0');
  return `${sign}${digits.slice(0, -places)}.${digits.slice(-places).replace(/0+$/, '').padEnd(2, '0')}`;
}

/**
 * A booking of the file named as bookingNamed names it, its subject and account read by its
 * `id`: of an application within its day by the window's index when `date` (as served) is
 * one, else among all; of the own schema by the entries table's key.
 */
export function bookingNamer(db: Database, mapping: Mapping): (row: readonly unknown[]) => string {
  useMapping(db, mapping);
  return ([id, date]) => {
    const day = typeof date === 'string' && isCalendarDate(date) ? date : undefined;
    const [subject, account] =
      mapping.kind === 'own'
        ? (db
            .prepare<[unknown], unknown[]>(
              `SELECT e.subject, p.name FROM ${quoteName(mapping.tables.entries)} AS e
               LEFT JOIN ${quoteName(mapping.tables.paymentMethods)} AS p ON p.id = e.payment_method_id WHERE e.id IS ? LIMIT 1`,
            )
            .raw()
            .get(id) ?? [])
        : (db
            .prepare<[Record<string, unknown>], unknown[]>(
              `SELECT subject, payment_method FROM (${day === undefined ? mapping.allBookings : mapping.bookings}) WHERE id IS +:id LIMIT 1`,
            )
            .raw()
            .get({ low: -(2 ** 53), high: 2 ** 53, id, ...(day && mapping.window(day, day)) }) ?? []);
    return bookingNamed(id, date, subject, account);
  };
}
