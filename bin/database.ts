// The database file, as the CLI keeps it: opened read-only, checked, and watched, because
// it belongs to another program that may restore it from a backup (a rename) or delete it
// while we serve.

import { type Stats, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { errorCode } from '../lib/errors.js';
import type { RequestHandler } from '../lib/types.js';
import { CliError, describeFsError } from './args.js';

// A search waits this long for another program's write lock before it answers 500 with
// Retry-After; better-sqlite3's default of 5 s would block every other request meanwhile.
const BUSY_TIMEOUT_MS = 100;
// How often the file is looked at; a replacement is noticed within this.
const WATCH_INTERVAL_MS = 1_000;

export function openReadOnly(file: string): Database.Database {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch (error: unknown) {
    throw new CliError(`cannot open database ${file}: ${describeFsError(error)}`);
  }
  if (!stats.isFile()) throw new CliError(`cannot open database ${file}: not a regular file`);
  try {
    return new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error: unknown) {
    throw new CliError(`cannot open database ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** One line for why `file` cannot be served. */
export function describeDatabaseError(file: string | undefined, error: unknown): string {
  if (error instanceof CliError) return error.message;
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB') return `${file} is not a SQLite database`;
  return file === undefined ? message : `cannot serve ${file}: ${message}`;
}

/**
 * Opens `file` and builds its handler once, then closes it again: the primary of
 * --workers says what is wrong once, instead of every worker saying it.
 */
export function preflightDatabaseFile(file: string, build: (db: Database.Database) => RequestHandler): void {
  const db = openReadOnly(file);
  buildOrClose(db, build, file);
  db.close();
}

export interface ServedDatabase {
  /** Always the handler over the file as it is now. */
  handler: RequestHandler;
  close(): void;
}

/**
 * Serves `file` through `build` and follows it: when it is replaced (another inode at the
 * path) the new file is opened, checked and served; when it is deleted or replaced by one
 * that cannot be served, the old connection is closed, so searches answer docs/API.md's 500
 * (the status endpoint keeps answering) until a valid file is back.
 */
export function watchDatabase(
  file: string,
  build: (db: Database.Database) => RequestHandler,
  log: (line: string) => void,
): ServedDatabase {
  let db = openReadOnly(file);
  let handler = buildOrClose(db, build, file);
  // While serving, only another inode counts as a change: the owner writes in place all day.
  // While not serving, any change is worth another try.
  let seen = identity(file, false);
  let serving = true;

  const followFile = (): void => {
    const now = identity(file, !serving);
    if (now === seen) return;
    if (serving) db.close();
    serving = false;
    if (now === undefined) {
      seen = undefined;
      return log(`database ${file} is gone; searches answer 500 until it is back`);
    }
    try {
      const next = openReadOnly(file);
      handler = buildOrClose(next, build, file);
      db = next;
      serving = true;
      seen = identity(file, false);
      log(`database ${file} was replaced; serving the new file`);
    } catch (error: unknown) {
      seen = identity(file, true);
      log(`${describeDatabaseError(file, error)}; searches answer 500 until a valid file is there`);
    }
  };
  const timer = setInterval(followFile, WATCH_INTERVAL_MS);
  timer.unref();

  return {
    handler: (req, res, next) => handler(req, res, next),
    close: () => {
      clearInterval(timer);
      if (db.open) db.close();
    },
  };
}

/** A database that is not a file to follow (the in-memory demo). */
export function inMemoryDatabase(
  db: Database.Database,
  build: (db: Database.Database) => RequestHandler,
): ServedDatabase {
  return { handler: buildOrClose(db, build, undefined), close: () => db.close() };
}

function buildOrClose(
  db: Database.Database,
  build: (db: Database.Database) => RequestHandler,
  file: string | undefined,
): RequestHandler {
  try {
    return build(db);
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeDatabaseError(file, error));
  }
}

function identity(file: string, withContent: boolean): string | undefined {
  try {
    const { dev, ino, size, mtimeMs } = statSync(file);
    return withContent ? `${dev}:${ino}:${size}:${mtimeMs}` : `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}
