// The query shapes of a reconciliation run, built around real bookings of the file, so
// that every search rotates over many real amounts and dates.

import type Database from 'better-sqlite3';
import type { SearchQuery } from '../lib/query.js';

export const SHAPES = [
  'month exact',
  'month ±5 €',
  '10 years exact',
  '10 years ±1 €',
  '10 years everything',
  'limit=0',
] as const;
export type Shape = (typeof SHAPES)[number];

const DAY_MS = 86_400_000;
const shift = (date: string, days: number): string =>
  new Date(Date.parse(date) + days * DAY_MS).toISOString().slice(0, 10);

/** A seeded generator of numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

/** The search of `shape` around one booking (`date`, `cents`) of a file dated `first` to `last`. */
export function shapeQuery(shape: Shape, date: string, cents: number, first: string, last: string): SearchQuery {
  const month = { von: shift(date, -15), bis: shift(date, 15) };
  const decade = { von: first, bis: last };
  const base = { betragCents: -cents, toleranzCents: 0, waehrung: 'EUR', limit: 50 };
  const query: Record<Shape, SearchQuery> = {
    'month exact': { ...base, ...month },
    'month ±5 €': { ...base, ...month, toleranzCents: 500 },
    '10 years exact': { ...base, ...decade },
    '10 years ±1 €': { ...base, ...decade, toleranzCents: 100 },
    '10 years everything': { ...base, ...decade, betragCents: 0, toleranzCents: 99_999_999_999_999 },
    'limit=0': { ...base, ...decade, toleranzCents: 100, limit: 0 },
  };
  return query[shape];
}

/** `count` searches of `shape`, each around a booking drawn at random (seeded) from `db`. */
export function queriesFor(db: Database.Database, shape: Shape, count: number, seed = 1): SearchQuery[] {
  const maxId = db.prepare<[], number>('SELECT max(id) FROM entries').pluck().get() ?? 0;
  const [first, last] = db
    .prepare<[], [string, string]>('SELECT (SELECT min(date) FROM entries), (SELECT max(date) FROM entries)')
    .raw()
    .get() ?? ['2016-01-01', '2026-12-31'];
  const booking = db
    .prepare<[number], [string, number]>('SELECT date, amount_cents FROM entries WHERE id >= ? ORDER BY id LIMIT 1')
    .raw();
  const random = seededRandom(seed);
  const queries: SearchQuery[] = [];
  for (let i = 0; i < count; i += 1) {
    const [date, cents] = booking.get(1 + Math.floor(random() * maxId)) ?? [last, 1250];
    queries.push(shapeQuery(shape, date, cents, first, last));
  }
  return queries;
}

/** The query string of a search, as a client sends it. */
export function toQueryString(q: SearchQuery): string {
  const euros = (cents: number): string =>
    `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
  return `von=${q.von}&bis=${q.bis}&betrag=${euros(q.betragCents)}&toleranz=${euros(q.toleranzCents)}&limit=${q.limit}`;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}
