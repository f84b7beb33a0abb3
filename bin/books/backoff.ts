// When a file whose bookings could not be judged in time through a slow view is tried again.
// Each try holds a read lock on the file for up to --search-timeout: tried at every look, an
// application with a rollback journal could hardly commit, not even the write that makes the
// view quick again. So the wait after such a try is at least HELD_TIMES the time the try took
// (the application has the file at least that share of the time) and at least a look; while
// the file stays as it was, it doubles at each try, up to MAX_WAIT_MS (a minute, or the
// least wait when that is longer). A file written since the try began (its fingerprint:
// size, mtime, ctime, inode, and its -wal's) is tried again after the least wait, not the
// doubled one: a file in use changes all the time, and the write that makes the view quick
// is among them.
// No timer of its own: the looks of bin/books/states.ts ask `due`.

import type { Backoff, Outcome } from './state-types.js';

const HELD_TIMES = 4;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 60_000;

/** The backoff after a slow try that ended `at` with `outcome`, tried after `last` (if it was). */
export function backOff(outcome: Outcome<unknown>, last: Backoff | undefined, at: number): Backoff {
  const { written, began } = outcome.serving ? {} : outcome;
  const held = began === undefined ? 0 : Math.max(0, at - began);
  const leastMs = Math.max(FIRST_WAIT_MS, HELD_TIMES * held);
  const doubled = last === undefined ? leastMs : Math.min(2 * last.waitMs, MAX_WAIT_MS);
  return { written, ended: at, leastMs, waitMs: Math.max(leastMs, doubled) };
}

/** Whether a look `at`, the file's fingerprint then `written`, tries the file again. */
export function due(backoff: Backoff, written: string | undefined, at: number): boolean {
  return at >= backoff.ended + (written === backoff.written ? backoff.waitMs : backoff.leastMs);
}
