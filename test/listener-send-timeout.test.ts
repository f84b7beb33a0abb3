// bin/listen/server.ts's socket timeout (--send-timeout) on a listener it made, in this
// process: a request whose answer takes longer than it (a heavy reconciliation) gets its
// answer, and one whose body stops coming is left to the request timeout and its 408, while
// a connection on which nothing moves and nothing is being answered is closed.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { type TestContext, test } from 'node:test';
import { createListener } from '../bin/listen/server.js';

const SEND_MS = 300;
const LIMITS = { headersMs: 5_000, requestMs: 5_000, keepAliveMs: 5_000, sendMs: SEND_MS, maxConnections: 10 };

async function listening(
  t: TestContext,
  handler: Parameters<typeof createListener>[0],
  limits: typeof LIMITS = LIMITS,
  requestTimeout = limits.requestMs,
): Promise<number> {
  const server = createListener(handler, { limits });
  // An embedder's server may have none (0); the command's always has one.
  server.requestTimeout = requestTimeout;
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

test('an answer that takes several send timeouts to compute is given, and the connection serves the next request', async (t) => {
  const port = await listening(t, (req, res) => {
    const delay = req.url === '/slow' ? 4 * SEND_MS : 0;
    setTimeout(() => res.end(req.url), delay);
  });
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
  const started = Date.now();
  while (!received.endsWith('/slow') && !socket.destroyed && Date.now() - started < 3_000)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.match(received, /^HTTP\/1\.1 200 [\s\S]*\/slow$/, 'the slow answer arrived');
  socket.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!received.endsWith('/next') && !socket.destroyed && Date.now() - started < 3_000)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(received.endsWith('/next'), 'the connection was kept for the next request');
});

test('a connection on which nothing is sent or answered is closed after the send timeout', async (t) => {
  const port = await listening(t, (_req, res) => res.end());
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const opened = Date.now();
  await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, 3_000))]);
  const closedAfter = Date.now() - opened;
  assert.ok(socket.destroyed, 'closed by the server');
  assert.ok(closedAfter >= SEND_MS - 50 && closedAfter < 2_000, `closed after ${closedAfter} ms`);
});

/** A server whose handler reads a request's body, as the reconciliation does, and a body that stops coming: when and how it ended. */
async function stalledBody(t: TestContext, limits: typeof LIMITS, requestTimeout?: number) {
  const port = await listening(t, (req, res) => req.resume().on('end', () => res.end('read')), limits, requestTimeout);
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.on('error', () => undefined);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  const opened = Date.now();
  socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"zeilen":[');
  await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, 4_000))]);
  assert.ok(socket.destroyed, 'closed by the server');
  return { closedAfter: Date.now() - opened, received };
}

test('a body that stops coming is not closed by the send timeout but answered 408 at the request timeout', async (t) => {
  const requestMs = 4 * SEND_MS;
  const { closedAfter, received } = await stalledBody(t, { ...LIMITS, headersMs: SEND_MS, requestMs });
  assert.ok(closedAfter >= requestMs - 50, `closed after ${closedAfter} ms, before the request timeout`);
  assert.match(received, /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*"code":"request_timeout"}$/);
});

test('on a server without a request timeout, a body that stops coming is closed by the send timeout', async (t) => {
  const { closedAfter, received } = await stalledBody(t, { ...LIMITS, headersMs: SEND_MS }, 0);
  assert.ok(closedAfter >= SEND_MS - 50 && closedAfter < 2_000, `closed after ${closedAfter} ms`);
  assert.equal(received, '');
});
