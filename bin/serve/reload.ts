// A reload (SIGHUP, POST /-/reload): the command read again and its books and credentials
// served; its result in one log line naming what asked for it, and in /metrics
// (booking_search_config_last_reload_successful).

import type { Server } from 'node:http';
import type { Credentials } from '../../lib/internal.js';
import { recordReload } from '../admin/index.js';
import { CliError, describeError, type ReloadTrigger } from '../base/index.js';
import type { BookService } from '../books/index.js';
import type { SaidLine } from '../cluster/index.js';
import type { BookConfig, ConfigFile, Reread, ServeCommand } from '../config/index.js';
import { atTheNextStart, BOOK_SETTINGS, CONFIGURABLE, camel, diffBooks, FROM_ENVIRONMENT } from '../config/index.js';
import { bookLine, listeningAt, warnAboutBookFiles, warnAboutOpenBooks, warnAboutSecretFiles } from './greeting.js';

/** Where a reload's lines go: the log, or (in a worker asked by the primary) its answer. */
export type Say = (text: string, level: SaidLine['level']) => void;

/** Whether the books are a configuration file's `[book NAME]` sections. */
export function servesFileBooks(command: ServeCommand): command is ServeCommand & { config: ConfigFile } {
  return command.config !== undefined && command.config.books.length > 0;
}

/**
 * The command read again (the configuration file, the credentials file) and its books
 * served; when something cannot be used, everything is kept and one line says why: `say`
 * hears the lines. `tlsApplied`: whether the TLS files read again just before were applied
 * (or there are none). A book served anew (added, or another file or base path) gets its
 * start line, where `server` serves it.
 */
export async function reload(
  command: ServeCommand,
  service: BookService,
  server: Server,
  reread: Reread,
  by: ReloadTrigger,
  tlsApplied: boolean,
  say: Say,
): Promise<void> {
  try {
    const { next, books } = readAsReload(command, reread);
    // The file the configuration names now, when it is not the running one: one line says so.
    const running = command.credentialsFile;
    const named = next.settings.credentialsFile;
    const moved = (running !== undefined || command.credentialsFrom === 'environment') && named !== running;
    const changed = settingsChanged(command, next).filter((key) => !moved || key !== 'credentials-file');
    const summary = await service.reload(books, next.credentials);
    const { added, replaced } = diffBooks(command.books, books);
    const [before, was] = [command.credentials, command.books];
    command.credentials = next.credentials;
    command.books = books;
    say(`${by}: ${reloaded(command, summary, before, moved)}`, 'notice');
    const served = [...added, ...replaced.map(({ after }) => after)];
    if (servesFileBooks(next)) {
      const origin = listeningAt(command, server);
      for (const book of served) say(bookLine(origin, book), 'info');
    }
    for (const warning of next.bookWarnings ?? []) say(warning, 'warning');
    for (const warning of returningUsers(was, books, before, command.credentials)) say(warning, 'warning');
    warnAboutBookFiles(served, say);
    warnAboutOpenBooks(books, was, say);
    if (changed.length > 0) {
      say(`${by}: ${changed.join(', ')} changed; that takes effect at the next start`, 'warning');
    }
    if (moved) say(`${by}: ${credentialsMoved(running, named)}`, 'warning');
    warnAboutSecretFiles(next, say);
    recordReload(tlsApplied);
  } catch (error: unknown) {
    const why = error instanceof CliError ? error.message : describeError(error);
    const kept = command.config === undefined ? 'the old credentials' : 'the running configuration';
    say(`${by}: keeping ${kept}: ${why}`, 'warning');
    recordReload(false);
  }
}

/**
 * The command as a reload reads it, and a worker started after the first start
 * (bin/cluster/worker.ts): `next` and the books to serve. The running credentials file (or
 * the environment's variables), whatever the configuration names now: a new path waits for
 * the next start, as a reload's line says, so a new file is never read and blocks nothing.
 * The book of --db (or of a file without sections) keeps the running --name, which takes
 * effect at the next start, as every setting of the service does.
 */
export function readAsReload(command: ServeCommand, reread: Reread): { next: ServeCommand; books: BookConfig[] } {
  const fromEnvironment = command.credentialsFrom === 'environment';
  const next = reread(fromEnvironment ? FROM_ENVIRONMENT : command.credentialsFile);
  const keep = (book: BookConfig): BookConfig => ({ ...book, name: command.settings.name });
  return { next, books: servesFileBooks(next) ? next.books : next.books.map(keep) };
}

/**
 * A user that a book went on naming while the credentials lacked it, in them again: it may
 * log in to that book at once, and may be another person under the old name. Said by the
 * reload that brings it, not by one that names it anew.
 */
function returningUsers(
  was: readonly BookConfig[],
  books: readonly BookConfig[],
  before: readonly Credentials[],
  after: readonly Credentials[],
): string[] {
  const names = (list: readonly Credentials[]) => new Set(list.map(({ username }) => username.normalize('NFC')));
  const [then, now] = [names(before), names(after)];
  return books.flatMap((book) => {
    const named = was.find(({ name }) => name === book.name)?.users ?? [];
    const back = (book.users ?? []).filter((user) => named.includes(user) && !then.has(user) && now.has(user));
    return back.map(
      (user) =>
        `warning: user '${user}', named by book ${book.name} while not in the credentials, may log in to it now`,
    );
  });
}

/** What a reload says of a credentials file the configuration names now instead of the `running` one (or variables). */
function credentialsMoved(running: string | undefined, named: string | undefined): string {
  if (running !== undefined)
    return `credentials-file ${named === undefined ? 'removed' : 'changed'}: ${atTheNextStart(named)}; until then ${running} is read`;
  return `credentials-file added: the configuration's ${named} applies at the next start, once BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD are unset (both would be credentials given twice); until then they are used`;
}

/** What a reload read and applied, for its line in the log; `moved`: the configuration names another credentials file (or none). */
function reloaded(command: ServeCommand, summary: string, before: readonly Credentials[], moved: boolean): string {
  const file = command.credentialsFile;
  const users = credentialsChange(before, command.credentials);
  // The file is named where the configuration names another one (or none).
  const from = moved ? ` from ${file}` : '';
  if (command.config !== undefined)
    return `configuration re-read from ${command.config.file}: ${summary}${file === undefined ? '' : `; credentials re-read${from}: ${users}`}`;
  if (file !== undefined) return `credentials re-read from ${file}: ${users}`;
  return `credentials come from the ${command.credentialsFrom}; nothing to re-read`;
}

/** `4 user(s), secrets changed for buero`: how many users, and which came, went or got a new secret. */
function credentialsChange(before: readonly Credentials[], after: readonly Credentials[]): string {
  const secret = (user: Credentials): string => user.passwordHash ?? user.password;
  const old = new Map(before.map((user) => [user.username, secret(user)]));
  const now = new Set(after.map((user) => user.username));
  const said = (label: string, users: readonly Credentials[]): string[] =>
    users.length === 0 ? [] : [`${label} ${users.map((user) => user.username).join(', ')}`];
  const changes = [
    ...said(
      'added',
      after.filter((user) => !old.has(user.username)),
    ),
    ...said(
      'removed',
      before.filter((user) => !now.has(user.username)),
    ),
    ...said(
      'secrets changed for',
      after.filter((user) => old.has(user.username) && old.get(user.username) !== secret(user)),
    ),
  ];
  return `${after.length} user(s)${changes.length === 0 ? '' : `, ${changes.join('; ')}`}`;
}

/** The service's settings that only a new start takes (as the file names them): everything but the books and the credentials. */
function settingsChanged(running: ServeCommand, next: ServeCommand): string[] {
  return CONFIGURABLE.map(([key]) => key).filter(
    (key) =>
      !BOOK_SETTINGS.includes(key) &&
      JSON.stringify(running.settings[camel(key)]) !== JSON.stringify(next.settings[camel(key)]),
  );
}
