// The configuration file (--config FILE), as PostgREST's and git's are written by hand:
//
//   # a comment line
//   port = 8080                         the service's settings: the long flags' names without --
//   credentials-file = /etc/booking-search-server/credentials
//
//   [book mueller]                      one section a book, its name in /status and the logs
//   db = /srv/mueller/kasse.sqlite
//   base-path = /mueller
//   users = mueller, steuerbuero        absent: every user of the credentials
//
// Grammar (UTF-8, its BOM read away by readTextFile; one line each, a CR before its end ignored):
//   line    = blank / comment / section / setting
//   comment = *WSP "#" *any
//   section = *WSP "[" *WSP "book" 1*WSP name *WSP "]" *WSP
//   name    = quoted / 1*( any but "]" and "\"" )       trimmed
//   setting = *WSP key *WSP "=" *WSP value *WSP
//   key     = lower-case letter *( lower-case letter / digit / "-" )
//   value   = quoted / *any                             trimmed; empty is an error
//   quoted  = DQUOTE *( any but DQUOTE and "\" / "\" any ) DQUOTE
//             \" and \\ stand for " and \, any other \ for itself, as in a shell's double
//             quotes: "C:\Users\me\kasse.mmb" is a Windows path (a UNC path's \\ is written \\\\)
//
// This module reads the file's structure: which keys, in which section, on which line.
// What a value means is judged by whoever knows the setting, and names the line it got.
// Untrusted text never throws here: the parser returns the configuration or one message
// naming the file and the line.

import path, { dirname, resolve } from 'node:path';
import { CliError } from '../base/index.js';
import { ensureOnlyOwnerCanChange, readTextFile } from '../files/index.js';
import { nearestName } from './nearest-name.js';
import { HOME_SHORTHAND } from './setting-kinds.js';
import { BOOK_SETTINGS, type Flag, SETTINGS } from './settings.js';

/** One `key = value` line. */
export interface ConfigEntry {
  readonly key: string;
  /** Unquoted and trimmed; never empty. */
  readonly value: string;
  /** Its line in the file, from 1. */
  readonly line: number;
}

/** A `[book NAME]` section. */
export interface BookSection {
  readonly name: string;
  /** The line of its `[book NAME]`. */
  readonly line: number;
  readonly entries: readonly ConfigEntry[];
}

export interface ConfigFile {
  /** The file's path as given, for messages. */
  readonly file: string;
  /** The keys before the first section: the service's settings. */
  readonly service: readonly ConfigEntry[];
  readonly books: readonly BookSection[];
}

export type ParsedConfig = { ok: true; config: ConfigFile } | { ok: false; message: string };

/** The keys a `[book NAME]` section may hold: a book's settings (bin/config/settings.ts) and its users. */
export const BOOK_KEYS: readonly string[] = [...BOOK_SETTINGS, 'users'];

// Anchored, bounded: a key is a long flag's name; a line is not a novel.
// Every pattern here matches in one pass: no two parts of one can take the same characters,
// so no line makes one backtrack (a line is cut at '=' or at white space by hand instead).
const KEY = /^[a-z][a-z0-9-]{0,39}$/;
const QUOTED = /^"((?:[^"\\]|\\.)*)"$/;
const MAX_LINE_CHARS = 4096;
/** What a refusal of a value that holds ` #` adds: the file has no comment after a value. */
export const COMMENT_HINT = '# starts a comment only at the start of a line';
// A comment after a value, as other formats allow: whitespace, then `#`.
export const TRAILING_COMMENT = /\s#/;

/**
 * The refusal of `value` as said of the configuration file: a value that holds ` #` (a comment
 * after it, as other formats allow) adds COMMENT_HINT, and drops a proposed value, which would
 * keep the comment's words in it (`use /weber-neu instead`: a URL no client uses).
 */
export function refusalOfValue(refusal: string, value: string): string {
  if (!TRAILING_COMMENT.test(value)) return refusal;
  return `${refusal.replace(/; use \S+ instead$/, '')} (${COMMENT_HINT})`;
}

/**
 * The structure of a configuration file's `text`: the service's entries and the books, or
 * the first problem as `FILE:LINE: what is wrong`. `serviceKeys` are the keys allowed
 * before the first section (the flags' names); a section allows BOOK_KEYS.
 */
export function parseConfig(text: string, file: string, serviceKeys: ReadonlySet<string>): ParsedConfig {
  const service: ConfigEntry[] = [];
  const books: Array<{ name: string; line: number; entries: ConfigEntry[] }> = [];
  /** Each book's name → the line of its section: a name given again is found at once. */
  const sectionLines = new Map<string, number>();
  const lines = text.split('\n');
  const at = (line: number, problem: string): ParsedConfig => ({ ok: false, message: `${file}:${line}: ${problem}` });

  for (let index = 0; index < lines.length; index += 1) {
    const number = index + 1;
    const raw = lines[index] ?? '';
    const line = (raw.endsWith('\r') ? raw.slice(0, -1) : raw).trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.length > MAX_LINE_CHARS) return at(number, `the line is longer than ${MAX_LINE_CHARS} characters`);

    if (line.startsWith('[')) {
      const section = splitSection(line);
      if (section === undefined) return at(number, 'a section is written [book NAME]');
      if (section.kind !== 'book')
        return at(number, `unknown section [${section.kind}]: a section is written [book NAME]`);
      const name = unquote(section.name);
      if (name === undefined || name === '') return at(number, 'a section is written [book NAME]; the name is missing');
      const first = sectionLines.get(name);
      if (first !== undefined) return at(number, `book '${name}' is given again (first on line ${first})`);
      sectionLines.set(name, number);
      books.push({ name, line: number, entries: [] });
      continue;
    }

    const equals = line.indexOf('=');
    if (equals === -1) return at(number, 'expected key = value, [book NAME] or a # comment');
    const key = line.slice(0, equals).trimEnd();
    const book = books.at(-1);
    if (!KEY.test(key)) {
      // Spelt as a flag, with capitals or underscores: what to write for the key it spells, if any.
      const spelt = key.replace(/^-+/, '').toLowerCase().replaceAll('_', '-');
      const hint = KEY.test(spelt) ? advice(spelt, book?.name, serviceKeys) : '';
      return at(number, `'${key}' is not a key: keys are the long flags' names without --${hint}`);
    }
    if (book === undefined ? !serviceKeys.has(key) : !BOOK_KEYS.includes(key)) {
      return at(number, unknownKey(key, book?.name, serviceKeys));
    }
    const given = line.slice(equals + 1).trimStart();
    const value = unquote(given);
    if (rawNetworkPath(given)) {
      return at(
        number,
        `${key} starts with one backslash (in quotes \\\\ is one): a network path or pipe in quotes is written "\\\\\\\\server\\\\…", or leave it unquoted`,
      );
    }
    if (value === undefined && escapedClosingQuote(given)) {
      return at(
        number,
        `the value of ${key} ends in \\", which in quotes is a quote inside, not the closing one: end a path in quotes with \\\\ (one backslash), or leave it unquoted`,
      );
    }
    if (value === undefined) {
      return at(
        number,
        `the value of ${key} starts with " but is not one quoted string (write \\" for a quote inside)`,
      );
    }
    if (value === '') return at(number, `${key} needs a value`);
    // A path is not judged until it is opened, and then "no such file" names the whole text:
    // said here, at its line. A path that holds ` #` is written in quotes.
    if (SETTINGS[key as Flag]?.path === true && !given.startsWith('"') && TRAILING_COMMENT.test(value)) {
      return at(
        number,
        `${key} holds ' #', but ${COMMENT_HINT}: put the comment on a line of its own, or quote the path`,
      );
    }
    const entries = book === undefined ? service : book.entries;
    const first = entries.find((entry) => entry.key === key);
    if (first !== undefined) return at(number, `${key} is given again (first on line ${first.line})`);
    entries.push({ key, value, line: number });
  }
  return { ok: true, config: { file, service, books } };
}

/** Reads and parses `file`; every problem is a CliError naming the file (and the line). */
export function readConfigFile(file: string, serviceKeys: ReadonlySet<string>): ConfigFile {
  // Whoever can change it chooses the files served and who may read them (bin/files/file-safety.ts).
  ensureOnlyOwnerCanChange(`configuration file ${file}`, file);
  const text = readTextFile(`configuration file ${file}`, file);
  const parsed = parseConfig(text, file, serviceKeys);
  if (!parsed.ok) throw new CliError(parsed.message);
  return fromFolder(parsed.config);
}

/**
 * `config` with each relative path (a setting's whose row says `path`) made absolute from
 * the file's folder, where the admin who wrote it looks, whatever folder the service starts
 * in (docs/settings.md); every message then names the file it means.
 */
function fromFolder(config: ConfigFile): ConfigFile {
  const folder = dirname(resolve(config.file));
  const absolute = (entry: ConfigEntry): ConfigEntry =>
    SETTINGS[entry.key as Flag]?.path === true ? { ...entry, value: fromFolderPath(folder, entry.value) } : entry;
  return {
    ...config,
    service: config.service.map(absolute),
    books: config.books.map((book) => ({ ...book, entries: book.entries.map(absolute) })),
  };
}

/**
 * A path written in a file in `folder`, as `paths` (the platform's) finds it. On Windows it is
 * resolved as Windows would: `\Buchhaltung\kasse.sqlite` is on the drive of the folder, not of
 * the working directory. Elsewhere an absolute path stays as written: `..` after a symbolic link
 * is the kernel's to follow, not to be cut away.
 */
export function fromFolderPath(folder: string, value: string, paths: typeof path = path): string {
  // A shell's `~` stays as written, for the setting to refuse by its name.
  if (HOME_SHORTHAND.test(value)) return value;
  return paths === path.win32 || !paths.isAbsolute(value) ? paths.resolve(folder, value) : value;
}

/**
 * A trimmed `[KIND NAME]` line as its kind and its name (trimmed, maybe empty), or
 * `undefined` when it is not one: no closing `]`, or nothing inside.
 */
function splitSection(line: string): { kind: string; name: string } | undefined {
  if (!line.endsWith(']')) return undefined;
  const inside = line.slice(1, -1).trim();
  if (inside === '') return undefined;
  const space = inside.search(/\s/);
  if (space === -1) return { kind: inside, name: '' };
  return { kind: inside.slice(0, space), name: inside.slice(space + 1).trim() };
}

/**
 * Whether a quoted value is a network path or pipe pasted as Explorer shows it: `"\\server\share"`
 * unquotes to `\server\share`, which names no file. Its sign is a backslash that escapes nothing
 * beside the leading `\\`; a value whose backslashes are all doubled (`"\\Buchhaltung\\kasse"`,
 * a path from the root of the drive) was escaped on purpose and is taken as written.
 */
function rawNetworkPath(given: string): boolean {
  return (
    /^"\\\\[^\\]/.test(given) &&
    given
      .slice(1)
      .replace(/\\["\\]/g, '')
      .includes('\\')
  );
}

/** A quoted value whose last `"` follows an odd run of backslashes: `"C:\Kasse\"`, a folder as Explorer copies it. */
function escapedClosingQuote(given: string): boolean {
  if (!given.startsWith('"') || !given.endsWith('"') || given.length < 3) return false;
  let backslashes = 0;
  while (given[given.length - 2 - backslashes] === '\\') backslashes += 1;
  return backslashes % 2 === 1;
}

/** `text` without its quotes and escapes when quoted, else as it is; `undefined` when the quoting is broken. */
function unquote(text: string): string | undefined {
  if (!text.startsWith('"')) return text;
  const quoted = QUOTED.exec(text);
  return quoted === null ? undefined : (quoted[1] ?? '').replace(/\\(["\\])/g, '$1');
}

function unknownKey(key: string, book: string | undefined, serviceKeys: ReadonlySet<string>): string {
  const hint = advice(key, book, serviceKeys);
  if (book !== undefined) return `unknown key ${key} in [book ${book}]: a book holds ${BOOK_KEYS.join(', ')}${hint}`;
  if (key === 'users') return 'users belongs in a [book NAME] section';
  return `unknown key ${key}: the keys are the long flags' names without -- (see --help)${hint}`;
}

/**
 * What to write for `key` in a book's section (`book`) or before the first: where a key of the
 * other place goes, else the key of this place nearest to it; '' when none is near.
 */
function advice(key: string, book: string | undefined, serviceKeys: ReadonlySet<string>): string {
  const here = book === undefined ? [...serviceKeys] : BOOK_KEYS;
  // A book is named by its section: the service's name is the realm of a path that names no book.
  if (key === 'name' && book !== undefined) return `; a book's name is its section's: [book NAME]`;
  if (!here.includes(key) && book !== undefined && serviceKeys.has(key))
    return `; ${key} is the service's: put it before the first section`;
  if (book === undefined && key === 'users') return '; users belongs in a [book NAME] section';
  const nearest = nearestName(key, here);
  return nearest === undefined ? '' : `; did you mean ${nearest}?`;
}
