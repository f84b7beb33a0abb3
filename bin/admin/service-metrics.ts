// What GET /metrics on the admin listener says: the counts of every process that serves
// (one, or the workers of --workers added up), named by Prometheus' conventions — the
// prefix `booking_search_`, base units (`_seconds`, `_bytes`), `_total` on counters, and
// the standard `process_*` names for CPU, memory and start time.

import Database from 'better-sqlite3';
import {
  addSnapshots,
  bucketCounts,
  DURATION_BOUNDS,
  ENDPOINTS,
  LOGIN_FAILURES,
  type MetricsSnapshot,
  OK_OUTCOME,
  OUTCOMES,
  REFUSALS,
  SEARCH_ENDPOINT,
  STATUS_ENDPOINT,
} from '../../lib/internal.js';
import type { BookReport } from './admin.js';
import { type Family, type Sample, writeExposition } from './exposition.js';

const BOOK_STATES: readonly BookReport['state'][] = ['serving', 'waiting', 'missing', 'unusable'];

/** What one serving process reports: its counts, its connections, its books, its resources. */
export interface ProcessReport {
  metrics: MetricsSnapshot;
  /** Open connections of its API listener. */
  connections: number;
  books: BookReport[];
  /** User and system CPU time since it started. */
  cpuSeconds: number;
  residentBytes: number;
  /** Its last reload (SIGHUP, POST /-/reload); the start counts as one that succeeded. */
  reload: ReloadResult;
}

/** Whether a process's last reload was applied, and when one last was, in seconds since the epoch. */
export interface ReloadResult {
  successful: boolean;
  successTime: number;
}

/**
 * What no longer serves but was counted: the counters of workers that ended, so that the
 * sums only grow (a counter that drops reads as a restart to Prometheus' rate()).
 */
export interface Retired {
  metrics: MetricsSnapshot;
  replacements: Record<string, number>;
  cpuSeconds: number;
}

/** The service around the processes: its start, and with --workers, the workers and their replacements. */
export interface ServiceFacts {
  version: string;
  /** When the service started, in seconds since the epoch. */
  startTime: number;
  /** Processes that serve now. */
  serving: number;
  /** Workers replaced after they ended (0 without --workers). */
  restarts: number;
  /** CPU time and memory of the primary of --workers itself (0 without it). */
  ownCpuSeconds: number;
  ownResidentBytes: number;
}

export function noneRetired(): Retired {
  return { metrics: addSnapshots([]), replacements: {}, cpuSeconds: 0 };
}

/** Adds an ended process's counters to `retired`. */
export function retire(retired: Retired, report: ProcessReport): void {
  retired.metrics = addSnapshots([retired.metrics, report.metrics]);
  retired.cpuSeconds += report.cpuSeconds;
  for (const book of report.books) {
    retired.replacements[book.name] = (retired.replacements[book.name] ?? 0) + book.replaced;
  }
}

/** The exposition of the processes' reports added up. */
export function renderMetrics(reports: readonly ProcessReport[], retired: Retired, service: ServiceFacts): string {
  const metrics = addSnapshots([retired.metrics, ...reports.map((report) => report.metrics)]);
  return writeExposition([
    {
      type: 'gauge',
      name: 'booking_search_build_info',
      help: 'Always 1; the labels say which version runs on which Node.js and SQLite.',
      samples: [
        { labels: { version: service.version, node: process.versions.node, sqlite: sqliteVersion() }, value: 1 },
      ],
    },
    ...requestFamilies(metrics),
    ...serviceFamilies(reports, retired, service),
  ]);
}

/** What the requests met: answers, their durations, waits, failed logins, refusals, hash checks. */
function requestFamilies(metrics: MetricsSnapshot): Family[] {
  return [
    {
      type: 'counter',
      name: 'booking_search_requests_total',
      help: 'Requests answered, by endpoint (status, search, other: any other path), HTTP status and error code.',
      samples: requestSamples(metrics),
    },
    {
      type: 'histogram',
      name: 'booking_search_request_duration_seconds',
      help: 'Time from a request reaching the service to its answer, by endpoint (a password-hash check and the wait for a search turn included).',
      bounds: DURATION_BOUNDS,
      series: ENDPOINTS.map((endpoint, e) => ({
        labels: { endpoint },
        counts: bucketCounts(metrics.requestSeconds, e * (DURATION_BOUNDS.length + 1)),
        sum: metrics.requestSecondsSum[e] ?? 0,
      })),
    },
    {
      type: 'histogram',
      name: 'booking_search_search_wait_seconds',
      help: 'Time a search waited for its turn on the database (searches take turns, a few milliseconds at most each).',
      bounds: DURATION_BOUNDS,
      series: [
        {
          counts: bucketCounts(metrics.searchWaitSeconds),
          sum: metrics.searchWaitSeconds[DURATION_BOUNDS.length + 1] ?? 0,
        },
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

/** What the service is now: connections, books, processes, CPU and memory. */
function serviceFamilies(reports: readonly ProcessReport[], retired: Retired, service: ServiceFacts): Family[] {
  const sum = (pick: (report: ProcessReport) => number): number =>
    reports.reduce((total, report) => total + pick(report), 0);
  return [
    {
      type: 'gauge',
      name: 'booking_search_open_connections',
      help: 'Client connections open on the API listener.',
      samples: [{ value: sum((report) => report.connections) }],
    },
    {
      type: 'gauge',
      name: 'booking_search_book_state',
      help: 'Processes in which each book is serving (searches answered), waiting (for its application: a WAL file it has not opened, a hot journal, a lock), missing (the file is gone) or unusable (a file there that cannot be served).',
      samples: bookStateSamples(reports),
    },
    {
      type: 'counter',
      name: 'booking_search_book_replacements_total',
      help: "Times another file was served at a book's path (a restore by rename, a file back after it was missing).",
      samples: replacementSamples(reports, retired),
    },
    {
      type: 'gauge',
      name: 'booking_search_config_last_reload_successful',
      help: 'Whether the last reload (SIGHUP, POST /-/reload) was applied in every process: 1, or 0 when one kept what it served.',
      samples: [{ value: reports.every((report) => report.reload.successful) ? 1 : 0 }],
    },
    {
      type: 'gauge',
      name: 'booking_search_config_last_reload_success_timestamp_seconds',
      help: 'When a reload (or the start) was last applied, in the process that applied one longest ago; seconds since the epoch.',
      samples: [{ value: lastReloadApplied(reports, service) }],
    },
    {
      type: 'gauge',
      name: 'booking_search_processes',
      help: 'Processes serving requests: 1, or the workers of --workers that serve now.',
      samples: [{ value: service.serving }],
    },
    {
      type: 'counter',
      name: 'booking_search_worker_restarts_total',
      help: 'Workers of --workers started anew after one ended.',
      samples: [{ value: service.restarts }],
    },
    {
      type: 'counter',
      name: 'process_cpu_seconds_total',
      help: 'User and system CPU time of the service, every process of it together.',
      samples: [{ value: retired.cpuSeconds + service.ownCpuSeconds + sum((report) => report.cpuSeconds) }],
    },
    {
      type: 'gauge',
      name: 'process_resident_memory_bytes',
      help: 'Resident memory of the service, every process of it together.',
      samples: [{ value: service.ownResidentBytes + sum((report) => report.residentBytes) }],
    },
    {
      type: 'gauge',
      name: 'process_start_time_seconds',
      help: 'When the service started, in seconds since the epoch.',
      samples: [{ value: service.startTime }],
    },
  ];
}

/** When the process that applied a reload longest ago last applied one (the start without a process). */
function lastReloadApplied(reports: readonly ProcessReport[], service: ServiceFacts): number {
  return reports.length === 0 ? service.startTime : Math.min(...reports.map((report) => report.reload.successTime));
}

/** Every outcome seen, and the 200 of both endpoints always, so that a rate starts at zero. */
function requestSamples(metrics: MetricsSnapshot): Sample[] {
  const samples: Sample[] = [];
  for (let e = 0; e < ENDPOINTS.length; e += 1) {
    for (let o = 0; o < OUTCOMES.length; o += 1) {
      const value = metrics.requests[e * OUTCOMES.length + o] ?? 0;
      const always = o === OK_OUTCOME && (e === STATUS_ENDPOINT || e === SEARCH_ENDPOINT);
      if (value === 0 && !always) continue;
      const { status, code } = OUTCOMES[o] as (typeof OUTCOMES)[number];
      const labels: Record<string, string> = { endpoint: ENDPOINTS[e] as string, status: String(status) };
      if (code !== undefined) labels['error'] = code;
      samples.push({ labels, value });
    }
  }
  return samples;
}

function bookStateSamples(reports: readonly ProcessReport[]): Sample[] {
  const counts = new Map<string, Map<string, number>>();
  for (const report of reports) {
    for (const book of report.books) {
      const states = counts.get(book.name) ?? new Map(BOOK_STATES.map((state) => [state, 0]));
      states.set(book.state, (states.get(book.state) ?? 0) + 1);
      counts.set(book.name, states);
    }
  }
  const samples: Sample[] = [];
  for (const [book, states] of counts) {
    for (const [state, value] of states) samples.push({ labels: { book, state }, value });
  }
  return samples;
}

function replacementSamples(reports: readonly ProcessReport[], retired: Retired): Sample[] {
  const counts = new Map<string, number>(Object.entries(retired.replacements));
  for (const report of reports) {
    for (const book of report.books) counts.set(book.name, (counts.get(book.name) ?? 0) + book.replaced);
  }
  return [...counts].map(([book, value]) => ({ labels: { book }, value }));
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
