// The reconciliation's pairing (lib/reconcile/pairing.ts) for a group too large to weigh
// whole: after the cheapest pairing over each line's nearest candidates, the lines left
// without a booking are paired over all of theirs, so that the most lines are paired still.
// A line takes its nearest free candidate; then augmenting paths (Kuhn's method, phase by
// phase) move paired lines to other candidates of theirs to free one for it. A pairing
// with no augmenting path left pairs the most lines (Berge). A generator, like the pairing.

import { STEP_EDGES } from './costs.js';

/**
 * `lines[line]`, each line's candidates' bookings nearest first; `paired[line]`, its booking
 * or -1, changed in place: no paired line loses its pairing, and as many others as can get one.
 */
export function* pairTheRest(lines: readonly Int32Array[], paired: Int32Array): Generator<void, void, void> {
  const owner = new Map<number, number>();
  paired.forEach((booking, line) => {
    if (booking !== -1) owner.set(booking, line);
  });
  const search: Search = { lines, paired, owner, free: new Int32Array(lines.length), seen: new Set(), looked: 0 };
  for (let found = true; found; ) {
    found = false;
    search.seen = new Set();
    for (let line = 0; line < lines.length; line += 1) {
      if (paired[line] === -1 && (yield* augmentFrom(line, search))) found = true;
    }
  }
}

interface Search {
  lines: readonly Int32Array[];
  paired: Int32Array;
  owner: Map<number, number>;
  /**
   * Each line's first candidate that may still be free: a booking once paired stays
   * paired (to one line or another), so the look for a free one never goes back.
   */
  free: Int32Array;
  /** The bookings this phase went through. */
  seen: Set<number>;
  /** Edges looked at since the last yield. */
  looked: number;
}

/** The line's nearest free candidate, or -1. */
function freeCandidate(line: number, search: Search): number {
  const list = search.lines[line] as Int32Array;
  let k = search.free[line] as number;
  while (k < list.length && search.owner.has(list[k] as number)) k += 1;
  search.looked += k - (search.free[line] as number);
  search.free[line] = k;
  return k < list.length ? (list[k] as number) : -1;
}

/**
 * One augmenting path from the unpaired `start`, depth first over bookings not seen in
 * this phase, a line's free candidate before any other: taken if found, and whether it was.
 */
function* augmentFrom(start: number, search: Search): Generator<void, boolean, void> {
  const { lines, paired, owner, seen } = search;
  // The path so far: each line on it, and the index of the candidate it tries next.
  const path: number[] = [start];
  const next: number[] = [0];
  while (path.length > 0) {
    if (search.looked >= STEP_EDGES) {
      search.looked = 0;
      yield;
    }
    const depth = path.length - 1;
    const line = path[depth] as number;
    const free = next[depth] === 0 ? freeCandidate(line, search) : -1;
    if (free !== -1) {
      // Each line on the path takes the booking it tried, the last one the free one.
      for (let at = depth, taken = free; at >= 0; at -= 1) {
        const on = path[at] as number;
        const had = paired[on] as number;
        paired[on] = taken;
        owner.set(taken, on);
        taken = had;
      }
      return true;
    }
    const list = lines[line] as Int32Array;
    let k = next[depth] as number;
    while (k < list.length && seen.has(list[k] as number)) k += 1;
    search.looked += k - (next[depth] as number) + 1;
    if (k >= list.length) {
      path.pop();
      next.pop();
      continue;
    }
    next[depth] = k + 1;
    const booking = list[k] as number;
    seen.add(booking);
    path.push(owner.get(booking) as number);
    next.push(0);
  }
  return false;
}
