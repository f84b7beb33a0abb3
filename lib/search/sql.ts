// The search's SQL and its planner: the plain query, the tuned statements over the own
// schema, the values they bind and the rows they return; then which of them a search runs,
// chosen by a cost model from the query's bounds and an estimate of the file (explain.ts).
// Text and arithmetic only: nothing here touches a database, so a wrong guess of the
// planner costs time, never a wrong answer.
//
// Every statement below returns the same bookings as PLAIN, the one plain query of
// docs/API.md (test/unit/search.test.ts holds them to it). They differ only in the index
// SQLite walks, which docs/design/README.md measured per query shape ("How the service
// chooses"; the planner at the end of this file chooses). No statement names an index: on a
// database without the recommended indexes, or behind views, every path still answers
// correctly, only slower.
//
// Two kinds of unary `+`: on a column (`+e.amount_cents`) it keeps the planner off the index
// for that term; on a parameter (`+:low`) it hides the value from the planner, which with
// sqlite_stat4 in the file (ANALYZE or `PRAGMA optimize` leave it) would look each bound up
// in the statistics and prepare the statement again at every search: so each is planned
// once, and the index used all the same (docs/design/README.md, "Re-preparation under stat4").

import { DEFAULT_TABLE_NAMES, quoteName, type TableNames } from '../mapping.js';
import { endOfDay, type SearchQuery } from '../query.js';

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
  /** Of several searches read together (booking-search.ts): the connection and the file's version they read. */
  snapshot?: string;
}

export interface Bounds {
  von: string;
  bis: string;
  /** The end, exclusive (endOfDay): `bis 12:00` is inside the window, answered 500, not skipped. */
  after: string;
  /** Lowest and highest stored amount_cents that match. */
  low: number;
  high: number;
}

/** What the planner reads per version of the file: six index seeks on a table. */
export type Stats = [
  firstDate: string | null,
  lastDate: string | null,
  firstId: number | null,
  lastId: number | null,
  minAmount: number | null,
  maxAmount: number | null,
];

/** What the planner decides a band from (lib/search/explain.ts reads it). */
export interface Estimate {
  stats: Stats;
  /** How many bookings the file holds (where amounts are sought): counted, for ids may have gaps. */
  rows: number;
  /** Whether an index finds an amount by a seek; without, each seek of the skip-scan reads every booking. */
  seeksAmounts: boolean;
}

/** docs/API.md, Sign convention: the client's amount is the negated stored amount. */
export function toBounds(query: SearchQuery): Bounds {
  return {
    von: query.von,
    bis: query.bis,
    after: endOfDay(query.bis),
    low: -query.betragCents - query.toleranzCents,
    high: -query.betragCents + query.toleranzCents,
  };
}

/**
 * The reference: docs/API.md's processing steps 4 to 6 as plainly as SQL allows, the planner
 * left to itself. The tests hold every statement to it; the benchmark's peers serve it.
 */
export const PLAIN = {
  count: 'SELECT count(*) FROM entries WHERE date >= :von AND date < :after AND amount_cents BETWEEN :low AND :high',
  page: `SELECT e.id, e.date, e.amount_cents, e.subject, c.name, p.name FROM entries AS e
    LEFT JOIN categories AS c ON c.id = e.category_id LEFT JOIN payment_methods AS p ON p.id = e.payment_method_id
    WHERE e.date >= :von AND e.date < :after AND e.amount_cents BETWEEN :low AND :high
    ORDER BY e.date DESC, e.id DESC LIMIT :limit`,
} as const;

const WINDOW = 'entries.date >= +:von AND entries.date < +:after';

/**
 * The filters, one per way through the index; each matches exactly the bookings of the
 * plain `date >= :von AND date < :after AND amount_cents BETWEEN :low AND :high`, given when
 * the planner chooses it (`chooseCount` below).
 */
export const FILTERS = {
  // One amount (low = high): seek (amount_cents, date) to the window; rows come out newest first.
  exact: `entries.amount_cents = +:low AND ${WINDOW}`,
  // A band of amounts, walked along the dates: (date, id, amount_cents) covers the filter.
  dateWalk: `${WINDOW} AND +entries.amount_cents BETWEEN +:low AND +:high`,
  // Every stored amount matches: only the window counts (and amounts that are no number,
  // which a view can produce and BETWEEN never matches).
  window: `${WINDOW} AND entries.amount_cents IS NOT NULL`,
  // The same when no stored date lies past the window: open at the top, SQLite walks from
  // the seek to the index's end without comparing each entry with an upper bound.
  windowFrom: 'entries.date >= +:von AND entries.amount_cents IS NOT NULL',
  // Every booking is in the window: only the band counts (and a NULL date, no window's).
  band: 'entries.amount_cents BETWEEN +:low AND +:high AND entries.date IS NOT NULL',
  // A band of amounts, one seek per distinct stored amount (the `band` CTE), then the window.
  skipScan: `entries.amount_cents IN (SELECT amount FROM band WHERE amount IS NOT NULL) AND ${WINDOW}`,
} as const;
/**
 * One of the filters, or `everything`: a window holding every stored date and a band every
 * stored amount, counted from the table's b-tree without reading a booking (docs/design/README.md,
 * "One client against the writer"). So it alone counts a booking no search can answer
 * (`unreadable`); its page answers 500 if it reaches one (docs/API.md).
 */
export type CountKind = keyof typeof FILTERS | 'everything';

/**
 * What no search can answer of the booking `row`: no amount, none of whole cents, or no day
 * of the calendar (SQLite's `date()` gives back exactly lib/query.ts's days: search.test.ts).
 */
export const unreadable = (row: string): string =>
  `${row}.amount_cents IS NULL OR ${row}.amount_cents <> round(${row}.amount_cents) OR ${row}.date IS NULL OR date(${row}.date) IS NOT ${row}.date`;

/**
 * What each count reads (the own schema's and an application's): the bookings that match and
 * of them those a search can answer. Where the two differ the search is the 500, however asked.
 */
export const countedAndRead = (row: string): string => `count(*), count(CASE WHEN NOT (${unreadable(row)}) THEN 1 END)`;

/** The ways a page is read, once the count is known. */
export type PageFilter = 'exact' | 'dateWalk' | 'skipScan';

// The skip-scan's first seek: the lowest stored amount in [low, high].
const firstInBand = (entries: string): string =>
  `SELECT min(amount_cents) FROM ${entries} WHERE amount_cents BETWEEN +:low AND +:high`;

// Distinct stored amounts in [low, high], each found by one seek on (amount_cents, date):
// a skip-scan, so a narrow band of amounts costs one seek per amount, not one step per row.
const amountsInBand = (entries: string): string => `
  WITH RECURSIVE band(amount) AS (
    SELECT (${firstInBand(entries)})
    UNION ALL
    SELECT (SELECT min(amount_cents) FROM ${entries} WHERE amount_cents > band.amount AND amount_cents <= +:high)
    FROM band WHERE band.amount IS NOT NULL
  )`;

const NEWEST_FIRST = 'ORDER BY entries.date DESC, entries.id DESC';

/**
 * The statements over the own schema under `tables`' names. The entries table is always
 * called `entries` inside them (`"kasse" AS entries` when it has another name), so the
 * filters above read the same whatever the name.
 */
export function sqlFor(tables: TableNames) {
  const entries = tables.entries === 'entries' ? 'entries' : `${quoteName(tables.entries)} AS entries`;
  const categories = quoteName(tables.categories);
  const paymentMethods = quoteName(tables.paymentMethods);
  const joins = `
  LEFT JOIN ${categories} AS c ON c.id = entries.category_id
  LEFT JOIN ${paymentMethods} AS p ON p.id = entries.payment_method_id`;
  const selected = 'entries.id, entries.date, entries.amount_cents, entries.subject, c.name, p.name';
  const band = amountsInBand(entries);
  const prefix = (filter: keyof typeof FILTERS): string => (filter === 'skipScan' ? band : '');
  return {
    stats: `SELECT (SELECT min(date) FROM ${entries}), (SELECT max(date) FROM ${entries}),
                 (SELECT min(id) FROM ${entries}), (SELECT max(id) FROM ${entries}),
                 (SELECT min(amount_cents) FROM ${entries}), (SELECT max(amount_cents) FROM ${entries})`,
    rows: `SELECT count(*) FROM ${entries}`,
    firstInBand: firstInBand(entries),
    count: (kind: CountKind): string =>
      kind === 'everything'
        ? `SELECT n, n FROM (SELECT (SELECT count(*) FROM ${entries}) - (SELECT count(*) FROM ${entries} WHERE date IS NULL)
             - (SELECT count(*) FROM ${entries} WHERE amount_cents IS NULL AND date IS NOT NULL) AS n)`
        : `${prefix(kind)} SELECT ${countedAndRead('entries')} FROM ${entries} WHERE ${FILTERS[kind]}`,
    // Only when a count held a booking no search can answer: the first such, for the log.
    firstUnreadable: `SELECT entries.id, entries.date, entries.amount_cents, entries.subject, p.name FROM ${entries} ${joins}
      WHERE ${WINDOW} AND entries.amount_cents BETWEEN :low AND :high AND (${unreadable('entries')}) LIMIT 1`,
    page: (filter: PageFilter): string => {
      // The skip-scan finds the newest ids in the index first, so that only `limit` rows
      // are read from the table; the other paths find them in order already. The page is
      // limited again after the joins: a categories or payment_methods view that gives one
      // id twice gives a booking twice, and the plain query counts both rows toward `limit`.
      if (filter === 'skipScan') {
        return `${band}
        SELECT ${selected} FROM (
          SELECT entries.id FROM ${entries} WHERE ${FILTERS.skipScan} ${NEWEST_FIRST} LIMIT +:limit
        ) AS newest
        JOIN ${entries} ON entries.id = newest.id ${joins} ${NEWEST_FIRST} LIMIT +:limit`;
      }
      return `SELECT ${selected} FROM ${entries} ${joins} WHERE ${FILTERS[filter]} ${NEWEST_FIRST} LIMIT +:limit`;
    },
    // With total_changes(), a change this connection made itself counts too (data_version
    // counts only other connections' commits).
    version: "SELECT (SELECT data_version FROM pragma_data_version) || '.' || total_changes()",
  } as const;
}

export const SQL = sqlFor(DEFAULT_TABLE_NAMES);

// The planner.

/** Costs of the two ways through a band of amounts, in index entries stepped over. */
export interface BandCosts {
  everyAmount: boolean;
  everyDate: boolean;
  /** No stored date is later than the window's end. */
  throughLastDate: boolean;
  windowRows: number;
  /** Infinity where no index seeks amounts. */
  bandSeeks: number;
}

/** What a search has to do, decided before it reads a booking. */
export type Plan =
  /** One exact amount (toleranz 0), the typical search: no estimate needed. */
  | { kind: 'exact' }
  /** A band of amounts, with the estimate that chooses the way through it. */
  | { kind: 'band'; costs: BandCosts }
  /** The book has no bookings at all (seen from the estimate's first and last date). */
  | { kind: 'empty' };

// One seek of the skip-scan costs about as much as stepping over 13 index entries
// (docs/design/README.md, "How the service chooses").
const SEEK_COST_IN_ROWS = 13;
const DAY_MS = 86_400_000;

/** The plan for `bounds`; the estimate is read only for a band of amounts. */
export function planFor(bounds: Bounds, estimate: Estimate | undefined): Plan {
  if (bounds.low === bounds.high) return { kind: 'exact' };
  const costs = bandCosts(bounds, estimate);
  return costs === undefined ? { kind: 'empty' } : { kind: 'band', costs };
}

/** Which count to run; `table`: the entries are a table (not a view), so `everything` may be counted. */
export function chooseCount(plan: Exclude<Plan, { kind: 'empty' }>, table = true): CountKind {
  if (plan.kind === 'exact') return 'exact';
  const { costs } = plan;
  if (costs.everyAmount && costs.everyDate && table) return 'everything';
  if (costs.everyAmount) return costs.throughLastDate ? 'windowFrom' : 'window';
  // Then every match is in the band, and a plain range of the band is the least to step over.
  if (costs.everyDate) return 'band';
  return costs.bandSeeks < costs.windowRows ? 'skipScan' : 'dateWalk';
}

/** Which page to read once the count is known. */
export function choosePage(plan: Exclude<Plan, { kind: 'empty' }>, total: number, limit: number): PageFilter {
  if (plan.kind === 'exact') return 'exact';
  const { costs } = plan;
  // Walking the dates backwards finds `limit` matches after about limit / density rows.
  const dateWalk = Math.min(costs.windowRows, (limit * costs.windowRows) / total);
  return dateWalk <= costs.bandSeeks + total ? 'dateWalk' : 'skipScan';
}

/**
 * The costs of a band query from the stats, or `undefined` when there are no bookings.
 * Bookings are assumed spread evenly over time, which is what a cash book is; a wrong
 * guess costs time, never a wrong answer.
 */
export function bandCosts(bounds: Bounds, estimate: Estimate | undefined): BandCosts | undefined {
  const [firstDate, lastDate, , , minAmount, maxAmount] = estimate?.stats ?? [];
  if (firstDate == null || lastDate == null || minAmount == null || maxAmount == null) return undefined;
  return {
    // Only numbers can be compared so: text and blobs sort above every number in SQLite,
    // while JavaScript would compare `'5'` as 5.
    everyAmount:
      typeof minAmount === 'number' &&
      typeof maxAmount === 'number' &&
      bounds.low <= minAmount &&
      bounds.high >= maxAmount,
    // Only text dates can be compared so; anything else (numbers, blobs) sorts elsewhere.
    everyDate:
      typeof firstDate === 'string' &&
      typeof lastDate === 'string' &&
      bounds.von <= firstDate &&
      lastDate < bounds.after,
    // The latest date is text, so every other date sorts at or before it (numbers below text).
    throughLastDate: typeof lastDate === 'string' && lastDate < bounds.after,
    windowRows: estimateWindowRows(bounds, firstDate, lastDate, estimate?.rows ?? 0),
    // Without an index to seek, a skip-scan would read every booking once per amount.
    bandSeeks: estimate?.seeksAmounts
      ? SEEK_COST_IN_ROWS * (Math.min(bounds.high, maxAmount) - Math.max(bounds.low, minAmount) + 1)
      : Number.POSITIVE_INFINITY,
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
