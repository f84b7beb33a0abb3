// --send-timeout, the half that node:http's socket timeout leaves out: a connection whose
// client has taken nothing of its answer for that long is closed, measured from when the
// kernel stopped taking the answer's bytes, so that what the client keeps sending does not
// restart it. The socket timeout counts any activity: a client that pipelined large
// searches, read none of the answers and sent one byte a second was never closed.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';

interface Watched {
  /** `socket.bytesWritten` when its answer was last seen to stand still. */
  written: number;
  /** Since when (performance.now()) nothing of it has been taken, or `undefined` while nothing waits. */
  since: number | undefined;
}

/**
 * Closes every connection of `server` whose pending answer (bytes node:http has written
 * that the kernel has not taken, because the client's window is full) has not moved for
 * `sendMs`. Looked at every second (or every half `sendMs`, if shorter), so a stalled
 * connection is closed between `sendMs` and `sendMs` plus two such intervals after the
 * client stopped reading. A connection with nothing to send (an idle keep-alive, a request whose
 * search waits) is left to the other timeouts.
 */
export function closeStalledConnections(server: Server, sendMs: number): void {
  const watched = new Map<Socket, Watched>();
  // For https the raw TCP socket: what it has not sent is the encrypted answer.
  server.on('connection', (socket: Socket) => {
    watched.set(socket, { written: 0, since: undefined });
    socket.once('close', () => watched.delete(socket));
  });
  const sweep = (): void => {
    const now = performance.now();
    for (const [socket, state] of watched) {
      if (socket.writableLength === 0) {
        state.since = undefined;
        continue;
      }
      const written = socket.bytesWritten;
      if (state.since === undefined || written !== state.written) {
        state.written = written;
        state.since = now;
      } else if (now - state.since >= sendMs) {
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, Math.max(1, Math.min(1_000, Math.floor(sendMs / 2))));
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
