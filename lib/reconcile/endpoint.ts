// POST {base}/api/v1/abgleich for a client that is let in: no query string (400, as the
// search's unknown parameter: a question is asked in the body), the media type (415), the body
// read up to 1 MiB (413), the waiting searches bounded as the GET's (429), a reconciliation
// waiting for its place counted as one (gate.ts); in its place the body parsed and validated
// (400) in a turn of the event loop of its own, every booking of the lines' windows read from
// one snapshot in slices, each a search of the turns (read.ts), and the reconciliation run
// over them in slices of half a millisecond, so that other clients' requests are answered in
// between (docs/API.md).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Failures } from '../failure.js';
import { BODY_MESSAGES, badBody, badQuery, ERRORS, LIMITS } from '../messages.js';
import { refuseQuery } from '../query.js';
import { RETRY_IN_A_SECOND, send, sendError } from '../respond.js';
import type { Outcome, Requester, SearchRows } from '../search/index.js';
import {
  type SearchEndpoint,
  type SearchLimits,
  type SearchTurns,
  sendSearchFailure,
  tooManyWaiting,
} from '../search-endpoint.js';
import { parseReconcileBody, type ReconcileRequest } from './body.js';
import { createGate, type Gate } from './gate.js';
import { MAX_WINDOW_BOOKINGS, readWindows, windowsOf } from './read.js';
import { reconcile } from './reconcile.js';

const MAX_BODY_BYTES = LIMITS.bodyBytes;
/**
 * How long the reconciliation runs before it lets the event loop answer others. A new
 * connection's /status needs a few turns of the loop, each waiting for at most one slice
 * (and the step that passes it, a few tenths of a millisecond); a turn between two slices
 * costs a few microseconds.
 */
export const SLICE_MS = 0.5;
// RFC 9110 §8.3.1: `application/json`, optionally with `charset=utf-8` (names and the
// charset's value case-insensitive, the value perhaps quoted), nothing else.
// JSON, its one parameter charset=utf-8 said or not; an empty parameter (`application/json;`)
// is no parameter (RFC 9110 §5.6.6).
const JSON_MEDIA_TYPE = /^application\/json(?:[ \t]*;[ \t]*(?:charset=(?:utf-8|"utf-8"))?)*[ \t]*$/i;
// A body as it was written: a coding this service does not undo (gzip) leaves no JSON to read
// (RFC 9110 §8.4: 415; RFC 9112 §6.1: a transfer coding before `chunked`). An empty element of
// the list is none (RFC 9110 §5.6.1).
const NO_CONTENT_CODING = /^[ \t,]*(?:identity[ \t,]*)*$/i;
const NO_TRANSFER_CODING = /^[ \t,]*chunked[ \t,]*$/i;
const BODY_TAKEN =
  'the body of POST abgleich was read before the handler (a body parser in front of it): the handler reads it itself, so put no body parser before it';
// Every book's reconciliations of this thread take their places in one gate.
const GATE_OF_THIS_THREAD = createGate();

/** An endpoint as the search's is (its query, the user let in, the client as counted). */
export type ReconcileEndpoint = SearchEndpoint;

export function createReconcileEndpoint(
  search: SearchTurns,
  limits: SearchLimits,
  failures: Failures,
  gate: Gate = GATE_OF_THIS_THREAD,
): ReconcileEndpoint {
  const { fail } = failures;
  // A reconciliation waiting for its place is a waiting search of its address and user.
  const waiting = {
    waitingFrom: (address: string) => search.waitingFrom(address) + gate.waitingFrom(address),
    waitingFor: (user: string) => search.waitingFor(user) + gate.waitingFor(user),
  };
  return (req, res, query, user, client) => {
    const problem = query === '' ? undefined : refuseQuery(query);
    if (problem !== undefined) return sendError(res, badQuery(problem));
    if (!JSON_MEDIA_TYPE.test(req.headers['content-type'] ?? '') || !uncoded(req))
      return sendError(res, ERRORS.unsupportedMediaType);
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return sendError(res, ERRORS.bodyTooLarge);
    // An embedder's body parser before the handler (express.json(), say) took the body: its
    // end would never come. The embedder's mistake, for the hook; the client gets the 500.
    if (req.readableDidRead || req.readableEnded) return fail(new Error(BODY_TAKEN), req, res);
    continueBody(res);
    readBody(req, (body) => {
      try {
        if (body === undefined) return sendError(res, ERRORS.bodyTooLarge);
        if (tooManyWaiting(waiting, limits, user, client))
          return sendError(res, ERRORS.tooManySearches, RETRY_IN_A_SECOND);
        const from = { user, address: client, connection: req.socket };
        // The body is parsed in its place, in a turn of the event loop of its own: a body
        // costs up to tens of milliseconds to parse, and others' requests are answered
        // between two, however many clients send one at once.
        gate.enter(from, (leave) => {
          // Its place is freed with its answer, or when the client leaves first; at once when
          // it was answered while it waited (a service that stops).
          if (res.writableEnded || res.destroyed) return leave();
          res.once('close', leave);
          setImmediate(
            guarded(failures, req, res, () => reconcileInPlace({ req, res, body, from, leave }, search, failures)),
          );
        });
      } catch (error: unknown) {
        fail(error, req, res);
      }
    });
  };
}

/** A reconciliation that has its place: its request, the body read, its client, how it leaves the place. */
interface InPlace {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  from: Requester;
  leave: () => void;
}

/**
 * The body parsed (400 for what is wrong with it), every booking of its windows read from one
 * snapshot, the reconciliation run in slices and answered; its place left with the answer.
 */
function reconcileInPlace({ req, res, body, from, leave }: InPlace, search: SearchTurns, failures: Failures): void {
  const { report, fail } = failures;
  if (res.destroyed || res.writableEnded) return leave();
  const parsed = parseReconcileBody(body);
  if (!parsed.ok) {
    leave();
    return sendError(res, badBody(parsed.message));
  }
  const answer = (outcome: Outcome<SearchRows>): void => {
    if (!outcome.ok) {
      leave();
      return sendSearchFailure(report, outcome.error, req, res);
    }
    if (outcome.result.rows.length > MAX_WINDOW_BOOKINGS) {
      leave();
      return sendError(res, badBody(BODY_MESSAGES.tooManyBookings));
    }
    inSlices(req, parsed.request, outcome.result, (result) => {
      leave();
      try {
        if (!result.ok) sendSearchFailure(report, result.error, req, res);
        else if (result.body === undefined) sendError(res, badBody(BODY_MESSAGES.tooMuchWeighing));
        else send(res, 200, result.body);
      } catch (error: unknown) {
        fail(error, req, res);
      }
    });
  };
  // Each slice a search of the turns, waiting its turn as any other; queued, not run
  // at once, so that the body's parse and the read are apart.
  readWindows(search, windowsOf(parsed.request), from, guarded(failures, req, res, answer));
}

/** `work` with what it throws answered as the handler's failure of `req`. */
function guarded<A extends unknown[]>(
  { fail }: Failures,
  req: IncomingMessage,
  res: ServerResponse,
  work: (...args: A) => void,
): (...args: A) => void {
  return (...args) => {
    try {
      work(...args);
    } catch (error: unknown) {
      fail(error, req, res);
    }
  };
}

/**
 * `100 Continue` to a client that asked for it (`Expect: 100-continue`, which node:http
 * recognised), now that its request is let in: logged in, its size acceptable. Not twice:
 * a server without answerProtocolErrors (lib/protocol-errors.ts) sent it before the handler.
 */
function continueBody(res: ServerResponse & { _expect_continue?: boolean; _sent100?: boolean }): void {
  if (res._expect_continue === true && res._sent100 !== true) res.writeContinue();
}

/**
 * The body, or `undefined` once it passes MAX_BODY_BYTES (the rest is left unread: the
 * answer closes the connection). Nothing is called when the body never ends: a client gone
 * or stalled mid-body has its connection closed (lib/protocol-errors.ts, or node:http).
 */
function readBody(req: IncomingMessage, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let length = 0;
  const onData = (chunk: Buffer): void => {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) {
      stop();
      req.pause();
      return done(undefined);
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    stop();
    done(Buffer.concat(chunks, length));
  };
  const stop = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', stop);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', stop);
}

/** The answer's text, `undefined` when refused for weighing too much (reconcile.ts), or the failure. */
type Sliced = { ok: true; body: string | undefined } | { ok: false; error: unknown };

/** The reconciliation run SLICE_MS at a time, the event loop free in between; given up when the client has gone. */
function inSlices(
  req: IncomingMessage,
  request: ReconcileRequest,
  rows: SearchRows,
  done: (result: Sliced) => void,
): void {
  const work = reconcile(request, rows.rows);
  const slice = (): void => {
    if (req.socket.destroyed) return;
    const started = performance.now();
    let result: Sliced | undefined;
    try {
      for (;;) {
        const step = work.next();
        if (step.done === true) {
          result = { ok: true, body: step.value };
          break;
        }
        if (performance.now() - started >= SLICE_MS) break;
      }
    } catch (error: unknown) {
      result = { ok: false, error };
    }
    if (result === undefined) setImmediate(slice);
    else done(result);
  };
  // Not in the turn that read the bookings: the event loop first answers what came meanwhile.
  setImmediate(slice);
}

/** Whether the body of `req` comes as it was written: no content coding, no transfer coding but `chunked`. */
function uncoded(req: IncomingMessage): boolean {
  const content = req.headers['content-encoding'];
  const transfer = req.headers['transfer-encoding'];
  return (
    (content === undefined || NO_CONTENT_CODING.test(content)) &&
    (transfer === undefined || NO_TRANSFER_CODING.test(transfer))
  );
}
