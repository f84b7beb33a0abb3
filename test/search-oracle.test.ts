// The tuned search against the one plain query on a generated cash book of 20,000
// bookings, with and without ANALYZE: thousands of random queries, too slow for the unit
// loop (test/unit/search.test.ts holds the quick cases).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertSameAsOracle, cashBook, randomQueries } from './support/cash-book.js';

test('the search equals the plain query on 3,000 random queries over a generated cash book', async () => {
  const db = cashBook(20_000);
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  await assertSameAsOracle(db, randomQueries(3000, 2, amounts));
});

test('on an ANALYZEd cash book (sqlite_stat1 and sqlite_stat4) the search equals the plain query', async () => {
  const db = cashBook(20_000);
  db.exec('ANALYZE');
  assert.ok((db.prepare('SELECT count(*) FROM sqlite_stat4').pluck().get() as number) > 0, 'stat4 is there');
  const amounts = db.prepare<[], number>('SELECT amount_cents FROM entries').pluck().all();
  await assertSameAsOracle(db, randomQueries(2000, 12, amounts));
});
