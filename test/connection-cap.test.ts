// The bounds on a server's connections (lib/connection-cap.ts), put on by protectServer: at
// the cap, or at an address's share, a new connection closes one (of all, or of that
// address's): a stranger's, or one of a user holding more than half the bound, before one a
// login passed on, within each the one that has waited longest for its answer — in its
// first headers since it was accepted, in a body since it began, idle since its last answer —
// never one being answered; when every one has a request being answered, the new one is
// closed, unanswered. At the stop, every connection with no
// request being answered is closed at once.

import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import type { ConnectionBounds } from '../lib/connection-cap.js';
import { createHandler } from '../lib/index.js';
import { protectServer } from '../lib/protocol-errors.js';
import { AUTH, buildDatabase, CREDENTIALS, openReadOnly } from './support/helpers.js';

const HEAD = 'GET / HTTP/1.1\r\nHost: x\r\n';
const HOLD = 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n';
/** A request whose body never ends: a reconciliation's that stops after its first bytes. */
const BODY =
  'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"zeilen":[';

/**
 * A server under `bounds` that answers `/hold` and a POST, whose body it reads, only when the
 * test says (`held`), or that serves a `book` (the handler from `createHandler`, over the
 * reconciliation's fixture), and how the test reaches it; everything is closed after the test.
 */
async function serve(t: TestContext, bounds: ConnectionBounds, book = false) {
  const held: ServerResponse[] = [];
  const server = createServer();
  const closeWaiting = protectServer(
    server,
    book
      ? createHandler(openReadOnly(t, buildDatabase(t, ['schema.sql', 'abgleich.sql'])), CREDENTIALS)
      : (req, res) => {
          req.resume();
          if (req.url === '/hold' || req.method === 'POST') held.push(res);
          else res.end('ok');
        },
    bounds,
  );
  // Headers that never end hold a connection (the timeouts are the listener's, not tested here).
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets: Socket[] = [];
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  /** A connection from `localAddress`, collecting what comes back. */
  const connectFrom = (localAddress: string): Socket & { text: string } => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }) as Socket & { text: string };
    socket.text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (socket.text += chunk));
    socket.on('error', () => undefined);
    sockets.push(socket);
    return socket;
  };
  /** A connection from `localAddress` that has written `bytes` and read what came back, once the server has them. */
  const open = async (bytes: string, localAddress = '127.0.0.1'): Promise<Socket & { text: string }> => {
    const socket = connectFrom(localAddress);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(bytes);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return socket;
  };
  const closed = (socket: Socket): Promise<boolean> =>
    new Promise((resolve) => {
      if (socket.destroyed) return resolve(true);
      const timer = setTimeout(() => resolve(false), 2_000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  /** What a request from `localAddress` that closes its connection gets: its text, or '' when closed unanswered. */
  const ask = async (localAddress: string): Promise<string> => {
    const socket = await open(`${HEAD}Connection: close\r\n\r\n`, localAddress);
    await closed(socket);
    return socket.text;
  };
  const count = (): Promise<number> => new Promise((resolve) => server.getConnections((_e, n) => resolve(n)));
  /** Until the server holds `n` connections (a closed one is gone from it a moment after its client's). */
  const until = async (n: number): Promise<void> => {
    for (let i = 0; i < 200 && (await count()) !== n; i += 1) await new Promise((r) => setTimeout(r, 10));
    assert.equal(await count(), n);
  };
  return { held, connectFrom, open, closed, ask, until, closeWaiting };
}

test('at the cap a new connection closes the one that has waited longest: idle since its answer, in a body since it began, in headers since accepted; never one being answered', async (t) => {
  const { held, open, closed } = await serve(t, { most: 8, proxies: [], cap: 4 });
  const answering = await open(HOLD);
  const idle = await open(`${HEAD}\r\n`);
  assert.match(idle.text, /^HTTP\/1\.1 200 /);
  const readingBody = await open(BODY);
  const slow = await open(HEAD);
  // Full: the idle one waits since its answer, before the body began and the slow one was accepted.
  const first = await open(HOLD);
  assert.ok(await closed(idle), 'the one idle since before the others is closed');
  const second = await open(HOLD);
  assert.ok(await closed(readingBody), 'then the one whose body began next');
  const third = await open(`${HEAD}\r\n`);
  assert.match(third.text, /^HTTP\/1\.1 200 /, 'the new connection is answered');
  assert.ok(await closed(slow), 'then the one in its first headers since it was accepted');
  const fourth = await open(HOLD);
  assert.ok(await closed(third), 'then the one answered since');
  // Every connection has a request being answered: a new one is closed, unanswered.
  const refused = await open(`${HEAD}\r\n`);
  assert.ok(await closed(refused), 'beyond the cap with nothing to close, closed');
  assert.equal(refused.text, '');
  for (const kept of [answering, first, second, fourth]) assert.equal(kept.destroyed, false);
  assert.equal(held.length, 5);
});

test("an upload under way is not closed for a new connection while others idle since their answers: at the cap and at one address's share, the one idle longest is", async (t) => {
  const { held, open, closed, ask } = await serve(t, { most: 5, proxies: [], cap: 6 });
  // Clients without credentials, each answered once and idle since, from five addresses; then an upload begins.
  const idle: Socket[] = [];
  for (let i = 31; i <= 35; i += 1) idle.push(await open(`${HEAD}\r\n`, `127.0.0.${i}`));
  const upload = await open(BODY);
  assert.match(await ask('127.0.0.36'), /^HTTP\/1\.1 200 /, 'a new connection at the cap is answered');
  assert.ok(await closed(idle[0] as Socket), 'the one idle longest is closed for it');
  assert.equal(upload.destroyed, false, 'the upload goes on');
  // Behind one address (a NAT): its share idle but for one upload, and one more of its clients.
  const nat = await serve(t, { most: 3, proxies: [] });
  const natIdle = [await nat.open(`${HEAD}\r\n`, '127.0.0.5'), await nat.open(`${HEAD}\r\n`, '127.0.0.5')];
  const natUpload = await nat.open(BODY, '127.0.0.5');
  assert.match(await nat.ask('127.0.0.5'), /^HTTP\/1\.1 200 /, "a new connection at the address's share is answered");
  assert.ok(await nat.closed(natIdle[0] as Socket), "the address's one idle longest is closed for it");
  for (const kept of [upload, natUpload, natIdle[1] as Socket]) assert.equal(kept.destroyed, false);
  assert.equal(held.length + nat.held.length, 2);
});

test('a client that opens a connection for each request gets its answers while others reconnect at the cap, each asking at once and idle after', async (t) => {
  const { connectFrom, closed } = await serve(t, { most: 100, proxies: [], cap: 10 });
  // Twelve clients for ten places: each closed one connects again 10 ms later, until the end.
  let stopped = false;
  let connections = 0;
  const reconnecting = (address: string): void => {
    connections += 1;
    const socket = connectFrom(address);
    socket.once('connect', () => socket.write(`${HEAD}\r\n`));
    socket.once('close', () => void (stopped || setTimeout(() => stopped || reconnecting(address), 10)));
  };
  t.after(() => (stopped = true));
  for (let i = 0; i < 12; i += 1) reconnecting(`127.0.0.${31 + (i % 6)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // Its request at once, or 10 ms after its connection (a client that connects before it knows what to ask).
  const answers: string[] = [];
  const before = connections;
  for (let i = 0; i < 20; i += 1) {
    const socket = connectFrom('127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    if (i % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 10));
    socket.write(`${HEAD}Connection: close\r\n\r\n`);
    await closed(socket);
    answers.push(socket.text.slice(0, 15));
  }
  stopped = true;
  assert.ok(connections - before >= 10, 'the others reconnected all the while');
  assert.deepEqual(answers, Array(20).fill('HTTP/1.1 200 OK'));
});

test("connections whose bodies never end lock no client out: at the cap and at one address's share a new client is answered, and the one whose body began first is closed for it", async (t) => {
  const { held, closed, open, ask, until } = await serve(t, { most: 3, proxies: [], cap: 6 });
  // Two addresses hold the cap, each its share, in bodies that never end (the handler reads them).
  const bodies: Socket[] = [];
  for (const address of ['127.0.0.2', '127.0.0.3'])
    for (let i = 0; i < 3; i += 1) bodies.push(await open(BODY, address));
  assert.equal(held.length, 6);
  assert.match(await ask('127.0.0.4'), /^HTTP\/1\.1 200 /, 'another client is answered at the cap');
  assert.ok(await closed(bodies[0] as Socket), 'the body begun first is closed for it');
  await until(5);
  // Behind the same address (an office's NAT), a colleague is answered too.
  assert.match(await ask('127.0.0.3'), /^HTTP\/1\.1 200 /, "answered at the address's share");
  assert.ok(await closed(bodies[3] as Socket), "the address's body begun first is closed for it");
  for (const kept of [...bodies.slice(1, 3), ...bodies.slice(4)]) assert.equal(kept.destroyed, false);
});

test('among idle connections the one idle longest is closed, not the first accepted, which a busy client keeps using', async (t) => {
  const { open, closed } = await serve(t, { most: 8, proxies: [], cap: 3 });
  const busy = await open(`${HEAD}\r\n`);
  const quiet = await open(`${HEAD}\r\n`);
  await open(HOLD);
  // The busy client's next request, answered: its connection has been idle for less time.
  busy.write(`${HEAD}\r\n`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(busy.text.match(/HTTP\/1\.1 200 /g)?.length, 2);
  const next = await open(`${HEAD}\r\n`);
  assert.match(next.text, /^HTTP\/1\.1 200 /);
  assert.ok(await closed(quiet), 'the one idle longest is closed');
  assert.equal(busy.destroyed, false, "the busy client's connection is kept");
});

test("at its share an address's new connection closes that address's that has waited longest, never one being answered; other addresses and the proxies are not counted", async (t) => {
  const { held, open, closed, ask, until } = await serve(t, { most: 2, proxies: ['127.0.0.4'] });
  // One client of 127.0.0.2 holds the address's share in headers that never end: another
  // client there is answered, and the first of those is closed for it (it was refused).
  const slow = [await open(HEAD, '127.0.0.2'), await open(HEAD, '127.0.0.2')];
  assert.match(await ask('127.0.0.2'), /^HTTP\/1\.1 200 /, 'answered at a full share');
  assert.ok(await closed(slow[0] as Socket), 'the one in headers since first is closed');
  await until(1);
  // In headers since before the idle one's answer: closed first; never one being answered.
  const idle = await open(`${HEAD}\r\n`, '127.0.0.2');
  const answering = await open(HOLD, '127.0.0.2');
  assert.ok(await closed(slow[1] as Socket), 'the other one in headers is closed for the held request');
  assert.equal(idle.destroyed, false);
  assert.match(await ask('127.0.0.2'), /^HTTP\/1\.1 200 /);
  assert.ok(await closed(idle), 'then the idle one');
  await until(1);
  // Both of the address's connections are being answered: a new one is closed unanswered.
  await open(HOLD, '127.0.0.2');
  assert.equal(await ask('127.0.0.2'), '', 'closed unanswered');
  assert.equal(answering.destroyed, false);
  assert.equal(held.length, 2);

  // Another address is not held to 127.0.0.2's share, and a proxy has none.
  const other = await open(HEAD, '127.0.0.3');
  await open(HEAD, '127.0.0.3');
  assert.match(await ask('127.0.0.3'), /^HTTP\/1\.1 200 /);
  assert.ok(await closed(other));
  const proxied = await open(HEAD, '127.0.0.4');
  for (let i = 0; i < 3; i += 1) await open(HEAD, '127.0.0.4');
  assert.match(await ask('127.0.0.4'), /^HTTP\/1\.1 200 /, 'a proxy has no share');
  assert.equal(proxied.destroyed, false, 'nothing of the proxy is closed');
});

/** A logged-in request for the status, `Connection: close` if `close`. */
const status = (close: boolean): string =>
  `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
const pause = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

test("strangers reconnecting at the cap close only strangers: a logged-in upload, a logged-in client's idle keep-alive connection and a fresh connection asking at once are answered", async (t) => {
  const { connectFrom, closed } = await serve(t, { most: 5, proxies: [], cap: 10 }, true);
  // Bare connections from two addresses, twelve for the ten places: each sends nothing or half
  // a header line and never gets past the login; each closed one connects again 5 ms later.
  let stopped = false;
  let connections = 0;
  const churn = (address: string, half: boolean): void => {
    connections += 1;
    const socket = connectFrom(address);
    if (half) socket.once('connect', () => socket.write('GET /api/v1/status HT'));
    socket.once('close', () => void (stopped || setTimeout(() => stopped || churn(address, half), 5)));
  };
  t.after(() => (stopped = true));
  for (let i = 0; i < 12; i += 1) churn(`127.0.0.${2 + (i % 2)}`, i % 4 < 2);
  await pause(100);
  const before = connections;
  const lines = Array(40).fill({ datum: '2026-06-10', betrag: '20' });
  const body = Buffer.from(JSON.stringify({ zeilen: lines }));
  // (a) An upload, its body in ten parts over a second.
  const upload = async (): Promise<string> => {
    const socket = connectFrom('127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    for (let i = 0; i < 10; i += 1) {
      await pause(100);
      if (!socket.destroyed) socket.write(body.subarray((i * body.length) / 10, ((i + 1) * body.length) / 10));
    }
    await closed(socket);
    return socket.text.slice(0, 15);
  };
  // (b) A keep-alive client thinking 300 ms between its requests, far longer than a stranger stays.
  const keptAlive = async (): Promise<[number, boolean]> => {
    const socket = connectFrom('127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    for (let i = 0; i < 4; i += 1) {
      if (i > 0) await pause(300);
      if (!socket.destroyed) socket.write(status(false));
    }
    await pause(50);
    return [socket.text.match(/HTTP\/1\.1 200 /g)?.length ?? 0, socket.destroyed];
  };
  // (c) Fresh connections, each asking at once.
  const fresh = async (): Promise<string[]> => {
    const answers: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const socket = connectFrom('127.0.0.1');
      socket.once('connect', () => socket.write(status(true)));
      await closed(socket);
      answers.push(socket.text.slice(0, 15));
      await pause(50);
    }
    return answers;
  };
  const [uploaded, [answered, dropped], asked] = await Promise.all([upload(), keptAlive(), fresh()]);
  stopped = true;
  assert.ok(connections - before >= 100, `the strangers reconnected all the while (${connections - before})`);
  assert.equal(uploaded, 'HTTP/1.1 200 OK', 'the upload is answered');
  assert.deepEqual([answered, dropped], [4, false], 'the keep-alive client keeps its one connection');
  assert.deepEqual(asked, Array(10).fill('HTTP/1.1 200 OK'), 'each fresh connection is answered');
});

test('one user holds the logged-in rank for no more than half the cap: his own connections reopened steadily close his oldest, and a fresh connection asking after a while is answered', async (t) => {
  const { connectFrom, closed, open } = await serve(t, { most: 4, proxies: [], cap: 8 }, true);
  // One user fills the cap from two addresses, each its share, with logged-in keep-alive connections.
  for (const address of ['127.0.0.2', '127.0.0.3']) for (let i = 0; i < 4; i += 1) await open(status(false), address);
  // Then he opens another, logged in at once, every 20 ms, from each address in turn.
  let stopped = false;
  let connections = 0;
  const churn = (): void => {
    if (stopped) return;
    const socket = connectFrom(`127.0.0.${2 + (connections % 2)}`);
    connections += 1;
    socket.once('connect', () => socket.write(status(false)));
    setTimeout(churn, 20);
  };
  t.after(() => (stopped = true));
  churn();
  await pause(100);
  // Fresh connections, each asking 60 ms after it connected: longer than his interval.
  const answers: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const socket = connectFrom('127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    await pause(60);
    if (!socket.destroyed) socket.write(status(true));
    await closed(socket);
    answers.push(socket.text.slice(0, 15));
  }
  stopped = true;
  assert.ok(connections >= 15, `he reconnected all the while (${connections})`);
  assert.deepEqual(answers, Array(5).fill('HTTP/1.1 200 OK'), 'each fresh connection is answered');
});

test('at the stop every connection with no request being answered is closed at once: idle, silent, or still in its headers', async (t) => {
  const { held, open, closed, until, closeWaiting } = await serve(t, { most: 8, proxies: [] });
  const answering = await open(HOLD);
  const readingBody = await open('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{');
  const waiting = [await open(''), await open(HEAD), await open(`${HEAD}\r\n`), await open(`${HEAD}\r\n${HEAD}`)];
  closeWaiting();
  for (const socket of waiting) assert.ok(await closed(socket), 'a waiting connection is closed');
  await until(2);
  for (const kept of [answering, readingBody]) assert.equal(kept.destroyed, false);
  assert.equal(held.length, 2);
});
