import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SearchQuery } from '../../lib/query.js';
import {
  MAX_WINDOW_BOOKINGS,
  nextSliceDays,
  readWindows,
  SLICE_BOOKINGS,
  type Span,
  takeDays,
} from '../../lib/reconcile/read.js';
import type { SearchRequest } from '../../lib/search/booking-search.js';
import type { BookingRow, SearchRows } from '../../lib/search/sql.js';
import type { Outcome } from '../../lib/search/turns.js';
import type { SearchTurns } from '../../lib/search-endpoint.js';

test('the slices of the read take every day of the windows once, in order, and no other', () => {
  let seed = 7;
  const random = (below: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % below;
  };
  for (let round = 0; round < 200; round += 1) {
    const windows: Span[] = [];
    for (let day = random(50), n = 1 + random(6); n > 0; n -= 1) {
      const to = day + random(40);
      windows.push([day, to]);
      day = to + 2 + random(30);
    }
    const wanted = windows.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
    const left = [...windows];
    const read: number[] = [];
    while (left.length > 0) {
      const days = 1 + random(20);
      const slice = takeDays(left, days);
      const taken = slice.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
      assert.ok(taken.length === days || left.length === 0, `${taken.length} days taken of ${days}`);
      read.push(...taken);
    }
    assert.deepEqual(read, wanted);
  }
});

test('a slice aims at SLICE_BOOKINGS by the bookings a day so far, and grows at most fourfold', () => {
  assert.equal(nextSliceDays(0, 0, 0), 7);
  // 10 bookings a day so far: 50 days, but at most four times the last slice's 7.
  assert.equal(nextSliceDays(7, 70, 7), 28);
  assert.equal(nextSliceDays(35, 350, 28), SLICE_BOOKINGS / 10);
  // Nothing read yet: fourfold; a book of thousands a day: a day at a time.
  assert.equal(nextSliceDays(7, 0, 7), 28);
  assert.equal(nextSliceDays(7, 70_000, 7), 1);
});

/** A stand-in search: a booking a day of each window asked for, named `snapshot(read)` (the read's number from 1). */
function standIn(snapshot: (read: number) => string | undefined): { search: SearchTurns; asked: SearchQuery[][] } {
  const asked: SearchQuery[][] = [];
  const queue = (request: SearchRequest, done: (outcome: Outcome<SearchRows>) => void): void => {
    const queries = request as SearchQuery[];
    asked.push(queries);
    const rows: BookingRow[] = queries.flatMap((query) => {
      const days = Math.round((Date.parse(query.bis) - Date.parse(query.von)) / 86_400_000) + 1;
      return Array.from(
        { length: days },
        (_, i): BookingRow => [asked.length * 1000 + i, query.von, 100, '', null, null],
      );
    });
    const named = snapshot(asked.length);
    const result: SearchRows =
      named === undefined ? { count: rows.length, rows } : { count: rows.length, rows, snapshot: named };
    setImmediate(() => done({ ok: true, result }));
  };
  return { asked, search: { answer: queue, queue, waitingFrom: () => 0, waitingFor: () => 0 } };
}

function read(search: SearchTurns, windows: Span[]): Promise<Outcome<SearchRows>> {
  return new Promise((resolve) => readWindows(search, windows, { address: '', connection: {} }, resolve));
}

test('the slices are kept when each names the snapshot of the first; else every window is read again in one search', async () => {
  const windows: Span[] = [
    [0, 99],
    [200, 299],
  ];
  const same = standIn(() => 'a.1');
  await read(same.search, windows);
  assert.ok(same.asked.length > 2, `${same.asked.length} slices`);
  assert.ok(same.asked.every((queries) => queries.length <= 2));

  const changed = standIn((n) => (n < 3 ? 'a.1' : 'a.2'));
  const outcome = await read(changed.search, windows);
  const last = changed.asked.at(-1) ?? [];
  assert.deepEqual(
    last.map((query) => [query.von, query.bis, query.limit]),
    [
      ['1970-01-01', '1970-04-10', MAX_WINDOW_BOOKINGS + 1],
      ['1970-07-20', '1970-10-27', MAX_WINDOW_BOOKINGS + 1],
    ],
  );
  assert.equal(changed.asked.length, 4, 'two slices, the third another snapshot, then all at once');
  assert.equal(outcome.ok && outcome.result.rows.length, 200);

  // A search that names no snapshot: one slice is one snapshot; more are read again at once.
  const small = standIn(() => undefined);
  await read(small.search, [[0, 2]]);
  assert.equal(small.asked.length, 1);
  const large = standIn(() => undefined);
  await read(large.search, windows);
  assert.equal(large.asked.length, 2);
});
