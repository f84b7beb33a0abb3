// The CLI beside a database that another program owns: it never writes, it reads what the
// writer committed, it answers quickly while the writer holds a lock, and it follows the
// file when it is restored from a backup, deleted or corrupted.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  lchownSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { cashBook } from './support/cash-book.js';
import { assertFails, cleanEnv, directoryRefusal, run, sha256, start, until, waitFor } from './support/cli-helpers.js';
import {
  assertReply,
  basicAuth,
  buildDatabase,
  databaseDir,
  fixtureSql,
  get,
  HASH_OF_ALT,
  MARCH_COFFEE,
  statusAnswer,
  tempDir,
} from './support/helpers.js';

const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0';
const STATUS = statusAnswer();
const SEARCH_FAILED = { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' };
// The same text, with Retry-After: the file cannot be read now.
const DATABASE_UNAVAILABLE = { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'database_unavailable' };

test('serving leaves the file byte for byte and its mtime unchanged, and serves a file of mode 0444', async (t) => {
  const file = buildDatabase(t);
  chmodSync(file, 0o444);
  const before = { sum: sha256(file), mtime: statSync(file).mtimeMs };
  const server = await start(t, ['--db', file]);
  for (let i = 0; i < 20; i += 1) assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  assert.equal((await server.stop()).code, 0);
  assert.equal(sha256(file), before.sum);
  assert.equal(statSync(file).mtimeMs, before.mtime);
  assert.throws(() => statSync(`${file}-journal`), /ENOENT/, 'no journal was created');
});

for (const mode of ['DELETE', 'WAL'] as const) {
  test(`while another process writes (${mode} journal), every search sees whole transactions and ends current`, async (t) => {
    const file = buildDatabase(t);
    // The application is running: in WAL mode, its open connection keeps -wal and -shm there.
    const application = new Database(file);
    t.after(() => application.close());
    application.pragma(`journal_mode = ${mode}`);
    application.prepare('SELECT count(*) FROM entries').get();
    const server = await start(t, ['--db', file]);
    assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
    // The writer: 60 transactions of 5 bookings of 12.50 € each, as fast as it can.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `
      const Database = require('better-sqlite3');
      const db = new Database(${JSON.stringify(file)}, { timeout: 5000 });
      const insert = db.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 1250, 'Nachtrag')");
      const batch = db.transaction(() => { for (let i = 0; i < 5; i += 1) insert.run(); });
      for (let i = 0; i < 60; i += 1) batch();
      db.close();`,
      ],
      { stdio: 'inherit', cwd: process.cwd() },
    );
    const done = new Promise<number | null>((resolve) => writer.on('exit', resolve));
    let exited = false;
    void done.then(() => (exited = true));
    const seen: number[] = [];
    while (!exited) {
      const reply = await get(`${server.api}${SEARCH}`);
      // A write lock held for long can cost a search its answer; that is the fixed 500, never a wrong count.
      if (reply.status === 500) {
        assert.deepEqual(JSON.parse(reply.body), DATABASE_UNAVAILABLE);
        continue;
      }
      assert.equal(reply.status, 200);
      seen.push((JSON.parse(reply.body) as { anzahl: number }).anzahl);
    }
    assert.equal(await done, 0);
    // A lock that outlasted a search's wait has the book wait for it: served again within a look.
    await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served after the writer', 3_000);
    for (let i = 0; i < seen.length; i += 1) {
      assert.equal(((seen[i] as number) - 6) % 5, 0, `a whole number of transactions: ${seen[i]}`);
      if (i > 0) assert.ok((seen[i] as number) >= (seen[i - 1] as number), 'never goes back');
    }
    assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6 + 300, buchungen: [] });
    assert.ok(seen.length > 0);
  });
}

for (const view of [false, true]) {
  test(`an exclusive lock gets the 500 with Retry-After within 300 ms; /status keeps answering; then it succeeds again; a lock that ended before the file was looked at again is not said${view ? ' (a view, searched in a process of its own)' : ''}`, async (t) => {
    const file = buildDatabase(t);
    const mapping = view ? ['--table-names', 'entries=kasse'] : [];
    if (view) {
      const db = new Database(file);
      db.exec('CREATE VIEW kasse AS SELECT * FROM entries');
      db.close();
    }
    const server = await start(t, ['--db', file, ...mapping]);
    const writer = new Database(file);
    t.after(() => writer.close());
    writer.exec('BEGIN EXCLUSIVE');
    writer.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)");
    const started = Date.now();
    const locked = await get(`${server.api}${SEARCH}`);
    const elapsed = Date.now() - started;
    assertReply(locked, 500, DATABASE_UNAVAILABLE);
    assert.equal(locked.headers['retry-after'], '1');
    // Ended well before the file is opened beside the connection, a moment after the 500.
    writer.exec('COMMIT');
    assert.ok(elapsed < 300, `answered after ${elapsed} ms`);
    assertReply(await get(`${server.api}status`), 200, STATUS);
    assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 7, buchungen: [] });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 7, buchungen: [] });
    const said = (await server.stop()).stderr.split('\n').filter((line) => line !== '');
    // Only what the start said: no second process was started for the look.
    assert.deepEqual(
      said.map((line) => line.replace(/^\S+Z /, '')),
      view
        ? [`database ${file}: 'kasse' is a view, so its searches run in a process of their own, 10 s each at most`]
        : [],
    );
  });
}

/** A GET on `agent` (keep-alive, or `false` for a connection of its own): the reply and how long it took, in ms. */
function timedGet(
  agent: Agent | false,
  url: string,
  headers: Record<string, string> = { authorization: basicAuth('kasse', 'ge:heim') },
): Promise<{ status: number; code: string | undefined; retryAfter: string | undefined; ms: number }> {
  const sent = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode === 500 ? (JSON.parse(body) as { code: string }).code : undefined;
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, code, retryAfter, ms: performance.now() - sent });
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s: ${url}`)));
    req.on('error', reject).end();
  });
}

for (const mode of ['DELETE', 'WAL'] as const) {
  test(`a write lock holds up no other request (${mode} journal): 20 searches queued behind it, /status and the challenge answer at once, each search within 300 ms of being sent (the 500 with Retry-After; in WAL a writer keeps no reader out, 200), and 200 again after it`, async (t) => {
    const file = buildDatabase(t);
    const writer = new Database(file);
    t.after(() => writer.close());
    writer.pragma(`journal_mode = ${mode}`);
    const server = await start(t, ['--db', file]);
    const agents = Array.from({ length: 20 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    t.after(() => {
      for (const agent of agents) agent.destroy();
    });
    // Each connection logged in and open, as a reconciliation client's are.
    for (const agent of agents) assert.equal((await timedGet(agent, `${server.api}${SEARCH}`)).status, 200);
    // On a busy machine a quick answer is late at times for reasons of its own, while a
    // search waiting in SQLite's busy handler holds the whole process in every round (/status
    // after 210 to 370 ms). So the lock is taken again, three rounds at most, until one is quick.
    const expected = mode === 'WAL' ? [200, undefined, undefined] : [500, 'database_unavailable', '1'];
    const rounds: string[] = [];
    let quick = false;
    while (!quick && rounds.length < 3) {
      writer.exec('BEGIN EXCLUSIVE');
      writer.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)");
      const searches = agents.map((agent) => timedGet(agent, `${server.api}${SEARCH}`));
      await new Promise((resolve) => setTimeout(resolve, 10));
      const [status, challenge] = await Promise.all([
        timedGet(false, `${server.api}status`),
        timedGet(false, `${server.api}${SEARCH}`, {}),
      ]);
      assert.equal(status.status, 200);
      assert.equal(challenge.status, 401);
      const answered = await Promise.all(searches);
      for (const { status: code, code: error, retryAfter } of answered) {
        assert.deepEqual([code, error, retryAfter], expected);
      }
      const slowest = Math.max(...answered.map(({ ms }) => ms));
      quick = Math.max(status.ms, challenge.ms) < 50 && slowest < 300;
      rounds.push(
        `/status after ${status.ms} ms, the challenge after ${challenge.ms} ms, the slowest search after ${slowest} ms`,
      );
      writer.exec('COMMIT');
      await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served after the lock', 3_000);
    }
    assert.ok(quick, `/status and the challenge within 50 ms, each search within 300 ms: ${rounds.join('; ')}`);
    assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6 + rounds.length, buchungen: [] });
  });
}

test('a restore by rename is served within 2 s; a deletion gives the 500 until a file is back', async (t) => {
  const dir = tempDir(t);
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });

  // The backup holds two more bookings of 12.50 €; it is moved over the live file.
  const backup = join(dir, 'backup.sqlite');
  copyFileSync(file, backup);
  const db = new Database(backup);
  db.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
  db.close();
  renameSync(backup, file);
  const noticed = await until(
    async () => (await get(`${server.api}${SEARCH}`)).body === '{"anzahl":8,"buchungen":[]}',
    'the restored file is served',
    2_000,
  );
  assert.ok(noticed <= 2_000);

  rmSync(file);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 500, 'a deleted file gives the 500', 2_000);
  assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);
  assertReply(await get(`${server.api}status`), 200, STATUS);

  // Something that is not a database appears at the path: still the 500, no crash.
  writeFileSync(file, 'kaputt'.repeat(1000));
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);

  // A valid file again: served again.
  rmSync(file);
  copyFileSync(buildDatabase(t), file);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'a valid file is served again', 2_000);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
  assert.match(stopped.stderr, /database .* is gone; searches answer 500 until it is back/);
  assert.match(stopped.stderr, /database .* was replaced; serving the new file/);
  assert.match(stopped.stderr, /is not a SQLite database; searches answer 500 until a valid file is there/);
});

test("a WAL book's -wal and -shm deleted under the served file (the application stopped, then started again) are noticed within 2 s: the file is opened again and the application's new bookings served, said in the log", async (t) => {
  const file = buildDatabase(t);
  const stopped = new Database(file);
  stopped.pragma('journal_mode = WAL');
  stopped.prepare('SELECT count(*) FROM entries').get();
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  // The application stops with everything in the file; the service keeps -wal and -shm open,
  // and an admin deletes them. The application starts again (a new -wal and -shm) and books
  // two more of 12.50 €, in its new log.
  stopped.pragma('wal_checkpoint(TRUNCATE)');
  stopped.close();
  rmSync(`${file}-wal`);
  rmSync(`${file}-shm`);
  const application = new Database(file);
  t.after(() => application.close());
  application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
  await until(
    async () => (await get(`${server.api}${SEARCH}`)).body === '{"anzahl":8,"buchungen":[]}',
    'the new bookings are served',
    2_000,
  );
  const { stderr } = await server.stop();
  assert.match(
    stderr,
    /Z database \S+: its -wal or -shm was deleted or replaced while it was served; opening it again, for its connection reads a log the file no longer has; an application still running writes to the deleted files: stop it, then start it, with no other program opening the file meanwhile\n/,
  );
  assert.match(stderr, /Z database \S+ was opened and checked again; serving it\n/);
});

/** A book in WAL mode with its application's connection open, and a backup of it taken before. */
function walBookAndBackup(t: TestContext): { file: string; backup: string; application: Database.Database } {
  const file = buildDatabase(t);
  const backup = join(tempDir(t), 'backup.sqlite');
  const application = new Database(file);
  application.exec(`VACUUM INTO '${backup}'`);
  application.pragma('journal_mode = WAL');
  return { file, backup, application };
}

test("a backup moved over a served WAL book while the service ran, its -wal and -shm left beside it: the service refuses it with one line saying what to do, never serves the replaced file's commits from them, and serves the backup once they are gone", async (t) => {
  const { file, backup, application } = walBookAndBackup(t);
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  // The application books two more of 12.50 € into its -wal and stops: the service's
  // connection keeps -wal and -shm on disk. The backup, without them, is moved over the file.
  application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
  await until(async () => (await get(`${server.api}${SEARCH}`)).body.includes('"anzahl":8'), 'the two served', 2_000);
  application.close();
  assert.ok(statSync(`${file}-wal`).size > 0, "the replaced file's log stays");
  renameSync(backup, file);
  await until(
    async () =>
      (await get(`${server.api}${SEARCH}`)).status === 500 && /was replaced, but/.test(server.output().stderr),
    'the backup beside the old log is refused',
    3_000,
  );
  // Refused as long as the old log is there: looked at again each second, never served with it.
  for (let i = 0; i < 3; i += 1) {
    assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // check, which has no history to tell the log by, names it: SQLite reads it into the backup.
  const checked = await run(['check', '--db', file]);
  assert.match(
    checked.stdout,
    /^Journal: rollback journal \(WAL is off\); no journal file; but kasse\.sqlite-wal beside it holds \d+ bytes, which SQLite reads into it\.$/m,
  );
  rmSync(`${file}-wal`);
  rmSync(`${file}-shm`);
  await until(
    async () => (await get(`${server.api}${SEARCH}`)).body === '{"anzahl":6,"buchungen":[]}',
    'the backup is served once the old log is gone',
    2_000,
  );
  const { stderr } = await server.stop();
  assert.match(
    stderr,
    /Z database \S+ was replaced, but kasse\.sqlite-wal and kasse\.sqlite-shm beside it are still those of the file it replaced, which SQLite would read into this one: stop the application, move kasse\.sqlite-wal and kasse\.sqlite-shm out of the folder \(they hold that file's last commits\), then start the application; this service serves the file once they are gone; do not restart it before: started anew, it could not tell them from this file's own and would serve the old file's last commits \(docs\/operations\.md, Backups and restore\); searches answer 500 until a valid file is there\n/,
  );
});

test('a book served in rollback mode, turned to WAL by its application while served: a backup moved over it beside that log is refused', async (t) => {
  const file = buildDatabase(t);
  const backup = join(tempDir(t), 'backup.sqlite');
  const application = new Database(file);
  application.exec(`VACUUM INTO '${backup}'`);
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  application.pragma('journal_mode = WAL');
  application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
  await until(async () => (await get(`${server.api}${SEARCH}`)).body.includes('"anzahl":8'), 'the two served', 2_000);
  application.close();
  assert.ok(statSync(`${file}-wal`).size > 0, "the served file's log stays");
  // The service's look, once a second, finds the log beside the file it serves.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  renameSync(backup, file);
  await until(
    async () => /was replaced, but/.test(server.output().stderr),
    'the backup beside the old log is refused',
    3_000,
  );
  assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);
  await server.stop();
});

for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
  test(`--workers 2: a worker started in place of one ended by ${signal} refuses a backup beside the old log, as the others do, and serves it once the log is gone`, async (t) => {
    const { file, backup, application } = walBookAndBackup(t);
    const server = await start(t, ['--db', file, '--workers', '2']);
    application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
    await until(async () => (await get(`${server.api}${SEARCH}`)).body.includes('"anzahl":8'), 'the two served', 4_000);
    application.close();
    renameSync(backup, file);
    await until(
      async () => (server.output().stderr.match(/was replaced, but/g) ?? []).length >= 2,
      'both workers refuse the backup',
      5_000,
    );
    // A worker crashes; the primary starts another, which could not tell the old log itself.
    const worker = Number(/worker (\d+): database \S+ was replaced, but/.exec(server.output().stderr)?.[1]);
    process.kill(worker, signal);
    await until(async () => /started worker \d+/.test(server.output().stderr), 'a worker started anew', 10_000);
    const anew = /started worker (\d+)/.exec(server.output().stderr)?.[1];
    await until(async () => server.output().stderr.includes(`worker ${anew} serves`), 'it serves', 10_000);
    const answers = new Set<string>();
    for (let i = 0; i < 20; i += 1) answers.add((await get(`${server.api}${SEARCH}`)).body);
    assert.deepEqual([...answers], [JSON.stringify(SEARCH_FAILED)], 'no worker serves the old log with the backup');
    rmSync(`${file}-wal`);
    rmSync(`${file}-shm`);
    await until(
      async () => {
        const bodies = await Promise.all(Array.from({ length: 6 }, () => get(`${server.api}${SEARCH}`)));
        return bodies.every(({ body }) => body === '{"anzahl":6,"buchungen":[]}');
      },
      'the backup is served by every worker once the old log is gone',
      4_000,
    );
    await server.stop();
  });
}

test('a book a reload names another way, or takes out and adds back, still refuses a backup beside the old log: the reload keeps the running configuration', async (t) => {
  const { file, backup, application } = walBookAndBackup(t);
  const other = buildDatabase(t);
  const config = join(tempDir(t), 'books.conf');
  const books = (kasse: string | undefined): void => {
    const section = kasse === undefined ? '' : `[book kasse]\ndb = ${kasse}\nbase-path = /kasse\n`;
    writeFileSync(config, `[book other]\ndb = ${other}\nbase-path = /other\n${section}`, { mode: 0o644 });
  };
  books(file);
  const server = await start(t, ['--config', config]);
  const search = `${server.origin}/kasse/api/v1/${SEARCH}`;
  application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250), ('2026-03-04', 1250)");
  await until(async () => (await get(search)).body.includes('"anzahl":8'), 'the two served', 2_000);
  application.close();
  renameSync(backup, file);
  await until(async () => /was replaced, but/.test(server.output().stderr), 'the backup is refused', 3_000);
  const count = (pattern: RegExp): number => (server.output().stderr.match(pattern) ?? []).length;
  const kept = /SIGHUP: keeping the running configuration: \S+: book kasse: database \S+ was replaced, but/g;
  const reload = async (kasse: string | undefined, pattern: RegExp, times: number): Promise<void> => {
    books(kasse);
    server.child.kill('SIGHUP');
    await until(async () => count(pattern) >= times, `reload: ${pattern} ${times} times`, 5_000);
  };
  const refused = async (): Promise<void> =>
    assert.notEqual((await get(search)).status, 200, 'never the old log with the backup');
  // Its folder named through a symbolic link: another path, the same file.
  const linked = join(tempDir(t), 'books');
  symlinkSync(dirname(file), linked);
  await reload(join(linked, basename(file)), kept, 1);
  await refused();
  await reload(undefined, /SIGHUP: configuration re-read from \S+: 1 book: removed kasse/g, 1);
  await reload(file, kept, 2);
  await refused();
  // The old log moved out of the folder, as the line says: added back, the backup is served.
  for (const end of ['-wal', '-shm']) renameSync(`${file}${end}`, `${file}${end}.old`);
  await reload(file, /SIGHUP: configuration re-read from \S+: 2 books: added kasse/g, 1);
  assertReply(await get(search), 200, { anzahl: 6, buchungen: [] });
  await server.stop();
});

test('a client verified before the file was replaced, or deleted, is not checked again: its search is answered at once, served or the 500', async (t) => {
  const dir = tempDir(t);
  const file = buildDatabase(t);
  const credentials = join(dir, 'zugang');
  writeFileSync(credentials, `pruefer:${HASH_OF_ALT}\n`, { mode: 0o600 });
  const server = await start(t, ['--db', file, '--credentials-file', credentials], cleanEnv());
  const headers = { authorization: basicAuth('pruefer', 'alt') };
  const timed = async (): Promise<{ status: number; ms: number }> => {
    const began = performance.now();
    const { status } = await get(`${server.api}${SEARCH}`, headers);
    return { status, ms: performance.now() - began };
  };
  // The first request checks the password hash: the cost a second check would have.
  const first = await timed();
  assert.equal(first.status, 200);
  const backup = join(dir, 'backup.sqlite');
  copyFileSync(file, backup);
  renameSync(backup, file);
  await waitFor(() => server.output().stderr, /was replaced; serving the new file/);
  const replaced = await timed();
  assert.equal(replaced.status, 200);
  rmSync(file);
  await waitFor(() => server.output().stderr, /is gone; searches answer 500 until it is back/);
  const gone = await timed();
  assert.equal(gone.status, 500);
  for (const [what, answer] of [
    ['replaced', replaced],
    ['gone', gone],
  ] as const)
    assert.ok(answer.ms < first.ms / 2, `${what}: ${answer.ms} ms, the first (checked) ${first.ms} ms`);
});

test('a restore with cp over the served file while searches run: every search is answered, or gets the 500 with Retry-After while the file is opened again', async (t) => {
  const dir = tempDir(t);
  const file = buildDatabase(t);
  const original = join(dir, 'original.sqlite');
  copyFileSync(file, original);
  // Another schema (a table more) and more pages: the served connection notices the change
  // and the file is opened and checked again after each cp.
  const backup = join(dir, 'backup.sqlite');
  copyFileSync(file, backup);
  const db = new Database(backup);
  db.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250); CREATE TABLE spare (x)");
  db.exec('INSERT INTO spare SELECT zeroblob(1000) FROM entries, entries AS e2');
  db.close();
  const server = await start(t, ['--db', file]);
  let running = true;
  const answers = new Map<string, number>();
  const clients = Array.from({ length: 8 }, async () => {
    while (running) {
      const reply = await get(`${server.api}${SEARCH}`);
      const key =
        reply.status === 200
          ? '200'
          : `${reply.status} ${(JSON.parse(reply.body) as { code: string }).code} ${reply.headers['retry-after']}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
    }
  });
  for (let i = 0; i < 8; i += 1) {
    execFileSync('cp', [i % 2 === 0 ? backup : original, file]);
    await new Promise((resolve) => setTimeout(resolve, 300 + ((i * 97) % 600)));
  }
  running = false;
  await Promise.all(clients);
  const kinds = [...answers.keys()].sort();
  assert.ok(
    kinds.every((kind) => kind === '200' || kind === '500 database_unavailable 1'),
    `${JSON.stringify([...answers])} ${server.output().stderr.replace(/^.* was opened and checked again; serving it\n/gm, '')}`,
  );
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'the last file is served', 5_000);
  assert.equal((await server.stop()).code, 0);
});

test("a file of tables whose bookings would be answered wrongly is refused at the start with check's sentence less its example, alone and as a book of a configuration file (judged once, in the guard process)", async (t) => {
  const file = buildDatabase(t);
  const writer = new Database(file);
  writer.exec('UPDATE entries SET amount_cents = amount_cents + 0.5 WHERE id = (SELECT max(id) FROM entries)');
  writer.close();
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 1, checked.stdout);
  const [, example, rest] =
    checked.stdout.match(/^ {2}- amounts are REAL numbers such as (\S+)(, not whole cents: .*)$/m) ?? [];
  assert.ok(example !== undefined && rest !== undefined, checked.stdout);
  const said = `${file} cannot be served exactly: some amounts are REAL numbers${rest} booking-search-server check names examples from the bookings.`;
  const alone = await run(['--db', file, '--port', '0']);
  assert.equal(alone.code, 1, alone.stderr);
  assert.ok(alone.stderr.includes(said) && !alone.stderr.includes(example), alone.stderr);
  const config = join(tempDir(t), 'books.conf');
  writeFileSync(config, `[book kasse]\ndb = ${file}\nbase-path = /kasse\n`, { mode: 0o644 });
  const books = await run(['--config', config, '--port', '0']);
  assert.equal(books.code, 1, books.stderr);
  assert.ok(books.stderr.includes(said) && !books.stderr.includes(example), books.stderr);
});

test('a file corrupted in place gives the fixed 500 once judged again (the 500 with Retry-After before), never a crash', async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 6, buchungen: [] });
  // Overwrite every page but the first (the schema) with garbage, and the header's change
  // counter, as a writer would, so that no reader may trust its cached pages.
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(size - 4096, 0xa5), 0, size - 4096, 4096);
  writeSync(fd, Buffer.alloc(4, 0xa5), 0, 4, 24);
  closeSync(fd);
  // A read of pages that are not a database's, from a file written since it was opened, may
  // be a copy still under way: answered with Retry-After until the file is judged again.
  const first = await get(`${server.api}${SEARCH}`);
  assert.ok(first.status === 500 && first.headers['retry-after'] === '1', `${first.status} ${first.body}`);
  await until(async () => (await get(`${server.api}${SEARCH}`)).body.includes('search_failed'), 'judged broken', 2_000);
  assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);
  assertReply(await get(`${server.api}status`), 200, STATUS);
  assert.equal((await server.stop()).code, 0);
});

test('overwriting, truncating or copying the file over itself in place while searches run never ends a process, with and without --workers: searches answer, and the restored file is served', async (t) => {
  const dir = databaseDir(t);
  const file = join(dir, 'kasse.sqlite');
  const book = cashBook(20_000);
  const whole = book.serialize();
  book.close();
  const small = readFileSync(buildDatabase(t));
  const widest = 'buchungen?von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=999999999999.99&limit=1000';
  for (const workers of [[], ['--workers', '2']]) {
    writeFileSync(file, whole);
    const server = await start(t, ['--db', file, ...workers]);
    let running = true;
    const statuses = new Map<number, number>();
    // Four clients, each a new connection a search (spread over the workers), as fast as answered.
    const clients = Array.from({ length: 4 }, async () => {
      while (running) {
        // A connection cut by a process that died is counted as 0, and ends this client.
        const status = await get(`${server.api}${widest}`, { connection: 'close' }).then(
          (reply) => reply.status,
          () => 0,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 0) break;
      }
    });
    // The clients' searches read the file before it is first changed: on a busy machine a
    // search sent after that may meet only changes (each answered 500 with Retry-After).
    const deadline = Date.now() + 10_000;
    while ((statuses.get(200) ?? 0) === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok((statuses.get(200) ?? 0) > 0, `searches served: ${JSON.stringify([...statuses])}`);
    // 20 times, as an admin restores a backup with cp, truncates, or copies the same file
    // over it: the same inode, its pages changed or gone under the readers.
    for (let i = 0; i < 20; i += 1) {
      if (i % 3 === 0) writeFileSync(file, small);
      else if (i % 3 === 1) truncateSync(file, 0);
      else writeFileSync(file, whole);
      await new Promise((resolve) => setTimeout(resolve, 60));
      writeFileSync(file, whole);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    running = false;
    await Promise.all(clients);
    const { stderr } = server.output();
    const ended = server.child.exitCode ?? server.child.signalCode;
    assert.equal(ended, null, `the service ended (${ended}): ${stderr}`);
    assert.equal(statuses.get(0), undefined, `connections cut: ${JSON.stringify([...statuses])} ${stderr}`);
    assert.doesNotMatch(stderr, /worker \d+ ended|SIGBUS/, stderr);
    // The restored file is served again once it is judged again (seconds, on a busy machine).
    let served = await get(`${server.api}${widest}`);
    const again = Date.now() + 10_000;
    while (served.status !== 200 && Date.now() < again) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      served = await get(`${server.api}${widest}`);
    }
    assert.equal(served.status, 200, `${served.body} ${server.output().stderr}`);
    assert.equal((JSON.parse(served.body) as { anzahl: number }).anzahl, 20_000);
    assert.equal((await server.stop()).code, 0);
  }
});

test("WAL without -wal/-shm, served by root on another user's file, in that user's 0755 directory (root could write it, its bits give root no write): starts, waits and creates nothing; served within 2 s once the application has the file open", async (t) => {
  assert.equal(process.getuid?.(), 0, "needs root to serve another user's file (CI runs as root)");
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const file = buildDatabase(t);
  const dir = dirname(file);
  const setup = new Database(file);
  setup.pragma('journal_mode = WAL');
  setup.close();
  chownSync(file, nobody, 0);
  chownSync(dir, nobody, 0);
  chmodSync(dir, 0o755);
  assert.deepEqual(readdirSync(dir), ['kasse.sqlite']);
  const server = await start(t, ['--db', file]);
  const waiting = await get(`${server.api}${SEARCH}`);
  assertReply(waiting, 500, DATABASE_UNAVAILABLE);
  assert.equal(waiting.headers['retry-after'], '1');
  // Every shape of search (one amount, a band, the whole window) waits the same way.
  for (const query of [
    'von=2026-03-01&bis=2026-03-31&betrag=-12.5',
    'von=2026-03-01&bis=2026-03-31&betrag=-12.5&toleranz=0.5',
    'von=2000-01-01&bis=2030-12-31&betrag=0&toleranz=100000',
  ]) {
    const reply = await get(`${server.api}buchungen?${query}`);
    assertReply(reply, 500, DATABASE_UNAVAILABLE);
    assert.equal(reply.headers['retry-after'], '1');
  }
  assertReply(await get(`${server.api}status`), 200, STATUS);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.deepEqual(readdirSync(dir), ['kasse.sqlite'], 'nothing created beside the database');

  const application = new Database(file);
  t.after(() => application.close());
  application.prepare('SELECT count(*) FROM entries').get();
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served', 2_000);
  application.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)");
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 7, buchungen: [] });
  const stopped = await server.stop();
  const lines = stopped.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 3, stopped.stderr);
  assert.match(
    lines[0] as string,
    /Z warning: database \S+ belongs to user nobody \(\d+\), but this service runs as root/,
  );
  assert.match(
    lines[1] as string,
    /Z database \S+ cannot be read yet: it is in WAL mode .*\(SQLITE_READONLY_DIRECTORY\)/,
  );
  assert.match(lines[2] as string, /Z database \S+ can be read now; serving it$/);
});

test('a lock held when the service starts: it starts and waits; check names the lock and exits 1; served once the lock is released', async (t) => {
  const file = buildDatabase(t);
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec('BEGIN EXCLUSIVE');
  writer.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)");
  const server = await start(t, ['--db', file]);
  const locked = await get(`${server.api}${SEARCH}`);
  assertReply(locked, 500, DATABASE_UNAVAILABLE);
  assert.equal(locked.headers['retry-after'], '1');
  assertReply(await get(`${server.api}status`), 200, STATUS);
  assert.match(
    server.output().stderr,
    /^\S+Z database \S+ cannot be read yet: another program holds a lock on the file \(SQLITE_BUSY\).*; searches answer 500 with Retry-After until it can$/m,
  );
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 1);
  assert.match(checked.stdout, /^Cannot be read now: another program holds a lock on the file \(SQLITE_BUSY\)/m);
  writer.exec('COMMIT');
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served after the lock', 2_000);
  assertReply(await get(`${server.api}${SEARCH}`), 200, { anzahl: 7, buchungen: [] });
});

test("another user's database in a directory the service's user could write is refused with one line saying why and what to do; as root the mode bits decide; root's own file is root's to serve", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to judge a directory by its mode bits (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const file = buildDatabase(t);
  const dir = dirname(file);
  chownSync(file, nobody, 0);
  const line = `booking-search-server: ${directoryRefusal(file, dir, 'root (uid 0)', `nobody (uid ${nobody})`)}`;
  for (const mode of [0o755, 0o575, 0o557]) {
    chmodSync(dir, mode);
    assertFails(await run(['--db', file, '--port', '0']), 1, line);
  }
  assertFails(await run(['--db', file, '--port', '0', '--workers', '2']), 1, line);
  assert.deepEqual(readdirSync(dir), ['kasse.sqlite'], 'nothing created');
  // Owned by another user, 0755: root could write it, but its bits give root no write.
  chownSync(dir, nobody, 0);
  chmodSync(dir, 0o755);
  let server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`), 200, MARCH_COFFEE);
  await server.stop();
  // The owner rule: root serving root's file, in root's 0700 directory.
  chownSync(file, 0, 0);
  chownSync(dir, 0, 0);
  chmodSync(dir, 0o700);
  server = await start(t, ['--db', file, '--workers', '2']);
  assertReply(await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`), 200, MARCH_COFFEE);
  await server.stop();
});

test("a database reached through another user's symlink in a sticky directory is refused; the symlink of the directory's owner or root is taken", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give a symlink to another user (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const file = buildDatabase(t);
  const sticky = join(tempDir(t), 'st');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  const link = join(sticky, 'kasse.sqlite');
  symlinkSync(file, link);
  lchownSync(link, nobody, 0);
  // Theirs to point at another file, whose bookings the service would then serve.
  assertFails(
    await run(['--db', link, '--port', '0']),
    1,
    `booking-search-server: refusing database ${link}: symlink ${link} is owned by another user (uid ${nobody}), who could point it at another file; give the path without it, or a symlink owned by root, the service's user or the owner of its directory`,
  );
  lchownSync(link, 0, 0);
  const server = await start(t, ['--db', link]);
  assertReply(await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`), 200, MARCH_COFFEE);
  await server.stop();
});

test("the directories above the database get the ownership rule, at the start and at every open of a replaced file: another user's directory above is refused, and so is a file put in a directory that became another user's", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give directories to another user (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const root = tempDir(t);
  chmodSync(root, 0o755);
  // Another user's directory above the application's: she could rename the application's
  // directory away and put her own, with a database of her own, in its place.
  const theirs = join(root, 'nobody');
  const app = join(theirs, 'app');
  mkdirSync(app, { recursive: true });
  chownSync(theirs, nobody, nobody);
  const file = join(app, 'kasse.sqlite');
  copyFileSync(buildDatabase(t), file);
  assertFails(
    await run(['--db', file, '--port', '0']),
    1,
    `booking-search-server: refusing database ${file}: directory ${theirs} is owned by another user (uid ${nobody}) (mode 755), so another user could put a directory of their own in its place and a database of their own at this path; give a path whose directories belong to root, the service's user or the application's (uid 0) and that no one else may write (chmod o-w, g-w)`,
  );
  // The application's own directories: served. Then the application's directory becomes
  // another user's, who puts her database there: the replaced file is judged against the
  // application the start found, and refused.
  chownSync(theirs, 0, 0);
  const server = await start(t, ['--db', file]);
  assertReply(await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`), 200, MARCH_COFFEE);
  chownSync(app, nobody, nobody);
  const forged = join(app, 'forged.sqlite');
  copyFileSync(buildDatabase(t), forged);
  const db = new Database(forged);
  db.exec("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 435, 'gefälscht')");
  db.close();
  chownSync(forged, nobody, nobody);
  renameSync(forged, file);
  await until(
    async () => /refusing database .*: directory .* is owned by another user/.test(server.output().stderr),
    'the refusal of the replaced file',
    5_000,
  );
  const search = await get(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`);
  assert.equal(search.status, 500, search.body);
  assert.doesNotMatch(search.body, /gefälscht/);
  await server.stop();
});

// A million bookings without the two indexes were served without a word, while every search
// read them all and half the searches met the application's writes: only check said so.
test("a book of 100,000 bookings whose typical search reads every one is said once at the start and after a replacement, with its count and check's advice; with the indexes, or 99,999, nothing is said", async (t) => {
  const dir = databaseDir(t);
  const file = join(dir, 'kasse.sqlite');
  const large = cashBook(100_000, false);
  large.exec(`VACUUM INTO '${file}'`);
  large.close();
  const said = (count: number): string =>
    `database ${file}: its typical search reads every one of its ${count} bookings, so its searches are slow, hold up those of the other books this process serves, and may answer 500 while the application writes; check prints the indexes to add`;
  const replaced = `database ${file} was replaced; serving the new file`;
  const server = await start(t, ['--db', file]);
  // Read through the served connection every second: the warning is not said again.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  /** The file changed by `sql` in a copy that is renamed over it, and its replacement said. */
  const replace = async (sql: string, times: number): Promise<void> => {
    const copy = join(dir, 'copy.sqlite');
    copyFileSync(file, copy);
    const db = new Database(copy);
    db.exec(sql);
    db.close();
    renameSync(copy, file);
    await waitFor(() => server.output().stderr, /was replaced; serving the new file/, times);
  };
  const indexes =
    fixtureSql('schema.sql')
      .match(/^CREATE INDEX.*$/gm)
      ?.join('\n') ?? '';
  await replace(indexes, 1);
  await replace(
    "DROP INDEX entries_amount_date; DROP INDEX entries_date_id_amount; INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)",
    2,
  );
  await replace('DELETE FROM entries WHERE id <= 2', 3);
  const lines = (await server.stop()).stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^\S+Z /, ''));
  assert.deepEqual(lines, [said(100_000), replaced, said(100_001), replaced, replaced]);
});

// A file truncated to 0 bytes was said to have lost its table ("table or view 'entries' is
// missing"), as if its schema had changed.
test('a served file truncated to 0 bytes is said to be empty, not a schema without its table; the start and check say the same; served again once written', async (t) => {
  const file = buildDatabase(t);
  const whole = readFileSync(file);
  const server = await start(t, ['--db', file]);
  truncateSync(file, 0);
  const empty = `${file} is empty (0 bytes), not a SQLite database`;
  await waitFor(() => server.output().stderr, /is empty \(0 bytes\)/);
  assertReply(await get(`${server.api}${SEARCH}`), 500, SEARCH_FAILED);
  assertFails(await run(['--db', file, '--port', '0']), 1, `booking-search-server: ${empty}`);
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 1);
  assert.match(checked.stdout, new RegExp(`^Cannot check: ${empty.replace(/[.()/]/g, '\\$&')}$`, 'm'));
  writeFileSync(file, whole);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served again', 5_000);
  const lines = (await server.stop()).stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^\S+Z /, ''));
  assert.deepEqual(lines, [
    `${empty}; searches answer 500 until a valid file is there`,
    `database ${file} can be read now; serving it`,
  ]);
});

// A booking of an impossible date was logged with its text and JavaScript's class name:
// "RangeError: the booking ('UNGUELTIGER TAG', id 9202) has the date '2026-02-30', …".
test("a booking the search cannot answer is named in the log by its id alone, without its values or JavaScript's class name; the 500 names nothing of it", async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file]);
  const writer = new Database(file);
  writer.exec(
    "INSERT INTO entries (id, date, amount_cents, subject) VALUES (9202, '2026-02-30', 1250, 'UNGUELTIGER TAG')",
  );
  writer.close();
  const window = 'buchungen?von=2026-02-01&bis=2026-03-31&betrag=-12.5&limit=5';
  await until(async () => (await get(`${server.api}${window}`)).status === 500, 'the search fails', 5_000);
  const reply = await get(`${server.api}${window}`);
  assertReply(reply, 500, SEARCH_FAILED);
  assert.doesNotMatch(reply.body, /9202|UNGUELTIGER|2026-02-30/);
  const { stderr } = await server.stop();
  const errors = stderr.split('\n').filter((line) => line.includes('error in GET'));
  assert.ok(errors.length > 0, stderr);
  for (const line of errors)
    assert.equal(
      line.replace(/^\S+Z /, ''),
      'error in GET /api/v1/buchungen: the booking with id 9202 has a date that is not a day of the calendar as YYYY-MM-DD',
    );
  assert.doesNotMatch(stderr, /UNGUELTIGER|2026-02-30|RangeError/);
});
