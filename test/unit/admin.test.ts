// The admin listener's answers (bin/admin/admin.ts) from given facts; the CLI's own use of it,
// with real books, workers and Prometheus, is test/admin.test.ts.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import {
  type AdminAnswers,
  type AdminTimeouts,
  createAdminHandler,
  createAdminServer,
  MAX_ADMIN_CONNECTIONS,
  type Readiness,
  reportBook,
} from '../../bin/admin/admin.js';
import { reloadAsSignalled } from '../../bin/base/signals.js';
import { parseCommandLine } from '../../bin/config/args.js';
import type { ServeCommand } from '../../bin/config/serve-command.js';
import { warnAboutSetup } from '../../bin/serve/greeting.js';
import { judge } from '../../lib/meaning.js';
import { type ApiError, ERRORS } from '../../lib/messages.js';
import { type Reply, request, serve } from '../support/helpers.js';

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
    reload: () => true,
    ...overrides,
  };
}

/** An admin listener whose reload only counts how often it was started. */
async function serveCountingReloads(t: TestContext): Promise<{ origin: string; reloads: () => number }> {
  let reloads = 0;
  const reload = (): boolean => {
    reloads += 1;
    return true;
  };
  return { origin: await serve(t, createAdminHandler(answers({ reload }))), reloads: () => reloads };
}

test('POST /-/reload starts the reload SIGHUP starts (202), each time, also twice in a row; GET is 405', async (t) => {
  const { origin, reloads } = await serveCountingReloads(t);
  const get = await request(`${origin}/-/reload`);
  assertApiError(get, ERRORS.methodNotAllowed);
  assert.equal(get.headers['allow'], 'POST');
  const first = await request(`${origin}/-/reload`, { method: 'POST' });
  assert.equal(first.status, 202);
  assert.match(first.body, /"reload":"started/);
  const second = await request(`${origin}/-/reload`, { method: 'POST' });
  assert.equal(second.status, 202);
  assert.equal(reloads(), 2);
});

test('POST /-/reload once the service stops: 503, and it says that none started', async (t) => {
  const origin = await serve(t, createAdminHandler(answers({ reload: () => false })));
  const refused = await request(`${origin}/-/reload`, { method: 'POST' });
  assert.equal(refused.status, 503);
  assert.equal(refused.body, '{"reload":"not started: the service is stopping"}\n');
});

test('a request from a web page (Origin, or Sec-Fetch-Site other than none) is the 400 of a bad request on every path; a reload from one reloads nothing', async (t) => {
  const { origin, reloads } = await serveCountingReloads(t);
  const page = [
    { origin: 'https://evil.example', 'content-type': 'text/plain' },
    { origin: 'null' },
    { origin: origin },
    { 'sec-fetch-site': 'cross-site' },
    // What a page served from a name rebound to the listener's address sends with its own fetch.
    { 'sec-fetch-site': 'same-origin' },
    { 'sec-fetch-site': 'none', origin: 'https://evil.example' },
  ];
  for (const headers of page) {
    const refused = await request(`${origin}/-/reload`, { method: 'POST', headers, body: 'x' });
    assertApiError(refused, ERRORS.badRequest, JSON.stringify(headers));
    for (const path of ['/live', '/ready', '/metrics', '/nowhere']) {
      assertApiError(
        await request(`${origin}${path}`, { headers }),
        ERRORS.badRequest,
        `${path} ${JSON.stringify(headers)}`,
      );
    }
  }
  assert.equal(reloads(), 0);
  const typed = { 'sec-fetch-site': 'none' };
  const reload = await request(`${origin}/-/reload`, { method: 'POST', headers: typed });
  assert.equal(reload.status, 202);
  assert.equal(reloads(), 1);
  for (const path of ['/live', '/ready', '/metrics'])
    assert.equal((await request(`${origin}${path}`, { headers: typed })).status, 200, path);
});

test('on loopback a Host that names this machine by another name than an address or localhost is a 400 on every path (DNS rebinding); off loopback any name is answered', async (t) => {
  const { origin, reloads } = await serveCountingReloads(t);
  const port = new URL(origin).port;
  // A plain-HTTP page's same-origin fetch: its own name, and no Origin or Sec-Fetch-Site.
  for (const host of [`rebind.example:${port}`, 'kasse.internal', 'localhost.evil.example', '0x7f.1']) {
    for (const path of ['/live', '/ready', '/metrics']) {
      assertApiError(await request(`${origin}${path}`, { headers: { host } }), ERRORS.badRequest, `${host} ${path}`);
    }
    assertApiError(await request(`${origin}/-/reload`, { method: 'POST', headers: { host } }), ERRORS.badRequest, host);
  }
  assert.equal(reloads(), 0);
  for (const host of [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    'LOCALHOST',
    'localhost.',
    'grafana.localhost',
    `[::1]:${port}`,
    '10.0.0.7',
  ]) {
    assert.equal((await request(`${origin}/ready`, { headers: { host } })).status, 200, host);
  }
  const anywhere = await serve(t, createAdminHandler(answers(), true));
  assert.equal((await request(`${anywhere}/metrics`, { headers: { host: 'kasse.internal:9469' } })).status, 200);
});

test('the reload of a process is its SIGHUP handlers, which Windows never calls by a signal', (t) => {
  let hangups = 0;
  const listener = (): void => {
    hangups += 1;
  };
  process.on('SIGHUP', listener);
  t.after(() => process.off('SIGHUP', listener));
  reloadAsSignalled();
  assert.equal(hangups, 1);
});

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

/** `reply` is `error` as the API answers it: its status, its `{"fehler", "code"}` and the API's headers. */
function assertApiError(reply: Reply, error: ApiError, what = ''): void {
  assert.equal(reply.status, error.status, what);
  assert.equal(reply.body, error.body, what);
  assert.deepEqual(Object.keys(JSON.parse(reply.body) as object), ['fehler', 'code'], what);
  assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8', what);
  assert.equal(reply.headers['cache-control'], 'no-store', what);
}

test("other paths 404 (the API is not answered here), other methods 405, a failed answer 500 whose cause is logged: the API's errors", async (t) => {
  const origin = await serve(
    t,
    createAdminHandler(answers({ metrics: async () => Promise.reject(new Error('no answer from worker 7')) })),
  );
  for (const path of ['/', '/api/v1/status', '/api/v1/buchungen?von=2026-01-01&bis=2026-01-31&betrag=1', '/live/x']) {
    assertApiError(await request(`${origin}${path}`), ERRORS.notFound, path);
  }
  const post = await request(`${origin}/ready`, { method: 'POST' });
  assertApiError(post, ERRORS.methodNotAllowed);
  assert.equal(post.headers.allow, 'GET, HEAD');
  const said: string[] = [];
  t.mock.method(process.stderr, 'write', (line: string) => said.push(line));
  const failed = await request(`${origin}/metrics`);
  t.mock.restoreAll();
  assertApiError(failed, ERRORS.internal);
  assert.deepEqual(
    said.map((line) => line.replace(/^\S+Z /, '')),
    ['error in GET /metrics: no answer from worker 7\n'],
  );
});

// The send timeout (node:http's socket timeout) well beyond the others: an idle socket
// would otherwise be destroyed by it, unanswered, before the headers timeout's 408.
const TIMEOUTS: AdminTimeouts = { headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_000, sendMs: 10_000 };

/** The admin listener's server on 127.0.0.1 at a free port until the test ends; returns its port. */
async function listenServer(t: TestContext, timeouts: AdminTimeouts = TIMEOUTS): Promise<number> {
  const server = createAdminServer(answers(), timeouts);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

interface Connection {
  socket: Socket;
  /** What the server sent so far. */
  received: () => string;
  /** Resolves with the milliseconds until the server closed the connection, or `undefined` after `withinMs`. */
  closed: (withinMs: number) => Promise<number | undefined>;
}

async function open(t: TestContext, port: number, localAddress = '127.0.0.1'): Promise<Connection> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  t.after(() => socket.destroy());
  let data = '';
  let ended: number | undefined;
  const began = performance.now();
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (data += chunk));
  socket.on('error', () => {});
  const gone = new Promise<void>((resolve) =>
    socket.once('close', () => {
      ended = performance.now() - began;
      resolve();
    }),
  );
  await once(socket, 'connect');
  return {
    socket,
    received: () => data,
    closed: async (withinMs) => {
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, withinMs))]);
      return ended;
    },
  };
}

test("every error of the admin listener, its own and its edge's, is the API's {fehler, code}: one shape for a monitoring script", async (t) => {
  const port = await listenServer(t);
  const origin = `http://127.0.0.1:${port}`;
  const handled: [string, Parameters<typeof request>[1], ApiError][] = [
    ['/nowhere', {}, ERRORS.notFound],
    ['/ready', { method: 'DELETE' }, ERRORS.methodNotAllowed],
    ['/-/reload', {}, ERRORS.methodNotAllowed],
    ['/-/reload', { method: 'POST', headers: { origin: 'https://evil.example' } }, ERRORS.badRequest],
    ['/live', { headers: { host: 'x@evil' } }, ERRORS.badRequest],
  ];
  for (const [path, options, error] of handled) {
    assertApiError(await request(`${origin}${path}`, options), error, `${options?.method ?? 'GET'} ${path}`);
  }
  const bodies: [string, ApiError][] = [
    ['NOT HTTP AT ALL\r\n\r\n', ERRORS.badRequest],
    [`GET /live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, ERRORS.headersTooLarge],
    ['GET /live HTTP/1.1\r\n\r\n', ERRORS.badRequest],
  ];
  for (const [head, error] of bodies) {
    const client = await open(t, port);
    client.socket.write(head);
    assert.ok((await client.closed(3_000)) !== undefined, head.slice(0, 20));
    assert.match(client.received(), new RegExp(`^HTTP/1\\.1 ${error.status} `));
    assert.ok(client.received().endsWith(`\r\n\r\n${error.body}`), client.received().slice(-200));
  }
});

test('a request that announces a body is answered and its connection closed; one announced beyond what is dropped is never read', async (t) => {
  const port = await listenServer(t);
  const client = await open(t, port);
  client.socket.write('POST /live HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000000\r\n\r\n');
  // Uploading all the while, as the attack did: the server must stop taking it.
  const chunk = Buffer.alloc(64 * 1024, 120);
  const upload = setInterval(() => {
    if (!client.socket.destroyed) client.socket.write(chunk);
  }, 5);
  t.after(() => clearInterval(upload));
  const ms = await client.closed(3_000);
  clearInterval(upload);
  assert.match(client.received(), /^HTTP\/1\.1 405 /);
  assert.match(client.received(), /\r\nConnection: close\r\n/i);
  assert.ok(ms !== undefined, `the connection is still open after 3 s: ${client.received()}`);
  for (const [method, path] of [
    ['GET', '/ready'],
    ['PUT', '/metrics'],
  ]) {
    const chunked = await open(t, port);
    chunked.socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
    );
    assert.ok((await chunked.closed(3_000)) !== undefined, `${method} ${path}: ${chunked.received()}`);
    assert.match(chunked.received(), /^HTTP\/1\.1 (200|405) /);
  }
});

test('protocol errors are answered as JSON and close; an idle connection ends after the headers timeout with a JSON 408', async (t) => {
  const port = await listenServer(t);
  const garbage = await open(t, port);
  garbage.socket.write('NOT HTTP AT ALL\r\n\r\n');
  assert.ok((await garbage.closed(3_000)) !== undefined);
  assert.match(garbage.received(), /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(garbage.received(), /\r\n\r\n\{"fehler":"[^"]+","code":"bad_request"\}$/);
  const badHosts = ['a b', 'x@evil', 'a/b', '[::1', 'a:notaport'].map(
    (host) => `GET /live HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
  );
  const repeated = ['Host: a\r\nHost: b', 'Host: a\r\nAuthorization: Basic eDp5\r\nauthorization: Basic eDp5'].map(
    (lines) => `GET /live HTTP/1.1\r\n${lines}\r\n\r\n`,
  );
  const framed = 'POST /-/reload HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n';
  for (const head of ['GET /live HTTP/1.1\r\n\r\n', ...repeated, framed, ...badHosts]) {
    const hostless = await open(t, port);
    hostless.socket.write(head);
    assert.ok((await hostless.closed(3_000)) !== undefined, head);
    assert.match(hostless.received(), /^HTTP\/1\.1 400 /);
    assert.ok(hostless.received().endsWith(`\r\n\r\n${ERRORS.badRequest.body}`), hostless.received());
  }
  const large = await open(t, port);
  large.socket.write(`GET /live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
  assert.ok((await large.closed(3_000)) !== undefined);
  assert.match(large.received(), /^HTTP\/1\.1 431 /);
  assert.match(large.received(), /"code":"headers_too_large"\}$/);
  // An idle connection, and one that drips its headers a byte at a time.
  const idle = await open(t, port);
  const dripping = await open(t, port);
  const drip = setInterval(() => {
    if (!dripping.socket.destroyed) dripping.socket.write('G');
  }, 100);
  t.after(() => clearInterval(drip));
  const [idleMs, drippingMs] = await Promise.all([idle.closed(4_000), dripping.closed(4_000)]);
  clearInterval(drip);
  assert.ok(idleMs !== undefined && idleMs < 3_000, `idle: closed after ${idleMs} ms`);
  assert.ok(drippingMs !== undefined && drippingMs < 3_000, `dripping: closed after ${drippingMs} ms`);
  assert.match(idle.received(), /^HTTP\/1\.1 408 /);
  assert.match(idle.received(), /"code":"request_timeout"\}$/);
});

test(`at most ${MAX_ADMIN_CONNECTIONS} connections are open at once; one beyond closes the one that waited longest, and is answered`, async (t) => {
  const port = await listenServer(t, { ...TIMEOUTS, headersMs: 10_000, requestMs: 10_000 });
  // From two addresses: one holds at most half of them (bin/listen/server.ts).
  const held: Connection[] = [];
  for (let i = 0; i < MAX_ADMIN_CONNECTIONS; i += 1) held.push(await open(t, port, `127.0.0.${1 + (i % 2)}`));
  const beyond = await open(t, port, '127.0.0.3');
  const first = held[0] as Connection;
  assert.ok((await first.closed(2_000)) !== undefined, 'the connection that waited longest is closed');
  assert.equal(first.received(), '');
  for (const still of [beyond, held[1] as Connection]) {
    still.socket.write('GET /live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.match(still.received(), /^HTTP\/1\.1 200 /);
  }
});

test("/ready's reason is the book's log line as it is: a judgement said for the service names no value from a booking, even one holding the sentences' own words, and says what to do; check's sentences name them", () => {
  const secret = 'Gehalt Mueller 4711.00 EUR';
  // Values that hold the very words around them, too.
  const hostile = [
    secret,
    `${secret}': a search would miss its last day ${secret}`,
    `x', not a day: ${secret} (in cents), not whole cents: ${secret} is given to two bookings) ${secret}`,
  ];
  const parts = [secret, 'Mueller', '4711', '20260314', '12.5', '1773446400'];
  const rows = (value: string): Array<[unknown, unknown, unknown][]> => [
    [[1, `2026-03-14 ${value}`, 100]],
    [[1, value, 100]],
    [[1, '2026-03-14', value]],
    [[value, '2026-03-14', 100]],
    [
      [value, '2026-03-14', 100],
      [value, '2026-03-15', 100],
    ],
    [[1, 20260314, 12.5]],
    [[1, 1_773_446_400, 100]],
    [[value, `2026-03-14T${value}`, `${value}/2`]],
  ];
  const seen = new Set<string>();
  for (const value of hostile) {
    for (const sample of rows(value)) {
      for (const application of [undefined, 'GnuCash']) {
        const { problems, withoutValues } = judge(sample, application);
        const named = problems.join(' ');
        assert.ok(
          parts.some((part) => named.includes(part)),
          `check's sentences name an example: ${named}`,
        );
        const line = `/srv/kasse.sqlite cannot be served exactly: ${withoutValues.join(' ')}`;
        const book = {
          name: 'kasse',
          basePath: '/kasse',
          db: '/srv/kasse.sqlite',
          status: () => ({ state: 'unusable' as const, reason: line, since: 0, replaced: 0, app: 'own' }),
        };
        const { reason } = reportBook(book);
        assert.equal(reason, line);
        for (const part of parts) assert.ok(!line.includes(part), `${part} in ${line}`);
        assert.ok(line.endsWith(' booking-search-server check names examples from the bookings.'), line);
        seen.add(line);
      }
    }
  }
  // What to do is left standing.
  assert.ok(
    seen.has(
      "/srv/kasse.sqlite cannot be served exactly: dates carry a time: a search would miss its last day, and 'datum' must be a date. Give the day alone: substr(date, 1, 10). booking-search-server check names examples from the bookings.",
    ),
    [...seen].join('\n'),
  );
  assert.ok(
    seen.has(
      "/srv/kasse.sqlite cannot be served exactly: a booking has a date that is not a day of the calendar as YYYY-MM-DD: GnuCash holds a date the service cannot answer (a value written by another program, an import or the application's own API). A search that finds it would answer 500; correct the booking's date in GnuCash. booking-search-server check names examples from the bookings.",
    ),
    [...seen].join('\n'),
  );
  const waiting = WAITING.books[0] as Readiness['books'][number];
  const status = () => ({ state: waiting.state, reason: waiting.reason, since: 0, replaced: 0, app: 'own' });
  assert.equal(
    reportBook({ name: 'kasse', basePath: '/kasse', db: undefined, status }).reason,
    WAITING.books[0]?.reason,
    'a reason without a booking is as it was',
  );
});

test('the start warns once, in one line, when the admin listener is off loopback; never on loopback or a socket', (t) => {
  const warnings = (argv: string[]): string[] => {
    const command = parseCommandLine(['--demo', ...argv], {}) as ServeCommand;
    let written = '';
    const write = t.mock.method(process.stderr, 'write', (chunk: string) => {
      written += chunk;
      return true;
    });
    try {
      warnAboutSetup(command);
    } finally {
      write.mock.restore();
    }
    return written.split('\n').filter((line) => line !== '');
  };
  const [line, ...more] = warnings(['--admin-host', '0.0.0.0', '--admin-port', '9469']);
  assert.deepEqual(more, []);
  assert.match(
    line ?? '',
    /warning: the admin listener on 0\.0\.0\.0:9469 has no credentials: whoever can reach that address reads \/live, \/ready \(each book's state and file\) and \/metrics; keep it on loopback or --admin-socket, or let a firewall choose who reaches it$/,
  );
  assert.match(
    warnings(['--admin-host', '::', '--admin-port', '9469']).join('\n'),
    /admin listener on \[::\]:9469 has no credentials/,
  );
  for (const argv of [
    ['--admin-port', '9469'],
    ['--admin-host', '::1', '--admin-port', '9469'],
    ['--admin-host', 'localhost', '--admin-port', '9469'],
    ['--admin-socket', '/run/booking-search-server/admin.sock'],
    [],
  ])
    assert.deepEqual(warnings(argv), [], argv.join(' '));
});
