// --workers N: the primary process forks N workers (node:cluster), each of which opens its
// own read-only connection and serves the one shared port. The primary only supervises:
// it says once that the service is up, or once why it is not, replaces a worker that
// dies, and passes SIGINT/SIGTERM on, and SIGHUP (each worker re-reads its credentials and
// TLS files).

import cluster, { type Worker } from 'node:cluster';
import type { ServeCommand } from './args.js';

type WorkerMessage = { type: 'listening'; greeting: string[] } | { type: 'failed'; message: string };

// A worker that dies sooner than this after its start is not replaced: it would die again.
const MIN_WORKER_LIFE_MS = 2_000;

/** In a worker: tells the primary that it serves, and what to print. */
export function reportListening(greeting: string[]): void {
  process.send?.({ type: 'listening', greeting } satisfies WorkerMessage);
}

/** In a worker: hands the one line about its failure to the primary, then ends. */
export function reportFailure(message: string): void {
  process.send?.({ type: 'failed', message } satisfies WorkerMessage, () => process.exit(1));
}

/** In the primary: runs `command.workers` workers until a signal or a failure ends them. */
export function superviseWorkers(command: ServeCommand, preflight: () => void): Promise<void> {
  preflight();
  return new Promise((resolve) => {
    const startedAt = new Map<Worker, number>();
    let listening = 0;
    let ending = false;

    const endAll = (exitCode: number): void => {
      ending = true;
      process.exitCode = exitCode;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };

    const fork = (): void => {
      const worker = cluster.fork();
      startedAt.set(worker, Date.now());
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'failed' && !ending) {
          process.stderr.write(`booking-search-server: ${message.message}\n`);
          endAll(1);
        } else if (message.type === 'listening') {
          listening += 1;
          if (listening === command.workers) process.stdout.write(`${message.greeting.join('\n')}\n`);
        }
      });
    };

    cluster.on('exit', (worker, code, signal) => {
      const lived = Date.now() - (startedAt.get(worker) ?? 0);
      startedAt.delete(worker);
      if (ending) {
        if (startedAt.size === 0) resolve();
        return;
      }
      const cause = signal === null ? `exit code ${code}` : `signal ${signal}`;
      if (lived < MIN_WORKER_LIFE_MS) {
        process.stderr.write(`booking-search-server: a worker ended after ${lived} ms (${cause}); stopping\n`);
        endAll(1);
        if (startedAt.size === 0) resolve();
        return;
      }
      process.stderr.write(
        `${new Date().toISOString()} worker ${worker.process.pid} ended (${cause}); starting another\n`,
      );
      fork();
    });

    const stop = (): void => endAll(0);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    process.on('SIGHUP', () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGHUP');
    });
    for (let i = 0; i < command.workers; i += 1) fork();
  });
}
