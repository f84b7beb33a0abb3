// The credentials argument (docs/API.md, Credentials): misuse named at creation, and the
// hash check that costs the same for an unknown user as for a wrong password.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Authenticator,
  BUSY,
  createAuthenticator,
  PENDING,
  REJECTED,
  STOPPING,
  type Verdict,
} from '../lib/auth.js';
import { type GivenCredentials, parseBasicAuth } from '../lib/basic-auth.js';
import { validateCredentials } from '../lib/credentials.js';
import { createHashChecks } from '../lib/hash-checks.js';
import { createHandler } from '../lib/index.js';
import { Metrics } from '../lib/metrics.js';
import type { Credentials } from '../lib/types.js';
import { basicAuth, checkHeader, HASH_OF_ALT, HASH_OF_NEU, openFixture, request, serve } from './support/helpers.js';

const WEAK = '$scrypt$ln=16,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';

test('createHandler takes one credential or a list, with passwords or hashes', (t) => {
  const db = openFixture(t);
  const good: Array<Credentials | Credentials[]> = [
    { username: 'kasse', password: 'geheim' },
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    [{ username: 'bank', password: 'eins' }],
    [
      { username: 'bank', passwordHash: HASH_OF_ALT },
      { username: 'pruefer', passwordHash: HASH_OF_NEU },
      { username: 'alt', password: 'plain' },
    ],
  ];
  for (const credentials of good) assert.equal(typeof createHandler(db, credentials), 'function');
});

test('misused credentials throw a TypeError naming the entry and the problem, never a secret', (t) => {
  const db = openFixture(t);
  const bad: Array<[unknown, RegExp]> = [
    [[], /^credentials must not be an empty list$/],
    [[{ username: 'a', password: 'geheim1' }, 'x'], /^credentials\[1\] must be an object/],
    [
      [
        { username: 'a', password: 'geheim1' },
        { username: 'b', password: 'geheim2' },
        { username: 'a', passwordHash: HASH_OF_ALT },
      ],
      /^credentials\[2\]\.username is the same as credentials\[0\]\.username$/,
    ],
    [
      [
        { username: 'a', password: 'geheim1' },
        { username: 'b:c', password: 'geheim2' },
      ],
      /^credentials\[1\]\.username must not contain a colon$/,
    ],
    [
      [{ username: 'a\u0001b', password: 'geheim1' }],
      /^credentials\[0\]\.username must not contain a control character$/,
    ],
    [[{ username: 'a\tb', password: 'geheim1' }], /^credentials\[0\]\.username must not contain a control character$/],
    [[{ username: '', password: 'geheim1' }], /^credentials\[0\]\.username must be a non-empty string$/],
    [
      { username: 'a', password: 'geheim1', passwordHash: HASH_OF_ALT },
      /^credentials must have password or passwordHash, not both$/,
    ],
    [[{ username: 'a' }], /^credentials\[0\] must have a password or a passwordHash$/],
    [[{ username: 'a', password: '' }], /^credentials\[0\]\.password must be a non-empty string$/],
    [
      [{ username: 'a', passwordHash: 'geheim1' }],
      /^credentials\[0\]\.passwordHash must be a string starting with \$scrypt\$/,
    ],
    [
      [{ username: 'a', passwordHash: `${HASH_OF_ALT}!` }],
      /^credentials\[0\]\.passwordHash is not usable: not a scrypt hash/,
    ],
    [
      [{ username: 'a', passwordHash: WEAK }],
      /^credentials\[0\]\.passwordHash is not usable: the parameters are weaker than N=2\^17, r=8, p=1/,
    ],
    // Hashes of other schemes are refused, not taken for a password that nobody could type.
    [
      [{ username: 'a', password: '$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e' }],
      /^credentials\[0\]\.password: the secret is a hash of type bcrypt, which this service cannot check; make a scrypt hash with booking-search-server hash-password$/,
    ],
    [
      [{ username: 'a', password: '$argon2id$v=19$m=65536,t=3,p=4$R0VIRUlNTklT$aGFzaGhhc2hoYXNoaGFzaA' }],
      /^credentials\[0\]\.password: the secret is a hash of type Argon2, which/,
    ],
    // So is a secret that starts as such a hash but is cut short (a bad copy and paste): its
    // string would log in as a password.
    [
      [{ username: 'a', password: '$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2' }],
      /^credentials\[0\]\.password: the secret starts as a hash of type bcrypt but is cut short or damaged, and this service cannot check bcrypt anyway; make a scrypt hash with booking-search-server hash-password$/,
    ],
    [
      [{ username: 'a', password: '$argon2id$v=19$m=65536,t=3,p=4$GEHEIMNIS' }],
      /^credentials\[0\]\.password: the secret starts as a hash of type Argon2 but is cut short or damaged/,
    ],
    // Any other secret shaped as a hash is one too, whatever its scheme: the modular crypt
    // format ($id$…, any case) and LDAP schemes ({SCHEME}…), spaces around it aside.
    ...(
      [
        ['$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7', '$y$'],
        ['$1$abc$def', '$1$'],
        ['$pbkdf2-sha256$29000$abc$def', '$pbkdf2-sha256$'],
        ['{SSHA}abcdef', '{SSHA}'],
        ['$ARGON2ID$v=19$m=65536,t=3,p=4$R0VIRUlNTklT$aGFzaGhhc2hoYXNoaGFzaA', '$ARGON2ID$'],
        [' {ssha}abcdef\t', '{ssha}'],
      ] as const
    ).map(([password, scheme]): [unknown, RegExp] => [
      [{ username: 'a', password }],
      new RegExp(
        `^credentials\\[0\\]\\.password: the secret is a password hash of a kind this service cannot check \\(${scheme.replace(/[$.{}]/g, '\\$&')}\\); make a scrypt hash with booking-search-server hash-password$`,
      ),
    ]),
    [
      [{ username: 'a', password: ' $2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e' }],
      /^credentials\[0\]\.password: the secret is a hash of type bcrypt, which this service cannot check/,
    ],
    // A scrypt hash, whole or not, is a passwordHash, never a password.
    [
      [{ username: 'a', password: HASH_OF_ALT }],
      /^credentials\[0\]\.password starts with \$scrypt\$: give a hash as passwordHash$/,
    ],
    [[{ username: 'a', password: HASH_OF_ALT.slice(0, -1) }], /^credentials\[0\]\.password starts with \$scrypt\$/],
    [
      [{ username: 'a', password: ` ${HASH_OF_ALT}` }],
      /^credentials\[0\]\.password: the secret is a scrypt hash with spaces around it, which would be taken for a password; remove the spaces$/,
    ],
    [
      [{ username: 'a', password: `${HASH_OF_ALT}\t` }],
      /^credentials\[0\]\.password: the secret is a scrypt hash with spaces around it, which would be taken for a password; remove the spaces$/,
    ],
  ];
  for (const [credentials, message] of bad) {
    assert.throws(
      () => createHandler(db, credentials as Credentials),
      (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /geheim|GEHEIMNIS|FDRD|bg0D|c2Fsd/, 'no secret in the message');
        return true;
      },
    );
  }
});

test('a plain user whose Basic header would be longer than the login reads is refused at creation with the bound; one at the bound logs in', async (t) => {
  const db = openFixture(t);
  // `Basic ` and base64 of user:password in 4,096 characters: 3,066 bytes with the colon.
  const atBound: Credentials[] = [
    { username: 'lang', password: 'x'.repeat(3061) },
    // Bytes of UTF-8, not characters: ü is two.
    { username: 'umlaut', password: `${'ü'.repeat(1529)}x` },
  ];
  const origin = await serve(t, createHandler(db, atBound));
  for (const { username, password } of atBound as Array<{ username: string; password: string }>) {
    const reply = await request(`${origin}/api/v1/status`, {
      headers: { authorization: basicAuth(username, password) },
    });
    assert.equal(reply.status, 200, `${username}: ${reply.body}`);
  }
  const tooLong =
    'credentials[1].username and credentials[1].password together are too long: at most 3065 bytes of UTF-8';
  const oneByteMore: Array<[string, string]> = [
    ['lang', 'x'.repeat(3062)],
    ['umlaut', `${'ü'.repeat(1529)}xx`],
    ['lang', 'x'.repeat(3500)],
  ];
  for (const [username, password] of oneByteMore) {
    assert.throws(
      () =>
        createHandler(db, [
          { username: 'a', password: 'b' },
          { username, password },
        ]),
      {
        name: 'TypeError',
        message: tooLong,
      },
    );
  }
  // A hashed user's password is not known, so its header cannot be judged in advance.
  assert.equal(typeof createHandler(db, { username: 'y'.repeat(3100), passwordHash: HASH_OF_ALT }), 'function');
});

test('updateCredentials checks the new credentials like createHandler and keeps the old ones when they are unusable', (t) => {
  const handler = createHandler(openFixture(t), { username: 'kasse', password: 'geheim' });
  assert.throws(() => handler.updateCredentials([]), {
    name: 'TypeError',
    message: 'credentials must not be an empty list',
  });
  assert.doesNotThrow(() => handler.updateCredentials([{ username: 'bank', passwordHash: HASH_OF_NEU }]));
});

const LIMITS = { maxHashChecks: 2, maxQueuedHashChecks: 32, maxVerifiedCredentials: 1000 };

test('no user oracle: an unknown user and a wrong password of a hashed user take the same time (medians of 3 each)', async () => {
  const authenticator = createAuthenticator(
    validateCredentials([
      { username: 'bank', passwordHash: HASH_OF_ALT },
      { username: 'pruefer', passwordHash: HASH_OF_NEU },
    ]),
    LIMITS,
  );
  const headers = { unknownUser: basicAuth('niemand', 'alt'), wrongPassword: basicAuth('bank', 'falsch') };
  const samples: Record<keyof typeof headers, number[]> = { unknownUser: [], wrongPassword: [] };
  const kinds = Object.keys(headers) as Array<keyof typeof headers>;
  for (let i = 0; i < 3; i += 1) {
    // Interleaved, so that the machine's drift hits each kind alike.
    for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
      const started = process.hrtime.bigint();
      assert.equal(checkHeader(authenticator, headers[kind]), PENDING);
      const verdict = await new Promise<Verdict>((resolve) =>
        authenticator.verify(parseBasicAuth(headers[kind]) as GivenCredentials, resolve),
      );
      assert.equal(verdict, REJECTED);
      samples[kind].push(Number(process.hrtime.bigint() - started));
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const ratio = median(samples.unknownUser) / median(samples.wrongPassword);
  // Without the dummy hash an unknown user would be answered in microseconds (ratio ~0.001).
  assert.ok(ratio > 0.5 && ratio < 2, `unknown user / wrong password = ${ratio.toFixed(3)}`);
});

test('no user oracle with mixed hash parameters: each unknown user costs what one of the configured users costs', async () => {
  // OWASP's cheapest row, and a user whose hash costs about twice as much, listed first
  // and second: before, every unknown user cost what the first one costs.
  const cheap = '$scrypt$ln=13,r=8,p=10$t32q+swFKtNFG8W4WW+iuQ$U0czAa6OOpWzh9L2w5ap1+3c6cTCjm0HrcAHxLR0PKk';
  const dear = '$scrypt$ln=14,r=8,p=10$4oyMi7+q9UrnvXT5OfxyZQ$8keuGIM9J34i52lWDePzZCPAJFY4iGhHF8zoiP9TPEc';
  const authenticator = createAuthenticator(
    validateCredentials([
      { username: 'bank', passwordHash: cheap },
      { username: 'pruefer', passwordHash: dear },
    ]),
    LIMITS,
  );
  const time = async (username: string): Promise<number> => {
    const given = { username, password: 'falsch' };
    const started = process.hrtime.bigint();
    assert.equal(authenticator.check(given), PENDING);
    assert.equal(await new Promise<Verdict>((resolve) => authenticator.verify(given, resolve)), REJECTED);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  // The least of two or more timings: a busy machine only ever adds time, so the least is
  // the nearest to what the check itself costs.
  const least = (values: number[]): number => Math.min(...values);
  const bank: number[] = [];
  const pruefer: number[] = [];
  const unknown: number[] = [];
  // 14 unknown names, each timed twice, interleaved with the two users so that the machine's
  // drift hits all alike.
  for (let i = 0; i < 14; i += 1) {
    if (i % 3 === 0) bank.push(await time('bank'));
    unknown.push(least([await time(`niemand${i}`), await time(`niemand${i}`)]));
    if (i % 3 === 1) pruefer.push(await time('pruefer'));
  }
  const [low, high] = [least(bank), least(pruefer)];
  const figures = `bank ${low.toFixed(0)} ms, pruefer ${high.toFixed(0)} ms, unknown ${unknown.map((ms) => ms.toFixed(0)).join(' ')}`;
  assert.ok(high > 1.4 * low, `the two users' hashes differ in cost: ${figures}`);
  // Each unknown name is checked against one user's parameters, chosen by the name: over
  // 14 names each cost turns up at least twice (otherwise: a chance of about 1 in 1,000).
  // Before, every unknown name cost what bank costs. A name counts as costing what pruefer
  // costs when it is nearer to it than to bank, measured by ratio.
  const dearer = unknown.filter((ms) => ms > Math.sqrt(low * high)).length;
  assert.ok(unknown.length - dearer >= 2, `unknown names that cost what bank costs: ${figures}`);
  assert.ok(dearer >= 2, `unknown names that cost what pruefer costs: ${figures}`);
  assert.ok(Math.min(...unknown) > 0.4 * low, `none is answered without a check: ${figures}`);
});

test('authenticators that share their hash checks (the books of one service) share the bound: one running, the other waits', async () => {
  const metrics = new Metrics();
  const users = validateCredentials([{ username: 'bank', passwordHash: HASH_OF_ALT }]);
  const limits = { ...LIMITS, maxHashChecks: 1, maxQueuedHashChecks: 1 };
  const shared = createHashChecks(limits, metrics);
  const [first, second, third] = [1, 2, 3].map(() => createAuthenticator(users, limits, metrics, shared)) as [
    Authenticator,
    Authenticator,
    Authenticator,
  ];
  const check = (authenticator: Authenticator, password: string): Promise<Verdict> =>
    new Promise((resolve) => authenticator.verify({ username: 'bank', password }, resolve));
  const checks = [check(first, 'eins'), check(second, 'zwei'), check(third, 'drei')];
  assert.deepEqual([...metrics.hashChecks], [1, 1], 'one running for all books, one waiting');
  assert.deepEqual(await Promise.all(checks), [REJECTED, REJECTED, BUSY], 'the third finds the shared queue full');
  assert.deepEqual([...metrics.hashChecks], [0, 0]);
});

test('the hash checks running and waiting are counted while they last, and several authenticators add up', async () => {
  const metrics = new Metrics();
  const users = validateCredentials([{ username: 'bank', passwordHash: HASH_OF_ALT }]);
  const limits = { ...LIMITS, maxHashChecks: 1 };
  const [first, second] = [createAuthenticator(users, limits, metrics), createAuthenticator(users, limits, metrics)];
  const check = (authenticator: typeof first, password: string): Promise<Verdict> =>
    new Promise((resolve) => authenticator.verify({ username: 'bank', password }, resolve));
  const checks = [check(first, 'eins'), check(first, 'zwei'), check(second, 'drei')];
  assert.deepEqual([...metrics.hashChecks], [2, 1], 'one running in each, one waiting in the first');
  assert.deepEqual(await Promise.all(checks), [REJECTED, REJECTED, REJECTED]);
  assert.deepEqual([...metrics.hashChecks], [0, 0]);
});

test('a waiting hash check whose clients have all gone is not run when its turn comes, and each of them hears that it never ran', async () => {
  const metrics = new Metrics();
  const users = validateCredentials([{ username: 'bank', passwordHash: HASH_OF_ALT }]);
  const authenticator = createAuthenticator(users, { ...LIMITS, maxHashChecks: 1 }, metrics);
  let left = false;
  const check = (password: string, gone = () => false): Promise<Verdict> =>
    new Promise((resolve) => authenticator.verify({ username: 'bank', password }, resolve, gone));
  const checks = [check('eins'), check('zwei', () => left), check('zwei', () => left), check('drei')];
  assert.deepEqual([...metrics.hashChecks], [1, 2], 'one running, two waiting (one of them for two requests)');
  left = true;
  assert.deepEqual(await Promise.all(checks), [REJECTED, STOPPING, STOPPING, REJECTED]);
  assert.deepEqual([...metrics.hashChecks], [0, 0]);
});

test('stopped, the hash checks that wait and those queued later are given up at once; the running one ends as it would', async () => {
  const metrics = new Metrics();
  const users = validateCredentials([{ username: 'bank', passwordHash: HASH_OF_ALT }]);
  const limits = { ...LIMITS, maxHashChecks: 1 };
  const shared = createHashChecks(limits, metrics);
  const authenticator = createAuthenticator(users, limits, metrics, shared);
  const check = (password: string): Promise<Verdict> =>
    new Promise((resolve) => authenticator.verify({ username: 'bank', password }, resolve));
  const checks = [check('eins'), check('zwei'), check('zwei'), check('drei')];
  assert.deepEqual([...metrics.hashChecks], [1, 2], 'one running, two waiting (one of them for two requests)');
  shared.stop();
  assert.deepEqual([...metrics.hashChecks], [1, 0]);
  const later = check('vier');
  assert.deepEqual(await Promise.all([...checks, later]), [REJECTED, STOPPING, STOPPING, STOPPING, STOPPING]);
  assert.deepEqual([...metrics.hashChecks], [0, 0]);
});
