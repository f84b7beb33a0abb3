// The booking search in SQL: statements prepared once, every value bound.
//
// Every statement below returns the same bookings as the one plain query
//   WHERE date BETWEEN :von AND :bis AND amount_cents BETWEEN :low AND :high
//   ORDER BY date DESC, id DESC
// (test/search.test.ts holds them to that). They differ only in the index SQLite walks,
// which BENCHMARKS.md measured per query shape. The unary `+` keeps the planner off an
// index for one term, so no statement names an index: on a database without the
// recommended indexes, or behind views, every path still answers correctly, only slower.

import type { Database, Statement } from 'better-sqlite3';
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

export interface Bounds {
  von: string;
  bis: string;
  /** Lowest and highest stored amount_cents that match. */
  low: number;
  high: number;
}

/** What the planner decides from: cheap to read, since every value is one index seek. */
export type Stats = [
  firstDate: string | null,
  lastDate: string | null,
  maxId: number | null,
  minAmount: number | null,
  maxAmount: number | null,
];

const JOINS = `
  LEFT JOIN categories AS c ON c.id = e.category_id
  LEFT JOIN payment_methods AS p ON p.id = e.payment_method_id`;
const COLUMNS = 'e.id, e.date, e.amount_cents, e.subject, c.name, p.name';
const NEWEST_FIRST = 'ORDER BY e.date DESC, e.id DESC';

// Distinct stored amounts in [low, high], each found by one seek on (amount_cents, date):
// a skip-scan, so a narrow band of amounts costs one seek per amount, not one step per row.
const AMOUNTS_IN_BAND = `
  WITH RECURSIVE band(amount) AS (
    SELECT (SELECT min(amount_cents) FROM entries WHERE amount_cents BETWEEN :low AND :high)
    UNION ALL
    SELECT (SELECT min(amount_cents) FROM entries WHERE amount_cents > band.amount AND amount_cents <= :high)
    FROM band WHERE band.amount IS NOT NULL
  )`;

export const SQL = {
  stats: `SELECT (SELECT min(date) FROM entries), (SELECT max(date) FROM entries), (SELECT max(id) FROM entries),
                 (SELECT min(amount_cents) FROM entries), (SELECT max(amount_cents) FROM entries)`,

  // One amount: seek (amount_cents, date) to the window; rows come out newest first.
  exactCount: 'SELECT count(*) FROM entries WHERE amount_cents = :low AND date BETWEEN :von AND :bis',
  exactPage: `SELECT ${COLUMNS} FROM entries AS e ${JOINS}
    WHERE e.amount_cents = :low AND e.date BETWEEN :von AND :bis ${NEWEST_FIRST} LIMIT :limit`,

  // A band of amounts, walked along the dates: (date, id, amount_cents) covers the filter.
  dateCount: 'SELECT count(*) FROM entries WHERE date BETWEEN :von AND :bis AND +amount_cents BETWEEN :low AND :high',
  datePage: `SELECT ${COLUMNS} FROM entries AS e ${JOINS}
    WHERE e.date BETWEEN :von AND :bis AND +e.amount_cents BETWEEN :low AND :high ${NEWEST_FIRST} LIMIT :limit`,
  // Every stored amount matches: only the window counts (and amounts that are no number,
  // which a view can produce and BETWEEN never matches).
  windowCount: 'SELECT count(*) FROM entries WHERE date BETWEEN :von AND :bis AND amount_cents IS NOT NULL',

  // Every booking is in the window: only the band counts (and dates that are no date,
  // which BETWEEN never matches).
  amountCount: 'SELECT count(*) FROM entries WHERE amount_cents BETWEEN :low AND :high AND date IS NOT NULL',

  // A band of amounts, one seek per distinct amount, then the window within it.
  bandCount: `${AMOUNTS_IN_BAND}
    SELECT coalesce(sum((SELECT count(*) FROM entries WHERE amount_cents = band.amount AND date BETWEEN :von AND :bis)), 0)
    FROM band WHERE band.amount IS NOT NULL`,
  bandPage: `${AMOUNTS_IN_BAND}
    SELECT ${COLUMNS} FROM (
      SELECT id FROM entries
      WHERE amount_cents IN (SELECT amount FROM band WHERE amount IS NOT NULL) AND date BETWEEN :von AND :bis
      ORDER BY date DESC, id DESC LIMIT :limit
    ) AS newest
    JOIN entries AS e ON e.id = newest.id ${JOINS} ${NEWEST_FIRST}`,
} as const;

// From BENCHMARKS.md: one seek of the skip-scan costs about as much as stepping over 13
// index entries.
const SEEK_COST_IN_ROWS = 13;
const DAY_MS = 86_400_000;

export type CountPlan = 'exactCount' | 'windowCount' | 'amountCount' | 'bandCount' | 'dateCount';
export type PagePlan = 'exactPage' | 'bandPage' | 'datePage';

/** Costs of the two ways through a band of amounts, in index entries stepped over. */
export interface BandCosts {
  everyAmount: boolean;
  everyDate: boolean;
  windowRows: number;
  bandSeeks: number;
}

/** Prepares the search once; the returned function runs it for one validated query. */
export function createBookingSearch(db: Database): BookingSearch {
  const count = (sql: string): Statement<[Bounds], number> => db.prepare<[Bounds], number>(sql).pluck();
  const page = (sql: string): Statement<[Bounds & { limit: number }], BookingRow> =>
    db.prepare<[Bounds & { limit: number }], BookingRow>(sql).raw();
  const stats = db.prepare<[], Stats>(SQL.stats).raw();
  const counts: Record<CountPlan, Statement<[Bounds], number>> = {
    exactCount: count(SQL.exactCount),
    windowCount: count(SQL.windowCount),
    amountCount: count(SQL.amountCount),
    bandCount: count(SQL.bandCount),
    dateCount: count(SQL.dateCount),
  };
  const pages: Record<PagePlan, Statement<[Bounds & { limit: number }], BookingRow>> = {
    exactPage: page(SQL.exactPage),
    bandPage: page(SQL.bandPage),
    datePage: page(SQL.datePage),
  };

  // Count and page read one snapshot, so a concurrent writer cannot make them disagree.
  return db.transaction((query: SearchQuery): SearchRows => {
    const bounds = toBounds(query);
    const costs = bounds.low === bounds.high ? undefined : bandCosts(bounds, stats.get());
    if (costs === null) return { count: 0, rows: [] }; // no bookings at all
    const total = counts[chooseCount(costs)].get(bounds) ?? 0;
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    return { count: total, rows: pages[choosePage(costs, total, query.limit)].all({ ...bounds, limit: query.limit }) };
  });
}

/** docs/API.md, Sign convention: the client's amount is the negated stored amount. */
export function toBounds(query: SearchQuery): Bounds {
  return {
    von: query.von,
    bis: query.bis,
    low: -query.betragCents - query.toleranzCents,
    high: -query.betragCents + query.toleranzCents,
  };
}

/** Which count to run; `costs` is `undefined` for one exact amount. */
export function chooseCount(costs: BandCosts | undefined): CountPlan {
  if (costs === undefined) return 'exactCount';
  if (costs.everyAmount) return 'windowCount';
  // Then every match is in the band, and a plain range of the band is the least to step over.
  if (costs.everyDate) return 'amountCount';
  return costs.bandSeeks < costs.windowRows ? 'bandCount' : 'dateCount';
}

/** Which page to read once the count is known. */
export function choosePage(costs: BandCosts | undefined, total: number, limit: number): PagePlan {
  if (costs === undefined) return 'exactPage';
  // Walking the dates backwards finds `limit` matches after about limit / density rows.
  const dateWalk = Math.min(costs.windowRows, (limit * costs.windowRows) / total);
  return dateWalk <= costs.bandSeeks + total ? 'datePage' : 'bandPage';
}

/**
 * The costs of a band query from the stats, or `null` when there are no bookings.
 * Bookings are assumed spread evenly over time, which is what a cash book is; a wrong
 * guess costs time, never a wrong answer.
 */
export function bandCosts(bounds: Bounds, stats: Stats | undefined): BandCosts | null {
  const [firstDate, lastDate, maxId, minAmount, maxAmount] = stats ?? [];
  if (firstDate == null || lastDate == null || minAmount == null || maxAmount == null) return null;
  return {
    everyAmount: bounds.low <= minAmount && bounds.high >= maxAmount,
    // Only text dates can be compared so; anything else (numbers, blobs) sorts elsewhere.
    everyDate:
      typeof firstDate === 'string' &&
      typeof lastDate === 'string' &&
      bounds.von <= firstDate &&
      bounds.bis >= lastDate,
    windowRows: estimateWindowRows(bounds, firstDate, lastDate, maxId ?? 0),
    bandSeeks: SEEK_COST_IN_ROWS * (Math.min(bounds.high, maxAmount) - Math.max(bounds.low, minAmount) + 1),
  };
}

function estimateWindowRows({ von, bis }: Bounds, firstDate: string, lastDate: string, rows: number): number {
  const from = Date.parse(von > firstDate ? von : firstDate);
  const to = Date.parse(bis < lastDate ? bis : lastDate);
  const spanDays = (Date.parse(lastDate) - Date.parse(firstDate)) / DAY_MS + 1;
  const windowDays = (to - from) / DAY_MS + 1;
  if (!(windowDays > 0 && spanDays > 0)) return 0;
  return (rows * windowDays) / spanDays;
}
