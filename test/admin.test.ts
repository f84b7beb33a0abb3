// The admin listener of the CLI (docs/operations.md, "Monitoring"): /live, /ready and
// /metrics beside the API, for one process and for --workers, checked with the tools an
// admin points at it — promtool, and a Prometheus server that scrapes it.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { type Running, start } from './support/cli-helpers.js';
import { AUTH, buildDatabase, get, type Reply, request, tempDir } from './support/helpers.js';
import { promtoolCheckMetrics } from './support/prometheus.js';

const ADMIN_LINE =
  /admin listener on (http:\/\/127\.0\.0\.1:\d+\/|unix:([^:\s]+):\/) \(\/live, \/ready, \/metrics; no credentials\)$/m;

/** The admin listener's origin, from the start-up line that says where it is. */
function adminOf(server: Running): string {
  const match = ADMIN_LINE.exec(server.output().stdout);
  assert.ok(match !== null, `a line naming the admin listener: ${server.output().stdout}`);
  return (match[1] as string).replace(/\/$/, '');
}

function requestOverSocket(socketPath: string, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the admin listener is off by default', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  assert.doesNotMatch(server.output().stdout, /admin listener/);
});

test('--admin-port: /live and /ready without credentials; /metrics passes promtool check metrics', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--base-path', '/kasse', '--admin-port', '0']);
  const admin = adminOf(server);
  const live = await request(`${admin}/live`);
  assert.equal(live.status, 200);
  assert.deepEqual(JSON.parse(live.body), { live: true });
  const ready = await request(`${admin}/ready`);
  assert.equal(ready.status, 200, ready.body);
  const body = JSON.parse(ready.body) as { ready: boolean; books: { since: string }[] };
  assert.match(body.books[0]?.since ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(body, {
    ready: true,
    books: [{ name: 'booking-search-server', basePath: '/kasse', state: 'serving', since: body.books[0]?.since }],
  });
  const metrics = await request(`${admin}/metrics`);
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const lint = await promtoolCheckMetrics(metrics.body);
  assert.deepEqual(lint, { code: 0, output: '' }, metrics.body);
  assert.match(metrics.body, /^booking_search_book_state\{book="booking-search-server",state="serving"\} 1$/m);
  assert.match(metrics.body, /^booking_search_build_info\{version="1\.0\.0",node="[\d.]+",sqlite="[\d.]+"\} 1$/m);
});

test("a user's request never reaches the admin paths, and the admin listener never answers a booking", async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0']);
  const admin = adminOf(server);
  const origin = new URL(server.api).origin;
  for (const path of ['/live', '/ready', '/metrics', '/api/v1/../metrics', '/api/v1/metrics']) {
    // Credentials first, as for every path of the API; then no such path.
    assert.equal((await request(`${origin}${path}`)).status, 401, path);
    const reply = await get(`${origin}${path}`);
    assert.equal(reply.status, 404, path);
    assert.equal(JSON.parse(reply.body).code, 'not_found', path);
  }
  for (const path of ['/api/v1/status', '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5', '/']) {
    for (const headers of [{}, { authorization: AUTH }]) {
      const reply = await request(`${admin}${path}`, { headers });
      assert.equal(reply.status, 404, path);
      assert.doesNotMatch(reply.body, /buchungen|anzahl|betrag/, path);
    }
  }
});

test('--admin-socket beside --socket: the same mode; the admin answers there and nowhere else', async (t) => {
  const dir = tempDir(t);
  const socket = join(dir, 'api.sock');
  const adminSocket = join(dir, 'admin.sock');
  const server = await start(t, ['--db', buildDatabase(t), '--socket', socket, '--admin-socket', adminSocket]);
  assert.match(server.output().stdout, new RegExp(`admin listener on unix:${adminSocket}:/ `));
  assert.equal(statSync(adminSocket).mode & 0o777, 0o660);
  assert.equal((await requestOverSocket(adminSocket, '/ready')).status, 200);
  assert.equal((await requestOverSocket(socket, '/ready')).status, 401);
  await server.stop();
  assert.throws(() => statSync(adminSocket), /ENOENT/, 'removed on exit');
});

test('--workers 2: the primary answers for both workers together', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--workers', '2', '--admin-port', '0']);
  const admin = adminOf(server);
  const ready = JSON.parse((await request(`${admin}/ready`)).body) as { ready: boolean; workers: unknown };
  assert.equal(ready.ready, true);
  assert.deepEqual(ready.workers, { serving: 2, of: 2 });
  const metrics = (await request(`${admin}/metrics`)).body;
  assert.match(metrics, /^booking_search_processes 2$/m);
  assert.match(metrics, /^booking_search_book_state\{book="booking-search-server",state="serving"\} 2$/m);
  assert.deepEqual(await promtoolCheckMetrics(metrics), { code: 0, output: '' });
});
