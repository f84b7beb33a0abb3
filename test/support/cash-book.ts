// Generated cash books and random queries for the search tests, and the check that holds
// the tuned search (alone and queued in one turn) to the one plain query.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../../lib/query.js';
import { createBookingSearch } from '../../lib/search/index.js';
import { fixtureSql } from './helpers.js';
import { plainSearch as oracle } from './plain-query.js';

/** The search that matches every booking of any date: all of them counted, a thousand listed. */
export const WIDEST: SearchQuery = {
  von: '0000-01-01',
  bis: '9999-12-31',
  betragCents: 0,
  toleranzCents: 99_999_999_999_999,
  waehrung: 'EUR',
  limit: 1000,
};

export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const START = Date.UTC(2023, 0, 1);

/** A cash book of `rows` bookings over three years, in random order, amounts skewed. */
export function cashBook(rows: number, indexes = true): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = OFF'); // category 99 dangles, as in fixtures/bookings.sql
  const schema = fixtureSql('schema.sql');
  db.exec(indexes ? schema : schema.replace(/^CREATE INDEX.*$/gm, ''));
  db.exec(
    "INSERT INTO categories VALUES (1, 'Porto'), (2, 'Bürobedarf'); INSERT INTO payment_methods VALUES (1, 'Barkasse')",
  );
  const next = random(7);
  const insert = db.prepare(
    'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
  );
  const typical = [435, 1250, 95, 1999, -5000];
  db.transaction(() => {
    for (let i = 0; i < rows; i += 1) {
      const date = isoDate(START + Math.floor(next() * 1096) * 86_400_000);
      const roll = next();
      const cents =
        roll < 0.4
          ? (typical[Math.floor(next() * typical.length)] as number)
          : roll < 0.5
            ? -Math.floor(next() * 50_000)
            : Math.floor(Math.exp(next() * 11));
      const category = next() < 0.2 ? null : next() < 0.05 ? 99 : 1 + Math.floor(next() * 2);
      insert.run(date, cents, `Buchung ${i}`, category, next() < 0.1 ? null : 1);
    }
  })();
  return db;
}

export function randomQueries(count: number, seed: number, amounts: number[]): SearchQuery[] {
  const next = random(seed);
  const queries: SearchQuery[] = [];
  const tolerances = [0, 0, 0, 1, 10, 100, 500, 5000, 100_000, 99_999_999_999_999];
  const lengths = [0, 1, 7, 31, 92, 365, 1096, 4000];
  for (let i = 0; i < count; i += 1) {
    const from = START - 200 * 86_400_000 + Math.floor(next() * 1400) * 86_400_000;
    const length = lengths[Math.floor(next() * lengths.length)] as number;
    const stored =
      next() < 0.8 ? (amounts[Math.floor(next() * amounts.length)] as number) : Math.floor(next() * 20_000) - 10_000;
    queries.push({
      von: isoDate(from),
      bis: isoDate(from + length * 86_400_000),
      betragCents: -stored,
      toleranzCents: tolerances[Math.floor(next() * tolerances.length)] as number,
      waehrung: 'EUR',
      limit: [0, 1, 3, 50, 1000][Math.floor(next() * 5)] as number,
    });
  }
  return queries;
}

/** Each query alone, then all of them queued in one turn of the event loop, as the handler runs them. */
export async function assertSameAsOracle(db: Database.Database, queries: SearchQuery[]): Promise<void> {
  const search = createBookingSearch(db);
  const plain = oracle(db);
  const expected = queries.map((query) => plain(query));
  for (const [i, query] of queries.entries()) assert.deepEqual(search(query), expected[i], JSON.stringify(query));
  const queued = await Promise.all(
    queries.map(
      (query) =>
        new Promise((resolve, reject) =>
          search.queue(query, (outcome) => (outcome.ok ? resolve(outcome.result) : reject(outcome.error))),
        ),
    ),
  );
  for (const [i, query] of queries.entries()) assert.deepEqual(queued[i], expected[i], JSON.stringify(query));
}
