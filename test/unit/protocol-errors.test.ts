// lib/protocol-errors.ts on a plain node:http server, as an embedder wires it.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { answerProtocolErrors, createHandler } from '../../lib/index.js';
import { AUTH, assertReply, CREDENTIALS, openFixture } from '../helpers.js';
import { assertProtocolError, rawRequest } from '../raw-http.js';

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
});

test('a missing Host is the handler’s JSON 400 for HTTP/1.1, and no problem for HTTP/1.0', async (t) => {
  const origin = await serveWired(t);
  const missing = await rawRequest(origin, `GET /api/v1/status HTTP/1.1\r\nAuthorization: ${AUTH}\r\n\r\n`);
  assertProtocolError(missing, 400, 'Ungültige Anfrage.');
  assert.equal(missing.headers.vary, 'Origin', 'it went through the handler');
  const old = await rawRequest(origin, `GET /api/v1/status HTTP/1.0\r\nAuthorization: ${AUTH}\r\n\r\n`);
  assertReply(old, 200, { name: 'booking-search-server', version: '1.0' });
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
  assertReply(one, 200, { name: 'booking-search-server', version: '1.0' });
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
  const first = '{"name":"booking-search-server","version":"1.0"}';
  assert.ok(reply.body.startsWith(first), reply.body);
  const second = reply.body.slice(first.length);
  assert.match(second, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(second, /\r\nConnection: close\r\n/);
  assert.ok(second.endsWith('\r\n\r\n{"fehler":"Ungültige Anfrage."}'), second);
  assert.ok(reply.closed);
});
