// HTTP Basic authentication (RFC 7617), compared in constant time.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Credentials } from './types.js';

// RFC 7617 §2 / RFC 7235 §2.1: credentials = auth-scheme 1*SP token68, the scheme
// case-insensitive. token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BASIC_CREDENTIALS = /^basic +([A-Za-z0-9._~+/-]+=*) *$/i;
// A longer header is not ours: it cannot hold credentials worth decoding.
const MAX_HEADER_LENGTH = 4096;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `Authorization` header → the credentials in it, or `undefined` when it holds none. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return undefined;
  const match = BASIC_CREDENTIALS.exec(header);
  if (match === null) return undefined;
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(match[1] ?? '', 'base64'));
  } catch {
    return undefined; // not UTF-8 (RFC 7617 §2.1, charset="UTF-8")
  }
  // RFC 7617 §2: the user-id cannot contain a colon, so split at the first one.
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Builds the check for one set of credentials. Username and password are hashed to
 * fixed-length digests and both are always compared with `timingSafeEqual`, so the time
 * taken depends neither on their contents nor on which of the two is wrong.
 */
export function createAuthenticator(expected: Credentials): (header: string | undefined) => boolean {
  const expectedUser = digest(expected.username);
  const expectedPassword = digest(expected.password);
  return (header) => {
    const given = parseBasicAuth(header);
    if (given === undefined) return false;
    const userMatches = timingSafeEqual(digest(given.username), expectedUser);
    const passwordMatches = timingSafeEqual(digest(given.password), expectedPassword);
    // `&`, not `&&`: no early return on the user.
    return (Number(userMatches) & Number(passwordMatches)) === 1;
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The challenge of a 401 (RFC 7617 §2.1). */
export function challenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}", charset="UTF-8"`;
}
