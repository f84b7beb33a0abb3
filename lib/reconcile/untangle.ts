// The reconciliation's pairing (lib/reconcile/pairing.ts), its last step: of pairings equal
// in the contract's four costs, one that keeps the lines in date order.

import type { Edge } from './costs.js';

/**
 * The pairing with equal pairings' ties broken: while two lines can swap their bookings, or
 * a line take a free booking, at the same cents, days and signs and a lower `tie`, they do.
 * Each change lowers the sum of `tie`, so it ends.
 */
export function* untangle(lines: readonly Edge[][], paired: Int32Array): Generator<void, Int32Array, void> {
  const owner = new Map<number, number>();
  const edgeTo = lines.map((list) => new Map(list.map((edge) => [edge.booking, edge])));
  paired.forEach((booking, line) => {
    if (booking !== -1) owner.set(booking, line);
  });
  const same = (a: Edge[], b: Edge[]): boolean => {
    const sum = (edges: Edge[], key: 'cents' | 'days') => edges.reduce((total, edge) => total + edge[key], 0);
    const opposite = (edges: Edge[]) => edges.filter((edge) => edge.opposite).length;
    return sum(a, 'cents') === sum(b, 'cents') && sum(a, 'days') === sum(b, 'days') && opposite(a) === opposite(b);
  };
  const tie = (edges: Edge[]): number => edges.reduce((total, edge) => total + edge.tie, 0);
  for (let changed = true; changed; ) {
    changed = false;
    for (let line = 0; line < lines.length; line += 1) {
      if (line % 64 === 63) yield;
      if (paired[line] === -1) continue;
      for (const edge of lines[line] as Edge[]) {
        const had = edgeTo[line]?.get(paired[line] as number) as Edge;
        const other = owner.get(edge.booking);
        if (other === line) continue;
        const theirs = other === undefined ? undefined : (edgeTo[other]?.get(edge.booking) as Edge);
        const swapped = other === undefined ? undefined : edgeTo[other]?.get(had.booking);
        const before = theirs === undefined ? [had] : [had, theirs];
        const after = other === undefined ? [edge] : swapped === undefined ? undefined : [edge, swapped];
        if (after === undefined || !same(before, after) || tie(after) >= tie(before)) continue;
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
