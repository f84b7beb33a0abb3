// Two connected ends of an IPC channel inside one process, for the unit tests of what
// bin/ sends between the primary and the workers: each message is serialised as JSON (as
// node:cluster's channel does) and delivered in a later turn of the event loop.

import { EventEmitter } from 'node:events';
import type { Port } from '../../bin/base/channel.js';

export interface TestPort extends Port {
  /** Messages sent from this end so far. */
  readonly sent: unknown[];
  /** Closes this end: sending throws, as on a closed IPC channel. */
  close(): void;
  /**
   * The other end takes nothing from now on, as a stopped process: what is sent waits, and
   * `send` returns false from the `threshold`-th message waiting on, as Node's does.
   */
  stall(threshold: number): void;
  /** The other end takes what waits, and what comes. */
  resume(): void;
}

export function portPair(): [TestPort, TestPort] {
  const make = (): TestPort & { peer?: TestPort; events: EventEmitter } => {
    const events = new EventEmitter();
    let closed = false;
    let threshold: number | undefined;
    const held: (() => void)[] = [];
    const port: TestPort & { peer?: TestPort; events: EventEmitter } = {
      events,
      sent: [],
      send(message: unknown, written?: (error: Error | null) => void) {
        if (closed) throw Object.assign(new Error('Channel closed'), { code: 'ERR_IPC_CHANNEL_CLOSED' });
        const copy = JSON.parse(JSON.stringify(message)) as unknown;
        port.sent.push(copy);
        const peer = port.peer as TestPort & { events: EventEmitter };
        const deliver = (): void => {
          written?.(null);
          setImmediate(() => peer.events.emit('message', copy));
        };
        if (threshold === undefined) {
          deliver();
          return true;
        }
        held.push(deliver);
        return held.length < threshold;
      },
      stall(at) {
        threshold = at;
      },
      resume() {
        threshold = undefined;
        for (const deliver of held.splice(0)) deliver();
      },
      on(_event: 'message', listener: (message: unknown) => void) {
        events.on('message', listener);
        return port;
      },
      close() {
        closed = true;
      },
    };
    return port;
  };
  const a = make();
  const b = make();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

/** Waits until every message sent so far has been delivered (they travel one turn each). */
export function settle(turns = 5): Promise<void> {
  return new Promise((resolve) => {
    const hop = (left: number): void => {
      if (left === 0) resolve();
      else setImmediate(hop, left - 1);
    };
    hop(turns);
  });
}
