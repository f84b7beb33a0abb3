// A listener's cap on the connections it keeps open at once, and what happens at it. At the
// cap, a new connection takes the place of the one that has waited longest without a
// complete request: still sending its headers (or, over TLS, its handshake), or idle
// between requests. A connection whose request is being answered, its body read by the
// handler included, is never closed for it. So clients that hold connections in headers
// that never end (from as many addresses as they have: one address keeps at most its share,
// protocol-errors.ts) churn among themselves, and a client that sends its request at
// once is served. Only when every connection has a request being answered is the new one
// closed, unanswered: the service is busy with as many requests as it keeps connections.
//
// Node's own `maxConnections` would close every new connection at the cap, and a few slow
// clients locked every other out for as long as they kept reconnecting.

import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answering } from './respond.js';

/**
 * Keeps at most `most` connections of `server` open, as the top of this file says. Put on
 * after the address's share (protectServer), whose refusals it does not count.
 */
export function capConnections(server: Server, most: number): void {
  // Each open connection, as accepted, and the socket its requests arrive on (for TLS the
  // socket that wraps it, once its first request came), in the order they last began a
  // request: the first one that answers nothing has waited longest.
  const open = new Map<Socket, Duplex>();
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) return;
    if (open.size >= most && !closeLongestWaiting(open)) return void socket.destroy();
    open.set(socket, socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage) => {
    const socket = req.socket;
    const accepted = (socket as { _parent?: Socket | null })._parent ?? socket;
    if (!open.delete(accepted)) return;
    open.set(accepted, socket);
  });
}

/** Closes the first connection in `open` with no request being answered; `false` if none. */
function closeLongestWaiting(open: Map<Socket, Duplex>): boolean {
  for (const [accepted, socket] of open) {
    // One whose body the handler reads waits for its answer too.
    if (answering(socket, true)) continue;
    open.delete(accepted);
    socket.destroy();
    accepted.destroy();
    return true;
  }
  return false;
}
