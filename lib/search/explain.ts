// What SQLite says of a file, for the planner and for `check`: whether an index seeks
// amounts, how many bookings there are (the planner's estimate), how SQLite runs the
// count the search would choose (explainCount); what is read again only when the file
// changed (createVersionCache), and an application's refusals (refusalsOf).

import type { Database } from 'better-sqlite3';
import { DEFAULT_TABLE_NAMES, type Mapping, ownSchema, type TableNames, useMapping } from '../mapping.js';
import type { SearchQuery } from '../query.js';
import { catalogKind } from '../schema.js';
import { applicationSql } from './application-search.js';
import { type Bounds, chooseCount, type Estimate, planFor, SQL, type Stats, sqlFor, toBounds } from './sql.js';

/** The typical search of a reconciliation run: one exact amount in a month. */
export const TYPICAL_QUERY: SearchQuery = {
  von: '2026-01-01',
  bis: '2026-01-31',
  betragCents: -1250,
  toleranzCents: 0,
  waehrung: 'EUR',
  limit: 50,
};

/** Whether `name` is a table (not a view): only a table's whole b-tree can be counted (CountKind `everything`). */
export function isTable(db: Database, name: string): boolean {
  return catalogKind(db, name) === 'table';
}

/**
 * Whether every table the skip-scan's seek reads is sought in an index by the amount. Asked
 * of SQLite, so that an index of any name counts, and one behind a view where SQLite reaches
 * it. Only a constraint, in parentheses after the index's name, is a seek: an index that
 * holds the amounts but does not begin with them (the date index) is named too, and stepped
 * through whole.
 */
export function seeksAmounts(db: Database, tables: TableNames): boolean {
  const lines = db
    .prepare<[Bounds], { detail: string }>(`EXPLAIN QUERY PLAN ${sqlFor(tables).firstInBand}`)
    .all({ von: '', bis: '', after: '', low: 0, high: 0 })
    .map(({ detail }) => detail);
  return lines.length > 0 && lines.every((detail) => / USING (?:COVERING )?INDEX \S+ \(/.test(detail));
}

/**
 * The planner's estimate of `tables` in `db`, read anew by each `get()` (the search reads
 * it once per version of the file). Whether amounts are sought is asked again when the
 * schema changed: an index added, or dropped under an embedder's handler.
 */
export function estimateSource(
  db: Database,
  tables: TableNames = DEFAULT_TABLE_NAMES,
): { get(): Estimate | undefined } {
  const sql = sqlFor(tables);
  // Prepared on a book's first search of a band, perhaps after its handle's default became
  // BigInts (lib/search/booking-search.ts): numbers, as the planner compares them.
  const stats = db.prepare<[], Stats>(sql.stats).raw().safeIntegers(false);
  // Prepared each time it runs, which is seldom.
  const rows = createRowEstimate(() => db.prepare<[], number>(sql.rows).pluck().safeIntegers(false).get() ?? 0);
  const cookie = db.prepare<[], number>('PRAGMA schema_version').pluck();
  let schema: number | undefined;
  let seeks = false;
  return {
    get() {
      const now = cookie.get();
      if (now !== schema) [schema, seeks] = [now, seeksAmounts(db, tables)];
      const read = stats.get();
      // Without the seek, the window is walked whatever its size: nothing to count.
      return read && { stats: read, rows: seeks ? rows(read) : 0, seeksAmounts: seeks };
    },
  };
}

/**
 * How many bookings there are, from `stats`: counted (a step over every entry of the
 * smallest index, too much for every change of a large book), then scaled by the span of
 * the ids as bookings are added, and counted again once that span has doubled or halved
 * (receipt numbers of a new year) or is no span of numbers. Bookings written into gaps
 * make the estimate low, which only prefers the walk along the window.
 */
export function createRowEstimate(count: () => number): (stats: Stats) => number {
  let counted: { span: number; rows: number } | undefined;
  return ([, , firstId, lastId]) => {
    const span = typeof firstId === 'number' && typeof lastId === 'number' ? lastId - firstId + 1 : Number.NaN;
    if (counted === undefined || !(span <= 2 * counted.span && 2 * span >= counted.span)) {
      counted = { span, rows: count() };
      return counted.rows;
    }
    return Math.round((counted.rows * span) / counted.span);
  };
}

/**
 * How SQLite runs the count of `query` (the typical search by default) on `db` under
 * `mapping`: the EXPLAIN QUERY PLAN lines of the statement the search chooses.
 */
export function explainCount(
  db: Database,
  query: SearchQuery = TYPICAL_QUERY,
  mapping: Mapping = ownSchema(),
): string[] {
  const bounds = toBounds(query);
  if (mapping.kind === 'application') {
    useMapping(db, mapping);
    return db
      .prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${applicationSql(mapping).count}`)
      .all({ ...bounds, ...mapping.window(bounds.von, bounds.bis) })
      .map(({ detail }) => detail);
  }
  const sql = sqlFor(mapping.tables);
  const plan = planFor(bounds, bounds.low === bounds.high ? undefined : estimateSource(db, mapping.tables).get());
  if (plan.kind === 'empty') return [];
  return db
    .prepare<[Bounds], { detail: string }>(
      `EXPLAIN QUERY PLAN ${sql.count(chooseCount(plan, isTable(db, mapping.tables.entries)))}`,
    )
    .all(bounds)
    .map(({ detail }) => detail);
}

/** What a version cache reads again: a prepared statement, or a stand-in in a test. */
export interface VersionedSource<T> {
  get(): T | undefined;
}

/**
 * What `source` gives, read again only when the file has changed: when another connection
 * committed (`PRAGMA data_version`) or this one wrote (`total_changes()`). The planner's
 * statistics: on a view, the six min/max are six scans of the tables behind it; a search
 * must not pay them every time. A mapping's refusals (refusalsOf, below): a setting of the
 * application, changed while the file is served. Called inside the search's read
 * transaction: reading the version starts the snapshot, so what is read after it belongs to
 * that version (stale statistics would not only cost time: `window` and `band` trust them
 * to leave a filter out).
 */
export function createVersionCache<T>(db: Database, source: VersionedSource<T>): () => T | undefined {
  const version = db.prepare<[], string>(SQL.version).pluck();
  let seen: string | undefined;
  let value: T | undefined;
  return () => {
    const now = version.get();
    if (now !== seen || value === undefined) {
      value = source.get();
      seen = now;
    }
    return value;
  };
}

/**
 * The sentences of `mapping`'s refusals that hold in `db` now, read again only when the file
 * changed (a search calls it in each read transaction: an application's setting may change
 * while its file is served); `undefined` for a mapping without refusals, which pays nothing.
 */
export function refusalsOf(db: Database, mapping: Mapping): (() => readonly string[]) | undefined {
  if (mapping.kind !== 'application' || mapping.refusals === undefined) return undefined;
  useMapping(db, mapping);
  const statement = db.prepare<[], string>(mapping.refusals).pluck();
  const refusals = createVersionCache(db, { get: () => statement.all() });
  return () => refusals() ?? [];
}
