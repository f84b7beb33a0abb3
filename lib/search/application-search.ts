// The search over a real application's tables (lib/apps/), as createBookingSearch runs it:
// the mapping's SELECT reads the window, the service filters and orders what it converted.

import type { Database } from 'better-sqlite3';
import { type ApplicationMapping, useMapping } from '../mapping.js';
import { isCalendarDate, type SearchQuery } from '../query.js';
import { type BookingRow, type SearchRows, toBounds } from './sql.js';

/**
 * The search over a real application's tables (lib/apps/): the mapping's SELECT reads the
 * window by the application's own date index; the service filters the converted rows by
 * docs/API.md's rule and orders them. Every value is bound. An amount or a date the mapping
 * cannot read (NULL, or a day the calendar lacks) could be any: its booking is in every
 * band and every window the index reads it in, and the search answers 500 for it. */
export function createApplicationSearch(db: Database, mapping: ApplicationMapping): (query: SearchQuery) => SearchRows {
  useMapping(db, mapping);
  // The one date rule (lib/query.ts), for the rows that match only.
  db.function('calendar_day', { deterministic: true }, (date) =>
    typeof date === 'string' && isCalendarDate(date) ? 1 : 0,
  );
  const source = `(${mapping.bookings}) AS booking`;
  const where = `coalesce(booking.amount_cents, +:low) BETWEEN +:low AND +:high${mapping.exactWindow === true ? '' : ' AND coalesce(booking.date, +:von) BETWEEN +:von AND +:bis'}`;
  const unreadable = 'booking.amount_cents IS NULL OR NOT calendar_day(booking.date)';
  const count = db
    .prepare<[Record<string, unknown>], [all: number, read: number]>(
      `SELECT count(*), count(CASE WHEN NOT (${unreadable}) THEN 1 END) FROM ${source} WHERE ${where}`,
    )
    .raw();
  const page = db
    .prepare<[Record<string, unknown>], BookingRow>(
      `SELECT booking.id, booking.date, booking.amount_cents, booking.subject, booking.category, booking.payment_method
       FROM ${source} WHERE ${where}
       ORDER BY booking.${mapping.orderDate === true ? 'order_date' : 'date'} DESC, booking.id DESC LIMIT +:limit`,
    )
    .raw();
  // Only when a search fails: which booking it is, for the log.
  const firstUnreadable = (parameters: Record<string, unknown>): unknown[] | undefined =>
    db
      .prepare<[Record<string, unknown>], unknown[]>(
        `SELECT booking.id, booking.date, booking.amount_cents FROM ${source} WHERE (${where}) AND (${unreadable}) LIMIT 1`,
      )
      .raw()
      .get(parameters);
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

/** The search's failure for the booking `[id, date, amount]` (undefined: written away since the count). */
function unreadableBooking(row: unknown[] | undefined): RangeError {
  if (row === undefined) return new RangeError('a booking of the window changed while it was searched');
  const [id, date, amount] = row;
  if (amount === null) return new RangeError(`booking ${String(id)}: its amount is not a whole number of cents`);
  if (typeof date !== 'string') return new RangeError(`booking ${String(id)} has no date the service can read`);
  return new RangeError(
    `booking ${String(id)}: its date ${JSON.stringify(date.slice(0, 40))} is not a day of the calendar`,
  );
}
