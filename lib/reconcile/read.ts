// The bookings of a reconciliation's windows, read from one snapshot of the file in slices of
// a few hundred bookings, each a search of the turns (lib/search/turns.ts) in a turn of the
// event loop of its own, so that other clients are answered in between. No read transaction
// is held from one slice to the next: on a rollback-journal file it would keep the
// application from committing for the whole read. Instead each slice names the version of
// the file it read (lib/search/booking-search.ts, `snapshot`); when a slice read another
// version than the first (a commit came between them, or the file was opened again), the
// slices are thrown away and every window read again in one search, one snapshot, as a
// statement too large to slice is.

import { dayNumber, isoDate } from '../days.js';
import { LIMITS } from '../messages.js';
import type { SearchQuery } from '../query.js';
import type { BookingRow, Outcome, Requester, SearchRows } from '../search/index.js';
import type { SearchTurns } from '../search-endpoint.js';
import type { ReconcileRequest } from './body.js';

export const MAX_WINDOW_BOOKINGS = LIMITS.windowBookings;
/** How many bookings a slice of the read aims at: about half a millisecond. */
export const SLICE_BOOKINGS = 500;
// The first slice's days, before the bookings a day are known; a slice's days at most grow
// fourfold from one to the next, so that a book far denser than the slices so far does not
// make one slice read it all.
const FIRST_SLICE_DAYS = 7;
const MOST_GROWTH = 4;
// The widest amount a candidate or a part can have: a betrag and a toleranz of 12 digits each.
const WIDEST_CENTS = 2 * 99_999_999_999_999;
const FIRST_DAY = dayNumber('0000-01-01');
const LAST_DAY = dayNumber('9999-12-31');

/** Days `from` to `to`, both inclusive, as day numbers (lib/days.ts). */
export type Span = readonly [from: number, to: number];

/**
 * The days whose bookings (of every amount) a line may need: the lines' windows, overlapping
 * and adjoining ones merged, in date order.
 */
export function windowsOf(request: ReconcileRequest): Span[] {
  // docs/API.md: only EUR is stored; any other currency has no candidates.
  if (request.waehrung !== 'EUR') return [];
  const spans = request.lines.map(
    (line) => [Math.max(FIRST_DAY, line.day - line.tage), Math.min(LAST_DAY, line.day + line.tage)] as const,
  );
  spans.sort((a, b) => a[0] - b[0]);
  const windows: Span[] = [];
  let [from, to] = spans[0] ?? [0, -1];
  for (const [start, end] of spans) {
    if (start > to + 1) {
      windows.push([from, to]);
      from = start;
    }
    to = Math.max(to, end);
  }
  if (spans.length > 0) windows.push([from, to]);
  return windows;
}

/** The search for every booking of `span`, `limit` of them at most. */
export function everyAmount([from, to]: Span, limit: number): SearchQuery {
  return { von: isoDate(from), bis: isoDate(to), betragCents: 0, toleranzCents: WIDEST_CENTS, waehrung: 'EUR', limit };
}

/**
 * The next slice: the first `days` days of `windows` (which it takes them off), as spans.
 * A window longer than that is cut; shorter ones are taken together.
 */
export function takeDays(windows: Span[], days: number): Span[] {
  const slice: Span[] = [];
  let left = days;
  while (left > 0 && windows.length > 0) {
    const [from, to] = windows[0] as Span;
    if (to - from + 1 <= left) {
      slice.push([from, to]);
      windows.shift();
      left -= to - from + 1;
    } else {
      slice.push([from, from + left - 1]);
      windows[0] = [from + left, to];
      left = 0;
    }
  }
  return slice;
}

/** The days the next slice takes, from the bookings a day read so far. */
export function nextSliceDays(days: number, read: number, last: number): number {
  if (days === 0) return FIRST_SLICE_DAYS;
  const aimed = read === 0 ? Number.POSITIVE_INFINITY : Math.floor((SLICE_BOOKINGS * days) / read);
  return Math.max(1, Math.min(aimed, last * MOST_GROWTH));
}

/**
 * Every booking of `windows` from one snapshot, `MAX_WINDOW_BOOKINGS + 1` at most (one more
 * tells that there are more), read in slices: `done` hears the rows, or the first failure.
 * Nothing is called when the client has left (the turns skip a search of a closed connection).
 */
export function readWindows(
  search: SearchTurns,
  windows: readonly Span[],
  from: Requester,
  done: (outcome: Outcome<SearchRows>) => void,
): void {
  const left = [...windows];
  const rows: BookingRow[] = [];
  let snapshot: string | undefined;
  let slices = 0;
  let days = 0;
  let lastDays = 0;
  const slice = (): void => {
    const taken = takeDays(left, nextSliceDays(days, rows.length, lastDays));
    lastDays = taken.reduce((sum, [start, end]) => sum + end - start + 1, 0);
    const limit = MAX_WINDOW_BOOKINGS + 1 - rows.length;
    search.queue(
      taken.map((span) => everyAmount(span, limit)),
      (outcome) => {
        if (!outcome.ok) return done(outcome);
        const read = outcome.result;
        slices += 1;
        // A search that names no snapshot (a stand-in's) is one snapshot only when read in one.
        const one = slices === 1 ? read.snapshot !== undefined || left.length === 0 : read.snapshot === snapshot;
        if (!one) return inOne();
        snapshot = read.snapshot;
        for (const row of read.rows) rows.push(row);
        days += lastDays;
        if (left.length === 0 || rows.length > MAX_WINDOW_BOOKINGS)
          done({ ok: true, result: { count: rows.length, rows } });
        else slice();
      },
      from,
    );
  };
  /** The file changed between two slices: every window again, in one search. */
  const inOne = (): void =>
    search.queue(
      windows.map((span) => everyAmount(span, MAX_WINDOW_BOOKINGS + 1)),
      done,
      from,
    );
  if (windows.length === 0) done({ ok: true, result: { count: 0, rows: [] } });
  else slice();
}
