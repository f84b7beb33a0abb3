// The opening of a followed book's file: judged in a guard process, then opened here (a file of tables) or served by a
// guard process of its own (views, virtual tables, generated columns), and checked to be the file judged. How the file
// is followed over time is bin/books/states.ts, carried out by bin/books/database.ts.

import { CliError, type LogLevel } from '../base/index.js';
import {
  applicationOf,
  type BookFile,
  committedOf,
  ensureDatabaseFile,
  fingerprintOf,
  identityOf,
  JudgedRefusal,
  judgeDatabaseFile,
  type NotReadableNow,
  openDatabase,
  type SearchTurns,
  SettingRefusal,
  searchOverFile,
  shapeOf,
  type Trusted,
  walFilesOf,
} from '../files/index.js';
import { Guard, slowJudgement } from '../guard/index.js';
import { openWarnings } from './open-warnings.js';
import { openingGuard, openTimeout } from './opening-guard.js';
import type { Outcome } from './states.js';
import type { BookingSearchHandler, BuildHandler, ErrorHook } from './status.js';
import { type AnswerListener, Unavailable, whileReplaced } from './unavailable.js';

/**
 * A connection to the file, served: its handler, the searches it answers through (a read of the file without a
 * client's search takes them too), how it is closed, who hears its searches answered, its -wal and -shm as opened.
 */
export interface Connection {
  handler: BookingSearchHandler;
  search: SearchTurns;
  close: () => void;
  answers?: AnswerListener;
  log?: string | undefined;
}

/** How an open of a followed file ended (bin/books/states.ts). */
export type Serving = Outcome<Connection>;

/** A file the guard judged servable: what it read, the identity judged here, and whether this process owns it. */
export interface Judged {
  ready: Extract<Awaited<ReturnType<Guard['open']>>, { kind: 'ready' }>;
  identity: string | undefined;
  owner: boolean;
}

/** What the opening hears from the followed file, and asks it. */
export interface OpenHooks {
  /** The file must be looked at again at once. */
  notice: () => void;
  /** A search read broken pages of the file, which did not change since it was opened. */
  broken: (error: unknown) => void;
  /** Hears the causes of the 500s of a handler built over the file. */
  onError: ErrorHook;
  /** Whether the file is served now by the handler that `close` closes. */
  servedBy: (close: () => void) => boolean;
}

/** Opens a followed book's file, each time it is looked at. */
export class BookOpener {
  private readonly file: string;
  private readonly book: BookFile;
  private readonly build: BuildHandler;
  private readonly log: (line: string, level: Exclude<LogLevel, 'info'>) => void;
  private readonly hooks: OpenHooks;
  private readonly cacheKiB: number | undefined;
  private readonly limitMs: number;
  private application: Trusted | undefined;
  /** The identity of the file judged last. */
  private judged: string | undefined;
  /** The identity and schema cookie of the file whose open was warned of last (bin/books/open-warnings.ts). */
  private planned: string | undefined;

  constructor(
    file: string,
    book: BookFile,
    build: BuildHandler,
    log: (line: string, level: Exclude<LogLevel, 'info'>) => void,
    hooks: OpenHooks,
    { cacheKiB, limitMs }: { cacheKiB: number | undefined; limitMs: number },
  ) {
    this.file = file;
    this.book = book;
    this.build = build;
    this.log = log;
    this.hooks = hooks;
    this.cacheKiB = cacheKiB;
    this.limitMs = limitMs;
  }

  /**
   * The file opened, judged and served: a state, or a CliError for a file that cannot be
   * served. `check`: judged only, `readable` when it can be read (beside a connection to it).
   */
  async attempt(stillFor: number, check = false): Promise<Serving | 'readable'> {
    const { file } = this;
    const [written, inPlace] = [committedOf(file), fingerprintOf(file)];
    const shape = shapeOf(file);
    if (stillFor > 0) {
      // Only a path that stands still is opened: a file renamed into place again and again
      // is looked at again at the next look.
      const before = identityOf(file);
      await new Promise((resolve) => setTimeout(resolve, stillFor));
      if (identityOf(file) !== before) return this.changing();
    }
    const began = Date.now();
    try {
      const outcome = await this.open(check);
      // Its judgement through a view past the limit: the file as this try began, which the
      // looks compare to try it again sooner once it changed (bin/books/backoff.ts).
      return outcome !== 'readable' && !outcome.serving && outcome.slow === true
        ? { ...outcome, written, began }
        : outcome;
    } catch (error: unknown) {
      // Judged while it was written in place (a cp over it keeps its inode): not what the
      // file will be once written; looked at again, its searches answered with Retry-After.
      // But a refusal of what SQLite read stands while rows were written meanwhile (the same
      // file, its schema cookie the same), as they are all the time into a file in use: else
      // a busy file with a refused setting would be "changed" at every look, never refused.
      // A cp tears pages, which SQLite reports as its own errors, never such a refusal.
      if (error instanceof JudgedRefusal && shapeOf(file) === shape) throw error;
      if (identityOf(file) !== undefined && fingerprintOf(file) !== inPlace) return this.changing();
      throw error;
    }
  }

  /** The file at the path opened, judged and served now (`check`: judged only). */
  private async open(check: boolean): Promise<Serving | 'readable'> {
    const judged = await this.judge();
    if (!('ready' in judged)) return judged;
    if (check) return 'readable';
    const { ready, identity, owner } = judged;
    if (ready.unbounded !== undefined) return this.guarded(ready.app, ready.unbounded);
    // A file of tables: opened here, if it is still the file judged, with its schema.
    if (identityOf(this.file) !== ready.identity) return this.changing();
    return this.openHere(ready.app, ready.schemaVersion, identity, owner);
  }

  /**
   * The file judged: a database file at all, who may change it, its open in `guard` (bin/books/preflight.ts
   * has its own). A CliError for a file that cannot be served; a state for one tried again; else what was read.
   */
  async judge(guard = openingGuard(this.limitMs)): Promise<Judged | Serving> {
    const { file, book, limitMs } = this;
    const held = ensureDatabaseFile(file);
    if (held !== undefined) return this.waiting(held);
    // Judged as the start judges it, and its warning said again when it is another file
    // than the one judged last (the start's is said by the start's lines).
    const own = applicationOf(file);
    const access = judgeDatabaseFile(file, own);
    if (access.kind === 'refused') throw new CliError(access.line);
    const identity = identityOf(file);
    if (
      access.kind === 'reader' &&
      access.warning !== undefined &&
      this.judged !== undefined &&
      identity !== this.judged
    )
      this.log(`warning: ${access.warning}`, 'warning');
    this.judged = identity;
    // And the directories above it for the application as the start found it, where this
    // file names another: a file that another user put there later does not make that user trusted.
    this.application ??= own;
    if (this.application?.user !== own?.user || this.application?.group !== own?.group) {
      const kept = judgeDatabaseFile(file, this.application);
      if (kept.kind === 'refused') throw new CliError(kept.line);
    }
    const result = await guard.open(file, book, this.application);
    if (result.kind === 'refused') {
      throw new (result.judged === 'setting' ? SettingRefusal : result.judged ? JudgedRefusal : CliError)(result.line);
    }
    if (result.kind === 'waiting') return this.waiting(result.state);
    if (result.kind === 'changed') return this.changing();
    if (result.kind === 'ended') return this.ended(result.how);
    if (result.kind === 'timeout') {
      if (result.judging !== undefined) return this.slow(result.judging);
      return { serving: false, cause: new Unavailable('TIMEOUT', openTimeout(file, limitMs)), timedOut: identity };
    }
    return { ready: result, identity, owner: access.kind === 'owner' };
  }

  /** A file of tables the guard judged, opened in this process and checked to be that file. */
  private openHere(app: string, schemaVersion: number, identity: string | undefined, owner: boolean): Serving {
    const { file, book, build } = this;
    const answers: AnswerListener = {};
    const shape = `${identity}:${schemaVersion}`;
    const opened = openDatabase(
      file,
      (db) => {
        // The guard judged this file's bookings (the sample of lib/meaning.ts) a moment ago:
        // if it still has that schema, they are not read a second time. Data written since,
        // like any row beyond the sample, meets the search's row guard.
        const over = searchOverFile(db, { ...book, app }, this.hooks.notice, build.waited, schemaVersion);
        const { search } = over;
        // Judged as `check` judges it, once for a file and schema: at the start, after a replacement.
        const warnings = this.planned === shape ? [] : openWarnings(file, over);
        const served = fingerprintOf(file);
        const replacing = whileReplaced(search, {
          closed: () => !db.open,
          written: () => fingerprintOf(file) !== served,
          torn: this.hooks.notice,
          broken: this.hooks.broken,
          answers,
        });
        return { handler: build(replacing, app, this.hooks.onError), search: replacing, warnings };
      },
      owner,
      this.cacheKiB,
    );
    if (!opened.readable) return this.waiting(opened.state);
    const log = walFilesOf(file);
    if (identityOf(file) !== identity) {
      opened.db.close();
      return this.changing();
    }
    const { warnings, ...value } = opened.value;
    this.planned = shape;
    for (const line of warnings) this.log(line, 'warning');
    return { serving: true, connection: { ...value, close: () => opened.db.close(), answers, log }, inode: identity };
  }

  /** Served by a guard process of its own, which opens and judges the file again and keeps it. */
  private async guarded(app: string, why: string): Promise<Serving> {
    const { file, limitMs } = this;
    const guard = new Guard({
      limitMs,
      // Its process holds this file: after a search past the limit, a new process opens it
      // again; once that fails, or its process crashed, the file is opened again in another
      // guard, and a search that finds it ended is answered as while a file is opened again.
      once: true,
      endedError: () => new Unavailable('SQLITE_BUSY', 'the file is being opened again'),
      changed: this.hooks.notice,
      ended: (how) => {
        if (this.hooks.servedBy(end)) {
          this.log(`database ${file}: ${how}; it is opened again`, 'warning');
          this.hooks.notice();
        }
      },
    });
    const end = (): void => guard.end();
    const result = await guard.open(file, { ...this.book, app }, this.application);
    if (result.kind !== 'ready' || result.unbounded === undefined) {
      guard.end();
      if (result.kind === 'refused') throw new CliError(result.line);
      if (result.kind === 'waiting') return this.waiting(result.state);
      if (result.kind === 'ended') return this.ended(result.how);
      if (result.kind === 'timeout' && result.judging !== undefined) return this.slow(result.judging);
      return this.changing();
    }
    this.log(
      `database ${file}: ${why}, so its searches run in a process of their own, ${limitMs / 1000} s each at most`,
      'notice',
    );
    const search = guard.searches();
    const handler = this.build(search, app, this.hooks.onError);
    return { serving: true, connection: { handler, search, close: end, log: result.log }, inode: result.identity };
  }

  /** A file that cannot be read now, as bin/files/database-file.ts's notReadableNow told it. */
  private waiting({ code, explanation, lock }: NotReadableNow): Serving {
    // Another program's lock passes of itself: its searches get Retry-After, a served book keeps its connection.
    if (lock === true) return { serving: false, cause: { code, message: explanation, waits: true, lock } };
    return { serving: false, cause: new Unavailable(code, explanation) };
  }

  /**
   * Its bookings, read through `why` (a view), not judged within the limit: a view may be
   * slow for a while (the application holds the file, a cold cache), so the file is tried
   * again as one that cannot be read now, its searches answered with Retry-After.
   */
  private slow(why: string): Serving {
    return { serving: false, cause: new Unavailable('SQLITE_BUSY', slowJudgement(why, this.limitMs)), slow: true };
  }

  /**
   * The process that opened it ended before it answered (a kill, the OOM killer) or could
   * not be started: not the file's doing, so it is tried again at the next look, as one that
   * cannot be read now, and /ready says why meanwhile.
   */
  private ended(how: string): Serving {
    return {
      serving: false,
      cause: new Unavailable('SQLITE_BUSY', `the process that opens it ${how}; it is tried again`),
    };
  }

  private changing(): Serving {
    return {
      serving: false,
      cause: new Unavailable('SQLITE_BUSY', `${this.file} changed while it was opened; it is looked at again`),
      quiet: true,
    };
  }
}
