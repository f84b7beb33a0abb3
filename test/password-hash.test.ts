// scrypt PHC hashes (docs/API.md, Credentials), checked against crypto.scrypt directly.

import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { test } from 'node:test';
import { hashPassword, parsePasswordHash, verifyPassword } from '../lib/password-hash.js';
import { HASH_OF_ALT } from './support/helpers.js';

const PHC = /^\$scrypt\$ln=17,r=8,p=1\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})$/;

/** What RFC 7914 scrypt gives for `password` under the parameters and salt of `phc`, in base64 without padding. */
function independentScrypt(password: string, phc: string): string {
  const [, , params, salt, hash] = phc.split('$') as [string, string, string, string, string];
  const { ln, r, p } = Object.fromEntries(params.split(',').map((pair) => pair.split('=') as [string, string]));
  const derived = scryptSync(password, Buffer.from(salt, 'base64'), Buffer.from(hash, 'base64').length, {
    N: 2 ** Number(ln),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024,
  });
  return derived.toString('base64').replace(/=+$/, '');
}

test('hashPassword → $scrypt$ln=17,r=8,p=1$<16-byte salt>$<32-byte hash> that crypto.scrypt reproduces, with a fresh salt', async () => {
  const password = 'pass:wört €';
  const [first, second] = await Promise.all([hashPassword(password), hashPassword(password)]);
  for (const phc of [first, second]) {
    const match = PHC.exec(phc);
    assert.ok(match, phc);
    assert.equal(Buffer.from(match[1] as string, 'base64').length, 16);
    assert.equal(independentScrypt(password, phc), match[2]);
  }
  assert.notEqual(first.split('$')[3], second.split('$')[3], 'each hash has its own salt');
});

test('a hash made by hash-password verifies its password and no other', async () => {
  assert.equal(independentScrypt('alt', HASH_OF_ALT), HASH_OF_ALT.split('$')[4]);
  const parsed = parsePasswordHash(HASH_OF_ALT);
  assert.ok(parsed.ok);
  const check = (password: string) => new Promise<boolean>((resolve) => verifyPassword(password, parsed.hash, resolve));
  assert.deepEqual(await Promise.all([check('alt'), check('Alt'), check('alt ')]), [true, false, false]);
});

test('parsePasswordHash accepts OWASP strength or more and names what is wrong otherwise, never quoting the hash', () => {
  const salt = 'c2FsdHNhbHRzYWx0c2FsdA';
  const hash = 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
  const good = [
    `$scrypt$ln=17,r=8,p=1$${salt}$${hash}`,
    `$scrypt$ln=16,r=8,p=2$${salt}$${hash}`,
    `$scrypt$ln=13,r=8,p=10$${salt}$${hash}`,
    `$scrypt$ln=18,r=8,p=1$${salt}$${hash}`,
    `$scrypt$ln=17,r=8,p=2$${salt}$${hash}`,
  ];
  for (const text of good) assert.equal(parsePasswordHash(text).ok, true, text);
  const bad: Array<[string, RegExp]> = [
    ['$scrypt$', /not a scrypt hash of the form/],
    [`$scrypt$ln=17,r=8,p=1$${salt}`, /not a scrypt hash of the form/],
    [`$scrypt$ln=17,r=8,p=1$${salt}$${hash}=`, /not a scrypt hash of the form/],
    [`$scrypt$ln=17,r=8,p=1$${salt}$${hash} `, /not a scrypt hash of the form/],
    [`$scrypt$r=8,ln=17,p=1$${salt}$${hash}`, /not a scrypt hash of the form/],
    [`$2y$10$${salt}${hash}`, /not a scrypt hash of the form/],
    [`$scrypt$ln=17,r=8,p=1$${salt}$${hash.slice(0, -1)}h`, /base64 without padding/],
    [`$scrypt$ln=16,r=8,p=1$${salt}$${hash}`, /weaker than N=2\^17, r=8, p=1/],
    [`$scrypt$ln=17,r=4,p=1$${salt}$${hash}`, /weaker than N=2\^17, r=8, p=1/],
    [`$scrypt$ln=14,r=8,p=4$${salt}$${hash}`, /weaker than N=2\^17, r=8, p=1/],
    [`$scrypt$ln=19,r=8,p=1$${salt}$${hash}`, /more than 256 MiB/],
    [`$scrypt$ln=17,r=8,p=99$${salt}$${hash}`, /cost more than twice N=2\^17, r=8, p=1/],
    [`$scrypt$ln=18,r=8,p=16$${salt}$${hash}`, /cost more than twice N=2\^17, r=8, p=1/],
    [`$scrypt$ln=17,r=8,p=3$${salt}$${hash}`, /cost more than twice N=2\^17, r=8, p=1/],
  ];
  for (const [text, problem] of bad) {
    const parsed = parsePasswordHash(text);
    assert.equal(parsed.ok, false, text);
    if (!parsed.ok) {
      assert.match(parsed.problem, problem, text);
      assert.ok(!parsed.problem.includes(salt) && !parsed.problem.includes(hash.slice(0, 10)), parsed.problem);
    }
  }
});

test('a password is hashed and checked in Unicode NFC: a hash of the decomposed password verifies the precomposed one, and the other way round', async () => {
  const precomposed = 'pa\u00dfw\u00f6rt';
  const decomposed = 'pa\u00dfwo\u0308rt';
  for (const [hashed, sent] of [
    [decomposed, precomposed],
    [precomposed, decomposed],
  ]) {
    const phc = await hashPassword(hashed as string);
    assert.equal(independentScrypt(precomposed, phc), phc.split('$')[4], 'the hash is of the NFC form');
    const parsed = parsePasswordHash(phc);
    assert.ok(parsed.ok);
    assert.equal(await new Promise<boolean>((resolve) => verifyPassword(sent as string, parsed.hash, resolve)), true);
  }
});
