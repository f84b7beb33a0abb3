// The `credentials` argument of createHandler (docs/API.md, Credentials): one credential or
// a list, each with a plain password or a scrypt hash. Misuse throws a TypeError naming the
// entry and the problem, never a secret.

import { ensure } from './errors.js';
import {
  FOREIGN_HASH_ADVICE,
  foreignHashScheme,
  isPasswordHash,
  type PasswordHash,
  parsePasswordHash,
} from './password-hash.js';
import type { Credentials } from './types.js';

/** One configured client as the authenticator keeps it. */
export type ConfiguredUser =
  | { username: string; kind: 'password'; password: string }
  | { username: string; kind: 'hash'; hash: PasswordHash };

/** Throws a TypeError unless `credentials` are usable; returns them as a list. */
export function validateCredentials(credentials: Credentials | readonly Credentials[] | undefined): ConfiguredUser[] {
  if (Array.isArray(credentials)) {
    const list = credentials as readonly unknown[];
    ensure(list.length > 0, 'credentials must not be an empty list');
    const users = list.map((entry, index) => validateOne(entry, `credentials[${index}]`));
    const seen = new Map<string, number>();
    users.forEach((user, index) => {
      const first = seen.get(user.username);
      ensure(first === undefined, `credentials[${index}].username is the same as credentials[${first}].username`);
      seen.set(user.username, index);
    });
    return users;
  }
  return [validateOne(credentials, 'credentials')];
}

function validateOne(entry: unknown, name: string): ConfiguredUser {
  ensure(
    typeof entry === 'object' && entry !== null,
    `${name} must be an object { username, password } or { username, passwordHash }`,
  );
  const { username, password, passwordHash } = entry as Record<string, unknown>;
  ensure(typeof username === 'string' && username !== '', `${name}.username must be a non-empty string`);
  // RFC 7617 §2: a user-id containing a colon could never be sent.
  ensure(!username.includes(':'), `${name}.username must not contain a colon`);
  ensure(password === undefined || passwordHash === undefined, `${name} must have password or passwordHash, not both`);
  ensure(password !== undefined || passwordHash !== undefined, `${name} must have a password or a passwordHash`);
  if (passwordHash !== undefined) {
    ensure(
      typeof passwordHash === 'string' && isPasswordHash(passwordHash),
      `${name}.passwordHash must be a string starting with $scrypt$ (booking-search-server hash-password makes one)`,
    );
    const parsed = parsePasswordHash(passwordHash);
    if (!parsed.ok) throw new TypeError(`${name}.passwordHash is not usable: ${parsed.problem}`);
    return { username, kind: 'hash', hash: parsed.hash };
  }
  ensure(typeof password === 'string' && password !== '', `${name}.password must be a non-empty string`);
  const foreign = foreignHashScheme(password);
  if (foreign !== undefined) throw new TypeError(`${name}.password: ${FOREIGN_HASH_ADVICE(foreign)}`);
  return { username, kind: 'password', password };
}
