// The search over a real application's tables (lib/apps/), as createBookingSearch runs it:
// the mapping's SELECT reads the window, the service filters and orders what it converted.

import type { Database } from 'better-sqlite3';
import { type ApplicationMapping, useMapping } from '../mapping.js';
import type { SearchQuery } from '../query.js';
import { type BookingRow, type SearchRows, toBounds } from './sql.js';

/**
 * The search over a real application's tables (lib/apps/): the mapping's SELECT reads the
 * window by the application's own date index; the service filters the converted rows by
 * docs/API.md's rule and orders them. Every value is bound. An amount the mapping cannot
 * read (NULL) could be any: it is in every band, and the search answers 500 for it. */
export function createApplicationSearch(db: Database, mapping: ApplicationMapping): (query: SearchQuery) => SearchRows {
  useMapping(db, mapping);
  const source = `(${mapping.bookings}) AS booking`;
  const where = `coalesce(booking.amount_cents, +:low) BETWEEN +:low AND +:high${mapping.exactWindow === true ? '' : ' AND booking.date BETWEEN +:von AND +:bis'}`;
  const count = db
    .prepare<[Record<string, unknown>], [all: number, read: number]>(
      `SELECT count(*), count(booking.amount_cents) FROM ${source} WHERE ${where}`,
    )
    .raw();
  const page = db
    .prepare<[Record<string, unknown>], BookingRow>(
      `SELECT booking.id, booking.date, booking.amount_cents, booking.subject, booking.category, booking.payment_method
       FROM ${source} WHERE ${where}
       ORDER BY booking.${mapping.orderDate === true ? 'order_date' : 'date'} DESC, booking.id DESC LIMIT +:limit`,
    )
    .raw();
  return (query) => {
    const bounds = toBounds(query);
    const parameters = { ...bounds, ...mapping.window(bounds.von, bounds.bis), limit: query.limit };
    const [total, read] = count.get(parameters) ?? [0, 0];
    // Counted, an amount the mapping cannot read would make `anzahl` wrong whether or not
    // the page shows its booking: the search is the row guard's 500 either way.
    if (read !== total)
      throw new RangeError('a booking of the window has an amount that is not a whole number of cents');
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    return { count: total, rows: page.all(parameters) };
  };
}
