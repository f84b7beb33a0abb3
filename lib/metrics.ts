// What the handler counts for an admin's monitoring (the CLI's /metrics): plain numbers in
// typed arrays, indexed by small integers that are fixed when the module loads, so that
// counting a request is a few additions — no allocation, no string, no Map on the way of a
// request. A snapshot is a plain object that crosses a process boundary as JSON, and the
// snapshots of several processes add up (`addSnapshots`).

import { badQuery, ERROR_CODES, ERRORS, type ErrorCode } from './messages.js';

const STATUS_OF_CODE: Partial<Record<ErrorCode, number>> = Object.fromEntries(
  Object.values(ERRORS).map((error) => [error.code, error.status]),
);

/** Which endpoint a request asked for, by its path: the status, the search, or any other path. */
export const ENDPOINTS = ['status', 'search', 'other'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
export const STATUS_ENDPOINT = 0;
export const SEARCH_ENDPOINT = 1;
export const OTHER_ENDPOINT = 2;

/** What a request was answered with: 200, a CORS preflight's 204, or one of the error codes. */
export const OUTCOMES: readonly { readonly status: number; readonly code: ErrorCode | undefined }[] = [
  { status: 200, code: undefined },
  { status: 204, code: undefined },
  ...ERROR_CODES.map((code) => ({ status: statusOf(code), code })),
];
export const OK_OUTCOME = 0;
export const PREFLIGHT_OUTCOME = 1;
const OUTCOME_OF_CODE = Object.fromEntries(ERROR_CODES.map((code, i) => [code, i + 2])) as Record<ErrorCode, number>;

/** The outcome index of an error code. */
export function outcomeOf(code: ErrorCode): number {
  return OUTCOME_OF_CODE[code];
}

/**
 * Why a login failed (docs/API.md, Throttling): wrong credentials count against the
 * budgets; a request without credentials gets the challenge and does not.
 */
export const LOGIN_FAILURES = ['wrong_credentials', 'no_credentials'] as const;
export const WRONG_CREDENTIALS = 0;
export const NO_CREDENTIALS = 1;

/**
 * Why a request was turned away (429): the login throttle's five rules (failures from the
 * address, of a client that logged in from it, for the username, in all; requests without
 * credentials from the address), a
 * full queue of hash checks, too many searches of the client waiting, too many requests
 * pipelined on one connection whose answers the client has not read.
 */
export const REFUSALS = [
  'address',
  'client',
  'user',
  'global',
  'unauthenticated',
  'hash_checks',
  'searches',
  'unanswered',
] as const;
export type RefusalReason = (typeof REFUSALS)[number];
export const REFUSAL_INDEX = Object.fromEntries(REFUSALS.map((reason, i) => [reason, i])) as Record<
  RefusalReason,
  number
>;

/**
 * Upper bounds of the duration histograms, in seconds: from 0.1 ms (a search answered in
 * its turn) to 10 s (a hash check behind a queue of them on a busy machine).
 */
export const DURATION_BOUNDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;
const BUCKETS = DURATION_BOUNDS.length + 1;

/** The counts of one process; every field only grows, except the two gauges of hash checks. */
export interface Metrics {
  /** Answers, by `endpoint * OUTCOMES.length + outcome`. */
  readonly requests: Float64Array;
  /** Request durations, from the request reaching the handler to its answer: `endpoint * BUCKETS + bucket`. */
  readonly requestSeconds: Float64Array;
  /** Their sums, by endpoint. */
  readonly requestSecondsSum: Float64Array;
  /** How long searches waited for their turn, by bucket; the sum in the last element. */
  readonly searchWaitSeconds: Float64Array;
  readonly failedLogins: Float64Array;
  readonly refusals: Float64Array;
  /** [running, waiting]: password-hash checks now. */
  readonly hashChecks: Float64Array;
}

export function createMetrics(): Metrics {
  return {
    requests: new Float64Array(ENDPOINTS.length * OUTCOMES.length),
    requestSeconds: new Float64Array(ENDPOINTS.length * BUCKETS),
    requestSecondsSum: new Float64Array(ENDPOINTS.length),
    searchWaitSeconds: new Float64Array(BUCKETS + 1),
    failedLogins: new Float64Array(LOGIN_FAILURES.length),
    refusals: new Float64Array(REFUSALS.length),
    hashChecks: new Float64Array(2),
  };
}

/** One answer to `endpoint` with `outcome`, `seconds` after the request reached the handler. */
export function countRequest(metrics: Metrics, endpoint: number, outcome: number, seconds: number): void {
  (metrics.requests[endpoint * OUTCOMES.length + outcome] as number) += 1;
  (metrics.requestSeconds[endpoint * BUCKETS + bucketOf(seconds)] as number) += 1;
  (metrics.requestSecondsSum[endpoint] as number) += seconds;
}

/** A search that waited `seconds` for its turn. */
export function countSearchWait(metrics: Metrics, seconds: number): void {
  (metrics.searchWaitSeconds[bucketOf(seconds)] as number) += 1;
  (metrics.searchWaitSeconds[BUCKETS] as number) += seconds;
}

/** The bucket of a duration: the first bound it does not exceed (most are short, so from the start). */
function bucketOf(seconds: number): number {
  let i = 0;
  while (i < DURATION_BOUNDS.length && seconds > (DURATION_BOUNDS[i] as number)) i += 1;
  return i;
}

/** The counts as plain arrays, for another process. */
export type MetricsSnapshot = { readonly [K in keyof Metrics]: number[] };

export function snapshotMetrics(metrics: Metrics): MetricsSnapshot {
  return {
    requests: Array.from(metrics.requests),
    requestSeconds: Array.from(metrics.requestSeconds),
    requestSecondsSum: Array.from(metrics.requestSecondsSum),
    searchWaitSeconds: Array.from(metrics.searchWaitSeconds),
    failedLogins: Array.from(metrics.failedLogins),
    refusals: Array.from(metrics.refusals),
    hashChecks: Array.from(metrics.hashChecks),
  };
}

/** The element-wise sum of snapshots (of several processes); an empty list gives zeros. */
export function addSnapshots(snapshots: readonly MetricsSnapshot[]): MetricsSnapshot {
  const total = snapshotMetrics(createMetrics());
  for (const snapshot of snapshots) {
    for (const key of Object.keys(total) as (keyof MetricsSnapshot)[]) {
      const into = total[key];
      const from = snapshot[key];
      // A snapshot of another shape (never, within one installation) adds what fits.
      for (let i = 0; i < into.length && i < from.length; i += 1) into[i] = (into[i] as number) + (from[i] as number);
    }
  }
  return total;
}

/** Histogram counts of a snapshot array: per bucket, without the sum. */
export function bucketCounts(values: readonly number[], offset = 0): number[] {
  return values.slice(offset, offset + BUCKETS);
}

function statusOf(code: ErrorCode): number {
  return code === 'bad_query' ? badQuery('').status : (STATUS_OF_CODE[code] as number);
}
