// lib/cors.ts: which origins may be listed, and the headers for a request (docs/API.md,
// Browser clients (CORS)).

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { createCors, GRANTS, originProblem, validateCorsOrigins } from '../../lib/cors.js';

test('originProblem accepts exact origins as a browser sends them', () => {
  for (const origin of [
    'https://buchhaltung.example',
    'http://127.0.0.1:8081',
    'http://localhost:3000',
    'https://xn--bro-hoa.example',
    'http://[::1]:8081',
  ]) {
    assert.equal(originProblem(origin), undefined, origin);
  }
});

test('originProblem refuses wildcards, paths, other schemes and spellings a browser never sends', () => {
  const cases: [unknown, RegExp][] = [
    ['*', /^"\*" is refused: no wildcard/],
    ['https://*.example', /^"https:\/\/\*\.example" is refused: no wildcard/],
    ['https://buchhaltung.example/', /is not an origin: give scheme:\/\/host\[:port\]/],
    ['https://buchhaltung.example/kasse', /is not an origin/],
    ['https://buchhaltung.example?x=1', /is not an origin/],
    ['https://user@buchhaltung.example', /is not an origin/],
    ['buchhaltung.example', /is not an origin/],
    ['ftp://buchhaltung.example', /is not an origin/],
    ['null', /is not an origin/],
    ['', /is not an origin/],
    [' https://buchhaltung.example', /is not an origin/],
    ['http://127.0.0.1:99999', /the host or port is not valid/],
    ['https://Buchhaltung.example', /not written as a browser sends it: write "https:\/\/buchhaltung\.example"/],
    ['https://buchhaltung.example:443', /write "https:\/\/buchhaltung\.example"/],
    ['http://127.0.0.1:80', /write "http:\/\/127\.0\.0\.1"/],
    [42, /^must be a string, not number$/],
  ];
  for (const [origin, problem] of cases) assert.match(originProblem(origin) ?? 'accepted', problem, String(origin));
});

test('validateCorsOrigins throws a TypeError naming the option, the index and the bad value', () => {
  assert.deepEqual(validateCorsOrigins([]), []);
  assert.throws(() => validateCorsOrigins('https://a.example'), {
    name: 'TypeError',
    message: /^options\.corsOrigins must be an array of origins/,
  });
  assert.throws(() => validateCorsOrigins(['https://a.example', '*']), {
    name: 'TypeError',
    message: /^options\.corsOrigins\[1\] "\*" is refused/,
  });
});

function fakeRequest(method: string, headers: Record<string, string>): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

const LISTED = 'http://127.0.0.1:8081';

test('createCors([]) adds nothing, not even Vary', () => {
  const cors = createCors([]);
  assert.deepEqual(cors.responseHeaders(fakeRequest('GET', { origin: LISTED })), []);
  assert.equal(
    cors.preflight(fakeRequest('OPTIONS', { origin: LISTED, 'access-control-request-method': 'GET' }), GRANTS.read),
    undefined,
  );
});

test('responseHeaders: a listed origin gets allow-origin, credentials, expose Retry-After; any other only Vary', () => {
  const cors = createCors([LISTED, 'https://buchhaltung.example']);
  assert.deepEqual(cors.responseHeaders(fakeRequest('GET', { origin: LISTED })), [
    'Access-Control-Allow-Origin',
    LISTED,
    'Access-Control-Allow-Credentials',
    'true',
    'Access-Control-Expose-Headers',
    'Retry-After',
    'Vary',
    'Origin',
  ]);
  for (const origin of ['http://127.0.0.1:8082', 'null', 'HTTP://127.0.0.1:8081', `${LISTED}/`]) {
    assert.deepEqual(cors.responseHeaders(fakeRequest('GET', { origin })), ['Vary', 'Origin'], origin);
  }
  assert.deepEqual(cors.responseHeaders(fakeRequest('GET', {})), ['Vary', 'Origin']);
});

test('preflight: only OPTIONS from a listed origin asking for GET or HEAD with at most Authorization', () => {
  const cors = createCors([LISTED]);
  const ask = (method: string, headers: Record<string, string>) =>
    cors.preflight(fakeRequest(method, { origin: LISTED, ...headers }), GRANTS.read);
  for (const headers of [
    { 'access-control-request-method': 'GET' },
    { 'access-control-request-method': 'HEAD' },
    { 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    { 'access-control-request-method': 'GET', 'access-control-request-headers': 'Authorization' },
  ]) {
    assert.deepEqual(ask('OPTIONS', headers), [
      'Access-Control-Allow-Origin',
      LISTED,
      'Access-Control-Allow-Credentials',
      'true',
      'Access-Control-Allow-Methods',
      'GET, HEAD',
      'Access-Control-Allow-Headers',
      'Authorization',
      'Access-Control-Max-Age',
      '600',
      'Vary',
      'Origin',
    ]);
  }
  assert.equal(ask('OPTIONS', {}), undefined, 'no Access-Control-Request-Method');
  assert.equal(ask('OPTIONS', { 'access-control-request-method': 'POST' }), undefined);
  assert.equal(ask('OPTIONS', { 'access-control-request-method': 'get' }), undefined, 'methods are case-sensitive');
  assert.equal(
    ask('OPTIONS', {
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization,x-evil',
    }),
    undefined,
  );
  assert.equal(ask('GET', { 'access-control-request-method': 'GET' }), undefined);
  assert.equal(
    cors.preflight(
      fakeRequest('OPTIONS', { origin: 'http://evil.example', 'access-control-request-method': 'GET' }),
      GRANTS.read,
    ),
    undefined,
  );
});

test('preflight of the reconciliation: POST with Authorization and Content-Type, nothing else', () => {
  const cors = createCors([LISTED]);
  const ask = (headers: Record<string, string>) =>
    cors.preflight(fakeRequest('OPTIONS', { origin: LISTED, ...headers }), GRANTS.post);
  assert.deepEqual(
    ask({ 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' }),
    [
      'Access-Control-Allow-Origin',
      LISTED,
      'Access-Control-Allow-Credentials',
      'true',
      'Access-Control-Allow-Methods',
      'POST',
      'Access-Control-Allow-Headers',
      'Authorization, Content-Type',
      'Access-Control-Max-Age',
      '600',
      'Vary',
      'Origin',
    ],
  );
  assert.equal(ask({ 'access-control-request-method': 'GET' }), undefined);
  assert.equal(
    ask({ 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-other' }),
    undefined,
  );
  assert.equal(
    cors.preflight(fakeRequest('OPTIONS', { origin: LISTED, 'access-control-request-method': 'POST' }), GRANTS.read),
    undefined,
  );
});
