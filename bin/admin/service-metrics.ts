// What GET /metrics says of the service: the counts of every process that serves (one, or
// the workers of --workers added up, lib/metrics.ts), then what the service is now — its
// connections, books, processes, reloads, CPU and memory — counted here and written by the
// library under the names lib/metric-families.ts gives them.

import { Metrics } from '../../lib/internal.js';
import type { BookReport } from './admin.js';

const BOOK_STATES: readonly BookReport['state'][] = ['serving', 'waiting', 'missing', 'unusable'];

/** What one serving process reports: its counts, its connections, its books, its resources. */
export interface ProcessReport {
  /** Its counts as its Metrics' `snapshot()` gives them; the primary's Metrics reads them (`add`). */
  metrics: unknown;
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

/** The exposition of the processes' reports added up, and of what the service is now. */
export function renderMetrics(reports: readonly ProcessReport[], retired: Retired, service: ServiceFacts): string {
  const metrics = new Metrics().add(retired.metrics.snapshot(), ...reports.map((report) => report.metrics));
  const sum = (pick: (report: ProcessReport) => number): number =>
    reports.reduce((total, report) => total + pick(report), 0);
  const books = bookCounts(reports, retired);
  return metrics.exposition(service.version, {
    openConnections: sum((report) => report.connections),
    bookStates: books.states,
    bookReplacements: books.replacements,
    reloadSuccessful: reports.every((report) => report.reload.successful),
    reloadSuccessTime: lastReloadApplied(reports, service),
    processes: service.serving,
    workerRestarts: service.restarts,
    cpuSeconds: retired.cpuSeconds + service.ownCpuSeconds + sum((report) => report.cpuSeconds),
    residentBytes: service.ownResidentBytes + sum((report) => report.residentBytes),
    startTime: service.startTime,
  });
}

/** When the process that applied a reload longest ago last applied one (the start without a process). */
function lastReloadApplied(reports: readonly ProcessReport[], service: ServiceFacts): number {
  return reports.length === 0 ? service.startTime : Math.min(...reports.map((report) => report.reload.successTime));
}

/** In how many processes each book is in each state, and how often another file was served at its path. */
function bookCounts(
  reports: readonly ProcessReport[],
  retired: Retired,
): { states: Map<string, Map<string, number>>; replacements: Map<string, number> } {
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
  return { states, replacements };
}
