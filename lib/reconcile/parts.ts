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

/**
 * The best 2 (or, with `most` 3 and no 2, 3) of `pool`, all of one sign, whose amounts sum
 * to within `tolerance` of `target`; `undefined` when none do.
 */
export function* bestSplit(
  pool: readonly Part[],
  target: number,
  tolerance: number,
  most: number,
): Generator<void, Split | undefined, void> {
  // By amount, so that the last part of a sum is a range found by binary search.
  const parts = [...pool].sort((a, b) => a.cents - b.cents || a.id - b.id);
  let best: Split | undefined;
  const consider = (chosen: Part[]): void => {
    const sum = chosen.reduce((total, part) => total + part.cents, 0);
    const split = { parts: chosen, cents: Math.abs(sum - target), days: chosen.reduce((d, part) => d + part.days, 0) };
    if (best === undefined || better(split, best)) best = split;
  };
  for (let i = 0; i < parts.length; i += 1) {
    const first = parts[i] as Part;
    lastParts(parts, i + 1, target - tolerance - first.cents, target + tolerance - first.cents, (last) =>
      consider([first, last]),
    );
  }
  if (best !== undefined || most < 3) return best;
  for (let i = 0; i < parts.length; i += 1) {
    const first = parts[i] as Part;
    for (let j = i + 1; j < parts.length; j += 1) {
      const second = parts[j] as Part;
      const rest = target - first.cents - second.cents;
      lastParts(parts, j + 1, rest - tolerance, rest + tolerance, (last) => consider([first, second, last]));
    }
    if (i % 8 === 7) yield;
  }
  return best;
}

/** Each part from `from` on whose amount lies in [low, high] (the parts sorted by amount). */
function lastParts(parts: readonly Part[], from: number, low: number, high: number, each: (part: Part) => void): void {
  let lo = from;
  let hi = parts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((parts[mid] as Part).cents < low) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < parts.length && (parts[k] as Part).cents <= high; k += 1) each(parts[k] as Part);
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
