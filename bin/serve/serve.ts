// Serving: this process's part (the only process, the primary of --workers, or a worker),
// the books and their handlers (one login throttle and one bound on hash checks for all of
// them), SIGHUP's re-reading of the credentials or the configuration file. The listener is
// bin/serve/listener.ts, what the service says bin/serve/greeting.ts.

import cluster from 'node:cluster';
import type { IncomingMessage } from 'node:http';
import type Database from 'better-sqlite3';
import { createHandler, type HandlerOptions, type RequestHandler } from '../../lib/index.js';
import {
  countSearchWait,
  createHandlerOver,
  createHashChecks,
  createMetrics,
  createThrottle,
  describeError,
  pathForLog,
  resolveOptions,
  type SharedParts,
} from '../../lib/internal.js';
import { CliError, errorLineTemplate, logInfo, logLine, NAME, readVersion, setLogFormat } from '../base/index.js';
import type { ServedBook } from '../books/index.js';
import {
  type BookService,
  type BuildHandler,
  createDemoDatabase,
  createEmptyBook,
  inMemoryDatabase,
  preflightDatabaseFile,
  serveBooks,
  usersOf,
  watchDatabase,
} from '../books/index.js';
import {
  createThrottleAuthority,
  createThrottleReplica,
  primaryChannel,
  type Role,
  reportListening,
  superviseWorkers,
  type ThrottleAuthority,
} from '../cluster/index.js';
import type { BookConfig, ConfigFile } from '../config/index.js';
import {
  BOOK_SETTINGS,
  CONFIGURABLE,
  camel,
  handlerOptions,
  readApp,
  readCredentialsFile,
  readTableNames,
  resolveBooks,
  SETTINGS,
  type ServeCommand,
} from '../config/index.js';
import { prepareSocketPath, useSocketMode } from '../listen/index.js';
import { greeting, listeningAt, recognition, warnAboutPlainHttp, warnAboutSetup } from './greeting.js';
import { listenFor, reloadOnHangup, stopOnBugs } from './listener.js';
import { startWatchdog } from './watchdog.js';

/**
 * `--db FILE`, `--demo` or `--config FILE`: served by this process, or with --workers by
 * the workers that this process, their primary, supervises (bin/cluster/workers.ts).
 */
export async function runServe(command: ServeCommand, reread: () => ServeCommand): Promise<void> {
  completeCommand(command);
  setLogFormat(command.settings.logFormat);
  const role: Role = cluster.isWorker ? 'worker' : command.settings.workers > 1 ? 'primary' : 'single';
  if (command.socket !== undefined) useSocketMode(command.socket.mode);
  // --admin-socket alone: --socket-mode's default (660) with the service's own group,
  // whatever the umask (with 022 its group could not connect), as docs/API.md says.
  else if (command.admin !== undefined && 'socket' in command.admin) useSocketMode(SETTINGS['socket-mode'].default);
  // Said once: by the only process, or by the primary for all its workers.
  if (role !== 'worker') warnAboutSetup(command);
  if (role === 'primary') {
    return superviseWorkers(command, () => judgeOnce(command), readVersion(), throttleAuthority(command));
  }
  const lines = await serve(command, role, () => completeCommand(reread()));
  if (role === 'worker') reportListening(lines);
  else logInfo(lines);
}

/**
 * In the primary of --workers: the file is judged once, so that a problem is said once, not
 * by every worker. Not the books of a configuration file: judging 100 books here and again
 * in each worker would triple the start; the first worker that fails says why, once, and
 * the service ends (bin/cluster/workers.ts).
 */
async function judgeOnce(command: ServeCommand): Promise<void> {
  const books = servesFileBooks(command) ? [] : command.books;
  for (const book of books) {
    if (book.db === undefined) continue;
    const users = () => usersOf(book, command.credentials);
    await preflightDatabaseFile(
      book.db,
      book,
      handlerFor(command, book, users, () => {}),
    );
  }
  if (command.socket !== undefined) await prepareSocketPath(command.socket.path);
}

/** Reads what the command names but does not hold yet: the credentials file, then the file's books. */
function completeCommand(command: ServeCommand): ServeCommand {
  if (command.credentialsFile !== undefined) command.credentials = readCredentialsFile(command.credentialsFile);
  if (servesFileBooks(command)) {
    command.books = resolveBooks(
      command.config,
      command.credentials,
      { readApp, readTableNames },
      command.credentialsSource,
    );
  }
  return command;
}

/** Whether the books are a configuration file's `[book NAME]` sections. */
function servesFileBooks(command: ServeCommand): command is ServeCommand & { config: ConfigFile } {
  return command.config !== undefined && command.config.books.length > 0;
}

/** Opens, checks and serves; returns the lines that tell the user where and what. */
async function serve(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  reread: () => ServeCommand,
): Promise<string[]> {
  if (servesFileBooks(command)) return serveFileBooks(command, role, reread);
  // SIGHUP gives the new credentials to every handler that answers (the file's and the
  // stand-in's while the file cannot be served), and `command` keeps them for the next one.
  // Without --app, the start line names an application's file recognised by its tables;
  // recognised later (the file was waited for, or replaced), a line says so then.
  let recognised: string | undefined;
  let greeted = false;
  const book = command.books[0] as BookConfig;
  const shared = sharedParts(command, role);
  const build: BuildHandler = handlerFor(
    command,
    book,
    () => command.credentials,
    (app) => {
      if (greeted && app !== recognised && command.settings.db !== undefined)
        logInfo([`${command.settings.db}: ${recognition(app)}`]);
      recognised = app;
    },
    shared,
  );
  const demo = command.settings.demo ? createDemoDatabase() : undefined;
  const database =
    demo === undefined
      ? watchDatabase(command.settings.db ?? '', book, build, logLine, logError, {
          limitMs: command.timeouts.searchMs,
        })
      : inMemoryDatabase(demo.db, build, logError);
  try {
    await database.ready;
  } catch (error: unknown) {
    database.close();
    throw error;
  }

  const served: ServedBook = {
    name: command.settings.name ?? NAME,
    basePath: command.settings.basePath,
    db: command.settings.db,
    status: () => ({ ...database.status(), app: command.app ?? recognised }),
  };
  const { server, adminLines } = await listenFor(
    command,
    role,
    shared.metrics,
    database.handler,
    database.close,
    () => [served],
  );
  reloadOnHangup(command, server, () => {
    const file = command.credentialsFile;
    if (file === undefined) {
      logLine(`SIGHUP: credentials come from the ${command.credentialsFrom}; nothing to re-read`, 'notice');
      return;
    }
    try {
      const credentials = readCredentialsFile(file);
      database.updateCredentials(credentials);
      command.credentials = credentials;
      logLine(`SIGHUP: credentials re-read from ${file}: ${credentials.length} user(s)`, 'notice');
    } catch (error: unknown) {
      const why = error instanceof CliError ? error.message : describeError(error);
      logLine(`SIGHUP: keeping the old credentials: ${why}`, 'warning');
    }
  });
  stopOnBugs();
  watchEventLoop(command);

  warnAboutPlainHttp(command);
  greeted = true;
  const lines = greeting(command, server, demo, recognised);
  lines.splice(1, 0, ...adminLines);
  return lines;
}

/**
 * The books of the configuration file, served; SIGHUP reads the file (and the credentials)
 * again and serves what it says, or keeps everything and says why in one line.
 */
async function serveFileBooks(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  reread: () => ServeCommand,
): Promise<string[]> {
  const recognised = new Map<string, string>();
  let greeted = false;
  const shared = sharedParts(command, role);
  const service: BookService = serveBooks(command.books, command.credentials, {
    build: (book, users, heard) =>
      handlerFor(
        command,
        book,
        users,
        (app) => {
          heard(app);
          const before = recognised.get(book.name);
          if (greeted && before !== undefined && before !== app) logInfo([`book ${book.name}: ${recognition(app)}`]);
          recognised.set(book.name, app);
        },
        shared,
      ),
    fallback: (basePath, credentials) => fallbackHandler(command, basePath, credentials, shared),
    log: logLine,
    logError,
    limitMs: command.timeouts.searchMs,
  });
  await service.ready;
  const { server, adminLines } = await listenFor(
    command,
    role,
    shared.metrics,
    service.handler,
    service.close,
    service.books,
  );
  const file = command.config?.file;
  reloadOnHangup(command, server, async () => {
    try {
      const next = reread();
      const changed = settingsChanged(command, next);
      const summary = await service.reload(next.books, next.credentials);
      command.credentials = next.credentials;
      command.books = next.books;
      logLine(`SIGHUP: configuration re-read from ${file}: ${summary}`, 'notice');
      if (changed.length > 0) {
        logLine(`SIGHUP: ${changed.join(', ')} changed; that takes effect at the next start`, 'warning');
      }
    } catch (error: unknown) {
      const why = error instanceof CliError ? error.message : describeError(error);
      logLine(`SIGHUP: keeping the running configuration: ${why}`, 'warning');
    }
  });
  stopOnBugs();
  watchEventLoop(command);
  warnAboutPlainHttp(command);
  greeted = true;
  const origin = listeningAt(command, server);
  return [
    `${NAME} listening on ${origin}/ (${command.books.length} book${command.books.length === 1 ? '' : 's'} from ${file})`,
    ...adminLines,
    ...command.books.map((book) => {
      const app = recognised.get(book.name);
      const how = book.app === undefined && app !== undefined && app !== 'own' ? `; ${recognition(app)}` : '';
      return `book ${book.name}: ${origin}${book.basePath}/api/v1/ (${book.db}${how})`;
    }),
  ];
}

/** The service's settings that only a new start takes (as the file names them): everything but the books and the credentials. */
function settingsChanged(running: ServeCommand, next: ServeCommand): string[] {
  return CONFIGURABLE.map(([key]) => key).filter(
    (key) =>
      !BOOK_SETTINGS.includes(key) &&
      JSON.stringify(running.settings[camel(key)]) !== JSON.stringify(next.settings[camel(key)]),
  );
}

/**
 * The answer for a path that names no book (docs/API.md, Books): a login with any user of
 * the service, then 404. A handler over an empty in-memory book, created with `basePath`,
 * one of the books', so that its own two paths always go to that book instead.
 */
function fallbackHandler(
  command: ServeCommand,
  basePath: string,
  credentials: readonly ServeCommand['credentials'][number][],
  shared: SharedParts,
): RequestHandler {
  const db = emptyBook();
  return createHandler(
    db,
    [...credentials],
    {
      ...serviceOptions(command),
      basePath,
      serviceName: command.settings.name,
      onError: logError,
    },
    shared,
  );
}

let emptyDatabase: Database.Database | undefined;
/** One in-memory database with the own schema and no booking, for every fallback. */
function emptyBook(): Database.Database {
  emptyDatabase ??= createEmptyBook();
  return emptyDatabase;
}

/**
 * How this command turns `book`'s database into its handler for `users`. Without an app,
 * the file's tables say whose they are (`recognised` hears it), as `check` recognises them.
 * A book of the configuration file is named in /status and the realm by its name.
 */
function handlerFor(
  command: ServeCommand,
  book: BookConfig,
  users: () => readonly ServeCommand['credentials'][number][],
  recognised: (app: string) => void,
  shared: SharedParts = {},
): BuildHandler {
  const fromFile = servesFileBooks(command);
  const handler: BuildHandler = (search, app, onError, standIn = false) => {
    // The stand-in that answers while the file cannot be served says no application.
    if (!standIn && book.app === undefined) recognised(app);
    const options = {
      ...serviceOptions(command),
      basePath: book.basePath,
      serviceName: fromFile ? book.name : command.settings.name,
      onError,
    };
    return createHandlerOver(search, [...users()], resolveOptions(options), shared);
  };
  const { metrics } = shared;
  if (metrics !== undefined) handler.waited = (seconds) => countSearchWait(metrics, seconds);
  return handler;
}

/**
 * What every handler of this process shares (lib/handler.ts, SharedParts): one login
 * throttle, so that its budgets hold for the service as a whole, across books, a file's
 * replacements and, with --workers, the workers (the counts in the primary,
 * bin/cluster/shared-throttle.ts); one bound on password-hash checks; and, with an admin
 * listener, where they count for /metrics.
 */
function sharedParts(command: ServeCommand, role: Exclude<Role, 'primary'>): SharedParts {
  const metrics = command.admin === undefined ? undefined : createMetrics();
  const settings = resolveOptions(serviceOptions(command));
  const throttle =
    role === 'worker' ? createThrottleReplica(primaryChannel(), settings, metrics) : createThrottle(settings, metrics);
  // One bound on password-hash checks for all books: a flood of wrong passwords spread over
  // them takes no more of the machine than one book's would.
  const hashChecks = createHashChecks(settings, metrics);
  return metrics === undefined ? { throttle, hashChecks } : { throttle, hashChecks, metrics };
}

/** In the primary of --workers: the throttle's counts, for every worker (bin/cluster/shared-throttle.ts). */
function throttleAuthority(command: ServeCommand): ThrottleAuthority {
  const settings = resolveOptions(serviceOptions(command));
  return createThrottleAuthority(createThrottle(settings), settings.maxTrackedAddresses);
}

/** The options every handler of the service shares: the throttle's limits, proxies, CORS (bin/config/settings.ts says which). */
function serviceOptions(command: ServeCommand): HandlerOptions {
  return { ...handlerOptions(command.settings), trustProxy: command.trustProxy };
}

function logError(error: unknown, req: IncomingMessage): void {
  const path = pathForLog(req.url ?? '');
  logLine(`error in ${req.method} ${path}: ${describeError(error)}`);
}

/**
 * The last resort (bin/serve/watchdog.ts): a process whose event loop has not turned for six
 * times --search-timeout (a statement or an open inside SQLite that does not return, which
 * no signal interrupts) is ended with one line, so that systemd, or the primary of
 * --workers, starts it again and SIGTERM never waits for ever.
 */
function watchEventLoop(command: ServeCommand): void {
  const limitMs = 6 * command.timeouts.searchMs;
  startWatchdog(
    limitMs,
    errorLineTemplate(
      `${NAME}: the event loop has not turned for {seconds} s (a statement or an open of a database file inside SQLite that does not return); ending this process (SIGKILL) so that it is started again`,
    ),
  );
}
