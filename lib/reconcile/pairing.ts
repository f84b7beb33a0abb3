// The pairing of docs/API.md's reconciliation, step 2: each line at most one booking, each
// booking at most one line; of all such pairings one that pairs the most lines, then the
// least total cents apart, then the least total days apart, then the fewest opposite-sign
// pairs. A minimum-cost maximum matching by successive shortest paths (Dijkstra with
// potentials, from every unpaired line at once), on each connected group of lines and
// candidates alone. Costs are compared as tuples of integers, never packed into a float.
// A generator: it yields now and then, so that its caller can let the event loop run.

import { pairTheRest } from './augment.js';
import { type Candidates, type Edge, edgeAt, STEP_EDGES } from './costs.js';
import { pairGroup } from './pair-group.js';
import { untangle } from './untangle.js';

/**
 * A group's edges beyond this are left out of the cheapest pairing, each line keeping its
 * nearest; the lines it leaves without are then paired over all theirs (augment.ts), so that
 * the most lines are paired, not always the fewest cents apart. Only a statement whose
 * hundreds of lines compete for the same bookings comes near it (docs/API.md).
 */
export const MAX_GROUP_EDGES = 100_000;
/**
 * `edges[line]`, each line's candidates; the result: each line's booking index, or -1. Of
 * pairings equal in the four costs, the earlier line (index) gets the earlier booking
 * (index) as far as untangle.ts says: whoever calls it orders both as the ties go.
 */
export function* pairLines(
  edges: readonly Candidates[],
  bookings: number,
  maxGroupEdges = MAX_GROUP_EDGES,
): Generator<void, Int32Array, void> {
  const paired = new Int32Array(edges.length).fill(-1);
  for (const group of yield* groupsOf(edges, bookings)) {
    // Each line's candidates (their places in its columns), nearest first.
    const orders: Int32Array[] = [];
    for (const line of group) {
      orders.push(nearestFirst(edges[line] as Candidates));
      yield;
    }
    const keep =
      orders.reduce((sum, order) => sum + Math.min(order.length, group.length), 0) > maxGroupEdges
        ? Math.max(1, Math.floor(maxGroupEdges / group.length))
        : group.length;
    // A line paired beyond its `group.length` nearest candidates could take a nearer one
    // that no other line holds: so those are all it needs.
    const kept = group.map((line, i): Edge[] =>
      Array.from((orders[i] as Int32Array).subarray(0, keep), (k) => edgeAt(edges[line] as Candidates, k)),
    );
    const result = yield* pairGroup(kept);
    // Fewer kept than that: the lines left without are paired over all their candidates.
    if (keep < group.length) {
      // Each order becomes its bookings in place: a copy would be another array as long.
      const nearest = group.map((line, i) => {
        const order = orders[i] as Int32Array;
        const { booking } = edges[line] as Candidates;
        for (let k = 0; k < order.length; k += 1) order[k] = booking[order[k] as number] as number;
        return order;
      });
      yield* pairTheRest(nearest, result);
    }
    // The ties last, over every candidate: after the lines left without are paired too.
    yield* untangle(
      group.map((line) => edges[line] as Candidates),
      result,
      bookings,
    );
    group.forEach((line, i) => {
      paired[line] = result[i] as number;
    });
    yield;
  }
  return paired;
}

/** A line's candidates (their places in its columns) nearest first: cents, days, same sign, the earlier booking. */
function nearestFirst({ booking, cents, days, opposite }: Candidates): Int32Array {
  return Int32Array.from(booking, (_, k) => k).sort(
    (a, b) =>
      (cents[a] as number) - (cents[b] as number) ||
      (days[a] as number) - (days[b] as number) ||
      (opposite[a] as number) - (opposite[b] as number) ||
      (booking[a] as number) - (booking[b] as number),
  );
}

/** The lines in groups that share no candidate, each group in line order, the groups by their first line. */
function* groupsOf(edges: readonly Candidates[], bookings: number): Generator<void, number[][], void> {
  const parent = Int32Array.from({ length: edges.length }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x] as number] as number;
      x = parent[x] as number;
    }
    return x;
  };
  const owner = new Int32Array(bookings).fill(-1);
  let looked = 0;
  for (let line = 0; line < edges.length; line += 1) {
    const list = (edges[line] as Candidates).booking;
    looked += list.length;
    if (looked >= STEP_EDGES) {
      looked = 0;
      yield;
    }
    for (const booking of list) {
      const other = owner[booking] as number;
      if (other === -1) owner[booking] = line;
      else {
        const a = find(line);
        const b = find(other);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  }
  const groups = new Map<number, number[]>();
  for (let line = 0; line < edges.length; line += 1) {
    if ((edges[line] as Candidates).booking.length === 0) continue;
    const root = find(line);
    const group = groups.get(root);
    if (group === undefined) groups.set(root, [line]);
    else group.push(line);
  }
  return [...groups.values()];
}
