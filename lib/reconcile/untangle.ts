// The reconciliation's pairing (lib/reconcile/pairing.ts), its last step: of pairings equal
// in the contract's four costs, one where the earlier line gets the earlier booking.

import { type Edge, STEP_EDGES } from './costs.js';

/**
 * The pairing with equal pairings' ties broken by the order of the lines (their index) and
 * of the bookings (theirs), as long as one of these changes keeps the cents, days and signs
 * apart and gives the earlier line of those it changes an earlier booking, or one where it
 * had none: a line takes a free booking; two lines swap theirs; a line without one takes
 * that of a later line, which is left without. Each change makes the lines' bookings, read
 * in line order, lexically smaller, so it ends.
 */
export function* untangle(lines: readonly Edge[][], paired: Int32Array): Generator<void, Int32Array, void> {
  const owner = new Map<number, number>();
  const edgeTo: Map<number, Edge>[] = [];
  let looked = 0;
  for (const list of lines) {
    edgeTo.push(new Map(list.map((edge) => [edge.booking, edge])));
    looked += list.length;
    if (looked >= STEP_EDGES) {
      looked = 0;
      yield;
    }
  }
  paired.forEach((booking, line) => {
    if (booking !== -1) owner.set(booking, line);
  });
  for (let changed = true; changed; ) {
    changed = false;
    for (let line = 0; line < lines.length; line += 1) {
      if (looked >= STEP_EDGES) {
        looked = 0;
        yield;
      }
      looked += (lines[line] as Edge[]).length;
      for (const edge of lines[line] as Edge[]) {
        const mine = paired[line] as number;
        // An earlier booking, or any if it has none.
        if (mine !== -1 && edge.booking >= mine) continue;
        const had = mine === -1 ? undefined : edgeTo[line]?.get(mine);
        const other = owner.get(edge.booking);
        // Without a booking, a line takes only that of a later line (a free one would pair
        // one more line: the pairing pairs the most already).
        if (other === undefined ? had === undefined : other < line) continue;
        const theirs = other === undefined ? undefined : edgeTo[other]?.get(edge.booking);
        // What the other line takes instead: the booking given up, or none.
        const swapped = other === undefined || had === undefined ? undefined : edgeTo[other]?.get(had.booking);
        if (other !== undefined && had !== undefined && swapped === undefined) continue;
        if (!sameCosts(had, theirs, edge, swapped)) continue;
        if (had !== undefined) owner.delete(had.booking);
        if (other !== undefined) {
          paired[other] = swapped === undefined ? -1 : swapped.booking;
          if (swapped !== undefined) owner.set(swapped.booking, other);
        }
        paired[line] = edge.booking;
        owner.set(edge.booking, line);
        changed = true;
      }
    }
  }
  return paired;
}

/** Whether `a` with `b` and `c` with `d` (each if any) are as many cents, days and opposite signs apart. */
function sameCosts(a: Edge | undefined, b: Edge | undefined, c: Edge, d: Edge | undefined): boolean {
  return (
    (a?.cents ?? 0) + (b?.cents ?? 0) === c.cents + (d?.cents ?? 0) &&
    (a?.days ?? 0) + (b?.days ?? 0) === c.days + (d?.days ?? 0) &&
    Number(a?.opposite === true) + Number(b?.opposite === true) === Number(c.opposite) + Number(d?.opposite === true)
  );
}
