// What the service warns of as it opens a book's file, once for a file and schema (at the
// start, after a replacement, after a change of its schema): what `check` says of it too.

import { shellWord } from '../base/index.js';

// A book of at least this many bookings whose typical search reads every one is said at its
// open: such a search takes 13 ms at 100,000 bookings and 180 ms at a million on the benchmark
// machine (the indexes: well under one), holding the file against its application's writes.
const LARGE_BOOK = 100_000;

/** The book as its open reads it: what serving it can harm, what it holds unserved (lib/book.ts), how many bookings its typical search reads. */
export interface OpenedBook {
  everyBooking: () => number | undefined;
  harms: (book: string) => string[];
  notes: () => string[];
}

/** The warnings of `file`'s open, a line each; read while its connection is open. */
export function openWarnings(file: string, opened: OpenedBook): string[] {
  const lines = [...opened.harms(shellWord(file)), ...opened.notes()].map((line) => `database ${file}: ${line}`);
  const scanned = opened.everyBooking();
  if (scanned !== undefined && scanned >= LARGE_BOOK)
    lines.push(
      `database ${file}: its typical search reads every one of its ${scanned} bookings, so its searches are slow, hold up those of the other books this process serves, and may answer 500 while the application writes; check prints the indexes to add`,
    );
  return lines;
}
