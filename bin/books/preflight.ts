// The one look at a book's file before the workers of --workers start, and the limits and
// line of an open of a book's file in a guard process that the followed file shares.

import { CliError } from '../base/index.js';
import { SETTINGS } from '../config/index.js';
import { type BookFile, ensureDatabaseFile, judgeDatabaseFile } from '../files/index.js';
import { Guard } from '../guard/index.js';
import type { BuildHandler } from './status.js';
import { unavailableSearch } from './unavailable.js';

/**
 * How long an open of a book's file (in its guard process) and a search over a book whose
 * searches run in a guard process may take when no limit is given: --search-timeout's default.
 */
export const GUARD_LIMIT_MS = 1000 * SETTINGS['search-timeout'].default;

/**
 * Judges `file` once, in a guard process, and builds its handler over a search that
 * answers nothing: the primary of --workers says what is wrong once, instead of every
 * worker saying it, within `limitMs` (--search-timeout), as each worker's open. A file that
 * cannot be read now passes: each worker waits for it.
 */
export async function preflightDatabaseFile(
  file: string,
  book: BookFile,
  build: BuildHandler,
  limitMs: number,
): Promise<void> {
  ensureDatabaseFile(file);
  const access = judgeDatabaseFile(file);
  if (access.kind === 'refused') throw new CliError(access.line);
  const guard = new Guard({ limitMs });
  try {
    const result = await guard.open(file, book);
    if (result.kind === 'refused') throw new CliError(result.line);
    // A judgement through a slow view passes, as a file that cannot be read now: each worker tries again.
    if (result.kind === 'timeout' && result.judging === undefined) throw new CliError(openTimeout(file, limitMs));
    if (result.kind === 'ready')
      build(
        unavailableSearch(() => new Error('not served here')),
        result.app,
        () => {},
      );
  } finally {
    guard.end();
  }
}

/** The line for a file whose open and judgement in the guard process did not end in time. */
export function openTimeout(file: string, limitMs: number): string {
  return `database ${file} did not open within ${limitMs / 1000} s (a named pipe in its place, a journal, -wal or -shm that is one, or a schema too large to load): not served; the process that tried was ended`;
}
