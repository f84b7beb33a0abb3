// createHandler: builds everything once, then answers each request in docs/API.md's order:
//
//   1. outside `{basePath}/api/` with a `next`: handed on untouched;
//   2. a connection with too many answers not yet taken: 429 (lib/respond.ts);
//   3. a bad request (lib/request.ts: a bad Host, two logins, …) or an unusable target: 400;
//   4. a CORS preflight on one of the three paths: 204, before the credentials are looked at
//      (or 429 once its address sent too many requests without them);
//   5. the login in one call (lib/login.ts): 401; 429 (throttle, full hash-check queue); 503;
//   6. path (404), method (405), then /status at once, the search (lib/search-endpoint.ts)
//      or the reconciliation (lib/reconcile/endpoint.ts), whose body is read only now.
//
// The login's hash check and a search that waits for its turn finish in a later turn of the
// event loop; each hop catches its own errors, so that every request ends in one answer.
//
// Several books behind one listener (mountHandlers, at the end): each request goes to the
// handler whose base path its path names (docs/API.md, Books).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from 'better-sqlite3';
import { type Authenticator, createAuthenticator } from './auth.js';
import { basePathMisuse, normalBasePath } from './base-path.js';
import { challenge } from './basic-auth.js';
import { LOGGED_IN, type LoggedIn } from './connection-cap.js';
import { type Cors, GRANTS } from './cors.js';
import { validateCredentials } from './credentials.js';
import { refusalCheck, validateDatabase } from './database-handle.js';
import { ensure } from './errors.js';
import { createFailures } from './failure.js';
import { createLogin, type LoginVerdict, refusal } from './login.js';
import { ERRORS } from './messages.js';
import { resolveOptions, type Settings } from './options.js';
import { createReconcileEndpoint } from './reconcile/endpoint.js';
import {
  clientAddress,
  isBadRequest,
  originForm,
  pathForLog,
  type RequestFacts,
  recordFacts,
  throttleKey,
  UNKNOWN_USER,
} from './request.js';
import { addToEveryResponse, admit, refuseUnanswered, send, sendError, sendNoContent } from './respond.js';
import { createBookingSearch } from './search/index.js';
import { createSearchEndpoint, type SearchTurns } from './search-endpoint.js';
import { ensureShared } from './shared-parts.js';
import { createThrottle } from './throttle.js';
import type {
  BookingSearchHandler,
  HandlerOptions,
  Next,
  RequestHandler,
  SharedParts,
  StatusResult,
  Users,
} from './types.js';

/** The API version reported by `GET {base}/api/v1/status`. */
export const API_VERSION = '1.0';
const ALLOWED_METHODS = ['Allow', 'GET, HEAD'] as const;
const ALLOWED_POST = ['Allow', 'POST'] as const;

/**
 * A node:http request handler for the booking search over `db`. Throws a TypeError naming the argument when
 * `credentials` or `options` are unusable, an Error naming what is missing when `db` lacks the schema. `shared`
 * (createSharedParts): one login throttle and bound on hash checks for several handlers of one service.
 */
export function createHandler(
  db: Database,
  credentials: Users,
  options?: HandlerOptions,
  shared?: SharedParts,
): BookingSearchHandler;
/** @internal `db` a search, the command's for each book (bin/files/book-search.ts); not published (stripInternal). */
export function createHandler(
  db: Database | SearchTurns,
  credentials: Users,
  options?: HandlerOptions,
  shared?: SharedParts,
): BookingSearchHandler;
export function createHandler(
  db: Database | SearchTurns,
  credentials: Users,
  options?: HandlerOptions,
  shared: SharedParts = {},
): BookingSearchHandler {
  const settings = resolveOptions(options);
  ensureShared(options, shared);
  const parts = buildParts(searchOver(db, settings, shared), credentials, settings, shared);
  function handleBookingSearch(req: IncomingMessage, res: ServerResponse, next?: Next): void {
    answer(parts, req, res, next);
  }
  basePaths.set(handleBookingSearch, settings.basePath);
  return Object.assign(handleBookingSearch, {
    updateCredentials(next: Users): void {
      parts.login.replaceUsers(validateCredentials(next));
    },
  });
}

/** The search `db` is, or the one over it once it is checked (lib/database-handle.ts). */
function searchOver(db: Database | SearchTurns, settings: Settings, shared: SharedParts): SearchTurns {
  if (isSearch(db)) return db;
  validateDatabase(db, settings.mapping);
  const { metrics } = shared;
  const waited = metrics && ((seconds: number) => metrics.countSearchWait(seconds));
  return createBookingSearch(db, settings.mapping, waited, refusalCheck(db, settings.mapping));
}

/** A search (an object, or a function as createBookingSearch's) has turns and no statements to prepare. */
function isSearch(db: unknown): db is SearchTurns {
  if ((typeof db !== 'object' && typeof db !== 'function') || db === null || 'prepare' in db) return false;
  const search = db as Partial<Record<keyof SearchTurns, unknown>>;
  return typeof search.answer === 'function' && typeof search.waitingFrom === 'function';
}

/** The base path of each handler createHandler made, which mountHandlers holds its mount to. */
const basePaths = new WeakMap<RequestHandler, string>();

/** The check shared by the handlers that pass one `logins` object (SharedParts). */
const authenticators = new WeakMap<object, Authenticator>();

/** What a handler builds once: its endpoints, its login and the paths it answers. */
type Parts = ReturnType<typeof buildParts>;

function buildParts(search: SearchTurns, credentials: Users, settings: Settings, shared: SharedParts) {
  const { basePath } = settings;
  const failures = createFailures(settings.onError);
  const users = validateCredentials(credentials);
  const { logins } = shared;
  const authenticator =
    (logins && authenticators.get(logins)) ?? createAuthenticator(users, settings, shared.metrics, shared.hashChecks);
  if (logins !== undefined) {
    // This handler's users hold from now on; the same as before, what was verified stays.
    authenticator.replaceUsers(users);
    authenticators.set(logins, authenticator);
  }
  return {
    cors: settings.cors,
    trusted: settings.trustedPeers,
    failures,
    answerSearch: createSearchEndpoint(search, settings, failures),
    answerReconcile: createReconcileEndpoint(search, settings, failures),
    login: createLogin(
      authenticator,
      shared.throttle ?? createThrottle(settings, shared.metrics),
      settings.maxVerifiedCredentials,
    ),
    apiPrefix: `${basePath}/api/`,
    statusPath: `${basePath}/api/v1/status`,
    searchPath: `${basePath}/api/v1/buchungen`,
    reconcilePath: `${basePath}/api/v1/abgleich`,
    statusBody: JSON.stringify({ name: settings.serviceName, version: API_VERSION } satisfies StatusResult),
    challengeHeader: ['WWW-Authenticate', challenge(settings.serviceName)] as const,
    /** A name a failed login tried, as the facts hold it: any other than a user's may be a password. */
    shown: (name: string) => (authenticator.isUser(name) ? name : UNKNOWN_USER),
  };
}

/** One request, up to the login's verdict (steps 1 to 5 above). */
function answer(parts: Parts, req: IncomingMessage, res: ServerResponse, next?: Next): void {
  const { cors, trusted, failures, login, apiPrefix, statusPath, searchPath, reconcilePath, challengeHeader } = parts;
  const target = req.url ?? '/';
  const url = originForm(target) ?? '';
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  // A target with a user and password (no url) is ours by its path too: its 400, never next().
  if (next !== undefined && !(url === '' ? pathForLog(target) : path).startsWith(apiPrefix)) return next();
  const admission = admit(req, res);
  if (admission === 'drop') return;
  const endpoint =
    path === statusPath ? 'status' : path === searchPath ? 'search' : path === reconcilePath ? 'abgleich' : 'other';
  try {
    if (admission === 'refuse') {
      recordFacts(req, clientAddress(req, trusted), endpoint, path);
      addToEveryResponse(res, corsHeaders(cors, req));
      return refuseUnanswered(res);
    }
    const badRequest = isBadRequest(req) || url === '';
    // docs/API.md, CORS: a preflight has headers of its own (and counts as a request without
    // credentials); every other answer carries the CORS response headers.
    const grant =
      path === reconcilePath ? GRANTS.post : path === statusPath || path === searchPath ? GRANTS.read : undefined;
    const preflight =
      !badRequest && grant !== undefined && req.method === 'OPTIONS' ? cors.preflight(req, grant) : undefined;
    const flood = preflight === undefined ? undefined : login.preflight(throttleKey(clientAddress(req, trusted)));
    if (preflight !== undefined && flood === undefined) return sendNoContent(res, preflight);
    addToEveryResponse(res, corsHeaders(cors, req));
    if (flood !== undefined) return sendError(res, ...refusal(flood, challengeHeader));
    if (badRequest) return sendError(res, ERRORS.badRequest);
    const facts = recordFacts(req, clientAddress(req, trusted), endpoint, path);
    const client = throttleKey(facts.clientAddress);
    const exchange: Exchange = { req, res, path, query: mark === -1 ? '' : url.slice(mark + 1), facts, client };
    const verdict = login(req.headers.authorization, client, req.socket);
    // A password hash is checked off the event loop: the answer follows in a later turn.
    if (verdict instanceof Promise)
      verdict.then((late) => route(parts, exchange, late)).catch((error) => failures.fail(error, req, res));
    else route(parts, exchange, verdict);
  } catch (error: unknown) {
    failures.fail(error, req, res);
  }
}

/** The CORS headers of every answer to `req` but a preflight's; without `Origin`, the same for each. */
function corsHeaders(cors: Cors, req: IncomingMessage): readonly string[] {
  return req.headers.origin === undefined ? cors.withoutOrigin : cors.responseHeaders(req);
}

/** The login's verdict, then path, method and endpoint. */
function route(parts: Parts, exchange: Exchange, verdict: LoginVerdict): void {
  const { statusPath, searchPath, reconcilePath } = parts;
  const { req, res, path, facts } = exchange;
  if (verdict.kind !== 'user') {
    // The access log names the user a failed login tried (bin/base/log.ts escapes it), if one of ours.
    facts.attempted = verdict.attempted === undefined ? undefined : parts.shown(verdict.attempted);
    return sendError(res, ...refusal(verdict, parts.challengeHeader));
  }
  facts.user = facts.attempted = verdict.user;
  (req.socket as typeof req.socket & LoggedIn)[LOGGED_IN] = verdict.user;
  if (path === reconcilePath) {
    if (req.method !== 'POST') return sendError(res, ERRORS.methodNotAllowed, ALLOWED_POST);
    return parts.answerReconcile(req, res, exchange.query, verdict.user, exchange.client);
  }
  if (path !== statusPath && path !== searchPath) return sendError(res, ERRORS.notFound);
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, ERRORS.methodNotAllowed, ALLOWED_METHODS);
  // docs/API.md: the status endpoint ignores any query and never touches the database.
  if (path === statusPath) return send(res, 200, parts.statusBody);
  parts.answerSearch(req, res, exchange.query, verdict.user, exchange.client);
}

/**
 * One request on its way: its target's path as sent and raw query (without `?`), what a log
 * may show (`facts`), the client as the throttle and the queue count it (an IPv6 one by /64).
 */
type Exchange = {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: string;
  facts: RequestFacts;
  client: string;
};

// Several books: createHandler serves one book; mountHandlers only chooses which.
//
// A path names a book when it starts with `{basePath}/api/`, the part createHandler owns
// (with a `next`, it hands on everything else); the longest base path wins, so `/a/b` is
// not taken by `/a`. A path that names no book goes to `next` when there is one, and to
// `fallback` when not: the handler that authenticates, as every answer must before it
// says a path does not exist, and then answers 404.

const API = '/api/';

/** One book's handler and the base path it was created with. */
export interface Mount {
  /** The handler's `basePath` option, e.g. `"/mueller"`; a trailing slash is ignored. */
  readonly basePath: string;
  readonly handler: RequestHandler;
}

/**
 * A request handler that passes each request to the mount its path names; one that names
 * none to `next` where it is given (Express), else to `fallback`. Throws a TypeError naming
 * the mount when a base path is not one, is given twice or is not the one createHandler made
 * its handler with.
 */
export function mountHandlers(mounts: readonly Mount[], fallback: RequestHandler): RequestHandler {
  ensure(Array.isArray(mounts), 'mounts must be an array of { basePath, handler }');
  ensure(typeof fallback === 'function', 'fallback must be a request handler');
  const prefixes = new Map<string, RequestHandler>();
  mounts.forEach((mount, index) => {
    const basePath = normalBasePath(mount?.basePath);
    ensure(basePath !== undefined, basePathMisuse(`mounts[${index}].basePath`, mount?.basePath));
    ensure(typeof mount.handler === 'function', `mounts[${index}].handler must be a request handler`);
    const own = basePaths.get(mount.handler) ?? basePath;
    ensure(own === basePath, `mounts[${index}].basePath "${basePath}" is not its handler's basePath "${own}"`);
    const prefix = `${basePath}${API}`;
    ensure(!prefixes.has(prefix), `mounts[${index}].basePath "${basePath}" is given twice`);
    prefixes.set(prefix, mount.handler);
  });
  const longest = Math.max(0, ...[...prefixes.keys()].map((prefix) => prefix.length));
  return (req, res, next?: Next) => {
    // An unusable target (user info in an absolute-form authority) is the fallback's 400.
    const path = originForm(req.url ?? '/');
    if (path !== undefined) {
      // A book's prefix ends with "/api/": the path up to the end of each "/api/" in it,
      // the longest first, is looked up, instead of trying every book's prefix in turn,
      // which a request of a service of 100 books paid for (BENCHMARKS.md, "Small costs").
      // Only where a prefix can end: a target of a thousand "/api/" costs no more than one.
      const from = path.lastIndexOf(API, longest - API.length);
      for (let at = from; at !== -1; at = at === 0 ? -1 : path.lastIndexOf(API, at - 1)) {
        const handler = prefixes.get(path.slice(0, at + API.length));
        if (handler !== undefined) return handler(req, res, next);
      }
    }
    if (next !== undefined && path !== undefined) return next();
    fallback(req, res);
  };
}
