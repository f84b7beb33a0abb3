// A book's searches as the handler asks for them, sent to its guard process (bin/guard/guarded.ts):
// the counts of what waits are this process's, so that the handler's bounds
// (maxWaitingSearches) hold as for any book, and each client connection has a number, so
// that the guard's turns rotate over them as this process's would.

import type { SearchTurns } from '../files/index.js';
import { fromWire, type GuardRequests, NO_FILE_OPEN, type SearchOutcome, type WireOutcome } from './messages.js';

/** An answer that did not come within the time limit; the guard was killed for it. */
export class GuardTimeout extends Error {
  readonly code = 'GUARD_TIMEOUT';
}

/** Why a request was settled without an answer: the time limit, or its guard (or process) was ended first. */
export type Unanswered = 'timeout' | 'ended';

/** What the searches ask of their guard. */
export interface SearchSender {
  /** Sends one search, as GuardRequests['search'] without its number. */
  ask: (search: Omit<GuardRequests['search'], 'id'>) => Promise<WireOutcome | Unanswered>;
  /** Tells the guard process that a connection closed. */
  forget: (connection: number) => void;
  limitMs: number;
  /** A search's error when the guard had no file open for it (GuardOptions). */
  endedError: (() => Error) | undefined;
  /** Hears a search refused for a schema changed under the guard (GuardOptions). */
  changed: (() => void) | undefined;
}

/** The code of the guard's refusal of a search over a file whose schema changed (lib/book.ts, SchemaChanged). */
const SCHEMA_CHANGED = 'SQLITE_SCHEMA';

/** The searches over `sender`, answered as the guard answers them. */
export function guardedSearches(sender: SearchSender): SearchTurns {
  const byAddress = new Map<string, number>();
  const byUser = new Map<string, number>();
  const connectionIds = new WeakMap<object, number>();
  let nextConnection = 1;
  const connectionId = (connection: object | undefined): number => {
    if (connection === undefined) return 0;
    const known = connectionIds.get(connection);
    if (known !== undefined) return known;
    const id = nextConnection++;
    connectionIds.set(connection, id);
    (connection as { once?: (event: string, listener: () => void) => void }).once?.('close', () => sender.forget(id));
    return id;
  };
  const queue: SearchTurns['queue'] = (query, done, from) => {
    if (from?.connection.destroyed === true) return;
    const user = from?.user ?? '';
    const address = from?.address ?? '';
    const connection = connectionId(from?.connection);
    count(byAddress, address, 1);
    count(byUser, user, 1);
    void sender.ask({ query, from: { user, address, connection } }).then((settled) => {
      count(byAddress, address, -1);
      count(byUser, user, -1);
      done(searchOutcome(sender, settled));
    });
  };
  return {
    answer: queue,
    queue,
    waitingFrom: (address) => byAddress.get(address) ?? 0,
    waitingFor: (user) => byUser.get(user) ?? 0,
  };
}

function searchOutcome(
  { endedError, limitMs, changed }: SearchSender,
  settled: WireOutcome | Unanswered,
): SearchOutcome {
  const noFile = typeof settled !== 'string' && !settled.ok && settled.error.code === NO_FILE_OPEN;
  if (endedError !== undefined && (noFile || settled === 'ended')) return { ok: false, error: endedError() };
  if (typeof settled !== 'string') {
    if (!settled.ok && settled.error.code === SCHEMA_CHANGED) changed?.();
    return fromWire(settled);
  }
  const error = new GuardTimeout(
    `the search took longer than --search-timeout (${limitMs / 1000} s) and was ended; a slow or endless view, or a missing index, may cause it`,
  );
  return { ok: false, error };
}

function count(counts: Map<string, number>, key: string, by: number): void {
  const now = (counts.get(key) ?? 0) + by;
  if (now === 0) counts.delete(key);
  else counts.set(key, now);
}
