// The bounds on a server's connections (lib/connection-cap.ts), put on by protectServer: at
// the cap, or at an address's share, a new connection closes the one (of all, or of that
// address's) that has waited longest without a complete request, never one whose request is
// being answered (its body read by the handler included); when every one has a request
// being answered, the new one is closed, unanswered. At the stop, every connection with no
// request being answered is closed at once.

import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import type { ConnectionBounds } from '../lib/connection-cap.js';
import { protectServer } from '../lib/protocol-errors.js';

const HEAD = 'GET / HTTP/1.1\r\nHost: x\r\n';
const HOLD = 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n';

/**
 * A server under `bounds` that answers `/hold` and a POST whose body is read only when the
 * test says (`held`), and how the test reaches it; everything is closed after the test.
 */
async function serve(t: TestContext, bounds: ConnectionBounds) {
  const held: ServerResponse[] = [];
  const server = createServer();
  const closeWaiting = protectServer(
    server,
    (req, res) => (req.url === '/hold' || req.method === 'POST' ? held.push(res) : res.end('ok')),
    undefined,
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
  /** A connection from `localAddress` that has written `bytes` and read what came back, once the server has them. */
  const open = async (bytes: string, localAddress = '127.0.0.1'): Promise<Socket & { text: string }> => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }) as Socket & { text: string };
    socket.text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (socket.text += chunk));
    socket.on('error', () => undefined);
    sockets.push(socket);
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
  return { held, open, closed, ask, until, closeWaiting };
}

test('at the cap a new connection closes the one that has waited longest without a complete request, never one being answered', async (t) => {
  const { held, open, closed } = await serve(t, { most: 8, proxies: [], cap: 4 });
  const answering = await open(HOLD);
  const readingBody = await open('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{');
  const slow = await open(HEAD);
  const idle = await open(`${HEAD}\r\n`);
  assert.match(idle.text, /^HTTP\/1\.1 200 /);
  // Full: the slow one waited longest without a complete request (the idle one's last came later).
  const first = await open(`${HEAD}\r\n`);
  assert.ok(await closed(slow), 'the slow connection is closed');
  assert.match(first.text, /^HTTP\/1\.1 200 /, 'the new connection is answered');
  const second = await open(HOLD);
  assert.ok(await closed(idle), 'then the idle one');
  const third = await open(HOLD);
  assert.ok(await closed(first), 'then the one whose request was answered');
  // Every connection has a request being answered: a new one is closed, unanswered.
  const refused = await open(`${HEAD}\r\n`);
  assert.ok(await closed(refused), 'beyond the cap with nothing to close, closed');
  assert.equal(refused.text, '');
  for (const kept of [answering, readingBody, second, third]) assert.equal(kept.destroyed, false);
  assert.equal(held.length, 4);
});

test("at its share an address's new connection closes that address's that has waited longest (in headers, else idle), never one being answered; other addresses and the proxies are not counted", async (t) => {
  const { held, open, closed, ask, until } = await serve(t, { most: 2, proxies: ['127.0.0.4'] });
  // One client of 127.0.0.2 holds the address's share in headers that never end: another
  // client there is answered, and the first of those is closed for it (it was refused).
  const slow = [await open(HEAD, '127.0.0.2'), await open(HEAD, '127.0.0.2')];
  assert.match(await ask('127.0.0.2'), /^HTTP\/1\.1 200 /, 'answered at a full share');
  assert.ok(await closed(slow[0] as Socket), 'the first accepted in headers is closed');
  await until(1);
  // In headers before idle, idle before being answered.
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
