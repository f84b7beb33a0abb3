// The listener of the service: node:http, or node:https with the TLS policy of bin/listen/tls.ts,
// with the protections every listener has (bin/listen/server.ts), on a port or a Unix
// socket, behind the access log, with the admin listener beside it; SIGHUP reads the TLS certificate and key again,
// SIGINT and SIGTERM stop it.

import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { Metrics } from '../../lib/internal.js';
import { adminLine, answersOfProcess, listenAdmin, reportToPrimary, type ServingProcess } from '../admin/index.js';
import {
  accessLog,
  CliError,
  logInfo,
  logLine,
  messageOf,
  onStopSignals,
  type ReloadTrigger,
  readVersion,
} from '../base/index.js';
import type { BookService } from '../books/index.js';
import type { Role } from '../cluster/index.js';
import { askPrimary, onCutFromPrimary, primaryChannel, type SaidLine } from '../cluster/index.js';
import type { ServeCommand } from '../config/index.js';
import { ensureOnlyOwnerCanChange, readRegularFile } from '../files/index.js';
import { endAllGuards } from '../guard/index.js';
import {
  createListener,
  inFlightGraceMs,
  listenOn,
  stopBoundMs,
  stopListening,
  tlsPairProblem,
  tlsPolicy,
  tlsRefusal,
} from '../listen/index.js';

// Connections the API listener keeps open at once; a new one beyond them is closed at once.
// Far above what a proxy's keep-alive pool or an office's clients hold, and below the 1,024
// file descriptors a service gets by default, which would otherwise be the bound.
export const MAX_API_CONNECTIONS = 512;

/** What the listener takes of the books it serves (bin/books/serve-books.ts). */
type Served = Pick<BookService, 'handler' | 'closed' | 'books' | 'afterRequests' | 'dropReloads' | 'close'>;

/**
 * Listens for `served` with the access log, and with --admin-port or --admin-socket the admin
 * listener over its books (with --workers the primary's, fed by each worker's report);
 * SIGINT/SIGTERM stop both and `stopChecks` (the hash checks that wait), then close what is
 * served. A failure closes what was opened and is one line.
 */
export async function listenFor(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  metrics: Metrics | undefined,
  served: Served,
  stopChecks: () => void,
): Promise<{ server: Server; adminLines: string[] }> {
  const { handler, close, books, closed } = served;
  let server: Server;
  let admin: { server: Server; address: string } | undefined;
  let stopping = false;
  try {
    server = createServer(command, metrics, handler, closed);
    const { socket, settings } = command;
    // listenOn closes the server it could not make listen.
    await listenOn(
      server,
      socket === undefined
        ? { host: settings.host, port: settings.port }
        : { socket: socket.path, group: socket.group, prepared: role !== 'single' },
    );
  } catch (error: unknown) {
    close();
    throw error;
  }
  // Without an admin listener nothing was counted, and nobody asks.
  const serving: ServingProcess = { metrics: metrics ?? new Metrics(), server, books };
  // With --workers the primary answers the admin listener, asking each worker for its report.
  if (role === 'worker') {
    if (command.admin !== undefined) reportToPrimary(primaryChannel(), serving);
  } else if (command.admin !== undefined) {
    try {
      admin = await listenAdmin(
        command.admin,
        answersOfProcess(serving, readVersion(), () => stopping),
        command.socket?.group,
        command.timeouts,
      );
    } catch (error: unknown) {
      server.close();
      close();
      throw error;
    }
  }
  stopOnSignals(
    command,
    server,
    served,
    () => {
      close();
      // What a book left in a guard process (one replaced, timed out or being opened) ends too.
      endAllGuards();
      if (admin !== undefined) void stopListening(admin.server, 0);
    },
    role,
    () => {
      stopping = true;
      stopChecks();
    },
  );
  return { server, adminLines: admin === undefined ? [] : [adminLine(admin.address)] };
}

/**
 * node:http, or node:https with --tls-cert/--tls-key, with the protections every listener
 * has (bin/listen/server.ts), behind the access log.
 */
function createServer(
  command: ServeCommand,
  metrics: Metrics | undefined,
  handler: RequestListener,
  closed: (res: ServerResponse) => void,
): Server {
  const limits = { ...command.timeouts, maxConnections: MAX_API_CONNECTIONS };
  const proxies = command.trustProxy;
  const ended =
    metrics && ((req: IncomingMessage, res: ServerResponse, ms: number) => metrics.countAnswer(req, res, ms / 1000));
  const answered = accessLog(ended, closed);
  if (command.tls === undefined) return createListener(handler, { limits, answered, proxies });
  const { cert, key } = readTls(command.tls);
  try {
    return createListener(handler, {
      limits,
      answered,
      proxies,
      tls: { cert, key, minVersion: command.tls.minVersion },
    });
  } catch (error: unknown) {
    const message = messageOf(error);
    throw new CliError(tlsRefusal(command.tls.cert, command.tls.key, message));
  }
}

function readTls(tls: { cert: string; key: string }): { cert: Buffer; key: Buffer } {
  const read = (flag: string, file: string): Buffer => {
    // Whoever can write them can serve as this service (bin/files/file-safety.ts).
    ensureOnlyOwnerCanChange(`${flag} ${file}`, file);
    return readRegularFile(`${flag} ${file}`, file);
  };
  const cert = read('--tls-cert', tls.cert);
  const key = read('--tls-key', tls.key);
  const problem = tlsPairProblem(
    { flag: '--tls-cert', file: tls.cert, pem: cert },
    { flag: '--tls-key', file: tls.key, pem: key },
  );
  if (problem !== undefined) throw new CliError(problem);
  return { cert, key };
}

/**
 * On a reload (bin/serve/serve.ts): the TLS certificate and key read again; what cannot be
 * used is kept as it was, and `say` hears the line that says why (or that they were
 * applied). Connections stay. Whether they were applied.
 */
export function rereadTls(
  tls: NonNullable<ServeCommand['tls']>,
  server: Server,
  by: ReloadTrigger,
  say: (text: string, level: SaidLine['level']) => void,
): boolean {
  try {
    // setSecureContext resets what it is not given to Node's defaults: the policy goes with it.
    (server as HttpsServer).setSecureContext({ ...tlsPolicy(tls.minVersion), ...readTls(tls) });
    say(`${by}: TLS certificate and key re-read from ${tls.cert} and ${tls.key}`, 'notice');
    return true;
  } catch (error: unknown) {
    const why = error instanceof CliError ? error.message : tlsRefusal(tls.cert, tls.key, messageOf(error));
    say(`${by}: keeping the old TLS certificate: ${why}`, 'warning');
    return false;
  }
}

/**
 * SIGINT/SIGTERM (bin/listen/server.ts): a reload under way dropped at once; `started` when
 * the stop on the connections begins (the admin listener's /live says 503 from then, the
 * hash checks that wait are answered 503); `closeAll` once the API listener has closed and
 * the books' requests have written their lines. The process has ended within
 * stopBoundMs of the signal: what still runs then (a hash check on the thread pool, a
 * book's file) is not waited for. A second signal cuts the connections still open.
 */
function stopOnSignals(
  command: ServeCommand,
  server: Server,
  served: Served,
  closeAll: () => void,
  role: Exclude<Role, 'primary'>,
  started: () => void,
): void {
  let stopping = false;
  const stop = (signal?: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    // A reload under way is dropped: what it would serve no client gets.
    served.dropReloads();
    const bound = stopBoundMs(command.timeouts.searchMs);
    // The primary of --workers says it for the service.
    if (role === 'single') logInfo([`stopping on ${signal}: open requests are answered, within ${bound / 1000} s`]);
    setTimeout(() => {
      logLine(`still stopping after ${bound / 1000} s: ending now`, 'warning');
      process.exit(0);
    }, bound).unref();
    const primary = role === 'worker' ? askPrimary : undefined;
    const stopped = (): void => {
      closeAll();
      if (role === 'single') logInfo(['stopped']);
      process.exitCode = 0;
      // A worker's channel to the primary would keep it alive; node:cluster ends it as it goes.
      if (role === 'worker') process.disconnect?.();
    };
    // The listener closes once its connections are gone, before their responses hear it: those
    // cut write their access lines first (within the stop's bound, as all of it).
    void stopListening(server, inFlightGraceMs(command.timeouts.searchMs), { primary, began: started }).then(() =>
      served.afterRequests(stopped),
    );
  };
  // A second signal cuts what is still open; a worker's second comes from its primary
  // (bin/cluster/stopping.ts), which may tell it before the worker heard the first.
  const cut = (): void => {
    stop();
    server.closeAllConnections();
  };
  onStopSignals((again, signal) => (again && role === 'single' ? cut() : stop(signal)));
  if (role === 'worker') onCutFromPrimary(cut);
}
