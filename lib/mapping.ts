// How the service reads the bookings of one kind of file: the project's own schema (under
// names the admin may choose), or one real application's own tables. docs/applications.md
// says, per application, what is served and what is left out.
//
// A mapping never creates or requires an object (table, view, index) in the application's
// file: its SQL lives here, in the service, and reads the application's tables as they are.
// Each application is one file under lib/apps/, registered in lib/apps/index.ts.

import type { Database } from 'better-sqlite3';

/** The names of the project's own three tables (or views) in a file. */
export interface TableNames {
  entries: string;
  categories: string;
  paymentMethods: string;
}

export const DEFAULT_TABLE_NAMES: TableNames = {
  entries: 'entries',
  categories: 'categories',
  paymentMethods: 'payment_methods',
};

/** The project's own schema (docs/applications.md, The own schema), searched by the tuned planner of lib/search/sql.ts. */
export interface OwnSchemaMapping {
  kind: 'own';
  name: 'own';
  title: string;
  tables: TableNames;
}

/**
 * A real application's tables, read through one SELECT that the search wraps.
 *
 * `bookings` yields these columns, one row per booking the application would show as a
 * cash booking: `id` (a whole number, unique, stable), `date` ('YYYY-MM-DD' text),
 * `amount_cents` (whole cents, expenses POSITIVE as in docs/API.md), `amount_held` (the
 * amount as the application holds it, a fraction's text (lib/apps/fraction.ts), or NULL: what
 * the refusal of a booking whose `amount_cents` is no whole number shows), `subject` (text),
 * `category` and `payment_method` (names, or NULL); with `orderDate`, also `order_date`. It must restrict itself to the window
 * `:from`..`:to` (both included), given in the application's own date form by `window()`,
 * on a column the application has an index on, so that a search reads one window of the
 * file and never all of it. It may also use `:low`/`:high` (the amount_cents bounds).
 * Write bound parameters as `+:from` (lib/search/sql.ts says why: no re-preparation when the
 * file holds sqlite_stat4), and fix the join order with CROSS JOIN where a join could
 * tempt the planner away from the window's index.
 */
export interface ApplicationMapping {
  kind: 'application';
  /** What `--app` and `options.app` take, e.g. `"actual"`. */
  name: string;
  /** The application's name in messages, e.g. `"Actual"`. */
  title: string;
  /** Tables and the columns of them that `bookings` reads: what must be there, and how `check` recognises the file. */
  requires: Readonly<Record<string, readonly string[]>>;
  bookings: string;
  /**
   * `bookings` without the window: every booking, also one whose stored date no window
   * admits (NULL, or text that is no date), so that the sample judged at every start and by
   * `check` (lib/meaning.ts) sees it and refuses the file rather than leave it out unsaid.
   */
  allBookings: string;
  /** The window `von`..`bis` ('YYYY-MM-DD', both included) in the form the application stores dates in. */
  window(von: string, bis: string): { from: string | number; to: string | number };
  /**
   * `true` when the window admits exactly the rows whose `date` lies in `von`..`bis` (a
   * stored value that converts to no date at all is answered 500 by the row guard anyway):
   * the search then does not compare the converted dates again, which saves converting
   * every row of a long window. Default: they are compared again.
   */
  exactWindow?: boolean;
  /**
   * `true` when `bookings` yields one more column, `order_date`: the application's own
   * date column, the one its index reads the window by, where it sorts exactly as `date`
   * does (a day is one value; no time of day). The page is then ordered by it, so SQLite
   * takes the newest bookings from the index in order and converts only the page's rows,
   * instead of converting and sorting every booking of the window. Default: ordered by `date`.
   */
  orderDate?: boolean;
  /**
   * For `check`'s verdict on the typical search: the index that reads only the window, as
   * EXPLAIN QUERY PLAN names it, and, where the application itself has none, the statement
   * an admin may run to add one (docs/applications.md says what it costs the
   * application). Without it `check` judges the plan by its SCAN lines.
   */
  windowIndex?: { name: string; create?: string };
  /**
   * For `check`: a SELECT of sentences (one text column, zero or more rows) about what the
   * file holds that the mapping leaves out without the admin expecting it, e.g. accounts
   * the application keeps where they are not served. Printed as notes; they do not make
   * the file unfit.
   */
  notes?: string;
  /**
   * A SELECT of sentences (one text column, zero or more rows) about how serving the file
   * can harm the application, e.g. its saves failing while a search reads; `:book` is the
   * file as a shell word where the caller knows it, else NULL. `check` prints them as
   * warnings, the service logs them as it opens the file; they do not make it unfit.
   */
  harms?: string;
  /**
   * A SELECT of sentences (one text column, zero or more rows) about what the file holds
   * that the mapping cannot serve exactly, e.g. a budget kept in another currency. Any row
   * and the file is not served: `check` refuses it and `createHandler` throws, both with
   * these sentences (lib/meaning.ts); read again once the file changed while served (the
   * application's setting changed), they end its searches until they hold no more.
   */
  refusals?: string;
  /**
   * SQL functions its statements call, by name, registered on a connection before one is
   * prepared (useMapping): what SQLite cannot compute alike everywhere, such as a time's
   * local day (lib/apps/local-time.ts).
   */
  functions?: Readonly<Record<string, (...args: never[]) => unknown>>;
}

export type Mapping = OwnSchemaMapping | ApplicationMapping;

const registered = new WeakMap<Database, Set<string>>();

/** Registers `mapping`'s SQL functions on `db` once; call it before preparing its statements. */
export function useMapping(db: Database, mapping: Mapping): void {
  if (mapping.kind !== 'application' || mapping.functions === undefined) return;
  let names = registered.get(db);
  if (names === undefined) {
    names = new Set();
    registered.set(db, names);
  }
  for (const [name, fn] of Object.entries(mapping.functions)) {
    if (names.has(name)) continue;
    db.function(name, { deterministic: true }, fn as (...args: unknown[]) => unknown);
    names.add(name);
  }
}

/** The own schema under the given names (missing names: the defaults). */
export function ownSchema(names: Partial<TableNames> = {}): OwnSchemaMapping {
  return { kind: 'own', name: 'own', title: 'the own schema', tables: { ...DEFAULT_TABLE_NAMES, ...names } };
}

// A table name as the admin gives it: an SQL identifier, optionally after a schema name
// (`main.kasse`). Anything else would have to be quoted, and is refused rather than guessed.
export const TABLE_NAME = /^(?:[A-Za-z_][A-Za-z0-9_]{0,63}\.)?[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** `name` as SQL: each part double-quoted, so that a name that is a keyword still works. */
export function quoteName(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/**
 * The schema and table parts of a name (`main.kasse` → main, kasse), for the pragma
 * functions; without a schema, `null`: SQLite then looks in every schema, TEMP first, as it
 * does when a statement names the table.
 */
export function splitName(name: string): { schema: string | null; table: string } {
  const dot = name.indexOf('.');
  return dot === -1 ? { schema: null, table: name } : { schema: name.slice(0, dot), table: name.slice(dot + 1) };
}

/** The tables and columns a mapping reads. */
export function requiredTables(mapping: Mapping): Record<string, readonly string[]> {
  if (mapping.kind === 'application') return { ...mapping.requires };
  const { entries, categories, paymentMethods } = mapping.tables;
  return {
    [entries]: ['id', 'date', 'amount_cents', 'subject', 'category_id', 'payment_method_id'],
    [categories]: ['id', 'name'],
    [paymentMethods]: ['id', 'name'],
  };
}
