// The admin listener's answers (bin/admin.ts) from given facts; the CLI's own use of it,
// with real books, workers and Prometheus, is test/admin.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AdminAnswers, createAdminHandler, type Readiness } from '../../bin/admin.js';
import { request, serve } from '../support/helpers.js';

const SERVING: Readiness = {
  ready: true,
  books: [{ name: 'kasse', basePath: '/kasse', state: 'serving', since: '2026-03-14T09:00:00.000Z' }],
};
const WAITING: Readiness = {
  ready: false,
  books: [
    {
      name: 'kasse',
      basePath: '/kasse',
      state: 'waiting',
      reason: 'it is in WAL mode and kasse.sqlite-wal or kasse.sqlite-shm is missing',
      since: '2026-03-14T09:00:00.000Z',
    },
  ],
};

function answers(overrides: Partial<AdminAnswers> = {}): AdminAnswers {
  return {
    live: () => true,
    ready: async () => SERVING,
    metrics: async () => '# HELP x X.\n# TYPE x gauge\nx 1\n',
    ...overrides,
  };
}

test('GET /live: 200 while the service serves, 503 once it stops; HEAD the same without a body', async (t) => {
  let live = true;
  const origin = await serve(t, createAdminHandler(answers({ live: () => live })));
  const up = await request(`${origin}/live`);
  assert.equal(up.status, 200);
  assert.equal(up.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(up.body, '{"live":true}\n');
  const head = await request(`${origin}/live`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  live = false;
  assert.equal((await request(`${origin}/live`)).status, 503);
});

test('GET /ready: 200 with the books while all are served, 503 naming the one that is not and why', async (t) => {
  let readiness = SERVING;
  const origin = await serve(t, createAdminHandler(answers({ ready: async () => readiness })));
  const ready = await request(`${origin}/ready`);
  assert.equal(ready.status, 200);
  assert.deepEqual(JSON.parse(ready.body), SERVING);
  readiness = WAITING;
  const waiting = await request(`${origin}/ready`);
  assert.equal(waiting.status, 503);
  assert.deepEqual(JSON.parse(waiting.body), WAITING);
  assert.equal(waiting.headers['cache-control'], 'no-store');
});

test('GET /metrics: the exposition with its Content-Type', async (t) => {
  const origin = await serve(t, createAdminHandler(answers()));
  const metrics = await request(`${origin}/metrics`);
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  assert.equal(metrics.body, '# HELP x X.\n# TYPE x gauge\nx 1\n');
});

test('other paths 404 (the API is not answered here), other methods 405, a failed answer 500 with its reason', async (t) => {
  const origin = await serve(
    t,
    createAdminHandler(answers({ metrics: async () => Promise.reject(new Error('no answer from worker 7')) })),
  );
  for (const path of ['/', '/api/v1/status', '/api/v1/buchungen?von=2026-01-01&bis=2026-01-31&betrag=1', '/live/x']) {
    const reply = await request(`${origin}${path}`);
    assert.equal(reply.status, 404, path);
    assert.equal(reply.body, '{"error":"not found: the admin listener answers /live, /ready and /metrics"}\n');
  }
  const post = await request(`${origin}/ready`, { method: 'POST' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
  const failed = await request(`${origin}/metrics`);
  assert.equal(failed.status, 500);
  assert.equal(failed.body, '{"error":"Error: no answer from worker 7"}\n');
});
