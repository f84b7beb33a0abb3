// A book's file as the command opens it, in every process (lib/book.ts opens the book: the
// mapping, the validation, the schema cookie), its app named as the admin writes it; and the
// search over it once a connection is open, as the serving process builds it.
// How the file is followed over time is bin/books/database.ts.

import type Database from 'better-sqlite3';
import { type createHandler, openBook } from '../../lib/internal.js';

/** A search as createHandler takes the command's own instead of a database: its turns (lib/search-endpoint.ts). */
export type SearchTurns = Exclude<Parameters<typeof createHandler>[0], Database.Database>;

/** Where the admin writes a book's app (or would): its flag, its variable, or a line of a configuration file; `undefined`: the flag. */
export type AppIn = 'flag' | 'environment' | 'file' | undefined;

/**
 * Whose tables a book's file holds: `app` as --app gives it (`undefined`: recognised from the
 * file), `tables` as --table-names; `appIn`: where its app is written, as what the book's
 * lines advise names it (appSetting).
 */
export interface BookFile {
  readonly app: string | undefined;
  readonly tables: Parameters<typeof openBook>[1]['tables'];
  readonly appIn?: AppIn;
}
/** How the judgement of a book's bookings is run when their reads are not bounded (bin/guard/guard.ts). */
export type Judging = Parameters<typeof openBook>[1]['judging'];

/** The own schema's tables under other names (--table-names): entries, categories, paymentMethods. */
export type TableNames = Required<BookFile['tables']>;

/** How `book`'s app is set to `name` where it is written: `--app mmex`, `BOOKING_SEARCH_APP=mmex` or `app = mmex`. */
export function appSetting(book: Pick<BookFile, 'appIn'>, name: string): string {
  if (book.appIn === 'file') return `app = ${name}`;
  return book.appIn === 'environment' ? `BOOKING_SEARCH_APP=${name}` : `--app ${name}`;
}

/**
 * The book in the file open on `db` (lib/book.ts), as the command opens it everywhere: what
 * the library advises for a file of another application names the app as `book`'s is written.
 * `judging`: how the judgement of its bookings is run when their reads are not bounded.
 * Its type, the library's Book, is inferred: bin/ derives few types of lib/ (test/unit/door.test.ts).
 */
export function openBookFile(db: Database.Database, book: BookFile, judging?: Judging) {
  const { app, tables } = book;
  return openBook(db, { app, tables, appSetting: (name) => appSetting(book, name), judging });
}

/**
 * A request of no search: it takes a search's own way through the file (its read transaction,
 * the check of the schema and the settings first in it, its wait for a lock) and looks up no
 * booking (bin/books/database.ts reads a served file with it). `waited` hears it as it hears
 * a search; the metrics leave it out (bin/serve/handlers.ts).
 */
export const NO_SEARCH: Parameters<SearchTurns['answer']>[0] = Object.freeze([]);

/**
 * The search over `db` for `book`, validated (a CliError-worthy Error when the file does not
 * fit), with the app served. `changed` is called, and the search refuses its read
 * transaction (SchemaChanged), when the file's schema is no longer the one validated here:
 * the connection must then be opened and checked again. `judgedAt`: the schema cookie at
 * which a guard process judged this very file's bookings a moment ago (bin/guard/guard.ts): a
 * file whose cookie is another throws SchemaChanged, one whose cookie is that is not sampled again.
 * `everyBooking`: how many bookings the typical search reads when it reads them all, `harms`:
 * how serving the file can harm its application, `notes`: what it holds that is not served (lib/book.ts).
 */
export function searchOverFile(
  db: Database.Database,
  book: BookFile,
  changed: () => void = () => {},
  waited?: (seconds: number, request: unknown) => void,
  judgedAt?: number,
): {
  search: SearchTurns;
  app: string;
  everyBooking: () => number | undefined;
  harms: (book: string) => string[];
  notes: () => string[];
} {
  const opened = openBookFile(db, book).serve(judgedAt);
  const { app, everyBooking, harms, notes } = opened;
  return { search: opened.search({ changed, waited }), app, everyBooking, harms, notes };
}
