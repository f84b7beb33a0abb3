// The pairing of docs/API.md's reconciliation, step 2: each line at most one booking, each
// booking at most one line; of all such pairings one that pairs the most lines, then the
// least total cents apart, then the least total days apart, then the fewest opposite-sign
// pairs. A minimum-cost maximum matching by successive shortest paths (Dijkstra with
// potentials, from every unpaired line at once), on each connected group of lines and
// candidates alone. Costs are compared as tuples of integers, never packed into a float.
// A generator: it yields now and then, so that its caller can let the event loop run.

import { addTo, CostHeap, compare, LOW, WIDTH } from './costs.js';
import { untangle } from './untangle.js';

/** One candidate of a line: the booking (an index), how far apart, and whether of the opposite sign. */
export interface Edge {
  booking: number;
  cents: number;
  days: number;
  opposite: boolean;
  /** The booking's id: the last tie-break of a line's candidates, so the answer never depends on order in. */
  id: number;
  /**
   * For pairings equal in all four of the contract's costs, the smaller the better: two
   * lines swap their bookings, or a line takes a free booking, when that lowers the sum
   * (`untangle`). The reconciliation gives −(the line's rank by date) × (the booking's rank
   * by date), so that twins are paired in their order.
   */
  tie: number;
}

/**
 * A group's edges beyond this are left out, each line keeping its nearest: only a statement
 * whose hundreds of lines compete for the same bookings comes near it (docs/API.md).
 */
export const MAX_GROUP_EDGES = 100_000;

/** `edges[line]`, each line's candidates; the result: each line's booking index, or -1. */
export function* pairLines(edges: readonly Edge[][], bookings: number): Generator<void, Int32Array, void> {
  const paired = new Int32Array(edges.length).fill(-1);
  for (const group of groupsOf(edges, bookings)) {
    const lines: Edge[][] = [];
    for (const line of group) {
      lines.push(nearestFirst(edges[line] as Edge[]));
      yield;
    }
    const keep =
      lines.reduce((sum, list) => sum + Math.min(list.length, group.length), 0) > MAX_GROUP_EDGES
        ? Math.max(1, Math.floor(MAX_GROUP_EDGES / group.length))
        : group.length;
    // A line paired beyond its `group.length` nearest candidates could take a nearer one
    // that no other line holds: so those are all it needs.
    const kept = lines.map((list) => list.slice(0, keep));
    const result = yield* untangle(kept, yield* pairGroup(kept));
    group.forEach((line, i) => {
      paired[line] = result[i] as number;
    });
    yield;
  }
  return paired;
}

/** A line's candidates nearest first: cents, days, same sign, id. */
function nearestFirst(list: Edge[]): Edge[] {
  return [...list].sort(
    (a, b) =>
      a.cents - b.cents || a.days - b.days || Number(a.opposite) - Number(b.opposite) || a.tie - b.tie || a.id - b.id,
  );
}

/** The lines in groups that share no candidate, each group in line order, the groups by their first line. */
function groupsOf(edges: readonly Edge[][], bookings: number): number[][] {
  const parent = Int32Array.from({ length: edges.length }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x] as number] as number;
      x = parent[x] as number;
    }
    return x;
  };
  const owner = new Int32Array(bookings).fill(-1);
  edges.forEach((list, line) => {
    for (const { booking } of list) {
      const other = owner[booking] as number;
      if (other === -1) owner[booking] = line;
      else {
        const a = find(line);
        const b = find(other);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const groups = new Map<number, number[]>();
  for (let line = 0; line < edges.length; line += 1) {
    if ((edges[line] as Edge[]).length === 0) continue;
    const root = find(line);
    const group = groups.get(root);
    if (group === undefined) groups.set(root, [line]);
    else group.push(line);
  }
  return [...groups.values()];
}

/**
 * One group: successive shortest augmenting paths from the unpaired lines (a source before
 * them) to the unpaired bookings (a sink after them). Each path is the cheapest that pairs
 * one more line, so every step's pairing is the cheapest of its size, and the last, when no
 * path is left, the cheapest of the largest. Nodes: lines 0…L−1, bookings L…L+B−1, the sink.
 */
function* pairGroup(lines: readonly Edge[][]): Generator<void, Int32Array, void> {
  const L = lines.length;
  const index = new Map<number, number>();
  for (const list of lines) for (const edge of list) if (!index.has(edge.booking)) index.set(edge.booking, index.size);
  const B = index.size;
  const sink = L + B;
  const nodes = sink + 1;
  const target = lines.map((list) => Int32Array.from(list, (edge) => L + (index.get(edge.booking) as number)));
  const cost: Float64Array[] = [];
  for (const list of lines) {
    const costs = new Float64Array(list.length * WIDTH);
    list.forEach((edge, k) => {
      costs[k * WIDTH] = Math.floor(edge.cents / LOW);
      costs[k * WIDTH + 1] = edge.cents % LOW;
      costs[k * WIDTH + 2] = edge.days;
      costs[k * WIDTH + 3] = edge.opposite ? 1 : 0;
    });
    cost.push(costs);
    if (cost.length % 64 === 0) yield;
  }
  const edgeOfLine = new Int32Array(L).fill(-1);
  const lineOfBooking = new Int32Array(nodes).fill(-1);
  // The potentials, less one offset that every node shares (added to all at once).
  const potential = new Float64Array(nodes * WIDTH);
  const offset = new Float64Array(WIDTH);
  const dist = new Float64Array(nodes * WIDTH);
  const reached = new Uint8Array(nodes);
  const done = new Uint8Array(nodes);
  const via = new Int32Array(nodes);
  const scratch = new Float64Array(WIDTH);

  /** Whether the cost in `scratch` is 0. */
  const zero = (): boolean => scratch[0] === 0 && scratch[1] === 0 && scratch[2] === 0 && scratch[3] === 0;
  const used = new Uint8Array(nodes);
  /** From `line`, a path of reduced cost 0 to an unpaired booking over unused nodes, taken. */
  const extend = (line: number): boolean => {
    used[line] = 1;
    const targets = target[line] as Int32Array;
    const costs = cost[line] as Float64Array;
    for (let k = 0; k < targets.length; k += 1) {
      const node = targets[k] as number;
      if (k === edgeOfLine[line] || used[node] === 1) continue;
      scratch.set(costs.subarray(k * WIDTH, k * WIDTH + WIDTH));
      addTo(scratch, 0, potential, line * WIDTH, 1);
      addTo(scratch, 0, potential, node * WIDTH, -1);
      if (!zero()) continue;
      used[node] = 1;
      const owner = lineOfBooking[node] as number;
      scratch.fill(0);
      addTo(scratch, 0, potential, node * WIDTH, 1);
      if (owner === -1) {
        addTo(scratch, 0, potential, sink * WIDTH, -1);
        if (!zero()) continue;
      } else {
        if (used[owner] === 1) continue;
        addTo(scratch, 0, cost[owner] as Float64Array, (edgeOfLine[owner] as number) * WIDTH, -1);
        addTo(scratch, 0, potential, owner * WIDTH, -1);
        if (!zero() || !extend(owner)) continue;
      }
      edgeOfLine[line] = k;
      lineOfBooking[node] = line;
      return true;
    }
    return false;
  };
  function* morePaths(): Generator<void, number, void> {
    used.fill(0);
    let more = 0;
    for (let line = 0; line < L; line += 1) {
      if (line % 64 === 63) yield;
      if (edgeOfLine[line] !== -1 || used[line] === 1) continue;
      scratch.fill(0);
      addTo(scratch, 0, potential, line * WIDTH, -1);
      addTo(scratch, 0, offset, 0, -1);
      if (zero() && extend(line)) more += 1;
    }
    return more;
  }

  for (let paired = 0; paired < Math.min(L, B); ) {
    const touched: number[] = [];
    const heap = new CostHeap();
    const reach = (node: number, from: number): void => {
      if (reached[node] === 1 && compare(scratch, 0, dist, node * WIDTH) >= 0) return;
      if (reached[node] === 0) touched.push(node);
      reached[node] = 1;
      dist.set(scratch, node * WIDTH);
      via[node] = from;
      heap.push(scratch, node);
    };
    // From the source, whose potential stays 0: minus the potential of each unpaired line.
    for (let line = 0; line < L; line += 1) {
      if (edgeOfLine[line] !== -1) continue;
      scratch.fill(0);
      addTo(scratch, 0, potential, line * WIDTH, -1);
      addTo(scratch, 0, offset, 0, -1);
      reach(line, -1);
    }
    let popped = 0;
    const order: number[] = [];
    for (let top = heap.pop(done); top !== -1 && done[sink] === 0; top = heap.pop(done)) {
      done[top] = 1;
      order.push(top);
      const at = top * WIDTH;
      if (top < L) {
        const targets = target[top] as Int32Array;
        const costs = cost[top] as Float64Array;
        for (let k = 0; k < targets.length; k += 1) {
          if (edgeOfLine[top] === k) continue;
          const node = targets[k] as number;
          if (done[node] === 1) continue;
          scratch.set(dist.subarray(at, at + WIDTH));
          addTo(scratch, 0, costs, k * WIDTH, 1);
          addTo(scratch, 0, potential, at, 1);
          addTo(scratch, 0, potential, node * WIDTH, -1);
          reach(node, top * 65_536 + k);
        }
      } else {
        const line = lineOfBooking[top] as number;
        scratch.set(dist.subarray(at, at + WIDTH));
        addTo(scratch, 0, potential, at, 1);
        if (line === -1) {
          addTo(scratch, 0, potential, sink * WIDTH, -1);
          reach(sink, top);
        } else if (done[line] === 0) {
          const k = edgeOfLine[line] as number;
          addTo(scratch, 0, cost[line] as Float64Array, k * WIDTH, -1);
          addTo(scratch, 0, potential, line * WIDTH, -1);
          reach(line, top);
        }
      }
      popped += 1;
      if (popped % 4096 === 0) yield;
    }
    const found = done[sink] === 1;
    if (found) {
      // Potentials: + the distance of each node settled, + the sink's for every other. Then
      // every shortest path has reduced cost 0 throughout.
      const toSink = dist.slice(sink * WIDTH, sink * WIDTH + WIDTH);
      addTo(offset, 0, toSink, 0, 1);
      for (const node of order) {
        addTo(potential, node * WIDTH, dist, node * WIDTH, 1);
        addTo(potential, node * WIDTH, toSink, 0, -1);
      }
      // Along the path back from the sink: each booking to the line before it.
      let booking = via[sink] as number;
      for (;;) {
        const from = via[booking] as number;
        const line = Math.floor(from / 65_536);
        const k = from % 65_536;
        const before = edgeOfLine[line] as number;
        edgeOfLine[line] = k;
        lineOfBooking[booking] = line;
        paired += 1;
        if (before === -1) break;
        paired -= 1;
        booking = (target[line] as Int32Array)[before] as number;
      }
      // Every other path of reduced cost 0 that shares no node with another is as short:
      // taken in the same step (the primal-dual method), so that a step pairs many lines.
      paired += yield* morePaths();
    }
    for (const node of touched) {
      reached[node] = 0;
      done[node] = 0;
    }
    if (!found) break;
    yield;
  }
  return Int32Array.from({ length: L }, (_, line) => {
    const k = edgeOfLine[line] as number;
    return k === -1 ? -1 : ((lines[line] as Edge[])[k] as Edge).booking;
  });
}
