// The known name nearest to a misspelt one, for "did you mean …?": a flag (args.ts), a
// BOOKING_SEARCH_ variable (configuration.ts) or a key of the configuration file (config-file.ts).

/** The name of `known` nearest to `given`: a few letters apart, or one that begins the other. */
export function nearestName(given: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.startsWith(given) || given.startsWith(name) ? 0 : editDistance(given, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  if (best === undefined || best.distance > Math.max(2, Math.floor(given.length / 3))) return undefined;
  return best.name;
}

/** Levenshtein distance with the swap of two neighbours as one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = value;
    }
  }
  return at(a.length, b.length);
}
