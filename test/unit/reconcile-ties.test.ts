// The reconciliation's ties (docs/API.md, Pairing): of pairings equal in the four costs, the
// earlier line (by date, then place) gets the earlier booking (by date, then id), and only
// lines of one date change the pairing by their order in the request.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { dayNumber, isoDate } from '../../lib/days.js';
import type { ReconcileLine } from '../../lib/reconcile/body.js';
import { reconcile } from '../../lib/reconcile/reconcile.js';
import type { BookingRow } from '../../lib/search/sql.js';

type Sent = { ref: string; datum: string; betrag: number; tage?: number; toleranz?: number; beide?: boolean };

/** Each line's ref with the ids of its bookings. */
function pairing(sent: readonly Sent[], rows: readonly BookingRow[]): Record<string, number[]> {
  const lines: ReconcileLine[] = sent.map(({ ref, datum, betrag, tage = 3, toleranz = 0, beide = false }) => ({
    ref,
    datum,
    day: dayNumber(datum),
    betragCents: betrag,
    tage,
    toleranzCents: toleranz,
    beide,
    teile: 1,
    konten: undefined,
  }));
  const run = reconcile({ lines, ausser: new Set(), konten: undefined, waehrung: 'EUR' }, rows);
  let step = run.next();
  while (step.done !== true) step = run.next();
  const answer = JSON.parse(step.value ?? '') as { zeilen: Array<{ ref: string; buchungen: Array<{ id: number }> }> };
  return Object.fromEntries(answer.zeilen.map((line) => [line.ref, line.buchungen.map((booking) => booking.id)]));
}

// A booking of −663.94 in the client's convention: the book keeps its expense as +66394.
const row = (id: number, datum: string, cents = -66_394): BookingRow => [id, datum, -cents, 'Miete', null, 'Bank'];

test('of two lines a day either side of one booking, the earlier line gets it, whatever their order', () => {
  const rows = [row(405, '2026-09-25')];
  const lines = [
    { ref: 'B', datum: '2026-09-26', betrag: -66_394 },
    { ref: 'A', datum: '2026-09-24', betrag: -66_394 },
  ];
  assert.deepEqual(pairing(lines, rows), { B: [], A: [405] });
  assert.deepEqual(pairing([...lines].reverse(), rows), { B: [], A: [405] });
});

test('one line and twins (same day, same amount): the line gets the smaller id, whatever the rows’ order', () => {
  const line = [{ ref: 'L', datum: '2026-09-12', betrag: -66_394 }];
  assert.deepEqual(pairing(line, [row(701, '2026-09-12'), row(702, '2026-09-12')]), { L: [701] });
  assert.deepEqual(pairing(line, [row(702, '2026-09-12'), row(701, '2026-09-12')]), { L: [701] });
});

test('three lines and twins: the nearest line is paired, the earlier of the others, and the earlier line gets the earlier twin', () => {
  const rows = [row(701, '2026-09-12'), row(702, '2026-09-12')];
  const lines = [
    { ref: 'Y', datum: '2026-09-13', betrag: -66_394 },
    { ref: 'X', datum: '2026-09-11', betrag: -66_394 },
    { ref: 'Z', datum: '2026-09-12', betrag: -66_394 },
  ];
  const expected = { Y: [], X: [701], Z: [702] };
  assert.deepEqual(pairing(lines, rows), expected);
  assert.deepEqual(pairing([lines[2], lines[0], lines[1]] as Sent[], rows), expected);
});

test('with "beide", a booking as near both ways (a zero) counts as of the line\'s own sign, and so comes before one of the other', () => {
  // +5.00 ± 5.00 either way: the zero is 5.00 off both ways, the expense of 10.00 5.00 off the other way.
  const rows = [row(1, '2026-03-10', -1_000), row(2, '2026-03-10', 0)];
  const line = [{ ref: 'L', datum: '2026-03-10', betrag: 500, toleranz: 500, beide: true }];
  assert.deepEqual(pairing(line, rows), { L: [2] });
});

test('lines of distinct dates in any order get the same bookings (random statements)', () => {
  const start = dayNumber('2026-01-01');
  const statement = fc
    .record({
      // Few amounts, few days: many ties.
      bookings: fc.array(fc.record({ day: fc.integer({ min: 0, max: 12 }), amount: fc.integer({ min: 1, max: 3 }) }), {
        maxLength: 25,
      }),
      lines: fc.uniqueArray(
        fc.record({
          day: fc.integer({ min: 0, max: 12 }),
          amount: fc.integer({ min: 1, max: 3 }),
          tage: fc.integer({ min: 0, max: 4 }),
        }),
        { selector: (line) => line.day, minLength: 1, maxLength: 10 },
      ),
    })
    .chain((drawn) =>
      fc.tuple(fc.constant(drawn), fc.shuffledSubarray(drawn.lines, { minLength: drawn.lines.length })),
    );
  fc.assert(
    fc.property(statement, ([{ bookings, lines }, shuffled]) => {
      const rows = bookings.map(({ day, amount }, i) => row(1 + ((i * 7) % 25), isoDate(start + day), -amount));
      const unique = rows.filter((one, i) => rows.findIndex((other) => other[0] === one[0]) === i);
      const sent = (list: typeof lines): Sent[] =>
        list.map(({ day, amount, tage }) => ({ ref: String(day), datum: isoDate(start + day), betrag: -amount, tage }));
      assert.deepEqual(pairing(sent(shuffled), [...unique].reverse()), pairing(sent(lines), unique));
    }),
    { numRuns: 2000 },
  );
});
