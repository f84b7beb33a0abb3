// The Basic scheme's header (RFC 7617): the credentials a client sends, and the challenge
// a 401 carries. What they are checked against is lib/auth.ts.

import { type ConfiguredUser, MAX_HEADER_LENGTH } from './credentials.js';

// RFC 7617 §2 / RFC 7235 §2.1: credentials = auth-scheme 1*SP token68, the scheme
// case-insensitive. token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BASIC_CREDENTIALS = /^basic +([A-Za-z0-9._~+/-]+=*) *$/i;

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

/**
 * The header each plain user's client sends (RFC 7617's spelling: `Basic`, one space, padded
 * base64), with the user's index: known in advance, as the process holds the password anyway,
 * so that it logs in without decoding or digests. Only a header that the parse gives back as
 * exactly these credentials: it lets in nothing the check would refuse. A hashed user has
 * none: its header would be a password the process does not otherwise know. Constant time:
 * a lookup hashes the whole header, the same work for any header of its length, and compares
 * contents only with a key of the same hash; a wrong guess learns nothing of the password.
 */
export function plainHeaders(users: readonly ConfiguredUser[]): Array<[header: string, index: number]> {
  const headers: Array<[string, number]> = [];
  for (const [index, user] of users.entries()) {
    if (user.kind !== 'password') continue;
    const header = `Basic ${Buffer.from(`${user.username}:${user.password}`, 'utf8').toString('base64')}`;
    const parsed = parseBasicAuth(header);
    if (parsed?.username === user.username && parsed.password === user.password) headers.push([header, index]);
  }
  return headers;
}

/** A username and password as sent (RFC 7617). */
export interface GivenCredentials {
  username: string;
  password: string;
}

/** The challenge of a 401 (RFC 7617 §2.1). */
export function challenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}", charset="UTF-8"`;
}
