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
  type ServiceFacts,
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

/** The admin listener's answers in a single process. */
export function answersOfProcess(serving: ServingProcess, version: string, stopping: () => boolean): AdminAnswers {
  const startTime = processStartTime();
  return {
    live: () => !stopping(),
    reload: reloadAsSignalled,
    ready: async () => whileStopping(readiness([serving.books().map(reportBook)]), stopping()),
    metrics: async () => {
      const report = await reportProcess(serving);
      const service: ServiceFacts = {
        version,
        startTime,
        serving: stopping() ? 0 : 1,
        restarts: 0,
        ownCpuSeconds: 0,
        ownResidentBytes: 0,
      };
      return renderMetrics([report], noneRetired(), service);
    },
  };
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
  const startTime = processStartTime();
  const last = new Map<Channel, ProcessReport>();
  const retired: Retired = noneRetired();

  /** Each serving worker's report, or `undefined` for one that did not answer in time. */
  async function gather(): Promise<(ProcessReport | undefined)[]> {
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
  }

  return {
    live: () => !workers.stopping() && workers.serving().length > 0,
    // The primary's SIGHUP has every worker reload.
    reload: reloadAsSignalled,
    ready: async () => {
      const reports = await gather();
      const answered = reports.filter((report) => report !== undefined);
      const ready = readiness(answered.map((report) => report.books));
      const serving = workers.stopping() ? 0 : answered.length;
      return whileStopping(
        { ...ready, ready: ready.ready && serving === workers.expected, workers: { serving, of: workers.expected } },
        workers.stopping(),
      );
    },
    metrics: async () => {
      const reports = (await gather()).filter((report) => report !== undefined);
      const cpu = process.cpuUsage();
      return renderMetrics(reports, retired, {
        version,
        startTime,
        // As /ready and a single process count them: none from the stop's signal on.
        serving: workers.stopping() ? 0 : reports.length,
        restarts: workers.restarts(),
        ownCpuSeconds: (cpu.user + cpu.system) / 1e6,
        ownResidentBytes: process.memoryUsage.rss(),
      });
    },
    retire(channel) {
      const report = last.get(channel);
      last.delete(channel);
      if (report !== undefined) retire(retired, report);
    },
  };
}

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

/**
 * From SIGTERM on the API listener takes no connection: a load balancer must send none,
 * whatever the books' states, and an admin reads why.
 */
function whileStopping(readiness: Readiness, stopping: boolean): Readiness {
  if (!stopping) return readiness;
  const { ready: _, books, ...rest } = readiness;
  return {
    ready: false,
    reason: 'the service is stopping: it answers its open requests, takes no new ones',
    books,
    ...rest,
  };
}
