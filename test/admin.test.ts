// The admin listener of the CLI (docs/operations.md, "Monitoring"): /live, /ready and
// /metrics beside the API, for one process and for --workers, checked with the tools an
// admin points at it — promtool, and a Prometheus server that scrapes it.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeSync, copyFileSync, openSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { LOCK_WAIT_MS } from '../lib/search/index.js';
import { cashBook } from './support/cash-book.js';
import { assertFails, cleanEnv, type Running, run, start, waitFor } from './support/cli-helpers.js';
import {
  AUTH,
  basicAuth,
  buildDatabase,
  CREDENTIALS,
  databaseDir,
  get,
  HASH_OF_ALT,
  type Reply,
  request,
  tempDir,
} from './support/helpers.js';
import { promtoolCheckMetrics, startPrometheus } from './support/prometheus.js';

const ADMIN_LINE =
  /admin listener on (http:\/\/127\.0\.0\.1:\d+\/|unix:([^:\s]+):\/) \(\/live, \/ready, \/metrics, POST \/-\/reload; no credentials\)$/m;

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

test('Prometheus scrapes the admin listener, and its query API returns the request counter after a known number of requests', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0']);
  const admin = adminOf(server);
  const prometheus = await startPrometheus(t, new URL(admin).host);
  for (let i = 0; i < 7; i += 1) assert.equal((await get(`${server.api}status`)).status, 200);
  for (let i = 0; i < 3; i += 1) {
    const search = await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5`);
    assert.equal(search.status, 200);
  }
  assert.equal((await request(`${server.api}status`)).status, 401);
  assert.equal((await get(`${server.api}buchungen?von=2026-03-01`)).status, 400);
  const expected = new Map([
    ['status 200', '7'],
    ['search 200', '3'],
    ['status 401 unauthorized', '1'],
    ['search 400 bad_query', '1'],
  ]);
  const deadline = Date.now() + 20_000;
  let seen = new Map<string, string>();
  while (Date.now() < deadline) {
    const samples = await prometheus.query('booking_search_requests_total');
    seen = new Map(
      samples.map(({ metric, value }) => [
        [metric['endpoint'], metric['status'], metric['error']].filter((part) => part !== undefined).join(' '),
        value[1],
      ]),
    );
    if ([...expected].every(([series, value]) => seen.get(series) === value)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  for (const [series, value] of expected)
    assert.equal(seen.get(series), value, `${series}: ${JSON.stringify([...seen])}`);
  const [target] = await prometheus.targets();
  assert.equal(target?.health, 'up', target?.lastError);
  assert.equal(target?.scrapeUrl, `${admin}/metrics`);
  const failed = await prometheus.query('booking_search_failed_logins_total{reason="no_credentials"}');
  assert.equal(failed[0]?.value[1], '1');
});

test('--workers 2: the counts of both workers add up; a worker that ends leaves its counts in the sums', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--workers', '2', '--admin-port', '0']);
  const admin = adminOf(server);
  // A new connection per request: the primary deals them to the workers in turn.
  for (let i = 0; i < 10; i += 1) assert.equal((await get(`${server.api}status`)).status, 200);
  const count = async (): Promise<number> => {
    const match = /^booking_search_requests_total\{endpoint="status",status="200"\} (\d+)$/m.exec(
      (await request(`${admin}/metrics`)).body,
    );
    return Number(match?.[1]);
  };
  assert.equal(await count(), 10);
  const pids = /\(pids (\d+), (\d+)\)/.exec(server.output().stdout);
  assert.ok(pids !== null, server.output().stdout);
  process.kill(Number(pids[1]), 'SIGKILL');
  const deadline = Date.now() + 10_000;
  let ready = await request(`${admin}/ready`);
  while (Date.now() < deadline && !/"serving":2/.test(ready.body)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    ready = await request(`${admin}/ready`);
  }
  assert.equal(ready.status, 200, ready.body);
  assert.equal(await count(), 10, 'the ended worker counted still');
  assert.match((await request(`${admin}/metrics`)).body, /^booking_search_worker_restarts_total 1$/m);
});

test('/metrics counts failed logins and refusals by reason, and a search turn for each search', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0', '--max-auth-failures', '2']);
  const admin = adminOf(server);
  for (let i = 0; i < 3; i += 1) await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5`);
  const wrong = { authorization: `Basic ${Buffer.from('kasse:falsch').toString('base64')}` };
  assert.equal((await request(`${server.api}status`, { headers: wrong })).status, 401);
  assert.equal((await request(`${server.api}status`, { headers: wrong })).status, 401);
  // kasse logged in from this address before: its own failures there block it alone (reason client).
  assert.equal((await get(`${server.api}status`)).status, 429, 'the client is blocked');
  const metrics = (await request(`${admin}/metrics`)).body;
  for (const line of [
    'booking_search_failed_logins_total{reason="wrong_credentials"} 2',
    'booking_search_failed_logins_total{reason="no_credentials"} 0',
    'booking_search_refusals_total{reason="client"} 1',
    'booking_search_refusals_total{reason="address"} 0',
    'booking_search_requests_total{endpoint="status",status="401",error="unauthorized"} 2',
    'booking_search_requests_total{endpoint="status",status="429",error="login_throttled"} 1',
    'booking_search_requests_total{endpoint="search",status="200"} 3',
    'booking_search_search_wait_seconds_count 3',
    'booking_search_request_duration_seconds_count{endpoint="search"} 3',
  ]) {
    assert.ok(metrics.includes(`\n${line}\n`), `${line} in ${metrics}`);
  }
});

// A reconciliation was counted as a search: its seconds in the search's histogram.
test('/metrics counts a reconciliation under its own endpoint, abgleich, and not as a search', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0']);
  const admin = adminOf(server);
  const headers = { authorization: AUTH, 'content-type': 'application/json' };
  const body = JSON.stringify({ zeilen: [{ datum: '2026-03-10', betrag: '-12.50' }] });
  const reconciled = await request(`${server.api}abgleich`, { method: 'POST', headers, body });
  assert.equal(reconciled.status, 200, reconciled.body);
  const refused = await request(`${server.api}abgleich`, { method: 'POST', headers, body: '{' });
  assert.equal(refused.status, 400, refused.body);
  const metrics = (await request(`${admin}/metrics`)).body;
  for (const line of [
    'booking_search_requests_total{endpoint="search",status="200"} 0',
    'booking_search_requests_total{endpoint="abgleich",status="200"} 1',
    'booking_search_requests_total{endpoint="abgleich",status="400",error="bad_body"} 1',
    'booking_search_request_duration_seconds_count{endpoint="search"} 0',
    'booking_search_request_duration_seconds_count{endpoint="abgleich"} 2',
  ]) {
    assert.ok(metrics.includes(`\n${line}\n`), `${line} in ${metrics}`);
  }
  assert.deepEqual(await promtoolCheckMetrics(metrics), { code: 0, output: '' });
});

test('/live says 503 from SIGTERM on, while a request in flight finishes; then the service exits 0', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, `pruefer:${HASH_OF_ALT}\n`, { mode: 0o600 });
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--credentials-file', file, '--admin-port', '0'],
    cleanEnv(),
  );
  const admin = adminOf(server);
  assert.equal((await request(`${admin}/live`)).status, 200);
  // A first login with a hashed password: its check takes a good part of a second.
  const inFlight = request(`${server.api}status`, { headers: { authorization: basicAuth('pruefer', 'alt') } });
  await new Promise((resolve) => setTimeout(resolve, 100));
  server.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const stopping = await request(`${admin}/live`);
  assert.equal(stopping.status, 503);
  assert.deepEqual(JSON.parse(stopping.body), { live: false });
  assert.equal((await inFlight).status, 200, 'the request in flight finished');
  // It ends by itself once nothing is in flight (another signal now could meet its exit).
  if (server.child.exitCode === null) await once(server.child, 'exit');
  assert.equal(server.child.exitCode, 0, JSON.stringify(server.output()));
});

for (const workers of [[], ['--workers', '2']]) {
  test(`/ready says 503 and that the service stops from SIGTERM on, while a request in flight finishes${workers.length > 0 ? ' (--workers 2)' : ''}`, async (t) => {
    const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0', ...workers]);
    const admin = adminOf(server);
    assert.equal((await request(`${admin}/ready`)).status, 200);
    // A reconciliation whose body has not all come: it holds the stop open.
    const held = connect({ port: Number(new URL(server.origin).port), host: '127.0.0.1' });
    let answer = '';
    held.setEncoding('utf8');
    held.on('data', (data: string) => (answer += data));
    held.write(
      `POST /api/v1/abgleich HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"posten":`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ready = await request(`${admin}/ready`);
    assert.equal(ready.status, 503, ready.body);
    const body = JSON.parse(ready.body) as { ready: boolean; reason: string; books: unknown[] };
    assert.equal(body.ready, false);
    assert.equal(body.reason, 'the service is stopping: it answers its open requests, takes no new ones');
    assert.equal(body.books.length, 1);
    held.write('[]}        ');
    await once(held, 'close');
    assert.match(answer, /^HTTP\/1\.1 \d{3} /, 'the request in flight was answered');
    if (server.child.exitCode === null) await once(server.child, 'exit');
    assert.equal(server.child.exitCode, 0, JSON.stringify(server.output()));
  });
}

test("the admin listener has the API listener's protections: a body is never read, --headers-timeout, JSON protocol errors", async (t) => {
  const server = await start(t, [
    '--db',
    buildDatabase(t),
    '--admin-port',
    '0',
    '--workers',
    '2',
    '--headers-timeout',
    '1',
    '--request-timeout',
    '2',
  ]);
  const { port } = new URL(adminOf(server));
  /** Writes `head`, then uploads for up to `uploadMs`; what was answered, and whether the server closed. */
  const exchange = (head: string, uploadMs: number): Promise<{ answer: string; closedMs: number | undefined }> =>
    new Promise((resolve) => {
      const socket = connect({ port: Number(port), host: '127.0.0.1' });
      const began = Date.now();
      let answer = '';
      const chunk = Buffer.alloc(64 * 1024, 120);
      const upload = setInterval(() => {
        if (uploadMs > 0 && !socket.destroyed) socket.write(chunk);
      }, 5);
      const finish = (closedMs: number | undefined): void => {
        clearInterval(upload);
        clearTimeout(timer);
        socket.destroy();
        resolve({ answer, closedMs });
      };
      const timer = setTimeout(() => finish(undefined), Math.max(uploadMs, 4_000));
      socket.setEncoding('utf8');
      socket.on('data', (data: string) => (answer += data));
      socket.on('error', () => {});
      socket.on('close', () => finish(Date.now() - began));
      socket.on('connect', () => socket.write(head));
    });
  const post = await exchange('POST /live HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000000\r\n\r\n', 4_000);
  assert.match(post.answer, /^HTTP\/1\.1 405 /);
  assert.ok(post.closedMs !== undefined && post.closedMs < 3_000, `closed after ${post.closedMs} ms`);
  const idle = await exchange('GET /ready HTTP/1.1\r\n', 0);
  assert.match(idle.answer, /^HTTP\/1\.1 408 [\s\S]*\{"fehler":"[^"]+","code":"request_timeout"\}$/);
  assert.ok(idle.closedMs !== undefined && idle.closedMs < 3_000, `closed after ${idle.closedMs} ms`);
  assert.equal((await request(`${adminOf(server)}/live`)).status, 200);
});

/**
 * Files whose bookings the service refuses, together every kind of problem the judgement of
 * the own schema knows, each row carrying values one can find again: `rows` as (id, date,
 * amount) under a view `entries`, which keeps each value's type; `named`, what check shows
 * of them; `written`, how else they may read. A NULL date or amount has no value to show.
 */
const REFUSED = [
  {
    rows: "('beleg-Wagner', NULL, 9007199254740993), (2, '2026-03-15', 100)",
    named: ["'beleg-Wagner'", '9007199254740992'],
  },
  {
    rows: "(9007199254740995, 20250317, 4711.25), (2, '2026-03-15', 100)",
    named: ['9007199254740996', '20250317', '4711.25'],
  },
  {
    rows: "(8675309, '2026-03-14 Gehalt Mueller', NULL), (8675309, '2026-03-15', 100)",
    named: ['8675309', "'2026-03-14 Gehalt Mueller'"],
  },
  {
    rows: "('beleg-Fischer', 1773446400, '-25/2 Kaiser'), (2, '2026-03-15', 100)",
    named: ["'beleg-Fischer'", '1773446400', "'-25/2 Kaiser'"],
  },
  {
    rows: "(9007199254740995, '14.03.2026 Miete Schulze', 9007199254740999), (2, '2026-03-15', 100)",
    named: ['9007199254740996', "'14.03.2026 Miete Schulze'", '9007199254741000'],
  },
];
const WRITTEN = [
  'Wagner',
  '9007199254740993',
  '9007199254740995',
  '8675309',
  'Mueller',
  'Fischer',
  'Kaiser',
  'Schulze',
  '9007199254740999',
  '20250317',
  '4711.25',
  '1773446400',
];
/** Each kind of problem, as the service says it. */
const KINDS = [
  '1 booking has no date (NULL): ',
  "dates are numbers, not 'YYYY-MM-DD' text: every search",
  "dates are numbers, not 'YYYY-MM-DD' text: convert them",
  'dates carry a time: ',
  "some dates are not 'YYYY-MM-DD' text: ",
  'some amounts lie beyond ',
  'some amounts are REAL numbers, not whole cents: ',
  'some amounts are NULL: ',
  'some amounts are not whole cents: ',
  'some ids are not whole numbers ',
  'ids are not unique (two bookings have the same one): ',
];
const CHECK_NAMES_THEM = 'booking-search-server check names examples from the bookings.';

function writeRefused(file: string, rows: string): void {
  const db = new Database(file);
  db.exec(`CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE raw (i, d, a);
    INSERT INTO raw VALUES ${rows};
    CREATE VIEW entries AS SELECT i AS id, d AS date, a AS amount_cents, '' AS subject,
      NULL AS category_id, NULL AS payment_method_id FROM raw;`);
  db.close();
}

test("a refused book's log line, /ready and /metrics, and createHandler's error, name no value of its bookings, for every kind of problem the judgement knows, and point at check, which names them", async (t) => {
  const dir = tempDir(t);
  const files = REFUSED.map((_, i) => join(dir, `kasse${i}.sqlite`));
  const forbidden = [...WRITTEN, ...REFUSED.flatMap(({ named }) => named.map((value) => value.replace(/^'|'$/g, '')))];
  const valueIn = (text: string): string | undefined => forbidden.find((value) => text.includes(value));
  for (const [i, { rows, named }] of REFUSED.entries()) {
    const refused = join(dir, `refused${i}.sqlite`);
    writeRefused(refused, rows);
    const checked = await run(['check', '--db', refused]);
    assert.equal(checked.code, 1, checked.stdout);
    for (const value of named) assert.ok(checked.stdout.includes(value), `check names ${value}: ${checked.stdout}`);
    const db = new Database(refused, { readonly: true, fileMustExist: true });
    assert.throws(
      () => createHandler(db, CREDENTIALS),
      (error: unknown) => {
        const message = String(error);
        assert.ok(
          message.startsWith('Error: db cannot be served exactly: ') && message.endsWith(CHECK_NAMES_THEM),
          message,
        );
        assert.equal(valueIn(message), undefined, message);
        return true;
      },
    );
    db.close();
    copyFileSync(buildDatabase(t), files[i] as string);
  }
  const config = join(dir, 'books.conf');
  writeFileSync(config, files.map((file, i) => `[book kasse${i}]\ndb = ${file}\nbase-path = /kasse${i}\n`).join(''), {
    mode: 0o644,
  });
  const server = await start(t, ['--config', config, '--admin-port', '0']);
  const admin = adminOf(server);
  assert.equal((await request(`${admin}/ready`)).status, 200);
  for (const [i, file] of files.entries()) renameSync(join(dir, `refused${i}.sqlite`), file);
  const deadline = Date.now() + 15_000;
  let ready = await request(`${admin}/ready`);
  while (Date.now() < deadline && ready.body.split('"unusable"').length <= files.length) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ready = await request(`${admin}/ready`);
  }
  assert.equal(ready.status, 503, ready.body);
  const books = (JSON.parse(ready.body) as { books: { state: string; reason: string }[] }).books;
  assert.deepEqual(new Set(books.map((book) => book.state)), new Set(['unusable']), ready.body);
  for (const book of books) {
    assert.match(book.reason, /^\S+ cannot be served exactly: /);
    assert.ok(book.reason.endsWith(CHECK_NAMES_THEM), book.reason);
  }
  assert.equal(valueIn(ready.body), undefined, ready.body);
  const reasons = books.map((book) => book.reason).join('\n');
  for (const kind of KINDS) assert.ok(reasons.includes(kind), `${kind}: ${reasons}`);
  const metrics = await request(`${admin}/metrics`);
  assert.equal(valueIn(metrics.body), undefined, metrics.body);
  const stopped = await server.stop();
  for (const book of books)
    assert.ok(stopped.stderr.includes(book.reason), `the log line is /ready's reason: ${stopped.stderr}`);
  assert.equal(valueIn(stopped.stdout + stopped.stderr), undefined, stopped.stderr);
});

for (const workers of [[], ['--workers', '2']]) {
  test(`a lock held on a served book past a search's wait: /ready 503 "waiting" with the lock's reason and the searches' 500 with Retry-After after their wait while it is held, each said once in the log; 200 "serving" once it ends${workers.length > 0 ? ' (--workers 2)' : ''}`, async (t) => {
    const file = buildDatabase(t);
    const server = await start(t, ['--db', file, '--admin-port', '0', ...workers]);
    const admin = adminOf(server);
    const book = async (): Promise<{ status: number; state: string | undefined; reason?: string }> => {
      const ready = await request(`${admin}/ready`);
      const [first] = (JSON.parse(ready.body) as { books: { state: string; reason?: string }[] }).books;
      return {
        status: ready.status,
        state: first?.state,
        ...(first?.reason !== undefined && { reason: first.reason }),
      };
    };
    const search = (): Promise<Reply> =>
      get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0`, { connection: 'close' });
    assert.deepEqual(await book(), { status: 200, state: 'serving' });
    const writer = new Database(file);
    t.after(() => writer.close());
    writer.exec('BEGIN EXCLUSIVE');
    const waiting = {
      status: 503,
      state: 'waiting',
      reason: `another program holds a lock on the file (SQLITE_BUSY); SQLite lets no one read while a write is being committed: this passes when the write ends (if it lasts, see which process holds the file: fuser -v ${file})`,
    };
    // Searches for 2.5 s, 100 ms apart, on connections of their own (dealt to every worker):
    // each the 500 with Retry-After after its wait. The first that could not wait out the lock
    // has its process open the file beside the connection, which finds the lock held: the book
    // waits, its connection kept, so every search still waits for the lock to end.
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      const sent = Date.now();
      const locked = await search();
      assert.equal(locked.status, 500, locked.body);
      assert.ok(Date.now() - sent >= 90, `a search waits for the lock: answered after ${Date.now() - sent} ms`);
      assert.equal((JSON.parse(locked.body) as { code: string }).code, 'database_unavailable');
      assert.equal(locked.headers['retry-after'], '1');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(await book(), waiting);
    const metrics = (await request(`${admin}/metrics`)).body;
    assert.match(metrics, /^booking_search_book_state\{[^}]*state="waiting"\} [1-9]$/m);
    writer.exec('ROLLBACK');
    const deadline = Date.now() + 5_000;
    while ((await book()).status !== 200) {
      assert.ok(Date.now() < deadline, `still ${JSON.stringify(await book())} 5 s after the lock ended`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(await book(), { status: 200, state: 'serving' });
    // Said once by each process that met the lock, never once a request; a worker names
    // itself, so that two workers meeting one lock read as two, not as a lock that came back.
    const said = (await server.stop()).stderr.split('\n').filter((line) => line !== '');
    const lines = said.map((line) => line.replace(/^\S+Z /, ''));
    const held = `database ${file} cannot be read yet: ${waiting.reason}; each search waits up to ${LOCK_WAIT_MS} ms for it, then answers 500 with Retry-After`;
    const ended = `database ${file} can be read now; serving it`;
    const speakers = lines.filter((line) => line.endsWith(ended)).map((line) => line.slice(0, -ended.length));
    assert.ok(speakers.length >= 1 && speakers.length <= (workers.length > 0 ? 2 : 1), said.join('\n'));
    for (const speaker of speakers) assert.match(speaker, workers.length > 0 ? /^worker \d+: $/ : /^$/);
    assert.equal(new Set(speakers).size, speakers.length, said.join('\n'));
    assert.deepEqual(lines.sort(), speakers.flatMap((speaker) => [speaker + held, speaker + ended]).sort());
  });
}

test('a writer committing in a loop (locks of 500 ms, gaps of 100 ms) keeps no search from the gaps between its locks; /ready 200 once it stops', async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file, '--admin-port', '0']);
  const admin = adminOf(server);
  const writer = new Database(file);
  t.after(() => writer.close());
  const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));
  // Each lock outlasts a search's wait and the look beside the connection that it leads to,
  // so the book is said waiting; the gaps between the locks, [from, to] in ms, are where
  // searches are answered: a 200 within one (or just after it) is one found.
  const gaps: [number, number][] = [];
  let writing = true;
  const writes = (async () => {
    for (let round = 0; round < 6; round++) {
      writer.exec('BEGIN EXCLUSIVE');
      await sleep(500);
      writer.exec('COMMIT');
      const from = Date.now();
      await sleep(100);
      gaps.push([from, Date.now()]);
    }
    writing = false;
  })();
  const answered: number[] = [];
  const statuses: Record<string, number> = {};
  while (writing) {
    const reply = await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0`);
    statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
    if (reply.status === 200) answered.push(Date.now());
    await sleep(10);
  }
  await writes;
  // From the third gap on, the first two left to the judging of the lock.
  const found = gaps.slice(2).filter(([from, to]) => answered.some((at) => at >= from && at <= to + 50));
  assert.ok(
    found.length >= 3,
    `200s in ${found.length} of the last ${gaps.length - 2} gaps: ${JSON.stringify(statuses)}`,
  );
  const deadline = Date.now() + 5_000;
  for (;;) {
    const ready = await request(`${admin}/ready`);
    if (ready.status === 200) break;
    assert.ok(Date.now() < deadline, `/ready ${ready.status} 5 s after the writer stopped: ${ready.body}`);
    await sleep(50);
  }
  await server.stop();
});

test("--admin-socket without --socket: mode 660 and the service's own group, whatever the umask", async (t) => {
  const socket = join(tempDir(t), 'admin.sock');
  const umask = process.umask(0o022);
  t.after(() => process.umask(umask));
  const server = await start(t, ['--db', buildDatabase(t), '--admin-socket', socket]);
  const { mode, gid } = statSync(socket);
  assert.equal((mode & 0o777).toString(8), '660');
  assert.equal(gid, process.getgid?.());
  assert.equal((await requestOverSocket(socket, '/live')).status, 200);
  await server.stop();
});

test('an --admin-host that is no address of this machine: the warning, then one clear line, exit 1', async (t) => {
  // 192.0.2.1 (TEST-NET-1) is on no machine: nothing listens anywhere but loopback.
  const result = await run([
    '--db',
    buildDatabase(t),
    '--admin-host',
    '192.0.2.1',
    '--admin-port',
    '9469',
    '--port',
    '0',
  ]);
  const [warning, ...rest] = result.stderr.split('\n');
  assert.match(warning ?? '', /warning: the admin listener on 192\.0\.2\.1:9469 has no credentials/);
  assertFails(
    { ...result, stderr: rest.join('\n') },
    1,
    'booking-search-server: the admin listener: cannot listen on 192.0.2.1: no such address on this machine',
  );
});

test('POST /-/reload on the admin listener re-reads the credentials file as SIGHUP does (the means on Windows, which has no SIGHUP)', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, 'kasse:altes-passwort\n', { mode: 0o600 });
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--credentials-file', file, '--admin-port', '0'],
    cleanEnv(),
  );
  const admin = adminOf(server);
  const as = (password: string) =>
    request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', password) } });
  assert.equal((await as('altes-passwort')).status, 200);
  writeFileSync(file, 'kasse:neues-passwort\n');
  const reload = await request(`${admin}/-/reload`, { method: 'POST' });
  assert.equal(reload.status, 202, reload.body);
  // The line named SIGHUP, and a refused reload showed only in the log.
  await waitFor(
    () => server.output().stderr,
    /POST \/-\/reload: credentials re-read from .*: 1 user\(s\), secrets changed for kasse\n/,
  );
  assert.equal((await as('neues-passwort')).status, 200);
  assert.equal((await as('altes-passwort')).status, 401);
  const gauges = async (): Promise<[string | undefined, number]> => {
    const text = (await request(`${admin}/metrics`)).body;
    const successful = /^booking_search_config_last_reload_successful (\d)$/m.exec(text)?.[1];
    const at = Number(/^booking_search_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
    return [successful, at];
  };
  const [applied, appliedAt] = await gauges();
  assert.equal(applied, '1');
  assert.ok(Math.abs(appliedAt - Date.now() / 1000) < 10, `applied at ${appliedAt}`);

  writeFileSync(file, 'kasse\n');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  await waitFor(() => server.output().stderr, /POST \/-\/reload: keeping the old credentials: /);
  assert.deepEqual(await gauges(), ['0', appliedAt]);
});

for (const workers of [[], ['--workers', '2']]) {
  test(`a file whose pages break while it is served, unchanged since (dd into a copy): /ready says why it is not served, and it is served again once restored${workers.length > 0 ? ' (--workers 2)' : ''}`, async (t) => {
    const file = join(databaseDir(t), 'kasse.sqlite');
    const book = cashBook(20_000);
    const whole = book.serialize();
    // The pages of the amount index: a search of one amount reads them, the judgement of the
    // bookings (their table) does not.
    const pages = book
      .prepare<[], number>("SELECT pageno FROM dbstat WHERE name = 'entries_amount_date'")
      .pluck()
      .all();
    const pageSize = book.pragma('page_size', { simple: true }) as number;
    book.close();
    writeFileSync(file, whole);
    const server = await start(t, ['--db', file, '--admin-port', '0', ...workers]);
    const admin = adminOf(server);
    const search = `${server.api}buchungen?von=2023-01-01&bis=2025-12-31&betrag=-12.5&limit=0`;
    assert.equal((await get(search)).status, 200);
    // Garbage written into them in place (dd conv=notrunc), and the header's change counter
    // moved, as any write moves it, so that no cached page hides them.
    const fd = openSync(file, 'r+');
    for (const page of pages) writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (page - 1) * pageSize);
    writeSync(fd, Buffer.from([0, 0, 0x7f, 0x7f]), 0, 4, 24);
    closeSync(fd);
    // The book's state on /ready once it is `wanted`, searched meanwhile (10 s at most).
    const stateWhen = async (wanted: string): Promise<{ state?: string; reason?: string }> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const ready = await request(`${admin}/ready`);
        const [book] = (JSON.parse(ready.body) as { books: { state: string; reason?: string }[] }).books;
        if (book?.state === wanted || Date.now() > deadline) return book ?? {};
        await get(search);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const broken = await stateWhen('unusable');
    assert.equal(broken.state, 'unusable', `${JSON.stringify(broken)} ${server.output().stderr}`);
    assert.match(broken.reason ?? '', /kasse\.sqlite is damaged: .*restore it from a backup/);
    assert.equal((await get(search)).status, 500);
    assert.match(server.output().stderr, /kasse\.sqlite is damaged: /);
    // Restored with cp (the same inode): served again.
    writeFileSync(file, whole);
    const restored = await stateWhen('serving');
    assert.equal(restored.state, 'serving', `${JSON.stringify(restored)} ${server.output().stderr}`);
    assert.equal((await get(search)).status, 200);
    assert.equal((await server.stop()).code, 0);
  });
}
