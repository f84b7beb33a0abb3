// Paths, methods, HEAD, the status endpoint and mounting (docs/API.md, Paths).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { API_VERSION, createHandler, requestFacts } from '../lib/index.js';
import {
  AUTH,
  assertCommonHeaders,
  assertReply,
  basicAuth,
  CREDENTIALS,
  get,
  openFixture,
  request,
  serve,
  serveFixture,
  statusAnswer,
} from './support/helpers.js';
import { rawRequest } from './support/raw-http.js';

const STATUS = statusAnswer();
const SEARCH = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5';

test('API_VERSION is the version the status answers', () => {
  assert.equal(API_VERSION, STATUS.version);
});

test('GET /api/v1/status answers name and version and ignores any query', async (t) => {
  const origin = await serveFixture(t);
  assertReply(await get(`${origin}/api/v1/status`), 200, STATUS);
  assertReply(await get(`${origin}/api/v1/status?von=kaputt&%zz`), 200, STATUS);
  const named = await serveFixture(t, { serviceName: 'Kasse Nord' });
  assertReply(await get(`${named}/api/v1/status`), 200, statusAnswer('Kasse Nord'));
});

test('GET /api/v1/status does not touch the database', async (t) => {
  const db = openFixture(t);
  const origin = await serve(t, createHandler(db, CREDENTIALS));
  db.close();
  assertReply(await get(`${origin}/api/v1/status`), 200, STATUS);
});

test('unknown paths get 404 after authentication', async (t) => {
  const origin = await serveFixture(t);
  for (const path of [
    '/',
    '/api/v1',
    '/api/v1/',
    '/api/v1/status/',
    '/api/v2/status',
    '/API/v1/status',
    '/api/v1/buchungen/1',
    '/api/v1/%73tatus',
  ]) {
    assertReply(await get(`${origin}${path}`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
  }
  assertReply(await request(`${origin}/nirgends`, { method: 'POST', headers: { authorization: AUTH } }), 404, {
    fehler: 'Nicht gefunden.',
    code: 'not_found',
  });
});

test('methods other than GET and HEAD on a known path get 405 with Allow', async (t) => {
  const origin = await serveFixture(t);
  for (const path of ['/api/v1/status', SEARCH]) {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const reply = await request(`${origin}${path}`, { method, headers: { authorization: AUTH } });
      assertReply(reply, 405, { fehler: 'Methode nicht erlaubt.', code: 'method_not_allowed' });
      assert.equal(reply.headers['allow'], 'GET, HEAD');
    }
  }
});

test('HEAD is answered like GET without a body', async (t) => {
  const origin = await serveFixture(t);
  for (const path of ['/api/v1/status', SEARCH, '/api/v1/buchungen?limit=x', '/nirgends']) {
    const got = await get(`${origin}${path}`);
    const head = await request(`${origin}${path}`, { method: 'HEAD', headers: { authorization: AUTH } });
    assert.equal(head.status, got.status, path);
    assert.equal(head.body, '');
    assertCommonHeaders(head);
    assert.equal(head.headers['content-length'], got.headers['content-length']);
    // On the wire, not through a client that would drop a body itself: no byte after the head.
    const raw = await rawRequest(
      origin,
      `HEAD ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(raw.status, got.status, path);
    assert.equal(raw.body, '', `HEAD ${path} sends no body`);
  }
});

test('basePath moves both endpoints and nothing else answers', async (t) => {
  for (const basePath of ['/kasse', '/kasse/']) {
    const origin = await serveFixture(t, { basePath });
    assertReply(await get(`${origin}/kasse/api/v1/status`), 200, STATUS);
    assert.equal((await get(`${origin}/kasse${SEARCH}`)).status, 200);
    assertReply(await get(`${origin}/api/v1/status`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
    assertReply(await get(`${origin}/kasse2/api/v1/status`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
  }
});

test('with next, requests outside {basePath}/api/ are handed on untouched', async (t) => {
  const handler = createHandler(openFixture(t), CREDENTIALS, { basePath: '/kasse' });
  const passed: string[] = [];
  const origin = await serve(t, (req: IncomingMessage, res: ServerResponse) =>
    handler(req, res, () => {
      passed.push(req.url ?? '');
      res.writeHead(418).end('weiter');
    }),
  );
  const outside = await request(`${origin}/kasse/index.html`);
  assert.equal(outside.status, 418);
  assert.equal(outside.body, 'weiter');
  assert.equal((await request(`${origin}/api/v1/status`)).status, 418);
  assert.equal((await request(`${origin}/kasse/api`)).status, 418);
  assert.deepEqual(passed, ['/kasse/index.html', '/api/v1/status', '/kasse/api']);

  assert.equal((await request(`${origin}/kasse/api/v1/status`)).status, 401);
  assertReply(await get(`${origin}/kasse/api/v2/x`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
  assertReply(await get(`${origin}/kasse/api/v1/status`), 200, STATUS);
});

test('a request whose body is never read is answered with Connection: close and its body is not read: a 100 GB upload gets its 401 and the connection ends', async (t) => {
  const origin = await serveFixture(t);
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  t.after(() => socket.destroy());
  let received = '';
  let closed = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  // The server may reset the connection while the client still sends (EPIPE, ECONNRESET).
  socket.on('error', () => undefined);
  const close = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void close.then(() => (closed = true));
  await once(socket, 'connect');
  socket.write(`POST /api/v1/status HTTP/1.1\r\nHost: x\r\nContent-Length: ${100 * 1024 ** 3}\r\n\r\n`);
  // The upload goes on as fast as the server takes it, for 3 s at most.
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const until = Date.now() + 3_000;
  while (!closed && !socket.destroyed && Date.now() < until) {
    sent += chunk.length;
    if (!socket.write(chunk)) {
      await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), close, sleep(100)]);
    }
  }
  await Promise.race([close, sleep(1_000)]);
  assert.equal(closed, true, `still open after ${sent} bytes`);
  assert.ok(sent < 256 * 1024 * 1024, `${sent} bytes taken`);
  assert.match(received, /^HTTP\/1\.1 401 /);
  assert.match(received, /\r\nConnection: close\r\n/i);

  // The same for an authenticated request that announced a body: answered, then closed.
  for (const length of ['Content-Length: 5', 'Transfer-Encoding: chunked']) {
    const reply = await rawRequest(
      origin,
      `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n${length}\r\n\r\n`,
    );
    assertReply(reply, 200, STATUS);
    assert.equal(reply.headers.connection, 'close', length);
    assert.equal(reply.closed, true, length);
  }
  const plain = await rawRequest(
    origin,
    `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`,
    500,
  );
  assert.equal(plain.headers.connection, 'keep-alive', 'no body: the connection stays');
});

test('a request that asks for an Upgrade is answered with Connection: close: node:http reads nothing pipelined after it', async (t) => {
  const origin = await serveFixture(t);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n`;
  const started = Date.now();
  const reply = await rawRequest(
    origin,
    `${status}Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n${status}\r\n`,
    3_000,
  );
  assertReply(reply, 200, STATUS);
  assert.equal(reply.headers.connection, 'close', 'the client knows the request after it was not read');
  assert.equal(reply.closed, true);
  assert.ok(Date.now() - started < 2_000, 'closed at once, not after the keep-alive timeout');
});

test('a connection with 128 answers its client has not taken gets 429 too_many_unanswered and is closed: /status too; a client that never reads is closed as soon as the kernel has taken them', async (t) => {
  let handled = 0;
  const handler = createHandler(openFixture(t), CREDENTIALS);
  const refusedFacts: unknown[] = [];
  const origin = await serve(t, (req, res) => {
    handled += 1;
    handler(req, res);
    if (res.statusCode === 429) refusedFacts.push(requestFacts(req));
  });
  const { hostname, port } = new URL(origin);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;

  // 1,000 pipelined in one write, and read: 128 answers, the 429, and the connection ends.
  const reader = await rawRequest(origin, status.repeat(1_000));
  const statuses = [...`${reader.status} ${reader.body}`.matchAll(/(?:^|HTTP\/1\.1 )(\d{3}) /g)].map((m) => m[1]);
  assert.deepEqual(statuses, [...Array(128).fill('200'), '429']);
  assert.match(reader.body, /"code":"too_many_unanswered"}$/);
  assert.equal(reader.closed, true);
  // Its facts name the client for a log line, as those of every request the handler routed.
  assert.deepEqual(refusedFacts, [
    { endpoint: 'status', clientAddress: '127.0.0.1', user: undefined, attempted: undefined, path: '/api/v1/status' },
  ]);

  // Pipelined as fast as the server takes them, for 3 s at most, and nothing read.
  handled = 0;
  const socket = connect(Number(port), hostname);
  t.after(() => socket.destroy());
  socket.pause();
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let ended = false;
  void closed.then(() => (ended = true));
  await once(socket, 'connect');
  const until = Date.now() + 3_000;
  while (!ended && Date.now() < until) {
    if (!socket.write(status.repeat(500))) {
      await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed, sleep(100)]);
    }
  }
  await Promise.race([closed, sleep(1_000)]);
  assert.equal(ended, true, `open after ${handled} requests`);
  // node:http hands on every request of the chunks it read; none past the 429 is processed.
  assert.ok(handled < 5_000, `${handled} requests reached the handler`);
});

test('no request after an answer that closes the connection is processed (RFC 9112 §9.6): ten wrong passwords pipelined behind it are not counted', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 10 });
  const wrong = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth('kasse', 'raten')}\r\n\r\n`;
  const reply = await rawRequest(
    origin,
    `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n${wrong.repeat(10)}`,
  );
  assertReply(reply, 200, STATUS);
  assert.equal(reply.closed, true);
  // Had they been processed, ten failures would have blocked this address.
  assert.equal((await get(`${origin}/api/v1/status`)).status, 200);
});

test('an unexpected error answers 500 "Interner Fehler." and the server keeps serving', async (t) => {
  let broken = true;
  const errors: unknown[] = [];
  const origin = await serveFixture(t, {
    now: () => {
      if (broken) throw new Error('clock failed at /secret/path');
      return Date.now();
    },
    onError: (error) => errors.push(error),
  });
  const reply = await request(`${origin}/api/v1/status`, { headers: { authorization: 'Basic eDp5' } });
  assertReply(reply, 500, { fehler: 'Interner Fehler.', code: 'internal_error' });
  assert.equal((errors[0] as Error).message, 'clock failed at /secret/path');
  broken = false;
  assertReply(await get(`${origin}/api/v1/status`), 200, STATUS);
});

test('an onError hook that throws (anything), or an async one that rejects (its promise of another realm too), changes no answer and loses no cause: stderr has both', async (t) => {
  const written = t.mock.method(console, 'error', () => undefined);
  const unhandled: unknown[] = [];
  const hear = (reason: unknown): number => unhandled.push(reason);
  process.on('unhandledRejection', hear);
  t.after(() => process.off('unhandledRejection', hear));
  for (const onError of [
    () => {
      throw new Error('hook');
    },
    async () => {
      throw new Error('hook');
    },
    () => {
      throw Object.create(null);
    },
    // A promise of another realm (a vm context, a library of its own) is no instance of this one's Promise.
    () => runInNewContext("Promise.reject(new Error('hook'))"),
  ]) {
    const db = openFixture(t);
    const origin = await serve(t, createHandler(db, CREDENTIALS, { onError }));
    db.close();
    assertReply(await get(`${origin}${SEARCH}`), 500, {
      fehler: 'Interner Fehler bei der Buchungssuche.',
      code: 'database_unavailable',
    });
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
  assert.equal(written.mock.callCount(), 4);
  for (const call of written.mock.calls) {
    assert.match(
      String(call.arguments[0]),
      /^booking-search-server: onError failed \((?:Error: hook|a value without text)\) on GET \/api\/v1\/buchungen:$/,
    );
    assert.match(String(call.arguments[1]), /database connection was closed/);
  }
});
