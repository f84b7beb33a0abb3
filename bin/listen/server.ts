// The one way the service makes a listener, and stops it: the API listener (over TCP, a
// Unix socket or TLS) and the admin listener are each made here, so each has the same
// protections against slow and greedy clients, and a protection added here holds for all
// of them:
//
// - the bound on requests whose answers the client has not taken (lib/respond.ts): a
//   connection that pipelines and reads nothing gets a 429 that closes it, and no later
//   request of it is handled; without it, node:http handles every request of each chunk it
//   reads and holds every answer;
// - request line and headers at most 16 KiB; headers within --headers-timeout, the whole
//   request within --request-timeout, an idle keep-alive connection closed after
//   --keep-alive-timeout, and a TLS handshake within --headers-timeout;
// - a connection whose answer does not leave closed after --send-timeout (send-timeout.ts);
// - protocol errors answered as JSON after the answers before them (lib/protocol-errors.ts);
// - at most `maxConnections` connections open at once, and half of them from one address
//   (but for a Unix socket's peer and --trust-proxy's proxies): a new one beyond takes the
//   place of the one, of all or of its address's, that has gone longest without progress
//   toward an answer, those a login passed on last (lib/connection-cap.ts), so that clients
//   holding connections they do not use lock out neither the others nor the rest of their
//   address;
// - once it stops (below), every answer not begun yet closes its connection (on one that
//   pipelines, the last).
//
// How the service stops, in every kind of process (the only one, each worker of --workers,
// and their primary), on the signals bin/base/signals.ts hears (stopListening):
// - each listener takes the connections queued for it, then accepts no more;
// - a connection with no request being answered is closed: at once when it answered one
//   before (idle, or in the headers of its next), within a second when its first is yet to
//   come (nothing sent, a TLS handshake, the first headers);
// - a busy one closes after the answer it waits for: every answer from the signal on says
//   `Connection: close` (lib/connection-cap.ts), so that no client sends another request on
//   it, and a proxy's keep-alive connections, kept busy by steady traffic, end too;
// - what is still open after the grace (STOP_GRACE_MS plus the search timeout, stopBoundMs)
//   is cut, and the process ends.

import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { Server as NetServer } from 'node:net';
import { type Answered, protectServer } from '../../lib/internal.js';
import { closeStalledConnections } from './send-timeout.js';
import { type TlsMinVersion, tlsPolicy } from './tls.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Request line and headers together; a Basic header and a long query fit well within. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** What a listener allows its connections; the timeouts in milliseconds, as ServeCommand's `timeouts`. */
export interface ConnectionLimits {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  sendMs: number;
  /** Connections open at once; a new one beyond closes one that waits (lib/connection-cap.ts). */
  maxConnections: number;
}

export interface ListenerOptions {
  limits: ConnectionLimits;
  /** node:https with this certificate and key, under the TLS policy of tls.ts; else node:http. */
  tls?: { cert: Buffer; key: Buffer; minVersion: TlsMinVersion };
  /**
   * Hears each response as it closes (the API listener's access log), the requests the bound
   * refuses too, so that they are logged and counted: its milliseconds, what the handler
   * learnt of it (none for a request it never routed), its path as a log line shows it.
   */
  answered?: Answered;
  /** --trust-proxy's entries (ServeCommand's `trustProxy`): peers never held to one address's share. */
  proxies?: readonly string[];
  /**
   * What answers a bad request (lib/request.ts, isBadRequest: a bad Host, …), for a handler that
   * does not check it itself (the admin listener's; the API handler checks its own).
   */
  badRequest?: Listener;
}

/**
 * A server, not yet listening, that hands `handler` the requests its protections let
 * through (the top of this file). Throws what node:https throws for a certificate and key
 * it refuses.
 */
export function createListener(
  handler: Listener,
  { limits, tls, answered, proxies = [], badRequest }: ListenerOptions,
): Server {
  const options = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: limits.headersMs,
    requestTimeout: limits.requestMs,
    keepAliveTimeout: limits.keepAliveMs,
    // Node looks for expired headers and requests only this often (default 30 s).
    connectionsCheckingInterval: Math.min(1_000, limits.headersMs),
  };
  const server =
    tls === undefined
      ? createHttpServer(options)
      : createHttpsServer(
          // A TLS handshake gets as long as the request's headers (Node's default is 120 s).
          {
            ...options,
            ...tlsPolicy(tls.minVersion),
            cert: tls.cert,
            key: tls.key,
            handshakeTimeout: limits.headersMs,
          },
        );
  // The library's part of the edge (lib/protocol-errors.ts, the list above). Half: the single
  // client behind a NAT or an unnamed proxy may hold many, and one address alone still leaves
  // the other half to everyone else.
  const stopConnections = protectServer(server, handler, {
    cap: limits.maxConnections,
    most: Math.floor(limits.maxConnections / 2),
    proxies,
    badRequest,
    answered,
  });
  connectionStops.set(server, stopConnections);
  // node:http's socket timeout (0, off, by default): a connection on which nothing moved
  // for as long is closed, as Node would, unless a request of it still waits for its answer
  // (protectServer): a long reconciliation writes nothing while it is computed, and was cut
  // unanswered. A client that takes nothing of an answer is closed by send-timeout.ts, which
  // what the client keeps sending does not restart.
  server.setTimeout(limits.sendMs);
  closeStalledConnections(server, limits.sendMs);
  return server;
}

/** Each listener's part of the stop on its connections (lib/connection-cap.ts). */
const connectionStops = new WeakMap<
  Server,
  (step?: 'answers' | 'requests' | 'connections', spareNew?: boolean) => void
>();

/** What requests in flight get beyond the longest a search may take (--search-timeout). */
const STOP_GRACE_MS = 5_000;

/**
 * How long requests in flight are waited for when what serves them goes: the stop's (SIGTERM)
 * and a book's that a reload removes or serves anew (bin/books/serve-books.ts).
 */
export function inFlightGraceMs(searchMs: number): number {
  return STOP_GRACE_MS + searchMs;
}

/**
 * How long after SIGTERM the process has ended at the latest (docs/operations.md): the grace
 * for requests in flight, and a second for what ends after the listeners (a hash check
 * running on the thread pool, the books' files). The unit's TimeoutStopSec covers it.
 */
export function stopBoundMs(searchMs: number): number {
  return inFlightGraceMs(searchMs) + 1_000;
}

/**
 * How long a stopping listener may go on taking the connections queued for it (below), and
 * how long after the signal one of them has to bring its request.
 */
const QUEUED_MS = 1_000;

/**
 * What a worker of --workers asks its primary as it stops (bin/cluster/stopping.ts); each
 * fails after the milliseconds it is given.
 */
export interface PrimaryOfListener {
  /** Resolves once the primary has handed this worker every connection it had queued. */
  handed(timeoutMs: number): Promise<unknown>;
  /** Resolves once every worker's listener has closed, and so the primary's. */
  closed(timeoutMs: number): Promise<unknown>;
}

/**
 * Stops `server`, made by createListener, as the top of this file says; cut what is still
 * open after `graceMs`. Resolves once it has closed (its last connection ended). `began`
 * hears when the stop on its connections begins: at once, but in a worker of --workers
 * (`primary`) once every worker's listener has closed (below).
 */
export function stopListening(
  server: Server,
  graceMs: number,
  { primary, began }: { primary?: PrimaryOfListener | undefined; began?: () => void } = {},
): Promise<void> {
  const stop = connectionStops.get(server);
  const until = performance.now() + QUEUED_MS;
  /** What is left of QUEUED_MS after the signal, in milliseconds; zero once it has passed. */
  const left = (): number => Math.max(0, until - performance.now());
  // A connection yet to bring its first request (taken from the queue, or accepted in the
  // signal's turn) is left open until QUEUED_MS after the signal: over TLS its request comes
  // a round trip after its acceptance, once the client has ended its handshake.
  const stopConnections = (): void => stop?.('connections', left() > 0);
  return new Promise((resolve) => {
    // The answers waited for now close their connections (each one after, once it closes);
    // a worker's, once every worker's listener has closed (below).
    if (primary === undefined) {
      began?.();
      stop?.('answers');
    }
    let idle: NodeJS.Timeout | undefined;
    let last: NodeJS.Timeout | undefined;
    let ended = false;
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    const close = (): void => {
      // net's close: node:http's would close at once, as idle, the connections just
      // accepted, their requests not read yet, which the next turn reads.
      NetServer.prototype.close.call(server, () => {
        ended = true;
        clearInterval(idle);
        clearTimeout(last);
        clearTimeout(cut);
        resolve();
      });
      // No client told to close now reconnects into this listener: it is refused. A worker's
      // is the primary's, open until every worker's has closed: a client told to close before
      // would reconnect into it, to be reset; the worker's stop on its connections begins then.
      if (primary === undefined) closed();
      else primary.closed(left()).then(closed, closed);
    };
    const closed = (): void => {
      if (primary !== undefined) began?.();
      stop?.('requests');
      // After a turn that read what came on them, a connection with no request being
      // answered has nothing to lose: closed, idle or still in its headers or TLS handshake
      // (but one yet to bring its first request, until QUEUED_MS). A busy one ends after its
      // answer, which closes it; one whose answer had begun at the signal, keeping it, is
      // closed within 100 ms after.
      setImmediate(() =>
        setImmediate(() => {
          stopConnections();
          if (ended) return;
          idle = setInterval(stopConnections, 100);
          last = setTimeout(stopConnections, left() + 1);
        }),
      );
    };
    afterQueued(server, left, primary, close);
  });
}

/**
 * Calls `close` once `server` has taken the connections queued for it at the signal, their
 * requests sent before it maybe, which its close would reset, or once `left` is spent. Node
 * takes one from the kernel each turn of the event loop: the listener closes after the first
 * turn that took none. A worker's come from the primary, which queues them while every worker is busy,
 * hands a worker the next once it took the last, and resets those still queued when the last
 * worker's listener closes (node:cluster's round robin): after a turn that took none, a
 * worker closes once the primary said it has handed it all, unless one came meanwhile (the
 * answer comes after what was handed before it).
 */
function afterQueued(
  server: Server,
  left: () => number,
  primary: PrimaryOfListener | undefined,
  close: () => void,
): void {
  let taken = 0;
  const count = (): void => {
    taken += 1;
  };
  server.on('connection', count);
  const done = (): void => {
    server.off('connection', count);
    close();
  };
  const next = (): void => {
    taken = 0;
    setImmediate(afterTurn);
  };
  const afterTurn = (): void => {
    const time = left();
    if (taken > 0 && time > 0) return next();
    if (primary === undefined || time === 0) return done();
    const settled = (): void => (taken > 0 ? afterTurn() : done());
    primary.handed(time).then(settled, settled);
  };
  // The signal is heard after the rest of its turn: counting begins with the next.
  setImmediate(next);
}
