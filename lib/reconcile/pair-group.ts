// One connected group of the reconciliation's pairing (lib/reconcile/pairing.ts): successive
// shortest augmenting paths from the unpaired lines (a source before them) to the unpaired
// bookings (a sink after them). Each path is the cheapest that pairs one more line, so every
// step's pairing is the cheapest of its size, and the last, when no path is left, the
// cheapest of the largest. Nodes: lines 0…L−1, bookings L…L+B−1, the sink.

import type { Edge } from './costs.js';
import { addTo, CostHeap, compare, LOW, STEP_EDGES, WIDTH } from './costs.js';

/** `lines[line]`, a line's candidates; the result: each line's booking index, or -1. Yields now and then. */
export function* pairGroup(lines: readonly Edge[][]): Generator<void, Int32Array, void> {
  const group = new Group(lines, yield* targetsOf(lines));
  yield* group.weigh();
  for (let paired = 0; paired < Math.min(group.lineCount, group.bookingCount); ) {
    const found = yield* group.shortestPath();
    if (found) {
      group.augment();
      paired += 1;
      // Every other path of reduced cost 0 that shares no node with another is as short:
      // taken in the same step (the primal-dual method), so that a step pairs many lines.
      paired += yield* group.morePaths();
    }
    group.forgetPath();
    if (!found) break;
    yield;
  }
  return group.result();
}

/** Each line's candidates as booking nodes (L, L + 1, … in the order they first stand), and how many bookings. */
function* targetsOf(lines: readonly Edge[][]): Generator<void, { targets: Int32Array[]; bookings: number }, void> {
  const L = lines.length;
  const index = new Map<number, number>();
  const targets: Int32Array[] = [];
  let looked = 0;
  for (const list of lines) {
    const target = new Int32Array(list.length);
    list.forEach((edge, k) => {
      let node = index.get(edge.booking);
      if (node === undefined) {
        node = index.size;
        index.set(edge.booking, node);
      }
      target[k] = L + node;
    });
    targets.push(target);
    looked += list.length;
    if (looked >= STEP_EDGES) {
      looked = 0;
      yield;
    }
  }
  return { targets, bookings: index.size };
}

/** A group's graph, its pairing so far, the potentials, and one shortest-path search's state. */
class Group {
  readonly lineCount: number;
  readonly bookingCount: number;
  private readonly lines: readonly Edge[][];
  private readonly sink: number;
  private readonly target: Int32Array[];
  private readonly cost: Float64Array[] = [];
  private readonly edgeOfLine: Int32Array;
  private readonly lineOfBooking: Int32Array;
  // The potentials, less one offset that every node shares (added to all at once).
  private readonly potential: Float64Array;
  private readonly offset = new Float64Array(WIDTH);
  private readonly dist: Float64Array;
  private readonly reached: Uint8Array;
  private readonly done: Uint8Array;
  private readonly via: Int32Array;
  private readonly used: Uint8Array;
  private readonly scratch = new Float64Array(WIDTH);
  /** The nodes the search reached, and those it settled in order. */
  private touched: number[] = [];
  private order: number[] = [];
  private heap = new CostHeap();
  /** Edges looked at since the last yield. */
  private looked = 0;

  constructor(lines: readonly Edge[][], { targets, bookings }: { targets: Int32Array[]; bookings: number }) {
    const L = lines.length;
    this.lines = lines;
    this.lineCount = L;
    this.bookingCount = bookings;
    this.sink = L + bookings;
    const nodes = this.sink + 1;
    this.target = targets;
    this.edgeOfLine = new Int32Array(L).fill(-1);
    this.lineOfBooking = new Int32Array(nodes).fill(-1);
    this.potential = new Float64Array(nodes * WIDTH);
    this.dist = new Float64Array(nodes * WIDTH);
    this.reached = new Uint8Array(nodes);
    this.done = new Uint8Array(nodes);
    this.via = new Int32Array(nodes);
    this.used = new Uint8Array(nodes);
  }

  /** Each edge's cost as a tuple. */
  *weigh(): Generator<void, void, void> {
    const { cost } = this;
    for (const list of this.lines) {
      const costs = new Float64Array(list.length * WIDTH);
      list.forEach((edge, k) => {
        costs[k * WIDTH] = Math.floor(edge.cents / LOW);
        costs[k * WIDTH + 1] = edge.cents % LOW;
        costs[k * WIDTH + 2] = edge.days;
        costs[k * WIDTH + 3] = edge.opposite ? 1 : 0;
      });
      cost.push(costs);
      this.looked += list.length;
      if (this.pause()) yield;
    }
  }

  /** Whether STEP_EDGES have been looked at since the last yield (the count then starts again). */
  private pause(): boolean {
    if (this.looked < STEP_EDGES) return false;
    this.looked = 0;
    return true;
  }

  /** Whether the cost in `scratch` is 0. */
  private zero(): boolean {
    const { scratch } = this;
    return scratch[0] === 0 && scratch[1] === 0 && scratch[2] === 0 && scratch[3] === 0;
  }

  /** From `line`, a path of reduced cost 0 to an unpaired booking over unused nodes, taken. */
  private extend(line: number): boolean {
    const { used, scratch, potential, edgeOfLine, lineOfBooking, sink } = this;
    used[line] = 1;
    const targets = this.target[line] as Int32Array;
    const costs = this.cost[line] as Float64Array;
    this.looked += targets.length;
    for (let k = 0; k < targets.length; k += 1) {
      const node = targets[k] as number;
      if (k === edgeOfLine[line] || used[node] === 1) continue;
      scratch.set(costs.subarray(k * WIDTH, k * WIDTH + WIDTH));
      addTo(scratch, 0, potential, line * WIDTH, 1);
      addTo(scratch, 0, potential, node * WIDTH, -1);
      if (!this.zero()) continue;
      used[node] = 1;
      const owner = lineOfBooking[node] as number;
      scratch.fill(0);
      addTo(scratch, 0, potential, node * WIDTH, 1);
      if (owner === -1) {
        addTo(scratch, 0, potential, sink * WIDTH, -1);
        if (!this.zero()) continue;
      } else {
        if (used[owner] === 1) continue;
        addTo(scratch, 0, this.cost[owner] as Float64Array, (edgeOfLine[owner] as number) * WIDTH, -1);
        addTo(scratch, 0, potential, owner * WIDTH, -1);
        if (!this.zero() || !this.extend(owner)) continue;
      }
      edgeOfLine[line] = k;
      lineOfBooking[node] = line;
      return true;
    }
    return false;
  }

  /** Every path of reduced cost 0 from an unpaired line that shares no node with another, taken; how many. */
  *morePaths(): Generator<void, number, void> {
    const { scratch, potential } = this;
    this.used.fill(0);
    let more = 0;
    for (let line = 0; line < this.lineCount; line += 1) {
      if (this.pause()) yield;
      if (this.edgeOfLine[line] !== -1 || this.used[line] === 1) continue;
      scratch.fill(0);
      addTo(scratch, 0, potential, line * WIDTH, -1);
      addTo(scratch, 0, this.offset, 0, -1);
      if (this.zero() && this.extend(line)) more += 1;
    }
    return more;
  }

  /** `node` reached from `from` at the cost in `scratch`, unless it was reached cheaper. */
  private reach(node: number, from: number): void {
    const { reached, scratch, dist } = this;
    if (reached[node] === 1 && compare(scratch, 0, dist, node * WIDTH) >= 0) return;
    if (reached[node] === 0) this.touched.push(node);
    reached[node] = 1;
    dist.set(scratch, node * WIDTH);
    this.via[node] = from;
    this.heap.push(scratch, node);
  }

  /** Dijkstra from the source to the sink over reduced costs: whether it reached the sink. */
  *shortestPath(): Generator<void, boolean, void> {
    const { done, scratch, potential, sink } = this;
    this.touched = [];
    this.order = [];
    this.heap = new CostHeap();
    // From the source, whose potential stays 0: minus the potential of each unpaired line.
    for (let line = 0; line < this.lineCount; line += 1) {
      if (this.edgeOfLine[line] !== -1) continue;
      scratch.fill(0);
      addTo(scratch, 0, potential, line * WIDTH, -1);
      addTo(scratch, 0, this.offset, 0, -1);
      this.reach(line, -1);
    }
    for (let top = this.heap.pop(done); top !== -1 && done[sink] === 0; top = this.heap.pop(done)) {
      done[top] = 1;
      this.order.push(top);
      this.settle(top);
      this.looked += top < this.lineCount ? (this.target[top] as Int32Array).length : 1;
      if (this.pause()) yield;
    }
    return done[sink] === 1;
  }

  /** The nodes one edge on from `top`, just settled, reached. */
  private settle(top: number): void {
    const { scratch, potential, dist, done, edgeOfLine, sink } = this;
    const at = top * WIDTH;
    if (top < this.lineCount) {
      const targets = this.target[top] as Int32Array;
      const costs = this.cost[top] as Float64Array;
      for (let k = 0; k < targets.length; k += 1) {
        if (edgeOfLine[top] === k) continue;
        const node = targets[k] as number;
        if (done[node] === 1) continue;
        scratch.set(dist.subarray(at, at + WIDTH));
        addTo(scratch, 0, costs, k * WIDTH, 1);
        addTo(scratch, 0, potential, at, 1);
        addTo(scratch, 0, potential, node * WIDTH, -1);
        this.reach(node, top * 65_536 + k);
      }
    } else {
      const line = this.lineOfBooking[top] as number;
      scratch.set(dist.subarray(at, at + WIDTH));
      addTo(scratch, 0, potential, at, 1);
      if (line === -1) {
        addTo(scratch, 0, potential, sink * WIDTH, -1);
        this.reach(sink, top);
      } else if (done[line] === 0) {
        const k = edgeOfLine[line] as number;
        addTo(scratch, 0, this.cost[line] as Float64Array, k * WIDTH, -1);
        addTo(scratch, 0, potential, line * WIDTH, -1);
        this.reach(line, top);
      }
    }
  }

  /** The shortest path found taken: the potentials moved on, the path's pairs flipped. */
  augment(): void {
    const { potential, dist, via, edgeOfLine, sink } = this;
    // Potentials: + the distance of each node settled, + the sink's for every other. Then
    // every shortest path has reduced cost 0 throughout.
    const toSink = dist.slice(sink * WIDTH, sink * WIDTH + WIDTH);
    addTo(this.offset, 0, toSink, 0, 1);
    for (const node of this.order) {
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
      this.lineOfBooking[booking] = line;
      if (before === -1) break;
      booking = (this.target[line] as Int32Array)[before] as number;
    }
  }

  /** The search's marks cleared, for the next. */
  forgetPath(): void {
    for (const node of this.touched) {
      this.reached[node] = 0;
      this.done[node] = 0;
    }
  }

  /** Each line's booking (its index), or -1. */
  result(): Int32Array {
    return Int32Array.from({ length: this.lineCount }, (_, line) => {
      const k = this.edgeOfLine[line] as number;
      return k === -1 ? -1 : ((this.lines[line] as Edge[])[k] as Edge).booking;
    });
  }
}
