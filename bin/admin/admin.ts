// The admin listener (--admin-port / --admin-socket): what an admin's tools ask a service —
// is it alive, can it answer searches now, and its metrics — on a listener of its own, off
// by default, without credentials, and with nothing on it that reads a booking. The API
// listener never answers these paths, and this one never answers the API's.
//
//   GET /live     200 while the service serves; 503 once it stops
//   GET /ready    200 when every book is served (can be searched now) in every process;
//                 503 naming the books that are not, and why, or that the service stops
//   GET /metrics  the Prometheus text format (lib/metrics.ts)
//   POST /-/reload  what SIGHUP does (reads the configuration, credentials and TLS files
//                 again), for Windows, which has no SIGHUP, and for every platform alike:
//                 202 at once, the outcome in the log; one asked for while a reload runs
//                 runs after it, as a second SIGHUP does (bin/serve/reload.ts, inTurn);
//                 503 once the service stops, when none starts
//
// A request a web page sent is a 400 on every path (Origin, or Sec-Fetch-Site other than
// `none`, the address bar's): the listener answers tools (curl, a probe, a scraper send
// neither) and an admin who types its address, never a page, which could start a reload.
// On loopback and a socket (the default) so is a request whose Host names this machine by
// any name but an address or localhost: a page served from a name its DNS then points at
// 127.0.0.1 (DNS rebinding) sends its name, and a plain-HTTP page's fetch neither Origin nor
// Sec-Fetch-Site; it would read /ready's reasons (file paths) and /metrics. Off loopback the
// admin chose the network (the start warns), and scrapers there may use any name.
//
// Every answer is written by the library's one writer (lib/respond.ts, send), with the
// API's headers and its rule for a body left unread; its errors are the API's,
// `{"fehler": …, "code": …}` (ERRORS), as the listener's edge writes a request the parser
// refuses: one shape on the listener for a monitoring script to read. A web page's request
// is a bad request as a bad Host is: both are what a browser was made to send.
//
// As PostgREST's admin server does: /live and /ready for liveness and readiness probes
// (systemd, Kubernetes, a load balancer, Uptime Kuma), /metrics for a scrape; /-/reload
// as Prometheus' lifecycle request. Their answers
// are never written to the access log: a probe every few seconds would drown it.
//
// It is made as every listener is (bin/listen/server.ts), with the API listener's
// protections and timeouts, since it runs in the serving process and anyone who reaches it
// can use it without credentials; its own are that a request body is never kept (the
// answer closes the connection, dropping what the client still sends within the library's
// bounds, lib/linger.ts), at most MAX_ADMIN_CONNECTIONS connections open at once, and a bad
// request (a bad Host, …) refused by the listener's edge (the API handler refuses it itself).

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { ERRORS, Metrics, send } from '../../lib/internal.js';
import { logError, SOCKET_WORD } from '../base/index.js';
import type { BookView, DatabaseStatus } from '../books/index.js';
import { type ConnectionLimits, createListener, isLoopback, listenOn } from '../listen/index.js';

/** One book as a process serves it: docs/operations.md, "Monitoring", names the states. */
export interface BookReport {
  name: string;
  basePath: string;
  state: DatabaseStatus['state'];
  /**
   * Why searches are not answered, as the log line says it: with no value from a booking
   * (a file's judgement names none where the service speaks), for /ready is read without
   * credentials.
   */
  reason?: string;
  /** Since when, as an ISO 8601 time. */
  since: string;
  /** How often another file was served at the path since the start (a restore by rename, say). */
  replaced: number;
}

/** A served book's report: plain data, which a worker sends to the primary. */
export function reportBook(book: BookView): BookReport {
  const status = book.status();
  return {
    name: book.name,
    basePath: book.basePath,
    state: status.state,
    ...(status.reason === undefined ? {} : { reason: status.reason }),
    since: new Date(status.since).toISOString(),
    replaced: status.replaced,
  };
}

/** A book as /ready names it. */
export type ReadyBook = Omit<BookReport, 'replaced'>;

/** Whether every book can be searched now, in every process of the service. */
export interface Readiness {
  ready: boolean;
  /** Why no book is searched whatever their states: the service is stopping. */
  reason?: string;
  books: ReadyBook[];
  /** With --workers: how many serve of how many there should be. */
  workers?: { serving: number; of: number };
}

/** What the listener answers from; each promise settles (the service bounds how long it waits for a worker). */
export interface AdminAnswers {
  live(): boolean;
  ready(): Promise<Readiness>;
  metrics(): Promise<string>;
  /** Starts what SIGHUP starts, its outcome logged; whether it did (none once the service stops). */
  reload(): boolean;
}

/**
 * The request handler of the admin listener; its listener's edge checks Host's form
 * (createAdminServer), and this its name unless `anyHost` (a listener off loopback).
 */
export function createAdminHandler(
  answers: AdminAnswers,
  anyHost = false,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (fromWebPage(req) || !(anyHost || namesThisMachine(req.headers.host))) return refuseBadRequest(req, res);
    const path = (req.url ?? '').split('?', 1)[0];
    if (path === '/-/reload') return answerReload(req, res, answers);
    if (path !== '/live' && path !== '/ready' && path !== '/metrics') {
      return send(res, ERRORS.notFound.status, ERRORS.notFound.body);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, ERRORS.methodNotAllowed.status, ERRORS.methodNotAllowed.body, ['Allow', 'GET, HEAD']);
    }
    if (path === '/live') {
      const live = answers.live();
      return send(res, live ? 200 : 503, `${JSON.stringify({ live })}\n`);
    }
    const answer =
      path === '/ready'
        ? answers.ready().then((readiness) => {
            send(res, readiness.ready ? 200 : 503, `${JSON.stringify(readiness)}\n`);
          })
        : answers.metrics().then((text) => send(res, 200, text, [], Metrics.contentType));
    answer.catch((error: unknown) => {
      logError(error, req, path);
      if (res.headersSent) res.destroy();
      else send(res, ERRORS.internal.status, ERRORS.internal.body);
    });
  };
}

/** The answer to a bad request: a web page's, and one the listener's edge refuses (bin/listen/server.ts). */
function refuseBadRequest(_req: IncomingMessage, res: ServerResponse): void {
  send(res, ERRORS.badRequest.status, ERRORS.badRequest.body, ['Connection', 'close']);
}

function answerReload(req: IncomingMessage, res: ServerResponse, answers: AdminAnswers): void {
  if (req.method !== 'POST') {
    return send(res, ERRORS.methodNotAllowed.status, ERRORS.methodNotAllowed.body, ['Allow', 'POST']);
  }
  // Refused only while the service stops: however many come while one runs, one more runs
  // after it and reads the files as they are then, so the last request's files are applied.
  if (answers.reload()) send(res, 202, '{"reload":"started: the log says what was read again"}\n');
  else send(res, 503, '{"reload":"not started: the service is stopping"}\n');
}

/**
 * Whether a web page sent `req`: a browser's request from a page carries Origin (a form, a
 * cross-site fetch) or Sec-Fetch-Site (every request, a same-origin one too, which a page
 * served from a name rebound to this address makes); typed in the address bar it is `none`.
 */
function fromWebPage(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return req.headers.origin !== undefined || (site !== undefined && site !== 'none');
}

/** Whether `host` (a Host header; none from HTTP/1.0) names this machine by an address or as localhost. */
function namesThisMachine(host: string | undefined): boolean {
  if (host === undefined) return true;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:[0-9]*$/, '');
  return isIP(name) !== 0 || /^(?:.+\.)?localhost\.?$/i.test(name);
}

/** Where the admin listener listens (ServeCommand's `admin`). */
export type AdminAddress = { host: string; port: number } | { socket: string };

/**
 * Connections the admin listener keeps open at once; a new one beyond them is closed at
 * once. A scraper and a few probes need a handful; without a bound 800 held connections
 * held 835 file descriptors of the serving process.
 */
export const MAX_ADMIN_CONNECTIONS = 64;

/** The API listener's timeouts (ServeCommand's `timeouts`), in milliseconds. */
export type AdminTimeouts = Omit<ConnectionLimits, 'maxConnections'>;

/** The admin listener's server, not yet listening: every listener's protections around `createAdminHandler`. */
export function createAdminServer(answers: AdminAnswers, timeouts: AdminTimeouts, anyHost = false): Server {
  return createListener(createAdminHandler(answers, anyHost), {
    limits: { ...timeouts, maxConnections: MAX_ADMIN_CONNECTIONS },
    badRequest: refuseBadRequest,
  });
}

/** The start-up line that says where the admin listener is. */
export function adminLine(address: string): string {
  return `admin listener on ${address} (/live, /ready, /metrics, POST /-/reload; no credentials)`;
}

/**
 * Starts the admin listener at `where`, with the API listener's `timeouts`; its socket, if
 * it is one, gets `group` (as --socket's does) and the mode of the process's umask
 * (--socket-mode's, or 660 without --socket: bin/serve/serve.ts sets it). Resolves with the
 * server and its address as a line says it; a CliError says why it cannot listen.
 */
export async function listenAdmin(
  where: AdminAddress,
  answers: AdminAnswers,
  group: string | undefined,
  timeouts: AdminTimeouts,
): Promise<{ server: Server; address: string }> {
  const server = createAdminServer(answers, timeouts, !('socket' in where) && !isLoopback(where.host));
  if ('socket' in where) {
    await listenOn(server, { socket: where.socket, group }, 'the admin listener: ');
    return { server, address: `${SOCKET_WORD}:${where.socket}:/` };
  }
  await listenOn(server, where, 'the admin listener: ');
  const { port } = server.address() as AddressInfo;
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return { server, address: `http://${host}:${port}/` };
}
