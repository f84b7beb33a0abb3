// What `serve` (and `check --config`) is asked to do, read setting by setting in the order
// their problems are told: the books (a --db, the demo, or the configuration file's
// sections), TLS, the listeners and the limits, then the credentials (every setting is
// checked, exit 2, before the credentials are read, exit 1).

import type { Credentials } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import type { AppIn, TableNames } from '../files/index.js';
import type { TlsMinVersion } from '../listen/index.js';
import type { BookConfig } from './book-config.js';
import type { ConfigFile } from './config-file.js';
import { type Origin, strayVariables, type Values, variableName } from './configuration.js';
import { type CredentialsFrom, credentialsSource, NO_CREDENTIALS, readCredentials } from './credentials.js';
import { type Setting, usage } from './setting-kinds.js';
import { BOOK_SETTINGS, camel, type Flag, readSetting, SETTINGS, type SettingValues } from './settings.js';

/** On a reload, the credentials that run until the next start: their file, or the environment's variables. */
export const FROM_ENVIRONMENT = Symbol('BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD');
export type RunningCredentials = string | typeof FROM_ENVIRONMENT;

/** The serving command read again (SIGHUP); `running`, whatever the configuration names now (`settings` keep that). */
export type Reread = (running?: RunningCredentials) => ServeCommand;

export interface ServeCommand {
  command: 'serve';
  /** Every setting, as given (by a flag, a variable or the file) or by default: bin/config/settings.ts. */
  settings: SettingValues;
  /**
   * `--config FILE` as read at the start (the caller reads it, bin/config/config-file.ts), read
   * again on SIGHUP; `undefined` without one.
   */
  config: ConfigFile | undefined;
  /**
   * The books served: the one of --db (or the demo), or the file's `[book NAME]` sections,
   * which the caller resolves once it has the credentials (bin/config/configuration.ts, resolveBooks),
   * with `bookWarnings`, said at the start and by each reload: users the credentials lack.
   */
  books: BookConfig[];
  bookWarnings?: string[];
  /**
   * Whose tables the file holds: `own` or an application (lib/apps/); `undefined` when
   * --app was not given: then the file's tables tell, as `check` recognises them.
   */
  app: string | undefined;
  /**
   * From the environment or the demo default; empty while they are in `credentialsFile`,
   * which the caller reads (bin/config/credentials.ts, readCredentialsFile) and puts here.
   */
  credentials: Credentials[];
  /** Where the credentials came from, for the start-up message. */
  credentialsFrom: CredentialsFrom;
  /** The credentials file, read again on SIGHUP; `undefined` when they come from elsewhere. */
  credentialsFile: string | undefined;
  /**
   * Which credentials and where they were named, for a book's user that is not in them:
   * `/etc/x/credentials (--credentials-file)`, `… (BOOKING_SEARCH_CREDENTIALS_FILE)`,
   * `… (books.conf:3)`, or `BOOKING_SEARCH_USER`. A flag wins over the file, so the file a
   * book's users were checked against is not always the one its author had in mind.
   */
  credentialsSource: string;
  /** BOOKING_SEARCH_ variables that name no setting, each with the nearest known name (bin/config/configuration.ts, strayVariables). */
  strayVariables: Array<{ variable: string; nearest: string | undefined }>;
  /** Peers whose X-Forwarded-For names the client: --trust-proxy's addresses, or `unix` with --socket. */
  trustProxy: string[];
  /** A Unix socket to listen on instead of host and port. */
  socket: { path: string; mode: number; group: string | undefined } | undefined;
  /** Where the admin listener (/live, /ready, /metrics) listens; `undefined`: it is off. */
  admin: { host: string; port: number } | { socket: string } | undefined;
  /** PEM files for HTTPS; `undefined` serves plain HTTP. */
  tls: { cert: string; key: string; minVersion: TlsMinVersion } | undefined;
  /**
   * The timeouts of --headers-timeout and the others, in milliseconds. `searchMs`: how
   * long an open of a book's file, and a search over a book whose searches run in a guard
   * process (views, virtual tables, generated columns), may take (bin/books/database.ts); the
   * serving process is ended if it does not turn for six times it.
   */
  timeouts: { headersMs: number; requestMs: number; keepAliveMs: number; sendMs: number; searchMs: number };
}

/** Where a serve command was asked for, beside its settings. */
export interface Asked {
  /** `check` for `check --config`, else `undefined`. */
  readonly verb: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly config: ConfigFile | undefined;
  readonly origins: ReadonlyMap<string, Origin>;
  /** The settings a variable or the file may give, with whether they repeat (args.ts, CONFIGURABLE). */
  readonly configurable: ReadonlyArray<readonly [key: Flag, multiple: boolean]>;
  /** On a reload, the running credentials: they stay until the next start (Reread). */
  readonly running?: RunningCredentials | undefined;
}

/** The serve command (or `check --config`'s) from the settings given, every rule between them checked. */
export function readServeCommand(setting: Reader, given: Values, asked: Asked): ServeCommand | CheckConfig {
  const { verb, env, config, origins } = asked;
  const hasBooks = config !== undefined && config.books.length > 0;
  const { demo, db, app, tables } = readBookSource(setting, hasBooks, asked);
  const tls = readTls(setting, given);
  const { socket, admin, trustProxy, timeouts } = readListeners(setting, given);

  let credentials: ReturnType<typeof readCredentials>;
  let credentialsProblem: UnreadCredentials | undefined;
  const file = asked.running === FROM_ENVIRONMENT ? undefined : (asked.running ?? setting('credentials-file'));
  try {
    credentials = readCredentials(env, file, demo);
  } catch (error: unknown) {
    // check judges the books without the service's credentials, and says so.
    if (verb !== 'check' || !(error instanceof CliError)) throw error;
    credentials = { credentials: [], from: 'environment' };
    credentialsProblem = { given: error.message !== NO_CREDENTIALS, message: error.message };
  }
  const settings = everySetting(setting);
  const origin = file === settings.credentialsFile ? origins.get('credentials-file') : 'running';
  const dbOrigin = origins.get('db');
  const single: BookConfig = {
    name: settings.name,
    db,
    ...(dbOrigin?.kind === 'file' ? { dbOrigin: `${dbOrigin.file}:${dbOrigin.line}` } : {}),
    app,
    appIn: appWrittenIn(origins),
    tables,
    basePath: settings.basePath.replace(/\/+$/, ''),
    users: undefined,
    ...(origins.has('name') && { named: true }),
  };
  const serve: ServeCommand = {
    command: 'serve',
    settings,
    config,
    books: hasBooks ? [] : [single],
    app,
    credentials: credentials.credentials,
    credentialsFrom: credentials.from,
    credentialsFile: credentials.from === 'file' ? file : undefined,
    strayVariables: strayVariables(
      env,
      asked.configurable.map(([key]) => key),
    ),
    credentialsSource: credentialsSource(credentials.from, file, origin),
    trustProxy,
    socket,
    admin,
    tls,
    timeouts,
  };
  return verb === 'check' ? { command: 'check-config', serve, credentialsProblem } : serve;
}

/** Where the app of --db's book is written: where --app was given, else where the book was (there it would be). */
export function appWrittenIn(origins: ReadonlyMap<string, Origin>): AppIn {
  return (origins.get('app') ?? origins.get('db'))?.kind;
}

/** `check --config`: the serve command, judged without serving. */
export interface CheckConfig {
  command: 'check-config';
  serve: ServeCommand;
  /** Why the service's credentials could not be found, if so: `check` goes on without them. */
  credentialsProblem: UnreadCredentials | undefined;
}

/** Why `check --config` has no credentials: none given, or given (a file, the variables) but wrong. */
export type UnreadCredentials = { readonly given: boolean; readonly message: string };

/** What is served: the file of --db, the demo, or (`hasBooks`) the configuration file's books. */
function readBookSource(setting: Reader, hasBooks: boolean, { origins, env }: Asked) {
  const demo = setting('demo');
  const db = setting('db');
  if (hasBooks) {
    // The books are the file's sections: a file, mapping or base path given beside them
    // would be a book without a name and users, so it is refused where it was written.
    const variable = variableName('config');
    const books = setting('config') === undefined && env[variable] ? `${variable}'s file` : '--config FILE';
    for (const key of BOOK_SETTINGS) {
      const origin = origins.get(key);
      if (origin === undefined) continue;
      const problem = `${key} belongs in a [book NAME] section when the file has books`;
      if (origin.kind === 'file') throw new CliError(`${origin.file}:${origin.line}: ${problem}`);
      // A flag is a wrong command line (exit 2); a variable, the setup's (exit 1).
      if (origin.kind === 'flag') throw usage(`give either --${key} or books in ${books}, not both`);
      throw new CliError(`${origin.variable} is set, but the books come from ${books}; unset it`);
    }
    if (demo) throw usage(`give either --demo or books in ${books}, not both`);
  } else {
    if (demo && db !== undefined) throw usage('give either --db FILE or --demo, not both');
    if (!demo && db === undefined) throw usage('--db FILE is required (or --demo for sample data, or --config FILE)');
  }
  const tables = setting('table-names');
  // --table-names names the own schema's tables: nothing left to recognise.
  const app = checkMapping(setting('app'), tables) ?? (Object.keys(tables).length > 0 ? 'own' : undefined);
  if (demo && ((app !== undefined && app !== 'own') || Object.keys(tables).length > 0))
    throw usage('--app and --table-names describe a --db FILE, not the demo');
  return { demo, db, app, tables };
}

function readTls(setting: Reader, given: Values): ServeCommand['tls'] {
  const cert = setting('tls-cert');
  const key = setting('tls-key');
  if ((cert === undefined) !== (key === undefined)) throw usage('--tls-cert and --tls-key go together');
  if (given['tls-min-version'] !== undefined && cert === undefined)
    throw usage('--tls-min-version needs --tls-cert and --tls-key');
  const minVersion = setting('tls-min-version');
  return cert === undefined || key === undefined ? undefined : { cert, key, minVersion: `TLSv${minVersion}` };
}

/** Where the service listens and how its connections are bounded, each setting checked in --help's order. */
function readListeners(setting: Reader, given: Values) {
  const port = setting('port');
  setting('base-path');
  for (const flag of ['max-auth-failures', 'max-user-failures', 'max-global-failures'] as const) setting(flag);
  setting('max-unauthenticated');
  setting('auth-failure-window');
  setting('workers');
  const timeouts = readTimeouts(setting);
  const socket = readSocket(setting, given);
  if (socket !== undefined && (given.port !== undefined || given.host !== undefined))
    throw usage('give either --socket PATH or --host/--port, not both');
  const admin = readAdmin(setting, given);
  if (admin !== undefined && 'socket' in admin && admin.socket === socket?.path)
    throw usage('--admin-socket needs a path of its own, not the API socket');
  if (admin !== undefined && 'port' in admin && admin.port !== 0 && admin.port === port && socket === undefined)
    throw usage('--admin-port needs a port of its own, not the API port');
  const trustProxy = setting('trust-proxy');
  // docs/API.md, Throttling: the only peer of a Unix socket is the proxy that connects to it.
  if (socket !== undefined && trustProxy.length > 0)
    throw usage('--trust-proxy names TCP peers; on --socket the socket itself is the trusted proxy');
  setting('log-format');
  setting('cors-origin');
  return { socket, admin, trustProxy: socket === undefined ? trustProxy : ['unix'], timeouts };
}

export type ValueOf<F extends Flag> = (typeof SETTINGS)[F] extends Setting<infer T> ? T : never;
export type Reader = <F extends Flag>(flag: F) => ValueOf<F>;

/** Each setting read from `given` by its row (bin/config/settings.ts) when first asked for, so that problems are found in the order asked. */
export function settingsOf(given: Values): Reader {
  const read = new Map<Flag, unknown>();
  return <F extends Flag>(flag: F): ValueOf<F> => {
    if (!read.has(flag)) read.set(flag, readSetting(flag, SETTINGS[flag] as Setting<unknown>, given[flag]));
    return read.get(flag) as ValueOf<F>;
  };
}

/** Every setting, under its name in camelCase. */
function everySetting(setting: Reader): SettingValues {
  const values: Record<string, unknown> = {};
  for (const flag of Object.keys(SETTINGS) as Flag[]) values[camel(flag)] = setting(flag);
  return values as SettingValues;
}

/** --app, checked against --table-names (which is for the own schema only). */
export function readApp(app: string | undefined, tables: Partial<TableNames>): string | undefined {
  return checkMapping(app === undefined ? undefined : SETTINGS.app.parse(app, '--app'), tables);
}

export function checkMapping(app: string | undefined, tables: Partial<TableNames>): string | undefined {
  if (app !== undefined && app !== 'own' && Object.keys(tables).length > 0)
    throw usage(`--table-names is for --app own; --app ${app} reads the application's own tables`);
  return app;
}

function readSocket(setting: Reader, given: Values): ServeCommand['socket'] {
  const path = setting('socket');
  const unix = (['socket-mode', 'socket-group'] as const).find((flag) => given[flag] !== undefined);
  if (path === undefined && unix !== undefined) throw usage('--socket-mode and --socket-group need --socket PATH');
  if (path === undefined) return undefined;
  // Windows listens on a named pipe (bin/listen/socket.ts), which has neither.
  if (process.platform === 'win32' && unix !== undefined)
    throw usage(`--${unix} is for a Unix socket: a named pipe on Windows has neither mode nor group; leave it out`);
  return { path, mode: setting('socket-mode'), group: setting('socket-group') };
}

function readAdmin(setting: Reader, given: Values): ServeCommand['admin'] {
  if (given['admin-socket'] !== undefined) {
    if (given['admin-port'] !== undefined || given['admin-host'] !== undefined)
      throw usage('give either --admin-socket PATH or --admin-port/--admin-host, not both');
    return { socket: setting('admin-socket') as string };
  }
  const port = setting('admin-port');
  if (port === undefined) {
    if (given['admin-host'] !== undefined) throw usage('--admin-host needs --admin-port PORT');
    return undefined;
  }
  return { host: setting('admin-host'), port };
}

function readTimeouts(setting: Reader): ServeCommand['timeouts'] {
  const headers = setting('headers-timeout');
  const request = setting('request-timeout');
  // node:http refuses a headers timeout longer than the request timeout.
  if (headers > request) throw usage('--headers-timeout must not be longer than --request-timeout');
  return {
    headersMs: 1000 * headers,
    requestMs: 1000 * request,
    keepAliveMs: 1000 * setting('keep-alive-timeout'),
    sendMs: 1000 * setting('send-timeout'),
    searchMs: 1000 * setting('search-timeout'),
  };
}
