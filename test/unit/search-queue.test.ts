// The queue of searches: clients take turns, a turn's read transaction ends once it has
// used its budget and the event loop runs before the next, and a search whose client
// left is skipped.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../../lib/query.js';
import { createBookingSearch, type Requester, type SearchOutcome, TURN_BUDGET_MS } from '../../lib/search.js';
import { fixtureSql } from '../helpers.js';

const WIDEST: SearchQuery = {
  von: '0000-01-01',
  bis: '9999-12-31',
  betragCents: 0,
  toleranzCents: 99_999_999_999_999,
  waehrung: 'EUR',
  limit: 1000,
};

/** An in-memory cash book of `rows` bookings over ten years. */
function book(rows: number): Database.Database {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
    INSERT INTO entries (date, amount_cents, subject) SELECT date('2016-11-01', '+' || (i * 3650 / ${rows}) || ' days'),
    (i * 7919) % 20000 - 2000, 'Buchung ' || i FROM n`);
  return db;
}

test('queued searches take turns by client address, then by connection of one address', async () => {
  const search = createBookingSearch(book(10));
  const a1 = { address: 'a', connection: {} };
  const a2 = { address: 'a', connection: {} };
  const b = { address: 'b', connection: {} };
  const order: string[] = [];
  const queue = (name: string, from: Requester): Promise<void> =>
    new Promise((resolve) =>
      search.queue(
        WIDEST,
        () => {
          order.push(name);
          resolve();
        },
        from,
      ),
    );
  await Promise.all([
    queue('a1 first', a1),
    queue('a1 second', a1),
    queue('a1 third', a1),
    queue('b', b),
    queue('a2', a2),
  ]);
  assert.deepEqual(order, ['a1 first', 'b', 'a2', 'a1 second', 'a1 third']);
});

test('a turn ends its read transaction once it has used its budget, and the event loop runs before the next', async () => {
  const db = book(60_000);
  const search = createBookingSearch(db);
  const searchMs = Math.min(
    ...[1, 2, 3].map(() => {
      const started = performance.now();
      search(WIDEST);
      return performance.now() - started;
    }),
  );
  const count = Math.ceil((4 * TURN_BUDGET_MS) / Math.max(searchMs, 0.1)) + 2;
  // A macrotask between the answers: what the event loop runs between two turns.
  let between = 0;
  let ticking = true;
  const tick = (): void => {
    between += 1;
    assert.equal(db.inTransaction, false, 'no read transaction while the event loop runs');
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const answeredAt: number[] = [];
  const outcomes = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<SearchOutcome>((resolve) =>
          search.queue(WIDEST, (outcome) => {
            answeredAt.push(between);
            resolve(outcome);
          }),
        ),
    ),
  );
  ticking = false;
  for (const outcome of outcomes) assert.ok(outcome.ok && outcome.result.count === 60_000);
  const turns = new Set(answeredAt).size;
  assert.ok(turns >= 2, `${count} searches of ${searchMs.toFixed(1)} ms answered in ${turns} turns`);
});

test('a search whose client left is skipped and never answered', async () => {
  const search = createBookingSearch(book(10));
  const from = { address: 'a', connection: {} };
  const answered: string[] = [];
  search.queue(WIDEST, () => answered.push('left'), { ...from, abandoned: () => true });
  await new Promise<void>((resolve) =>
    search.queue(WIDEST, () => resolve(void answered.push('stayed')), { ...from, abandoned: () => false }),
  );
  assert.deepEqual(answered, ['stayed']);
});
