// The booking search, by job: the SQL text and the planner with its cost model (sql.ts),
// the queue of turns (turns.ts, queued.ts) and whose query runs next (rotations.ts), the
// search prepared on a database (booking-search.ts; over an application's tables,
// application-search.ts), explain for `check` (explain.ts), and the look at a sample's
// texts that `check` and the start take (texts.ts). The door: a file of lib/ outside this
// folder imports only from here.

export {
  amountFault,
  amountSaid,
  bookingFault,
  bookingNamed,
  bookingNamer,
  centsAsAmount,
  shownValue,
  unreadableBooking,
} from './application-search.js';
export { type BookingSearch, createBookingSearch, type SearchOutcome, type SearchRequest } from './booking-search.js';
export {
  createRowEstimate,
  createVersionCache,
  estimateSource,
  explainCount,
  isTable,
  refusalsOf,
  seeksAmounts,
  TYPICAL_QUERY,
  type VersionedSource,
} from './explain.js';
export { LOCK_WAIT_MS } from './queued.js';
export { Rotations } from './rotations.js';
export {
  type BandCosts,
  type BookingRow,
  type Bounds,
  bandCosts,
  type CountKind,
  chooseCount,
  choosePage,
  type Estimate,
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
export { blobText } from './texts.js';
export {
  createLoopTurn,
  createTurns,
  type LoopTurn,
  type Outcome,
  type Requester,
  TURN_BUDGET_MS,
  type Turns,
} from './turns.js';
