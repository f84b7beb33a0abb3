// One login throttle for the service, whatever --workers is (docs/API.md, Throttling): the
// budgets per address, per username and in all, and the memory of clients that logged in,
// hold for all workers together (the counts in the primary, bin/cluster/shared-throttle.ts), and a
// worker that ends resets no count. Each request here goes on a new connection, which the
// primary deals to the workers in turn: with a table per worker, each of the two would
// let the whole budget through.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { cleanEnv, start, TIME, USER, waitFor } from './support/cli-helpers.js';
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

/** The admin listener's count of open connections on the API listener. */
async function openConnections(admin: string): Promise<number> {
  const match = /^booking_search_open_connections (\d+)$/m.exec((await request(`${admin}/metrics`)).body);
  assert.ok(match !== null);
  return Number(match[1]);
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, 'in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('wrong passwords from a client that resets each connection right after its request are counted and logged under its address, not as "unix"', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  const status = `${server.api}status`;
  const head = `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basicAuth('kasse', 'falsch')}\r\n\r\n`;
  // The budget is 10 failures: the 11th is refused, and the 12th, read to its end, too.
  for (let i = 1; i <= 11; i += 1) {
    const socket = connect(Number(new URL(status).port), '127.0.0.1').on('error', () => {});
    await once(socket, 'connect');
    // Once the service has accepted the connection (the client cannot see it otherwise),
    // the request, and a reset (RST, SO_LINGER 0) the moment it has left.
    await until(async () => (await openConnections(admin)) === 1);
    socket.write(head, () => socket.resetAndDestroy());
    await waitFor(() => server.output().stdout, / GET \/api\/v1\/status /, i);
    await until(async () => (await openConnections(admin)) === 0);
  }
  const lines = server
    .output()
    .stdout.split('\n')
    .filter((line) => line.includes(' GET /api/v1/status '));
  assert.equal(lines.length, 11);
  for (const line of lines) assert.match(line, new RegExp(`^${TIME} 127\\.0\\.0\\.1 (kasse|-) GET /api/v1/status `));
  assert.equal((await request(status, { headers: { authorization: AUTH } })).status, 429, 'the 12th, right password');
});
