// What the serving process (bin/guard/guarded.ts) and a guard process (bin/guard/guard.ts)
// say to each other on their channel (bin/base/channel.ts): the requests by kind, and what
// each is answered with.

import { errorCode } from '../../lib/internal.js';
import { messageOf } from '../base/index.js';
import type { BookFile, NotReadableNow, SearchTurns, Trusted } from '../files/index.js';

// A search as the handler's turns hand it over (lib/search-endpoint.ts, SearchTurns), by its parts.
type Queue = SearchTurns['queue'];
/** One search, or several from one snapshot. */
export type SearchRequest = Parameters<Queue>[0];
/** What a search is answered with: its rows, or an error. */
export type SearchOutcome = Parameters<Parameters<Queue>[1]>[0];
type SearchRows = Extract<SearchOutcome, { ok: true }>['result'];

/** What the serving process asks of the guard, by the channel's kind (bin/guard/guard.ts answers). */
export interface GuardRequests {
  open: BookFile & {
    file: string;
    /** The application's user and group as the start found them, for a replaced file (bin/files/file-safety.ts). */
    application: Trusted | undefined;
  };
  /** `id`: the search's number, which `running` names. */
  search: { query: SearchRequest; id: number; from: { user: string; address: string; connection: number } };
  check: BookFile & { db: string };
  /** A notification: a client connection closed, the guard's turns forget it. */
  forget: { connection: number };
}

/**
 * A notification of the guard: the search `id` starts now (while others wait there). Past
 * the time limit, the search named last is the one that did not end, if it still waits for
 * its answer; else the one whose time ran out first: the others go to the next process.
 */
export const RUNNING = 'running';

/**
 * A notification of the guard: the open or check it runs now judges the bookings through an
 * object whose reads are not bounded in time, `why` naming it ("'kasse' is a view"); `why`
 * absent: that judgement ended. Past the time limit, the request's timeout says so (slowJudgement).
 */
export const JUDGING = 'judging';

/** The words for a judgement past the time limit, the service's and check's alike. */
export function slowJudgement(why: string, limitMs: number): string {
  return `judging its bookings took longer than --search-timeout (${limitMs / 1000} s) and was ended: ${why}, slow to read now`;
}

/** How the guard found the file. */
export type OpenResult =
  /**
   * Served with `app`. `unbounded`: why the serving process must not run its searches (a
   * view, a virtual table, generated columns, a schema too large), and then the guard
   * keeps the file open for them; `undefined`: the serving process opens it itself,
   * checking that it is still `identity` (`dev:ino`) with `schemaVersion`.
   */
  | {
      kind: 'ready';
      app: string;
      unbounded: string | undefined;
      schemaVersion: number;
      identity: string;
      log?: string | undefined;
    }
  /** A SQLite file that cannot be read now (bin/files/database-file.ts, NotReadableNow). */
  | { kind: 'waiting'; state: NotReadableNow }
  /**
   * Not served: one line saying why. `judged`: the mapping's judgement of what SQLite read
   * (bin/files/database-file.ts, JudgedRefusal), which data written meanwhile does not make torn;
   * `'setting'`: of a setting of the application.
   */
  | { kind: 'refused'; line: string; judged?: true | 'setting' }
  /** Another file came to the path while it was judged: look again. */
  | { kind: 'changed' }
  /** No answer within the time limit: the guard was killed; `judging`: while it judged the bookings (JUDGING). */
  | { kind: 'timeout'; judging?: string }
  /** The process ended of itself (a kill, a crash) or could not be started, before it answered: `how`. */
  | { kind: 'ended'; how: string };

/** A search's outcome as it crosses between the processes: an error as its message and code. */
export type WireOutcome =
  | { ok: true; result: SearchRows }
  | { ok: false; error: { message: string; code: string | undefined } };

/** The code of a guard's answer to a search when it has no file open (bin/guard/guard.ts). */
export const NO_FILE_OPEN = 'GUARD_NO_FILE_OPEN';

/** A search's outcome for the wire: an error as its message and code. */
export function toWire(outcome: SearchOutcome): WireOutcome {
  if (outcome.ok) return outcome;
  const { error } = outcome;
  return {
    ok: false,
    error: { message: messageOf(error), code: errorCode(error) },
  };
}

/** A search's outcome from the wire: an error with its message and code again. */
export function fromWire(outcome: WireOutcome): SearchOutcome {
  if (outcome.ok) return outcome;
  return { ok: false, error: Object.assign(new Error(outcome.error.message), { code: outcome.error.code }) };
}
