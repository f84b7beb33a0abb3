// The stop of the CLI (docs/operations.md, "The command"): after SIGTERM it answers the
// requests of the connections queued for it, stops accepting, closes idle keep-alive
// connections and busy ones after their current answer,
// answers the password-hash checks that wait with 503, and exits within the bound it
// states, which the unit's TimeoutStopSec covers; no answer is cut in its middle. Ctrl+C,
// which reaches the guard processes too, leaves them to answer the searches in flight. A
// second signal cuts what is still open, with --workers too.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect as connectTls } from 'node:tls';
import Database from 'better-sqlite3';
import { stopBoundMs } from '../bin/listen/server.js';
import { cashBook } from './support/cash-book.js';
import { cleanEnv, makeCertificate, type Running, start } from './support/cli-helpers.js';
import { AUTH, basicAuth, buildDatabase, databaseDir, HASH_OF_ALT, tempDir } from './support/helpers.js';

const UNIT = new URL('../deploy/booking-search-server.service', import.meta.url).pathname;
const PLAIN = basicAuth('buero', 'klartext');

interface Answer {
  status: number;
  /** Whether the whole body announced by Content-Length arrived. */
  whole: boolean;
  connection: string | undefined;
}

/** GET `path` with `authorization`; an answer, or the error of a connection that got none. */
function get(server: Running, path: string, authorization: string, agent: Agent | false): Promise<Answer | Error> {
  return new Promise((resolve) => {
    const req = request(`${server.origin}${path}`, { headers: { authorization }, agent }, (res) => {
      let length = 0;
      res.on('data', (chunk: Buffer) => (length += chunk.length));
      res.on('error', () => undefined);
      res.on('close', () =>
        resolve({
          status: res.statusCode ?? 0,
          whole: res.complete && length === Number(res.headers['content-length']),
          connection: res.headers.connection,
        }),
      );
    });
    req.on('error', (error) => resolve(error));
    req.end();
  });
}

/** How a steady client's requests ended: the error of the last, and whether the answer before it said `Connection: close`. */
interface Ending {
  code: string | undefined;
  afterClose: boolean;
}

/** A client that sends /status on one keep-alive connection, one after the other, until the service is gone. */
async function steadyClient(server: Running, answers: Answer[]): Promise<Ending> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let last: Answer | undefined;
  try {
    for (;;) {
      const answer = await get(server, '/api/v1/status', PLAIN, agent);
      if (answer instanceof Error)
        return { code: (answer as NodeJS.ErrnoException).code, afterClose: last?.connection === 'close' };
      answers.push(answer);
      last = answer;
    }
  } finally {
    agent.destroy();
  }
}

for (const workers of [[], ['--workers', '2']]) {
  test(`SIGTERM${workers.length === 0 ? '' : ' with --workers 2'}, steady keep-alive clients and 17 queued hash checks: the checks that wait get 503, no answer is cut, and the service exits within its bound`, async (t) => {
    const dir = tempDir(t);
    const credentials = join(dir, 'credentials');
    writeFileSync(credentials, `bank:${HASH_OF_ALT}\nbuero:klartext\n`, { mode: 0o600 });
    // The search timeout is the stop's bound's part that a configuration chooses: 1 s, so
    // that a stop that waits for the old 10 s grace does not pass.
    const server = await start(
      t,
      [
        '--db',
        buildDatabase(t),
        '--credentials-file',
        credentials,
        '--max-auth-failures',
        '0',
        '--search-timeout',
        '1',
        ...workers,
      ],
      cleanEnv(),
    );
    const steady: Answer[] = [];
    const clients = Array.from({ length: 4 }, () => steadyClient(server, steady));
    // 17 wrong passwords, each its own hash check on its own keep-alive connection; one or
    // two run, the others wait.
    const checking = new Agent({ keepAlive: true });
    t.after(() => checking.destroy());
    const checks = Array.from({ length: 17 }, (_, i) =>
      get(server, '/api/v1/status', basicAuth('bank', `falsch-${i}`), checking),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const answeredBefore = steady.length;
    assert.ok(answeredBefore > 0, 'the steady clients are answered');

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const [code] = (await once(server.child, 'exit')) as [number | null];
    const stoppedMs = performance.now() - signalled;
    t.diagnostic(`exited ${stoppedMs.toFixed(0)} ms after SIGTERM`);
    const endings = await Promise.all(clients);
    const checked = await Promise.all(checks);

    assert.equal(code, 0, server.output().stderr);
    const bound = stopBoundMs(1_000);
    assert.ok(stoppedMs < bound, `exited ${stoppedMs.toFixed(0)} ms after SIGTERM; the bound is ${bound} ms`);
    assert.ok(steady.length > answeredBefore, 'the steady clients were answered while the service stopped');
    assert.deepEqual(
      steady.filter((answer) => !answer.whole || answer.status !== 200),
      [],
      'every answer to the steady clients whole',
    );
    // Each steady client's last request met the stop: one that had read `Connection: close`
    // opened a new connection, which is refused; only a request sent on a connection whose
    // last answer kept it open (idle at the signal, or answered as it came) can cross its
    // close and get no answer, a reset (clients retry it, RFC 9112 §9.3.1), never a cut one.
    t.diagnostic(`the steady clients ended: ${JSON.stringify(endings)}`);
    assert.deepEqual(
      endings.filter((ending) => ending.afterClose && ending.code !== 'ECONNREFUSED'),
      [],
      'after a Connection: close answer, no request meets a closing connection',
    );
    const statuses = checked.map((answer) => (answer instanceof Error ? answer.message : answer.status));
    assert.ok(
      statuses.every((status) => status === 401 || status === 503),
      `every queued check answered 401 or 503: ${statuses}`,
    );
    assert.ok(statuses.filter((status) => status === 503).length >= 10, `the waiting checks got 503: ${statuses}`);
    // A request in flight at the signal is answered as one heard after it: its answer closes
    // its keep-alive connection, so that no next request is sent on it.
    assert.deepEqual(
      checked.filter(
        (answer) =>
          answer instanceof Error || !answer.whole || (answer.status === 503 && answer.connection !== 'close'),
      ),
      [],
      'each whole, a 503 closing its connection',
    );
  });
}

/**
 * Opens a connection to `port`, writes `request` on it whole, and resolves once the kernel has
 * taken it; `answer` resolves with whether a whole 200 came back, or what else did.
 */
async function sent(port: number, request: string): Promise<{ answer: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const answer = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`${error.code}`));
    socket.on('close', () => {
      const received = Buffer.concat(chunks);
      const head = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(received.toString('latin1', 0, head + 2))?.[1]);
      const whole = received.length - head - 4 === length;
      resolve(
        whole ? received.toString('latin1', 0, 15) : `${received.length} bytes: ${received.toString('latin1', 0, 15)}`,
      );
    });
  });
  await once(socket, 'connect');
  await new Promise((resolve) => socket.write(request, resolve));
  return { answer };
}

for (const workers of [[], ['--workers', '2']]) {
  test(`SIGTERM${workers.length === 0 ? '' : ' with --workers 2'} while searches are computed: each request sent on a new connection before the signal is answered whole, those of connections the kernel${workers.length === 0 ? '' : ' or the primary'} had queued too`, async (t) => {
    // The widest search on 20,000 bookings: a thousand listed, about 100 KB an answer, some
    // milliseconds each; while the service computes them, the kernel queues the new
    // connections (with --workers, the primary, which hands a worker one at a time).
    const file = join(databaseDir(t), 'kasse.sqlite');
    const book = cashBook(20_000);
    writeFileSync(file, book.serialize());
    book.close();
    const server = await start(t, ['--db', file, ...workers]);
    const { port } = new URL(server.origin);
    const path = '/api/v1/buchungen?von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=999999999999.99&limit=1000';
    const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\n\r\n`;
    const requests = await Promise.all(Array.from({ length: 16 }, () => sent(Number(port), request)));
    server.child.kill('SIGTERM');
    const answers = await Promise.all(requests.map(({ answer }) => answer));
    const [code] = (await once(server.child, 'exit')) as [number | null];
    assert.equal(code, 0, server.output().stderr);
    assert.deepEqual(
      answers.filter((answer) => answer !== 'HTTP/1.1 200 OK'),
      [],
      `each of ${answers.length} answered 200, whole`,
    );
  });
}

// A connection the kernel queued while the service did not run: over TLS its client still
// needs a round trip after the service accepts it to end its handshake and send its request.
test('SIGTERM with a TLS connection queued, its request sent: it is answered 200, and told to close', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  const server = await start(t, ['--db', buildDatabase(t), '--tls-cert', cert, '--tls-key', key]);
  const pid = server.child.pid as number;
  process.kill(pid, 'SIGSTOP');
  t.after(() => void server.child.kill('SIGCONT'));
  const socket = connectTls({ host: '127.0.0.1', port: Number(new URL(server.origin).port), ca: readFileSync(cert) });
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const answer = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`${error.code ?? error.message}`));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
  socket.write(`GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\n\r\n`);
  await once(socket, 'connect');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const signalled = performance.now();
  process.kill(pid, 'SIGTERM');
  process.kill(pid, 'SIGCONT');
  // The service takes the queued connection and closes its listener within a few turns of
  // its loop; this client answers its handshake, and so sends its request, only after that
  // (a request heard while the listener still takes its queue is answered keeping its
  // connection: a client told to close would reconnect into a listener about to close).
  const heldUntil = performance.now() + 400;
  while (performance.now() < heldUntil);
  const [code] = (await once(server.child, 'exit')) as [number | null];
  const stoppedMs = performance.now() - signalled;
  t.diagnostic(`exited ${stoppedMs.toFixed(0)} ms after SIGTERM`);
  const received = await answer;
  assert.equal(code, 0, server.output().stderr);
  assert.match(received, /^HTTP\/1\.1 200 OK\r\n/, `answered: ${JSON.stringify(received.slice(0, 80))}`);
  assert.match(received, /\r\nconnection: close\r\n/i, 'the answer closes its connection');
});

test('Ctrl+C to every process at once (a terminal; WinSW, whose Ctrl+C reaches the whole console) while a search over a view runs in its guard process: it is answered 200, exit 0', async (t) => {
  const file = buildDatabase(t);
  const db = new Database(file);
  // A view whose every search takes a while, so that the signal comes while one runs.
  db.exec(`CREATE VIEW kasse AS SELECT e.* FROM entries e WHERE
    (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3000000) SELECT max(n) FROM r) > 0`);
  db.close();
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse']);
  const search = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
  const first = await get(server, search, AUTH, false);
  assert.equal(first instanceof Error ? first.message : first.status, 200);
  const searching = get(server, search, AUTH, false);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const pid = String(server.child.pid);
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', pid], { encoding: 'utf8' }).trim().split(/\s+/);
  assert.ok(children.length > 0 && children[0] !== '', 'the guard process runs');
  for (const child of [...children, pid]) process.kill(Number(child), 'SIGINT');
  const answer = await searching;
  assert.equal(answer instanceof Error ? answer.message : answer.status, 200, server.output().stderr);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.doesNotMatch(stopped.stderr, /process ended \(SIGINT\)/);
});

for (const workers of [[], ['--workers', '2']]) {
  test(`a second SIGTERM${workers.length === 0 ? '' : ' to the primary of --workers 2'} cuts a search still running, which the first lets run: the service exits within seconds of it, the search unanswered`, async (t) => {
    const file = buildDatabase(t);
    const db = new Database(file);
    // A view whose searches take as long as the rows of `slow` say: at once while the
    // service starts, then some ten seconds each.
    db.exec(`CREATE TABLE slow(n INTEGER);
      CREATE VIEW kasse AS SELECT e.* FROM entries e WHERE (WITH RECURSIVE r(i) AS
        (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < (SELECT max(n) FROM slow)) SELECT count(*) FROM r) > 0`);
    const server = await start(t, [
      '--db',
      file,
      '--table-names',
      'entries=kasse',
      '--search-timeout',
      '60',
      ...workers,
    ]);
    db.exec('INSERT INTO slow VALUES (60000000)');
    db.close();
    const searching = get(server, '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35', AUTH, false);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const exited = once(server.child, 'exit') as Promise<[number | null]>;
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const again = performance.now();
    server.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      exited,
      new Promise((resolve) => (timer = setTimeout(resolve, 15_000, 'running'))),
    ]);
    clearTimeout(timer);
    const stoppedMs = performance.now() - again;
    t.diagnostic(`ended (${JSON.stringify(ended)}) ${stoppedMs.toFixed(0)} ms after the second SIGTERM`);
    const answer = await searching;
    assert.deepEqual(ended, [0, null], server.output().stderr);
    assert.ok(stoppedMs < 5_000, `exited ${stoppedMs.toFixed(0)} ms after the second SIGTERM`);
    assert.ok(answer instanceof Error || !answer.whole, `the search was cut, not answered: ${JSON.stringify(answer)}`);
    // Logged as cut, by the worker too, whose end follows its connections' close; before `stopped`.
    const { stdout } = server.output();
    assert.match(
      stdout,
      /^\S+ 127\.0\.0\.1 kasse GET \/api\/v1\/buchungen aborted \d+\.\dms\n(?:.*\n)*\S+ stopped\n$/m,
    );
  });
}

test("the unit's TimeoutStopSec covers the stop's bound with the default search timeout, with a margin", () => {
  const unit = readFileSync(UNIT, 'utf8');
  const seconds = Number(/^TimeoutStopSec=(\d+)s$/m.exec(unit)?.[1]);
  const bound = stopBoundMs(10_000) / 1_000;
  assert.ok(seconds >= bound + 10, `TimeoutStopSec=${seconds}s against a bound of ${bound} s`);
});

test('the unit sends SIGTERM to the service alone: a guard process ends on SIGTERM (the service ends it so), and would cut its search in flight', () => {
  const unit = readFileSync(UNIT, 'utf8');
  assert.match(
    unit,
    /^KillMode=mixed$/m,
    "systemd's default, control-group, sends SIGTERM to every process of the unit",
  );
});
