// lib/protocol-errors.ts on a plain node:http server, as an embedder wires it.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { answerProtocolErrors, createHandler } from '../lib/index.js';
import { hashPassword } from '../lib/password-hash.js';
import { makeCertificate } from './support/cli-helpers.js';
import { AUTH, assertReply, CREDENTIALS, openFixture, statusAnswer } from './support/helpers.js';
import { assertProtocolError, rawExchange, rawRequest, statusesIn } from './support/raw-http.js';

async function serveWired(t: test.TestContext, withNext = false): Promise<string> {
  const handler = createHandler(openFixture(t), CREDENTIALS, { corsOrigins: ['http://127.0.0.1:8081'] });
  const server = answerProtocolErrors(
    createServer({ maxHeaderSize: 4096 }, (req, res) =>
      withNext
        ? handler(req, res, () =>
            res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '3' }).end('app'),
          )
        : handler(req, res),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.closeAllConnections());
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('answerProtocolErrors: parser errors, 431 and 417 as JSON on a plain node:http server', async (t) => {
  const origin = await serveWired(t);
  assertProtocolError(
    await rawRequest(origin, 'GET / HTTP/1.1\r\nHost: x\r\nKaputt\r\n\r\n'),
    400,
    'Ungültige Anfrage.',
  );
  assertProtocolError(
    await rawRequest(origin, `GET / HTTP/1.1\r\nHost: x\r\nX-Gross: ${'a'.repeat(5000)}\r\n\r\n`),
    431,
    'Anfragekopf zu groß.',
  );
  const expect = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nExpect: nichts\r\n\r\n`;
  assertProtocolError(await rawRequest(origin, expect), 417, 'Erwartung nicht erfüllbar.');
  // node:http takes any Expect that names 100-continue among others for one: it is not.
  for (const value of ['100-continue, nichts', 'nichts, 100-continue', '100-continue;x=1']) {
    const listed = `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nExpect: ${value}\r\nContent-Length: 2\r\n\r\n`;
    assertProtocolError(await rawRequest(origin, listed), 417, 'Erwartung nicht erfüllbar.');
  }
});

test('a client that half-closes after its request gets the answer that comes in a later turn, a reconciliation, then the connection closes', async (t) => {
  const origin = await serveWired(t);
  const body = JSON.stringify({ zeilen: [{ datum: '2026-03-14', betrag: '-12.50' }] });
  const post = `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const reply = await rawRequest(origin, post, 10_000, true);
  assert.equal(reply.status, 200, reply.body);
  assert.match(reply.body, /^\{"zeilen":\[/);
  assert.ok(reply.closed, 'the server closed the connection after its answer');
});

test('answerProtocolErrors given no server names what it takes, as createHandler names its misuse', () => {
  for (const given of [undefined, null, {}, 'server'])
    assert.throws(() => answerProtocolErrors(given as never), {
      name: 'TypeError',
      message:
        'answerProtocolErrors takes the node:http or node:https Server the handler is mounted on (Fastify: fastify.server)',
    });
});

test('answerProtocolErrors twice on one server is once: one 417 for an Expect it cannot meet, one request for 100-continue', async (t) => {
  const handler = createHandler(openFixture(t), CREDENTIALS);
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    handler(req, res);
  });
  answerProtocolErrors(answerProtocolErrors(server));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const expect = 'GET /api/v1/status HTTP/1.1\r\nHost: x\r\nExpect: nichts\r\n\r\n';
  assertProtocolError(await rawRequest(origin, expect), 417, 'Erwartung nicht erfüllbar.');
  const continued = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
  assertReply(await rawRequest(origin, continued), 200, statusAnswer());
  assert.equal(requests, 1);
});

test("with a listed Origin: an answer written before the request reaches the service has no CORS header, not even Vary; the handler's 400 for its Host has them (docs/API.md, CORS)", async (t) => {
  const origin = await serveWired(t);
  const page = 'Origin: http://127.0.0.1:8081\r\n';
  const none = {
    'a bad header line': `GET /api/v1/status HTTP/1.1\r\nHost: x\r\n${page}Kaputt\r\n\r\n`,
    'headers over the limit': `GET /api/v1/status HTTP/1.1\r\nHost: x\r\n${page}X-Gross: ${'a'.repeat(5000)}\r\n\r\n`,
    'an unknown Expect': `GET /api/v1/status HTTP/1.1\r\nHost: x\r\n${page}Expect: nichts\r\n\r\n`,
    'raw non-ASCII in the target': Buffer.from(`GET /api/v1/ü HTTP/1.1\r\nHost: x\r\n${page}\r\n`, 'utf8'),
  };
  for (const [what, payload] of Object.entries(none)) {
    const reply = await rawRequest(origin, payload);
    const cors = Object.keys(reply.headers).filter((name) => name === 'vary' || name.startsWith('access-control-'));
    assert.deepEqual(cors, [], `${what}: ${reply.status}`);
  }
  const handled = {
    'no Host': `GET /api/v1/status HTTP/1.1\r\n${page}\r\n`,
    'two Host lines': `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nHost: y\r\n${page}\r\n`,
  };
  for (const [what, payload] of Object.entries(handled)) {
    const reply = await rawRequest(origin, payload);
    assert.equal(reply.status, 400, what);
    assert.equal(reply.headers['access-control-allow-origin'], 'http://127.0.0.1:8081', what);
    assert.equal(reply.headers['access-control-allow-credentials'], 'true', what);
    assert.equal(reply.headers['vary'], 'Origin', what);
  }
});

test('every request pipelined before the one that asks to close is answered in order; the bytes after it are not a 400 that cuts them off', async (t) => {
  const origin = await serveWired(t);
  const search = `GET /api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5 HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;
  const status = (extra = ''): string =>
    `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n${extra}\r\n`;
  // Node's parser raises an error for the bytes after the closing request, while the
  // answers before it are still being written.
  const reply = await rawRequest(origin, `${search}${search}${status('Connection: close\r\n')}${status()}`);
  const text = `HTTP/1.1 ${reply.status} ${reply.body}`;
  assert.deepEqual(
    [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]),
    ['200', '200', '200'],
  );
  assert.doesNotMatch(text, /bad_request/);
  assert.equal(reply.closed, true);
});

test('a missing Host is the handler’s JSON 400 for HTTP/1.1, and no problem for HTTP/1.0', async (t) => {
  const origin = await serveWired(t);
  const missing = await rawRequest(origin, `GET /api/v1/status HTTP/1.1\r\nAuthorization: ${AUTH}\r\n\r\n`);
  assertProtocolError(missing, 400, 'Ungültige Anfrage.');
  assert.equal(missing.headers.vary, 'Origin', 'it went through the handler');
  const old = await rawRequest(origin, `GET /api/v1/status HTTP/1.0\r\nAuthorization: ${AUTH}\r\n\r\n`);
  assertReply(old, 200, statusAnswer());
});

test('two Host lines are the handler’s JSON 400, whatever their case or values (RFC 9112 §3.2)', async (t) => {
  const origin = await serveWired(t);
  for (const hosts of ['Host: x\r\nHost: y', 'Host: x\r\nhost: x', 'HOST: a\r\nX-Egal: 1\r\nhost: b']) {
    const reply = await rawRequest(origin, `GET /api/v1/status HTTP/1.1\r\n${hosts}\r\nAuthorization: ${AUTH}\r\n\r\n`);
    assertProtocolError(reply, 400, 'Ungültige Anfrage.');
    assert.equal(reply.headers.vary, 'Origin', 'it went through the handler');
  }
  const old = await rawRequest(
    origin,
    `GET /api/v1/status HTTP/1.0\r\nHost: x\r\nHost: y\r\nAuthorization: ${AUTH}\r\n\r\n`,
  );
  assertProtocolError(old, 400, 'Ungültige Anfrage.');
  const one = await rawRequest(
    origin,
    `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n`,
  );
  assertReply(one, 200, statusAnswer());
});

test('two Authorization or Content-Type lines, HTTP/1.0 with Transfer-Encoding and a request line of HTTP/2 are the handler’s JSON 400 that closes (RFC 9110 §5.3, RFC 9112 §6.1)', async (t) => {
  const origin = await serveWired(t);
  const wrong = `Basic ${Buffer.from('buchhaltung:falsch').toString('base64')}`;
  const status = 'GET /api/v1/status HTTP/1.1\r\nHost: x\r\n';
  const twice = [
    `${status}Authorization: ${AUTH}\r\nAuthorization: ${wrong}\r\n\r\n`,
    `${status}authorization: ${wrong}\r\nAUTHORIZATION: ${AUTH}\r\n\r\n`,
    `${status}Authorization: ${AUTH}\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\n\r\n`,
  ];
  const body = '{"zeilen":[]}';
  // The body chunked, then a request pipelined after it: neither is read as the client meant.
  const chunked =
    `POST /api/v1/abgleich HTTP/1.0\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n` +
    `Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` +
    `${status}Authorization: ${AUTH}\r\n\r\n`;
  // The same framing in HTTP/0.9, and a request line of HTTP/2, which is never spoken in text.
  const older = chunked.replace('HTTP/1.0', 'HTTP/0.9');
  const two = `GET /api/v1/status HTTP/2.0\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;
  for (const payload of [...twice, chunked, older, two]) {
    const reply = await rawRequest(origin, payload);
    assertProtocolError(reply, 400, 'Ungültige Anfrage.');
    assert.equal(reply.headers.vary, 'Origin', 'it went through the handler');
  }
  const once = await rawRequest(origin, `${status}Authorization: ${AUTH}\r\nConnection: close\r\n\r\n`);
  assertReply(once, 200, statusAnswer());
});

test('a Host that is not uri-host [":" port] is the handler’s JSON 400 (RFC 9112 §3.2); `a,b` and an IPv6 literal are hosts', async (t) => {
  const origin = await serveWired(t);
  for (const host of ['a b', 'x@evil', 'a/b', '[::1', 'a:notaport', '[::1::2]']) {
    const reply = await rawRequest(
      origin,
      `GET /api/v1/status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${AUTH}\r\n\r\n`,
    );
    assertProtocolError(reply, 400, 'Ungültige Anfrage.');
    assert.equal(reply.headers.vary, 'Origin', host);
  }
  for (const host of ['a,b', '[::1]:8080', '127.0.0.1:1', 'localhost']) {
    const reply = await rawRequest(
      origin,
      `GET /api/v1/status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n`,
    );
    assertReply(reply, 200, statusAnswer());
  }
});

test('with next: an absolute-form target with a user and password under {basePath}/api/ is the 400, never handed on; outside it, next() has it', async (t) => {
  const origin = await serveWired(t, true);
  const inside = await rawRequest(origin, 'GET http://kasse:geheim@x/api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n');
  assertProtocolError(inside, 400, 'Ungültige Anfrage.');
  const outside = 'GET http://kasse:geheim@x/startseite HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  assert.equal((await rawRequest(origin, outside)).body, 'app');
});

test('outside {basePath}/api/ a request without Host is handed to next() untouched', async (t) => {
  const origin = await serveWired(t, true);
  const reply = await rawRequest(origin, 'GET /startseite HTTP/1.1\r\nConnection: close\r\n\r\n');
  assert.equal(reply.status, 200);
  assert.equal(reply.body, 'app');
});

test('a parser error after a pipelined request: the first answer stays whole, then the JSON 400', async (t) => {
  const origin = await serveWired(t);
  const payload = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\nGARBAGE\r\n\r\n`;
  const reply = await rawRequest(origin, payload);
  assert.equal(reply.status, 200);
  const first = JSON.stringify(statusAnswer());
  assert.ok(reply.body.startsWith(first), reply.body);
  const second = reply.body.slice(first.length);
  assert.match(second, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(second, /\r\nConnection: close\r\n/);
  assert.ok(second.endsWith('\r\n\r\n{"fehler":"Ungültige Anfrage.","code":"bad_request"}'), second);
  assert.ok(reply.closed);
});

test('a parser error after answers still to come (queued behind one another): the 400 comes after all of them', async (t) => {
  const origin = await serveWired(t);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;
  const reply = await rawRequest(origin, `${status.repeat(3)}GARBAGE\r\n\r\n`);
  const text = `HTTP/1.1 ${reply.status} ${reply.body}`;
  assert.deepEqual(
    [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]),
    ['200', '200', '200', '400'],
  );
  assert.ok(text.endsWith('{"fehler":"Ungültige Anfrage.","code":"bad_request"}'), text);
  assert.ok(reply.closed);
});

test('a request handed on has one answer: a parser error in its body after that answer, or after one that closes, is no second, only the close (RFC 9112 §9.6)', async (t) => {
  const origin = await serveWired(t, true);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n`;
  const abgleich = `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n`;
  const page = 'GET /startseite HTTP/1.1\r\nHost: x\r\n';
  // A part after the first is sent once the answer to the one before has come.
  const cases: [string, string[], number[]][] = [
    ['Transfer-Encoding: identity', [`${status}Transfer-Encoding: identity\r\n\r\n`], [200]],
    ['HTTP/1.0 with Transfer-Encoding', ['GET /api/v1/status HTTP/1.0\r\nTransfer-Encoding: identity\r\n\r\n'], [400]],
    ['a gzipped body', [`${abgleich}Transfer-Encoding: gzip\r\n\r\n`], [415]],
    [
      'a broken chunk, no credentials',
      ['GET /api/v1/status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
      [401],
    ],
    [
      'a broken chunk after the 401',
      ['GET /api/v1/status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', 'zz\r\n'],
      [401],
    ],
    ['after a pipelined request', [`${status}\r\n${status}Transfer-Encoding: identity\r\n\r\n`], [200, 200]],
    // The embedder's own answers keep the connection open: the error still gets no second.
    ['the app’s page, Transfer-Encoding: identity', [`${page}Transfer-Encoding: identity\r\n\r\n`], [200]],
    ['the app’s page, a broken chunk after its answer', [`${page}Transfer-Encoding: chunked\r\n\r\n`, 'zz\r\n'], [200]],
  ];
  for (const [name, parts, statuses] of cases) {
    const { text, closed } = await rawExchange(origin, parts);
    assert.deepEqual(statusesIn(text), statuses, `${name}: ${text}`);
    assert.ok(closed, `${name}: closed`);
  }
  // A body the handler waits for, cut off before it answered: the error's 400 is its one answer.
  const waiting = await rawExchange(origin, [`${abgleich}Transfer-Encoding: chunked\r\n\r\n`, 'zz\r\n']);
  assert.deepEqual(statusesIn(waiting.text), [400]);
  assert.ok(waiting.text.endsWith('{"fehler":"Ungültige Anfrage.","code":"bad_request"}'), waiting.text);
});

test('a CONNECT is answered 405 after the answers before it, never cutting them off', async (t) => {
  const origin = await serveWired(t);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;
  const reply = await rawRequest(
    origin,
    `${status}${status}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
  );
  const text = `HTTP/1.1 ${reply.status} ${reply.body}`;
  assert.deepEqual(
    [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]),
    ['200', '200', '405'],
  );
  assert.match(text, /\r\nAllow: GET, HEAD\r\n/);
  assert.ok(reply.closed);
});

test('on an https server, a handshake that times out is destroyed, never answered in plaintext', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'protocol-errors-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
  const handler = createHandler(openFixture(t), CREDENTIALS);
  // docs/API.md, Responses in general: an embedder sets handshakeTimeout itself.
  const options = { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) };
  const server = answerProtocolErrors(createHttpsServer({ ...options, handshakeTimeout: 300 }, handler));
  const accepted: Socket[] = [];
  server.on('connection', (socket: Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.close();
    for (const socket of accepted) socket.destroy();
  });
  const { port } = server.address() as AddressInfo;

  // Half send nothing, half a TLS record header that announces 512 bytes, then one.
  const outcomes = await Promise.all(
    Array.from(
      { length: 10 },
      (_, i) =>
        new Promise<{ ms: number; received: number }>((resolve) => {
          const started = Date.now();
          let received = 0;
          const socket = connect(port, '127.0.0.1');
          const give = setTimeout(() => socket.destroy(), 3_000);
          socket.on('data', (chunk: Buffer) => (received += chunk.length));
          socket.on('error', () => undefined);
          socket.on('close', () => {
            clearTimeout(give);
            resolve({ ms: Date.now() - started, received });
          });
          if (i % 2 === 1) socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
        }),
    ),
  );
  for (const { ms, received } of outcomes) {
    assert.ok(ms >= 250 && ms < 2_000, `closed by the server after the handshake timeout, not after ${ms} ms`);
    assert.equal(received, 0, 'no plaintext answer');
  }
});

test('a closing answer whose body is left unread, pipelined behind an answer still to come (a password being checked), waits for it: both are answered, in order', async (t) => {
  const handler = createHandler(openFixture(t), { username: 'kasse', passwordHash: await hashPassword('geheim') });
  const server = answerProtocolErrors(createServer(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.closeAllConnections());
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const wrong = `Basic ${Buffer.from('kasse:falsch').toString('base64')}`;
  const first = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${wrong}\r\n\r\n`;
  const refused = [
    'POST /api/v1/abgleich HTTP/1.1\r\nHost: a b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    'POST /api/v1/abgleich HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
  ];
  for (const second of refused) {
    const { text, closed } = await rawExchange(origin, [first + second]);
    assert.deepEqual(statusesIn(text), [401, 400], text);
    assert.ok(closed, 'the 400 closes the connection');
  }
});

test("Expect: 100-continue reaches the handler before node:http's 100 Continue: refused without it (401, 415), let in with it; a request handed to next() gets it at once", async (t) => {
  const handler = createHandler(openFixture(t), CREDENTIALS);
  const server = answerProtocolErrors(
    createServer((req, res) =>
      handler(req, res, () => {
        let length = 0;
        req.on('data', (chunk: Buffer) => (length += chunk.length));
        req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`app read ${length}`));
      }),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.closeAllConnections());
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const post = (path: string, headers: string): string =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 14\r\n${headers}\r\n`;

  // The client waits for the 100 and sends no body: the refusal is the first thing it reads.
  for (const [name, headers, status] of [
    ['without credentials', 'Content-Type: application/json\r\n', 401],
    ['with another media type', `Authorization: ${AUTH}\r\nContent-Type: text/plain\r\n`, 415],
  ] as const) {
    const reply = await rawRequest(`http://127.0.0.1:${port}`, post('/api/v1/abgleich', headers), 5_000);
    assert.equal(reply.status, status, name);
  }

  // Let in, and handed on: 100 Continue first, then the body is sent and read.
  for (const [path, headers, answer] of [
    [
      '/api/v1/abgleich',
      `Authorization: ${AUTH}\r\nContent-Type: application/json\r\n`,
      /^HTTP\/1\.1 400 .*"bad_body"}$/s,
    ],
    ['/upload', '', /^HTTP\/1\.1 200 .*app read 14\r\n/s],
  ] as const) {
    const socket = connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    await once(socket, 'connect');
    socket.write(post(path, headers));
    const deadline = Date.now() + 5_000;
    while (!received.includes('\r\n\r\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(received, 'HTTP/1.1 100 Continue\r\n\r\n', path);
    socket.write('{"zeilen":[]}\n');
    while (!answer.test(received.slice(25)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.match(received.slice(25), answer, path);
  }
});
