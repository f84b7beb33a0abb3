// What /ready and the state metric say of a book that no client searches (docs/operations.md,
// "Monitoring"): a file that broke where it lies (a table renamed, a view dropped or
// redefined under a book searched in a process of its own, a lock held) is seen within
// a few seconds without a search, as a deleted or replaced one is; and `since` is when the
// state said began.

import assert from 'node:assert/strict';
import { chmodSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { writeActualBudget } from './support/actual-budget.js';
import { writeBook } from './support/app-serving.js';
import { type Running, start } from './support/cli-helpers.js';
import { buildDatabase, get, request, tempDir } from './support/helpers.js';

const ADMIN = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//m;
// Within a few seconds of the change: a look every second, then the file opened and judged
// again (a process started for it, on two shared cores).
const SEEN_WITHIN_MS = 4_000;

interface ReadyBook {
  state: string;
  reason?: string;
  since: string;
}

async function readyOf(server: Running): Promise<{ status: number; book: ReadyBook }> {
  const admin = ADMIN.exec(server.output().stdout)?.[1];
  assert.ok(admin !== undefined, server.output().stdout);
  const reply = await request(`${admin}/ready`);
  const [book] = (JSON.parse(reply.body) as { books: ReadyBook[] }).books;
  assert.ok(book !== undefined, reply.body);
  return { status: reply.status, book };
}

/** /ready's book once it is in `state`, polled without a search; fails after `withinMs`. */
async function until(server: Running, state: string, reason?: RegExp, withinMs = SEEN_WITHIN_MS): Promise<ReadyBook> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { status, book } = await readyOf(server);
    if (book.state === state && (reason === undefined || reason.test(book.reason ?? ''))) {
      assert.equal(status, state === 'serving' ? 200 : 503);
      return book;
    }
    assert.ok(Date.now() < deadline, `/ready still says ${JSON.stringify(book)} ${withinMs} ms on`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function metricsOf(server: Running): Promise<string> {
  const admin = ADMIN.exec(server.output().stdout)?.[1];
  return (await request(`${admin}/metrics`)).body;
}

/** The states the metric gives the book in at least one process. */
function statesIn(metrics: string): string[] {
  return [...metrics.matchAll(/^booking_search_book_state\{book="[^"]+",state="(\w+)"\} [1-9]/gm)].map(
    (match) => match[1] as string,
  );
}

for (const workers of [[], ['--workers', '2']]) {
  const named = workers.length > 0 ? ' (--workers 2)' : '';
  test(`a table renamed under a served book that nobody searches: /ready and the metric say unusable within seconds, and serving once it is back${named}`, async (t) => {
    const file = buildDatabase(t);
    const server = await start(t, ['--db', file, '--admin-port', '0', ...workers]);
    await until(server, 'serving');
    const db = new Database(file);
    t.after(() => db.close());
    db.exec('ALTER TABLE entries RENAME TO kassenbuch');
    const broken = await until(server, 'unusable');
    assert.match(broken.reason ?? '', /'entries' is missing/);
    assert.ok(statesIn(await metricsOf(server)).includes('unusable'));
    db.exec('ALTER TABLE kassenbuch RENAME TO entries');
    await until(server, 'serving');
    const metrics = await metricsOf(server);
    assert.deepEqual(statesIn(metrics), ['serving']);
    // The reads that told it are no searches.
    assert.match(metrics, /^booking_search_search_wait_seconds_count 0$/m);
  });
}

test('a view dropped or redefined under a book searched in a process of its own, while nobody searches: unusable as check would refuse it, no wrong answers, and serving once the good view is back', async (t) => {
  const file = buildDatabase(t);
  const db = new Database(file);
  t.after(() => db.close());
  const good = 'CREATE VIEW kasse AS SELECT * FROM entries';
  db.exec(good);
  const server = await start(t, ['--db', file, '--table-names', 'entries=kasse', '--admin-port', '0']);
  await until(server, 'serving');
  assert.match(server.output().stderr, /'kasse' is a view, so its searches run in a process of their own/);
  const search = `${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`;
  assert.equal((await get(search)).status, 200);
  // Its dates as dd.mm.yyyy: a mapping that would find nothing, refused in the start's words.
  db.exec(`DROP VIEW kasse; CREATE VIEW kasse AS SELECT id,
    substr(date, 9, 2) || '.' || substr(date, 6, 2) || '.' || substr(date, 1, 4) AS date,
    amount_cents, subject, category_id, payment_method_id FROM entries`);
  const wrong = await until(server, 'unusable');
  assert.match(wrong.reason ?? '', /cannot be served exactly: some dates are not 'YYYY-MM-DD' text/);
  assert.equal((await get(search)).status, 500);
  db.exec(`DROP VIEW kasse; ${good}`);
  await until(server, 'serving');
  assert.equal((await get(search)).status, 200);
  db.exec('DROP VIEW kasse');
  const dropped = await until(server, 'unusable');
  assert.match(dropped.reason ?? '', /'kasse' is missing/);
  assert.ok(statesIn(await metricsOf(server)).includes('unusable'));
  db.exec(good);
  await until(server, 'serving');
  assert.equal((await get(search)).status, 200);
});

test('a lock the application holds on a served book that nobody searches: /ready says waiting within seconds, and serving once it ends', async (t) => {
  const file = buildDatabase(t);
  const server = await start(t, ['--db', file, '--admin-port', '0']);
  await until(server, 'serving');
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec('BEGIN EXCLUSIVE');
  const held = Date.now();
  const waiting = await until(server, 'waiting');
  assert.match(waiting.reason ?? '', /another program holds a lock on the file/);
  assert.ok(Date.parse(waiting.since) >= held - 10, `since ${waiting.since}: when the lock was seen`);
  assert.ok(statesIn(await metricsOf(server)).includes('waiting'));
  writer.exec('ROLLBACK');
  const served = await until(server, 'serving');
  assert.ok(Date.parse(served.since) > Date.parse(waiting.since));
});

test('an Actual budget whose currency is set to USD while it is served, and nobody searches: /ready says waiting (its searches get Retry-After) within seconds, and serving once it is EUR again', async (t) => {
  const budget = await writeActualBudget(tempDir(t), {
    preferences: { defaultCurrencyCode: 'EUR' },
    categories: [],
    accounts: [{ name: 'Barkasse', transactions: [{ date: '2026-03-14', amount: -1250, payee: 'Post' }] }],
  });
  chmodSync(dirname(budget.file), 0o555);
  // As Actual's Settings › Currency saves it, from a connection of its own.
  const currency = (code: string): void =>
    writeBook(budget.file, (writer) => {
      writer.prepare("UPDATE preferences SET value = ? WHERE id = 'defaultCurrencyCode'").run(code);
    });
  const server = await start(t, ['--db', budget.file, '--app', 'actual', '--admin-port', '0']);
  await until(server, 'serving');
  currency('USD');
  // Not the moment the file is opened again, also waiting: the refusal itself.
  await until(server, 'waiting', /the budget is kept in USD/);
  currency('EUR');
  await until(server, 'serving');
});

test('since is when the state said began: a file copied over the served one is waited for from then, then served from then', async (t) => {
  const file = buildDatabase(t);
  const backup = join(tempDir(t), 'bak.sqlite');
  copyFileSync(file, backup);
  // The backup is of an older schema: the served connection meets another one once it is copied over.
  const db = new Database(file);
  db.exec('CREATE INDEX notiz ON entries (date)');
  db.close();
  const server = await start(t, ['--db', file, '--admin-port', '0']);
  const first = await until(server, 'serving');
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const copied = Date.now();
  copyFileSync(backup, file);
  const states: ReadyBook[] = [];
  const deadline = Date.now() + SEEN_WITHIN_MS;
  while (Date.now() < deadline) {
    states.push((await readyOf(server)).book);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(
    states.some((book) => book.state === 'waiting'),
    `waiting while the copy is opened: ${JSON.stringify(states)}`,
  );
  for (const book of states) {
    if (book.state !== 'serving' || book.since !== first.since)
      assert.ok(Date.parse(book.since) >= copied - 10, `${JSON.stringify(book)}: since before the copy (${copied})`);
  }
});
