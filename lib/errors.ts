// Small facts about thrown values, shared by the library and the CLI, and the one way the
// library refuses a misused argument.

/** The `code` of a Node or SQLite error (`'ENOENT'`, `'SQLITE_BUSY'`), or `undefined`. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

// SQLite's answer while another connection holds a lock that keeps readers out (BUSY,
// LOCKED): it passes by itself once that connection's write ends.
const LOCK = /^SQLITE_(?:BUSY|LOCKED)(?:_|$)/;
// SQLite's other answers for a file that cannot be read *now* but will be once its owner acts:
// a hot journal only a writer may roll back (READONLY_ROLLBACK), a
// write-ahead log to recover (READONLY_RECOVERY), a -wal/-shm that only a writer can create
// or initialise (READONLY_DIRECTORY, READONLY_CANTINIT, READONLY_CANTLOCK); and a schema
// that changed under the search (SCHEMA: the command checks the file again first).
const NOT_READABLE_NOW = /^SQLITE_READONLY_(?:ROLLBACK|RECOVERY|DIRECTORY|CANTINIT|CANTLOCK)$|^SQLITE_SCHEMA$/;

/** Whether `error` is another connection's lock, which passes by itself in moments. */
export function isLock(error: unknown): boolean {
  return LOCK.test(errorCode(error) ?? '');
}

/**
 * The code of a file its application's setting refuses (a mapping's `refusals`: GnuCash
 * holding a rollback-journal book open, an Actual budget in USD): it is served again once the
 * application acts, so a search's 500 has Retry-After, as for a lock.
 */
export const REFUSED_BY_SETTING = 'BOOKING_SEARCH_APP_SETTING';

/** The code of a search on a connection its owner closed (the embedder's next handler has a new one). */
export const DATABASE_CLOSED = 'BOOKING_SEARCH_DATABASE_CLOSED';

/** Whether `error` says the database cannot be read now, so that a later try may succeed. */
export function isNotReadableNow(error: unknown): boolean {
  return isLock(error) || NOT_READABLE_NOW.test(errorCode(error) ?? '');
}

/**
 * Whether a search that failed with `error` may succeed when tried again (its 500 has
 * Retry-After): the database cannot be read now, its application's setting refuses it, or
 * its owner closed the connection for a new handler's; each passes once someone acts.
 */
export function passesLater(error: unknown): boolean {
  const code = errorCode(error);
  return isNotReadableNow(error) || code === REFUSED_BY_SETTING || code === DATABASE_CLOSED;
}

/** Throws a TypeError with `message` unless `condition` holds: a misused argument, named. */
export function ensure(condition: unknown, message: string): asserts condition {
  if (!condition) throw new TypeError(message);
}
