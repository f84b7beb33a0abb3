// Reloads in order: SIGHUPs that come while a reload runs (two `systemctl reload` in a row,
// whose ExecReload returns at once) end with the last file served, a log whose last line
// says what was applied, and nothing a removed or replaced book held still open.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN, cleanEnv, EVENT_WAIT_MS, type Running, run, start, TIME, USER, waitFor } from './support/cli-helpers.js';
import {
  assertReply,
  basicAuth,
  buildDatabase,
  databaseDir,
  request,
  statusAnswer,
  tempDir,
} from './support/helpers.js';

const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
const NOT_FOUND = { fehler: 'Nicht gefunden.', code: 'not_found' };
const RELOADED = /SIGHUP: configuration re-read from /;
const ALICE = { headers: { authorization: basicAuth('alice', 'a-geheim') } };
const BOB = { headers: { authorization: basicAuth('bob', 'b-geheim') } };

/** A book's section: its name, file and users (`''`: no users line). */
type Book = [name: string, db: string, users: string];

interface Office {
  config: string;
  /** Book x's file, and ten more copies of it (b0 … b9), and y's. */
  x: string;
  ten: string[];
  y: string;
  write(books: readonly Book[]): void;
}

function office(t: TestContext): Office {
  const dir = tempDir(t);
  const x = realpathSync(buildDatabase(t));
  const data = realpathSync(databaseDir(t));
  const copy = (name: string): string => {
    const file = join(data, `${name}.sqlite`);
    copyFileSync(x, file);
    return file;
  };
  const ten = Array.from({ length: 10 }, (_, i) => copy(`b${i}`));
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, 'alice:a-geheim\nbob:b-geheim\n', { mode: 0o600 });
  const config = join(dir, 'books.conf');
  const write = (books: readonly Book[]): void => {
    const sections = books.map(
      ([name, db, users]) =>
        `[book ${name}]\ndb = ${db}\nbase-path = /${name}\n${users === '' ? '' : `users = ${users}\n`}`,
    );
    // Whole or not at all, as an editor saves it: a reload never reads half a file.
    writeFileSync(`${config}.new`, [`credentials-file = ${credentials}`, '', ...sections].join('\n'), { mode: 0o600 });
    renameSync(`${config}.new`, config);
  };
  return { config, x, ten, y: copy('y'), write };
}

/** Writes `first` and sends SIGHUP, then 5 ms later writes `second` and sends SIGHUP again. */
async function twoReloads(cli: Running, o: Office, first: readonly Book[], second: readonly Book[]): Promise<void> {
  o.write(first);
  cli.child.kill('SIGHUP');
  await new Promise((resolve) => setTimeout(resolve, 5));
  o.write(second);
  cli.child.kill('SIGHUP');
}

/** What process `pid` holds open of `files` (or of their -wal, -shm and -journal files). */
function openOf(pid: number | undefined, files: readonly string[]): string[] {
  const fds = `/proc/${pid}/fd`;
  return readdirSync(fds).flatMap((fd) => {
    let target: string;
    try {
      target = readlinkSync(join(fds, fd));
    } catch {
      return []; // closed meanwhile
    }
    return files.some((file) => target === file || target.startsWith(`${file}-`)) ? [target] : [];
  });
}

/** The SIGHUP lines of the log since `mark` (a length of stderr), without their times. */
function reloadLines(cli: Running, mark: number): string[] {
  return cli
    .output()
    .stderr.slice(mark)
    .split('\n')
    .filter((line) => RELOADED.test(line))
    .map((line) => line.replace(new RegExp(`^${TIME} `), ''));
}

/** Waits for `pattern` in what the log says after `mark`. */
function waitSince(cli: Running, mark: number, pattern: RegExp): Promise<void> {
  return waitFor(() => cli.output().stderr.slice(mark), pattern);
}

// Two signals this close may reach the process as one (the kernel keeps one SIGHUP
// pending), which no order can get wrong: each test tries three times.
const ROUNDS = 3;

test('two SIGHUPs 5 ms apart, the first adding ten books, the second removing them and a user: the second file is what is served, and the last line of the log says so', async (t) => {
  const o = office(t);
  const x: Book = ['x', o.x, 'alice, bob'];
  const ten = o.ten.map((db, i): Book => [`b${i}`, db, 'alice']);
  o.write([x]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const applied = new RegExp(`SIGHUP: configuration re-read from ${o.config}: 1 book[:,] `);
  for (let round = 1; round <= ROUNDS; round += 1) {
    assertReply(await request(`${cli.origin}/x/api/v1/status`, BOB), 200, statusAnswer('x'));
    const mark = cli.output().stderr.length;
    await twoReloads(cli, o, [x, ...ten], [['x', o.x, 'alice']]);
    await waitSince(cli, mark, applied);
    // Time for anything else to be applied, as an older reload still running would be.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    assertReply(await request(`${cli.origin}/x/api/v1/status`, BOB), 401, UNAUTHORIZED);
    assertReply(await request(`${cli.origin}/x/api/v1/status`, ALICE), 200, statusAnswer('x'));
    for (const [name] of ten) {
      assertReply(await request(`${cli.origin}/${name}/api/v1/status`, ALICE), 404, NOT_FOUND);
    }
    assert.deepEqual(openOf(cli.child.pid, o.ten), [], 'nothing of the removed books is open');
    assert.ok(openOf(cli.child.pid, [o.x]).length > 0, 'x is served from its open file');
    assert.match(reloadLines(cli, mark).at(-1) ?? '', applied, 'the last line says what was applied');

    const back = cli.output().stderr.length;
    o.write([x]);
    cli.child.kill('SIGHUP');
    await waitSince(cli, back, /: 1 book: users or secrets changed for x[;\n]/);
  }
});

test('two SIGHUPs 5 ms apart that both add book y (the first with ten more): y is opened once, and once y is removed none of its file stays open', async (t) => {
  const o = office(t);
  const x: Book = ['x', o.x, 'alice, bob'];
  const y: Book = ['y', o.y, 'alice'];
  const ten = o.ten.map((db, i): Book => [`b${i}`, db, 'alice']);
  o.write([x]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  for (let round = 1; round <= ROUNDS; round += 1) {
    const mark = cli.output().stderr.length;
    // The ten books make the first reload the slower one, still opening when the second starts.
    await twoReloads(cli, o, [x, ...ten, y], [x, y]);
    await waitSince(cli, mark, new RegExp(`SIGHUP: configuration re-read from ${o.config}: 2 books[:,] `));
    assertReply(await request(`${cli.origin}/y/api/v1/status`, ALICE), 200, statusAnswer('y'));

    const removal = cli.output().stderr.length;
    o.write([x]);
    cli.child.kill('SIGHUP');
    await waitSince(cli, removal, /: 1 book: removed y[;\n]/);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assertReply(await request(`${cli.origin}/y/api/v1/status`, ALICE), 404, NOT_FOUND);
    assert.deepEqual(openOf(cli.child.pid, [o.y, ...o.ten]), [], 'nothing of the removed books is open');
    assert.equal(
      reloadLines(cli, removal).at(-1),
      `SIGHUP: configuration re-read from ${o.config}: 1 book: removed y; credentials re-read: 2 user(s)`,
    );
  }
});

test('two POST /-/reload 5 ms apart, the file changed between them: both are taken (202) and the second file is what is served', async (t) => {
  const o = office(t);
  const x: Book = ['x', o.x, 'alice, bob'];
  o.write([x]);
  const cli = await start(t, ['--config', o.config, '--admin-port', '0'], cleanEnv());
  await waitFor(() => cli.output().stdout, /admin listener on http:\/\/127\.0\.0\.1:\d+\//);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1] as string;
  const mark = cli.output().stderr.length;
  o.write([x, ['y', o.y, 'alice']]);
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  await new Promise((resolve) => setTimeout(resolve, 5));
  o.write([['x', o.x, 'alice']]);
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  const applied = new RegExp(`POST /-/reload: configuration re-read from ${o.config}: 1 book[:,] `);
  await waitSince(cli, mark, applied);
  // Time for anything else to be applied, as an older reload still running would be.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assertReply(await request(`${cli.origin}/x/api/v1/status`, BOB), 401, UNAUTHORIZED);
  assertReply(await request(`${cli.origin}/x/api/v1/status`, ALICE), 200, statusAnswer('x'));
  assertReply(await request(`${cli.origin}/y/api/v1/status`, ALICE), 404, NOT_FOUND);
});

// The lines named the file only, while /ready, the state metric and its alert name the book.
test("a book's state lines begin with its name, as /ready names it, and a book added by SIGHUP gets the line each book gets at the start; --db's lines name a book only when --name gives it", async (t) => {
  const o = office(t);
  const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  o.write([['x', o.x, 'alice']]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const mark = cli.output().stderr.length;
  o.write([
    ['x', o.x, 'alice'],
    ['y', o.y, 'bob'],
  ]);
  cli.child.kill('SIGHUP');
  // On stdout, as the start's.
  await waitFor(
    () => cli.output().stdout,
    new RegExp(`^${TIME} book y: ${escaped(cli.origin)}/y/api/v1/ \\(${escaped(o.y)}\\)$`, 'm'),
  );
  unlinkSync(o.x);
  await waitSince(
    cli,
    mark,
    new RegExp(`^${TIME} book x: database ${escaped(o.x)} is gone; searches answer 500 until it is back$`, 'm'),
  );
  const [first, second] = o.ten;
  const alone = await start(t, ['--db', first as string], cleanEnv(USER));
  const named = await start(t, ['--db', second as string, '--name', 'kasse'], cleanEnv(USER));
  unlinkSync(first as string);
  unlinkSync(second as string);
  const gone = (file: string): string => `database ${escaped(file)} is gone; searches answer 500 until it is back$`;
  await waitFor(() => alone.output().stderr, new RegExp(`^${TIME} ${gone(first as string)}`, 'm'));
  await waitFor(() => named.output().stderr, new RegExp(`^${TIME} book kasse: ${gone(second as string)}`, 'm'));
});

/** Whether process `pid` has a listener for SIGHUP (Linux: bit 1 of SigCgt in /proc/PID/status). */
function catchesSighup(pid: number): boolean {
  try {
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return caught !== undefined && (BigInt(`0x${caught}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/**
 * The command started with `args` (the environment's credentials), its output as it comes, and
 * `answered`: once a SIGHUP sent before it served is answered by its reload line after the
 * listening line (the service never ending meanwhile), SIGTERM ends it with 0.
 */
function spawnCli(t: TestContext, args: string[]) {
  const child = spawn(process.execPath, args, { env: cleanEnv(USER), stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed = once(child, 'close');
  const answered = async (): Promise<void> => {
    const deadline = Date.now() + EVENT_WAIT_MS;
    while (!/SIGHUP: credentials come from the environment; nothing to re-read/.test(output)) {
      assert.ok(child.exitCode === null && child.signalCode === null, `the service ended: ${output}`);
      assert.ok(Date.now() < deadline, output);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.match(output, /listening on [^\n]*\n(?:.*\n)*.*SIGHUP: /);
    child.kill('SIGTERM');
    const [code, signal] = await closed;
    assert.deepEqual([code, signal], [0, null], output);
  };
  return { child, output: () => output, answered };
}

// A `systemctl reload` right after a start (Type=simple: started at the fork) comes while the
// books are opened: kept, and answered once the service serves, not the end of the process.
for (const workers of ['1', '2']) {
  test(`a SIGHUP during the start is answered once the service serves, not its end (--workers ${workers})`, async (t) => {
    const { child, output, answered } = spawnCli(t, [
      BIN,
      '--db',
      buildDatabase(t),
      '--port',
      '0',
      '--workers',
      workers,
    ]);
    while (!catchesSighup(child.pid ?? 0)) {
      assert.equal(child.exitCode, null, output());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.doesNotMatch(output(), /listening on/, 'the SIGHUP comes before the service listens');
    child.kill('SIGHUP');
    await answered();
  });
}

/** A module for `node --import` that holds the CLI's code from loading (bin/cli.ts) until `release` exists. */
function holdBeforeCli(dir: string, release: string): string {
  const hook = join(dir, 'hold-before-cli.mjs');
  writeFileSync(
    hook,
    `import { existsSync, writeSync } from 'node:fs';
import { registerHooks } from 'node:module';
const asleep = new Int32Array(new SharedArrayBuffer(4));
registerHooks({
  load(url, context, next) {
    if (url.endsWith('/dist/bin/cli.js')) {
      writeSync(2, 'held before cli.js\\n');
      const end = Date.now() + 30000;
      while (!existsSync(${JSON.stringify(release)}) && Date.now() < end) Atomics.wait(asleep, 0, 0, 5);
    }
    return next(url, context);
  },
});
`,
  );
  return hook;
}

// The launcher keeps a SIGHUP from its first lines: one while the command's code loads, held
// here before bin/cli.ts (which keeps them too, once it runs), is answered, not the end.
for (const workers of ['1', '2']) {
  test(`a SIGHUP while the launcher loads the command's code is answered once the service serves (--workers ${workers})`, async (t) => {
    const dir = tempDir(t);
    const release = join(dir, 'release');
    const args = ['--import', holdBeforeCli(dir, release), BIN, '--db', buildDatabase(t), '--port', '0'];
    const { child, output, answered } = spawnCli(t, [...args, '--workers', workers]);
    await waitFor(output, /^held before cli\.js$/m);
    child.kill('SIGHUP');
    writeFileSync(release, '');
    await answered();
  });
}

test('a new credentials-file path in the configuration waits for the next start, as the log says: a reload reads the running file again', async (t) => {
  const o = office(t);
  o.write([['x', o.x, 'alice, bob']]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const running = /^credentials-file = (.*)$/m.exec(readFileSync(o.config, 'utf8'))?.[1] ?? '';
  const replace = (file: string, text: string): void => {
    writeFileSync(`${file}.new`, text, { mode: 0o600 });
    renameSync(`${file}.new`, file);
  };
  const other = `${running}2`;
  replace(other, 'alice:a-neu\nbob:b-geheim\n');
  replace(
    o.config,
    readFileSync(o.config, 'utf8').replace(`credentials-file = ${running}`, `credentials-file = ${other}`),
  );
  let mark = cli.output().stderr.length;
  cli.child.kill('SIGHUP');
  await waitSince(cli, mark, /SIGHUP: credentials-file changed: /);
  // One statement, naming the file read and the one the next start reads.
  const said = cli.output().stderr.slice(mark);
  assert.ok(said.includes(`; credentials re-read from ${running}: 2 user(s)\n`), said);
  const warning = `SIGHUP: credentials-file changed: the configuration's ${other} applies at the next start; until then ${running} is read\n`;
  assert.ok(said.includes(warning), said);
  assert.doesNotMatch(said, /takes effect at the next start/);
  const status = `${cli.origin}/x/api/v1/status`;
  const as = (user: string, password: string) => ({ headers: { authorization: basicAuth(user, password) } });
  assertReply(await request(status, ALICE), 200, statusAnswer('x'));
  assertReply(await request(status, as('alice', 'a-neu')), 401, UNAUTHORIZED);

  replace(running, 'alice:a-geheim\nbob:b-neu\n');
  mark = cli.output().stderr.length;
  cli.child.kill('SIGHUP');
  await waitSince(cli, mark, /credentials re-read from \S+\/credentials: 2 user\(s\), secrets changed for bob/);
  assertReply(await request(status, as('bob', 'b-neu')), 200, statusAnswer('x'));
});

test('credentials from the environment, a credentials-file line added to the configuration: the variables stay until the next start, and the other changes are applied', async (t) => {
  const o = office(t);
  const withoutFile = (): string => readFileSync(o.config, 'utf8').replace(/^credentials-file = .*$/m, '');
  o.write([['x', o.x, 'alice']]);
  const named = /^credentials-file = (.*)$/m.exec(readFileSync(o.config, 'utf8'))?.[1] ?? '';
  writeFileSync(o.config, withoutFile(), { mode: 0o600 });
  const cli = await start(
    t,
    ['--config', o.config],
    cleanEnv({ BOOKING_SEARCH_USER: 'alice', BOOKING_SEARCH_PASSWORD: 'a-env' }),
  );
  // The file names the credentials file again, and a book y for alice.
  o.write([
    ['x', o.x, 'alice'],
    ['y', o.y, 'alice'],
  ]);
  const mark = cli.output().stderr.length;
  cli.child.kill('SIGHUP');
  await waitSince(cli, mark, /SIGHUP: credentials-file added: /);
  const said = cli.output().stderr.slice(mark);
  assert.match(said, /SIGHUP: configuration re-read from .*: 2 books: added y\n/);
  assert.ok(
    said.includes(
      `SIGHUP: credentials-file added: the configuration's ${named} applies at the next start, once BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD are unset (both would be credentials given twice); until then they are used\n`,
    ),
    said,
  );
  const as = (password: string) => ({ headers: { authorization: basicAuth('alice', password) } });
  assertReply(await request(`${cli.origin}/y/api/v1/status`, as('a-env')), 200, statusAnswer('y'));
  assertReply(await request(`${cli.origin}/y/api/v1/status`, ALICE), 401, UNAUTHORIZED);
});

// The credentials file that applies is the running one until the next start: a reload never
// reads the one the configuration names now, so nothing wrong with it (or its absence, or
// the line's) keeps the other changes of the file from being applied. One line says what the
// next start reads; a reload that cannot read the running file says it is the running one.
const NEXT_START = {
  changed:
    "SIGHUP: credentials-file changed: the configuration's {other} applies at the next start; until then {running} is read\n",
  removed:
    'SIGHUP: credentials-file removed: the configuration names no credentials file, so the next start needs --credentials-file FILE (or, for a single user, BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD); until then {running} is read\n',
};
const GONE = {
  changed:
    "cannot read credentials file {running}: no such file; that is the running credentials file, and the configuration's {other} applies at the next start: restart to apply it\n",
  removed:
    'cannot read credentials file {running}: no such file; that is the running credentials file, and the configuration names no credentials file, so the next start needs --credentials-file FILE (or, for a single user, BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD)\n',
};
for (const [what, other, line, y] of [
  ['a new path to a file that does not exist', undefined, 'credentials-file = {other}', 'alice'],
  [
    "a new path to a file without a user of the books (who is in the running file's)",
    'alice:a-neu\n',
    'credentials-file = {other}',
    'bob',
  ],
  ['no credentials-file line any more', undefined, '', 'alice, bob'],
] as const) {
  test(`a reload with ${what} adds book y, checked against the running credentials file, and warns once`, async (t) => {
    const o = office(t);
    o.write([['x', o.x, 'alice, bob']]);
    const cli = await start(t, ['--config', o.config], cleanEnv());
    const running = /^credentials-file = (.*)$/m.exec(readFileSync(o.config, 'utf8'))?.[1] ?? '';
    if (other !== undefined) writeFileSync(`${running}2`, other, { mode: 0o600 });
    o.write([
      ['x', o.x, 'alice, bob'],
      ['y', o.y, y],
    ]);
    const text = readFileSync(o.config, 'utf8').replace(
      /^credentials-file = .*$/m,
      line.replace('{other}', `${running}2`),
    );
    writeFileSync(`${o.config}.new`, text, { mode: 0o600 });
    renameSync(`${o.config}.new`, o.config);
    const mark = cli.output().stderr.length;
    cli.child.kill('SIGHUP');
    await waitSince(cli, mark, /SIGHUP: (keeping|credentials-file (changed|removed))/);
    const said = cli.output().stderr.slice(mark);
    assert.doesNotMatch(said, /keeping the running configuration/);
    assert.ok(said.includes(`: 2 books: added y; credentials re-read from ${running}: 2 user(s)\n`), said);
    const fill = (text: string): string => text.replace('{other}', `${running}2`).replace('{running}', running);
    const how = line === '' ? 'removed' : 'changed';
    assert.equal(said.split(fill(NEXT_START[how])).length, 2, said);
    assert.doesNotMatch(said, /takes effect at the next start/);
    const status = `${cli.origin}/y/api/v1/status`;
    for (const user of y.split(', ')) {
      assertReply(await request(status, user === 'bob' ? BOB : ALICE), 200, statusAnswer('y'));
    }
    const neu = { headers: { authorization: basicAuth('alice', 'a-neu') } };
    assertReply(await request(`${cli.origin}/x/api/v1/status`, neu), 401, UNAUTHORIZED);

    // A user in neither file: the warning names the file the books were checked against, and
    // no one logs in to y, left without a user.
    writeFileSync(`${o.config}.new`, text.replace(/users = .*\n$/, 'users = carol\n'), { mode: 0o600 });
    renameSync(`${o.config}.new`, o.config);
    const again = cli.output().stderr.length;
    cli.child.kill('SIGHUP');
    await waitSince(cli, again, /warning: .*carol.*\n/);
    const warning = `: user 'carol' is not in the credentials of ${running} (running until the next start): book y names no other, so no one can log in to it (/ready names it) until one is\n`;
    assert.ok(cli.output().stderr.slice(again).includes(warning), cli.output().stderr.slice(again));
    assert.match(cli.output().stderr.slice(again), /: 2 books: users or secrets changed for y;/);
    assertReply(await request(status, ALICE), 401, UNAUTHORIZED);

    // The running file removed too: a reload is refused, saying which file that is and what a restart reads.
    unlinkSync(running);
    const gone = cli.output().stderr.length;
    cli.child.kill('SIGHUP');
    await waitSince(cli, gone, /SIGHUP: keeping the running configuration: .*\n/);
    const told = cli.output().stderr.slice(gone);
    assert.ok(told.includes(`SIGHUP: keeping the running configuration: ${fill(GONE[how])}`), told);
  });
}

// A book added by SIGHUP was served without the warning the start says of the same file.
test("a book added by SIGHUP gets the warning about its file that the start says: root serving another user's book", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give files to another user (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const o = office(t);
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const theirs = join(dir, 'o.sqlite');
  copyFileSync(o.x, theirs);
  chownSync(dir, nobody, nobody);
  chownSync(theirs, nobody, nobody);
  const warning = `warning: database ${theirs} belongs to user nobody (${nobody}), but this service runs as root`;
  const books: Book[] = [['x', o.x, 'alice']];
  o.write(books);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  o.write([...books, ['o', theirs, 'alice']]);
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: configuration re-read from .*: 2 books: added o/);
  assertReply(await request(`${cli.origin}/o/api/v1/status`, ALICE), 200, statusAnswer('o'));
  const said = (await cli.stop()).stderr;
  assert.ok(said.includes(warning), said);
  // The start says it of the same configuration.
  const again = await start(t, ['--config', o.config], cleanEnv());
  assert.ok((await again.stop()).stderr.includes(warning));
});

test('a book that names no users beside books that do is warned of, at the start and by the reload that makes it so; books that all name none are not', async (t) => {
  const o = office(t);
  const open = (name: string): string =>
    `warning: book ${name} names no users: every user of the credentials may search it, those of the other books too; give its section a users = line`;
  o.write([
    ['x', o.x, 'alice'],
    ['y', o.y, ''],
  ]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  assert.ok(cli.output().stderr.includes(open('y')), cli.output().stderr);
  assert.ok(!cli.output().stderr.includes(open('x')));
  // As documented: such a book is every user's.
  assertReply(await request(`${cli.origin}/y/api/v1/status`, ALICE), 200, statusAnswer('y'));

  // y gets its users, then x loses its line: said once, of x, by that reload.
  o.write([
    ['x', o.x, 'alice'],
    ['y', o.y, 'bob'],
  ]);
  let mark = cli.output().stderr.length;
  cli.child.kill('SIGHUP');
  await waitSince(cli, mark, /SIGHUP: configuration re-read from .*\n/);
  assert.doesNotMatch(cli.output().stderr.slice(mark), /names no users/);
  o.write([
    ['x', o.x, ''],
    ['y', o.y, 'bob'],
  ]);
  mark = cli.output().stderr.length;
  cli.child.kill('SIGHUP');
  await waitSince(cli, mark, /SIGHUP: configuration re-read from .*\n/);
  const said = cli.output().stderr.slice(mark);
  assert.equal(said.split(open('x')).length, 2, said);
  assertReply(await request(`${cli.origin}/x/api/v1/status`, BOB), 200, statusAnswer('x'));

  // All open: nothing said; then another book names its users, which makes x so: said of x.
  const reload = async (books: Book[]): Promise<string> => {
    o.write(books);
    const from = cli.output().stderr.length;
    cli.child.kill('SIGHUP');
    await waitSince(cli, from, /SIGHUP: configuration re-read from .*\n/);
    return cli.output().stderr.slice(from);
  };
  assert.doesNotMatch(
    await reload([
      ['x', o.x, ''],
      ['y', o.y, ''],
    ]),
    /names no users/,
  );
  const made = await reload([
    ['x', o.x, ''],
    ['y', o.y, 'alice'],
  ]);
  assert.equal(made.split(open('x')).length, 2, made);
  await cli.stop();
  // check says it of the same file, as the start would.
  const checked = await run(['check', '--config', o.config], cleanEnv());
  assert.ok(checked.stdout.includes(`\n${open('x')}\n`), checked.stdout);

  // Every book open to every user: the office's choice, not a line lost.
  o.write([
    ['x', o.x, ''],
    ['y', o.y, ''],
  ]);
  const all = await start(t, ['--config', o.config], cleanEnv());
  assert.doesNotMatch((await all.stop()).stderr, /names no users/);
});
