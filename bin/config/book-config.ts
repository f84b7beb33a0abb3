// A book as the configuration names it (docs/operations.md, Many books), the users it names,
// and what a reload changes between two configurations, book by book, with the line that says it.

import type { Credentials } from '../../lib/internal.js';
import type { AppIn, TableNames } from '../files/index.js';

/** One book as configured: a `[book NAME]` section, or the single book of `--db`. */
export interface BookConfig {
  /** Its name in /status, the realm of its challenge and the logs; unique in a service. */
  readonly name: string;
  /** The database file; `undefined` for the in-memory demo. */
  readonly db: string | undefined;
  /** Where `db` was written, `FILE:LINE` (and `: book NAME` in a section), to place a problem of the file; `undefined`: a flag. */
  readonly dbOrigin?: string | undefined;
  /** `own` or an application (lib/apps/); `undefined`: recognised by the file's tables. */
  readonly app: string | undefined;
  /**
   * Where the admin writes its app (or would): a flag, its variable, or a line of the
   * configuration file (a `[book NAME]` section's, or the service part's for --db's book);
   * `undefined`: a flag. What a line says of the app is worded so (bin/files, appSetting).
   */
  readonly appIn?: AppIn;
  /** With the own schema: the tables' names, where they differ from the defaults. */
  readonly tables: Partial<TableNames>;
  /** The path before /api/v1, without a trailing slash; unique in a service. */
  readonly basePath: string;
  /** The users of the credentials who may read it; `undefined`: every user. */
  readonly users: readonly string[] | undefined;
  /**
   * Whether the lines of its file's states begin `book NAME: ` (as /ready and the state metric
   * name it): a `[book NAME]` section's; --db's only when its name was given (--name).
   */
  readonly named?: boolean;
}

/**
 * A problem of `book`'s file placed where its `db` was written, if in a configuration file
 * (`office.conf:12: book weber: …`); the app it advises is already named as it is written
 * there (bin/files, openBookFile).
 */
export function inTermsOfBook(book: BookConfig, message: string): string {
  return book.dbOrigin === undefined ? message : `${book.dbOrigin}: ${message}`;
}

/** What a reload changes: books by name, before and after. */
export interface BooksChange {
  /** New names. */
  readonly added: readonly BookConfig[];
  /** Names no longer configured. */
  readonly removed: readonly BookConfig[];
  /** The same name with another file, mapping or base path: served anew. */
  readonly replaced: ReadonlyArray<{ before: BookConfig; after: BookConfig }>;
  /** The same name, file, mapping and base path, other users: the same handler takes them. */
  readonly newUsers: ReadonlyArray<{ before: BookConfig; after: BookConfig }>;
  /** Unchanged: their connections, searches, throttle counts and memory stay as they are. */
  readonly kept: readonly BookConfig[];
}

/** How `after` differs from `before`, book by book (a book is its name). */
export function diffBooks(before: readonly BookConfig[], after: readonly BookConfig[]): BooksChange {
  const old = new Map(before.map((book) => [book.name, book]));
  const names = new Set(after.map((book) => book.name));
  const change = {
    added: [] as BookConfig[],
    removed: before.filter((book) => !names.has(book.name)),
    replaced: [] as Array<{ before: BookConfig; after: BookConfig }>,
    newUsers: [] as Array<{ before: BookConfig; after: BookConfig }>,
    kept: [] as BookConfig[],
  };
  for (const book of after) {
    const was = old.get(book.name);
    if (was === undefined) change.added.push(book);
    else if (!sameServing(was, book)) change.replaced.push({ before: was, after: book });
    else if (!sameUsers(was.users, book.users)) change.newUsers.push({ before: was, after: book });
    else change.kept.push(book);
  }
  return change;
}

/** What a reload changed, for its line in the log: `3 books: added neu; removed schmidt`. */
export function describeChange(change: BooksChange, renewed: readonly string[], count: number): string {
  const said = (label: string, names: readonly string[]): string[] =>
    names.length === 0 ? [] : [`${label} ${names.join(', ')}`];
  const changes = [
    ...said('added', names(change.added)),
    ...said('removed', names(change.removed)),
    ...said('served anew', names(change.replaced.map(({ after }) => after))),
    ...said('users or secrets changed for', renewed),
  ];
  const books = `${count} book${count === 1 ? '' : 's'}`;
  return changes.length === 0 ? `${books}, nothing changed` : `${books}: ${changes.join('; ')}`;
}

function names(books: readonly BookConfig[]): string[] {
  return books.map((book) => book.name);
}

/** The users of `credentials` that `book` names (all of them without `users`). */
export function usersOf(book: BookConfig, credentials: readonly Credentials[]): Credentials[] {
  return credentials.filter((user) => book.users === undefined || book.users.includes(user.username.normalize('NFC')));
}

/** The users some book names: one of none gets a wrong password's 401 on every path, not a 404 that says it is right. */
export const usersOfAny = (books: readonly BookConfig[], credentials: readonly Credentials[]): Credentials[] =>
  credentials.filter((user) => books.some((book) => usersOf(book, [user]).length > 0));

/** Whether two lists hold the same users with the same secrets, in the same order. */
export function sameCredentials(a: readonly Credentials[], b: readonly Credentials[]): boolean {
  return (
    a.length === b.length &&
    a.every(({ username, password, passwordHash }, i) => {
      const other = b[i];
      return username === other?.username && password === other.password && passwordHash === other.passwordHash;
    })
  );
}

/** Whether a book's users are the same list (their order does not matter). */
export function sameUsers(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const set = new Set(a);
  return a.length === b.length && b.every((user) => set.has(user));
}

function sameServing(a: BookConfig, b: BookConfig): boolean {
  return (
    a.db === b.db &&
    a.app === b.app &&
    a.basePath === b.basePath &&
    JSON.stringify(sortedEntries(a.tables)) === JSON.stringify(sortedEntries(b.tables))
  );
}

function sortedEntries(tables: Partial<TableNames>): Array<[string, string | undefined]> {
  return Object.entries(tables).sort(([x], [y]) => x.localeCompare(y));
}
