// The `db` argument of createHandler, checked once, at creation: a handle that behaves like
// better-sqlite3 in every way the search relies on (lib/search/, lib/search-endpoint.ts), holding the
// tables the mapping reads, with bookings that mean what the search needs (as `check`
// judges them).
//
// A look-alike handle that differs there would not fail loudly on a request: the search
// would write whatever it got into the JSON text. libsql's `Database` (advertised as
// better-sqlite3 compatible) returns an object from a plucked count, and the answer was
// `{"anzahl":[object Object],…}` with status 200. Checking here keeps every request as
// fast as before: a handle that passes behaves so for every statement it prepares.

import type { Database } from 'better-sqlite3';
import { APPLICATIONS } from './apps/index.js';
import { ensure, errorCode, isNotReadableNow, REFUSED_BY_SETTING } from './errors.js';
import {
  type ApplicationMapping,
  type Mapping,
  ownSchema,
  requiredTables,
  splitName,
  type TableNames,
} from './mapping.js';
import { checkMeaning, type MeaningReport } from './meaning.js';
import { findSchemaProblems, findUnboundedObject, recogniseOlder, recogniseOther } from './schema.js';
import { refusalsOf } from './search/index.js';

/** What createHandler says to a `node:sqlite` `DatabaseSync`. */
export const NODE_SQLITE_REFUSED =
  "db is node:sqlite's DatabaseSync, which createHandler does not take: open the file with better-sqlite3 instead (new Database(file, { readonly: true }))";

// Uses no table: the handle's behaviour is checked before (and apart from) the schema.
const PROBE_COUNT = 'SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2) WHERE :bound = :bound';
const PROBE_ROW = "SELECT 7, :text, NULL, 'x' WHERE :bound = :bound";
const PROBE_BINDINGS = { bound: 1, text: 'Bürobedarf', unused: 0 };

/**
 * How whoever opens a book sets its app to `app`, for the advice of a file that has another
 * application's tables: an embedder by createHandler's option (appOption); the command by
 * its flag, variable or configuration file, as the admin wrote the book.
 */
export type AppSetting = (app: string) => string;

/** The app as createHandler's option sets it: `app: "mmex"`. */
export const appOption: AppSetting = (app) => `app: "${app}"`;

/**
 * How whoever opens a book runs the judgement of its bookings (`judge`) when reading them is
 * not bounded in time, `why` saying so ("'kasse' is a view"): the command's guard process
 * says it to the serving process, which ends it past --search-timeout.
 */
export type Judging = <T>(why: string, judge: () => T) => T;

/** The judgement of `mapping`'s bookings (lib/meaning.ts), run through `judging` when their reads are not bounded. */
export function judgeMeaning(db: Database, mapping: Mapping, judging: Judging | undefined): MeaningReport {
  const why = judging === undefined ? undefined : findUnboundedObject(db, mapping);
  if (judging === undefined || why === undefined) return checkMeaning(db, mapping);
  return judging(why, () => checkMeaning(db, mapping));
}

/**
 * Throws unless `db` is an open better-sqlite3 database (or behaves like one) holding the
 * tables `mapping` reads (docs/API.md's schema by default), whose bookings the search can
 * answer exactly as `check` judges them (lib/meaning.ts). `meaningJudged`: the command's
 * serving process, over a file its guard process has just judged whole (bin/guard/guard.ts) and
 * that is still that file with that schema: the bookings are not read a second time.
 * `appSetting`: how the advice names the app a file of another application is served as;
 * `judging`: how the bookings are judged when their reads are not bounded (judgeMeaning).
 */
export function validateDatabase(
  db: unknown,
  mapping: Mapping = ownSchema(),
  {
    meaningJudged = false,
    appSetting = appOption,
    judging,
  }: { meaningJudged?: boolean; appSetting?: AppSetting | undefined; judging?: Judging | undefined } = {},
): asserts db is Database {
  checkDatabaseHandle(db);
  const problems = findSchemaProblems(db, mapping);
  if (problems.length > 0) {
    const detected = recogniseOther(db, mapping);
    const older = detected === undefined && mapping.kind === 'own' ? recogniseOlder(db) : undefined;
    const hint =
      detected !== undefined
        ? ` (the file has the tables of ${detected.title}: serve it with ${appSetting(detected.name)})`
        : older !== undefined
          ? ` (the file has the tables of ${older.title}, but not every column the service reads, as a file of an older version may: check --app ${older.name} names them)`
          : '';
    const what = mapping.kind === 'own' ? 'the schema' : `the tables of ${mapping.title}`;
    throw new Error(`db does not fit ${what}: ${problems.join('; ')}${hint}`);
  }
  if (meaningJudged) return;
  // check's own judgement: the service starts on exactly the files check passes. Said with
  // no booking's value: this message is the log line and /ready's reason.
  const { withoutValues: wrong } = judgeMeaning(db, mapping, judging);
  if (wrong.length > 0) throw notServedExactly(wrong, (refusalsOf(db, mapping)?.() ?? []).length > 0);
}

/**
 * What an application's setting refuses of the file, asked before anything else is read of
 * it: a GnuCash book in rollback-journal mode that GnuCash holds open fails a save that meets
 * any read, so the statements that find its lock row come before the twenty that recognise
 * the tables, all in one read transaction (one shared lock). `app`: the one given, else each
 * application whose tables the catalog names (none where the own schema's are there). The
 * refusal that holds of a file whose tables fit its application, and that application;
 * `undefined` when none does or none can be asked: the usual checks then say what they find.
 */
export function refusedFirst(
  db: Database,
  app: string | undefined,
  tables: Partial<TableNames> = {},
): { refusals: readonly string[]; mapping: ApplicationMapping } | undefined {
  return db.transaction(() => {
    for (const mapping of refusingCandidates(db, app, tables)) {
      let refusals: readonly string[] = [];
      try {
        refusals = refusalsOf(db, mapping)?.() ?? [];
      } catch (error: unknown) {
        // A lock or a state that passes is the open's to say; a file without the columns asked is not this application's.
        if (isNotReadableNow(error)) throw error;
      }
      // Refused, but not the application's tables (an older version's): the misfit is what it is told, not the setting.
      if (refusals.length > 0) return findSchemaProblems(db, mapping).length === 0 ? { refusals, mapping } : undefined;
    }
    return undefined;
  })();
}

function refusingCandidates(db: Database, app: string | undefined, tables: Partial<TableNames>): ApplicationMapping[] {
  const refusing = APPLICATIONS.filter((mapping) => mapping.refusals !== undefined);
  if (app !== undefined) return refusing.filter((mapping) => mapping.name === app);
  const names = new Set(
    db.prepare<[], string>("SELECT lower(name) FROM sqlite_schema WHERE type IN ('table', 'view')").pluck().all(),
  );
  // A name in another schema than main cannot be seen here: taken as there.
  const named = (mapping: Mapping): boolean =>
    Object.keys(requiredTables(mapping)).every((name) => {
      const { schema, table } = splitName(name);
      return (schema !== null && schema.toLowerCase() !== 'main') || names.has(table.toLowerCase());
    });
  return named(ownSchema(tables)) ? [] : refusing.filter(named);
}

/** validateDatabase's error for a file its application's setting refuses (`bySetting`), or one whose data does not fit. */
export function notServedExactly(sentences: readonly string[], bySetting: boolean): Error {
  const error = new Error(`db cannot be served exactly: ${sentences.join(' ')}`);
  return bySetting ? Object.assign(error, { code: REFUSED_BY_SETTING }) : error;
}

/**
 * For each read transaction of the search over `db` (createBookingSearch's `snapshot`):
 * throws what validateDatabase would once `mapping`'s refusals hold, a setting the
 * application changed after the handler was created; `undefined` for a mapping without them.
 */
export function refusalCheck(db: Database, mapping: Mapping): (() => void) | undefined {
  const refused = refusalsOf(db, mapping);
  return (
    refused &&
    (() => {
      const sentences = refused();
      if (sentences.length > 0) throw notServedExactly(sentences, true);
    })
  );
}

/**
 * Throws a TypeError naming what is wrong unless `db` is an open handle that behaves like a
 * better-sqlite3 `Database` where the search relies on it: statements prepare with named
 * parameters and run, `pluck()` gives a count as a number, `raw()` gives rows as arrays, and
 * `inTransaction` tells whether a prepared `BEGIN` has opened a transaction (the search's
 * read transaction is a prepared BEGIN and COMMIT, lib/search/booking-search.ts).
 */
export function checkDatabaseHandle(db: unknown): asserts db is Database {
  ensure(typeof db === 'object' && db !== null, 'db must be a better-sqlite3 Database');
  // Node's built-in driver is refused by name rather than by its first missing method:
  // docs/design/README.md, "Other SQLite drivers", says why (experimental on Node 22, no array rows on 22.14,
  // other error codes), and what to pass instead.
  ensure(db.constructor?.name !== 'DatabaseSync', NODE_SQLITE_REFUSED);
  const handle = db as Partial<Record<keyof Database, unknown>>;
  ensure(typeof handle.prepare === 'function', 'db must be a better-sqlite3 Database (it has no prepare())');
  ensure(
    typeof handle.inTransaction === 'boolean',
    'db must be a better-sqlite3 Database (it has no inTransaction property)',
  );
  ensure(typeof handle.open === 'boolean', 'db must be a better-sqlite3 Database (it has no open property)');
  ensure(handle.open, 'db must be open');

  let outcome: { count: unknown; row: unknown; rows: unknown; began: unknown };
  try {
    const database = db as Database;
    const count = database.prepare(PROBE_COUNT).pluck();
    const row = database.prepare(PROBE_ROW).raw();
    const begin = database.prepare('BEGIN');
    const commit = database.prepare('COMMIT');
    begin.run();
    try {
      outcome = {
        began: database.inTransaction,
        count: count.get(PROBE_BINDINGS),
        row: row.get(PROBE_BINDINGS),
        rows: row.all(PROBE_BINDINGS),
      };
    } finally {
      if (database.inTransaction) commit.run();
    }
  } catch (error: unknown) {
    // SQLite's own errors (not a database, locked, …) are the file's, not the handle's:
    // they go on unchanged, for the caller to tell the user what the file lacks.
    if (errorCode(error)?.startsWith('SQLITE_')) throw error;
    throw new TypeError(`db must be a better-sqlite3 Database (a test query failed: ${describe(error)})`, {
      cause: error,
    });
  }

  const { count, row, rows, began } = outcome ?? {};
  ensure(began === true, 'db must behave like better-sqlite3: inTransaction must be true after BEGIN');
  ensure(
    typeof count !== 'bigint',
    'db must return numbers, not BigInts: turn safeIntegers off (db.defaultSafeIntegers(false))',
  );
  ensure(
    count === 2,
    `db must behave like better-sqlite3: a plucked count must be the number 2, not ${shown(count)} (see docs/embedding.md on other drivers)`,
  );
  ensure(
    isProbeRow(row),
    `db must behave like better-sqlite3: a raw row must be the array [7,"Bürobedarf",null,"x"], not ${shown(row)}`,
  );
  ensure(
    Array.isArray(rows) && rows.length === 1 && isProbeRow(rows[0]),
    `db must behave like better-sqlite3: raw rows must be arrays, not ${shown(rows)}`,
  );
}

function isProbeRow(row: unknown): boolean {
  return (
    Array.isArray(row) &&
    row.length === 4 &&
    row[0] === 7 &&
    row[1] === PROBE_BINDINGS.text &&
    row[2] === null &&
    row[3] === 'x'
  );
}

function shown(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return `an object with keys ${JSON.stringify(Object.keys(value))}`;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
