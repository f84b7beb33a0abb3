// The costs of the reconciliation's pairing (lib/reconcile/pairing.ts): each a tuple of
// integers in a Float64Array, added and compared in place, and a heap of nodes by cost; and
// the candidates they are reckoned from.

/** One candidate of a line: the booking (an index), how far apart, and whether of the opposite sign. */
export interface Edge {
  booking: number;
  cents: number;
  days: number;
  opposite: boolean;
}

/**
 * A line's candidates, a column each: the k-th is `booking[k]`, `cents[k]` and `days[k]`
 * apart, of the opposite sign when `opposite[k]` is 1. A line's hundreds of candidates as
 * objects took several times the memory (an object and its pointer each).
 */
export interface Candidates {
  readonly booking: Int32Array;
  readonly cents: Int32Array | Float64Array;
  readonly days: Uint16Array;
  readonly opposite: Uint8Array;
}

/** The k-th candidate of `list` as an object. */
export function edgeAt(list: Candidates, k: number): Edge {
  return {
    booking: list.booking[k] as number,
    cents: list.cents[k] as number,
    days: list.days[k] as number,
    opposite: list.opposite[k] === 1,
  };
}

/** `edges` in columns. */
export function columns(edges: readonly Edge[]): Candidates {
  return {
    booking: Int32Array.from(edges, (edge) => edge.booking),
    cents: Float64Array.from(edges, (edge) => edge.cents),
    days: Uint16Array.from(edges, (edge) => edge.days),
    opposite: Uint8Array.from(edges, (edge) => (edge.opposite ? 1 : 0)),
  };
}

// A cost is four integers compared in order: cents apart as high × 2^26 + low (a sum of a
// thousand amounts of 12 digits exceeds 2^53), then days apart, then opposite-sign pairs.
export const LOW = 2 ** 26;
export const WIDTH = 4;
/** Candidates (edges) the reconciliation's steps look at between two yields: a few tenths of a millisecond. */
export const STEP_EDGES = 4096;

/** Adds `sign` × the cost at `b[j]` to the cost at `a[i]`, in place, keeping its low part in [0, 2^26). */
export function addTo(a: Float64Array, i: number, b: Float64Array, j: number, sign: number): void {
  let low = (a[i + 1] as number) + sign * (b[j + 1] as number);
  const carry = Math.floor(low / LOW);
  low -= carry * LOW;
  a[i] = (a[i] as number) + sign * (b[j] as number) + carry;
  a[i + 1] = low;
  a[i + 2] = (a[i + 2] as number) + sign * (b[j + 2] as number);
  a[i + 3] = (a[i + 3] as number) + sign * (b[j + 3] as number);
}

export function compare(a: Float64Array, i: number, b: Float64Array, j: number): number {
  for (let k = 0; k < WIDTH; k += 1) {
    const d = (a[i + k] as number) - (b[j + k] as number);
    if (d !== 0) return d;
  }
  return 0;
}

/** A binary heap of nodes by cost, then node; an entry whose node is settled is skipped. */
export class CostHeap {
  private readonly keys: number[] = [];
  private readonly nodes: number[] = [];

  push(cost: Float64Array, node: number): void {
    let i = this.nodes.length;
    this.nodes.push(node);
    for (let k = 0; k < WIDTH; k += 1) this.keys.push(cost[k] as number);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }

  /** The cheapest node not yet settled, or -1. */
  pop(settled: Uint8Array): number {
    while (this.nodes.length > 0) {
      const top = this.nodes[0] as number;
      const last = this.nodes.length - 1;
      this.swap(0, last);
      this.nodes.pop();
      this.keys.length = last * WIDTH;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        if (left >= last) break;
        const child = left + 1 < last && this.less(left + 1, left) ? left + 1 : left;
        if (!this.less(child, i)) break;
        this.swap(i, child);
        i = child;
      }
      if (settled[top] === 0) return top;
    }
    return -1;
  }

  private less(a: number, b: number): boolean {
    for (let k = 0; k < WIDTH; k += 1) {
      const d = (this.keys[a * WIDTH + k] as number) - (this.keys[b * WIDTH + k] as number);
      if (d !== 0) return d < 0;
    }
    return (this.nodes[a] as number) < (this.nodes[b] as number);
  }

  private swap(a: number, b: number): void {
    const node = this.nodes[a] as number;
    this.nodes[a] = this.nodes[b] as number;
    this.nodes[b] = node;
    for (let k = 0; k < WIDTH; k += 1) {
      const key = this.keys[a * WIDTH + k] as number;
      this.keys[a * WIDTH + k] = this.keys[b * WIDTH + k] as number;
      this.keys[b * WIDTH + k] = key;
    }
  }
}
