import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pairTheRest } from '../../lib/reconcile/augment.js';
import { columns, type Edge } from '../../lib/reconcile/costs.js';
import { MAX_GROUP_EDGES, pairLines } from '../../lib/reconcile/pairing.js';

function run(edges: Edge[][], bookings: number, maxGroupEdges?: number): Int32Array {
  const pairing = pairLines(edges.map(columns), bookings, maxGroupEdges);
  for (;;) {
    const step = pairing.next();
    if (step.done === true) return step.value;
  }
}

type Totals = { paired: number; cents: number; days: number; opposite: number };

function totalsOf(edges: Edge[][], paired: ArrayLike<number>): Totals {
  const totals = { paired: 0, cents: 0, days: 0, opposite: 0 };
  const used = new Set<number>();
  for (let line = 0; line < edges.length; line += 1) {
    const booking = paired[line] as number;
    if (booking === -1) continue;
    assert.ok(!used.has(booking), 'each booking goes to one line at most');
    used.add(booking);
    const edge = (edges[line] as Edge[]).find((candidate) => candidate.booking === booking);
    assert.ok(edge !== undefined, 'a line gets one of its candidates');
    totals.paired += 1;
    totals.cents += edge.cents;
    totals.days += edge.days;
    totals.opposite += Number(edge.opposite);
  }
  return totals;
}

/** The plain pairing: every pairing tried, the best by the contract's order. */
function exhaustive(edges: Edge[][]): Totals {
  let best: Totals | undefined;
  const better = (a: Totals, b: Totals): boolean =>
    a.paired !== b.paired
      ? a.paired > b.paired
      : a.cents !== b.cents
        ? a.cents < b.cents
        : a.days !== b.days
          ? a.days < b.days
          : a.opposite < b.opposite;
  const choose = (line: number, used: Set<number>, totals: Totals): void => {
    if (line === edges.length) {
      if (best === undefined || better(totals, best)) best = { ...totals };
      return;
    }
    choose(line + 1, used, totals);
    for (const edge of edges[line] as Edge[]) {
      if (used.has(edge.booking)) continue;
      used.add(edge.booking);
      choose(line + 1, used, {
        paired: totals.paired + 1,
        cents: totals.cents + edge.cents,
        days: totals.days + edge.days,
        opposite: totals.opposite + Number(edge.opposite),
      });
      used.delete(edge.booking);
    }
  };
  choose(0, new Set(), { paired: 0, cents: 0, days: 0, opposite: 0 });
  return best as Totals;
}

const statement = (cents: fc.Arbitrary<number>) =>
  fc.integer({ min: 1, max: 7 }).chain((bookings) =>
    fc
      .array(
        fc.uniqueArray(
          fc.record({
            booking: fc.integer({ min: 0, max: bookings - 1 }),
            cents,
            days: fc.integer({ min: 0, max: 4 }),
            opposite: fc.boolean(),
          }),
          { selector: (edge) => edge.booking, maxLength: bookings },
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map((lines) => ({
        bookings,
        edges: lines,
      })),
  );

test('the pairing pairs as many lines as a plain exhaustive pairing, with the same total cents, days and signs', () => {
  fc.assert(
    fc.property(statement(fc.integer({ min: 0, max: 3 })), ({ bookings, edges }) => {
      const totals = totalsOf(edges, run(edges, bookings));
      const best = exhaustive(edges);
      assert.deepEqual(totals, best);
    }),
    { numRuns: 3000 },
  );
});

test('the pairing is exact with amounts apart beyond 2^53 in sum (twelve-digit tolerances)', () => {
  const big = fc.oneof(
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 99_999_999_999_990, max: 99_999_999_999_999 }),
  );
  fc.assert(
    fc.property(statement(big), ({ bookings, edges }) => {
      const totals = totalsOf(edges, run(edges, bookings));
      const best = exhaustive(edges);
      assert.deepEqual(totals, best);
    }),
    { numRuns: 1500 },
  );
});

test('pairing the most lines comes first: a dear pair gives way so that two lines are paired', () => {
  const edge = (booking: number, cents: number): Edge => ({
    booking,
    cents,
    days: 0,
    opposite: false,
  });
  // Line 0 is nearest booking 0, but only line 0 can take booking 1.
  const edges = [[edge(0, 0), edge(1, 50)], [edge(0, 10)]];
  assert.deepEqual([...run(edges, 2)], [1, 0]);
});

test('the same statement gives the same pairing, whatever the order of its candidates', () => {
  const edge = (booking: number, days: number): Edge => ({
    booking,
    cents: 0,
    days,
    opposite: false,
  });
  const edges = [
    [edge(0, 1), edge(1, 1)],
    [edge(1, 1), edge(0, 1)],
    [edge(2, 0), edge(0, 0)],
  ];
  const reversed = edges.map((list) => [...list].reverse());
  assert.deepEqual([...run(edges, 3)], [...run(reversed, 3)]);
});

test('of two pairings equal in cents, days and signs, the one that keeps the lines in date order is taken', () => {
  // Twins: two bookings of one amount (indexes 0 and 1, by date), two lines as far from either.
  const edge = (booking: number, days: number): Edge => ({
    booking,
    cents: 0,
    days,
    opposite: false,
  });
  const edges = [
    [edge(0, 3), edge(1, 0)],
    [edge(0, 4), edge(1, 1)],
  ];
  assert.deepEqual([...run(edges, 2)], [0, 1]);
});

test('the lines left without a booking are paired over all their candidates: as many as a plain pairing, none unpaired that had one', () => {
  fc.assert(
    fc.property(
      statement(fc.integer({ min: 0, max: 3 })),
      fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 6 }),
      ({ edges }, picks) => {
        // Some lines paired already, each with a candidate no other line has.
        const paired = new Int32Array(edges.length).fill(-1);
        const used = new Set<number>();
        edges.forEach((list, line) => {
          const pick = picks[line];
          const edge = pick === undefined ? undefined : list[pick % Math.max(1, list.length)];
          if (edge === undefined || used.has(edge.booking)) return;
          used.add(edge.booking);
          paired[line] = edge.booking;
        });
        const before = [...paired];
        const rest = pairTheRest(
          edges.map((list) => Int32Array.from(list, (edge) => edge.booking)),
          paired,
        );
        while (rest.next().done !== true);
        assert.equal(totalsOf(edges, paired).paired, exhaustive(edges).paired);
        before.forEach((booking, line) => {
          if (booking !== -1) assert.notEqual(paired[line], -1, `line ${line} kept a booking`);
        });
      },
    ),
    { numRuns: 3000 },
  );
});

test('a group over its bound of edges, each line keeping its nearest, still pairs as many lines as a plain pairing, its ties broken as any', () => {
  fc.assert(
    fc.property(statement(fc.integer({ min: 0, max: 3 })), ({ bookings, edges }) => {
      // A bound of 2 edges a group: each line keeps one or two of its candidates.
      const paired = run(edges, bookings, 2);
      assert.equal(totalsOf(edges, paired).paired, exhaustive(edges).paired);
      assert.equal(earlierAtEqualCost(edges, paired), undefined);
    }),
    { numRuns: 3000 },
  );
  // Twenty lines that all want the same twenty bookings most, the same one first: all get one.
  const edges = Array.from({ length: 20 }, () =>
    Array.from({ length: 20 }, (_, booking) => ({
      booking,
      cents: 0,
      days: booking,
      opposite: false,
    })),
  );
  assert.equal(new Set(run(edges, 20, 100)).size, 20);
  assert.ok(MAX_GROUP_EDGES >= 100_000);
});

/**
 * docs/API.md's ties, as a rule over the answer: no line could get an earlier booking at equal
 * cents, days and signs — a free one, one of a later line by a swap, or, having none, a later
 * line's. The first such change found, or `undefined`.
 */
function earlierAtEqualCost(edges: Edge[][], paired: ArrayLike<number>): string | undefined {
  const owner = new Map<number, number>();
  for (let line = 0; line < edges.length; line += 1) if (paired[line] !== -1) owner.set(paired[line] as number, line);
  const edgeOf = (line: number, booking: number): Edge | undefined =>
    (edges[line] as Edge[]).find((edge) => edge.booking === booking);
  const cost = (...list: (Edge | undefined)[]): string =>
    [
      list.reduce((sum, edge) => sum + (edge?.cents ?? 0), 0),
      list.reduce((sum, edge) => sum + (edge?.days ?? 0), 0),
      list.reduce((sum, edge) => sum + Number(edge?.opposite === true), 0),
    ].join();
  for (let line = 0; line < edges.length; line += 1) {
    const mine = paired[line] as number;
    const had = mine === -1 ? undefined : edgeOf(line, mine);
    for (const edge of edges[line] as Edge[]) {
      if (mine !== -1 && edge.booking >= mine) continue;
      const other = owner.get(edge.booking);
      if (other === undefined) {
        if (had !== undefined && cost(had) === cost(edge)) return `line ${line} could take the free ${edge.booking}`;
        continue;
      }
      if (other < line) continue;
      const theirs = edgeOf(other, edge.booking);
      const swapped = had === undefined ? undefined : edgeOf(other, had.booking);
      if (had !== undefined && swapped === undefined) continue;
      if (cost(had, theirs) === cost(edge, swapped))
        return `line ${line} could take ${edge.booking} from line ${other}${had === undefined ? '' : ` for ${had.booking}`}`;
    }
  }
  return undefined;
}

test('no line could get an earlier booking at equal cost, over all its candidates, not only those the cheapest pairing kept', () => {
  // Bookings by date: 0 (the 25th, 1 cent off the second line), 1 (the 26th), 2 (the 27th),
  // the first line's 0 and 1 cents off; the second line, a cent off each. The cheapest pairing
  // keeps two candidates of each line (there are two lines): the second line's 1 and 0.
  const edge = (booking: number, cents: number, days: number): Edge => ({ booking, cents, days, opposite: false });
  const edges = [
    [edge(1, 0, 0), edge(2, 0, 1)],
    [edge(1, 1, 0), edge(2, 1, 1), edge(0, 1, 1)],
  ];
  assert.deepEqual([...run(edges, 3)], [1, 0]);
  // Few lines with more candidates each than there are lines: the cheapest pairing keeps
  // only some of them.
  const few = fc.integer({ min: 3, max: 6 }).chain((bookings) =>
    fc
      .array(
        fc.uniqueArray(
          fc.record({
            booking: fc.integer({ min: 0, max: bookings - 1 }),
            cents: fc.integer({ min: 0, max: 1 }),
            days: fc.integer({ min: 0, max: 1 }),
            opposite: fc.constant(false),
          }),
          { selector: (edge) => edge.booking, minLength: 1, maxLength: bookings },
        ),
        { minLength: 2, maxLength: 3 },
      )
      .map((edges) => ({ bookings, edges })),
  );
  for (const drawn of [statement(fc.integer({ min: 0, max: 2 })), few])
    fc.assert(
      fc.property(drawn, ({ bookings, edges }) => {
        assert.equal(earlierAtEqualCost(edges, run(edges, bookings)), undefined);
      }),
      { numRuns: 5000 },
    );
});
