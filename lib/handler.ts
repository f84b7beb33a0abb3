// createHandler: builds everything once, then answers each request in docs/API.md's order:
//
//   1. outside `{basePath}/api/` with a `next`: handed on untouched;
//   2. a bad Host (none in HTTP/1.1, or two) or an unusable target: 400;
//   3. a CORS preflight on one of the two paths: 204, before anything else is looked at;
//   4. the login, throttle and credentials in one call (lib/login.ts): 401, or 429 from the
//      throttle or a full queue of hash checks, or 503 when a hash check comes too late;
//   5. path (404), method (405), then the endpoint: /status at once, a search validated
//      (400) and answered.
//
// Two steps may finish in a later turn of the event loop: checking a password hash (on
// libuv's thread pool, lib/auth.ts, through the login) and the search, when other searches wait (queued into
// one read transaction with the other searches of a turn, lib/search/). Each hop catches
// its own errors, so that every request still ends in one answer.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from 'better-sqlite3';
import { challenge, createAuthenticator, type HashChecks } from './auth.js';
import { clientAddress, throttleKey } from './client-address.js';
import { admit } from './connection.js';
import { validateCredentials } from './credentials.js';
import { validateDatabase } from './database-handle.js';
import { isNotReadableNow } from './errors.js';
import { EMPTY_RESULT, formatSearchResult } from './format.js';
import { createLogin, type LoginVerdict } from './login.js';
import { badQuery, ERRORS } from './messages.js';
import { countSearchWait, type Metrics } from './metrics.js';
import { resolveOptions, type Settings } from './options.js';
import { hasBadHost } from './protocol-errors.js';
import { parseSearchQuery, type SearchQuery } from './query.js';
import { type RequestFacts, recordFacts } from './request-facts.js';
import { originForm } from './request-target.js';
import { addToEveryResponse, send, sendError, sendNoContent } from './respond.js';
import { createBookingSearch, type SearchOutcome } from './search/booking-search.js';
import type { SearchRows } from './search/sql.js';
import type { Turns } from './search/turns.js';
import { createThrottle, type Throttle } from './throttle.js';
import type { BookingSearchHandler, Credentials, HandlerOptions, Next } from './types.js';

/** The API version reported by `GET {base}/api/v1/status`. */
export const API_VERSION = '1.0';

const ALLOWED_METHODS = ['Allow', 'GET, HEAD'] as const;
// Try again in a second (docs/API.md): a database that is busy or cannot be read now, too
// many searches of one client waiting ("Searches, the application's writer and other clients").
const RETRY_IN_A_SECOND = ['Retry-After', '1'] as const;

/**
 * What the handlers of one service share beyond their options (the CLI's books, their
 * stand-ins and fallback, and its workers): one login throttle, whose budgets then hold for
 * the service as a whole, and where they count for the admin listener's /metrics.
 */
export interface SharedParts {
  /** Default: a throttle of the handler's own, over its options. */
  throttle?: Throttle;
  /** Default: the handler's own bound on password-hash checks, over its options. */
  hashChecks?: HashChecks;
  /** Default: nothing is counted. */
  metrics?: Metrics;
}

/**
 * A node:http request handler for the booking search over `db`.
 *
 * Throws a TypeError naming the argument when `credentials` or `options` are unusable,
 * and an Error naming what is missing when `db` lacks the schema. `shared` is what several
 * handlers of one service have in common (the CLI passes it; an embedder need not).
 */
export function createHandler(
  db: Database,
  credentials: Credentials | readonly Credentials[],
  options?: HandlerOptions,
  shared: SharedParts = {},
): BookingSearchHandler {
  const settings = resolveOptions(options);
  const { mapping } = settings;
  validateDatabase(db, mapping);
  const { metrics } = shared;
  const search = createBookingSearch(
    db,
    mapping,
    metrics === undefined ? undefined : (seconds) => countSearchWait(metrics, seconds),
  );
  return handlerOver(search, credentials, settings, shared);
}

/** What the handler needs of a search: its turns (lib/search/turns.ts). */
export type SearchTurns = Turns<SearchQuery, SearchRows>;

/**
 * For the command (bin/): the handler over a search it made itself, checked on each read
 * transaction or run in another process (bin/guard.ts). `options` and `shared` as
 * createHandler's; `app` and `tables` are the search's business, and ignored here.
 */
export function createHandlerOver(
  search: SearchTurns,
  credentials: Credentials | readonly Credentials[],
  options?: HandlerOptions,
  shared: SharedParts = {},
): BookingSearchHandler {
  return handlerOver(search, credentials, resolveOptions(options), shared);
}

function handlerOver(
  search: SearchTurns,
  credentials: Credentials | readonly Credentials[],
  settings: Settings,
  shared: SharedParts,
): BookingSearchHandler {
  const { cors, trustedPeers: trusted, basePath, onError } = settings;
  const { metrics } = shared;
  const authenticator = createAuthenticator(validateCredentials(credentials), settings, metrics, shared.hashChecks);
  const login = createLogin(authenticator, shared.throttle ?? createThrottle(settings, metrics));
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
      const flood = preflight === undefined ? undefined : login.preflight(throttleKey(clientAddress(req, trusted)));
      if (preflight !== undefined && flood === undefined) return sendNoContent(res, preflight);
      addToEveryResponse(res, cors.responseHeaders(req));
      if (flood !== undefined) return refuse(res, flood);
      if (badRequest) return sendError(res, ERRORS.badRequest, ['Connection', 'close']);
      const facts = recordFacts(
        req,
        clientAddress(req, trusted),
        path === statusPath ? 'status' : path === searchPath ? 'search' : 'other',
      );
      // An IPv6 client counts by its /64 (docs/API.md, Throttling), in the throttle and the queue of searches.
      const client = throttleKey(facts.clientAddress);
      const exchange: Exchange = { req, res, path, query: mark === -1 ? '' : url.slice(mark + 1), facts, client };
      const verdict = login(req.headers.authorization, client, req.socket);
      // A password hash is checked off the event loop: the answer follows in a later turn.
      if (verdict instanceof Promise)
        verdict.then((late) => route(exchange, late)).catch((error) => fail(error, req, res));
      else route(exchange, verdict);
    } catch (error: unknown) {
      fail(error, req, res);
    }
  }

  /** The login's verdict, then path, method and endpoint. */
  function route(exchange: Exchange, verdict: LoginVerdict): void {
    const { req, res, path, facts } = exchange;
    if (verdict.kind !== 'user') {
      // The access log names the user a failed login tried (bin/log.ts escapes it).
      facts.attempted = verdict.attempted;
      return refuse(res, verdict);
    }
    facts.user = facts.attempted = verdict.user;

    if (path !== statusPath && path !== searchPath) return sendError(res, ERRORS.notFound);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, ERRORS.methodNotAllowed, ALLOWED_METHODS);
    }
    // docs/API.md: the status endpoint ignores any query and never touches the database.
    if (path === statusPath) return send(res, 200, statusBody);
    startSearch(exchange);
  }

  /** 401 with the challenge; 429 or 503 with its Retry-After. */
  function refuse(res: ServerResponse, verdict: Exclude<LoginVerdict, { kind: 'user' }>): void {
    if (verdict.kind === 'refused') return sendError(res, ERRORS.unauthorized, challengeHeader);
    const retry = ['Retry-After', String(verdict.retryAfter)];
    if (verdict.kind === 'busy') return sendError(res, ERRORS.busy, retry);
    if (verdict.kind === 'late') return sendError(res, ERRORS.busyTimeout, retry);
    sendError(res, ERRORS.loginThrottled, verdict.close ? [...retry, 'Connection', 'close'] : retry);
  }

  /** Validates the query and answers the search: at once when no other search waits, else in a later turn. */
  function startSearch({ req, res, query, facts, client }: Exchange): void {
    const parsed = parseSearchQuery(query);
    if (!parsed.ok) return sendError(res, badQuery(parsed.message));
    // docs/API.md: only EUR is stored; any other (valid) code matches nothing.
    if (parsed.query.waehrung !== 'EUR') return send(res, 200, EMPTY_RESULT);
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
  /** The client as the throttle and the queue of searches count it: its address, an IPv6 one by its /64. */
  client: string;
}
