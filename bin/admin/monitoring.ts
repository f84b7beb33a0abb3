// What the admin listener answers from, in each kind of process: a single process reports
// on itself; a worker of --workers reports to the primary when asked; the primary asks
// every worker that serves and answers for all of them together (docs/operations.md,
// "Monitoring").

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  countRequest,
  type ErrorCode,
  errorSent,
  type Metrics,
  NO_CREDENTIALS,
  OK_OUTCOME,
  OTHER_ENDPOINT,
  outcomeOf,
  PREFLIGHT_OUTCOME,
  REFUSAL_INDEX,
  type RefusalReason,
  requestFacts,
  SEARCH_ENDPOINT,
  STATUS_ENDPOINT,
  snapshotMetrics,
  WRONG_CREDENTIALS,
} from '../../lib/internal.js';
import { type Channel, reloadAsSignalled } from '../base/index.js';
import type { ServedBook } from '../books/index.js';
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

// The refusals that an answer's code tells; the login throttle's four rules are counted
// by the throttle itself, which knows which rule refused.
const REFUSED_BY: Partial<Record<ErrorCode, RefusalReason>> = {
  busy: 'hash_checks',
  too_many_searches: 'searches',
  too_many_unanswered: 'unanswered',
};

/**
 * Counts each answer in `metrics` when its response ends (bin/base/log.ts calls it from the
 * access log's own listener): by the endpoint the handler saw in its path, and by the
 * error it sent, if any; a response the client left before it ended is not an answer.
 */
export function countAnswers(metrics: Metrics): (req: IncomingMessage, res: ServerResponse, ms: number) => void {
  return (req, res, ms) => {
    if (!res.writableFinished) return;
    const facts = requestFacts(req);
    const endpoint =
      facts?.endpoint === 'search' ? SEARCH_ENDPOINT : facts?.endpoint === 'status' ? STATUS_ENDPOINT : OTHER_ENDPOINT;
    const error = errorSent(res);
    if (error === undefined) {
      countRequest(metrics, endpoint, res.statusCode === 204 ? PREFLIGHT_OUTCOME : OK_OUTCOME, ms / 1000);
      return;
    }
    countRequest(metrics, endpoint, outcomeOf(error.code), ms / 1000);
    if (error.code === 'unauthorized') {
      (metrics.failedLogins[facts?.attempted === undefined ? NO_CREDENTIALS : WRONG_CREDENTIALS] as number) += 1;
    }
    const refused = REFUSED_BY[error.code];
    if (refused !== undefined) (metrics.refusals[REFUSAL_INDEX[refused]] as number) += 1;
  };
}

/** A process that serves requests: what it counted, its API listener, its books. */
export interface ServingProcess {
  readonly metrics: Metrics;
  readonly server: Server;
  books(): readonly ServedBook[];
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
        metrics: snapshotMetrics(serving.metrics),
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
    ready: async () => readiness([serving.books().map(reportBook)]),
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
    // The primary's SIGHUP passes it on to every worker.
    reload: reloadAsSignalled,
    ready: async () => {
      const reports = await gather();
      const answered = reports.filter((report) => report !== undefined);
      const ready = readiness(answered.map((report) => report.books));
      const serving = workers.stopping() ? 0 : answered.length;
      return {
        ...ready,
        ready: ready.ready && serving === workers.expected,
        workers: { serving, of: workers.expected },
      };
    },
    metrics: async () => {
      const reports = (await gather()).filter((report) => report !== undefined);
      const cpu = process.cpuUsage();
      return renderMetrics(reports, retired, {
        version,
        startTime,
        serving: reports.length,
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
