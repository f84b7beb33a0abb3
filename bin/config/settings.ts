// The command's settings, one row each: the flag, what --help says of it, its default, its
// bounds, how its value is read from text, and the library option it feeds. The flag is
// also the configuration file's key and, as BOOKING_SEARCH_ and the flag in capitals with _
// for - (bin/config/configuration.ts), the variable's name; in the program the value is the flag
// in camelCase (--max-user-failures, maxUserFailures, the library's maxUserFailures).
// bin/config/args.ts derives from this table parseArgs's options, the Options of --help, the
// defaults and the values' types, and reads every value through its row;
// test/unit/settings.test.ts fails on a copy that drifts.

import type { HandlerOptions } from '../../lib/index.js';
import {
  APP_NAMES,
  basePathRefusal,
  canonicalAddress,
  DEFAULTS,
  originProblem,
  SERVICE_NAME,
  TABLE_NAME,
  type TableNames,
} from '../../lib/internal.js';
import { CliError } from '../base/index.js';

/** One setting. `T` is its value's type once read (the default when none is given). */
export interface Setting<T> {
  /** What --help writes after the flag (`N`, `FILE`); `undefined` for a switch, which takes no value. */
  readonly placeholder: string | undefined;
  /** --help's words for it; a line break goes on under them; `{default}` is where the default is written. */
  readonly help: string;
  /** The value when none is given. */
  readonly default: T;
  /** How --help writes the default. */
  readonly show: (value: T) => string;
  /** A whole number's lowest and highest value; `undefined` for any other setting. */
  readonly bounds: readonly [min: number, max: number] | undefined;
  /**
   * Reads one value written as text (on the command line, in a variable or in the file);
   * throws a usage error naming `flag` (`--port`) when it is not one. A repeatable
   * setting reads each of its values so and collects them.
   */
  readonly parse: (text: string, flag: string) => T;
  /** Whether it may be given more than once (its values are a list; a variable or the file gives them comma-separated). */
  readonly repeatable: boolean;
  /** Whether a variable or the configuration file may give it: not a switch, nor --config itself. */
  readonly configurable: boolean;
  /**
   * What a reload (SIGHUP) does with it: `restart`, nothing (it takes effect at the next
   * start); `file`, the file it names is read again (a new path waits for the next start);
   * `book`, a book's key that a reload of the configuration file applies.
   */
  readonly reload: Reload;
  /** The createHandler option it is passed to, as the library wants it; `undefined`: the command's own. */
  readonly option: { readonly name: keyof HandlerOptions; readonly from: (value: T) => unknown } | undefined;
}

export type Reload = 'restart' | 'file' | 'book';

type Parser<T> = (text: string, flag: string) => T;

interface Row<T> {
  placeholder: string;
  help: string;
  parse: Parser<T>;
  show?: (value: T) => string;
  bounds?: readonly [number, number];
  option?: Setting<T>['option'];
}

function row<T>(fields: Row<T>, fallback: T): Setting<T> {
  return {
    placeholder: fields.placeholder,
    help: fields.help,
    default: fallback,
    show: fields.show ?? String,
    bounds: fields.bounds,
    parse: fields.parse,
    repeatable: false,
    configurable: true,
    reload: 'restart',
    option: fields.option,
  };
}

/** Text, as given; `none` when it must not be empty. */
function text(placeholder: string, help: string, needs?: string): Setting<string | undefined> {
  return row<string | undefined>({ placeholder, help, parse: nonEmpty(needs) }, undefined);
}

/** Text with a default. */
function textOr(placeholder: string, fallback: string, help: string, show?: (value: string) => string) {
  return row<string>({ placeholder, help, parse: nonEmpty(), ...(show === undefined ? {} : { show }) }, fallback);
}

function nonEmpty(needs?: string): Parser<string> {
  return (value, flag) => {
    if (needs !== undefined && value === '') throw usage(`${flag} needs ${needs}`);
    return value;
  };
}

/** A whole number from `min` to `max`. */
function whole<D extends number | undefined>(
  placeholder: string,
  [min, max]: readonly [number, number],
  fallback: D,
  help: string,
  option?: Setting<number | D>['option'],
): Setting<number | D> {
  const parse: Parser<number> = (value, flag) => {
    const number = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
    if (!(number >= min && number <= max))
      throw usage(`${flag} must be a whole number from ${min} to ${max}, not '${value}'`);
    return number;
  };
  return row<number | D>({ placeholder, help, parse, bounds: [min, max], ...(option ? { option } : {}) }, fallback);
}

/** One of `choices`. */
function oneOf<C extends string, D extends C | undefined>(
  placeholder: string,
  choices: readonly C[],
  fallback: D,
  help: string,
): Setting<C | D> {
  const named = choices.length === 2 ? choices.join(' or ') : `one of ${choices.join(', ')}`;
  const parse: Parser<C> = (value, flag) => {
    if (!(choices as readonly string[]).includes(value)) throw usage(`${flag} must be ${named}, not '${value}'`);
    return value as C;
  };
  return row<C | D>({ placeholder, help, parse }, fallback);
}

/** A flag without a value. */
function toggle(help: string): Setting<boolean> {
  return {
    ...row<boolean>({ placeholder: '', help, parse: () => true }, false),
    placeholder: undefined,
    configurable: false,
  };
}

const TABLE_KEYS = { entries: 'entries', categories: 'categories', payment_methods: 'paymentMethods' } as const;

/** `entries=kasse,categories=kat` → `{ entries: 'kasse', categories: 'kat' }`. */
export function readTableNames(value: string | undefined): Partial<TableNames> {
  if (value === undefined) return {};
  const names: Partial<TableNames> = {};
  for (const pair of value.split(',')) {
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

/**
 * Why `value` is no base path, after the setting's name (`must be a path such as /kasse …,
 * not '/kä' (…); use /kae instead`); `undefined` when it is one. The rule is the library's
 * (docs/API.md, Paths): what every client sends as it is written.
 */
export function basePathProblem(value: string): string | undefined {
  const refusal = basePathRefusal(value);
  if (refusal === undefined) return undefined;
  return `must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~, not '${value}' (${refusal.reason}); use ${refusal.instead} instead`;
}

export const TRUST_PROXY_NEEDS_ADDRESSES =
  "--trust-proxy needs your proxy's addresses, e.g. --trust-proxy 127.0.0.1,::1 (or --socket PATH, whose peer is the proxy)";

function readTrustProxy(value: string): string[] {
  const addresses = value.split(',').map((entry) => entry.trim());
  for (const address of addresses) {
    if (address === '') throw usage(TRUST_PROXY_NEEDS_ADDRESSES);
    if (canonicalAddress(address) === undefined)
      throw usage(`--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not '${address}'`);
  }
  return addresses;
}

const seconds = (value: number): number => 1000 * value;

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
  db: { ...text('FILE', 'the SQLite database of the bookkeeping application'), reload: 'book' },
  demo: toggle('an in-memory database with a few hundred sample bookings'),
  app: {
    ...oneOf(
      'NAME',
      APP_NAMES,
      undefined,
      `whose tables FILE holds: ${APP_NAMES.join(', ')} (default: what FILE's tables\nsay, else own; docs/applications.md)`,
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
        parse: (value, flag) => {
          const problem = basePathProblem(value);
          if (problem !== undefined) throw usage(`${flag} ${problem}`);
          return value;
        },
        show: (path) => path || 'none',
      },
      '',
    ),
    reload: 'book',
  },
  name: row<string>(
    {
      placeholder: 'NAME',
      help: 'service name in /status and the auth realm (default {default})',
      parse: (value, flag) => {
        if (!SERVICE_NAME.test(value))
          throw usage(
            `${flag} must be 1 to 100 printable ASCII characters (it is the realm of the login), not '${value}'`,
          );
        return value;
      },
    },
    DEFAULTS.serviceName,
  ),
  'credentials-file': {
    ...text('FILE', 'user:secret lines (secret: a password or a hash-password hash); SIGHUP re-reads it'),
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
  socket: text('PATH', 'listen on this Unix socket instead of a port (for a proxy on this machine)', 'a path'),
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
  'admin-socket': text(
    'PATH',
    "... or on this Unix socket (--socket's mode and group; else 660, the service's group)",
    'a path',
  ),
  'trust-proxy': row<string[]>(
    {
      placeholder: 'ADDRESS,...',
      help: "take the client address from X-Forwarded-For, only from these proxy addresses\n(a --socket's peer is trusted as the proxy without this)",
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
          const problem = originProblem(value);
          if (problem !== undefined) throw usage(`${flag} ${problem}`);
          return [value];
        },
        option: { name: 'corsOrigins', from: (value) => value },
      },
      [],
    ),
    repeatable: true,
  },
  workers: whole('N', [1, 64], 1, 'serve from N processes, each with its own read-only connection (default {default})'),
  'tls-cert': { ...text('FILE', 'serve HTTPS with this PEM certificate (chain) ...'), reload: 'file' },
  'tls-key': { ...text('FILE', '... and this PEM private key'), reload: 'file' },
  'tls-min-version': oneOf(
    '1.2|1.3',
    ['1.2', '1.3'] as const,
    '1.2',
    'the oldest TLS version a client may use (default {default}; ECDHE with AEAD only)',
  ),
  'headers-timeout': whole('SEC', [1, 3600], 10, 'a client must have sent its headers within this (default {default})'),
  'request-timeout': whole('SEC', [1, 3600], 30, '... and its whole request within this (default {default})'),
  'keep-alive-timeout': whole(
    'SEC',
    [1, 3600],
    5,
    'an idle keep-alive connection is closed after this (default {default})',
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
 * The settings of a book: given at the top (or by a flag or variable) they are the one book
 * of --db; a configuration file's `[book NAME]` section holds them and its `users`
 * (bin/config/config-file.ts).
 */
export const BOOK_SETTINGS: readonly Flag[] = ['db', 'app', 'table-names', 'base-path'];

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

export function usage(message: string): CliError {
  return new CliError(`${message} (see --help)`, 2);
}
