// A listener's cap on the connections it keeps open at once, and what happens at it. At the
// cap, a new connection takes the place of the one that has waited longest without a
// complete request: the first accepted of those still sending their first headers (or, over
// TLS, a handshake), else of those idle between requests. A connection whose request is
// being answered, its body read by the handler included, is never closed for it. So clients that hold connections in headers
// that never end (from as many addresses as they have: one address keeps at most its share,
// protocol-errors.ts) churn among themselves, and a client that sends its request at
// once is served. Only when every connection has a request being answered is the new one
// closed, unanswered: the service is busy with as many requests as it keeps connections.
//
// Node's own `maxConnections` would close every new connection at the cap, and a few slow
// clients locked every other out for as long as they kept reconnecting.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answering, hadRequest } from './respond.js';

/**
 * Keeps at most `most` connections of `server` open, as the top of this file says. Put on
 * after the address's share (protectServer), whose refusals it does not count. Nothing runs
 * for a request: what a connection waits for is read off it (lib/respond.ts) only at the cap.
 */
export function capConnections(server: Server, most: number): void {
  // Each open connection in the order it was accepted, and the socket its requests arrive
  // on (over TLS the one that wraps it, once its handshake is done).
  const open = new Map<Socket, Duplex>();
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) return;
    if (open.size >= most && !closeLongestWaiting(open)) return void socket.destroy();
    open.set(socket, socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('secureConnection', (socket: Duplex & { _parent?: Socket | null }) => {
    const accepted = socket._parent;
    if (accepted && open.has(accepted)) open.set(accepted, socket);
  });
}

/**
 * Closes the connection in `open` that has waited longest without a complete request: the
 * first accepted of those that never had one (headers or a handshake that do not end), else
 * of those idle between requests; `false` when every one has a request being answered.
 */
function closeLongestWaiting(open: Map<Socket, Duplex>): boolean {
  let idle: [Socket, Duplex] | undefined;
  for (const entry of open) {
    const socket = entry[1];
    // One whose body the handler reads waits for its answer too.
    if (answering(socket, true)) continue;
    if (!hadRequest(socket)) return close(open, entry);
    idle ??= entry;
  }
  return idle !== undefined && close(open, idle);
}

function close(open: Map<Socket, Duplex>, [accepted, socket]: [Socket, Duplex]): true {
  open.delete(accepted);
  socket.destroy();
  accepted.destroy();
  return true;
}
