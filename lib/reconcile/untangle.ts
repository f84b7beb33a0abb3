// The reconciliation's pairing (lib/reconcile/pairing.ts), its last step: of pairings equal
// in the contract's four costs, one that keeps the lines in date order.

import { type Edge, STEP_EDGES } from './costs.js';

/**
 * The pairing with equal pairings' ties broken: while two lines can swap their bookings, or
 * a line take a free booking, at the same cents, days and signs and a lower `tie`, they do.
 * Each change lowers the sum of `tie`, so it ends.
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
      if (paired[line] === -1) continue;
      looked += (lines[line] as Edge[]).length;
      for (const edge of lines[line] as Edge[]) {
        const had = edgeTo[line]?.get(paired[line] as number) as Edge;
        const other = owner.get(edge.booking);
        if (other === line) continue;
        const theirs = other === undefined ? undefined : (edgeTo[other]?.get(edge.booking) as Edge);
        const swapped = other === undefined ? undefined : edgeTo[other]?.get(had.booking);
        if (other !== undefined && swapped === undefined) continue;
        if (!sameCosts(had, theirs, edge, swapped) || edge.tie + (swapped?.tie ?? 0) >= had.tie + (theirs?.tie ?? 0))
          continue;
        owner.delete(had.booking);
        if (other !== undefined) {
          paired[other] = had.booking;
          owner.set(had.booking, other);
        }
        paired[line] = edge.booking;
        owner.set(edge.booking, line);
        changed = true;
      }
    }
  }
  return paired;
}

/** Whether `a` with `b` (if any) and `c` with `d` (if any) are as many cents, days and opposite signs apart. */
function sameCosts(a: Edge, b: Edge | undefined, c: Edge, d: Edge | undefined): boolean {
  return (
    a.cents + (b?.cents ?? 0) === c.cents + (d?.cents ?? 0) &&
    a.days + (b?.days ?? 0) === c.days + (d?.days ?? 0) &&
    Number(a.opposite) + Number(b?.opposite === true) === Number(c.opposite) + Number(d?.opposite === true)
  );
}
