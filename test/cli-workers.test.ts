// --workers N when a worker dies (docs/operations.md, Running it): its replacement reads the
// configuration as it is on disk then, as a reload does. One it cannot start keeps the
// service on the workers that serve, with one line saying why; one that starts has the others
// read the files again, so that one configuration is served, never two at once.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readlinkSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN, cleanEnv, EVENT_WAIT_MS, type Running, start, TIME, waitFor } from './support/cli-helpers.js';
import { assertReply, basicAuth, buildDatabase, type Reply, request, tempDir } from './support/helpers.js';

const MARCH = 'api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
const AS_BUERO = { headers: { authorization: basicAuth('buero', 'b-geheim') } };

/** Two books, a and b, for one user; `extra` is appended to the file. */
function writeConfig(config: string, dir: string, files: Record<string, string>, extra = ''): void {
  const books = Object.entries(files).map(
    ([name, db]) => `[book ${name}]\ndb = ${db}\nbase-path = /${name}\nusers = buero\n`,
  );
  const text = [`credentials-file = ${join(dir, 'credentials')}`, '', ...books, extra].join('\n');
  writeFileSync(config, text, { mode: 0o600 });
}

interface Service {
  cli: Running;
  admin: string;
  pids: [number, number];
  write: (books: string[], extra?: string) => void;
  files: { a: string; b: string };
}

async function startTwoWorkers(t: TestContext): Promise<Service> {
  const dir = tempDir(t);
  const files = { a: buildDatabase(t), b: buildDatabase(t) };
  writeFileSync(join(dir, 'credentials'), 'buero:b-geheim\n', { mode: 0o600 });
  const config = join(dir, 'books.conf');
  const write = (books: string[], extra?: string): void =>
    writeConfig(config, dir, Object.fromEntries(books.map((name) => [name, files[name as 'a' | 'b']])), extra);
  write(['a', 'b']);
  const cli = await start(t, ['--config', config, '--workers', '2', '--admin-port', '0'], cleanEnv());
  const pids = /\(pids (\d+), (\d+)\)/.exec(cli.output().stdout);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout);
  assert.ok(pids !== null && admin !== null, cli.output().stdout);
  return { cli, admin: admin[1] as string, pids: [Number(pids[1]), Number(pids[2])], write, files };
}

/** Whether process `pid` still runs. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** /ready once the workers serving are `serving`, within EVENT_WAIT_MS. */
async function readyWith(admin: string, serving: number): Promise<Reply> {
  const deadline = Date.now() + EVENT_WAIT_MS;
  let ready = await request(`${admin}/ready`);
  while (Date.now() < deadline && !ready.body.includes(`"serving":${serving},`)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    ready = await request(`${admin}/ready`);
  }
  return ready;
}

test('--workers 2: a replacement that cannot use the configuration keeps the service on the other worker, says why, and a reload starts it', async (t) => {
  const { cli, admin, pids, write } = await startTwoWorkers(t);
  // The file mid-edit: an unknown key, no SIGHUP yet.
  write(['a', 'b'], 'prot = 8080\n');
  process.kill(pids[0], 'SIGKILL');
  await waitFor(() => cli.output().stderr, /could not start/);
  const line = cli.output().stderr.trim().split('\n').at(-1) ?? '';
  assert.match(
    line,
    new RegExp(
      `^${TIME} worker \\d+ could not start \\(serving from 1 of 2 workers until a reload\\): .*unknown key prot`,
    ),
  );
  for (let i = 0; i < 4; i += 1) {
    for (const book of ['a', 'b'])
      assert.equal((await request(`${cli.origin}/${book}/${MARCH}`, AS_BUERO)).status, 200);
  }
  assert.equal(cli.child.exitCode, null, 'the service goes on');
  const degraded = await request(`${admin}/ready`);
  assert.equal(degraded.status, 503, degraded.body);
  assert.match(degraded.body, /"workers":\{"serving":1,"of":2\}/);

  write(['a', 'b']);
  cli.child.kill('SIGHUP');
  const ready = await readyWith(admin, 2);
  assert.equal(ready.status, 200, ready.body);
  assert.equal((await cli.stop()).code, 0);
});

test('--workers 2: reloads that start workers which cannot start never spend the budget that replaces a worker that dies', async (t) => {
  const { cli, admin, pids, write } = await startTwoWorkers(t);
  const stderr = (): string => cli.output().stderr;
  write(['a', 'b'], 'prot = 8080\n');
  process.kill(pids[0], 'SIGKILL');
  // Each start that failed is one line, and the reload that may start none is one too.
  const outcome = /could not start \(serving from|no worker started for one that could not start/g;
  await waitFor(stderr, outcome, 1);
  // An admin reloading again and again while the file is mid-edit: each reload starts a worker, until its own budget ends.
  const spent = /no worker started for one that could not start/;
  for (let tries = 0; tries < 8 && !spent.test(stderr()); tries += 1) {
    // The worker that could not start has ended: a reload before would find it still there.
    const failed = [...stderr().matchAll(/worker (\d+) could not start/g)].at(-1)?.[1];
    await waitFor(() => String(isAlive(Number(failed))), /false/);
    const seen = stderr().match(outcome)?.length ?? 0;
    cli.child.kill('SIGHUP');
    await waitFor(stderr, outcome, seen + 1);
  }
  assert.match(stderr(), spent);
  // The file mended, the other worker dies: it is replaced, from the budget of workers that die.
  write(['a', 'b']);
  process.kill(pids[1], 'SIGKILL');
  await waitFor(
    stderr,
    new RegExp(`worker ${pids[1]} ended \\(signal SIGKILL\\); started worker \\d+ \\(replacement 2 of 5 `),
  );
  // Its replacement serves (on a port of its own here: the test's --port 0 is bound anew once no worker listens).
  assert.match((await readyWith(admin, 1)).body, /"workers":\{"serving":1,"of":2\}/);
  // No other worker serves to read the files again, and none is said to.
  await waitFor(stderr, new RegExp(`^${TIME} worker \\d+ serves$`, 'm'));
  assert.equal(cli.child.exitCode, null, 'the service goes on');
});

test('--workers 2: a book removed without a reload and a worker killed: both workers serve the file as it is now', async (t) => {
  const { cli, admin, pids, write } = await startTwoWorkers(t);
  write(['a']);
  process.kill(pids[1], 'SIGKILL');
  // The primary's lines pace the test, however slowly a loaded machine starts the
  // replacement: once it serves, the worker that kept running reads the file again, and
  // the line names that cause: no SIGHUP was sent.
  const reread = new RegExp(
    `^${TIME} after worker \\d+ started: configuration re-read from .*: 1 book: removed b`,
    'm',
  );
  await waitFor(() => cli.output().stderr, reread);
  assert.equal((await readyWith(admin, 2)).status, 200);
  // A new connection each: the primary deals them to the workers in turn.
  const statuses: number[] = [];
  for (let i = 0; i < 8; i += 1) statuses.push((await request(`${cli.origin}/b/${MARCH}`, AS_BUERO)).status);
  assert.deepEqual(statuses, Array(8).fill(404));
  assert.match(cli.output().stderr, reread);
  assert.doesNotMatch(cli.output().stderr, /SIGHUP/);
  assert.equal((await request(`${cli.origin}/a/${MARCH}`, AS_BUERO)).status, 200);
});

test("--workers 2: a book's file gone and a worker killed: the replacement serves the other book and the gone one as gone, as the other worker does, and both serve it once its file is back", async (t) => {
  const { cli, admin, pids, files } = await startTwoWorkers(t);
  renameSync(files.b, `${files.b}.weg`);
  await waitFor(() => cli.output().stderr, /book b: database .* is gone/);
  process.kill(pids[1], 'SIGKILL');
  const replaced = /worker \d+ ended \(signal SIGKILL\); started worker (\d+)/;
  await waitFor(() => cli.output().stderr, replaced);
  const ready = await readyWith(admin, 2);
  assert.match(ready.body, /"state":"missing"/, ready.body);
  assert.match(ready.body, /"workers":\{"serving":2,"of":2\}/, cli.output().stderr);
  assert.doesNotMatch(cli.output().stderr, /could not start/);
  // A new connection each: the primary deals them to the workers in turn.
  const statusesOf = async (book: string): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await request(`${cli.origin}/${book}/${MARCH}`, AS_BUERO)).status);
    return statuses;
  };
  assert.deepEqual(await statusesOf('a'), Array(6).fill(200));
  assert.deepEqual(await statusesOf('b'), Array(6).fill(500));
  renameSync(`${files.b}.weg`, files.b);
  const deadline = Date.now() + EVENT_WAIT_MS;
  while ((await request(`${admin}/ready`)).status !== 200 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await request(`${admin}/ready`)).status, 200, cli.output().stderr);
  assert.deepEqual(await statusesOf('b'), Array(6).fill(200));
});

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('--workers 2: a replacement serves the settings the service started with, and the books and credentials as a reload reads them', async (t) => {
  const dir = tempDir(t);
  const db = buildDatabase(t);
  writeFileSync(join(dir, 'old'), 'alice:alt\n', { mode: 0o600 });
  writeFileSync(join(dir, 'new'), 'alice:neu\n', { mode: 0o600 });
  const config = join(dir, 'books.conf');
  const [port, moved] = [await freePort(), await freePort()];
  const write = (service: string): void =>
    writeFileSync(config, `host = 127.0.0.1\n${service}\n[book k]\ndb = ${db}\n`, { mode: 0o600 });
  write(`port = ${port}\nadmin-port = 0\ncredentials-file = ${join(dir, 'old')}`);
  // The port is the file's: no --port 0 beside it.
  const cli = await start(t, ['--config', config, '--workers', '2'], cleanEnv(), (args) => [
    process.execPath,
    [BIN, ...args.slice(2)],
  ]);
  const pid = Number(/\(pids (\d+), \d+\)/.exec(cli.output().stdout)?.[1]);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1] as string;
  // Edited without a reload: every setting but the books and the credentials waits for the next start.
  write(`port = ${moved}\nlog-format = json\ncredentials-file = ${join(dir, 'new')}`);
  process.kill(pid, 'SIGKILL');
  await waitFor(() => cli.output().stderr, new RegExp(`^${TIME} worker \\d+ serves; the other workers read`, 'm'));
  // Both workers answer the admin listener, which the file no longer names, on the port and with the users of the start.
  assert.equal((await readyWith(admin, 2)).status, 200);
  await assert.rejects(request(`http://127.0.0.1:${moved}/api/v1/status`), /ECONNREFUSED/);
  const as = (password: string) => ({ headers: { authorization: basicAuth('alice', password) } });
  for (let i = 0; i < 4; i += 1) assert.equal((await request(`${cli.origin}/api/v1/status`, as('alt'))).status, 200);
  for (let i = 0; i < 4; i += 1) assert.equal((await request(`${cli.origin}/api/v1/status`, as('neu'))).status, 401);
  assert.doesNotMatch(cli.output().stdout, /^\{/m, 'every line in the format of the start');
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: /);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.match(
    cli.output().stderr,
    /SIGHUP: configuration re-read from .*credentials re-read from .*old: 1 user\(s\)\n/,
  );
  assert.doesNotMatch(cli.output().stderr, /did not all do the same/);
});

test('--workers 2: the service ends (exit 1) when no worker is left that serves', async (t) => {
  const { cli, pids, write } = await startTwoWorkers(t);
  write(['a', 'b'], 'prot = 8080\n');
  process.kill(pids[0], 'SIGKILL');
  await waitFor(() => cli.output().stderr, /could not start \(serving from 1 of 2 workers/);
  process.kill(pids[1], 'SIGKILL');
  await waitFor(() => cli.output().stderr, /could not start \(serving from 0 of 2 workers/);
  // SIGCONT changes nothing: stop() only waits for the end here.
  const ended = await cli.stop('SIGCONT');
  assert.equal(ended.code, 1);
  assert.match(ended.stderr, new RegExp(`^${TIME} booking-search-server: no worker serves, stopping$`, 'm'));
});

test('--workers 2: a reload is said once for the service, refused or applied, naming what asked for it', async (t) => {
  const { cli, admin, write } = await startTwoWorkers(t);
  write(['a', 'b'], 'prot = 8080\n');
  cli.child.kill('SIGHUP');
  const refused = /SIGHUP: keeping the running configuration: .*unknown key prot/g;
  await waitFor(() => cli.output().stderr, refused);
  write(['a']);
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  const applied = /POST \/-\/reload: configuration re-read from .*: 1 book: removed b/g;
  await waitFor(() => cli.output().stderr, applied);
  // Both workers have answered the primary by now; a second line would come with the first.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const { stderr } = cli.output();
  assert.equal(stderr.match(refused)?.length, 1, stderr);
  assert.equal(stderr.match(applied)?.length, 1, stderr);
  assert.doesNotMatch(stderr, /did not all do the same/);
});

/** Whether process `pid` holds `file` open. */
function holdsOpen(pid: number, file: string): boolean {
  const fds = `/proc/${pid}/fd`;
  return readdirSync(fds).some((fd) => {
    try {
      return readlinkSync(join(fds, fd)) === file;
    } catch {
      return false; // closed meanwhile
    }
  });
}

// A worker's listen is answered by the primary (node:cluster): a primary stopped (SIGSTOP)
// once the replacement holds the database open (it has asked the primary for its command
// and read the credentials file by then) holds it before it serves, as long as the test
// wants. A machine that stalls the test longer than the replacement takes from that open to
// its listen has it serve first: the SIGHUP then reaches it as any worker, and no worker
// takes the old password either way.
test('--workers 2: a reload asked while a replacement starts reaches it once it serves: no worker takes the old password', async (t) => {
  const dir = tempDir(t);
  const db = realpathSync(buildDatabase(t));
  const credentials = join(dir, 'credentials');
  const replace = (text: string): void => {
    writeFileSync(`${credentials}.new`, text, { mode: 0o600 });
    renameSync(`${credentials}.new`, credentials);
  };
  replace('alice:alt-1\n');
  const args = ['--db', db, '--credentials-file', credentials, '--workers', '2', '--max-auth-failures', '0'];
  const cli = await start(t, args, cleanEnv());
  const primary = cli.child.pid as number;
  t.after(() => void cli.child.kill('SIGCONT'));
  let pid = Number(/\(pids (\d+), \d+\)/.exec(cli.output().stdout)?.[1]);
  const status = `${cli.origin}/api/v1/status`;
  const as = (password: string) => ({ headers: { authorization: basicAuth('alice', password) } });
  for (let round = 1; round <= 2; round += 1) {
    const mark = cli.output().stderr.length;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => cli.output().stderr.slice(mark), /started worker \d+/);
    const replacement = Number(/started worker (\d+)/.exec(cli.output().stderr.slice(mark))?.[1]);
    const deadline = Date.now() + EVENT_WAIT_MS;
    while (!holdsOpen(replacement, db)) {
      assert.ok(Date.now() < deadline, `round ${round}: the replacement opened no database`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    process.kill(primary, 'SIGSTOP');
    replace(`alice:alt-${round + 1}\n`);
    process.kill(primary, 'SIGHUP');
    process.kill(primary, 'SIGCONT');
    await waitFor(() => cli.output().stderr.slice(mark), new RegExp(`after worker ${replacement} started: `));
    await waitFor(
      () => cli.output().stderr.slice(mark),
      /SIGHUP: .*credentials re-read from .*, secrets changed for alice/,
    );
    // A new connection each: the primary deals them to the two workers in turn.
    for (let i = 0; i < 4; i += 1) assertReply(await request(status, as(`alt-${round}`)), 401, UNAUTHORIZED);
    for (let i = 0; i < 4; i += 1) assert.equal((await request(status, as(`alt-${round + 1}`))).status, 200);
    pid = replacement;
  }
});

// 127.1 is 127.0.0.1 as getaddrinfo also spells it, which the warning takes for a host beyond
// this machine (it knows the addresses node:net spells): warned, yet reached from here only.
test('--workers 2 on a host the plain-HTTP warning is for: it is said once, by the primary with the setup, not by each worker nor by a replacement', async (t) => {
  const args = [BIN, '--demo', '--workers', '2', '--host', '127.1', '--port', '0'];
  const child = spawn(process.execPath, args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  const closed = once(child, 'close');
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await waitFor(() => stdout, /\(pids \d+, \d+\)/);
  process.kill(Number(/\(pids (\d+), \d+\)/.exec(stdout)?.[1]), 'SIGKILL');
  await waitFor(() => stderr, new RegExp(`^${TIME} worker \\d+ serves`, 'm'));
  child.kill('SIGTERM');
  await closed;
  assert.deepEqual(
    stderr
      .match(new RegExp(`^${TIME} .*serving HTTP Basic authentication without TLS.*$`, 'gm'))
      ?.map((line) => line.slice(25)),
    [
      'warning: serving HTTP Basic authentication without TLS on 127.1: passwords cross the network readable; use --tls-cert/--tls-key or a TLS proxy',
    ],
  );
});
