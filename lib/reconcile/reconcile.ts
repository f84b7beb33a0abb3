// docs/API.md's reconciliation over the bookings read from one snapshot: each line's
// candidates (step 1, candidates.ts), the pairing (step 2, pairing.ts), the parts (step 3,
// parts.ts) and the answer (step 4). Pure: the rows come in, the answer's JSON text goes
// out; a generator that yields now and then, so that the endpoint can let the event loop
// run in between.

import { LIMITS } from '../messages.js';
import type { BookingRow } from '../search/index.js';
import { jsonString } from '../search-endpoint.js';
import type { ReconcileLine, ReconcileRequest } from './body.js';
import { type Booking, bookingsOf, everyLinesCandidates, konten, poolOf } from './candidates.js';
import { type Candidates, STEP_EDGES } from './costs.js';
import { pairLines } from './pairing.js';
import { bestSplit, better } from './parts.js';

/** docs/API.md: a line whose window holds more such bookings is not split. */
export const MAX_PARTS_POOL = 400;
/**
 * docs/API.md: the most candidates and combinations of parts one statement may weigh
 * together. Each takes about as long; the candidates are what it holds while it pairs
 * (every line's, until the answer), and at this bound a statement holds about 100 MB, so
 * that the two at once (gate.ts) stay within about 200 MB.
 */
export const MAX_WEIGHED = LIMITS.weighed;
const MAX_ALTERNATIVES = 3;
// Lines' answers between two yields: each step well under the endpoint's slice.
const ANSWERS_A_STEP = 32;

/**
 * The answer's JSON text for `request` over `rows` (every booking of its windows), or
 * `undefined` when it would weigh more than `limit` candidates and combinations of parts.
 */
export function* reconcile(
  request: ReconcileRequest,
  rows: readonly BookingRow[],
  limit: number = MAX_WEIGHED,
): Generator<void, string | undefined, void> {
  const bookings = yield* bookingsOf(rows, request.ausser);
  yield;
  const edges = yield* everyLinesCandidates(request, bookings, limit);
  if (edges === undefined) return undefined;
  const weighed = edges.reduce((sum, list) => sum + list.booking.length, 0);
  const paired = yield* pairByDate(request.lines, edges, bookings.length);
  const got = Array.from(paired, (booking) => (booking === -1 ? [] : [booking]));
  const unsplit = yield* splitLines(request, bookings, got, limit - weighed);
  if (unsplit === undefined) return undefined;

  const linesOf = new Int32Array(bookings.length);
  for (const list of edges) for (const booking of list.booking) linesOf[booking] = (linesOf[booking] as number) + 1;
  yield;
  // Joined a few at a time: joining them all at once flattens every line's text in one go.
  const parts: string[] = [];
  let answers: string[] = [];
  let looked = 0;
  for (let i = 0; i < request.lines.length; i += 1) {
    const list = edges[i] as Candidates;
    answers.push(
      answerOf(request.lines[i] as ReconcileLine, list, got[i] as number[], bookings, linesOf, unsplit.has(i)),
    );
    looked += list.booking.length;
    if (answers.length === ANSWERS_A_STEP || looked >= STEP_EDGES) {
      looked = 0;
      parts.push(answers.join(','));
      answers = [];
      yield;
    }
  }
  if (answers.length > 0) parts.push(answers.join(','));
  return `{"zeilen":[${parts.join(',')}]}`;
}

/**
 * docs/API.md, step 3: each line without a booking in `got` given its parts there, if any;
 * the result, the lines whose pool was too large to split, or `undefined` once more than
 * `limit` combinations were weighed.
 */
function* splitLines(
  request: ReconcileRequest,
  bookings: readonly Booking[],
  got: number[][],
  limit: number,
): Generator<void, Set<number> | undefined, void> {
  const given = new Uint8Array(bookings.length);
  for (const mine of got) for (const booking of mine) given[booking] = 1;
  const unsplit = new Set<number>();
  let left = limit;
  let looked = 0;
  for (let i = 0; i < request.lines.length; i += 1) {
    const line = request.lines[i] as ReconcileLine;
    if (line.teile < 2 || got[i]?.length !== 0 || line.betragCents === 0) continue;
    // Each line's window is walked: a thousand lines over a year's bookings take their turns.
    if (looked >= STEP_EDGES) {
      looked = 0;
      yield;
    }
    const pool = poolOf(line, konten(line, request), bookings, given, MAX_PARTS_POOL);
    looked += pool.looked;
    if (pool.same.length + pool.opposite.length > MAX_PARTS_POOL) {
      unsplit.add(i);
      continue;
    }
    // A part it cannot answer is the line's 500, as a candidate is: without it, the parts
    // it gets, or that it has none, could be wrong.
    if (pool.broken !== undefined) throw pool.broken;
    const same = yield* bestSplit(pool.same, line.betragCents, line.toleranzCents, line.teile, left);
    left -= same.weighed;
    let { split } = same;
    if (line.beide && left >= 0) {
      const other = yield* bestSplit(pool.opposite, -line.betragCents, line.toleranzCents, line.teile, left);
      left -= other.weighed;
      if (other.split !== undefined && (split === undefined || better(other.split, split))) split = other.split;
    }
    if (left < 0) return undefined;
    if (split === undefined) continue;
    got[i] = split.parts.map((part) => part.booking);
    for (const part of split.parts) given[part.booking] = 1;
  }
  return unsplit;
}

/**
 * docs/API.md, step 2: each line's booking (an index), or -1. Paired in the order of its
 * ties: the lines by date, then place; the bookings are by date, then id already.
 */
function* pairByDate(
  lines: readonly ReconcileLine[],
  edges: readonly Candidates[],
  bookings: number,
): Generator<void, Int32Array, void> {
  // Only lines of one date change the pairing by their order in the request.
  const order = lines
    .map((_, i) => i)
    .sort((a, b) => (lines[a] as ReconcileLine).day - (lines[b] as ReconcileLine).day || a - b);
  const inOrder = yield* pairLines(
    order.map((line) => edges[line] as Candidates),
    bookings,
  );
  const paired = new Int32Array(lines.length);
  order.forEach((line, k) => {
    paired[line] = inOrder[k] as number;
  });
  return paired;
}

/** docs/API.md, step 4: one line's answer. */
function answerOf(
  line: ReconcileLine,
  list: Candidates,
  got: readonly number[],
  bookings: readonly Booking[],
  linesOf: Int32Array,
  unsplit: boolean,
): string {
  const mine = got.map((index) => bookings[index] as Booking).sort((a, b) => b.day - a.day || b.id - a.id);
  const only = got[0];
  const eindeutig = got.length === 1 && list.booking.length === 1 && linesOf[only as number] === 1;
  const alternatives = nearestNotGot(list, got, bookings).map(
    (k) => (bookings[list.booking[k] as number] as Booking).json,
  );
  return (
    `{"ref":${jsonString(line.ref)},"buchungen":[${mine.map((booking) => booking.json).join(',')}],` +
    `"kandidaten":${list.booking.length},"eindeutig":${eindeutig},"alternativen":[${alternatives.join(',')}]` +
    `${unsplit ? ',"teile_gesucht":false' : ''}}`
  );
}

/** The places of the MAX_ALTERNATIVES candidates of `list` not in `got`, least cents apart first, then days, then id. */
function nearestNotGot(list: Candidates, got: readonly number[], bookings: readonly Booking[]): number[] {
  const { booking, cents, days } = list;
  const id = (k: number): number => (bookings[booking[k] as number] as Booking).id;
  const order = (a: number, b: number): number =>
    (cents[a] as number) - (cents[b] as number) || (days[a] as number) - (days[b] as number) || id(a) - id(b);
  const best: number[] = [];
  for (let k = 0; k < booking.length; k += 1) {
    if (got.includes(booking[k] as number)) continue;
    let at = best.length;
    while (at > 0 && order(k, best[at - 1] as number) < 0) at -= 1;
    if (at < MAX_ALTERNATIVES) {
      best.splice(at, 0, k);
      if (best.length > MAX_ALTERNATIVES) best.pop();
    }
  }
  return best;
}
