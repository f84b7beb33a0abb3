// The search while the owning application writes: another process commits all the time,
// and still every answer is the plain query's answer in one snapshot (count, page and
// names agree), and a booking committed before a request arrives is in its answer, also
// when the request shares its read transaction with the other searches of its turn.

import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import type { SearchQuery } from '../lib/query.js';
import { createBookingSearch, type SearchOutcome, type SearchRows } from '../lib/search/index.js';
import { CREDENTIALS, fixtureSql, get, serve, tempDir } from './support/helpers.js';
import { plainSearch as oracle } from './support/plain-query.js';

const MONTH = { von: '2026-03-01', bis: '2026-03-31', waehrung: 'EUR' } as const;
// The noise the writer keeps committing: bookings of 7.77 € and a category renamed with
// each commit, so that count, page and names of one answer must come from one snapshot.
const NOISE_CENTS = 777;

/** A cash book file with the schema, some bookings and the writer's category. */
function cashBookFile(t: TestContext): string {
  const file = join(tempDir(t), 'kasse.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql'));
  db.exec(fixtureSql('bookings.sql'));
  db.exec("INSERT INTO categories (id, name) VALUES (77, 'gen 0')");
  db.close();
  return file;
}

/**
 * Another process that writes as the owning application does (rollback journal,
 * better-sqlite3's busy timeout of 5 s): every `noiseMs` one commit (delete the oldest noise booking once there are
 * 20, insert one, rename category 77 to the generation), and on a line `n` from stdin one
 * booking of n cents, answered with the line `n` once committed. Stopped after the test.
 */
function startWriter(t: TestContext, file: string, noiseMs: number): ChildProcessWithoutNullStreams {
  // Stopped before the temp dir goes (t.after runs in order of registration).
  const stop = async (): Promise<void> => {
    if (writer.exitCode !== null) return;
    writer.stdin.end();
    const timeout = setTimeout(() => writer.kill('SIGKILL'), 5_000);
    await once(writer, 'exit');
    clearTimeout(timeout);
  };
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.pragma('synchronous = OFF'); // no fsync: the locks are the same, the test is faster
    let generation = 0;
    const noise = db.transaction(() => {
      generation += 1;
      db.prepare('DELETE FROM entries WHERE id IN (SELECT id FROM entries WHERE amount_cents = ${NOISE_CENTS} ORDER BY id LIMIT max(0, (SELECT count(*) FROM entries WHERE amount_cents = ${NOISE_CENTS}) - 19))').run();
      db.prepare("INSERT INTO entries (date, amount_cents, subject, category_id) VALUES ('2026-03-10', ${NOISE_CENTS}, ?, 77)").run('gen ' + generation);
      db.prepare('UPDATE categories SET name = ? WHERE id = 77').run('gen ' + generation);
    });
    const timer = setInterval(noise, ${noiseMs});
    const insert = db.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-15', ?, 'Nachtrag')");
    let buffered = '';
    process.stdin.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\\n')) !== -1) {
        const cents = Number(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        insert.run(cents);
        process.stdout.write(cents + '\\n');
      }
    });
    process.stdin.on('end', () => { clearInterval(timer); db.close(); });`;
  const writer = spawn(process.execPath, ['-e', script], { cwd: new URL('..', import.meta.url).pathname });
  writer.stderr.setEncoding('utf8').on('data', (chunk: string) => process.stderr.write(`writer: ${chunk}`));
  t.after(stop);
  stops.set(writer, stop);
  return writer;
}

const stops = new Map<ChildProcessWithoutNullStreams, () => Promise<void>>();

/** Commits a booking of `cents` in the writer process; resolves once it is committed. */
function commitThere(writer: ChildProcessWithoutNullStreams, cents: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      if (buffered.split('\n').includes(String(cents))) {
        writer.stdout.off('data', onData);
        clearTimeout(timer);
        resolve();
      }
    };
    const timer = setTimeout(() => reject(new Error(`the writer did not commit ${cents} within 10 s`)), 10_000);
    writer.stdout.on('data', onData);
    writer.stdin.write(`${cents}\n`);
  });
}

/** The noise of one answer is from one snapshot: the page holds all of it, named by its newest generation. */
function assertOneSnapshot({ count, rows }: SearchRows): void {
  assert.equal(rows.length, count, 'count and page agree');
  const generations = rows.map((row) => Number(String(row[3]).slice(4)));
  const newest = `gen ${Math.max(...generations)}`;
  for (const row of rows) assert.equal(row[4], newest, 'every name from the same snapshot as the bookings');
}

test('during a writer in another process, every search equals the plain query in the same snapshot', async (t) => {
  const file = cashBookFile(t);
  const writer = startWriter(t, file, 3);
  await commitThere(writer, 1); // the writer runs
  // Read-only, as the CLI opens it; a long busy timeout, since a
  // loaded test machine may hold the writer's lock long.
  const db = new Database(file, { readonly: true, timeout: 10_000 });
  t.after(() => db.close());
  const search = createBookingSearch(db);
  const plain = oracle(db);
  const inOneSnapshot = db.transaction((query: SearchQuery) => ({ search: search(query), plain: plain(query) }));
  const queries: SearchQuery[] = [
    { ...MONTH, betragCents: -NOISE_CENTS, toleranzCents: 0, limit: 1000 },
    { ...MONTH, betragCents: -NOISE_CENTS, toleranzCents: 100, limit: 1000 },
    { ...MONTH, betragCents: 0, toleranzCents: 99_999_999_999_999, limit: 1000 },
    { ...MONTH, betragCents: -NOISE_CENTS, toleranzCents: 0, limit: 3 },
  ];
  const deadline = Date.now() + 3_000;
  let rounds = 0;
  for (; rounds < 300 && Date.now() < deadline; rounds += 1) {
    for (const query of queries) {
      const answers = inOneSnapshot(query);
      assert.deepEqual(answers.search, answers.plain, JSON.stringify(query));
    }
    assertOneSnapshot(search(queries[0] as SearchQuery));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await stops.get(writer)?.();
  assert.ok(rounds >= 10, `only ${rounds} rounds`);
});

test('a booking committed before a request arrives is in its answer, under load and a writer in another process', async (t) => {
  const file = cashBookFile(t);
  const writer = startWriter(t, file, 5);
  await commitThere(writer, 1);
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 10_000 });
  t.after(() => db.close());
  const origin = await serve(t, createHandler(db, CREDENTIALS));
  const searchFor = (cents: number, limit = 50) =>
    `${origin}/api/v1/buchungen?von=${MONTH.von}&bis=${MONTH.bis}&betrag=-${(cents / 100).toFixed(2)}&limit=${limit}`;

  // Other clients keep the server busy, so that searches share the turns of the event
  // loop; each of their answers must be one snapshot.
  let loading = true;
  let background = 0;
  const load = Array.from({ length: 6 }, async () => {
    while (loading) {
      const reply = await get(searchFor(NOISE_CENTS, 1000));
      assert.equal(reply.status, 200, reply.body);
      const body = JSON.parse(reply.body) as {
        anzahl: number;
        buchungen: Array<{ id: number; datum: string; betrag: number; zweck: string; kategorie?: string }>;
      };
      assertOneSnapshot({
        count: body.anzahl,
        rows: body.buchungen.map((b) => [b.id, b.datum, -b.betrag * 100, b.zweck, b.kategorie ?? null, null]),
      });
      background += 1;
    }
  });
  try {
    const deadline = Date.now() + 6_000;
    let checked = 0;
    for (let cents = 100_001; cents <= 100_030 && Date.now() < deadline; cents += 1) {
      await commitThere(writer, cents);
      const reply = await get(searchFor(cents));
      assert.equal(reply.status, 200, reply.body);
      assert.equal(JSON.parse(reply.body).anzahl, 1, `the booking of ${cents} cents committed before the request`);
      checked += 1;
    }
    assert.ok(checked >= 5, `only ${checked} bookings checked`);
  } finally {
    loading = false;
    await Promise.all(load);
    await stops.get(writer)?.();
  }
  assert.ok(background > 0);
});

test('queued searches of one turn read one snapshot that starts after the last of them arrived; no lock is held while they wait', async (t) => {
  const file = cashBookFile(t);
  // A writer in this very process, with no busy timeout: it would fail at once if the
  // queue held a lock while other code runs.
  const writer = new Database(file, { timeout: 0 });
  t.after(() => writer.close());
  const db = new Database(file, { readonly: true });
  t.after(() => db.close());
  const search = createBookingSearch(db);
  const queued = (query: SearchQuery): Promise<SearchOutcome> => new Promise((resolve) => search.queue(query, resolve));
  const query = { ...MONTH, betragCents: -4242, toleranzCents: 0, limit: 50 };
  const insert = writer.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 4242, ?)");

  for (let round = 1; round <= 3; round += 1) {
    const first = queued(query);
    insert.run(`vor der zweiten Anfrage ${round}`); // between two searches of the same turn
    const second = queued(query);
    const answers = await Promise.all([first, second]);
    for (const answer of answers) {
      assert.ok(answer.ok);
      assert.equal(answer.result.count, round, 'the booking committed before the second search, in both');
    }
  }
});
