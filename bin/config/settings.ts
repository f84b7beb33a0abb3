// The command's settings, one row each: the flag, what --help says of it, its default, its
// bounds, how its value is read from text, and the library option it feeds. The flag is
// also the configuration file's key and, as BOOKING_SEARCH_ and the flag in capitals with _
// for - (bin/config/configuration.ts), the variable's name; in the program the value is the flag
// in camelCase (--max-user-failures, maxUserFailures, the library's maxUserFailures).
// bin/config/args.ts derives from this table parseArgs's options, the Options of --help, the
// defaults and the values' types, and reads every value through its row;
// test/unit/settings.test.ts fails on a copy that drifts.

import { type HandlerOptions, resolveOptions } from '../../lib/internal.js';
import type { TableNames } from '../files/index.js';
import {
  basePath,
  oneOf,
  path,
  readTableNames,
  readTrustProxy,
  refusedAs,
  row,
  type Setting,
  text,
  textOr,
  toggle,
  usage,
  whole,
} from './setting-kinds.js';

const seconds = (value: number): number => 1000 * value;
// The library's defaults, as createHandler fills them in for options not given, and the names its app takes.
const DEFAULTS = resolveOptions(undefined);

/** The settings, in the order --help lists them. */
export const SETTINGS = {
  config: {
    ...text(
      'FILE',
      "settings (key = value, the flags' names without --) and [book NAME] sections\n(db, app or table-names, base-path, users); SIGHUP re-reads it",
    ),
    configurable: false,
    reload: 'file',
  },
  db: { ...path('FILE', 'the SQLite database of the bookkeeping application'), reload: 'book' },
  demo: toggle('an in-memory database with a few hundred sample bookings'),
  app: {
    ...row<string | undefined>(
      {
        placeholder: 'NAME',
        help: `whose tables FILE holds: ${DEFAULTS.apps.join(', ')} (default: what FILE's tables\nsay, else own; docs/applications.md)`,
        parse: (value, flag) => {
          resolveOptions({ app: value }, refusedAs(flag));
          return value;
        },
      },
      undefined,
    ),
    reload: 'book',
  },
  'table-names': {
    ...row<Partial<TableNames>>(
      {
        placeholder: 'LIST',
        help: 'with --app own: other names for the tables, e.g. entries=kasse,categories=kat',
        parse: readTableNames,
      },
      {},
    ),
    reload: 'book',
  },
  host: textOr('HOST', '127.0.0.1', 'address to listen on (default {default})'),
  port: whole('PORT', [0, 65_535], 8080, 'port to listen on, 0 for any free one (default {default})'),
  'base-path': {
    ...row<string>(
      {
        placeholder: 'PATH',
        help: 'path before /api/v1, e.g. /kasse (default {default})',
        parse: basePath,
        show: (path) => path || 'none',
      },
      '',
    ),
    reload: 'book',
  },
  name: row<string>(
    {
      placeholder: 'NAME',
      help: "service name in /status and the realm; with books, a path's naming none (default {default})",
      parse: (value, flag) => {
        resolveOptions({ serviceName: value }, refusedAs(flag));
        return value;
      },
    },
    DEFAULTS.serviceName,
  ),
  'credentials-file': {
    ...path('FILE', 'user:secret lines (secret: a password or a hash-password hash)'),
    reload: 'file',
  },
  'max-auth-failures': whole(
    'N',
    [0, 1_000_000],
    DEFAULTS.maxAuthFailures,
    'failed logins per client address (IPv6: per /64) before 429; 0: off (default {default})',
    { name: 'maxAuthFailures', from: (value) => value },
  ),
  'max-user-failures': whole(
    'N',
    [0, 1_000_000],
    DEFAULTS.maxUserFailures,
    'failed logins per username, from any address, before only clients that logged\nin from their address before are checked; 0: off (default {default})',
    { name: 'maxUserFailures', from: (value) => value },
  ),
  'max-global-failures': whole(
    'N',
    [0, 1_000_000],
    DEFAULTS.maxGlobalFailures,
    '... and in all, for any username (default {default})',
    { name: 'maxGlobalFailures', from: (value) => value },
  ),
  'max-unauthenticated': whole(
    'N',
    [0, 1_000_000],
    DEFAULTS.maxUnauthenticated,
    'requests without credentials per address, not followed by a login (default {default})',
    { name: 'maxUnauthenticated', from: (value) => value },
  ),
  'auth-failure-window': whole(
    'SEC',
    [1, 86_400],
    DEFAULTS.authFailureWindowMs / 1000,
    'the window all of these are counted in (default {default})',
    { name: 'authFailureWindowMs', from: seconds },
  ),
  socket: path('PATH', 'listen on this Unix socket instead of a port (for a proxy on this machine)', 'a path'),
  'socket-mode': row<number>(
    {
      placeholder: 'MODE',
      help: 'its permissions, octal (default {default}: owner and group may connect)',
      parse: (value, flag) => {
        if (!/^0?[0-7]{3}$/.test(value)) throw usage(`${flag} must be octal permissions such as 660, not '${value}'`);
        return Number.parseInt(value, 8);
      },
      show: (mode) => mode.toString(8),
    },
    0o660,
  ),
  'socket-group': text(
    'GROUP',
    "its group, e.g. the proxy's (www-data); the service user must be a member",
    'a group name or number',
  ),
  'admin-port': whole(
    'PORT',
    [0, 65_535],
    undefined,
    'serve /live, /ready and /metrics on this port, without credentials (default: off)',
  ),
  'admin-host': textOr('HOST', '127.0.0.1', '... on this address (default {default})'),
  'admin-socket': path(
    'PATH',
    "... or on this Unix socket (--socket's mode and group; else 660, the service's group)",
    'a path',
  ),
  'trust-proxy': row<string[]>(
    {
      placeholder: 'ADDRESS,...',
      help: "take the client address from X-Forwarded-For, only from these proxy addresses\n(a --socket's peer is trusted without this)",
      parse: readTrustProxy,
    },
    [],
  ),
  'log-format': oneOf(
    'text|json',
    ['text', 'json'] as const,
    'text',
    'log lines as text with an ISO time first, or one JSON object each (default {default})',
  ),
  'cors-origin': {
    ...row<string[]>(
      {
        placeholder: 'ORIGIN',
        help: 'let web pages from ORIGIN call the API (CORS), e.g. https://app.example; repeatable',
        parse: (value, flag) => {
          resolveOptions({ corsOrigins: [value] }, refusedAs(flag));
          return [value];
        },
        option: { name: 'corsOrigins', from: (value) => value },
      },
      [],
    ),
    repeatable: true,
  },
  workers: whole('N', [1, 64], 1, 'serve from N processes, each with its own read-only connection (default {default})'),
  'tls-cert': { ...path('FILE', 'serve HTTPS with this PEM certificate (chain) ...'), reload: 'file' },
  'tls-key': { ...path('FILE', '... and this PEM private key'), reload: 'file' },
  'tls-min-version': oneOf(
    '1.2|1.3',
    ['1.2', '1.3'] as const,
    '1.2',
    'the oldest TLS version a client may use (default {default}; ECDHE with AEAD only)',
  ),
  'headers-timeout': whole(
    'SEC',
    [1, 3600],
    10,
    'a client must have sent its headers within this (at most --request-timeout), checked each second (default {default})',
  ),
  'request-timeout': whole('SEC', [1, 3600], 30, '... and its whole request within this (default {default})'),
  'keep-alive-timeout': whole(
    'SEC',
    [1, 3600],
    5,
    'an idle keep-alive connection closes after this (default {default})',
  ),
  'send-timeout': whole(
    'SEC',
    [1, 3600],
    30,
    'a connection whose client reads nothing of an answer for this long is closed (default {default})',
  ),
  'search-timeout': whole(
    'SEC',
    [1, 3600],
    10,
    "an open of a book's file, and a search over views, gets at most this, then 500 (default {default})",
  ),
} as const;

export type Flag = keyof typeof SETTINGS;

/**
 * The settings of a book, the rows whose `reload` is `book`, so that a reload applies what the
 * settings' page says it does: given at the top (or by a flag or variable) they are the one
 * book of --db; a configuration file's `[book NAME]` section holds them and its `users`
 * (bin/config/config-file.ts).
 */
export const BOOK_SETTINGS: readonly Flag[] = (Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>)
  .filter(([, setting]) => setting.reload === 'book')
  .map(([flag]) => flag);

/**
 * Where a listener listens, one choice of two halves: a Unix socket, or host and port. The
 * highest source that says anything of it decides (bin/config/configuration.ts, gatherSettings).
 */
export const LISTENER_CHOICES: ReadonlyArray<readonly [socket: readonly Flag[], tcp: readonly Flag[]]> = [
  [
    ['socket', 'socket-mode', 'socket-group'],
    ['host', 'port'],
  ],
  [['admin-socket'], ['admin-port', 'admin-host']],
];

type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** The value of every setting, given or by default, under the flag's name in camelCase. */
export type SettingValues = {
  -readonly [F in Flag as Camel<F>]: (typeof SETTINGS)[F] extends Setting<infer T> ? T : never;
};

/** `max-user-failures` → `maxUserFailures`. */
export function camel<F extends Flag>(flag: F): Camel<F> {
  return flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()) as Camel<F>;
}

/**
 * One setting read by its row from what was given (a flag's text, or a repeated flag's
 * texts, as bin/config/configuration.ts gathers them from the flags, the variables and the file);
 * its default when nothing was.
 */
export function readSetting(
  flag: Flag,
  setting: Setting<unknown>,
  given: string | boolean | readonly string[] | undefined,
): unknown {
  if (given === undefined) return setting.default;
  if (typeof given === 'boolean') return given;
  if (typeof given === 'string') return setting.parse(given, `--${flag}`);
  return given.flatMap((value) => setting.parse(value, `--${flag}`) as unknown[]);
}

/** The createHandler options the settings feed, as the library wants them. */
export function handlerOptions(values: SettingValues): HandlerOptions {
  const options: Record<string, unknown> = {};
  for (const [flag, setting] of Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>) {
    if (setting.option !== undefined) options[setting.option.name] = setting.option.from(values[camel(flag)]);
  }
  return options as HandlerOptions;
}

/** --help's Options: each setting's flag and placeholder, then its words with the default written in. */
export function optionsHelp(): string {
  const lines: string[] = [];
  for (const [flag, setting] of Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>) {
    const head = `--${flag}${setting.placeholder === undefined ? '' : ` ${setting.placeholder}`}`;
    const words = setting.help.replace('{default}', () => setting.show(setting.default)).split('\n');
    lines.push(`  ${head.padEnd(27)}${words[0]}`, ...words.slice(1).map((line) => `${' '.repeat(29)}${line}`));
  }
  return `${lines.join('\n')}\n`;
}
