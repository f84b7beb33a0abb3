// argv, the environment and the configuration file → what the CLI is asked to do. Pure: it
// reads no file (the caller reads --config and --credentials-file); every problem is a
// CliError with one line for the user. Each setting is a row of bin/config/settings.ts (its flag,
// default, bounds, words and parser); what is here is the commands, and the rules between
// settings.

import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { Credentials } from '../../lib/index.js';
import { errorCode, type TableNames } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import type { TlsMinVersion } from '../listen/index.js';
import type { BookConfig } from './book-config.js';
import type { ConfigFile } from './config-file.js';
import { gatherSettings, type Origin, placeError, strayVariables, type Values } from './configuration.js';
import { environmentCredentials } from './credentials.js';
import { type Setting, TRUST_PROXY_NEEDS_ADDRESSES, usage } from './setting-kinds.js';
import { BOOK_SETTINGS, camel, type Flag, optionsHelp, readSetting, SETTINGS, type SettingValues } from './settings.js';

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
   * which the caller resolves once it has the credentials (bin/config/configuration.ts, resolveBooks).
   */
  books: BookConfig[];
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
  credentialsFrom: 'environment' | 'file' | 'demo default';
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

export type Command =
  | ServeCommand
  | {
      command: 'check';
      db: string;
      app: string | undefined;
      tables: Partial<TableNames>;
      /** --search-timeout: `check` of one file gets six times this (bin/commands/check.ts, checkInGuard). */
      searchMs: number;
    }
  | {
      command: 'check-config';
      serve: ServeCommand;
      /** Why the service's credentials could not be found, if so: `check` goes on without them. */
      credentialsProblem: string | undefined;
    }
  | { command: 'hash-password' }
  | { command: 'openapi' }
  | { command: 'help' }
  | { command: 'version' };

export const USAGE = `Usage:
  booking-search-server --db FILE [options]   serve the bookings in FILE (opened read-only)
  booking-search-server --demo [options]      serve built-in sample bookings (user demo, password demo)
  booking-search-server --config FILE [options] serve the books of FILE ([book NAME] sections)
  booking-search-server check --db FILE [--app NAME]
                                              does FILE fit? do its dates and amounts mean what they must?
                                              which indexes? journal state? one real search
  booking-search-server check --config FILE   the same for every book of FILE, and which fit
  booking-search-server hash-password         read a password on stdin, print its scrypt hash
  booking-search-server --openapi             print the OpenAPI 3.1 description
  booking-search-server --help | --version

Options:
${optionsHelp()}
Every option that takes a value may also come from the variable BOOKING_SEARCH_ and its name
in capitals with _ for - (BOOKING_SEARCH_PORT=8080), or from --config FILE: a flag wins over
the variable, the variable over the file.

Credentials come from BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD (a password or a
hash), or from --credentials-file; never from a flag, which every user of the machine could
read in ps. SIGHUP re-reads the credentials file, the configuration file and the TLS
certificate and key.
`;

const OPTIONS = {
  ...(Object.fromEntries(
    (Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>).map(([flag, setting]) => [
      flag,
      setting.placeholder === undefined
        ? { type: 'boolean' }
        : setting.repeatable
          ? { type: 'string', multiple: true }
          : { type: 'string' },
    ]),
  ) as ParseArgsOptionsConfig),
  // The commands beside serving, in the Usage lines above.
  openapi: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} satisfies ParseArgsOptionsConfig;

const DEMO_CREDENTIALS: Credentials[] = [{ username: 'demo', password: 'demo' }];

/**
 * The settings a variable or the configuration file may give too, with whether they
 * repeat: every one that takes a value but `--config` itself (bin/config/settings.ts, configurable).
 */
export const CONFIGURABLE: ReadonlyArray<readonly [key: Flag, multiple: boolean]> = (
  Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>
)
  .filter(([, setting]) => setting.configurable)
  .map(([flag, setting]) => [flag, setting.repeatable] as const);

/** The keys the configuration file's service part may hold. */
export const CONFIG_KEYS: ReadonlySet<string> = new Set(CONFIGURABLE.map(([key]) => key));

/** `--config FILE` as given on the command line (the variable is bin/config/configuration.ts's configPath). */
export function configFlag(argv: readonly string[]): string | undefined {
  try {
    const { values } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false });
    return typeof values.config === 'string' ? values.config : undefined;
  } catch {
    return undefined;
  }
}

/**
 * argv, the environment and the configuration file (read by the caller) → what the command
 * is asked to do. A value refused is named where it was written: the flag, the variable or
 * the file's line.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv, config?: ConfigFile): Command {
  const parsed = parse(argv);
  const { values: flags, positionals } = parsed;
  if (flags.help === true) return { command: 'help' };
  if (flags.version === true) return { command: 'version' };
  if (flags.openapi === true) return { command: 'openapi' };
  const gathered = gatherSettings(flags as Values, CONFIGURABLE, env, config);
  try {
    return interpret(gathered.values, positionals, env, config, gathered.origins);
  } catch (error: unknown) {
    throw placeError(error, gathered.origins);
  }
}

function interpret(
  given: Values,
  positionals: string[],
  env: NodeJS.ProcessEnv,
  config: ConfigFile | undefined,
  origins: ReadonlyMap<string, Origin>,
): Command {
  const setting = settingsOf(given);
  const [verb, ...extra] = positionals;
  const hasBooks = config !== undefined && config.books.length > 0;
  if (verb === 'check' && extra.length === 0 && !hasBooks) {
    const db = setting('db');
    if (db === undefined) throw usage('check needs --db FILE or --config FILE');
    const tables = setting('table-names');
    const searchMs = 1000 * setting('search-timeout');
    return { command: 'check', db, app: checkMapping(setting('app'), tables), tables, searchMs };
  }
  if (verb === 'hash-password' && extra.length === 0) return { command: 'hash-password' };
  if (verb !== undefined && !(verb === 'check' && extra.length === 0)) {
    throw usage(`unexpected argument '${verb === 'check' || verb === 'hash-password' ? extra[0] : verb}'`);
  }

  const demo = setting('demo');
  const db = setting('db');
  if (hasBooks) {
    // The books are the file's sections: a file, mapping or base path given beside them
    // would be a book without a name and users, so it is refused where it was written.
    for (const key of BOOK_SETTINGS) {
      const origin = origins.get(key);
      if (origin === undefined) continue;
      const problem = `${key} belongs in a [book NAME] section when the file has books`;
      if (origin.kind === 'file') throw new CliError(`${origin.file}:${origin.line}: ${problem}`);
      throw usage(
        origin.kind === 'flag'
          ? `give either --${key} or books in --config FILE, not both`
          : `${origin.variable} is set, but the books come from --config FILE; unset it`,
      );
    }
    if (demo) throw usage('give either --demo or books in --config FILE, not both');
  } else {
    if (demo && db !== undefined) throw usage('give either --db FILE or --demo, not both');
    if (!demo && db === undefined) throw usage('--db FILE is required (or --demo for sample data, or --config FILE)');
  }
  const tables = setting('table-names');
  // --table-names names the own schema's tables: nothing left to recognise.
  const app = checkMapping(setting('app'), tables) ?? (Object.keys(tables).length > 0 ? 'own' : undefined);
  if (demo && ((app !== undefined && app !== 'own') || Object.keys(tables).length > 0))
    throw usage('--app and --table-names describe a --db FILE, not the demo');

  const cert = setting('tls-cert');
  const key = setting('tls-key');
  if ((cert === undefined) !== (key === undefined)) throw usage('--tls-cert and --tls-key go together');
  if (given['tls-min-version'] !== undefined && cert === undefined)
    throw usage('--tls-min-version needs --tls-cert and --tls-key');
  const minVersion = setting('tls-min-version');

  // Every flag is checked (exit 2) before the credentials are read (exit 1), in this order.
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

  let credentials: ReturnType<typeof readCredentials>;
  let credentialsProblem: string | undefined;
  try {
    credentials = readCredentials(env, setting('credentials-file'), demo);
  } catch (error: unknown) {
    // check judges the books without the service's credentials, and says so.
    if (verb !== 'check' || !(error instanceof CliError)) throw error;
    credentials = { credentials: [], from: 'environment' };
    credentialsProblem = error.message;
  }
  const settings = everySetting(setting);
  const single: BookConfig = {
    name: settings.name,
    db,
    app,
    tables,
    basePath: settings.basePath.replace(/\/+$/, ''),
    users: undefined,
  };

  const serve: ServeCommand = {
    command: 'serve',
    settings,
    config,
    books: hasBooks ? [] : [single],
    app,
    credentials: credentials.credentials,
    credentialsFrom: credentials.from,
    credentialsFile: credentials.from === 'file' ? settings.credentialsFile : undefined,
    strayVariables: strayVariables(
      env,
      CONFIGURABLE.map(([key]) => key),
    ),
    credentialsSource: credentialsSource(credentials.from, settings.credentialsFile, origins.get('credentials-file')),
    trustProxy: socket === undefined ? trustProxy : ['unix'],
    socket,
    admin,
    tls: cert === undefined || key === undefined ? undefined : { cert, key, minVersion: `TLSv${minVersion}` },
    timeouts,
  };
  return verb === 'check' ? { command: 'check-config', serve, credentialsProblem } : serve;
}

type ValueOf<F extends Flag> = (typeof SETTINGS)[F] extends Setting<infer T> ? T : never;
type Reader = <F extends Flag>(flag: F) => ValueOf<F>;

/** Each setting read from `given` by its row (bin/config/settings.ts) when first asked for, so that problems are found in the order asked. */
function settingsOf(given: Values): Reader {
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

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error: unknown) {
    // parseArgs explains at length; one short line is what a terminal needs.
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[^'\s]*)/.exec(message)?.[1];
    const code = errorCode(error);
    if (option?.startsWith('--trust-proxy')) throw usage(TRUST_PROXY_NEEDS_ADDRESSES);
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) throw usage(`unknown option ${option}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) throw usage(`option ${option} needs a value`);
    throw usage(message.split('\n')[0] ?? message);
  }
}

/** --app, checked against --table-names (which is for the own schema only). */
export function readApp(app: string | undefined, tables: Partial<TableNames>): string | undefined {
  return checkMapping(app === undefined ? undefined : SETTINGS.app.parse(app, '--app'), tables);
}

function checkMapping(app: string | undefined, tables: Partial<TableNames>): string | undefined {
  if (app !== undefined && app !== 'own' && Object.keys(tables).length > 0)
    throw usage(`--table-names is for --app own; --app ${app} reads the application's own tables`);
  return app;
}

function readSocket(setting: Reader, given: Values): ServeCommand['socket'] {
  const path = setting('socket');
  if (path === undefined) {
    if (given['socket-mode'] !== undefined || given['socket-group'] !== undefined)
      throw usage('--socket-mode and --socket-group need --socket PATH');
    return undefined;
  }
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

/** ServeCommand's `credentialsSource`: which credentials, and where they were named. */
function credentialsSource(
  from: ServeCommand['credentialsFrom'],
  file: string | undefined,
  origin: Origin | undefined,
): string {
  if (from === 'environment') return 'BOOKING_SEARCH_USER';
  if (from === 'demo default') return 'the demo default';
  const where =
    origin?.kind === 'environment'
      ? origin.variable
      : origin?.kind === 'file'
        ? `${origin.file}:${origin.line}`
        : '--credentials-file';
  return `${file} (${where})`;
}

/** Where the credentials come from; a file is named, not read. */
function readCredentials(
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  demo: boolean,
): { credentials: Credentials[]; from: ServeCommand['credentialsFrom'] } {
  // docs/settings.md: an empty environment variable counts as not set.
  const inEnvironment = Boolean(env['BOOKING_SEARCH_USER'] || env['BOOKING_SEARCH_PASSWORD']);
  if (inEnvironment && file !== undefined) {
    throw new CliError(
      'credentials are given twice: use BOOKING_SEARCH_USER/BOOKING_SEARCH_PASSWORD or --credentials-file, not both',
    );
  }
  if (file !== undefined) return { credentials: [], from: 'file' };
  const fromEnvironment = environmentCredentials(env);
  if (fromEnvironment !== undefined) return { credentials: fromEnvironment, from: 'environment' };
  if (demo) return { credentials: DEMO_CREDENTIALS, from: 'demo default' };
  throw new CliError(
    'no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE',
  );
}
