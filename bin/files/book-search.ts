// The search over a book's file once a connection to it is open, as the serving process and
// the guard process (bin/guard/guard.ts) build it: the mapping served (given, or recognised from
// the file's tables), the file validated against it, and the schema cookie that notices a
// file changed under the connection. How the file is followed over time is bin/books/database.ts.

import type Database from 'better-sqlite3';
import {
  type BookingSearch,
  createBookingSearch,
  detectApplication,
  findSchemaProblems,
  isNotReadableNow,
  ownSchema,
  resolveOptions,
  type TableNames,
  validateDatabase,
} from '../../lib/internal.js';

/** Whose tables a book's file holds: `app` as --app gives it (`undefined`: recognised from the file), `tables` as --table-names. */
export interface BookFile {
  app: string | undefined;
  tables: Partial<TableNames>;
}

/**
 * The search over `db` for `book`, validated (a CliError-worthy Error when the file does not
 * fit), with the mapping served. `changed` is called, and the search refuses its read
 * transaction, when the file's schema is no longer the one validated here (a file
 * overwritten in place, a table swapped for a view): the connection must then be opened
 * and checked again. Reading the schema cookie (`PRAGMA schema_version`) loads nothing and
 * prepares nothing; every other statement would first load the new schema and prepare
 * itself again over it. `meaningJudged`: the bookings of this very file (its identity and
 * schema cookie) were judged by a guard process a moment ago (bin/guard/guard.ts): its tables are
 * checked again here, its sample is not read again.
 */
export function searchOverFile(
  db: Database.Database,
  book: BookFile,
  changed: () => void = () => {},
  waited?: (seconds: number) => void,
  meaningJudged = false,
): { search: BookingSearch; app: string } {
  const app = book.app ?? recogniseApplication(db, book.tables);
  const { mapping } = resolveOptions({ app, tables: book.tables });
  const cookie = db.prepare<[], number>('PRAGMA schema_version').pluck();
  const checked = cookie.get();
  const snapshot = (): void => {
    let now: unknown;
    try {
      now = cookie.get();
    } catch (error: unknown) {
      // A lock or a state that passes (a hot journal) is answered as such; a header that
      // is no longer a database's (a file truncated or written over) means a new file.
      if (isNotReadableNow(error)) throw error;
      now = error;
    }
    if (now === checked) return;
    changed();
    throw new SchemaChanged();
  };
  validateDatabase(db, mapping, { meaningJudged });
  return { search: createBookingSearch(db, mapping, waited, snapshot), app };
}

/**
 * Whose tables `db` holds when no --app was given, as `check` recognises them: `own` when
 * the own schema (under `tables`) fits, else the first application whose tables fit, else
 * `own`, whose missing tables the start then names.
 */
export function recogniseApplication(db: Database.Database, tables: Partial<TableNames>): string {
  if (findSchemaProblems(db, ownSchema(tables)).length === 0) return 'own';
  return detectApplication(db)?.name ?? 'own';
}

/**
 * The file's schema is not the one the search was built for: answered as the 500 with
 * Retry-After (lib/errors.ts, SQLITE_SCHEMA), while the file is opened and checked again.
 */
export class SchemaChanged extends Error {
  readonly code = 'SQLITE_SCHEMA';

  constructor() {
    super('the schema of the file changed since it was checked; it is opened and checked again');
  }
}
