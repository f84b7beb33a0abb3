// The `credentials` argument of createHandler (docs/API.md, Credentials): one credential or
// a list, each with a plain password or a scrypt hash. Checked here once, for the library
// and the command alike: `checkCredentials` says which entry is wrong and how, and each
// caller words it for its reader — createHandler as a TypeError naming the argument
// (`credentials[2].username`), the command as a line of its credentials file or a variable.
// Never a secret.

import { foreignHashProblem, isPasswordHash, type PasswordHash, parsePasswordHash } from './password-hash.js';
import type { Credentials } from './types.js';

// The longest `Authorization` header the login reads (lib/basic-auth.ts): a longer one is
// not ours, it cannot hold credentials worth decoding.
export const MAX_HEADER_LENGTH = 4096;
// The most bytes of UTF-8 a plain user's `user:password` may have so that its header, `Basic `
// and the base64 of them (4 characters for each 3 bytes, padded), still fits; a longer pair
// could never log in, so it is refused where it is given.
const MAX_PAIR_BYTES = 3 * Math.floor((MAX_HEADER_LENGTH - 'Basic '.length) / 4);

/** One configured client as the authenticator keeps it. */
export type ConfiguredUser =
  | { username: string; kind: 'password'; password: string }
  | { username: string; kind: 'hash'; hash: PasswordHash };

/** A user as its name and secret, all of it: two users that differ in anything differ here. */
export function secretOf(user: ConfiguredUser): string[] {
  if (user.kind === 'password') return [user.username, 'password', user.password];
  const { ln, r, p, salt, hash } = user.hash;
  return [user.username, 'hash', `${ln},${r},${p}`, salt.toString('base64'), hash.toString('base64')];
}

/**
 * What is wrong with the credentials: the entry (its index in the list; `undefined` when a
 * single credential was given) and the problem. `detail` is the reason a hash is refused,
 * in words that quote no part of it; `maxBytes` how many bytes of UTF-8 a plain user's name
 * and password may have together.
 */
export type CredentialsProblem =
  | { kind: 'empty list' }
  | {
      index: number | undefined;
      kind:
        | 'not an object'
        | 'empty username'
        | 'colon in username'
        | 'control character in username'
        | 'password and passwordHash'
        | 'no password'
        | 'passwordHash not a hash'
        | 'empty password'
        | 'hash as password';
    }
  | { index: number | undefined; kind: 'unusable hash' | 'foreign hash'; detail: string }
  | { index: number | undefined; kind: 'too long'; maxBytes: number }
  | { index: number; kind: 'repeated username'; first: number };

/** The credentials as the authenticator keeps them, or the first problem among them. */
export function checkCredentials(
  credentials: unknown,
): { ok: true; users: ConfiguredUser[] } | { ok: false; problem: CredentialsProblem } {
  if (!Array.isArray(credentials)) {
    const user = checkOne(credentials, undefined);
    return 'username' in user ? { ok: true, users: [user] } : { ok: false, problem: user };
  }
  const list = credentials as readonly unknown[];
  if (list.length === 0) return { ok: false, problem: { kind: 'empty list' } };
  const users: ConfiguredUser[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of list.entries()) {
    const user = checkOne(entry, index);
    if (!('username' in user)) return { ok: false, problem: user };
    const first = seen.get(user.username);
    if (first !== undefined) return { ok: false, problem: { index, kind: 'repeated username', first } };
    seen.set(user.username, index);
    users.push(user);
  }
  return { ok: true, users };
}

/**
 * The credentials that `user:secret` pairs name, as the command reads them (a file's lines,
 * the environment): a secret that starts with `$scrypt$` and ends without white space is a
 * hash, any other a password (one with spaces around a hash is refused as such); or the
 * first problem among them, as checkCredentials finds it.
 */
export function credentialsFromPairs(
  pairs: ReadonlyArray<readonly [username: string, secret: string]>,
): { ok: true; credentials: Credentials[] } | { ok: false; problem: CredentialsProblem } {
  const credentials = pairs.map(
    ([username, secret]): Credentials =>
      isPasswordHash(secret) && secret.trimEnd() === secret
        ? { username, passwordHash: secret }
        : { username, password: secret },
  );
  const checked = checkCredentials(credentials);
  return checked.ok ? { ok: true, credentials } : checked;
}

/** Throws a TypeError naming the entry unless `credentials` are usable; returns them as a list. */
export function validateCredentials(credentials: Credentials | readonly Credentials[] | undefined): ConfiguredUser[] {
  const checked = checkCredentials(credentials);
  if (!checked.ok) throw new TypeError(describeForLibrary(checked.problem));
  return checked.users;
}

function checkOne(entry: unknown, index: number | undefined): ConfiguredUser | CredentialsProblem {
  if (typeof entry !== 'object' || entry === null) return { index, kind: 'not an object' };
  const { username: given, password, passwordHash } = entry as Record<string, unknown>;
  if (typeof given !== 'string' || given === '') return { index, kind: 'empty username' };
  // Compared in Unicode NFC, as the sent credentials are (lib/auth.ts, RFC 7617 §2.1): two
  // spellings of one name are one user.
  const username = given.normalize('NFC');
  // RFC 7617 §2: a user-id containing a colon could never be sent, and none may hold a
  // control character (a mistyped line's would be in the log, escaped).
  if (username.includes(':')) return { index, kind: 'colon in username' };
  if (/\p{Cc}/u.test(username)) return { index, kind: 'control character in username' };
  if (password !== undefined && passwordHash !== undefined) return { index, kind: 'password and passwordHash' };
  if (password === undefined && passwordHash === undefined) return { index, kind: 'no password' };
  if (passwordHash !== undefined) {
    if (typeof passwordHash !== 'string' || !isPasswordHash(passwordHash)) {
      return { index, kind: 'passwordHash not a hash' };
    }
    const parsed = parsePasswordHash(passwordHash);
    if (!parsed.ok) return { index, kind: 'unusable hash', detail: parsed.problem };
    return { username, kind: 'hash', hash: parsed.hash };
  }
  if (typeof password !== 'string' || password === '') return { index, kind: 'empty password' };
  // A hash as a password is a mistake: its string would log in, and its password not.
  const foreign = foreignHashProblem(password);
  if (foreign !== undefined) return { index, kind: 'foreign hash', detail: foreign };
  if (isPasswordHash(password)) return { index, kind: 'hash as password' };
  const normalized = password.normalize('NFC');
  // A hashed user's password is not known here: its header is judged when it is sent.
  if (Buffer.byteLength(`${username}:${normalized}`, 'utf8') > MAX_PAIR_BYTES) {
    return { index, kind: 'too long', maxBytes: MAX_PAIR_BYTES - 1 };
  }
  return { username, kind: 'password', password: normalized };
}

/** The problem as createHandler's TypeError says it: `credentials[2].username is the same as …`. */
function describeForLibrary(problem: CredentialsProblem): string {
  if (problem.kind === 'empty list') return 'credentials must not be an empty list';
  const name = problem.index === undefined ? 'credentials' : `credentials[${problem.index}]`;
  switch (problem.kind) {
    case 'not an object':
      return `${name} must be an object { username, password } or { username, passwordHash }`;
    case 'empty username':
      return `${name}.username must be a non-empty string`;
    case 'colon in username':
      return `${name}.username must not contain a colon`;
    case 'control character in username':
      return `${name}.username must not contain a control character`;
    case 'password and passwordHash':
      return `${name} must have password or passwordHash, not both`;
    case 'no password':
      return `${name} must have a password or a passwordHash`;
    case 'passwordHash not a hash':
      return `${name}.passwordHash must be a string starting with $scrypt$ (booking-search-server hash-password makes one)`;
    case 'unusable hash':
      return `${name}.passwordHash is not usable: ${problem.detail} (booking-search-server hash-password makes one)`;
    case 'empty password':
      return `${name}.password must be a non-empty string`;
    case 'hash as password':
      return `${name}.password starts with $scrypt$: give a hash as passwordHash`;
    case 'foreign hash':
      return `${name}.password: ${problem.detail}`;
    case 'too long':
      return `${name}.username and ${name}.password together are too long: at most ${problem.maxBytes} bytes of UTF-8`;
    case 'repeated username':
      return `${name}.username is the same as credentials[${problem.first}].username`;
  }
}
