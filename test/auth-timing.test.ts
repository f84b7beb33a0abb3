// Timing: the comparison of plain passwords takes the same time whoever the user is and
// whatever is wrong (docs/API.md, Authentication). Statistical, thousands of interleaved
// samples: in the full suite, not in the parallel unit loop, whose other processes would
// share the cores with the measurement.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAuthenticator, REJECTED } from '../lib/auth.js';
import { parseBasicAuth } from '../lib/basic-auth.js';
import { validateCredentials } from '../lib/credentials.js';

const LIMITS = { maxHashChecks: 2, maxQueuedHashChecks: 32, maxVerifiedCredentials: 1000 };
/** The synchronous check over plain passwords: the user, or why not. */
function plainAuthenticator(...credentials: Array<{ username: string; password: string }>) {
  const authenticator = createAuthenticator(validateCredentials(credentials), LIMITS);
  return (header: string | undefined) => {
    const given = parseBasicAuth(header);
    return given === undefined ? undefined : authenticator.check(given);
  };
}

const basic = (text: string): string => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

test('no timing oracle: a wrong user and a wrong password take the same time (medians of 3,000 each)', () => {
  const authenticate = plainAuthenticator({ username: 'kasse', password: 'ein langes Passwort: 42' });
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
      for (let j = 0; j < 10; j += 1) assert.equal(authenticate(headers[kind]), REJECTED);
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

test('no timing oracle over several users: the first, the last and an unknown user cost the same (medians of 2,000 each)', () => {
  const users = Array.from({ length: 8 }, (_, i) => ({ username: `client${i}`, password: `ein langes Passwort ${i}` }));
  const authenticate = plainAuthenticator(...users);
  const headers = {
    firstUser: basic('client0:ein langes Passwort 9'),
    lastUser: basic('client7:ein langes Passwort 9'),
    unknownUser: basic('client9:ein langes Passwort 9'),
  };
  const samples: Record<keyof typeof headers, number[]> = { firstUser: [], lastUser: [], unknownUser: [] };
  const kinds = Object.keys(headers) as Array<keyof typeof headers>;
  for (let i = 0; i < 2_000; i += 1) {
    for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
      const started = process.hrtime.bigint();
      for (let j = 0; j < 5; j += 1) assert.equal(authenticate(headers[kind]), REJECTED);
      samples[kind].push(Number(process.hrtime.bigint() - started));
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const [first, last, unknown] = kinds.map((kind) => median(samples[kind])) as [number, number, number];
  // Stopping at the matching user would make the first user far cheaper than an unknown one.
  for (const [name, value] of [
    ['first user', first],
    ['last user', last],
  ] as const) {
    const ratio = value / unknown;
    assert.ok(ratio > 0.85 && ratio < 1.15, `${name} / unknown user = ${ratio.toFixed(3)}`);
  }
});
