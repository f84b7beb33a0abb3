// The booking search in SQL: statements prepared once, every value bound.
//
// Every statement below returns the same bookings as PLAIN, the one plain query of
// docs/API.md (test/unit/search.test.ts holds them to it). They differ only in the index
// SQLite walks, which BENCHMARKS.md measured per query shape ("How the service chooses").
// No statement names an index: on a database without the recommended indexes, or behind
// views, every path still answers correctly, only slower.
//
// Two kinds of unary `+`:
// - on a column (`+e.amount_cents`) it keeps the planner off the index for that term;
// - on a parameter (`+:low`) it hides the bound value from the planner. With sqlite_stat4
//   in the file (any application that runs ANALYZE or `PRAGMA optimize` leaves it), SQLite
//   otherwise looks up each bound value in the statistics while planning and re-prepares
//   the statement whenever that parameter is bound again, which is every search. `+:x` is
//   not a bare parameter, so the planner takes it as an unknown value: each statement is
//   planned once, and the index is used all the same (BENCHMARKS.md, "Re-preparation under stat4").

import type { Database, Statement } from 'better-sqlite3';
import {
  type ApplicationMapping,
  DEFAULT_TABLE_NAMES,
  type Mapping,
  ownSchema,
  quoteName,
  splitName,
  type TableNames,
} from './mapping.js';
import type { SearchQuery } from './query.js';

/** One page row, as SQLite returns it in raw mode. */
export type BookingRow = [
  id: number,
  date: string,
  amountCents: number,
  subject: string | null,
  category: string | null,
  paymentMethod: string | null,
];

export interface SearchRows {
  count: number;
  rows: BookingRow[];
}

export interface Bounds {
  von: string;
  bis: string;
  /** Lowest and highest stored amount_cents that match. */
  low: number;
  high: number;
}

/** What the planner decides from: cheap to read, since every value is one index seek. */
export type Stats = [
  firstDate: string | null,
  lastDate: string | null,
  maxId: number | null,
  minAmount: number | null,
  maxAmount: number | null,
];

/**
 * The reference: docs/API.md's processing steps 4 to 6 as plainly as SQL allows, the
 * planner left to itself. The tests hold every statement of the search to it; the
 * benchmark's peers serve it.
 */
export const PLAIN = {
  count: 'SELECT count(*) FROM entries WHERE date BETWEEN :von AND :bis AND amount_cents BETWEEN :low AND :high',
  page: `SELECT e.id, e.date, e.amount_cents, e.subject, c.name, p.name FROM entries AS e
    LEFT JOIN categories AS c ON c.id = e.category_id LEFT JOIN payment_methods AS p ON p.id = e.payment_method_id
    WHERE e.date BETWEEN :von AND :bis AND e.amount_cents BETWEEN :low AND :high
    ORDER BY e.date DESC, e.id DESC LIMIT :limit`,
} as const;

const WINDOW = 'entries.date BETWEEN +:von AND +:bis';

/**
 * The filters, one per way through the index; each matches exactly the bookings of the
 * plain `date BETWEEN :von AND :bis AND amount_cents BETWEEN :low AND :high`, given when
 * the search chooses it (see `chooseCount`).
 */
export const FILTERS = {
  // One amount (low = high): seek (amount_cents, date) to the window; rows come out newest first.
  exact: `entries.amount_cents = +:low AND ${WINDOW}`,
  // A band of amounts, walked along the dates: (date, id, amount_cents) covers the filter.
  dateWalk: `${WINDOW} AND +entries.amount_cents BETWEEN +:low AND +:high`,
  // Every stored amount matches: only the window counts (and amounts that are no number,
  // which a view can produce and BETWEEN never matches).
  window: `${WINDOW} AND entries.amount_cents IS NOT NULL`,
  // The same when no stored date is later than the window's end: the range is open at the
  // top, so SQLite walks from the seek to the end of the index without comparing each
  // entry with the upper bound, in about 60 % of the time (BENCHMARKS.md, "One client
  // against the writer").
  windowFrom: 'entries.date >= +:von AND entries.amount_cents IS NOT NULL',
  // Every booking is in the window: only the band counts (and dates that are no date,
  // which BETWEEN never matches).
  band: 'entries.amount_cents BETWEEN +:low AND +:high AND entries.date IS NOT NULL',
  // A band of amounts, one seek per distinct stored amount (the `band` CTE), then the
  // window within it.
  skipScan: `entries.amount_cents IN (SELECT amount FROM band WHERE amount IS NOT NULL) AND ${WINDOW}`,
} as const;
type Filter = keyof typeof FILTERS;

/**
 * What the count of a search may be: one of the filters, or `everything` — every booking
 * is in the window and every stored amount in the band, so the bookings whose date and
 * amount are not NULL match. SQLite counts a whole b-tree (its smallest index) without
 * reading the entries, about 3.4 times faster than stepping over them; a NULL is one seek
 * on an index, none at all where the column is declared NOT NULL. Only on a table: a view
 * has no b-tree of its own, and each part would be another pass over it.
 */
export type CountKind = Filter | 'everything';

// Distinct stored amounts in [low, high], each found by one seek on (amount_cents, date):
// a skip-scan, so a narrow band of amounts costs one seek per amount, not one step per row.
const amountsInBand = (entries: string): string => `
  WITH RECURSIVE band(amount) AS (
    SELECT (SELECT min(amount_cents) FROM ${entries} WHERE amount_cents BETWEEN +:low AND +:high)
    UNION ALL
    SELECT (SELECT min(amount_cents) FROM ${entries} WHERE amount_cents > band.amount AND amount_cents <= +:high)
    FROM band WHERE band.amount IS NOT NULL
  )`;

const NEWEST_FIRST = 'ORDER BY entries.date DESC, entries.id DESC';

/**
 * The statements over the own schema under `tables`' names. The entries table is always
 * called `entries` inside them (`"kasse" AS entries` when it has another name), so the
 * filters above read the same whatever the name.
 */
export function sqlFor(tables: TableNames) {
  const entries = tables.entries === 'entries' ? 'entries' : `${quoteName(tables.entries)} AS entries`;
  const categories = quoteName(tables.categories);
  const paymentMethods = quoteName(tables.paymentMethods);
  const joins = `
  LEFT JOIN ${categories} AS c ON c.id = entries.category_id
  LEFT JOIN ${paymentMethods} AS p ON p.id = entries.payment_method_id`;
  const selected = 'entries.id, entries.date, entries.amount_cents, entries.subject, c.name, p.name';
  const band = amountsInBand(entries);
  const prefix = (filter: Filter): string => (filter === 'skipScan' ? band : '');
  return {
    stats: `SELECT (SELECT min(date) FROM ${entries}), (SELECT max(date) FROM ${entries}), (SELECT max(id) FROM ${entries}),
                 (SELECT min(amount_cents) FROM ${entries}), (SELECT max(amount_cents) FROM ${entries})`,
    count: (kind: CountKind): string =>
      kind === 'everything'
        ? `SELECT (SELECT count(*) FROM ${entries})
             - (SELECT count(*) FROM ${entries} WHERE entries.date IS NULL)
             - (SELECT count(*) FROM ${entries} WHERE entries.amount_cents IS NULL AND entries.date IS NOT NULL)`
        : `${prefix(kind)} SELECT count(*) FROM ${entries} WHERE ${FILTERS[kind]}`,
    page: (filter: PageFilter): string => {
      // The skip-scan finds the newest ids in the index first, so that only `limit` rows
      // are read from the table; the other paths find them in order already.
      if (filter === 'skipScan') {
        return `${band}
        SELECT ${selected} FROM (
          SELECT entries.id FROM ${entries} WHERE ${FILTERS.skipScan} ${NEWEST_FIRST} LIMIT +:limit
        ) AS newest
        JOIN ${entries} ON entries.id = newest.id ${joins} ${NEWEST_FIRST}`;
      }
      return `SELECT ${selected} FROM ${entries} ${joins} WHERE ${FILTERS[filter]} ${NEWEST_FIRST} LIMIT +:limit`;
    },
    // With total_changes(), a change this connection made itself counts too (data_version
    // counts only other connections' commits).
    version: "SELECT (SELECT data_version FROM pragma_data_version) || '.' || total_changes()",
  } as const;
}

export const SQL = sqlFor(DEFAULT_TABLE_NAMES);

export type PageFilter = 'exact' | 'dateWalk' | 'skipScan';

/** Costs of the two ways through a band of amounts, in index entries stepped over. */
export interface BandCosts {
  everyAmount: boolean;
  everyDate: boolean;
  /** No stored date is later than the window's end. */
  throughLastDate: boolean;
  windowRows: number;
  bandSeeks: number;
}

/** What a search has to do, decided before it reads a booking. */
export type Plan =
  /** One exact amount (toleranz 0), the typical search: no estimate needed. */
  | { kind: 'exact' }
  /** A band of amounts, with the estimate that chooses the way through it. */
  | { kind: 'band'; costs: BandCosts }
  /** The book has no bookings at all (seen from the estimate's first and last date). */
  | { kind: 'empty' };

// One seek of the skip-scan costs about as much as stepping over 13 index entries
// (BENCHMARKS.md, "How the service chooses").
const SEEK_COST_IN_ROWS = 13;
const DAY_MS = 86_400_000;

export type SearchOutcome = { ok: true; result: SearchRows } | { ok: false; error: unknown };

interface Job {
  query: SearchQuery;
  done: (outcome: SearchOutcome) => void;
  abandoned: (() => boolean) | undefined;
}
const ANYONE: Requester = { user: '', address: '', connection: {} };

export interface BookingSearch {
  /** One search in its own read transaction, now. */
  (query: SearchQuery): SearchRows;
  /**
   * The search soon, in a read transaction shared with other queued searches; `from`
   * decides whose search runs next. See `createBookingSearch`.
   */
  queue(query: SearchQuery, done: (outcome: SearchOutcome) => void, from?: Requester): void;
  /** How many queued searches of `address` (whoever's) wait for their turn. */
  waitingFrom(address: string): number;
  /** How many queued searches of `user` (from any address) wait for their turn. */
  waitingFor(user: string): number;
}

/** Who asked for a queued search. */
export interface Requester {
  /** The authenticated user: the users take turns, whatever number of addresses each comes from. */
  user?: string;
  /** The client's address: the addresses of one user take turns. */
  address: string;
  /** The client's connection: the connections of one address take turns. */
  connection: object;
  /** Whether no one waits for the answer any more (the client left): the search is then skipped, and `done` never called. */
  abandoned?: () => boolean;
}

/**
 * How long queued searches may share one read transaction: after the search that passes
 * this budget, the transaction ends and the event loop gets its turn before the next one
 * begins (docs/API.md, "Searches, the application's writer and other clients").
 */
export const TURN_BUDGET_MS = 5;

// After a turn, this many empty turns of the event loop per millisecond it took (at most
// MAX_YIELDS) before the next: libuv accepts one new connection per turn of the loop, so a
// burst of connections that arrived during a long turn would otherwise be accepted one
// search at a time, and a new client's /status would wait behind all of them.
const YIELDS_PER_MS = 1;
const MAX_YIELDS = 100;

/**
 * Prepares the search over `mapping` (the own schema by default) once; the returned
 * function runs it for one validated query.
 *
 * Count and page read one snapshot, so a concurrent writer cannot make them disagree.
 * `queue` shares one read transaction among queued searches: on a rollback-journal file
 * every transaction costs a lock cycle (fcntl, the hot-journal check, the change counter),
 * which is most of a small search. A turn's transaction starts after every search it runs
 * has arrived, and ends before any answer is written: a booking committed before a
 * request arrived is in its answer, and no lock is held while other code (a writer in the
 * same process) runs. It also ends once the turn has used `TURN_BUDGET_MS`: the rest wait
 * for the next turn, after the event loop has answered what else arrived, and a writer in
 * another process that waits for the lock gets it in between. So the lock is never held
 * longer than the budget plus one search. The turns take the users in rotation, one
 * search each, the addresses of one user in rotation, and the connections of one address
 * in rotation, so that a user with many searches queued (pipelined, over many connections,
 * or from many addresses) delays another user by at most one search of its own a round,
 * another address of its own by at most one search per address, and another connection of
 * its own address by at most one search per connection.
 */
export function createBookingSearch(db: Database, mapping: Mapping = ownSchema()): BookingSearch {
  const searchInTransaction =
    mapping.kind === 'own' ? createOwnSchemaSearch(db, mapping.tables) : createApplicationSearch(db, mapping);
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');

  /** Runs `work` in a read transaction of its own, unless the caller already holds one. */
  function inTransaction<T>(work: () => T): T {
    if (db.inTransaction) return work();
    begin.run();
    try {
      return work();
    } finally {
      if (db.inTransaction) commit.run();
    }
  }

  // The queued searches by user, then by address, then by connection, each in the order
  // of the rotation: the first user's first address's first connection's oldest search
  // runs next, and all three then go to the end of their rotation.
  const waiting = new Map<string, Map<string, Map<object, Job[]>>>();
  const byAddress = new Map<string, number>();
  const byUser = new Map<string, number>();
  let scheduled = false;

  /** Moves the first entry of a non-empty `map` to its end, or drops it when `take` (given its value) returns false. */
  function rotate<K, V>(map: Map<K, V>, take: (value: V) => boolean): void {
    const [key, value] = map.entries().next().value as [K, V];
    map.delete(key);
    if (take(value)) map.set(key, value);
  }
  function count(counts: Map<string, number>, key: string, by: number): void {
    const now = (counts.get(key) ?? 0) + by;
    if (now === 0) counts.delete(key);
    else counts.set(key, now);
  }

  function next(): Job | undefined {
    for (;;) {
      const firstUser = waiting.entries().next();
      if (firstUser.done === true) return undefined;
      let job: Job | undefined;
      let address = '';
      rotate(waiting, (addresses) => {
        address = addresses.keys().next().value as string;
        rotate(addresses, (connections) => {
          rotate(connections, (jobs) => {
            job = jobs.shift();
            return jobs.length > 0;
          });
          return connections.size > 0;
        });
        return addresses.size > 0;
      });
      count(byUser, firstUser.value[0], -1);
      count(byAddress, address, -1);
      if (job !== undefined && job.abandoned?.() !== true) return job;
    }
  }

  function runTurn(): void {
    scheduled = false;
    const batch: Job[] = [];
    const outcomes: SearchOutcome[] = [];
    const started = performance.now();
    try {
      inTransaction(() => {
        for (let job = next(); job !== undefined; job = next()) {
          batch.push(job);
          try {
            outcomes.push({ ok: true, result: searchInTransaction(job.query) });
          } catch (error: unknown) {
            outcomes.push({ ok: false, error });
          }
          if (performance.now() - started >= TURN_BUDGET_MS) break;
        }
      });
    } catch (error: unknown) {
      // BEGIN or COMMIT failed (the connection is closed, say): every search of the turn
      // that has no answer yet gets the error, and so does every waiting one when BEGIN
      // failed, so that a broken connection is not retried turn after turn.
      if (batch.length === 0) for (let job = next(); job !== undefined; job = next()) batch.push(job);
      while (outcomes.length < batch.length) outcomes.push({ ok: false, error });
    }
    if (waiting.size > 0) schedule(Math.min(MAX_YIELDS, Math.floor((performance.now() - started) * YIELDS_PER_MS)));
    // The lock is released before any answer is written. One failing callback must not
    // leave the others unanswered; its error is thrown after them.
    let failure: { error: unknown } | undefined;
    for (const [i, { done }] of batch.entries()) {
      try {
        done(outcomes[i] as SearchOutcome);
      } catch (error: unknown) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }

  /** The next turn, after `yields` empty turns of the event loop. */
  function schedule(yields = 0): void {
    if (scheduled) return;
    scheduled = true;
    const hop = (left: number): void => {
      if (left > 0) setImmediate(hop, left - 1);
      else runTurn();
    };
    setImmediate(hop, yields);
  }

  const search = (query: SearchQuery): SearchRows => inTransaction(() => searchInTransaction(query));
  search.waitingFrom = (address: string): number => byAddress.get(address) ?? 0;
  search.waitingFor = (user: string): number => byUser.get(user) ?? 0;
  search.queue = (query: SearchQuery, done: (outcome: SearchOutcome) => void, from = ANYONE): void => {
    const job = { query, done, abandoned: from.abandoned };
    const user = from.user ?? '';
    // A new user, address or connection joins at the end of its rotation.
    const addresses = waiting.get(user) ?? new Map<string, Map<object, Job[]>>();
    waiting.set(user, addresses);
    const connections = addresses.get(from.address) ?? new Map<object, Job[]>();
    addresses.set(from.address, connections);
    const jobs = connections.get(from.connection);
    if (jobs === undefined) connections.set(from.connection, [job]);
    else jobs.push(job);
    count(byUser, user, 1);
    count(byAddress, from.address, 1);
    schedule();
  };
  return search;
}

/** The tuned search over the own schema, inside a read transaction that the caller holds. */
function createOwnSchemaSearch(db: Database, tables: TableNames): (query: SearchQuery) => SearchRows {
  type CountStatement = Statement<[Bounds], number>;
  type PageStatement = Statement<[Bounds & { limit: number }], BookingRow>;
  const sql = sqlFor(tables);
  const count = (kind: CountKind): CountStatement => db.prepare<[Bounds], number>(sql.count(kind)).pluck();
  const page = (filter: PageFilter): PageStatement =>
    db.prepare<[Bounds & { limit: number }], BookingRow>(sql.page(filter)).raw();
  const stats = createStatsCache(db, db.prepare<[], Stats>(sql.stats).raw());
  const counts: Record<CountKind, CountStatement> = {
    exact: count('exact'),
    dateWalk: count('dateWalk'),
    window: count('window'),
    windowFrom: count('windowFrom'),
    band: count('band'),
    skipScan: count('skipScan'),
    everything: count('everything'),
  };
  // Decided once: a table does not turn into a view under a running search, and if it
  // did, the count would only be slower, never wrong.
  const table = isTable(db, tables.entries);
  // The names of category and payment method are joined into each page row: a cache of
  // them saved nothing measurable on a cash book (BENCHMARKS.md, "The names").
  const pages: Record<PageFilter, PageStatement> = {
    exact: page('exact'),
    dateWalk: page('dateWalk'),
    skipScan: page('skipScan'),
  };

  return (query) => {
    const bounds = toBounds(query);
    const plan = planFor(bounds, bounds.low === bounds.high ? undefined : stats());
    if (plan.kind === 'empty') return { count: 0, rows: [] };
    const total = counts[chooseCount(plan, table)].get(bounds) ?? 0;
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    const filter = choosePage(plan, total, query.limit);
    return { count: total, rows: pages[filter].all({ ...bounds, limit: query.limit }) };
  };
}

/** What the stats cache reads the statistics with: a prepared statement, or a stand-in in a test. */
export interface StatsSource {
  get(): Stats | undefined;
}

/**
 * The planner's statistics, read again only when the file has changed: when another
 * connection committed (`PRAGMA data_version`) or this one wrote (`total_changes()`). On a
 * view, the five min/max are five scans of the tables behind it; a search must not pay
 * them every time. Called inside the search's read transaction: reading the version starts
 * the snapshot, so the statistics read after it belong to that version (stale statistics
 * would not only cost time: `window` and `band` trust them to leave a filter out).
 */
export function createStatsCache(db: Database, source: StatsSource): () => Stats | undefined {
  const version = db.prepare<[], string>(SQL.version).pluck();
  let seen: string | undefined;
  let stats: Stats | undefined;
  return () => {
    const now = version.get();
    if (now !== seen || stats === undefined) {
      stats = source.get();
      seen = now;
    }
    return stats;
  };
}

/**
 * The search over a real application's tables (lib/apps/): the mapping's SELECT reads the
 * window by the application's own date index; the service filters the converted rows by
 * docs/API.md's rule and orders them. Every value is bound.
 */
function createApplicationSearch(db: Database, mapping: ApplicationMapping): (query: SearchQuery) => SearchRows {
  const source = `(${mapping.bookings}) AS booking`;
  const where = `booking.amount_cents BETWEEN +:low AND +:high${mapping.exactWindow === true ? '' : ' AND booking.date BETWEEN +:von AND +:bis'}`;
  const count = db.prepare<[Record<string, unknown>], number>(`SELECT count(*) FROM ${source} WHERE ${where}`).pluck();
  const page = db
    .prepare<[Record<string, unknown>], BookingRow>(
      `SELECT booking.id, booking.date, booking.amount_cents, booking.subject, booking.category, booking.payment_method
       FROM ${source} WHERE ${where}
       ORDER BY booking.${mapping.orderDate === true ? 'order_date' : 'date'} DESC, booking.id DESC LIMIT +:limit`,
    )
    .raw();
  return (query) => {
    const bounds = toBounds(query);
    const parameters = { ...bounds, ...mapping.window(bounds.von, bounds.bis), limit: query.limit };
    const total = count.get(parameters) ?? 0;
    if (total === 0 || query.limit === 0) return { count: total, rows: [] };
    return { count: total, rows: page.all(parameters) };
  };
}

/** docs/API.md, Sign convention: the client's amount is the negated stored amount. */
export function toBounds(query: SearchQuery): Bounds {
  return {
    von: query.von,
    bis: query.bis,
    low: -query.betragCents - query.toleranzCents,
    high: -query.betragCents + query.toleranzCents,
  };
}

/** The plan for `bounds`; `stats` are read only for a band of amounts. */
export function planFor(bounds: Bounds, stats: Stats | undefined): Plan {
  if (bounds.low === bounds.high) return { kind: 'exact' };
  const costs = bandCosts(bounds, stats);
  return costs === undefined ? { kind: 'empty' } : { kind: 'band', costs };
}

/** Whether `name` (the entries table's name in the mapping) is a table, not a view. */
export function isTable(db: Database, name: string): boolean {
  const { schema, table } = splitName(name);
  // Unqualified, the name means temp's object before main's before an attached database's.
  const found = db
    .prepare<[string, string | null, string | null], { schema: string; type: string }>(
      "SELECT schema, type FROM pragma_table_list WHERE name = ? COLLATE NOCASE AND (? IS NULL OR schema = ? COLLATE NOCASE) ORDER BY schema <> 'temp', schema <> 'main'",
    )
    .all(table, schema, schema);
  return found[0]?.type === 'table';
}

/** Which count to run; `table`: the entries are a table (not a view), so `everything` may be counted. */
export function chooseCount(plan: Exclude<Plan, { kind: 'empty' }>, table = true): CountKind {
  if (plan.kind === 'exact') return 'exact';
  const { costs } = plan;
  if (costs.everyAmount) {
    if (costs.everyDate && table) return 'everything';
    return costs.throughLastDate ? 'windowFrom' : 'window';
  }
  // Then every match is in the band, and a plain range of the band is the least to step over.
  if (costs.everyDate) return 'band';
  return costs.bandSeeks < costs.windowRows ? 'skipScan' : 'dateWalk';
}

/** Which page to read once the count is known. */
export function choosePage(plan: Exclude<Plan, { kind: 'empty' }>, total: number, limit: number): PageFilter {
  if (plan.kind === 'exact') return 'exact';
  const { costs } = plan;
  // Walking the dates backwards finds `limit` matches after about limit / density rows.
  const dateWalk = Math.min(costs.windowRows, (limit * costs.windowRows) / total);
  return dateWalk <= costs.bandSeeks + total ? 'dateWalk' : 'skipScan';
}

/**
 * The costs of a band query from the stats, or `undefined` when there are no bookings.
 * Bookings are assumed spread evenly over time, which is what a cash book is; a wrong
 * guess costs time, never a wrong answer.
 */
export function bandCosts(bounds: Bounds, stats: Stats | undefined): BandCosts | undefined {
  const [firstDate, lastDate, maxId, minAmount, maxAmount] = stats ?? [];
  if (firstDate == null || lastDate == null || minAmount == null || maxAmount == null) return undefined;
  return {
    // Only numbers can be compared so: text and blobs sort above every number in SQLite,
    // while JavaScript would compare `'5'` as 5.
    everyAmount:
      typeof minAmount === 'number' &&
      typeof maxAmount === 'number' &&
      bounds.low <= minAmount &&
      bounds.high >= maxAmount,
    // Only text dates can be compared so; anything else (numbers, blobs) sorts elsewhere.
    everyDate:
      typeof firstDate === 'string' &&
      typeof lastDate === 'string' &&
      bounds.von <= firstDate &&
      bounds.bis >= lastDate,
    // The latest date is text, so every other date sorts at or before it (numbers below text).
    throughLastDate: typeof lastDate === 'string' && bounds.bis >= lastDate,
    windowRows: estimateWindowRows(bounds, firstDate, lastDate, maxId ?? 0),
    bandSeeks: SEEK_COST_IN_ROWS * (Math.min(bounds.high, maxAmount) - Math.max(bounds.low, minAmount) + 1),
  };
}

function estimateWindowRows({ von, bis }: Bounds, firstDate: string, lastDate: string, rows: number): number {
  const from = Date.parse(von > firstDate ? von : firstDate);
  const to = Date.parse(bis < lastDate ? bis : lastDate);
  const spanDays = (Date.parse(lastDate) - Date.parse(firstDate)) / DAY_MS + 1;
  const windowDays = (to - from) / DAY_MS + 1;
  if (!(windowDays > 0 && spanDays > 0)) return 0;
  return (rows * windowDays) / spanDays;
}

/** The typical search of a reconciliation run: one exact amount in a month. */
export const TYPICAL_QUERY: SearchQuery = {
  von: '2026-01-01',
  bis: '2026-01-31',
  betragCents: -1250,
  toleranzCents: 0,
  waehrung: 'EUR',
  limit: 50,
};

/**
 * How SQLite runs the count of `query` (the typical search by default) on `db` under
 * `mapping`: the EXPLAIN QUERY PLAN lines of the statement the search chooses. For `check`.
 */
export function explainCount(
  db: Database,
  query: SearchQuery = TYPICAL_QUERY,
  mapping: Mapping = ownSchema(),
): string[] {
  const bounds = toBounds(query);
  if (mapping.kind === 'application') {
    return db
      .prepare<
        [Record<string, unknown>],
        { detail: string }
      >(`EXPLAIN QUERY PLAN SELECT count(*) FROM (${mapping.bookings})
        WHERE date BETWEEN +:von AND +:bis AND amount_cents BETWEEN +:low AND +:high`)
      .all({ ...bounds, ...mapping.window(bounds.von, bounds.bis) })
      .map(({ detail }) => detail);
  }
  const sql = sqlFor(mapping.tables);
  const plan = planFor(bounds, bounds.low === bounds.high ? undefined : db.prepare<[], Stats>(sql.stats).raw().get());
  if (plan.kind === 'empty') return [];
  return db
    .prepare<[Bounds], { detail: string }>(
      `EXPLAIN QUERY PLAN ${sql.count(chooseCount(plan, isTable(db, mapping.tables.entries)))}`,
    )
    .all(bounds)
    .map(({ detail }) => detail);
}
