// An answer given before a request's body was read (the 401 challenge, 413, 415) reaches a
// client that writes its whole body before it reads, as Python's urllib does: the connection
// is closed only once the body has been read and dropped, within bounds in bytes and time
// (lib/linger.ts), not with the body's bytes unread, which reset it under the client's write.
// A body that never ends is still cut off within them.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { createHandler } from '../lib/index.js';
import { protectServer } from '../lib/internal.js';
import { LINGER_BYTES } from '../lib/linger.js';
import { makeCertificate } from './support/cli-helpers.js';
import { AUTH, CREDENTIALS, openFixture } from './support/helpers.js';

const REQUEST_TIMEOUT_MS = 3_000;
const TRIES = 20;

/** Behind the command's edge, over TLS too, or on a bare node:http server as an embedder wires it. */
type Kind = 'edge' | 'tls' | 'bare';

/** The service as `kind` says: its port, and what it read of each connection. */
async function serving(t: TestContext, kind: Kind): Promise<{ port: number; read: number[] }> {
  const handler = createHandler(openFixture(t), CREDENTIALS) as RequestListener;
  const options = { requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 500 };
  let server: Server = kind === 'bare' ? createServer(options, handler) : createServer(options);
  if (kind === 'tls') {
    const dir = mkdtempSync(join(tmpdir(), 'linger-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
    const [cert, key] = [readFileSync(join(dir, 'cert.pem')), readFileSync(join(dir, 'key.pem'))];
    server = createHttpsServer({ ...options, cert, key });
  }
  if (kind !== 'bare') protectServer(server, handler, { most: 64, proxies: [] });
  // What the server read of each connection, as each closes.
  const read: number[] = [];
  server.on('connection', (socket: Socket) => socket.on('close', () => read.push(socket.bytesRead)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.closeAllConnections());
  return { port: (server.address() as AddressInfo).port, read };
}

/**
 * A POST of `bytes` bytes of body to /api/v1/abgleich as urllib sends it: its head, then the
 * body, written whole (here after the server had time to answer the head) before anything is
 * read. The status of the answer, or the error that ended the write.
 */
async function writeAllThenRead(port: number, tls: boolean, headers: string, bytes: number): Promise<number | string> {
  const socket = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
  const failed = once(socket, 'error').then(([error]) => (error as NodeJS.ErrnoException).code ?? 'error');
  socket.pause();
  const answer = (async (): Promise<number> => {
    await once(socket, tls ? 'secureConnect' : 'connect');
    socket.write(`POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: ${bytes}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => socket.write(Buffer.alloc(bytes, 0x20), resolve));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await once(socket, 'end');
    return Number(/^HTTP\/1\.1 (\d{3}) /.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0);
  })();
  try {
    return await Promise.race([answer, failed]);
  } finally {
    socket.destroy();
  }
}

const WHERE: Record<Kind, string> = {
  edge: "behind the command's edge",
  tls: "over TLS, behind the command's edge",
  bare: 'on a bare node:http server',
};

for (const kind of ['edge', 'tls', 'bare'] as const) {
  test(`a client that writes its whole body before it reads gets the 401, 413 and 415 every time, ${WHERE[kind]}`, async (t) => {
    const { port } = await serving(t, kind);
    const tls = kind === 'tls';
    const json = 'Content-Type: application/json\r\n';
    await t.test('the challenge to ~1 MB sent without credentials', () => everyTime(port, tls, json, 1_000_000, 401));
    await t.test('the 413 to 2 MB', () => everyTime(port, tls, `Authorization: ${AUTH}\r\n${json}`, 2_000_000, 413));
    await t.test('the 415 to 600 KB not JSON', () =>
      everyTime(port, tls, `Authorization: ${AUTH}\r\nContent-Type: text/plain\r\n`, 600_000, 415),
    );
  });
}

async function everyTime(port: number, tls: boolean, headers: string, bytes: number, status: number): Promise<void> {
  const statuses: Array<number | string> = [];
  for (let i = 0; i < TRIES; i += 1) statuses.push(await writeAllThenRead(port, tls, headers, bytes));
  assert.deepEqual(statuses, Array(TRIES).fill(status));
}

/** `event` of `socket`: unlike `once`, an 'error' (the server closed it) does not reject it. */
const heard = (socket: Socket, event: string): Promise<unknown> =>
  new Promise((resolve) => socket.once(event, resolve));

/**
 * Sends `head`, then a body in chunks of `size` bytes, one each `pauseMs` (as fast as taken if
 * 0), until the server closes the connection (or 20 s pass); resolves with the status line it
 * answered and how long after the head the connection was closed.
 */
async function sendEndlessly(port: number, head: string, size: number, pauseMs: number): Promise<[string, number]> {
  // Half open, as a client that never reads: the server's end of its answer does not end it.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  let answer = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
  // Closed by the server, the client's writes fail: its 'error' is heard above.
  const closed = heard(socket, 'close');
  await once(socket, 'connect');
  const started = performance.now();
  socket.write(head);
  const chunk = `${size.toString(16)}\r\n${' '.repeat(size)}\r\n`;
  while (!socket.destroyed && performance.now() - started < 20_000) {
    if (!socket.write(chunk)) await Promise.race([heard(socket, 'drain'), closed]);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  socket.destroy();
  await closed;
  return [answer.slice(0, answer.indexOf('\r\n')), performance.now() - started];
}

test('a body that never ends is cut off: at LINGER_BYTES after the answer, or by the request timeout; a larger announced one at once', async (t) => {
  const { port, read } = await serving(t, 'edge');
  const readOf = async (connection: number): Promise<number> => {
    while (read.length <= connection) await new Promise((resolve) => setTimeout(resolve, 10));
    return read[connection] ?? 0;
  };
  const chunked = 'POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';
  const [status, ms] = await sendEndlessly(port, chunked, 0x10000, 0);
  assert.equal(status, 'HTTP/1.1 401 Unauthorized');
  const fast = await readOf(0);
  assert.ok(fast > LINGER_BYTES && fast < LINGER_BYTES + 256 * 1024, `the server read ${fast} bytes`);
  assert.ok(ms < REQUEST_TIMEOUT_MS - 500, `closed after ${ms} ms`);

  const [slowStatus, slowMs] = await sendEndlessly(port, chunked, 1024, 20);
  assert.equal(slowStatus, 'HTTP/1.1 401 Unauthorized');
  assert.ok(slowMs > REQUEST_TIMEOUT_MS - 500 && slowMs < REQUEST_TIMEOUT_MS + 3_000, `closed after ${slowMs} ms`);
  assert.ok((await readOf(1)) < LINGER_BYTES / 4);

  const huge = `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nContent-Length: ${100 * 2 ** 30}\r\n\r\n`;
  const [hugeStatus, hugeMs] = await sendEndlessly(port, huge, 0x10000, 0);
  assert.equal(hugeStatus, 'HTTP/1.1 401 Unauthorized');
  assert.ok(hugeMs < 2_000, `closed after ${hugeMs} ms`);
  assert.ok((await readOf(2)) < LINGER_BYTES, `the server read ${read[2]} bytes`);
});
