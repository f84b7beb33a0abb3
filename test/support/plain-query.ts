// The plain query the search is held to: lib/search/sql.ts's PLAIN, docs/API.md's processing
// steps 4 to 6 as plainly as SQL allows, the planner left to itself.

import type Database from 'better-sqlite3';
import type { SearchQuery } from '../../lib/query.js';
import { type BookingRow, type Bounds, PLAIN, type SearchRows, toBounds } from '../../lib/search/index.js';

export function plainSearch(db: Database.Database): (q: SearchQuery) => SearchRows {
  const count = db.prepare<[Bounds], number>(PLAIN.count).pluck();
  const page = db.prepare<[Bounds & { limit: number }], BookingRow>(PLAIN.page).raw();
  return (q) => {
    const bounds = toBounds(q);
    return { count: count.get(bounds) ?? 0, rows: q.limit === 0 ? [] : page.all({ ...bounds, limit: q.limit }) };
  };
}
