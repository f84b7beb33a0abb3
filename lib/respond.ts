// The one place that writes responses: every status goes through `send`, which always
// sets the same headers (docs/API.md, Responses in general).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { admit, markClosing } from './connection.js';
import { type ApiError, ERRORS } from './messages.js';

/** Try again in a second (docs/API.md): the answers whose cause passes by itself. */
export const RETRY_IN_A_SECOND = ['Retry-After', '1'] as const;

const COMMON_HEADERS = [
  'Content-Type',
  'application/json; charset=utf-8',
  'Cache-Control',
  'no-store',
  'X-Content-Type-Options',
  'nosniff',
] as const;

/**
 * Every later answer on `res` carries `headers` (name, value, name, value, …): the CORS
 * headers of docs/API.md, set once when the request arrives. `setHeader` keeps them on the
 * response, and node:http merges them into `writeHead`.
 */
export function addToEveryResponse(res: ServerResponse, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] as string, headers[i + 1] as string);
}

const CLOSE = ['Connection', 'close'] as const;

/**
 * `Connection: close` when the request announced a body that was not read to its end,
 * unless `extraHeaders` already close: node:http would read all of it after the answer to
 * keep the connection open (a 401 to a request with a 100 GB `Content-Length` went on
 * reading for the whole request timeout). Closed, the rest is never read.
 */
function closeUnreadBody(res: ServerResponse, extraHeaders: readonly string[]): readonly string[] {
  const headers = res.req?.headers;
  if (headers === undefined) return extraHeaders;
  const announced = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  // A body read to its end (the reconciliation's) leaves nothing unread.
  const unread = announced && res.req?.readableEnded !== true;
  return unread && !extraHeaders.includes('Connection') ? [...extraHeaders, ...CLOSE] : extraHeaders;
}

/**
 * Ends the answer whose headers are written: at once, or while `answeringTogether` hands a
 * request over, with the answers to the others that arrived with it (below). When it closes
 * the connection (our `Connection: close`, or node:http's for a client that asked for it),
 * no later request on the connection is processed (lib/connection.ts).
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
// data, one after the other, in one turn of the event loop; an answer ended at once is
// written to its socket at once, and each write wakes a client that waits for it, between
// the parsing of the next requests. Under load, every answer so woke its client anew, which
// cost the service more CPU time than the answer itself (docs/design/README.md, "Answers leave
// together"). The answers given while `answeringTogether` hands over requests are ended at
// the end of this turn of the loop instead, together. (The answers of a turn of searches
// leave together already: lib/search/turns.ts.) Responses and their bodies wait in two
// arrays: nothing is made per answer.
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

/** The answer to a request past its connection's bound on unanswered requests (lib/connection.ts). */
export function refuseUnanswered(res: ServerResponse): void {
  sendError(res, ERRORS.tooManyUnanswered, [...RETRY_IN_A_SECOND, 'Connection', 'close']);
}

/**
 * `handler` behind its connection's bound on unanswered requests (lib/connection.ts): a
 * request past it is refused here, one after an answer that closes the connection is not
 * handled. Every listener of the command has it, whatever its handler; the handler from
 * `createHandler` bounds its own connections too, and a request is counted once.
 */
export function withinUnansweredBound(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const admission = admit(req, res);
    if (admission === 'process') handler(req, res);
    else if (admission === 'refuse') refuseUnanswered(res);
  };
}

/**
 * Writes a complete JSON response. A `HEAD` request gets the same headers, `Content-Length`
 * included, and no body: node:http leaves the body of an answer to HEAD out itself.
 */
export function send(res: ServerResponse, status: number, json: string, extraHeaders: readonly string[] = []): void {
  const extra = closeUnreadBody(res, extraHeaders);
  res.writeHead(status, [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(json)),
    'Cache-Control',
    'no-store',
    'X-Content-Type-Options',
    'nosniff',
    ...extra,
  ]);
  endAnswer(res, extra, json);
}

// The error a response was answered with, on the response under a symbol of this module,
// which no other code can name (lib/request.ts says why not in a WeakMap); only
// errors are recorded, so a 200 costs nothing here.
const ERROR = Symbol('booking-search-server error sent');
type WithError = ServerResponse & { [ERROR]?: ApiError };

/** An error's `{"fehler": …, "code": …}` with its status. */
export function sendError(res: ServerResponse, error: ApiError, extraHeaders: readonly string[] = []): void {
  (res as WithError)[ERROR] = error;
  send(res, error.status, error.body, extraHeaders);
}

/** The error `sendError` answered `res` with, or `undefined` (the CLI's /metrics counts answers by code). */
export function errorSent(res: ServerResponse): ApiError | undefined {
  return (res as WithError)[ERROR];
}

/** `204` without a body (a CORS preflight): the common headers but `Content-Length`. */
export function sendNoContent(res: ServerResponse, headers: readonly string[]): void {
  const extra = closeUnreadBody(res, headers);
  res.writeHead(204, [...COMMON_HEADERS, ...extra]);
  endAnswer(res, extra);
}

/**
 * Answers on a bare socket, for errors that Node's HTTP parser raises before there is a
 * request to answer (docs/API.md, Responses in general): the error's body, the common
 * headers and `Connection: close`; the connection is closed once the answer is out.
 */
export function sendOnSocket(
  socket: Duplex,
  reason: string,
  error: ApiError,
  extraHeaders: readonly string[] = [],
): void {
  const json = error.body;
  const head = [`HTTP/1.1 ${error.status} ${reason}`];
  const headers = [
    ...COMMON_HEADERS,
    'Content-Length',
    String(Buffer.byteLength(json)),
    ...extraHeaders,
    'Connection',
    'close',
  ];
  for (let i = 0; i < headers.length; i += 2) head.push(`${headers[i]}: ${headers[i + 1]}`);
  socket.end(`${head.join('\r\n')}\r\n\r\n${json}`, () => socket.destroy());
}
