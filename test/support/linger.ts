// Clients that send a body the server answers before reading it (lib/linger.ts): one that
// writes all of it before it reads, as Python's urllib does, one that writes it while it
// reads, as Node's http.request does, and one whose body never ends.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest, type RequestOptions, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { LINGER_BYTES, LINGER_MS, PIECE_BYTES } from '../../lib/linger.js';

/** How often a client that writes all first is answered before the test is sure it always is. */
const TRIES = 20;

/** How a body is sent: `chunked` in chunks of 64 KiB, else with a Content-Length; `code`: the one its answer must carry. */
export interface Sent {
  chunked?: boolean;
  code?: string;
}

/** `bytes` of body, as `chunked` says, and the header that announces it. */
function framed(bytes: number, chunked: boolean): [string, Buffer] {
  if (!chunked) return [`Content-Length: ${bytes}\r\n`, Buffer.alloc(bytes, 0x20)];
  const parts: Buffer[] = [];
  for (let left = bytes; left > 0; left -= 0x10000) {
    const size = Math.min(left, 0x10000);
    parts.push(Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x20), Buffer.from('\r\n'));
  }
  return ['Transfer-Encoding: chunked\r\n', Buffer.concat([...parts, Buffer.from('0\r\n\r\n')])];
}

/**
 * `request` ("POST /path") with `headers` and `bytes` bytes of body as urllib sends it: its
 * head, then the body, written whole (here after the server had time to answer the head)
 * before anything is read. The status of the answer (with what it lacks if not `sent.code`),
 * or the error that ended the write.
 */
async function writeAllThenRead(
  port: number,
  tls: boolean,
  request: string,
  headers: string,
  bytes: number,
  sent: Sent,
): Promise<number | string> {
  const socket = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
  const failed = once(socket, 'error').then(([error]) => (error as NodeJS.ErrnoException).code ?? 'error');
  socket.pause();
  const [announce, body] = framed(bytes, sent.chunked === true);
  const answer = (async (): Promise<number | string> => {
    await once(socket, tls ? 'secureConnect' : 'connect');
    socket.write(`${request} HTTP/1.1\r\nHost: localhost\r\n${headers}${announce}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => socket.write(body, resolve));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await once(socket, 'end');
    const text = Buffer.concat(chunks).toString('utf8');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
    return sent.code === undefined || text.endsWith(`"code":"${sent.code}"}`)
      ? status
      : `${status} without ${sent.code}`;
  })();
  try {
    return await Promise.race([answer, failed]);
  } finally {
    socket.destroy();
  }
}

/** A client that writes all of `bytes` first, sent as `sent` says (above), reads `status`, every one of TRIES times. */
export async function answeredEveryTime(
  port: number,
  tls: boolean,
  request: string,
  headers: string,
  bytes: number,
  status: number,
  sent: Sent = {},
): Promise<void> {
  const statuses: Array<number | string> = [];
  for (let i = 0; i < TRIES; i += 1) statuses.push(await writeAllThenRead(port, tls, request, headers, bytes, sent));
  assert.deepEqual(statuses, Array(TRIES).fill(status));
}

/**
 * A request sent by Node's http.request as `options` say, as a client that streams its body:
 * `bytes` (a multiple of 16 KiB) written in pieces of 16 KiB without waiting for the answer,
 * and the answer read as it comes. Its status and body, or the error that ended the request.
 */
function streamWhileReading(options: RequestOptions, bytes: number): Promise<string> {
  return new Promise((resolve) => {
    const request = httpRequest(options);
    const failed = (error: NodeJS.ErrnoException): void => resolve(error.code ?? error.message);
    request.on('error', failed);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(`${response.statusCode} ${body}`));
      response.on('error', failed);
    });
    const piece = Buffer.alloc(16 * 1024, 0x20);
    for (let sent = 0; sent < bytes; sent += piece.length) request.write(piece);
    request.end();
  });
}

/**
 * `path` posted with `headers` and `bytes` of body, chunked unless `announced` (then with a
 * Content-Length), by a client that streams it (above), is answered with `answer` (status and
 * body) every one of TRIES times.
 */
export async function streamedAnsweredEveryTime(
  port: number,
  path: string,
  headers: Record<string, string>,
  [bytes, announced]: [number, boolean],
  answer: string,
): Promise<void> {
  const length = announced ? { 'Content-Length': String(bytes) } : {};
  const options = { host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { ...headers, ...length } };
  const answers: string[] = [];
  for (let i = 0; i < TRIES; i += 1) answers.push(await streamWhileReading(options, bytes));
  assert.deepEqual(answers, Array(TRIES).fill(answer));
}

/** What a server read of each connection, in the order they close: `readOf(n)` waits for the n-th. */
export interface Listening {
  port: number;
  readOf: (connection: number) => Promise<number>;
}

/** `server` on 127.0.0.1 at a free port until the test ends, what it reads of each connection counted. */
export async function listenCounting(t: TestContext, server: Server): Promise<Listening> {
  const read: number[] = [];
  server.on('connection', (socket: Socket) => socket.on('close', () => read.push(socket.bytesRead)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.closeAllConnections());
  const readOf = async (connection: number): Promise<number> => {
    while (read.length <= connection) await new Promise((resolve) => setTimeout(resolve, 10));
    return read[connection] ?? 0;
  };
  return { port: (server.address() as AddressInfo).port, readOf };
}

/** `event` of `socket`: unlike `once`, an 'error' (the server closed it) does not reject it. */
const heard = (socket: Socket, event: string): Promise<unknown> =>
  new Promise((resolve) => socket.once(event, resolve));

/**
 * Sends `head`, and once the answer's status line is read, `piece` after `piece` of body, one
 * each `pauseMs` (as fast as taken if 0), until the server closes the connection (or 20 s
 * pass); resolves with the status line it answered and how long after it the connection was
 * closed.
 */
async function sendEndlessly(
  port: number,
  head: string,
  piece: string,
  pauseMs: number,
  untilMs = 20_000,
): Promise<[string, number]> {
  // Half open, as a client that never reads: the server's end of its answer does not end it.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  let answer = '';
  const statusLine = new Promise<void>((resolve) =>
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\r\n')) resolve();
    }),
  );
  // Closed by the server, the client's writes fail: its 'error' is heard above.
  const closed = heard(socket, 'close');
  await once(socket, 'connect');
  socket.write(head);
  await Promise.race([statusLine, closed]);
  const started = performance.now();
  while (!socket.destroyed && performance.now() - started < untilMs) {
    if (!socket.write(piece)) await Promise.race([heard(socket, 'drain'), closed]);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  socket.destroy();
  await closed;
  return [answer.slice(0, answer.indexOf('\r\n')), performance.now() - started];
}

/**
 * A body that never ends, sent as `request` ("POST /path") to a server whose request timeout is
 * `timeoutMs`, listening as `listening` says (no connection to it before), is answered with
 * `statusLine` and cut off: chunked in chunks of a byte (a parser callback each), after
 * LINGER_BYTES / PIECE_BYTES of them; announced by a Content-Length of LINGER_BYTES, sent
 * fast, where it ends; slowly, by the request timeout; announced larger, after LINGER_BYTES.
 */
export async function assertEndlessBodyCutOff(
  { port, readOf }: Listening,
  request: string,
  statusLine: string,
  timeoutMs: number,
): Promise<void> {
  const announced = (bytes: number): string =>
    `${request} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${bytes}\r\n\r\n`;
  const spaces = ' '.repeat(0x10000);
  const chunked = `${request} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const [tinyStatus, tinyMs] = await sendEndlessly(port, chunked, '1\r\na\r\n'.repeat(10_000), 0);
  assert.equal(tinyStatus, statusLine);
  assert.ok(tinyMs < 1_000, `closed after ${tinyMs} ms`);
  const tinyRead = await readOf(0);
  const pieces = (LINGER_BYTES / PIECE_BYTES) * '1\r\na\r\n'.length;
  assert.ok(tinyRead > pieces && tinyRead < pieces + 128 * 1024, `the server read ${tinyRead} bytes`);

  const [status, ms] = await sendEndlessly(port, announced(LINGER_BYTES), spaces, 0);
  assert.equal(status, statusLine);
  const fast = await readOf(1);
  assert.ok(fast > LINGER_BYTES && fast < LINGER_BYTES + 256 * 1024, `the server read ${fast} bytes`);
  assert.ok(ms < timeoutMs - 500, `closed after ${ms} ms`);

  const [slowStatus, slowMs] = await sendEndlessly(port, announced(LINGER_BYTES), ' '.repeat(1024), 20);
  assert.equal(slowStatus, statusLine);
  assert.ok(slowMs > timeoutMs - 500 && slowMs < timeoutMs + 3_000, `closed after ${slowMs} ms`);
  assert.ok((await readOf(2)) < LINGER_BYTES / 4);

  const [hugeStatus, hugeMs] = await sendEndlessly(port, announced(100 * 2 ** 30), spaces, 0);
  assert.equal(hugeStatus, statusLine);
  assert.ok(hugeMs < 1_000, `closed after ${hugeMs} ms`);
  const hugeRead = await readOf(3);
  assert.ok(hugeRead > LINGER_BYTES && hugeRead < LINGER_BYTES + 256 * 1024, `the server read ${hugeRead} bytes`);
}

/**
 * A body that trickles (a few hundred bytes a second, far from its end or LINGER_BYTES), sent
 * as `request` to a server whose request timeout is longer than LINGER_MS: cut off after
 * LINGER_MS, not by the timeout.
 */
export async function assertLingerBound({ port }: Listening, request: string, statusLine: string): Promise<void> {
  const head = `${request} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3000000\r\n\r\n`;
  const [status, ms] = await sendEndlessly(port, head, ' '.repeat(300), 500, LINGER_MS + 15_000);
  assert.equal(status, statusLine);
  assert.ok(ms > LINGER_MS - 500 && ms < LINGER_MS + 3_000, `closed after ${ms} ms`);
}

/**
 * `head` (a request with `Content-Length: 1`) is answered; then its body, and after it, as a
 * second write (`together`: in the same write) `count` requests of `size` bytes each
 * pipelined, and one more every 50 ms until the server has closed the connection (a client
 * whose writes the kernel took hears of the close at its next write), at most 5 s. Resolves
 * with all the server sent and how long after the body it closed.
 */
export async function pipelinedAfterBody(
  port: number,
  head: string,
  count: number,
  size: number,
  together: boolean,
): Promise<[string, number]> {
  // Half open, as a client that goes on sending: the server's end of its answer does not end it.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  let closedAt = Number.POSITIVE_INFINITY;
  const closed = heard(socket, 'close').then(() => (closedAt = performance.now()));
  await once(socket, 'connect');
  socket.write(head);
  while (!received.includes('\r\n\r\n') && !socket.destroyed) await new Promise((resolve) => setTimeout(resolve, 5));
  const status = 'GET /api/v1/status HTTP/1.1\r\nHost: localhost\r\n';
  const next = `${status}X-Pad: ${'p'.repeat(Math.max(0, size - 60))}\r\n\r\n`.repeat(count);
  const started = performance.now();
  socket.write(together ? `a${next}` : 'a');
  const pause = (ms: number): Promise<unknown> =>
    Promise.race([closed, new Promise((resolve) => setTimeout(resolve, ms))]);
  if (!together) {
    await pause(200);
    if (!socket.destroyed) socket.write(next);
  }
  while (!socket.destroyed && performance.now() - started < 5_000) {
    await pause(50);
    if (!socket.destroyed) socket.write(`${status}\r\n`);
  }
  socket.destroy();
  await closed;
  return [received, closedAt - started];
}
