// The one look at a book's file before the workers of --workers start: the judgement each
// worker's open makes first (bin/books/open-book.ts, judge), made once by the primary.

import { Guard } from '../guard/index.js';
import { BookOpener } from './open-book.js';
import { stateLine } from './states.js';
import type { BuildHandler } from './status.js';
import { unavailableSearch } from './unavailable.js';

/**
 * Judges `file` once, as each worker's open judges it (BookOpener.judge, within `limitMs`,
 * --search-timeout), in a guard process of its own, and builds its handler over a search
 * that answers nothing: the primary of --workers says what is wrong once, instead of every
 * worker saying it. A file that cannot be served throws its CliError; one that cannot be
 * read now, or not within the limit, passes: each worker serves it as unavailable and
 * tries it again, as a single process does. Returns the line of such a state that does not
 * pass by itself (an open that timed out), which the primary says for the workers, whose
 * first look keeps quiet on it (bin/cluster/worker.ts); one that passes (a lock, a slow
 * view) each worker says, as it may have passed by its first look, which would not say so.
 */
export async function preflightDatabaseFile(
  file: string,
  book: ConstructorParameters<typeof BookOpener>[1],
  build: BuildHandler,
  limitMs: number,
): Promise<string | undefined> {
  const none = (): void => {};
  const hooks = { notice: none, broken: none, onError: none, servedBy: () => false };
  const opener = new BookOpener(file, book, build, none, hooks, { cacheKiB: undefined, limitMs });
  const guard = new Guard({ limitMs });
  try {
    const judged = await opener.judge(guard);
    if (!('ready' in judged)) return judged.serving || judged.cause.waits ? undefined : stateLine(file, judged.cause);
    build(
      unavailableSearch(() => new Error('not served here')),
      judged.ready.app,
      none,
    );
    return undefined;
  } finally {
    guard.end();
  }
}
