// The CLI behind a proxy on this machine: --socket (mode, group, stale sockets), which
// peers may speak for the client (--trust-proxy), and what the logs say about them.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertFails, BIN, cleanEnv, run, start, TIME } from './support/cli-helpers.js';
import { AUTH, basicAuth, buildDatabase, type Reply, request, requestFrom, tempDir } from './support/helpers.js';
import { nodeForEveryUser } from './support/linux-users.js';

const WRONG = basicAuth('kasse', 'falsch');

/** A request over a Unix socket. */
function requestOverSocket(socketPath: string, path: string, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

/** A request over TCP from another loopback address than 127.0.0.1. */
test('--socket serves over a Unix socket with mode 660, trusts X-Forwarded-For from it, logs the client, and removes it on exit', async (t) => {
  const dir = tempDir(t);
  const socket = join(dir, 'api.sock');
  const server = await start(t, [
    '--db',
    buildDatabase(t),
    '--socket',
    socket,
    '--base-path',
    '/kasse',
    '--max-auth-failures',
    '2',
  ]);
  assert.equal(server.api, `unix:${socket}:/kasse/api/v1/`);
  assert.ok(lstatSync(socket).isSocket());
  assert.equal(statSync(socket).mode & 0o777, 0o660);

  const status = '/kasse/api/v1/status';
  const search = '/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
  const found = await requestOverSocket(socket, search, { authorization: AUTH, 'x-forwarded-for': '198.51.100.4' });
  assert.equal(found.status, 200);
  assert.equal((JSON.parse(found.body) as { anzahl: number }).anzahl, 1);
  // The proxy's last X-Forwarded-For entry is the client: two failures block 203.0.113.7 only.
  for (let i = 0; i < 2; i += 1) {
    await requestOverSocket(socket, status, { authorization: WRONG, 'x-forwarded-for': 'spoofed, 203.0.113.7' });
  }
  assert.equal(
    (await requestOverSocket(socket, status, { authorization: AUTH, 'x-forwarded-for': '203.0.113.7' })).status,
    429,
  );
  assert.equal(
    (await requestOverSocket(socket, status, { authorization: AUTH, 'x-forwarded-for': '203.0.113.8' })).status,
    200,
  );
  // Without the header, a request over the socket is counted as "unix".
  assert.equal((await requestOverSocket(socket, status, { authorization: AUTH })).status, 200);

  const stopped = await server.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  assert.equal(existsSync(socket), false, 'the socket is removed on exit');
  const log = stopped.stdout.split('\n').slice(1, -1);
  assert.match(
    log[0] as string,
    new RegExp(String.raw`^${TIME} 198\.51\.100\.4 kasse GET /kasse/api/v1/buchungen 200 \d+\.\dms$`),
  );
  // A failed login names the user it tried.
  assert.match(log[1] as string, new RegExp(String.raw`^${TIME} 203\.0\.113\.7 kasse GET /kasse/api/v1/status 401 `));
  assert.match(log[3] as string, new RegExp(String.raw`^${TIME} 203\.0\.113\.7 - GET /kasse/api/v1/status 429 `));
  assert.match(log[5] as string, new RegExp(`^${TIME} unix kasse GET /kasse/api/v1/status 200 `));
  assert.doesNotMatch(stopped.stdout, /betrag|von=/);
});

test('--socket-group and --socket-mode decide which other users may connect', async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to run clients as other users (CI runs as root)');
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const socket = join(dir, 'api.sock');
  const server = await start(t, ['--demo', '--socket', socket, '--socket-group', 'www-data', '--socket-mode', '660']);
  const stats = statSync(socket);
  assert.equal(stats.mode & 0o777, 0o660);
  assert.equal(stats.gid, Number(spawnSync('id', ['-g', 'www-data'], { encoding: 'utf8' }).stdout.trim()));
  const connectAs = (user: string): string => {
    const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
    const script = `require('node:net').connect(${JSON.stringify(socket)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); });`;
    return spawnSync(nodeForEveryUser(), ['-e', script], { uid, gid, encoding: 'utf8', timeout: 10_000 }).stdout.trim();
  };
  assert.equal(connectAs('www-data'), 'connected', 'the proxy group may connect');
  assert.equal(connectAs('nobody'), 'EACCES', 'everyone else is refused');
  await server.stop();
});

/** `node -e script` as the Linux user `user`: `output` is its stdout, trimmed, once it ends. */
function runAs(user: string, script: string): { output: Promise<string>; stop: () => void } {
  const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
  const child = spawn(nodeForEveryUser(), ['-e', script], {
    uid,
    gid,
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 15_000,
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return { output: once(child, 'close').then(() => stdout.trim()), stop: () => void child.kill() };
}

test('--socket in a directory every user can write without the sticky bit is refused, and a racing user cannot redirect the socket to another file', async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to run the racer as another user (CI runs as root)');
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const open = join(dir, 'offen');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const socket = join(open, 'api.sock');
  // A root-only file the racer wants readable by the socket's group.
  const secret = join(tempDir(t), 'shadow');
  writeFileSync(secret, 'root only\n', { mode: 0o600 });
  // As `nobody`: as soon as the socket exists, rename it away and put a symlink to the
  // secret file in its place, before the service sets the socket's mode and group.
  const racer = runAs(
    'nobody',
    `const fs = require('node:fs'); const end = Date.now() + 8000;
     while (Date.now() < end) { try { fs.renameSync(${JSON.stringify(socket)}, ${JSON.stringify(`${socket}.weg`)}); fs.symlinkSync(${JSON.stringify(secret)}, ${JSON.stringify(socket)}); console.log('swapped'); break; } catch {} }`,
  );
  const finished = await run(['--demo', '--socket', socket, '--socket-group', 'www-data', '--socket-mode', '660']);
  racer.stop();
  await racer.output;
  const stats = statSync(secret);
  assert.equal(stats.mode & 0o777, 0o600, 'the secret file keeps its mode');
  assert.equal(stats.gid, 0, 'and its group');
  assertFails(
    finished,
    1,
    `booking-search-server: refusing socket ${socket}: directory ${open} is writable by every user (mode 777), so another user could replace the socket; use a directory only the service's user can write, such as systemd's RuntimeDirectory=`,
  );

  const foreign = join(dir, 'fremd');
  mkdirSync(foreign);
  chownSync(foreign, Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim()), 0);
  assertFails(
    await run(['--demo', '--socket', join(foreign, 'api.sock')]),
    1,
    /^booking-search-server: refusing socket .*fremd\/api\.sock: directory .*fremd is owned by another user \(uid \d+\) \(mode 755\)/,
  );
});

test("--socket through another user's symlink in a sticky directory is refused, though it points to root's own directory", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give a symlink to another user (CI runs as root)');
  const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const own = join(dir, 'run');
  mkdirSync(own, { mode: 0o755 });
  const sticky = join(dir, 'st');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  const dirlink = join(sticky, 'dirlink');
  symlinkSync(own, dirlink);
  lchownSync(dirlink, nobody, 0);
  const socket = join(dirlink, 's.sock');
  assertFails(
    await run(['--demo', '--socket', socket]),
    1,
    `booking-search-server: refusing socket ${socket}: symlink ${dirlink} is owned by another user (uid ${nobody}), who could point it elsewhere; give the path without it, or a symlink owned by root or the service's user`,
  );
  assert.equal(existsSync(join(own, 's.sock')), false, 'no socket made');
});

test('--socket is created with its mode, never chmodded after: a user watching a sticky /tmp-like directory never sees it wider', async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to run the watcher as another user (CI runs as root)');
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const shared = join(dir, 'tmp');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  const socket = join(shared, 'api.sock');
  // As `nobody`: the mode of the socket the moment it first appears.
  const watcher = runAs(
    'nobody',
    `const fs = require('node:fs'); const end = Date.now() + 8000;
     while (Date.now() < end) { try { console.log((fs.lstatSync(${JSON.stringify(socket)}).mode & 0o777).toString(8)); break; } catch {} }`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const server = await start(t, ['--demo', '--socket', socket, '--socket-group', 'www-data', '--socket-mode', '600']);
  assert.equal(await watcher.output, '600', 'the first mode anyone can see is the one asked for');
  const stats = lstatSync(socket);
  assert.equal(stats.mode & 0o777, 0o600);
  assert.equal(stats.gid, Number(spawnSync('id', ['-g', 'www-data'], { encoding: 'utf8' }).stdout.trim()));
  assert.equal(server.output().stderr, '');
  await server.stop();
});

test('--socket-mode that lets every user connect is served with a warning that says why', async (t) => {
  const socket = join(tempDir(t), 'api.sock');
  const server = await start(t, ['--demo', '--socket', socket, '--socket-mode', '666']);
  assert.equal(statSync(socket).mode & 0o777, 0o666);
  assert.match(
    server.output().stderr,
    new RegExp(
      `^${TIME} warning: --socket-mode 666 lets every user of this machine connect to the socket, and the socket's peer is trusted as the proxy \\(X-Forwarded-For\\): any of them can choose the address the throttle counts; use 660 with --socket-group\n$`,
    ),
  );
  await server.stop();
});

test('--socket replaces a stale socket, refuses one that answers and a path that is not a socket', async (t) => {
  const dir = tempDir(t);
  const stale = join(dir, 'stale.sock');
  const leftover = createServer();
  await new Promise<void>((resolve) => leftover.listen(stale, resolve));
  // A killed process leaves its socket file behind: listening ends, the file stays.
  // (Closing a node:net server would remove it, so the file is kept by renaming around.)
  const kept = join(dir, 'kept.sock');
  spawnSync('ln', [stale, kept]);
  await new Promise<void>((resolve) => leftover.close(() => resolve()));
  spawnSync('mv', [kept, stale]);
  assert.ok(lstatSync(stale).isSocket(), 'a stale socket file is there');
  const server = await start(t, ['--demo', '--socket', stale]);
  assert.equal((await requestOverSocket(stale, '/api/v1/status', { authorization: AUTH })).status, 200);

  assertFails(
    await run(['--demo', '--socket', stale], cleanEnv()),
    1,
    `booking-search-server: cannot use socket ${stale}: another process is listening on it; stop that program, or choose another path`,
  );
  await server.stop();

  const file = join(dir, 'notes.txt');
  writeFileSync(file, 'keep me\n');
  assertFails(
    await run(['--demo', '--socket', file], cleanEnv()),
    1,
    `booking-search-server: cannot use socket ${file}: it exists and is not a socket; refusing to replace it`,
  );
  assert.equal(readFileSync(file, 'utf8'), 'keep me\n');
  assertFails(
    await run(['--demo', '--socket', join(dir, 'nix', 'api.sock')], cleanEnv()),
    1,
    `booking-search-server: cannot listen on socket ${join(dir, 'nix', 'api.sock')}: no such directory`,
  );
});

test('--trust-proxy: X-Forwarded-For counts only from the named proxy, never from a direct client', async (t) => {
  const server = await start(t, ['--demo', '--trust-proxy', '127.0.0.1', '--max-auth-failures', '2']);
  const status = `${server.api}status`;
  // A direct client on 127.0.0.2 makes up a new address per attempt: still blocked as itself.
  for (let i = 1; i <= 3; i += 1)
    await requestFrom('127.0.0.2', status, { authorization: WRONG, 'x-forwarded-for': `10.0.0.${i}` });
  assert.equal(
    (await requestFrom('127.0.0.2', status, { authorization: AUTH, 'x-forwarded-for': '10.0.0.9' })).status,
    429,
  );
  // The proxy (127.0.0.1) speaks for its clients.
  assert.equal(
    (await requestFrom('127.0.0.1', status, { authorization: AUTH, 'x-forwarded-for': '10.0.0.9' })).status,
    200,
  );
  const { stdout: log, stderr } = await server.stop();
  assert.match(log, new RegExp(String.raw`^${TIME} 127\.0\.0\.2 - GET /api/v1/status 429 `, 'm'));
  assert.match(log, new RegExp(String.raw`^${TIME} 10\.0\.0\.9 kasse GET /api/v1/status 200 `, 'm'));
  // Any local user can connect from 127.0.0.1 as well and choose its X-Forwarded-For.
  assert.match(
    stderr,
    new RegExp(
      String.raw`^${TIME} warning: --trust-proxy 127\.0\.0\.1 is on loopback: every user of this machine can connect from there and choose its X-Forwarded-For`,
      'm',
    ),
  );
});

test('command-line mistakes around --socket and --trust-proxy exit 2 and say what to write', async () => {
  const hint =
    "booking-search-server: --trust-proxy needs your proxy's addresses, e.g. --trust-proxy 127.0.0.1,::1 (or --socket PATH, whose peer is the proxy) (see --help)";
  assertFails(await run(['--demo', '--trust-proxy']), 2, hint);
  assertFails(await run(['--demo', '--trust-proxy', '--workers', '2']), 2, hint);
  assertFails(await run(['--demo', '--trust-proxy=']), 2, hint);
  const cases: Array<[string[], string]> = [
    [['--trust-proxy', 'true'], "--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not 'true'"],
    [
      ['--trust-proxy', '127.0.0.1,10.0.0.0/8'],
      "--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not '10.0.0.0/8'",
    ],
    [['--socket', '/tmp/x.sock', '--port', '8080'], 'give either --socket PATH or --host/--port, not both'],
    [
      ['--socket', '/tmp/x.sock', '--trust-proxy', '127.0.0.1'],
      '--trust-proxy names TCP peers; on --socket the socket itself is the trusted proxy',
    ],
    [['--socket-mode', '600'], '--socket-mode and --socket-group need --socket PATH'],
    [
      ['--socket', '/tmp/x.sock', '--socket-mode', '0x1ff'],
      "--socket-mode must be octal permissions such as 660, not '0x1ff'",
    ],
    [['--log-format', 'xml'], "--log-format must be text or json, not 'xml'"],
  ];
  for (const [args, message] of cases) {
    assertFails(await run(['--demo', ...args]), 2, `booking-search-server: ${message} (see --help)`);
  }
  assertFails(
    await run(['--demo', '--socket', join('/tmp', `nogroup-${process.pid}.sock`), '--socket-group', 'keine-gruppe']),
    1,
    "booking-search-server: no group 'keine-gruppe' on this system (getent group keine-gruppe); give its number instead",
  );
});

test('--log-format json: one JSON object a line on stdout and stderr, with the same fields and a level', async (t) => {
  const dir = tempDir(t);
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, 'kasse:ge:heim\n');
  chmodSync(credentials, 0o644);
  const args = ['--db', buildDatabase(t), '--log-format', 'json', '--credentials-file', credentials, '--port', '0'];
  const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'close');
  const deadline = Date.now() + 10_000;
  while (!stdout.includes('\n') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const listening = JSON.parse(stdout.split('\n')[0] as string) as { time: string; level: string; message: string };
  assert.deepEqual(Object.keys(listening), ['time', 'level', 'message']);
  assert.equal(listening.level, 'info');
  assert.match(listening.time, new RegExp(`^${TIME}$`));
  const api = /^booking-search-server listening on (http:\/\/127\.0\.0\.1:\d+\/api\/v1\/)$/.exec(
    listening.message,
  )?.[1];
  assert.ok(api, listening.message);

  assert.equal(
    (await request(`${api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`, { headers: { authorization: AUTH } }))
      .status,
    200,
  );
  assert.equal((await request(`${api}status`, { headers: { authorization: WRONG } })).status, 401);
  child.kill('SIGTERM');
  assert.equal((await exited)[0], 0);

  const lines = stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const access = lines.slice(0, -2);
  assert.equal(access.length, 2, stdout);
  const [stopping, stopped] = lines.slice(-2).map((line) => `${line['level']} ${line['message']}`);
  assert.match(stopping as string, /^info stopping on SIGTERM: open requests are answered, within \d+ s$/);
  assert.equal(stopped, 'info stopped');
  for (const line of access) {
    const error = line['status'] === 200 ? [] : ['error'];
    assert.deepEqual(Object.keys(line), [
      'time',
      'level',
      'address',
      'user',
      'method',
      'path',
      'status',
      ...error,
      'ms',
    ]);
    assert.equal(line['level'], 'info');
    assert.match(line['time'] as string, new RegExp(`^${TIME}$`));
    assert.equal(typeof line['ms'], 'number');
  }
  assert.deepEqual(
    access.map(({ address, user, method, path, status, error }) => ({ address, user, method, path, status, error })),
    [
      { address: '127.0.0.1', user: 'kasse', method: 'GET', path: '/api/v1/buchungen', status: 200, error: undefined },
      {
        address: '127.0.0.1',
        user: 'kasse',
        method: 'GET',
        path: '/api/v1/status',
        status: 401,
        error: 'unauthorized',
      },
    ],
  );
  assert.doesNotMatch(stdout, /betrag|von=|ge:heim/);

  // stderr: the warning about the credentials file, as JSON too; never its content.
  const warnings = stderr
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { time: string; level: string; message: string });
  assert.equal(warnings.length, 1, stderr);
  assert.match(warnings[0]?.time as string, new RegExp(`^${TIME}$`));
  assert.equal(warnings[0]?.level, 'warning');
  assert.match(
    warnings[0]?.message as string,
    /^warning: credentials file .*credentials is readable by every user of this machine \(mode 644\); chmod o-rwx it$/,
  );
  assert.doesNotMatch(stderr, /ge:heim/);
});

test('a credentials file readable only by owner and group starts without a warning; a start-up failure has a time', async (t) => {
  const dir = tempDir(t);
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, 'kasse:ge:heim\n');
  chmodSync(credentials, 0o640);
  const server = await start(t, ['--demo', '--credentials-file', credentials], cleanEnv());
  assert.equal((await server.stop()).stderr, '');
  // assertFails requires the time on a failure with exit 1.
  assertFails(
    await run(['--db', join(dir, 'nix.sqlite'), '--credentials-file', credentials], cleanEnv()),
    1,
    /^booking-search-server: cannot open database .*nix\.sqlite: no such file$/,
  );
});

test('--socket with --workers 2: both workers serve the one socket, with its mode, and it is removed on exit', async (t) => {
  const socket = join(tempDir(t), 'api.sock');
  const server = await start(t, ['--db', buildDatabase(t), '--socket', socket, '--workers', '2']);
  assert.match(server.output().stdout, /Serving from 2 worker processes \(pids \d+, \d+\)/);
  assert.equal(statSync(socket).mode & 0o777, 0o660);
  for (let i = 0; i < 4; i += 1) {
    const reply = await requestOverSocket(socket, '/api/v1/status', {
      authorization: AUTH,
      'x-forwarded-for': '192.0.2.1',
    });
    assert.equal(reply.status, 200);
  }
  const stopped = await server.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  assert.equal(existsSync(socket), false);
  assert.equal(stopped.stdout.match(/ 192\.0\.2\.1 kasse GET \/api\/v1\/status 200 /g)?.length, 4);
});
