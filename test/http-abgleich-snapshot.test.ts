// POST {base}/api/v1/abgleich reads its windows in slices, a search of the turns each: the
// answer still comes from one snapshot of the file when another connection commits between
// two slices, on a WAL file and on a rollback-journal file (whose writer no slice holds up);
// a client that leaves stops the slices. Only a few reconciliations read and compute at once.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { RECONCILING_AT_ONCE } from '../lib/reconcile/gate.js';
import { createBookingSearch } from '../lib/search/booking-search.js';
import type { SearchTurns } from '../lib/search-endpoint.js';
import { AUTH, basicAuth, buildDatabase, CREDENTIALS, openReadOnly, request, serve } from './support/helpers.js';

/**
 * The search over `db`, each read's answer delivered `delayMs` later; `afterRead` hears how
 * many have been read, after each read and before it is delivered.
 */
function watchedSearch(
  db: Database.Database,
  afterRead: (reads: number) => void,
  delayMs = 0,
): { search: SearchTurns; reads: () => number } {
  const search = createBookingSearch(db);
  let reads = 0;
  return {
    reads: () => reads,
    search: {
      ...search,
      answer: search.answer,
      queue: (query, done, from) =>
        search.queue(
          query,
          (outcome) => {
            reads += 1;
            afterRead(reads);
            if (delayMs === 0) done(outcome);
            else setTimeout(() => done(outcome), delayMs);
          },
          from,
        ),
    },
  };
}

async function reconcileAroundAWrite(t: TestContext, journal: 'wal' | 'delete'): Promise<void> {
  const file = buildDatabase(t, ['schema.sql', 'abgleich.sql']);
  // The application: it keeps the file open (a WAL file's -wal and -shm stay) and writes.
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.pragma(`journal_mode = ${journal}`);
  writer.exec("INSERT INTO entries VALUES (901, '2026-01-05', 1000, 'Kasse alt', NULL, 1)");
  const db = openReadOnly(t, file);
  // Booking 901 of January moves to March, as booking 902: one snapshot holds one of them.
  const { search, reads } = watchedSearch(db, (read) => {
    if (read === 1)
      writer.exec(
        "DELETE FROM entries WHERE id = 901; INSERT INTO entries VALUES (902, '2026-03-05', 1000, 'Kasse neu', NULL, 1)",
      );
  });
  const origin = await serve(t, createHandler(search, CREDENTIALS));
  const response = await fetch(`${origin}/api/v1/abgleich`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({
      zeilen: [
        { datum: '2026-01-05', betrag: '-10' },
        { datum: '2026-03-05', betrag: '-10' },
      ],
    }),
  });
  assert.equal(response.status, 200);
  const { zeilen } = (await response.json()) as { zeilen: Array<{ buchungen: Array<{ id: number }> }> };
  assert.ok(reads() >= 2, `the windows were read in ${reads()} slices`);
  // The commit came after the first slice: the answer is the file after it, read whole again.
  assert.deepEqual(
    zeilen.map((line) => line.buchungen.map((booking) => booking.id)),
    [[], [902]],
  );
}

test('a WAL file written by another connection between two slices: the answer is one snapshot', (t) =>
  reconcileAroundAWrite(t, 'wal'));

test('a rollback-journal file: the writer commits between two slices (no read holds its lock), and the answer is one snapshot', (t) =>
  reconcileAroundAWrite(t, 'delete'));

test('a client that leaves during the read: no slice is read after its connection closed', async (t) => {
  // 3,000 bookings over 300 days: several slices of about 500.
  const many = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
    INSERT INTO entries SELECT 5000 + i, date('2025-01-01', '+' || (i / 10) || ' days'), 100 + i, 'x', NULL, 1 FROM n;`;
  const file = buildDatabase(t, ['schema.sql', 'abgleich.sql']);
  const writer = new Database(file);
  writer.exec(many);
  writer.close();
  const body = JSON.stringify({ zeilen: [{ datum: '2025-06-01', betrag: '-1', tage: 150 }] });
  const headers = { authorization: AUTH, 'content-type': 'application/json' };
  const whole = watchedSearch(openReadOnly(t, file), () => {});
  const all = await serve(t, createHandler(whole.search, CREDENTIALS));
  assert.equal((await fetch(`${all}/api/v1/abgleich`, { method: 'POST', headers, body })).status, 200);
  assert.ok(whole.reads() >= 4, `the whole read took ${whole.reads()} slices`);

  const leaving = new AbortController();
  // Each read delivered 10 ms late, time for the server to see the connection close.
  const left = watchedSearch(
    openReadOnly(t, file),
    (read) => {
      if (read === 1) leaving.abort();
    },
    10,
  );
  const origin = await serve(t, createHandler(left.search, CREDENTIALS));
  await assert.rejects(fetch(`${origin}/api/v1/abgleich`, { method: 'POST', headers, body, signal: leaving.signal }));
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The one read when it left, perhaps the one queued before the server saw it go; no more.
  assert.ok(left.reads() <= 2, `${left.reads()} slices read of ${whole.reads()}`);
});

/**
 * A handler whose reads of the windows are held until the test ends or `release` is called:
 * the reconciliations holding a place stay in it. `held()`: how many reads are held.
 */
async function heldReads(
  t: TestContext,
  maxWaitingSearches = 1,
): Promise<{ origin: string; held: () => number; bodies: () => number; release: () => void }> {
  const real = createBookingSearch(openReadOnly(t, buildDatabase(t, ['schema.sql', 'abgleich.sql'])));
  const held: Array<() => void> = [];
  let holding = true;
  const search: SearchTurns = {
    ...real,
    answer: real.answer,
    queue: (query, done, from) => {
      if (holding) held.push(() => real.queue(query, done, from));
      else real.queue(query, done, from);
    },
  };
  const release = (): void => {
    holding = false;
    for (const read of held.splice(0)) read();
  };
  // On a failure too: what is held is answered, so that the server can close.
  t.after(release);
  const handler = createHandler(search, USERS, { maxWaitingSearches });
  // How many bodies the handler has read to their end (a listener of 'end' reads nothing).
  let bodies = 0;
  const origin = await serve(t, (req, res) => {
    req.once('end', () => (bodies += 1));
    handler(req, res);
  });
  return { origin, held: () => held.length, bodies: () => bodies, release };
}

// A user holds one place at most: each reconciliation of these tests is another user's.
const USERS = ['a', 'b', 'c', 'd'].map((name) => ({ username: name, password: `${name}-geheim` }));
const headersOf = (user: string) => ({
  authorization: basicAuth(user, `${user}-geheim`),
  'content-type': 'application/json',
});
const BODY = JSON.stringify({ zeilen: [{ datum: '2026-01-05', betrag: '-10' }] });

/** Until `what` holds, for at most 2 s. */
async function until(what: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !what(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('reconciliations beyond the bound wait for a place, one waiting counts as a waiting search (429), a client that leaves frees its place', async (t) => {
  const { origin, held, release } = await heldReads(t);
  const leaving = new AbortController();
  const url = `${origin}/api/v1/abgleich`;
  const post = (user: string) => request(url, { method: 'POST', headers: headersOf(user), body: BODY });
  const first = fetch(url, { method: 'POST', headers: headersOf('a'), body: BODY, signal: leaving.signal }).catch(
    () => undefined,
  );
  await until(() => held() === 1);
  const others = [post('b'), post('c')];
  await until(() => held() >= RECONCILING_AT_ONCE);
  // Time for the third to arrive: with no place to wait for, its read would be held by now.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(held(), RECONCILING_AT_ONCE, 'the third waits for a place before it reads');
  const over = await post('d');
  assert.equal(over.status, 429);
  assert.equal((JSON.parse(over.body) as { code: string }).code, 'too_many_searches');
  assert.equal(over.headers['retry-after'], '1');
  leaving.abort();
  await first;
  await until(() => held() > RECONCILING_AT_ONCE);
  assert.equal(held(), RECONCILING_AT_ONCE + 1, 'the place of the client that left went to the one waiting');
  release();
  for (const reply of await Promise.all(others)) assert.equal(reply.status, 200);
});

test('a body is parsed only in its place: one that waits for it is a waiting search (beyond the bound, 429 for the next), then refused when its turn comes', async (t) => {
  const { origin, held, bodies, release } = await heldReads(t);
  const url = `${origin}/api/v1/abgleich`;
  const post = (user: string, body: string) => request(url, { method: 'POST', headers: headersOf(user), body });
  const running = [post('a', BODY), post('b', BODY)];
  await until(() => held() === RECONCILING_AT_ONCE);
  // Not JSON: refused once parsed, which it is only in its place; meanwhile it is a waiting search.
  const broken = post('c', '{"zeilen":');
  await until(() => bodies() === RECONCILING_AT_ONCE + 1);
  // Were the broken body parsed before its place, this one would wait for a place instead.
  const over = await Promise.race([
    post('d', BODY),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
  ]);
  assert.equal(over?.status, 429, 'the broken body waits for its place, counted as a waiting search');
  release();
  const refused = await broken;
  assert.equal(refused.status, 400);
  assert.equal((JSON.parse(refused.body) as { code: string }).code, 'bad_body');
  for (const reply of await Promise.all(running)) assert.equal(reply.status, 200);
});

test("a user holds one place at most: its second reconciliation waits while another user's runs at once", async (t) => {
  const { origin, held, bodies, release } = await heldReads(t, 64);
  const url = `${origin}/api/v1/abgleich`;
  const post = (user: string) => request(url, { method: 'POST', headers: headersOf(user), body: BODY });
  const alice = [post('a'), post('a')];
  await until(() => bodies() === 2 && held() === 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(held(), 1, "alice's second waits for her first");
  const bob = post('b');
  await until(() => held() === 2);
  assert.equal(held(), 2, "bob's runs beside alice's first");
  release();
  for (const reply of await Promise.all([...alice, bob])) assert.equal(reply.status, 200);
});
