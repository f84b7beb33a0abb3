// What the command (bin/) uses of the library beyond its public entry (lib/index.ts): the
// pieces it builds a service from. Only re-exports; bin/ imports the library from here and
// from lib/index.ts, nowhere else.

export { APP_NAMES, findApplication } from './apps/index.js';
export { canonicalAddress, rememberPeer } from './client-address.js';
export { originProblem } from './cors.js';
export { type CredentialsProblem, checkCredentials } from './credentials.js';
export { validateDatabase } from './database-handle.js';
export { describeError, errorCode, isNotReadableNow } from './errors.js';
export { formatSearchResult } from './format.js';
export { createHandlerOver } from './handler.js';
export { createHashChecks } from './hash-checks.js';
export { type Mapping, ownSchema, quoteName, TABLE_NAME, type TableNames, useMapping } from './mapping.js';
export { checkMeaning, withoutBookingValues } from './meaning.js';
export {
  addSnapshots,
  bucketCounts,
  countRequest,
  countSearchWait,
  createMetrics,
  DURATION_BOUNDS,
  ENDPOINTS,
  LOGIN_FAILURES,
  type Metrics,
  type MetricsSnapshot,
  NO_CREDENTIALS,
  OK_OUTCOME,
  OTHER_ENDPOINT,
  OUTCOMES,
  outcomeOf,
  PREFLIGHT_OUTCOME,
  REFUSAL_INDEX,
  REFUSALS,
  type RefusalReason,
  SEARCH_ENDPOINT,
  STATUS_ENDPOINT,
  snapshotMetrics,
  WRONG_CREDENTIALS,
} from './metrics.js';
export { formatEuros } from './money.js';
export { DEFAULTS, resolveOptions, SERVICE_NAME } from './options.js';
export { hashPassword, isPasswordHash } from './password-hash.js';
export { hasBadHost } from './protocol-errors.js';
export type { SearchQuery } from './query.js';
export { basePathRefusal, normalBasePath, pathForLog } from './request-target.js';
export { answeringTogether, errorSent, withinUnansweredBound } from './respond.js';
export {
  detectApplication,
  findRecommendedIndexes,
  findSchemaProblems,
  findUnboundedObject,
  recogniseOlder,
  recogniseOther,
} from './schema.js';
export {
  type BookingSearch,
  createBookingSearch,
  explainCount,
  type Outcome,
  type Requester,
  type SearchRequest,
  type SearchRows,
} from './search/index.js';
export type { SearchTurns } from './search-endpoint.js';
export { createThrottle, type LocalThrottle, type Throttle, type ThrottleRule } from './throttle.js';
export type { SharedParts } from './types.js';
