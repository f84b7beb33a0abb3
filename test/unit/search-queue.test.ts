// The queue of searches on a real database: a turn's read transaction ends once it has used
// its budget and the event loop runs before the next, and over HTTP a client address (or a
// user) cannot queue more than maxWaitingSearches (maxUserWaitingSearches). The rotation
// itself is tested without SQL in turns.test.ts.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { ERRORS } from '../../lib/messages.js';
import { createBookingSearch, type SearchOutcome, TURN_BUDGET_MS } from '../../lib/search/index.js';
import { WIDEST } from '../support/cash-book.js';
import { AUTH, fixtureSql, get, requestFrom, serveFixture } from '../support/helpers.js';

/** An in-memory cash book of `rows` bookings over ten years. */
function book(rows: number): Database.Database {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
    INSERT INTO entries (date, amount_cents, subject) SELECT date('2016-11-01', '+' || (i * 3650 / ${rows}) || ' days'),
    (i * 7919) % 20000 - 2000, 'Buchung ' || i FROM n`);
  return db;
}

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

/**
 * One raw connection to `origin` for pipelined searches: `search(address)` is the text of
 * one (from `address` through the trusted proxy's X-Forwarded-For, when given), `answers()`
 * waits up to 5 s for eight answers and gives their status lines and the raw text.
 */
function pipelined(t: TestContext, origin: string) {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  t.after(() => void socket.destroy());
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const search = (address?: string): string =>
    `GET /api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35 HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${AUTH}\r\n${address === undefined ? '' : `X-Forwarded-For: ${address}\r\n`}\r\n`;
  const answers = async (): Promise<{ statuses: string[]; received: string }> => {
    for (let waited = 0; received.split('HTTP/1.1 ').length - 1 < 8 && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { statuses: received.match(/HTTP\/1\.1 \d+/g) ?? [], received };
  };
  return { write: (text: string) => socket.write(text), search, answers };
}

test('a client address with maxWaitingSearches searches waiting gets 429 with Retry-After: 1 for the next, and another address is answered', async (t) => {
  const origin = await serveFixture(t, { maxWaitingSearches: 5 });
  const connection = pipelined(t, origin);
  // Eight pipelined searches arrive in one turn of the event loop: five wait, three are too many.
  connection.write(connection.search().repeat(8));
  const other = await requestFrom(
    '127.0.0.2',
    `${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`,
    {
      authorization: AUTH,
    },
  );
  assert.equal(other.status, 200);
  const { statuses, received } = await connection.answers();
  assert.deepEqual(statuses, [...Array(5).fill('HTTP/1.1 200'), ...Array(3).fill('HTTP/1.1 429')]);
  assert.match(received, /\r\nRetry-After: 1\r\n/i);
  assert.ok(received.includes(ERRORS.tooManySearches.body));
  // Once they are answered, the address searches again.
  assert.equal((await get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`)).status, 200);
});

test('the addresses of one IPv6 /64 share their place in the rotation and their maxWaitingSearches', async (t) => {
  const origin = await serveFixture(t, { maxWaitingSearches: 5, trustProxy: ['127.0.0.1'] });
  const connection = pipelined(t, origin);
  const from = connection.search;
  // Four from each of two addresses of one /64, in one turn: eight of one client, five wait.
  connection.write(`${from('2001:db8:1:2::a')}${from('2001:db8:1:2::b')}`.repeat(4));
  const { statuses } = await connection.answers();
  assert.deepEqual(statuses, [...Array(5).fill('HTTP/1.1 200'), ...Array(3).fill('HTTP/1.1 429')]);
});

test('one user with maxUserWaitingSearches searches waiting from many addresses gets 429 with Retry-After: 1 for the next', async (t) => {
  const origin = await serveFixture(t, { maxUserWaitingSearches: 5, trustProxy: ['127.0.0.1'] });
  const connection = pipelined(t, origin);
  const from = connection.search;
  // Eight searches of one user from eight addresses, in one turn: five wait, three are too many.
  connection.write(Array.from({ length: 8 }, (_, i) => from(`192.0.2.${i + 1}`)).join(''));
  const { statuses, received } = await connection.answers();
  assert.deepEqual(statuses, [...Array(5).fill('HTTP/1.1 200'), ...Array(3).fill('HTTP/1.1 429')]);
  assert.match(received, /\r\nRetry-After: 1\r\n/i);
  assert.ok(received.includes(ERRORS.tooManySearches.body));
});
