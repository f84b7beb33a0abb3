// docs/API.md's reconciliation over the bookings read from one snapshot: each line's
// candidates (step 1), the pairing (step 2, pairing.ts), the parts (step 3, parts.ts) and
// the answer (step 4). Pure: the rows come in, the answer's JSON text goes out; a generator
// that yields now and then, so that the endpoint can let the event loop run in between.

import type { BookingRow } from '../search/index.js';
import { formatBooking, jsonString } from '../search-endpoint.js';
import type { ReconcileLine, ReconcileRequest } from './body.js';
import { type Candidates, STEP_EDGES } from './costs.js';
import { dayNumber } from './days.js';
import { pairLines } from './pairing.js';
import { bestSplit, better, type Part, type Split } from './parts.js';

/** docs/API.md: a line whose window holds more such bookings is not split. */
export const MAX_PARTS_POOL = 400;
const MAX_ALTERNATIVES = 3;
// Bookings, and lines' answers, between two yields: each step well under the endpoint's slice.
const STEP = 256;
const ANSWERS_A_STEP = 32;
/** A booking as the reconciliation sees it. */
interface Booking {
  id: number;
  day: number;
  /** In the client's convention: −amount_cents. */
  cents: number;
  konto: string | null;
  /** Its JSON object, as the GET's answer writes it. */
  json: string;
}

/** The answer's JSON text for `request` over `rows` (every booking of its windows). */
export function* reconcile(request: ReconcileRequest, rows: readonly BookingRow[]): Generator<void, string, void> {
  const bookings = yield* bookingsOf(rows, request.ausser);
  yield;
  const byAmount = new Map<number, number[]>();
  for (let index = 0; index < bookings.length; index += 1) {
    const { cents } = bookings[index] as Booking;
    const list = byAmount.get(cents);
    if (list === undefined) byAmount.set(cents, [index]);
    else list.push(index);
    if (index % STEP === STEP - 1) yield;
  }
  const amounts = [...byAmount.keys()].sort((a, b) => a - b);
  yield;

  const edges: Candidates[] = [];
  const linesOf = new Int32Array(bookings.length);
  for (const line of request.lines) {
    const list = candidatesOf(line, konten(line, request), bookings, byAmount, amounts);
    for (const booking of list.booking) linesOf[booking] = (linesOf[booking] as number) + 1;
    edges.push(list);
    yield;
  }

  const paired = yield* pairByDate(request.lines, edges, bookings.length);
  const given = new Uint8Array(bookings.length);
  const got: number[][] = [];
  for (const booking of paired) {
    if (booking !== -1) given[booking] = 1;
    got.push(booking === -1 ? [] : [booking]);
  }

  const unsplit = new Set<number>();
  for (let i = 0; i < request.lines.length; i += 1) {
    const line = request.lines[i] as ReconcileLine;
    if (line.teile < 2 || got[i]?.length !== 0 || line.betragCents === 0) continue;
    const pool = poolOf(line, konten(line, request), bookings, given);
    if (pool.same.length + pool.opposite.length > MAX_PARTS_POOL) {
      unsplit.add(i);
      continue;
    }
    let split = yield* bestSplit(pool.same, line.betragCents, line.toleranzCents, line.teile);
    if (line.beide) {
      const other = yield* bestSplit(pool.opposite, -line.betragCents, line.toleranzCents, line.teile);
      if (other !== undefined && (split === undefined || better(other, split))) split = other;
    }
    if (split === undefined) continue;
    got[i] = (split as Split).parts.map((part) => part.booking);
    for (const part of (split as Split).parts) given[part.booking] = 1;
  }

  // Joined a few at a time: joining them all at once flattens every line's text in one go.
  const parts: string[] = [];
  let answers: string[] = [];
  let looked = 0;
  for (let i = 0; i < request.lines.length; i += 1) {
    answers.push(
      answerOf(
        request.lines[i] as ReconcileLine,
        edges[i] as Candidates,
        got[i] as number[],
        bookings,
        linesOf,
        unsplit.has(i),
      ),
    );
    looked += (edges[i] as Candidates).booking.length;
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

/** The rows as bookings, each once, by date and id; those in `ausser` left out. Throws on a row that breaks the contract. */
function* bookingsOf(rows: readonly BookingRow[], ausser: ReadonlySet<number>): Generator<void, Booking[], void> {
  const seen = new Set<number>();
  const bookings: Booking[] = [];
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i] as BookingRow;
    // A row the GET would refuse to answer (no date, no whole cents) is the 500 here too.
    const json = formatBooking(row);
    const [id, date, amountCents, , , konto] = row;
    if (!seen.has(id) && !ausser.has(id)) {
      seen.add(id);
      bookings.push({ id, day: dayNumber(date), cents: -amountCents || 0, konto, json });
    }
    if (i % STEP === STEP - 1) yield;
  }
  yield;
  return bookings.sort((a, b) => a.day - b.day || a.id - b.id);
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

function konten(line: ReconcileLine, request: ReconcileRequest): ReadonlySet<string> | undefined {
  const names = line.konten ?? request.konten;
  return names === undefined ? undefined : new Set(names);
}

/** docs/API.md, step 1: the bookings of the line's window and konten within its tolerance, of its sign or, with `beide`, either. */
function candidatesOf(
  line: ReconcileLine,
  names: ReadonlySet<string> | undefined,
  bookings: readonly Booking[],
  byAmount: ReadonlyMap<number, number[]>,
  amounts: readonly number[],
): Candidates {
  const booking: number[] = [];
  const cents: number[] = [];
  const days: number[] = [];
  const opposite: number[] = [];
  // With `beide`, where each booking stands: one within tolerance both ways is looked at twice.
  const at = line.beide ? new Map<number, number>() : undefined;
  const look = (center: number, other: number): void => {
    for (let k = firstAtLeast(amounts, center - line.toleranzCents); k < amounts.length; k += 1) {
      const amount = amounts[k] as number;
      if (amount > center + line.toleranzCents) break;
      for (const index of byAmount.get(amount) as number[]) {
        const found = bookings[index] as Booking;
        const apart = Math.abs(found.day - line.day);
        if (apart > line.tage || (names !== undefined && (found.konto === null || !names.has(found.konto)))) continue;
        const off = Math.abs(amount - center);
        const before = at?.get(index);
        // A booking within tolerance both ways is taken the nearer way, its own sign on a tie.
        if (before !== undefined) {
          if (off < (cents[before] as number)) {
            cents[before] = off;
            opposite[before] = other;
          }
          continue;
        }
        at?.set(index, booking.length);
        // The bookings are by date, then id: their index is their order in ties (pairing.ts).
        booking.push(index);
        cents.push(off);
        days.push(apart);
        opposite.push(other);
      }
    }
  };
  look(line.betragCents, 0);
  if (line.beide) look(-line.betragCents, 1);
  return {
    booking: Int32Array.from(booking),
    cents: Float64Array.from(cents),
    days: Int32Array.from(days),
    opposite: Uint8Array.from(opposite),
  };
}

/** The bookings not given to any line that may be a part of `line`: of its sign, and of the other with `beide`. */
function poolOf(
  line: ReconcileLine,
  names: ReadonlySet<string> | undefined,
  bookings: readonly Booking[],
  given: Uint8Array,
): { same: Part[]; opposite: Part[] } {
  const same: Part[] = [];
  const opposite: Part[] = [];
  const sign = Math.sign(line.betragCents);
  for (let index = firstDayAtLeast(bookings, line.day - line.tage); index < bookings.length; index += 1) {
    const booking = bookings[index] as Booking;
    if (booking.day > line.day + line.tage) break;
    if (given[index] === 1 || (names !== undefined && (booking.konto === null || !names.has(booking.konto)))) continue;
    const part = { cents: booking.cents, days: Math.abs(booking.day - line.day), id: booking.id, booking: index };
    if (Math.sign(booking.cents) === sign) same.push(part);
    else if (line.beide && Math.sign(booking.cents) === -sign) opposite.push(part);
  }
  return { same, opposite };
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

function firstAtLeast(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function firstDayAtLeast(bookings: readonly Booking[], day: number): number {
  let lo = 0;
  let hi = bookings.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((bookings[mid] as Booking).day < day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
