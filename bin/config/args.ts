// argv, the environment and the configuration file → what the CLI is asked to do. Pure: it
// reads no file (the caller reads --config, when asked, and --credentials-file); every problem is a
// CliError with one line for the user. Each setting is a row of bin/config/settings.ts (its flag,
// default, bounds, words and parser); what is here is the commands, and the rules between
// settings.

import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { errorCode } from '../../lib/internal.js';
import { messageOf } from '../base/index.js';
import type { AppIn, TableNames } from '../files/index.js';
import type { ConfigFile } from './config-file.js';
import { gatherSettings, judgeOutranked, type Origin, placeError, type Values } from './configuration.js';
import { nearestName } from './nearest-name.js';
import {
  appWrittenIn,
  type CheckConfig,
  checkMapping,
  type RunningCredentials,
  readServeCommand,
  type ServeCommand,
  settingsOf,
} from './serve-command.js';
import { type Setting, TRUST_PROXY_NEEDS_ADDRESSES, usage } from './setting-kinds.js';
import { type Flag, optionsHelp, readSetting, SETTINGS } from './settings.js';

export type Command =
  | ServeCommand
  | {
      command: 'check';
      db: string;
      app: string | undefined;
      tables: Partial<TableNames>;
      /** Where its app is written (serve-command.ts, appWrittenIn). */
      appIn: AppIn;
      /** --search-timeout: `check` of one file gets stuckLimitMs of this (bin/commands/check.ts, checkInGuard). */
      searchMs: number;
    }
  | CheckConfig
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
  booking-search-server check --config FILE [--credentials-file F]
                                              the same for every book of FILE, and which fit
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
read in ps. SIGHUP or POST /-/reload (admin listener) re-reads the credentials, the
configuration and the TLS certificate and key.
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

/** The configuration file named by `--config` (its value, `flag`) or its variable; `undefined`: none is named. */
type ConfigReader = (flag: string | undefined) => ConfigFile | undefined;

/**
 * argv, the environment and the configuration file (read by `readConfig`, only for a command
 * that reads settings: help, a version or a hash needs none, and a wrong command line is told
 * before the file is read) → what the command is asked to do. A value refused is named where
 * it was written: the flag, the variable or the file's line. `running`: on a reload, the
 * credentials read until the next start (Reread).
 */
export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  readConfig?: ConfigReader,
  running?: RunningCredentials,
): Command {
  // Read loosely before the flags are judged (unknown ones taken for switches): a word after
  // hash-password may be its password, even one starting with --; a flag's value is no verb.
  const loose = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true });
  if (loose.positionals[0] === 'hash-password') return answeredFirst(loose.values) ?? hashPasswordCommand(argv);
  const parsed = parse(argv);
  const { values: flags, positionals } = parsed;
  const first = answeredFirst(flags);
  if (first !== undefined) return first;
  const [verb, ...extra] = positionals;
  if (verb !== undefined && !(verb === 'check' && extra.length === 0)) {
    throw usage(
      verb === 'check' ? `unexpected argument '${extra[0]}'` : `unexpected argument '${verb}'${commandHint(verb)}`,
    );
  }
  const given = flags as Values;
  const config = readConfig?.(typeof given.config === 'string' ? given.config : undefined);
  const gathered = gatherSettings(given, CONFIGURABLE, env, config);
  let command: Command;
  try {
    command = interpret(gathered.values, verb, env, config, gathered.origins, running);
  } catch (error: unknown) {
    throw placeError(error, gathered.origins);
  }
  // What serves (or check --config judges) reads every setting: the file's outranked ones too.
  if (command.command === 'serve' || command.command === 'check-config') {
    judgeOutranked(config, CONFIGURABLE, gathered.origins, (key, given) =>
      readSetting(key as Flag, SETTINGS[key as Flag] as Setting<unknown>, given),
    );
  }
  return command;
}

function interpret(
  given: Values,
  verb: string | undefined,
  env: NodeJS.ProcessEnv,
  config: ConfigFile | undefined,
  origins: ReadonlyMap<string, Origin>,
  running: RunningCredentials | undefined,
): Command {
  const setting = settingsOf(given);
  // A configuration file, with books or flat (`db = …`, one book), is judged whole by
  // `check --config`: its credentials too, as the service would read them.
  if (verb === 'check' && config === undefined) {
    const db = setting('db');
    if (db === undefined) throw usage('check needs --db FILE or --config FILE');
    const tables = setting('table-names');
    const searchMs = 1000 * setting('search-timeout');
    const app = checkMapping(setting('app'), tables);
    return { command: 'check', db, app, tables, appIn: appWrittenIn(origins), searchMs };
  }
  // A flat file's one book is its db: the demo (or nothing) would be a book with no file to judge.
  if (verb === 'check' && config?.books.length === 0 && setting('db') === undefined)
    throw usage('check needs --db FILE, or a db or [book NAME] sections in --config FILE');
  return readServeCommand(setting, given, { verb, env, config, origins, configurable: CONFIGURABLE, running });
}

/**
 * Whether argv asks for the service (no verb, no --help, --version or --openapi: `--db`,
 * `--config`, …) rather than a command that answers once (check, hash-password, help, a
 * command line that does not parse), as parseCommandLine reads it: the service's refusal is
 * a log line, and its stdout the access log; a command's refusal is a plain line for the
 * person who typed it.
 */
export function asksForTheService(argv: readonly string[]): boolean {
  try {
    const { values, positionals } = parse(argv);
    return positionals.length === 0 && values.help !== true && values.version !== true && values.openapi !== true;
  } catch {
    return false;
  }
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: negativeValuesJoined(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error: unknown) {
    // parseArgs explains at length; one short line is what a terminal needs.
    const message = messageOf(error);
    const option = /'(-[^'\s]*)/.exec(message)?.[1];
    const code = errorCode(error);
    if (option?.startsWith('--trust-proxy')) throw usage(TRUST_PROXY_NEEDS_ADDRESSES);
    // The unknown flag whole, as typed (a space, a quote or a newline in it too): usage escapes it.
    const unknown = /^Unknown option '(.*)'(?:\. To specify a positional|$)/s.exec(message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown)
      throw usage(`unknown option ${unknown}${flagHint(unknown)}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) throw usage(`option ${option} needs a value`);
    throw usage(message.split('\n')[0] ?? message);
  }
}

/** "; did you mean --workers?" for `--wokers`, as for a variable or a key of the file (nearest-name.ts). */
function flagHint(unknown: string): string {
  if (!unknown.startsWith('--')) return '';
  const nearest = nearestName(unknown.slice(2), Object.keys(OPTIONS));
  return nearest === undefined ? '' : `; did you mean --${nearest}?`;
}

/** The flags that answer before anything else on the command line is judged, whatever it holds. */
function answeredFirst(flags: Readonly<Record<string, unknown>>): Command | undefined {
  if (flags['help'] === true) return { command: 'help' };
  if (flags['version'] === true) return { command: 'version' };
  if (flags['openapi'] === true) return { command: 'openapi' };
  return undefined;
}

/** "; did you mean check?" for `chek`: the commands, as flagHint the flags. */
function commandHint(verb: string): string {
  const nearest = nearestName(verb, ['check', 'hash-password']);
  return nearest === undefined ? '' : `; did you mean ${nearest}?`;
}

/**
 * `hash-password` reads standard input and nothing else: any other argument is refused rather
 * than ignored: one of the command's flags is named, without its value; any other word is not
 * repeated, for it is likely the password.
 */
function hashPasswordCommand(argv: readonly string[]): Command {
  const others = [...argv];
  others.splice(others.indexOf('hash-password'), 1);
  const other = others[0];
  const flag = other?.startsWith('--') === true ? other.slice(2).split('=')[0] : undefined;
  if (flag !== undefined && Object.hasOwn(OPTIONS, flag)) throw usage(`unexpected argument '--${flag}'`);
  if (other !== undefined)
    throw usage(
      'hash-password takes no password as an argument (it would be kept in the shell history and shown in the process list): it reads it from standard input, or asks for it on a terminal',
    );
  return { command: 'hash-password' };
}

// parseArgs takes `-1` after `--port` for an option of its own and says --port needs a
// value; a value that looks like a negative number is the flag's, judged by its setting's
// rule as the same value in a variable is. Any other value starting with `-` still needs
// `--flag=value`.
const NEGATIVE_NUMBER = /^-\.?[0-9]/;

/** `argv` with each `--flag -N` of a flag that takes a value written `--flag=-N`. */
function negativeValuesJoined(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    const next = argv[index + 1];
    if (arg === '--') return [...args, ...argv.slice(index)];
    const option = arg.startsWith('--') ? (OPTIONS as ParseArgsOptionsConfig)[arg.slice(2)] : undefined;
    if (option?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      args.push(`${arg}=${next}`);
      index += 1;
    } else args.push(arg);
  }
  return args;
}

/**
 * How long SQLite may hold a process before it is ended, six times --search-timeout: the
 * service's event loop (bin/base/last-resort.ts), and `check`'s process that opens a file.
 */
export const stuckLimitMs = (searchMs: number): number => 6 * searchMs;
