// Many clients behind one address (an office's NAT, a proxy that is not trusted), over real
// HTTP (docs/API.md, Throttling): one client's failures never lock out another user's
// clients that logged in from there, while guessing from that address stays bounded.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHandler } from '../lib/index.js';
import { basicAuth, openFixture, request, serve } from './support/helpers.js';

const OFFICE = '203.0.113.9';

/** The handler with two users behind a trusted proxy on loopback; `from` sends as a client at an address. */
async function office(t: Parameters<typeof serve>[0]) {
  let now = 9_000_000;
  const handler = createHandler(
    openFixture(t),
    [
      { username: 'kasse', password: 'alt' },
      { username: 'buero', password: 'b-geheim' },
    ],
    { trustProxy: ['127.0.0.1'], now: () => now },
  );
  const status = `${await serve(t, handler)}/api/v1/status`;
  const from = async (address: string, user?: string, password?: string): Promise<number> => {
    const headers: Record<string, string> = { 'x-forwarded-for': address };
    if (user !== undefined) headers['authorization'] = basicAuth(user, password ?? '');
    return (await request(status, { headers })).status;
  };
  return { handler, from, advance: (ms: number) => (now += ms) };
}

for (const loggedInBefore of [true, false]) {
  test(`a client that keeps a wrong password (its user ${loggedInBefore ? 'logged in from there before' : 'never logged in there'}) does not lock out another user's client behind the same address; a new username from there is still bounded`, async (t) => {
    const { handler, from, advance } = await office(t);
    if (loggedInBefore) assert.equal(await from(OFFICE, 'kasse', 'alt'), 200);
    assert.equal(await from(OFFICE, 'buero', 'b-geheim'), 200, "B's client logs in once");
    // The password is rotated; kasse's client keeps the old one.
    handler.updateCredentials([
      { username: 'kasse', password: 'neu' },
      { username: 'buero', password: 'b-geheim' },
    ]);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      a.push(await from(OFFICE, 'kasse', 'alt'));
      b.push(await from(OFFICE, 'buero', 'b-geheim'));
    }
    assert.deepEqual(a, [...Array(10).fill(401), ...Array(30).fill(429)], "A's client: its 10 failures, then 429");
    assert.deepEqual(b, Array(40).fill(200), "B's client keeps getting in");
    // Someone else from that address: a username never let in there, the right password of
    // a user never let in there: the address's failures are spent. A request without
    // credentials gets the challenge, which B's client answers if it asks so first.
    assert.equal(await from(OFFICE, 'fremd', 'raten'), 429, 'a new username');
    assert.equal(await from(OFFICE, 'fremd', 'raten2'), 429);
    assert.equal(await from(OFFICE), 401, 'no credentials: the challenge');
    assert.equal(await from('198.51.100.4', 'kasse', 'neu'), 200, 'kasse from elsewhere');
    // A guesser for buero from that address is bounded by buero's own budget there.
    const guesses: number[] = [];
    for (let i = 0; i < 12; i += 1) guesses.push(await from(OFFICE, 'buero', `raten${i}`));
    assert.deepEqual(guesses, [...Array(10).fill(401), 429, 429]);
    assert.equal(await from(OFFICE, 'buero', 'b-geheim'), 429, "buero's own failures there spent it");
    advance(60_000);
    assert.equal(await from(OFFICE, 'kasse', 'neu'), 200, 'after the window, the new password');
    assert.equal(await from(OFFICE, 'buero', 'b-geheim'), 200);
  });
}
