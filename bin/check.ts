// booking-search-server check --db FILE: tells an admin whether a database fits, what it
// holds, its journal and whether it can be read now, and what the search needs that it
// lacks. Opens read-only; changes nothing, creates nothing beside the file.

import type Database from 'better-sqlite3';
import { findRecommendedIndexes, findSchemaProblems } from '../lib/schema.js';
import { explainCount } from '../lib/search.js';
import { describeDatabaseError, journalOf, notReadableNow, openDatabase } from './database-file.js';

/**
 * Writes the report to stdout; returns the exit code: 0 when the schema fits and the file
 * can be read now, else 1.
 */
export function reportOnDatabase(file: string): number {
  const lines: string[] = [`Database: ${file}`];
  let db: Database.Database | undefined;
  try {
    const opened = openDatabase(file, (db) => findSchemaProblems(db));
    lines.push(`Journal: ${journalOf(file).description}.`);
    if (!opened.readable) {
      lines.push(`Cannot be read now: ${opened.state.explanation}.`);
      return finish(lines, 1);
    }
    db = opened.db;
    const problems = opened.value;
    if (problems.length > 0) {
      lines.push('Schema: does not fit. Missing:', ...problems.map((problem) => `  - ${problem}`));
      lines.push('See docs/applications.md for serving another schema through views.');
      return finish(lines, 1);
    }
    const kinds = db
      .prepare<[], { name: string; type: string }>(
        "SELECT name, type FROM sqlite_schema WHERE name IN ('entries', 'categories', 'payment_methods') ORDER BY name",
      )
      .all();
    lines.push(`Schema: fits (${kinds.map(({ name, type }) => `${name}: ${type}`).join(', ')}).`);
    const [count, first, last] = db
      .prepare<[], [number, string | null, string | null]>(
        'SELECT count(*), (SELECT min(date) FROM entries), (SELECT max(date) FROM entries) FROM entries',
      )
      .raw()
      .get() ?? [0, null, null];
    lines.push(count === 0 ? 'Bookings: none.' : `Bookings: ${count}, dated ${first} to ${last}.`);

    if (kinds.some(({ name, type }) => name === 'entries' && type === 'view')) {
      lines.push('Indexes: entries is a view, so the search uses the indexes of the tables behind it.');
    } else {
      for (const index of findRecommendedIndexes(db)) {
        lines.push(
          index.presentAs === undefined
            ? `Index on (${index.columns.join(', ')}) for ${index.purpose}: missing. To add it (the owning application must allow it): ${index.createStatement}`
            : `Index on (${index.columns.join(', ')}) for ${index.purpose}: present (${index.presentAs}).`,
        );
      }
    }
    const plan = explainCount(db);
    lines.push(
      plan.some((detail) => /^SCAN /.test(detail))
        ? `The typical search (one amount in a month) reads every booking: ${plan.join('; ')}. It will be slow on a large book.`
        : `The typical search (one amount in a month) uses an index: ${plan.join('; ')}.`,
    );
    return finish(lines, 0);
  } catch (error: unknown) {
    const state = notReadableNow(file, error);
    lines.push(
      state === undefined
        ? `Cannot check: ${describeDatabaseError(file, error)}`
        : `Cannot be read now: ${state.explanation}.`,
    );
    return finish(lines, 1);
  } finally {
    db?.close();
  }
}

function finish(lines: string[], code: number): number {
  process.stdout.write(`${lines.join('\n')}\n`);
  return code;
}
