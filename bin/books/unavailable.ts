// Why a book's searches cannot be answered now, and the search over a connection that the
// file was replaced under: a search the connection had taken when it was closed for the
// file to be opened again, or that read the file while it was written in place (a cp over
// it), gets the 500 with Retry-After of a file being opened again (docs/API.md), not the
// 500 of a broken file.

import { errorCode, isNotReadableNow } from '../../lib/internal.js';
import type { SearchTurns } from '../files/index.js';

/** Why searches cannot be answered now; its `code` decides whether they get Retry-After. */
export class Unavailable extends Error {
  readonly code: string;
  /** A state that passes by itself (as opposed to a missing or invalid file). */
  readonly waits: boolean;

  constructor(code: string, explanation: string) {
    super(explanation);
    this.code = code;
    this.waits = isNotReadableNow(this);
  }
}

/** Who hears a search answered, when someone is listening (a lock said to hold the file). */
export interface AnswerListener {
  heard?: (() => void) | undefined;
}

/** SQLite's words for pages that are not a database's: what a read sees while a file is written. */
const TORN = /^SQLITE_(?:CORRUPT|NOTADB|IOERR_SHORT_READ)/;

/** What whileReplaced asks of the served file, and tells. */
export interface ServedFile {
  /** Whether its connection was closed (for the file to be opened again). */
  closed(): boolean;
  /** Whether it changed since it was opened (written in place). */
  written(): boolean;
  /** A torn read of a changed file: the file must be looked at again. */
  torn(): void;
  /** A torn read of a file that did not change: its search gets the 500 as always. */
  broken(error: unknown): void;
  /** Hears a search answered with its result. */
  answers: AnswerListener;
}

// What a search gets once the file it was reading goes: 500 database_unavailable with
// Retry-After, as the file is opened again (SQLITE_BUSY: a state that passes by itself).
const OPENED_AGAIN = (): Unavailable => new Unavailable('SQLITE_BUSY', 'the file is being opened again');

/**
 * `search` whose failures answered once `file.closed()`, whatever their cause, and whose torn
 * reads while `file.written()`, are the Unavailable of a file opened again (OPENED_AGAIN).
 */
export function whileReplaced(search: SearchTurns, file: ServedFile): SearchTurns {
  const { closed, written, torn, broken, answers } = file;
  type Done = Parameters<SearchTurns['answer']>[1];
  const checked =
    (done: Done): Done =>
    (outcome) => {
      if (outcome.ok) {
        answers.heard?.();
        return done(outcome);
      }
      const tornRead = TORN.test(errorCode(outcome.error) ?? '');
      if (closed() || (tornRead && written())) {
        if (!closed()) torn();
        return done({ ok: false, error: OPENED_AGAIN() });
      }
      if (tornRead) broken(outcome.error);
      done(outcome);
    };
  return {
    answer: (query, done, from) => search.answer(query, checked(done), from),
    queue: (query, done, from) => search.queue(query, checked(done), from),
    waitingFrom: (address) => search.waitingFrom(address),
    waitingFor: (user) => search.waitingFor(user),
  };
}

/**
 * A search whose every answer is `cause()`: the real handler over it authenticates,
 * throttles, routes and answers /status as always, and every search gets docs/API.md's
 * 500 — with Retry-After when the cause passes by itself.
 */
export function unavailableSearch(cause: () => Error): SearchTurns {
  return {
    answer: (_query, done) => done({ ok: false, error: cause() }),
    queue: (_query, done) => setImmediate(() => done({ ok: false, error: cause() })),
    waitingFrom: () => 0,
    waitingFor: () => 0,
  };
}

/** Why a file whose pages a search found broken, though it did not change, is not served. */
export function damaged(file: string, error: unknown): string {
  const said = error instanceof Error ? `${errorCode(error) ?? 'SQLITE_CORRUPT'}: ${error.message}` : String(error);
  return `database ${file} is damaged: a search read pages of it that are no database's (${said}), though the file did not change since it was opened; restore it from a backup`;
}
