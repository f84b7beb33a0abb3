// docs/API.md's reconciliation, step 3: the bookings that together make up a line's amount
// when no single one was given to it. Two parts, then three; the least cents apart, then the
// least total days apart, then the smallest ids. A generator, like the pairing, so that its
// caller can let the event loop run between a line's searches.

/** A booking that may be a part: its amount in the client's convention, its days apart, its id, its index. */
export interface Part {
  cents: number;
  days: number;
  id: number;
  booking: number;
}

/** The best parts found: their bookings, how many cents and days apart in all. */
export interface Split {
  parts: Part[];
  cents: number;
  days: number;
}

/** The best parts found, if any, and how many combinations were weighed for them. */
export interface Searched {
  split: Split | undefined;
  weighed: number;
}

/**
 * The best 2 (or, with `most` 3 and no 2, 3) of `pool`, all of one sign, whose amounts sum
 * to within `tolerance` of `target`; `split` `undefined` when none do. Given up, `weighed`
 * over `limit`, before weighing more combinations than `limit`.
 */
export function* bestSplit(
  pool: readonly Part[],
  target: number,
  tolerance: number,
  most: number,
  limit = Number.POSITIVE_INFINITY,
): Generator<void, Searched, void> {
  // By amount, so that the last part of a sum is a range found by binary search.
  const parts = [...pool].sort((a, b) => a.cents - b.cents || a.id - b.id);
  let best: Split | undefined;
  let weighed = 0;
  /** `first` (and `second`) with each last part from `from` on in [low, high] weighed; whether within the limit. */
  const weigh = (first: Part, second: Part | undefined, from: number, low: number, high: number): boolean => {
    const sum = first.cents + (second?.cents ?? 0);
    const days = first.days + (second?.days ?? 0);
    for (
      let k = firstAtLeast(parts, low, centsOf, from);
      k < parts.length && (parts[k] as Part).cents <= high;
      k += 1
    ) {
      weighed += 1;
      if (weighed > limit) return false;
      const last = parts[k] as Part;
      const cents = Math.abs(sum + last.cents - target);
      // Of as many parts as the best so far (each search is of one count): farther is no better.
      if (best !== undefined && (cents > best.cents || (cents === best.cents && days + last.days > best.days)))
        continue;
      const chosen = second === undefined ? [first, last] : [first, second, last];
      const split = { parts: chosen, cents, days: days + last.days };
      if (best === undefined || better(split, best)) best = split;
    }
    return true;
  };
  for (let i = 0; i < parts.length; i += 1) {
    const first = parts[i] as Part;
    const rest = target - first.cents;
    if (!weigh(first, undefined, i + 1, rest - tolerance, rest + tolerance)) return { split: undefined, weighed };
  }
  if (best !== undefined || most < 3) return { split: best, weighed };
  for (let i = 0; i < parts.length; i += 1) {
    const first = parts[i] as Part;
    for (let j = i + 1; j < parts.length; j += 1) {
      const second = parts[j] as Part;
      const rest = target - first.cents - second.cents;
      if (!weigh(first, second, j + 1, rest - tolerance, rest + tolerance)) return { split: undefined, weighed };
    }
    if (i % 8 === 7) yield;
  }
  return { split: best, weighed };
}

const centsOf = (part: Part): number => part.cents;

/** The first place from `from` on whose key is at least `low`, in `items` sorted by that key. */
export function firstAtLeast<T>(items: readonly T[], low: number, keyOf: (item: T) => number, from = 0): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keyOf(items[mid] as T) < low) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Fewer cents apart, then fewer days, then the smaller ids (sorted, compared in order). */
export function better(a: Split, b: Split): boolean {
  if (a.parts.length !== b.parts.length) return a.parts.length < b.parts.length;
  if (a.cents !== b.cents) return a.cents < b.cents;
  if (a.days !== b.days) return a.days < b.days;
  const ids = (split: Split): number[] => split.parts.map((part) => part.id).sort((x, y) => x - y);
  const x = ids(a);
  const y = ids(b);
  for (let k = 0; k < x.length; k += 1) if (x[k] !== y[k]) return (x[k] as number) < (y[k] as number);
  return false;
}
