// The database file, as the CLI keeps it: opened read-only, checked, and watched, because
// it belongs to another program that may restore it from a backup (a rename), delete it,
// crash in the middle of a write, or not be running at all. A file that is a SQLite
// database but cannot be read *now* is waited for, not fatal (docs/API.md, The CLI), and
// nothing is ever created beside it.

import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import Database from 'better-sqlite3';
import { errorCode, isNotReadableNow } from '../lib/errors.js';
import { REQUIRED_COLUMNS } from '../lib/schema.js';
import type { BookingSearchHandler, Credentials, RequestHandler } from '../lib/types.js';
import { CliError, describeFsError } from './errors.js';

// A search waits this long for another program's write lock before it answers 500 with
// Retry-After; better-sqlite3's default of 5 s would block every other request meanwhile.
const BUSY_TIMEOUT_MS = 100;
// How often the file is looked at; a replacement, or the end of a wait, is noticed within this.
const WATCH_INTERVAL_MS = 1_000;
// sqlite.org/fileformat.html §1.3: the header starts with this string; byte 19, the read
// version, is 2 for a database in WAL mode, and SQLite then opens (or creates) FILE-wal and
// FILE-shm on the first read.
const SQLITE_MAGIC = 'SQLite format 3\0';
const READ_VERSION_OFFSET = 19;
const WAL_READ_VERSION = 2;

export type ErrorHook = (error: unknown, req: IncomingMessage) => void;
/** How the CLI turns an open database into its handler; `onError` hears the causes of 500s. */
export type BuildHandler = (db: Database.Database, onError: ErrorHook) => BookingSearchHandler;

/** A database that is a SQLite file but cannot be read now; it passes when its owner acts. */
export interface NotReadableNow {
  /** SQLite's result code for the state (what SQLite answered, or would answer). */
  code: string;
  /** The state, what SQLite needs and what the admin can do, as one sentence. */
  explanation: string;
}

export type Opened<T> =
  | { readable: true; db: Database.Database; value: T }
  | { readable: false; state: NotReadableNow };

/**
 * Opens `file` read-only and hands it to `use`, which reads from it. Returns the state when
 * the file cannot be read now; throws a CliError for what will not pass by itself (no file,
 * no permission, not a database, a schema that does not fit).
 *
 * A WAL database is only opened when its -wal and -shm are there: otherwise SQLite would
 * create them, owned by this service, in a directory it can write — and the application,
 * which must write them, could then fail.
 */
export function openDatabase<T>(file: string, use: (db: Database.Database) => T): Opened<T> {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
    if (isFile) accessSync(file, constants.R_OK);
  } catch (error: unknown) {
    throw new CliError(`cannot open database ${file}: ${describeFsError(error)}`);
  }
  if (!isFile) throw new CliError(`cannot open database ${file}: not a regular file`);
  // Between this look and SQLite's first read (which takes the shared lock that keeps a
  // closing application from deleting -wal/-shm) lies well under a millisecond; a directory
  // the service cannot write (docs/operations.md, Users and permissions) covers even that window.
  if (journalOf(file).wal) {
    const missing = walFilesNotReadable(file);
    if (missing !== undefined) return { readable: false, state: missing };
  }
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error: unknown) {
    throw new CliError(describeDatabaseError(file, error));
  }
  try {
    return { readable: true, db, value: use(db) };
  } catch (error: unknown) {
    db.close();
    const state = notReadableNow(file, error);
    if (state !== undefined) return { readable: false, state };
    throw new CliError(describeDatabaseError(file, error));
  }
}

/** The journal of `file` as its header and the files beside it tell, without SQLite. */
export function journalOf(file: string): { wal: boolean; description: string } {
  const name = basename(file);
  const header = readHeader(file);
  if (header.toString('latin1', 0, SQLITE_MAGIC.length) !== SQLITE_MAGIC) {
    return { wal: false, description: 'unknown (the file has no SQLite header)' };
  }
  if (header[READ_VERSION_OFFSET] === WAL_READ_VERSION) {
    const wal = sizeOf(`${file}-wal`);
    const shm = sizeOf(`${file}-shm`);
    const there = (suffix: string, size: number | undefined): string =>
      size === undefined ? `${name}${suffix} missing` : `${name}${suffix} ${size} bytes`;
    return { wal: true, description: `WAL (write-ahead log): ${there('-wal', wal)}, ${there('-shm', shm)}` };
  }
  const journal = sizeOf(`${file}-journal`);
  return {
    wal: false,
    description:
      journal === undefined
        ? 'rollback journal (WAL is off); no journal file'
        : `rollback journal (WAL is off); ${name}-journal ${journal} bytes (a write in progress, or one that was interrupted)`,
  };
}

/** The state behind a SQLite error that passes when the application acts, or `undefined`. */
export function notReadableNow(file: string, error: unknown): NotReadableNow | undefined {
  if (!isNotReadableNow(error)) return undefined;
  const code = errorCode(error) ?? 'SQLITE_BUSY';
  const name = basename(file);
  if (code === 'SQLITE_READONLY_ROLLBACK') {
    return {
      code,
      explanation: `${name}-journal is a hot journal, left by a write that was interrupted (the application crashed or was killed); only a connection that can write may roll it back, and SQLite lets no one read before (${code}): the application must open the file once to roll back the interrupted write (or, as its user: sqlite3 ${file} 'SELECT count(*) FROM sqlite_schema')`,
    };
  }
  if (code === 'SQLITE_READONLY_RECOVERY') {
    return {
      code,
      explanation: `the write-ahead log ${name}-wal must be recovered after the application stopped in the middle of a write, and only a connection that can write may do that (${code}): start the application, it recovers the log when it opens the file`,
    };
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') return walFilesMissing(file, code);
  if (code === 'SQLITE_READONLY_CANTINIT' || code === 'SQLITE_READONLY_CANTLOCK') {
    return {
      code,
      explanation: `${name}-shm can only be set up by a connection that can write it (${code}): start the application and keep it running until this service says it serves the file`,
    };
  }
  return {
    code,
    explanation: `another program holds a lock on the file (${code}); SQLite lets no one read while a write is being committed: this passes when the write ends (if it lasts, see which process holds the file: fuser -v ${file})`,
  };
}

/** One line for why `file` cannot be served. */
export function describeDatabaseError(file: string | undefined, error: unknown): string {
  if (error instanceof CliError) return error.message;
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB') return `${file} is not a SQLite database`;
  if (file !== undefined && code?.startsWith('SQLITE_CANTOPEN'))
    return `cannot open database ${file}: SQLite cannot open it or a file beside it (${code})`;
  return file === undefined ? message : `cannot serve ${file}: ${message}`;
}

/**
 * Opens `file` and builds its handler once, then closes it again: the primary of
 * --workers says what is wrong once, instead of every worker saying it. A file that cannot
 * be read now passes: each worker waits for it.
 */
export function preflightDatabaseFile(file: string, build: BuildHandler): void {
  const opened = openDatabase(file, (db) => build(db, () => {}));
  if (opened.readable) opened.db.close();
}

export interface ServedDatabase {
  /** Always the handler over the file as it is now. */
  handler: RequestHandler;
  /**
   * New credentials for every handler that answers now or may answer again: the file's and
   * the stand-in's that answers while the file cannot be served (SIGHUP). A handler built
   * later takes them from `build`.
   */
  updateCredentials(credentials: readonly Credentials[]): void;
  close(): void;
}

type Serving =
  | { serving: true; db: Database.Database; handler: BookingSearchHandler; inode: string | undefined }
  | { serving: false; cause: Unavailable };

/**
 * Serves `file` through `build` and follows it: when it is replaced (another inode at the
 * path) the new file is opened, checked and served; when it cannot be read now, it is
 * waited for; when it is deleted or replaced by one that cannot be served, the old
 * connection is closed. Until the file can be served again, `/status` keeps answering and
 * searches answer docs/API.md's 500 (with Retry-After while the file is only not readable
 * now). Each change of state is one line through `log`.
 */
export function watchDatabase(
  file: string,
  build: BuildHandler,
  log: (line: string) => void,
  logError: ErrorHook,
): ServedDatabase {
  let state: Serving;
  let lastLine = '';
  let noticed = false;
  // A state that lasts is said once, not at every look.
  const say = (line: string): void => {
    if (line !== lastLine) log(line);
    lastLine = line;
  };
  // Causes of 500s: a stand-in's are already said once; a state the file fell into while
  // served is said once by the next look at the file; anything else is the request's.
  const onError: ErrorHook = (error, req) => {
    if (error instanceof Unavailable) return;
    if (notReadableNow(file, error) !== undefined && !isLock(error)) {
      noticed = true;
      setImmediate(followFile);
      return;
    }
    logError(error, req);
  };
  const standInDb = unavailableDatabase(() => (state.serving ? undefined : state.cause));
  const standIn = build(standInDb, onError);

  const attempt = (): Serving => {
    const opened = openDatabase(file, (db) => build(db, onError));
    if (opened.readable) return { serving: true, db: opened.db, handler: opened.value, inode: inodeOf(file) };
    return { serving: false, cause: new Unavailable(opened.state.code, opened.state.explanation) };
  };

  try {
    state = attempt();
  } catch (error: unknown) {
    standInDb.close();
    throw error;
  }
  if (!state.serving) say(waitingLine(file, state.cause));

  const followFile = (): void => {
    if (state.serving) {
      if (!noticed && inodeOf(file) === state.inode) return;
      state.db.close();
    }
    const wasWaiting = !state.serving && state.cause.waits;
    noticed = false;
    try {
      state = attempt();
    } catch (error: unknown) {
      const gone = inodeOf(file) === undefined;
      const message = describeDatabaseError(file, error);
      state = { serving: false, cause: new Unavailable(gone ? 'ENOENT' : 'INVALID', message) };
      return say(
        gone
          ? `database ${file} is gone; searches answer 500 until it is back`
          : `${message}; searches answer 500 until a valid file is there`,
      );
    }
    if (!state.serving) return say(waitingLine(file, state.cause));
    // Each start of serving is said, even the same as the last one (two restores in a row).
    lastLine = '';
    log(
      wasWaiting
        ? `database ${file} can be read now; serving it`
        : `database ${file} was replaced; serving the new file`,
    );
  };
  const timer = setInterval(followFile, WATCH_INTERVAL_MS);
  timer.unref();

  return {
    handler: (req, res, next) => (state.serving ? state.handler : standIn)(req, res, next),
    updateCredentials: (credentials) => {
      standIn.updateCredentials(credentials);
      if (state.serving) state.handler.updateCredentials(credentials);
    },
    close: () => {
      clearInterval(timer);
      if (state.serving && state.db.open) state.db.close();
      standInDb.close();
    },
  };
}

/** A database that is not a file to follow (the in-memory demo). */
export function inMemoryDatabase(db: Database.Database, build: BuildHandler, logError: ErrorHook): ServedDatabase {
  let handler: BookingSearchHandler;
  try {
    handler = build(db, logError);
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeDatabaseError(undefined, error));
  }
  return {
    handler,
    updateCredentials: (credentials) => handler.updateCredentials(credentials),
    close: () => db.close(),
  };
}

/** Why searches cannot be answered now; its `code` decides whether they get Retry-After. */
class Unavailable extends Error {
  readonly code: string;
  /** A state that passes by itself (as opposed to a missing or invalid file). */
  readonly waits: boolean;

  constructor(code: string, explanation: string) {
    super(explanation);
    this.code = code;
    this.waits = isNotReadableNow(this);
  }
}

function waitingLine(file: string, cause: Unavailable): string {
  return `database ${file} cannot be read yet: ${cause.message}; searches answer 500 with Retry-After until it can`;
}

/**
 * An in-memory database with the schema, whose `entries` throws `cause()` on every read:
 * the real handler over it authenticates, throttles, routes and answers /status as always,
 * and every search gets docs/API.md's 500 — with Retry-After when the cause passes by itself.
 */
function unavailableDatabase(cause: () => Error | undefined): Database.Database {
  const db = new Database(':memory:');
  // An eponymous virtual table: every statement that reads `entries` calls rows().
  db.table('entries', {
    columns: [...REQUIRED_COLUMNS.entries],
    // biome-ignore lint/correctness/useYield: no row ever comes: reading entries is what fails.
    *rows() {
      throw cause() ?? new Error('the database is being opened');
    },
  });
  const table = (name: 'categories' | 'payment_methods'): string =>
    `CREATE TABLE ${name} (${REQUIRED_COLUMNS[name].join(', ')});`;
  db.exec(`${table('categories')} ${table('payment_methods')}`);
  return db;
}

function walFilesNotReadable(file: string): NotReadableNow | undefined {
  for (const suffix of ['-wal', '-shm']) {
    try {
      accessSync(`${file}${suffix}`, constants.R_OK);
    } catch (error: unknown) {
      if (errorCode(error) === 'ENOENT') return walFilesMissing(file, 'SQLITE_READONLY_DIRECTORY');
      return {
        code: 'SQLITE_CANTOPEN',
        explanation: `${basename(file)}${suffix} cannot be read by this service (${describeFsError(error)}): the application creates -wal and -shm with the mode of the database file and its own group, so the service's user needs that group and the file mode 0640`,
      };
    }
  }
  return undefined;
}

function walFilesMissing(file: string, code: string): NotReadableNow {
  const name = basename(file);
  return {
    code,
    explanation: `it is in WAL mode and ${name}-wal or ${name}-shm is missing (SQLite deletes them when the last connection closes); a reader would have to create them, and this service never creates files beside the database (${code}): start the application before this service, and keep it running until this service says it serves the file`,
  };
}

function isLock(error: unknown): boolean {
  return /^SQLITE_(?:BUSY|LOCKED)/.test(errorCode(error) ?? '');
}

function readHeader(file: string): Buffer {
  const header = Buffer.alloc(100);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return header.subarray(0, readSync(fd, header, 0, header.length, 0));
  } catch {
    return Buffer.alloc(0);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch {
    return undefined;
  }
}

function inodeOf(file: string): string | undefined {
  try {
    const { dev, ino } = statSync(file);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}
