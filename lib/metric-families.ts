// What /metrics calls the counts of lib/metrics.ts, and what the command says of the service
// around them (its connections, books, processes, reloads, CPU and memory: the values are the
// command's, their names here), by Prometheus' conventions: the prefix `booking_search_`, base
// units (`_seconds`, `_bytes`), `_total` on counters, and the standard `process_*` names for
// CPU, memory and start time; the labels each count is kept by, and the bounds of its histograms.

import Database from 'better-sqlite3';
import type { Family, Sample } from './exposition.js';
import { badBody, badQuery, ERROR_CODES, ERRORS, type ErrorCode } from './messages.js';
import type { RequestFacts } from './request.js';

/** Which endpoint a request asked for, by its path: the status, the search, the reconciliation, or any other path. */
export type Endpoint = RequestFacts['endpoint'];
// Each endpoint once, in the order /metrics writes them: one left out does not compile.
const EACH_ENDPOINT: Record<Endpoint, null> = { status: null, search: null, abgleich: null, other: null };
export const ENDPOINTS = Object.keys(EACH_ENDPOINT) as Endpoint[];

/** How a request was answered: 200, a CORS preflight's 204, or an error's code. */
export type Answer = 'ok' | 'preflight' | ErrorCode;
export const ANSWERS: readonly Answer[] = ['ok', 'preflight', ...ERROR_CODES];

// The codes of the fixed errors, and the validators' two, whose texts vary.
const STATUS_OF_CODE = Object.fromEntries(
  [...Object.values(ERRORS), badQuery(''), badBody('')].map((error) => [error.code, error.status]),
) as Record<ErrorCode, number>;

/** The labels of each answer: its HTTP status, and its error code if it is one. */
export const OUTCOMES: readonly { readonly status: number; readonly code: ErrorCode | undefined }[] = ANSWERS.map(
  (answer) =>
    answer === 'ok'
      ? { status: 200, code: undefined }
      : answer === 'preflight'
        ? { status: 204, code: undefined }
        : { status: STATUS_OF_CODE[answer], code: answer },
);

/**
 * Why a login failed (docs/API.md, Throttling): wrong credentials count against the
 * budgets; a request without credentials gets the challenge and does not.
 */
export const LOGIN_FAILURES = ['wrong_credentials', 'no_credentials'] as const;

/**
 * Why a request was turned away (429): the login throttle's five rules (failures from the
 * address, of a client that logged in from it, for the username, in all; requests without
 * credentials from the address), a full queue of hash checks, too many searches of the
 * client waiting, too many requests pipelined on one connection whose answers the client
 * has not read.
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

/**
 * Upper bounds of the duration histograms, in seconds: from 0.1 ms (a search answered in
 * its turn) to 10 s (a hash check behind a queue of them on a busy machine).
 */
export const DURATION_BOUNDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;
/** A histogram's buckets: one per bound, and one above them all. */
export const BUCKETS = DURATION_BOUNDS.length + 1;

/** The arrays of counts (lib/metrics.ts); every one only grows, except the two gauges of hash checks. */
export const COUNTS = [
  'requests',
  'requestSeconds',
  'requestSecondsSum',
  'searchWaitSeconds',
  'failedLogins',
  'refusals',
  'hashChecks',
] as const;
export type Counts = { readonly [K in (typeof COUNTS)[number]]: Float64Array };

/** What the service is now, as the command knows it: the values of the families after the requests'. */
export interface ServiceValues {
  readonly openConnections: number;
  /** Book → state → in how many processes the book is in it. */
  readonly bookStates: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Book → times another file was served at its path. */
  readonly bookReplacements: ReadonlyMap<string, number>;
  readonly reloadSuccessful: boolean;
  /** Seconds since the epoch, as `startTime`. */
  readonly reloadSuccessTime: number;
  readonly processes: number;
  readonly workerRestarts: number;
  readonly cpuSeconds: number;
  readonly residentBytes: number;
  readonly startTime: number;
}

/** The build's versions, what the requests met (`metrics`), then what the service is now. */
export function familiesOf(metrics: Counts, version: string, service: ServiceValues): Family[] {
  return [
    {
      type: 'gauge',
      name: 'booking_search_build_info',
      help: 'Always 1; the labels say which version runs on which Node.js and SQLite.',
      samples: [{ labels: { version, node: process.versions.node, sqlite: sqliteVersion() }, value: 1 }],
    },
    ...requestFamilies(metrics),
    ...serviceFamilies(service),
  ];
}

/** What the requests met: answers, their durations, waits, failed logins, refusals, hash checks. */
function requestFamilies(metrics: Counts): Family[] {
  return [
    {
      type: 'counter',
      name: 'booking_search_requests_total',
      help: 'Requests answered, by endpoint (status, search, abgleich, other: any other path), HTTP status and error code.',
      samples: requestSamples(metrics),
    },
    {
      type: 'histogram',
      name: 'booking_search_request_duration_seconds',
      help: 'Time from a request reaching the service to its answer, by endpoint (a password-hash check and the wait for a search turn included).',
      bounds: DURATION_BOUNDS,
      series: ENDPOINTS.map((endpoint, e) => ({
        labels: { endpoint },
        counts: metrics.requestSeconds.subarray(e * BUCKETS, (e + 1) * BUCKETS),
        sum: metrics.requestSecondsSum[e] ?? 0,
      })),
    },
    {
      type: 'histogram',
      name: 'booking_search_search_wait_seconds',
      help: 'Time a search waited for its turn on the database (searches take turns, a few milliseconds at most each).',
      bounds: DURATION_BOUNDS,
      series: [
        { counts: metrics.searchWaitSeconds.subarray(0, BUCKETS), sum: metrics.searchWaitSeconds[BUCKETS] ?? 0 },
      ],
    },
    {
      type: 'counter',
      name: 'booking_search_failed_logins_total',
      help: 'Requests answered 401: wrong_credentials (counted by the login throttle) or no_credentials (the challenge; not counted).',
      samples: LOGIN_FAILURES.map((reason, i) => ({ labels: { reason }, value: metrics.failedLogins[i] ?? 0 })),
    },
    {
      type: 'counter',
      name: 'booking_search_refusals_total',
      help: 'Requests answered 429, by reason: the login throttle (address, client, user, global, unauthenticated), a full queue of password-hash checks (hash_checks), too many searches of one client waiting (searches), too many requests pipelined on one connection whose answers were not read (unanswered).',
      samples: REFUSALS.map((reason, i) => ({ labels: { reason }, value: metrics.refusals[i] ?? 0 })),
    },
    {
      type: 'gauge',
      name: 'booking_search_hash_checks',
      help: 'Password-hash checks now: running (each on a core) and waiting for their turn.',
      samples: [
        { labels: { state: 'running' }, value: metrics.hashChecks[0] ?? 0 },
        { labels: { state: 'waiting' }, value: metrics.hashChecks[1] ?? 0 },
      ],
    },
  ];
}

/** Every outcome seen, and the 200 of each endpoint but `other` always, so that a rate starts at zero. */
function requestSamples(metrics: Counts): Sample[] {
  const samples: Sample[] = [];
  for (let e = 0; e < ENDPOINTS.length; e += 1) {
    const endpoint = ENDPOINTS[e] as Endpoint;
    for (let o = 0; o < OUTCOMES.length; o += 1) {
      const value = metrics.requests[e * OUTCOMES.length + o] ?? 0;
      if (value === 0 && !(o === 0 && endpoint !== 'other')) continue;
      const { status, code } = OUTCOMES[o] as (typeof OUTCOMES)[number];
      const labels: Record<string, string> = { endpoint, status: String(status) };
      if (code !== undefined) labels['error'] = code;
      samples.push({ labels, value });
    }
  }
  return samples;
}

/** What the service is now: connections, books, reloads, processes, CPU and memory. */
function serviceFamilies(service: ServiceValues): Family[] {
  return [
    {
      type: 'gauge',
      name: 'booking_search_open_connections',
      help: 'Client connections open on the API listener.',
      samples: [{ value: service.openConnections }],
    },
    {
      type: 'gauge',
      name: 'booking_search_book_state',
      help: 'Processes in which each book is serving (searches answered), waiting (for its application: a WAL file it has not opened, a hot journal, a lock, a setting such as GnuCash holding the book), missing (the file is gone) or unusable (a file there that cannot be served).',
      samples: [...service.bookStates].flatMap(([book, states]) =>
        [...states].map(([state, value]) => ({ labels: { book, state }, value })),
      ),
    },
    {
      type: 'counter',
      name: 'booking_search_book_replacements_total',
      help: "Times another file was served at a book's path (a restore by rename, a file back after it was missing).",
      samples: [...service.bookReplacements].map(([book, value]) => ({ labels: { book }, value })),
    },
    {
      type: 'gauge',
      name: 'booking_search_config_last_reload_successful',
      help: 'Whether the last reload (SIGHUP, POST /-/reload) was applied in every process: 1, or 0 when one kept what it served.',
      samples: [{ value: service.reloadSuccessful ? 1 : 0 }],
    },
    {
      type: 'gauge',
      name: 'booking_search_config_last_reload_success_timestamp_seconds',
      help: 'When a reload (or the start) was last applied, in the process that applied one longest ago; seconds since the epoch.',
      samples: [{ value: service.reloadSuccessTime }],
    },
    {
      type: 'gauge',
      name: 'booking_search_processes',
      help: 'Processes serving requests: 1, or the workers of --workers that serve now.',
      samples: [{ value: service.processes }],
    },
    {
      type: 'counter',
      name: 'booking_search_worker_restarts_total',
      help: 'Workers of --workers started anew after one ended.',
      samples: [{ value: service.workerRestarts }],
    },
    {
      type: 'counter',
      name: 'process_cpu_seconds_total',
      help: 'User and system CPU time of the service, every process of it together.',
      samples: [{ value: service.cpuSeconds }],
    },
    {
      type: 'gauge',
      name: 'process_resident_memory_bytes',
      help: 'Resident memory of the service, every process of it together.',
      samples: [{ value: service.residentBytes }],
    },
    {
      type: 'gauge',
      name: 'process_start_time_seconds',
      help: 'When the service started, in seconds since the epoch.',
      samples: [{ value: service.startTime }],
    },
  ];
}

let sqlite: string | undefined;
/** The version of SQLite that better-sqlite3 carries, asked once. */
function sqliteVersion(): string {
  if (sqlite === undefined) {
    const db = new Database(':memory:');
    sqlite = String(db.prepare('SELECT sqlite_version()').pluck().get());
    db.close();
  }
  return sqlite;
}
