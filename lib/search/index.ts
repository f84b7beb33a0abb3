// The booking search, by job: the SQL text and the planner with its cost model (sql.ts),
// the queue of turns (turns.ts), the search prepared on a database
// (booking-search.ts) and explain for `check` (explain.ts).

export {
  type BookingSearch,
  createBookingSearch,
  createStatsCache,
  isTable,
  type SearchOutcome,
  type SearchRequest,
  type StatsSource,
} from './booking-search.js';
export { explainCount, TYPICAL_QUERY } from './explain.js';
export {
  type BandCosts,
  type BookingRow,
  type Bounds,
  bandCosts,
  type CountKind,
  chooseCount,
  choosePage,
  FILTERS,
  type PageFilter,
  PLAIN,
  type Plan,
  planFor,
  type SearchRows,
  SQL,
  type Stats,
  sqlFor,
  toBounds,
} from './sql.js';
export {
  createLoopTurn,
  createTurns,
  type LoopTurn,
  type Outcome,
  type Requester,
  TURN_BUDGET_MS,
  type Turns,
} from './turns.js';
