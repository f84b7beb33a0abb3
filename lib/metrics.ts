// What the handler counts for an admin's monitoring (the CLI's /metrics), and how the counts
// add up and read. Plain numbers in typed arrays, indexed by small integers fixed when the
// module loads, so that counting a request is a few additions — no allocation, no Map on
// the way of a request. A snapshot is a plain object that crosses a process boundary as
// JSON; the snapshots of several processes add up into one Metrics, which reads as
// Prometheus' text format (lib/metric-families.ts names what it writes).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { EXPOSITION_CONTENT_TYPE, writeExposition } from './exposition.js';
import type { ErrorCode } from './messages.js';
import {
  ANSWERS,
  type Answer,
  BUCKETS,
  COUNTS,
  type Counts,
  DURATION_BOUNDS,
  ENDPOINTS,
  type Endpoint,
  familiesOf,
  LOGIN_FAILURES,
  OUTCOMES,
  REFUSALS,
  type RefusalReason,
  type ServiceValues,
} from './metric-families.js';
import { requestFacts } from './request.js';
import { errorSent } from './respond.js';

const ENDPOINT_INDEX = indexOf(ENDPOINTS);
const OUTCOME_INDEX = indexOf(ANSWERS);
const LOGIN_FAILURE_INDEX = indexOf(LOGIN_FAILURES);
const REFUSAL_INDEX = indexOf(REFUSALS);

// The refusals that an answer's code tells; the login throttle's rules are counted by the
// throttle itself, which knows which rule refused.
const REFUSED_BY: Partial<Record<ErrorCode, RefusalReason>> = {
  busy: 'hash_checks',
  too_many_searches: 'searches',
  too_many_unanswered: 'unanswered',
};

/** What a process that ended still counts: everything but its gauges of hash checks. */
const ENDED_COUNTS = COUNTS.filter((key) => key !== 'hashChecks');

/** The counts as plain arrays, for another process. */
export type MetricsSnapshot = { readonly [K in keyof Counts]: number[] };

/** The counts of one process, or of several added up. */
export class Metrics implements Counts {
  /** The Content-Type of `exposition()`. */
  static readonly contentType = EXPOSITION_CONTENT_TYPE;

  /** Answers, by `endpoint * OUTCOMES.length + outcome`. */
  readonly requests = new Float64Array(ENDPOINTS.length * OUTCOMES.length);
  /** Request durations, from the request reaching the handler to its answer: `endpoint * BUCKETS + bucket`. */
  readonly requestSeconds = new Float64Array(ENDPOINTS.length * BUCKETS);
  /** Their sums, by endpoint. */
  readonly requestSecondsSum = new Float64Array(ENDPOINTS.length);
  /** How long searches waited for their turn, by bucket; the sum in the last element. */
  readonly searchWaitSeconds = new Float64Array(BUCKETS + 1);
  /** By LOGIN_FAILURES. */
  readonly failedLogins = new Float64Array(LOGIN_FAILURES.length);
  /** By REFUSALS. */
  readonly refusals = new Float64Array(REFUSALS.length);
  /** [running, waiting]: password-hash checks now (lib/hash-checks.ts keeps them). */
  readonly hashChecks = new Float64Array(2);

  /**
   * An answer, when its response has ended (the access log's listener calls it; a response
   * the client left before it ended is not an answer): by the endpoint the handler saw in
   * its path and by the error it sent, if any; a 401 as a failed login, a 429 that its
   * code explains as a refusal. `seconds` since the request reached the handler.
   */
  countAnswer(req: IncomingMessage, res: ServerResponse, seconds: number): void {
    if (!res.writableFinished) return;
    const facts = requestFacts(req);
    const endpoint = facts?.endpoint ?? 'other';
    const error = errorSent(res);
    if (error === undefined) return this.countRequest(endpoint, res.statusCode === 204 ? 'preflight' : 'ok', seconds);
    this.countRequest(endpoint, error.code, seconds);
    if (error.code === 'unauthorized') {
      const failure = facts?.attempted === undefined ? 'no_credentials' : 'wrong_credentials';
      (this.failedLogins[LOGIN_FAILURE_INDEX[failure]] as number) += 1;
    }
    const refused = REFUSED_BY[error.code];
    if (refused !== undefined) this.countRefusal(refused);
  }

  /** One answer to `endpoint`, `seconds` after the request reached the handler. */
  countRequest(endpoint: Endpoint, answer: Answer, seconds: number): void {
    const e = ENDPOINT_INDEX[endpoint];
    (this.requests[e * OUTCOMES.length + OUTCOME_INDEX[answer]] as number) += 1;
    (this.requestSeconds[e * BUCKETS + bucketOf(seconds)] as number) += 1;
    (this.requestSecondsSum[e] as number) += seconds;
  }

  /** A search that waited `seconds` for its turn. */
  countSearchWait(seconds: number): void {
    (this.searchWaitSeconds[bucketOf(seconds)] as number) += 1;
    (this.searchWaitSeconds[BUCKETS] as number) += seconds;
  }

  /** A request turned away with 429, for `reason`. */
  countRefusal(reason: RefusalReason): void {
    (this.refusals[REFUSAL_INDEX[reason]] as number) += 1;
  }

  /** These counts as plain arrays, for another process: its `add` reads them. */
  snapshot(): MetricsSnapshot {
    return Object.fromEntries(COUNTS.map((key) => [key, Array.from(this[key])])) as unknown as MetricsSnapshot;
  }

  /**
   * Adds the counts of other processes, each as its `snapshot()` gave it. A snapshot crossed a
   * process boundary, so it is read, not trusted: what does not fit these counts adds nothing.
   */
  add(...snapshots: readonly unknown[]): this {
    for (const snapshot of snapshots) this.addCounts(snapshot, COUNTS);
    return this;
  }

  /**
   * Adds the counts of a process that ended: its counters, not its gauges of hash checks,
   * since nothing runs or waits in it any more (they would stay in every sum after it).
   */
  addEnded(snapshot: unknown): this {
    this.addCounts(snapshot, ENDED_COUNTS);
    return this;
  }

  /** Adds what fits these counts of `snapshot`, under `keys`. */
  private addCounts(snapshot: unknown, keys: readonly (keyof Counts)[]): void {
    if (typeof snapshot !== 'object' || snapshot === null) return;
    for (const key of keys) {
      const into = this[key];
      const from: unknown = (snapshot as Record<string, unknown>)[key];
      if (!Array.isArray(from)) continue;
      for (let i = 0; i < into.length && i < from.length; i += 1) {
        const value: unknown = from[i];
        if (typeof value === 'number') (into[i] as number) += value;
      }
    }
  }

  /**
   * The counts in Prometheus' text format (`Metrics.contentType`): which `version` runs on
   * which Node.js and SQLite, what the requests met, then what the service is now (`service`).
   */
  exposition(version: string, service: ServiceValues): string {
    return writeExposition(familiesOf(this, version, service));
  }
}

/** The bucket of a duration: the first bound it does not exceed (most are short, so from the start). */
function bucketOf(seconds: number): number {
  let i = 0;
  while (i < DURATION_BOUNDS.length && seconds > (DURATION_BOUNDS[i] as number)) i += 1;
  return i;
}

function indexOf<T extends string>(names: readonly T[]): Record<T, number> {
  return Object.fromEntries(names.map((name, i) => [name, i])) as Record<T, number>;
}
