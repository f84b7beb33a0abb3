// The bound on what one reconciliation weighs (docs/API.md): its lines' candidates and the
// combinations of parts it weighs, together. At the bound the answer is the one without it;
// one more and there is none (the endpoint refuses the statement).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseReconcileBody, type ReconcileLine } from '../../lib/reconcile/body.js';
import { bookingsOf, poolOf } from '../../lib/reconcile/candidates.js';
import { STEP_EDGES } from '../../lib/reconcile/costs.js';
import { MAX_PARTS_POOL, MAX_WEIGHED, reconcile } from '../../lib/reconcile/reconcile.js';
import type { BookingRow } from '../../lib/search/sql.js';

function answer(zeilen: unknown[], rows: readonly BookingRow[], limit?: number): string | undefined {
  const parsed = parseReconcileBody(Buffer.from(JSON.stringify({ zeilen })));
  assert.ok(parsed.ok);
  const work = reconcile(parsed.request, rows, limit);
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
  }
}

const row = (id: number, datum: string, cents: number): BookingRow => [id, datum, cents, 'Barauslage', null, 'Kasse'];
const day = (n: number): string => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);

/** What a generator returns, its turns taken at once. */
function drain<T>(work: Generator<void, T, void>): T {
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
  }
}

test('a statement weighs its lines’ candidates: at the bound its answer, one more none', () => {
  // Six bookings of 12.50 and three of 12.60: the second line has all nine, the third two days.
  const rows = [
    ...Array.from({ length: 6 }, (_, i) => row(i + 1, `2026-03-1${i}`, 1250)),
    ...Array.from({ length: 3 }, (_, i) => row(i + 11, `2026-03-1${i}`, 1260)),
  ];
  const zeilen = [
    { datum: '2026-03-12', betrag: '-12.50', tage: 9 },
    { datum: '2026-03-12', betrag: '-12.55', tage: 9, toleranz: '0.05' },
    { datum: '2026-03-15', betrag: '-12.50', tage: 1 },
  ];
  const unbounded = answer(zeilen, rows, Number.POSITIVE_INFINITY);
  const kandidaten = (JSON.parse(unbounded ?? '') as { zeilen: Array<{ kandidaten: number }> }).zeilen.map(
    (line) => line.kandidaten,
  );
  assert.deepEqual(kandidaten, [6, 9, 2]);
  assert.equal(answer(zeilen, rows, 17), unbounded);
  assert.equal(answer(zeilen, rows, 16), undefined);
  assert.equal(answer(zeilen, rows), unbounded);
});

test('and the combinations of parts it weighs, with the candidates in one count', () => {
  // Four bookings of 1.00: no single one is 3.00, three together are, four ways (4 choose 3).
  const rows = [...Array.from({ length: 4 }, (_, i) => row(i + 1, '2026-03-13', 100)), row(9, '2026-03-13', 700)];
  const zeilen = [
    { datum: '2026-03-13', betrag: '-3.00', teile: 3 },
    { datum: '2026-03-13', betrag: '-7.00' },
  ];
  const unbounded = answer(zeilen, rows, Number.POSITIVE_INFINITY);
  const lines = (JSON.parse(unbounded ?? '') as { zeilen: Array<{ buchungen: Array<{ id: number }> }> }).zeilen;
  assert.deepEqual(
    lines.map((line) => line.buchungen.map((booking) => booking.id)),
    [[3, 2, 1], [9]],
  );
  // One candidate (the second line's) and four combinations.
  assert.equal(answer(zeilen, rows, 5), unbounded);
  assert.equal(answer(zeilen, rows, 4), undefined);
  assert.ok(MAX_WEIGHED >= 1_000_000);
});

test('step 3 takes turns: a line whose window holds more possible parts than are split stops looking at the bound, and the lines are walked a few at a time', () => {
  // 4,000 expenses of 10.00 over 200 days; a thousand lines of 99.99, each over all of them.
  const rows = Array.from({ length: 4000 }, (_, i) => row(i + 1, day(i % 200), 1000));
  const statement = (teile: number) => {
    const zeilen = Array.from({ length: 1000 }, () => ({ datum: '2026-04-01', betrag: '-99.99', teile, tage: 366 }));
    const parsed = parseReconcileBody(Buffer.from(JSON.stringify({ zeilen })));
    assert.ok(parsed.ok);
    return parsed.request;
  };
  const line = statement(2).lines[0] as ReconcileLine;
  const pool = poolOf(line, undefined, drain(bookingsOf(rows, new Set())), new Uint8Array(rows.length), MAX_PARTS_POOL);
  assert.equal(pool.same.length + pool.opposite.length, MAX_PARTS_POOL + 1, 'past the bound, and no further');
  assert.equal(pool.looked, MAX_PARTS_POOL + 1);
  const turns = (teile: number): number => {
    const work = reconcile(statement(teile), rows);
    let steps = 0;
    for (let step = work.next(); step.done !== true; step = work.next()) steps += 1;
    return steps;
  };
  // In two parts the lines reach step 3, in one they do not: the turns between are step 3's,
  // 1,000 walks of 401 bookings, a turn once 4,096 were looked at (a walk may pass it by 401).
  const third = turns(2) - turns(1);
  const walked = 1000 * (MAX_PARTS_POOL + 1);
  assert.ok(third >= Math.floor(walked / (STEP_EDGES + MAX_PARTS_POOL + 1)), `${third} turns`);
});
