// How a worker of --workers stops listening (bin/listen/server.ts, stopListening) with its
// primary. node:cluster's primary accepts the connections, queues them while every worker is
// busy, hands a worker the next once it took the last, and resets those still queued when
// the last worker's listener closes, which closes the primary's. So a stopping worker asks
// the primary twice: whether it has handed it all it had queued, before it closes its
// listener; and whether every worker's listener has closed, before it tells its clients to
// close, whose new connections would otherwise be accepted there and reset. A second stop
// signal to the primary cuts what the workers still have open: it tells each over its channel.

import type { Channel } from '../base/index.js';
import type { PrimaryOfListener } from '../listen/index.js';
import { primaryChannel } from './worker.js';

const HANDED = 'handed';
const CLOSED = 'closed';
const CUT = 'cut';

/** In a stopping worker: its questions to the primary (above). */
export const askPrimary: PrimaryOfListener = {
  handed: (timeoutMs) => primaryChannel().request(HANDED, null, timeoutMs),
  closed: (timeoutMs) => primaryChannel().request(CLOSED, null, timeoutMs),
};

/**
 * In a worker: `cut` when the primary heard a second stop signal. Its own signals never cut:
 * Ctrl-C (and systemd, but for the unit's KillMode=mixed) signals the whole process group,
 * and the primary passes the signal on as well, so that a worker sees two for one stop.
 */
export function onCutFromPrimary(cut: () => void): void {
  primaryChannel().handle(CUT, cut);
}

/** In the primary: answers the workers' questions (above), and tells them to cut. */
export class StopAnswers {
  /** The channels of the workers alive. */
  private readonly workers: () => Iterable<Channel>;
  /** Those that asked CLOSED, and how each is answered. */
  private readonly waiting = new Map<Channel, () => void>();

  constructor(workers: () => Iterable<Channel>) {
    this.workers = workers;
  }

  /**
   * Answers on `channel`: HANDED after a turn, whose poll hands the connections it accepted
   * (before the answer, in order, as node:cluster sends all); CLOSED once each worker alive
   * asked, each having closed its listener before it asked.
   */
  attach(channel: Channel): void {
    channel.handle(HANDED, () => new Promise((resolve) => setImmediate(resolve)));
    channel.handle(
      CLOSED,
      () =>
        new Promise<void>((resolve) => {
          this.waiting.set(channel, resolve);
          this.answer();
        }),
    );
  }

  /** A second stop signal: every worker alive cuts what it still has open. */
  cut(): void {
    for (const channel of this.workers()) channel.notify(CUT, null);
  }

  /** A worker ended: the others no longer wait for it. */
  detach(channel: Channel): void {
    this.waiting.delete(channel);
    this.answer();
  }

  private answer(): void {
    for (const channel of this.workers()) if (!this.waiting.has(channel)) return;
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
  }
}
