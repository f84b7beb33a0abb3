// The real CLI as a child process: bin/booking-search-server.js over the compiled dist/.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, closeSync, copyFileSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  assertFails,
  BIN,
  cleanEnv,
  makeCertificate,
  run,
  sha256,
  start,
  TIME,
  USER,
  until,
} from './support/cli-helpers.js';
import {
  assertReply,
  basicAuth,
  buildDatabase,
  databaseDir,
  get,
  HASH_OF_ALT,
  MARCH_COFFEE,
  request,
  statusAnswer,
  tempDir,
} from './support/helpers.js';

test('--help prints the usage and --version the package version', async () => {
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage:\n {2}booking-search-server --db FILE/);
  const version = await run(['--version']);
  assert.equal(version.code, 0);
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(version.stdout, `${manifest.version}\n`);
});

// The file named by --config or BOOKING_SEARCH_CONFIG was read before the command was looked at.
test('the command is looked at before the configuration file: one that reads none never answers about it', async (t) => {
  const missing = join(tempDir(t), 'missing.conf');
  const withVariable = cleanEnv({ ...USER, BOOKING_SEARCH_CONFIG: missing });
  const [hash, hashWithVariable, help, version, extra, unknown, check] = await Promise.all([
    run(['hash-password', '--config', missing]),
    run(['hash-password'], withVariable),
    run(['--help', '--config', missing]),
    run(['--version'], withVariable),
    run(['bogus', '--config', missing]),
    run(['--frobnicate'], withVariable),
    run(['check', '--config', missing]),
  ]);
  assertFails(hash, 2, "booking-search-server: unexpected argument '--config' (see --help)");
  // hash-password reads standard input only (here none), whatever the variable names.
  assertFails(
    hashWithVariable,
    1,
    'booking-search-server: the password is empty; give one line on standard input',
    true,
  );
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage:/);
  assert.equal(version.code, 0, version.stderr);
  assertFails(extra, 2, "booking-search-server: unexpected argument 'bogus' (see --help)");
  assertFails(unknown, 2, 'booking-search-server: unknown option --frobnicate (see --help)');
  // A command that reads the file still says when it is missing.
  assertFails(check, 1, `booking-search-server: cannot read configuration file ${missing}: no such file`, true);
});

// check --config printed a bad line of the file as a log line (with a time), a mistyped
// flag to check as a plain one: a command's refusal is one plain line, as the person who
// typed it reads it; the service's start is the log line its journal keeps.
test("a bad key of the file: check's refusal is one plain line, the start's a log line", async (t) => {
  const config = join(tempDir(t), 'office.conf');
  writeFileSync(
    config,
    `db = ${buildDatabase(t)}
port = 0

worker = 3
`,
    { mode: 0o600 },
  );
  const line = `booking-search-server: ${config}:4: unknown key worker: the keys are the long flags' names without -- (see --help); did you mean workers?`;
  assertFails(await run(['check', '--config', config]), 1, line, true);
  assertFails(await run(['--config', config]), 1, line);
  assertFails(
    await run(['check', '--config', config, '--wokers', '2']),
    2,
    /^booking-search-server: unknown option --wokers/,
  );
});

// better-sqlite3's prebuild needs Node-API 10: an older Node crashed with a segfault.
test('on a Node older than 22.14 the command refuses with one line, before better-sqlite3 loads', async () => {
  const olderNode = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"22.13.1"})';
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', olderNode, BIN, '--demo', '--port', '0'], { env: cleanEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.deepEqual(result, {
    code: 1,
    stdout: '',
    stderr: 'booking-search-server: needs Node.js 22.14 or newer (this is v22.13.1); install Node.js 24 LTS\n',
  });
});

// A clone run before `npm install` printed Node's ERR_MODULE_NOT_FOUND stack for dist/bin/cli.js.
test('in a clone without a build the command says to run npm install, in one line; any other missing module is reported as before', async (t) => {
  const clone = join(tempDir(t), 'clone dir');
  mkdirSync(join(clone, 'bin'), { recursive: true });
  copyFileSync(BIN, join(clone, 'bin', 'booking-search-server.js'));
  const launch: Parameters<typeof run>[2] = (args) => [
    process.execPath,
    [join(clone, 'bin', 'booking-search-server.js'), ...args],
  ];
  const unbuilt = await run(['--demo'], cleanEnv(), launch);
  assert.deepEqual(unbuilt, {
    code: 1,
    signal: null,
    stdout: '',
    stderr:
      'booking-search-server: the package is not built (dist/bin/cli.js is missing); run `npm install` in the clone, which builds it\n',
  });
  mkdirSync(join(clone, 'dist', 'bin'), { recursive: true });
  writeFileSync(join(clone, 'dist', 'bin', 'cli.js'), "import './gone.js';\n");
  const broken = await run(['--demo'], cleanEnv(), launch);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /ERR_MODULE_NOT_FOUND/);
  assert.doesNotMatch(broken.stderr, /not built/);
});

// Resuming after an uncaught exception is unsafe (Node's documentation); the process
// ends and its supervisor (the worker budget, systemd) starts a clean one.
for (const [what, bug, logged] of [
  ['an uncaught exception', "throw new TypeError('boom')", 'TypeError: boom'],
  ['an unhandled rejection', "Promise.reject(new RangeError('lost'))", 'RangeError: lost'],
] as const) {
  test(`${what} outside a request ends the service with one line and exit code 1`, async (t) => {
    // Raised once the service has installed its own handler, while it serves.
    const preload = join(tempDir(t), 'bug.mjs');
    writeFileSync(
      preload,
      `const t = setInterval(() => { if (process.listenerCount('uncaughtException') > 0) { clearInterval(t); setTimeout(() => { ${bug}; }, 100); } }, 10);\n`,
    );
    const result = await run(['--demo', '--port', '0'], cleanEnv(), (args) => [
      process.execPath,
      ['--import', preload, BIN, ...args],
    ]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`^${TIME} unexpected error, stopping: ${logged} \\(at file://${preload}:1:\\d+\\)\\n$`),
    );
  });
}

// The primary of --workers: cluster.fork() failing (EAGAIN, no process left to its user) as it
// replaces a worker that died, in node:cluster's exit event, which nothing around it catches.
test('--workers 2: an error nothing caught in the primary ends the service with one line: the other worker stopped, exit code 1', async (t) => {
  const preload = join(tempDir(t), 'fork.mjs');
  writeFileSync(
    preload,
    `import cluster from 'node:cluster';
const fork = cluster.fork;
let forks = 0;
cluster.fork = function (...args) {
  forks += 1;
  if (forks > 2) throw Object.assign(new Error('spawn EAGAIN'), { code: 'EAGAIN' });
  return fork.apply(this, args);
};
`,
  );
  const server = await start(t, ['--demo', '--workers', '2'], cleanEnv(), (args) => [
    process.execPath,
    ['--import', preload, BIN, ...args],
  ]);
  const pids = /\(pids (\d+), (\d+)\)/.exec(server.output().stdout)?.slice(1).map(Number) ?? [];
  assert.equal(pids.length, 2, server.output().stdout);
  const closed = once(server.child, 'close');
  process.kill(pids[0] as number, 'SIGKILL');
  const [code] = (await closed) as [number | null];
  const { stdout, stderr } = server.output();
  assert.equal(code, 1, stderr);
  assert.match(
    stderr,
    new RegExp(`^${TIME} unexpected error, stopping: Error: spawn EAGAIN \\(at file://${preload}:\\d+:\\d+\\)\\n$`),
  );
  assert.match(stdout, new RegExp(`\\n${TIME} stopped\\n$`), 'the other worker stopped as on a signal');
  assert.throws(() => process.kill(pids[1] as number, 0), { code: 'ESRCH' });
});

// Its workers drain a search when a signal comes: the stop of a failure stays one (exit 1).
test('--workers 2: SIGTERM while the workers stop after an error nothing caught in the primary: exit code 1 still', async (t) => {
  const preload = join(tempDir(t), 'bug.mjs');
  writeFileSync(
    preload,
    `import cluster from 'node:cluster';
if (cluster.isPrimary) process.on('SIGUSR2', () => { throw new Error('boom'); });
`,
  );
  const file = buildDatabase(t);
  const db = new Database(file);
  // A view whose searches take as long as the rows of `slow` say: at once while the service starts.
  db.exec(`CREATE TABLE slow(n INTEGER);
    CREATE VIEW kasse AS SELECT e.* FROM entries e WHERE (WITH RECURSIVE r(i) AS
      (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < (SELECT max(n) FROM slow)) SELECT count(*) FROM r) > 0`);
  const args = ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '60', '--workers', '2'];
  const server = await start(t, args, cleanEnv(USER), (all) => [process.execPath, ['--import', preload, BIN, ...all]]);
  db.exec('INSERT INTO slow VALUES (60000000)');
  db.close();
  const search = httpGet(`${server.origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`, {
    headers: { authorization: basicAuth(USER.BOOKING_SEARCH_USER, USER.BOOKING_SEARCH_PASSWORD) },
  });
  search.on('error', () => undefined);
  const pause = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));
  await pause(1_000);
  const closed = once(server.child, 'close');
  server.child.kill('SIGUSR2');
  await until(
    () => server.output().stderr.includes('boom'),
    () => server.output().stderr,
  );
  // The workers drain the search; this one stops them as a first signal would, then one that cuts.
  server.child.kill('SIGTERM');
  await pause(300);
  server.child.kill('SIGTERM');
  const [code] = (await closed) as [number | null];
  const { stderr } = server.output();
  assert.match(
    stderr,
    new RegExp(`^${TIME} unexpected error, stopping: Error: boom \\(at file://${preload}:\\d+:\\d+\\)$`, 'm'),
  );
  assert.equal(code, 1, stderr);
});

// The table of command lines is test/unit/args.test.ts; these show what only a process can:
// the exit code, exactly one line on stderr and no stack trace.
test('a reader of stdout that goes: a command ends quietly, the service keeps serving and says once that its access log stops', async (t) => {
  // The reader leaves before the command writes: its write fails with EPIPE.
  const help = spawn(process.execPath, [BIN, '--openapi'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  help.stdout.destroy();
  let helpErr = '';
  help.stderr.on('data', (chunk: Buffer) => (helpErr += chunk));
  const [helpCode] = await once(help, 'close');
  assert.equal(helpErr, '');
  assert.equal(helpCode, 0);

  const server = await start(t, ['--db', buildDatabase(t)]);
  server.child.stdout?.destroy();
  const auth = { authorization: basicAuth('kasse', 'ge:heim') };
  for (let i = 0; i < 3; i += 1) assert.equal((await fetch(`${server.api}status`, { headers: auth })).status, 200);
  const { stderr } = await server.stop();
  assert.match(
    stderr,
    /^\S+ warning: stdout cannot be written \(write EPIPE\): the access log is no longer written\n$/,
  );
});

test("a log's disk that is full on stderr (ENOSPC): the service keeps serving, says so once on stdout, and stops as asked", async (t) => {
  const dir = tempDir(t);
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, 'kasse:ge:heim\n', { mode: 0o600 });
  const full = openSync('/dev/full', 'w');
  t.after(() => closeSync(full));
  const env = cleanEnv();
  const args = [BIN, '--db', buildDatabase(t), '--credentials-file', credentials, '--port', '0'];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', full] });
  t.after(() => void child.kill('SIGKILL'));
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  await until(
    () => /listening on (http:\/\/\S+\/api\/v1\/)/.test(stdout),
    () => `no listening line: ${stdout}`,
  );
  const api = /listening on (http:\/\/\S+\/api\/v1\/)/.exec(stdout)?.[1] as string;
  const auth = { authorization: basicAuth('kasse', 'ge:heim') };
  // A credentials file that cannot be read again: a warning, which the full disk refuses.
  writeFileSync(credentials, 'kaputt\n');
  child.kill('SIGHUP');
  await until(
    () => stdout.includes('stderr cannot be written'),
    () => `said nothing: ${stdout}`,
  );
  for (let i = 0; i < 3; i += 1) assert.equal((await fetch(`${api}status`, { headers: auth })).status, 200);
  child.kill('SIGHUP');
  assert.equal((await fetch(`${api}status`, { headers: auth })).status, 200);
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, stdout);
  const said = stdout.split('\n').filter((line) => line.includes('cannot be written'));
  assert.deepEqual(
    said.map((line) => line.replace(/^\S+ /, '')),
    [
      'warning: stderr cannot be written (ENOSPC: no space left on device, write): warnings and errors are no longer written',
    ],
  );
});

test('a wrong command line ends with one line and exit code 2', async () => {
  assertFails(await run(['--frobnicate']), 2, 'booking-search-server: unknown option --frobnicate (see --help)');
  // --base-path is checked as the command line's, before the library would be asked.
  assertFails(
    await run(['--demo', '--base-path', 'kasse']),
    2,
    `booking-search-server: --base-path must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~, not 'kasse' (it must start with "/"); use /kasse instead (see --help)`,
  );
  // One that no client can send as written would be answered by no client.
  assertFails(
    await run(['--demo', '--base-path', '/kä']),
    2,
    /^booking-search-server: --base-path must be .*, not '\/kä' \(a client sends "ä" percent-encoded\); use \/kae instead \(see --help\)$/,
  );
});

// A comment after a path was part of it: "no such file" named the whole text, with no hint.
test('a # comment after a value in the configuration file is refused at its line, saying where a comment goes', async (t) => {
  const config = join(tempDir(t), 'books.conf');
  writeFileSync(config, `[book kasse]\ndb = ${buildDatabase(t)}   # the shop\n`, { mode: 0o600 });
  assertFails(
    await run(['--config', config, '--port', '0'], cleanEnv()),
    1,
    `booking-search-server: ${config}:2: db holds ' #', but # starts a comment only at the start of a line: put the comment on a line of its own, or quote the path`,
  );
  writeFileSync(config, `port = 8080 # web\n[book kasse]\ndb = ${buildDatabase(t)}\n`, { mode: 0o600 });
  assertFails(
    await run(['--config', config], cleanEnv()),
    1,
    `booking-search-server: ${config}:1: port must be a whole number from 0 to 65535, not '8080 # web' (# starts a comment only at the start of a line)`,
  );
  // A book's base-path and users are judged apart from the flags, in the same words; and no
  // other base path is proposed, which would keep the comment in the URL (/weber-neu).
  const credentials = join(tempDir(t), 'credentials');
  writeFileSync(credentials, 'abgleich:geheim\n', { mode: 0o600 });
  const db = buildDatabase(t);
  for (const [line, said] of [
    [
      'base-path = /weber # neu',
      `base-path must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~, not '/weber # neu' (a client sends " " percent-encoded) (# starts a comment only at the start of a line)`,
    ],
  ]) {
    writeFileSync(config, `[book weber]\ndb = ${db}\n${line}\n`, { mode: 0o600 });
    const args = ['--config', config, '--credentials-file', credentials];
    assertFails(await run([...args, '--port', '0'], cleanEnv()), 1, `booking-search-server: ${config}:3: ${said}`);
    const checked = await run(['check', ...args], cleanEnv());
    assert.equal(checked.code, 1, checked.stdout);
    assert.ok(checked.stdout.includes(`Does not fit: ${config}:3: ${said}\n`), checked.stdout);
  }
  // A user the credentials lack is a warning, in the same words; its book, with no other, ends the start.
  writeFileSync(config, `[book weber]\ndb = ${db}\nusers = abgleich # Bank\n`, { mode: 0o600 });
  const args = ['--config', config, '--credentials-file', credentials];
  const warned = `warning: ${config}:3: user 'abgleich # Bank' is not in the credentials of ${credentials} (--credentials-file) (# starts a comment only at the start of a line): book weber names no other`;
  const started = await run([...args, '--port', '0'], cleanEnv());
  assert.equal(started.code, 1);
  assert.ok(started.stderr.includes(warned), started.stderr);
  const checked = await run(['check', ...args], cleanEnv());
  assert.equal(checked.code, 1, checked.stdout);
  assert.ok(checked.stdout.includes(warned), checked.stdout);
});

// A path holding the four characters \x0a was said exactly as one holding a newline.
test('a backslash in a value is shown escaped, so that a path holding "\\x0a" reads otherwise than one holding a newline', async (t) => {
  const dir = tempDir(t);
  const [literal, newline] = await Promise.all([
    run(['--db', join(dir, 'a\\x0ab.sqlite'), '--port', '0']),
    run(['--db', join(dir, 'a\nb.sqlite'), '--port', '0']),
  ]);
  assert.ok(literal.stderr.includes(`${dir}/a\\\\x0ab.sqlite`), literal.stderr);
  assert.ok(newline.stderr.includes(`${dir}/a\\nb.sqlite`), newline.stderr);
  assert.equal(literal.stderr.split('\n').length, 2, literal.stderr);
});

// A newline in a flag's value printed a second line that read like a log line of its own.
test("a value the admin gave is shown escaped in its refusal, in one line: a flag's, a variable's and the file's alike", async (t) => {
  const forged = 'x\n2026-11-29T00:00:00.000Z forged line';
  const escaped = 'x\\n2026-11-29T00:00:00.000Z forged line';
  const name = `--name must be 1 to 100 printable ASCII characters (it is the realm of the login), not '${escaped}'`;
  const config = join(tempDir(t), 'service.conf');
  writeFileSync(config, 'name = x\u001b[31my\u2028z\n', { mode: 0o600 });
  const [flag, basePath, argument, variable, file] = await Promise.all([
    run(['--demo', '--name', forged]),
    run(['--demo', '--base-path', '/x\nforged']),
    run(['--demo', 'x\u001b[2Jy']),
    run(['--demo'], cleanEnv({ ...USER, BOOKING_SEARCH_NAME: forged })),
    run(['--demo', '--config', config]),
  ]);
  assertFails(flag, 2, `booking-search-server: ${name} (see --help)`);
  assertFails(basePath, 2, /^booking-search-server: --base-path must be .*, not '\/x\\nforged' .*\(see --help\)$/);
  assertFails(argument, 2, "booking-search-server: unexpected argument 'x\\x1b[2Jy' (see --help)");
  assertFails(variable, 1, `booking-search-server: BOOKING_SEARCH_NAME: ${name}`);
  assertFails(
    file,
    1,
    new RegExp(`^booking-search-server: ${config}:1: name must .*, not 'x\\\\x1b\\[31my\\\\u2028z'$`),
  );
  // check --config shows a book's users as it found them in the file: escaped too.
  writeFileSync(config, `[book kasse]\ndb = ${buildDatabase(t)}\nbase-path = /kasse\nusers = b\u001b[31mx\n`);
  const checked = await run(['check', '--config', config], cleanEnv());
  assert.ok(checked.stdout.includes('\nBook kasse at /kasse/api/v1/ (users b\\x1b[31mx):\n'), checked.stdout);
  assert.ok(!checked.stdout.includes('\u001b'), 'no escape character reaches the terminal');
});

// A refusal placed at the file's line dropped every `--` before a letter, in the value it quoted too.
test("a refusal at the file's line drops the dashes of the settings it names, never of the value it quotes", async (t) => {
  const config = join(tempDir(t), 'service.conf');
  const refusal = async (text: string, args: string[] = []) => {
    writeFileSync(config, text, { mode: 0o600 });
    return run(['--demo', '--config', config, ...args]);
  };
  const port = (value: string) => `port must be a whole number from 0 to 65535, not '${value}'`;
  assertFails(await refusal('port = 80--x\n'), 1, `booking-search-server: ${config}:1: ${port('80--x')}`);
  assertFails(await refusal('port = --port\n'), 1, `booking-search-server: ${config}:1: ${port('--port')}`);
  assertFails(
    await refusal('tls-min-version = TLSv1.3\n'),
    1,
    `booking-search-server: ${config}:1: tls-min-version needs tls-cert and tls-key`,
  );
  // A flag's value that names a setting of the file is still the flag's.
  assertFails(
    await refusal('port = 0\n', ['--send-timeout', 'x --port']),
    2,
    "booking-search-server: --send-timeout must be a whole number from 1 to 3600, not 'x --port' (see --help)",
  );
});

test('without credentials it refuses to start', async (t) => {
  assertFails(
    await run(['--db', buildDatabase(t)], cleanEnv()),
    1,
    'booking-search-server: no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE',
  );
});

test('a missing file, a directory, a non-database and a foreign schema each end with one clear line', async (t) => {
  const dir = databaseDir(t);
  const missing = join(dir, 'fehlt.sqlite');
  assertFails(await run(['--db', missing]), 1, `booking-search-server: cannot open database ${missing}: no such file`);
  assertFails(await run(['--db', dir]), 1, `booking-search-server: cannot open database ${dir}: not a regular file`);
  const text = join(dir, 'notiz.txt');
  writeFileSync(text, 'Dies ist keine Datenbank, sondern eine Notiz über die Kasse.\n'.repeat(100));
  assertFails(await run(['--db', text]), 1, `booking-search-server: ${text} is not a SQLite database`);
  const foreign = join(dir, 'fremd.sqlite');
  new Database(foreign).exec('CREATE TABLE buchungen (id INTEGER PRIMARY KEY)').close();
  assertFails(
    await run(['--db', foreign]),
    1,
    `booking-search-server: ${foreign} does not fit the schema: table or view 'entries' is missing; table or view 'categories' is missing; table or view 'payment_methods' is missing`,
  );
});

// With --workers, stdout said "stopped" after the line: nothing had started.
test('a port in use ends with one clear line, and nothing on stdout, with --workers too', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  for (const workers of [[], ['--workers', '2']]) {
    const result = await run(['--demo', '--port', String(port), ...workers]);
    assertFails(
      result,
      1,
      `booking-search-server: port ${port} on 127.0.0.1 is already in use: stop the program that listens there, or choose another port`,
    );
    assert.equal(result.stdout, '', workers.join(' '));
  }
});

// The guard process that judged the file was left to its idle end, 5 s later, and held the
// process until then.
test('a start that fails at listen time, after the file was judged, ends at once with its one line', async (t) => {
  const file = buildDatabase(t);
  const dir = tempDir(t);
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = String((blocker.address() as { port: number }).port);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  chmodSync(cert, 0o600);
  chmodSync(key, 0o600);
  const failures: Array<[args: string[], line: string | RegExp]> = [
    [
      ['--port', port],
      `booking-search-server: port ${port} on 127.0.0.1 is already in use: stop the program that listens there, or choose another port`,
    ],
    [
      ['--socket', join(dir, 'nonexist', 'api.sock')],
      `booking-search-server: cannot listen on socket ${join(dir, 'nonexist', 'api.sock')}: no such directory`,
    ],
    [['--socket', join(dir, 'api.sock'), '--socket-group', 'nosuchgroup'], /^booking-search-server: .*nosuchgroup/],
    [
      ['--port', '0', '--admin-port', port],
      `booking-search-server: the admin listener: port ${port} on 127.0.0.1 is already in use: stop the program that listens there, or choose another port`,
    ],
    [
      ['--port', '0', '--tls-cert', key, '--tls-key', cert],
      /^booking-search-server: --tls-key \S+ is not a usable private key: it holds a certificate, not a private key: are --tls-cert and --tls-key swapped\?/,
    ],
  ];
  for (const [args, line] of failures) {
    // From the line to the end: the start before it is as slow as the machine is busy.
    const child = spawn(process.execPath, [BIN, '--db', file, ...args], { env: cleanEnv(USER), timeout: 15_000 });
    let stdout = '';
    let stderr = '';
    let said = 0;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      said ||= performance.now();
      stderr += chunk;
    });
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    const seconds = (performance.now() - said) / 1000;
    const result = { code, signal, stdout, stderr };
    assertFails(result, 1, line);
    assert.ok(seconds < 2, `${args.join(' ')} ended ${seconds.toFixed(2)} s after its line`);
  }
});

// A typo in a variable's name (BOOKING_SEARCH_SOKET) was ignored without a word.
test('a BOOKING_SEARCH_ variable that names no setting is warned about once at the start, with the nearest known name; the service starts', async (t) => {
  const env = cleanEnv({ ...USER, BOOKING_SEARCH_SOKET: '/run/api.sock', BOOKING_SEARCH_FROBNICATE: '1' });
  const server = await start(t, ['--demo'], env);
  assertReply(await get(`${server.api}status`), 200, statusAnswer());
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
  const lines = stopped.stderr.split('\n').filter((line) => line.includes('BOOKING_SEARCH_'));
  assert.equal(lines.length, 2, stopped.stderr);
  assert.match(
    lines[0] as string,
    new RegExp(`^${TIME} warning: the variable BOOKING_SEARCH_FROBNICATE names no setting and is ignored$`),
  );
  assert.match(
    lines[1] as string,
    new RegExp(
      `^${TIME} warning: the variable BOOKING_SEARCH_SOKET names no setting and is ignored; did you mean BOOKING_SEARCH_SOCKET\\?$`,
    ),
  );
});

test('serves a database read-only, logs one line per request without query or credentials, and stops on SIGTERM', async (t) => {
  const file = buildDatabase(t);
  const before = sha256(file);
  const server = await start(t, ['--db', file]);
  assert.equal(server.api, `${server.origin}/api/v1/`);
  const search = await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`);
  assertReply(search, 200, MARCH_COFFEE);
  assert.equal((await request(`${server.api}status`)).status, 401);

  const stopped = await server.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  assert.equal(stopped.stderr, '');
  const log = stopped.stdout.split('\n').slice(1, -1);
  assert.equal(log.length, 4, stopped.stdout);
  // The stop was not logged at all.
  assert.match(
    log[2] as string,
    new RegExp(`^${TIME} stopping on SIGTERM: open requests are answered, within \\d+ s$`),
  );
  assert.match(log[3] as string, new RegExp(`^${TIME} stopped$`));
  assert.match(
    log[0] as string,
    new RegExp(String.raw`^${TIME} 127\.0\.0\.1 kasse GET /api/v1/buchungen 200 \d+\.\dms$`),
  );
  assert.match(
    log[1] as string,
    new RegExp(String.raw`^${TIME} 127\.0\.0\.1 - GET /api/v1/status 401 \d+\.\dms unauthorized$`),
  );
  assert.doesNotMatch(stopped.stdout, /ge:heim|kasse:|betrag|von=/);
  assert.equal(sha256(file), before, 'the file is unchanged');
});

test('a failed login logs the user it tried, escaped and bounded, any other name only as `:unknown` (it may be a password); never the password; text and JSON', async (t) => {
  const file = buildDatabase(t);
  const basic = (user: string, password: string): Record<string, string> => ({
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });
  // Users whose names run to 500 characters, read `-` or turn text around (a username holds
  // no colon and no control character, RFC 7617: a CR that would forge a second access line
  // is refused in the credentials, and logged as any name that is none of the users).
  const names = ['bank-import', 'a'.repeat(500), '-', 'bank\u202eimport'];
  const credentials = join(tempDir(t), 'zugang');
  writeFileSync(credentials, names.map((name) => `${name}:Richtig\n`).join(''), { mode: 0o600 });
  // Names that are none of the users: a password typed into the username field among them.
  const forged = (end: string): string => `evil${end}10.0.0.1 kasse GET /api/v1/status 200 0.1ms`;
  const strangers = ['Richtig', forged('\n'), forged('\r'), ''];
  const tries = [...names, ...strangers].map((user, index) => [user, `Falsch-${index}`] as const);
  for (const format of ['text', 'json'] as const) {
    const server = await start(
      t,
      ['--db', file, '--credentials-file', credentials, '--log-format', format],
      cleanEnv(),
    );
    for (const [user, password] of tries) {
      assert.equal((await request(`${server.api}status`, { headers: basic(user, password) })).status, 401);
    }
    const stopped = await server.stop();
    assert.doesNotMatch(stopped.stdout + stopped.stderr, /Falsch-|Richtig|evil\\n/, 'never a password');
    const lines = stopped.stdout.split('\n').slice(1, -3);
    assert.equal(lines.length, tries.length, stopped.stdout);
    const users =
      format === 'json'
        ? lines.map((line) => (JSON.parse(line) as { user: string }).user)
        : lines.map((line) => {
            const match = new RegExp(
              String.raw`^${TIME} 127\.0\.0\.1 (.*) GET /api/v1/status 401 \d+\.\dms unauthorized$`,
            ).exec(line);
            assert.ok(match !== null, line);
            return match[1] as string;
          });
    const long = `${'a'.repeat(100)}…(+400)`;
    const unknown = [':unknown', ':unknown', ':unknown', ':unknown'];
    assert.deepEqual(
      users,
      format === 'json'
        ? ['bank-import', long, '-', 'bank\\u202eimport', ...unknown]
        : ['bank-import', long, '"-"', 'bank\\u202eimport', ...unknown],
    );
  }
});

test('a path in the access log is cut as every value from outside: a 15,000-character target without credentials writes no 15 KB line; text and JSON', async (t) => {
  const file = buildDatabase(t);
  const path = `/${'A'.repeat(15_000)}`;
  for (const format of ['text', 'json'] as const) {
    const server = await start(t, ['--db', file, '--log-format', format]);
    assert.equal((await request(`${server.origin}${path}?q=1`)).status, 401);
    const stopped = await server.stop();
    const line = stopped.stdout.split('\n').find((each) => each.includes(' 401 ') || each.includes('"status":401'));
    assert.ok(line !== undefined, stopped.stdout);
    const shown = format === 'json' ? (JSON.parse(line) as { path: string }).path : (line.split(' ')[4] as string);
    assert.equal(shown, `${path.slice(0, 100)}…(+${path.length - 100})`);
  }
});
/**
 * The fixture's bookings under the name `kasse`, whose id column takes any value, with a
 * booking whose text id would forge an access-log line and one whose date carries
 * terminal control sequences.
 */
function bookWithHostileValues(t: TestContext): { file: string; writeHostileValues: () => void } {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec(`CREATE TABLE kasse (id, date, amount_cents, subject, category_id, payment_method_id);
    INSERT INTO kasse SELECT * FROM entries;`);
  db.close();
  const writeHostileValues = (): void => {
    const writer = new Database(file);
    writer.exec(`INSERT INTO kasse VALUES ('A' || char(10) || '${FORGED_LINE}', '2026-03-14', 435, 'x', NULL, NULL);
      INSERT INTO kasse VALUES (9999, '2026-12-3' || char(27) || '[31m1' || char(27) || ']0;pwned' || char(7), 100, 'y', NULL, NULL);`);
    writer.close();
  };
  return { file, writeHostileValues };
}
const FORGED_LINE = '2026-11-24T08:00:00.000Z 10.0.0.1 kasse GET /api/v1/buchungen 200 0.1ms';
// Control characters but the newline that ends each line, and C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never be printed.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

test('a value from the file cannot forge a log line: a text id holding a newline is logged escaped, in the one line of its 500', async (t) => {
  const { file, writeHostileValues } = bookWithHostileValues(t);
  // Written by the application while the service runs (a file that has them is not served).
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse']);
  writeHostileValues();
  const failed = await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`);
  assert.equal(failed.status, 500);
  const stopped = await server.stop();
  assert.doesNotMatch(stopped.stderr, CONTROL);
  const errors = stopped.stderr.split('\n').filter((line) => line.includes('error in GET'));
  assert.equal(errors.length, 1, stopped.stderr);
  // The library's message quotes the id as it is, cut short; the log escapes its line break.
  assert.ok(errors[0]?.endsWith(`booking id is not an integer: 'A\\n${FORGED_LINE.slice(0, 38)}…'`), errors[0]);
  assert.ok(!stopped.stderr.split('\n').some((line) => line.startsWith(FORGED_LINE)));
  assert.ok(!stopped.stdout.split('\n').some((line) => line.startsWith(FORGED_LINE)));
});

test('check prints values from the file escaped: no control character reaches the terminal, no line of its own', async (t) => {
  const { file, writeHostileValues } = bookWithHostileValues(t);
  writeHostileValues();
  const result = await run(['check', '--db', file, '--table-names', 'entries=kasse']);
  assert.doesNotMatch(result.stdout, CONTROL);
  assert.match(result.stdout, /^Bookings: 22, dated 2024-02-29 to 2026-12-3\\x1b\[31m1\\x1b\]0;pwned\\x07\.$/m);
  assert.ok(!result.stdout.split('\n').some((line) => line.startsWith(FORGED_LINE)), result.stdout);
});

test('the access log is written in batches yet loses nothing: a line shows on a quiet service, and a burst ended by SIGTERM logs every request once', async (t) => {
  const server = await start(t, ['--demo']);
  const lines = (): string[] =>
    server
      .output()
      .stdout.split('\n')
      .filter((line) => line.includes(' GET /api/'));
  assert.equal((await request(`${server.api}status`)).status, 401);
  // A quiet service writes the line at the end of the turn; a flush that waited for more
  // lines, or for the exit, would leave it unwritten here.
  const deadline = Date.now() + 2_000;
  while (lines().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(lines().length, 1, 'the line of a lone request is written while the service runs');

  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());
  const headers = { authorization: basicAuth('kasse', 'ge:heim') };
  const statuses = await Promise.all(
    Array.from(
      { length: 300 },
      () =>
        new Promise<number>((resolve, reject) => {
          httpGet(`${server.api}status`, { agent, headers }, (res) => {
            res.resume().on('end', () => resolve(res.statusCode ?? 0));
          }).on('error', reject);
        }),
    ),
  );
  assert.deepEqual(new Set(statuses), new Set([200]));
  // At once: the lines of the last few milliseconds are still waiting for their write.
  const stopped = await server.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  const logged = stopped.stdout.split('\n').filter((line) => line.includes(' GET /api/'));
  assert.equal(logged.length, 301);
  assert.equal(logged.filter((line) => / kasse GET \/api\/v1\/status 200 /.test(line)).length, 300);
});

test('SIGINT stops it too, with idle keep-alive connections open', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  const agent = new Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  await new Promise<void>((resolve, reject) => {
    const headers = { authorization: basicAuth('kasse', 'ge:heim') };
    httpGet(`${server.api}status`, { agent, headers }, (res) => {
      assert.equal(res.headers.connection, 'keep-alive');
      res.resume().on('end', resolve);
    }).on('error', reject);
  });
  const stopped = await server.stop('SIGINT');
  assert.equal(stopped.code, 0);
});

test('--base-path serves under that path and says so', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--base-path', '/kasse']);
  assert.equal(server.api, `${server.origin}/kasse/api/v1/`);
  assert.equal((await get(`${server.origin}/kasse/api/v1/status`)).status, 200);
  assert.equal((await get(`${server.origin}/api/v1/status`)).status, 404);
});

test('--credentials-file with one line user:password', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'zugang');
  writeFileSync(file, 'buchhaltung:pass:wört\n');
  const server = await start(t, ['--db', buildDatabase(t), '--credentials-file', file], cleanEnv());
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('buchhaltung', 'pass:wört') } }))
      .status,
    200,
  );
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', 'ge:heim') } })).status,
    401,
  );

  const bad = join(dir, 'kaputt');
  writeFileSync(bad, 'geheimnis-ohne-doppelpunkt\n');
  const refused = await run(['--demo', '--credentials-file', bad], cleanEnv());
  assertFails(refused, 1, `booking-search-server: credentials file ${bad}, line 1: expected user:secret`);
  assert.doesNotMatch(refused.stderr, /geheimnis/);
  assertFails(
    await run(['--demo', '--credentials-file', file]),
    1,
    'booking-search-server: credentials are given twice: use BOOKING_SEARCH_USER/BOOKING_SEARCH_PASSWORD or --credentials-file, not both',
  );
  assertFails(
    await run(['--demo', '--credentials-file', join(dir, 'nix')], cleanEnv()),
    1,
    `booking-search-server: cannot read credentials file ${join(dir, 'nix')}: no such file`,
  );
});

test('--demo serves sample bookings as demo/demo and prints a curl command that finds some', async (t) => {
  const server = await start(t, ['--demo'], cleanEnv());
  const { stdout } = server.output();
  assert.match(stdout, /^\S+ Demo: 400 sample cash bookings from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, in memory\.$/m);
  assert.match(stdout, /^\S+ Demo credentials: user "demo", password "demo"/m);
  const curl = /^\S+ Try: curl -u demo:demo '([^']+)'$/m.exec(stdout);
  assert.ok(curl, stdout);
  const reply = await request(curl[1] as string, { headers: { authorization: basicAuth('demo', 'demo') } });
  assert.equal(reply.status, 200);
  const result = JSON.parse(reply.body) as { anzahl: number; buchungen: Array<{ betrag: number; zweck: string }> };
  assert.ok(result.anzahl > 0, reply.body);
  assert.ok(result.buchungen.every((b) => b.betrag < 0 && b.zweck !== ''));
});

test('--demo takes credentials from the environment when given, and prints none', async (t) => {
  const server = await start(t, ['--demo'], cleanEnv(USER));
  const { stdout } = server.output();
  assert.match(stdout, /^\S+ Credentials: from the environment\.$/m);
  assert.match(stdout, /^\S+ Try: curl -u "\$BOOKING_SEARCH_USER:\$BOOKING_SEARCH_PASSWORD" /m);
  assert.doesNotMatch(stdout, /ge:heim/);
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('demo', 'demo') } })).status,
    401,
  );
});

test('--name and --max-auth-failures reach the handler', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--name', 'Kasse Nord', '--max-auth-failures', '2']);
  assertReply(await get(`${server.api}status`), 200, statusAnswer('Kasse Nord'));
  const wrong = { authorization: basicAuth('kasse', 'falsch') };
  const first = await request(`${server.api}status`, { headers: wrong });
  assert.equal(first.headers['www-authenticate'], 'Basic realm="Kasse Nord", charset="UTF-8"');
  await request(`${server.api}status`, { headers: wrong });
  assert.equal((await get(`${server.api}status`)).status, 429);
});

test('--max-user-failures, --max-global-failures and --max-unauthenticated reach the handler', async (t) => {
  const server = await start(t, [
    '--demo',
    '--trust-proxy',
    '127.0.0.1',
    '--max-user-failures',
    '2',
    '--max-global-failures',
    '3',
    '--max-unauthenticated',
    '1',
  ]);
  const status = `${server.api}status`;
  const from = (address: string, authorization?: string) =>
    request(status, {
      headers: { 'x-forwarded-for': address, ...(authorization === undefined ? {} : { authorization }) },
    });
  for (const address of ['10.0.0.1', '10.0.0.2'])
    assert.equal((await from(address, basicAuth('demo', 'x'))).status, 401);
  assert.equal((await from('10.0.0.3', basicAuth('demo', 'x'))).status, 429, 'the username budget');
  assert.equal((await from('10.0.0.4', basicAuth('other', 'x'))).status, 401);
  assert.equal((await from('10.0.0.5', basicAuth('other2', 'x'))).status, 429, 'the global budget');
  assert.equal((await from('10.0.0.6')).status, 401);
  assert.equal((await from('10.0.0.6')).status, 429, 'requests without credentials');
});

function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

test('--workers 2: SIGTERM to the whole process group (systemd, Ctrl-C) lets a request in flight finish and log', async (t) => {
  // The primary passes the signal on too, so each worker sees two; the second must not cut.
  const env = cleanEnv({ BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: HASH_OF_ALT });
  const server = await start(t, ['--demo', '--workers', '2'], env, undefined, { ownGroup: true });
  assert.match(server.output().stdout, /Serving from 2 worker processes/);
  // A hashed password: its check keeps the request in flight for a good part of a second.
  const inFlight = request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', 'alt') } });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const stopped = server.stop('SIGTERM');
  assert.equal((await inFlight).status, 200);
  const { code, stdout } = await stopped;
  assert.equal(code, 0);
  assert.match(stdout, / kasse GET \/api\/v1\/status 200 /);
  assert.match(
    stdout,
    / stopping on SIGTERM: the workers answer their open requests, within 16 s\n(.*\n)*.* stopped\n$/,
  );
});

test('--workers 2 serves one port from two processes, replaces a worker killed right after its start, and stops on SIGTERM', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--workers', '2']);
  const greeting = new RegExp(
    String.raw`^${TIME} Serving from 2 worker processes \(pids (\d+), (\d+)\), each with its own read-only connection\.$`,
    'm',
  ).exec(server.output().stdout);
  assert.ok(greeting, server.output().stdout);
  const pid = server.child.pid as number;
  const workers = [Number(greeting[1]), Number(greeting[2])];
  assert.deepEqual(childPids(pid).sort(), [...workers].sort());
  const search = `${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0`;
  for (let i = 0; i < 6; i += 1) assertReply(await get(search), 200, { anzahl: 6, buchungen: [] });

  // Killed at once (it used to stop the whole service when a worker died within 2 s).
  process.kill(workers[0] as number, 'SIGKILL');
  const replaced = new RegExp(
    String.raw`^${TIME} worker ${workers[0]} ended \(signal SIGKILL\); started worker (\d+) \(replacement 1 of 5 allowed within 60 s\)$`,
    'm',
  );
  await until(() => replaced.test(server.output().stderr) && childPids(pid).length === 2, 'the replacement');
  const replacement = Number(replaced.exec(server.output().stderr)?.[1]);
  assert.deepEqual(childPids(pid).sort(), [workers[1] as number, replacement].sort());
  // Connections the primary handed to the dead worker just before it died are lost with it;
  // a client's timeout and retry covers that. Let the new worker listen first.
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let i = 0; i < 6; i += 1) assertReply(await get(search), 200, { anzahl: 6, buchungen: [] });

  const stopped = await server.stop('SIGTERM');
  assert.equal(stopped.code, 0);
});

test('--workers: after 5 replacements within a minute the next death stops the service with one line', async (t) => {
  const server = await start(t, ['--demo', '--workers', '2']);
  const pid = server.child.pid as number;
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  for (let n = 1; n <= 6; n += 1) {
    const victim = childPids(pid)[0] as number;
    process.kill(victim, 'SIGKILL');
    if (n <= 5) {
      const line = new RegExp(
        String.raw`^${TIME} worker ${victim} ended \(signal SIGKILL\); started worker \d+ \(replacement ${n} of 5`,
        'm',
      );
      await until(() => line.test(server.output().stderr) && childPids(pid).length === 2, `replacement ${n}`);
    }
  }
  assert.equal(await exited, 1);
  const last = server.output().stderr.trimEnd().split('\n').pop() as string;
  assert.match(
    last,
    new RegExp(
      String.raw`^${TIME} booking-search-server: worker \d+ ended \(signal SIGKILL\); 5 workers were already replaced within 60 s, stopping$`,
    ),
  );
});

test('--workers with a port in use ends with one line, not one per worker', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  assertFails(
    await run(['--demo', '--workers', '3', '--port', String(port)]),
    1,
    `booking-search-server: port ${port} on 127.0.0.1 is already in use: stop the program that listens there, or choose another port`,
  );
  assertFails(
    await run(['--db', join(tempDir(t), 'fehlt.sqlite'), '--workers', '2']),
    1,
    /^booking-search-server: cannot open database .*fehlt\.sqlite: no such file$/,
  );
  const foreign = join(databaseDir(t), 'fremd.sqlite');
  new Database(foreign).exec('CREATE TABLE buchungen (id INTEGER PRIMARY KEY)').close();
  assertFails(
    await run(['--db', foreign, '--workers', '2']),
    1,
    /^booking-search-server: .*fremd\.sqlite does not fit the schema: table or view 'entries' is missing; /,
  );
  assertFails(
    await run(['--demo', '--workers', '2', '--base-path', 'kasse']),
    2,
    /^booking-search-server: --base-path must be a path such as \/kasse .*; use \/kasse instead \(see --help\)$/,
  );
});
