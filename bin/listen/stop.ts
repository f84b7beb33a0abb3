// How the service stops, in every kind of process (the only one, each worker of --workers,
// and their primary), on the signals bin/base/signals.ts hears. Each listener stops accepting at once; an idle keep-alive connection is closed at
// once, a busy one after the answer it waits for, which says `Connection: close` (so that
// a proxy's keep-alive connections, kept busy by steady traffic, end too); what is still
// open after the grace is cut. The process then ends: within `stopBoundMs` of the signal.

import type { Server } from 'node:http';

/** What requests in flight get beyond the longest a search may take (--search-timeout). */
export const STOP_GRACE_MS = 5_000;

/**
 * How long after SIGTERM the process has ended at the latest (docs/operations.md): the grace
 * for requests in flight, and a second for what ends after the listeners (a hash check
 * running on the thread pool, the books' files). The unit's TimeoutStopSec covers it.
 */
export function stopBoundMs(searchMs: number): number {
  return STOP_GRACE_MS + searchMs + 1_000;
}

const stopping = new WeakSet<Server>();

/** Whether `server` is stopping: its answers close their connections (bin/listen/server.ts). */
export function isStopping(server: Server): boolean {
  return stopping.has(server);
}

/**
 * Stops `server` as the top of this file says; cut what is still open after `graceMs`.
 * Resolves once it has closed (its last connection ended).
 */
export function stopListening(server: Server, graceMs: number): Promise<void> {
  stopping.add(server);
  return new Promise((resolve) => {
    // A connection busy now is idle once its answer has left; closed then, within 100 ms,
    // before its client sends another request (which would get Connection: close anyway).
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    // Called also when it was not listening (with an error nobody needs).
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    });
  });
}
