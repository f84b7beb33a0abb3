// A book served over a view that is slow to read for a while (the application holds the
// file, a cold cache): the judgement of its bookings when the file is opened is bounded by
// --search-timeout, in the service and in `check`, with one wording naming the view; the
// service tries the file again as one that cannot be read now, and serves it once the view
// is quick again, without a restart.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { guardsOf, type Running, run, start, until } from './support/cli-helpers.js';
import { AUTH, buildDatabase, get, type Reply, request, tempDir } from './support/helpers.js';

const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const ADMIN_LINE = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//;
const SLOW =
  "judging its bookings took longer than --search-timeout (1 s) and was ended: 'kasse' is a view, slow to read now";
// Counting to `slow.n` before the first row: for ever while `slow` holds 10^12, at once when it is empty.
const VIEW = `CREATE TABLE slow(n INTEGER);
  CREATE VIEW kasse AS SELECT e.id, e.date,
    e.amount_cents + (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < (SELECT max(n) FROM slow))
      SELECT count(*) * 0 FROM r) AS amount_cents,
    e.subject, e.category_id, e.payment_method_id FROM entries e`;

/**
 * How far the view counts for a search in flight for a few seconds on this machine, whatever
 * its speed (a search reads the view twice, each read about 2 s): measured here, on a million.
 */
const IN_FLIGHT = (() => {
  const db = new Database(':memory:');
  const steps = 1_000_000;
  const started = performance.now();
  db.prepare(
    `WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ${steps}) SELECT count(*) FROM r`,
  ).get();
  const ms = performance.now() - started;
  db.close();
  return Math.round((steps * 2_000) / ms);
})();

/** The fixture book with the view `kasse` over its entries, slow to read while `slow` is. */
function bookOverView(t: Parameters<typeof buildDatabase>[0], slow: boolean): string {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec(VIEW);
  if (slow) setSlow(file, true);
  db.close();
  return file;
}

/** Makes the view slow (and, with `bump`, changes the schema, so that the service opens the file again) or quick. */
function setSlow(file: string, slow: boolean, bump = false): void {
  const db = new Database(file);
  db.exec(slow ? 'INSERT INTO slow VALUES (1000000000000)' : 'DELETE FROM slow');
  if (bump) db.exec('CREATE TABLE bumped(x)');
  db.close();
}

/** The service over `file`'s view `kasse`, --search-timeout 1, and its admin listener's origin. */
async function serveOverView(t: Parameters<typeof buildDatabase>[0], file: string) {
  const args = ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '1', '--admin-port', '0'];
  const server = await start(t, args);
  return { server, admin: ADMIN_LINE.exec(server.output().stdout)?.[1] as string };
}

async function readyOf(admin: string): Promise<{ state: string; reason?: string }> {
  const body = JSON.parse((await request(`${admin}/ready`)).body) as { books: { state: string; reason?: string }[] };
  return body.books[0] as { state: string; reason?: string };
}

test('check over a view slow to read: its judgement of the bookings is ended after --search-timeout, naming the view, exit 1', async (t) => {
  const file = bookOverView(t, true);
  const started = Date.now();
  const checked = await run(['check', '--db', file, '--table-names', 'entries=kasse', '--search-timeout', '1']);
  const ms = Date.now() - started;
  assert.equal(checked.code, 1, JSON.stringify(checked));
  assert.equal(checked.stdout, `Database: ${file}\nCannot check: ${SLOW}.\n`);
  assert.ok(ms < 5_000, `check took ${ms} ms`);
});

test('check whose guard process is killed while it judges the bookings through a view: it says so, not that the judgement took too long, exit 1', async (t) => {
  const file = bookOverView(t, true);
  const checking = run(['check', '--db', file, '--table-names', 'entries=kasse', '--search-timeout', '5']);
  // The check's guard process: the guard whose parent's command names this file.
  let guard: [number, number, string] | undefined;
  await until(() => {
    const all = processes();
    const checker = all.find(([, , args]) => args.includes(`check --db ${file}`))?.[0];
    guard = all.find(([, parent, args]) => parent === checker && /guard\.[jt]s/.test(args));
    return guard !== undefined;
  }, "the check's guard process");
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.kill(guard?.[0] as number, 'SIGKILL');
  const checked = await checking;
  assert.equal(checked.code, 1, JSON.stringify(checked));
  assert.equal(checked.stdout, `Database: ${file}\nCannot check: the process that checked it ended (SIGKILL).\n`);
});

/** Every process: its id, its parent's, its command line. */
function processes(): Array<[number, number, string]> {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => [Number(match[1]), Number(match[2]), match[3] as string]);
}

test('a view slow to read when the file is opened again: the book waits, /ready and the log name the view, and it is served once the view is quick again', async (t) => {
  const file = bookOverView(t, false);
  const { server, admin } = await serveOverView(t, file);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  // The search that finds the view slow has its guard process ended, and the file opened again.
  setSlow(file, true);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 500);
  await until(async () => (await readyOf(admin)).reason === SLOW, 'the slow view said');
  assert.equal((await readyOf(admin)).state, 'waiting');
  const failed = await get(`${server.api}${SEARCH}`);
  assert.equal(failed.status, 500);
  assert.equal(failed.headers['retry-after'], '1');
  setSlow(file, false);
  await until(async () => (await readyOf(admin)).state === 'serving', 'served again');
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const said = `database ${file} cannot be read yet: ${SLOW}; searches answer 500 with Retry-After until it can\n`;
  assert.ok(stopped.stderr.includes(said), stopped.stderr);
  assert.ok(stopped.stderr.includes(`database ${file} can be read now; serving it\n`), stopped.stderr);
});

test('--workers 2 over a view slow to read: the primary judges the file within --search-timeout, the workers start and wait for it, naming the view', async (t) => {
  const file = bookOverView(t, true);
  const args = ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '1', '--workers', '2'];
  const started = Date.now();
  const server = await start(t, args);
  const ms = Date.now() - started;
  // The default limit, 10 s, would hold the start that long.
  assert.ok(ms < 8_000, `listening after ${ms} ms`);
  const said = `database ${file} cannot be read yet: ${SLOW}; searches answer 500 with Retry-After until it can`;
  assert.equal(server.output().stderr.split(said).length, 3, server.output().stderr);
  assert.equal((await get(`${server.api}${SEARCH}`)).headers['retry-after'], '1');
  assert.equal((await server.stop()).code, 0);
});

/**
 * What an application with a rollback journal meets, writing `ms` long a row every 50 ms with
 * a busy timeout of 1 s; then `last`, the write that makes the view quick, tried until it
 * passes. Counted: its commits, those refused SQLITE_BUSY, and those held up half a second or more.
 */
async function write(file: string, ms: number, last: string): Promise<{ commits: number; busy: number; held: number }> {
  const db = new Database(file, { timeout: 1_000 });
  db.exec('CREATE TABLE IF NOT EXISTS written(at INTEGER)');
  const insert = db.prepare('INSERT INTO written VALUES (?)');
  let commits = 0;
  let busy = 0;
  let held = 0;
  const once = (run: () => void): boolean => {
    const begun = Date.now();
    try {
      db.transaction(run).immediate();
      return true;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      busy += 1;
      return false;
    } finally {
      if (Date.now() - begun >= 500) held += 1;
    }
  };
  try {
    for (const end = Date.now() + ms; Date.now() < end; ) {
      if (once(() => insert.run(Date.now()))) commits += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    while (!once(() => db.exec(last))) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    db.close();
  }
  return { commits, busy, held };
}

test('a view that stays slow is tried again after a growing wait, sooner once the file is written: the application can commit, and its write that makes the view quick is served within seconds', async (t) => {
  const file = bookOverView(t, true);
  const { server, admin } = await serveOverView(t, file);
  const waiting = await readyOf(admin);
  assert.deepEqual([waiting.state, waiting.reason], ['waiting', SLOW]);
  const written = await write(file, 8_000, 'DELETE FROM slow');
  const quick = Date.now();
  await until(async () => (await readyOf(admin)).state === 'serving', 'served again');
  const ms = Date.now() - quick;
  t.diagnostic(`${JSON.stringify(written)}, served ${ms} ms after the view was made quick`);
  // Tried at each look, the file is read for a second of every one or two: four or more commits held up.
  assert.ok(written.held <= 2, JSON.stringify(written));
  assert.ok(ms < 8_000, `served ${ms} ms after the write that makes the view quick`);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  assert.equal((await server.stop()).code, 0);
});

// A removed book's search in flight was cut after a fixed 10 s (500 database_unavailable),
// while SIGTERM waits 5 s beyond --search-timeout: one grace now serves both.
test('SIGHUP removing a book while its search runs lets the search run its --search-timeout, as SIGTERM does, not a grace of its own', async (t) => {
  const file = bookOverView(t, false);
  const dir = tempDir(t);
  const config = join(dir, 'books.conf');
  const section = (name: string, db: string, extra = ''): string =>
    `[book ${name}]\ndb = ${db}\nbase-path = /${name}\n${extra}`;
  const write = (books: string[]): void =>
    writeFileSync(config, ['search-timeout = 11', ...books].join('\n'), { mode: 0o600 });
  const kept = section('k', buildDatabase(t));
  write([kept, section('v', file, 'table-names = entries=kasse\n')]);
  const server = await start(t, ['--config', config]);
  // Endless from now: the search runs until --search-timeout ends it.
  setSlow(file, true);
  const began = Date.now();
  const searched = fetch(`${server.origin}/v/api/v1/${SEARCH}`, { headers: { authorization: AUTH } });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  write([kept]);
  server.child.kill('SIGHUP');
  const reply = await searched;
  const ms = Date.now() - began;
  const body = (await reply.json()) as { code: string };
  t.diagnostic(`${reply.status} ${JSON.stringify(body)} after ${ms} ms`);
  // Ended by --search-timeout (search_failed), not by the book's close (database_unavailable).
  assert.equal(body.code, 'search_failed', `${reply.status} ${JSON.stringify(body)} after ${ms} ms`);
  assert.ok(ms >= 10_500, `answered ${reply.status} ${JSON.stringify(body)} after ${ms} ms`);
  assert.match(server.output().stderr, /SIGHUP: configuration re-read from .*: 1 book: removed v/);
  assert.equal((await server.stop()).code, 0);
});

/**
 * The CLI over a view whose search counts for about two seconds before its first row (within
 * --search-timeout), such a search sent and half a second given to reach the view.
 */
async function searchingOverSlowView(
  t: Parameters<typeof buildDatabase>[0],
  more: string[] = [],
  ownGroup = false,
): Promise<{ server: Running; inFlight: Promise<Reply>; output: () => string }> {
  const file = bookOverView(t, false);
  const db = new Database(file);
  db.exec(`INSERT INTO slow VALUES (${IN_FLIGHT})`);
  db.close();
  const args = ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '60', ...more];
  const server = await start(t, args, undefined, undefined, { ownGroup });
  const started = Date.now();
  const inFlight = get(`${server.api}${SEARCH}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const output = (): string => `after ${Date.now() - started} ms: ${JSON.stringify(server.output())}`;
  return { server, inFlight, output };
}

// systemd's default KillMode (control-group), supervisord's stopasgroup and `kill -TERM
// -PGID` send SIGTERM to every process of the service, its searches' processes too: the
// first signal still lets a search in flight finish.
test('SIGTERM to the whole process group lets a search over a view in flight finish: its process is not ended by it', async (t) => {
  const { server, inFlight, output } = await searchingOverSlowView(t, [], true);
  const stopped = server.stop('SIGTERM');
  const reply = await inFlight;
  assert.equal(reply.status, 200, `${reply.body} ${output()}`);
  const { code, stdout, stderr } = await stopped;
  assert.equal(code, 0, output());
  assert.doesNotMatch(stdout + stderr, /searches' process ended/);
});

// A terminal or ssh session that closes, and `systemctl kill -s HUP`, send SIGHUP to every
// process of the service: the service reloads, and the search in flight still finishes.
test('SIGHUP to the whole process group reloads once and lets a search over a view in flight finish, with --workers too', async (t) => {
  for (const workers of [[], ['--workers', '2']]) {
    await t.test(workers.join(' ') || 'one process', async (t) => {
      const { server, inFlight, output } = await searchingOverSlowView(t, workers, true);
      process.kill(-(server.child.pid as number), 'SIGHUP');
      const reply = await inFlight;
      assert.equal(reply.status, 200, `${reply.body} ${output()}`);
      assert.equal((await get(`${server.api}${SEARCH}`)).status, 200, output());
      const { code, stdout, stderr } = await server.stop('SIGTERM');
      assert.equal(code, 0, output());
      assert.doesNotMatch(stdout + stderr, /searches' process ended/);
      // One reload, said once: a worker does not reload on its own SIGHUP besides the primary's.
      assert.equal((stdout + stderr).match(/SIGHUP: /g)?.length, 1, stdout + stderr);
      assert.match(stdout + stderr, /^\S+ SIGHUP: /m);
    });
  }
});

// A reload asked for while the service stops (a `systemctl reload` racing a stop) is not
// started: its lines, and what it would serve, came after `stopped`.
test('SIGHUP after SIGTERM, while a search over a view finishes: no reload, the search answered, exit 0', async (t) => {
  const { server, inFlight, output } = await searchingOverSlowView(t);
  const stopped = server.stop('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  server.child.kill('SIGHUP');
  const reply = await inFlight;
  const { code, stdout, stderr } = await stopped;
  assert.equal(reply.status, 200, `${reply.body} ${output()}`);
  assert.equal(code, 0, stdout + stderr);
  assert.match(stdout + stderr, /stopping on SIGTERM/);
  assert.doesNotMatch(stdout + stderr, /SIGHUP/);
});

// The other order: a stop while a reload checks a book it adds. The stop closes that book as
// it closes the served ones, ending the check's guard process: the book was not slow, it was
// stopped, and a closed book says nothing (the books' log itself is not silenced by a stop).
test('SIGTERM while a reload checks a book it adds over a slow view: nothing said of that book, nor of the primary by a worker, exit 0', async (t) => {
  for (const workers of [[], ['--workers', '2']]) {
    await t.test(workers.join(' ') || 'one process', async (t) => {
      const file = bookOverView(t, false);
      const db = new Database(file);
      db.exec(`INSERT INTO slow VALUES (${IN_FLIGHT})`);
      db.close();
      const config = join(tempDir(t), 'books.conf');
      const kept = `[book k]\ndb = ${buildDatabase(t)}\nbase-path = /k\n`;
      writeFileSync(config, `search-timeout = 60\n${kept}`, { mode: 0o600 });
      const server = await start(t, ['--config', config, ...workers]);
      const added = `[book neu]\ndb = ${file}\nbase-path = /neu\ntable-names = entries=kasse\n`;
      writeFileSync(config, `search-timeout = 60\n${kept}${added}`);
      server.child.kill('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { code, stdout, stderr } = await server.stop('SIGTERM');
      assert.equal(code, 0, stdout + stderr);
      assert.doesNotMatch(stdout + stderr, /book neu|took longer|did not open|takes no messages/, stdout + stderr);
    });
  }
});

// A stop that must wait for a search drops the reload it interrupts at once: the book being
// added is closed as the stop begins, so that nothing is said of it while the search ends
// (its check's process, ended here, is otherwise what the stop's end ends), and no reload
// starts again.
test('SIGTERM while a reload checks a book it adds and a search over a view runs: that book is dropped at once, unsaid; the search is answered; POST /-/reload is 503', async (t) => {
  const slow = bookOverView(t, false);
  const db = new Database(slow);
  db.exec(`INSERT INTO slow VALUES (${IN_FLIGHT})`);
  db.close();
  const endless = bookOverView(t, true);
  const config = join(tempDir(t), 'books.conf');
  const kept = `[book k]\ndb = ${slow}\nbase-path = /k\ntable-names = entries=kasse\n`;
  writeFileSync(config, `search-timeout = 60\n${kept}`, { mode: 0o600 });
  const server = await start(t, ['--config', config, '--admin-port', '0']);
  const admin = ADMIN_LINE.exec(server.output().stdout)?.[1] as string;
  const pid = server.child.pid as number;
  // The book's own process alone, once the one that opened it has ended, idle.
  await until(
    () => guardsOf(pid).length === 1,
    () => `guard processes: ${guardsOf(pid).join(', ')}`,
    15_000,
  );
  const searching = guardsOf(pid);
  const inFlight = get(`${server.origin}/k/api/v1/${SEARCH}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  writeFileSync(
    config,
    `search-timeout = 60\n${kept}[book neu]\ndb = ${endless}\nbase-path = /neu\ntable-names = entries=kasse\n`,
  );
  server.child.kill('SIGHUP');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const stopped = server.stop('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const reload = await request(`${admin}/-/reload`, { method: 'POST' });
  assert.equal(reload.status, 503, reload.body);
  for (const guard of guardsOf(pid)) if (!searching.includes(guard)) process.kill(guard, 'SIGKILL');
  const reply = await inFlight;
  assert.equal(reply.status, 200, reply.body);
  const { code, stdout, stderr } = await stopped;
  assert.equal(code, 0, stdout + stderr);
  assert.match(stdout, / stopped\n$/);
  assert.doesNotMatch(stdout + stderr, /book neu|POST \/-\/reload:/, stdout + stderr);
});

// An alert on the gauge of serving processes reads a stop alike in both modes.
test('booking_search_processes is 0 from SIGTERM on, while a search holds the stop, in one process and with --workers 2', async (t) => {
  for (const workers of [[], ['--workers', '2']]) {
    await t.test(workers.join(' ') || 'one process', async (t) => {
      const { server, inFlight, output } = await searchingOverSlowView(t, ['--admin-port', '0', ...workers]);
      const admin = ADMIN_LINE.exec(server.output().stdout)?.[1] as string;
      assert.match((await request(`${admin}/metrics`)).body, /^booking_search_processes [12]$/m);
      const stopped = server.stop('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.match((await request(`${admin}/metrics`)).body, /^booking_search_processes 0$/m, output());
      assert.equal((await inFlight).status, 200, output());
      assert.equal((await stopped).code, 0, output());
    });
  }
});

// The serving process killed while its guard is inside a statement: the guard's own event
// loop cannot hear its channel close, and only its last-resort thread ends it.
test('the serving process killed (SIGKILL) while its guard process is stuck in a statement over a view: the guard ends within 2 s, not when the statement would', async (t) => {
  const file = bookOverView(t, false);
  const args = ['--db', file, '--table-names', 'entries=kasse', '--search-timeout', '60'];
  const server = await start(t, args);
  const pid = server.child.pid as number;
  // A search that counts for ever.
  setSlow(file, true);
  get(`${server.api}${SEARCH}`).catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 500));
  const guards = guardsOf(pid);
  assert.ok(guards.length > 0, 'a guard process');
  process.kill(pid, 'SIGKILL');
  // A process that ended but was not reaped yet (its parent is gone) is a zombie: not alive.
  const alive = (guard: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${guard}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  t.after(() => {
    for (const guard of guards.filter(alive)) process.kill(guard, 'SIGKILL');
  });
  await until(async () => !guards.some(alive), 'the guard process gone', 2_000);
});
