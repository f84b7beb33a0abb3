// What a guard (bin/guard/guarded.ts) is made with, and a request as it waits in it.

import type { GuardRequests } from './messages.js';

/** A request not sent yet (with `serial`, or while a file is opened again), or being sent, and what hears how it was settled. */
export interface Ask {
  kind: keyof GuardRequests;
  body: unknown;
  settle: (settled: unknown) => void;
  /** A search's number (GuardRequests['search']). */
  id?: number;
  /** Its time limit, when not the guard's (a check's). */
  limitMs?: number;
  /** An open's or a check's. */
  judging?: Judging;
}

/** Why the process judges the bookings through a view now (JUDGING); how it ended of itself (a kill, a crash). */
export interface Judging {
  why?: string | undefined;
  ended?: string;
}

export interface GuardOptions {
  /** How long it may go without answering while something waits for it. */
  limitMs: number;
  /**
   * One request at a time, the next sent when the last is answered: a time limit then
   * ends only the request that passed it, and the ones behind it go to the next process.
   * For the opens of every book of a process; a book's searches have turns of their own.
   */
  serial?: boolean;
  /** Ends the process when nothing has waited for this long (it is started again when needed). */
  idleEndMs?: number;
  /** Hears why the process ended while something waited for it, or, holding a `once` guard's file, at all. */
  ended?: (why: string) => void;
  /**
   * A book's guard, whose process holds the file it opened: after a search past the time
   * limit, a new process opens that file again (the same file, still with views) and gets
   * the other searches; otherwise (its open failed, a crash, `end`) none is started, and
   * requests are settled at once; the book opens its file again in a new guard.
   */
  once?: boolean;
  /**
   * A search's error when the guard has no file open for it: the guard ended (`end`, or
   * `once` after its process ended) before it answered or before it was asked. By default
   * the GuardTimeout of a time limit (bin/guard/guarded-searches.ts).
   */
  endedError?: () => Error;
  /**
   * Hears a search the guard refused because the file's schema, or a setting it is served
   * by, changed since the open (SQLITE_SCHEMA, lib/book.ts): the file must be opened and
   * checked again, as for the serving process's own searches.
   */
  changed?: () => void;
}
