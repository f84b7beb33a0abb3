// Serving: this process's part (the only process, the primary of --workers, or a worker).
// Every configuration is books served the same way (bin/books/serve-books.ts): the one of
// --db or --demo, or the sections of --config; SIGHUP reads the command again and serves
// what it says. The handlers are bin/serve/handlers.ts, the listener bin/serve/listener.ts,
// what the service says bin/serve/greeting.ts.

import cluster from 'node:cluster';
import type { Server } from 'node:http';
import {
  errorLineTemplate,
  inTurn,
  isStopping,
  logError,
  logInfo,
  logLine,
  NAME,
  onReloadSignal,
  type ReloadTrigger,
  readVersion,
  setLogFormat,
  startLastResort,
  stopOnBugs,
} from '../base/index.js';
import {
  BOOK_CACHE_KIB,
  type BookService,
  createDemoDatabase,
  preflightDatabaseFile,
  serveBooks,
} from '../books/index.js';
import {
  answerReloads as answerPrimaryReloads,
  logSaid,
  primaryChannel,
  type Role,
  reportListening,
  type SaidLine,
  superviseWorkers,
} from '../cluster/index.js';
import type { BookConfig, Reread } from '../config/index.js';
import {
  readApp,
  readCredentialsFile,
  readTableNames,
  resolveBooks,
  SETTINGS,
  type ServeCommand,
  stuckLimitMs,
  usersOf,
} from '../config/index.js';
import { prepareSocketPath, useSocketMode } from '../listen/index.js';
import { greeting, recognition, warnAboutSetup } from './greeting.js';
import { fallbackHandler, handlerFor, sharedParts } from './handlers.js';
import { listenFor, rereadTls } from './listener.js';
import { readAsReload, reload, type Say, servesFileBooks } from './reload.js';

/**
 * `--db FILE`, `--demo` or `--config FILE`: served by this process, or with --workers by
 * the workers that this process, their primary, supervises (bin/cluster/workers.ts).
 * `replacement`: a worker started in place of another, `command` its primary's, whose
 * books and credentials it reads as a reload does.
 */
export async function runServe(command: ServeCommand, reread: Reread, replacement = false): Promise<void> {
  const rereadWhole: Reread = (file) => completeCommand(reread(file));
  if (replacement) {
    const { next, books } = readAsReload(command, rereadWhole);
    command.credentials = next.credentials;
    command.books = books;
  } else completeCommand(command);
  setLogFormat(command.settings.logFormat);
  const role: Role = cluster.isWorker ? 'worker' : command.settings.workers > 1 ? 'primary' : 'single';
  if (command.socket !== undefined) useSocketMode(command.socket.mode);
  // --admin-socket alone: --socket-mode's default (660) with the service's own group,
  // whatever the umask (with 022 its group could not connect), as docs/API.md says.
  else if (command.admin !== undefined && 'socket' in command.admin) useSocketMode(SETTINGS['socket-mode'].default);
  // Said once: by the only process, or by the primary for all its workers.
  if (role !== 'worker') warnAboutSetup(command);
  if (role === 'primary') {
    return superviseWorkers(command, () => judgeOnce(command), readVersion());
  }
  const lines = await serve(command, role, rereadWhole, replacement);
  if (role === 'worker') reportListening(lines);
  else logInfo(lines);
}

/**
 * In the primary of --workers: the file is judged once, so that a file that cannot be served
 * is refused once, not by every worker (one that cannot be read now each worker says, as it
 * waits for it: bin/books/preflight.ts). Not the books of a configuration file: judging 100 books here and again
 * in each worker would triple the start; the first worker that fails says why, once, and
 * the service ends (bin/cluster/workers.ts).
 */
async function judgeOnce(command: ServeCommand): Promise<void> {
  const books = servesFileBooks(command) ? [] : command.books;
  for (const book of books) {
    if (book.db === undefined) continue;
    const users = () => usersOf(book, command.credentials);
    const build = handlerFor(command, book, users, () => {});
    await preflightDatabaseFile(book.db, book, build, command.timeouts.searchMs);
  }
  if (command.socket !== undefined) await prepareSocketPath(command.socket.path);
}

/** Reads what the command names but does not hold yet: the credentials file, then the file's books. */
function completeCommand(command: ServeCommand): ServeCommand {
  // On a reload, the running file, which a new path in the configuration does not replace.
  const { credentialsFile: file, settings } = command;
  if (file !== undefined) command.credentials = readCredentialsFile(file, { named: settings.credentialsFile });
  if (servesFileBooks(command)) {
    const readers = { readApp, readTableNames };
    const resolved = resolveBooks(command.config, command.credentials, readers, command.credentialsSource);
    command.books = resolved.books;
    command.bookWarnings = resolved.warnings;
  }
  return command;
}

/**
 * Opens, checks and serves the configuration's books: the one of --db or --demo, or the
 * `[book NAME]` sections of --config. SIGHUP reads the command again and serves what it
 * says (bin/books/serve-books.ts, reload). Returns the lines that tell the user where and what.
 */
async function serve(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  reread: Reread,
  replacement: boolean,
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
          const said = greeted ? recognition(book, app, recognised.get(book.name)) : undefined;
          if (said !== undefined) logInfo([`${bookLabel(command, book)}: ${said}`]);
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
    // A worker in place of another serves the books as they are, as the other workers do.
    joins: replacement,
  });
  await service.ready;
  const { server, adminLines } = await listenFor(command, role, shared.metrics, service, () =>
    shared.hashChecks?.stop(),
  );
  answerReloads(command, service, server, reread, role);
  stopOnBugs();
  watchEventLoop(command);
  greeted = true;
  return greeting(command, server, adminLines, demo, recognised);
}

/**
 * SIGHUP and POST /-/reload (docs/operations.md, Signals; Adding and removing books): the
 * TLS certificate and key read again, then the command and its books (bin/serve/reload.ts),
 * one reload at a time, which says its lines itself. With --workers the primary hears the
 * signal, asks each worker and says the outcome once, for all (bin/cluster/reload-workers.ts).
 */
function answerReloads(
  command: ServeCommand,
  service: BookService,
  server: Server,
  reread: Reread,
  role: Exclude<Role, 'primary'>,
): void {
  const reloadTurn = inTurn(async (by: ReloadTrigger): Promise<SaidLine[]> => {
    const lines: SaidLine[] = [];
    const say: Say = (text, level) => void lines.push({ text, level });
    const tlsApplied = command.tls === undefined || rereadTls(command.tls, server, by, say);
    await reload(command, service, server, reread, by, tlsApplied, say);
    return lines;
  });
  // A worker's own SIGHUP (a signal to the service's process group: a closed terminal,
  // `systemctl kill -s HUP`) is held (holdReloads) and no more: the primary heard it too.
  if (role === 'worker') answerPrimaryReloads(primaryChannel(), reloadTurn);
  else onReloadSignal((by) => void reloadTurn(by).then((lines) => isStopping() || logSaid(lines)));
}

/** How the log names a book: its section's name, or the file of --db. */
function bookLabel(command: ServeCommand, book: BookConfig): string {
  return servesFileBooks(command) ? `book ${book.name}` : (book.db ?? book.name);
}

/**
 * The last resort (bin/base/last-resort.ts): a process whose event loop has not turned for six
 * times --search-timeout (a statement or an open inside SQLite that does not return, which
 * no signal interrupts) is ended with one line, so that systemd, or the primary of
 * --workers, starts it again and SIGTERM never waits for ever.
 */
function watchEventLoop(command: ServeCommand): void {
  const limitMs = stuckLimitMs(command.timeouts.searchMs);
  const template = errorLineTemplate(
    `${NAME}: the event loop has not turned for {seconds} s (a statement or an open of a database file inside SQLite that does not return); ending this process (SIGKILL) so that it is started again`,
  );
  startLastResort({ stuck: { limitMs, template } });
}
