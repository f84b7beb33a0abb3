import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAuthenticator, PENDING, REJECTED } from '../../lib/auth.js';
import { challenge, parseBasicAuth } from '../../lib/basic-auth.js';
import { validateCredentials } from '../../lib/credentials.js';
import { accepted, checkHeader, HASH_OF_ALT } from '../support/helpers.js';

const LIMITS = { maxHashChecks: 2, maxQueuedHashChecks: 32, maxVerifiedCredentials: 1000 };
/** The synchronous check over plain passwords: the user, or why not. */
function plainAuthenticator(...credentials: Array<{ username: string; password: string }>) {
  const authenticator = createAuthenticator(validateCredentials(credentials), LIMITS);
  return (header: string | undefined) => checkHeader(authenticator, header);
}

const basic = (text: string, scheme = 'Basic'): string => `${scheme} ${Buffer.from(text, 'utf8').toString('base64')}`;

test('parseBasicAuth splits user and password at the first colon (RFC 7617 §2)', () => {
  assert.deepEqual(parseBasicAuth(basic('kasse:geheim')), { username: 'kasse', password: 'geheim' });
  assert.deepEqual(parseBasicAuth(basic('kasse:ge:hei:m')), { username: 'kasse', password: 'ge:hei:m' });
  assert.deepEqual(parseBasicAuth(basic('kasse:')), { username: 'kasse', password: '' });
  assert.deepEqual(parseBasicAuth(basic(':geheim')), { username: '', password: 'geheim' });
});

test('parseBasicAuth takes the scheme in any case and decodes UTF-8', () => {
  for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
    assert.deepEqual(parseBasicAuth(basic('jürgen:straße€', scheme)), { username: 'jürgen', password: 'straße€' });
  }
  assert.deepEqual(parseBasicAuth(`Basic   ${Buffer.from('a:b').toString('base64')}  `), {
    username: 'a',
    password: 'b',
  });
});

test('parseBasicAuth finds no credentials in malformed headers', () => {
  const malformed = [
    undefined,
    '',
    'Basic',
    'Basic ',
    'Bearer abc',
    'Digest username="a"',
    basic('no colon at all'),
    `Basic ${Buffer.from('a:b').toString('base64')} extra`,
    `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`, // not UTF-8
    `Basic ${'A'.repeat(5000)}`,
    'Basic !!!!',
    `Basic\t${Buffer.from('a:b').toString('base64')}`,
  ];
  for (const header of malformed) assert.equal(parseBasicAuth(header), undefined, String(header));
});

test('the authenticator accepts exactly the configured user and password', () => {
  const authenticate = plainAuthenticator({ username: 'kasse', password: 'pa:ss wört' });
  assert.deepEqual(authenticate(basic('kasse:pa:ss wört')), accepted('kasse'));
  assert.equal(authenticate(basic('kasse:pa:ss wort')), REJECTED);
  assert.equal(authenticate(basic('Kasse:pa:ss wört')), REJECTED);
  assert.equal(authenticate(basic('kasse:pa:ss wört ')), REJECTED);
  assert.equal(authenticate(basic('kasse:')), REJECTED);
  assert.equal(authenticate(basic(':pa:ss wört')), REJECTED);
  assert.equal(authenticate(basic('kasse:pa')), REJECTED);
  assert.equal(authenticate(undefined), undefined);
  assert.equal(authenticate('Bearer abc'), undefined);
});

test('credentials are compared in Unicode NFC: a user and password sent decomposed match the precomposed ones, and the other way round (RFC 7617 §2.1)', () => {
  const precomposed = { username: 'j\u00fcrgen', password: 'stra\u00dfe-\u00e4\u00f6' };
  const decomposed = { username: 'ju\u0308rgen', password: 'stra\u00dfe-a\u0308o\u0308' };
  for (const [configured, sent] of [
    [precomposed, decomposed],
    [decomposed, precomposed],
    [precomposed, precomposed],
  ] as const) {
    const authenticate = plainAuthenticator(configured);
    assert.deepEqual(authenticate(basic(`${sent.username}:${sent.password}`)), accepted(precomposed.username));
    assert.equal(authenticate(basic(`${sent.username}:${sent.password}x`)), REJECTED);
  }
  assert.deepEqual(parseBasicAuth(basic('ju\u0308rgen:a\u0308')), { username: 'j\u00fcrgen', password: '\u00e4' });
  assert.throws(
    () => validateCredentials([precomposed, { ...decomposed, password: 'x' }]),
    /credentials\[1\]\.username is the same as credentials\[0\]\.username/,
  );
});

test('with several users each is accepted with its own password only, and named', () => {
  const authenticate = plainAuthenticator(
    { username: 'bank', password: 'eins' },
    { username: 'pruefer', password: 'zwei' },
    { username: 'dritter', password: 'drei' },
  );
  assert.deepEqual(authenticate(basic('bank:eins')), accepted('bank'));
  assert.deepEqual(authenticate(basic('pruefer:zwei')), accepted('pruefer'));
  assert.deepEqual(authenticate(basic('dritter:drei')), accepted('dritter'));
  assert.equal(authenticate(basic('bank:zwei')), REJECTED);
  assert.equal(authenticate(basic('pruefer:eins')), REJECTED);
  assert.equal(authenticate(basic('niemand:eins')), REJECTED);
});

test('a verified plain password is remembered, forgotten when the users change, and the memory limit only costs a recheck', () => {
  const authenticator = createAuthenticator(
    validateCredentials([
      { username: 'bank', password: 'eins' },
      { username: 'pruefer', password: 'zwei' },
    ]),
    { ...LIMITS, maxVerifiedCredentials: 1 },
  );
  // Alternating users with room for one: each is forgotten and checked again, never mixed up.
  for (let i = 0; i < 3; i += 1) {
    assert.deepEqual(checkHeader(authenticator, basic('bank:eins')), accepted('bank'));
    assert.deepEqual(checkHeader(authenticator, basic('bank:eins')), accepted('bank'));
    assert.deepEqual(checkHeader(authenticator, basic('pruefer:zwei')), accepted('pruefer'));
    assert.equal(checkHeader(authenticator, basic('bank:zwei')), REJECTED);
  }
  authenticator.replaceUsers(validateCredentials([{ username: 'bank', password: 'neu' }]));
  assert.equal(
    checkHeader(authenticator, basic('pruefer:zwei')),
    REJECTED,
    'a remembered header outlived its credentials',
  );
  assert.equal(checkHeader(authenticator, basic('bank:eins')), REJECTED);
  assert.deepEqual(checkHeader(authenticator, basic('bank:neu')), accepted('bank'));
  assert.equal(checkHeader(authenticator, `${basic('bank:neu')}${' '.repeat(5000)}`), undefined);
});

test("a hashed user is never accepted without its hash check: not with the password 'alt' it hashes, nor with its own name", async () => {
  const authenticator = createAuthenticator(
    validateCredentials([
      { username: 'bank', password: 'eins' },
      { username: 'pruefer', passwordHash: HASH_OF_ALT },
    ]),
    LIMITS,
  );
  // The plain comparison weighs a hashed user against its own name (the same cost for every
  // user): that comparison must never be what lets it in.
  for (const password of ['pruefer', 'alt', 'eins']) {
    const given = { username: 'pruefer', password };
    assert.deepEqual(authenticator.check(given), PENDING, password);
    const settled = await new Promise((resolve) => authenticator.verify(given, resolve));
    assert.deepEqual(settled, password === 'alt' ? accepted('pruefer') : REJECTED, password);
  }
});

test("a plain user's own header names the user at once, spelled exactly so; a hashed user's never; rebuilt with the users", () => {
  const authenticator = createAuthenticator(
    validateCredentials([
      { username: 'bank', password: 'eins' },
      { username: 'jürgen', password: 'straße€' },
      { username: 'pruefer', passwordHash: HASH_OF_ALT },
    ]),
    LIMITS,
  );
  assert.deepEqual(authenticator.headers.get(basic('bank:eins')), accepted('bank'));
  assert.deepEqual(authenticator.headers.get(basic('jürgen:straße€')), accepted('jürgen'));
  for (const other of [
    basic('bank:eins', 'basic'),
    `${basic('bank:eins')} `,
    basic('bank:zwei'),
    basic('pruefer:alt'),
  ]) {
    assert.equal(authenticator.headers.get(other), undefined, other);
  }
  authenticator.replaceUsers(validateCredentials([{ username: 'bank', password: 'neu' }]));
  assert.equal(authenticator.headers.get(basic('bank:eins')), undefined, 'the old header outlived its credentials');
  assert.deepEqual(authenticator.headers.get(basic('bank:neu')), accepted('bank'));
});

test('challenge names the realm and the charset, quoting what needs it', () => {
  assert.equal(challenge('booking-search-server'), 'Basic realm="booking-search-server", charset="UTF-8"');
  assert.equal(challenge('Kasse "Nord"'), 'Basic realm="Kasse \\"Nord\\"", charset="UTF-8"');
});
