// Where each setting comes from (docs/operations.md, Many books): a flag, else its
// variable BOOKING_SEARCH_<FLAG> (as PostgREST's PGRST_<KEY>), else the configuration
// file; and the file's books, resolved against the credentials. A problem is named where
// it was written: the file and line, or the variable.
//
// Each setting's bounds and format are its row's in bin/config/settings.ts, what goes together is
// bin/config/args.ts's; this module only gathers the values as text and, when one is refused, says
// where it came from.

import { type Credentials, resolveOptions } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import type { BookConfig } from './book-config.js';
import { type BookSection, type ConfigEntry, type ConfigFile, refusalOfValue } from './config-file.js';
import { nearestName } from './nearest-name.js';
import { type Flag, LISTENER_CHOICES, SETTINGS } from './settings.js';

const PREFIX = 'BOOKING_SEARCH_';

export type Values = Record<string, string | string[] | boolean | undefined>;

/** Where a value was given: its flag, its variable, or a line of the file. */
export type Origin =
  | { readonly kind: 'flag' }
  | { readonly kind: 'environment'; readonly variable: string }
  | { readonly kind: 'file'; readonly file: string; readonly line: number };

/** `--base-path` → `BOOKING_SEARCH_BASE_PATH`. */
export function variableName(key: string): string {
  return `BOOKING_SEARCH_${key.toUpperCase().replaceAll('-', '_')}`;
}

/** The configuration file named by `--config` or BOOKING_SEARCH_CONFIG (an empty variable is none). */
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag ?? (env[variableName('config')] || undefined);
}

/** Variables the command reads by their own names, besides each setting's (variableName). */
const READ_BY_NAME = ['BOOKING_SEARCH_USER', 'BOOKING_SEARCH_PASSWORD', variableName('config')];

/**
 * The variables of `env` that start as a setting's do (BOOKING_SEARCH_) but name none of
 * `keys` nor a variable read by name: a typo such as BOOKING_SEARCH_SOKET would otherwise
 * be ignored without a word. Each with the nearest known name, when one is near. Empty
 * ones count as not set, as every variable does.
 */
export function strayVariables(
  env: NodeJS.ProcessEnv,
  keys: readonly string[],
): Array<{ variable: string; nearest: string | undefined }> {
  const known = [...keys.map(variableName), ...READ_BY_NAME];
  return Object.keys(env)
    .filter((variable) => variable.startsWith('BOOKING_SEARCH_') && env[variable] && !known.includes(variable))
    .sort()
    .map((variable) => {
      const nearest = nearestName(
        variable.slice(PREFIX.length),
        known.map((name) => name.slice(PREFIX.length)),
      );
      return { variable, nearest: nearest === undefined ? undefined : `${PREFIX}${nearest}` };
    });
}

/**
 * `flags` completed from the environment and then from the file's service part, for the
 * `settings` (each a key and whether it repeats); and where each value came from. A
 * repeated setting (`cors-origin`) is one comma-separated value in a variable or the file.
 */
export function gatherSettings(
  flags: Values,
  settings: ReadonlyArray<readonly [key: string, multiple: boolean]>,
  env: NodeJS.ProcessEnv,
  config: ConfigFile | undefined,
): { values: Values; origins: Map<string, Origin> } {
  const values: Values = { ...flags };
  const origins = new Map<string, Origin>();
  const inFile = new Map((config?.service ?? []).map((entry) => [entry.key, entry]));
  for (const [key, multiple] of settings) {
    if (flags[key] !== undefined) {
      origins.set(key, { kind: 'flag' });
      continue;
    }
    const variable = variableName(key);
    // docs/settings.md: an empty variable counts as not set.
    const fromEnvironment = env[variable] || undefined;
    const entry = inFile.get(key);
    const text = fromEnvironment ?? entry?.value;
    if (text === undefined) continue;
    values[key] = fromText(text, multiple);
    origins.set(
      key,
      fromEnvironment !== undefined
        ? { kind: 'environment', variable }
        : { kind: 'file', file: config?.file ?? '', line: entry?.line ?? 0 },
    );
  }
  for (const halves of LISTENER_CHOICES) dropOutranked(halves, values, origins);
  return { values, origins };
}

/** A value as text, as a flag would have given it: a repeated setting's is comma-separated. */
function fromText(text: string, multiple: boolean): string | string[] {
  return multiple ? text.split(',').map((part) => part.trim()) : text;
}

/**
 * Every setting of the file's service part that a flag or variable outranks, read by its row
 * all the same (`read`, as a flag's text): a file is judged whole, as `check --config` judges
 * it, whatever the command line it is started with. Throws the first refusal at its line.
 */
export function judgeOutranked(
  config: ConfigFile | undefined,
  settings: ReadonlyArray<readonly [key: string, multiple: boolean]>,
  origins: ReadonlyMap<string, Origin>,
  read: (key: string, given: string | string[]) => unknown,
): void {
  if (config === undefined) return;
  const multiple = new Map(settings);
  for (const entry of config.service) {
    if (origins.get(entry.key)?.kind === 'file') continue;
    placed(config.file, entry, () => read(entry.key, fromText(entry.value, multiple.get(entry.key) ?? false)));
  }
}

const RANK = { flag: 3, environment: 2, file: 1 } as const;

/**
 * One choice of `halves` (where a listener listens): the highest source that gives any of
 * them decides, and what a lower source gives of the other half is dropped without a word,
 * as a flag wins over a single setting's variable. A source giving both halves is left for
 * the rules between settings to refuse, unless a higher source decided.
 */
function dropOutranked(halves: ReadonlyArray<readonly string[]>, values: Values, origins: Map<string, Origin>): void {
  const rankOf = (origin: Origin | undefined): number => (origin === undefined ? 0 : RANK[origin.kind]);
  const rank = (keys: readonly string[]): number => Math.max(0, ...keys.map((key) => rankOf(origins.get(key))));
  const top = Math.max(...halves.map(rank));
  const deciding = halves.filter((half) => rank(half) === top);
  if (deciding.length !== 1) return;
  for (const half of halves) {
    if (half === deciding[0]) continue;
    for (const key of half) {
      delete values[key];
      origins.delete(key);
    }
  }
}

/**
 * `error` (a flag's refusal by bin/config/args.ts) said where the refused value was written, when
 * that was not a flag: `FILE:LINE: port must be …` or `BOOKING_SEARCH_PORT: --port must be …`.
 * Such a value is not the command line: exit code 1, as any other problem after it.
 */
export function placeError(error: unknown, origins: ReadonlyMap<string, Origin>): unknown {
  if (!(error instanceof CliError)) return error;
  const message = error.message.replace(/ \(see --help\)$/, '');
  // The settings are named before the value is quoted (`not '…'`, `"…" is not`); what follows
  // is the value as given, which names no setting whatever it holds.
  const quoted = message.search(/ ['"]/);
  const words = quoted === -1 ? message : message.slice(0, quoted);
  for (const match of words.matchAll(FLAG_NAME)) {
    const origin = origins.get(match[1] ?? '');
    if (origin === undefined || origin.kind === 'flag') continue;
    if (origin.kind === 'environment') return new CliError(`${origin.variable}: ${message}`);
    // In the file, keys are written without their dashes.
    const inFile = words.replace(FLAG_NAME, (flag, key: string) =>
      SETTINGS[key as Flag]?.configurable === true ? key : flag,
    );
    const value = message.slice(words.length);
    return new CliError(`${origin.file}:${origin.line}: ${refusalOfValue(inFile + value, value)}`);
  }
  return error;
}

const FLAG_NAME = /--([a-z][a-z0-9-]*)/g;

/** The error of a book's entry, at its line. */
function atEntry(file: string, entry: ConfigEntry | BookSection, problem: string): CliError {
  return new CliError(`${file}:${entry.line}: ${'value' in entry ? refusalOfValue(problem, entry.value) : problem}`);
}

/** How a book's `app` and `table-names` are read: bin/config/args.ts's rules for the flags. */
export interface MappingReaders {
  readTableNames(text: string | undefined): BookConfig['tables'];
  readApp(app: string | undefined, tables: BookConfig['tables']): string | undefined;
}

/**
 * The file's books, each checked where it was written: a name fit for a realm, a `db`, a
 * mapping, a base path given once in the file, and users named once. Throws a CliError
 * naming the file and line. Against `credentials` (`undefined`: not checked, for `check`
 * without the service's credentials), a named user they lack is a warning, not a refusal:
 * removing a user from the credentials ends its access at the next reload, whatever names
 * it still. A book none of whose users is in them is served to no one, /ready says so.
 */
export function resolveBooks(
  config: ConfigFile,
  credentials: readonly Credentials[] | undefined,
  readers: MappingReaders,
  credentialsSource?: string,
): { books: BookConfig[]; warnings: string[] } {
  const { file } = config;
  const known =
    credentials === undefined ? undefined : new Set(credentials.map(({ username }) => username.normalize('NFC')));
  const basePaths = new Map<string, number>();
  const warnings: string[] = [];
  const books = config.books.map((section): BookConfig => {
    const entry = (key: string): ConfigEntry | undefined => section.entries.find((e) => e.key === key);
    resolveOptions({ serviceName: section.name }, () => {
      throw atEntry(file, section, `the book's name '${section.name}' must be 1 to 100 printable ASCII characters`);
    });
    const db = entry('db');
    if (db === undefined) throw atEntry(file, section, `book '${section.name}' has no db = FILE`);
    // By the setting's own rule, as the file's service part is read: a shell's ~, a base path ending in /api/v1.
    const baseEntry = entry('base-path');
    for (const given of [db, baseEntry])
      if (given !== undefined)
        placed(file, given, () => SETTINGS[given.key as Flag].parse(given.value, `--${given.key}`));
    const tablesEntry = entry('table-names');
    const appEntry = entry('app');
    const tables = placed(file, tablesEntry, () => readers.readTableNames(tablesEntry?.value));
    const named = placed(file, appEntry ?? tablesEntry, () => readers.readApp(appEntry?.value, tables));
    const app = named ?? (Object.keys(tables).length > 0 ? 'own' : undefined);
    // As the book's handler will have it, without trailing slashes (its rule judged it above).
    const { basePath } = resolveOptions({ basePath: baseEntry?.value ?? '' });
    const first = basePaths.get(basePath);
    if (first !== undefined) {
      const shown = basePath === '' ? 'the base path "" (none given)' : `base-path ${basePath}`;
      throw atEntry(file, baseEntry ?? section, `${shown} is already the one of the book on line ${first}`);
    }
    basePaths.set(basePath, section.line);
    const usersEntry = entry('users');
    const read = usersEntry && readUsers(file, usersEntry, section.name, known, credentialsSource);
    if (read?.warning !== undefined) warnings.push(read.warning);
    return {
      name: section.name,
      db: db.value,
      dbOrigin: `${file}:${db.line}: book ${section.name}`,
      app,
      appIn: 'file',
      tables,
      basePath,
      users: read?.users,
      named: true,
    };
  });
  return { books, warnings };
}

/**
 * A book's `users =`, each named once, in Unicode NFC as the credentials' usernames are
 * compared; against `known`, those usernames, the warning of the names they lack.
 * Names, never secrets: the credentials' usernames are what the access log shows too. Which
 * credentials: a flag (the unit's ExecStart) wins over the file's own line.
 */
function readUsers(
  file: string,
  entry: ConfigEntry,
  book: string,
  known: ReadonlySet<string> | undefined,
  source: string | undefined,
): { users: string[]; warning?: string } {
  const users = entry.value.split(',').map((name) => name.trim().normalize('NFC'));
  for (const [index, user] of users.entries()) {
    if (user === '') throw atEntry(file, entry, 'users takes names separated by commas, such as mueller, buero');
    if (users.indexOf(user) < index) throw atEntry(file, entry, `user '${user}' is named twice`);
  }
  const absent = known === undefined ? [] : users.filter((user) => !known.has(user));
  if (absent.length === 0) return { users };
  const names = absent.map((user) => `'${user}'`).join(', ');
  const credentials = source === undefined ? 'the credentials' : `the credentials of ${source}`;
  const lacked = atEntry(
    file,
    entry,
    `${absent.length === 1 ? `user ${names} is` : `users ${names} are`} not in ${credentials}`,
  );
  const all = absent.length === users.length;
  const outcome = all
    ? `book ${book} names no other, so no one can log in to it (/ready names it) until one is`
    : `${absent.length === 1 ? 'it' : 'they'} cannot log in to book ${book}`;
  return { users, warning: `warning: ${lacked.message}: ${outcome}` };
}

/** `read()`, with a refusal (worded for the flag) placed at `entry`'s line. */
function placed<T>(file: string, entry: ConfigEntry | undefined, read: () => T): T {
  try {
    return read();
  } catch (error: unknown) {
    if (entry === undefined) throw error;
    throw placeError(error, new Map([[entry.key, { kind: 'file', file, line: entry.line } as Origin]]));
  }
}
