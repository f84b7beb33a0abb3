// Serving: this process's part (the only process, the primary of --workers, or a worker).
// Every configuration is books served the same way (bin/books/serve-books.ts): the one of
// --db or --demo, or the sections of --config; SIGHUP reads the command again and serves
// what it says. The handlers are bin/serve/handlers.ts, the listener bin/serve/listener.ts,
// what the service says bin/serve/greeting.ts.

import cluster from 'node:cluster';
import { describeError } from '../../lib/internal.js';
import { CliError, errorLineTemplate, logInfo, logLine, NAME, readVersion, setLogFormat } from '../base/index.js';
import {
  BOOK_CACHE_KIB,
  type BookService,
  createDemoDatabase,
  preflightDatabaseFile,
  serveBooks,
  usersOf,
} from '../books/index.js';
import { type Role, reportListening, superviseWorkers } from '../cluster/index.js';
import type { BookConfig, ConfigFile } from '../config/index.js';
import {
  BOOK_SETTINGS,
  CONFIGURABLE,
  camel,
  readApp,
  readCredentialsFile,
  readTableNames,
  resolveBooks,
  SETTINGS,
  type ServeCommand,
} from '../config/index.js';
import { prepareSocketPath, useSocketMode } from '../listen/index.js';
import { greeting, recognition, warnAboutPlainHttp, warnAboutSetup } from './greeting.js';
import { fallbackHandler, handlerFor, logError, sharedParts, throttleAuthority } from './handlers.js';
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

/**
 * Opens, checks and serves the configuration's books: the one of --db or --demo, or the
 * `[book NAME]` sections of --config. SIGHUP reads the command again and serves what it
 * says (bin/books/serve-books.ts, reload). Returns the lines that tell the user where and what.
 */
async function serve(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  reread: () => ServeCommand,
): Promise<string[]> {
  // Without an app, a book's start line names the application its tables were recognised
  // as; recognised later (the file was waited for, replaced, or added by SIGHUP), a line
  // says so then.
  const recognised = new Map<string, string>();
  let greeted = false;
  const shared = sharedParts(command, role);
  const demo = command.settings.demo ? createDemoDatabase() : undefined;
  const service: BookService = serveBooks(command.books, command.credentials, {
    build: (book, users, heard) =>
      handlerFor(
        command,
        book,
        users,
        (app) => {
          heard(app);
          if (greeted && recognised.get(book.name) !== app)
            logInfo([`${bookLabel(command, book)}: ${recognition(app)}`]);
          recognised.set(book.name, app);
        },
        shared,
      ),
    fallback: (basePath, credentials) => fallbackHandler(command, basePath, credentials, shared),
    log: logLine,
    logError,
    limitMs: command.timeouts.searchMs,
    // One book keeps SQLite's own page cache; a file's books share the memory (BOOK_CACHE_KIB).
    cacheKiB: servesFileBooks(command) ? BOOK_CACHE_KIB : undefined,
    memory: demo?.db,
  });
  await service.ready;
  const { server, adminLines } = await listenFor(
    command,
    role,
    shared.metrics,
    service.handler,
    service.close,
    service.books,
    () => shared.hashChecks?.stop(),
  );
  reloadOnHangup(
    command,
    server,
    inTurn(() => reload(command, service, reread)),
  );
  stopOnBugs();
  watchEventLoop(command);
  warnAboutPlainHttp(command);
  greeted = true;
  return greeting(command, server, adminLines, demo, recognised);
}

/** How the log names a book: its section's name, or the file of --db. */
function bookLabel(command: ServeCommand, book: BookConfig): string {
  return servesFileBooks(command) ? `book ${book.name}` : (book.db ?? book.name);
}

/**
 * SIGHUP: the command read again (the configuration file, the credentials file) and its
 * books served; when something cannot be used, everything is kept and one line says why.
 */
async function reload(command: ServeCommand, service: BookService, reread: () => ServeCommand): Promise<void> {
  try {
    const next = reread();
    const changed = settingsChanged(command, next);
    // The book of --db (or of a file without sections) is named by --name, which takes
    // effect at the next start, as every setting of the service does.
    const keep = (book: BookConfig): BookConfig => ({ ...book, name: command.settings.name });
    const books = servesFileBooks(next) ? next.books : next.books.map(keep);
    const summary = await service.reload(books, next.credentials);
    command.credentials = next.credentials;
    command.books = books;
    logLine(`SIGHUP: ${reloaded(command, summary)}`, 'notice');
    if (changed.length > 0) {
      logLine(`SIGHUP: ${changed.join(', ')} changed; that takes effect at the next start`, 'warning');
    }
  } catch (error: unknown) {
    const why = error instanceof CliError ? error.message : describeError(error);
    const kept = command.config === undefined ? 'the old credentials' : 'the running configuration';
    logLine(`SIGHUP: keeping ${kept}: ${why}`, 'warning');
  }
}

/**
 * `run` for each call, one at a time. A call while it runs (two `systemctl reload` in a
 * row) makes it run once more when it ends, however many calls came meanwhile: that run
 * reads the files as they are then, so the last signal's files are always what is applied,
 * and a book is never opened by two reloads at once.
 */
function inTurn(run: () => Promise<void>): () => void {
  let running = false;
  let wanted = false;
  const turns = async (): Promise<void> => {
    running = true;
    try {
      do {
        wanted = false;
        await run();
      } while (wanted);
    } finally {
      running = false;
    }
  };
  return () => {
    if (running) wanted = true;
    else void turns();
  };
}

/** What a reload read and applied, for its line in the log. */
function reloaded(command: ServeCommand, summary: string): string {
  if (command.config !== undefined) return `configuration re-read from ${command.config.file}: ${summary}`;
  const file = command.credentialsFile;
  if (file !== undefined) return `credentials re-read from ${file}: ${command.credentials.length} user(s)`;
  return `credentials come from the ${command.credentialsFrom}; nothing to re-read`;
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
