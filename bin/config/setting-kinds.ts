// The kinds of setting the table of settings (settings.ts) is written with: what a row
// holds, and how each kind of value (text, a whole number, one of a list, a switch, table
// names, proxies) is read from text, with the usage error that names the flag.

import { type HandlerOptions, resolveOptions } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import type { TableNames } from '../files/index.js';

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
  /** Whether it names a file or socket: a relative one in the configuration file is relative to the file's folder. */
  readonly path: boolean;
  /**
   * What a reload (SIGHUP) does with it: `restart`, nothing (it takes effect at the next
   * start); `file`, the running file is read again (a new path or a removed line waits for
   * the next start); `book`, a book's key that a reload of the configuration file applies
   * (these rows are BOOK_SETTINGS).
   */
  readonly reload: Reload;
  /** The createHandler option it is passed to, as the library wants it; `undefined`: the command's own. */
  readonly option: { readonly name: keyof HandlerOptions; readonly from: (value: T) => unknown } | undefined;
}

export type Reload = 'restart' | 'file' | 'book';

export type Parser<T> = (text: string, flag: string) => T;

interface Row<T> {
  placeholder: string;
  help: string;
  parse: Parser<T>;
  show?: (value: T) => string;
  bounds?: readonly [number, number];
  option?: Setting<T>['option'];
}

export function row<T>(fields: Row<T>, fallback: T): Setting<T> {
  return {
    placeholder: fields.placeholder,
    help: fields.help,
    default: fallback,
    show: fields.show ?? String,
    bounds: fields.bounds,
    parse: fields.parse,
    repeatable: false,
    configurable: true,
    path: false,
    reload: 'restart',
    option: fields.option,
  };
}

/** Text, as given; `none` when it must not be empty. */
export function text(placeholder: string, help: string, needs?: string): Setting<string | undefined> {
  return row<string | undefined>({ placeholder, help, parse: nonEmpty(needs) }, undefined);
}

/**
 * A file's or socket's path (docs/settings.md): in the configuration file, from the file's
 * folder. A `~` a shell would have expanded (quoted, or in the file or a variable) is refused,
 * not taken for a folder of that name.
 */
export function path(placeholder: string, help: string, needs?: string): Setting<string | undefined> {
  const given = nonEmpty(needs);
  const parse: Parser<string> = (value, flag) => {
    if (HOME_SHORTHAND.test(value))
      throw usage(`${flag} ${value}: a ~ is expanded by a shell, not here: write the whole path`);
    return given(value, flag);
  };
  return { ...row<string | undefined>({ placeholder, help, parse }, undefined), path: true };
}

/** A base path, as the library takes it. */
export const basePath: Parser<string> = (value, flag) => {
  resolveOptions({ basePath: value }, refusedAs(flag));
  return value;
};

/** `~`, `~/…`, `~user/…`: a home folder as a shell writes it (`~kasse.sqlite` is a file's name). */
export const HOME_SHORTHAND = /^~[\w.-]*[/\\]|^~$/;

/** Text with a default. */
export function textOr(placeholder: string, fallback: string, help: string, show?: (value: string) => string) {
  return row<string>({ placeholder, help, parse: nonEmpty(), ...(show === undefined ? {} : { show }) }, fallback);
}

export function nonEmpty(needs?: string): Parser<string> {
  return (value, flag) => {
    if (needs !== undefined && value === '') throw usage(`${flag} needs ${needs}`);
    return value;
  };
}

/** A whole number from `min` to `max`. */
export function whole<D extends number | undefined>(
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
export function oneOf<C extends string, D extends C | undefined>(
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
export function toggle(help: string): Setting<boolean> {
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
    resolveOptions({ tables: { [option]: name } }, refusedAs(`--table-names: '${name}'`));
    if (names[option] !== undefined) throw usage(`--table-names names ${key} twice`);
    names[option] = name;
  }
  return names;
}

export const TRUST_PROXY_NEEDS_ADDRESSES =
  "--trust-proxy needs your proxy's addresses, e.g. --trust-proxy 127.0.0.1,::1 (or --socket PATH, whose peer is the proxy)";

export function readTrustProxy(value: string): string[] {
  const addresses = value.split(',').map((entry) => entry.trim());
  for (const address of addresses) {
    if (address === '') throw usage(TRUST_PROXY_NEEDS_ADDRESSES);
    resolveOptions({ trustProxy: [address] }, () => {
      throw usage(`--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not '${address}'`);
    });
  }
  return addresses;
}

/**
 * A wrong command line, told as one line: the values it shows (a flag's, an argument) are
 * escaped where the line is printed or logged (bin/cli.ts, logText), so that a newline in one
 * cannot print a second line that reads like a log line of its own, nor a control sequence
 * reach the terminal.
 */
export function usage(message: string): CliError {
  return new CliError(`${message} (see --help)`, 2);
}

/** How a setting read from text is refused when the library would refuse it (resolveOptions): the usage error, `what` (the flag) first. */
export function refusedAs(what: string): (problem: string) => never {
  return (problem) => {
    throw usage(`${what} ${problem}`);
  };
}
