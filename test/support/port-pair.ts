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
}

export function portPair(): [TestPort, TestPort] {
  const make = (): TestPort & { peer?: TestPort; events: EventEmitter } => {
    const events = new EventEmitter();
    let closed = false;
    const port: TestPort & { peer?: TestPort; events: EventEmitter } = {
      events,
      sent: [],
      send(message: unknown) {
        if (closed) throw Object.assign(new Error('Channel closed'), { code: 'ERR_IPC_CHANNEL_CLOSED' });
        const copy = JSON.parse(JSON.stringify(message)) as unknown;
        port.sent.push(copy);
        const peer = port.peer as TestPort & { events: EventEmitter };
        setImmediate(() => peer.events.emit('message', copy));
        return true;
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
