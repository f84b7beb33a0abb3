// A database file as the command finds it, diagnosed without changing anything: opened
// read-only, its journal read from the header and the files beside it, and SQLite's
// answers put into words. A file that is a SQLite database but cannot be read *now* is a
// state, not a failure (docs/operations.md, WAL and the start order); what will not pass by itself is a CliError.
// Nothing is created beside the file unless this process runs as its owner (the owner rule,
// bin/files/file-safety.ts). Used by `check` and by the serving side (bin/books/database.ts).

import { accessSync, constants, type Stats, statSync } from 'node:fs';
import { win32 } from 'node:path';
import Database from 'better-sqlite3';
import { errorCode, isNotReadableNow, REFUSED_BY_SETTING } from '../../lib/internal.js';
import { CliError, describeFsError, describeReadError, messageOf, shellWord } from '../base/index.js';
import { folderHint, notADatabase, readHead } from './file-kind.js';
import { besideFile, identityOf, isSqliteHeader, journalOf, logBytes, logName } from './file-look.js';
import type { Trusted } from './file-rule.js';
import { judgeDatabaseFile, whyNotReadable } from './file-safety.js';
import { nameOf } from './posix-readable.js';

// While a file is opened and judged (once, not for each search), SQLite waits this long for another
// program's write lock, holding the thread; better-sqlite3's default is 5 s. A connection that serves
// has none: a search waits for a lock as a timer, answering other requests meanwhile (lib/search/queued.ts).
const OPENING_BUSY_TIMEOUT_MS = 100;
// No memory map of the file (SQLite's default, said here so that no build's default can
// change it): a read through a map of a file that another program truncated or overwrote
// in place (an admin restoring a backup with cp) ends the process with SIGBUS, which no
// handler can turn into an answer. SQLite reads each page with read() into its page cache
// instead; docs/design/README.md, "No memory map", measures what that costs the widest search.
const MMAP_BYTES = 0;
// While a file is first read and judged: SQLite's page cache, in KiB. Then the cache a connection
// serves with: SQLite's own default, 2,000 KiB (each book of a configuration file gets less, serve-books.ts).
const OPENING_CACHE_KIB = 64;
export const DEFAULT_CACHE_KIB = 2000;

/** A database that is a SQLite file but cannot be read now; it passes when its owner acts. */
export interface NotReadableNow {
  /** SQLite's result code for the state (what SQLite answered, or would answer). */
  code: string;
  /** The state, what SQLite needs and what the admin can do, as one sentence. */
  explanation: string;
  /** Another program's lock: it passes of itself, when that program's write ends. */
  lock?: true;
}

export type Opened<T> =
  | { readable: true; db: Database.Database; value: T }
  | { readable: false; state: NotReadableNow };

/**
 * The start's order, and a replaced file's: a SQLite database at all (a file that is not
 * one is told so before anything else), then the owner rule (bin/files/file-safety.ts: a refusal
 * is a CliError), then the open.
 */
export function openToServe<T>(
  file: string,
  use: (db: Database.Database) => T,
  cacheKiB = DEFAULT_CACHE_KIB,
  application?: Trusted,
): Opened<T> {
  const held = ensureDatabaseFile(file);
  if (held !== undefined) return { readable: false, state: held };
  const access = judgeDatabaseFile(file, application);
  if (access.kind === 'refused') throw new CliError(access.line);
  return openDatabase(file, use, access.kind === 'owner', cacheKiB);
}

/**
 * Throws a CliError unless `file` is a regular file this process may read that starts as a
 * SQLite database does (an empty one, which SQLite would read as a database of no tables, does
 * not). Returns the state when another program holds it open exclusively, which passes as a lock does.
 */
export function ensureDatabaseFile(file: string): NotReadableNow | undefined {
  const cannotOpen = (error: unknown): CliError =>
    new CliError(`cannot open database ${file}: ${describeReadError(error, () => whyNotReadable(file))}`);
  let stats: Stats;
  try {
    stats = statSync(file);
    if (stats.isFile()) accessSync(file, constants.R_OK);
  } catch (error: unknown) {
    throw cannotOpen(error);
  }
  if (!stats.isFile()) throw new CliError(`cannot open database ${file}: not a regular file${folderHint(file)}`);
  let header: Buffer;
  try {
    // Windows' access check reads no access list, so the open is what tells a denied read
    // (EPERM) and another program's exclusive hold (EBUSY, share mode 0) from a file that is no database.
    header = readHead(file);
  } catch (error: unknown) {
    if (errorCode(error) === 'EBUSY') return heldExclusively(file);
    throw cannotOpen(error);
  }
  if (!isSqliteHeader(header)) throw new CliError(notADatabase(file));
  return undefined;
}

/**
 * Opens `file` read-only and hands it to `use`, which reads from it. Returns the state when
 * the file cannot be read now; throws a CliError for what will not pass by itself (no file,
 * no permission, not a database, a schema that does not fit).
 *
 * `asOwner`: this process runs as the file's owner (bin/files/file-safety.ts, judgeDatabaseFile),
 * so what SQLite creates beside it is the owner's, and a WAL file is opened whether its
 * -wal and -shm exist or not. Otherwise a WAL database is only opened when they are there:
 * SQLite would create them, owned by this service, and the application, which must write
 * them, could then fail. `cacheKiB`: SQLite's page cache once the file is served.
 */
export function openDatabase<T>(
  file: string,
  use: (db: Database.Database) => T,
  asOwner = false,
  cacheKiB = DEFAULT_CACHE_KIB,
): Opened<T> {
  const held = ensureDatabaseFile(file);
  if (held !== undefined) return { readable: false, state: held };
  // Between this look and SQLite's first read (which takes the shared lock that keeps a
  // closing application from deleting -wal/-shm) lies well under a millisecond; a directory
  // the service cannot write (docs/operations.md, Users and permissions) covers even that window.
  if (!asOwner && journalOf(file).wal) {
    const missing = walFilesNotReadable(file);
    if (missing !== undefined) return { readable: false, state: missing };
  }
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: OPENING_BUSY_TIMEOUT_MS });
  } catch (error: unknown) {
    throw new CliError(describeDatabaseError(file, error));
  }
  try {
    db.pragma(`mmap_size = ${MMAP_BYTES}`);
    // `use` reads a sample of every booking (lib/meaning.ts) once: through a small page
    // cache, given back at once, so that a service of many books does not keep what every
    // book's start read (docs/design/README.md, "Many books"). Searches read through `cacheKiB`.
    db.pragma(`cache_size = -${OPENING_CACHE_KIB}`);
    const value = use(db);
    db.pragma('shrink_memory');
    db.pragma(`cache_size = -${cacheKiB}`);
    db.pragma('busy_timeout = 0');
    return { readable: true, db, value };
  } catch (error: unknown) {
    db.close();
    const state = notReadableNow(file, error);
    if (state !== undefined) return { readable: false, state };
    const judged = error instanceof Error && JUDGED.test(error.message);
    const setting = judged && errorCode(error) === REFUSED_BY_SETTING;
    throw new (setting ? SettingRefusal : judged ? JudgedRefusal : CliError)(describeDatabaseError(file, error));
  }
}

/** The mapping's refusal of what SQLite read (a schema, a setting, a booking), not of a file it could not read. */
export class JudgedRefusal extends CliError {}
/** A refusal by a setting of the application (an Actual budget in USD), until it is changed back: the library's REFUSED_BY_SETTING. */
export class SettingRefusal extends JudgedRefusal {}

/** The state behind a SQLite error that passes when the application acts, or `undefined`. */
export function notReadableNow(
  file: string,
  error: unknown,
  platform: NodeJS.Platform = process.platform,
): NotReadableNow | undefined {
  const code = errorCode(error) ?? 'SQLITE_BUSY';
  // Windows' SQLite has no SQLITE_READONLY_DIRECTORY: where the account may not create -wal
  // and -shm in the folder (and Windows judges the service the file's owner), it answers
  // CANTOPEN. The state keeps the code Linux's SQLite gives it, which the service waits for.
  if (code.startsWith('SQLITE_CANTOPEN') && walFilesAbsent(file)) {
    const why = "this service's account may not create files in its folder";
    return { ...walFilesMissing(file, code, why), code: 'SQLITE_READONLY_DIRECTORY' };
  }
  if (!isNotReadableNow(error)) return undefined;
  const name = logName(file);
  if (code === 'SQLITE_READONLY_ROLLBACK') {
    return {
      code,
      explanation: `${name}-journal is a hot journal, left by a write that was interrupted (the application crashed or was killed); only a connection that can write may roll it back, and SQLite lets no one read before (${code}): the application must open the file once to roll back the interrupted write (or, as its owner: ${asOwner(file)}sqlite3 ${shellWord(file)} "SELECT count(*) FROM sqlite_schema")`,
    };
  }
  if (code === 'SQLITE_READONLY_RECOVERY') {
    return {
      code,
      explanation: `the write-ahead log ${name}-wal must be recovered after the application stopped in the middle of a write, and only a connection that can write may do that (${code}): start the application, it recovers the log when it opens the file`,
    };
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') return walFilesMissing(file, code);
  if (code === 'SQLITE_SCHEMA') {
    return {
      code,
      explanation: `the schema of ${name} changed while it was served (${code}: a migration of the application, a VACUUM, or a file written over it in place); it is opened and checked again before it is served`,
    };
  }
  if (code === 'SQLITE_READONLY_CANTINIT' || code === 'SQLITE_READONLY_CANTLOCK') {
    return {
      code,
      explanation: `${name}-shm can only be set up by a connection that can write it (${code}): start the application and keep it running until this service says it serves the file`,
    };
  }
  return {
    code,
    lock: true,
    explanation: `another program holds a lock on the file (${code}); SQLite lets no one read while a write is being committed: this passes when the write ends (if it lasts, ${whoHolds(file, platform)})`,
  };
}

/**
 * How the owner of `file` runs a command from here: `sudo -u NAME ` for another user's file,
 * `sudo -u '#UID' ` when the name service names no one (not on Windows).
 */
function asOwner(file: string): string {
  const uid = process.platform === 'win32' ? undefined : statSync(file, { throwIfNoEntry: false })?.uid;
  if (uid === undefined || uid === process.getuid?.()) return '';
  return `sudo -u ${nameOf('passwd', uid) ?? `'#${uid}'`} `;
}

/**
 * Another program opened `file` with no sharing (Windows' share mode 0): no one else may open
 * it until it closes it. Said as SQLite's lock, which it is to a reader: searches get Retry-After.
 */
export function heldExclusively(file: string, platform: NodeJS.Platform = process.platform): NotReadableNow {
  return {
    code: 'SQLITE_BUSY',
    lock: true,
    explanation: `another program holds the file open exclusively (EBUSY, a sharing violation: no other program may open it meanwhile); this passes when that program closes it (if it lasts, ${whoHolds(file, platform)})`,
  };
}

/** How to find the process that holds `file` with `platform`'s own tools (macOS' fuser has no -v). */
function whoHolds(file: string, platform: NodeJS.Platform): string {
  if (platform === 'win32') {
    return `close the application, or find the process that holds the file: Resource Monitor (resmon) › CPU › Associated Handles, search ${win32.basename(file)}`;
  }
  return `see which process holds the file: ${platform === 'darwin' ? 'lsof' : 'fuser -v'} ${shellWord(file)}`;
}

/** One line for why `file` cannot be served. */
export function describeDatabaseError(file: string | undefined, error: unknown): string {
  if (error instanceof CliError) return error.message;
  const code = errorCode(error);
  const message = messageOf(error);
  if (code === 'SQLITE_NOTADB') return file === undefined ? 'not a SQLite database' : notADatabase(file);
  if (file !== undefined && code?.startsWith('SQLITE_CANTOPEN'))
    return `cannot open database ${file}: SQLite cannot open it or a file beside it (${code})`;
  if (file === undefined) return message;
  if (code?.startsWith('SQLITE_CORRUPT') && logBytes(file) > 0) return corruptBesideLog(file, message);
  // The library names the file by its parameter, `db`; an admin knows it by its path.
  const judged = JUDGED.exec(message);
  return judged === null ? `cannot serve ${file}: ${message}` : `${file} ${message.slice(judged[0].length)}`;
}

/** A file SQLite finds broken with a log laid over it: the log may be another file's. */
function corruptBesideLog(file: string, message: string): string {
  const log = besideFile(file, '-wal');
  return `cannot serve ${file}: ${message}, read with ${log} laid over it (${logBytes(file)} bytes): if the file is a backup put back beside the replaced file's log, move ${log} and its -shm away (the backup itself may be intact)`;
}

// How validateDatabase's refusals start.
const JUDGED = /^db (?=cannot be served exactly: |does not fit )/;

function walFilesNotReadable(file: string): NotReadableNow | undefined {
  for (const suffix of ['-wal', '-shm'] as const) {
    try {
      accessSync(besideFile(file, suffix), constants.R_OK);
    } catch (error: unknown) {
      if (errorCode(error) === 'ENOENT') return walFilesMissing(file, 'SQLITE_READONLY_DIRECTORY');
      return {
        code: 'SQLITE_CANTOPEN',
        explanation: `${logName(file)}${suffix} cannot be read by this service (${describeFsError(error)}): the application creates -wal and -shm with the mode of the database file and its own group, so the service's user needs that group and the file mode 0640`,
      };
    }
  }
  return undefined;
}

function walFilesAbsent(file: string): boolean {
  const absent = (suffix: '-wal' | '-shm'): boolean => identityOf(besideFile(file, suffix)) === undefined;
  return journalOf(file).wal && (absent('-wal') || absent('-shm'));
}

function walFilesMissing(
  file: string,
  code: string,
  why = 'this service never creates files beside the database',
): NotReadableNow {
  const name = logName(file);
  return {
    code,
    explanation: `it is in WAL mode and ${name}-wal or ${name}-shm is missing (SQLite deletes them when the last connection closes); a reader would have to create them, and ${why} (${code}): start the application before this service, and keep it running until this service says it serves the file`,
  };
}
