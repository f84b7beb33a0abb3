// explainCount, for `check`: how SQLite runs the count the search would choose, as the
// lines of EXPLAIN QUERY PLAN.

import type { Database } from 'better-sqlite3';
import { type Mapping, ownSchema, useMapping } from '../mapping.js';
import type { SearchQuery } from '../query.js';
import { isTable } from './booking-search.js';
import { type Bounds, chooseCount, planFor, type Stats, sqlFor, toBounds } from './sql.js';

/** The typical search of a reconciliation run: one exact amount in a month. */
export const TYPICAL_QUERY: SearchQuery = {
  von: '2026-01-01',
  bis: '2026-01-31',
  betragCents: -1250,
  toleranzCents: 0,
  waehrung: 'EUR',
  limit: 50,
};

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
      .prepare<
        [Record<string, unknown>],
        { detail: string }
      >(`EXPLAIN QUERY PLAN SELECT count(*) FROM (${mapping.bookings})
        WHERE date BETWEEN +:von AND +:bis AND amount_cents BETWEEN +:low AND +:high`)
      .all({ ...bounds, ...mapping.window(bounds.von, bounds.bis) })
      .map(({ detail }) => detail);
  }
  const sql = sqlFor(mapping.tables);
  const plan = planFor(bounds, bounds.low === bounds.high ? undefined : db.prepare<[], Stats>(sql.stats).raw().get());
  if (plan.kind === 'empty') return [];
  return db
    .prepare<[Bounds], { detail: string }>(
      `EXPLAIN QUERY PLAN ${sql.count(chooseCount(plan, isTable(db, mapping.tables.entries)))}`,
    )
    .all(bounds)
    .map(({ detail }) => detail);
}
