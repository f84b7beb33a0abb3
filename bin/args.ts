// argv and the environment → what the CLI is asked to do. Pure: it reads no file (the
// caller reads --credentials-file); every problem is a CliError with one line for the user.

import { parseArgs } from 'node:util';
import { APP_NAMES } from '../lib/apps/index.js';
import { canonicalAddress } from '../lib/client-address.js';
import { originProblem } from '../lib/cors.js';
import { errorCode } from '../lib/errors.js';
import { TABLE_NAME, type TableNames } from '../lib/mapping.js';
import type { Credentials } from '../lib/types.js';
import type { BookConfig } from './books.js';
import type { ConfigFile } from './config-file.js';
import { BOOK_SETTINGS, gatherSettings, type Origin, placeError, type Values } from './configuration.js';
import { environmentCredentials } from './credentials.js';
import { CliError } from './errors.js';
import type { TlsMinVersion } from './tls.js';

export interface ServeCommand {
  command: 'serve';
  /** The single book's database file; `undefined` for the demo and for the books of a configuration file. */
  db: string | undefined;
  /** `--demo`: the in-memory sample book. */
  demo: boolean;
  /**
   * `--config FILE` as read at the start (the caller reads it, bin/config-file.ts), read
   * again on SIGHUP; `undefined` without one.
   */
  config: ConfigFile | undefined;
  /**
   * The books served: the one of --db (or the demo), or the file's `[book NAME]` sections,
   * which the caller resolves once it has the credentials (bin/configuration.ts, resolveBooks).
   */
  books: BookConfig[];
  /**
   * Whose tables the file holds: `own` or an application (lib/apps/); `undefined` when
   * --app was not given: then the file's tables tell, as `check` recognises them.
   */
  app: string | undefined;
  /** With `own`: the names of the three tables, where they differ from the defaults. */
  tables: Partial<TableNames>;
  host: string;
  port: number;
  basePath: string;
  serviceName: string | undefined;
  /**
   * From the environment or the demo default; empty while they are in `credentialsFile`,
   * which the caller reads (bin/credentials.ts, readCredentialsFile) and puts here.
   */
  credentials: Credentials[];
  /** Where the credentials came from, for the start-up message. */
  credentialsFrom: 'environment' | 'file' | 'demo default';
  /** The credentials file, read again on SIGHUP; `undefined` when they come from elsewhere. */
  credentialsFile: string | undefined;
  maxAuthFailures: number;
  maxUserFailures: number;
  maxGlobalFailures: number;
  maxUnauthenticated: number;
  authFailureWindowMs: number;
  /** Peers whose X-Forwarded-For names the client: IP addresses, and `unix` with --socket. */
  trustProxy: string[];
  /** A Unix socket to listen on instead of host and port. */
  socket: { path: string; mode: number; group: string | undefined } | undefined;
  /** Where the admin listener (/live, /ready, /metrics) listens; `undefined`: it is off. */
  admin: { host: string; port: number } | { socket: string } | undefined;
  logFormat: 'text' | 'json';
  /** Origins whose web pages may call the API (CORS); empty: off. */
  corsOrigins: string[];
  /** Processes serving the port; 1 serves from this process. */
  workers: number;
  /** PEM files for HTTPS; `undefined` serves plain HTTP. */
  tls: { cert: string; key: string; minVersion: TlsMinVersion } | undefined;
  timeouts: { headersMs: number; requestMs: number; keepAliveMs: number; sendMs: number };
}

export type Command =
  | ServeCommand
  | { command: 'check'; db: string; app: string | undefined; tables: Partial<TableNames> }
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
  --config FILE              settings (key = value, the flags' names without --) and [book NAME] sections
                             (db, app or table-names, base-path, users); SIGHUP re-reads it
  --db FILE                  the SQLite database of the bookkeeping application
  --demo                     an in-memory database with a few hundred sample bookings
  --app NAME                 whose tables FILE holds: ${APP_NAMES.join(', ')} (default: what FILE's tables
                             say, else own; docs/applications.md)
  --table-names LIST         with --app own: other names for the tables, e.g. entries=kasse,categories=kat
  --host HOST                address to listen on (default 127.0.0.1)
  --port PORT                port to listen on, 0 for any free one (default 8080)
  --base-path PATH           path before /api/v1, e.g. /kasse (default none)
  --name NAME                service name in /status and the auth realm (default booking-search-server)
  --credentials-file FILE    user:secret lines (secret: a password or a hash-password hash); SIGHUP re-reads it
  --max-auth-failures N      failed logins per client address (IPv6: per /64) before 429; 0: off (default 10)
  --max-user-failures N      failed logins per username, from any address, before only clients that logged
                             in from their address before are checked; 0: off (default 50)
  --max-global-failures N    ... and in all, for any username (default 100)
  --max-unauthenticated N    requests without credentials per address, not followed by a login (default 100)
  --auth-failure-window SEC  the window all of these are counted in (default 60)
  --socket PATH              listen on this Unix socket instead of a port (for a proxy on this machine)
  --socket-mode MODE         its permissions, octal (default 660: owner and group may connect)
  --socket-group GROUP       its group, e.g. the proxy's (www-data); the service user must be a member
  --admin-port PORT          serve /live, /ready and /metrics on this port, without credentials (default: off)
  --admin-host HOST          ... on this address (default 127.0.0.1)
  --admin-socket PATH        ... or on this Unix socket (with --socket: its mode and group)
  --trust-proxy ADDRESS,...  take the client address from X-Forwarded-For, only from these proxy addresses
                             (a --socket's peer is trusted as the proxy without this)
  --log-format text|json     log lines as text with an ISO time first, or one JSON object each (default text)
  --cors-origin ORIGIN       let web pages from ORIGIN call the API (CORS), e.g. https://app.example; repeatable
  --workers N                serve from N processes, each with its own read-only connection (default 1)
  --tls-cert FILE            serve HTTPS with this PEM certificate (chain) ...
  --tls-key FILE             ... and this PEM private key
  --tls-min-version 1.2|1.3  the oldest TLS version a client may use (default 1.2; ECDHE with AEAD only)
  --headers-timeout SEC      a client must have sent its headers within this (default 10)
  --request-timeout SEC      ... and its whole request within this (default 30)
  --keep-alive-timeout SEC   an idle keep-alive connection is closed after this (default 5)
  --send-timeout SEC         a connection whose client reads nothing of an answer for this long is closed (default 30)

Every option that takes a value may also come from the variable BOOKING_SEARCH_ and its name
in capitals with _ for - (BOOKING_SEARCH_PORT=8080), or from --config FILE: a flag wins over
the variable, the variable over the file.

Credentials come from BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD (a password or a
hash), or from --credentials-file; never from a flag, which every user of the machine could
read in ps. SIGHUP re-reads the credentials file, the configuration file and the TLS
certificate and key.
`;

const OPTIONS = {
  config: { type: 'string' },
  db: { type: 'string' },
  app: { type: 'string' },
  'table-names': { type: 'string' },
  demo: { type: 'boolean' },
  openapi: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  'base-path': { type: 'string' },
  name: { type: 'string' },
  'credentials-file': { type: 'string' },
  'max-auth-failures': { type: 'string' },
  'max-user-failures': { type: 'string' },
  'max-global-failures': { type: 'string' },
  'max-unauthenticated': { type: 'string' },
  'auth-failure-window': { type: 'string' },
  'trust-proxy': { type: 'string' },
  socket: { type: 'string' },
  'admin-port': { type: 'string' },
  'admin-host': { type: 'string' },
  'admin-socket': { type: 'string' },
  'socket-mode': { type: 'string' },
  'socket-group': { type: 'string' },
  'log-format': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  workers: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-min-version': { type: 'string' },
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  'keep-alive-timeout': { type: 'string' },
  'send-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const DEMO_CREDENTIALS: Credentials[] = [{ username: 'demo', password: 'demo' }];

/**
 * The options a variable or the configuration file may give too, with whether they repeat:
 * every option that takes a value but `--config` itself (the flags --demo, --help, --version
 * and --openapi say what to do, they are no settings).
 */
export const SETTINGS: ReadonlyArray<readonly [key: string, multiple: boolean]> = Object.entries(OPTIONS)
  .filter(([key, option]) => option.type === 'string' && key !== 'config')
  .map(([key, option]) => [key, 'multiple' in option && option.multiple === true] as const);

/** The keys the configuration file's service part may hold. */
export const CONFIG_KEYS: ReadonlySet<string> = new Set(SETTINGS.map(([key]) => key));

/** `--config FILE` as given on the command line (the variable is bin/configuration.ts's configPath). */
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
  const gathered = gatherSettings(flags as Values, SETTINGS, env, config);
  const values = gathered.values as typeof flags;
  try {
    return interpret(values, positionals, env, config, gathered.origins);
  } catch (error: unknown) {
    throw placeError(error, gathered.origins);
  }
}

function interpret(
  values: ReturnType<typeof parse>['values'],
  positionals: string[],
  env: NodeJS.ProcessEnv,
  config: ConfigFile | undefined,
  origins: ReadonlyMap<string, Origin>,
): Command {
  const [verb, ...extra] = positionals;
  const hasBooks = config !== undefined && config.books.length > 0;
  if (verb === 'check' && extra.length === 0 && !hasBooks) {
    if (values.db === undefined) throw usage('check needs --db FILE or --config FILE');
    const tables = readTableNames(values['table-names']);
    return { command: 'check', db: values.db, app: readApp(values.app, tables), tables };
  }
  if (verb === 'hash-password' && extra.length === 0) return { command: 'hash-password' };
  if (verb !== undefined && !(verb === 'check' && extra.length === 0)) {
    throw usage(`unexpected argument '${verb === 'check' || verb === 'hash-password' ? extra[0] : verb}'`);
  }

  const demo = values.demo === true;
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
    if (demo && values.db !== undefined) throw usage('give either --db FILE or --demo, not both');
    if (!demo && values.db === undefined)
      throw usage('--db FILE is required (or --demo for sample data, or --config FILE)');
  }
  const tables = readTableNames(values['table-names']);
  // --table-names names the own schema's tables: nothing left to recognise.
  const app = readApp(values.app, tables) ?? (Object.keys(tables).length > 0 ? 'own' : undefined);
  if (demo && ((app !== undefined && app !== 'own') || Object.keys(tables).length > 0))
    throw usage('--app and --table-names describe a --db FILE, not the demo');

  const cert = values['tls-cert'];
  const key = values['tls-key'];
  if ((cert === undefined) !== (key === undefined)) throw usage('--tls-cert and --tls-key go together');
  const minVersion = readTlsMinVersion(values['tls-min-version'], cert !== undefined);

  // Every flag is checked (exit 2) before the credentials are read (exit 1).
  const port = wholeNumber('--port', values.port, 8080, 0, 65_535);
  const maxAuthFailures = wholeNumber('--max-auth-failures', values['max-auth-failures'], 10, 0, 1_000_000);
  const maxUserFailures = wholeNumber('--max-user-failures', values['max-user-failures'], 50, 0, 1_000_000);
  const maxGlobalFailures = wholeNumber('--max-global-failures', values['max-global-failures'], 100, 0, 1_000_000);
  const maxUnauthenticated = wholeNumber('--max-unauthenticated', values['max-unauthenticated'], 100, 0, 1_000_000);
  const authFailureWindowMs = 1000 * wholeNumber('--auth-failure-window', values['auth-failure-window'], 60, 1, 86_400);
  const workers = wholeNumber('--workers', values.workers, 1, 1, 64);
  const timeouts = readTimeouts(values);
  const socket = readSocket(values);
  if (socket !== undefined && (values.port !== undefined || values.host !== undefined))
    throw usage('give either --socket PATH or --host/--port, not both');
  const admin = readAdmin(values);
  if (admin !== undefined && 'socket' in admin && admin.socket === socket?.path)
    throw usage('--admin-socket needs a path of its own, not the API socket');
  if (admin !== undefined && 'port' in admin && admin.port !== 0 && admin.port === port && socket === undefined)
    throw usage('--admin-port needs a port of its own, not the API port');
  const trustProxy = readTrustProxy(values['trust-proxy']);
  // docs/API.md, Throttling: the only peer of a Unix socket is the proxy that connects to it.
  if (socket !== undefined && trustProxy.length > 0)
    throw usage('--trust-proxy names TCP peers; on --socket the socket itself is the trusted proxy');
  const logFormat = values['log-format'] ?? 'text';
  if (logFormat !== 'text' && logFormat !== 'json')
    throw usage(`--log-format must be text or json, not '${logFormat}'`);
  const corsOrigins = values['cors-origin'] ?? [];
  for (const origin of corsOrigins) {
    const problem = originProblem(origin);
    if (problem !== undefined) throw usage(`--cors-origin ${problem}`);
  }

  let credentials: ReturnType<typeof readCredentials>;
  let credentialsProblem: string | undefined;
  try {
    credentials = readCredentials(env, values['credentials-file'], demo);
  } catch (error: unknown) {
    // check judges the books without the service's credentials, and says so.
    if (verb !== 'check' || !(error instanceof CliError)) throw error;
    credentials = { credentials: [], from: 'environment' };
    credentialsProblem = error.message;
  }
  const basePath = values['base-path'] ?? '';
  const single: BookConfig = {
    name: values.name ?? 'booking-search-server',
    db: values.db,
    app,
    tables,
    basePath: basePath.replace(/\/+$/, ''),
    users: undefined,
  };

  const serve: ServeCommand = {
    command: 'serve',
    db: values.db,
    demo,
    config,
    books: hasBooks ? [] : [single],
    app,
    tables,
    host: values.host ?? '127.0.0.1',
    port,
    basePath,
    serviceName: values.name,
    credentials: credentials.credentials,
    credentialsFrom: credentials.from,
    credentialsFile: credentials.from === 'file' ? values['credentials-file'] : undefined,
    maxAuthFailures,
    maxUserFailures,
    maxGlobalFailures,
    maxUnauthenticated,
    authFailureWindowMs,
    trustProxy: socket === undefined ? trustProxy : ['unix'],
    socket,
    admin,
    logFormat,
    corsOrigins,
    workers,
    tls: cert === undefined || key === undefined ? undefined : { cert, key, minVersion },
    timeouts,
  };
  return verb === 'check' ? { command: 'check-config', serve, credentialsProblem } : serve;
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

export function readApp(app: string | undefined, tables: Partial<TableNames>): string | undefined {
  if (app !== undefined && !APP_NAMES.includes(app))
    throw usage(`--app must be one of ${APP_NAMES.join(', ')}, not '${app}'`);
  if (app !== undefined && app !== 'own' && Object.keys(tables).length > 0)
    throw usage(`--table-names is for --app own; --app ${app} reads the application's own tables`);
  return app;
}

const TABLE_KEYS = { entries: 'entries', categories: 'categories', payment_methods: 'paymentMethods' } as const;

/** `entries=kasse,categories=kat` → `{ entries: 'kasse', categories: 'kat' }`. */
export function readTableNames(text: string | undefined): Partial<TableNames> {
  if (text === undefined) return {};
  const names: Partial<TableNames> = {};
  for (const pair of text.split(',')) {
    const [key = '', name = '', ...rest] = pair.split('=').map((part) => part.trim());
    const option = TABLE_KEYS[key as keyof typeof TABLE_KEYS] as keyof TableNames | undefined;
    if (option === undefined || rest.length > 0 || name === '')
      throw usage(`--table-names takes entries=NAME,categories=NAME,payment_methods=NAME, not '${pair}'`);
    if (!TABLE_NAME.test(name)) throw usage(`--table-names: '${name}' is not an SQL name such as kasse or temp.kasse`);
    if (names[option] !== undefined) throw usage(`--table-names names ${key} twice`);
    names[option] = name;
  }
  return names;
}

const TRUST_PROXY_NEEDS_ADDRESSES =
  "--trust-proxy needs your proxy's addresses, e.g. --trust-proxy 127.0.0.1,::1 (or --socket PATH, whose peer is the proxy)";

function readTrustProxy(text: string | undefined): string[] {
  if (text === undefined) return [];
  const addresses = text.split(',').map((entry) => entry.trim());
  for (const address of addresses) {
    if (address === '') throw usage(TRUST_PROXY_NEEDS_ADDRESSES);
    if (canonicalAddress(address) === undefined)
      throw usage(`--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not '${address}'`);
  }
  return addresses;
}

function readSocket(values: Record<string, string | string[] | boolean | undefined>): ServeCommand['socket'] {
  const path = values['socket'];
  const mode = values['socket-mode'];
  const group = values['socket-group'];
  if (typeof path !== 'string') {
    if (mode !== undefined || group !== undefined) throw usage('--socket-mode and --socket-group need --socket PATH');
    return undefined;
  }
  if (path === '') throw usage('--socket needs a path');
  if (typeof mode === 'string' && !/^0?[0-7]{3}$/.test(mode))
    throw usage(`--socket-mode must be octal permissions such as 660, not '${mode}'`);
  if (group === '') throw usage('--socket-group needs a group name or number');
  return {
    path,
    mode: typeof mode === 'string' ? Number.parseInt(mode, 8) : 0o660,
    group: typeof group === 'string' ? group : undefined,
  };
}

function readAdmin(values: Record<string, string | string[] | boolean | undefined>): ServeCommand['admin'] {
  const port = values['admin-port'];
  const host = values['admin-host'];
  const socket = values['admin-socket'];
  if (typeof socket === 'string') {
    if (port !== undefined || host !== undefined)
      throw usage('give either --admin-socket PATH or --admin-port/--admin-host, not both');
    if (socket === '') throw usage('--admin-socket needs a path');
    return { socket };
  }
  if (port === undefined) {
    if (host !== undefined) throw usage('--admin-host needs --admin-port PORT');
    return undefined;
  }
  return {
    host: typeof host === 'string' ? host : '127.0.0.1',
    port: wholeNumber('--admin-port', typeof port === 'string' ? port : undefined, 0, 0, 65_535),
  };
}

function readTlsMinVersion(text: string | undefined, tls: boolean): TlsMinVersion {
  if (text === undefined) return 'TLSv1.2';
  if (!tls) throw usage('--tls-min-version needs --tls-cert and --tls-key');
  if (text === '1.2' || text === '1.3') return `TLSv${text}`;
  throw usage(`--tls-min-version must be 1.2 or 1.3, not '${text}'`);
}

function readTimeouts(values: Record<string, string | string[] | boolean | undefined>): ServeCommand['timeouts'] {
  const seconds = (flag: string, fallback: number): number => {
    const text = values[flag.slice(2)];
    return wholeNumber(flag, typeof text === 'string' ? text : undefined, fallback, 1, 3600);
  };
  const headers = seconds('--headers-timeout', 10);
  const request = seconds('--request-timeout', 30);
  // node:http refuses a headers timeout longer than the request timeout.
  if (headers > request) throw usage('--headers-timeout must not be longer than --request-timeout');
  return {
    headersMs: 1000 * headers,
    requestMs: 1000 * request,
    keepAliveMs: 1000 * seconds('--keep-alive-timeout', 5),
    sendMs: 1000 * seconds('--send-timeout', 30),
  };
}

/** Where the credentials come from; a file is named, not read. */
function readCredentials(
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  demo: boolean,
): { credentials: Credentials[]; from: ServeCommand['credentialsFrom'] } {
  // docs/API.md, The CLI: an empty environment variable counts as not set.
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

function wholeNumber(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max))
    throw usage(`${flag} must be a whole number from ${min} to ${max}, not '${text}'`);
  return value;
}

/** Whether `host` is an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function usage(message: string): CliError {
  return new CliError(`${message} (see --help)`, 2);
}
