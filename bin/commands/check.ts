// booking-search-server check: tells an admin whether a database file (`--db FILE`, judged
// in a guard process by bin/files/report.ts) or every book of a configuration fits, as the
// service would judge it.

import type { Credentials } from '../../lib/internal.js';
import { messageOf } from '../base/index.js';
import type { BookConfig, ServeCommand, UnreadCredentials } from '../config/index.js';
import { readApp, readCredentialsFile, readTableNames, resolveBooks, stuckLimitMs, usersOf } from '../config/index.js';
import { type BookFile, judgedAs, WAITS_FOR_FILE, writeReport } from '../files/index.js';
import { Guard, slowJudgement } from '../guard/index.js';
import { unknownTimeZone, warnAboutOpenBooks, warnAboutSecretFiles } from '../serve/index.js';

/**
 * `check --db FILE` for `book` (its app, its tables, where its app is written), run in a
 * guard process (bin/guard/guard.ts), which prints the report: a file that blocks its open
 * (a named pipe in its place) or a view that never ends holds up that process, which is
 * ended after six times `searchMs` (--search-timeout, 10 s by default), and its judgement
 * of the bookings through a view after `searchMs`, as the service's, with one line here
 * and exit code 1.
 */
export async function checkInGuard(file: string, book: BookFile, searchMs: number): Promise<number> {
  const guard = new Guard({ limitMs: searchMs });
  const limitMs = stuckLimitMs(searchMs);
  try {
    const checked = await guard.check(file, book, limitMs);
    if (typeof checked === 'number') return checked;
    const why =
      checked.ended !== undefined
        ? `the process that checked it ${checked.ended}`
        : checked.why === undefined
          ? `opening ${file} and checking it did not end within ${limitMs / 1000} s (a named pipe in its place or in place of its journal, a view that does not end, or a schema too large to load); the process that checked it was ended`
          : slowJudgement(checked.why, searchMs);
    return writeReport([`Database: ${file}`, `Cannot check: ${why}.`], 1);
  } finally {
    guard.end();
  }
}

/** `check --db FILE`: checkInGuard, after what the service would warn of at its start. */
export async function checkOneFile(file: string, book: BookFile, searchMs: number): Promise<number> {
  warnOfTimeZone();
  const code = await checkInGuard(file, book, searchMs);
  return code === WAITS_FOR_FILE ? 1 : code;
}

/** A misspelt TZ, said once before a check, as the service says it at its start: its days would be UTC's. */
function warnOfTimeZone(): void {
  const zone = unknownTimeZone(process.env['TZ']);
  if (zone !== undefined) writeReport([zone], 0);
}

/** The credentials as `check --config` judges the books by, or why it cannot: not given, or given but wrong. */
function readCheckedCredentials(
  command: ServeCommand,
  unread: UnreadCredentials | undefined,
): { credentials: Credentials[] | undefined; unread: UnreadCredentials | undefined } {
  if (command.credentialsFile === undefined)
    return { credentials: unread === undefined ? command.credentials : undefined, unread };
  try {
    return { credentials: readCredentialsFile(command.credentialsFile), unread: undefined };
  } catch (error: unknown) {
    return { credentials: undefined, unread: { given: true, message: messageOf(error) } };
  }
}

/**
 * `check --config FILE`: the configuration judged as the service would read it (its
 * settings, its books, their users against the credentials where they can be read), then
 * each book's file as `check --db` judges it, and which books fit. Exit code 0 when all do
 * and the credentials given (none, as the service's user under LoadCredential=) can be
 * read; the last line says which of the two failed, or that the users were not checked.
 */
export async function reportOnBooks(
  command: ServeCommand,
  credentialsProblem: UnreadCredentials | undefined,
): Promise<number> {
  warnOfTimeZone();
  const file = command.config?.file ?? '';
  const lines = [`Configuration: ${file}`];
  const { credentials, unread } = readCheckedCredentials(command, credentialsProblem);
  if (unread !== undefined)
    lines.push(
      `Credentials: ${unread.given ? 'given but wrong' : 'not given'} (${unread.message}); the users of the books are not checked.`,
    );
  else lines.push(`Credentials: ${credentials?.length ?? 0} user(s); the users of the books are checked against them.`);
  // Said as the service says it at its start, so that check run as its user shows what it will see.
  warnAboutSecretFiles(command, (text) => lines.push(text));
  let books: BookConfig[];
  try {
    const config = command.config ?? { file, service: [], books: [] };
    const readers = { readApp, readTableNames };
    const resolved =
      command.books.length > 0
        ? { books: command.books, warnings: [] }
        : resolveBooks(config, credentials, readers, command.credentialsSource);
    books = resolved.books;
    lines.push(...resolved.warnings);
  } catch (error: unknown) {
    lines.push(`Does not fit: ${messageOf(error)}`);
    return writeReport(lines, 1);
  }
  lines.push(`Books: ${books.length}.`);
  warnAboutOpenBooks(books, undefined, (text) => lines.push(text));
  const judged = judgedAs();
  if (judged !== undefined) lines.push(judged);
  writeReport(lines, 0);
  const fit: string[] = [];
  const waiting: string[] = [];
  const unfit: string[] = [];
  for (const book of books) {
    const users = book.users === undefined ? 'every user' : `users ${book.users.join(', ')}`;
    writeReport(['', `Book ${book.name} at ${book.basePath}/api/v1/ (${users}):`], 0);
    const code = book.db === undefined ? 1 : await checkInGuard(book.db, book, command.timeouts.searchMs);
    // Its file may fit; the book does not, with no user that can log in to it (the warning above).
    const userless = credentials !== undefined && book.users !== undefined && usersOf(book, credentials).length === 0;
    if (userless) writeReport(['Does not fit: none of its users is in the credentials (see the warning above).'], 0);
    (code === 0 && !userless ? fit : code === WAITS_FOR_FILE && !userless ? waiting : unfit).push(book.name);
  }
  // A count of fitting books must not read as a pass while the credentials fail.
  const which = command.credentialsFile === undefined ? 'the credentials do' : 'the credentials file does';
  const credentialsVerdict =
    unread === undefined
      ? ''
      : unread.given
        ? `; ${which} not: ${unread.message}`
        : '; no credentials are given, so the users of the books are not checked';
  const summary = [
    '',
    `${fit.length} of ${books.length} book${books.length === 1 ? '' : 's'} fit${fit.length === 0 ? '' : `: ${fit.join(', ')}`}${credentialsVerdict}.`,
  ];
  if (waiting.length > 0)
    summary.push(`Cannot be read now: ${waiting.join(', ')} (see above; the service starts and waits for them).`);
  if (unfit.length > 0) summary.push(`Do not fit: ${unfit.join(', ')} (see above).`);
  return writeReport(summary, fit.length === books.length && unread?.given !== true ? 0 : 1);
}
