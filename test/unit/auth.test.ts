import assert from 'node:assert/strict';
import { test } from 'node:test';
import { challenge, createAuthenticator, parseBasicAuth } from '../../lib/auth.js';

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
  const authenticate = createAuthenticator({ username: 'kasse', password: 'pa:ss wört' });
  assert.equal(authenticate(basic('kasse:pa:ss wört')), true);
  assert.equal(authenticate(basic('kasse:pa:ss wort')), false);
  assert.equal(authenticate(basic('Kasse:pa:ss wört')), false);
  assert.equal(authenticate(basic('kasse:pa:ss wört ')), false);
  assert.equal(authenticate(basic('kasse:')), false);
  assert.equal(authenticate(basic(':pa:ss wört')), false);
  assert.equal(authenticate(basic('kasse:pa')), false);
  assert.equal(authenticate(undefined), false);
});

test('challenge names the realm and the charset, quoting what needs it', () => {
  assert.equal(challenge('booking-search-server'), 'Basic realm="booking-search-server", charset="UTF-8"');
  assert.equal(challenge('Kasse "Nord"'), 'Basic realm="Kasse \\"Nord\\"", charset="UTF-8"');
});

test('no timing oracle: a wrong user and a wrong password take the same time (medians of 3,000 each)', () => {
  const authenticate = createAuthenticator({ username: 'kasse', password: 'ein langes Passwort: 42' });
  const headers = {
    wrongUser: basic('xasse:ein langes Passwort: 42'),
    wrongPassword: basic('kasse:ein langes Passwort: 43'),
    bothWrong: basic('xasse:ein langes Passwort: 43'),
  };
  const samples: Record<keyof typeof headers, number[]> = { wrongUser: [], wrongPassword: [], bothWrong: [] };
  const kinds = Object.keys(headers) as Array<keyof typeof headers>;
  for (let i = 0; i < 3_000; i += 1) {
    // Interleaved, so that the machine's drift hits each kind alike.
    for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
      const started = process.hrtime.bigint();
      for (let j = 0; j < 10; j += 1) assert.equal(authenticate(headers[kind]), false);
      samples[kind].push(Number(process.hrtime.bigint() - started));
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const [user, password, both] = kinds.map((kind) => median(samples[kind]));
  // An early return on the user would make a wrong user about half as expensive.
  for (const [name, value] of [
    ['wrong password', password],
    ['both wrong', both],
  ] as const) {
    const ratio = (value as number) / (user as number);
    assert.ok(ratio > 0.85 && ratio < 1.15, `${name} / wrong user = ${ratio.toFixed(3)}`);
  }
});
