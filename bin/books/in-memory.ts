// The in-memory demo book: a database that is not a file to follow, served from the start.

import type Database from 'better-sqlite3';
import { CliError } from '../base/index.js';
import { describeDatabaseError, searchOverFile } from '../files/index.js';
import type { BookingSearchHandler, BuildHandler, ErrorHook, ServedDatabase } from './status.js';

/** A database that is not a file to follow (the in-memory demo). */
export function inMemoryDatabase(db: Database.Database, build: BuildHandler, logError: ErrorHook): ServedDatabase {
  let handler: BookingSearchHandler;
  try {
    const { search, app } = searchOverFile(db, { app: 'own', tables: {} }, undefined, build.waited);
    handler = build(search, app, logError);
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeDatabaseError(undefined, error));
  }
  const since = Date.now();
  return {
    ready: Promise.resolve(false),
    handler,
    status: () => ({ state: 'serving', reason: undefined, since, replaced: 0 }),
    updateCredentials: (credentials) => handler.updateCredentials(credentials),
    close: () => db.close(),
  };
}
