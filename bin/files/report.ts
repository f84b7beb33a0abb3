// What `check --db FILE` says of one file (run in a guard process, bin/guard/guard.ts): its
// journal and whether it can be read now, who may change it, and what the library says of
// the book in it (lib/book.ts, examine: whether it fits, what its data means, what one real
// search answers). Opens read-only and changes nothing; it opens
// the file as the service would (database-file.ts), so run as the file's owner it lets
// SQLite create a WAL file's missing -wal and -shm, which are the owner's, as the service does.

import type Database from 'better-sqlite3';
import { logValue, MAX_LINE_CHARACTERS, shellWord } from '../base/index.js';
import { type BookFile, type Judging, openBookFile } from './book-search.js';
import { describeDatabaseError, ensureDatabaseFile, notReadableNow, openDatabase } from './database-file.js';
import { journalOf } from './file-look.js';
import { judgeDatabaseFile } from './file-safety.js';

/**
 * The report's code for a file that fits as far as it was read but cannot be read now (the
 * service starts and waits for it): `check --db` exits 1 for it, `check --config` names it apart.
 */
export const WAITS_FOR_FILE = 3;

/**
 * Writes the report to stdout; returns the exit code: 0 when the file fits the mapping
 * (`book`'s app, or detected when it gives none), its sample means what it must, it can be
 * read now, and the service would not refuse it for its directory (judged as the service
 * judges it, for the user that runs `check`); WAITS_FOR_FILE when only the last fails; else
 * 1. `judging`: as the service's guard runs it.
 */
export function reportOnDatabase(file: string, book: BookFile, judging?: Judging): number {
  const lines: string[] = [`Database: ${file}`];
  // The rest of the report is still worth reading: the refusal is said last, and decides.
  let refusal: string | undefined;
  const finish = (code: number): number => {
    if (refusal !== undefined) lines.push(`Cannot be served: ${refusal}`);
    return writeReport(lines, refusal === undefined ? code : 1);
  };
  let db: Database.Database | undefined;
  try {
    // As the service does it: a file that is not a database is told so first, and alone.
    const held = ensureDatabaseFile(file);
    if (held !== undefined) {
      lines.push(`Cannot be read now: ${held.explanation}.`);
      return finish(WAITS_FOR_FILE);
    }
    const access = judgeDatabaseFile(file);
    if (access.kind === 'refused') refusal = access.line;
    if (access.kind === 'reader' && access.warning !== undefined) lines.push(`Warning: ${access.warning}.`);
    // A refused file is still read, as a reader that creates nothing, so that the report is whole.
    const journal = journalOf(file).description;
    const opened = openDatabase(file, (db) => openBookFile(db, book, judging).examine(), access.kind === 'owner');
    // Said as found: opened as its owner, SQLite makes a WAL file's missing -wal and -shm.
    const missing = access.kind === 'owner' && journal.includes(' missing') && journalOf(file).description !== journal;
    const made = missing ? '; opened as its owner, SQLite made them now' : '';
    lines.push(`Journal: ${journal}${made}.`);
    if (!opened.readable) {
      lines.push(`Cannot be read now: ${opened.state.explanation}.`);
      return finish(WAITS_FOR_FILE);
    }
    db = opened.db;
    return finish(opened.value.describe(lines, shellWord(file)) ? 0 : 1);
  } catch (error: unknown) {
    const state = notReadableNow(file, error);
    lines.push(
      state === undefined
        ? `Cannot check: ${describeDatabaseError(file, error)}`
        : `Cannot be read now: ${state.explanation}.`,
    );
    return finish(state === undefined ? 1 : WAITS_FOR_FILE);
  } finally {
    db?.close();
  }
}

/**
 * The report, a line each: dates, names and sentences from the file (an account name, a
 * booking's date) are printed escaped and bounded (bin/base/log.ts), never as terminal control
 * sequences or lines of their own.
 */
export function writeReport(lines: string[], code: number): number {
  const shown = lines.map((line) => logValue(line, MAX_LINE_CHARACTERS, { quotes: false }));
  process.stdout.write(`${shown.join('\n')}\n`);
  return code;
}
