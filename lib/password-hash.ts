// Password hashes in the PHC string format of scrypt (docs/API.md, Credentials), made and
// checked with node:crypto only:
//
//   $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>     salt and hash: base64 without padding

import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** A parsed scrypt hash: what `verifyPassword` needs. */
export interface PasswordHash {
  /** log2 of scrypt's cost N. */
  ln: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** What `hash-password` makes: OWASP's first scrypt row (N=2^17, r=8, p=1). */
export const DEFAULT_PARAMETERS = { ln: 17, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

export const HASH_PREFIX = '$scrypt$';
// $scrypt$ln=D,r=D,p=D$B64$B64 with B64 = base64 without padding. Bounded lengths: a salt
// of 8 to 64 bytes, a hash of 16 to 64 bytes.
const PHC_SCRYPT =
  /^\$scrypt\$ln=([0-9]{1,2}),r=([0-9]{1,3}),p=([0-9]{1,3})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{22,86})$/;
// OWASP's equivalent scrypt settings (Password Storage Cheat Sheet), all with r=8:
// N=2^17 p=1, N=2^16 p=2, N=2^15 p=3, N=2^14 p=5, N=2^13 p=10. [ln, minimum p]
const OWASP_ROWS: ReadonlyArray<readonly [number, number]> = [
  [17, 1],
  [16, 2],
  [15, 3],
  [14, 5],
  [13, 10],
];
// Upper bounds, so that a typing error cannot make one check take the machine: 128·N·r
// bytes of memory at most 256 MiB, and at most twice the default's work (N·r·p, scrypt's
// time): every login pays it, and so does a try with an unknown user, which is checked
// against a hashed user's parameters (lib/auth.ts), so that a client could choose the
// costliest.
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const MAX_WORK = 2 * 2 ** DEFAULT_PARAMETERS.ln * DEFAULT_PARAMETERS.r * DEFAULT_PARAMETERS.p;

// A secret shaped as a hash is one: the modular crypt format (`$id$…`: crypt(3), htpasswd,
// PHC strings) or an LDAP scheme (`{SCHEME}…`), spaces around it aside. Judged by the shape,
// not by a list of schemes that is never complete: Node checks none but scrypt, and such a
// string pasted as a secret is a mistake, never a password anybody types, so it is refused
// instead of being taken for a password (its string would log in), whole or cut short.
const HASH_SHAPE = /^(?:\$[A-Za-z0-9-]+\$|\{[A-Za-z0-9-]+\})/;
// Cut before its closing `$` or `}`, a scheme alone is only shaped as a hash by its name: the
// known ones (a password such as `$ecret` is not one).
const CUT_SCHEME =
  /^(?:\$(?:scrypt|argon2(?:id|i|d)?|2[abxy]?|bcrypt(?:-sha\d+)?|apr1|[1256]|g?y|7|sha\d*|md5|pbkdf2(?:-sha\d+)?)|\{(?:S?SHA\d*|S?MD5|[A-Z0-9]+-(?:CRYPT|MD5)|CRYPT|PBKDF2[-A-Z0-9]*|ARGON2(?:ID|I|D)?|BCRYPT|SCRAM-SHA-\d+)\}?)$/i;
// Schemes known by name, by how they start and the whole of one: their refusal can say
// whether the hash is whole or cut short (a bad copy and paste).
const KNOWN_HASHES: ReadonlyArray<[scheme: string, start: RegExp, whole: RegExp]> = [
  ['bcrypt', /^\$2[abxy]?\$$/, /^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/],
  [
    'Argon2',
    /^\$argon2(?:id|i|d)\$$/,
    /^\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/,
  ],
  ['Apache MD5 (apr1)', /^\$apr1\$$/, /^\$apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}$/],
  ['SHA-crypt', /^\$[56]\$$/, /^\$[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}$/],
  ['htpasswd SHA-1', /^\{SHA\}$/, /^\{SHA\}[A-Za-z0-9+/]{27}=$/],
];

const MAKE_SCRYPT = 'make a scrypt hash with booking-search-server hash-password';

/**
 * Why `secret` is refused when it is shaped as a hash other than an unspaced scrypt hash,
 * and what to do instead; `undefined` for any other secret. Names the scheme as written
 * (`$y$`, `{SSHA}`), never the rest of the secret.
 */
export function foreignHashProblem(secret: string): string | undefined {
  const trimmed = secret.trim();
  // A configuration file's habit (its closing quote perhaps lost): the credentials file takes each secret as written.
  const quoted = /^(['"])(.*?)\1?$/s.exec(trimmed)?.[2];
  if (quoted !== undefined && HASH_SHAPE.test(quoted.trim()))
    return 'the secret is a password hash in quotes, which would be taken for a password; remove the quotes';
  if (CUT_SCHEME.test(trimmed)) return `the secret is the start of a password hash, cut short; ${MAKE_SCRYPT}`;
  const prefix = HASH_SHAPE.exec(trimmed)?.[0];
  if (prefix === undefined) return undefined;
  if (prefix === HASH_PREFIX) {
    return trimmed === secret
      ? undefined
      : `the secret is a scrypt hash with spaces around it, which would be taken for a password; remove the spaces`;
  }
  const known = KNOWN_HASHES.find(([, start]) => start.test(prefix));
  if (known === undefined) {
    return `the secret is a password hash of a kind this service cannot check (${prefix}); ${MAKE_SCRYPT}`;
  }
  const [scheme, , whole] = known;
  return whole.test(trimmed)
    ? `the secret is a hash of type ${scheme}, which this service cannot check; ${MAKE_SCRYPT}`
    : `the secret starts as a hash of type ${scheme} but is cut short or damaged, and this service cannot check ${scheme} anyway; ${MAKE_SCRYPT}`;
}

/** Whether `secret` is meant as a hash (docs/API.md: it starts with `$scrypt$`), not a password. */
export function isPasswordHash(secret: string): boolean {
  return secret.startsWith(HASH_PREFIX);
}

/**
 * `text` → its parameters, salt and hash, or what is wrong with it. The problem never
 * quotes `text`.
 */
export function parsePasswordHash(text: string): { ok: true; hash: PasswordHash } | { ok: false; problem: string } {
  const match = PHC_SCRYPT.exec(text);
  if (match === null) {
    return { ok: false, problem: 'not a scrypt hash of the form $scrypt$ln=17,r=8,p=1$<salt>$<hash>' };
  }
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const salt = decodeUnpadded(match[4] ?? '');
  const hash = decodeUnpadded(match[5] ?? '');
  if (salt === undefined || hash === undefined) {
    return { ok: false, problem: 'salt and hash must be base64 without padding' };
  }
  if (salt.length < 8 || salt.length > 64) return { ok: false, problem: 'the salt must be 8 to 64 bytes' };
  if (hash.length < 16 || hash.length > 64) return { ok: false, problem: 'the hash must be 16 to 64 bytes' };
  const strongEnough = r >= 8 && OWASP_ROWS.some(([rowLn, rowP]) => ln >= rowLn && p >= rowP);
  if (!strongEnough) {
    return { ok: false, problem: 'the parameters are weaker than N=2^17, r=8, p=1 (or an equivalent OWASP row)' };
  }
  if (ln > 24 || 128 * 2 ** ln * r > MAX_MEMORY_BYTES) {
    return { ok: false, problem: 'the parameters need more than 256 MiB' };
  }
  if (2 ** ln * r * p > MAX_WORK) {
    return {
      ok: false,
      problem:
        'the parameters cost more than twice N=2^17, r=8, p=1 (N·r·p above 2^21): every login would take seconds',
    };
  }
  return { ok: true, hash: { ln, r, p, salt, hash } };
}

/** The PHC string of `hash`. */
export function formatPasswordHash({ ln, r, p, salt, hash }: PasswordHash): string {
  return `${HASH_PREFIX}ln=${ln},r=${r},p=${p}$${unpadded(salt)}$${unpadded(hash)}`;
}

/**
 * A fresh hash of `password` with a random salt and the default parameters. The password
 * is hashed in Unicode NFC, the form every password is checked in (RFC 7617 §2.1).
 */
export function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const nfc = password.normalize('NFC');
  return new Promise((resolve, reject) => {
    derive(nfc, { ...DEFAULT_PARAMETERS, salt, hash: Buffer.alloc(HASH_BYTES) }, (error, derived) => {
      if (error !== null) return reject(error);
      resolve(formatPasswordHash({ ...DEFAULT_PARAMETERS, salt, hash: derived }));
    });
  });
}

/**
 * Calls `done(true)` when `password` (in NFC, as `hashPassword` hashed it) hashes to `expected`. crypto.scrypt with a callback
 * runs on libuv's thread pool, never on the event loop. A failure of scrypt itself (out of
 * memory) counts as no match.
 */
export function verifyPassword(password: string, expected: PasswordHash, done: (matches: boolean) => void): void {
  derive(password.normalize('NFC'), expected, (error, derived) => {
    done(error === null && timingSafeEqual(derived, expected.hash));
  });
}

/**
 * A hash with `like`'s parameters that no password matches (random bytes stand for the
 * hash): checking an unknown user against it costs what a wrong password costs.
 */
export function dummyHash(like: PasswordHash): PasswordHash {
  return { ...like, salt: randomBytes(like.salt.length), hash: randomBytes(like.hash.length) };
}

function derive(
  password: string,
  { ln, r, p, salt, hash }: PasswordHash,
  done: (error: Error | null, derived: Buffer) => void,
): void {
  const N = 2 ** ln;
  // OpenSSL needs 128·r·(N + p + 2) bytes; node's default maxmem (32 MiB) is below N=2^17.
  const maxmem = 128 * r * (N + p + 2) + 1024 * 1024;
  scrypt(password, salt, hash.length, { N, r, p, maxmem }, done);
}

function unpadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

// Node's decoder forgives anything; a hash that does not re-encode to itself is malformed.
function decodeUnpadded(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return unpadded(bytes) === text ? bytes : undefined;
}
