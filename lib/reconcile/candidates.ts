// docs/API.md's reconciliation, step 1: the bookings as it sees them, each line's candidates
// among them, and the bookings a line may take as parts (step 3).

import { dayNumber } from '../days.js';
import { isCalendarDate } from '../query.js';
import type { BookingRow } from '../search/index.js';
import { formatBooking } from '../search-endpoint.js';
import type { ReconcileLine, ReconcileRequest } from './body.js';
import type { Candidates } from './costs.js';
import { firstAtLeast, type Part } from './parts.js';

// Bookings between two yields: each step well under the endpoint's slice.
const STEP = 256;
const INT32_MAX = 2 ** 31 - 1;

/** A booking as the reconciliation sees it. */
export interface Booking {
  id: number;
  day: number;
  /** In the client's convention: −amount_cents. */
  cents: number;
  konto: string | null;
  /** Its JSON object, as the GET's answer writes it. */
  json: string;
  /**
   * Why it cannot be answered (an amount not whole cents, a blob for a text): the 500 of a
   * line that finds it, as of the GET that finds it; lines that do not find it are answered.
   * Never a part (poolOf).
   */
  broken?: Error;
}

/** The rows as bookings, each once, by date and id; those in `ausser` left out. Throws on a row that breaks the contract. */
export function* bookingsOf(
  rows: readonly BookingRow[],
  ausser: ReadonlySet<number>,
): Generator<void, Booking[], void> {
  const seen = new Set<number>();
  const bookings: Booking[] = [];
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i] as BookingRow;
    const [id, date, amountCents, , , konto] = row;
    // A row the GET would refuse to answer is the 500 of a line that finds it; one whose
    // date is no day cannot be placed in any line's window: the 500 of the whole request.
    let answer: Pick<Booking, 'json' | 'broken'>;
    try {
      answer = { json: formatBooking(row) };
    } catch (error) {
      if (typeof date !== 'string' || !isCalendarDate(date) || !(error instanceof Error)) throw error;
      answer = { json: '', broken: error };
    }
    if (!seen.has(id) && !ausser.has(id)) {
      seen.add(id);
      bookings.push({ id, day: dayNumber(date), cents: -amountCents || 0, konto, ...answer });
    }
    if (i % STEP === STEP - 1) yield;
  }
  yield;
  return bookings.sort((a, b) => a.day - b.day || a.id - b.id);
}

/** Each line's candidates (step 1), or `undefined` once they are more than `limit` together. */
export function* everyLinesCandidates(
  request: ReconcileRequest,
  bookings: readonly Booking[],
  limit: number,
): Generator<void, Candidates[] | undefined, void> {
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
  const finder = new Finder(bookings, byAmount, amounts);
  const edges: Candidates[] = [];
  let count = 0;
  for (const line of request.lines) {
    const list = finder.candidatesOf(line, konten(line, request));
    count += list.booking.length;
    if (count > limit) return undefined;
    edges.push(list);
    yield;
  }
  return edges;
}

export function konten(line: ReconcileLine, request: ReconcileRequest): ReadonlySet<string> | undefined {
  const names = line.konten ?? request.konten;
  return names === undefined ? undefined : new Set(names);
}

/**
 * Each line's candidates in turn, gathered in columns as long as the bookings (a line has
 * each at most once) and copied out at their length: growing lists for each line left
 * garbage of several times its candidates' size, which the process kept.
 */
class Finder {
  private readonly bookings: readonly Booking[];
  private readonly byAmount: ReadonlyMap<number, number[]>;
  private readonly amounts: readonly number[];
  private readonly booking: Int32Array;
  private readonly cents: Float64Array;
  private readonly days: Uint16Array;
  private readonly opposite: Uint8Array;
  /** With `beide`, each booking's place among the line's candidates, or -1: one within tolerance both ways is looked at twice. */
  private readonly at: Int32Array;
  private found = 0;

  constructor(bookings: readonly Booking[], byAmount: ReadonlyMap<number, number[]>, amounts: readonly number[]) {
    this.bookings = bookings;
    this.byAmount = byAmount;
    this.amounts = amounts;
    this.booking = new Int32Array(bookings.length);
    this.cents = new Float64Array(bookings.length);
    this.days = new Uint16Array(bookings.length);
    this.opposite = new Uint8Array(bookings.length);
    this.at = new Int32Array(bookings.length).fill(-1);
  }

  /** docs/API.md, step 1: the bookings of the line's window and konten within its tolerance, of its sign or, with `beide`, either. */
  candidatesOf(line: ReconcileLine, names: ReadonlySet<string> | undefined): Candidates {
    this.found = 0;
    this.look(line, names, line.betragCents, 0);
    if (line.beide) {
      this.look(line, names, -line.betragCents, 1);
      for (let k = 0; k < this.found; k += 1) this.at[this.booking[k] as number] = -1;
    }
    return {
      booking: this.booking.slice(0, this.found),
      // No more cents apart than its tolerance: in 32 bits for every tolerance but a huge one.
      cents:
        line.toleranzCents <= INT32_MAX
          ? new Int32Array(this.cents.subarray(0, this.found))
          : this.cents.slice(0, this.found),
      days: this.days.slice(0, this.found),
      opposite: this.opposite.slice(0, this.found),
    };
  }

  private look(line: ReconcileLine, names: ReadonlySet<string> | undefined, center: number, other: number): void {
    const { amounts, cents } = this;
    for (let k = firstAtLeast(amounts, center - line.toleranzCents, itself); k < amounts.length; k += 1) {
      const amount = amounts[k] as number;
      if (amount > center + line.toleranzCents) break;
      for (const index of this.byAmount.get(amount) as number[]) {
        const found = this.bookings[index] as Booking;
        const apart = Math.abs(found.day - line.day);
        if (apart > line.tage || (names !== undefined && (found.konto === null || !names.has(found.konto)))) continue;
        if (found.broken !== undefined) throw found.broken;
        const off = Math.abs(amount - center);
        const before = this.at[index] as number;
        // A booking within tolerance both ways is taken the nearer way, its own sign on a tie.
        if (before !== -1) {
          if (off < (cents[before] as number)) {
            cents[before] = off;
            this.opposite[before] = other;
          }
          continue;
        }
        if (line.beide) this.at[index] = this.found;
        // The bookings are by date, then id: their index is their order in ties (pairing.ts).
        this.booking[this.found] = index;
        cents[this.found] = off;
        this.days[this.found] = apart;
        this.opposite[this.found] = other;
        this.found += 1;
      }
    }
  }
}

/** A line's possible parts (poolOf), and how many bookings were looked at to find them. */
export interface Pool {
  same: Part[];
  opposite: Part[];
  broken?: Error;
  looked: number;
}

/**
 * The bookings not given to any line that may be a part of `line`: of its sign, and of the
 * other with `beide`, at most `most` and one; of those, the first that cannot be answered
 * (`broken`), the 500 of a line that weighs them.
 */
export function poolOf(
  line: ReconcileLine,
  names: ReadonlySet<string> | undefined,
  bookings: readonly Booking[],
  given: Uint8Array,
  most: number,
): Pool {
  const pool: Pool = { same: [], opposite: [], looked: 0 };
  const sign = Math.sign(line.betragCents);
  const first = firstAtLeast(bookings, line.day - line.tage, dayOf);
  let index = first;
  for (; index < bookings.length && pool.same.length + pool.opposite.length <= most; index += 1) {
    const booking = bookings[index] as Booking;
    if (booking.day > line.day + line.tage) break;
    if (given[index] === 1 || (names !== undefined && (booking.konto === null || !names.has(booking.konto)))) continue;
    const part = { cents: booking.cents, days: Math.abs(booking.day - line.day), id: booking.id, booking: index };
    if (Math.sign(booking.cents) === sign) pool.same.push(part);
    else if (line.beide && Math.sign(booking.cents) === -sign) pool.opposite.push(part);
    else continue;
    if (booking.broken !== undefined) pool.broken ??= booking.broken;
  }
  pool.looked = index - first;
  return pool;
}

const itself = (cents: number): number => cents;
const dayOf = (booking: Booking): number => booking.day;
