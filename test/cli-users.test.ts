// The CLI as an admin runs it beside a live application: the application as its own user
// (directory 0750, file 0640), the service as another user in the application's group.
// A database that cannot be read *yet* — WAL without -wal/-shm, a hot journal — is waited
// for and served once the application has acted; nothing is ever created beside it; the
// backup commands of docs/operations.md get every booking. These tests need root to create the
// users and are skipped otherwise (CI runs as root).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  assertFails,
  cleanEnv,
  directoryRefusal,
  type Launcher,
  makeCertificate,
  run,
  start,
  USER,
  until,
  waitFor,
} from './support/cli-helpers.js';
import { blocksAfter } from './support/doc-snippets.js';
import { assertReply, fixtureSql, get, request, statusAnswer } from './support/helpers.js';
import {
  type Application,
  applicationDirectory,
  asUser,
  createUsers,
  IS_ROOT,
  listing,
  NOT_ROOT_REASON,
  nodeForEveryUser,
  startApplication,
  type Users,
} from './support/linux-users.js';

const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0';
const STATUS = statusAnswer();
// The 500 with Retry-After: the file cannot be read now.
const DATABASE_UNAVAILABLE = { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'database_unavailable' };
const users: Users | undefined = IS_ROOT ? createUsers() : undefined;

function setup(): { users: Users; asService: Launcher } {
  // Every test runs: without root it fails here, saying why (like a missing browser).
  assert.ok(users !== undefined, NOT_ROOT_REASON);
  const bin = join(users.runtime, 'bin', 'booking-search-server.js');
  return { users, asService: (args) => asUser(users.service.name, [bin, ...args]) };
}

/** The database, created by the application as its user, which then exits cleanly. */
async function createDatabase(
  users: Users,
  dir: string,
  journal: 'wal' | 'delete',
  name = 'kasse.sqlite',
): Promise<string> {
  const file = join(dir, name);
  const app = startApplication(users, file);
  assert.equal(await app.send(`create ${journal}`), 'created');
  await app.close();
  return file;
}

/**
 * Every name that appears in `dir` and the owners of each, looked at every 10 ms until
 * the test ends: "nothing new, ever" includes a file that exists for a moment.
 */
function watchDirectory(t: { after: (fn: () => void) => void }, dir: string): Map<string, Set<number>> {
  const seen = new Map<string, Set<number>>();
  const look = (): void => {
    for (const name of listing(dir)) {
      try {
        const { uid } = statSync(join(dir, name));
        seen.set(name, (seen.get(name) ?? new Set()).add(uid));
      } catch {
        // Deleted between the listing and the stat.
      }
    }
  };
  look();
  const timer = setInterval(look, 10);
  t.after(() => clearInterval(timer));
  return seen;
}

function stderrLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

test('WAL after the application exited cleanly: a directory the service could write is refused; in a 0750 one it starts, waits, creates nothing; served once the application opens the file', async (t) => {
  const { users, asService } = setup();
  // 0770: the service's group may write the directory, so SQLite could create files in it.
  const dir = applicationDirectory(users, users.workDir(), 0o770);
  const file = await createDatabase(users, dir, 'wal');
  assert.deepEqual(listing(dir), ['kasse.sqlite'], 'SQLite deleted -wal and -shm at the clean exit');
  const seen = watchDirectory(t, dir);
  assertFails(
    await run(['--db', file, '--port', '0'], cleanEnv(USER), asService),
    1,
    `booking-search-server: ${directoryRefusal(file, dir, `${users.service.name} (uid ${users.service.uid})`, `${users.app.name} (uid ${users.app.uid})`)}`,
  );
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
  chmodSync(dir, 0o750);

  const server = await start(t, ['--db', file], cleanEnv(USER), asService);
  assertReply(await get(`${server.api}status`), 200, STATUS);
  const waiting = await get(`${server.api}${SEARCH}`);
  assertReply(waiting, 500, DATABASE_UNAVAILABLE);
  assert.equal(waiting.headers['retry-after'], '1');
  // Said once, not every second.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const lines = stderrLines(server.output().stderr);
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.match(
    lines[0] as string,
    /^\d{4}-\d\d-\d\dT\S+Z database \S+ cannot be read yet: it is in WAL mode and kasse\.sqlite-wal or kasse\.sqlite-shm is missing .*this service never creates files beside the database \(SQLITE_READONLY_DIRECTORY\): start the application before this service.*; searches answer 500 with Retry-After until it can$/,
  );
  assert.deepEqual(listing(dir), ['kasse.sqlite']);

  // The application starts and keeps the file open: served within a few seconds.
  const app = startApplication(users, file);
  assert.equal(await app.send('open'), '20');
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served', 3_000);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  assert.match(server.output().stderr, /Z database \S+ can be read now; serving it$/m);
  assert.equal(await app.send('insert 3'), 'inserted');
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 9, buchungen: [] });

  // The application exits cleanly while the service reads: -wal and -shm stay, still the application's.
  await app.close();
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 9, buchungen: [] });
  assert.equal((await server.stop()).code, 0);

  // It can still write after the service stopped.
  const again = startApplication(users, file);
  assert.equal(await again.send('open'), '23');
  assert.equal(await again.send('insert 1'), 'inserted');
  await again.close();
  assert.deepEqual([...seen.keys()].sort(), ['kasse.sqlite', 'kasse.sqlite-shm', 'kasse.sqlite-wal']);
  for (const [name, owners] of seen)
    assert.deepEqual([...owners], [users.app.uid], `${name} only ever the application's`);
});

test("the admin listener's /ready flips to 503 and back as a WAL file's application stops and starts: waiting until it first opens the file, serving while the service holds it, waiting again after a restore, serving once it opens that", async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'wal');
  const server = await start(t, ['--db', file, '--admin-port', '0'], cleanEnv(USER), asService);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  type Ready = { ready: boolean; books: { name: string; state: string; reason?: string }[] };
  const ready = async (): Promise<{ status: number; body: Ready }> => {
    const reply = await request(`${admin}/ready`);
    return { status: reply.status, body: JSON.parse(reply.body) as Ready };
  };
  const waiting = await ready();
  assert.equal(waiting.status, 503);
  assert.equal(waiting.body.ready, false);
  assert.equal(waiting.body.books[0]?.state, 'waiting');
  assert.match(
    waiting.body.books[0]?.reason ?? '',
    /^it is in WAL mode and kasse\.sqlite-wal or kasse\.sqlite-shm is missing /,
  );
  assert.equal((await request(`${admin}/live`)).status, 200, 'alive all the while: /status answers');
  assert.match(
    (await request(`${admin}/metrics`)).body,
    /^booking_search_book_state\{book="booking-search-server",state="waiting"\} 1$/m,
  );

  // The application starts: ready within a few seconds.
  const app = startApplication(users, file);
  assert.equal(await app.send('open'), '20');
  await until(async () => (await ready()).status === 200, '/ready 200 once the application has the file open', 3_000);
  // It stops: the service's own connection keeps -wal and -shm, so it still serves, and says so.
  await app.close();
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  assert.equal((await ready()).status, 200);

  // A restore while the application is stopped (docs/operations.md, Backups): the old -wal and
  // -shm removed, the backup renamed into place. The service follows the file and waits again.
  const restore = startApplication(users, join(dir, 'restore.sqlite'));
  assert.equal(await restore.send('create wal'), 'created');
  await restore.close();
  for (const name of ['kasse.sqlite-wal', 'kasse.sqlite-shm']) rmSync(join(dir, name));
  renameSync(join(dir, 'restore.sqlite'), file);
  await until(async () => (await ready()).status === 503, '/ready 503 after the restore', 3_000);
  assert.equal((await ready()).body.books[0]?.state, 'waiting');
  const started = startApplication(users, file);
  assert.equal(await started.send('open'), '20');
  await until(
    async () => (await ready()).status === 200,
    '/ready 200 once the application opens the restored file',
    3_000,
  );
  await started.close();
});

// The same file, its group's read given back, was said "replaced; serving the new file" and
// counted as a replacement.
test('the served file made unreadable (chmod g-r) and readable again (chmod g+r): said so, served, not counted as another file', async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const server = await start(t, ['--db', file, '--admin-port', '0'], cleanEnv(USER), asService);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  // A schema change while the service may not read the file: opened again, it cannot be.
  chmodSync(file, 0o600);
  const db = new Database(file);
  db.exec('CREATE TABLE notiz (text TEXT)');
  db.close();
  const denied = /cannot open database .*: permission denied: .*chmod g\+r .*; searches answer 500 until/;
  await get(`${server.api}${SEARCH}`);
  await until(() => denied.test(server.output().stderr), 'the log says it cannot be read', 5_000);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 500);
  chmodSync(file, 0o640);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served again', 5_000);
  const lines = stderrLines(server.output().stderr).map((line) => line.replace(/^\S+ /, ''));
  assert.equal(lines.at(-1), `database ${file} can be read now; serving it`);
  assert.doesNotMatch(server.output().stderr, /was replaced/);
  assert.match(
    (await request(`${admin}/metrics`)).body,
    /^booking_search_book_replacements_total\{book="booking-search-server"\} 0$/m,
  );
  await server.stop();
});

// A mode change alone leaves the file what it was: the connection reads on through what it
// opened, and so does the read of a book that no client searches, every second. It was said
// nowhere, and the next restart or replacement failed: now it is said once, with check's fix.
test('the served file made unreadable (chmod 0600) and readable again (chmod 0640), nothing else changed: served throughout, /ready 200, one warning with the fix check gives, one line when it can be read again', async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  chmodSync(file, 0o600);
  const denied = await run(['check', '--db', file], cleanEnv(USER), asService);
  const fix = /^Cannot check: (cannot open database .*: permission denied: .*)$/m.exec(denied.stdout)?.[1];
  assert.ok(fix?.includes('chmod g+r'), denied.stdout);
  chmodSync(file, 0o640);
  const server = await start(t, ['--db', file, '--admin-port', '0'], cleanEnv(USER), asService);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  for (const mode of [0o600, 0o640]) {
    chmodSync(file, mode);
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      const ready = await request(`${admin}/ready`);
      assert.equal(ready.status, 200, ready.body);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  const lines = stderrLines((await server.stop()).stderr).map((line) => line.replace(/^\S+ /, ''));
  assert.deepEqual(lines, [
    `${fix}; searches are answered from the file already open, but after a restart or the application's next replacement it is not served until it may be read`,
    `database ${file} can be read again: served as before, and a restart or a replacement can open it`,
  ]);
});

// The directory closed to the service's user was said "is gone; … until it is back", while
// /ready named the directory it may not enter and the fix: one reason, in one wording.
test("the served file's directory closed to the service's user (chmod 700): the log says what /ready says, the directory and its fix; served again once it is opened (chmod 750)", async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const server = await start(t, ['--db', file, '--admin-port', '0'], cleanEnv(USER), asService);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  chmodSync(dir, 0o700);
  await until(async () => (await request(`${admin}/ready`)).status === 503, '/ready 503', 5_000);
  const reason = (JSON.parse((await request(`${admin}/ready`)).body) as { books: { reason?: string }[] }).books[0]
    ?.reason;
  assert.match(reason ?? '', /: permission denied: .* may not enter directory .*chmod g\+rx /);
  await until(() => server.output().stderr.includes(reason ?? '\0'), 'the log says it', 5_000);
  assertReply(await get(`${server.api}${SEARCH}`), 500, {
    fehler: 'Interner Fehler bei der Buchungssuche.',
    code: 'search_failed',
  });
  chmodSync(dir, 0o750);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served again', 5_000);
  const lines = stderrLines((await server.stop()).stderr).map((line) => line.replace(/^\S+ /, ''));
  assert.deepEqual(lines, [
    `${reason}; searches answer 500 until a valid file is there`,
    `database ${file} can be read now; serving it`,
  ]);
});

// The file is opened again every second while it waits; /ready said "the file is being
// opened again" during each of those opens, and an admin polling it lost what to do.
test("/ready keeps a waiting book's reason while its file is opened again: every poll says what to do, until the file serves", async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'wal');
  const server = await start(t, ['--db', file, '--admin-port', '0'], cleanEnv(USER), asService);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  const reasons = new Set<string>();
  // Three looks at the file, each opening it again for at least 250 ms.
  const end = Date.now() + 3_500;
  while (Date.now() < end) {
    const reply = await request(`${admin}/ready`);
    assert.equal(reply.status, 503);
    const book = (JSON.parse(reply.body) as { books: { state: string; reason: string }[] }).books[0];
    assert.equal(book?.state, 'waiting', reply.body);
    reasons.add(book.reason);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(reasons.size, 1, JSON.stringify([...reasons]));
  assert.match(
    [...reasons][0] as string,
    /^it is in WAL mode and kasse\.sqlite-wal or kasse\.sqlite-shm is missing .*: start the application before this service/,
  );
  // A search meanwhile gets the 500 with Retry-After, every time.
  for (let i = 0; i < 10; i += 1) {
    const waiting = await get(`${server.api}${SEARCH}`);
    assertReply(waiting, 500, DATABASE_UNAVAILABLE);
    assert.equal(waiting.headers['retry-after'], '1');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const app = startApplication(users, file);
  assert.equal(await app.send('open'), '20');
  await until(
    async () => (await request(`${admin}/ready`)).status === 200,
    '/ready 200 once the application opens the file',
    3_000,
  );
  await app.close();
});

test('a hot journal left by a crashed writer: the 500 with Retry-After, one line saying the application must roll it back; check says the same; served once the application opened the file', async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const server = await start(t, ['--db', file], cleanEnv(USER), asService);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });

  const writer = startApplication(users, file);
  assert.equal(await writer.send('open'), '20');
  assert.equal(await writer.send('crash'), 'writing');
  writer.child.kill('SIGKILL');
  await new Promise((resolve) => writer.child.once('exit', resolve));
  // Hot: the journal's header is synced (non-zero magic) and pages of the write reached the file.
  assert.notDeepEqual(readFileSync(`${file}-journal`).subarray(0, 8), Buffer.alloc(8));

  for (let i = 0; i < 5; i += 1) {
    const reply = await get(`${server.api}${SEARCH}`);
    assertReply(reply, 500, DATABASE_UNAVAILABLE);
    assert.equal(reply.headers['retry-after'], '1');
  }
  assertReply(await get(`${server.api}status`), 200, STATUS);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const lines = stderrLines(server.output().stderr);
  assert.equal(lines.length, 1, JSON.stringify(lines));
  const explanation =
    /^\S+ database \S+ cannot be read yet: (.*); searches answer 500 with Retry-After until it can$/.exec(
      lines[0] as string,
    )?.[1];
  assert.match(
    explanation ?? '',
    /^kasse\.sqlite-journal is a hot journal, left by a write that was interrupted .*\(SQLITE_READONLY_ROLLBACK\): the application must open the file once to roll back the interrupted write/,
  );
  // The command to paste names the file's owner, whom the service's user is not.
  assert.ok(explanation?.includes(`(or, as its owner: sudo -u ${users.app.name} sqlite3 `), explanation);

  const checked = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(checked.code, 1);
  assert.match(checked.stdout, /^Journal: rollback journal \(WAL is off\); kasse\.sqlite-journal \d+ bytes/m);
  assert.equal(
    checked.stdout.split('\n').find((line) => line.startsWith('Cannot be read now: ')),
    `Cannot be read now: ${explanation}.`,
  );
  for (const text of [server.output().stderr, checked.stdout, checked.stderr])
    assert.doesNotMatch(text, /attempt to write/);

  const app = startApplication(users, file);
  assert.equal(await app.send('open'), '20', 'the interrupted write is rolled back');
  await app.close();
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served', 3_000);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  assert.match(server.output().stderr, /Z database \S+ can be read now; serving it$/m);
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
});

test("the hot journal's command, pasted as the application's user into a shell in its directory, rolls the write back, whatever the file's name (it was printed unquoted: a stray file 'Kasse' and a syntax error)", async () => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const name = "Kasse 2026's $HOME.sqlite";
  const file = await createDatabase(users, dir, 'delete', name);
  const writer = startApplication(users, file);
  assert.equal(await writer.send('open'), '20');
  assert.equal(await writer.send('crash'), 'writing');
  writer.child.kill('SIGKILL');
  await new Promise((resolve) => writer.child.once('exit', resolve));

  const checked = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(checked.code, 1, checked.stdout);
  // Said for the admin to run as the file's owner; run here as that user, as sudo would.
  const [, owner, pasted] =
    /^Cannot be read now: .*\(or, as its owner: sudo -u (\S+) (.*)\)\.$/m.exec(checked.stdout) ?? [];
  assert.equal(owner, users.app.name);
  assert.equal(pasted, `sqlite3 '${dir}/Kasse 2026'\\''s $HOME.sqlite' "SELECT count(*) FROM sqlite_schema"`);
  const shell = execFileSync(
    'setpriv',
    ['--reuid', users.app.name, '--regid', users.app.name, '--init-groups', '--', 'sh', '-c', pasted as string],
    { cwd: dir, encoding: 'utf8' },
  );
  assert.match(shell, /^[1-9][0-9]*\n$/, 'the count of the schema, read once the write is rolled back');
  assert.deepEqual(listing(dir), [name], 'the journal rolled back, and no stray file');
  const again = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(again.code, 0, again.stdout);
});

test('check as the service user on a file whose directory it could write (0770): the refusal the service says, in its words, exit 1 (it used to say "fits", exit 0); in a 0750 directory: fits, exit 0', async () => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir(), 0o770);
  const file = await createDatabase(users, dir, 'delete');
  const refusal = directoryRefusal(
    file,
    dir,
    `${users.service.name} (uid ${users.service.uid})`,
    `${users.app.name} (uid ${users.app.uid})`,
  );
  const checked = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(checked.code, 1, checked.stdout);
  assert.match(checked.stdout, /^Data: fits /m);
  assert.equal(checked.stdout.split('\n').at(-2), `Cannot be served: ${refusal}`);
  assertFails(
    await run(['--db', file, '--port', '0'], cleanEnv(USER), asService),
    1,
    `booking-search-server: ${refusal}`,
  );
  chmodSync(dir, 0o750);
  const fits = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(fits.code, 0, fits.stdout);
  assert.doesNotMatch(fits.stdout, /Cannot be served/);
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
});

test('check on WAL without -wal/-shm (directory 0750): names the state, exits 1, creates nothing; with the application running: fits, exit 0', async () => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'wal');
  const checked = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(checked.code, 1);
  assert.deepEqual(checked.stdout.split('\n').slice(0, 2), [
    `Database: ${file}`,
    'Journal: WAL (write-ahead log): kasse.sqlite-wal missing, kasse.sqlite-shm missing.',
  ]);
  assert.match(
    checked.stdout,
    /^Cannot be read now: it is in WAL mode and kasse\.sqlite-wal or kasse\.sqlite-shm is missing .*\(SQLITE_READONLY_DIRECTORY\): start the application before this service.*\.$/m,
  );
  assert.doesNotMatch(checked.stdout + checked.stderr, /attempt to write/);
  assert.deepEqual(listing(dir), ['kasse.sqlite']);

  const app: Application = startApplication(users, file);
  assert.equal(await app.send('open'), '20');
  const fits = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(fits.code, 0, fits.stdout);
  assert.match(
    fits.stdout,
    /^Journal: WAL \(write-ahead log\): kasse\.sqlite-wal \d+ bytes, kasse\.sqlite-shm 32768 bytes\.$/m,
  );
  assert.match(fits.stdout, /^Schema: fits/m);
  // Named through a symbolic link: SQLite keeps -wal and -shm beside the file it leads to.
  const link = join(applicationDirectory(users, users.workDir()), 'k.sqlite');
  symlinkSync(file, link);
  const linked = await run(['check', '--db', link], cleanEnv(), asService);
  assert.equal(linked.code, 0, linked.stdout);
  assert.match(
    linked.stdout,
    /^Journal: WAL \(write-ahead log\): kasse\.sqlite-wal \d+ bytes, kasse\.sqlite-shm 32768 bytes\.$/m,
  );
  await app.close();
  // As the file's owner, with the application closed: SQLite makes them, as the service does,
  // and the report says what it found, and that.
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
  const asApp: Launcher = (args) =>
    asUser(users.app.name, [join(users.runtime, 'bin', 'booking-search-server.js'), ...args]);
  const owned = await run(['check', '--db', file], cleanEnv(), asApp);
  assert.equal(owned.code, 0, owned.stdout);
  assert.match(
    owned.stdout,
    /^Journal: WAL \(write-ahead log\): kasse\.sqlite-wal missing, kasse\.sqlite-shm missing; opened as its owner, SQLite made them now\.$/m,
  );
});

test('backups: after a clean exit while the service reads, the newest bookings are only in -wal; a file copy misses them, sqlite3 .backup and VACUUM INTO get them all', async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const backups = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'wal');
  const app = startApplication(users, file);
  assert.equal(await app.send('open'), '20');
  const server = await start(t, ['--db', file], cleanEnv(USER), asService);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served', 3_000);
  // 467 bookings, one transaction each, then one more: SQLite checkpoints now and then on
  // its own, but never on the commit right after a checkpoint, so the last stays in -wal.
  assert.equal(await app.send('insert 467'), 'inserted');
  assert.equal(await app.send('insert 1'), 'inserted');
  await app.close();
  assert.ok(statSync(`${file}-wal`).size > 0, 'the service kept -wal from being folded in and deleted');

  const count = (path: string): number => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return db.prepare<[], number>("SELECT count(*) FROM entries WHERE subject = 'Nachtrag'").pluck().get() ?? 0;
    } finally {
      db.close();
    }
  };
  const copy = join(users.workDir(), 'copy.sqlite');
  execFileSync('cp', [file, copy]);
  const copied = count(copy);
  assert.ok(copied < 468, `a plain copy of the .sqlite file holds ${copied} of 468`);
  t.diagnostic(`a plain copy held ${copied} of 468 new bookings`);

  // The backup commands of docs/operations.md as written, as the application's user, each
  // into a file of its own.
  const written = blocksAfter(
    readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8'),
    '## Backups and restore',
    'sh',
  )
    .join('')
    .matchAll(/^sudo -u kasse sqlite3 -readonly \/srv\/kasse\/kasse\.sqlite "(.*)"$/gm);
  const commands = [...written].map((match) => match[1] ?? '');
  assert.equal(commands.length, 2, 'the backup and the compacted one');
  const sqlite3 = (sql: string): void =>
    void execFileSync('setpriv', [
      '--reuid',
      users.app.name,
      '--regid',
      users.app.name,
      '--init-groups',
      '--',
      'sqlite3',
      '-readonly',
      file,
      sql,
    ]);
  commands.forEach((sql, i) => {
    sqlite3(sql.replace(/'\/var\/backups\/kasse\/[^']*'/, `'${join(backups, `backup-${i}.sqlite`)}'`));
    assert.equal(count(join(backups, `backup-${i}.sqlite`)), 468, sql);
  });
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6 + 468, buchungen: [] });
  assert.equal((await server.stop()).code, 0);
  assert.deepEqual(listing(dir), ['kasse.sqlite', 'kasse.sqlite-shm', 'kasse.sqlite-wal']);
});

// The line said only "permission denied": neither which user nor what to change.
test("a file the service may not read ends the start with one line and exit 1 that names the service's user, the file or directory in the way with its owner, group and mode, and what to change", async () => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const { app, service, owner } = users;
  const asOwner: Launcher = (args) =>
    asUser(owner.name, [join(users.runtime, 'bin', 'booking-search-server.js'), ...args]);
  const advice = '(docs/operations.md, Users and permissions)';
  const cases: Array<[what: string, launch: Launcher, setup: () => void, line: string]> = [
    [
      'a file without read access for its group',
      asService,
      () => chmodSync(file, 0o600),
      `cannot open database ${file}: permission denied: this service's user ${service.name} (uid ${service.uid}) may not read the file (owner ${app.name} (uid ${app.uid}), group ${app.name} (gid ${app.gid}), mode 600); give it read access through the application's group: chmod g+r ${file} ${advice}`,
    ],
    [
      'a directory without access for its group',
      asService,
      () => {
        chmodSync(file, 0o640);
        chmodSync(dir, 0o700);
      },
      `cannot open database ${file}: permission denied: this service's user ${service.name} (uid ${service.uid}) may not enter directory ${dir} (owner ${app.name} (uid ${app.uid}), group ${app.name} (gid ${app.gid}), mode 700); give it read access through the application's group: chmod g+rx ${dir} ${advice}`,
    ],
    [
      "a user not in the application's group",
      asOwner,
      () => chmodSync(dir, 0o750),
      `cannot open database ${file}: permission denied: this service's user ${owner.name} (uid ${owner.uid}) may not enter directory ${dir} (owner ${app.name} (uid ${app.uid}), group ${app.name} (gid ${app.gid}), mode 750); give it read access through the application's group: add ${owner.name} to group ${app.name} (usermod -aG ${app.name} ${owner.name}, then restart the service) ${advice}`,
    ],
    [
      "the file's owner, the application's user, serving it without read access for itself",
      (args) => asUser(app.name, [join(users.runtime, 'bin', 'booking-search-server.js'), ...args]),
      () => chmodSync(file, 0o240),
      `cannot open database ${file}: permission denied: this service's user ${app.name} (uid ${app.uid}) may not read the file (owner ${app.name} (uid ${app.uid}), group ${app.name} (gid ${app.gid}), mode 240); give it read access to its owner, this service's user: chmod u+r ${file} ${advice}`,
    ],
    // A shared read group: the folder's group is one the service's user is in, and a file
    // the application saved elsewhere and renamed into it kept the application's group.
    [
      "a file that kept the application's group in a folder of a group the service's user is in",
      asOwner,
      () => {
        chownSync(dir, app.uid, owner.gid);
        chmodSync(dir, 0o2750);
        chmodSync(file, 0o600);
      },
      `cannot open database ${file}: permission denied: this service's user ${owner.name} (uid ${owner.uid}) may not read the file (owner ${app.name} (uid ${app.uid}), group ${app.name} (gid ${app.gid}), mode 600); give it its folder's group ${owner.name}, which this service's user is in: chgrp ${owner.name} ${file} and chmod g+r ${file} ${advice}`,
    ],
  ];
  for (const [what, launch, change, line] of cases) {
    change();
    assertFails(await run(['--db', file, '--port', '0'], cleanEnv(USER), launch), 1, `booking-search-server: ${line}`);
    const checked = await run(['check', '--db', file], cleanEnv(USER), launch);
    assert.equal(checked.code, 1, `${what}: ${JSON.stringify(checked)}`);
    assert.ok(
      checked.stdout.split('\n').some((said) => said.endsWith(line)),
      `${what}: ${checked.stdout}`,
    );
    assert.doesNotMatch(checked.stderr, /\n\s+at /);
  }
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
});

test("a book in its owner's home folder, closed to other users: the service's user is told to serve it as its owner, not to open the home folder; check says the same", async (t) => {
  const { users, asService } = setup();
  const { owner, service } = users;
  chmodSync(owner.home, 0o700);
  const file = join(owner.home, 'buch.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql'));
  db.close();
  chownSync(file, owner.uid, owner.gid);
  t.after(() => rmSync(file, { force: true }));
  const line = `cannot open database ${file}: permission denied: this service's user ${service.name} (uid ${service.uid}) may not enter directory ${owner.home} (owner ${owner.name} (uid ${owner.uid}), group ${owner.name} (gid ${owner.gid}), mode 700); it is the home folder of ${owner.name}: serve the book as ${owner.name}, or move it out of the home folder (docs/operations.md, Users and permissions)`;
  assertFails(await run(['--db', file, '--port', '0'], cleanEnv(USER), asService), 1, `booking-search-server: ${line}`);
  const checked = await run(['check', '--db', file], cleanEnv(USER), asService);
  assert.equal(checked.code, 1, JSON.stringify(checked));
  assert.ok(
    checked.stdout.split('\n').some((said) => said.endsWith(line)),
    checked.stdout,
  );
});

// A book copied to root's home with scp: the line told the admin to chown /root to the
// application's user and chmod it 0750.
test("a book in root's home folder: the line says to move it out, never to give /root to the application", async (t) => {
  const { users, asService } = setup();
  const { service } = users;
  const home = userInfo().homedir;
  assert.equal(statSync(home).uid, 0, 'the tests run as root');
  const file = join(home, `kasse-${process.pid}.sqlite`);
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql'));
  db.close();
  t.after(() => rmSync(file, { force: true }));
  const mode = (statSync(home).mode & 0o777).toString(8);
  const line = `cannot open database ${file}: permission denied: this service's user ${service.name} (uid ${service.uid}) may not enter directory ${home} (owner root (uid 0), group root (gid 0), mode ${mode}); it is root's home folder: move the book out of it, into a folder of the application's user (docs/operations.md, Users and permissions)`;
  assertFails(await run(['--db', file, '--port', '0'], cleanEnv(USER), asService), 1, `booking-search-server: ${line}`);
});

// Under the shipped unit's ProtectHome=yes, /home is an empty directory of mode 000 in the
// service's view: the line said to chmod o+x it, which the real /home already is.
test('a book in a folder closed to every user (mode 000, as ProtectHome= hides /home): the line says to move it out, not to chmod the folder', async (t) => {
  const { users, asService } = setup();
  const { service } = users;
  const hidden = join(users.workDir(), 'home');
  mkdirSync(join(hidden, 'laden'), { recursive: true });
  const file = join(hidden, 'laden', 'kasse.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql'));
  db.close();
  const secret = join(hidden, 'zugang');
  writeFileSync(secret, 'abgleich:geheim\n', { mode: 0o640 });
  chmodSync(hidden, 0o000);
  t.after(() => chmodSync(hidden, 0o755));
  const line = `cannot open database ${file}: permission denied: this service's user ${service.name} (uid ${service.uid}) may not enter directory ${hidden} (owner root (uid 0), group root (gid 0), mode 000); it is closed to every user (mode 000: under systemd, the unit's ProtectHome= or InaccessiblePaths= hides it so): move the book out of it, into a folder of the application's user (docs/operations.md, Users and permissions)`;
  assertFails(await run(['--db', file, '--port', '0'], cleanEnv(USER), asService), 1, `booking-search-server: ${line}`);
  // A secret there, the credentials file, the same.
  const refused = await run(['--demo', '--credentials-file', secret, '--port', '0'], cleanEnv(), asService);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /may not enter directory \S+\/home \(owner root \(uid 0\), group root \(gid 0\), mode 000\); it is closed to every user \(mode 000: under systemd, the unit's ProtectHome= or InaccessiblePaths= hides it so\): move the file out of it/,
  );
});

// A backup restored as root (install -m 0600) was root:root, and the line told the admin to
// put the service's user into group root: the file's group is an accident of who copied it.
test("a file or directory in root's hands after a restore as root: the line gives it back to the application's user and group (named by the directory holding it, when that is not root's), never advises group root; check says the same", async () => {
  const { users, asService } = setup();
  const base = users.workDir();
  const dir = applicationDirectory(users, base);
  const file = await createDatabase(users, dir, 'delete', 'restored.gnucash');
  const { service } = users;
  const who = `this service's user ${service.name} (uid ${service.uid})`;
  const advice = '(docs/operations.md, Users and permissions)';
  const app = users.app.name;
  const loose = join(base, 'loose');
  mkdirSync(loose, { mode: 0o755 });
  const cases: Array<[what: string, setup: () => string, line: string]> = [
    [
      "a file root:root 0600 in the application's directory",
      () => {
        chownSync(file, 0, 0);
        chmodSync(file, 0o600);
        return file;
      },
      `${who} may not read the file (owner root (uid 0), group root (gid 0), mode 600); give the file back to the application's user and group: chown ${app}:${app} ${file}; chmod 0640 ${file} ${advice}`,
    ],
    [
      "a file root:root 0600 in a directory of root's",
      () => {
        const there = join(loose, 'restored.gnucash');
        writeFileSync(there, readFileSync(file));
        chmodSync(there, 0o600);
        return there;
      },
      `${who} may not read the file (owner root (uid 0), group root (gid 0), mode 600); give the file back to the application's user and group: chown it to them and chmod 0640 ${join(loose, 'restored.gnucash')} ${advice}`,
    ],
    [
      "the application's directory root:root 0700",
      () => {
        chownSync(dir, 0, 0);
        chmodSync(dir, 0o700);
        return file;
      },
      `${who} may not enter directory ${dir} (owner root (uid 0), group root (gid 0), mode 700); give the directory back to the application's user and group: chown it to them and chmod 0750 ${dir} ${advice}`,
    ],
    [
      "a directory above the application's, root:root 0700",
      () => {
        chownSync(dir, users.app.uid, users.app.gid);
        chmodSync(dir, 0o750);
        chmodSync(base, 0o700);
        return file;
      },
      `${who} may not enter directory ${base} (owner root (uid 0), group root (gid 0), mode 700); let every user pass it: chmod o+x ${base} ${advice}`,
    ],
  ];
  try {
    for (const [what, change, line] of cases) {
      const path = change();
      const started = await run(['--db', path, '--port', '0'], cleanEnv(USER), asService);
      assertFails(started, 1, `booking-search-server: cannot open database ${path}: permission denied: ${line}`);
      const checked = await run(['check', '--db', path], cleanEnv(USER), asService);
      assert.equal(checked.code, 1, `${what}: ${JSON.stringify(checked)}`);
      assert.ok(
        checked.stdout.split('\n').some((said) => said.endsWith(line)),
        `${what}: ${checked.stdout}`,
      );
    }
  } finally {
    chmodSync(base, 0o755);
  }
});

test("a backup restored as root over the served file (install -m 0600, then mv): the serving log's line gives the file back to the application's user and group, as check and the start say it", async (t) => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const server = await start(t, ['--db', file], cleanEnv(USER), asService);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  const copy = join(dir, 'restored.tmp');
  execFileSync('install', ['-m', '0600', file, copy]);
  renameSync(copy, file);
  const line = `may not read the file (owner root (uid 0), group root (gid 0), mode 600); give the file back to the application's user and group: chown ${users.app.name}:${users.app.name} ${file}; chmod 0640 ${file} (docs/operations.md, Users and permissions)`;
  await until(() => server.output().stderr.includes(line), `the log says: ${line}`, 5_000);
  await server.stop();
});

/**
 * The application's book kasse.gnucash in its 0750 directory, a backup of it root:root 0644
 * beside, and the warning for the book's file once a restore as root left it root's there.
 */
async function restorable(users: Users): Promise<{ dir: string; file: string; backup: string; warning: string }> {
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete', 'kasse.gnucash');
  const backup = join(users.workDir(), 'kasse-before.gnucash');
  execFileSync('cp', [file, backup]);
  chmodSync(backup, 0o644);
  const app = users.app.name;
  const warning = `database ${file} belongs to root, so the application that owns its directory cannot write it; give the file back to the application's user and group: chown ${app}:${app} ${file}; chmod 0640 ${file} (docs/operations.md, Users and permissions)`;
  return { dir, file, backup, warning };
}

/** `server` answers the search, and has said one warning line, `warning`, when stopped. */
async function servesWithWarning(server: Awaited<ReturnType<typeof start>>, warning: string): Promise<void> {
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  const stopped = await server.stop();
  const warned = stderrLines(stopped.stderr).filter((line) => line.includes('warning:'));
  assert.deepEqual(
    warned.map((line) => line.replace(/^\S+ /, '')),
    [`warning: ${warning}`],
  );
}

// The start and check refused it, saying the application's directory belonged to "another
// user" (the file's owner, root, taken for the application), while a replaced file was served.
test("a backup restored as root into the application's directory (root:root 0644, root:app 0640): the start serves it with one warning that gives the file back, and check says it and fits", async (t) => {
  const { users, asService } = setup();
  const { dir, file, backup, warning } = await restorable(users);
  for (const restore of [
    ['cp', backup, file],
    ['install', '-g', users.app.name, '-m', '0640', backup, file],
  ]) {
    rmSync(file);
    execFileSync(restore[0] as string, restore.slice(1));
    assert.equal(statSync(file).uid, 0);
    const checked = await run(['check', '--db', file], cleanEnv(USER), asService);
    assert.equal(checked.code, 0, `${restore[0]}: ${JSON.stringify(checked)}`);
    assert.ok(checked.stdout.split('\n').includes(`Warning: ${warning}.`), checked.stdout);
    assert.ok(checked.stdout.includes('Data: fits'), checked.stdout);
    await servesWithWarning(await start(t, ['--db', file], cleanEnv(USER), asService), warning);
  }
  assert.deepEqual(listing(dir), ['kasse.gnucash']);
});

// A replaced file was judged for the application the start found, the start for the file's
// owner: the same root-owned restore was served while serving and refused at the next start.
test("a backup restored as root over the served file (cp, then mv; root:root 0644) is judged as the start judges it: served, with the start's warning; a third user's file there is refused with the start's line", async (t) => {
  const { users, asService } = setup();
  const { dir, file, backup, warning } = await restorable(users);
  const server = await start(t, ['--db', file], cleanEnv(USER), asService);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  const copy = join(dir, 'restored.tmp');
  execFileSync('cp', [backup, copy]);
  renameSync(copy, file);
  await until(() => server.output().stderr.includes(`warning: ${warning}`), `the log says: ${warning}`, 5_000);
  await until(() => server.output().stderr.includes('serving the new file'), 'the new file served', 5_000);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  // A third user's file (nobody's): refused, in the words check says of it at the path.
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  execFileSync('cp', [backup, copy]);
  chownSync(copy, nobody, nobody);
  chmodSync(copy, 0o644);
  const started = await run(['check', '--db', copy], cleanEnv(USER), asService);
  const refusal = started.stdout.split('\n').find((line) => line.startsWith('Cannot be served: '));
  assert.equal(refusal, `Cannot be served: ${thirdUsersFile(users, copy, 'nobody', nobody)}`, started.stdout);
  renameSync(copy, file);
  const line = (refusal as string).slice('Cannot be served: '.length).replaceAll(copy, file);
  await until(() => server.output().stderr.includes(line), `the log says: ${line}`, 5_000);
  const search = await get(`${server.api}${SEARCH}`);
  assert.equal(search.status, 500, search.body);
  await server.stop();
});

/** The refusal of `file`, user `name`'s (`uid`), in the application's directory. */
function thirdUsersFile(users: Users, file: string, name: string, uid: number): string {
  const app = users.app.name;
  return `refusing database ${file}: it belongs to user ${name} (${uid}), not to the owner of its directory, ${app} (${users.app.uid}), so another user could have put it there; if it is the application's file, give the file back to the application's user and group: chown ${app}:${app} ${file}; chmod 0640 ${file} (docs/operations.md, Users and permissions)`;
}

// The line called the application (the directory's owner) "another user" and the file's
// owner the application, and advised giving the directory to the file's owner.
test("a third user's file moved over the application's book (install -o THIRD -g APP -m 0640, then mv) is refused at the start and by check, in a line that names the file's owner and the directory's and gives the file back", async () => {
  const { users, asService } = setup();
  const { dir, file, backup } = await restorable(users);
  const { name, uid } = users.owner;
  const copy = join(dir, '.r2');
  execFileSync('install', ['-o', name, '-g', users.app.name, '-m', '0640', backup, copy]);
  renameSync(copy, file);
  const line = thirdUsersFile(users, file, name, uid);
  const checked = await run(['check', '--db', file], cleanEnv(USER), asService);
  assert.equal(checked.code, 1, JSON.stringify(checked));
  assert.ok(checked.stdout.split('\n').includes(`Cannot be served: ${line}`), checked.stdout);
  assertFails(await run(['--db', file, '--port', '0'], cleanEnv(USER), asService), 1, `booking-search-server: ${line}`);
  assert.deepEqual(listing(dir), ['kasse.gnucash']);
});

// Root served another user's file without a word, though the docs say never to.
test("root serving the application's file (0640 in its 0750 directory): served, with one warning line at the start naming the owner and the advice; check says it too and fits", async (t) => {
  const { users } = setup();
  const dir = applicationDirectory(users, users.workDir());
  const file = await createDatabase(users, dir, 'delete');
  const warning = `database ${file} belongs to user ${users.app.name} (${users.app.uid}), but this service runs as root, which may read and write every file; serve another user's file as its owner or as a user of its own (docs/operations.md, Users and permissions)`;
  await servesWithWarning(await start(t, ['--db', file]), warning);
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 0, JSON.stringify(checked));
  assert.ok(checked.stdout.split('\n').includes(`Warning: ${warning}.`), checked.stdout);
  assert.deepEqual(listing(dir), ['kasse.sqlite']);
});

/**
 * The owner's first run (docs/operations.md, Users and permissions): `who` owns `file`, a WAL
 * database its application created and closed; the service runs as `who` through `launch`
 * and serves the live file at once, while the application is not running and while it
 * opens, writes and closes the file 150 times, each booking served within a second. Every
 * file that ever appears beside it is `who`'s.
 */
async function ownerServesLiveFile(
  t: TestContext,
  users: Users,
  who: { name: string; uid: number },
  file: string,
  launch: Launcher,
): Promise<void> {
  const dir = file.slice(0, file.lastIndexOf('/'));
  const creator = startApplication(users, file, who.name);
  assert.equal(await creator.send('create wal'), 'created');
  await creator.close();
  assert.ok(!listing(dir).some((name) => name.startsWith('kasse.sqlite-')), 'SQLite deleted -wal and -shm');
  const seen = watchDirectory(t, dir);

  const server = await start(t, [], cleanEnv(USER), launch);
  // The application is not running: served all the same, its -wal and -shm made as `who`.
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });

  const app = startApplication(users, file, who.name);
  let slowest = 0;
  for (let saved = 1; saved <= 150; saved += 1) {
    assert.equal(await app.send('cycle'), 'cycled', `save ${saved} of the application`);
    const written = Date.now();
    await until(
      async () => (JSON.parse((await get(`${server.api}${SEARCH}`)).body) as { anzahl: number }).anzahl === 6 + saved,
      `booking ${saved} served within a second`,
      1_000,
    );
    slowest = Math.max(slowest, Date.now() - written);
  }
  t.diagnostic(`150 saves of the application, each served after at most ${slowest} ms`);
  // The application keeps the file open and writes: served as well.
  assert.equal(await app.send('open'), String(20 + 150));
  assert.equal(await app.send('insert 3'), 'inserted');
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6 + 153, buchungen: [] });
  await app.close();
  assert.equal((await server.stop()).code, 0);
  assert.deepEqual(server.output().stderr, '', 'no warning, no error');

  for (const [name, owners] of seen) assert.deepEqual([...owners], [who.uid], `${name} only ever ${who.name}'s`);
  assert.ok(seen.has('kasse.sqlite-wal') && seen.has('kasse.sqlite-shm'), [...seen.keys()].join(', '));
}

test('the owner\'s first run: a fresh user serves ~/kasse.sqlite (WAL) with "node bin/booking-search-server.js --db ~/kasse.sqlite" as their application saves it 150 times: no copy, no second user, each booking within a second, every file beside it theirs; check fits', async (t) => {
  const { users } = setup();
  const { owner } = users;
  const file = join(owner.home, 'kasse.sqlite');
  // As the user types it, in their shell: ~ is their home.
  const asOwner: Launcher = (args) => [
    'setpriv',
    [
      '--reuid',
      owner.name,
      '--regid',
      owner.name,
      '--init-groups',
      '--',
      'env',
      `HOME=${owner.home}`,
      'sh',
      '-c',
      `cd ${users.runtime} && exec ${nodeForEveryUser()} bin/booking-search-server.js --db ~/kasse.sqlite "$@"`,
      'sh',
      ...args,
    ],
  ];
  await ownerServesLiveFile(t, users, owner, file, asOwner);
  const checkAsOwner: Launcher = (args) =>
    asUser(owner.name, [join(users.runtime, 'bin/booking-search-server.js'), ...args]);
  const checked = await run(['check', '--db', file], cleanEnv(), checkAsOwner);
  assert.equal(checked.code, 0, checked.stdout);
  assert.doesNotMatch(checked.stdout, /Cannot be served/);
});

test("the owner rule for root: root serves its own WAL file in a 0700 directory while its application saves it 150 times, each booking within a second, every file beside it root's", async (t) => {
  const { users } = setup();
  const dir = join(users.workDir(), 'privat');
  mkdirSync(dir, { mode: 0o700 });
  const file = join(dir, 'kasse.sqlite');
  const asRoot: Launcher = (args) =>
    asUser('root', [join(users.runtime, 'bin/booking-search-server.js'), '--db', file, ...args]);
  await ownerServesLiveFile(t, users, { name: 'root', uid: 0 }, file, asRoot);
});

test("another user with group write on the owner's directory is refused in one line, and check says the same; a file there that is not a database is told so instead", async () => {
  const { users, asService } = setup();
  const dir = applicationDirectory(users, users.workDir(), 0o770);
  const file = await createDatabase(users, dir, 'wal');
  const refusal = directoryRefusal(
    file,
    dir,
    `${users.service.name} (uid ${users.service.uid})`,
    `${users.app.name} (uid ${users.app.uid})`,
  );
  assertFails(
    await run(['--db', file, '--port', '0'], cleanEnv(USER), asService),
    1,
    `booking-search-server: ${refusal}`,
  );
  const checked = await run(['check', '--db', file], cleanEnv(), asService);
  assert.equal(checked.stdout.split('\n').at(-2), `Cannot be served: ${refusal}`);
  assert.equal(checked.code, 1);
  const readme = join(dir, 'README.md');
  writeFileSync(readme, '# Kasse\n');
  chownSync(readme, users.app.uid, users.app.gid);
  chmodSync(readme, 0o640);
  assertFails(
    await run(['--db', readme, '--port', '0'], cleanEnv(USER), asService),
    1,
    `booking-search-server: ${readme} is not a SQLite database`,
  );
  assert.deepEqual(listing(dir), ['README.md', 'kasse.sqlite']);
});

// An admin wrote the credentials file elsewhere as root and moved it in (root:root 0640): the
// line said only "permission denied", where a book's file says who may not read it and how
// to fix it. The service's own files get that line too, with a secret's fix: root and the
// service's group, never readable by every user.
test("the service's own files it may not read (credentials moved in as root:root, a configuration file 0600, a TLS key, their directory): the start, check and a reload name the service's user, the entry and its mode, and give it to root and the service's group", async (t) => {
  const { users, asService } = setup();
  const base = users.workDir();
  const { service } = users;
  const db = await createDatabase(users, applicationDirectory(users, base), 'delete');
  const etc = join(base, 'etc');
  mkdirSync(etc);
  const ours = (path: string, mode: number): void => {
    chownSync(path, 0, service.gid);
    chmodSync(path, mode);
  };
  ours(etc, 0o750);
  const creds = join(etc, 'credentials');
  writeFileSync(creds, 'bank:geheim1\n');
  ours(creds, 0o640);
  const config = join(etc, 'books.conf');
  writeFileSync(config, `credentials-file = ${creds}\n[book kasse]\ndb = ${db}\nbase-path = /kasse\nusers = bank\n`);
  ours(config, 0o640);
  const who = `this service's user ${service.name} (uid ${service.uid})`;
  const advice = '(docs/operations.md, Credentials)';
  const denied = (what: string, file: string, mode: string): string =>
    `cannot read ${what} ${file}: permission denied: ${who} may not read the file (owner root (uid 0), group ${mode}); give the file to root and the service's group, readable by no one else: chown root:${service.name} ${file}; chmod 0640 ${file} ${advice}`;

  const server = await start(t, ['--config', config, '--admin-port', '0'], cleanEnv(), asService);
  await waitFor(() => server.output().stdout, /admin listener on http:\/\/127\.0\.0\.1:\d+\//);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  // operations.md's advice, as the admin followed it: written elsewhere as root, then moved in.
  const written = join(base, 'cred.new');
  writeFileSync(written, 'bank:geheim1\nneu:geheim2\n', { mode: 0o640 });
  renameSync(written, creds);
  const credsLine = denied('credentials file', creds, 'root (gid 0), mode 640');
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  await waitFor(
    () => server.output().stderr,
    new RegExp(`POST /-/reload: keeping the running configuration: ${escapeRegExp(credsLine)}$`, 'm'),
  );
  assertFails(await run(['--config', config], cleanEnv(), asService), 1, `booking-search-server: ${credsLine}`);
  const checked = await run(['check', '--config', config], cleanEnv(), asService);
  assert.equal(checked.code, 1, JSON.stringify(checked));
  assert.ok(checked.stdout.includes(credsLine), checked.stdout);

  ours(creds, 0o640);
  chmodSync(config, 0o600);
  const configLine = denied('configuration file', config, `${service.name} (gid ${service.gid}), mode 600`);
  assertFails(await run(['--config', config], cleanEnv(), asService), 1, `booking-search-server: ${configLine}`);
  assertFails(
    await run(['check', '--config', config], cleanEnv(), asService),
    1,
    `booking-search-server: ${configLine}`,
    true,
  );

  const cert = join(etc, 'cert.pem');
  const key = join(etc, 'key.pem');
  makeCertificate(cert, key);
  chmodSync(cert, 0o644);
  chmodSync(key, 0o600);
  const tls = ['--demo', '--tls-cert', cert, '--tls-key', key, '--port', '0'];
  assertFails(
    await run(tls, cleanEnv(USER), asService),
    1,
    `booking-search-server: ${denied('--tls-key', key, 'root (gid 0), mode 600')}`,
  );

  chmodSync(config, 0o640);
  chownSync(etc, 0, 0);
  chmodSync(etc, 0o700);
  assertFails(
    await run(['--config', config], cleanEnv(), asService),
    1,
    `booking-search-server: cannot read configuration file ${config}: permission denied: ${who} may not enter directory ${etc} (owner root (uid 0), group root (gid 0), mode 700); give the directory to root and the service's group, readable by no one else: chown root:${service.name} ${etc}; chmod 0750 ${etc} ${advice}`,
  );
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
