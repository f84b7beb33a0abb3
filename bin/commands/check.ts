// booking-search-server check: tells an admin whether a database file (`--db FILE`, judged
// in a guard process by bin/files/report.ts) or every book of a configuration fits, as the
// service would judge it.

import type { TableNames } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import type { BookConfig, ServeCommand } from '../config/index.js';
import { readApp, readCredentialsFile, readTableNames, resolveBooks } from '../config/index.js';
import { judgedAs, writeReport } from '../files/index.js';
import { Guard } from '../guard/index.js';

/**
 * `check --db FILE`, run in a guard process (bin/guard/guard.ts), which prints the report: a
 * file that blocks its open (a named pipe in its place) or a view that never ends holds up
 * that process, which is ended after `limitMs` (six times --search-timeout, 60 s by
 * default) with one line here and exit code 1.
 */
export async function checkInGuard(
  file: string,
  app: string | undefined,
  tables: Partial<TableNames>,
  limitMs: number,
): Promise<number> {
  const guard = new Guard({ limitMs });
  try {
    const code = await guard.check(file, app, tables);
    if (code !== undefined) return code;
    return writeReport(
      [
        `Database: ${file}`,
        `Cannot check: opening ${file} and checking it did not end within ${limitMs / 1000} s (a named pipe in its place or in place of its journal, a view that does not end, or a schema too large to load); the process that checked it was ended.`,
      ],
      1,
    );
  } finally {
    guard.end();
  }
}

/**
 * `check --config FILE`: the configuration judged as the service would read it (its
 * settings, its books, their users against the credentials where they can be read), then
 * each book's file as `check --db` judges it, and which books fit. Exit code 0 when all do.
 */
export async function reportOnBooks(command: ServeCommand, credentialsProblem: string | undefined): Promise<number> {
  const file = command.config?.file ?? '';
  const lines = [`Configuration: ${file}`];
  let credentials = credentialsProblem === undefined ? command.credentials : undefined;
  let problem = credentialsProblem;
  if (command.credentialsFile !== undefined) {
    try {
      credentials = readCredentialsFile(command.credentialsFile);
    } catch (error: unknown) {
      credentials = undefined;
      problem = error instanceof CliError ? error.message : String(error);
    }
  }
  if (problem !== undefined)
    lines.push(`Credentials: cannot be read here (${problem}); the users of the books are not checked.`);
  else lines.push(`Credentials: ${credentials?.length ?? 0} user(s); the users of the books are checked against them.`);
  let books: BookConfig[];
  try {
    books =
      command.books.length > 0
        ? command.books
        : resolveBooks(
            command.config ?? { file, service: [], books: [] },
            credentials,
            { readApp, readTableNames },
            command.credentialsSource,
          );
  } catch (error: unknown) {
    lines.push(`Does not fit: ${error instanceof CliError ? error.message : String(error)}`);
    return writeReport(lines, 1);
  }
  lines.push(`Books: ${books.length}.`);
  const judged = judgedAs();
  if (judged !== undefined) lines.push(judged);
  writeReport(lines, 0);
  const fit: string[] = [];
  const unfit: string[] = [];
  for (const book of books) {
    const users = book.users === undefined ? 'every user' : `users ${book.users.join(', ')}`;
    process.stdout.write(`\nBook ${book.name} at ${book.basePath}/api/v1/ (${users}):\n`);
    const code =
      book.db === undefined ? 1 : await checkInGuard(book.db, book.app, book.tables, 6 * command.timeouts.searchMs);
    (code === 0 ? fit : unfit).push(book.name);
  }
  const summary = [
    '',
    `${fit.length} of ${books.length} book${books.length === 1 ? '' : 's'} fit${fit.length === 0 ? '' : `: ${fit.join(', ')}`}.`,
  ];
  if (unfit.length > 0) summary.push(`Do not fit: ${unfit.join(', ')} (see above).`);
  return writeReport(summary, unfit.length === 0 && problem === undefined ? 0 : 1);
}
