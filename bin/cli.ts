// The launcher: reads argv and the environment, opens the database read-only, creates
// the server and listens. Every failure ends in one line on stderr and a non-zero exit.

import cluster from 'node:cluster';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler, type HandlerOptions, type RequestHandler } from '../lib/index.js';
import {
  canonicalAddress,
  countSearchWait,
  createHandlerOver,
  createHashChecks,
  createMetrics,
  createThrottle,
  describeError,
  errorCode,
  findApplication,
  type Metrics,
  pathForLog,
  resolveOptions,
  type SharedParts,
} from '../lib/internal.js';
import { listenAdmin } from './admin.js';
import {
  CONFIG_KEYS,
  CONFIGURABLE,
  configFlag,
  isLoopback,
  parseCommandLine,
  readApp,
  type ServeCommand,
  USAGE,
} from './args.js';
import type { BookConfig, ServedBook } from './books.js';
import { checkInGuard, reportOnBooks } from './check.js';
import { type ConfigFile, readConfigFile } from './config-file.js';
import { BOOK_SETTINGS, configPath, resolveBooks } from './configuration.js';
import { readCredentialsFile } from './credentials.js';
import { type BuildHandler, inMemoryDatabase, preflightDatabaseFile, watchDatabase } from './database.js';
import { createDemoDatabase, createEmptyBook, type DemoDatabase } from './demo.js';
import { CliError, describeFsError } from './errors.js';
import { ensureOnlyOwnerCanChange, readableByEveryone } from './file-safety.js';
import { runHashPassword } from './hash-password.js';
import { errorLineTemplate, logInfo, logLine, setLogFormat, withAccessLog } from './log.js';
import { answersOfProcess, countAnswers, reportToPrimary, type ServingProcess } from './monitoring.js';
import { closeStalledConnections } from './send-timeout.js';
import { type BookService, serveBooks, usersOf } from './serve-books.js';
import { camel, handlerOptions, readTableNames } from './settings.js';
import { createThrottleAuthority, createThrottleReplica, type ThrottleAuthority } from './shared-throttle.js';
import { applySocketGroup, letsEveryoneConnect, prepareSocketPath, useSocketMode } from './socket.js';
import { tlsPolicy } from './tls.js';
import { startWatchdog } from './watchdog.js';
import { adminLine, primaryChannel, reportFailure, reportListening, superviseWorkers } from './workers.js';

const NAME = 'booking-search-server';
// After SIGINT/SIGTERM, requests in flight get this long before their connections are cut.
const SHUTDOWN_GRACE_MS = 10_000;
// Request line and headers together; a Basic header and a long query fit well within.
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * This process's part, decided once from node:cluster: the only process, the primary of
 * --workers (it supervises and serves nothing), or one of its workers (its greeting and its
 * failure go to the primary, which says them once).
 */
type Role = 'single' | 'primary' | 'worker';

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let role: Role = cluster.isWorker ? 'worker' : 'single';
  try {
    const command = readCommand(argv, env);
    if (command.command === 'help') return void process.stdout.write(USAGE);
    if (command.command === 'version') return void process.stdout.write(`${readVersion()}\n`);
    if (command.command === 'openapi') return void process.stdout.write(readPackageFile('openapi.json'));
    if (command.command === 'hash-password') return await runHashPassword(process.stdin, process.stdout);
    if (command.command === 'check') {
      process.exitCode = await checkInGuard(command.db, command.app, command.tables, 6 * command.searchMs);
      return;
    }
    if (command.command === 'check-config') {
      process.exitCode = await reportOnBooks(command.serve, command.credentialsProblem);
      return;
    }
    completeCommand(command);
    setLogFormat(command.settings.logFormat);
    if (role === 'single' && command.settings.workers > 1) role = 'primary';
    if (role !== 'worker') warnAboutSecretFiles(command);
    if (role !== 'worker') warnAboutLoopbackProxy(command);
    if (command.socket !== undefined) {
      useSocketMode(command.socket.mode);
      if (role !== 'worker' && letsEveryoneConnect(command.socket.mode)) {
        logLine(
          `warning: --socket-mode ${command.socket.mode.toString(8)} lets every user of this machine connect to the socket, and the socket's peer is trusted as the proxy (X-Forwarded-For): any of them can choose the address the throttle counts; use 660 with --socket-group`,
          'warning',
        );
      }
    }
    if (role === 'primary') {
      return await superviseWorkers(
        command,
        async () => {
          // The file is judged once here, so that a problem is said once, not by every
          // worker. Not the books of a configuration file: judging 100 books here and again
          // in each worker would triple the start; the first worker that fails says why,
          // once, and the service ends (bin/workers.ts).
          const preflight = servesFileBooks(command) ? [] : command.books;
          for (const book of preflight) {
            if (book.db !== undefined)
              await preflightDatabaseFile(
                book.db,
                book,
                handlerFor(
                  command,
                  book,
                  () => usersOf(book, command.credentials),
                  () => {},
                ),
              );
          }
          if (command.socket !== undefined) await prepareSocketPath(command.socket.path);
        },
        readVersion(),
        throttleAuthority(command),
      );
    }
    const greeting = await serve(command, role, () => completeCommand(readServeCommand(argv, env)));
    if (role === 'worker') reportListening(greeting);
    else logInfo(greeting);
  } catch (error: unknown) {
    const message = error instanceof CliError ? error.message : `unexpected error: ${String(error)}`;
    if (role === 'worker') return reportFailure(message);
    // A wrong command line is an answer to the person typing it; anything later is a log line.
    if (error instanceof CliError && error.exitCode === 2) process.stderr.write(`${NAME}: ${message}\n`);
    else logLine(`${NAME}: ${message}`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  }
}

/** argv, the environment and the configuration file they name → the command. */
function readCommand(argv: readonly string[], env: NodeJS.ProcessEnv): ReturnType<typeof parseCommandLine> {
  const file = configPath(configFlag(argv), env);
  return parseCommandLine(argv, env, file === undefined ? undefined : readConfigFile(file, CONFIG_KEYS));
}

/** The serving command again, as SIGHUP reads it: the configuration file as it is now. */
function readServeCommand(argv: readonly string[], env: NodeJS.ProcessEnv): ServeCommand {
  const command = readCommand(argv, env);
  if (command.command !== 'serve') throw new CliError(`the command line no longer serves (${command.command})`);
  return command;
}

/** Reads what the command names but does not hold yet: the credentials file, then the file's books. */
function completeCommand(command: ServeCommand): ServeCommand {
  if (command.credentialsFile !== undefined) command.credentials = readCredentialsFile(command.credentialsFile);
  if (servesFileBooks(command)) {
    command.books = resolveBooks(command.config, command.credentials, { readApp, readTableNames });
  }
  return command;
}

/** Whether the books are a configuration file's `[book NAME]` sections. */
function servesFileBooks(command: ServeCommand): command is ServeCommand & { config: ConfigFile } {
  return command.config !== undefined && command.config.books.length > 0;
}

/** A credentials file or TLS key that every user of the machine can read is used, with a warning. */
function warnAboutSecretFiles(command: ServeCommand): void {
  const secrets = [
    ['credentials file', command.credentialsFile],
    ['TLS key', command.tls?.key],
  ] as const;
  for (const [what, file] of secrets) {
    const mode = file === undefined ? undefined : readableByEveryone(file);
    if (mode !== undefined) {
      logLine(
        `warning: ${what} ${file} is readable by every user of this machine (mode ${mode.toString(8)}); chmod o-rwx it`,
        'warning',
      );
    }
  }
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

/** `http://127.0.0.1:8080`, or for a socket `unix:PATH:` as nginx's proxy_pass names one. */
function listeningAt(command: ServeCommand, server: Server): string {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : command.settings.port;
  const host = command.settings.host.includes(':') ? `[${command.settings.host}]` : command.settings.host;
  const scheme = command.tls === undefined ? 'http' : 'https';
  return command.socket === undefined ? `${scheme}://${host}:${port}` : `unix:${command.socket.path}:`;
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
 * Listens for `handler` with the access log, and with --admin-port or --admin-socket the
 * admin listener over `books` (with --workers the primary's, fed by each worker's report);
 * SIGINT/SIGTERM stop both, then `close`. A failure closes what was opened and is one line.
 */
async function listenFor(
  command: ServeCommand,
  role: Exclude<Role, 'primary'>,
  metrics: Metrics | undefined,
  handler: RequestHandler,
  close: () => void,
  books: () => readonly ServedBook[],
): Promise<{ server: Server; adminLines: string[] }> {
  let server: Server | undefined;
  let admin: { server: Server; address: string } | undefined;
  let stopping = false;
  try {
    server = createServer(command, withAccessLog(handler, metrics === undefined ? undefined : countAnswers(metrics)));
    // node:http's socket timeout (0, off, by default): a client that stops reading a large
    // answer would hold its connection and the unsent part of the answer for ever. Without
    // a 'timeout' listener Node destroys the socket. Every write that drains restarts it,
    // and so does every byte the client sends: a connection whose answer has stood still
    // for as long is closed all the same (bin/send-timeout.ts).
    server.setTimeout(command.timeouts.sendMs);
    closeStalledConnections(server, command.timeouts.sendMs);
    if (command.socket === undefined) await listen(server, command.settings.port, command.settings.host);
    else {
      // With --workers the primary has cleared the path; the workers share its socket.
      if (role === 'single') await prepareSocketPath(command.socket.path);
      await listen(server, command.socket.path);
      applySocketGroup(command.socket);
    }
  } catch (error: unknown) {
    server?.close();
    close();
    throw error instanceof CliError ? error : new CliError(describeListenError(error, command));
  }
  // Without an admin listener nothing was counted, and nobody asks.
  const serving: ServingProcess = { metrics: metrics ?? createMetrics(), server, books };
  // With --workers the primary answers the admin listener, asking each worker for its report.
  if (role === 'worker') {
    if (command.admin !== undefined) reportToPrimary(primaryChannel(), serving);
  } else if (command.admin !== undefined) {
    try {
      admin = await listenAdmin(
        command.admin,
        answersOfProcess(serving, readVersion(), () => stopping),
        command.socket?.group,
      );
    } catch (error: unknown) {
      server.close();
      close();
      throw error;
    }
  }
  stopOnSignals(
    server,
    () => {
      close();
      admin?.server.close();
      admin?.server.closeAllConnections();
    },
    role,
    () => {
      stopping = true;
    },
  );
  return { server, adminLines: admin === undefined ? [] : [adminLine(admin.address)] };
}

/** How the file is served when no --app was given: `app` is what its tables say. */
function recognition(app: string): string {
  const application = findApplication(app);
  return application === undefined
    ? 'served with the own schema (its tables are not an application known to --app)'
    : `recognised as ${application.title}'s file by its tables, served as with --app ${application.name}`;
}

/** The start-up lines: where the API is served, and for the demo what to try. */
function greeting(
  command: ServeCommand,
  server: Server,
  demo: DemoDatabase | undefined,
  recognised: string | undefined,
): string[] {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : command.settings.port;
  const host = command.settings.host.includes(':') ? `[${command.settings.host}]` : command.settings.host;
  const base = `${command.settings.basePath.replace(/\/+$/, '')}/api/v1/`;
  const scheme = command.tls === undefined ? 'http' : 'https';
  // A socket is written the way nginx's proxy_pass names one: unix:PATH:URI.
  const api =
    command.socket === undefined ? `${scheme}://${host}:${port}${base}` : `unix:${command.socket.path}:${base}`;
  const served = command.app === undefined && recognised !== undefined && recognised !== 'own';
  const lines = [`${NAME} listening on ${api}${served ? ` (${command.settings.db}: ${recognition(recognised)})` : ''}`];
  if (demo === undefined) return lines;
  const userArgument =
    command.credentialsFrom === 'demo default'
      ? 'demo:demo'
      : command.credentialsFrom === 'file'
        ? 'USER:PASSWORD'
        : // A hash in the environment is no password to send: the user types theirs.
          command.credentials.some((credential) => credential.passwordHash !== undefined)
          ? '"$BOOKING_SEARCH_USER:PASSWORD"'
          : '"$BOOKING_SEARCH_USER:$BOOKING_SEARCH_PASSWORD"';
  const insecure = command.tls === undefined ? '' : '-k ';
  const target =
    command.socket === undefined ? `'${api}` : `--unix-socket ${command.socket.path} '${scheme}://localhost${base}`;
  lines.push(
    `Demo: ${demo.count} sample cash bookings from ${demo.from} to ${demo.to}, in memory.`,
    command.credentialsFrom === 'demo default'
      ? 'Demo credentials: user "demo", password "demo" (set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD for others).'
      : `Credentials: from the ${command.credentialsFrom}.`,
    `Try: curl ${insecure}-u ${userArgument} ${target}buchungen?von=${demo.example.von}&bis=${demo.example.bis}&betrag=${demo.example.betrag}'`,
  );
  return lines;
}

/** Basic credentials over plain HTTP beyond this machine cross the network readable. */
function warnAboutPlainHttp(command: ServeCommand): void {
  if (command.tls === undefined && command.socket === undefined && !isLoopback(command.settings.host)) {
    logLine(
      `warning: serving HTTP Basic authentication without TLS on ${command.settings.host}: passwords cross the network readable; use --tls-cert/--tls-key or a TLS proxy`,
      'warning',
    );
  }
}

/**
 * A proxy trusted on loopback believes X-Forwarded-For from every local process, so every
 * local user can choose the client address the throttle counts (docs/API.md, Throttling).
 */
function warnAboutLoopbackProxy(command: ServeCommand): void {
  const loopback = command.trustProxy.filter(
    (entry) => entry !== 'unix' && isLoopback(canonicalAddress(entry) ?? entry),
  );
  if (loopback.length === 0) return;
  logLine(
    `warning: --trust-proxy ${loopback.join(',')} is on loopback: every user of this machine can connect from there and choose its X-Forwarded-For, so only the per-username and global failure budgets slow their guessing; prefer --socket with --socket-group`,
    'warning',
  );
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
 * bin/shared-throttle.ts); one bound on password-hash checks; and, with an admin
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

/** In the primary of --workers: the throttle's counts, for every worker (bin/shared-throttle.ts). */
function throttleAuthority(command: ServeCommand): ThrottleAuthority {
  const settings = resolveOptions(serviceOptions(command));
  return createThrottleAuthority(createThrottle(settings), settings.maxTrackedAddresses);
}

/** The options every handler of the service shares: the throttle's limits, proxies, CORS (bin/settings.ts says which). */
function serviceOptions(command: ServeCommand): HandlerOptions {
  return { ...handlerOptions(command.settings), trustProxy: command.trustProxy };
}

/** node:http, or node:https with --tls-cert/--tls-key; timeouts set against slow clients. */
function createServer(command: ServeCommand, listener: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const options = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: command.timeouts.headersMs,
    requestTimeout: command.timeouts.requestMs,
    keepAliveTimeout: command.timeouts.keepAliveMs,
    // Node looks for expired headers and requests only this often (default 30 s).
    connectionsCheckingInterval: Math.min(1_000, command.timeouts.headersMs),
  };
  if (command.tls === undefined) return answerProtocolErrors(createHttpServer(options, listener));
  const { cert, key } = readTls(command.tls);
  try {
    // A TLS handshake gets as long as the request's headers (Node's default is 120 s).
    const handshakeTimeout = command.timeouts.headersMs;
    return answerProtocolErrors(
      createHttpsServer({ ...options, ...tlsPolicy(command.tls.minVersion), cert, key, handshakeTimeout }, listener),
    );
  } catch (error: unknown) {
    throw new CliError(
      `the TLS certificate or key is not usable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function readTls(tls: { cert: string; key: string }): { cert: Buffer; key: Buffer } {
  const read = (flag: string, file: string): Buffer => {
    // Whoever can write them can serve as this service (bin/file-safety.ts).
    ensureOnlyOwnerCanChange(`${flag} ${file}`, file);
    try {
      return readFileSync(file);
    } catch (error: unknown) {
      throw new CliError(`cannot read ${flag} ${file}: ${describeFsError(error)}`);
    }
  };
  return { cert: read('--tls-cert', tls.cert), key: read('--tls-key', tls.key) };
}

/**
 * SIGHUP (docs/API.md, Credentials): `reread` reads the credentials file (or the
 * configuration file and the credentials), then the TLS certificate and key are read again;
 * what cannot be used is kept as it was, with one line on stderr saying why. Connections and
 * the throttle table stay.
 */
function reloadOnHangup(command: ServeCommand, server: Server, reread: () => void): void {
  process.on('SIGHUP', () => {
    reread();
    if (command.tls === undefined) return;
    try {
      // setSecureContext resets what it is not given to Node's defaults: the policy goes with it.
      (server as HttpsServer).setSecureContext({ ...tlsPolicy(command.tls.minVersion), ...readTls(command.tls) });
      logLine(`SIGHUP: TLS certificate and key re-read from ${command.tls.cert} and ${command.tls.key}`, 'notice');
    } catch (error: unknown) {
      const why = error instanceof CliError ? error.message : describeError(error);
      logLine(`SIGHUP: keeping the old TLS certificate: ${why}`, 'warning');
    }
  });
}

/** Listens on a port or a socket path; rejects with the server's error (EADDRINUSE, …). */
async function listen(server: Server, ...where: [port: number, host: string] | [path: string]): Promise<void> {
  if (where.length === 1) server.listen(where[0]);
  else server.listen(where[0], where[1]);
  await once(server, 'listening');
}

function describeListenError(error: unknown, { settings: { host, port }, socket }: ServeCommand): string {
  const code = errorCode(error);
  if (socket !== undefined) {
    if (code === 'EADDRINUSE') return `cannot listen on socket ${socket.path}: another process is listening on it`;
    // libuv reports a missing directory as EACCES too.
    if (!existsSync(dirname(socket.path))) return `cannot listen on socket ${socket.path}: no such directory`;
    return `cannot listen on socket ${socket.path}: ${describeFsError(error)}`;
  }
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is already in use`;
  if (code === 'EACCES') return `no permission to listen on port ${port} (ports below 1024 need privileges)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot listen on ${host}: no such address on this machine`;
  return `cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`;
}

function logError(error: unknown, req: IncomingMessage): void {
  const path = pathForLog(req.url ?? '');
  logLine(`error in ${req.method} ${path}: ${describeError(error)}`);
}

/**
 * The last resort (bin/watchdog.ts): a process whose event loop has not turned for six
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

/**
 * The handler catches every error of a request. Anything that escapes it (a bug in a
 * callback, a rejected promise nobody awaits) leaves the process in a state nobody knows,
 * which Node's documentation calls unsafe to resume: it is logged in one line, with where
 * it was thrown, and the process ends with exit code 1. A worker is then replaced within
 * the restart budget (bin/workers.ts); a single process is restarted by systemd
 * (`Restart=on-failure` in deploy/).
 */
function stopOnBugs(): void {
  process.on('uncaughtException', (error) => {
    logLine(`unexpected error, stopping: ${describeError(error)}${thrownAt(error)}`);
    process.exit(1);
  });
}

/** ` (at FILE:LINE:COLUMN)`: the innermost stack frame in a file, not in Node itself. */
function thrownAt(error: unknown): string {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const frame = /^\s+at (?:.*\()?((?:file:\/\/|\/)[^()\s]+:\d+:\d+)\)?$/m.exec(stack);
  return frame === null ? '' : ` (at ${frame[1]})`;
}

/** `closeAll` runs once the server has closed; `started` when the stop begins (the admin listener's /live says 503 from then). */
function stopOnSignals(
  server: Server,
  closeAll: () => void,
  role: Exclude<Role, 'primary'>,
  started: () => void,
): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) {
      // A second signal cuts what is still running. Not in a worker: Ctrl-C and systemd
      // signal the whole process group, and the primary passes the signal on as well, so
      // each worker sees two for one stop; it gets the grace below like a single process.
      if (role === 'single') server.closeAllConnections();
      return;
    }
    stopping = true;
    started();
    server.close(() => {
      closeAll();
      process.exitCode = 0;
      // A worker's channel to the primary would keep it alive.
      if (role === 'worker') process.disconnect?.();
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function readVersion(): string {
  return (JSON.parse(readPackageFile('package.json')) as { version: string }).version;
}

/** A file the package ships, found through its own exports (from src/ and dist/ alike). */
function readPackageFile(name: 'package.json' | 'openapi.json'): string {
  return readFileSync(new URL(import.meta.resolve(`booking-search-server/${name}`)), 'utf8');
}
