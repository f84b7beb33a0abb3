// What GET /metrics says of the service: the counts of every process that serves (one, or
// the workers of --workers added up, lib/metrics.ts), then what the service is now — its
// connections, books, processes, reloads, CPU and memory — named by Prometheus'
// conventions: the prefix `booking_search_`, base units (`_seconds`, `_bytes`), `_total` on
// counters, and the standard `process_*` names for CPU, memory and start time.

import { type Family, Metrics, type MetricsSnapshot } from '../../lib/internal.js';
import type { BookReport } from './admin.js';

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
  metrics: Metrics;
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
  return { metrics: new Metrics(), replacements: {}, cpuSeconds: 0 };
}

/** Adds an ended process's counters to `retired`. */
export function retire(retired: Retired, report: ProcessReport): void {
  retired.metrics.addEnded(report.metrics);
  retired.cpuSeconds += report.cpuSeconds;
  for (const book of report.books) {
    retired.replacements[book.name] = (retired.replacements[book.name] ?? 0) + book.replaced;
  }
}

/** The exposition of the processes' reports added up. */
export function renderMetrics(reports: readonly ProcessReport[], retired: Retired, service: ServiceFacts): string {
  const metrics = new Metrics().add(retired.metrics.snapshot(), ...reports.map((report) => report.metrics));
  return metrics.exposition(service.version, serviceFamilies(reports, retired, service));
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
    ...bookFamilies(reports, retired),
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

/** In how many processes each book is in each state, and how often another file was served at its path. */
function bookFamilies(reports: readonly ProcessReport[], retired: Retired): Family[] {
  const states = new Map<string, Map<string, number>>();
  const replacements = new Map<string, number>(Object.entries(retired.replacements));
  for (const report of reports) {
    for (const book of report.books) {
      const counts = states.get(book.name) ?? new Map(BOOK_STATES.map((state) => [state, 0]));
      counts.set(book.state, (counts.get(book.state) ?? 0) + 1);
      states.set(book.name, counts);
      replacements.set(book.name, (replacements.get(book.name) ?? 0) + book.replaced);
    }
  }
  return [
    {
      type: 'gauge',
      name: 'booking_search_book_state',
      help: 'Processes in which each book is serving (searches answered), waiting (for its application: a WAL file it has not opened, a hot journal, a lock), missing (the file is gone) or unusable (a file there that cannot be served).',
      samples: [...states].flatMap(([book, counts]) =>
        [...counts].map(([state, value]) => ({ labels: { book, state }, value })),
      ),
    },
    {
      type: 'counter',
      name: 'booking_search_book_replacements_total',
      help: "Times another file was served at a book's path (a restore by rename, a file back after it was missing).",
      samples: [...replacements].map(([book, value]) => ({ labels: { book }, value })),
    },
  ];
}
