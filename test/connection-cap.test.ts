// The cap on a server's connections (lib/connection-cap.ts), put on by protectServer: at the
// cap a new connection closes the one that has waited longest without a complete request,
// never one whose request is being answered (its body read by the handler included); when
// every connection has a request being answered, the new one is closed, unanswered.

import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { protectServer } from '../lib/protocol-errors.js';

const HEAD = 'GET / HTTP/1.1\r\nHost: x\r\n';

test('at the cap a new connection closes the one that has waited longest without a complete request, never one being answered', async (t) => {
  const held: ServerResponse[] = [];
  // `/hold` and a POST whose body is read are answered only when the test says.
  const server = protectServer(
    createServer(),
    (req, res) => (req.url === '/hold' || req.method === 'POST' ? held.push(res) : res.end('ok')),
    undefined,
    { most: 8, proxies: [], cap: 4 },
  );
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets: Socket[] = [];
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  /** A connection that has written `bytes` and read what came back, once the service has it. */
  const open = async (bytes: string): Promise<Socket & { text: string }> => {
    const socket = connect({ port, host: '127.0.0.1' }) as Socket & { text: string };
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

  const answering = await open(`GET /hold HTTP/1.1\r\nHost: x\r\n\r\n`);
  const readingBody = await open('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{');
  const slow = await open(HEAD);
  const idle = await open(`${HEAD}\r\n`);
  assert.match(idle.text, /^HTTP\/1\.1 200 /);
  // Full: the slow one waited longest without a complete request (the idle one's last came later).
  const first = await open(`${HEAD}\r\n`);
  assert.ok(await closed(slow), 'the slow connection is closed');
  assert.match(first.text, /^HTTP\/1\.1 200 /, 'the new connection is answered');
  const second = await open(`GET /hold HTTP/1.1\r\nHost: x\r\n\r\n`);
  assert.ok(await closed(idle), 'then the idle one');
  const third = await open(`GET /hold HTTP/1.1\r\nHost: x\r\n\r\n`);
  assert.ok(await closed(first), 'then the one whose request was answered');
  // Every connection has a request being answered: a new one is closed, unanswered.
  const refused = await open(`${HEAD}\r\n`);
  assert.ok(await closed(refused), 'beyond the cap with nothing to close, closed');
  assert.equal(refused.text, '');
  for (const kept of [answering, readingBody, second, third]) assert.equal(kept.destroyed, false);
  assert.equal(held.length, 4);
});
