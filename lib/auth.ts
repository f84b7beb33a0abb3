// HTTP Basic authentication (RFC 7617): plain passwords compared in constant time, password
// hashes checked off the event loop, a bounded number at once (docs/API.md, Credentials).

import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type GivenCredentials, plainHeaders } from './basic-auth.js';
import { type ConfiguredUser, secretOf } from './credentials.js';
import { createHashChecks, type HashChecks } from './hash-checks.js';
import type { Metrics } from './metrics.js';
import { dummyHash, type PasswordHash, verifyPassword } from './password-hash.js';

/** Accepted credentials: the user they name (one object per configured user, never copied). */
export interface Accepted {
  readonly kind: 'user';
  readonly user: string;
}
/** Well-formed Basic credentials that do not match: a failed authentication. */
export const REJECTED = Object.freeze({ kind: 'rejected' } as const);
/** A password hash must be checked: call `verify`. */
export const PENDING = Object.freeze({ kind: 'pending' } as const);
/** Too many hash checks wait already: answered without a check. */
export const BUSY = Object.freeze({ kind: 'busy' } as const);
/** The check never began: the service stops (lib/hash-checks.ts, `stop`), or its clients all left. */
export const STOPPING = Object.freeze({ kind: 'stopping' } as const);

/** The verdict on credentials: the user, or why not. */
export type Verdict = Accepted | typeof REJECTED | typeof PENDING | typeof BUSY | typeof STOPPING;
/** A verdict after the hash check: never `PENDING`. */
export type Settled = Exclude<Verdict, typeof PENDING>;

export interface AuthenticatorLimits {
  maxHashChecks: number;
  maxQueuedHashChecks: number;
  maxVerifiedCredentials: number;
}

export interface Authenticator {
  /**
   * The verdict without waiting: the user, when a plain password or a remembered
   * verification matches; `REJECTED` or, when a hash must be checked, `PENDING`.
   */
  check(given: GivenCredentials): Exclude<Verdict, typeof BUSY | typeof STOPPING>;
  /**
   * Checks a hash for credentials `check` called `PENDING`; `done` gets the user, `REJECTED`,
   * `BUSY`, or `STOPPING` when the checks stopped, or its clients had all `gone`, before it began.
   */
  verify(given: GivenCredentials, done: (verdict: Settled) => void, gone?: () => boolean): void;
  /**
   * The credentials `given` as a key: what they mean, not how the header spells them,
   * digested with a secret of this process, so that it cannot be turned back into the
   * password. `checking` takes it.
   */
  key(given: GivenCredentials): string;
  /**
   * Whether a hash check of the credentials `key` names is queued or running now: `verify`
   * with them joins it, and answers with its verdict.
   */
  checking(key: string): boolean;
  /** Each plain user's own header (basic-auth.ts, `plainHeaders`: why a lookup is constant time) → the user. */
  readonly headers: ReadonlyMap<string, Accepted>;
  /** Whether `username` is one of the users (every name compared, as a check does). */
  isUser(username: string): boolean;
  /** Takes new users; a remembered verification stays while its user keeps name and secret. */
  replaceUsers(users: readonly ConfiguredUser[]): void;
}

interface Waiter {
  done: (verdict: Settled) => void;
  /** Whether the client has gone (its connection closed), so that its check can be skipped. */
  gone: () => boolean;
}

interface Users {
  /** SHA-256 of each username, in the order configured. */
  names: Buffer[];
  /** SHA-256 of each plain password; `undefined` for a hashed user. */
  passwords: Array<Buffer | undefined>;
  hashes: Array<PasswordHash | undefined>;
  /** The verdict that accepts each user. */
  accepted: Accepted[];
  /**
   * One hash with each hashed user's parameters that no password matches: an unknown user,
   * or a plain user's wrong password, is checked against one of them (empty: no hashes).
   */
  dummies: PasswordHash[];
  /** Each user's name and secret, keyed-digested: the same users again, or a user kept as it was. */
  secrets: string[];
  /** Verified credentials (keyed digest of user and password) → the user; kept for a user whose secret stays. */
  verified: Map<string, Accepted>;
  /** Credentials being checked now (the same key) → who waits for the verdict. */
  checking: Map<string, Waiter[]>;
}

/**
 * Builds the check for the configured users. Plain passwords: username and password are
 * hashed to fixed-length digests and compared with `timingSafeEqual` against every user,
 * so the time taken depends neither on their contents nor on which user, or which of the
 * two, is wrong. Hashes (docs/API.md, Credentials): checked on libuv's thread pool, at
 * most `maxHashChecks` at once, at most `maxQueuedHashChecks` waiting.
 */
export function createAuthenticator(
  initial: readonly ConfiguredUser[],
  limits: AuthenticatorLimits,
  metrics?: Metrics,
  hashChecks: HashChecks = createHashChecks(limits, metrics),
): Authenticator {
  // The memory of verified credentials is keyed by keyedDigest(user ‖ ":" ‖ password): keyed
  // on what the header means, so `basic`, extra spaces or padding cost no second check.
  const secret = randomBytes(32).toString('base64');
  const state: State = {
    secret,
    users: prepare(initial, secret),
    maxRemembered: limits.maxVerifiedCredentials,
    hashChecks,
  };
  const headers = fillHeaders(new Map(), initial, state.users);
  return {
    check: (given) => check(state, given),
    verify: (given, done, gone) => verify(state, given, done, gone),
    key: (given) => remembered(state, given),
    checking: (key) => state.users.checking.has(key),
    headers,
    isUser: (username) => findUser(state.users, username) !== -1,
    replaceUsers(next) {
      const users = prepare(next, secret);
      if (users.secrets.join() === state.users.secrets.join()) return;
      keepVerified(state.users, users);
      state.users = users;
      fillHeaders(headers, next, users);
    },
  };
}

/** An authenticator's own: its secret, its current users, and its bounds. */
interface State {
  readonly secret: string;
  users: Users;
  readonly maxRemembered: number;
  readonly hashChecks: HashChecks;
}

function remembered(state: State, { username, password }: GivenCredentials): string {
  // RFC 7617 §2: the username holds no colon, so the first one ends it.
  return keyedDigest(state.secret, `${username}:${password}`);
}

function check(state: State, given: GivenCredentials): Exclude<Verdict, typeof BUSY | typeof STOPPING> {
  const current = state.users;
  // Credentials verified before are answered from memory (only right ones are ever
  // remembered, so a miss tells the sender nothing), without the digests below or a check.
  const key = remembered(state, given);
  const known = current.verified.get(key);
  if (known !== undefined) return known;
  const accepted = plainMatch(current, given);
  if (accepted === -1) return current.dummies.length === 0 ? REJECTED : PENDING;
  const user = current.accepted[accepted] as Accepted;
  bounded(current.verified, key, user, state.maxRemembered);
  return user;
}

function verify(
  state: State,
  given: GivenCredentials,
  done: (verdict: Settled) => void,
  gone: () => boolean = () => false,
): void {
  const { hashChecks } = state;
  const current = state.users;
  const key = remembered(state, given);
  // The same credentials already being checked (a client's first requests in parallel): one
  // check answers them all.
  const waiters = current.checking.get(key);
  if (waiters !== undefined) return void waiters.push({ done, gone });
  if (hashChecks.full()) return done(BUSY);
  current.checking.set(key, [{ done, gone }]);
  const index = findUser(current, given.username);
  const own = index === -1 ? undefined : current.hashes[index];
  // An unknown user, or a plain user with a wrong password, costs one check like a wrong password.
  const target = own ?? dummyFor(current, state.secret, given.username);
  hashChecks.enqueue(() => {
    // Every client that waited for this check has gone: not worth a core; each hears it never ran.
    if ((current.checking.get(key) ?? []).every((waiter) => waiter.gone())) {
      giveUp();
      return false;
    }
    verifyPassword(given.password, target, (matches) => {
      hashChecks.finished();
      const answer = current.checking.get(key) ?? [];
      current.checking.delete(key);
      // The credentials changed while this was checked: judge it by the new ones.
      if (current !== state.users) {
        for (const waiter of answer) retry(state, given, waiter);
        return;
      }
      const verdict = matches && own !== undefined ? (current.accepted[index] as Accepted) : REJECTED;
      if (verdict.kind === 'user') bounded(current.verified, key, verdict, state.maxRemembered);
      for (const waiter of answer) waiter.done(verdict);
    });
    return true;
  }, giveUp);

  function giveUp(): void {
    const answer = current.checking.get(key) ?? [];
    current.checking.delete(key);
    for (const waiter of answer) waiter.done(STOPPING);
  }
}

function retry(state: State, given: GivenCredentials, { done, gone }: Waiter): void {
  const verdict = check(state, given);
  if (verdict.kind === 'pending') verify(state, given, done, gone);
  else done(verdict);
}

function prepare(list: readonly ConfiguredUser[], secret: string): Users {
  return {
    names: list.map((user) => digest(user.username)),
    passwords: list.map((user) => (user.kind === 'password' ? digest(user.password) : undefined)),
    hashes: list.map((user) => (user.kind === 'hash' ? user.hash : undefined)),
    accepted: list.map((user): Accepted => ({ kind: 'user', user: user.username })),
    dummies: list.flatMap((user) => (user.kind === 'hash' ? [dummyHash(user.hash)] : [])),
    secrets: list.map((user) => keyedDigest(secret, JSON.stringify(secretOf(user)))),
    verified: new Map(),
    checking: new Map(),
  };
}

/** What `from` verified of the users `to` keeps as they were: a user added or changed costs the others no new check. */
function keepVerified(from: Users, to: Users): void {
  const kept = new Map(to.accepted.map((accepted, i) => [to.secrets[i], accepted]));
  for (const [key, accepted] of from.verified) {
    const now = kept.get(from.secrets[from.accepted.indexOf(accepted)]);
    if (now !== undefined) to.verified.set(key, now);
  }
}

/** `headers` holding each plain user of `list` by its own header, as `users` accepts it. */
function fillHeaders(headers: Map<string, Accepted>, list: readonly ConfiguredUser[], users: Users): typeof headers {
  headers.clear();
  for (const [header, i] of plainHeaders(list)) headers.set(header, users.accepted[i] as Accepted);
  return headers;
}

/** The index of the user whose name matches, or -1; every user is compared. */
function findUser(current: Users, username: string): number {
  const given = digest(username);
  let found = -1;
  for (let i = 0; i < current.names.length; i += 1) {
    // No early exit: every configured name is compared, whichever matches.
    if (timingSafeEqual(given, current.names[i] as Buffer)) found = i;
  }
  return found;
}

/** The plain user whose name and password `given` are, or -1; every user compared, both parts. */
function plainMatch(current: Users, given: GivenCredentials): number {
  const name = digest(given.username);
  const password = digest(given.password);
  let accepted = -1;
  for (let i = 0; i < current.names.length; i += 1) {
    const expected = current.passwords[i];
    const userMatches = timingSafeEqual(name, current.names[i] as Buffer);
    // A hashed user is compared against its own name digest, so that it costs the same.
    const passwordMatches = timingSafeEqual(password, expected ?? (current.names[i] as Buffer));
    // `&`, not `&&`: no early return on the user.
    if ((Number(userMatches) & Number(passwordMatches) & Number(expected !== undefined)) === 1) accepted = i;
  }
  return accepted;
}

/**
 * The dummy hash an unknown `username` is checked against: always the same one for the
 * same name, chosen by a digest keyed with `secret` among one per hashed user, so that an
 * unknown user costs what some configured user costs, and which one tells nothing.
 */
function dummyFor(current: Users, secret: string, username: string): PasswordHash {
  const pick = createHash('sha256').update(secret).update(username, 'utf8').digest().readUInt32BE(0);
  return current.dummies[pick % current.dummies.length] as PasswordHash;
}

/** `map.set(key, value)`, forgetting the oldest entry beyond `max`. */
export function bounded(map: Map<string, Accepted>, key: string, value: Accepted, max: number): void {
  if (map.size >= max && !map.has(key)) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
  map.set(key, value);
}

/**
 * `text` digested after `secret` (random, of this process): one-way, useless for a dictionary
 * made elsewhere; 32 bytes as a Map key (`binary`), never shown.
 */
export function keyedDigest(secret: string, text: string): string {
  return hash('sha256', secret + text, 'binary');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
