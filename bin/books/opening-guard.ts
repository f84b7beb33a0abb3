// The guard process that opens and judges a book's file first, its limit and the line of an
// open that did not end within it: shared by the followed file (open-book.ts) and the
// primary's one look before the workers start (preflight.ts).

import { SETTINGS } from '../config/index.js';
import { Guard } from '../guard/index.js';

/**
 * How long an open of a book's file (in its guard process) and a search over a book whose
 * searches run in a guard process may take when no limit is given: --search-timeout's default.
 */
export const GUARD_LIMIT_MS = 1000 * SETTINGS['search-timeout'].default;

// The guard process that opens and judges every book's file, one at a time, ended when
// idle for this long.
const OPENING_GUARD_IDLE_MS = 5_000;
let opening: Guard | undefined;

/** The one guard process of this process that opens and judges the books' files. */
export function openingGuard(limitMs: number): Guard {
  opening ??= new Guard({ limitMs, serial: true, idleEndMs: OPENING_GUARD_IDLE_MS });
  return opening;
}

/** The line for a file whose open and judgement in the guard process did not end in time. */
export function openTimeout(file: string, limitMs: number): string {
  return `database ${file} did not open within ${limitMs / 1000} s (a named pipe in its place, a journal, -wal or -shm that is one, or a schema too large to load): not served; the process that tried was ended`;
}
