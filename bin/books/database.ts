// The database file, as the running command serves it: watched, because it belongs to
// another program that may restore it from a backup (a rename), delete it, crash in the
// middle of a write, or not be running at all. While it cannot be served, a stand-in
// handler answers: /status as always, searches with docs/API.md's 500. How a file is
// opened and diagnosed is bin/files/database-file.ts; the search a connection to it gets,
// bin/files/book-search.ts.

import { statSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type Database from 'better-sqlite3';
import type { BookingSearchHandler, Credentials, RequestHandler } from '../../lib/index.js';
import { errorCode, type SearchTurns } from '../../lib/internal.js';
import type { LogLevel } from '../base/index.js';
import { CliError } from '../base/index.js';
import { SETTINGS } from '../config/index.js';
import {
  type BookFile,
  describeDatabaseError,
  ensureDatabaseFile,
  fingerprintOf,
  identityOf,
  judgeDatabaseFile,
  notReadableNow,
  openDatabase,
  SchemaChanged,
  searchOverFile,
} from '../files/index.js';
import { Guard } from '../guard/index.js';
import { Unavailable, whileReplaced } from './unavailable.js';

// How often the file is looked at; a replacement, or the end of a wait, is noticed within this.
const WATCH_INTERVAL_MS = 1_000;
// A changed file is opened only once its path has stood still this long: a file renamed into
// place again and again (a named pipe and back) is not opened in the middle of it.
const STABLE_MS = 250;
/**
 * How long an open of a book's file (in its guard process) and a search over a book whose
 * searches run in a guard process may take when no limit is given: --search-timeout's default.
 */
export const GUARD_LIMIT_MS = 1000 * SETTINGS['search-timeout'].default;
// The guard process that opens and judges every book's file, one at a time, ended when
// idle for this long.
const OPENING_GUARD_IDLE_MS = 5_000;
let opening: Guard | undefined;

/** The one guard process of this process that opens and judges the books' files. */
function openingGuard(limitMs: number): Guard {
  opening ??= new Guard({ limitMs, serial: true, idleEndMs: OPENING_GUARD_IDLE_MS });
  return opening;
}

export type ErrorHook = (error: unknown, req: IncomingMessage) => void;
/**
 * How the CLI turns the search over a book's file into its handler: `app` is the mapping
 * served (given, or recognised from the file's tables); `onError` hears the causes of
 * 500s; `standIn` for the handler that answers while the file cannot be served.
 */
export interface BuildHandler {
  (search: SearchTurns, app: string, onError: ErrorHook, standIn?: boolean): BookingSearchHandler;
  /** Hears how long each search over the file waited for its turn, in seconds (lib/metrics.ts). */
  waited?: ((seconds: number) => void) | undefined;
}

/**
 * Judges `file` once, in a guard process, and builds its handler over a search that
 * answers nothing: the primary of --workers says what is wrong once, instead of every
 * worker saying it. A file that cannot be read now passes: each worker waits for it.
 */
export async function preflightDatabaseFile(
  file: string,
  book: BookFile,
  build: BuildHandler,
  limitMs = GUARD_LIMIT_MS,
): Promise<void> {
  ensureDatabaseFile(file);
  const access = judgeDatabaseFile(file);
  if (access.kind === 'refused') throw new CliError(access.line);
  const guard = new Guard({ limitMs });
  try {
    const result = await guard.open(file, book.app, book.tables);
    if (result.kind === 'refused') throw new CliError(result.line);
    if (result.kind === 'timeout') throw new CliError(openTimeout(file, limitMs));
    if (result.kind === 'ready')
      build(
        unavailableSearch(() => new Error('not served here')),
        result.app,
        () => {},
      );
  } finally {
    guard.end();
  }
}

/**
 * What a served file is now, for the admin listener (/ready, /metrics) and the books'
 * state: plain data, so that a worker can send it to the primary.
 */
export interface DatabaseStatus {
  /**
   * `serving`: searches are answered; `waiting`: the file cannot be read now and will be
   * once the application acts (a WAL without its -wal/-shm, a hot journal, a lock);
   * `missing`: the file is gone; `unusable`: the file there cannot be served (not a
   * database, tables that do not fit, a directory others could write).
   */
  readonly state: 'serving' | 'waiting' | 'missing' | 'unusable';
  /** Why searches are not answered, as the log line says it; `undefined` while serving. */
  readonly reason: string | undefined;
  /** When this state began, in milliseconds since the epoch. */
  readonly since: number;
  /**
   * How often another file was served at the path since the start: a restore, or a file back
   * after the path was missing or unusable (not the end of a wait for the same file).
   */
  readonly replaced: number;
}

export interface ServedDatabase {
  /**
   * Settles with the first look at the file: rejects with a CliError when it cannot be
   * served (the start ends with that line), resolves when it is served or waited for.
   */
  ready: Promise<void>;
  /** Always the handler over the file as it is now. */
  handler: RequestHandler;
  /** What the file is now. */
  status(): DatabaseStatus;
  /**
   * New credentials for every handler that answers now or may answer again: the file's and
   * the stand-in's that answers while the file cannot be served (SIGHUP). A handler built
   * later takes them from `build`.
   */
  updateCredentials(credentials: readonly Credentials[]): void;
  close(): void;
}

type Serving =
  | { serving: true; handler: BookingSearchHandler; inode: string | undefined; close: () => void }
  | {
      serving: false;
      cause: Unavailable;
      /** The file whose open did not end within the time limit: not tried again until another is there. */
      timedOut?: string | undefined;
      /** A passing moment (the file changed while it was opened), not said in the log. */
      quiet?: true;
    };

/**
 * Serves `file` through `build` and follows it: when it is replaced (another inode at the
 * path) the new file is opened, checked and served once the path has stood still for
 * STABLE_MS; when it cannot be read now, it is waited for; when it is deleted or replaced by
 * one that cannot be served, the old connection is closed. Until the file can be served
 * again, `/status` keeps answering and searches answer docs/API.md's 500 (with
 * Retry-After while the file is only not readable now). Each change of state is one line
 * through `log`.
 *
 * Every open is judged first in a guard process (bin/guard/guard.ts), within `limitMs`: a named
 * pipe put at the path, or a schema that takes long to load, holds up that process, never
 * this one. A file whose mapping reads only tables is then opened here, checked to be the
 * one judged, and its searches run here; any other (views, virtual tables, generated
 * columns) is served by a guard process of its own, whose searches get `limitMs` each.
 * `ready` settles with the first look: a CliError when the file cannot be served.
 * `cacheKiB`: SQLite's page cache of the connection (bin/files/database-file.ts, openDatabase).
 */
export function watchDatabase(
  file: string,
  book: BookFile,
  build: BuildHandler,
  log: (line: string, level: Exclude<LogLevel, 'info'>) => void,
  logError: ErrorHook,
  { cacheKiB, limitMs = GUARD_LIMIT_MS }: { cacheKiB?: number | undefined; limitMs?: number | undefined } = {},
): ServedDatabase {
  let state: Serving = { serving: false, cause: new Unavailable('SQLITE_BUSY', 'the file is being opened') };
  let lastLine = '';
  let noticed = false;
  let since = Date.now();
  let replaced = 0;
  let closed = false;
  let looking: Promise<void> | undefined;
  let application: { user: number; group: number } | undefined;
  // A state that lasts is said once, not at every look.
  const say = (line: string, level: Exclude<LogLevel, 'info'>): void => {
    if (line !== lastLine) log(line, level);
    lastLine = line;
  };
  // Causes of 500s: a stand-in's are already said once; a state the file fell into while
  // served is said once by the next look at the file; anything else is the request's.
  const onError: ErrorHook = (error, req) => {
    if (error instanceof Unavailable) return;
    if (notReadableNow(file, error) !== undefined && !isLock(error)) return notice();
    logError(error, req);
  };
  // The stand-in is built when it is first needed: most files are served from the start,
  // and a service of many books would hold a stand-in per book for nothing (a handler
  // each). `build` gives it the credentials of that moment.
  let standIn: BookingSearchHandler | undefined;
  const standInHandler = (): BookingSearchHandler => {
    // A search the stand-in took is answered by it even when the file is served by then (it
    // waited for its login or its turn): as the moment it came in, a file being opened, which
    // a retry a second later finds served.
    standIn ??= build(
      unavailableSearch(() =>
        state.serving ? new Unavailable('SQLITE_BUSY', 'the file is being opened') : state.cause,
      ),
      'own',
      onError,
      true,
    );
    return standIn;
  };
  // The file must be looked at again at once: its schema changed under the connection, it
  // fell into a state that passes, or its guard process ended.
  function notice(): void {
    if (noticed) return;
    noticed = true;
    setImmediate(followFile);
  }

  /** The file opened, judged and served: a state, or a CliError for a file that cannot be served. */
  const attempt = async (stillFor: number): Promise<Serving> => {
    const written = fingerprintOf(file);
    if (stillFor > 0) {
      // Only a path that stands still is opened: a file renamed into place again and again
      // is looked at again at the next look.
      const before = identityOf(file);
      await new Promise((resolve) => setTimeout(resolve, stillFor));
      if (identityOf(file) !== before) return changing();
    }
    try {
      return await open();
    } catch (error: unknown) {
      // Judged while it was written in place (a cp over it keeps its inode): not what the
      // file will be once written; looked at again, its searches answered with Retry-After.
      if (identityOf(file) !== undefined && fingerprintOf(file) !== written) return changing();
      throw error;
    }
  };

  /** The file at the path opened, judged and served now. */
  const open = async (): Promise<Serving> => {
    ensureDatabaseFile(file);
    // The directories above it are judged for the application as the start found it: a file
    // that another user put there later does not make that user trusted.
    application ??= ownerOf(file);
    const access = judgeDatabaseFile(file, application);
    if (access.kind === 'refused') throw new CliError(access.line);
    const identity = identityOf(file);
    const result = await openingGuard(limitMs).open(file, book.app, book.tables, application);
    if (result.kind === 'refused') throw new CliError(result.line);
    if (result.kind === 'waiting') return { serving: false, cause: new Unavailable(result.code, result.explanation) };
    if (result.kind === 'changed') return changing();
    if (result.kind === 'timeout') {
      return { serving: false, cause: new Unavailable('TIMEOUT', openTimeout(file, limitMs)), timedOut: identity };
    }
    if (result.unbounded !== undefined) return guarded(result.app, result.unbounded);
    // A file of tables: opened here, if it is still the file judged, with its schema.
    if (identityOf(file) !== result.identity) return changing();
    const opened = openDatabase(
      file,
      (db) => {
        if (db.prepare<[], number>('PRAGMA schema_version').pluck().get() !== result.schemaVersion) {
          throw new SchemaChanged();
        }
        // The guard judged this file's bookings (the sample of lib/meaning.ts) a moment ago,
        // and it is still that file with that schema: they are not read a second time. Data
        // written since, like any row beyond the sample, meets the search's row guard.
        const { search } = searchOverFile(db, { app: result.app, tables: book.tables }, notice, build.waited, true);
        const served = fingerprintOf(file);
        const replacing = whileReplaced(
          search,
          () => !db.open,
          () => fingerprintOf(file) !== served,
          notice,
        );
        return build(replacing, result.app, onError);
      },
      access.kind === 'owner',
      cacheKiB,
    );
    if (!opened.readable)
      return { serving: false, cause: new Unavailable(opened.state.code, opened.state.explanation) };
    if (identityOf(file) !== result.identity) {
      opened.db.close();
      return changing();
    }
    return { serving: true, handler: opened.value, inode: result.identity, close: () => opened.db.close() };
  };

  /** Served by a guard process of its own, which opens and judges the file again and keeps it. */
  const guarded = async (app: string, why: string): Promise<Serving> => {
    const guard = new Guard({
      limitMs,
      // Its process holds this file: once it has ended, the file is opened again in another
      // guard, and a search that finds it ended is answered as while a file is opened again.
      once: true,
      endedError: () => new Unavailable('SQLITE_BUSY', 'the file is being opened again'),
      ended: (how) => {
        if (state.serving && state.close === end) {
          log(`database ${file}: a search did not end, ${how}; it is opened again`, 'warning');
          notice();
        }
      },
    });
    const end = (): void => guard.end();
    const result = await guard.open(file, app, book.tables, application);
    if (result.kind !== 'ready' || result.unbounded === undefined) {
      guard.end();
      if (result.kind === 'refused') throw new CliError(result.line);
      if (result.kind === 'waiting') return { serving: false, cause: new Unavailable(result.code, result.explanation) };
      return changing();
    }
    log(
      `database ${file}: ${why}, so its searches run in a process of their own, ${limitMs / 1000} s each at most`,
      'notice',
    );
    return { serving: true, handler: build(guard.searches(), app, onError), inode: result.identity, close: end };
  };

  const changing = (): Serving => ({
    serving: false,
    cause: new Unavailable('SQLITE_BUSY', `${file} changed while it was opened; it is looked at again`),
    quiet: true,
  });

  /** One look at the file; never two at once. */
  function followFile(): void {
    if (looking !== undefined || closed) return;
    let sameFile = false;
    if (state.serving) {
      sameFile = identityOf(file) === state.inode;
      if (!noticed && sameFile) return;
      state.close();
    } else if (state.timedOut !== undefined && !noticed && identityOf(file) === state.timedOut) {
      return;
    }
    const wasWaiting = !state.serving && state.cause.waits;
    const before = describeState(state);
    const changed = noticed || !state.serving;
    noticed = false;
    // While it is opened again, a file that was not served keeps the reason it last gave:
    // /ready and the 500s go on saying what to do (start the application, let it roll back
    // its journal) until the file serves or fails otherwise, not "being opened" each second.
    const lastCause = !state.serving && state.quiet !== true ? state.cause : undefined;
    state = { serving: false, cause: lastCause ?? new Unavailable('SQLITE_BUSY', 'the file is being opened again') };
    looking = attempt(changed ? STABLE_MS : 0)
      .then(
        (next) => {
          state = next;
          if (closed && state.serving) state.close();
          // Stopped meanwhile: its guard was ended with the service, which says nothing of the file.
          if (closed) return;
          if (describeState(state) !== before) since = Date.now();
          if (!state.serving) {
            if (state.quiet !== true) {
              say(state.cause.waits ? waitingLine(file, state.cause) : unusableLine(state.cause), 'warning');
            }
            return;
          }
          const again = sameFile && state.inode === identityOf(file);
          if (!wasWaiting && !again) replaced += 1;
          // Each start of serving is said, even the same as the last one (two restores in a row).
          lastLine = '';
          log(
            wasWaiting
              ? `database ${file} can be read now; serving it`
              : again
                ? `database ${file} was opened and checked again; serving it`
                : `database ${file} was replaced; serving the new file`,
            'notice',
          );
        },
        (error: unknown) => {
          if (closed) return;
          const gone = identityOf(file) === undefined;
          const message = describeDatabaseError(file, error);
          state = { serving: false, cause: new Unavailable(gone ? 'ENOENT' : 'INVALID', message) };
          if (describeState(state) !== before) since = Date.now();
          say(
            gone
              ? `database ${file} is gone; searches answer 500 until it is back`
              : `${message}; searches answer 500 until a valid file is there`,
            'error',
          );
        },
      )
      .finally(() => {
        looking = undefined;
      });
  }

  const timer = setInterval(followFile, WATCH_INTERVAL_MS);
  timer.unref();
  // The first look: a file that cannot be served ends the start (ready rejects).
  const ready = attempt(0).then((first) => {
    state = first;
    if (closed && state.serving) state.close();
    if (!state.serving) say(state.cause.waits ? waitingLine(file, state.cause) : unusableLine(state.cause), 'warning');
  });
  looking = ready.then(
    () => undefined,
    () => undefined,
  );
  void looking.finally(() => {
    looking = undefined;
  });

  return {
    ready,
    handler: (req, res, next) => (state.serving ? state.handler : standInHandler())(req, res, next),
    status: () => {
      if (state.serving) return { state: 'serving', reason: undefined, since, replaced };
      const { cause } = state;
      const kind = cause.waits ? 'waiting' : cause.code === 'ENOENT' ? 'missing' : 'unusable';
      return { state: kind, reason: cause.message, since, replaced };
    },
    updateCredentials: (credentials) => {
      standIn?.updateCredentials(credentials);
      if (state.serving) state.handler.updateCredentials(credentials);
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      if (state.serving) state.close();
    },
  };
}

/** A database that is not a file to follow (the in-memory demo). */
export function inMemoryDatabase(db: Database.Database, build: BuildHandler, logError: ErrorHook): ServedDatabase {
  let handler: BookingSearchHandler;
  try {
    const { search, app } = searchOverFile(db, { app: 'own', tables: {} }, undefined, build.waited);
    handler = build(search, app, logError);
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeDatabaseError(undefined, error));
  }
  const since = Date.now();
  return {
    ready: Promise.resolve(),
    handler,
    status: () => ({ state: 'serving', reason: undefined, since, replaced: 0 }),
    updateCredentials: (credentials) => handler.updateCredentials(credentials),
    close: () => db.close(),
  };
}

/** The owner and group of `file`, the application's user and group as the start finds them. */
function ownerOf(file: string): { user: number; group: number } | undefined {
  try {
    const { uid, gid } = statSync(file);
    return { user: uid, group: gid };
  } catch {
    return undefined;
  }
}

/** A state as a word and its cause, to tell whether a look at the file changed it. */
function describeState(state: Serving): string {
  return state.serving ? 'serving' : `${state.cause.code}: ${state.cause.message}`;
}

function waitingLine(file: string, cause: Unavailable): string {
  return `database ${file} cannot be read yet: ${cause.message}; searches answer 500 with Retry-After until it can`;
}

function unusableLine(cause: Unavailable): string {
  return `${cause.message}; searches answer 500 until another file is there`;
}

/** The line for a file whose open and judgement in the guard process did not end in time. */
function openTimeout(file: string, limitMs: number): string {
  return `database ${file} did not open within ${limitMs / 1000} s (a named pipe in its place, a journal, -wal or -shm that is one, or a schema too large to load): not served; the process that tried was ended`;
}

/**
 * A search whose every answer is `cause()`: the real handler over it authenticates,
 * throttles, routes and answers /status as always, and every search gets docs/API.md's
 * 500 — with Retry-After when the cause passes by itself.
 */
function unavailableSearch(cause: () => Error): SearchTurns {
  return {
    answer: (_query, done) => done({ ok: false, error: cause() }),
    queue: (_query, done) => setImmediate(() => done({ ok: false, error: cause() })),
    waitingFrom: () => 0,
    waitingFor: () => 0,
  };
}

function isLock(error: unknown): boolean {
  return /^SQLITE_(?:BUSY|LOCKED)/.test(errorCode(error) ?? '');
}
