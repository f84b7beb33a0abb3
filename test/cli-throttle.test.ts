// One login throttle for the service, whatever --workers is (docs/API.md, Throttling): the
// budgets per address, per username and in all, and the memory of clients that logged in,
// hold for all workers together (the counts in the primary, lib/throttle-authority.ts), and a
// worker that ends resets no count. Each request here goes on a new connection, which the
// primary deals to the workers in turn: with a table per worker, each of the two would
// let the whole budget through.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { cleanEnv, type Running, start, TIME, USER, until, waitFor } from './support/cli-helpers.js';
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
  await waitFor(() => server.output().stderr, /started worker \d+/);
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

test("--workers 2: behind an office's NAT a neighbour's requests without credentials never lock a known challenge-first client out; an address nobody logged in from gets its budget once", async (t) => {
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--workers', '2', '--trust-proxy', '127.0.0.1', '--max-unauthenticated', '3'],
    cleanEnv(USER),
  );
  const status = `${server.api}status`;
  const office = { 'x-forwarded-for': '192.0.2.8' };
  const challengeFirst = () => statuses(2, status, (i) => (i === 0 ? office : { ...office, authorization: AUTH }));
  assert.deepEqual(await challengeFirst(), [401, 200]);
  assert.deepEqual(await statuses(8, status, () => office), Array(8).fill(401), 'the neighbour, on either worker');
  assert.deepEqual(await challengeFirst(), [401, 200], 'its first request got 429');
  const stranger = () => ({ 'x-forwarded-for': '198.51.100.1' });
  // A worker tells the primary of a request without credentials after answering it, and
  // hears the block back: under load the next request may reach the other worker first.
  // Once per service, not once per worker (that would be six 401s).
  const seen = await statuses(6, status, stranger);
  assert.deepEqual(seen.slice(0, 3), [401, 401, 401], String(seen));
  assert.deepEqual(seen.slice(4), [429, 429], String(seen));
});

/** The admin listener's count of open connections on the API listener. */
async function openConnections(admin: string): Promise<number> {
  const match = /^booking_search_open_connections (\d+)$/m.exec((await request(`${admin}/metrics`)).body);
  assert.ok(match !== null);
  return Number(match[1]);
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
    await until(async () => (await openConnections(admin)) === 1, 'one connection open');
    socket.write(head, () => socket.resetAndDestroy());
    await waitFor(() => server.output().stdout, / GET \/api\/v1\/status /, i);
    await until(async () => (await openConnections(admin)) === 0, 'no connection open');
  }
  const lines = server
    .output()
    .stdout.split('\n')
    .filter((line) => line.includes(' GET /api/v1/status '));
  assert.equal(lines.length, 11);
  for (const line of lines) assert.match(line, new RegExp(`^${TIME} 127\\.0\\.0\\.1 (kasse|-) GET /api/v1/status `));
  assert.equal((await request(status, { headers: { authorization: AUTH } })).status, 429, 'the 12th, right password');
});

/** A worker's resident memory in kB (/proc/PID/status, VmRSS). */
function residentKb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(match !== null);
  return Number(match[1]);
}

/** A connection to `port` that a worker has taken: it has answered a HEAD request. */
async function connected(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1').on('error', () => {});
  await once(socket, 'connect');
  socket.write('HEAD /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  let head = '';
  while (!head.includes('\r\n\r\n')) head += String((await once(socket, 'data'))[0]);
  return socket;
}

/**
 * Up to `count` requests pipelined on `socket` in batches of 50, with `headers(i)`, until
 * it closes (a 429 closes it) or answers nothing for 10 s; the statuses seen, by status.
 */
async function pipelined(socket: Socket, count: number, headers: (i: number) => string): Promise<Map<number, number>> {
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    text += chunk;
  });
  let open = !socket.destroyed;
  socket.once('close', () => {
    open = false;
  });
  const answers = (): number => (text.match(/HTTP\/1\.1 /g) ?? []).length;
  for (let sent = 0; open && sent < count; ) {
    const batch = Math.min(50, count - sent);
    let requests = '';
    for (let i = 0; i < batch; i += 1) {
      requests += `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers(sent + i)}\r\n`;
    }
    sent += batch;
    socket.write(requests);
    const deadline = Date.now() + 10_000;
    while (open && answers() < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    if (answers() < sent) break;
  }
  socket.destroy();
  const seen = new Map<number, number>();
  for (const [, status] of text.matchAll(/HTTP\/1\.1 (\d{3})/g))
    seen.set(Number(status), (seen.get(Number(status)) ?? 0) + 1);
  return seen;
}

/** Stops the service's primary (SIGSTOP) until the function returned, or the test's end, lets it go on. */
function stopPrimary(t: TestContext, server: Running): () => void {
  const primary = server.child.pid as number;
  process.kill(primary, 'SIGSTOP');
  let stopped = true;
  const goOn = (): void => {
    if (stopped) process.kill(primary, 'SIGCONT');
    stopped = false;
  };
  t.after(goOn);
  return goOn;
}

test('--workers 2 with the primary stopped: what a worker queues for it is bounded, and past the bound the worker refuses with 429 on its own; the service recovers when the primary goes on', async (t) => {
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--workers', '2', '--trust-proxy', '127.0.0.1'],
    cleanEnv(USER),
  );
  const port = Number(new URL(server.api).port);
  const pids = /\(pids (\d+), (\d+)\)/.exec(server.output().stdout);
  assert.ok(pids !== null, server.output().stdout);
  const workers = [Number(pids[1]), Number(pids[2])];
  const status = `${server.api}status`;
  assert.equal((await request(status, { headers: { authorization: AUTH } })).status, 200);
  // The primary hands out new connections (node:cluster's round robin): these are open before it stops.
  const sockets = await Promise.all(Array.from({ length: 8 }, () => connected(port)));
  const before = workers.map(residentKb);
  const goOn = stopPrimary(t, server);
  // Three addresses without credentials, two connections each, and one with wrong passwords, in parallel.
  const bursts = await Promise.all(
    sockets.map((socket, i) =>
      i < 6
        ? pipelined(socket, 20_000, () => `X-Forwarded-For: 192.0.2.${i % 3}\r\n`)
        : pipelined(
            socket,
            200,
            (j) => `X-Forwarded-For: 192.0.2.4\r\nAuthorization: ${basicAuth('kasse', `falsch${j}`)}\r\n`,
          ),
    ),
  );
  const after = workers.map(residentKb);
  goOn();
  for (const seen of bursts.slice(0, 6)) assert.ok((seen.get(429) ?? 0) > 0, `some 429: ${JSON.stringify([...seen])}`);
  for (const seen of bursts.slice(6)) {
    assert.deepEqual([...seen.keys()], [429], `wrong passwords are refused: ${JSON.stringify([...seen])}`);
  }
  // Said by the worker that refused them, once until the primary answers again.
  const said = server.output().stderr.match(/worker \d+: .*: credentials get 429 until the primary answers\n/g) ?? [];
  assert.ok(said.length >= 1 && said.length <= 2, server.output().stderr);
  // What the burst costs a worker's resident memory whatever it queues (its sockets, parsers
  // and answers: 16 to 41 MB on a 2-core machine), well below its growth when it queues every
  // message for the stopped primary (65 to 120 MB, with notifications not dropped while behind).
  for (const [i, kb] of after.entries()) {
    assert.ok(kb - (before[i] as number) < 50_000, `worker ${i}: ${before[i]} kB before, ${kb} kB after`);
  }
  // The primary goes on: a client with the right password, from a new address, gets in.
  const deadline = Date.now() + 10_000;
  let reply = await request(status, { headers: { authorization: AUTH, 'x-forwarded-for': '192.0.2.9' } });
  while (reply.status !== 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    reply = await request(status, { headers: { authorization: AUTH, 'x-forwarded-for': '192.0.2.9' } });
  }
  assert.equal(reply.status, 200);
});

/** One request on a kept-alive `socket` with `headers`: its status and head, within `seconds`. */
async function exchange(socket: Socket, headers: string, seconds = 10): Promise<{ status: number; head: string }> {
  let text = '';
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error): void => {
      clearTimeout(timer);
      socket.off('data', read).off('close', closed);
      if (error === undefined) resolve();
      else reject(error);
    };
    const read = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/^content-length: *(\d+)/im.exec(text)?.[1]);
      if (end >= 0 && text.length >= end + 4 + length) done();
    };
    const closed = (): void => done(new Error(`closed before an answer to ${headers}: ${text}`));
    const timer = setTimeout(() => done(new Error(`no answer to ${headers} in ${seconds} s: ${text}`)), seconds * 1000);
    socket.on('data', read).on('close', closed);
    socket.write(`GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`);
  });
  return { status: Number(text.slice(9, 12)), head: text.slice(0, text.indexOf('\r\n\r\n')) };
}

test('--workers 2 with the primary stopped: the right password of a client never seen at its address is refused as a wrong one (429, Retry-After 1), so the login is no oracle; a known client gets in', async (t) => {
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--workers', '2', '--trust-proxy', '127.0.0.1'],
    cleanEnv(USER),
  );
  const port = Number(new URL(server.api).port);
  const from = (address: string, authorization?: string) =>
    `X-Forwarded-For: ${address}\r\n${authorization === undefined ? '' : `Authorization: ${authorization}\r\n`}`;
  // Connections dealt to both workers before the primary stops; the client logs in on each.
  const sockets = await Promise.all(Array.from({ length: 4 }, () => connected(port)));
  for (const socket of sockets) assert.equal((await exchange(socket, from('192.0.2.8', AUTH))).status, 200);
  const goOn = stopPrimary(t, server);
  const answers = await Promise.all(
    sockets.map(async (socket, i) => {
      const known = await exchange(socket, from('192.0.2.8', AUTH));
      // Each reservation waits 5 s for the primary; those of the same credentials on one worker, in turn.
      const right = await exchange(socket, from(`198.51.100.${i}`, AUTH), 25);
      return { known: known.status, right: right.status, retry: /^retry-after: (\d+)$/im.exec(right.head)?.[1] };
    }),
  );
  goOn();
  for (const socket of sockets) socket.destroy();
  assert.deepEqual(answers, Array(4).fill({ known: 200, right: 429, retry: '1' }));
});
