// What the running command knows of a served book's file: the handler it builds over the
// file's search, and the state of the file (serving, waiting, missing, unusable) that the
// admin listener and the books' state read. Plain types, shared by the followed file
// (bin/books/database.ts), the in-memory book and the preflight.

import type { IncomingMessage, RequestListener } from 'node:http';
import { type Credentials, type createHandler, REFUSED_BY_SETTING } from '../../lib/internal.js';
import type { SearchTurns } from '../files/index.js';
import type { WatchState } from './state-types.js';

/** A book's handler as createHandler makes it: a request handler that takes new credentials. */
export type BookingSearchHandler = ReturnType<typeof createHandler>;

/** Hears the cause of a 500, with its request and the path a log line shows (HandlerOptions' onError). */
export type ErrorHook = (error: unknown, req: IncomingMessage, path: string) => void;
/**
 * How the CLI turns the search over a book's file into its handler: `app` is the mapping
 * served (given, or recognised from the file's tables); `onError` hears the causes of
 * 500s; `standIn` for the handler that answers while the file cannot be served.
 */
export interface BuildHandler {
  (search: SearchTurns, app: string, onError: ErrorHook, standIn?: boolean): BookingSearchHandler;
  /** Hears how long each search over the file waited for its turn, in seconds (lib/metrics.ts), and the request. */
  waited?: ((seconds: number, request: unknown) => void) | undefined;
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
   * served (the start ends with that line), resolves when it is served or waited for: true
   * when a joining process's look found a file that a start's would have ended for.
   */
  ready: Promise<boolean>;
  /** Always the handler over the file as it is now. */
  handler: RequestListener;
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

/**
 * What the file is now, for /ready, /metrics and the books' state: `waiting` whenever its
 * searches' 500 has Retry-After, a file its application's setting refuses too (GnuCash
 * holding it open), which is served again once the application acts.
 */
export function statusOf<C>(state: WatchState<C>): DatabaseStatus {
  const { phase, since, replaced } = state;
  const cause = phase.is === 'served' ? phase.lock : phase.cause;
  if (cause === undefined) return { state: 'serving', reason: undefined, since, replaced };
  const passes = cause.waits || cause.code === REFUSED_BY_SETTING;
  const kind = passes ? 'waiting' : cause.code === 'ENOENT' ? 'missing' : 'unusable';
  return { state: kind, reason: cause.message, since, replaced };
}
