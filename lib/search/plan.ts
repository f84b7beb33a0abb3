// The planner: which of lib/search/sql.ts's statements a search runs, chosen by a cost
// model from the query's bounds and five index seeks' worth of statistics. Pure: it reads
// no database, so a wrong guess costs time, never a wrong answer.

import type { Bounds, CountKind, PageFilter, Stats } from './sql.js';

/** Costs of the two ways through a band of amounts, in index entries stepped over. */
export interface BandCosts {
  everyAmount: boolean;
  everyDate: boolean;
  /** No stored date is later than the window's end. */
  throughLastDate: boolean;
  windowRows: number;
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

/** The plan for `bounds`; `stats` are read only for a band of amounts. */
export function planFor(bounds: Bounds, stats: Stats | undefined): Plan {
  if (bounds.low === bounds.high) return { kind: 'exact' };
  const costs = bandCosts(bounds, stats);
  return costs === undefined ? { kind: 'empty' } : { kind: 'band', costs };
}

/** Which count to run; `table`: the entries are a table (not a view), so `everything` may be counted. */
export function chooseCount(plan: Exclude<Plan, { kind: 'empty' }>, table = true): CountKind {
  if (plan.kind === 'exact') return 'exact';
  const { costs } = plan;
  if (costs.everyAmount) {
    if (costs.everyDate && table) return 'everything';
    return costs.throughLastDate ? 'windowFrom' : 'window';
  }
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
export function bandCosts(bounds: Bounds, stats: Stats | undefined): BandCosts | undefined {
  const [firstDate, lastDate, maxId, minAmount, maxAmount] = stats ?? [];
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
      bounds.bis >= lastDate,
    // The latest date is text, so every other date sorts at or before it (numbers below text).
    throughLastDate: typeof lastDate === 'string' && bounds.bis >= lastDate,
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
