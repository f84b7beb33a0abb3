// HTTP Basic authentication (RFC 7617): plain passwords compared in constant time, password
// hashes checked off the event loop, a bounded number at once (docs/API.md, Credentials).

import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConfiguredUser } from './credentials.js';
import { createHashChecks, type HashChecks } from './hash-checks.js';
import type { Metrics } from './metrics.js';
import { dummyHash, type PasswordHash, verifyPassword } from './password-hash.js';

// RFC 7617 §2 / RFC 7235 §2.1: credentials = auth-scheme 1*SP token68, the scheme
// case-insensitive. token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BASIC_CREDENTIALS = /^basic +([A-Za-z0-9._~+/-]+=*) *$/i;
// A longer header is not ours: it cannot hold credentials worth decoding.
const MAX_HEADER_LENGTH = 4096;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `Authorization` header → the credentials in it, or `undefined` when it holds none. */
export function parseBasicAuth(header: string | undefined): GivenCredentials | undefined {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return undefined;
  const match = BASIC_CREDENTIALS.exec(header);
  if (match === null) return undefined;
  let decoded: string;
  try {
    // RFC 7617 §2.1: under charset="UTF-8" user-id and password are compared in Unicode
    // Normalization Form C, so `ü` typed as u + combining diaeresis is the same `ü`.
    decoded = utf8.decode(Buffer.from(match[1] ?? '', 'base64')).normalize('NFC');
  } catch {
    return undefined; // not UTF-8 (RFC 7617 §2.1, charset="UTF-8")
  }
  // RFC 7617 §2: the user-id cannot contain a colon, so split at the first one.
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** A username and password as sent (RFC 7617). */
export interface GivenCredentials {
  username: string;
  password: string;
}
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

/** The verdict on credentials: the user, or why not. */
export type Verdict = Accepted | typeof REJECTED | typeof PENDING | typeof BUSY;
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
  check(given: GivenCredentials, header?: string): Exclude<Verdict, typeof BUSY>;
  /**
   * Checks a hash for credentials `check` called `PENDING`; `done` gets the user, `REJECTED`
   * or `BUSY`. A waiting check whose clients have all `gone` is dropped without an answer.
   */
  verify(given: GivenCredentials, done: (verdict: Settled) => void, gone?: () => boolean, header?: string): void;
  /**
   * The user whose accepted credentials `header` is spelled exactly as before (`check` and
   * `verify` remember the `header` they were given once it is accepted), or `undefined`:
   * then parse it and call `check`. Saves the parsing on a client's later requests.
   * `connection` (the request's socket): when it holds the header of its request before,
   * accepted (`keep`), the same header again is one comparison, not a keyed digest; any
   * other, or none, or new credentials, and it lets go of it.
   */
  recall(header: string | undefined, connection?: object): Accepted | undefined;
  /** `connection` holds `header`, just accepted as `accepted`, until its next request (`recall`). */
  keep(connection: object, header: string | undefined, accepted: Accepted): void;
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
  /** Takes new users; remembered verifications are forgotten. */
  replaceUsers(users: readonly ConfiguredUser[]): void;
}

interface Waiter {
  done: (verdict: Settled) => void;
  /** Whether the client has gone (its connection closed), so that its check can be skipped. */
  gone: () => boolean;
}

const never = (): boolean => false;

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
  /** Verified credentials: SHA-256 of a secret, user and password → the user. Forgotten with these users. */
  verified: Map<string, Accepted>;
  /** Headers that carried verified credentials: SHA-256 of a secret and the header → the user. */
  spellings: Map<string, Accepted>;
  /** Credentials being checked now (the same key) → who waits for the verdict. */
  checking: Map<string, Waiter[]>;
}

/**
 * Builds the check for the configured users. Plain passwords: username and password are
 * hashed to fixed-length digests and compared with `timingSafeEqual` against every user,
 * so the time taken depends neither on their contents nor on which user, or which of the
 * two, is wrong. Hashes (docs/API.md, Credentials): checked on libuv's thread pool, at
 * most `maxHashChecks` at once, at most `maxQueuedHashChecks` waiting. Verified
 * credentials, plain or hashed, are remembered under a hash keyed with a secret of this
 * process, so nothing remembered can be turned back into a password.
 */
export function createAuthenticator(
  initial: readonly ConfiguredUser[],
  limits: AuthenticatorLimits,
  metrics?: Metrics,
  hashChecks: HashChecks = createHashChecks(limits, metrics),
): Authenticator {
  // The memory of verified credentials is keyed by SHA-256(secret ‖ user ‖ ":" ‖ password)
  // with a secret of this process: one-way, and useless for a dictionary made elsewhere.
  // Keyed on what the header means, not its spelling: `basic`, extra spaces or padding
  // cost no second check. (A secret prefix,
  // not HMAC: nobody sees these keys, so length extension does not matter, and Node's
  // one-shot hash is several times cheaper than an Hmac object on every request.)
  const cacheSecret = randomBytes(32).toString('base64');
  let users = prepare(initial);
  // Which users these are, unique in the process: a connection's header held by another
  // authenticator (another book) or under credentials since replaced matches nothing here.
  let usersId = nextUsersId();

  function remembered({ username, password }: GivenCredentials): string {
    // RFC 7617 §2: the username holds no colon, so the first one ends it.
    return oneShotSha256(`${cacheSecret}${username}:${password}`);
  }

  /**
   * The dummy hash an unknown `username` is checked against: always the same one for the
   * same name, chosen by a keyed digest among one per hashed user, so that an unknown user
   * costs what some configured user costs, and which one tells nothing.
   */
  function dummyFor(current: Users, username: string): PasswordHash {
    const pick = createHash('sha256').update(cacheSecret).update(username, 'utf8').digest().readUInt32BE(0);
    return current.dummies[pick % current.dummies.length] as PasswordHash;
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

  function recall(header: string | undefined, connection?: object): Accepted | undefined {
    const held = (connection as Holding | undefined)?.[HELD];
    if (held !== undefined) {
      if (header !== undefined && held.usersId === usersId && sameText(held.header, header)) return held.accepted;
      // Another header, none, or new credentials: the connection lets go of the one it held.
      (connection as Holding)[HELD] = undefined;
    }
    if (header === undefined || header.length > MAX_HEADER_LENGTH) return undefined;
    const accepted = users.spellings.get(oneShotSha256(cacheSecret + header));
    if (accepted !== undefined && connection !== undefined) keep(connection, header, accepted);
    return accepted;
  }

  function keep(connection: object, header: string | undefined, accepted: Accepted): void {
    if (header === undefined || header.length > MAX_HEADER_LENGTH) return;
    (connection as Holding)[HELD] = { header, usersId, accepted };
  }

  function check(given: GivenCredentials, header?: string): Exclude<Verdict, typeof BUSY> {
    const current = users;
    // Credentials verified before are answered from memory: one keyed digest instead of
    // the digests below and, for a hash, a check. A miss tells the sender nothing: only
    // the right credentials are ever remembered.
    const key = remembered(given);
    const known = current.verified.get(key);
    if (known !== undefined) {
      if (header !== undefined) bounded(current.spellings, oneShotSha256(cacheSecret + header), known);
      return known;
    }
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
    if (accepted === -1) return current.dummies.length === 0 ? REJECTED : PENDING;
    const user = current.accepted[accepted] as Accepted;
    remember(current, key, user, header);
    return user;
  }

  function verify(
    given: GivenCredentials,
    done: (verdict: Settled) => void,
    gone: () => boolean = never,
    header?: string,
  ): void {
    const current = users;
    const key = remembered(given);
    // The same credentials already being checked (a client's first requests in parallel): one
    // check answers them all.
    const waiters = current.checking.get(key);
    if (waiters !== undefined) return void waiters.push({ done, gone });
    if (hashChecks.full()) return done(BUSY);
    current.checking.set(key, [{ done, gone }]);
    const index = findUser(current, given.username);
    const own = index === -1 ? undefined : current.hashes[index];
    // An unknown user, or a plain user with a wrong password, costs one check like a wrong password.
    const target = own ?? dummyFor(current, given.username);
    hashChecks.enqueue(() => {
      // Every client that waited for this check has gone: it is not worth a core.
      if ((current.checking.get(key) ?? []).every((waiter) => waiter.gone())) {
        current.checking.delete(key);
        return false;
      }
      verifyPassword(given.password, target, (matches) => {
        hashChecks.finished();
        const answer = current.checking.get(key) ?? [];
        current.checking.delete(key);
        // The credentials changed while this was checked: judge it by the new ones.
        if (current !== users) {
          for (const waiter of answer) retry(given, waiter);
          return;
        }
        const verdict = matches && own !== undefined ? (current.accepted[index] as Accepted) : REJECTED;
        if (verdict.kind === 'user') remember(current, key, verdict, header);
        for (const waiter of answer) waiter.done(verdict);
      });
      return true;
    });
  }

  function retry(given: GivenCredentials, { done, gone }: Waiter): void {
    const verdict = check(given);
    if (verdict.kind === 'pending') verify(given, done, gone);
    else done(verdict);
  }

  function remember(current: Users, key: string, user: Accepted, header: string | undefined): void {
    bounded(current.verified, key, user);
    if (header !== undefined) bounded(current.spellings, oneShotSha256(cacheSecret + header), user);
  }

  /** `map.set(key, value)`, forgetting the oldest entry beyond `maxVerifiedCredentials`. */
  function bounded(map: Map<string, Accepted>, key: string, value: Accepted): void {
    if (map.size >= limits.maxVerifiedCredentials && !map.has(key)) {
      const oldest = map.keys().next();
      if (oldest.done !== true) map.delete(oldest.value);
    }
    map.set(key, value);
  }

  return {
    check,
    verify,
    recall,
    key: remembered,
    checking: (key) => users.checking.has(key),
    keep,
    replaceUsers(next) {
      users = prepare(next);
      usersId = nextUsersId();
    },
  };
}

function prepare(list: readonly ConfiguredUser[]): Users {
  return {
    names: list.map((user) => digest(user.username)),
    passwords: list.map((user) => (user.kind === 'password' ? digest(user.password) : undefined)),
    hashes: list.map((user) => (user.kind === 'hash' ? user.hash : undefined)),
    accepted: list.map((user): Accepted => ({ kind: 'user', user: user.username })),
    dummies: list.flatMap((user) => (user.kind === 'hash' ? [dummyHash(user.hash)] : [])),
    verified: new Map(),
    spellings: new Map(),
    checking: new Map(),
  };
}

// The Authorization header of a connection's latest request, when that request was
// accepted at once (lib/login.ts `admit`: not after a hash check, when the connection may
// have taken its next request meanwhile), on its socket under a symbol of this module,
// until its next request, of this handler or another (lib/handler.ts lets go of it for a
// request of another route). A client
// on a kept-alive connection sends the same header again and again, and then its login is
// one comparison instead of the keyed digest, which was the largest part of a remembered
// client's login (about 1.2 µs of a 20 µs search in-process; BENCHMARKS.md, "Remembered
// credentials"). The header is the password as sent (base64): it is so held while it is
// the connection's latest, as it is while its request is answered, and let go by the
// connection's next request, whatever that carries, or its close (docs/API.md, Credentials).
// Behind a proxy that keeps its connections to the service open, the connection is the
// proxy's, and the header that of the latest request the proxy sent on it. It names the
// users by a number unique in the process, not by the users themselves, so that it keeps
// no old credentials alive, and every authenticator (every book) knows its own.
const HELD = Symbol('booking-search-server header of the latest accepted request');
type Holding = { [HELD]?: { header: string; usersId: number; accepted: Accepted } | undefined };

/**
 * `connection` lets go of the header it holds, for a request that no login sees (a CORS
 * preflight, a path of another route handed to `next`): every request does.
 */
export function letGoOfHeader(connection: object | undefined): void {
  if (connection !== undefined && (connection as Holding)[HELD] !== undefined)
    (connection as Holding)[HELD] = undefined;
}
let usersCount = 0;
const nextUsersId = (): number => {
  usersCount += 1;
  return usersCount;
};

/**
 * Whether `given` is `expected`, in a time that depends on the length of `given` alone: a
 * client learns nothing of the header its connection was accepted with, its length included.
 */
function sameText(expected: string, given: string): boolean {
  // Where `given` is longer, its characters beyond `expected` are compared with the first
  // of `expected`: the answer is no all the same (the lengths differ), after as many steps.
  const length = expected.length;
  let difference = length ^ given.length;
  for (let i = 0; i < given.length; i += 1) {
    difference |= given.charCodeAt(i) ^ expected.charCodeAt(i < length ? i : 0);
  }
  return difference === 0;
}

/**
 * The digest's 32 bytes as a key of 32 characters (`binary`, one character a byte): only
 * ever a Map key, never shown; base64 costs 0.15 µs more a request (a remembered client's
 * login on a new connection is this digest, about 0.45 µs, and a lookup).
 */
function oneShotSha256(text: string): string {
  return hash('sha256', text, 'binary');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The challenge of a 401 (RFC 7617 §2.1). */
export function challenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}", charset="UTF-8"`;
}
