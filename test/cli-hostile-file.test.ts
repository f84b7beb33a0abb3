// The command beside a file that turns hostile: a view that never ends, a table swapped for
// one while served, the file swapped for a named pipe again and again, a schema of 20,000
// and 200,000 views, a named pipe in place of the journal or given as the database, the
// file replaced every half second by one searched in a guard and back. Whatever the file
// does, /status answers, a search ends (200 or 500) within --search-timeout, no guard
// process outlives its file, and SIGTERM, or at the last its last-resort thread, ends the process.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { Guard } from '../bin/guard/guarded.js';
import { addViews } from '../fixtures/many-views.js';
import { errorCode } from '../lib/errors.js';
import { parseSearchQuery } from '../lib/query.js';
import type { Outcome, SearchRows } from '../lib/search/index.js';
import { assertFails, guardsOf, run, start, until } from './support/cli-helpers.js';
import { AUTH, assertReply, buildDatabase, get, request, statusAnswer, tempDir } from './support/helpers.js';

const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const STATUS = statusAnswer();
const SEARCH_FAILED = { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' };
// A view over every column the own schema needs, whose rows never end.
const ENDLESS = `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
  SELECT n AS id, '2026-03-14' AS date, 435 AS amount_cents, '' AS subject, NULL AS category_id, NULL AS payment_method_id FROM r`;

/** Milliseconds `work` took. */
async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const value = await work();
  return [value, Date.now() - started];
}

test('a view that never ends: its search answers 500 within --search-timeout and only its own process is ended; /status answers meanwhile; SIGTERM stops the service; check ends within six times the limit', async (t) => {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec('CREATE VIEW kasse AS SELECT * FROM entries');
  db.close();
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '1']);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  // The application turns the view into one that never ends.
  const writer = new Database(file);
  writer.exec(`DROP VIEW kasse; CREATE VIEW kasse AS ${ENDLESS}`);
  writer.close();
  // Its new schema seen without a search (the read each second), the file is judged again
  // and served by a new process of its own.
  const served = /'kasse' is a view, so its searches run/g;
  await until(async () => (server.output().stderr.match(served) ?? []).length === 2, 'the file judged again', 5_000);
  const searching = timed(() => get(`${server.api}${SEARCH}`));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const [status, statusMs] = await timed(() => get(`${server.api}status`));
  assertReply(status, 200, STATUS);
  assert.ok(statusMs < 500, `/status after ${statusMs} ms`);
  const [failed, failedMs] = await searching;
  assertReply(failed, 500, SEARCH_FAILED);
  assert.ok(failedMs >= 900 && failedMs < 4_000, `the search answered after ${failedMs} ms`);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stderr, /'kasse' is a view, so its searches run in a process of their own, 1 s each at most/);
  assert.match(
    stopped.stderr,
    /error in GET \/api\/v1\/buchungen: the search took longer than --search-timeout \(1 s\) and was ended; a slow or endless view, or a missing index, may cause it\n/,
  );
  const [checked, checkMs] = await timed(() =>
    run(['check', '--db', file, '--table-names', 'entries=kasse', '--search-timeout', '1']),
  );
  assert.equal(checked.code, 1);
  assert.ok(checkMs < 12_000, `check took ${checkMs} ms`);
  assert.match(
    checked.stdout,
    /^Cannot check: opening .* did not end within 6 s .*; the process that checked it was ended\.$/m,
  );
});

test('a table swapped for a view that never ends while the file is served: the serving process never runs it, the view is searched in a process of its own', async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file, '--search-timeout', '1']);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const writer = new Database(file);
  writer.exec(`ALTER TABLE entries RENAME TO alt; CREATE VIEW entries AS ${ENDLESS}`);
  writer.close();
  // The schema cookie read first in the search's transaction: answered at once, and the
  // file is judged again in the guard.
  const [changed, changedMs] = await timed(() => get(`${server.api}${SEARCH}`));
  assert.equal(changed.status, 500);
  assert.equal(changed.headers['retry-after'], '1');
  assert.ok(changedMs < 1_000, `${changedMs} ms`);
  await until(
    async () => /'entries' is a view, so its searches run/.test(server.output().stderr),
    'the file judged again',
    5_000,
  );
  const [failed, failedMs] = await timed(() => get(`${server.api}${SEARCH}`));
  assertReply(failed, 500, SEARCH_FAILED);
  assert.ok(failedMs < 4_000, `${failedMs} ms`);
  assertReply(await get(`${server.api}status`), 200, STATUS);
  assert.equal((await server.stop()).code, 0);
});

test('the file swapped for a named pipe and back a thousand times: /status is answered throughout, no open blocks the service, and the file is served again once it stands still', async (t) => {
  const file = buildDatabase(t);
  const dir = dirname(file);
  const pipe = join(dir, 'pipe');
  execFileSync('mkfifo', [pipe]);
  const server = await start(t, ['--db', file, '--search-timeout', '1']);
  let swapping = true;
  let swaps = 0;
  const swapper = (async () => {
    while (swapping) {
      renameSync(file, join(dir, 'x'));
      renameSync(pipe, file);
      renameSync(join(dir, 'x'), pipe);
      swaps += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  const ends = Date.now() + 3_000;
  let worst = 0;
  while (Date.now() < ends) {
    const [status, ms] = await timed(() => get(`${server.api}status`));
    assert.equal(status.status, 200);
    worst = Math.max(worst, ms);
    const search = await get(`${server.api}${SEARCH}`);
    assert.ok(search.status === 200 || search.status === 500, String(search.status));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  swapping = false;
  await swapper;
  if (!statSync(file).isFile()) {
    renameSync(file, join(dir, 'x'));
    renameSync(pipe, file);
  }
  assert.ok(swaps > 100, `${swaps} swaps`);
  assert.ok(worst < 1_000, `/status took up to ${worst} ms`);
  // A try that met the pipe held the file until --search-timeout (1 s) and defers the next by
  // four times as long as it took (bin/books/backoff.ts): 4 s at least, more on a busy machine.
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served again', 20_000);
  assert.equal((await server.stop()).code, 0);
});

/** The own schema's book, with `views` more views in its catalog (written into sqlite_schema at once). */
function bookWithViews(t: Parameters<typeof buildDatabase>[0], views: number): string {
  const file = buildDatabase(t);
  addViews(file, views);
  return file;
}

test('a schema of 20,000 views: the service starts within seconds, answers /status at once, and searches in a process of its own', async (t) => {
  const file = bookWithViews(t, 20_000);
  const [server, startMs] = await timed(() => start(t, ['--db', file]));
  assert.ok(startMs < 8_000, `listening after ${startMs} ms`);
  const [status, statusMs] = await timed(() => get(`${server.api}status`));
  assertReply(status, 200, STATUS);
  assert.ok(statusMs < 500, `/status after ${statusMs} ms`);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const stopped = await server.stop();
  assert.match(stopped.stderr, /its schema holds 20,?0\d\d objects, so its searches run in a process of their own/);
});

// The primary of --workers judged such a file before the workers started, and ended the start (exit 1).
test('a schema of 200,000 views, which takes SQLite minutes to load: listening at once, /status answered, searches 500, the open given up after --search-timeout; one process and --workers 2 alike', async (t) => {
  const file = bookWithViews(t, 200_000);
  for (const workers of ['1', '2']) {
    const args = ['--db', file, '--search-timeout', '2', '--workers', workers];
    const [server, startMs] = await timed(() => start(t, args));
    assert.ok(startMs < 8_000, `--workers ${workers}: listening after ${startMs} ms`);
    assertReply(await get(`${server.api}status`), 200, STATUS);
    assert.equal((await get(`${server.api}${SEARCH}`)).status, 500);
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stderr, /did not open within 2 s \(.*a schema too large to load\): not served/);
  }
});

test('a named pipe in place of the journal holds SQLite inside the serving process: its last-resort thread ends it after six times --search-timeout, with one line', async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file, '--search-timeout', '1']);
  execFileSync('mkfifo', [`${file}-journal`]);
  // SQLite opens a -journal it finds to see whether it is hot: the open waits for a writer
  // to the pipe that never comes, inside the statement, where no signal handler runs.
  void request(`${server.api}${SEARCH}`, { headers: { authorization: AUTH } }).catch(() => undefined);
  const started = Date.now();
  await until(async () => server.child.exitCode !== null || server.child.signalCode !== null, 'the end', 12_000);
  const endedMs = Date.now() - started;
  assert.equal(server.child.signalCode, 'SIGKILL');
  assert.ok(endedMs >= 5_000 && endedMs < 10_000, `ended after ${endedMs} ms`);
  const lines = server.output().stderr.trim().split('\n');
  assert.match(
    lines.at(-1) ?? '',
    /^\S+ booking-search-server: the event loop has not turned for [67] s \(a statement or an open of a database file inside SQLite that does not return\); ending this process \(SIGKILL\) so that it is started again$/,
  );
});

test('the file replaced every half second by a virtual table, a view that never ends and the good file: no guard process outlives its file, and SIGTERM ends the service with exit 0', async (t) => {
  const file = buildDatabase(t);
  const dir = dirname(file);
  const good = join(dir, 'good.sqlite');
  const virtual = join(dir, 'vt.sqlite');
  const slow = join(dir, 'slow.sqlite');
  execFileSync('cp', ['-p', file, good]);
  execFileSync('cp', ['-p', file, virtual]);
  execFileSync('cp', ['-p', file, slow]);
  const vt = new Database(virtual);
  vt.exec(`ALTER TABLE entries RENAME TO plain;
    CREATE VIRTUAL TABLE entries USING fts5(id, date, amount_cents, subject, category_id, payment_method_id);
    INSERT INTO entries SELECT id, date, amount_cents, subject, category_id, payment_method_id FROM plain;
    DROP TABLE plain;`);
  vt.close();
  const endless = new Database(slow);
  endless.exec(`DROP TABLE entries; CREATE VIEW entries AS ${ENDLESS}`);
  endless.close();
  const server = await start(t, ['--db', file, '--search-timeout', '2']);
  const cycle = [virtual, good, slow, good];
  for (let round = 0; round < 12; round += 1) {
    // As a restore does it: a copy beside the file, renamed over it.
    execFileSync('cp', ['-p', cycle[round % cycle.length] as string, join(dir, '.tmp')]);
    renameSync(join(dir, '.tmp'), file);
    const search = await get(`${server.api}${SEARCH}`);
    assert.ok(search.status === 200 || search.status === 500, String(search.status));
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // The good file stands still: its searches run in the serving process, and no guard
  // process is left but the one that opens files, which ends when idle for 5 s.
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'served again', 5_000);
  await until(async () => guardsOf(server.child.pid as number).length === 0, 'no guard process left', 8_000);
  assert.doesNotMatch(server.output().stderr, /no file is open in the guard/);
  const [stopped, stopMs] = await timed(() => server.stop());
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(stopMs < 3_000, `ended ${stopMs} ms after SIGTERM`);
});

const QUICK = 'von=2026-03-01&bis=2026-03-31&betrag=-4.35';

/** The fixture's file, its entries as guardOverEndlessRows says. */
function endlessRows(t: TestContext): string {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec(`ALTER TABLE entries RENAME TO kasse;
    CREATE VIEW entries AS SELECT id, date, amount_cents, subject, category_id, payment_method_id FROM kasse
    UNION ALL SELECT * FROM (${ENDLESS.replace('n AS id', 'n + 1000000 AS id').replace('2026-03-14', '2027-01-01')})
    UNION ALL SELECT * FROM (${ENDLESS.replace('n AS id', '-n AS id').replace('2026-03-14', '2028-01-01').replace('FROM r)', 'FROM r WHERE n < 1000000)')})`);
  db.close();
  return file;
}
const ENDLESS_SEARCH = 'von=2027-01-01&bis=2027-01-31&betrag=-4.35';
const BUSY_SEARCH = 'von=2028-01-01&bis=2028-01-31&betrag=-4.35';

/**
 * A book's guard over a file whose entries are the fixture's, for 2027 rows that never end
 * and for 2028 a million: a search of March (QUICK) is quick, one of 2027 (ENDLESS_SEARCH)
 * endless, one of 2028 (BUSY_SEARCH) takes a while. `ended` holds what the guard's `ended` heard.
 */
async function guardOverEndlessRows(t: TestContext) {
  const file = endlessRows(t);
  const ended: string[] = [];
  // The limit covers the start of the process (through tsx here) as well as the search.
  const guard = new Guard({
    limitMs: 3_000,
    once: true,
    endedError: () => Object.assign(new Error('the file is being opened again'), { code: 'SQLITE_BUSY' }),
    ended: (why) => ended.push(why),
  });
  t.after(() => guard.end());
  const opened = await guard.open(file, { app: undefined, tables: {} });
  assert.equal(opened.kind, 'ready', JSON.stringify(opened));
  assert.equal(guardsOf(process.pid).length, 1);
  const searches = guard.searches();
  const search = (text: string): Promise<Outcome<SearchRows>> => {
    const parsed = parseSearchQuery(text);
    assert.ok(parsed.ok);
    return new Promise((resolve) =>
      searches.queue(parsed.query, resolve, { user: 'kasse', address: '127.0.0.1', connection: {} }),
    );
  };
  return { file, guard, search, ended };
}

test('the service: a search over views past --search-timeout gets its 500, and the searches sent meanwhile from other clients get their bookings', async (t) => {
  const server = await start(t, ['--db', endlessRows(t), '--search-timeout', '2']);
  assert.equal((await get(`${server.api}buchungen?${QUICK}`)).status, 200);
  const endless = timed(() => get(`${server.api}buchungen?${ENDLESS_SEARCH}`));
  const others: Array<ReturnType<typeof get>> = [];
  for (let i = 0; i < 10; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    others.push(get(`${server.api}buchungen?${QUICK}`));
  }
  const [failed, failedMs] = await endless;
  assertReply(failed, 500, SEARCH_FAILED);
  assert.ok(failedMs < 3_000, `${failedMs} ms`);
  for (const other of await Promise.all(others)) {
    assert.equal(other.status, 200, other.body);
    assert.equal((JSON.parse(other.body) as { anzahl: number }).anzahl, 1);
  }
  const stopped = await server.stop();
  assert.match(
    stopped.stderr,
    /error in GET \/api\/v1\/buchungen: the search took longer than --search-timeout \(2 s\) and was ended; a slow or endless view, or a missing index, may cause it\n/,
  );
  assert.doesNotMatch(stopped.stderr, /opened again/);
});

const codeOf = (outcome: Outcome<SearchRows>): string | undefined => errorCode(outcome.ok ? undefined : outcome.error);

test("a book's guard whose process was ended by its time limit: only the search past the limit gets its 500; the searches sent meanwhile and while the file is opened again are answered from a new process; once ended, it starts none", async (t) => {
  const { guard, search, ended } = await guardOverEndlessRows(t);
  // While the guard is busy, one sent with the endless one, before it: both wait for the same
  // turn of the guard, and the quick one's answer for the end of that turn, which never comes.
  const busy = timed(() => search(BUSY_SEARCH));
  const others: Array<Promise<Outcome<SearchRows>>> = [search(QUICK)];
  const endless = timed(() => search(ENDLESS_SEARCH));
  // Others, from other connections, every 300 ms while it runs, and after its process was ended.
  for (let i = 0; i < 12; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    others.push(search(QUICK));
  }
  const [busied, busyMs] = await busy;
  assert.ok(busied.ok && busyMs > 100, `${busyMs} ms`);
  const [timedOut, endlessMs] = await endless;
  assert.equal(codeOf(timedOut), 'GUARD_TIMEOUT');
  assert.match(String(timedOut.ok ? '' : timedOut.error), /took longer than --search-timeout \(3 s\) and was ended/);
  // Its time counted from its start, once the busy one was answered.
  assert.ok(endlessMs >= busyMs + 2_900 && endlessMs < busyMs + 4_000, `${endlessMs} ms, ${busyMs} ms busy`);
  for (const outcome of await Promise.all(others)) {
    assert.ok(outcome.ok, String(outcome.ok ? '' : outcome.error));
    assert.equal(outcome.result.count, 1);
  }
  assert.deepEqual(ended, [], 'a process followed');
  // The killed process waited for, not left as a zombie: one process, the new one.
  await until(async () => guardsOf(process.pid).length === 1, 'the killed guard process gone', 2_000);
  assert.ok((await search(QUICK)).ok);
  // Once ended (its file replaced), it starts none.
  guard.end();
  assert.equal(codeOf(await search(QUICK)), 'SQLITE_BUSY');
  assert.deepEqual(guardsOf(process.pid), []);
});

test("a book's guard whose file was replaced while a search ran past the limit: the new process does not serve the other file; the searches that waited get the 500 with Retry-After of a file opened again, and the book hears it", async (t) => {
  const { file, search, ended } = await guardOverEndlessRows(t);
  const endless = search(ENDLESS_SEARCH);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const waiting = search(QUICK);
  const restore = join(dirname(file), '.restore');
  copyFileSync(file, restore);
  renameSync(restore, file);
  assert.equal(codeOf(await endless), 'GUARD_TIMEOUT');
  assert.equal(codeOf(await waiting), 'SQLITE_BUSY');
  assert.deepEqual(ended, ['after a search took longer than 3 s, a new process could not open it']);
  assert.equal(codeOf(await search(QUICK)), 'SQLITE_BUSY');
  await until(async () => guardsOf(process.pid).length === 0, 'no guard process left', 2_000);
});

test("a book's guard whose process crashed: the searches in it get the 500 with Retry-After of a file opened again, not search_failed, and the book hears it", async (t) => {
  const { search, ended } = await guardOverEndlessRows(t);
  const [pid] = guardsOf(process.pid);
  const endless = search(ENDLESS_SEARCH);
  const quick = search(QUICK);
  await new Promise((resolve) => setTimeout(resolve, 300));
  process.kill(pid as number, 'SIGKILL');
  assert.deepEqual([codeOf(await endless), codeOf(await quick)], ['SQLITE_BUSY', 'SQLITE_BUSY']);
  assert.deepEqual(ended, ["its searches' process ended (SIGKILL)"]);
  assert.equal(codeOf(await search(QUICK)), 'SQLITE_BUSY');
});

test("a book's guard whose process died while idle: the book hears it at once, and a search after it gets the 500 with Retry-After of a file opened again", async (t) => {
  const { search, ended } = await guardOverEndlessRows(t);
  assert.ok((await search(QUICK)).ok);
  const [pid] = guardsOf(process.pid);
  process.kill(pid as number, 'SIGKILL');
  await until(async () => ended.length > 0, 'the book told', 2_000);
  assert.deepEqual(ended, ["its searches' process ended (SIGKILL)"]);
  assert.equal(codeOf(await search(QUICK)), 'SQLITE_BUSY');
  assert.deepEqual(guardsOf(process.pid), [], 'none started again');
});

test('SIGTERM while the file is being opened in the guard (a named pipe in place of its journal) ends the service at once with exit 0, the guard process with it', async (t) => {
  const file = buildDatabase(t);
  const dir = dirname(file);
  const server = await start(t, ['--db', file, '--search-timeout', '60']);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  // A restore by rename, beside a journal that is a named pipe: the guard's open of the new
  // file waits in SQLite for a writer to the pipe, up to the limit of 60 s.
  execFileSync('cp', ['-p', file, join(dir, '.restore')]);
  execFileSync('mkfifo', [`${file}-journal`]);
  renameSync(join(dir, '.restore'), file);
  await until(async () => guardsOf(server.child.pid as number).length > 0, 'the guard opening', 5_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const guards = guardsOf(server.child.pid as number);
  const [stopped, stopMs] = await timed(() => server.stop());
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(stopMs < 5_000, `ended ${stopMs} ms after SIGTERM`);
  assert.equal(stopped.stderr, '', 'nothing said of the file the stop interrupted');
  for (const pid of guards) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `guard ${pid} still there`);
});

test("a restore by rename as root beside the application's own directories is judged against the application the start found, in the guard too: served within seconds", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give directories to another user (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const root = tempDir(t);
  chmodSync(root, 0o755);
  // The application's directories and file, as its user keeps them.
  const home = join(root, 'he');
  const dir = join(home, 'x');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'e.sqlite');
  copyFileSync(buildDatabase(t), file);
  for (const path of [home, dir, file]) chownSync(path, nobody, nobody);
  const server = await start(t, ['--db', file]);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  // An admin restores a backup as root: the file is root's now, in the application's directories.
  const restore = join(dir, '.restore');
  copyFileSync(buildDatabase(t), restore);
  chmodSync(restore, 0o644);
  renameSync(restore, file);
  const restored = Date.now();
  await until(
    async () => /was replaced; serving the new file/.test(server.output().stderr),
    'the restored file served',
    5_000,
  );
  assert.ok(Date.now() - restored < 3_000, `served ${Date.now() - restored} ms after the rename`);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const stopped = await server.stop();
  assert.doesNotMatch(stopped.stderr, /refusing database/);
});

test('a search waiting in a guard when its file is replaced gets the 500 with Retry-After of a file opened again, and no internal-error line', async (t) => {
  const file = buildDatabase(t);
  const dir = dirname(file);
  execFileSync('cp', ['-p', file, join(dir, 'good.sqlite')]);
  const db = new Database(file);
  db.exec(`DROP TABLE entries; CREATE VIEW entries AS ${ENDLESS}`);
  db.close();
  const server = await start(t, ['--db', file, '--search-timeout', '20']);
  const searching = timed(() => get(`${server.api}${SEARCH}`));
  await new Promise((resolve) => setTimeout(resolve, 300));
  renameSync(join(dir, 'good.sqlite'), file);
  const [reply, ms] = await searching;
  assertReply(reply, 500, { fehler: SEARCH_FAILED.fehler, code: 'database_unavailable' });
  assert.equal(reply.headers['retry-after'], '1');
  assert.ok(ms < 5_000, `answered after ${ms} ms`);
  await until(async () => (await get(`${server.api}${SEARCH}`)).status === 200, 'the new file served', 5_000);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
  assert.doesNotMatch(stopped.stderr, /error in GET|did not answer/);
});

test('a named pipe given as the database is never opened: the start and check refuse it at once with one line, whatever --search-timeout', async (t) => {
  const dir = dirname(buildDatabase(t));
  const pipe = join(dir, 'pipe.sqlite');
  execFileSync('mkfifo', [pipe]);
  // Opened, a pipe would wait for a writer that never comes: the open would run into the
  // time limit of 30 s and answer with another line.
  const [started, startMs] = await timed(() => run(['--db', pipe, '--port', '0', '--search-timeout', '30']));
  assertFails(started, 1, `booking-search-server: cannot open database ${pipe}: not a regular file`);
  assert.ok(startMs < 10_000, `refused after ${startMs} ms`);
  const [checked, checkMs] = await timed(() => run(['check', '--db', pipe, '--search-timeout', '30']));
  assert.equal(checked.code, 1);
  assert.match(checked.stdout, /^Cannot check: cannot open database .*: not a regular file$/m);
  assert.ok(checkMs < 10_000, `check ended after ${checkMs} ms`);
});
