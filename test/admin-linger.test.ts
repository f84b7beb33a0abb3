// The admin listener writes its answers as the API does (lib/respond.ts): one given before a
// body was read reaches a client that writes all of it before it reads, and a body that never
// ends is cut off within the same bounds (lib/linger.ts, test/http-linger.test.ts).

import { test } from 'node:test';
import { type AdminAnswers, createAdminServer } from '../bin/admin/admin.js';
import { answeredEveryTime, assertEndlessBodyCutOff, listenCounting } from './support/linger.js';

const REQUEST_TIMEOUT_MS = 3_000;

const ANSWERS: AdminAnswers = {
  live: () => true,
  ready: async () => ({ ready: true, books: [] }),
  metrics: async () => '# HELP x X.\n# TYPE x gauge\nx 1\n',
  reload: () => undefined,
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
