// A worker of --workers: its side of the messages to and from the primary
// (bin/cluster/workers.ts) — what it serves, that it serves, or why it could not start, and its channel.

import cluster from 'node:cluster';
import { type Channel, createChannel, isStopping, isUnhandled, logLine, type Port } from '../base/index.js';
import { type StaleLog, staleLogs } from '../books/index.js';
import type { ServeCommand } from '../config/index.js';

/** What a worker tells the primary about its start. */
export type WorkerMessage = { type: 'listening'; greeting: string[] } | { type: 'failed'; message: string };

const COMMAND = 'command';

/**
 * How long a worker waits for its primary's command after it last heard from it: a primary
 * stopped that long ends the start (the primary answers a worker's listen too, unbounded).
 */
const COMMAND_TIMEOUT_MS = 300_000;

/**
 * In a worker: the command its primary runs, when the primary started it in place of
 * another, else `undefined` (a worker of the first start reads argv, as its primary did).
 * The service's settings stay as it started with them; the answer holds no credentials
 * and no books, which the worker reads as a reload does (bin/serve/reload.ts).
 */
export async function commandOfPrimary(): Promise<ServeCommand | undefined> {
  return cluster.isWorker ? commandFrom(primaryChannel()) : undefined;
}

/**
 * The command `primary` answers; `undefined` when it answers null, or has no handler for the
 * question: a primary of a version before it (a new version installed, the service not yet
 * restarted), whose workers all read argv, as a first start's do.
 */
export async function commandFrom(primary: Channel): Promise<ServeCommand | undefined> {
  try {
    return (await primary.request<ServeCommand | null>(COMMAND, null, COMMAND_TIMEOUT_MS)) ?? undefined;
  } catch (error: unknown) {
    if (isUnhandled(error, COMMAND)) return undefined;
    throw error;
  }
}

/** In the primary: answers `channel`'s worker with `command` (its secrets and books left out), or with null: argv tells. */
export function answerCommand(channel: Channel, command: ServeCommand | undefined): void {
  channel.handle(COMMAND, () => (command === undefined ? null : { ...command, credentials: [], books: [] }));
}

const STALE_LOG = 'stale log';
const STALE_LOGS = 'stale logs';

/**
 * In a worker, before its books open: learns from `primary` the logs the other workers refuse
 * as another file's (a backup restored beside the old -wal/-shm), which it could not tell
 * itself, and tells it each it refuses or no longer (bin/books/wal-files.ts).
 */
export async function shareStaleLogs(primary: Channel): Promise<void> {
  staleLogs.tell((file, log) => primary.notify(STALE_LOG, { file, log }));
  try {
    staleLogs.learn((await primary.request<Record<string, StaleLog>>(STALE_LOGS, null, COMMAND_TIMEOUT_MS)) ?? {});
  } catch (error: unknown) {
    if (!isUnhandled(error, STALE_LOGS)) throw error;
  }
}

/** In the primary: keeps in `logs` what `channel`'s worker refuses, and answers a worker's question for all of them. */
export function keepStaleLogs(channel: Channel, logs: Map<string, StaleLog>): void {
  channel.handle(STALE_LOG, (body) => {
    const { file, log } = body as { file: string; log?: StaleLog };
    if (log === undefined) logs.delete(file);
    else logs.set(file, log);
  });
  channel.handle(STALE_LOGS, () => Object.fromEntries(logs));
}

/** In a worker: tells the primary that it serves, and what to print. */
export function reportListening(greeting: string[]): void {
  process.send?.({ type: 'listening', greeting } satisfies WorkerMessage);
}

/**
 * Reservations of the login throttle a worker lets wait for the primary at most
 * (lib/throttle-replica.ts); one more is refused on the worker's own.
 */
const MAX_WAITING_FOR_PRIMARY = 1_000;

/**
 * In a worker: where its login throttle keeps its counts (lib/throttle-replica.ts): in the
 * primary, over its channel; said once while the primary does not decide.
 */
export function countsInPrimary(): { link: Channel; unanswered: (error: Error) => void } {
  return {
    link: primaryChannel(),
    unanswered: (error) => logLine(`${error.message}: credentials get 429 until the primary answers`, 'warning'),
  };
}

let toPrimary: Channel | undefined;
/**
 * In a worker: its channel to the primary, for requests and notifications
 * (bin/base/channel.ts), bounded, so that a primary that takes no messages (stopped, or
 * stuck) costs the worker bounded memory.
 */
export function primaryChannel(): Channel {
  toPrimary ??= createChannel(process as unknown as Port, {
    maxPending: MAX_WAITING_FOR_PRIMARY,
    // Not while this worker stops: its primary, ending too, may take none by then.
    behind: (behind) =>
      isStopping() ||
      logLine(
        behind
          ? `the primary takes no messages: requests without credentials, and credentials it would decide on, get 429 until it does`
          : 'the primary takes messages again',
        'warning',
      ),
  });
  return toPrimary;
}

/** In a worker: hands the one line about its failure to the primary, then ends. */
export function reportFailure(message: string): void {
  process.send?.({ type: 'failed', message } satisfies WorkerMessage, () => process.exit(1));
}
