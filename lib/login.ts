// A login in one call (docs/API.md, Authentication and Throttling): the `Authorization`
// header, the client and its connection in, a tagged verdict out. The throttle and the
// authenticator are asked here, in the contract's order, and nowhere else.
//
// The policy, in the order it is applied:
//   1. no credentials (none, another scheme, malformed): 401 with the challenge, not a failure,
//      whatever the address's failures (a client that waits for the challenge before it sends its
//      credentials, a known one among them, must be asked); a flood of them from one address: 429;
//   2. an address whose failures are spent: 429 before its credentials are checked, but for
//      a user who logged in from it before: that user's own failures from there decide;
//   3. a plain user's own header, or one spelled as one accepted before, from an address where
//      that user logged in before: that user, no parsing; from elsewhere as in 4-5 (so that,
//      with --workers, a primary that does not answer refuses it as it refuses a wrong one);
//   4. the username's or the global budget spent: only a client that logged in from this
//      address before is checked, everyone else 429 until the window ends;
//   5. credentials are checked with a failure counted (decided and counted in one step of
//      the throttle, so that parallel guesses, on any worker, see it): wrong ones confirm it
//      (401); right ones take it back, and are the user, a known client from now on; while
//      pending, it blocks only until the check could have come (the 429's Retry-After);
//   6. a password hash is checked so too, off the event loop; a check that never ran takes
//      the failure back as well. Requests with the same credentials meanwhile join that
//      check: one guess is one failure, however many requests carry it. A request gets its
//      answer before its connection could time out: 503 when the check has not come by then.

import { hash, randomBytes } from 'node:crypto';
import { type Accepted, type Authenticator, bounded } from './auth.js';
import { type GivenCredentials, parseBasicAuth } from './basic-auth.js';
import { type ConfiguredUser, MAX_HEADER_LENGTH } from './credentials.js';
import { type Connection, hashWaitMs } from './hash-checks.js';
import { type ApiError, ERRORS } from './messages.js';
import { DEFAULTS } from './options.js';
import type { Throttle } from './throttle.js';

/** Why a login did not give a user: the username the credentials named, if they were well-formed Basic ones. */
interface NoUser {
  /** As the client sent it (untrusted: escape it for a log line). */
  readonly attempted?: string;
}

/** What a login comes to, and so the answer: the user, or the error to send. */
export type LoginVerdict =
  /** Accepted credentials: the user. */
  | Accepted
  /** No credentials, or wrong ones: 401 with the challenge, the same for every cause. */
  | (NoUser & { readonly kind: 'refused' })
  /** The throttle: 429 after `retryAfter` seconds, and the connection ends, so that a pipelined flood ends with it. */
  | (NoUser & { readonly kind: 'throttled'; readonly retryAfter: number })
  /** Too many hash checks waiting: 429 after `retryAfter` seconds; the client did nothing wrong. */
  | (NoUser & { readonly kind: 'busy'; readonly retryAfter: number })
  /** The hash check did not come before the connection could time out: 503 after `retryAfter` seconds. */
  | (NoUser & { readonly kind: 'late'; readonly retryAfter: number });

/** What a request that reserved a failure found, for those with the same credentials; `undefined`: a hash check (they join it). */
type Settled = LoginVerdict | { kind: 'throttled-at'; client: string; verdict: Throttled } | undefined;

/** A verdict that lets no user in. */
export type Refusal = Exclude<LoginVerdict, Accepted>;

/**
 * The error a refusal is answered with, and its headers: the 401 with `challenge` (the realm's
 * `WWW-Authenticate`), a 429 or 503 with its `Retry-After` (the throttle's closes: lib/messages.ts).
 */
export function refusal(verdict: Refusal, challenge: readonly string[]): [ApiError, readonly string[]] {
  if (verdict.kind === 'refused') return [ERRORS.unauthorized, challenge];
  const retry = ['Retry-After', String(verdict.retryAfter)];
  if (verdict.kind === 'busy') return [ERRORS.busy, retry];
  if (verdict.kind === 'late') return [ERRORS.busyTimeout, retry];
  return [ERRORS.loginThrottled, retry];
}

/** The throttle's answer: 429, and end the connection. */
export type Throttled = Extract<LoginVerdict, { kind: 'throttled' }>;

/** A login of well-formed credentials (steps 4 to 6); its header is remembered once accepted. */
interface Attempt {
  readonly given: GivenCredentials;
  readonly header: string | undefined;
  readonly client: string;
  readonly connection: Connection;
}

export interface Login {
  /**
   * The verdict on `header` from `client` (its address as the throttle counts it: an IPv6
   * address by its /64). At once, except where a password hash is checked: then a promise,
   * which stays pending when every client waiting for that check has gone.
   */
  (header: string | undefined, client: string, connection: Connection): LoginVerdict | Promise<LoginVerdict>;
  /** A CORS preflight from `client`: no failed login, counted with requests without credentials; `undefined`: answer it. */
  preflight(client: string): Throttled | undefined;
  /** Takes new users (the authenticator's); the headers accepted before are forgotten. */
  replaceUsers(users: readonly ConfiguredUser[]): void;
}

const REFUSED: LoginVerdict = Object.freeze({ kind: 'refused' });

/**
 * The login over `authenticator` (who the credentials name) and `throttle` (how many
 * failures each address, username and the service may have), one throttle for several
 * logins; at most `maxRemembered` headers accepted before are remembered by their spelling.
 */
export function createLogin(
  authenticator: Authenticator,
  throttle: Throttle,
  maxRemembered: number = DEFAULTS.maxVerifiedCredentials,
): Login {
  const secret = randomBytes(32).toString('base64'); // of the headers' digests (spelling)
  const parts: Parts = { authenticator, throttle, reserving: new Map(), spellings: new Map(), secret, maxRemembered };
  return Object.assign(
    (header: string | undefined, client: string, connection: Connection) => login(parts, header, client, connection),
    {
      preflight(client: string): Throttled | undefined {
        const wait = throttle.recordUnauthenticated(client);
        return wait > 0 ? throttled(wait, undefined) : undefined;
      },
      replaceUsers(users: readonly ConfiguredUser[]): void {
        authenticator.replaceUsers(users);
        parts.spellings.clear();
      },
    },
  );
}

/** What a login asks, and the logins under way. */
interface Parts {
  readonly authenticator: Authenticator;
  readonly throttle: Throttle;
  /**
   * Credentials whose failure the throttle is reserving now, by `authenticator.key`: the outcome that
   * requests with the same ones wait for. Only a throttle that answers later (--workers) leaves any.
   */
  readonly reserving: Map<string, Promise<Settled>>;
  /** Headers that carried accepted credentials (step 3) by their `spelling`: no password is kept. */
  readonly spellings: Map<string, Accepted>;
  readonly secret: string;
  readonly maxRemembered: number;
}

function login(
  parts: Parts,
  header: string | undefined,
  client: string,
  connection: Connection,
): LoginVerdict | Promise<LoginVerdict> {
  // Step 3: a plain user's own header, or one accepted before, spelled exactly so.
  const recalled =
    header === undefined || header.length > MAX_HEADER_LENGTH
      ? undefined
      : (parts.authenticator.headers.get(header) ?? parts.spellings.get(spelling(parts, header)));
  const given = recalled === undefined ? parseBasicAuth(header) : undefined;
  if (recalled === undefined && given === undefined) {
    const wait = parts.throttle.recordUnauthenticated(client);
    return wait > 0 ? throttled(wait, undefined) : REFUSED;
  }
  // The username only decides for a user who logged in from this address before.
  const blocked = parts.throttle.retryAfter(client, recalled?.user ?? given?.username);
  if (blocked > 0) return throttled(blocked, undefined);
  // Nothing to decide for a known client (the budgets let it through); anyone else is checked.
  if (recalled !== undefined && parts.throttle.isKnown(recalled.user, client)) return letIn(parts, recalled, client);
  const credentials = given ?? parseBasicAuth(header);
  if (credentials === undefined) return REFUSED;
  return attempt(parts, { given: credentials, header, client, connection });
}

/** Steps 4 to 6 for well-formed credentials. */
function attempt(parts: Parts, request: Attempt): LoginVerdict | Promise<LoginVerdict> {
  const { given, client } = request;
  const attempted = given.username;
  // One guess is one failure, however many requests carry it: credentials whose failure is
  // being reserved, or whose hash is being checked, right now (a client's first requests in
  // parallel, or a flood of one wrong password) are not counted again; the request waits for
  // that check, once the budgets let it in, and takes back nothing when it accepts.
  const key = parts.authenticator.key(given);
  const outcome = parts.reserving.get(key);
  if (outcome !== undefined || parts.authenticator.checking(key)) {
    const wait = parts.throttle.budgetRetryAfter(attempted, client);
    if (wait > 0) return throttled(wait, attempted);
    if (outcome === undefined) return awaitCheck(parts, request, false);
    return outcome.then((settled) => joined(parts, settled, key, request));
  }
  // The budgets decide, and a failure is counted while the credentials are checked, in one
  // step of the throttle; with --workers that step is the primary's, asked over IPC here
  // only, where a hash check or a guess is on its way anyway.
  const reserved = parts.throttle.reserve(attempted, client);
  if (typeof reserved === 'number') {
    if (reserved > 0) return throttled(reserved, attempted);
    return checkCredentials(parts, request);
  }
  let release: (settled: Settled) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const shared = new Promise<Settled>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  // Nobody may have joined: a failed reservation is answered through the request that made it.
  shared.catch(() => {});
  parts.reserving.set(key, shared);
  return reserved.then(
    (wait) => {
      let settled: Settled;
      try {
        if (wait > 0) {
          settled = { kind: 'throttled-at', client, verdict: throttled(wait, attempted) };
          return settled.verdict;
        }
        const verdict = checkCredentials(parts, request);
        // A hash check is joined through the authenticator from now on; a verdict at once is passed on.
        if (!(verdict instanceof Promise)) settled = verdict;
        return verdict;
      } finally {
        parts.reserving.delete(key);
        release(settled);
      }
    },
    (error: unknown) => {
      parts.reserving.delete(key);
      fail(error);
      throw error;
    },
  );
}

/**
 * Another request reserved a failure for the same credentials: join its check or take its verdict,
 * its throttling only at the same address (one wait; elsewhere the budgets differ: a known client's).
 */
function joined(parts: Parts, settled: Settled, key: string, request: Attempt): LoginVerdict | Promise<LoginVerdict> {
  if (parts.authenticator.checking(key)) return awaitCheck(parts, request, false);
  if (settled?.kind === 'user') return letIn(parts, settled, request.client);
  if (settled?.kind === 'refused') return { kind: 'refused', attempted: request.given.username };
  if (settled?.kind === 'throttled-at' && settled.client === request.client) return settled.verdict;
  return attempt(parts, request);
}

/**
 * Credentials checked with a failure counted: it stays for wrong ones, and is taken back
 * for right ones or a check that never ran.
 */
function checkCredentials(parts: Parts, request: Attempt): LoginVerdict | Promise<LoginVerdict> {
  const { given, header, client } = request;
  const attempted = given.username;
  const verdict = parts.authenticator.check(given);
  if (verdict.kind === 'pending') return awaitCheck(parts, request, true);
  parts.throttle[verdict.kind === 'rejected' ? 'confirm' : 'forgive'](client, attempted);
  return verdict.kind === 'user' ? letIn(parts, verdict, client, header) : { kind: 'refused', attempted };
}

/**
 * The verdict of a password-hash check, started or joined; `reserved`: this request
 * counted a failure for it, which is taken back unless the credentials are wrong.
 */
function awaitCheck(parts: Parts, request: Attempt, reserved: boolean): Promise<LoginVerdict> {
  const { given, header, client, connection } = request;
  const attempted = given.username;
  return new Promise<LoginVerdict>((resolve, reject) => {
    // Every request gets an answer (docs/API.md, Credentials): one whose check has not come
    // by the deadline is answered 503 with Retry-After, and its place in the queue given up.
    let answered = false;
    const deadline = setTimeout(() => {
      answered = true;
      resolve({ kind: 'late', retryAfter: 1, attempted });
    }, hashWaitMs(connection));
    parts.authenticator.verify(
      given,
      (late) => {
        clearTimeout(deadline);
        try {
          if (reserved) parts.throttle[late.kind === 'rejected' ? 'confirm' : 'forgive'](client, attempted);
          if (answered) return;
          if (late.kind === 'user') return resolve(letIn(parts, late, client, header));
          // The check never ran (the service stops, or every client left): as one not come in time.
          if (late.kind === 'stopping') return resolve({ kind: 'late', retryAfter: 1, attempted });
          // docs/API.md, Credentials: a full hash-check queue says "again in a second".
          resolve(late.kind === 'busy' ? { kind: 'busy', retryAfter: 1, attempted } : { kind: 'refused', attempted });
        } catch (error: unknown) {
          reject(error);
        }
      },
      () => answered || connection.destroyed,
    );
  });
}

/** `accepted` let in: a success for the throttle; the `header` that carried it, if given, remembered. */
function letIn(parts: Parts, accepted: Accepted, client: string, header?: string): Accepted {
  parts.throttle.recordSuccess(client, accepted.user);
  if (header !== undefined) bounded(parts.spellings, spelling(parts, header), accepted, parts.maxRemembered);
  return accepted;
}

/** A header as the login remembers it: digested after the login's secret, by the rule of auth.ts's keyedDigest. */
function spelling(parts: Parts, header: string): string {
  return hash('sha256', parts.secret + header, 'binary');
}

function throttled(retryAfter: number, attempted: string | undefined): Throttled {
  return attempted === undefined ? { kind: 'throttled', retryAfter } : { kind: 'throttled', retryAfter, attempted };
}
