// One login throttle for the service, whatever --workers is (docs/API.md, Throttling): the
// budgets per address, per username and in all, and the memory of clients that logged in,
// hold for all workers together (the counts in the primary, bin/shared-throttle.ts), and a
// worker that ends resets no count. Each request here goes on a new connection, which the
// primary deals to the workers in turn: with a table per worker, each of the two would
// let the whole budget through.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanEnv, start, USER } from './support/cli-helpers.js';
import { AUTH, basicAuth, buildDatabase, request } from './support/helpers.js';

/** The statuses of `count` requests, one after the other, each on a new connection. */
async function statuses(count: number, url: string, headers: (i: number) => Record<string, string>): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) seen.push((await request(url, { headers: headers(i) })).status);
  return seen;
}

test('--workers 2: guesses from fresh addresses get one username budget for the service; a client that logged in before gets in on either worker; a worker that ends resets nothing', async (t) => {
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--workers', '2', '--trust-proxy', '127.0.0.1', '--max-user-failures', '4'],
    cleanEnv(USER),
  );
  const status = `${server.api}status`;
  // The client logs in once, through whichever worker takes its connection.
  assert.equal(
    (await request(status, { headers: { authorization: AUTH, 'x-forwarded-for': '192.0.2.8' } })).status,
    200,
  );
  const guess = (i: number) => ({ authorization: basicAuth('kasse', `falsch${i}`), 'x-forwarded-for': `10.0.0.${i}` });
  assert.deepEqual(await statuses(10, status, guess), [401, 401, 401, 401, 429, 429, 429, 429, 429, 429]);
  const client = () => ({ authorization: AUTH, 'x-forwarded-for': '192.0.2.8' });
  assert.deepEqual(await statuses(6, status, client), [200, 200, 200, 200, 200, 200], 'let in on both workers');
  const stranger = { authorization: AUTH, 'x-forwarded-for': '192.0.2.9' };
  assert.equal(
    (await request(status, { headers: stranger })).status,
    429,
    'the right password from a new address waits',
  );

  // A worker ends and is replaced: the budget stays spent, the client stays known.
  const pids = /\(pids (\d+), (\d+)\)/.exec(server.output().stdout);
  assert.ok(pids !== null, server.output().stdout);
  process.kill(Number(pids[1]), 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (!/started worker \d+/.test(server.output().stderr)) {
    assert.ok(Date.now() < deadline, `a replacement: ${server.output().stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Give the replacement a moment to listen, then ask both workers again.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(await statuses(4, status, (i) => guess(100 + i)), [429, 429, 429, 429]);
  assert.deepEqual(await statuses(4, status, client), [200, 200, 200, 200]);
});

test('--workers 2: one address gets its budget of failures once, not once per worker', async (t) => {
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--workers', '2', '--max-auth-failures', '3'],
    cleanEnv(USER),
  );
  const status = `${server.api}status`;
  const wrong = () => ({ authorization: basicAuth('kasse', 'falsch') });
  assert.deepEqual(await statuses(6, status, wrong), [401, 401, 401, 429, 429, 429]);
  // Blocked on both workers, the right password included, until the window ends.
  assert.deepEqual(await statuses(2, status, () => ({ authorization: AUTH })), [429, 429]);
});
