// A book served over a view runs its searches in a guard process of its own. When that
// process dies while idle (the OOM killer, an admin's kill, a crash), the book hears it at
// once, as when it dies in a search: one line says so, the file is opened again in a new
// process, and the next search is answered; with --workers 2, in each worker. The process
// that opens the file again, killed before it answers, has the file tried again at the next
// look, not given up as one that did not open in time.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { cleanEnv, guardsOf, start, USER, waitFor } from './support/cli-helpers.js';
import { buildDatabase, get, request } from './support/helpers.js';

const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const ENDED = /: its searches' process ended \(SIGKILL\); it is opened again\n/;

/** The fixture book, its bookings read through the view `kasse`. */
function bookOverView(t: TestContext): string {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec('CREATE VIEW kasse AS SELECT * FROM entries');
  db.close();
  return file;
}

/** Kills every guard process of `pid` (SIGKILL); how many there were. */
function killGuards(pid: number): number {
  const guards = guardsOf(pid);
  for (const guard of guards) process.kill(guard, 'SIGKILL');
  return guards.length;
}

/** `count` searches in a row answered 200, within `ms`; a 500 meanwhile must be a file opened again. */
async function answeredWithin(api: string, count: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let inARow = 0;
  while (inARow < count) {
    const reply = await get(`${api}${SEARCH}`);
    if (reply.status === 200) inARow += 1;
    else {
      inARow = 0;
      assert.equal(reply.status, 500, reply.body);
      assert.match(reply.body, /"code":"database_unavailable"/);
      assert.equal(reply.headers['retry-after'], '1');
      if (Date.now() > deadline) assert.fail(`no ${count} searches answered in a row within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

test('a guard process, which reads the file another user may have written, holds no password from the environment', async (t) => {
  const server = await start(t, ['--db', bookOverView(t), '--table-names', 'entries=kasse']);
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const guards = guardsOf(server.child.pid as number);
  assert.ok(guards.length > 0, 'a guard process');
  for (const guard of guards) {
    const environment = readFileSync(`/proc/${guard}/environ`, 'utf8').split('\0');
    assert.ok(environment.includes(`PATH=${process.env['PATH']}`), 'the rest of the environment is kept');
    assert.deepEqual(
      environment.filter((entry) => /^BOOKING_SEARCH_(?:USER|PASSWORD)=/.test(entry)),
      [],
      'no credentials',
    );
  }
});

test("a book's guard process killed while idle: the book hears it at once, says so, opens the file again in a new process, and the next search is answered within 2 s", async (t) => {
  const file = bookOverView(t);
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse', '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1];
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const pid = server.child.pid as number;
  assert.ok(killGuards(pid) > 0, 'a guard process');
  const killed = Date.now();
  // Heard without a search asking.
  await waitFor(() => server.output().stderr, ENDED);
  await answeredWithin(server.api, 1, 2_000);
  assert.ok(Date.now() - killed < 3_000, `answered ${Date.now() - killed} ms after the kill`);
  assert.ok(guardsOf(pid).length > 0, 'a new guard process');
  const ready = JSON.parse((await request(`${admin}/ready`)).body) as { books: { state: string }[] };
  assert.equal(ready.books[0]?.state, 'serving');
  // Killed again: heard again.
  killGuards(pid);
  await waitFor(() => server.output().stderr, ENDED, 2);
  await answeredWithin(server.api, 1, 2_000);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stderr, /was opened and checked again; serving it\n/);
  assert.doesNotMatch(stopped.stderr, /error in GET/);
});

test("--workers 2: each worker's idle guard process killed: each worker hears it and opens the file again, and every search is answered again within 2 s", async (t) => {
  const file = bookOverView(t);
  const args = ['--db', file, '--table-names', 'entries=kasse', '--workers', '2'];
  const server = await start(t, args, cleanEnv(USER));
  const pids = /\(pids (\d+), (\d+)\)/.exec(server.output().stdout);
  assert.ok(pids !== null, server.output().stdout);
  await answeredWithin(server.api, 4, 5_000);
  for (const worker of [Number(pids[1]), Number(pids[2])])
    assert.ok(killGuards(worker) > 0, `worker ${worker}'s guard`);
  await waitFor(() => server.output().stderr, ENDED, 2);
  await answeredWithin(server.api, 8, 2_000);
  const stopped = await server.stop();
  assert.doesNotMatch(stopped.stderr, /error in GET/);
});

test('every process that opens the file again killed as it starts, for 2 s: /ready and the state metric say so, the file is tried again at each look, not given up as one that did not open in time, and served once a process lives', async (t) => {
  const file = bookOverView(t);
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse', '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1];
  assert.equal((await get(`${server.api}${SEARCH}`)).status, 200);
  const pid = server.child.pid as number;
  const seen = new Set(guardsOf(pid));
  killGuards(pid);
  // Each new guard process (the one that opens and judges the file) killed before it answers.
  const until = Date.now() + 2_000;
  const ENDED_REASON = 'the process that opens it ended (SIGKILL); it is tried again';
  let told: { state: string; reason?: string } | undefined;
  let metric = '';
  while (Date.now() < until) {
    for (const guard of guardsOf(pid).filter((guard) => !seen.has(guard))) {
      seen.add(guard);
      process.kill(guard, 'SIGKILL');
    }
    if (told?.reason === ENDED_REASON) continue;
    const ready = JSON.parse((await request(`${admin}/ready`)).body) as { books: { state: string; reason?: string }[] };
    told = ready.books[0];
    if (told?.reason === ENDED_REASON) metric = (await request(`${admin}/metrics`)).body;
  }
  assert.ok(seen.size >= 3, `${seen.size} guard processes: the file was tried again`);
  assert.equal(told?.state, 'waiting');
  assert.equal(told?.reason, ENDED_REASON);
  assert.match(metric, /^booking_search_book_state\{book="[^"]+",state="waiting"\} 1$/m);
  await answeredWithin(server.api, 1, 5_000);
  const stopped = await server.stop();
  assert.doesNotMatch(stopped.stderr, /did not open within/);
  assert.match(
    stopped.stderr,
    /cannot be read yet: the process that opens it ended \(SIGKILL\); it is tried again; searches answer 500 with Retry-After until it can\n[\s\S]* can be read now; serving it\n/,
  );
});
