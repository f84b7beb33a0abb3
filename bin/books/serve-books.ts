// The books of a configuration (a file's sections, or the one book of --db) behind one listener (docs/operations.md,
// Many books): one watched database and handler per book (its WAL wait, replaced-file watch, statistics and search
// turns its own), mountHandlers choosing by base path, and the fallback for a path that names no book. A reload builds
// what is new before it changes anything, swaps the table at once, and closes a book that left only when its last
// request has ended: the other books' connections and searches never notice.

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type Database from 'better-sqlite3';
import { type Credentials, mountHandlers } from '../../lib/internal.js';
import { CliError, type LogLevel } from '../base/index.js';
import { type BookConfig, describeChange, diffBooks, sameCredentials, usersOf, usersOfAny } from '../config/index.js';
import { inFlightGraceMs } from '../listen/index.js';
import { type BookStatus, type BookView, firstLooks, orNobody, userless } from './books.js';
import { watchDatabase } from './database.js';
import { inMemoryDatabase } from './in-memory.js';
import { GUARD_LIMIT_MS } from './opening-guard.js';
import type { First } from './state-types.js';
import type { BuildHandler, ErrorHook, ServedDatabase } from './status.js';

// SQLite's page cache of each book's connection, in KiB: an eighth of SQLite's default, so 100
// books hold 25 MB of cached pages, not 200 MB; the rest comes from the kernel's page cache, shared
// with the application (docs/design/README.md, "Many books", measures what it costs a search).
export const BOOK_CACHE_KIB = 256;

export interface BookService {
  /** Settles with the first look at every book's file: a CliError when one (of several: every one) cannot be served. */
  ready: Promise<void>;
  /** Every request of the listener. */
  handler: RequestListener;
  /** Hears, from the access log's one 'close' listener, that a response of `handler` closed: one request fewer in flight. */
  closed(res: ServerResponse): void;
  /** Calls `then` once no request of a book is in flight (at once, if none is): a worker's stop waits for its cut requests' lines. */
  afterRequests(then: () => void): void;
  /** The books served now, in the file's order. */
  books(): readonly BookView[];
  /**
   * Serves `books` from now on for `credentials`: new and changed books are built first (a CliError then, and nothing
   * has changed), then the table is swapped; books that left are closed once their requests have ended. Returns what
   * changed, for the log. One at a time: a call while another runs throws (the caller waits for the first).
   */
  reload(books: readonly BookConfig[], credentials: readonly Credentials[]): Promise<string>;
  /** A stop began: the books a reload opens are closed, unsaid, and no reload serves them or starts again. */
  dropReloads(): void;
  close(): void;
}

export interface BookServiceParts {
  /**
   * How a book's file becomes its handler, for its users as they are when it is built (a replaced file is built anew,
   * after a SIGHUP may have changed them); `recognised` hears the mapping found.
   */
  build(book: BookConfig, users: () => readonly Credentials[], recognised: (app: string) => void): BuildHandler;
  /** The handler for paths that name no book: every user of a book, created with `basePath`, one of the books'. */
  fallback(basePath: string, credentials: readonly Credentials[]): RequestListener;
  log(line: string, level: Exclude<LogLevel, 'info'>): void;
  logError: ErrorHook;
  /** How long an open of a book's file, and a search run in a guard process, may take (bin/books/database.ts). */
  limitMs?: number;
  /** SQLite's page cache of each book's connection, in KiB (BOOK_CACHE_KIB); `undefined`: SQLite's default. */
  cacheKiB?: number | undefined;
  /** The database of a book without a file (the demo's, in memory). */
  memory?: Database.Database | undefined;
  /** The books are a running service's (a worker in place of another): one whose file cannot be served is said, as of several. */
  joins?: boolean;
}

/** A book's file, watched (bin/books/database.ts) and served for its users, its requests counted. */
interface WatchedBook {
  config: BookConfig;
  users: readonly Credentials[];
  database: ServedDatabase;
  /** The mapping served, once the file was read. */
  app: string | undefined;
  inFlight: number;
  retired: boolean;
  /** A retired book's last moment for its requests in flight: SIGTERM's grace (inFlightGraceMs). */
  grace: NodeJS.Timeout | undefined;
  handler: RequestListener;
  view: BookView;
  /** When a reload last took its last user in the credentials, or gave it one back. */
  usersSince?: number;
}

/** What serveBooks holds: the books served now, in the file's order, and their table. */
interface Shelf {
  readonly parts: BookServiceParts;
  running: WatchedBook[];
  /** Every user of a book: the fallback's (usersOfAny). */
  everyone: readonly Credentials[];
  table: RequestListener;
  /** The books a reload opens, by name, until they serve; `undefined`: no reload runs. */
  opening?: Map<string, WatchedBook> | undefined;
  /** A stop began (dropReloads). */
  dropped?: true;
  /** The requests in flight of every book, retired ones too, and who waits for none (afterRequests). */
  inFlight: number;
  idle?: (() => void) | undefined;
}

export function serveBooks(
  configs: readonly BookConfig[],
  credentials: readonly Credentials[],
  parts: BookServiceParts,
): BookService {
  const everyone = usersOfAny(configs, credentials);
  const shelf: Shelf = { parts, running: [], everyone, table: () => {}, inFlight: 0 };
  // Of several, a book whose file cannot be served starts unavailable, as while running (firstLooks).
  const several = !parts.joins && configs.length > 1;
  const first = several || parts.joins ? 'joins' : 'start';
  try {
    for (const config of configs) shelf.running.push(watchBook(shelf, config, usersOf(config, credentials), first));
  } catch (error: unknown) {
    for (const book of shelf.running) book.database.close();
    throw error;
  }
  mount(shelf);
  return {
    ready: firstLooks(shelf.running, parts.joins === true ? undefined : { several }),
    handler: (req: IncomingMessage, res) => shelf.table(req, res),
    closed: (res) => closed(shelf, res),
    afterRequests(then) {
      shelf.idle = shelf.inFlight === 0 ? void then() : then;
    },
    books: () => shelf.running.map((book) => book.view),
    async reload(configs, credentials) {
      // Two at once would each diff against the books before both: the slower would undo the faster.
      if (shelf.opening) throw new Error('serveBooks: reload() called while another reload runs; wait for it');
      if (shelf.dropped) throw new CliError('the service is stopping');
      shelf.opening = new Map();
      try {
        return await apply(shelf, shelf.opening, configs, credentials);
      } finally {
        shelf.opening = undefined;
      }
    },
    dropReloads: () => dropReloads(shelf),
    close() {
      dropReloads(shelf);
      for (const book of shelf.running) book.database.close();
    },
  };
}

function dropReloads(shelf: Shelf): void {
  shelf.dropped = true;
  for (const book of shelf.opening?.values() ?? []) book.database.close();
}

/** `config`'s file, watched and served for `users` (bin/books/database.ts), its requests counted. */
function watchBook(shelf: Shelf, config: BookConfig, users: readonly Credentials[], first: First): WatchedBook {
  const { parts } = shelf;
  const { cacheKiB, limitMs } = parts;
  const book: Partial<WatchedBook> & Pick<WatchedBook, 'inFlight'> = { inFlight: 0, retired: false, grace: undefined };
  // The caller says it when a replaced file is recognised as another application's.
  const build = parts.build(
    config,
    () => book.users ?? users,
    (app) => {
      book.app = app;
    },
  );
  const database =
    config.db === undefined && parts.memory !== undefined
      ? inMemoryDatabase(parts.memory, build, parts.logError)
      : watchDatabase(config.db ?? '', config, build, parts.log, parts.logError, { cacheKiB, limitMs, first });
  const whole = book as WatchedBook;
  Object.assign(whole, {
    config,
    users,
    database,
    handler: countInFlight(whole, shelf),
    view: {
      name: config.name,
      basePath: config.basePath,
      db: config.db,
      status: (): BookStatus => {
        const status = { ...database.status(), app: whole.app ?? whole.config.app };
        // Its state began when its file's did, or when a reload took its last user or gave it one.
        const since = Math.max(status.since, whole.usersSince ?? 0);
        return { ...status, ...userless(whole.config, whole.users), since };
      },
    },
  });
  return whole;
}

// A response's book, until it closes (`closed`): a book puts no listener of its own on a response.
const BOOK = Symbol('the book of a response');
type Counted = ServerResponse & { [BOOK]?: WatchedBook };

/** The book's handler, counting its requests, and the shelf's, until their responses close (`closed`). */
function countInFlight(book: WatchedBook, shelf: Shelf): RequestListener {
  return (req, res) => {
    book.inFlight += 1;
    shelf.inFlight += 1;
    (res as Counted)[BOOK] = book;
    book.database.handler(req, res);
  };
}

function closed(shelf: Shelf, res: ServerResponse): void {
  const book = (res as Counted)[BOOK];
  if (book === undefined) return;
  book.inFlight -= 1;
  shelf.inFlight -= 1;
  if (book.retired && book.inFlight === 0) closeBook(book);
  if (shelf.inFlight > 0) return;
  const idle = shelf.idle;
  shelf.idle = undefined;
  idle?.();
}

/** Out of the table already: closed now, or when its last request has ended (at most SIGTERM's grace, `limitMs`'s). */
function retire(book: WatchedBook, limitMs = GUARD_LIMIT_MS): void {
  book.retired = true;
  if (book.inFlight === 0) return closeBook(book);
  book.grace = setTimeout(() => closeBook(book), inFlightGraceMs(limitMs)).unref();
}

/** Closes what a retired book holds: its database (connection, watch, guard) and its grace timer. */
function closeBook(book: WatchedBook): void {
  clearTimeout(book.grace);
  book.grace = undefined;
  book.database.close();
}

/** The table of the books served now, and the fallback for every other path. */
function mount(shelf: Shelf): void {
  const first = shelf.running[0]?.config.basePath ?? '';
  shelf.table = mountHandlers(
    shelf.running.map((book) => ({ basePath: book.config.basePath, handler: book.handler })),
    // Created with one of the books' base paths, so that its own two paths never reach it.
    shelf.parts.fallback(first, orNobody(shelf.everyone)),
  );
}

/** A reload: what is new built first, then the table swapped, then what left retired. Returns what changed. */
async function apply(
  shelf: Shelf,
  opened: Map<string, WatchedBook>,
  configs: readonly BookConfig[],
  credentials: readonly Credentials[],
): Promise<string> {
  const change = diffBooks(
    shelf.running.map((book) => book.config),
    configs,
  );
  const byName = new Map(shelf.running.map((book) => [book.config.name, book]));
  try {
    for (const config of [...change.added, ...change.replaced.map(({ after }) => after)]) {
      opened.set(config.name, watchBook(shelf, config, usersOf(config, credentials), 'reload'));
    }
  } catch (error: unknown) {
    for (const book of opened.values()) book.database.close();
    throw error;
  }
  await firstLooks([...opened.values()]);
  // A stop came meanwhile: dropReloads closed what was opened (this reload's books), and nothing changes.
  if (shelf.dropped) throw new CliError('the service is stopping');
  const renewed: string[] = [];
  shelf.running = configs.map((config) => {
    const fresh = opened.get(config.name);
    if (fresh !== undefined) return fresh;
    const book = byName.get(config.name) as WatchedBook;
    const users = usersOf(config, credentials);
    // A book whose own users changed takes them; what it verified of a user kept as it was stays.
    const was = userless(book.config, book.users) !== undefined;
    if (!sameCredentials(book.users, users)) {
      book.database.updateCredentials(orNobody(users));
      book.users = users;
      renewed.push(config.name);
    }
    book.config = config;
    if ((userless(config, users) !== undefined) !== was) book.usersSince = Date.now();
    return book;
  });
  shelf.everyone = usersOfAny(configs, credentials);
  mount(shelf);
  for (const { name } of [...change.removed, ...change.replaced.map(({ before }) => before)]) {
    retire(byName.get(name) as WatchedBook, shelf.parts.limitMs);
  }
  return describeChange(change, renewed, configs.length);
}
