// An answer given before a request's body was read (the 401 challenge, 413, 415) reaches a
// client that writes its whole body before it reads, as Python's urllib does, or while it
// reads, as Node's http.request and Go's net/http do, chunked too: the connection is closed
// only once the body has been read and dropped, within bounds in bytes and time
// (lib/linger.ts), not with the body's bytes unread, which reset it under the client's write.
// A body that never ends is still cut off within them, and the connection closes where the
// body ends: nothing pipelined after it is answered or logged.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { createHandler } from '../lib/index.js';
import { ERRORS, protectServer } from '../lib/internal.js';
import { LINGER_MS } from '../lib/linger.js';
import { makeCertificate, start, USER, waitFor } from './support/cli-helpers.js';
import { AUTH, basicAuth, CREDENTIALS, openFixture } from './support/helpers.js';
import {
  answeredEveryTime,
  assertEndlessBodyCutOff,
  assertLingerBound,
  type Listening,
  listenCounting,
  pipelinedAfterBody,
  streamedAnsweredEveryTime,
} from './support/linger.js';

const REQUEST_TIMEOUT_MS = 3_000;
const ABGLEICH = 'POST /api/v1/abgleich';

/** Behind the command's edge, over TLS too, or on a bare node:http server as an embedder wires it. */
type Kind = 'edge' | 'tls' | 'bare';

/** The service as `kind` says, listening: its port, and what it read of each connection. */
async function serving(t: TestContext, kind: Kind, requestTimeout = REQUEST_TIMEOUT_MS): Promise<Listening> {
  const handler = createHandler(openFixture(t), CREDENTIALS) as RequestListener;
  const options = { requestTimeout, connectionsCheckingInterval: 500 };
  let server: Server = kind === 'bare' ? createServer(options, handler) : createServer(options);
  if (kind === 'tls') {
    const dir = mkdtempSync(join(tmpdir(), 'linger-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
    const [cert, key] = [readFileSync(join(dir, 'cert.pem')), readFileSync(join(dir, 'key.pem'))];
    server = createHttpsServer({ ...options, cert, key });
  }
  if (kind !== 'bare') protectServer(server, handler, { most: 64, proxies: [] });
  return listenCounting(t, server);
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
    const everyTime = (headers: string, bytes: number, status: number): Promise<void> =>
      answeredEveryTime(port, tls, ABGLEICH, headers, bytes, status);
    await t.test('the challenge to ~1 MB sent without credentials', () => everyTime(json, 1_000_000, 401));
    await t.test('the 413 to 2 MB', () => everyTime(`Authorization: ${AUTH}\r\n${json}`, 2_000_000, 413));
    await t.test('the 413 to 4 MiB chunked, read up to 1 MiB before it', () =>
      answeredEveryTime(port, tls, ABGLEICH, `Authorization: ${AUTH}\r\n${json}`, 4 * 2 ** 20, 413, {
        chunked: true,
        code: ERRORS.bodyTooLarge.code,
      }),
    );
    await t.test('the 415 to 600 KB not JSON', () =>
      everyTime(`Authorization: ${AUTH}\r\nContent-Type: text/plain\r\n`, 600_000, 415),
    );
  });
}

// The server in a process of its own: sharing this one's event loop, the client read every
// answer before its write failed, and the reset went unseen.
test('a client that streams a body over 1 MiB while it reads gets the 413 every time, chunked too, and past what is dropped, from the command', async (t) => {
  const server = await start(t, ['--demo']);
  const port = Number(new URL(server.origin).port);
  const headers = {
    Authorization: basicAuth(USER.BOOKING_SEARCH_USER, USER.BOOKING_SEARCH_PASSWORD),
    'Content-Type': 'application/json',
  };
  const tooLarge = `413 ${ERRORS.bodyTooLarge.body}`;
  const everyTime = (bytes: number, announced: boolean): Promise<void> =>
    streamedAnsweredEveryTime(port, '/api/v1/abgleich', headers, [bytes, announced], tooLarge);
  await t.test('4 MiB chunked, refused once 1 MiB of it is read', () => everyTime(4 * 2 ** 20, false));
  await t.test('20 MiB with a Content-Length, past what is dropped', () => everyTime(20 * 2 ** 20, true));
});

test('a body that never ends is cut off: where its Content-Length ends, by the request timeout, or once as much is dropped as lingers, chunked too', async (t) => {
  await assertEndlessBodyCutOff(await serving(t, 'edge'), ABGLEICH, 'HTTP/1.1 401 Unauthorized', REQUEST_TIMEOUT_MS);
});

test('a body that trickles is dropped for 30 s at most, where the request timeout is longer (docs/API.md)', async (t) => {
  await assertLingerBound(await serving(t, 'edge', LINGER_MS + 10_000), ABGLEICH, 'HTTP/1.1 401 Unauthorized');
});

/** A request the service answers before its body: no credentials, a body of one byte. */
const CHALLENGED = `${ABGLEICH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n`;

/** The status lines in what a server sent. */
const statuses = (received: string): string[] => received.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? [];

test('the connection closes where a lingering body ends: requests pipelined after it are neither answered nor logged', async (t) => {
  const server = await start(t, ['--demo']);
  const port = Number(new URL(server.origin).port);
  const [received, ms] = await pipelinedAfterBody(port, CHALLENGED, 200, 15_000, false);
  assert.deepEqual(statuses(received), ['HTTP/1.1 401 Unauthorized']);
  assert.ok(ms < 1_000, `closed after ${ms} ms`);
  const stdout = (): string => server.output().stdout;
  await waitFor(stdout, / POST \/api\/v1\/abgleich 401 /);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(
    stdout()
      .split('\n')
      .filter((line) => / (GET|POST) \/api\/v1\//.test(line))
      .map((line) => line.split(' ').slice(3, 6).join(' ')),
    ['POST /api/v1/abgleich 401'],
  );
});

test('requests pipelined in the write that ends a lingering body: no more is read than node:http read with its end', async (t) => {
  const { port, readOf } = await serving(t, 'edge');
  const [received, ms] = await pipelinedAfterBody(port, CHALLENGED, 200, 15_000, true);
  assert.deepEqual(statuses(received), ['HTTP/1.1 401 Unauthorized']);
  assert.ok(ms < 1_000, `closed after ${ms} ms`);
  const read = await readOf(0);
  assert.ok(read < 128 * 1024, `the server read ${read} bytes`);
});

test('requests pipelined in the same write after any answer that closes are never logged: only the answer is', async (t) => {
  const server = await start(t, ['--demo']);
  const port = Number(new URL(server.origin).port);
  // 2,000 small requests in the write that ends the body: node:http parses those its read held.
  const [received] = await pipelinedAfterBody(port, CHALLENGED, 2_000, 40, true);
  assert.deepEqual(statuses(received), ['HTTP/1.1 401 Unauthorized']);
  const stdout = (): string => server.output().stdout;
  await waitFor(stdout, / POST \/api\/v1\/abgleich 401 /);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const lines = stdout()
    .split('\n')
    .filter((line) => / (GET|POST) \//.test(line));
  assert.deepEqual(
    lines.map((line) => line.split(' ').slice(3, 6).join(' ')),
    ['POST /api/v1/abgleich 401'],
  );
});
