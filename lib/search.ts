// The booking search in SQL: statements prepared once, every value bound.

import type { Database } from 'better-sqlite3';
import type { SearchQuery } from './query.js';

/** One page row, as SQLite returns it in raw mode. */
export type BookingRow = [
  id: number,
  date: string,
  amountCents: number,
  subject: string | null,
  category: string | null,
  paymentMethod: string | null,
];

export interface SearchRows {
  count: number;
  rows: BookingRow[];
}

export type BookingSearch = (query: SearchQuery) => SearchRows;

// Bindings of every statement: von, bis, lowest and highest stored amount_cents.
type Bounds = [von: string, bis: string, low: number, high: number];

const MATCHES = 'e.date BETWEEN ? AND ? AND e.amount_cents BETWEEN ? AND ?';

const COUNT_SQL = `SELECT count(*) FROM entries AS e WHERE ${MATCHES}`;

const PAGE_SQL = `
  SELECT e.id, e.date, e.amount_cents, e.subject, c.name, p.name
  FROM entries AS e
  LEFT JOIN categories AS c ON c.id = e.category_id
  LEFT JOIN payment_methods AS p ON p.id = e.payment_method_id
  WHERE ${MATCHES}
  ORDER BY e.date DESC, e.id DESC
  LIMIT ?`;

/** Prepares the search once; the returned function runs it for one validated query. */
export function createBookingSearch(db: Database): BookingSearch {
  const count = db.prepare<Bounds, number>(COUNT_SQL).pluck();
  const page = db.prepare<[...Bounds, number], BookingRow>(PAGE_SQL).raw();

  // Count and page read one snapshot, so a concurrent writer cannot make them disagree.
  const search = db.transaction((query: SearchQuery): SearchRows => {
    // SPEC.md, Sign convention: the client's amount is the negated stored amount.
    const bounds: Bounds = [
      query.von,
      query.bis,
      -query.betragCents - query.toleranzCents,
      -query.betragCents + query.toleranzCents,
    ];
    const total = count.get(...bounds) ?? 0;
    const rows = total === 0 || query.limit === 0 ? [] : page.all(...bounds, query.limit);
    return { count: total, rows };
  });

  return (query) => search(query);
}
