// Every listener the CLI opens — the API listener over TCP, over a Unix socket and over TLS,
// the admin listener on a port and on a socket — through the same hostile clients: one
// that pipelines and reads nothing, one that sends its headers slowly, one that stays idle,
// and one that opens more connections than the listener keeps. Each listener must hold
// them all (docs/operations.md, "Security"), and one TCP address holding its share of the
// connections in headers that never end leaves the others room; the memory a flood costs
// the service is measured as its resident set, before and after, with a bound far from the limit.
// At SIGTERM, a connection in its headers or silent does not hold the stop.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { connect as connectTls } from 'node:tls';
import { MAX_ADMIN_CONNECTIONS } from '../bin/admin/admin.js';
import { MAX_API_CONNECTIONS } from '../bin/serve/listener.js';
import { makeCertificate, type Running, start, waitFor } from './support/cli-helpers.js';
import { AUTH, buildDatabase, tempDir } from './support/helpers.js';

/** Where a listener is reached, what a request to it is, and how many connections it keeps. */
interface Listener {
  name: string;
  args: (dir: string) => string[];
  /** Its address, from the CLI's start-up lines. */
  where: (server: Running) => Promise<Where>;
  request: string;
  /** A request whose answer closes the connection (the API's /status, the admin's /live). */
  probe: string;
  maxConnections: number;
}

type Where = { port: number; tls?: true } | { path: string };

const TIMEOUTS = ['--headers-timeout', '1', '--request-timeout', '2', '--keep-alive-timeout', '1'];
const SLOW_TIMEOUTS = ['--headers-timeout', '60', '--request-timeout', '120'];
const API_REQUEST = `GET /api/v1/status HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${AUTH}\r\n\r\n`;
const ADMIN_REQUEST = 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n';
const API_PROBE = API_REQUEST.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
const ADMIN_PROBE = 'GET /live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';

async function adminWhere(server: Running): Promise<Where> {
  const line = /admin listener on (?:http:\/\/127\.0\.0\.1:(\d+)\/|unix:([^:\s]+):\/)/;
  await waitFor(() => server.output().stdout, line);
  const match = line.exec(server.output().stdout) as RegExpExecArray;
  return match[1] === undefined ? { path: match[2] as string } : { port: Number(match[1]) };
}

const LISTENERS: Listener[] = [
  {
    name: 'the API listener over TCP',
    args: () => [],
    where: async (server) => ({ port: Number(new URL(server.origin).port) }),
    request: API_REQUEST,
    probe: API_PROBE,
    maxConnections: MAX_API_CONNECTIONS,
  },
  {
    name: 'the API listener on a Unix socket',
    args: (dir) => ['--socket', join(dir, 'api.sock')],
    where: async (server) => ({ path: server.socketPath as string }),
    request: API_REQUEST,
    probe: API_PROBE,
    maxConnections: MAX_API_CONNECTIONS,
  },
  {
    name: 'the API listener over TLS',
    args: (dir) => {
      makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
      return ['--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')];
    },
    where: async (server) => ({ port: Number(new URL(server.origin).port), tls: true }),
    request: API_REQUEST,
    probe: API_PROBE,
    maxConnections: MAX_API_CONNECTIONS,
  },
  {
    name: 'the admin listener on a port',
    args: () => ['--admin-port', '0'],
    where: adminWhere,
    request: ADMIN_REQUEST,
    probe: ADMIN_PROBE,
    maxConnections: MAX_ADMIN_CONNECTIONS,
  },
  {
    name: 'the admin listener on a Unix socket',
    args: (dir) => ['--admin-socket', join(dir, 'admin.sock')],
    where: adminWhere,
    request: ADMIN_REQUEST,
    probe: ADMIN_PROBE,
    maxConnections: MAX_ADMIN_CONNECTIONS,
  },
];

/**
 * A connection to `where`, from `localAddress` over TCP (all of 127.0.0.0/8 is this machine),
 * once it is open (and, over TLS, once its handshake is done).
 */
function open(where: Where, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket =
      'path' in where
        ? connectTcp({ path: where.path })
        : where.tls === true
          ? connectTls({
              socket: connectTcp({ port: where.port, host: '127.0.0.1', localAddress }),
              rejectUnauthorized: false,
            })
          : connectTcp({ port: where.port, host: '127.0.0.1', localAddress });
    socket.once('path' in where || where.tls !== true ? 'connect' : 'secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What `socket` receives until it closes, and after how many milliseconds (`undefined`: not within `withinMs`). */
function readUntilClosed(socket: Socket, withinMs: number): Promise<{ text: string; closedMs: number | undefined }> {
  const began = Date.now();
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedMs: undefined });
    }, withinMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closedMs: Date.now() - began });
    });
  });
}

/** `count` connections to `where` from `localAddress`, opened 16 at a time; destroyed after the test. */
async function openMany(t: TestContext, where: Where, count: number, localAddress: string): Promise<Socket[]> {
  const sockets: Socket[] = [];
  t.after(() => {
    for (const socket of sockets) socket.destroy();
  });
  for (let i = 0; i < count; i += 16) {
    const batch = Math.min(16, count - i);
    sockets.push(...(await Promise.all(Array.from({ length: batch }, () => open(where, localAddress)))));
  }
  return sockets;
}

/** Asserts that a new connection from `localAddress` gets `probe` answered within a second. */
async function assertAnswered(where: Where, probe: string, localAddress: string, what: string): Promise<void> {
  const began = Date.now();
  const socket = await open(where, localAddress);
  socket.write(probe);
  const answer = await readUntilClosed(socket, 5_000);
  assert.match(answer.text, /^HTTP\/1\.1 200 /, `${what} is answered`);
  assert.ok(Date.now() - began < 1_000, `${what} answered after ${Date.now() - began} ms`);
}

/** The resident set of process `pid`, in MB. */
function residentMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(kb?.[1]) / 1024;
}

/**
 * `count` connections that write pipelined requests as fast as the service takes them for
 * `ms` and read nothing; resolves with how many of them the service closed, which it must
 * do for each: over TCP once the kernel has taken its answers, over a Unix socket (whose
 * buffers hold far less) a second after it stopped reading them. Left open, each held
 * the thousands of requests it had sent until --send-timeout, and a client reconnecting
 * as fast grew the service without bound.
 */
async function floodUnread(where: Where, request: string, count: number, ms: number): Promise<number> {
  const burst = request.repeat(Math.ceil((64 * 1024) / request.length));
  const sockets = await Promise.all(Array.from({ length: count }, () => open(where)));
  const deadline = Date.now() + ms;
  for (const socket of sockets) {
    socket.pause();
    socket.on('error', () => undefined);
    const write = (): void => {
      while (!socket.destroyed && Date.now() < deadline) {
        if (!socket.write(burst)) return void socket.once('drain', write);
      }
    };
    write();
  }
  await new Promise((resolve) => setTimeout(resolve, ms));
  const closed = sockets.filter((socket) => socket.destroyed).length;
  for (const socket of sockets) socket.destroy();
  return closed;
}

for (const listener of LISTENERS) {
  test(`${listener.name} holds a client that pipelines and reads nothing, slow headers, an idle connection and too many connections`, async (t) => {
    const dir = tempDir(t);
    const server = await start(t, ['--db', buildDatabase(t), ...TIMEOUTS, ...listener.args(dir)]);
    const where = await listener.where(server);
    const pid = server.child.pid as number;

    // 1,000 pipelined in one write, then read: at most 128 answers and the 429, and closed.
    const pipelined = await open(where);
    pipelined.write(listener.request.repeat(1_000));
    const answers = await readUntilClosed(pipelined, 10_000);
    const statuses = [...answers.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    assert.ok(statuses.length <= 129, `${statuses.length} answers to 1,000 pipelined requests`);
    assert.equal(statuses.at(-1), '429', 'the last answer refuses');
    assert.match(answers.text, /"code":"too_many_unanswered"\}$/);
    assert.notEqual(answers.closedMs, undefined, 'the connection is closed');

    // 4 connections pipelining for 8 s and reading nothing: the service reads no more of
    // them than its bound lets through, and its memory stays bounded (it grew by about 90 MB
    // here, by about 375 MB on the admin listener without the bound, and on without end).
    const before = residentMb(pid);
    const closed = await floodUnread(where, listener.request, 4, 8_000);
    const grown = residentMb(pid) - before;
    assert.equal(closed, 4, 'every flooding connection is closed');
    assert.ok(grown < 200, `the service grew by ${grown.toFixed(0)} MB (from ${before.toFixed(0)} MB)`);

    // Headers that never end: 408 and closed within the headers timeout (1 s, looked at every second).
    const slow = await open(where);
    slow.write('GET /live HTTP/1.1\r\nHost: localhost\r\n');
    const timedOut = await readUntilClosed(slow, 5_000);
    assert.match(timedOut.text, /^HTTP\/1\.1 408 [\s\S]*"code":"request_timeout"\}$/);
    assert.ok(timedOut.closedMs !== undefined && timedOut.closedMs < 4_000, `closed after ${timedOut.closedMs} ms`);

    // An idle keep-alive connection is closed after the keep-alive timeout (1 s).
    const idle = await open(where);
    idle.write(listener.request);
    const kept = await readUntilClosed(idle, 5_000);
    assert.match(kept.text, /^HTTP\/1\.1 200 /);
    assert.ok(kept.closedMs !== undefined && kept.closedMs < 4_000, `closed after ${kept.closedMs} ms`);

    // As many connections as the listener keeps, held in headers that never end (with
    // timeouts that give them the time to open), by a client that opens a new one for each
    // that is closed. Over TCP one address holds at most half of them, and a new client there
    // is answered: its connection closes the one of that address that has waited longest; a
    // second address holds the rest. A Unix socket's peer is whoever may open it: it may hold
    // them all. A new client is still answered within a second, again and again: each of its
    // connections closes the one that has waited longest.
    const patient = await start(t, ['--db', buildDatabase(t), ...SLOW_TIMEOUTS, ...listener.args(tempDir(t))]);
    const patientWhere = await listener.where(patient);
    const tcp = !('path' in patientWhere);
    const share = tcp ? listener.maxConnections / 2 : listener.maxConnections;
    const first = await holdSlowly(t, patientWhere, share, '127.0.0.1');
    if (tcp) {
      await assertAnswered(patientWhere, listener.probe, '127.0.0.1', "a new client at one address's full share");
      await holdSlowly(t, patientWhere, listener.maxConnections - share, '127.0.0.2');
    }
    for (let i = 0; i < 5; i += 1)
      await assertAnswered(patientWhere, listener.probe, '127.0.0.3', `probe ${i} beyond the cap`);
    assert.ok(first[0]?.destroyed, 'the connection that waited longest was closed');
  });
}

/**
 * `count` connections to `where` from `localAddress`, each sending headers that never end,
 * and reopened (while the test runs) as soon as the service closes one; the first ones
 * opened are returned, and everything is destroyed after the test.
 */
async function holdSlowly(t: TestContext, where: Where, count: number, localAddress: string): Promise<Socket[]> {
  let over = false;
  t.after(() => {
    over = true;
  });
  const sockets = await openMany(t, where, count, localAddress);
  const hold = (socket: Socket): void => {
    socket.on('error', () => undefined);
    socket.write('GET /live HTTP/1.1\r\nHost: localhost\r\n');
    socket.once('close', () => {
      if (!over)
        open(where, localAddress).then(
          (again) => {
            sockets.push(again);
            if (over) again.destroy();
            else hold(again);
          },
          () => undefined,
        );
    });
  };
  for (const socket of sockets) hold(socket);
  return sockets;
}

test('behind --trust-proxy, the proxy may hold more than one address’s share of the API listener', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--trust-proxy', '127.0.0.5', ...SLOW_TIMEOUTS]);
  const where = { port: Number(new URL(server.origin).port) };
  const held = await openMany(t, where, MAX_API_CONNECTIONS / 2 + 1, '127.0.0.5');
  const last = held.at(-1) as Socket;
  last.write(API_PROBE);
  assert.match((await readUntilClosed(last, 5_000)).text, /^HTTP\/1\.1 200 /);
});

// At SIGTERM a connection with no request being answered has nothing to lose: closed at once,
// as an idle one is, whether it still sends its headers (a line every half second, within
// a headers timeout of a minute) or sends nothing (over TLS, a handshake never begun); the
// service then exits at once. node:http's closeIdleConnections leaves both open, and they
// held the stop to its grace (15 s).
for (const [listener, workers] of [
  ...LISTENERS.map((each) => [each, []] as const),
  [LISTENERS[0] as Listener, ['--workers', '2']] as const,
]) {
  test(`SIGTERM closes a connection still sending its headers and a silent one at once: ${listener.name}${workers.length > 0 ? ' with --workers 2' : ''}`, async (t) => {
    const server = await start(t, [
      '--db',
      buildDatabase(t),
      ...SLOW_TIMEOUTS,
      ...workers,
      ...listener.args(tempDir(t)),
    ]);
    const where = await listener.where(server);
    const slow = await open(where);
    const silent = await open('path' in where ? where : { port: where.port });
    slow.write('GET /live HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => slow.write('X-Slow: 1\r\n'), 500);
    t.after(() => clearInterval(trickle));
    const closed = [readUntilClosed(slow, 8_000), readUntilClosed(silent, 8_000)];
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      once(server.child, 'exit').then(([code]) => ({ code, ms: Date.now() - signalled })),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 6_000))),
    ]);
    clearTimeout(timer);
    assert.ok(exited !== undefined && exited.ms < 3_000, `exited ${exited?.ms ?? 'not within 6,000'} ms after SIGTERM`);
    assert.equal(exited.code, 0, server.output().stderr);
    for (const { closedMs } of await Promise.all(closed)) assert.ok(closedMs !== undefined && closedMs < 5_000);
  });
}

// The 429 of a connection past its bound was logged as `- -`: the bound refuses it before
// the handler records who sent it.
test('the access line of a 429 too_many_unanswered names the client, after the proxy rule', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--trust-proxy', '127.0.0.5', ...TIMEOUTS]);
  const where = { port: Number(new URL(server.origin).port) };
  const forwarded = API_REQUEST.replace('\r\n\r\n', '\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n');
  for (const [from, request] of [
    ['127.0.0.3', API_REQUEST],
    ['127.0.0.5', forwarded],
  ] as const) {
    const pipelined = await open(where, from);
    pipelined.write(request.repeat(200));
    assert.match((await readUntilClosed(pipelined, 10_000)).text, /"code":"too_many_unanswered"\}$/);
  }
  const refused = / (\S+) (\S+) GET \/api\/v1\/status 429 /;
  await waitFor(() => server.output().stdout, /203\.0\.113\.7 \S+ GET \/api\/v1\/status 429 /);
  const lines = server
    .output()
    .stdout.split('\n')
    .filter((line) => refused.test(line));
  assert.deepEqual(
    lines.map((line) => refused.exec(line)?.slice(1)),
    [
      ['127.0.0.3', '-'],
      ['203.0.113.7', '-'],
    ],
  );
});
