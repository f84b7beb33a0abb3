// --workers N: the primary process forks N workers (node:cluster), each of which opens its
// own read-only connection and serves the one shared port or socket. The primary serves no
// request: it says once that the service is up, or once why it is not, replaces a worker
// that dies (within a budget), passes SIGINT/SIGTERM on, and SIGHUP (each worker re-reads
// its credentials and TLS files), answers the admin listener for all workers together
// (bin/admin/monitoring.ts), and holds the login throttle's counts for all of them
// (bin/cluster/shared-throttle.ts), so that a worker that ends takes none with it.

import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { describeError, errorCode } from '../../lib/internal.js';
import { answersOfWorkers, listenAdmin } from '../admin/index.js';
import {
  type Channel,
  CliError,
  createChannel,
  logInfo,
  logLine,
  onReloadSignal,
  onStopSignals,
  type Port,
} from '../base/index.js';
import type { ServeCommand } from '../config/index.js';
import { stopBoundMs, stopListening } from '../listen/index.js';
import type { ThrottleAuthority } from './shared-throttle.js';

/**
 * This process's part, decided once from node:cluster and --workers: the only process, the
 * primary of --workers (it supervises and serves nothing), or one of its workers (its
 * greeting and its failure go to the primary, which says them once).
 */
export type Role = 'single' | 'primary' | 'worker';

type WorkerMessage = { type: 'listening'; greeting: string[] } | { type: 'failed'; message: string };

/**
 * A dead worker is replaced, but at most this many times within RESTART_WINDOW_MS: a
 * worker that keeps dying would otherwise be restarted in a hot loop. With the budget
 * spent the service stops (exit 1), and systemd's Restart=on-failure takes over.
 */
export const RESTART_BUDGET = 5;
export const RESTART_WINDOW_MS = 60_000;

/** In a worker: tells the primary that it serves, and what to print. */
export function reportListening(greeting: string[]): void {
  process.send?.({ type: 'listening', greeting } satisfies WorkerMessage);
}

/**
 * Reservations of the login throttle a worker lets wait for the primary at most
 * (bin/cluster/shared-throttle.ts); one more is refused on the worker's own.
 */
const MAX_WAITING_FOR_PRIMARY = 1_000;

/** Requests the primary lets wait for one worker at most (its reports for the admin listener). */
const MAX_WAITING_FOR_WORKER = 100;

let toPrimary: Channel | undefined;
/**
 * In a worker: its channel to the primary, for requests and notifications
 * (bin/base/channel.ts), bounded, so that a primary that takes no messages (stopped, or
 * stuck) costs the worker bounded memory.
 */
export function primaryChannel(): Channel {
  toPrimary ??= createChannel(process as unknown as Port, {
    maxPending: MAX_WAITING_FOR_PRIMARY,
    behind: (behind) =>
      logLine(
        behind
          ? `worker ${process.pid}: the primary takes no messages: requests without credentials, and credentials it would decide on, get 429 until it does`
          : `worker ${process.pid}: the primary takes messages again`,
        'warning',
      ),
  });
  return toPrimary;
}

/** In a worker: hands the one line about its failure to the primary, then ends. */
export function reportFailure(message: string): void {
  process.send?.({ type: 'failed', message } satisfies WorkerMessage, () => process.exit(1));
}

/**
 * In the primary: runs `command.settings.workers` workers until a signal, a failure or the budget
 * ends them. `version` is the package's, for the admin listener's build info.
 */
export async function superviseWorkers(
  command: ServeCommand,
  preflight: () => Promise<void>,
  version: string,
  throttle: ThrottleAuthority,
): Promise<void> {
  // The primary stops and reloads its workers by signals; on Windows a signal sent to
  // another process ends it at once (TerminateProcess): no drain, no reload.
  if (process.platform === 'win32') {
    throw new CliError(
      '--workers is not supported on Windows, where the primary could not stop or reload its workers without ending them; serve from one process (leave --workers out)',
    );
  }
  await preflight();
  const channels = new Map<Worker, Channel>();
  /** Workers that said they serve, by their channel. */
  const serving = new Set<Channel>();
  let replaced = 0;
  let ending = false;
  const monitoring = answersOfWorkers(
    {
      serving: () => [...serving],
      expected: command.settings.workers,
      restarts: () => replaced,
      stopping: () => ending,
    },
    version,
  );
  let admin: { server: Server; address: string } | undefined;
  if (command.admin !== undefined)
    admin = await listenAdmin(command.admin, monitoring, command.socket?.group, command.timeouts);
  return new Promise((resolve) => {
    const alive = new Set<Worker>();
    const restarts: number[] = [];
    let listening = 0;
    const done = (): void => {
      if (admin !== undefined) void stopListening(admin.server, 0);
      resolve();
    };

    const endAll = (exitCode: number): void => {
      if (!ending) {
        // Each worker ends within the bound by itself (bin/serve/listener.ts); one that
        // does not is killed a second later.
        const kill = setTimeout(() => {
          for (const worker of alive) worker.process.kill('SIGKILL');
        }, stopBoundMs(command.timeouts.searchMs) + 1_000);
        kill.unref();
      }
      ending = true;
      process.exitCode = exitCode;
      for (const worker of alive) worker.process.kill('SIGTERM');
      if (alive.size === 0) done();
    };

    const fork = (): Worker => {
      const worker = cluster.fork();
      alive.add(worker);
      // A worker that takes no messages (stopped, stuck) costs the primary bounded memory:
      // what it misses of the throttle it gets whole once it takes them again.
      const channel: Channel = createChannel(worker, {
        maxPending: MAX_WAITING_FOR_WORKER,
        behind: (behind) => {
          if (!behind) throttle.caughtUp(channel);
        },
      });
      channels.set(worker, channel);
      // The throttle's state goes first, before the worker's first request (bin/cluster/shared-throttle.ts).
      throttle.attach(channel);
      // The channel to a worker that has just ended (a worker that could not start, while
      // the cluster still answers its listen request) fails with EPIPE. Unheard, that
      // 'error' would end the primary with a stack trace; the worker's end is handled below.
      worker.on('error', (error: unknown) => {
        if (errorCode(error) !== 'EPIPE' && !ending) logLine(`worker ${worker.process.pid}: ${describeError(error)}`);
      });
      worker.on('message', (message: WorkerMessage) => {
        // A worker that cannot start says why; that will not change by starting another.
        if (message.type === 'failed' && !ending) {
          logLine(`booking-search-server: ${message.message}`);
          endAll(1);
        } else if (message.type === 'listening') {
          serving.add(channel);
          if (listening >= command.settings.workers) return;
          listening += 1;
          if (listening === command.settings.workers) {
            const pids = [...alive].map((w) => w.process.pid).join(', ');
            logInfo([
              ...message.greeting,
              `Serving from ${command.settings.workers} worker processes (pids ${pids}), each with its own read-only connection.`,
              ...(admin === undefined ? [] : [adminLine(admin.address)]),
            ]);
          }
        }
      });
      return worker;
    };

    cluster.on('exit', (worker, code, signal) => {
      alive.delete(worker);
      const channel = channels.get(worker);
      channels.delete(worker);
      if (channel !== undefined) {
        throttle.detach(channel);
        serving.delete(channel);
        channel.close(`worker ${worker.process.pid} ended`);
        monitoring.retire(channel);
      }
      if (ending) {
        if (alive.size === 0) done();
        return;
      }
      const cause = signal === null ? `exit code ${code}` : `signal ${signal}`;
      const now = Date.now();
      while (restarts.length > 0 && (restarts[0] ?? 0) <= now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length >= RESTART_BUDGET) {
        logLine(
          `booking-search-server: worker ${worker.process.pid} ended (${cause}); ${RESTART_BUDGET} workers were already replaced within ${RESTART_WINDOW_MS / 1000} s, stopping`,
        );
        endAll(1);
        return;
      }
      restarts.push(now);
      replaced += 1;
      const replacement = fork();
      logLine(
        `worker ${worker.process.pid} ended (${cause}); started worker ${replacement.process.pid} (replacement ${restarts.length} of ${RESTART_BUDGET} allowed within ${RESTART_WINDOW_MS / 1000} s)`,
        'warning',
      );
    });

    onStopSignals(() => endAll(0));
    onReloadSignal(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGHUP');
    });
    for (let i = 0; i < command.settings.workers; i += 1) fork();
  });
}

/** The start-up line that says where the admin listener is. */
export function adminLine(address: string): string {
  return `admin listener on ${address} (/live, /ready, /metrics, POST /-/reload; no credentials)`;
}
