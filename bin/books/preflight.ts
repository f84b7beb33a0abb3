// The one look at a book's file before the workers of --workers start: the judgement each
// worker's open makes first (bin/books/open-book.ts, judge), made once by the primary.

import { SettingRefusal } from '../files/index.js';
import { Guard } from '../guard/index.js';
import { BookOpener } from './open-book.js';
import type { BuildHandler } from './status.js';
import { unavailableSearch } from './unavailable.js';

/**
 * Judges `file` once, as each worker's open judges it (BookOpener.judge, within `limitMs`,
 * --search-timeout), in a guard process of its own, and builds its handler over a search
 * that answers nothing: the primary of --workers refuses a file that cannot be served
 * once, with its CliError, instead of every worker failing on it. One that cannot be read
 * now, or not within the limit, or one its application's setting refuses (GnuCash holding it
 * open), passes without a word: each worker serves it as unavailable, says so and tries it
 * again, as a single process does.
 */
export async function preflightDatabaseFile(
  file: string,
  book: ConstructorParameters<typeof BookOpener>[1],
  build: BuildHandler,
  limitMs: number,
): Promise<void> {
  const none = (): void => {};
  const hooks = { notice: none, broken: none, onError: none, servedBy: () => false };
  const opener = new BookOpener(file, book, build, none, hooks, { cacheKiB: undefined, limitMs });
  const guard = new Guard({ limitMs });
  try {
    const judged = await opener.judge(guard);
    if ('ready' in judged)
      build(
        unavailableSearch(() => new Error('not served here')),
        judged.ready.app,
        none,
      );
  } catch (error: unknown) {
    if (!(error instanceof SettingRefusal)) throw error;
  } finally {
    guard.end();
  }
}
