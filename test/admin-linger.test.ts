// The admin listener writes its answers as the API does (lib/respond.ts): one given before a
// body was read reaches a client that writes all of it before it reads, and a body that never
// ends is cut off within the same bounds (lib/linger.ts, test/http-linger.test.ts). Its 400
// closes the connection as every 400 does: nothing pipelined after it is answered.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { type AdminAnswers, createAdminServer } from '../bin/admin/admin.js';
import { answeredEveryTime, assertEndlessBodyCutOff, listenCounting, pipelinedAfterBody } from './support/linger.js';

const REQUEST_TIMEOUT_MS = 3_000;

const ANSWERS: AdminAnswers = {
  live: () => true,
  ready: async () => ({ ready: true, books: [] }),
  metrics: async () => '# HELP x X.\n# TYPE x gauge\nx 1\n',
  reload: () => true,
};

const TIMEOUTS = { headersMs: 1_000, requestMs: REQUEST_TIMEOUT_MS, keepAliveMs: 1_000, sendMs: 10_000 };

test('a client that writes ~1 MB of body before it reads gets the admin listener’s answer every time', async (t) => {
  const { port } = await listenCounting(t, createAdminServer(ANSWERS, TIMEOUTS));
  await t.test('the 202 of POST /-/reload', () => answeredEveryTime(port, false, 'POST /-/reload', '', 1_000_000, 202));
  await t.test('the 200 of GET /ready', () => answeredEveryTime(port, false, 'GET /ready', '', 1_000_000, 200));
  await t.test('the 404 of a path not served', () =>
    answeredEveryTime(port, false, 'POST /nowhere', '', 1_000_000, 404),
  );
});

test('a body that never ends, sent to the admin listener, is cut off within the same bounds', async (t) => {
  const listening = await listenCounting(t, createAdminServer(ANSWERS, TIMEOUTS));
  await assertEndlessBodyCutOff(listening, 'POST /-/reload', 'HTTP/1.1 202 Accepted', REQUEST_TIMEOUT_MS);
});

test('requests pipelined after a lingering body sent to the admin listener are not read beyond the read that ends it', async (t) => {
  const { port, readOf } = await listenCounting(t, createAdminServer(ANSWERS, TIMEOUTS));
  const head = 'POST /-/reload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\n';
  const [received, ms] = await pipelinedAfterBody(port, head, 200, 15_000, true);
  assert.deepEqual(received.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 202']);
  assert.ok(ms < 1_000, `closed after ${ms} ms`);
  const read = await readOf(0);
  assert.ok(read < 128 * 1024, `the server read ${read} bytes`);
});

test('a reload from a web page gets its 400 with Connection: close, and nothing pipelined after it is answered', async (t) => {
  const { port } = await listenCounting(t, createAdminServer(ANSWERS, TIMEOUTS));
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  const closed = once(socket, 'close');
  socket.write(
    'POST /-/reload HTTP/1.1\r\nHost: localhost\r\nOrigin: https://evil.example\r\nContent-Length: 0\r\n\r\n' +
      'GET /live HTTP/1.1\r\nHost: localhost\r\n\r\n',
  );
  const timer = setTimeout(() => socket.destroy(), 3_000);
  await closed;
  clearTimeout(timer);
  assert.deepEqual(received.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 400']);
  assert.match(received, /\r\nConnection: close\r\n/i);
});
