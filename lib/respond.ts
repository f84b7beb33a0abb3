// The one place that writes responses, and what one connection may have waiting (docs/API.md, Responses in general):
// every response goes through `send`, which always sets the same headers, but those node:http gives no response to
// write on, the HTTP parser's errors (400, 408, 431) and a CONNECT's 405: lib/protocol-errors.ts writes them on the
// socket, with `COMMON_HEADERS`. Requests whose answers the client has not taken are bounded, and after an answer
// that closes the connection no later request on it is processed or read.
//
// node:http calls the handler for every request of a chunk it reads (hundreds pipelined in 64 KiB), also after an
// answer that closes the connection, holding each answer until the one before it has left: a client that pipelined
// and never read had thousands answered and held.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { lingerAfter, stopReading } from './linger.js';
import { type ApiError, ERRORS } from './messages.js';

/**
 * Requests of one connection whose answers the kernel has not taken yet at which the next is refused with `429` and
 * `Connection: close`: twice the waiting searches one address may have (`maxWaitingSearches`), so a client that
 * pipelines searches meets that 429 first, and far above what a client that reads pipelines. A client that reads
 * nothing holds no more than these answers.
 */
export const MAX_UNANSWERED = 128;

/** Requests read after the answer that closes their connection, at which it is read no more. */
const MAX_DROPPED = 1_024;

const UNANSWERED = Symbol('unanswered requests');
const DROPPED = Symbol('dropped requests');
const CLOSING = Symbol('closing');
const AFTER = Symbol('after the answers');
const LAST = Symbol('the last request counted');
const STAMP = Symbol('its last step toward an answer');
const UNHEARD = Symbol('dropped unanswered');
let stamps = 0;

type Admission = 'process' | 'refuse' | 'drop';

interface Counted {
  [UNANSWERED]?: number;
  [CLOSING]?: true;
  [DROPPED]?: number;
  [AFTER]?: () => void;
  [LAST]?: ServerResponse;
  [STAMP]?: number;
}

/**
 * What the handler does with `req`: `process` it; `refuse` it with `429` and `Connection: close` (`MAX_UNANSWERED`
 * answers on its connection not taken); or `drop` it, unanswered, as an answer on its connection already closes it
 * (RFC 9112 §9.6). A request is counted once: the command's listener asks before the handler from `createHandler`
 * does, and hands it only a request to `process`, the last counted on its connection.
 */
export function admit(req: IncomingMessage, res: ServerResponse): Admission {
  const socket = req.socket as IncomingMessage['socket'] & Counted;
  if (socket[LAST] === res) return 'process';
  if (socket[CLOSING] === true) {
    // What a client sent after the answer that closes is read and dropped: closed with unread bytes, its connection
    // would be reset, and the answers on their way to it lost. But each dropped request costs node:http its objects
    // until the connection ends: past MAX_DROPPED (far more than a client pipelines that reads), it is read no more.
    const dropped = (socket[DROPPED] ?? 0) + 1;
    socket[DROPPED] = dropped;
    if (dropped > MAX_DROPPED) stopReading(socket);
    (res as ServerResponse & { [UNHEARD]?: true })[UNHEARD] = true;
    return 'drop';
  }
  const unanswered = socket[UNANSWERED] ?? 0;
  socket[UNANSWERED] = unanswered + 1;
  socket[LAST] = res;
  socket[STAMP] = ++stamps;
  // A response finishes once: on() spares the wrapper once() makes for every request.
  res.on('finish', taken);
  return unanswered < MAX_UNANSWERED ? 'process' : 'refuse';
}

/**
 * Whether `res` is a request `admit` dropped: one pipelined after the answer that closes its
 * connection, which the service never heard (RFC 9112 §9.6), so no log line tells of it.
 */
export function wasDropped(res: ServerResponse): boolean {
  return (res as ServerResponse & { [UNHEARD]?: true })[UNHEARD] === true;
}

function taken(this: ServerResponse): void {
  const socket = this.req.socket as IncomingMessage['socket'] & Counted;
  socket[UNANSWERED] = (socket[UNANSWERED] ?? 1) - 1;
  socket[STAMP] = ++stamps;
  const then = socket[AFTER];
  if (then === undefined || answering(socket)) return;
  delete socket[AFTER];
  then();
}

/**
 * `then`, once the kernel has taken the answers to the requests of `socket` that wait for theirs (`answering`):
 * at once when none does; else after the last, being written, queued behind another or not given yet (a hash
 * check, a search in its turn). For what is written to the socket past node:http (lib/protocol-errors.ts), which
 * must come after them. A connection that closes first never calls it; a later call replaces one that still waits.
 */
export function afterAnswers(socket: Duplex, then: () => void): void {
  if (answering(socket)) (socket as Duplex & Counted)[AFTER] = then;
  else then();
}

/**
 * Whether a request of `socket` the handler admitted waits for its answer; one whose body is still coming (the last
 * counted) only `withBody`: nothing is computed for it yet, and an error on the connection stops node:http reading it.
 */
export function answering(socket: Duplex, withBody = false): boolean {
  const { [UNANSWERED]: unanswered = 0, [LAST]: last } = socket as Duplex & Counted;
  return unanswered > (!withBody && last !== undefined && !last.req.complete && !last.writableFinished ? 1 : 0);
}

/** When `socket` last moved toward an answer, one count: accepted (now if not yet), request admitted, answer ended. */
export const stamp = (socket: Duplex): number => ((socket as Duplex & Counted)[STAMP] ??= ++stamps);
export const lastAdmitted = (socket: Duplex): ServerResponse | undefined => (socket as Duplex & Counted)[LAST];

/** Whether an answer given on `socket` closes it (`markClosing`): nothing after it is answered. */
export const closing = (socket: Duplex): boolean => (socket as Duplex & Counted)[CLOSING] === true;

/** The answer on `res` closes its connection: no later request on it is processed. */
export function markClosing(res: ServerResponse): void {
  const socket = res.req?.socket as (IncomingMessage['socket'] & Counted) | undefined;
  if (socket !== undefined) socket[CLOSING] = true;
}

// Writing the answers.

/** Try again in a second (docs/API.md): the answers whose cause passes by itself. */
export const RETRY_IN_A_SECOND = ['Retry-After', '1'] as const;

/** The type of every answer but the admin listener's /metrics. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** What every answer carries beside its type and length (docs/API.md, Responses in general). */
export const COMMON_HEADERS = ['Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff'] as const;

/**
 * Every later answer on `res` carries `headers` (name, value, name, value, …): the CORS headers of docs/API.md, set
 * once when the request arrives. `setHeader` keeps them on the response, and node:http merges them into `writeHead`.
 */
export function addToEveryResponse(res: ServerResponse, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] as string, headers[i + 1] as string);
}

/**
 * `Connection: close`, unless `extraHeaders` close already, when nothing after the request will be read: a body it
 * announced, not read to its end (kept open, node:http would read it all, a 100 GB `Content-Length` for the whole
 * request timeout; lib/linger.ts drops the rest, within bounds, so that the answer reaches the client), or
 * an `Upgrade` it asked for (node:http drops what came after it in the same read). A body read to its end (the
 * reconciliation's) leaves nothing unread.
 */
function closeUnreadBody(res: ServerResponse, extraHeaders: readonly string[]): readonly string[] {
  const headers = res.req?.headers;
  if (headers === undefined) return extraHeaders;
  const announced = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  const unreadBody = announced && res.req?.readableEnded !== true;
  if (unreadBody) lingerAfter(res);
  const unread = unreadBody || headers.upgrade !== undefined;
  return unread && !extraHeaders.includes('Connection') ? [...extraHeaders, 'Connection', 'close'] : extraHeaders;
}

/**
 * Ends the answer whose headers are written: at once, or while `answeringTogether` hands a
 * request over, with the answers to the others that arrived with it (below). An answer that
 * closes the connection (ours, or node:http's for a client that asked) is marked (above).
 */
function endAnswer(res: ServerResponse, extraHeaders: readonly string[], body?: string): void {
  if (!res.shouldKeepAlive || extraHeaders.includes('Connection')) markClosing(res);
  if (handling === 0) {
    res.end(body);
    return;
  }
  heldResponses.push(res);
  heldBodies.push(body);
  if (heldResponses.length === 1) setImmediate(endHeldAnswers);
}

// Answers leave together. node:http hands over the requests of every connection that had
// data in one turn of the event loop; an answer ended at once is written at once, and under
// load each write woke its client anew, which cost more CPU time than the answer itself
// (docs/design/README.md, "Answers leave together"). The answers given while
// `answeringTogether` hands over requests are ended together at the end of this turn of
// the loop instead (a turn of searches: lib/search/turns.ts), held in two arrays.
const heldResponses: ServerResponse[] = [];
const heldBodies: Array<string | undefined> = [];
let handling = 0;

/**
 * Ends every held answer now, in the order given; one that cannot be ended has its
 * connection closed. Called at the end of the turn, and before anything else is written to
 * a socket past node:http (lib/protocol-errors.ts), which must come after them.
 */
export function endHeldAnswers(): void {
  for (let i = 0; i < heldResponses.length; i += 1) {
    const res = heldResponses[i] as ServerResponse;
    try {
      res.end(heldBodies[i]);
    } catch {
      res.destroy();
    }
  }
  heldResponses.length = 0;
  heldBodies.length = 0;
}

/**
 * `handler` with the answers it gives while it runs ended at the end of this turn of the
 * event loop, together with those to the other requests that arrived with it (above). For
 * a server whose protocol errors `answerProtocolErrors` answers: those must not overtake a
 * held answer, and Node's own would.
 */
export function answeringTogether(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handling += 1;
    try {
      handler(req, res);
    } finally {
      handling -= 1;
    }
  };
}

/** The answer to a request past its connection's bound on unanswered requests (above). */
export function refuseUnanswered(res: ServerResponse): void {
  sendError(res, ERRORS.tooManyUnanswered, RETRY_IN_A_SECOND);
}

/**
 * `handler` behind its connection's bound on unanswered requests (above), its answers
 * leaving together, for every listener of the command whatever its handler;
 * `createHandler`'s bounds its own too, and a request is counted once. `refused` hears a
 * request the bound refuses before it is answered (its facts, for the access log).
 */
export function withinUnansweredBound(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  refused?: (req: IncomingMessage) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return answeringTogether((req, res) => {
    const admission = admit(req, res);
    if (admission === 'process') handler(req, res);
    else if (admission === 'refuse') {
      refused?.(req);
      refuseUnanswered(res);
    }
  });
}

/**
 * Writes a complete response, JSON unless `contentType` says otherwise (the admin listener's
 * /metrics). A `HEAD` request gets the same headers, `Content-Length` included, and no body:
 * node:http leaves the body of an answer to HEAD out itself.
 */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  extraHeaders: readonly string[] = [],
  contentType = JSON_TYPE,
): void {
  const extra = closeUnreadBody(res, extraHeaders);
  const headers = ['Content-Type', contentType, ...COMMON_HEADERS, ...extra];
  // A 204 has no body, and so no Content-Length (RFC 9110 §8.6).
  if (status !== 204) headers.push('Content-Length', String(Buffer.byteLength(body)));
  res.writeHead(status, headers);
  endAnswer(res, extra, body);
}

// The error a response was answered with, on the response under a symbol of this module
// (lib/request.ts says why not in a WeakMap); a 200 costs nothing here.
const ERROR = Symbol('booking-search-server error sent');
type WithError = ServerResponse & { [ERROR]?: ApiError };

/** An error's `{"fehler": …, "code": …}` with its status. */
export function sendError(res: ServerResponse, error: ApiError, extraHeaders: readonly string[] = []): void {
  (res as WithError)[ERROR] = error;
  const closes = error.closes && !extraHeaders.includes('Connection');
  send(res, error.status, error.body, closes ? [...extraHeaders, 'Connection', 'close'] : extraHeaders);
}

/** The error `sendError` answered `res` with, or `undefined` (the CLI's /metrics counts answers by code). */
export function errorSent(res: ServerResponse): ApiError | undefined {
  return (res as WithError)[ERROR];
}

/** `204` without a body (a CORS preflight): the common headers but `Content-Length`. */
export function sendNoContent(res: ServerResponse, headers: readonly string[]): void {
  send(res, 204, '', headers);
}
