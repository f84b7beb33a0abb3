// createHandler: builds everything once, then answers each request in docs/API.md's order:
//
//   1. outside `{basePath}/api/` with a `next`: handed on untouched;
//   2. a bad Host (none in HTTP/1.1, or two) or an unusable target: 400;
//   3. a CORS preflight on one of the two paths: 204, before anything else is looked at;
//   4. throttle (429), then authenticate (401; too many hash checks waiting: 429);
//   5. path (404), method (405), then the endpoint: /status at once, a search validated
//      (400) and answered.
//
// Two steps may finish in a later turn of the event loop: checking a password hash (on
// libuv's thread pool, lib/auth.ts) and the search, when other searches wait (queued into
// one read transaction with the other searches of a turn, lib/search/). Each hop catches
// its own errors, so that every request still ends in one answer.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from 'better-sqlite3';
import { BUSY, challenge, createAuthenticator, PENDING, parseBasicAuth, REJECTED, type Settled } from './auth.js';
import { clientAddress, throttleKey, trustedPeers } from './client-address.js';
import { admit } from './connection.js';
import { createCors } from './cors.js';
import { validateCredentials } from './credentials.js';
import { isNotReadableNow } from './errors.js';
import { EMPTY_RESULT, formatSearchResult } from './format.js';
import { badQuery, ERRORS } from './messages.js';
import { resolveMapping, resolveOptions, validateDatabase } from './options.js';
import { hasBadHost } from './protocol-errors.js';
import { parseSearchQuery } from './query.js';
import { type RequestFacts, recordFacts } from './request-facts.js';
import { originForm } from './request-target.js';
import { addToEveryResponse, send, sendError, sendNoContent } from './respond.js';
import { createBookingSearch, type SearchOutcome } from './search/index.js';
import { createThrottle } from './throttle.js';
import type { BookingSearchHandler, Credentials, HandlerOptions, Next } from './types.js';

/** The API version reported by `GET {base}/api/v1/status`. */
export const API_VERSION = '1.0';

const ALLOWED_METHODS = ['Allow', 'GET, HEAD'] as const;
// Try again in a second (docs/API.md): a database that is busy or cannot be read now, too
// many hash checks waiting (Credentials), too many searches of one client waiting
// ("Searches, the application's writer and other clients").
const RETRY_IN_A_SECOND = ['Retry-After', '1'] as const;
// A request waits for its password-hash check at most this long (docs/API.md, Credentials),
// and never until the idle timeout of its socket (node:http's server.setTimeout, the CLI's
// --send-timeout) would close its connection without an answer.
export const MAX_HASH_WAIT_MS = 10_000;

/**
 * A node:http request handler for the booking search over `db`.
 *
 * Throws a TypeError naming the argument when `credentials` or `options` are unusable,
 * and an Error naming what is missing when `db` lacks the schema.
 */
export function createHandler(
  db: Database,
  credentials: Credentials | readonly Credentials[],
  options?: HandlerOptions,
): BookingSearchHandler {
  const settings = resolveOptions(options);
  const mapping = resolveMapping(settings.app, settings.tables);
  const search = createBookingSearch(validateDatabase(db, mapping), mapping);
  const authenticator = createAuthenticator(validateCredentials(credentials), settings);
  const throttle = createThrottle({
    maxFailures: settings.maxAuthFailures,
    maxUserFailures: settings.maxUserAuthFailures,
    maxGlobalFailures: settings.maxGlobalAuthFailures,
    maxUnauthenticated: settings.maxUnauthenticatedRequests,
    windowMs: settings.authFailureWindowMs,
    maxAddresses: settings.maxTrackedAddresses,
    maxKnownClients: settings.maxKnownClients,
    now: settings.now,
  });
  const cors = createCors(settings.corsOrigins);
  const { basePath, onError } = settings;
  const trusted = trustedPeers(settings.trustProxy === false ? [] : settings.trustProxy);
  const apiPrefix = `${basePath}/api/`;
  const statusPath = `${basePath}/api/v1/status`;
  const searchPath = `${basePath}/api/v1/buchungen`;
  const statusBody = JSON.stringify({ name: settings.serviceName, version: API_VERSION });
  const challengeHeader = ['WWW-Authenticate', challenge(settings.serviceName)] as const;

  function handleBookingSearch(req: IncomingMessage, res: ServerResponse, next?: Next): void {
    const url = originForm(req.url ?? '/') ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    if (next !== undefined && !path.startsWith(apiPrefix)) return next();
    // A connection's unanswered requests are bounded, and nothing after a closing answer is
    // processed (lib/connection.ts).
    const admission = admit(req, res);
    if (admission === 'drop') return;
    try {
      const badRequest = hasBadHost(req) || url === '';
      // docs/API.md, CORS: a preflight is answered before throttling and authentication,
      // with headers of its own; every other answer carries the CORS response headers.
      if (admission === 'refuse') {
        addToEveryResponse(res, cors.responseHeaders(req));
        return sendError(res, ERRORS.tooManyUnanswered, [...RETRY_IN_A_SECOND, 'Connection', 'close']);
      }
      const preflight = !badRequest && (path === statusPath || path === searchPath) ? cors.preflight(req) : undefined;
      // A preflight carries no credentials: never a failed login, but one of the requests
      // without credentials, so that a flood of them ends like any other (a browser sends
      // its credentials next, and that login clears the count).
      const flood =
        preflight === undefined ? 0 : throttle.recordUnauthenticated(throttleKey(clientAddress(req, trusted)));
      if (preflight !== undefined && flood === 0) return sendNoContent(res, preflight);
      addToEveryResponse(res, cors.responseHeaders(req));
      if (flood > 0) return throttled(res, flood);
      if (badRequest) return sendError(res, ERRORS.badRequest, ['Connection', 'close']);
      const exchange: Exchange = {
        req,
        res,
        path,
        query: mark === -1 ? '' : url.slice(mark + 1),
        facts: recordFacts(req, clientAddress(req, trusted)),
      };
      authenticate(exchange);
    } catch (error: unknown) {
      fail(error, req, res);
    }
  }

  /**
   * Throttle, then credentials (docs/API.md, Throttling); a password hash is checked off the
   * event loop, counted as a failure while it runs so that parallel guesses see it.
   */
  function authenticate(exchange: Exchange): void {
    const { req, res, facts } = exchange;
    const address = throttleKey(facts.clientAddress);
    const blocked = throttle.retryAfter(address);
    if (blocked > 0) return throttled(res, blocked);
    const header = req.headers.authorization;
    // A header that carried accepted credentials before, spelled the same: no parsing. The
    // budgets hold for it as for any credentials.
    const recalled = authenticator.recall(header);
    if (recalled !== undefined) {
      const wait = throttle.budgetRetryAfter(recalled, address);
      if (wait > 0) return throttled(res, wait);
      return afterAuthentication(exchange, recalled, address);
    }
    const given = parseBasicAuth(header);
    // The access log names the user a failed login tried (bin/log.ts escapes it).
    facts.attempted = given?.username;
    if (given === undefined) {
      // No credentials: challenged, not a failure; a flood of them is cut off.
      const wait = throttle.recordUnauthenticated(address);
      if (wait > 0) return throttled(res, wait);
      return sendError(res, ERRORS.unauthorized, challengeHeader);
    }
    // The username's or the global budget is spent: only clients that logged in from this
    // address before are checked, everyone else waits for the window without a check.
    const budget = throttle.budgetRetryAfter(given.username, address);
    if (budget > 0) return throttled(res, budget);
    const verdict = authenticator.check(given, header);
    if (verdict !== PENDING) {
      if (verdict === REJECTED) throttle.recordFailure(address, given.username);
      return afterAuthentication(exchange, verdict, address);
    }
    throttle.recordFailure(address, given.username);
    // Every request gets an answer (docs/API.md, Credentials): one whose check has not come
    // by the deadline is answered 503 with Retry-After, and its place in the queue given up.
    let answered = false;
    const deadline = setTimeout(() => {
      answered = true;
      try {
        sendError(res, ERRORS.busyTimeout, RETRY_IN_A_SECOND);
      } catch (error: unknown) {
        fail(error, req, res);
      }
    }, hashWaitMs(req));
    authenticator.verify(
      given,
      (late) => {
        clearTimeout(deadline);
        try {
          if (late !== REJECTED) throttle.forgive(address, given.username);
          if (!answered) afterAuthentication(exchange, late, address);
        } catch (error: unknown) {
          fail(error, req, res);
        }
      },
      () => answered || req.socket.destroyed,
      header,
    );
  }

  /** How long `req` may wait for its hash check: up to a second less than its socket's idle timeout. */
  function hashWaitMs(req: IncomingMessage): number {
    const idle = req.socket.timeout ?? 0;
    return idle > 0 ? Math.min(MAX_HASH_WAIT_MS, idle - Math.min(1_000, idle / 10)) : MAX_HASH_WAIT_MS;
  }

  /** 429 from the throttle; the connection closes, so a pipelined flood ends with it. */
  function throttled(res: ServerResponse, seconds: number): void {
    sendError(res, ERRORS.loginThrottled, ['Retry-After', String(seconds), 'Connection', 'close']);
  }

  /** The verdict on the credentials (failures already counted), then path, method and endpoint. */
  function afterAuthentication(exchange: Exchange, verdict: Settled, address: string): void {
    const { req, res, path, facts } = exchange;
    if (verdict === BUSY) return sendError(res, ERRORS.busy, RETRY_IN_A_SECOND);
    if (typeof verdict !== 'string') return sendError(res, ERRORS.unauthorized, challengeHeader);
    throttle.recordSuccess(address, verdict);
    facts.user = verdict;

    if (path !== statusPath && path !== searchPath) return sendError(res, ERRORS.notFound);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, ERRORS.methodNotAllowed, ALLOWED_METHODS);
    }
    // docs/API.md: the status endpoint ignores any query and never touches the database.
    if (path === statusPath) return send(res, 200, statusBody);
    startSearch(exchange);
  }

  /** Validates the query and answers the search: at once when no other search waits, else in a later turn. */
  function startSearch({ req, res, query, facts }: Exchange): void {
    const parsed = parseSearchQuery(query);
    if (!parsed.ok) return sendError(res, badQuery(parsed.message));
    // docs/API.md: only EUR is stored; any other (valid) code matches nothing.
    if (parsed.query.waehrung !== 'EUR') return send(res, 200, EMPTY_RESULT);
    // An IPv6 client counts by its /64 here too (docs/API.md, Throttling).
    const client = throttleKey(facts.clientAddress);
    // Per address, and per user whatever number of addresses it comes from: the waiting
    // searches, and the memory they hold, stay bounded (docs/API.md).
    if (
      search.waitingFrom(client) >= settings.maxWaitingSearches ||
      search.waitingFor(facts.user ?? '') >= settings.maxUserWaitingSearches
    ) {
      return sendError(res, ERRORS.tooManySearches, RETRY_IN_A_SECOND);
    }
    // Answered at once when no other search waits; otherwise in a later turn of the event
    // loop, in one read transaction with other queued searches, each client's in turn
    // (lib/search/booking-search.ts says why that is exact, cheaper and fair to the other
    // clients and to the application's writer).
    search.answer(
      parsed.query,
      (outcome) => {
        try {
          answerSearch(req, res, outcome);
        } catch (error: unknown) {
          fail(error, req, res);
        }
      },
      { user: facts.user ?? '', address: client, connection: req.socket, abandoned: () => req.socket.destroyed },
    );
  }

  /** The search's rows as the answer, or its 500 (with Retry-After when the file is only busy). */
  function answerSearch(req: IncomingMessage, res: ServerResponse, outcome: SearchOutcome): void {
    let body: string | undefined;
    let failure: unknown;
    if (outcome.ok) {
      try {
        body = formatSearchResult(outcome.result);
      } catch (error: unknown) {
        failure = error;
      }
    } else failure = outcome.error;
    if (body !== undefined) return send(res, 200, body);
    report(failure, req);
    if (isNotReadableNow(failure)) sendError(res, ERRORS.databaseUnavailable, RETRY_IN_A_SECOND);
    else sendError(res, ERRORS.searchFailed);
  }

  /** Anything unexpected: the cause to `onError`, the client a 500 (or a cut connection, mid-answer). */
  function fail(error: unknown, req: IncomingMessage, res: ServerResponse): void {
    report(error, req);
    if (res.headersSent) res.destroy();
    else sendError(res, ERRORS.internal);
  }

  function report(error: unknown, req: IncomingMessage): void {
    try {
      onError(error, req);
    } catch {
      // A failing error hook must not take the request, or the server, down with it.
    }
  }

  return Object.assign(handleBookingSearch, {
    updateCredentials(next: Credentials | readonly Credentials[]): void {
      authenticator.replaceUsers(validateCredentials(next));
    },
  });
}

/** One request on its way through the handler: what each step needs to answer it. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path of the target, as sent (docs/API.md, Paths). */
  path: string;
  /** The raw query string, without the `?`. */
  query: string;
  /** The client address, and the user once authenticated (for the access log). */
  facts: RequestFacts;
}
