// The reconciliation's pairing (lib/reconcile/pairing.ts), its last step: of pairings equal
// in the contract's four costs, one where the earlier line gets the earlier booking.

import { type Candidates, STEP_EDGES } from './costs.js';

/**
 * The pairing with equal pairings' ties broken by the order of the lines (their index) and
 * of the bookings (theirs), as long as one of these changes keeps the cents, days and signs
 * apart and gives the earlier line of those it changes an earlier booking, or one where it
 * had none: a line takes a free booking; two lines swap theirs; a line without one takes
 * that of a later line, which is left without. Each change makes the lines' bookings, read
 * in line order, lexically smaller, so it ends. Over every candidate of each line, not only
 * those the cheapest pairing looked at: a swap may give a line one it did not keep.
 */
export function* untangle(
  lines: readonly Candidates[],
  paired: Int32Array,
  bookings: number,
): Generator<void, Int32Array, void> {
  const owner = new Map<number, number>();
  const placeOf = placesIn(lines, bookings);
  // Each line's booking by its place in the line's columns, or -1.
  const at = new Int32Array(lines.length).fill(-1);
  let looked = 0;
  for (let line = 0; line < lines.length; line += 1) {
    const booking = paired[line] as number;
    if (booking === -1) continue;
    owner.set(booking, line);
    at[line] = (lines[line] as Candidates).booking.indexOf(booking);
    looked += (lines[line] as Candidates).booking.length;
    if (looked >= STEP_EDGES) {
      looked = 0;
      yield;
    }
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (let line = 0; line < lines.length; line += 1) {
      const list = lines[line] as Candidates;
      if (looked >= STEP_EDGES) {
        looked = 0;
        yield;
      }
      looked += list.booking.length;
      for (let k = 0; k < list.booking.length; k += 1) {
        const booking = list.booking[k] as number;
        const mine = paired[line] as number;
        // An earlier booking, or any if it has none.
        if (mine !== -1 && booking >= mine) continue;
        const other = owner.get(booking);
        // Without a booking, a line takes only that of a later line (a free one would pair
        // one more line: the pairing pairs the most already).
        if (other === undefined ? mine === -1 : other < line) continue;
        // What the other line takes instead: the booking given up (its place there), or none.
        const swapped = other === undefined || mine === -1 ? -1 : placeOf(other, mine);
        if (other !== undefined && mine !== -1 && swapped === -1) continue;
        const had = cost(list, at[line] as number);
        const theirs = other === undefined ? NONE : cost(lines[other] as Candidates, at[other] as number);
        const mineThen = cost(list, k);
        const theirsThen = other === undefined ? NONE : cost(lines[other] as Candidates, swapped);
        if (!sameSums(had, theirs, mineThen, theirsThen)) continue;
        if (mine !== -1) owner.delete(mine);
        if (other !== undefined) {
          paired[other] = swapped === -1 ? -1 : mine;
          at[other] = swapped;
          if (swapped !== -1) owner.set(mine, other);
        }
        paired[line] = booking;
        at[line] = k;
        owner.set(booking, line);
        changed = true;
      }
    }
  }
  return paired;
}

type Cost = readonly [cents: number, days: number, opposite: number];
const NONE: Cost = [0, 0, 0];

/** The cost of the candidate at `k` in `list`, or none (`k` −1: no booking). */
function cost(list: Candidates, k: number): Cost {
  return k === -1 ? NONE : [list.cents[k] as number, list.days[k] as number, list.opposite[k] as number];
}

/** Whether `a` with `b` and `c` with `d` are as many cents, days and opposite signs apart. */
function sameSums(a: Cost, b: Cost, c: Cost, d: Cost): boolean {
  return a[0] + b[0] === c[0] + d[0] && a[1] + b[1] === c[1] + d[1] && a[2] + b[2] === c[2] + d[2];
}

/**
 * Where a booking is among a line's candidates (its place in the line's columns, or -1),
 * found by halving: the first time a swap asks about a line, its candidates as numbers
 * `booking × length + place`, sorted as numbers (no comparing function), not a map of them.
 */
function placesIn(lines: readonly Candidates[], bookings: number): (line: number, booking: number) => number {
  const sorted: (Int32Array | Float64Array | undefined)[] = [];
  return (line, booking) => {
    const list = (lines[line] as Candidates).booking;
    const n = list.length;
    let keys = sorted[line];
    if (keys === undefined) {
      keys = bookings * n < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
      for (let k = 0; k < n; k += 1) keys[k] = (list[k] as number) * n + k;
      keys.sort();
      sorted[line] = keys;
    }
    // The first key at or after booking × n: this booking's, if the line has it.
    let low = 0;
    let high = n;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((keys[middle] as number) < booking * n) low = middle + 1;
      else high = middle;
    }
    const place = low < n ? (keys[low] as number) - booking * n : -1;
    return place >= 0 && place < n ? place : -1;
  };
}
