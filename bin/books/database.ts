// The database file, as the running command serves it: watched, because it belongs to
// another program that may restore it from a backup (a rename), delete it, crash in the
// middle of a write, or not be running at all. While it cannot be served, a stand-in
// handler answers: /status as always, searches with docs/API.md's 500. How a file is
// opened and diagnosed is bin/files/database-file.ts; the search a connection to it gets,
// bin/files/book-search.ts.

import { type BookingSearchHandler, errorCode, type RequestHandler } from '../../lib/internal.js';
import type { LogLevel } from '../base/index.js';
import { type BookFile, describeDatabaseError, identityOf, notReadableNow } from '../files/index.js';
import { BookOpener, type Serving } from './open-book.js';
import { GUARD_LIMIT_MS } from './preflight.js';
import type { BuildHandler, DatabaseStatus, ErrorHook, ServedDatabase } from './status.js';
import { Unavailable, unavailableSearch } from './unavailable.js';

// How often the file is looked at; a replacement, or the end of a wait, is noticed within this.
const WATCH_INTERVAL_MS = 1_000;
// A changed file is opened only once its path has stood still this long: a file renamed into
// place again and again (a named pipe and back) is not opened in the middle of it.
const STABLE_MS = 250;
type Log = (line: string, level: Exclude<LogLevel, 'info'>) => void;

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
  log: Log,
  logError: ErrorHook,
  { cacheKiB, limitMs = GUARD_LIMIT_MS }: { cacheKiB?: number | undefined; limitMs?: number | undefined } = {},
): ServedDatabase {
  return new WatchedDatabase(file, book, build, log, logError, cacheKiB, limitMs);
}

/** A followed file: its state, its looks at the file, and the handler over it as it is now. */
class WatchedDatabase implements ServedDatabase {
  readonly ready: Promise<void>;
  private readonly file: string;
  private readonly build: BuildHandler;
  private readonly log: Log;
  private readonly logError: ErrorHook;
  private readonly opener: BookOpener;
  private state: Serving = { serving: false, cause: new Unavailable('SQLITE_BUSY', 'the file is being opened') };
  private lastLine = '';
  private noticed = false;
  private since = Date.now();
  private replaced = 0;
  private closed = false;
  private looking: Promise<void> | undefined;
  // The stand-in is built when it is first needed: most files are served from the start,
  // and a service of many books would hold a stand-in per book for nothing (a handler
  // each). `build` gives it the credentials of that moment.
  private standIn: BookingSearchHandler | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    file: string,
    book: BookFile,
    build: BuildHandler,
    log: Log,
    logError: ErrorHook,
    cacheKiB: number | undefined,
    limitMs: number,
  ) {
    this.file = file;
    this.build = build;
    this.log = log;
    this.logError = logError;
    const hooks = {
      notice: this.notice,
      onError: this.onError,
      servedBy: (close: () => void) => this.state.serving && this.state.close === close,
    };
    this.opener = new BookOpener(file, book, build, log, hooks, { cacheKiB, limitMs });
    this.timer = setInterval(() => this.followFile(), WATCH_INTERVAL_MS);
    this.timer.unref();
    // The first look: a file that cannot be served ends the start (ready rejects).
    this.ready = this.opener.attempt(0).then((first) => {
      this.state = first;
      if (this.closed && this.state.serving) this.state.close();
      if (!this.state.serving) this.say(this.stateLine(this.state.cause), 'warning');
    });
    const looking = this.ready.then(
      () => undefined,
      () => undefined,
    );
    this.looking = looking;
    void looking.finally(() => {
      this.looking = undefined;
    });
  }

  readonly handler: RequestHandler = (req, res, next) =>
    (this.state.serving ? this.state.handler : this.standInHandler())(req, res, next);

  // Handed on alone as callbacks (`served.status`): arrows, bound to this file.
  readonly status = (): DatabaseStatus => {
    const { since, replaced } = this;
    if (this.state.serving) return { state: 'serving', reason: undefined, since, replaced };
    const { cause } = this.state;
    const kind = cause.waits ? 'waiting' : cause.code === 'ENOENT' ? 'missing' : 'unusable';
    return { state: kind, reason: cause.message, since, replaced };
  };

  readonly updateCredentials: ServedDatabase['updateCredentials'] = (credentials) => {
    this.standIn?.updateCredentials(credentials);
    if (this.state.serving) this.state.handler.updateCredentials(credentials);
  };

  readonly close = (): void => {
    this.closed = true;
    clearInterval(this.timer);
    if (this.state.serving) this.state.close();
  };

  // A state that lasts is said once, not at every look.
  private say(line: string, level: Exclude<LogLevel, 'info'>): void {
    if (line !== this.lastLine) this.log(line, level);
    this.lastLine = line;
  }

  /** The line of a state that is not served: one to wait for, or one that cannot be served. */
  private stateLine(cause: Unavailable): string {
    return cause.waits ? waitingLine(this.file, cause) : unusableLine(cause);
  }

  // Causes of 500s: a stand-in's are already said once; a state the file fell into while
  // served is said once by the next look at the file; anything else is the request's.
  private readonly onError: ErrorHook = (error, req) => {
    if (error instanceof Unavailable) return;
    if (notReadableNow(this.file, error) !== undefined && !isLock(error)) return this.notice();
    this.logError(error, req);
  };

  private standInHandler(): BookingSearchHandler {
    // A search the stand-in took is answered by it even when the file is served by then (it
    // waited for its login or its turn): as the moment it came in, a file being opened, which
    // a retry a second later finds served.
    this.standIn ??= this.build(
      unavailableSearch(() =>
        this.state.serving ? new Unavailable('SQLITE_BUSY', 'the file is being opened') : this.state.cause,
      ),
      'own',
      this.onError,
      true,
    );
    return this.standIn;
  }

  // The file must be looked at again at once: its schema changed under the connection, it
  // fell into a state that passes, or its guard process ended.
  private readonly notice = (): void => {
    if (this.noticed) return;
    this.noticed = true;
    setImmediate(() => this.followFile());
  };

  /** One look at the file; never two at once. */
  private followFile(): void {
    if (this.looking !== undefined || this.closed) return;
    const { file } = this;
    let sameFile = false;
    if (this.state.serving) {
      sameFile = identityOf(file) === this.state.inode;
      if (!this.noticed && sameFile) return;
      this.state.close();
    } else if (this.state.timedOut !== undefined && !this.noticed && identityOf(file) === this.state.timedOut) {
      return;
    }
    const wasWaiting = !this.state.serving && this.state.cause.waits;
    const before = describeState(this.state);
    const changed = this.noticed || !this.state.serving;
    this.noticed = false;
    // While it is opened again, a file that was not served keeps the reason it last gave:
    // /ready and the 500s go on saying what to do (start the application, let it roll back
    // its journal) until the file serves or fails otherwise, not "being opened" each second.
    const lastCause = !this.state.serving && this.state.quiet !== true ? this.state.cause : undefined;
    this.state = {
      serving: false,
      cause: lastCause ?? new Unavailable('SQLITE_BUSY', 'the file is being opened again'),
    };
    this.looking = this.opener
      .attempt(changed ? STABLE_MS : 0)
      .then(
        (next) => this.looked(next, before, sameFile, wasWaiting),
        (error: unknown) => this.failed(error, before),
      )
      .finally(() => {
        this.looking = undefined;
      });
  }

  /** A look at the file ended in a state: said, when it is one to say. */
  private looked(next: Serving, before: string, sameFile: boolean, wasWaiting: boolean): void {
    const { file } = this;
    this.state = next;
    if (this.closed && this.state.serving) this.state.close();
    // Stopped meanwhile: its guard was ended with the service, which says nothing of the file.
    if (this.closed) return;
    if (describeState(this.state) !== before) this.since = Date.now();
    if (!this.state.serving) {
      if (this.state.quiet !== true) this.say(this.stateLine(this.state.cause), 'warning');
      return;
    }
    const again = sameFile && this.state.inode === identityOf(file);
    if (!wasWaiting && !again) this.replaced += 1;
    // Each start of serving is said, even the same as the last one (two restores in a row).
    this.lastLine = '';
    this.log(
      wasWaiting
        ? `database ${file} can be read now; serving it`
        : again
          ? `database ${file} was opened and checked again; serving it`
          : `database ${file} was replaced; serving the new file`,
      'notice',
    );
  }

  /** A look at the file ended with a file that cannot be served, or none. */
  private failed(error: unknown, before: string): void {
    const { file } = this;
    if (this.closed) return;
    const gone = identityOf(file) === undefined;
    const message = describeDatabaseError(file, error);
    this.state = { serving: false, cause: new Unavailable(gone ? 'ENOENT' : 'INVALID', message) };
    if (describeState(this.state) !== before) this.since = Date.now();
    this.say(
      gone
        ? `database ${file} is gone; searches answer 500 until it is back`
        : `${message}; searches answer 500 until a valid file is there`,
      'error',
    );
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

function isLock(error: unknown): boolean {
  return /^SQLITE_(?:BUSY|LOCKED)/.test(errorCode(error) ?? '');
}
