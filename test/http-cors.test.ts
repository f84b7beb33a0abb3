// CORS over real HTTP (docs/API.md, Browser clients (CORS)).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createHandler } from '../lib/index.js';
import {
  AUTH,
  assertCommonHeaders,
  assertReply,
  basicAuth,
  CREDENTIALS,
  openFixture,
  type Reply,
  request,
  serveFixture,
  statusAnswer,
} from './support/helpers.js';

const PAGE = 'http://127.0.0.1:8081';
const OTHER_PAGE = 'http://127.0.0.1:8082';
const SEARCH = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const WRONG = basicAuth('kasse', 'raten');

function preflight(url: string, origin: string, extra: Record<string, string> = {}): Promise<Reply> {
  return request(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
      ...extra,
    },
  });
}

function assertCorsHeaders(reply: Reply, origin: string): void {
  assert.equal(reply.headers['access-control-allow-origin'], origin);
  assert.equal(reply.headers['access-control-allow-credentials'], 'true');
  assert.equal(reply.headers['access-control-expose-headers'], 'Retry-After');
  assert.equal(reply.headers.vary, 'Origin');
}

function assertNoCorsHeaders(reply: Reply): void {
  for (const name of Object.keys(reply.headers)) assert.doesNotMatch(name, /^access-control-/, name);
}

test('a preflight from a listed origin gets 204 with exactly the CORS headers, before auth and never counted', async (t) => {
  const origin = await serveFixture(t, { corsOrigins: [PAGE], maxAuthFailures: 2 });
  for (const path of ['/api/v1/status', '/api/v1/buchungen', SEARCH]) {
    for (let i = 0; i < 5; i += 1) {
      const reply = await preflight(`${origin}${path}`, PAGE);
      assert.equal(reply.status, 204);
      assert.equal(reply.body, '');
      assert.equal(reply.headers['content-length'], undefined);
      assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(reply.headers['x-content-type-options'], 'nosniff');
      assert.equal(reply.headers['access-control-allow-origin'], PAGE);
      assert.equal(reply.headers['access-control-allow-credentials'], 'true');
      assert.equal(reply.headers['access-control-allow-methods'], 'GET, HEAD');
      assert.equal(reply.headers['access-control-allow-headers'], 'Authorization');
      assert.equal(reply.headers['access-control-max-age'], '600');
      assert.equal(reply.headers.vary, 'Origin');
      assert.equal(reply.headers['www-authenticate'], undefined);
    }
  }
  assertReply(await request(`${origin}/api/v1/status`, { headers: { authorization: AUTH } }), 200, statusAnswer());

  // Blocked: a preflight is still answered (it is not a login), everything else gets 429.
  for (let i = 0; i < 2; i += 1) await request(`${origin}/api/v1/status`, { headers: { authorization: WRONG } });
  const blocked = await request(`${origin}${SEARCH}`, { headers: { authorization: AUTH, origin: PAGE } });
  assertReply(blocked, 429, {
    fehler: 'Zu viele fehlgeschlagene Anmeldeversuche. Bitte später erneut versuchen.',
    code: 'login_throttled',
  });
  assertCorsHeaders(blocked, PAGE);
  assert.ok(Number(blocked.headers['retry-after']) > 0);
  assert.equal((await preflight(`${origin}${SEARCH}`, PAGE)).status, 204);
});

test('preflights count toward the requests without credentials: a pipelined flood of them ends with one 429 and a closed connection; a login clears the count', async (t) => {
  const origin = await serveFixture(t, { corsOrigins: [PAGE], maxUnauthenticated: 20 });
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  t.after(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const preflightText = `OPTIONS ${SEARCH} HTTP/1.1\r\nHost: x\r\nOrigin: ${PAGE}\r\nAccess-Control-Request-Method: GET\r\n\r\n`;
  socket.write(preflightText.repeat(1000));
  await once(socket, 'close');
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1]);
  assert.deepEqual(statuses, [...Array(20).fill('204'), '429']);
  const last = received.slice(received.lastIndexOf('HTTP/1.1 '));
  assert.match(last, /^access-control-allow-origin: http:\/\/127\.0\.0\.1:8081\r$/im);
  assert.match(last, /"code":"login_throttled"/);
  assert.equal((await preflight(`${origin}${SEARCH}`, PAGE)).status, 429);
  // A browser's request after its preflight carries the credentials: a login clears the count.
  assert.equal((await request(`${origin}${SEARCH}`, { headers: { authorization: AUTH, origin: PAGE } })).status, 200);
  for (let i = 0; i < 20; i += 1) {
    assert.equal((await preflight(`${origin}${SEARCH}`, PAGE)).status, 204);
    assert.equal((await request(`${origin}${SEARCH}`, { headers: { authorization: AUTH, origin: PAGE } })).status, 200);
  }
});

test('any other OPTIONS is an ordinary request: 401 without credentials, then 405', async (t) => {
  const origin = await serveFixture(t, { corsOrigins: [PAGE], maxAuthFailures: 0 });
  const url = `${origin}/api/v1/status`;
  const cases: Record<string, string>[] = [
    { origin: OTHER_PAGE, 'access-control-request-method': 'GET' },
    { origin: PAGE },
    { origin: PAGE, 'access-control-request-method': 'POST' },
    { origin: PAGE, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, x-mehr' },
  ];
  for (const headers of cases) {
    const unauthenticated = await request(url, { method: 'OPTIONS', headers });
    assertReply(unauthenticated, 401, { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' });
    const authenticated = await request(url, { method: 'OPTIONS', headers: { ...headers, authorization: AUTH } });
    assertReply(authenticated, 405, { fehler: 'Methode nicht erlaubt.', code: 'method_not_allowed' });
    assert.equal(authenticated.headers.allow, 'GET, HEAD');
  }
  const elsewhere = await preflight(`${origin}/api/v1/nirgends`, PAGE);
  assertReply(elsewhere, 401, { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' });
  assertCorsHeaders(elsewhere, PAGE);
});

test('every other response to a listed origin carries the CORS headers: 200, 400, 401, 404, 405, HEAD', async (t) => {
  const origin = await serveFixture(t, { corsOrigins: [PAGE, OTHER_PAGE], maxAuthFailures: 0 });
  const ask = (path: string, authorization?: string, method = 'GET') =>
    request(`${origin}${path}`, { method, headers: { origin: PAGE, ...(authorization ? { authorization } : {}) } });
  const replies = [
    [await ask(SEARCH, AUTH), 200],
    [await ask('/api/v1/status', AUTH), 200],
    [await ask('/api/v1/buchungen?von=gestern', AUTH), 400],
    [await ask(SEARCH), 401],
    [await ask(SEARCH, WRONG), 401],
    [await ask('/api/v1/nirgends', AUTH), 404],
    [await ask('/api/v1/status', AUTH, 'DELETE'), 405],
    [await ask(SEARCH, AUTH, 'HEAD'), 200],
  ] as const;
  for (const [reply, status] of replies) {
    assert.equal(reply.status, status);
    assertCommonHeaders(reply);
    assertCorsHeaders(reply, PAGE);
  }
});

test('while the list is not empty every response varies on Origin; an unlisted or missing Origin gets no CORS header', async (t) => {
  const origin = await serveFixture(t, { corsOrigins: [PAGE], maxAuthFailures: 0 });
  for (const headers of [{ origin: OTHER_PAGE }, {}, { origin: 'null' }]) {
    for (const authorization of [AUTH, WRONG]) {
      const reply = await request(`${origin}${SEARCH}`, { headers: { ...headers, authorization } });
      assertNoCorsHeaders(reply);
      assert.equal(reply.headers.vary, 'Origin');
    }
    const notPreflight = await preflight(`${origin}${SEARCH}`, headers.origin ?? '');
    assert.equal(notPreflight.status, 401);
    assertNoCorsHeaders(notPreflight);
  }
});

test('without corsOrigins: no CORS header, no Vary, and OPTIONS is an ordinary request', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 0 });
  const reply = await request(`${origin}${SEARCH}`, { headers: { origin: PAGE, authorization: AUTH } });
  assert.equal(reply.status, 200);
  assertNoCorsHeaders(reply);
  assert.equal(reply.headers.vary, undefined);
  const options = await preflight(`${origin}${SEARCH}`, PAGE);
  assertReply(options, 401, { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' });
  assertNoCorsHeaders(options);
});

test('createHandler refuses "*" and malformed origins at creation, naming the option and the value', (t) => {
  const db = openFixture(t);
  for (const [origins, message] of [
    [['*'], /^options\.corsOrigins\[0\] "\*" is refused: no wildcard/],
    [
      [PAGE, 'https://buchhaltung.example/kasse'],
      /^options\.corsOrigins\[1\] "https:\/\/buchhaltung\.example\/kasse" is not an origin/,
    ],
    ['https://buchhaltung.example', /^options\.corsOrigins must be an array/],
  ] as const) {
    assert.throws(() => createHandler(db, CREDENTIALS, { corsOrigins: origins as unknown as string[] }), {
      name: 'TypeError',
      message,
    });
  }
});
