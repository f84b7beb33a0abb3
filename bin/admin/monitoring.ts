// What the admin listener answers from, in each kind of process: a single process reports
// on itself; a worker of --workers reports to the primary when asked; the primary asks
// every worker that serves and answers for all of them together (docs/operations.md,
// "Monitoring").

import type { Server } from 'node:http';
import type { Metrics } from '../../lib/internal.js';
import { type Channel, reloadAsSignalled } from '../base/index.js';
import type { BookView } from '../books/index.js';
import { type AdminAnswers, type BookReport, type Readiness, type ReadyBook, reportBook } from './admin.js';
import {
  noneRetired,
  type ProcessReport,
  type ReloadResult,
  type Retired,
  renderMetrics,
  retire,
} from './service-metrics.js';

/** How long the primary waits for a worker's report before /ready and /metrics answer without it. */
export const REPORT_TIMEOUT_MS = 2_000;
const REPORT = 'monitoring.report';

/** A process that serves requests: what it counted, its API listener, its books. */
export interface ServingProcess {
  readonly metrics: Metrics;
  readonly server: Server;
  books(): readonly BookView[];
}

/** This process's last reload; its start counts as one applied. */
const lastReload: ReloadResult = { successful: true, successTime: processStartTime() };

/** Records a reload's result, for /metrics (`booking_search_config_last_reload_successful`). */
export function recordReload(successful: boolean): void {
  lastReload.successful = successful;
  if (successful) lastReload.successTime = Date.now() / 1000;
}

/** What `serving` reports now (its open connections are counted by node:http when asked). */
export function reportProcess(serving: ServingProcess): Promise<ProcessReport> {
  return new Promise((resolve) => {
    serving.server.getConnections((error, count) => {
      const cpu = process.cpuUsage();
      resolve({
        metrics: serving.metrics.snapshot(),
        connections: error === null ? count : 0,
        books: serving.books().map(reportBook),
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        residentBytes: process.memoryUsage.rss(),
        reload: { ...lastReload },
      });
    });
  });
}

/** When this process started, in seconds since the epoch. */
export function processStartTime(): number {
  return Math.round(performance.timeOrigin) / 1000;
}

/** The admin listener's answers in a single process: its own report, as a primary's of one worker. */
export function answersOfProcess(serving: ServingProcess, version: string, stopping: () => boolean): AdminAnswers {
  const reporting: Reporting = {
    reports: async () => [await reportProcess(serving)],
    serving: () => 1,
    expected: 1,
    restarts: () => 0,
    stopping,
    // Its CPU time and memory are in its report.
    own: () => ({ cpuSeconds: 0, residentBytes: 0 }),
    namesWorkers: false,
  };
  return answersOf(reporting, version, noneRetired());
}

/** In a worker: answers the primary's requests for this process's report. */
export function reportToPrimary(channel: Channel, serving: ServingProcess): void {
  channel.handle(REPORT, () => reportProcess(serving));
}

/** The workers as the primary knows them. */
export interface Workers {
  /** The channels of the workers that serve now. */
  serving(): readonly Channel[];
  /** How many should serve. */
  readonly expected: number;
  /** Workers started anew after one ended. */
  restarts(): number;
  /** Whether the service is stopping (a signal, or the restart budget spent). */
  stopping(): boolean;
}

export interface ClusterAnswers extends AdminAnswers {
  /** A worker ended: its counters are kept as they were last reported, so that no sum drops. */
  retire(channel: Channel): void;
}

/** The admin listener's answers in the primary of --workers: every serving worker asked, the answers added up. */
export function answersOfWorkers(workers: Workers, version: string): ClusterAnswers {
  const last = new Map<Channel, ProcessReport>();
  const retired: Retired = noneRetired();
  const reporting: Reporting = {
    reports: () => {
      const channels = workers.serving();
      return Promise.all(
        channels.map((channel) =>
          channel.request<ProcessReport>(REPORT, null, REPORT_TIMEOUT_MS).then(
            (report) => {
              last.set(channel, report);
              return report;
            },
            () => undefined,
          ),
        ),
      );
    },
    serving: () => workers.serving().length,
    expected: workers.expected,
    restarts: () => workers.restarts(),
    stopping: () => workers.stopping(),
    own: () => {
      const cpu = process.cpuUsage();
      return { cpuSeconds: (cpu.user + cpu.system) / 1e6, residentBytes: process.memoryUsage.rss() };
    },
    namesWorkers: true,
  };
  return {
    ...answersOf(reporting, version, retired),
    retire(channel) {
      const report = last.get(channel);
      last.delete(channel);
      if (report !== undefined) retire(retired, report);
    },
  };
}

/** The processes that serve, as the admin listener's answers read them. */
interface Reporting extends Omit<Workers, 'serving'> {
  /** Each serving process's report; `undefined` for one that did not answer in time. */
  reports(): Promise<(ProcessReport | undefined)[]>;
  /** How many processes serve now (Workers: how many should, and the rest). */
  serving(): number;
  /** The CPU time and memory of the answering process where no report holds them (the primary's). */
  own(): { cpuSeconds: number; residentBytes: number };
  /** Whether /ready says how many workers serve. */
  readonly namesWorkers: boolean;
}

/**
 * The admin listener's answers over `reporting`. From the stop's signal on no process
 * counts as serving and /ready is 503 whatever the books' states: the API listener takes no
 * connection, a load balancer must send none, and an admin reads why.
 */
function answersOf(reporting: Reporting, version: string, retired: Retired): AdminAnswers {
  const startTime = processStartTime();
  const serving = (count: number): number => (reporting.stopping() ? 0 : count);
  const answered = async (): Promise<ProcessReport[]> =>
    (await reporting.reports()).filter((report) => report !== undefined);
  return {
    live: () => serving(reporting.serving()) > 0,
    // As SIGHUP: the primary's has every worker reload.
    reload: reloadAsSignalled,
    ready: async () => {
      const reports = await answered();
      const { ready, books } = readiness(reports.map((report) => report.books));
      const count = serving(reports.length);
      const workers = reporting.namesWorkers ? { workers: { serving: count, of: reporting.expected } } : {};
      if (reporting.stopping()) return { ready: false, reason: STOPPING, books, ...workers };
      return { ready: ready && count === reporting.expected, books, ...workers };
    },
    metrics: async () => {
      const reports = await answered();
      const own = reporting.own();
      return renderMetrics(reports, retired, {
        version,
        startTime,
        serving: serving(reports.length),
        restarts: reporting.restarts(),
        ownCpuSeconds: own.cpuSeconds,
        ownResidentBytes: own.residentBytes,
      });
    },
  };
}

const STOPPING = 'the service is stopping: it answers its open requests, takes no new ones';

/**
 * Whether every book is served in every process: each book once, with the state of the
 * first process in which it is not served (and why), else served.
 */
function readiness(processes: readonly (readonly BookReport[])[]): Readiness {
  const books = new Map<string, ReadyBook>();
  for (const reports of processes) {
    for (const book of reports) {
      const seen = books.get(book.name);
      const { replaced: _, ...named } = book;
      if (seen === undefined || (seen.state === 'serving' && book.state !== 'serving')) books.set(book.name, named);
    }
  }
  const list = [...books.values()];
  return { ready: processes.length > 0 && list.every((book) => book.state === 'serving'), books: list };
}
