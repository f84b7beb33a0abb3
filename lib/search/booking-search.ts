// createBookingSearch: the search over a mapping, its statements prepared once on the
// database, each search's count and page in one read transaction, alone or queued in turns.

import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { DATABASE_CLOSED, isLock } from '../errors.js';
import { type Mapping, ownSchema, type TableNames } from '../mapping.js';
import type { SearchQuery } from '../query.js';
import { createApplicationSearch, unreadableBooking } from './application-search.js';
import { createVersionCache, estimateSource, isTable } from './explain.js';
import {
  type BookingRow,
  type Bounds,
  type CountKind,
  chooseCount,
  choosePage,
  type PageFilter,
  planFor,
  type SearchRows,
  SQL,
  sqlFor,
  toBounds,
} from './sql.js';
import { createLoopTurn, createTurns, type Outcome, type Requester, type Turns } from './turns.js';

// Every booking search of this thread (the books of a service, several handlers of an
// embedder) sees one turn of the event loop (lib/search/turns.ts, LoopTurn).
const LOOP_TURN_OF_THIS_THREAD = createLoopTurn();

export type SearchOutcome = Outcome<SearchRows>;

/**
 * What the turns answer: one search, or several read from one snapshot (a reconciliation's
 * windows, lib/reconcile/), their rows one after the other and their counts added; their
 * `limit` bounds the rows of them all, so that what one request reads stays bounded. Several
 * are answered with their `snapshot`.
 */
export type SearchRequest = SearchQuery | readonly SearchQuery[];

export interface BookingSearch extends Turns<SearchRequest, SearchRows> {
  /** One search in its own read transaction, now. */
  (query: SearchQuery): SearchRows;
  /**
   * The search now, in its own read transaction, when no other search waits; otherwise
   * queued (lib/search/turns.ts).
   */
  answer(query: SearchRequest, done: (outcome: SearchOutcome) => void, from?: Requester): void;
  /**
   * The search soon, in a read transaction shared with the other searches of its turn;
   * `from` decides whose search runs next (lib/search/turns.ts).
   */
  queue(query: SearchRequest, done: (outcome: SearchOutcome) => void, from?: Requester): void;
}

/**
 * Prepares the search over `mapping` (the own schema by default) once; the returned
 * function runs it for one validated query.
 *
 * Count and page read one snapshot, so a concurrent writer cannot make them disagree.
 * `answer` runs a search at once, in its own read transaction, when no other waits; the
 * searches that arrive while others wait share one read transaction per turn: on a
 * rollback-journal file every transaction costs a lock cycle (fcntl, the hot-journal check,
 * the change counter), which is most of a small search. A turn's transaction starts after every search
 * it runs has arrived, and ends before any answer is written: a booking committed before a
 * request arrived is in its answer, and no lock is held while other code (a writer in the
 * same process) runs. A turn ends once it has used its budget, and a writer in another
 * process that waits for the lock gets it in between: the lock is never held longer than
 * the budget plus one search. On a connection whose busy timeout is 0, a search that meets
 * another's lock waits it out as a timer (lib/search/queued.ts), not holding the process.
 *
 * `waited` hears how long each search waited for its turn, in seconds, as it starts
 * (lib/metrics.ts counts it). `snapshot` is called first in every read transaction the
 * search begins (not in its caller's), before any statement of a search reads the file; it
 * may throw to refuse the snapshot, and the searches of that transaction then get what it
 * threw (the command refuses one whose schema is no longer the one it checked: a statement
 * prepared again over a table that became a view would run the view's SQL).
 */
export function createBookingSearch(
  db: Database,
  mapping: Mapping = ownSchema(),
  waited?: (seconds: number, request: SearchRequest) => void,
  snapshot?: () => void,
): BookingSearch {
  const searchInTransaction =
    mapping.kind === 'own' ? createOwnSchemaSearch(db, mapping.tables) : createApplicationSearch(db, mapping);
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const version = db.prepare<[], string>(SQL.version).pluck();
  // Which connection read: another one's versions are not this one's (a file replaced and
  // opened again, a guard process started anew).
  const connection = randomUUID();

  let reading = false;
  /**
   * Runs `work` in a read transaction of its own, or in the one already open: a batch's, or
   * its caller's on a read-only connection (one snapshot for several reads).
   */
  function inTransaction<T>(work: () => T): T {
    if (reading || (db.inTransaction && db.readonly)) return work();
    // A transaction its owner holds on a writable connection (one an app shares) would show
    // the search what is not committed: it waits for its end, as for a writer's lock.
    if (db.inTransaction) throw OWNERS_TRANSACTION();
    try {
      begin.run();
    } catch (error: unknown) {
      throw db.open ? error : CLOSED();
    }
    reading = true;
    try {
      snapshot?.();
      return work();
    } finally {
      reading = false;
      if (db.inTransaction) commit.run();
    }
  }

  const turns = createTurns(
    (request: SearchRequest) =>
      isBatch(request)
        ? searchAll(searchInTransaction, request, `${connection}.${version.get()}`)
        : searchInTransaction(request),
    inTransaction,
    waited,
    LOOP_TURN_OF_THIS_THREAD,
    (error) => isLock(error) && Number(db.pragma('busy_timeout', { simple: true })) === 0,
  );
  const search = (query: SearchQuery): SearchRows => inTransaction(() => searchInTransaction(query));
  return Object.assign(search, turns);
}

/** A connection its owner closed while searches waited for it: a handler over a new one answers the next try. */
const CLOSED = (): Error =>
  Object.assign(new Error('the database connection was closed by its owner'), { code: DATABASE_CLOSED });

/** A transaction of the connection's owner, open as a search begins: a lock, as SQLite names one within a connection. */
const OWNERS_TRANSACTION = (): Error =>
  Object.assign(
    new Error('the connection is in a transaction of its owner: a search never reads what is not committed'),
    {
      code: 'SQLITE_LOCKED',
    },
  );

function isBatch(request: SearchRequest): request is readonly SearchQuery[] {
  return Array.isArray(request);
}

/** Each search of `queries` in the caller's read transaction, their rows one after the other, `limit` in all. */
function searchAll(search: OneSearch, queries: readonly SearchQuery[], snapshot: string): SearchRows {
  const all: SearchRows = { count: 0, rows: [], snapshot };
  for (const query of queries) {
    const limit = Math.max(0, query.limit - all.rows.length);
    const { count, rows } = search(limit === query.limit ? query : { ...query, limit }, true);
    all.count += count;
    for (const row of rows) all.rows.push(row);
  }
  return all;
}

/**
 * One search in the caller's read transaction. `whole`: the caller judges each row of the
 * count itself (a reconciliation: a booking no search can answer is the 500 of the line that
 * finds it, lib/reconcile/candidates.ts); an application's search refuses it all the same.
 */
type OneSearch = (query: SearchQuery, whole?: boolean) => SearchRows;

/** The tuned search over the own schema, inside a read transaction that the caller holds. */
function createOwnSchemaSearch(db: Database, tables: TableNames): OneSearch {
  const sql = sqlFor(tables);
  // The typical search's two statements are prepared now; a band's, each on its first use
  // (and kept): a prepared statement holds 10 to 20 KB, which a service of 100 books pays
  // 100 times for plans most books never run (docs/design/README.md, "Many books"). Each
  // reads numbers, whatever the handle's default became after the handler was made
  // (`db.defaultSafeIntegers(true)` by the embedder's own code).
  const counts = preparedOnUse((kind: CountKind) => {
    const { text, names } = positional(sql.count(kind));
    const statement = db.prepare<unknown[], [all: number, read: number]>(text).raw().safeIntegers(false);
    return boundBy(names, statement.get.bind(statement));
  });
  // As an application's search (lib/search/application-search.ts): a count that holds a
  // booking no search can answer is the search's 500, the booking named in the log.
  const counted = (kind: CountKind, bounds: Bounds, whole = false): number => {
    const [all, read] = counts(kind)(bounds, 0) ?? [0, 0];
    if (read !== all && !whole)
      throw unreadableBooking(
        db.prepare<[Bounds], unknown[]>(sql.firstUnreadable).raw().safeIntegers(false).get(bounds),
      );
    return all;
  };
  const pages = preparedOnUse((filter: PageFilter) => {
    const { text, names } = positional(sql.page(filter));
    const statement = db.prepare<unknown[], BookingRow>(text).raw().safeIntegers(false);
    return boundBy(names, statement.all.bind(statement));
  });
  counts('exact');
  pages('exact');
  const source = preparedOnUse((_: 'estimate') => estimateSource(db, tables));
  const estimate = createVersionCache(db, { get: () => source('estimate').get() });
  // Decided once: a table does not turn into a view under a running search, and if it did,
  // the count would only be slower, never wrong.
  const table = isTable(db, tables.entries);
  // The names of category and payment method are joined into each page row: a cache of
  // them saved nothing measurable on a cash book (docs/design/README.md, "Where a request's time goes").

  return (query, whole) => {
    const bounds = toBounds(query);
    const plan = planFor(bounds, bounds.low === bounds.high ? undefined : estimate());
    if (plan.kind === 'empty') return { count: 0, rows: [] };
    if (plan.kind === 'exact' && query.limit > 0) {
      // Count and page read one snapshot, so a page with room to spare holds every booking
      // that matches, and its length is the count: the typical search finds two or three
      // bookings under a limit of 50, and leaves the count's statement out
      // (docs/design/README.md, "Where a request's time goes").
      const rows = pages('exact')(bounds, query.limit);
      const count = rows.length < query.limit && eachBookingOnce(rows) ? rows.length : counted('exact', bounds, whole);
      return { count, rows };
    }
    const total = counted(chooseCount(plan, table), bounds, whole);
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    const filter = choosePage(plan, total, query.limit);
    return { count: total, rows: pages(filter)(bounds, query.limit) };
  };
}

/**
 * Whether no booking is on the page twice. A join may repeat a booking where the names'
 * table holds its id twice (a view may); the repeats are neighbours, since the page is
 * ordered by date and id. Then the page's length is not the count.
 */
function eachBookingOnce(rows: readonly BookingRow[]): boolean {
  for (let i = 1; i < rows.length; i += 1)
    if ((rows[i] as BookingRow)[0] === (rows[i - 1] as BookingRow)[0]) return false;
  return true;
}

/** A parameter of the search's statements (lib/search/sql.ts): a bound of the search, or the page's limit. */
type ParameterName = keyof Bounds | 'limit';

/**
 * `sql` with each `:name` made a `?`, and the names in order (one used twice is in it
 * twice). better-sqlite3 binds by position faster than by name, which looks each name up
 * in the bound object. Quoted names and strings are skipped, so a table may hold a `:`.
 */
export function positional(sql: string): { text: string; names: ParameterName[] } {
  const names: ParameterName[] = [];
  const text = sql.replace(/"(?:[^"]|"")*"|'(?:[^']|'')*'|:([A-Za-z_]\w*)/g, (quoted, name?: string) => {
    if (name === undefined) return quoted;
    names.push(name as ParameterName);
    return '?';
  });
  return { text, names };
}

type Run<R> = (...values: unknown[]) => R;

/**
 * `run` with the values of `names` in order, by position: for up to five names (every
 * count, the exact and the date-walk page) a binder of its own arity, chosen once, so that
 * such a search builds no object and no array to bind; beyond (skip-scan), an array a search.
 */
function boundBy<R>(names: readonly ParameterName[], run: Run<R>): (bounds: Bounds, limit: number) => R {
  const [a, b, c, d, e] = names;
  switch (names.length) {
    case 0:
      return () => run();
    case 1:
      return (x, l) => run(at(a, x, l));
    case 2:
      return (x, l) => run(at(a, x, l), at(b, x, l));
    case 3:
      return (x, l) => run(at(a, x, l), at(b, x, l), at(c, x, l));
    case 4:
      return (x, l) => run(at(a, x, l), at(b, x, l), at(c, x, l), at(d, x, l));
    case 5:
      return (x, l) => run(at(a, x, l), at(b, x, l), at(c, x, l), at(d, x, l), at(e, x, l));
    default:
      return (x, l) => run(...names.map((name) => at(name, x, l)));
  }
}

/** The value bound for `name`: a bound of the search, or the page's limit. */
function at(name: ParameterName | undefined, bounds: Bounds, limit: number): unknown {
  return name === 'limit' ? limit : bounds[name as keyof Bounds];
}

/** `prepare(key)` once per key, on the key's first use. */
function preparedOnUse<K extends string, S>(prepare: (key: K) => S): (key: K) => S {
  const prepared = new Map<K, S>();
  return (key) => {
    let statement = prepared.get(key);
    if (statement === undefined) {
      statement = prepare(key);
      prepared.set(key, statement);
    }
    return statement;
  };
}
