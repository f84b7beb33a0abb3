import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextSliceDays, SLICE_BOOKINGS, type Span, takeDays } from '../../lib/reconcile/read.js';

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
