// --workers N: the primary process forks N workers (node:cluster), each of which opens its
// own read-only connection and serves the one shared port or socket. The primary serves no
// request: it says once that the service is up, or once why it is not, replaces a worker
// that dies (within a budget) by one that keeps the start's settings and reads books and
// credentials as a reload does (the others reload too), passes SIGINT/SIGTERM on, has the
// workers reload on SIGHUP and says the outcome once (bin/cluster/reload-workers.ts),
// answers the admin listener for all workers together (bin/admin/monitoring.ts), and holds
// the login throttle's counts for all of them (lib/throttle-authority.ts), so that a worker
// that ends takes none with it. A worker's side: bin/cluster/worker.ts.

import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { buildSharedParts, errorCode } from '../../lib/internal.js';
import { adminLine, answersOfWorkers, listenAdmin } from '../admin/index.js';
import {
  type Channel,
  CliError,
  createChannel,
  describeError,
  inTurn,
  logInfo,
  logLine,
  onReloadSignal,
  onStopSignals,
  type ReloadTrigger,
  stopOnBugs,
} from '../base/index.js';
import type { StaleLog } from '../books/index.js';
import { handlerOptions, type ServeCommand } from '../config/index.js';
import { stopBoundMs, stopListening } from '../listen/index.js';
import { ended, reloadWorkers } from './reload-workers.js';
import { RESTART_BUDGET, RESTART_WINDOW_MS, StartBudget } from './start-budget.js';
import { StopAnswers } from './stopping.js';
import { answerCommand, keepStaleLogs, type WorkerMessage } from './worker.js';

/**
 * This process's part, decided once from node:cluster and --workers: the only process, the
 * primary of --workers (it supervises and serves nothing), or one of its workers (its
 * greeting and its failure go to the primary, which says them once).
 */
export type Role = 'single' | 'primary' | 'worker';

/** Requests the primary lets wait for one worker at most (its reports for the admin listener). */
const MAX_WAITING_FOR_WORKER = 100;

/** In the primary: runs --workers workers until a signal, a failure or the budget ends them; `version` for /metrics. */
export async function superviseWorkers(
  command: ServeCommand,
  preflight: () => Promise<void>,
  version: string,
): Promise<void> {
  // The primary stops and reloads its workers by signals; on Windows a signal sent to
  // another process ends it at once (TerminateProcess): no drain, no reload.
  if (process.platform === 'win32') {
    throw new CliError(
      '--workers is not supported on Windows, where the primary could not stop or reload its workers without ending them; serve from one process (leave --workers out)',
    );
  }
  let running: Supervisor | undefined;
  // An error nothing caught: said in one line; the workers stop as on a signal; exit code 1.
  stopOnBugs(() => (running === undefined ? process.exit(1) : running.endAll(1)));
  await preflight();
  const supervisor = new Supervisor(command, version);
  await supervisor.listenAdmin();
  running = supervisor;
  return new Promise((resolve) => supervisor.start(resolve));
}

/** The primary's workers: forked, heard, replaced within the budget, and ended together. */
class Supervisor {
  private readonly command: ServeCommand;
  /** The login throttle's counts for every worker, which a worker that ends takes none of (lib/throttle-authority.ts). */
  private readonly throttle;
  private readonly monitoring: ReturnType<typeof answersOfWorkers>;
  private readonly channels = new Map<Worker, Channel>();
  private readonly stopAnswers = new StopAnswers(() => this.channels.values());
  /** Workers that said they serve, by their channel. */
  private readonly serving = new Set<Channel>();
  private readonly alive = new Set<Worker>();
  /** The logs the workers refuse as another file's, for a worker started anew (worker.ts, shareStaleLogs). */
  private readonly staleLogs = new Map<string, StaleLog>();
  /** The first start is over: every worker served once, and the service said so. */
  private started = false;
  /** Alive but not serving when a reload was asked: each reloads once it serves (at the first start, all at once). */
  private readonly asked = new Set<Worker>();
  /** Starts in place of a worker that died, and on reloads for one that could not start (start-budget.ts). */
  private readonly budgets = { died: new StartBudget('replacement'), refill: new StartBudget('try') };
  private replaced = 0;
  private ending = false;
  private listening = 0;
  private admin: { server: Server; address: string } | undefined;
  private resolve: () => void = () => {};

  constructor(command: ServeCommand, version: string) {
    this.command = command;
    // Under the limits the workers' handlers take (the primary serves no request: no proxy to trust).
    this.throttle = buildSharedParts(handlerOptions(command.settings)).authority;
    this.monitoring = answersOfWorkers(
      {
        serving: () => [...this.serving],
        expected: command.settings.workers,
        restarts: () => this.replaced,
        stopping: () => this.ending,
      },
      version,
    );
  }

  async listenAdmin(): Promise<void> {
    const { command } = this;
    if (command.admin !== undefined)
      this.admin = await listenAdmin(command.admin, this.monitoring, command.socket?.group, command.timeouts);
  }

  /** Forks the workers; `resolve` once all have ended. */
  start(resolve: () => void): void {
    this.resolve = resolve;
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
    onStopSignals((again, signal) => {
      // The second cuts, as in a single process: each worker closes what it still has open.
      if (again) return this.stopAnswers.cut();
      const within = `within ${stopBoundMs(this.command.timeouts.searchMs) / 1000} s`;
      if (!this.ending) logInfo([`stopping on ${signal}: the workers answer their open requests, ${within}`]);
      this.endAll(0);
    });
    onReloadSignal((by) => {
      // One still starting would not hear it, and may have read the files before they changed.
      for (const [worker, channel] of this.channels) if (!this.serving.has(channel)) this.asked.add(worker);
      if (this.started) void this.reloadAll(by);
      this.refill();
    });
    for (let i = 0; i < this.command.settings.workers; i += 1) this.fork(false);
  }

  private done(): void {
    if (this.admin !== undefined) void stopListening(this.admin.server, 0);
    // A first start that failed said why in its one line: nothing had started to stop.
    if (this.started || process.exitCode === 0) logInfo(['stopped']);
    this.resolve();
  }

  endAll(exitCode: number): void {
    if (!this.ending) {
      // Each worker ends within the bound by itself (bin/serve/listener.ts), or is killed a second later.
      const kill = setTimeout(() => {
        for (const worker of this.alive) worker.process.kill('SIGKILL');
      }, stopBoundMs(this.command.timeouts.searchMs) + 1_000);
      kill.unref();
    }
    this.ending = true;
    // Never lowered: a signal while a failure (a bug, a failed start, a spent budget) stops them.
    process.exitCode = Math.max(Number(process.exitCode ?? 0), exitCode);
    for (const worker of this.alive) worker.process.kill('SIGTERM');
    if (this.alive.size === 0) this.done();
  }

  private fork(replacement: boolean): Worker {
    const { throttle } = this;
    const worker = cluster.fork();
    this.alive.add(worker);
    // A worker that takes no messages (stopped, stuck) costs the primary bounded memory:
    // what it misses of the throttle it gets whole once it takes them again.
    const channel: Channel = createChannel(worker, {
      maxPending: MAX_WAITING_FOR_WORKER,
      behind: (behind) => {
        if (!behind) throttle.caughtUp(channel);
      },
    });
    this.channels.set(worker, channel);
    answerCommand(channel, replacement ? this.command : undefined);
    keepStaleLogs(channel, this.staleLogs);
    // The throttle's whole state follows once the worker's replica asks (lib/throttle-authority.ts).
    throttle.attach(channel);
    this.stopAnswers.attach(channel);
    // The channel to a worker that has just ended (a worker that could not start, while
    // the cluster still answers its listen request) fails with EPIPE. Unheard, that
    // 'error' would end the primary with a stack trace; the worker's end is handled in exited.
    worker.on('error', (error: unknown) => {
      if (errorCode(error) !== 'EPIPE' && !this.ending)
        logLine(`worker ${worker.process.pid}: ${describeError(error)}`);
    });
    worker.on('message', (message: WorkerMessage) => this.heard(worker, channel, message));
    return worker;
  }

  /** The workers that serve but `except` reload, one reload at a time, said once (bin/cluster/reload-workers.ts). */
  private readonly reloadAll = inTurn((by: ReloadTrigger, started?: Worker, except?: Worker) =>
    reloadWorkers(
      [...this.channels]
        .filter(([worker, channel]) => worker !== except && this.serving.has(channel))
        .map(([worker, channel]) => ({ pid: worker.process.pid ?? 0, channel })),
      by,
      // Nobody sent a signal: the lines name the worker whose start asked for the reload.
      started === undefined ? by : `after worker ${started.process.pid} started`,
    ),
  );

  /** On a reload: a worker for each replacement that could not start, within the budget. */
  private refill(): void {
    while (!this.ending && this.alive.size < this.command.settings.workers) {
      const worker = this.forkReplacement('refill');
      if (worker === undefined)
        return logLine(
          `no worker started for one that could not start: ${RESTART_BUDGET} were started within ${RESTART_WINDOW_MS / 1000} s; the next reload tries again`,
          'warning',
        );
      logLine(
        `started worker ${worker.process.pid} for one that could not start (${this.budgets.refill.line()})`,
        'warning',
      );
    }
  }

  private heard(worker: Worker, channel: Channel, message: WorkerMessage): void {
    const { workers } = this.command.settings;
    if (message.type === 'failed' && !this.ending && this.started) {
      // A replacement read the files as a reload does, and one it cannot use keeps the
      // workers that serve their running configuration; /ready says fewer serve.
      logLine(
        `worker ${worker.process.pid} could not start (serving from ${this.serving.size} of ${workers} workers until a reload): ${message.message}`,
      );
    } else if (message.type === 'failed' && !this.ending) {
      // At the first start, a worker that cannot start says why; another would say the same.
      logLine(`booking-search-server: ${message.message}`);
      this.endAll(1);
    } else if (message.type === 'listening') {
      this.serving.add(channel);
      if (this.started) {
        // It serves the files as at its start: the others read them again, and so does it if it missed a reload.
        const asked = this.asked.delete(worker);
        const who = [...(asked ? ['it'] : []), ...(this.serving.size > 1 ? ['the other workers'] : [])].join(' and ');
        const again = who === '' ? '' : `; ${who} read${who === 'it' ? 's' : ''} the files again`;
        logLine(`worker ${worker.process.pid} serves${again}`, 'notice');
        void this.reloadAll('SIGHUP', worker, asked ? undefined : worker);
        return;
      }
      this.listening += 1;
      if (this.listening === workers) {
        this.started = true;
        if (this.asked.size > 0) void this.reloadAll('SIGHUP');
        this.asked.clear();
        const pids = [...this.alive].map((w) => w.process.pid).join(', ');
        logInfo([
          ...message.greeting,
          `Serving from ${workers} worker processes (pids ${pids}), each with its own read-only connection.`,
          ...(this.admin === undefined ? [] : [adminLine(this.admin.address)]),
        ]);
      }
    }
  }

  private exited(worker: Worker, code: number, signal: string | null): void {
    this.alive.delete(worker);
    if (this.started) this.asked.delete(worker);
    const channel = this.channels.get(worker);
    this.channels.delete(worker);
    // A replacement that ends with 1 before it serves could not start (reportFailure ends it so), whether or
    // not its message came before its end: it is not replaced again before a reload.
    const served = channel !== undefined && this.serving.has(channel);
    const couldNotStart = this.started && code === 1 && !served;
    if (channel !== undefined) {
      this.throttle.detach(channel);
      this.stopAnswers.detach(channel);
      this.serving.delete(channel);
      channel.close(ended(worker.process.pid));
      this.monitoring.retire(channel);
    }
    if (this.ending) {
      if (this.alive.size === 0) this.done();
    } else if (!couldNotStart) {
      this.replace(worker, signal === null ? `exit code ${code}` : `signal ${signal}`);
    } else if (this.alive.size === 0) {
      logLine('booking-search-server: no worker serves, stopping');
      this.endAll(1);
    }
  }

  /** A worker that died replaced, unless the budget is spent. */
  private replace(worker: Worker, cause: string): void {
    const replacement = this.forkReplacement('died');
    if (replacement === undefined) {
      logLine(
        `booking-search-server: worker ${worker.process.pid} ended (${cause}); ${RESTART_BUDGET} workers were already replaced within ${RESTART_WINDOW_MS / 1000} s, stopping`,
      );
      return this.endAll(1);
    }
    logLine(
      `worker ${worker.process.pid} ended (${cause}); started worker ${replacement.process.pid} (${this.budgets.died.line()})`,
      'warning',
    );
  }

  /** A worker forked, unless the budget of its `kind` is spent. */
  private forkReplacement(kind: keyof Supervisor['budgets']): Worker | undefined {
    if (!this.budgets[kind].spend()) return undefined;
    this.replaced += 1;
    return this.fork(true);
  }
}
