// Errors that Node's HTTP server raises before a request handler runs, answered as JSON
// (docs/API.md, Responses in general): the CLI's server uses this, and so can an embedder;
// and the command's listeners' protections at the edge, put on a server in one call.

import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { boundConnections, type ConnectionBounds, type StopConnections } from './connection-cap.js';
import { ensure, errorCode } from './errors.js';
import { type ApiError, ERRORS } from './messages.js';
import { trustedPeers } from './options.js';
import {
  type Answered,
  clientAddress,
  isBadRequest,
  pathForLog,
  recordFacts,
  requestFacts,
  whenAnswered,
} from './request.js';
import {
  afterAnswers,
  answering,
  COMMON_HEADERS,
  closing,
  endHeldAnswers,
  JSON_TYPE,
  lastAdmitted,
  sendError,
  wasDropped,
  withinUnansweredBound,
} from './respond.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** What protectServer bounds on a server's connections, and who answers a bad request. */
export interface EdgeOptions extends ConnectionBounds {
  /**
   * For a handler that does not check requests itself (createHandler's does): what answers
   * one that isBadRequest refuses (lib/request.ts: a bad Host, since Node's own check is off
   * by `answerProtocolErrors`; two logins). Without it, the handler is trusted to check.
   */
  badRequest?: Listener | undefined;
  /**
   * Hears each response as it closes, the requests the bound refuses included: its
   * milliseconds since the request came, what the handler learnt of it (`undefined` for a
   * request it never routed) and its path as a log line may show it (lib/request.ts).
   */
  answered?: Answered | undefined;
}

/**
 * Puts the HTTP edge's protections on `server` (made without a request listener) and hands
 * `handler` the requests they let through: a connection's bound on unanswered requests, the
 * answers to requests that arrived together ended together (lib/respond.ts), protocol errors
 * answered as JSON after them (`answerProtocolErrors`), and each connection's peer read when
 * it is accepted, before a client that resets it takes it along (lib/request.ts); and on the
 * server's socket timeout, only a connection with no request waiting for its answer closed.
 * The server keeps at most `edge`'s connections, in all and from one address
 * (connection-cap.ts); with `edge.badRequest`, a request isBadRequest refuses is answered by it
 * instead of `handler`; `edge.answered` hears every response close. Returns the stop's part
 * on the connections (connection-cap.ts).
 */
export function protectServer(server: Server, handler: Listener, edge: EdgeOptions): StopConnections {
  const { badRequest, answered } = edge;
  const checked: Listener =
    badRequest === undefined ? handler : (req, res) => (isBadRequest(req) ? badRequest(req, res) : handler(req, res));
  // A request the bound refuses is never routed: its log line still names its client.
  const trusted = trustedPeers(edge.proxies);
  const bounded = withinUnansweredBound(checked, (req) =>
    recordFacts(req, clientAddress(req, trusted), 'other', pathForLog(req.url ?? '')),
  );
  server.on('request', answered === undefined ? bounded : whenAnswered(bounded, answered));
  answerProtocolErrors(server);
  server.on('timeout', closeUnlessAnswering);
  return boundConnections(server, edge);
}

// Heard on the server's socket timeout (`server.setTimeout`, when one is set): Node would
// close the connection; so does this, unless a request of it waits for its answer, or its
// body is still coming and the request timeout ends it with its 408 (not closed unanswered).
function closeUnlessAnswering(this: Server, socket: Duplex): void {
  if (!answering(socket, this.requestTimeout > 0)) socket.destroy();
}

/** The servers answerProtocolErrors has wired. */
const wired = new WeakSet<Server>();

/** The one expectation node:http may answer with 100 Continue (RFC 9110 §10.1.1). */
const ONLY_CONTINUE = /^[ \t]*100-continue[ \t]*$/i;

/**
 * Makes `server` answer its protocol errors as docs/API.md says: parser errors (400),
 * headers over `maxHeaderSize` (431), `headersTimeout`/`requestTimeout` (408), an
 * `Expect` other than `100-continue` (417) and a `CONNECT` (405), each as
 * `{"fehler": …, "code": …}` with `Connection: close`, after the answers to the requests
 * before it on the connection; none after an answer that closes it, nor for a request the
 * handler answered already (an error in its body), which is answered once.
 *
 * It keeps a connection the client half-closed until its answers are written, and it
 * turns off Node's own check for a missing `Host` (`requireHostHeader`), whose
 * answer has no body: the handler from `createHandler` answers that request with the JSON
 * 400 instead. Requests that the handler passes to `next()` are not checked for `Host`.
 * And it hands a request with `Expect: 100-continue` to the handler before node:http's
 * `100 Continue`, which the handler sends once the request is let in (a client refused
 * sends no body); one the handler does not take in that turn (your routes') gets it at once,
 * as node:http would send it. Returns `server`; a second call on it changes nothing.
 */
export function answerProtocolErrors<S extends Server>(server: S): S {
  ensure(
    typeof (server as Partial<Server> | null | undefined)?.on === 'function',
    'answerProtocolErrors takes the node:http or node:https Server the handler is mounted on (Fastify: fastify.server)',
  );
  // Twice, each listener would answer again: the second writes over the first's answer.
  if (wired.has(server)) return server;
  wired.add(server);
  // A documented option of http.createServer (Node ≥ 20), read on every request.
  (server as { requireHostHeader?: boolean }).requireHostHeader = false;
  // A client that half-closes after its request (`shutdown(SHUT_WR)`, `nc -N`) gets the
  // answer that comes in a later turn (a reconciliation, a first login): node:http, read at
  // the connection's end, would drop it; the connection closes after its last answer.
  (server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // node:http takes `100-continue` anywhere in the field (`100-continue, foo`) for it.
    if (!ONLY_CONTINUE.test(req.headers.expect ?? '')) return answerExpectation(req, res);
    server.emit('request', req, res);
    if (lastAdmitted(req.socket) !== res && !wasDropped(res) && !res.headersSent) res.writeContinue();
  });
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerExpectation);
  server.on('connect', answerConnect);
  return server;
}

/**
 * A `'clientError'` listener for a node:http server (or Fastify's `clientErrorHandler`).
 * The error's JSON answer comes after the answers to the requests before it on the
 * connection, whole and in order (docs/API.md, Responses in general), then the connection
 * closes; Node's own handler writes its 400 at once, over what was still to be written.
 * A request whose body the error cuts off (a client gone or stalled mid-body) is not
 * waited for: it never has its body, and the close ends it unanswered; but when it was
 * answered already, or an answer before closes the connection, the error gets no answer.
 */
export function answerClientError(error: unknown, socket: Duplex): void {
  // Answers the command holds for the end of this turn go out first (lib/respond.ts).
  endHeldAnswers();
  const code = errorCode(error);
  // Bytes after a request that asked to close (RFC 9112 §9.6): the parser refuses them, and
  // they are no request to answer. The requests before them, the closing one included, are
  // answered in order, and the closing one's answer ends the connection.
  if (code === 'HPE_CLOSED_CONNECTION') return;
  if (code === 'ECONNRESET' || !socket.writable || unanswerableOnTls(socket, code)) {
    socket.destroy();
    return;
  }
  if (code === 'HPE_HEADER_OVERFLOW') return answerAfterTheOthers(socket, ERRORS.headersTooLarge);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return answerAfterTheOthers(socket, ERRORS.timeout);
  answerAfterTheOthers(socket, ERRORS.badRequest);
}

/**
 * A `'connect'` listener: a `CONNECT` asks for a tunnel, which this service is not. `405`
 * with `Allow: GET, HEAD` after the answers to the requests before it, then the connection
 * closes. Without a listener, Node destroys the connection as soon as it reads the
 * request, and with it every answer not yet written.
 */
export function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  endHeldAnswers();
  answerAfterTheOthers(socket, ERRORS.methodNotAllowed, ['Allow', 'GET, HEAD']);
}

type InFlight = ServerResponse | null | undefined;

/**
 * `error` on `socket` once the answers before it have been taken (lib/respond.ts), then the
 * close; but no answer at all, only the close, after an answer that closes the connection
 * (RFC 9112 §9.6), or when the error is in the body of a request that has its answer: a
 * request handed on is answered once, by the handler or, if it has not answered, by this:
 * as its response when this library's handler holds it (its status then in the log and the
 * counts, as any answer's), else on the socket (an embedder's handler may still write).
 */
function answerAfterTheOthers(socket: Duplex, error: ApiError, headers: readonly string[] = []): void {
  afterAnswers(socket, () => {
    // A response that is being written cannot be interrupted by another (an embedder's,
    // which the handler does not count).
    const current = (socket as { _httpMessage?: InFlight })._httpMessage;
    if (!socket.writable || (current?.headersSent === true && !current.writableEnded)) socket.destroy();
    // node:http closes the connection once the answer that closes it is out (lib/linger.ts).
    else if (closing(socket)) return;
    else {
      const cut = bodyCutOff(socket);
      const cutIsCurrent = cut !== undefined && (current === null || current === undefined || current.req === cut);
      if (cutIsCurrent && current?.headersSent !== false) socket.end(() => socket.destroy());
      // This library's handler holds the request (it has its facts) and never answers it now.
      else if (cutIsCurrent && requestFacts(cut) !== undefined)
        sendError(current as ServerResponse, error, [...headers, 'Connection', 'close']);
      else sendOnSocket(socket, error, headers);
    }
  });
}

/**
 * The request whose body the error cut off, if any: the last one node:http's parser read the
 * headers of, which it handed on, and which was complete until then. Its answer is the one
 * on the socket (not begun, begun, or gone already: node:http writes them in order). Answers
 * from this module's handlers to a body left unread close (lib/respond.ts), an embedder's may not.
 */
function bodyCutOff(socket: Duplex): IncomingMessage | undefined {
  const cut = (socket as { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming;
  return cut === null || cut === undefined || cut.complete || cut.socket !== socket ? undefined : cut;
}

/**
 * On a TLS socket only the HTTP parser's errors, which come after the handshake, can be
 * answered (encrypted, like any response). Every other error there is the TLS layer's (a
 * handshake that timed out or failed, plain HTTP sent to the TLS port): node:https hands it
 * to `'clientError'` instead of destroying the socket, and an answer written into a
 * handshake that never completes is never sent, so the socket would stay open for good.
 */
function unanswerableOnTls(socket: Duplex, code: string | undefined): boolean {
  return socket instanceof TLSSocket && !/^(?:HPE_|ERR_HTTP_)/.test(code ?? '');
}

/** A `'checkExpectation'` listener: an `Expect` other than `100-continue` gets 417. */
export function answerExpectation(_req: IncomingMessage, res: ServerResponse): void {
  sendError(res, ERRORS.expectationFailed);
}

/**
 * Answers on a bare socket, for errors that Node's HTTP parser raises before there is a
 * request to answer (docs/API.md, Responses in general): the error's body, `Date`, the
 * common headers and `Connection: close`; the connection is closed once the answer is out.
 */
export function sendOnSocket(socket: Duplex, error: ApiError, extraHeaders: readonly string[] = []): void {
  const json = error.body;
  const head = [`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`];
  const headers = [
    // RFC 9110 §6.6.1: an origin server with a clock dates every answer (node:http does its own).
    'Date',
    new Date().toUTCString(),
    'Content-Type',
    JSON_TYPE,
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
