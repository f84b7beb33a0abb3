// A listener's bounds on the connections it keeps open at once: in all, and from one client
// address (an IPv6 one by its /64, as the throttle counts it; a Unix socket's peer is whoever
// may open the socket and a proxy is everyone behind it, so neither has one). At a bound, a
// new connection takes the place of one among all or among its address's: a stranger's (no
// request on it has passed the login yet) before one a login passed on (`LOGGED_IN`) — but a
// user holding more than half the bound (among all, or among the address's) ranks with the
// strangers, so one insider's logged-in connections cannot shield him from his own churn — and
// within each the one that has gone longest without a step toward an answer: in its TLS
// handshake or first headers since it was accepted (or its handshake ended), in a body since
// its request began, idle since its last answer. A connection whose request is being answered
// is never closed for it; only when each has one is the new connection closed, unanswered.
// One rule: strangers churning bare or refused connections close only strangers, the oldest
// first, so a new connection, the newest, can send its request; a logged-in client's upload,
// idle keep-alive or pipelined connection stays; logged-in connections held in bodies that
// never end churn among themselves by age; one address cannot take every connection, nor one
// user: his new ones close his own oldest, not a newcomer yet to send its request. The
// admin listener has no login: its connections are all strangers.
//
// Node's own `maxConnections` would close every new connection at the cap, and a few slow
// clients locked every other out for as long as they kept reconnecting.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { trustedPeers } from './options.js';
import { isProxy, rememberPeer, throttleKey, UNIX_SOCKET_PEER, UNKNOWN_PEER } from './request.js';
import { answering, lastAdmitted, stamp } from './respond.js';

/**
 * Set, by the handler, on a connection (its socket for requests) to the user whose request on
 * it passed the login; read only at a bound.
 */
export const LOGGED_IN = Symbol('a login passed on it');
export type LoggedIn = { [LOGGED_IN]?: string };

/** How many connections a server keeps open at once. */
export interface ConnectionBounds {
  /** At most this many from one address. */
  most: number;
  /** `trustProxy`'s entries: a proxy carries every client behind it, so it has no bound. */
  proxies: readonly string[];
  /** At most this many in all. */
  cap?: number;
}

/** An open connection's socket for its requests (over TLS the one that wraps it, once its handshake is done), and its address if bounded. */
type Held = { wire: Duplex; key: string | undefined };

/**
 * Puts `bounds` on `server`, as the top of this file says, and reads each connection's peer
 * as it is accepted (`rememberPeer`). One registry of the open connections serves both
 * bounds and the stop; for a request nothing runs here: what a connection waits for, and
 * since when (`stamp`), is read off it (lib/respond.ts) only at a bound or a stop.
 *
 * Returns the stop's part on the connections (below), which the stop calls at once and then
 * until the server has closed.
 */
export function boundConnections(server: Server, { most, proxies, cap = Infinity }: ConnectionBounds): StopConnections {
  const trusted = trustedPeers(proxies);
  const open = new Map<Socket, Held>();
  const perAddress = new Map<string, number>();
  const forget = (accepted: Socket): void => {
    const key = open.get(accepted)?.key;
    open.delete(accepted);
    if (key === undefined) return;
    const left = (perAddress.get(key) ?? 1) - 1;
    if (left === 0) perAddress.delete(key);
    else perAddress.set(key, left);
  };
  // One listener for every connection: the socket is its `this`.
  function closed(this: Socket): void {
    forget(this);
  }
  const close = (accepted: Socket): void => {
    open.get(accepted)?.wire.destroy();
    forget(accepted);
    accepted.destroy();
  };
  const closeLongestWaiting = (key: string | undefined): boolean => {
    const accepted = longestWaiting(open, key, key === undefined ? cap : most);
    if (accepted === undefined) return false;
    close(accepted);
    return true;
  };
  server.on('connection', (socket: Socket) => {
    const peer = rememberPeer(socket);
    // Reset before it was accepted (its peer `unknown`), and closing already.
    if (socket.destroyed) return;
    const key =
      peer === UNIX_SOCKET_PEER || peer === UNKNOWN_PEER || isProxy(peer, trusted) ? undefined : throttleKey(peer);
    const full = key !== undefined && (perAddress.get(key) ?? 0) >= most;
    if ((full || open.size >= cap) && !closeLongestWaiting(full ? key : undefined)) return void socket.destroy();
    open.set(socket, { wire: socket, key });
    stamp(socket);
    if (key !== undefined) perAddress.set(key, (perAddress.get(key) ?? 0) + 1);
    socket.on('close', closed);
  });
  server.on('secureConnection', (socket: Duplex & { _parent?: Socket | null }) => {
    const held = socket._parent ? open.get(socket._parent) : undefined;
    if (held === undefined) return;
    held.wire = socket;
    stamp(socket);
  });
  return (step = 'connections', spareNew = false) => {
    if (step !== 'answers' && !server.listeners('request').includes(closeAfterAnswer))
      server.prependListener('request', closeAfterAnswer);
    for (const [accepted, { wire }] of open) {
      if (answering(wire, true)) closeWithAnswer(lastAdmitted(wire));
      else if (step === 'connections' && !(spareNew && lastAdmitted(wire) === undefined)) close(accepted);
    }
  };
}

// The stop's part on the connections, in steps. `answers`: each connection's last answer,
// unless it has begun, says `Connection: close` and closes it. `requests`: so does the answer
// to each request heard from now on, so that no client sends a next request on a connection
// the stop is about to close. `connections`: a connection with no request being answered (idle,
// or still in its first headers or TLS handshake: node:http's `closeIdleConnections` leaves
// those two open, and a client sending its headers slowly held the stop to its grace) is
// closed; with `spareNew`, but one yet to bring its first request (one the listener took from
// its queue at the stop: over TLS its client sends it a round trip after the acceptance).
// Each step does those before it too. Nothing of it runs for a request before the stop. While
// the listener still takes the connections queued for it, only `answers`: a client told to
// close would open a new connection, which the listener's close would reset.

/** The stop's part on the connections (above); `connections` without `spareNew` by default. */
export type StopConnections = (step?: 'answers' | 'requests' | 'connections', spareNew?: boolean) => void;

/** Answers that close their connection because of the stop, when they would have kept it. */
const closedByStop = new WeakSet<ServerResponse>();

function closeWithAnswer(res: ServerResponse | undefined): void {
  if (res === undefined || res.headersSent || !res.shouldKeepAlive) return;
  res.shouldKeepAlive = false;
  closedByStop.add(res);
}

/**
 * Heard before the handler once a listener stops: the answer closes its connection. A client
 * that pipelines sent this request before the answer the stop closed reached it: that answer
 * keeps the connection open again, and this one, the last, closes it.
 */
function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  const before = lastAdmitted(req.socket);
  if (before !== undefined && closedByStop.delete(before) && !before.headersSent) before.shouldKeepAlive = true;
  closeWithAnswer(res);
}

/**
 * The connection in `open` (of address `key` only, when given) to close for a new one at
 * `bound`, as the top of this file says: a stranger's, or one of a user holding more than half
 * the bound, before a logged-in one, within each the one with the oldest stamp; `undefined`
 * when every one has a request being answered.
 */
function longestWaiting(open: Map<Socket, Held>, key: string | undefined, bound: number): Socket | undefined {
  const held = new Map<string, number>();
  for (const { wire, key: its } of open.values()) {
    const user = (wire as Duplex & LoggedIn)[LOGGED_IN];
    if (user !== undefined && (key === undefined || its === key)) held.set(user, (held.get(user) ?? 0) + 1);
  }
  let oldest: Socket | undefined;
  let since = Infinity;
  let loggedIn = true;
  for (const [accepted, { wire, key: its }] of open) {
    if ((key !== undefined && its !== key) || answering(wire)) continue;
    const user = (wire as Duplex & LoggedIn)[LOGGED_IN];
    const known = user !== undefined && (held.get(user) ?? 0) * 2 <= bound;
    if (known && !loggedIn) continue;
    const stamped = stamp(wire);
    if ((loggedIn && !known) || stamped < since) [oldest, since, loggedIn] = [accepted, stamped, known];
  }
  return oldest;
}
