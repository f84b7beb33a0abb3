// The search over a book's file once a connection to it is open, as the serving process
// builds it (lib/book.ts opens the book: the mapping, the validation, the schema cookie).
// How the file is followed over time is bin/books/database.ts.

import type Database from 'better-sqlite3';
import { type createHandler, openBook } from '../../lib/internal.js';

/** A search as createHandler takes the command's own instead of a database: its turns (lib/search-endpoint.ts). */
export type SearchTurns = Exclude<Parameters<typeof createHandler>[0], Database.Database>;

/** Whose tables a book's file holds: `app` as --app gives it (`undefined`: recognised from the file), `tables` as --table-names. */
export type BookFile = Parameters<typeof openBook>[1];
/** The own schema's tables under other names (--table-names): entries, categories, paymentMethods. */
export type TableNames = Required<BookFile['tables']>;

/**
 * The search over `db` for `book`, validated (a CliError-worthy Error when the file does not
 * fit), with the app served. `changed` is called, and the search refuses its read
 * transaction (SchemaChanged), when the file's schema is no longer the one validated here:
 * the connection must then be opened and checked again. `judgedAt`: the schema cookie at
 * which a guard process judged this very file's bookings a moment ago (bin/guard/guard.ts): a
 * file whose cookie is another throws SchemaChanged, one whose cookie is that is not sampled again.
 */
export function searchOverFile(
  db: Database.Database,
  book: BookFile,
  changed: () => void = () => {},
  waited?: (seconds: number) => void,
  judgedAt?: number,
): { search: SearchTurns; app: string } {
  const opened = openBook(db, book).serve(judgedAt);
  return { search: opened.search({ changed, waited }), app: opened.app };
}
