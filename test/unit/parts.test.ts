import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestSplit, type Part } from '../../lib/reconcile/parts.js';

function split(pool: Part[], target: number, tolerance: number, most = 3): number[] | undefined {
  const search = bestSplit(pool, target, tolerance, most);
  for (;;) {
    const step = search.next();
    if (step.done === true) return step.value.split?.parts.map((part) => part.id).sort((a, b) => a - b);
  }
}
const part = (id: number, cents: number, days = 0): Part => ({ id, cents, days, booking: id });

test('parts: the fewest first, then the least cents apart, then the least days, then the smallest ids', () => {
  // Two parts before three, even three exact ones.
  assert.deepEqual(split([part(1, 10), part(2, 20), part(3, 30), part(4, 28)], 60, 2), [3, 4]);
  assert.deepEqual(split([part(1, 10), part(2, 20), part(3, 30)], 60, 0), [1, 2, 3]);
  assert.deepEqual(split([part(1, 10), part(2, 20), part(3, 30)], 60, 0, 2), undefined);
  // Least cents apart.
  assert.deepEqual(split([part(1, 30), part(2, 29), part(3, 31), part(4, 30)], 60, 1), [1, 4]);
  // Then least days.
  assert.deepEqual(split([part(1, 30, 2), part(2, 30, 1), part(3, 30, 0)], 60, 0), [2, 3]);
  // Then the smallest ids.
  assert.deepEqual(split([part(7, 30), part(5, 30), part(9, 30)], 60, 0), [5, 7]);
  // Negative amounts (income) the same way.
  assert.deepEqual(split([part(1, -30), part(2, -31)], -61, 0), [1, 2]);
});
