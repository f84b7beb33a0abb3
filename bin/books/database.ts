// The database file, as the running command serves it: watched, because it belongs to
// another program that may restore it from a backup (a rename), delete it, crash in the
// middle of a write, or not be running at all. While it cannot be served, a stand-in
// handler answers: /status as always, searches with docs/API.md's 500. What is done on
// each change is decided by bin/books/states.ts; this file does it (looks, opens, closes,
// swaps the handler, logs). How a file is opened and diagnosed: bin/files/database-file.ts.

import type { RequestListener } from 'node:http';
import { CliError, type LogLevel } from '../base/index.js';
import type { BookConfig } from '../config/index.js';
import {
  type BookFile,
  committedOf,
  describeDatabaseError,
  fingerprintOf,
  identityOf,
  NO_SEARCH,
  notReadableNow,
  SettingRefusal,
} from '../files/index.js';
import { deniedRead, isGone } from './access.js';
import { BookOpener, type Connection } from './open-book.js';
import { GUARD_LIMIT_MS } from './opening-guard.js';
import { answerCause, type Effect, type First, next, start, type WatchEvent, type WatchState } from './states.js';
import {
  type BookingSearchHandler,
  type BuildHandler,
  type DatabaseStatus,
  type ErrorHook,
  type ServedDatabase,
  statusOf,
} from './status.js';
import { damaged, Unavailable, unavailableSearch } from './unavailable.js';
import { WalFiles } from './wal-files.js';

// How often the file is looked at; a replacement, or the end of a wait, is noticed within this.
const WATCH_INTERVAL_MS = 1_000;
type Log = (line: string, level: Exclude<LogLevel, 'info'>) => void;

/**
 * Serves `file` through `build` and follows it: when it is replaced (another inode at the
 * path) the new file is opened, checked and served (a file not served, once the path has
 * stood still for STABLE_MS); when it cannot be read now, it is waited for; when it is
 * deleted or replaced by one that cannot be served, the old connection is closed. Until
 * the file can be served again, `/status` keeps answering and searches answer
 * docs/API.md's 500 (with Retry-After while the file is only not readable now). Each
 * change of state is one line through `log`.
 *
 * Every open is judged first in a guard process (bin/guard/guard.ts), within `limitMs`: a named
 * pipe put at the path, or a schema that takes long to load, holds up that process, never
 * this one. A file whose mapping reads only tables is then opened here, checked to be the
 * one judged, and its searches run here; any other (views, virtual tables, generated
 * columns) is served by a guard process of its own, whose searches get `limitMs` each.
 * `ready` settles with the first look: a CliError when the file cannot be served, else whether a start's would have ended.
 * `cacheKiB`: SQLite's page cache of the connection (bin/files/database-file.ts, openDatabase).
 * `first`: whose first look it is (bin/books/state-types.ts, First): a joining process's `ready` settles without an error.
 */
export function watchDatabase(
  file: string,
  book: BookFile & Partial<Pick<BookConfig, 'name' | 'named'>>,
  build: BuildHandler,
  log: Log,
  logError: ErrorHook,
  options: WatchOptions = {},
): ServedDatabase {
  return new WatchedDatabase(file, book, build, log, logError, options);
}

/** How a file is watched: watchDatabase's last argument. */
interface WatchOptions {
  cacheKiB?: number | undefined;
  limitMs?: number | undefined;
  first?: First;
}

/** A followed file: the state of bin/books/states.ts, fed what is seen, its effects carried out. */
class WatchedDatabase implements ServedDatabase {
  readonly ready: Promise<boolean>;
  /** The handler over the file as it is now: the connection's, or the stand-in's (swapped by the effects). */
  handler: RequestListener;
  private readonly file: string;
  private readonly build: BuildHandler;
  private readonly log: Log;
  private readonly logError: ErrorHook;
  private readonly opener: BookOpener;
  private state: WatchState<Connection>;
  private settle: { resolve: (unservable: boolean) => void; reject: (error: unknown) => void } | undefined;
  // Built when first needed: most files are served from the start, and many books would each hold one for nothing.
  private standIn: BookingSearchHandler | undefined;
  private readonly timer: NodeJS.Timeout;
  /** The connection whose file is read without a client's search now (`read`): one read at a time. */
  private reading: Connection | undefined;
  /** The served file's fingerprint when its read access was last looked at, and why it may not be read then. */
  private access: { seen: string | undefined; denied: string | undefined } = { seen: undefined, denied: undefined };
  /** The served file's -wal and -shm: gone under it, or left beside a file that replaced it. */
  private readonly walFiles: WalFiles;

  constructor(
    file: string,
    book: BookFile & Partial<Pick<BookConfig, 'name' | 'named'>>,
    build: BuildHandler,
    log: Log,
    logError: ErrorHook,
    { cacheKiB, limitMs = GUARD_LIMIT_MS, first = 'start' }: WatchOptions,
  ) {
    this.file = file;
    this.walFiles = new WalFiles(file);
    this.build = build;
    // The one writer of the file's lines: each names its book where /ready and the metric do.
    this.log = book.named === true ? (line, level) => log(`book ${book.name}: ${line}`, level) : log;
    this.logError = logError;
    this.handler = this.standInHandler;
    const hooks = {
      notice: () => this.feed({ on: 'notice' }),
      broken: (error: unknown) =>
        this.feed({ on: 'broken', message: damaged(file, error), written: committedOf(file), at: Date.now() }),
      onError: this.onError,
      servedBy: (close: () => void) => this.state.phase.is === 'served' && this.state.phase.connection.close === close,
    };
    this.opener = new BookOpener(file, book, build, this.log, hooks, { cacheKiB, limitMs });
    this.ready = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.timer = setInterval(() => this.tick(), WATCH_INTERVAL_MS);
    this.timer.unref();
    const begun = start<Connection>(file, Date.now(), first);
    this.state = begun.state;
    for (const effect of begun.effects) this.carryOut(effect);
  }

  // Handed on alone as callbacks (`served.status`): arrows, bound to this file.
  readonly status = (): DatabaseStatus => statusOf(this.state);

  readonly updateCredentials: ServedDatabase['updateCredentials'] = (credentials) => {
    this.standIn?.updateCredentials(credentials);
    const { phase } = this.state;
    if (phase.is === 'served') phase.connection.handler.updateCredentials(credentials);
  };

  readonly close = (): void => {
    this.feed({ on: 'stop' });
  };

  private feed(event: WatchEvent<Connection>): void {
    const step = next(this.state, event);
    this.state = step.state;
    for (const effect of step.effects) this.carryOut(effect);
    // Only while a lock is said to hold the file does an answered search say it passed:
    // the searches of a book served as usual call nothing more.
    const { phase } = this.state;
    if (phase.is === 'served' && phase.connection.answers !== undefined)
      phase.connection.answers.heard = phase.lock === undefined ? undefined : this.answered;
  }

  private readonly answered = (): void => this.feed({ on: 'answered', at: Date.now() });

  private tick(): void {
    const { phase } = this.state;
    const fingerprinted = phase.is === 'unavailable' && (phase.broken ?? phase.backoff ?? phase.refused) !== undefined;
    const written = fingerprinted ? committedOf(this.file) : undefined;
    const identity = identityOf(this.file);
    if (identity === undefined) this.walFiles.emptied();
    if (phase.is === 'served' && identity === phase.inode) {
      this.lookAtAccess();
      this.lookAtWalFiles(phase.inode);
    }
    this.feed({ on: 'tick', identity, written, at: Date.now() });
  }

  /**
   * The served file's read access, looked at again when the file changed (a chmod changes its
   * ctime): taken away, the file is served on from the connection, and said once with the
   * open's words and fix (check's), for a restart or the next replacement would not serve it;
   * and said when it is given back. /ready stays as it is: the book is served.
   */
  private lookAtAccess(): void {
    const seen = fingerprintOf(this.file);
    if (seen === this.access.seen) return;
    const was = this.access.denied;
    const denied = deniedRead(this.file);
    this.access = { seen, denied };
    const again = `database ${this.file} can be read again: served as before, and a restart or a replacement can open it`;
    const lost = `${denied}; searches are answered from the file already open, but after a restart or the application's next replacement it is not served until it may be read`;
    if (denied !== undefined && denied !== was) this.log(lost, 'warning');
    else if (denied === undefined && was !== undefined) this.log(again, 'notice');
  }

  /** The served file's -wal and -shm, gone or others than its connection's: the file opened again. */
  private lookAtWalFiles(served: string | undefined): void {
    if (!this.walFiles.look(served)) return;
    this.log(
      `database ${this.file}: its -wal or -shm was deleted or replaced while it was served; opening it again, for its connection reads a log the file no longer has; an application still running writes to the deleted files: stop it, then start it, with no other program opening the file meanwhile`,
      'warning',
    );
    this.feed({ on: 'notice' });
  }

  /**
   * The served file read through the searches of its connection, as a request of no search:
   * the read transaction, the check of the schema and the settings and the lock wait of a
   * client's search, without a booking looked up. So a file broken where it lies (a table
   * renamed, a setting the mapping refuses, a lock held) is told by what a search would have
   * told it, within a tick and without a client, and /ready and /metrics only read the state:
   * they never wait for a read, nor start one. A book no one searches pays one short read
   * transaction a second; a searched one answers it among its searches' turns
   * (lib/search/turns.ts), as the smallest of them. No search for the metrics (NO_SEARCH).
   */
  private read(connection: Connection): void {
    if (this.reading === connection) return;
    this.reading = connection;
    connection.search.answer(NO_SEARCH, (outcome) => {
      if (this.reading === connection) this.reading = undefined;
      // Anything else it met has the file opened and checked again, which says what it finds.
      if (!outcome.ok && !this.heard(outcome.error)) this.feed({ on: 'notice' });
    });
  }

  private carryOut(effect: Effect<Connection>): void {
    switch (effect.do) {
      case 'open':
        return this.open(effect.stillFor, effect.check === true);
      case 'close':
        return effect.connection.close();
      case 'serve':
        this.handler = effect.connection.handler;
        this.access = { seen: undefined, denied: undefined };
        this.walFiles.served(effect.inode, effect.connection.log);
        return;
      case 'stand in':
        this.handler = this.standInHandler;
        return;
      case 'log':
        return this.log(effect.line, effect.level);
      case 'read': {
        const { phase } = this.state;
        if (phase.is === 'served') this.read(phase.connection);
        return;
      }
      case 'look soon':
        setImmediate(() => this.tick());
        return;
      case 'ready':
        if (effect.error === undefined) this.settle?.resolve(effect.unservable === true);
        else this.settle?.reject(effect.error);
        return;
      case 'stop ticking':
        return clearInterval(this.timer);
    }
  }

  /** One open of the file (`check`: only judged); its end is fed back as an event. */
  private open(stillFor: number, check: boolean): void {
    const written = committedOf(this.file);
    const stale = this.walFiles.stale();
    (stale === undefined ? this.opener.attempt(stillFor, check) : Promise.reject(new CliError(stale))).then(
      (outcome) =>
        this.feed(
          outcome === 'readable'
            ? { on: 'readable', at: Date.now() }
            : { on: 'opened', outcome, identity: identityOf(this.file), at: Date.now() },
        ),
      (error: unknown) => {
        const bySetting = error instanceof SettingRefusal && { bySetting: true as const };
        const [gone, identity] = [isGone(this.file), identityOf(this.file)];
        const message = describeDatabaseError(this.file, error);
        this.feed({ on: 'failed', error, gone, identity, written, message, ...bySetting, at: Date.now() });
      },
    );
  }

  // Causes of 500s: a stand-in's are said once already; a state the file fell into while served (a lock that
  // outlasted the search's wait among them) is said once by the look it leads to; anything else is the request's.
  private readonly onError: ErrorHook = (error, req, path) => {
    if (!this.heard(error)) this.logError(error, req, path);
  };

  /** What a search over the file failed with, heard as a state of the file; `false`: not one. */
  private heard(error: unknown): boolean {
    if (error instanceof Unavailable) return true;
    const state = notReadableNow(this.file, error);
    if (state === undefined) return false;
    this.feed({ on: state.lock === true ? 'locked' : 'notice' });
    return true;
  }

  /** While the file is not served: the stand-in, built at its first request. */
  private readonly standInHandler: RequestListener = (req, res) => {
    this.standIn ??= this.build(
      unavailableSearch(() => {
        const { code, message } = answerCause(this.state);
        return new Unavailable(code, message);
      }),
      'own',
      this.onError,
      true,
    );
    this.standIn(req, res);
  };
}
