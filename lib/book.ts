// A book's file once open, as the command serves it (in its serving process and in a guard
// process) and as `check` examines it: whose tables it holds (given, or recognised from
// them), the file validated against them, whether its searches can be bounded in time, and
// the search over it, which notices through the schema cookie a file that changed under its
// connection. What `check` says of it is lib/book-report.ts.

import type { Database } from 'better-sqlite3';
import { type BookExamination, bookingsScanned, examineBook, harmsOf, notesOf } from './book-report.js';
import { type AppSetting, type Judging, notServedExactly, refusedFirst, validateDatabase } from './database-handle.js';
import { isNotReadableNow } from './errors.js';
import { type Mapping, ownSchema, type TableNames } from './mapping.js';
import { resolveOptions } from './options.js';
import { detectApplication, findSchemaProblems, findUnboundedObject } from './schema.js';
import { type BookingSearch, createBookingSearch, refusalsOf, type SearchRequest } from './search/index.js';

/**
 * Schema objects (tables, views, indexes, triggers) beyond which the searches of a file are
 * not bounded in time, whatever its tables: every statement there first loads the whole
 * schema, which takes 0.5 s for 20,000 views and 99 s for 200,000 on the benchmark machine.
 * Application files hold a few dozen.
 */
const MAX_BOUNDED_SCHEMA_OBJECTS = 10_000;

/**
 * Whose tables a book's file holds: `app` as --app gives it (`undefined`: recognised from the
 * file), `tables` as --table-names; `appSetting`: how the one who opens it sets its app, which
 * the advice for a file of another application names (createHandler's option by default);
 * `judging`: how the judgement of its bookings is run when their reads are not bounded in
 * time (lib/database-handle.ts), by serve and examine alike.
 */
export interface BookTables {
  app: string | undefined;
  tables: Partial<TableNames>;
  appSetting?: AppSetting | undefined;
  judging?: Judging | undefined;
}

/** What the search over an opened book hears. */
export interface SearchHooks {
  /**
   * The file's schema is no longer the one validated, or a refusal of its mapping holds now:
   * called, and the search refuses its read transaction with SchemaChanged. Without it
   * neither is read.
   */
  changed?: (() => void) | undefined;
  /** How long each search waited for its turn, in seconds, as it starts. */
  waited?: ((seconds: number, request: SearchRequest) => void) | undefined;
}

export interface ServedBook {
  /** Whose tables are served: `own` or an application's name (lib/apps/). */
  readonly app: string;
  /** The schema cookie (`PRAGMA schema_version`) as the file was validated. */
  readonly schemaVersion: number;
  /**
   * Why a search over the file could run without bound in this thread (a view, a virtual
   * table, generated columns, a schema too large), said as a phrase; `undefined` when the
   * mapping reads only tables of the file.
   */
  unbounded(): string | undefined;
  /**
   * How many bookings the typical search reads when it reads every one of them, as `check`
   * judges its plan (lib/book-report.ts); `undefined` when an index reads only its month.
   */
  everyBooking(): number | undefined;
  /**
   * How serving the file can harm its application, as `check` warns of it
   * (lib/book-report.ts); `book`: the file as a shell word, named in the commands they give.
   */
  harms(book?: string): string[];
  /** What the file holds that is not served, as `check` notes it (lib/book-report.ts). */
  notes(): string[];
  /** The search over the file. */
  search(hooks?: SearchHooks): BookingSearch;
}

/** A book's file open on `db`, whose tables `book` names. */
export interface Book {
  /** What `check` says of it (lib/book-report.ts); throws for an unknown application. */
  examine(): BookExamination;
  /**
   * The book served: throws an Error naming what does not fit (the tables, or the bookings
   * as lib/meaning.ts judges a sample of them). `judgedAt`: the schema cookie at which
   * another process judged the bookings of this very file (its identity) a moment ago: a
   * file whose cookie is another throws SchemaChanged; one whose cookie is that has its
   * tables checked again, not its sample.
   */
  serve(judgedAt?: number): ServedBook;
}

/** The book whose tables `book` names in the file open on `db`. */
export function openBook(db: Database, book: BookTables): Book {
  return {
    examine: () => examineBook(db, book.app, book.tables, book.appSetting, book.judging),
    serve: (judgedAt) => serveBook(db, book, judgedAt),
  };
}

function serveBook(db: Database, book: BookTables, judgedAt: number | undefined): ServedBook {
  // Refused by a setting (GnuCash holding a rollback-journal book), nothing else is read.
  const refused = refusedFirst(db, book.app, book.tables);
  if (refused !== undefined) throw notServedExactly(refused.refusals, true);
  const app = book.app ?? recogniseApplication(db, book.tables);
  const { mapping } = resolveOptions({ app, tables: book.tables });
  const cookie = db.prepare<[], number>('PRAGMA schema_version').pluck();
  const schemaVersion = cookie.get() ?? 0;
  if (judgedAt !== undefined && schemaVersion !== judgedAt) throw new SchemaChanged();
  const { appSetting, judging } = book;
  validateDatabase(db, mapping, { meaningJudged: judgedAt !== undefined, appSetting, judging });
  return {
    app,
    schemaVersion,
    unbounded: () => unboundedObject(db, mapping),
    everyBooking: () => bookingsScanned(db, mapping),
    harms: (file) => harmsOf(db, mapping, file),
    notes: () => notesOf(db, mapping),
    search: ({ changed, waited } = {}) =>
      createBookingSearch(
        db,
        mapping,
        waited,
        changed === undefined ? undefined : schemaCheck(cookie, schemaVersion, changed, refusalsOf(db, mapping)),
      ),
  };
}

/**
 * Whose tables `db` holds when no app was given, as `check` recognises them: `own` when the
 * own schema (under `tables`) fits, else the first application whose tables fit, else `own`,
 * whose missing tables validation then names.
 */
function recogniseApplication(db: Database, tables: Partial<TableNames>): string {
  if (findSchemaProblems(db, ownSchema(tables)).length === 0) return 'own';
  return detectApplication(db)?.name ?? 'own';
}

function unboundedObject(db: Database, mapping: Mapping): string | undefined {
  const objects = db.prepare<[], number>('SELECT count(*) FROM sqlite_schema').pluck().get() ?? 0;
  return (
    findUnboundedObject(db, mapping) ??
    (objects > MAX_BOUNDED_SCHEMA_OBJECTS ? `its schema holds ${objects} objects` : undefined)
  );
}

/**
 * The check run first in every read transaction: reading the schema cookie loads nothing and
 * prepares nothing, where every other statement would first load a new schema and prepare
 * itself again over it (a table swapped for a view would run the view's SQL). Then the
 * mapping's `refused`, read again once the file changed: a setting the application changed
 * while served (a budget's currency) makes it a file that does not fit, checked again as a
 * new schema is, and refused until the setting is back.
 */
function schemaCheck(
  cookie: { get(): number | undefined },
  checked: number,
  changed: () => void,
  refused: (() => readonly string[]) | undefined,
): () => void {
  return () => {
    let now: unknown;
    try {
      now = cookie.get();
    } catch (error: unknown) {
      // A lock or a state that passes (a hot journal) is answered as such; a header that
      // is no longer a database's (a file truncated or written over) means a new file.
      if (isNotReadableNow(error)) throw error;
      now = error;
    }
    if (now === checked && (refused === undefined || refused().length === 0)) return;
    changed();
    throw new SchemaChanged();
  };
}

/**
 * The file's schema is not the one the search was built for: answered as the 500 with
 * Retry-After (lib/errors.ts, SQLITE_SCHEMA), while the command opens and checks the file again.
 */
export class SchemaChanged extends Error {
  readonly code = 'SQLITE_SCHEMA';

  constructor() {
    super(
      'the schema of the file, or a setting it is served by, changed since it was checked; it is opened and checked again',
    );
  }
}
