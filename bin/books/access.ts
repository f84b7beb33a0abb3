// What the watch of a followed book's file (bin/books/database.ts) asks of its path beside
// the open: whether no file is there, and whether this process may still read the file it serves.

import { accessSync, constants, statSync } from 'node:fs';
import { errorCode } from '../../lib/internal.js';
import { describeDatabaseError, ensureDatabaseFile } from '../files/index.js';

/**
 * Whether no file is at `file`'s path: not one this process may not reach (a directory on
 * the way it may not enter), which the open's message names with its fix, as /ready does.
 */
export function isGone(file: string): boolean {
  try {
    statSync(file);
    return false;
  } catch (error: unknown) {
    const code = errorCode(error);
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
}

/** Why this process may not read `file` now, as its open says it; `undefined` when it may (or fails otherwise). */
export function deniedRead(file: string): string | undefined {
  try {
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (error: unknown) {
    const code = errorCode(error);
    if (code !== 'EACCES' && code !== 'EPERM') return undefined;
  }
  try {
    ensureDatabaseFile(file);
    return undefined;
  } catch (error: unknown) {
    return describeDatabaseError(file, error);
  }
}
